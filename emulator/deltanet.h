/* SPDX-License-Identifier: MIT */
/*
 * Card emulator: the Gated DeltaNet token mixer of qwen35's linear
 * attention layers (Yang et al., "Gated Delta Networks: Improving Mamba2
 * with Delta Rule", 2024; llama.cpp src/models/qwen35.cpp and
 * delta-net-base.cpp for the GGUF layout), for one sequence:
 *
 *   qkv = Wqkv h            [T][C], C = 2 * Hk * S + Hv * S
 *   z   = Wgate h           [T][Hv * S]
 *   beta = sigmoid(Wbeta h) [T][Hv]
 *   g    = softplus(Walpha h + dt_bias) * ssm_a     [T][Hv], ssm_a < 0
 *   u = silu(causal depthwise conv1d of qkv over time, K taps, with the
 *       K - 1 inputs before the bucket taken from (and the last K - 1
 *       written back to) the conv state)
 *   q, k, v = u split per head; q, k L2-normalised per head
 *       (x / sqrt(sum x^2 + eps)), q scaled by 1 / sqrt(S)
 *   per value head h (key head h % Hk), state M (S x S, M[j][i] = S[i][j]):
 *       M <- exp(g_t) M;  d = beta_t (v_t - M k_t);  M <- M + d k_t^T;
 *       o_t = M q_t
 *   o = rmsnorm(o_h) * ssm_norm * silu(z_h) per head
 *   out = Wout o             [T][dim]
 *
 * The recurrence runs in the chunked ("WY") form over chunks of
 * RK1828_DNET_CHUNK positions aligned to position 0: a token's d and o
 * come from the state at its chunk's start and the chunk's earlier tokens
 * (a unit triangular system solved by forward substitution), and a full
 * chunk folds into the state with one update. The state keeps the chunk's
 * tokens so far, so a bucket may end anywhere: prefill buckets and single
 * decode tokens evaluate the very same arithmetic, and a token's outputs
 * are bit for bit the same however the runtime grouped the tokens into
 * programs (the engine's "same greedy output alone, batched or after a
 * prefix-cache hit"). A decode token at chunk offset r costs O(S^2 + r S)
 * per head, the per-token recurrence O(S^2); the scalar reference
 * (tests/lib/ref_forward.c) runs the per-token recurrence, and the two
 * agree to float rounding.
 *
 * States (card memory, one set per sequence, F32):
 *   conv state [K - 1][C]: the last K - 1 qkv rows, oldest first
 *   recurrent state, dn_state_floats(): M at the chunk's start [Hv][S][S]
 *   (M[h][j][i]), then the chunk's keys, d and G so far and their count
 *   (rk1828/program.h, struct rk1828_prog_dnet)
 */
#ifndef RK_EMU_DELTANET_H
#define RK_EMU_DELTANET_H

#include <stdbool.h>
#include <stddef.h>

struct tpool;

/**
 * struct dn_weight - a weight in card memory
 * @p: host pointer to the data (NULL: absent)
 * @type: QUANT_TYPE_*
 */
struct dn_weight {
	const void *p;
	int type;
};

/**
 * struct dn_layer - shapes and weights of one Gated DeltaNet mixer
 * @dim: hidden size (input of the projections, output of @out)
 * @n_k_heads: key heads Hk (ssm.group_count)
 * @n_v_heads: value heads Hv (ssm.time_step_rank), a multiple of Hk
 * @head_dim: S, the size of key and value heads (ssm.state_size)
 * @conv_k: K, conv1d taps (ssm.conv_kernel), >= 2
 * @eps: RMSNorm and L2-norm epsilon
 * @qkv: [C rows][dim]
 * @gate: [Hv * S rows][dim] (z)
 * @beta: [Hv rows][dim]
 * @alpha: [Hv rows][dim]
 * @conv: F32 [C][K] conv1d taps (tap K - 1 multiplies the newest input)
 * @dt_bias: F32 [Hv]
 * @ssm_a: F32 [Hv]
 * @norm: F32 [S] gated RMSNorm weight
 * @out: [dim rows][Hv * S]
 */
struct dn_layer {
	size_t dim, n_k_heads, n_v_heads, head_dim, conv_k;
	float eps;
	struct dn_weight qkv, gate, beta, alpha, out;
	const float *conv, *dt_bias, *ssm_a, *norm;
};

/**
 * dn_state_floats() - floats of one sequence's recurrent state block
 * @l: the layer
 *
 * Return: rk1828_dnet_state_floats(S, Hv).
 */
size_t dn_state_floats(const struct dn_layer *l);

/**
 * dn_channels() - C = 2 * Hk * S + Hv * S, the conv channels
 * @l: the layer
 *
 * Return: C.
 */
size_t dn_channels(const struct dn_layer *l);

/**
 * struct dn_buf - per-token activations of one mixer run over T tokens
 * (any number of sequences), rows in token order
 * @qkv: [T][C] projections (after dn_project())
 * @z: [T][Hv * S] output gates
 * @beta: [T][Hv] sigmoid(beta)
 * @g: [T][Hv] log decays
 * @o: [T][Hv * S] mixer outputs (dn_mix() writes the rows it runs)
 * @n_tok: T
 */
struct dn_buf {
	float *qkv, *z, *beta, *g, *o;
	size_t n_tok;
};

/**
 * dn_buf_floats() - floats of a struct dn_buf of @n_tok tokens
 * @l: the layer
 * @n_tok: T
 *
 * Return: the count.
 */
size_t dn_buf_floats(const struct dn_layer *l, size_t n_tok);

/**
 * dn_buf_init() - carve a struct dn_buf for @n_tok tokens out of @mem
 * (dn_buf_floats() floats)
 * @b: out
 * @l: the layer
 * @mem: the floats
 * @n_tok: T
 */
void dn_buf_init(struct dn_buf *b, const struct dn_layer *l, float *mem, size_t n_tok);

/**
 * dn_project() - the input projections and gates of all @b->n_tok tokens
 * @pool: thread pool (NULL: caller only)
 * @l: the layer
 * @h: normalised input, F32 [T][dim]
 * @b: fills qkv, z, beta (after the sigmoid) and g (the log decay)
 *
 * Return: 0, or -1 when a matmul fails (unsupported type, no memory).
 */
int dn_project(struct tpool *pool, const struct dn_layer *l, const float *h,
	       struct dn_buf *b);

/**
 * dn_mix_floats() - floats of work memory dn_mix() needs for @n rows
 * @l: the layer
 * @n: rows
 *
 * Return: the count.
 */
size_t dn_mix_floats(const struct dn_layer *l, size_t n);

/**
 * dn_mix() - conv, norms and delta rule of one sequence's tokens
 * @pool: thread pool (the heads run in parallel)
 * @l: the layer
 * @b: projected tokens; writes @b->o of @rows
 * @rows: @n token rows of @b, the sequence's consecutive tokens in order
 * @n: tokens (>= 1)
 * @conv_state: F32 [K - 1][C] of the sequence, read and updated
 * @ssm_state: dn_state_floats() of the sequence, read and updated
 * @work: dn_mix_floats(@l, @n) floats
 *
 * Return: 0.
 */
int dn_mix(struct tpool *pool, const struct dn_layer *l, struct dn_buf *b,
	   const size_t *rows, size_t n, float *conv_state, float *ssm_state, float *work);

/**
 * dn_output() - gated RMSNorm and output projection of all tokens
 * @pool: thread pool
 * @l: the layer
 * @b: tokens whose @o every row was written by dn_mix()
 * @out: F32 [T][dim]
 *
 * Return: 0, or -1 when the matmul fails.
 */
int dn_output(struct tpool *pool, const struct dn_layer *l, struct dn_buf *b, float *out);

/**
 * dn_forward() - the whole mixer for @n_tok consecutive tokens of one
 * sequence (dn_project(), dn_mix() of every row, dn_output())
 * @pool: thread pool (NULL: caller only)
 * @l: the layer
 * @h: normalised input, F32 [n_tok][dim]
 * @n_tok: tokens (>= 1)
 * @conv_state: F32 [K - 1][C], read and updated
 * @ssm_state: dn_state_floats(), read and updated
 * @out: F32 [n_tok][dim] (may not overlap @h)
 *
 * Return: 0, or -1 on a failed matmul or allocation.
 */
int dn_forward(struct tpool *pool, const struct dn_layer *l, const float *h, size_t n_tok,
	       float *conv_state, float *ssm_state, float *out);

#endif
