// SPDX-License-Identifier: MIT
/*
 * The HTTP layer's answers: a body, a JSON object, an OpenAI error, with
 * the headers every answer carries (CORS, nosniff) and the web UI's.
 */
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_req.h"

void http_common_headers(struct MHD_Response *r, const struct hreq *h)
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

enum MHD_Result http_reply(struct MHD_Connection *c, struct hreq *h, int status,
			   const char *type, const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body,
								MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;
	char allow[64];

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	http_common_headers(r, h);
	if (http_route_is_ui(h->route))
		add_ui_headers(r);
	if (status == 405)
		MHD_add_response_header(r, "Allow", http_allowed(h->allow, allow, sizeof(allow)));
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	h->status = status;
	return ret;
}

enum MHD_Result http_reply_json(struct MHD_Connection *c, struct hreq *h, int status,
				json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT);
	enum MHD_Result ret;

	json_decref(o);
	if (!s)
		return MHD_NO;
	ret = http_reply(c, h, status, "application/json", s, strlen(s));
	free(s);
	return ret;
}

enum MHD_Result http_reply_error(struct MHD_Connection *c, struct hreq *h,
				 const struct api_error *e)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	size_t len;
	char *s = api_error_json(e, &len), allow[64];

	if (!s)
		return MHD_NO;
	r = MHD_create_response_from_buffer(len, s, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(s);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	http_common_headers(r, h);
	if (e->retry_after) {
		char ra[16];

		snprintf(ra, sizeof(ra), "%d", e->retry_after);
		MHD_add_response_header(r, "Retry-After", ra);
	}
	if (e->status == 405)
		MHD_add_response_header(r, "Allow", http_allowed(h->allow, allow, sizeof(allow)));
	if (e->status == 401)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
	ret = MHD_queue_response(c, e->status, r);
	MHD_destroy_response(r);
	h->status = e->status;
	return ret;
}

enum MHD_Result http_fail(struct MHD_Connection *c, struct hreq *h, int status,
			  const char *type, const char *code, const char *fmt, const char *arg)
{
	struct api_error e;

	api_error_set(&e, status, type, code, NULL, fmt, arg);
	if (status == 503)
		e.retry_after = 1;
	return http_reply_error(c, h, &e);
}
