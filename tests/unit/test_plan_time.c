// SPDX-License-Identifier: MIT
/*
 * The prefill-balanced split (plan_time.h, --split time) on the sparse
 * Qwen3.5-9B shape (mksynth): against a brute force over every contiguous
 * split, on cards that fit either split and on cards so tight the
 * time-optimal split does not fit:
 *  - the time split's largest card prefill time is the least any split
 *    that fits the cards has, and no larger than the bytes split's;
 *  - every card of it fits its free memory, bytes as plan_seg_need();
 *  - plan_seg_prefill_ns() adds up per bucket: a 256-token prefill in
 *    buckets of 128 is the sum of its two buckets' input COPY, EXEC and
 *    output COPY, computed here from the cost function.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "model.h"
#include "plan_time.h"
#include "predict.h"
#include "rk1828/program.h"
#include "tap.h"

#define GIB (1ULL << 30)

/* The largest plan_seg_prefill_ns() of 2-card split [0, c) | [c, L). */
static double max2(const struct cost_layer *ly, const struct cost_head *h, uint32_t L,
		   uint32_t c, const struct plan_timing *t, const struct plan_sizes *sz)
{
	double a = plan_seg_prefill_ns(ly, h, 0, c, false, t, 4096, sz->bucket);
	double b = plan_seg_prefill_ns(ly, h, c, L - c, true, t, 4096, sz->bucket);

	return a > b ? a : b;
}

/* The least max2() over the cuts whose cards fit @mem each; *@at the cut. */
static double brute2(const struct llm_model *m, const struct cost_layer *ly,
		     const struct cost_head *h, const struct plan_timing *t,
		     const struct plan_sizes *sz, uint64_t mem, uint32_t *at)
{
	double best = DBL_MAX;
	uint32_t c;

	for (c = 1; c < m->n_layers; c++) {
		struct plan_seg a = { .first = 0, .count = (int)c };
		struct plan_seg b = { .first = (int)c, .count = (int)(m->n_layers - c), .output = 1 };
		double x;

		if (plan_seg_need(m, &a, 2, sz) > mem || plan_seg_need(m, &b, 2, sz) > mem)
			continue;
		x = max2(ly, h, m->n_layers, c, t, sz);
		if (x < best) {
			best = x;
			*at = c;
		}
	}
	return best;
}

static void check_split(const struct llm_model *m, const struct cost_layer *ly,
			const struct cost_head *h, const struct plan_timing *t, uint64_t mem,
			const char *what)
{
	struct plan_sizes sz = { .n_ctx = 4096, .bucket = 128, .n_seq = 1 };
	uint64_t free_b[2] = { mem, mem };
	struct plan pb, pt;
	char err[1024];
	uint32_t at = 0;
	double want, got, bytes;
	int rb, rt;

	rb = plan_model_split(m, &sz, PLAN_SPLIT_BYTES, t, 2, free_b, NULL, &pb, err, sizeof(err));
	rt = plan_model_split(m, &sz, PLAN_SPLIT_TIME, t, 2, free_b, NULL, &pt, err, sizeof(err));
	if (!tap_ok(rb == 0 && rt == 0 && pt.n_segs == 2 && pt.seg[1].output,
		    "%s: both splits plan on 2 cards", what))
		return;
	want = brute2(m, ly, h, t, &sz, mem, &at);
	got = max2(ly, h, m->n_layers, (uint32_t)pt.seg[1].first, t, &sz);
	bytes = max2(ly, h, m->n_layers, (uint32_t)pb.seg[1].first, t, &sz);
	tap_ok(got == want && (uint32_t)pt.seg[1].first == at,
	       "%s: time split %d | %d has the least largest card time of any split that fits (%.1f ms; brute force: cut at %u, %.1f ms)",
	       what, pt.seg[0].count, pt.seg[1].count, got / 1e6, at, want / 1e6);
	tap_ok(got <= bytes, "%s: time split's largest card %.1f ms <= bytes split %d | %d's %.1f ms",
	       what, got / 1e6, pb.seg[0].count, pb.seg[1].count, bytes / 1e6);
	tap_ok(pt.seg[0].bytes == plan_seg_need(m, &pt.seg[0], 2, &sz) &&
	       pt.seg[1].bytes == plan_seg_need(m, &pt.seg[1], 2, &sz) &&
	       pt.seg[0].bytes <= mem && pt.seg[1].bytes <= mem,
	       "%s: the time split's cards need %.3f and %.3f GiB (plan_seg_need()), within %.3f",
	       what, (double)pt.seg[0].bytes / GIB, (double)pt.seg[1].bytes / GIB,
	       (double)mem / GIB);
}

int main(void)
{
	char path[] = "/tmp/rk1828-plantime-XXXXXX", cmd[256], err[1024];
	struct card_profile prof;
	struct plan_timing t = { &prof, COST_LINK_PCIE };
	struct plan_sizes sz = { .n_ctx = 4096, .bucket = 128, .n_seq = 1 };
	struct cost_layer *ly;
	struct cost_head h;
	struct cost_batch b1 = { 0 }, b2 = { 0 };
	struct gguf_file *gf = NULL;
	struct llm_model m;
	uint64_t free_b[2] = { 5 * GIB, 5 * GIB };
	struct plan pt;
	double two, sum;
	uint64_t prog, hid;
	uint32_t l;
	int fd = mkstemp(path);

	if (fd >= 0)
		close(fd);
	snprintf(cmd, sizeof(cmd),
		 "build/tools/mksynth -o %s --arch qwen35 --preset 9b --type w4a16", path);
	if (!tap_ok(fd >= 0 && !system(cmd) && !card_profile_builtin(&prof, err, sizeof(err)),
		    "mksynth writes a sparse Qwen3.5-9B; the built-in profile parses"))
		goto out;
	gf = gguf_open(path, err, sizeof(err));
	if (!tap_ok(gf && !llm_model_load(&m, gf, err, sizeof(err)), "the 9B shape loads"))
		goto out;
	ly = calloc(m.n_layers, sizeof(*ly));
	for (l = 0; ly && l < m.n_layers; l++)
		predict_cost_layer(&m, l, &ly[l]);
	predict_cost_head(&m, &h);
	if (ly) {
		check_split(&m, ly, &h, &t, 5 * GIB, "5 GiB cards");
		/* Tight cards: card 0 can hold no more blocks than the bytes split gives it. */
		plan_model_split(&m, &sz, PLAN_SPLIT_BYTES, &t, 2, free_b, NULL, &pt, err,
				 sizeof(err));
		check_split(&m, ly, &h, &t, pt.seg[0].bytes > pt.seg[1].bytes ? pt.seg[0].bytes :
			    pt.seg[1].bytes, "cards as large as the bytes split's largest");
		/* By hand: per bucket the input COPY, EXEC and output COPY (hidden states). */
		cost_batch_add_seq(&b1, 128, 0, 0);
		cost_batch_add_seq(&b2, 128, 128, 1);
		prog = (plan_prog_bytes(4, false) + 128 * sizeof(struct rk1828_prog_token) + 63) &
		       ~63ULL;
		hid = 128ULL * m.dim * sizeof(float);
		sum = 2 * (cost_link_ns(&prof, COST_LINK_PCIE, prog + hid) +
			   cost_link_ns(&prof, COST_LINK_PCIE, hid)) +
		      cost_exec_ns(&prof, ly, 4, NULL, &b1) + cost_exec_ns(&prof, ly, 4, NULL, &b2);
		two = plan_seg_prefill_ns(ly, &h, 0, 4, false, &t, 256, 128);
		tap_ok(fabs(two - sum) <= 1e-9 * sum &&
		       cost_exec_ns(&prof, ly, 4, NULL, &b2) > cost_exec_ns(&prof, ly, 4, NULL, &b1),
		       "blocks 0-3 on a 256-token prefill in 128-token buckets: %.3f ms, the sum of both buckets' copies and EXECs (%.3f ms), the second (attending to the first) slower",
		       two / 1e6, sum / 1e6);
	}
	free(ly);
	llm_model_free(&m);
out:
	if (gf)
		gguf_close(gf);
	unlink(path);
	return tap_done();
}
