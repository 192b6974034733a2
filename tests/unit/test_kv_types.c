// SPDX-License-Identifier: MIT
/*
 * K/V cache types (issue 21; rk1828/kv_cache.h, program 1.3 kv_type) on
 * the host, over the mock librk1828 (tests/lib/mock_rk.c: EXEC runs the
 * card emulator).
 *
 * Checks:
 * - the row formats: bytes per row of each type, rk1828_kv_store() writes
 *   the bytes of quant_quantize_row() and rk1828_kv_load() of any head
 *   (also one inside a block, head_dim 8) gives quant_dequantize_row()'s
 *   floats;
 * - the card refuses an unknown kv_type and a block type whose block does
 *   not divide the row (through pipe_create() / EXEC);
 * - per type and model (stories260K, llama; synthetic qwen2, qwen3; the
 *   hybrid qwen35 when build/synth/qwen35-engine.gguf exists): a prefill
 *   of the prompt in buckets of 16 then decode gives logits bit-identical
 *   to a token-by-token run; the logits match the reference forward with
 *   its K/V rounded through the same type (tests/lib/ref_forward.c,
 *   rel <= 1e-4), and their distance to the F32-K/V reference is printed;
 *   teacher-forced top-1 agreement with the F32-K/V pipeline over 48
 *   positions is >= 95 % for F16 and Q8_0 (Q4_0's is printed);
 * - stories260K's greedy text (32 tokens) with F16 K/V is F32 K/V's.
 * Prints TAP; the figures as "# fidelity ..." lines.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "mock_rk.h"
#include "pipeline.h"
#include "quant.h"
#include "ref_forward.h"
#include "rk1828/kv_cache.h"
#include "rk1828/util.h"
#include "synth_model.h"
#include "tokenizer.h"

#include "tap.h"

#define N_POS	48	/* teacher-forced positions */
#define N_CTX	64

static const int kv_types[] = { QUANT_TYPE_F32, QUANT_TYPE_F16, QUANT_TYPE_Q8_0,
				QUANT_TYPE_Q4_0 };
#define N_TYPES	4

static struct rk_card cards[MOCK_CARDS];

/* ------------------------------------------------------------ row formats */

static void test_rows(void)
{
	enum { D = 96 };
	float x[D], y[D], want[D], tmp[QUANT_QK];
	uint8_t a[D * 4], b[D * 4];
	int t, i, bad = 0;

	tap_ok(rk1828_kv_row_bytes(QUANT_TYPE_F32, 128) == 512 &&
	       rk1828_kv_row_bytes(QUANT_TYPE_F16, 128) == 256 &&
	       rk1828_kv_row_bytes(QUANT_TYPE_Q8_0, 128) == 136 &&
	       rk1828_kv_row_bytes(QUANT_TYPE_Q4_0, 128) == 72,
	       "row bytes of 128 values: f32 512, f16 256, q8_0 136, q4_0 72");
	tap_ok(rk1828_kv_row_bytes(QUANT_TYPE_Q8_0, 48) == 0 &&
	       rk1828_kv_row_bytes(QUANT_TYPE_Q4_1, 64) == 0 &&
	       rk1828_kv_seq_bytes(QUANT_TYPE_Q4_0, 3, 32) == 56,
	       "no q8_0 row of 48 values, q4_1 is no K/V type, 3 q4_0 rows of 32 take 54 -> 56 bytes");
	for (i = 0; i < D; i++)
		x[i] = sinf(0.37f * (float)i) * (1.0f + (float)(i % 7));
	for (t = 1; t < N_TYPES; t++) {
		int type = kv_types[t];
		size_t h;

		memset(a, 0, sizeof(a));
		memset(b, 0, sizeof(b));
		rk1828_kv_store(type, x, a, D);
		quant_quantize_row(type, x, b, D);
		quant_dequantize_row(type, b, want, D);
		if (memcmp(a, b, rk1828_kv_row_bytes(type, D)))
			bad++;
		/* Heads of 8 (inside a block) and of 48 (across blocks). */
		for (h = 0; h < D; h += 8) {
			rk1828_kv_load(type, a, h, 8, tmp, y);
			bad += memcmp(y, want + h, 8 * sizeof(float)) != 0;
		}
		for (h = 0; h < D; h += 48) {
			rk1828_kv_load(type, a, h, 48, tmp, y);
			bad += memcmp(y, want + h, 48 * sizeof(float)) != 0;
		}
	}
	tap_ok(bad == 0, "f16, q8_0, q4_0 rows: the card's bytes are quant_quantize_row()'s, heads of 8 and 48 decode to quant_dequantize_row()'s floats (%d mismatches)",
	       bad);
}

/* --------------------------------------------------------------- models */

/* A model under test: its file, the loaded model, its tokens. */
struct mcase {
	const char *name;
	char path[256];
	bool tmp;
	struct gguf_file *gf;
	struct llm_model m;
	int32_t toks[N_POS];
};

/* A pipeline of @kv_type on 2 mock cards (1 for a one-block model). */
static struct pipeline *make_pipe(const struct mcase *mc, int kv_type, uint32_t bucket,
				  char *err, size_t errlen)
{
	uint64_t fr[MOCK_CARDS] = { MOCK_CARD_MEM - 4096, MOCK_CARD_MEM - 4096 };
	struct plan_sizes sz = { .n_ctx = N_CTX, .bucket = bucket, .n_seq = 1,
				 .kv_type = kv_type };
	struct pipe_opts po = { .n_ctx = N_CTX, .bucket = bucket, .n_seq = 1,
				.timeout_ms = 5000, .kv_type = kv_type };
	struct pipeline *p = NULL;
	struct plan plan;
	int n = mc->m.n_layers > 1 ? 2 : 1;

	mock_rk_reset();
	if (plan_model(&mc->m, &sz, n, fr, NULL, &plan, err, errlen) ||
	    pipe_create(&p, &mc->m, cards, &plan, &po, err, errlen))
		return NULL;
	return p;
}

/* Logits at every position [N_POS][n_vocab], token by token; 0 or -1. */
static int run_tbt(const struct mcase *mc, int kv_type, float *lg, char *err, size_t errlen)
{
	struct pipeline *p = make_pipe(mc, kv_type, 1, err, errlen);
	int i, ret = p ? 0 : -1;

	for (i = 0; !ret && i < N_POS; i++)
		ret = pipe_forward(p, &mc->toks[i], 1, (uint32_t)i, lg + (size_t)i * mc->m.n_vocab,
				   err, errlen);
	pipe_destroy(p);
	return ret;
}

static double rel_diff(const float *a, const float *b, size_t n)
{
	double md = 0, mb = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		double d = fabs((double)a[i] - b[i]);

		md = d > md || isnan(d) ? (isnan(d) ? INFINITY : d) : md;
		mb = fabs(b[i]) > mb ? fabs(b[i]) : mb;
	}
	return mb > 0 ? md / mb : md;
}

/*
 * Prefill of the first @n0 tokens in buckets of 16, then decode one at a
 * time: every logits row bit-identical to the token-by-token run @tbt.
 */
static void check_prefill(const struct mcase *mc, int kv_type, const float *tbt, int n0)
{
	size_t V = mc->m.n_vocab;
	float *lg = calloc(V, sizeof(float));
	char err[512] = "";
	struct pipeline *p = make_pipe(mc, kv_type, 16, err, sizeof(err));
	int i, ret = p ? 0 : -1, same = 0;

	if (!ret)
		ret = pipe_forward(p, mc->toks, (uint32_t)n0, 0, lg, err, sizeof(err));
	if (!ret)
		same += !memcmp(lg, tbt + (size_t)(n0 - 1) * V, V * sizeof(float));
	for (i = n0; !ret && i < N_POS; i++) {
		ret = pipe_forward(p, &mc->toks[i], 1, (uint32_t)i, lg, err, sizeof(err));
		same += !ret && !memcmp(lg, tbt + (size_t)i * V, V * sizeof(float));
	}
	tap_ok(!ret && same == N_POS - n0 + 1,
	       "%s, K/V %s: prefill of %d tokens (bucket 16) + %d decode steps bit-identical to token by token (%d of %d)%s%s",
	       mc->name, quant_type_name(kv_type), n0, N_POS - n0, same, N_POS - n0 + 1,
	       ret ? ": " : "", ret ? err : "");
	pipe_destroy(p);
	free(lg);
}

/* Logits of the reference forward with K/V rounded through @kv_type. */
static int ref_logits(const struct mcase *mc, int kv_type, float *lg, char *err, size_t errlen)
{
	struct ref_model *ref = ref_load(mc->path, N_CTX, err, errlen);
	int i, ret = ref ? 0 : -1;

	if (ref)
		ref->kv_type = kv_type;
	for (i = 0; !ret && i < N_POS; i++)
		ret = ref_forward(ref, mc->toks[i], i, lg + (size_t)i * mc->m.n_vocab);
	ref_free(ref);
	return ret;
}

/* Fidelity of each type against F32 K/V, and the bit-identity of prefill. */
static void test_model(struct mcase *mc)
{
	size_t V = mc->m.n_vocab, n = (size_t)N_POS * V;
	float *f32 = calloc(n, sizeof(float)), *lg = calloc(n, sizeof(float));
	float *ref = calloc(n, sizeof(float)), *ref32 = calloc(n, sizeof(float));
	char err[512] = "";
	int t, i;
	bool have_ref;

	if (run_tbt(mc, QUANT_TYPE_F32, f32, err, sizeof(err))) {
		tap_ok(0, "%s: F32 K/V run: %s", mc->name, err);
		goto out;
	}
	have_ref = !ref_logits(mc, QUANT_TYPE_F32, ref32, err, sizeof(err));
	for (t = 0; t < N_TYPES; t++) {
		int type = kv_types[t], agree = 0;
		double d_ref = 0, d_f32 = 0, d_ref32 = 0;

		if (!llm_kv_type_ok(&mc->m, type)) {
			printf("# %s: K/V %s: rows of %u values are not whole blocks; skipped\n",
			       mc->name, quant_type_name(type), mc->m.n_kv_heads * mc->m.head_dim);
			continue;
		}
		if (run_tbt(mc, type, lg, err, sizeof(err))) {
			tap_ok(0, "%s, K/V %s: run: %s", mc->name, quant_type_name(type), err);
			continue;
		}
		for (i = 0; i < N_POS; i++) {
			const float *a = lg + (size_t)i * V, *b = f32 + (size_t)i * V;
			double d = rel_diff(a, b, V);

			agree += util_argmax(a, V) == util_argmax(b, V);
			d_f32 = d > d_f32 ? d : d_f32;
		}
		if (have_ref && !ref_logits(mc, type, ref, err, sizeof(err))) {
			for (i = 0; i < N_POS; i++) {
				double d = rel_diff(lg + (size_t)i * V, ref + (size_t)i * V, V);
				double e = rel_diff(ref + (size_t)i * V, ref32 + (size_t)i * V, V);

				d_ref = d > d_ref ? d : d_ref;
				d_ref32 = e > d_ref32 ? e : d_ref32;
			}
			/*
			 * Not d_ref <= 1e-4: the reference's K (double sums) and
			 * the card's (float) may round to neighbouring quants.
			 * The card adds no error of its own beyond the rounding.
			 */
			tap_ok(d_f32 <= 1.1 * d_ref32 + 1e-4,
			       "%s, K/V %s: distance to the F32-K/V logits %.3e, the reference forward's over K/V rounded the same way %.3e (card vs that reference %.2e)",
			       mc->name, quant_type_name(type), d_f32, d_ref32, d_ref);
		}
		printf("# fidelity %s K/V %s: top-1 agreement with F32 K/V %d/%d (%.1f %%), max rel logit distance to F32 K/V %.3e (reference: %.3e)\n",
		       mc->name, quant_type_name(type), agree, N_POS, 100.0 * agree / N_POS, d_f32,
		       d_ref32);
		if (type == QUANT_TYPE_F16 || type == QUANT_TYPE_Q8_0)
			tap_ok(agree * 100 >= 95 * N_POS,
			       "%s, K/V %s: teacher-forced top-1 agreement with F32 K/V %.1f %% >= 95 %%",
			       mc->name, quant_type_name(type), 100.0 * agree / N_POS);
		check_prefill(mc, type, lg, 20);
	}
out:
	free(f32);
	free(lg);
	free(ref);
	free(ref32);
}

/* stories260K's greedy text: F16 K/V gives F32 K/V's 32 tokens. */
static void test_greedy_f16(struct mcase *mc)
{
	static const char *prompts[] = { "Once upon a time", "The little dog", "Lily wanted to" };
	struct tokenizer *tk;
	char err[512] = "";
	size_t V = mc->m.n_vocab, k;
	float *lg = calloc(V, sizeof(float));
	int same = 0;

	tk = tok_load(mc->gf, err, sizeof(err));
	if (!tk) {
		tap_ok(0, "stories260K tokenizer: %s", err);
		free(lg);
		return;
	}
	for (k = 0; k < sizeof(prompts) / sizeof(prompts[0]); k++) {
		int32_t out[2][32], toks[N_CTX];
		int t, n = tok_encode(tk, prompts[k], true, toks, N_CTX), ret = 0, i;

		for (t = 0; t < 2; t++) {
			struct pipeline *p = make_pipe(mc, t ? QUANT_TYPE_F16 : QUANT_TYPE_F32, 16,
						       err, sizeof(err));
			int32_t cur;

			ret |= !p || pipe_forward(p, toks, (uint32_t)n, 0, lg, err, sizeof(err));
			for (i = 0; !ret && i < 32; i++) {
				cur = (int32_t)util_argmax(lg, V);
				out[t][i] = cur;
				if (i < 31)
					ret |= pipe_forward(p, &cur, 1, (uint32_t)(n + i), lg, err,
							    sizeof(err));
			}
			pipe_destroy(p);
		}
		same += !ret && !memcmp(out[0], out[1], sizeof(out[0]));
	}
	tap_ok(same == 3, "stories260K: greedy text of 32 tokens with F16 K/V is F32 K/V's for %d of 3 prompts%s%s",
	       same, same < 3 ? ": " : "", same < 3 ? err : "");
	tok_free(tk);
	free(lg);
}

/* The planner and the pipeline refuse K/V types that cannot store the rows. */
static void test_refusals(struct mcase *mc)
{
	uint64_t fr[MOCK_CARDS] = { MOCK_CARD_MEM - 4096 };
	struct plan_sizes sz = { .n_ctx = N_CTX, .bucket = 4, .kv_type = QUANT_TYPE_Q4_1 };
	struct pipe_opts po = { .n_ctx = N_CTX, .bucket = 4, .kv_type = QUANT_TYPE_Q4_1 };
	struct pipeline *p = NULL;
	struct plan plan;
	char err[512] = "";
	int r;

	r = plan_model(&mc->m, &sz, 1, fr, NULL, &plan, err, sizeof(err));
	tap_ok(r == -1 && strstr(err, "K/V type q4_1 cannot store"), "plan_model() refuses q4_1 K/V: %s",
	       err);
	sz.kv_type = QUANT_TYPE_F32;
	mock_rk_reset();
	r = plan_model(&mc->m, &sz, 1, fr, NULL, &plan, err, sizeof(err)) ||
	    pipe_create(&p, &mc->m, cards, &plan, &po, err, sizeof(err));
	tap_ok(r && !p, "pipe_create() refuses q4_1 K/V: %s", err);
	pipe_destroy(p);
}

static int open_case(struct mcase *mc, const char *name, const char *path, const char *arch)
{
	char err[512] = "";
	uint64_t x = 88172645463325252ULL;
	int i;

	memset(mc, 0, sizeof(*mc));
	mc->name = name;
	if (arch) {
		int fd;

		snprintf(mc->path, sizeof(mc->path), "/tmp/rk1828-kvt-XXXXXX");
		fd = mkstemp(mc->path);
		if (fd < 0)
			return -1;
		close(fd);
		mc->tmp = true;
		if (synth_small_qwen_write(mc->path, arch, err, sizeof(err))) {
			tap_ok(0, "%s: write: %s", name, err);
			return -1;
		}
	} else {
		snprintf(mc->path, sizeof(mc->path), "%s", path);
	}
	mc->gf = gguf_open(mc->path, err, sizeof(err));
	if (!mc->gf || llm_model_load(&mc->m, mc->gf, err, sizeof(err))) {
		printf("# %s: not available: %s\n", name, err);
		return -1;
	}
	for (i = 0; i < N_POS; i++) {	/* xorshift64: reproducible tokens */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		mc->toks[i] = (int32_t)(x % mc->m.n_vocab);
	}
	return 0;
}

/* A real model is teacher-forced on text, not on random tokens. */
static void story_tokens(struct mcase *mc)
{
	static const char text[] =
		"Once upon a time, there was a little girl named Lily. She loved to play "
		"outside in the park with her friend, a big brown dog. One day, they saw a "
		"red ball under a tree. Lily ran to get it, but the dog was faster.";
	int32_t toks[256];
	char err[256];
	struct tokenizer *tk = tok_load(mc->gf, err, sizeof(err));
	int n = tk ? tok_encode(tk, text, true, toks, 256) : 0;

	if (n >= N_POS)
		memcpy(mc->toks, toks, sizeof(mc->toks));
	else
		printf("# stories260K: the text has %d tokens (< %d); random tokens\n", n, N_POS);
	tok_free(tk);
}

static void close_case(struct mcase *mc)
{
	llm_model_free(&mc->m);
	if (mc->gf)
		gguf_close(mc->gf);
	if (mc->tmp)
		unlink(mc->path);
}

int main(void)
{
	const char *stories = getenv("RK1828_MODEL");
	struct mcase mc;

	printf("TAP version 13\n");
	test_rows();
	mock_rk_cards(cards);
	if (!open_case(&mc, "qwen2", NULL, "qwen2")) {
		test_model(&mc);
		test_refusals(&mc);
	}
	close_case(&mc);
	if (!open_case(&mc, "qwen3", NULL, "qwen3"))
		test_model(&mc);
	close_case(&mc);
	if (!open_case(&mc, "stories260K", stories ? stories : "../shared/models/stories260K.gguf",
		       NULL)) {
		story_tokens(&mc);
		test_model(&mc);
		test_greedy_f16(&mc);
	}
	close_case(&mc);
	if (!open_case(&mc, "qwen35", "build/synth/qwen35-engine.gguf", NULL))
		test_model(&mc);
	close_case(&mc);
	mock_rk_free();
	return tap_done();
}
