// SPDX-License-Identifier: MIT
/*
 * Host test of the one-cost-function rule of the timing model
 * (cardmodel/cost.h, userspace/doc/timing.rst): the time the emulator's
 * timing mode gives each EXEC the pipeline queues (emulator/exec_cost.c,
 * from the segment program in card memory) equals the cost the planner's
 * prediction gives the same layers and tokens (userspace/llm/predict.c,
 * from the model file), for stories260K (F32) and synthetic qwen2 (q/k/v
 * biases, Q4_0/Q8_0/F16 weights, untied Q8_0 head), qwen3 (q/k norm,
 * tied head) and qwen35 (Gated DeltaNet and gated attention layers,
 * build/tools/mksynth) models on 1 to 3 cards, prefill in buckets and
 * decode; on the qwen35 model the difference the profile's fitted DeltaNet
 * terms make is exactly those terms' count times their cost. Then
 * timing-only EXEC (rk1828-emu --timing-only): no math, each logits row
 * zero but for one 1.0 at a token chosen by position and sequence.
 *
 * Runs over the mock librk1828 (tests/lib/mock_rk.c) with
 * mock_rk_timing(). Model: $RK1828_MODEL or
 * ../shared/models/stories260K.gguf. Prints TAP.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cost.h"
#include "gguf.h"
#include "mock_rk.h"
#include "pipeline.h"
#include "planner.h"
#include "predict.h"
#include "profile.h"
#include "rk1828/quant_blocks.h"
#include "synth_model.h"

#include "tap.h"

#define N_CTX		64
#define N_PROMPT	9
#define N_DECODE	3

/*
 * Every EXEC of a prompt of N_PROMPT tokens in buckets of @bucket and
 * N_DECODE decode steps on @n_cards cards: the emulator's modelled time
 * against cost_exec_ns() of the planner's layers for the same batch.
 */
static double check_costs(const char *label, const struct llm_model *m, struct rk_card *cards,
			  int n_cards, uint32_t bucket, const struct card_profile *prof)
{
	static const int32_t toks[N_PROMPT + N_DECODE] = { 1, 5, 9, 30, 0, 17, 22, 3, 30, 7, 2, 11 };
	uint64_t fr[MOCK_CARDS] = { MOCK_CARD_MEM - 4096, MOCK_CARD_MEM - 4096,
				    MOCK_CARD_MEM - 4096, MOCK_CARD_MEM - 4096 };
	struct plan_sizes sz = { .n_ctx = N_CTX, .bucket = bucket };
	struct pipe_opts po = { .n_ctx = N_CTX, .bucket = bucket, .timeout_ms = 1000 };
	struct cost_layer *layers = calloc(m->n_layers, sizeof(*layers));
	float *lg = calloc(m->n_vocab, sizeof(float));
	struct pipeline *p = NULL;
	struct cost_head head;
	struct plan plan;
	double worst = 0, sum = 0;
	int k, i, ret, n_jobs = 0, bad_count = 0, ok = 0;
	uint32_t l;
	char err[512] = "";

	mock_rk_reset();
	mock_rk_timing(prof, false);
	ret = plan_model(m, &sz, n_cards, fr, NULL, &plan, err, sizeof(err));
	if (!ret)
		ret = pipe_create(&p, m, cards, &plan, &po, err, sizeof(err));
	if (!ret)
		ret = pipe_forward(p, toks, N_PROMPT, 0, lg, err, sizeof(err));
	for (i = 0; i < N_DECODE && !ret; i++)
		ret = pipe_forward(p, &toks[N_PROMPT + i], 1, N_PROMPT + i, lg, err, sizeof(err));
	mock_rk_timing(NULL, false);
	if (ret || !layers || !lg) {
		tap_ok(0, "%s, %d cards, bucket %u: runs: %s", label, n_cards, bucket, err);
		goto out;
	}
	for (l = 0; l < m->n_layers; l++)
		predict_cost_layer(m, l, &layers[l]);
	predict_cost_head(m, &head);
	for (k = 0; k < plan.n_segs; k++) {
		const struct plan_seg *g = &plan.seg[k];
		int card = cards[g->card].fd, job = 0;
		uint32_t done;

		for (done = 0; done < N_PROMPT + N_DECODE; job++) {
			uint32_t n = done < N_PROMPT ? N_PROMPT - done : 1;
			struct cost_batch b = { 0 };
			double want, got, d;

			if (done < N_PROMPT && n > bucket)
				n = bucket;
			/* The logits of a forward's last token only. */
			cost_batch_add_seq(&b, n, done, done + n >= N_PROMPT);
			done += n;
			want = cost_exec_ns(prof, layers + g->first, (unsigned int)g->count,
					    g->output ? &head : NULL, &b);
			got = mock_rk_exec_ns(card, job);
			d = fabs(got - want) / want;
			worst = d > worst ? d : worst;
			sum += got;
			n_jobs++;
		}
		bad_count += mock_rk_n_exec(card) != job;
	}
	ok = !bad_count && worst < 1e-9 && sum > 0;
	tap_ok(ok,
	       "%s, %d cards, bucket %u: the emulator's modelled time of all %d EXECs (%.3f ms) "
	       "is the planner's cost (worst rel %.1e)", label, n_cards, bucket, n_jobs,
	       sum / 1e6, worst);
out:
	pipe_destroy(p);
	free(layers);
	free(lg);
	return ok ? sum : -1;
}

/* Timing-only: one-hot logits at a token that depends on the position. */
static void check_timing_only(const struct llm_model *m, struct rk_card *cards,
			      const struct card_profile *prof)
{
	static const int32_t toks[4] = { 1, 2, 3, 4 };
	uint64_t fr[MOCK_CARDS] = { MOCK_CARD_MEM - 4096, MOCK_CARD_MEM - 4096 };
	struct plan_sizes sz = { .n_ctx = N_CTX, .bucket = 4 };
	struct pipe_opts po = { .n_ctx = N_CTX, .bucket = 4, .timeout_ms = 1000 };
	float *lg = calloc(m->n_vocab, sizeof(float));
	size_t am[2][2] = { { 0 } };
	struct pipeline *p = NULL;
	struct plan plan;
	int ret, run, i, one_hot = 1;
	char err[512] = "";

	mock_rk_reset();
	mock_rk_timing(prof, true);
	ret = plan_model(m, &sz, 2, fr, NULL, &plan, err, sizeof(err));
	if (!ret)
		ret = pipe_create(&p, m, cards, &plan, &po, err, sizeof(err));
	for (run = 0; run < 2 && !ret; run++) {
		for (i = 0; i < 2 && !ret; i++) {
			uint32_t v, ones = 0, other = 0;

			ret = pipe_forward(p, toks, 2 + i, 0, lg, err, sizeof(err));
			for (v = 0; v < m->n_vocab && !ret; v++) {
				if (lg[v] == 1.0f) {
					ones++;
					am[run][i] = v;
				} else if (lg[v] != 0.0f) {
					other++;
				}
			}
			one_hot &= ones == 1 && other == 0;
		}
	}
	mock_rk_timing(NULL, false);
	tap_ok(!ret && one_hot, "timing-only: every logits row is zero but for one 1.0 (no math)%s%s",
	       ret ? ": " : "", err);
	tap_ok(!ret && am[0][0] == am[1][0] && am[0][1] == am[1][1] && am[0][0] != am[0][1],
	       "timing-only: the token depends only on the position (%zu at pos 1, %zu at pos 2, "
	       "again %zu, %zu)", am[0][0], am[0][1], am[1][0], am[1][1]);
	pipe_destroy(p);
	free(lg);
}

static void check_synth(struct rk_card *cards, const char *arch, const struct card_profile *prof)
{
	char path[] = "/tmp/rk1828-test-timing-XXXXXX", err[512] = "", label[32];
	struct gguf_file *gf = NULL;
	struct llm_model m;
	int fd = mkstemp(path);

	memset(&m, 0, sizeof(m));
	if (fd >= 0)
		close(fd);
	if (fd < 0 || synth_small_qwen_write(path, arch, err, sizeof(err)) ||
	    !(gf = gguf_open(path, err, sizeof(err))) || llm_model_load(&m, gf, err, sizeof(err))) {
		tap_ok(0, "%s synthetic model: setup: %s", arch, err);
	} else {
		snprintf(label, sizeof(label), "synthetic %s", arch);
		check_costs(label, &m, cards, 1, 4, prof);
		check_costs(label, &m, cards, 3, 4, prof);
	}
	llm_model_free(&m);
	if (gf)
		gguf_close(gf);
	unlink(path);
}

/* A qwen35 model (Gated DeltaNet and gated attention) from build/tools/mksynth. */
static void check_qwen35(struct rk_card *cards, const struct card_profile *prof)
{
	char path[] = "/tmp/rk1828-test-timing-q35-XXXXXX", cmd[256], err[512] = "";
	struct gguf_file *gf = NULL;
	struct llm_model m;
	int fd = mkstemp(path);

	memset(&m, 0, sizeof(m));
	if (fd >= 0)
		close(fd);
	snprintf(cmd, sizeof(cmd), "build/tools/mksynth -o %s --arch qwen35 --type q4_0", path);
	if (fd < 0 || system(cmd) || !(gf = gguf_open(path, err, sizeof(err))) ||
	    llm_model_load(&m, gf, err, sizeof(err)) || !m.n_deltanet || !m.attn_gate) {
		tap_ok(0, "qwen35 synthetic model (build/tools/mksynth): setup: %s", err);
	} else {
		struct card_profile no_dn = *prof;
		double with, without, want;
		int n;

		check_costs("synthetic qwen35", &m, cards, 1, 4, prof);
		with = check_costs("synthetic qwen35", &m, cards, 2, 4, prof);
		no_dn.dn_ns = no_dn.dn_row_ns = 0;
		without = check_costs("synthetic qwen35, no DeltaNet terms", &m, cards, 2, 4, &no_dn);
		/*
		 * The fitted DeltaNet terms: each DeltaNet layer once in each of
		 * the 6 EXECs (buckets of 4, 4 and 1 prompt tokens, 3 decode
		 * steps) and on each of their 12 token rows.
		 */
		n = (int)m.n_deltanet;
		want = n * (6 * prof->dn_ns + (N_PROMPT + N_DECODE) * prof->dn_row_ns);
		tap_ok(prof->dn_ns > 0 && prof->dn_row_ns > 0 && n > 0 &&
		       with > 0 && without > 0 && fabs(with - without - want) < 1e-6 * want,
		       "synthetic qwen35, 2 cards: the emulator adds the profile's DeltaNet terms "
		       "(%u layers x (6 jobs x %.0f ns + 12 rows x %.0f ns) = %.3f ms; measured %.3f ms)",
		       m.n_deltanet, prof->dn_ns, prof->dn_row_ns, want / 1e6,
		       (with - without) / 1e6);
	}
	llm_model_free(&m);
	if (gf)
		gguf_close(gf);
	unlink(path);
}

int main(void)
{
	const char *path = getenv("RK1828_MODEL");
	struct rk_card cards[MOCK_CARDS];
	struct card_profile prof;
	struct gguf_file *gf;
	struct llm_model m;
	char err[512] = "";

	printf("TAP version 13\n");
	if (card_profile_builtin(&prof, err, sizeof(err))) {
		printf("Bail out! built-in profile: %s\n", err);
		return 1;
	}
	mock_rk_cards(cards);
	check_synth(cards, "qwen2", &prof);
	check_synth(cards, "qwen3", &prof);
	check_qwen35(cards, &prof);
	if (!path)
		path = "../shared/models/stories260K.gguf";
	gf = gguf_open(path, err, sizeof(err));
	if (!gf || llm_model_load(&m, gf, err, sizeof(err))) {
		printf("# SKIP stories260K cases: model not available: %s\n", err);
	} else {
		check_costs("stories260K", &m, cards, 1, 4, &prof);
		check_costs("stories260K", &m, cards, 2, 1, &prof);
		check_costs("stories260K", &m, cards, 2, 16, &prof);
		check_timing_only(&m, cards, &prof);
		llm_model_free(&m);
	}
	if (gf)
		gguf_close(gf);
	mock_rk_free();
	return tap_done();
}
