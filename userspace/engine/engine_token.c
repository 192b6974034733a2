// SPDX-License-Identifier: MIT
/*
 * Engine, per-token work on the engine thread: starting a request in its
 * slot, building and submitting micro-batches (scheduler.h), collecting their
 * logits, sampling, log-probabilities, text deltas (textout.h) and
 * finishing requests with their DONE event.
 */
#include "engine_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tokenizer.h"

/* Histogram observation (e->mu held). */
static void hist_add(struct engine_hist *h, double ms)
{
	int i;

	for (i = 0; i < ENGINE_HIST_BUCKETS; i++)
		if (ms <= engine_hist_le_ms[i])
			h->count[i]++;
	h->total++;
	h->sum_ms += ms;
}

static uint64_t auto_seed(void)
{
	static uint64_t counter;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) ^
	       (__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ULL);
}

int eng_start(struct engine *e, struct engine_req *q)
{
	struct sampler_params sp = q->s;
	struct sched_slot *sl = &e->slots[q->slot];

	if (!sp.have_seed)
		sp.seed = auto_seed();
	q->smp = sampler_new(&sp, (int)e->m->n_vocab);
	if (!q->smp || eng_spec_start(e, q, sp.seed))
		return -ENOMEM;
	sampler_prime(q->smp, q->prompt, q->n_prompt);	/* the repeat window */
	/* A hybrid model reuses only where a recurrent state exists. */
	q->cached = eng_hybrid_reuse(e, q);
	/* Rows past the reused prefix are overwritten by this request. */
	sl->n_toks = q->cached;
	memset(&q->sq, 0, sizeof(q->sq));
	q->sq.slot = q->slot;
	q->sq.prompt = q->prompt;
	q->sq.n_prompt = q->n_prompt;
	q->sq.next = q->cached;
	q->sq.pos = q->cached;
	q->sq.order = e->order++;
	q->state = RQ_ACTIVE;
	q->t_start = eng_now_ms();
	e->run[q->slot] = q;
	e->n_running++;

	pthread_mutex_lock(&e->mu);
	e->stats.prompt_tokens += (uint64_t)q->n_prompt;
	e->stats.cached_tokens += (uint64_t)q->cached;
	if (q->cached)
		e->stats.prefix_hits++;
	else
		e->stats.prefix_misses++;
	pthread_mutex_unlock(&e->mu);
	if (e->o.verbose > 1)
		fprintf(stderr, "engine: slot %d: %d prompt tokens, %d cached\n", q->slot,
			q->n_prompt, q->cached);
	return 0;
}

/* Grow the event scratch to @n entries. */
static int ev_room(struct engine *e, int n)
{
	int32_t *ids;
	struct engine_logprob *lp;
	int cap = e->cap_ev ? e->cap_ev : 16;

	if (n <= e->cap_ev)
		return 0;
	while (cap < n)
		cap *= 2;
	ids = realloc(e->ev_ids, (size_t)cap * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	e->ev_ids = ids;
	lp = realloc(e->ev_lp, (size_t)cap * sizeof(*lp));
	if (!lp)
		return -ENOMEM;
	e->ev_lp = lp;
	e->cap_ev = cap;
	return 0;
}

/* Fill @ev's text and completed tokens from @d. */
static void ev_from_delta(struct engine *e, struct engine_req *q, const struct txo_delta *d,
			  struct engine_event *ev)
{
	int i;

	ev->text = d->text;
	ev->len = d->len;
	if (!d->n_done || ev_room(e, d->n_done))
		return;
	for (i = 0; i < d->n_done; i++) {
		e->ev_ids[i] = d->done[i].id;
		if (q->s.logprobs && d->done[i].idx < q->cap_lp)
			e->ev_lp[i] = q->lp[d->done[i].idx];
	}
	ev->ids = e->ev_ids;
	ev->n_ids = d->n_done;
	ev->logprobs = q->s.logprobs ? e->ev_lp : NULL;
}

static void ev_usage(const struct engine_req *q, struct engine_event *ev)
{
	ev->usage.prompt_tokens = q->n_prompt;
	ev->usage.completion_tokens = q->n_gen;
	ev->usage.cached_tokens = q->cached;
	ev->usage.draft_n = q->draft_n;
	ev->usage.draft_n_accepted = q->draft_acc;
}

void eng_finish(struct engine *e, struct engine_req *q, enum engine_finish f,
		const char *msg)
{
	struct engine_event ev = { .kind = ENGINE_EV_DONE, .finish = f, .error = msg };
	struct txo_delta d = { 0 };
	double now = eng_now_ms();

	if (q->state == RQ_DONE)
		return;
	if (q->state == RQ_ACTIVE) {
		struct sched_slot *sl = &e->slots[q->slot];

		eng_spec_end(e, q);
		sl->busy = false;
		sl->last_used = e->step;
		e->run[q->slot] = NULL;
		e->n_running--;
	}
	/* Held-back text is part of the answer unless the client is gone. */
	if (f == ENGINE_FINISH_STOP || f == ENGINE_FINISH_LENGTH) {
		txo_finish(&q->txo, &d);
		ev_from_delta(e, q, &d, &ev);
	}
	ev_usage(q, &ev);
	ev.timing.total_ms = now - q->t_submit;
	ev.timing.queued_ms = (q->t_start ? q->t_start : now) - q->t_submit;
	if (q->got_first) {
		ev.timing.ttft_ms = q->t_first - q->t_submit;
		ev.timing.prefill_ms = q->t_first - q->t_start;
		ev.timing.decode_ms = now - q->t_first;
	}
	if (f == ENGINE_FINISH_ERROR && !msg)
		ev.error = "engine failure";
	if (f == ENGINE_FINISH_STOP && q->txo.stop_hit >= 0)
		ev.stop_word = q->txo.stop[q->txo.stop_hit];

	pthread_mutex_lock(&e->mu);
	if (q->slot >= 0)
		e->n_busy--;	/* running, or admitted and never started */
	e->stats.requests[f]++;
	if (q->got_first)
		hist_add(&e->stats.ttft, ev.timing.ttft_ms);
	if (q->n_gen >= 2)
		hist_add(&e->stats.tpot, ev.timing.decode_ms / (q->n_gen - 1));
	pthread_mutex_unlock(&e->mu);
	if (q->slot >= 0 && q->state != RQ_ACTIVE)
		e->slots[q->slot].busy = false;

	q->state = RQ_DONE;
	q->cb(&ev, q->user);
	eng_req_release(q);
}

int eng_build(struct engine *e)
{
	struct sched_seq *seqs[ENGINE_MAX_SLOTS];
	int s, n = e->info.n_slots;

	for (s = 0; s < n; s++)
		seqs[s] = e->run[s] ? &e->run[s]->sq : NULL;
	return sched_build(seqs, n, (int)e->info.bucket, pipe_n_stages(e->pipe), e->mb_limit,
			   e->mb);
}

/* engine_opts.trace of micro-batch e->n_mb - 1, just submitted from e->mb[0..n). */
static void trace_submit(struct engine *e, int n)
{
	struct engine_trace t = {
		.kind = ENGINE_TRACE_SUBMIT, .mb = e->n_mb - 1, .n_flight = e->n_flight,
		.depth = pipe_depth(e->pipe), .n_tok = n, .tok = e->trace_tok,
	};
	int i;

	if (!e->o.trace)
		return;
	for (i = 0; i < n; i++)
		e->trace_tok[i] = (struct engine_trace_tok){
			.slot = e->mb[i].slot, .pos = e->mb[i].pos,
			.decode = !!(e->mb[i].flags & SCHED_TOK_DECODE),
			.logits = !!(e->mb[i].flags & SCHED_TOK_LOGITS),
			.draft = !!(e->mb[i].flags & SCHED_TOK_DRAFT),
			.replay = !!(e->mb[i].flags & SCHED_TOK_REPLAY),
		};
	t.t_ms = eng_now_ms();
	e->o.trace(e->o.trace_user, &t);
}

/* engine_opts.trace of the oldest micro-batch, collected and sampled. */
static void trace_collect(struct engine *e)
{
	struct engine_trace t = {
		.kind = ENGINE_TRACE_COLLECT, .mb = e->n_mb - (uint64_t)e->n_flight - 1,
		.n_flight = e->n_flight, .depth = pipe_depth(e->pipe),
	};

	if (!e->o.trace)
		return;
	t.t_ms = eng_now_ms();
	e->o.trace(e->o.trace_user, &t);
}

int eng_submit_batch(struct engine *e, int n, char *err, size_t errlen)
{
	struct eng_flight *f = &e->fl[(e->fl_head + e->n_flight) % ENG_MAX_FLIGHT];
	int i;

	for (i = 0; i < n; i++) {
		const struct sched_tok *t = &e->mb[i];
		struct sched_slot *sl = &e->slots[t->slot];

		e->ptok[i] = (struct pipe_tok){
			.token = t->token, .pos = t->pos, .seq = (uint32_t)t->slot,
			.flags = (t->flags & SCHED_TOK_LOGITS) ? PIPE_TOK_LOGITS : 0,
		};
		/* The cards run micro-batches in order: the row is as good as written. */
		sl->toks[t->pos] = t->token;
		sl->n_toks = t->pos + 1;
	}
	eng_hybrid_flags(e, e->ptok, n);
	if (pipe_submit(e->pipe, e->ptok, n, err, errlen))
		return -1;
	f->n = n;
	memcpy(f->t, e->mb, (size_t)n * sizeof(*f->t));
	for (i = 0; i < n; i++) {
		f->rq[i] = e->run[e->mb[i].slot];
		f->rq[i]->n_flight++;
	}
	e->n_flight++;
	e->n_mb++;
	trace_submit(e, n);
	if (e->o.verbose > 2) {
		char line[256];
		int at = 0;

		for (i = 0; i < n && at < (int)sizeof(line) - 16; i++)
			at += snprintf(line + at, sizeof(line) - at, " %d:%d%s", e->mb[i].slot,
				       e->mb[i].pos, (e->mb[i].flags & SCHED_TOK_LOGITS) ? "*" : "");
		fprintf(stderr, "engine: %.3f submit %d tokens (%d in flight):%s\n",
			eng_now_ms(), n, e->n_flight, line);
	}
	pthread_mutex_lock(&e->mu);
	e->stats.steps++;
	e->stats.batch_tokens += (uint64_t)n;
	pthread_mutex_unlock(&e->mu);
	return 0;
}

/* Log-probabilities of @tok and the @n_top best alternatives in @logits. */
static void logprob_of(const float *logits, int n_vocab, int32_t tok, int n_top,
		       struct engine_logprob *lp)
{
	double max = -INFINITY, sum = 0.0, lse;
	int i, j;

	for (i = 0; i < n_vocab; i++)
		if (logits[i] > max)
			max = logits[i];
	for (i = 0; i < n_vocab; i++)
		sum += exp((double)logits[i] - max);
	lse = max + log(sum);
	lp->id = tok;
	lp->logprob = (float)(logits[tok] - lse);
	lp->n_top = 0;
	/* Insertion into a sorted top list (ties: lower id first). */
	for (i = 0; i < n_vocab && n_top > 0; i++) {
		float v = logits[i];

		if (v == -INFINITY)
			continue;	/* masked by a JSON schema: not an alternative */
		if (lp->n_top == n_top && v <= logits[lp->top[n_top - 1].id])
			continue;
		j = lp->n_top < n_top ? lp->n_top++ : n_top - 1;
		while (j > 0 && logits[lp->top[j - 1].id] < v) {
			lp->top[j] = lp->top[j - 1];
			j--;
		}
		lp->top[j].id = i;
	}
	for (i = 0; i < lp->n_top; i++)
		lp->top[i].logprob = (float)(logits[lp->top[i].id] - lse);
}

static int store_logprob(struct engine *e, struct engine_req *q, const float *logits,
			 int32_t tok)
{
	if (q->n_gen >= q->cap_lp) {
		int cap = q->cap_lp ? 2 * q->cap_lp : 32;
		struct engine_logprob *p = realloc(q->lp, (size_t)cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		q->lp = p;
		q->cap_lp = cap;
	}
	logprob_of(logits, (int)e->m->n_vocab, tok, q->s.n_probs, &q->lp[q->n_gen]);
	return 0;
}

bool eng_emit(struct engine *e, struct engine_req *q, const float *used, int32_t tok)
{
	struct engine_event ev = { .kind = ENGINE_EV_TEXT };
	struct txo_delta d;
	int len;

	if (!q->got_first) {
		q->got_first = true;
		q->t_first = eng_now_ms();
	}
	/* Under a schema an end-of-generation token comes only when the document is whole. */
	if (tok_is_eog(e->tok, tok) && (!q->ignore_eos || q->jm)) {
		eng_finish(e, q, ENGINE_FINISH_STOP, NULL);
		return false;
	}
	if (q->s.logprobs && store_logprob(e, q, used, tok)) {
		eng_finish(e, q, ENGINE_FINISH_ERROR, "out of host memory");
		return false;
	}
	q->n_gen++;
	pthread_mutex_lock(&e->mu);
	e->stats.completion_tokens++;
	pthread_mutex_unlock(&e->mu);
	len = tok_piece(e->tok, tok, e->piece, e->piece_cap);
	if (txo_push(&q->txo, tok, e->piece, len > 0 ? (size_t)len : 0, &d)) {
		eng_finish(e, q, ENGINE_FINISH_ERROR, "out of host memory");
		return false;
	}
	if (d.len || d.n_done) {
		ev_from_delta(e, q, &d, &ev);
		ev_usage(q, &ev);
		q->cb(&ev, q->user);
	}
	if (d.stopped || (q->jm && jm_done(q->jm)))
		eng_finish(e, q, ENGINE_FINISH_STOP, NULL);
	else if (q->max_tokens > 0 && q->n_gen >= q->max_tokens)
		eng_finish(e, q, ENGINE_FINISH_LENGTH, NULL);
	else if ((uint32_t)q->sq.pos >= e->info.n_ctx)
		eng_finish(e, q, ENGINE_FINISH_LENGTH, NULL);	/* context full */
	else
		return true;
	return false;
}

/* The logits of @q's pending token arrived: sample, stream, maybe finish. */
static void on_logits(struct engine *e, struct engine_req *q, const float *logits)
{
	const float *used = logits;
	const char *why = NULL;
	int32_t tok;

	q->sq.waiting = false;
	if (!q->got_first && q->prompt_logits)
		memcpy(q->prompt_logits, logits, (size_t)e->m->n_vocab * sizeof(float));
	if (q->max_tokens == 0) {
		q->got_first = true;
		q->t_first = eng_now_ms();
		eng_finish(e, q, ENGINE_FINISH_LENGTH, NULL);
		return;
	}
	tok = sampler_sample(q->smp, logits);
	if (q->jm)
		tok = eng_json_pick(e, q, logits, tok, &used, &why);
	if (tok < 0) {
		if (!q->got_first) {
			q->got_first = true;
			q->t_first = eng_now_ms();
		}
		eng_finish(e, q, ENGINE_FINISH_ERROR, why);
		return;
	}
	sampler_accept(q->smp, tok);
	if (!eng_emit(e, q, used, tok))
		return;
	q->sq.next_tok = tok;
	q->sq.ready = true;
	q->sq.ready_since = e->step;
	eng_spec_prepare(e, q, logits);
}

/* Forget the oldest flight record; drop the engine's interest in its requests. */
static void pop_flight(struct engine *e)
{
	struct eng_flight *f = &e->fl[e->fl_head];
	int i;

	for (i = 0; i < f->n; i++)
		f->rq[i]->n_flight--;
	for (i = 0; i < f->n; i++)
		eng_req_release(f->rq[i]);
	f->n = 0;
	e->fl_head = (e->fl_head + 1) % ENG_MAX_FLIGHT;
	e->n_flight--;
}

void eng_drop_flight(struct engine *e)
{
	if (e->n_flight)
		pop_flight(e);
}

void eng_learn_cost(struct engine *e)
{
	int stages = pipe_n_stages(e->pipe), n, k = 0;
	int64_t ns;

	while (pipe_exec_cost(e->pipe, &n, &ns) == 1) {
		sched_cost_add(&e->cost, n, (double)ns / stages);
		k++;
	}
	if (k)
		e->mb_limit = sched_mb_limit((int)e->info.bucket, pipe_depth(e->pipe),
					     sched_cost_fixed_tok(&e->cost));
}

/* The pipeline's counters into the engine's statistics. */
static void copy_stats(struct engine *e)
{
	struct pipe_stats ps;
	int i;

	pipe_get_stats(e->pipe, &ps);
	pthread_mutex_lock(&e->mu);
	e->stats.jobs = ps.jobs;
	e->stats.host_ns = ps.host_ns;
	e->stats.wait_ns = ps.wait_ns;
	for (i = 0; i < e->info.n_cards && i < ENGINE_MAX_CARDS; i++)
		e->busy_ns[i] = ps.busy_ns[i];
	pthread_mutex_unlock(&e->mu);
}

int eng_collect(struct engine *e, char *err, size_t errlen)
{
	struct eng_flight *f = &e->fl[e->fl_head];
	int rows, r = 0, i;

	rows = pipe_collect(e->pipe, e->logits, e->max_rows, err, errlen);
	if (rows < 0)
		return -1;
	if (e->o.verbose > 2)
		fprintf(stderr, "engine: %.3f collect %d rows\n", eng_now_ms(), rows);
	for (i = 0; i < f->n; i++) {
		struct engine_req *q = f->rq[i];

		int nd = 0;

		if (!(f->t[i].flags & SCHED_TOK_LOGITS))
			continue;
		if (r >= rows)
			break;
		/* Drafts after a decode token: a verify pass of nd + 1 rows. */
		while (i + 1 + nd < f->n && (f->t[i + 1 + nd].flags & SCHED_TOK_DRAFT) &&
		       f->t[i + 1 + nd].slot == f->t[i].slot)
			nd++;
		if (r + nd >= rows)
			break;
		/* A request finished meanwhile (cancel) ignores its rows. */
		if (q->state == RQ_ACTIVE && nd)
			eng_spec_verify(e, q, &f->t[i], nd, e->logits + (size_t)r * e->m->n_vocab);
		else if (q->state == RQ_ACTIVE)
			on_logits(e, q, e->logits + (size_t)r * e->m->n_vocab);
		r += 1 + nd;
		i += nd;
	}
	eng_learn_cost(e);
	pop_flight(e);
	trace_collect(e);
	copy_stats(e);
	return 0;
}

void eng_idle(struct engine *e)
{
	char err[384];

	if (e->dead || pipe_account(e->pipe, err, sizeof(err)) <= 0)
		return;
	eng_learn_cost(e);
	copy_stats(e);
}
