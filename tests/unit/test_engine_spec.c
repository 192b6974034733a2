// SPDX-License-Identifier: MIT
/*
 * Host test of speculative decoding in the engine (engine_spec.c) over the
 * real pipeline and the mock librk1828 (every job runs through the card
 * emulator's emu_exec()), 2 mock cards:
 * - stories260K ($RK1828_MODEL or ../shared/models/stories260K.gguf):
 *   greedy output with --spec ngram is token-identical to without, for
 *   draft-max 4 and 8 and buckets 8 and 16, with drafts both accepted and
 *   rejected (rollback of KV positions); two sessions speculating at once
 *   give what each gives alone; a request's speculative.n_max = -1 turns
 *   it off; usage.draft_n / draft_n_accepted match the engine's counters;
 * - the synthetic hybrid model ($RK1828_HYBRID_MODEL or
 *   build/synth/qwen35-engine.gguf): the same identity with rejected drafts,
 *   which roll the Gated DeltaNet conv and recurrent states back to the
 *   last accepted token (per-position snapshots, replays), bit for bit
 *   (ids and log-probabilities), with the plan's 4 prefix-cache
 *   checkpoints a slot and with 1 (the planner's floor); and a prefix-cache hit after a request that
 *   ended with a rollback pending gives what a fresh engine gives.
 * Output: TAP.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "gguf.h"
#include "model.h"
#include "tokenizer.h"

#include "engine_cases.h"
#include "mock_rk.h"
#include "planner.h"
#include "tap.h"

#define MAX_GEN 96

struct res {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	int32_t ids[MAX_GEN];
	float lp[MAX_GEN];
	int n_ids, draft_n, draft_acc;
	struct engine_req *q;
};

static struct rk_card cards[MOCK_CARDS];
static const char *draft_path;	/* --draft-model of the engines mk() makes */
static char mk_err[512];	/* engine_create()'s error of the last mk() */
static struct llm_model M;
static struct tokenizer *tk;

static void on_event(const struct engine_event *ev, void *user)
{
	struct res *r = user;
	int i;

	pthread_mutex_lock(&r->mu);
	for (i = 0; i < ev->n_ids && r->n_ids < MAX_GEN; i++) {
		r->lp[r->n_ids] = ev->logprobs ? ev->logprobs[i].logprob : 0.0f;
		r->ids[r->n_ids++] = ev->ids[i];
	}
	if (ev->kind == ENGINE_EV_DONE) {
		r->draft_n = ev->usage.draft_n;
		r->draft_acc = ev->usage.draft_n_accepted;
		r->done = true;
		pthread_cond_signal(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
}

/* mk(): 0, or run with the plan of this many checkpoints a slot (hybrid). */
static uint32_t mk_ckpt;

static struct engine *mk(int slots, int bucket, enum spec_kind spec, int k)
{
	struct engine_opts o = { .n_slots = slots, .n_ctx = 256, .bucket = (uint32_t)bucket,
				 .queue_max = 4, .strict_slots = true, .spec = spec,
				 .draft_max = k, .verbose = getenv("SPEC_V") ? 3 : 0,
				 .draft_model = draft_path };
	static struct plan p;
	static struct plan_sizes sz;
	struct engine *e = NULL;

	mock_rk_reset();
	mk_err[0] = '\0';
	if (mk_ckpt) {	/* the plan of fewer checkpoints a slot */
		if (engine_plan_ckpts(&M, &o, cards, 2, mk_ckpt, &p, &sz))
			return NULL;
		o.plan = &p;
		o.sizes = &sz;
	}
	if (engine_create(&e, &M, tk, cards, NULL, 2, &o, mk_err, sizeof(mk_err)))
		fprintf(stderr, "# engine_create: %s\n", mk_err);
	return e;
}

static int submit(struct engine *e, struct res *r, const int32_t *toks, int n, int n_gen,
		  int draft_max)
{
	struct engine_request rq = { 0 };
	char err[256];

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	rq.prompt = toks;
	rq.n_prompt = n;
	rq.max_tokens = n_gen;
	rq.ignore_eos = true;
	rq.s.top_p = 1.0f;
	rq.s.logprobs = true;
	rq.draft_max = draft_max;
	rq.cb = on_event;
	rq.user = r;
	if (engine_submit(e, &rq, &r->q, err, sizeof(err))) {
		fprintf(stderr, "# engine_submit: %s\n", err);
		r->done = true;
		r->n_ids = -1;
		return -1;
	}
	return 0;
}

static void wait_put(struct res *r)
{
	pthread_mutex_lock(&r->mu);
	while (!r->done)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	engine_req_put(r->q);
	r->q = NULL;
}

/* @toks alone on a fresh one-slot engine. */
static void run1(int bucket, enum spec_kind spec, int k, const int32_t *toks, int n, int n_gen,
		 struct res *r)
{
	struct engine *e = mk(1, bucket, spec, k);

	r->n_ids = -1;
	if (e && !submit(e, r, toks, n, n_gen, 0))
		wait_put(r);
	engine_destroy(e);
}

static bool same(const struct res *a, const struct res *b, int n_gen)
{
	return a->n_ids == n_gen && b->n_ids == n_gen &&
	       !memcmp(a->ids, b->ids, sizeof(int32_t) * n_gen) &&
	       !memcmp(a->lp, b->lp, sizeof(float) * n_gen);
}

static const char *story =
	"Once upon a time, there was a little girl named Lily. She liked to play. "
	"Once upon a time, there was a little boy named Tom. He liked to";

static void test_llama(void)
{
	static const int ks[] = { 4, 8 }, bs[] = { 8, 16 };
	int32_t toks[256], t2[64];
	struct res base, sp, a, b;
	int n = tok_encode(tk, story, true, toks, 256), n2, i, j, total_n = 0, total_acc = 0;
	int a_n = 0, a_acc = 0;
	struct engine *e;
	struct engine_stats st;

	for (j = 0; j < 2; j++) {
		run1(bs[j], SPEC_NONE, 0, toks, n, 64, &base);
		tap_ok(base.draft_n == 0, "bucket %d without --spec: no drafts", bs[j]);
		for (i = 0; i < 2; i++) {
			run1(bs[j], SPEC_NGRAM, ks[i], toks, n, 64, &sp);
			tap_ok(same(&base, &sp, 64),
			       "stories260K bucket %d --draft-max %d: greedy ids and logprobs identical to no speculation",
			       bs[j], ks[i]);
			tap_ok(sp.draft_acc > 0 && sp.draft_n > sp.draft_acc,
			       "  drafts verified %d, accepted %d (some accepted, some rolled back)",
			       sp.draft_n, sp.draft_acc);
			total_n += sp.draft_n;
			total_acc += sp.draft_acc;
		}
	}
	printf("# stories260K ngram: %d drafted, %d accepted (%.2f)\n", total_n, total_acc,
	       total_n ? (double)total_acc / total_n : 0.0);

	/* Two sessions speculating at once: each as alone; a request opting out. */
	n2 = tok_encode(tk, "Tom had a red ball. Tom had a red ball. Tom had a", true, t2, 64);
	run1(8, SPEC_NONE, 0, t2, n2, 48, &base);
	run1(8, SPEC_NONE, 0, toks, n, 64, &sp);
	e = mk(2, 8, SPEC_NGRAM, 4);
	if (e && !submit(e, &a, toks, n, 64, 0) && !submit(e, &b, t2, n2, 48, 0)) {
		wait_put(&a);
		wait_put(&b);
	}
	tap_ok(same(&a, &sp, 64) && same(&b, &base, 48),
	       "two sessions speculating at once: each gives what it gives alone");
	a_n = a.draft_n;
	a_acc = a.draft_acc;
	if (e && !submit(e, &a, t2, n2, 48, -1))
		wait_put(&a);
	tap_ok(same(&a, &base, 48) && a.draft_n == 0,
	       "speculative.n_max -1: no drafts for that request (%d), same output", a.draft_n);
	if (e) {
		engine_get_stats(e, &st);
		/* The engine's counters: the three requests it ran, the last undrafted. */
		tap_ok(st.draft_tokens == (uint64_t)a_n + (uint64_t)b.draft_n &&
		       st.draft_accepted == (uint64_t)a_acc + (uint64_t)b.draft_acc && a_n > 0,
		       "engine stats: %llu drafted, %llu accepted in %llu verify passes",
		       (unsigned long long)st.draft_tokens, (unsigned long long)st.draft_accepted,
		       (unsigned long long)st.verify_passes);
	}
	engine_destroy(e);
	e = mk(1, 1, SPEC_NGRAM, 4);
	tap_ok(!e, "--spec with bucket 1 is refused");
	engine_destroy(e);
}

/*
 * --spec draft with stories260K as both target and draft model: the draft
 * model (host CPU, reference forward pass) proposes the target's own
 * greedy continuation, so every draft is accepted and the text is the
 * non-speculative one.
 */
static void test_draft(const char *self, const char *other)
{
	static const int ks[] = { 4, 7 };
	int32_t toks[256];
	struct res base, sp;
	int n = tok_encode(tk, story, true, toks, 256), i;
	struct engine *e;

	run1(8, SPEC_NONE, 0, toks, n, 64, &base);
	draft_path = self;
	for (i = 0; i < 2; i++) {
		run1(8, SPEC_DRAFT, ks[i], toks, n, 64, &sp);
		tap_ok(same(&base, &sp, 64),
		       "--spec draft (stories260K drafting for itself) --draft-max %d: greedy ids and logprobs identical",
		       ks[i]);
		tap_ok(sp.draft_n > 32 && sp.draft_acc == sp.draft_n,
		       "  every draft accepted: %d drafted, %d accepted", sp.draft_n, sp.draft_acc);
	}
	draft_path = other;
	e = mk(1, 8, SPEC_DRAFT, 4);
	tap_ok(!e && strstr(mk_err, other) && strstr(mk_err, "same vocabulary") &&
	       strstr(mk_err, M.gf->path),
	       "a draft model of another vocabulary is refused naming both files: %s", mk_err);
	engine_destroy(e);
	draft_path = NULL;
	e = mk(1, 8, SPEC_DRAFT, 4);
	tap_ok(!e && strstr(mk_err, "--draft-model"), "--spec draft without --draft-model: %s",
	       mk_err);
	engine_destroy(e);
}

/* A repetitive byte-level prompt of the placeholder vocabulary. */
static int hy_prompt(int32_t *toks)
{
	return tok_encode(tk, "abbcabbbdabbbbeab", true, toks, 64);
}

static void test_hybrid(void)
{
	int32_t toks[256], ext[256];
	struct res base, sp, fresh;
	int n = hy_prompt(toks), i, n_ext;
	struct engine *e;

	run1(8, SPEC_NONE, 0, toks, n, 48, &base);
	for (i = 0; i < base.n_ids && getenv("SPEC_V"); i++)
		printf("# %d\n", base.ids[i]);
	for (i = 0; i < 2; i++) {
		int k = i ? 6 : 3;

		run1(8, SPEC_NGRAM, k, toks, n, 48, &sp);
		tap_ok(same(&base, &sp, 48),
		       "hybrid --draft-max %d: greedy ids and logprobs identical to no speculation", k);
		tap_ok(sp.draft_n > sp.draft_acc,
		       "  hybrid: %d drafts, %d accepted: rejected drafts rolled back the DeltaNet states",
		       sp.draft_n, sp.draft_acc);
	}
	/* Fewer checkpoints (the planner's floor): rollbacks have their own blocks. */
	mk_ckpt = ENGINE_SNAPS_MIN_PER_SLOT;
	run1(8, SPEC_NGRAM, 3, toks, n, 48, &sp);
	mk_ckpt = 0;
	tap_ok(same(&base, &sp, 48) && sp.draft_n > sp.draft_acc,
	       "hybrid, %d checkpoint a slot, --draft-max 3: identical to no speculation, %d drafts, %d accepted",
	       ENGINE_SNAPS_MIN_PER_SLOT, sp.draft_n, sp.draft_acc);
	/* Prefix cache after a speculating request: extend its whole history. */
	e = mk(1, 8, SPEC_NGRAM, 4);
	if (e && !submit(e, &sp, toks, n, 20, 0))
		wait_put(&sp);
	memcpy(ext, toks, sizeof(int32_t) * n);
	memcpy(ext + n, sp.ids, sizeof(int32_t) * (sp.n_ids > 0 ? sp.n_ids : 0));
	n_ext = n + (sp.n_ids > 0 ? sp.n_ids : 0);
	if (e && !submit(e, &sp, ext, n_ext, 16, 0))
		wait_put(&sp);
	engine_destroy(e);
	run1(8, SPEC_NONE, 0, ext, n_ext, 16, &fresh);
	tap_ok(same(&sp, &fresh, 16),
	       "hybrid: a prefix-cache hit after a speculating request gives what a fresh engine gives");
}

static int load(const char *path, struct gguf_file **gf)
{
	char err[256];

	*gf = gguf_open(path, err, sizeof(err));
	if (!*gf || llm_model_load(&M, *gf, err, sizeof(err)) ||
	    !(tk = tok_load(*gf, err, sizeof(err)))) {
		tap_ok(false, "load %s: %s", path, err);
		return -1;
	}
	return 0;
}

static void unload(struct gguf_file *gf)
{
	tok_free(tk);
	llm_model_free(&M);
	gguf_close(gf);
	tk = NULL;
}

int main(void)
{
	const char *p = getenv("RK1828_MODEL"), *h = getenv("RK1828_HYBRID_MODEL");
	struct gguf_file *gf;

	mock_rk_cards(cards);
	if (!p)
		p = "../shared/models/stories260K.gguf";
	if (!h)
		h = "build/synth/qwen35-engine.gguf";
	if (!load(p, &gf)) {
		test_llama();
		test_draft(p, h);
		unload(gf);
	}
	if (!load(h, &gf)) {
		test_hybrid();
		unload(gf);
	}
	tap_ok(mock_rk_live_objs() == 0, "every BO and syncobj released");
	mock_rk_free();
	return tap_done();
}
