// SPDX-License-Identifier: MIT
/*
 * Synthetic llama-family GGUF models for tests and benchmarks: see
 * synth_model.h.
 */
#include "synth_model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf_write.h"
#include "quant.h"

/* Writer state: the spec, the output and the random stream. */
struct synth {
	const struct synth_model *s;
	struct gguf_writer *w;
	uint64_t rng;
	int failed;
	char *err;
	size_t errlen;
};

static void fail(struct synth *y, const char *fmt, ...)
{
	va_list ap;

	if (y->failed++ || !y->err || !y->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(y->err, y->errlen, fmt, ap);
	va_end(ap);
}

/* xorshift64* (Vigna 2016): uniform double in [0, 1). */
static double rng_unit(struct synth *y)
{
	y->rng ^= y->rng >> 12;
	y->rng ^= y->rng << 25;
	y->rng ^= y->rng >> 27;
	return (double)((y->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

/* Add the tensor @name of role @r, ne0 x ne1 (ne1 0: one dimension). */
static void add_tensor(struct synth *y, const char *name, enum synth_role r,
		       uint64_t ne0, uint64_t ne1)
{
	const struct synth_model *s = y->s;
	const struct synth_tensor *t = &s->t[r];
	uint64_t ne[2] = { ne0, ne1 };
	int type = t->type;
	size_t n, i, bytes;
	float *f;
	void *buf;

	if (y->failed || (s->skip_tensor && !strcmp(name, s->skip_tensor)))
		return;
	if (s->short_tensor && !strcmp(name, s->short_tensor))
		ne[ne1 ? 1 : 0]--;
	if (s->retype_tensor && !strcmp(name, s->retype_tensor))
		type = s->retype;
	n = ne[0] * (ne1 ? ne[1] : 1);
	bytes = quant_row_size(type, n);
	if (!bytes) {
		fail(y, "%s: %zu elements do not fit type %d", name, n, type);
		return;
	}
	f = malloc(n * sizeof(*f));
	buf = malloc(bytes);
	if (!f || !buf) {
		fail(y, "%s: out of memory", name);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (s->fill == SYNTH_PATTERN)
			f[i] = (float)((int)(i % 13) - 6) / 8.0f;
		else if (t->scale)
			f[i] = (float)(t->base + (rng_unit(y) * 2.0 - 1.0) * t->scale);
		else
			f[i] = t->base;
	}
	if (quant_quantize_row(type, f, buf, n) ||
	    gguf_writer_add_tensor(y->w, name, ne1 ? 2 : 1, ne, type, buf, bytes))
		fail(y, "%s: cannot add the tensor", name);
out:
	free(buf);
	free(f);
}

/* Add the <arch>.@key u32 (unless it is the one to skip). */
static void add_u32(struct synth *y, const char *key, uint32_t v)
{
	char k[96];

	if (y->s->skip_key && !strcmp(key, y->s->skip_key))
		return;
	snprintf(k, sizeof(k), "%s.%s", y->s->arch, key);
	if (gguf_writer_add_u32(y->w, k, v))
		fail(y, "%s: cannot add the key", k);
}

static void add_f32(struct synth *y, const char *key, float v)
{
	char k[96];

	if (y->s->skip_key && !strcmp(key, y->s->skip_key))
		return;
	snprintf(k, sizeof(k), "%s.%s", y->s->arch, key);
	if (gguf_writer_add_f32(y->w, k, v))
		fail(y, "%s: cannot add the key", k);
}

/* The SentencePiece vocabulary described in synth_model.h. */
static void add_vocab(struct synth *y)
{
	uint32_t n_vocab = y->s->n_vocab, i, n = 0;
	char (*names)[24] = calloc(n_vocab, sizeof(*names));
	const char **ptrs = calloc(n_vocab, sizeof(*ptrs));
	float *scores = calloc(n_vocab, sizeof(*scores));
	int32_t *types = calloc(n_vocab, sizeof(*types));

	if (n_vocab < 3 + 256 + 1 + 26) {
		fail(y, "a vocabulary needs at least 286 tokens, not %u", n_vocab);
		goto out;
	}
	if (!names || !ptrs || !scores || !types) {
		fail(y, "vocabulary: out of memory");
		goto out;
	}
	strcpy(names[n], "<unk>"); types[n++] = 2;	/* UNKNOWN */
	strcpy(names[n], "<s>"); types[n++] = 3;	/* CONTROL */
	strcpy(names[n], "</s>"); types[n++] = 3;
	for (i = 0; i < 256; i++) {
		snprintf(names[n], sizeof(names[n]), "<0x%02X>", i);
		types[n++] = 6;				/* BYTE */
	}
	strcpy(names[n], "\xe2\x96\x81"); types[n++] = 1;	/* NORMAL */
	for (i = 0; i < 26; i++) {
		names[n][0] = (char)('a' + i);
		types[n++] = 1;
	}
	while (n < n_vocab) {
		snprintf(names[n], sizeof(names[n]), "<unused%u>", n);
		types[n++] = 5;				/* UNUSED */
	}
	for (i = 0; i < n_vocab; i++) {
		ptrs[i] = names[i];
		scores[i] = types[i] == 1 ? -1.0f : 0.0f;
	}
	if (gguf_writer_add_str(y->w, "tokenizer.ggml.model", "llama") ||
	    gguf_writer_add_str_arr(y->w, "tokenizer.ggml.tokens", ptrs, n_vocab) ||
	    gguf_writer_add_f32_arr(y->w, "tokenizer.ggml.scores", scores, n_vocab) ||
	    gguf_writer_add_i32_arr(y->w, "tokenizer.ggml.token_type", types, n_vocab) ||
	    gguf_writer_add_u32(y->w, "tokenizer.ggml.unknown_token_id", 0) ||
	    gguf_writer_add_u32(y->w, "tokenizer.ggml.bos_token_id", 1) ||
	    gguf_writer_add_u32(y->w, "tokenizer.ggml.eos_token_id", 2))
		fail(y, "vocabulary: cannot add the keys");
out:
	free(types);
	free(scores);
	free(ptrs);
	free(names);
}

static void add_metadata(struct synth *y)
{
	const struct synth_model *s = y->s;

	if (gguf_writer_add_str(y->w, "general.architecture", s->arch) ||
	    (s->name && gguf_writer_add_str(y->w, "general.name", s->name)))
		fail(y, "cannot add the general keys");
	add_u32(y, "block_count", s->n_layers);
	add_u32(y, "embedding_length", s->dim);
	add_u32(y, "feed_forward_length", s->ffn);
	add_u32(y, "attention.head_count", s->n_heads);
	add_u32(y, "attention.head_count_kv", s->n_kv_heads);
	add_u32(y, "context_length", s->n_ctx);
	add_f32(y, "rope.freq_base", s->rope_theta);
	if (s->rms_eps)
		add_f32(y, "attention.layer_norm_rms_epsilon", s->rms_eps);
	if (s->head_dim && s->head_dim != s->dim / s->n_heads)
		add_u32(y, "attention.key_length", s->head_dim);
	if (s->rope_dim)
		add_u32(y, "rope.dimension_count", s->rope_dim);
	if (s->vocab)
		add_vocab(y);
}

static void add_block(struct synth *y, uint32_t l)
{
	const struct synth_model *s = y->s;
	uint32_t hd = s->head_dim ? s->head_dim : s->dim / s->n_heads;
	uint32_t q = s->n_heads * hd, kv = s->n_kv_heads * hd;
	char n[96];

#define T(suffix, role, ne0, ne1) do {					\
		snprintf(n, sizeof(n), "blk.%u." suffix, l);		\
		add_tensor(y, n, role, ne0, ne1);			\
	} while (0)
	T("attn_norm.weight", SYNTH_ATTN_NORM, s->dim, 0);
	T("attn_q.weight", SYNTH_Q, s->dim, q);
	T("attn_k.weight", SYNTH_K, s->dim, kv);
	T("attn_v.weight", SYNTH_V, s->dim, kv);
	T("attn_output.weight", SYNTH_O, q, s->dim);
	if (s->biases) {
		T("attn_q.bias", SYNTH_BIAS, q, 0);
		T("attn_k.bias", SYNTH_BIAS, kv, 0);
		T("attn_v.bias", SYNTH_BIAS, kv, 0);
	}
	if (s->qk_norm) {
		T("attn_q_norm.weight", SYNTH_QK_NORM, hd, 0);
		T("attn_k_norm.weight", SYNTH_QK_NORM, hd, 0);
	}
	T("ffn_norm.weight", SYNTH_FFN_NORM, s->dim, 0);
	T("ffn_gate.weight", SYNTH_GATE, s->dim, s->ffn);
	T("ffn_up.weight", SYNTH_UP, s->dim, s->ffn);
	T("ffn_down.weight", SYNTH_DOWN, s->ffn, s->dim);
#undef T
}

int synth_model_write(const struct synth_model *s, const char *path, char *err,
		      size_t errlen)
{
	struct synth y = {
		.s = s, .rng = s->seed ? s->seed : 0x9e3779b97f4a7c15ULL,
		.err = err, .errlen = errlen,
	};
	uint32_t l;

	if (err && errlen)
		err[0] = '\0';
	if (!s->n_heads || !s->dim) {
		fail(&y, "synthetic model needs dim and n_heads");
		return -1;
	}
	y.w = gguf_writer_new();
	if (!y.w) {
		fail(&y, "out of memory");
		return -1;
	}
	add_metadata(&y);
	add_tensor(&y, "token_embd.weight", SYNTH_EMBD, s->dim, s->n_vocab);
	for (l = 0; l < s->n_layers; l++)
		add_block(&y, l);
	add_tensor(&y, "output_norm.weight", SYNTH_OUT_NORM, s->dim, 0);
	if (!s->tied)
		add_tensor(&y, "output.weight", SYNTH_OUTPUT, s->dim, s->n_vocab);
	if (!y.failed && gguf_writer_write_file(y.w, path, err, errlen) < 0)
		y.failed = 1;
	gguf_writer_free(y.w);
	return y.failed ? -1 : 0;
}

int synth_model_tmp(const struct synth_model *s, char *path, char *err, size_t errlen)
{
	int fd;

	strcpy(path, "/tmp/rk1828-synth-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0) {
		if (err && errlen)
			snprintf(err, errlen, "mkstemp: %s", strerror(errno));
		return -1;
	}
	close(fd);
	if (synth_model_write(s, path, err, errlen)) {
		unlink(path);
		return -1;
	}
	return 0;
}

int synth_small_qwen_write(const char *path, const char *arch, char *err, size_t errlen)
{
	bool q3 = !strcmp(arch, "qwen3");
	struct synth_model s = {
		.arch = arch, .n_layers = 4, .dim = 64, .ffn = 96, .n_heads = 4,
		.n_kv_heads = 2, .head_dim = q3 ? 32 : 16, .n_ctx = 128, .n_vocab = 40,
		.rope_theta = 1000000.0f, .rms_eps = 1e-6f,
		.biases = !q3, .qk_norm = q3, .tied = q3, .fill = SYNTH_RANDOM,
		.t = {
			[SYNTH_EMBD] = { QUANT_TYPE_Q8_0, 0, 0.5f },
			[SYNTH_ATTN_NORM] = { QUANT_TYPE_F32, 1, 0.1f },
			[SYNTH_Q] = { QUANT_TYPE_Q4_0, 0, 0.25f },
			[SYNTH_K] = { QUANT_TYPE_Q8_0, 0, 0.25f },
			[SYNTH_V] = { QUANT_TYPE_F16, 0, 0.25f },
			[SYNTH_O] = { QUANT_TYPE_Q4_0, 0, 0.15f },
			[SYNTH_BIAS] = { QUANT_TYPE_F32, 0, 0.1f },
			[SYNTH_QK_NORM] = { QUANT_TYPE_F32, 1, 0.1f },
			[SYNTH_FFN_NORM] = { QUANT_TYPE_F32, 1, 0.1f },
			[SYNTH_GATE] = { QUANT_TYPE_Q4_0, 0, 0.25f },
			[SYNTH_UP] = { QUANT_TYPE_Q8_0, 0, 0.25f },
			[SYNTH_DOWN] = { QUANT_TYPE_Q4_0, 0, 0.15f },
			[SYNTH_OUT_NORM] = { QUANT_TYPE_F32, 1, 0.1f },
			[SYNTH_OUTPUT] = { QUANT_TYPE_Q8_0, 0, 0.25f },
		},
	};

	return synth_model_write(&s, path, err, errlen);
}
