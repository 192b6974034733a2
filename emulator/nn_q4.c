// SPDX-License-Identifier: MIT
/*
 * Q4_0 and Q4_K matmul in the block-factored order (nn_int.h nn_q4_*):
 * the driver, the order's definition and its portable implementation. The
 * AVX2 kernels (nn_q4_avx2.c) do the same operations in the same order.
 *
 * Instead of dequantizing every weight to a float and multiplying (nn.c's
 * order for the other types: a convert and two multiply-adds per weight),
 * the quants of a block are multiplied with the activations first and the
 * block's scale applied once to that partial sum; the offsets (Q4_0's -8,
 * Q4_K's mins) are applied once per block against the activations' block
 * sum. And the quants are taken from the weights as they lie: 8 nibbles a
 * 32-bit lane, nibble n masked in place (q << 4n, exact as a float), the
 * activations permuted and scaled by 2^-4n to match, once per token for
 * every row (nn_q4_prep_x()). A weight then costs a mask, a convert and
 * one multiply-add, no shuffle.
 *
 * The order. A row is cut into chunks of 256 elements (8 blocks of 32; the
 * last chunk of a Q4_0 row may hold 2, 4 or 6 blocks). A chunk is G groups
 * of V = 4 vectors of 8 lanes (Q4_K: a sub-block c is a group; Q4_0: the
 * nibbles 0-3 or 4-7 of a pair of blocks, G = 8 both), vector v of group g
 * holding, in lane l, the quant at element e(g, v, l) scaled by 2^(4n),
 * n(g, v) the nibble (below), and the activations xp the same way scaled
 * by 2^-4n (n = 7: both unscaled). Per output, 8-lane accumulators A and B
 * start at +0 and for each chunk in turn:
 *
 *   B_l = fma(m_l, X_l, B_l): m_l the offset of block l of the chunk
 *         (Q4_K: dmin * min_l; Q4_0: 8 d_l; 0 past the row), X_l that
 *         block's activation sum (nn_q4_xsums());
 *   for g = 0..G-1:  S = qf_{g,0} * xp_{g,0} (lane-wise, one rounding);
 *         S = fma(qf_{g,v}, xp_{g,v}, S) for v = 1..V-1;
 *         A = fma(s_g, S, A), s_g lane l the scale of the block lane l
 *         holds (Q4_K: d * scale_c in every lane; Q4_0: d of block
 *         2 (g / 2) in lanes 0-3, of the next block in lanes 4-7).
 *
 * and y = H(A) - H(B), H nn_hsum_avx2()'s order. Each step is one IEEE
 * operation, every product of scales exact, so this file's code (fmaf),
 * the AVX2 decode kernels and the AVX2 prefill tiles give the same bits:
 * decode and prefill, any thread count, any ISA. Against dequantize-then-
 * dot the result differs by float rounding only (within 1e-5 of sum |w x|,
 * tests/unit/test_emu_nn.c); an activation below 2^-98 in magnitude may
 * lose bits to the 2^-28 scaling (denormal), far inside that.
 *
 * Elements: Q4_K group c, vector j, lane l: element 32c + 4l + j of the
 * chunk, nibble n = 2j + (c & 1) of the 32-bit word at qs + 32 (c / 2) +
 * 4l (byte 4l + j: low nibble for c even, high for odd). Q4_0 group g,
 * vector v, lane l: n = 4 (g & 1) + v, block 2 (g / 2) + l / 4, l' = l %
 * 4, element 4l' + n / 2 (n even) or 16 + 4l' + n / 2 (odd) of the
 * block, nibble n of its word at qs + 4l'.
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

/* 2^-4n, or 1 for n = 7 (the top nibble is shifted down, not masked). */
static const float nib_scale[8] = {
	1.0f, 0x1p-4f, 0x1p-8f, 0x1p-12f, 0x1p-16f, 0x1p-20f, 0x1p-24f, 1.0f,
};

/* Quant @q of nibble @n as the kernels convert it: q << 4n, or q for n = 7. */
static float nib_value(int q, int n)
{
	return (float)(n < 7 ? q << (4 * n) : q);
}

bool nn_q4_type(int type, size_t k)
{
	return (type == QUANT_TYPE_Q4_K && k % QUANT_QK_K == 0) ||
	       (type == QUANT_TYPE_Q4_0 && k % 64 == 0);
}

/* Element index in the chunk and nibble of (g, v, l). */
static int q4_elem(int type, int g, int v, int l, int *n)
{
	if (type == QUANT_TYPE_Q4_K) {
		*n = 2 * v + (g & 1);
		return 32 * g + 4 * l + v;
	}
	*n = 4 * (g & 1) + v;
	return 32 * (g / 2 * 2 + l / 4) + (*n & 1 ? 16 : 0) + 4 * (l % 4) + *n / 2;
}

void nn_q4_prep_x(int type, const float *x, size_t k, float *xp, size_t cs, float *xs)
{
	int ng = 8, nv = 4, g, v, l, n, b;
	size_t c;

	memset(xs, 0, nn_q4_xs_floats(k) * sizeof(float));
	for (c = 0; c < k; c += NN_Q4_CHUNK) {
		size_t len = k - c < NN_Q4_CHUNK ? k - c : NN_Q4_CHUNK;

		for (g = 0; g < ng && (size_t)(g * (NN_Q4_CHUNK / ng)) < len; g++)
			for (v = 0; v < nv; v++)
				for (l = 0; l < 8; l++) {
					int e = q4_elem(type, g, v, l, &n);

					xp[c / NN_Q4_CHUNK * cs + (size_t)(8 * (nv * g + v) + l)] =
						x[c + e] * nib_scale[n];
				}
		for (b = 0; (size_t)(32 * b) < len; b++) {
			const float *p = x + c + 32 * b;
			float s[8];

			for (l = 0; l < 8; l++)
				s[l] = ((p[l] + p[8 + l]) + p[16 + l]) + p[24 + l];
			xs[c / 32 + (size_t)b] = hsum8(s);
		}
	}
}

size_t nn_q4_xs_floats(size_t k)
{
	return (k + NN_Q4_CHUNK - 1) / NN_Q4_CHUNK * 8;
}

void nn_q4_convert(int type, const uint8_t *w, size_t c, size_t k, struct nn_q4_chunk *ch)
{
	int nv = 4, g, v, l, n;
	size_t len = k - c < NN_Q4_CHUNK ? k - c : NN_Q4_CHUNK;

	memset(ch, 0, sizeof(*ch));
	if (type == QUANT_TYPE_Q4_K) {
		const uint8_t *p = w + c / QUANT_QK_K * QUANT_Q4_K_BLOCK_BYTES;
		float d = quant_fp16_to_fp32(quant_load_le16(p));
		float dmin = quant_fp16_to_fp32(quant_load_le16(p + 2));
		int sc, mn;

		ch->ng = 8;
		ch->nv = 4;
		for (g = 0; g < 8; g++) {
			quant_k_scale_min(g, p + 4, &sc, &mn);
			ch->m[g] = dmin * (float)mn;
			for (l = 0; l < 8; l++)
				ch->s[g][l] = d * (float)sc;
			for (v = 0; v < nv; v++)
				for (l = 0; l < 8; l++) {
					const uint8_t *qs = p + 16 + 32 * (g / 2);
					int q = g & 1 ? qs[4 * l + v] >> 4 : qs[4 * l + v] & 15;

					(void)q4_elem(type, g, v, l, &n);
					ch->q[8 * (nv * g + v) + l] = nib_value(q, n);
				}
		}
		return;
	}
	ch->ng = (int)(len / 32);
	ch->nv = 4;
	for (g = 0; g < ch->ng; g++)
		for (l = 0; l < 8; l++) {
			const uint8_t *p = w + (c / 32 + (size_t)(g / 2 * 2 + l / 4)) *
					       QUANT_Q4_0_BLOCK_BYTES;
			float d = quant_fp16_to_fp32(quant_load_le16(p));

			ch->s[g][l] = d;
			ch->m[g / 2 * 2 + l / 4] = 8.0f * d;
			for (v = 0; v < nv; v++) {
				(void)q4_elem(type, g, v, l, &n);
				ch->q[8 * (nv * g + v) + l] = nib_value(
					(p[2 + 4 * (l % 4) + n / 2] >> (4 * (n & 1))) & 15, n);
			}
		}
}

void nn_q4_tile_scalar(const struct nn_q4_chunk *ch, const float *xp, const float *xs,
		       float *acc)
{
	float *a = acc, *b = acc + 8, s[8];
	int nv = ch->nv, g, v, l;

	for (l = 0; l < 8; l++)
		b[l] = fmaf(ch->m[l], xs[l], b[l]);
	for (g = 0; g < ch->ng; g++) {
		const float *q = ch->q + 8 * nv * g, *x = xp + 8 * nv * g;

		for (l = 0; l < 8; l++) {
			s[l] = q[l] * x[l];
			for (v = 1; v < nv; v++)
				s[l] = fmaf(q[8 * v + l], x[8 * v + l], s[l]);
			a[l] = fmaf(ch->s[g][l], s[l], a[l]);
		}
	}
}

float nn_q4_finish(const float *acc)
{
	return hsum8(acc) - hsum8(acc + 8);
}

/*
 * Rows [@r0, @r1) of @j in panels of NN_Q4_PANEL rows: each chunk of the
 * panel's rows converted once (nn_q4_convert()) into @sc, then every token
 * through it, the accumulators of (row, token) in @acc between chunks.
 * Decode (one or two tokens) with AVX2 converts in registers instead
 * (nn_q4_dec_avx2()): the same operations, so the same bits.
 */
void nn_q4_rows(const struct nn_q4_job *j, size_t r0, size_t r1, struct nn_q4_chunk *sc,
		float *acc)
{
	size_t nxs = nn_q4_xs_floats(j->k), r, np, i, t, c;

	for (r = r0; r < r1; r += np) {
		const uint8_t *src[NN_Q4_PANEL];

		np = r1 - r < NN_Q4_PANEL ? r1 - r : NN_Q4_PANEL;
		for (i = 0; i < np; i++)
			src[i] = j->w + (r + i) * j->row_bytes;
#if NN_HAVE_X86
		if (j->avx2 && j->n_tok <= 2) {
			for (t = 0; t < j->n_tok; t++)
				for (i = 0; i < np; i += NN_DEC_ROWS) {
					int nr = np - i < NN_DEC_ROWS ? (int)(np - i) : NN_DEC_ROWS;

					nn_q4_dec_avx2(j->type, src + i, nr, j->xp + t * j->k,
						       j->xs + t * nxs, j->k,
						       j->y + t * j->n_rows + r + i);
				}
			continue;
		}
#endif
		memset(acc, 0, np * j->n_tok * 16 * sizeof(float));
		for (c = 0; c < j->k; c += NN_Q4_CHUNK) {
#if NN_HAVE_X86
			if (j->avx2) {
				for (i = 0; i < np; i++)
					nn_q4_convert_avx2(j->type, src[i], c, j->k, sc + i);
				nn_q4_tiles_avx2(sc, np, j->xp + c * j->n_tok, NN_Q4_CHUNK,
						 j->xs + c / 32, nxs,
						 j->n_tok, acc);
				continue;
			}
#endif
			for (i = 0; i < np; i++)
				nn_q4_convert(j->type, src[i], c, j->k, sc + i);
			for (i = 0; i < np; i++)
				for (t = 0; t < j->n_tok; t++)
					nn_q4_tile_scalar(sc + i, j->n_tok <= 2 ? j->xp + t * j->k + c :
							  j->xp + c * j->n_tok + t * NN_Q4_CHUNK,
							  j->xs + t * nxs + c / 32,
							  acc + (i * j->n_tok + t) * 16);
		}
		for (i = 0; i < np; i++)
			for (t = 0; t < j->n_tok; t++)
				j->y[t * j->n_rows + r + i] = nn_q4_finish(acc + (i * j->n_tok + t) * 16);
	}
}
