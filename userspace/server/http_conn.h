/* SPDX-License-Identifier: MIT */
/*
 * Absolute deadlines of the HTTP connections (http_conn.c). libmicrohttpd's
 * connection timeout is an inactivity timeout: every byte restarts it, so
 * a client trickling a byte every few seconds holds its connection for as
 * long as it likes. Each connection here has a deadline for its request's
 * headers (from its accept, or from the end of the previous answer on a
 * kept-alive connection) and one for the body (from the headers); the
 * monitor thread calls conn_sweep(), which closes those past theirs. An
 * answer in progress has no deadline (libmicrohttpd's idle timeout
 * applies; a generation waiting for the engine is suspended).
 */
#ifndef RK_SERVER_HTTP_CONN_H
#define RK_SERVER_HTTP_CONN_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

struct api_error;
struct conn_set;

/**
 * enum conn_phase - where a connection's current request is
 * @CONN_HEADERS: waiting for the request's headers
 * @CONN_BODY: the headers arrived, the body is being received
 * @CONN_ANSWER: the request is complete: answering (no deadline)
 */
enum conn_phase { CONN_HEADERS = 1, CONN_BODY, CONN_ANSWER };

/**
 * conn_set_new() - the connections of a server
 * @header_s: seconds for a request's headers (--header-timeout)
 * @body_s: seconds for its body once the headers arrived (--body-timeout)
 *
 * Return: the set, NULL when out of memory.
 */
struct conn_set *conn_set_new(int header_s, int body_s);
/* Free the set (after the daemon stopped: every connection closed). */
void conn_set_free(struct conn_set *cs);

/*
 * libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION callback (@cls: the set):
 * a connection starts in CONN_HEADERS or is forgotten.
 */
void conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		 enum MHD_ConnectionNotificationCode code);

/*
 * conn_phase() - @c's request moved to @ph (from libmicrohttpd's thread of
 * the connection): CONN_BODY starts the body deadline, CONN_HEADERS (the
 * answer is done) the next request's header deadline.
 */
void conn_phase(struct MHD_Connection *c, enum conn_phase ph);

/* The phase whose deadline closed @c, or 0 (for the request's log line). */
enum conn_phase conn_expired(struct MHD_Connection *c);

/* The deadline of @ph in seconds (for messages). */
int conn_deadline_s(const struct conn_set *cs, enum conn_phase ph);

/**
 * conn_sweep() - close the connections past their deadline
 * @cs: the set
 *
 * Each is answered 408 and shut down, which libmicrohttpd's poll sees as
 * the client's close; a kept-alive connection that had an answer is
 * closed silently instead (most often it is idle between requests, which
 * cannot be told from one trickling the next request's headers). One
 * that never sent its first request's headers is logged here, one in its
 * body by its request's log line (conn_expired()). Called by the monitor
 * thread.
 */
void conn_sweep(struct conn_set *cs);

/**
 * http_raw_error() - write a whole error answer on a socket and close it
 * @fd: the connection's socket
 * @e: the error (the OpenAI envelope)
 * @acao: the Access-Control-Allow-Origin value, "" for none
 *
 * For the moments libmicrohttpd cannot answer: it queues a response only
 * once the headers are in and before the body or after all of it
 * (MHD_queue_response() refuses in between), and none for a connection
 * whose headers never came. "Connection: close" is sent; the caller
 * makes libmicrohttpd close the connection right after. Non-blocking:
 * what the socket buffer cannot take is dropped.
 */
void http_raw_error(int fd, const struct api_error *e, const char *acao);

#endif
