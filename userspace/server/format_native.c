// SPDX-License-Identifier: MIT
/*
 * Answers of POST /completion in llama-server's native schema: the result
 * object ({content, tokens, stop, stop_type, generation_settings, timings,
 * ...}) and the stream's chunks ("data: {...}\n\n", no "data: [DONE]": the
 * chunk with "stop": true is the last). Reference: llama.cpp
 * tools/server/README.md, "POST /completion".
 */
#include <stdlib.h>
#include <string.h>

#include "api_native.h"
#include "gen.h"

/* A completion_probabilities entry: {id, token, logprob, bytes, top_logprobs}. */
static json_t *prob_entry(const struct gen *g, const struct engine_logprob *l)
{
	json_t *o = fmt_token_json(g, l->id, l->logprob, true), *top, *t;
	int k;

	json_object_set_new(o, "id", json_integer(l->id));
	top = json_object_get(o, "top_logprobs");
	for (k = 0; k < l->n_top; k++) {
		t = fmt_token_json(g, l->top[k].id, l->top[k].logprob, false);
		json_object_set_new(t, "id", json_integer(l->top[k].id));
		json_array_append_new(top, t);
	}
	return o;
}

static json_t *ids_json(const int32_t *ids, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(ids[i]));
	return a;
}

void native_delta(struct gen *g, const struct engine_event *ev)
{
	struct native_info *ni = g->nat;
	json_t *probs = NULL, *c;
	int i;

	gen_append(&g->text, &g->text_len, &g->text_cap, ev->text, ev->len);
	if (ni->n_ids + ev->n_ids > ni->cap_ids) {
		int cap = ni->cap_ids ? ni->cap_ids : 64;
		int32_t *p;

		while (cap < ni->n_ids + ev->n_ids)
			cap *= 2;
		p = realloc(ni->ids, (size_t)cap * sizeof(*p));
		if (!p)
			return;	/* out of memory: the ids are lost, never the heap */
		ni->ids = p;
		ni->cap_ids = cap;
	}
	if (ev->n_ids)
		memcpy(ni->ids + ni->n_ids, ev->ids, (size_t)ev->n_ids * sizeof(*ev->ids));
	ni->n_ids += ev->n_ids;
	if (ni->n_probs && ev->logprobs && ev->n_ids) {
		probs = json_array();
		for (i = 0; i < ev->n_ids; i++)
			json_array_append_new(probs, prob_entry(g, &ev->logprobs[i]));
		if (!g->lp)
			g->lp = json_array();
		json_array_extend(g->lp, probs);
	}
	if (!g->stream || (!ev->len && !ev->n_ids)) {
		json_decref(probs);
		return;
	}
	c = json_pack("{s:i, s:s%, s:o, s:b, s:i, s:i, s:i}", "index", ni->index, "content",
		      ev->text ? ev->text : "", ev->len, "tokens", ids_json(ev->ids, ev->n_ids),
		      "stop", 0, "id_slot", -1, "tokens_predicted", ev->usage.completion_tokens,
		      "tokens_evaluated", ev->usage.prompt_tokens);
	if (probs)
		json_object_set_new(c, "completion_probabilities", probs);
	fmt_sse(g, NULL, c);
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0.0;
}

/* llama-server's timings: prompt = the tokens evaluated (not from the cache). */
static json_t *timings(const struct gen *g)
{
	const struct engine_usage *u = &g->usage;
	const struct engine_timing *t = &g->timing;
	int pn = u->prompt_tokens - u->cached_tokens, dn = u->completion_tokens;

	json_t *o = json_pack("{s:i, s:i, s:f, s:f, s:f, s:i, s:f, s:f, s:f}", "cache_n",
			 u->cached_tokens, "prompt_n", pn, "prompt_ms", t->prefill_ms,
			 "prompt_per_token_ms", ratio(t->prefill_ms, pn),
			 "prompt_per_second", ratio(1000.0 * pn, t->prefill_ms), "predicted_n", dn,
			 "predicted_ms", t->decode_ms, "predicted_per_token_ms",
			 ratio(t->decode_ms, dn), "predicted_per_second",
			 ratio(1000.0 * dn, t->decode_ms));

	/* As llama-server: the drafts only when the request speculated. */
	if (o && u->draft_n) {
		json_object_set_new(o, "draft_n", json_integer(u->draft_n));
		json_object_set_new(o, "draft_n_accepted", json_integer(u->draft_n_accepted));
	}
	return o;
}

static const char *stop_type(const struct gen *g)
{
	if (g->finish == ENGINE_FINISH_LENGTH)
		return "limit";
	return g->stop_word[0] ? "word" : "eos";
}

/*
 * The result object; a stream's last chunk has the content and tokens
 * already sent, so its own are empty (as llama-server sends them).
 */
static json_t *result(const struct gen *g)
{
	const struct native_info *ni = g->nat;
	const char *text = g->stream || !g->text ? "" : g->text;
	size_t len = g->stream ? 0 : g->text_len;
	json_t *r;

	r = json_pack("{s:i, s:s%, s:o, s:i, s:b, s:s, s:i, s:i, s:O, s:s, s:b, s:b, s:s, s:s, s:i, s:o}",
		      "index", ni->index, "content", text, len, "tokens",
		      ni->return_tokens && !g->stream ? ids_json(ni->ids, ni->n_ids) : json_array(),
		      "id_slot", -1, "stop", 1, "model", g->s->model_id,
		      "tokens_predicted", g->usage.completion_tokens,
		      "tokens_evaluated", g->usage.prompt_tokens, "generation_settings",
		      ni->settings, "prompt", ni->prompt, "has_new_line",
		      g->text && memchr(g->text, '\n', g->text_len) != NULL, "truncated", 0,
		      "stop_type", stop_type(g), "stopping_word", g->stop_word,
		      "tokens_cached", g->usage.prompt_tokens + g->usage.completion_tokens,
		      "timings", timings(g));
	if (r && ni->n_probs && !g->stream)
		json_object_set_new(r, "completion_probabilities",
				    g->lp ? json_incref(g->lp) : json_array());
	return r && ni->fields ? native_filter(r, ni->fields) : r;
}

void native_done(struct gen *g)
{
	if (!g->stream)
		return;
	if (g->finish == ENGINE_FINISH_ERROR || g->finish == ENGINE_FINISH_CANCELLED) {
		fmt_sse(g, NULL, json_pack("{s:{s:s, s:s, s:n, s:n}}", "error", "message",
				  g->shutdown ? "the server is shutting down" :
				  g->error[0] ? g->error : "generation failed", "type",
				  g->shutdown ? "unavailable_error" : "server_error", "param", "code"));
		return;
	}
	fmt_sse(g, NULL, result(g));
}

char *native_body(struct gen **g, int n, size_t *len)
{
	json_t *o = n == 1 ? result(g[0]) : json_array();
	char *s;
	int i;

	for (i = 0; n > 1 && i < n; i++)
		json_array_append_new(o, result(g[i]));
	s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	*len = s ? strlen(s) : 0;
	return s;
}
