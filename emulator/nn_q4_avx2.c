// SPDX-License-Identifier: MIT
/*
 * AVX2 kernels of the block-factored Q4_0 / Q4_K order (nn_q4.c defines
 * it): decode converts the quants in registers, 8 nibbles a 32-bit lane
 * masked in place (no shuffle), and prefill runs tiles of 2 rows x 2
 * tokens over chunks converted once. Both do nn_q4_tile_scalar()'s
 * operations in its order, so every path gives the same bits.
 */
#include "nn_int.h"

#include <string.h>

#include "rk1828/quant_blocks.h"

#if NN_HAVE_X86

#define INL inline __attribute__((always_inline))

#ifndef NN_Q4_PREFETCH
#define NN_Q4_PREFETCH 1024	/* decode: bytes ahead in each row */
#endif

/* Nibble @n of every 32-bit lane of @v as a float: q << 4n (n < 7), q (n = 7). */
static NN_AVX2 INL __m256 nib_ps(__m256i v, int n)
{
	if (n == 7)
		return _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 28));
	return _mm256_cvtepi32_ps(_mm256_and_si256(v, _mm256_set1_epi32(15 << (4 * n))));
}

static NN_AVX2 INL float f16_at(const uint8_t *p)
{
	uint16_t h;

	memcpy(&h, p, 2);
	return _cvtsh_ss(h);
}

/*
 * The 8 scales (d * scale_c) and mins (dmin * min_c) of the Q4_K
 * super-block at @p (quant_k_scale_min()'s unpacking, 8 at a time from the
 * 12 bytes as 32-bit words).
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

/* @nr Q4_K rows, one token: A into @a, B into @b. */
static NN_AVX2 INL void dec_q4k(const uint8_t *const *w, int nr, const float *xp,
				const float *xs, size_t k, __m256 *a, __m256 *b)
{
	float dd[NN_DEC_ROWS][8];
	size_t i, off;
	int r, cc, h, j;

	for (i = 0, off = 0; i < k; i += QUANT_QK_K, off += QUANT_Q4_K_BLOCK_BYTES) {
		__m256 xsv = _mm256_loadu_ps(xs + i / 32);

		for (r = 0; r < nr; r++) {
			__m256 d, m;

			/*
			 * Streaming from memory the 4 rows' hardware prefetch
			 * falls behind: fetch NN_Q4_PREFETCH bytes ahead.
			 */
			_mm_prefetch((const char *)w[r] + off + NN_Q4_PREFETCH, _MM_HINT_T0);
			_mm_prefetch((const char *)w[r] + off + NN_Q4_PREFETCH + 64, _MM_HINT_T0);
			_mm_prefetch((const char *)w[r] + off + NN_Q4_PREFETCH + 128, _MM_HINT_T0);
			q4k_scales(w[r] + off, &d, &m);
			_mm256_storeu_ps(dd[r], d);
			b[r] = _mm256_fmadd_ps(m, xsv, b[r]);
		}
#pragma GCC unroll 4
		for (cc = 0; cc < 4; cc++) {
#pragma GCC unroll 4
			for (r = 0; r < nr; r++) {
				__m256i v = _mm256_loadu_si256((const __m256i *)(w[r] + off + 16 + 32 * cc));

#pragma GCC unroll 2
				for (h = 0; h < 2; h++) {
					const float *x = xp + i + 8 * 4 * (2 * cc + h);
					__m256 s = _mm256_mul_ps(nib_ps(v, h), _mm256_loadu_ps(x));

#pragma GCC unroll 3
					for (j = 1; j < 4; j++)
						s = _mm256_fmadd_ps(nib_ps(v, 2 * j + h),
								    _mm256_loadu_ps(x + 8 * j), s);
					a[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(&dd[r][2 * cc + h]), s,
							       a[r]);
				}
			}
		}
	}
}

/* The f16 scales of the @nb (2, 4, 6 or 8) Q4_0 blocks at @p as floats, 0 past @nb. */
static NN_AVX2 INL __m256 q40_scales(const uint8_t *p, int nb)
{
	const size_t bb = QUANT_Q4_0_BLOCK_BYTES;
	uint16_t h[8];
	int l;

	for (l = 0; l < 8; l++)
		h[l] = 0;
	if (nb == 8)
		return _mm256_cvtph_ps(_mm_setr_epi16(
			(short)quant_load_le16(p), (short)quant_load_le16(p + bb),
			(short)quant_load_le16(p + 2 * bb), (short)quant_load_le16(p + 3 * bb),
			(short)quant_load_le16(p + 4 * bb), (short)quant_load_le16(p + 5 * bb),
			(short)quant_load_le16(p + 6 * bb), (short)quant_load_le16(p + 7 * bb)));
	for (l = 0; l < nb; l++)
		h[l] = quant_load_le16(p + bb * (size_t)l);
	return _mm256_cvtph_ps(_mm_setr_epi16((short)h[0], (short)h[1], (short)h[2], (short)h[3],
					      (short)h[4], (short)h[5], (short)h[6], (short)h[7]));
}

/* @nr Q4_0 rows (k % 64 == 0), one token: A into @a, B into @b. */
static NN_AVX2 INL void dec_q40(const uint8_t *const *w, int nr, const float *xp,
				const float *xs, size_t k, __m256 *a, __m256 *b)
{
	const size_t bb = QUANT_Q4_0_BLOCK_BYTES;
	size_t i;
	int r, g, n;

	for (i = 0; i < k; i += NN_Q4_CHUNK) {
		int nb = k - i < NN_Q4_CHUNK ? (int)((k - i) / 32) : 8;
		__m256 xsv = _mm256_loadu_ps(xs + i / 32);

		for (r = 0; r < nr; r++) {
			const uint8_t *p = w[r] + i / 32 * bb;
			__m256 dv;

			for (g = 0; g < 3; g++)	/* 144 bytes: as Q4_K's */
				_mm_prefetch((const char *)p + NN_Q4_PREFETCH + 64 * g, _MM_HINT_T0);
			dv = q40_scales(p, nb);
			b[r] = _mm256_fmadd_ps(_mm256_mul_ps(dv, _mm256_set1_ps(8.0f)), xsv, b[r]);
			for (g = 0; g < nb / 2; g++) {
				const uint8_t *q = p + bb * (size_t)(2 * g) + 2;
				__m256i v = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)(q + bb)),
							     _mm_loadu_si128((const __m128i *)q));
				__m256i sel = _mm256_setr_epi32(2 * g, 2 * g, 2 * g, 2 * g, 2 * g + 1,
								2 * g + 1, 2 * g + 1, 2 * g + 1);
				int hh;

#pragma GCC unroll 2
				for (hh = 0; hh < 2; hh++) {
					const float *x = xp + i + 64 * g + 32 * hh;
					__m256 s = _mm256_mul_ps(nib_ps(v, 4 * hh), _mm256_loadu_ps(x));

#pragma GCC unroll 3
					for (n = 1; n < 4; n++)
						s = _mm256_fmadd_ps(nib_ps(v, 4 * hh + n),
								    _mm256_loadu_ps(x + 8 * n), s);
					a[r] = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(dv, sel), s, a[r]);
				}
			}
		}
	}
}

static NN_AVX2 INL void dec(int type, const uint8_t *const *w, int nr, const float *xp,
			    const float *xs, size_t k, float *out)
{
	__m256 a[NN_DEC_ROWS], b[NN_DEC_ROWS];
	int r;

	for (r = 0; r < nr; r++) {
		a[r] = _mm256_setzero_ps();
		b[r] = _mm256_setzero_ps();
	}
	if (type == QUANT_TYPE_Q4_K)
		dec_q4k(w, nr, xp, xs, k, a, b);
	else
		dec_q40(w, nr, xp, xs, k, a, b);
	for (r = 0; r < nr; r++)
		out[r] = nn_hsum_avx2(a[r]) - nn_hsum_avx2(b[r]);
}

NN_AVX2 void nn_q4_dec_avx2(int type, const uint8_t *const *w, int nr, const float *xp,
			    const float *xs, size_t k, float *out)
{
	if (nr == NN_DEC_ROWS)
		dec(type, w, NN_DEC_ROWS, xp, xs, k, out);
	else
		for (; nr > 0; nr--, w++, out++)
			dec(type, w, 1, xp, xs, k, out);
}

/* B += m * X of one (row @ch, token @xs) pair, accumulators at @acc (A, then B). */
static NN_AVX2 INL void tile_b(const struct nn_q4_chunk *ch, const float *xs, float *acc)
{
	_mm256_storeu_ps(acc + 8, _mm256_fmadd_ps(_mm256_loadu_ps(ch->m), _mm256_loadu_ps(xs),
						  _mm256_loadu_ps(acc + 8)));
}

/*
 * 2 converted rows (@c0, @c1) times 2 tokens (@x0, @x1) over one chunk:
 * nn_q4_tile_scalar() of each pair, S and A in registers. @a: the pairs'
 * accumulators, (row 0, token 0), (0, 1), (1, 0), (1, 1).
 */
static NN_AVX2 void tile2x2(const struct nn_q4_chunk *c0, const struct nn_q4_chunk *c1,
			    const float *x0, const float *x1, const float *s0, const float *s1,
			    float *const *a)
{
	__m256 a00 = _mm256_loadu_ps(a[0]), a01 = _mm256_loadu_ps(a[1]);
	__m256 a10 = _mm256_loadu_ps(a[2]), a11 = _mm256_loadu_ps(a[3]);
	int g, v;

	tile_b(c0, s0, a[0]);
	tile_b(c0, s1, a[1]);
	tile_b(c1, s0, a[2]);
	tile_b(c1, s1, a[3]);
	/*
	 * Two groups at a time: 8 independent S chains keep both FMA pipes
	 * busy (4 chains of dependent FMAs measured half speed). ng is even.
	 */
	for (g = 0; g < c0->ng; g += 2) {
		const float *q0 = c0->q + 32 * g, *q1 = c1->q + 32 * g;
		const float *y0 = x0 + 32 * g, *y1 = x1 + 32 * g;
		__m256 s[2][4], p, r, u, w, d0, d1;
		int h;

#pragma GCC unroll 2
		for (h = 0; h < 2; h++) {
			u = _mm256_loadu_ps(y0 + 32 * h);
			w = _mm256_loadu_ps(y1 + 32 * h);
			p = _mm256_loadu_ps(q0 + 32 * h);
			r = _mm256_loadu_ps(q1 + 32 * h);
			s[h][0] = _mm256_mul_ps(p, u);
			s[h][1] = _mm256_mul_ps(p, w);
			s[h][2] = _mm256_mul_ps(r, u);
			s[h][3] = _mm256_mul_ps(r, w);
		}
#pragma GCC unroll 3
		for (v = 1; v < 4; v++) {
#pragma GCC unroll 2
			for (h = 0; h < 2; h++) {
				u = _mm256_loadu_ps(y0 + 32 * h + 8 * v);
				w = _mm256_loadu_ps(y1 + 32 * h + 8 * v);
				p = _mm256_loadu_ps(q0 + 32 * h + 8 * v);
				r = _mm256_loadu_ps(q1 + 32 * h + 8 * v);
				s[h][0] = _mm256_fmadd_ps(p, u, s[h][0]);
				s[h][1] = _mm256_fmadd_ps(p, w, s[h][1]);
				s[h][2] = _mm256_fmadd_ps(r, u, s[h][2]);
				s[h][3] = _mm256_fmadd_ps(r, w, s[h][3]);
			}
		}
#pragma GCC unroll 2
		for (h = 0; h < 2; h++) {
			d0 = _mm256_loadu_ps(c0->s[g + h]);
			d1 = _mm256_loadu_ps(c1->s[g + h]);
			a00 = _mm256_fmadd_ps(d0, s[h][0], a00);
			a01 = _mm256_fmadd_ps(d0, s[h][1], a01);
			a10 = _mm256_fmadd_ps(d1, s[h][2], a10);
			a11 = _mm256_fmadd_ps(d1, s[h][3], a11);
		}
	}
	_mm256_storeu_ps(a[0], a00);
	_mm256_storeu_ps(a[1], a01);
	_mm256_storeu_ps(a[2], a10);
	_mm256_storeu_ps(a[3], a11);
}

/* One converted row @ch times one token @x over one chunk (the tiles' edges). */
static NN_AVX2 void tile1x1(const struct nn_q4_chunk *ch, const float *x, const float *xs,
			    float *acc)
{
	__m256 a = _mm256_loadu_ps(acc);
	int g, v;

	tile_b(ch, xs, acc);
	for (g = 0; g < ch->ng; g++) {
		const float *q = ch->q + 32 * g, *y = x + 32 * g;
		__m256 s = _mm256_mul_ps(_mm256_loadu_ps(q), _mm256_loadu_ps(y));

		for (v = 1; v < 4; v++)
			s = _mm256_fmadd_ps(_mm256_loadu_ps(q + 8 * v), _mm256_loadu_ps(y + 8 * v), s);
		a = _mm256_fmadd_ps(_mm256_loadu_ps(ch->s[g]), s, a);
	}
	_mm256_storeu_ps(acc, a);
}

NN_AVX2 void nn_q4_tiles_avx2(const struct nn_q4_chunk *sc, size_t np, const float *xp,
			      size_t ldx, const float *xs, size_t ldxs, size_t n_tok,
			      float *acc)
{
	size_t i, t;

	/* Tokens outside: the panel's chunks (16 KiB) and 2 tokens' stay in L1. */
	for (t = 0; t < n_tok; t += 2) {
		bool two = t + 1 < n_tok;

		for (i = 0; i < np; i++) {
			float *c0 = acc + (i * n_tok + t) * 16;

			if (two && i + 1 < np) {
				float *a[4] = { c0, c0 + 16, c0 + n_tok * 16, c0 + n_tok * 16 + 16 };

				tile2x2(sc + i, sc + i + 1, xp + t * ldx, xp + (t + 1) * ldx,
					xs + t * ldxs, xs + (t + 1) * ldxs, a);
				i++;
			} else {
				tile1x1(sc + i, xp + t * ldx, xs + t * ldxs, c0);
				if (two)
					tile1x1(sc + i, xp + (t + 1) * ldx, xs + (t + 1) * ldxs,
						c0 + 16);
			}
		}
	}
}

NN_AVX2 void nn_q4_convert_avx2(int type, const uint8_t *w, size_t c, size_t k,
				struct nn_q4_chunk *ch)
{
	int g, h, j;

	ch->nv = 4;
	if (type == QUANT_TYPE_Q4_K) {
		const uint8_t *p = w + c / QUANT_QK_K * QUANT_Q4_K_BLOCK_BYTES;
		__m256 dd, mm;
		int cc;

		q4k_scales(p, &dd, &mm);
		_mm256_storeu_ps(ch->m, mm);
		ch->ng = 8;
		for (g = 0; g < 8; g++)
			_mm256_storeu_ps(ch->s[g], _mm256_permutevar8x32_ps(dd, _mm256_set1_epi32(g)));
		for (cc = 0; cc < 4; cc++) {
			__m256i v = _mm256_loadu_si256((const __m256i *)(p + 16 + 32 * cc));

			for (h = 0; h < 2; h++)
				for (j = 0; j < 4; j++)
					_mm256_storeu_ps(ch->q + 8 * (4 * (2 * cc + h) + j),
							 nib_ps(v, 2 * j + h));
		}
		return;
	}
	{
		const size_t bb = QUANT_Q4_0_BLOCK_BYTES;
		const uint8_t *p = w + c / 32 * bb;
		int nb = k - c < NN_Q4_CHUNK ? (int)((k - c) / 32) : 8;
		__m256 dv = q40_scales(p, nb);

		_mm256_storeu_ps(ch->m, _mm256_mul_ps(dv, _mm256_set1_ps(8.0f)));
		ch->ng = nb;
		for (g = 0; g < nb / 2; g++) {
			const uint8_t *q = p + bb * (size_t)(2 * g) + 2;
			__m256i v = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)(q + bb)),
						     _mm_loadu_si128((const __m128i *)q));
			__m256i sel = _mm256_setr_epi32(2 * g, 2 * g, 2 * g, 2 * g, 2 * g + 1,
							2 * g + 1, 2 * g + 1, 2 * g + 1);
			__m256 sv = _mm256_permutevar8x32_ps(dv, sel);

			for (h = 0; h < 2; h++) {
				_mm256_storeu_ps(ch->s[2 * g + h], sv);
				for (j = 0; j < 4; j++)
					_mm256_storeu_ps(ch->q + 8 * (4 * (2 * g + h) + j),
							 nib_ps(v, 4 * h + j));
			}
		}
	}
}
#endif /* NN_HAVE_X86 */
