// SPDX-License-Identifier: MIT
/*
 * The engine's passes in bench's Chrome trace (bench_passes.h).
 */
#include "bench_passes.h"

#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* The pass of micro-batch @mb (the newest first: collects are in order). */
static struct bench_pass *find(struct bench_passes *ps, uint64_t mb)
{
	size_t i;

	for (i = ps->n; i-- > 0;)
		if (ps->p[i].mb == mb)
			return &ps->p[i];
	return NULL;
}

void bench_passes_rec(void *user, const struct engine_trace *t)
{
	struct bench_passes *ps = user;
	int64_t now = (int64_t)(t->t_ms * 1e6);
	struct bench_pass *p;
	int i;

	if (t->kind == ENGINE_TRACE_COLLECT) {
		p = find(ps, t->mb);
		if (p)
			p->t1 = now;
		return;
	}
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 256;
		struct bench_pass *np = realloc(ps->p, cap * sizeof(*np));

		if (!np) {
			ps->oom = true;
			return;
		}
		ps->p = np;
		ps->cap = cap;
	}
	p = &ps->p[ps->n++];
	memset(p, 0, sizeof(*p));
	p->mb = t->mb;
	p->t0 = now;
	p->n_tok = t->n_tok;
	p->rep = ps->rep;
	for (i = 0; i < t->n_tok; i++) {
		p->k += t->tok[i].draft;
		p->n_decode += t->tok[i].decode && !t->tok[i].draft && !t->tok[i].replay;
	}
}

void bench_passes_write(const struct bench_passes *ps, FILE *f, bool *first, int pid,
			int64_t t0_ns, const char *test)
{
	size_t i;

	fprintf(f, "%s\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":3,"
		"\"args\":{\"name\":\"engine passes: %s\"}}", *first ? "" : ",", pid, test);
	*first = false;
	for (i = 0; i < ps->n; i++) {
		const struct bench_pass *p = &ps->p[i];
		const char *name = p->k ? "verify pass" : p->n_decode ? "decode pass" : "prefill pass";
		int64_t t1 = p->t1 > p->t0 ? p->t1 : p->t0;

		fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"engine\",\"ph\":\"X\",\"pid\":%d,\"tid\":3,"
			"\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"test\":\"%s\",\"rep\":%d,"
			"\"micro-batch\":%llu,\"tokens\":%d,\"k\":%d,\"decode\":%d}}", name, pid,
			(p->t0 - t0_ns) / 1e3, (t1 - p->t0) / 1e3, test, p->rep,
			(unsigned long long)p->mb, p->n_tok, p->k, p->n_decode);
	}
}

void bench_passes_free(struct bench_passes *ps)
{
	free(ps->p);
	memset(ps, 0, sizeof(*ps));
}
