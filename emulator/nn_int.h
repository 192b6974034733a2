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
#endif

#endif
