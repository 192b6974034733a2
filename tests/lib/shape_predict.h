/* SPDX-License-Identifier: MIT */
/*
 * The deployment prediction of a model known only by its shape file
 * (shape.h), in the vendor's W4A16 format: the planner's split
 * (plan_make()) and predict_run_layers() (userspace/llm/predict.h) plus
 * the per-card figures multi-card deployments publish. Shared by
 * tests/tools/predict_shape.c (which prints them) and the profile fit
 * (profile_fit.h, which fits the published ones).
 */
#ifndef RK_TEST_SHAPE_PREDICT_H
#define RK_TEST_SHAPE_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "planner.h"
#include "predict.h"
#include "profile.h"
#include "shape.h"

#define SHAPE_MAX_FIGS	48

/**
 * struct shape_deploy - a deployment of a shape
 * @cards: cards (1..PLAN_MAX_CARDS)
 * @link: every card's link
 * @bucket: prefill bucket, tokens
 * @n_ctx: context, tokens (the split counts the K/V cache of this many)
 */
struct shape_deploy {
	int cards;
	enum cost_link link;
	uint32_t bucket;
	uint32_t n_ctx;
};

/**
 * struct shape_fig - one predicted figure
 * @key: its name, as predict_shape prints it ("decode_tok_s",
 *	"ttft_ms[1024]", "card0_step_ms", ...)
 * @val: its value (ms for *_ms, tokens a second for *_tok_s)
 */
struct shape_fig {
	char key[40];
	double val;
};

/**
 * struct shape_prediction - what shape_predict() gives
 * @plan: the split
 * @pr: predict_run_layers()'s figures
 * @n: entries of @fig
 * @fig: every figure by name, in predict_shape's order: the TTFTs that
 *	fit the context, prefill_tok_s, decode_tok_s, tpot_ms,
 *	aggregate_decode_tok_s[S], then per card cardK_step_ms (its IN,
 *	EXEC and OUT of one decode token at position PREDICT_PROMPT) and
 *	cardK_bucket_tok_s (the same of one bucket from position 0),
 *	ttftB_ms (a one-bucket prompt) and, when the context holds it,
 *	prefill5120_tok_s
 */
struct shape_prediction {
	struct plan plan;
	struct prediction pr;
	int n;
	struct shape_fig fig[SHAPE_MAX_FIGS];
};

/**
 * shape_predict() - predict @d of @s on profile @prof
 * @out: filled
 * @err, @errlen: reason on failure
 * Return: 0, or -1 (the model does not fit, out of memory, bad @d).
 */
int shape_predict(const struct model_shape *s, const struct card_profile *prof,
		  const struct shape_deploy *d, struct shape_prediction *out,
		  char *err, size_t errlen);

/**
 * shape_fig_get() - the figure named @key of @p
 * @val: out
 * Return: 0, or -1 when @p has no such figure.
 */
int shape_fig_get(const struct shape_prediction *p, const char *key, double *val);

#endif
