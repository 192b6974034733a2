// SPDX-License-Identifier: MIT
/*
 * The HTTP layer (libmicrohttpd): the access handler (the request guards:
 * framing, Host, Origin, http_guard.h; the route table's lookup,
 * http_route.c; method, API key, body limit, the server's state, then the
 * row's handler), the per-request log line, the monitor thread, start and
 * stop. The handlers are in http_endpoints.c and http_gen.c.
 *
 * Threads: a pool of libmicrohttpd threads runs every callback here; the
 * engine's thread runs gen_event() (http_gen.c); the monitor thread watches the sockets
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
#include <sys/socket.h>
#include <unistd.h>

#include "api.h"
#include "api_keys.h"
#include "gen.h"
#include "http.h"
#include "http_conn.h"
#include "http_guard.h"
#include "http_req.h"
#include "metrics.h"
#include "resp_store.h"
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
/* ---- the API key ------------------------------------------------------ */

/*
 * The caller's key, from "Authorization: Bearer KEY" (OpenAI) or
 * "X-Api-Key: KEY" (llama-server takes both), into h->owner: the entry of
 * the server's keys it matches, "" on a server without keys. False: the
 * server has keys and the request holds none of them.
 */
static bool auth_ok(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	const char *x = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Api-Key");
	const char *k = NULL;

	h->owner = "";
	if (!s->o.n_api_keys)
		return true;
	if (x)
		k = api_keys_match(&s->o, x);
	if (!k && a && !strncasecmp(a, "Bearer ", 7)) {
		a += 7;
		while (*a == ' ')
			a++;
		k = api_keys_match(&s->o, a);
	}
	if (k)
		h->owner = k;
	return k != NULL;
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
	char use[64];

	if (guard(s, c, h, version, &e))
		return http_reply_error(c, h, &e);
	if (!strcmp(method, "OPTIONS")) {
		struct MHD_Response *r = MHD_create_response_from_buffer(0, "",
									MHD_RESPMEM_PERSISTENT);
		enum MHD_Result ret;

		http_common_headers(r, h);
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
	if (!h->allow)
		return http_fail(c, h, 404, "invalid_request_error", "not_found",
				 "unknown path '%s'", h->path);
	if (!h->route)
		return http_fail(c, h, 405, "invalid_request_error", "method_not_allowed",
				 "method not allowed on this path: use %s",
				 http_methods_str(h->allow, " or ", use, sizeof(use)));
	if ((h->route->flags & RF_KEY) && !auth_ok(s, c, h))
		return http_fail(c, h, 401, "invalid_request_error", "invalid_api_key", "%s",
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
		return http_reply_error(c, h, &e);
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
	unsigned int f;
	int st;

	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h)
			return MHD_NO;
		*con_cls = h;
		h->url = url;
		h->t0 = util_now_ns();
		h->owner = "";
		http_route_find(h, url, method, s->o.no_ui);
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
	h->url = url;
	conn_phase(c, CONN_ANSWER);
	if (h->g)
		return gen_finish_nonstream(c, h);
	if (h->too_big) {
		set_too_large(s, &e);
		return http_reply_error(c, h, &e);
	}
	if (!h->route)
		return MHD_NO;	/* answered at the first call (404, 405): no body comes */
	st = atomic_load(&s->state);
	f = h->route->flags;
	if (f & RF_LIVE)
		return h->route->fn(s, c, h);
	if (st == SRV_LOADING && (f & RF_MODEL))
		return http_fail(c, h, 503, "unavailable_error", "model_loading", "%s",
				 "the model is still loading; see GET /health");
	if (st == SRV_STOPPING)
		return http_fail(c, h, 503, "unavailable_error", "shutting_down", "%s",
				 "the server is shutting down");
	if (st == SRV_DRAINING && (f & RF_MODEL))
		return http_fail(c, h, 503, "unavailable_error", "draining", "%s", DRAINING_MSG);
	return h->route->fn(s, c, h);
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
		gen_list_del(s, g);
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
	gen_release_more(s, h);
	big = h->cap >= TRIM_BODY;
	free(h->body);
	free(h);
	if (big)
		malloc_trim(0);
}

/* ---- the monitor: clients that left while waiting ----------------------- */

static void *monitor(void *arg)
{
	struct srv *s = arg;

	while (!atomic_load(&s->monitor_stop)) {
		struct pollfd pfd[MAX_CONNS];
		struct gen *who[MAX_CONNS], *g;
		int n = 0, i;

		gen_reap(s);
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
	gen_reap(s);
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

int http_running(struct srv *s)
{
	struct gen *g;
	int n = 0;

	pthread_mutex_lock(&s->lock);
	for (g = s->gens; g; g = g->next)
		n += g->refs > 0;	/* refs 0: answered, on the reap list */
	pthread_mutex_unlock(&s->lock);
	return n;
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
