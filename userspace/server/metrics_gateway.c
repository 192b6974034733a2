// SPDX-License-Identifier: MIT
/*
 * The /metrics families that load balancers and Kubernetes gateways score
 * model servers by (issue 25), beside our rk1828_* ones: the Gateway API
 * Inference Extension's model-server protocol names vLLM's gauges for
 * queued requests, running requests and KV-cache utilisation, and llm-d's
 * prefix-aware scorers read vLLM's prefix-cache token counters. Every value
 * comes from the same engine_get_stats() snapshot as the rest of the page.
 *
 * KV-cache utilisation: the engine reserves one KV cache per session slot
 * (the planner sizes @n_slots caches of the full context), so the fraction
 * of the KV memory in use is the fraction of slots held, active / n_slots.
 */
#include <stdio.h>

#include "metrics.h"

/* One family with its HELP and TYPE lines and an unlabelled sample. */
static void family(FILE *f, const char *name, const char *type, const char *help, double v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type, name, v);
}

/**
 * metrics_gateway() - append the gateway-compatible families to @f
 * @f: the /metrics text being written
 * @st: the engine snapshot the rest of the page was rendered from
 *
 * Writes vllm:num_requests_waiting (requests queued for a slot),
 * vllm:num_requests_running (requests holding a slot),
 * vllm:kv_cache_usage_perc and its older name vllm:gpu_cache_usage_perc
 * (KV caches in use, a fraction 0..1, despite the name), and the counters
 * vllm:prefix_cache_queries_total (prompt tokens looked up in the prefix
 * cache) and vllm:prefix_cache_hits_total (of those, tokens served from
 * it). No errors: a failed write shows at fclose() of the memstream.
 */
void metrics_gateway(FILE *f, const struct engine_stats *st)
{
	double kv = st->n_slots > 0 ? (double)st->active / st->n_slots : 0;

	family(f, "vllm:num_requests_waiting", "gauge", "requests waiting for a slot (queued)",
	       st->queued);
	family(f, "vllm:num_requests_running", "gauge", "requests holding a slot (running)",
	       st->active);
	family(f, "vllm:kv_cache_usage_perc", "gauge",
	       "fraction of the KV caches in use (slots held / slots), 0..1", kv);
	family(f, "vllm:gpu_cache_usage_perc", "gauge",
	       "the same fraction under vLLM's older name, 0..1", kv);
	family(f, "vllm:prefix_cache_queries_total", "counter",
	       "prompt tokens looked up in the prefix cache", (double)st->prompt_tokens);
	family(f, "vllm:prefix_cache_hits_total", "counter",
	       "prompt tokens served from the prefix cache", (double)st->cached_tokens);
}
