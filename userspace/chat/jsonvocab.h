/* SPDX-License-Identifier: MIT */
/*
 * A tokenizer's vocabulary as bytes for JSON-schema constrained decoding
 * (jsonmatch.h): which tokens may come next. Built once per engine
 * (jm_vocab_new(), about n_vocab tok_piece() calls); immutable after, so
 * any thread may read it.
 *
 * A token is text (its tok_piece() bytes: SPM byte-fallback tokens are
 * their byte, BPE byte-level pieces their bytes), end-of-generation
 * (tok_is_eog(): allowed only when the document is whole), or never
 * (other special tokens, tokens without text).
 */
#ifndef RK_LLM_JSONVOCAB_H
#define RK_LLM_JSONVOCAB_H

#include <stdbool.h>
#include <stdint.h>

struct jm_state;
struct jm_vocab;
struct tokenizer;

/** jm_vocab_new() - the table of @t; NULL when out of memory. */
struct jm_vocab *jm_vocab_new(const struct tokenizer *t);
void jm_vocab_free(struct jm_vocab *v);

/** jm_vocab_ok() - token @id may come next in @st (an id out of range: false). */
bool jm_vocab_ok(const struct jm_vocab *v, struct jm_state *st, int32_t id);

/**
 * jm_vocab_mask() - @masked[i] = @logits[i] for each token that may come
 * next in @st, -INFINITY for the others (@n floats each: the model's
 * logits, which may outnumber the tokenizer's tokens; those are masked)
 * @best: out, the allowed token with the highest logit (lowest id on
 *	ties), -1 when none
 *
 * Cost: one jm_next_bytes() (256 one-byte steps), then per token a table
 * lookup of its first byte, and jm_try() of its bytes only when that byte
 * may come and it has more; inside a string a token of plain characters
 * needs no matcher (no pattern) or only the pattern's automaton.
 *
 * Return: how many tokens may come.
 */
int jm_vocab_mask(const struct jm_vocab *v, struct jm_state *st, const float *logits, int n,
		  float *masked, int32_t *best);

/** jm_vocab_take() - feed token @id's bytes to @st (nothing for EOG). */
void jm_vocab_take(const struct jm_vocab *v, struct jm_state *st, int32_t id);

#endif
