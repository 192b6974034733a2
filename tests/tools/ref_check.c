// SPDX-License-Identifier: MIT
/*
 * ref_check MODEL LOGITS_FILE
 *
 * Recomputes the logits stored in LOGITS_FILE (written by
 * `rk1828-llm run --dump-logits FILE`) with the scalar reference forward
 * (tests/lib/ref_forward.c) and compares them.
 *
 * LOGITS_FILE, little endian: int32 n_tokens, int32 tokens[n_tokens],
 * int32 n_vocab, float logits[n_vocab] = the logits after the last token.
 *
 * Prints the max abs diff, the max relative diff max|a-b| / max|b| (b the
 * reference) and the argmax of both. Exit: 0 when rel <= 1e-4, 1 when
 * larger, 2 on bad input (with a message on stderr).
 */
#include <endian.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_forward.h"
#include "rk1828/util.h"

#define REL_TOL 1e-4

static int read_i32(FILE *f, int32_t *v)
{
	uint32_t u;

	if (fread(&u, 4, 1, f) != 1)
		return -1;
	*v = (int32_t)le32toh(u);
	return 0;
}

int main(int argc, char **argv)
{
	struct ref_model *m = NULL;
	int32_t n_tok, n_vocab, *tokens = NULL;
	float *got = NULL, *ref = NULL;
	char err[512];
	double max_abs = 0.0, max_ref = 0.0, rel;
	int rc = 2, i;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: %s MODEL LOGITS_FILE\n", argv[0]);
		return 2;
	}
	f = fopen(argv[2], "rb");
	if (!f) {
		fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	if (read_i32(f, &n_tok) || n_tok < 1 || n_tok > (1 << 24)) {
		fprintf(stderr, "%s: bad or missing n_tokens\n", argv[2]);
		goto out;
	}
	tokens = malloc(sizeof(*tokens) * (size_t)n_tok);
	if (!tokens) {
		fprintf(stderr, "%s: out of memory\n", argv[2]);
		goto out;
	}
	for (i = 0; i < n_tok; i++) {
		if (read_i32(f, &tokens[i])) {
			fprintf(stderr, "%s: truncated token list (%d of %d)\n", argv[2], i, n_tok);
			goto out;
		}
	}
	if (read_i32(f, &n_vocab) || n_vocab < 1 || n_vocab > (1 << 24)) {
		fprintf(stderr, "%s: bad or missing n_vocab\n", argv[2]);
		goto out;
	}
	got = malloc(sizeof(float) * (size_t)n_vocab);
	ref = malloc(sizeof(float) * (size_t)n_vocab);
	if (!got || !ref) {
		fprintf(stderr, "%s: out of memory\n", argv[2]);
		goto out;
	}
	for (i = 0; i < n_vocab; i++) {
		uint32_t u;

		if (fread(&u, 4, 1, f) != 1) {
			fprintf(stderr, "%s: truncated logits (%d of %d)\n", argv[2], i, n_vocab);
			goto out;
		}
		u = le32toh(u);
		memcpy(&got[i], &u, 4);
	}
	if (fgetc(f) != EOF) {
		fprintf(stderr, "%s: trailing bytes after the logits\n", argv[2]);
		goto out;
	}

	m = ref_load(argv[1], n_tok, err, sizeof(err));
	if (!m) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	if (m->c.n_ctx < n_tok) {
		fprintf(stderr, "%s: %d tokens exceed the model context %d\n", argv[2], n_tok,
			m->c.n_ctx);
		goto out;
	}
	if (n_vocab != m->c.n_vocab) {
		fprintf(stderr, "%s: n_vocab %d, model has %d\n", argv[2], n_vocab, m->c.n_vocab);
		goto out;
	}
	for (i = 0; i < n_tok; i++) {
		if (ref_forward(m, tokens[i], i, i == n_tok - 1 ? ref : NULL)) {
			fprintf(stderr, "%s: token %d (id %d) rejected by the model\n", argv[2], i,
				tokens[i]);
			goto out;
		}
	}
	for (i = 0; i < n_vocab; i++) {
		double d = fabs((double)got[i] - ref[i]);

		if (!(d <= max_abs))	/* NaN propagates as a failure */
			max_abs = isnan(d) ? INFINITY : d;
		if (fabs(ref[i]) > max_ref)
			max_ref = fabs(ref[i]);
	}
	rel = max_ref > 0 ? max_abs / max_ref : max_abs;
	printf("tokens %d vocab %d: max abs diff %.3g, max rel diff %.3g, argmax %zu (ref %zu)\n",
	       n_tok, n_vocab, max_abs, rel, util_argmax(got, (size_t)n_vocab),
	       util_argmax(ref, (size_t)n_vocab));
	rc = rel <= REL_TOL ? 0 : 1;
	if (rc)
		printf("FAIL: relative difference above %g\n", REL_TOL);
out:
	fclose(f);
	ref_free(m);
	free(tokens);
	free(got);
	free(ref);
	return rc;
}
