/* SPDX-License-Identifier: MIT */
/*
 * Engine checks shared by the host tests (mock cards) and the guest tool
 * (real cards); see engine_cases.c and engine_hybrid_cases.c for what they
 * assert.
 */
#ifndef RK_TEST_ENGINE_CASES_H
#define RK_TEST_ENGINE_CASES_H

#include "rk1828.h"

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

#endif
