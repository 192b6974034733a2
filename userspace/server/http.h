/* SPDX-License-Identifier: MIT */
/*
 * The HTTP layer's life cycle (http.c), as serve.c drives it: listen,
 * stop taking connections, cancel what runs, wait, stop.
 */
#ifndef RK_SERVER_HTTP_H
#define RK_SERVER_HTTP_H

#include <stddef.h>

#include "srv.h"

/**
 * http_start() - listen on s->o.host:s->o.port (0: any free port, written
 * back) and start the monitor thread and the response store.
 * Return: 0, or -1 with @err (@errlen bytes).
 */
int http_start(struct srv *s, char *err, size_t errlen);

/** http_quiesce() - stop accepting connections; the open ones go on. */
void http_quiesce(struct srv *s);

/** http_cancel_all() - cancel every generation in flight (shutdown: 503). */
void http_cancel_all(struct srv *s);

/**
 * http_wait_idle() - wait until no generation is in flight or @timeout_ms
 * passed. Return: the generations still in flight (0: idle).
 */
int http_wait_idle(struct srv *s, int timeout_ms);

/**
 * http_running() - the generations in flight: those not yet answered,
 * without the answered ones that wait to be reaped (which http_wait_idle()
 * still counts until the monitor frees them). Takes @s->lock.
 */
int http_running(struct srv *s);

/** http_stop() - stop the daemon and the monitor, free the store (idempotent). */
void http_stop(struct srv *s);

#endif
