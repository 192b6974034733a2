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
 * but the C library (and rk1828/util.h), so neither side links the
 * other's code.
 *
 * Type numbers are ggml's (ggml/include/ggml.h enum ggml_type, the numbers
 * GGUF files store). Block layouts follow ggml's ggml/src/ggml-common.h
 * (block_q4_0 ... block_q6_K) and the decoding its ggml-quants.c
 * dequantize_row_*; little endian and packed. "f16" is an IEEE-754
 * binary16, d and m below are floats decoded from them:
 *
 *   BF16: the top 16 bits of an IEEE-754 float.
 *   Q4_0: 32 weights in 18 bytes: f16 scale d, then 16 bytes of nibbles.
 *         Byte j holds element j in its low nibble and element j + 16 in
 *         its high nibble; x = d * (q - 8).
 *   Q4_1: 32 weights in 20 bytes: f16 d, f16 m, 16 bytes of nibbles as
 *         Q4_0; x = q * d + m (the vendor's group-32 asymmetric W4A16).
 *   Q5_0: 32 weights in 22 bytes: f16 d, 4 bytes qh, 16 bytes of nibbles
 *         as Q4_0; bit j of qh (a little-endian u32) is bit 4 of element
 *         j; x = (q - 16) * d.
 *   Q5_1: 32 weights in 24 bytes: f16 d, f16 m, qh, nibbles as Q5_0;
 *         x = q * d + m.
 *   Q8_0: 32 weights in 34 bytes: f16 scale d, then 32 int8; x = d * q.
 *   Q4_K: 256 weights in 144 bytes: f16 d, f16 dmin, 12 bytes of 6-bit
 *         scales sc[8] and mins m[8] (one per 32 weights, packed as
 *         quant_k_scale_min() reads them), 128 bytes of nibbles: chunk c
 *         (0..3) of 64 weights uses bytes 32c..32c+31, low nibbles for
 *         weights 64c + l (sub-block 2c), high nibbles for 64c + 32 + l
 *         (sub-block 2c+1); x = (d * sc) * q - (dmin * m).
 *   Q5_K: 256 weights in 176 bytes: d, dmin, scales as Q4_K, 32 bytes qh,
 *         128 bytes of nibbles as Q4_K; bit 2c of qh[l] is bit 4 of weight
 *         64c + l, bit 2c+1 that of weight 64c + 32 + l.
 *   Q6_K: 256 weights in 210 bytes: 128 bytes ql, 64 bytes qh, 16 int8
 *         scales (one per 16 weights), f16 d. In half h (128 weights),
 *         weight 128h + 32k + l (k 0..3, l 0..31) has its low 4 bits in
 *         ql[64h + l + 32 (k & 1)] (low nibble for k < 2, high for k >= 2)
 *         and its top 2 bits at bit 2k of qh[32h + l];
 *         x = (d * sc[weight / 16]) * (q - 32).
 *
 * A tensor is row-major: rows of ne0 elements, each row a whole number of
 * blocks, rows contiguous. The decoding below is normative: the card's
 * vector kernels must produce exactly the floats quant_dequantize_row()
 * produces (tests/unit/test_emu_nn.c checks the emulator's).
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

#include "rk1828/util.h"

/* Tensor types (ggml type numbers). */
#define QUANT_TYPE_F32		0
#define QUANT_TYPE_F16		1
#define QUANT_TYPE_Q4_0		2
#define QUANT_TYPE_Q4_1		3
#define QUANT_TYPE_Q5_0		6
#define QUANT_TYPE_Q5_1		7
#define QUANT_TYPE_Q8_0		8
#define QUANT_TYPE_Q4_K		12
#define QUANT_TYPE_Q5_K		13
#define QUANT_TYPE_Q6_K		14
#define QUANT_TYPE_BF16		30

/* Elements per block: the 32-weight formats and the K-quant super-blocks. */
#define QUANT_QK4_0		32
#define QUANT_QK8_0		32
#define QUANT_QK		32
#define QUANT_QK_K		256

/* Bytes per block. */
#define QUANT_Q4_0_BLOCK_BYTES	18
#define QUANT_Q4_1_BLOCK_BYTES	20
#define QUANT_Q5_0_BLOCK_BYTES	22
#define QUANT_Q5_1_BLOCK_BYTES	24
#define QUANT_Q8_0_BLOCK_BYTES	34
#define QUANT_Q4_K_BLOCK_BYTES	144
#define QUANT_Q5_K_BLOCK_BYTES	176
#define QUANT_Q6_K_BLOCK_BYTES	210

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

/**
 * struct quant_block_q4_1 - one Q4_1 block (20 bytes)
 * @d: scale, f16 bits
 * @m: offset (the group's minimum), f16 bits
 * @qs: nibbles as in Q4_0
 */
struct quant_block_q4_1 {
	uint16_t d;
	uint16_t m;
	uint8_t qs[QUANT_QK / 2];
} __attribute__((packed));

/**
 * struct quant_block_q5_0 - one Q5_0 block (22 bytes)
 * @d: scale, f16 bits
 * @qh: bit 4 of each element (bit j: element j), little endian
 * @qs: low nibbles as in Q4_0
 */
struct quant_block_q5_0 {
	uint16_t d;
	uint8_t qh[4];
	uint8_t qs[QUANT_QK / 2];
} __attribute__((packed));

/**
 * struct quant_block_q5_1 - one Q5_1 block (24 bytes)
 * @d: scale, f16 bits
 * @m: offset, f16 bits
 * @qh: bit 4 of each element, as Q5_0
 * @qs: low nibbles as in Q4_0
 */
struct quant_block_q5_1 {
	uint16_t d;
	uint16_t m;
	uint8_t qh[4];
	uint8_t qs[QUANT_QK / 2];
} __attribute__((packed));

/**
 * struct quant_block_q4_k - one Q4_K super-block (144 bytes)
 * @d: scale of the 6-bit scales, f16 bits
 * @dmin: scale of the 6-bit mins, f16 bits
 * @scales: 8 scales and 8 mins, 6 bits each (quant_k_scale_min())
 * @qs: nibbles, see the layout at the top of this header
 */
struct quant_block_q4_k {
	uint16_t d;
	uint16_t dmin;
	uint8_t scales[12];
	uint8_t qs[QUANT_QK_K / 2];
} __attribute__((packed));

/**
 * struct quant_block_q5_k - one Q5_K super-block (176 bytes)
 * @d: scale of the 6-bit scales, f16 bits
 * @dmin: scale of the 6-bit mins, f16 bits
 * @scales: as Q4_K
 * @qh: bit 4 of the weights, see the top of this header
 * @qs: low nibbles as Q4_K
 */
struct quant_block_q5_k {
	uint16_t d;
	uint16_t dmin;
	uint8_t scales[12];
	uint8_t qh[QUANT_QK_K / 8];
	uint8_t qs[QUANT_QK_K / 2];
} __attribute__((packed));

/**
 * struct quant_block_q6_k - one Q6_K super-block (210 bytes)
 * @ql: low 4 bits of the weights
 * @qh: top 2 bits of the weights
 * @scales: signed 8-bit scale of each 16 weights
 * @d: super-block scale, f16 bits
 */
struct quant_block_q6_k {
	uint8_t ql[QUANT_QK_K / 2];
	uint8_t qh[QUANT_QK_K / 4];
	int8_t scales[QUANT_QK_K / 16];
	uint16_t d;
} __attribute__((packed));

_Static_assert(sizeof(struct quant_block_q4_0) == QUANT_Q4_0_BLOCK_BYTES, "q4_0 block");
_Static_assert(sizeof(struct quant_block_q8_0) == QUANT_Q8_0_BLOCK_BYTES, "q8_0 block");
_Static_assert(sizeof(struct quant_block_q4_1) == QUANT_Q4_1_BLOCK_BYTES, "q4_1 block");
_Static_assert(sizeof(struct quant_block_q5_0) == QUANT_Q5_0_BLOCK_BYTES, "q5_0 block");
_Static_assert(sizeof(struct quant_block_q5_1) == QUANT_Q5_1_BLOCK_BYTES, "q5_1 block");
_Static_assert(sizeof(struct quant_block_q4_k) == QUANT_Q4_K_BLOCK_BYTES, "q4_k block");
_Static_assert(sizeof(struct quant_block_q5_k) == QUANT_Q5_K_BLOCK_BYTES, "q5_k block");
_Static_assert(sizeof(struct quant_block_q6_k) == QUANT_Q6_K_BLOCK_BYTES, "q6_k block");

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
	float f;

	if (exp == 0x1f)		/* inf / nan */
		return util_bits_f32(sign | 0x7f800000 | (man << 13));
	if (exp == 0) {
		/* Zero or subnormal: man * 2^-24, exact in float. */
		f = (float)man * 0x1p-24f;
		return sign ? -f : f;
	}
	return util_bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

/**
 * quant_block_size() - elements per block of @type
 * @type: QUANT_TYPE_*
 *
 * Return: 1 for F32/F16/BF16, 32 for Q4_0/Q4_1/Q5_0/Q5_1/Q8_0, 256 for
 * Q4_K/Q5_K/Q6_K, 0 for a type the card does not know.
 */
static inline unsigned int quant_block_size(int type)
{
	switch (type) {
	case QUANT_TYPE_F32:
	case QUANT_TYPE_F16:
	case QUANT_TYPE_BF16:
		return 1;
	case QUANT_TYPE_Q4_0:
	case QUANT_TYPE_Q4_1:
	case QUANT_TYPE_Q5_0:
	case QUANT_TYPE_Q5_1:
	case QUANT_TYPE_Q8_0:
		return QUANT_QK;
	case QUANT_TYPE_Q4_K:
	case QUANT_TYPE_Q5_K:
	case QUANT_TYPE_Q6_K:
		return QUANT_QK_K;
	default:
		return 0;
	}
}

/**
 * quant_block_bytes() - bytes of one block of @type
 * @type: QUANT_TYPE_*
 *
 * Return: the size, 0 for an unknown type.
 */
static inline size_t quant_block_bytes(int type)
{
	switch (type) {
	case QUANT_TYPE_F32:
		return 4;
	case QUANT_TYPE_F16:
	case QUANT_TYPE_BF16:
		return 2;
	case QUANT_TYPE_Q4_0:
		return QUANT_Q4_0_BLOCK_BYTES;
	case QUANT_TYPE_Q4_1:
		return QUANT_Q4_1_BLOCK_BYTES;
	case QUANT_TYPE_Q5_0:
		return QUANT_Q5_0_BLOCK_BYTES;
	case QUANT_TYPE_Q5_1:
		return QUANT_Q5_1_BLOCK_BYTES;
	case QUANT_TYPE_Q8_0:
		return QUANT_Q8_0_BLOCK_BYTES;
	case QUANT_TYPE_Q4_K:
		return QUANT_Q4_K_BLOCK_BYTES;
	case QUANT_TYPE_Q5_K:
		return QUANT_Q5_K_BLOCK_BYTES;
	case QUANT_TYPE_Q6_K:
		return QUANT_Q6_K_BLOCK_BYTES;
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
	per = quant_block_bytes(type);
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
 * quant_bf16_to_fp32() - bfloat16 bits to float (exact)
 * @h: bfloat16 bits
 *
 * Return: the value.
 */
static inline float quant_bf16_to_fp32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/**
 * quant_k_scale_min() - the 6-bit scale and min of sub-block @j (0..7) of
 * a Q4_K/Q5_K super-block (ggml-quants.c get_scale_min_k4)
 * @j: sub-block of 32 weights
 * @s: the 12 scale bytes
 * @sc: out, scale
 * @m: out, min
 *
 * Sub-blocks 0..3: low 6 bits of s[j] and s[j + 4]. Sub-blocks 4..7: the
 * low nibble (scale) and high nibble (min) of s[j + 4], with their top two
 * bits in the top bits of s[j - 4] (scale) and s[j] (min).
 */
static inline void quant_k_scale_min(int j, const uint8_t *s, int *sc, int *m)
{
	if (j < 4) {
		*sc = s[j] & 63;
		*m = s[j + 4] & 63;
	} else {
		*sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
		*m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
	}
}

/**
 * quant_dequantize_block() - decode one block of the 32- and 256-weight
 * formats (Q4_0 ... Q6_K) at @p into @y
 * @type: QUANT_TYPE_* with quant_block_size() > 1
 * @p: quant_block_bytes(@type) bytes
 * @y: quant_block_size(@type) floats
 *
 * Return: 0, or -1 for an F32/F16/BF16 or unknown @type.
 */
static inline int quant_dequantize_block(int type, const uint8_t *p, float *y)
{
	float d, m = 0.0f, dmin;
	uint32_t h;
	int j, c, l;

	switch (type) {
	case QUANT_TYPE_Q4_0:
	case QUANT_TYPE_Q4_1:
		d = quant_fp16_to_fp32(quant_load_le16(p));
		if (type == QUANT_TYPE_Q4_1)
			m = quant_fp16_to_fp32(quant_load_le16(p + 2));
		p += type == QUANT_TYPE_Q4_1 ? 4 : 2;
		for (j = 0; j < 16; j++) {
			if (type == QUANT_TYPE_Q4_0) {
				y[j] = d * (float)((p[j] & 0x0f) - 8);
				y[j + 16] = d * (float)((p[j] >> 4) - 8);
			} else {
				y[j] = (float)(p[j] & 0x0f) * d + m;
				y[j + 16] = (float)(p[j] >> 4) * d + m;
			}
		}
		return 0;
	case QUANT_TYPE_Q5_0:
	case QUANT_TYPE_Q5_1:
		d = quant_fp16_to_fp32(quant_load_le16(p));
		if (type == QUANT_TYPE_Q5_1)
			m = quant_fp16_to_fp32(quant_load_le16(p + 2));
		p += type == QUANT_TYPE_Q5_1 ? 4 : 2;
		h = p[0] | (p[1] << 8) | (p[2] << 16) | ((uint32_t)p[3] << 24);
		p += 4;
		for (j = 0; j < 16; j++) {
			int q0 = (p[j] & 0x0f) | (int)(((h >> j) & 1) << 4);
			int q1 = (p[j] >> 4) | (int)(((h >> (j + 16)) & 1) << 4);

			if (type == QUANT_TYPE_Q5_0) {
				y[j] = (float)(q0 - 16) * d;
				y[j + 16] = (float)(q1 - 16) * d;
			} else {
				y[j] = (float)q0 * d + m;
				y[j + 16] = (float)q1 * d + m;
			}
		}
		return 0;
	case QUANT_TYPE_Q8_0:
		d = quant_fp16_to_fp32(quant_load_le16(p));
		for (j = 0; j < 32; j++)
			y[j] = d * (float)(int8_t)p[2 + j];
		return 0;
	case QUANT_TYPE_Q4_K:
	case QUANT_TYPE_Q5_K: {
		const uint8_t *sc = p + 4, *qh = p + 16;
		const uint8_t *qs = type == QUANT_TYPE_Q5_K ? p + 48 : p + 16;

		d = quant_fp16_to_fp32(quant_load_le16(p));
		dmin = quant_fp16_to_fp32(quant_load_le16(p + 2));
		for (c = 0; c < 4; c++) {
			int s0, m0, s1, m1;
			float d1, n1, d2, n2;

			quant_k_scale_min(2 * c, sc, &s0, &m0);
			quant_k_scale_min(2 * c + 1, sc, &s1, &m1);
			d1 = d * (float)s0;
			n1 = dmin * (float)m0;
			d2 = d * (float)s1;
			n2 = dmin * (float)m1;
			for (l = 0; l < 32; l++) {
				int a = qs[32 * c + l] & 15, b = qs[32 * c + l] >> 4;

				if (type == QUANT_TYPE_Q5_K) {
					a |= ((qh[l] >> (2 * c)) & 1) << 4;
					b |= ((qh[l] >> (2 * c + 1)) & 1) << 4;
				}
				y[64 * c + l] = d1 * (float)a - n1;
				y[64 * c + 32 + l] = d2 * (float)b - n2;
			}
		}
		return 0;
	}
	case QUANT_TYPE_Q6_K: {
		const uint8_t *ql = p, *qh = p + 128;
		const int8_t *sc = (const int8_t *)(p + 192);

		d = quant_fp16_to_fp32(quant_load_le16(p + 208));
		for (c = 0; c < 8; c++) {	/* c = 4 * half + k */
			int hf = c / 4, k = c % 4;

			for (l = 0; l < 32; l++) {
				int lo = ql[64 * hf + l + 32 * (k & 1)];
				int q = ((k >= 2 ? lo >> 4 : lo & 15) |
					 (((qh[32 * hf + l] >> (2 * k)) & 3) << 4)) - 32;
				int e = 32 * c + l;

				y[e] = d * (float)sc[e / 16] * (float)q;
			}
		}
		return 0;
	}
	default:
		return -1;
	}
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
	size_t i, bs = quant_block_size(type), per = quant_block_bytes(type);

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
	case QUANT_TYPE_BF16:
		for (i = 0; i < n; i++)
			dst[i] = quant_bf16_to_fp32(quant_load_le16(p + 2 * i));
		return 0;
	default:
		for (i = 0; i < n / bs; i++, p += per)
			if (quant_dequantize_block(type, p, dst + i * bs))
				return -1;
		return 0;
	}
}

#endif /* RK1828_QUANT_BLOCKS_H */
