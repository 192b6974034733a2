/* SPDX-License-Identifier: MIT */
/*
 * HAProxy's agent check on its own TCP port (--agent-port; agent.c).
 */
#ifndef RK_SERVER_AGENT_H
#define RK_SERVER_AGENT_H

#include <stddef.h>

#include "srv.h"

/**
 * agent_reply() - the one line answered for @st (enum srv_state) with the
 * engine snapshot @es (NULL while loading) and the queue limit @queue_max
 * into @buf (NUL-terminated, at most @n bytes). Return: its length.
 */
size_t agent_reply(int st, const struct engine_stats *es, int queue_max, char *buf, size_t n);

/**
 * agent_start() - listen on s->o.host:s->o.agent_port (0: any free port,
 * written back) and answer from a thread of its own.
 * Return: 0, or -1 with @err (@errlen bytes).
 */
int agent_start(struct srv *s, char *err, size_t errlen);

/** agent_stop() - close the listener (NULL-safe, idempotent). */
void agent_stop(struct srv *s);

#endif
