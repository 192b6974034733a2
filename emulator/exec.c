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
 *       of the caches) stored in the caches' kv_type (1.3: F32, F16,
 *       Q8_0, Q4_0; rk1828/kv_cache.h), all before attention, which
 *       reads every row decoded from what is stored
 *       a  = softmax(q K^T / sqrt(head_dim), causal over rows 0..pos of
 *            the token's sequence) V, head h of q uses
 *            KV head h / (n_heads / n_kv_heads)
 *       x += Wo a
 *       h  = rmsnorm(x) * ffn_norm
 *       x += Wdown (silu(Wgate h) * (Wup h))
 *     and with RK1828_PROG_F_OUTPUT: logits = Woutput (rmsnorm(x) *
 *     output_norm) for the last token (or all with F_ALL_LOGITS, or those
 *     with RK1828_PROG_TOK_LOGITS under F_BATCH), and with
 *     RK1828_PROG_F_HIDDEN the normed rows rmsnorm(x) * output_norm after
 *     the logits rows.
 * A version 1.0 program (no F_BATCH) gets a made-up token table
 * (positions pos.., sequence 0), so one code path runs both.
 *
 * Alignment requirements (a misaligned address is RK1828_HIF_ST_INVAL):
 * F32 tensors, KV caches, in_addr and out_addr 4 bytes; F16 tensors 2
 * bytes; quantized tensors any. rms_eps must be finite and >= 0,
 * rope_theta finite and > 0. All pad and reserved fields must be zero.
 */
#include "exec_int.h"

#include <endian.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rk1828/util.h"
#include "nn.h"
#include "threadpool.h"

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

#define mul_ok ex_mul_ok
#define check_range ex_check_range
#define map_f32 ex_map_f32
#define map_tensor ex_map_tensor
#define matmul ex_matmul

int ex_check_range(const struct emu_access *acc, uint64_t addr, uint64_t len)
{
	uint64_t end;

	if (len == 0)
		return RK1828_HIF_ST_INVAL;
	if (__builtin_add_overflow(addr, len, &end) || end > acc->mem_size)
		return RK1828_HIF_ST_ACCESS;
	if (acc->check(acc->priv, addr, len))
		return RK1828_HIF_ST_ACCESS;
	return RK1828_HIF_ST_OK;
}

int ex_map_f32(const struct emu_access *acc, uint64_t addr, uint64_t n, float **out)
{
	uint64_t len;
	int rc;

	if (addr % 4 || !mul_ok(n, 4, &len))
		return RK1828_HIF_ST_INVAL;
	rc = check_range(acc, addr, len);
	if (rc)
		return rc;
	*out = (float *)(acc->base + addr);
	return RK1828_HIF_ST_OK;
}

int ex_map_tensor(const struct emu_access *acc, const struct rk1828_prog_tensor *t,
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
		return RK1828_HIF_ST_INVAL;
	if (addr == 0)
		return optional ? RK1828_HIF_ST_OK : RK1828_HIF_ST_INVAL;
	if (f32_only && type != QUANT_TYPE_F32)
		return RK1828_HIF_ST_INVAL;
	if (!quant_block_size((int)type))
		return RK1828_HIF_ST_INVAL;
	if ((type == QUANT_TYPE_F32 && addr % 4) ||
	    ((type == QUANT_TYPE_F16 || type == QUANT_TYPE_BF16) && addr % 2))
		return RK1828_HIF_ST_INVAL;
	row = quant_row_size((int)type, ne0);
	if (row == 0 || !mul_ok(rows, row, &len))
		return RK1828_HIF_ST_INVAL;
	rc = check_range(acc, addr, len);
	if (rc)
		return rc;
	out->p = acc->base + addr;
	return RK1828_HIF_ST_OK;
}

int ex_map_state_bytes(const struct emu_access *acc, const struct rk1828_prog_state *st,
		       const struct ex_prog *p, uint64_t n_blocks, uint64_t block_bytes,
		       uint8_t **out, size_t *stride_bytes)
{
	uint64_t addr = le64toh(st->addr), stride = le64toh(st->seq_stride), n;
	int rc;

	if (!addr || !block_bytes || addr % 4)
		return RK1828_HIF_ST_INVAL;
	if (!(p->flags & RK1828_PROG_F_BATCH)) {
		if (stride)
			return RK1828_HIF_ST_INVAL;
	} else if (stride % 4 || stride < block_bytes) {
		return RK1828_HIF_ST_INVAL;
	}
	*stride_bytes = (size_t)stride;
	/* All blocks: (n_blocks - 1) strides + one block. */
	if (!mul_ok(n_blocks - 1, stride, &n) || __builtin_add_overflow(n, block_bytes, &n))
		return RK1828_HIF_ST_INVAL;
	rc = check_range(acc, addr, n);
	if (rc)
		return rc;
	*out = acc->base + addr;
	return RK1828_HIF_ST_OK;
}

int ex_map_state(const struct emu_access *acc, const struct rk1828_prog_state *st,
		 const struct ex_prog *p, uint64_t n_blocks, uint64_t block_floats,
		 float **out, size_t *stride_floats)
{
	uint64_t bytes;
	uint8_t *b;
	size_t sb;
	int rc;

	if (!mul_ok(block_floats, 4, &bytes))
		return RK1828_HIF_ST_INVAL;
	rc = ex_map_state_bytes(acc, st, p, n_blocks, bytes, &b, &sb);
	if (rc)
		return rc;
	*out = (float *)b;
	*stride_floats = sb / 4;
	return RK1828_HIF_ST_OK;
}

static bool float_bits(uint32_t le, float *f)
{
	*f = util_bits_f32(le32toh(le));
	return isfinite(*f);
}

/*
 * Sequences and KV stride: F_BATCH (1.1) names them; a 1.0 program has one
 * sequence at consecutive positions pos.. and zeros in the 1.1 fields.
 */
static int validate_seqs(const struct rk1828_program *h, struct ex_prog *p)
{
	uint64_t stride = le64toh(h->kv_seq_stride), one;

	/* One sequence's cache of one layer: n_ctx rows of kv_row bytes. */
	if (!mul_ok(p->n_ctx, p->kv_row, &one))
		return RK1828_HIF_ST_INVAL;
	if (!(p->flags & RK1828_PROG_F_BATCH)) {
		if (h->tok_addr || h->kv_seq_stride || h->n_seq)
			return RK1828_HIF_ST_INVAL;
		if ((uint64_t)p->pos + p->n_tokens > p->n_ctx)
			return RK1828_HIF_ST_INVAL;
		p->n_seq = 1;
		p->kv_stride = one;
		return RK1828_HIF_ST_OK;
	}
	p->n_seq = le32toh(h->n_seq);
	if (p->pos || (p->flags & RK1828_PROG_F_ALL_LOGITS) || !p->n_seq ||
	    !h->tok_addr || le64toh(h->tok_addr) % 4)
		return RK1828_HIF_ST_INVAL;
	/* Hybrid layer records carry their own strides. */
	if (p->hybrid) {
		if (stride)
			return RK1828_HIF_ST_INVAL;
		p->kv_stride = 0;
		return RK1828_HIF_ST_OK;
	}
	if (stride % 4 || stride < one)
		return RK1828_HIF_ST_INVAL;
	p->kv_stride = stride;
	return RK1828_HIF_ST_OK;
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
		return RK1828_HIF_ST_NOMEM;
	if (!(p->flags & RK1828_PROG_F_BATCH)) {
		for (t = 0; t < p->n_tokens; t++) {
			p->toks[t].pos = p->pos + t;
			p->toks[t].logits = (p->flags & RK1828_PROG_F_ALL_LOGITS) ||
					    t == p->n_tokens - 1;
		}
		p->n_out = (p->flags & RK1828_PROG_F_ALL_LOGITS) ? p->n_tokens : 1;
		return RK1828_HIF_ST_OK;
	}
	if (!mul_ok(p->n_tokens, sizeof(*raw), &len))
		return RK1828_HIF_ST_INVAL;
	rc = check_range(acc, addr, len);
	if (rc)
		return rc;
	raw = (const struct rk1828_prog_token *)(acc->base + addr);
	keys = malloc(p->n_tokens * sizeof(*keys));
	if (!keys)
		return RK1828_HIF_ST_NOMEM;
	p->n_out = 0;
	for (t = 0; t < p->n_tokens; t++) {
		/* Read each field once: the host may be writing card memory. */
		uint32_t pos = le32toh(__atomic_load_n(&raw[t].pos, __ATOMIC_RELAXED));
		uint32_t seq = le32toh(__atomic_load_n(&raw[t].seq, __ATOMIC_RELAXED));
		uint32_t fl = le32toh(__atomic_load_n(&raw[t].flags, __ATOMIC_RELAXED));
		uint32_t aux = le32toh(__atomic_load_n(&raw[t].aux, __ATOMIC_RELAXED));
		const uint32_t snap = RK1828_PROG_TOK_SNAPSHOT | RK1828_PROG_TOK_RESTORE;
		uint32_t known = RK1828_PROG_TOK_LOGITS | (p->hybrid ? snap : 0);

		if (pos >= p->n_ctx || seq >= p->n_seq || (fl & ~known) ||
		    ((fl & snap) ? aux >= p->n_seq + p->n_snap || aux == seq : aux != 0)) {
			free(keys);
			return RK1828_HIF_ST_INVAL;
		}
		p->toks[t] = (struct ex_tok){ .pos = pos, .seq = seq, .aux = aux,
					      .logits = fl & RK1828_PROG_TOK_LOGITS,
					      .snapshot = fl & RK1828_PROG_TOK_SNAPSHOT,
					      .restore = fl & RK1828_PROG_TOK_RESTORE };
		p->n_out += p->toks[t].logits;
		keys[t] = (uint64_t)seq << 32 | pos;
	}
	qsort(keys, p->n_tokens, sizeof(*keys), cmp_key);
	for (t = 1; t < p->n_tokens; t++) {
		if (keys[t] == keys[t - 1]) {
			free(keys);
			return RK1828_HIF_ST_INVAL;
		}
	}
	free(keys);
	return RK1828_HIF_ST_OK;
}

/* Header fields: everything except the tensors and the layers. */
static int validate_header(const struct rk1828_program *h, uint64_t prog_size,
			   struct ex_prog *p)
{
	const uint32_t known = RK1828_PROG_F_OUTPUT | RK1828_PROG_F_ALL_LOGITS |
			       RK1828_PROG_F_ROPE_NEOX | RK1828_PROG_F_BATCH |
			       RK1828_PROG_F_HIDDEN;
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

	want = sizeof(*h) + (uint64_t)p->n_layers *
	       (p->hybrid ? sizeof(struct rk1828_prog_hlayer) : sizeof(struct rk1828_prog_layer));
	if (size != want || size > prog_size)
		return RK1828_HIF_ST_INVAL;
	if (h->pad || h->delay_ms || h->reserved)
		return RK1828_HIF_ST_INVAL;
	p->kv_type = (int)le32toh(h->kv_type);
	if (!rk1828_kv_type_ok(p->kv_type))
		return RK1828_HIF_ST_INVAL;
	p->n_snap = le32toh(h->n_snap);
	if (p->n_snap && (!p->hybrid || !(p->flags & RK1828_PROG_F_BATCH)))
		return RK1828_HIF_ST_INVAL;
	if (p->flags & ~known)
		return RK1828_HIF_ST_INVAL;
	if ((p->flags & (RK1828_PROG_F_ALL_LOGITS | RK1828_PROG_F_HIDDEN)) &&
	    !(p->flags & RK1828_PROG_F_OUTPUT))
		return RK1828_HIF_ST_INVAL;
	if (p->n_layers == 0 && !(p->flags & RK1828_PROG_F_OUTPUT))
		return RK1828_HIF_ST_INVAL;
	if (!p->n_tokens || !p->dim || !p->n_heads || !p->n_kv_heads || !p->head_dim ||
	    !p->ffn_dim || !p->n_ctx)
		return RK1828_HIF_ST_INVAL;
	if (p->n_heads % p->n_kv_heads)
		return RK1828_HIF_ST_INVAL;
	if (p->rope_dim % 2 || p->rope_dim > p->head_dim)
		return RK1828_HIF_ST_INVAL;
	if ((p->flags & RK1828_PROG_F_OUTPUT) && !p->n_vocab)
		return RK1828_HIF_ST_INVAL;
	if (!float_bits(h->rms_eps, &p->eps) || p->eps < 0.0f)
		return RK1828_HIF_ST_INVAL;
	if (!float_bits(h->rope_theta, &p->theta) || p->theta <= 0.0f)
		return RK1828_HIF_ST_INVAL;
	/* u32 * u32 fits in 64 bits; size_t is 64-bit on our hosts. */
	p->q_dim = p->n_heads * p->head_dim;
	p->kv_dim = p->n_kv_heads * p->head_dim;
	/* Block types: whole blocks per row (a block may span heads). */
	p->kv_row = rk1828_kv_row_bytes(p->kv_type, p->kv_dim);
	if (!p->kv_row)
		return RK1828_HIF_ST_INVAL;
	return validate_seqs(h, p);
}

static int validate_layer(const struct emu_access *acc, const struct rk1828_prog_layer *l,
			  const struct ex_prog *p, struct ex_layer *o)
{
	uint64_t kv_bytes, k = le64toh(l->k_cache), v = le64toh(l->v_cache);
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
	if (!mul_ok(p->n_seq - 1, p->kv_stride, &kv_bytes) ||
	    __builtin_add_overflow(kv_bytes, (uint64_t)p->n_ctx * p->kv_row, &kv_bytes))
		return RK1828_HIF_ST_INVAL;
	if (!k || !v || k % 4 || v % 4)
		return RK1828_HIF_ST_INVAL;
	TRY(check_range(acc, k, kv_bytes));
	TRY(check_range(acc, v, kv_bytes));
#undef TRY
	o->k_cache = acc->base + k;
	o->v_cache = acc->base + v;
	o->kind = RK1828_PROG_LAYER_ATTN;
	o->kv_stride = p->kv_stride;
	return RK1828_HIF_ST_OK;
}

/* The FFN tensors both hlayer kinds share. */
static int validate_hffn(const struct emu_access *acc, const struct rk1828_prog_hlayer *l,
			 const struct ex_prog *p, struct ex_layer *o)
{
	int rc;

#define TRY(x) do { rc = (x); if (rc) return rc; } while (0)
	TRY(map_tensor(acc, &l->attn_norm, 1, p->dim, true, false, &o->attn_norm));
	TRY(map_tensor(acc, &l->ffn_norm, 1, p->dim, true, false, &o->ffn_norm));
	TRY(map_tensor(acc, &l->ffn_gate, p->ffn_dim, p->dim, false, false, &o->ffn_gate));
	TRY(map_tensor(acc, &l->ffn_up, p->ffn_dim, p->dim, false, false, &o->ffn_up));
	TRY(map_tensor(acc, &l->ffn_down, p->dim, p->ffn_dim, false, false, &o->ffn_down));
#undef TRY
	return l->reserved ? RK1828_HIF_ST_INVAL : RK1828_HIF_ST_OK;
}

/* An attention hlayer: the v1 layer's tensors, LF_GATE and LF_IMROPE. */
static int validate_hattn(const struct emu_access *acc, const struct rk1828_prog_hlayer *l,
			  const struct ex_prog *p, struct ex_layer *o)
{
	const struct rk1828_prog_attn *a = &l->attn;
	uint32_t fl = le32toh(l->flags);
	size_t i, sum = 0;
	int rc;

	if (fl & ~(RK1828_PROG_LF_GATE | RK1828_PROG_LF_IMROPE) || a->pad[0] || a->pad[1])
		return RK1828_HIF_ST_INVAL;
	o->lflags = fl;
	for (i = 0; i < 4; i++) {
		o->sections[i] = le16toh(a->rope_sections[i]);
		sum += o->sections[i];
	}
	if ((fl & RK1828_PROG_LF_IMROPE) ? !sum || !(p->flags & RK1828_PROG_F_ROPE_NEOX) : sum)
		return RK1828_HIF_ST_INVAL;
#define TRY(x) do { rc = (x); if (rc) return rc; } while (0)
	TRY(validate_hffn(acc, l, p, o));
	TRY(map_tensor(acc, &a->wq, (fl & RK1828_PROG_LF_GATE ? 2 : 1) * p->q_dim, p->dim,
		       false, false, &o->wq));
	TRY(map_tensor(acc, &a->wk, p->kv_dim, p->dim, false, false, &o->wk));
	TRY(map_tensor(acc, &a->wv, p->kv_dim, p->dim, false, false, &o->wv));
	TRY(map_tensor(acc, &a->wo, p->dim, p->q_dim, false, false, &o->wo));
	TRY(map_tensor(acc, &a->bq, 1, p->q_dim, true, true, &o->bq));
	TRY(map_tensor(acc, &a->bk, 1, p->kv_dim, true, true, &o->bk));
	TRY(map_tensor(acc, &a->bv, 1, p->kv_dim, true, true, &o->bv));
	TRY(map_tensor(acc, &a->q_norm, 1, p->head_dim, true, true, &o->q_norm));
	TRY(map_tensor(acc, &a->k_norm, 1, p->head_dim, true, true, &o->k_norm));
	if ((fl & RK1828_PROG_LF_GATE) && o->bq.p)
		return RK1828_HIF_ST_INVAL;
	TRY(ex_map_state_bytes(acc, &l->state[0], p, p->n_seq, (uint64_t)p->n_ctx * p->kv_row,
			       &o->k_cache, &o->kv_stride));
	{
		size_t vs;

		TRY(ex_map_state_bytes(acc, &l->state[1], p, p->n_seq,
				       (uint64_t)p->n_ctx * p->kv_row, &o->v_cache, &vs));
		/* One stride per layer: the caches of a sequence move together. */
		if (vs != o->kv_stride)
			return RK1828_HIF_ST_INVAL;
	}
#undef TRY
	o->kind = RK1828_PROG_LAYER_ATTN;
	if (!(p->flags & RK1828_PROG_F_BATCH))
		o->kv_stride = 0;
	return RK1828_HIF_ST_OK;
}

static int validate_hlayer(const struct emu_access *acc, const struct rk1828_prog_hlayer *l,
			   struct ex_prog *p, struct ex_layer *o)
{
	int rc;

	switch (le32toh(l->kind)) {
	case RK1828_PROG_LAYER_ATTN:
		rc = validate_hattn(acc, l, p, o);
		if (!rc && (o->lflags & RK1828_PROG_LF_GATE))
			p->gated = true;
		return rc;
	case RK1828_PROG_LAYER_DELTANET:
		rc = validate_hffn(acc, l, p, o);
		return rc ? rc : ex_validate_dnet(acc, l, p, o);
	default:
		return RK1828_HIF_ST_INVAL;
	}
}

static int validate_io(const struct emu_access *acc, const struct rk1828_program *h,
		       struct ex_prog *p)
{
	uint64_t in_n, out_n;
	float *in;
	int rc;

	if (!mul_ok(p->n_tokens, p->dim, &in_n))
		return RK1828_HIF_ST_INVAL;
	if (p->flags & RK1828_PROG_F_OUTPUT) {
		uint64_t row = p->n_vocab;

		/* F_HIDDEN: the normed rows follow the logits rows. */
		if ((p->flags & RK1828_PROG_F_HIDDEN) && __builtin_add_overflow(row, p->dim, &row))
			return RK1828_HIF_ST_INVAL;
		if (!mul_ok(p->n_out, row, &out_n))
			return RK1828_HIF_ST_INVAL;
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
		return RK1828_HIF_ST_OK;
	}
	return map_f32(acc, le64toh(h->out_addr), out_n, &p->out);
}

/* ---------------------------------------------------------------- compute */

int ex_matmul(struct ex_work *w, const struct ex_tensor *t, const float *x, float *y,
	      size_t rows, size_t k, size_t n_tok)
{
	if (nn_matmul(w->pool, t->type, t->p, x, y, rows, k, n_tok))
		return RK1828_HIF_ST_NOMEM;
	return RK1828_HIF_ST_OK;
}

/*
 * Head @hoff.. of a stored K/V row as floats: in place for F32 caches,
 * else decoded into @row (head_dim floats; @tmp one block of scratch).
 */
static const float *kv_head(const struct ex_prog *p, const uint8_t *kv, size_t hoff,
			    float *row, float *tmp)
{
	if (p->kv_type == QUANT_TYPE_F32)
		return (const float *)kv + hoff;
	rk1828_kv_load(p->kv_type, kv, hoff, p->head_dim, tmp, row);
	return row;
}

/* One (token, head) pair of causal attention per index. */
static void attn_worker(void *arg, size_t b, size_t e, int tid)
{
	struct ex_work *w = arg;
	const struct ex_prog *p = w->p;
	const struct ex_layer *l = w->l;
	size_t group = p->n_heads / p->n_kv_heads, hd = p->head_dim;
	/* Scores, then a decoded head row and a block of scratch. */
	size_t bytes = (p->n_ctx + hd + QUANT_QK) * sizeof(float);
	float *own = NULL;
	float *s = w->pool ? tp_scratch(w->pool, tid, bytes, 1) : (own = malloc(bytes));
	float *row, *tmp;
	size_t i, j;

	if (!s) {
		w->failed = 1;
		return;
	}
	row = s + p->n_ctx;
	tmp = row + hd;
	for (i = b; i < e; i++) {
		size_t t = i / p->n_heads, h = i % p->n_heads;
		const struct ex_tok *tk = &p->toks[t];
		size_t n = tk->pos + 1;
		size_t hoff = (h / group) * hd;
		const uint8_t *kc = l->k_cache + tk->seq * l->kv_stride;
		const uint8_t *vc = l->v_cache + tk->seq * l->kv_stride;
		const float *qh = w->q + t * p->q_dim + h * hd;
		float *o = w->att + t * p->q_dim + h * hd;

		for (j = 0; j < n; j++)
			s[j] = nn_dot(qh, kv_head(p, kc + j * p->kv_row, hoff, row, tmp), hd) *
			       w->scale;
		nn_softmax(s, n);
		memset(o, 0, hd * sizeof(float));
		for (j = 0; j < n; j++)
			nn_axpy(o, s[j], kv_head(p, vc + j * p->kv_row, hoff, row, tmp), hd);
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

/*
 * LF_GATE: the q projection gave [query, gate] per head in w->q (2 q_dim
 * per token); move the gates to w->gate and compact the queries to q_dim
 * per token, in place (every destination lies before its source).
 */
static void split_gate(struct ex_work *w, size_t T)
{
	const struct ex_prog *p = w->p;
	size_t hd = p->head_dim, t, h;

	for (t = 0; t < T; t++) {
		for (h = 0; h < p->n_heads; h++) {
			const float *src = w->q + t * 2 * p->q_dim + 2 * h * hd;

			memcpy(w->gate + t * p->q_dim + h * hd, src + hd, hd * sizeof(float));
			memmove(w->q + t * p->q_dim + h * hd, src, hd * sizeof(float));
		}
	}
}

/* IMROPE: does rotated pair @i turn with the position (ggml's interleaved rule)? */
static bool imrope_uses_pos(const unsigned int *sec, size_t i)
{
	size_t c = i % (sec[0] + sec[1] + sec[2] + sec[3]);

	return (c % 3 == 0 && c < 3 * sec[0]) || (c % 3 == 1 && c < 3 * sec[1]) ||
	       (c % 3 == 2 && c < 3 * sec[2]);
}

/* IMROPE tables of layer @l: as rope_tables(), angle 0 for the fourth section. */
static void imrope_tables(const struct ex_prog *p, const struct ex_layer *l, float *cs,
			  float *sn)
{
	size_t half = p->rope_dim / 2, t, i;

	for (t = 0; t < p->n_tokens; t++) {
		for (i = 0; i < half; i++) {
			double freq = pow((double)p->theta, -2.0 * (double)i / (double)p->rope_dim);
			double a = imrope_uses_pos(l->sections, i) ? (double)p->toks[t].pos * freq : 0;

			cs[t * half + i] = (float)cos(a);
			sn[t * half + i] = (float)sin(a);
		}
	}
}

/* Self-attention of layer @l: x += Wo attn(rmsnorm(x) * attn_norm). */
static int run_attn(struct ex_work *w, const struct ex_layer *l)
{
	const struct ex_prog *p = w->p;
	size_t T = p->n_tokens, t, i;
	bool neox = p->flags & RK1828_PROG_F_ROPE_NEOX, gated = l->lflags & RK1828_PROG_LF_GATE;
	size_t half = p->rope_dim / 2;
	const float *cs = w->rcos, *sn = w->rsin;
	int rc;

	for (t = 0; t < T; t++)
		nn_rmsnorm(w->xb + t * p->dim, w->x + t * p->dim,
			     (const float *)l->attn_norm.p, p->dim, p->eps);
	if ((rc = matmul(w, &l->wq, w->xb, w->q, (gated ? 2 : 1) * p->q_dim, p->dim, T)) ||
	    (rc = matmul(w, &l->wk, w->xb, w->k, p->kv_dim, p->dim, T)) ||
	    (rc = matmul(w, &l->wv, w->xb, w->v, p->kv_dim, p->dim, T)))
		return rc;
	if (gated)
		split_gate(w, T);
	add_bias(w->q, &l->bq, p->q_dim, T);
	add_bias(w->k, &l->bk, p->kv_dim, T);
	add_bias(w->v, &l->bv, p->kv_dim, T);
	head_norm(w->q, &l->q_norm, p->n_heads, p->head_dim, T, p->eps);
	head_norm(w->k, &l->k_norm, p->n_kv_heads, p->head_dim, T, p->eps);
	if (l->lflags & RK1828_PROG_LF_IMROPE) {
		imrope_tables(p, l, w->icos, w->isin);
		cs = w->icos;
		sn = w->isin;
	}
	for (t = 0; t < T; t++) {
		nn_rope(w->q + t * p->q_dim, p->n_heads, p->head_dim, p->rope_dim,
			cs + t * half, sn + t * half, neox);
		nn_rope(w->k + t * p->kv_dim, p->n_kv_heads, p->head_dim, p->rope_dim,
			cs + t * half, sn + t * half, neox);
	}
	/* Every K/V row of the program is written before any attention reads. */
	for (t = 0; t < T; t++) {
		size_t row = p->toks[t].seq * l->kv_stride + p->toks[t].pos * p->kv_row;

		rk1828_kv_store(p->kv_type, w->k + t * p->kv_dim, l->k_cache + row, p->kv_dim);
		rk1828_kv_store(p->kv_type, w->v + t * p->kv_dim, l->v_cache + row, p->kv_dim);
	}

	w->l = l;
	w->failed = 0;
	tp_parallel_for(w->pool, T * p->n_heads, 1, attn_worker, w);
	if (w->failed)
		return RK1828_HIF_ST_NOMEM;
	if (gated)
		for (i = 0; i < T * p->q_dim; i++)
			w->att[i] *= 1.0f / (1.0f + expf(-w->gate[i]));

	rc = matmul(w, &l->wo, w->att, w->xb, p->dim, p->q_dim, T);
	if (rc)
		return rc;
	for (i = 0; i < T * p->dim; i++)
		w->x[i] += w->xb[i];
	return RK1828_HIF_ST_OK;
}

int ex_run_ffn(struct ex_work *w, const struct ex_layer *l)
{
	const struct ex_prog *p = w->p;
	size_t T = p->n_tokens, t, i;
	int rc;

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
	return RK1828_HIF_ST_OK;
}

static int run_layer(struct ex_work *w, const struct ex_layer *l)
{
	int rc = l->kind == RK1828_PROG_LAYER_DELTANET ? ex_run_dnet(w, l) : run_attn(w, l);

	return rc ? rc : ex_run_ffn(w, l);
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
	int rc = RK1828_HIF_ST_OK;

	/*
	 * x, xb, q, k, v, att, hb, hb2 per token, plus the RoPE tables; gated
	 * attention: q holds [query, gate] (2 q_dim) and the gates q_dim more;
	 * hybrid: IMROPE tables.
	 */
	uint64_t qn = (p->gated ? 2 : 1) * (uint64_t)p->q_dim, gn = p->gated ? p->q_dim : 0;
	uint64_t tables = (p->hybrid ? 4 : 2) * half;

	if (__builtin_add_overflow(per_tok, (uint64_t)p->dim + dmax + qn + gn + p->q_dim, &per_tok) ||
	    __builtin_add_overflow(per_tok, 2 * (uint64_t)p->kv_dim, &per_tok) ||
	    __builtin_add_overflow(per_tok, 2 * (uint64_t)p->ffn_dim + tables, &per_tok) ||
	    !mul_ok(per_tok, T, &total) || !mul_ok(total, sizeof(float), &total) ||
	    total > EXEC_MAX_SCRATCH)
		return RK1828_HIF_ST_NOMEM;
	buf = malloc(total);
	if (!buf)
		return RK1828_HIF_ST_NOMEM;
	w.x = buf;
	w.xb = w.x + T * p->dim;
	w.q = w.xb + T * dmax;
	w.gate = w.q + T * qn;
	w.k = w.gate + T * gn;
	w.v = w.k + T * p->kv_dim;
	w.att = w.v + T * p->kv_dim;
	w.hb = w.att + T * p->q_dim;
	w.hb2 = w.hb + T * p->ffn_dim;
	w.rcos = w.hb2 + T * p->ffn_dim;
	w.rsin = w.rcos + T * half;
	w.icos = w.rsin + T * half;
	w.isin = w.icos + (p->hybrid ? T * half : 0);
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
		if (r && (p->flags & RK1828_PROG_F_HIDDEN))
			memcpy(p->out + r * p->n_vocab, w.xb, r * p->dim * sizeof(float));
	} else {
		memcpy(p->out, w.x, T * p->dim * sizeof(float));
	}
out:
	free(buf);
	return rc;
}

/*
 * DELAY: sleep until @ms after the start on CLOCK_MONOTONIC, in slices of
 * at most 1 ms that each end at an absolute time, watching the abort
 * flag. (Relative 1 ms sleeps each overslept by the wake-up latency: a
 * 2 s DELAY took 2.3 s on a loaded host, close to a 3 s job timeout.)
 */
static int run_delay(const struct emu_access *acc, uint32_t ms)
{
	int64_t end = util_now_ns() + (int64_t)ms * 1000000, now;

	while ((now = util_now_ns()) < end) {
		struct timespec ts;

		if (aborted(acc))
			return -1;
		now = end - now > 1000000 ? now + 1000000 : end;
		ts.tv_sec = now / 1000000000;
		ts.tv_nsec = now % 1000000000;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	return aborted(acc) ? -1 : RK1828_HIF_ST_OK;
}

/* Copy the layer records out of card memory and validate each. */
static int validate_layers(const struct emu_access *acc, uint64_t prog_addr, struct ex_prog *p)
{
	size_t rec = p->hybrid ? sizeof(struct rk1828_prog_hlayer) : sizeof(struct rk1828_prog_layer);
	uint8_t *raw;
	size_t i;
	int rc = RK1828_HIF_ST_OK;

	if (!p->n_layers)
		return RK1828_HIF_ST_OK;
	raw = malloc(p->n_layers * rec);
	p->layers = calloc(p->n_layers, sizeof(*p->layers));
	if (!raw || !p->layers) {
		free(raw);
		return RK1828_HIF_ST_NOMEM;
	}
	memcpy(raw, acc->base + prog_addr + sizeof(struct rk1828_program), p->n_layers * rec);
	for (i = 0; !rc && i < p->n_layers; i++) {
		if (p->hybrid)
			rc = validate_hlayer(acc, (const struct rk1828_prog_hlayer *)(raw + i * rec),
					     p, &p->layers[i]);
		else
			rc = validate_layer(acc, (const struct rk1828_prog_layer *)(raw + i * rec),
					    p, &p->layers[i]);
	}
	free(raw);
	return rc;
}

int emu_exec(const struct emu_access *acc, uint64_t prog_addr, uint64_t prog_size)
{
	static const struct emu_exec_opts math = { false, NULL };
	double ns;

	return emu_exec_timed(acc, prog_addr, prog_size, &math, &ns);
}

int emu_exec_timed(const struct emu_access *acc, uint64_t prog_addr, uint64_t prog_size,
		   const struct emu_exec_opts *o, double *model_ns)
{
	struct rk1828_program h;
	struct ex_prog p;
	uint32_t op;
	int rc;

	*model_ns = 0;
	if (prog_size < sizeof(h))
		return RK1828_HIF_ST_INVAL;
	rc = check_range(acc, prog_addr, sizeof(h));
	if (rc)
		return rc;
	memcpy(&h, acc->base + prog_addr, sizeof(h));
	if (le32toh(h.magic) != RK1828_PROG_MAGIC)
		return RK1828_HIF_ST_INVAL;

	op = le32toh(h.op);
	if (op == RK1828_PROG_OP_DELAY) {
		uint64_t size = le32toh(h.size);

		if (size < sizeof(h) || size > prog_size)
			return RK1828_HIF_ST_INVAL;
		return run_delay(acc, le32toh(h.delay_ms));
	}
	if (op != RK1828_PROG_OP_DECODER && op != RK1828_PROG_OP_HYBRID)
		return RK1828_HIF_ST_INVAL;

	memset(&p, 0, sizeof(p));
	p.hybrid = op == RK1828_PROG_OP_HYBRID;
	rc = validate_header(&h, prog_size, &p);
	if (rc)
		return rc;
	rc = check_range(acc, prog_addr, le32toh(h.size));
	if (rc)
		return rc;
	rc = validate_layers(acc, prog_addr, &p);
	if (!rc)
		rc = validate_tokens(acc, &h, &p);
	if (!rc && p.hybrid)
		rc = ex_validate_dnet_tokens(&p);
	if (!rc)
		rc = validate_io(acc, &h, &p);
	if (!rc && o->prof)
		*model_ns = ex_cost_ns(&p, o->prof);
	if (!rc && o->no_math)
		ex_fill_outputs(&p);
	else if (!rc)
		rc = run_program(acc, &p);
	free(p.layers);
	free(p.toks);
	return rc;
}
