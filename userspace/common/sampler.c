// SPDX-License-Identifier: MIT
/*
 * Token sampler (see sampler.h).
 *
 * The chain, in llama.cpp's order (common/sampling.cpp common_sampler_init()
 * puts the logit-bias sampler first, then the default chain of
 * common/common.h: penalties, dry, top_n_sigma, top_k, typ_p, top_p,
 * min_p, xtc, temperature, then dist; we have no dry, top_n_sigma, typ_p
 * or xtc, so the order is):
 *   0. logit bias: logit += bias (-inf bans), OpenAI's logit_bias;
 *   1. penalties: for a token in the last repeat_last_n tokens (prompt
 *      included, as llama-server feeds its sampler the prompt), a logit
 *      > 0 is divided by repeat_penalty and one <= 0 multiplied
 *      (llama.cpp src/llama-sampling.cpp penalties); then OpenAI's
 *      logit -= frequency_penalty * c + presence_penalty * (c > 0) with c
 *      the token's count in this reply (the OpenAI API reference,
 *      "frequency and presence penalties"; llama.cpp counts c over its
 *      window instead);
 *   greedy when temperature is 0: argmax of those logits, lowest id on ties, NaN
 *      ignored (llama.cpp's temperature 0 keeps only the maximum);
 *   2. top-k: keep the k largest logits (ties: lower id first); k <= 0 or
 *      k >= n_vocab keeps all;
 *   3. top-p (nucleus, Holtzman et al. 2019, "The Curious Case of Neural
 *      Text Degeneration"): softmax of the kept logits (temperature 1),
 *      keep the smallest prefix, in descending order, whose cumulative
 *      probability reaches p (at least one token); p >= 1 keeps all;
 *   4. min-p (Nguyen et al. 2024, "Turning Up the Heat: Min-p Sampling"):
 *      keep the tokens whose logit is >= max + ln(min_p), i.e. whose
 *      probability at temperature 1 is >= min_p times the largest (at
 *      least one); min_p <= 0 keeps all;
 *   5. temperature: softmax(logit / temp) over the kept tokens;
 *   6. draw u in [0, 1) from xorshift64* (Vigna 2016, "An experimental
 *      exploration of Marsaglia's xorshift generators, scrambled") and pick
 *      the first token whose cumulative probability exceeds u.
 * With no bias and no penalty the logits are used as they are (no copy),
 * so the default parameters choose exactly what they chose before steps 0,
 * 1 and 4 existed. The sequence of ids is a pure function of (params,
 * primed tokens, logits sequence).
 */
#include "sampler.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rk1828/util.h"

#define SEED_ZERO_REPLACEMENT 0x9e3779b97f4a7c15ULL

/**
 * struct sampler - one request's sampler
 * @p: parameters (@p.bias points at @bias)
 * @n_vocab: logits per call
 * @state: xorshift64* state
 * @idx: candidate ids, n_vocab
 * @prob: probabilities of the candidates, n_vocab
 * @bias: owned copy of the logit biases
 * @work: biased, penalised logits, n_vocab (NULL: no bias, no penalty)
 * @rcount: occurrences in the repeat window per id (NULL: penalty off)
 * @ring, @ring_pos, @ring_fill: the window's tokens (repeat_last_n > 0)
 * @gcount: occurrences in the reply per id (NULL: presence and
 *	frequency penalties off)
 */
struct sampler {
	struct sampler_params p;
	int n_vocab;
	uint64_t state;
	int32_t *idx;
	double *prob;
	struct sampler_bias *bias;
	float *work;
	uint32_t *rcount;
	int32_t *ring;
	int ring_pos, ring_fill;
	uint32_t *gcount;
};

static bool repeat_on(const struct sampler_params *p)
{
	return p->repeat_penalty > 0.0f && p->repeat_penalty != 1.0f && p->repeat_last_n != 0;
}

static bool openai_pen_on(const struct sampler_params *p)
{
	return p->presence_penalty != 0.0f || p->frequency_penalty != 0.0f;
}

/* The buffers the parameters need (the history ones only when used). */
static int alloc_bufs(struct sampler *s)
{
	size_t n = (size_t)s->n_vocab;

	s->idx = malloc(n * sizeof(*s->idx));
	s->prob = malloc(n * sizeof(*s->prob));
	if (!s->idx || !s->prob)
		return -1;
	if (s->p.n_bias) {
		s->bias = malloc((size_t)s->p.n_bias * sizeof(*s->bias));
		if (!s->bias)
			return -1;
		memcpy(s->bias, s->p.bias, (size_t)s->p.n_bias * sizeof(*s->bias));
	}
	s->p.bias = s->bias;
	if (repeat_on(&s->p)) {
		s->rcount = calloc(n, sizeof(*s->rcount));
		if (!s->rcount)
			return -1;
		if (s->p.repeat_last_n > 0) {
			s->ring = malloc((size_t)s->p.repeat_last_n * sizeof(*s->ring));
			if (!s->ring)
				return -1;
		}
	}
	if (openai_pen_on(&s->p)) {
		s->gcount = calloc(n, sizeof(*s->gcount));
		if (!s->gcount)
			return -1;
	}
	if (s->p.n_bias || s->rcount || s->gcount) {
		s->work = malloc(n * sizeof(*s->work));
		if (!s->work)
			return -1;
	}
	return 0;
}

struct sampler *sampler_new(const struct sampler_params *p, int n_vocab)
{
	struct sampler *s;

	if (n_vocab <= 0 || sampler_params_check(p, n_vocab, NULL, NULL, 0))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->p = *p;
	s->n_vocab = n_vocab;
	s->state = p->seed ? p->seed : SEED_ZERO_REPLACEMENT;
	if (alloc_bufs(s)) {
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
	free(s->bias);
	free(s->work);
	free(s->rcount);
	free(s->ring);
	free(s->gcount);
	free(s);
}

/* @tok enters the repeat window; the oldest leaves when it is full. */
static void window_push(struct sampler *s, int32_t tok)
{
	int w = s->p.repeat_last_n;

	if (!s->rcount || tok < 0 || tok >= s->n_vocab)
		return;
	s->rcount[tok]++;
	if (w < 0)
		return;		/* -1: the whole history, nothing leaves */
	if (s->ring_fill == w)
		s->rcount[s->ring[s->ring_pos]]--;
	else
		s->ring_fill++;
	s->ring[s->ring_pos] = tok;
	s->ring_pos = (s->ring_pos + 1) % w;
}

void sampler_prime(struct sampler *s, const int32_t *toks, int n)
{
	int i;

	if (!s->rcount)
		return;
	/* Only the last repeat_last_n can still be in the window. */
	i = s->p.repeat_last_n > 0 && n > s->p.repeat_last_n ? n - s->p.repeat_last_n : 0;
	for (; i < n; i++)
		window_push(s, toks[i]);
}

void sampler_accept(struct sampler *s, int32_t tok)
{
	window_push(s, tok);
	if (s->gcount && tok >= 0 && tok < s->n_vocab)
		s->gcount[tok]++;
}

/* Steps 0 and 1: the logits the rest of the chain sees. */
static const float *adjusted(struct sampler *s, const float *logits)
{
	float rp = s->p.repeat_penalty;
	float *w = s->work;
	int i;

	if (!w)
		return logits;
	memcpy(w, logits, (size_t)s->n_vocab * sizeof(*w));
	for (i = 0; i < s->p.n_bias; i++)
		w[s->bias[i].id] += s->bias[i].bias;
	if (s->rcount)
		for (i = 0; i < s->n_vocab; i++)
			if (s->rcount[i])
				w[i] = w[i] <= 0.0f ? w[i] * rp : w[i] / rp;
	if (s->gcount)
		for (i = 0; i < s->n_vocab; i++)
			if (s->gcount[i])
				w[i] -= (float)s->gcount[i] * s->p.frequency_penalty +
					s->p.presence_penalty;
	return w;
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
 * O(n log k) time, O(1) extra space. The scan compares each logit with
 * the root's alone: id i is larger than every id in the heap, so on a tie
 * it never ranks before the root (before()), and a NaN compares false as
 * the -inf it counts as.
 */
static int select_top(struct sampler *s, const float *logits, int k)
{
	int32_t *h = s->idx;
	int32_t i;
	float thr;
	int j;

	for (i = 0; i < k; i++)
		h[i] = i;
	for (j = k / 2 - 1; j >= 0; j--)
		sift_down(h, k, j, logits);
	thr = lg(logits, h[0]);
	for (i = k; i < s->n_vocab; i++) {
		if (logits[i] > thr) {
			h[0] = i;
			sift_down(h, k, 0, logits);
			thr = lg(logits, h[0]);
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

/* Step 4: drop the candidates below max + ln(min_p); idx[0] is the max. */
static int min_p_cut(struct sampler *s, const float *logits, int n)
{
	float thr = lg(logits, s->idx[0]) + logf(s->p.min_p);
	int i, j = 1;

	for (i = 1; i < n; i++)
		if (lg(logits, s->idx[i]) >= thr)
			s->idx[j++] = s->idx[i];
	return j;
}

/* Step 3: the shortest best-first prefix whose mass reaches top_p. */
static int top_p_cut(struct sampler *s, const float *logits, int n)
{
	double cum = 0.0;
	int i;

	softmax(logits, s->idx, s->prob, n, 1.0);
	for (i = 0; i < n; i++) {
		cum += s->prob[i];
		if (cum >= s->p.top_p)
			return i + 1;
	}
	return n;
}

/*
 * Steps 0-5: the candidates s->idx[0..n) and their probabilities s->prob.
 * *@drawn is false when the choice needs no random number (greedy, top-k
 * 1, an infinite maximum): then n is 1.
 */
static int chain(struct sampler *s, const float *raw, bool *drawn)
{
	const float *logits = adjusted(s, raw);
	int n = s->n_vocab;
	int k = s->p.top_k;
	int i;

	*drawn = false;
	if (k <= 0 || k > n)
		k = n;
	if (!(s->p.temperature > 0.0f) || k == 1) {
		s->idx[0] = (int32_t)util_argmax(logits, (size_t)n);
		s->prob[0] = 1.0;
		return 1;
	}
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
	/*
	 * idx[0] is util_argmax() either way (NaN as -inf, ties to the lowest
	 * id): an infinite maximum is greedy, one pass over the vocabulary
	 * fewer than testing it first.
	 */
	if (isinf(lg(logits, s->idx[0]))) {
		s->prob[0] = 1.0;
		return 1;
	}
	*drawn = true;
	if (s->p.top_p < 1.0f)
		n = top_p_cut(s, logits, n);
	if (s->p.min_p > 0.0f)
		n = min_p_cut(s, logits, n);
	softmax(logits, s->idx, s->prob, n, s->p.temperature);
	return n;
}

int sampler_dist(struct sampler *s, const float *logits, const int32_t **ids,
		 const double **probs)
{
	bool drawn;
	int n = chain(s, logits, &drawn);

	*ids = s->idx;
	*probs = s->prob;
	return n;
}

int32_t sampler_sample(struct sampler *s, const float *logits)
{
	bool drawn;
	int n = chain(s, logits, &drawn);
	double u, cum = 0.0;
	int i;

	if (!drawn)
		return s->idx[0];
	u = uniform(&s->state);
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
