// SPDX-License-Identifier: MIT
/*
 * Card emulator EXEC: the Gated DeltaNet layers of %RK1828_PROG_OP_HYBRID
 * programs (struct rk1828_prog_hlayer of kind RK1828_PROG_LAYER_DELTANET,
 * rk1828/program.h): validation of the record and its state regions, and
 * the mixer over a micro-batch. The math is emulator/deltanet.c.
 *
 * A micro-batch may hold tokens of several sequences. The projections run
 * once over all tokens; then each sequence's tokens (consecutive positions,
 * in table order) run through the conv and the delta rule with that
 * sequence's states, split where the token table asks for a snapshot
 * (the states after that token are copied into the blocks of sequence
 * aux) and preceded by a restore (the blocks of aux copied in) when its
 * first token asks for one, or by zeroed states when its first token is
 * at position 0; then the output projection runs over all.
 */
#include "exec_int.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

int ex_validate_dnet(const struct emu_access *acc, const struct rk1828_prog_hlayer *l,
		     const struct ex_prog *p, struct ex_layer *o)
{
	const struct rk1828_prog_dnet *d = &l->dnet;
	struct dn_layer *dn = &o->dn;
	struct ex_tensor t[9];
	uint64_t S = le32toh(d->head_dim), Hk = le16toh(d->n_k_heads);
	uint64_t Hv = le16toh(d->n_v_heads), K = le32toh(d->conv_kernel), C, V;
	int rc, i;

	if (l->flags || d->pad || S < 1 || S > 1024 || !Hk || !Hv || Hv % Hk || K < 2 || K > 16)
		return RK1828_HIF_ST_INVAL;
	C = (2 * Hk + Hv) * S;
	V = Hv * S;
#define TRY(x) do { rc = (x); if (rc) return rc; } while (0)
	TRY(ex_map_tensor(acc, &d->qkv, C, p->dim, false, false, &t[0]));
	TRY(ex_map_tensor(acc, &d->gate, V, p->dim, false, false, &t[1]));
	TRY(ex_map_tensor(acc, &d->beta, Hv, p->dim, false, false, &t[2]));
	TRY(ex_map_tensor(acc, &d->alpha, Hv, p->dim, false, false, &t[3]));
	TRY(ex_map_tensor(acc, &d->conv, C, K, true, false, &t[4]));
	TRY(ex_map_tensor(acc, &d->dt_bias, 1, Hv, true, false, &t[5]));
	TRY(ex_map_tensor(acc, &d->ssm_a, 1, Hv, true, false, &t[6]));
	TRY(ex_map_tensor(acc, &d->norm, 1, S, true, false, &t[7]));
	TRY(ex_map_tensor(acc, &d->out, p->dim, V, false, false, &t[8]));
	TRY(ex_map_state(acc, &l->state[0], p, p->n_seq + p->n_snap, (K - 1) * C, &o->conv_state,
			 &o->conv_stride));
	TRY(ex_map_state(acc, &l->state[1], p, p->n_seq + p->n_snap,
			 rk1828_dnet_state_floats(S, Hv), &o->ssm_state, &o->ssm_stride));
#undef TRY
	for (i = 0; i < 9; i++)
		if (!t[i].p)
			return RK1828_HIF_ST_INVAL;
	o->kind = RK1828_PROG_LAYER_DELTANET;
	*dn = (struct dn_layer){
		.dim = p->dim, .n_k_heads = Hk, .n_v_heads = Hv, .head_dim = S, .conv_k = K,
		.eps = p->eps,
		.qkv = { t[0].p, t[0].type }, .gate = { t[1].p, t[1].type },
		.beta = { t[2].p, t[2].type }, .alpha = { t[3].p, t[3].type },
		.out = { t[8].p, t[8].type },
		.conv = (const float *)t[4].p, .dt_bias = (const float *)t[5].p,
		.ssm_a = (const float *)t[6].p, .norm = (const float *)t[7].p,
	};
	return RK1828_HIF_ST_OK;
}

int ex_validate_dnet_tokens(const struct ex_prog *p)
{
	size_t *next, t, i;
	bool any = false;

	for (i = 0; i < p->n_layers; i++)
		any |= p->layers[i].kind == RK1828_PROG_LAYER_DELTANET;
	if (!any)
		return RK1828_HIF_ST_OK;
	/* next[s] = 1 + the position the next token of s must have; 0: none yet. */
	next = calloc(p->n_seq, sizeof(*next));
	if (!next)
		return RK1828_HIF_ST_NOMEM;
	for (t = 0; t < p->n_tokens; t++) {
		const struct ex_tok *tk = &p->toks[t];

		if (next[tk->seq] && (tk->restore || tk->pos + 1 != next[tk->seq])) {
			free(next);
			return RK1828_HIF_ST_INVAL;
		}
		next[tk->seq] = tk->pos + 2;
	}
	free(next);
	return RK1828_HIF_ST_OK;
}

/* Copy layer @l's DeltaNet states of sequence @from into @to's blocks. */
static void copy_states(const struct ex_layer *l, size_t from, size_t to)
{
	size_t cf = (l->dn.conv_k - 1) * dn_channels(&l->dn);
	size_t sf = dn_state_floats(&l->dn);

	memcpy(l->conv_state + to * l->conv_stride, l->conv_state + from * l->conv_stride,
	       cf * sizeof(float));
	memcpy(l->ssm_state + to * l->ssm_stride, l->ssm_state + from * l->ssm_stride,
	       sf * sizeof(float));
}

/*
 * The tokens of sequence @seq (@rows, @n of them, in order) through the
 * conv and the delta rule, cut after every snapshot token.
 */
static int mix_sequence(struct ex_work *w, const struct ex_layer *l, struct dn_buf *b,
			const size_t *rows, size_t n, float *work)
{
	const struct ex_tok *toks = w->p->toks;
	size_t seq = toks[rows[0]].seq, start = 0, i;
	float *cs = l->conv_state + seq * l->conv_stride;
	float *ss = l->ssm_state + seq * l->ssm_stride;

	if (toks[rows[0]].restore) {
		copy_states(l, toks[rows[0]].aux, seq);
	} else if (toks[rows[0]].pos == 0) {
		/* A sequence starting at position 0 has no history. */
		memset(cs, 0, (l->dn.conv_k - 1) * dn_channels(&l->dn) * sizeof(float));
		memset(ss, 0, dn_state_floats(&l->dn) * sizeof(float));
	}
	for (i = 0; i < n; i++) {
		const struct ex_tok *tk = &toks[rows[i]];

		if (!tk->snapshot && i + 1 < n)
			continue;
		if (dn_mix(w->pool, &l->dn, b, rows + start, i + 1 - start, cs, ss, work))
			return RK1828_HIF_ST_NOMEM;
		if (tk->snapshot)
			copy_states(l, seq, tk->aux);
		start = i + 1;
	}
	return RK1828_HIF_ST_OK;
}

int ex_run_dnet(struct ex_work *w, const struct ex_layer *l)
{
	const struct ex_prog *p = w->p;
	size_t T = p->n_tokens, nb = dn_buf_floats(&l->dn, T), nw = dn_mix_floats(&l->dn, T);
	size_t t, u, n;
	float *mem = malloc((nb + nw + T * p->dim) * sizeof(float));
	size_t *rows = malloc(T * sizeof(*rows));
	bool *done = calloc(T, sizeof(*done));
	struct dn_buf b;
	float *out;
	int rc = RK1828_HIF_ST_NOMEM;

	if (!mem || !rows || !done)
		goto out;
	out = mem + nb + nw;
	for (t = 0; t < T; t++)
		nn_rmsnorm(w->xb + t * p->dim, w->x + t * p->dim,
			     (const float *)l->attn_norm.p, p->dim, p->eps);
	dn_buf_init(&b, &l->dn, mem, T);
	if (dn_project(w->pool, &l->dn, w->xb, &b))
		goto out;
	/* Each sequence in order of its first token, its tokens in table order. */
	for (t = 0; t < T; t++) {
		if (done[t])
			continue;
		for (u = t, n = 0; u < T; u++) {
			if (p->toks[u].seq == p->toks[t].seq) {
				rows[n++] = u;
				done[u] = true;
			}
		}
		rc = mix_sequence(w, l, &b, rows, n, mem + nb);
		if (rc)
			goto out;
	}
	rc = RK1828_HIF_ST_NOMEM;
	if (dn_output(w->pool, &l->dn, &b, out))
		goto out;
	for (t = 0; t < T * p->dim; t++)
		w->x[t] += out[t];
	rc = RK1828_HIF_ST_OK;
out:
	free(mem);
	free(rows);
	free(done);
	return rc;
}
