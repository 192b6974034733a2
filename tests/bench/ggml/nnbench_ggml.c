// SPDX-License-Identifier: MIT
/*
 * The reference side of nnbench (see tests/bench/nnbench_ref.h): matrix products on
 * llama.cpp's CPU backend through the public ggml API, the way llama.cpp
 * runs a model's weights: one backend with a pinned thread pool, weights
 * in the CPU backend's extra (repacking) buffer type when it supports the
 * product, else in the plain CPU buffer, and one graph of all products
 * per run. Built only by tests/bench/nn-vs-llama, against the tree that
 * tools/gen-ref-vectors built (headers and static libraries); not part of
 * `make`, which has no llama.cpp.
 */
#include "nnbench_ref.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

struct ref_mm {
	ggml_backend_t be;
	ggml_threadpool_t tp;
	struct ggml_context *ctx_w, *ctx_g;
	ggml_backend_buffer_t buf_w, buf_g;
	struct ggml_cgraph *gf;
	struct ggml_tensor *x, *y0;
	int repacked;
};

static void ref_unload(struct ref_mm *r)
{
	if (r->buf_g)
		ggml_backend_buffer_free(r->buf_g);
	if (r->buf_w)
		ggml_backend_buffer_free(r->buf_w);
	if (r->ctx_g)
		ggml_free(r->ctx_g);
	if (r->ctx_w)
		ggml_free(r->ctx_w);
	r->buf_g = r->buf_w = NULL;
	r->ctx_g = r->ctx_w = NULL;
	r->gf = NULL;
	r->x = r->y0 = NULL;
	r->repacked = 0;
}

/* ggml's log: warnings and errors only (repacking logs every tensor). */
static void ref_log(enum ggml_log_level level, const char *text, void *user)
{
	if (level >= GGML_LOG_LEVEL_WARN && level != GGML_LOG_LEVEL_CONT)
		fputs(text, stderr);
}

struct ref_mm *ref_mm_create(int n_threads, const int *cpus)
{
	struct ggml_threadpool_params tpp;
	struct ref_mm *r = calloc(1, sizeof(*r));
	int i;

	if (!r)
		return NULL;
	ggml_log_set(ref_log, NULL);
	r->be = ggml_backend_cpu_init();
	if (!r->be) {
		fprintf(stderr, "nnbench: ggml_backend_cpu_init failed\n");
		free(r);
		return NULL;
	}
	tpp = ggml_threadpool_params_default(n_threads);
	for (i = 0; i < n_threads; i++)
		if (cpus[i] >= 0 && cpus[i] < GGML_MAX_N_THREADS)
			tpp.cpumask[cpus[i]] = true;
	tpp.strict_cpu = true;
	r->tp = ggml_threadpool_new(&tpp);
	if (!r->tp) {
		fprintf(stderr, "nnbench: ggml_threadpool_new(%d) failed\n", n_threads);
		ggml_backend_free(r->be);
		free(r);
		return NULL;
	}
	ggml_backend_cpu_set_n_threads(r->be, n_threads);
	ggml_backend_cpu_set_threadpool(r->be, r->tp);
	return r;
}

void ref_mm_destroy(struct ref_mm *r)
{
	if (!r)
		return;
	ref_unload(r);
	ggml_backend_free(r->be);
	ggml_threadpool_free(r->tp);
	free(r);
}

const char *ref_mm_version(void)
{
	static char v[96];

	snprintf(v, sizeof(v), "llama.cpp ggml %s (%s)", ggml_version(), ggml_commit());
	return v;
}

/*
 * The first extra buffer type of the CPU device that supports W x for
 * a weight shaped like @w (llama.cpp's weight_buft_supported test: a
 * dummy buffer of that type, a MUL_MAT op on it, supports_op), or NULL.
 */
static ggml_backend_buffer_type_t repack_buft(struct ref_mm *r, const struct ggml_tensor *w)
{
	ggml_backend_dev_t dev = ggml_backend_get_device(r->be);
	ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
	ggml_backend_dev_get_extra_bufts_t get =
		(ggml_backend_dev_get_extra_bufts_t)ggml_backend_reg_get_proc_address(
			reg, "ggml_backend_dev_get_extra_bufts");
	ggml_backend_buffer_type_t *b;

	if (!get)
		return NULL;
	for (b = get(dev); b && *b; b++) {
		struct ggml_init_params ip = { ggml_tensor_overhead() * 4, NULL, true };
		struct ggml_context *ctx = ggml_init(ip);
		ggml_backend_buffer_t dummy;
		struct ggml_tensor *t, *x;
		bool ok;

		if (!ctx)
			return NULL;
		t = ggml_new_tensor_2d(ctx, w->type, w->ne[0], w->ne[1]);
		x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, w->ne[0], 512);
		dummy = ggml_backend_buft_alloc_buffer(*b, 0);
		t->buffer = dummy;
		ok = dummy && ggml_backend_dev_supports_op(dev, ggml_mul_mat(ctx, t, x));
		if (dummy)
			ggml_backend_buffer_free(dummy);
		ggml_free(ctx);
		if (ok)
			return *b;
	}
	return NULL;
}

/* The weight tensors of ref_mm_load(), in ctx_w and its buffer. */
static int load_weights(struct ref_mm *r, int type, size_t n_mats, const void *const *w,
			const size_t *rows, const size_t *row_bytes, size_t k,
			struct ggml_tensor **wt)
{
	struct ggml_init_params ip = { ggml_tensor_overhead() * (n_mats + 1), NULL, true };
	ggml_backend_buffer_type_t buft;
	size_t i;

	if (type < 0 || type >= GGML_TYPE_COUNT || ggml_blck_size((enum ggml_type)type) <= 0 ||
	    k % (size_t)ggml_blck_size((enum ggml_type)type)) {
		fprintf(stderr, "nnbench: ggml has no type %d for rows of %zu\n", type, k);
		return -1;
	}
	r->ctx_w = ggml_init(ip);
	if (!r->ctx_w)
		return -1;
	for (i = 0; i < n_mats; i++) {
		wt[i] = ggml_new_tensor_2d(r->ctx_w, (enum ggml_type)type, (int64_t)k,
					   (int64_t)rows[i]);
		if (ggml_row_size((enum ggml_type)type, (int64_t)k) != row_bytes[i]) {
			fprintf(stderr, "nnbench: %s row of %zu: ggml says %zu bytes, we %zu\n",
				ggml_type_name((enum ggml_type)type), k,
				ggml_row_size((enum ggml_type)type, (int64_t)k), row_bytes[i]);
			return -1;
		}
	}
	buft = repack_buft(r, wt[0]);
	r->repacked = buft != NULL;
	if (!buft)
		buft = ggml_backend_get_default_buffer_type(r->be);
	r->buf_w = ggml_backend_alloc_ctx_tensors_from_buft(r->ctx_w, buft);
	if (!r->buf_w) {
		fprintf(stderr, "nnbench: cannot allocate the ggml weights\n");
		return -1;
	}
	ggml_backend_buffer_set_usage(r->buf_w, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
	for (i = 0; i < n_mats; i++)	/* whole tensors: the repacking buffer needs that */
		ggml_backend_tensor_set(wt[i], w[i], 0, rows[i] * row_bytes[i]);
	return 0;
}

int ref_mm_load(struct ref_mm *r, int type, size_t n_mats, const void *const *w,
		const size_t *rows, const size_t *row_bytes, size_t k, size_t n_tok)
{
	struct ggml_tensor **wt = calloc(n_mats, sizeof(*wt));
	struct ggml_init_params ip = {
		ggml_tensor_overhead() * (n_mats + 2) +
			ggml_graph_overhead_custom(n_mats * 2 + 2, false), NULL, true
	};
	size_t i;

	ref_unload(r);
	if (!wt || load_weights(r, type, n_mats, w, rows, row_bytes, k, wt))
		goto fail;
	r->ctx_g = ggml_init(ip);
	if (!r->ctx_g)
		goto fail;
	r->x = ggml_new_tensor_2d(r->ctx_g, GGML_TYPE_F32, (int64_t)k, (int64_t)n_tok);
	r->gf = ggml_new_graph_custom(r->ctx_g, n_mats * 2 + 2, false);
	for (i = 0; i < n_mats; i++) {
		struct ggml_tensor *y = ggml_mul_mat(r->ctx_g, wt[i], r->x);

		if (i == 0)
			r->y0 = y;
		ggml_build_forward_expand(r->gf, y);
	}
	r->buf_g = ggml_backend_alloc_ctx_tensors(r->ctx_g, r->be);
	if (!r->buf_g) {
		fprintf(stderr, "nnbench: cannot allocate the ggml activations\n");
		goto fail;
	}
	free(wt);
	return 0;
fail:
	free(wt);
	ref_unload(r);
	return -1;
}

int ref_mm_repacked(const struct ref_mm *r)
{
	return r->repacked;
}

int ref_mm_run(struct ref_mm *r, const float *x, float *y0)
{
	if (!r->gf)
		return -1;
	ggml_threadpool_resume(r->tp);
	ggml_backend_tensor_set(r->x, x, 0, ggml_nbytes(r->x));
	if (ggml_backend_graph_compute(r->be, r->gf) != GGML_STATUS_SUCCESS)
		return -1;
	if (y0)
		ggml_backend_tensor_get(r->y0, y0, 0, ggml_nbytes(r->y0));
	return 0;
}

void ref_mm_idle(struct ref_mm *r)
{
	ggml_threadpool_pause(r->tp);
}
