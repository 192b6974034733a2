// SPDX-License-Identifier: MIT
/*
 * llama-ref-dump: write llama.cpp's answers for one model as rk1828
 * reference vectors (tests/vectors/qwen/FORMAT.md describes the format).
 *
 *   llama-ref-dump MODEL.gguf CASES.txt FORCED.txt N_GEN > OUT.ref
 *
 * Built only by tools/gen-ref-vectors, against the public API of the
 * llama.cpp it builds (include/llama.h); never part of `make`.
 *
 * CASES.txt: one prompt per line (UTF-8; the two-character escapes \n and
 * \\ stand for a newline and a backslash). For each prompt, llama.cpp
 * tokenizes it (add_special = true, so BOS only where the vocabulary asks
 * for it; parse_special = false), decodes the whole prompt as one batch,
 * then generates N_GEN tokens greedily (argmax, lowest id on ties), one
 * llama_decode() per token. Written per case: the prompt ids, the
 * generated ids, the logits after the prompt ("prompt") and after the last
 * generated token is decoded ("final").
 *
 * Teacher forcing: the first prompt continued greedily by this model to
 * 32 tokens ("forced_ids") is decoded again as one batch with logits at
 * every position, and the argmax of each position is written
 * ("forced_top1"): the model's own text, on which it is confident. The
 * same for the first 32 tokens of FORCED.txt (one line of natural text,
 * "text_ids" / "text_top1"), where a random synthetic model's top-2
 * logits are often near ties.
 *
 * Logits are written as a fixed sample (REF_SAMPLES ids i * n_vocab /
 * REF_SAMPLES) plus the REF_TOP largest (id:value), the argmax and
 * max|logit| of the whole vector, with %.9g (float round trip).
 *
 * The context is set up so that F32 weights compute in F32 end to end:
 * K and V caches in F32, flash attention off, one sequence, 2 threads.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"

#define REF_SAMPLES	512
#define REF_TOP		32
#define REF_FORCED	32
#define MAX_TOKENS	512

static void quiet_log(enum ggml_log_level level, const char *text, void *user)
{
	(void)user;
	if (level >= GGML_LOG_LEVEL_WARN)
		fputs(text, stderr);
}

static void die(const char *msg)
{
	fprintf(stderr, "llama-ref-dump: %s\n", msg);
	exit(1);
}

/* Unescape \n and \\ in place; strip the trailing newline. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s && *s != '\n'; s++) {
		if (s[0] == '\\' && s[1] == 'n') {
			*o++ = '\n';
			s++;
		} else if (s[0] == '\\' && s[1] == '\\') {
			*o++ = '\\';
			s++;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

static int argmax(const float *v, int n)
{
	int i, best = 0;

	for (i = 1; i < n; i++)
		if (v[i] > v[best])
			best = i;
	return best;
}

static void print_ids(const char *tag, const llama_token *ids, int n)
{
	int i;

	printf("%s", tag);
	for (i = 0; i < n; i++)
		printf(" %d", ids[i]);
	printf("\n");
}

/* "logits WHERE argmax maxabs s0 ... s511" and "top WHERE id:v ...". */
static void print_logits(const char *where, const float *v, int n)
{
	int i, j, top[REF_TOP], n_top = 0;
	double maxabs = 0;

	for (i = 0; i < n; i++)
		if (fabs(v[i]) > maxabs)
			maxabs = fabs(v[i]);
	printf("logits %s %d %.9g", where, argmax(v, n), maxabs);
	for (i = 0; i < REF_SAMPLES; i++)
		printf(" %.9g", v[(long)i * n / REF_SAMPLES]);
	printf("\n");
	/* Insertion into a small sorted list (descending, lower id first on ties). */
	for (i = 0; i < n; i++) {
		if (n_top == REF_TOP && v[i] <= v[top[n_top - 1]])
			continue;
		j = n_top < REF_TOP ? n_top++ : REF_TOP - 1;
		while (j > 0 && v[top[j - 1]] < v[i]) {
			top[j] = top[j - 1];
			j--;
		}
		top[j] = i;
	}
	printf("top %s", where);
	for (i = 0; i < n_top; i++)
		printf(" %d:%.9g", top[i], v[top[i]]);
	printf("\n");
	fprintf(stderr, "  %s: argmax %d, top-2 gap %.4g of max|logit| %.4g\n", where, top[0],
		v[top[0]] - v[top[1]], maxabs);
}

static struct llama_context *new_context(struct llama_model *model)
{
	struct llama_context_params cp = llama_context_default_params();
	struct llama_context *ctx;

	cp.n_ctx = MAX_TOKENS;
	cp.n_batch = MAX_TOKENS;
	cp.n_ubatch = MAX_TOKENS;
	cp.n_seq_max = 1;
	cp.n_threads = 2;
	cp.n_threads_batch = 2;
	cp.type_k = GGML_TYPE_F32;
	cp.type_v = GGML_TYPE_F32;
	cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
	cp.no_perf = true;
	ctx = llama_init_from_model(model, cp);
	if (!ctx)
		die("llama_init_from_model failed");
	return ctx;
}

/* Decode @n tokens starting at @pos0; logits at the last one, or all. */
static void decode(struct llama_context *ctx, const llama_token *ids, int n, int pos0, int all)
{
	struct llama_batch b = llama_batch_init(n, 0, 1);
	int i;

	for (i = 0; i < n; i++) {
		b.token[i] = ids[i];
		b.pos[i] = pos0 + i;
		b.n_seq_id[i] = 1;
		b.seq_id[i][0] = 0;
		b.logits[i] = all || i == n - 1;
	}
	b.n_tokens = n;
	if (llama_decode(ctx, b))
		die("llama_decode failed");
	llama_batch_free(b);
}

static int tokenize(const struct llama_vocab *vocab, const char *text, llama_token *ids)
{
	int n = llama_tokenize(vocab, text, (int)strlen(text), ids, MAX_TOKENS, true, false);

	if (n < 1)
		die("tokenization failed or gave no tokens");
	return n;
}

static void run_case(struct llama_context *ctx, const struct llama_vocab *vocab,
		     int n_vocab, const char *text, int n_gen)
{
	llama_token ids[MAX_TOKENS], gen[MAX_TOKENS];
	int n = tokenize(vocab, text, ids), i;

	if (n + n_gen > MAX_TOKENS)
		die("prompt too long");
	llama_memory_clear(llama_get_memory(ctx), true);
	decode(ctx, ids, n, 0, 0);
	print_ids("prompt_ids", ids, n);
	print_logits("prompt", llama_get_logits_ith(ctx, -1), n_vocab);
	for (i = 0; i < n_gen; i++) {
		gen[i] = argmax(llama_get_logits_ith(ctx, -1), n_vocab);
		decode(ctx, &gen[i], 1, n + i, 0);
	}
	print_ids("gen_ids", gen, n_gen);
	print_logits("final", llama_get_logits_ith(ctx, -1), n_vocab);
}

/* The argmax after each of the 32 @ids, decoded as one batch; "TAG_ids" and "TAG_top1". */
static void run_forced(struct llama_context *ctx, int n_vocab, const llama_token *ids,
		       const char *tag)
{
	llama_token top1[REF_FORCED];
	char name[32];
	int i;

	llama_memory_clear(llama_get_memory(ctx), true);
	decode(ctx, ids, REF_FORCED, 0, 1);
	for (i = 0; i < REF_FORCED; i++)
		top1[i] = argmax(llama_get_logits_ith(ctx, i), n_vocab);
	snprintf(name, sizeof(name), "%s_ids", tag);
	print_ids(name, ids, REF_FORCED);
	snprintf(name, sizeof(name), "%s_top1", tag);
	print_ids(name, top1, REF_FORCED);
}

/* @text's prompt continued greedily to 32 tokens. */
static void greedy_path(struct llama_context *ctx, const struct llama_vocab *vocab,
			int n_vocab, const char *text, llama_token *ids)
{
	int n = tokenize(vocab, text, ids);

	if (n > REF_FORCED)
		n = REF_FORCED;
	llama_memory_clear(llama_get_memory(ctx), true);
	decode(ctx, ids, n, 0, 0);
	for (; n < REF_FORCED; n++) {
		ids[n] = argmax(llama_get_logits_ith(ctx, -1), n_vocab);
		decode(ctx, &ids[n], 1, n, 0);
	}
}

int main(int argc, char **argv)
{
	struct llama_model_params mp;
	struct llama_model *model;
	struct llama_context *ctx;
	const struct llama_vocab *vocab;
	char line[8192], first[8192] = "";
	llama_token ids[MAX_TOKENS];
	int n_vocab, n_gen, n_case = 0;
	FILE *f;

	if (argc != 5) {
		fprintf(stderr, "usage: %s MODEL.gguf CASES.txt FORCED.txt N_GEN\n", argv[0]);
		return 2;
	}
	n_gen = atoi(argv[4]);
	if (n_gen < 1 || n_gen > 256)
		die("N_GEN must be in 1..256");
	llama_log_set(quiet_log, NULL);
	llama_backend_init();
	mp = llama_model_default_params();
	mp.n_gpu_layers = 0;
	model = llama_model_load_from_file(argv[1], mp);
	if (!model)
		die("cannot load the model");
	vocab = llama_model_get_vocab(model);
	n_vocab = llama_vocab_n_tokens(vocab);
	ctx = new_context(model);

	printf("n_vocab %d\n", n_vocab);
	printf("samples %d\n", REF_SAMPLES);
	f = fopen(argv[2], "r");
	if (!f)
		die("cannot open CASES.txt");
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '\n' || line[0] == '#')
			continue;
		unescape(line);
		if (!n_case)
			snprintf(first, sizeof(first), "%s", line);
		fprintf(stderr, "case %d\n", n_case);
		printf("case %d\n", n_case++);
		run_case(ctx, vocab, n_vocab, line, n_gen);
	}
	fclose(f);
	f = fopen(argv[3], "r");
	if (!f || !fgets(line, sizeof(line), f))
		die("cannot read FORCED.txt");
	fclose(f);
	unescape(line);
	greedy_path(ctx, vocab, n_vocab, first, ids);
	run_forced(ctx, n_vocab, ids, "forced");
	if (tokenize(vocab, line, ids) < REF_FORCED)
		die("FORCED.txt gives fewer than 32 tokens");
	run_forced(ctx, n_vocab, ids, "text");
	printf("end\n");

	llama_free(ctx);
	llama_model_free(model);
	llama_backend_free();
	return 0;
}
