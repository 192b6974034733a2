// SPDX-License-Identifier: MIT
/*
 * jsonbench VOCAB_DIR: host cost of JSON-schema constrained decoding per
 * token (userspace/chat/jsonvocab.c, jsonmatch.c) on the qwen2 vocabulary
 * (151k tokens) of tools/fetch-vocab. A reference document of a schema
 * with nested objects, an array, an enum and strings is tokenized; at
 * every token boundary of it the bench times
 *   - the check of the token that comes next (what a step costs when the
 *     sampled token is valid: one jm_try() of its bytes), and
 *   - the full vocabulary scan (what a step costs when it is not:
 *     jm_vocab_mask() over every token),
 * and reports the median and the worst position, in CPU time of this
 * thread (the machine is shared), with the share of the vocabulary each
 * scan allowed. Two more documents measure the same under the newer
 * keywords: "pattern" strings (zod's email and UUID patterns, a code
 * regex), number ranges with multipleOf (json_*_pattern keys), and the
 * grammar of schema and tools together, a tool call in the <tool_call>
 * form (json_*_tools keys). Prints "BENCH key value" lines and a
 * readable line each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

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

static const char schema_pat[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"email\",\"id\",\"code\",\"score\"],"
	"\"properties\":{\"email\":{\"type\":\"string\",\"maxLength\":40,\"pattern\":"
	"\"^(?:[A-Za-z0-9_'+\\\\-]+\\\\.)*[A-Za-z0-9_'+\\\\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\\\\-]*\\\\.)+[A-Za-z]{2,}$\"},"
	"\"id\":{\"type\":\"string\",\"pattern\":\"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$\"},"
	"\"code\":{\"type\":\"string\",\"pattern\":\"^[A-Z]{2}-\\\\d{3}$\"},"
	"\"score\":{\"type\":\"number\",\"minimum\":0,\"maximum\":100,\"multipleOf\":0.5}}}";
static const char doc_pat[] =
	"{\"email\": \"ada.lovelace@example.org\", \"id\": \"123e4567-e89b-12d3-a456-426614174000\", "
	"\"code\": \"AB-123\", \"score\": 42.5}";
static const char tools[] =
	"[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"strict\":true,\"parameters\":"
	"{\"type\":\"object\",\"properties\":{\"location\":{\"type\":\"string\"},\"unit\":{\"enum\":[\"c\",\"f\"]}},"
	"\"required\":[\"location\"],\"additionalProperties\":false}}},"
	"{\"type\":\"function\",\"function\":{\"name\":\"shell\",\"parameters\":{\"type\":\"object\"}}}]";
static const char doc_tools[] =
	"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"St James's Square, London\", "
	"\"unit\": \"c\"}}\n</tool_call>";

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

/*
 * The check and the scan at every token boundary of @doc under @s; BENCH
 * keys end with @suffix ("" for the reference document).
 */
static int bench(const struct tokenizer *t, const struct jm_vocab *v, struct jm_schema *s,
		 const char *doc, const char *suffix)
{
	int32_t ids[512], best;
	double *scan, *check, t0;
	float *logits, *masked;
	struct jm_state *st;
	int n, i, k, nv = tok_n_vocab(t), allowed = 0, ret = 1;

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
			fprintf(stderr, "jsonbench: token %d of the document%s refused\n", i, suffix);
			goto out;
		}
		t0 = now_us();
		allowed += jm_vocab_mask(v, st, logits, nv, masked, &best);
		scan[i] = now_us() - t0;
		jm_vocab_take(v, st, ids[i]);
	}
	if (!jm_accepting(st)) {
		fprintf(stderr, "jsonbench: the document%s is not whole\n", suffix);
		goto out;
	}
	qsort(scan, (size_t)n, sizeof(double), cmp_d);
	qsort(check, (size_t)n, sizeof(double), cmp_d);
	printf("BENCH json_check_us_median%s %.2f\nBENCH json_scan_ms_median%s %.2f\nBENCH json_scan_ms_max%s %.2f\n",
	       suffix, check[n / 2], suffix, scan[n / 2] / 1e3, suffix, scan[n - 1] / 1e3);
	printf("# JSON schema%s on the qwen2 vocabulary (%d tokens), %d positions of a %zu-byte document:\n"
	       "#   check of the next token: median %.2f us, worst %.2f us\n"
	       "#   full vocabulary scan:    median %.2f ms, worst %.2f ms, %.1f%% of the tokens allowed on average\n",
	       suffix, nv, n, strlen(doc), check[n / 2], check[n - 1], scan[n / 2] / 1e3, scan[n - 1] / 1e3,
	       100.0 * allowed / n / nv);
	ret = 0;
out:
	jm_free(st);
	free(logits);
	free(masked);
	free(scan);
	free(check);
	return ret;
}

int main(int argc, char **argv)
{
	char path[512], err[256];
	struct gguf_file *gf;
	struct tokenizer *t;
	struct jm_schema *s, *sp, *stl;
	struct jm_vocab *v;
	json_t *tj;
	double t0;
	int ret;

	snprintf(path, sizeof(path), "%s/ggml-vocab-qwen2.gguf", argc > 1 ? argv[1] : "build/vocab");
	gf = gguf_open(path, err, sizeof(err));
	t = gf ? tok_load(gf, err, sizeof(err)) : NULL;
	if (!t) {
		fprintf(stderr, "jsonbench: %s: %s\n", path, err);
		return 1;
	}
	s = jm_compile_text(schema, strlen(schema), err, sizeof(err));
	sp = s ? jm_compile_text(schema_pat, strlen(schema_pat), err, sizeof(err)) : NULL;
	tj = json_loads(tools, 0, NULL);
	stl = sp ? jm_compile_tools(NULL, tj, JM_TOOLS_AUTO, NULL, false, err, sizeof(err)) : NULL;
	json_decref(tj);
	if (!stl) {
		fprintf(stderr, "jsonbench: schema: %s\n", err);
		return 1;
	}
	t0 = now_us();
	v = jm_vocab_new(t);
	printf("BENCH json_vocab_build_ms %.1f\n", (now_us() - t0) / 1e3);
	ret = bench(t, v, s, doc, "") || bench(t, v, sp, doc_pat, "_pattern") ||
	      bench(t, v, stl, doc_tools, "_tools");
	jm_schema_put(s);
	jm_schema_put(sp);
	jm_schema_put(stl);
	jm_vocab_free(v);
	tok_free(t);
	gguf_close(gf);
	return ret;
}
