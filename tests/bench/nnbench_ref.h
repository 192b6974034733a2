/* SPDX-License-Identifier: MIT */
/*
 * The reference side of tests/bench/nnbench.c: the same matrix products
 * computed by llama.cpp's CPU backend (ggml), for a side-by-side speed
 * ratio. Implemented in tests/bench/ggml/nnbench_ggml.c, which only
 * builds against a llama.cpp tree (tests/bench/nn-vs-llama links it when
 * tools/gen-ref-vectors has built one); nnbench.c declares these weak, so
 * without it every function is NULL and the reference is skipped.
 */
#ifndef RK_BENCH_NNBENCH_REF_H
#define RK_BENCH_NNBENCH_REF_H

#include <stddef.h>

struct ref_mm;

/**
 * ref_mm_create() - a CPU backend running @n_threads threads, worker i
 * pinned to CPU @cpus[i] (the caller's thread is worker 0)
 * Return: the backend, or NULL with a message on stderr.
 */
struct ref_mm *ref_mm_create(int n_threads, const int *cpus);

/** ref_mm_destroy() - free @r and every graph it built (NULL is fine) */
void ref_mm_destroy(struct ref_mm *r);

/** ref_mm_version() - "llama.cpp ggml <version>" (static string) */
const char *ref_mm_version(void);

/**
 * ref_mm_load() - replace @r's graph with n_mats products y_i = W_i x
 * @r: backend
 * @type: GGUF / ggml tensor type id (the same numbers as QUANT_TYPE_*)
 * @w: @n_mats weight matrices, @rows[i] rows of @row_bytes[i] bytes each
 *	(GGUF block layout), copied into the backend's weight buffer; the
 *	backend's repacking buffer (interleaved rows) is used where it
 *	supports the type, as llama.cpp does when it loads a model
 * @rows: rows (output features) of each matrix
 * @k: columns (input features), the same for all
 * @n_tok: tokens of x
 *
 * Return: 0, or -1 with a message on stderr (unsupported type, a row size
 * that disagrees with ggml's, out of memory).
 */
int ref_mm_load(struct ref_mm *r, int type, size_t n_mats, const void *const *w,
		const size_t *rows, const size_t *row_bytes, size_t k, size_t n_tok);

/** ref_mm_repacked() - whether the loaded weights are in the repack buffer */
int ref_mm_repacked(const struct ref_mm *r);

/**
 * ref_mm_run() - compute the loaded graph for activations @x (F32,
 * [@n_tok][@k]); when @y0 is not NULL, copy the first product's output
 * (F32, [@n_tok][@rows[0]]) there
 * Return: 0, or -1 when the backend fails.
 */
int ref_mm_run(struct ref_mm *r, const float *x, float *y0);

/**
 * ref_mm_idle() - put @r's worker threads to sleep (ggml's workers poll
 * for a while after a graph; the next ref_mm_run() wakes them), so they
 * take no CPU from the run that follows
 */
void ref_mm_idle(struct ref_mm *r);

#endif
