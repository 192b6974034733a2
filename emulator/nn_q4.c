// SPDX-License-Identifier: MIT
/*
 * Q4_0 and Q4_K matmul kernels in the block-factored order (nn_int.h
 * nn_q4_*): the quants of a 32-weight block are multiplied with the
 * activations first and the block's scale applied once to that partial
 * sum, instead of every weight being dequantized to a float and then
 * multiplied (nn.c's order for the other types). That halves the
 * floating-point work per weight (a convert and one multiply-add instead
 * of a convert and two), which is what bounds the decode kernels.
 *
 * The order, per output y = dot(row, x) (k a multiple of the block),
 * with 8 lanes l = 0..7 and a block's element 8j + l (j = 0..3) in lane l:
 *
 *   Q4_0 block b (scale d, quants q in 0..15):
 *     S_l = (q_{0,l} - 8) * x_{0,l}; S_l = fma(q_{j,l} - 8, x_{j,l}, S_l)
 *     for j = 1, 2, 3; A_l = fma(d, S_l, A_l).  y = H(A).
 *   Q4_K super-block s, sub-block c (dd = d * scale_c, mm = dmin * min_c,
 *   both exact in float): S_l as above with q unsigned (no offset);
 *     A_l = fma(dd, S_l, A_l); and B_c = fma(mm, X_{s,c}, B_c), X_{s,c}
 *     the sub-block's activation sum (nn_q4_xsums()).  y = H(A) - H(B).
 *
 * H is nn_hsum_avx2()'s order ((l0 + l4) + (l2 + l6)) + ((l1 + l5) +
 * (l3 + l7)); A and B start at zero. Every step is one IEEE operation
 * (fmaf in the portable code), so the AVX2 kernels, the portable ones,
 * decode (one row tile, one token) and prefill (the same kernel for each
 * token of the tile) give the same bits. Against dequantize-then-dot the
 * result differs only by float rounding (tests/unit/test_emu_nn.c: within
 * 1e-5 of sum |w x|).
 */
#include "nn_int.h"

#include <math.h>
#include <string.h>

#include "rk1828/quant_blocks.h"

/* The H order of 8 lanes (nn_hsum_avx2()). */
static float hsum8(const float *v)
{
	return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
}

bool nn_q4_type(int type)
{
	return type == QUANT_TYPE_Q4_0 || type == QUANT_TYPE_Q4_K;
}

void nn_q4_xsums(const float *x, size_t k, float *xs)
{
	size_t b;
	int l;

	for (b = 0; b < k / 32; b++) {
		const float *p = x + 32 * b;
		float v[8];

		for (l = 0; l < 8; l++)
			v[l] = ((p[l] + p[8 + l]) + p[16 + l]) + p[24 + l];
		xs[b] = hsum8(v);
	}
}

/* Quant j * 8 + l (0..31) of a 32-weight nibble block @qs (low nibbles first). */
static int nib(const uint8_t *qs, int e)
{
	return e < 16 ? qs[e] & 15 : qs[e - 16] >> 4;
}

/* The partial sums S_l of one 32-weight block: @q[e] the quants (offset applied). */
static void block_s(const int *q, const float *x, float *s)
{
	int l, j;

	for (l = 0; l < 8; l++) {
		s[l] = (float)q[l] * x[l];
		for (j = 1; j < 4; j++)
			s[l] = fmaf((float)q[8 * j + l], x[8 * j + l], s[l]);
	}
}

float nn_q4_row_scalar(int type, const uint8_t *w, const float *x, const float *xs, size_t k)
{
	float a[8] = { 0 }, bm[8] = { 0 }, s[8];
	int q[32], l, e, c, sc, mn;
	size_t i;

	if (type == QUANT_TYPE_Q4_0) {
		for (i = 0; i < k; i += 32, w += QUANT_Q4_0_BLOCK_BYTES) {
			float d = quant_fp16_to_fp32(quant_load_le16(w));

			for (e = 0; e < 32; e++)
				q[e] = nib(w + 2, e) - 8;
			block_s(q, x + i, s);
			for (l = 0; l < 8; l++)
				a[l] = fmaf(d, s[l], a[l]);
		}
		return hsum8(a);
	}
	for (i = 0; i < k; i += QUANT_QK_K, w += QUANT_Q4_K_BLOCK_BYTES) {
		float d = quant_fp16_to_fp32(quant_load_le16(w));
		float dmin = quant_fp16_to_fp32(quant_load_le16(w + 2));

		for (c = 0; c < 8; c++) {
			const uint8_t *qs = w + 16 + 32 * (c / 2);

			quant_k_scale_min(c, w + 4, &sc, &mn);
			for (e = 0; e < 32; e++)
				q[e] = c & 1 ? qs[e] >> 4 : qs[e] & 15;
			block_s(q, x + i + 32 * c, s);
			for (l = 0; l < 8; l++)
				a[l] = fmaf(d * (float)sc, s[l], a[l]);
			bm[c] = fmaf(dmin * (float)mn, xs[i / 32 + c], bm[c]);
		}
	}
	return hsum8(a) - hsum8(bm);
}

#if NN_HAVE_X86

#define INL inline __attribute__((always_inline))

static NN_AVX2 INL float f16_at(const uint8_t *p)
{
	uint16_t h;

	memcpy(&h, p, 2);
	return _cvtsh_ss(h);
}

/* 8 bytes at @p widened to 32-bit lanes: their low (@hi false) or high nibbles, as floats. */
static NN_AVX2 INL __m256i nib8(const uint8_t *p, bool hi)
{
	__m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));

	return hi ? _mm256_srli_epi32(v, 4) : _mm256_and_si256(v, _mm256_set1_epi32(15));
}

/* @nr Q4_0 rows: A per row into @acc. */
static NN_AVX2 INL void rows_q40(const uint8_t *const *w, int nr, const float *x, size_t k,
				 __m256 *acc)
{
	const __m256i eight = _mm256_set1_epi32(8);
	size_t i, off;
	int r, j;

	for (i = 0, off = 0; i < k; i += 32, off += QUANT_Q4_0_BLOCK_BYTES) {
#pragma GCC unroll 4
		for (r = 0; r < nr; r++) {
			const uint8_t *p = w[r] + off;
			__m256 s = _mm256_setzero_ps();

#pragma GCC unroll 4
			for (j = 0; j < 4; j++) {
				__m256 q = _mm256_cvtepi32_ps(_mm256_sub_epi32(
					nib8(p + 2 + 8 * (j & 1), j >= 2), eight));
				__m256 xv = _mm256_loadu_ps(x + i + 8 * j);

				s = j ? _mm256_fmadd_ps(q, xv, s) : _mm256_mul_ps(q, xv);
			}
			acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(f16_at(p)), s, acc[r]);
		}
	}
}

/*
 * The 8 scales (d * scale_c) and mins (dmin * min_c) of the Q4_K
 * super-block at @p as two vectors (quant_k_scale_min()'s unpacking, 8 at
 * a time from the 12 bytes as 32-bit words).
 */
static NN_AVX2 INL void q4k_scales(const uint8_t *p, __m256 *dd, __m256 *mm)
{
	uint32_t a, b, c;
	uint64_t sc, mn;

	memcpy(&a, p + 4, 4);
	memcpy(&b, p + 8, 4);
	memcpy(&c, p + 12, 4);
	sc = (a & 0x3f3f3f3fu) | (uint64_t)((c & 0x0f0f0f0fu) | ((a >> 2) & 0x30303030u)) << 32;
	mn = (b & 0x3f3f3f3fu) | (uint64_t)(((c >> 4) & 0x0f0f0f0fu) | ((b >> 2) & 0x30303030u)) << 32;
	*dd = _mm256_mul_ps(_mm256_set1_ps(f16_at(p)), _mm256_cvtepi32_ps(
		_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)sc))));
	*mm = _mm256_mul_ps(_mm256_set1_ps(f16_at(p + 2)), _mm256_cvtepi32_ps(
		_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)mn))));
}

/* @nr Q4_K rows: A per row into @acc, B into @accm. */
static NN_AVX2 INL void rows_q4k(const uint8_t *const *w, int nr, const float *x,
				 const float *xs, size_t k, __m256 *acc, __m256 *accm)
{
	float dd[NN_DEC_ROWS][8];
	size_t i, off;
	int r, c, j;

	for (i = 0, off = 0; i < k; i += QUANT_QK_K, off += QUANT_Q4_K_BLOCK_BYTES) {
		__m256 xsum = _mm256_loadu_ps(xs + i / 32);

		for (r = 0; r < nr; r++) {
			__m256 d, m;

			q4k_scales(w[r] + off, &d, &m);
			_mm256_storeu_ps(dd[r], d);
			accm[r] = _mm256_fmadd_ps(m, xsum, accm[r]);
		}
#pragma GCC unroll 8
		for (c = 0; c < 8; c++) {
#pragma GCC unroll 4
			for (r = 0; r < nr; r++) {
				const uint8_t *qs = w[r] + off + 16 + 32 * (c / 2);
				__m256 s = _mm256_setzero_ps();

#pragma GCC unroll 4
				for (j = 0; j < 4; j++) {
					__m256 q = _mm256_cvtepi32_ps(nib8(qs + 8 * j, c & 1));
					__m256 xv = _mm256_loadu_ps(x + i + 32 * c + 8 * j);

					s = j ? _mm256_fmadd_ps(q, xv, s) : _mm256_mul_ps(q, xv);
				}
				acc[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(&dd[r][c]), s, acc[r]);
			}
		}
	}
}

static NN_AVX2 INL void q4_rows(int type, const uint8_t *const *w, int nr, const float *x,
				const float *xs, size_t k, float *out)
{
	__m256 acc[NN_DEC_ROWS], accm[NN_DEC_ROWS];
	int r;

	for (r = 0; r < nr; r++) {
		acc[r] = _mm256_setzero_ps();
		accm[r] = _mm256_setzero_ps();
	}
	if (type == QUANT_TYPE_Q4_0) {
		rows_q40(w, nr, x, k, acc);
		for (r = 0; r < nr; r++)
			out[r] = nn_hsum_avx2(acc[r]);
		return;
	}
	rows_q4k(w, nr, x, xs, k, acc, accm);
	for (r = 0; r < nr; r++)
		out[r] = nn_hsum_avx2(acc[r]) - nn_hsum_avx2(accm[r]);
}

NN_AVX2 void nn_q4_rows_avx2(int type, const uint8_t *const *w, int nr, const float *x,
			     const float *xs, size_t k, float *out)
{
	if (nr == NN_DEC_ROWS)
		q4_rows(type, w, NN_DEC_ROWS, x, xs, k, out);
	else
		for (; nr > 0; nr--, w++, out++)
			q4_rows(type, w, 1, x, xs, k, out);
}
#endif /* NN_HAVE_X86 */
