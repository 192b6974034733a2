// SPDX-License-Identifier: MIT
/*
 * rk1828-llm plan: the sizes the plan was made at, as the plan line says
 * them and as the "sizes" object of --json (sessions, context, bucket,
 * K/V type, the state snapshots of a hybrid model and how many a session
 * the engine wanted), so that what is printed is what run, chat and serve
 * run (the engine takes these sizes, engine_opts.sizes).
 */
#include "cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "quant.h"

/* Snapshot blocks a session of @sz. */
static uint32_t snaps_each(const struct plan_sizes *sz)
{
	return sz->n_seq ? sz->n_snap / sz->n_seq : 0;
}

void plan_print_snaps(FILE *f, const struct session *S)
{
	uint32_t each = snaps_each(&S->sizes);

	if (!S->sizes.n_snap)
		return;
	fprintf(f, ", %u state snapshots", S->sizes.n_snap);
	if (each < S->fit.snaps_per_seq)
		fprintf(f, " (%u a session, %u wanted: fewer prefix-cache checkpoints)", each,
			S->fit.snaps_per_seq);
}

char *plan_json_sizes(const char *js, const struct session *S)
{
	const struct plan_sizes *sz = &S->sizes;
	json_t *o = json_loads(js, 0, NULL), *s;
	char *out;

	s = json_pack("{s:I, s:I, s:I, s:s, s:I, s:I, s:I}", "sessions", (json_int_t)sz->n_seq,
		      "ctx", (json_int_t)sz->n_ctx, "bucket", (json_int_t)sz->bucket,
		      "kv_type", quant_kv_type_name(sz->kv_type), "state_snapshots",
		      (json_int_t)sz->n_snap, "snapshots_per_session",
		      (json_int_t)snaps_each(sz), "snapshots_wanted_per_session",
		      (json_int_t)S->fit.snaps_per_seq);
	if (!o || !s || json_object_set_new(o, "sizes", s)) {
		json_decref(o);
		return NULL;
	}
	out = json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(10));
	json_decref(o);
	return out;
}
