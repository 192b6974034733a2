/* SPDX-License-Identifier: MIT */
/*
 * The prefill-balanced split (rk1828-llm plan/run/chat/serve --split
 * time): the planner's contiguous segments chosen to balance each card's
 * predicted prefill time (its input COPY, EXEC and output COPY of every
 * bucket of a prompt, the output head on the last card) instead of its
 * bytes, with every card's bytes still within its free memory. The times
 * are the cost function's (cardmodel/cost.h), as predict.c adds them up.
 * userspace/doc/timing.rst, "Splits".
 */
#ifndef RK_LLM_PLAN_TIME_H
#define RK_LLM_PLAN_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost.h"
#include "model.h"
#include "planner.h"
#include "profile.h"

/**
 * struct plan_timing - the cards a time split is balanced for
 * @prof: card profile, or NULL for the built-in one
 * @link: the host link of every card
 */
struct plan_timing {
	const struct card_profile *prof;
	enum cost_link link;
};

/**
 * plan_split_parse() - "bytes" or "time" into *@out
 * Return: 0, or -1 for another string.
 */
int plan_split_parse(const char *s, enum plan_split *out);

/** plan_split_name() - "bytes" or "time" ("?" for another value). */
const char *plan_split_name(enum plan_split split);

/**
 * plan_time_prompt() - the prompt whose prefill a time split balances:
 * PREDICT_PROMPT tokens (the prefill rate's), or the context @n_ctx when
 * shorter
 */
uint32_t plan_time_prompt(uint32_t n_ctx);

/**
 * plan_seg_prefill_ns() - predicted time one card spends on a prefill of
 * @prompt tokens from position 0 in buckets of @bucket: per bucket its
 * input COPY (program, token table, hidden states), its EXEC of blocks
 * @first..@first+@count-1 (and, with @last, the output head on the
 * prompt's last token) and its output COPY (hidden states, or logits),
 * as predict.c's psim_stage_ns() counts one stage
 * @layers: the model's layers (at least @first + @count)
 * @head: the output head
 * @t: profile and link (@t->prof must be set)
 * Return: nanoseconds.
 */
double plan_seg_prefill_ns(const struct cost_layer *layers, const struct cost_head *head,
			   uint32_t first, uint32_t count, bool last,
			   const struct plan_timing *t, uint32_t prompt, uint32_t bucket);

/**
 * plan_prefill_ms() - plan_seg_prefill_ns() of every segment of @p for
 * model @m at the sizes @sz (prompt plan_time_prompt(@sz->n_ctx), bucket
 * @sz->bucket), in milliseconds
 * @t: profile (NULL prof: the built-in one) and link
 * @ms: out, @p->n_segs entries
 * Return: 0, or -1 (out of memory, or no built-in profile).
 */
int plan_prefill_ms(const struct llm_model *m, const struct plan *p,
		    const struct plan_sizes *sz, const struct plan_timing *t, double *ms);

/**
 * plan_model_split() - plan_model() with the split @split: for
 * PLAN_SPLIT_BYTES plan_model() itself; for PLAN_SPLIT_TIME the
 * contiguous split whose largest plan_seg_prefill_ns() is least among
 * those whose every card fits its free memory (ties: the least sum of
 * squared times), with plan_model()'s bytes, note and refusal
 * @t: profile and link of the time split (NULL: the built-in profile,
 *	PCIe; unused for bytes)
 * Other arguments and return: as plan_model().
 */
int plan_model_split(const struct llm_model *m, const struct plan_sizes *s,
		     enum plan_split split, const struct plan_timing *t,
		     int n_cards, const uint64_t *card_free, const int *card_ids,
		     struct plan *p, char *err, size_t errlen);

#endif
