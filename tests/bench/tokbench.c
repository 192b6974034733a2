// SPDX-License-Identifier: MIT
/*
 * tokbench VOCAB_DIR: host timing of the byte-level BPE tokenizer
 * (tests/run-bench section 4), with the real qwen2 and llama-bpe
 * vocabularies of tools/fetch-vocab:
 *   - runs without a word break: 'A' x 65536 and x 131072, CJK x 13000
 *     and x 26000 (the time ratio of the two sizes shows the growth: 2.0
 *     is linear);
 *   - ordinary text: llama.cpp's test inputs of the vocabulary repeated to
 *     1 MiB (MiB/s and tokens/s).
 * Each figure is the median of 5 runs, in CPU time of the encoding thread
 * (the build machine is shared). Prints "BENCH key value" lines and a
 * readable line per figure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gguf.h"
#include "tokenizer.h"
#include "utf8.h"

#define REPS 5

static double now_ms(void)
{
	struct timespec ts;

	/* CPU time of this thread: the host is shared, wall time is noise. */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median ms of encoding @s; *n gets the token count. */
static double time_encode(const struct tokenizer *t, const char *s, size_t len, int *n)
{
	int max = tok_max_tokens(t, len), r;
	int32_t *ids = malloc((size_t)max * sizeof(*ids));
	double ms[REPS];

	for (r = 0; r < REPS; r++) {
		double t0 = now_ms();

		*n = tok_encode_ex(t, s, len, NULL, ids, max);
		ms[r] = now_ms() - t0;
	}
	free(ids);
	qsort(ms, REPS, sizeof(ms[0]), cmp_d);
	return ms[REPS / 2];
}

static char *cjk(size_t n, size_t *len)
{
	char *s = malloc(3 * n + 1);
	uint32_t x = 12345;
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		o += utf8_encode(0x4e00 + (x >> 8) % 0x51a6, s + o);
	}
	*len = o;
	return s;
}

/* llama.cpp's .inp test inputs of @name, repeated to @size bytes. */
static char *text(const char *dir, const char *name, size_t size)
{
	char path[4096], *buf, *out;
	FILE *f;
	size_t n, o = 0;

	snprintf(path, sizeof(path), "%s/ggml-vocab-%s.gguf.inp", dir, name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	buf = malloc(1 << 20);
	n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	out = malloc(size + 1);
	while (n && o < size) {
		size_t k = n < size - o ? n : size - o;

		memcpy(out + o, buf, k);
		o += k;
	}
	out[o] = '\0';
	free(buf);
	return out;
}

static void pair(const struct tokenizer *t, const char *vocab, const char *what,
		 const char *key, const char *s1, size_t l1, const char *s2, size_t l2)
{
	int n1, n2;
	double a = time_encode(t, s1, l1, &n1), b = time_encode(t, s2, l2, &n2);

	printf("%s: %s: %zu bytes %.2f CPU ms (%d tokens), %zu bytes %.2f CPU ms (%d tokens), ratio %.2f\n",
	       vocab, what, l1, a, n1, l2, b, n2, a > 0 ? b / a : 0.0);
	printf("BENCH tok_%s_%s_ms %.3f\n", vocab, key, b);
	printf("BENCH tok_%s_%s_ratio %.2f\n", vocab, key, a > 0 ? b / a : 0.0);
}

static int bench(const char *dir, const char *name, const char *key)
{
	char path[4096], err[512];
	struct gguf_file *f;
	struct tokenizer *t;
	size_t l1, l2;
	char *as, *c1, *c2, *tx;
	double ms;
	int n;

	snprintf(path, sizeof(path), "%s/ggml-vocab-%s.gguf", dir, name);
	f = gguf_open(path, err, sizeof(err));
	t = f ? tok_load(f, err, sizeof(err)) : NULL;
	if (!t) {
		fprintf(stderr, "tokbench: %s\n", err);
		gguf_close(f);
		return -1;
	}
	as = malloc(131072);
	memset(as, 'A', 131072);
	pair(t, key, "'A' x 65536 / x 131072", "A131072", as, 65536, as, 131072);
	c1 = cjk(13000, &l1);
	c2 = cjk(26000, &l2);
	pair(t, key, "CJK x 13000 / x 26000", "cjk26000", c1, l1, c2, l2);
	tx = text(dir, name, 1 << 20);
	if (tx) {
		ms = time_encode(t, tx, strlen(tx), &n);
		printf("%s: 1 MiB of llama.cpp's test text: %.1f CPU ms, %.1f MiB/s, %.0f tokens/s\n", key,
		       ms, ms > 0 ? 1000.0 / ms : 0.0, ms > 0 ? n * 1000.0 / ms : 0.0);
		printf("BENCH tok_%s_text_mib_s %.2f\n", key, ms > 0 ? 1000.0 / ms : 0.0);
	}
	free(as);
	free(c1);
	free(c2);
	free(tx);
	tok_free(t);
	gguf_close(f);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "build/vocab";
	int rc = 0;

	rc |= bench(dir, "qwen2", "qwen2");
	rc |= bench(dir, "llama-bpe", "llama3");
	return rc ? 1 : 0;
}
