/* SPDX-License-Identifier: MIT */
/*
 * Decoder-only transformer description read from a GGUF file: the
 * hyperparameters and every weight tensor of the llama family (llama,
 * qwen2 with Q/K/V biases, qwen3 with per-head Q/K RMSNorm) and of qwen35
 * (Qwen3.5: Gated DeltaNet layers interleaved with gated full-attention
 * layers, llama.cpp src/models/qwen35.cpp), validated
 * against the shapes the segment program (include/rk1828/program.h,
 * struct rk1828_prog_layer) expects.
 *
 * Key and tensor names follow llama.cpp's GGUF conventions
 * (gguf-py/gguf/constants.py: LLM_KV_*, MODEL_TENSOR names).
 */
#ifndef RK_LLM_MODEL_H
#define RK_LLM_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gguf.h"

/**
 * enum llm_arch - supported general.architecture values
 * @LLM_ARCH_LLAMA: "llama" (RoPE on adjacent pairs)
 * @LLM_ARCH_QWEN2: "qwen2" (NEOX RoPE, Q/K/V biases)
 * @LLM_ARCH_QWEN3: "qwen3" (NEOX RoPE, per-head Q/K RMSNorm)
 * @LLM_ARCH_QWEN35: "qwen35" (hybrid: Gated DeltaNet + gated attention,
 *	IMROPE, q/k norm, post-attention norm)
 */
enum llm_arch {
	LLM_ARCH_LLAMA,
	LLM_ARCH_QWEN2,
	LLM_ARCH_QWEN3,
	LLM_ARCH_QWEN35,
};

/* The general.architecture values llm_model_load() accepts, for messages. */
#define LLM_SUPPORTED_ARCHS "llama, qwen2, qwen3, qwen35"

/**
 * enum llm_layer_kind - what mixes the tokens in a block
 * @LLM_LAYER_ATTN: (grouped-query) self-attention with a KV cache
 * @LLM_LAYER_DELTANET: qwen35 Gated DeltaNet linear attention with a conv
 *	state and a recurrent state per sequence
 */
enum llm_layer_kind {
	LLM_LAYER_ATTN,
	LLM_LAYER_DELTANET,
};

/**
 * struct llm_layer - tensors of one decoder block (blk.N.*); optional ones
 * are NULL when absent. Shapes are GGUF ne[] (ne[0] = row length):
 * @attn_norm: [dim] (F32 or F16)
 * @wq: [dim, n_heads * head_dim]
 * @wk, @wv: [dim, n_kv_heads * head_dim]
 * @wo: [n_heads * head_dim, dim]
 * @bq: optional [n_heads * head_dim]; @bk, @bv: optional [n_kv_heads * head_dim]
 * @q_norm, @k_norm: optional [head_dim]
 * @ffn_norm: [dim] (qwen35: blk.N.post_attention_norm)
 * @ffn_gate, @ffn_up: [dim, ffn_dim]
 * @ffn_down: [ffn_dim, dim]
 * @kind: &enum llm_layer_kind; the attention tensors are NULL in a
 *	DeltaNet layer and the ssm ones in an attention layer. qwen35
 *	attention layers have @wq [dim, 2 * n_heads * head_dim]: per head
 *	head_dim query rows then head_dim output-gate rows.
 * @ssm_qkv: attn_qkv [dim, 2 * ssm_k_heads * ssm_state + ssm_v_heads * ssm_state]
 * @ssm_gate: attn_gate [dim, ssm_v_heads * ssm_state] (z)
 * @ssm_beta, @ssm_alpha: [dim, ssm_v_heads]
 * @ssm_conv: ssm_conv1d [ssm_conv, channels] (F32)
 * @ssm_dt: ssm_dt.bias [ssm_v_heads]; @ssm_a: ssm_a [ssm_v_heads] (F32)
 * @ssm_norm: [ssm_state]
 * @ssm_out: [ssm_v_heads * ssm_state, dim]
 */
struct llm_layer {
	enum llm_layer_kind kind;
	const struct gguf_tensor *attn_norm, *wq, *wk, *wv, *wo;
	const struct gguf_tensor *bq, *bk, *bv, *q_norm, *k_norm;
	const struct gguf_tensor *ffn_norm, *ffn_gate, *ffn_up, *ffn_down;
	const struct gguf_tensor *ssm_qkv, *ssm_gate, *ssm_beta, *ssm_alpha, *ssm_conv;
	const struct gguf_tensor *ssm_dt, *ssm_a, *ssm_norm, *ssm_out;
};

/**
 * struct llm_model - validated model description (tensors point into the
 * mapped GGUF file, which must outlive the model)
 * @gf: the GGUF file
 * @arch: architecture
 * @arch_name: general.architecture string
 * @n_layers: <arch>.block_count
 * @dim: <arch>.embedding_length
 * @ffn_dim: <arch>.feed_forward_length
 * @n_heads: <arch>.attention.head_count
 * @n_kv_heads: <arch>.attention.head_count_kv (default @n_heads)
 * @head_dim: <arch>.attention.key_length (default @dim / @n_heads)
 * @rope_dim: <arch>.rope.dimension_count (default @head_dim)
 * @n_ctx_train: <arch>.context_length (default 2048)
 * @n_vocab: rows of token_embd
 * @rope_theta: <arch>.rope.freq_base (default 10000)
 * @rms_eps: <arch>.attention.layer_norm_rms_epsilon (default 1e-5)
 * @rope_neox: RoPE pairs (i, i + rope_dim/2) instead of (2i, 2i+1)
 * @attn_gate: qwen35: the q projection also yields a sigmoid output gate
 * @rope_sections: qwen35 <arch>.rope.dimension_sections (IMROPE when any
 *	is non-zero)
 * @ssm_state: qwen35 ssm.state_size (head size of keys and values)
 * @ssm_k_heads: qwen35 ssm.group_count
 * @ssm_v_heads: qwen35 ssm.time_step_rank
 * @ssm_conv: qwen35 ssm.conv_kernel
 * @n_deltanet: DeltaNet layers among @n_layers
 * @n_mtp: trailing blocks of the file (nextn_predict_layers, multi-token
 *	prediction heads) that are not part of @n_layers and are never run
 * @note: "" or a remark for the user, e.g. that MTP blocks are skipped
 * @token_embd: [dim, n_vocab]
 * @output_norm: [dim]
 * @output: [dim, n_vocab]; equals @token_embd when @tied
 * @tied: the file has no "output" tensor
 * @layers: @n_layers entries
 */
struct llm_model {
	const struct gguf_file *gf;
	enum llm_arch arch;
	char arch_name[16];
	uint32_t n_layers, dim, ffn_dim, n_heads, n_kv_heads, head_dim;
	uint32_t rope_dim, n_ctx_train, n_vocab;
	float rope_theta, rms_eps;
	bool rope_neox;
	bool attn_gate;
	uint32_t rope_sections[4];
	uint32_t ssm_state, ssm_k_heads, ssm_v_heads, ssm_conv, n_deltanet, n_mtp;
	char note[256];
	const struct gguf_tensor *token_embd, *output_norm, *output;
	bool tied;
	struct llm_layer *layers;
};

/**
 * llm_model_load() - read hyperparameters and look up and check every
 * tensor of @gf
 * @m: out
 * @err, @errlen: on failure "FILE: reason", naming the key or tensor
 *
 * Return: 0, or -1 (with @err set) for an unsupported architecture, a
 * missing or out-of-range hyperparameter, a missing tensor, a tensor of
 * the wrong shape, or a norm/bias tensor that is not F32/F16.
 */
int llm_model_load(struct llm_model *m, const struct gguf_file *gf,
		   char *err, size_t errlen);

/**
 * llm_model_hybrid() - the model needs hybrid segment programs
 * (RK1828_PROG_OP_HYBRID): it has DeltaNet blocks or gated attention
 */
static inline bool llm_model_hybrid(const struct llm_model *m)
{
	return m->n_deltanet > 0 || m->attn_gate;
}

/** llm_model_free() - free what llm_model_load() allocated. */
void llm_model_free(struct llm_model *m);

/**
 * llm_tensor_card_bytes() - bytes a tensor occupies on the card: norms and
 * biases are uploaded as F32, matrices in their file type. 0 for NULL.
 */
uint64_t llm_tensor_card_bytes(const struct gguf_tensor *t, bool as_f32);

/** llm_layer_weight_bytes() - card bytes of all weights of block @l. */
uint64_t llm_layer_weight_bytes(const struct llm_model *m, uint32_t l);

/**
 * llm_ctx_warning() - the warning for a context longer than @m was
 * trained on (<arch>.context_length), as llama.cpp warns of a training
 * context overflow: the positions past it are RoPE extrapolation and the
 * output may degrade. plan, run, chat, bench and serve print it alike.
 * @m: the model
 * @n_ctx: the context asked for (--ctx), tokens per session
 * @buf, @n: the warning, "" when @n_ctx is within the trained context
 * Return: true when @n_ctx is over it.
 */
bool llm_ctx_warning(const struct llm_model *m, uint32_t n_ctx, char *buf, size_t n);

/**
 * llm_kv_bytes() - card bytes of one attention block's K and V caches for
 * @n_ctx rows of one sequence in @kv_type (QUANT_TYPE_F32, _F16, _Q8_0 or
 * _Q4_0: 2 rk1828_kv_seq_bytes(), rk1828/kv_cache.h); DeltaNet blocks
 * have none (llm_state_bytes()).
 *
 * Return: the bytes, saturated at UINT64_MAX; UINT64_MAX too when the
 * model's rows cannot be stored in @kv_type (llm_kv_type_ok()).
 */
uint64_t llm_kv_bytes(const struct llm_model *m, uint32_t n_ctx, int kv_type);

/**
 * llm_kv_type_ok() - whether @m's K/V rows (n_kv_heads * head_dim values)
 * can be stored in @kv_type: a K/V type whose block divides the row
 */
bool llm_kv_type_ok(const struct llm_model *m, int kv_type);

/**
 * llm_state_bytes() - card bytes of block @l's per-sequence state besides
 * the KV cache: for a DeltaNet block the conv state (ssm_conv - 1 rows of
 * its channels) and the recurrent state (ssm_v_heads matrices of
 * ssm_state x ssm_state and the current chunk's tokens,
 * rk1828_dnet_state_floats()), F32; 0 for attention blocks
 */
uint64_t llm_state_bytes(const struct llm_model *m, uint32_t l);

/** llm_conv_state_bytes() - the conv-state part of llm_state_bytes() */
uint64_t llm_conv_state_bytes(const struct llm_model *m);

/** llm_ssm_state_bytes() - the recurrent-state part of llm_state_bytes() */
uint64_t llm_ssm_state_bytes(const struct llm_model *m);

/** llm_ssm_channels() - conv channels of a DeltaNet block: 2 Hk S + Hv S */
uint64_t llm_ssm_channels(const struct llm_model *m);

/** llm_head_bytes() - card bytes of output_norm (F32) + output (LM head). */
uint64_t llm_head_bytes(const struct llm_model *m);

/**
 * llm_embed() - host-side token embedding: dequantize row @token of
 * token_embd into @out (@m->dim floats)
 * Return: 0, or -1 for a token outside [0, n_vocab).
 */
int llm_embed(const struct llm_model *m, int32_t token, float *out);

/**
 * llm_tensor_to_f32() - dequantize a whole small tensor (norms, biases)
 * @out: ne[0] * ne[1] * ne[2] * ne[3] floats
 * Return: 0 or -1 for an unsupported type.
 */
int llm_tensor_to_f32(const struct gguf_tensor *t, float *out);

#endif
