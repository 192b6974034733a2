/* SPDX-License-Identifier: MIT */
/*
 * mksynth's models as &struct synth_model specs (synth_model.h): the
 * preset shapes, the shapes of shape files, the type plans, the weight
 * distributions and the per-architecture seed. tools/mksynth.c is these
 * plus option parsing.
 *
 * Weights: matrices uniform in +-sqrt(3 / fan_in) * gain (gain 0.5 for
 * ssm_alpha, 1 otherwise), norm weights 1 +- 0.1, biases +-0.1; qwen35
 * ssm_a = -A with A uniform in [1, 16], ssm_dt the inverse softplus of dt
 * log-uniform in [1e-3, 1e-1], ssm_conv1d +-0.5. The token embedding is
 * uniform in +-embd_scale (1.4 for the tiny shapes, 1 otherwise: a tied
 * head then keeps the current token a strong candidate, as trained
 * models do), an untied head is the embedding plus noise of half its
 * scale. Every draw is made in the same order whatever the types are, so
 * the types of one arch and seed quantize the very same F32 model.
 */
#ifndef RK_TEST_SYNTH_PRESET_H
#define RK_TEST_SYNTH_PRESET_H

#include <stddef.h>
#include <stdint.h>

#include "synth_model.h"

struct model_shape;

/**
 * synth_preset() - the spec of a named shape of @arch, F32, byte-level
 * placeholder vocabulary, seed 0
 * @s: out
 * @preset: "tiny" (dim 256, 8 blocks, every matrix row a multiple of 256
 *	so all types apply; llama, qwen2, qwen3, qwen35), "bench" (qwen35 and
 *	llama of the same parameter count, dim 1024), "9b" or "27b"
 *	(Qwen3.5-9B and -27B, DESIGN.md section 10: shape-only, n_vocab 248320)
 * @arch: llama, qwen2, qwen3 or qwen35
 * @err, @errlen: message buffer
 *
 * Return: 0, or -1 (unknown preset, or no such arch in it).
 */
int synth_preset(struct synth_model *s, const char *preset, const char *arch,
		 char *err, size_t errlen);

/**
 * synth_preset_shape() - the spec of shape file @m (tests/lib/shape.h):
 * its sizes, with RoPE, context and norms of its arch's tiny preset
 * (qwen35: the 9B's) and rope.dimension_count = head size; shape-only
 * @s: out
 * @m: the shape
 * @err, @errlen: message buffer
 *
 * Return: 0, or -1 (an arch without a preset).
 */
int synth_preset_shape(struct synth_model *s, const struct model_shape *m,
		       char *err, size_t errlen);

/**
 * synth_preset_types() - store @s's tensors in type plan @plan
 * @s: the spec
 * @plan: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q5_k, q6_k (every
 *	matrix and the embedding in that type), q4_k_m (the usual mix: Q4_K
 *	matrices and embedding, Q6_K for the LM head and for attn_v and
 *	ffn_down in llama.cpp's use_more_bits() layers) or w4a16 (the
 *	vendor's layout: group-32 asymmetric Q4_1 matrices and embedding,
 *	Q6_K LM head). Norms, biases, ssm_a, ssm_dt, ssm_norm and ssm_conv1d
 *	stay F32, as llama-quantize leaves them.
 * @err, @errlen: message buffer
 *
 * Return: 0, or -1 (unknown plan).
 */
int synth_preset_types(struct synth_model *s, const char *plan, char *err, size_t errlen);

/**
 * synth_preset_embd_scale() - token embedding values uniform in +-@scale,
 * an untied head's noise +-@scale / 2
 * @s: the spec
 * @scale: half-width, > 0
 */
void synth_preset_embd_scale(struct synth_model *s, double scale);

/**
 * synth_preset_seed() - the random stream of @arch for user seed @seed (a
 * different stream per arch; the types do not change the draws)
 * @arch: architecture name (not empty)
 * @seed: mksynth's --seed
 *
 * Return: the &struct synth_model seed.
 */
uint64_t synth_preset_seed(const char *arch, uint64_t seed);

#endif
