// SPDX-License-Identifier: MIT
/*
 * The shared state of a running server (srv.h): what the loader and
 * serve_main() write for /health, /metrics and the log to read.
 */
#include <stdio.h>

#include "srv.h"

void srv_set_progress(struct srv *s, int permille, const char *what)
{
	pthread_mutex_lock(&s->lock);
	snprintf(s->load_what, sizeof(s->load_what), "%s", what);
	pthread_mutex_unlock(&s->lock);
	atomic_store(&s->load_permille, permille);
}
