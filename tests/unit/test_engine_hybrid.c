// SPDX-License-Identifier: MIT
/*
 * Host test of the engine with a hybrid model: the checks of
 * tests/lib/engine_hybrid_cases.c (prefix-cache hits restore recurrent-state
 * checkpoints or continue from the live state, bit for bit what a fresh
 * engine gives; slots keep their own states) over the pipeline and the mock
 * librk1828 (every job runs through the card emulator's emu_exec()), 2 mock
 * cards. Model: $RK1828_HYBRID_MODEL or build/synth/qwen35-engine.gguf
 * (make synth-models). Output: TAP.
 */
#include <stdlib.h>

#include "engine_cases.h"
#include "mock_rk.h"
#include "tap.h"

int main(void)
{
	static struct rk_card cards[MOCK_CARDS];
	struct engine_cases_env env = {
		.cards = cards, .reset = mock_rk_reset, .live_objs = mock_rk_live_objs,
	};
	const char *path = getenv("RK1828_HYBRID_MODEL");

	mock_rk_cards(cards);
	engine_cases_hybrid(&env, path ? path : "build/synth/qwen35-engine.gguf");
	mock_rk_free();
	return tap_done();
}
