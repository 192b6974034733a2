// SPDX-License-Identifier: MIT
/*
 * engine_bench: the engine's serving figures on real (emulated) cards, for
 * `make bench` (tests/bench/guest-bench runs it in the guest). Prints
 * progress as "# ..." and results as "BENCH key value" lines.
 *
 *   engine_bench MODEL streams CARDS [ROUNDS]
 *                                        aggregate decode tokens/s with 1, 2,
 *                                        4 and 8 concurrent greedy streams
 *                                        on the first CARDS cards (ROUNDS
 *                                        rounds, default 3)
 *   engine_bench MODEL prefix REPS       TTFT of a 500-token prompt on a
 *                                        prefix-cache miss and on a hit
 *   engine_bench MODEL tbt [ROUNDS]      time between tokens of a running
 *                                        stream while another request
 *                                        prefills a 1000-token prompt,
 *                                        against the stream's idle TPOT
 *                                        and one bucket's time (the same
 *                                        length prefilling alone on the
 *                                        same engine just before), in
 *                                        ROUNDS rounds (default 3)
 *
 * Streams: each stream has its own 8-token prompt and generates
 * STREAM_TOKENS tokens (greedy, end-of-sequence ignored); the aggregate
 * rate is the tokens after each stream's first, over the window from the
 * first stream's first token to the last DONE. Prompts are strings of
 * lower-case letters, L letters = L + 1 tokens on the synthetic
 * vocabulary of tests/bench/mkmodel.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "gguf.h"
#include "model.h"
#include "rk1828.h"
#include "tokenizer.h"

#define STREAM_TOKENS	24
#define MAX_STAMPS	512

struct run {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	int64_t t_submit, t_first, t_done;
	int64_t stamps[MAX_STAMPS];	/* arrival of each completed token */
	int n_stamps;
	struct engine_event done_ev;
	char error[256];
};

static struct llm_model M;
static struct tokenizer *tk;
static struct rk_card *cards;
static int n_cards;

static void on_event(const struct engine_event *ev, void *user)
{
	struct run *r = user;
	int64_t now = rk_now_ns();
	int i;

	pthread_mutex_lock(&r->mu);
	for (i = 0; i < ev->n_ids && r->n_stamps < MAX_STAMPS; i++)
		r->stamps[r->n_stamps++] = now;
	if (ev->n_ids && !r->t_first)
		r->t_first = now;
	if (ev->kind == ENGINE_EV_DONE) {
		r->done_ev = *ev;
		if (ev->error)
			snprintf(r->error, sizeof(r->error), "%s", ev->error);
		r->t_done = now;
		r->done = true;
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
}

static void run_wait(struct run *r)
{
	pthread_mutex_lock(&r->mu);
	while (!r->done)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
}

/* Wait until @r has @n token stamps (or is done). */
static void run_wait_tokens(struct run *r, int n)
{
	for (;;) {
		bool ok;

		pthread_mutex_lock(&r->mu);
		ok = r->n_stamps >= n || r->done;
		pthread_mutex_unlock(&r->mu);
		if (ok)
			return;
		usleep(1000);
	}
}

/* A prompt of @len tokens: letters starting at @shift, after the U+2581 token. */
static int *letters(int len, int shift)
{
	char *s = malloc((size_t)len);
	int *t = malloc(sizeof(int) * (size_t)(len + 8)), i, n;

	for (i = 0; i < len - 1; i++)
		s[i] = (char)('a' + (i * 7 + shift) % 26);
	s[len - 1] = 0;
	n = tok_encode(tk, s, false, t, len + 8);
	free(s);
	if (n != len) {
		fprintf(stderr, "engine_bench: prompt of %d letters gave %d tokens\n", len - 1, n);
		exit(1);
	}
	return t;
}

/* Micro-batches traced (engine_opts.trace) for the tbt figures. */
#define MAX_MB		4096

struct mbrec {
	bool collect;
	int n_tok, n_decode;
	uint64_t mb;
	int64_t t;
};

static struct mbrec mbs[MAX_MB];
static int n_mbs;

static void on_trace(void *user, const struct engine_trace *t)
{
	struct mbrec *r;
	int i;

	if (n_mbs == MAX_MB)
		return;
	r = &mbs[n_mbs++];
	r->collect = t->kind == ENGINE_TRACE_COLLECT;
	r->mb = t->mb;
	r->n_tok = t->n_tok;
	r->n_decode = 0;
	for (i = 0; i < t->n_tok; i++)
		r->n_decode += t->tok[i].decode;
	r->t = rk_now_ns();
}

static struct engine *mk_traced(int slots, int cards_used, uint32_t ctx, uint32_t bucket,
				bool trace)
{
	struct engine_opts o = { .n_slots = slots, .n_ctx = ctx, .bucket = bucket,
				 .strict_slots = true, .trace = trace ? on_trace : NULL,
				 .verbose = getenv("ENGINE_BENCH_VERBOSE") ? atoi(getenv("ENGINE_BENCH_VERBOSE")) : 0 };
	struct engine *e;
	char err[768];

	if (engine_create(&e, &M, tk, cards, NULL, cards_used, &o, err, sizeof(err))) {
		fprintf(stderr, "engine_bench: %s\n", err);
		exit(1);
	}
	return e;
}

static struct engine *mk(int slots, int cards_used, uint32_t ctx, uint32_t bucket)
{
	return mk_traced(slots, cards_used, ctx, bucket, false);
}

static void submit(struct engine *e, struct run *r, int *prompt, int n, int max_tokens)
{
	struct engine_request rq = { 0 };
	struct engine_req *q;
	char err[256];

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	rq.prompt = prompt;
	rq.n_prompt = n;
	rq.max_tokens = max_tokens;
	rq.s.top_p = 1;
	rq.ignore_eos = true;
	rq.cb = on_event;
	rq.user = r;
	r->t_submit = rk_now_ns();
	if (engine_submit(e, &rq, &q, err, sizeof(err))) {
		fprintf(stderr, "engine_bench: submit: %s\n", err);
		exit(1);
	}
	engine_req_put(q);
}

static void check(const struct run *r)
{
	if (r->done_ev.finish == ENGINE_FINISH_ERROR) {
		fprintf(stderr, "engine_bench: %s\n", r->error);
		exit(1);
	}
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	return v[(n - 1) / 2];
}

/* One measurement: @k streams at once; returns aggregate decode tokens/s. */
static double streams_once(struct engine *e, int k, int round, double *per_mb)
{
	static struct run runs[8];
	struct engine_stats st;
	int64_t t0 = INT64_MAX, t1 = 0;
	uint64_t steps0, btok0;
	int j, tokens = 0;
	int *p[8];

	engine_get_stats(e, &st);
	steps0 = st.steps;
	btok0 = st.batch_tokens;
	for (j = 0; j < k; j++) {
		p[j] = letters(8, 3 * j + 11 * k + 5 * round);
		submit(e, &runs[j], p[j], 8, STREAM_TOKENS);
	}
	for (j = 0; j < k; j++) {
		run_wait(&runs[j]);
		check(&runs[j]);
		if (runs[j].t_first < t0)
			t0 = runs[j].t_first;
		if (runs[j].t_done > t1)
			t1 = runs[j].t_done;
		tokens += runs[j].done_ev.usage.completion_tokens - 1;
		free(p[j]);
	}
	engine_get_stats(e, &st);
	*per_mb = st.steps > steps0 ? (double)(st.batch_tokens - btok0) / (st.steps - steps0) : 0;
	return t1 > t0 ? tokens / ((t1 - t0) / 1e9) : 0;
}

/*
 * Rounds of 1, 2, 4 and 8 streams back to back (so that the load of a
 * shared host hits every count alike); each count's ratio to 1 stream is
 * the median of the per-round ratios.
 */
static void bench_streams(int n_use, int rounds)
{
	static const int ks[] = { 1, 2, 4, 8 };
	enum { NK = sizeof(ks) / sizeof(ks[0]) };
	double rate[NK][16], ratio[NK][16], mb[NK];
	struct engine *e = mk(8, n_use, 256, 32);
	struct engine_stats st;
	int r, i, j;

	if (rounds > 16)
		rounds = 16;
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NK; i++) {
			rate[i][r] = streams_once(e, ks[i], r, &mb[i]);
			ratio[i][r] = rate[0][r] > 0 ? rate[i][r] / rate[0][r] : 0;
			printf("# streams: %d cards, round %d, %d stream%s: %.1f tok/s (x%.2f), %.2f tokens per micro-batch\n",
			       n_use, r + 1, ks[i], ks[i] == 1 ? "" : "s", rate[i][r], ratio[i][r], mb[i]);
			fflush(stdout);
		}
	}
	for (i = 0; i < NK; i++) {
		printf("BENCH streams_%dc_%d_tok_s %.2f\n", n_use, ks[i], median(rate[i], rounds));
		printf("BENCH streams_%dc_%d_ratio %.2f\n", n_use, ks[i], median(ratio[i], rounds));
		printf("BENCH streams_%dc_%d_tok_per_mb %.2f\n", n_use, ks[i], mb[i]);
	}
	engine_get_stats(e, &st);
	for (j = 0; j < st.n_cards; j++)
		printf("# streams: card%d busy %.0f%% of the time\n", j, 100 * st.card_busy[j]);
	engine_destroy(e);
}

static void bench_prefix(int reps)
{
	struct engine *e = mk(2, n_cards < 2 ? n_cards : 2, 1024, 128);
	double miss[16], hit[16];
	char all_m[512] = "", all_h[512] = "";
	struct run a, b;
	int i;

	if (reps > 16)
		reps = 16;
	for (i = 0; i < reps; i++) {
		int *p = letters(500, 5 * i + 1);

		submit(e, &a, p, 500, 1);
		run_wait(&a);
		check(&a);
		submit(e, &b, p, 500, 1);
		run_wait(&b);
		check(&b);
		miss[i] = a.done_ev.timing.ttft_ms;
		hit[i] = b.done_ev.timing.ttft_ms;
		printf("# prefix: 500-token prompt, run %d: miss TTFT %.1f ms, hit TTFT %.1f ms (%d cached)\n",
		       i + 1, miss[i], hit[i], b.done_ev.usage.cached_tokens);
		snprintf(all_m + strlen(all_m), sizeof(all_m) - strlen(all_m), "%s%.2f",
			 i ? "," : "", miss[i]);
		snprintf(all_h + strlen(all_h), sizeof(all_h) - strlen(all_h), "%s%.2f",
			 i ? "," : "", hit[i]);
		fflush(stdout);
		free(p);
	}
	printf("BENCH prefix_cached %d\n", b.done_ev.usage.cached_tokens);
	printf("BENCH prefix_miss_ms_all %s\nBENCH prefix_hit_ms_all %s\n", all_m, all_h);
	printf("BENCH prefix_miss_ms %.2f\n", median(miss, reps));
	printf("BENCH prefix_hit_ms %.2f\n", median(hit, reps));
	engine_destroy(e);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Intervals between two micro-batches of a prompt prefilling alone coming
 * back, trace records [@from, @to), appended to @iv (@n so far).
 */
static int bucket_iv(int from, int to, double *iv, int n)
{
	int64_t prev = 0;
	int i;

	for (i = from; i < to && n < MAX_MB; i++) {
		if (!mbs[i].collect)
			continue;
		if (prev)
			iv[n++] = (mbs[i].t - prev) / 1e6;
		prev = mbs[i].t;
	}
	return n;
}

/* A 1000-token prompt alone on @e (no prefix-cache hit: its own letters). */
static void prefill_alone(struct engine *e, int shift, struct run *r)
{
	int *p = letters(1000, shift);

	submit(e, r, p, 1000, 1);
	run_wait(r);
	check(r);
	free(p);
}

/* What the cards had in flight during the worst gap, [@t0, @t1]. */
static void show_gap(int64_t t0, int64_t t1)
{
	char line[512];
	int at = 0, i;

	for (i = 0; i < n_mbs && at < (int)sizeof(line) - 40; i++) {
		const struct mbrec *r = &mbs[i];

		if (r->t < t0 || r->t > t1)
			continue;
		if (r->collect)
			at += snprintf(line + at, sizeof(line) - at, " <%llu", (unsigned long long)r->mb);
		else
			at += snprintf(line + at, sizeof(line) - at, " >%llu(%d+%d)",
				       (unsigned long long)r->mb, r->n_decode, r->n_tok - r->n_decode);
	}
	printf("# tbt: the worst gap: micro-batches submitted >N(decode+prompt tokens) and collected <N:%s\n",
	       line);
}

/* One round's figures of bench_tbt(). */
struct tbt_round {
	double idle, p99, max, bucket, prefill, alone_ttft;
	int n_busy;
};

/*
 * One round: one bucket's time from a 1000-token prompt alone, then a
 * stream that decodes while another 1000-token prompt arrives and
 * prefills; the stream's intervals before it (idle) and during it.
 */
static void tbt_round(struct engine *e, int r, struct tbt_round *o)
{
	static double iv[MAX_MB];
	int64_t idle[MAX_STAMPS], busy[MAX_STAMPS], t_b0, t_b1, w0 = 0, w1 = 0;
	int n_idle = 0, n_busy = 0, n_iv, i, mark = n_mbs;
	int *pa = letters(8, 2 + r), *pb = letters(1000, 9 + 2 * r);
	struct run a, b, c;

	prefill_alone(e, 40 + 2 * r, &c);
	n_iv = bucket_iv(mark, n_mbs, iv, 0);
	submit(e, &a, pa, 8, 160);
	run_wait_tokens(&a, 40);
	submit(e, &b, pb, 1000, 1);
	run_wait(&b);
	check(&b);
	run_wait(&a);
	check(&a);
	t_b0 = b.t_submit;
	t_b1 = b.t_done;
	for (i = 1; i < a.n_stamps; i++) {
		int64_t d = a.stamps[i] - a.stamps[i - 1];

		if (a.stamps[i] < t_b0) {
			idle[n_idle++] = d;
		} else if (a.stamps[i - 1] >= t_b0 && a.stamps[i - 1] <= t_b1) {
			if (d > w1 - w0) {
				w0 = a.stamps[i - 1];
				w1 = a.stamps[i];
			}
			busy[n_busy++] = d;
		}
	}
	qsort(idle, n_idle, sizeof(*idle), cmp_i64);
	qsort(busy, n_busy, sizeof(*busy), cmp_i64);
	o->bucket = n_iv ? median(iv, n_iv) : 0;
	if (!n_idle || !n_busy || !(o->bucket > 0)) {
		fprintf(stderr, "engine_bench: tbt: %d idle and %d busy intervals, bucket %.1f ms\n",
			n_idle, n_busy, o->bucket);
		exit(1);
	}
	o->idle = idle[n_idle / 2] / 1e6;
	o->p99 = busy[(n_busy * 99) / 100 < n_busy ? (n_busy * 99) / 100 : n_busy - 1] / 1e6;
	o->max = busy[n_busy - 1] / 1e6;
	o->prefill = (t_b1 - t_b0) / 1e6;
	o->alone_ttft = c.done_ev.timing.ttft_ms;
	o->n_busy = n_busy;
	printf("# tbt: round %d: idle TPOT %.1f ms (median of %d); while a 1000-token prompt prefills (%.0f ms): %d intervals, p99 %.1f ms, max %.1f ms; one bucket (128 tokens) of such a prompt alone %.1f ms (TTFT %.0f ms): p99 / bucket %.2f, p99 / idle %.1f\n",
	       r + 1, o->idle, n_idle, o->prefill, n_busy, o->p99, o->max, o->bucket,
	       o->alone_ttft, o->p99 / o->bucket, o->p99 / o->idle);
	show_gap(w0, w1);
	fflush(stdout);
	free(pa);
	free(pb);
}

/*
 * Rounds of tbt_round() on one engine (2 slots, 2 cards, bucket 128);
 * each figure is the median over the rounds, each ratio the median of the
 * per-round ratios (the host's load drifts between rounds).
 */
static void bench_tbt(int rounds)
{
	struct engine *e = mk_traced(2, n_cards < 2 ? n_cards : 2, 1536, 128, true);
	struct tbt_round o[16];
	double v[7][16];
	int r;

	if (rounds > 16)
		rounds = 16;
	if (rounds < 1)
		rounds = 1;
	for (r = 0; r < rounds; r++) {
		tbt_round(e, r, &o[r]);
		v[0][r] = o[r].idle;
		v[1][r] = o[r].p99;
		v[2][r] = o[r].max;
		v[3][r] = o[r].bucket;
		v[4][r] = o[r].prefill;
		v[5][r] = o[r].p99 / o[r].bucket;
		v[6][r] = o[r].p99 / o[r].idle;
	}
	printf("BENCH tbt_rounds %d\nBENCH tbt_intervals %d\n", rounds, o[0].n_busy);
	printf("BENCH tbt_idle_ms %.2f\nBENCH tbt_prefill_p99_ms %.2f\nBENCH tbt_prefill_max_ms %.2f\n",
	       median(v[0], rounds), median(v[1], rounds), median(v[2], rounds));
	printf("BENCH tbt_bucket_ms %.2f\nBENCH tbt_prefill_ms %.2f\n", median(v[3], rounds),
	       median(v[4], rounds));
	printf("BENCH tbt_p99_bucket_ratio %.2f\nBENCH tbt_p99_idle_ratio %.2f\n",
	       median(v[5], rounds), median(v[6], rounds));
	engine_destroy(e);
}

int main(int argc, char **argv)
{
	struct gguf_file *gf;
	char err[512];

	if (argc < 3) {
		fprintf(stderr, "usage: engine_bench MODEL streams CARDS [ROUNDS] | prefix REPS | tbt [ROUNDS]\n");
		return 2;
	}
	gf = gguf_open(argv[1], err, sizeof(err));
	if (!gf || llm_model_load(&M, gf, err, sizeof(err)) ||
	    !(tk = tok_load(gf, err, sizeof(err)))) {
		fprintf(stderr, "engine_bench: %s\n", err);
		return 1;
	}
	if (rk_open_all(&cards, &n_cards)) {
		fprintf(stderr, "engine_bench: %s\n", rk_error());
		return 1;
	}
	if (!strcmp(argv[2], "streams") && argc > 3) {
		int n = atoi(argv[3]);

		if (n < 1 || n > n_cards) {
			fprintf(stderr, "engine_bench: %d cards asked for, %d found\n", n, n_cards);
			return 1;
		}
		bench_streams(n, argc > 4 ? atoi(argv[4]) : 3);
	} else if (!strcmp(argv[2], "prefix")) {
		bench_prefix(argc > 3 ? atoi(argv[3]) : 3);
	} else if (!strcmp(argv[2], "tbt")) {
		bench_tbt(argc > 3 ? atoi(argv[3]) : 3);
	} else {
		fprintf(stderr, "engine_bench: unknown mode %s\n", argv[2]);
		return 2;
	}
	rk_close_all(cards, n_cards);
	tok_free(tk);
	llm_model_free(&M);
	gguf_close(gf);
	return 0;
}
