// SPDX-License-Identifier: MIT
/*
 * BPE pre-tokenizer: the regexes of tokenizer.ggml.pre, run by PCRE2 with
 * UTF and UCP (so \p{L}, \p{N}, \s and \S are Unicode properties), JIT
 * compiled, and with an explicit match limit per call.
 *
 * The regex lists are the ones llama.cpp's llm_tokenizer_bpe uses per
 * pre-tokenizer type (src/llama-vocab.cpp), which are the Hugging Face
 * tokenizer.json patterns with "(?i:'s|...)" spelled out case by case.
 * Several regexes apply in sequence: each splits every piece the previous
 * one produced, and the text between two matches becomes a piece too
 * (llama.cpp's unicode_regex_split). A piece is matched as a subject of
 * its own, so look-ahead stops at the piece's end, as in llama.cpp.
 *
 * Limits: a pcre2_match() call may backtrack at most 100000 + 16 * (bytes
 * left in its piece) times (pcre2_set_match_limit). The supported regexes
 * find each pre-token in time linear in its length, so the limit only
 * stops a pathological pattern: encoding then fails with -E2BIG instead of
 * running away.
 * When the JIT stack (PCRE2's default 32 KiB) is too small for a match,
 * the call is repeated by the interpreter with a 64 MiB heap limit.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "tok_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define MAX_RE 4

struct tok_pre {
	const char *const *names;	/* tokenizer.ggml.pre values, NULL-terminated */
	const char *re[MAX_RE];		/* applied in order */
	bool ignore_merges;
	/* Compiled on first use, under compile_mu. */
	bool compiled;
	int n_code;
	pcre2_code *code[MAX_RE];
	char error[160];
};

#define CONTRACTIONS "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
#define GPT2_RE "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"

static const char *const names_default[] = { "default", "", NULL };
static const char *const names_gpt2[] = {
	"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
	"a.x-4.0", "mellum", "modern-bert", "mpt", "olmo", "jais", "trillion", NULL };
static const char *const names_llama3[] = {
	"llama-bpe", "llama3", "llama-v3", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
	"lfm2", "dbrx", "smaug-bpe", NULL };
static const char *const names_qwen2[] = {
	"qwen2", "deepseek-r1-qwen", "stablelm2", "hunyuan", "kormo", NULL };
static const char *const names_qwen35[] = { "qwen35", NULL };
static const char *const names_starcoder[] = {
	"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b",
	NULL };
static const char *const names_falcon[] = { "falcon", NULL };

static struct tok_pre pres[] = {
	{ .names = names_default, .re = {
		"[\\p{P}\\$\\+<=>\\^~\\|]+",
		GPT2_RE,
		"\\p{N}+",
		"[0-9][0-9][0-9]" } },
	{ .names = names_gpt2, .re = { GPT2_RE } },
	{ .names = names_llama3, .ignore_merges = true, .re = {
		CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" } },
	{ .names = names_qwen2, .re = {
		CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" } },
	{ .names = names_qwen35, .re = {
		CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" } },
	{ .names = names_starcoder, .re = { "\\p{N}", GPT2_RE } },
	{ .names = names_falcon, .re = {
		"[\\p{P}\\$\\+<=>\\^~\\|`]+",
		GPT2_RE,
		"[0-9][0-9][0-9]" } },
};

#define N_PRES (sizeof(pres) / sizeof(pres[0]))

static pthread_mutex_t compile_mu = PTHREAD_MUTEX_INITIALIZER;

/* Compile @p's regexes; p->n_code stays 0 on failure (p->error says why). */
static void compile_one(struct tok_pre *p)
{
	int i;

	for (i = 0; i < MAX_RE && p->re[i]; i++) {
		PCRE2_SIZE off;
		int rc;

		p->code[i] = pcre2_compile((PCRE2_SPTR)p->re[i], PCRE2_ZERO_TERMINATED,
					   PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &rc, &off,
					   NULL);
		if (!p->code[i]) {
			PCRE2_UCHAR msg[120];

			pcre2_get_error_message(rc, msg, sizeof(msg));
			snprintf(p->error, sizeof(p->error), "regex %d at offset %zu: %s", i,
				 (size_t)off, (const char *)msg);
			return;
		}
		/* JIT is an optimisation: the interpreter runs when it is missing. */
		pcre2_jit_compile(p->code[i], PCRE2_JIT_COMPLETE);
	}
	p->n_code = i;
}

const struct tok_pre *tok_pre_get(const char *name, bool *ignore_merges, char *err,
				  size_t errlen)
{
	size_t i, k;

	if (!name)
		name = "";
	for (i = 0; i < N_PRES; i++) {
		struct tok_pre *p = &pres[i];

		for (k = 0; p->names[k]; k++) {
			if (strcmp(p->names[k], name))
				continue;
			pthread_mutex_lock(&compile_mu);
			if (!p->compiled) {
				compile_one(p);
				p->compiled = true;
			}
			pthread_mutex_unlock(&compile_mu);
			if (!p->n_code) {
				snprintf(err, errlen, "tokenizer.ggml.pre '%s': PCRE2: %s", name,
					 p->error[0] ? p->error : "cannot compile");
				return NULL;
			}
			*ignore_merges = p->ignore_merges;
			return p;
		}
	}
	snprintf(err, errlen, "tokenizer.ggml.pre: '%.40s' is not supported (supported: %s)",
		 name, tok_pre_names());
	return NULL;
}

const char *tok_pre_names(void)
{
	return "default, gpt-2, phi-2, mpt, olmo, llama-bpe, llama3, falcon3, pixtral, dbrx, "
	       "qwen2, deepseek-r1-qwen, stablelm2, qwen35, starcoder, refact, command-r, "
	       "smollm, falcon (and their aliases in llama.cpp)";
}

/* One split pass over the piece s[0..n): matches and the gaps between them. */
struct pass {
	const struct tok_pre *p;
	int level;
	pcre2_match_data *md;
	pcre2_match_context *mc;
	int (*fn)(void *ctx, const char *s, size_t n);
	void *ctx;
	struct tok_stats *stats;
};

static int split(struct pass *ps, int level, const char *s, size_t n);

/* Hand a piece to the next regex, or to the caller after the last one. */
static int piece(struct pass *ps, int level, const char *s, size_t n)
{
	if (!n)
		return 0;
	if (level + 1 < ps->p->n_code)
		return split(ps, level + 1, s, n);
	return ps->fn(ps->ctx, s, n);
}

/* pcre2_match() with the limit for this piece and the interpreter fallback. */
static int match(struct pass *ps, const pcre2_code *code, const char *s, size_t n, size_t at)
{
	size_t left = n - at;
	int rc;

	pcre2_set_match_limit(ps->mc, left > 200000000 ? 0xffffffffu :
				      (uint32_t)(100000 + 16 * left));
	if (ps->stats)
		ps->stats->regex_calls++;
	rc = pcre2_match(code, (PCRE2_SPTR)s, n, at, PCRE2_NO_UTF_CHECK, ps->md, ps->mc);
	if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
		rc = pcre2_match(code, (PCRE2_SPTR)s, n, at, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT,
				 ps->md, ps->mc);
	return rc;
}

static int split(struct pass *ps, int level, const char *s, size_t n)
{
	const pcre2_code *code = ps->p->code[level];
	size_t at = 0, gap = 0;
	int ret;

	while (at < n) {
		PCRE2_SIZE *ov, mb, me;
		int rc = match(ps, code, s, n, at);

		if (rc == PCRE2_ERROR_NOMATCH)
			break;
		if (rc == PCRE2_ERROR_NOMEMORY)
			return -ENOMEM;
		if (rc < 0)
			return -E2BIG;	/* match, depth or heap limit */
		/* Copy: the next level reuses the match data. */
		ov = pcre2_get_ovector_pointer(ps->md);
		mb = ov[0];
		me = ov[1];
		if (me == mb) {
			/* Empty match: move on by one character, keep it in the gap. */
			at = mb + 1;
			while (at < n && ((unsigned char)s[at] & 0xc0) == 0x80)
				at++;
			continue;
		}
		ret = piece(ps, level, s + gap, mb - gap);
		if (!ret)
			ret = piece(ps, level, s + mb, me - mb);
		if (ret)
			return ret;
		at = gap = me;
	}
	return piece(ps, level, s + gap, n - gap);
}

int tok_pre_split(const struct tok_pre *p, const char *text, size_t len,
		  int (*fn)(void *ctx, const char *s, size_t n), void *ctx,
		  struct tok_stats *stats)
{
	struct pass ps = { .p = p, .fn = fn, .ctx = ctx, .stats = stats };
	int ret = -ENOMEM;

	ps.md = pcre2_match_data_create(4, NULL);
	ps.mc = pcre2_match_context_create(NULL);
	if (!ps.md || !ps.mc)
		goto out;
	pcre2_set_heap_limit(ps.mc, 64 * 1024);		/* KiB, interpreter only */
	ret = split(&ps, 0, text, len);
out:
	pcre2_match_context_free(ps.mc);
	pcre2_match_data_free(ps.md);
	return ret;
}
