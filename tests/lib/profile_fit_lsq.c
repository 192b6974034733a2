// SPDX-License-Identifier: MIT
/*
 * The least squares of the profile fit (profile_fit.h): all eight
 * parameters at once, on every figure, by Gauss-Newton. A figure's time
 * is linear in the parameters between the pipeline's kinks (where the job
 * a stage waits for changes), so each iteration takes the figures'
 * derivatives by a forward difference at the current parameters, solves
 * the linear problem, and the iteration ends when the parameters no
 * longer move (the kinks no longer change); with single-card figures
 * only, one iteration is the exact linear fit.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "profile_fit.h"

#define FIT_MAX_FIGS	(2 * FIT_MAX_POINTS + FIT_MAX_MC)
#define FIT_MAX_ITER	50

static const char *const param_names[FIT_N_PARAMS] = {
	"npu.job_ns", "npu.op_ns", "npu.op_row_ns", "card.dram_bytes_per_s",
	"npu.*_flops_per_s", "npu.vector_ops_per_s", "npu.deltanet_ns", "npu.deltanet_row_ns",
};

/*
 * The order of magnitude of each parameter in its fit unit (ns, ns, ns,
 * ns a byte, ns a FLOP, ns an element operation, ns, ns): the scale of
 * the difference step of a parameter that is 0 (an optional key left out).
 */
static const double param_typical[FIT_N_PARAMS] = {
	1e5, 1e3, 1e2, 2e-3, 1e-4, 4e-2, 1e5, 1e4,
};

/* The parameters in the fit's units: costs in ns, rates as ns a unit. */
static void get_x(const struct card_profile *p, double *x)
{
	x[0] = p->job_ns;
	x[1] = p->op_ns;
	x[2] = p->op_row_ns;
	x[3] = 1e9 / p->dram_bw;
	x[4] = 1e9 / p->mm_rate[COST_PREC_F16];
	x[5] = 1e9 / p->vec_rate;
	x[6] = p->dn_ns;
	x[7] = p->dn_row_ns;
}

static void set_x(struct card_profile *p, const double *x, double f32_ratio)
{
	p->job_ns = x[0];
	p->op_ns = x[1];
	p->op_row_ns = x[2];
	p->dram_bw = 1e9 / x[3];
	p->mm_rate[COST_PREC_W4A16] = p->mm_rate[COST_PREC_W8A16] =
		p->mm_rate[COST_PREC_F16] = 1e9 / x[4];
	p->mm_rate[COST_PREC_F32] = p->mm_rate[COST_PREC_F16] * f32_ratio;
	p->vec_rate = 1e9 / x[5];
	p->dn_ns = x[6];
	p->dn_row_ns = x[7];
}

/* A rate (tokens a second) is fitted as the time of one token. */
static double as_time(const char *key, double v)
{
	return strstr(key, "_tok_s") ? 1 / v : v;
}

/* The published figures as times; returns their count. */
static int wanted(const struct fit_data *d, double *y)
{
	int i, n = 0;

	for (i = 0; i < d->n; i++) {
		y[n++] = d->pt[i].ttft_ms;
		y[n++] = d->pt[i].tpot_ms;
	}
	for (i = 0; i < d->n_mc; i++)
		y[n++] = as_time(d->mc[i].key, d->mc[i].value);
	return n;
}

/* The model's figures on @p as times, in wanted()'s order. */
static int modelled(const struct fit_data *d, const struct card_profile *p, double *t,
		    char *err, size_t errlen)
{
	int i, n = 0;

	for (i = 0; i < d->n; i++) {
		fit_vendor_ms(p, &d->pt[i].shape, &t[n], &t[n + 1]);
		n += 2;
	}
	for (i = 0; i < d->n_mc; i++) {
		double v;

		if (fit_mc_value(p, &d->mc[i], &v, err, errlen))
			return -1;
		t[n++] = as_time(d->mc[i].key, v);
	}
	return 0;
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

/*
 * Normal equations of the relative residuals of the linear model
 * t = c + J x (rows[] = J / y, rhs = (y - c) / y), columns scaled to unit
 * size; @x out.
 */
static int linear_lsq(double rows[][FIT_N_PARAMS], const double *rhs, int n, double *x,
		      char *err, size_t errlen)
{
	double scale[FIT_N_PARAMS] = { 0 }, a[FIT_N_PARAMS][FIT_N_PARAMS] = { { 0 } };
	double b[FIT_N_PARAMS] = { 0 };
	int i, j, k;

	for (k = 0; k < n; k++)
		for (j = 0; j < FIT_N_PARAMS; j++)
			scale[j] = fmax(scale[j], fabs(rows[k][j]));
	for (j = 0; j < FIT_N_PARAMS; j++)
		if (!(scale[j] > 0)) {
			snprintf(err, errlen, "fit: no figure depends on %s (an empty column): "
				 "add a figure that exercises it", param_names[j]);
			return -1;
		}
	for (k = 0; k < n; k++)
		for (i = 0; i < FIT_N_PARAMS; i++) {
			for (j = 0; j < FIT_N_PARAMS; j++)
				a[i][j] += rows[k][i] / scale[i] * rows[k][j] / scale[j];
			b[i] += rows[k][i] / scale[i] * rhs[k];
		}
	if (solve(a, b, FIT_N_PARAMS)) {
		snprintf(err, errlen, "fit: singular system (the figures do not tell the parameters apart)");
		return -1;
	}
	for (j = 0; j < FIT_N_PARAMS; j++)
		x[j] = b[j] / scale[j];
	return 0;
}

/*
 * One Gauss-Newton step from @x (the parameters of @p): the linear
 * model of every figure at @x, its least squares into @xn.
 */
static int gn_step(const struct fit_data *d, const struct card_profile *p, double f32_ratio,
		   const double *x, const double *y, int n, double *xn, char *err, size_t errlen)
{
	static double rows[FIT_MAX_FIGS][FIT_N_PARAMS];
	double t0[FIT_MAX_FIGS], t1[FIT_MAX_FIGS], rhs[FIT_MAX_FIGS];
	struct card_profile q = *p;
	int i, j;

	set_x(&q, x, f32_ratio);
	if (modelled(d, &q, t0, err, errlen))
		return -1;
	for (i = 0; i < n; i++)
		rhs[i] = t0[i];
	for (j = 0; j < FIT_N_PARAMS; j++) {
		double xp[FIT_N_PARAMS], h = 1e-4 * fmax(fabs(x[j]), param_typical[j]);

		memcpy(xp, x, sizeof(xp));
		xp[j] += h;
		set_x(&q, xp, f32_ratio);
		if (modelled(d, &q, t1, err, errlen))
			return -1;
		for (i = 0; i < n; i++) {
			rows[i][j] = (t1[i] - t0[i]) / h;
			rhs[i] -= rows[i][j] * x[j];	/* t0 - J x: the constant c */
		}
	}
	for (i = 0; i < n; i++) {
		rhs[i] = (y[i] - rhs[i]) / y[i];
		for (j = 0; j < FIT_N_PARAMS; j++)
			rows[i][j] /= y[i];
	}
	return linear_lsq(rows, rhs, n, xn, err, errlen);
}

/* The model's figures and the residuals into @d. */
static int residuals(struct fit_data *d, const struct card_profile *p, char *err, size_t errlen)
{
	double ss = 0, r;
	int i;

	d->max_rel = 0;
	for (i = 0; i < d->n; i++) {
		struct fit_point *pt = &d->pt[i];

		fit_vendor_ms(p, &pt->shape, &pt->model_ttft_ms, &pt->model_tpot_ms);
		r = pt->model_ttft_ms / pt->ttft_ms - 1;
		d->max_rel = fmax(d->max_rel, fabs(r));
		ss += r * r;
		r = pt->model_tpot_ms / pt->tpot_ms - 1;
		d->max_rel = fmax(d->max_rel, fabs(r));
		ss += r * r;
	}
	for (i = 0; i < d->n_mc; i++) {
		if (fit_mc_value(p, &d->mc[i], &d->mc[i].model, err, errlen))
			return -1;
		r = d->mc[i].model / d->mc[i].value - 1;
		d->max_rel = fmax(d->max_rel, fabs(r));
		ss += r * r;
	}
	d->rms_rel = sqrt(ss / (2.0 * d->n + d->n_mc));
	return 0;
}

int fit_run(struct fit_data *d, struct card_profile *p, char *err, size_t errlen)
{
	double x[FIT_N_PARAMS], xn[FIT_N_PARAMS], y[FIT_MAX_FIGS], f32_ratio;
	int n = wanted(d, y), j, it;

	if (n < FIT_N_PARAMS) {
		snprintf(err, errlen, "fit: %d figures, the fit of %d parameters needs at least "
			 "as many", n, FIT_N_PARAMS);
		return -1;
	}
	f32_ratio = p->mm_rate[COST_PREC_F32] / p->mm_rate[COST_PREC_F16];
	get_x(p, x);
	for (it = 1; it <= FIT_MAX_ITER; it++) {
		double moved = 0;

		if (gn_step(d, p, f32_ratio, x, y, n, xn, err, errlen))
			return -1;
		for (j = 0; j < FIT_N_PARAMS; j++) {
			moved = fmax(moved, fabs(xn[j] - x[j]) / fmax(fabs(xn[j]), 1e-30));
			x[j] = xn[j];
		}
		if (moved < 1e-9)
			break;
	}
	if (it > FIT_MAX_ITER) {
		snprintf(err, errlen, "fit: the parameters still move after %d iterations",
			 FIT_MAX_ITER);
		return -1;
	}
	d->iterations = it;
	for (j = 0; j < FIT_N_PARAMS; j++)
		if (!(x[j] > 0)) {
			snprintf(err, errlen, "fit: %s comes out %g (<= 0): the model does not describe "
				 "these figures", param_names[j], x[j]);
			return -1;
		}
	set_x(p, x, f32_ratio);
	return residuals(d, p, err, errlen);
}
