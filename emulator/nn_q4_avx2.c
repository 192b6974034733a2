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
			__m256 dv = q40_scales(p, nb);
			b[r] = _mm256_fmadd_ps(_mm256_mul_ps(dv, _mm256_set1_ps(8.0f)), xsv, b[r]);
			for (g = 0; g < nb / 2; g++) {
				const uint8_t *q = p + bb * (size_t)(2 * g) + 2;
				__m256i v = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)(q + bb)),
							     _mm_loadu_si128((const __m128i *)q));
				__m256i sel = _mm256_setr_epi32(2 * g, 2 * g, 2 * g, 2 * g, 2 * g + 1,
								2 * g + 1, 2 * g + 1, 2 * g + 1);
				const float *x = xp + i + 64 * g;
				__m256 s = _mm256_mul_ps(nib_ps(v, 0), _mm256_loadu_ps(x));

#pragma GCC unroll 7
				for (n = 1; n < 8; n++)
					s = _mm256_fmadd_ps(nib_ps(v, n), _mm256_loadu_ps(x + 8 * n), s);
				a[r] = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(dv, sel), s, a[r]);
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

/*
 * @nr (<= 2) converted rows times @nt (<= 2) tokens over one chunk:
 * nn_q4_tile_scalar() of each pair, S and A in registers.
 */
static NN_AVX2 INL void tile(const struct nn_q4_chunk *const *ch, int nr, const float *const *xp,
			     const float *const *xs, int nt, float *const *acc)
{
	int nv = ch[0]->nv, ng = ch[0]->ng, g, v, r, t;
	__m256 a[2][2], s[2][2];

	for (r = 0; r < nr; r++)
		for (t = 0; t < nt; t++) {
			float *c = acc[2 * r + t];

			s[r][t] = _mm256_setzero_ps();
			a[r][t] = _mm256_loadu_ps(c);
			_mm256_storeu_ps(c + 8, _mm256_fmadd_ps(_mm256_loadu_ps(ch[r]->m),
								_mm256_loadu_ps(xs[t]),
								_mm256_loadu_ps(c + 8)));
		}
	for (g = 0; g < ng; g++) {
		for (v = 0; v < nv; v++) {
			size_t o = (size_t)(8 * (nv * g + v));
			__m256 x[2];

			for (t = 0; t < nt; t++)
				x[t] = _mm256_loadu_ps(xp[t] + o);
			for (r = 0; r < nr; r++) {
				__m256 q = _mm256_loadu_ps(ch[r]->q + o);

				for (t = 0; t < nt; t++)
					s[r][t] = v ? _mm256_fmadd_ps(q, x[t], s[r][t]) :
						      _mm256_mul_ps(q, x[t]);
			}
		}
		for (r = 0; r < nr; r++) {
			__m256 sc = _mm256_loadu_ps(ch[r]->s[g]);

			for (t = 0; t < nt; t++)
				a[r][t] = _mm256_fmadd_ps(sc, s[r][t], a[r][t]);
		}
	}
	for (r = 0; r < nr; r++)
		for (t = 0; t < nt; t++)
			_mm256_storeu_ps(acc[2 * r + t], a[r][t]);
}

NN_AVX2 void nn_q4_tiles_avx2(const struct nn_q4_chunk *sc, size_t np, const float *xp,
			      size_t ldx, const float *xs, size_t ldxs, size_t n_tok,
			      float *acc)
{
	size_t i, t;

	for (i = 0; i < np; i += 2) {
		int nr = np - i >= 2 ? 2 : 1;
		const struct nn_q4_chunk *ch[2] = { sc + i, sc + i + nr - 1 };

		for (t = 0; t < n_tok; t += 2) {
			int nt = n_tok - t >= 2 ? 2 : 1;
			const float *x[2] = { xp + t * ldx, xp + (t + nt - 1) * ldx };
			const float *s[2] = { xs + t * ldxs, xs + (t + nt - 1) * ldxs };
			float *c[4] = {
				acc + (i * n_tok + t) * 16, acc + (i * n_tok + t + nt - 1) * 16,
				acc + ((i + nr - 1) * n_tok + t) * 16,
				acc + ((i + nr - 1) * n_tok + t + nt - 1) * 16,
			};

			if (nr == 2 && nt == 2)
				tile(ch, 2, x, s, 2, c);
			else if (nr == 2)
				tile(ch, 2, x, s, 1, c);
			else if (nt == 2)
				tile(ch, 1, x, s, 2, c);
			else
				tile(ch, 1, x, s, 1, c);
		}
	}
}
#endif /* NN_HAVE_X86 */
