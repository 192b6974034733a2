// SPDX-License-Identifier: MIT
/*
 * GGUF reader/writer tests:
 *  - the real stories260K.gguf (RK1828_MODEL, else
 *    ../shared/models/stories260K.gguf) parses with its known shape, fast;
 *  - files written by gguf_write parse back identically (every kv type,
 *    every tensor type, v2, custom alignment);
 *  - corrupted files are rejected with "PATH: field: reason" naming the
 *    field: one case per validation rule, truncation at every length, and
 *    bit flips in every count, length, type and offset field.
 * Output: "ok N - name" / "not ok N - name", then "# N passed, M failed".
 */
#include "gguf.h"
#include "gguf_write.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "rk1828/util.h"

static char tmpdir[64];
static char tpath[128];		/* scratch file for mutated images */

static int write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	size_t off = 0;

	if (fd < 0)
		return -errno;
	while (off < len) {
		ssize_t n = write(fd, (const char *)buf + off, len - off);

		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		off += (size_t)n;
	}
	return close(fd) ? -errno : 0;
}

static bool str_is(const struct gguf_str *s, const char *want)
{
	return s->len == strlen(want) && memcmp(s->s, want, s->len) == 0;
}

/* ---- the real model ---- */

static bool shape_is(const struct gguf_file *f, const char *name,
		     uint32_t nd, uint64_t n0, uint64_t n1)
{
	const struct gguf_tensor *t = gguf_find_tensor(f, name);

	return t && t->n_dims == nd && t->ne[0] == n0 && t->ne[1] == n1 &&
	       t->type == GGML_TYPE_F32 && t->nbytes == n0 * n1 * 4 &&
	       (const uint8_t *)t->data ==
			(const uint8_t *)f->map + f->data_offset + t->offset;
}

static void test_stories(const char *path)
{
	char err[512], name[64];
	struct gguf_file *f = gguf_open(path, err, sizeof(err));
	const struct gguf_kv *kv;
	struct gguf_str s;
	uint64_t u, i;
	float eps;
	double best = 1e9;
	int b, ok;

	tap_ok(f != NULL, "stories260K opens: %s", f ? path : err);
	if (!f)
		return;
	tap_ok(f->version == 3 && f->n_tensors == 48 && f->n_kv == 19 &&
	      f->alignment == 32 && f->data_offset == 14176 &&
	      f->map_size == 1185376,
	      "stories260K header: v%u, %" PRIu64 " tensors, %" PRIu64 " kv, data at %" PRIu64,
	      f->version, f->n_tensors, f->n_kv, f->data_offset);
	tap_ok(gguf_get_str(f, "general.architecture", &s) && str_is(&s, "llama"),
	      "general.architecture = llama");
	tap_ok(gguf_get_u64(f, "llama.block_count", &u) && u == 5,
	      "llama.block_count = 5");
	tap_ok(gguf_get_u64(f, "llama.embedding_length", &u) && u == 64,
	      "llama.embedding_length = 64");
	tap_ok(gguf_get_u64(f, "llama.feed_forward_length", &u) && u == 172 &&
	      gguf_get_u64(f, "llama.attention.head_count", &u) && u == 8 &&
	      gguf_get_u64(f, "llama.attention.head_count_kv", &u) && u == 4 &&
	      gguf_get_u64(f, "llama.rope.dimension_count", &u) && u == 8,
	      "ffn 172, 8 heads, 4 kv heads, rope dim 8");
	tap_ok(gguf_get_f32(f, "llama.attention.layer_norm_rms_epsilon", &eps) &&
	      eps == 1e-5f, "rms epsilon 1e-5");
	kv = gguf_find_kv(f, "tokenizer.ggml.tokens");
	tap_ok(kv && kv->type == GGUF_VT_ARRAY && kv->arr_type == GGUF_VT_STRING &&
	      kv->arr_n == 512 && gguf_arr_str(kv, 0, &s) && str_is(&s, "<unk>") &&
	      gguf_arr_str(kv, 3 + 0x41, &s) && str_is(&s, "<0x41>") &&
	      gguf_arr_str(kv, 403, &s) && str_is(&s, "\xe2\x96\x81Once") &&
	      !gguf_arr_str(kv, 512, &s),
	      "vocab: 512 strings, <unk> at 0, <0x41> at 68, '▁Once' at 403");
	{
		float sc;
		int64_t ty;
		const struct gguf_kv *sk = gguf_find_kv(f, "tokenizer.ggml.scores");
		const struct gguf_kv *tk = gguf_find_kv(f, "tokenizer.ggml.token_type");

		tap_ok(sk && sk->arr_n == 512 && gguf_arr_f32(sk, 0, &sc) &&
		      !gguf_arr_f32(sk, 512, &sc) && tk && tk->arr_n == 512 &&
		      gguf_arr_i64(tk, 1, &ty) && ty == 3 &&
		      gguf_arr_i64(tk, 3, &ty) && ty == 6 &&
		      !gguf_arr_i64(sk, 0, &ty) && !gguf_arr_f32(tk, 0, &sc),
		      "scores and token types: 512 each, BOS control, <0x00> byte, type checks");
	}
	tap_ok(gguf_get_u64(f, "tokenizer.ggml.bos_token_id", &u) && u == 1 &&
	      gguf_get_u64(f, "tokenizer.ggml.eos_token_id", &u) && u == 2,
	      "BOS 1, EOS 2");
	tap_ok(!gguf_get_u64(f, "general.architecture", &u) &&
	      !gguf_get_str(f, "llama.block_count", &s) &&
	      !gguf_get_f32(f, "llama.block_count", &eps) &&
	      !gguf_find_kv(f, "llama.block_coun") &&
	      !gguf_find_kv(f, "llama.block_count.") &&
	      !gguf_find_tensor(f, "output.weigh"),
	      "getters refuse wrong types; lookups are exact");
	ok = shape_is(f, "token_embd.weight", 2, 64, 512) &&
	     shape_is(f, "output.weight", 2, 64, 512) &&
	     shape_is(f, "output_norm.weight", 1, 64, 1);
	for (b = 0; b < 5; b++) {
		snprintf(name, sizeof(name), "blk.%d.attn_q.weight", b);
		ok &= shape_is(f, name, 2, 64, 64);
		snprintf(name, sizeof(name), "blk.%d.attn_k.weight", b);
		ok &= shape_is(f, name, 2, 64, 32);
		snprintf(name, sizeof(name), "blk.%d.attn_v.weight", b);
		ok &= shape_is(f, name, 2, 64, 32);
		snprintf(name, sizeof(name), "blk.%d.attn_output.weight", b);
		ok &= shape_is(f, name, 2, 64, 64);
		snprintf(name, sizeof(name), "blk.%d.ffn_gate.weight", b);
		ok &= shape_is(f, name, 2, 64, 172);
		snprintf(name, sizeof(name), "blk.%d.ffn_up.weight", b);
		ok &= shape_is(f, name, 2, 64, 172);
		snprintf(name, sizeof(name), "blk.%d.ffn_down.weight", b);
		ok &= shape_is(f, name, 2, 172, 64);
		snprintf(name, sizeof(name), "blk.%d.attn_norm.weight", b);
		ok &= shape_is(f, name, 1, 64, 1);
		snprintf(name, sizeof(name), "blk.%d.ffn_norm.weight", b);
		ok &= shape_is(f, name, 1, 64, 1);
	}
	tap_ok(ok && !gguf_find_tensor(f, "blk.5.attn_q.weight"),
	      "all 48 tensor shapes (5 blocks, dim 64, ffn 172, 4 kv heads x 8)");
	/* The last tensor ends exactly at the end of the file. */
	{
		const struct gguf_tensor *t = gguf_find_tensor(f, "blk.4.ffn_norm.weight");
		float w0;

		memcpy(&w0, t->data, 4);
		tap_ok(f->data_offset + t->offset + t->nbytes == f->map_size &&
		      isfinite(w0) && w0 != 0.0f,
		      "last tensor ends at end of file; weights readable (%g)", w0);
	}
	for (i = 0; i < f->n_tensors; i++)
		if (f->tensors[i].offset % 32)
			break;
	tap_ok(i == f->n_tensors, "every tensor offset is 32-byte aligned");
	gguf_close(f);

	/* Speed is a benchmark figure, not a test: report it only. */
	for (b = 0; b < 10; b++) {
		double t0 = util_now_ms(), t1;

		f = gguf_open(path, err, sizeof(err));
		t1 = util_now_ms();
		gguf_close(f);
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	printf("# gguf_open of stories260K: best of 10 %.3f ms\n", best);
}

/* ---- writer round trip ---- */

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static void test_roundtrip(uint32_t version, uint32_t align)
{
	static const char *const strs[] = { "", "one", "\xe2\x96\x81two", "three" };
	const float fa[3] = { 1.5f, -2.25f, 1e-7f };
	const int32_t ia[4] = { -1, 0, 7, INT32_MAX };
	uint64_t ne_f32[2] = { 32, 3 }, ne_f16[2] = { 5, 2 };
	uint64_t ne_q4[3] = { 64, 2, 2 }, ne_q8[4] = { 32, 1, 1, 3 };
	uint8_t d_f32[384], d_f16[20], d_q4[18 * 8], d_q8[34 * 3];
	uint8_t u8v = 200;
	int8_t i8v = -100;
	uint16_t u16v = 65000;
	int16_t i16v = -30000;
	uint64_t u64v = 0xfedcba9876543210ULL;
	int64_t i64v = INT64_MIN + 5;
	double f64v = -3.0e300;
	struct gguf_writer *w = gguf_writer_new();
	char path[160], err[512];
	struct gguf_file *f;
	const struct gguf_kv *kv;
	const struct gguf_tensor *t;
	struct gguf_str s;
	uint64_t u;
	int64_t iv;
	float fv;
	int ok = 1;
	size_t i;

	fill(d_f32, sizeof(d_f32), 1);
	fill(d_f16, sizeof(d_f16), 2);
	fill(d_q4, sizeof(d_q4), 3);
	fill(d_q8, sizeof(d_q8), 4);
	gguf_writer_set_version(w, version);
	if (align != 32)
		gguf_writer_set_alignment(w, align, true);
	gguf_writer_add_str(w, "general.architecture", "llama");
	gguf_writer_add_u32(w, "t.u32", 4000000000u);
	gguf_writer_add_i32(w, "t.i32", -123456);
	gguf_writer_add_f32(w, "t.f32", 0.125f);
	gguf_writer_add_bool(w, "t.bool", true);
	gguf_writer_add_strn(w, "t.strn", "a\0b", 3);
	gguf_writer_add_scalar(w, "t.u8", GGUF_VT_U8, &u8v);
	gguf_writer_add_scalar(w, "t.i8", GGUF_VT_I8, &i8v);
	gguf_writer_add_scalar(w, "t.u16", GGUF_VT_U16, &u16v);
	gguf_writer_add_scalar(w, "t.i16", GGUF_VT_I16, &i16v);
	gguf_writer_add_scalar(w, "t.u64", GGUF_VT_U64, &u64v);
	gguf_writer_add_scalar(w, "t.i64", GGUF_VT_I64, &i64v);
	gguf_writer_add_scalar(w, "t.f64", GGUF_VT_F64, &f64v);
	gguf_writer_add_str_arr(w, "t.strs", strs, 4);
	gguf_writer_add_f32_arr(w, "t.f32s", fa, 3);
	gguf_writer_add_i32_arr(w, "t.i32s", ia, 4);
	gguf_writer_add_i32_arr(w, "t.empty", NULL, 0);
	gguf_writer_add_tensor(w, "w.f32", 2, ne_f32, GGML_TYPE_F32, d_f32, sizeof(d_f32));
	gguf_writer_add_tensor(w, "w.f16", 2, ne_f16, GGML_TYPE_F16, d_f16, sizeof(d_f16));
	gguf_writer_add_tensor(w, "w.q4_0", 3, ne_q4, GGML_TYPE_Q4_0, d_q4, sizeof(d_q4));
	gguf_writer_add_tensor(w, "w.q8_0", 4, ne_q8, GGML_TYPE_Q8_0, d_q8, sizeof(d_q8));
	snprintf(path, sizeof(path), "%s/rt-v%u-a%u.gguf", tmpdir, version, align);
	if (gguf_writer_write_file(w, path, err, sizeof(err))) {
		tap_ok(0, "write %s: %s", path, err);
		gguf_writer_free(w);
		return;
	}
	f = gguf_open(path, err, sizeof(err));
	tap_ok(f != NULL, "v%u align %u: written file opens: %s", version, align,
	      f ? "yes" : err);
	if (!f) {
		gguf_writer_free(w);
		return;
	}
	ok &= f->version == version && f->alignment == align &&
	      f->n_kv == 17u + (align != 32) && f->n_tensors == 4 &&
	      f->data_offset == gguf_writer_data_offset(w) &&
	      f->data_offset % align == 0;
	ok &= gguf_get_str(f, "general.architecture", &s) && str_is(&s, "llama");
	ok &= gguf_get_u64(f, "t.u32", &u) && u == 4000000000u;
	kv = gguf_find_kv(f, "t.i32");
	ok &= kv && kv->type == GGUF_VT_I32 && kv->v.i == -123456 &&
	      !gguf_get_u64(f, "t.i32", &u);
	ok &= gguf_get_f32(f, "t.f32", &fv) && fv == 0.125f;
	ok &= gguf_get_u64(f, "t.bool", &u) && u == 1;
	ok &= gguf_get_str(f, "t.strn", &s) && s.len == 3 && !memcmp(s.s, "a\0b", 3);
	ok &= gguf_get_u64(f, "t.u8", &u) && u == 200;
	kv = gguf_find_kv(f, "t.i8");
	ok &= kv && kv->type == GGUF_VT_I8 && kv->v.i == -100;
	ok &= gguf_get_u64(f, "t.u16", &u) && u == 65000;
	kv = gguf_find_kv(f, "t.i16");
	ok &= kv && kv->type == GGUF_VT_I16 && kv->v.i == -30000;
	ok &= gguf_get_u64(f, "t.u64", &u) && u == u64v;
	kv = gguf_find_kv(f, "t.i64");
	ok &= kv && kv->type == GGUF_VT_I64 && kv->v.i == i64v;
	kv = gguf_find_kv(f, "t.f64");
	ok &= kv && kv->type == GGUF_VT_F64 && kv->v.f == f64v &&
	      gguf_get_f32(f, "t.f64", &fv) && fv == -INFINITY;
	tap_ok(ok, "v%u align %u: header and every scalar kv read back", version,
	      align);

	ok = 1;
	kv = gguf_find_kv(f, "t.strs");
	ok &= kv && kv->arr_type == GGUF_VT_STRING && kv->arr_n == 4;
	for (i = 0; ok && i < 4; i++)
		ok &= gguf_arr_str(kv, i, &s) && str_is(&s, strs[i]);
	/* Out-of-order access works too. */
	ok &= kv && gguf_arr_str(kv, 3, &s) && str_is(&s, "three") &&
	      gguf_arr_str(kv, 1, &s) && str_is(&s, "one");
	kv = gguf_find_kv(f, "t.f32s");
	ok &= kv && kv->arr_type == GGUF_VT_F32 && kv->arr_n == 3;
	for (i = 0; ok && i < 3; i++)
		ok &= gguf_arr_f32(kv, i, &fv) && fv == fa[i];
	kv = gguf_find_kv(f, "t.i32s");
	ok &= kv && kv->arr_type == GGUF_VT_I32 && kv->arr_n == 4;
	for (i = 0; ok && i < 4; i++)
		ok &= gguf_arr_i64(kv, i, &iv) && iv == ia[i];
	kv = gguf_find_kv(f, "t.empty");
	ok &= kv && kv->arr_n == 0 && !gguf_arr_i64(kv, 0, &iv);
	tap_ok(ok, "v%u align %u: string, f32, i32 and empty arrays read back",
	      version, align);

	ok = 1;
	t = gguf_find_tensor(f, "w.f32");
	ok &= t && t->type == GGML_TYPE_F32 && t->n_dims == 2 && t->ne[0] == 32 &&
	      t->ne[1] == 3 && t->ne[2] == 1 && t->nbytes == sizeof(d_f32) &&
	      !memcmp(t->data, d_f32, sizeof(d_f32));
	t = gguf_find_tensor(f, "w.f16");
	ok &= t && t->type == GGML_TYPE_F16 && t->ne[0] == 5 && t->ne[1] == 2 &&
	      t->nbytes == sizeof(d_f16) && !memcmp(t->data, d_f16, sizeof(d_f16));
	t = gguf_find_tensor(f, "w.q4_0");
	ok &= t && t->type == GGML_TYPE_Q4_0 && t->n_dims == 3 && t->ne[2] == 2 &&
	      t->nbytes == sizeof(d_q4) && !memcmp(t->data, d_q4, sizeof(d_q4));
	t = gguf_find_tensor(f, "w.q8_0");
	ok &= t && t->type == GGML_TYPE_Q8_0 && t->n_dims == 4 && t->ne[3] == 3 &&
	      t->nbytes == sizeof(d_q8) && !memcmp(t->data, d_q8, sizeof(d_q8));
	for (i = 0; i < 4; i++)
		ok &= f->tensors[i].offset % align == 0 &&
		      (uint64_t)((const uint8_t *)f->tensors[i].data -
				 (const uint8_t *)f->map) ==
			gguf_writer_tensor_data_offset(w, i);
	tap_ok(ok, "v%u align %u: F32, F16, Q4_0, Q8_0 tensors read back byte-exact",
	      version, align);
	gguf_close(f);
	gguf_writer_free(w);
	unlink(path);
}

static void test_type_sizes(void)
{
	tap_ok(gguf_type_size(GGML_TYPE_F32, 10) == 40 &&
	      gguf_type_size(GGML_TYPE_F16, 3) == 6 &&
	      gguf_type_size(GGML_TYPE_Q4_0, 64) == 36 &&
	      gguf_type_size(GGML_TYPE_Q8_0, 96) == 102 &&
	      gguf_type_size(GGML_TYPE_Q4_0, 33) == 0 &&
	      gguf_type_size(GGML_TYPE_Q4_K, 32) == 0 &&
	      gguf_type_size(GGML_TYPE_Q4_K, 512) == 288 &&
	      gguf_type_size(GGML_TYPE_Q5_K, 256) == 176 &&
	      gguf_type_size(GGML_TYPE_Q6_K, 256) == 210 &&
	      gguf_type_size(GGML_TYPE_Q4_1, 32) == 20 &&
	      gguf_type_size(GGML_TYPE_Q5_0, 32) == 22 &&
	      gguf_type_size(GGML_TYPE_Q5_1, 32) == 24 &&
	      gguf_type_size(GGML_TYPE_BF16, 3) == 6 &&
	      gguf_type_size(GGML_TYPE_IQ4_XS, 256) == 136 &&
	      gguf_type_size((enum gguf_type)4, 32) == 0 &&
	      gguf_type_size(GGML_TYPE_F32, UINT64_MAX / 2) == 0,
	      "gguf_type_size: F32 4, F16 2, Q4_0 18/32, Q8_0 34/32, K-quants per 256, "
	      "removed type 4 and bad sizes -> 0");
	tap_ok(gguf_block_size(GGML_TYPE_F32) == 1 &&
	      gguf_block_size(GGML_TYPE_Q8_0) == 32 &&
	      gguf_block_size(GGML_TYPE_Q6_K) == 256 &&
	      gguf_block_size((enum gguf_type)5) == 0 &&
	      gguf_block_size((enum gguf_type)31) == 0 &&
	      gguf_block_size((enum gguf_type)43) == 0 &&
	      !strcmp(gguf_type_name(GGML_TYPE_Q4_0), "Q4_0") &&
	      !strcmp(gguf_type_name(GGML_TYPE_Q4_K), "Q4_K") &&
	      !strcmp(gguf_type_name(GGML_TYPE_BF16), "BF16") &&
	      !strcmp(gguf_type_name((enum gguf_type)99), "unknown"),
	      "gguf_block_size and gguf_type_name know every ggml type, not removed ones");
}

/* ---- corruption ---- */

/*
 * The base image: 5 kv pairs (string, u32, string array, f32 array, bool)
 * and 3 tensors (F32 [32,2], Q8_0 [64,1], Q4_0 [32,3]).
 */
static uint8_t *base;
static size_t base_len;
static struct gguf_writer *bw;

enum { KV_ARCH, KV_U32, KV_TOKS, KV_F32S, KV_BOOL, N_BASE_KV };
static const char *const base_keys[N_BASE_KV] = {
	"general.architecture", "test.u32", "tokenizer.ggml.tokens",
	"test.f32s", "test.bool",
};
static const char *const base_tensors[3] = { "a.weight", "b.weight", "c.weight" };
static const uint32_t base_ndims[3] = { 2, 2, 2 };

static void make_base(void)
{
	static const char *const toks[] = { "a", "bc", "def" };
	const float fs[3] = { 1, 2, 3 };
	uint64_t ne0[2] = { 32, 2 }, ne1[2] = { 64, 1 }, ne2[2] = { 32, 3 };
	uint8_t data[256];

	fill(data, sizeof(data), 9);
	bw = gguf_writer_new();
	gguf_writer_add_str(bw, base_keys[KV_ARCH], "llama");
	gguf_writer_add_u32(bw, base_keys[KV_U32], 7);
	gguf_writer_add_str_arr(bw, base_keys[KV_TOKS], toks, 3);
	gguf_writer_add_f32_arr(bw, base_keys[KV_F32S], fs, 3);
	gguf_writer_add_bool(bw, base_keys[KV_BOOL], true);
	gguf_writer_add_tensor(bw, base_tensors[0], 2, ne0, GGML_TYPE_F32, data, 256);
	gguf_writer_add_tensor(bw, base_tensors[1], 2, ne1, GGML_TYPE_Q8_0, data, 68);
	gguf_writer_add_tensor(bw, base_tensors[2], 2, ne2, GGML_TYPE_Q4_0, data, 54);
	if (gguf_writer_to_mem(bw, &base, &base_len))
		base = NULL;
}

/* Field offsets in the base image. */
static uint64_t kv_type_off(int i)
{
	return gguf_writer_kv_offset(bw, i) + 8 + strlen(base_keys[i]);
}

static uint64_t ti_ndims_off(int i)
{
	return gguf_writer_tensor_info_offset(bw, i) + 8 + strlen(base_tensors[i]);
}

static uint64_t ti_ne_off(int i, int d)
{
	return ti_ndims_off(i) + 4 + 8 * d;
}

static uint64_t ti_type_off(int i)
{
	return ti_ne_off(i, base_ndims[i]);
}

static uint64_t ti_offset_off(int i)
{
	return ti_type_off(i) + 4;
}

/*
 * Open img as a file; return true when it is rejected with an error that
 * starts with the path and contains @want (when not NULL). *err_out keeps
 * the message.
 */
static bool rejects(const uint8_t *img, size_t len, const char *want,
		    char *err, size_t errlen)
{
	struct gguf_file *f;

	if (write_file(tpath, img, len)) {
		snprintf(err, errlen, "cannot write %s", tpath);
		return false;
	}
	err[0] = '\0';
	f = gguf_open(tpath, err, errlen);
	if (f) {
		gguf_close(f);
		snprintf(err, errlen, "accepted");
		return false;
	}
	if (strncmp(err, tpath, strlen(tpath)) || err[strlen(tpath)] != ':')
		return false;
	return !want || strstr(err, want);
}

static void put_u32(uint8_t *p, uint64_t off, uint32_t v)
{
	memcpy(p + off, &v, 4);
}

static void put_u64(uint8_t *p, uint64_t off, uint64_t v)
{
	memcpy(p + off, &v, 8);
}

/* One patched-field case: patch a u32 or u64 and expect @want. */
static void bad_field(const char *desc, uint64_t off, int width, uint64_t v,
		      const char *want)
{
	uint8_t *img = malloc(base_len);
	char err[512];
	bool r;

	memcpy(img, base, base_len);
	if (width == 4)
		put_u32(img, off, (uint32_t)v);
	else
		put_u64(img, off, v);
	r = rejects(img, base_len, want, err, sizeof(err));
	tap_ok(r, "%s -> %s", desc, err);
	free(img);
}

static void test_corrupt_cases(void)
{
	uint8_t *img;
	char err[512];
	struct gguf_file *f;
	uint64_t o;

	/* The base image itself is valid. */
	write_file(tpath, base, base_len);
	f = gguf_open(tpath, err, sizeof(err));
	tap_ok(f && f->n_kv == 5 && f->n_tensors == 3, "base image is valid (%zu bytes)",
	      base_len);
	gguf_close(f);

	f = gguf_open("/nonexistent/x.gguf", err, sizeof(err));
	tap_ok(!f && strstr(err, "/nonexistent/x.gguf: open: No such file"),
	      "missing file -> %s", err);
	f = gguf_open(tmpdir, err, sizeof(err));
	tap_ok(!f && strstr(err, "not a regular file"), "directory -> %s", err);
	tap_ok(rejects(base, 0, "header", err, sizeof(err)), "empty file -> %s", err);

	img = malloc(base_len);
	memcpy(img, base, base_len);
	memcpy(img, "GGUX", 4);
	tap_ok(rejects(img, base_len, ": magic: 'GGUX' is not \"GGUF\"", err,
		      sizeof(err)), "bad magic -> %s", err);
	free(img);

	bad_field("version 1", 4, 4, 1, ": version: unsupported version 1");
	bad_field("version 4", 4, 4, 4, ": version: unsupported version 4");
	bad_field("version 3 big-endian", 4, 4, 0x03000000, "big-endian");
	bad_field("n_tensors 2^40", 8, 8, 1ULL << 40, ": n_tensors:");
	bad_field("n_tensors UINT64_MAX", 8, 8, UINT64_MAX, ": n_tensors:");
	bad_field("n_kv 2^40", 16, 8, 1ULL << 40, ": n_kv:");
	bad_field("n_kv UINT64_MAX", 16, 8, UINT64_MAX, ": n_kv:");
	/* One kv too many: the first tensor info is misread as a kv pair. */
	bad_field("n_kv 6 (one too many)", 16, 8, 6, NULL);
	bad_field("n_tensors 4 (one too many)", 8, 8, 4, "tensor[3]");
	bad_field("key length UINT64_MAX", gguf_writer_kv_offset(bw, 0), 8,
		  UINT64_MAX, "kv[0]: key: length");
	bad_field("key length past EOF", gguf_writer_kv_offset(bw, 1), 8,
		  base_len, "kv[1]: key: length");
	bad_field("key length 0", gguf_writer_kv_offset(bw, 1), 8, 0,
		  "kv[1]: key length 0");
	bad_field("value type 13", kv_type_off(KV_U32), 4, 13,
		  "kv[1] 'test.u32': unknown value type 13");
	bad_field("value type 0xffffffff", kv_type_off(KV_ARCH), 4, 0xffffffffu,
		  "kv[0] 'general.architecture': unknown value type 4294967295");
	bad_field("string value length past EOF", kv_type_off(KV_ARCH) + 4, 8,
		  1ULL << 62, "kv[0] 'general.architecture': string value: length");
	bad_field("array element type 9 (nested)", kv_type_off(KV_TOKS) + 4, 4,
		  GGUF_VT_ARRAY, "'tokenizer.ggml.tokens': nested arrays");
	bad_field("array element type 77", kv_type_off(KV_TOKS) + 4, 4, 77,
		  "'tokenizer.ggml.tokens': unknown array element type 77");
	bad_field("string array count 2^61", kv_type_off(KV_TOKS) + 8, 8,
		  1ULL << 61, "'tokenizer.ggml.tokens': array of 2305843009213693952 strings");
	bad_field("string element length past EOF", kv_type_off(KV_TOKS) + 16 + 9, 8,
		  1000000, "'tokenizer.ggml.tokens': element 1: length 1000000");
	bad_field("f32 array count UINT64_MAX", kv_type_off(KV_F32S) + 8, 8,
		  UINT64_MAX, "'test.f32s': array of 18446744073709551615 x 4-byte");
	img = malloc(base_len);
	memcpy(img, base, base_len);
	img[kv_type_off(KV_BOOL) + 4] = 2;
	tap_ok(rejects(img, base_len, "'test.bool': bool value 2", err, sizeof(err)),
	      "bool value 2 -> %s", err);
	free(img);

	bad_field("tensor name length past EOF", gguf_writer_tensor_info_offset(bw, 0),
		  8, 1ULL << 50, "tensor[0]: name: length");
	bad_field("tensor name length 0", gguf_writer_tensor_info_offset(bw, 1), 8, 0,
		  "tensor[1]: name length 0");
	bad_field("n_dims 0", ti_ndims_off(0), 4, 0, "tensor 'a.weight': n_dims 0");
	bad_field("n_dims 5", ti_ndims_off(1), 4, 5, "tensor 'b.weight': n_dims 5");
	bad_field("ne[1] 0", ti_ne_off(0, 1), 8, 0, "tensor 'a.weight': ne[1] = 0");
	bad_field("ne[1] 2^63", ti_ne_off(0, 1), 8, 1ULL << 63, "ne[1] = 9223372036854775808");
	bad_field("ne product overflow", ti_ne_off(0, 1), 8, 1ULL << 60,
		  "tensor 'a.weight': element count overflows");
	bad_field("byte size overflow (F32 2^59 x 32)", ti_ne_off(0, 1), 8, 1ULL << 57,
		  "tensor 'a.weight': byte size");
	bad_field("tensor type 4 (removed Q4_2)", ti_type_off(0), 4, 4,
		  "tensor 'a.weight': unknown tensor type 4 (not a ggml type)");
	bad_field("tensor type 99", ti_type_off(2), 4, 99,
		  "tensor 'c.weight': unknown tensor type 99");
	bad_field("Q4_K row of 32", ti_type_off(0), 4, 12,
		  "tensor 'a.weight': row length ne[0] = 32 is not a multiple of the Q4_K block size 256");
	bad_field("Q8_0 row length 48", ti_ne_off(1, 0), 8, 48,
		  "tensor 'b.weight': row length ne[0] = 48 is not a multiple of the Q8_0 block size 32");
	bad_field("offset unaligned", ti_offset_off(1), 8, 256 + 4,
		  "tensor 'b.weight': offset 260 is not a multiple of the alignment 32");
	o = (base_len - gguf_writer_data_offset(bw) + 31) / 32 * 32;
	bad_field("tensor data past EOF", ti_offset_off(2), 8, o,
		  "tensor 'c.weight': data [offset");
	bad_field("tensor offset 2^63 (overflow)", ti_offset_off(2), 8, 1ULL << 63,
		  "ends past end of file");
	bad_field("tensor offset UINT64_MAX-31", ti_offset_off(0), 8, UINT64_MAX - 31,
		  "tensor 'a.weight': data [offset 18446744073709551584");
	/* Rename c.weight to a.weight: duplicate tensor names. */
	img = malloc(base_len);
	memcpy(img, base, base_len);
	memcpy(img + gguf_writer_tensor_info_offset(bw, 2) + 8, "a", 1);
	tap_ok(rejects(img, base_len, "duplicate tensor name (tensor[0] and tensor[2])",
		      err, sizeof(err)), "duplicate tensor name -> %s", err);
	free(img);
}

/* Files built with the writer to hit rules that need a consistent layout. */
static void test_written_bad(void)
{
	char path[160], err[512];
	struct gguf_writer *w;
	struct gguf_file *f;
	uint64_t ne[2] = { 32, 1 };
	uint8_t data[128] = { 0 };

	snprintf(path, sizeof(path), "%s/bad.gguf", tmpdir);

	w = gguf_writer_new();
	gguf_writer_add_u32(w, "dup.key", 1);
	gguf_writer_add_str(w, "dup.key", "x");
	gguf_writer_write_file(w, path, err, sizeof(err));
	f = gguf_open(path, err, sizeof(err));
	tap_ok(!f && strstr(err, "kv[1] 'dup.key': duplicate key (also kv[0])"),
	      "duplicate key -> %s", err);
	gguf_close(f);
	gguf_writer_free(w);

	w = gguf_writer_new();
	gguf_writer_set_alignment(w, 48, true);
	gguf_writer_add_tensor(w, "t", 2, ne, GGML_TYPE_F32, data, 128);
	gguf_writer_write_file(w, path, err, sizeof(err));
	f = gguf_open(path, err, sizeof(err));
	tap_ok(!f && strstr(err, ": general.alignment: 48 is not a power of two"),
	      "alignment 48 -> %s", err);
	gguf_close(f);
	gguf_writer_free(w);

	w = gguf_writer_new();
	gguf_writer_add_i32(w, "general.alignment", 64);
	gguf_writer_write_file(w, path, err, sizeof(err));
	f = gguf_open(path, err, sizeof(err));
	tap_ok(!f && strstr(err, ": general.alignment: value type 5 is not u32"),
	      "alignment as i32 -> %s", err);
	gguf_close(f);
	gguf_writer_free(w);

	w = gguf_writer_new();
	gguf_writer_set_alignment(w, 0, true);
	gguf_writer_write_file(w, path, err, sizeof(err));
	f = gguf_open(path, err, sizeof(err));
	tap_ok(!f && strstr(err, ": general.alignment: 0 is not a power of two"),
	      "alignment 0 -> %s", err);
	gguf_close(f);
	gguf_writer_free(w);

	/* Two tensors with the same name, written properly. */
	w = gguf_writer_new();
	gguf_writer_add_tensor(w, "same", 2, ne, GGML_TYPE_F32, data, 128);
	gguf_writer_add_tensor(w, "same", 2, ne, GGML_TYPE_F32, data, 128);
	gguf_writer_write_file(w, path, err, sizeof(err));
	f = gguf_open(path, err, sizeof(err));
	tap_ok(!f && strstr(err, "tensor 'same': duplicate tensor name"),
	      "duplicate tensor (writer) -> %s", err);
	gguf_close(f);
	gguf_writer_free(w);

	/* Declared size larger than the data written: past end of file. */
	w = gguf_writer_new();
	ne[1] = 1000;
	gguf_writer_add_tensor(w, "blk.0.attn_q.weight", 2, ne, GGML_TYPE_F32, data, 128);
	gguf_writer_write_file(w, path, err, sizeof(err));
	f = gguf_open(path, err, sizeof(err));
	tap_ok(!f && strstr(err, "tensor 'blk.0.attn_q.weight': data [offset 0, 128000 bytes] ends past end of file (size "),
	      "short tensor data -> %s", err);
	gguf_close(f);
	gguf_writer_free(w);

	/* Tensor name of 65 bytes (spec: at most 64). */
	w = gguf_writer_new();
	ne[1] = 1;
	gguf_writer_add_tensor(w, "0123456789012345678901234567890123456789012345678901234567890123X",
			  2, ne, GGML_TYPE_F32, data, 128);
	gguf_writer_write_file(w, path, err, sizeof(err));
	f = gguf_open(path, err, sizeof(err));
	tap_ok(!f && strstr(err, "tensor[0]: name length 65 not in 1..64"),
	      "65-byte tensor name -> %s", err);
	gguf_close(f);
	gguf_writer_free(w);

	/* An empty GGUF (no kv, no tensors) is valid. */
	w = gguf_writer_new();
	gguf_writer_write_file(w, path, err, sizeof(err));
	f = gguf_open(path, err, sizeof(err));
	tap_ok(f && f->n_kv == 0 && f->n_tensors == 0 && !gguf_find_kv(f, "x") &&
	      !gguf_find_tensor(f, "x"), "empty GGUF (24 bytes) is valid");
	gguf_close(f);
	gguf_writer_free(w);
	unlink(path);
}

static void test_truncation(void)
{
	char err[512];
	size_t len, bad = 0, first_bad = 0;

	for (len = 0; len < base_len; len++) {
		if (!rejects(base, len, NULL, err, sizeof(err))) {
			if (!bad++)
				first_bad = len;
		}
	}
	if (bad)
		printf("# first accepted truncation: %zu bytes\n", first_bad);
	tap_ok(bad == 0, "truncated at each of %zu lengths: %zu not rejected naming the file",
	      base_len, bad);
}

/*
 * Flip bits in every count, length, type and offset field: high bits make
 * counts and lengths absurd, low bits make types unknown or offsets
 * unaligned. Each must be rejected. Then flip every bit of the metadata
 * region: any outcome is fine except a crash or an error not naming the
 * file.
 */
static void test_bitflips(void)
{
	uint64_t fields[64];
	int widths[64], kinds[64];	/* kind 0: length/count, 1: value type, 2: offset, 3: tensor type */
	int nf = 0, i, bit, missed = 0, tried = 0;
	uint8_t *img = malloc(base_len);
	char err[512];
	uint64_t end, o;
	size_t accepted = 0, rejected = 0, misnamed = 0;

#define ADD(off, w, k) do { fields[nf] = (off); widths[nf] = (w); kinds[nf++] = (k); } while (0)
	ADD(8, 8, 0);			/* n_tensors */
	ADD(16, 8, 0);			/* n_kv */
	for (i = 0; i < N_BASE_KV; i++) {
		ADD(gguf_writer_kv_offset(bw, i), 8, 0);	/* key length */
		ADD(kv_type_off(i), 4, 1);			/* value type */
	}
	ADD(kv_type_off(KV_ARCH) + 4, 8, 0);	/* string length */
	ADD(kv_type_off(KV_TOKS) + 4, 4, 1);	/* elem type */
	ADD(kv_type_off(KV_TOKS) + 8, 8, 0);	/* count */
	ADD(kv_type_off(KV_TOKS) + 16, 8, 0);	/* element 0 length */
	ADD(kv_type_off(KV_F32S) + 4, 4, 1);
	ADD(kv_type_off(KV_F32S) + 8, 8, 0);
	for (i = 0; i < 3; i++) {
		ADD(gguf_writer_tensor_info_offset(bw, i), 8, 0);
		ADD(ti_ndims_off(i), 4, 1);
		ADD(ti_ne_off(i, 0), 8, 0);
		ADD(ti_ne_off(i, 1), 8, 0);
		ADD(ti_type_off(i), 4, 3);
		ADD(ti_offset_off(i), 8, 2);
	}
#undef ADD
	for (i = 0; i < nf; i++) {
		for (bit = 0; bit < widths[i] * 8; bit++) {
			bool must;

			/* lengths/counts: bits >= 16 (value >= 64 KiB > file) */
			if (kinds[i] == 0)
				must = bit >= 16;
			/* value types: bits >= 4 (>= 16: no value type) */
			else if (kinds[i] == 1)
				must = bit >= 4;
			/* tensor types: bits >= 6 (>= 64: no ggml type) */
			else if (kinds[i] == 3)
				must = bit >= 6;
			/* offsets: bits < 5 (unaligned) or >= 16 (past EOF) */
			else
				must = bit < 5 || bit >= 16;
			if (!must)
				continue;
			memcpy(img, base, base_len);
			img[fields[i] + bit / 8] ^= (uint8_t)(1u << (bit % 8));
			tried++;
			if (!rejects(img, base_len, NULL, err, sizeof(err))) {
				if (!missed++)
					printf("# field at %" PRIu64 " bit %d: %s\n",
					       fields[i], bit, err);
			}
		}
	}
	tap_ok(missed == 0 && tried > 1000,
	      "%d targeted bit flips in %d count/length/type/offset fields: all rejected (%d missed)",
	      tried, nf, missed);

	end = gguf_writer_data_offset(bw);
	for (o = 0; o < end; o++) {
		for (bit = 0; bit < 8; bit++) {
			struct gguf_file *f;

			memcpy(img, base, base_len);
			img[o] ^= (uint8_t)(1u << bit);
			write_file(tpath, img, base_len);
			f = gguf_open(tpath, err, sizeof(err));
			if (f) {
				/* Accepted: every tensor must still lie in the file. */
				for (i = 0; i < (int)f->n_tensors; i++) {
					const struct gguf_tensor *t = &f->tensors[i];
					const uint8_t *d = t->data;

					if (d < (const uint8_t *)f->map ||
					    d + t->nbytes > (const uint8_t *)f->map + f->map_size)
						misnamed++;
				}
				accepted++;
				gguf_close(f);
			} else {
				rejected++;
				if (strncmp(err, tpath, strlen(tpath)))
					misnamed++;
			}
		}
	}
	tap_ok(misnamed == 0 && rejected > accepted,
	      "every bit of the %" PRIu64 "-byte metadata flipped: %zu rejected naming the file, %zu accepted in bounds",
	      end, rejected, accepted);
	free(img);
}

int main(void)
{
	const char *model = getenv("RK1828_MODEL");

	if (!model)
		model = "../shared/models/stories260K.gguf";
	/* Thousands of small files are written: prefer a RAM file system. */
	snprintf(tmpdir, sizeof(tmpdir), "%s/rk1828-gguf-XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(tpath, sizeof(tpath), "%s/corrupt.gguf", tmpdir);

	test_stories(model);
	test_type_sizes();
	test_roundtrip(3, 32);
	test_roundtrip(2, 32);
	test_roundtrip(3, 64);
	test_roundtrip(3, 1);
	make_base();
	tap_ok(base != NULL, "base image serialised");
	if (base) {
		test_corrupt_cases();
		test_written_bad();
		test_truncation();
		test_bitflips();
	}
	free(base);
	gguf_writer_free(bw);
	unlink(tpath);
	rmdir(tmpdir);
	return tap_done();
}
