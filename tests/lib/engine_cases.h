/* SPDX-License-Identifier: MIT */
/*
 * Engine checks shared by the host tests (mock cards) and the guest tool
 * (real cards); see engine_cases.c and engine_hybrid_cases.c for what they
 * assert.
 */
#ifndef RK_TEST_ENGINE_CASES_H
#define RK_TEST_ENGINE_CASES_H

#include <stdint.h>

#include "rk1828.h"

struct llm_model;
struct engine_opts;
struct plan;
struct plan_sizes;

/**
 * struct engine_cases_env - where the checks run
 * @cards: at least 2 opened cards (the first two are used)
 * @reset: optional, called before each engine is created (the mock
 *	forgets its BOs so card memory starts empty)
 * @live_objs: optional, BOs and syncobjs left (checked to be 0 after the
 *	last engine_destroy(); the mock's count)
 * @text_out: optional file for the batched text of the first prompt
 * @unplug: optional, make card @card of @cards gone (@on) or back; the
 *	idle-probe check runs only with it (the mock's mock_rk_unplug())
 */
struct engine_cases_env {
	struct rk_card *cards;
	void (*reset)(void);
	int (*live_objs)(void);
	const char *text_out;
	void (*unplug)(int card, int on);
};

/* engine_cases_run() - load the model at @model_path and run every check (TAP). */
void engine_cases_run(const struct engine_cases_env *env, const char *model_path);

/*
 * engine_cases_hybrid() - the prefix-cache and slot checks of a hybrid
 * (qwen35) model at @model_path (engine_hybrid_cases.c; TAP).
 */
void engine_cases_hybrid(const struct engine_cases_env *env, const char *model_path);

/**
 * engine_plan_ckpts() - plan_fit() of engine_fit_opts(@o) with @ckpt
 * prefix-cache checkpoints a slot instead of ENGINE_SNAPS_PER_SLOT (as the
 * planner gives when memory is short), on the free memory of @cards, card
 * indices 0..@n_cards-1 (engine_plan_ckpt.c)
 * @m: a hybrid model
 * @o: the engine options the plan is for (slots, context, bucket, --spec)
 * @cards, @n_cards: the cards, refreshed here
 * @ckpt: checkpoints a slot (ENGINE_SNAPS_MIN_PER_SLOT..ENGINE_SNAPS_PER_SLOT
 *	for a plan the engine runs)
 * @p, @sz: out: the plan and its sizes, for engine_opts.plan and .sizes
 * Return: 0, or -1 (not a hybrid model, a card error, no fit; said on stderr).
 */
int engine_plan_ckpts(const struct llm_model *m, const struct engine_opts *o,
		      struct rk_card *cards, int n_cards, uint32_t ckpt, struct plan *p,
		      struct plan_sizes *sz);

#endif
