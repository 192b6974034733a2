// SPDX-License-Identifier: MIT
/*
 * Host unit test of the emulator's EXEC (emulator/exec.c).
 *
 * Builds a fake card memory (malloc) with a bump allocator and a list of
 * mapped ranges, uploads stories260K's tensors (F32, and F16/Q8_0/Q4_0
 * versions made with quant.c), runs a short prompt through two segment
 * programs (blocks 0-2, then 3-4 + output) in buckets of 1, 4 and 16
 * tokens plus decode steps, and compares the logits with the scalar
 * reference forward (ref_forward.c, run on the very same weights) to
 * 1e-4 relative (max|a-b| / max|b|). Then checks that programs naming
 * unmapped memory fail with RK1828_HIF_ST_ACCESS and malformed ones with
 * RK1828_HIF_ST_INVAL, both without writing anything.
 *
 * Model: $RK1828_MODEL or ../shared/models/stories260K.gguf (run from the
 * repository root).
 */
#include <endian.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "exec.h"
#include "nn.h"
#include "rk1828/program.h"
#include "rk1828/quant_blocks.h"
#include "rk1828_hif.h"

#include "ref_forward.h"
#include "synth_model.h"

#include "tap.h"
#include "rk1828/util.h"

#define TOL 1e-4
#define N_CTX 64
#define N_PROMPT 21
#define N_DECODE 3
#define N_SEQ (N_PROMPT + N_DECODE)
#define SPLIT 3			/* segment 0: blocks [0, SPLIT), segment 1: the rest */
#define MEM_SIZE (16u << 20)
#define PROG_BYTES 4096


/* ------------------------------------------------------------ fake card */

struct map {
	uint64_t addr, len;
};

struct card {
	uint8_t *mem;
	uint64_t size, top;
	struct map maps[1024];
	int n_maps;
	int n_checks;
};

static int card_check(void *priv, uint64_t addr, uint64_t len)
{
	struct card *c = priv;
	int i;

	c->n_checks++;
	for (i = 0; i < c->n_maps; i++)
		if (addr >= c->maps[i].addr && len <= c->maps[i].len &&
		    addr - c->maps[i].addr <= c->maps[i].len - len)
			return 0;
	return -1;
}

/* Allocate @len bytes (64-aligned), mapped into the context when @map. */
static uint64_t card_alloc(struct card *c, uint64_t len, int map)
{
	uint64_t a = (c->top + 63) & ~63ULL;

	if (a + len > c->size || c->n_maps == 1024) {
		fprintf(stderr, "fake card memory exhausted\n");
		exit(2);
	}
	c->top = a + len;
	if (map) {
		c->maps[c->n_maps].addr = a;
		c->maps[c->n_maps].len = len;
		c->n_maps++;
	}
	return a;
}

static struct card *card_new(void)
{
	struct card *c = calloc(1, sizeof(*c));

	c->size = MEM_SIZE;
	c->mem = aligned_alloc(4096, MEM_SIZE);
	if (!c->mem) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	memset(c->mem, 0, MEM_SIZE);
	c->top = 4096;		/* address 0 means "absent" in programs */
	return c;
}

static void card_free(struct card *c)
{
	free(c->mem);
	free(c);
}

static struct emu_access card_access(struct card *c, volatile int *abort_flag)
{
	struct emu_access a = {
		.base = c->mem, .mem_size = c->size, .check = card_check, .priv = c,
		.abort = abort_flag,
	};
	return a;
}

/* --------------------------------------------------------- model upload */

struct dev_model {
	struct card *c;
	const struct ref_config *cfg;
	struct rk1828_prog_layer *layers;
	struct rk1828_prog_tensor output_norm, output;
	uint64_t in, hid, logits, prog[2];
	uint64_t kv_bytes;
};

static struct rk1828_prog_tensor upload(struct card *c, const struct ref_tensor *t)
{
	struct rk1828_prog_tensor h = { 0 };
	uint64_t a;

	if (!t->data)
		return h;
	a = card_alloc(c, t->nbytes, 1);
	memcpy(c->mem + a, t->data, t->nbytes);
	h.addr = htole64(a);
	h.type = htole32((uint32_t)t->type);
	return h;
}

static struct dev_model *dev_upload(struct card *c, const struct ref_model *m)
{
	struct dev_model *d = calloc(1, sizeof(*d));
	const struct ref_config *cfg = &m->c;
	int i;

	d->c = c;
	d->cfg = cfg;
	d->layers = calloc((size_t)cfg->n_layers, sizeof(*d->layers));
	d->kv_bytes = (uint64_t)N_CTX * cfg->n_kv_heads * cfg->head_dim * sizeof(float);
	for (i = 0; i < cfg->n_layers; i++) {
		const struct ref_layer *r = &m->layers[i];
		struct rk1828_prog_layer *l = &d->layers[i];

		l->attn_norm = upload(c, &r->attn_norm);
		l->wq = upload(c, &r->wq);
		l->wk = upload(c, &r->wk);
		l->wv = upload(c, &r->wv);
		l->wo = upload(c, &r->wo);
		l->bq = upload(c, &r->bq);
		l->bk = upload(c, &r->bk);
		l->bv = upload(c, &r->bv);
		l->q_norm = upload(c, &r->q_norm);
		l->k_norm = upload(c, &r->k_norm);
		l->ffn_norm = upload(c, &r->ffn_norm);
		l->ffn_gate = upload(c, &r->ffn_gate);
		l->ffn_up = upload(c, &r->ffn_up);
		l->ffn_down = upload(c, &r->ffn_down);
		l->k_cache = htole64(card_alloc(c, d->kv_bytes, 1));
		l->v_cache = htole64(card_alloc(c, d->kv_bytes, 1));
	}
	d->output_norm = upload(c, &m->output_norm);
	d->output = upload(c, &m->output);
	d->in = card_alloc(c, (uint64_t)N_CTX * cfg->dim * sizeof(float), 1);
	d->hid = card_alloc(c, (uint64_t)N_CTX * cfg->dim * sizeof(float), 1);
	d->logits = card_alloc(c, (uint64_t)N_CTX * cfg->n_vocab * sizeof(float), 1);
	d->prog[0] = card_alloc(c, PROG_BYTES, 1);
	d->prog[1] = card_alloc(c, PROG_BYTES, 1);
	return d;
}

static void dev_free(struct dev_model *d)
{
	free(d->layers);
	free(d);
}

static void dev_reset_kv(struct dev_model *d)
{
	int i;

	for (i = 0; i < d->cfg->n_layers; i++) {
		memset(d->c->mem + le64toh(d->layers[i].k_cache), 0, d->kv_bytes);
		memset(d->c->mem + le64toh(d->layers[i].v_cache), 0, d->kv_bytes);
	}
}

/*
 * Fill a program for blocks [first, first + n) into host memory @p
 * (at least PROG_BYTES); returns its size.
 */
static uint32_t make_prog(const struct dev_model *d, void *p, int first, int n,
			  uint32_t n_tok, uint32_t pos, uint32_t flags,
			  uint64_t in, uint64_t out)
{
	struct rk1828_program *h = p;
	const struct ref_config *c = d->cfg;
	uint32_t size = (uint32_t)(sizeof(*h) + (size_t)n * sizeof(struct rk1828_prog_layer));

	memset(p, 0, PROG_BYTES);
	h->magic = htole32(RK1828_PROG_MAGIC);
	h->op = htole32(RK1828_PROG_OP_DECODER);
	h->size = htole32(size);
	h->n_layers = htole32((uint32_t)n);
	h->first_layer = htole32((uint32_t)first);
	h->n_tokens = htole32(n_tok);
	h->pos = htole32(pos);
	h->flags = htole32(flags | (c->neox ? RK1828_PROG_F_ROPE_NEOX : 0));
	h->dim = htole32((uint32_t)c->dim);
	h->n_heads = htole32((uint32_t)c->n_heads);
	h->n_kv_heads = htole32((uint32_t)c->n_kv_heads);
	h->head_dim = htole32((uint32_t)c->head_dim);
	h->ffn_dim = htole32((uint32_t)c->ffn_dim);
	h->n_ctx = htole32(N_CTX);
	h->rope_dim = htole32((uint32_t)c->rope_dim);
	h->n_vocab = htole32((uint32_t)c->n_vocab);
	h->rms_eps = htole32(util_f32_bits(c->eps));
	h->rope_theta = htole32(util_f32_bits(c->theta));
	h->in_addr = htole64(in);
	h->out_addr = htole64(out);
	if (flags & RK1828_PROG_F_OUTPUT) {
		h->output_norm = d->output_norm;
		h->output = d->output;
	}
	memcpy(h + 1, &d->layers[first], (size_t)n * sizeof(struct rk1828_prog_layer));
	return size;
}

static int exec_host_prog(struct dev_model *d, int slot, const void *p, uint32_t size,
			  volatile int *abort_flag)
{
	struct emu_access a = card_access(d->c, abort_flag);

	memcpy(d->c->mem + d->prog[slot], p, size);
	return emu_exec(&a, d->prog[slot], PROG_BYTES);
}

static double rel_diff(const float *a, const float *b, size_t n)
{
	double md = 0, mb = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		double e = fabs((double)a[i] - b[i]);

		if (!(e <= md))
			md = isnan(e) ? INFINITY : e;
		if (fabs(b[i]) > mb)
			mb = fabs(b[i]);
	}
	return mb > 0 ? md / mb : md;
}

/*
 * Run tokens [start, start + n) of @toks through both segments in buckets
 * of @bucket; after each bucket the logits of its last token (or of all
 * tokens with @all) are in d->logits. Returns the first non-OK status.
 */
static int run_tokens(struct dev_model *d, const struct ref_model *m, const int *toks,
		      int start, int n, int bucket, int all)
{
	static uint8_t prog[PROG_BYTES];
	const struct ref_config *c = d->cfg;
	uint32_t flags = RK1828_PROG_F_OUTPUT | (all ? RK1828_PROG_F_ALL_LOGITS : 0);
	int done = 0, t, rc;

	while (done < n) {
		int b = n - done < bucket ? n - done : bucket;
		uint32_t pos = (uint32_t)(start + done), sz;

		for (t = 0; t < b; t++)
			ref_embed(m, toks[start + done + t],
				  (float *)(d->c->mem + d->in) + (size_t)t * c->dim);
		sz = make_prog(d, prog, 0, SPLIT, (uint32_t)b, pos, 0, d->in, d->hid);
		rc = exec_host_prog(d, 0, prog, sz, NULL);
		if (rc)
			return rc;
		sz = make_prog(d, prog, SPLIT, c->n_layers - SPLIT, (uint32_t)b, pos, flags,
			       d->hid, d->logits);
		rc = exec_host_prog(d, 1, prog, sz, NULL);
		if (rc)
			return rc;
		done += b;
	}
	return 0;
}

/* ------------------------------------------------------- numeric checks */

/* Reference logits after every token of toks[0..N_SEQ). */
static float *ref_all_logits(struct ref_model *m, const int *toks)
{
	float *lg = malloc(sizeof(float) * (size_t)N_SEQ * m->c.n_vocab);
	int i;

	for (i = 0; i < N_SEQ; i++)
		if (ref_forward(m, toks[i], i, lg + (size_t)i * m->c.n_vocab))
			return NULL;
	return lg;
}

static void check_model(struct ref_model *m, const char *label, const int *toks)
{
	static const int buckets[] = { 1, 4, 16 };
	struct card *c = card_new();
	struct dev_model *d = dev_upload(c, m);
	float *ref = ref_all_logits(m, toks);
	size_t V = (size_t)m->c.n_vocab, bi;
	const float *out = (const float *)(c->mem + d->logits);
	int i, rc;

	tap_ok(ref != NULL, "%s: reference forward runs", label);
	if (!ref)
		goto out;
	for (bi = 0; bi < sizeof(buckets) / sizeof(buckets[0]); bi++) {
		double worst = 0, r;

		dev_reset_kv(d);
		rc = run_tokens(d, m, toks, 0, N_PROMPT, buckets[bi], 0);
		r = rc ? INFINITY : rel_diff(out, ref + (N_PROMPT - 1) * V, V);
		tap_ok(rc == 0 && r <= TOL, "%s: prompt of %d in buckets of %d: rc %d, rel %.3g",
		   label, N_PROMPT, buckets[bi], rc, r);
		for (i = N_PROMPT; i < N_SEQ && rc == 0; i++) {
			rc = run_tokens(d, m, toks, i, 1, 1, 0);
			r = rc ? INFINITY : rel_diff(out, ref + (size_t)i * V, V);
			if (r > worst)
				worst = r;
		}
		tap_ok(rc == 0 && worst <= TOL, "%s: %d decode steps after bucket %d: rc %d, rel %.3g",
		   label, N_DECODE, buckets[bi], rc, worst);
	}
	/* All logits of one 16-token bucket at pos 4 (after a 4-token bucket). */
	{
		double worst = 0;

		dev_reset_kv(d);
		rc = run_tokens(d, m, toks, 0, 4, 4, 0);
		if (!rc)
			rc = run_tokens(d, m, toks, 4, 16, 16, 1);
		for (i = 0; i < 16 && !rc; i++) {
			double r = rel_diff(out + (size_t)i * V, ref + (size_t)(4 + i) * V, V);

			if (r > worst)
				worst = r;
		}
		tap_ok(rc == 0 && worst <= TOL, "%s: F_ALL_LOGITS, 16 tokens at pos 4: rc %d, rel %.3g",
		   label, rc, worst);
	}
out:
	free(ref);
	dev_free(d);
	card_free(c);
}


/* ------------------------------------------------ micro-batches (1.1) */

#define B_SEQ 3
#define B_STRIDE_PAD 256	/* bytes between sequence blocks: not dense */

/* Turn the 1.0 program at @p into an F_BATCH one over @n entries of @tt. */
static void make_batch(struct dev_model *d, void *p, uint64_t tok_addr,
		       const struct rk1828_prog_token *tt, uint32_t n, uint32_t n_seq,
		       uint64_t stride)
{
	struct rk1828_program *h = p;

	h->flags = htole32(le32toh(h->flags) | RK1828_PROG_F_BATCH);
	h->pos = 0;
	h->tok_addr = htole64(tok_addr);
	h->kv_seq_stride = htole64(stride);
	h->n_seq = htole32(n_seq);
	memcpy(d->c->mem + tok_addr, tt, (size_t)n * sizeof(*tt));
}

/* One micro-batch through both segments; logits rows land in d->logits. */
static int run_batch(struct dev_model *d, const struct ref_model *m, uint64_t tok_addr,
		     const struct rk1828_prog_token *tt, const int *tok, uint32_t n,
		     uint64_t stride)
{
	static uint8_t prog[PROG_BYTES];
	const struct ref_config *c = d->cfg;
	uint32_t t, sz;
	int rc;

	for (t = 0; t < n; t++)
		ref_embed(m, tok[t], (float *)(d->c->mem + d->in) + (size_t)t * c->dim);
	sz = make_prog(d, prog, 0, SPLIT, n, 0, 0, d->in, d->hid);
	make_batch(d, prog, tok_addr, tt, n, B_SEQ, stride);
	rc = exec_host_prog(d, 0, prog, sz, NULL);
	if (rc)
		return rc;
	sz = make_prog(d, prog, SPLIT, c->n_layers - SPLIT, n, 0, RK1828_PROG_F_OUTPUT,
		       d->hid, d->logits);
	make_batch(d, prog, tok_addr, tt, n, B_SEQ, stride);
	return exec_host_prog(d, 1, prog, sz, NULL);
}

/*
 * Three sequences share micro-batches (prefill chunks, decode tokens in
 * shuffled order, a chunk without logits) in one KV region of 3 blocks;
 * every logits row must equal bit for bit the one of the same sequence run
 * alone, token by token, with version 1.0 programs.
 */
static void check_batch(struct ref_model *m, const int *toks)
{
	/* (seq, pos) of each step's tokens; sequence s uses toks[7 * s + pos]. */
	static const struct { int n; int seq[8]; int pos[8]; int lg[8]; } steps[] = {
		{ 8, { 0, 0, 0, 0, 0, 1, 1, 2 }, { 0, 1, 2, 3, 4, 0, 1, 0 },
		     { 0, 0, 0, 0, 1, 0, 1, 1 } },
		{ 3, { 2, 0, 1 }, { 1, 5, 2 }, { 1, 1, 1 } },
		{ 6, { 0, 1, 1, 1, 1, 2 }, { 6, 3, 4, 5, 6, 2 }, { 1, 0, 0, 0, 0, 1 } },
		{ 2, { 1, 2 }, { 7, 3 }, { 1, 1 } },
	};
	const struct ref_config *cfg = &m->c;
	size_t V = (size_t)cfg->n_vocab;
	struct card *c = card_new();
	struct dev_model *d = dev_upload(c, m), *alone[B_SEQ];
	uint64_t stride = d->kv_bytes + B_STRIDE_PAD, tok_addr;
	float *solo[B_SEQ];
	int s, i, k, rc = 0, same = 1, rows = 0;

	/* Solo runs: 8 tokens per sequence, one token per 1.0 program. */
	for (s = 0; s < B_SEQ; s++) {
		alone[s] = dev_upload(c, m);
		solo[s] = malloc(8 * V * sizeof(float));
		for (i = 0; i < 8 && !rc; i++) {
			rc = run_tokens(alone[s], m, toks + 7 * s, i, 1, 1, 0);
			memcpy(solo[s] + i * V, c->mem + alone[s]->logits, V * sizeof(float));
		}
	}
	/* The batched device: K/V caches of B_SEQ blocks, stride not dense. */
	for (i = 0; i < cfg->n_layers; i++) {
		d->layers[i].k_cache = htole64(card_alloc(c, B_SEQ * stride, 1));
		d->layers[i].v_cache = htole64(card_alloc(c, B_SEQ * stride, 1));
	}
	tok_addr = card_alloc(c, 8 * sizeof(struct rk1828_prog_token), 1);
	for (k = 0; k < (int)(sizeof(steps) / sizeof(steps[0])) && !rc; k++) {
		struct rk1828_prog_token tt[8] = { 0 };
		int tok[8], r = 0;

		for (i = 0; i < steps[k].n; i++) {
			tt[i].pos = htole32((uint32_t)steps[k].pos[i]);
			tt[i].seq = htole32((uint32_t)steps[k].seq[i]);
			tt[i].flags = htole32(steps[k].lg[i] ? RK1828_PROG_TOK_LOGITS : 0);
			tok[i] = toks[7 * steps[k].seq[i] + steps[k].pos[i]];
		}
		rc = run_batch(d, m, tok_addr, tt, tok, (uint32_t)steps[k].n, stride);
		for (i = 0; i < steps[k].n && !rc; i++) {
			if (!steps[k].lg[i])
				continue;
			same &= !memcmp(c->mem + d->logits + r * V * sizeof(float),
					solo[steps[k].seq[i]] + (size_t)steps[k].pos[i] * V,
					V * sizeof(float));
			r++;
			rows++;
		}
	}
	tap_ok(rc == 0 && same && rows == 10,
	       "batch: 3 sequences in 4 micro-batches: %d logits rows equal the solo runs bit for bit (rc %d)",
	       rows, rc);

	/* A micro-batch with no logits row leaves out_addr alone. */
	if (!rc) {
		struct rk1828_prog_token tt[1] = { { htole32(8), htole32(0), 0, 0 } };
		int tok[1] = { toks[8] };

		memset(c->mem + d->logits, 0x77, 64);
		rc = run_batch(d, m, tok_addr, tt, tok, 1, stride);
		tap_ok(rc == 0 && c->mem[d->logits] == 0x77 && c->mem[d->logits + 63] == 0x77,
		       "batch: no token wants logits: OK and the logits buffer untouched (rc %d)", rc);
	}
	for (s = 0; s < B_SEQ; s++) {
		free(solo[s]);
		dev_free(alone[s]);
	}
	dev_free(d);
	card_free(c);
}

/* ------------------------------------------------------ rejection tests */

struct neg_env {
	struct card *c;
	struct dev_model *d;
	uint8_t *snap;		/* copy of card memory before the call */
	uint8_t prog[PROG_BYTES];
	uint32_t size;
	uint64_t hole;		/* unmapped allocation */
};

static void neg_prog(struct neg_env *e, uint32_t flags)
{
	e->size = make_prog(e->d, e->prog, SPLIT, e->d->cfg->n_layers - SPLIT, 4, 2,
			    flags, e->d->hid, e->d->logits);
}

static struct rk1828_program *H(struct neg_env *e)
{
	return (struct rk1828_program *)e->prog;
}

static struct rk1828_prog_layer *L(struct neg_env *e, int i)
{
	return (struct rk1828_prog_layer *)(e->prog + sizeof(struct rk1828_program)) + i;
}

/* Run the program in e->prog; expect @want and no byte of card memory changed. */
static void neg_run(struct neg_env *e, int want, const char *what)
{
	struct emu_access a = card_access(e->c, NULL);
	int rc, same;

	memcpy(e->c->mem + e->d->prog[1], e->prog, PROG_BYTES);
	memcpy(e->snap, e->c->mem, MEM_SIZE);
	rc = emu_exec(&a, e->d->prog[1], PROG_BYTES);
	same = memcmp(e->snap, e->c->mem, MEM_SIZE) == 0;
	tap_ok(rc == want && same, "%s -> %s (rc %d, memory %s)", what,
	   want == RK1828_HIF_ST_ACCESS ? "ACCESS" : "INVAL", rc, same ? "untouched" : "CHANGED");
}

static void check_rejections(struct ref_model *m)
{
	struct neg_env e = { 0 };
	struct emu_access a;
	uint64_t hole;
	int rc;

	e.c = card_new();
	e.d = dev_upload(e.c, m);
	e.hole = hole = card_alloc(e.c, 1 << 16, 0);
	e.snap = malloc(MEM_SIZE);
	/* Make hidden/logits/KV memory non-zero so "untouched" means something. */
	memset(e.c->mem + e.d->hid, 0x3c, (size_t)N_CTX * m->c.dim * sizeof(float));
	memset(e.c->mem + e.d->logits, 0x5a, 4096);

	/* Sanity: the unmodified program succeeds. */
	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	memcpy(e.c->mem + e.d->prog[1], e.prog, PROG_BYTES);
	a = card_access(e.c, NULL);
	rc = emu_exec(&a, e.d->prog[1], PROG_BYTES);
	tap_ok(rc == RK1828_HIF_ST_OK, "baseline program runs (rc %d)", rc);

	/* ---- micro-batches (1.1): token table, sequences, stride */
	{
		uint64_t ta = card_alloc(e.c, 4 * sizeof(struct rk1828_prog_token), 1);
		struct rk1828_prog_token tt[4];
		uint64_t kvb = e.d->kv_bytes;

#define BATCH(n_seq, stride) do {						\
		neg_prog(&e, RK1828_PROG_F_OUTPUT);				\
		for (int t_ = 0; t_ < 4; t_++)					\
			tt[t_] = (struct rk1828_prog_token){ htole32(2 + t_), 0,	\
				t_ == 3 ? htole32(RK1828_PROG_TOK_LOGITS) : 0, 0 }; \
		make_batch(e.d, e.prog, ta, tt, 4, n_seq, stride);		\
	} while (0)
#define TT(i) ((struct rk1828_prog_token *)(e.c->mem + ta) + (i))
		BATCH(1, kvb);
		memcpy(e.c->mem + e.d->prog[1], e.prog, PROG_BYTES);
		a = card_access(e.c, NULL);
		rc = emu_exec(&a, e.d->prog[1], PROG_BYTES);
		tap_ok(rc == RK1828_HIF_ST_OK, "batch baseline (1 sequence) runs (rc %d)", rc);

		BATCH(1, kvb);
		TT(2)->pos = htole32(3);
		neg_run(&e, RK1828_HIF_ST_INVAL, "batch: two tokens at the same (seq, pos)");
		BATCH(1, kvb);
		TT(1)->seq = htole32(1);
		neg_run(&e, RK1828_HIF_ST_INVAL, "batch: seq >= n_seq");
		BATCH(1, kvb);
		TT(0)->pos = htole32(N_CTX);
		neg_run(&e, RK1828_HIF_ST_INVAL, "batch: pos >= n_ctx");
		BATCH(1, kvb);
		TT(0)->flags = htole32(2);
		neg_run(&e, RK1828_HIF_ST_INVAL, "batch: token flag SNAPSHOT outside a hybrid program");
		BATCH(1, kvb);
		TT(3)->aux = htole32(1);
		neg_run(&e, RK1828_HIF_ST_INVAL, "batch: non-zero token aux without SNAPSHOT or RESTORE");
		BATCH(1, kvb - 4);
		neg_run(&e, RK1828_HIF_ST_INVAL, "batch: KV stride below one block");
		BATCH(1, kvb + 2);
		neg_run(&e, RK1828_HIF_ST_INVAL, "batch: KV stride not a multiple of 4");
		BATCH(0, kvb);
		neg_run(&e, RK1828_HIF_ST_INVAL, "batch: n_seq 0");
		BATCH(1, kvb);
		H(&e)->pos = htole32(2);
		neg_run(&e, RK1828_HIF_ST_INVAL, "batch: header pos not 0");
		BATCH(1, kvb);
		H(&e)->flags |= htole32(RK1828_PROG_F_ALL_LOGITS);
		neg_run(&e, RK1828_HIF_ST_INVAL, "batch: F_ALL_LOGITS with F_BATCH");
		BATCH(1, kvb);
		H(&e)->tok_addr = 0;
		neg_run(&e, RK1828_HIF_ST_INVAL, "batch: no token table");
		BATCH(1, kvb);
		H(&e)->tok_addr = htole64(hole);
		neg_run(&e, RK1828_HIF_ST_ACCESS, "batch: token table in unmapped memory");
		BATCH(2, kvb);
		neg_run(&e, RK1828_HIF_ST_ACCESS, "batch: n_seq blocks run past the KV mapping");
		neg_prog(&e, RK1828_PROG_F_OUTPUT);
		H(&e)->n_seq = htole32(1);
		neg_run(&e, RK1828_HIF_ST_INVAL, "1.0 program with a 1.1 field set (n_seq)");
		neg_prog(&e, RK1828_PROG_F_OUTPUT);
		H(&e)->tok_addr = htole64(ta);
		neg_run(&e, RK1828_HIF_ST_INVAL, "1.0 program with a token table address");
#undef TT
#undef BATCH
	}

	/* ---- ACCESS: addresses outside the mappings */
	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	L(&e, 1)->wq.addr = htole64(hole);
	neg_run(&e, RK1828_HIF_ST_ACCESS, "wq of layer 2 in unmapped memory");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	L(&e, 0)->ffn_down.addr = htole64(le64toh(L(&e, 0)->ffn_down.addr) + 64);
	neg_run(&e, RK1828_HIF_ST_ACCESS, "ffn_down running past the end of its mapping");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	L(&e, 0)->v_cache = htole64(hole);
	neg_run(&e, RK1828_HIF_ST_ACCESS, "v_cache in unmapped memory");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->in_addr = htole64(hole);
	neg_run(&e, RK1828_HIF_ST_ACCESS, "in_addr in unmapped memory");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->out_addr = htole64(hole);
	neg_run(&e, RK1828_HIF_ST_ACCESS, "out_addr in unmapped memory");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->output.addr = htole64(MEM_SIZE - 64);
	neg_run(&e, RK1828_HIF_ST_ACCESS, "LM head past the end of card memory");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	L(&e, 1)->attn_norm.addr = htole64(UINT64_MAX - 255);
	neg_run(&e, RK1828_HIF_ST_ACCESS, "address that wraps around 2^64");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	{
		a = card_access(e.c, NULL);
		memcpy(e.c->mem + hole, e.prog, PROG_BYTES);
		memcpy(e.snap, e.c->mem, MEM_SIZE);
		rc = emu_exec(&a, hole, PROG_BYTES);
		tap_ok(rc == RK1828_HIF_ST_ACCESS && !memcmp(e.snap, e.c->mem, MEM_SIZE),
		   "program itself in unmapped memory -> ACCESS (rc %d)", rc);
		rc = emu_exec(&a, MEM_SIZE - 16, PROG_BYTES);
		tap_ok(rc == RK1828_HIF_ST_ACCESS, "program beyond card memory -> ACCESS (rc %d)", rc);
	}

	/* ---- INVAL: malformed programs */
	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->magic ^= htole32(1);
	neg_run(&e, RK1828_HIF_ST_INVAL, "bad magic");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->op = htole32(7);
	neg_run(&e, RK1828_HIF_ST_INVAL, "unknown op");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->size = htole32(le32toh(H(&e)->size) - 8);
	neg_run(&e, RK1828_HIF_ST_INVAL, "size != header + n_layers * layer");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->n_layers = htole32(100);
	H(&e)->size = htole32(sizeof(struct rk1828_program) +
			      100 * sizeof(struct rk1828_prog_layer));
	neg_run(&e, RK1828_HIF_ST_INVAL, "size larger than the EXEC byte count");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->n_kv_heads = htole32(3);
	neg_run(&e, RK1828_HIF_ST_INVAL, "n_heads not a multiple of n_kv_heads");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->rope_dim = htole32(7);
	neg_run(&e, RK1828_HIF_ST_INVAL, "odd rope_dim");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->rope_dim = htole32((uint32_t)m->c.head_dim + 2);
	neg_run(&e, RK1828_HIF_ST_INVAL, "rope_dim > head_dim");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->pos = htole32(N_CTX - 3);
	neg_run(&e, RK1828_HIF_ST_INVAL, "pos + n_tokens > n_ctx");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->n_tokens = 0;
	neg_run(&e, RK1828_HIF_ST_INVAL, "n_tokens 0");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->dim = 0;
	neg_run(&e, RK1828_HIF_ST_INVAL, "dim 0");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	L(&e, 0)->wk.type = htole32(4);
	neg_run(&e, RK1828_HIF_ST_INVAL, "unsupported tensor type 4 (removed from ggml)");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	L(&e, 0)->ffn_down.type = htole32(QUANT_TYPE_Q4_0);
	neg_run(&e, RK1828_HIF_ST_INVAL, "Q4_0 ffn_down with rows of 172 (not a multiple of 32)");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	L(&e, 0)->attn_norm.type = htole32(QUANT_TYPE_F16);
	neg_run(&e, RK1828_HIF_ST_INVAL, "F16 norm weight");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	L(&e, 1)->wo.addr = 0;
	neg_run(&e, RK1828_HIF_ST_INVAL, "required tensor absent (addr 0)");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	L(&e, 1)->k_cache = 0;
	neg_run(&e, RK1828_HIF_ST_INVAL, "k_cache absent");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	L(&e, 0)->wv.addr = htole64(le64toh(L(&e, 0)->wv.addr) + 2);
	neg_run(&e, RK1828_HIF_ST_INVAL, "misaligned F32 tensor");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	L(&e, 0)->wv.pad = htole32(1);
	neg_run(&e, RK1828_HIF_ST_INVAL, "non-zero tensor pad");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->reserved = htole32(1);
	neg_run(&e, RK1828_HIF_ST_INVAL, "non-zero reserved");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->kv_type = htole32(QUANT_TYPE_Q4_1);
	neg_run(&e, RK1828_HIF_ST_INVAL, "kv_type Q4_1 (not a K/V type)");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->kv_type = htole32(99);
	neg_run(&e, RK1828_HIF_ST_INVAL, "unknown kv_type 99");

	neg_prog(&e, RK1828_PROG_F_OUTPUT | (1u << 9));
	neg_run(&e, RK1828_HIF_ST_INVAL, "unknown flag");

	neg_prog(&e, RK1828_PROG_F_ALL_LOGITS);
	H(&e)->out_addr = htole64(e.d->hid);
	neg_run(&e, RK1828_HIF_ST_INVAL, "F_ALL_LOGITS without F_OUTPUT");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->rms_eps = htole32(0x7fc00000);
	neg_run(&e, RK1828_HIF_ST_INVAL, "NaN rms_eps");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->rope_theta = 0;
	neg_run(&e, RK1828_HIF_ST_INVAL, "rope_theta 0");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->n_vocab = 0;
	neg_run(&e, RK1828_HIF_ST_INVAL, "n_vocab 0 with F_OUTPUT");

	neg_prog(&e, RK1828_PROG_F_OUTPUT);
	H(&e)->n_layers = 0;
	H(&e)->size = htole32(sizeof(struct rk1828_program));
	H(&e)->flags = 0;
	neg_run(&e, RK1828_HIF_ST_INVAL, "no layers and no output");

	/* EXEC byte count smaller than the header. */
	{
		a = card_access(e.c, NULL);
		rc = emu_exec(&a, e.d->prog[1], 100);
		tap_ok(rc == RK1828_HIF_ST_INVAL, "EXEC size below the header -> INVAL (rc %d)", rc);
	}

	/* ---- DELAY and abort */
	{
		volatile int stop = 0;

		memset(e.prog, 0, sizeof(e.prog));
		H(&e)->magic = htole32(RK1828_PROG_MAGIC);
		H(&e)->op = htole32(RK1828_PROG_OP_DELAY);
		H(&e)->size = htole32(sizeof(struct rk1828_program));
		H(&e)->delay_ms = htole32(3);
		memcpy(e.c->mem + e.d->prog[1], e.prog, PROG_BYTES);
		a = card_access(e.c, &stop);
		rc = emu_exec(&a, e.d->prog[1], PROG_BYTES);
		tap_ok(rc == RK1828_HIF_ST_OK, "DELAY 3 ms succeeds (rc %d)", rc);
		stop = 1;
		H(&e)->delay_ms = htole32(100000);
		memcpy(e.c->mem + e.d->prog[1], e.prog, PROG_BYTES);
		rc = emu_exec(&a, e.d->prog[1], PROG_BYTES);
		tap_ok(rc == -1, "DELAY with abort set returns -1 at once (rc %d)", rc);

		neg_prog(&e, RK1828_PROG_F_OUTPUT);
		memcpy(e.c->mem + e.d->prog[1], e.prog, PROG_BYTES);
		rc = emu_exec(&a, e.d->prog[1], PROG_BYTES);
		tap_ok(rc == -1, "decoder program with abort set returns -1 (rc %d)", rc);
	}

	free(e.snap);
	dev_free(e.d);
	card_free(e.c);
}

/* ------------------------------------------------- synthetic qwen model */

/*
 * Write a random qwen3-style model with qwen2 biases too: 3 blocks, dim 64,
 * 4 heads of 32 (q_dim 128 != dim), 2 KV heads, partial NEOX RoPE (16 of
 * 32 dims), FFN 96, vocab 100, all F32. With SPLIT 3 the second segment
 * is output only. Returns 0 and the path in @path.
 */
static int write_synth(char *path, size_t len)
{
	struct synth_model s = {
		.arch = "qwen3", .n_layers = 3, .dim = 64, .ffn = 96, .n_heads = 4,
		.n_kv_heads = 2, .head_dim = 32, .rope_dim = 16, .n_ctx = 256,
		.n_vocab = 100, .rope_theta = 1000000.0f, .rms_eps = 1e-6f,
		.biases = true, .qk_norm = true, .fill = SYNTH_RANDOM, .seed = 7,
		.t = {
			[SYNTH_EMBD] = { QUANT_TYPE_F32, 0, 1 },
			[SYNTH_ATTN_NORM] = { QUANT_TYPE_F32, 1, 0.2f },
			[SYNTH_Q] = { QUANT_TYPE_F32, 0, 0.25f },
			[SYNTH_K] = { QUANT_TYPE_F32, 0, 0.25f },
			[SYNTH_V] = { QUANT_TYPE_F32, 0, 0.25f },
			[SYNTH_O] = { QUANT_TYPE_F32, 0, 0.2f },
			[SYNTH_BIAS] = { QUANT_TYPE_F32, 0, 0.5f },
			[SYNTH_QK_NORM] = { QUANT_TYPE_F32, 1, 0.3f },
			[SYNTH_FFN_NORM] = { QUANT_TYPE_F32, 1, 0.2f },
			[SYNTH_GATE] = { QUANT_TYPE_F32, 0, 0.25f },
			[SYNTH_UP] = { QUANT_TYPE_F32, 0, 0.25f },
			[SYNTH_DOWN] = { QUANT_TYPE_F32, 0, 0.2f },
			[SYNTH_OUT_NORM] = { QUANT_TYPE_F32, 1, 0.2f },
			[SYNTH_OUTPUT] = { QUANT_TYPE_F32, 0, 0.3f },
		},
	};

	if (len < 32)
		return -1;
	return synth_model_tmp(&s, path, NULL, 0);
}

static void check_synth(const int *toks)
{
	char path[64], err[512];
	struct ref_model *m;
	int t[N_SEQ], i;

	if (write_synth(path, sizeof(path))) {
		tap_ok(0, "write the synthetic qwen3 GGUF");
		return;
	}
	m = ref_load(path, N_CTX, err, sizeof(err));
	tap_ok(m && m->c.neox && m->c.head_dim == 32 && m->layers[0].bq.data &&
	   m->layers[2].k_norm.data, "synthetic qwen3 (biases, q/k norm, NEOX) loads%s%s",
	   m ? "" : ": ", m ? "" : err);
	if (m) {
		for (i = 0; i < N_SEQ; i++)
			t[i] = toks[i] % m->c.n_vocab;
		check_model(m, "qwen3 f32", t);
		tap_ok(ref_quantize(m, QUANT_TYPE_Q4_0) == 22, "qwen3: 22 tensors to q4_0");
		check_model(m, "qwen3 q4_0", t);
	}
	ref_free(m);
	unlink(path);
}

int main(void)
{
	const char *path = getenv("RK1828_MODEL");
	static const struct {
		int type;
		const char *name;
	} variants[] = {
		{ QUANT_TYPE_F16, "f16" },
		{ QUANT_TYPE_Q8_0, "q8_0" },
		{ QUANT_TYPE_Q4_0, "q4_0" },
	};
	int toks[N_SEQ];
	struct ref_model *m;
	char err[512];
	size_t i;
	uint32_t s = 12345;

	if (!path)
		path = "../shared/models/stories260K.gguf";
	m = ref_load(path, N_CTX, err, sizeof(err));
	tap_ok(m != NULL, "load %s%s%s", path, m ? "" : ": ", m ? "" : err);
	if (!m)
		goto done;
	toks[0] = 1;	/* BOS, then a fixed pseudo-random sequence */
	for (i = 1; i < N_SEQ; i++) {
		s = s * 1103515245u + 12345u;
		toks[i] = 3 + (int)((s >> 8) % (uint32_t)(m->c.n_vocab - 3));
	}

	emu_exec_set_threads(3);	/* odd: rows do not split evenly */
	check_model(m, nn_isa() == NN_ISA_AVX2 ? "f32 avx2" : "f32", toks);
	if (nn_isa() == NN_ISA_AVX2) {
		nn_set_isa(NN_ISA_SCALAR);
		check_model(m, "f32 scalar", toks);
		nn_set_isa(NN_ISA_AVX2);
	}
	emu_exec_set_threads(1);
	check_model(m, "f32 1 thread", toks);
	emu_exec_set_threads(2);
	check_rejections(m);
	check_batch(m, toks);

	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		struct ref_model *q = ref_load(path, N_CTX, err, sizeof(err));
		int n = q ? ref_quantize(q, variants[i].type) : -1;

		/* 5 blocks x 6 quantizable matrices + LM head (ffn_down: 172 columns). */
		tap_ok(n == (variants[i].type == QUANT_TYPE_F16 ? 36 : 31),
		   "%s: %d tensors converted", variants[i].name, n);
		if (q && n > 0)
			check_model(q, variants[i].name, toks);
		ref_free(q);
	}
	check_synth(toks);
	ref_free(m);
done:
	emu_exec_set_threads(0);
	return tap_done();
}
