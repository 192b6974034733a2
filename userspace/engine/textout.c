// SPDX-License-Identifier: MIT
/*
 * Streamed completion text (see textout.h): an incremental UTF-8 decoder
 * with U+FFFD substitution of maximal subparts (The Unicode Standard 15.0,
 * section 3.9, table 3-7 "Well-Formed UTF-8 Byte Sequences"), stop-string
 * search over the text not yet released, and hold-back of a tail that is a
 * proper prefix of a stop string.
 */
#include "textout.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char REPLACEMENT[3] = { (char)0xef, (char)0xbf, (char)0xbd };

/* Allowed range of the second byte after lead byte @b (table 3-7). */
static void second_range(unsigned char b, unsigned char *lo, unsigned char *hi)
{
	*lo = 0x80;
	*hi = 0xbf;
	if (b == 0xe0)
		*lo = 0xa0;
	else if (b == 0xed)
		*hi = 0x9f;
	else if (b == 0xf0)
		*lo = 0x90;
	else if (b == 0xf4)
		*hi = 0x8f;
}

/* Sequence length announced by lead byte @b; 0: not a valid lead byte. */
static int lead_len(unsigned char b)
{
	if (b < 0x80)
		return 1;
	if (b >= 0xc2 && b <= 0xdf)
		return 2;
	if (b >= 0xe0 && b <= 0xef)
		return 3;
	if (b >= 0xf0 && b <= 0xf4)
		return 4;
	return 0;
}

/* Whether @c may follow the @n bytes of @seq (n >= 1). */
static bool cont_ok(const unsigned char *seq, int n, unsigned char c)
{
	unsigned char lo = 0x80, hi = 0xbf;

	if (n == 1)
		second_range(seq[0], &lo, &hi);
	return c >= lo && c <= hi;
}

bool txo_utf8_valid(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		int n = lead_len(u[i]), j;

		if (!n || i + n > len)
			return false;
		for (j = 1; j < n; j++)
			if (!cont_ok(u + i, j, u[i + j]))
				return false;
		i += n;
	}
	return true;
}

int txo_init(struct txo *t, const char *const *stop, int n_stop)
{
	int i;

	memset(t, 0, sizeof(*t));
	t->stop_hit = -1;
	if (n_stop < 0 || n_stop > TXO_MAX_STOP || (n_stop && !stop))
		return -EINVAL;
	for (i = 0; i < n_stop; i++) {
		size_t n = stop[i] ? strlen(stop[i]) : 0;

		if (!n || n > TXO_MAX_STOP_LEN || !txo_utf8_valid(stop[i], n)) {
			txo_free(t);
			return -EINVAL;
		}
		t->stop[i] = strdup(stop[i]);
		if (!t->stop[i]) {
			txo_free(t);
			return -ENOMEM;
		}
		t->stop_len[i] = n;
		t->n_stop = i + 1;
		if (n > t->max_stop)
			t->max_stop = n;
	}
	return 0;
}

void txo_free(struct txo *t)
{
	int i;

	for (i = 0; i < t->n_stop; i++)
		free(t->stop[i]);
	free(t->pend);
	free(t->toks);
	memset(t, 0, sizeof(*t));
}

/* Drop what the previous delta handed out. */
static void forget_released(struct txo *t)
{
	if (t->rel_text) {
		memmove(t->pend, t->pend + t->rel_text, t->n_pend - t->rel_text);
		t->n_pend -= t->rel_text;
		t->sent += t->rel_text;
		t->rel_text = 0;
	}
	if (t->rel_toks) {
		memmove(t->toks, t->toks + t->rel_toks,
			(size_t)(t->n_toks - t->rel_toks) * sizeof(*t->toks));
		t->n_toks -= t->rel_toks;
		t->rel_toks = 0;
	}
}

static int emit(struct txo *t, const void *b, size_t n)
{
	if (t->n_pend + n > t->cap_pend) {
		size_t cap = t->cap_pend ? t->cap_pend : 64;
		char *p;

		while (cap < t->n_pend + n)
			cap *= 2;
		p = realloc(t->pend, cap);
		if (!p)
			return -ENOMEM;
		t->pend = p;
		t->cap_pend = cap;
	}
	memcpy(t->pend + t->n_pend, b, n);
	t->n_pend += n;
	return 0;
}

/* Tokens whose raw bytes are all decoded get their decoded end offset. */
static void settle_tokens(struct txo *t)
{
	int i;

	if (t->n_utf)
		return;
	for (i = t->n_toks - 1; i >= 0 && t->toks[i].end < 0; i--)
		;
	for (i++; i < t->n_toks && t->toks[i].raw_end <= t->raw; i++)
		t->toks[i].end = (int64_t)(t->sent + t->n_pend);
}

/* Decode one byte into @t->pend. */
static int feed_byte(struct txo *t, unsigned char c)
{
	int ret = 0;

	t->raw++;
	if (t->n_utf) {
		if (cont_ok(t->utf, t->n_utf, c)) {
			t->utf[t->n_utf++] = c;
			if (t->n_utf == t->need_utf) {
				ret = emit(t, t->utf, t->n_utf);
				t->n_utf = 0;
			}
			return ret;
		}
		/* The collected bytes are a maximal invalid subpart. */
		t->n_utf = 0;
		ret = emit(t, REPLACEMENT, sizeof(REPLACEMENT));
		if (ret)
			return ret;
	}
	switch (lead_len(c)) {
	case 0:
		return emit(t, REPLACEMENT, sizeof(REPLACEMENT));
	case 1:
		return emit(t, &c, 1);
	default:
		t->utf[0] = c;
		t->n_utf = 1;
		t->need_utf = lead_len(c);
		return 0;
	}
}

/* Earliest start of a stop string in @t->pend, or -1; @which: its index. */
static long find_stop(const struct txo *t, int *which)
{
	long best = -1;
	int i;

	for (i = 0; i < t->n_stop; i++) {
		const char *p = memmem(t->pend, t->n_pend, t->stop[i], t->stop_len[i]);

		if (p && (best < 0 || p - t->pend < best)) {
			best = p - t->pend;
			*which = i;
		}
	}
	return best;
}

/* Longest tail of @t->pend that is a proper prefix of a stop string. */
static size_t hold_len(const struct txo *t)
{
	size_t best = 0, k;
	int i;

	for (i = 0; i < t->n_stop; i++) {
		size_t max = t->stop_len[i] - 1;

		if (max > t->n_pend)
			max = t->n_pend;
		for (k = max; k > best; k--) {
			if (!memcmp(t->pend + t->n_pend - k, t->stop[i], k)) {
				best = k;
				break;
			}
		}
	}
	return best;
}

/* Hand out @n bytes of @t->pend and the tokens they complete. */
static void release(struct txo *t, size_t n, struct txo_delta *d)
{
	int64_t end = (int64_t)(t->sent + n);
	int k = 0;

	while (k < t->n_toks && t->toks[k].end >= 0 && t->toks[k].end <= end)
		k++;
	d->text = t->pend;
	d->len = n;
	d->done = t->toks;
	d->n_done = k;
	t->rel_text = n;
	t->rel_toks = k;
}

int txo_push(struct txo *t, int32_t id, const char *piece, size_t len, struct txo_delta *d)
{
	struct txo_tok *tk;
	size_t i;
	long at;
	int ret;

	forget_released(t);
	memset(d, 0, sizeof(*d));
	if (t->stopped)
		return 0;
	if (t->n_toks == t->cap_toks) {
		int cap = t->cap_toks ? 2 * t->cap_toks : 16;
		struct txo_tok *p = realloc(t->toks, (size_t)cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->toks = p;
		t->cap_toks = cap;
	}
	tk = &t->toks[t->n_toks++];
	tk->id = id;
	tk->idx = t->n_fed++;
	tk->raw_end = t->raw + len;
	tk->end = -1;
	settle_tokens(t);	/* an empty piece after complete text */
	for (i = 0; i < len; i++) {
		ret = feed_byte(t, (unsigned char)piece[i]);
		if (ret)
			return ret;
		settle_tokens(t);
	}
	at = find_stop(t, &t->stop_hit);
	if (at >= 0) {
		t->stopped = true;
		release(t, (size_t)at, d);
		d->stopped = true;
		return 0;
	}
	release(t, t->n_pend - hold_len(t), d);
	return 0;
}

void txo_finish(struct txo *t, struct txo_delta *d)
{
	int i;

	forget_released(t);
	memset(d, 0, sizeof(*d));
	if (t->stopped)
		return;
	/* An incomplete final character is dropped; its tokens complete. */
	t->n_utf = 0;
	for (i = 0; i < t->n_toks; i++)
		if (t->toks[i].end < 0)
			t->toks[i].end = (int64_t)(t->sent + t->n_pend);
	release(t, t->n_pend, d);
	t->stopped = true;
}
