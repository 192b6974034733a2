// SPDX-License-Identifier: MIT
/*
 * kv_bench: the K/V cache types side by side for `make bench` (issue 21).
 *
 * 1. Emulated cards (host, the real pipeline over the mock librk1828:
 *    2 cards, every EXEC through the card emulator's kernels): per type,
 *    a PROMPT-token prefill (bucket 64; TTFT, prefill tokens/s) and GEN
 *    decode steps (tokens/s) of MODEL, wall clock of the emulation (the
 *    best of 3 rounds, each round every type in turn: the host is
 *    shared), and the K/V bytes of one session at the context used; the
 *    same runs' TTFT and decode in process CPU time too (the kernels'
 *    cost, which other load on the host does not inflate).
 * 2. Timing-only cards (the RK1828 profile's cost model, the function the
 *    emulator's --timing-only mode charges; planner prediction, PCIe): a
 *    SHAPE model on 2 cards at ctx 8192, TTFT of 4096 tokens and decode
 *    tokens/s after them, and the K/V bytes of one session.
 * 3. Timing-only cards run (host, the real pipeline over the mock
 *    librk1828 with RK1828-sized sparse cards in timing-only mode on the
 *    profile and its modelled clock, COPY jobs over PCIe on their own
 *    queue, as rk1828-emu --timing-only runs them): the SHAPE model on 2
 *    cards at ctx 8192, a 4096-token prefill (TTFT) and GEN decode steps
 *    after it, in modelled card time (the same in every run).
 * Every figure also as a ratio to F32 K/V.
 *
 *   kv_bench MODEL SHAPE_MODEL [PROMPT [GEN]]
 *
 * Prints a table and "BENCH kv_<type>_<figure> value" lines.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gguf.h"
#include "model.h"
#include "pipeline.h"
#include "planner.h"
#include "predict.h"
#include "profile.h"
#include "quant.h"
#include "rk1828/util.h"

#include "mock_rk.h"

#define N_TYPES	4
#define N_CTX	1024

static const int types[N_TYPES] = { QUANT_TYPE_F32, QUANT_TYPE_F16, QUANT_TYPE_Q8_0,
				    QUANT_TYPE_Q4_0 };

/*
 * One type's figures (NAN: not measured); the emulated cards' also in
 * process CPU time (@ttft_cpu_ms, @tg_cpu_tok_s: the kernels' cost, which
 * other load on a shared host does not change as it changes wall clock).
 */
struct fig {
	double kv_bytes, ttft_ms, pp_tok_s, tg_tok_s;
	double ttft_cpu_ms, tg_cpu_tok_s;
};

/* K/V bytes of one session at @n_ctx on all cards. */
static double session_kv(const struct llm_model *m, uint32_t n_ctx, int type)
{
	double b = 0;
	uint32_t l;

	for (l = 0; l < m->n_layers; l++)
		if (m->layers[l].kind != LLM_LAYER_DELTANET)
			b += (double)llm_kv_bytes(m, n_ctx, type);
	return b;
}

static double now_s(void)
{
	return (double)util_now_ns() / 1e9;
}

/* CPU seconds of the process (every thread: the emulator's kernels). */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Part 1: the emulated cards. Return: 0, or -1 with @err. */
static int emulated(const struct llm_model *m, struct rk_card *cards, int type, int n_prompt,
		    int n_gen, struct fig *f, char *err, size_t errlen)
{
	uint64_t fr[MOCK_CARDS] = { MOCK_CARD_MEM - 4096, MOCK_CARD_MEM - 4096 };
	struct plan_sizes sz = { .n_ctx = N_CTX, .bucket = 64, .n_seq = 1, .kv_type = type };
	struct pipe_opts po = { .n_ctx = N_CTX, .bucket = 64, .n_seq = 1, .timeout_ms = 600000,
				.kv_type = type };
	int32_t *toks = calloc((size_t)n_prompt, sizeof(*toks)), cur;
	float *lg = calloc(m->n_vocab, sizeof(float));
	struct pipeline *p = NULL;
	struct plan plan;
	double t0, t1, c0, c1;
	int i, ret = -1;

	if (!toks || !lg)
		goto out;
	for (i = 0; i < n_prompt; i++)
		toks[i] = (int32_t)((i * 7919 + 13) % (int)m->n_vocab);
	mock_rk_reset();
	if (plan_model(m, &sz, 2, fr, NULL, &plan, err, errlen) ||
	    pipe_create(&p, m, cards, &plan, &po, err, errlen))
		goto out;
	t0 = now_s();
	c0 = cpu_s();
	if (pipe_forward(p, toks, (uint32_t)n_prompt, 0, lg, err, errlen))
		goto out;
	t1 = now_s();
	c1 = cpu_s();
	f->ttft_ms = (t1 - t0) * 1e3;
	f->ttft_cpu_ms = (c1 - c0) * 1e3;
	f->pp_tok_s = n_prompt / (t1 - t0);
	for (i = 0; i < n_gen; i++) {
		cur = (int32_t)util_argmax(lg, m->n_vocab);
		if (pipe_forward(p, &cur, 1, (uint32_t)(n_prompt + i), lg, err, errlen))
			goto out;
	}
	f->tg_tok_s = n_gen / (now_s() - t1);
	f->tg_cpu_tok_s = n_gen / (cpu_s() - c1);
	f->kv_bytes = session_kv(m, N_CTX, type);
	ret = 0;
out:
	pipe_destroy(p);
	free(toks);
	free(lg);
	return ret;
}

/*
 * Part 2: the RK1828 profile's cost model for @m on 2 cards at ctx 8192,
 * on the F32 K/V plan for every type (the same blocks on each card: a
 * plan of a smaller type would move blocks, and its figures with them).
 */
static int timing_only(const struct llm_model *m, const struct card_profile *prof, int type,
		       struct fig *f, char *err, size_t errlen)
{
	struct plan_fit_opts fo = { .n_ctx = 8192, .n_seq = 1, .strict_seq = true };
	uint64_t fr[2] = { prof->mem_usable_bytes, prof->mem_usable_bytes };
	struct plan_sizes sz;
	struct plan plan;
	struct predict_opts po;
	struct prediction pr;

	if (plan_fit(m, &fo, 2, fr, NULL, &sz, &plan, NULL, 0, err, errlen))
		return -1;
	sz.kv_type = type;
	po = (struct predict_opts){ .prof = prof, .link = COST_LINK_PCIE, .bucket = sz.bucket,
				    .n_ctx = sz.n_ctx, .sizes = &sz };
	if (predict_run(m, &plan, &po, &pr, err, errlen))
		return -1;
	f->ttft_ms = pr.ttft_ms[1];	/* 4096 tokens */
	f->pp_tok_s = pr.prefill_tok_s;
	f->tg_tok_s = pr.decode_tok_s;
	f->kv_bytes = session_kv(m, sz.n_ctx, type);
	return 0;
}

/* Modelled seconds (rk_now_ns() under mock_rk_clock()). */
static double clock_s(void)
{
	return (double)rk_now_ns() / 1e9;
}

/*
 * Part 3: @m on 2 timing-only mock cards (set up by the caller) at ctx
 * 8192, the plan of F32 K/V for every type as in part 2: a 4096-token
 * prefill and @n_gen decode steps on the modelled clock.
 */
static int timing_cards(const struct llm_model *m, struct rk_card *cards, int type, int n_gen,
			struct fig *f, char *err, size_t errlen)
{
	struct plan_fit_opts fo = { .n_ctx = 8192, .n_seq = 1, .strict_seq = true };
	uint64_t fr[2] = { cards[0].mem_free, cards[1].mem_free };
	int32_t *toks = calloc(4096, sizeof(*toks)), cur = 1;
	float *lg = calloc(m->n_vocab, sizeof(float));
	struct pipeline *p = NULL;
	struct pipe_opts po;
	struct plan_sizes sz;
	struct plan plan;
	double t0, t1;
	int i, ret = -1;

	mock_rk_reset();
	if (!toks || !lg || plan_fit(m, &fo, 2, fr, NULL, &sz, &plan, NULL, 0, err, errlen))
		goto out;
	for (i = 0; i < 4096; i++)
		toks[i] = (int32_t)((i * 7919 + 13) % (int)m->n_vocab);
	po = (struct pipe_opts){ .n_ctx = sz.n_ctx, .bucket = sz.bucket, .n_seq = 1,
				 .timeout_ms = 600000, .kv_type = type };
	if (pipe_create(&p, m, cards, &plan, &po, err, errlen))
		goto out;
	t0 = clock_s();
	if (pipe_forward(p, toks, 4096, 0, lg, err, errlen))
		goto out;
	t1 = clock_s();
	f->ttft_ms = (t1 - t0) * 1e3;
	f->pp_tok_s = 4096 / (t1 - t0);
	for (i = 0; i < n_gen; i++)	/* timing-only logits: any token does */
		if (pipe_forward(p, &cur, 1, (uint32_t)(4096 + i), lg, err, errlen))
			goto out;
	f->tg_tok_s = n_gen / (clock_s() - t1);
	f->kv_bytes = session_kv(m, sz.n_ctx, type);
	ret = 0;
out:
	pipe_destroy(p);
	free(toks);
	free(lg);
	return ret;
}

/* Part 3 for every type into @f: the mock's cards made RK1828-sized first. */
static int timing_cards_all(const struct llm_model *m, const struct card_profile *prof,
			    int n_gen, struct fig *f)
{
	struct rk_card cards[MOCK_CARDS];
	struct mock_cost cost = { 0 };
	char err[512];
	int t;

	mock_rk_free();
	mock_rk_card_mem(prof->mem_usable_bytes);
	mock_rk_cards(cards);
	mock_rk_timing(prof, true);
	mock_rk_clock(&cost);
	mock_rk_clock_link(COST_LINK_PCIE);
	for (t = 0; t < N_TYPES; t++) {
		if (timing_cards(m, cards, types[t], n_gen, &f[t], err, sizeof(err))) {
			fprintf(stderr, "kv_bench: timing-only cards, %s: %s\n",
				quant_type_name(types[t]), err);
			return -1;
		}
	}
	mock_rk_clock(NULL);
	mock_rk_timing(NULL, false);
	return 0;
}

static void print_part(const char *what, const char *key, const struct fig *f)
{
	int t;

	printf("%s\n", what);
	printf("| K/V  | KV bytes a session | ratio | TTFT ms  | ratio | prefill tok/s | ratio | decode tok/s | ratio |\n");
	printf("| ---- | -----------------: | ----: | -------: | ----: | ------------: | ----: | -----------: | ----: |\n");
	for (t = 0; t < N_TYPES; t++) {
		const char *n = quant_type_name(types[t]);

		printf("| %-4s | %18.0f | %5.3f | %8.1f | %5.3f | %13.2f | %5.3f | %12.2f | %5.3f |\n", n,
		       f[t].kv_bytes, f[t].kv_bytes / f[0].kv_bytes, f[t].ttft_ms,
		       f[t].ttft_ms / f[0].ttft_ms, f[t].pp_tok_s, f[t].pp_tok_s / f[0].pp_tok_s,
		       f[t].tg_tok_s, f[t].tg_tok_s / f[0].tg_tok_s);
		printf("BENCH kv_%s_%s_kv_bytes %.0f\n", key, n, f[t].kv_bytes);
		printf("BENCH kv_%s_%s_ttft_ratio %.4f\n", key, n, f[t].ttft_ms / f[0].ttft_ms);
		printf("BENCH kv_%s_%s_decode_tok_s %.3f\n", key, n, f[t].tg_tok_s);
		printf("BENCH kv_%s_%s_decode_ratio %.4f\n", key, n, f[t].tg_tok_s / f[0].tg_tok_s);
	}
}

/* The emulated cards' figures in CPU time: ratios to F32 only. */
static void print_cpu(const struct fig *f)
{
	int t;

	printf("# 12. the same emulated runs in process CPU time (the kernels' cost; best of 3)\n");
	printf("| K/V  | TTFT CPU ms | ratio | decode tok/CPU-s | ratio |\n");
	printf("| ---- | ----------: | ----: | ---------------: | ----: |\n");
	for (t = 0; t < N_TYPES; t++) {
		const char *n = quant_type_name(types[t]);

		printf("| %-4s | %11.1f | %5.3f | %16.2f | %5.3f |\n", n, f[t].ttft_cpu_ms,
		       f[t].ttft_cpu_ms / f[0].ttft_cpu_ms, f[t].tg_cpu_tok_s,
		       f[t].tg_cpu_tok_s / f[0].tg_cpu_tok_s);
		printf("BENCH kv_emucpu_%s_ttft_ratio %.4f\n", n, f[t].ttft_cpu_ms / f[0].ttft_cpu_ms);
		printf("BENCH kv_emucpu_%s_decode_ratio %.4f\n", n,
		       f[t].tg_cpu_tok_s / f[0].tg_cpu_tok_s);
	}
}

/* Open @path as a model into @gf / @m; 0 or -1 (printed). */
static int open_model(const char *path, struct gguf_file **gf, struct llm_model *m)
{
	char err[512];

	*gf = gguf_open(path, err, sizeof(err));
	if (!*gf || llm_model_load(m, *gf, err, sizeof(err))) {
		fprintf(stderr, "kv_bench: %s\n", err);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct fig emu[N_TYPES], tim[N_TYPES];
	struct rk_card cards[MOCK_CARDS];
	struct gguf_file *gf = NULL, *gs = NULL;
	struct llm_model m, ms;
	struct card_profile prof;
	int n_prompt = argc > 3 ? atoi(argv[3]) : 128, n_gen = argc > 4 ? atoi(argv[4]) : 32;
	char err[512];
	int t, r, rc = 1;

	if (argc < 3 || n_prompt < 1 || n_gen < 1 || n_prompt + n_gen > N_CTX) {
		fprintf(stderr, "usage: kv_bench MODEL SHAPE_MODEL [PROMPT [GEN]] (PROMPT + GEN <= %d)\n",
			N_CTX);
		return 2;
	}
	memset(&m, 0, sizeof(m));
	memset(&ms, 0, sizeof(ms));
	if (open_model(argv[1], &gf, &m) || open_model(argv[2], &gs, &ms))
		goto out;
	if (card_profile_builtin(&prof, err, sizeof(err))) {
		fprintf(stderr, "kv_bench: profile: %s\n", err);
		goto out;
	}
	mock_rk_cards(cards);
	for (t = 0; t < N_TYPES; t++) {
		emu[t] = (struct fig){ 0, INFINITY, 0, 0, INFINITY, 0 };
		if (timing_only(&ms, &prof, types[t], &tim[t], err, sizeof(err))) {
			fprintf(stderr, "kv_bench: %s: %s\n", quant_type_name(types[t]), err);
			goto out;
		}
	}
	for (r = 0; r < 3; r++) {
		for (t = 0; t < N_TYPES; t++) {
			struct fig f;

			if (emulated(&m, cards, types[t], n_prompt, n_gen, &f, err, sizeof(err))) {
				fprintf(stderr, "kv_bench: %s: %s\n", quant_type_name(types[t]), err);
				goto out;
			}
			emu[t].kv_bytes = f.kv_bytes;
			emu[t].ttft_ms = fmin(emu[t].ttft_ms, f.ttft_ms);
			emu[t].pp_tok_s = fmax(emu[t].pp_tok_s, f.pp_tok_s);
			emu[t].tg_tok_s = fmax(emu[t].tg_tok_s, f.tg_tok_s);
			emu[t].ttft_cpu_ms = fmin(emu[t].ttft_cpu_ms, f.ttft_cpu_ms);
			emu[t].tg_cpu_tok_s = fmax(emu[t].tg_cpu_tok_s, f.tg_cpu_tok_s);
		}
	}
	snprintf(err, sizeof(err),
		 "# 12. K/V cache types: emulated cards (host, 2 mock cards, %s, ctx %d, %d-token prompt, %d decoded; wall clock)",
		 argv[1], N_CTX, n_prompt, n_gen);
	print_part(err, "emu", emu);
	print_cpu(emu);
	snprintf(err, sizeof(err),
		 "# 12. K/V cache types: timing-only cards (RK1828 profile's cost model, PCIe, 2 cards, %s, ctx 8192, TTFT of 4096 tokens, decode after them)",
		 argv[2]);
	print_part(err, "rk1828", tim);
	if (timing_cards_all(&ms, &prof, n_gen, tim))
		goto out;
	snprintf(err, sizeof(err),
		 "# 12. K/V cache types: timing-only cards run (host, the pipeline over 2 RK1828-sized mock cards in timing-only mode, modelled clock, PCIe, %s, ctx 8192, 4096-token prefill, %d decoded)",
		 argv[2], n_gen);
	print_part(err, "tcards", tim);
	rc = 0;
out:
	mock_rk_free();
	llm_model_free(&m);
	llm_model_free(&ms);
	if (gf)
		gguf_close(gf);
	if (gs)
		gguf_close(gs);
	return rc;
}
