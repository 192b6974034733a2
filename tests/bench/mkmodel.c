// SPDX-License-Identifier: MIT
/*
 * mkmodel: write a synthetic llama GGUF for the benchmarks (tests/run-bench).
 *
 *   mkmodel OUT.gguf [--dim N] [--layers N] [--ffn N] [--heads N]
 *                    [--kv-heads N] [--ctx N] [--seed S]
 *
 * The model has real shapes and random weights (fixed seed: the file is
 * byte-for-byte reproducible): Q4_0 attention and FFN matrices, F32 norms
 * (all 1.0) and token embedding, the LM head tied to the embedding. Weight
 * values are uniform in +-sqrt(3 / fan_in) (unit variance per output
 * before the norm), so activations stay finite over many layers.
 *
 * The vocabulary has exactly 512 tokens in SentencePiece ("llama") form:
 * <unk>, <s>, </s>, the 256 byte tokens <0x00>..<0xFF>, U+2581 and the
 * 26 lower-case letters, then unused fillers. No two single-character
 * tokens merge into another token, so a prompt of L lower-case letters
 * without spaces encodes to exactly L + 1 tokens (the U+2581 prefix) with
 * --no-bos: the bench picks the prompt length in tokens precisely.
 *
 * Exit status 0, or 1 with a message on stderr (bad option, write error).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_write.h"
#include "quant.h"

#define VOCAB 512

/**
 * struct mk_opts - model shape
 * @dim: embedding length (multiple of 32)
 * @layers: transformer blocks
 * @ffn: feed-forward length (multiple of 32)
 * @heads: attention heads (divides @dim)
 * @kv_heads: key/value heads (divides @heads)
 * @ctx: context_length written to the metadata
 * @seed: random seed of the weights
 */
struct mk_opts {
	unsigned long dim, layers, ffn, heads, kv_heads, ctx;
	uint64_t seed;
};

static uint64_t rng_state;

/* xorshift64* (Vigna 2016), uniform double in [0, 1). */
static double rng_unit(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

/*
 * add_matrix() - add a ne0 x ne1 tensor (ne0 innermost) of @type holding
 * uniform random values in +-@scale, or all @fill when @scale is 0.
 * Returns 0 or a negative errno.
 */
static int add_matrix(struct gguf_writer *w, const char *name, uint64_t ne0,
		      uint64_t ne1, int type, double scale, float fill)
{
	uint64_t ne[2] = { ne0, ne1 };
	size_t n = ne0 * (ne1 ? ne1 : 1), i, bytes = quant_row_size(type, n);
	float *f = malloc(n * sizeof(*f));
	void *buf = malloc(bytes);
	int ret = -ENOMEM;

	if (!f || !buf)
		goto out;
	for (i = 0; i < n; i++)
		f[i] = scale ? (float)((rng_unit() * 2.0 - 1.0) * scale) : fill;
	if (type == QUANT_TYPE_F32)
		memcpy(buf, f, bytes);
	else if (quant_quantize_row(type, f, buf, n) < 0) {
		ret = -EINVAL;
		goto out;
	}
	ret = gguf_writer_add_tensor(w, name, ne1 ? 2 : 1, ne, type, buf, bytes);
out:
	free(buf);
	free(f);
	return ret;
}

/* add_vocab() - the 512-token vocabulary described at the top of the file. */
static int add_vocab(struct gguf_writer *w)
{
	static char names[VOCAB][16];
	const char *ptrs[VOCAB];
	float scores[VOCAB];
	int32_t types[VOCAB];
	int i, n = 0;

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
		names[n][1] = 0;
		types[n++] = 1;
	}
	while (n < VOCAB) {
		snprintf(names[n], sizeof(names[n]), "<unused%d>", n);
		types[n++] = 5;				/* UNUSED */
	}
	for (i = 0; i < VOCAB; i++) {
		ptrs[i] = names[i];
		scores[i] = types[i] == 1 ? -1.0f : 0.0f;
	}
	if (gguf_writer_add_str(w, "tokenizer.ggml.model", "llama") ||
	    gguf_writer_add_str_arr(w, "tokenizer.ggml.tokens", ptrs, VOCAB) ||
	    gguf_writer_add_f32_arr(w, "tokenizer.ggml.scores", scores, VOCAB) ||
	    gguf_writer_add_i32_arr(w, "tokenizer.ggml.token_type", types, VOCAB) ||
	    gguf_writer_add_u32(w, "tokenizer.ggml.unknown_token_id", 0) ||
	    gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", 1) ||
	    gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", 2))
		return -ENOMEM;
	return 0;
}

/* build() - write the model of @o into @path. Returns 0 or -1 (message printed). */
static int build(const char *path, const struct mk_opts *o)
{
	struct gguf_writer *w = gguf_writer_new();
	unsigned long hd = o->dim / o->heads, l;
	double sd = sqrt(3.0 / o->dim), sf = sqrt(3.0 / o->ffn);
	char name[64], err[512];
	int ret = 0;

	if (!w) {
		fprintf(stderr, "mkmodel: out of memory\n");
		return -1;
	}
	rng_state = o->seed ? o->seed : 0x9e3779b97f4a7c15ULL;
	ret |= gguf_writer_add_str(w, "general.architecture", "llama");
	ret |= gguf_writer_add_str(w, "general.name", "rk1828-bench-synthetic");
	ret |= gguf_writer_add_u32(w, "llama.block_count", o->layers);
	ret |= gguf_writer_add_u32(w, "llama.embedding_length", o->dim);
	ret |= gguf_writer_add_u32(w, "llama.feed_forward_length", o->ffn);
	ret |= gguf_writer_add_u32(w, "llama.attention.head_count", o->heads);
	ret |= gguf_writer_add_u32(w, "llama.attention.head_count_kv", o->kv_heads);
	ret |= gguf_writer_add_u32(w, "llama.context_length", o->ctx);
	ret |= gguf_writer_add_f32(w, "llama.rope.freq_base", 10000.0f);
	ret |= gguf_writer_add_f32(w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
	ret |= add_vocab(w);
	ret |= add_matrix(w, "token_embd.weight", o->dim, VOCAB, QUANT_TYPE_F32, 1.0, 0);
	for (l = 0; l < o->layers && !ret; l++) {
#define M(s, ne0, ne1, ty, sc, fi) do {					\
		snprintf(name, sizeof(name), "blk.%lu." s, l);			\
		ret |= add_matrix(w, name, ne0, ne1, ty, sc, fi);		\
	} while (0)
		M("attn_norm.weight", o->dim, 0, QUANT_TYPE_F32, 0, 1.0f);
		M("attn_q.weight", o->dim, o->heads * hd, QUANT_TYPE_Q4_0, sd, 0);
		M("attn_k.weight", o->dim, o->kv_heads * hd, QUANT_TYPE_Q4_0, sd, 0);
		M("attn_v.weight", o->dim, o->kv_heads * hd, QUANT_TYPE_Q4_0, sd, 0);
		M("attn_output.weight", o->heads * hd, o->dim, QUANT_TYPE_Q4_0, sd, 0);
		M("ffn_norm.weight", o->dim, 0, QUANT_TYPE_F32, 0, 1.0f);
		M("ffn_gate.weight", o->dim, o->ffn, QUANT_TYPE_Q4_0, sd, 0);
		M("ffn_up.weight", o->dim, o->ffn, QUANT_TYPE_Q4_0, sd, 0);
		M("ffn_down.weight", o->ffn, o->dim, QUANT_TYPE_Q4_0, sf, 0);
#undef M
	}
	ret |= add_matrix(w, "output_norm.weight", o->dim, 0, QUANT_TYPE_F32, 0, 1.0f);
	if (ret) {
		fprintf(stderr, "mkmodel: cannot build the model: %s\n", strerror(ENOMEM));
		gguf_writer_free(w);
		return -1;
	}
	if (gguf_writer_write_file(w, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "mkmodel: %s\n", err);
		gguf_writer_free(w);
		return -1;
	}
	gguf_writer_free(w);
	return 0;
}

/* parse_ul() - positive integer option value; -1 with a message when bad. */
static int parse_ul(const char *opt, const char *s, unsigned long *v)
{
	char *end;

	if (!s) {
		fprintf(stderr, "mkmodel: %s needs a value\n", opt);
		return -1;
	}
	errno = 0;
	*v = strtoul(s, &end, 0);
	if (errno || end == s || *end || *v == 0 || *v > (1ul << 20)) {
		fprintf(stderr, "mkmodel: %s: bad value \"%s\"\n", opt, s);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct mk_opts o = { 1024, 8, 2816, 16, 4, 1024, 1828 };
	const char *out = NULL;
	unsigned long seed;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		unsigned long *dst = NULL;

		if (!strcmp(a, "--dim"))
			dst = &o.dim;
		else if (!strcmp(a, "--layers"))
			dst = &o.layers;
		else if (!strcmp(a, "--ffn"))
			dst = &o.ffn;
		else if (!strcmp(a, "--heads"))
			dst = &o.heads;
		else if (!strcmp(a, "--kv-heads"))
			dst = &o.kv_heads;
		else if (!strcmp(a, "--ctx"))
			dst = &o.ctx;
		else if (!strcmp(a, "--seed")) {
			if (parse_ul(a, v, &seed))
				return 1;
			o.seed = seed;
			i++;
			continue;
		} else if (a[0] == '-' || out) {
			fprintf(stderr, "usage: mkmodel OUT.gguf [--dim N] [--layers N] [--ffn N] [--heads N] [--kv-heads N] [--ctx N] [--seed S]\n");
			return 1;
		} else {
			out = a;
			continue;
		}
		if (parse_ul(a, v, dst))
			return 1;
		i++;
	}
	if (!out) {
		fprintf(stderr, "mkmodel: no output file given\n");
		return 1;
	}
	if (o.dim % 32 || o.ffn % 32 || o.dim % o.heads || o.heads % o.kv_heads ||
	    (o.dim / o.heads) % 2) {
		fprintf(stderr, "mkmodel: need dim and ffn multiples of 32, heads dividing dim (even head size), kv-heads dividing heads\n");
		return 1;
	}
	return build(out, &o) ? 1 : 0;
}
