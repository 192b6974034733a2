// SPDX-License-Identifier: MIT
/*
 * Emulator compute kernels: see nn.h.
 *
 * Matmul strategy: each worker owns a contiguous range of weight rows.
 * Prefill (3 or more tokens) takes them in panels of 16 rows and chunks of
 * 256 columns (mm_panels()): the panel's chunk is dequantized once into
 * per-thread scratch (exactly the values of quant_dequantize_row() in
 * rk1828/quant_blocks.h; F32 is used in place, 16 KiB that stay in L1),
 * then every token runs through it, 4 rows x 3 tokens at a time (12
 * accumulators, enough to hide the FMA latency; kept in memory between
 * chunks), reading the activations packed by chunk (mm_pack_x()), so
 * their chunk is reused from L2 by 16 rows. Decode (one or two tokens)
 * converts the weights of every type but F32 in registers, 4 rows at a
 * time (nn_decode.c), without a scratch row. Every path does the same
 * fused multiply-adds per output in the same order, so decode, prefill and
 * the tail tiles give the same bits.
 */
#include "nn.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nn_int.h"
#include "rk1828/quant_blocks.h"
#include "threadpool.h"

#define MM_TILE 4
_Static_assert(MM_TILE == NN_DEC_ROWS, "decode tiles are the kernel's rows");
#define MM_PANEL 16	/* prefill: rows whose chunk is dequantized together */
#define MM_KC 256	/* prefill: columns per chunk (16 x 256 floats = 16 KiB, L1) */

/* Dequantize one row of k elements into dst (k multiple of block size). */
typedef void (*dequant_fn)(int type, const uint8_t *src, float *dst, size_t k);
/* out[i] = dot(rows[i], x) for i < nr, rows at stride k. */
typedef void (*dotn_fn)(const float *const *rows, size_t nr, const float *x,
			size_t k, float *out);
/* 4 rows times 2 tokens: out0[i] = dot(rows[i], x0), out1[i] = dot(rows[i], x1). */
typedef void (*dot4x2_fn)(const float *const *rows, const float *x0, const float *x1,
			  size_t k, float *out0, float *out1);
typedef float (*dot_fn)(const float *a, const float *b, size_t n);
typedef void (*axpy_fn)(float *y, float s, const float *x, size_t n);
/* nn_int.h nn_dec_rows_avx2(): NN_DEC_ROWS rows of @type weights times one token. */
typedef bool (*dec_rows_fn)(int type, const uint8_t *const *w, const float *x, size_t k,
			    float *out);

/*
 * Prefill tile: 4 rows' chunk of n elements (n % 8 == 0) times n_tok
 * tokens at stride ldx, vector accumulators in acc between chunks (see
 * tile4_avx2()).
 */
typedef void (*tile4_fn)(const float *const *rows, const float *x, size_t ldx, size_t n,
			 size_t n_tok, float *acc, bool first, bool last, float *y, size_t ldy);

struct nn_impl {
	dequant_fn dequant;
	dotn_fn dotn;
	dot4x2_fn dot4x2;	/* NULL: use dotn per token */
	dec_rows_fn dec_rows;	/* NULL: always dequantize first */
	tile4_fn tile4;		/* NULL: prefill dequantizes whole rows */
	dot_fn dot;
	axpy_fn axpy;
};

/* ---------------------------------------------------------------- scalar */

static void dequant_scalar(int type, const uint8_t *src, float *dst, size_t k)
{
	quant_dequantize_row(type, src, dst, k);
}

static float dot_scalar(const float *a, const float *b, size_t n)
{
	float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	size_t i = 0;

	for (; i + 4 <= n; i += 4) {
		s0 += a[i] * b[i];
		s1 += a[i + 1] * b[i + 1];
		s2 += a[i + 2] * b[i + 2];
		s3 += a[i + 3] * b[i + 3];
	}
	for (; i < n; i++)
		s0 += a[i] * b[i];
	return (s0 + s1) + (s2 + s3);
}

static void dotn_scalar(const float *const *rows, size_t nr, const float *x,
			size_t k, float *out)
{
	size_t i;

	for (i = 0; i < nr; i++)
		out[i] = dot_scalar(rows[i], x, k);
}

static void axpy_scalar(float *y, float s, const float *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		y[i] += s * x[i];
}

static const struct nn_impl ops_scalar = {
	.dequant = dequant_scalar,
	.dotn = dotn_scalar,
	.dot = dot_scalar,
	.axpy = axpy_scalar,
};

/* ------------------------------------------------------------------ AVX2 */
#if NN_HAVE_X86
#define AVX2 __attribute__((target("avx2,fma,f16c")))

#define hsum_avx2 nn_hsum_avx2

static AVX2 inline float f16_avx2(const uint8_t *p)
{
	uint16_t h;

	memcpy(&h, p, 2);
	return _cvtsh_ss(h);
}

/* 8 int8 at p -> 8 floats times d. */
static AVX2 inline __m256 i8x8_ps(__m128i v8, __m256 d)
{
	return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v8)), d);
}

/* How 32 decoded small integers q become floats (each the scalar order). */
enum dq_mode {
	DQ_MUL,		/* q * a */
	DQ_MUL_ADD,	/* q * a + b */
	DQ_MUL_SUB,	/* a * q - b */
};

/*
 * Store 32 floats from the 32 bytes of @q (signed when @sgn, else
 * unsigned), converted as @mode says. The rounding is the scalar code's:
 * a multiply then an add or subtract, never a fused multiply-add.
 */
static AVX2 inline void store32(float *dst, __m256i q, bool sgn, __m256 a, __m256 b,
				enum dq_mode mode)
{
	__m128i h[2] = { _mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1) };
	int i;

	for (i = 0; i < 4; i++) {
		__m128i v = i & 1 ? _mm_srli_si128(h[i / 2], 8) : h[i / 2];
		__m256 f = _mm256_cvtepi32_ps(sgn ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v));

		if (mode == DQ_MUL)
			f = _mm256_mul_ps(f, a);
		else if (mode == DQ_MUL_ADD)
			f = _mm256_add_ps(_mm256_mul_ps(f, a), b);
		else
			f = _mm256_sub_ps(_mm256_mul_ps(a, f), b);
		_mm256_storeu_ps(dst + 8 * i, f);
	}
}

/* 16 bytes of nibbles -> 32 bytes: the low nibbles, then the high ones. */
static AVX2 inline __m256i nibbles32(const uint8_t *qs)
{
	__m128i v = _mm_loadu_si128((const __m128i *)qs), m4 = _mm_set1_epi8(0x0f);

	return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(v, 4), m4), _mm_and_si128(v, m4));
}

/* 32 bits (little endian at p) -> 32 bytes, byte j = 0x10 when bit j is set. */
static AVX2 inline __m256i bits32_x10(const uint8_t *p)
{
	uint32_t u;
	__m256i v, sel, mask;

	memcpy(&u, p, 4);
	v = _mm256_set1_epi32((int)u);
	/* Byte j takes byte j / 8 of u, then tests bit j % 8. */
	sel = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
			       2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
	mask = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
	v = _mm256_and_si256(_mm256_shuffle_epi8(v, sel), mask);
	v = _mm256_cmpeq_epi8(v, mask);
	return _mm256_and_si256(v, _mm256_set1_epi8(0x10));
}

static AVX2 void dequant_q5_avx2(const uint8_t *src, float *dst, bool has_min)
{
	__m256 d = _mm256_set1_ps(f16_avx2(src));
	__m256 m = _mm256_set1_ps(has_min ? f16_avx2(src + 2) : 0.0f);
	const uint8_t *qh = src + (has_min ? 4 : 2);
	__m256i q = _mm256_or_si256(nibbles32(qh + 4), bits32_x10(qh));

	if (has_min) {
		store32(dst, q, false, d, m, DQ_MUL_ADD);
	} else {
		q = _mm256_sub_epi8(q, _mm256_set1_epi8(16));
		store32(dst, q, true, d, m, DQ_MUL);
	}
}

/* One Q4_K / Q5_K super-block of 256 weights. */
static AVX2 void dequant_qk45_avx2(const uint8_t *src, float *dst, bool five)
{
	float d = f16_avx2(src), dmin = f16_avx2(src + 2);
	const uint8_t *sc = src + 4, *qs = five ? src + 48 : src + 16;
	__m256i qh = _mm256_loadu_si256((const __m256i *)(src + 16));
	const __m256i m4 = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
	int c;

	for (c = 0; c < 4; c++) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(qs + 32 * c));
		__m256i lo = _mm256_and_si256(v, m4);
		__m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
		int s0, m0, s1, m1;

		if (five) {
			__m256i b0 = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * c), one);
			__m256i b1 = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * c + 1), one);

			lo = _mm256_or_si256(lo, _mm256_slli_epi16(b0, 4));
			hi = _mm256_or_si256(hi, _mm256_slli_epi16(b1, 4));
		}
		quant_k_scale_min(2 * c, sc, &s0, &m0);
		quant_k_scale_min(2 * c + 1, sc, &s1, &m1);
		store32(dst + 64 * c, lo, false, _mm256_set1_ps(d * (float)s0),
			_mm256_set1_ps(dmin * (float)m0), DQ_MUL_SUB);
		store32(dst + 64 * c + 32, hi, false, _mm256_set1_ps(d * (float)s1),
			_mm256_set1_ps(dmin * (float)m1), DQ_MUL_SUB);
	}
}

/* One Q6_K super-block: q in 0..63 minus 32, times (d * scale of 16). */
static AVX2 void dequant_q6k_avx2(const uint8_t *src, float *dst)
{
	const int8_t *sc = (const int8_t *)(src + 192);
	float d = f16_avx2(src + 208);
	const __m256i m4 = _mm256_set1_epi8(0x0f), m3 = _mm256_set1_epi8(3);
	int h, k, i;

	for (h = 0; h < 2; h++) {
		__m256i qh = _mm256_loadu_si256((const __m256i *)(src + 128 + 32 * h));

		for (k = 0; k < 4; k++) {
			__m256i l = _mm256_loadu_si256((const __m256i *)(src + 64 * h + 32 * (k & 1)));
			__m256i q, hi;
			int e = 128 * h + 32 * k;
			float out[32];

			l = k >= 2 ? _mm256_srli_epi16(l, 4) : l;
			l = _mm256_and_si256(l, m4);
			hi = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), m3);
			q = _mm256_or_si256(l, _mm256_slli_epi16(hi, 4));
			q = _mm256_sub_epi8(q, _mm256_set1_epi8(32));
			/* Two scales per 32 weights: convert, then scale each half. */
			store32(out, q, true, _mm256_set1_ps(1.0f), _mm256_setzero_ps(), DQ_MUL);
			for (i = 0; i < 2; i++) {
				__m256 ds = _mm256_set1_ps(d * (float)sc[e / 16 + i]);

				_mm256_storeu_ps(dst + e + 16 * i,
						 _mm256_mul_ps(ds, _mm256_loadu_ps(out + 16 * i)));
				_mm256_storeu_ps(dst + e + 16 * i + 8,
						 _mm256_mul_ps(ds, _mm256_loadu_ps(out + 16 * i + 8)));
			}
		}
	}
}

/* F16 (@bf false) or BF16 row of @k elements into floats. */
static AVX2 void dequant_half_avx2(bool bf, const uint8_t *src, float *dst, size_t k)
{
	size_t i;

	for (i = 0; i + 8 <= k; i += 8) {
		__m128i h = _mm_loadu_si128((const __m128i *)(src + 2 * i));

		_mm256_storeu_ps(dst + i, bf ? _mm256_castsi256_ps(_mm256_slli_epi32(
						_mm256_cvtepu16_epi32(h), 16)) :
					  _mm256_cvtph_ps(h));
	}
	for (; i < k; i++)
		dst[i] = bf ? quant_bf16_to_fp32(quant_load_le16(src + 2 * i)) : f16_avx2(src + 2 * i);
}

/* One Q8_0 (@q4 false) or Q4_0 block: 32 signed quants times d. */
static AVX2 void dequant_q80_q40_avx2(bool q4, const uint8_t *src, float *dst)
{
	__m256 d = _mm256_set1_ps(f16_avx2(src));
	__m128i lo, hi;

	if (q4) {
		const __m128i m4 = _mm_set1_epi8(0x0f), off = _mm_set1_epi8(8);
		__m128i qs = _mm_loadu_si128((const __m128i *)(src + 2));

		lo = _mm_sub_epi8(_mm_and_si128(qs, m4), off);
		hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(qs, 4), m4), off);
	} else {
		__m256i q = _mm256_loadu_si256((const __m256i *)(src + 2));

		lo = _mm256_castsi256_si128(q);
		hi = _mm256_extracti128_si256(q, 1);
	}
	_mm256_storeu_ps(dst, i8x8_ps(lo, d));
	_mm256_storeu_ps(dst + 8, i8x8_ps(_mm_srli_si128(lo, 8), d));
	_mm256_storeu_ps(dst + 16, i8x8_ps(hi, d));
	_mm256_storeu_ps(dst + 24, i8x8_ps(_mm_srli_si128(hi, 8), d));
}

static AVX2 void dequant_avx2(int type, const uint8_t *src, float *dst, size_t k)
{
	size_t i;

	switch (type) {
	case QUANT_TYPE_F16:
	case QUANT_TYPE_BF16:
		dequant_half_avx2(type == QUANT_TYPE_BF16, src, dst, k);
		break;
	case QUANT_TYPE_Q8_0:
	case QUANT_TYPE_Q4_0: {
		size_t bb = quant_block_bytes(type);

		for (i = 0; i < k; i += QUANT_QK, src += bb)
			dequant_q80_q40_avx2(type == QUANT_TYPE_Q4_0, src, dst + i);
		break;
	}
	case QUANT_TYPE_Q4_1:
		for (i = 0; i < k; i += QUANT_QK, src += QUANT_Q4_1_BLOCK_BYTES)
			store32(dst + i, nibbles32(src + 4), false, _mm256_set1_ps(f16_avx2(src)),
				_mm256_set1_ps(f16_avx2(src + 2)), DQ_MUL_ADD);
		break;
	case QUANT_TYPE_Q5_0:
	case QUANT_TYPE_Q5_1: {
		size_t bb = quant_block_bytes(type);

		for (i = 0; i < k; i += QUANT_QK, src += bb)
			dequant_q5_avx2(src, dst + i, type == QUANT_TYPE_Q5_1);
		break;
	}
	case QUANT_TYPE_Q4_K:
	case QUANT_TYPE_Q5_K: {
		size_t bb = quant_block_bytes(type);

		for (i = 0; i < k; i += QUANT_QK_K, src += bb)
			dequant_qk45_avx2(src, dst + i, type == QUANT_TYPE_Q5_K);
		break;
	}
	case QUANT_TYPE_Q6_K:
		for (i = 0; i < k; i += QUANT_QK_K, src += QUANT_Q6_K_BLOCK_BYTES)
			dequant_q6k_avx2(src, dst + i);
		break;
	default:
		quant_dequantize_row(type, src, dst, k);
		break;
	}
}

static AVX2 float dot_avx2(const float *a, const float *b, size_t n)
{
	__m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
	size_t i = 0;
	float s;

	for (; i + 16 <= n; i += 16) {
		s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
		s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
	}
	for (; i + 8 <= n; i += 8)
		s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
	s = hsum_avx2(_mm256_add_ps(s0, s1));
	for (; i < n; i++)
		s += a[i] * b[i];
	return s;
}

static AVX2 void dotn_avx2(const float *const *rows, size_t nr, const float *x,
			   size_t k, float *out)
{
	size_t i = 0, r;

	if (nr != 4) {
		for (r = 0; r < nr; r++)
			out[r] = dot_avx2(rows[r], x, k);
		return;
	}
	const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
	__m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
	__m256 a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();

	for (; i + 8 <= k; i += 8) {
		__m256 xv = _mm256_loadu_ps(x + i);

		a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + i), xv, a0);
		a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + i), xv, a1);
		a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + i), xv, a2);
		a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + i), xv, a3);
	}
	out[0] = hsum_avx2(a0);
	out[1] = hsum_avx2(a1);
	out[2] = hsum_avx2(a2);
	out[3] = hsum_avx2(a3);
	for (; i < k; i++) {
		out[0] += r0[i] * x[i];
		out[1] += r1[i] * x[i];
		out[2] += r2[i] * x[i];
		out[3] += r3[i] * x[i];
	}
}

static AVX2 void dot4x2_avx2(const float *const *rows, const float *x0, const float *x1,
			     size_t k, float *out0, float *out1)
{
	const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
	__m256 a00 = _mm256_setzero_ps(), a10 = _mm256_setzero_ps();
	__m256 a20 = _mm256_setzero_ps(), a30 = _mm256_setzero_ps();
	__m256 a01 = _mm256_setzero_ps(), a11 = _mm256_setzero_ps();
	__m256 a21 = _mm256_setzero_ps(), a31 = _mm256_setzero_ps();
	size_t i = 0;

	for (; i + 8 <= k; i += 8) {
		__m256 u = _mm256_loadu_ps(x0 + i), v = _mm256_loadu_ps(x1 + i);
		__m256 w0 = _mm256_loadu_ps(r0 + i), w1 = _mm256_loadu_ps(r1 + i);
		__m256 w2 = _mm256_loadu_ps(r2 + i), w3 = _mm256_loadu_ps(r3 + i);

		a00 = _mm256_fmadd_ps(w0, u, a00);
		a10 = _mm256_fmadd_ps(w1, u, a10);
		a20 = _mm256_fmadd_ps(w2, u, a20);
		a30 = _mm256_fmadd_ps(w3, u, a30);
		a01 = _mm256_fmadd_ps(w0, v, a01);
		a11 = _mm256_fmadd_ps(w1, v, a11);
		a21 = _mm256_fmadd_ps(w2, v, a21);
		a31 = _mm256_fmadd_ps(w3, v, a31);
	}
	out0[0] = hsum_avx2(a00);
	out0[1] = hsum_avx2(a10);
	out0[2] = hsum_avx2(a20);
	out0[3] = hsum_avx2(a30);
	out1[0] = hsum_avx2(a01);
	out1[1] = hsum_avx2(a11);
	out1[2] = hsum_avx2(a21);
	out1[3] = hsum_avx2(a31);
	for (; i < k; i++) {
		out0[0] += r0[i] * x0[i];
		out0[1] += r1[i] * x0[i];
		out0[2] += r2[i] * x0[i];
		out0[3] += r3[i] * x0[i];
		out1[0] += r0[i] * x1[i];
		out1[1] += r1[i] * x1[i];
		out1[2] += r2[i] * x1[i];
		out1[3] += r3[i] * x1[i];
	}
}

/*
 * Prefill: 4 weight rows' chunk of @n elements (@n % 8 == 0) times every
 * token (x + t * @ldx), accumulated into @acc (@n_tok x 4 vectors of 8:
 * the accumulators of dot4x2_avx2() / dotn_avx2(), kept in memory between
 * chunks). The multiply-adds per accumulator are theirs, in the same order,
 * so chunking the rows changes no bit. @first starts from zero; @last
 * writes y[t * @ldy + i] = the horizontal sum, as they do.
 */
/* A tile's @nq accumulators: zero (@first) or from @c. */
static AVX2 inline void tile_acc_load(__m256 *a, int nq, const float *c, bool first)
{
	int q;

	for (q = 0; q < nq; q++)
		a[q] = first ? _mm256_setzero_ps() : _mm256_load_ps(c + 8 * q);
}

/*
 * A tile's @nq accumulators (token q / 4, row q % 4) back to @c, or on the
 * @last chunk their horizontal sums to y[(q / 4) * @ldy + q % 4].
 */
static AVX2 inline void tile_acc_done(const __m256 *a, int nq, float *c, bool last, float *y,
				      size_t ldy)
{
	int q;

	for (q = 0; q < nq; q++) {
		if (last)
			y[(size_t)(q / 4) * ldy + (size_t)(q % 4)] = hsum_avx2(a[q]);
		else
			_mm256_store_ps(c + 8 * q, a[q]);
	}
}

/*
 * 4 rows x 3 tokens (x0, x0 + ldx, x0 + 2 ldx): 12 accumulators, enough to
 * cover the FMA latency.
 */
static AVX2 void tile4x3_avx2(const float *const *rows, const float *x0, size_t ldx, size_t n,
			      float *c, bool first, bool last, float *y, size_t ldy)
{
	const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
	const float *x1 = x0 + ldx, *x2 = x1 + ldx;
	__m256 a[12];
	size_t i;

	tile_acc_load(a, 12, c, first);
	for (i = 0; i < n; i += 8) {
		__m256 u = _mm256_loadu_ps(x0 + i), v = _mm256_loadu_ps(x1 + i);
		__m256 z = _mm256_loadu_ps(x2 + i), wv;

#define ROW3(r, rp) do { \
			wv = _mm256_loadu_ps(rp + i); \
			a[r] = _mm256_fmadd_ps(wv, u, a[r]); \
			a[r + 4] = _mm256_fmadd_ps(wv, v, a[r + 4]); \
			a[r + 8] = _mm256_fmadd_ps(wv, z, a[r + 8]); \
		} while (0)
		ROW3(0, r0);
		ROW3(1, r1);
		ROW3(2, r2);
		ROW3(3, r3);
#undef ROW3
	}
	tile_acc_done(a, 12, c, last, y, ldy);
}

/* 4 rows x 2 tokens (x0, x0 + ldx). */
static AVX2 void tile4x2_avx2(const float *const *rows, const float *x0, size_t ldx, size_t n,
			      float *c, bool first, bool last, float *y, size_t ldy)
{
	const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
	const float *x1 = x0 + ldx;
	__m256 a[8];
	size_t i;

	tile_acc_load(a, 8, c, first);
	for (i = 0; i < n; i += 8) {
		__m256 u = _mm256_loadu_ps(x0 + i), v = _mm256_loadu_ps(x1 + i);
		__m256 w0 = _mm256_loadu_ps(r0 + i), w1 = _mm256_loadu_ps(r1 + i);
		__m256 w2 = _mm256_loadu_ps(r2 + i), w3 = _mm256_loadu_ps(r3 + i);

		a[0] = _mm256_fmadd_ps(w0, u, a[0]);
		a[1] = _mm256_fmadd_ps(w1, u, a[1]);
		a[2] = _mm256_fmadd_ps(w2, u, a[2]);
		a[3] = _mm256_fmadd_ps(w3, u, a[3]);
		a[4] = _mm256_fmadd_ps(w0, v, a[4]);
		a[5] = _mm256_fmadd_ps(w1, v, a[5]);
		a[6] = _mm256_fmadd_ps(w2, v, a[6]);
		a[7] = _mm256_fmadd_ps(w3, v, a[7]);
	}
	tile_acc_done(a, 8, c, last, y, ldy);
}

/* 4 rows x 1 token. */
static AVX2 void tile4x1_avx2(const float *const *rows, const float *x0, size_t n, float *c,
			      bool first, bool last, float *y)
{
	__m256 a[4];
	size_t i;

	tile_acc_load(a, 4, c, first);
	for (i = 0; i < n; i += 8) {
		__m256 u = _mm256_loadu_ps(x0 + i);

		a[0] = _mm256_fmadd_ps(_mm256_loadu_ps(rows[0] + i), u, a[0]);
		a[1] = _mm256_fmadd_ps(_mm256_loadu_ps(rows[1] + i), u, a[1]);
		a[2] = _mm256_fmadd_ps(_mm256_loadu_ps(rows[2] + i), u, a[2]);
		a[3] = _mm256_fmadd_ps(_mm256_loadu_ps(rows[3] + i), u, a[3]);
	}
	tile_acc_done(a, 4, c, last, y, 0);
}

static AVX2 void tile4_avx2(const float *const *rows, const float *x, size_t ldx, size_t n,
			    size_t n_tok, float *acc, bool first, bool last, float *y,
			    size_t ldy)
{
	size_t t = 0;

	for (; t + 3 <= n_tok; t += 3)
		tile4x3_avx2(rows, x + t * ldx, ldx, n, acc + t * 32, first, last, y + t * ldy, ldy);
	for (; t + 2 <= n_tok; t += 2)
		tile4x2_avx2(rows, x + t * ldx, ldx, n, acc + t * 32, first, last, y + t * ldy, ldy);
	for (; t < n_tok; t++)
		tile4x1_avx2(rows, x + t * ldx, n, acc + t * 32, first, last, y + t * ldy);
}

static AVX2 void axpy_avx2(float *y, float s, const float *x, size_t n)
{
	__m256 sv = _mm256_set1_ps(s);
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(y + i, _mm256_fmadd_ps(sv, _mm256_loadu_ps(x + i),
							_mm256_loadu_ps(y + i)));
	for (; i < n; i++)
		y[i] += s * x[i];
}

static const struct nn_impl ops_avx2 = {
	.dequant = dequant_avx2,
	.dotn = dotn_avx2,
	.dot4x2 = dot4x2_avx2,
	.dec_rows = nn_dec_rows_avx2,
	.tile4 = tile4_avx2,
	.dot = dot_avx2,
	.axpy = axpy_avx2,
};
#endif /* NN_HAVE_X86 */

/* ------------------------------------------------------------- dispatch */

static const struct nn_impl *ops;
static enum nn_isa cur_isa;

bool nn_isa_supported(enum nn_isa isa)
{
	switch (isa) {
	case NN_ISA_SCALAR:
		return true;
	case NN_ISA_AVX2:
#if NN_HAVE_X86
		__builtin_cpu_init();
		return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
		       __builtin_cpu_supports("f16c");
#else
		return false;
#endif
	}
	return false;
}

static const struct nn_impl *nn_ops(void)
{
	const struct nn_impl *o = __atomic_load_n(&ops, __ATOMIC_ACQUIRE);

	if (o)
		return o;
	if (nn_set_isa(NN_ISA_AVX2))
		nn_set_isa(NN_ISA_SCALAR);
	return __atomic_load_n(&ops, __ATOMIC_ACQUIRE);
}

int nn_set_isa(enum nn_isa isa)
{
	const struct nn_impl *o;

	if (!nn_isa_supported(isa))
		return -1;
#if NN_HAVE_X86
	o = isa == NN_ISA_AVX2 ? &ops_avx2 : &ops_scalar;
#else
	o = &ops_scalar;
#endif
	cur_isa = isa;
	__atomic_store_n(&ops, o, __ATOMIC_RELEASE);
	return 0;
}

enum nn_isa nn_isa(void)
{
	nn_ops();
	return cur_isa;
}

const char *nn_isa_name(enum nn_isa isa)
{
	return isa == NN_ISA_AVX2 ? "avx2" : "scalar";
}

/* ---------------------------------------------------------------- matmul */

struct mm_job {
	const struct nn_impl *o;
	struct tpool *pool;
	int wtype;
	const uint8_t *w;
	size_t row_bytes;
	const float *x;
	const float *xp;	/* prefill: x by chunks, [k / MM_KC][n_tok][MM_KC], or NULL */
	float *y;
	size_t n_rows, k, n_tok;
	volatile int failed;
};

/*
 * Prefill of rows [@r, @r1) in panels of up to MM_PANEL rows (whole 4-row
 * tiles): for each chunk of MM_KC columns the panel's chunk is
 * dequantized once into @wbuf (F32 rows are used in place: @wbuf NULL)
 * and every token runs through it, 4 rows at a time (tile4), the partial
 * sums kept in @acc (MM_PANEL * n_tok vectors of 8). The weights' chunk
 * stays in L1 and the activations' in L2 across the panel, instead of 4
 * whole dequantized rows (64 KiB at k = 4096) and all activations
 * streaming once per 4 rows. Same bits as the whole-row path.
 * Returns the first row not done (fewer than MM_TILE remain).
 */
static size_t mm_panels(struct mm_job *j, size_t r, size_t r1, float *wbuf, float *acc)
{
	const struct nn_impl *o = j->o;
	size_t bs = quant_block_size(j->wtype), bb = quant_block_bytes(j->wtype);

	while (r1 - r >= MM_TILE) {
		size_t np = r1 - r >= MM_PANEL ? MM_PANEL : (r1 - r) / MM_TILE * MM_TILE;
		const float *rows[MM_PANEL];
		size_t c, n, i, t;

		for (c = 0; c < j->k; c += n) {
			n = j->k - c < MM_KC ? j->k - c : MM_KC;
			for (i = 0; i < np; i++) {
				const uint8_t *src = j->w + (r + i) * j->row_bytes;

				if (wbuf) {
					o->dequant(j->wtype, src + c / bs * bb, wbuf + i * MM_KC, n);
					rows[i] = wbuf + i * MM_KC;
				} else {
					rows[i] = (const float *)src + c;
				}
			}
			for (t = 0; t < np; t += MM_TILE)
				o->tile4(rows + t, j->xp ? j->xp + c * j->n_tok : j->x + c,
					 j->xp ? MM_KC : j->k, n, j->n_tok,
					 acc + t * j->n_tok * 8, c == 0, c + n == j->k,
					 j->y + r + t, j->n_rows);
		}
		r += np;
	}
	return r;
}

/*
 * Decode of rows [@r, @r + NN_DEC_ROWS) for each of the job's one or two
 * tokens with the in-register kernel (dec_rows). False when it does not
 * take the type or k (nothing written).
 */
static bool mm_dec_rows(struct mm_job *j, size_t r)
{
	const uint8_t *src[NN_DEC_ROWS];
	float out[NN_DEC_ROWS];
	size_t i, t;

	for (i = 0; i < NN_DEC_ROWS; i++)
		src[i] = j->w + (r + i) * j->row_bytes;
	for (t = 0; t < j->n_tok; t++) {
		if (!j->o->dec_rows(j->wtype, src, j->x + t * j->k, j->k, out))
			return false;
		for (i = 0; i < NN_DEC_ROWS; i++)
			j->y[t * j->n_rows + r + i] = out[i];
	}
	return true;
}

/* Per-thread scratch of @bytes, 64-byte aligned: the pool's, or malloc'd into *@own. */
static float *mm_scratch(struct mm_job *j, int tid, size_t bytes, int slot, float **own)
{
	bytes = (bytes + 63) / 64 * 64;
	if (j->pool)
		return tp_scratch(j->pool, tid, bytes, slot);
	*own = aligned_alloc(64, bytes);
	return *own;
}

static void mm_worker(void *arg, size_t r0, size_t r1, int tid)
{
	struct mm_job *j = arg;
	const struct nn_impl *o = j->o;
	float *buf = NULL, *own = NULL, *own_acc = NULL;
	const float *rows[MM_TILE];
	float out[MM_TILE];
	size_t r = r0, i, t;

	if (j->wtype != QUANT_TYPE_F32) {
		size_t n = MM_TILE * j->k > MM_PANEL * MM_KC ? MM_TILE * j->k : MM_PANEL * MM_KC;

		buf = mm_scratch(j, tid, n * sizeof(float), 0, &own);
		if (!buf) {
			j->failed = 1;
			return;
		}
	}
	if (o->tile4 && j->n_tok > 2 && j->k % 8 == 0) {
		float *acc = mm_scratch(j, tid, MM_PANEL * j->n_tok * 8 * sizeof(float), 1,
					&own_acc);

		if (!acc) {
			free(own);
			j->failed = 1;
			return;
		}
		r = mm_panels(j, r0, r1, buf, acc);
	}
	for (; r < r1; r += MM_TILE) {
		size_t nr = r1 - r < MM_TILE ? r1 - r : MM_TILE;

		/*
		 * One or two tokens (decode): convert the weights in registers
		 * instead of through the scratch rows, when the kernel has the
		 * type; more tokens reuse one dequantized tile.
		 */
		if (nr == MM_TILE && j->n_tok <= 2 && o->dec_rows && buf && mm_dec_rows(j, r))
			continue;
		for (i = 0; i < nr; i++) {
			const uint8_t *src = j->w + (r + i) * j->row_bytes;

			if (buf) {
				o->dequant(j->wtype, src, buf + i * j->k, j->k);
				rows[i] = buf + i * j->k;
			} else {
				rows[i] = (const float *)src;
			}
		}
		t = 0;
		if (nr == MM_TILE && o->dot4x2) {
			for (; t + 2 <= j->n_tok; t += 2) {
				float out1[MM_TILE];

				o->dot4x2(rows, j->x + t * j->k, j->x + (t + 1) * j->k, j->k,
					  out, out1);
				for (i = 0; i < nr; i++) {
					j->y[t * j->n_rows + r + i] = out[i];
					j->y[(t + 1) * j->n_rows + r + i] = out1[i];
				}
			}
		}
		for (; t < j->n_tok; t++) {
			o->dotn(rows, nr, j->x + t * j->k, j->k, out);
			for (i = 0; i < nr; i++)
				j->y[t * j->n_rows + r + i] = out[i];
		}
	}
	free(own);
	free(own_acc);
}

/*
 * The activations of a prefill by column chunks: chunk c holds every
 * token's MM_KC columns contiguously, so a panel's pass over the tokens
 * reads one dense 128 KiB block (at 128 tokens) instead of 1 KiB pieces
 * at the row stride, which with k = 4096 (16 KiB) all fall into the same
 * cache sets. NULL when out of memory (mm_panels() then reads x itself).
 */
static float *mm_pack_x(const float *x, size_t k, size_t n_tok)
{
	size_t nc = (k + MM_KC - 1) / MM_KC, c, t, n;
	float *xp = aligned_alloc(64, nc * n_tok * MM_KC * sizeof(float));

	if (!xp)
		return NULL;
	for (c = 0; c < k; c += MM_KC) {
		n = k - c < MM_KC ? k - c : MM_KC;
		for (t = 0; t < n_tok; t++)
			memcpy(xp + c * n_tok + t * MM_KC, x + t * k + c, n * sizeof(float));
	}
	return xp;
}

int nn_matmul(struct tpool *pool, int wtype, const void *w, const float *x,
		float *y, size_t n_rows, size_t k, size_t n_tok)
{
	struct mm_job j = {
		.o = nn_ops(),
		.pool = pool,
		.wtype = wtype,
		.w = w,
		.x = x,
		.y = y,
		.n_rows = n_rows,
		.k = k,
		.n_tok = n_tok,
	};

	j.row_bytes = quant_row_size(wtype, k);
	if (k == 0 || j.row_bytes == 0)
		return -1;
	if (n_rows == 0 || n_tok == 0)
		return 0;
	if (j.o->tile4 && n_tok > 2 && k % 8 == 0)
		j.xp = mm_pack_x(x, k, n_tok);
	tp_parallel_for(pool, n_rows, MM_TILE, mm_worker, &j);
	free((void *)j.xp);
	return j.failed ? -1 : 0;
}

/* ------------------------------------------------------------ elementwise */

void nn_rmsnorm(float *out, const float *x, const float *w, size_t n, float eps)
{
	double ss = 0.0;
	size_t i;

	for (i = 0; i < n; i++)
		ss += (double)x[i] * x[i];
	float scale = (float)(1.0 / sqrt(ss / (double)n + eps));

	for (i = 0; i < n; i++)
		out[i] = x[i] * scale * (w ? w[i] : 1.0f);
}

void nn_rope(float *x, size_t n_heads, size_t head_dim, size_t rope_dim,
	       const float *cs, const float *sn, bool neox)
{
	size_t h, i, half = rope_dim / 2;

	for (h = 0; h < n_heads; h++) {
		float *v = x + h * head_dim;

		for (i = 0; i < half; i++) {
			size_t ia = neox ? i : 2 * i;
			size_t ib = neox ? i + half : 2 * i + 1;
			float a = v[ia], b = v[ib];

			v[ia] = a * cs[i] - b * sn[i];
			v[ib] = a * sn[i] + b * cs[i];
		}
	}
}

void nn_softmax(float *x, size_t n)
{
	float max = x[0], sum = 0.0f;
	size_t i;

	for (i = 1; i < n; i++)
		if (x[i] > max)
			max = x[i];
	for (i = 0; i < n; i++) {
		x[i] = expf(x[i] - max);
		sum += x[i];
	}
	for (i = 0; i < n; i++)
		x[i] /= sum;
}

void nn_silu_mul(float *a, const float *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = a[i] / (1.0f + expf(-a[i])) * b[i];
}

float nn_dot(const float *a, const float *b, size_t n)
{
	return nn_ops()->dot(a, b, n);
}

void nn_axpy(float *y, float s, const float *x, size_t n)
{
	nn_ops()->axpy(y, s, x, n);
}
