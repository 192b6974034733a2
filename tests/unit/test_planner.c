// SPDX-License-Identifier: MIT
/*
 * Host unit tests of the segment planner (userspace/llm/planner.c):
 * one card, more cards than blocks, uneven block sizes, a model that does
 * not fit (every short card named), the vendor rule (equal blocks + a
 * large LM head: the last card gets fewer blocks), the plan string, and
 * sizes over 2^64 bytes refused instead of wrapped.
 * Prints TAP.
 */
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "planner.h"

#include "tap.h"


#define GB (1ULL << 30)
#define MB (1ULL << 20)

static void test_one_card(void)
{
	uint64_t blocks[5] = { 10, 10, 10, 10, 10 }, free[1] = { 1000 };
	struct plan_input in = {
		.n_blocks = 5, .block_bytes = blocks, .head_bytes = 7,
		.card_overhead = 3, .n_cards = 1, .card_free = free,
	};
	struct plan p;
	char err[256], s[128];

	tap_ok(plan_make(&in, &p, err, sizeof(err)) == 0, "one card: plans");
	tap_ok(p.n_segs == 1 && p.seg[0].first == 0 && p.seg[0].count == 5 &&
	   p.seg[0].output, "one card: all blocks + output on card0");
	tap_ok(p.seg[0].bytes == 50 + 7 + 3, "one card: bytes = blocks + head + overhead");
	plan_format(&p, s, sizeof(s));
	tap_ok(!strcmp(s, "card0: blk 0-4 + output"), "one card: plan string");
	tap_ok(p.note[0] == '\0', "one card: no note");
}

static void test_more_cards_than_blocks(void)
{
	uint64_t blocks[3] = { 10, 10, 10 }, free[5] = { 100, 100, 100, 100, 100 };
	int ids[5] = { 0, 1, 2, 3, 4 };
	struct plan_input in = {
		.n_blocks = 3, .block_bytes = blocks, .head_bytes = 0,
		.card_overhead = 0, .n_cards = 5, .card_free = free, .card_ids = ids,
	};
	struct plan p;
	char err[256], s[128];

	tap_ok(plan_make(&in, &p, err, sizeof(err)) == 0, "5 cards, 3 blocks: plans");
	tap_ok(p.n_segs == 3, "5 cards, 3 blocks: uses 3 cards");
	tap_ok(strstr(p.note, "using 3 of 5 cards") != NULL, "5 cards, 3 blocks: says so");
	plan_format(&p, s, sizeof(s));
	tap_ok(!strcmp(s, "card0: blk 0, card1: blk 1, card2: blk 2 + output"),
	   "5 cards, 3 blocks: one block each");
}

static void test_uneven(void)
{
	/* One huge block in the middle: it gets a card of its own. */
	uint64_t blocks[6] = { 10, 10, 100, 10, 10, 10 }, free[3] = { 1000, 1000, 1000 };
	struct plan_input in = {
		.n_blocks = 6, .block_bytes = blocks, .head_bytes = 5,
		.card_overhead = 0, .n_cards = 3, .card_free = free,
	};
	struct plan p;
	char err[256], s[128];

	tap_ok(plan_make(&in, &p, err, sizeof(err)) == 0, "uneven: plans");
	tap_ok(p.seg[1].first == 2 && p.seg[1].count == 1, "uneven: big block alone on card1");
	tap_ok(p.seg[0].count == 2 && p.seg[2].count == 3, "uneven: 2 | 1 | 3");
	tap_ok(p.seg[2].bytes == 35 && p.seg[1].bytes == 100, "uneven: loads 20 | 100 | 35");
	plan_format(&p, s, sizeof(s));
	tap_ok(!strcmp(s, "card0: blk 0-1, card1: blk 2, card2: blk 3-5 + output"),
	   "uneven: plan string");
}

static void test_does_not_fit(void)
{
	uint64_t blocks[4] = { 2 * GB, 2 * GB, 2 * GB, 2 * GB };
	uint64_t free[2] = { 5 * GB, 4 * GB };
	int ids[2] = { 0, 1 };
	struct plan_input in = {
		.n_blocks = 4, .block_bytes = blocks, .head_bytes = 1 * GB,
		.card_overhead = 0, .n_cards = 2, .card_free = free, .card_ids = ids,
	};
	struct plan p;
	char err[512] = "";

	tap_ok(plan_make(&in, &p, err, sizeof(err)) == PLAN_NOFIT, "does not fit: refused");
	tap_ok(strstr(err, "card1 needs 5.00 GiB") && strstr(err, "has 4.00 GiB free"),
	   "does not fit: names card1, need and free");
	tap_ok(strstr(err, "blk 2-3 + output") != NULL, "does not fit: names the blocks");
	tap_ok(strstr(err, "card0") == NULL, "does not fit: card0 (fits) not blamed");

	/* Memory limits force an unbalanced but valid split. */
	free[0] = 7 * GB;
	free[1] = 3 * GB;
	tap_ok(plan_make(&in, &p, err, sizeof(err)) == 0, "tight card1: still plans");
	tap_ok(p.seg[0].count == 3 && p.seg[1].count == 1,
	   "tight card1: 3 | 1 to fit card1's 3 GiB");
}

static void test_does_not_fit_several(void)
{
	uint64_t blocks[6] = { GB, GB, GB, GB, GB, GB };
	uint64_t free[3] = { GB + GB / 2, 3 * GB, GB + GB / 2 };
	int ids[3] = { 4, 5, 6 };
	struct plan_input in = {
		.n_blocks = 6, .block_bytes = blocks, .head_bytes = 0,
		.card_overhead = 0, .n_cards = 3, .card_free = free, .card_ids = ids,
	};
	struct plan p;
	char err[1024] = "";

	/* Balanced 2 | 2 | 2 GiB: the outer cards (1.5 GiB free) overflow. */
	tap_ok(plan_make(&in, &p, err, sizeof(err)) == PLAN_NOFIT, "two cards short: refused");
	tap_ok(strstr(err, "does not fit on 3 cards:") != NULL, "two cards short: says so");
	tap_ok(strstr(err, "card4 needs 2.00 GiB (blk 0-1) but has 1.50 GiB free") != NULL,
	   "two cards short: names card4, need and free");
	tap_ok(strstr(err, "card6 needs 2.00 GiB (blk 4-5 + output) but has 1.50 GiB free") != NULL,
	   "two cards short: names card6, need and free");
	tap_ok(strstr(err, "card5") == NULL, "two cards short: card5 (fits) not blamed");

	/* Every card short: each one named. */
	free[1] = GB;
	tap_ok(plan_make(&in, &p, err, sizeof(err)) == PLAN_NOFIT &&
	   strstr(err, "card4 needs") && strstr(err, "card5 needs 2.00 GiB (blk 2-3) but has 1.00 GiB free") &&
	   strstr(err, "card6 needs"), "all cards short: all three named");
}

/* One block on a card reads "blk 3" everywhere, never "blk 3-3". */
static void test_one_block_names(void)
{
	uint64_t blocks[2] = { 3 * GB, 3 * GB };
	uint64_t free[2] = { 2 * GB, 2 * GB };
	int ids[2] = { 0, 1 };
	struct plan_input in = {
		.n_blocks = 2, .block_bytes = blocks, .head_bytes = GB,
		.card_overhead = 0, .n_cards = 2, .card_free = free, .card_ids = ids,
	};
	struct plan_seg seg = { .first = 7, .count = 1, .output = 1 };
	struct plan p;
	char err[512] = "", b[PLAN_BLK_MAX];

	tap_ok(plan_make(&in, &p, err, sizeof(err)) == PLAN_NOFIT &&
	       strstr(err, "card0 needs 3.00 GiB (blk 0) but has 2.00 GiB free") &&
	       strstr(err, "card1 needs 4.00 GiB (blk 1 + output) but has 2.00 GiB free") &&
	       !strstr(err, "0-0") && !strstr(err, "1-1"),
	       "does not fit, one block per card: \"blk 0\", \"blk 1 + output\" (%s)", err);
	plan_seg_blocks(&seg, b, sizeof(b));
	tap_ok(!strcmp(b, "blk 7 + output"), "plan_seg_blocks one block: \"%s\"", b);
	seg.count = 3;
	seg.output = 0;
	plan_seg_blocks(&seg, b, sizeof(b));
	tap_ok(!strcmp(b, "blk 7-9"), "plan_seg_blocks three blocks: \"%s\"", b);
	seg.first = -2147483647 - 1;	/* "blk -2147483648--2147483647 + output" */
	seg.count = 2;
	seg.output = 1;
	tap_ok(plan_seg_blocks(&seg, b, sizeof(b)) < PLAN_BLK_MAX,
	       "plan_seg_blocks: the longest name fits PLAN_BLK_MAX");
}

static void test_vendor_rule(void)
{
	/* 32 equal blocks of 100 MiB, LM head 500 MiB, 2 cards of 4.9 GiB. */
	uint64_t blocks[32], free[2] = { 4900 * MB, 4900 * MB };
	struct plan_input in = {
		.n_blocks = 32, .block_bytes = blocks, .head_bytes = 500 * MB,
		.card_overhead = 10 * MB, .n_cards = 2, .card_free = free,
	};
	struct plan p;
	char err[256], s[128];
	int i;

	for (i = 0; i < 32; i++)
		blocks[i] = 100 * MB;
	tap_ok(plan_make(&in, &p, err, sizeof(err)) == 0, "vendor rule: plans");
	tap_ok(p.seg[0].count > p.seg[1].count, "vendor rule: last card gets fewer blocks");
	/*
	 * 18 | 14 gives 1810 | 1910 MiB and 19 | 13 gives 1910 | 1810 MiB:
	 * equal maxima and evenness; the tie goes to the earlier card, which
	 * is the vendor's 19 | 13.
	 */
	tap_ok(p.seg[0].count == 19 && p.seg[1].count == 13, "vendor rule: 19 | 13");
	tap_ok(p.seg[0].bytes == 1910 * MB && p.seg[1].bytes == 1810 * MB,
	   "vendor rule: loads 1910 | 1810 MiB");
	plan_format(&p, s, sizeof(s));
	tap_ok(!strcmp(s, "card0: blk 0-18, card1: blk 19-31 + output"),
	   "vendor rule: plan string");

	/* A bigger head moves one more block to card0: 20 | 12. */
	in.head_bytes = 700 * MB;
	tap_ok(plan_make(&in, &p, err, sizeof(err)) == 0 &&
	   p.seg[0].count == 20 && p.seg[1].count == 12, "head 700 MiB: 20 | 12");

	/* Without an LM head the split is even. */
	in.head_bytes = 0;
	tap_ok(plan_make(&in, &p, err, sizeof(err)) == 0 &&
	   p.seg[0].count == 16 && p.seg[1].count == 16, "no head: 16 | 16");
}

static void test_bad_input(void)
{
	uint64_t blocks[1] = { 1 }, free[1] = { 10 };
	struct plan_input in = {
		.n_blocks = 0, .block_bytes = blocks, .n_cards = 1, .card_free = free,
	};
	struct plan p;
	char err[256] = "";

	tap_ok(plan_make(&in, &p, err, sizeof(err)) == -1 && strstr(err, "no blocks"),
	   "bad input: zero blocks refused");
	in.n_blocks = 1;
	in.n_cards = 0;
	tap_ok(plan_make(&in, &p, err, sizeof(err)) == -1 && strstr(err, "no cards"),
	   "bad input: zero cards refused");
	in.n_cards = PLAN_MAX_CARDS + 1;
	tap_ok(plan_make(&in, &p, err, sizeof(err)) == -1, "bad input: too many cards refused");
}

/*
 * plan_format() of the largest plan fits PLAN_STR_MAX whole, and a short
 * buffer gets a truncated, terminated prefix and the full length, with
 * nothing written past it.
 */
static void test_format_limits(void)
{
	static uint64_t blocks[PLAN_MAX_CARDS * 20], free[PLAN_MAX_CARDS];
	struct plan_input in = {
		.n_blocks = PLAN_MAX_CARDS * 20, .block_bytes = blocks, .head_bytes = 1,
		.n_cards = PLAN_MAX_CARDS, .card_free = free,
	};
	char err[256], big[PLAN_STR_MAX], small[24 + 8];
	struct plan p;
	int i, len, len2;

	for (i = 0; i < PLAN_MAX_CARDS * 20; i++)
		blocks[i] = 10;
	for (i = 0; i < PLAN_MAX_CARDS; i++)
		free[i] = 1000;
	tap_ok(plan_make(&in, &p, err, sizeof(err)) == 0 && p.n_segs == PLAN_MAX_CARDS,
	       "format: %d cards of 20 blocks plan", PLAN_MAX_CARDS);
	len = plan_format(&p, big, sizeof(big));
	tap_ok(len > 511 && len < PLAN_STR_MAX && (int)strlen(big) == len &&
	       strstr(big, ", card63: blk 1260-1279 + output") &&
	       !strcmp(big + len - 9, " + output"),
	       "format: %d-card plan string whole in PLAN_STR_MAX (%d chars)",
	       PLAN_MAX_CARDS, len);
	memset(small, 'X', sizeof(small));
	len2 = plan_format(&p, small, 24);
	tap_ok(len2 == len && strlen(small) == 23 && !strncmp(small, big, 23) &&
	       !memcmp(small + 24, "XXXXXXXX", 8),
	       "format: a 24-byte buffer gets 23 chars + NUL and the full length %d", len2);
	tap_ok(plan_format(&p, NULL, 0) == len, "format: NULL, 0 counts only");
}

/*
 * Sizes from file and command-line values are checked, not wrapped: a
 * total over 2^64 bytes is refused by plan_make(), and plan_model() on a
 * (shape-only) model whose KV cache product overflows 64 bits at
 * --ctx 2^30 refuses instead of reporting a wrapped size.
 */
static void test_overflow(void)
{
	uint64_t blocks[3] = { UINT64_MAX / 2, UINT64_MAX / 2, 4096 }, free[2] = { 1ULL << 62, 1ULL << 62 };
	struct plan_input in = {
		.n_blocks = 3, .block_bytes = blocks, .head_bytes = 7,
		.card_overhead = 3, .n_cards = 2, .card_free = free,
	};
	struct llm_layer layers[2];
	struct llm_model m;
	struct plan_sizes sz = { .n_ctx = 1u << 30, .bucket = 128 };
	struct plan p;
	char err[256] = "";
	int ret;

	ret = plan_make(&in, &p, err, sizeof(err));
	tap_ok(ret == -1 && strstr(err, "does not fit in 64 bits"),
	       "block sizes summing over 2^64 bytes: refused (%s)", err);
	memset(layers, 0, sizeof(layers));
	memset(&m, 0, sizeof(m));
	m.n_layers = 2;
	m.layers = layers;
	m.dim = 4096;
	m.n_vocab = 1000;
	m.n_heads = 1;
	/* 2 * 2^30 * 3 * 2^14 * 2^16 * 4 bytes = 3 * 2^63: wraps to 8 EiB. */
	m.n_kv_heads = 3u << 14;
	m.head_dim = 1u << 16;
	err[0] = '\0';
	ret = plan_model(&m, &sz, 2, free, NULL, &p, err, sizeof(err));
	tap_ok(ret == -1 && strstr(err, "does not fit in 64 bits"),
	       "KV cache of --ctx 2^30 over 2^64 bytes: refused, not wrapped (%s)", err);
	tap_ok(llm_kv_bytes(&m, 1u << 30, QUANT_TYPE_F32) == UINT64_MAX && llm_kv_bytes(&m, 1, QUANT_TYPE_F32) == 3ULL << 33,
	       "llm_kv_bytes() saturates at UINT64_MAX (%llu bytes at ctx 1)",
	       (unsigned long long)llm_kv_bytes(&m, 1, QUANT_TYPE_F32));
	sz.n_ctx = 4096;
	sz.n_seq = 64;
	m.n_kv_heads = 8;
	m.head_dim = 128;
	err[0] = '\0';
	ret = plan_model(&m, &sz, 2, free, NULL, &p, err, sizeof(err));
	tap_ok(ret == 0, "the same model at --ctx 4096 with 64 sessions plans%s%s",
	       ret ? ": " : "", err);
}

int main(void)
{
	printf("TAP version 13\n");
	test_one_card();
	test_more_cards_than_blocks();
	test_uneven();
	test_does_not_fit();
	test_does_not_fit_several();
	test_one_block_names();
	test_vendor_rule();
	test_bad_input();
	test_format_limits();
	test_overflow();
	return tap_done();
}
