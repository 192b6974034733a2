// SPDX-License-Identifier: MIT
/* The --cards option (cardspec.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cardspec.h"

/* Decimal digits only (no sign, no blanks), at most 9 of them. */
static int parse_digits(const char *s, const char **end, int *out)
{
	int v = 0, n = 0;

	for (; *s >= '0' && *s <= '9'; s++, n++) {
		if (n == 9)
			return -1;
		v = v * 10 + (*s - '0');
	}
	*end = s;
	*out = v;
	return n ? 0 : -1;
}

int cards_spec_parse(const char *spec, struct cards_spec *cs, char *err, size_t errlen)
{
	const char *p = spec, *end;
	int v, i;

	memset(cs, 0, sizeof(*cs));
	if (!strcmp(spec, "all")) {
		cs->kind = CARDS_ALL;
		return 0;
	}
	if (!strchr(spec, ',')) {
		if (parse_digits(spec, &end, &v) || *end || v < 1 || v > PLAN_MAX_CARDS)
			goto bad;
		cs->kind = CARDS_COUNT;
		cs->n = v;
		return 0;
	}
	cs->kind = CARDS_LIST;
	while (*p) {
		if (parse_digits(p, &end, &v) || (*end && *end != ','))
			goto bad;
		for (i = 0; i < cs->n; i++) {
			if (cs->idx[i] == v) {
				snprintf(err, errlen, "--cards: card %d listed twice in \"%s\"", v,
					 spec);
				return -EINVAL;
			}
		}
		if (cs->n == PLAN_MAX_CARDS) {
			snprintf(err, errlen, "--cards: more than %d cards listed", PLAN_MAX_CARDS);
			return -EINVAL;
		}
		cs->idx[cs->n++] = v;
		p = *end ? end + 1 : end;
	}
	return 0;
bad:
	snprintf(err, errlen,
		 "--cards: \"%s\" is not all, a count 1..%d, or a list of card indices (e.g. 0,2)",
		 spec, PLAN_MAX_CARDS);
	return -EINVAL;
}

int cards_spec_select(const struct cards_spec *cs, int n_all, int *sel, int *n_sel,
		      char *err, size_t errlen)
{
	int i;

	*n_sel = 0;
	switch (cs->kind) {
	case CARDS_ALL:
		for (; *n_sel < n_all && *n_sel < PLAN_MAX_CARDS; (*n_sel)++)
			sel[*n_sel] = *n_sel;
		return 0;
	case CARDS_COUNT:
		if (cs->n > n_all) {
			snprintf(err, errlen, "--cards %d: only %d card%s found", cs->n, n_all,
				 n_all == 1 ? "" : "s");
			return -ENODEV;
		}
		for (; *n_sel < cs->n; (*n_sel)++)
			sel[*n_sel] = *n_sel;
		return 0;
	case CARDS_LIST:
		for (i = 0; i < cs->n; i++) {
			if (cs->idx[i] >= n_all) {
				snprintf(err, errlen, "--cards: no card %d (%d found)", cs->idx[i],
					 n_all);
				return -ENODEV;
			}
			sel[i] = cs->idx[i];
		}
		*n_sel = cs->n;
		return 0;
	}
	return -EINVAL;
}
