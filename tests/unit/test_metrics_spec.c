// SPDX-License-Identifier: MIT
/*
 * /metrics of speculative decoding (userspace/server/metrics.c): the real
 * engine over the mock librk1828 (2 mock cards) with --spec ngram on
 * stories260K ($RK1828_MODEL or ../shared/models/stories260K.gguf) runs
 * three requests (two speculating, one with speculative.n_max -1); the
 * page metrics_render() gives then holds rk1828_spec_draft_tokens_total,
 * rk1828_spec_accepted_tokens_total and rk1828_spec_verify_passes_total
 * labelled drafter="ngram", and vLLM's vllm:spec_decode_num_* counters,
 * whose values are the sums of the responses' usage.draft_n (timings.
 * draft_n of /completion) and draft_n_accepted. Without a drafter the page
 * has none of them. Output: TAP.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "gguf.h"
#include "model.h"
#include "metrics.h"
#include "srv.h"
#include "tokenizer.h"

#include "mock_rk.h"
#include "tap.h"

struct res {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	int n_ids, draft_n, draft_acc;
	struct engine_req *q;
};

static struct rk_card cards[MOCK_CARDS];
static struct llm_model M;
static struct tokenizer *tk;

static void on_event(const struct engine_event *ev, void *user)
{
	struct res *r = user;

	pthread_mutex_lock(&r->mu);
	r->n_ids += ev->n_ids;
	if (ev->kind == ENGINE_EV_DONE) {
		r->draft_n = ev->usage.draft_n;
		r->draft_acc = ev->usage.draft_n_accepted;
		r->done = true;
		pthread_cond_signal(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
}

/* Run @text for @n_gen tokens on @e (speculative.n_max @draft_max). */
static void run(struct engine *e, const char *text, int n_gen, int draft_max, struct res *r)
{
	struct engine_request rq = { 0 };
	int32_t toks[256];
	char err[256];

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	rq.prompt = toks;
	rq.n_prompt = tok_encode(tk, text, true, toks, 256);
	rq.max_tokens = n_gen;
	rq.ignore_eos = true;
	rq.s.top_p = 1.0f;
	rq.draft_max = draft_max;
	rq.cb = on_event;
	rq.user = r;
	if (engine_submit(e, &rq, &r->q, err, sizeof(err))) {
		fprintf(stderr, "# engine_submit: %s\n", err);
		return;
	}
	pthread_mutex_lock(&r->mu);
	while (!r->done)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	engine_req_put(r->q);
}

static struct engine *mk(enum spec_kind spec)
{
	struct engine_opts o = { .n_slots = 1, .n_ctx = 256, .bucket = 8, .queue_max = 4,
				 .strict_slots = true, .spec = spec, .draft_max = 4 };
	struct engine *e = NULL;
	char err[512];

	mock_rk_reset();
	if (engine_create(&e, &M, tk, cards, NULL, 2, &o, err, sizeof(err)))
		fprintf(stderr, "# engine_create: %s\n", err);
	return e;
}

/* The value of the sample line that starts with @prefix, or -1. */
static long long sample(const char *page, const char *prefix)
{
	const char *p = page;
	size_t n = strlen(prefix);

	while (p && *p) {
		if (!strncmp(p, prefix, n) && p[n] == ' ')
			return strtoll(p + n + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* The /metrics page of a server holding @e. */
static char *page_of(struct engine *e)
{
	static struct srv s;
	size_t len = 0;
	char *pg;

	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&s.lock, NULL);
	atomic_store(&s.state, SRV_READY);
	s.e = e;
	pg = metrics_render(&s, &len);
	pthread_mutex_destroy(&s.lock);
	return pg;
}

static void test_counters(void)
{
	static const char *story =
		"Once upon a time, there was a little girl named Lily. She liked to play. "
		"Once upon a time, there was a little boy named Tom. He liked to";
	struct engine *e = mk(SPEC_NGRAM);
	long long d, a, v;
	struct res r[3];
	int sum_n = 0, sum_a = 0, i;
	char *pg;

	if (!e) {
		tap_ok(false, "engine with --spec ngram");
		return;
	}
	run(e, story, 48, 0, &r[0]);
	run(e, "Tom had a red ball. Tom had a red ball. Tom had a", 32, 0, &r[1]);
	run(e, "Tom had a red ball. Tom had a", 16, -1, &r[2]);
	for (i = 0; i < 3; i++) {
		sum_n += r[i].draft_n;
		sum_a += r[i].draft_acc;
	}
	tap_ok(r[0].draft_n > 0 && r[0].draft_acc > 0 && r[2].draft_n == 0,
	       "requests: draft_n %d, %d, %d; accepted %d, %d, %d", r[0].draft_n, r[1].draft_n,
	       r[2].draft_n, r[0].draft_acc, r[1].draft_acc, r[2].draft_acc);
	pg = page_of(e);
	d = sample(pg, "rk1828_spec_draft_tokens_total{drafter=\"ngram\"}");
	a = sample(pg, "rk1828_spec_accepted_tokens_total{drafter=\"ngram\"}");
	v = sample(pg, "rk1828_spec_verify_passes_total{drafter=\"ngram\"}");
	tap_ok(d == sum_n && a == sum_a,
	       "rk1828_spec_{draft,accepted}_tokens_total{drafter=\"ngram\"} %lld, %lld: the responses' draft_n sums %d, %d",
	       d, a, sum_n, sum_a);
	tap_ok(v > 0 && v <= d, "rk1828_spec_verify_passes_total %lld: 1..draft tokens", v);
	tap_ok(sample(pg, "vllm:spec_decode_num_draft_tokens_total") == sum_n &&
	       sample(pg, "vllm:spec_decode_num_accepted_tokens_total") == sum_a &&
	       sample(pg, "vllm:spec_decode_num_drafts_total") == v,
	       "vllm:spec_decode_num_{draft_tokens,accepted_tokens,drafts}_total agree");
	tap_ok(pg && strstr(pg, "# TYPE rk1828_spec_draft_tokens_total counter\n") &&
	       strstr(pg, "# TYPE vllm:spec_decode_num_accepted_tokens_total counter\n"),
	       "the families are typed counters");
	free(pg);
	engine_destroy(e);

	e = mk(SPEC_NONE);
	pg = e ? page_of(e) : NULL;
	tap_ok(pg && !strstr(pg, "spec_") && strstr(pg, "rk1828_generated_tokens_total"),
	       "without --spec the page has no speculative decoding families");
	free(pg);
	engine_destroy(e);
}

int main(void)
{
	const char *p = getenv("RK1828_MODEL");
	struct gguf_file *gf;
	char err[256];

	if (!p)
		p = "../shared/models/stories260K.gguf";
	mock_rk_cards(cards);
	gf = gguf_open(p, err, sizeof(err));
	if (!gf || llm_model_load(&M, gf, err, sizeof(err)) ||
	    !(tk = tok_load(gf, err, sizeof(err)))) {
		tap_ok(false, "load %s: %s", p, err);
		return tap_done();
	}
	test_counters();
	tok_free(tk);
	llm_model_free(&M);
	gguf_close(gf);
	tap_ok(mock_rk_live_objs() == 0, "every BO and syncobj released");
	mock_rk_free();
	return tap_done();
}
