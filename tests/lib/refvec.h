/* SPDX-License-Identifier: MIT */
/*
 * Reader of the llama.cpp reference vectors tests/vectors/qwen/NAME.ref
 * (format: tests/vectors/qwen/FORMAT.md; written by tools/gen-ref-vectors)
 * and the comparisons the tests make with them.
 */
#ifndef RK_TEST_REFVEC_H
#define RK_TEST_REFVEC_H

#include <stddef.h>
#include <stdint.h>

#define REFVEC_MAX_CASES	8
#define REFVEC_MAX_TOP		32
#define REFVEC_FORCED		32

/**
 * struct refvec_logits - what the file keeps of one logits vector
 * @argmax: argmax of the whole vector
 * @maxabs: max |logit| of the whole vector
 * @samples: logits of ids refvec_sample_id(rv, i), i < rv->n_samples
 * @n_top: entries of @top_id / @top_v
 * @top_id: the largest logits' ids, descending
 * @top_v: their values
 */
struct refvec_logits {
	int argmax;
	double maxabs;
	float *samples;
	int n_top;
	int top_id[REFVEC_MAX_TOP];
	float top_v[REFVEC_MAX_TOP];
};

/**
 * struct refvec_case - one prompt
 * @n_prompt: prompt tokens
 * @prompt: llama.cpp's tokens of the prompt
 * @n_gen: greedy tokens generated
 * @gen: the greedy tokens
 * @prompt_logits: after the whole prompt (prefill)
 * @final_logits: after the last generated token was decoded
 */
struct refvec_case {
	int n_prompt, n_gen;
	int32_t *prompt, *gen;
	struct refvec_logits prompt_logits, final_logits;
};

/**
 * struct refvec - a parsed vector file
 * @model: model name ("qwen35-q4_k_m")
 * @generator: the mksynth arguments that made the model
 * @sha256: the model file's sha256 (hex)
 * @source: llama.cpp commit and package
 * @n_vocab: vocabulary size
 * @n_samples: sampled logits per vector
 * @n_cases: prompts
 * @cases: the prompts
 * @forced: the teacher-forced input tokens: the first prompt continued
 *	greedily by llama.cpp on this model to REFVEC_FORCED tokens
 * @forced_top1: llama.cpp's argmax after each of them (one batch)
 * @text: the first REFVEC_FORCED tokens of forced.txt (natural text)
 * @text_top1: llama.cpp's argmax after each of them
 */
struct refvec {
	char model[64], generator[256], sha256[72], source[256];
	int n_vocab, n_samples, n_cases;
	struct refvec_case cases[REFVEC_MAX_CASES];
	int32_t forced[REFVEC_FORCED], forced_top1[REFVEC_FORCED];
	int32_t text[REFVEC_FORCED], text_top1[REFVEC_FORCED];
};

/**
 * refvec_load() - parse @path into @rv
 * Return: 0, or -1 with "PATH:LINE: reason" in @err.
 */
int refvec_load(const char *path, struct refvec *rv, char *err, size_t errlen);

/** refvec_free() - free what refvec_load() allocated (a zeroed @rv is fine) */
void refvec_free(struct refvec *rv);

/** refvec_sample_id() - the token id of sample @i: i * n_vocab / n_samples */
int refvec_sample_id(const struct refvec *rv, int i);

/**
 * refvec_rel_diff() - max |logits[id] - ref[id]| / ref->maxabs over the
 * sampled and the top ids of @ref; a NaN in @logits gives INFINITY
 * @logits: a full vector of rv->n_vocab floats
 */
double refvec_rel_diff(const struct refvec *rv, const struct refvec_logits *ref,
		       const float *logits);

/**
 * refvec_rel_diff_to() - the same distance from @ref's stored values to a
 * full vector @other: max |ref[id] - other[id]| / max |other| over the
 * sampled and top ids (how close llama.cpp is to @other)
 */
double refvec_rel_diff_to(const struct refvec *rv, const struct refvec_logits *ref,
			  const float *other);

/**
 * refvec_rel_diff_full() - max |a - b| / max |b| over all @n entries
 * (b the reference); NaN gives INFINITY
 */
double refvec_rel_diff_full(const float *a, const float *b, size_t n);

/**
 * refvec_rel_diff_sampled() - refvec_rel_diff_full() restricted to the
 * ids @ref samples (its sampled and top ids), b's max over all entries
 */
double refvec_rel_diff_sampled(const struct refvec *rv, const struct refvec_logits *ref,
			       const float *a, const float *b);

/** refvec_argmax() - index of the largest of @n floats (lowest on ties) */
int refvec_argmax(const float *v, size_t n);

#endif
