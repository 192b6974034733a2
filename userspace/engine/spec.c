// SPDX-License-Identifier: MIT
/*
 * Drafters and the acceptance rule of speculative decoding (spec.h).
 */
#include "spec.h"

#include <stddef.h>
#include <string.h>

int spec_parse(const char *name, enum spec_kind *k)
{
	if (!name)
		return -1;
	if (!strcmp(name, "none") || !strcmp(name, "off")) {
		*k = SPEC_NONE;
		return 0;
	}
	if (!strcmp(name, "ngram")) {
		*k = SPEC_NGRAM;
		return 0;
	}
	if (!strcmp(name, "draft")) {
		*k = SPEC_DRAFT;
		return 0;
	}
	if (!strcmp(name, "mtp")) {
		*k = SPEC_MTP;
		return 0;
	}
	return -1;
}

const char *spec_name(enum spec_kind k)
{
	return k == SPEC_NGRAM ? "ngram" : k == SPEC_DRAFT ? "draft" : k == SPEC_MTP ? "mtp" : "none";
}

/* Whether @a and @b hold the same @n tokens. */
static bool same(const int32_t *a, const int32_t *b, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

int spec_ngram_draft(const int32_t *hist, int n_hist, int n_max, int32_t *out)
{
	int n, j, k;

	if (!hist || n_max < 1)
		return 0;
	for (n = SPEC_NGRAM_MAX; n >= SPEC_NGRAM_MIN; n--) {
		const int32_t *suf = hist + n_hist - n;

		if (n >= n_hist)
			continue;
		/* Most recent earlier occurrence first: j + n < n_hist. */
		for (j = n_hist - n - 1; j >= 0; j--) {
			if (!same(hist + j, suf, n))
				continue;
			for (k = 0; k < n_max && j + n + k < n_hist; k++)
				out[k] = hist[j + n + k];
			return k;
		}
	}
	return 0;
}

static int ngram_draft(struct spec_drafter *d, const int32_t *hist, int n_hist, int n_max,
		       const float *hidden, int32_t *out)
{
	(void)d;
	(void)hidden;
	return spec_ngram_draft(hist, n_hist, n_max, out);
}

int spec_drafter_init(struct spec_drafter *d, enum spec_kind kind)
{
	memset(d, 0, sizeof(*d));
	if (kind != SPEC_NGRAM)
		return -1;
	d->kind = kind;
	d->draft = ngram_draft;
	return 0;
}

int spec_accept_greedy(const int32_t *target, const int32_t *draft, int n)
{
	int i;

	for (i = 0; i < n && target[i] == draft[i]; i++)
		;
	return i;
}

int32_t spec_accept_point(const int32_t *ids, const double *probs, int n, int32_t d,
			  double u_acc, double u_res, bool *accepted)
{
	double pd = 0.0, rest, acc = 0.0;
	int i, last = -1;

	for (i = 0; i < n; i++)
		if (ids[i] == d)
			pd += probs[i];
	if (u_acc < pd || pd >= 1.0) {
		*accepted = true;
		return d;
	}
	*accepted = false;
	rest = 0.0;
	for (i = 0; i < n; i++)
		if (ids[i] != d)
			rest += probs[i];
	/* Residual max(0, p - q) with q the point mass on d: p without d. */
	for (i = 0; i < n; i++) {
		if (ids[i] == d || !(probs[i] > 0.0))
			continue;
		last = i;
		acc += probs[i];
		if (u_res * rest < acc)
			return ids[i];
	}
	/* Rounding left u_res past the sum: the last candidate with mass. */
	return last >= 0 ? ids[last] : d;
}

void spec_rng_seed(struct spec_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x853c49e6748fea9bULL;
}

double spec_rng_unit(struct spec_rng *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return (double)((x * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0;
}
