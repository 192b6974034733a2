// SPDX-License-Identifier: MIT
/*
 * The route table: every endpoint of the server as one row (path,
 * methods, API kind, handler, flags), and the lookup the access handler
 * (http.c) makes with it. A new endpoint is a row here and a handler.
 */
#include <stdio.h>
#include <string.h>

#include "http_req.h"
#include "ui.h"

#define M_GET	(RM_GET | RM_HEAD)
#define F_API	(RF_KEY | RF_MODEL)

/* Every endpoint: an endpoint is a row and a handler. First match wins. */
static const struct route routes[] = {
	{ "/v1/health", M_GET, 0, ep_health, RF_ALIAS | RF_LIVE },
	{ "/v1/models", M_GET, 0, ep_models, RF_ALIAS | F_API },
	{ "/v1/models/", M_GET, 0, ep_model, RF_PREFIX | F_API },
	{ "/v1/chat/completions", RM_POST, API_CHAT, ep_generate, RF_ALIAS | F_API },
	{ "/v1/completions", RM_POST, API_COMPLETION, ep_generate, RF_ALIAS | F_API },
	{ "/v1/responses", RM_POST, API_RESPONSES, ep_generate, RF_ALIAS | F_API },
	{ "/v1/responses/", RM_GET, 0, ep_response_get, RF_ALIAS | RF_PREFIX | F_API },
	{ "/v1/responses/", RM_DELETE, 0, ep_response_delete, RF_ALIAS | RF_PREFIX | F_API },
	{ "/metrics", M_GET, 0, ep_metrics, RF_KEY },	/* loading and draining too */
	/* llama-server's native completion and utility endpoints */
	{ "/completion", RM_POST, API_NATIVE, ep_native, F_API },
	{ "/tokenize", RM_POST, 0, ep_tokenize, F_API },
	{ "/detokenize", RM_POST, 0, ep_detokenize, F_API },
	{ "/apply-template", RM_POST, 0, ep_apply_template, F_API },
	{ "/props", M_GET, 0, ep_props, F_API },
	{ NULL, M_GET, 0, ep_ui, RF_UI | RF_LIVE },
};

bool http_route_is_ui(const struct route *r)
{
	return r && (r->flags & RF_UI);
}

static unsigned int method_bit(const char *method)
{
	static const struct { const char *name; unsigned int bit; } m[] = {
		{ "GET", RM_GET }, { "HEAD", RM_HEAD }, { "POST", RM_POST }, { "DELETE", RM_DELETE },
	};
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (!strcmp(method, m[i].name))
			return m[i].bit;
	return 0;
}

/* Whether @r's path names @url; *@rest: where its rest starts (prefix rows). */
static bool route_match(const struct route *r, const char *url, bool no_ui, size_t *rest)
{
	const char *path = r->path;
	size_t n;

	if (r->flags & RF_UI)
		return !no_ui && ui_find(url, NULL, NULL);
	if ((r->flags & RF_ALIAS) && strncmp(url, "/v1/", 4))
		path += 3;	/* "/v1/models" answered as "/models" too */
	n = strlen(path);
	if (!(r->flags & RF_PREFIX))
		return !strcmp(url, path);
	*rest = n;
	return !strncmp(url, path, n) && url[n];
}

/*
 * The row of @url and @method in routes[] into h->route (NULL when none
 * takes @method), the methods @url's rows answer into h->allow (0: an
 * unknown path).
 */
void http_route_find(struct hreq *h, const char *url, const char *method, bool no_ui)
{
	unsigned int bit = method_bit(method);
	size_t i, rest = 0;

	h->route = NULL;
	h->allow = 0;
	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (!route_match(&routes[i], url, no_ui, &rest))
			continue;
		h->allow |= routes[i].methods;
		if (!h->route && (routes[i].methods & bit)) {
			h->route = &routes[i];
			h->rest = rest;
		}
	}
}

/*
 * @methods as an Allow header ("GET, HEAD, OPTIONS") into @buf, or with
 * @sep " or " and no HEAD or OPTIONS as the 405's hint ("GET or DELETE").
 */
const char *http_methods_str(unsigned int methods, const char *sep, char *buf, size_t n)
{
	static const char *const names[] = { "GET", "HEAD", "POST", "DELETE" };
	bool hint = strcmp(sep, ", ");
	size_t i, k = 0;

	buf[0] = 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((methods & (1u << i)) && !(hint && (1u << i) == RM_HEAD))
			k += (size_t)snprintf(buf + k, k < n ? n - k : 0, "%s%s", k ? sep : "",
					      names[i]);
	if (!hint)
		snprintf(buf + k, k < n ? n - k : 0, "%sOPTIONS", k ? sep : "");
	return buf;
}

/* The Allow header of a 405 on a path answering @methods. */
const char *http_allowed(unsigned int methods, char *buf, size_t n)
{
	return http_methods_str(methods, ", ", buf, n);
}
