// SPDX-License-Identifier: MIT
/*
 * Both splits side by side (predict_split.h): plan, predict and report
 * the split asked for and the other one.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "predict_split.h"

int predict_split_run(const struct llm_model *m, const struct plan_sizes *sz,
		      const struct plan *given, enum plan_split split,
		      const struct plan_timing *t, const struct predict_opts *po,
		      struct predict_split *out, char *err, size_t errlen)
{
	uint64_t free_b[PLAN_MAX_CARDS];
	int ids[PLAN_MAX_CARDS], k;

	memset(out, 0, sizeof(*out));
	out->split = split;
	for (k = 0; k < given->n_segs; k++) {
		free_b[k] = given->seg[k].free;
		ids[k] = given->seg[k].card_id;
	}
	if (plan_model_split(m, sz, split, t, given->n_segs, free_b, ids, &out->plan, err,
			     errlen))
		return -1;
	for (k = 0; k < out->plan.n_segs; k++)	/* the array indices of @given's cards */
		out->plan.seg[k].card = given->seg[k].card;
	if (predict_run(m, &out->plan, po, &out->pr, err, errlen))
		return -1;
	if (plan_prefill_ms(m, &out->plan, sz, t, out->prefill_ms)) {
		snprintf(err, errlen, "predict: out of memory or no card profile");
		return -1;
	}
	for (k = 0; k < out->plan.n_segs; k++)
		if (out->prefill_ms[k] > out->max_prefill_ms)
			out->max_prefill_ms = out->prefill_ms[k];
	return 0;
}

static void print_one(FILE *f, const struct predict_split *s, const char *what)
{
	char str[PLAN_STR_MAX];
	int k;

	plan_format(&s->plan, str, sizeof(str));
	fprintf(f, "  %s split (%s): %s\n    card prefill:", plan_split_name(s->split), what, str);
	for (k = 0; k < s->plan.n_segs; k++)
		fprintf(f, "%s card%d %.1f ms", k ? "," : "", s->plan.seg[k].card_id,
			s->prefill_ms[k]);
	fprintf(f, " (max %.1f ms)\n    prefill ", s->max_prefill_ms);
	if (isnan(s->pr.prefill_tok_s))
		fprintf(f, "-");
	else
		fprintf(f, "%.1f tok/s", s->pr.prefill_tok_s);
	if (isnan(s->pr.decode_tok_s))
		fprintf(f, ", decode -");
	else
		fprintf(f, ", decode %.2f tok/s", s->pr.decode_tok_s);
	if (!isnan(s->pr.ttft_ms[1]))
		fprintf(f, ", TTFT %u tokens %.0f ms", predict_ttft_prompt(1), s->pr.ttft_ms[1]);
	fprintf(f, "\n");
}

void predict_split_print(FILE *f, const struct predict_split *run,
			 const struct predict_split *other)
{
	fprintf(f, "splits: prefill of %d tokens per card, LM head included (--split)\n",
		PREDICT_PROMPT);
	print_one(f, run, "this plan");
	print_one(f, other, "the other");
}

/* @s's predict_json() object with its "card_prefill_ms"; NULL: out of memory. */
static json_t *split_obj(const struct predict_split *s)
{
	char *js = predict_json(&s->plan, &s->pr);
	json_t *o = js ? json_loads(js, 0, NULL) : NULL, *ms = json_array();
	int k;

	free(js);
	if (!o || !ms) {
		json_decref(o);
		json_decref(ms);
		return NULL;
	}
	for (k = 0; k < s->plan.n_segs; k++)
		json_array_append_new(ms, json_real(round(s->prefill_ms[k] * 100.0) / 100.0));
	json_object_set_new(o, "card_prefill_ms", ms);
	return o;
}

char *predict_split_json(const struct predict_split *run, const struct predict_split *other)
{
	json_t *o = split_obj(run), *a = split_obj(run), *b = split_obj(other);
	json_t *splits = json_object();
	char *s = NULL;

	if (o && a && b && splits) {
		json_object_set_new(o, "split", json_string(plan_split_name(run->split)));
		json_object_set_new(splits, plan_split_name(PLAN_SPLIT_BYTES),
				    json_incref(run->split == PLAN_SPLIT_BYTES ? a : b));
		json_object_set_new(splits, plan_split_name(PLAN_SPLIT_TIME),
				    json_incref(run->split == PLAN_SPLIT_TIME ? a : b));
		json_object_set(o, "splits", splits);
		s = json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(10));
	}
	json_decref(o);
	json_decref(a);
	json_decref(b);
	json_decref(splits);
	return s;
}
