// SPDX-License-Identifier: MIT
/*
 * shape_predict.h: the split on the shape's weight bytes per block plus
 * its F32 K/V cache (or DeltaNet state) for the context, the last card
 * adding the LM head, then the prediction of that plan.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape_predict.h"

static uint64_t layer_bytes(const struct cost_layer *l, uint32_t n_ctx)
{
	uint64_t b = l->small_bytes;
	uint32_t i;

	for (i = 0; i < l->n_mats; i++)
		b += l->mat[i].bytes;
	if (l->mixer == COST_MIX_ATTN)
		b += 2ull * n_ctx * l->n_kv_heads * l->head_dim * l->kv_elt_bytes;
	else
		b += (uint64_t)l->dn_v_heads * l->dn_head_dim * l->dn_head_dim *
		     l->state_elt_bytes;
	return b;
}

static void add(struct shape_prediction *p, double val, const char *fmt, ...)
{
	va_list ap;

	if (p->n == SHAPE_MAX_FIGS)
		return;
	va_start(ap, fmt);
	vsnprintf(p->fig[p->n].key, sizeof(p->fig[p->n].key), fmt, ap);
	va_end(ap);
	p->fig[p->n++].val = val;
}

/*
 * The figures multi-card deployments publish besides predict_run()'s
 * (tests/shapes/vendor-multicard.txt): per card, its share of a decode
 * step at position PREDICT_PROMPT and its rate on one bucket from
 * position 0; the TTFT of a one-bucket prompt; the prefill rate of a
 * 5120-token prompt (only when it fits the context).
 */
static int add_extra(const struct cost_layer *layers, uint32_t n_layers,
		     const struct cost_head *head, const struct predict_opts *po,
		     struct shape_prediction *out)
{
	struct psim *s = psim_create(layers, n_layers, head, &out->plan, po);
	struct cost_batch step = { 0 }, bucket = { 0 };
	int k;

	if (!s)
		return -1;
	cost_batch_add_seq(&step, 1, PREDICT_PROMPT, 1);
	cost_batch_add_seq(&bucket, po->bucket, 0, 0);
	for (k = 0; k < out->plan.n_segs; k++) {
		add(out, psim_stage_ns(s, k, &step) / 1e6, "card%d_step_ms", k);
		add(out, po->bucket / (psim_stage_ns(s, k, &bucket) / 1e9), "card%d_bucket_tok_s", k);
	}
	add(out, psim_prefill(s, po->bucket, po->bucket) / 1e6, "ttft%u_ms", po->bucket);
	psim_destroy(s);
	if (po->n_ctx < 5120)
		return 0;
	s = psim_create(layers, n_layers, head, &out->plan, po);
	if (!s)
		return -1;
	add(out, 5120 / (psim_prefill(s, 5120, po->bucket) / 1e9), "prefill5120_tok_s");
	psim_destroy(s);
	return 0;
}

static void add_main(struct shape_prediction *out)
{
	const struct prediction *pr = &out->pr;
	int i;

	for (i = 0; i < PREDICT_N_TTFT; i++)
		if (!isnan(pr->ttft_ms[i]))
			add(out, pr->ttft_ms[i], "ttft_ms[%u]", predict_ttft_prompt(i));
	add(out, pr->prefill_tok_s, "prefill_tok_s");
	add(out, pr->decode_tok_s, "decode_tok_s");
	add(out, pr->tpot_ms, "tpot_ms");
	for (i = 0; i < PREDICT_N_SESSIONS; i++)
		add(out, pr->aggregate_tok_s[i], "aggregate_decode_tok_s[%u]", predict_sessions(i));
}

int shape_predict(const struct model_shape *s, const struct card_profile *prof,
		  const struct shape_deploy *d, struct shape_prediction *out,
		  char *err, size_t errlen)
{
	struct predict_opts po = { .prof = prof, .link = d->link, .bucket = d->bucket,
				   .n_ctx = d->n_ctx };
	uint64_t free_b[PLAN_MAX_CARDS], *bb;
	struct plan_input in = { 0 };
	struct cost_layer *layers;
	struct cost_head head;
	int i, ret = -1;
	uint32_t l;

	memset(out, 0, sizeof(*out));
	if (d->cards < 1 || d->cards > PLAN_MAX_CARDS || !d->bucket || !s->layers) {
		snprintf(err, errlen, "%s: bad deployment (cards %d, bucket %u)", s->name,
			 d->cards, d->bucket);
		return -1;
	}
	layers = calloc(s->layers, sizeof(*layers));
	bb = calloc(s->layers, sizeof(*bb));
	if (!layers || !bb) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (l = 0; l < s->layers; l++) {
		shape_cost_layer(s, l, &layers[l]);
		bb[l] = layer_bytes(&layers[l], d->n_ctx);
	}
	shape_cost_head(s, &head);
	for (i = 0; i < d->cards; i++)
		free_b[i] = prof->mem_usable_bytes;
	in.n_blocks = (int)s->layers;
	in.block_bytes = bb;
	in.head_bytes = head.bytes + (uint64_t)s->dim * 4;
	in.n_cards = d->cards;
	in.card_free = free_b;
	if (plan_make(&in, &out->plan, err, errlen) ||
	    predict_run_layers(layers, s->layers, &head, &out->plan, &po, &out->pr, err, errlen))
		goto out;
	add_main(out);
	if (add_extra(layers, s->layers, &head, &po, out)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	ret = 0;
out:
	free(layers);
	free(bb);
	return ret;
}

int shape_fig_get(const struct shape_prediction *p, const char *key, double *val)
{
	int i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->fig[i].key, key)) {
			*val = p->fig[i].val;
			return 0;
		}
	return -1;
}
