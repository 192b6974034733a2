/* SPDX-License-Identifier: MIT */
/*
 * Card emulator EXEC internals shared by exec.c (programs, attention
 * layers, output head) and exec_dnet.c (Gated DeltaNet layers): the
 * validated program, its layers and tokens, the compute work area and the
 * validation helpers. Not a contract: only the emulator includes it.
 */
#ifndef RK_EMU_EXEC_INT_H
#define RK_EMU_EXEC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec.h"
#include "deltanet.h"
#include "rk1828_hif.h"
#include "rk1828/program.h"

/* Refuse programs whose scratch would exceed this (bytes). */
#define EXEC_MAX_SCRATCH	(8ULL << 30)

/* A validated weight: host pointer (NULL: absent) and type. */
struct ex_tensor {
	const uint8_t *p;
	int type;
};

/**
 * struct ex_layer - a validated layer of either kind
 * @kind: RK1828_PROG_LAYER_ATTN or RK1828_PROG_LAYER_DELTANET
 * @lflags: RK1828_PROG_LF_* (attention)
 * @sections: IMROPE sections (with RK1828_PROG_LF_IMROPE)
 * @k_cache, @v_cache: sequence 0's caches (rows of the program's
 *	kv_type); @kv_stride bytes to the next sequence's
 * @dn: the DeltaNet mixer (kind DELTANET); its weight pointers are set
 * @conv_state, @ssm_state: sequence 0's DeltaNet states; strides in floats
 */
struct ex_layer {
	int kind;
	uint32_t lflags;
	unsigned int sections[4];
	struct ex_tensor attn_norm, wq, wk, wv, wo, bq, bk, bv, q_norm, k_norm;
	struct ex_tensor ffn_norm, ffn_gate, ffn_up, ffn_down;
	uint8_t *k_cache, *v_cache;
	size_t kv_stride;
	struct dn_layer dn;
	float *conv_state, *ssm_state;
	size_t conv_stride, ssm_stride;
};

/*
 * One token: its KV row (position), its sequence, whether it wants logits,
 * and (1.2) whether it snapshots its recurrent state into sequence @aux
 * after it or restores it from @aux before it.
 */
struct ex_tok {
	size_t pos, seq, aux;
	bool logits, snapshot, restore;
};

/*
 * The validated program, all sizes as size_t. Every program gets a token
 * table: from F_BATCH's, or made up for a version 1.0 program (positions
 * pos.., sequence 0, logits for the last token or all).
 */
struct ex_prog {
	uint32_t flags;
	bool hybrid;			/* RK1828_PROG_OP_HYBRID */
	size_t n_layers, n_tokens, pos;
	size_t dim, n_heads, n_kv_heads, head_dim, ffn_dim, n_ctx, rope_dim, n_vocab;
	size_t q_dim, kv_dim;
	size_t n_seq, kv_stride;	/* sequences; bytes from one to the next */
	int kv_type;			/* 1.3: K/V rows' QUANT_TYPE_* */
	size_t kv_row;			/* bytes of one K/V row */
	size_t n_snap;			/* 1.2: snapshot blocks of DeltaNet regions */
	float eps, theta;
	const float *in;
	float *out;
	struct ex_tensor output_norm, output;
	struct ex_layer *layers;
	struct ex_tok *toks;
	size_t n_out;			/* tokens that want logits (F_OUTPUT) */
	bool gated;			/* some attention layer has LF_GATE */
};

/*
 * Compute work area: x the residual stream, xb a normalised copy or a
 * layer output, the attention buffers (q with room for the gates of a
 * gated layer: @gate), the FFN buffers and the RoPE tables (plain, and
 * @icos/@isin for IMROPE layers).
 */
struct ex_work {
	const struct ex_prog *p;
	struct tpool *pool;
	float *x, *xb, *q, *gate, *k, *v, *att, *hb, *hb2, *rcos, *rsin, *icos, *isin;
	const struct ex_layer *l;
	float scale;
	volatile int failed;
};

static inline bool ex_mul_ok(uint64_t a, uint64_t b, uint64_t *r)
{
	return !__builtin_mul_overflow(a, b, r);
}

/* [addr, addr + len) inside card memory and one mapping of the context. */
int ex_check_range(const struct emu_access *acc, uint64_t addr, uint64_t len);

/* A float array of n elements at a card address (4-byte aligned). */
int ex_map_f32(const struct emu_access *acc, uint64_t addr, uint64_t n, float **out);

/*
 * A weight of @rows rows of @ne0 elements (any card type; F32 4-byte and
 * F16/BF16 2-byte aligned). @f32_only for norms and biases; @optional
 * lets addr 0 mean "absent".
 */
int ex_map_tensor(const struct emu_access *acc, const struct rk1828_prog_tensor *t,
		  uint64_t rows, uint64_t ne0, bool f32_only, bool optional,
		  struct ex_tensor *out);

/*
 * A state region of @n_blocks blocks of @block_bytes bytes (4-byte
 * aligned): @st's base and stride (zero without F_BATCH, else a multiple
 * of 4 and >= @block_bytes); *@stride_bytes out.
 */
int ex_map_state_bytes(const struct emu_access *acc, const struct rk1828_prog_state *st,
		       const struct ex_prog *p, uint64_t n_blocks, uint64_t block_bytes,
		       uint8_t **out, size_t *stride_bytes);

/*
 * A state region of @n_blocks blocks of @block_floats floats: @st's base
 * and stride (zero without F_BATCH); *@stride_floats out.
 */
int ex_map_state(const struct emu_access *acc, const struct rk1828_prog_state *st,
		 const struct ex_prog *p, uint64_t n_blocks, uint64_t block_floats,
		 float **out, size_t *stride_floats);

/* x[t] += ffn(rmsnorm(x[t]) * ffn_norm) for every token; RK1828_HIF_ST_OK or _NOMEM. */
int ex_run_ffn(struct ex_work *w, const struct ex_layer *l);

/* y = W x for @n_tok tokens; RK1828_HIF_ST_OK or _NOMEM. */
int ex_matmul(struct ex_work *w, const struct ex_tensor *t, const float *x, float *y,
	      size_t rows, size_t k, size_t n_tok);

struct card_profile;

/*
 * Timing mode (exec_cost.c): the modelled time of validated program @p on
 * a card of profile @prof (cardmodel/cost.h), ns.
 */
double ex_cost_ns(const struct ex_prog *p, const struct card_profile *prof);

/*
 * Timing-only outputs (exec_cost.c): hidden states copied from the input,
 * or for an output program one logits row per token that wants it, zero
 * but a 1.0 at a token that depends on the token's position and sequence.
 */
void ex_fill_outputs(const struct ex_prog *p);

/* Validate a DeltaNet hlayer record into @o (exec_dnet.c). */
int ex_validate_dnet(const struct emu_access *acc, const struct rk1828_prog_hlayer *l,
		     const struct ex_prog *p, struct ex_layer *o);

/*
 * Check a hybrid program's token table for its DeltaNet layers: each
 * sequence's tokens at consecutive increasing positions, RESTORE only on
 * a sequence's first token.
 */
int ex_validate_dnet_tokens(const struct ex_prog *p);

/*
 * The DeltaNet mixer of layer @l on w->xb (normalised input of all
 * tokens), output into w->xb's companion: adds the mixer output to w->x.
 * Runs each sequence's tokens in order with its states, taking the
 * snapshots and restores the token table asks for.
 * Return: RK1828_HIF_ST_OK or RK1828_HIF_ST_NOMEM.
 */
int ex_run_dnet(struct ex_work *w, const struct ex_layer *l);

#endif
