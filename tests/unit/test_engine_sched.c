// SPDX-License-Identifier: MIT
/*
 * The engine's schedule while a long prompt prefills next to running
 * streams (issue 7: "one long prompt must not stall the others' streams
 * for more than one bucket's time"), on the real engine thread, pipeline
 * and scheduler over the mock librk1828 (tests/lib/mock_rk.c) with
 * stories260K, read from the engine's trace (engine_opts.trace: every
 * micro-batch submitted and collected, with its tokens).
 *
 * For 1..3 decoding sessions on 1, 2 and 4 cards and a prompt of 12
 * buckets submitted while they decode, for every pair of consecutive
 * decode tokens of every running session during that prefill:
 *  - at most one bucket of prompt tokens is scheduled between them (in the
 *    micro-batches submitted after the first one's, up to and including
 *    the second one's);
 *  - when the second one is submitted, the micro-batches in flight ahead
 *    of it and its own hold at most one bucket of prompt tokens together
 *    (what the token waits for on every card);
 * and also: a micro-batch with decode tokens holds at most bucket / D
 * tokens (D micro-batches in flight), never more micro-batches in flight
 * than cards (2 with one card), the pipeline is full during the prefill
 * (every card has work),
 * the streams get a token for every bucket of the prompt (interleaving,
 * not a stream paused until the prompt is done), a prompt alone is cut
 * into whole buckets, and every request's greedy tokens equal those of
 * the same request run alone.
 *
 * Then on a modelled card clock (mock_rk_clock(): an EXEC costs a fixed
 * time plus a time per token, copies nothing), on 1, 2 and 4 cards: no two
 * tokens of a running stream are further apart during the long prefill
 * than one bucket's time, the interval between two buckets of the same
 * prompt prefilled alone - which needs the engine's estimate of the fixed
 * cost (scheduler.h, sched_mb_limit()). Output: TAP.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "gguf.h"
#include "model.h"
#include "tokenizer.h"

#include "mock_rk.h"
#include "tap.h"

#define BUCKET		16
#define LONG_BUCKETS	12
#define LONG_LEN	(BUCKET * LONG_BUCKETS)
#define MAX_DEC		3
#define DEC_TOKENS	64
#define MAX_EV		4096

/* One traced event, with a copy of its tokens. */
struct tev {
	enum engine_trace_kind kind;
	uint64_t mb;
	int n_flight, depth, n_tok;
	double t_ms;
	struct engine_trace_tok tok[BUCKET];
};

struct trace {
	pthread_mutex_t mu;
	struct tev ev[MAX_EV];
	int n;
	bool overflow;
};

/* What one request produced. */
struct res {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	int32_t ids[DEC_TOKENS + 8];
	int64_t t_ns[DEC_TOKENS + 8];	/* when each token arrived (rk_now_ns()) */
	int n_ids;
	enum engine_finish finish;
	struct engine_req *q;
};

/*
 * The long prompt is submitted from a stream's callback (the engine
 * thread) when that stream has @at tokens: where it arrives does not
 * depend on how the host schedules the test's threads.
 */
struct trigger {
	struct res *when;	/* the stream watched */
	int at;
	struct engine *e;
	struct res *r;		/* the long prompt's result */
	const int32_t *p;
	int n, max_tokens;
	int ret;
	bool fired;
};

static struct rk_card cards[MOCK_CARDS];
static struct trigger trig;
static struct llm_model M;
static struct tokenizer *tk;
static int32_t long_prompt[LONG_LEN];

static void on_trace(void *user, const struct engine_trace *t)
{
	struct trace *tr = user;
	struct tev *v;

	pthread_mutex_lock(&tr->mu);
	if (tr->n == MAX_EV || t->n_tok > BUCKET) {
		tr->overflow = true;
		pthread_mutex_unlock(&tr->mu);
		return;
	}
	v = &tr->ev[tr->n++];
	v->kind = t->kind;
	v->mb = t->mb;
	v->n_flight = t->n_flight;
	v->depth = t->depth;
	v->n_tok = t->n_tok;
	v->t_ms = t->t_ms;
	memcpy(v->tok, t->tok, (size_t)t->n_tok * sizeof(*t->tok));
	pthread_mutex_unlock(&tr->mu);
}

static int submit(struct engine *e, struct res *r, const int32_t *p, int n, int max_tokens);

static void on_event(const struct engine_event *ev, void *user)
{
	struct res *r = user;
	int i;

	if (trig.when == r && !trig.fired && r->n_ids + ev->n_ids >= trig.at) {
		trig.fired = true;
		trig.ret = submit(trig.e, trig.r, trig.p, trig.n, trig.max_tokens);
	}

	pthread_mutex_lock(&r->mu);
	for (i = 0; i < ev->n_ids && r->n_ids < (int)(sizeof(r->ids) / sizeof(r->ids[0])); i++) {
		r->t_ns[r->n_ids] = rk_now_ns();
		r->ids[r->n_ids++] = ev->ids[i];
	}
	if (ev->kind == ENGINE_EV_DONE) {
		r->finish = ev->finish;
		r->done = true;
	}
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

static void res_init(struct res *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
}

/* Wait until @r is done or has @n tokens. */
static void res_wait(struct res *r, int n)
{
	pthread_mutex_lock(&r->mu);
	while (!r->done && r->n_ids < n)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
}

static struct engine *mk(int slots, int n_cards, struct trace *tr)
{
	struct engine_opts o = { .n_slots = slots, .n_ctx = 512, .bucket = BUCKET,
				 .strict_slots = true };
	struct engine *e = NULL;
	char err[512];

	if (tr) {
		memset(tr, 0, sizeof(*tr));
		pthread_mutex_init(&tr->mu, NULL);
		o.trace = on_trace;
		o.trace_user = tr;
	}
	mock_rk_reset();
	if (engine_create(&e, &M, tk, cards, NULL, n_cards, &o, err, sizeof(err))) {
		fprintf(stderr, "# engine_create: %s\n", err);
		return NULL;
	}
	return e;
}

/* The short prompt of decoding session @i. */
static int dec_prompt(int i, int32_t *t)
{
	static const char *const text[MAX_DEC] = {
		"Once upon a time", "The little dog", "One day, a big red",
	};

	return tok_encode(tk, text[i], true, t, 32);
}

static int submit(struct engine *e, struct res *r, const int32_t *p, int n, int max_tokens)
{
	struct engine_request rq = { 0 };

	res_init(r);
	rq.prompt = p;
	rq.n_prompt = n;
	rq.max_tokens = max_tokens;
	rq.s.top_p = 1.0f;
	rq.ignore_eos = true;
	rq.cb = on_event;
	rq.user = r;
	return engine_submit(e, &rq, &r->q, NULL, 0);
}

/* Submit the long prompt into @e once @when has @at tokens. */
static void arm(struct engine *e, struct res *when, int at, struct res *r, int max_tokens)
{
	trig = (struct trigger){ .when = when, .at = at, .e = e, .r = r, .p = long_prompt,
				 .n = LONG_LEN, .max_tokens = max_tokens, .ret = -1 };
}

/* Run one request alone on a fresh engine with one slot; @tr optional. */
static void run_alone(int n_cards, const int32_t *p, int n, int max_tokens, struct res *r,
		      struct trace *tr)
{
	struct engine *e = mk(1, n_cards, tr);

	if (!e || submit(e, r, p, n, max_tokens)) {
		r->done = true;
		engine_destroy(e);
		return;
	}
	res_wait(r, max_tokens + 1);
	engine_req_put(r->q);
	engine_destroy(e);
}

static bool same_ids(const struct res *a, const struct res *b)
{
	return a->n_ids == b->n_ids && a->n_ids > 0 &&
	       !memcmp(a->ids, b->ids, sizeof(a->ids[0]) * (size_t)a->n_ids);
}

/* Prompt tokens (not decode tokens) of micro-batch event @v. */
static int prompt_toks(const struct tev *v)
{
	int i, n = 0;

	for (i = 0; i < v->n_tok; i++)
		n += !v->tok[i].decode;
	return n;
}

static bool has_decode(const struct tev *v, int slot)
{
	int i;

	for (i = 0; i < v->n_tok; i++)
		if (v->tok[i].slot == slot && v->tok[i].decode)
			return true;
	return false;
}

static bool has_prompt_of(const struct tev *v, int slot)
{
	int i;

	for (i = 0; i < v->n_tok; i++)
		if (v->tok[i].slot == slot && !v->tok[i].decode)
			return true;
	return false;
}

/*
 * What the trace says about the long prompt's prefill (slot @lslot) and
 * the decode tokens of the other slots (0..@n_dec-1).
 */
struct verdict {
	int worst_between;	/* most prompt tokens between two decode tokens */
	int worst_ahead;	/* most prompt tokens a decode token waited behind */
	int worst_mb;		/* most tokens of a micro-batch with a decode token */
	int max_flight, depth;
	bool full;		/* n_flight reached depth during the prefill */
	int min_dec_tokens;	/* fewest decode tokens of a session during it */
	int pairs;		/* decode-token pairs checked */
};

static void judge(const struct trace *tr, int n_dec, int lslot, struct verdict *vd)
{
	/* SUBMIT events by micro-batch number; in-flight window replayed. */
	static const struct tev *sub[MAX_EV];
	int n_sub = 0, first = -1, last = -1, s, i;
	uint64_t oldest = 0;

	memset(vd, 0, sizeof(*vd));
	vd->min_dec_tokens = 1 << 30;
	for (i = 0; i < tr->n; i++) {
		const struct tev *v = &tr->ev[i];

		if (v->n_flight > vd->max_flight)
			vd->max_flight = v->n_flight;
		vd->depth = v->depth;
		if (v->kind != ENGINE_TRACE_SUBMIT)
			continue;
		sub[n_sub] = v;
		if (has_prompt_of(v, lslot)) {
			if (first < 0)
				first = n_sub;
			last = n_sub;
		}
		n_sub++;
	}
	if (first < 0)
		return;

	/* In flight at each decode submit: replay SUBMIT/COLLECT in order. */
	for (i = 0; i < tr->n; i++) {
		const struct tev *v = &tr->ev[i];
		int ahead = 0, dec = 0;
		uint64_t m;

		if (v->kind == ENGINE_TRACE_COLLECT) {
			oldest = v->mb + 1;
			continue;
		}
		if ((int)v->mb < first || (int)v->mb > last)
			continue;
		if (v->n_flight == v->depth)
			vd->full = true;
		for (s = 0; s < n_dec; s++)
			dec |= has_decode(v, s);
		if (!dec)
			continue;
		if (v->n_tok > vd->worst_mb)
			vd->worst_mb = v->n_tok;
		for (m = oldest; m <= v->mb; m++)
			ahead += prompt_toks(sub[m]);
		if (ahead > vd->worst_ahead)
			vd->worst_ahead = ahead;
	}

	/* Between consecutive decode tokens of each session. */
	for (s = 0; s < n_dec; s++) {
		int prev = -1, count = 0;

		for (i = 0; i < n_sub; i++) {
			int between = 0, m;

			if (!has_decode(sub[i], s))
				continue;
			if (i >= first && i <= last)
				count++;
			if (prev >= 0 && i > first && prev < last) {
				for (m = prev + 1; m <= i; m++)
					between += prompt_toks(sub[m]);
				if (between > vd->worst_between)
					vd->worst_between = between;
				vd->pairs++;
			}
			prev = i;
		}
		if (count < vd->min_dec_tokens)
			vd->min_dec_tokens = count;
	}
}

static void scenario(int n_cards, int n_dec)
{
	static struct res alone[MAX_DEC + 1], together[MAX_DEC + 1];
	static struct trace tr;
	int32_t p[MAX_DEC][32];
	int np[MAX_DEC], i, ok = 1, ret = 0;
	struct verdict vd;
	struct engine *e;
	bool same = true;

	for (i = 0; i < n_dec; i++) {
		np[i] = dec_prompt(i, p[i]);
		run_alone(n_cards, p[i], np[i], DEC_TOKENS, &alone[i], NULL);
	}
	run_alone(n_cards, long_prompt, LONG_LEN, 4, &alone[n_dec], NULL);

	e = mk(n_dec + 1, n_cards, &tr);
	if (!e) {
		tap_ok(false, "%d cards, %d streams: engine", n_cards, n_dec);
		return;
	}
	/* The streams decode before the long prompt arrives. */
	arm(e, &together[n_dec - 1], 3, &together[n_dec], 4);
	for (i = 0; i < n_dec; i++)
		ret |= submit(e, &together[i], p[i], np[i], DEC_TOKENS);
	res_wait(&together[n_dec - 1], 1 << 30);
	ret |= trig.ret;
	for (i = 0; i <= n_dec; i++) {
		res_wait(&together[i], 1 << 30);
		same &= same_ids(&together[i], &alone[i]);
		ok &= together[i].finish == ENGINE_FINISH_LENGTH;
		engine_req_put(together[i].q);
	}
	engine_destroy(e);
	tap_ok(!ret && ok && !tr.overflow, "%d cards, %d stream%s + a %d-token prompt: all finished",
	       n_cards, n_dec, n_dec > 1 ? "s" : "", LONG_LEN);

	/* The long prompt took slot n_dec (the first free one). */
	judge(&tr, n_dec, n_dec, &vd);
	tap_ok(vd.pairs >= LONG_BUCKETS - 1 && vd.worst_between <= BUCKET,
	       "%d cards, %d streams: between two tokens of a stream at most one bucket (%d) of prompt tokens is scheduled (worst %d, %d pairs)",
	       n_cards, n_dec, BUCKET, vd.worst_between, vd.pairs);
	tap_ok(vd.worst_ahead <= BUCKET,
	       "%d cards, %d streams: a decode token waits behind at most one bucket of prompt tokens in flight (worst %d)",
	       n_cards, n_dec, vd.worst_ahead);
	tap_ok(vd.worst_mb <= BUCKET / vd.depth,
	       "%d cards, %d streams: a micro-batch with decode tokens holds at most bucket / %d = %d tokens (worst %d)",
	       n_cards, n_dec, vd.depth, BUCKET / vd.depth, vd.worst_mb);
	tap_ok(vd.max_flight <= vd.depth && vd.depth == (n_cards > 1 ? n_cards : 2) && vd.full,
	       "%d cards, %d streams: up to %d micro-batches in flight, reached during the prefill (max %d)",
	       n_cards, n_dec, vd.depth, vd.max_flight);
	tap_ok(vd.min_dec_tokens >= LONG_BUCKETS - 1,
	       "%d cards, %d streams: each stream got a token per bucket of the prompt (fewest %d for %d buckets)",
	       n_cards, n_dec, vd.min_dec_tokens, LONG_BUCKETS);
	tap_ok(same, "%d cards, %d streams: every greedy output equals its solo run", n_cards,
	       n_dec);
}

/* A prompt with nobody decoding is cut into whole buckets. */
static void alone_buckets(int n_cards)
{
	static struct trace tr;
	static struct res r;
	int i, n_mb = 0, full = 0, total = 0;

	run_alone(n_cards, long_prompt, LONG_LEN, 2, &r, &tr);
	for (i = 0; i < tr.n; i++) {
		const struct tev *v = &tr.ev[i];

		if (v->kind != ENGINE_TRACE_SUBMIT || !has_prompt_of(v, 0))
			continue;
		n_mb++;
		full += v->n_tok == BUCKET;
		total += v->n_tok;
	}
	tap_ok(n_mb == LONG_BUCKETS && full == LONG_BUCKETS && total == LONG_LEN,
	       "%d cards, a prompt alone: %d micro-batches of a whole bucket (%d of %d full)",
	       n_cards, n_mb, full, n_mb);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * On cards with modelled time (mock_rk_clock(): an EXEC costs @c->exec_ns
 * plus @c->exec_tok_ns per token), one bucket's time is the steady
 * interval between two buckets of the long prompt coming back when it
 * prefills alone; a stream's tokens during its prefill must not be
 * further apart than that.
 */
static void clocked(int n_cards, const struct mock_cost *c)
{
	static struct trace tr;
	static struct res alone, a, b;
	double iv[LONG_BUCKETS], bucket_ms, idle_ms = 0, worst = 0, t0 = -1, t1 = -1, prev = -1;
	int32_t p[32];
	int np = dec_prompt(0, p), n_iv = 0, n_gap = 0, i;
	struct engine *e;

	mock_rk_clock(c);
	run_alone(n_cards, long_prompt, LONG_LEN, 2, &alone, &tr);
	for (i = 0; i < tr.n; i++) {
		const struct tev *v = &tr.ev[i];

		if (v->kind != ENGINE_TRACE_COLLECT)
			continue;
		if (prev >= 0 && n_iv < LONG_BUCKETS)
			iv[n_iv++] = v->t_ms - prev;
		prev = v->t_ms;
	}
	qsort(iv, (size_t)n_iv, sizeof(iv[0]), cmp_dbl);
	bucket_ms = n_iv ? iv[n_iv / 2] : 0;

	e = mk(2, n_cards, &tr);
	if (e)
		arm(e, &a, 6, &b, 2);
	if (!e || submit(e, &a, p, np, DEC_TOKENS)) {
		tap_ok(false, "clock: %d cards: engine", n_cards);
		engine_destroy(e);
		mock_rk_clock(NULL);
		return;
	}
	res_wait(&a, 1 << 30);
	res_wait(&b, 1 << 30);
	engine_req_put(a.q);
	if (!trig.ret)
		engine_req_put(b.q);
	engine_destroy(e);
	mock_rk_clock(NULL);

	/* The prefill: from its first micro-batch out to its last one back. */
	for (i = 0; i < tr.n; i++) {
		const struct tev *v = &tr.ev[i];

		if (v->kind == ENGINE_TRACE_SUBMIT && has_prompt_of(v, 1)) {
			if (t0 < 0)
				t0 = v->t_ms;
			t1 = (double)v->mb;
		}
	}
	for (i = 0; i < tr.n; i++)
		if (tr.ev[i].kind == ENGINE_TRACE_COLLECT && (double)tr.ev[i].mb == t1)
			t1 = tr.ev[i].t_ms, i = tr.n;
	for (i = 1; i < a.n_ids; i++) {
		double s0 = a.t_ns[i - 1] / 1e6, s1 = a.t_ns[i] / 1e6;

		if (s1 <= t0 && i >= 2)
			idle_ms = s1 - s0;
		if (s1 > t0 && s0 < t1) {
			if (getenv("TEST_VERBOSE"))
				printf("#   gap %d: %.2f ms\n", i, s1 - s0);
			n_gap++;
			if (s1 - s0 > worst)
				worst = s1 - s0;
		}
	}
	printf("# clock: %d cards, EXEC %.1f ms + %.2f ms a token: bucket %.2f ms, idle TPOT %.2f ms, worst gap during the prefill %.2f ms (%d gaps)\n",
	       n_cards, c->exec_ns / 1e6, c->exec_tok_ns / 1e6, bucket_ms, idle_ms, worst, n_gap);
	tap_ok(!trig.ret && bucket_ms > 0 && n_gap >= LONG_BUCKETS - 1 && worst <= bucket_ms,
	       "clock: %d cards, EXEC %.1f ms + %.2f ms/token: a stream's tokens during a %d-bucket prefill at most one bucket's time apart (worst %.2f ms, bucket %.2f ms, %d gaps)",
	       n_cards, c->exec_ns / 1e6, c->exec_tok_ns / 1e6, LONG_BUCKETS, worst, bucket_ms,
	       n_gap);
}

int main(void)
{
	const char *path = getenv("RK1828_MODEL");
	struct gguf_file *gf;
	char err[512];
	int i;

	if (!path)
		path = "../shared/models/stories260K.gguf";
	gf = gguf_open(path, err, sizeof(err));
	if (!gf || llm_model_load(&M, gf, err, sizeof(err)) ||
	    !(tk = tok_load(gf, err, sizeof(err)))) {
		tap_ok(false, "load %s: %s", path, err);
		return tap_done();
	}
	long_prompt[0] = 1;
	for (i = 1; i < LONG_LEN; i++)
		long_prompt[i] = 3 + (int32_t)((i * 37) % (M.n_vocab - 3));
	mock_rk_cards(cards);

	alone_buckets(2);
	scenario(1, 1);
	scenario(2, 1);
	scenario(2, 2);
	scenario(4, 1);
	scenario(4, 3);
	{
		/*
		 * Card time: a fixed cost of two tokens' worth, as the RK1828
		 * streams a card's weights once a job (the limit takes the
		 * copies to overlap with compute, so they cost nothing here).
		 */
		struct mock_cost c = { .exec_ns = 2000000, .exec_tok_ns = 1000000 };

		clocked(1, &c);
		clocked(2, &c);
		clocked(4, &c);
		c.exec_ns = 0;
		clocked(2, &c);
	}

	mock_rk_free();
	tok_free(tk);
	llm_model_free(&M);
	gguf_close(gf);
	return tap_done();
}
