// SPDX-License-Identifier: MIT
/*
 * Scalar reference quantization (encoding): see quant.h and
 * rk1828/quant_blocks.h for the formats.
 */
#include "quant.h"
#include "quant_enc.h"
#include "rk1828/util.h"

#include <math.h>
#include <string.h>

uint16_t quant_fp32_to_fp16(float f)
{
	uint32_t u = util_f32_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
	uint32_t exp = (u >> 23) & 0xff;
	uint32_t man = u & 0x7fffff;

	if (exp == 0xff) {
		if (man == 0)
			return sign | 0x7c00;
		/* NaN: keep the top payload bits, force quiet. */
		return sign | 0x7e00 | (uint16_t)(man >> 13);
	}
	/* Unbiased exponent e; half normal range is e in [-14, 15]. */
	int e = (int)exp - 127;

	if (e > 15)
		return sign | 0x7c00;
	if (e >= -14) {
		uint32_t hm = man >> 13;
		uint32_t rest = man & 0x1fff;
		uint32_t h = ((uint32_t)(e + 15) << 10) | hm;

		/* Round to nearest even; a carry may bump the exponent (to inf). */
		if (rest > 0x1000 || (rest == 0x1000 && (hm & 1)))
			h++;
		return sign | (uint16_t)h;
	}
	if (e < -25)			/* below half of the smallest subnormal */
		return sign;
	/* Subnormal half: value = m * 2^-24 with m = full mantissa >> shift. */
	uint32_t full = man | 0x800000;	/* 24 bits, value full * 2^(e-23) */
	int shift = -e - 1;		/* (e - 23) -> -24 : shift by -1 - e */
	uint32_t hm = full >> shift;
	uint32_t rest = full & ((1u << shift) - 1);
	uint32_t half = 1u << (shift - 1);

	if (rest > half || (rest == half && (hm & 1)))
		hm++;
	return sign | (uint16_t)hm;
}

const char *quant_type_name(int type)
{
	switch (type) {
	case QUANT_TYPE_F32:
		return "f32";
	case QUANT_TYPE_F16:
		return "f16";
	case QUANT_TYPE_Q4_0:
		return "q4_0";
	case QUANT_TYPE_Q8_0:
		return "q8_0";
	case QUANT_TYPE_Q4_1:
		return "q4_1";
	case QUANT_TYPE_Q5_0:
		return "q5_0";
	case QUANT_TYPE_Q5_1:
		return "q5_1";
	case QUANT_TYPE_Q4_K:
		return "q4_k";
	case QUANT_TYPE_Q5_K:
		return "q5_k";
	case QUANT_TYPE_Q6_K:
		return "q6_k";
	case QUANT_TYPE_BF16:
		return "bf16";
	default:
		return "?";
	}
}

static void store_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void quantize_block_q4_0(const float *x, uint8_t *out)
{
	float amax = 0.0f, max = 0.0f;
	int j;

	for (j = 0; j < QUANT_QK4_0; j++) {
		if (fabsf(x[j]) > amax) {
			amax = fabsf(x[j]);
			max = x[j];
		}
	}
	float d = max / -8.0f;
	float id = d != 0.0f ? 1.0f / d : 0.0f;

	store_le16(out, quant_fp32_to_fp16(d));
	for (j = 0; j < QUANT_QK4_0 / 2; j++) {
		int q0 = (int)(x[j] * id + 8.5f);
		int q1 = (int)(x[j + QUANT_QK4_0 / 2] * id + 8.5f);

		q0 = q0 > 15 ? 15 : q0;
		q1 = q1 > 15 ? 15 : q1;
		out[2 + j] = (uint8_t)(q0 | (q1 << 4));
	}
}

static void quantize_block_q8_0(const float *x, uint8_t *out)
{
	float amax = 0.0f;
	int j;

	for (j = 0; j < QUANT_QK8_0; j++)
		if (fabsf(x[j]) > amax)
			amax = fabsf(x[j]);
	float d = amax / 127.0f;
	float id = d != 0.0f ? 1.0f / d : 0.0f;

	store_le16(out, quant_fp32_to_fp16(d));
	for (j = 0; j < QUANT_QK8_0; j++)
		out[2 + j] = (uint8_t)(int8_t)roundf(x[j] * id);
}

int quant_quantize_row(int type, const float *src, void *dst, size_t n)
{
	size_t i, bs = quant_block_size(type), per = quant_block_bytes(type);
	uint8_t *p = dst;

	if (n && quant_row_size(type, n) == 0)
		return -1;
	switch (type) {
	case QUANT_TYPE_F32:
		memcpy(dst, src, n * sizeof(float));
		return 0;
	case QUANT_TYPE_F16:
		for (i = 0; i < n; i++)
			store_le16(p + 2 * i, quant_fp32_to_fp16(src[i]));
		return 0;
	case QUANT_TYPE_Q4_0:
		for (i = 0; i < n / QUANT_QK4_0; i++)
			quantize_block_q4_0(src + i * QUANT_QK4_0, p + i * QUANT_Q4_0_BLOCK_BYTES);
		return 0;
	case QUANT_TYPE_Q8_0:
		for (i = 0; i < n / QUANT_QK8_0; i++)
			quantize_block_q8_0(src + i * QUANT_QK8_0, p + i * QUANT_Q8_0_BLOCK_BYTES);
		return 0;
	case QUANT_TYPE_BF16:
		for (i = 0; i < n; i++)
			store_le16(p + 2 * i, quant_fp32_to_bf16(src[i]));
		return 0;
	default:
		break;
	}
	for (i = 0; i < n / bs; i++, p += per, src += bs) {
		switch (type) {
		case QUANT_TYPE_Q4_1:
			quant_enc_q4_1(src, p);
			break;
		case QUANT_TYPE_Q5_0:
			quant_enc_q5_0(src, p);
			break;
		case QUANT_TYPE_Q5_1:
			quant_enc_q5_1(src, p);
			break;
		case QUANT_TYPE_Q4_K:
			quant_enc_q4_k(src, p);
			break;
		case QUANT_TYPE_Q5_K:
			quant_enc_q5_k(src, p);
			break;
		case QUANT_TYPE_Q6_K:
			quant_enc_q6_k(src, p);
			break;
		default:
			return -1;
		}
	}
	return 0;
}
