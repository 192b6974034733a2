// SPDX-License-Identifier: MIT
/*
 * UTF-8 helpers (utf8.h): strict decoding, the replacement rule, and the
 * piece stream that never emits half a character.
 */
#include "utf8.h"

#include <stdio.h>
#include <string.h>

#include "tap.h"

static void test_decode(void)
{
	static const struct { const char *s; size_t n; size_t len; uint32_t cp; } c[] = {
		{ "A", 1, 1, 'A' },
		{ "\xc3\xa9", 2, 2, 0xe9 },
		{ "\xe2\x82\xac", 3, 3, 0x20ac },
		{ "\xf0\x9f\x98\x80", 4, 4, 0x1f600 },
		{ "\xf4\x8f\xbf\xbf", 4, 4, 0x10ffff },
		{ "\x80", 1, 1, 0xfffd },		/* stray continuation */
		{ "\xc0\x80", 2, 1, 0xfffd },		/* overlong NUL */
		{ "\xe0\x80\x80", 3, 1, 0xfffd },	/* overlong */
		{ "\xed\xa0\x80", 3, 1, 0xfffd },	/* surrogate D800 */
		{ "\xf4\x90\x80\x80", 4, 1, 0xfffd },	/* > U+10FFFF */
		{ "\xf7\xbf\xbf\xbf", 4, 1, 0xfffd },	/* llama.cpp throws here */
		{ "\xe2\x82", 2, 1, 0xfffd },		/* truncated */
		{ "\xff", 1, 1, 0xfffd },
	};
	size_t i, bad = 0;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint32_t cp;
		size_t k = utf8_decode(c[i].s, c[i].n, &cp);

		if (k != c[i].len || cp != c[i].cp) {
			printf("# case %zu: %zu bytes, U+%04X\n", i, k, cp);
			bad++;
		}
	}
	tap_ok(!bad, "utf8_decode: 13 well-formed and malformed cases");
}

static void test_sanitize(void)
{
	char out[64];
	size_t n;

	n = utf8_sanitize("a\xff" "b\xe2\x82" "c\xc3\xa9", 8, out);
	tap_ok(n == 14 && !memcmp(out, "a" UTF8_REPLACEMENT "b" UTF8_REPLACEMENT
				  UTF8_REPLACEMENT "c\xc3\xa9", 14),
	       "sanitize: each invalid byte -> U+FFFD, valid text unchanged (%zu bytes)", n);
	tap_ok(utf8_is_valid("caf\xc3\xa9", 5) && !utf8_is_valid("\xed\xa0\x80", 3),
	       "utf8_is_valid accepts 'café', rejects a surrogate");
}

/* Feed @s one byte at a time; return the concatenated output. */
static size_t feed_bytes(const char *s, size_t n, char *out, bool *half)
{
	struct utf8_stream st = { 0 };
	size_t o = 0, i;

	*half = false;
	for (i = 0; i < n; i++) {
		size_t k = utf8_stream_feed(&st, s + i, 1, out + o);

		/* Every chunk written must be whole characters on its own. */
		if (!utf8_is_valid(out + o, k))
			*half = true;
		o += k;
	}
	return o + utf8_stream_flush(&st, out + o);
}

static void test_stream(void)
{
	const char *text = "h\xc3\xa9llo \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80!";
	char out[128], buf[64];
	struct utf8_stream st = { 0 };
	size_t n, k;
	bool half;

	n = feed_bytes(text, strlen(text), out, &half);
	tap_ok(n == strlen(text) && !memcmp(out, text, n) && !half,
	       "stream: byte-by-byte feed gives the text back, whole characters only");

	/* A character split over two pieces comes out once complete. */
	k = utf8_stream_feed(&st, "a\xe4\xb8", 3, buf);
	tap_ok(k == 1 && buf[0] == 'a' && utf8_stream_pending(&st) == 2,
	       "stream: 'a' + half of U+4E2D -> 'a', 2 bytes held");
	k = utf8_stream_feed(&st, "\xad" "b", 2, buf);
	tap_ok(k == 4 && !memcmp(buf, "\xe4\xb8\xad" "b", 4) && !utf8_stream_pending(&st),
	       "stream: the last byte completes it");

	/* A broken sequence: replaced as soon as it cannot complete. */
	k = utf8_stream_feed(&st, "\xe4\xb8", 2, buf);
	k = utf8_stream_feed(&st, "x", 1, buf);
	tap_ok(k == 7 && !memcmp(buf, UTF8_REPLACEMENT UTF8_REPLACEMENT "x", 7),
	       "stream: E4 B8 then 'x' -> U+FFFD U+FFFD 'x' (%zu bytes)", k);
	k = utf8_stream_feed(&st, "\xf0\x9f", 2, buf);
	k += utf8_stream_flush(&st, buf + k);
	tap_ok(k == 6 && !memcmp(buf, UTF8_REPLACEMENT UTF8_REPLACEMENT, 6),
	       "stream: a held tail is flushed as U+FFFD per byte");
	k = utf8_stream_feed(&st, "\xff\x80", 2, buf);
	tap_ok(k == 6 && !utf8_stream_pending(&st), "stream: FF 80 replaced at once");
	k = utf8_stream_feed(&st, "\xed", 1, buf);
	k += utf8_stream_feed(&st, "\xa0\x80", 2, buf + k);
	tap_ok(k == 9 && utf8_is_valid(buf, k),
	       "stream: a surrogate split over feeds -> 3 x U+FFFD (%zu bytes)", k);
}

int main(void)
{
	test_decode();
	test_sanitize();
	test_stream();
	return tap_done();
}
