// SPDX-License-Identifier: MIT
/*
 * Host unit tests of the card model (cardmodel/): the profile parser and
 * its error messages, the built-in profile, the cost function's terms
 * against hand-computed values, the precision classes, the batch counts,
 * the profile fit (the committed profile is the joint fit of its eight
 * timing parameters on the vendor's single-card and published multi-card
 * figures, every residual within 10 %; the multi-card file's errors), and the pipeline simulation of the
 * prediction (userspace/llm/predict.c) on cases worked out by hand.
 * Run from the top of the checkout. Prints TAP.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "predict.h"
#include "profile.h"
#include "profile_fit.h"
#include "shape.h"
#include "tap.h"

static bool near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-9;
}

/* A profile whose terms are easy to add up by hand. */
static const char *unit_text =
	"profile.version = 1\n"
	"profile.name = unit   # trailing comment\n"
	"profile.revision = test\n"
	"card.mem_bytes = 1000000\n"
	"card.mem_usable_bytes = 900000\n"
	"card.dram_bytes_per_s = 1e9\n"
	"npu.w4a16_flops_per_s = 1e9\n"
	"npu.w8a16_flops_per_s = 2e9\n"
	"npu.f16_flops_per_s = 4e9\n"
	"npu.f32_flops_per_s = 8e9\n"
	"npu.vector_ops_per_s = 1e9\n"
	"npu.job_ns = 1000\n"
	"npu.op_ns = 10\n"
	"npu.op_row_ns = 1\n"
	"link.usb.bytes_per_s = 1e9\n"
	"link.usb.latency_ns = 100\n"
	"link.pcie.bytes_per_s = 2e9\n"
	"link.pcie.latency_ns = 50\n"
	"power.idle_w = 1\n"
	"power.busy_w = 5\n";

/* @text with the first line starting with @key replaced by @line (NULL: removed). */
static void edit(char *out, size_t n, const char *text, const char *key, const char *line)
{
	const char *p = strstr(text, key), *nl = p ? strchr(p, '\n') : NULL;

	if (!p || !nl) {
		snprintf(out, n, "%s", text);
		return;
	}
	snprintf(out, n, "%.*s%s%s", (int)(p - text), text, line ? line : "", nl + 1);
}

static void expect_error(const char *what, const char *text, const char *msg)
{
	struct card_profile p;
	char err[256] = "";
	int ret = card_profile_parse(&p, text, "t.conf", err, sizeof(err));

	tap_ok(ret == -1 && strstr(err, msg), "profile: %s is refused (%s)", what, err);
}

static void test_profile_parse(void)
{
	struct card_profile p;
	char err[256] = "", t[4096];

	tap_ok(card_profile_parse(&p, unit_text, "t.conf", err, sizeof(err)) == 0,
	       "profile: a complete file parses (%s)", err);
	tap_ok(p.version == 1 && !strcmp(p.name, "unit") && p.mem_bytes == 1000000 &&
	       p.mm_rate[COST_PREC_F16] == 4e9 && p.link[COST_LINK_PCIE].latency_ns == 50 &&
	       p.power_busy_w == 5, "profile: values land in their fields, comments stripped");
	edit(t, sizeof(t), unit_text, "npu.op_ns", "npu.op_nz = 10\n");
	expect_error("an unknown key", t, "t.conf:13: unknown key 'npu.op_nz'");
	edit(t, sizeof(t), unit_text, "npu.op_ns", NULL);
	expect_error("a missing key", t, "missing key 'npu.op_ns'");
	snprintf(t, sizeof(t), "%snpu.job_ns = 5\n", unit_text);
	expect_error("a repeated key", t, "t.conf:21: 'npu.job_ns' given twice");
	edit(t, sizeof(t), unit_text, "npu.job_ns", "npu.job_ns = -5\n");
	expect_error("a negative time", t, "t.conf:12: npu.job_ns");
	edit(t, sizeof(t), unit_text, "card.dram", "card.dram_bytes_per_s = 0\n");
	expect_error("a zero rate", t, "a rate must be > 0");
	edit(t, sizeof(t), unit_text, "card.dram", "card.dram_bytes_per_s = 1e9x\n");
	expect_error("trailing garbage", t, "expected a finite number");
	edit(t, sizeof(t), unit_text, "card.mem_bytes", "card.mem_bytes = 1.5\n");
	expect_error("a fractional byte count", t, "whole number");
	edit(t, sizeof(t), unit_text, "profile.version", "profile.version = 2\n");
	expect_error("another format version", t, "profile.version 2, this program reads version 1");
	edit(t, sizeof(t), unit_text, "card.mem_usable", "card.mem_usable_bytes = 2000000\n");
	expect_error("more usable than total memory", t, "at most card.mem_bytes");
	edit(t, sizeof(t), unit_text, "npu.op_ns", "npu.op_ns 10\n");
	expect_error("a line without '='", t, "t.conf:13: expected 'key = value'");
	tap_ok(card_profile_load(&p, "tests/shapes/no-such.conf", err, sizeof(err)) == -1 &&
	       strstr(err, "tests/shapes/no-such.conf: No such file"),
	       "profile: a missing file is named (%s)", err);
	tap_ok(card_profile_load(&p, "tests/shapes/qwen3-8b.shape", err, sizeof(err)) == -1 &&
	       strstr(err, "tests/shapes/qwen3-8b.shape:6: unknown key 'name'"),
	       "profile: a file that is no profile is refused with its name (%s)", err);
}

static void test_builtin(void)
{
	struct card_profile p, f;
	char err[256] = "";

	tap_ok(card_profile_builtin(&p, err, sizeof(err)) == 0, "builtin profile parses (%s)", err);
	tap_ok(card_profile_load(&f, "emulator/profiles/rk1828.conf", err, sizeof(err)) == 0 &&
	       !memcmp(&p, &f, sizeof(p)), "builtin profile is emulator/profiles/rk1828.conf");
	tap_ok(p.mem_bytes == 5ULL << 30 && p.mem_usable_bytes < p.mem_bytes &&
	       p.mem_usable_bytes > 4800000000ULL, "builtin: 5 GiB card, about 4.9 GB usable");
	tap_ok(near(p.link[COST_LINK_PCIE].bytes_per_s, 0.91e9, 0.05) &&
	       p.link[COST_LINK_USB].bytes_per_s < p.link[COST_LINK_PCIE].bytes_per_s,
	       "builtin: PCIe 2.1 x2 about 1 GB/s, USB 3.0 slower");
	tap_ok(near(card_profile_power_w(&p, 0, 1e9), p.power_idle_w, 1e-12) &&
	       near(card_profile_power_w(&p, 1e9, 1e9), p.power_busy_w, 1e-12) &&
	       near(card_profile_power_w(&p, 5e8, 1e9), (p.power_idle_w + p.power_busy_w) / 2, 1e-12),
	       "power: idle at 0 %%, busy at 100 %%, between at 50 %%");
}

static void test_prec_and_batch(void)
{
	struct cost_matrix q40 = { 64, 256, 64 * 8 * 18 }, q41 = { 64, 256, 64 * 8 * 20 };
	struct cost_matrix q6k = { 64, 256, 64 * 210 }, q80 = { 64, 256, 64 * 8 * 34 };
	struct cost_matrix f16 = { 64, 256, 64 * 256 * 2 }, f32 = { 64, 256, 64 * 256 * 4 };
	struct cost_batch b = { 0 };

	tap_ok(cost_prec_of(&q40) == COST_PREC_W4A16 && cost_prec_of(&q41) == COST_PREC_W4A16 &&
	       cost_prec_of(&q6k) == COST_PREC_W8A16 && cost_prec_of(&q80) == COST_PREC_W8A16 &&
	       cost_prec_of(&f16) == COST_PREC_F16 && cost_prec_of(&f32) == COST_PREC_F32,
	       "precision classes: Q4_0/Q4_1 W4A16, Q6_K/Q8_0 W8A16, F16, F32");
	cost_batch_add_seq(&b, 130, 10, 1);
	tap_ok(b.n_tokens == 130 && b.n_seq == 1 && b.ctx_sum == 130ULL * 10 + 130 * 131 / 2 &&
	       b.kv_rows == 140 &&
	       b.dn_chunks == 3 && b.dn_chunk_sq == 2 * 64 * 64 + 4 && b.n_logits == 1,
	       "batch: 130 tokens from position 10: context sum, 3 chunks (64+64+2)");
	cost_batch_add_seq(&b, 1, 99, 1);
	tap_ok(b.n_tokens == 131 && b.n_seq == 2 && b.dn_chunks == 4 && b.n_logits == 2 &&
	       b.kv_rows == 240 &&
	       b.ctx_sum == 130ULL * 10 + 130 * 131 / 2 + 100, "batch: a decode token adds a chunk of one");
}

/* One tiny attention layer, every term added up by hand on the unit profile. */
static void test_cost_terms(void)
{
	struct card_profile p;
	struct cost_layer l = {
		.mixer = COST_MIX_ATTN, .dim = 32, .ffn_dim = 64, .n_heads = 2, .n_kv_heads = 1,
		.head_dim = 16, .kv_elt_bytes = 4, .n_mats = 2,
		.mat = { { 32, 32, 32 * 32 * 20 / 32 }, { 64, 32, 64 * 32 * 2 } },
		.small_bytes = 256,
	};
	struct cost_head h = { 32, 100, 100 * 32 * 34 / 32 };
	struct cost_batch b = { 0 };
	struct cost_work w = { 0 };
	char err[256];
	double want, q = 32, kv = 16, T = 3, ctx;

	card_profile_parse(&p, unit_text, "t.conf", err, sizeof(err));
	cost_batch_add_seq(&b, 3, 4, 1);	/* positions 4, 5, 6: attend to 5 + 6 + 7 rows */
	ctx = 18;
	cost_layer_work(&l, &b, &w);
	tap_ok(w.ops == 18 && w.op_rows == 54, "cost: an attention layer is 18 operators, on 3 rows each");
	tap_ok(near(w.mm_flops[COST_PREC_W4A16], 2 * T * 32 * 32, 1e-12) &&
	       near(w.mm_flops[COST_PREC_F16], 2 * T * 64 * 32 + 4 * q * ctx, 1e-12) &&
	       w.mm_flops[COST_PREC_W8A16] == 0, "cost: matmul FLOPs by class, attention GEMMs as F16");
	/* K/V: the sequence's 7 rows read once, 3 new rows written. */
	want = 640 + 4096 + 256 + 2 * 2.0 * T * (64 + 96) + 2 * kv * 4 * (7 + T);
	tap_ok(b.kv_rows == 7 && near(w.dram_bytes, want, 1e-12),
	       "cost: DRAM = weights + small + activations + K/V rows once a job (%g)",
	       w.dram_bytes);
	want = T * (6 * 32 + 2 * 32 + 3 * 64 + 3 * (q + kv)) + 5 * 2 * ctx;
	tap_ok(near(w.vec_ops, want, 1e-12), "cost: vector ops (%g)", w.vec_ops);
	cost_head_work(&h, &b, &w);
	want = 1000 + 20 * 10 + (54 + 2) * 1 + w.dram_bytes +
	       w.mm_flops[COST_PREC_W4A16] / 1 + w.mm_flops[COST_PREC_W8A16] / 2 +
	       w.mm_flops[COST_PREC_F16] / 4 + w.vec_ops;
	tap_ok(near(cost_work_ns(&p, &w), want, 1e-12) &&
	       near(cost_exec_ns(&p, &l, 1, &h, &b), want, 1e-12),
	       "cost: time = job + ops + rows + bytes/bw + FLOPs/rate + vector ops/rate");
	tap_ok(near(cost_link_ns(&p, COST_LINK_PCIE, 2000), 50 + 1000, 1e-12) &&
	       near(cost_link_ns(&p, COST_LINK_USB, 2000), 100 + 2000, 1e-12) &&
	       near(cost_card_copy_ns(&p, 1000), 2000, 1e-12),
	       "cost: link = latency + bytes/bandwidth; card copy reads and writes");
	b.n_logits = 0;
	memset(&w, 0, sizeof(w));
	cost_head_work(&h, &b, &w);
	tap_ok(w.ops == 0 && w.dram_bytes == 0, "cost: no logits rows, no head");
}

/* npu.deltanet_ns / _row_ns: optional, 0 when left out, only on DeltaNet layers. */
static void test_deltanet_keys(void)
{
	char text[4096], buf[4096], err[256];
	struct card_profile p0, p1;
	struct model_shape s;
	struct cost_layer dn, at;
	struct cost_batch b = { 0 };
	double d_dn, d_at;

	tap_ok(card_profile_parse(&p0, unit_text, "t.conf", err, sizeof(err)) == 0 &&
	       p0.dn_ns == 0 && p0.dn_row_ns == 0,
	       "profile: the DeltaNet keys may be left out (0)");
	snprintf(text, sizeof(text), "%snpu.deltanet_ns = 250000\nnpu.deltanet_row_ns = 15000\n",
		 unit_text);
	tap_ok(card_profile_parse(&p1, text, "t.conf", err, sizeof(err)) == 0 &&
	       p1.dn_ns == 250000 && p1.dn_row_ns == 15000, "profile: the DeltaNet keys parse (%s)",
	       err);
	snprintf(buf, sizeof(buf), "%snpu.deltanet_ns = -1\n", unit_text);
	tap_ok(card_profile_parse(&p1, buf, "t.conf", err, sizeof(err)) != 0 &&
	       strstr(err, "npu.deltanet_ns"), "profile: a negative npu.deltanet_ns is refused (%s)",
	       err);
	card_profile_parse(&p1, text, "t.conf", err, sizeof(err));
	shape_load(&s, "tests/shapes/qwen3.5-9b.shape", err, sizeof(err));
	shape_cost_layer(&s, 0, &dn);
	shape_cost_layer(&s, 3, &at);
	cost_batch_add_seq(&b, 128, 0, 0);
	d_dn = cost_exec_ns(&p1, &dn, 1, NULL, &b) - cost_exec_ns(&p0, &dn, 1, NULL, &b);
	d_at = cost_exec_ns(&p1, &at, 1, NULL, &b) - cost_exec_ns(&p0, &at, 1, NULL, &b);
	tap_ok(near(d_dn, 250000 + 128 * 15000, 1e-9) && d_at == 0,
	       "cost: a DeltaNet layer on 128 rows adds deltanet_ns + 128 rows (%.0f ns), "
	       "attention nothing (%.0f)", d_dn, d_at);
}

static void test_deltanet(void)
{
	struct card_profile p;
	struct model_shape s;
	struct cost_layer l;
	struct cost_batch dec = { 0 }, pre = { 0 };
	struct cost_work wd = { 0 }, wp = { 0 };
	char err[256];
	double st;

	card_profile_builtin(&p, err, sizeof(err));
	tap_ok(shape_load(&s, "tests/shapes/qwen3.5-9b.shape", err, sizeof(err)) == 0,
	       "shape: qwen3.5-9b loads (%s)", err);
	tap_ok(!shape_is_attn(&s, 0) && !shape_is_attn(&s, 2) && shape_is_attn(&s, 3) &&
	       shape_is_attn(&s, 31), "shape: every fourth layer is attention");
	shape_cost_layer(&s, 0, &l);
	st = 32.0 * 128 * 128;
	cost_batch_add_seq(&dec, 1, 4096, 1);
	cost_batch_add_seq(&pre, 128, 0, 0);
	tap_ok(cost_layer_ops(&l) == 26 && l.n_mats == 8, "deltanet: 26 operators, 8 matrices");
	tap_ok(cost_exec_ns(&p, &l, 1, NULL, &pre) > cost_exec_ns(&p, &l, 1, NULL, &dec) &&
	       cost_exec_ns(&p, &l, 1, NULL, &pre) < 128 * cost_exec_ns(&p, &l, 1, NULL, &dec) / 4,
	       "deltanet: a 128-token chunk costs far less than 128 decode steps");
	/* Without matrices only the state, conv window and vector terms remain. */
	l.n_mats = 0;
	l.small_bytes = 0;
	cost_layer_work(&l, &dec, &wd);
	cost_layer_work(&l, &pre, &wp);
	{
		double C = (2.0 * 16 + 32) * 128, conv = 2.0 * 3 * C * 4;

		tap_ok(near(wd.dram_bytes, 2 * st * 4 + conv, 1e-12) &&
		       near(wp.dram_bytes, 2 * 2 * st * 4 + conv, 1e-12),
		       "deltanet: the F32 state is read and written once a chunk (1 decode, 2 for 128)");
		tap_ok(near(wd.vec_ops - 3 * st, (wp.vec_ops - 2 * 3 * st) / 128, 1e-12),
		       "deltanet: per-token vector work is the same in both, plus 3 ops a state entry a chunk");
		tap_ok(near(wd.mm_flops[COST_PREC_F16], 2 * 32 * (4 * 128.0 + 3 * 128 * 128), 1e-12) &&
		       near(wp.mm_flops[COST_PREC_F16],
			    2 * 32 * (4 * 128.0 * 2 * 64 * 64 + 3 * 128 * 128 * 128.0), 1e-12),
		       "deltanet: intra-chunk and state GEMMs (A16)");
	}
}

static void test_fit(void)
{
	static struct fit_data d;
	struct card_profile p, fitted;
	char err[512] = "";
	int i, ret, ok = 1, mc_ok = 1;

	card_profile_builtin(&p, err, sizeof(err));
	tap_ok(fit_load(&d, "tests/shapes/vendor-rk1828.txt", "tests/shapes", err, sizeof(err)) == 0 &&
	       d.n == 8, "fit: 8 vendor models with their shapes (%s)", err);
	tap_ok(fit_load_multicard(&d, "tests/shapes/vendor-multicard.txt", "tests/shapes", err,
				  sizeof(err)) == 0 && d.n_mc == 11,
	       "fit: 11 published multi-card figures (%s)", err);
	fitted = p;
	ret = fit_run(&d, &fitted, err, sizeof(err));
	tap_ok(ret == 0 && d.iterations >= 1 && d.iterations <= 5,
	       "fit: solves, all 8 parameters at once (%s%d iterations)", err, d.iterations);
	tap_ok(near(fitted.dram_bw, p.dram_bw, 1e-3) && near(fitted.job_ns, p.job_ns, 1e-3) &&
	       near(fitted.op_ns, p.op_ns, 1e-3) && near(fitted.op_row_ns, p.op_row_ns, 1e-3) &&
	       near(fitted.mm_rate[COST_PREC_W4A16], p.mm_rate[COST_PREC_W4A16], 1e-3) &&
	       near(fitted.mm_rate[COST_PREC_F32], p.mm_rate[COST_PREC_F32], 1e-3) &&
	       near(fitted.vec_rate, p.vec_rate, 1e-3) && near(fitted.dn_ns, p.dn_ns, 1e-3) &&
	       near(fitted.dn_row_ns, p.dn_row_ns, 1e-3),
	       "fit: the committed profile holds the fit's values (else: make fit-profile)");
	tap_ok(p.dn_ns > 0 && p.dn_row_ns > 0,
	       "fit: the Gated DeltaNet terms are in the profile (%.0f ns a layer, %.0f ns a row)",
	       p.dn_ns, p.dn_row_ns);
	for (i = 0; i < d.n; i++) {
		double t, o;

		fit_vendor_ms(&p, &d.pt[i].shape, &t, &o);
		ok &= near(t, d.pt[i].ttft_ms, 0.10) && near(o, d.pt[i].tpot_ms, 0.10);
	}
	for (i = 0; i < d.n_mc; i++) {
		double v = 0;

		mc_ok &= fit_mc_value(&p, &d.mc[i], &v, err, sizeof(err)) == 0 &&
			 near(v, d.mc[i].value, 0.10);
	}
	tap_ok(ok && mc_ok && d.max_rel < 0.10 && d.rms_rel < 0.03,
	       "fit: every figure within 10 %% on the committed profile (max %.1f %%, rms %.1f %%)",
	       100 * d.max_rel, 100 * d.rms_rel);
	tap_ok(d.pt[7].model_ttft_ms > 8 * d.pt[0].model_ttft_ms * 0.8 &&
	       d.pt[7].model_tpot_ms > 3 * d.pt[0].model_tpot_ms,
	       "fit: an 8B model is slower than a 0.5B one in both figures");
}

/* The multi-card figures file: malformed lines and unknown figures are refused. */
static void test_fit_multicard_errors(void)
{
	static struct fit_data d;
	char path[] = "/tmp/rk-fit-mc-XXXXXX", err[512] = "";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f) {
		tap_ok(0, "fit: a temporary file");
		return;
	}
	fputs("# comment\n\nqwen3.5-9b 2 pcie 128 card0_step_ms 14.99 rkdemo\n"
	      "qwen3.5-9b 2 pcie 128 card7_step_ms 1.0 nowhere\n", f);
	fclose(f);
	tap_ok(fit_load_multicard(&d, path, "tests/shapes", err, sizeof(err)) == -1 &&
	       d.n_mc == 1 && strstr(err, ":4:") && strstr(err, "no figure card7_step_ms"),
	       "fit: a figure the prediction does not give is refused with its line (%s)", err);
	f = fopen(path, "w");
	if (f) {
		fputs("qwen3.5-9b 2 wifi 128 tpot_ms 28.11 rkdemo\n", f);
		fclose(f);
	}
	memset(&d, 0, sizeof(d));
	tap_ok(fit_load_multicard(&d, path, "tests/shapes", err, sizeof(err)) == -1 &&
	       strstr(err, ":1: expected 'shape cards link bucket key value source'"),
	       "fit: a bad link is refused (%s)", err);
	unlink(path);
}

/* Two equal stages of one layer each, bucketed prefill and decode. */
static void test_psim(void)
{
	struct card_profile p;
	struct model_shape s;
	struct cost_layer l[2];
	struct cost_head h;
	struct plan plan = { .n_segs = 2 };
	struct predict_opts o = { .link = COST_LINK_PCIE, .bucket = 16, .n_ctx = 8192 };
	struct cost_batch b = { 0 };
	struct psim *sim;
	char err[256];
	double t_in, t_ex0, t_ex1, t_out, t_hid, end, sum;
	int i;

	card_profile_parse(&p, unit_text, "t.conf", err, sizeof(err));
	o.prof = &p;
	shape_load(&s, "tests/shapes/qwen2.5-0.5b.shape", err, sizeof(err));
	shape_cost_layer(&s, 0, &l[0]);
	shape_cost_layer(&s, 1, &l[1]);
	shape_cost_head(&s, &h);
	plan.seg[0] = (struct plan_seg){ .card = 0, .first = 0, .count = 1 };
	plan.seg[1] = (struct plan_seg){ .card = 1, .first = 1, .count = 1, .output = 1 };

	/* One token: IN0, EXEC0, OUT0, IN1, EXEC1, OUT1 back to back. */
	sim = psim_create(l, 2, &h, &plan, &o);
	cost_batch_add_seq(&b, 1, 0, 1);
	{
		uint64_t prog = (plan_prog_bytes(1, false) + 16 * 16 + 63) & ~63ULL;

		t_in = cost_link_ns(&p, COST_LINK_PCIE, prog + 896 * 4);
		t_hid = cost_link_ns(&p, COST_LINK_PCIE, 896 * 4);
	}
	t_ex0 = cost_exec_ns(&p, &l[0], 1, NULL, &b);
	t_ex1 = cost_exec_ns(&p, &l[1], 1, &h, &b);
	t_out = cost_link_ns(&p, COST_LINK_PCIE, 151936 * 4);
	end = psim_submit(sim, 0, &b);
	tap_ok(near(end, t_in + t_ex0 + t_hid + t_in + t_ex1 + t_out, 1e-12),
	       "psim: a decode step is the sum of its six jobs (%.0f ns)", end);
	tap_ok(near(psim_busy_ns(sim, 0), t_ex0, 1e-12) && near(psim_busy_ns(sim, 1), t_ex1, 1e-12),
	       "psim: busy time is the EXEC time");
	tap_ok(near(psim_stage_ns(sim, 0, &b), t_in + t_ex0 + t_hid, 1e-12) &&
	       near(psim_stage_ns(sim, 1, &b), t_in + t_ex1 + t_out, 1e-12) &&
	       psim_stage_ns(sim, 2, &b) == 0 && psim_stage_ns(sim, -1, &b) == 0,
	       "psim: a stage's share of the step is its IN, EXEC and OUT (%.0f + %.0f ns), 0 out of range",
	       psim_stage_ns(sim, 0, &b), psim_stage_ns(sim, 1, &b));
	tap_ok(near(psim_submit(sim, end, &b) - end, end, 1e-12),
	       "psim: psim_stage_ns() leaves the queues as they were");
	psim_destroy(sim);

	/* Card 0 on PCIe, card 1 on USB: each stage's transfers on its own link. */
	{
		enum cost_link links[2] = { COST_LINK_PCIE, COST_LINK_USB };
		uint64_t prog = (plan_prog_bytes(1, false) + 16 * 16 + 63) & ~63ULL;
		double want = t_in + t_ex0 + t_hid +
			      cost_link_ns(&p, COST_LINK_USB, prog + 896 * 4) + t_ex1 +
			      cost_link_ns(&p, COST_LINK_USB, 151936 * 4);

		o.card_links = links;
		sim = psim_create(l, 2, &h, &plan, &o);
		end = psim_submit(sim, 0, &b);
		tap_ok(near(end, want, 1e-12) && end > t_in + t_ex0 + t_hid + t_in + t_ex1 + t_out,
		       "psim: with per-card links, card 1's IN and OUT go over USB, card 0's over PCIe (%.0f ns)",
		       end);
		psim_destroy(sim);
		o.card_links = NULL;
	}

	/* 32 buckets: stage 1 starts bucket i while stage 0 runs i + 1. */
	sim = psim_create(l, 2, &h, &plan, &o);
	sum = 0;
	end = 0;
	for (i = 0; i < 32; i++) {
		struct cost_batch bb = { 0 };

		cost_batch_add_seq(&bb, 16, (uint64_t)i * 16, i == 31);
		sum += cost_exec_ns(&p, &l[0], 1, NULL, &bb) + cost_exec_ns(&p, &l[1], 1,
									  i == 31 ? &h : NULL, &bb);
		end = psim_submit(sim, 0, &bb);
	}
	tap_ok(end < 0.7 * sum && end > 0.5 * sum,
	       "psim: 32 buckets on 2 stages overlap (%.2f of the serial time)", end / sum);
	psim_destroy(sim);
	plan.seg[0].count = 3;
	tap_ok(psim_create(l, 2, &h, &plan, &o) == NULL, "psim: a plan beyond the layers is refused");
}

int main(void)
{
	test_profile_parse();
	test_builtin();
	test_prec_and_batch();
	test_cost_terms();
	test_deltanet();
	test_deltanet_keys();
	test_fit();
	test_fit_multicard_errors();
	test_psim();
	return tap_done();
}
