/* SPDX-License-Identifier: MIT */
/*
 * Inside the synthetic-model writer (synth_model.h): the state one
 * synth_model_write() call threads through its parts.
 */
#ifndef RK_TEST_SYNTH_INT_H
#define RK_TEST_SYNTH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "synth_model.h"

struct gguf_writer;

/**
 * struct synth - one synth_model_write() in progress
 * @s: the spec
 * @w: the file being built
 * @n_vocab: rows of token_embd and output (@s's, or the vocabulary file's)
 * @rng: xorshift64* state of SYNTH_RANDOM
 * @embd: copy of the F32 token embedding for a SYNTH_NEAR_EMBD head, or NULL
 * @embd_n: elements of @embd
 * @embd_i: next element of @embd written (token_embd) or read (output)
 * @failed: non-zero once something failed (the later parts do nothing)
 * @err: message buffer of the first failure (may be NULL)
 * @errlen: size of @err
 */
struct synth {
	const struct synth_model *s;
	struct gguf_writer *w;
	uint32_t n_vocab;
	uint64_t rng;
	float *embd;
	size_t embd_n, embd_i;
	int failed;
	char *err;
	size_t errlen;
};

/**
 * synth_fail() - record a failure; the first one's message goes to @y->err
 * @y: the writer
 * @fmt: printf() format of the message
 */
void synth_fail(struct synth *y, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * synth_is_hybrid() - whether @s has qwen35's hybrid layout (DeltaNet
 * blocks, gated attention, post_attention_norm, the ssm.* keys)
 */
bool synth_is_hybrid(const struct synth_model *s);

/**
 * synth_add_tensor() - add tensor @name of role @role, @ne0 x @ne1 (@ne1 0:
 * one dimension), stored as @type (the spec's defects applied): values per
 * the role's distribution (synth_tensor.c), or a hole when shape-only
 * @y: the writer
 * @name: GGUF tensor name
 * @role: whose &struct synth_tensor gives the values
 * @type: QUANT_TYPE_* to store
 * @ne0: innermost dimension (the fan-in of a matrix)
 * @ne1: rows, or 0
 */
void synth_add_tensor(struct synth *y, const char *name, enum synth_role role, int type,
		      uint64_t ne0, uint64_t ne1);

/** synth_add_meta() - the hyperparameter keys (synth_meta.c). */
void synth_add_meta(struct synth *y);

/**
 * synth_add_vocab() - the tokenizer keys of @y->s->vocab (synth_vocab.c);
 * sets @y->n_vocab
 */
void synth_add_vocab(struct synth *y);

/** synth_add_tensors() - every tensor, in file order (synth_layout.c). */
void synth_add_tensors(struct synth *y);

#endif
