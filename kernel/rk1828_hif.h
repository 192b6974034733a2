/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * RK1828 card host interface (HIF): the wire format between the driver and
 * the card firmware (or the card emulator). All fields are little endian.
 * This header is shared by the kernel driver and the card emulator, so it
 * only uses <linux/types.h> types. The normative description is
 * Documentation/accel/rk1828/protocol.rst.
 */
#ifndef __RK1828_HIF_H__
#define __RK1828_HIF_H__

#include <linux/types.h>

/* USB identity of the card: Rockchip vendor id, RK1828 product id. */
#define RK1828_USB_VID			0x2207
#define RK1828_USB_PID			0x1828

/* Protocol version 1.0, (major << 16) | minor. */
#define RK1828_HIF_VERSION		0x00010000

/**
 * enum rk1828_hif_queue - hardware queues, one bulk endpoint pair each
 * @RK1828_HIF_QUEUE_MGMT: management (INFO, CTX_*, MAP, UNMAP); EP 1
 * @RK1828_HIF_QUEUE_COMPUTE: EXEC; EP 2
 * @RK1828_HIF_QUEUE_COPY: WRITE, READ, COPY; EP 3
 * @RK1828_HIF_NUM_QUEUES: number of queues
 *
 * Queue q uses bulk OUT endpoint (q + 1) and bulk IN endpoint
 * (0x80 | (q + 1)). Each OUT endpoint carries a byte stream of commands
 * (header + data), each IN endpoint the stream of completions (header +
 * data). A queue runs its commands in order, one at a time, and answers
 * each with exactly one completion; different queues run concurrently.
 */
enum rk1828_hif_queue {
	RK1828_HIF_QUEUE_MGMT = 0,
	RK1828_HIF_QUEUE_COMPUTE = 1,
	RK1828_HIF_QUEUE_COPY = 2,
	RK1828_HIF_NUM_QUEUES = 3,
};

/*
 * Vendor control request on EP0 (bmRequestType 0x40, no data stage):
 * abort the running command of every queue and drop all queued commands
 * and partial stream state. Aborted commands complete with no completion
 * at all; card memory, contexts and mappings are kept. The driver uses it
 * to recover from a job timeout. wValue and wIndex are zero.
 */
#define RK1828_HIF_REQ_RESET_QUEUES	0x01

#define RK1828_HIF_MAGIC		0x31434b52	/* "RKC1" */

/**
 * enum rk1828_hif_opcode - command opcodes
 * @RK1828_HIF_OP_INFO: reply data is struct rk1828_hif_info
 * @RK1828_HIF_OP_CTX_CREATE: create context @ctx (no mappings)
 * @RK1828_HIF_OP_CTX_DESTROY: destroy context @ctx and all its mappings
 * @RK1828_HIF_OP_MAP: map [arg0, arg0 + arg1) into context @ctx
 * @RK1828_HIF_OP_UNMAP: unmap the mapping that starts at arg0 of @ctx
 * @RK1828_HIF_OP_WRITE: write the command's data to card address arg0
 * @RK1828_HIF_OP_READ: reply with arg1 bytes read from card address arg0
 * @RK1828_HIF_OP_COPY: copy arg2 bytes from card address arg0 to arg1
 * @RK1828_HIF_OP_EXEC: run the program at card address arg0, arg1 bytes
 *
 * Every card address of WRITE, READ, COPY and EXEC (including every
 * address inside the program) must lie within one mapping of @ctx, or the
 * command fails with %RK1828_HIF_ST_ACCESS and touches nothing.
 */
enum rk1828_hif_opcode {
	RK1828_HIF_OP_INFO = 1,
	RK1828_HIF_OP_CTX_CREATE = 2,
	RK1828_HIF_OP_CTX_DESTROY = 3,
	RK1828_HIF_OP_MAP = 4,
	RK1828_HIF_OP_UNMAP = 5,
	RK1828_HIF_OP_WRITE = 6,
	RK1828_HIF_OP_READ = 7,
	RK1828_HIF_OP_COPY = 8,
	RK1828_HIF_OP_EXEC = 9,
};

/**
 * enum rk1828_hif_status - completion status
 * @RK1828_HIF_ST_OK: success
 * @RK1828_HIF_ST_ACCESS: an address is outside the context's mappings
 * @RK1828_HIF_ST_INVAL: malformed command or program
 * @RK1828_HIF_ST_NOCTX: unknown context
 * @RK1828_HIF_ST_NOMEM: the card ran out of internal resources
 * @RK1828_HIF_ST_BADOP: unknown opcode
 */
enum rk1828_hif_status {
	RK1828_HIF_ST_OK = 0,
	RK1828_HIF_ST_ACCESS = 1,
	RK1828_HIF_ST_INVAL = 2,
	RK1828_HIF_ST_NOCTX = 3,
	RK1828_HIF_ST_NOMEM = 4,
	RK1828_HIF_ST_BADOP = 5,
};

/**
 * struct rk1828_hif_msg - command and completion header (48 bytes)
 * @magic: %RK1828_HIF_MAGIC
 * @opcode: &enum rk1828_hif_opcode (echoed in the completion)
 * @flags: zero
 * @seq: host-chosen sequence number, echoed in the completion
 * @ctx: context id (0 for INFO)
 * @status: &enum rk1828_hif_status in a completion, zero in a command
 * @data_len: number of data bytes that follow this header in the stream
 * @arg: opcode arguments (card addresses and byte counts)
 */
struct rk1828_hif_msg {
	__le32 magic;
	__le16 opcode;
	__le16 flags;
	__le32 seq;
	__le32 ctx;
	__le32 status;
	__le32 data_len;
	__le64 arg[3];
};

/**
 * struct rk1828_hif_info - INFO reply data (64 bytes)
 * @version: %RK1828_HIF_VERSION the card speaks
 * @num_queues: %RK1828_HIF_NUM_QUEUES
 * @mem_size: card memory in bytes, addresses [0, mem_size)
 * @serial: card serial number
 * @max_ctx: highest context id the card accepts (ids start at 1)
 * @threads: compute threads (informational)
 * @fw: firmware/emulator version string, NUL padded
 */
struct rk1828_hif_info {
	__le32 version;
	__le32 num_queues;
	__le64 mem_size;
	__le64 serial;
	__le32 max_ctx;
	__le32 threads;
	char fw[32];
};

/* Segment program (EXEC). Tensor types use the GGML type numbers. */
#define RK1828_PROG_MAGIC		0x31475052	/* "RPG1" */

#define RK1828_TYPE_F32			0
#define RK1828_TYPE_F16			1
#define RK1828_TYPE_Q4_0		2
#define RK1828_TYPE_Q8_0		8

/**
 * enum rk1828_prog_op - what a program does
 * @RK1828_PROG_OP_DECODER: run @n_layers decoder layers (and the output
 *	head with %RK1828_PROG_F_OUTPUT)
 * @RK1828_PROG_OP_DELAY: test mode, spin for @delay_ms and succeed
 */
enum rk1828_prog_op {
	RK1828_PROG_OP_DECODER = 1,
	RK1828_PROG_OP_DELAY = 2,
};

/* Apply the output norm and LM head; out_addr receives logits. */
#define RK1828_PROG_F_OUTPUT		0x1U
/* With F_OUTPUT: logits for every token, not only the last one. */
#define RK1828_PROG_F_ALL_LOGITS	0x2U
/* RoPE rotates pairs (i, i + rope_dim / 2) (NEOX) instead of (2i, 2i + 1). */
#define RK1828_PROG_F_ROPE_NEOX		0x4U

/**
 * struct rk1828_hif_tensor - a weight tensor in card memory (16 bytes)
 * @addr: card address; 0 means absent (optional tensors only)
 * @type: RK1828_TYPE_*; row-major GGML layout, rows of ne0 elements
 * @pad: zero
 */
struct rk1828_hif_tensor {
	__le64 addr;
	__le32 type;
	__le32 pad;
};

/**
 * struct rk1828_hif_layer - one decoder layer (llama/qwen2/qwen3 family)
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
 * @k_cache: card address of F32 [n_ctx][n_kv_heads * head_dim]
 * @v_cache: card address of F32 [n_ctx][n_kv_heads * head_dim]
 */
struct rk1828_hif_layer {
	struct rk1828_hif_tensor attn_norm;
	struct rk1828_hif_tensor wq;
	struct rk1828_hif_tensor wk;
	struct rk1828_hif_tensor wv;
	struct rk1828_hif_tensor wo;
	struct rk1828_hif_tensor bq;
	struct rk1828_hif_tensor bk;
	struct rk1828_hif_tensor bv;
	struct rk1828_hif_tensor q_norm;
	struct rk1828_hif_tensor k_norm;
	struct rk1828_hif_tensor ffn_norm;
	struct rk1828_hif_tensor ffn_gate;
	struct rk1828_hif_tensor ffn_up;
	struct rk1828_hif_tensor ffn_down;
	__le64 k_cache;
	__le64 v_cache;
};

/**
 * struct rk1828_hif_program - segment program header (160 bytes), followed
 * by @n_layers struct rk1828_hif_layer
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
 *	with %RK1828_PROG_F_ALL_LOGITS, else 1 (last token)
 * @reserved: zero (room for later fields)
 * @output_norm: F32 [dim] (with %RK1828_PROG_F_OUTPUT)
 * @output: [n_vocab rows][dim] LM head (with %RK1828_PROG_F_OUTPUT)
 */
struct rk1828_hif_program {
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
	__le64 reserved[4];
	struct rk1828_hif_tensor output_norm;
	struct rk1828_hif_tensor output;
};

#endif /* __RK1828_HIF_H__ */
