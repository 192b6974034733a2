/* SPDX-License-Identifier: MIT */
/*
 * Host-side quantization: encoding floats into the tensor formats of
 * rk1828/quant_blocks.h (F32, F16, Q4_0, Q8_0), which also holds the type
 * numbers, the block layouts and the decoding (quant_dequantize_row())
 * that host and card share.
 *
 * These functions are deliberately plain: the host uses them to write
 * weights (the GGUF writer, the runtime's F32 copies of norms) and the
 * tests use them as the scalar reference that the emulator's SIMD kernels
 * (emulator/nn.c) are checked against.
 */
#ifndef RK_QUANT_H
#define RK_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "rk1828/quant_blocks.h"
#include "rk1828/quant_encode.h"

/**
 * quant_type_name() - "f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1",
 * "q8_0", "q4_k", "q5_k", "q6_k", or "?" for others
 * @type: QUANT_TYPE_*
 *
 * Return: a static string.
 */
const char *quant_type_name(int type);

/* quant_kv_type_parse(): "auto", a choice left to the planner. */
#define QUANT_KV_AUTO	(-1)

/**
 * quant_kv_type_parse() - a --kv-type argument: "f32", "f16", "q8_0",
 * "q4_0" (QUANT_TYPE_*, the K/V cache types of rk1828/kv_cache.h), or
 * "auto" (%QUANT_KV_AUTO)
 * @s: the argument
 * @type: out
 *
 * Return: 0, or -1 for anything else.
 */
int quant_kv_type_parse(const char *s, int *type);

/**
 * quant_kv_type_name() - quant_type_name() of a K/V type, "auto" for
 * %QUANT_KV_AUTO
 * @type: a K/V type or %QUANT_KV_AUTO
 *
 * Return: a static string.
 */
const char *quant_kv_type_name(int type);

/**
 * quant_quantize_row() - convert @n floats to @type with llama.cpp's
 * reference rounding (ggml-quants.c quantize_row_q4_0_ref /
 * quantize_row_q8_0_ref)
 * @type: any QUANT_TYPE_*
 * @src: @n floats
 * @dst: quant_row_size(@type, @n) bytes, any alignment
 * @n: element count, a multiple of quant_block_size(@type)
 *
 * Q4_0: per block, m is the element of largest magnitude (sign kept),
 * d = m / -8, q = min(15, (int)(x / d + 8.5)). Q8_0: d = max|x| / 127,
 * q = round(x / d). The scale is stored as f16; quants are computed with
 * the unrounded float d, like llama.cpp. The other types use our own
 * round-to-nearest encoders (quant_enc.h).
 *
 * Return: 0, or -1 (nothing written) on an unknown type or bad @n.
 */
int quant_quantize_row(int type, const float *src, void *dst, size_t n);

#endif
