// SPDX-License-Identifier: MIT
/*
 * Engine, structured outputs: a request's JSON schema (engine_request.
 * schema) applied at sampling time on the engine thread. The sampled
 * token is checked first (one jm_try() of its bytes); only when the
 * matcher refuses it is the vocabulary scanned: a token passes when its
 * first byte is one jm_next_bytes() allows and, if it has more, jm_try()
 * takes them all. The scan masks every other token to -inf in a scratch
 * copy of the logits and the request's sampler draws again from it, so
 * greedy decoding picks the most likely valid token and sampling keeps
 * the model's relative probabilities among valid tokens (llama.cpp's
 * grammar sampling does the same).
 */
#include "engine_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"

/* What a token can be under a schema. */
enum { JV_NEVER, JV_TEXT, JV_EOG };

/**
 * struct eng_jvocab - the vocabulary as bytes, for every JSON request
 * @n: tokens
 * @off: @n + 1 offsets of each token's bytes in @bytes
 * @bytes: the pieces (tok_piece()), concatenated
 * @kind: JV_* per token: special tokens other than end-of-generation and
 *	tokens without text are JV_NEVER
 * @masked: @n floats, the masked logits of the last scan
 */
struct eng_jvocab {
	int n;
	uint32_t *off;
	char *bytes;
	uint8_t *kind;
	float *masked;
};

void eng_json_free(struct engine *e)
{
	if (!e->jv)
		return;
	free(e->jv->off);
	free(e->jv->bytes);
	free(e->jv->kind);
	free(e->jv->masked);
	free(e->jv);
	e->jv = NULL;
}

static int jv_build(struct engine *e)
{
	struct eng_jvocab *v = calloc(1, sizeof(*v));
	size_t cap = 1 << 16, at = 0;
	int i, n = tok_n_vocab(e->tok);

	e->jv = v;
	if (!v)
		return -ENOMEM;
	v->n = n;
	v->off = malloc((size_t)(n + 1) * sizeof(*v->off));
	v->kind = malloc((size_t)n);
	v->masked = malloc((size_t)n * sizeof(*v->masked));
	v->bytes = malloc(cap);
	if (!v->off || !v->kind || !v->masked || !v->bytes)
		goto nomem;
	for (i = 0; i < n; i++) {
		int len = 0;

		v->off[i] = (uint32_t)at;
		if (tok_is_eog(e->tok, i)) {
			v->kind[i] = JV_EOG;
		} else if (tok_is_special(e->tok, i)) {
			v->kind[i] = JV_NEVER;
		} else {
			len = tok_piece(e->tok, i, e->piece, e->piece_cap);
			v->kind[i] = len > 0 ? JV_TEXT : JV_NEVER;
		}
		if (len <= 0)
			continue;
		if (at + (size_t)len > cap) {
			char *b;

			while (at + (size_t)len > cap)
				cap *= 2;
			b = realloc(v->bytes, cap);
			if (!b)
				goto nomem;
			v->bytes = b;
		}
		memcpy(v->bytes + at, e->piece, (size_t)len);
		at += (size_t)len;
	}
	v->off[n] = (uint32_t)at;
	return 0;
nomem:
	eng_json_free(e);
	return -ENOMEM;
}

static bool tok_ok(const struct eng_jvocab *v, struct jm_state *st, int32_t id)
{
	if (id < 0 || id >= v->n)
		return false;
	if (v->kind[id] == JV_EOG)
		return jm_accepting(st);
	return v->kind[id] == JV_TEXT && jm_try(st, v->bytes + v->off[id], v->off[id + 1] - v->off[id]);
}

/*
 * Mask every token @q's matcher refuses: v->masked. Return: tokens left;
 * *@best the most likely of them (lowest id on ties).
 */
static int mask_vocab(struct eng_jvocab *v, struct jm_state *st, const float *logits,
		      int32_t *best)
{
	uint64_t first[4];
	bool whole = jm_accepting(st);
	int i, n_ok = 0;

	jm_next_bytes(st, first);
	*best = -1;
	for (i = 0; i < v->n; i++) {
		uint32_t len = v->off[i + 1] - v->off[i];
		uint8_t b = len ? (uint8_t)v->bytes[v->off[i]] : 0;
		bool ok;

		if (v->kind[i] == JV_EOG)
			ok = whole;
		else
			ok = v->kind[i] == JV_TEXT && (first[b >> 6] >> (b & 63) & 1) &&
			     (len == 1 || jm_try(st, v->bytes + v->off[i], len));
		v->masked[i] = ok ? logits[i] : -INFINITY;
		if (!ok)
			continue;
		n_ok++;
		if (*best < 0 || logits[i] > logits[*best])
			*best = i;
	}
	return n_ok;
}

int32_t eng_json_pick(struct engine *e, struct engine_req *q, const float *logits, int32_t tok,
		      const float **used, const char **why)
{
	struct eng_jvocab *v;
	int32_t best;

	*used = logits;
	if (!e->jv && jv_build(e)) {
		*why = "out of host memory";
		return -1;
	}
	v = e->jv;
	if (!tok_ok(v, q->jm, tok)) {
		if (!mask_vocab(v, q->jm, logits, &best)) {
			*why = "no token of the vocabulary continues the JSON document";
			return -1;
		}
		tok = sampler_sample(q->smp, v->masked);
		if (tok < 0 || tok >= v->n || v->masked[tok] == -INFINITY)
			tok = best;	/* never seen: the sampler draws only finite logits */
		*used = v->masked;
	}
	if (v->kind[tok] == JV_TEXT)
		jm_feed(q->jm, v->bytes + v->off[tok], v->off[tok + 1] - v->off[tok]);
	return tok;
}
