// SPDX-License-Identifier: MIT
/*
 * jsonbench VOCAB_DIR: host cost of JSON-schema constrained decoding per
 * token (userspace/llm/jsonvocab.c, jsonmatch.c) on the qwen2 vocabulary
 * (151k tokens) of tools/fetch-vocab. A reference document of a schema
 * with nested objects, an array, an enum and strings is tokenized; at
 * every token boundary of it the bench times
 *   - the check of the token that comes next (what a step costs when the
 *     sampled token is valid: one jm_try() of its bytes), and
 *   - the full vocabulary scan (what a step costs when it is not:
 *     jm_vocab_mask() over every token),
 * and reports the median and the worst position, in CPU time of this
 * thread (the machine is shared), with the share of the vocabulary each
 * scan allowed. Prints "BENCH key value" lines and a readable line each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gguf.h"
#include "jsonmatch.h"
#include "jsonvocab.h"
#include "tokenizer.h"

static const char schema[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"name\",\"age\",\"tags\",\"address\"],"
	"\"properties\":{\"name\":{\"type\":\"string\"},\"age\":{\"type\":\"integer\"},"
	"\"role\":{\"enum\":[\"admin\",\"user\",\"guest\"]},"
	"\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":4},"
	"\"address\":{\"$ref\":\"#/$defs/Address\"}},"
	"\"$defs\":{\"Address\":{\"type\":\"object\",\"properties\":{\"street\":{\"type\":\"string\"},"
	"\"zip\":{\"anyOf\":[{\"type\":\"integer\"},{\"type\":\"null\"}]}},\"required\":[\"street\"]}}}";
static const char doc[] =
	"{\"name\": \"Ada Lovelace\", \"age\": 36, \"role\": \"admin\", \"tags\": [\"math\", \"engines\"], "
	"\"address\": {\"street\": \"12 St James's Square\", \"zip\": null}}";

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	char path[512], err[256];
	struct gguf_file *gf;
	struct tokenizer *t;
	struct jm_schema *s;
	struct jm_state *st;
	struct jm_vocab *v;
	int32_t ids[512], best;
	double *scan, *check, t0;
	float *logits, *masked;
	int n, i, k, nv, allowed = 0;

	snprintf(path, sizeof(path), "%s/ggml-vocab-qwen2.gguf", argc > 1 ? argv[1] : "build/vocab");
	gf = gguf_open(path, err, sizeof(err));
	t = gf ? tok_load(gf, err, sizeof(err)) : NULL;
	if (!t) {
		fprintf(stderr, "jsonbench: %s: %s\n", path, err);
		return 1;
	}
	s = jm_compile_text(schema, strlen(schema), err, sizeof(err));
	if (!s) {
		fprintf(stderr, "jsonbench: schema: %s\n", err);
		return 1;
	}
	nv = tok_n_vocab(t);
	t0 = now_us();
	v = jm_vocab_new(t);
	printf("BENCH json_vocab_build_ms %.1f\n", (now_us() - t0) / 1e3);
	n = tok_encode(t, doc, false, ids, 512);
	logits = malloc((size_t)nv * sizeof(float));
	masked = malloc((size_t)nv * sizeof(float));
	scan = malloc((size_t)n * sizeof(double));
	check = malloc((size_t)n * sizeof(double));
	for (i = 0; i < nv; i++)
		logits[i] = (float)((i * 2654435761u) % 1000) / 100.0f;
	st = jm_new(s);
	for (i = 0; i < n; i++) {
		t0 = now_us();
		for (k = 0; k < 100; k++)
			if (!jm_vocab_ok(v, st, ids[i]))
				break;
		check[i] = (now_us() - t0) / 100;
		if (k < 100) {
			fprintf(stderr, "jsonbench: token %d of the document refused\n", i);
			return 1;
		}
		t0 = now_us();
		allowed += jm_vocab_mask(v, st, logits, nv, masked, &best);
		scan[i] = now_us() - t0;
		jm_vocab_take(v, st, ids[i]);
	}
	if (!jm_done(st)) {
		fprintf(stderr, "jsonbench: the document is not whole\n");
		return 1;
	}
	qsort(scan, (size_t)n, sizeof(double), cmp_d);
	qsort(check, (size_t)n, sizeof(double), cmp_d);
	printf("BENCH json_check_us_median %.2f\nBENCH json_scan_ms_median %.2f\nBENCH json_scan_ms_max %.2f\n",
	       check[n / 2], scan[n / 2] / 1e3, scan[n - 1] / 1e3);
	printf("# JSON schema on the qwen2 vocabulary (%d tokens), %d positions of a %zu-byte document:\n"
	       "#   check of the next token: median %.2f us, worst %.2f us\n"
	       "#   full vocabulary scan:    median %.2f ms, worst %.2f ms, %.1f%% of the tokens allowed on average\n",
	       nv, n, strlen(doc), check[n / 2], check[n - 1], scan[n / 2] / 1e3, scan[n - 1] / 1e3,
	       100.0 * allowed / n / nv);
	jm_free(st);
	jm_schema_put(s);
	jm_vocab_free(v);
	tok_free(t);
	gguf_close(gf);
	free(logits);
	free(masked);
	free(scan);
	free(check);
	return 0;
}
