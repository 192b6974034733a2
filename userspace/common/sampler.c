// SPDX-License-Identifier: MIT
/*
 * Token sampler (see sampler.h).
 *
 * Greedy when temp <= 0: argmax, lowest id on ties, NaN logits ignored.
 * Otherwise, in llama.cpp's default order (common/sampling.cpp chain
 * top_k -> top_p -> temperature -> dist, src/llama-sampling.cpp):
 *   1. top-k: keep the k largest logits (ties: lower id first); k <= 0 or
 *      k >= n_vocab keeps all;
 *   2. top-p (nucleus, Holtzman et al. 2019, "The Curious Case of Neural
 *      Text Degeneration"): softmax of the kept logits (temperature 1),
 *      keep the smallest prefix, in descending order, whose cumulative
 *      probability reaches p (at least one token); p >= 1 keeps all;
 *   3. temperature: softmax(logit / temp) over the kept tokens;
 *   4. draw u in [0, 1) from xorshift64* (Vigna 2016, "An experimental
 *      exploration of Marsaglia's xorshift generators, scrambled") and pick
 *      the first token whose cumulative probability exceeds u.
 * The sequence of ids is a pure function of (params, logits sequence).
 */
#include "sampler.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "rk1828/util.h"

#define SEED_ZERO_REPLACEMENT 0x9e3779b97f4a7c15ULL

struct sampler {
	struct sampler_params p;
	int n_vocab;
	uint64_t state;
	int32_t *idx;		/* candidate ids, n_vocab */
	double *prob;		/* probabilities of the candidates, n_vocab */
};

struct sampler *sampler_new(const struct sampler_params *p, int n_vocab)
{
	struct sampler *s;

	if (!p || n_vocab <= 0 || isnan(p->temp) || isnan(p->top_p))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->p = *p;
	s->n_vocab = n_vocab;
	s->state = p->seed ? p->seed : SEED_ZERO_REPLACEMENT;
	s->idx = malloc((size_t)n_vocab * sizeof(*s->idx));
	s->prob = malloc((size_t)n_vocab * sizeof(*s->prob));
	if (!s->idx || !s->prob) {
		sampler_free(s);
		return NULL;
	}
	return s;
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	free(s->idx);
	free(s->prob);
	free(s);
}

static uint64_t xorshift64s(uint64_t *st)
{
	uint64_t x = *st;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*st = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Uniform double in [0, 1) from the top 53 bits. */
static double uniform(uint64_t *st)
{
	return (double)(xorshift64s(st) >> 11) * (1.0 / 9007199254740992.0);
}

/* NaN counts as -inf so it is never preferred. */
static float lg(const float *logits, int32_t id)
{
	float v = logits[id];

	return isnan(v) ? -INFINITY : v;
}

/* a ranks before b: larger logit, then lower id. */
static bool before(const float *logits, int32_t a, int32_t b)
{
	float la = lg(logits, a), lb = lg(logits, b);

	if (la != lb)
		return la > lb;
	return a < b;
}

/* Min-heap on rank (worst candidate at the root) for top-k selection. */
static void sift_down(int32_t *h, int n, int i, const float *logits)
{
	for (;;) {
		int c = 2 * i + 1;
		int32_t tmp;

		if (c >= n)
			return;
		/* pick the worse child */
		if (c + 1 < n && before(logits, h[c], h[c + 1]))
			c++;
		if (!before(logits, h[i], h[c]))
			return;
		tmp = h[i];
		h[i] = h[c];
		h[c] = tmp;
		i = c;
	}
}

/* Heap sort h[0..n) into best-first order (h is a worst-root heap). */
static void heap_sort_best_first(int32_t *h, int n, const float *logits)
{
	int end;

	for (end = n - 1; end > 0; end--) {
		int32_t tmp = h[0];

		h[0] = h[end];
		h[end] = tmp;
		sift_down(h, end, 0, logits);
	}
}

/*
 * Fill s->idx with the k best ids, best first. Uses a size-k heap:
 * O(n log k) time, O(1) extra space.
 */
static int select_top(struct sampler *s, const float *logits, int k)
{
	int32_t *h = s->idx;
	int32_t i;
	int j;

	for (i = 0; i < k; i++)
		h[i] = i;
	for (j = k / 2 - 1; j >= 0; j--)
		sift_down(h, k, j, logits);
	for (i = k; i < s->n_vocab; i++) {
		if (before(logits, i, h[0])) {
			h[0] = i;
			sift_down(h, k, 0, logits);
		}
	}
	heap_sort_best_first(h, k, logits);
	return k;
}

/* Softmax of logits[idx[0..n)] / temp into prob[]; idx[0] is the max. */
static void softmax(const float *logits, const int32_t *idx, double *prob,
		    int n, double temp)
{
	double max = lg(logits, idx[0]);
	double sum = 0.0;
	int i;

	for (i = 0; i < n; i++) {
		double l = lg(logits, idx[i]);

		prob[i] = isinf(l) && l < 0 ? 0.0 : exp((l - max) / temp);
		sum += prob[i];
	}
	for (i = 0; i < n; i++)
		prob[i] /= sum;
}

int32_t sampler_sample(struct sampler *s, const float *logits)
{
	int n = s->n_vocab;
	int k = s->p.top_k;
	double u, cum;
	int i;

	if (!(s->p.temp > 0.0f))
		return (int32_t)util_argmax(logits, (size_t)n);
	if (k <= 0 || k > n)
		k = n;
	if (k == 1 || isinf(lg(logits, (int32_t)util_argmax(logits, (size_t)n))))
		return (int32_t)util_argmax(logits, (size_t)n);
	/*
	 * Sorting is only needed when top-k cuts or top-p is on; otherwise the
	 * identity order is fine (the softmax shift uses the true maximum).
	 */
	if (k < n || s->p.top_p < 1.0f) {
		n = select_top(s, logits, k);
	} else {
		for (i = 0; i < n; i++)
			s->idx[i] = i;
		/* put the max first for the softmax shift */
		i = (int32_t)util_argmax(logits, (size_t)n);
		s->idx[0] = i;
		s->idx[i] = 0;
	}
	if (s->p.top_p < 1.0f) {
		softmax(logits, s->idx, s->prob, n, 1.0);
		cum = 0.0;
		for (i = 0; i < n; i++) {
			cum += s->prob[i];
			if (cum >= s->p.top_p) {
				n = i + 1;
				break;
			}
		}
	}
	softmax(logits, s->idx, s->prob, n, s->p.temp);
	u = uniform(&s->state);
	cum = 0.0;
	for (i = 0; i < n; i++) {
		cum += s->prob[i];
		if (u < cum)
			return s->idx[i];
	}
	/* u within rounding of 1: the last token with non-zero probability. */
	for (i = n - 1; i > 0 && s->prob[i] == 0.0; i--)
		;
	return s->idx[i];
}
