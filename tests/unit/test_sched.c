// SPDX-License-Identifier: MIT
/*
 * Scheduler tests (userspace/engine/scheduler.c): the prefix-cache slot choice
 * (longest common prefix, LRU tie-break, at least the last prompt token
 * re-evaluated, a shorter prompt sharing a cached prefix, busy slots
 * skipped) and micro-batch building (decode groups of ceil(S / N), oldest
 * ready first, prefill chunks of at most a bucket in admission order,
 * positions, slots and the logits flag of the last prompt token, decode
 * never starved by a long prompt, the token limit of a micro-batch while
 * sessions decode, decode tokens included), the limit sched_mb_limit()
 * and the fit of F / T from measured times (sched_cost_*). Output: TAP.
 */
#include "scheduler.h"

#include <string.h>

#include "tap.h"

static int32_t rec[4][64];

static void set_slot(struct sched_slot *s, int i, const int32_t *t, int n, uint64_t used,
		     bool busy)
{
	memcpy(rec[i], t, (size_t)n * sizeof(*t));
	s->toks = rec[i];
	s->n_toks = n;
	s->last_used = used;
	s->busy = busy;
	s->kv_type = 0;		/* QUANT_TYPE_F32 */
}

static void test_pick(void)
{
	struct sched_slot sl[4];
	const int32_t a[] = { 1, 10, 11, 12, 13, 14 };
	const int32_t b[] = { 1, 20, 21 };
	const int32_t c[] = { 1, 10, 11, 30 };
	int reuse, s;

	set_slot(&sl[0], 0, a, 6, 5, false);
	set_slot(&sl[1], 1, b, 3, 1, false);
	set_slot(&sl[2], 2, c, 4, 2, false);
	set_slot(&sl[3], 3, NULL, 0, 0, false);
	{
		const int32_t p[] = { 1, 10, 11, 12, 99 };

		s = sched_pick_slot(sl, 4, p, 5, 0, &reuse);
		tap_ok(s == 0 && reuse == 4, "pick: longest common prefix wins (slot %d, reuse %d)",
		       s, reuse);
	}
	{
		const int32_t p[] = { 1, 10, 11, 12, 13, 14 };

		s = sched_pick_slot(sl, 4, p, 6, 0, &reuse);
		tap_ok(s == 0 && reuse == 5, "pick: identical prompt re-evaluates its last token (reuse %d)",
		       reuse);
	}
	{
		const int32_t p[] = { 1, 10, 11 };

		s = sched_pick_slot(sl, 4, p, 3, 0, &reuse);
		tap_ok((s == 0 || s == 2) && reuse == 2,
		       "pick: shorter prompt sharing a cached prefix reuses n_prompt - 1 (reuse %d)", reuse);
		tap_ok(s == 2, "pick: equal prefixes go to the least recently used slot (slot %d)", s);
	}
	{
		const int32_t p[] = { 7, 8 };

		s = sched_pick_slot(sl, 4, p, 2, 0, &reuse);
		tap_ok(s == 3 && reuse == 0, "pick: no common prefix: the LRU slot, nothing reused (slot %d)",
		       s);
	}
	{
		const int32_t p[] = { 1 };

		s = sched_pick_slot(sl, 4, p, 1, 0, &reuse);
		tap_ok(reuse == 0, "pick: a one-token prompt is always evaluated");
	}
	{
		const int32_t p[] = { 1, 10, 11, 12, 99 };

		sl[0].kv_type = 8;	/* QUANT_TYPE_Q8_0 rows */
		s = sched_pick_slot(sl, 4, p, 5, 0, &reuse);
		tap_ok(s == 2 && reuse == 3,
		       "pick: a slot whose K/V rows are of another type shares no prefix (slot %d, reuse %d)",
		       s, reuse);
		s = sched_pick_slot(sl, 4, p, 5, 8, &reuse);
		tap_ok(s == 0 && reuse == 4, "pick: ... and is reused at its own type (slot %d, reuse %d)",
		       s, reuse);
		sl[0].kv_type = 0;
	}
	sl[0].busy = true;
	{
		const int32_t p[] = { 1, 10, 11, 12, 13, 14 };

		s = sched_pick_slot(sl, 4, p, 6, 0, &reuse);
		tap_ok(s == 2 && reuse == 3, "pick: a busy slot is skipped (slot %d, reuse %d)", s, reuse);
	}
	sl[1].busy = sl[2].busy = sl[3].busy = true;
	{
		const int32_t p[] = { 1 };

		tap_ok(sched_pick_slot(sl, 4, p, 1, 0, &reuse) == -1, "pick: -1 when every slot is busy");
	}
	tap_ok(sched_lcp(a, 6, c, 4) == 3 && sched_lcp(a, 0, c, 4) == 0 && sched_lcp(a, 6, a, 3) == 3,
	       "lcp: common prefix lengths");
}

/* A decoding sequence in slot @slot at position @pos, ready since @since. */
static void dec(struct sched_seq *s, int slot, int pos, uint64_t since, uint64_t order)
{
	static const int32_t one[] = { 5 };

	memset(s, 0, sizeof(*s));
	s->slot = slot;
	s->prompt = one;
	s->n_prompt = 1;
	s->next = 1;
	s->pos = pos;
	s->next_tok = 100 + slot;
	s->ready = true;
	s->ready_since = since;
	s->order = order;
}

static void test_decode_groups(void)
{
	struct sched_seq q[4], *v[4] = { &q[0], &q[1], &q[2], &q[3] };
	struct sched_tok t[16];
	int n, n2, n3;

	dec(&q[0], 0, 10, 3, 0);
	dec(&q[1], 1, 20, 1, 1);
	dec(&q[2], 2, 30, 2, 2);
	dec(&q[3], 3, 40, 0, 3);
	n = sched_build(v, 4, 16, 2, 0, t);
	tap_ok(n == 2 && t[0].slot == 3 && t[1].slot == 1,
	       "decode: 4 sessions on 2 cards: groups of 2, oldest ready first (n %d, slots %d %d)",
	       n, t[0].slot, t[1].slot);
	tap_ok(t[0].pos == 40 && t[0].token == 103 && (t[0].flags & SCHED_TOK_LOGITS) &&
	       q[3].pos == 41 && q[3].waiting && !q[3].ready,
	       "decode: token, position and logits flag; the session waits for its logits");
	n2 = sched_build(v, 4, 16, 2, 0, t);
	tap_ok(n2 == 2 && t[0].slot == 2 && t[1].slot == 0, "decode: the second group goes next");
	n3 = sched_build(v, 4, 16, 2, 0, t);
	tap_ok(n3 == 0, "decode: nothing while every session waits");
	q[1].waiting = false;
	q[1].ready = true;
	n = sched_build(v, 4, 16, 2, 0, t);
	tap_ok(n == 1 && t[0].slot == 1, "decode: a session that got its logits back goes at once");

	dec(&q[0], 0, 1, 0, 0);
	dec(&q[1], 1, 1, 0, 1);
	dec(&q[2], 2, 1, 0, 2);
	n = sched_build(v, 3, 16, 1, 0, t);
	tap_ok(n == 3, "decode: one card batches every ready session (%d)", n);
	dec(&q[0], 0, 1, 0, 0);
	dec(&q[1], 1, 1, 0, 1);
	dec(&q[2], 2, 1, 0, 2);
	n = sched_build(v, 3, 16, 4, 0, t);
	tap_ok(n == 1, "decode: more cards than sessions: one session per micro-batch");
}

static void test_prefill(void)
{
	int32_t pa[40], pb[5];
	struct sched_seq q[3], *v[3] = { &q[0], &q[1], &q[2] };
	struct sched_tok t[8];
	int i, n, total = 0, last_flags = 0, ok_pos = 1, budget_ok = 1;

	for (i = 0; i < 40; i++)
		pa[i] = 200 + i;
	for (i = 0; i < 5; i++)
		pb[i] = 300 + i;
	memset(q, 0, sizeof(q));
	q[0] = (struct sched_seq){ .slot = 2, .prompt = pa, .n_prompt = 40, .next = 3, .pos = 3,
				   .order = 5 };
	q[1] = (struct sched_seq){ .slot = 0, .prompt = pb, .n_prompt = 5, .order = 6 };
	dec(&q[2], 1, 7, 0, 1);
	n = sched_build(v, 3, 8, 1, 0, t);
	tap_ok(n == 8 && t[0].slot == 1 && t[0].pos == 7 && t[1].slot == 2 && t[1].pos == 3 &&
	       t[1].token == 203 && !(t[1].flags & SCHED_TOK_LOGITS),
	       "prefill: decode token first, then the oldest prompt from its reused prefix");
	tap_ok(q[0].next == 10 && q[0].pos == 10 && !q[0].waiting,
	       "prefill: no limit: 7 prompt tokens fill the bucket of 8");
	/* Drain on 2 cards; the decode session becomes ready each step. */
	q[2].waiting = false;
	q[2].ready = true;
	while ((n = sched_build(v, 3, 8, 2, sched_mb_limit(8, 2, 0), t)) > 0) {
		int n_prompt = 0;

		for (i = 0; i < n; i++) {
			if (t[i].slot == 2) {
				ok_pos &= t[i].pos == t[i].token - 200;
				total++;
				last_flags = t[i].flags;
			}
			n_prompt += t[i].slot != 1;
		}
		budget_ok &= n == 4 - (n_prompt < 3) && n_prompt <= 3 && t[0].slot == 1;
		q[2].waiting = false;
		q[2].ready = true;
		q[2].next_tok = 101;
		if (q[0].waiting)
			break;
	}
	tap_ok(ok_pos && total == 30 && (last_flags & SCHED_TOK_LOGITS) && q[0].waiting,
	       "prefill: the rest in chunks, positions follow tokens, only the last wants logits");
	tap_ok(budget_ok, "prefill: 2 cards with a session decoding: micro-batches of 8 / 2 tokens, the decode token included");
	q[2].ready = q[2].waiting = false;
	n = sched_build(v, 3, 8, 2, sched_mb_limit(8, 2, 0), t);
	tap_ok(n == 4 && t[0].slot == 0 && q[1].next == 4 && !q[1].waiting,
	       "prefill: the second prompt follows in FIFO order, limited while the first waits for its token");
	/* Nobody decoding: whole buckets even on 2 cards. */
	memset(q, 0, sizeof(q));
	q[0] = (struct sched_seq){ .slot = 0, .prompt = pa, .n_prompt = 40 };
	n = sched_build(v, 1, 8, 2, sched_mb_limit(8, 2, 0), t);
	tap_ok(n == 8, "prefill: with nobody decoding a micro-batch is a whole bucket (%d)", n);
	/* Decode tokens beyond the limit: the prompt still gets one token. */
	memset(q, 0, sizeof(q));
	dec(&q[0], 0, 4, 0, 0);
	dec(&q[1], 1, 4, 0, 1);
	q[2] = (struct sched_seq){ .slot = 2, .prompt = pa, .n_prompt = 40, .order = 2 };
	n = sched_build(v, 3, 8, 1, 2, t);
	tap_ok(n == 3 && t[2].slot == 2 && q[2].next == 1,
	       "prefill: decode tokens fill the limit: one prompt token still goes (%d tokens)", n);
}

/* The token limit while sessions decode, and F / T from measured times. */
static void test_limit(void)
{
	double ns[17] = { 0 };
	struct sched_cost c = { .ns = ns, .max = 16 };
	double f;

	tap_ok(sched_mb_limit(128, 2, 0) == 64 && sched_mb_limit(128, 4, 0) == 32 &&
	       sched_mb_limit(16, 2, 2) == 7 && sched_mb_limit(16, 4, 2) == 2 &&
	       sched_mb_limit(128, 2, 12) == 58 && sched_mb_limit(16, 1, 0) == 16 &&
	       sched_mb_limit(16, 2, -1) == 8,
	       "limit: (B - (D - 1) * F / T) / D (64 32 7 2 58 16 8)");
	tap_ok(sched_mb_limit(128, 4, 100) == 16 && sched_mb_limit(16, 4, 100) == 2 &&
	       sched_mb_limit(2, 4, 100) == 1,
	       "limit: a huge fixed cost still leaves B / (2 * D), at least 1 (16 2 1)");
	tap_ok(sched_cost_fixed_tok(&c) == 0, "cost: nothing seen: F / T unknown (0)");
	sched_cost_add(&c, 1, 3e6);
	sched_cost_add(&c, 1, 3e6);
	tap_ok(sched_cost_fixed_tok(&c) == 0, "cost: one size seen: unknown");
	sched_cost_add(&c, 2, 4.5e6);
	tap_ok(sched_cost_fixed_tok(&c) == 0,
	       "cost: sizes 1 and 2 only (less than a quarter of 16 apart): unknown");
	ns[2] = 0;
	sched_cost_add(&c, 9, 11e6);
	sched_cost_add(&c, 8, 10e6);
	sched_cost_add(&c, 0, 1e9);
	sched_cost_add(&c, 17, 1e9);
	sched_cost_add(&c, 5, -1);
	f = sched_cost_fixed_tok(&c);
	tap_ok(f > 1.999 && f < 2.001, "cost: 2 ms + 1 ms a token over sizes 1, 8, 9: F / T = %.3f", f);
	sched_cost_add(&c, 8, 14e6);
	tap_ok(ns[8] == 11e6, "cost: a size's mean moves a quarter towards a new time (%.0f)", ns[8]);
	ns[1] = 20e6;
	tap_ok(sched_cost_fixed_tok(&c) == 0, "cost: time falling with size (T <= 0): unknown");
}

/*
 * Drafts of a verify pass under the token budget: a session decoding
 * alone with no prompt waiting fills the bucket; with a second session
 * decoding, or a prompt waiting, the budget holds.
 */
static void test_drafts(void)
{
	static const int32_t d[7] = { 50, 51, 52, 53, 54, 55, 56 }, pa[4] = { 1, 2, 3, 4 };
	struct sched_seq q[2], *v[2] = { &q[0], &q[1] };
	struct sched_tok t[8];
	int n, nd = 0, i;

	dec(&q[0], 0, 10, 0, 0);
	q[0].draft = d;
	q[0].n_draft = 7;
	n = sched_build(v, 1, 8, 4, sched_mb_limit(8, 4, 100), t);
	for (i = 0; i < n; i++)
		nd += !!(t[i].flags & SCHED_TOK_DRAFT);
	tap_ok(n == 8 && nd == 7 && q[0].n_spec == 7 && t[1].token == 50 && t[7].pos == 17 &&
	       q[0].pos == 18,
	       "drafts: alone on 4 cards (budget 1): the decode token and all 7 drafts (n %d, drafts %d)",
	       n, nd);
	dec(&q[0], 0, 10, 0, 0);
	q[0].draft = d;
	q[0].n_draft = 7;
	dec(&q[1], 1, 20, 1, 1);
	n = sched_build(v, 2, 8, 4, sched_mb_limit(8, 4, 0), t);
	tap_ok(n == 2 && q[0].n_spec == 1,
	       "drafts: a second session decoding: the budget of 2 holds (n %d, drafts %d)", n,
	       q[0].n_spec);
	dec(&q[0], 0, 10, 0, 0);
	q[0].draft = d;
	q[0].n_draft = 7;
	q[1] = (struct sched_seq){ .slot = 1, .prompt = pa, .n_prompt = 4, .order = 1 };
	n = sched_build(v, 2, 8, 4, sched_mb_limit(8, 4, 0), t);
	tap_ok(q[0].n_spec == 0 && n == 2 && t[1].slot == 1,
	       "drafts: a prompt waiting: no draft, one prompt token (n %d, drafts %d)", n,
	       q[0].n_spec);
}

int main(void)
{
	test_pick();
	test_decode_groups();
	test_prefill();
	test_limit();
	test_drafts();
	return tap_done();
}
