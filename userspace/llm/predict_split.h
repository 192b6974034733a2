/* SPDX-License-Identifier: MIT */
/*
 * Both splits side by side (rk1828-llm plan --predict): the plan of the
 * split asked for (--split) and the other one's, at the same sizes on the
 * same cards, each with its prediction and its cards' prefill times, so
 * the trade-off (a faster prefill against a slower decode or less room)
 * is visible. userspace/doc/timing.rst, "Splits".
 */
#ifndef RK_LLM_PREDICT_SPLIT_H
#define RK_LLM_PREDICT_SPLIT_H

#include <stdio.h>

#include "plan_time.h"
#include "predict.h"

/**
 * struct predict_split - one split of a model and what it predicts
 * @split: &enum plan_split
 * @plan: its segments
 * @pr: predict_run() of @plan
 * @prefill_ms: plan_prefill_ms() of each segment: the card's time on a
 *	plan_time_prompt() prefill, what the time split balances
 * @max_prefill_ms: the largest of @prefill_ms
 */
struct predict_split {
	enum plan_split split;
	struct plan plan;
	struct prediction pr;
	double prefill_ms[PLAN_MAX_CARDS];
	double max_prefill_ms;
};

/**
 * predict_split_run() - plan @split for @m at the sizes @sz on the cards
 * of @given (their free bytes, device and array indices, in its order)
 * and predict it
 * @given: a plan of @m at @sz (either split)
 * @t: the time split's profile and link (NULL: built-in, PCIe)
 * @po: the prediction's deployment
 * @out: filled
 * @err, @errlen: reason on failure
 * Return: 0, or -1 (does not fit, out of memory).
 */
int predict_split_run(const struct llm_model *m, const struct plan_sizes *sz,
		      const struct plan *given, enum plan_split split,
		      const struct plan_timing *t, const struct predict_opts *po,
		      struct predict_split *out, char *err, size_t errlen);

/**
 * predict_split_print() - the splits in words to @f: for each, its plan,
 * each card's prefill time (and the largest), prefill and decode rates
 * and TTFT of a PREDICT_PROMPT prompt; @run, the one that runs, first
 */
void predict_split_print(FILE *f, const struct predict_split *run,
			 const struct predict_split *other);

/**
 * predict_split_json() - predict_json() of @run's plan and prediction
 * with three keys more: "split" ("bytes" or "time"), "card_prefill_ms"
 * (@run's prefill_ms, one a segment) and "splits": {"bytes": {...},
 * "time": {...}}, each that split's predict_json() object with its
 * "card_prefill_ms"
 * Return: a malloc()ed NUL-terminated string, or NULL (out of memory).
 */
char *predict_split_json(const struct predict_split *run, const struct predict_split *other);

#endif
