// SPDX-License-Identifier: MIT
/*
 * Streamed text tests (userspace/engine/textout.c): UTF-8 characters split
 * across tokens are released whole; invalid bytes become U+FFFD per
 * maximal subpart; stop strings across token boundaries are held back,
 * cut and never sent; a held prefix that does not become a stop string is
 * released; the concatenation of the deltas equals the whole text cut at
 * the stop; tokens complete with the delta that sends their last byte.
 * Output: TAP.
 */
#include "textout.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

/* What a run produced: the deltas in order and the completed tokens. */
struct run {
	char text[512];
	size_t len;
	char deltas[32][64];	/* each delta's text */
	int n_deltas;
	int done[64];		/* completed token indices, in order */
	int n_done;
	int done_at[64];	/* push number that completed each */
	bool stopped;
	bool valid;		/* every delta was valid UTF-8 */
	int stop_hit;		/* struct txo.stop_hit at the end */
};

static void take(struct run *r, const struct txo_delta *d, int push)
{
	int i;

	memcpy(r->text + r->len, d->text, d->len);
	r->len += d->len;
	r->text[r->len] = 0;
	if (d->len && r->n_deltas < 32) {
		snprintf(r->deltas[r->n_deltas++], 64, "%.*s", (int)d->len, d->text);
		if (!txo_utf8_valid(d->text, d->len))
			r->valid = false;
	}
	for (i = 0; i < d->n_done; i++) {
		r->done_at[r->n_done] = push;
		r->done[r->n_done++] = d->done[i].idx;
	}
	if (d->stopped)
		r->stopped = true;
}

/* Feed @n pieces (NULL-terminated list semantics via n), with stops. */
static void feed(struct run *r, const char *const *stops, int n_stop,
		 const char *const *pieces, int n, bool finish)
{
	struct txo t;
	struct txo_delta d;
	int i;

	memset(r, 0, sizeof(*r));
	r->valid = true;
	if (txo_init(&t, stops, n_stop)) {
		r->valid = false;
		return;
	}
	for (i = 0; i < n; i++) {
		txo_push(&t, 100 + i, pieces[i], strlen(pieces[i]), &d);
		take(r, &d, i);
	}
	if (finish) {
		txo_finish(&t, &d);
		take(r, &d, n);
	}
	r->stop_hit = t.stop_hit;
	txo_free(&t);
}

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void test_utf8(void)
{
	struct run r;
	/* "é" = c3 a9 split over two tokens, "€" = e2 82 ac over three. */
	const char *p1[] = { "caf\xc3", "\xa9 ", "\xe2", "\x82", "\xac!" };
	const char *p2[] = { "a\x80", "b\xc3(", "\xe0\x80", "z\xf0\x9f\x98" };
	const char *p3[] = { "ok \xf0\x9f", "\x98" };

	feed(&r, NULL, 0, p1, N(p1), true);
	tap_ok(!strcmp(r.text, "caf\xc3\xa9 \xe2\x82\xac!"), "utf8: split characters reassemble");
	tap_ok(r.valid, "utf8: every delta is valid UTF-8");
	tap_ok(r.n_deltas == 3 && !strcmp(r.deltas[0], "caf") &&
	       !strcmp(r.deltas[1], "\xc3\xa9 ") && !strcmp(r.deltas[2], "\xe2\x82\xac!"),
	       "utf8: deltas break only between characters (%d deltas)", r.n_deltas);
	tap_ok(r.n_done == 5 && r.done_at[0] == 1 && r.done_at[1] == 1 && r.done_at[2] == 4 &&
	       r.done_at[3] == 4 && r.done_at[4] == 4,
	       "utf8: a token completes when its last byte is sent");

	feed(&r, NULL, 0, p2, N(p2), true);
	/* 80 -> FFFD; c3 '(' -> FFFD '('; e0 80 -> FFFD FFFD (80 invalid after e0);
	 * f0 9f 98 at the end: incomplete, dropped. */
	tap_ok(!strcmp(r.text, "a\xef\xbf\xbd" "b\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbdz"),
	       "utf8: invalid bytes become U+FFFD per maximal subpart (got %zu bytes)", r.len);
	tap_ok(r.valid, "utf8: replaced output is valid UTF-8");
	tap_ok(r.n_done == 4, "utf8: the token of a dropped final character still completes");

	feed(&r, NULL, 0, p3, N(p3), true);
	tap_ok(!strcmp(r.text, "ok "), "utf8: incomplete character at the token limit dropped");

	tap_ok(txo_utf8_valid("\xf4\x8f\xbf\xbf", 4) && !txo_utf8_valid("\xf4\x90\x80\x80", 4) &&
	       !txo_utf8_valid("\xed\xa0\x80", 3) && !txo_utf8_valid("\xc0\xaf", 2) &&
	       !txo_utf8_valid("\xe2\x82", 2),
	       "utf8: validator refuses > U+10FFFF, surrogates, overlong, truncated");
}

static void test_stop(void)
{
	struct run r;
	const char *stops[] = { "\n\nUser:", "END" };
	const char *p1[] = { "Hello", " wor", "ld.\n", "\nUs", "er:", " more" };
	const char *p2[] = { "A\n", "\nB", " E", "N", "X" };
	const char *p3[] = { "xEN", "D tail" };
	const char *p4[] = { "one\n\nUs" };
	const char *p5[] = { "ENEND" };

	feed(&r, stops, 2, p1, N(p1), false);
	tap_ok(r.stopped && !strcmp(r.text, "Hello world."),
	       "stop: across three tokens, cut before it (\"%s\")", r.text);
	tap_ok(r.n_done == 2 && r.done[0] == 0 && r.done[1] == 1,
	       "stop: tokens reaching into the stop string do not complete (%d)", r.n_done);
	{
		bool no_stop_text = true;
		int i;

		for (i = 0; i < r.n_deltas; i++)
			if (strchr(r.deltas[i], '\n') || strstr(r.deltas[i], "User"))
				no_stop_text = false;
		tap_ok(no_stop_text, "stop: no delta contains any part of the stop string");
	}

	feed(&r, stops, 2, p2, N(p2), true);
	tap_ok(!r.stopped && !strcmp(r.text, "A\n\nB ENX"),
	       "stop: held prefixes that do not become a stop are released (\"%s\")", r.text);
	tap_ok(r.n_deltas >= 2 && !strcmp(r.deltas[0], "A"),
	       "stop: the possible stop start is held back (first delta \"%s\")", r.deltas[0]);
	tap_ok(r.n_done == 5, "stop: all tokens complete without a stop");

	feed(&r, stops, 2, p3, N(p3), true);
	tap_ok(r.stopped && !strcmp(r.text, "x"), "stop: stop completed by the next token");

	feed(&r, stops, 2, p4, N(p4), true);
	tap_ok(!r.stopped && !strcmp(r.text, "one\n\nUs"),
	       "stop: partial stop at the end is flushed by finish");

	feed(&r, stops, 2, p5, N(p5), false);
	tap_ok(r.stopped && !strcmp(r.text, "EN"), "stop: overlapping candidate, earliest match");
	{
		struct txo t;
		const char *bad1[] = { "" };
		const char *bad2[] = { "\xff" };
		const char *five[] = { "a", "b", "c", "d", "e" };

		tap_ok(txo_init(&t, bad1, 1) == -EINVAL && txo_init(&t, bad2, 1) == -EINVAL &&
		       txo_init(&t, five, 5) == -EINVAL,
		       "stop: empty, non-UTF-8 and more than 4 stop strings refused");
	}
}

/* Concatenation equals the non-streamed result for every split point. */
/* Which stop string ended the text: the earliest found, not the first listed. */
static void test_stop_hit(void)
{
	static const char *const stops[] = { "zz", "b c" };
	static const char *const p1[] = { "a b", " c zz" };
	static const char *const p2[] = { "a zz", " b c" };
	static const char *const p3[] = { "a b", " d" };
	struct run r;

	feed(&r, stops, 2, p1, N(p1), false);
	tap_ok(r.stopped && r.stop_hit == 1 && !strcmp(r.text, "a "),
	       "\"b c\" (stop 1) comes before \"zz\" in the text: stop_hit 1, text \"%s\"", r.text);
	feed(&r, stops, 2, p2, N(p2), false);
	tap_ok(r.stopped && r.stop_hit == 0 && !strcmp(r.text, "a "), "\"zz\" first: stop_hit 0");
	feed(&r, stops, 2, p3, N(p3), true);
	tap_ok(r.stop_hit == -1 && !strcmp(r.text, "a b d"),
	       "no stop string in the text: stop_hit -1 after the finish");
}

static void test_splits(void)
{
	const char *full = "The cat sat.\nEND of story";
	const char *stops[] = { "\nEND" };
	size_t n = strlen(full), a, b;
	bool all = true;

	for (a = 1; a < n; a++) {
		for (b = a; b < n; b++) {
			char p0[64], p1[64], p2[64];
			const char *ps[] = { p0, p1, p2 };
			struct run r;

			snprintf(p0, sizeof(p0), "%.*s", (int)a, full);
			snprintf(p1, sizeof(p1), "%.*s", (int)(b - a), full + a);
			snprintf(p2, sizeof(p2), "%s", full + b);
			feed(&r, stops, 1, ps, 3, true);
			if (!r.stopped || strcmp(r.text, "The cat sat."))
				all = false;
		}
	}
	tap_ok(all, "stop: every split of the text into 3 tokens gives the same cut text");
}

int main(void)
{
	test_utf8();
	test_stop();
	test_splits();
	test_stop_hit();
	return tap_done();
}
