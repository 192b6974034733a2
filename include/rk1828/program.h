/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * RK1828 segment program, format version 1: what an EXEC command runs
 * (DRM_RK1828_JOB_EXEC in uapi/drm/rk1828_accel.h, RK1828_HIF_OP_EXEC in
 * the card protocol). The program is a contract between the runtime that
 * writes it (userspace/llm/pipeline.c) and the card firmware that runs it
 * (emulator/exec.c); the kernel driver passes its address and size to the
 * card and never reads it. All fields are little endian; a program is a
 * struct rk1828_program followed by @n_layers struct rk1828_prog_layer.
 * Tensor types are the QUANT_TYPE_* numbers of rk1828/quant_blocks.h.
 * The normative text is the "Segment programs" section of
 * Documentation/accel/rk1828/protocol.rst.
 *
 * Extending the format (keep old programs valid, let a host probe):
 *
 * - A card rejects with RK1828_HIF_ST_INVAL every program that sets a
 *   flag, op, tensor type, pad or reserved word it does not know, so an
 *   addition is visible to the host as INVAL on older cards.
 * - New behaviour of an existing op: a new RK1828_PROG_F_* bit; zero keeps
 *   the version-1 behaviour.
 * - New per-program parameters: take the next @reserved word(s), named in
 *   place (the header stays 160 bytes), zero meaning "as in version 1".
 * - New kinds of work: a new enum rk1828_prog_op value with its own rules
 *   for which fields are used.
 * - New tensor formats: rk1828/quant_blocks.h.
 * - Anything that changes the size or order of existing fields (a new
 *   per-layer tensor, a different layer record) is a new format version:
 *   bump RK1828_PROG_VERSION and the magic's last character with it.
 *
 * Each addition updates the emulator's validation (emulator/exec.c), the
 * protocol text and the layout assertions next to the validation.
 */
#ifndef RK1828_PROGRAM_H
#define RK1828_PROGRAM_H

#include <linux/types.h>

#include "rk1828/kv_cache.h"
#include "rk1828/quant_blocks.h"

/* Format version; the magic's last character carries it ("RPG1"). */
#define RK1828_PROG_VERSION		1
#define RK1828_PROG_MAGIC		0x31475052	/* "RPG1" */
/*
 * Compatible revisions of version 1 (a host learns which a card knows from
 * INVAL, see above):
 *   1.0  one sequence, tokens at consecutive positions;
 *   1.1  micro-batches: %RK1828_PROG_F_BATCH, a token table with each
 *        token's position, sequence and logits request, per-sequence
 *        state regions (@n_seq, @kv_seq_stride).
 *   1.2  hybrid models (qwen35): %RK1828_PROG_OP_HYBRID with struct
 *        rk1828_prog_hlayer records (attention and Gated DeltaNet layers,
 *        attention output gate, IMROPE), state snapshots in the token
 *        table (%RK1828_PROG_TOK_SNAPSHOT, %RK1828_PROG_TOK_RESTORE).
 *   1.3  K/V cache types: @kv_type (F16, Q8_0, Q4_0 rows besides F32,
 *        rk1828/kv_cache.h) for the caches of every attention layer.
 *   1.4  final hidden states: %RK1828_PROG_F_HIDDEN (the output-normed
 *        rows of the logits tokens after the logits, for a
 *        multi-token-prediction drafter).
 */
#define RK1828_PROG_MINOR		4

/* Sizes of the fixed records in bytes (version 1). */
#define RK1828_PROG_HEADER_BYTES	160
#define RK1828_PROG_LAYER_BYTES		240
#define RK1828_PROG_HLAYER_BYTES	288

/**
 * enum rk1828_prog_op - what a program does
 * @RK1828_PROG_OP_DECODER: run @n_layers decoder layers (and the output
 *	head with %RK1828_PROG_F_OUTPUT)
 * @RK1828_PROG_OP_DELAY: test mode, spin for @delay_ms and succeed
 * @RK1828_PROG_OP_HYBRID: (1.2) as %RK1828_PROG_OP_DECODER, but the
 *	header is followed by @n_layers struct rk1828_prog_hlayer, each
 *	naming its kind; the header's attention sizes apply to its attention
 *	layers and @kv_seq_stride must be zero (every record has its own
 *	state regions)
 */
enum rk1828_prog_op {
	RK1828_PROG_OP_DECODER = 1,
	RK1828_PROG_OP_DELAY = 2,
	RK1828_PROG_OP_HYBRID = 3,
};

/* Apply the output norm and LM head; out_addr receives logits. */
#define RK1828_PROG_F_OUTPUT		0x1U
/* With F_OUTPUT: logits for every token, not only the last one. */
#define RK1828_PROG_F_ALL_LOGITS	0x2U
/* RoPE rotates pairs (i, i + rope_dim / 2) (NEOX) instead of (2i, 2i + 1). */
#define RK1828_PROG_F_ROPE_NEOX		0x4U
/*
 * Micro-batch (1.1): the tokens come with a token table at @tok_addr
 * (struct rk1828_prog_token), each with its own position and sequence;
 * @pos must be 0 and %RK1828_PROG_F_ALL_LOGITS is not allowed (the
 * table's %RK1828_PROG_TOK_LOGITS bits choose the logits rows).
 */
#define RK1828_PROG_F_BATCH		0x8U
/*
 * With F_OUTPUT (1.4): after the n_out logits rows, out_addr also receives
 * the n_out rows the LM head read, rmsnorm(x) * output_norm (F32
 * [n_out][dim], the final hidden state a Qwen3.5 MTP block takes).
 */
#define RK1828_PROG_F_HIDDEN		0x10U

/*
 * Per-sequence state (1.1). Everything a card keeps per sequence between
 * programs (the K and V caches of a layer here; a recurrent state or a
 * convolution window for other layer kinds) lives in a *state region*:
 * @n_seq blocks of equal layout, the block of sequence s at
 * base + s * stride. A layer record names each region's base; the stride
 * of the version-1 layer record's @k_cache and @v_cache is the header's
 * @kv_seq_stride, and a later layer kind carries one struct
 * rk1828_prog_state per region (base and its own stride). The card
 * checks that all @n_seq blocks lie in the context's mappings and that
 * blocks do not overlap (stride >= block size). Which sequence is which
 * is the host's business: besides the live sessions a host may keep
 * snapshots of a state (e.g. a recurrent state at a bucket boundary, for
 * a prefix cache) in spare sequence indices and copy blocks with COPY.
 */

/**
 * struct rk1828_prog_state - a per-sequence state region (16 bytes), for
 * layer records that carry their own state addresses
 * @addr: card address of the block of sequence 0
 * @seq_stride: bytes from the block of sequence s to that of s + 1
 */
struct rk1828_prog_state {
	__le64 addr;
	__le64 seq_stride;
};

/* struct rk1828_prog_token.flags: return this token's logits (F_OUTPUT). */
#define RK1828_PROG_TOK_LOGITS		0x1U
/*
 * (1.2, %RK1828_PROG_OP_HYBRID) After this token, copy the recurrent
 * states of its sequence (the conv and DeltaNet state blocks of every
 * DeltaNet layer of the program; K/V caches are not copied) into the
 * blocks of sequence @aux, a live sequence or one of the header's @n_snap
 * snapshot blocks: a checkpoint, e.g. at a bucket boundary, that a prefix
 * cache can restore.
 */
#define RK1828_PROG_TOK_SNAPSHOT	0x2U
/*
 * (1.2, %RK1828_PROG_OP_HYBRID) Before this token, which must be the first
 * of its sequence in the program, copy those blocks of sequence @aux into
 * its sequence's (resume from a checkpoint).
 */
#define RK1828_PROG_TOK_RESTORE		0x4U

/**
 * struct rk1828_prog_token - one token of a micro-batch (16 bytes), entry
 * t of the table at @tok_addr, for the hidden state row t of @in_addr
 * @pos: its position in its sequence: its K/V row, and attention covers
 *	rows 0..@pos of that sequence (< @n_ctx)
 * @seq: its sequence (< @n_seq): which block of every state region it
 *	reads and writes
 * @flags: RK1828_PROG_TOK_*
 * @aux: with %RK1828_PROG_TOK_SNAPSHOT or %RK1828_PROG_TOK_RESTORE the
 *	other sequence (< @n_seq + @n_snap, not @seq); else zero
 *
 * Within one program, (@seq, @pos) pairs are distinct. All K/V rows of a
 * program are written before any attention reads, so tokens of one
 * sequence may share a program (a prefill chunk); rows below a token's
 * position that no token of the program writes must hold what earlier
 * programs wrote there. A DeltaNet layer (%RK1828_PROG_OP_HYBRID) runs
 * the tokens of each sequence in table order, so they must come at
 * consecutive increasing positions, continuing its recurrent state; a
 * sequence whose first token in the program is at position 0 starts from
 * zero states (unless that token restores a snapshot).
 */
struct rk1828_prog_token {
	__le32 pos;
	__le32 seq;
	__le32 flags;
	__le32 aux;
};

/**
 * struct rk1828_prog_tensor - a weight tensor in card memory (16 bytes)
 * @addr: card address; 0 means absent (optional tensors only)
 * @type: QUANT_TYPE_* (rk1828/quant_blocks.h); row-major, rows of ne0
 *	elements
 * @pad: zero
 */
struct rk1828_prog_tensor {
	__le64 addr;
	__le32 type;
	__le32 pad;
};

/**
 * struct rk1828_prog_layer - one decoder layer (llama/qwen2/qwen3 family),
 * 240 bytes
 * @attn_norm: F32 [dim]
 * @wq: [n_heads * head_dim rows][dim]
 * @wk: [n_kv_heads * head_dim rows][dim]
 * @wv: [n_kv_heads * head_dim rows][dim]
 * @wo: [dim rows][n_heads * head_dim]
 * @bq: optional F32 bias [n_heads * head_dim] (qwen2)
 * @bk: optional F32 bias [n_kv_heads * head_dim] (qwen2)
 * @bv: optional F32 bias [n_kv_heads * head_dim] (qwen2)
 * @q_norm: optional F32 per-head RMSNorm weight [head_dim] (qwen3)
 * @k_norm: optional F32 per-head RMSNorm weight [head_dim] (qwen3)
 * @ffn_norm: F32 [dim]
 * @ffn_gate: [ffn_dim rows][dim]
 * @ffn_up: [ffn_dim rows][dim]
 * @ffn_down: [dim rows][ffn_dim]
 * @k_cache: card address of [n_ctx] rows of n_kv_heads * head_dim values
 *	in the header's @kv_type (F32 in 1.0-1.2; rk1828/kv_cache.h) (with
 *	%RK1828_PROG_F_BATCH: of sequence 0 of a state region of @n_seq such
 *	blocks, @kv_seq_stride apart)
 * @v_cache: as @k_cache, for the values
 */
struct rk1828_prog_layer {
	struct rk1828_prog_tensor attn_norm;
	struct rk1828_prog_tensor wq;
	struct rk1828_prog_tensor wk;
	struct rk1828_prog_tensor wv;
	struct rk1828_prog_tensor wo;
	struct rk1828_prog_tensor bq;
	struct rk1828_prog_tensor bk;
	struct rk1828_prog_tensor bv;
	struct rk1828_prog_tensor q_norm;
	struct rk1828_prog_tensor k_norm;
	struct rk1828_prog_tensor ffn_norm;
	struct rk1828_prog_tensor ffn_gate;
	struct rk1828_prog_tensor ffn_up;
	struct rk1828_prog_tensor ffn_down;
	__le64 k_cache;
	__le64 v_cache;
};

/**
 * enum rk1828_prog_layer_kind - struct rk1828_prog_hlayer.kind
 * @RK1828_PROG_LAYER_ATTN: self-attention over a K/V cache (as struct
 *	rk1828_prog_layer, plus the @flags options)
 * @RK1828_PROG_LAYER_DELTANET: Gated DeltaNet linear attention (qwen35):
 *	qkv projection, causal depthwise conv1d over a conv state, per-head
 *	decay and beta gates, the delta-rule update of a recurrent state
 *	matrix per value head, gated RMSNorm, output projection
 */
enum rk1828_prog_layer_kind {
	RK1828_PROG_LAYER_ATTN = 1,
	RK1828_PROG_LAYER_DELTANET = 2,
};

/*
 * struct rk1828_prog_hlayer.flags of an attention layer: the q projection
 * has 2 * head_dim rows per head, first the query, then an output gate;
 * each head's attention output is multiplied by sigmoid(gate) (qwen35).
 */
#define RK1828_PROG_LF_GATE		0x1U
/*
 * ... and RoPE is interleaved multi-section (IMROPE, ggml's
 * GGML_ROPE_TYPE_IMROPE) with @rope_sections: rotated pair i (NEOX pairs
 * (i, i + rope_dim / 2)) has sector c = i mod (s0 + s1 + s2 + s3); it
 * turns by pos * rope_theta^(-2i / rope_dim) when c mod 3 == 0 and
 * c < 3 s0, c mod 3 == 1 and c < 3 s1, or c mod 3 == 2 and c < 3 s2 (the
 * temporal, height and width sections, all the token position for text),
 * and not at all otherwise (the fourth section, position 0 for text).
 */
#define RK1828_PROG_LF_IMROPE		0x2U

/**
 * struct rk1828_prog_attn - the attention part of an hlayer (160 bytes)
 * @wq: [n_heads * head_dim rows][dim], or with %RK1828_PROG_LF_GATE
 *	[n_heads * 2 * head_dim rows][dim] ([query, gate] per head)
 * @wk: [n_kv_heads * head_dim rows][dim]
 * @wv: [n_kv_heads * head_dim rows][dim]
 * @wo: [dim rows][n_heads * head_dim]
 * @bq: optional F32 bias [n_heads * head_dim] (not with LF_GATE)
 * @bk: optional F32 bias [n_kv_heads * head_dim]
 * @bv: optional F32 bias [n_kv_heads * head_dim]
 * @q_norm: optional F32 per-head RMSNorm weight [head_dim]
 * @k_norm: optional F32 per-head RMSNorm weight [head_dim]
 * @rope_sections: with %RK1828_PROG_LF_IMROPE, sections s0..s3 (not all 0)
 * @pad: zero
 */
struct rk1828_prog_attn {
	struct rk1828_prog_tensor wq;
	struct rk1828_prog_tensor wk;
	struct rk1828_prog_tensor wv;
	struct rk1828_prog_tensor wo;
	struct rk1828_prog_tensor bq;
	struct rk1828_prog_tensor bk;
	struct rk1828_prog_tensor bv;
	struct rk1828_prog_tensor q_norm;
	struct rk1828_prog_tensor k_norm;
	__le16 rope_sections[4];
	__le32 pad[2];
};

/* Positions per chunk of a DeltaNet recurrent state (1.2). */
#define RK1828_DNET_CHUNK		16

/**
 * rk1828_dnet_state_floats() - floats of one sequence's recurrent state
 * block of a DeltaNet layer with @n_v_heads value heads of @head_dim
 * @head_dim: S
 * @n_v_heads: Hv
 *
 * Return: Hv S^2 + CHUNK (2 Hv S + Hv) + 1 (struct rk1828_prog_dnet has
 * the layout).
 */
static inline __u64 rk1828_dnet_state_floats(__u64 head_dim, __u64 n_v_heads)
{
	return n_v_heads * head_dim * head_dim +
	       RK1828_DNET_CHUNK * (2 * n_v_heads * head_dim + n_v_heads) + 1;
}

/**
 * struct rk1828_prog_dnet - the Gated DeltaNet part of an hlayer (160
 * bytes); S = @head_dim, Hk = @n_k_heads, Hv = @n_v_heads, K = @conv_kernel,
 * C = (2 Hk + Hv) S conv channels. Value head h uses key head h mod Hk.
 * @qkv: [C rows][dim]: queries (Hk S), keys (Hk S), values (Hv S)
 * @gate: [Hv S rows][dim], the output gate z
 * @beta: [Hv rows][dim]; beta = sigmoid(beta . h)
 * @alpha: [Hv rows][dim]; decay g = softplus(alpha . h + dt_bias) * ssm_a
 * @conv: F32 [C][K] depthwise conv1d taps, tap K - 1 on the newest input
 * @dt_bias: F32 [Hv]
 * @ssm_a: F32 [Hv], negative (-exp(A_log))
 * @norm: F32 [S] weight of the gated RMSNorm
 * @out: [dim rows][Hv S]
 * @head_dim: S (1..1024)
 * @n_k_heads: Hk (>= 1)
 * @n_v_heads: Hv, a multiple of Hk
 * @conv_kernel: K (2..16)
 * @pad: zero
 *
 * q and k are L2-normalised per head (x / sqrt(sum x^2 + rms_eps)), q then
 * scaled by S^-1/2; per token, M <- e^g M; d = beta (v - M k);
 * M <- M + d k^T; o = M q (M[j][i]: value j, key i); out = Wout (rmsnorm(o)
 * * norm * silu(z)) per head. The conv runs after the projection and
 * before the split, followed by silu. Emulator: emulator/deltanet.h.
 *
 * The recurrent state region of a sequence holds that recurrence in the
 * chunked form over chunks of %RK1828_DNET_CHUNK positions aligned to
 * position 0 (see rk1828_dnet_state_floats()): the state M at the start
 * of the current chunk, F32 [Hv][S][S], then for the chunk's tokens seen
 * so far (at most %RK1828_DNET_CHUNK - 1; room for CHUNK) their keys K,
 * F32 [CHUNK][Hv][S] (each value head's copy of its key head's key), their
 * corrected values D, F32 [CHUNK][Hv][S], and their cumulative log decays
 * G, F32 [CHUNK][Hv], then the number of them, one F32. A
 * token's output then depends only on the state at its chunk's start and
 * the chunk's earlier tokens, not on how tokens were grouped into programs.
 */
struct rk1828_prog_dnet {
	struct rk1828_prog_tensor qkv;
	struct rk1828_prog_tensor gate;
	struct rk1828_prog_tensor beta;
	struct rk1828_prog_tensor alpha;
	struct rk1828_prog_tensor conv;
	struct rk1828_prog_tensor dt_bias;
	struct rk1828_prog_tensor ssm_a;
	struct rk1828_prog_tensor norm;
	struct rk1828_prog_tensor out;
	__le32 head_dim;
	__le16 n_k_heads;
	__le16 n_v_heads;
	__le32 conv_kernel;
	__le32 pad;
};

/**
 * struct rk1828_prog_hlayer - one layer of a %RK1828_PROG_OP_HYBRID
 * program (288 bytes)
 * @kind: &enum rk1828_prog_layer_kind
 * @flags: RK1828_PROG_LF_* (attention layers; zero for DeltaNet)
 * @attn_norm: F32 [dim], the norm before the token mixer
 * @attn: the attention tensors (@kind ATTN)
 * @dnet: the DeltaNet tensors and sizes (@kind DELTANET)
 * @ffn_norm: F32 [dim] (qwen35's post_attention_norm)
 * @ffn_gate: [ffn_dim rows][dim]
 * @ffn_up: [ffn_dim rows][dim]
 * @ffn_down: [dim rows][ffn_dim]
 * @state: the per-sequence state regions: ATTN the K and V caches,
 *	[n_ctx] rows of n_kv_heads * head_dim values in the header's
 *	@kv_type each (rk1828_kv_seq_bytes()); DELTANET the conv state, F32
 *	[K - 1][C] (the last K - 1 qkv rows, oldest first), and the recurrent
 *	state, rk1828_dnet_state_floats() F32 (struct rk1828_prog_dnet has
 *	its layout). Without %RK1828_PROG_F_BATCH one sequence
 *	and @seq_stride zero; else @n_seq blocks (DELTANET: @n_seq + @n_snap),
 *	@seq_stride >= the block size and a multiple of 4
 * @reserved: zero
 *
 * The residual structure is the decoder layer's: x += mixer(rmsnorm(x) *
 * attn_norm); x += ffn(rmsnorm(x) * ffn_norm).
 */
struct rk1828_prog_hlayer {
	__le32 kind;
	__le32 flags;
	struct rk1828_prog_tensor attn_norm;
	union {
		struct rk1828_prog_attn attn;
		struct rk1828_prog_dnet dnet;
	};
	struct rk1828_prog_tensor ffn_norm;
	struct rk1828_prog_tensor ffn_gate;
	struct rk1828_prog_tensor ffn_up;
	struct rk1828_prog_tensor ffn_down;
	struct rk1828_prog_state state[2];
	__le64 reserved;
};

/**
 * struct rk1828_program - segment program header (160 bytes), followed
 * by @n_layers struct rk1828_prog_layer
 * @magic: %RK1828_PROG_MAGIC
 * @op: &enum rk1828_prog_op
 * @size: total bytes, header plus layers
 * @n_layers: decoder layers in this segment
 * @first_layer: model index of the first layer (logs only)
 * @n_tokens: tokens in this bucket, >= 1
 * @pos: position of the first token; KV rows [pos, pos + n_tokens) are
 *	written, attention is causal over rows [0, pos + t]
 * @flags: RK1828_PROG_F_*
 * @dim: embedding size
 * @n_heads: query heads
 * @n_kv_heads: key/value heads (grouped-query attention), divides @n_heads
 * @head_dim: size of one head
 * @ffn_dim: FFN hidden size
 * @n_ctx: KV cache rows
 * @rope_dim: leading dimensions of each head that RoPE rotates (even)
 * @n_vocab: LM head rows (with %RK1828_PROG_F_OUTPUT)
 * @rms_eps: RMSNorm epsilon, IEEE-754 float bits
 * @rope_theta: RoPE base frequency, IEEE-754 float bits
 * @delay_ms: %RK1828_PROG_OP_DELAY only
 * @pad: zero
 * @in_addr: F32 [n_tokens][dim] hidden states in
 * @out_addr: F32 [n_tokens][dim] hidden states out, or with
 *	%RK1828_PROG_F_OUTPUT F32 logits [n_out][n_vocab], n_out = n_tokens
 *	with %RK1828_PROG_F_ALL_LOGITS, with %RK1828_PROG_F_BATCH the number
 *	of tokens with %RK1828_PROG_TOK_LOGITS (in token order; 0: the head
 *	does not run and @out_addr is not accessed), else 1 (last token)
 * @tok_addr: %RK1828_PROG_F_BATCH: card address of @n_tokens struct
 *	rk1828_prog_token (4-byte aligned); else zero
 * @kv_seq_stride: %RK1828_PROG_F_BATCH: bytes from sequence s to s + 1 in
 *	every layer's @k_cache and @v_cache, a multiple of 4 and at least
 *	rk1828_kv_seq_bytes(@kv_type, n_ctx, n_kv_heads * head_dim); else zero
 * @n_seq: %RK1828_PROG_F_BATCH: sequences of every state region (>= 1);
 *	else zero (one sequence)
 * @n_snap: (1.2) %RK1828_PROG_OP_HYBRID with %RK1828_PROG_F_BATCH:
 *	snapshot blocks after the @n_seq sequence blocks of every DeltaNet
 *	state region (sequence indices n_seq .. n_seq + n_snap - 1, reachable
 *	only as the @aux of %RK1828_PROG_TOK_SNAPSHOT / _RESTORE; K/V regions
 *	have none); else zero
 * @kv_type: (1.3) the type of every attention layer's K and V cache rows:
 *	QUANT_TYPE_F32 (0, as before 1.3), _F16, _Q8_0 or _Q4_0
 *	(rk1828_kv_type_ok()); with Q8_0 or Q4_0, n_kv_heads * head_dim must
 *	be a multiple of 32. Gated DeltaNet states stay F32
 * @reserved: zero; room for later per-program parameters (see the
 *	extension rules at the top of this header)
 * @output_norm: F32 [dim] (with %RK1828_PROG_F_OUTPUT)
 * @output: [n_vocab rows][dim] LM head (with %RK1828_PROG_F_OUTPUT)
 */
struct rk1828_program {
	__le32 magic;
	__le32 op;
	__le32 size;
	__le32 n_layers;
	__le32 first_layer;
	__le32 n_tokens;
	__le32 pos;
	__le32 flags;
	__le32 dim;
	__le32 n_heads;
	__le32 n_kv_heads;
	__le32 head_dim;
	__le32 ffn_dim;
	__le32 n_ctx;
	__le32 rope_dim;
	__le32 n_vocab;
	__le32 rms_eps;
	__le32 rope_theta;
	__le32 delay_ms;
	__le32 pad;
	__le64 in_addr;
	__le64 out_addr;
	__le64 tok_addr;
	__le64 kv_seq_stride;
	__le32 n_seq;
	__le32 n_snap;
	__le32 kv_type;
	__le32 reserved;
	struct rk1828_prog_tensor output_norm;
	struct rk1828_prog_tensor output;
};

_Static_assert(sizeof(struct rk1828_prog_tensor) == 16, "tensor record");
_Static_assert(sizeof(struct rk1828_prog_state) == 16, "state region record");
_Static_assert(sizeof(struct rk1828_prog_token) == 16, "token record");
_Static_assert(sizeof(struct rk1828_prog_layer) == RK1828_PROG_LAYER_BYTES, "layer record");
_Static_assert(sizeof(struct rk1828_prog_attn) == 160, "hybrid attention part");
_Static_assert(sizeof(struct rk1828_prog_dnet) == 160, "hybrid DeltaNet part");
_Static_assert(sizeof(struct rk1828_prog_hlayer) == RK1828_PROG_HLAYER_BYTES, "hybrid layer record");
_Static_assert(sizeof(struct rk1828_program) == RK1828_PROG_HEADER_BYTES, "program header");

#endif /* RK1828_PROGRAM_H */
