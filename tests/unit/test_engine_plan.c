// SPDX-License-Identifier: MIT
/*
 * The plan a command prints is the plan the engine runs (issue 19): one
 * fitting policy, plan_fit() of engine_fit_opts(), for rk1828-llm run and
 * chat (which plan, print, and hand the plan to the engine) and for the
 * engine serve creates (which plans itself). On a hybrid model (qwen35,
 * state snapshots per slot) and 2 mock cards:
 * - run's path: the plan and sizes given in engine_opts are what
 *   engine_get_info() reports (plan string, slots, ctx, bucket, n_snap =
 *   ENGINE_SNAPS_PER_SLOT per slot);
 * - cards a little short of 4 checkpoints a slot: plan_fit() gives one up
 *   (not the bucket or a slot), says so, and both engines run 3;
 * - cards with too little memory for bucket 128 even at 1 checkpoint a
 *   slot: plan_fit() halves the
 *   implicit bucket and says so; the engine given that plan and the engine
 *   that plans itself (serve's path) settle on the same bucket, snapshots
 *   and plan;
 * - 4 slots that do not fit even at 1 checkpoint: both lower the slots to
 *   the same count, with n_snap following them;
 * - a plan whose sizes the engine cannot run (no snapshots for a hybrid
 *   model, more than 4 a slot, a bucket over the context, a plan without
 *   sizes) is refused with a message saying so; 2 a slot run 2.
 * Model: $RK1828_HYBRID_MODEL or build/synth/qwen35-engine.gguf (make
 * synth-models). Output: TAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "gguf.h"
#include "model.h"
#include "planner.h"
#include "tokenizer.h"

#include "mock_rk.h"
#include "tap.h"

#define N_CARDS 2

static struct rk_card cards[MOCK_CARDS];
static struct llm_model M;
static struct tokenizer *tk;

/* Fresh mock cards with @free bytes free each (0: all of it). */
static int cards_with(uint64_t free_b)
{
	struct rk_bo eat;
	int i;

	mock_rk_reset();
	for (i = 0; i < N_CARDS; i++) {
		rk_card_refresh(&cards[i]);
		if (free_b && cards[i].mem_free > free_b &&
		    rk_bo_create(&cards[i], cards[i].mem_free - free_b, RK_BO_CARD, &eat))
			return -1;
		rk_card_refresh(&cards[i]);
	}
	return 0;
}

/* plan_fit() of @o on the cards as they are now, as run plans. */
static int fit(const struct engine_opts *o, struct plan_sizes *sz, struct plan *p, char *note,
	       size_t notelen)
{
	uint64_t free_b[N_CARDS];
	struct plan_fit_opts fo;
	char err[1024];
	int i, ids[N_CARDS];

	for (i = 0; i < N_CARDS; i++) {
		rk_card_refresh(&cards[i]);
		free_b[i] = cards[i].mem_free;
		ids[i] = cards[i].index;
	}
	engine_fit_opts(&M, o, &fo);
	if (plan_fit(&M, &fo, N_CARDS, free_b, ids, sz, p, note, notelen, err, sizeof(err))) {
		printf("# plan_fit: %s\n", err);
		return -1;
	}
	return 0;
}

/* engine_get_info() of an engine on the cards with @o; -1 when refused. */
static int engine_info_of(const struct engine_opts *o, struct engine_info *info, char *err,
			  size_t errlen)
{
	struct engine *e = NULL;

	if (engine_create(&e, &M, tk, cards, NULL, N_CARDS, o, err, errlen))
		return -1;
	engine_get_info(e, info);
	engine_destroy(e);
	return 0;
}

/* @info is exactly @sz and @p. */
static bool info_is(const struct engine_info *info, const struct plan_sizes *sz,
		    const struct plan *p)
{
	char want[PLAN_STR_MAX];

	plan_format(p, want, sizeof(want));
	if (info->n_slots == (int)sz->n_seq && info->n_ctx == sz->n_ctx &&
	    info->bucket == sz->bucket && info->n_snap == sz->n_snap && !strcmp(info->plan, want))
		return true;
	printf("# engine: %d slots, ctx %u, bucket %u, %u snapshots, plan %s\n"
	       "# planned: %u slots, ctx %u, bucket %u, %u snapshots, plan %s\n", info->n_slots,
	       info->n_ctx, info->bucket, info->n_snap, info->plan, sz->n_seq, sz->n_ctx,
	       sz->bucket, sz->n_snap, want);
	return false;
}

/*
 * The smallest free memory a card needs for @o with an explicit bucket
 * and exactly @ckpt checkpoints a slot (none given up).
 */
static uint64_t need_at(struct engine_opts o, uint32_t ckpt)
{
	uint64_t lo = 4096, hi = MOCK_CARD_MEM - 8192, free_b[N_CARDS];
	struct plan_fit_opts fo;
	struct plan_sizes sz;
	struct plan p;

	engine_fit_opts(&M, &o, &fo);
	fo.snaps_per_seq = fo.snaps_per_seq - ENGINE_SNAPS_PER_SLOT + ckpt;
	fo.snaps_optional = 0;
	while (hi - lo > 4096) {
		uint64_t mid = (lo + hi) / 2 & ~4095ULL;

		free_b[0] = free_b[1] = mid;
		if (plan_fit(&M, &fo, N_CARDS, free_b, NULL, &sz, &p, NULL, 0, NULL, 0))
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

static void test_run_path(void)
{
	struct engine_opts o = { .n_slots = 1, .strict_slots = true, .n_ctx = 256,
				 .queue_max = -1 };
	struct engine_info info;
	struct plan_fit_opts fo;
	struct plan_sizes sz;
	struct plan p;
	char note[256], err[512];

	if (!tap_ok(cards_with(0) == 0 && fit(&o, &sz, &p, note, sizeof(note)) == 0,
		    "run's plan on 2 cards"))
		return;
	tap_ok(sz.n_seq == 1 && sz.bucket == PLAN_DEFAULT_BUCKET &&
	       sz.n_snap == ENGINE_SNAPS_PER_SLOT && !note[0],
	       "hybrid model: 1 slot, bucket %u, %u snapshot blocks (%d per slot), nothing lowered",
	       sz.bucket, sz.n_snap, ENGINE_SNAPS_PER_SLOT);
	engine_fit_opts(&M, &o, &fo);
	tap_ok(fo.snaps_per_seq == ENGINE_SNAPS_PER_SLOT &&
	       fo.snaps_optional == ENGINE_SNAPS_PER_SLOT - ENGINE_SNAPS_MIN_PER_SLOT,
	       "the engine asks for %u snapshots a slot, %u of them optional (down to %d)",
	       fo.snaps_per_seq, fo.snaps_optional, ENGINE_SNAPS_MIN_PER_SLOT);
	o.plan = &p;
	o.sizes = &sz;
	tap_ok(engine_info_of(&o, &info, err, sizeof(err)) == 0 && info_is(&info, &sz, &p) &&
	       info.n_ckpt == ENGINE_SNAPS_PER_SLOT,
	       "the engine given run's plan runs it: plan, slots, ctx, bucket and snapshots");
}

/*
 * Cards that hold 2 slots with 3 checkpoints but not 4: plan_fit() gives
 * one up (before the bucket or the slots), says so, and both engines run 3.
 */
static void test_snaps_lowered(void)
{
	struct engine_opts o = { .n_slots = 2, .strict_slots = true, .n_ctx = 256,
				 .queue_max = -1, .bucket = PLAN_DEFAULT_BUCKET };
	uint64_t need = need_at(o, 3), need4 = need_at(o, ENGINE_SNAPS_PER_SLOT);
	struct engine_info given, own;
	struct plan_sizes sz;
	struct plan p;
	char note[256], err[512];
	int r;

	o.bucket = 0;
	if (!tap_ok(need < need4 && cards_with(need) == 0 &&
		    fit(&o, &sz, &p, note, sizeof(note)) == 0,
		    "cards of %llu bytes free hold 2 slots with 3 checkpoints, not 4 (%llu): a plan",
		    (unsigned long long)need, (unsigned long long)need4))
		return;
	tap_ok(sz.n_seq == 2 && sz.bucket == PLAN_DEFAULT_BUCKET && sz.n_snap == 2 * 3 &&
	       strstr(note, "state snapshots lowered from 4 to 3 a slot") &&
	       !strstr(note, "bucket") && !strstr(note, "using"),
	       "a checkpoint a slot given up, not the bucket or a slot: 2 slots, bucket %u, %u snapshots (\"%s\")",
	       sz.bucket, sz.n_snap, note);
	o.plan = &p;
	o.sizes = &sz;
	r = engine_info_of(&o, &given, err, sizeof(err));
	tap_ok(r == 0 && info_is(&given, &sz, &p) && given.n_ckpt == 3,
	       "the engine given that plan runs 3 checkpoints a slot (%u)", r ? 0 : given.n_ckpt);
	o.plan = NULL;
	o.sizes = NULL;
	tap_ok(cards_with(need) == 0 && engine_info_of(&o, &own, err, sizeof(err)) == 0 &&
	       info_is(&own, &sz, &p) && own.n_ckpt == 3 && strstr(own.note, "from 4 to 3"),
	       "the engine planning itself (serve) settles on the same 3 checkpoints and note (\"%s\")",
	       own.note);
}

static void test_bucket_lowered(void)
{
	struct engine_opts o = { .n_slots = 1, .strict_slots = true, .n_ctx = 256,
				 .queue_max = -1, .bucket = PLAN_DEFAULT_BUCKET };
	uint64_t need = need_at(o, ENGINE_SNAPS_MIN_PER_SLOT);
	struct engine_info given, own;
	struct plan_sizes sz;
	struct plan p;
	char note[256], want[96], err[512];

	o.bucket = 0;
	if (!tap_ok(cards_with(need - 4096) == 0 && fit(&o, &sz, &p, note, sizeof(note)) == 0,
		    "cards 4 KiB short of bucket 128 (%llu bytes free): a plan",
		    (unsigned long long)(need - 4096)))
		return;
	snprintf(want, sizeof(want), "bucket lowered from %u to %u", PLAN_DEFAULT_BUCKET,
		 sz.bucket);
	tap_ok(sz.bucket == PLAN_DEFAULT_BUCKET / 2 && strstr(note, want) &&
	       sz.n_snap >= ENGINE_SNAPS_MIN_PER_SLOT && sz.n_snap <= ENGINE_SNAPS_PER_SLOT,
	       "short of bucket 128 even with 1 checkpoint: the implicit bucket is halved to %u, %u checkpoints (\"%s\")",
	       sz.bucket, sz.n_snap, note);
	o.plan = &p;
	o.sizes = &sz;
	tap_ok(engine_info_of(&o, &given, err, sizeof(err)) == 0 && info_is(&given, &sz, &p),
	       "the engine given that plan runs bucket %u", sz.bucket);
	o.plan = NULL;
	o.sizes = NULL;
	tap_ok(cards_with(need - 4096) == 0 && engine_info_of(&o, &own, err, sizeof(err)) == 0 &&
	       info_is(&own, &sz, &p) && strstr(own.note, want),
	       "the engine planning itself (serve) settles on the same plan, bucket and note");
}

static void test_slots_lowered(void)
{
	struct engine_opts o = { .n_slots = 2, .strict_slots = true, .n_ctx = 256,
				 .queue_max = -1, .bucket = 16 };
	uint64_t need = need_at(o, ENGINE_SNAPS_MIN_PER_SLOT);
	struct engine_info own;
	struct plan_sizes sz;
	struct plan p;
	char note[256], err[512];

	o.n_slots = 4;
	o.strict_slots = false;
	if (!tap_ok(cards_with(need) == 0 && fit(&o, &sz, &p, note, sizeof(note)) == 0,
		    "4 slots on cards that hold 2: a plan"))
		return;
	tap_ok(sz.n_seq == 2 && sz.n_snap == 2 * ENGINE_SNAPS_MIN_PER_SLOT && sz.bucket == 16 &&
	       strstr(note, "using 2") && strstr(note, "from 4 to 1 a slot"),
	       "4 slots on cards that hold 2 at 1 checkpoint: 2 slots with 2 x %d snapshots (\"%s\")",
	       ENGINE_SNAPS_MIN_PER_SLOT, note);
	tap_ok(engine_info_of(&o, &own, err, sizeof(err)) == 0 && info_is(&own, &sz, &p),
	       "the engine planning itself lowers to the same 2 slots and plan");
}

static void test_refused(void)
{
	struct engine_opts o = { .n_slots = 1, .strict_slots = true, .n_ctx = 256,
				 .queue_max = -1 };
	struct engine_info info;
	struct plan_sizes sz, bad;
	struct plan p;
	char err[512] = "";
	int r;

	if (cards_with(0) || fit(&o, &sz, &p, NULL, 0)) {
		tap_ok(0, "a plan to spoil");
		return;
	}
	bad = sz;
	bad.n_snap = 0;
	o.plan = &p;
	o.sizes = &bad;
	tap_ok(engine_info_of(&o, &info, err, sizeof(err)) == -1 && strstr(err, "0 snapshots") &&
	       strstr(err, "1..4 snapshots a slot"),
	       "a hybrid plan without snapshots is refused (\"%s\")", err);
	bad.n_snap = 5;
	tap_ok(engine_info_of(&o, &info, err, sizeof(err)) == -1 && strstr(err, "5 snapshots"),
	       "a plan of 5 snapshots a slot (over the 4 the engine has) is refused");
	bad.n_snap = 2;
	r = engine_info_of(&o, &info, err, sizeof(err));
	tap_ok(r == 0 && info.n_snap == 2 && info.n_ckpt == 2,
	       "a plan of 2 snapshots a slot runs 2 checkpoints (%u)", r ? 0 : info.n_ckpt);
	bad = sz;
	bad.bucket = bad.n_ctx + 1;
	tap_ok(engine_info_of(&o, &info, err, sizeof(err)) == -1 && strstr(err, "bucket 257"),
	       "a bucket over the context is refused (\"%s\")", err);
	o.sizes = NULL;
	tap_ok(engine_info_of(&o, &info, err, sizeof(err)) == -1 &&
	       !strcmp(err, "engine: a plan needs its sizes"), "a plan without sizes is refused");
}

int main(void)
{
	const char *path = getenv("RK1828_HYBRID_MODEL");
	struct gguf_file *gf;
	char err[512];

	mock_rk_cards(cards);
	gf = gguf_open(path ? path : "build/synth/qwen35-engine.gguf", err, sizeof(err));
	if (!tap_ok(gf && !llm_model_load(&M, gf, err, sizeof(err)) &&
		    (tk = tok_load(gf, err, sizeof(err))) && llm_model_hybrid(&M),
		    "hybrid model loaded (%s)", gf ? "qwen35" : err))
		return tap_done();
	test_run_path();
	test_snaps_lowered();
	test_bucket_lowered();
	test_slots_lowered();
	test_refused();
	tok_free(tk);
	llm_model_free(&M);
	gguf_close(gf);
	mock_rk_free();
	return tap_done();
}
