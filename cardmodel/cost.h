/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * The RK1828 cost function: how long a card takes for one job, from the
 * job's bytes, FLOPs and operator count and a card profile (profile.h).
 * This is the one place where card time is modelled: the emulator's
 * timing mode (emulator/timing.c) completes each job at the time computed
 * here, the planner's prediction (userspace/llm/predict.c) adds up the
 * same times over the pipeline's job graph, and the profile fit
 * (tools/fit_profile.c) solves for the profile's parameters with the
 * same work counts. userspace/doc/timing.rst describes the
 * model, its sources and its limits.
 *
 * The model, for one EXEC job (all times add; nothing overlaps inside a
 * job, a deliberate, conservative choice the fit absorbs):
 *
 *   t = job_ns + ops * op_ns + op_rows * op_row_ns
 *       + dram_bytes / dram_bw
 *       + sum over precisions p of mm_flops[p] / mm_rate[p]
 *       + vec_ops / vec_rate
 *       + dn_layers * deltanet_ns + dn_rows * deltanet_row_ns
 *
 * where a job's work is the sum of its layers' (cost_layer_work()) and
 * its output head's (cost_head_work()):
 *   ops       operator launches (norm, projection, RoPE, attention, ...);
 *   op_rows   token rows those operators process (ops * tokens);
 *   dram_bytes weights read once per job, K/V rows read (once a job for
 *             each sequence) and written,
 *             recurrent state read and written once per chunk, and each
 *             operator's activations in A16 (2 bytes an element);
 *   mm_flops  2 * rows * cols * tokens per weight matrix, at the precision
 *             class of its storage (cost_prec_of()), and the attention and
 *             delta-rule GEMMs (A16 x A16, COST_PREC_F16);
 *   vec_ops   element operations of the vector unit (norms, RoPE,
 *             softmax, activations, gates, residuals, state decay).
 *   dn_layers, dn_rows  Gated DeltaNet layers and their token rows: a
 *             cost of those layers beyond the counts above, which the
 *             multi-card Qwen3.5 figures show (timing.rst; 0 unless the
 *             profile sets npu.deltanet_ns / npu.deltanet_row_ns).
 *
 * The caller describes its layers in the neutral struct cost_layer (the
 * emulator from a segment program, the planner from a GGUF model), so
 * both sides count the same work for the same layer. No library beyond
 * libc; nothing here knows program or file formats.
 */
#ifndef RK1828_CARDMODEL_COST_H
#define RK1828_CARDMODEL_COST_H

#include <stdbool.h>
#include <stdint.h>

struct card_profile;

/**
 * enum cost_prec - matmul precision class of a weight matrix
 * @COST_PREC_W4A16: 4 to 5.5 bits a weight (Q4_0, Q4_1, Q4_K, Q5_*), 16-bit
 *	activations: the vendor's W4A16 path
 * @COST_PREC_W8A16: 5.5 to 9 bits a weight (Q6_K, Q8_0)
 * @COST_PREC_F16: 16-bit weights (F16, BF16), and A16 x A16 GEMMs
 *	(attention scores and values, delta-rule chunks)
 * @COST_PREC_F32: 32-bit weights
 * @COST_PREC_N: number of classes
 */
enum cost_prec {
	COST_PREC_W4A16,
	COST_PREC_W8A16,
	COST_PREC_F16,
	COST_PREC_F32,
	COST_PREC_N,
};

/**
 * enum cost_link - host link of a card
 * @COST_LINK_USB: USB 3.0 (5 Gbit/s)
 * @COST_LINK_PCIE: PCIe 2.1 x2
 * @COST_LINK_N: number of links
 */
enum cost_link {
	COST_LINK_USB,
	COST_LINK_PCIE,
	COST_LINK_N,
};

/**
 * enum cost_mixer - the token mixer of a decoder layer
 * @COST_MIX_ATTN: self-attention over a K/V cache (llama, qwen2, qwen3,
 *	qwen35's full-attention layers)
 * @COST_MIX_DELTANET: Gated DeltaNet linear attention (qwen35)
 */
enum cost_mixer {
	COST_MIX_ATTN,
	COST_MIX_DELTANET,
};

/* Tokens of one sequence the delta rule processes as one chunk (prefill). */
#define COST_DN_CHUNK		64

/* Most weight matrices of one layer (qwen35 DeltaNet: 5 + FFN 3). */
#define COST_MAX_MATS		10

/**
 * struct cost_matrix - one weight matrix as stored on the card
 * @rows: output features
 * @cols: input features (row length)
 * @bytes: card bytes of the whole matrix in its storage type
 */
struct cost_matrix {
	uint32_t rows;
	uint32_t cols;
	uint64_t bytes;
};

/**
 * struct cost_layer - one decoder layer as the card runs it
 * @mixer: &enum cost_mixer
 * @dim: hidden size
 * @ffn_dim: SwiGLU hidden size
 * @n_heads: query heads (attention)
 * @n_kv_heads: key/value heads (attention)
 * @head_dim: size of one attention head
 * @qk_norm: per-head RMSNorm of q and k (qwen3, qwen35)
 * @bias: q/k/v biases (qwen2)
 * @gate: sigmoid output gate on the attention (qwen35)
 * @kv_elt_bytes: bytes of one K/V cache element, a block's bytes over its
 *	values for the block types (4 F32, 2 F16, 34/32 Q8_0, 18/32 Q4_0)
 * @dn_head_dim: DeltaNet head size S
 * @dn_k_heads: DeltaNet key heads
 * @dn_v_heads: DeltaNet value heads (the recurrent state is
 *	dn_v_heads x S x S)
 * @dn_conv: DeltaNet conv1d kernel size
 * @state_elt_bytes: bytes of one recurrent-state element (4: F32)
 * @n_mats: entries of @mat
 * @mat: every weight matrix of the layer (projections and FFN)
 * @small_bytes: bytes of the small tensors read once per job (norm
 *	weights, biases, conv taps, gates' parameters)
 */
struct cost_layer {
	enum cost_mixer mixer;
	uint32_t dim;
	uint32_t ffn_dim;
	uint32_t n_heads;
	uint32_t n_kv_heads;
	uint32_t head_dim;
	bool qk_norm;
	bool bias;
	bool gate;
	double kv_elt_bytes;
	uint32_t dn_head_dim;
	uint32_t dn_k_heads;
	uint32_t dn_v_heads;
	uint32_t dn_conv;
	uint32_t state_elt_bytes;
	uint32_t n_mats;
	struct cost_matrix mat[COST_MAX_MATS];
	uint64_t small_bytes;
};

/**
 * struct cost_head - the output head (final norm + LM head)
 * @dim: hidden size
 * @n_vocab: LM head rows
 * @bytes: card bytes of the LM head matrix
 */
struct cost_head {
	uint32_t dim;
	uint32_t n_vocab;
	uint64_t bytes;
};

/**
 * struct cost_batch - the tokens of one job (a bucket or a micro-batch)
 * @n_tokens: token rows
 * @n_seq: distinct sequences among them (recurrent state read and written
 *	per sequence)
 * @ctx_sum: sum over the tokens of the K/V rows each attends to (position
 *	+ 1): the attention's FLOPs
 * @kv_rows: sum over the sequences of the K/V rows their last token
 *	attends to: the rows an attention job reads from DRAM (the card tiles
 *	a sequence's queries and streams its K/V rows once a job)
 * @dn_chunks: sum over the sequences of ceil(tokens of that sequence /
 *	COST_DN_CHUNK): delta-rule chunks
 * @dn_chunk_sq: sum over those chunks of (tokens in the chunk)^2, for
 *	the intra-chunk GEMMs
 * @n_logits: rows that go through the output head (0: it does not run)
 *
 * Fill with cost_batch_add_seq(), or directly.
 */
struct cost_batch {
	uint32_t n_tokens;
	uint32_t n_seq;
	uint64_t ctx_sum;
	uint64_t kv_rows;
	uint64_t dn_chunks;
	uint64_t dn_chunk_sq;
	uint32_t n_logits;
};

/**
 * struct cost_work - what a job does, counted by kind
 * @ops: operator launches
 * @op_rows: token rows over all operators
 * @dram_bytes: bytes read and written in card DRAM
 * @mm_flops: matmul FLOPs by &enum cost_prec
 * @vec_ops: vector-unit element operations
 * @dn_layers: Gated DeltaNet layers in the job (profile npu.deltanet_ns)
 * @dn_rows: token rows over those layers (npu.deltanet_row_ns)
 */
struct cost_work {
	double ops;
	double op_rows;
	double dram_bytes;
	double mm_flops[COST_PREC_N];
	double vec_ops;
	double dn_layers;
	double dn_rows;
};

/**
 * cost_prec_of() - precision class of a matrix from its storage density
 * @m: the matrix
 *
 * Bits a weight = 8 * bytes / (rows * cols): up to 5.5 is W4A16, up to 9
 * W8A16, up to 16.5 F16, above F32. No tensor-type table is needed, so
 * every block format (present or future) lands in its class.
 *
 * Return: &enum cost_prec (COST_PREC_F32 for an empty matrix).
 */
enum cost_prec cost_prec_of(const struct cost_matrix *m);

/**
 * cost_batch_add_seq() - add @n tokens of one sequence at positions
 * [@first_pos, @first_pos + @n) to @b
 * @b: the batch
 * @n: tokens (0 is a no-op)
 * @first_pos: position of the first
 * @n_logits: of them, rows whose logits are wanted
 */
void cost_batch_add_seq(struct cost_batch *b, uint32_t n, uint64_t first_pos,
			uint32_t n_logits);

/**
 * cost_layer_ops() - operator launches of one layer (the launch count the
 * profile's op_ns applies to): per mixer and options, see cost.c
 * @l: the layer
 * Return: operators per job.
 */
unsigned int cost_layer_ops(const struct cost_layer *l);

/**
 * cost_layer_work() - add the work of layer @l on batch @b to @w
 * @l: the layer
 * @b: the tokens
 * @w: accumulated (zero it first)
 */
void cost_layer_work(const struct cost_layer *l, const struct cost_batch *b,
		     struct cost_work *w);

/**
 * cost_head_work() - add the work of the output head on @b->n_logits rows
 * to @w (nothing when there are none)
 * @h: the head
 * @b: the tokens
 * @w: accumulated
 */
void cost_head_work(const struct cost_head *h, const struct cost_batch *b,
		    struct cost_work *w);

/**
 * cost_work_ns() - modelled time of one EXEC job doing @w on a card of
 * profile @p: the formula at the top of this header, job_ns included
 * @p: the profile
 * @w: the job's work
 * Return: nanoseconds.
 */
double cost_work_ns(const struct card_profile *p, const struct cost_work *w);

/**
 * cost_exec_ns() - cost_work_ns() of @n layers (and the head when @h is
 * not NULL and @b->n_logits > 0) on batch @b
 * Return: nanoseconds.
 */
double cost_exec_ns(const struct card_profile *p, const struct cost_layer *layers,
		    unsigned int n, const struct cost_head *h,
		    const struct cost_batch *b);

/**
 * cost_link_ns() - modelled time of moving @bytes between host and card
 * over @link: latency + bytes / bandwidth of the profile's link
 * Return: nanoseconds (0 for an unknown link).
 */
double cost_link_ns(const struct card_profile *p, enum cost_link link, uint64_t bytes);

/**
 * cost_card_copy_ns() - modelled time of a card-internal COPY of @bytes
 * (read and written in DRAM)
 * Return: nanoseconds.
 */
double cost_card_copy_ns(const struct card_profile *p, uint64_t bytes);

/** cost_link_name() - "usb" or "pcie" ("?" for an unknown value). */
const char *cost_link_name(enum cost_link link);

/**
 * cost_link_parse() - "usb" or "pcie" to @out
 * Return: 0, or -1 for any other string.
 */
int cost_link_parse(const char *s, enum cost_link *out);

#endif /* RK1828_CARDMODEL_COST_H */
