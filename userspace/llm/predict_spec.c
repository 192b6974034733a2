// SPDX-License-Identifier: MIT
/*
 * The prediction of speculative decoding (predict.h, plan --predict
 * --spec K --accept A): a verify pass carries the decode token and K
 * drafts through the cards as one micro-batch, every row's logits back,
 * and yields (1 - A^(K+1)) / (1 - A) tokens on average (Leviathan et al.
 * 2023, "Fast Inference from Transformers via Speculative Decoding",
 * eq. 1, for drafts accepted independently with probability A). Its time
 * comes from the same pipeline simulation as the plain decode figures
 * (predict.c, the card cost function), so the two are comparable:
 * decode is bandwidth-bound, a pass reads every weight once whether it
 * carries 1 token or K + 1, and the ratio of the two passes' times is
 * the "cost of a verify pass" (userspace/doc/timing.rst).
 */
#include <math.h>

#include "predict.h"

double predict_spec_tokens_per_pass(double a, uint32_t k)
{
	if (!(a > 0))
		return 1;
	if (a >= 1)
		return k + 1.0;
	return (1 - pow(a, k + 1.0)) / (1 - a);
}

double psim_spec_decode(struct psim *s, double t, uint32_t pos, uint32_t n, uint32_t k,
			double a, double *made)
{
	double e = predict_spec_tokens_per_pass(a, k), got = 0;

	while (got < n) {
		struct cost_batch b = { 0 };

		cost_batch_add_seq(&b, k + 1, pos + (uint32_t)got, k + 1);
		t = psim_submit(s, t, &b);
		got += e;
	}
	if (made)
		*made = got;
	return t;
}

int predict_spec(const struct cost_layer *layers, uint32_t n_layers,
		 const struct cost_head *head, const struct plan *plan,
		 const struct predict_opts *o, struct prediction *out)
{
	uint32_t k = o->spec_k;
	double t, t0, made, e;
	struct psim *s;

	if (k && o->bucket && k > o->bucket - 1)
		k = o->bucket - 1;
	out->spec_k = k;
	out->spec_accept = o->spec_accept;
	out->spec_tokens_per_pass = out->spec_verify_ratio = out->spec_decode_tok_s = NAN;
	if (!k)
		return 0;
	e = predict_spec_tokens_per_pass(o->spec_accept, k);
	out->spec_tokens_per_pass = e;
	if ((uint64_t)PREDICT_PROMPT + PREDICT_GEN + k > o->n_ctx)
		return 0;
	s = psim_create(layers, n_layers, head, plan, o);
	if (!s)
		return -1;
	t0 = psim_prefill(s, PREDICT_PROMPT, o->bucket);
	t = psim_spec_decode(s, t0, PREDICT_PROMPT, PREDICT_GEN, k, o->spec_accept, &made);
	psim_destroy(s);
	out->spec_decode_tok_s = made / ((t - t0) / 1e9);
	/* Passes made: made / e; the mean pass against the mean decode step. */
	if (!isnan(out->tpot_ms) && out->tpot_ms > 0)
		out->spec_verify_ratio = (t - t0) / (made / e) / 1e6 / out->tpot_ms;
	return 0;
}
