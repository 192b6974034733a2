/* SPDX-License-Identifier: MIT */
/*
 * Emulator math internals shared by nn.c (dispatch, matmul driver,
 * prefill) and nn_decode.c (the decode kernels): not part of nn.h's
 * contract.
 */
#ifndef RK_EMU_NN_INT_H
#define RK_EMU_NN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#define NN_HAVE_X86 1
#else
#define NN_HAVE_X86 0
#endif

/*
 * Decode: weight rows one kernel call takes (its accumulators; 8 rows
 * measured slower on AVX2, their accumulators and constants do not fit
 * the 16 registers).
 */
#define NN_DEC_ROWS 4

/* nn_q4.c: elements of a row per chunk of the block-factored order (8 blocks of 32) */
#define NN_Q4_CHUNK 256
/* nn_q4.c: rows converted together in prefill */
#define NN_Q4_PANEL 16

/**
 * nn_q4_type() - whether @type with rows of @k runs the block-factored
 *	kernels of nn_q4.c (Q4_K; Q4_0 with @k a multiple of 64), decode and
 *	prefill alike
 */
bool nn_q4_type(int type, size_t k);

/**
 * struct nn_q4_chunk - one row's chunk converted for the tiles (nn_q4.c)
 * @q: quants as floats, q << 4n, in the order's vectors [ng][nv][8]
 * @s: per group, the scale of each lane's block
 * @m: the offset of each of the chunk's 8 blocks (0 past the row)
 * @ng: groups in this chunk (Q4_K 8; Q4_0 up to 4)
 * @nv: vectors per group (Q4_K 4, Q4_0 8)
 */
struct nn_q4_chunk {
	float q[NN_Q4_CHUNK];
	float s[8][8];
	float m[8];
	int ng, nv;
};

/**
 * struct nn_q4_job - one block-factored matmul (nn_q4_rows())
 * @type: QUANT_TYPE_Q4_0 or QUANT_TYPE_Q4_K
 * @w: rows of @row_bytes, contiguous, any alignment
 * @row_bytes: quant_row_size(@type, @k)
 * @xp: nn_q4_prep_x() of each token: [@n_tok][@k] for 1 or 2 tokens, else
 *	by chunks [@k / NN_Q4_CHUNK][@n_tok][NN_Q4_CHUNK]
 * @xs: its block sums, [@n_tok][nn_q4_xs_floats(@k)]
 * @y: output [@n_tok][@n_rows]
 * @n_rows: rows; @k: row length; @n_tok: tokens
 * @avx2: use the AVX2 kernels (same bits as the portable ones)
 */
struct nn_q4_job {
	int type;
	const uint8_t *w;
	size_t row_bytes;
	const float *xp, *xs;
	float *y;
	size_t n_rows, k, n_tok;
	bool avx2;
};

/** nn_q4_xs_floats() - floats of one token's block sums: 8 per chunk */
size_t nn_q4_xs_floats(size_t k);

/**
 * nn_q4_prep_x() - one token's activations for the block-factored order
 * @type: QUANT_TYPE_Q4_0 or QUANT_TYPE_Q4_K
 * @x: F32 [@k]
 * @k: as nn_q4_type() takes
 * @xp: output: permuted and scaled to the order's vectors, chunk i (of
 *	NN_Q4_CHUNK floats) at @xp + i * @cs
 * @cs: chunk stride in floats (NN_Q4_CHUNK: the token's row whole)
 * @xs: [nn_q4_xs_floats(@k)] output: block sums H(v), v_l = ((x[32b + l]
 *	+ x[32b + 8 + l]) + x[32b + 16 + l]) + x[32b + 24 + l], 0 past the row
 */
void nn_q4_prep_x(int type, const float *x, size_t k, float *xp, size_t cs, float *xs);

/**
 * nn_q4_convert() - the chunk of row @w starting at element @c (a
 *	multiple of NN_Q4_CHUNK) of a row of @k, converted into @ch
 */
void nn_q4_convert(int type, const uint8_t *w, size_t c, size_t k, struct nn_q4_chunk *ch);

/**
 * nn_q4_tile_scalar() - one chunk of one (row, token) in the order, fmaf
 * @ch: the row's converted chunk
 * @xp: the token's nn_q4_prep_x() at the chunk
 * @xs: the token's block sums at the chunk (8)
 * @acc: the output's accumulators A [8] then B [8], updated
 */
void nn_q4_tile_scalar(const struct nn_q4_chunk *ch, const float *xp, const float *xs,
		       float *acc);

/** nn_q4_finish() - the output from its accumulators: H(A) - H(B) */
float nn_q4_finish(const float *acc);

/**
 * nn_q4_rows() - rows [@r0, @r1) of the matmul @j, every token
 * @sc: scratch for NN_Q4_PANEL converted chunks
 * @acc: scratch of NN_Q4_PANEL * @j->n_tok * 16 floats
 */
void nn_q4_rows(const struct nn_q4_job *j, size_t r0, size_t r1, struct nn_q4_chunk *sc,
		float *acc);

#if NN_HAVE_X86
#include <immintrin.h>

#define NN_AVX2 __attribute__((target("avx2,fma,f16c")))

/**
 * nn_hsum_avx2() - the sum of the 8 lanes of @v, in the one order every
 *	kernel uses ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)))
 */
static NN_AVX2 inline float nn_hsum_avx2(__m256 v)
{
	__m128 lo = _mm256_castps256_ps128(v);
	__m128 hi = _mm256_extractf128_ps(v, 1);

	lo = _mm_add_ps(lo, hi);
	lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
	lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
	return _mm_cvtss_f32(lo);
}

/**
 * nn_dec_rows_avx2() - one token times @nr weight rows, weights converted
 *	in registers: out[r] = dot(dequant(w[r]), x) for r < NN_DEC_ROWS
 * @type: weight type (rk1828/quant_blocks.h): F16, BF16, Q8_0, Q4_0,
 *	Q4_1, Q5_0, Q5_1, Q4_K, Q5_K or Q6_K
 * @w: NN_DEC_ROWS pointers to rows of quant_row_size(@type, @k) bytes, any
 *	alignment
 * @x: the token's activations, F32 [@k]
 * @k: row length; a multiple of 8 (F16, BF16) or of the block size
 * @out: [NN_DEC_ROWS] dot products
 *
 * Each weight is converted exactly to the value quant_dequantize_row()
 * gives (every scale times quant product is exact in float, so a fused
 * multiply-add there rounds once, as the scalar code does) and enters the
 * same fused multiply-adds as nn.c's dotn_avx2() and the prefill tiles:
 * one 8-lane accumulator per row, elements in order, then a horizontal
 * sum. So the result is the same bits as dequantizing first, for decode
 * and prefill alike (tests/unit/test_emu_nn.c test_decode_fused()).
 *
 * Return: false (nothing written) for a type or @k it does not take.
 */
bool nn_dec_rows_avx2(int type, const uint8_t *const *w, const float *x, size_t k,
		      float *out);
/**
 * nn_q4_dec_avx2() - one token times @nr rows (1..NN_DEC_ROWS) of Q4_0 /
 *	Q4_K in nn_q4.c's order, the quants converted in registers
 * @w: @nr row pointers; @xp, @xs: the token's nn_q4_prep_x(); @k: row
 *	length; @out: [@nr] outputs
 */
void nn_q4_dec_avx2(int type, const uint8_t *const *w, int nr, const float *xp,
		    const float *xs, size_t k, float *out);

/** nn_q4_convert_avx2() - nn_q4_convert() in AVX2, the same floats */
void nn_q4_convert_avx2(int type, const uint8_t *w, size_t c, size_t k,
			struct nn_q4_chunk *ch);

/**
 * nn_q4_tiles_avx2() - one chunk of @np converted rows times @n_tok
 *	tokens, nn_q4_tile_scalar() for each (row, token), same bits
 * @sc: [@np] converted chunks
 * @xp: token 0's nn_q4_prep_x() at the chunk, tokens at stride @ldx
 * @xs: token 0's block sums at the chunk, tokens at stride @ldxs
 * @acc: [@np][@n_tok][16] accumulators
 */
void nn_q4_tiles_avx2(const struct nn_q4_chunk *sc, size_t np, const float *xp, size_t ldx,
		      const float *xs, size_t ldxs, size_t n_tok, float *acc);
#endif

#endif
