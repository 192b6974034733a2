// SPDX-License-Identifier: MIT
/*
 * The scalar reference forward (ref_forward.c) against llama.cpp's
 * reference vectors of the synthetic Qwen-family models
 * (tests/vectors/qwen/NAME.ref, models build/synth/NAME.gguf made by
 * `make synth-models`, which also checks each model's sha256 against the
 * vector file).
 *
 * F32 models: the reference's prompt logits and, after the same greedy
 * continuation, its final logits are within 1e-4 relative (max |a - b| /
 * max |b| over the sampled and top ids) of llama.cpp's, and its greedy
 * tokens are llama.cpp's: our reading of the architectures (qwen2 biases,
 * qwen3 q/k norm, qwen35 Gated DeltaNet and gated attention with IMROPE)
 * is llama.cpp's.
 *
 * Other types: llama.cpp computes with 8-bit (or F16) activations, so only
 * closeness is expected. The check is that llama.cpp's prompt logits are
 * within 15 % of our dequantize-then-F32 reference (measured: 1.1-2.2 %
 * for qwen2/qwen3, 2.5-6.4 % for qwen35; F16/BF16 0.05-0.9 %), which holds
 * only if llama.cpp decodes our blocks the way we do (a wrong block layout
 * puts them ~100 % apart); the distance is printed and the reference logits
 * are written to build/synth/NAME.deq for the guest test
 * (tests/tools/qwen_check.c), whose card logits must be at least as close.
 *
 * NAME.deq: "RKDQ", u32 n_cases, u32 n_vocab, then per case the n_vocab
 * F32 prompt logits, little endian.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_forward.h"
#include "refvec.h"
#include "tap.h"

#define VEC_DIR "tests/vectors/qwen"
#define MODEL_DIR "build/synth"
#define F32_TOL 1e-4
#define QUANT_TOL 0.15

/* ARCH-f32 or ARCH-f32-v512 (FORMAT.md). */
static bool is_f32(const char *name)
{
	size_t n = strlen(name);

	return (n > 4 && !strcmp(name + n - 4, "-f32")) ||
	       (n > 9 && !strcmp(name + n - 9, "-f32-v512"));
}

/* Feed tokens [from, n) at their positions; logits after the last. */
static int feed(struct ref_model *m, const int32_t *ids, int from, int n, float *logits)
{
	int i;

	for (i = from; i < n; i++)
		if (ref_forward(m, ids[i], i, i == n - 1 ? logits : NULL))
			return -1;
	return 0;
}

static int write_deq(const char *path, const struct refvec *rv, float *const *logits)
{
	uint32_t hdr[2] = { (uint32_t)rv->n_cases, (uint32_t)rv->n_vocab };
	FILE *f = fopen(path, "wb");
	int i, ok;

	if (!f)
		return -1;
	ok = fwrite("RKDQ", 4, 1, f) == 1 && fwrite(hdr, sizeof(hdr), 1, f) == 1;
	for (i = 0; ok && i < rv->n_cases; i++)
		ok = fwrite(logits[i], sizeof(float), (size_t)rv->n_vocab, f) ==
		     (size_t)rv->n_vocab;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* Greedy continuation on the reference; checks ids and final logits. */
static void check_greedy(struct ref_model *m, const struct refvec *rv, int ci, float *logits)
{
	const struct refvec_case *c = &rv->cases[ci];
	int i, pos = c->n_prompt, same = 1;
	double d;

	for (i = 0; i < c->n_gen; i++) {
		int32_t next = refvec_argmax(logits, (size_t)rv->n_vocab);

		if (next != c->gen[i]) {
			same = 0;
			break;
		}
		if (ref_forward(m, next, pos++, logits))
			break;
	}
	tap_ok(same && i == c->n_gen, "%s case %d: greedy %d tokens are llama.cpp's", rv->model,
	       ci, c->n_gen);
	if (!same)
		printf("#   token %d: reference %d, llama.cpp %d\n", i,
		       refvec_argmax(logits, (size_t)rv->n_vocab), c->gen[i]);
	d = refvec_rel_diff(rv, &c->final_logits, logits);
	tap_ok(same && d <= F32_TOL, "%s case %d: final logits within %g of llama.cpp (%.2e)",
	       rv->model, ci, F32_TOL, d);
}

static void check_file(const char *vec)
{
	char err[512], model[512], deq[512];
	struct refvec rv;
	struct ref_model *m;
	float *logits[REFVEC_MAX_CASES] = { 0 };
	double worst = 0.0;
	int ci;

	if (refvec_load(vec, &rv, err, sizeof(err))) {
		tap_ok(false, "%s parses: %s", vec, err);
		return;
	}
	snprintf(model, sizeof(model), MODEL_DIR "/%s.gguf", rv.model);
	snprintf(deq, sizeof(deq), MODEL_DIR "/%s.deq", rv.model);
	m = ref_load(model, 512, err, sizeof(err));
	if (!tap_ok(m != NULL, "%s: model loads (make synth-models)", rv.model)) {
		printf("#   %s\n", err);
		refvec_free(&rv);
		return;
	}
	tap_ok(m->c.n_vocab == rv.n_vocab, "%s: n_vocab %d matches the vectors' %d", rv.model,
	       m->c.n_vocab, rv.n_vocab);
	for (ci = 0; ci < rv.n_cases && m->c.n_vocab == rv.n_vocab; ci++) {
		const struct refvec_case *c = &rv.cases[ci];
		double d;

		logits[ci] = malloc(sizeof(float) * (size_t)rv.n_vocab);
		if (!logits[ci] || feed(m, c->prompt, 0, c->n_prompt, logits[ci])) {
			tap_ok(false, "%s case %d: reference forward runs", rv.model, ci);
			continue;
		}
		if (is_f32(rv.model)) {
			d = refvec_rel_diff(&rv, &c->prompt_logits, logits[ci]);
			tap_ok(d <= F32_TOL && refvec_argmax(logits[ci], (size_t)rv.n_vocab) ==
			       c->prompt_logits.argmax,
			       "%s case %d: prompt logits within %g of llama.cpp (%.2e)", rv.model,
			       ci, F32_TOL, d);
			float *tmp = malloc(sizeof(float) * (size_t)rv.n_vocab);

			if (tmp) {
				memcpy(tmp, logits[ci], sizeof(float) * (size_t)rv.n_vocab);
				check_greedy(m, &rv, ci, tmp);
				free(tmp);
			}
		} else {
			d = refvec_rel_diff_to(&rv, &c->prompt_logits, logits[ci]);
			tap_ok(d <= QUANT_TOL,
			       "%s case %d: llama.cpp's prompt logits within %g of the dequantized reference (%.2e)",
			       rv.model, ci, QUANT_TOL, d);
		}
		if (d > worst)
			worst = d;
		/* The next case starts a new sequence: fresh states. */
		ref_free(m);
		m = ref_load(model, 512, err, sizeof(err));
		if (!m)
			break;
	}
	printf("# %s: worst prompt-logit distance llama.cpp vs reference %.3e\n", rv.model, worst);
	tap_ok(m && write_deq(deq, &rv, logits) == 0, "%s: reference logits written to %s",
	       rv.model, deq);
	for (ci = 0; ci < REFVEC_MAX_CASES; ci++)
		free(logits[ci]);
	ref_free(m);
	refvec_free(&rv);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_ref(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && !strcmp(d->d_name + n - 4, ".ref");
}

int main(int argc, char **argv)
{
	struct dirent **list;
	char path[512];
	int n, i;

	if (argc > 1) {
		for (i = 1; i < argc; i++)
			check_file(argv[i]);
		return tap_done();
	}
	n = scandir(VEC_DIR, &list, is_ref, by_name);
	tap_ok(n > 0, "reference vectors found in " VEC_DIR);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), VEC_DIR "/%s", list[i]->d_name);
		check_file(path);
		free(list[i]);
	}
	if (n > 0)
		free(list);
	return tap_done();
}
