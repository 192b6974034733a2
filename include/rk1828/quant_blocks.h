/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Tensor element formats shared by the host and the card: the type numbers
 * a segment program names (struct rk1828_prog_tensor, rk1828/program.h),
 * the byte layout of the quantized blocks, and their decoding. The host
 * writes weights in these formats (userspace/common/quant.c encodes them)
 * and the card (emulator/, the firmware) reads them, so this header is the
 * format contract between the two; it is header-only and needs nothing
 * but the C library, so neither side links the other's code.
 *
 * Type numbers are ggml's (ggml/include/ggml.h enum ggml_type, the numbers
 * GGUF files store). Block layouts follow ggml's ggml/src/ggml-common.h
 * (block_q4_0, block_q8_0), little endian and packed:
 *
 *   Q4_0: 32 weights in 18 bytes: f16 scale d, then 16 bytes of nibbles.
 *         Byte j holds element j in its low nibble and element j + 16 in
 *         its high nibble; x = d * (q - 8).
 *   Q8_0: 32 weights in 34 bytes: f16 scale d, then 32 int8; x = d * q.
 *
 * A tensor is row-major: rows of ne0 elements, each row a whole number of
 * blocks, rows contiguous. The decoding below is normative: the card's
 * vector kernels must produce exactly the floats quant_dequantize_row()
 * produces (tests/unit/test_nn.c checks the emulator's).
 *
 * Extending: a new format gets the next free ggml type number as
 * QUANT_TYPE_*, its block struct with a size check, a case in
 * quant_block_size(), quant_row_size() and quant_dequantize_row(), and an
 * encoder in userspace/common/quant.c; a card that does not know the type
 * rejects a program naming it with RK1828_HIF_ST_INVAL.
 */
#ifndef RK1828_QUANT_BLOCKS_H
#define RK1828_QUANT_BLOCKS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Tensor types (ggml type numbers). */
#define QUANT_TYPE_F32		0
#define QUANT_TYPE_F16		1
#define QUANT_TYPE_Q4_0		2
#define QUANT_TYPE_Q8_0		8

/* Elements per block of Q4_0 and Q8_0. */
#define QUANT_QK4_0		32
#define QUANT_QK8_0		32

/* Bytes per block. */
#define QUANT_Q4_0_BLOCK_BYTES	18
#define QUANT_Q8_0_BLOCK_BYTES	34

/**
 * struct quant_block_q4_0 - one Q4_0 block (18 bytes, no padding)
 * @d: scale as IEEE-754 binary16 bits, little endian
 * @qs: nibbles; low nibble of qs[j] is element j, high nibble element j+16
 */
struct quant_block_q4_0 {
	uint16_t d;
	uint8_t qs[QUANT_QK4_0 / 2];
} __attribute__((packed));

/**
 * struct quant_block_q8_0 - one Q8_0 block (34 bytes, no padding)
 * @d: scale as IEEE-754 binary16 bits, little endian
 * @qs: signed 8-bit quants, element j is qs[j]
 */
struct quant_block_q8_0 {
	uint16_t d;
	int8_t qs[QUANT_QK8_0];
} __attribute__((packed));

_Static_assert(sizeof(struct quant_block_q4_0) == QUANT_Q4_0_BLOCK_BYTES, "q4_0 block");
_Static_assert(sizeof(struct quant_block_q8_0) == QUANT_Q8_0_BLOCK_BYTES, "q8_0 block");

/**
 * quant_fp16_to_fp32() - exact conversion of IEEE-754 binary16 bits to float
 * @h: half-precision bits
 *
 * Handles zeros, subnormals, infinities and NaNs (payload kept, made
 * quiet by the float format). Every half value is exactly representable.
 *
 * Return: the value as a float.
 */
static inline float quant_fp16_to_fp32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f;
	uint32_t man = h & 0x3ff;
	uint32_t u;
	float f;

	if (exp == 0x1f) {		/* inf / nan */
		u = sign | 0x7f800000 | (man << 13);
	} else if (exp == 0) {
		/* Zero or subnormal: man * 2^-24, exact in float. */
		f = (float)man * 0x1p-24f;
		return sign ? -f : f;
	} else {
		u = sign | ((exp + 112) << 23) | (man << 13);
	}
	memcpy(&f, &u, sizeof(f));
	return f;
}

/**
 * quant_block_size() - elements per block of @type
 * @type: QUANT_TYPE_*
 *
 * Return: 1 for F32/F16, 32 for Q4_0/Q8_0, 0 for an unknown type.
 */
static inline unsigned int quant_block_size(int type)
{
	switch (type) {
	case QUANT_TYPE_F32:
	case QUANT_TYPE_F16:
		return 1;
	case QUANT_TYPE_Q4_0:
		return QUANT_QK4_0;
	case QUANT_TYPE_Q8_0:
		return QUANT_QK8_0;
	default:
		return 0;
	}
}

/**
 * quant_row_size() - bytes of a row of @n elements of @type
 * @type: QUANT_TYPE_*
 * @n: elements in the row
 *
 * Return: the byte count, or 0 when @type is unknown, @n is not a multiple
 * of the block size, or the result would overflow.
 */
static inline size_t quant_row_size(int type, size_t n)
{
	unsigned int bs = quant_block_size(type);
	size_t per;

	if (bs == 0 || n % bs)
		return 0;
	switch (type) {
	case QUANT_TYPE_F32:
		per = 4;
		break;
	case QUANT_TYPE_F16:
		per = 2;
		break;
	case QUANT_TYPE_Q4_0:
		per = QUANT_Q4_0_BLOCK_BYTES;
		break;
	default:
		per = QUANT_Q8_0_BLOCK_BYTES;
		break;
	}
	n /= bs;
	if (n > SIZE_MAX / per)
		return 0;
	return n * per;
}

/* Little-endian 16-bit load at any alignment. */
static inline uint16_t quant_load_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

/**
 * quant_dequantize_row() - convert @n elements of @type at @src to floats
 * @type: QUANT_TYPE_*
 * @src: quant_row_size(@type, @n) bytes, any alignment
 * @dst: @n floats
 * @n: element count, a multiple of quant_block_size(@type)
 *
 * Return: 0, or -1 (nothing written) on an unknown type or bad @n.
 */
static inline int quant_dequantize_row(int type, const void *src, float *dst, size_t n)
{
	const uint8_t *p = src;
	size_t i, j;

	if (n && quant_row_size(type, n) == 0)
		return -1;
	switch (type) {
	case QUANT_TYPE_F32:
		memcpy(dst, src, n * sizeof(float));
		return 0;
	case QUANT_TYPE_F16:
		for (i = 0; i < n; i++)
			dst[i] = quant_fp16_to_fp32(quant_load_le16(p + 2 * i));
		return 0;
	case QUANT_TYPE_Q4_0:
		for (i = 0; i < n / QUANT_QK4_0; i++, p += QUANT_Q4_0_BLOCK_BYTES) {
			float d = quant_fp16_to_fp32(quant_load_le16(p));
			const uint8_t *qs = p + 2;
			float *o = dst + i * QUANT_QK4_0;

			for (j = 0; j < QUANT_QK4_0 / 2; j++) {
				o[j] = d * (float)((qs[j] & 0x0f) - 8);
				o[j + QUANT_QK4_0 / 2] = d * (float)((qs[j] >> 4) - 8);
			}
		}
		return 0;
	case QUANT_TYPE_Q8_0:
		for (i = 0; i < n / QUANT_QK8_0; i++, p += QUANT_Q8_0_BLOCK_BYTES) {
			float d = quant_fp16_to_fp32(quant_load_le16(p));

			for (j = 0; j < QUANT_QK8_0; j++)
				dst[i * QUANT_QK8_0 + j] = d * (float)(int8_t)p[2 + j];
		}
		return 0;
	default:
		return -1;
	}
}

#endif /* RK1828_QUANT_BLOCKS_H */
