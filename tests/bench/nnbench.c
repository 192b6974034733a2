// SPDX-License-Identifier: MIT
/*
 * nnbench: the emulator's matrix kernels (emulator/nn.c nn_matmul()) per
 * weight type, side by side with llama.cpp's CPU backend on the same
 * weights, threads and CPUs, and against the host's read bandwidth
 * measured in the same run (tests/run-bench section 10; DESIGN.md's
 * "emulator math" aim, issue 9 part 7).
 *
 *   nnbench [-t THREADS] [-r DECODE_REPS] [-R PREFILL_REPS] [-p TOKENS]
 *           [--types f32,f16,...] [--no-ref]
 *
 * A layer is two products over realistic shapes: W1 4096 x 4096 (an
 * attention projection) and W2 12288 x 4096 (an FFN up projection), the
 * weights quantized by our writer (quant_quantize_row(), 64 distinct
 * seeded rows tiled over the matrix). Decode: one token through as many
 * copies of the layer as make >= 256 MiB (8 times this host's L3), so
 * the weights stream from memory as in a model's decode step; reported as
 * tokens/s of one layer, weight GB/s, and that as a fraction of the read
 * bandwidth (a pinned, threaded sum over a 512 MiB buffer, the best of
 * the samples taken before each type: the least disturbed by other load,
 * the bound). Prefill: a bucket of TOKENS (128)
 * through one layer, tokens/s.
 *
 * Threads: worker i of both our pool and ggml's is pinned to the i-th CPU
 * of the process's affinity mask (-t, default 0: all of them;
 * tests/bench/nn-vs-llama runs -t 1 unless told otherwise). Each
 * repetition runs both sides back to back, in alternating order, and the
 * ratio is ours / llama.cpp's speed in that repetition; the figures are
 * medians over repetitions, with the ratios' spread (min-max).
 *
 * The reference (nnbench_ref.h) is linked in only by tests/bench/
 * nn-vs-llama when a llama.cpp build exists; built by `make` alone (or
 * with --no-ref) nnbench prints our side and the bandwidth only. Before
 * timing, each type's first product is checked against the scalar
 * dequantize-then-F32 reference (error relative to sum |w x|, the bound of
 * tests/unit/test_emu_nn.c) and, when present, against llama.cpp's output
 * (which rounds activations to 8 bits, so only a coarse agreement).
 *
 * Output: "BENCH key value" lines (nn_* keys) and a table. Exit status 0,
 * 1 when a kernel fails or disagrees with the scalar reference.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nn.h"
#include "nnbench_ref.h"
#include "quant.h"
#include "rk1828/quant_blocks.h"
#include "rk1828/util.h"
#include "threadpool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* The reference is optional: NULL unless nnbench_ggml.o is linked in. */
#pragma weak ref_mm_create
#pragma weak ref_mm_destroy
#pragma weak ref_mm_version
#pragma weak ref_mm_load
#pragma weak ref_mm_repacked
#pragma weak ref_mm_run
#pragma weak ref_mm_idle

#define K_IN 4096
#define N_MATS 2
#define BASE_ROWS 64
#define MAX_REPS 64
#define MAX_COPIES 64
#define MAX_CPUS 256
#define BW_BYTES ((size_t)512 << 20)
#define STREAM_BYTES ((size_t)256 << 20)	/* 8 times a 32 MiB L3 */

static const size_t layer_rows[N_MATS] = { 4096, 12288 };

struct opts {
	int threads, reps, preps, n_tok, no_ref;
	int types[16], n_types;
};

struct bench {
	struct opts o;
	int cpus[MAX_CPUS];
	struct tpool *pool;
	struct ref_mm *ref;
	float *bw_buf;
	double bw_samples[64];
	int n_bw;
	float *x, *y, *yr;
	size_t stream_min;
	int failed;
};

static uint64_t rng = 1828;

static float frand(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (float)((rng >> 40) & 0xffffff) / (float)0x800000 - 1.0f;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* median(), lo(), hi() of n samples (sorted in place). */
static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---------------------------------------------------------------- threads */

static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* One index per worker: each pins itself to its CPU (workers persist). */
static void pin_fn(void *arg, size_t b, size_t e, int tid)
{
	const int *cpus = arg;

	pin_self(cpus[tid]);
}

/* The first @n CPUs of the affinity mask into @cpus; returns how many. */
static int pick_cpus(int n, int *cpus)
{
	cpu_set_t set;
	int c, got = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (c = 0; c < CPU_SETSIZE && got < MAX_CPUS && (n <= 0 || got < n); c++)
		if (CPU_ISSET(c, &set))
			cpus[got++] = c;
	return got;
}

/* -------------------------------------------------------------- bandwidth */

struct bw_job {
	const float *buf;
	size_t n;
	double sums[MAX_CPUS];
};

#if defined(__x86_64__)
static __attribute__((target("avx2"))) void bw_fn(void *arg, size_t b, size_t e, int tid)
{
	struct bw_job *j = arg;
	__m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
	__m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
	float out[8];
	size_t i;

	for (i = b; i < e; i += 32) {
		s0 = _mm256_add_ps(s0, _mm256_load_ps(j->buf + i));
		s1 = _mm256_add_ps(s1, _mm256_load_ps(j->buf + i + 8));
		s2 = _mm256_add_ps(s2, _mm256_load_ps(j->buf + i + 16));
		s3 = _mm256_add_ps(s3, _mm256_load_ps(j->buf + i + 24));
	}
	_mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
	j->sums[tid] = out[0] + out[7];
}
#else
static void bw_fn(void *arg, size_t b, size_t e, int tid)
{
	struct bw_job *j = arg;
	float s[8] = { 0 };
	size_t i;

	for (i = b; i < e; i += 8)
		for (int l = 0; l < 8; l++)
			s[l] += j->buf[i + l];
	j->sums[tid] = s[0] + s[7];
}
#endif

/* One read of the 512 MiB buffer by all workers; GB/s (1e9 bytes). */
static double bw_sample(struct bench *b)
{
	struct bw_job j = { .buf = b->bw_buf, .n = BW_BYTES / sizeof(float) };
	double t0 = util_now_ms(), dt;

	tp_parallel_for(b->pool, j.n, 4096, bw_fn, &j);
	dt = util_now_ms() - t0;
	return (double)BW_BYTES / (dt * 1e6);
}

static void bw_measure(struct bench *b, int n)
{
	int i;

	for (i = 0; i < n && b->n_bw < 64; i++)
		b->bw_samples[b->n_bw++] = bw_sample(b);
}

/* ---------------------------------------------------------------- weights */

/*
 * @copies layers of @type weights in one buffer: matrix m of copy c at
 * mats[c * N_MATS + m], rows tiled from BASE_ROWS quantized seeded rows
 * (row i scaled by 1 + i % 5, as tests/unit/test_emu_nn.c does).
 */
static uint8_t *make_weights(int type, size_t copies, const void **mats)
{
	size_t rb = quant_row_size(type, K_IN), layer = 0, m, c, r, off = 0;
	uint8_t *base = malloc(BASE_ROWS * rb), *all;
	float row[K_IN];

	for (m = 0; m < N_MATS; m++)
		layer += layer_rows[m] * rb;
	all = aligned_alloc(64, (copies * layer + 63) / 64 * 64);
	if (!base || !all) {
		free(base);
		free(all);
		return NULL;
	}
	for (r = 0; r < BASE_ROWS; r++) {
		for (m = 0; m < K_IN; m++)
			row[m] = frand() * (1.0f + (float)(r % 5));
		quant_quantize_row(type, row, base + r * rb, K_IN);
	}
	for (c = 0; c < copies; c++) {
		for (m = 0; m < N_MATS; m++) {
			mats[c * N_MATS + m] = all + off;
			for (r = 0; r < layer_rows[m]; r++, off += rb)
				memcpy(all + off, base + (r % BASE_ROWS) * rb, rb);
		}
	}
	free(base);
	return all;
}

/* ---------------------------------------------------------------- checks */

/*
 * Worst |y - ref| / sum |w x| over the first @n_chk rows and tokens of
 * matrix @w (rows of @rb bytes), y from nn_matmul; ref in double from
 * quant_dequantize_row() (the scalar reference).
 */
static double check_scalar(int type, const uint8_t *w, size_t rb, const float *x,
			   const float *y, size_t n_rows, size_t n_tok, size_t n_chk)
{
	float *row = malloc(K_IN * sizeof(float));
	double worst = 0;
	size_t r, t, i;

	if (!row)
		return INFINITY;
	for (r = 0; r < n_chk && r < n_rows; r++) {
		quant_dequantize_row(type, w + r * rb, row, K_IN);
		for (t = 0; t < n_tok; t++) {
			double s = 0, m = 0, e;

			for (i = 0; i < K_IN; i++) {
				s += (double)row[i] * x[t * K_IN + i];
				m += fabs((double)row[i] * x[t * K_IN + i]);
			}
			e = fabs(y[t * n_rows + r] - s) / (m + 1e-30);
			if (!(e <= worst))
				worst = isnan(e) ? INFINITY : e;
		}
	}
	free(row);
	return worst;
}

/* max |a - b| / max |b| over @n floats. */
static double rel_diff(const float *a, const float *b, size_t n)
{
	double d = 0, m = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		d = fmax(d, fabs((double)a[i] - b[i]));
		m = fmax(m, fabs((double)b[i]));
	}
	return m > 0 ? d / m : d;
}

/* ------------------------------------------------------------------- runs */

/* Our side of one run: every matrix of @mats times @n_tok tokens; ms. */
static double run_ours(struct bench *b, int type, const void **mats, size_t n_mats,
		       size_t n_tok)
{
	double t0 = util_now_ms();
	size_t i;

	for (i = 0; i < n_mats; i++)
		if (nn_matmul(b->pool, type, mats[i], b->x, b->y, layer_rows[i % N_MATS], K_IN,
			      n_tok))
			b->failed = 1;
	return util_now_ms() - t0;
}

static double run_ref(struct bench *b)
{
	double t0 = util_now_ms(), dt;

	if (ref_mm_run(b->ref, b->x, NULL))
		b->failed = 1;
	dt = util_now_ms() - t0;
	ref_mm_idle(b->ref);
	return dt;
}

/* Per-repetition times of both sides, alternating which goes first. */
struct sample {
	double ours[MAX_REPS], ref[MAX_REPS];
	int n;
};

static void run_pair(struct bench *b, int type, const void **mats, size_t n_mats,
		     size_t n_tok, int reps, struct sample *s)
{
	int i;

	run_ours(b, type, mats, n_mats, n_tok);	/* warm-up: page tables, caches */
	if (b->ref) {
		run_ref(b);
	}
	for (i = 0; i < reps; i++) {
		if (b->ref && i % 2) {
			s->ref[i] = run_ref(b);
			s->ours[i] = run_ours(b, type, mats, n_mats, n_tok);
		} else {
			s->ours[i] = run_ours(b, type, mats, n_mats, n_tok);
			s->ref[i] = b->ref ? run_ref(b) : 0;
		}
	}
	s->n = reps;
}

/* Tokens/s of @units (tokens x layers) per run: median; ratio median and spread. */
struct figures {
	double ours, ref, ratio, ratio_lo, ratio_hi;
};

static struct figures summarize(const struct sample *s, double units)
{
	double a[MAX_REPS], r[MAX_REPS], q[MAX_REPS];
	struct figures f = { 0 };
	int i;

	for (i = 0; i < s->n; i++) {
		a[i] = units / (s->ours[i] / 1e3);
		r[i] = s->ref[i] > 0 ? units / (s->ref[i] / 1e3) : 0;
		q[i] = s->ours[i] > 0 ? s->ref[i] / s->ours[i] : 0;
	}
	f.ours = median(a, s->n);
	f.ref = median(r, s->n);
	f.ratio = median(q, s->n);
	f.ratio_lo = q[0];
	f.ratio_hi = q[s->n - 1];
	return f;
}

struct type_result {
	int type;
	struct figures dec, pre;
	double gbs, gbs_ref, err, ref_diff;
	int repacked;
	size_t copies;
};

/* Decode and prefill of one type; fills @res. Returns 0 or -1. */
static int bench_type(struct bench *b, int type, struct type_result *res)
{
	size_t rb = quant_row_size(type, K_IN), layer = 0, copies, m, n_mats;
	size_t rows_all[MAX_COPIES * N_MATS], rbs[MAX_COPIES * N_MATS];
	const void *mats[MAX_COPIES * N_MATS];
	struct sample s = { 0 };
	uint8_t *all;

	memset(res, 0, sizeof(*res));
	res->type = type;
	for (m = 0; m < N_MATS; m++)
		layer += layer_rows[m] * rb;
	copies = (b->stream_min + layer - 1) / layer;
	if (copies > MAX_COPIES)
		copies = MAX_COPIES;
	n_mats = copies * N_MATS;
	all = make_weights(type, copies, mats);
	if (!all)
		return -1;
	for (m = 0; m < n_mats; m++) {
		rows_all[m] = layer_rows[m % N_MATS];
		rbs[m] = rb;
	}
	res->copies = copies;
	/* Numerics first: prefill of the first matrix against the scalar reference. */
	if (nn_matmul(b->pool, type, mats[0], b->x, b->y, layer_rows[0], K_IN, b->o.n_tok))
		b->failed = 1;
	res->err = check_scalar(type, mats[0], rb, b->x, b->y, layer_rows[0], b->o.n_tok, 8);
	if (!(res->err < 1e-5))
		b->failed = 1;
	bw_measure(b, 2);
	/* Decode: one token through every copy. */
	if (b->ref && ref_mm_load(b->ref, type, n_mats, mats, rows_all, rbs, K_IN, 1))
		goto fail;
	run_pair(b, type, mats, n_mats, 1, b->o.reps, &s);
	res->dec = summarize(&s, (double)copies);
	res->gbs = res->dec.ours * (double)layer / 1e9;
	res->gbs_ref = res->dec.ref * (double)layer / 1e9;
	/* Prefill: a bucket through one layer. */
	if (b->ref) {
		res->repacked = ref_mm_repacked(b->ref);
		if (ref_mm_load(b->ref, type, N_MATS, mats, rows_all, rbs, K_IN, b->o.n_tok) ||
		    ref_mm_run(b->ref, b->x, b->yr))
			goto fail;
		nn_matmul(b->pool, type, mats[0], b->x, b->y, layer_rows[0], K_IN, b->o.n_tok);
		res->ref_diff = rel_diff(b->y, b->yr, layer_rows[0] * b->o.n_tok);
	}
	memset(&s, 0, sizeof(s));
	run_pair(b, type, mats, N_MATS, b->o.n_tok, b->o.preps, &s);
	res->pre = summarize(&s, (double)b->o.n_tok);
	free(all);
	return 0;
fail:
	free(all);
	b->failed = 1;
	return -1;
}

/* ---------------------------------------------------------------- output */

static void print_result(const struct bench *b, const struct type_result *r, double bw)
{
	const char *n = quant_type_name(r->type);

	printf("BENCH nn_%s_decode_tok_s %.2f\n", n, r->dec.ours);
	printf("BENCH nn_%s_decode_gb_s %.2f\n", n, r->gbs);
	printf("BENCH nn_%s_decode_bw_frac %.3f\n", n, r->gbs / bw);
	printf("BENCH nn_%s_prefill_tok_s %.1f\n", n, r->pre.ours);
	printf("BENCH nn_%s_err %.2g\n", n, r->err);
	if (!b->ref)
		return;
	printf("BENCH nn_%s_decode_ref_tok_s %.2f\n", n, r->dec.ref);
	printf("BENCH nn_%s_decode_ref_bw_frac %.3f\n", n, r->gbs_ref / bw);
	printf("BENCH nn_%s_decode_ratio %.2f\n", n, r->dec.ratio);
	printf("BENCH nn_%s_decode_ratio_spread %.2f-%.2f\n", n, r->dec.ratio_lo,
	       r->dec.ratio_hi);
	printf("BENCH nn_%s_prefill_ref_tok_s %.1f\n", n, r->pre.ref);
	printf("BENCH nn_%s_prefill_ratio %.2f\n", n, r->pre.ratio);
	printf("BENCH nn_%s_prefill_ratio_spread %.2f-%.2f\n", n, r->pre.ratio_lo,
	       r->pre.ratio_hi);
	printf("BENCH nn_%s_ref_repacked %d\n", n, r->repacked);
	printf("BENCH nn_%s_ref_diff %.2g\n", n, r->ref_diff);
}

static void print_table(const struct bench *b, const struct type_result *res, int n,
			double bw)
{
	int i;

	printf("# emulator math (nn_matmul, %s, %d thread(s) pinned to CPUs",
	       nn_isa_name(nn_isa()), b->o.threads);
	for (i = 0; i < b->o.threads; i++)
		printf("%s%d", i ? "," : " ", b->cpus[i]);
	printf(") vs %s\n", b->ref ? ref_mm_version() : "no llama.cpp (skipped)");
	printf("# layer = 4096x4096 + 12288x4096; decode: 1 token, weights streamed (>= %zu MiB);"
	       " prefill: %d tokens\n", b->stream_min >> 20, b->o.n_tok);
	printf("# read bandwidth %.2f GB/s (best of %d samples, median %.2f); medians of %d decode,"
	       " %d prefill runs; ratio = ours / llama.cpp [min-max]\n", bw, b->n_bw,
	       median((double *)b->bw_samples, b->n_bw), b->o.reps, b->o.preps);
	printf("%-5s %9s %9s %14s %6s %6s %9s %9s %14s %8s\n", "type", "dec tok/s", "llama",
	       "ratio", "bw", "llama", "pre tok/s", "llama", "ratio", "err");
	for (i = 0; i < n; i++) {
		const struct type_result *r = &res[i];
		char dr[32] = "-", pr[32] = "-", dl[16] = "-", pl[16] = "-", lb[16] = "-";

		if (b->ref) {
			snprintf(dr, sizeof(dr), "%.2f [%.2f-%.2f]", r->dec.ratio, r->dec.ratio_lo,
				 r->dec.ratio_hi);
			snprintf(pr, sizeof(pr), "%.2f [%.2f-%.2f]", r->pre.ratio, r->pre.ratio_lo,
				 r->pre.ratio_hi);
			snprintf(dl, sizeof(dl), "%.1f", r->dec.ref);
			snprintf(pl, sizeof(pl), "%.0f%s", r->pre.ref, r->repacked ? "r" : "");
			snprintf(lb, sizeof(lb), "%.0f%%", 100 * r->gbs_ref / bw);
		}
		printf("%-5s %9.1f %9s %14s %5.0f%% %6s %9.0f %9s %14s %8.1g\n",
		       quant_type_name(r->type), r->dec.ours, dl, dr, 100 * r->gbs / bw, lb,
		       r->pre.ours, pl, pr, r->err);
	}
	if (b->ref)
		printf("# r: llama.cpp ran that type from its repacking buffer (interleaved rows)\n");
}

/* ---------------------------------------------------------------- options */

static int parse_types(const char *s, struct opts *o)
{
	static const int all[] = {
		QUANT_TYPE_F32, QUANT_TYPE_F16, QUANT_TYPE_BF16, QUANT_TYPE_Q8_0,
		QUANT_TYPE_Q4_0, QUANT_TYPE_Q4_1, QUANT_TYPE_Q5_0, QUANT_TYPE_Q5_1,
		QUANT_TYPE_Q4_K, QUANT_TYPE_Q5_K, QUANT_TYPE_Q6_K,
	};
	char buf[256], *tok, *save;
	size_t i;

	snprintf(buf, sizeof(buf), "%s", s);
	o->n_types = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			if (!strcasecmp(tok, quant_type_name(all[i])))
				break;
		if (i == sizeof(all) / sizeof(all[0]) || o->n_types == 16) {
			fprintf(stderr, "nnbench: unknown weight type '%s'\n", tok);
			return -1;
		}
		o->types[o->n_types++] = all[i];
	}
	return o->n_types ? 0 : -1;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int i;

	*o = (struct opts){ .threads = 0, .reps = 9, .preps = 3, .n_tok = 128 };
	if (parse_types("f32,f16,bf16,q8_0,q4_0,q4_1,q5_0,q5_1,q4_k,q5_k,q6_k", o))
		return -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--no-ref")) {
			o->no_ref = 1;
			continue;
		}
		if (!v)
			return -1;
		i++;
		if (!strcmp(a, "-t"))
			o->threads = atoi(v);
		else if (!strcmp(a, "-r"))
			o->reps = atoi(v);
		else if (!strcmp(a, "-R"))
			o->preps = atoi(v);
		else if (!strcmp(a, "-p"))
			o->n_tok = atoi(v);
		else if (!strcmp(a, "--types")) {
			if (parse_types(v, o))
				return -1;
		} else {
			return -1;
		}
	}
	if (o->threads < 0 || o->reps < 1 || o->reps > MAX_REPS || o->preps < 1 ||
	    o->preps > MAX_REPS || o->n_tok < 1 || o->n_tok > 4096)
		return -1;
	return 0;
}

static int setup(struct bench *b)
{
	size_t i, nx = (size_t)b->o.n_tok * K_IN;

	b->o.threads = pick_cpus(b->o.threads, b->cpus);
	if (b->o.threads < 1)
		return -1;
	pin_self(b->cpus[0]);
	b->pool = tp_create(b->o.threads);
	if (!b->pool)
		return -1;
	tp_parallel_for(b->pool, (size_t)b->o.threads, 1, pin_fn, b->cpus);
	if (ref_mm_create && !b->o.no_ref) {
		b->ref = ref_mm_create(b->o.threads, b->cpus);
		if (!b->ref)
			return -1;
	}
	b->stream_min = STREAM_BYTES;
	b->bw_buf = aligned_alloc(64, BW_BYTES);
	b->x = malloc(nx * sizeof(float));
	b->y = malloc((size_t)b->o.n_tok * 12288 * sizeof(float));
	b->yr = malloc((size_t)b->o.n_tok * 12288 * sizeof(float));
	if (!b->bw_buf || !b->x || !b->y || !b->yr)
		return -1;
	for (i = 0; i < BW_BYTES / sizeof(float); i++)
		b->bw_buf[i] = (float)(i & 7);
	for (i = 0; i < nx; i++)
		b->x[i] = frand();
	return 0;
}

int main(int argc, char **argv)
{
	static struct bench b;
	struct type_result res[16];
	double t0 = util_now_ms(), bw, bw_med;
	int i, n = 0;

	if (parse_opts(argc, argv, &b.o)) {
		fprintf(stderr, "usage: nnbench [-t THREADS] [-r DECODE_REPS] [-R PREFILL_REPS] "
			"[-p TOKENS] [--types f32,f16,...] [--no-ref]\n");
		return 2;
	}
	if (setup(&b)) {
		fprintf(stderr, "nnbench: setup failed: %s\n", strerror(errno));
		return 1;
	}
	bw_measure(&b, 3);
	for (i = 0; i < b.o.n_types; i++) {
		if (bench_type(&b, b.o.types[i], &res[n]) == 0)
			n++;
		else
			fprintf(stderr, "nnbench: %s failed\n", quant_type_name(b.o.types[i]));
		fflush(stdout);
	}
	/* The bound is the best sample (least disturbed by other load). */
	bw_med = median(b.bw_samples, b.n_bw);
	bw = b.bw_samples[b.n_bw - 1];
	printf("BENCH nn_threads %d\n", b.o.threads);
	printf("BENCH nn_read_gb_s %.2f\n", bw);
	printf("BENCH nn_read_gb_s_median %.2f\n", bw_med);
	printf("BENCH nn_read_gb_s_spread %.2f-%.2f\n", b.bw_samples[0], b.bw_samples[b.n_bw - 1]);
	printf("BENCH nn_ref %d\n", b.ref != NULL);
	for (i = 0; i < n; i++)
		print_result(&b, &res[i], bw);
	print_table(&b, res, n, bw);
	printf("# nnbench: %.0f s\n", (util_now_ms() - t0) / 1e3);
	if (b.ref)
		ref_mm_destroy(b.ref);
	tp_destroy(b.pool);
	return b.failed ? 1 : 0;
}
