/* SPDX-License-Identifier: MIT */
/*
 * Model shape files (tests/shapes/NAME.shape, format in tests/shapes/README):
 * the public hyperparameters of a model, and its layers as the cost
 * function sees them (cardmodel/cost.h) in the vendor's W4A16 format.
 */
#ifndef RK_TEST_SHAPE_H
#define RK_TEST_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost.h"

/**
 * struct model_shape - one shape file
 * @name: name
 * @arch: llama, qwen2, qwen3 or qwen35
 * @layers, @dim, @ffn, @heads, @kv_heads, @head_dim, @vocab, @tied: as
 *	the keys of the same names
 * @fa_interval: full_attention_interval (qwen35; 0 otherwise)
 * @ssm_head_dim, @ssm_k_heads, @ssm_v_heads, @ssm_conv: qwen35 DeltaNet
 */
struct model_shape {
	char name[64];
	char arch[16];
	uint32_t layers, dim, ffn, heads, kv_heads, head_dim, vocab;
	bool tied;
	uint32_t fa_interval, ssm_head_dim, ssm_k_heads, ssm_v_heads, ssm_conv;
};

/**
 * shape_load() - read a shape file
 * @s: out
 * @path: the file
 * @err, @errlen: "PATH:LINE: reason" or "PATH: missing key K"
 * Return: 0 or -1.
 */
int shape_load(struct model_shape *s, const char *path, char *err, size_t errlen);

/**
 * shape_is_attn() - whether layer @l is an attention layer (every layer
 * but qwen35's DeltaNet ones: those not at fa_interval - 1 mod fa_interval)
 */
bool shape_is_attn(const struct model_shape *s, uint32_t l);

/*
 * The vendor's W4A16 format, as tools/mksynth.c --type w4a16 writes
 * it: every matrix in group-32 asymmetric 4-bit blocks (ggml Q4_1, 20
 * bytes per 32 weights), the LM head in Q6_K (210 bytes per 256), norms
 * and other small tensors F32.
 */
#define SHAPE_W4A16_BLOCK_BYTES	20
#define SHAPE_HEAD_BLOCK_BYTES	210

/**
 * shape_cost_layer() - layer @l of @s in the W4A16 format, F32 K/V caches
 * and recurrent states (as the segment programs keep them)
 */
void shape_cost_layer(const struct model_shape *s, uint32_t l, struct cost_layer *out);

/** shape_cost_head() - the output head of @s in the W4A16 format. */
void shape_cost_head(const struct model_shape *s, struct cost_head *out);

#endif
