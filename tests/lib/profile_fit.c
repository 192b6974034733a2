// SPDX-License-Identifier: MIT
/*
 * The card profile fit's inputs and its model of each figure
 * (profile_fit.h): every figure is computed with the cost function and
 * the prediction themselves, so the fitted profile and the cost function
 * cannot disagree about what a parameter means. The least squares:
 * profile_fit_lsq.c.
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
	if (!d->n) {
		snprintf(err, errlen, "%s: no models", figures);
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

int fit_mc_value(const struct card_profile *p, const struct fit_mc *f, double *val,
		 char *err, size_t errlen)
{
	static struct shape_prediction sp;	/* 2 KiB; the fit is single-threaded */

	if (shape_predict(&f->shape, p, &f->dep, &sp, err, errlen))
		return -1;
	if (shape_fig_get(&sp, f->key, val) || !(*val > 0)) {
		snprintf(err, errlen, "%s on %d cards: no figure %s", f->shape_key, f->dep.cards,
			 f->key);
		return -1;
	}
	return 0;
}

/* One line "shape cards link bucket key value source" into @f; -1 if malformed. */
static int parse_mc(const char *line, struct fit_mc *f)
{
	char link[16];
	unsigned int bucket;
	int n;

	memset(f, 0, sizeof(*f));
	n = sscanf(line, "%63s %d %15s %u %39s %lf %31s", f->shape_key, &f->dep.cards, link,
		   &bucket, f->key, &f->value, f->source);
	if (n != 7 || f->dep.cards < 1 || f->dep.cards > PLAN_MAX_CARDS || !bucket ||
	    !(f->value > 0) || cost_link_parse(link, &f->dep.link))
		return -1;
	f->dep.bucket = bucket;
	f->dep.n_ctx = FIT_MC_CTX;
	return 0;
}

int fit_load_multicard(struct fit_data *d, const char *figures, const char *shapes_dir,
		       char *err, size_t errlen)
{
	FILE *f = fopen(figures, "r");
	char line[512], path[512];
	struct card_profile prof;
	int ln = 0, ret = -1;

	if (card_profile_builtin(&prof, err, errlen)) {
		if (f)
			fclose(f);
		return -1;
	}
	if (!f) {
		snprintf(err, errlen, "%s: cannot open", figures);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct fit_mc *mc = &d->mc[d->n_mc];
		char *c = strchr(line, '#'), word[2];
		double v;

		ln++;
		if (c)
			*c = '\0';
		if (sscanf(line, "%1s", word) != 1)
			continue;
		if (d->n_mc == FIT_MAX_MC || parse_mc(line, mc)) {
			snprintf(err, errlen, "%s:%d: expected 'shape cards link bucket key value "
				 "source'%s", figures, ln, d->n_mc == FIT_MAX_MC ? " (too many lines)" : "");
			goto out;
		}
		snprintf(path, sizeof(path), "%s/%s.shape", shapes_dir, mc->shape_key);
		if (shape_load(&mc->shape, path, err, errlen))
			goto out;
		/* the key and the deployment checked on the built-in profile */
		if (fit_mc_value(&prof, mc, &v, err, errlen)) {
			char why[256];

			snprintf(why, sizeof(why), "%s", err);
			snprintf(err, errlen, "%s:%d: %s", figures, ln, why);
			goto out;
		}
		d->n_mc++;
	}
	ret = 0;
out:
	fclose(f);
	return ret;
}
