// SPDX-License-Identifier: MIT
/*
 * Host test of the engine: the checks of tests/lib/engine_cases.c over the
 * pipeline and the mock librk1828 (tests/lib/mock_rk.c: every job runs at
 * submit time through the card emulator's emu_exec()), 2 mock cards.
 * Model: $RK1828_MODEL or ../shared/models/stories260K.gguf. Output: TAP.
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
		.unplug = mock_rk_unplug,
	};
	const char *path = getenv("RK1828_MODEL");

	mock_rk_cards(cards);
	engine_cases_run(&env, path ? path : "../shared/models/stories260K.gguf");
	mock_rk_free();
	return tap_done();
}
