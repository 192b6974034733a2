// SPDX-License-Identifier: MIT
/*
 * Unit tests of speculative decoding's pure parts (userspace/engine/spec.c):
 * the ngram drafter (longest n-gram first, most recent occurrence, bounded
 * by the history and n_max), the greedy acceptance (longest agreeing
 * prefix) and the speculative sampling rule with a point-mass draft,
 * checked statistically: over many seeded draws on a small vocabulary the
 * emitted tokens follow the target distribution p and the draft is
 * accepted with probability p(d), within 5 standard errors (a rule that
 * e.g. accepted with min(1, p(d) / q) for q != 1, or sampled the residual
 * from p with d included, fails it). Output: TAP.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "spec.h"
#include "tap.h"

static void test_ngram(void)
{
	const int32_t h1[] = { 1, 2, 3, 4, 1, 2 };
	const int32_t h2[] = { 5, 1, 2, 9, 7, 1, 2, 8, 5, 1, 2 };
	const int32_t h3[] = { 1, 2, 3, 4, 5 };
	const int32_t h4[] = { 7, 7, 7, 7 };
	int32_t out[8];
	int n;

	n = spec_ngram_draft(h1, 6, 8, out);
	tap_ok(n == 4 && out[0] == 3 && out[1] == 4 && out[2] == 1 && out[3] == 2,
	       "ngram: [1 2 3 4 1 2] proposes what followed \"1 2\": 3 4 1 2 (%d: %d...)", n,
	       n ? out[0] : -1);
	n = spec_ngram_draft(h1, 6, 2, out);
	tap_ok(n == 2 && out[0] == 3 && out[1] == 4, "ngram: n_max 2 caps the proposal (%d)", n);
	n = spec_ngram_draft(h2, 11, 1, out);
	tap_ok(n == 1 && out[0] == 9,
	       "ngram: the longest n-gram wins (\"5 1 2\" -> 9, not \"1 2\" -> 8): %d", n ? out[0] : -1);
	tap_ok(spec_ngram_draft(h3, 5, 8, out) == 0, "ngram: no repeated n-gram, no proposal");
	n = spec_ngram_draft(h4, 4, 8, out);
	tap_ok(n == 1 && out[0] == 7, "ngram: [7 7 7 7]: the most recent earlier \"7 7 7\" -> 7 (%d)",
	       n);
	tap_ok(spec_ngram_draft(h1, 6, 0, out) == 0, "ngram: n_max 0 proposes nothing");
	tap_ok(spec_ngram_draft(h1, 1, 8, out) == 0, "ngram: one token of history: nothing");
}

static void test_greedy(void)
{
	const int32_t tgt[] = { 4, 5, 6, 7 }, d1[] = { 4, 5, 9, 7 }, d2[] = { 1, 5, 6, 7 };
	const int32_t id1[] = { 5 };
	const double p1[] = { 1.0 };
	bool acc;
	int32_t t;

	tap_ok(spec_accept_greedy(tgt, d1, 4) == 2, "greedy: prefix of 2 agrees");
	tap_ok(spec_accept_greedy(tgt, d2, 4) == 0, "greedy: first draft differs: 0");
	tap_ok(spec_accept_greedy(tgt, tgt, 4) == 4, "greedy: all agree: 4");
	t = spec_accept_point(id1, p1, 1, 5, 0.999999, 0.5, &acc);
	tap_ok(acc && t == 5, "point rule, greedy p: the argmax draft is always accepted");
	t = spec_accept_point(id1, p1, 1, 3, 0.0, 0.0, &acc);
	tap_ok(!acc && t == 5, "point rule, greedy p: another draft is rejected for the argmax");
}

#define NV	5
#define DRAWS	200000

/* Emitted-token frequencies of the point rule against p, and the acceptance rate. */
static void check_rule(const int32_t *ids, const double *p, int n, int32_t d, uint64_t seed)
{
	struct spec_rng r;
	long cnt[NV] = { 0 }, acc_n = 0;
	double pd = 0.0, worst = 0.0, se;
	int i, k;

	spec_rng_seed(&r, seed);
	for (i = 0; i < DRAWS; i++) {
		double u1 = spec_rng_unit(&r), u2 = spec_rng_unit(&r);
		bool acc;
		int32_t t = spec_accept_point(ids, p, n, d, u1, u2, &acc);

		cnt[t]++;
		acc_n += acc;
		if (acc != (t == d))
			break;
	}
	tap_ok(i == DRAWS, "rule d=%d: accepted exactly when the draft is emitted", d);
	for (k = 0; k < n; k++) {
		double f = (double)cnt[ids[k]] / DRAWS, z;

		se = sqrt(p[k] * (1 - p[k]) / DRAWS);
		z = se > 0 ? fabs(f - p[k]) / se : (f == p[k] ? 0 : INFINITY);
		if (z > worst)
			worst = z;
		if (ids[k] == d)
			pd = p[k];
	}
	tap_ok(worst < 5.0, "rule d=%d: emitted frequencies follow p (worst |f - p| = %.2f sigma)", d,
	       worst);
	se = sqrt(pd * (1 - pd) / DRAWS);
	tap_ok(fabs((double)acc_n / DRAWS - pd) < 5 * se + 1e-12,
	       "rule d=%d: accepted %.4f of the time, p(d) = %.4f", d, (double)acc_n / DRAWS, pd);
}

static void test_rule(void)
{
	const int32_t ids[NV] = { 0, 1, 2, 3, 4 };
	const double p[NV] = { 0.45, 0.25, 0.15, 0.10, 0.05 };
	const int32_t ids3[3] = { 2, 0, 4 };	/* top-k cut: 1 and 3 have no mass */
	const double p3[3] = { 0.6, 0.3, 0.1 };
	struct spec_rng a, b;
	double u;
	int i, bad = 0;

	check_rule(ids, p, NV, 1, 42);
	check_rule(ids, p, NV, 0, 7);
	check_rule(ids3, p3, 3, 3, 99);	/* p(d) = 0: never accepted, residual = p */
	spec_rng_seed(&a, 5);
	spec_rng_seed(&b, 5);
	for (i = 0; i < 1000; i++) {
		u = spec_rng_unit(&a);
		bad += !(u >= 0.0 && u < 1.0) || u != spec_rng_unit(&b);
	}
	tap_ok(!bad, "rng: uniform in [0, 1), the same for the same seed");
}

static void test_parse(void)
{
	enum spec_kind k = SPEC_NONE;

	tap_ok(!spec_parse("ngram", &k) && k == SPEC_NGRAM, "--spec ngram");
	tap_ok(!spec_parse("none", &k) && k == SPEC_NONE, "--spec none");
	tap_ok(!spec_parse("draft", &k) && k == SPEC_DRAFT && !strcmp(spec_name(k), "draft"),
	       "--spec draft");
	k = SPEC_NONE;
	tap_ok(!spec_parse("mtp", &k) && k == SPEC_MTP && !strcmp(spec_name(k), "mtp"),
	       "--spec mtp");
	k = SPEC_NONE;
	tap_ok(spec_parse("eagle", &k) && k == SPEC_NONE, "--spec eagle: unknown, refused");
	tap_ok(!strcmp(spec_name(SPEC_NGRAM), "ngram"), "spec_name(SPEC_NGRAM)");
}

int main(void)
{
	test_ngram();
	test_greedy();
	test_rule();
	test_parse();
	return tap_done();
}
