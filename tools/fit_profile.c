// SPDX-License-Identifier: MIT
/*
 * fit_profile: fit the card profile's eight timing parameters, all at
 * once, to the vendor's single-card figures and the published multi-card
 * ones, and print the residuals (userspace/doc/timing.rst, "Fitting the
 * profile").
 *
 *   fit_profile [--figures FILE] [--multicard FILE] [--shapes DIR]
 *               [--profile FILE] [--write | --check]
 *
 * Defaults: tests/shapes/vendor-rk1828.txt, tests/shapes/vendor-multicard.txt,
 * tests/shapes, emulator/profiles/rk1828.conf. The profile's other keys (links, memory,
 * power, the F32 ratio) are the fit's priors. --write rewrites the fitted
 * values in the profile file in place (comments and other lines kept) and
 * appends the fitted keys the file has no line for;
 * --check exits 1 when a fitted value in the file differs from the fit by
 * more than 0.1 % (the file is stale). Exit status 0, 1 for a failed
 * check or fit, 2 for bad usage.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "profile_fit.h"

struct fitted {
	const char *key;
	double val;
};

static int fitted_values(const struct card_profile *p, struct fitted *f)
{
	int n = 0;

	f[n++] = (struct fitted){ "card.dram_bytes_per_s", p->dram_bw };
	f[n++] = (struct fitted){ "npu.w4a16_flops_per_s", p->mm_rate[COST_PREC_W4A16] };
	f[n++] = (struct fitted){ "npu.w8a16_flops_per_s", p->mm_rate[COST_PREC_W8A16] };
	f[n++] = (struct fitted){ "npu.f16_flops_per_s", p->mm_rate[COST_PREC_F16] };
	f[n++] = (struct fitted){ "npu.f32_flops_per_s", p->mm_rate[COST_PREC_F32] };
	f[n++] = (struct fitted){ "npu.vector_ops_per_s", p->vec_rate };
	f[n++] = (struct fitted){ "npu.job_ns", p->job_ns };
	f[n++] = (struct fitted){ "npu.op_ns", p->op_ns };
	f[n++] = (struct fitted){ "npu.op_row_ns", p->op_row_ns };
	f[n++] = (struct fitted){ "npu.deltanet_ns", p->dn_ns };
	f[n++] = (struct fitted){ "npu.deltanet_row_ns", p->dn_row_ns };
	return n;
}

/*
 * Rewrite the "key = value" lines of @f in @path, keeping everything
 * else; a key of @f the file does not have yet (an optional key such as
 * npu.deltanet_ns) is appended at the end, after one comment line.
 */
static int write_back(const char *path, const struct fitted *f, int n)
{
	FILE *in = fopen(path, "r"), *out;
	char tmp[4096], line[1024], seen[16] = { 0 };
	int i, added = 0;

	if (n > (int)sizeof(seen)) {
		fprintf(stderr, "%s: %d keys, at most %zu\n", path, n, sizeof(seen));
		if (in)
			fclose(in);
		return -1;
	}
	if (!in) {
		perror(path);
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	out = fopen(tmp, "w");
	if (!out) {
		perror(tmp);
		fclose(in);
		return -1;
	}
	while (fgets(line, sizeof(line), in)) {
		for (i = 0; i < n; i++) {
			size_t kl = strlen(f[i].key);

			if (!strncmp(line, f[i].key, kl) && strchr(" =", line[kl])) {
				snprintf(line, sizeof(line), "%s = %.4g\n", f[i].key, f[i].val);
				seen[i] = 1;
				break;
			}
		}
		fputs(line, out);
	}
	fclose(in);
	for (i = 0; i < n; i++) {
		if (seen[i])
			continue;
		if (!added++)
			fputs("\n# added by fit_profile --write (the file had no line for them)\n", out);
		fprintf(out, "%s = %.4g\n", f[i].key, f[i].val);
	}
	if (fclose(out) || rename(tmp, path)) {
		perror(path);
		return -1;
	}
	return 0;
}

static void usage(FILE *o)
{
	fprintf(o, "usage: fit_profile [--figures FILE] [--multicard FILE] [--shapes DIR] "
		"[--profile FILE] [--write | --check]\n");
}

/*
 * Relative difference |a - b| / |b|, guarded: 0 when both are 0, and
 * INFINITY (always "stale") when only b is 0 or either is not finite,
 * so --check never divides by zero.
 */
static double rel_diff(double a, double b)
{
	if (a == b)
		return 0;
	if (b == 0 || !isfinite(a) || !isfinite(b))
		return INFINITY;
	return fabs(a - b) / fabs(b);
}

static void print_multicard(const struct fit_data *d)
{
	int i;

	if (!d->n_mc)
		return;
	printf("\n%-12s %5s %-5s %-20s %10s %10s %8s  %s\n", "shape", "cards", "link", "figure",
	       "published", "model", "resid", "source");
	for (i = 0; i < d->n_mc; i++) {
		const struct fit_mc *m = &d->mc[i];

		printf("%-12s %5d %-5s %-20s %10.2f %10.2f %+7.1f%%  %s\n", m->shape_key,
		       m->dep.cards, cost_link_name(m->dep.link), m->key, m->value, m->model,
		       100 * (m->model / m->value - 1), m->source);
	}
}

int main(int argc, char **argv)
{
	const char *figures = "tests/shapes/vendor-rk1828.txt", *shapes = "tests/shapes";
	const char *multicard = "tests/shapes/vendor-multicard.txt";
	const char *path = "emulator/profiles/rk1828.conf";
	static const struct option opts[] = {
		{ "figures", required_argument, NULL, 'f' },
		{ "multicard", required_argument, NULL, 'm' },
		{ "shapes", required_argument, NULL, 's' },
		{ "profile", required_argument, NULL, 'p' },
		{ "write", no_argument, NULL, 'w' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct fit_data d;
	struct card_profile file, p;
	struct fitted fit[16], old[16];
	char err[512];
	int c, i, n, write = 0, check = 0, stale = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f': figures = optarg; break;
		case 'm': multicard = optarg; break;
		case 's': shapes = optarg; break;
		case 'p': path = optarg; break;
		case 'w': write = 1; break;
		case 'c': check = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || (write && check)) {
		usage(stderr);
		return 2;
	}
	if (card_profile_load(&file, path, err, sizeof(err)) ||
	    fit_load(&d, figures, shapes, err, sizeof(err)) ||
	    fit_load_multicard(&d, multicard, shapes, err, sizeof(err))) {
		fprintf(stderr, "fit_profile: %s\n", err);
		return 1;
	}
	p = file;
	if (fit_run(&d, &p, err, sizeof(err))) {
		fprintf(stderr, "fit_profile: %s\n", err);
		return 1;
	}
	printf("# joint fit of %d parameters on %d single-card models (%d figures) and %d "
	       "multi-card figures, %d iterations; link PCIe %.3g B/s + %.0f ns\n",
	       FIT_N_PARAMS, d.n, 2 * d.n, d.n_mc, d.iterations,
	       p.link[COST_LINK_PCIE].bytes_per_s, p.link[COST_LINK_PCIE].latency_ns);
	n = fitted_values(&p, fit);
	fitted_values(&file, old);
	for (i = 0; i < n; i++) {
		double rel = rel_diff(old[i].val, fit[i].val);

		printf("%s = %.4g%s\n", fit[i].key, fit[i].val,
		       rel > 1e-3 ? "   (the file has a different value)" : "");
		stale |= rel > 1e-3;
	}
	printf("\n%-14s %9s %9s %7s   %9s %9s %7s\n", "model", "TTFT ms", "model", "resid",
	       "TPOT ms", "model", "resid");
	for (i = 0; i < d.n; i++) {
		const struct fit_point *pt = &d.pt[i];

		printf("%-14s %9.2f %9.2f %+6.1f%%   %9.2f %9.2f %+6.1f%%\n", pt->key, pt->ttft_ms,
		       pt->model_ttft_ms, 100 * (pt->model_ttft_ms - pt->ttft_ms) / pt->ttft_ms,
		       pt->tpot_ms, pt->model_tpot_ms,
		       100 * (pt->model_tpot_ms - pt->tpot_ms) / pt->tpot_ms);
	}
	print_multicard(&d);
	printf("residuals: max %.1f %%, rms %.1f %%\n", 100 * d.max_rel, 100 * d.rms_rel);
	if (write) {
		if (write_back(path, fit, n))
			return 1;
		printf("wrote the fitted values into %s\n", path);
	}
	if (check && stale) {
		fprintf(stderr, "fit_profile: %s is stale: run 'make fit-profile'\n", path);
		return 1;
	}
	return 0;
}
