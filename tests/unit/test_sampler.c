// SPDX-License-Identifier: MIT
/*
 * Sampler tests: greedy and its ties, top-k = 1, determinism per seed,
 * top-p, and empirical frequencies against softmax (temperature 1 and 0.5,
 * top-k 2, top-p 0.7) over 20000 draws; logit bias, the repeat penalty and
 * its window, OpenAI's presence/frequency penalties and min-p with exact
 * ids and probabilities (sampler_dist()) on hand-made logits, and the
 * chain's order (top-p before min-p before temperature).
 * Output: "ok N - name" / "not ok N - name", then "# N passed, M failed".
 */
#include "sampler.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "tap.h"


static struct sampler *mk(float temp, int top_k, float top_p, uint64_t seed,
			  int n)
{
	struct sampler_params p = {
		.temperature = temp, .top_k = top_k, .top_p = top_p, .seed = seed,
	};

	return sampler_new(&p, n);
}

#define NV 8
/* Logits with distinct values; softmax computed in the test. */
static const float L[NV] = { 0.5f, 2.0f, -1.0f, 1.5f, 0.0f, 1.0f, -3.0f, 0.25f };

static void softmax_ref(const float *l, int n, double temp, double *p)
{
	double max = -INFINITY, sum = 0;
	int i;

	for (i = 0; i < n; i++)
		if (l[i] > max)
			max = l[i];
	for (i = 0; i < n; i++) {
		p[i] = exp((l[i] - max) / temp);
		sum += p[i];
	}
	for (i = 0; i < n; i++)
		p[i] /= sum;
}

/*
 * Draw N tokens and compare frequencies to want[] (probabilities, zero for
 * excluded ids). Tolerance 0.015 absolute: at N = 20000 the standard error
 * is at most 0.0036, so this is > 4 sigma.
 */
static bool freq_match(struct sampler *s, const float *l, const double *want,
		       int n, double *max_err, int *bad_id)
{
	enum { N = 20000 };
	int cnt[NV] = { 0 };
	int i;

	*max_err = 0;
	*bad_id = -1;
	for (i = 0; i < N; i++) {
		int32_t id = sampler_sample(s, l);

		if (id < 0 || id >= n) {
			*bad_id = id;
			return false;
		}
		cnt[id]++;
	}
	for (i = 0; i < n; i++) {
		double e = fabs((double)cnt[i] / N - want[i]);

		if (want[i] == 0.0 && cnt[i]) {
			*bad_id = i;
			return false;
		}
		if (e > *max_err)
			*max_err = e;
	}
	return *max_err < 0.015;
}

static void test_greedy(void)
{
	float tie[5] = { 1.0f, 3.0f, -2.0f, 3.0f, 3.0f };
	float nan_first[4] = { NAN, 0.5f, 2.0f, NAN };
	struct sampler *s = mk(0.0f, 0, 1.0f, 1, NV);
	struct sampler *t = mk(0.0f, 0, 1.0f, 1, 5);
	struct sampler *u = mk(0.0f, 0, 1.0f, 1, 4);
	int i, ok = 1;

	tap_ok(s && t && u, "sampler_new (greedy)");
	if (!s || !t || !u)
		goto out;
	for (i = 0; i < 10; i++)
		ok &= sampler_sample(s, L) == 1;
	tap_ok(ok, "greedy picks argmax (id 1, logit 2.0) every time");
	tap_ok(sampler_sample(t, tie) == 1, "greedy tie 1/3/4 -> lowest id 1");
	tap_ok(sampler_sample(u, nan_first) == 2, "greedy ignores NaN logits");
out:
	sampler_free(s);
	sampler_free(t);
	sampler_free(u);
}

static void test_topk1(void)
{
	float tie[5] = { 1.0f, 3.0f, -2.0f, 3.0f, 3.0f };
	struct sampler *s = mk(1.5f, 1, 1.0f, 42, NV);
	struct sampler *t = mk(1.0f, 1, 1.0f, 42, 5);
	int i, ok = 1;

	if (!s || !t) {
		tap_ok(0, "sampler_new (top-k 1)");
		goto out;
	}
	for (i = 0; i < 200; i++)
		ok &= sampler_sample(s, L) == 1;
	tap_ok(ok, "top-k 1 at temp 1.5 == greedy over 200 draws");
	ok = 1;
	for (i = 0; i < 200; i++)
		ok &= sampler_sample(t, tie) == 1;
	tap_ok(ok, "top-k 1 with ties -> lowest id 1 over 200 draws");
out:
	sampler_free(s);
	sampler_free(t);
}

static void seq(uint64_t seed, float top_p, int32_t *out, int n)
{
	struct sampler *s = mk(1.0f, 0, top_p, seed, NV);
	int i;

	for (i = 0; i < n; i++)
		out[i] = s ? sampler_sample(s, L) : -1;
	sampler_free(s);
}

static void test_seeds(void)
{
	int32_t a[64], b[64], c[64], z1[64], z2[64];

	seq(1234, 1.0f, a, 64);
	seq(1234, 1.0f, b, 64);
	seq(1235, 1.0f, c, 64);
	tap_ok(memcmp(a, b, sizeof(a)) == 0, "same seed -> same 64-token sequence");
	tap_ok(memcmp(a, c, sizeof(a)) != 0, "different seed -> different sequence");
	seq(0, 1.0f, z1, 64);
	seq(0, 1.0f, z2, 64);
	tap_ok(memcmp(z1, z2, sizeof(z1)) == 0 && a[0] >= 0,
	      "seed 0 is valid and deterministic");
	seq(1234, 0.9f, a, 64);
	seq(1234, 0.9f, b, 64);
	tap_ok(memcmp(a, b, sizeof(a)) == 0, "same seed with top-p -> same sequence");
}

static void test_topp(void)
{
	struct sampler *s = mk(1.0f, 0, 1e-6f, 7, NV);
	struct sampler *z = mk(1.0f, 0, 0.0f, 7, NV);
	int i, ok = 1;

	tap_ok(!z, "top-p 0 is outside (0, 1]: sampler_new refuses it");
	if (!s) {
		tap_ok(0, "sampler_new (top-p)");
		goto out;
	}
	for (i = 0; i < 500; i++)
		ok &= sampler_sample(s, L) == 1;
	tap_ok(ok, "top-p 1e-6 -> argmax over 500 draws");
out:
	sampler_free(s);
	sampler_free(z);
}

static void test_freq(void)
{
	double want[NV], p1[NV], e;
	struct sampler *s;
	int bad, i, ok;
	double cum;
	int order[NV] = { 1, 3, 5, 0, 7, 4, 2, 6 };	/* by logit */

	softmax_ref(L, NV, 1.0, want);
	s = mk(1.0f, 0, 1.0f, 99, NV);
	ok = s && freq_match(s, L, want, NV, &e, &bad);
	tap_ok(ok,
	      "temp 1: frequencies match softmax (max err %.4f)", e);
	sampler_free(s);

	/* The tolerance discriminates: temp-1 draws do not match temp 0.5. */
	softmax_ref(L, NV, 0.5, want);
	s = mk(1.0f, 0, 1.0f, 99, NV);
	ok = s && freq_match(s, L, want, NV, &e, &bad);
	tap_ok(s && !ok && e > 0.05,
	      "temp-1 draws differ from softmax(l/0.5) (max err %.4f)", e);
	sampler_free(s);

	s = mk(0.5f, 0, 1.0f, 100, NV);
	ok = s && freq_match(s, L, want, NV, &e, &bad);
	tap_ok(ok,
	      "temp 0.5: frequencies match softmax(l/0.5) (max err %.4f)", e);
	sampler_free(s);

	/* top-k 2: ids 1 and 3 only, renormalised softmax at temp 1. */
	{
		float two[2] = { L[1], L[3] };
		double w2[2];

		softmax_ref(two, 2, 1.0, w2);
		memset(want, 0, sizeof(want));
		want[1] = w2[0];
		want[3] = w2[1];
	}
	s = mk(1.0f, 2, 1.0f, 101, NV);
	ok = s && freq_match(s, L, want, NV, &e, &bad);
	tap_ok(ok,
	      "top-k 2: only ids 1 and 3, renormalised (max err %.4f, bad id %d)",
	      e, bad);
	sampler_free(s);

	/*
	 * top-p 0.7 at temp 1: keep the smallest best-first prefix whose
	 * softmax mass reaches 0.7, then renormalise.
	 */
	softmax_ref(L, NV, 1.0, p1);
	memset(want, 0, sizeof(want));
	cum = 0;
	for (i = 0; i < NV; i++) {
		cum += p1[order[i]];
		want[order[i]] = p1[order[i]];
		if (cum >= 0.7)
			break;
	}
	tap_ok(i == 2, "top-p 0.7 keeps 3 tokens (ids 1 3 5; mass %.3f)", cum);
	for (i = 0; i < NV; i++)
		want[i] /= cum;
	s = mk(1.0f, 0, 0.7f, 102, NV);
	ok = s && freq_match(s, L, want, NV, &e, &bad);
	tap_ok(ok,
	      "top-p 0.7: frequencies match the renormalised nucleus (max err %.4f, bad id %d)",
	      e, bad);
	sampler_free(s);

	/*
	 * top-p uses untempered probabilities (llama.cpp order): at temp 2 the
	 * nucleus is still ids 1 3 5, and within it probabilities follow l/2.
	 */
	{
		float three[3] = { L[1], L[3], L[5] };
		double w3[3];

		softmax_ref(three, 3, 2.0, w3);
		memset(want, 0, sizeof(want));
		want[1] = w3[0];
		want[3] = w3[1];
		want[5] = w3[2];
	}
	s = mk(2.0f, 0, 0.7f, 103, NV);
	ok = s && freq_match(s, L, want, NV, &e, &bad);
	tap_ok(ok,
	      "top-p 0.7 at temp 2: nucleus from temp-1 probabilities, draw at temp 2 (max err %.4f, bad id %d)",
	      e, bad);
	sampler_free(s);
}

static void test_params(void)
{
	struct sampler_params p = { .temperature = NAN, .top_k = 0, .top_p = 1.0f };
	float big[3] = { -INFINITY, INFINITY, 0.0f };
	struct sampler *s;

	tap_ok(sampler_new(&p, 10) == NULL, "NaN temperature refused");
	p.temperature = 1.0f;
	tap_ok(sampler_new(&p, 0) == NULL, "n_vocab 0 refused");
	s = sampler_new(&p, 3);
	tap_ok(s && sampler_sample(s, big) == 1, "+inf logit is always picked");
	sampler_free(s);
}

/* Greedy over L with one parameter set, after priming @prime. */
static int32_t greedy_with(struct sampler_params p, const int32_t *prime, int n_prime)
{
	struct sampler *s = sampler_new(&p, NV);
	int32_t id;

	if (!s)
		return -100;
	sampler_prime(s, prime, n_prime);
	id = sampler_sample(s, L);
	sampler_free(s);
	return id;
}

static void test_bias(void)
{
	struct sampler_bias down1[] = { { 1, -100.0f } }, up6[] = { { 6, 100.0f } };
	struct sampler_bias ban[] = { { 1, -INFINITY }, { 3, -INFINITY } };
	struct sampler_bias twice[] = { { 3, 0.25f }, { 3, 0.25f } };
	struct sampler_bias bad[] = { { NV, 1.0f } };
	struct sampler_params p = { .temperature = 0, .top_p = 1 };
	const int32_t *ids;
	const double *pr;
	struct sampler *s;
	int n;

	p.bias = down1;
	p.n_bias = 1;
	tap_ok(greedy_with(p, NULL, 0) == 3, "greedy: logit_bias 1:-100 -> next best id 3");
	p.bias = up6;
	tap_ok(greedy_with(p, NULL, 0) == 6, "greedy: logit_bias 6:+100 forces id 6 (logit -3)");
	p.bias = ban;
	p.n_bias = 2;
	tap_ok(greedy_with(p, NULL, 0) == 5, "greedy: ids 1 and 3 banned (-inf) -> id 5");
	/* 1.5 + 0.25 + 0.25 = 2.0 ties id 1's 2.0: the lower id wins */
	p.bias = twice;
	tap_ok(greedy_with(p, NULL, 0) == 1, "repeated bias ids add up: id 3 reaches 2.0, tie -> id 1");
	twice[1].bias = 0.5f;
	tap_ok(greedy_with(p, NULL, 0) == 3, "id 3 biased +0.75 to 2.25 -> id 3");
	p.bias = bad;
	p.n_bias = 1;
	tap_ok(sampler_new(&p, NV) == NULL, "bias id == n_vocab refused");
	bad[0].id = -1;
	tap_ok(sampler_new(&p, NV) == NULL, "bias id -1 refused");

	/* temp 1, id 6 +100: exp(-97 + ...) leaves the others below 1e-40 */
	p.temperature = 1.0f;
	p.bias = up6;
	s = sampler_new(&p, NV);
	n = s ? sampler_dist(s, L, &ids, &pr) : 0;
	tap_ok(n == NV && ids[0] == 6 && pr[0] == 1.0 && pr[1] < 1e-40,
	       "temp 1: +100 makes id 6 certain (p %.17g, next %.3g)", n ? pr[0] : 0.0,
	       n > 1 ? pr[1] : 0.0);
	sampler_free(s);
	/* banned tokens get probability exactly 0 */
	p.bias = ban;
	p.n_bias = 2;
	s = sampler_new(&p, NV);
	n = s ? sampler_dist(s, L, &ids, &pr) : 0;
	{
		double w[NV], got[NV] = { 0 };
		float l2[NV];
		bool ok = n == NV;
		int i;

		memcpy(l2, L, sizeof(l2));
		l2[1] = l2[3] = -INFINITY;
		softmax_ref(l2, NV, 1.0, w);
		for (i = 0; ok && i < n; i++)
			got[ids[i]] = pr[i];
		for (i = 0; ok && i < NV; i++)
			ok = fabs(got[i] - w[i]) < 1e-12;
		tap_ok(ok && got[1] == 0.0 && got[3] == 0.0,
		       "temp 1: banned ids 1, 3 have probability 0, the rest softmax of the others");
	}
	sampler_free(s);
}

static void test_repeat(void)
{
	struct sampler_params p = { .temperature = 0, .top_p = 1, .repeat_penalty = 4.0f,
				    .repeat_last_n = 64 };
	static const int32_t one[] = { 1 }, onethree[] = { 1, 3 }, three[] = { 1, 3, 5 };
	static const int32_t neg[] = { 2 };
	const int32_t *ids;
	const double *pr;
	struct sampler *s;
	int n;

	tap_ok(greedy_with(p, one, 1) == 3, "repeat 4 over [1]: id 1 2.0 -> 0.5 -> id 3 (1.5)");
	p.repeat_penalty = 2.0f;
	/* 2.0 / 2 = 1.0 ties id 5's 1.0, 1.5 / 2 = 0.75: the lower id */
	tap_ok(greedy_with(p, onethree, 2) == 1, "repeat 2 over [1,3]: 1.0, 0.75; tie of ids 1 and 5 -> 1");
	p.repeat_penalty = 1.0f;
	tap_ok(greedy_with(p, one, 1) == 1, "repeat 1 is off: id 1");
	p.repeat_penalty = 0.0f;
	tap_ok(greedy_with(p, one, 1) == 1, "repeat 0 is off (no division by zero): id 1");
	p.repeat_penalty = 4.0f;
	p.repeat_last_n = 0;
	tap_ok(greedy_with(p, one, 1) == 1, "repeat_last_n 0 is off: id 1");
	p.repeat_last_n = 2;
	tap_ok(greedy_with(p, three, 3) == 1, "window 2 over [1,3,5]: only 3, 5 penalised -> id 1");
	p.repeat_last_n = 3;
	tap_ok(greedy_with(p, three, 3) == 0, "window 3 over [1,3,5]: 0.5, 0.375, 0.25 -> id 0 (0.5, tie)");
	p.repeat_last_n = -1;
	tap_ok(greedy_with(p, three, 3) == 0, "window -1 (all) over [1,3,5] -> id 0");

	/* the window slides with accepted tokens */
	p.repeat_last_n = 2;
	s = sampler_new(&p, NV);
	if (s) {
		int32_t a, b;

		sampler_prime(s, one, 1);
		sampler_accept(s, 3);
		sampler_accept(s, 5);
		a = sampler_sample(s, L);	/* window {3, 5}: id 1 back at 2.0 */
		sampler_accept(s, 1);
		b = sampler_sample(s, L);	/* window {5, 1}: id 3 back at 1.5 */
		tap_ok(a == 1 && b == 3, "window 2 slides: [1]+3+5 -> 1, then +1 -> 3 (got %d %d)", a, b);
	} else {
		tap_ok(0, "sampler_new (repeat window)");
	}
	sampler_free(s);

	/* a negative logit is multiplied: id 2 -1.0 -> -2.0 at temp 1 */
	p.temperature = 1.0f;
	p.repeat_penalty = 2.0f;
	p.repeat_last_n = 64;
	s = sampler_new(&p, NV);
	if (s)
		sampler_prime(s, neg, 1);
	n = s ? sampler_dist(s, L, &ids, &pr) : 0;
	{
		float l2[NV];
		double w[NV], got[NV] = { 0 };
		bool ok = n == NV;
		int i;

		memcpy(l2, L, sizeof(l2));
		l2[2] = -2.0f;
		softmax_ref(l2, NV, 1.0, w);
		for (i = 0; ok && i < n; i++)
			got[ids[i]] = pr[i];
		for (i = 0; ok && i < NV; i++)
			ok = fabs(got[i] - w[i]) < 1e-12;
		tap_ok(ok, "repeat 2 over [2]: logit -1.0 multiplied to -2.0 (p[2] %.6f, want %.6f)",
		       got[2], w[2]);
	}
	sampler_free(s);
}

static void test_openai_pen(void)
{
	struct sampler_params p = { .temperature = 0, .top_p = 1, .presence_penalty = 0.6f,
				    .frequency_penalty = 0.5f };
	static const int32_t prompt[] = { 3, 3, 3 };
	const int32_t *ids;
	const double *pr;
	struct sampler *s = sampler_new(&p, NV);
	int n;

	if (!s) {
		tap_ok(0, "sampler_new (presence/frequency)");
		return;
	}
	sampler_prime(s, prompt, 3);
	tap_ok(sampler_sample(s, L) == 1, "the prompt does not count for presence/frequency: id 1");
	sampler_accept(s, 1);
	/* 2.0 - (1 * 0.5 + 0.6) = 0.9 < id 3's 1.5 */
	tap_ok(sampler_sample(s, L) == 3, "id 1 generated once: 2.0 - 1.1 = 0.9 -> id 3");
	sampler_accept(s, 3);
	sampler_accept(s, 3);
	/* id 3: 1.5 - 1.6 = -0.1, id 1 0.9, id 5 1.0 */
	tap_ok(sampler_sample(s, L) == 5, "id 3 twice: 1.5 - 1.6 = -0.1; id 5 (1.0) beats id 1 (0.9)");
	sampler_free(s);

	/* temp 1: exact probabilities of the penalised logits */
	p.temperature = 1.0f;
	p.presence_penalty = -2.0f;
	p.frequency_penalty = 0.25f;
	s = sampler_new(&p, NV);
	if (s) {
		sampler_accept(s, 6);
		sampler_accept(s, 6);
	}
	n = s ? sampler_dist(s, L, &ids, &pr) : 0;
	{
		float l2[NV];
		double w[NV], got[NV] = { 0 };
		bool ok = n == NV;
		int i;

		memcpy(l2, L, sizeof(l2));
		l2[6] = -3.0f - (2 * 0.25f - 2.0f);	/* -1.5: negative presence raises it */
		softmax_ref(l2, NV, 1.0, w);
		for (i = 0; ok && i < n; i++)
			got[ids[i]] = pr[i];
		for (i = 0; ok && i < NV; i++)
			ok = fabs(got[i] - w[i]) < 1e-12;
		tap_ok(ok, "presence -2, frequency 0.25, id 6 twice: logit -3 -> -1.5 (p %.6f, want %.6f)",
		       got[6], w[6]);
	}
	sampler_free(s);
}

/* The candidates of sampler_dist() are exactly @want (in order) with softmax(l/temp). */
static bool dist_is(struct sampler_params p, const int32_t *want, int n_want)
{
	struct sampler *s = sampler_new(&p, NV);
	const int32_t *ids;
	const double *pr;
	float l2[NV] = { 0 };
	double w[NV];
	bool ok;
	int i, n;

	if (!s)
		return false;
	n = sampler_dist(s, L, &ids, &pr);
	ok = n == n_want;
	for (i = 0; ok && i < n; i++) {
		ok = ids[i] == want[i];
		l2[i] = L[want[i]];
	}
	if (ok)
		softmax_ref(l2, n, p.temperature, w);
	for (i = 0; ok && i < n; i++)
		ok = fabs(pr[i] - w[i]) < 1e-12;
	sampler_free(s);
	return ok;
}

static void test_min_p(void)
{
	struct sampler_params p = { .temperature = 1.0f, .top_p = 1, .min_p = 0.5f };
	static const int32_t two[] = { 1, 3 }, three[] = { 1, 3, 5 }, one[] = { 1 };

	/* max 2.0 + ln 0.5 = 1.307: ids 1 (2.0) and 3 (1.5) */
	tap_ok(dist_is(p, two, 2), "min-p 0.5: ids 1, 3, p = 0.622459 / 0.377541");
	p.min_p = 0.3f;	/* 2.0 + ln 0.3 = 0.796: + id 5 (1.0) */
	tap_ok(dist_is(p, three, 3), "min-p 0.3: ids 1, 3, 5");
	p.min_p = 1.0f;
	tap_ok(dist_is(p, one, 1), "min-p 1: the maximum only");
	/* before temperature (llama.cpp's order): the set does not change at temp 0.5 */
	p.min_p = 0.5f;
	p.temperature = 0.5f;
	tap_ok(dist_is(p, two, 2), "min-p 0.5 at temp 0.5: still ids 1, 3 (min-p before temperature), p = softmax(l / 0.5)");
	/* after top-p: top-p 0.7 keeps 1, 3, 5 (mass 0.770); min-p 0.2 (thr 0.391) keeps all three.
	 * min-p first would keep 1, 3, 5, 0 and top-p 0.7 of those only 1, 3. */
	p.temperature = 1.0f;
	p.top_p = 0.7f;
	p.min_p = 0.2f;
	tap_ok(dist_is(p, three, 3), "top-p 0.7 then min-p 0.2: ids 1, 3, 5 (top-p before min-p)");
	/* after top-k: top-k 2 then min-p 0.1 keeps both */
	p.top_p = 1.0f;
	p.top_k = 2;
	p.min_p = 0.1f;
	tap_ok(dist_is(p, two, 2), "top-k 2 then min-p 0.1: ids 1, 3");
}

/* Default penalties (repeat 1, window 64, min-p 0) draw what the plain sampler draws. */
static void test_defaults_identical(void)
{
	struct sampler_params a = { .temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .seed = 7 };
	struct sampler_params b = a;
	static const int32_t prompt[] = { 1, 3, 1, 5 };
	struct sampler *sa, *sb;
	bool ok;
	int i;

	b.repeat_penalty = 1.0f;
	b.repeat_last_n = 64;
	sa = sampler_new(&a, NV);
	sb = sampler_new(&b, NV);
	ok = sa && sb;
	if (ok)
		sampler_prime(sb, prompt, 4);
	for (i = 0; ok && i < 500; i++) {
		int32_t x = sampler_sample(sa, L), y = sampler_sample(sb, L);

		ok = x == y;
		sampler_accept(sb, y);
	}
	tap_ok(ok, "repeat 1 / window 64 / min-p 0 / no bias: the same 500 draws as before");
	sampler_free(sa);
	sampler_free(sb);
}

int main(void)
{
	test_greedy();
	test_topk1();
	test_seeds();
	test_topp();
	test_freq();
	test_params();
	test_bias();
	test_repeat();
	test_openai_pen();
	test_min_p();
	test_defaults_identical();
	return tap_done();
}
