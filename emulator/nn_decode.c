// SPDX-License-Identifier: MIT
/*
 * Decode kernels (nn_int.h nn_dec_rows_avx2()): one token times 4 or 8
 * weight rows, every weight converted from its block in registers and fed
 * straight into the row's fused multiply-add, so the weights are read once
 * and nothing is stored. 8 rows give 8 independent accumulator chains,
 * enough to cover the FMA latency; the activations' 8 floats are loaded
 * once per row (from L1).
 *
 * Conversions (each exactly quant_dequantize_row()'s value, see
 * rk1828/quant_blocks.h): the quants are widened to 32-bit lanes
 * (vpmovzxbd straight from memory), the nibble or the high bits picked
 * with a shift and a mask, converted to float and scaled with one fused
 * multiply-add, q * d - 8d for Q4_0, q * d + m for Q4_1, D * q - N for
 * the K-quants: q has at most 6 bits and every scale at most 19, so the
 * product is exact and the single rounding is the scalar code's.
 */
#include "nn_int.h"

#include <string.h>

#include "rk1828/quant_blocks.h"

#if NN_HAVE_X86

#define INL inline __attribute__((always_inline))

#ifndef NN_DEC_PREFETCH
#define NN_DEC_PREFETCH 1	/* prefetch the rows this many calls ahead (prefetch_next()) */
#endif



static NN_AVX2 INL float f16_at(const uint8_t *p)
{
	uint16_t h;

	memcpy(&h, p, 2);
	return _cvtsh_ss(h);
}

/* 8 bytes at @p widened to 8 int32 lanes (zero-extended). */
static NN_AVX2 INL __m256i u8x8(const uint8_t *p)
{
	return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
}

/*
 * The scales of a 32-weight block: w = q * a + b, q the block's unsigned
 * quant (Q8_0: signed, w = q * a). Q5_x: h the 32 high bits. (Converting
 * the 4 rows' scales together through L1 measured slower: the store to
 * load round trip sits on every block's path.)
 */
struct blk32 {
	__m256 a, b;
	uint32_t h;
};

static NN_AVX2 INL struct blk32 blk32_scales(int type, const uint8_t *p)
{
	struct blk32 s;
	float d = f16_at(p);

	s.a = _mm256_set1_ps(d);
	s.h = 0;
	switch (type) {
	case QUANT_TYPE_Q4_0:
		s.b = _mm256_set1_ps(-8.0f * d);
		break;
	case QUANT_TYPE_Q5_0:
		s.b = _mm256_set1_ps(-16.0f * d);
		memcpy(&s.h, p + 2, 4);
		break;
	case QUANT_TYPE_Q5_1:
		memcpy(&s.h, p + 4, 4);
		/* fall through */
	case QUANT_TYPE_Q4_1:
		s.b = _mm256_set1_ps(f16_at(p + 2));
		break;
	default:
		s.b = _mm256_setzero_ps();
	}
	return s;
}

/* The 5th bits of Q5_x quants 8j..8j+7 (j < 4) from @h, as 0 or 16 per lane. */
static NN_AVX2 INL __m256i q5_hi8(uint32_t h, int j)
{
	uint32_t half = j < 2 ? h & 0xffff : h >> 16;
	__m256i sh = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);

	sh = _mm256_add_epi32(sh, _mm256_set1_epi32(8 * (j & 1)));
	return _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32((int)(half << 4)), sh),
				_mm256_set1_epi32(16));
}

/* 32 bytes of small unsigned integers -> 4 x 8 floats, in order. */
static NN_AVX2 INL void u8x32_ps(__m256i q, __m256 *f)
{
	__m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);

	f[0] = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(lo));
	f[1] = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8)));
	f[2] = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(hi));
	f[3] = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8)));
}

/*
 * Weights 8j..8j+7 (j < 4) of the 32-weight block at @p as floats (scales
 * @s), 8 quants widened straight from memory: the low nibbles of bytes
 * 0..15 are weights 0..15, the high ones 16..31. (Building Q5_x's 32
 * quants in one register first, nibbles and high bits 32 at a time, as
 * the K-quants do, measured 1.3x slower; so did converting a whole block
 * into an array of 4 vectors first.)
 */
static NN_AVX2 INL __m256 blk32_vec(int type, const uint8_t *p, int j, const struct blk32 *s)
{
	size_t qs = type == QUANT_TYPE_Q4_0 ? 2 : type == QUANT_TYPE_Q4_1 ? 4 :
		    type == QUANT_TYPE_Q5_0 ? 6 : 8;
	__m256i v;

	if (type == QUANT_TYPE_Q8_0) {
		v = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(p + 2 + 8 * j)));
		return _mm256_mul_ps(_mm256_cvtepi32_ps(v), s->a);
	}
	v = u8x8(p + qs + 8 * (j & 1));
	v = j >= 2 ? _mm256_srli_epi32(v, 4) : _mm256_and_si256(v, _mm256_set1_epi32(15));
	if (type == QUANT_TYPE_Q5_0 || type == QUANT_TYPE_Q5_1)
		v = _mm256_or_si256(v, q5_hi8(s->h, j));
	return _mm256_fmadd_ps(_mm256_cvtepi32_ps(v), s->a, s->b);
}

/*
 * Streaming, the 4 rows of a call are 4 short streams (a 4096-wide Q4_K
 * row is 36 cache lines) that the hardware prefetcher hardly trains on
 * before they end. The rows of nn_matmul() are contiguous, so the next
 * call's rows are the @span bytes after the last: block @it of @n_it
 * fetches its share of them. Prefetches past the matrix are harmless.
 */
static NN_AVX2 INL void prefetch_next(const uint8_t *const *w, size_t span, size_t it,
				      size_t n_it)
{
	const char *next = (const char *)w[0] + span * NN_DEC_PREFETCH;
	size_t b = span * it / n_it, e = span * (it + 1) / n_it;

	for (b &= ~(size_t)63; b < e; b += 64)
		_mm_prefetch(next + b, _MM_HINT_T0);
}

/* @nr rows of a 32-weight block type into acc[0..nr-1]. */
static NN_AVX2 INL void rows_blk32(int type, const uint8_t *const *w, int nr, const float *x,
				   size_t k, __m256 *acc)
{
	size_t bb = quant_block_bytes(type), i, off;
	int r, j;

	for (i = 0, off = 0; i < k; i += 32, off += bb) {
		if (NN_DEC_PREFETCH)
			prefetch_next(w, (size_t)nr * (k / 32) * bb, i / 32, k / 32);
#pragma GCC unroll 8
		for (r = 0; r < nr; r++) {
			const uint8_t *p = w[r] + off;
			struct blk32 s = blk32_scales(type, p);

#pragma GCC unroll 4
			for (j = 0; j < 4; j++)
				acc[r] = _mm256_fmadd_ps(blk32_vec(type, p, j, &s),
							 _mm256_loadu_ps(x + i + 8 * j), acc[r]);
		}
	}
}

/* @nr rows of F16 weights, 8 at a time (vcvtph2ps). */
static NN_AVX2 INL void rows_f16(const uint8_t *const *w, int nr, const float *x, size_t k,
				 __m256 *acc)
{
	size_t i;
	int r;

	for (i = 0; i < k; i += 8) {
		__m256 xv = _mm256_loadu_ps(x + i);

#pragma GCC unroll 8
		for (r = 0; r < nr; r++)
			acc[r] = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128(
					(const __m128i *)(w[r] + 2 * i))), xv, acc[r]);
	}
}

/* @nr rows of BF16 weights, 8 at a time (the 16 bits are a float's top half). */
static NN_AVX2 INL void rows_bf16(const uint8_t *const *w, int nr, const float *x, size_t k,
				  __m256 *acc)
{
	size_t i;
	int r;

	for (i = 0; i < k; i += 8) {
		__m256 xv = _mm256_loadu_ps(x + i);

#pragma GCC unroll 8
		for (r = 0; r < nr; r++) {
			__m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128(
					(const __m128i *)(w[r] + 2 * i)));

			acc[r] = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_slli_epi32(h, 16)), xv,
						 acc[r]);
		}
	}
}

/*
 * One K-quant super-block's scales: w = q * dd[g] - mm[g] for the weights
 * of group g (Q4_K, Q5_K: 8 sub-blocks of 32, dd = d * scale, mm = dmin *
 * min; Q6_K: 16 groups of 16, dd = d * scale, mm = 32 dd), the scalar
 * decoder's products (exact). The 6-bit scales and mins of Q4_K/Q5_K are
 * unpacked 8 at a time from the 12 bytes as 32-bit words: bytes 0-3 and
 * 4-7 hold the low 6 bits of scales and mins 0-3, bytes 8-11 the low 4 of
 * 4-7 (scale: low nibble, min: high), their top 2 bits in the top bits of
 * bytes 0-3 (scales) and 4-7 (mins) (quant_k_scale_min()).
 */
static NN_AVX2 INL void kq_scales(int type, const uint8_t *p, float *dd, float *mm)
{
	uint32_t a, b, c;
	uint64_t sc, mn;
	__m256 d;

	if (type == QUANT_TYPE_Q6_K) {
		__m128i s = _mm_loadu_si128((const __m128i *)(p + 192));
		__m256 lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(s));
		__m256 hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(s, 8)));

		d = _mm256_set1_ps(f16_at(p + 208));
		lo = _mm256_mul_ps(d, lo);
		hi = _mm256_mul_ps(d, hi);
		_mm256_storeu_ps(dd, lo);
		_mm256_storeu_ps(dd + 8, hi);
		_mm256_storeu_ps(mm, _mm256_mul_ps(_mm256_set1_ps(32.0f), lo));
		_mm256_storeu_ps(mm + 8, _mm256_mul_ps(_mm256_set1_ps(32.0f), hi));
		return;
	}
	memcpy(&a, p + 4, 4);
	memcpy(&b, p + 8, 4);
	memcpy(&c, p + 12, 4);
	sc = (a & 0x3f3f3f3fu) | (uint64_t)((c & 0x0f0f0f0fu) | ((a >> 2) & 0x30303030u)) << 32;
	mn = (b & 0x3f3f3f3fu) | (uint64_t)(((c >> 4) & 0x0f0f0f0fu) | ((b >> 2) & 0x30303030u)) << 32;
	d = _mm256_set1_ps(f16_at(p));
	_mm256_storeu_ps(dd, _mm256_mul_ps(d, _mm256_cvtepi32_ps(
		_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)sc)))));
	d = _mm256_set1_ps(f16_at(p + 2));
	_mm256_storeu_ps(mm, _mm256_mul_ps(d, _mm256_cvtepi32_ps(
		_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)mn)))));
}

/* Bits @b and @b + 1 (@b < 8) of every byte of @v moved to bit @to (4), masked. */
static NN_AVX2 INL __m256i bits_to(__m256i v, int b, int to, int mask)
{
	/* 16-bit shifts: the bits that cross a byte boundary are masked off */
	v = b < to ? _mm256_slli_epi16(v, to - b) : _mm256_srli_epi16(v, b - to);
	return _mm256_and_si256(v, _mm256_set1_epi8((char)mask));
}

/*
 * The unsigned quants of K-quant sub-block @c (< 8, weights 32c..32c+31)
 * of the super-block at @p, as 4 x 8 floats, worked on 32 bytes at a
 * time. Q4_K/Q5_K: the low (c even) or high nibbles of qs[32 (c / 2) + l],
 * Q5_K's 5th bit bit c of qh[l]; Q6_K: c = 4 h + q, the low or high nibble
 * of ql[64 h + 32 (q & 1) + l], bits 4-5 from qh[32 h + l] >> 2q.
 */
static NN_AVX2 INL void kq_vec(int type, const uint8_t *p, int c, __m256 *f)
{
	const __m256i m15 = _mm256_set1_epi8(15);
	__m256i v;

	if (type == QUANT_TYPE_Q6_K) {
		int h = c / 4, q = c % 4;

		v = _mm256_loadu_si256((const __m256i *)(p + 64 * h + 32 * (q & 1)));
		v = q >= 2 ? _mm256_srli_epi16(v, 4) : v;
		v = _mm256_and_si256(v, m15);
		v = _mm256_or_si256(v, bits_to(_mm256_loadu_si256((const __m256i *)(p + 128 + 32 * h)),
					       2 * q, 4, 0x30));
	} else {
		v = _mm256_loadu_si256((const __m256i *)(p + (type == QUANT_TYPE_Q5_K ? 48 : 16) +
							 32 * (c / 2)));
		v = _mm256_and_si256(c & 1 ? _mm256_srli_epi16(v, 4) : v, m15);
		if (type == QUANT_TYPE_Q5_K)
			v = _mm256_or_si256(v, bits_to(_mm256_loadu_si256((const __m256i *)(p + 16)),
						       c, 4, 0x10));
	}
	u8x32_ps(v, f);
}

/* @nr rows of a K-quant type into acc[0..nr-1], super-block by super-block. */
static NN_AVX2 INL void rows_kq(int type, const uint8_t *const *w, int nr, const float *x,
				size_t k, __m256 *acc)
{
	size_t bb = quant_block_bytes(type), i, off;
	float dd[NN_DEC_ROWS][16], mm[NN_DEC_ROWS][16];
	int six = type == QUANT_TYPE_Q6_K;
	int r, c, j;

	for (i = 0, off = 0; i < k; i += QUANT_QK_K, off += bb) {
		if (NN_DEC_PREFETCH && !six)
			prefetch_next(w, (size_t)nr * (k / QUANT_QK_K) * bb, i / QUANT_QK_K,
				      k / QUANT_QK_K);
		for (r = 0; r < nr; r++) {
			kq_scales(type, w[r] + off, dd[r], mm[r]);
			/*
			 * Q6_K reads a super-block from its end (the scales)
			 * back to its start, which the hardware prefetcher
			 * follows badly: fetching the lines 2 super-blocks
			 * ahead measured 1.5x faster when streaming (no gain
			 * for Q4_K/Q5_K). Prefetches past the row are harmless.
			 */
			if (six)
				for (j = 0; j < (int)bb; j += 64)
					_mm_prefetch((const char *)w[r] + off + 2 * bb + j,
						     _MM_HINT_T0);
		}
#pragma GCC unroll 8
		for (c = 0; c < 8; c++) {
#pragma GCC unroll 8
			for (r = 0; r < nr; r++) {
				__m256 q[4];

				kq_vec(type, w[r] + off, c, q);
#pragma GCC unroll 4
				for (j = 0; j < 4; j++) {
					int g = six ? 2 * c + j / 2 : c;
					__m256 wv = _mm256_fmsub_ps(q[j], _mm256_broadcast_ss(&dd[r][g]),
								    _mm256_broadcast_ss(&mm[r][g]));

					acc[r] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + i + 32 * c + 8 * j),
								 acc[r]);
				}
			}
		}
	}
}

/* The kernel for @type with a constant @nr (inlined per row count). */
static NN_AVX2 INL bool dec_rows(int type, const uint8_t *const *w, int nr, const float *x,
				 size_t k, float *out)
{
	__m256 acc[NN_DEC_ROWS];
	int r;

	for (r = 0; r < nr; r++)
		acc[r] = _mm256_setzero_ps();
	switch (type) {
	case QUANT_TYPE_F16:
		if (k % 8)
			return false;
		rows_f16(w, nr, x, k, acc);
		break;
	case QUANT_TYPE_BF16:
		if (k % 8)
			return false;
		rows_bf16(w, nr, x, k, acc);
		break;
	case QUANT_TYPE_Q8_0:
		rows_blk32(QUANT_TYPE_Q8_0, w, nr, x, k, acc);
		break;
	case QUANT_TYPE_Q4_0:
		rows_blk32(QUANT_TYPE_Q4_0, w, nr, x, k, acc);
		break;
	case QUANT_TYPE_Q4_1:
		rows_blk32(QUANT_TYPE_Q4_1, w, nr, x, k, acc);
		break;
	case QUANT_TYPE_Q5_0:
		rows_blk32(QUANT_TYPE_Q5_0, w, nr, x, k, acc);
		break;
	case QUANT_TYPE_Q5_1:
		rows_blk32(QUANT_TYPE_Q5_1, w, nr, x, k, acc);
		break;
	case QUANT_TYPE_Q4_K:
		rows_kq(QUANT_TYPE_Q4_K, w, nr, x, k, acc);
		break;
	case QUANT_TYPE_Q5_K:
		rows_kq(QUANT_TYPE_Q5_K, w, nr, x, k, acc);
		break;
	case QUANT_TYPE_Q6_K:
		rows_kq(QUANT_TYPE_Q6_K, w, nr, x, k, acc);
		break;
	default:
		return false;
	}
	for (r = 0; r < nr; r++)
		out[r] = nn_hsum_avx2(acc[r]);
	return true;
}

NN_AVX2 bool nn_dec_rows_avx2(int type, const uint8_t *const *w, const float *x, size_t k,
			      float *out)
{
	if (quant_row_size(type, k) == 0)
		return false;
	return dec_rows(type, w, NN_DEC_ROWS, x, k, out);
}
#endif /* NN_HAVE_X86 */
