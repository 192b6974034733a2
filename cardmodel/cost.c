// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * The RK1828 cost function (cost.h): work counts of decoder layers and of
 * the output head, and their time on a card profile. The counts are the
 * card's algorithms as the emulator implements them (emulator/exec.c for
 * attention layers, emulator/deltanet.c for the chunked delta rule); their
 * coefficients are element operations, so the fitted rates
 * (npu.vector_ops_per_s, npu.*_flops_per_s) carry the hardware's
 * efficiency. userspace/doc/timing.rst lists every term.
 */
#include <string.h>

#include "cost.h"
#include "profile.h"

/* Operators of the SwiGLU FFN half: norm, gate, up, SiLU * up, down, residual. */
#define OPS_FFN		6
/*
 * Attention: norm, q, k, v (biases fused into their matmuls), RoPE of q,
 * RoPE of k, K/V store, scores, softmax, values, o, residual; q/k norm
 * adds two, the output gate one.
 */
#define OPS_ATTN	12
/*
 * DeltaNet: norm, qkv, z, beta, alpha, conv1d, SiLU, L2 norm of q, of k,
 * beta sigmoid, decay (softplus, scale, exp), the delta rule (state decay,
 * M k, delta, update, output), gated RMSNorm, SiLU(z) product, out,
 * residual.
 */
#define OPS_DNET	20

/* Bytes of one A16 activation element. */
#define ACT_BYTES	2.0

enum cost_prec cost_prec_of(const struct cost_matrix *m)
{
	double n = (double)m->rows * (double)m->cols, bits;

	if (n <= 0)
		return COST_PREC_F32;
	bits = 8.0 * (double)m->bytes / n;
	if (bits <= 5.5)
		return COST_PREC_W4A16;
	if (bits <= 9.0)
		return COST_PREC_W8A16;
	if (bits <= 16.5)
		return COST_PREC_F16;
	return COST_PREC_F32;
}

void cost_batch_add_seq(struct cost_batch *b, uint32_t n, uint64_t first_pos,
			uint32_t n_logits)
{
	uint64_t full, rest;

	if (!n)
		return;
	b->n_tokens += n;
	b->n_seq++;
	b->ctx_sum += (uint64_t)n * first_pos + (uint64_t)n * (n + 1) / 2;
	b->kv_rows += first_pos + n;
	full = n / COST_DN_CHUNK;
	rest = n % COST_DN_CHUNK;
	b->dn_chunks += full + (rest != 0);
	b->dn_chunk_sq += full * COST_DN_CHUNK * COST_DN_CHUNK + rest * rest;
	b->n_logits += n_logits;
}

unsigned int cost_layer_ops(const struct cost_layer *l)
{
	if (l->mixer == COST_MIX_DELTANET)
		return OPS_DNET + OPS_FFN;
	return OPS_ATTN + (l->qk_norm ? 2 : 0) + (l->gate ? 1 : 0) + OPS_FFN;
}

/* Matrices: FLOPs at their precision, weights read once, activations in and out. */
static void mats_work(const struct cost_layer *l, double T, struct cost_work *w)
{
	uint32_t i;

	for (i = 0; i < l->n_mats && i < COST_MAX_MATS; i++) {
		const struct cost_matrix *m = &l->mat[i];
		double rc = (double)m->rows * (double)m->cols;

		w->mm_flops[cost_prec_of(m)] += 2.0 * T * rc;
		w->dram_bytes += (double)m->bytes;
		/* Input row in, output row out; the element-wise operators between
		 * them move about as much again.
		 */
		w->dram_bytes += 2.0 * ACT_BYTES * T * ((double)m->rows + (double)m->cols);
	}
	w->dram_bytes += (double)l->small_bytes;
}

/* Per token, both halves: two RMSNorms (3 an element), two residual adds, SwiGLU. */
static double common_vec(const struct cost_layer *l)
{
	return 6.0 * l->dim + 2.0 * l->dim + 3.0 * l->ffn_dim;
}

static void attn_work(const struct cost_layer *l, const struct cost_batch *b,
		      struct cost_work *w)
{
	double T = b->n_tokens, ctx = (double)b->ctx_sum;
	double q = (double)l->n_heads * l->head_dim;
	double kv = (double)l->n_kv_heads * l->head_dim;
	double tok = common_vec(l) + 3.0 * (q + kv);	/* RoPE */

	if (l->qk_norm)
		tok += 3.0 * (q + kv);
	if (l->bias)
		tok += q + 2.0 * kv;
	if (l->gate)
		tok += 2.0 * q;
	w->vec_ops += T * tok + 5.0 * (double)l->n_heads * ctx;	/* softmax per score */
	/* Scores and values: A16 x A16 GEMMs over the attended rows. */
	w->mm_flops[COST_PREC_F16] += 4.0 * q * ctx;
	/* K and V rows of each sequence read once, written for the new tokens. */
	w->dram_bytes += 2.0 * kv * l->kv_elt_bytes * ((double)b->kv_rows + T);
}

static void dnet_work(const struct cost_layer *l, const struct cost_batch *b,
		      struct cost_work *w)
{
	double T = b->n_tokens, S = l->dn_head_dim, Hv = l->dn_v_heads;
	double C = (2.0 * l->dn_k_heads + Hv) * S;	/* conv channels */
	double st = Hv * S * S;				/* state elements */
	double chunks = (double)b->dn_chunks, sq = (double)b->dn_chunk_sq;
	double tok = common_vec(l);

	tok += 2.0 * C * l->dn_conv + 2.0 * C;		/* conv1d, SiLU */
	tok += 3.0 * 2.0 * l->dn_k_heads * S;		/* L2 norm of q and k */
	tok += 4.0 * Hv;				/* beta, decay */
	tok += 3.0 * Hv * S + 3.0 * Hv * S;		/* gated RMSNorm, SiLU(z) product */
	w->vec_ops += T * tok;
	/*
	 * Chunked delta rule, per chunk of c tokens and value head: the
	 * intra-chunk products (q k^T, k k^T and the two transforms, 4 c^2 S)
	 * and the state products (M q, M k, the update, 3 c S^2) are A16
	 * GEMMs; the state is decayed, updated and written once a chunk (3
	 * element operations an entry) and read and written in DRAM once a
	 * chunk. A decode token is a chunk of one: the recurrent form.
	 */
	w->mm_flops[COST_PREC_F16] += 2.0 * Hv * (4.0 * S * sq + 3.0 * S * S * T);
	w->vec_ops += 3.0 * st * chunks;
	w->dram_bytes += 2.0 * st * l->state_elt_bytes * chunks;
	/* Conv window of each sequence, read and written. */
	w->dram_bytes += 2.0 * (double)b->n_seq * (l->dn_conv ? l->dn_conv - 1 : 0) * C *
			 l->state_elt_bytes;
}

void cost_layer_work(const struct cost_layer *l, const struct cost_batch *b,
		     struct cost_work *w)
{
	double T = b->n_tokens;
	unsigned int ops = cost_layer_ops(l);

	if (!b->n_tokens)
		return;
	w->ops += ops;
	w->op_rows += ops * T;
	mats_work(l, T, w);
	if (l->mixer == COST_MIX_DELTANET) {
		dnet_work(l, b, w);
		w->dn_layers += 1;
		w->dn_rows += T;
	} else {
		attn_work(l, b, w);
	}
}

void cost_head_work(const struct cost_head *h, const struct cost_batch *b,
		    struct cost_work *w)
{
	struct cost_matrix m = { h->n_vocab, h->dim, h->bytes };
	double R = b->n_logits;

	if (!b->n_logits)
		return;
	w->ops += 2;			/* final norm, LM head */
	w->op_rows += 2.0 * R;
	w->mm_flops[cost_prec_of(&m)] += 2.0 * R * (double)h->n_vocab * h->dim;
	w->dram_bytes += (double)h->bytes +
			 ACT_BYTES * R * (2.0 * h->dim + (double)h->n_vocab);
	w->vec_ops += 3.0 * R * h->dim;
}

double cost_work_ns(const struct card_profile *p, const struct cost_work *w)
{
	double t = p->job_ns + w->ops * p->op_ns + w->op_rows * p->op_row_ns;
	int i;

	t += w->dram_bytes / p->dram_bw * 1e9;
	for (i = 0; i < COST_PREC_N; i++)
		t += w->mm_flops[i] / p->mm_rate[i] * 1e9;
	t += w->vec_ops / p->vec_rate * 1e9;
	t += w->dn_layers * p->dn_ns + w->dn_rows * p->dn_row_ns;
	return t;
}

double cost_exec_ns(const struct card_profile *p, const struct cost_layer *layers,
		    unsigned int n, const struct cost_head *h,
		    const struct cost_batch *b)
{
	struct cost_work w;
	unsigned int i;

	memset(&w, 0, sizeof(w));
	for (i = 0; i < n; i++)
		cost_layer_work(&layers[i], b, &w);
	if (h)
		cost_head_work(h, b, &w);
	return cost_work_ns(p, &w);
}

double cost_link_ns(const struct card_profile *p, enum cost_link link, uint64_t bytes)
{
	if ((unsigned int)link >= COST_LINK_N)
		return 0;
	return p->link[link].latency_ns + (double)bytes / p->link[link].bytes_per_s * 1e9;
}

double cost_card_copy_ns(const struct card_profile *p, uint64_t bytes)
{
	return 2.0 * (double)bytes / p->dram_bw * 1e9;
}

const char *cost_link_name(enum cost_link link)
{
	switch (link) {
	case COST_LINK_USB:
		return "usb";
	case COST_LINK_PCIE:
		return "pcie";
	default:
		return "?";
	}
}

int cost_link_parse(const char *s, enum cost_link *out)
{
	if (!strcmp(s, "usb"))
		*out = COST_LINK_USB;
	else if (!strcmp(s, "pcie"))
		*out = COST_LINK_PCIE;
	else
		return -1;
	return 0;
}
