/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * K/V cache formats (segment program 1.3, struct rk1828_program.kv_type):
 * how a card stores the K and V rows of its attention layers, and how the
 * host sizes them. Shared by the runtime (userspace/llm: the planner's
 * sums, the program's strides) and the card (emulator/exec.c: store on
 * write, load in attention), header-only like quant_blocks.h.
 *
 * A K (or V) cache of one sequence is n_ctx rows, row p holding position
 * p's n_kv_heads * head_dim values (heads in order) encoded as one row of
 * the type: F32 4 bytes a value; F16 2 bytes; Q8_0 and Q4_0 blocks of 32
 * values with an f16 scale (34 and 18 bytes, ggml's block_q8_0 and
 * block_q4_0, rk1828/quant_blocks.h). A block may span heads (a model
 * whose head_dim is under 32); the row length must be a multiple of 32
 * for the block types. The encoding is rk1828/quant_encode.h's, the
 * decoding quant_dequantize_row()'s; attention uses the decoded floats of
 * every row, including the rows the same program just wrote, so a prefill
 * and a token-by-token decode of the same tokens read the same values.
 */
#ifndef RK1828_KV_CACHE_H
#define RK1828_KV_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rk1828/quant_blocks.h"
#include "rk1828/quant_encode.h"

/**
 * rk1828_kv_type_ok() - whether @type is a K/V cache type (F32, F16,
 * Q8_0, Q4_0)
 * @type: QUANT_TYPE_*
 *
 * Return: true for the four types, false for any other.
 */
static inline bool rk1828_kv_type_ok(int type)
{
	return type == QUANT_TYPE_F32 || type == QUANT_TYPE_F16 ||
	       type == QUANT_TYPE_Q8_0 || type == QUANT_TYPE_Q4_0;
}

/**
 * rk1828_kv_row_bytes() - bytes of one K (or V) row of @kv_dim values
 * @type: a K/V cache type
 * @kv_dim: n_kv_heads * head_dim
 *
 * Return: the bytes, or 0 when @type is not a K/V type or @kv_dim is not
 * a multiple of its block.
 */
static inline size_t rk1828_kv_row_bytes(int type, size_t kv_dim)
{
	return rk1828_kv_type_ok(type) ? quant_row_size(type, kv_dim) : 0;
}

/**
 * rk1828_kv_seq_bytes() - bytes of one sequence's K (or V) cache of one
 * layer, @n_ctx rows, rounded up to 4 (the smallest state region stride,
 * struct rk1828_program.kv_seq_stride)
 * @type: a K/V cache type
 * @n_ctx: rows
 * @kv_dim: n_kv_heads * head_dim
 *
 * Return: the bytes, or 0 as rk1828_kv_row_bytes() or on overflow.
 */
static inline uint64_t rk1828_kv_seq_bytes(int type, uint64_t n_ctx, size_t kv_dim)
{
	uint64_t row = rk1828_kv_row_bytes(type, kv_dim), n;

	if (!row || __builtin_mul_overflow(row, n_ctx, &n) || n > UINT64_MAX - 3)
		return 0;
	return (n + 3) & ~(uint64_t)3;
}

/**
 * rk1828_kv_store() - encode one K (or V) row
 * @type: a K/V cache type
 * @x: @kv_dim floats
 * @row: rk1828_kv_row_bytes(@type, @kv_dim) bytes (4-byte aligned for F32)
 * @kv_dim: values in the row
 */
static inline void rk1828_kv_store(int type, const float *x, uint8_t *row, size_t kv_dim)
{
	size_t i;

	switch (type) {
	case QUANT_TYPE_F16:
		for (i = 0; i < kv_dim; i++)
			quant_store_le16(row + 2 * i, quant_fp32_to_fp16(x[i]));
		break;
	case QUANT_TYPE_Q8_0:
		for (i = 0; i < kv_dim / QUANT_QK8_0; i++)
			quant_encode_q8_0(x + i * QUANT_QK8_0, row + i * QUANT_Q8_0_BLOCK_BYTES);
		break;
	case QUANT_TYPE_Q4_0:
		for (i = 0; i < kv_dim / QUANT_QK4_0; i++)
			quant_encode_q4_0(x + i * QUANT_QK4_0, row + i * QUANT_Q4_0_BLOCK_BYTES);
		break;
	default:
		memcpy(row, x, kv_dim * sizeof(float));
		break;
	}
}

/**
 * rk1828_kv_load() - decode values [@off, @off + @n) of one K (or V) row
 * @type: a K/V cache type
 * @row: the row as rk1828_kv_store() wrote it
 * @off: first value (a head's offset, n_kv_head * head_dim)
 * @n: values (head_dim)
 * @tmp: 32 floats of scratch (a block that also holds other heads)
 * @y: out: @n floats
 *
 * Exactly the floats quant_dequantize_row() gives for those positions.
 */
static inline void rk1828_kv_load(int type, const uint8_t *row, size_t off, size_t n,
				  float *tmp, float *y)
{
	size_t bs, per, i, b, e;

	switch (type) {
	case QUANT_TYPE_F32:
		memcpy(y, row + off * sizeof(float), n * sizeof(float));
		return;
	case QUANT_TYPE_F16:
		for (i = 0; i < n; i++)
			y[i] = quant_fp16_to_fp32(quant_load_le16(row + 2 * (off + i)));
		return;
	default:
		break;
	}
	bs = quant_block_size(type);
	per = quant_block_bytes(type);
	for (i = off; i < off + n; i = e) {
		b = i / bs;
		e = (b + 1) * bs < off + n ? (b + 1) * bs : off + n;
		if (i % bs == 0 && e - i == bs) {
			quant_dequantize_block(type, row + b * per, y + (i - off));
		} else {
			quant_dequantize_block(type, row + b * per, tmp);
			memcpy(y + (i - off), tmp + i % bs, (e - i) * sizeof(float));
		}
	}
}

#endif /* RK1828_KV_CACHE_H */
