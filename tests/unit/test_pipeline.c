// SPDX-License-Identifier: MIT
/*
 * Host test of the LLM pipeline (userspace/llm/pipeline.c) without a
 * kernel, over the mock librk1828 of tests/lib/mock_rk.c (every job runs at submit
 * time, EXEC through the card emulator's emu_exec()); what this checks is
 * the data flow: weight layout, programs, bucket slots, hidden states
 * between cards, logits.
 *
 * Checks: logits of the last prompt position and of greedy decode steps
 * match the scalar reference (tests/lib/ref_forward.c) within 1e-4
 * relative for 1..4 cards and buckets 1, 4, 16; a failing EXEC on one card
 * is reported naming that card; the system calls of a decode step on 1, 2
 * and 4 cards (counted by the mock). Prints TAP.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "rk1828/quant_blocks.h"
#include "rk1828/util.h"
#include "rk1828_hif.h"
#include "tokenizer.h"
#include "ref_forward.h"
#include "synth_model.h"
#include "mock_rk.h"
#include "pipeline.h"

#include "tap.h"

/* ------------------------------------------------------------ the tests */


static double rel_diff(const float *a, const float *b, int n)
{
	double md = 0, mb = 0;
	int i;

	for (i = 0; i < n; i++) {
		double d = fabs((double)a[i] - b[i]);

		if (d > md || isnan(d))
			md = isnan(d) ? INFINITY : d;
		if (fabs(b[i]) > mb)
			mb = fabs(b[i]);
	}
	return mb > 0 ? md / mb : md;
}

#define N_DECODE 6

/*
 * Prefill @toks with @n_cards cards and bucket @bucket, then N_DECODE
 * greedy steps; compare every logits vector with the reference @ref_logits
 * ([1 + N_DECODE][n_vocab]) and the greedy tokens with @ref_toks. With
 * @p2p the mock lets every pair of cards use peer-to-peer DMA: every hop
 * must then be P2P, hidden states must move card to card (the senders'
 * peer bytes) and the results must be the same.
 */
static void run_case(const struct llm_model *m, struct rk_card *cards, int n_cards,
		     uint32_t bucket, const int32_t *toks, int n, const float *ref_logits,
		     const int32_t *ref_toks, bool p2p)
{
	const char *how = p2p ? " p2p" : "";
	uint64_t fr[MOCK_CARDS];
	struct plan_sizes sz = { .n_ctx = 64, .bucket = bucket };
	struct pipe_opts po = { .n_ctx = 64, .bucket = bucket, .timeout_ms = 1000 };
	struct pipeline *p = NULL;
	struct plan plan;
	char err[512], ps[128];
	float *lg = calloc(m->n_vocab, sizeof(float));
	double worst = 0;
	int i, good_toks = 1, ret, cur;

	mock_rk_reset();
	mock_rk_p2p(p2p);
	for (i = 0; i < n_cards; i++)
		fr[i] = MOCK_CARD_MEM - 4096;
	ret = plan_model(m, &sz, n_cards, fr, NULL, &plan, err, sizeof(err));
	plan_format(&plan, ps, sizeof(ps));
	tap_ok(ret == 0 && plan.n_segs == n_cards, "%d cards, bucket %u: plan %s", n_cards, bucket, ps);
	if (ret)
		goto out;
	ret = pipe_create(&p, m, cards, &plan, &po, err, sizeof(err));
	tap_ok(ret == 0, "%d cards, bucket %u%s: pipeline created%s%s", n_cards, bucket, how,
	   ret ? ": " : "", ret ? err : "");
	if (ret)
		goto out;
	for (i = 1, cur = 0; i < n_cards; i++)
		cur += pipe_hop_p2p(p, i);
	tap_ok(cur == (p2p ? n_cards - 1 : 0), "%d cards, bucket %u%s: %d of %d hops by P2P",
	       n_cards, bucket, how, cur, n_cards - 1);
	ret = pipe_forward(p, toks, n, 0, lg, err, sizeof(err));
	if (!ret)
		worst = rel_diff(lg, ref_logits, m->n_vocab);
	tap_ok(ret == 0 && worst <= 1e-4, "%d cards, bucket %u: prefill logits match reference (rel %.2e)%s%s",
	   n_cards, bucket, worst, ret ? ": " : "", ret ? err : "");
	cur = (int)util_argmax(lg, m->n_vocab);
	worst = 0;
	for (i = 0; i < N_DECODE && !ret; i++) {
		double d;

		good_toks &= cur == ref_toks[i];
		ret = pipe_forward(p, &ref_toks[i], 1, n + i, lg, err, sizeof(err));
		if (ret)
			break;
		d = rel_diff(lg, ref_logits + (size_t)(i + 1) * m->n_vocab, m->n_vocab);
		worst = d > worst ? d : worst;
		cur = (int)util_argmax(lg, m->n_vocab);
	}
	tap_ok(ret == 0 && worst <= 1e-4 && good_toks,
	   "%d cards, bucket %u%s: %d decode steps match reference (rel %.2e)%s%s", n_cards,
	   bucket, how, N_DECODE, worst, ret ? ": " : "", ret ? err : "");
	if (n_cards > 1) {
		uint64_t hid = (uint64_t)m->dim * sizeof(float), moved = 0;

		for (i = 0; i < n_cards - 1; i++)
			moved += mock_rk_p2p_bytes(plan.seg[i].card);
		/* Prefill rows plus one row per decode step, per hop. */
		tap_ok(moved == (p2p ? (uint64_t)(n_cards - 1) * (n + N_DECODE) * hid : 0),
		       "%d cards, bucket %u%s: %llu hidden-state bytes went card to card",
		       n_cards, bucket, how, (unsigned long long)moved);
	}
out:
	pipe_destroy(p);
	tap_ok(mock_rk_live_objs() == 0, "%d cards, bucket %u: every BO and syncobj released (%d left)",
	   n_cards, bucket, mock_rk_live_objs());
	free(lg);
}

static void test_failure(const struct llm_model *m, struct rk_card *cards,
			 const int32_t *toks, int n)
{
	uint64_t fr[MOCK_CARDS] = { MOCK_CARD_MEM - 4096, MOCK_CARD_MEM - 4096 };
	struct plan_sizes sz = { .n_ctx = 64, .bucket = 4 };
	struct pipe_opts po = { .n_ctx = 64, .bucket = 4, .timeout_ms = 1000 };
	struct pipeline *p = NULL;
	struct plan plan;
	char err[512] = "";
	float *lg = calloc(m->n_vocab, sizeof(float));
	int ret;

	mock_rk_reset();
	if (plan_model(m, &sz, 2, fr, NULL, &plan, err, sizeof(err)) ||
	    pipe_create(&p, m, cards, &plan, &po, err, sizeof(err))) {
		tap_ok(0, "failing EXEC: setup: %s", err);
		free(lg);
		return;
	}
	mock_rk_fail_exec(1, 1);
	ret = pipe_forward(p, toks, n, 0, lg, err, sizeof(err));
	tap_ok(ret == -1 && strstr(err, "card1") && strstr(err, "EXEC") && strstr(err, "Bad address"),
	   "failing EXEC on card1 is reported: %s", err);
	mock_rk_fail_exec(1, 0);
	ret = pipe_forward(p, toks, 1, 0, lg, err, sizeof(err));
	tap_ok(ret == -1 && strstr(err, "unusable after an earlier job failure") && strstr(err, "card1"),
	   "later forwards fail with the first error: %s", err);
	pipe_destroy(p);

	/* One-token step (decode): found by the end-of-forward status check. */
	mock_rk_reset();
	if (pipe_create(&p, m, cards, &plan, &po, err, sizeof(err))) {
		tap_ok(0, "failing decode EXEC: setup: %s", err);
		free(lg);
		return;
	}
	tap_ok(pipe_forward(p, toks, 70, 0, lg, err, sizeof(err)) == -1 && strstr(err, "context"),
	   "forward beyond the context is refused: %s", err);
	tap_ok(pipe_forward(p, toks, 3, 0, lg, err, sizeof(err)) == 0, "pipeline still usable after it");
	mock_rk_fail_exec(0, 1);
	ret = pipe_forward(p, toks + 3, 1, 3, lg, err, sizeof(err));
	tap_ok(ret == -1 && strstr(err, "card0") && strstr(err, "EXEC") && strstr(err, "pos 3"),
	   "failing decode EXEC on card0 is reported: %s", err);
	pipe_destroy(p);
	free(lg);
}

/*
 * System calls per decode step on @n_cards cards, counted by the mock:
 * the jobs (3 SUBMITs a card), one BO_WAIT on the last card's output for
 * the logits (whose status covers every job of the step), and the fence
 * timestamps behind the busy time (input COPY and EXEC of each card, each
 * a sync_file export and SYNC_IOC_FILE_INFO) - no sync_file passed between
 * cards and no SYNCOBJ_WAIT: the cards share the hand-over syncobjs.
 */
static void test_calls(const struct llm_model *m, struct rk_card *cards, int n_cards,
		       const int32_t *toks, int n)
{
	enum { STEPS = 12 };
	uint64_t fr[MOCK_CARDS] = { MOCK_CARD_MEM - 4096, MOCK_CARD_MEM - 4096,
				    MOCK_CARD_MEM - 4096, MOCK_CARD_MEM - 4096 };
	struct plan_sizes sz = { .n_ctx = 64, .bucket = 4 };
	struct pipe_opts po = { .n_ctx = 64, .bucket = 4, .timeout_ms = 1000 };
	struct mock_rk_calls c0, c1;
	struct pipeline *p = NULL;
	struct plan plan;
	char err[512] = "";
	float *lg = calloc(m->n_vocab, sizeof(float));
	int ret, i, cur, rows = 1;
	long S = n_cards;

	mock_rk_reset();
	ret = plan_model(m, &sz, n_cards, fr, NULL, &plan, err, sizeof(err)) ||
	      pipe_create(&p, m, cards, &plan, &po, err, sizeof(err)) ||
	      pipe_forward(p, toks, n, 0, lg, err, sizeof(err));
	cur = (int)util_argmax(lg, m->n_vocab);
	/* Warm up: every buffer slot used once. */
	for (i = 0; i < 2 * STEPS && !ret; i++) {
		struct pipe_tok t = { .token = cur, .pos = n + i, .flags = PIPE_TOK_LOGITS };

		/* Timestamps read up to here, so the window counts its own. */
		if (i == STEPS && pipe_account(p, err, sizeof(err)) >= 0)
			mock_rk_get_calls(&c0);
		ret = pipe_submit(p, &t, 1, err, sizeof(err)) ||
		      (rows = pipe_collect(p, lg, 1, err, sizeof(err))) != 1;
		cur = (int)util_argmax(lg, m->n_vocab);
	}
	if (!ret)
		ret = pipe_account(p, err, sizeof(err)) < 0;
	mock_rk_get_calls(&c1);
	pipe_destroy(p);
	free(lg);
	if (ret) {
		tap_ok(0, "calls: %d cards: decode: %s", n_cards, err);
		return;
	}
	printf("# calls: %d cards, per decode step: %.1f SUBMIT, %.1f BO_WAIT, %.1f SYNCOBJ_WAIT, %.1f sync_file export, %.1f import, %.1f SYNC_IOC_FILE_INFO, %.1f other\n",
	       n_cards, (double)(c1.submit - c0.submit) / STEPS,
	       (double)(c1.bo_wait - c0.bo_wait) / STEPS,
	       (double)(c1.syncobj_wait - c0.syncobj_wait) / STEPS,
	       (double)(c1.export_sync_file - c0.export_sync_file) / STEPS,
	       (double)(c1.import_sync_file - c0.import_sync_file) / STEPS,
	       (double)(c1.sync_file_info - c0.sync_file_info) / STEPS,
	       (double)(c1.other - c0.other) / STEPS);
	tap_ok(c1.submit - c0.submit == STEPS * 3 * S && c1.bo_wait - c0.bo_wait == STEPS &&
	       c1.syncobj_wait == c0.syncobj_wait && c1.import_sync_file == c0.import_sync_file &&
	       c1.other == c0.other,
	       "calls: %d cards: a decode step is %ld SUBMITs and one BO_WAIT; no sync_file passed between cards, no SYNCOBJ_WAIT",
	       n_cards, 3 * S);
	tap_ok(c1.export_sync_file - c0.export_sync_file == STEPS * 2 * S &&
	       c1.sync_file_info - c0.sync_file_info == STEPS * 2 * S,
	       "calls: %d cards: and %ld fence timestamps (input COPY and EXEC a card), each a sync_file export and FILE_INFO",
	       n_cards, 2 * S);
}

/* The planner counts n_seq sessions' KV caches and logits rows. */
static void test_plan_seqs(const struct llm_model *m)
{
	struct plan_sizes one = { .n_ctx = 64, .bucket = 16, .slots = 3 }, four = one;
	uint64_t fr[2] = { MOCK_CARD_MEM - 4096, MOCK_CARD_MEM - 4096 }, small[2];
	struct plan plan;
	char err[512];
	int ret;

	four.n_seq = 4;
	tap_ok(plan_block_bytes(m, 0, &four) - plan_block_bytes(m, 0, &one) ==
	       3 * llm_kv_bytes(m, 64, QUANT_TYPE_F32),
	       "planner: 4 sessions cost each block 3 more KV caches");
	tap_ok(plan_head_bytes(m, &four) - plan_head_bytes(m, &one) ==
	       3 * (plan_align(4ULL * m->n_vocab * 4, &one) - plan_align((uint64_t)m->n_vocab * 4, &one)),
	       "planner: the last card keeps 4 logits rows per slot for 4 sessions");
	/* Cards that hold 1 session but not 64. */
	ret = plan_model(m, &one, 2, fr, NULL, &plan, err, sizeof(err));
	small[0] = small[1] = plan.seg[0].bytes > plan.seg[1].bytes ?
			      plan.seg[0].bytes + 4096 : plan.seg[1].bytes + 4096;
	four.n_seq = 64;
	tap_ok(ret == 0 && plan_model(m, &one, 2, small, NULL, &plan, err, sizeof(err)) == 0 &&
	       plan_model(m, &four, 2, small, NULL, &plan, err, sizeof(err)) == PLAN_NOFIT,
	       "planner: 64 sessions do not fit cards sized for one (\"%.60s...\")", err);
}

/* ------------------------------------------------ synthetic qwen models */

/* Pipeline on 1 and 3 mock cards vs the reference for a synthetic model. */
static void test_synth(struct rk_card *cards, const char *arch)
{
	char path[] = "/tmp/rk1828-test-pipe-XXXXXX", err[512] = "";
	int32_t toks[9] = { 1, 5, 9, 39, 0, 17, 22, 3, 30 };
	struct gguf_file *gf = NULL;
	struct ref_model *ref = NULL;
	struct llm_model m;
	float *ref_lg = NULL, *lg = NULL;
	int fd = mkstemp(path), i, c;

	memset(&m, 0, sizeof(m));
	if (fd >= 0)
		close(fd);
	if (fd < 0 || synth_small_qwen_write(path, arch, err, sizeof(err)) ||
	    !(gf = gguf_open(path, err, sizeof(err))) ||
	    llm_model_load(&m, gf, err, sizeof(err)) ||
	    !(ref = ref_load(path, 64, err, sizeof(err)))) {
		tap_ok(0, "%s synthetic model: setup: %s", arch, err);
		goto out;
	}
	ref_lg = calloc(m.n_vocab, sizeof(float));
	lg = calloc(m.n_vocab, sizeof(float));
	for (i = 0; i < 9; i++)
		ref_forward(ref, toks[i], i, ref_lg);
	for (c = 1; c <= 3; c += 2) {
		uint64_t fr[MOCK_CARDS] = { MOCK_CARD_MEM - 4096, MOCK_CARD_MEM - 4096, MOCK_CARD_MEM - 4096 };
		struct plan_sizes sz = { .n_ctx = 64, .bucket = 4 };
		struct pipe_opts po = { .n_ctx = 64, .bucket = 4, .timeout_ms = 1000 };
		struct pipeline *p = NULL;
		struct plan plan;
		double d = 1;
		int ret;

		mock_rk_reset();
		ret = plan_model(&m, &sz, c, fr, NULL, &plan, err, sizeof(err));
		if (!ret)
			ret = pipe_create(&p, &m, cards, &plan, &po, err, sizeof(err));
		if (!ret)
			ret = pipe_forward(p, toks, 9, 0, lg, err, sizeof(err));
		if (!ret)
			d = rel_diff(lg, ref_lg, m.n_vocab);
		tap_ok(!ret && d <= 1e-4, "%s (%s, %s, %d cards): logits match reference (rel %.2e)%s%s",
		   arch, m.rope_neox ? "NEOX" : "normal", m.tied ? "tied" : "untied", c, d,
		   ret ? ": " : "", ret ? err : "");
		pipe_destroy(p);
	}
out:
	free(ref_lg);
	free(lg);
	ref_free(ref);
	llm_model_free(&m);
	if (gf)
		gguf_close(gf);
	unlink(path);
}

int main(void)
{
	const char *path = getenv("RK1828_MODEL");
	static const uint32_t buckets[] = { 1, 4, 16 };
	struct rk_card cards[MOCK_CARDS];
	struct gguf_file *gf;
	struct llm_model m;
	struct tokenizer *tk;
	struct ref_model *ref;
	int32_t toks[64], ref_toks[N_DECODE];
	float *ref_logits;
	char err[512] = "";
	int n, i, c, b;

	printf("TAP version 13\n");
	if (!path)
		path = "../shared/models/stories260K.gguf";
	gf = gguf_open(path, err, sizeof(err));
	if (!gf) {
		printf("1..0 # SKIP model not available: %s\n", err);
		return 0;
	}
	err[0] = '\0';
	tap_ok(llm_model_load(&m, gf, err, sizeof(err)) == 0, "model loads%s%s", err[0] ? ": " : "", err);
	tk = tok_load(gf, err, sizeof(err));
	ref = ref_load(path, 64, err, sizeof(err));
	if (!tk || !ref) {
		printf("Bail out! %s\n", err);
		return 1;
	}
	n = tok_encode(tk, "Once upon a time, there was a little girl named", true, toks, 64);
	tap_ok(n > 8, "prompt has %d tokens", n);

	/* Reference: prompt, then greedy decode. */
	ref_logits = calloc((size_t)(1 + N_DECODE) * m.n_vocab, sizeof(float));
	for (i = 0; i < n; i++)
		ref_forward(ref, toks[i], i, ref_logits);
	for (i = 0; i < N_DECODE; i++) {
		ref_toks[i] = (int)util_argmax(ref_logits + (size_t)i * m.n_vocab, m.n_vocab);
		ref_forward(ref, ref_toks[i], n + i, ref_logits + (size_t)(i + 1) * m.n_vocab);
	}

	mock_rk_cards(cards);
	for (c = 1; c <= MOCK_CARDS; c++)
		for (b = 0; b < 3; b++)
			run_case(&m, cards, c, buckets[b], toks, n, ref_logits, ref_toks, false);
	for (c = 2; c <= MOCK_CARDS; c++)
		for (b = 0; b < 3; b++)
			run_case(&m, cards, c, buckets[b], toks, n, ref_logits, ref_toks, true);
	test_failure(&m, cards, toks, n);
	for (c = 1; c <= MOCK_CARDS; c *= 2)
		test_calls(&m, cards, c, toks, n);
	test_plan_seqs(&m);
	test_synth(cards, "qwen2");
	test_synth(cards, "qwen3");

	mock_rk_free();
	free(ref_logits);
	ref_free(ref);
	tok_free(tk);
	llm_model_free(&m);
	gguf_close(gf);
	return tap_done();
}
