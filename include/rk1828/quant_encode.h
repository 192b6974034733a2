/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Encoders both sides need: IEEE-754 binary16 rounding and the Q4_0 and
 * Q8_0 block encoders (layouts in rk1828/quant_blocks.h). The host writes
 * weights with them (userspace/common/quant.c, quant_quantize_row()); the
 * card stores K/V cache rows with them (rk1828/kv_cache.h, the
 * emulator's attention), so the bytes a host test predicts are the bytes
 * the card writes. Header-only, C library only, like quant_blocks.h.
 *
 * Rounding is that of llama.cpp's reference encoders (ggml-quants.c
 * quantize_row_q4_0_ref / quantize_row_q8_0_ref): the scale is stored as
 * f16, the quants are computed with the unrounded float scale.
 */
#ifndef RK1828_QUANT_ENCODE_H
#define RK1828_QUANT_ENCODE_H

#include <math.h>
#include <stdint.h>

#include "rk1828/quant_blocks.h"
#include "rk1828/util.h"

/**
 * quant_fp32_to_fp16() - float to IEEE-754 binary16 bits, round to nearest even
 * @f: value
 *
 * Overflow gives +-inf, tiny values give half subnormals or signed zero,
 * NaN stays NaN (quiet, top payload bits kept). Matches the F16C
 * instruction VCVTPS2PH with rounding mode 0.
 *
 * Return: the half-precision bits.
 */
static inline uint16_t quant_fp32_to_fp16(float f)
{
	uint32_t u = util_f32_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
	uint32_t exp = (u >> 23) & 0xff;
	uint32_t man = u & 0x7fffff;
	uint32_t full, rest, half, hm;
	int e, shift;

	if (exp == 0xff) {
		if (man == 0)
			return sign | 0x7c00;
		/* NaN: keep the top payload bits, force quiet. */
		return sign | 0x7e00 | (uint16_t)(man >> 13);
	}
	/* Unbiased exponent e; half normal range is e in [-14, 15]. */
	e = (int)exp - 127;
	if (e > 15)
		return sign | 0x7c00;
	if (e >= -14) {
		uint32_t h = ((uint32_t)(e + 15) << 10) | (man >> 13);

		rest = man & 0x1fff;
		/* Round to nearest even; a carry may bump the exponent (to inf). */
		if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
			h++;
		return sign | (uint16_t)h;
	}
	if (e < -25)			/* below half of the smallest subnormal */
		return sign;
	/* Subnormal half: value = m * 2^-24 with m = full mantissa >> shift. */
	full = man | 0x800000;		/* 24 bits, value full * 2^(e-23) */
	shift = -e - 1;			/* (e - 23) -> -24 : shift by -1 - e */
	hm = full >> shift;
	rest = full & ((1u << shift) - 1);
	half = 1u << (shift - 1);
	if (rest > half || (rest == half && (hm & 1)))
		hm++;
	return sign | (uint16_t)hm;
}

/* Little-endian 16-bit store at any alignment. */
static inline void quant_store_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/**
 * quant_encode_q4_0() - one Q4_0 block
 * @x: 32 floats
 * @out: QUANT_Q4_0_BLOCK_BYTES bytes, any alignment
 *
 * m is the element of largest magnitude (sign kept, the first of equals),
 * d = m / -8, q = min(15, (int)(x / d + 8.5)); an all-zero block has d 0
 * and every q 8.
 */
static inline void quant_encode_q4_0(const float *x, uint8_t *out)
{
	float amax = 0.0f, max = 0.0f, d, id;
	int j;

	for (j = 0; j < QUANT_QK4_0; j++) {
		if (fabsf(x[j]) > amax) {
			amax = fabsf(x[j]);
			max = x[j];
		}
	}
	d = max / -8.0f;
	id = d != 0.0f ? 1.0f / d : 0.0f;
	quant_store_le16(out, quant_fp32_to_fp16(d));
	for (j = 0; j < QUANT_QK4_0 / 2; j++) {
		int q0 = (int)(x[j] * id + 8.5f);
		int q1 = (int)(x[j + QUANT_QK4_0 / 2] * id + 8.5f);

		q0 = q0 > 15 ? 15 : q0;
		q1 = q1 > 15 ? 15 : q1;
		out[2 + j] = (uint8_t)(q0 | (q1 << 4));
	}
}

/**
 * quant_encode_q8_0() - one Q8_0 block
 * @x: 32 floats
 * @out: QUANT_Q8_0_BLOCK_BYTES bytes, any alignment
 *
 * d = max|x| / 127, q = round(x / d) (half away from zero).
 */
static inline void quant_encode_q8_0(const float *x, uint8_t *out)
{
	float amax = 0.0f, d, id;
	int j;

	for (j = 0; j < QUANT_QK8_0; j++)
		if (fabsf(x[j]) > amax)
			amax = fabsf(x[j]);
	d = amax / 127.0f;
	id = d != 0.0f ? 1.0f / d : 0.0f;
	quant_store_le16(out, quant_fp32_to_fp16(d));
	for (j = 0; j < QUANT_QK8_0; j++)
		out[2 + j] = (uint8_t)(int8_t)roundf(x[j] * id);
}

#endif /* RK1828_QUANT_ENCODE_H */
