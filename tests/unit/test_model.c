// SPDX-License-Identifier: MIT
/*
 * Host unit tests of the model description (userspace/llm/model.c) on
 * synthetic GGUF files (tests/lib/synth_model.h): hyperparameters and
 * defaults, tied LM head, qwen2 biases, qwen3 Q/K norms, and the errors
 * for a missing key, a missing tensor, a mis-shaped tensor, a quantized
 * norm, an unknown architecture and bad head counts. Prints TAP.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "model.h"
#include "rk1828/quant_blocks.h"

#include "synth_model.h"
#include "tap.h"


/* Tiny model: 2 blocks, dim 32, 4 heads of 8, 2 KV heads, FFN 64, vocab 16. */
#define DIM 32
#define FFN 64
#define NH 4
#define NKV 2
#define HD 8
#define VOCAB 16

/* What to break in the synthetic file. */
struct variant {
	const char *arch;
	int skip_key;		/* drop <arch>.block_count */
	const char *skip_tensor;
	const char *bad_shape;	/* this tensor gets one row less */
	int q8_norm;		/* blk.0.attn_norm as Q8_0 */
	int tied;		/* no output.weight */
	int f16_embd;		/* token_embd as F16 */
	uint32_t n_kv;		/* head_count_kv (default NKV) */
};

static struct gguf_file *make(const struct variant *v, char *path, char *err, size_t errlen)
{
	const char *a = v->arch ? v->arch : "llama";
	struct synth_model s = {
		.arch = a, .n_layers = 2, .dim = DIM, .ffn = FFN, .n_heads = NH,
		.n_kv_heads = v->n_kv ? v->n_kv : NKV, .n_ctx = 256, .n_vocab = VOCAB,
		.rope_theta = 500000.0f, .fill = SYNTH_PATTERN,
		.biases = !strcmp(a, "qwen2"), .qk_norm = !strcmp(a, "qwen3"),
		.tied = v->tied,
		.skip_key = v->skip_key ? "block_count" : NULL,
		.skip_tensor = v->skip_tensor, .short_tensor = v->bad_shape,
		.retype_tensor = v->q8_norm ? "blk.0.attn_norm.weight" : NULL,
		.retype = QUANT_TYPE_Q8_0,
		.t = {
			[SYNTH_EMBD] = { v->f16_embd ? QUANT_TYPE_F16 : QUANT_TYPE_F32 },
			[SYNTH_ATTN_NORM] = { QUANT_TYPE_F32 },
			[SYNTH_Q] = { QUANT_TYPE_Q8_0 },
			[SYNTH_K] = { QUANT_TYPE_Q4_0 },
			[SYNTH_V] = { QUANT_TYPE_F16 },
			[SYNTH_O] = { QUANT_TYPE_F32 },
			[SYNTH_BIAS] = { QUANT_TYPE_F16 },
			[SYNTH_QK_NORM] = { QUANT_TYPE_F32 },
			[SYNTH_FFN_NORM] = { QUANT_TYPE_F16 },
			[SYNTH_GATE] = { QUANT_TYPE_Q4_0 },
			[SYNTH_UP] = { QUANT_TYPE_Q4_0 },
			[SYNTH_DOWN] = { QUANT_TYPE_Q8_0 },
			[SYNTH_OUT_NORM] = { QUANT_TYPE_F32 },
			[SYNTH_OUTPUT] = { QUANT_TYPE_Q8_0 },
		},
	};

	if (synth_model_tmp(&s, path, err, errlen))
		return NULL;
	return gguf_open(path, err, errlen);
}

/* Load variant @v; returns llm_model_load()'s result, message in @err. */
static int load(const struct variant *v, struct llm_model *m, char *err, size_t errlen,
		struct gguf_file **gfp, char *path)
{
	struct gguf_file *gf = make(v, path, err, errlen);

	*gfp = gf;
	if (!gf)
		return -2;
	return llm_model_load(m, gf, err, errlen);
}

static void done(struct llm_model *m, struct gguf_file *gf, const char *path)
{
	llm_model_free(m);
	if (gf)
		gguf_close(gf);
	unlink(path);
}

/* Expect failure with every @needle in the message (and the file path). */
static void expect_error(const struct variant *v, const char *what, const char *n1,
			 const char *n2)
{
	struct llm_model m;
	struct gguf_file *gf;
	char err[512] = "", path[64];
	int ret = load(v, &m, err, sizeof(err), &gf, path);

	tap_ok(ret == -1 && strstr(err, path) && strstr(err, n1) && (!n2 || strstr(err, n2)),
	   "%s: \"%s\"", what, err);
	done(&m, gf, path);
}

int main(void)
{
	struct variant v;
	struct llm_model m;
	struct gguf_file *gf;
	char err[512] = "", path[64];
	float row[DIM];
	int ret;

	printf("TAP version 13\n");

	memset(&v, 0, sizeof(v));
	v.f16_embd = 1;
	ret = load(&v, &m, err, sizeof(err), &gf, path);
	tap_ok(ret == 0, "llama loads%s%s", ret ? ": " : "", err);
	if (!ret) {
		tap_ok(m.arch == LLM_ARCH_LLAMA && !m.rope_neox, "llama: arch, adjacent-pair RoPE");
		tap_ok(m.n_layers == 2 && m.dim == DIM && m.ffn_dim == FFN && m.n_heads == NH &&
		   m.n_kv_heads == NKV && m.head_dim == HD && m.n_vocab == VOCAB,
		   "llama: hyperparameters");
		tap_ok(m.rope_dim == HD && m.rope_theta == 500000.0f && m.rms_eps == 1e-5f &&
		   m.n_ctx_train == 256, "llama: rope_dim and eps defaults, freq_base, context");
		tap_ok(!m.tied && m.output != m.token_embd, "llama: separate output tensor");
		tap_ok(llm_embed(&m, 3, row) == 0 && row[0] == (float)((3 * DIM) % 13 - 6) / 8.0f &&
		   row[5] == (float)((3 * DIM + 5) % 13 - 6) / 8.0f, "llama: F16 embedding row 3");
		tap_ok(llm_embed(&m, VOCAB, row) == -1 && llm_embed(&m, -1, row) == -1,
		   "llama: embedding of an out-of-range token refused");
		/* q8 32x32, q4 32x16 (2), f16 32x16, f32 32x32, norms f32; 64-aligned. */
		tap_ok(llm_layer_weight_bytes(&m, 0) ==
		   4 * DIM + 34 * NH * HD + 18 * NKV * HD + 2 * DIM * NKV * HD +
		   4 * NH * HD * DIM + 4 * DIM + 18 * 2 * FFN + 34 * DIM * 2,
		   "llama: layer weight bytes (norms as F32)");
		tap_ok(llm_kv_bytes(&m, 100, QUANT_TYPE_F32) == 2ULL * 100 * NKV * HD * 4, "llama: KV bytes");
	}
	done(&m, gf, path);

	memset(&v, 0, sizeof(v));
	v.tied = 1;
	ret = load(&v, &m, err, sizeof(err), &gf, path);
	tap_ok(ret == 0 && m.tied && m.output == m.token_embd, "no output.weight: LM head tied");
	done(&m, gf, path);

	memset(&v, 0, sizeof(v));
	v.arch = "qwen2";
	ret = load(&v, &m, err, sizeof(err), &gf, path);
	tap_ok(ret == 0 && m.rope_neox && m.layers[1].bq && m.layers[1].bv && !m.layers[0].q_norm,
	   "qwen2: loads with biases, NEOX RoPE%s%s", ret ? ": " : "", err);
	done(&m, gf, path);

	memset(&v, 0, sizeof(v));
	v.arch = "qwen3";
	ret = load(&v, &m, err, sizeof(err), &gf, path);
	tap_ok(ret == 0 && m.rope_neox && m.layers[0].q_norm && m.layers[1].k_norm && !m.layers[0].bq,
	   "qwen3: loads with Q/K norms%s%s", ret ? ": " : "", err);
	done(&m, gf, path);

	memset(&v, 0, sizeof(v));
	v.arch = "qwen2";
	v.skip_tensor = "blk.1.attn_k.bias";
	expect_error(&v, "qwen2 without a bias", "missing tensor blk.1.attn_k.bias", NULL);

	memset(&v, 0, sizeof(v));
	v.skip_tensor = "blk.1.ffn_up.weight";
	expect_error(&v, "missing tensor", "missing tensor blk.1.ffn_up.weight", NULL);

	memset(&v, 0, sizeof(v));
	v.skip_tensor = "output_norm.weight";
	expect_error(&v, "missing output_norm", "missing tensor output_norm.weight", NULL);

	memset(&v, 0, sizeof(v));
	v.bad_shape = "blk.0.attn_q.weight";
	expect_error(&v, "mis-shaped tensor", "blk.0.attn_q.weight has shape [32, 31]",
		     "expected [32, 32]");

	memset(&v, 0, sizeof(v));
	v.bad_shape = "blk.1.ffn_norm.weight";
	expect_error(&v, "mis-shaped norm", "blk.1.ffn_norm.weight has shape [31]", "expected [32]");

	memset(&v, 0, sizeof(v));
	v.q8_norm = 1;
	expect_error(&v, "quantized norm", "blk.0.attn_norm.weight has type", "expected F32, F16 or BF16");

	memset(&v, 0, sizeof(v));
	v.skip_key = 1;
	expect_error(&v, "missing key", "missing metadata key llama.block_count", NULL);

	memset(&v, 0, sizeof(v));
	v.arch = "gpt2";
	expect_error(&v, "unknown architecture", "unsupported architecture \"gpt2\"", NULL);

	memset(&v, 0, sizeof(v));
	v.n_kv = 3;
	expect_error(&v, "head_count not a multiple of head_count_kv",
		     "head_count 4 is not a multiple of head_count_kv 3", NULL);

	return tap_done();
}
