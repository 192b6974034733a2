// SPDX-License-Identifier: MIT
/*
 * Host unit tests of the model description (userspace/llm/model.c) on
 * synthetic GGUF files written with gguf_write.h: hyperparameters and
 * defaults, tied LM head, qwen2 biases, qwen3 Q/K norms, and the errors
 * for a missing key, a missing tensor, a mis-shaped tensor, a quantized
 * norm, an unknown architecture and bad head counts. Prints TAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "gguf_write.h"
#include "quant.h"
#include "model.h"

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

static int add_t(struct gguf_writer *w, const struct variant *v, const char *name,
		 uint64_t ne0, uint64_t ne1, int type)
{
	uint64_t ne[2] = { ne0, ne1 };
	size_t n, bytes;
	void *buf;
	float *f;
	size_t i;
	int ret;

	if (v->skip_tensor && !strcmp(name, v->skip_tensor))
		return 0;
	if (v->bad_shape && !strcmp(name, v->bad_shape))
		ne[ne1 ? 1 : 0]--;
	n = ne[0] * (ne1 ? ne[1] : 1);
	f = malloc(n * sizeof(float));
	for (i = 0; i < n; i++)
		f[i] = (float)((int)(i % 13) - 6) / 8.0f;
	bytes = quant_row_size(type, n);
	buf = malloc(bytes);
	if (type == QUANT_TYPE_F32)
		memcpy(buf, f, bytes);
	else
		quant_quantize_row(type, f, buf, n);
	ret = gguf_writer_add_tensor(w, name, ne1 ? 2 : 1, ne, type, buf, bytes);
	free(buf);
	free(f);
	return ret;
}

static struct gguf_file *make(const struct variant *v, char *path, char *err, size_t errlen)
{
	struct gguf_writer *w = gguf_writer_new();
	const char *a = v->arch ? v->arch : "llama";
	uint32_t nkv = v->n_kv ? v->n_kv : NKV;
	char key[96], name[96];
	int l, fd;

	strcpy(path, "/tmp/rk1828-test-model-XXXXXX");
	fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
#define KU(k, val) do { snprintf(key, sizeof(key), "%s." k, a); gguf_writer_add_u32(w, key, val); } while (0)
	gguf_writer_add_str(w, "general.architecture", a);
	if (!v->skip_key)
		KU("block_count", 2);
	KU("embedding_length", DIM);
	KU("feed_forward_length", FFN);
	KU("attention.head_count", NH);
	KU("attention.head_count_kv", nkv);
	KU("context_length", 256);
	snprintf(key, sizeof(key), "%s.rope.freq_base", a);
	gguf_writer_add_f32(w, key, 500000.0f);
#undef KU
	add_t(w, v, "token_embd.weight", DIM, VOCAB,
	      v->f16_embd ? QUANT_TYPE_F16 : QUANT_TYPE_F32);
	for (l = 0; l < 2; l++) {
#define T(s, ne0, ne1, ty) do { snprintf(name, sizeof(name), "blk.%d." s, l); \
			add_t(w, v, name, ne0, ne1, ty); } while (0)
		T("attn_norm.weight", DIM, 0, v->q8_norm && l == 0 ? QUANT_TYPE_Q8_0 : QUANT_TYPE_F32);
		T("attn_q.weight", DIM, NH * HD, QUANT_TYPE_Q8_0);
		T("attn_k.weight", DIM, nkv * HD, QUANT_TYPE_Q4_0);
		T("attn_v.weight", DIM, nkv * HD, QUANT_TYPE_F16);
		T("attn_output.weight", NH * HD, DIM, QUANT_TYPE_F32);
		if (!strcmp(a, "qwen2")) {
			T("attn_q.bias", NH * HD, 0, QUANT_TYPE_F32);
			T("attn_k.bias", nkv * HD, 0, QUANT_TYPE_F32);
			T("attn_v.bias", nkv * HD, 0, QUANT_TYPE_F16);
		}
		if (!strcmp(a, "qwen3")) {
			T("attn_q_norm.weight", HD, 0, QUANT_TYPE_F32);
			T("attn_k_norm.weight", HD, 0, QUANT_TYPE_F32);
		}
		T("ffn_norm.weight", DIM, 0, QUANT_TYPE_F16);
		T("ffn_gate.weight", DIM, FFN, QUANT_TYPE_Q4_0);
		T("ffn_up.weight", DIM, FFN, QUANT_TYPE_Q4_0);
		T("ffn_down.weight", FFN, DIM, QUANT_TYPE_Q8_0);
#undef T
	}
	add_t(w, v, "output_norm.weight", DIM, 0, QUANT_TYPE_F32);
	if (!v->tied)
		add_t(w, v, "output.weight", DIM, VOCAB, QUANT_TYPE_Q8_0);
	if (gguf_writer_write_file(w, path, err, errlen) < 0) {
		gguf_writer_free(w);
		return NULL;
	}
	gguf_writer_free(w);
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
		tap_ok(llm_kv_bytes(&m, 100) == 2ULL * 100 * NKV * HD * 4, "llama: KV bytes");
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
