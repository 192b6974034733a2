// SPDX-License-Identifier: MIT
/*
 * GET /metrics: Prometheus text exposition format 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/). The HTTP
 * layer counts requests by status code; everything about generation
 * (sessions, queue, tokens, TTFT and TPOT histograms, prefix cache,
 * micro-batches, per-card busy fractions) comes from one
 * engine_get_stats() snapshot, so the figures agree with each other.
 * With a drafter (--spec), the speculative decoding counters come from the
 * same snapshot, labelled with the drafter, and under vLLM's names
 * (vllm:spec_decode_num_drafts_total and _num_draft_tokens_total,
 * _num_accepted_tokens_total) for dashboards made for vLLM.
 * The cards' own counters (memory, contexts, resets, per-queue jobs and
 * busy time, temperature, power) come from the driver's generic netlink
 * family through userspace/smi, rendered by the same code as
 * `rk1828-smi --json` (smi_metrics()), so both show the same names and
 * values; they are left out when the driver is not loaded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "smi.h"
#include "smi_format.h"

void metrics_observe(struct srv *s, int status)
{
	pthread_mutex_lock(&s->lock);
	if (status >= 100 && status < 600)
		s->by_status[status]++;
	pthread_mutex_unlock(&s->lock);
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void counter(FILE *f, const char *name, const char *help, unsigned long long v)
{
	head(f, name, "counter", help);
	fprintf(f, "%s %llu\n", name, v);
}

static void gauge(FILE *f, const char *name, const char *help, double v)
{
	head(f, name, "gauge", help);
	fprintf(f, "%s %g\n", name, v);
}

/* An engine histogram (cumulative counts, ms) as seconds. */
static void hist(FILE *f, const char *name, const char *help, const struct engine_hist *h)
{
	int i;

	head(f, name, "histogram", help);
	for (i = 0; i < ENGINE_HIST_BUCKETS; i++)
		fprintf(f, "%s_bucket{le=\"%g\"} %llu\n", name, engine_hist_le_ms[i] / 1000.0,
			(unsigned long long)h->count[i]);
	fprintf(f, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.6f\n%s_count %llu\n", name,
		(unsigned long long)h->total, name, h->sum_ms / 1000.0, name,
		(unsigned long long)h->total);
}

static void http_part(FILE *f, struct srv *s)
{
	uint64_t by_status[600];
	int i;

	pthread_mutex_lock(&s->lock);
	memcpy(by_status, s->by_status, sizeof(by_status));
	pthread_mutex_unlock(&s->lock);
	head(f, "rk1828_requests_total", "counter", "HTTP requests answered, by status code");
	for (i = 100; i < 600; i++)
		if (by_status[i])
			fprintf(f, "rk1828_requests_total{status=\"%d\"} %llu\n", i,
				(unsigned long long)by_status[i]);
}

static void engine_part(FILE *f, struct srv *s, const struct engine_stats *st)
{
	int i;

	head(f, "rk1828_engine_requests_total", "counter",
	     "generation requests finished by the engine, by how they ended");
	for (i = ENGINE_FINISH_STOP; i <= ENGINE_FINISH_ERROR; i++)
		fprintf(f, "rk1828_engine_requests_total{finish=\"%s\"} %llu\n",
			engine_finish_name(i), (unsigned long long)st->requests[i]);
	counter(f, "rk1828_prompt_tokens_total", "prompt tokens of the requests started",
		st->prompt_tokens);
	counter(f, "rk1828_cached_tokens_total",
		"prompt tokens taken from the prefix cache (not evaluated again)", st->cached_tokens);
	counter(f, "rk1828_generated_tokens_total", "tokens generated", st->completion_tokens);
	hist(f, "rk1828_ttft_seconds", "time to first token of finished requests (from submit)",
	     &st->ttft);
	hist(f, "rk1828_tpot_seconds", "time per output token after the first, per request",
	     &st->tpot);
	gauge(f, "rk1828_sessions_active", "requests holding a session slot", st->active);
	gauge(f, "rk1828_sessions_queued", "requests waiting for a slot", st->queued);
	gauge(f, "rk1828_sessions_slots", "session slots (--parallel, after the planner)",
	      st->n_slots);
	counter(f, "rk1828_prefix_cache_hits_total", "requests that reused cached KV",
		st->prefix_hits);
	counter(f, "rk1828_prefix_cache_misses_total", "requests that found no cached prefix",
		st->prefix_misses);
	counter(f, "rk1828_microbatches_total", "micro-batches submitted to the cards", st->steps);
	counter(f, "rk1828_microbatch_tokens_total", "tokens in those micro-batches",
		st->batch_tokens);
	counter(f, "rk1828_card_jobs_total", "card jobs submitted", st->jobs);
	head(f, "rk1828_card_busy_ratio", "gauge",
	     "fraction of the time since the load each card of the plan was executing");
	for (i = 0; i < st->n_cards && i < ENGINE_MAX_CARDS; i++)
		fprintf(f, "rk1828_card_busy_ratio{card=\"%d\"} %.4f\n",
			i < s->n_cards ? s->card_ids[i] : i, st->card_busy[i]);
	gauge(f, "rk1828_uptime_seconds", "seconds since the engine started", st->uptime_s);
}

/* One counter sample labelled with the drafter, after its HELP and TYPE. */
static void spec_counter(FILE *f, const char *name, const char *help, const char *drafter,
			 uint64_t v)
{
	head(f, name, "counter", help);
	fprintf(f, "%s{drafter=\"%s\"} %llu\n", name, drafter, (unsigned long long)v);
}

/*
 * Speculative decoding, only when the engine has a drafter: tokens drafted
 * and verified, accepted, and verify passes, per drafter (one per engine)
 * and under vLLM's unlabelled names (a vLLM "draft" is one verify pass).
 */
static void spec_part(FILE *f, const struct engine_stats *st)
{
	const char *d = spec_name(st->spec);

	if (st->spec == SPEC_NONE)
		return;
	spec_counter(f, "rk1828_spec_draft_tokens_total",
		     "speculative decoding: drafted tokens verified by the target model", d,
		     st->draft_tokens);
	spec_counter(f, "rk1828_spec_accepted_tokens_total",
		     "speculative decoding: of the drafted tokens, accepted", d, st->draft_accepted);
	spec_counter(f, "rk1828_spec_verify_passes_total",
		     "speculative decoding: verify passes (a decode token and its drafts)", d,
		     st->verify_passes);
	counter(f, "vllm:spec_decode_num_drafts_total", "verify passes (vLLM's drafts)",
		st->verify_passes);
	counter(f, "vllm:spec_decode_num_draft_tokens_total", "drafted tokens verified",
		st->draft_tokens);
	counter(f, "vllm:spec_decode_num_accepted_tokens_total", "drafted tokens accepted",
		st->draft_accepted);
}

/* The driver's view of every card (all processes' jobs, not only ours). */
static void cards_part(FILE *f)
{
	struct smi_card *cards;
	struct smi *nl;
	int n;

	if (smi_open(&nl))
		return;
	if (!smi_dump(nl, &cards, &n)) {
		smi_metrics(f, cards, n);
		free(cards);
	}
	smi_close(nl);
}

char *metrics_render(struct srv *s, size_t *len)
{
	int state = atomic_load(&s->state);
	bool loaded = state == SRV_READY || state == SRV_DRAINING;
	bool ready = state == SRV_READY;
	struct engine_stats st;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	if (loaded && s->e) {
		engine_get_stats(s->e, &st);
		ready = ready && !st.failed;
	}
	gauge(f, "rk1828_ready", "1 when the model is loaded and requests are served", ready);
	gauge(f, "rk1828_draining",
	      "1 while draining (SIGUSR1): running requests finish, new ones get 503",
	      state == SRV_DRAINING);
	http_part(f, s);
	if (loaded && s->e) {
		engine_part(f, s, &st);
		spec_part(f, &st);
		metrics_gateway(f, &st);
	}
	cards_part(f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
