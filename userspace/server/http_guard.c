// SPDX-License-Identifier: MIT
/*
 * The request guards of http_guard.h: framing (RFC 9112 sections 3.2,
 * 6.1 and 6.3) and the Host / Origin policy of a server without a key.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "api.h"
#include "http_guard.h"

/* ---- framing ------------------------------------------------------------- */

/* RFC 9110 section 5.6.2: tchar. */
static bool is_tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

void framing_add(struct framing *f, const char *name, const char *value)
{
	const char *c;
	size_t len;

	for (c = name; *c && is_tchar((unsigned char)*c); c++)
		;
	if ((*c || c == name) && !f->bad_name[0])
		snprintf(f->bad_name, sizeof(f->bad_name), "%s", *name ? name : "(empty)");
	if (!value)
		value = "";
	if (!strcasecmp(name, "Host")) {
		f->n_host++;
	} else if (!strcasecmp(name, "Content-Length")) {
		if (!f->n_cl++)
			snprintf(f->cl, sizeof(f->cl), "%s", value);
		else if (strncmp(f->cl, value, sizeof(f->cl) - 1) || strlen(value) >= sizeof(f->cl))
			f->cl_differ = true;
	} else if (!strcasecmp(name, "Transfer-Encoding")) {
		len = strlen(f->te);
		if (len + 1 + strlen(value) >= sizeof(f->te)) {
			f->te_long = true;
		} else {
			if (f->n_te)
				f->te[len++] = ',';
			strcpy(f->te + len, value);
		}
		f->n_te++;
	}
}

static int bad_framing(struct api_error *e, int status, const char *code, const char *fmt,
		       const char *arg)
{
	api_error_set(e, status, "invalid_request_error", code, NULL, fmt, arg);
	return -1;
}

/* The Transfer-Encoding list: chunked last and once, no other coding. */
static int check_codings(const char *list, struct api_error *e)
{
	char buf[GUARD_TE_MAX], other[GUARD_TE_MAX] = "", *save = NULL, *t, *last = NULL;
	int chunked = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t n;

		t += strspn(t, " \t");
		for (n = strlen(t); n && (t[n - 1] == ' ' || t[n - 1] == '\t'); n--)
			t[n - 1] = 0;
		if (!*t)
			continue;	/* an empty list element (RFC 9110 section 5.6.1) */
		last = t;
		if (!strcasecmp(t, "chunked"))
			chunked++;
		else if (!other[0])
			snprintf(other, sizeof(other), "%s", t);
	}
	if (!last || strcasecmp(last, "chunked"))
		return bad_framing(e, 400, "invalid_transfer_encoding",
				   "'Transfer-Encoding: %s': the last transfer coding must be chunked, or the end of the body cannot be found",
				   list);
	if (chunked > 1)
		return bad_framing(e, 400, "invalid_transfer_encoding",
				   "'Transfer-Encoding: %s': chunked is applied more than once", list);
	if (other[0])
		return bad_framing(e, 501, "unsupported_transfer_encoding",
				   "the transfer coding '%s' is not implemented: send the body plain or chunked",
				   other);
	return 0;
}

int framing_check(const struct framing *f, bool http10, struct api_error *e)
{
	if (f->bad_name[0])
		return bad_framing(e, 400, "invalid_header",
				   "the header field name '%s' is not a token (whitespace before the colon?)",
				   f->bad_name);
	if (f->n_host > 1)
		return bad_framing(e, 400, "invalid_header", "%s", "more than one Host header");
	if (f->cl_differ)
		return bad_framing(e, 400, "invalid_header", "%s",
				   "Content-Length header lines with different values");
	if (!f->n_te)
		return 0;
	if (f->n_cl)
		return bad_framing(e, 400, "invalid_header", "%s",
				   "both Transfer-Encoding and Content-Length: send one of them");
	if (http10)
		return bad_framing(e, 400, "invalid_transfer_encoding", "%s",
				   "Transfer-Encoding in an HTTP/1.0 request");
	if (f->te_long)
		return bad_framing(e, 400, "invalid_transfer_encoding", "%s",
				   "the Transfer-Encoding header is too long");
	return check_codings(f->te, e);
}

/* ---- names and origins --------------------------------------------------- */

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/*
 * "host[:port]" (RFC 9110 section 7.2): the host, lower case, into @name
 * (an IPv6 literal with its brackets), the port (-1 when none) and
 * whether the host is an IP address literal. A reg-name keeps to letters,
 * digits, "-", ".", "_" and "~"; one trailing dot (an absolute name) is
 * dropped. Return: 0, or -1 when @h is not one.
 */
static int split_host(const char *h, char *name, size_t n, int *port, bool *is_ip)
{
	struct in6_addr a6;
	struct in_addr a4;
	const char *colon;
	char tmp[256];
	size_t len;

	*port = -1;
	*is_ip = false;
	if (h[0] == '[') {
		const char *end = strchr(h, ']');

		len = end ? (size_t)(end - h - 1) : 0;
		if (!end || !len || len >= sizeof(tmp))
			return -1;
		memcpy(tmp, h + 1, len);
		tmp[len] = 0;
		if (inet_pton(AF_INET6, tmp, &a6) != 1 || (end[1] && end[1] != ':'))
			return -1;
		colon = end[1] ? end + 1 : NULL;
		*is_ip = true;
		len += 2;
	} else {
		colon = strchr(h, ':');
		len = colon ? (size_t)(colon - h) : strlen(h);
		if (!len || len >= sizeof(tmp) || (colon && strchr(colon + 1, ':')))
			return -1;
		memcpy(tmp, h, len);
		tmp[len] = 0;
		if (strspn(tmp, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~") !=
		    len)
			return -1;
		*is_ip = inet_pton(AF_INET, tmp, &a4) == 1;
	}
	if (colon) {
		char *end;
		long v = strtol(colon + 1, &end, 10);

		if (!isdigit((unsigned char)colon[1]) || *end || v > 65535 || end - colon > 6)
			return -1;
		*port = (int)v;
	}
	if (len >= n)
		return -1;
	memcpy(name, h, len);
	name[len] = 0;
	if (len > 1 && name[len - 1] == '.' && !*is_ip)
		name[len - 1] = 0;
	lower(name);
	return 0;
}

/* localhost, *.localhost (RFC 6761 section 6.3), 127.0.0.0/8, [::1]. */
static bool is_loopback(const char *name)
{
	size_t n = strlen(name);
	struct in6_addr a6;
	struct in_addr a4;
	char tmp[64];

	if (!strcmp(name, "localhost") || (n > 10 && !strcmp(name + n - 10, ".localhost")))
		return true;
	if (inet_pton(AF_INET, name, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (name[0] != '[' || n < 3 || n - 2 >= sizeof(tmp))
		return false;
	memcpy(tmp, name + 1, n - 2);
	tmp[n - 2] = 0;
	if (inet_pton(AF_INET6, tmp, &a6) != 1)
		return false;
	return IN6_IS_ADDR_LOOPBACK(&a6) ||
	       (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
}

/* @item is one of the comma separated @list. */
static bool in_list(const char *list, const char *item)
{
	size_t n = strlen(item);
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && !memcmp(p, item, n))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/*
 * An Origin (RFC 6454 section 7: "scheme://host[:port]", no path) as
 * compared: lower case, without the scheme's default port, into @out
 * (not @o); *@auth is where its host[:port] starts in @out. Return: 0, or
 * -1 when @o is not one ("null" is not).
 */
static int norm_origin(const char *o, char *out, size_t n, const char **auth)
{
	const char *sep = strstr(o, "://");
	char name[256];
	size_t sl;
	bool is_ip;
	int port;

	if (!sep || sep == o || !isalpha((unsigned char)o[0]))
		return -1;
	sl = (size_t)(sep - o);
	if (strspn(o, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.") != sl ||
	    split_host(sep + 3, name, sizeof(name), &port, &is_ip))
		return -1;
	if ((sl == 4 && !strncasecmp(o, "http", 4) && port == 80) ||
	    (sl == 5 && !strncasecmp(o, "https", 5) && port == 443))
		port = -1;
	if (port >= 0 ? snprintf(out, n, "%.*s://%s:%d", (int)sl, o, name, port) >= (int)n :
	    snprintf(out, n, "%.*s://%s", (int)sl, o, name) >= (int)n)
		return -1;
	lower(out);
	*auth = out + sl + 3;
	return 0;
}

/* Append @item to the malloc'ed comma list *@list. */
static int list_add(char **list, const char *item)
{
	size_t old = *list ? strlen(*list) : 0;
	char *l = realloc(*list, old + strlen(item) + 2);

	if (!l)
		return -1;
	if (old)
		l[old++] = ',';
	strcpy(l + old, item);
	*list = l;
	return 0;
}

static int add_hosts(struct origin_policy *p, const char *hosts, char *err, size_t errlen)
{
	char *copy = strdup(hosts), *save = NULL, *t, name[256];
	bool is_ip;
	int port, ret = 0;

	for (t = copy ? strtok_r(copy, ",", &save) : NULL; t && !ret;
	     t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "*")) {
			p->any_host = true;
		} else if (split_host(t, name, sizeof(name), &port, &is_ip)) {
			snprintf(err, errlen, "--allowed-host '%.100s': not a host name or address", t);
			ret = -1;
		} else if (list_add(&p->hosts, name)) {
			ret = -1;
		}
	}
	if (!copy)
		snprintf(err, errlen, "out of memory");
	free(copy);
	return copy ? ret : -1;
}

static int add_origins(struct origin_policy *p, const char *origins, char *err, size_t errlen)
{
	char *copy = strdup(origins), *save = NULL, *t, norm[GUARD_ORIGIN_MAX];
	const char *auth;
	int ret = 0;

	for (t = copy ? strtok_r(copy, ",", &save) : NULL; t && !ret;
	     t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "*")) {
			p->any_origin = true;
		} else if (strcmp(t, "null") && norm_origin(t, norm, sizeof(norm), &auth)) {
			snprintf(err, errlen, "--cors-origin '%.100s': not an origin (scheme://host[:port] with no path, 'null' or '*')",
				 t);
			ret = -1;
		} else if (list_add(&p->origins, strcmp(t, "null") ? norm : "null")) {
			ret = -1;
		}
	}
	if (!copy)
		snprintf(err, errlen, "out of memory");
	free(copy);
	return copy ? ret : -1;
}

struct origin_policy *origin_policy_new(bool keyed, const char *listen, const char *hosts,
					const char *origins, char *err, size_t errlen)
{
	struct origin_policy *p = calloc(1, sizeof(*p));
	struct in6_addr a6;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->keyed = keyed;
	/* An address needs no entry: every IP literal is taken. */
	if (listen && inet_pton(AF_INET, listen, &a6) != 1 && inet_pton(AF_INET6, listen, &a6) != 1)
		snprintf(p->listen, sizeof(p->listen), "%s", listen);
	lower(p->listen);
	if (gethostname(p->hostname, sizeof(p->hostname) - 1))
		p->hostname[0] = 0;
	lower(p->hostname);
	if ((hosts && add_hosts(p, hosts, err, errlen)) ||
	    (origins && add_origins(p, origins, err, errlen))) {
		origin_policy_free(p);
		return NULL;
	}
	return p;
}

void origin_policy_free(struct origin_policy *p)
{
	if (!p)
		return;
	free(p->hosts);
	free(p->origins);
	free(p);
}

/* A host name this server answers to without a key (see origin_check_host()). */
static bool name_ok(const struct origin_policy *p, const char *name, bool is_ip)
{
	size_t n = strlen(p->hostname);

	if (is_ip || p->any_host || is_loopback(name))
		return true;
	if ((p->listen[0] && !strcmp(name, p->listen)) || (n && !strcmp(name, p->hostname)))
		return true;
	if (n && !strncmp(name, p->hostname, n) && !strcmp(name + n, ".local"))
		return true;
	return p->hosts && in_list(p->hosts, name);
}

int origin_check_host(const struct origin_policy *p, const char *host, struct api_error *e)
{
	char name[256];
	bool is_ip;
	int port;

	if (p->keyed || !host)
		return 0;
	if (split_host(host, name, sizeof(name), &port, &is_ip)) {
		api_error_set(e, 400, "invalid_request_error", "invalid_host", NULL,
			      "the Host header '%.100s' is not host[:port]", host);
		return -1;
	}
	if (name_ok(p, name, is_ip))
		return 0;
	api_error_set(e, 421, "invalid_request_error", "host_not_allowed", NULL,
		      "this server does not answer to the name '%.100s' without --api-key (it answers to localhost, IP addresses, its --host and machine name; add --allowed-host NAME)",
		      name);
	return -1;
}

/* An origin taken without a key: listed, on a loopback host, or the page's own. */
static bool origin_taken(const struct origin_policy *p, const char *origin, const char *host)
{
	char norm[GUARD_ORIGIN_MAX], self[GUARD_ORIGIN_MAX + 256], self_norm[sizeof(self)];
	char name[256];
	const char *auth, *self_auth;
	bool is_ip;
	int port;

	if (!strcmp(origin, "null"))
		return p->origins && in_list(p->origins, "null");
	if (norm_origin(origin, norm, sizeof(norm), &auth))
		return false;
	if (p->origins && in_list(p->origins, norm))
		return true;
	if (!split_host(auth, name, sizeof(name), &port, &is_ip) && is_loopback(name))
		return true;
	/* Same origin: the Host under the origin's scheme, normalised alike. */
	if (!host || snprintf(self, sizeof(self), "%.*s%s", (int)(auth - norm), norm, host) >=
		     (int)sizeof(self))
		return false;
	return !norm_origin(self, self_norm, sizeof(self_norm), &self_auth) &&
	       !strcmp(self_norm, norm);
}

int origin_check(const struct origin_policy *p, const char *origin, const char *host,
		 char *acao, size_t n, struct api_error *e)
{
	acao[0] = 0;
	if (p->keyed || p->any_origin) {
		snprintf(acao, n, "*");
		return 0;
	}
	if (!origin)
		return 0;
	if (strlen(origin) < GUARD_ORIGIN_MAX && origin_taken(p, origin, host)) {
		snprintf(acao, n, "%s", origin);
		return 0;
	}
	api_error_set(e, 403, "invalid_request_error", "origin_not_allowed", NULL,
		      "the web page at '%.100s' may not call this server: without --api-key only its own pages and pages on localhost may (add --cors-origin ORIGIN)",
		      origin);
	return -1;
}

/* ---- CORS preflight ------------------------------------------------------ */

/* Whether @v is a comma list of tokens, with optional whitespace around each. */
static bool is_token_list(const char *v)
{
	const char *c = v, *name;

	for (;;) {
		while (*c == ' ' || *c == '\t')
			c++;
		name = c;
		while (is_tchar((unsigned char)*c))
			c++;
		if (c == name)
			return false;	/* an empty element or a character outside a token */
		while (*c == ' ' || *c == '\t')
			c++;
		if (!*c)
			return true;
		if (*c++ != ',')
			return false;
	}
}

const char *cors_allow_headers(const char *requested)
{
	if (requested && strlen(requested) <= GUARD_REQ_HEADERS_MAX && is_token_list(requested))
		return requested;
	return "Authorization, Content-Type, X-Api-Key, OpenAI-Organization, OpenAI-Project, "
	       "OpenAI-Beta, Idempotency-Key, X-Stainless-Lang, X-Stainless-Package-Version, "
	       "X-Stainless-OS, X-Stainless-Arch, X-Stainless-Runtime, X-Stainless-Runtime-Version, "
	       "X-Stainless-Retry-Count, X-Stainless-Timeout, X-Stainless-Helper-Method";
}
