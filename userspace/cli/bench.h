/* SPDX-License-Identifier: MIT */
/*
 * rk1828-llm bench: measure a model on the cards present (emulated or
 * real) and print each figure next to the planner's prediction
 * (predict.h) for the same plan, so a user with real cards can check the
 * planner. llama-bench's tests and columns are the model: ppN is the
 * prefill of an N-token prompt (TTFT and prompt tokens per second), tgN
 * the decode of N tokens (TPOT and tokens per second), and with
 * --sessions S, tgN xS the aggregate decode of S concurrent sessions
 * through the engine (engine.h), and with --spec ngram, tgN ngram: one
 * session speculating through the engine, predicted at the acceptance it
 * measured (psim_spec_decode()). Each test runs --reps times; the table
 * shows the mean and the standard deviation.
 *
 * The measured figures are wall time on the host, so they include what
 * the prediction leaves out (the runtime, the driver, the transport);
 * bench reports that host time per decode step against the modelled card
 * time. --trace FILE writes every job of the single-session tests as a
 * Chrome trace-event JSON (one process per card, one thread per queue;
 * Perfetto and chrome://tracing open it).
 */
#ifndef RK_LLM_BENCH_H
#define RK_LLM_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cost.h"
#include "model.h"
#include "planner.h"
#include "profile.h"
#include "rk1828.h"

struct tokenizer;

#define BENCH_MAX_PROMPTS	16

/**
 * struct bench_opts - what to measure
 * @model_path: the model file (for the table)
 * @m: the model
 * @tok: its tokenizer (the engine needs one for --sessions)
 * @cards: opened cards
 * @card_idx: @n_cards indices into @cards, in pipeline order
 * @n_cards: cards to use
 * @plan: the plan of @m on those cards (plan_model(), same sizes)
 * @n_ctx: context of the pipeline
 * @bucket: prefill bucket
 * @prompts: @n_prompts prompt lengths of the ppN tests (-p)
 * @n_prompts: entries (0: no pp tests)
 * @n_gen: tokens of the tgN test (-n; 0: none)
 * @sessions: sessions of the aggregate test (--sessions; 0 or 1: none)
 * @reps: repetitions of each test (-r, >= 1)
 * @trace: --trace FILE, or NULL
 * @prof: card profile of the prediction
 * @link: link of the prediction (of every card unless @card_links)
 * @card_links: per plan segment, its card's link (cards on both links), or
 *	NULL
 * @spec: --spec: a drafter (enum spec_kind) for the tgN spec row (one
 *	session speculating through the engine; predicted at its measured
 *	acceptance), SPEC_NONE: no such row
 * @draft_max: --draft-max (0: the engine's default)
 * @draft_model: --draft-model FILE (--spec draft)
 * @out: where the table goes
 */
struct bench_opts {
	const char *model_path;
	const struct llm_model *m;
	const struct tokenizer *tok;
	struct rk_card *cards;
	const int *card_idx;
	int n_cards;
	const struct plan *plan;
	uint32_t n_ctx, bucket;
	int kv_type;		/* QUANT_TYPE_* of the K/V caches (the plan's) */
	uint32_t prompts[BENCH_MAX_PROMPTS];
	int n_prompts;
	int n_gen;
	int sessions;
	int reps;
	const char *trace;
	const struct card_profile *prof;
	enum cost_link link;
	const enum cost_link *card_links;
	int spec;
	int draft_max;
	const char *draft_model;
	FILE *out;
};

/**
 * bench_run() - run the tests and print the table
 * @err, @errlen: the failed card, job or file on failure
 * Return: 0, or -1.
 */
int bench_run(const struct bench_opts *o, char *err, size_t errlen);

#endif
