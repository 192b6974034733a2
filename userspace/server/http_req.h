/* SPDX-License-Identifier: MIT */
/*
 * The HTTP layer's own contract (http.c and its http_*.c): one request
 * (struct hreq), the route table's rows (http_route.c), the answers
 * (http_reply.c), the endpoints' handlers (http_endpoints.c, http_gen.c)
 * and the generations' life cycle (http_gen.c). Nothing outside the HTTP
 * layer includes it: serve.c drives the layer through http.h.
 */
#ifndef RK_SERVER_HTTP_REQ_H
#define RK_SERVER_HTTP_REQ_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "http_guard.h"
#include "srv.h"

struct gen;

/* The 503 of a draining server (SIGUSR1, serve.c): a balancer sends the request elsewhere. */
#define DRAINING_MSG "the server is draining: it finishes its running requests and takes no new ones; send this one to another server"

struct hreq;

/* The methods of a route (struct route.methods). */
enum route_method {
	RM_GET = 1 << 0,
	RM_HEAD = 1 << 1,
	RM_POST = 1 << 2,
	RM_DELETE = 1 << 3,
};

/* What a route needs (struct route.flags). */
enum route_flag {
	RF_ALIAS = 1 << 0,	/* answered without the leading "/v1" of @path too */
	RF_PREFIX = 1 << 1,	/* @path is a prefix followed by a non-empty rest */
	RF_UI = 1 << 2,		/* the web UI's files (ui_find()); 404 with --no-ui */
	RF_KEY = 1 << 3,	/* needs the API key (--api-key) */
	RF_MODEL = 1 << 4,	/* needs the model: 503 while loading or draining */
	RF_LIVE = 1 << 5,	/* answered in every state, shutting down included */
};

/**
 * struct route - one row of the route table
 * @path: the path, or with RF_PREFIX its prefix ("/v1/models/"); NULL
 *	with RF_UI
 * @methods: enum route_method bits the row answers
 * @kind: the API of a generation route (ep_generate(), ep_native())
 * @fn: the handler, called once the body is complete
 * @flags: enum route_flag
 */
struct route {
	const char *path;
	unsigned int methods;
	enum api_kind kind;
	enum MHD_Result (*fn)(struct srv *s, struct MHD_Connection *c, struct hreq *h);
	unsigned int flags;
};

/**
 * struct hreq - one HTTP request (libmicrohttpd's per-request pointer)
 * @route: the row of the route table for the path and method (NULL: 404
 *	or 405)
 * @allow: the methods the path answers (enum route_method; 0: unknown path)
 * @url: the path as libmicrohttpd passed it to the current call
 * @rest: a prefix route: the offset of what follows the prefix in @url
 * @method: the request method
 * @path: the path, for the log line
 * @body, @len, @cap: the request body received so far
 * @too_big: the body passed the limit (answered 413 when complete)
 * @seen: body bytes received (kept or dropped)
 * @cut: the body passed DISCARD_MAX (http.c): answered 413 and closed mid-body
 * @vary: answers depend on the Origin (no API key): "Vary: Origin"
 * @acao: the Access-Control-Allow-Origin to answer with ("" none)
 * @status: the status queued (for the log and /metrics)
 * @g: the generation request, if one was submitted
 * @more, @n_more: POST /completion with several prompts: the generations
 *	of the prompts after the first (@g), in order
 * @t0: arrival, ns
 * @owner: the caller's API key, the matching entry of the server's keys
 *	("" on a server without keys; set by the key check of RF_KEY routes)
 */
struct hreq {
	const struct route *route;
	unsigned int allow;
	const char *url;
	size_t rest;
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
	const char *owner;
};

/* ---- http_route.c: the route table ---------------------------------- */

/**
 * http_route_find() - the row of @url and @method in the route table into
 * h->route (NULL when none takes @method) and h->rest, the methods @url's
 * rows answer into h->allow (0: an unknown path). With @no_ui the web
 * UI's files are unknown paths.
 */
void http_route_find(struct hreq *h, const char *url, const char *method, bool no_ui);

/**
 * http_methods_str() - @methods (enum route_method) as an Allow header
 * ("GET, HEAD, OPTIONS") when @sep is ", ", else joined by @sep without
 * HEAD and OPTIONS ("GET or DELETE", the 405's hint). Return: @buf (@n bytes).
 */
const char *http_methods_str(unsigned int methods, const char *sep, char *buf, size_t n);

/** http_allowed() - the Allow header of a 405 on a path answering @methods, in @buf. */
const char *http_allowed(unsigned int methods, char *buf, size_t n);

/** http_route_is_ui() - @r (NULL: none) serves the web UI's files. */
bool http_route_is_ui(const struct route *r);

/* ---- http_reply.c: answers --------------------------------------------- */

/** http_common_headers() - CORS, Vary, nosniff and Server headers of every answer to @h. */
void http_common_headers(struct MHD_Response *r, const struct hreq *h);

/**
 * http_reply() - queue @status with @len bytes of @body (copied) of
 * Content-Type @type (the web UI's security headers on its files, Allow on
 * a 405); sets h->status. Return: libmicrohttpd's result.
 */
enum MHD_Result http_reply(struct MHD_Connection *c, struct hreq *h, int status,
			   const char *type, const char *body, size_t len);

/** http_reply_json() - http_reply() of @o as compact JSON; steals @o. */
enum MHD_Result http_reply_json(struct MHD_Connection *c, struct hreq *h, int status,
				json_t *o);

/**
 * http_reply_error() - the OpenAI error envelope of @e with its status,
 * Retry-After, Allow (405) and WWW-Authenticate (401) headers.
 */
enum MHD_Result http_reply_error(struct MHD_Connection *c, struct hreq *h,
				 const struct api_error *e);

/**
 * http_fail() - http_reply_error() of an error made here: @status, @type,
 * @code, param null, message @fmt with one string @arg (a 503 retries
 * after 1 s).
 */
enum MHD_Result http_fail(struct MHD_Connection *c, struct hreq *h, int status,
			  const char *type, const char *code, const char *fmt, const char *arg);

/* ---- the endpoints: route table handlers, called once the body is complete ---- */

/*
 * http_endpoints.c: GET /health, /v1/models, /v1/models/{id}, /metrics,
 * the web UI's files, llama-server's utility endpoints (utility.h) and
 * GET/DELETE /v1/responses/{id}.
 */
enum MHD_Result ep_health(struct srv *s, struct MHD_Connection *c, struct hreq *h);
enum MHD_Result ep_models(struct srv *s, struct MHD_Connection *c, struct hreq *h);
enum MHD_Result ep_model(struct srv *s, struct MHD_Connection *c, struct hreq *h);
enum MHD_Result ep_metrics(struct srv *s, struct MHD_Connection *c, struct hreq *h);
enum MHD_Result ep_ui(struct srv *s, struct MHD_Connection *c, struct hreq *h);
enum MHD_Result ep_tokenize(struct srv *s, struct MHD_Connection *c, struct hreq *h);
enum MHD_Result ep_detokenize(struct srv *s, struct MHD_Connection *c, struct hreq *h);
enum MHD_Result ep_apply_template(struct srv *s, struct MHD_Connection *c, struct hreq *h);
enum MHD_Result ep_props(struct srv *s, struct MHD_Connection *c, struct hreq *h);
enum MHD_Result ep_response_get(struct srv *s, struct MHD_Connection *c, struct hreq *h);
enum MHD_Result ep_response_delete(struct srv *s, struct MHD_Connection *c, struct hreq *h);

/*
 * http_gen.c: the generation endpoints: POST /v1/chat/completions,
 * /v1/completions, /v1/responses (ep_generate(), the API of
 * h->route->kind) and llama-server's POST /completion (ep_native()).
 */
enum MHD_Result ep_generate(struct srv *s, struct MHD_Connection *c, struct hreq *h);
enum MHD_Result ep_native(struct srv *s, struct MHD_Connection *c, struct hreq *h);

/* ---- http_gen.c: generations in flight --------------------------------- */

/** gen_free() - free @g and drop its engine request (refs must be 0). */
void gen_free(struct gen *g);
/** gen_put() - drop a reference from an HTTP thread: the last one frees. */
void gen_put(struct gen *g);
/** gen_list_del() - take @g off s->gens (if on it; takes s->lock). */
void gen_list_del(struct srv *s, struct gen *g);
/** gen_cancel() - cancel @g's engine request once, unless it finished (@shutdown: 503). */
void gen_cancel(struct gen *g, bool shutdown);
/**
 * gen_finish_nonstream() - a non-stream request resumed by DONE: queue
 * the whole answer once all of @h's generations are done.
 */
enum MHD_Result gen_finish_nonstream(struct MHD_Connection *c, struct hreq *h);
/** gen_release_more() - @h's later batch generations: cancel those running, put all. */
void gen_release_more(struct srv *s, struct hreq *h);
/** gen_reap() - free the generations on s->gens that no one references (the monitor). */
void gen_reap(struct srv *s);

#endif
