/* SPDX-License-Identifier: MIT */
/*
 * Emulator neural-network math (nn_*, the card's compute kernels):
 * weight-times-activation matmul for F32, F16, BF16, Q8_0, Q4_0, Q4_1,
 * Q5_0, Q5_1, Q4_K, Q5_K and Q6_K weights with F32 activations (the
 * card's "W4A16" path computed in float), RMSNorm,
 * RoPE, softmax, SiLU-gate and the small vector helpers attention needs.
 *
 * Two implementations: portable scalar C, and x86-64 AVX2 + FMA + F16C
 * compiled with __attribute__((target)) and chosen at run time with
 * __builtin_cpu_supports. Both dequantize weights to exactly the values
 * of quant_dequantize_row() (rk1828/quant_blocks.h) and accumulate in
 * float, so they agree with each other and with a scalar reference to
 * float rounding.
 */
#ifndef RK_EMU_NN_H
#define RK_EMU_NN_H

#include <stdbool.h>
#include <stddef.h>

struct tpool;

/**
 * enum nn_isa - kernel implementation
 * @NN_ISA_SCALAR: portable C
 * @NN_ISA_AVX2: AVX2 + FMA + F16C (x86-64 only)
 */
enum nn_isa {
	NN_ISA_SCALAR = 0,
	NN_ISA_AVX2 = 1,
};

/** nn_isa() - the implementation in use (the best supported by default) */
enum nn_isa nn_isa(void);

/** nn_isa_supported() - whether this CPU can run @isa */
bool nn_isa_supported(enum nn_isa isa);

/**
 * nn_set_isa() - select the implementation (tests compare the two)
 * Return: 0, or -1 when the CPU cannot run @isa (selection unchanged).
 * Not thread safe against running kernels: call while idle.
 */
int nn_set_isa(enum nn_isa isa);

/** nn_isa_name() - "scalar" or "avx2" */
const char *nn_isa_name(enum nn_isa isa);

/**
 * nn_matmul() - Y[t][r] = sum_k W[r][k] * X[t][k]
 * @pool: thread pool; rows are split across its workers (NULL: caller only)
 * @wtype: weight type, any QUANT_TYPE_* of rk1828/quant_blocks.h
 * @w: @n_rows rows of quant_row_size(@wtype, @k) bytes each, contiguous;
 *	F32 rows 4-byte aligned, F16 2-byte aligned, quantized any alignment
 * @x: activations, F32 [@n_tok][@k]
 * @y: output, F32 [@n_tok][@n_rows]; must not overlap @x or @w
 * @n_rows: output features (weight rows)
 * @k: input features (row length), a multiple of the block size
 * @n_tok: tokens; every weight row is dequantized once and reused for all
 *	(decode, 1 or 2 tokens, and prefill give the same bits per token)
 *
 * Return: 0; -1 on an unsupported type or @k, or when per-thread scratch
 * (max(4 * @k, 4096) floats, and 128 * @n_tok floats for 3 or more tokens,
 * per worker) cannot be allocated; @y is then undefined.
 */
int nn_matmul(struct tpool *pool, int wtype, const void *w, const float *x,
		float *y, size_t n_rows, size_t k, size_t n_tok);

/**
 * nn_rmsnorm() - out[i] = x[i] / sqrt(mean(x^2) + eps) * (w ? w[i] : 1)
 * @out: @n floats (may equal @x)
 * @x: @n floats
 * @w: weight, @n floats, or NULL
 * @n: length
 * @eps: epsilon added to the mean square (llama.cpp ggml_rms_norm)
 *
 * The sum of squares is accumulated in double.
 */
void nn_rmsnorm(float *out, const float *x, const float *w, size_t n, float eps);

/**
 * nn_rope() - rotate the first @rope_dim dims of each of @n_heads heads
 * @x: [@n_heads][@head_dim], rotated in place
 * @n_heads: heads
 * @head_dim: size of a head
 * @rope_dim: rotated leading dims (even, <= @head_dim); the rest is kept
 * @cs: [@rope_dim / 2] cos(theta_i), theta_i = pos * base^(-2i/rope_dim)
 * @sn: [@rope_dim / 2] sin(theta_i)
 * @neox: false: pairs (2i, 2i+1) (llama.cpp LLAMA_ROPE_TYPE_NORM);
 *	true: pairs (i, i + rope_dim/2) (LLAMA_ROPE_TYPE_NEOX)
 *
 * A pair (a, b) becomes (a cos - b sin, a sin + b cos).
 */
void nn_rope(float *x, size_t n_heads, size_t head_dim, size_t rope_dim,
	       const float *cs, const float *sn, bool neox);

/** nn_softmax() - in-place softmax of @n floats (max-subtracted, n >= 1) */
void nn_softmax(float *x, size_t n);

/** nn_silu_mul() - a[i] = silu(a[i]) * b[i], silu(v) = v / (1 + e^-v) */
void nn_silu_mul(float *a, const float *b, size_t n);

/** nn_dot() - sum a[i] * b[i] in float (dispatched) */
float nn_dot(const float *a, const float *b, size_t n);

/** nn_axpy() - y[i] += s * x[i] (dispatched) */
void nn_axpy(float *y, float s, const float *x, size_t n);

#endif
