/* SPDX-License-Identifier: MIT */
/*
 * Tokenizer internals shared by tokenizer.c (vocabulary, special tokens,
 * pieces), tok_spm.c (SentencePiece merges), tok_bpe.c (byte-level BPE
 * merges) and tok_pre.c (the PCRE2 pre-tokenizer). Not a public header.
 */
#ifndef RK_TOK_IMPL_H
#define RK_TOK_IMPL_H

#include "tokenizer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gguf_file;

/* llama.cpp / SentencePiece token types (tokenizer.ggml.token_type). */
enum {
	TT_NORMAL = 1,
	TT_UNKNOWN = 2,
	TT_CONTROL = 3,
	TT_USER_DEFINED = 4,
	TT_UNUSED = 5,
	TT_BYTE = 6,
};

struct tok_entry {
	const char *s;		/* inside the GGUF mapping */
	uint32_t len;
	float score;
	int32_t type;
	bool plain;		/* user-defined, not markup: split from any text */
};

/* One BPE merge: (left id, right id) -> merged id, by rank (lower first). */
struct tok_merge {
	int32_t left, right, merged;
	int32_t rank;
};

struct tok_pre;		/* compiled pre-tokenizer regexes (tok_pre.c) */

struct tokenizer {
	enum tok_model model;
	int n_vocab;
	struct tok_entry *vocab;
	uint32_t *hash;		/* token id + 1, 0 = empty */
	uint64_t hmask;
	int32_t byte_tok[256];	/* SPM: <0xXX>; BPE: the byte's byte-level char */
	int32_t bos, eos, unk, eot, eom;
	bool add_bos, add_eos;
	bool add_space_prefix;
	bool ignore_merges;	/* BPE: a whole pre-token in the vocab is one token */
	uint32_t max_len;	/* longest token text in bytes */

	/* BPE merges: open-addressed table on (left, right). */
	struct tok_merge *merges;
	uint64_t mmask;
	const struct tok_pre *pre;
	char pre_name[32];

	/* Special tokens (control, user-defined, unknown), longest first per byte. */
	int32_t *special;	/* ids sorted by first byte, then length descending */
	int n_special, n_plain;
	int32_t special_first[257];	/* index range in special per first byte */

	/* End-of-generation ids (sorted). */
	int32_t *eog;
	int n_eog;
};

/* Token id of exactly the bytes s[0..len), or -1. */
int32_t tok_lookup(const struct tokenizer *t, const char *s, size_t len);

/* Growing output: counts past max are still counted. */
struct tok_out {
	int32_t *out;
	int max;
	int n;
	struct tok_stats *stats;
};

static inline void tok_emit(struct tok_out *o, int32_t id)
{
	if (o->n < o->max)
		o->out[o->n] = id;
	o->n++;
}

/*
 * Encode one run of plain text (no special tokens in it) and append the
 * tokens; 0 or -ENOMEM / -E2BIG (regex limit) / -EINVAL.
 */
int tok_spm_encode(const struct tokenizer *t, const char *text, size_t len,
		   bool first, struct tok_out *o);
int tok_bpe_encode(const struct tokenizer *t, const char *text, size_t len,
		   struct tok_out *o);

/* BPE setup: merges table (tok_bpe.c) and pre-tokenizer (tok_pre.c). */
int tok_bpe_load(struct tokenizer *t, const struct gguf_file *f, char *err, size_t errlen);
void tok_bpe_free(struct tokenizer *t);

/* Byte-level alphabet (GPT-2 bytes_to_unicode): byte -> code point, and back. */
uint32_t tok_byte_to_cp(unsigned char b);
/* Byte for a byte-level code point, -1 when @cp is not one. */
int tok_cp_to_byte(uint32_t cp);

/**
 * tok_pre_get() - the pre-tokenizer for a tokenizer.ggml.pre name
 * @name: e.g. "qwen2", "llama-bpe"; NULL or "" for llama.cpp's default
 * @ignore_merges: out, whether llama.cpp sets ignore_merges for it
 *
 * Return: the shared compiled pre-tokenizer, NULL when the name is not
 * supported (tok_pre_names() lists those that are) or PCRE2 failed.
 */
const struct tok_pre *tok_pre_get(const char *name, bool *ignore_merges, char *err,
				  size_t errlen);

/*
 * tok_pre_split() - call @fn for each pre-token of @text (valid UTF-8) in
 * order; stops at the first non-zero return. 0, -ENOMEM, -E2BIG (a match
 * limit was hit) or @fn's value.
 */
int tok_pre_split(const struct tok_pre *p, const char *text, size_t len,
		  int (*fn)(void *ctx, const char *s, size_t n), void *ctx,
		  struct tok_stats *stats);

#endif
