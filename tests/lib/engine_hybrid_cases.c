// SPDX-License-Identifier: MIT
/*
 * Engine checks of a hybrid model (qwen35: Gated DeltaNet blocks with a
 * recurrent state per slot, userspace/engine/engine_hybrid.c), shared by the
 * host test tests/unit/test_engine_hybrid.c (mock cards) and the guest tool
 * tests/tools/engine_check.c (real cards), on 2 cards, bucket 8.
 *
 * A slot's recurrent state describes its whole history, so a prefix-cache
 * hit must restore a checkpoint taken at a micro-batch boundary (or use
 * the live state when the slot's whole history is the new prompt's
 * prefix). Checks, each against the same request on a fresh engine, with
 * the greedy tokens, their log-probabilities and the logits of the last
 * prompt position compared bit for bit:
 * - a repeated prompt of 41 tokens restores the checkpoint at 40 (the last
 *   bucket boundary before the 40 tokens the scheduler may reuse);
 * - a prompt sharing 20 tokens restores the checkpoint at 16;
 * - the first prompt after that (the slot's checkpoints past 16 were
 *   dropped when its history changed) restores 16 again;
 * - a prompt that extends the slot's whole history continues from the
 *   live state (cached = every token the slot evaluated);
 * - with one checkpoint a slot (the planner's floor when memory is
 *   short): the repeated prompt still restores 40, the prompt sharing 20
 *   tokens is a miss (the cost), the live state still continues;
 * - two slots running different prompts at once give what each gives
 *   alone (the states of the slots do not mix);
 * - the counters of engine_get_stats().
 * Output: TAP.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "gguf.h"
#include "model.h"
#include "planner.h"
#include "tokenizer.h"

#include "engine_cases.h"
#include "tap.h"

#define N_GEN 12
#define MAX_PROMPT 128

/* One request and what it produced. */
struct hres {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	int32_t ids[N_GEN];
	float lp[N_GEN];
	int n_ids;
	int cached;
	int finish;
	float *logits;		/* n_vocab: last prompt position */
	struct engine_req *q;
};

static const struct engine_cases_env *env;
static struct llm_model M;
static struct tokenizer *tk;

static void on_event(const struct engine_event *ev, void *user)
{
	struct hres *r = user;
	int i;

	pthread_mutex_lock(&r->mu);
	for (i = 0; i < ev->n_ids && r->n_ids < N_GEN; i++) {
		r->lp[r->n_ids] = ev->logprobs ? ev->logprobs[i].logprob : 1.0f;
		r->ids[r->n_ids++] = ev->ids[i];
	}
	if (ev->kind != ENGINE_EV_TEXT) {
		r->cached = ev->usage.cached_tokens;
		r->finish = ev->finish;
		r->done = true;
		pthread_cond_signal(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
}

/*
 * An engine of @n_slots on the 2 cards; @ckpt > 0: run with the plan of
 * @ckpt checkpoints a slot (what the planner gives when memory is short).
 */
static struct engine *mk_engine_ckpt(int n_slots, uint32_t ckpt, struct engine_info *info)
{
	struct engine_opts o = { .n_slots = n_slots, .n_ctx = 256, .bucket = 8,
				 .queue_max = 4, .strict_slots = true };
	static struct plan p;
	static struct plan_sizes sz;
	struct engine *e = NULL;
	char err[512];

	if (env->reset)
		env->reset();
	if (ckpt) {
		if (engine_plan_ckpts(&M, &o, env->cards, 2, ckpt, &p, &sz))
			return NULL;
		o.plan = &p;
		o.sizes = &sz;
	}
	if (engine_create(&e, &M, tk, env->cards, NULL, 2, &o, err, sizeof(err)))
		fprintf(stderr, "# engine_create: %s\n", err);
	if (e && info)
		engine_get_info(e, info);
	return e;
}

static struct engine *mk_engine(int n_slots)
{
	return mk_engine_ckpt(n_slots, 0, NULL);
}

/* Submit @n tokens greedily for N_GEN tokens into @r (0 or the error). */
static int submit(struct engine *e, struct hres *r, const int32_t *toks, int n)
{
	struct engine_request rq = { 0 };
	char err[256];
	int ret;

	free(r->logits);
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	r->logits = calloc(M.n_vocab, sizeof(float));
	rq.prompt = toks;
	rq.n_prompt = n;
	rq.max_tokens = N_GEN;
	rq.ignore_eos = true;
	rq.s.top_p = 1.0f;
	rq.s.logprobs = true;
	rq.prompt_logits = r->logits;
	rq.cb = on_event;
	rq.user = r;
	ret = r->logits ? engine_submit(e, &rq, &r->q, err, sizeof(err)) : -1;
	if (ret) {
		fprintf(stderr, "# engine_submit: %s\n", err);
		r->done = true;
	}
	return ret;
}

static void wait_put(struct hres *r)
{
	pthread_mutex_lock(&r->mu);
	while (!r->done)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	engine_req_put(r->q);
	r->q = NULL;
}

/* @toks on a fresh one-slot engine. */
static void run_fresh(const int32_t *toks, int n, struct hres *r)
{
	struct engine *e = mk_engine(1);

	if (!e || submit(e, r, toks, n))
		r->n_ids = -1;
	else
		wait_put(r);
	engine_destroy(e);
}

/* Same tokens, log-probabilities and prompt logits, bit for bit. */
static bool same(const struct hres *a, const struct hres *b)
{
	return a->n_ids == N_GEN && b->n_ids == N_GEN &&
	       !memcmp(a->ids, b->ids, sizeof(a->ids)) && !memcmp(a->lp, b->lp, sizeof(a->lp)) &&
	       !memcmp(a->logits, b->logits, sizeof(float) * M.n_vocab);
}

/* A deterministic prompt of @n byte-level tokens starting with @c. */
static int mk_prompt(int32_t *toks, int n, char c)
{
	char text[MAX_PROMPT + 1];
	int i;

	for (i = 0; i < n; i++)
		text[i] = (char)('a' + (c - 'a' + i * 7) % 26);
	text[n] = 0;
	return tok_encode(tk, text, true, toks, MAX_PROMPT);
}

static void test_prefix(void)
{
	static struct hres r1, r2, r3, r4, r5, fa, fc, fd;
	int32_t a[MAX_PROMPT], c[MAX_PROMPT], d[MAX_PROMPT + N_GEN + 8];
	int n_a = mk_prompt(a, 41, 'a'), n_c, n_d, i;
	struct engine_stats st;
	struct engine *e;

	/* c: a's first 20 tokens, then others; d: a + its generated tokens + 5. */
	memcpy(c, a, sizeof(a));
	for (i = 20; i < 36; i++)
		c[i] = a[i] == a[0] ? a[1] : a[0];
	n_c = 36;
	if (!tap_ok(n_a == 41, "hybrid prefix: the 41-letter prompt is 41 tokens (%d)", n_a))
		return;
	run_fresh(a, n_a, &fa);
	run_fresh(c, n_c, &fc);
	e = mk_engine(1);
	if (!tap_ok(e != NULL && fa.n_ids == N_GEN, "hybrid: engine with 1 slot on 2 cards"))
		return;
	submit(e, &r1, a, n_a);
	wait_put(&r1);
	tap_ok(r1.cached == 0 && same(&r1, &fa), "hybrid prefix: first request is a miss, "
	       "same as a fresh engine (cached %d)", r1.cached);
	submit(e, &r2, a, n_a);
	wait_put(&r2);
	tap_ok(r2.cached == 40 && same(&r2, &fa),
	       "hybrid prefix: the same prompt restores the checkpoint at 40 of 41 tokens (cached %d), "
	       "same tokens, logprobs and logits bit for bit", r2.cached);
	submit(e, &r3, c, n_c);
	wait_put(&r3);
	tap_ok(r3.cached == 16 && same(&r3, &fc),
	       "hybrid prefix: a prompt sharing 20 tokens restores the checkpoint at 16 (cached %d), "
	       "same as a fresh engine", r3.cached);
	submit(e, &r4, a, n_a);
	wait_put(&r4);
	tap_ok(r4.cached == 16 && same(&r4, &fa),
	       "hybrid prefix: back to the first prompt: checkpoints past 16 were dropped, restores 16 "
	       "(cached %d), same output", r4.cached);

	/* The slot evaluated a and the first N_GEN - 1 tokens it generated. */
	memcpy(d, a, sizeof(int32_t) * n_a);
	memcpy(d + n_a, r4.ids, sizeof(int32_t) * (N_GEN - 1));
	n_d = n_a + N_GEN - 1;
	for (i = 0; i < 5; i++)
		d[n_d++] = c[20 + i];
	submit(e, &r5, d, n_d);
	wait_put(&r5);
	run_fresh(d, n_d, &fd);
	tap_ok(r5.cached == n_a + N_GEN - 1 && same(&r5, &fd),
	       "hybrid prefix: a prompt extending the slot's whole history continues from the live "
	       "state (cached %d of %d), same as a fresh engine", r5.cached, n_d);
	engine_get_stats(e, &st);
	tap_ok(st.prefix_hits == 4 && st.prefix_misses == 1 &&
	       st.cached_tokens == (uint64_t)(40 + 16 + 16 + r5.cached),
	       "hybrid prefix: stats count 4 hits, 1 miss, %llu cached tokens",
	       (unsigned long long)st.cached_tokens);
	engine_destroy(e);
	free(r1.logits); free(r2.logits); free(r3.logits); free(r4.logits); free(r5.logits);
	free(fa.logits); free(fc.logits); free(fd.logits);
}

/*
 * One checkpoint a slot (ENGINE_SNAPS_MIN_PER_SLOT, the planner's floor):
 * it holds the last prefill micro-batch's boundary, so a repeated prompt
 * still restores 40 of 41 tokens; a prompt sharing 20 tokens finds no
 * checkpoint at or before 20 (the one there is at 40) and is a miss where
 * 4 checkpoints restore 16, the cost of fewer; a prompt extending the
 * slot's whole history continues from the live state. Every output is
 * what a fresh engine gives.
 */
static void test_prefix_one_ckpt(void)
{
	static struct hres r1, r2, r3, r4, fa, fc, fd;
	int32_t a[MAX_PROMPT], c[MAX_PROMPT], d[MAX_PROMPT + N_GEN + 8];
	int n_a = mk_prompt(a, 41, 'a'), n_c = 36, n_d, i;
	struct engine_info info = { 0 };
	struct engine *e;

	memcpy(c, a, sizeof(a));
	for (i = 20; i < 36; i++)
		c[i] = a[i] == a[0] ? a[1] : a[0];
	run_fresh(a, n_a, &fa);
	run_fresh(c, n_c, &fc);
	e = mk_engine_ckpt(1, ENGINE_SNAPS_MIN_PER_SLOT, &info);
	if (!tap_ok(e && info.n_ckpt == ENGINE_SNAPS_MIN_PER_SLOT &&
		    info.n_snap == ENGINE_SNAPS_MIN_PER_SLOT,
		    "hybrid, 1 checkpoint a slot: the engine runs the plan's %u snapshots, %u checkpoints",
		    info.n_snap, info.n_ckpt))
		return;
	submit(e, &r1, a, n_a);
	wait_put(&r1);
	submit(e, &r2, a, n_a);
	wait_put(&r2);
	tap_ok(r1.cached == 0 && same(&r1, &fa) && r2.cached == 40 && same(&r2, &fa),
	       "1 checkpoint: a miss, then the same prompt restores the checkpoint at 40 (cached %d, %d), same output",
	       r1.cached, r2.cached);
	submit(e, &r3, c, n_c);
	wait_put(&r3);
	tap_ok(r3.cached == 0 && same(&r3, &fc),
	       "1 checkpoint: a prompt sharing 20 tokens is a miss (cached %d; 4 checkpoints restore 16), same output",
	       r3.cached);
	memcpy(d, c, sizeof(int32_t) * n_c);
	memcpy(d + n_c, r3.ids, sizeof(int32_t) * (N_GEN - 1));
	n_d = n_c + N_GEN - 1;
	for (i = 0; i < 5; i++)
		d[n_d++] = a[i + 1];
	submit(e, &r4, d, n_d);
	wait_put(&r4);
	run_fresh(d, n_d, &fd);
	tap_ok(r4.cached == n_c + N_GEN - 1 && same(&r4, &fd),
	       "1 checkpoint: a prompt extending the slot's history continues from the live state (cached %d of %d), same output",
	       r4.cached, n_d);
	engine_destroy(e);
	free(r1.logits); free(r2.logits); free(r3.logits); free(r4.logits);
	free(fa.logits); free(fc.logits); free(fd.logits);
}

static void test_slots(void)
{
	static struct hres alone[3], together[3];
	int32_t p[3][MAX_PROMPT];
	int n[3], i, ok = 1;
	struct engine *e;

	for (i = 0; i < 3; i++) {
		n[i] = mk_prompt(p[i], 13 + 6 * i, (char)('c' + 5 * i));
		run_fresh(p[i], n[i], &alone[i]);
	}
	e = mk_engine(3);
	if (!tap_ok(e != NULL, "hybrid: engine with 3 slots on 2 cards"))
		return;
	for (i = 0; i < 3; i++)
		ok &= submit(e, &together[i], p[i], n[i]) == 0;
	for (i = 0; i < 3; i++) {
		wait_put(&together[i]);
		ok &= same(&together[i], &alone[i]);
		ok &= i == 0 || memcmp(alone[i].ids, alone[0].ids, sizeof(alone[0].ids));
	}
	tap_ok(ok, "hybrid slots: 3 different prompts at once give what each gives alone "
	       "(and differ from each other)");
	engine_destroy(e);
	for (i = 0; i < 3; i++) {
		free(alone[i].logits);
		free(together[i].logits);
	}
}

void engine_cases_hybrid(const struct engine_cases_env *e, const char *model_path)
{
	struct gguf_file *gf;
	char err[512];

	env = e;
	gf = gguf_open(model_path, err, sizeof(err));
	if (!gf || llm_model_load(&M, gf, err, sizeof(err)) ||
	    !(tk = tok_load(gf, err, sizeof(err)))) {
		tap_ok(false, "load %s: %s", model_path, err);
		if (gf)
			gguf_close(gf);
		return;
	}
	if (tap_ok(llm_model_hybrid(&M), "%s is a hybrid (DeltaNet) model", model_path)) {
		test_prefix();
		test_prefix_one_ckpt();
		test_slots();
	}
	if (env->live_objs)
		tap_ok(env->live_objs() == 0, "hybrid: every BO and syncobj released (%d left)",
		       env->live_objs());
	tok_free(tk);
	llm_model_free(&M);
	gguf_close(gf);
}
