// SPDX-License-Identifier: MIT
/*
 * metrics_dump: what the server's GET /metrics answers before a model is
 * loaded (rk1828_ready 0, the request counts and the driver's card
 * families), printed through the server's own metrics_render(), for
 * comparing with rk1828-smi --json in the guest (tests/e2e/smi.sh)
 * without loading a model. Exit 1 when rendering failed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "metrics.h"

int main(void)
{
	struct srv s = { 0 };
	size_t len;
	char *txt;

	pthread_mutex_init(&s.lock, NULL);
	atomic_store(&s.state, SRV_LOADING);
	txt = metrics_render(&s, &len);
	if (!txt) {
		fprintf(stderr, "metrics_dump: metrics_render failed\n");
		return 1;
	}
	fwrite(txt, 1, len, stdout);
	free(txt);
	return 0;
}
