/* SPDX-License-Identifier: MIT */
/*
 * GET /metrics (metrics.c, metrics_gateway.c): Prometheus text of the
 * server, the engine and the driver's card counters.
 */
#ifndef RK_SERVER_METRICS_H
#define RK_SERVER_METRICS_H

#include <stddef.h>
#include <stdio.h>

#include "srv.h"

/** metrics_observe() - count a request answered with @status (takes s->lock). */
void metrics_observe(struct srv *s, int status);

/** metrics_render() - the /metrics text (malloc'ed, *@len bytes), or NULL. */
char *metrics_render(struct srv *s, size_t *len);

/** metrics_gateway() - the vllm:* families gateways score servers by, of @st, to @f. */
void metrics_gateway(FILE *f, const struct engine_stats *st);

#endif
