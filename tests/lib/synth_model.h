/* SPDX-License-Identifier: MIT */
/*
 * The synthetic-model writer of every test and benchmark: a llama-family
 * GGUF (llama, qwen2 with Q/K/V biases, qwen3 with per-head Q/K norms)
 * with real shapes, chosen tensor types and reproducible weights, plus the
 * deliberate defects the model-loader tests need (a missing key or tensor,
 * a tensor one row short, a tensor of the wrong type).
 *
 * Keys and tensor names follow llama.cpp's GGUF conventions
 * (gguf-py/gguf/constants.py). Keys are written in the order
 * general.architecture, general.name, <arch>.block_count,
 * embedding_length, feed_forward_length, attention.head_count,
 * head_count_kv, context_length, rope.freq_base,
 * attention.layer_norm_rms_epsilon, attention.key_length,
 * rope.dimension_count, then the tokenizer; tensors token_embd, then per
 * block attn_norm, attn_q/k/v, attn_output, the biases, the Q/K norms,
 * ffn_norm, ffn_gate/up/down, then output_norm and output. Same spec,
 * same bytes.
 */
#ifndef RK_TEST_SYNTH_MODEL_H
#define RK_TEST_SYNTH_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * enum synth_role - the kinds of tensor, each with its own type and values
 * @SYNTH_EMBD: token_embd [n_vocab][dim]
 * @SYNTH_ATTN_NORM: attn_norm [dim]
 * @SYNTH_Q: attn_q [n_heads * head_dim][dim]
 * @SYNTH_K: attn_k [n_kv_heads * head_dim][dim]
 * @SYNTH_V: attn_v [n_kv_heads * head_dim][dim]
 * @SYNTH_O: attn_output [dim][n_heads * head_dim]
 * @SYNTH_BIAS: attn_q/k/v.bias (with @biases)
 * @SYNTH_QK_NORM: attn_q_norm, attn_k_norm [head_dim] (with @qk_norm)
 * @SYNTH_FFN_NORM: ffn_norm [dim]
 * @SYNTH_GATE: ffn_gate [ffn][dim]
 * @SYNTH_UP: ffn_up [ffn][dim]
 * @SYNTH_DOWN: ffn_down [dim][ffn]
 * @SYNTH_OUT_NORM: output_norm [dim]
 * @SYNTH_OUTPUT: output [n_vocab][dim] (unless @tied)
 * @SYNTH_N_ROLES: number of roles
 */
enum synth_role {
	SYNTH_EMBD, SYNTH_ATTN_NORM, SYNTH_Q, SYNTH_K, SYNTH_V, SYNTH_O,
	SYNTH_BIAS, SYNTH_QK_NORM, SYNTH_FFN_NORM, SYNTH_GATE, SYNTH_UP,
	SYNTH_DOWN, SYNTH_OUT_NORM, SYNTH_OUTPUT, SYNTH_N_ROLES
};

/**
 * enum synth_fill - how tensor values are chosen
 * @SYNTH_RANDOM: base + scale * u with u uniform in [-1, 1) from one
 *	xorshift64* stream (Vigna 2016) seeded with @seed and drawn in
 *	tensor order; a tensor with scale 0 is all base and draws nothing
 * @SYNTH_PATTERN: element i of every tensor is ((i % 13) - 6) / 8, exact
 *	in F16 and F32 (loader tests check values)
 */
enum synth_fill {
	SYNTH_RANDOM,
	SYNTH_PATTERN,
};

/**
 * struct synth_tensor - type and values of one role
 * @type: QUANT_TYPE_* the tensor is stored in
 * @base: value offset (SYNTH_RANDOM)
 * @scale: half-width of the random spread (SYNTH_RANDOM)
 */
struct synth_tensor {
	int type;
	float base, scale;
};

/**
 * struct synth_model - what synth_model_write() writes
 * @arch: general.architecture and key prefix ("llama", "qwen2", "qwen3";
 *	anything else is written as given)
 * @name: general.name, or NULL for none
 * @n_layers: blocks
 * @dim: embedding length
 * @ffn: feed-forward length
 * @n_heads: attention heads
 * @n_kv_heads: key/value heads
 * @head_dim: size of one head; 0 means dim / n_heads, another value is
 *	written as <arch>.attention.key_length
 * @rope_dim: <arch>.rope.dimension_count, 0 for none
 * @n_ctx: <arch>.context_length
 * @n_vocab: rows of token_embd and output
 * @rope_theta: <arch>.rope.freq_base
 * @rms_eps: <arch>.attention.layer_norm_rms_epsilon, 0 for none
 * @biases: write attn_q/k/v.bias (qwen2)
 * @qk_norm: write attn_q_norm and attn_k_norm (qwen3)
 * @tied: no output.weight (the LM head is the embedding)
 * @vocab: write a SentencePiece ("llama") tokenizer of @n_vocab >= 286
 *	tokens: <unk>, <s>, </s>, the 256 byte tokens, U+2581, a..z, then
 *	<unusedN> fillers; no two tokens merge into another, so L lower-case
 *	letters encode to L + 1 tokens without BOS
 * @fill: how values are chosen
 * @seed: seed of SYNTH_RANDOM (0 picks a fixed non-zero one)
 * @t: type and values per &enum synth_role
 * @skip_key: suffix of an <arch>. key not to write (e.g. "block_count")
 * @skip_tensor: name of a tensor not to write
 * @short_tensor: name of a tensor written with one row (outermost
 *	dimension) less than its shape
 * @retype_tensor: name of a tensor stored as @retype instead of its
 *	role's type
 * @retype: QUANT_TYPE_* for @retype_tensor
 */
struct synth_model {
	const char *arch;
	const char *name;
	uint32_t n_layers, dim, ffn, n_heads, n_kv_heads, head_dim, rope_dim;
	uint32_t n_ctx, n_vocab;
	float rope_theta, rms_eps;
	bool biases, qk_norm, tied, vocab;
	enum synth_fill fill;
	uint64_t seed;
	struct synth_tensor t[SYNTH_N_ROLES];
	const char *skip_key;
	const char *skip_tensor;
	const char *short_tensor;
	const char *retype_tensor;
	int retype;
};

/**
 * synth_model_write() - write the model @s describes into @path
 * @s: the model
 * @path: file created or truncated
 * @err: message buffer (may be NULL)
 * @errlen: size of @err
 *
 * Return: 0, or -1 with a message in @err (a type that cannot hold a
 * row, out of memory, write error).
 */
int synth_model_write(const struct synth_model *s, const char *path, char *err,
		      size_t errlen);

/**
 * synth_model_tmp() - synth_model_write() into a new file from mkstemp()
 * @s: the model
 * @path: buffer of at least 32 bytes; receives the file name
 *	("/tmp/rk1828-synth-XXXXXX"), which the caller unlinks
 * @err, @errlen: as for synth_model_write()
 *
 * Return: 0, or -1 (no file left behind).
 */
int synth_model_tmp(const struct synth_model *s, char *path, char *err, size_t errlen);

/**
 * synth_small_qwen_write() - the unit tests' small random qwen2 (Q/K/V
 * biases) or qwen3 (Q/K norms, head size 32 != dim / heads, tied LM head)
 * model: 4 blocks, dim 64, 4 heads, 2 KV heads, FFN 96, vocab 40, context
 * 128, Q4_0/Q8_0/F16 matrices
 * @path: file created or truncated
 * @arch: "qwen2" or "qwen3"
 * @err, @errlen: as for synth_model_write()
 *
 * Return: as synth_model_write().
 */
int synth_small_qwen_write(const char *path, const char *arch, char *err, size_t errlen);

#endif
