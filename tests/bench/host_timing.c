// SPDX-License-Identifier: MIT
/*
 * host_timing: rk1828-llm bench against plan --predict on timing-only
 * cards without a guest (issue 22 part 5; `make bench` section 14,
 * userspace/doc/timing.rst "Bench against the prediction").
 *
 *   host_timing MODEL CARDS [HOST_STEP_US [HOST_TOK_US_S [PROMPT [N_GEN [SESSIONS]]]]]
 *
 * bench_run() itself (userspace/cli/bench.c) over the mock librk1828 with
 * RK1828-sized sparse cards (tests/lib/mock_rk.h) in timing-only mode on
 * the built-in profile: every EXEC takes the cost function's time of the
 * program the pipeline really wrote, every COPY its link time over PCIe
 * on the card's copy queue (mock_rk_clock_link()), and bench reads the
 * modelled clock. So its "measured" column is the real runtime's job
 * graph (its buckets, slots, fences and scheduling) on modelled card time
 * with the host taking no time, and the prediction is plan --predict's
 * simulation of the same plan: their difference is the prediction's
 * error about the runtime. The native host time (host_overhead.c, section
 * 13) is then added: HOST_STEP_US per decode step to tgN (serial: each
 * step waits for its logits), HOST_TOK_US_S per token (host_overhead's
 * figure with SESSIONS sessions) SESSIONS times to a step of tgN xS, and
 * HOST_STEP_US once to ppN (the host queues bucket i+1 while the cards
 * run bucket i; only the first submit and the last logits are not under
 * card time). Prints bench's table, then "BENCH
 * hosttiming_<cards>c_<test>_{meas,pred,host,resid_pct}" lines, ms and %.
 * Defaults: PROMPT 4096, N_GEN 128, SESSIONS 4.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "engine.h"
#include "gguf.h"
#include "model.h"
#include "profile.h"
#include "tokenizer.h"

#include "mock_rk.h"

/*
 * One row of bench's table (| test | ... | ms | pred ms | ...): the test
 * name and the mean and predicted ms, by the columns bench prints
 * (col 6 the measured mean "x ± y", col 7 the prediction).
 */
static int parse_row(const char *line, char *test, size_t tlen, double *ms, double *pred)
{
	char buf[512], *f[16], *p, *save = NULL;
	int n = 0;

	if (line[0] != '|' || strstr(line, "---") || strstr(line, " test "))
		return -1;
	snprintf(buf, sizeof(buf), "%s", line);
	for (p = strtok_r(buf, "|", &save); p && n < 16; p = strtok_r(NULL, "|", &save))
		f[n++] = p;
	if (n < 7)
		return -1;
	while (*f[4] == ' ')
		f[4]++;
	snprintf(test, tlen, "%.*s", (int)strcspn(f[4], " "), f[4]);
	if (strstr(f[4], " x"))	/* "tg128 x4" */
		snprintf(test + strlen(test), tlen - strlen(test), "x%d", atoi(strstr(f[4], " x") + 2));
	*ms = atof(f[5]);
	*pred = atof(f[6]);
	return 0;
}

/*
 * The figure with the host's time (see the header): bench's ms of a ppN
 * row is the prompt's, of a tgN row a step's, of a tgN xS row S tokens'.
 */
static double with_host(const char *test, double ms, double step_us, double tok_us, int S)
{
	if (strchr(test, 'x'))
		return ms + S * tok_us / 1e3;
	return ms + step_us / 1e3;
}

/* The BENCH lines of bench's table @buf (@len bytes) of @C cards. */
static void residuals(char *buf, size_t len, int C, double host_us, double tok_us, int S)
{
	FILE *mem = fmemopen(buf, len, "r");
	char line[512];

	while (mem && fgets(line, sizeof(line), mem)) {
		char test[64];
		double ms, pred, h;

		if (parse_row(line, test, sizeof(test), &ms, &pred) || pred <= 0)
			continue;
		h = with_host(test, ms, host_us, tok_us, S);
		printf("BENCH hosttiming_%dc_%s_meas_ms %.3f\n", C, test, ms);
		printf("BENCH hosttiming_%dc_%s_pred_ms %.3f\n", C, test, pred);
		printf("BENCH hosttiming_%dc_%s_host_ms %.3f\n", C, test, h);
		printf("BENCH hosttiming_%dc_%s_resid_pct %.2f\n", C, test, 100 * (pred / h - 1));
	}
	if (mem)
		fclose(mem);
}

int main(int argc, char **argv)
{
	static struct rk_card cards[MOCK_CARDS];
	struct engine_opts eo = { .n_slots = 1, .strict_slots = true, .queue_max = -1 };
	struct mock_cost cost = { 0 };
	struct bench_opts bo = { 0 };
	struct card_profile prof;
	struct plan_fit_opts fo;
	struct plan_sizes sz;
	struct plan plan;
	struct gguf_file *gf;
	struct llm_model m;
	struct tokenizer *tk;
	uint64_t free_b[MOCK_CARDS];
	int idx[MOCK_CARDS], C = argc > 2 ? atoi(argv[2]) : 0, i;
	double host_us = argc > 3 ? atof(argv[3]) : 0, tok_us = argc > 4 ? atof(argv[4]) : 0;
	char err[4096], *buf = NULL;
	size_t len = 0;
	FILE *mem;

	if (argc < 3 || C < 1 || C > MOCK_CARDS) {
		fprintf(stderr, "usage: host_timing MODEL CARDS(1..%d) [HOST_STEP_US [HOST_TOK_US_S [PROMPT [N_GEN [SESSIONS]]]]]\n",
			MOCK_CARDS);
		return 2;
	}
	gf = gguf_open(argv[1], err, sizeof(err));
	if (!gf || llm_model_load(&m, gf, err, sizeof(err)) || !(tk = tok_load(gf, err, sizeof(err))) ||
	    card_profile_builtin(&prof, err, sizeof(err))) {
		fprintf(stderr, "host_timing: %s: %s\n", argv[1], err);
		return 1;
	}
	bo.prompts[0] = argc > 5 ? (uint32_t)atoi(argv[5]) : 4096;
	bo.n_prompts = 1;
	bo.n_gen = argc > 6 ? atoi(argv[6]) : 128;
	bo.sessions = argc > 7 ? atoi(argv[7]) : 4;
	mock_rk_card_mem(prof.mem_usable_bytes);
	mock_rk_cards(cards);
	mock_rk_timing(&prof, true);
	mock_rk_clock(&cost);
	mock_rk_clock_link(COST_LINK_PCIE);
	/* bench's sizes: a context for the prompt and the decode after it. */
	eo.n_ctx = bo.prompts[0] + (uint32_t)bo.n_gen + 1;
	engine_fit_opts(&m, &eo, &fo);
	for (i = 0; i < C; i++) {
		free_b[i] = cards[i].mem_free;
		idx[i] = i;
	}
	if (plan_fit(&m, &fo, C, free_b, NULL, &sz, &plan, NULL, 0, err, sizeof(err))) {
		fprintf(stderr, "host_timing: %s\n", err);
		return 1;
	}
	mem = open_memstream(&buf, &len);
	bo = (struct bench_opts){ .model_path = argv[1], .m = &m, .tok = tk, .cards = cards,
				  .card_idx = idx, .n_cards = C, .plan = &plan, .n_ctx = sz.n_ctx,
				  .bucket = sz.bucket, .prompts = { bo.prompts[0] }, .n_prompts = 1,
				  .n_gen = bo.n_gen, .sessions = bo.sessions, .reps = 1,
				  .prof = &prof, .link = COST_LINK_PCIE, .out = mem };
	if (!mem || bench_run(&bo, err, sizeof(err))) {
		fprintf(stderr, "host_timing: %s\n", err);
		return 1;
	}
	fclose(mem);
	fputs(buf, stdout);
	residuals(buf, len, C, host_us, tok_us, bo.sessions);
	free(buf);
	mock_rk_free();
	tok_free(tk);
	llm_model_free(&m);
	gguf_close(gf);
	return 0;
}
