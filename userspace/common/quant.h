/* SPDX-License-Identifier: MIT */
/*
 * Scalar reference quantization helpers: IEEE-754 half <-> single
 * conversion and the GGML block formats F32, F16, Q4_0 and Q8_0.
 *
 * Block layouts follow ggml (ggml/src/ggml-common.h, block_q4_0 and
 * block_q8_0), stored little endian and packed:
 *   Q4_0: 32 weights in 18 bytes: f16 scale d, then 16 bytes of nibbles.
 *         Byte j holds element j in its low nibble and element j + 16 in
 *         its high nibble; x = d * (q - 8).
 *   Q8_0: 32 weights in 34 bytes: f16 scale d, then 32 int8; x = d * q.
 *
 * These functions are deliberately plain: the host uses them for the
 * embedding lookup and the tests use them as the scalar reference that the
 * emulator's SIMD kernels (emulator/kernels.c) are checked against.
 * Type numbers are the GGML ones (F32 0, F16 1, Q4_0 2, Q8_0 8), the same
 * as enum gguf_type and RK1828_TYPE_*.
 */
#ifndef RK_QUANT_H
#define RK_QUANT_H

#include <stddef.h>
#include <stdint.h>

#define QUANT_TYPE_F32		0
#define QUANT_TYPE_F16		1
#define QUANT_TYPE_Q4_0		2
#define QUANT_TYPE_Q8_0		8

/* Elements per block of Q4_0 and Q8_0. */
#define QK4_0			32
#define QK8_0			32

/* Bytes per block. */
#define QUANT_Q4_0_BLOCK_BYTES	18
#define QUANT_Q8_0_BLOCK_BYTES	34

/**
 * struct block_q4_0 - one Q4_0 block (18 bytes, no padding)
 * @d: scale as IEEE-754 binary16 bits
 * @qs: nibbles; low nibble of qs[j] is element j, high nibble element j+16
 */
struct block_q4_0 {
	uint16_t d;
	uint8_t qs[QK4_0 / 2];
} __attribute__((packed));

/**
 * struct block_q8_0 - one Q8_0 block (34 bytes, no padding)
 * @d: scale as IEEE-754 binary16 bits
 * @qs: signed 8-bit quants, element j is qs[j]
 */
struct block_q8_0 {
	uint16_t d;
	int8_t qs[QK8_0];
} __attribute__((packed));

/**
 * fp16_to_fp32() - exact conversion of IEEE-754 binary16 bits to float
 * @h: half-precision bits
 *
 * Handles zeros, subnormals, infinities and NaNs (payload kept, made
 * quiet by the float format). Every half value is exactly representable.
 */
float fp16_to_fp32(uint16_t h);

/**
 * fp32_to_fp16() - float to IEEE-754 binary16 bits, round to nearest even
 * @f: value
 *
 * Overflow gives +-inf, tiny values give half subnormals or signed zero,
 * NaN stays NaN (quiet, top payload bits kept). Matches the F16C
 * instruction VCVTPS2PH with rounding mode 0.
 */
uint16_t fp32_to_fp16(float f);

/**
 * quant_block_size() - elements per block of @type
 * Return: 1 for F32/F16, 32 for Q4_0/Q8_0, 0 for an unknown type.
 */
unsigned int quant_block_size(int type);

/**
 * quant_row_size() - bytes of a row of @n elements of @type
 * Return: the byte count, or 0 when @type is unknown, @n is not a multiple
 * of the block size, or the result would overflow.
 */
size_t quant_row_size(int type, size_t n);

/**
 * quant_type_name() - "f32", "f16", "q4_0", "q8_0" or "?" for others
 */
const char *quant_type_name(int type);

/**
 * dequantize_row() - convert @n elements of @type at @src to floats
 * @type: QUANT_TYPE_*
 * @src: quant_row_size(@type, @n) bytes, any alignment
 * @dst: @n floats
 * @n: element count, a multiple of quant_block_size(@type)
 *
 * Return: 0, or -1 (nothing written) on an unknown type or bad @n.
 */
int dequantize_row(int type, const void *src, float *dst, size_t n);

/**
 * quantize_row() - convert @n floats to @type with llama.cpp's reference
 * rounding (ggml-quants.c quantize_row_q4_0_ref / quantize_row_q8_0_ref)
 * @type: QUANT_TYPE_F32, F16, Q4_0 or Q8_0
 * @src: @n floats
 * @dst: quant_row_size(@type, @n) bytes, any alignment
 * @n: element count, a multiple of quant_block_size(@type)
 *
 * Q4_0: per block, m is the element of largest magnitude (sign kept),
 * d = m / -8, q = min(15, (int)(x / d + 8.5)). Q8_0: d = max|x| / 127,
 * q = round(x / d). The scale is stored as f16; quants are computed with
 * the unrounded float d, like llama.cpp.
 *
 * Return: 0, or -1 (nothing written) on an unknown type or bad @n.
 */
int quantize_row(int type, const float *src, void *dst, size_t n);

#endif
