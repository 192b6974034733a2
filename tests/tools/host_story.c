// SPDX-License-Identifier: MIT
/*
 * host_story: rk1828-llm's own main (userspace/cli) linked with the mock
 * librk1828 (tests/lib/mock_rk.c: every job runs at submit time through
 * the card emulator's emu_exec()), so that `build/tests/host_story run -m
 * MODEL -p PROMPT -n 200 --temp 0` prints, on this host and without a
 * driver, the greedy text `make demo` prints: the runtime of this host's
 * architecture over the emulator's math. tests/arm64/run compares the
 * arm64 guest's demo text with it. This file gives the mock the two
 * functions it lacks, rk_open_all() and rk_close_all(), over MOCK_CARDS
 * mock cards, and rk_link_name() (mock cards are on no link).
 */
#include <errno.h>
#include <stdlib.h>

#include "mock_rk.h"

int rk_open_all(struct rk_card **cards, int *n_cards)
{
	struct rk_card *arr = calloc(MOCK_CARDS, sizeof(*arr));

	if (!arr)
		return -ENOMEM;
	mock_rk_cards(arr);
	*cards = arr;
	*n_cards = MOCK_CARDS;
	return 0;
}

void rk_close_all(struct rk_card *cards, int n_cards)
{
	free(cards);
}

const char *rk_link_name(enum rk_link_type link_type)
{
	return "mock";
}
