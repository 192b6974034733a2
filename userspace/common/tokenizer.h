/* SPDX-License-Identifier: MIT */
/*
 * Tokenizer read from GGUF metadata (tokenizer.ggml.*), for the two
 * vocabulary models llama.cpp calls SPM and BPE:
 *
 *  - "llama": SentencePiece, score-driven bigram merges with byte fallback
 *    (<0xXX> tokens), as llama.cpp's llm_tokenizer_spm;
 *  - "gpt2": byte-level BPE, the text cut into pre-tokens by the regexes of
 *    tokenizer.ggml.pre (run by PCRE2), each pre-token's bytes mapped to
 *    GPT-2's printable byte alphabet and merged by tokenizer.ggml.merges
 *    rank, as llama.cpp's llm_tokenizer_bpe. Supported pre-tokenizers:
 *    tok_pre_names().
 *
 * Special tokens (control and unknown types, and user-defined tokens whose
 * text is bracketed markup: "<...>" or "[...]", such as Qwen's <think> and
 * <tool_call>) are recognised in the text only where the caller allows it:
 * with TOK_PARSE_SPECIAL anywhere, otherwise only inside the spans the chat
 * template produced (struct tok_encode_opts), never in user text. Unlike
 * llama.cpp (#26309) this holds for markup user-defined tokens too. Other
 * user-defined tokens (MPT's runs of spaces) are ordinary vocabulary that
 * Hugging Face tokenizers split out of any text first, and so do we.
 *
 * Invalid UTF-8 follows the rule of utf8.h (each byte that does not begin
 * a well-formed sequence stands for U+FFFD) for BPE vocabularies; SPM keeps
 * such bytes and encodes them with byte-fallback tokens, as llama.cpp does.
 * Either way the result is the same as llama.cpp's wherever llama.cpp
 * accepts the input. Nothing is ever rejected for its content.
 *
 * A tokenizer is immutable after tok_load(): any number of threads may
 * encode and decode with it at once.
 */
#ifndef RK_TOKENIZER_H
#define RK_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gguf_file;
struct tokenizer;

/* tokenizer.ggml.model */
enum tok_model {
	TOK_MODEL_SPM,		/* "llama" */
	TOK_MODEL_BPE,		/* "gpt2" */
};

/*
 * tok_load() - build the tokenizer of a GGUF file
 *
 * Reads tokenizer.ggml.{model,pre,tokens,scores,token_type,merges,
 * bos_token_id,eos_token_id,unknown_token_id,eot_token_id,eom_token_id,
 * add_bos_token,add_eos_token,add_space_prefix}. The tokenizer points into
 * @f's mapping: keep @f open until tok_free(). Defaults follow llama.cpp:
 * SPM adds BOS (id 1 when the file names none), BPE adds BOS only with
 * pre "llama-bpe"/"llama3" or add_bos_token = true; nobody adds EOS unless
 * add_eos_token = true.
 *
 * Return: the tokenizer, or NULL with "PATH: key: reason" in @err: an
 * unknown model or pre-tokenizer (the message lists the supported ones),
 * missing or mistyped tokens/scores/token types/merges, arrays of another
 * length than the vocabulary, special ids outside it, out of memory.
 */
struct tokenizer *tok_load(const struct gguf_file *f, char *err, size_t errlen);
void tok_free(struct tokenizer *t);

/* Supported tokenizer.ggml.pre values, comma separated ("default, gpt-2, ..."). */
const char *tok_pre_names(void);

/* The largest text accepted by tok_encode*(), in bytes. */
#define TOK_MAX_TEXT (256u << 20)

/**
 * struct tok_span - a byte range of the text being encoded
 * @off: first byte
 * @len: bytes
 */
struct tok_span {
	size_t off, len;
};

/**
 * struct tok_stats - work counters, added to by tok_encode_ex()
 * @pretokens: pre-tokens (BPE) or text runs (SPM) merged
 * @symbols: initial symbols (characters or byte-level characters)
 * @merges: merges applied
 * @queue_pushes: candidate pairs pushed on the merge queue
 * @regex_calls: pcre2_match() calls
 *
 * For n input characters the merge work is bounded: symbols <= 3n,
 * merges < symbols, queue_pushes <= 3 * symbols (every symbol starts one
 * pair and each merge adds at most two), so encoding is O(n log n) in the
 * queue even for a text without a single word break (the test asserts it).
 */
struct tok_stats {
	uint64_t pretokens, symbols, merges, queue_pushes, regex_calls;
};

/* Flags for struct tok_encode_opts. */
#define TOK_ADD_BOS		(1u << 0)	/* prepend BOS (when the vocab has one) */
#define TOK_ADD_EOS		(1u << 1)	/* append EOS (when the vocab has one) */
#define TOK_PARSE_SPECIAL	(1u << 2)	/* special-token text anywhere is the token */

/**
 * struct tok_encode_opts - how to encode
 * @flags: TOK_ADD_BOS, TOK_ADD_EOS, TOK_PARSE_SPECIAL
 * @special: sorted, non-overlapping spans of the text in which special
 *	token text is recognised (the chat template's own text) when
 *	TOK_PARSE_SPECIAL is not set; a special token must lie wholly inside
 *	one span. NULL: nowhere.
 * @n_special: number of spans
 * @stats: NULL, or counters to add to
 */
struct tok_encode_opts {
	unsigned int flags;
	const struct tok_span *special;
	size_t n_special;
	struct tok_stats *stats;
};

/**
 * tok_encode_ex() - text to token ids
 * @t: tokenizer
 * @text: bytes (need not be NUL-terminated; may be invalid UTF-8)
 * @len: bytes of @text
 * @o: options (NULL: none of them)
 * @out: room for @max ids (may be NULL when @max is 0, to count)
 * @max: capacity of @out
 *
 * Special tokens are matched leftmost-longest. The text between them is
 * encoded by the vocabulary's model (SPM: a space is prepended to the
 * first run when add_space_prefix, ' ' becomes U+2581).
 *
 * Return: the number of tokens (<= tok_max_tokens(@t, @len)); -(needed)
 * when @max is too small, in which case the first @max ids are written;
 * INT_MIN for bad arguments (NULL @t/@text, @out NULL with @max > 0,
 * @len > TOK_MAX_TEXT, spans outside the text or unsorted), out of memory
 * or a pre-tokenizer match limit (never seen with the supported regexes,
 * whose work is linear in the text).
 */
int tok_encode_ex(const struct tokenizer *t, const char *text, size_t len,
		  const struct tok_encode_opts *o, int32_t *out, int max);

/*
 * tok_encode() - tok_encode_ex() of the NUL-terminated @text with
 * TOK_ADD_BOS when @add_bos, nothing else (special-token text is plain).
 */
int tok_encode(const struct tokenizer *t, const char *text, bool add_bos,
	       int32_t *out, int max);

/**
 * tok_max_tokens() - an upper bound of tok_encode_ex()'s result
 * @t: tokenizer
 * @len: bytes of text
 *
 * Every input byte yields at most 3 bytes after escaping/replacement
 * (SPM: ' ' -> U+2581 and the prefix space; BPE: an invalid byte ->
 * U+FFFD), each of those at most 2 tokens (BPE byte fallback of a 2-byte
 * byte-level character), plus BOS and EOS: 6 * @len + 5. ("\xff " gives 5
 * tokens with the llama SPM vocab, so strlen + 2 is not a bound.)
 *
 * Return: the bound, saturated at INT_MAX.
 */
int tok_max_tokens(const struct tokenizer *t, size_t len);

/* Flags for tok_piece_ex(). */
#define TOK_PIECE_SPECIAL	(1u << 0)	/* control/unknown tokens give their text */

/**
 * tok_piece_ex() - the bytes one token stands for
 * @t: tokenizer
 * @id: token id
 * @flags: TOK_PIECE_SPECIAL or 0
 * @buf: output (not NUL-terminated)
 * @size: capacity of @buf
 *
 * SPM: U+2581 becomes ' ', a byte token the raw byte. BPE: each byte-level
 * character becomes its byte (a code point outside the alphabet is copied
 * as UTF-8). User-defined tokens give their text as is. Control and unused
 * tokens give nothing (their text with TOK_PIECE_SPECIAL); the unknown
 * token gives U+2585 for SPM as in llama.cpp. A piece may hold part of a
 * UTF-8 character: join pieces with a struct utf8_stream (utf8.h).
 *
 * Return: bytes written; -(needed) when @size is too small (nothing is
 * written); INT_MIN for a bad @id or NULL @t. Pieces are at most
 * tok_max_piece() bytes.
 */
int tok_piece_ex(const struct tokenizer *t, int32_t id, unsigned int flags, char *buf,
		 size_t size);

/* tok_piece() - tok_piece_ex() with flags 0. */
int tok_piece(const struct tokenizer *t, int32_t id, char *buf, size_t size);

/* Longest piece in bytes (at least 3, the size of U+2585). */
size_t tok_max_piece(const struct tokenizer *t);

/* tok_text() - the token's vocabulary string as stored (NULL for a bad id). */
const char *tok_text(const struct tokenizer *t, int32_t id, size_t *len);

enum tok_model tok_get_model(const struct tokenizer *t);
/* tokenizer.ggml.pre ("" for SPM or a BPE file without it). */
const char *tok_pre(const struct tokenizer *t);
int tok_n_vocab(const struct tokenizer *t);
/* Special ids, -1 when the vocab names none. */
int32_t tok_bos(const struct tokenizer *t);
int32_t tok_eos(const struct tokenizer *t);
int32_t tok_unk(const struct tokenizer *t);
/* End-of-turn id (tokenizer.ggml.eot_token_id or found by text), or -1. */
int32_t tok_eot(const struct tokenizer *t);
/* Whether @id is a special token (control, unknown or markup user-defined). */
bool tok_is_special(const struct tokenizer *t, int32_t id);
/*
 * tok_is_eog() - whether generation ends at @id: EOS, EOT, EOM and the
 * control tokens llama.cpp treats as end of generation by their text
 * (<|im_end|>, <|eot_id|>, <|endoftext|>, <|end_of_text|>, <|end|>,
 * <|eom_id|>, <end_of_turn>, <|return|>, <|call|>).
 */
bool tok_is_eog(const struct tokenizer *t, int32_t id);
/* Special token with exactly this text, or -1. */
int32_t tok_special_id(const struct tokenizer *t, const char *text);

/*
 * tok_add_bos_default() / tok_add_eos_default() - whether the model wants
 * BOS prepended / EOS appended to a prompt (see tok_load() for the
 * defaults; false when the vocab has no such id).
 */
bool tok_add_bos_default(const struct tokenizer *t);
bool tok_add_eos_default(const struct tokenizer *t);

/*
 * tok_add_space_prefix() - SPM with tokenizer.ggml.add_space_prefix: the
 * encoder prepends a space to the text, so a detokenizer drops the one
 * leading space of the first piece (llama.cpp's llama_detokenize does).
 */
bool tok_add_space_prefix(const struct tokenizer *t);

#endif
