// SPDX-License-Identifier: MIT
/*
 * rk1828-llm bench (bench.h): the pp/tg tests on a pipeline with a job
 * trace, the multi-session test on the engine, the prediction of each on
 * the card profile, the table, and the Chrome trace-event file. Times are
 * read from librk1828's clock (rk_now_ns(), CLOCK_MONOTONIC on real and
 * emulated cards), so bench over the mock library's modelled clock
 * (tests/bench/host_timing.c) measures modelled card time.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"
#include "bench_passes.h"
#include "engine.h"
#include "pipeline.h"
#include "predict.h"
#include "rk1828/util.h"

/* Jobs of one micro-batch on one stage, on the trace's time line (ns). */
struct tjob {
	int stage, card;
	long mb;
	int n_tokens;
	int64_t in0, in1, ex0, ex1, out0, out1;
	uint64_t in_bytes, out_bytes;
	int64_t submit;
	int test;		/* index of the test it belongs to */
};

struct trace {
	struct tjob *j;
	size_t n, cap;
	int n_stages, nslot, test;
	bool oom;
};

/* A figure: repetitions of a measurement. */
struct fig {
	double v[64];
	int n;
};

static void fig_add(struct fig *f, double v)
{
	if (f->n < (int)(sizeof(f->v) / sizeof(f->v[0])))
		f->v[f->n++] = v;
}

static double fig_mean(const struct fig *f)
{
	double s = 0;
	int i;

	for (i = 0; i < f->n; i++)
		s += f->v[i];
	return f->n ? s / f->n : NAN;
}

static double fig_sd(const struct fig *f)
{
	double m = fig_mean(f), s = 0;
	int i;

	for (i = 0; i < f->n; i++)
		s += (f->v[i] - m) * (f->v[i] - m);
	return f->n > 1 ? sqrt(s / (f->n - 1)) : 0;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* The job ends of micro-batch @mb on @stage (already traced), or NULL. */
static const struct tjob *find(const struct trace *t, long mb, int stage)
{
	size_t i;

	for (i = t->n; i-- > 0;) {
		if (t->j[i].mb == mb && t->j[i].stage == stage)
			return &t->j[i];
		if (t->j[i].mb < mb - 2 * t->nslot)
			break;
	}
	return NULL;
}

/*
 * Rebuild the start of each job: the later of its dependencies' ends
 * (pipeline.c) and the end of the previous job of its queue.
 */
static void trace_rec(void *user, const struct pipe_trace_rec *r)
{
	struct trace *t = user;
	const struct tjob *prev_out = r->stage > 0 ? find(t, r->mb, r->stage - 1) : NULL;
	const struct tjob *old = find(t, r->mb - t->nslot, r->stage);
	const struct tjob *old_next = find(t, r->mb - t->nslot, r->stage + 1);
	const struct tjob *last = NULL;
	struct tjob *j;
	size_t i;

	for (i = t->n; i-- > 0;)
		if (t->j[i].stage == r->stage) {
			last = &t->j[i];
			break;
		}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		struct tjob *nj = realloc(t->j, cap * sizeof(*nj));

		if (!nj) {
			t->oom = true;
			return;
		}
		t->j = nj;
		t->cap = cap;
	}
	j = &t->j[t->n];
	memset(j, 0, sizeof(*j));
	j->stage = r->stage;
	j->card = r->card;
	j->mb = r->mb;
	j->n_tokens = r->n_tokens;
	j->submit = r->submit_ns;
	j->in_bytes = r->in_bytes;
	j->out_bytes = r->out_bytes;
	j->test = t->test;
	j->in1 = r->in_end_ns;
	j->ex1 = r->exec_end_ns;
	j->out1 = r->out_end_ns;
	j->in0 = max64(r->submit_ns, last ? last->out1 : 0);
	if (prev_out)
		j->in0 = max64(j->in0, prev_out->out1);
	if (old)
		j->in0 = max64(j->in0, old->ex1);
	j->ex0 = max64(j->in1, last ? last->ex1 : 0);
	if (old)
		j->ex0 = max64(j->ex0, old->out1);
	j->out0 = max64(j->ex1, j->in1);
	if (old_next)
		j->out0 = max64(j->out0, old_next->in1);
	/* Clamp: a start never after its end (timestamps are the truth). */
	if (j->in0 > j->in1)
		j->in0 = j->in1;
	if (j->ex0 > j->ex1)
		j->ex0 = j->ex1;
	if (j->out0 > j->out1)
		j->out0 = j->out1;
	t->n++;
}

/* Length of [a0, a1) covered by the EXECs of test @test on any card. */
static int64_t under_exec(const struct trace *t, int test, int64_t a0, int64_t a1)
{
	int64_t cov = 0, cur = a0;
	size_t i;

	/* EXECs of one card do not overlap; across cards they may: walk the
	 * interval in pieces, taking the furthest-reaching EXEC at each point.
	 */
	while (cur < a1) {
		int64_t best = cur, next = a1;

		for (i = 0; i < t->n; i++) {
			const struct tjob *j = &t->j[i];

			if (j->test != test)
				continue;
			if (j->ex0 <= cur && j->ex1 > best)
				best = j->ex1;
			if (j->ex0 > cur && j->ex0 < next)
				next = j->ex0;
		}
		if (best > cur) {
			if (best > a1)
				best = a1;
			cov += best - cur;
			cur = best;
		} else {
			cur = next;
		}
	}
	return cov;
}

/*
 * Copy/compute overlap of test @test: the share of the hidden-state
 * transfers (OUT of every stage but the last, IN of every stage but the
 * first) that runs while some card computes.
 */
static double overlap(const struct trace *t, int test)
{
	int64_t tot = 0, cov = 0;
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct tjob *j = &t->j[i];

		if (j->test != test)
			continue;
		if (j->stage < t->n_stages - 1) {
			tot += j->out1 - j->out0;
			cov += under_exec(t, test, j->out0, j->out1);
		}
		if (j->stage > 0) {
			tot += j->in1 - j->in0;
			cov += under_exec(t, test, j->in0, j->in1);
		}
	}
	return tot ? (double)cov / (double)tot : NAN;
}

/* Deterministic prompt tokens (no special meaning needed). */
static void fill_tokens(int32_t *t, uint32_t n, uint32_t n_vocab)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		t[i] = (int32_t)(1 + (uint64_t)i * 7919 % (n_vocab - 1));
}

/*
 * Read the token-embedding rows of @toks once before a timed test (the
 * warm-up llama-bench runs too): they stay mapped from the model file, and
 * a first touch pays a page fault per row (over a guest's 9p root, about
 * a millisecond each), which is the file system's time, not the cards'.
 * @scratch: room for one row (dim floats).
 */
static void touch_embeddings(const struct llm_model *m, const int32_t *toks, uint32_t n,
			     float *scratch)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		llm_embed(m, toks[i], scratch);
}

/* A row of the table. */
struct row {
	char test[48];
	struct fig ms, rate;	/* TTFT/TPOT ms, tokens/s */
	double pred_ms, pred_rate;
};

static void print_table(const struct bench_opts *o, const struct row *rows, int n)
{
	char size[32], model[64];
	const char *base = strrchr(o->model_path, '/');
	int i;

	util_fmt_bytes(size, sizeof(size), o->m->gf->map_size);
	snprintf(model, sizeof(model), "%s %s", o->m->arch_name, base ? base + 1 : o->model_path);
	fprintf(o->out, "| %-32s | %10s | %5s | %4s | %-10s | %18s | %9s | %16s | %10s | %7s |\n",
		"model", "size", "cards", "link", "test", "ms", "pred. ms", "t/s", "pred. t/s",
		"error");
	fprintf(o->out, "| -------------------------------- | ---------: | ----: | ---- | ---------- "
		"| -----------------: | --------: | ---------------: | ---------: | ------: |\n");
	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		char ms[40], rate[40];
		double m = fig_mean(&r->rate);

		snprintf(ms, sizeof(ms), "%.2f ± %.2f", fig_mean(&r->ms), fig_sd(&r->ms));
		snprintf(rate, sizeof(rate), "%.2f ± %.2f", m, fig_sd(&r->rate));
		fprintf(o->out, "| %-32.32s | %10s | %5d | %4s | %-10s | %18s | %9.2f | %16s | "
			"%10.2f | %+6.1f%% |\n", model, size, o->plan->n_segs,
			o->card_links ? "mix" : cost_link_name(o->link), r->test, r->ms.n ? ms : "-", r->pred_ms, rate,
			r->pred_rate, 100 * (m - r->pred_rate) / r->pred_rate);
	}
}

/* The engine test: @S sessions of @prompt tokens, @gen tokens each. */
struct sess_run {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done, started, tokens_after;
	int64_t t_all, t_first_done;
	int ntok[64];
	bool failed;
	char error[256];
	int S;
	long long draft_n, draft_acc;	/* the requests' usage.draft_n, draft_n_accepted */
};

struct sess_arg {
	struct sess_run *run;
	int i;
};

static void sess_event(const struct engine_event *ev, void *user)
{
	struct sess_arg *a = user;
	struct sess_run *r = a->run;
	int64_t now = rk_now_ns();

	pthread_mutex_lock(&r->mu);
	if (ev->n_ids) {
		if (!r->ntok[a->i])
			r->started++;
		if (r->started == r->S && r->t_all && !r->t_first_done)
			r->tokens_after += ev->n_ids;
		r->ntok[a->i] += ev->n_ids;
		if (r->started == r->S && !r->t_all)
			r->t_all = now;
	}
	if (ev->kind == ENGINE_EV_DONE) {
		r->draft_n += ev->usage.draft_n;
		r->draft_acc += ev->usage.draft_n_accepted;
		if (ev->finish == ENGINE_FINISH_ERROR) {
			r->failed = true;
			snprintf(r->error, sizeof(r->error), "%s", ev->error ? ev->error : "error");
		}
		if (!r->t_first_done && r->t_all)
			r->t_first_done = now;
		r->done++;
		pthread_cond_signal(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
}

/*
 * @S sessions at once (or one with @o->spec: speculating), @o->reps times;
 * the drafts of all of them added to @draft_n and @draft_acc.
 */
static int sessions_test(const struct bench_opts *o, uint32_t prompt, int S, bool spec,
			 struct row *row, long long *draft_n, long long *draft_acc,
			 struct bench_passes *passes, char *err, size_t errlen)
{
	struct engine_opts eo = { .n_slots = S, .n_ctx = o->n_ctx, .bucket = o->bucket,
				  .strict_slots = true, .kv_type = o->kv_type,
				  .spec = spec ? (enum spec_kind)o->spec : SPEC_NONE,
				  .draft_max = spec ? o->draft_max : 0,
				  .draft_model = o->draft_model,
				  .trace = passes ? bench_passes_rec : NULL, .trace_user = passes };
	struct engine *e;
	struct engine_req *req[64];
	struct sess_arg args[64];
	int32_t *toks;
	int rep, i, ret = -1;

	if (S > 64)
		S = 64;
	toks = calloc(prompt, sizeof(*toks));
	if (!toks)
		return snprintf(err, errlen, "out of memory"), -1;
	fill_tokens(toks, prompt, o->m->n_vocab);
	if (engine_create(&e, o->m, o->tok, o->cards, o->card_idx, o->n_cards, &eo, err,
			  errlen)) {
		free(toks);
		return -1;
	}
	for (rep = 0; rep < o->reps; rep++) {
		struct sess_run run = { .S = S };

		if (passes)
			passes->rep = rep;	/* the engine thread records it after our submit */
		pthread_mutex_init(&run.mu, NULL);
		pthread_cond_init(&run.cv, NULL);
		for (i = 0; i < S; i++) {
			struct engine_request rq = {
				.prompt = toks, .n_prompt = (int)prompt, .max_tokens = o->n_gen,
				.s = { .temperature = 0, .top_p = 1, .top_k = 0 },	/* greedy */
				.ignore_eos = true, .cb = sess_event,
			};

			toks[0] = (int32_t)(1 + (rep * 64 + i) % (o->m->n_vocab - 1));
			args[i] = (struct sess_arg){ &run, i };
			rq.user = &args[i];
			if (engine_submit(e, &rq, &req[i], err, errlen)) {
				S = i;
				run.failed = true;
				break;
			}
		}
		pthread_mutex_lock(&run.mu);
		while (run.done < S)
			pthread_cond_wait(&run.cv, &run.mu);
		pthread_mutex_unlock(&run.mu);
		for (i = 0; i < S; i++)
			engine_req_put(req[i]);
		if (run.failed) {
			if (run.error[0])
				snprintf(err, errlen, "--sessions: %s", run.error);
			goto out;
		}
		if (run.t_first_done > run.t_all && run.tokens_after > 0) {
			double s = (run.t_first_done - run.t_all) / 1e9;

			fig_add(&row->rate, run.tokens_after / s);
			fig_add(&row->ms, 1000.0 * s / run.tokens_after * S);
		}
		*draft_n += run.draft_n;
		*draft_acc += run.draft_acc;
		pthread_mutex_destroy(&run.mu);
		pthread_cond_destroy(&run.cv);
	}
	ret = 0;
out:
	engine_destroy(e);
	free(toks);
	return ret;
}

struct ctx {
	const struct bench_opts *o;
	struct pipeline *p;
	struct cost_layer *layers;
	struct cost_head head;
	struct predict_opts po;
	float *logits;
	int32_t *toks;
	struct trace tr;
	const char *names[BENCH_MAX_PROMPTS + 2];
	struct row rows[BENCH_MAX_PROMPTS + 2];
	int n_rows;
	double host_step_ns, pred_tpot_ns;
	int ov_test;
	long long spec_n, spec_acc;	/* the tgN spec row's drafts: verified, accepted */
	double spec_a;			/* their acceptance */
	uint32_t spec_k;		/* drafts a pass of its prediction */
	struct bench_passes passes;	/* --trace: the engine's passes of the tgN spec row */
	int spec_test;			/* that row's index in names[], or -1 */
};

static void ev(FILE *f, bool *first, const char *name, const char *cat, int pid, int tid,
	       int64_t t0, int64_t b, int64_t e, const struct tjob *j, uint64_t bytes)
{
	fprintf(f, "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
		"\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"micro-batch\":%ld,\"tokens\":%d",
		*first ? "" : ",", name, cat, pid, tid, (b - t0) / 1e3, (e - b) / 1e3, j->mb,
		j->n_tokens);
	if (bytes)
		fprintf(f, ",\"bytes\":%llu", (unsigned long long)bytes);
	fprintf(f, "}}");
	*first = false;
}

static int write_trace(const struct ctx *c, char *err, size_t errlen)
{
	const struct trace *t = &c->tr;
	const struct bench_opts *o = c->o;
	const char *path = o->trace;
	const char *const *tests = c->names;
	FILE *f = fopen(path, "w");
	bool first = true;
	int64_t t0 = t->n ? t->j[0].submit : c->passes.n ? c->passes.p[0].t0 : 0;
	size_t i;
	int k, host = t->n_stages;

	if (!f) {
		snprintf(err, errlen, "--trace %s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
	for (k = 0; k < t->n_stages; k++) {
		const struct rk_card *c = &o->cards[o->card_idx[k]];
		char blk[PLAN_BLK_MAX];

		plan_seg_blocks(&o->plan->seg[k], blk, sizeof(blk));
		fprintf(f, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
			"\"args\":{\"name\":\"card%d (%s): %s\"}}", first ? "" : ",", k,
			c->index, c->node, blk);
		first = false;
		fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":1,"
			"\"args\":{\"name\":\"compute queue\"}}", k);
		fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":2,"
			"\"args\":{\"name\":\"copy queue\"}}", k);
	}
	fprintf(f, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
		"\"args\":{\"name\":\"host\"}}", host);
	for (i = 0; i < t->n; i++) {
		const struct tjob *j = &t->j[i];
		bool last = j->stage == t->n_stages - 1;

		ev(f, &first, j->stage ? "IN hidden" : "IN embeddings", "copy", j->stage, 2, t0,
		   j->in0, j->in1, j, j->in_bytes);
		ev(f, &first, "EXEC", "compute", j->stage, 1, t0, j->ex0, j->ex1, j, 0);
		ev(f, &first, last ? "OUT logits" : "OUT hidden", "copy", j->stage, 2, t0,
		   j->out0, j->out1, j, j->out_bytes);
		if (last) {
			/* From its submission to the first stage to its logits. */
			const struct tjob *j0 = find(t, j->mb, 0);

			ev(f, &first, tests[j->test], "micro-batch", host, 1, t0,
			   j0 ? j0->submit : j->submit, j->out1, j, 0);
		}
	}
	if (c->spec_test >= 0)
		bench_passes_write(&c->passes, f, &first, host, t0, tests[c->spec_test]);
	fprintf(f, "\n]}\n");
	if (fclose(f)) {
		snprintf(err, errlen, "--trace %s: write failed", path);
		return -1;
	}
	return 0;
}

static int pp_test(struct ctx *c, uint32_t n, char *err, size_t errlen)
{
	const struct bench_opts *o = c->o;
	struct row *row = &c->rows[c->n_rows];
	struct psim *s = psim_create(c->layers, o->m->n_layers, &c->head, o->plan, &c->po);
	double ttft;
	int r;

	if (!s)
		return snprintf(err, errlen, "out of memory"), -1;
	ttft = psim_prefill(s, n, o->bucket);
	psim_destroy(s);
	snprintf(row->test, sizeof(row->test), "pp%u", n);
	c->names[c->n_rows] = row->test;
	row->pred_ms = ttft / 1e6;
	row->pred_rate = n / (ttft / 1e9);
	c->tr.test = c->n_rows;
	fill_tokens(c->toks, n, o->m->n_vocab);
	touch_embeddings(o->m, c->toks, n, c->logits);
	for (r = 0; r < o->reps; r++) {
		int64_t t0 = rk_now_ns(), t1;

		if (pipe_forward(c->p, c->toks, (int)n, 0, c->logits, err, errlen))
			return -1;
		t1 = rk_now_ns();
		/* Read this test's fence timestamps now (the trace's records). */
		if (pipe_account(c->p, err, errlen) < 0)
			return -1;
		fig_add(&row->ms, (t1 - t0) / 1e6);
		fig_add(&row->rate, n / ((t1 - t0) / 1e9));
	}
	c->ov_test = c->n_rows;
	c->n_rows++;
	return 0;
}

static int tg_test(struct ctx *c, char *err, size_t errlen)
{
	const struct bench_opts *o = c->o;
	struct row *row = &c->rows[c->n_rows];
	struct psim *s = psim_create(c->layers, o->m->n_layers, &c->head, o->plan, &c->po);
	double t_pre, tpot, host = 0;
	int r, i, n = o->n_gen;

	if (!s)
		return snprintf(err, errlen, "out of memory"), -1;
	/* As measured below: a one-token prompt, then @n decode steps. */
	t_pre = psim_prefill(s, 1, o->bucket);
	tpot = (psim_decode(s, t_pre, 1, (uint32_t)n) - t_pre) / n;
	psim_destroy(s);
	snprintf(row->test, sizeof(row->test), "tg%d", n);
	c->names[c->n_rows] = row->test;
	row->pred_ms = tpot / 1e6;
	row->pred_rate = 1e9 / tpot;
	c->pred_tpot_ns = tpot;
	c->tr.test = c->n_rows;
	/*
	 * Repetition -1 is an untimed, untraced warm-up: the decode is
	 * deterministic, so it reads the embedding rows the timed ones use
	 * (see touch_embeddings()).
	 */
	for (r = -1; r < o->reps; r++) {
		struct pipe_stats a, b;
		int32_t tok = 1;
		int64_t t0, t1, arg = 0;

		if (o->trace)
			pipe_set_trace(c->p, r < 0 ? NULL : trace_rec, r < 0 ? NULL : &c->tr);
		if (pipe_forward(c->p, &tok, 1, 0, c->logits, err, errlen))
			return -1;
		pipe_get_stats(c->p, &a);
		t0 = rk_now_ns();
		for (i = 0; i < n; i++) {
			int64_t s0 = rk_now_ns();

			tok = (int32_t)util_argmax(c->logits, o->m->n_vocab);
			arg += rk_now_ns() - s0;
			if (pipe_forward(c->p, &tok, 1, 1 + i, c->logits, err, errlen))
				return -1;
		}
		t1 = rk_now_ns();
		pipe_get_stats(c->p, &b);
		if (pipe_account(c->p, err, errlen) < 0)
			return -1;
		if (r < 0)
			continue;
		fig_add(&row->ms, (t1 - t0) / 1e6 / n);
		fig_add(&row->rate, n / ((t1 - t0) / 1e9));
		host += (double)(b.host_ns - a.host_ns + arg) / n;
	}
	c->host_step_ns = host / o->reps;
	c->n_rows++;
	return 0;
}

static int pipeline_tests(struct ctx *c, char *err, size_t errlen)
{
	const struct bench_opts *o = c->o;
	struct pipe_opts po = { .n_ctx = o->n_ctx, .bucket = o->bucket, .n_seq = 1,
				.kv_type = o->kv_type };
	uint32_t maxp = 1;
	int i, ret = -1;

	for (i = 0; i < o->n_prompts; i++)
		if (o->prompts[i] > maxp)
			maxp = o->prompts[i];
	c->toks = calloc(maxp, sizeof(*c->toks));
	/* Logits, and a row of embeddings for touch_embeddings(). */
	c->logits = calloc(o->m->n_vocab > o->m->dim ? o->m->n_vocab : o->m->dim,
			   sizeof(*c->logits));
	if (!c->toks || !c->logits)
		return snprintf(err, errlen, "out of memory"), -1;
	if (pipe_create(&c->p, o->m, o->cards, o->plan, &po, err, errlen))
		return -1;
	c->tr.n_stages = pipe_n_stages(c->p);
	c->tr.nslot = (int)plan_slots(c->tr.n_stages);
	if (o->trace)
		pipe_set_trace(c->p, trace_rec, &c->tr);
	/* A warm-up forward: first touches of the cards' memory are not measured. */
	c->toks[0] = 1;
	if (pipe_forward(c->p, c->toks, 1, 0, c->logits, err, errlen) ||
	    pipe_account(c->p, err, errlen) < 0)
		goto out;
	c->tr.n = 0;
	for (i = 0; i < o->n_prompts; i++)
		if (pp_test(c, o->prompts[i], err, errlen))
			goto out;
	if (o->n_gen > 0 && tg_test(c, err, errlen))
		goto out;
	ret = 0;
out:
	pipe_destroy(c->p);
	c->p = NULL;
	return ret;
}

/*
 * The tgN spec row's passes as measured (c->passes): decode passes (a
 * decode token, with drafts or not) and verify passes, the tokens a
 * decode pass gave (each request's first token comes from its prefill)
 * and the drafts a verify pass accepted.
 */
static void spec_passes_note(const struct ctx *c)
{
	const struct bench_opts *o = c->o;
	long long dec = 0, ver = 0, toks = (long long)(o->n_gen - 1) * o->reps;
	size_t i;

	for (i = 0; i < c->passes.n; i++) {
		dec += c->passes.p[i].n_decode > 0;
		ver += c->passes.p[i].k > 0;
	}
	if (!dec)
		return;
	fprintf(o->out, "measured (tg%d %s): %lld decode passes through the cards for %lld "
		"tokens: %.2f tokens a pass (1.00 without speculation), %.2f passes a token; %lld "
		"verify passes, %.2f drafts accepted a verify pass\n", o->n_gen, spec_name(o->spec),
		dec, toks, (double)toks / dec, (double)dec / toks, ver,
		ver ? (double)c->spec_acc / ver : 0.0);
}

static void print_notes(const struct ctx *c)
{
	const struct bench_opts *o = c->o;
	uint64_t kv = 0;
	struct rusage ru;
	char b[32];
	uint32_t l;

	for (l = 0; l < o->m->n_layers; l++)
		if (o->m->layers[l].kind != LLM_LAYER_DELTANET)
			kv = util_add_u64(kv, llm_kv_bytes(o->m, o->n_ctx, o->kv_type), NULL);
	util_fmt_bytes(b, sizeof(b), kv);
	fprintf(o->out, "KV cache %s: %s a session at ctx %u (%llu bytes, all cards)\n",
		quant_kv_type_name(o->kv_type), b, o->n_ctx, (unsigned long long)kv);

	if (o->n_gen > 0 && c->pred_tpot_ns > 0)
		fprintf(o->out, "host time per decode step (runtime + driver, measured): %.0f us = "
			"%.1f %% of the modelled card time per token (%.2f ms)\n",
			c->host_step_ns / 1e3, 100 * c->host_step_ns / c->pred_tpot_ns,
			c->pred_tpot_ns / 1e6);
	if (o->trace && o->n_prompts && c->o->plan->n_segs > 1)
		fprintf(o->out, "copy/compute overlap (%s): %.0f %% of the hidden-state transfer "
			"time runs while a card computes\n", c->names[c->ov_test],
			100 * overlap(&c->tr, c->ov_test));
	if (o->spec && o->n_gen > 0)
		fprintf(o->out, "speculative decoding (%s, --draft-max %u): %lld drafted, %lld "
			"accepted, acceptance %.2f; predicted at that acceptance: %.2f tokens a "
			"pass (pred. t/s of tg%d %s)\n", spec_name(o->spec), c->spec_k, c->spec_n,
			c->spec_acc, c->spec_a, predict_spec_tokens_per_pass(c->spec_a, c->spec_k),
			o->n_gen, spec_name(o->spec));
	if (o->spec && o->n_gen > 0)
		spec_passes_note(c);
	if (!getrusage(RUSAGE_SELF, &ru))
		fprintf(o->out, "peak resident set of rk1828-llm: %.1f MiB\n", ru.ru_maxrss / 1024.0);
}

/*
 * The plan the engine makes for @o->sessions sessions (engine_setup.c:
 * their KV caches on the same cards, strict slots), into @out; @o->plan
 * when it cannot be made.
 */
static void sessions_plan(const struct bench_opts *o, struct plan *out)
{
	struct plan_sizes sz = { .n_ctx = o->n_ctx, .bucket = o->bucket,
				 .n_seq = (uint32_t)o->sessions, .kv_type = o->kv_type };
	uint64_t free_b[PLAN_MAX_CARDS];
	int ids[PLAN_MAX_CARDS], i;
	char msg[96 * PLAN_MAX_CARDS + 256];

	for (i = 0; i < o->n_cards && i < PLAN_MAX_CARDS; i++) {
		struct rk_card *cd = &o->cards[o->card_idx[i]];

		if (rk_card_refresh(cd))
			break;
		free_b[i] = cd->mem_free;
		ids[i] = cd->index;
		if (rk_card_bo_align(cd) > sz.bo_align)
			sz.bo_align = (uint32_t)rk_card_bo_align(cd);
	}
	if (i < o->n_cards ||
	    plan_model(o->m, &sz, o->n_cards, free_b, ids, out, msg, sizeof(msg)))
		*out = *o->plan;
}

/*
 * The tgN xS row of @S sessions: predicted on the profile, measured
 * through the engine. With --spec, S = 1 is the spec row's baseline: one
 * session through the same engine path without speculation.
 */
static int sessions_row(struct ctx *c, int S, char *err, size_t errlen)
{
	const struct bench_opts *o = c->o;
	struct row *row = &c->rows[c->n_rows];
	uint32_t prompt = o->n_prompts ? o->prompts[0] : 128;
	long long dn = 0, da = 0;
	struct plan plan;
	struct psim *s;

	if (S > 1)
		sessions_plan(o, &plan);
	else
		plan = *o->plan;
	s = psim_create(c->layers, o->m->n_layers, &c->head, &plan, &c->po);

	if (!s)
		return snprintf(err, errlen, "out of memory"), -1;
	snprintf(row->test, sizeof(row->test), "tg%d x%d", o->n_gen, S);
	c->names[c->n_rows] = row->test;
	row->pred_rate = psim_aggregate(s, (uint32_t)S, prompt);
	row->pred_ms = 1000.0 * S / row->pred_rate;
	psim_destroy(s);
	if (sessions_test(o, prompt, S, false, row, &dn, &da, NULL, err, errlen))
		return -1;
	c->n_rows++;
	return 0;
}

/*
 * The tgN spec row: one session speculating through the engine (--spec,
 * --draft-max K) after the first prompt; predicted at the acceptance it
 * measured, A = accepted / drafted, with K drafts a pass
 * (psim_spec_decode()).
 */
static int spec_row(struct ctx *c, char *err, size_t errlen)
{
	const struct bench_opts *o = c->o;
	struct row *row = &c->rows[c->n_rows];
	uint32_t prompt = o->n_prompts ? o->prompts[0] : 128, k;
	double t0, t, made;
	struct psim *s;

	snprintf(row->test, sizeof(row->test), "tg%d %s", o->n_gen, spec_name(o->spec));
	c->names[c->n_rows] = row->test;
	c->spec_test = c->n_rows;
	c->spec_n = c->spec_acc = 0;
	if (sessions_test(o, prompt, 1, true, row, &c->spec_n, &c->spec_acc, &c->passes, err,
			  errlen))
		return -1;
	c->spec_a = c->spec_n ? (double)c->spec_acc / c->spec_n : 0;
	k = (uint32_t)(o->draft_max ? o->draft_max : ENGINE_DEFAULT_DRAFT_MAX);
	if (k > o->bucket - 1)
		k = o->bucket - 1;
	c->spec_k = k;
	s = psim_create(c->layers, o->m->n_layers, &c->head, o->plan, &c->po);
	if (!s)
		return snprintf(err, errlen, "out of memory"), -1;
	t0 = psim_prefill(s, prompt, o->bucket);
	t = psim_spec_decode(s, t0, prompt, (uint32_t)o->n_gen, k, c->spec_a, &made);
	psim_destroy(s);
	row->pred_rate = made / ((t - t0) / 1e9);
	row->pred_ms = 1000.0 / row->pred_rate;
	c->n_rows++;
	return 0;
}

int bench_run(const struct bench_opts *o, char *err, size_t errlen)
{
	struct ctx *c = calloc(1, sizeof(*c));
	uint32_t l;
	int ret = -1;

	if (!c)
		return snprintf(err, errlen, "out of memory"), -1;
	c->o = o;
	c->spec_test = -1;
	c->po = (struct predict_opts){ o->prof, o->link, o->bucket, o->n_ctx, NULL, o->card_links,
				       0, 0 };
	c->layers = calloc(o->m->n_layers ? o->m->n_layers : 1, sizeof(*c->layers));
	if (!c->layers) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (l = 0; l < o->m->n_layers; l++) {
		predict_cost_layer(o->m, l, &c->layers[l]);
		c->layers[l].kv_elt_bytes = predict_kv_elt_bytes(o->m, o->kv_type);
	}
	predict_cost_head(o->m, &c->head);
	if ((o->n_prompts || o->n_gen > 0) && pipeline_tests(c, err, errlen))
		goto out;
	if (o->sessions > 1 && o->n_gen > 0 && sessions_row(c, o->sessions, err, errlen))
		goto out;
	if (o->spec && o->sessions <= 1 && o->n_gen > 0 && sessions_row(c, 1, err, errlen))
		goto out;
	if (o->spec && o->n_gen > 0 && spec_row(c, err, errlen))
		goto out;
	print_table(o, c->rows, c->n_rows);
	print_notes(c);
	if (o->trace && write_trace(c, err, errlen))
		goto out;
	ret = 0;
out:
	free(c->layers);
	free(c->logits);
	free(c->toks);
	free(c->tr.j);
	bench_passes_free(&c->passes);
	free(c);
	return ret;
}
