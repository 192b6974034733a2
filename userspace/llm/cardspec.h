/* SPDX-License-Identifier: MIT */
/*
 * The --cards option of rk1828-llm (run, plan and serve): which of the
 * cards found to use, in pipeline order. Syntax is checked when the
 * options are parsed (cards_spec_parse(), a usage error); whether the
 * cards exist once they are opened (cards_spec_select(), a runtime
 * error).
 */
#ifndef RK_LLM_CARDSPEC_H
#define RK_LLM_CARDSPEC_H

#include <stddef.h>

#include "planner.h"

/**
 * struct cards_spec - a parsed --cards value
 * @kind: CARDS_ALL (every card found, at most PLAN_MAX_CARDS),
 *	CARDS_COUNT (the first @n cards) or CARDS_LIST (the @n card indices
 *	in @idx, in pipeline order)
 * @n: 1..PLAN_MAX_CARDS for CARDS_COUNT and CARDS_LIST, 0 for CARDS_ALL
 * @idx: distinct card indices (CARDS_LIST)
 */
struct cards_spec {
	enum { CARDS_ALL, CARDS_COUNT, CARDS_LIST } kind;
	int n;
	int idx[PLAN_MAX_CARDS];
};

/**
 * cards_spec_parse() - check and parse a --cards value
 * @spec: "all", a count 1..PLAN_MAX_CARDS ("2") or a comma separated list
 *	of distinct card indices ("0,2"; a trailing comma makes a one-card
 *	list: "2,"); decimal digits only, no signs or blanks
 * @cs: out
 * @err, @errlen: on failure the reason, e.g. "--cards: card 1 listed twice
 *	in \"1,1\""
 *
 * Return: 0, or -EINVAL with @err set.
 */
int cards_spec_parse(const char *spec, struct cards_spec *cs, char *err, size_t errlen);

/**
 * cards_spec_select() - the indices of the cards @cs names among @n_all
 * found
 * @cs: from cards_spec_parse()
 * @n_all: cards found (rk_open_all())
 * @sel: out, PLAN_MAX_CARDS entries: indices into the cards found, in
 *	pipeline order
 * @n_sel: out, entries of @sel
 * @err, @errlen: on failure the reason: "--cards 4: only 2 cards found",
 *	"--cards: no card 3 (2 found)"
 *
 * Return: 0, or -ENODEV when fewer cards are there than @cs asks for.
 */
int cards_spec_select(const struct cards_spec *cs, int n_all, int *sel, int *n_sel,
		      char *err, size_t errlen);

#endif
