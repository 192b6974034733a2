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

int tok_n_vocab(const struct tokenizer *t);
int32_t tok_bos(const struct tokenizer *t);
int32_t tok_eos(const struct tokenizer *t);

#endif
