// SPDX-License-Identifier: MIT
/*
 * GET /metrics: Prometheus text exposition format 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/). HTTP-side
 * counters are kept here; sessions, prefix cache and card busy fractions
 * come from engine_get_stats().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

/* Upper bounds of the histogram buckets, seconds (the last is +Inf). */
static const double hist_le[SRV_HIST_N] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
};

static void hist_add(struct srv_hist *h, double sec)
{
	int i;

	for (i = 0; i < SRV_HIST_N && sec > hist_le[i]; i++)
		;
	h->count[i]++;
	h->sum += sec;
	h->n++;
}

void metrics_observe(struct srv *s, int status, const struct engine_usage *u,
		     const struct engine_timing *t, bool generated)
{
	struct srv_metrics *m = &s->metrics;

	pthread_mutex_lock(&s->lock);
	if (status >= 100 && status < 600)
		m->by_status[status]++;
	if (generated) {
		m->prompt_tokens += u->prompt_tokens;
		m->generated_tokens += u->completion_tokens;
		m->cached_tokens += u->cached_tokens;
		if (u->completion_tokens > 0)
			hist_add(&m->ttft, t->ttft_ms / 1000.0);
		if (u->completion_tokens > 1)
			hist_add(&m->tpot, (t->total_ms - t->ttft_ms) / 1000.0 /
				 (u->completion_tokens - 1));
	}
	pthread_mutex_unlock(&s->lock);
}

static void hist_print(FILE *f, const char *name, const char *help, const struct srv_hist *h)
{
	uint64_t cum = 0;
	int i;

	fprintf(f, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	for (i = 0; i < SRV_HIST_N; i++) {
		cum += h->count[i];
		fprintf(f, "%s_bucket{le=\"%g\"} %llu\n", name, hist_le[i], (unsigned long long)cum);
	}
	cum += h->count[SRV_HIST_N];
	fprintf(f, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.6f\n%s_count %llu\n", name,
		(unsigned long long)cum, name, h->sum, name, (unsigned long long)h->n);
}

static void counter(FILE *f, const char *name, const char *help, unsigned long long v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name, v);
}

static void gauge(FILE *f, const char *name, const char *help, double v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n%s %g\n", name, help, name, name, v);
}

char *metrics_render(struct srv *s, size_t *len)
{
	struct engine_stats st;
	struct srv_metrics m;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int i;

	if (!f)
		return NULL;
	memset(&st, 0, sizeof(st));
	if (s->e && atomic_load(&s->state) == SRV_READY)
		engine_get_stats(s->e, &st);
	pthread_mutex_lock(&s->lock);
	m = s->metrics;
	pthread_mutex_unlock(&s->lock);

	gauge(f, "rk1828_ready", "1 when the model is loaded and requests are served",
	      atomic_load(&s->state) == SRV_READY);
	fprintf(f, "# HELP rk1828_requests_total HTTP requests by status code\n"
		"# TYPE rk1828_requests_total counter\n");
	for (i = 100; i < 600; i++)
		if (m.by_status[i])
			fprintf(f, "rk1828_requests_total{status=\"%d\"} %llu\n", i,
				(unsigned long long)m.by_status[i]);
	counter(f, "rk1828_prompt_tokens_total", "prompt tokens of finished requests",
		m.prompt_tokens);
	counter(f, "rk1828_generated_tokens_total", "tokens generated for finished requests",
		m.generated_tokens);
	counter(f, "rk1828_cached_tokens_total", "prompt tokens served from the prefix cache",
		m.cached_tokens);
	hist_print(f, "rk1828_ttft_seconds", "time to first token (from submit)", &m.ttft);
	hist_print(f, "rk1828_tpot_seconds", "time per output token after the first", &m.tpot);
	gauge(f, "rk1828_sessions_active", "requests holding a session slot", st.active);
	gauge(f, "rk1828_sessions_queued", "requests waiting for a slot", st.queued);
	gauge(f, "rk1828_sessions_slots", "session slots (--parallel)", s->n_slots);
	counter(f, "rk1828_prefix_cache_hits_total", "requests that reused cached KV",
		st.prefix_hits);
	counter(f, "rk1828_prefix_cache_misses_total", "requests with no cached prefix",
		st.prefix_misses);
	fprintf(f, "# HELP rk1828_card_busy_ratio fraction of time each card was executing\n"
		"# TYPE rk1828_card_busy_ratio gauge\n");
	for (i = 0; i < st.n_cards && i < ENGINE_MAX_CARDS; i++)
		fprintf(f, "rk1828_card_busy_ratio{card=\"%d\"} %.4f\n", i, st.card_busy[i]);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
