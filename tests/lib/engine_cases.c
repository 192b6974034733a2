// SPDX-License-Identifier: MIT
/*
 * Engine checks (userspace/engine/engine*.c) shared by the host test
 * tests/unit/test_engine.c (mock cards, tests/lib/mock_rk.c) and the guest
 * tool tests/tools/engine_check.c (real cards), with stories260K on 2
 * cards.
 *
 * Checks: four greedy requests submitted together produce the same tokens
 * and text as each run alone, and really shared micro-batches; a repeated
 * prompt is a prefix-cache hit (cached_tokens = n_prompt - 1) with the
 * same output; a shorter prompt sharing a cached prefix reuses n_prompt -
 * 1 tokens and gives the output of a fresh engine; a stop string cuts the
 * text exactly where the unstopped text has it; cancellation finishes a
 * running request with CANCELLED and frees its slot for the next one;
 * queue bound (-EBUSY), context bound (-E2BIG) and bad requests (-EINVAL);
 * max_tokens 0; greedy logprobs; engine_destroy() cancels what runs; the
 * counters of engine_get_stats(); an idle engine whose card goes away
 * reports the failure by itself (no request needed) and fails what comes
 * next with ERROR. Output: TAP.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "tokenizer.h"
#include "engine.h"
#include "model.h"

#include "engine_cases.h"
#include "tap.h"

#define MAX_OUT 4096

/* What one request produced. */
struct res {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	char text[MAX_OUT];
	size_t len;
	int32_t ids[512];
	int n_ids;
	float lp[512], top0_lp[512];
	int32_t top0[512], top1[512];
	int n_text_events;
	int cancel_after;	/* cancel once this many TEXT events came (0: never) */
	struct engine_req *q;
	struct engine_event done_ev;
	bool bad_utf8;
};

static const struct engine_cases_env *env;
static struct llm_model M;
static struct tokenizer *tk;

static void res_init(struct res *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
}

static void on_event(const struct engine_event *ev, void *user)
{
	struct res *r = user;
	int i;

	pthread_mutex_lock(&r->mu);
	if (r->len + ev->len < MAX_OUT) {
		memcpy(r->text + r->len, ev->text, ev->len);
		r->len += ev->len;
		r->text[r->len] = 0;
	}
	for (i = 0; i < ev->n_ids && r->n_ids < 512; i++) {
		if (ev->logprobs) {
			r->lp[r->n_ids] = ev->logprobs[i].logprob;
			r->top0[r->n_ids] = ev->logprobs[i].n_top ? ev->logprobs[i].top[0].id : -1;
			r->top1[r->n_ids] = ev->logprobs[i].n_top > 1 ? ev->logprobs[i].top[1].id : -1;
			r->top0_lp[r->n_ids] = ev->logprobs[i].n_top ?
					       ev->logprobs[i].top[0].logprob : 1;
		}
		r->ids[r->n_ids++] = ev->ids[i];
	}
	if (ev->kind == ENGINE_EV_TEXT) {
		r->n_text_events++;
		if (r->cancel_after && r->n_text_events == r->cancel_after)
			engine_cancel(r->q);
	} else {
		r->done_ev = *ev;
		r->done_ev.text = NULL;
		r->done_ev.ids = NULL;
		r->done_ev.logprobs = NULL;
		r->done_ev.error = NULL;
		r->done = true;
		pthread_cond_signal(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
}

static void res_wait(struct res *r)
{
	pthread_mutex_lock(&r->mu);
	while (!r->done)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
}

static struct engine *mk_engine(int n_slots, int queue, int n_cards)
{
	struct engine_opts o = { .n_slots = n_slots, .n_ctx = 256, .bucket = 8,
				 .queue_max = queue, .strict_slots = true };
	struct engine *e = NULL;
	char err[512];
	int ret;

	if (env->reset)
		env->reset();
	ret = engine_create(&e, &M, tk, env->cards, NULL, n_cards, &o, err, sizeof(err));
	if (ret)
		fprintf(stderr, "# engine_create: %s\n", err);
	return e;
}

static int encode(const char *text, int32_t *toks, int max)
{
	return tok_encode(tk, text, true, toks, max);
}

/* Submit @text greedily for @n tokens; returns engine_submit()'s value. */
static int submit(struct engine *e, struct res *r, const char *text, int n,
		  const char *const *stop, int n_stop)
{
	struct engine_request rq = { 0 };
	int32_t toks[256];
	char err[256];

	int cancel_after = r->cancel_after;

	res_init(r);
	r->cancel_after = cancel_after;
	rq.n_prompt = encode(text, toks, 256);
	rq.prompt = toks;
	rq.max_tokens = n;
	rq.s.top_p = 1.0f;
	rq.stop = stop;
	rq.n_stop = n_stop;
	rq.cb = on_event;
	rq.user = r;
	return engine_submit(e, &rq, &r->q, err, sizeof(err));
}

static void run_alone(const char *text, int n, struct res *r)
{
	struct engine *e = mk_engine(1, 4, 2);

	if (!e || submit(e, r, text, n, NULL, 0)) {
		r->done = true;
		r->len = 0;
		engine_destroy(e);
		return;
	}
	res_wait(r);
	engine_req_put(r->q);
	engine_destroy(e);
}

static const char *prompts[4] = {
	"Once upon a time",
	"The little dog",
	"Lily wanted to play with her ball because",
	"One day, a big red",
};

static void test_concurrent(void)
{
	static struct res alone[4], together[4];
	struct engine_stats st;
	struct engine *e;
	int i, same = 1, nonempty = 1;

	for (i = 0; i < 4; i++)
		run_alone(prompts[i], 24, &alone[i]);
	e = mk_engine(4, 4, 2);
	tap_ok(e != NULL, "engine with 4 slots on 2 cards");
	if (!e)
		return;
	for (i = 0; i < 4; i++)
		submit(e, &together[i], prompts[i], 24, NULL, 0);
	for (i = 0; i < 4; i++) {
		res_wait(&together[i]);
		same &= together[i].len == alone[i].len &&
			!memcmp(together[i].text, alone[i].text, alone[i].len) &&
			together[i].n_ids == alone[i].n_ids &&
			!memcmp(together[i].ids, alone[i].ids, sizeof(int32_t) * alone[i].n_ids);
		nonempty &= alone[i].len > 0 && alone[i].n_ids == 24;
		engine_req_put(together[i].q);
	}
	tap_ok(nonempty, "alone: 4 prompts give 24 tokens of text each (\"%.30s...\")",
	       alone[0].text);
	tap_ok(same, "4 concurrent greedy requests equal each run alone (tokens and text)");
	if (env->text_out) {
		FILE *f = fopen(env->text_out, "w");

		if (f) {
			fwrite(together[0].text, 1, together[0].len, f);
			fclose(f);
		}
	}
	engine_get_stats(e, &st);
	tap_ok(st.steps > 0 && st.batch_tokens > st.steps * 3 / 2,
	       "micro-batches were shared: %llu tokens in %llu steps",
	       (unsigned long long)st.batch_tokens, (unsigned long long)st.steps);
	tap_ok(st.requests[ENGINE_FINISH_LENGTH] == 4 && st.completion_tokens == 96 &&
	       st.active == 0 && st.queued == 0 && st.n_slots == 4,
	       "stats: 4 finished by length, 96 tokens, nothing active");
	tap_ok(st.n_cards == 2 && st.card_busy[0] > 0 && st.card_busy[0] <= 1.0,
	       "stats: card busy fraction measured (%.3f, %.3f)", st.card_busy[0],
	       st.card_busy[1]);
	engine_destroy(e);
}

static void test_prefix(void)
{
	static struct res a, b, c, fresh;
	const char *p = "Tom and his mom went to the park. They saw a big tree";
	const char *shorter = "Tom and his mom went to the park.";
	int32_t toks[256];
	int n_p = encode(p, toks, 256), n_s = encode(shorter, toks, 256);
	struct engine_stats st;
	struct engine *e = mk_engine(2, 4, 2);

	if (!e)
		return;
	submit(e, &a, p, 16, NULL, 0);
	res_wait(&a);
	submit(e, &b, p, 16, NULL, 0);
	res_wait(&b);
	tap_ok(a.done_ev.usage.cached_tokens == 0 && b.done_ev.usage.cached_tokens == n_p - 1,
	       "prefix: the same prompt again reuses %d of %d tokens (first: %d)",
	       b.done_ev.usage.cached_tokens, n_p, a.done_ev.usage.cached_tokens);
	tap_ok(a.len > 0 && a.len == b.len && !memcmp(a.text, b.text, a.len),
	       "prefix: identical text with and without the hit");
	submit(e, &c, shorter, 16, NULL, 0);
	res_wait(&c);
	run_alone(shorter, 16, &fresh);
	tap_ok(c.done_ev.usage.cached_tokens == n_s - 1 && c.len == fresh.len &&
	       !memcmp(c.text, fresh.text, c.len),
	       "prefix: a shorter prompt sharing the cached prefix reuses %d tokens, same text as a fresh engine",
	       c.done_ev.usage.cached_tokens);
	engine_get_stats(e, &st);
	tap_ok(st.prefix_hits == 2 && st.prefix_misses == 1 &&
	       st.cached_tokens == (uint64_t)(n_p - 1 + n_s - 1),
	       "prefix: stats count 2 hits, 1 miss, %llu cached tokens",
	       (unsigned long long)st.cached_tokens);
	engine_req_put(a.q);
	engine_req_put(b.q);
	engine_req_put(c.q);
	engine_destroy(e);
}

static void test_stop(void)
{
	static struct res full, cut;
	const char *stops[1];
	char stop[16];
	const char *at;
	struct engine *e;

	run_alone(prompts[0], 40, &full);
	if (full.len < 40) {
		tap_ok(false, "stop: need a longer greedy text");
		return;
	}
	/* A stop string from the middle of the text, spanning words. */
	snprintf(stop, sizeof(stop), "%.6s", full.text + full.len / 2);
	stops[0] = stop;
	at = strstr(full.text, stop);
	e = mk_engine(1, 4, 2);
	submit(e, &cut, prompts[0], 40, stops, 1);
	res_wait(&cut);
	tap_ok(cut.done_ev.finish == ENGINE_FINISH_STOP && cut.len == (size_t)(at - full.text) &&
	       !memcmp(cut.text, full.text, cut.len),
	       "stop: \"%s\" ends the text exactly before it (%zu bytes), finish stop", stop,
	       cut.len);
	tap_ok(cut.done_ev.usage.completion_tokens < full.done_ev.usage.completion_tokens &&
	       cut.n_ids < cut.done_ev.usage.completion_tokens,
	       "stop: fewer tokens generated; the stop's tokens are not listed as completed");
	engine_req_put(cut.q);
	engine_destroy(e);
}

static void test_cancel(void)
{
	static struct res a, b;
	struct engine *e = mk_engine(1, 4, 2);
	int ret;

	if (!e)
		return;
	res_init(&a);
	a.cancel_after = 3;
	ret = submit(e, &a, prompts[1], 200, NULL, 0);
	ret |= submit(e, &b, prompts[2], 8, NULL, 0);
	res_wait(&a);
	res_wait(&b);
	tap_ok(ret == 0 && a.done_ev.finish == ENGINE_FINISH_CANCELLED &&
	       a.done_ev.usage.completion_tokens < 12,
	       "cancel: finished CANCELLED within a step (%d tokens)",
	       a.done_ev.usage.completion_tokens);
	tap_ok(b.done_ev.finish == ENGINE_FINISH_LENGTH && b.done_ev.usage.completion_tokens == 8,
	       "cancel: the queued request got the slot and ran to its end");
	engine_req_put(a.q);
	engine_req_put(b.q);
	engine_destroy(e);
}

static void test_limits(void)
{
	static struct res r[4], z, lp;
	struct engine_request rq = { 0 };
	struct engine_req *q;
	int32_t toks[300];
	char err[256];
	struct engine *e = mk_engine(1, 1, 2);
	int a0, a1, a2, i, ok;

	if (!e)
		return;
	a0 = submit(e, &r[0], prompts[0], 20, NULL, 0);
	a1 = submit(e, &r[1], prompts[1], 4, NULL, 0);
	a2 = submit(e, &r[2], prompts[2], 4, NULL, 0);
	tap_ok(a0 == 0 && (a1 == 0 || a1 == -EBUSY) && a2 == -EBUSY,
	       "queue: one slot + queue of 1: the third request gets -EBUSY (%d %d %d)", a0, a1, a2);
	res_wait(&r[0]);
	engine_req_put(r[0].q);
	if (!a1) {
		res_wait(&r[1]);
		engine_req_put(r[1].q);
	}

	for (i = 0; i < 300; i++)
		toks[i] = 5;
	toks[0] = 1;
	rq.prompt = toks;
	rq.n_prompt = 250;
	rq.max_tokens = 10;
	rq.s.top_p = 1;
	rq.cb = on_event;
	rq.user = &z;
	tap_ok(engine_submit(e, &rq, &q, err, sizeof(err)) == -E2BIG && strstr(err, "256"),
	       "context: prompt + max_tokens beyond n_ctx is -E2BIG (\"%s\")", err);
	rq.n_prompt = 257;
	rq.max_tokens = -1;
	tap_ok(engine_submit(e, &rq, &q, NULL, 0) == -E2BIG, "context: prompt beyond n_ctx is -E2BIG");
	rq.n_prompt = 3;
	toks[1] = (int32_t)M.n_vocab;
	ok = engine_submit(e, &rq, &q, NULL, 0) == -EINVAL;
	toks[1] = 5;
	rq.s.top_p = 0;
	ok &= engine_submit(e, &rq, &q, NULL, 0) == -EINVAL;
	rq.s.top_p = 1;
	rq.cb = NULL;
	ok &= engine_submit(e, &rq, &q, NULL, 0) == -EINVAL;
	tap_ok(ok, "bad token id, top_p 0, no callback: -EINVAL");

	submit(e, &z, prompts[0], 0, NULL, 0);
	res_wait(&z);
	tap_ok(z.done_ev.finish == ENGINE_FINISH_LENGTH && z.len == 0 &&
	       z.done_ev.usage.completion_tokens == 0 && z.n_text_events == 0,
	       "max_tokens 0: no text, no tokens, finish length");
	engine_req_put(z.q);

	res_init(&lp);
	rq = (struct engine_request){ 0 };
	rq.n_prompt = encode(prompts[3], toks, 256);
	rq.prompt = toks;
	rq.max_tokens = 8;
	rq.s.top_p = 1;
	rq.s.logprobs = true;
	rq.s.n_probs = 3;
	rq.cb = on_event;
	rq.user = &lp;
	engine_submit(e, &rq, &lp.q, NULL, 0);
	res_wait(&lp);
	ok = lp.n_ids == 8;
	for (i = 0; i < lp.n_ids; i++)
		ok &= lp.top0[i] == lp.ids[i] && lp.lp[i] <= 0 && fabsf(lp.lp[i] - lp.top0_lp[i]) < 1e-6f;
	tap_ok(ok, "logprobs: greedy picks are the top alternative, log-probability <= 0");
	engine_req_put(lp.q);
	engine_destroy(e);
}

static void test_destroy(void)
{
	static struct res a, b;
	struct engine *e = mk_engine(1, 4, 2);

	if (!e)
		return;
	submit(e, &a, prompts[0], 200, NULL, 0);
	submit(e, &b, prompts[1], 200, NULL, 0);
	usleep(20000);
	engine_destroy(e);
	tap_ok(a.done && b.done && a.done_ev.finish == ENGINE_FINISH_CANCELLED &&
	       b.done_ev.finish == ENGINE_FINISH_CANCELLED,
	       "destroy: running and queued requests get DONE cancelled");
	engine_req_put(a.q);
	engine_req_put(b.q);
	if (env->live_objs)
		tap_ok(env->live_objs() == 0, "destroy: every BO and syncobj released (%d left)",
		       env->live_objs());
}

/*
 * A card unplugged while nothing runs: within a few probe intervals
 * (engine.c, ENGINE_PROBE_MS) engine_get_stats() says failed, naming the
 * card, and a request submitted then finishes with ERROR; a request that
 * ran before is untouched.
 */
static void test_unplug(void)
{
	static struct res before, after;
	struct engine_stats st = { 0 };
	struct engine *e;
	int i, ret;

	if (!env->unplug)
		return;
	e = mk_engine(1, 4, 2);
	if (!e)
		return;
	submit(e, &before, prompts[0], 8, NULL, 0);
	res_wait(&before);
	env->unplug(1, 1);
	for (i = 0; i < 100; i++) {
		engine_get_stats(e, &st);
		if (st.failed)
			break;
		usleep(100000);
	}
	tap_ok(before.done_ev.finish != ENGINE_FINISH_ERROR && before.n_ids == 8,
	       "unplug: the request before it finished normally (%d tokens)", before.n_ids);
	tap_ok(st.failed && strstr(st.failure, "card1") && strstr(st.failure, "No such device"),
	       "unplug: an idle engine reports the gone card by itself after %.1f s: \"%s\"",
	       i / 10.0, st.failure);
	ret = submit(e, &after, prompts[1], 8, NULL, 0);
	if (!ret)
		res_wait(&after);
	tap_ok(ret || after.done_ev.finish == ENGINE_FINISH_ERROR,
	       "unplug: the next request fails (submit %d, finish %d)", ret,
	       ret ? -1 : (int)after.done_ev.finish);
	if (!ret)
		engine_req_put(after.q);
	engine_req_put(before.q);
	engine_destroy(e);
	env->unplug(1, 0);
}

/* One greedy request of @n tokens over @text with sampling @s, alone on @e. */
static void run_with(struct engine *e, const char *text, int n, const struct sampler_params *s,
		     struct res *r)
{
	struct engine_request rq = { 0 };
	int32_t toks[256];

	res_init(r);
	rq.n_prompt = encode(text, toks, 256);
	rq.prompt = toks;
	rq.max_tokens = n;
	rq.s = *s;
	rq.ignore_eos = true;
	rq.cb = on_event;
	rq.user = r;
	if (engine_submit(e, &rq, &r->q, NULL, 0)) {
		r->done = true;
		return;
	}
	res_wait(r);
	engine_req_put(r->q);
}

static bool has_repeat(const int32_t *ids, int n, const int32_t *prompt, int n_prompt)
{
	int i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++)
			if (ids[j] == ids[i])
				return true;
		for (j = 0; j < n_prompt; j++)
			if (prompt[j] == ids[i])
				return true;
	}
	return false;
}

/*
 * logit_bias and the penalties through the engine (greedy): banning the
 * greedy first token gives the model's second choice, +100 forces a
 * token at every step, and a repeat penalty over the whole context keeps
 * a reply that repeats itself greedily free of repeats.
 */
static void test_sampling(void)
{
	static struct res base, r;
	struct sampler_params s = { .top_p = 1, .logprobs = true, .n_probs = 2 };
	struct sampler_bias b[1];
	struct engine *e = mk_engine(1, 4, 2);
	int32_t toks[256];
	int i, n_prompt, ok;

	if (!e)
		return;
	n_prompt = encode(prompts[0], toks, 256);
	run_with(e, prompts[0], 24, &s, &base);
	tap_ok(base.n_ids == 24 && base.top1[0] >= 0 && base.top1[0] != base.ids[0],
	       "greedy baseline: 24 tokens, a second choice at step 0 (%d after %d)",
	       base.top1[0], base.ids[0]);
	b[0].id = base.ids[0];
	b[0].bias = -INFINITY;
	s.bias = b;
	s.n_bias = 1;
	run_with(e, prompts[0], 4, &s, &r);
	tap_ok(r.n_ids == 4 && r.ids[0] == base.top1[0],
	       "logit_bias ban of greedy's first token %d: the first token is the second choice %d (got %d)",
	       base.ids[0], base.top1[0], r.n_ids ? r.ids[0] : -1);
	b[0].id = base.ids[1];
	b[0].bias = 100.0f;
	run_with(e, prompts[0], 8, &s, &r);
	ok = r.n_ids == 8;
	for (i = 0; ok && i < 8; i++)
		ok = r.ids[i] == b[0].id;
	tap_ok(ok, "logit_bias +100 on token %d: all 8 tokens are %d", b[0].id, b[0].id);
	s.n_bias = 0;
	s.bias = NULL;
	s.repeat_penalty = 1e9f;
	s.repeat_last_n = -1;
	run_with(e, prompts[0], 16, &s, &r);
	tap_ok(has_repeat(base.ids, 24, toks, n_prompt) && r.n_ids == 16 &&
	       !has_repeat(r.ids, 16, toks, n_prompt),
	       "repeat penalty 1e9 over the whole context: 16 tokens, none repeated or from the prompt (greedy repeats)");
	engine_destroy(e);
}

void engine_cases_run(const struct engine_cases_env *e, const char *model_path)
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
	test_concurrent();
	test_prefix();
	test_stop();
	test_cancel();
	test_limits();
	test_sampling();
	test_destroy();
	test_unplug();
	tok_free(tk);
	llm_model_free(&M);
	gguf_close(gf);
}
