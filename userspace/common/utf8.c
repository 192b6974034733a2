// SPDX-License-Identifier: MIT
/*
 * UTF-8 decoding, the replacement rule and the piece stream (utf8.h).
 * Well-formed sequences per RFC 3629 section 4 / Unicode table 3-7.
 */
#include "utf8.h"

#include <string.h>

/* Sequence length announced by lead byte @c, 0 when @c cannot lead. */
static size_t lead_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return 2;
	if (c >= 0xe0 && c <= 0xef)
		return 3;
	if (c >= 0xf0 && c <= 0xf4)
		return 4;
	return 0;
}

/* Whether @c may follow lead byte @lead as the second byte. */
static bool second_ok(unsigned char lead, unsigned char c)
{
	switch (lead) {
	case 0xe0: return c >= 0xa0 && c <= 0xbf;	/* no overlongs */
	case 0xed: return c >= 0x80 && c <= 0x9f;	/* no surrogates */
	case 0xf0: return c >= 0x90 && c <= 0xbf;	/* no overlongs */
	case 0xf4: return c >= 0x80 && c <= 0x8f;	/* <= U+10FFFF */
	default: return (c & 0xc0) == 0x80;
	}
}

/*
 * How many leading bytes of @s (at most @n) are a well-formed sequence or
 * a prefix of one; *@need gets the full length (0: @s[0] cannot lead).
 */
static size_t prefix_len(const unsigned char *s, size_t n, size_t *need)
{
	size_t len = lead_len(s[0]), i;

	*need = len;
	if (len <= 1)
		return len;
	for (i = 1; i < len && i < n; i++) {
		if (i == 1 ? !second_ok(s[0], s[1]) : (s[i] & 0xc0) != 0x80)
			return i;
	}
	return i;
}

size_t utf8_valid_len(const char *s, size_t n)
{
	size_t need, ok;

	if (!n)
		return 0;
	ok = prefix_len((const unsigned char *)s, n, &need);
	return need && ok == need ? need : 0;
}

size_t utf8_decode(const char *s, size_t n, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = utf8_valid_len(s, n);

	switch (len) {
	case 1:
		*cp = u[0];
		return 1;
	case 2:
		*cp = (uint32_t)(u[0] & 0x1f) << 6 | (u[1] & 0x3f);
		return 2;
	case 3:
		*cp = (uint32_t)(u[0] & 0x0f) << 12 | (uint32_t)(u[1] & 0x3f) << 6 | (u[2] & 0x3f);
		return 3;
	case 4:
		*cp = (uint32_t)(u[0] & 0x07) << 18 | (uint32_t)(u[1] & 0x3f) << 12 |
		      (uint32_t)(u[2] & 0x3f) << 6 | (u[3] & 0x3f);
		return 4;
	default:
		*cp = 0xfffd;
		return 1;
	}
}

size_t utf8_encode(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp >= 0xd800 && cp <= 0xdfff)
		return 0;
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	if (cp <= 0x10ffff) {
		out[0] = (char)(0xf0 | cp >> 18);
		out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[3] = (char)(0x80 | (cp & 0x3f));
		return 4;
	}
	return 0;
}

size_t utf8_sanitize(const char *s, size_t n, char *out)
{
	size_t i = 0, o = 0;

	while (i < n) {
		size_t len = utf8_valid_len(s + i, n - i);

		if (len) {
			memcpy(out + o, s + i, len);
			o += len;
			i += len;
		} else {
			memcpy(out + o, UTF8_REPLACEMENT, 3);
			o += 3;
			i++;
		}
	}
	return o;
}

bool utf8_is_valid(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t len = utf8_valid_len(s + i, n - i);

		if (!len)
			return false;
		i += len;
	}
	return true;
}

/*
 * Write the complete characters of @s[0..@n); return how many trailing
 * bytes are a prefix of a character that may still complete (0..3).
 */
static size_t emit(const unsigned char *s, size_t n, char *out, size_t *o)
{
	size_t i = 0;

	while (i < n) {
		size_t need, ok = prefix_len(s + i, n - i, &need);

		if (need && ok == need) {
			memcpy(out + *o, s + i, need);
			*o += need;
			i += need;
		} else if (need && i + ok == n) {
			return n - i;	/* cut short by the end of the input */
		} else {
			memcpy(out + *o, UTF8_REPLACEMENT, 3);
			*o += 3;
			i++;
		}
	}
	return 0;
}

size_t utf8_stream_feed(struct utf8_stream *st, const char *in, size_t n, char *out)
{
	size_t o = 0, held;

	if (!n)
		return 0;
	if (st->n_pend) {
		/* The held bytes are a valid prefix of a character of length need. */
		unsigned char head[4];
		size_t need, k, ok, used, i;

		k = (size_t)st->n_pend;
		memcpy(head, st->pend, k);
		need = lead_len(head[0]);
		used = need - k < n ? need - k : n;
		memcpy(head + k, in, used);
		ok = prefix_len(head, k + used, &need);
		if (ok == need) {			/* completed */
			memcpy(out, head, need);
			o = need;
		} else if (ok == k + used) {		/* still a prefix: all of @in used */
			memcpy(st->pend, head, ok);
			st->n_pend = (int)ok;
			return 0;
		} else {
			/*
			 * Broken at head[ok]: the lead and the continuation bytes
			 * before the break are each replaced, decoding resumes at
			 * the breaking byte.
			 */
			for (i = 0; i < ok; i++, o += 3)
				memcpy(out + o, UTF8_REPLACEMENT, 3);
			used = ok - k;
		}
		st->n_pend = 0;
		in += used;
		n -= used;
	}
	held = emit((const unsigned char *)in, n, out, &o);
	memcpy(st->pend, in + n - held, held);
	st->n_pend = (int)held;
	return o;
}

size_t utf8_stream_flush(struct utf8_stream *st, char *out)
{
	size_t o = 0;
	int i;

	for (i = 0; i < st->n_pend; i++, o += 3)
		memcpy(out + o, UTF8_REPLACEMENT, 3);
	st->n_pend = 0;
	return o;
}
