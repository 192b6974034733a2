// SPDX-License-Identifier: MIT
/*
 * The card profile fit (profile_fit.h): the features of each vendor
 * figure are the cost model's own work counts, so the fitted profile and
 * the cost function cannot disagree about what a parameter means.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "profile_fit.h"

int fit_load(struct fit_data *d, const char *figures, const char *shapes_dir,
	     char *err, size_t errlen)
{
	FILE *f = fopen(figures, "r");
	char line[256];
	int ln = 0;

	memset(d, 0, sizeof(*d));
	if (!f) {
		snprintf(err, errlen, "%s: cannot open", figures);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct fit_point *pt = &d->pt[d->n];
		char path[512], key[64], *c = strchr(line, '#');
		double a, b;
		int n;

		ln++;
		if (c)
			*c = '\0';
		n = sscanf(line, "%63s %lf %lf", key, &a, &b);
		if (n <= 0)
			continue;
		if (n != 3 || a <= 0 || b <= 0 || d->n == FIT_MAX_POINTS) {
			snprintf(err, errlen, "%s:%d: expected 'shape ttft_ms tpot_ms'%s", figures,
				 ln, d->n == FIT_MAX_POINTS ? " (too many lines)" : "");
			fclose(f);
			return -1;
		}
		snprintf(path, sizeof(path), "%s/%s.shape", shapes_dir, key);
		if (shape_load(&pt->shape, path, err, errlen)) {
			fclose(f);
			return -1;
		}
		snprintf(pt->key, sizeof(pt->key), "%s", key);
		pt->ttft_ms = a;
		pt->tpot_ms = b;
		d->n++;
	}
	fclose(f);
	if (d->n < FIT_N_PARAMS) {
		snprintf(err, errlen, "%s: %d models, the fit needs at least %d", figures, d->n,
			 FIT_N_PARAMS);
		return -1;
	}
	return 0;
}

/* Work of one EXEC of every layer of @s (and the head) on @b. */
static void job_work(const struct model_shape *s, const struct cost_batch *b,
		     struct cost_work *w)
{
	struct cost_layer l;
	struct cost_head h;
	uint32_t i;

	memset(w, 0, sizeof(*w));
	for (i = 0; i < s->layers; i++) {
		shape_cost_layer(s, i, &l);
		cost_layer_work(&l, b, w);
	}
	shape_cost_head(s, &h);
	cost_head_work(&h, b, w);
}

/* Link time (ns) of the copies around one job of @n tokens, PCIe. */
static double link_ns(const struct card_profile *p, const struct model_shape *s, uint32_t n)
{
	return cost_link_ns(p, COST_LINK_PCIE, (uint64_t)n * s->dim * 4) +
	       cost_link_ns(p, COST_LINK_PCIE, (uint64_t)s->vocab * 4);
}

static void prefill_work(const struct model_shape *s, struct cost_work *w)
{
	struct cost_batch b = { 0 };

	cost_batch_add_seq(&b, FIT_PROMPT, 0, 1);
	job_work(s, &b, w);
}

/* Mean work of the decode steps (the model is linear in the work). */
static void decode_work(const struct model_shape *s, struct cost_work *w)
{
	struct cost_work one, sum;
	uint32_t pos;
	int i, steps = FIT_GEN - 1;

	memset(&sum, 0, sizeof(sum));
	for (pos = FIT_PROMPT; pos < FIT_PROMPT + FIT_GEN - 1; pos++) {
		struct cost_batch b = { 0 };

		cost_batch_add_seq(&b, 1, pos, 1);
		job_work(s, &b, &one);
		sum.ops += one.ops;
		sum.op_rows += one.op_rows;
		sum.dram_bytes += one.dram_bytes;
		sum.vec_ops += one.vec_ops;
		for (i = 0; i < COST_PREC_N; i++)
			sum.mm_flops[i] += one.mm_flops[i];
	}
	*w = sum;
	w->ops /= steps;
	w->op_rows /= steps;
	w->dram_bytes /= steps;
	w->vec_ops /= steps;
	for (i = 0; i < COST_PREC_N; i++)
		w->mm_flops[i] /= steps;
}

void fit_vendor_ms(const struct card_profile *p, const struct model_shape *s,
		   double *ttft_ms, double *tpot_ms)
{
	struct cost_work w;

	prefill_work(s, &w);
	*ttft_ms = (cost_work_ns(p, &w) + link_ns(p, s, FIT_PROMPT)) / 1e6;
	decode_work(s, &w);
	*tpot_ms = (cost_work_ns(p, &w) + link_ns(p, s, 1)) / 1e6;
}

/* The features the six parameters multiply. */
static void features(const struct cost_work *w, double *f)
{
	f[0] = 1;
	f[1] = w->ops;
	f[2] = w->op_rows;
	f[3] = w->dram_bytes;
	f[4] = w->mm_flops[COST_PREC_W4A16] + w->mm_flops[COST_PREC_W8A16] +
	       w->mm_flops[COST_PREC_F16];
	f[5] = w->vec_ops;
}

/* Solve the n x n system @a x = @b in place (partial pivoting); -1 if singular. */
static int solve(double a[FIT_N_PARAMS][FIT_N_PARAMS], double *b, int n)
{
	int i, j, k;

	for (i = 0; i < n; i++) {
		int piv = i;

		for (k = i + 1; k < n; k++)
			if (fabs(a[k][i]) > fabs(a[piv][i]))
				piv = k;
		if (fabs(a[piv][i]) < 1e-12)
			return -1;
		for (j = 0; j < n; j++) {
			double t = a[i][j];

			a[i][j] = a[piv][j];
			a[piv][j] = t;
		}
		{
			double t = b[i];

			b[i] = b[piv];
			b[piv] = t;
		}
		for (k = i + 1; k < n; k++) {
			double m = a[k][i] / a[i][i];

			for (j = i; j < n; j++)
				a[k][j] -= m * a[i][j];
			b[k] -= m * b[i];
		}
	}
	for (i = n - 1; i >= 0; i--) {
		for (j = i + 1; j < n; j++)
			b[i] -= a[i][j] * b[j];
		b[i] /= a[i][i];
	}
	return 0;
}

static const char *const param_names[FIT_N_PARAMS] = {
	"npu.job_ns", "npu.op_ns", "npu.op_row_ns", "card.dram_bytes_per_s",
	"npu.*_flops_per_s", "npu.vector_ops_per_s",
};

/*
 * Normal equations of the relative residuals, columns scaled to unit
 * size; x[] in the features' units (ns, ns, ns/byte, ns/FLOP, ns/op).
 */
static int least_squares(const struct fit_data *d, const struct card_profile *p, double *x,
			 char *err, size_t errlen)
{
	double rows[2 * FIT_MAX_POINTS][FIT_N_PARAMS], y[2 * FIT_MAX_POINTS];
	double scale[FIT_N_PARAMS] = { 0 }, a[FIT_N_PARAMS][FIT_N_PARAMS] = { { 0 } };
	double b[FIT_N_PARAMS] = { 0 };
	int n = 0, i, j, k;

	for (i = 0; i < d->n; i++) {
		for (k = 0; k < 2; k++) {
			const struct model_shape *s = &d->pt[i].shape;
			double want = (k ? d->pt[i].tpot_ms : d->pt[i].ttft_ms) * 1e6;
			struct cost_work w;

			if (k)
				decode_work(s, &w);
			else
				prefill_work(s, &w);
			features(&w, rows[n]);
			y[n] = want - link_ns(p, s, k ? 1 : FIT_PROMPT);
			for (j = 0; j < FIT_N_PARAMS; j++)
				rows[n][j] /= want;
			y[n++] /= want;
		}
	}
	for (k = 0; k < n; k++)
		for (j = 0; j < FIT_N_PARAMS; j++)
			scale[j] = fmax(scale[j], fabs(rows[k][j]));
	for (j = 0; j < FIT_N_PARAMS; j++)
		if (!(scale[j] > 0)) {
			snprintf(err, errlen, "fit: no figure depends on %s (an empty column): "
				 "add a model that exercises it", param_names[j]);
			return -1;
		}
	for (k = 0; k < n; k++)
		for (i = 0; i < FIT_N_PARAMS; i++) {
			for (j = 0; j < FIT_N_PARAMS; j++)
				a[i][j] += rows[k][i] / scale[i] * rows[k][j] / scale[j];
			b[i] += rows[k][i] / scale[i] * y[k];
		}
	if (solve(a, b, FIT_N_PARAMS)) {
		snprintf(err, errlen, "fit: singular system (the figures do not tell the parameters apart)");
		return -1;
	}
	for (j = 0; j < FIT_N_PARAMS; j++) {
		x[j] = b[j] / scale[j];
		if (!(x[j] > 0)) {
			snprintf(err, errlen, "fit: %s comes out %g (<= 0): the model does not describe "
				 "these figures", param_names[j], x[j]);
			return -1;
		}
	}
	return 0;
}

int fit_run(struct fit_data *d, struct card_profile *p, char *err, size_t errlen)
{
	double x[FIT_N_PARAMS], f32_ratio, ss = 0;
	int i;

	f32_ratio = p->mm_rate[COST_PREC_F32] / p->mm_rate[COST_PREC_F16];
	if (least_squares(d, p, x, err, errlen))
		return -1;
	p->job_ns = x[0];
	p->op_ns = x[1];
	p->op_row_ns = x[2];
	p->dram_bw = 1e9 / x[3];
	p->mm_rate[COST_PREC_W4A16] = p->mm_rate[COST_PREC_W8A16] =
		p->mm_rate[COST_PREC_F16] = 1e9 / x[4];
	p->mm_rate[COST_PREC_F32] = p->mm_rate[COST_PREC_F16] * f32_ratio;
	p->vec_rate = 1e9 / x[5];
	d->max_rel = 0;
	for (i = 0; i < d->n; i++) {
		struct fit_point *pt = &d->pt[i];
		double r1, r2;

		fit_vendor_ms(p, &pt->shape, &pt->model_ttft_ms, &pt->model_tpot_ms);
		r1 = (pt->model_ttft_ms - pt->ttft_ms) / pt->ttft_ms;
		r2 = (pt->model_tpot_ms - pt->tpot_ms) / pt->tpot_ms;
		d->max_rel = fmax(d->max_rel, fmax(fabs(r1), fabs(r2)));
		ss += r1 * r1 + r2 * r2;
	}
	d->rms_rel = sqrt(ss / (2.0 * d->n));
	return 0;
}
