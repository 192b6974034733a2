// SPDX-License-Identifier: MIT
/*
 * Host test of the LLM pipeline (userspace/llm/pipeline.c) without a
 * kernel: this file provides a mock librk1828 (the rk_* functions the
 * pipeline calls; the linker then never pulls the real rk1828.o) that runs
 * every job synchronously at submit time. COPY is a bounds-checked memcpy,
 * EXEC is the card emulator's emu_exec() on a per-card memory arena with
 * an access check that only admits allocated card BOs. Since the pipeline
 * queues jobs in dependency order, running them at submit time is a valid
 * schedule; what this checks is the data flow: weight layout, programs,
 * bucket slots, hidden states between cards, logits.
 *
 * Checks: logits of the last prompt position and of greedy decode steps
 * match the scalar reference (tests/lib/ref_forward.c) within 1e-4
 * relative for 1..4 cards and buckets 1, 4, 16; a failing EXEC on one card
 * is reported naming that card. Prints TAP.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec.h"
#include "gguf.h"
#include "gguf_write.h"
#include "quant.h"
#include "rk1828_hif.h"
#include "tokenizer.h"
#include "ref_forward.h"
#include "pipeline.h"

#include "tap.h"

/* ------------------------------------------------------------ the mock */

#define MCARDS		4
#define MOBJS		256
#define MDMABUF		64
#define DMABUF_FD0	1000000
#define SYNCFILE_FD0	2000000		/* fd = SYNCFILE_FD0 + 1000 + status */
#define CARD_MEM	(64ULL << 20)

struct mbuf {
	uint8_t *p;
	uint64_t size;
};

enum { M_FREE, M_HOST, M_CARD, M_SYNC };

struct mobj {
	int kind;
	struct mbuf *buf;	/* host BOs */
	uint64_t addr, size;	/* card BOs */
	int status;		/* syncobjs: 0 or -errno of the last job */
};

struct mcard {
	uint8_t *mem;
	uint64_t brk;
	struct mobj obj[MOBJS];
	int fail_exec;		/* make every EXEC fail with ST_ACCESS */
	int n_exec;
};

static struct mcard mcards[MCARDS];
static struct mbuf *dmabufs[MDMABUF];
static struct mbuf *all_bufs[4096];	/* freed at exit (no refcounts in the mock) */
static int n_all_bufs;
static int n_dmabufs;
static char mock_err[256];
static int mock_live_objs;

static struct mcard *mc(const struct rk_card *c)
{
	return &mcards[c->fd];
}

static struct mobj *obj(const struct rk_card *c, uint32_t h, int kind)
{
	if (h < 1 || h > MOBJS || mc(c)->obj[h - 1].kind != kind)
		return NULL;
	return &mc(c)->obj[h - 1];
}

static uint32_t new_obj(const struct rk_card *c, int kind)
{
	int i;

	for (i = 0; i < MOBJS; i++) {
		if (mc(c)->obj[i].kind == M_FREE) {
			memset(&mc(c)->obj[i], 0, sizeof(mc(c)->obj[i]));
			mc(c)->obj[i].kind = kind;
			mock_live_objs++;
			return i + 1;
		}
	}
	return 0;
}

static int mfail(int e, const char *what)
{
	snprintf(mock_err, sizeof(mock_err), "mock: %s: %s", what, strerror(-e));
	return e;
}

const char *rk_error(void)
{
	return mock_err;
}

int64_t rk_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int rk_bo_create(struct rk_card *card, uint64_t size, enum rk_bo_kind kind, struct rk_bo *bo)
{
	uint32_t h;
	struct mobj *o;

	memset(bo, 0, sizeof(*bo));
	if (!size || (kind != RK_BO_HOST && kind != RK_BO_CARD))
		return mfail(-EINVAL, "BO_CREATE");
	size = (size + 4095) & ~4095ULL;
	if (kind == RK_BO_CARD && mc(card)->brk + size > CARD_MEM)
		return mfail(-ENOMEM, "BO_CREATE");
	h = new_obj(card, kind == RK_BO_HOST ? M_HOST : M_CARD);
	if (!h)
		return mfail(-ENOMEM, "BO_CREATE");
	o = &mc(card)->obj[h - 1];
	o->size = size;
	if (kind == RK_BO_HOST) {
		if (n_all_bufs == 4096)
			return mfail(-ENOMEM, "BO_CREATE");
		o->buf = calloc(1, sizeof(*o->buf));
		o->buf->p = calloc(1, size);
		o->buf->size = size;
		all_bufs[n_all_bufs++] = o->buf;
	} else {
		o->addr = mc(card)->brk;
		mc(card)->brk += size;
		/* Poison fresh card memory: reading unwritten data shows up. */
		memset(mc(card)->mem + o->addr, 0xff, size);
	}
	bo->handle = h;
	bo->kind = kind;
	bo->size = size;
	bo->card_addr = o->addr;
	return 0;
}

int rk_bo_mmap(struct rk_card *card, struct rk_bo *bo)
{
	struct mobj *o = obj(card, bo->handle, M_HOST);

	if (!o)
		return mfail(-EINVAL, "mmap");
	bo->map = o->buf->p;
	return 0;
}

int rk_bo_destroy(struct rk_card *card, struct rk_bo *bo)
{
	if (bo->handle) {
		struct mobj *o = &mc(card)->obj[bo->handle - 1];

		if (o->kind == M_FREE)
			return mfail(-ENOENT, "GEM_CLOSE");
		o->kind = M_FREE;	/* host buffers leak in the mock: fine */
		mock_live_objs--;
	}
	memset(bo, 0, sizeof(*bo));
	return 0;
}

int rk_bo_export(struct rk_card *card, const struct rk_bo *bo, int *fd)
{
	struct mobj *o = obj(card, bo->handle, M_HOST);

	if (!o || n_dmabufs == MDMABUF)
		return mfail(-EINVAL, "PRIME export");
	dmabufs[n_dmabufs] = o->buf;
	*fd = DMABUF_FD0 + n_dmabufs++;
	return 0;
}

int rk_bo_import(struct rk_card *card, int fd, struct rk_bo *bo)
{
	uint32_t h;

	memset(bo, 0, sizeof(*bo));
	if (fd < DMABUF_FD0 || fd >= DMABUF_FD0 + n_dmabufs)
		return mfail(-EBADF, "PRIME import");
	h = new_obj(card, M_HOST);
	if (!h)
		return mfail(-ENOMEM, "PRIME import");
	mc(card)->obj[h - 1].buf = dmabufs[fd - DMABUF_FD0];
	mc(card)->obj[h - 1].size = dmabufs[fd - DMABUF_FD0]->size;
	bo->handle = h;
	bo->kind = RK_BO_HOST;
	bo->size = dmabufs[fd - DMABUF_FD0]->size;
	return 0;
}

int rk_syncobj_create(struct rk_card *card, bool signaled, uint32_t *handle)
{
	*handle = new_obj(card, M_SYNC);
	return *handle ? 0 : mfail(-ENOMEM, "SYNCOBJ_CREATE");
}

int rk_syncobj_destroy(struct rk_card *card, uint32_t handle)
{
	struct mobj *o = obj(card, handle, M_SYNC);

	if (!o)
		return mfail(-ENOENT, "SYNCOBJ_DESTROY");
	o->kind = M_FREE;
	mock_live_objs--;
	return 0;
}

int rk_syncobj_status(struct rk_card *card, uint32_t handle, uint64_t point,
		      int64_t abs_timeout_ns)
{
	struct mobj *o = obj(card, handle, M_SYNC);

	if (!o)
		return mfail(-ENOENT, "SYNCOBJ_WAIT");
	return o->status ? mfail(o->status, "job") : 0;
}

int rk_syncobj_wait(struct rk_card *card, const uint32_t *handles, const uint64_t *points,
		    unsigned int n, int64_t abs_timeout_ns, bool wait_all)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!obj(card, handles[i], M_SYNC) || (points && points[i]))
			return mfail(-EINVAL, "SYNCOBJ_WAIT");
	return 0;	/* every job ran at submit time */
}

int rk_sync_file_status(int fd)
{
	int st = fd - SYNCFILE_FD0 - 1000;

	if (fd < SYNCFILE_FD0 || fd > SYNCFILE_FD0 + 1000)
		return mfail(-EBADF, "SYNC_IOC_FILE_INFO");
	return st ? st : 1;
}

int rk_syncobj_export_sync_file(struct rk_card *card, uint32_t handle, uint64_t point,
				int *fd)
{
	struct mobj *o = obj(card, handle, M_SYNC);

	if (!o || point)
		return mfail(-EINVAL, "export sync_file");
	*fd = SYNCFILE_FD0 + 1000 + o->status;
	return 0;
}

int rk_syncobj_import_sync_file(struct rk_card *card, uint32_t handle, uint64_t point,
				int fd)
{
	struct mobj *o = obj(card, handle, M_SYNC);

	if (!o || point || fd < SYNCFILE_FD0 || fd > SYNCFILE_FD0 + 1000)
		return mfail(-EINVAL, "import sync_file");
	o->status = fd - SYNCFILE_FD0 - 1000;
	return 0;
}

/* Pointer to [off, off + size) of BO @h, or NULL when out of bounds. */
static uint8_t *bo_ptr(const struct rk_card *card, uint32_t h, uint64_t off, uint64_t size)
{
	struct mobj *o = obj(card, h, M_HOST);

	if (!o)
		o = obj(card, h, M_CARD);
	if (!o || off > o->size || size > o->size - off)
		return NULL;
	return o->kind == M_HOST ? o->buf->p + off : mc(card)->mem + o->addr + off;
}

static int check_syncs(const struct rk_card *card, const struct rk_sync *s, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!obj(card, s[i].handle, M_SYNC) || s[i].point)
			return -ENOENT;
	return 0;
}

static void signal_out(const struct rk_card *card, const struct rk_sync *out,
		       unsigned int n, int status)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		obj(card, out[i].handle, M_SYNC)->status = status;
}

int rk_submit_copy(struct rk_card *card, uint32_t src, uint64_t src_off, uint32_t dst,
		   uint64_t dst_off, uint64_t size, const struct rk_sync *in, unsigned int n_in,
		   const struct rk_sync *out, unsigned int n_out, uint64_t *seqno)
{
	uint8_t *s = bo_ptr(card, src, src_off, size), *d = bo_ptr(card, dst, dst_off, size);

	if (!size || !s || !d || check_syncs(card, in, n_in) || check_syncs(card, out, n_out))
		return mfail(-EINVAL, "SUBMIT(COPY)");
	if (obj(card, src, M_HOST) && obj(card, dst, M_HOST))
		return mfail(-EINVAL, "SUBMIT(COPY) host->host");
	memmove(d, s, size);
	signal_out(card, out, n_out, 0);
	return 0;
}

/* Admit only ranges inside one allocated card BO. */
static int mock_check(void *priv, uint64_t addr, uint64_t len)
{
	struct mcard *m = priv;
	int i;

	for (i = 0; i < MOBJS; i++) {
		const struct mobj *o = &m->obj[i];

		if (o->kind == M_CARD && addr >= o->addr && len <= o->size &&
		    addr - o->addr <= o->size - len)
			return 0;
	}
	return 1;
}

int rk_submit_exec(struct rk_card *card, uint32_t prog, uint64_t prog_off, uint64_t prog_size,
		   const uint32_t *bos, unsigned int n_bos, const struct rk_sync *in,
		   unsigned int n_in, const struct rk_sync *out, unsigned int n_out,
		   uint64_t *seqno)
{
	static volatile int no_abort;
	struct mobj *p = obj(card, prog, M_CARD);
	struct emu_access acc = {
		.base = mc(card)->mem, .mem_size = CARD_MEM, .check = mock_check,
		.priv = mc(card), .abort = &no_abort,
	};
	unsigned int i;
	int st;

	if (!p || !prog_size || prog_off > p->size || prog_size > p->size - prog_off ||
	    check_syncs(card, in, n_in) || check_syncs(card, out, n_out))
		return mfail(-EINVAL, "SUBMIT(EXEC)");
	for (i = 0; i < n_bos; i++)
		if (!obj(card, bos[i], M_CARD))
			return mfail(-ENOENT, "SUBMIT(EXEC) BO list");
	mc(card)->n_exec++;
	st = mc(card)->fail_exec ? RK1828_HIF_ST_ACCESS :
	     emu_exec(&acc, p->addr + prog_off, prog_size);
	signal_out(card, out, n_out, st == RK1828_HIF_ST_OK ? 0 :
		   st == RK1828_HIF_ST_ACCESS ? -EFAULT : -EINVAL);
	return 0;
}

/* ------------------------------------------------------------ the tests */


static double rel_diff(const float *a, const float *b, int n)
{
	double md = 0, mb = 0;
	int i;

	for (i = 0; i < n; i++) {
		double d = fabs((double)a[i] - b[i]);

		if (d > md || isnan(d))
			md = isnan(d) ? INFINITY : d;
		if (fabs(b[i]) > mb)
			mb = fabs(b[i]);
	}
	return mb > 0 ? md / mb : md;
}

static int argmax(const float *v, int n)
{
	int i, b = 0;

	for (i = 1; i < n; i++)
		if (v[i] > v[b])
			b = i;
	return b;
}

static void reset_mock(void)
{
	int i;

	for (i = 0; i < MCARDS; i++) {
		memset(mcards[i].obj, 0, sizeof(mcards[i].obj));
		mcards[i].brk = 4096;	/* card address 0 stays unused */
		mcards[i].fail_exec = 0;
		mcards[i].n_exec = 0;
	}
	n_dmabufs = 0;
	mock_live_objs = 0;
}

#define N_DECODE 6

/*
 * Prefill @toks with @n_cards cards and bucket @bucket, then N_DECODE
 * greedy steps; compare every logits vector with the reference @ref_logits
 * ([1 + N_DECODE][n_vocab]) and the greedy tokens with @ref_toks.
 */
static void run_case(const struct llm_model *m, struct rk_card *cards, int n_cards,
		     uint32_t bucket, const int32_t *toks, int n, const float *ref_logits,
		     const int32_t *ref_toks)
{
	uint64_t fr[MCARDS];
	struct plan_sizes sz = { .n_ctx = 64, .bucket = bucket };
	struct pipe_opts po = { .n_ctx = 64, .bucket = bucket, .timeout_ms = 1000 };
	struct pipeline *p = NULL;
	struct plan plan;
	char err[512], ps[128];
	float *lg = calloc(m->n_vocab, sizeof(float));
	double worst = 0;
	int i, good_toks = 1, ret, cur;

	reset_mock();
	for (i = 0; i < n_cards; i++)
		fr[i] = CARD_MEM - 4096;
	ret = plan_model(m, &sz, n_cards, fr, NULL, &plan, err, sizeof(err));
	plan_format(&plan, ps, sizeof(ps));
	tap_ok(ret == 0 && plan.n_segs == n_cards, "%d cards, bucket %u: plan %s", n_cards, bucket, ps);
	if (ret)
		goto out;
	ret = pipe_create(&p, m, cards, &plan, &po, err, sizeof(err));
	tap_ok(ret == 0, "%d cards, bucket %u: pipeline created%s%s", n_cards, bucket,
	   ret ? ": " : "", ret ? err : "");
	if (ret)
		goto out;
	ret = pipe_forward(p, toks, n, 0, lg, err, sizeof(err));
	if (!ret)
		worst = rel_diff(lg, ref_logits, m->n_vocab);
	tap_ok(ret == 0 && worst <= 1e-4, "%d cards, bucket %u: prefill logits match reference (rel %.2e)%s%s",
	   n_cards, bucket, worst, ret ? ": " : "", ret ? err : "");
	cur = argmax(lg, m->n_vocab);
	worst = 0;
	for (i = 0; i < N_DECODE && !ret; i++) {
		double d;

		good_toks &= cur == ref_toks[i];
		ret = pipe_forward(p, &ref_toks[i], 1, n + i, lg, err, sizeof(err));
		if (ret)
			break;
		d = rel_diff(lg, ref_logits + (size_t)(i + 1) * m->n_vocab, m->n_vocab);
		worst = d > worst ? d : worst;
		cur = argmax(lg, m->n_vocab);
	}
	tap_ok(ret == 0 && worst <= 1e-4 && good_toks,
	   "%d cards, bucket %u: %d decode steps match reference (rel %.2e)%s%s", n_cards,
	   bucket, N_DECODE, worst, ret ? ": " : "", ret ? err : "");
out:
	pipe_destroy(p);
	tap_ok(mock_live_objs == 0, "%d cards, bucket %u: every BO and syncobj released (%d left)",
	   n_cards, bucket, mock_live_objs);
	free(lg);
}

static void test_failure(const struct llm_model *m, struct rk_card *cards,
			 const int32_t *toks, int n)
{
	uint64_t fr[MCARDS] = { CARD_MEM - 4096, CARD_MEM - 4096 };
	struct plan_sizes sz = { .n_ctx = 64, .bucket = 4 };
	struct pipe_opts po = { .n_ctx = 64, .bucket = 4, .timeout_ms = 1000 };
	struct pipeline *p = NULL;
	struct plan plan;
	char err[512] = "";
	float *lg = calloc(m->n_vocab, sizeof(float));
	int ret;

	reset_mock();
	if (plan_model(m, &sz, 2, fr, NULL, &plan, err, sizeof(err)) ||
	    pipe_create(&p, m, cards, &plan, &po, err, sizeof(err))) {
		tap_ok(0, "failing EXEC: setup: %s", err);
		free(lg);
		return;
	}
	mcards[1].fail_exec = 1;
	ret = pipe_forward(p, toks, n, 0, lg, err, sizeof(err));
	tap_ok(ret == -1 && strstr(err, "card1") && strstr(err, "EXEC") && strstr(err, "Bad address"),
	   "failing EXEC on card1 is reported: %s", err);
	mcards[1].fail_exec = 0;
	ret = pipe_forward(p, toks, 1, 0, lg, err, sizeof(err));
	tap_ok(ret == -1 && strstr(err, "unusable after an earlier job failure") && strstr(err, "card1"),
	   "later forwards fail with the first error: %s", err);
	pipe_destroy(p);

	/* One-token step (decode): found by the end-of-forward status check. */
	reset_mock();
	if (pipe_create(&p, m, cards, &plan, &po, err, sizeof(err))) {
		tap_ok(0, "failing decode EXEC: setup: %s", err);
		free(lg);
		return;
	}
	tap_ok(pipe_forward(p, toks, 70, 0, lg, err, sizeof(err)) == -1 && strstr(err, "context"),
	   "forward beyond the context is refused: %s", err);
	tap_ok(pipe_forward(p, toks, 3, 0, lg, err, sizeof(err)) == 0, "pipeline still usable after it");
	mcards[0].fail_exec = 1;
	ret = pipe_forward(p, toks + 3, 1, 3, lg, err, sizeof(err));
	tap_ok(ret == -1 && strstr(err, "card0") && strstr(err, "EXEC") && strstr(err, "pos 3"),
	   "failing decode EXEC on card0 is reported: %s", err);
	pipe_destroy(p);
	free(lg);
}

/* ------------------------------------------------ synthetic qwen models */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static float frand(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (float)((rng_state >> 11) * (1.0 / 9007199254740992.0)) - 0.5f;
}

static void add_rand(struct gguf_writer *w, const char *name, uint64_t ne0, uint64_t ne1,
		     int type, float scale, float bias)
{
	uint64_t ne[2] = { ne0, ne1 }, n = ne0 * (ne1 ? ne1 : 1), i;
	float *f = malloc(n * sizeof(float));
	size_t bytes = quant_row_size(type, n);
	void *buf = malloc(bytes);

	for (i = 0; i < n; i++)
		f[i] = bias + scale * frand();
	quant_quantize_row(type, f, buf, n);
	gguf_writer_add_tensor(w, name, ne1 ? 2 : 1, ne, type, buf, bytes);
	free(buf);
	free(f);
}

/*
 * A random 4-block qwen2 (Q/K/V biases) or qwen3 (Q/K norms, head size
 * 16 != dim / heads) model: dim 64, 4 heads, 2 KV heads, FFN 96,
 * vocab 40, Q4_0/Q8_0/F16 matrices, tied LM head for qwen3.
 */
static int write_synth(const char *path, const char *arch)
{
	struct gguf_writer *w = gguf_writer_new();
	int q3 = !strcmp(arch, "qwen3"), l, hd = q3 ? 32 : 16, nh = 4, nkv = 2, dim = 64;
	char key[96];
	int ret;

#define KU(k, v) do { snprintf(key, sizeof(key), "%s." k, arch); gguf_writer_add_u32(w, key, v); } while (0)
	gguf_writer_add_str(w, "general.architecture", arch);
	KU("block_count", 4);
	KU("embedding_length", dim);
	KU("feed_forward_length", 96);
	KU("attention.head_count", nh);
	KU("attention.head_count_kv", nkv);
	KU("context_length", 128);
	if (q3)
		KU("attention.key_length", 32);
	snprintf(key, sizeof(key), "%s.rope.freq_base", arch);
	gguf_writer_add_f32(w, key, 1000000.0f);
	snprintf(key, sizeof(key), "%s.attention.layer_norm_rms_epsilon", arch);
	gguf_writer_add_f32(w, key, 1e-6f);
#undef KU
	add_rand(w, "token_embd.weight", dim, 40, QUANT_TYPE_Q8_0, 1.0f, 0.0f);
	for (l = 0; l < 4; l++) {
		char n[96];

#define T(s, ne0, ne1, ty, sc, b) do { snprintf(n, sizeof(n), "blk.%d." s, l); \
		add_rand(w, n, ne0, ne1, ty, sc, b); } while (0)
		T("attn_norm.weight", dim, 0, QUANT_TYPE_F32, 0.2f, 1.0f);
		T("attn_q.weight", dim, nh * hd, QUANT_TYPE_Q4_0, 0.5f, 0.0f);
		T("attn_k.weight", dim, nkv * hd, QUANT_TYPE_Q8_0, 0.5f, 0.0f);
		T("attn_v.weight", dim, nkv * hd, QUANT_TYPE_F16, 0.5f, 0.0f);
		T("attn_output.weight", nh * hd, dim, QUANT_TYPE_Q4_0, 0.3f, 0.0f);
		if (!q3) {
			T("attn_q.bias", nh * hd, 0, QUANT_TYPE_F32, 0.2f, 0.0f);
			T("attn_k.bias", nkv * hd, 0, QUANT_TYPE_F32, 0.2f, 0.0f);
			T("attn_v.bias", nkv * hd, 0, QUANT_TYPE_F32, 0.2f, 0.0f);
		} else {
			T("attn_q_norm.weight", hd, 0, QUANT_TYPE_F32, 0.2f, 1.0f);
			T("attn_k_norm.weight", hd, 0, QUANT_TYPE_F32, 0.2f, 1.0f);
		}
		T("ffn_norm.weight", dim, 0, QUANT_TYPE_F32, 0.2f, 1.0f);
		T("ffn_gate.weight", dim, 96, QUANT_TYPE_Q4_0, 0.5f, 0.0f);
		T("ffn_up.weight", dim, 96, QUANT_TYPE_Q8_0, 0.5f, 0.0f);
		T("ffn_down.weight", 96, dim, QUANT_TYPE_Q4_0, 0.3f, 0.0f);
#undef T
	}
	add_rand(w, "output_norm.weight", dim, 0, QUANT_TYPE_F32, 0.2f, 1.0f);
	if (!q3)
		add_rand(w, "output.weight", dim, 40, QUANT_TYPE_Q8_0, 0.5f, 0.0f);
	ret = gguf_writer_write_file(w, path, NULL, 0);
	gguf_writer_free(w);
	return ret;
}

/* Pipeline on 1 and 3 mock cards vs the reference for a synthetic model. */
static void test_synth(struct rk_card *cards, const char *arch)
{
	char path[] = "/tmp/rk1828-test-pipe-XXXXXX", err[512] = "";
	int32_t toks[9] = { 1, 5, 9, 39, 0, 17, 22, 3, 30 };
	struct gguf_file *gf = NULL;
	struct ref_model *ref = NULL;
	struct llm_model m;
	float *ref_lg = NULL, *lg = NULL;
	int fd = mkstemp(path), i, c;

	memset(&m, 0, sizeof(m));
	if (fd >= 0)
		close(fd);
	if (fd < 0 || write_synth(path, arch) || !(gf = gguf_open(path, err, sizeof(err))) ||
	    llm_model_load(&m, gf, err, sizeof(err)) ||
	    !(ref = ref_load(path, 64, err, sizeof(err)))) {
		tap_ok(0, "%s synthetic model: setup: %s", arch, err);
		goto out;
	}
	ref_lg = calloc(m.n_vocab, sizeof(float));
	lg = calloc(m.n_vocab, sizeof(float));
	for (i = 0; i < 9; i++)
		ref_forward(ref, toks[i], i, ref_lg);
	for (c = 1; c <= 3; c += 2) {
		uint64_t fr[MCARDS] = { CARD_MEM - 4096, CARD_MEM - 4096, CARD_MEM - 4096 };
		struct plan_sizes sz = { .n_ctx = 64, .bucket = 4 };
		struct pipe_opts po = { .n_ctx = 64, .bucket = 4, .timeout_ms = 1000 };
		struct pipeline *p = NULL;
		struct plan plan;
		double d = 1;
		int ret;

		reset_mock();
		ret = plan_model(&m, &sz, c, fr, NULL, &plan, err, sizeof(err));
		if (!ret)
			ret = pipe_create(&p, &m, cards, &plan, &po, err, sizeof(err));
		if (!ret)
			ret = pipe_forward(p, toks, 9, 0, lg, err, sizeof(err));
		if (!ret)
			d = rel_diff(lg, ref_lg, m.n_vocab);
		tap_ok(!ret && d <= 1e-4, "%s (%s, %s, %d cards): logits match reference (rel %.2e)%s%s",
		   arch, m.rope_neox ? "NEOX" : "normal", m.tied ? "tied" : "untied", c, d,
		   ret ? ": " : "", ret ? err : "");
		pipe_destroy(p);
	}
out:
	free(ref_lg);
	free(lg);
	ref_free(ref);
	llm_model_free(&m);
	if (gf)
		gguf_close(gf);
	unlink(path);
}

int main(void)
{
	const char *path = getenv("RK1828_MODEL");
	static const uint32_t buckets[] = { 1, 4, 16 };
	struct rk_card cards[MCARDS];
	struct gguf_file *gf;
	struct llm_model m;
	struct tokenizer *tk;
	struct ref_model *ref;
	int32_t toks[64], ref_toks[N_DECODE];
	float *ref_logits;
	char err[512] = "";
	int n, i, c, b;

	printf("TAP version 13\n");
	if (!path)
		path = "../shared/models/stories260K.gguf";
	gf = gguf_open(path, err, sizeof(err));
	if (!gf) {
		printf("1..0 # SKIP model not available: %s\n", err);
		return 0;
	}
	err[0] = '\0';
	tap_ok(llm_model_load(&m, gf, err, sizeof(err)) == 0, "model loads%s%s", err[0] ? ": " : "", err);
	tk = tok_load(gf, err, sizeof(err));
	ref = ref_load(path, 64, err, sizeof(err));
	if (!tk || !ref) {
		printf("Bail out! %s\n", err);
		return 1;
	}
	n = tok_encode(tk, "Once upon a time, there was a little girl named", true, toks, 64);
	tap_ok(n > 8, "prompt has %d tokens", n);

	/* Reference: prompt, then greedy decode. */
	ref_logits = calloc((size_t)(1 + N_DECODE) * m.n_vocab, sizeof(float));
	for (i = 0; i < n; i++)
		ref_forward(ref, toks[i], i, ref_logits);
	for (i = 0; i < N_DECODE; i++) {
		ref_toks[i] = argmax(ref_logits + (size_t)i * m.n_vocab, m.n_vocab);
		ref_forward(ref, ref_toks[i], n + i, ref_logits + (size_t)(i + 1) * m.n_vocab);
	}

	for (i = 0; i < MCARDS; i++) {
		memset(&cards[i], 0, sizeof(cards[i]));
		cards[i].fd = i;
		cards[i].index = i;
		snprintf(cards[i].node, sizeof(cards[i].node), "mock%d", i);
		mcards[i].mem = malloc(CARD_MEM);
	}
	for (c = 1; c <= MCARDS; c++)
		for (b = 0; b < 3; b++)
			run_case(&m, cards, c, buckets[b], toks, n, ref_logits, ref_toks);
	test_failure(&m, cards, toks, n);
	test_synth(cards, "qwen2");
	test_synth(cards, "qwen3");

	for (i = 0; i < MCARDS; i++)
		free(mcards[i].mem);
	for (i = 0; i < n_all_bufs; i++) {
		free(all_bufs[i]->p);
		free(all_bufs[i]);
	}
	free(ref_logits);
	ref_free(ref);
	tok_free(tk);
	llm_model_free(&m);
	gguf_close(gf);
	return tap_done();
}
