// SPDX-License-Identifier: MIT
/*
 * The HTTP layer's request guards (userspace/server/http_guard.c, the
 * rules of userspace/doc/server.rst "On an open network"): framing per
 * RFC 9112 (Transfer-Encoding other than a final chunked, two different
 * Content-Length values, whitespace before a field's colon, two Hosts)
 * and, without an API key, the Host names and Origins a server answers
 * to; with a key every one; the header names a CORS preflight's answer
 * allows. Output: TAP.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "http_guard.h"

#include "tap.h"

/* A request of @n header lines "Name: value" (name and value as split). */
static int framing_of(const char *const (*lines)[2], int n, bool http10, struct api_error *e)
{
	struct framing f;
	int i;

	memset(&f, 0, sizeof(f));
	memset(e, 0, sizeof(*e));
	for (i = 0; i < n; i++)
		framing_add(&f, lines[i][0], lines[i][1]);
	return framing_check(&f, http10, e);
}

static void test_framing(void)
{
	static const struct {
		const char *what;
		const char *lines[3][2];
		int n;
		bool http10;
		int status;	/* 0: taken */
		const char *code;
	} c[] = {
		{ "a plain Content-Length", { { "Host", "x" }, { "Content-Length", "5" } }, 2, false, 0, NULL },
		{ "chunked", { { "Transfer-Encoding", "chunked" } }, 1, false, 0, NULL },
		{ "Chunked (codings are case-insensitive)", { { "Transfer-Encoding", "Chunked" } }, 1,
		  false, 0, NULL },
		{ "the same Content-Length twice", { { "Content-Length", "5" }, { "content-length", "5" } },
		  2, false, 0, NULL },
		{ "gzip alone: no end of the body", { { "Transfer-Encoding", "gzip" } }, 1, false, 400,
		  "invalid_transfer_encoding" },
		{ "chunked, gzip: chunked not last", { { "Transfer-Encoding", "chunked, gzip" } }, 1,
		  false, 400, "invalid_transfer_encoding" },
		{ "gzip, chunked: a coding we do not decode", { { "Transfer-Encoding", "gzip, chunked" } },
		  1, false, 501, "unsupported_transfer_encoding" },
		{ "gzip then chunked on two lines", { { "Transfer-Encoding", "gzip" },
		  { "Transfer-Encoding", "chunked" } }, 2, false, 501, "unsupported_transfer_encoding" },
		{ "chunked on two lines: twice", { { "Transfer-Encoding", "chunked" },
		  { "Transfer-Encoding", "chunked" } }, 2, false, 400, "invalid_transfer_encoding" },
		{ "chunked with a parameter", { { "Transfer-Encoding", "chunked;q=1" } }, 1, false, 400,
		  "invalid_transfer_encoding" },
		{ "an empty Transfer-Encoding", { { "Transfer-Encoding", " , " } }, 1, false, 400,
		  "invalid_transfer_encoding" },
		{ "Transfer-Encoding with Content-Length", { { "Transfer-Encoding", "chunked" },
		  { "Content-Length", "5" } }, 2, false, 400, "invalid_header" },
		{ "Transfer-Encoding in HTTP/1.0", { { "Transfer-Encoding", "chunked" } }, 1, true, 400,
		  "invalid_transfer_encoding" },
		{ "two different Content-Length values", { { "Content-Length", "5" },
		  { "Content-Length", "50" } }, 2, false, 400, "invalid_header" },
		{ "whitespace before the colon", { { "Content-Length ", "5" } }, 1, false, 400,
		  "invalid_header" },
		{ "a tab before the colon", { { "Host\t", "x" } }, 1, false, 400, "invalid_header" },
		{ "a space inside a name", { { "X Forwarded", "x" } }, 1, false, 400, "invalid_header" },
		{ "two Hosts", { { "Host", "a" }, { "Host", "b" } }, 2, false, 400, "invalid_header" },
	};
	struct api_error e;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int rc = framing_of(c[i].lines, c[i].n, c[i].http10, &e);

		tap_ok(c[i].status ? rc == -1 && e.status == c[i].status && !strcmp(e.code, c[i].code) &&
				     !e.param[0] && e.msg[0] : rc == 0,
		       "framing: %s: %s (got %d %s: %s)", c[i].what,
		       c[i].status ? (c[i].status == 501 ? "501" : "400") : "taken",
		       rc ? e.status : 0, rc && e.code ? e.code : "-", rc ? e.msg : "");
	}
}

static void host_case(const struct origin_policy *p, const char *host, int want,
		      const char *what)
{
	struct api_error e;
	int rc;

	memset(&e, 0, sizeof(e));
	rc = origin_check_host(p, host, &e);
	tap_ok(want ? rc == -1 && e.status == want : rc == 0, "Host %s: %s (got %d %s)",
	       host ? host : "(none)", what, rc ? e.status : 0, rc ? e.msg : "");
}

static void test_hosts(void)
{
	char err[256] = "", name[300];
	struct origin_policy *p = origin_policy_new(false, "0.0.0.0", "llm.lan,[fd00::5]", NULL, err,
						    sizeof(err));
	struct origin_policy *named = origin_policy_new(false, "box.example", NULL, NULL, err,
							sizeof(err));
	struct origin_policy *keyed = origin_policy_new(true, "127.0.0.1", NULL, NULL, err,
							sizeof(err));
	struct origin_policy *any = origin_policy_new(false, "::", "*", NULL, err, sizeof(err));
	char hn[256];

	if (!tap_ok(p && named && keyed && any, "policies made (%s)", err))
		return;
	host_case(p, "localhost", 0, "a loopback name");
	host_case(p, "LocalHost:8080", 0, "a loopback name, any case, with a port");
	host_case(p, "app.localhost:3000", 0, "a .localhost name (RFC 6761)");
	host_case(p, "127.0.0.1:8080", 0, "127.0.0.1 with a port");
	host_case(p, "127.1.2.3", 0, "127.0.0.0/8");
	host_case(p, "[::1]:8080", 0, "[::1] with a port");
	host_case(p, "[::1]", 0, "[::1]");
	host_case(p, "192.168.1.5:8080", 0, "a LAN address (any IP literal)");
	host_case(p, "[fe80::1]", 0, "an IPv6 literal");
	host_case(p, NULL, 0, "none (not a browser)");
	host_case(p, "llm.lan:8080", 0, "an --allowed-host name");
	host_case(p, "LLM.LAN.", 0, "an --allowed-host name, upper case, absolute");
	host_case(p, "evil.example", 421, "a name that is none of them (DNS rebinding)");
	host_case(p, "localhost.evil.example", 421, "a name that only starts like localhost");
	host_case(p, "evillocalhost", 421, "a name that only ends like localhost");
	host_case(p, "a b", 400, "not a host");
	host_case(p, "x:99999", 400, "a port out of range");
	host_case(p, "x:", 400, "an empty port");
	host_case(p, "::1", 400, "an IPv6 address without brackets");
	host_case(p, "[::1", 400, "an unclosed bracket");
	host_case(p, "", 400, "empty");
	host_case(named, "box.example:8080", 0, "the --host name");
	host_case(named, "evil.example", 421, "another name, with --host a name");
	if (!gethostname(hn, sizeof(hn) - 1) && hn[0]) {
		host_case(p, hn, 0, "this machine's name");
		snprintf(name, sizeof(name), "%s.local:8080", hn);
		host_case(p, name, 0, "this machine's mDNS name");
	}
	host_case(keyed, "evil.example", 0, "any name with a key");
	host_case(any, "evil.example", 0, "any name with --allowed-host '*'");
	origin_policy_free(p);
	origin_policy_free(named);
	origin_policy_free(keyed);
	origin_policy_free(any);
}

static void origin_case(const struct origin_policy *p, const char *origin, const char *host,
			const char *want_acao, const char *what)
{
	char acao[GUARD_ORIGIN_MAX];
	struct api_error e;
	int rc;

	memset(&e, 0, sizeof(e));
	rc = origin_check(p, origin, host, acao, sizeof(acao), &e);
	tap_ok(want_acao ? rc == 0 && !strcmp(acao, want_acao) :
			   rc == -1 && e.status == 403 && !strcmp(e.code, "origin_not_allowed"),
	       "Origin %s (Host %s): %s (got %d, Access-Control-Allow-Origin '%s' %s)",
	       origin ? origin : "(none)", host ? host : "(none)", what, rc ? e.status : 0,
	       rc ? "" : acao, rc ? e.msg : "");
}

static void test_origins(void)
{
	char err[256] = "";
	struct origin_policy *p = origin_policy_new(false, "127.0.0.1", NULL,
						    "https://App.Example:443,http://10.0.0.2:3000,null",
						    err, sizeof(err));
	struct origin_policy *none = origin_policy_new(false, "127.0.0.1", NULL, NULL, err,
						       sizeof(err));
	struct origin_policy *keyed = origin_policy_new(true, "127.0.0.1", NULL, NULL, err,
							sizeof(err));
	struct origin_policy *any = origin_policy_new(false, "127.0.0.1", NULL, "*", err,
						      sizeof(err));
	static const char *const bad[] = { "app.example", "http://x/path", "http://", "*x",
					   "ftp//x", "http://a b" };
	size_t i;

	if (!tap_ok(p && none && keyed && any, "policies made (%s)", err))
		return;
	origin_case(none, NULL, "127.0.0.1:8080", "", "no Origin: no CORS header, taken");
	origin_case(none, "http://127.0.0.1:8080", "127.0.0.1:8080", "http://127.0.0.1:8080",
		    "its own page");
	origin_case(none, "http://192.168.1.5:8080", "192.168.1.5:8080", "http://192.168.1.5:8080",
		    "its own page reached by a LAN address");
	origin_case(none, "http://box.lan", "box.lan:80", "http://box.lan",
		    "its own page on the default port");
	origin_case(none, "http://localhost:3000", "127.0.0.1:8080", "http://localhost:3000",
		    "a page on localhost");
	origin_case(none, "http://[::1]:5173", "127.0.0.1:8080", "http://[::1]:5173",
		    "a page on [::1]");
	origin_case(none, "https://evil.example", "127.0.0.1:8080", NULL, "another site");
	origin_case(none, "http://evil.example:8080", "127.0.0.1:8080", NULL,
		    "another site on the same port");
	origin_case(none, "http://192.168.1.5:8081", "192.168.1.5:8080", NULL,
		    "another port of the same address");
	origin_case(none, "null", "127.0.0.1:8080", NULL, "'null' (a sandboxed or file: page)");
	origin_case(none, "http://localhost.evil.example", "127.0.0.1", NULL,
		    "a name that only starts like localhost");
	origin_case(p, "https://app.example", "127.0.0.1:8080", "https://app.example",
		    "a --cors-origin (given with its default port, upper case)");
	origin_case(p, "http://10.0.0.2:3000", "127.0.0.1:8080", "http://10.0.0.2:3000",
		    "a --cors-origin with a port");
	origin_case(p, "http://10.0.0.2:3001", "127.0.0.1:8080", NULL, "the same host, another port");
	origin_case(p, "null", "127.0.0.1:8080", "null", "'null' when listed");
	origin_case(keyed, "https://evil.example", "evil.example", "*", "any origin with a key: '*'");
	origin_case(keyed, NULL, NULL, "*", "no Origin with a key: '*' as before");
	origin_case(any, "https://evil.example", "127.0.0.1", "*", "--cors-origin '*'");
	origin_policy_free(p);
	origin_policy_free(none);
	origin_policy_free(keyed);
	origin_policy_free(any);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct origin_policy *b = origin_policy_new(false, "::", NULL, bad[i], err, sizeof(err));

		tap_ok(!b && strstr(err, "--cors-origin"), "--cors-origin '%s' is refused (%s)", bad[i],
		       err);
		origin_policy_free(b);
	}
	p = origin_policy_new(false, "::", "a b", NULL, err, sizeof(err));
	tap_ok(!p && strstr(err, "--allowed-host"), "--allowed-host 'a b' is refused (%s)", err);
	origin_policy_free(p);
}

static void test_cors_headers(void)
{
	static const char *const echoed[] = {
		"content-type",
		"authorization,content-type,x-stainless-helper-method,x-stainless-os",
		"Authorization, Content-Type , OpenAI-Beta",
		"x-custom-header",
	};
	static const char *const refused[] = {
		"", " ", "a,,b", "a b", "a,", "x-a: b", "x-\xc3\xa9", "a\001b",
	};
	char longest[GUARD_REQ_HEADERS_MAX + 2];
	const char *fixed = cors_allow_headers(NULL);
	size_t i;

	tap_ok(strstr(fixed, "Authorization") && strstr(fixed, "Content-Type") &&
	       strstr(fixed, "X-Stainless-Helper-Method"),
	       "no Access-Control-Request-Headers: the fixed list (%s)", fixed);
	for (i = 0; i < sizeof(echoed) / sizeof(echoed[0]); i++)
		tap_ok(cors_allow_headers(echoed[i]) == echoed[i], "'%s' is echoed", echoed[i]);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		tap_ok(!strcmp(cors_allow_headers(refused[i]), fixed),
		       "refused[%zu] is not a list of field names: the fixed list", i);
	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = 0;
	tap_ok(!strcmp(cors_allow_headers(longest), fixed), "a list over %d bytes: the fixed list",
	       GUARD_REQ_HEADERS_MAX);
	longest[GUARD_REQ_HEADERS_MAX] = 0;
	tap_ok(cors_allow_headers(longest) == longest, "a list of %d bytes is echoed",
	       GUARD_REQ_HEADERS_MAX);
}

int main(void)
{
	test_framing();
	test_hosts();
	test_origins();
	test_cors_headers();
	return tap_done();
}
