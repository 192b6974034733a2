// SPDX-License-Identifier: MIT
/*
 * Loading qwen35 (Qwen3.5) GGUFs: llm_model_load() on models written by
 * build/tools/mksynth (llama.cpp's metadata keys and tensor names) and on
 * damaged copies of them written with the GGUF writer:
 *
 *  - the hybrid layout: DeltaNet and full-attention blocks by
 *    full_attention_interval, ssm.* sizes, IMROPE sections, the gated q
 *    projection ([query, gate] rows per head), post_attention_norm;
 *  - multi-token-prediction blocks (nextn_predict_layers) are skipped with
 *    a note;
 *  - errors name the file and the key or tensor: a missing ssm key, a
 *    missing DeltaNet tensor, value heads not a multiple of key heads,
 *    missing IMROPE sections, a fused attention qkv (test_model checks an
 *    unknown architecture is named with the supported list).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "gguf_write.h"
#include "model.h"
#include "rk1828/program.h"
#include "tap.h"

static int mksynth(const char *args, char *path, size_t len)
{
	char cmd[512];
	int fd;

	snprintf(path, len, "/tmp/rk1828-model-qwen35-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "build/tools/mksynth -o %s --arch qwen35 %s", path, args);
	return system(cmd);
}

static int load(const char *path, struct llm_model *m, struct gguf_file **gf, char *err,
		size_t errlen)
{
	*gf = gguf_open(path, err, errlen);
	if (!*gf)
		return -1;
	if (llm_model_load(m, *gf, err, errlen)) {
		gguf_close(*gf);
		*gf = NULL;
		return -1;
	}
	return 0;
}

/*
 * Copy @src to @dst through the writer, with the kv @drop left out, kv
 * @ukey (when set) replaced by u32 @uval, and tensor @tdrop left out or,
 * when @tname is set, renamed to @tname.
 */
static int rewrite(const char *src, const char *dst, const char *drop, const char *ukey,
		   uint32_t uval, const char *tdrop, const char *tname)
{
	char err[512];
	struct gguf_file *f = gguf_open(src, err, sizeof(err));
	struct gguf_writer *w = gguf_writer_new();
	uint64_t i;
	int r = 0;

	if (!f || !w)
		return -1;
	for (i = 0; !r && i < f->n_kv; i++) {
		const struct gguf_kv *kv = &f->kv[i];
		char key[256];

		snprintf(key, sizeof(key), "%.*s", (int)kv->key.len, kv->key.s);
		if (drop && !strcmp(key, drop))
			continue;
		if (ukey && !strcmp(key, ukey))
			r = gguf_writer_add_u32(w, key, uval);
		else
			r = gguf_writer_copy_kv(w, kv);
	}
	for (i = 0; !r && i < f->n_tensors; i++) {
		const struct gguf_tensor *t = &f->tensors[i];
		char name[128];

		snprintf(name, sizeof(name), "%.*s", (int)t->name.len, t->name.s);
		if (tdrop && !strcmp(name, tdrop)) {
			if (!tname)
				continue;
			snprintf(name, sizeof(name), "%s", tname);
		}
		r = gguf_writer_add_tensor(w, name, t->n_dims, t->ne, t->type, t->data, t->nbytes);
	}
	if (!r)
		r = gguf_writer_write_file(w, dst, err, sizeof(err));
	gguf_writer_free(w);
	gguf_close(f);
	return r;
}

static void expect_error(const char *base, const char *what, const char *drop, const char *ukey,
			 uint32_t uval, const char *tdrop, const char *tname, const char *want)
{
	char path[] = "/tmp/rk1828-model-qwen35-bad-XXXXXX", err[512] = "";
	struct llm_model m;
	struct gguf_file *gf;
	int fd = mkstemp(path), rc = -1;

	if (fd >= 0) {
		close(fd);
		if (!rewrite(base, path, drop, ukey, uval, tdrop, tname))
			rc = load(path, &m, &gf, err, sizeof(err));
	}
	if (!rc) {
		llm_model_free(&m);
		gguf_close(gf);
	}
	tap_ok(rc && strstr(err, want) && strstr(err, path), "%s: \"%s\"", what, err);
	unlink(path);
}

int main(void)
{
	char path[128], mtp[128], err[512];
	struct llm_model m;
	struct gguf_file *gf;
	uint32_t l;
	int ok;

	if (!tap_ok(mksynth("--type q4_k_m", path, sizeof(path)) == 0 &&
		    mksynth("--layers 8 --mtp 1", mtp, sizeof(mtp)) == 0,
		    "build/tools/mksynth writes qwen35 models"))
		return tap_done();
	if (tap_ok(!load(path, &m, &gf, err, sizeof(err)), "qwen35 Q4_K_M loads (%s)", err)) {
		ok = m.arch == LLM_ARCH_QWEN35 && m.n_layers == 8 && m.n_deltanet == 6 &&
		     llm_model_hybrid(&m) && m.attn_gate;
		for (l = 0; l < m.n_layers; l++)
			ok = ok && m.layers[l].kind ==
			     ((l + 1) % 4 ? LLM_LAYER_DELTANET : LLM_LAYER_ATTN);
		tap_ok(ok, "8 blocks: DeltaNet but every 4th (full_attention_interval 4)");
		tap_ok(m.ssm_state == 64 && m.ssm_k_heads == 2 && m.ssm_v_heads == 4 &&
		       m.ssm_conv == 4 && m.rope_dim == 16 && m.rope_sections[0] == 2 &&
		       m.rope_sections[3] == 2 && m.rope_neox,
		       "ssm.state_size 64, group_count 2, time_step_rank 4, conv_kernel 4; "
		       "rope 16 dims, sections 2/2/2/2, NEOX pairs");
		tap_ok(m.layers[3].wq->ne[1] == 2ULL * m.n_heads * m.head_dim &&
		       m.layers[0].ssm_qkv->ne[1] == llm_ssm_channels(&m) &&
		       m.layers[0].ssm_conv->ne[0] == 4 && !m.layers[0].wq &&
		       !m.layers[3].ssm_qkv && m.layers[0].ffn_norm && m.layers[3].q_norm,
		       "gated q projection of %llu rows, qkv of %llu conv channels, per-kind tensors",
		       (unsigned long long)m.layers[3].wq->ne[1],
		       (unsigned long long)llm_ssm_channels(&m));
		tap_ok(llm_state_bytes(&m, 0) ==
		       4 * (3 * 512 + 4 * 64 * 64 + RK1828_DNET_CHUNK * (2 * 4 * 64 + 4) + 1) &&
		       llm_state_bytes(&m, 3) == 0 && m.layers[0].ffn_down->type == GGML_TYPE_Q6_K &&
		       m.layers[1].ffn_down->type == GGML_TYPE_Q4_K && !m.note[0],
		       "state bytes per sequence: DeltaNet 3 x 512 + 4 x 64 x 64 floats + a chunk of "
		       "keys and values, attention 0; "
		       "Q4_K_M mix (Q6_K ffn_down in block 0, Q4_K in block 1)");
		llm_model_free(&m);
		gguf_close(gf);
	}
	if (tap_ok(!load(mtp, &m, &gf, err, sizeof(err)), "qwen35 with an MTP block loads")) {
		tap_ok(m.n_layers == 8 && m.n_mtp == 1 && strstr(m.note, "1 multi-token-prediction block") &&
		       strstr(m.note, "blk.8,"), "nextn_predict_layers 1: 8 decoder blocks run, "
		       "note: \"%s\"", m.note);
		llm_model_free(&m);
		gguf_close(gf);
	}
	expect_error(path, "missing ssm key", "qwen35.ssm.state_size", NULL, 0, NULL, NULL,
		     "missing metadata key qwen35.ssm.state_size");
	expect_error(path, "value heads not a multiple of key heads", NULL,
		     "qwen35.ssm.time_step_rank", 3, NULL, NULL,
		     "ssm.time_step_rank 3 is not a multiple of ssm.group_count 2");
	expect_error(path, "missing DeltaNet tensor", NULL, NULL, 0, "blk.1.ssm_alpha.weight", NULL,
		     "missing tensor blk.1.ssm_alpha.weight");
	expect_error(path, "missing rope.dimension_sections", "qwen35.rope.dimension_sections",
		     NULL, 0, NULL, NULL, "qwen35.rope.dimension_sections");
	expect_error(path, "fused attention qkv", NULL, NULL, 0, "blk.3.attn_q.weight",
		     "blk.3.attn_qkv.weight", "fused attn_qkv");
	unlink(path);
	unlink(mtp);
	return tap_done();
}
