// SPDX-License-Identifier: MIT
/*
 * Engine, structured outputs: a request's JSON schema (engine_request.
 * schema) applied at sampling time on the engine thread. The sampled
 * token is checked first (one jm_try() of its bytes); only when the
 * matcher refuses it is the vocabulary scanned (jm_vocab_mask(): every
 * token that cannot come next masked to -inf in a scratch copy of the
 * logits) and the request's sampler draws again from that copy, so
 * greedy decoding picks the most likely valid token and sampling keeps
 * the model's relative probabilities among the valid ones (llama.cpp's
 * grammar sampling does the same).
 */
#include "engine_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "jsonvocab.h"

/**
 * struct eng_jvocab - the engine's constrained-decoding scratch
 * @v: the vocabulary's bytes (built at the first JSON request)
 * @masked: n_vocab floats: the masked logits of the last scan
 */
struct eng_jvocab {
	struct jm_vocab *v;
	float *masked;
};

void eng_json_free(struct engine *e)
{
	if (!e->jv)
		return;
	jm_vocab_free(e->jv->v);
	free(e->jv->masked);
	free(e->jv);
	e->jv = NULL;
}

static int jv_build(struct engine *e)
{
	e->jv = calloc(1, sizeof(*e->jv));
	if (!e->jv)
		return -ENOMEM;
	e->jv->v = jm_vocab_new(e->tok);
	e->jv->masked = malloc((size_t)e->m->n_vocab * sizeof(float));
	if (!e->jv->v || !e->jv->masked) {
		eng_json_free(e);
		return -ENOMEM;
	}
	return 0;
}

int32_t eng_json_pick(struct engine *e, struct engine_req *q, const float *logits, int32_t tok,
		      const float **used, const char **why)
{
	int32_t best;

	*used = logits;
	if (!e->jv && jv_build(e)) {
		*why = "out of host memory";
		return -1;
	}
	if (!jm_vocab_ok(e->jv->v, q->jm, tok)) {
		if (!jm_vocab_mask(e->jv->v, q->jm, logits, (int)e->m->n_vocab, e->jv->masked, &best)) {
			*why = "no token of the vocabulary continues the JSON document";
			return -1;
		}
		tok = sampler_sample(q->smp, e->jv->masked);
		if (tok < 0 || (uint32_t)tok >= e->m->n_vocab || e->jv->masked[tok] == -INFINITY)
			tok = best;	/* never seen: the sampler draws only finite logits */
		*used = e->jv->masked;
	}
	jm_vocab_take(e->jv->v, q->jm, tok);
	return tok;
}
