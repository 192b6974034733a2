// SPDX-License-Identifier: MIT
/*
 * The server's route table (userspace/server/http_route.c): which row a
 * path and method find (its handler, the API kind, the rest after a
 * prefix), the methods a known path answers (a 405's Allow and hint), the
 * /v1 aliases, the web UI's files with and without --no-ui, and what each
 * row needs (the key, the model, answered while stopping); and the API
 * table (api_ops.c): every kind's row is complete and names its fields.
 * Output: TAP.
 */
#include <stdio.h>
#include <string.h>

#include "api_ops.h"
#include "http_req.h"

#include "tap.h"

/* Look @method @url up into @h (no_ui false). */
static const struct route *find(struct hreq *h, const char *method, const char *url)
{
	memset(h, 0, sizeof(*h));
	h->url = url;
	http_route_find(h, url, method, false);
	return h->route;
}

static void test_rows(void)
{
	static const struct {
		const char *method, *url;
		enum MHD_Result (*fn)(struct srv *, struct MHD_Connection *, struct hreq *);
		const char *rest;
	} c[] = {
		{ "GET", "/health", ep_health, NULL },
		{ "HEAD", "/v1/health", ep_health, NULL },
		{ "GET", "/v1/models", ep_models, NULL },
		{ "GET", "/models", ep_models, NULL },
		{ "GET", "/v1/models/story", ep_model, "story" },
		{ "POST", "/v1/chat/completions", ep_generate, NULL },
		{ "POST", "/chat/completions", ep_generate, NULL },
		{ "POST", "/v1/completions", ep_generate, NULL },
		{ "POST", "/responses", ep_generate, NULL },
		{ "GET", "/v1/responses/resp_1", ep_response_get, "resp_1" },
		{ "DELETE", "/v1/responses/resp_1", ep_response_delete, "resp_1" },
		{ "DELETE", "/responses/resp_2", ep_response_delete, "resp_2" },
		{ "POST", "/completion", ep_native, NULL },
		{ "GET", "/metrics", ep_metrics, NULL },
		{ "POST", "/tokenize", ep_tokenize, NULL },
		{ "POST", "/detokenize", ep_detokenize, NULL },
		{ "POST", "/apply-template", ep_apply_template, NULL },
		{ "GET", "/props", ep_props, NULL },
		{ "GET", "/", ep_ui, NULL },
		{ "GET", "/app.js", ep_ui, NULL },
	};
	struct hreq h;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const struct route *r = find(&h, c[i].method, c[i].url);

		tap_ok(r && r->fn == c[i].fn && (!c[i].rest || !strcmp(c[i].url + h.rest, c[i].rest)),
		       "%s %s finds its row (handler %s, rest '%s')", c[i].method, c[i].url,
		       r && r->fn == c[i].fn ? "right" : "wrong", r ? c[i].url + h.rest : "");
	}
	tap_ok(find(&h, "POST", "/v1/chat/completions")->kind == API_CHAT &&
	       find(&h, "POST", "/completions")->kind == API_COMPLETION &&
	       find(&h, "POST", "/v1/responses")->kind == API_RESPONSES &&
	       find(&h, "POST", "/completion")->kind == API_NATIVE,
	       "the generation rows carry their API kind");
}

/* 404 (no row for the path) and 405 (rows, none for the method) with Allow and hint. */
static void test_unknown(void)
{
	static const struct {
		const char *method, *url, *allow, *hint;
	} c[] = {
		{ "GET", "/nope", NULL, NULL },
		{ "GET", "/v1/models/", NULL, NULL },		/* a prefix needs a rest */
		{ "GET", "/models/story", NULL, NULL },		/* no alias without /v1 */
		{ "GET", "/v1/responses/", NULL, NULL },
		{ "GET", "/v1", NULL, NULL },
		{ "GET", "/v1/chat/completions", "POST, OPTIONS", "POST" },
		{ "HEAD", "/tokenize", "POST, OPTIONS", "POST" },
		{ "POST", "/v1/models/story", "GET, HEAD, OPTIONS", "GET" },
		{ "PUT", "/metrics", "GET, HEAD, OPTIONS", "GET" },
		{ "POST", "/", "GET, HEAD, OPTIONS", "GET" },
		{ "HEAD", "/v1/responses/resp_1", "GET, DELETE, OPTIONS", "GET or DELETE" },
		{ "POST", "/responses/resp_1", "GET, DELETE, OPTIONS", "GET or DELETE" },
	};
	char allow[64], hint[64];
	struct hreq h;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const struct route *r = find(&h, c[i].method, c[i].url);

		if (!c[i].allow) {
			tap_ok(!r && !h.allow, "%s %s: an unknown path (404)", c[i].method, c[i].url);
			continue;
		}
		http_allowed(h.allow, allow, sizeof(allow));
		http_methods_str(h.allow, " or ", hint, sizeof(hint));
		tap_ok(!r && !strcmp(allow, c[i].allow) && !strcmp(hint, c[i].hint),
		       "%s %s: 405, Allow '%s', use %s", c[i].method, c[i].url, allow, hint);
	}
	memset(&h, 0, sizeof(h));
	http_route_find(&h, "/", "GET", true);
	tap_ok(!h.route && !h.allow, "--no-ui: GET / is an unknown path (404)");
	memset(&h, 0, sizeof(h));
	http_route_find(&h, "/v1/models", "GET", true);
	tap_ok(h.route && h.route->fn == ep_models, "--no-ui: the API's paths stay");
}

static void test_flags(void)
{
	struct hreq h;
	const struct route *r;

	r = find(&h, "GET", "/health");
	tap_ok(r && (r->flags & RF_LIVE) && !(r->flags & (RF_KEY | RF_MODEL)),
	       "/health: no key, no model, answered while stopping");
	r = find(&h, "GET", "/");
	tap_ok(r && (r->flags & RF_LIVE) && !(r->flags & RF_KEY) && http_route_is_ui(r),
	       "the web UI: no key, answered while stopping, its security headers");
	r = find(&h, "GET", "/metrics");
	tap_ok(r && (r->flags & RF_KEY) && !(r->flags & (RF_MODEL | RF_LIVE)),
	       "/metrics: the key, answered while loading and draining, not while stopping");
	r = find(&h, "POST", "/v1/completions");
	tap_ok(r && (r->flags & RF_KEY) && (r->flags & RF_MODEL) && !(r->flags & RF_LIVE) &&
	       !http_route_is_ui(r), "/v1/completions: the key and the model");
}

static void test_ops(void)
{
	static const struct {
		enum api_kind kind;
		const char *prompt, *id, *object;
	} c[] = {
		{ API_CHAT, "messages", "chatcmpl-", "chat.completion" },
		{ API_COMPLETION, "prompt", "cmpl-", "text_completion" },
		{ API_RESPONSES, "input", "resp_", NULL },
		{ API_NATIVE, "prompt", "resp_", NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const struct api_ops *o = api_ops_of(c[i].kind);

		tap_ok(o->kind == c[i].kind && !strcmp(o->prompt_param, c[i].prompt) &&
		       !strcmp(o->id_prefix, c[i].id) && o->delta && o->done && o->body &&
		       o->tool_params && (c[i].kind == API_NATIVE || (o->parse && o->tokenize)) &&
		       (!c[i].object || (o->object && !strcmp(o->object, c[i].object))),
		       "api_ops of kind %d: prompt '%s', ids '%s', renderers and parser set",
		       c[i].kind, o->prompt_param, o->id_prefix);
	}
	tap_ok(api_ops_of(API_RESPONSES)->items && !api_ops_of(API_CHAT)->items &&
	       !strcmp(api_ops_of(API_RESPONSES)->call_id_param, "call_id") &&
	       !strcmp(api_ops_of(API_CHAT)->call_id_param, "tool_call_id") &&
	       api_ops_of(API_RESPONSES)->gen_init && !api_ops_of(API_COMPLETION)->reply_parser,
	       "Responses: items with call_id, its own state; chat: tool_call_id; completions: no parser");
}

int main(void)
{
	test_rows();
	test_unknown();
	test_flags();
	test_ops();
	return tap_done();
}
