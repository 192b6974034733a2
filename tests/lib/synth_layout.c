// SPDX-License-Identifier: MIT
/*
 * The tensors of a synthetic model, in file order (synth_model.h): names
 * and shapes as llama.cpp reads them for llama, qwen2, qwen3 and qwen35
 * (src/llama-arch.cpp, src/models/<arch>.cpp), and each tensor's type.
 */
#include <stdio.h>

#include "synth_int.h"

/* llama.cpp's use_more_bits(i, n): first and last eighth, every third between. */
static bool use_more_bits(uint32_t i, uint32_t n)
{
	return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/* Type of @role in block @l: the role's, or the spec's "more bits" one. */
static int type_of(const struct synth_model *s, enum synth_role role, uint32_t l)
{
	if (s->more_bits && (role == SYNTH_V || role == SYNTH_DOWN) &&
	    use_more_bits(l, s->n_layers))
		return s->more_type;
	return s->t[role].type;
}

/* Add "blk.@l.@suffix" of @role, @ne0 x @ne1. */
static void blk(struct synth *y, uint32_t l, const char *suffix, enum synth_role role,
		uint64_t ne0, uint64_t ne1)
{
	char n[96];

	snprintf(n, sizeof(n), "blk.%u.%s", l, suffix);
	synth_add_tensor(y, n, role, type_of(y->s, role, l), ne0, ne1);
}

/* Whether block @l is full attention (every block but qwen35's DeltaNet ones). */
static bool is_full_attn(const struct synth_model *s, uint32_t l)
{
	return !synth_is_hybrid(s) || (l + 1) % s->ssm.fa_interval == 0 || l >= s->n_layers;
}

/* Attention of block @l; qwen35 has per head [query, gate] rows in attn_q. */
static void add_attention(struct synth *y, uint32_t l)
{
	const struct synth_model *s = y->s;
	uint64_t hd = s->head_dim ? s->head_dim : s->dim / s->n_heads;
	uint64_t q = s->n_heads * hd, kv = s->n_kv_heads * hd;

	blk(y, l, "attn_q.weight", SYNTH_Q, s->dim, synth_is_hybrid(s) ? 2 * q : q);
	blk(y, l, "attn_k.weight", SYNTH_K, s->dim, kv);
	blk(y, l, "attn_v.weight", SYNTH_V, s->dim, kv);
	blk(y, l, "attn_output.weight", SYNTH_O, q, s->dim);
	if (s->biases) {
		blk(y, l, "attn_q.bias", SYNTH_BIAS, q, 0);
		blk(y, l, "attn_k.bias", SYNTH_BIAS, kv, 0);
		blk(y, l, "attn_v.bias", SYNTH_BIAS, kv, 0);
	}
	if (s->qk_norm) {
		blk(y, l, "attn_q_norm.weight", SYNTH_QK_NORM, hd, 0);
		blk(y, l, "attn_k_norm.weight", SYNTH_QK_NORM, hd, 0);
	}
}

/* Gated DeltaNet (qwen35 linear attention) of block @l. */
static void add_deltanet(struct synth *y, uint32_t l)
{
	const struct synth_model *s = y->s;
	const struct synth_ssm *m = &s->ssm;
	uint64_t key = (uint64_t)m->groups * m->state, val = (uint64_t)m->rank * m->state;

	blk(y, l, "attn_qkv.weight", SYNTH_SSM_QKV, s->dim, 2 * key + val);
	blk(y, l, "attn_gate.weight", SYNTH_SSM_GATE, s->dim, val);
	blk(y, l, "ssm_conv1d.weight", SYNTH_SSM_CONV, m->conv, 2 * key + val);
	blk(y, l, "ssm_dt.bias", SYNTH_SSM_DT, m->rank, 0);
	blk(y, l, "ssm_a", SYNTH_SSM_A, m->rank, 0);
	blk(y, l, "ssm_beta.weight", SYNTH_SSM_BETA, s->dim, m->rank);
	blk(y, l, "ssm_alpha.weight", SYNTH_SSM_ALPHA, s->dim, m->rank);
	blk(y, l, "ssm_norm.weight", SYNTH_SSM_NORM, m->state, 0);
	blk(y, l, "ssm_out.weight", SYNTH_SSM_OUT, val, s->dim);
}

/* Block @l: norm, attention or DeltaNet, norm, SwiGLU FFN. */
static void add_block(struct synth *y, uint32_t l)
{
	const struct synth_model *s = y->s;

	blk(y, l, "attn_norm.weight", SYNTH_ATTN_NORM, s->dim, 0);
	if (is_full_attn(s, l))
		add_attention(y, l);
	else
		add_deltanet(y, l);
	/* qwen35 names the FFN's norm post_attention_norm. */
	blk(y, l, synth_is_hybrid(s) ? "post_attention_norm.weight" : "ffn_norm.weight",
	    SYNTH_FFN_NORM, s->dim, 0);
	blk(y, l, "ffn_gate.weight", SYNTH_GATE, s->dim, s->ffn);
	blk(y, l, "ffn_up.weight", SYNTH_UP, s->dim, s->ffn);
	blk(y, l, "ffn_down.weight", SYNTH_DOWN, s->ffn, s->dim);
	if (l >= s->n_layers) {
		/* An MTP block's own tensors (llama.cpp's nextn names). */
		blk(y, l, "nextn.eh_proj.weight", SYNTH_MTP_EH_PROJ, 2 * (uint64_t)s->dim, s->dim);
		blk(y, l, "nextn.enorm.weight", SYNTH_MTP_NORM, s->dim, 0);
		blk(y, l, "nextn.hnorm.weight", SYNTH_MTP_NORM, s->dim, 0);
		blk(y, l, "nextn.shared_head_norm.weight", SYNTH_MTP_NORM, s->dim, 0);
	}
}

void synth_add_tensors(struct synth *y)
{
	const struct synth_model *s = y->s;
	uint32_t l;

	synth_add_tensor(y, "token_embd.weight", SYNTH_EMBD, s->t[SYNTH_EMBD].type,
			 s->dim, y->n_vocab);
	for (l = 0; l < s->n_layers + s->n_mtp; l++)
		add_block(y, l);
	synth_add_tensor(y, "output_norm.weight", SYNTH_OUT_NORM, s->t[SYNTH_OUT_NORM].type,
			 s->dim, 0);
	y->embd_i = 0;
	if (!s->tied)
		synth_add_tensor(y, "output.weight", SYNTH_OUTPUT, s->t[SYNTH_OUTPUT].type,
				 s->dim, y->n_vocab);
}
