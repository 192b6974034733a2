/* SPDX-License-Identifier: MIT */
/*
 * The one synthetic-model writer of the tools, tests and benchmarks: a
 * GGUF of the llama, qwen2 (Q/K/V biases), qwen3 (per-head Q/K norms) or
 * qwen35 (hybrid: Gated DeltaNet blocks and gated full attention every
 * full_attention_interval-th block) architecture with real shapes, chosen
 * tensor types and seeded, reproducible weights, plus the deliberate
 * defects the model-loader tests need (a missing key or tensor, a tensor
 * one row short, a tensor of the wrong type). tools/mksynth and its
 * presets (synth_preset.h) and the unit tests' fixtures all describe
 * their model as a &struct synth_model.
 *
 * Keys and tensor names follow llama.cpp's GGUF conventions
 * (gguf-py/gguf/constants.py, src/llama-arch.cpp). Keys are written in the
 * order general.architecture, general.name, rk1828.shape_only,
 * <arch>.block_count, nextn_predict_layers, context_length,
 * embedding_length, feed_forward_length, attention.head_count,
 * head_count_kv, key_length, value_length, rope.dimension_count,
 * rope.freq_base, attention.layer_norm_rms_epsilon, the qwen35 keys, then
 * the tokenizer (optional keys are left out, see the fields); tensors
 * token_embd, then per block attn_norm, the attention (attn_q/k/v,
 * attn_output, the biases, the Q/K norms) or the DeltaNet tensors,
 * ffn_norm (qwen35: post_attention_norm), ffn_gate/up/down, then
 * output_norm and output. Same spec, same bytes.
 *
 * Files: synth_model.c (the file: keys, then tensors), synth_meta.c
 * (hyperparameter keys), synth_vocab.c (tokenizers), synth_layout.c
 * (tensor names, shapes and order per architecture), synth_tensor.c (one
 * tensor: values, defects, quantization), synth_preset.c (mksynth's
 * shapes and type plans), synth_small.c (the unit tests' small qwen).
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
 * @SYNTH_Q: attn_q [n_heads * head_dim][dim] (qwen35: twice the rows,
 *	per head the query then its gate)
 * @SYNTH_K: attn_k [n_kv_heads * head_dim][dim]
 * @SYNTH_V: attn_v [n_kv_heads * head_dim][dim]
 * @SYNTH_O: attn_output [dim][n_heads * head_dim]
 * @SYNTH_BIAS: attn_q/k/v.bias (with @biases)
 * @SYNTH_QK_NORM: attn_q_norm, attn_k_norm [head_dim] (with @qk_norm)
 * @SYNTH_FFN_NORM: ffn_norm (qwen35: post_attention_norm) [dim]
 * @SYNTH_GATE: ffn_gate [ffn][dim]
 * @SYNTH_UP: ffn_up [ffn][dim]
 * @SYNTH_DOWN: ffn_down [dim][ffn]
 * @SYNTH_OUT_NORM: output_norm [dim]
 * @SYNTH_OUTPUT: output [n_vocab][dim] (unless @tied)
 * @SYNTH_SSM_QKV: DeltaNet attn_qkv [2 * key + value][dim], key =
 *	ssm.groups * ssm.state, value = ssm.rank * ssm.state
 * @SYNTH_SSM_GATE: DeltaNet attn_gate [value][dim]
 * @SYNTH_SSM_CONV: ssm_conv1d [2 * key + value][ssm.conv] (the taps of a
 *	channel contiguous)
 * @SYNTH_SSM_DT: ssm_dt.bias [ssm.rank]
 * @SYNTH_SSM_A: ssm_a [ssm.rank]
 * @SYNTH_SSM_BETA: ssm_beta [ssm.rank][dim]
 * @SYNTH_SSM_ALPHA: ssm_alpha [ssm.rank][dim]
 * @SYNTH_SSM_NORM: ssm_norm [ssm.state]
 * @SYNTH_SSM_OUT: ssm_out [dim][value]
 * @SYNTH_MTP_EH_PROJ: an MTP block's nextn.eh_proj [dim][2 * dim]
 * @SYNTH_MTP_NORM: an MTP block's nextn.enorm, hnorm, shared_head_norm [dim]
 * @SYNTH_N_ROLES: number of roles
 */
enum synth_role {
	SYNTH_EMBD, SYNTH_ATTN_NORM, SYNTH_Q, SYNTH_K, SYNTH_V, SYNTH_O,
	SYNTH_BIAS, SYNTH_QK_NORM, SYNTH_FFN_NORM, SYNTH_GATE, SYNTH_UP,
	SYNTH_DOWN, SYNTH_OUT_NORM, SYNTH_OUTPUT,
	SYNTH_SSM_QKV, SYNTH_SSM_GATE, SYNTH_SSM_CONV, SYNTH_SSM_DT, SYNTH_SSM_A,
	SYNTH_SSM_BETA, SYNTH_SSM_ALPHA, SYNTH_SSM_NORM, SYNTH_SSM_OUT,
	SYNTH_MTP_EH_PROJ, SYNTH_MTP_NORM,
	SYNTH_N_ROLES
};

/**
 * enum synth_fill - how tensor values are chosen
 * @SYNTH_RANDOM: each role's &enum synth_dist, drawn from one xorshift64*
 *	stream (Vigna 2016) seeded with @seed in tensor order
 * @SYNTH_PATTERN: element i of every tensor is ((i % 13) - 6) / 8, exact
 *	in F16 and F32 (loader tests check values)
 */
enum synth_fill {
	SYNTH_RANDOM,
	SYNTH_PATTERN,
};

/**
 * enum synth_dist - the distribution of one role's values (SYNTH_RANDOM);
 * u is uniform in [-1, 1), u01 uniform in [0, 1), one draw per element
 * @SYNTH_UNIFORM: base + scale * u; scale 0 is all base and draws nothing
 * @SYNTH_FAN_IN: base + (sqrt(3 / fan_in) * scale) * u, fan_in the
 *	tensor's first dimension (unit variance per output row at scale 1)
 * @SYNTH_NEG_A: -(1 + 15 * u01): qwen35's ssm_a = -A, A in [1, 16]
 * @SYNTH_DT_BIAS: log(expm1(dt)), dt log-uniform in [1e-3, 1e-1] from
 *	u01: qwen35's ssm_dt, the inverse softplus of the step
 * @SYNTH_NEAR_EMBD: the token embedding's value plus scale * u: an untied
 *	LM head that agrees with the embedding (only for @SYNTH_OUTPUT)
 */
enum synth_dist {
	SYNTH_UNIFORM,
	SYNTH_FAN_IN,
	SYNTH_NEG_A,
	SYNTH_DT_BIAS,
	SYNTH_NEAR_EMBD,
};

/**
 * enum synth_vocab - the tokenizer written after the hyperparameters
 * @SYNTH_VOCAB_NONE: no tokenizer keys
 * @SYNTH_VOCAB_SPM: a SentencePiece ("llama") tokenizer of @n_vocab >= 286
 *	tokens: <unk>, <s>, </s>, the 256 byte tokens, U+2581, a..z, then
 *	<unusedN> fillers; no two tokens merge into another, so L lower-case
 *	letters encode to L + 1 tokens without BOS
 * @SYNTH_VOCAB_BYTES: a byte-level ("gpt2", pre "qwen2") placeholder of
 *	@n_vocab > 256 tokens: the 256 byte tokens in GPT-2's alphabet (any
 *	text tokenizes, one token per byte, no merges), "<tN>" fillers, the
 *	last one the end-of-text control token
 * @SYNTH_VOCAB_FILE: every tokenizer.* key of the GGUF @vocab_path (for
 *	example llama.cpp's models/ggml-vocab-qwen35.gguf); @n_vocab is then
 *	its token count
 */
enum synth_vocab {
	SYNTH_VOCAB_NONE,
	SYNTH_VOCAB_SPM,
	SYNTH_VOCAB_BYTES,
	SYNTH_VOCAB_FILE,
};

/**
 * struct synth_tensor - type and values of one role
 * @type: QUANT_TYPE_* the tensor is stored in
 * @base: value offset (SYNTH_UNIFORM, SYNTH_FAN_IN)
 * @scale: spread (see @dist)
 * @dist: distribution of the values (0: SYNTH_UNIFORM)
 */
struct synth_tensor {
	int type;
	double base, scale;
	enum synth_dist dist;
};

/**
 * struct synth_ssm - qwen35's Gated DeltaNet and hybrid layout
 * @state: ssm.state_size (the head size of keys and values)
 * @groups: ssm.group_count (key heads)
 * @rank: ssm.time_step_rank (value heads)
 * @conv: ssm.conv_kernel (taps)
 * @fa_interval: full_attention_interval: block l is full attention when
 *	(l + 1) % fa_interval == 0, and so are the MTP blocks
 * @sections: rope.dimension_sections
 */
struct synth_ssm {
	uint32_t state, groups, rank, conv, fa_interval;
	int32_t sections[4];
};

/**
 * struct synth_model - what synth_model_write() writes
 * @arch: general.architecture and key prefix; "qwen35" selects the hybrid
 *	layout (@ssm), anything else llama's blocks
 * @name: general.name, or NULL for none
 * @n_layers: blocks
 * @n_mtp: further multi-token-prediction blocks (qwen35; written like
 *	full-attention blocks plus llama.cpp's nextn tensors,
 *	<arch>.nextn_predict_layers when not 0)
 * @dim: embedding length
 * @ffn: feed-forward length
 * @n_heads: attention heads
 * @n_kv_heads: key/value heads
 * @head_dim: size of one head; 0 means dim / n_heads and no key, another
 *	value is written as <arch>.attention.key_length and value_length
 * @rope_dim: <arch>.rope.dimension_count, 0 for none
 * @n_ctx: <arch>.context_length
 * @n_vocab: rows of token_embd and output (SYNTH_VOCAB_FILE: the file's)
 * @rope_theta: <arch>.rope.freq_base
 * @rms_eps: <arch>.attention.layer_norm_rms_epsilon, 0 for none
 * @ssm: the DeltaNet sizes and rope sections (qwen35 only)
 * @biases: write attn_q/k/v.bias (qwen2)
 * @qk_norm: write attn_q_norm and attn_k_norm (qwen3, qwen35)
 * @tied: no output.weight (the LM head is the embedding)
 * @shape_only: write rk1828.shape_only = true and every tensor as a hole
 *	of a sparse file (real sizes, no values, no draws): for the planner
 * @vocab: the tokenizer
 * @vocab_path: the GGUF of SYNTH_VOCAB_FILE
 * @fill: how values are chosen
 * @seed: state of the SYNTH_RANDOM stream (0 picks a fixed non-zero one)
 * @t: type and values per &enum synth_role
 * @more_bits: store attn_v and ffn_down as @more_type in the layers
 *	llama.cpp's use_more_bits() picks (the first and last eighth of
 *	@n_layers and every third in between), as its Q4_K_M mix does
 * @more_type: QUANT_TYPE_* of those tensors
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
	uint32_t n_layers, n_mtp, dim, ffn, n_heads, n_kv_heads, head_dim, rope_dim;
	uint32_t n_ctx, n_vocab;
	float rope_theta, rms_eps;
	struct synth_ssm ssm;
	bool biases, qk_norm, tied, shape_only;
	enum synth_vocab vocab;
	const char *vocab_path;
	enum synth_fill fill;
	uint64_t seed;
	struct synth_tensor t[SYNTH_N_ROLES];
	bool more_bits;
	int more_type;
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
 * row, an unreadable vocabulary, out of memory, write error).
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
 * 128, Q4_0/Q8_0/F16 matrices (synth_small.c)
 * @path: file created or truncated
 * @arch: "qwen2" or "qwen3"
 * @err, @errlen: as for synth_model_write()
 *
 * Return: as synth_model_write().
 */
int synth_small_qwen_write(const char *path, const char *arch, char *err, size_t errlen);

#endif
