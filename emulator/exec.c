// SPDX-License-Identifier: MIT
/*
 * Card emulator EXEC: validate a segment program (struct rk1828_program
 * followed by struct rk1828_prog_layer entries, rk1828/program.h) and run
 * it against card memory.
 *
 * Order of work:
 *  1. copy the header, then the whole program, out of card memory (so a
 *     concurrent COPY cannot change it under us), after acc->check;
 *  2. validate every field and compute every tensor's byte range from its
 *     shape and type with overflow checks; each range goes through
 *     acc->check. Nothing is written before all of this passed;
 *  3. run the layers, llama.cpp "llama" architecture semantics
 *     (src/models/llama.cpp, qwen2.cpp, qwen3.cpp in llama.cpp):
 *       h  = rmsnorm(x) * attn_norm
 *       q  = Wq h (+ bq), k = Wk h (+ bk), v = Wv h (+ bv)
 *       q, k: optional per-head rmsnorm (q_norm, k_norm), then RoPE
 *       K/V row of each token (its position, in its sequence's block
 *       of the caches) stored in the F32 caches, all before attention
 *       a  = softmax(q K^T / sqrt(head_dim), causal over rows 0..pos of
 *            the token's sequence) V, head h of q uses
 *            KV head h / (n_heads / n_kv_heads)
 *       x += Wo a
 *       h  = rmsnorm(x) * ffn_norm
 *       x += Wdown (silu(Wgate h) * (Wup h))
 *     and with RK1828_PROG_F_OUTPUT: logits = Woutput (rmsnorm(x) *
 *     output_norm) for the last token (or all with F_ALL_LOGITS, or those
 *     with RK1828_PROG_TOK_LOGITS under F_BATCH).
 * A version 1.0 program (no F_BATCH) gets a made-up token table
 * (positions pos.., sequence 0), so one code path runs both.
 *
 * Alignment requirements (a misaligned address is RK1828_HIF_ST_INVAL):
 * F32 tensors, KV caches, in_addr and out_addr 4 bytes; F16 tensors 2
 * bytes; quantized tensors any. rms_eps must be finite and >= 0,
 * rope_theta finite and > 0. All pad and reserved fields must be zero.
 */
#include "exec.h"

#include <endian.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rk1828_hif.h"
#include "rk1828/program.h"
#include "nn.h"
#include "threadpool.h"

/* Refuse programs whose scratch would exceed this (bytes). */
#define EXEC_MAX_SCRATCH	(8ULL << 30)

#define ST_OK		RK1828_HIF_ST_OK
#define ST_ACCESS	RK1828_HIF_ST_ACCESS
#define ST_INVAL	RK1828_HIF_ST_INVAL
#define ST_NOMEM	RK1828_HIF_ST_NOMEM

/* A validated weight: host pointer (NULL: absent) and type. */
struct ex_tensor {
	const uint8_t *p;
	int type;
};

struct ex_layer {
	struct ex_tensor attn_norm, wq, wk, wv, wo, bq, bk, bv, q_norm, k_norm;
	struct ex_tensor ffn_norm, ffn_gate, ffn_up, ffn_down;
	float *k_cache, *v_cache;
};

/* One token: its KV row (position), its sequence, whether it wants logits. */
struct ex_tok {
	size_t pos, seq;
	bool logits;
};

/*
 * The validated program, all sizes as size_t. Every program gets a token
 * table: from F_BATCH's, or made up for a version 1.0 program (positions
 * pos.., sequence 0, logits for the last token or all).
 */
struct ex_prog {
	uint32_t flags;
	size_t n_layers, n_tokens, pos;
	size_t dim, n_heads, n_kv_heads, head_dim, ffn_dim, n_ctx, rope_dim, n_vocab;
	size_t q_dim, kv_dim;
	size_t n_seq, kv_stride;	/* sequences; floats from one to the next */
	float eps, theta;
	const float *in;
	float *out;
	struct ex_tensor output_norm, output;
	struct ex_layer *layers;
	struct ex_tok *toks;
	size_t n_out;			/* tokens that want logits (F_OUTPUT) */
};

/* ------------------------------------------------------------ thread pool */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tpool *pool;
static int pool_threads;
static bool pool_tried;

void emu_exec_set_threads(int n)
{
	pthread_mutex_lock(&pool_lock);
	if (pool) {
		tp_destroy(pool);
		pool = NULL;
	}
	pool_threads = n < 0 ? 0 : n;
	pool_tried = false;
	pthread_mutex_unlock(&pool_lock);
}

/* The shared pool, created on first use; NULL (single thread) on failure. */
static struct tpool *exec_pool(void)
{
	struct tpool *p;

	pthread_mutex_lock(&pool_lock);
	if (!pool_tried) {
		pool = tp_create(pool_threads);
		pool_tried = true;
	}
	p = pool;
	pthread_mutex_unlock(&pool_lock);
	return p;
}

/* ------------------------------------------------------------- validation */

static bool mul_ok(uint64_t a, uint64_t b, uint64_t *r)
{
	return !__builtin_mul_overflow(a, b, r);
}

/* [addr, addr + len) inside card memory and one mapping of the context. */
static int check_range(const struct emu_access *acc, uint64_t addr, uint64_t len)
{
	uint64_t end;

	if (len == 0)
		return ST_INVAL;
	if (__builtin_add_overflow(addr, len, &end) || end > acc->mem_size)
		return ST_ACCESS;
	if (acc->check(acc->priv, addr, len))
		return ST_ACCESS;
	return ST_OK;
}

/* A float array of n elements at a card address (4-byte aligned). */
static int map_f32(const struct emu_access *acc, uint64_t addr, uint64_t n, float **out)
{
	uint64_t len;
	int rc;

	if (addr % 4 || !mul_ok(n, 4, &len))
		return ST_INVAL;
	rc = check_range(acc, addr, len);
	if (rc)
		return rc;
	*out = (float *)(acc->base + addr);
	return ST_OK;
}

/*
 * Validate a weight of @rows rows of @ne0 elements. @f32_only for norms and
 * biases; @optional lets addr 0 mean "absent".
 */
static int map_tensor(const struct emu_access *acc, const struct rk1828_prog_tensor *t,
		      uint64_t rows, uint64_t ne0, bool f32_only, bool optional,
		      struct ex_tensor *out)
{
	uint64_t addr = le64toh(t->addr), len;
	uint32_t type = le32toh(t->type);
	size_t row;
	int rc;

	out->p = NULL;
	out->type = (int)type;
	if (le32toh(t->pad))
		return ST_INVAL;
	if (addr == 0)
		return optional ? ST_OK : ST_INVAL;
	if (f32_only && type != QUANT_TYPE_F32)
		return ST_INVAL;
	if (!quant_block_size((int)type))
		return ST_INVAL;
	if ((type == QUANT_TYPE_F32 && addr % 4) ||
	    ((type == QUANT_TYPE_F16 || type == QUANT_TYPE_BF16) && addr % 2))
		return ST_INVAL;
	row = quant_row_size((int)type, ne0);
	if (row == 0 || !mul_ok(rows, row, &len))
		return ST_INVAL;
	rc = check_range(acc, addr, len);
	if (rc)
		return rc;
	out->p = acc->base + addr;
	return ST_OK;
}

static bool float_bits(uint32_t le, float *f)
{
	uint32_t u = le32toh(le);

	memcpy(f, &u, sizeof(*f));
	return isfinite(*f);
}

/*
 * Sequences and KV stride: F_BATCH (1.1) names them; a 1.0 program has one
 * sequence at consecutive positions pos.. and zeros in the 1.1 fields.
 */
static int validate_seqs(const struct rk1828_program *h, struct ex_prog *p)
{
	uint64_t stride = le64toh(h->kv_seq_stride), one;

	if (!mul_ok(p->n_ctx, p->kv_dim, &one) || !mul_ok(one, 4, &one))
		return ST_INVAL;
	if (!(p->flags & RK1828_PROG_F_BATCH)) {
		if (h->tok_addr || h->kv_seq_stride || h->n_seq)
			return ST_INVAL;
		if ((uint64_t)p->pos + p->n_tokens > p->n_ctx)
			return ST_INVAL;
		p->n_seq = 1;
		p->kv_stride = p->n_ctx * p->kv_dim;
		return ST_OK;
	}
	p->n_seq = le32toh(h->n_seq);
	if (p->pos || (p->flags & RK1828_PROG_F_ALL_LOGITS) || !p->n_seq ||
	    !h->tok_addr || le64toh(h->tok_addr) % 4 || stride % 4 || stride < one)
		return ST_INVAL;
	p->kv_stride = stride / 4;
	return ST_OK;
}

static int cmp_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The token table: copied out of card memory (F_BATCH) or made up (1.0);
 * positions < n_ctx, sequences < n_seq, (seq, pos) pairs distinct.
 */
static int validate_tokens(const struct emu_access *acc, const struct rk1828_program *h,
			   struct ex_prog *p)
{
	uint64_t addr = le64toh(h->tok_addr), len, *keys;
	const struct rk1828_prog_token *raw;
	size_t t;
	int rc;

	p->toks = calloc(p->n_tokens, sizeof(*p->toks));
	if (!p->toks)
		return ST_NOMEM;
	if (!(p->flags & RK1828_PROG_F_BATCH)) {
		for (t = 0; t < p->n_tokens; t++) {
			p->toks[t].pos = p->pos + t;
			p->toks[t].logits = (p->flags & RK1828_PROG_F_ALL_LOGITS) ||
					    t == p->n_tokens - 1;
		}
		p->n_out = (p->flags & RK1828_PROG_F_ALL_LOGITS) ? p->n_tokens : 1;
		return ST_OK;
	}
	if (!mul_ok(p->n_tokens, sizeof(*raw), &len))
		return ST_INVAL;
	rc = check_range(acc, addr, len);
	if (rc)
		return rc;
	raw = (const struct rk1828_prog_token *)(acc->base + addr);
	keys = malloc(p->n_tokens * sizeof(*keys));
	if (!keys)
		return ST_NOMEM;
	p->n_out = 0;
	for (t = 0; t < p->n_tokens; t++) {
		/* Read each field once: the host may be writing card memory. */
		uint32_t pos = le32toh(__atomic_load_n(&raw[t].pos, __ATOMIC_RELAXED));
		uint32_t seq = le32toh(__atomic_load_n(&raw[t].seq, __ATOMIC_RELAXED));
		uint32_t fl = le32toh(__atomic_load_n(&raw[t].flags, __ATOMIC_RELAXED));
		uint32_t pad = __atomic_load_n(&raw[t].pad, __ATOMIC_RELAXED);

		if (pos >= p->n_ctx || seq >= p->n_seq || (fl & ~RK1828_PROG_TOK_LOGITS) || pad) {
			free(keys);
			return ST_INVAL;
		}
		p->toks[t] = (struct ex_tok){ pos, seq, fl & RK1828_PROG_TOK_LOGITS };
		p->n_out += p->toks[t].logits;
		keys[t] = (uint64_t)seq << 32 | pos;
	}
	qsort(keys, p->n_tokens, sizeof(*keys), cmp_key);
	for (t = 1; t < p->n_tokens; t++) {
		if (keys[t] == keys[t - 1]) {
			free(keys);
			return ST_INVAL;
		}
	}
	free(keys);
	return ST_OK;
}

/* Header fields: everything except the tensors and the layers. */
static int validate_header(const struct rk1828_program *h, uint64_t prog_size,
			   struct ex_prog *p)
{
	const uint32_t known = RK1828_PROG_F_OUTPUT | RK1828_PROG_F_ALL_LOGITS |
			       RK1828_PROG_F_ROPE_NEOX | RK1828_PROG_F_BATCH;
	uint64_t size = le32toh(h->size), want;

	p->flags = le32toh(h->flags);
	p->n_layers = le32toh(h->n_layers);
	p->n_tokens = le32toh(h->n_tokens);
	p->pos = le32toh(h->pos);
	p->dim = le32toh(h->dim);
	p->n_heads = le32toh(h->n_heads);
	p->n_kv_heads = le32toh(h->n_kv_heads);
	p->head_dim = le32toh(h->head_dim);
	p->ffn_dim = le32toh(h->ffn_dim);
	p->n_ctx = le32toh(h->n_ctx);
	p->rope_dim = le32toh(h->rope_dim);
	p->n_vocab = le32toh(h->n_vocab);

	want = sizeof(*h) + (uint64_t)p->n_layers * sizeof(struct rk1828_prog_layer);
	if (size != want || size > prog_size)
		return ST_INVAL;
	if (h->pad || h->delay_ms || h->pad2 || h->reserved[0])
		return ST_INVAL;
	if (p->flags & ~known)
		return ST_INVAL;
	if ((p->flags & RK1828_PROG_F_ALL_LOGITS) && !(p->flags & RK1828_PROG_F_OUTPUT))
		return ST_INVAL;
	if (p->n_layers == 0 && !(p->flags & RK1828_PROG_F_OUTPUT))
		return ST_INVAL;
	if (!p->n_tokens || !p->dim || !p->n_heads || !p->n_kv_heads || !p->head_dim ||
	    !p->ffn_dim || !p->n_ctx)
		return ST_INVAL;
	if (p->n_heads % p->n_kv_heads)
		return ST_INVAL;
	if (p->rope_dim % 2 || p->rope_dim > p->head_dim)
		return ST_INVAL;
	if ((p->flags & RK1828_PROG_F_OUTPUT) && !p->n_vocab)
		return ST_INVAL;
	if (!float_bits(h->rms_eps, &p->eps) || p->eps < 0.0f)
		return ST_INVAL;
	if (!float_bits(h->rope_theta, &p->theta) || p->theta <= 0.0f)
		return ST_INVAL;
	/* u32 * u32 fits in 64 bits; size_t is 64-bit on our hosts. */
	p->q_dim = p->n_heads * p->head_dim;
	p->kv_dim = p->n_kv_heads * p->head_dim;
	return validate_seqs(h, p);
}

static int validate_layer(const struct emu_access *acc, const struct rk1828_prog_layer *l,
			  const struct ex_prog *p, struct ex_layer *o)
{
	uint64_t kv_elems;
	int rc;

#define TRY(x) do { rc = (x); if (rc) return rc; } while (0)
	TRY(map_tensor(acc, &l->attn_norm, 1, p->dim, true, false, &o->attn_norm));
	TRY(map_tensor(acc, &l->wq, p->q_dim, p->dim, false, false, &o->wq));
	TRY(map_tensor(acc, &l->wk, p->kv_dim, p->dim, false, false, &o->wk));
	TRY(map_tensor(acc, &l->wv, p->kv_dim, p->dim, false, false, &o->wv));
	TRY(map_tensor(acc, &l->wo, p->dim, p->q_dim, false, false, &o->wo));
	TRY(map_tensor(acc, &l->bq, 1, p->q_dim, true, true, &o->bq));
	TRY(map_tensor(acc, &l->bk, 1, p->kv_dim, true, true, &o->bk));
	TRY(map_tensor(acc, &l->bv, 1, p->kv_dim, true, true, &o->bv));
	TRY(map_tensor(acc, &l->q_norm, 1, p->head_dim, true, true, &o->q_norm));
	TRY(map_tensor(acc, &l->k_norm, 1, p->head_dim, true, true, &o->k_norm));
	TRY(map_tensor(acc, &l->ffn_norm, 1, p->dim, true, false, &o->ffn_norm));
	TRY(map_tensor(acc, &l->ffn_gate, p->ffn_dim, p->dim, false, false, &o->ffn_gate));
	TRY(map_tensor(acc, &l->ffn_up, p->ffn_dim, p->dim, false, false, &o->ffn_up));
	TRY(map_tensor(acc, &l->ffn_down, p->dim, p->ffn_dim, false, false, &o->ffn_down));
	/* All n_seq blocks of each cache: (n_seq - 1) strides + one block. */
	if (!mul_ok(p->n_seq - 1, p->kv_stride, &kv_elems) ||
	    __builtin_add_overflow(kv_elems, (uint64_t)p->n_ctx * p->kv_dim, &kv_elems))
		return ST_INVAL;
	if (!le64toh(l->k_cache) || !le64toh(l->v_cache))
		return ST_INVAL;
	TRY(map_f32(acc, le64toh(l->k_cache), kv_elems, &o->k_cache));
	TRY(map_f32(acc, le64toh(l->v_cache), kv_elems, &o->v_cache));
#undef TRY
	return ST_OK;
}

static int validate_io(const struct emu_access *acc, const struct rk1828_program *h,
		       struct ex_prog *p)
{
	uint64_t in_n, out_n;
	float *in;
	int rc;

	if (!mul_ok(p->n_tokens, p->dim, &in_n))
		return ST_INVAL;
	if (p->flags & RK1828_PROG_F_OUTPUT) {
		if (!mul_ok(p->n_out, p->n_vocab, &out_n))
			return ST_INVAL;
		rc = map_tensor(acc, &h->output_norm, 1, p->dim, true, false, &p->output_norm);
		if (rc)
			return rc;
		rc = map_tensor(acc, &h->output, p->n_vocab, p->dim, false, false, &p->output);
		if (rc)
			return rc;
	} else {
		/* Without F_OUTPUT the head tensors are ignored. */
		out_n = in_n;
	}
	rc = map_f32(acc, le64toh(h->in_addr), in_n, &in);
	if (rc)
		return rc;
	p->in = in;
	if (!out_n) {		/* F_BATCH micro-batch without logits rows */
		p->out = NULL;
		return ST_OK;
	}
	return map_f32(acc, le64toh(h->out_addr), out_n, &p->out);
}

/* ---------------------------------------------------------------- compute */

struct ex_work {
	const struct ex_prog *p;
	struct tpool *pool;
	float *x, *xb, *q, *k, *v, *att, *hb, *hb2, *rcos, *rsin;
	const struct ex_layer *l;
	float scale;
	volatile int failed;
};

static int matmul(struct ex_work *w, const struct ex_tensor *t, const float *x, float *y,
		  size_t rows, size_t k, size_t n_tok)
{
	return nn_matmul(w->pool, t->type, t->p, x, y, rows, k, n_tok) ? ST_NOMEM : ST_OK;
}

/* One (token, head) pair of causal attention per index. */
static void attn_worker(void *arg, size_t b, size_t e, int tid)
{
	struct ex_work *w = arg;
	const struct ex_prog *p = w->p;
	const struct ex_layer *l = w->l;
	size_t group = p->n_heads / p->n_kv_heads, hd = p->head_dim;
	size_t bytes = p->n_ctx * sizeof(float);
	float *own = NULL;
	float *s = w->pool ? tp_scratch(w->pool, tid, bytes, 1) : (own = malloc(bytes));
	size_t i, j;

	if (!s) {
		w->failed = 1;
		return;
	}
	for (i = b; i < e; i++) {
		size_t t = i / p->n_heads, h = i % p->n_heads;
		const struct ex_tok *tk = &p->toks[t];
		size_t n = tk->pos + 1;
		size_t koff = tk->seq * p->kv_stride + (h / group) * hd;
		const float *qh = w->q + t * p->q_dim + h * hd;
		float *o = w->att + t * p->q_dim + h * hd;

		for (j = 0; j < n; j++)
			s[j] = nn_dot(qh, l->k_cache + j * p->kv_dim + koff, hd) * w->scale;
		nn_softmax(s, n);
		memset(o, 0, hd * sizeof(float));
		for (j = 0; j < n; j++)
			nn_axpy(o, s[j], l->v_cache + j * p->kv_dim + koff, hd);
	}
	free(own);
}

static void add_bias(float *y, const struct ex_tensor *b, size_t n, size_t n_tok)
{
	const float *bias = (const float *)b->p;
	size_t t, i;

	if (!bias)
		return;
	for (t = 0; t < n_tok; t++)
		for (i = 0; i < n; i++)
			y[t * n + i] += bias[i];
}

/* Per-head RMSNorm (qwen3 q_norm / k_norm), same eps as the layer norms. */
static void head_norm(float *y, const struct ex_tensor *nw, size_t n_heads, size_t hd,
		      size_t n_tok, float eps)
{
	size_t i;

	if (!nw->p)
		return;
	for (i = 0; i < n_tok * n_heads; i++)
		nn_rmsnorm(y + i * hd, y + i * hd, (const float *)nw->p, hd, eps);
}

static int run_layer(struct ex_work *w, const struct ex_layer *l)
{
	const struct ex_prog *p = w->p;
	size_t T = p->n_tokens, t, i;
	bool neox = p->flags & RK1828_PROG_F_ROPE_NEOX;
	size_t half = p->rope_dim / 2;
	int rc;

	for (t = 0; t < T; t++)
		nn_rmsnorm(w->xb + t * p->dim, w->x + t * p->dim,
			     (const float *)l->attn_norm.p, p->dim, p->eps);
	if ((rc = matmul(w, &l->wq, w->xb, w->q, p->q_dim, p->dim, T)) ||
	    (rc = matmul(w, &l->wk, w->xb, w->k, p->kv_dim, p->dim, T)) ||
	    (rc = matmul(w, &l->wv, w->xb, w->v, p->kv_dim, p->dim, T)))
		return rc;
	add_bias(w->q, &l->bq, p->q_dim, T);
	add_bias(w->k, &l->bk, p->kv_dim, T);
	add_bias(w->v, &l->bv, p->kv_dim, T);
	head_norm(w->q, &l->q_norm, p->n_heads, p->head_dim, T, p->eps);
	head_norm(w->k, &l->k_norm, p->n_kv_heads, p->head_dim, T, p->eps);
	for (t = 0; t < T; t++) {
		nn_rope(w->q + t * p->q_dim, p->n_heads, p->head_dim, p->rope_dim,
			  w->rcos + t * half, w->rsin + t * half, neox);
		nn_rope(w->k + t * p->kv_dim, p->n_kv_heads, p->head_dim, p->rope_dim,
			  w->rcos + t * half, w->rsin + t * half, neox);
	}
	/* Every K/V row of the program is written before any attention reads. */
	for (t = 0; t < T; t++) {
		size_t row = p->toks[t].seq * p->kv_stride + p->toks[t].pos * p->kv_dim;

		memcpy(l->k_cache + row, w->k + t * p->kv_dim, p->kv_dim * sizeof(float));
		memcpy(l->v_cache + row, w->v + t * p->kv_dim, p->kv_dim * sizeof(float));
	}

	w->l = l;
	w->failed = 0;
	tp_parallel_for(w->pool, T * p->n_heads, 1, attn_worker, w);
	if (w->failed)
		return ST_NOMEM;

	rc = matmul(w, &l->wo, w->att, w->xb, p->dim, p->q_dim, T);
	if (rc)
		return rc;
	for (i = 0; i < T * p->dim; i++)
		w->x[i] += w->xb[i];

	for (t = 0; t < T; t++)
		nn_rmsnorm(w->xb + t * p->dim, w->x + t * p->dim,
			     (const float *)l->ffn_norm.p, p->dim, p->eps);
	if ((rc = matmul(w, &l->ffn_gate, w->xb, w->hb, p->ffn_dim, p->dim, T)) ||
	    (rc = matmul(w, &l->ffn_up, w->xb, w->hb2, p->ffn_dim, p->dim, T)))
		return rc;
	nn_silu_mul(w->hb, w->hb2, T * p->ffn_dim);
	rc = matmul(w, &l->ffn_down, w->hb, w->xb, p->dim, p->ffn_dim, T);
	if (rc)
		return rc;
	for (i = 0; i < T * p->dim; i++)
		w->x[i] += w->xb[i];
	return ST_OK;
}

/* RoPE tables: theta_i = pos_t * theta^(-2i / rope_dim), in double. */
static void rope_tables(const struct ex_prog *p, float *cs, float *sn)
{
	size_t half = p->rope_dim / 2, t, i;

	for (t = 0; t < p->n_tokens; t++) {
		for (i = 0; i < half; i++) {
			double freq = pow((double)p->theta, -2.0 * (double)i / (double)p->rope_dim);
			double a = (double)p->toks[t].pos * freq;

			cs[t * half + i] = (float)cos(a);
			sn[t * half + i] = (float)sin(a);
		}
	}
}

static bool aborted(const struct emu_access *acc)
{
	return acc->abort && __atomic_load_n(acc->abort, __ATOMIC_ACQUIRE);
}

static int run_program(const struct emu_access *acc, const struct ex_prog *p)
{
	size_t T = p->n_tokens, dmax = p->dim > p->q_dim ? p->dim : p->q_dim;
	uint64_t per_tok = 0, total, half = p->rope_dim / 2;
	struct ex_work w = { .p = p, .pool = exec_pool() };
	float *buf;
	size_t i;
	int rc = ST_OK;

	/* x, xb, q, k, v, att, hb, hb2 per token, plus the RoPE tables. */
	if (__builtin_add_overflow(per_tok, (uint64_t)p->dim + dmax + 2 * p->q_dim, &per_tok) ||
	    __builtin_add_overflow(per_tok, 2 * (uint64_t)p->kv_dim, &per_tok) ||
	    __builtin_add_overflow(per_tok, 2 * (uint64_t)p->ffn_dim + 2 * half, &per_tok) ||
	    !mul_ok(per_tok, T, &total) || !mul_ok(total, sizeof(float), &total) ||
	    total > EXEC_MAX_SCRATCH)
		return ST_NOMEM;
	buf = malloc(total);
	if (!buf)
		return ST_NOMEM;
	w.x = buf;
	w.xb = w.x + T * p->dim;
	w.q = w.xb + T * dmax;
	w.k = w.q + T * p->q_dim;
	w.v = w.k + T * p->kv_dim;
	w.att = w.v + T * p->kv_dim;
	w.hb = w.att + T * p->q_dim;
	w.hb2 = w.hb + T * p->ffn_dim;
	w.rcos = w.hb2 + T * p->ffn_dim;
	w.rsin = w.rcos + T * half;
	w.scale = (float)(1.0 / sqrt((double)p->head_dim));

	memcpy(w.x, p->in, T * p->dim * sizeof(float));
	rope_tables(p, w.rcos, w.rsin);

	for (i = 0; i < p->n_layers; i++) {
		if (aborted(acc)) {
			rc = -1;
			goto out;
		}
		rc = run_layer(&w, &p->layers[i]);
		if (rc)
			goto out;
	}
	if (aborted(acc)) {
		rc = -1;
		goto out;
	}
	if (p->flags & RK1828_PROG_F_OUTPUT) {
		size_t r = 0;

		/* The rows of the tokens that want logits, in token order. */
		for (i = 0; i < T; i++)
			if (p->toks[i].logits)
				nn_rmsnorm(w.xb + r++ * p->dim, w.x + i * p->dim,
					     (const float *)p->output_norm.p, p->dim, p->eps);
		if (r)
			rc = matmul(&w, &p->output, w.xb, p->out, p->n_vocab, p->dim, r);
	} else {
		memcpy(p->out, w.x, T * p->dim * sizeof(float));
	}
out:
	free(buf);
	return rc;
}

/* DELAY: sleep in 1 ms steps, watching the abort flag. */
static int run_delay(const struct emu_access *acc, uint32_t ms)
{
	const struct timespec step = { .tv_sec = 0, .tv_nsec = 1000000 };
	uint32_t i;

	for (i = 0; i < ms; i++) {
		if (aborted(acc))
			return -1;
		nanosleep(&step, NULL);
	}
	return aborted(acc) ? -1 : ST_OK;
}

int emu_exec(const struct emu_access *acc, uint64_t prog_addr, uint64_t prog_size)
{
	struct rk1828_program h;
	struct rk1828_prog_layer *raw = NULL;
	struct ex_prog p;
	size_t i;
	int rc;

	if (prog_size < sizeof(h))
		return ST_INVAL;
	rc = check_range(acc, prog_addr, sizeof(h));
	if (rc)
		return rc;
	memcpy(&h, acc->base + prog_addr, sizeof(h));
	if (le32toh(h.magic) != RK1828_PROG_MAGIC)
		return ST_INVAL;

	if (le32toh(h.op) == RK1828_PROG_OP_DELAY) {
		uint64_t size = le32toh(h.size);

		if (size < sizeof(h) || size > prog_size)
			return ST_INVAL;
		return run_delay(acc, le32toh(h.delay_ms));
	}
	if (le32toh(h.op) != RK1828_PROG_OP_DECODER)
		return ST_INVAL;

	memset(&p, 0, sizeof(p));
	rc = validate_header(&h, prog_size, &p);
	if (rc)
		return rc;
	rc = check_range(acc, prog_addr, le32toh(h.size));
	if (rc)
		return rc;
	if (p.n_layers) {
		raw = malloc(p.n_layers * sizeof(*raw));
		p.layers = calloc(p.n_layers, sizeof(*p.layers));
		if (!raw || !p.layers) {
			rc = ST_NOMEM;
			goto out;
		}
		memcpy(raw, acc->base + prog_addr + sizeof(h), p.n_layers * sizeof(*raw));
	}
	for (i = 0; i < p.n_layers; i++) {
		rc = validate_layer(acc, &raw[i], &p, &p.layers[i]);
		if (rc)
			goto out;
	}
	rc = validate_tokens(acc, &h, &p);
	if (rc)
		goto out;
	rc = validate_io(acc, &h, &p);
	if (rc)
		goto out;
	rc = run_program(acc, &p);
out:
	free(raw);
	free(p.layers);
	free(p.toks);
	return rc;
}
