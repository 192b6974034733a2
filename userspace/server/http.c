// SPDX-License-Identifier: MIT
/*
 * The HTTP layer (libmicrohttpd): the request guards (framing, Host,
 * Origin: http_guard.h), routing, body limit, API key, CORS, the
 * generation requests' life cycle and the per-request log line.
 *
 * Threads: a pool of libmicrohttpd threads runs every callback here; the
 * engine's thread runs gen_event(); the monitor thread watches the sockets
 * of requests waiting for the engine (a suspended connection is not polled
 * by libmicrohttpd, so a client that leaves during a long prefill or a
 * non-stream request would go unnoticed) and cancels theirs, and closes
 * the connections past their header or body deadline (http_conn.h).
 *
 * Streams: the answer is a callback response (chunked); its reader copies
 * what gen_event() appended and suspends the connection when there is
 * nothing yet; gen_event() resumes it. Non-stream: the connection is
 * suspended after submit and resumed by DONE, then the access handler runs
 * again and queues the whole answer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "api_native.h"
#include "gen.h"
#include "http_conn.h"
#include "http_guard.h"
#include "resp_store.h"
#include "server.h"
#include "tokenizer.h"
#include "rk1828/util.h"

#define MONITOR_MS	50
#define POOL_THREADS	4
#define MAX_CONNS	SRV_MAX_CONNS
/*
 * libmicrohttpd's inactivity timeout: an answer whose client stops
 * reading. The headers and the body have absolute deadlines besides
 * (http_conn.h: --header-timeout, --body-timeout).
 */
#define IDLE_TIMEOUT_S	300
/*
 * After a request whose body buffer reached this size the heap is trimmed
 * (malloc_trim(3)): the JSON tree of a body of 8 MiB takes up to ~750 MB
 * in small blocks, which glibc otherwise keeps in the pool thread's arena
 * for good (4 such requests left 1.9 GB of RSS, 39 MB with the trim).
 */
#define TRIM_BODY	(1u << 20)
/*
 * Bodies over the limit are read and dropped up to this size, then 413
 * (an announced one at once; a chunked one when it gets there, and the
 * connection is closed: see on_upload()).
 */
#define DISCARD_MAX	(256ull << 20)

enum route { R_NONE, R_HEALTH, R_MODELS, R_MODEL, R_CHAT, R_COMPLETION, R_RESPONSES,
	     R_METRICS, R_UI, R_TOKENIZE, R_DETOKENIZE, R_APPLY_TEMPLATE, R_PROPS,
	     R_NATIVE, R_RESPONSE };

static bool is_post_route(enum route r);

/**
 * struct hreq - one HTTP request (libmicrohttpd's per-request pointer)
 * @route: what the path names (R_NONE: 404)
 * @method: the request method
 * @path: the path, for the log line
 * @body, @len, @cap: the request body received so far
 * @too_big: the body passed the limit (answered 413 when complete)
 * @seen: body bytes received (kept or dropped)
 * @cut: the body passed DISCARD_MAX: answered 413 and closed mid-body
 * @vary: answers depend on the Origin (no API key): "Vary: Origin"
 * @acao: the Access-Control-Allow-Origin to answer with ("" none)
 * @status: the status queued (for the log and /metrics)
 * @g: the generation request, if one was submitted
 * @more, @n_more: POST /completion with several prompts: the generations
 *	of the prompts after the first (@g), in order
 * @t0: arrival, ns
 */
struct hreq {
	enum route route;
	char method[16];
	char path[128];
	char *body;
	size_t len, cap;
	uint64_t seen;
	bool too_big, cut, vary;
	char acao[GUARD_ORIGIN_MAX];
	int status;
	struct gen *g;
	struct gen **more;
	int n_more;
	int64_t t0;
};

/* ---- responses ---------------------------------------------------------- */

static void add_common_headers(struct MHD_Response *r, const struct hreq *h)
{
	if (h->acao[0])
		MHD_add_response_header(r, "Access-Control-Allow-Origin", h->acao);
	if (h->vary)
		MHD_add_response_header(r, "Vary", "Origin");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Server", "rk1828-llm");
}

/*
 * The web UI's pages: its own scripts, styles and images only (no inline
 * code: ui/ has none), fetches to this server only, never in a frame of
 * another site (clickjacking), no referrer to the sites its links open.
 */
#define UI_CSP "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " \
	       "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; " \
	       "frame-ancestors 'none'"

static void add_ui_headers(struct MHD_Response *r)
{
	MHD_add_response_header(r, "Content-Security-Policy", UI_CSP);
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
}

/* The Allow header of a 405 on @r's path. */
static const char *allowed(enum route r)
{
	if (r == R_RESPONSE)
		return "GET, DELETE, OPTIONS";
	return is_post_route(r) ? "POST, OPTIONS" : "GET, HEAD, OPTIONS";
}

static enum MHD_Result reply(struct MHD_Connection *c, struct hreq *h, int status,
			     const char *type, const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body,
								MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	add_common_headers(r, h);
	if (h->route == R_UI)
		add_ui_headers(r);
	if (status == 405)
		MHD_add_response_header(r, "Allow", allowed(h->route));
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	h->status = status;
	return ret;
}

static enum MHD_Result reply_json(struct MHD_Connection *c, struct hreq *h, int status,
				  json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT);
	enum MHD_Result ret;

	json_decref(o);
	if (!s)
		return MHD_NO;
	ret = reply(c, h, status, "application/json", s, strlen(s));
	free(s);
	return ret;
}

static enum MHD_Result reply_error(struct MHD_Connection *c, struct hreq *h,
				   const struct api_error *e)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	size_t len;
	char *s = api_error_json(e, &len);

	if (!s)
		return MHD_NO;
	r = MHD_create_response_from_buffer(len, s, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(s);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	add_common_headers(r, h);
	if (e->retry_after) {
		char ra[16];

		snprintf(ra, sizeof(ra), "%d", e->retry_after);
		MHD_add_response_header(r, "Retry-After", ra);
	}
	if (e->status == 405)
		MHD_add_response_header(r, "Allow", allowed(h->route));
	if (e->status == 401)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
	ret = MHD_queue_response(c, e->status, r);
	MHD_destroy_response(r);
	h->status = e->status;
	return ret;
}

static enum MHD_Result fail(struct MHD_Connection *c, struct hreq *h, int status,
			    const char *type, const char *code, const char *fmt, const char *arg)
{
	struct api_error e;

	api_error_set(&e, status, type, code, NULL, fmt, arg);
	if (status == 503)
		e.retry_after = 1;
	return reply_error(c, h, &e);
}

/* ---- routing ------------------------------------------------------------ */

static enum route route_of(const char *url)
{
	static const struct { const char *path; enum route r; } tab[] = {
		{ "/health", R_HEALTH }, { "/v1/health", R_HEALTH },
		{ "/v1/models", R_MODELS }, { "/models", R_MODELS },
		{ "/v1/chat/completions", R_CHAT }, { "/chat/completions", R_CHAT },
		{ "/v1/completions", R_COMPLETION }, { "/completions", R_COMPLETION },
		{ "/v1/responses", R_RESPONSES }, { "/responses", R_RESPONSES },
		{ "/metrics", R_METRICS }, { "/completion", R_NATIVE },
		/* llama-server's utility endpoints (utility.c) */
		{ "/tokenize", R_TOKENIZE }, { "/detokenize", R_DETOKENIZE },
		{ "/apply-template", R_APPLY_TEMPLATE }, { "/props", R_PROPS },
	};
	size_t i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(url, tab[i].path))
			return tab[i].r;
	if (!strncmp(url, "/v1/models/", 11) && url[11])
		return R_MODEL;
	if ((!strncmp(url, "/v1/responses/", 14) && url[14]) ||
	    (!strncmp(url, "/responses/", 11) && url[11]))
		return R_RESPONSE;
	if (ui_find(url, NULL, NULL))
		return R_UI;
	return R_NONE;
}

static bool is_post_route(enum route r)
{
	return r == R_CHAT || r == R_COMPLETION || r == R_RESPONSES || r == R_TOKENIZE ||
	       r == R_DETOKENIZE || r == R_APPLY_TEMPLATE || r == R_NATIVE;
}

/* Constant-time comparison of @h with the key @k. */
static bool key_eq(const char *h, const char *k)
{
	size_t i, n = strlen(h), m = strlen(k);
	unsigned char d = 0;

	for (i = 0; i < m; i++)
		d |= (unsigned char)k[i] ^ (unsigned char)(i < n ? h[i] : 0);
	return !d && n == m;
}

/*
 * The configured key, as "Authorization: Bearer KEY" (OpenAI) or as
 * "X-Api-Key: KEY" (llama-server takes both).
 */
static bool auth_ok(struct srv *s, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	const char *x = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Api-Key");
	const char *k = s->o.api_key;

	if (!k)
		return true;
	if (x && key_eq(x, k))
		return true;
	if (!h || strncasecmp(h, "Bearer ", 7))
		return false;
	h += 7;
	while (*h == ' ')
		h++;
	return key_eq(h, k);
}

/* ---- simple endpoints --------------------------------------------------- */

static json_t *error_obj_of(const struct api_error *e)
{
	size_t len;
	char *txt = api_error_json(e, &len);
	json_t *o = txt ? json_loads(txt, 0, NULL) : NULL;

	free(txt);
	return o ? o : json_object();
}

/* The 503 of a draining server (SIGUSR1, serve.c): a balancer sends the request elsewhere. */
#define DRAINING_MSG "the server is draining: it finishes its running requests and takes no new ones; send this one to another server"

static enum MHD_Result do_health(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	int st = atomic_load(&s->state);
	double prog = atomic_load(&s->load_permille) / 1000.0;
	struct api_error e;
	char what[64];
	json_t *o;

	if (st == SRV_READY) {
		struct engine_stats es;

		es.failed = false;
		if (s->e)
			engine_get_stats(s->e, &es);
		if (!es.failed)
			return reply_json(c, h, 200, json_pack("{s:s}", "status", "ok"));
		/* The cards are gone: a load balancer must stop sending here. */
		api_error_set(&e, 503, "server_error", "engine_failed", NULL,
			      "the engine stopped after a card failure: %s", es.failure);
		o = error_obj_of(&e);
		json_object_set_new(o, "status", json_string("error"));
		return reply_json(c, h, 503, o);
	}
	pthread_mutex_lock(&s->lock);
	snprintf(what, sizeof(what), "%s", s->load_what);
	pthread_mutex_unlock(&s->lock);
	if (st == SRV_LOADING)
		api_error_set(&e, 503, "unavailable_error", "model_loading", NULL,
			      "loading the model: %s (%.0f%%)", what, prog * 100);
	else if (st == SRV_DRAINING)
		api_error_set(&e, 503, "unavailable_error", "draining", NULL, "%s", DRAINING_MSG);
	else
		api_error_set(&e, 503, "unavailable_error", "shutting_down", NULL,
			      "the server is shutting down");
	o = error_obj_of(&e);
	json_object_set_new(o, "status", json_string(st == SRV_LOADING ? "loading" :
						     st == SRV_DRAINING ? "draining" : "stopping"));
	if (st == SRV_LOADING) {
		json_object_set_new(o, "progress", json_real(prog));
		json_object_set_new(o, "stage", json_string(what));
	}
	return reply_json(c, h, 503, o);
}

static json_t *model_json(struct srv *s, const char *id)
{
	json_t *cards = json_array();
	char *save = NULL, buf[sizeof(s->cards_desc)], *t;

	snprintf(buf, sizeof(buf), "%s", s->cards_desc);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		json_array_append_new(cards, json_string(t));
	return json_pack("{s:s, s:s, s:I, s:s, s:o, s:s, s:i, s:i, s:i, s:s}",
			 "id", id ? id : s->model_id,
			 "object", "model", "created", (json_int_t)s->t_start, "owned_by", "rk1828",
			 "cards", cards, "plan", s->plan, "ctx", (int)s->n_ctx, "queue", s->o.queue_max,
			 "parallel", s->n_slots, "kv_type", quant_kv_type_name(s->kv_type));
}

static enum MHD_Result do_models(struct srv *s, struct MHD_Connection *c, struct hreq *h,
				 const char *url)
{
	if (h->route == R_MODEL) {
		/* One model is loaded; any other id is OpenAI's 404 model_not_found. */
		if (strcmp(url + 11, s->model_id))
			return fail(c, h, 404, "invalid_request_error", "model_not_found",
				    "the model '%s' does not exist (this server has one model: "
				    "see GET /v1/models)", url + 11);
		return reply_json(c, h, 200, model_json(s, url + 11));
	}
	return reply_json(c, h, 200, json_pack("{s:s, s:[o]}", "object", "list", "data",
					       model_json(s, NULL)));
}

static enum MHD_Result do_metrics(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	size_t len;
	char *txt = metrics_render(s, &len);
	enum MHD_Result ret;

	if (!txt)
		return MHD_NO;
	ret = reply(c, h, 200, "text/plain; version=0.0.4; charset=utf-8", txt, len);
	free(txt);
	return ret;
}

static enum MHD_Result do_ui(struct MHD_Connection *c, struct hreq *h, const char *url)
{
	const char *mime;
	size_t len = 0;
	const char *data = ui_find(url, &len, &mime);

	return reply(c, h, 200, mime, data, len);
}

/* ---- generation --------------------------------------------------------- */

static void gen_free(struct gen *g)
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
static void gen_put(struct gen *g)
{
	int left;

	pthread_mutex_lock(&g->mu);
	left = --g->refs;
	pthread_mutex_unlock(&g->mu);
	if (!left)
		gen_free(g);
}

static void list_del(struct srv *s, struct gen *g)
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
static void gen_cancel(struct gen *g, bool shutdown)
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
		fmt_delta(g, ev);
	} else {
		if (ev->len)	/* the held-back rest, flushed at the end */
			fmt_delta(g, ev);
		g->finish = ev->finish;
		g->usage = ev->usage;
		g->timing = ev->timing;
		if (ev->error)
			snprintf(g->error, sizeof(g->error), "%s", ev->error);
		if (ev->stop_word)
			snprintf(g->stop_word, sizeof(g->stop_word), "%s", ev->stop_word);
		g->done = true;
		fmt_done(g);
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
	add_common_headers(r, h);
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	h->status = 200;
	return ret;
}

/*
 * Leading system messages (e.g. /v1/responses instructions followed by a
 * developer message) as one: a template has one system block. Returns the
 * joined text (malloc'ed; NULL when out of memory) and the count in @n_sys.
 */
static char *join_system(const struct api_params *p, int *n_sys)
{
	size_t len = 0;
	char *t;
	int i;

	for (i = 0; i < p->n_msgs && !strcmp(p->msgs[i].role, "system"); i++)
		len += strlen(p->msgs[i].content) + 2;
	*n_sys = i;
	t = malloc(len + 1);
	if (!t)
		return NULL;
	t[0] = 0;
	for (i = 0; i < *n_sys; i++) {
		if (i)
			strcat(t, "\n\n");
		strcat(t, p->msgs[i].content);
	}
	return t;
}

/**
 * struct reply_start - how the reply of a chat prompt begins
 * @in_think: inside an open <think> block (chat_prompt.reply_in_think)
 * @prefix: the opening of a forced tool call the prompt wrote, or NULL
 */
struct reply_start {
	bool in_think;
	char *prefix;
};

static const int tool_choice_map[] = {
	[API_TOOL_AUTO] = CHAT_TOOL_AUTO,
	[API_TOOL_NONE] = CHAT_TOOL_AUTO,	/* with no tools passed */
	[API_TOOL_REQUIRED] = CHAT_TOOL_REQUIRED,
	[API_TOOL_FUNCTION] = CHAT_TOOL_FUNCTION,
};

/* The request's messages as chat.h's (views; the calls array malloc'ed per message). */
static struct chat_msg *chat_msgs(const struct api_params *p, char *sys, int n_sys, int *k)
{
	struct chat_msg *m = calloc(p->n_msgs + 1, sizeof(*m));
	int i, j;

	if (!m)
		return NULL;
	*k = 0;
	if (n_sys) {
		m[*k].role = "system";
		m[(*k)++].content = sys;
	}
	for (i = n_sys; i < p->n_msgs; i++, (*k)++) {
		const struct api_msg *a = &p->msgs[i];
		struct chat_tool_call *c = a->n_calls ? calloc(a->n_calls, sizeof(*c)) : NULL;

		if (a->n_calls && !c)
			return m;	/* the caller sees n_tool_calls without calls: -EINVAL */
		for (j = 0; j < a->n_calls; j++)
			c[j] = (struct chat_tool_call){ .id = a->calls[j].id,
							.name = a->calls[j].name,
							.arguments = a->calls[j].arguments };
		m[*k] = (struct chat_msg){ .role = a->role, .content = a->content,
					   .reasoning = a->reasoning, .tool_calls = c,
					   .n_tool_calls = a->n_calls,
					   .tool_call_id = a->tool_call_id, .name = a->name };
	}
	return m;
}

static void chat_msgs_free(struct chat_msg *m, int k)
{
	int i;

	for (i = 0; m && i < k; i++)
		free((void *)m[i].tool_calls);
	free(m);
}

int srv_chat_prompt(struct srv *s, const struct api_params *p, struct chat_prompt *cp,
		    struct api_error *e)
{
	struct chat_opts co = {
		.add_generation_prompt = strcmp(p->msgs[p->n_msgs - 1].role, "assistant") != 0 ||
					 p->msgs[p->n_msgs - 1].n_calls,
		.thinking = CHAT_THINK_DEFAULT,
		.tools_json = p->tools_json,
		.tool_choice = tool_choice_map[p->tool_choice],
		.tool_name = p->tool_name,
	};
	struct chat_msg *m = NULL;
	char why[256] = "", *sys;
	int k = 0, n_sys, ret;

	memset(cp, 0, sizeof(*cp));
	sys = join_system(p, &n_sys);
	m = sys ? chat_msgs(p, sys, n_sys, &k) : NULL;
	if (!m) {
		free(sys);
		goto oom;
	}
	ret = chat_render(&s->ct, m, k, &co, cp, why, sizeof(why));
	chat_msgs_free(m, k);
	free(sys);
	if (ret == -EINVAL) {
		api_error_set(e, 400, "invalid_request_error", NULL,
			      p->kind == API_RESPONSES ? "input" : "messages",
			      "the conversation cannot be rendered with the model's chat template (%s): %s",
			      s->ct.name, why);
		return -1;
	}
	if (ret)
		goto oom;
	if (cp->len > TOK_MAX_TEXT) {
		api_error_set(e, 400, "invalid_request_error", NULL, NULL,
			      "the prompt is longer than %u bytes", TOK_MAX_TEXT);
		chat_prompt_free(cp);
		return -1;
	}
	return 0;
oom:
	api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
	return -1;
}

/* The prompt of a chat or responses request through the model's template (chat.h). */
static int render_chat(struct srv *s, const struct api_params *p, int32_t **toks, int *n,
		       struct reply_start *rs, struct api_error *e)
{
	struct chat_prompt cp;
	int ret;

	if (srv_chat_prompt(s, p, &cp, e))
		return -1;
	ret = chat_encode(s->tok, &cp, 0, toks, n);
	rs->in_think = cp.reply_in_think;
	if (!ret && cp.reply_prefix && *cp.reply_prefix) {
		rs->prefix = cp.reply_prefix;
		cp.reply_prefix = NULL;
	}
	chat_prompt_free(&cp);
	if (ret == -ENOMEM) {
		api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
		return -1;
	}
	if (ret) {
		api_error_set(e, 500, "server_error", NULL, NULL, "cannot tokenize the prompt");
		return -1;
	}
	return 0;
}

/* A completions prompt: the text as it is, no template, no special tokens. */
static int encode_text(struct srv *s, const char *text, int32_t **toks, int *n,
		       struct api_error *e)
{
	int need, got;

	if (strlen(text) > TOK_MAX_TEXT) {
		api_error_set(e, 400, "invalid_request_error", NULL, "prompt",
			      "the prompt is longer than %u bytes", TOK_MAX_TEXT);
		return -1;
	}
	need = tok_max_tokens(s->tok, strlen(text));	/* not strlen * 3: "\xff " is 5 */
	*toks = malloc(need * sizeof(**toks));
	got = *toks ? tok_encode(s->tok, text, s->add_bos, *toks, need) : INT32_MIN;
	if (got < 0) {
		api_error_set(e, 500, "server_error", NULL, NULL, *toks ? "cannot tokenize the prompt" :
			      "out of memory");
		return -1;
	}
	*n = got;
	return 0;
}

/* Template (chat, responses) and tokenize; -1 with @e on failure. */
static int tokenize(struct srv *s, const struct api_params *p, int32_t **toks, int *n,
		    struct reply_start *rs, struct api_error *e)
{
	int ret;

	*toks = NULL;
	*n = 0;
	ret = p->kind == API_COMPLETION ? encode_text(s, p->prompt, toks, n, e) :
	      render_chat(s, p, toks, n, rs, e);
	if (!ret && !*n) {
		api_error_set(e, 400, "invalid_request_error", NULL,
			      p->kind == API_COMPLETION ? "prompt" : "messages",
			      "the prompt is empty");
		ret = -1;
	}
	if (ret) {
		free(*toks);
		*toks = NULL;
	}
	return ret;
}

/*
 * The prompt alone must leave room for one token: a prompt that fills the
 * context is context_length_exceeded, naming the prompt's field. A token
 * limit (max_tokens, max_completion_tokens, max_output_tokens, n_predict)
 * larger than the room left is not an error: it is an upper bound, as in
 * llama-server and Ollama (gen_max_tokens()).
 */
static int check_ctx(struct srv *s, const struct api_params *p, int n_prompt,
		     struct api_error *e)
{
	const char *in = p->kind == API_COMPLETION || p->kind == API_NATIVE ? "prompt" :
			 p->kind == API_RESPONSES ? "input" : "messages";

	if ((uint32_t)n_prompt >= s->n_ctx) {
		api_error_set(e, 400, "invalid_request_error", "context_length_exceeded", in,
			      "context length exceeded: the prompt has %d tokens, but the context is %u tokens",
			      n_prompt, s->n_ctx);
		return -1;
	}
	return 0;
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
	const union MHD_ConnectionInfo *ci;
	struct gen *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	if (p->kind != API_COMPLETION) {
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
		if (p->kind == API_RESPONSES && fmt_resp_new(g, p)) {
			chat_parser_free(g->parser);
			free(g->prefix);
			free(g);
			return NULL;
		}
	}
	pthread_mutex_init(&g->mu, NULL);
	g->s = s;
	g->refs = 2;	/* HTTP side + engine side */
	g->conn = c;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	g->fd = ci ? ci->connect_fd : -1;
	g->kind = p->kind;
	g->stream = p->stream;
	g->include_usage = p->include_usage;
	g->logprobs = p->logprobs;
	g->top_logprobs = p->top_logprobs;
	g->created = time(NULL);
	make_id(g->id, sizeof(g->id), p->kind == API_CHAT ? "chatcmpl-" :
		p->kind == API_COMPLETION ? "cmpl-" : "resp_");
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
	fmt_start(g);
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
		return reply_error(c, h, &e);
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
static enum MHD_Result finish_nonstream(struct MHD_Connection *c, struct hreq *h)
{
	struct gen *g = h->g;
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
		return fail(c, h, 503, "unavailable_error", "shutting_down", "%s",
			    "the request was cancelled: the server is shutting down");
	if (g->finish == ENGINE_FINISH_ERROR)
		return fail(c, h, 500, "server_error", NULL, "generation failed: %s",
			    g->error[0] ? g->error : "engine error");
	if (h->route == R_NATIVE) {
		struct gen **all = malloc((h->n_more + 1) * sizeof(*all));

		if (!all)
			return MHD_NO;
		all[0] = h->g;
		memcpy(all + 1, h->more, h->n_more * sizeof(*all));
		body = native_body(all, h->n_more + 1, &len);
		free(all);
	} else {
		body = fmt_body(g, &len);
	}
	if (!body)
		return MHD_NO;
	ret = reply(c, h, 200, "application/json", body, len);
	free(body);
	return ret;
}

static enum MHD_Result do_generate(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	enum api_kind k = h->route == R_CHAT ? API_CHAT :
			  h->route == R_COMPLETION ? API_COMPLETION : API_RESPONSES;
	struct api_params p;
	struct api_error e;
	enum MHD_Result ret;
	struct reply_start rs = { 0 };
	int32_t *toks = NULL;
	int n = 0;

	struct api_store st = { .st = s->store, .owner = s->o.api_key ? s->o.api_key : "",
				.now = time(NULL) };

	if (api_parse_with(k, h->body ? h->body : "", h->len, &st, &p, &e) ||
	    api_resolve_bias(&p, s->tok, &e) || api_resolve_format(&p, &s->ct, &e) ||
	    tokenize(s, &p, &toks, &n, &rs, &e) || check_ctx(s, &p, n, &e)) {
		api_params_free(&p);
		free(toks);
		free(rs.prefix);
		return reply_error(c, h, &e);
	}
	ret = submit(s, c, h, &p, toks, n, &rs);
	api_params_free(&p);
	free(toks);	/* the engine copies the prompt at submit */
	free(rs.prefix);
	return ret;
}

/* llama-server's /tokenize, /detokenize, /apply-template, /props (utility.c). */
static enum MHD_Result do_utility(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	const char *b = h->body ? h->body : "";
	struct api_error e;
	json_t *out = NULL;
	int ret;

	switch (h->route) {
	case R_TOKENIZE: {
		enum MHD_Result r;
		size_t len;
		char *text;

		if (util_tokenize(s, b, h->len, &text, &len, &e))
			return reply_error(c, h, &e);
		r = reply(c, h, 200, "application/json", text, len);
		free(text);
		return r;
	}
	case R_DETOKENIZE: ret = util_detokenize(s, b, h->len, &out, &e); break;
	case R_APPLY_TEMPLATE: ret = util_apply_template(s, b, h->len, &out, &e); break;
	default:
		out = util_props(s);
		if (out)
			return reply_json(c, h, 200, out);
		api_error_set(&e, 500, "server_error", NULL, NULL, "out of memory");
		ret = -1;
		break;
	}
	if (ret)
		return reply_error(c, h, &e);
	return reply_json(c, h, 200, out);
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
	    check_ctx(s, &nr->p, n, e)) {
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
static enum MHD_Result do_native(struct srv *s, struct MHD_Connection *c, struct hreq *h)
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
	return reply_error(c, h, &e);
}

/*
 * GET /v1/responses/{id}: a stored response as the create call answered
 * it; DELETE: drop it ({id, object: "response", deleted: true}). Either
 * is a 404 for a response not in the store (store false, deleted,
 * evicted, another API key's).
 */
static enum MHD_Result do_response(struct srv *s, struct MHD_Connection *c, struct hreq *h,
				   const char *url)
{
	/* route_of(): "/v1/responses/ID" or "/responses/ID" */
	const char *id = url + (strncmp(url, "/v1/", 4) ? 11 : 14);
	const char *owner = s->o.api_key ? s->o.api_key : "";
	json_t *o = NULL;
	bool gone = false;

	if (!strcmp(h->method, "DELETE"))
		gone = rstore_del(s->store, owner, id, time(NULL));
	else
		o = rstore_get(s->store, owner, id, time(NULL));
	if (gone)
		return reply_json(c, h, 200, json_pack("{s:s, s:s, s:b}", "id", id, "object",
						       "response", "deleted", true));
	if (o)
		return reply_json(c, h, 200, o);
	return fail(c, h, 404, "invalid_request_error", "not_found",
		    "Response with id '%s' not found: it was not stored (store false), was deleted, or was evicted from the server's store",
		    id);
}

/* ---- the access handler ------------------------------------------------- */

static void set_too_large(struct srv *s, struct api_error *e)
{
	char m[32];

	snprintf(m, sizeof(m), "%zu", s->o.body_limit);
	api_error_set(e, 413, "invalid_request_error", "request_too_large", NULL,
		      "the request body is larger than the limit of %s bytes", m);
}

static enum MHD_Result add_field(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value)
{
	framing_add(cls, key, value);
	return MHD_YES;
}

/*
 * Before anything else (http_guard.h): the request's framing (RFC 9112),
 * then its Host and Origin; sets @h's CORS answer. Return: 0, or -1 with
 * @e (libmicrohttpd reads no body once the first call queued an answer,
 * and closes the connection after it).
 */
static int guard(struct srv *s, struct MHD_Connection *c, struct hreq *h, const char *version,
		 struct api_error *e)
{
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	struct framing f;

	h->vary = !s->policy->keyed;
	if (s->policy->keyed)
		snprintf(h->acao, sizeof(h->acao), "*");
	memset(&f, 0, sizeof(f));
	MHD_get_connection_values(c, MHD_HEADER_KIND, add_field, &f);
	if (framing_check(&f, !strcmp(version, MHD_HTTP_VERSION_1_0), e) ||
	    origin_check_host(s->policy, host, e))
		return -1;
	return origin_check(s->policy, origin, host, h->acao, sizeof(h->acao), e);
}

/* First call for a request: guards, route, method, key, state, announced size. */
static enum MHD_Result first_call(struct srv *s, struct MHD_Connection *c, struct hreq *h,
				  const char *method, const char *version)
{
	const char *cl, *expect;
	struct api_error e;

	if (guard(s, c, h, version, &e))
		return reply_error(c, h, &e);
	if (!strcmp(method, "OPTIONS")) {
		struct MHD_Response *r = MHD_create_response_from_buffer(0, "",
									MHD_RESPMEM_PERSISTENT);
		enum MHD_Result ret;

		add_common_headers(r, h);
		MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
		MHD_add_response_header(r, "Access-Control-Allow-Headers",
					cors_allow_headers(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						"Access-Control-Request-Headers")));
		MHD_add_response_header(r, "Access-Control-Max-Age", "86400");
		ret = MHD_queue_response(c, 204, r);
		MHD_destroy_response(r);
		h->status = 204;
		return ret;
	}
	if (h->route == R_NONE || (h->route == R_UI && s->o.no_ui))
		return fail(c, h, 404, "invalid_request_error", "not_found",
			    "unknown path '%s'", h->path);
	if (h->route == R_RESPONSE ? strcmp(method, "GET") && strcmp(method, "DELETE") :
	    is_post_route(h->route) ? strcmp(method, "POST") :
	    strcmp(method, "GET") && strcmp(method, "HEAD"))
		return fail(c, h, 405, "invalid_request_error", "method_not_allowed",
			    "method not allowed on this path: use %s",
			    h->route == R_RESPONSE ? "GET or DELETE" :
			    is_post_route(h->route) ? "POST" : "GET");
	if (h->route != R_HEALTH && h->route != R_UI && !auth_ok(s, c))
		return fail(c, h, 401, "invalid_request_error", "invalid_api_key", "%s",
			    "invalid or missing API key: send 'Authorization: Bearer KEY' (--api-key)");
	/*
	 * An announced body over the limit: answer at once when the client
	 * waits for "100 Continue" or the body is huge; otherwise read and
	 * drop it first, so that a client that writes the whole body before
	 * reading (most do) sees the 413 rather than a reset connection.
	 */
	cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	expect = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Expect");
	if (cl && strtoull(cl, NULL, 10) > s->o.body_limit &&
	    ((expect && !strcasecmp(expect, "100-continue")) ||
	     strtoull(cl, NULL, 10) > DISCARD_MAX)) {
		set_too_large(s, &e);
		return reply_error(c, h, &e);
	}
	return MHD_YES;
}

/*
 * A piece of the body: kept up to the limit, then dropped (413 once it
 * ended, so that a client that writes its whole body before reading sees
 * the answer). One that passes DISCARD_MAX is cut there: only a chunked
 * body can (an announced size over it is refused at once), and as
 * libmicrohttpd queues no answer before the body's end, the 413 goes on
 * the socket and the connection is closed.
 */
static enum MHD_Result on_upload(struct srv *s, struct MHD_Connection *c, struct hreq *h,
				 const char *upload, size_t *upload_size)
{
	h->seen += *upload_size;
	if (h->seen > DISCARD_MAX) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct api_error e;

		set_too_large(s, &e);
		if (ci)
			http_raw_error(ci->connect_fd, &e, h->acao);
		h->status = 413;
		h->cut = true;
		return MHD_NO;
	}
	if (!h->too_big && h->len + *upload_size <= s->o.body_limit) {
		gen_append(&h->body, &h->len, &h->cap, upload, *upload_size);
	} else if (!h->too_big) {
		h->too_big = true;
		free(h->body);
		h->body = NULL;
		h->len = h->cap = 0;
	}
	*upload_size = 0;
	return MHD_YES;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	struct srv *s = cls;
	struct hreq *h = *con_cls;
	enum MHD_Result ret;
	struct api_error e;
	int st;

	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h)
			return MHD_NO;
		*con_cls = h;
		h->t0 = util_now_ns();
		h->route = route_of(url);
		snprintf(h->method, sizeof(h->method), "%s", method);
		snprintf(h->path, sizeof(h->path), "%s", url);
		conn_phase(c, CONN_BODY);
		ret = first_call(s, c, h, method, version);
		if (h->status)	/* answered at once: no body comes */
			conn_phase(c, CONN_ANSWER);
		return ret;
	}
	if (*upload_size)
		return on_upload(s, c, h, upload, upload_size);
	conn_phase(c, CONN_ANSWER);
	if (h->g)
		return finish_nonstream(c, h);
	if (h->too_big) {
		set_too_large(s, &e);
		return reply_error(c, h, &e);
	}
	st = atomic_load(&s->state);
	if (h->route == R_HEALTH)
		return do_health(s, c, h);
	if (h->route == R_UI)
		return do_ui(c, h, url);
	if (st == SRV_LOADING && h->route != R_METRICS)
		return fail(c, h, 503, "unavailable_error", "model_loading", "%s",
			    "the model is still loading; see GET /health");
	if (st == SRV_STOPPING)
		return fail(c, h, 503, "unavailable_error", "shutting_down", "%s",
			    "the server is shutting down");
	if (st == SRV_DRAINING && h->route != R_METRICS)
		return fail(c, h, 503, "unavailable_error", "draining", "%s", DRAINING_MSG);
	switch (h->route) {
	case R_MODELS:
	case R_MODEL:
		return do_models(s, c, h, url);
	case R_METRICS:
		return do_metrics(s, c, h);
	case R_TOKENIZE:
	case R_DETOKENIZE:
	case R_APPLY_TEMPLATE:
	case R_PROPS:
		return do_utility(s, c, h);
	case R_NATIVE:
		return do_native(s, c, h);
	case R_RESPONSE:
		return do_response(s, c, h, url);
	default:
		return do_generate(s, c, h);
	}
}

/* ---- completion: the log line, metrics, cancel -------------------------- */

/*
 * @s for the log line into @dst (@n bytes, at least 5): the bytes outside
 * printable ASCII, the space and the backslash as \xHH, as nginx writes
 * them, so that a path with %0a cannot forge a log line, %1b cannot reach
 * the terminal and %20 cannot shift the fields. Cut at a whole escape.
 */
static void log_escape(char *dst, size_t n, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c > ' ' && c < 0x7f && c != '\\') {
			if (o + 1 >= n)
				break;
			dst[o++] = (char)c;
			continue;
		}
		if (o + 4 >= n)
			break;
		dst[o++] = '\\';
		dst[o++] = 'x';
		dst[o++] = hex[c >> 4];
		dst[o++] = hex[c & 15];
	}
	dst[o] = 0;
}

/* The generations of a batch's later prompts: cancel those running, put all. */
static void release_more(struct srv *s, struct hreq *h)
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
		list_del(s, g);
		gen_put(g);
	}
	free(h->more);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct srv *s = cls;
	struct hreq *h = *con_cls;
	struct engine_usage u = { 0 };
	struct engine_timing t = { 0 };
	const union MHD_ConnectionInfo *ci;
	char addr[INET6_ADDRSTRLEN] = "?", method[4 * sizeof(h->method)], path[4 * sizeof(h->path)];
	char why[64];
	enum conn_phase expired;
	struct gen *g;
	bool gen_done = false, left = false, big;

	if (!h)
		return;
	*con_cls = NULL;
	g = h->g;
	if (g) {
		pthread_mutex_lock(&g->mu);
		g->conn_gone = true;
		g->suspended = false;
		gen_done = g->done;
		left = g->cancel_sent && !g->shutdown;
		u = g->usage;
		t = g->timing;
		pthread_mutex_unlock(&g->mu);
		if (!gen_done)
			gen_cancel(g, false);
		list_del(s, g);
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr) {
		const struct sockaddr *sa = ci->client_addr;

		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, addr,
				  sizeof(addr));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, addr,
				  sizeof(addr));
	}
	expired = conn_expired(c);
	if (expired == CONN_BODY)
		h->status = 408;	/* answered by the sweep (http_conn.c) */
	if (!h->status)
		h->status = 499;	/* nothing answered: the client left first */
	snprintf(why, sizeof(why), "%s",
		 (g && !gen_done) || left ? " (client left: cancelled)" :
		 toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection closed early)");
	if (expired == CONN_BODY)
		snprintf(why, sizeof(why), " (body not received within %d s: closed)",
			 conn_deadline_s(s->conns, CONN_BODY));
	else if (h->cut)
		snprintf(why, sizeof(why), " (body over %llu MiB: closed)", DISCARD_MAX >> 20);
	log_escape(method, sizeof(method), h->method);
	log_escape(path, sizeof(path), h->path);
	fprintf(stderr, "%s %s %s %d prompt=%d gen=%d cached=%d ttft=%.1fms dur=%.1fms%s\n",
		addr, method, path, h->status, u.prompt_tokens, u.completion_tokens,
		u.cached_tokens, t.ttft_ms, (util_now_ns() - h->t0) / 1e6, why);
	metrics_observe(s, h->status);
	conn_phase(c, CONN_HEADERS);	/* a kept-alive connection's next request */
	if (g)
		gen_put(g);
	release_more(s, h);
	big = h->cap >= TRIM_BODY;
	free(h->body);
	free(h);
	if (big)
		malloc_trim(0);
}

/* ---- the monitor: clients that left while waiting ----------------------- */

static void reap(struct srv *s)
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

static void *monitor(void *arg)
{
	struct srv *s = arg;

	while (!atomic_load(&s->monitor_stop)) {
		struct pollfd pfd[MAX_CONNS];
		struct gen *who[MAX_CONNS], *g;
		int n = 0, i;

		reap(s);
		conn_sweep(s->conns);
		pthread_mutex_lock(&s->lock);
		for (g = s->gens; g && n < MAX_CONNS; g = g->next) {
			pthread_mutex_lock(&g->mu);
			if (g->refs && !g->done && !g->conn_gone && !g->cancel_sent && g->fd >= 0) {
				g->refs++;
				pfd[n].fd = g->fd;
				pfd[n].events = POLLRDHUP;
				pfd[n].revents = 0;
				who[n++] = g;
			}
			pthread_mutex_unlock(&g->mu);
		}
		pthread_mutex_unlock(&s->lock);
		if (poll(pfd, n, MONITOR_MS) > 0) {
			for (i = 0; i < n; i++) {
				char b;
				ssize_t r;

				if (!(pfd[i].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
					continue;
				r = recv(pfd[i].fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
				if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
					gen_cancel(who[i], false);
			}
		} else if (!n) {
			usleep(MONITOR_MS * 1000);
		}
		for (i = 0; i < n; i++)
			gen_put(who[i]);
	}
	reap(s);
	return NULL;
}

/* ---- start / stop ------------------------------------------------------- */

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct srv *s = cls;

	if (s->o.verbose) {
		fputs("rk1828-llm: http: ", stderr);
		vfprintf(stderr, fmt, ap);
	}
}

int http_start(struct srv *s, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE },
			*ai = NULL;
	char port[16];
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			     MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	int ret;

	snprintf(port, sizeof(port), "%d", s->o.port);
	ret = getaddrinfo(s->o.host, port, &hints, &ai);
	if (ret) {
		snprintf(err, errlen, "--host %s: %s", s->o.host, gai_strerror(ret));
		return -1;
	}
	if (ai->ai_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const void *)ai->ai_addr;

		/* "::" means every address, IPv4 too (the help says so): dual stack. */
		flags |= IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr) ? MHD_USE_DUAL_STACK : MHD_USE_IPv6;
	}
	s->conns = conn_set_new(s->o.header_timeout, s->o.body_timeout);
	if (!s->conns) {
		freeaddrinfo(ai);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->d = MHD_start_daemon(flags, (uint16_t)s->o.port, NULL, NULL, handler, s,
				MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)POOL_THREADS,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)s->o.per_ip_limit,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)IDLE_TIMEOUT_S,
				MHD_OPTION_NOTIFY_COMPLETED, completed, s,
				MHD_OPTION_NOTIFY_CONNECTION, conn_notify, s->conns,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
				/*
				 * No LISTENING_ADDRESS_REUSE: on Linux its 1 is
				 * SO_REUSEPORT, with which a second server bound
				 * the same port and shared its connections; the
				 * default SO_REUSEADDR still allows a restart
				 * while old connections sit in TIME_WAIT.
				 */
				MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!s->d) {
		conn_set_free(s->conns);
		s->conns = NULL;
		snprintf(err, errlen, "cannot listen on %s port %d: %s", s->o.host, s->o.port,
			 errno ? strerror(errno) : "libmicrohttpd refused the options");
		return -1;
	}
	if (!s->o.port) {	/* --port 0: the kernel picked one */
		const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);

		s->o.port = di ? di->port : 0;
	}
	s->store = rstore_new(NULL);
	if (!s->store || pthread_create(&s->monitor, NULL, monitor, s)) {
		MHD_stop_daemon(s->d);
		s->d = NULL;
		conn_set_free(s->conns);
		s->conns = NULL;
		rstore_free(s->store);
		s->store = NULL;
		snprintf(err, errlen, "cannot start the monitor thread");
		return -1;
	}
	return 0;
}

void http_quiesce(struct srv *s)
{
	if (s->d)
		MHD_quiesce_daemon(s->d);
}

void http_cancel_all(struct srv *s)
{
	struct gen *g, *list[MAX_CONNS];
	int n = 0, i;

	pthread_mutex_lock(&s->lock);
	for (g = s->gens; g && n < MAX_CONNS; g = g->next) {
		pthread_mutex_lock(&g->mu);
		if (g->refs) {
			g->refs++;
			list[n++] = g;
		}
		pthread_mutex_unlock(&g->mu);
	}
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++) {
		gen_cancel(list[i], true);
		gen_put(list[i]);
	}
}

int http_wait_idle(struct srv *s, int timeout_ms)
{
	int64_t end = util_now_ns() + timeout_ms * 1000000LL;
	int n;

	for (;;) {
		pthread_mutex_lock(&s->lock);
		n = s->n_gens;
		pthread_mutex_unlock(&s->lock);
		if (!n || util_now_ns() > end)
			return n;
		usleep(20000);
	}
}

void http_stop(struct srv *s)
{
	if (!s->d)
		return;
	MHD_stop_daemon(s->d);
	s->d = NULL;
	atomic_store(&s->monitor_stop, true);
	pthread_join(s->monitor, NULL);
	conn_set_free(s->conns);	/* the daemon closed every connection */
	s->conns = NULL;
	rstore_free(s->store);
	s->store = NULL;
}
