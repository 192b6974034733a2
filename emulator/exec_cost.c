// SPDX-License-Identifier: MIT
/*
 * Card emulator, timing mode: a validated segment program (exec_int.h) as
 * the card cost function sees it (cardmodel/cost.h): its layers' matrices
 * with their storage bytes, the token table as a cost batch, and its
 * modelled time on a profile. And the timing-only outputs: deterministic
 * filler that costs no math.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "exec_int.h"
#include "profile.h"
#include "rk1828/quant_blocks.h"

static void add_mat(struct cost_layer *c, int type, size_t rows, size_t cols)
{
	if (c->n_mats == COST_MAX_MATS)
		return;
	c->mat[c->n_mats++] = (struct cost_matrix){
		(uint32_t)rows, (uint32_t)cols, (uint64_t)rows * quant_row_size(type, cols) };
}

/* F32 bytes of an optional small tensor of @n elements. */
static uint64_t small(const void *p, size_t n)
{
	return p ? (uint64_t)n * sizeof(float) : 0;
}

static void attn_layer(const struct ex_prog *p, const struct ex_layer *l, struct cost_layer *c)
{
	bool gate = l->lflags & RK1828_PROG_LF_GATE;

	c->mixer = COST_MIX_ATTN;
	c->n_heads = (uint32_t)p->n_heads;
	c->n_kv_heads = (uint32_t)p->n_kv_heads;
	c->head_dim = (uint32_t)p->head_dim;
	c->qk_norm = l->q_norm.p != NULL;
	c->bias = l->bq.p != NULL;
	c->gate = gate;
	add_mat(c, l->wq.type, (gate ? 2 : 1) * p->q_dim, p->dim);
	add_mat(c, l->wk.type, p->kv_dim, p->dim);
	add_mat(c, l->wv.type, p->kv_dim, p->dim);
	add_mat(c, l->wo.type, p->dim, p->q_dim);
	c->small_bytes += small(l->q_norm.p, p->head_dim) + small(l->k_norm.p, p->head_dim) +
			  small(l->bq.p, p->q_dim) + small(l->bk.p, p->kv_dim) +
			  small(l->bv.p, p->kv_dim);
}

static void dnet_layer(const struct ex_layer *l, struct cost_layer *c)
{
	const struct dn_layer *d = &l->dn;
	size_t C = dn_channels(d), vs = d->n_v_heads * d->head_dim;

	c->mixer = COST_MIX_DELTANET;
	c->dn_head_dim = (uint32_t)d->head_dim;
	c->dn_k_heads = (uint32_t)d->n_k_heads;
	c->dn_v_heads = (uint32_t)d->n_v_heads;
	c->dn_conv = (uint32_t)d->conv_k;
	add_mat(c, d->qkv.type, C, d->dim);
	add_mat(c, d->gate.type, vs, d->dim);
	add_mat(c, d->beta.type, d->n_v_heads, d->dim);
	add_mat(c, d->alpha.type, d->n_v_heads, d->dim);
	add_mat(c, d->out.type, d->dim, vs);
	c->small_bytes += ((uint64_t)C * d->conv_k + 2 * d->n_v_heads + d->head_dim) *
			  sizeof(float);
}

/* Layer @l of @p in the cost function's terms. */
static void cost_of_layer(const struct ex_prog *p, const struct ex_layer *l,
			  struct cost_layer *c)
{
	memset(c, 0, sizeof(*c));
	c->dim = (uint32_t)p->dim;
	c->ffn_dim = (uint32_t)p->ffn_dim;
	c->kv_elt_bytes = (double)p->kv_row / (double)p->kv_dim;
	c->state_elt_bytes = sizeof(float);
	c->small_bytes = 2 * (uint64_t)p->dim * sizeof(float);	/* the two norms */
	if (l->kind == RK1828_PROG_LAYER_DELTANET)
		dnet_layer(l, c);
	else
		attn_layer(p, l, c);
	add_mat(c, l->ffn_gate.type, p->ffn_dim, p->dim);
	add_mat(c, l->ffn_up.type, p->ffn_dim, p->dim);
	add_mat(c, l->ffn_down.type, p->dim, p->ffn_dim);
}

/*
 * The token table as a cost batch: each sequence's run of tokens (the
 * table keeps a sequence's tokens in order), its attended rows and
 * delta-rule chunks.
 */
static void cost_of_tokens(const struct ex_prog *p, struct cost_batch *b)
{
	size_t i = 0;

	memset(b, 0, sizeof(*b));
	while (i < p->n_tokens) {
		size_t j = i + 1, logits = p->toks[i].logits;

		while (j < p->n_tokens && p->toks[j].seq == p->toks[i].seq &&
		       p->toks[j].pos == p->toks[j - 1].pos + 1) {
			logits += p->toks[j].logits;
			j++;
		}
		cost_batch_add_seq(b, (uint32_t)(j - i), p->toks[i].pos, (uint32_t)logits);
		i = j;
	}
	if (!(p->flags & RK1828_PROG_F_OUTPUT))
		b->n_logits = 0;
}

double ex_cost_ns(const struct ex_prog *p, const struct card_profile *prof)
{
	struct cost_layer c;
	struct cost_head h = { (uint32_t)p->dim, (uint32_t)p->n_vocab, 0 };
	struct cost_batch b;
	struct cost_work w;
	size_t i;

	cost_of_tokens(p, &b);
	memset(&w, 0, sizeof(w));
	for (i = 0; i < p->n_layers; i++) {
		cost_of_layer(p, &p->layers[i], &c);
		cost_layer_work(&c, &b, &w);
	}
	if (p->flags & RK1828_PROG_F_OUTPUT) {
		h.bytes = (uint64_t)p->n_vocab * quant_row_size(p->output.type, p->dim);
		cost_head_work(&h, &b, &w);
	}
	return cost_work_ns(prof, &w);
}

void ex_fill_outputs(const struct ex_prog *p)
{
	size_t i, r = 0;

	if (!(p->flags & RK1828_PROG_F_OUTPUT)) {
		/* Hidden states pass through: the next card gets what this one got. */
		memmove(p->out, p->in, p->n_tokens * p->dim * sizeof(float));
		return;
	}
	/*
	 * Logits: a single peak per row at a token that depends only on the
	 * position and sequence, so generation is deterministic and varied.
	 */
	for (i = 0; i < p->n_tokens; i++) {
		float *row;
		uint64_t h;

		if (!p->toks[i].logits)
			continue;
		row = p->out + r++ * p->n_vocab;
		memset(row, 0, p->n_vocab * sizeof(float));
		h = (p->toks[i].pos + 1) * 0x9e3779b97f4a7c15ULL ^ p->toks[i].seq * 0xbf58476d1ce4e5b9ULL;
		row[(h >> 17) % p->n_vocab] = 1.0f;
	}
	/* F_HIDDEN: the normed rows after the logits (no math here: zeros). */
	if (p->flags & RK1828_PROG_F_HIDDEN)
		memset(p->out + r * p->n_vocab, 0, r * p->dim * sizeof(float));
}
