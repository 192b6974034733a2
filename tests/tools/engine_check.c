// SPDX-License-Identifier: MIT
/*
 * engine_check: the engine checks of tests/lib/engine_cases.c on the first
 * two real cards, for the guest suite (tests/e2e/engine.sh): concurrent
 * greedy sessions equal each alone, prefix-cache hits with identical
 * output, stop strings, cancellation freeing the slot, limits, destroy;
 * with ENGINE_CHECK_HYBRID (a qwen35 model) also the hybrid checks of
 * tests/lib/engine_hybrid_cases.c (prefix hits restore recurrent-state
 * checkpoints); afterwards the cards' free memory must be what it was
 * before. Environment: RK1828_MODEL, ENGINE_CHECK_OUT (file for the
 * batched text of the first prompt), ENGINE_CHECK_HYBRID. Output: TAP.
 */
#include <stdio.h>
#include <stdlib.h>

#include "engine_cases.h"
#include "rk1828.h"
#include "tap.h"

int main(void)
{
	struct engine_cases_env env = { .text_out = getenv("ENGINE_CHECK_OUT") };
	const char *path = getenv("RK1828_MODEL");
	const char *hybrid = getenv("ENGINE_CHECK_HYBRID");
	uint64_t before[2];
	int n = 0, i, ok = 1;

	if (rk_open_all(&env.cards, &n) || n < 2) {
		printf("1..0 # SKIP needs 2 cards (%d found)\n", n);
		if (n > 0)
			rk_close_all(env.cards, n);
		return 0;
	}
	for (i = 0; i < 2; i++) {
		rk_card_refresh(&env.cards[i]);
		before[i] = env.cards[i].mem_free;
	}
	engine_cases_run(&env, path ? path : "../shared/models/stories260K.gguf");
	if (hybrid && *hybrid)
		engine_cases_hybrid(&env, hybrid);
	for (i = 0; i < 2; i++) {
		rk_card_refresh(&env.cards[i]);
		ok &= env.cards[i].mem_free == before[i];
	}
	tap_ok(ok, "every engine's card memory came back (card0 %llu of %llu bytes free)",
	       (unsigned long long)env.cards[0].mem_free, (unsigned long long)before[0]);
	rk_close_all(env.cards, n);
	return tap_done();
}
