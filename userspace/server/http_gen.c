// SPDX-License-Identifier: MIT
/*
 * The generation endpoints: parse, build the prompt (prompt.h), submit
 * to the engine, then stream the answer or wait for the whole one; the
 * life cycle of a struct gen (gen.h) between its HTTP request and the
 * engine. See http.c for the threads and the suspend/resume protocol.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "api_native.h"
#include "api_ops.h"
#include "gen.h"
#include "http_req.h"
#include "prompt.h"
#include "tokenizer.h"
#include "rk1828/util.h"

void gen_free(struct gen *g)
{
	if (g->q)
		engine_req_put(g->q);
	json_decref(g->lp);
	json_decref(g->pend_lp);
	chat_parser_free(g->parser);
	fmt_resp_free(g);
	native_info_free(g->nat);
	free(g->prefix);
	free(g->out);
	free(g->text);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

/* Drop a reference from an HTTP thread: the last one frees. */
void gen_put(struct gen *g)
{
	int left;

	pthread_mutex_lock(&g->mu);
	left = --g->refs;
	pthread_mutex_unlock(&g->mu);
	if (!left)
		gen_free(g);
}

void gen_list_del(struct srv *s, struct gen *g)
{
	pthread_mutex_lock(&s->lock);
	if (g->prev || s->gens == g) {
		if (g->prev)
			g->prev->next = g->next;
		else
			s->gens = g->next;
		if (g->next)
			g->next->prev = g->prev;
		g->next = g->prev = NULL;
		s->n_gens--;
	}
	pthread_mutex_unlock(&s->lock);
}

/* Cancel @g's engine request once, unless it already finished. */
void gen_cancel(struct gen *g, bool shutdown)
{
	struct engine_req *q = NULL;

	pthread_mutex_lock(&g->mu);
	if (!g->done && !g->cancel_sent && g->q) {
		g->cancel_sent = true;
		g->shutdown = shutdown;
		q = g->q;
	}
	pthread_mutex_unlock(&g->mu);
	if (q)
		engine_cancel(q);
}

/*
 * The engine's callback (engine thread; must not block): append, resume.
 * After DONE the engine's reference is dropped; if it was the last one the
 * gen goes to the monitor, which frees it (never free from the engine's
 * own callback).
 */
static void gen_event(const struct engine_event *ev, void *user)
{
	struct gen *g = user;
	struct srv *s = g->s;
	bool last = false;

	pthread_mutex_lock(&g->mu);
	if (ev->kind == ENGINE_EV_TEXT) {
		g->ops->delta(g, ev);
	} else {
		if (ev->len)	/* the held-back rest, flushed at the end */
			g->ops->delta(g, ev);
		g->finish = ev->finish;
		g->usage = ev->usage;
		g->timing = ev->timing;
		if (ev->error)
			snprintf(g->error, sizeof(g->error), "%s", ev->error);
		if (ev->stop_word)
			snprintf(g->stop_word, sizeof(g->stop_word), "%s", ev->stop_word);
		g->done = true;
		g->ops->done(g);
		last = --g->refs == 0;
	}
	if (g->suspended && !g->conn_gone) {
		g->suspended = false;
		MHD_resume_connection(g->conn);
	}
	pthread_mutex_unlock(&g->mu);
	if (last) {
		pthread_mutex_lock(&s->lock);
		g->next = s->gens;	/* reap list: s->gens entries with refs 0 */
		g->prev = NULL;
		g->fd = -1;
		if (s->gens)
			s->gens->prev = g;
		s->gens = g;
		s->n_gens++;
		pthread_mutex_unlock(&s->lock);
	}
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct gen *g = cls;
	size_t n;

	pthread_mutex_lock(&g->mu);
	if (g->out_off < g->out_len) {
		n = g->out_len - g->out_off;
		if (n > max)
			n = max;
		memcpy(buf, g->out + g->out_off, n);
		g->out_off += n;
		if (g->out_off == g->out_len)
			g->out_off = g->out_len = 0;
		pthread_mutex_unlock(&g->mu);
		return (ssize_t)n;
	}
	if (g->done) {
		pthread_mutex_unlock(&g->mu);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	g->suspended = true;
	MHD_suspend_connection(g->conn);
	pthread_mutex_unlock(&g->mu);
	return 0;
}

static void stream_free(void *cls)
{
	gen_put(cls);
}

static enum MHD_Result queue_stream(struct MHD_Connection *c, struct hreq *h, struct gen *g)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	pthread_mutex_lock(&g->mu);
	g->refs++;
	pthread_mutex_unlock(&g->mu);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, g,
					      stream_free);
	if (!r) {
		gen_put(g);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	http_common_headers(r, h);
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	h->status = 200;
	return ret;
}

/*
 * The engine's max_tokens for @p's limit with a prompt of @n_prompt
 * tokens: the limit itself when it fits the context, else -1 (until the
 * context is full, engine.h), so that the reply ends at the context's end
 * with ENGINE_FINISH_LENGTH ("length", Responses: incomplete with reason
 * max_output_tokens).
 */
static int gen_max_tokens(const struct srv *s, const struct api_params *p, int n_prompt)
{
	if (p->max_tokens > 0 && (uint64_t)n_prompt + (uint64_t)p->max_tokens > s->n_ctx)
		return -1;
	return p->max_tokens;
}

/*
 * @len random bytes (getrandom(2), the kernel's CSPRNG). Ids are the
 * only thing that keeps one client from another's stored responses and
 * items (GET, DELETE, previous_response_id, item_reference; one store
 * for every client without --api-key or with a shared key), so they must
 * not be guessable: clock and counter ids of another client's response
 * were found in 2 s of GETs from two of one's own. Should getrandom()
 * fail, the clock and a counter still keep them unique.
 */
static void random_bytes(unsigned char *buf, size_t len)
{
	static atomic_ulong ctr;
	size_t got = 0;
	ssize_t r;

	while (got < len) {
		r = getrandom(buf + got, len - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got < len) {
		unsigned long long v = (unsigned long long)util_now_ns() ^
				       ((unsigned long long)atomic_fetch_add(&ctr, 1) << 40);

		for (; got < len; got++, v = v * 6364136223846793005ULL + 1442695040888963407ULL)
			buf[got] = (unsigned char)(v >> 56);
	}
}

/* "PREFIX" and 24 random hex digits (96 bits), as OpenAI's ids are opaque. */
static void make_id(char *buf, size_t n, const char *prefix)
{
	unsigned char r[12];
	size_t i, k;

	random_bytes(r, sizeof(r));
	k = (size_t)snprintf(buf, n, "%s", prefix);
	for (i = 0; i < sizeof(r) && k + 2 < n; i++, k += 2)
		snprintf(buf + k, n - k, "%02x", r[i]);
}

static struct gen *gen_new(struct srv *s, struct MHD_Connection *c, const struct api_params *p,
			   struct reply_start *rs)
{
	const struct api_ops *ops = api_ops_of(p->kind);
	const union MHD_ConnectionInfo *ci;
	struct gen *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	if (ops->reply_parser) {
		/*
		 * Call ids "call_<n>_<i>" (and the Responses items "fc_<n>_<i>"):
		 * n random, 64 bits, so that ids are unique in a conversation
		 * that outlives a restart of the server and cannot be guessed
		 * (an item_reference takes them).
		 */
		unsigned long long seed;

		random_bytes((unsigned char *)&seed, sizeof(seed));
		g->parser = chat_parser_new(&s->ct, rs->in_think, p->tools_json,
					    (unsigned long)seed);
		if (!g->parser) {
			free(g);
			return NULL;
		}
		g->prefix = rs->prefix;
		rs->prefix = NULL;
		g->tools = p->tools_json != NULL;
		g->one_call = p->one_call;
	}
	if (ops->gen_init && ops->gen_init(g, p)) {
		chat_parser_free(g->parser);
		free(g->prefix);
		free(g);
		return NULL;
	}
	pthread_mutex_init(&g->mu, NULL);
	g->s = s;
	g->owner = p->owner ? p->owner : "";
	g->refs = 2;	/* HTTP side + engine side */
	g->conn = c;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	g->fd = ci ? ci->connect_fd : -1;
	g->kind = p->kind;
	g->ops = ops;
	g->stream = p->stream;
	g->include_usage = p->include_usage;
	g->logprobs = p->logprobs;
	g->top_logprobs = p->top_logprobs;
	g->created = time(NULL);
	make_id(g->id, sizeof(g->id), ops->id_prefix);
	make_id(g->item_id, sizeof(g->item_id), "msg_");
	return g;
}

/*
 * Create the generation of @p's prompt @toks and submit it to the engine;
 * @nat (POST /completion, else NULL) is taken over whatever the result.
 * Return: 0 with *@out registered in s->gens, or -1 with @e.
 */
static int start_gen(struct srv *s, struct MHD_Connection *c, const struct api_params *p,
		     const int32_t *toks, int n, struct reply_start *rs, struct native_info *nat,
		     bool ignore_eos, struct gen **out, struct api_error *e)
{
	struct engine_request r = {
		.prompt = toks, .n_prompt = n, .max_tokens = gen_max_tokens(s, p, n), .s = p->s,
		.stop = (const char *const *)p->stop, .n_stop = p->n_stop, .cb = gen_event,
		.schema = p->schema,
		.ignore_eos = ignore_eos,
		.draft_max = p->draft_max, .draft_min = p->draft_min,
	};
	struct engine_req *q = NULL;
	struct gen *g = gen_new(s, c, p, rs);
	char msg[256] = "";
	int ret;

	if (!g) {
		native_info_free(nat);
		api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
		return -1;
	}
	g->nat = nat;
	r.user = g;
	pthread_mutex_lock(&g->mu);
	if (g->ops->start)
		g->ops->start(g);
	pthread_mutex_unlock(&g->mu);
	ret = engine_submit(s->e, &r, &q, msg, sizeof(msg));
	if (ret) {
		gen_free(g);
		if (ret == -EBUSY) {
			api_error_set(e, 503, "unavailable_error", "queue_full", NULL,
				      "all %d sessions are busy and the queue (--queue %d) is full; retry later",
				      s->n_slots, s->o.queue_max);
			e->retry_after = 1;
		} else if (ret == -E2BIG) {
			api_error_set(e, 400, "invalid_request_error", "context_length_exceeded",
				      NULL, "context length exceeded: %s", msg[0] ? msg :
				      "the prompt and max_tokens do not fit in the context");
		} else if (ret == -EINVAL) {
			api_error_set(e, 400, "invalid_request_error", NULL, NULL, "%s",
				      msg[0] ? msg : "the engine refused the request");
		} else if (ret == -ESHUTDOWN) {
			api_error_set(e, 503, "unavailable_error", "shutting_down", NULL,
				      "the server is shutting down");
		} else {
			api_error_set(e, 500, "server_error", NULL, NULL, "the engine refused the request: %s",
				      msg[0] ? msg : strerror(-ret));
		}
		return -1;
	}
	pthread_mutex_lock(&g->mu);
	g->q = q;
	pthread_mutex_unlock(&g->mu);
	pthread_mutex_lock(&s->lock);
	g->next = s->gens;
	if (s->gens)
		s->gens->prev = g;
	s->gens = g;
	s->n_gens++;
	pthread_mutex_unlock(&s->lock);
	if (atomic_load(&s->state) == SRV_STOPPING)
		gen_cancel(g, true);
	*out = g;
	return 0;
}

/* Submit, then stream the answer or wait (suspended) for the whole one. */
static enum MHD_Result submit(struct srv *s, struct MHD_Connection *c, struct hreq *h,
			      const struct api_params *p, const int32_t *toks, int n,
			      struct reply_start *rs)
{
	struct api_error e;
	struct gen *g;

	if (start_gen(s, c, p, toks, n, rs, NULL, false, &g, &e))
		return http_reply_error(c, h, &e);
	h->g = g;
	if (p->stream)
		return queue_stream(c, h, g);
	pthread_mutex_lock(&g->mu);
	if (!g->done) {
		g->suspended = true;
		MHD_suspend_connection(c);
	}
	pthread_mutex_unlock(&g->mu);
	return MHD_YES;
}

/*
 * Wait (suspended) for the first of @h's generations not yet done; only
 * that one resumes the connection. Return: all are done.
 */
static bool all_done(struct MHD_Connection *c, struct hreq *h)
{
	int i;

	for (i = -1; i < h->n_more; i++) {
		struct gen *g = i < 0 ? h->g : h->more[i];

		pthread_mutex_lock(&g->mu);
		if (!g->done) {
			g->suspended = true;
			MHD_suspend_connection(c);
			pthread_mutex_unlock(&g->mu);
			return false;
		}
		pthread_mutex_unlock(&g->mu);
	}
	return true;
}

/* A non-stream request resumed by DONE: queue the whole answer. */
enum MHD_Result gen_finish_nonstream(struct MHD_Connection *c, struct hreq *h)
{
	struct gen *g = h->g, **all;
	enum MHD_Result ret;
	size_t len;
	char *body;
	int i;

	if (!all_done(c, h))	/* spurious call, or more prompts: wait on */
		return MHD_YES;
	for (i = 0; i < h->n_more && g->finish != ENGINE_FINISH_CANCELLED &&
	     g->finish != ENGINE_FINISH_ERROR; i++)
		g = h->more[i];	/* a batch fails with its first failed prompt */
	if (g->finish == ENGINE_FINISH_CANCELLED && !g->shutdown) {
		h->status = 499;	/* the client left: nobody to answer */
		return MHD_NO;
	}
	if (g->finish == ENGINE_FINISH_CANCELLED)
		return http_fail(c, h, 503, "unavailable_error", "shutting_down", "%s",
				 "the request was cancelled: the server is shutting down");
	if (g->finish == ENGINE_FINISH_ERROR)
		return http_fail(c, h, 500, "server_error", NULL, "generation failed: %s",
				 g->error[0] ? g->error : "engine error");
	all = malloc((h->n_more + 1) * sizeof(*all));
	if (!all)
		return MHD_NO;
	all[0] = h->g;
	memcpy(all + 1, h->more, h->n_more * sizeof(*all));
	body = g->ops->body(all, h->n_more + 1, &len);	/* a batch: POST /completion */
	free(all);
	if (!body)
		return MHD_NO;
	ret = http_reply(c, h, 200, "application/json", body, len);
	free(body);
	return ret;
}

enum MHD_Result ep_generate(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	enum api_kind k = h->route->kind;
	struct api_params p;
	struct api_error e;
	enum MHD_Result ret;
	struct reply_start rs = { 0 };
	int32_t *toks = NULL;
	int n = 0;

	struct api_store st = { .st = s->store, .owner = h->owner ? h->owner : "",
				.now = time(NULL) };

	if (api_parse_with(k, h->body ? h->body : "", h->len, &st, &p, &e) ||
	    api_resolve_bias(&p, s->tok, &e) || api_resolve_format(&p, &s->ct, &e) ||
	    prompt_tokenize(s, &p, &toks, &n, &rs, &e) || prompt_check_ctx(s, &p, n, &e)) {
		api_params_free(&p);
		free(toks);
		free(rs.prefix);
		return http_reply_error(c, h, &e);
	}
	ret = submit(s, c, h, &p, toks, n, &rs);
	api_params_free(&p);
	free(toks);	/* the engine copies the prompt at submit */
	free(rs.prefix);
	return ret;
}

/* POST /completion prompt @i of @nr: tokenize, check, submit (its gen in @h). */
static int native_start(struct srv *s, struct MHD_Connection *c, struct hreq *h,
			const struct native_req *nr, int i, struct api_error *e)
{
	struct reply_start rs = { 0 };
	struct native_info *ni;
	struct gen *g;
	int32_t *toks = NULL;
	int n = 0, ret;

	if (native_tokenize(s->tok, s->add_bos, &nr->prompts[i], &toks, &n, e) ||
	    prompt_check_ctx(s, &nr->p, n, e)) {
		free(toks);
		if (nr->n_prompts > 1 && !strcmp(e->param, "prompt"))
			snprintf(e->param, sizeof(e->param), "%s", nr->prompts[i].where);
		return -1;
	}
	ni = native_info_new(nr, i, s->tok, toks, n);
	if (!ni) {
		free(toks);
		api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
		return -1;
	}
	ret = start_gen(s, c, &nr->p, toks, n, &rs, ni, nr->ignore_eos, &g, e);
	free(toks);	/* the engine copies the prompt at submit */
	if (ret)
		return -1;
	if (!h->g)
		h->g = g;
	else
		h->more[h->n_more++] = g;
	return 0;
}

/*
 * POST /completion: every prompt is its own engine request (queued like
 * any other); when one cannot start, those started are cancelled.
 */
enum MHD_Result ep_native(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	struct native_req nr;
	struct api_error e;
	int i;

	if (native_parse(h->body ? h->body : "", h->len, &nr, &e) ||
	    api_check_bias(&nr.p, tok_n_vocab(s->tok), &e))
		goto bad;
	if (nr.n_prompts > 1) {
		h->more = calloc(nr.n_prompts - 1, sizeof(*h->more));
		if (!h->more) {
			api_error_set(&e, 500, "server_error", NULL, NULL, "out of memory");
			goto bad;
		}
	}
	for (i = 0; i < nr.n_prompts; i++)
		if (native_start(s, c, h, &nr, i, &e))
			break;
	if (i < nr.n_prompts) {
		for (i = -1; h->g && i < h->n_more; i++)
			gen_cancel(i < 0 ? h->g : h->more[i], false);
		goto bad;
	}
	native_req_free(&nr);
	if (h->g->stream)
		return queue_stream(c, h, h->g);
	all_done(c, h);
	return MHD_YES;
bad:
	native_req_free(&nr);
	return http_reply_error(c, h, &e);
}

/* The generations of a batch's later prompts: cancel those running, put all. */
void gen_release_more(struct srv *s, struct hreq *h)
{
	int i;

	for (i = 0; i < h->n_more; i++) {
		struct gen *g = h->more[i];
		bool done;

		pthread_mutex_lock(&g->mu);
		g->conn_gone = true;
		g->suspended = false;
		done = g->done;
		pthread_mutex_unlock(&g->mu);
		if (!done)
			gen_cancel(g, false);
		gen_list_del(s, g);
		gen_put(g);
	}
	free(h->more);
}

void gen_reap(struct srv *s)
{
	struct gen *g, *next, *dead = NULL;

	pthread_mutex_lock(&s->lock);
	for (g = s->gens; g; g = next) {
		next = g->next;
		if (g->refs)	/* refs 0 only on the reap list entries */
			continue;
		if (g->prev)
			g->prev->next = g->next;
		else
			s->gens = g->next;
		if (g->next)
			g->next->prev = g->prev;
		s->n_gens--;
		g->next = dead;
		dead = g;
	}
	pthread_mutex_unlock(&s->lock);
	for (; dead; dead = next) {
		next = dead->next;
		gen_free(dead);
	}
}
