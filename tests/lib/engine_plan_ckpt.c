// SPDX-License-Identifier: MIT
/*
 * A plan with fewer prefix-cache checkpoints a slot, as plan_fit() gives
 * when the cards are short of memory: for tests that run the engine with
 * that plan (engine_opts.plan, .sizes) on cards with room to spare.
 */
#include "engine_cases.h"

#include <stdio.h>

#include "engine.h"
#include "planner.h"

int engine_plan_ckpts(const struct llm_model *m, const struct engine_opts *o,
		      struct rk_card *cards, int n_cards, uint32_t ckpt, struct plan *p,
		      struct plan_sizes *sz)
{
	uint64_t free_b[PLAN_MAX_CARDS];
	struct plan_fit_opts fo;
	char err[1024];
	int i;

	if (n_cards < 1 || n_cards > PLAN_MAX_CARDS)
		return -1;
	for (i = 0; i < n_cards; i++) {
		if (rk_card_refresh(&cards[i]))
			return -1;
		free_b[i] = cards[i].mem_free;
	}
	engine_fit_opts(m, o, &fo);
	if (fo.snaps_per_seq < ENGINE_SNAPS_PER_SLOT)	/* not a hybrid model */
		return -1;
	fo.snaps_per_seq += ckpt;
	fo.snaps_per_seq -= ENGINE_SNAPS_PER_SLOT;
	fo.snaps_optional = 0;
	if (plan_fit(m, &fo, n_cards, free_b, NULL, sz, p, NULL, 0, err, sizeof(err))) {
		fprintf(stderr, "# plan with %u checkpoints a slot: %s\n", ckpt, err);
		return -1;
	}
	return 0;
}
