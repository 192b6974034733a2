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

#include "rk1828/quant_blocks.h"
#include "synth_model.h"

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

/* build() - write the model of @o into @path. Returns 0 or -1 (message printed). */
static int build(const char *path, const struct mk_opts *o)
{
	float sd = (float)sqrt(3.0 / o->dim), sf = (float)sqrt(3.0 / o->ffn);
	struct synth_model s = {
		.arch = "llama", .name = "rk1828-bench-synthetic",
		.n_layers = o->layers, .dim = o->dim, .ffn = o->ffn,
		.n_heads = o->heads, .n_kv_heads = o->kv_heads, .n_ctx = o->ctx,
		.n_vocab = VOCAB, .rope_theta = 10000.0f, .rms_eps = 1e-5f,
		.tied = true, .vocab = SYNTH_VOCAB_SPM, .fill = SYNTH_RANDOM, .seed = o->seed,
		.t = {
			[SYNTH_EMBD] = { QUANT_TYPE_F32, 0, 1 },
			[SYNTH_ATTN_NORM] = { QUANT_TYPE_F32, 1, 0 },
			[SYNTH_Q] = { QUANT_TYPE_Q4_0, 0, sd },
			[SYNTH_K] = { QUANT_TYPE_Q4_0, 0, sd },
			[SYNTH_V] = { QUANT_TYPE_Q4_0, 0, sd },
			[SYNTH_O] = { QUANT_TYPE_Q4_0, 0, sd },
			[SYNTH_FFN_NORM] = { QUANT_TYPE_F32, 1, 0 },
			[SYNTH_GATE] = { QUANT_TYPE_Q4_0, 0, sd },
			[SYNTH_UP] = { QUANT_TYPE_Q4_0, 0, sd },
			[SYNTH_DOWN] = { QUANT_TYPE_Q4_0, 0, sf },
			[SYNTH_OUT_NORM] = { QUANT_TYPE_F32, 1, 0 },
		},
	};
	char err[512];

	if (synth_model_write(&s, path, err, sizeof(err))) {
		fprintf(stderr, "mkmodel: %s\n", err);
		return -1;
	}
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
