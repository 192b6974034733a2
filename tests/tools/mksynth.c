// SPDX-License-Identifier: MIT
/*
 * mksynth: write a synthetic GGUF model of the llama, qwen2, qwen3 or
 * qwen35 architecture with seeded random weights, for the reference
 * vectors (tools/gen-ref-vectors), the tests and the benchmarks.
 *
 *   mksynth -o OUT.gguf --arch ARCH [--type TYPE] [--vocab VOCAB.gguf]
 *           [--preset tiny|bench|9b|27b] [--shape FILE] [--shape-only] [--seed S]
 *           [--layers N] [--ffn N] [--mtp N]
 *
 * ARCH: llama, qwen2 (Q/K/V biases), qwen3 (per-head Q/K RMSNorm), qwen35
 * (hybrid: Gated DeltaNet layers and gated full attention every
 * full_attention_interval-th layer). Metadata keys and tensor names are
 * the ones llama.cpp reads (src/llama-arch.cpp, src/models/<arch>.cpp).
 *
 * TYPE: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q5_k, q6_k, or
 * q4_k_m, the usual "Q4_K_M" mix (Q4_K matrices and token embedding; Q6_K
 * for the LM head, and for ffn_down and attn_v in the layers llama.cpp's
 * use_more_bits() picks: the first and last eighth and every third in
 * between). Norms, biases, ssm_a, ssm_dt, ssm_norm and ssm_conv1d stay F32
 * whatever TYPE is, as llama-quantize leaves them. w4a16 is the vendor's
 * W4A16 layout: group-32 asymmetric Q4_1 matrices and embedding, Q6_K LM
 * head.
 *
 * --vocab: copy every tokenizer.* key of a GGUF vocabulary (for example
 * llama.cpp's models/ggml-vocab-qwen35.gguf) so the model carries a real
 * vocabulary; n_vocab is then its token count. Without it the model has
 * a 512-token placeholder vocabulary of type gpt2: the 256 byte-level
 * tokens (any text tokenizes, one token per byte), fillers, and an
 * end-of-text token.
 *
 * --preset: tiny (default) are the small synthetic shapes below, dim 256
 * and 8 layers, every matrix row a multiple of 256 so all types apply;
 * bench are qwen35 and llama of the same parameter count for make bench;
 * 9b and 27b are Qwen3.5-9B and -27B (DESIGN.md section 10) and imply
 * --shape-only and n_vocab 248320 unless --vocab is given.
 *
 * --shape: the hyperparameters of a shape file (tests/shapes/NAME.shape,
 * tests/lib/shape.h) instead of a preset, --arch from the file; RoPE, the
 * context and qwen35's sections as the presets of that arch. Implies
 * --shape-only.
 *
 * --shape-only: mark the file rk1828.shape_only = true (a runtime uploads
 * no weights from it, the card memory being zero already), write the
 * tensor infos but leave the data as holes of a
 * sparse file (real sizes, no disk use): for the planner.
 *
 * --mtp N (qwen35): the last N blocks are multi-token-prediction blocks
 * (<arch>.nextn_predict_layers = N), written like full-attention blocks
 * plus llama.cpp's nextn tensors: nextn.eh_proj [2 dim -> dim],
 * nextn.enorm, nextn.hnorm and nextn.shared_head_norm [dim]; the card
 * pipeline skips them, --spec mtp runs the first (spec_mtp.c).
 *
 * Weights (fixed seed: the file is byte-for-byte reproducible): matrices
 * uniform in +-sqrt(3 / fan_in) * gain, norm weights 1 +- 0.1, biases
 * +-0.1; qwen35 ssm_a = -A with A uniform in [1, 16], ssm_dt the
 * inverse softplus of dt log-uniform in [1e-3, 1e-1], ssm_conv1d +-0.5.
 * Token embedding +-1. Every random draw is made in the same order
 * whatever TYPE is, so the types of one arch and seed quantize the very
 * same F32 model.
 *
 * The tiny models are made confident the way trained models are, so that
 * llama.cpp's 8-bit activations do not turn near-ties into different top-1
 * tokens: token embeddings of +-1.4 (--embd-scale) keep the current
 * token's own embedding a strong candidate against the blocks' output
 * (tied heads), and an untied head is the embedding plus noise of half
 * its scale. At 1.4, about half of the positions of natural text still
 * pick another token than the current one.
 *
 * Exit status 0, or 1 with a message on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "gguf_write.h"
#include "quant.h"
#include "shape.h"

/**
 * struct shape - model hyperparameters
 * @arch: architecture name
 * @n_layers, @dim, @ffn, @n_head, @n_kv, @head_dim, @rope_dim, @ctx: as the GGUF keys
 * @sections: qwen35 rope.dimension_sections
 * @theta, @eps: rope.freq_base, attention.layer_norm_rms_epsilon
 * @ssm_state, @ssm_groups, @ssm_rank, @ssm_conv, @fa_interval: qwen35
 *	ssm.state_size (head size), ssm.group_count (k heads),
 *	ssm.time_step_rank (v heads), ssm.conv_kernel, full_attention_interval
 * @n_vocab: vocabulary size without --vocab
 * @tied: no output.weight (LM head = token_embd)
 * @embd_scale: token embedding values uniform in +-@embd_scale (0: 1)
 */
struct shape {
	const char *arch;
	uint32_t n_layers, dim, ffn, n_head, n_kv, head_dim, rope_dim, ctx;
	int32_t sections[4];
	float theta, eps;
	uint32_t ssm_state, ssm_groups, ssm_rank, ssm_conv, fa_interval;
	uint32_t n_vocab;
	bool tied;
	double embd_scale;
};

static const struct shape tiny[] = {
	{ .arch = "llama", .n_layers = 8, .dim = 256, .ffn = 768, .n_head = 4, .n_kv = 2,
	  .head_dim = 64, .rope_dim = 64, .ctx = 4096, .theta = 10000.0f, .eps = 1e-5f,
	  .n_vocab = 512, .tied = true, .embd_scale = 1.4 },
	{ .arch = "qwen2", .n_layers = 8, .dim = 256, .ffn = 768, .n_head = 4, .n_kv = 2,
	  .head_dim = 64, .rope_dim = 64, .ctx = 32768, .theta = 1000000.0f, .eps = 1e-6f,
	  .n_vocab = 512, .tied = false, .embd_scale = 1.4 },
	{ .arch = "qwen3", .n_layers = 8, .dim = 256, .ffn = 768, .n_head = 4, .n_kv = 2,
	  .head_dim = 128, .rope_dim = 128, .ctx = 40960, .theta = 1000000.0f, .eps = 1e-6f,
	  .n_vocab = 512, .tied = true, .embd_scale = 1.4 },
	/*
	 * Sections sum to 8 of the 8 rotated pairs; the interleaved rule sends
	 * pairs 6 and 7 to the fourth (position 0) section, so they stay
	 * unrotated: the synthetic model exercises that case too.
	 */
	{ .arch = "qwen35", .n_layers = 8, .dim = 256, .ffn = 768, .n_head = 4, .n_kv = 2,
	  .head_dim = 64, .rope_dim = 16, .ctx = 262144, .sections = { 2, 2, 2, 2 },
	  .theta = 10000000.0f, .eps = 1e-6f, .ssm_state = 64, .ssm_groups = 2,
	  .ssm_rank = 4, .ssm_conv = 4, .fa_interval = 4, .n_vocab = 512, .tied = true,
	  .embd_scale = 1.4 },
};

/*
 * Benchmark shapes (tests/bench/hybrid): qwen35 and a llama model of the
 * same parameter count (101.9 M in the blocks; the llama FFN is widened to
 * match), dim 1024, 8 blocks, 8 query / 2 KV heads of 128.
 */
static const struct shape bench[] = {
	{ .arch = "llama", .n_layers = 8, .dim = 1024, .ffn = 3296, .n_head = 8, .n_kv = 2,
	  .head_dim = 128, .rope_dim = 128, .ctx = 4096, .theta = 10000.0f, .eps = 1e-5f,
	  .n_vocab = 512, .tied = true },
	{ .arch = "qwen35", .n_layers = 8, .dim = 1024, .ffn = 2816, .n_head = 8, .n_kv = 2,
	  .head_dim = 128, .rope_dim = 32, .ctx = 4096, .sections = { 6, 5, 5, 0 },
	  .theta = 10000000.0f, .eps = 1e-6f, .ssm_state = 64, .ssm_groups = 8,
	  .ssm_rank = 16, .ssm_conv = 4, .fa_interval = 4, .n_vocab = 512, .tied = true },
};

static const struct shape qwen35_9b = {
	.arch = "qwen35", .n_layers = 32, .dim = 4096, .ffn = 12288, .n_head = 16, .n_kv = 4,
	.head_dim = 256, .rope_dim = 64, .ctx = 262144, .sections = { 11, 11, 10, 0 },
	.theta = 10000000.0f, .eps = 1e-6f, .ssm_state = 128, .ssm_groups = 16,
	.ssm_rank = 32, .ssm_conv = 4, .fa_interval = 4, .n_vocab = 248320, .tied = false,
};

static const struct shape qwen35_27b = {
	.arch = "qwen35", .n_layers = 64, .dim = 5120, .ffn = 17408, .n_head = 24, .n_kv = 4,
	.head_dim = 256, .rope_dim = 64, .ctx = 262144, .sections = { 11, 11, 10, 0 },
	.theta = 10000000.0f, .eps = 1e-6f, .ssm_state = 128, .ssm_groups = 16,
	.ssm_rank = 48, .ssm_conv = 4, .fa_interval = 4, .n_vocab = 248320, .tied = false,
};

/*
 * @s from shape file @m: the sizes from the file, RoPE, context and norms
 * as the preset of its arch (qwen35: the 9B's). Return: false for an
 * unknown arch.
 */
static bool shape_preset(const struct model_shape *m, struct shape *s)
{
	size_t i;

	if (!strcmp(m->arch, "qwen35")) {
		*s = qwen35_9b;
	} else {
		for (i = 0; i < sizeof(tiny) / sizeof(tiny[0]); i++)
			if (!strcmp(tiny[i].arch, m->arch))
				break;
		if (i == sizeof(tiny) / sizeof(tiny[0]))
			return false;
		*s = tiny[i];
		s->rope_dim = m->head_dim;
	}
	s->n_layers = m->layers;
	s->dim = m->dim;
	s->ffn = m->ffn;
	s->n_head = m->heads;
	s->n_kv = m->kv_heads;
	s->head_dim = m->head_dim;
	s->n_vocab = m->vocab;
	s->tied = m->tied;
	if (!strcmp(m->arch, "qwen35")) {
		s->fa_interval = m->fa_interval;
		s->ssm_state = m->ssm_head_dim;
		s->ssm_groups = m->ssm_k_heads;
		s->ssm_rank = m->ssm_v_heads;
		s->ssm_conv = m->ssm_conv;
	}
	return true;
}

/* Type plan: the type of matrices, embedding, LM head and "more bits" tensors. */
struct types {
	const char *name;
	int mat, embd, head, more;
};

static const struct types type_plans[] = {
	{ "f32", QUANT_TYPE_F32, QUANT_TYPE_F32, QUANT_TYPE_F32, QUANT_TYPE_F32 },
	{ "f16", QUANT_TYPE_F16, QUANT_TYPE_F16, QUANT_TYPE_F16, QUANT_TYPE_F16 },
	{ "bf16", QUANT_TYPE_BF16, QUANT_TYPE_BF16, QUANT_TYPE_BF16, QUANT_TYPE_BF16 },
	{ "q8_0", QUANT_TYPE_Q8_0, QUANT_TYPE_Q8_0, QUANT_TYPE_Q8_0, QUANT_TYPE_Q8_0 },
	{ "q4_0", QUANT_TYPE_Q4_0, QUANT_TYPE_Q4_0, QUANT_TYPE_Q4_0, QUANT_TYPE_Q4_0 },
	{ "q4_1", QUANT_TYPE_Q4_1, QUANT_TYPE_Q4_1, QUANT_TYPE_Q4_1, QUANT_TYPE_Q4_1 },
	{ "q5_0", QUANT_TYPE_Q5_0, QUANT_TYPE_Q5_0, QUANT_TYPE_Q5_0, QUANT_TYPE_Q5_0 },
	{ "q5_1", QUANT_TYPE_Q5_1, QUANT_TYPE_Q5_1, QUANT_TYPE_Q5_1, QUANT_TYPE_Q5_1 },
	{ "q5_k", QUANT_TYPE_Q5_K, QUANT_TYPE_Q5_K, QUANT_TYPE_Q5_K, QUANT_TYPE_Q5_K },
	{ "q6_k", QUANT_TYPE_Q6_K, QUANT_TYPE_Q6_K, QUANT_TYPE_Q6_K, QUANT_TYPE_Q6_K },
	{ "q4_k_m", QUANT_TYPE_Q4_K, QUANT_TYPE_Q4_K, QUANT_TYPE_Q6_K, QUANT_TYPE_Q6_K },
	{ "w4a16", QUANT_TYPE_Q4_1, QUANT_TYPE_Q4_1, QUANT_TYPE_Q6_K, QUANT_TYPE_Q4_1 },
};

struct gen {
	struct gguf_writer *w;
	const struct shape *s;
	const struct types *t;
	bool shape_only;
	uint32_t mtp;
	double embd_scale;
	float *embd;		/* F32 token embedding, for an untied head */
	size_t embd_i;
	uint64_t rng;
	char err[512];
};

/* xorshift64* (Vigna 2016), uniform double in [0, 1). */
static double rng_unit(struct gen *g)
{
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return (double)((g->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static double rng_sym(struct gen *g)
{
	return rng_unit(g) * 2.0 - 1.0;
}

static int failf(const char *what, int r)
{
	fprintf(stderr, "mksynth: %s: %s\n", what, strerror(r < 0 ? -r : ENOMEM));
	return -1;
}

/*
 * Add tensor @name of ne0 x ne1 (ne1 0: a vector) in @type, filled by
 * @fill(g, i) for element i (row-major), unless --shape-only.
 */
static int add(struct gen *g, const char *name, uint64_t ne0, uint64_t ne1, int type,
	       float (*fill)(struct gen *, void *), void *arg)
{
	uint64_t ne[2] = { ne0, ne1 ? ne1 : 1 };
	uint64_t n = ne0 * ne[1], i;
	size_t bytes = quant_row_size(type, n);
	float *f;
	void *q;
	int r;

	if (!bytes) {
		fprintf(stderr, "mksynth: %s: %llu elements cannot be %s (row %llu)\n", name,
			(unsigned long long)n, quant_type_name(type), (unsigned long long)ne0);
		return -1;
	}
	if (g->shape_only) {
		r = gguf_writer_add_tensor_hole(g->w, name, ne1 ? 2 : 1, ne, (uint32_t)type, bytes);
		return r ? failf(name, r) : 0;
	}
	f = malloc(n * sizeof(*f));
	q = malloc(bytes);
	if (!f || !q) {
		free(f);
		free(q);
		return failf(name, -ENOMEM);
	}
	for (i = 0; i < n; i++)
		f[i] = fill(g, arg);
	if (quant_quantize_row(type, f, q, n)) {
		free(f);
		free(q);
		fprintf(stderr, "mksynth: %s: cannot quantize to %s\n", name, quant_type_name(type));
		return -1;
	}
	r = gguf_writer_add_tensor(g->w, name, ne1 ? 2 : 1, ne, (uint32_t)type, q, bytes);
	free(f);
	free(q);
	return r ? failf(name, r) : 0;
}

static float fill_uniform(struct gen *g, void *arg)
{
	return (float)(rng_sym(g) * *(double *)arg);
}

/* The token embedding, uniform in +-scale, kept for the LM head. */
static float fill_embd(struct gen *g, void *arg)
{
	float v = (float)(rng_sym(g) * *(double *)arg);

	if (g->embd)
		g->embd[g->embd_i++] = v;
	return v;
}

/* Untied LM head: the embedding plus uniform noise of half its scale. */
static float fill_head(struct gen *g, void *arg)
{
	double noise = rng_sym(g) * 0.5 * *(double *)arg;

	return (float)(g->embd[g->embd_i++] + noise);
}

static float fill_norm(struct gen *g, void *arg)
{
	(void)arg;
	return (float)(1.0 + 0.1 * rng_sym(g));
}

static float fill_ssm_a(struct gen *g, void *arg)
{
	(void)arg;
	return (float)-(1.0 + 15.0 * rng_unit(g));
}

/* dt log-uniform in [1e-3, 1e-1], stored as its inverse softplus. */
static float fill_ssm_dt(struct gen *g, void *arg)
{
	double dt = exp(log(1e-3) + rng_unit(g) * (log(1e-1) - log(1e-3)));

	(void)arg;
	return (float)log(expm1(dt));
}

/* A matrix ne0 (fan-in) x ne1 in @type with uniform +-sqrt(3/fan_in)*gain. */
static int matrix(struct gen *g, const char *name, uint64_t ne0, uint64_t ne1, int type,
		  double gain)
{
	double scale = sqrt(3.0 / (double)ne0) * gain;

	return add(g, name, ne0, ne1, type, fill_uniform, &scale);
}

static int vec_norm(struct gen *g, const char *name, uint64_t n)
{
	return add(g, name, n, 0, QUANT_TYPE_F32, fill_norm, NULL);
}

static int vec_uniform(struct gen *g, const char *name, uint64_t n, double scale)
{
	return add(g, name, n, 0, QUANT_TYPE_F32, fill_uniform, &scale);
}

/* llama.cpp's use_more_bits(i, n): first and last eighth, every third between. */
static bool more_bits(uint32_t i, uint32_t n)
{
	return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

static bool is_full_attn(const struct shape *s, uint32_t l)
{
	return strcmp(s->arch, "qwen35") || (l + 1) % s->fa_interval == 0 || l >= s->n_layers;
}

static int add_attention(struct gen *g, uint32_t l, const char *p)
{
	const struct shape *s = g->s;
	bool gated = !strcmp(s->arch, "qwen35");
	uint64_t q = (uint64_t)s->n_head * s->head_dim, kv = (uint64_t)s->n_kv * s->head_dim;
	int tv = more_bits(l, s->n_layers) ? g->t->more : g->t->mat;
	char n[96];
	int r = 0;

	/* qwen35: per head [q (head_dim), gate (head_dim)] rows. */
	snprintf(n, sizeof(n), "%s.attn_q.weight", p);
	r = r ? r : matrix(g, n, s->dim, gated ? 2 * q : q, g->t->mat, 1.0);
	snprintf(n, sizeof(n), "%s.attn_k.weight", p);
	r = r ? r : matrix(g, n, s->dim, kv, g->t->mat, 1.0);
	snprintf(n, sizeof(n), "%s.attn_v.weight", p);
	r = r ? r : matrix(g, n, s->dim, kv, tv, 1.0);
	snprintf(n, sizeof(n), "%s.attn_output.weight", p);
	r = r ? r : matrix(g, n, q, s->dim, g->t->mat, 1.0);
	if (!strcmp(s->arch, "qwen2")) {
		snprintf(n, sizeof(n), "%s.attn_q.bias", p);
		r = r ? r : vec_uniform(g, n, q, 0.1);
		snprintf(n, sizeof(n), "%s.attn_k.bias", p);
		r = r ? r : vec_uniform(g, n, kv, 0.1);
		snprintf(n, sizeof(n), "%s.attn_v.bias", p);
		r = r ? r : vec_uniform(g, n, kv, 0.1);
	}
	if (!strcmp(s->arch, "qwen3") || gated) {
		snprintf(n, sizeof(n), "%s.attn_q_norm.weight", p);
		r = r ? r : vec_norm(g, n, s->head_dim);
		snprintf(n, sizeof(n), "%s.attn_k_norm.weight", p);
		r = r ? r : vec_norm(g, n, s->head_dim);
	}
	return r;
}

/* Gated DeltaNet (qwen35 linear attention) tensors of block @p. */
static int add_deltanet(struct gen *g, const char *p)
{
	const struct shape *s = g->s;
	uint64_t key = (uint64_t)s->ssm_groups * s->ssm_state;
	uint64_t val = (uint64_t)s->ssm_rank * s->ssm_state;
	double half = 0.5;
	char n[96];
	int r = 0;

	snprintf(n, sizeof(n), "%s.attn_qkv.weight", p);
	r = r ? r : matrix(g, n, s->dim, 2 * key + val, g->t->mat, 1.0);
	snprintf(n, sizeof(n), "%s.attn_gate.weight", p);
	r = r ? r : matrix(g, n, s->dim, val, g->t->mat, 1.0);
	/* [conv_kernel, channels]: the taps of one channel are contiguous. */
	snprintf(n, sizeof(n), "%s.ssm_conv1d.weight", p);
	r = r ? r : add(g, n, s->ssm_conv, 2 * key + val, QUANT_TYPE_F32, fill_uniform, &half);
	snprintf(n, sizeof(n), "%s.ssm_dt.bias", p);
	r = r ? r : add(g, n, s->ssm_rank, 0, QUANT_TYPE_F32, fill_ssm_dt, NULL);
	snprintf(n, sizeof(n), "%s.ssm_a", p);
	r = r ? r : add(g, n, s->ssm_rank, 0, QUANT_TYPE_F32, fill_ssm_a, NULL);
	snprintf(n, sizeof(n), "%s.ssm_beta.weight", p);
	r = r ? r : matrix(g, n, s->dim, s->ssm_rank, g->t->mat, 1.0);
	snprintf(n, sizeof(n), "%s.ssm_alpha.weight", p);
	r = r ? r : matrix(g, n, s->dim, s->ssm_rank, g->t->mat, 0.5);
	snprintf(n, sizeof(n), "%s.ssm_norm.weight", p);
	r = r ? r : vec_norm(g, n, s->ssm_state);
	snprintf(n, sizeof(n), "%s.ssm_out.weight", p);
	r = r ? r : matrix(g, n, val, s->dim, g->t->mat, 1.0);
	return r;
}

static int add_block(struct gen *g, uint32_t l)
{
	const struct shape *s = g->s;
	bool qwen35 = !strcmp(s->arch, "qwen35");
	int td = more_bits(l, s->n_layers) ? g->t->more : g->t->mat;
	char p[32], n[96];
	int r = 0;

	snprintf(p, sizeof(p), "blk.%u", l);
	snprintf(n, sizeof(n), "%s.attn_norm.weight", p);
	r = r ? r : vec_norm(g, n, s->dim);
	if (is_full_attn(s, l))
		r = r ? r : add_attention(g, l, p);
	else
		r = r ? r : add_deltanet(g, p);
	/* qwen35 names the FFN's norm post_attention_norm. */
	snprintf(n, sizeof(n), qwen35 ? "%s.post_attention_norm.weight" : "%s.ffn_norm.weight", p);
	r = r ? r : vec_norm(g, n, s->dim);
	snprintf(n, sizeof(n), "%s.ffn_gate.weight", p);
	r = r ? r : matrix(g, n, s->dim, s->ffn, g->t->mat, 1.0);
	snprintf(n, sizeof(n), "%s.ffn_up.weight", p);
	r = r ? r : matrix(g, n, s->dim, s->ffn, g->t->mat, 1.0);
	snprintf(n, sizeof(n), "%s.ffn_down.weight", p);
	r = r ? r : matrix(g, n, s->ffn, s->dim, td, 1.0);
	if (l >= s->n_layers) {
		/* An MTP block's own tensors (llama.cpp's nextn names). */
		snprintf(n, sizeof(n), "%s.nextn.eh_proj.weight", p);
		r = r ? r : matrix(g, n, 2 * s->dim, s->dim, g->t->mat, 1.0);
		snprintf(n, sizeof(n), "%s.nextn.enorm.weight", p);
		r = r ? r : vec_norm(g, n, s->dim);
		snprintf(n, sizeof(n), "%s.nextn.hnorm.weight", p);
		r = r ? r : vec_norm(g, n, s->dim);
		snprintf(n, sizeof(n), "%s.nextn.shared_head_norm.weight", p);
		r = r ? r : vec_norm(g, n, s->dim);
	}
	return r;
}

static int add_hparams(struct gen *g)
{
	const struct shape *s = g->s;
	struct gguf_writer *w = g->w;
	char k[96];
	int r = 0;

#define U32(suffix, v) do { snprintf(k, sizeof(k), "%s." suffix, s->arch); \
		r = r ? r : gguf_writer_add_u32(w, k, (v)); } while (0)
#define F32(suffix, v) do { snprintf(k, sizeof(k), "%s." suffix, s->arch); \
		r = r ? r : gguf_writer_add_f32(w, k, (v)); } while (0)
	r = gguf_writer_add_str(w, "general.architecture", s->arch);
	r = r ? r : gguf_writer_add_str(w, "general.name", "rk1828 synthetic");
	/* The weights are holes: the runtime need not upload them (pipeline.h). */
	if (g->shape_only)
		r = r ? r : gguf_writer_add_bool(w, "rk1828.shape_only", true);
	U32("block_count", s->n_layers + g->mtp);
	if (g->mtp)
		U32("nextn_predict_layers", g->mtp);
	U32("context_length", s->ctx);
	U32("embedding_length", s->dim);
	U32("feed_forward_length", s->ffn);
	U32("attention.head_count", s->n_head);
	U32("attention.head_count_kv", s->n_kv);
	U32("attention.key_length", s->head_dim);
	U32("attention.value_length", s->head_dim);
	U32("rope.dimension_count", s->rope_dim);
	F32("rope.freq_base", s->theta);
	F32("attention.layer_norm_rms_epsilon", s->eps);
	if (!strcmp(s->arch, "qwen35")) {
		snprintf(k, sizeof(k), "%s.rope.dimension_sections", s->arch);
		r = r ? r : gguf_writer_add_i32_arr(w, k, s->sections, 4);
		U32("ssm.conv_kernel", s->ssm_conv);
		U32("ssm.state_size", s->ssm_state);
		U32("ssm.group_count", s->ssm_groups);
		U32("ssm.time_step_rank", s->ssm_rank);
		U32("ssm.inner_size", s->ssm_rank * s->ssm_state);
		U32("full_attention_interval", s->fa_interval);
	}
#undef U32
#undef F32
	return r ? failf("metadata", r) : 0;
}

/* Copy tokenizer.* from @path; *n_vocab = its token count. */
static int add_vocab(struct gen *g, const char *path, uint32_t *n_vocab)
{
	struct gguf_file *v = gguf_open(path, g->err, sizeof(g->err));
	const struct gguf_kv *tok;
	uint64_t i;
	int r = 0;

	if (!v) {
		fprintf(stderr, "mksynth: %s\n", g->err);
		return -1;
	}
	tok = gguf_find_kv(v, "tokenizer.ggml.tokens");
	if (!tok || tok->type != GGUF_VT_ARRAY || tok->arr_n == 0 || tok->arr_n > (1u << 24)) {
		fprintf(stderr, "mksynth: %s: no tokenizer.ggml.tokens array\n", path);
		gguf_close(v);
		return -1;
	}
	*n_vocab = (uint32_t)tok->arr_n;
	for (i = 0; !r && i < v->n_kv; i++)
		if (v->kv[i].key.len > 10 && !memcmp(v->kv[i].key.s, "tokenizer.", 10))
			r = gguf_writer_copy_kv(g->w, &v->kv[i]);
	gguf_close(v);
	return r ? failf("copying the vocabulary", r) : 0;
}

/*
 * GPT-2's byte-level alphabet (bytes_to_unicode): printable bytes stand
 * for themselves, the others for U+0100 + their rank; @out gets the UTF-8.
 */
static void byte_piece(unsigned int b, char *out)
{
	unsigned int cp = b, k = 0, i;

	if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)) {
		for (i = 0; i < b; i++)
			k += !((i >= 33 && i <= 126) || (i >= 161 && i <= 172) || i >= 174);
		cp = 256 + k;
	}
	if (cp < 0x80) {
		out[0] = (char)cp;
		out[1] = '\0';
	} else {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		out[2] = '\0';
	}
}

/*
 * The placeholder vocabulary (gpt2 type): the 256 byte tokens, so that any
 * text tokenizes (one token per byte, no merges), then "<tN>" fillers; the
 * last one is the end-of-text control token.
 */
static int add_placeholder_vocab(struct gen *g, uint32_t n)
{
	char **tok = calloc(n, sizeof(*tok));
	int32_t *type = calloc(n, sizeof(*type));
	uint32_t i;
	int r = -ENOMEM;

	if (!tok || !type || n <= 256)
		goto out;
	for (i = 0; i < n; i++) {
		tok[i] = malloc(16);
		if (!tok[i])
			goto out;
		if (i < 256)
			byte_piece(i, tok[i]);
		else
			snprintf(tok[i], 16, "<t%u>", i);
		type[i] = i == n - 1 ? 3 : 1;
	}
	r = gguf_writer_add_str(g->w, "tokenizer.ggml.model", "gpt2");
	r = r ? r : gguf_writer_add_str(g->w, "tokenizer.ggml.pre", "qwen2");
	r = r ? r : gguf_writer_add_str_arr(g->w, "tokenizer.ggml.tokens", (const char *const *)tok, n);
	r = r ? r : gguf_writer_add_i32_arr(g->w, "tokenizer.ggml.token_type", type, n);
	r = r ? r : gguf_writer_add_str_arr(g->w, "tokenizer.ggml.merges", NULL, 0);
	r = r ? r : gguf_writer_add_u32(g->w, "tokenizer.ggml.eos_token_id", n - 1);
	r = r ? r : gguf_writer_add_bool(g->w, "tokenizer.ggml.add_bos_token", false);
out:
	if (tok)
		for (i = 0; i < n; i++)
			free(tok[i]);
	free(tok);
	free(type);
	return r ? failf("vocabulary", r) : 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: mksynth -o OUT.gguf --arch llama|qwen2|qwen3|qwen35 [--type TYPE]\n"
		"               [--vocab VOCAB.gguf] [--preset tiny|bench|9b|27b] [--shape FILE]\n"
		"               [--shape-only] [--seed S] [--layers N] [--ffn N] [--mtp N]\n"
		"TYPE: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q5_k q6_k q4_k_m w4a16\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "arch", required_argument, NULL, 'a' },
		{ "type", required_argument, NULL, 't' },
		{ "vocab", required_argument, NULL, 'v' },
		{ "preset", required_argument, NULL, 'p' },
		{ "shape-only", no_argument, NULL, 'S' },
		{ "seed", required_argument, NULL, 's' },
		{ "layers", required_argument, NULL, 'l' },
		{ "ffn", required_argument, NULL, 'f' },
		{ "mtp", required_argument, NULL, 'M' },
		{ "embd-scale", required_argument, NULL, 'E' },
		{ "out", required_argument, NULL, 'o' },
		{ "shape", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	const char *arch = NULL, *type = "f32", *vocab = NULL, *preset = "tiny", *out = NULL;
	const char *shape_file = NULL;
	static struct model_shape ms;
	struct gen g = { 0 };
	struct shape s;
	unsigned long layers = 0, ffn = 0;
	uint64_t seed = 0;
	uint32_t n_vocab, l;
	size_t i;
	double scale = 1.0;
	int c, r;

	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'a': arch = optarg; break;
		case 't': type = optarg; break;
		case 'v': vocab = optarg; break;
		case 'p': preset = optarg; break;
		case 'S': g.shape_only = true; break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'l': layers = strtoul(optarg, NULL, 0); break;
		case 'f': ffn = strtoul(optarg, NULL, 0); break;
		case 'M': g.mtp = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'E': g.embd_scale = strtod(optarg, NULL); break;
		case 'o': out = optarg; break;
		case 'F': shape_file = optarg; break;
		default: usage(); return 1;
		}
	}
	if (shape_file) {
		char err[512];

		if (shape_load(&ms, shape_file, err, sizeof(err))) {
			fprintf(stderr, "mksynth: %s\n", err);
			return 1;
		}
		if (arch && strcmp(arch, ms.arch)) {
			fprintf(stderr, "mksynth: --arch %s, but %s is %s\n", arch, shape_file, ms.arch);
			return 1;
		}
		arch = ms.arch;
	}
	if (!out || !arch || optind != argc) {
		usage();
		return 1;
	}
	if (shape_file) {
		if (!shape_preset(&ms, &s)) {
			fprintf(stderr, "mksynth: %s: unknown arch %s\n", shape_file, ms.arch);
			return 1;
		}
		g.shape_only = true;
	} else if (!strcmp(preset, "9b") || !strcmp(preset, "27b")) {
		if (strcmp(arch, "qwen35")) {
			fprintf(stderr, "mksynth: --preset %s is a qwen35 shape\n", preset);
			return 1;
		}
		s = !strcmp(preset, "9b") ? qwen35_9b : qwen35_27b;
		g.shape_only = true;
	} else if (!strcmp(preset, "tiny") || !strcmp(preset, "bench")) {
		const struct shape *set = preset[0] == 't' ? tiny : bench;
		size_t n = preset[0] == 't' ? sizeof(tiny) / sizeof(tiny[0]) :
			   sizeof(bench) / sizeof(bench[0]);

		for (i = 0; i < n; i++)
			if (!strcmp(set[i].arch, arch))
				break;
		if (i == n) {
			fprintf(stderr, "mksynth: --preset %s has no --arch %s\n", preset, arch);
			return 1;
		}
		s = set[i];
	} else {
		fprintf(stderr, "mksynth: unknown --preset %s\n", preset);
		return 1;
	}
	if (layers)
		s.n_layers = (uint32_t)layers;
	if (ffn)
		s.ffn = (uint32_t)ffn;
	for (i = 0; i < sizeof(type_plans) / sizeof(type_plans[0]); i++)
		if (!strcmp(type_plans[i].name, type))
			break;
	if (i == sizeof(type_plans) / sizeof(type_plans[0])) {
		fprintf(stderr, "mksynth: unknown --type %s\n", type);
		return 1;
	}
	g.t = &type_plans[i];
	g.s = &s;
	/* A different stream per arch; the type does not change the draws. */
	g.rng = 0x9e3779b97f4a7c15ULL ^ (seed * 0x100000001b3ULL) ^ (uint64_t)strlen(arch) ^
		((uint64_t)(unsigned char)arch[strlen(arch) - 1] << 32);
	g.w = gguf_writer_new();
	if (!g.w)
		return failf("writer", -ENOMEM);

	r = add_hparams(&g);
	n_vocab = s.n_vocab;
	if (!r)
		r = vocab ? add_vocab(&g, vocab, &n_vocab) : add_placeholder_vocab(&g, n_vocab);
	scale = g.embd_scale > 0 ? g.embd_scale : s.embd_scale > 0 ? s.embd_scale : 1.0;
	if (!s.tied && !g.shape_only) {
		g.embd = malloc((size_t)s.dim * n_vocab * sizeof(float));
		if (!g.embd)
			r = failf("embedding copy", -ENOMEM);
	}
	if (!r)
		r = add(&g, "token_embd.weight", s.dim, n_vocab, g.t->embd, fill_embd, &scale);
	for (l = 0; !r && l < s.n_layers + g.mtp; l++)
		r = add_block(&g, l);
	if (!r)
		r = vec_norm(&g, "output_norm.weight", s.dim);
	g.embd_i = 0;
	if (!r && !s.tied && g.shape_only)
		r = matrix(&g, "output.weight", s.dim, n_vocab, g.t->head, 1.0);
	else if (!r && !s.tied)
		r = add(&g, "output.weight", s.dim, n_vocab, g.t->head, fill_head, &scale);
	free(g.embd);
	if (!r && gguf_writer_write_file(g.w, out, g.err, sizeof(g.err))) {
		fprintf(stderr, "mksynth: %s\n", g.err);
		r = -1;
	}
	gguf_writer_free(g.w);
	return r ? 1 : 0;
}
