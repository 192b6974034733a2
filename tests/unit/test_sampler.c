// SPDX-License-Identifier: MIT
/*
 * Sampler tests: greedy and its ties, top-k = 1, determinism per seed,
 * top-p, and empirical frequencies against softmax (temperature 1 and 0.5,
 * top-k 2, top-p 0.7) over 20000 draws.
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
		.temp = temp, .top_k = top_k, .top_p = top_p, .seed = seed,
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

	if (!s || !z) {
		tap_ok(0, "sampler_new (top-p)");
		goto out;
	}
	for (i = 0; i < 500; i++)
		ok &= sampler_sample(s, L) == 1 && sampler_sample(z, L) == 1;
	tap_ok(ok, "top-p 1e-6 and 0 -> argmax over 500 draws");
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
	struct sampler_params p = { .temp = NAN, .top_k = 0, .top_p = 1.0f };
	float big[3] = { -INFINITY, INFINITY, 0.0f };
	struct sampler *s;

	tap_ok(sampler_new(&p, 10) == NULL, "NaN temperature refused");
	p.temp = 1.0f;
	tap_ok(sampler_new(&p, 0) == NULL, "n_vocab 0 refused");
	s = sampler_new(&p, 3);
	tap_ok(s && sampler_sample(s, big) == 1, "+inf logit is always picked");
	sampler_free(s);
}

int main(void)
{
	test_greedy();
	test_topk1();
	test_seeds();
	test_topp();
	test_freq();
	test_params();
	return tap_done();
}
