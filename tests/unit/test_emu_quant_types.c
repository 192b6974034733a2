// SPDX-License-Identifier: MIT
/*
 * The weight formats beyond Q4_0/Q8_0 (rk1828/quant_blocks.h): BF16,
 * Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K.
 *
 *  - layout: blocks written byte by byte here from ggml's layout rules
 *    (not by our encoders) decode to the values those rules give,
 *    including the packed 6-bit scales of sub-blocks 4..7 of Q4_K/Q5_K
 *    (get_scale_min_k4's j >= 4 branch) and every bit position of the
 *    5th/6th-bit planes;
 *  - encoders: a round trip stays within each format's step;
 *  - kernels: the emulator's scalar and AVX2 matmul reproduce the scalar
 *    decoder exactly (a matmul with the identity returns the weights) and
 *    agree with a double-precision reference on random problems.
 * The agreement of these layouts with ggml's own decoder is checked end
 * to end by test_qwen_ref (llama.cpp reading our files).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"
#include "quant.h"
#include "tap.h"
#include "threadpool.h"

static uint32_t rng = 88172645u;

static uint32_t urand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

static float frand(void)
{
	return (float)((double)urand() / 2147483648.0 - 1.0);
}

static void put16(uint8_t *p, float f)
{
	uint16_t h = quant_fp32_to_fp16(f);

	p[0] = (uint8_t)h;
	p[1] = (uint8_t)(h >> 8);
}

static const int new_types[] = { QUANT_TYPE_BF16, QUANT_TYPE_Q4_1, QUANT_TYPE_Q5_0,
				 QUANT_TYPE_Q5_1, QUANT_TYPE_Q4_K, QUANT_TYPE_Q5_K,
				 QUANT_TYPE_Q6_K };
#define N_NEW (sizeof(new_types) / sizeof(new_types[0]))

static void test_sizes(void)
{
	tap_ok(quant_row_size(QUANT_TYPE_Q4_1, 64) == 40 && quant_row_size(QUANT_TYPE_Q5_0, 32) == 22 &&
	       quant_row_size(QUANT_TYPE_Q5_1, 96) == 72 && quant_row_size(QUANT_TYPE_Q4_K, 512) == 288 &&
	       quant_row_size(QUANT_TYPE_Q5_K, 256) == 176 && quant_row_size(QUANT_TYPE_Q6_K, 768) == 630 &&
	       quant_row_size(QUANT_TYPE_BF16, 3) == 6 && quant_row_size(QUANT_TYPE_Q4_K, 128) == 0 &&
	       quant_row_size(QUANT_TYPE_Q6_K, 32) == 0,
	       "row sizes of the new types; K-quants need rows of 256");
}

/* Q4_1 / Q5_0 / Q5_1 blocks built by hand. */
static void test_layout_32(void)
{
	uint8_t b[24];
	float y[32];
	int j, bad = 0;

	/* Q4_1: d = 0.5, m = -3; element j = nibble (j % 16) ^ (j < 16 ? 0 : 15). */
	put16(b, 0.5f);
	put16(b + 2, -3.0f);
	for (j = 0; j < 16; j++)
		b[4 + j] = (uint8_t)(j | ((15 - j) << 4));
	quant_dequantize_row(QUANT_TYPE_Q4_1, b, y, 32);
	for (j = 0; j < 32; j++)
		bad += y[j] != (float)(j < 16 ? j : 31 - j) * 0.5f - 3.0f;
	tap_ok(bad == 0, "Q4_1 hand-made block: x = q * d + m, low nibbles first (%d wrong)", bad);

	/* Q5_0: d = 2; nibbles j, 5th bit of element e set for e = 3, 16, 31. */
	put16(b, 2.0f);
	memset(b + 2, 0, 4);
	b[2] = 1 << 3;
	b[4] = 1 << 0;		/* bit 16 */
	b[5] = 1 << 7;		/* bit 31 */
	for (j = 0; j < 16; j++)
		b[6 + j] = (uint8_t)(j | (j << 4));
	quant_dequantize_row(QUANT_TYPE_Q5_0, b, y, 32);
	bad = 0;
	for (j = 0; j < 32; j++) {
		int q = (j % 16) + (j == 3 || j == 16 || j == 31 ? 16 : 0);

		bad += y[j] != (float)(q - 16) * 2.0f;
	}
	tap_ok(bad == 0, "Q5_0 hand-made block: qh bit e is bit 4 of element e (%d wrong)", bad);

	/* Q5_1: same quants, d = 0.25, m = 1. */
	put16(b, 0.25f);
	put16(b + 2, 1.0f);
	memset(b + 4, 0, 4);
	b[4] = 1 << 3;
	b[6] = 1 << 0;
	b[7] = 1 << 7;
	for (j = 0; j < 16; j++)
		b[8 + j] = (uint8_t)(j | (j << 4));
	quant_dequantize_row(QUANT_TYPE_Q5_1, b, y, 32);
	bad = 0;
	for (j = 0; j < 32; j++) {
		int q = (j % 16) + (j == 3 || j == 16 || j == 31 ? 16 : 0);

		bad += y[j] != (float)q * 0.25f + 1.0f;
	}
	tap_ok(bad == 0, "Q5_1 hand-made block: x = q * d + m (%d wrong)", bad);
}

/*
 * Q4_K/Q5_K scales by hand: sub-block j gets scale 20 + 5j and min 41 - 3j
 * (so j >= 4 needs the top-bit packing: 40, 45, 50, 55 and 29, 26, 23, 20).
 */
static void pack_scales_by_hand(uint8_t *s, int *sc, int *mn)
{
	int j;

	memset(s, 0, 12);
	for (j = 0; j < 8; j++) {
		sc[j] = 20 + 5 * j;
		mn[j] = 41 - 3 * j;
	}
	for (j = 0; j < 4; j++) {
		s[j] = (uint8_t)sc[j];
		s[j + 4] = (uint8_t)mn[j];
	}
	for (j = 4; j < 8; j++) {
		s[j + 4] = (uint8_t)((sc[j] & 15) | ((mn[j] & 15) << 4));
		s[j - 4] |= (uint8_t)((sc[j] >> 4) << 6);
		s[j] |= (uint8_t)((mn[j] >> 4) << 6);
	}
}

static void test_layout_k(void)
{
	uint8_t b[210];
	float y[256];
	int sc[8], mn[8], j, l, bad = 0, bad5 = 0, bad6 = 0;
	float d = 0.125f, dmin = 0.0625f;

	/* Q4_K: weight 64c + l has nibble (l + c) % 16, weight 64c + 32 + l (l * 3) % 16. */
	put16(b, d);
	put16(b + 2, dmin);
	pack_scales_by_hand(b + 4, sc, mn);
	for (j = 0; j < 4; j++)
		for (l = 0; l < 32; l++)
			b[16 + 32 * j + l] = (uint8_t)(((l + j) % 16) | (((l * 3) % 16) << 4));
	quant_dequantize_row(QUANT_TYPE_Q4_K, b, y, 256);
	for (j = 0; j < 8; j++) {
		for (l = 0; l < 32; l++) {
			int c = j / 2, q = j % 2 ? (l * 3) % 16 : (l + c) % 16;
			float want = d * (float)sc[j] * (float)q - dmin * (float)mn[j];

			bad += y[32 * j + l] != want;
		}
	}
	tap_ok(bad == 0, "Q4_K hand-made block: 6-bit scales/mins of sub-blocks 0-7 "
	       "(j >= 4 from the packed top bits), nibble order (%d wrong)", bad);

	/* Q5_K: the same plus qh: bit 2c of qh[l] for l % 3 == 0, bit 2c+1 for l % 5 == 0. */
	put16(b, d);
	put16(b + 2, dmin);
	pack_scales_by_hand(b + 4, sc, mn);
	memset(b + 16, 0, 32);
	for (l = 0; l < 32; l++)
		for (j = 0; j < 4; j++)
			b[16 + l] |= (uint8_t)(((l % 3 == 0) << (2 * j)) | ((l % 5 == 0) << (2 * j + 1)));
	for (j = 0; j < 4; j++)
		for (l = 0; l < 32; l++)
			b[48 + 32 * j + l] = (uint8_t)(((l + j) % 16) | (((l * 3) % 16) << 4));
	quant_dequantize_row(QUANT_TYPE_Q5_K, b, y, 256);
	for (j = 0; j < 8; j++) {
		for (l = 0; l < 32; l++) {
			int c = j / 2, odd = j % 2;
			int q = (odd ? (l * 3) % 16 : (l + c) % 16) +
				((odd ? l % 5 == 0 : l % 3 == 0) ? 16 : 0);
			float want = d * (float)sc[j] * (float)q - dmin * (float)mn[j];

			bad5 += y[32 * j + l] != want;
		}
	}
	tap_ok(bad5 == 0, "Q5_K hand-made block: qh bits 2c / 2c+1 are bit 4 (%d wrong)", bad5);

	/* Q6_K: weight e has q = (e * 7) % 64, scale of its 16-group (g - 8) * 3, d = 0.5. */
	memset(b, 0, 210);
	for (j = 0; j < 256; j++) {
		int q = (j * 7) % 64, h = j / 128, k = (j % 128) / 32;

		l = j % 32;
		b[64 * h + l + 32 * (k & 1)] |= (uint8_t)((q & 15) << (k >= 2 ? 4 : 0));
		b[128 + 32 * h + l] |= (uint8_t)((q >> 4) << (2 * k));
	}
	for (j = 0; j < 16; j++)
		b[192 + j] = (uint8_t)(int8_t)((j - 8) * 3);
	put16(b + 208, 0.5f);
	quant_dequantize_row(QUANT_TYPE_Q6_K, b, y, 256);
	for (j = 0; j < 256; j++)
		bad6 += y[j] != 0.5f * (float)((j / 16 - 8) * 3) * (float)((j * 7) % 64 - 32);
	tap_ok(bad6 == 0, "Q6_K hand-made block: ql nibbles, qh 2-bit pairs, signed scales "
	       "(%d wrong)", bad6);

	/* BF16: the top half of the float. */
	{
		uint8_t h[4] = { 0x80, 0x3f, 0x40, 0xc0 };	/* 1.0, -3.0 */

		quant_dequantize_row(QUANT_TYPE_BF16, h, y, 2);
		quant_quantize_row(QUANT_TYPE_BF16, (float[]){ 1.00390625f, 1.01171875f }, b, 2);
		tap_ok(y[0] == 1.0f && y[1] == -3.0f && b[0] == 0x80 && b[1] == 0x3f &&
		       b[2] == 0x82 && b[3] == 0x3f,
		       "BF16 decode and round-to-nearest-even encode (ties to even)");
	}
}

/*
 * Round trip: max |x - y| over max |x| of the row, for random data at
 * several scales. Bounds: BF16 half an ulp of 8 bits (1/256); the
 * asymmetric formats half a step plus the f16 rounding of d and m (Q4_1
 * 1/15, Q5_1 1/31) or plus the 6-bit rounding of the sub-block scale and
 * min (Q4_K 1/12, Q5_K 1/24); the symmetric ones, like Q4_0, clip the
 * value opposite the largest magnitude by up to one step (Q5_0 1/16,
 * Q6_K 1/32 plus the 8-bit rounding of its group scale: 0.035).
 */
static void test_round_trip(void)
{
	static const double bound[] = { 1.0 / 256, 1.0 / 15, 1.0 / 16, 1.0 / 31, 1.0 / 12,
					1.0 / 24, 0.035 };
	size_t ti;

	for (ti = 0; ti < N_NEW; ti++) {
		int type = new_types[ti];
		size_t n = 1024, rb = quant_row_size(type, n), i;
		float x[1024], y[1024];
		uint8_t *q = malloc(rb);
		double worst = 0;
		int rep;

		for (rep = 0; rep < 40; rep++) {
			float scale = powf(10.0f, (float)(rep % 5) - 2.0f), amax = 0;

			for (i = 0; i < n; i++) {
				x[i] = frand() * scale * (rep & 1 ? 1.0f : (float)(i % 7 + 1) / 7.0f);
				if (rep % 4 == 3)
					x[i] = fabsf(x[i]);	/* all-positive groups */
				amax = fmaxf(amax, fabsf(x[i]));
			}
			quant_quantize_row(type, x, q, n);
			quant_dequantize_row(type, q, y, n);
			for (i = 0; i < n; i++)
				worst = fmax(worst, fabs(x[i] - y[i]) / amax);
		}
		tap_ok(worst <= bound[ti], "%s round trip error <= %.3g of max|x| (worst %.3g)",
		       quant_type_name(type), bound[ti], worst);
		free(q);
	}
}

/* A row of @k weights of @type: encoded random data, then random quant bits kept valid. */
static void make_rows(int type, uint8_t *w, size_t rows, size_t k, bool scramble)
{
	size_t rb = quant_row_size(type, k), r, i;
	float *src = malloc(k * sizeof(float));

	for (r = 0; r < rows; r++) {
		for (i = 0; i < k; i++)
			src[i] = frand() * (1.0f + (float)(r % 3));
		quant_quantize_row(type, src, w + r * rb, k);
	}
	free(src);
	if (!scramble || quant_block_size(type) == 1)
		return;
	/* Random quant and scale bits; the f16 scales stay the encoder's. */
	for (i = 0; i < rows * rb; i++) {
		size_t o = i % quant_block_bytes(type);
		bool f16 = type == QUANT_TYPE_Q6_K ? o >= 208 : o < (type == QUANT_TYPE_Q5_0 ? 2u : 4u);

		if (!f16)
			w[i] = (uint8_t)urand();
	}
}

/* y = W I: every output is one weight, exactly (as a value: -0 and +0 are equal). */
static void test_identity(struct tpool *pool)
{
	static const enum nn_isa isas[] = { NN_ISA_SCALAR, NN_ISA_AVX2 };
	size_t ti, ii;

	for (ti = 0; ti < N_NEW; ti++) {
		int type = new_types[ti];
		size_t k = 512, rows = 9, rb = quant_row_size(type, k), i;
		uint8_t *w = malloc(rows * rb + 1);
		float *eye = calloc(k * k, sizeof(float)), *y = malloc(k * rows * sizeof(float));
		float *ref = malloc(k * rows * sizeof(float));

		make_rows(type, w + 1, rows, k, true);	/* odd address */
		for (i = 0; i < k; i++)
			eye[i * k + i] = 1.0f;
		for (i = 0; i < rows; i++)
			quant_dequantize_row(type, w + 1 + i * rb, ref + i * k, k);
		for (ii = 0; ii < 2; ii++) {
			size_t bad = 0, r, t;

			if (nn_set_isa(isas[ii]))
				continue;
			nn_matmul(pool, type, w + 1, eye, y, rows, k, k);
			for (t = 0; t < k; t++)
				for (r = 0; r < rows; r++)
					bad += y[t * rows + r] != ref[r * k + t];
			tap_ok(bad == 0, "%s %s kernel decodes exactly the scalar decoder's floats "
			       "(%zu of %zu differ)", quant_type_name(type), nn_isa_name(isas[ii]),
			       bad, k * rows);
		}
		free(w);
		free(eye);
		free(y);
		free(ref);
	}
	nn_set_isa(nn_isa_supported(NN_ISA_AVX2) ? NN_ISA_AVX2 : NN_ISA_SCALAR);
}

/* Random problems against a double-precision reference on the decoded weights. */
static void test_matmul(struct tpool *pool)
{
	static const enum nn_isa isas[] = { NN_ISA_SCALAR, NN_ISA_AVX2 };
	size_t ti, ii;

	for (ti = 0; ti < N_NEW; ti++) {
		int type = new_types[ti];
		size_t k = 768, rows = 37, T = 5, rb = quant_row_size(type, k), i, r, t;
		uint8_t *w = malloc(rows * rb);
		float *x = malloc(T * k * sizeof(float)), *y = malloc(T * rows * sizeof(float));
		float *row = malloc(k * sizeof(float));
		double *yr = malloc(T * rows * sizeof(double)), *mg = malloc(T * rows * sizeof(double));

		make_rows(type, w, rows, k, false);
		for (i = 0; i < T * k; i++)
			x[i] = frand();
		for (r = 0; r < rows; r++) {
			quant_dequantize_row(type, w + r * rb, row, k);
			for (t = 0; t < T; t++) {
				double s = 0, m = 0;

				for (i = 0; i < k; i++) {
					s += (double)row[i] * x[t * k + i];
					m += fabs((double)row[i] * x[t * k + i]);
				}
				yr[t * rows + r] = s;
				mg[t * rows + r] = m;
			}
		}
		for (ii = 0; ii < 2; ii++) {
			double worst = 0;
			int rc;

			if (nn_set_isa(isas[ii]))
				continue;
			/* 5 tokens (prefill), then 1 and 2 (decode paths) */
			rc = nn_matmul(pool, type, w, x, y, rows, k, T);
			for (i = 0; i < T * rows; i++)
				worst = fmax(worst, fabs(y[i] - yr[i]) / (mg[i] + 1e-30));
			rc |= nn_matmul(pool, type, w, x, y, rows, k, 2);
			for (i = 0; i < 2 * rows; i++)
				worst = fmax(worst, fabs(y[i] - yr[i]) / (mg[i] + 1e-30));
			rc |= nn_matmul(pool, type, w, x + k, y, rows, k, 1);
			for (i = 0; i < rows; i++)
				worst = fmax(worst, fabs(y[i] - yr[rows + i]) / (mg[rows + i] + 1e-30));
			tap_ok(rc == 0 && worst < 1e-5,
			       "matmul %s %s (37 x 768, 5, 2 and 1 tokens): worst %.2g of sum|wx|",
			       quant_type_name(type), nn_isa_name(isas[ii]), worst);
		}
		free(w);
		free(x);
		free(y);
		free(row);
		free(yr);
		free(mg);
	}
	nn_set_isa(nn_isa_supported(NN_ISA_AVX2) ? NN_ISA_AVX2 : NN_ISA_SCALAR);
}

int main(void)
{
	struct tpool *pool = tp_create(2);

	test_sizes();
	test_layout_32();
	test_layout_k();
	test_round_trip();
	test_identity(pool);
	test_matmul(pool);
	tp_destroy(pool);
	return tap_done();
}
