// SPDX-License-Identifier: MIT
/*
 * Pipeline setup of hybrid models (qwen35): the program template of a
 * stage is a RK1828_PROG_OP_HYBRID header followed by one struct
 * rk1828_prog_hlayer per block (rk1828/program.h, revision 1.2):
 * attention blocks with the output gate and IMROPE, Gated DeltaNet blocks
 * with their sizes. Every block has two per-sequence state regions in the
 * stage's state BO: K and V caches of n_seq sequences for attention, the
 * conv state and the recurrent state of n_seq sequences plus n_snap
 * snapshot blocks for DeltaNet. None of it ever leaves the card.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_int.h"

static uint64_t align64(uint64_t x)
{
	return (x + 63) & ~63ULL;
}

/* The tensors of block @l into record @d. */
static int lay_block(struct pipe_layout *L, const struct llm_model *m, const struct llm_layer *s,
		     struct rk1828_prog_hlayer *d)
{
	int i, r = 0;

	r |= pipe_lay_tensor(L, s->attn_norm, true, &d->attn_norm);
	if (s->kind == LLM_LAYER_DELTANET) {
		struct rk1828_prog_dnet *n = &d->dnet;

		d->kind = htole32(RK1828_PROG_LAYER_DELTANET);
		r |= pipe_lay_tensor(L, s->ssm_qkv, false, &n->qkv);
		r |= pipe_lay_tensor(L, s->ssm_gate, false, &n->gate);
		r |= pipe_lay_tensor(L, s->ssm_beta, false, &n->beta);
		r |= pipe_lay_tensor(L, s->ssm_alpha, false, &n->alpha);
		r |= pipe_lay_tensor(L, s->ssm_conv, true, &n->conv);
		r |= pipe_lay_tensor(L, s->ssm_dt, true, &n->dt_bias);
		r |= pipe_lay_tensor(L, s->ssm_a, true, &n->ssm_a);
		r |= pipe_lay_tensor(L, s->ssm_norm, true, &n->norm);
		r |= pipe_lay_tensor(L, s->ssm_out, false, &n->out);
		n->head_dim = htole32(m->ssm_state);
		n->n_k_heads = htole16((uint16_t)m->ssm_k_heads);
		n->n_v_heads = htole16((uint16_t)m->ssm_v_heads);
		n->conv_kernel = htole32(m->ssm_conv);
	} else {
		struct rk1828_prog_attn *a = &d->attn;
		uint32_t fl = m->attn_gate ? RK1828_PROG_LF_GATE : 0;

		d->kind = htole32(RK1828_PROG_LAYER_ATTN);
		r |= pipe_lay_tensor(L, s->wq, false, &a->wq);
		r |= pipe_lay_tensor(L, s->wk, false, &a->wk);
		r |= pipe_lay_tensor(L, s->wv, false, &a->wv);
		r |= pipe_lay_tensor(L, s->wo, false, &a->wo);
		r |= pipe_lay_tensor(L, s->bq, true, &a->bq);
		r |= pipe_lay_tensor(L, s->bk, true, &a->bk);
		r |= pipe_lay_tensor(L, s->bv, true, &a->bv);
		r |= pipe_lay_tensor(L, s->q_norm, true, &a->q_norm);
		r |= pipe_lay_tensor(L, s->k_norm, true, &a->k_norm);
		for (i = 0; i < 4; i++) {
			a->rope_sections[i] = htole16((uint16_t)m->rope_sections[i]);
			if (m->rope_sections[i])
				fl |= RK1828_PROG_LF_IMROPE;
		}
		d->flags = htole32(fl);
	}
	r |= pipe_lay_tensor(L, s->ffn_norm, true, &d->ffn_norm);
	r |= pipe_lay_tensor(L, s->ffn_gate, false, &d->ffn_gate);
	r |= pipe_lay_tensor(L, s->ffn_up, false, &d->ffn_up);
	r |= pipe_lay_tensor(L, s->ffn_down, false, &d->ffn_down);
	return r ? -1 : 0;
}

int pipe_hybrid_template(struct pipeline *p, struct stage *st, struct pipe_layout *L,
			 struct rk1828_program *h, uint64_t *state_bytes)
{
	const struct llm_model *m = p->m;
	struct rk1828_prog_hlayer *ly = (struct rk1828_prog_hlayer *)(h + 1);
	uint64_t kv_one = llm_kv_bytes(m, p->o.n_ctx, p->o.kv_type) / 2;
	uint64_t off = 0;
	int i, j, n_max = st->count * 15 + 2;

	L->pieces = calloc(n_max, sizeof(*L->pieces));
	L->owned = calloc(n_max, sizeof(*L->owned));
	L->cap = n_max;
	st->state_off = calloc(2 * (size_t)st->count, sizeof(uint64_t));
	st->state_one = calloc(2 * (size_t)st->count, sizeof(uint64_t));
	if (!L->pieces || !L->owned || !st->state_off || !st->state_one)
		return -1;
	memset(h, 0, sizeof(*h));
	for (i = 0; i < st->count; i++) {
		const struct llm_layer *s = &m->layers[st->first + i];
		bool dn = s->kind == LLM_LAYER_DELTANET;
		uint64_t blocks = p->o.n_seq + (dn ? p->o.n_snap : 0);

		memset(&ly[i], 0, sizeof(ly[i]));
		if (lay_block(L, m, s, &ly[i]))
			return -1;
		st->state_one[2 * i] = dn ? llm_conv_state_bytes(m) : kv_one;
		st->state_one[2 * i + 1] = dn ? llm_ssm_state_bytes(m) : kv_one;
		for (j = 0; j < 2; j++) {
			st->state_off[2 * i + j] = off;
			ly[i].state[j].seq_stride = htole64(st->state_one[2 * i + j]);
			off = align64(off + blocks * st->state_one[2 * i + j]);
		}
	}
	if (st->last &&
	    (pipe_lay_tensor(L, m->output_norm, true, &h->output_norm) ||
	     pipe_lay_tensor(L, m->output, false, &h->output)))
		return -1;
	*state_bytes = off;
	pipe_prog_header(p, st, RK1828_PROG_OP_HYBRID, (uint32_t)st->prog_bytes, h);
	h->n_snap = htole32(p->o.n_snap);
	return 0;
}

void pipe_hybrid_rebase(struct pipeline *p, struct stage *st, struct rk1828_program *h)
{
	struct rk1828_prog_hlayer *ly = (struct rk1828_prog_hlayer *)(h + 1);
	uint64_t w = st->weights.card_addr;
	int i, j;

	for (i = 0; i < st->count; i++) {
		struct rk1828_prog_hlayer *d = &ly[i];
		/* attn and dnet both start with 9 tensor records. */
		struct rk1828_prog_tensor *u = le32toh(d->kind) == RK1828_PROG_LAYER_DELTANET ?
					       &d->dnet.qkv : &d->attn.wq;

		pipe_rebase(&d->attn_norm, w);
		for (j = 0; j < 9; j++)
			pipe_rebase(&u[j], w);
		pipe_rebase(&d->ffn_norm, w);
		pipe_rebase(&d->ffn_gate, w);
		pipe_rebase(&d->ffn_up, w);
		pipe_rebase(&d->ffn_down, w);
		for (j = 0; j < 2; j++)
			d->state[j].addr = htole64(st->kv.card_addr + st->state_off[2 * i + j]);
	}
	pipe_rebase(&h->output_norm, w);
	pipe_rebase(&h->output, w);
}
