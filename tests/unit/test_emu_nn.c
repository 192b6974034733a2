// SPDX-License-Identifier: MIT
/*
 * Host unit test of the tensor formats (rk1828/quant_blocks.h and
 * quant.c: fp16, Q4_0, Q8_0), the emulator's thread pool and its kernels
 * (emulator/nn.c): every weight type's matmul, on both the scalar
 * and the AVX2 path and on 1 and 3 threads, against
 * quant_dequantize_row() + a double-precision dot product.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"
#include "quant.h"
#include "threadpool.h"
#include "tap.h"
#include "rk1828/util.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif


static uint32_t rng = 2463534242u;

/* xorshift32, uniform in [-1, 1). */
static float frand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return (float)((double)rng / 2147483648.0 - 1.0);
}

/* ------------------------------------------------------------------ fp16 */

#if HAVE_X86
/* Compare quant.c's conversions with the F16C instructions. */
static __attribute__((target("f16c"))) void hw_compare(int *bad, int *bad_hw)
{
	int h, i;

	*bad = *bad_hw = 0;
	for (h = 0; h < 65536; h++) {
		float a = quant_fp16_to_fp32((uint16_t)h);
		float b = _cvtsh_ss((uint16_t)h);

		if (util_f32_bits(a) != util_f32_bits(b) && !(isnan(a) && isnan(b)))
			(*bad)++;
	}
	/* Random floats over the whole exponent range, and near the f16 range. */
	for (i = 0; i < 200000; i++) {
		uint32_t u = (uint32_t)(frand() * 2147483647.0f) * 2u + (uint32_t)(i & 1);
		float f = util_bits_f32(i % 4 == 3 ? (u & 0x807fffffu) | ((uint32_t)(100 + i % 50) << 23) : u);

		if (isnan(f))
			continue;
		if (quant_fp32_to_fp16(f) != _cvtss_sh(f, 0))
			(*bad_hw)++;
	}
}
#endif

static void test_fp16(void)
{
	static const struct {
		float f;
		uint16_t h;
	} known[] = {
		{ 0.0f, 0x0000 }, { -0.0f, 0x8000 }, { 1.0f, 0x3c00 }, { -2.0f, 0xc000 },
		{ 0.5f, 0x3800 }, { 65504.0f, 0x7bff }, { 65519.0f, 0x7bff },
		{ 65520.0f, 0x7c00 }, { 1e6f, 0x7c00 }, { -1e6f, 0xfc00 },
		{ 0x1p-14f, 0x0400 }, { 0x1p-24f, 0x0001 }, { 0x1p-25f, 0x0000 },
		{ 0x1.8p-25f, 0x0001 }, { 0x3p-25f, 0x0002 }, { 0x1p-26f, 0x0000 },
		{ 0x1.ff8p-15f, 0x03ff }, { 0x1.ffcp-15f, 0x0400 }, { 1.0f + 0x1p-11f, 0x3c00 },
		{ 1.0f + 0x3p-11f, 0x3c02 }, { 0.333333343f, 0x3555 },
	};
	int h, bad = 0, bad_nan = 0, i;

	for (i = 0; i < (int)(sizeof(known) / sizeof(known[0])); i++) {
		uint16_t got = quant_fp32_to_fp16(known[i].f);

		if (got != known[i].h) {
			printf("# quant_fp32_to_fp16(%a) = %04x, want %04x\n", known[i].f, got, known[i].h);
			bad++;
		}
	}
	tap_ok(bad == 0, "quant_fp32_to_fp16 on %d known values (rounding, subnormals, overflow)", i);

	bad = 0;
	for (h = 0; h < 65536; h++) {
		float f = quant_fp16_to_fp32((uint16_t)h);

		if (isnan(f)) {
			if (!isnan(quant_fp16_to_fp32(quant_fp32_to_fp16(f))) || (h & 0x7c00) != 0x7c00)
				bad_nan++;
			continue;
		}
		if (quant_fp32_to_fp16(f) != h)
			bad++;
	}
	tap_ok(bad == 0 && bad_nan == 0, "fp16 -> fp32 -> fp16 round trip of all 65536 values "
	   "(%d mismatches, %d NaN errors)", bad, bad_nan);
	tap_ok(quant_fp16_to_fp32(0x0001) == 0x1p-24f && quant_fp16_to_fp32(0x83ff) == -0x3ffp-24f &&
	   isinf(quant_fp16_to_fp32(0x7c00)) && quant_fp16_to_fp32(0xfc00) < 0 &&
	   quant_fp16_to_fp32(0x7bff) == 65504.0f, "quant_fp16_to_fp32 subnormal, inf and max values");

#if HAVE_X86
	if (nn_isa_supported(NN_ISA_AVX2)) {
		int bad_hw = 0;

		hw_compare(&bad, &bad_hw);
		tap_ok(bad == 0 && bad_hw == 0,
		   "fp16 conversions agree with F16C (%d, %d mismatches)", bad, bad_hw);
	}
#endif
}

/* ----------------------------------------------------------------- quant */

static void test_quant(void)
{
	float x[64], y[64];
	uint8_t q[128];
	int i, bad;

	tap_ok(quant_row_size(QUANT_TYPE_Q4_0, 64) == 36 && quant_row_size(QUANT_TYPE_Q8_0, 96) == 102 &&
	   quant_row_size(QUANT_TYPE_F16, 7) == 14 && quant_row_size(QUANT_TYPE_F32, 3) == 12 &&
	   quant_row_size(QUANT_TYPE_Q4_0, 33) == 0 && quant_row_size(5, 32) == 0 &&
	   quant_row_size(QUANT_TYPE_Q8_0, SIZE_MAX - 31) == 0,
	   "row sizes (and 0 for bad type, partial block, overflow)");
	tap_ok(quant_dequantize_row(5, q, y, 32) == -1 && quant_quantize_row(QUANT_TYPE_Q4_0, x, q, 31) == -1,
	   "bad type or length rejected");

	/* Known block: x = j - 16. Q4_0: max-abs signed -16 -> d = 2. */
	for (i = 0; i < 32; i++)
		x[i] = (float)(i - 16);
	quant_quantize_row(QUANT_TYPE_Q4_0, x, q, 32);
	tap_ok(q[0] == 0x00 && q[1] == 0x40 && q[2] == 0x80 && q[3] == 0x91 && q[17] == 0xf8,
	   "Q4_0 layout: d=2 (f16 0x4000), bytes 0, 1, 15 = 0x80, 0x91, 0xf8 "
	   "(got %02x%02x %02x %02x %02x)", q[1], q[0], q[2], q[3], q[17]);
	quant_dequantize_row(QUANT_TYPE_Q4_0, q, y, 32);
	bad = 0;
	for (i = 0; i < 32; i++) {
		/* even values exact; odd ones land on a neighbour; 15 clips to 14 */
		float want = i == 31 ? 14.0f : (float)(2 * (int)floorf((x[i] + 17.0f) / 2.0f) - 16);

		if (y[i] != want)
			bad++;
	}
	tap_ok(bad == 0, "Q4_0 dequantize of the known block (%d wrong)", bad);

	quant_quantize_row(QUANT_TYPE_Q8_0, x, q, 32);
	quant_dequantize_row(QUANT_TYPE_Q8_0, q, y, 32);
	tap_ok((int8_t)q[2] == -127 && (int8_t)q[2 + 16] == 0 && (int8_t)q[2 + 31] == 119 &&
	   fabsf(y[0] + 16.0f) < 0.01f && y[16] == 0.0f,
	   "Q8_0 known block: q[0] = -127, q[16] = 0, q[31] = 119 (got %d %d %d)",
	   (int8_t)q[2], (int8_t)q[18], (int8_t)q[33]);

	/* Error bounds on random data over several scales. */
	{
		double worst4 = 0, worst8 = 0;
		int blk, j;

		for (blk = 0; blk < 2000; blk++) {
			/* 1e-2 .. 1e4: d stays a normal f16 */
			float scale = powf(10.0f, (float)(blk % 7) - 2.0f);
			float amax = 0;

			for (j = 0; j < 32; j++) {
				x[j] = frand() * scale;
				if (fabsf(x[j]) > amax)
					amax = fabsf(x[j]);
			}
			quant_quantize_row(QUANT_TYPE_Q4_0, x, q, 32);
			quant_dequantize_row(QUANT_TYPE_Q4_0, q, y, 32);
			for (j = 0; j < 32; j++) {
				/* |d| = amax / 8; error <= |d| (clip of +8|d| to 7|d|) */
				double e = fabs(x[j] - y[j]) / (amax / 8.0);

				if (e > worst4)
					worst4 = e;
			}
			quant_quantize_row(QUANT_TYPE_Q8_0, x, q, 32);
			quant_dequantize_row(QUANT_TYPE_Q8_0, q, y, 32);
			for (j = 0; j < 32; j++) {
				/* d = amax / 127; rounding error d/2 plus f16 rounding of d */
				double e = fabs(x[j] - y[j]) / (amax / 127.0);

				if (e > worst8)
					worst8 = e;
			}
		}
		tap_ok(worst4 <= 1.01, "Q4_0 round trip error <= |d| (worst %.3f |d|)", worst4);
		tap_ok(worst8 <= 0.57, "Q8_0 round trip error <= 0.57 d (worst %.3f d)", worst8);
	}
	/* All-zero block: d = 0, dequantizes to zeros. */
	memset(x, 0, sizeof(x));
	quant_quantize_row(QUANT_TYPE_Q4_0, x, q, 32);
	quant_dequantize_row(QUANT_TYPE_Q4_0, q, y, 32);
	tap_ok(q[0] == 0 && (q[1] & 0x7f) == 0 && q[2] == 0x88 && y[5] == 0.0f && y[31] == 0.0f,
	   "Q4_0 zero block: d = (-)0, quants 8, dequantizes to 0");
}

/* ----------------------------------------------------------- thread pool */

static int hits[2000];

static void count_fn(void *arg, size_t b, size_t e, int tid)
{
	size_t grain = *(size_t *)arg, i;

	(void)tid;
	if (b % grain)
		hits[0] += 1000;	/* misaligned range start: poison */
	for (i = b; i < e; i++)
		__atomic_add_fetch(&hits[i], 1, __ATOMIC_RELAXED);
}

static void test_pool(void)
{
	static const size_t ns[] = { 1, 5, 100, 1001, 2000 };
	static const size_t grains[] = { 1, 4, 7 };
	struct tpool *p = tp_create(3);
	size_t a, b, i;
	int bad = 0;

	tap_ok(p && tp_threads(p) == 3, "pool of 3 threads created");
	if (!p)
		return;
	for (a = 0; a < 5; a++) {
		for (b = 0; b < 3; b++) {
			size_t g = grains[b];

			memset(hits, 0, sizeof(hits));
			tp_parallel_for(p, ns[a], g, count_fn, &g);
			for (i = 0; i < 2000; i++)
				if (hits[i] != (i < ns[a] ? 1 : 0))
					bad++;
		}
	}
	tap_ok(bad == 0, "parallel_for covers every index exactly once, grain-aligned (%d bad)", bad);
	tp_destroy(p);
}

/* ---------------------------------------------------------------- matmul */

struct shape {
	size_t rows, k, ntok;
};

/* Scalar reference: quant_dequantize_row + double dot; also sum |w||x| per output. */
static void ref_matmul(int type, const uint8_t *w, const float *x, double *y, double *mag,
		       size_t rows, size_t k, size_t ntok)
{
	size_t rb = quant_row_size(type, k), r, t, i;
	float *row = malloc(k * sizeof(float));

	for (r = 0; r < rows; r++) {
		quant_dequantize_row(type, w + r * rb, row, k);
		for (t = 0; t < ntok; t++) {
			double s = 0, m = 0;

			for (i = 0; i < k; i++) {
				s += (double)row[i] * x[t * k + i];
				m += fabs((double)row[i] * x[t * k + i]);
			}
			y[t * rows + r] = s;
			mag[t * rows + r] = m;
		}
	}
	free(row);
}

static void test_matmul(void)
{
	static const struct shape shapes[] = {
		{ 1, 32, 1 }, { 7, 64, 3 }, { 33, 96, 5 }, { 130, 256, 17 },
		{ 5, 1024, 2 }, { 64, 160, 16 }, { 3, 32, 128 },
	};
	static const int types[] = { QUANT_TYPE_F32, QUANT_TYPE_F16, QUANT_TYPE_Q8_0,
				     QUANT_TYPE_Q4_0 };
	struct tpool *pools[2] = { tp_create(1), tp_create(3) };
	int isas[2] = { NN_ISA_SCALAR, NN_ISA_AVX2 };
	size_t ti, si;
	int ii, pi;

	for (ti = 0; ti < 4; ti++) {
		int type = types[ti];

		for (ii = 0; ii < 2; ii++) {
			if (nn_set_isa(isas[ii])) {
				printf("# %s not supported here, skipped\n",
				       nn_isa_name(isas[ii]));
				continue;
			}
			for (pi = 0; pi < 2; pi++) {
				double worst = 0;
				int rc_all = 0;

				for (si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++) {
					const struct shape *s = &shapes[si];
					size_t rb = quant_row_size(type, s->k), i;
					uint8_t *w = malloc(rb * s->rows + 1);
					float *src = malloc(s->k * sizeof(float));
					float *x = malloc(s->k * s->ntok * sizeof(float));
					float *y = malloc(s->rows * s->ntok * sizeof(float));
					double *yr = malloc(s->rows * s->ntok * sizeof(double));
					double *mg = malloc(s->rows * s->ntok * sizeof(double));
					/* quantized rows at an odd address: no alignment assumed */
					uint8_t *wq = type == QUANT_TYPE_Q4_0 || type == QUANT_TYPE_Q8_0 ?
						      w + 1 : w;

					for (i = 0; i < s->rows; i++) {
						size_t j;

						for (j = 0; j < s->k; j++)
							src[j] = frand() * (1.0f + (float)(i % 5));
						quant_quantize_row(type, src, wq + i * rb, s->k);
					}
					for (i = 0; i < s->k * s->ntok; i++)
						x[i] = frand();
					rc_all |= nn_matmul(pools[pi], type, wq, x, y, s->rows, s->k,
							      s->ntok);
					ref_matmul(type, wq, x, yr, mg, s->rows, s->k, s->ntok);
					for (i = 0; i < s->rows * s->ntok; i++) {
						double e = fabs(y[i] - yr[i]) / (mg[i] + 1e-30);

						if (!(e <= worst))
							worst = isnan(e) ? INFINITY : e;
					}
					free(w);
					free(src);
					free(x);
					free(y);
					free(yr);
					free(mg);
				}
				/* float accumulation over k <= 1024: error << 1e-5 sum|w x| */
				tap_ok(rc_all == 0 && worst < 1e-5,
				   "matmul %s %s %d thread(s), %zu shapes: worst err %.2g of sum|wx|",
				   quant_type_name(type), nn_isa_name(isas[ii]),
				   tp_threads(pools[pi]), sizeof(shapes) / sizeof(shapes[0]), worst);
			}
		}
	}
	/* F32/F16 with a row length that is not a multiple of 8 (tail path). */
	for (ii = 0; ii < 2; ii++) {
		float w[5 * 37], x[2 * 37], y[10];
		uint8_t wh[5 * 37 * 2];
		double yr[10], mg[10], worst = 0;
		int i;

		if (nn_set_isa(isas[ii]))
			continue;
		for (i = 0; i < 5 * 37; i++)
			w[i] = frand();
		for (i = 0; i < 2 * 37; i++)
			x[i] = frand();
		quant_quantize_row(QUANT_TYPE_F16, w, wh, 5 * 37);
		nn_matmul(pools[1], QUANT_TYPE_F32, w, x, y, 5, 37, 2);
		ref_matmul(QUANT_TYPE_F32, (uint8_t *)w, x, yr, mg, 5, 37, 2);
		for (i = 0; i < 10; i++)
			worst = fmax(worst, fabs(y[i] - yr[i]) / mg[i]);
		nn_matmul(pools[1], QUANT_TYPE_F16, wh, x, y, 5, 37, 2);
		ref_matmul(QUANT_TYPE_F16, wh, x, yr, mg, 5, 37, 2);
		for (i = 0; i < 10; i++)
			worst = fmax(worst, fabs(y[i] - yr[i]) / mg[i]);
		tap_ok(worst < 1e-6, "matmul f32/f16 k=37 %s: worst %.2g", nn_isa_name(isas[ii]),
		   worst);
	}
	/* Scalar and AVX2 agree on the same Q4_0 problem. */
	if (nn_isa_supported(NN_ISA_AVX2)) {
		enum { R = 45, K = 320, T = 9 };
		static uint8_t w[R * (K / 32) * 18];
		static float x[T * K], ys[T * R], ya[T * R];
		float row[K];
		double worst = 0, m = 0;
		int i;

		for (i = 0; i < R; i++) {
			int j;

			for (j = 0; j < K; j++)
				row[j] = frand();
			quant_quantize_row(QUANT_TYPE_Q4_0, row, w + (size_t)i * (K / 32) * 18, K);
		}
		for (i = 0; i < T * K; i++)
			x[i] = frand();
		nn_set_isa(NN_ISA_SCALAR);
		nn_matmul(pools[1], QUANT_TYPE_Q4_0, w, x, ys, R, K, T);
		nn_set_isa(NN_ISA_AVX2);
		nn_matmul(pools[1], QUANT_TYPE_Q4_0, w, x, ya, R, K, T);
		for (i = 0; i < T * R; i++) {
			worst = fmax(worst, fabs(ys[i] - ya[i]));
			m = fmax(m, fabs(ys[i]));
		}
		tap_ok(worst <= 1e-5 * m, "scalar and avx2 Q4_0 matmul agree (max diff %.2g, max |y| %.2g)",
		   worst, m);
	}
	{
		float x[32] = { 0 }, y[2];
		uint8_t w[64] = { 0 };

		tap_ok(nn_matmul(NULL, 4, w, x, y, 1, 32, 1) == -1 &&
		   nn_matmul(NULL, QUANT_TYPE_Q4_0, w, x, y, 1, 31, 1) == -1 &&
		   nn_matmul(NULL, QUANT_TYPE_Q8_0, w, x, y, 1, 32, 1) == 0 && y[0] == 0.0f,
		   "matmul rejects a bad type and a partial block; NULL pool works");
	}
	nn_set_isa(nn_isa_supported(NN_ISA_AVX2) ? NN_ISA_AVX2 : NN_ISA_SCALAR);
	tp_destroy(pools[0]);
	tp_destroy(pools[1]);
}

/*
 * Decode (1 or 2 tokens) converts the weights in registers, 4 rows at a
 * time (emulator/nn_decode.c nn_dec_rows_avx2()); prefill (more tokens)
 * runs panels of 16 rows in chunks of 256 columns (mm_panels()), with the
 * rows left over
 * (fewer than 16, or than 4) in tiles of whole rows. All must give the
 * same bits: each token of a T-token matmul equals the 1-token matmul of
 * that token alone, and the 2-token one. 37 rows (two panels, a tile, a
 * remainder of 1), 768 columns (three chunks), 3, 7 and 128 tokens (a
 * prefill bucket: 42 tiles of 3 tokens and one of 2), on 1 and 3 threads.
 */
static void test_decode_fused(void)
{
	enum { R = 37, K = 768, TMAX = 128 };
	static const int types[] = {
		QUANT_TYPE_F32, QUANT_TYPE_F16, QUANT_TYPE_BF16, QUANT_TYPE_Q8_0,
		QUANT_TYPE_Q4_0, QUANT_TYPE_Q4_1, QUANT_TYPE_Q5_0, QUANT_TYPE_Q5_1,
		QUANT_TYPE_Q4_K, QUANT_TYPE_Q5_K, QUANT_TYPE_Q6_K,
	};
	static const size_t toks[] = { 3, 7, 128 };	/* 128: a prefill bucket */
	static uint8_t w[R * K * 4];
	static float row[K], x[TMAX * K], yt[TMAX * R], y1[R], y2[2 * R];
	struct tpool *pool = tp_create(3);
	size_t ti, tk;
	int i, t;

	if (!nn_isa_supported(NN_ISA_AVX2)) {
		printf("ok - # SKIP no AVX2: no fused decode path\n");
		tp_destroy(pool);
		return;
	}
	nn_set_isa(NN_ISA_AVX2);
	for (ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++) {
		size_t rb = quant_row_size(types[ti], K);
		int same = 1, nonzero = 0;

		for (i = 0; i < R; i++) {
			int j;

			for (j = 0; j < K; j++)
				row[j] = frand() * (1.0f + (float)(i % 5));
			quant_quantize_row(types[ti], row, w + (size_t)i * rb, K);
		}
		for (i = 0; i < TMAX * K; i++)
			x[i] = frand();
		for (tk = 0; tk < sizeof(toks) / sizeof(toks[0]); tk++) {
			struct tpool *p = tk == 1 ? NULL : pool;

			nn_matmul(p, types[ti], w, x, yt, R, K, toks[tk]);
			nn_matmul(p, types[ti], w, x, y2, R, K, 2);
			same &= !memcmp(y2, yt, sizeof(y2));
			for (t = 0; t < (int)toks[tk]; t++) {
				nn_matmul(p, types[ti], w, x + t * K, y1, R, K, 1);
				same &= !memcmp(y1, yt + t * R, sizeof(y1));
				for (i = 0; i < R; i++)
					nonzero += y1[i] != 0.0f;
			}
		}
		tap_ok(same && nonzero > 10 * R / 2,
		       "%s decode (1, 2 tokens) and prefill panels (3, 7, 128 tokens) give the same bits "
		       "(%d x %d)", quant_type_name(types[ti]), R, K);
	}
	tp_destroy(pool);
}

/* ------------------------------------------------------------ elementwise */

static void test_elementwise(void)
{
	float v[8] = { 1, 2, 3, 4, 0, 0, 0, 0 }, w[4] = { 1, 0.5f, 2, -1 }, o[8];
	int ii;

	nn_rmsnorm(o, v, w, 4, 0.0f);
	/* rms of 1,2,3,4 = sqrt(7.5) */
	tap_ok(fabsf(o[0] - 1 / sqrtf(7.5f)) < 1e-6f && fabsf(o[1] - 1 / sqrtf(7.5f)) < 1e-6f &&
	   fabsf(o[2] - 6 / sqrtf(7.5f)) < 1e-6f && fabsf(o[3] + 4 / sqrtf(7.5f)) < 1e-6f,
	   "rmsnorm with weights");
	nn_rmsnorm(o, v, NULL, 4, 2.5f);
	tap_ok(fabsf(o[3] - 4 / sqrtf(10.0f)) < 1e-6f, "rmsnorm eps and NULL weight");

	{
		/* two heads of 4, rope_dim 4: theta 0 = 0.3 rad, theta 1 = 0.1 rad */
		float x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, cs[2], sn[2];
		float y[8];

		cs[0] = cosf(0.3f);
		sn[0] = sinf(0.3f);
		cs[1] = cosf(0.1f);
		sn[1] = sinf(0.1f);
		memcpy(y, x, sizeof(x));
		nn_rope(y, 2, 4, 4, cs, sn, false);
		tap_ok(fabsf(y[0] - (1 * cs[0] - 2 * sn[0])) < 1e-6f &&
		   fabsf(y[1] - (1 * sn[0] + 2 * cs[0])) < 1e-6f &&
		   fabsf(y[6] - (7 * cs[1] - 8 * sn[1])) < 1e-6f &&
		   fabsf(y[7] - (7 * sn[1] + 8 * cs[1])) < 1e-6f, "rope normal: pairs (2i, 2i+1)");
		memcpy(y, x, sizeof(x));
		nn_rope(y, 2, 4, 4, cs, sn, true);
		tap_ok(fabsf(y[0] - (1 * cs[0] - 3 * sn[0])) < 1e-6f &&
		   fabsf(y[2] - (1 * sn[0] + 3 * cs[0])) < 1e-6f &&
		   fabsf(y[5] - (6 * cs[1] - 8 * sn[1])) < 1e-6f &&
		   fabsf(y[7] - (6 * sn[1] + 8 * cs[1])) < 1e-6f, "rope neox: pairs (i, i+2)");
		memcpy(y, x, sizeof(x));
		nn_rope(y, 2, 4, 2, cs, sn, false);
		tap_ok(y[2] == 3 && y[3] == 4 && y[6] == 7 && y[7] == 8 &&
		   fabsf(y[4] - (5 * cs[0] - 6 * sn[0])) < 1e-6f,
		   "rope with rope_dim < head_dim keeps the tail");
	}
	{
		float s[3] = { 1, 2, 3 };
		double e = exp(1) + exp(2) + exp(3);

		nn_softmax(s, 3);
		tap_ok(fabs(s[0] - exp(1) / e) < 1e-6 && fabs(s[2] - exp(3) / e) < 1e-6,
		   "softmax values");
		s[0] = 1000;
		s[1] = 1000;
		nn_softmax(s, 2);
		tap_ok(s[0] == 0.5f && s[1] == 0.5f, "softmax is stable for large inputs");
	}
	{
		float a[3] = { 0, 1, -2 }, b[3] = { 5, 2, 3 };

		nn_silu_mul(a, b, 3);
		tap_ok(a[0] == 0 && fabsf(a[1] - 2 / (1 + expf(-1))) < 1e-6f &&
		   fabsf(a[2] - 3 * -2 / (1 + expf(2))) < 1e-6f, "silu_mul");
	}
	for (ii = 0; ii < 2; ii++) {
		float a[19], b[19], y[19];
		double d = 0;
		int i;

		if (nn_set_isa(ii ? NN_ISA_AVX2 : NN_ISA_SCALAR))
			continue;
		for (i = 0; i < 19; i++) {
			a[i] = frand();
			b[i] = frand();
			y[i] = b[i];
			d += (double)a[i] * b[i];
		}
		nn_axpy(y, 0.5f, a, 19);
		tap_ok(fabs(nn_dot(a, b, 19) - d) < 1e-5 && fabsf(y[18] - (b[18] + 0.5f * a[18])) < 1e-6f,
		   "dot and axpy (%s, n = 19)", nn_isa_name(ii ? NN_ISA_AVX2 : NN_ISA_SCALAR));
	}
	nn_set_isa(nn_isa_supported(NN_ISA_AVX2) ? NN_ISA_AVX2 : NN_ISA_SCALAR);
}

int main(void)
{
	printf("# kernels: best ISA %s\n", nn_isa_name(nn_isa()));
	test_fp16();
	test_quant();
	test_pool();
	test_matmul();
	test_decode_fused();
	test_elementwise();
	return tap_done();
}
