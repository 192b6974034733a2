// SPDX-License-Identifier: MIT
/*
 * llama-ref-dump: write llama.cpp's answers for one model as rk1828
 * reference vectors (tests/vectors/qwen/FORMAT.md describes the format).
 *
 *   llama-ref-dump MODEL.gguf CASES.txt FORCED.txt N_GEN > OUT.ref
 *   llama-ref-dump --template MODEL.gguf DIR
 *   llama-ref-dump --chat MODEL.gguf PROMPT.txt N_GEN
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
 * --template writes the model's tokenizer.chat_template and the texts of
 * its BOS and EOS tokens to DIR/template.jinja, DIR/bos.txt, DIR/eos.txt
 * (the inputs of the Jinja2 rendering, tests/tools/chat-ref.py). --chat
 * takes PROMPT.txt as it is (a rendered chat prompt; no escapes),
 * tokenizes it with add_special and parse_special on (the template's
 * <|im_start|> is one token, as llama.cpp's chat path does), decodes it as
 * one batch and generates N_GEN tokens greedily, one llama_decode() per
 * token: "chat_prompt_ids" and "chat_gen_ids" lines.
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

static struct llama_model *load(const char *path, bool vocab_only)
{
	struct llama_model_params mp = llama_model_default_params();
	struct llama_model *model;

	mp.n_gpu_layers = 0;
	mp.vocab_only = vocab_only;
	model = llama_model_load_from_file(path, mp);
	if (!model)
		die("cannot load the model");
	return model;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		die("cannot write an output file");
}

/* The token's text as the vocabulary has it ("" for none). */
static const char *token_text(const struct llama_vocab *vocab, llama_token id)
{
	return id == LLAMA_TOKEN_NULL ? "" : llama_vocab_get_text(vocab, id);
}

/* --template MODEL DIR */
static int dump_template(const char *path, const char *dir)
{
	struct llama_model *model = load(path, true);
	const struct llama_vocab *vocab = llama_model_get_vocab(model);
	const char *tmpl = llama_model_chat_template(model, NULL);

	if (!tmpl)
		die("the model has no tokenizer.chat_template");
	write_file(dir, "template.jinja", tmpl);
	write_file(dir, "bos.txt", token_text(vocab, llama_vocab_bos(vocab)));
	write_file(dir, "eos.txt", token_text(vocab, llama_vocab_eos(vocab)));
	llama_model_free(model);
	return 0;
}

/* --chat MODEL PROMPT.txt N_GEN */
static int dump_chat(const char *path, const char *prompt_path, int n_gen)
{
	static char text[65536];
	struct llama_model *model = load(path, false);
	const struct llama_vocab *vocab = llama_model_get_vocab(model);
	struct llama_context *ctx = new_context(model);
	int n_vocab = llama_vocab_n_tokens(vocab), n, i;
	llama_token ids[MAX_TOKENS], gen[MAX_TOKENS];
	FILE *f = fopen(prompt_path, "r");
	size_t len;

	if (!f)
		die("cannot open PROMPT.txt");
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	n = llama_tokenize(vocab, text, (int)len, ids, MAX_TOKENS, true, true);
	if (n < 1 || n + n_gen > MAX_TOKENS)
		die("the chat prompt gives no tokens or too many");
	decode(ctx, ids, n, 0, 0);
	for (i = 0; i < n_gen; i++) {
		gen[i] = argmax(llama_get_logits_ith(ctx, -1), n_vocab);
		decode(ctx, &gen[i], 1, n + i, 0);
	}
	print_ids("chat_prompt_ids", ids, n);
	print_ids("chat_gen_ids", gen, n_gen);
	llama_free(ctx);
	llama_model_free(model);
	return 0;
}

int main(int argc, char **argv)
{
	struct llama_model *model;
	struct llama_context *ctx;
	const struct llama_vocab *vocab;
	char line[8192], first[8192] = "";
	llama_token ids[MAX_TOKENS];
	int n_vocab, n_gen, n_case = 0;
	FILE *f;

	llama_log_set(quiet_log, NULL);
	llama_backend_init();
	if (argc == 4 && !strcmp(argv[1], "--template"))
		return dump_template(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "--chat")) {
		n_gen = atoi(argv[4]);
		if (n_gen < 1 || n_gen > 256)
			die("N_GEN must be in 1..256");
		return dump_chat(argv[2], argv[3], n_gen);
	}
	if (argc != 5) {
		fprintf(stderr, "usage: %s MODEL.gguf CASES.txt FORCED.txt N_GEN\n"
			"       %s --template MODEL.gguf DIR\n"
			"       %s --chat MODEL.gguf PROMPT.txt N_GEN\n", argv[0], argv[0], argv[0]);
		return 2;
	}
	n_gen = atoi(argv[4]);
	if (n_gen < 1 || n_gen > 256)
		die("N_GEN must be in 1..256");
	model = load(argv[1], false);
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
