/* SPDX-License-Identifier: MIT */
/*
 * SentencePiece-style (tokenizer.ggml.model = "llama") tokenizer read from
 * GGUF metadata: score-driven greedy bigram merges with byte fallback
 * (<0xXX> tokens), following llama.cpp's llm_tokenizer_spm.
 */
#ifndef RK_TOKENIZER_H
#define RK_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gguf_file;
struct tokenizer;

/* Load vocab, scores and token types; NULL with "PATH: reason" in err. */
struct tokenizer *tok_load(const struct gguf_file *f, char *err, size_t errlen);
void tok_free(struct tokenizer *t);

/*
 * tok_encode() - text to token ids. Adds BOS when add_bos. Like llama.cpp,
 * a space is prepended and spaces become U+2581. Returns the number of
 * tokens, or -(needed) when max is too small.
 */
int tok_encode(const struct tokenizer *t, const char *text, bool add_bos,
	       int32_t *out, int max);

/*
 * tok_piece() - bytes of one token for output (U+2581 -> ' ', byte tokens
 * -> the raw byte). Returns the length written (no NUL), or -1 for a bad id.
 */
int tok_piece(const struct tokenizer *t, int32_t id, char *buf, size_t size);

/*
 * Additions to the interface above (tokenizer.c):
 * - The tokenizer points into f's mapping: keep f open until tok_free().
 *   tok_load() refuses tokenizer.ggml.model other than "llama", missing or
 *   non-string tokens, scores/token types of another length or type, and
 *   BOS/EOS/UNK ids outside the vocab (u32 0xffffffff or negative = none).
 * - Text that spells a special or user-defined token (e.g. "</s>") is
 *   tokenized as plain text (llama.cpp with parse_special = false, except
 *   that llama.cpp also splits USER_DEFINED tokens out of the text).
 * - tok_encode() returns INT_MIN (never a valid -(needed)) when text or t is
 *   NULL, out is NULL with max > 0, text is longer than TOK_MAX_TEXT bytes,
 *   or memory runs out. At most 3 * strlen(text) + 4 tokens are ever
 *   produced (BOS + one per byte of the escaped text, where the prefix space
 *   and each ' ' become 3 bytes), so that max always suffices; with a vocab
 *   holding U+2581 (every llama vocab) strlen(text) + 2 suffices.
 * - tok_piece() also returns -1 when size is too small for the piece
 *   (pieces are at most the token's length; 256 bytes covers every llama
 *   vocabulary in practice). Control and unused tokens give 0 bytes; the
 *   unknown token gives U+2585 as in llama.cpp.
 */
#define TOK_MAX_TEXT (256u << 20)

int tok_n_vocab(const struct tokenizer *t);
int32_t tok_bos(const struct tokenizer *t);
int32_t tok_eos(const struct tokenizer *t);
/* Unknown-token id, or -1 when the vocab names none. */
int32_t tok_unk(const struct tokenizer *t);
/*
 * tok_add_bos_default() - whether the model wants BOS prepended:
 * tokenizer.ggml.add_bos_token (default true) and a BOS id exists.
 */
bool tok_add_bos_default(const struct tokenizer *t);

#endif
