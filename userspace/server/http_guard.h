/* SPDX-License-Identifier: MIT */
/*
 * What the HTTP layer refuses before a request runs, as pure functions of
 * its header fields (no libmicrohttpd here, so that the unit tests see
 * every rule): the message's framing (RFC 9112 sections 3.2 and 6: one
 * Host, one Content-Length value, a Transfer-Encoding we can read, field
 * names that are tokens) and who may call a server without an API key
 * (the Host header against DNS rebinding, the Origin header against other
 * web pages). http.c gathers the fields and answers the errors; the rules
 * are listed in userspace/doc/server.rst ("On an open network").
 */
#ifndef RK_SERVER_HTTP_GUARD_H
#define RK_SERVER_HTTP_GUARD_H

#include <stdbool.h>
#include <stddef.h>

struct api_error;

/* The Transfer-Encoding lists kept (longer ones are refused). */
#define GUARD_TE_MAX	128
/* The longest Origin a server without a key echoes (longer: refused). */
#define GUARD_ORIGIN_MAX 256
/* The longest Access-Control-Request-Headers a preflight's answer echoes. */
#define GUARD_REQ_HEADERS_MAX 1024

/**
 * struct framing - the framing fields of one request, gathered by
 *	framing_add() (zero it first)
 * @n_host: Host field lines
 * @n_cl: Content-Length field lines
 * @cl_differ: two Content-Length lines with different values
 * @cl: the first Content-Length value
 * @te: every Transfer-Encoding line's list, joined with ","
 * @n_te: Transfer-Encoding field lines
 * @te_long: the lists did not fit @te
 * @bad_name: the first field name that is not a token (RFC 9110 section
 *	5.1: e.g. "Content-Length " from "Content-Length : 5"), cut to fit
 */
struct framing {
	int n_host, n_cl, n_te;
	bool cl_differ, te_long;
	char cl[32];
	char te[GUARD_TE_MAX];
	char bad_name[48];
};

/* One header field line @name: @value (as libmicrohttpd split it). */
void framing_add(struct framing *f, const char *name, const char *value);

/**
 * framing_check() - whether the request's framing can be trusted
 * @f: its fields
 * @http10: the request is HTTP/1.0
 * @e: the error
 *
 * Refused, each with a 400 unless said (the connection is closed after
 * the answer): a field name that is not a token; more than one Host;
 * Content-Length lines that differ; Transfer-Encoding together with
 * Content-Length, on HTTP/1.0, or whose last coding is not chunked (the
 * body's end cannot be found), chunked twice; another coding before
 * chunked (gzip, chunked) is a 501, as we decode none.
 *
 * Return: 0, or -1 with @e.
 */
int framing_check(const struct framing *f, bool http10, struct api_error *e);

/**
 * struct origin_policy - who may call the server (see origin_policy_new())
 * @keyed: --api-key is set: every Host and Origin (the key is the check)
 * @listen: the --host name, lower case, "" for an address
 * @hostname: this machine's name (gethostname()), lower case
 * @hosts: the --allowed-host names, lower case, comma separated ("" none)
 * @any_host: --allowed-host '*'
 * @origins: the --cors-origin origins, lower case without a default
 *	port, comma separated ("" none)
 * @any_origin: --cors-origin '*'
 */
struct origin_policy {
	bool keyed, any_host, any_origin;
	char listen[256];
	char hostname[256];
	char *hosts, *origins;
};

/**
 * origin_policy_new() - the policy of a server
 * @keyed: it has an API key
 * @listen: --host
 * @hosts: the --allowed-host values joined with "," (NULL: none); each
 *	a host name or address without a port, or "*"
 * @origins: the --cors-origin values joined with "," (NULL: none); each
 *	"scheme://host[:port]" (no path), "null" or "*"
 * @err, @errlen: why a value is refused
 *
 * Return: the policy, or NULL with @err (a value that is not a host or
 * an origin; out of memory).
 */
struct origin_policy *origin_policy_new(bool keyed, const char *listen, const char *hosts,
					const char *origins, char *err, size_t errlen);
void origin_policy_free(struct origin_policy *p);

/**
 * origin_check_host() - the Host header of a request
 * @p: the policy
 * @host: its value, NULL when there is none (HTTP/1.0, raw clients; no
 *	browser sends one)
 * @e: the error
 *
 * Without a key a Host is taken when its name (port aside) is an IP
 * address literal (a DNS-rebinding page sends the attacker's name, never
 * an address), a loopback name (localhost, *.localhost), the --host name,
 * this machine's name (also NAME.local) or an --allowed-host.
 *
 * Return: 0, or -1 with @e: 400 invalid_host for a value that is not
 * host[:port], 421 host_not_allowed for a name this server does not
 * answer to without a key.
 */
int origin_check_host(const struct origin_policy *p, const char *host, struct api_error *e);

/**
 * origin_check() - the Origin header of a request (after its Host passed)
 * @p: the policy
 * @origin: its value, NULL when there is none (not a browser, or a
 *	same-origin navigation)
 * @host: the request's Host, NULL when none
 * @acao: the Access-Control-Allow-Origin to answer with ("" none)
 * @n: size of @acao (at least GUARD_ORIGIN_MAX)
 * @e: the error
 *
 * With a key every origin gets "*". Without, an origin is taken when it
 * is the page's own (its host[:port] is @host), has a loopback host
 * (http://localhost:3000) or is an --cors-origin; it is echoed.
 *
 * Return: 0, or -1 with @e: 403 origin_not_allowed.
 */
int origin_check(const struct origin_policy *p, const char *origin, const char *host,
		 char *acao, size_t n, struct api_error *e);

/**
 * cors_allow_headers() - the Access-Control-Allow-Headers of a preflight
 * @requested: its Access-Control-Request-Headers, NULL when it has none
 *
 * A preflight reaches this only once its origin is taken (origin_check()),
 * so the header names a page asks for are allowed: the SDKs add their own
 * (the OpenAI SDK's X-Stainless-Helper-Method on stream(), parse() and
 * runTools(), OpenAI-Beta, Idempotency-Key, ...) and a fixed list refuses
 * every name it misses. @requested is echoed when it is a comma list of
 * field names (RFC 9110 section 5.6.1, tokens) of at most
 * GUARD_REQ_HEADERS_MAX bytes; else (or without it) the fixed list of the
 * OpenAI SDK's and llama-server's headers is answered.
 *
 * Return: the value to answer with (@requested or a static string).
 */
const char *cors_allow_headers(const char *requested);

#endif
