// SPDX-License-Identifier: MIT
/*
 * --cards (userspace/llm/cardspec.c), shared by rk1828-llm run, plan and
 * serve: the accepted forms ("all", a count, a list in pipeline order, a
 * one-card list with a trailing comma), every rejected form with its
 * message, and the selection among the cards found (too few cards, an
 * index that is not there). Output: TAP.
 */
#include "cardspec.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

static void test_parse_ok(void)
{
	struct cards_spec cs;
	char err[160] = "";

	tap_ok(!cards_spec_parse("all", &cs, err, sizeof(err)) && cs.kind == CARDS_ALL,
	       "\"all\" is every card");
	tap_ok(!cards_spec_parse("3", &cs, err, sizeof(err)) && cs.kind == CARDS_COUNT && cs.n == 3,
	       "\"3\" is the first 3 cards");
	tap_ok(!cards_spec_parse("64", &cs, err, sizeof(err)) && cs.n == PLAN_MAX_CARDS,
	       "a count of %d is accepted", PLAN_MAX_CARDS);
	tap_ok(!cards_spec_parse("2,0,3", &cs, err, sizeof(err)) && cs.kind == CARDS_LIST &&
	       cs.n == 3 && cs.idx[0] == 2 && cs.idx[1] == 0 && cs.idx[2] == 3,
	       "\"2,0,3\" is a list in pipeline order");
	tap_ok(!cards_spec_parse("2,", &cs, err, sizeof(err)) && cs.kind == CARDS_LIST &&
	       cs.n == 1 && cs.idx[0] == 2, "\"2,\" is a one-card list");
}

static void test_parse_bad(void)
{
	static const struct { const char *spec, *msg; } bad[] = {
		{ "0", "is not all, a count 1..64" },
		{ "65", "is not all, a count 1..64" },
		{ "", "is not all" },
		{ "-1", "is not all" },
		{ "+2", "is not all" },
		{ " 2", "is not all" },
		{ "2x", "is not all" },
		{ "1,,2", "is not all" },
		{ ",1", "is not all" },
		{ "1,-2", "is not all" },
		{ "1234567890", "is not all" },
		{ "ALL", "is not all" },
		{ "1,1", "card 1 listed twice in \"1,1\"" },
		{ "0,2,0", "card 0 listed twice" },
	};
	struct cards_spec cs;
	char err[160], list[400] = "";
	size_t i;
	int ret;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		ret = cards_spec_parse(bad[i].spec, &cs, err, sizeof(err));
		tap_ok(ret == -EINVAL && strstr(err, bad[i].msg) && !strncmp(err, "--cards", 7),
		       "\"%s\" is refused: %s", bad[i].spec, err);
	}
	for (i = 0; i < PLAN_MAX_CARDS + 1; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%zu,", i);
	ret = cards_spec_parse(list, &cs, err, sizeof(err));
	tap_ok(ret == -EINVAL && strstr(err, "more than 64 cards listed"),
	       "a list of %d cards is refused: %s", PLAN_MAX_CARDS + 1, err);
}

static void test_select(void)
{
	struct cards_spec cs;
	int sel[PLAN_MAX_CARDS], n = -1, ret;
	char err[160] = "";

	cards_spec_parse("all", &cs, err, sizeof(err));
	ret = cards_spec_select(&cs, 3, sel, &n, err, sizeof(err));
	tap_ok(!ret && n == 3 && sel[0] == 0 && sel[2] == 2, "all of 3 found: cards 0, 1, 2");
	ret = cards_spec_select(&cs, 0, sel, &n, err, sizeof(err));
	tap_ok(!ret && n == 0, "all of none found: no card (the caller reports it)");

	cards_spec_parse("2", &cs, err, sizeof(err));
	ret = cards_spec_select(&cs, 4, sel, &n, err, sizeof(err));
	tap_ok(!ret && n == 2 && sel[0] == 0 && sel[1] == 1, "2 of 4 found: cards 0, 1");
	ret = cards_spec_select(&cs, 1, sel, &n, err, sizeof(err));
	tap_ok(ret == -ENODEV && !strcmp(err, "--cards 2: only 1 card found"),
	       "2 of 1 found: %s", err);

	cards_spec_parse("3,1", &cs, err, sizeof(err));
	ret = cards_spec_select(&cs, 4, sel, &n, err, sizeof(err));
	tap_ok(!ret && n == 2 && sel[0] == 3 && sel[1] == 1, "list 3,1 of 4 found: 3 then 1");
	ret = cards_spec_select(&cs, 3, sel, &n, err, sizeof(err));
	tap_ok(ret == -ENODEV && !strcmp(err, "--cards: no card 3 (3 found)"),
	       "list 3,1 of 3 found: %s", err);
}

int main(void)
{
	test_parse_ok();
	test_parse_bad();
	test_select();
	return tap_done();
}
