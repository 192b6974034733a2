// SPDX-License-Identifier: MIT
/*
 * Encoders for the block formats beyond Q4_0/Q8_0: Q4_1, Q5_0, Q5_1
 * (32-weight blocks), the K-quant super-blocks Q4_K, Q5_K, Q6_K (256
 * weights) and BF16. The layouts and the normative decoding are in
 * rk1828/quant_blocks.h; these encoders only have to produce valid blocks
 * that decode close to the input. They are our own simple round-to-nearest
 * schemes (per-group min/max, then scales quantized against a super-block
 * scale), not llama.cpp's iterative searches, and they are deterministic:
 * plain float arithmetic, no library calls whose result could vary.
 */
#include "quant.h"
#include "quant_enc.h"

#include <math.h>
#include <string.h>

static void store_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static float half_round(float f)
{
	return quant_fp16_to_fp32(quant_fp32_to_fp16(f));
}

/* Nearest integer of @v clamped to [lo, hi] (v finite). */
static int qclamp(float v, int lo, int hi)
{
	int q = (int)lrintf(v);

	return q < lo ? lo : q > hi ? hi : q;
}

static void minmax(const float *x, int n, float *mn, float *mx)
{
	int i;

	*mn = *mx = x[0];
	for (i = 1; i < n; i++) {
		if (x[i] < *mn)
			*mn = x[i];
		if (x[i] > *mx)
			*mx = x[i];
	}
}

/* Largest magnitude with its sign (the Q4_0 rule, used by Q5_0 too). */
static float signed_absmax(const float *x, int n)
{
	float amax = 0.0f, max = 0.0f;
	int i;

	for (i = 0; i < n; i++) {
		if (fabsf(x[i]) > amax) {
			amax = fabsf(x[i]);
			max = x[i];
		}
	}
	return max;
}

/* Q4_1: x = d * q + m, q in 0..15; d = (max - min) / 15, m = min. */
void quant_enc_q4_1(const float *x, uint8_t *out)
{
	float mn, mx, d, id;
	int j;

	minmax(x, 32, &mn, &mx);
	d = half_round((mx - mn) / 15.0f);
	mn = half_round(mn);
	id = d != 0.0f ? 1.0f / d : 0.0f;
	store_le16(out, quant_fp32_to_fp16(d));
	store_le16(out + 2, quant_fp32_to_fp16(mn));
	for (j = 0; j < 16; j++) {
		int q0 = qclamp((x[j] - mn) * id, 0, 15);
		int q1 = qclamp((x[j + 16] - mn) * id, 0, 15);

		out[4 + j] = (uint8_t)(q0 | (q1 << 4));
	}
}

/* The 5-bit formats: low nibbles like Q4_0, bit j of qh = bit 4 of element j. */
static void pack5(const int *q, uint8_t *qh, uint8_t *qs)
{
	uint32_t h = 0;
	int j;

	for (j = 0; j < 16; j++) {
		qs[j] = (uint8_t)((q[j] & 0x0f) | ((q[j + 16] & 0x0f) << 4));
		h |= (uint32_t)((q[j] >> 4) & 1) << j;
		h |= (uint32_t)((q[j + 16] >> 4) & 1) << (j + 16);
	}
	qh[0] = (uint8_t)h;
	qh[1] = (uint8_t)(h >> 8);
	qh[2] = (uint8_t)(h >> 16);
	qh[3] = (uint8_t)(h >> 24);
}

/* Q5_0: x = d * (q - 16), q in 0..31; d = signed absmax / -16. */
void quant_enc_q5_0(const float *x, uint8_t *out)
{
	float d = half_round(signed_absmax(x, 32) / -16.0f);
	float id = d != 0.0f ? 1.0f / d : 0.0f;
	int q[32], j;

	store_le16(out, quant_fp32_to_fp16(d));
	for (j = 0; j < 32; j++)
		q[j] = qclamp(x[j] * id + 16.0f, 0, 31);
	pack5(q, out + 2, out + 6);
}

/* Q5_1: x = d * q + m, q in 0..31. */
void quant_enc_q5_1(const float *x, uint8_t *out)
{
	float mn, mx, d, id;
	int q[32], j;

	minmax(x, 32, &mn, &mx);
	d = half_round((mx - mn) / 31.0f);
	mn = half_round(mn);
	id = d != 0.0f ? 1.0f / d : 0.0f;
	store_le16(out, quant_fp32_to_fp16(d));
	store_le16(out + 2, quant_fp32_to_fp16(mn));
	for (j = 0; j < 32; j++)
		q[j] = qclamp((x[j] - mn) * id, 0, 31);
	pack5(q, out + 4, out + 8);
}

/*
 * The 12 scale bytes of Q4_K/Q5_K: 8 six-bit scales sc[] and mins m[].
 * Sub-blocks 0..3 use the low 6 bits of bytes 0..3 (scale) and 4..7 (min);
 * sub-blocks 4..7 keep their low 4 bits in bytes 8..11 (scale low nibble,
 * min high nibble) and their top 2 bits in the top bits of bytes 0..3
 * (scale) and 4..7 (min). This is the inverse of get_scale_min_k4 in
 * ggml-quants.c.
 */
static void pack_scales_k(const int *sc, const int *m, uint8_t *s)
{
	int j;

	for (j = 0; j < 4; j++) {
		s[j] = (uint8_t)((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
		s[j + 4] = (uint8_t)((m[j] & 63) | ((m[j + 4] >> 4) << 6));
		s[j + 8] = (uint8_t)((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
	}
}

/*
 * Shared part of Q4_K and Q5_K: per 32-weight sub-block j, x ~ ds_j * q -
 * dm_j with q in 0..qmax, ds_j = d * sc_j, dm_j = dmin * m_j, sc_j and m_j
 * six-bit. Writes the header (d, dmin, scales) and the quants into q[256].
 */
static void enc_k_asym(const float *x, int qmax, uint8_t *out, int *q)
{
	float scale[8], mins[8], smax = 0.0f, mmax = 0.0f, d, dmin;
	int sc[8], m[8], j, l;

	for (j = 0; j < 8; j++) {
		float mn, mx;

		minmax(x + 32 * j, 32, &mn, &mx);
		if (mn > 0.0f)
			mn = 0.0f;
		scale[j] = (mx - mn) / (float)qmax;
		mins[j] = -mn;
		if (scale[j] > smax)
			smax = scale[j];
		if (mins[j] > mmax)
			mmax = mins[j];
	}
	d = half_round(smax / 63.0f);
	dmin = half_round(mmax / 63.0f);
	store_le16(out, quant_fp32_to_fp16(d));
	store_le16(out + 2, quant_fp32_to_fp16(dmin));
	for (j = 0; j < 8; j++) {
		sc[j] = d != 0.0f ? qclamp(scale[j] / d, 0, 63) : 0;
		m[j] = dmin != 0.0f ? qclamp(mins[j] / dmin, 0, 63) : 0;
	}
	pack_scales_k(sc, m, out + 4);
	for (j = 0; j < 8; j++) {
		float ds = d * (float)sc[j], dm = dmin * (float)m[j];
		float id = ds != 0.0f ? 1.0f / ds : 0.0f;

		for (l = 0; l < 32; l++)
			q[32 * j + l] = qclamp((x[32 * j + l] + dm) * id, 0, qmax);
	}
}

/* Q4_K, 144 bytes: d, dmin, scales[12], qs[128]. */
void quant_enc_q4_k(const float *x, uint8_t *out)
{
	int q[256], c, l;

	enc_k_asym(x, 15, out, q);
	/* Chunk c of 64 weights: byte l low nibble = c*64+l, high = c*64+32+l. */
	for (c = 0; c < 4; c++)
		for (l = 0; l < 32; l++)
			out[16 + 32 * c + l] = (uint8_t)(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
}

/* Q5_K, 176 bytes: d, dmin, scales[12], qh[32], qs[128]. */
void quant_enc_q5_k(const float *x, uint8_t *out)
{
	uint8_t *qh = out + 16, *qs = out + 48;
	int q[256], c, l;

	enc_k_asym(x, 31, out, q);
	memset(qh, 0, 32);
	for (c = 0; c < 4; c++) {
		for (l = 0; l < 32; l++) {
			int a = q[64 * c + l], b = q[64 * c + 32 + l];

			qs[32 * c + l] = (uint8_t)((a & 15) | ((b & 15) << 4));
			qh[l] |= (uint8_t)(((a >> 4) << (2 * c)) | ((b >> 4) << (2 * c + 1)));
		}
	}
}

/*
 * Q6_K, 210 bytes: ql[128], qh[64], scales[16] (int8), d. x = d * sc_j *
 * (q - 32) with q in 0..63, 16 sub-blocks of 16. Element e of half h
 * (e = 32 * k + l, k 0..3, l 0..31): low nibble in ql[64h + l + 32 (k & 1)]
 * (k < 2 low nibble, else high), two high bits at bit 2k of qh[32h + l].
 */
void quant_enc_q6_k(const float *x, uint8_t *out)
{
	uint8_t *ql = out, *qh = out + 128, *scb = out + 192;
	float s[16], smax = 0.0f, d;
	int sc[16], q[256], j, l, h, k;

	for (j = 0; j < 16; j++) {
		s[j] = signed_absmax(x + 16 * j, 16) / -32.0f;
		if (fabsf(s[j]) > fabsf(smax))
			smax = s[j];
	}
	d = half_round(smax / -128.0f);
	store_le16(out + 208, quant_fp32_to_fp16(d));
	for (j = 0; j < 16; j++) {
		float ds;

		sc[j] = d != 0.0f ? qclamp(s[j] / d, -128, 127) : 0;
		scb[j] = (uint8_t)(int8_t)sc[j];
		ds = d * (float)sc[j];
		for (l = 0; l < 16; l++)
			q[16 * j + l] = ds != 0.0f ? qclamp(x[16 * j + l] / ds, -32, 31) + 32 : 32;
	}
	memset(ql, 0, 128);
	memset(qh, 0, 64);
	for (h = 0; h < 2; h++) {
		for (k = 0; k < 4; k++) {
			for (l = 0; l < 32; l++) {
				int v = q[128 * h + 32 * k + l];
				uint8_t *lo = &ql[64 * h + l + 32 * (k & 1)];

				*lo |= (uint8_t)((v & 15) << (k >= 2 ? 4 : 0));
				qh[32 * h + l] |= (uint8_t)((v >> 4) << (2 * k));
			}
		}
	}
}

/* BF16: the top 16 bits of the float, rounded to nearest even; NaN stays quiet NaN. */
uint16_t quant_fp32_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
