// SPDX-License-Identifier: MIT
/*
 * Connection deadlines (http_conn.h): a list of every open connection
 * with the deadline of its current phase, kept by libmicrohttpd's
 * connection notification and the access handler, swept by the monitor.
 *
 * Locking: cs->mu protects the list and every field of its entries. The
 * sweep shuts a socket down under it, and libmicrohttpd calls the CLOSED
 * notification (which takes it to unlink the entry) before it closes the
 * socket (daemon.c: MHD_cleanup_connections()), so the descriptor the
 * sweep uses is never one the kernel gave to a newer connection.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "api.h"
#include "http_conn.h"
#include "rk1828/util.h"

/**
 * struct conn - one open connection
 * @prev, @next: the set's list
 * @cs: the set
 * @fd: its socket
 * @phase: enum conn_phase of its current request
 * @expired: the phase whose deadline closed it, 0 while open
 * @served: it had an answer (it is kept alive)
 * @t0: accepted, ns
 * @deadline: end of @phase, ns; 0 none
 * @addr: the client's address, for the log
 */
struct conn {
	struct conn *prev, *next;
	struct conn_set *cs;
	int fd;
	enum conn_phase phase, expired;
	bool served;
	int64_t t0, deadline;
	char addr[INET6_ADDRSTRLEN];
};

/**
 * struct conn_set - the open connections of a server
 * @mu: protects everything here and the entries
 * @head: the list
 * @header_s, @body_s: the deadlines, s
 */
struct conn_set {
	pthread_mutex_t mu;
	struct conn *head;
	int header_s, body_s;
};

struct conn_set *conn_set_new(int header_s, int body_s)
{
	struct conn_set *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return NULL;
	pthread_mutex_init(&cs->mu, NULL);
	cs->header_s = header_s;
	cs->body_s = body_s;
	return cs;
}

void conn_set_free(struct conn_set *cs)
{
	struct conn *k, *next;

	if (!cs)
		return;
	for (k = cs->head; k; k = next) {
		next = k->next;
		free(k);
	}
	pthread_mutex_destroy(&cs->mu);
	free(cs);
}

int conn_deadline_s(const struct conn_set *cs, enum conn_phase ph)
{
	return ph == CONN_BODY ? cs->body_s : cs->header_s;
}

static void client_addr(struct MHD_Connection *c, char *addr, size_t n)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	snprintf(addr, n, "?");
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, addr, (socklen_t)n);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, addr, (socklen_t)n);
}

static void conn_start(struct conn_set *cs, struct MHD_Connection *c, void **ctx)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct conn *k = calloc(1, sizeof(*k));

	if (!k || !ci) {
		free(k);	/* no deadline: libmicrohttpd's idle timeout still applies */
		return;
	}
	k->cs = cs;
	k->fd = ci->connect_fd;
	k->phase = CONN_HEADERS;
	k->t0 = util_now_ns();
	k->deadline = k->t0 + cs->header_s * 1000000000LL;
	client_addr(c, k->addr, sizeof(k->addr));
	pthread_mutex_lock(&cs->mu);
	k->next = cs->head;
	if (cs->head)
		cs->head->prev = k;
	cs->head = k;
	pthread_mutex_unlock(&cs->mu);
	*ctx = k;
}

void conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		 enum MHD_ConnectionNotificationCode code)
{
	struct conn_set *cs = cls;
	struct conn *k = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		conn_start(cs, c, socket_context);
		return;
	}
	if (!k)
		return;
	pthread_mutex_lock(&cs->mu);
	if (k->prev)
		k->prev->next = k->next;
	else
		cs->head = k->next;
	if (k->next)
		k->next->prev = k->prev;
	pthread_mutex_unlock(&cs->mu);
	free(k);
	*socket_context = NULL;
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

void conn_phase(struct MHD_Connection *c, enum conn_phase ph)
{
	struct conn *k = conn_of(c);
	int64_t now = util_now_ns();

	if (!k)
		return;
	pthread_mutex_lock(&k->cs->mu);
	if (ph == CONN_HEADERS && k->phase != CONN_HEADERS)
		k->served = true;
	k->phase = ph;
	k->deadline = ph == CONN_ANSWER ? 0 : now + conn_deadline_s(k->cs, ph) * 1000000000LL;
	pthread_mutex_unlock(&k->cs->mu);
}

enum conn_phase conn_expired(struct MHD_Connection *c)
{
	struct conn *k = conn_of(c);
	enum conn_phase ph;

	if (!k)
		return 0;
	pthread_mutex_lock(&k->cs->mu);
	ph = k->expired;
	pthread_mutex_unlock(&k->cs->mu);
	return ph;
}

void http_raw_error(int fd, const struct api_error *e, const char *acao)
{
	const char *reason = MHD_get_reason_phrase_for((unsigned int)e->status);
	size_t len;
	char *body = api_error_json(e, &len), head[512];
	int n;

	if (!body)
		return;
	n = snprintf(head, sizeof(head),
		     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
		     "Connection: close\r\nServer: rk1828-llm\r\nX-Content-Type-Options: nosniff\r\n"
		     "%s%s%s\r\n", e->status, reason && *reason ? reason : "Error", len,
		     acao[0] ? "Access-Control-Allow-Origin: " : "", acao, acao[0] ? "\r\n" : "");
	if (n > 0 && (size_t)n < sizeof(head) &&
	    send(fd, head, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT | MSG_MORE) == n)
		(void)send(fd, body, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	free(body);
}

/* One connection past its deadline (under cs->mu): answer, log, shut down. */
static void expire(struct conn *k, int64_t now)
{
	int s = conn_deadline_s(k->cs, k->phase);
	struct api_error e;

	k->expired = k->phase;
	if (k->phase == CONN_BODY || !k->served) {
		api_error_set(&e, 408, "invalid_request_error", "request_timeout", NULL,
			      k->phase == CONN_BODY ?
			      "the request body did not arrive within %d s of its headers (--body-timeout)" :
			      "the request headers did not arrive within %d s (--header-timeout)", s);
		http_raw_error(k->fd, &e, "");
	}
	if (k->phase == CONN_HEADERS && !k->served)
		fprintf(stderr, "%s - - 408 dur=%.1fms (no complete request headers within %d s: closed)\n",
			k->addr, (now - k->t0) / 1e6, s);
	shutdown(k->fd, SHUT_RDWR);
}

void conn_sweep(struct conn_set *cs)
{
	int64_t now = util_now_ns();
	struct conn *k;

	pthread_mutex_lock(&cs->mu);
	for (k = cs->head; k; k = k->next)
		if (k->deadline && now >= k->deadline && !k->expired)
			expire(k, now);
	pthread_mutex_unlock(&cs->mu);
}
