// SPDX-License-Identifier: MIT
/*
 * Inference engine (engine.h): the request lifecycle and the engine
 * thread. Planning and setup are in engine_setup.c, the per-token work
 * (sampling, log-probabilities, text deltas, finishing) in engine_token.c.
 *
 * Threads: engine_submit()/engine_cancel()/engine_req_put()/
 * engine_get_stats() run on caller threads and touch only the queue,
 * the flags and the counters under e->mu. Everything else (slots, running
 * requests, the pipeline) belongs to the engine thread, which calls the
 * callbacks without holding e->mu.
 *
 * One loop iteration of the engine thread (one scheduler step):
 *  1. under e->mu: take cancelled queued requests out, admit queued
 *     requests into free slots (FIFO; sched_pick_slot() for the prefix
 *     cache);
 *  2. finish what was cancelled (queued or running);
 *  3. submit micro-batches (sched_build()) until pipe_depth() are in
 *     flight or nothing is ready;
 *  4. collect the oldest micro-batch: sample the tokens that asked for
 *     logits, stream their text, finish requests.
 * A request's token still in flight when it finishes (cancel) is dropped
 * at collection; its KV row is written anyway and stays valid for the
 * slot's prefix-cache record, because each card runs micro-batches in
 * submission order.
 */
#include "engine_int.h"
#include "rk1828/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


const double engine_hist_le_ms[ENGINE_HIST_BUCKETS] = {
	5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000,
};

const char *engine_finish_name(enum engine_finish f)
{
	switch (f) {
	case ENGINE_FINISH_STOP: return "stop";
	case ENGINE_FINISH_LENGTH: return "length";
	case ENGINE_FINISH_CANCELLED: return "cancelled";
	case ENGINE_FINISH_ERROR: return "error";
	}
	return "?";
}

double eng_now_ms(void)
{
	return rk_now_ns() / 1e6;
}

static void req_free(struct engine_req *q)
{
	txo_free(&q->txo);
	sampler_free(q->smp);
	jm_free(q->jm);
	free(q->prompt);
	free(q->lp);
	free(q->bias);
	free(q->draft);
	free(q);
}

/* Drop one reference (caller's or engine's). */
static void req_unref(struct engine_req *q)
{
	if (__atomic_sub_fetch(&q->refs, 1, __ATOMIC_ACQ_REL) == 0)
		req_free(q);
}

void eng_req_release(struct engine_req *q)
{
	if (q->state == RQ_DONE && !q->n_flight && !q->engine_ref_dropped) {
		q->engine_ref_dropped = true;
		req_unref(q);
	}
}

void engine_req_put(struct engine_req *q)
{
	if (q)
		req_unref(q);
}

void engine_cancel(struct engine_req *q)
{
	struct engine *e;

	if (!q)
		return;
	e = q->e;
	__atomic_store_n(&q->cancel, true, __ATOMIC_RELEASE);
	pthread_mutex_lock(&e->mu);
	e->kick = true;
	pthread_cond_signal(&e->cv);
	pthread_mutex_unlock(&e->mu);
}

/* Validate @r against the engine's limits (no state touched). */
static int check_request(const struct engine *e, const struct engine_request *r,
			 char *err, size_t errlen)
{
	int i, ret;

	if (!r || !r->cb)
		return util_err(err, errlen, -EINVAL, "no request or no callback");
	if (!r->prompt || r->n_prompt < 1)
		return util_err(err, errlen, -EINVAL, "the prompt has no tokens");
	for (i = 0; i < r->n_prompt; i++)
		if (r->prompt[i] < 0 || (uint32_t)r->prompt[i] >= e->m->n_vocab)
			return util_err(err, errlen, -EINVAL,
					"prompt token %d is %d, outside the vocabulary of %u", i,
					r->prompt[i], e->m->n_vocab);
	if (r->max_tokens < -1)
		return util_err(err, errlen, -EINVAL, "max_tokens %d is negative", r->max_tokens);
	ret = sampler_params_check(&r->s, (int)e->m->n_vocab, NULL, err, errlen);
	if (ret)
		return ret;
	if (r->n_stop < 0 || r->n_stop > ENGINE_MAX_STOP || (r->n_stop && !r->stop))
		return util_err(err, errlen, -EINVAL, "at most %d stop strings", ENGINE_MAX_STOP);
	for (i = 0; i < r->n_stop; i++) {
		size_t n = r->stop[i] ? strlen(r->stop[i]) : 0;

		if (!n || n > ENGINE_MAX_STOP_LEN || !txo_utf8_valid(r->stop[i], n))
			return util_err(err, errlen, -EINVAL,
					"stop string %d must be 1..%d bytes of UTF-8", i,
					ENGINE_MAX_STOP_LEN);
	}
	if (r->draft_max < -1 || r->draft_max > SPEC_MAX_DRAFT || r->draft_min < 0 ||
	    r->draft_min > SPEC_MAX_DRAFT)
		return util_err(err, errlen, -EINVAL,
				"speculative.n_max must be -1..%d and speculative.n_min 0..%d",
				SPEC_MAX_DRAFT, SPEC_MAX_DRAFT);
	if ((uint32_t)r->n_prompt > e->info.n_ctx)
		return util_err(err, errlen, -E2BIG,
				"the prompt has %d tokens, more than the context of %u tokens",
				r->n_prompt, e->info.n_ctx);
	if (r->max_tokens > 0 && (uint64_t)r->n_prompt + (uint64_t)r->max_tokens > e->info.n_ctx)
		return util_err(err, errlen, -E2BIG,
				"the prompt has %d tokens and max_tokens is %d: %lld, more than the context of %u tokens",
				r->n_prompt, r->max_tokens,
				(long long)r->n_prompt + r->max_tokens, e->info.n_ctx);
	return 0;
}

/* A request object from @r (not yet visible to the engine thread). */
static struct engine_req *req_new(struct engine *e, const struct engine_request *r)
{
	struct engine_req *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->e = e;
	q->refs = 2;	/* the caller's and the engine's */
	q->prompt = malloc((size_t)r->n_prompt * sizeof(*q->prompt));
	if (!q->prompt || txo_init(&q->txo, r->stop, r->n_stop)) {
		free(q->prompt);
		free(q);
		return NULL;
	}
	if (r->schema) {
		q->jm = jm_new(r->schema);
		if (!q->jm) {
			txo_free(&q->txo);
			free(q->prompt);
			free(q);
			return NULL;
		}
	}
	memcpy(q->prompt, r->prompt, (size_t)r->n_prompt * sizeof(*q->prompt));
	q->n_prompt = r->n_prompt;
	q->max_tokens = r->max_tokens;
	q->s = r->s;
	q->s.bias = NULL;
	q->s.n_bias = 0;
	if (r->s.n_bias > 0 && r->s.bias) {
		q->bias = malloc((size_t)r->s.n_bias * sizeof(*q->bias));
		if (!q->bias) {
			txo_free(&q->txo);
			free(q->prompt);
			free(q);
			return NULL;
		}
		memcpy(q->bias, r->s.bias, (size_t)r->s.n_bias * sizeof(*q->bias));
		q->s.bias = q->bias;
		q->s.n_bias = r->s.n_bias;
	}
	q->ignore_eos = r->ignore_eos;
	q->draft_max = r->draft_max;	/* settled by eng_spec_start() */
	q->draft_min = r->draft_min;
	q->prompt_logits = r->prompt_logits;
	q->cb = r->cb;
	q->user = r->user;
	q->slot = -1;
	q->t_submit = eng_now_ms();
	return q;
}

int engine_submit(struct engine *e, const struct engine_request *r,
		  struct engine_req **out, char *err, size_t errlen)
{
	struct engine_req *q;
	int ret;

	*out = NULL;
	ret = check_request(e, r, err, errlen);
	if (ret)
		return ret;
	q = req_new(e, r);
	if (!q)
		return util_err(err, errlen, -ENOMEM, "out of memory");

	*out = q;	/* before any callback can run */
	pthread_mutex_lock(&e->mu);
	if (e->stopping) {
		ret = util_err(err, errlen, -ESHUTDOWN, "the engine is shutting down");
	} else if (e->dead) {
		ret = util_err(err, errlen, -EIO, "the engine stopped after a card failure: %s",
			       e->dead_msg);
	} else if (e->n_queued >= e->info.n_slots - e->n_busy + e->info.queue_max) {
		ret = util_err(err, errlen, -EBUSY, "all %d slots are busy and %d requests wait",
			       e->info.n_slots, e->n_queued);
	}
	if (ret) {
		pthread_mutex_unlock(&e->mu);
		*out = NULL;
		q->refs = 1;
		req_unref(q);
		return ret;
	}
	if (e->q_tail)
		e->q_tail->next = q;
	else
		e->q_head = q;
	e->q_tail = q;
	e->n_queued++;
	e->kick = true;
	pthread_cond_signal(&e->cv);
	pthread_mutex_unlock(&e->mu);
	return 0;
}

void engine_get_info(const struct engine *e, struct engine_info *info)
{
	*info = e->info;
}

void engine_get_stats(struct engine *e, struct engine_stats *st)
{
	int k;

	pthread_mutex_lock(&e->mu);
	*st = e->stats;
	st->active = e->n_busy;
	st->queued = e->n_queued;
	st->n_slots = e->info.n_slots;
	st->spec = e->o.spec;
	st->uptime_s = (eng_now_ms() - e->t_created) / 1000.0;
	st->n_cards = e->info.n_cards;
	for (k = 0; k < st->n_cards && k < ENGINE_MAX_CARDS; k++)
		st->card_busy[k] = st->uptime_s > 0 ?
				   e->busy_ns[k] / 1e9 / st->uptime_s : 0.0;
	st->failed = e->dead;
	snprintf(st->failure, sizeof(st->failure), "%s", e->dead ? e->dead_msg : "");
	pthread_mutex_unlock(&e->mu);
}

/* ------------------------------------------------------ engine thread */

/* Unlink @q from the queue (e->mu held). */
static void queue_remove(struct engine *e, struct engine_req *q, struct engine_req *prev)
{
	if (prev)
		prev->next = q->next;
	else
		e->q_head = q->next;
	if (e->q_tail == q)
		e->q_tail = prev;
	q->next = NULL;
	e->n_queued--;
}

/*
 * Under e->mu: move cancelled queued requests to @gone and admit queued
 * requests (FIFO) into free slots, onto @admit. With @all (shutdown or
 * dead engine) every queued request goes to @gone.
 */
static void take_queue(struct engine *e, bool all, struct engine_req **gone,
		       struct engine_req **admit)
{
	struct engine_req *q = e->q_head, *prev = NULL, *nx;
	struct engine_req **gt = gone, **at = admit;
	bool full = false;

	while (*gt)
		gt = &(*gt)->next;
	for (; q; q = nx) {
		nx = q->next;
		if (all || __atomic_load_n(&q->cancel, __ATOMIC_ACQUIRE)) {
			queue_remove(e, q, prev);
			*gt = q;
			gt = &q->next;
			continue;
		}
		if (!full) {
			int reuse, s = sched_pick_slot(e->slots, e->info.n_slots, q->prompt,
						       q->n_prompt, e->info.kv_type, &reuse);

			if (s >= 0) {
				queue_remove(e, q, prev);
				e->slots[s].busy = true;
				e->n_busy++;
				q->slot = s;
				q->cached = reuse;
				*at = q;
				at = &q->next;
				continue;
			}
			full = true;
		}
		prev = q;
	}
}

/* Finish every request on the list @l (cancelled before they started). */
static void finish_list(struct engine *e, struct engine_req *l, enum engine_finish f,
			const char *msg)
{
	struct engine_req *nx;

	for (; l; l = nx) {
		nx = l->next;
		l->next = NULL;
		eng_finish(e, l, f, msg);
	}
}

/* Start the admitted requests on @l in their slots. */
static void start_list(struct engine *e, struct engine_req *l)
{
	struct engine_req *nx;

	for (; l; l = nx) {
		nx = l->next;
		l->next = NULL;
		if (eng_start(e, l))
			eng_finish(e, l, ENGINE_FINISH_ERROR, "out of host memory");
	}
}

/* Whether the engine thread has something to do (e->mu held). */
static bool have_work(struct engine *e)
{
	return e->stopping || e->kick || e->n_running || e->n_flight ||
	       (e->q_head && e->n_busy < e->info.n_slots);
}

/* Fail everything after a card failure: the engine is dead. */
static void go_dead(struct engine *e, const char *msg)
{
	struct engine_req *gone = NULL, *admit = NULL;
	int s;

	pthread_mutex_lock(&e->mu);
	e->dead = true;
	snprintf(e->dead_msg, sizeof(e->dead_msg), "%s", msg);
	take_queue(e, true, &gone, &admit);
	pthread_mutex_unlock(&e->mu);
	fprintf(stderr, "rk1828-llm: engine: %s\n", msg);
	for (s = 0; s < e->info.n_slots; s++)
		if (e->run[s])
			eng_finish(e, e->run[s], ENGINE_FINISH_ERROR, msg);
	finish_list(e, gone, ENGINE_FINISH_ERROR, msg);
	while (e->n_flight)
		eng_drop_flight(e);
}

/* Submit micro-batches while the pipeline has room. Return: 0 or -1 (dead). */
static int submit_ready(struct engine *e)
{
	char err[384];

	while (!e->dead && e->n_flight < pipe_depth(e->pipe)) {
		int n = eng_build(e);

		if (n <= 0)
			break;
		if (eng_submit_batch(e, n, err, sizeof(err))) {
			go_dead(e, err);
			return -1;
		}
	}
	return 0;
}

/*
 * How often an idle engine asks its cards whether they are still there
 * (pipe_probe()), ms: a card unplugged or removed while no request runs
 * turns /health to 503 within this time rather than at the next request.
 */
#define ENGINE_PROBE_MS	2000

/*
 * Wait for work (e->mu held, and held again on return); every
 * ENGINE_PROBE_MS without any, probe the cards and go dead when one is
 * gone. Return: true when the engine went dead (its lists are failed).
 */
static bool wait_for_work(struct engine *e)
{
	char err[384];
	struct timespec ts;

	while (!have_work(e)) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += ENGINE_PROBE_MS / 1000;
		ts.tv_nsec += (long)(ENGINE_PROBE_MS % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&e->cv, &e->mu, &ts) != ETIMEDOUT || e->dead ||
		    have_work(e))
			continue;
		pthread_mutex_unlock(&e->mu);
		if (pipe_probe(e->pipe, err, sizeof(err))) {
			go_dead(e, err);
			pthread_mutex_lock(&e->mu);
			return true;
		}
		pthread_mutex_lock(&e->mu);
	}
	return false;
}

static void *engine_main(void *arg)
{
	struct engine *e = arg;
	char err[384];

	for (;;) {
		struct engine_req *gone = NULL, *admit = NULL;
		bool stopping;
		int s;

		pthread_mutex_lock(&e->mu);
		if (!have_work(e)) {
			pthread_mutex_unlock(&e->mu);
			eng_idle(e);
			pthread_mutex_lock(&e->mu);
		}
		if (wait_for_work(e)) {
			pthread_mutex_unlock(&e->mu);
			continue;
		}
		stopping = e->stopping;
		e->kick = false;
		take_queue(e, stopping || e->dead, &gone, &admit);
		pthread_mutex_unlock(&e->mu);

		finish_list(e, gone, e->dead ? ENGINE_FINISH_ERROR : ENGINE_FINISH_CANCELLED,
			    e->dead ? e->dead_msg : NULL);
		for (s = 0; s < e->info.n_slots; s++) {
			struct engine_req *q = e->run[s];

			if (q && (stopping || __atomic_load_n(&q->cancel, __ATOMIC_ACQUIRE)))
				eng_finish(e, q, ENGINE_FINISH_CANCELLED, NULL);
		}
		start_list(e, admit);
		if (stopping) {
			while (e->n_flight && !e->dead)
				if (eng_collect(e, err, sizeof(err)))
					break;
			while (e->n_flight)
				eng_drop_flight(e);
			break;
		}
		e->step++;
		if (submit_ready(e))
			continue;
		if (e->n_flight && eng_collect(e, err, sizeof(err)))
			go_dead(e, err);
	}
	return NULL;
}

int eng_start_thread(struct engine *e)
{
	return pthread_create(&e->thr, NULL, engine_main, e) ? -1 : 0;
}

void engine_destroy(struct engine *e)
{
	if (!e)
		return;
	if (e->thread_started) {
		pthread_mutex_lock(&e->mu);
		e->stopping = true;
		pthread_cond_signal(&e->cv);
		pthread_mutex_unlock(&e->mu);
		pthread_join(e->thr, NULL);
	}
	eng_free(e);
}
