// SPDX-License-Identifier: MIT
/*
 * A scripted engine for testing the HTTP layer on the host without cards
 * (build/tests/serve-fake): it implements engine.h's calls with a thread
 * that, every FAKE_STEP_MS, gives each active request one "token" of the
 * text "w<i> " (i = 0, 1, ...), ends it after FAKE_LEN tokens (stop) or at
 * max_tokens (length), honours stop strings, the slot and queue limits
 * (-EBUSY), -E2BIG, the real engine's limits on stop strings (-EINVAL),
 * cancel, and reports the longest common prefix with
 * the previous request as cached tokens. Its engine_get_stats() counts
 * like the real engine's (tokens, requests by finish, TTFT/TPOT
 * histograms, prefix hits; a card is "busy" while any request runs). Only
 * the server's tests use it.
 *
 * Recorded replies: RK1828_FAKE_REPLIES names a file of lines
 * "TRIGGER<TAB>REPLY" ('#' lines are comments; "\n" in REPLY is a
 * newline). A request whose prompt, decoded, contains TRIGGER gets REPLY
 * instead of the counting text, 4 bytes a token (never inside a UTF-8
 * character), then stops: the shapes real models produce (tool calls,
 * tags) at the HTTP layer without a model that produces them. Under a
 * JSON schema (engine_request.schema) a recorded reply is fed to the
 * matcher as the real engine would sample it: a token it refuses ends the
 * request with ENGINE_FINISH_ERROR, and the request stops as soon as
 * nothing can follow the document (the counting text is not checked).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "jsonmatch.h"
#include "tokenizer.h"
#include "rk1828/util.h"

/* Defaults; RK1828_FAKE_STEP_MS and RK1828_FAKE_LEN override them. */
static int FAKE_STEP_MS = 3;
static int FAKE_LEN = 48;
#define FAKE_MAX	256

struct engine_req {
	struct engine_req *next;
	struct engine_request r;
	int32_t *prompt;
	char *stop[4];
	const char *stop_word;	/* the stop string that ended it */
	char *text;	/* 8 bytes per token of the context ("w4095 ") */
	size_t text_len;
	int n_gen, cached;
	const char *script;	/* a recorded reply, or NULL */
	struct jm_state *jm;	/* a recorded reply's schema, or NULL */
	const char *error;	/* why it ended with ENGINE_FINISH_ERROR */
	size_t script_off;
	bool active, cancel, done;
	int refs;
	double t_submit, t_first, t_start;
};

struct engine {
	pthread_mutex_t mu;
	pthread_t th;
	bool quit;
	struct engine_opts o;
	struct engine_req *list;
	int32_t last[FAKE_MAX * 64];
	int n_last;
	struct engine_stats st;
	double t_created, busy_ms;
	const struct tokenizer *tok;
	char *replies[32][2];	/* trigger, reply */
	int n_replies;
};

/* Read RK1828_FAKE_REPLIES (see the top of the file). */
static void load_replies(struct engine *e)
{
	const char *path = getenv("RK1828_FAKE_REPLIES");
	char line[4096], *tab, *r, *w;
	FILE *f = path ? fopen(path, "r") : NULL;

	while (f && e->n_replies < 32 && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		tab = strchr(line, '\t');
		if (line[0] == '#' || !tab)
			continue;
		*tab = 0;
		for (r = w = tab + 1; *r; r++, w++) {
			if (r[0] == '\\' && r[1] == 'n') {
				*w = '\n';
				r++;
			} else {
				*w = *r;
			}
		}
		*w = 0;
		e->replies[e->n_replies][0] = strdup(line);
		e->replies[e->n_replies++][1] = strdup(tab + 1);
	}
	if (f)
		fclose(f);
}

/* The recorded reply whose trigger the decoded prompt contains, or NULL. */
static const char *find_reply(struct engine *e, const int32_t *ids, int n)
{
	size_t cap = (size_t)n * 64 + 1, len = 0;
	char *text = malloc(cap);
	const char *hit = NULL;
	int i, k;

	for (i = 0; text && i < n && e->n_replies; i++) {
		k = tok_piece(e->tok, ids[i], text + len, cap - len);
		if (k > 0)
			len += (size_t)k;
	}
	if (text)
		text[len] = 0;
	for (i = 0; text && i < e->n_replies && !hit; i++)
		if (strstr(text, e->replies[i][0]))
			hit = e->replies[i][1];
	free(text);
	return hit;
}

static void put_locked(struct engine_req *q)
{
	int i;

	if (--q->refs)
		return;
	free(q->prompt);
	free(q->text);
	jm_free(q->jm);
	for (i = 0; i < 4; i++)
		free(q->stop[i]);
	free(q);
}

static void hist_add(struct engine_hist *h, double ms)
{
	int i;

	for (i = 0; i < ENGINE_HIST_BUCKETS; i++)
		if (ms <= engine_hist_le_ms[i])
			h->count[i]++;
	h->total++;
	h->sum_ms += ms;
}

static void finish(struct engine *e, struct engine_req *q, enum engine_finish f)
{
	struct engine_event ev = { .kind = ENGINE_EV_DONE, .finish = f };
	double t = util_now_ms();

	ev.text = "";
	ev.stop_word = f == ENGINE_FINISH_STOP ? q->stop_word : NULL;
	ev.error = f == ENGINE_FINISH_ERROR ? q->error : NULL;
	ev.usage.prompt_tokens = q->r.n_prompt;
	ev.usage.completion_tokens = q->n_gen;
	ev.usage.cached_tokens = q->cached;
	ev.timing.queued_ms = q->t_start - q->t_submit;
	ev.timing.ttft_ms = q->t_first ? q->t_first - q->t_submit : 0;
	ev.timing.total_ms = t - q->t_submit;
	ev.timing.prefill_ms = q->t_first ? q->t_first - q->t_start : 0;
	ev.timing.decode_ms = q->t_first ? t - q->t_first : 0;
	q->done = true;
	e->st.requests[f]++;
	if (q->n_gen >= 1)
		hist_add(&e->st.ttft, ev.timing.ttft_ms);
	if (q->n_gen >= 2)
		hist_add(&e->st.tpot, ev.timing.decode_ms / (q->n_gen - 1));
	if (f != ENGINE_FINISH_CANCELLED || q->n_gen) {
		e->n_last = q->r.n_prompt < (int)(sizeof(e->last) / 4) ? q->r.n_prompt : 0;
		memcpy(e->last, q->prompt, e->n_last * 4);
	}
	pthread_mutex_unlock(&e->mu);
	q->r.cb(&ev, q->r.user);
	pthread_mutex_lock(&e->mu);
}

/* One step of one active request. */
static void step(struct engine *e, struct engine_req *q)
{
	char tok[32];
	struct engine_event ev = { .kind = ENGINE_EV_TEXT };
	int len, i;

	if (q->cancel) {
		finish(e, q, ENGINE_FINISH_CANCELLED);
		return;
	}
	if (!q->r.max_tokens || (q->r.max_tokens > 0 && q->n_gen >= q->r.max_tokens) ||
	    (uint32_t)(q->r.n_prompt + q->n_gen) > e->o.n_ctx) {	/* as the engine: n_ctx - n_prompt + 1 */
		finish(e, q, ENGINE_FINISH_LENGTH);
		return;
	}
	if ((q->script ? !q->script[q->script_off] || (q->jm && jm_done(q->jm)) :
	     q->n_gen >= FAKE_LEN) && !q->r.ignore_eos) {
		if (q->jm && !jm_accepting(q->jm)) {
			q->error = "the recorded reply ends before its JSON document is whole";
			finish(e, q, ENGINE_FINISH_ERROR);
			return;
		}
		finish(e, q, ENGINE_FINISH_STOP);
		return;
	}
	if (q->script) {
		const char *p = q->script + q->script_off;

		for (len = 0; p[len] && (len < 4 || ((unsigned char)p[len] & 0xc0) == 0x80); len++)
			tok[len] = p[len];
		q->script_off += len;
		if (q->jm && !jm_feed(q->jm, tok, (size_t)len)) {
			q->error = "the recorded reply does not continue the JSON document of the request's schema";
			finish(e, q, ENGINE_FINISH_ERROR);
			return;
		}
	} else {
		len = snprintf(tok, sizeof(tok), "w%d ", q->n_gen);
	}
	if (!q->n_gen)
		q->t_first = util_now_ms();
	q->n_gen++;
	e->st.completion_tokens++;
	e->st.batch_tokens++;
	memcpy(q->text + q->text_len, tok, len);
	q->text_len += len;
	q->text[q->text_len] = 0;
	for (i = 0; i < q->r.n_stop; i++) {
		char *hit = strstr(q->text, q->stop[i]);

		if (hit) {
			size_t keep = hit - q->text, old = q->text_len - len;

			if (keep > old) {
				ev.text = q->text + old;
				ev.len = keep - old;
				pthread_mutex_unlock(&e->mu);
				q->r.cb(&ev, q->r.user);
				pthread_mutex_lock(&e->mu);
			}
			q->stop_word = q->stop[i];
			finish(e, q, ENGINE_FINISH_STOP);
			return;
		}
	}
	ev.text = tok;
	ev.len = len;
	ev.ids = &q->prompt[0];
	ev.n_ids = 1;
	pthread_mutex_unlock(&e->mu);
	q->r.cb(&ev, q->r.user);
	pthread_mutex_lock(&e->mu);
}

static void admit(struct engine *e)
{
	struct engine_req *q;
	int active = 0, i;

	for (q = e->list; q; q = q->next)
		active += q->active && !q->done;
	for (q = e->list; q && active < e->o.n_slots; q = q->next) {
		if (q->active || q->done)
			continue;
		q->active = true;
		q->t_start = util_now_ms();
		for (i = 0; i < q->r.n_prompt && i < e->n_last && q->prompt[i] == e->last[i]; i++)
			;
		q->cached = i == q->r.n_prompt ? i - 1 : i;
		if (q->cached < 0)
			q->cached = 0;
		if (q->cached)
			e->st.prefix_hits++;
		else
			e->st.prefix_misses++;
		e->st.prompt_tokens += q->r.n_prompt;
		e->st.cached_tokens += q->cached;
		active++;
	}
}

static void *run(void *arg)
{
	struct engine *e = arg;
	struct engine_req *q, **pp;

	pthread_mutex_lock(&e->mu);
	while (!e->quit) {
		bool any = false;

		admit(e);
		for (q = e->list; q; q = q->next) {
			if (q->active && !q->done) {
				any = true;
				step(e, q);
			}
			else if (!q->active && q->cancel && !q->done)
				finish(e, q, ENGINE_FINISH_CANCELLED);
		}
		if (any) {
			e->st.steps++;
			e->busy_ms += FAKE_STEP_MS;
		}
		for (pp = &e->list; *pp;) {
			q = *pp;
			if (q->done) {
				*pp = q->next;
				put_locked(q);
			} else {
				pp = &q->next;
			}
		}
		pthread_mutex_unlock(&e->mu);
		usleep(FAKE_STEP_MS * 1000);
		pthread_mutex_lock(&e->mu);
	}
	for (q = e->list; q; q = q->next)
		if (!q->done)
			finish(e, q, ENGINE_FINISH_CANCELLED);
	pthread_mutex_unlock(&e->mu);
	return NULL;
}

const double engine_hist_le_ms[ENGINE_HIST_BUCKETS] = { 1, 2, 5, 10, 20, 50, 100, 200, 500,
							  1000, 2000, 5000 };

int engine_create(struct engine **ep, const struct llm_model *m, const struct tokenizer *tok,
		  struct rk_card *cards, const int *card_idx, int n_cards,
		  const struct engine_opts *o, char *err, size_t errlen)
{
	struct engine *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->o = *o;
	e->tok = tok;
	load_replies(e);
	if (getenv("RK1828_FAKE_STEP_MS"))
		FAKE_STEP_MS = atoi(getenv("RK1828_FAKE_STEP_MS"));
	if (getenv("RK1828_FAKE_LEN"))
		FAKE_LEN = atoi(getenv("RK1828_FAKE_LEN"));
	pthread_mutex_init(&e->mu, NULL);
	e->t_created = util_now_ms();
	pthread_create(&e->th, NULL, run, e);
	*ep = e;
	return 0;
}

void engine_destroy(struct engine *e)
{
	pthread_mutex_lock(&e->mu);
	e->quit = true;
	pthread_mutex_unlock(&e->mu);
	pthread_join(e->th, NULL);
	while (e->n_replies--) {
		free(e->replies[e->n_replies][0]);
		free(e->replies[e->n_replies][1]);
	}
	free(e);
}

int engine_submit(struct engine *e, const struct engine_request *r, struct engine_req **out,
		  char *err, size_t errlen)
{
	struct engine_req *q, **pp;
	int waiting = 0, i;

	/* The real engine's limits on stop strings (engine.c), its message. */
	if (r->n_stop < 0 || r->n_stop > ENGINE_MAX_STOP) {
		snprintf(err, errlen, "at most %d stop strings", ENGINE_MAX_STOP);
		return -EINVAL;
	}
	for (i = 0; i < r->n_stop; i++) {
		if (!r->stop[i][0] || strlen(r->stop[i]) > ENGINE_MAX_STOP_LEN) {
			snprintf(err, errlen, "stop string %d must be 1..%d bytes of UTF-8", i,
				 ENGINE_MAX_STOP_LEN);
			return -EINVAL;
		}
	}
	if (r->max_tokens > 0 && (uint64_t)r->n_prompt + r->max_tokens > e->o.n_ctx)
		return -E2BIG;
	pthread_mutex_lock(&e->mu);
	for (q = e->list; q; q = q->next)
		waiting += !q->active && !q->done;
	if (waiting >= e->o.queue_max) {
		int active = 0;

		for (q = e->list; q; q = q->next)
			active += q->active && !q->done;
		if (active >= e->o.n_slots) {
			pthread_mutex_unlock(&e->mu);
			return -EBUSY;
		}
	}
	q = calloc(1, sizeof(*q));
	q->r = *r;
	q->prompt = malloc(r->n_prompt * sizeof(int32_t));
	q->text = calloc(8, e->o.n_ctx + 8);
	memcpy(q->prompt, r->prompt, r->n_prompt * sizeof(int32_t));
	for (i = 0; i < r->n_stop && i < 4; i++)
		q->stop[i] = strdup(r->stop[i]);
	q->r.prompt = q->prompt;
	q->script = find_reply(e, q->prompt, q->r.n_prompt);
	if (q->script && r->schema)
		q->jm = jm_new(r->schema);
	q->r.schema = NULL;	/* the matcher holds its own reference */
	q->refs = 2;
	q->t_submit = util_now_ms();
	for (pp = &e->list; *pp; pp = &(*pp)->next)
		;
	*pp = q;
	*out = q;
	pthread_mutex_unlock(&e->mu);
	return 0;
}

static struct engine *the_engine;

void engine_cancel(struct engine_req *q)
{
	pthread_mutex_lock(&the_engine->mu);
	q->cancel = true;
	pthread_mutex_unlock(&the_engine->mu);
}

void engine_req_put(struct engine_req *q)
{
	pthread_mutex_lock(&the_engine->mu);
	put_locked(q);
	pthread_mutex_unlock(&the_engine->mu);
}

void engine_get_stats(struct engine *e, struct engine_stats *st)
{
	struct engine_req *q;

	pthread_mutex_lock(&e->mu);
	*st = e->st;
	for (q = e->list; q; q = q->next) {
		st->active += q->active && !q->done;
		st->queued += !q->active && !q->done;
	}
	st->n_slots = e->o.n_slots;
	st->uptime_s = (util_now_ms() - e->t_created) / 1000.0;
	st->n_cards = 2;
	st->card_busy[0] = st->card_busy[1] = st->uptime_s > 0 ?
		e->busy_ms / 1000.0 / st->uptime_s : 0;
	if (st->card_busy[0] > 1)
		st->card_busy[0] = st->card_busy[1] = 1;
	/* RK1828_FAKE_FAILED=MSG: the engine reports a card failure. */
	st->failed = getenv("RK1828_FAKE_FAILED") != NULL;
	snprintf(st->failure, sizeof(st->failure), "%s",
		 st->failed ? getenv("RK1828_FAKE_FAILED") : "");
	pthread_mutex_unlock(&e->mu);
}

void engine_get_info(const struct engine *e, struct engine_info *info)
{
	memset(info, 0, sizeof(*info));
	info->n_slots = e->o.n_slots;
	info->n_ctx = e->o.n_ctx;
	info->queue_max = e->o.queue_max;
	info->n_cards = 2;
	snprintf(info->plan, sizeof(info->plan), "card0: blk 0-2, card1: blk 3-4 + output (scripted)");
}

const char *engine_finish_name(enum engine_finish f)
{
	static const char *const n[] = { "stop", "length", "cancelled", "error" };

	return n[f];
}

void fake_engine_set_global(struct engine *e);
void fake_engine_set_global(struct engine *e)
{
	the_engine = e;
}
