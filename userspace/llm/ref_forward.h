/* SPDX-License-Identifier: MIT */
/*
 * Scalar single-threaded reference forward pass of a llama-family decoder
 * (llama, qwen2 with Q/K/V biases, qwen3 with per-head Q/K RMSNorm),
 * written in the style of llama2.c's forward(): one token at a time, KV
 * cache, plain loops, dot products accumulated in double. It depends only
 * on gguf.h (to read the model) and quant_dequantize_row() (weights,
 * rk1828/quant_blocks.h), never on the emulator's kernels, so tests can check those against it.
 *
 * Semantics follow llama.cpp's llama/qwen2/qwen3 graphs: RMSNorm with eps
 * from "<arch>.attention.layer_norm_rms_epsilon", RoPE on the first
 * rope_dim dims of each head with theta_i = pos * base^(-2i/rope_dim),
 * adjacent pairs for llama and (i, i + rope_dim/2) pairs (NEOX) for
 * qwen2/qwen3, causal grouped-query attention (query head h uses KV head
 * h / (n_heads / n_kv_heads)), SwiGLU FFN, final norm and LM head (tied
 * to token_embd when "output.weight" is absent).
 *
 * qwen35 (llama.cpp src/models/qwen35.cpp, delta-net-base.cpp): layer l
 * is full attention when (l + 1) % full_attention_interval == 0, else a
 * Gated DeltaNet layer computed here by the per-token recurrence only (see
 * emulator/deltanet.h for the equations). Full-attention layers: the q
 * projection gives [q, gate] per head, the attention output of each head
 * is multiplied by sigmoid(gate); q/k RMSNorm; interleaved multi-section
 * RoPE (IMROPE) where pair i uses the position unless the interleaved
 * section rule sends it to the fourth section, whose position is 0 for
 * text. The norm before the FFN is post_attention_norm.
 */
#ifndef RK_LLM_REF_FORWARD_H
#define RK_LLM_REF_FORWARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gguf_file;

/**
 * struct ref_tensor - a weight of @ne1 rows of @ne0 elements
 * @type: GGML type number (F32, F16, Q4_0, Q8_0)
 * @ne0: row length (elements)
 * @ne1: rows (1 for vectors)
 * @data: row-major bytes (in the GGUF mapping, or @owned)
 * @owned: malloc'd replacement data (after ref_quantize()), or NULL
 * @nbytes: bytes of @data
 */
struct ref_tensor {
	int type;
	uint64_t ne0, ne1;
	const void *data;
	void *owned;
	size_t nbytes;
};

/**
 * struct ref_layer - one decoder block's weights (absent optional: data NULL)
 * @recurrent: a qwen35 Gated DeltaNet layer (wqkv ... ssm_out used, the
 *	attention tensors absent); ffn_norm is post_attention_norm in qwen35
 */
struct ref_layer {
	bool recurrent;
	struct ref_tensor attn_norm, wq, wk, wv, wo;
	struct ref_tensor bq, bk, bv, q_norm, k_norm;
	struct ref_tensor ffn_norm, ffn_gate, ffn_up, ffn_down;
	struct ref_tensor wqkv, wgate, conv1d, dt_bias, ssm_a, beta, alpha, ssm_norm, ssm_out;
};

/**
 * struct ref_config - hyper-parameters read from the GGUF metadata
 * @arch: general.architecture ("llama", "qwen2" or "qwen3")
 * @n_layers: <arch>.block_count
 * @dim: <arch>.embedding_length
 * @n_heads: <arch>.attention.head_count
 * @n_kv_heads: <arch>.attention.head_count_kv (default n_heads)
 * @head_dim: <arch>.attention.key_length (default dim / n_heads)
 * @ffn_dim: <arch>.feed_forward_length
 * @n_ctx: KV cache rows of this instance (min of the request and
 *	<arch>.context_length)
 * @rope_dim: <arch>.rope.dimension_count (default head_dim)
 * @n_vocab: rows of the LM head
 * @eps: <arch>.attention.layer_norm_rms_epsilon (default 1e-5)
 * @theta: <arch>.rope.freq_base (default 10000)
 * @neox: RoPE pairs (i, i + rope_dim/2) (qwen2/qwen3) instead of (2i, 2i+1)
 * @hybrid: qwen35
 * @sections: qwen35 rope.dimension_sections
 * @ssm_state, @ssm_groups, @ssm_rank, @conv_k, @fa_interval: qwen35
 *	ssm.state_size, ssm.group_count, ssm.time_step_rank, ssm.conv_kernel,
 *	full_attention_interval
 * @n_mtp: <arch>.nextn_predict_layers: multi-token-prediction blocks
 *	after the @n_layers decoder blocks (block_count is their sum);
 *	ref_forward() runs the decoder blocks only, ref_mtp() the first MTP
 *	block
 */
struct ref_config {
	char arch[16];
	int n_layers, dim, n_heads, n_kv_heads, head_dim, ffn_dim, n_ctx;
	int rope_dim, n_vocab;
	float eps, theta;
	bool neox;
	bool hybrid;
	int sections[4];
	int ssm_state, ssm_groups, ssm_rank, conv_k, fa_interval;
	int n_mtp;
};

/**
 * struct ref_mtp - a multi-token-prediction block's own tensors (Qwen3.5,
 * GLM-4.5 and DeepSeek-V3 "nextn"; llama.cpp's names blk.N.nextn.*),
 * besides the full-attention block's usual ones in @layers[N]
 * @eh_proj: [dim][2 dim]: [enorm(embedding); hnorm(hidden)] to the model width
 * @enorm, @hnorm: [dim] RMSNorm weights of the embedding and the hidden state
 * @shared_head_norm: [dim] norm before the LM head (output_norm if absent)
 */
struct ref_mtp {
	struct ref_tensor eh_proj, enorm, hnorm, shared_head_norm;
};

/**
 * struct ref_model - a loaded model and its KV cache
 * @c: configuration
 * @file: the open GGUF (owned)
 * @token_embd: [n_vocab][dim]
 * @output_norm: [dim]
 * @output: [n_vocab][dim] (token_embd when tied)
 * @layers: @c.n_layers blocks
 * @k_cache: [n_layers + n_mtp][n_ctx][n_kv_heads * head_dim]
 * @v_cache: same shape as @k_cache
 * @mtp: the first MTP block's own tensors (@c.n_mtp > 0), its other
 *	weights in @layers[@c.n_layers]
 * @mtp_valid: NULL, or [n_ctx] flags: the MTP block's attention reads only
 *	the K/V rows whose flag is set (and the row being written); its user
 *	sets them (spec_mtp.c: rows of drafts rejected since are stale)
 * @conv_state: qwen35 [n_layers][conv_k - 1][channels] (zero at start)
 * @ssm_state: qwen35 [n_layers][ssm_rank][ssm_state][ssm_state]
 * @kv_type: QUANT_TYPE_* the K/V rows are rounded through before they are
 *	cached (quant_quantize_row() then quant_dequantize_row(), the whole
 *	row of n_kv_heads * head_dim values): the exact F32 forward over the
 *	dequantized stored K/V of a card with that K/V type. F32 (0) by
 *	default; set it before the first ref_forward()
 */
struct ref_model {
	struct ref_config c;
	int kv_type;
	struct gguf_file *file;
	struct ref_tensor token_embd, output_norm, output;
	struct ref_layer *layers;
	struct ref_mtp mtp;
	const unsigned char *mtp_valid;
	float *k_cache, *v_cache;
	float *conv_state, *ssm_state;
};

/**
 * ref_load() - open a GGUF model and allocate a KV cache of @n_ctx rows
 * @path: GGUF file
 * @n_ctx: wanted KV rows (>= 1; capped at the model's context length)
 * @err: receives "PATH: reason" on failure
 * @errlen: size of @err
 *
 * Checks the architecture, every needed tensor's presence, type and shape.
 * Return: the model, or NULL on error.
 */
struct ref_model *ref_load(const char *path, int n_ctx, char *err, size_t errlen);

/** ref_free() - release @m (NULL is fine) */
void ref_free(struct ref_model *m);

/**
 * ref_quantize() - replace every matrix weight of the blocks and the LM
 * head whose row length is a multiple of 32 by its @type (QUANT_TYPE_F16,
 * Q8_0 or Q4_0) version, computed from the dequantized current weights
 * with quant_quantize_row(); others (and token_embd, norms, biases) are kept,
 * the way llama.cpp falls back for rows it cannot quantize. Untying the
 * LM head if needed.
 * Return: number of tensors converted, or -1 (model unchanged where it
 * failed: out of memory or bad type).
 */
int ref_quantize(struct ref_model *m, int type);

/**
 * ref_embed() - dequantized embedding row of @token into @out [dim]
 * Return: 0, or -1 when @token is out of range.
 */
int ref_embed(const struct ref_model *m, int token, float *out);

/**
 * ref_forward() - run @token at position @pos; writes logits [n_vocab]
 * @m: model; KV rows [0, pos) must hold the earlier tokens
 * @token: token id in [0, n_vocab)
 * @pos: position in [0, n_ctx); qwen35 needs the positions in order
 *	0, 1, 2, ... (its recurrent state has seen every earlier token)
 * @logits: n_vocab floats, or NULL to only fill the KV cache
 *
 * Return: 0, or -1 on a bad token/pos or out of memory.
 */
int ref_forward(struct ref_model *m, int token, int pos, float *logits);

/**
 * ref_forward_hidden() - ref_forward(), and the final hidden state
 * rmsnorm(x) * output_norm into @hidden [dim] (NULL: not wanted): what a
 * card returns with RK1828_PROG_F_HIDDEN
 * Return: as ref_forward().
 */
int ref_forward_hidden(struct ref_model *m, int token, int pos, float *logits, float *hidden);

/**
 * ref_mtp() - the first multi-token-prediction block at position @pos:
 * h = eh_proj [rmsnorm(embed(@token)) * enorm; rmsnorm(@hidden) * hnorm],
 * then the full-attention block (its K/V rows at @pos in its own layer
 * of the cache), @hidden_out = rmsnorm(h) * shared_head_norm and @logits
 * = output @hidden_out: the logits of the token after @token
 * @token: the token at @pos (the one sampled after the hidden state)
 * @hidden: [dim] the final hidden state of position @pos - 1 (from the
 *	model, or @hidden_out of the previous ref_mtp() when chaining)
 * @logits: [n_vocab] or NULL; @hidden_out: [dim] or NULL
 * Return: 0, or -1 without an MTP block, on a bad token/pos or out of memory.
 */
int ref_mtp(struct ref_model *m, int token, const float *hidden, int pos, float *logits,
	    float *hidden_out);

#endif
