// SPDX-License-Identifier: MIT
/*
 * Pipeline-parallel runtime over RK1828 cards; see pipeline.h for the job
 * graph. Each stage has n = plan_slots(stages) buffer slots; bucket i uses
 * slot s = i % n. Dependencies per stage k (all explicit binary syncobjs;
 * a binary syncobj named as an in-sync contributes the fence it holds at
 * submit time, so reusing one per role and slot is safe as long as jobs
 * are queued in bucket order):
 *
 *   IN   COPY [program | hidden] host slot s -> card input slot s
 *        waits exec[s]  (EXEC i-n no longer reads input slot s)
 *        waits prev[s]  (k > 0: stage k-1's OUT of bucket i)
 *        signals in[s]
 *   EXEC the program at the start of card input slot s
 *        waits in[s], exec[s-1] (bucket i-1: KV cache order), out[s]
 *        (OUT i-n has drained output slot s); signals exec[s]
 *   OUT  COPY card output slot s -> host slot s, behind stage k+1's
 *        program area (last stage: logits)
 *        waits exec[s], next[s] (k < last, unless already known: stage
 *        k+1's IN of bucket i-n has read host slot s); signals out[s]
 *
 * prev[s] and next[s] are filled by exporting the neighbour's syncobj as a
 * sync_file and importing it (drm_syncobj IMPORT_SYNC_FILE). The host
 * writes a stage's program (and, for stage 0, the embeddings) into its
 * input host slot only after the jobs of bucket i-n on that stage are done
 * and their status was checked. For k > 0 the input host slot is stage
 * k-1's output host BO (a shared dma-buf): the host writes the program
 * part while stage k-1 may be writing the hidden part, which is disjoint.
 * With n = stages + 1 slots the host can queue bucket i on every stage
 * while older buckets drain, so prefill runs as a full pipeline.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rk1828/program.h"
#include "pipeline.h"

#define MAX_SLOTS	8
#define STAGING_BUFS	2
#define STAGING_MAX	(8ULL << 20)
#define MAX_BATCH_V1	4096

/* One contiguous piece of a weights image: @size bytes from @src at @off. */
struct piece {
	uint64_t off;
	const void *src;
	uint64_t size;
};

struct stage {
	struct rk_card *card;
	int first, count, last;
	struct rk_bo weights, kv;
	struct rk_bo in_card[MAX_SLOTS], out_card[MAX_SLOTS];
	struct rk_bo in_host[MAX_SLOTS], out_host[MAX_SLOTS];
	uint8_t *in_map[MAX_SLOTS];	/* CPU view of the input host slot */
	uint32_t sy_in[MAX_SLOTS], sy_exec[MAX_SLOTS], sy_out[MAX_SLOTS];
	uint32_t sy_prev[MAX_SLOTS], sy_next[MAX_SLOTS];
	bool checked[MAX_SLOTS];
	long bucket_of[MAX_SLOTS];
	int pos_of[MAX_SLOTS];
	uint8_t *tmpl;		/* program template, prog_size bytes */
	uint64_t prog_size;	/* program area at the start of each input buffer
				 * (64-aligned); hidden states follow it */
	uint64_t out_bytes;	/* output BO size per slot */
};

struct pipeline {
	const struct llm_model *m;
	struct pipe_opts o;
	int n_stages;
	struct stage *st;
	int nslot;		/* buffer slots per stage (plan_slots()) */
	long n_buckets;		/* buckets queued so far; bucket i uses slot i % nslot */
	struct pipe_stats stats;
	/* Micro-batches submitted but not collected (v1: already computed). */
	int n_flight, flight_head;
	int flight_rows[MAX_SLOTS];
	float *flight_logits[MAX_SLOTS];	/* n_vocab floats each */
	char failed[384];	/* first job failure; the pipeline is unusable after it */
};

static int perr(char *err, size_t errlen, const struct stage *st,
		const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err && errlen) {
		if (st)
			snprintf(err, errlen, "card%d (%s): %s", st->card->index,
				 st->card->node, msg);
		else
			snprintf(err, errlen, "%s", msg);
	}
	return -1;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

static uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

/* ------------------------------------------------------------- weights */

struct layout {
	struct piece *pieces;
	int n_pieces, cap;
	void **owned;		/* converted F32 copies to free */
	int n_owned;
	uint64_t size;
};

/*
 * Place tensor @t (norms/biases @as_f32) in the image; writes its offset
 * and type into @ht (addr holds the offset until rebased). NULL: absent.
 */
static int lay_tensor(struct layout *L, const struct gguf_tensor *t, bool as_f32,
		      struct rk1828_prog_tensor *ht)
{
	uint64_t bytes, off;
	const void *src;

	memset(ht, 0, sizeof(*ht));
	if (!t)
		return 0;
	bytes = llm_tensor_card_bytes(t, as_f32);
	src = t->data;
	if (as_f32 && t->type != GGML_TYPE_F32) {
		float *f = malloc(bytes);

		if (!f || llm_tensor_to_f32(t, f)) {
			free(f);
			return -1;
		}
		L->owned[L->n_owned++] = f;
		src = f;
	}
	if (L->n_pieces == L->cap)
		return -1;
	off = align_up(L->size, PLAN_TENSOR_ALIGN);
	L->pieces[L->n_pieces++] = (struct piece){ off, src, bytes };
	L->size = off + bytes;
	/* Offset + 1 so that offset 0 is not "absent"; rebased later. */
	ht->addr = off + 1;
	ht->type = htole32(as_f32 ? GGML_TYPE_F32 : (uint32_t)t->type);
	return 0;
}

static void rebase(struct rk1828_prog_tensor *ht, uint64_t base)
{
	if (ht->addr)
		ht->addr = htole64(base + ht->addr - 1);
}

static void layout_free(struct layout *L)
{
	int i;

	for (i = 0; i < L->n_owned; i++)
		free(L->owned[i]);
	free(L->owned);
	free(L->pieces);
}

/* Fill @dst with image bytes [off, off + len). */
static void fill_image(const struct layout *L, uint8_t *dst, uint64_t off, uint64_t len)
{
	int i;

	memset(dst, 0, len);
	for (i = 0; i < L->n_pieces; i++) {
		const struct piece *pc = &L->pieces[i];
		uint64_t a = pc->off > off ? pc->off : off;
		uint64_t b = pc->off + pc->size < off + len ? pc->off + pc->size : off + len;

		if (a < b)
			memcpy(dst + (a - off), (const uint8_t *)pc->src + (a - pc->off), b - a);
	}
}

/* Build the weights layout and the program template of stage @st. */
static int build_stage_layout(struct pipeline *p, struct stage *st, struct layout *L,
			      struct rk1828_program *h, struct rk1828_prog_layer *ly)
{
	const struct llm_model *m = p->m;
	int i, n_max = st->count * 14 + 2;

	L->pieces = calloc(n_max, sizeof(*L->pieces));
	L->owned = calloc(n_max, sizeof(*L->owned));
	L->cap = n_max;
	if (!L->pieces || !L->owned)
		return -1;
	for (i = 0; i < st->count; i++) {
		const struct llm_layer *s = &m->layers[st->first + i];
		struct rk1828_prog_layer *d = &ly[i];

		if (lay_tensor(L, s->attn_norm, true, &d->attn_norm) ||
		    lay_tensor(L, s->wq, false, &d->wq) ||
		    lay_tensor(L, s->wk, false, &d->wk) ||
		    lay_tensor(L, s->wv, false, &d->wv) ||
		    lay_tensor(L, s->wo, false, &d->wo) ||
		    lay_tensor(L, s->bq, true, &d->bq) ||
		    lay_tensor(L, s->bk, true, &d->bk) ||
		    lay_tensor(L, s->bv, true, &d->bv) ||
		    lay_tensor(L, s->q_norm, true, &d->q_norm) ||
		    lay_tensor(L, s->k_norm, true, &d->k_norm) ||
		    lay_tensor(L, s->ffn_norm, true, &d->ffn_norm) ||
		    lay_tensor(L, s->ffn_gate, false, &d->ffn_gate) ||
		    lay_tensor(L, s->ffn_up, false, &d->ffn_up) ||
		    lay_tensor(L, s->ffn_down, false, &d->ffn_down))
			return -1;
	}
	memset(h, 0, sizeof(*h));
	if (st->last) {
		if (lay_tensor(L, m->output_norm, true, &h->output_norm) ||
		    lay_tensor(L, m->output, false, &h->output))
			return -1;
	}
	h->magic = htole32(RK1828_PROG_MAGIC);
	h->op = htole32(RK1828_PROG_OP_DECODER);
	h->size = htole32((uint32_t)plan_prog_bytes(st->count));
	h->n_layers = htole32(st->count);
	h->first_layer = htole32(st->first);
	h->flags = htole32((st->last ? RK1828_PROG_F_OUTPUT : 0) |
			   (m->rope_neox ? RK1828_PROG_F_ROPE_NEOX : 0));
	h->dim = htole32(m->dim);
	h->n_heads = htole32(m->n_heads);
	h->n_kv_heads = htole32(m->n_kv_heads);
	h->head_dim = htole32(m->head_dim);
	h->ffn_dim = htole32(m->ffn_dim);
	h->n_ctx = htole32(p->o.n_ctx);
	h->rope_dim = htole32(m->rope_dim);
	h->n_vocab = htole32(st->last ? m->n_vocab : 0);
	h->rms_eps = htole32(f2u(m->rms_eps));
	h->rope_theta = htole32(f2u(m->rope_theta));
	return 0;
}

/* Wait for a syncobj and turn a failed job into an error message. */
static int wait_ok(struct pipeline *p, struct stage *st, uint32_t sy,
		   const char *what, long bucket, int pos, char *err, size_t errlen)
{
	int64_t t0 = rk_now_ns(), deadline = t0 + (int64_t)p->o.timeout_ms * 1000000;
	int ret;

	ret = rk_syncobj_status(st->card, sy, 0, deadline);
	p->stats.wait_ns += rk_now_ns() - t0;

	if (ret == -ETIME)
		return perr(err, errlen, st, "%s (bucket %ld, pos %d): no completion within %u ms",
			    what, bucket, pos, p->o.timeout_ms);
	if (ret)
		return perr(err, errlen, st, "%s (bucket %ld, pos %d): job failed: %s (%d)",
			    what, bucket, pos, strerror(-ret), ret);
	return 0;
}

/* Copy the weights image into the card BO through two staging host BOs. */
static int upload(struct pipeline *p, struct stage *st, const struct layout *L,
		  char *err, size_t errlen)
{
	uint64_t chunk = L->size < STAGING_MAX ? L->size : STAGING_MAX, off;
	struct rk_bo stg[STAGING_BUFS] = { 0 };
	uint32_t sy[STAGING_BUFS] = { 0 };
	int i, n = 0, ret = -1;

	for (i = 0; i < STAGING_BUFS; i++) {
		if (rk_bo_create(st->card, chunk, RK_BO_HOST, &stg[i]) ||
		    rk_bo_mmap(st->card, &stg[i]) ||
		    rk_syncobj_create(st->card, true, &sy[i])) {
			perr(err, errlen, st, "weight staging: %s", rk_error());
			goto out;
		}
	}
	for (off = 0; off < L->size; off += chunk, n++) {
		uint64_t len = L->size - off < chunk ? L->size - off : chunk;
		struct rk_sync out = { sy[n % STAGING_BUFS], 0 };

		if (wait_ok(p, st, sy[n % STAGING_BUFS], "weight upload COPY", n - STAGING_BUFS, 0, err, errlen))
			goto out;
		fill_image(L, stg[n % STAGING_BUFS].map, off, len);
		if (rk_submit_copy(st->card, stg[n % STAGING_BUFS].handle, 0, st->weights.handle,
				   off, len, NULL, 0, &out, 1, NULL)) {
			perr(err, errlen, st, "weight upload: %s", rk_error());
			goto out;
		}
	}
	for (i = 0; i < STAGING_BUFS; i++)
		if (wait_ok(p, st, sy[i], "weight upload COPY", n - STAGING_BUFS + i, 0, err, errlen))
			goto out;
	ret = 0;
out:
	for (i = 0; i < STAGING_BUFS; i++) {
		if (sy[i])
			rk_syncobj_destroy(st->card, sy[i]);
		rk_bo_destroy(st->card, &stg[i]);
	}
	return ret;
}

static void stage_free(struct stage *st)
{
	int s;

	if (!st->card)
		return;
	for (s = 0; s < MAX_SLOTS; s++) {
		uint32_t *all[] = { &st->sy_in[s], &st->sy_exec[s], &st->sy_out[s],
				    &st->sy_prev[s], &st->sy_next[s] };
		size_t j;

		for (j = 0; j < sizeof(all) / sizeof(all[0]); j++)
			if (*all[j])
				rk_syncobj_destroy(st->card, *all[j]);
		rk_bo_destroy(st->card, &st->in_card[s]);
		rk_bo_destroy(st->card, &st->out_card[s]);
		rk_bo_destroy(st->card, &st->in_host[s]);
		rk_bo_destroy(st->card, &st->out_host[s]);
	}
	rk_bo_destroy(st->card, &st->weights);
	rk_bo_destroy(st->card, &st->kv);
	free(st->tmpl);
	st->tmpl = NULL;
}

void pipe_destroy(struct pipeline *p)
{
	int k;

	if (!p)
		return;
	for (k = 0; k < p->n_stages; k++)
		stage_free(&p->st[k]);
	for (k = 0; k < MAX_SLOTS; k++)
		free(p->flight_logits[k]);
	free(p->st);
	free(p);
}

/* Allocate stage @k's BOs and syncobjs, upload its weights, build its template. */
static int stage_init(struct pipeline *p, int k, char *err, size_t errlen)
{
	const struct llm_model *m = p->m;
	struct stage *st = &p->st[k];
	struct rk1828_program *h;
	struct rk1828_prog_layer *ly;
	struct layout L = { 0 };
	uint64_t act = (uint64_t)p->o.bucket * m->dim * sizeof(float);
	uint64_t kv_one = (uint64_t)p->o.n_ctx * m->n_kv_heads * m->head_dim * sizeof(float);
	int i, s, ret = -1;

	/* Stage k+1's program travels in front of the hidden states. */
	st->out_bytes = st->last ? (uint64_t)m->n_vocab * sizeof(float) :
			p->st[k + 1].prog_size + act;
	st->tmpl = calloc(1, st->prog_size);
	if (!st->tmpl)
		return perr(err, errlen, st, "out of host memory");
	h = (struct rk1828_program *)st->tmpl;
	ly = (struct rk1828_prog_layer *)(h + 1);
	if (build_stage_layout(p, st, &L, h, ly)) {
		perr(err, errlen, st, "cannot lay out weights (out of host memory)");
		goto out;
	}

#define MK(bo, size, kind, what)						\
	do {									\
		if (rk_bo_create(st->card, size, kind, bo)) {			\
			perr(err, errlen, st, "allocating %s: %s", what, rk_error()); \
			goto out;						\
		}								\
	} while (0)
	MK(&st->weights, L.size, RK_BO_CARD, "weights");
	MK(&st->kv, 2 * kv_one * st->count, RK_BO_CARD, "KV cache");
	for (s = 0; s < p->nslot; s++) {
		MK(&st->in_card[s], st->prog_size + act, RK_BO_CARD,
		   "program + input activations");
		MK(&st->out_card[s], st->last ? st->out_bytes : act, RK_BO_CARD,
		   "output activations");
		MK(&st->out_host[s], st->out_bytes, RK_BO_HOST, "host output");
		if (k == 0)
			MK(&st->in_host[s], st->prog_size + act, RK_BO_HOST, "host input");
	}
#undef MK
	for (s = 0; s < p->nslot; s++) {
		if ((k == 0 && rk_bo_mmap(st->card, &st->in_host[s])) ||
		    rk_bo_mmap(st->card, &st->out_host[s])) {
			perr(err, errlen, st, "%s", rk_error());
			goto out;
		}
		if (k == 0)
			st->in_map[s] = st->in_host[s].map;
		if (rk_syncobj_create(st->card, true, &st->sy_in[s]) ||
		    rk_syncobj_create(st->card, true, &st->sy_exec[s]) ||
		    rk_syncobj_create(st->card, true, &st->sy_out[s]) ||
		    rk_syncobj_create(st->card, true, &st->sy_prev[s]) ||
		    rk_syncobj_create(st->card, true, &st->sy_next[s])) {
			perr(err, errlen, st, "%s", rk_error());
			goto out;
		}
		st->checked[s] = true;
	}

	/* Card addresses into the template. */
	for (i = 0; i < st->count; i++) {
		struct rk1828_prog_layer *d = &ly[i];
		struct rk1828_prog_tensor *t = &d->attn_norm;
		size_t j;

		for (j = 0; j < 14; j++)
			rebase(&t[j], st->weights.card_addr);
		d->k_cache = htole64(st->kv.card_addr + (2 * i) * kv_one);
		d->v_cache = htole64(st->kv.card_addr + (2 * i + 1) * kv_one);
	}
	rebase(&h->output_norm, st->weights.card_addr);
	rebase(&h->output, st->weights.card_addr);

	if (p->o.verbose)
		fprintf(stderr, "card%d: blk %d-%d%s: weights %.2f MiB, KV %.2f MiB, program %llu B\n",
			st->card->index, st->first, st->first + st->count - 1,
			st->last ? " + output" : "", L.size / 1048576.0,
			st->kv.size / 1048576.0, (unsigned long long)st->prog_size);
	ret = upload(p, st, &L, err, errlen);
out:
	layout_free(&L);
	return ret;
}

/* Share stage k-1's output host BOs with stage k (dma-buf). */
static int link_stages(struct pipeline *p, int k, char *err, size_t errlen)
{
	struct stage *a = &p->st[k - 1], *b = &p->st[k];
	int s;

	for (s = 0; s < p->nslot; s++) {
		int fd;

		if (rk_bo_export(a->card, &a->out_host[s], &fd))
			return perr(err, errlen, a, "%s", rk_error());
		if (rk_bo_import(b->card, fd, &b->in_host[s])) {
			close(fd);
			return perr(err, errlen, b, "importing card%d's hidden-state buffer: %s",
				    a->card->index, rk_error());
		}
		close(fd);
		b->in_map[s] = a->out_host[s].map;
	}
	return 0;
}

int pipe_create(struct pipeline **pp, const struct llm_model *m,
		struct rk_card *cards, const struct plan *plan,
		const struct pipe_opts *o, char *err, size_t errlen)
{
	struct pipeline *p;
	int k;

	*pp = NULL;
	if (!plan->n_segs || !o->bucket || !o->n_ctx || o->bucket > o->n_ctx || o->n_seq > 1)
		return perr(err, errlen, NULL, "pipeline: bad plan or options");
	p = calloc(1, sizeof(*p));
	if (!p)
		return perr(err, errlen, NULL, "out of host memory");
	p->m = m;
	p->o = *o;
	if (!p->o.timeout_ms)
		p->o.timeout_ms = 120000;
	p->n_stages = plan->n_segs;
	p->nslot = (int)plan_slots(p->n_stages);
	p->st = calloc(p->n_stages, sizeof(*p->st));
	for (k = 0; p->st && k < MAX_SLOTS; k++) {
		p->flight_logits[k] = malloc((size_t)m->n_vocab * sizeof(float));
		if (!p->flight_logits[k])
			break;
	}
	if (!p->st || k < MAX_SLOTS) {
		pipe_destroy(p);
		return perr(err, errlen, NULL, "out of host memory");
	}
	for (k = 0; k < p->n_stages; k++) {
		struct stage *st = &p->st[k];

		st->first = plan->seg[k].first;
		st->count = plan->seg[k].count;
		st->last = k == p->n_stages - 1;
		st->prog_size = align_up(plan_prog_bytes(st->count), 64);
	}
	for (k = 0; k < p->n_stages; k++) {
		struct stage *st = &p->st[k];

		st->card = &cards[plan->seg[k].card];
		if (stage_init(p, k, err, errlen) ||
		    (k > 0 && link_stages(p, k, err, errlen))) {
			pipe_destroy(p);
			return -1;
		}
	}
	memset(&p->stats, 0, sizeof(p->stats));
	*pp = p;
	return 0;
}

/* Check (and wait for) every job of stage @st's slot @s. */
/*
 * Status of a job known to be finished: sync_file status without a wait
 * (one ioctl less). Falls back to wait_ok() if it is still running.
 */
static int done_ok(struct pipeline *p, struct stage *st, uint32_t sy,
		   const char *what, long bucket, int pos, char *err, size_t errlen)
{
	int fd, ret;

	if (rk_syncobj_export_sync_file(st->card, sy, 0, &fd))
		return perr(err, errlen, st, "%s", rk_error());
	ret = rk_sync_file_status(fd);
	close(fd);
	if (ret == 1)
		return 0;
	if (ret < 0)
		return perr(err, errlen, st, "%s (bucket %ld, pos %d): job failed: %s (%d)",
			    what, bucket, pos, strerror(-ret), ret);
	return wait_ok(p, st, sy, what, bucket, pos, err, errlen);
}

/*
 * Check (waiting for them unless @done) the status of every job of stage
 * @st's slot @s.
 */
static int check_slot(struct pipeline *p, struct stage *st, int s, bool done,
		      char *err, size_t errlen)
{
	int (*chk)(struct pipeline *, struct stage *, uint32_t, const char *, long, int,
		   char *, size_t) = done ? done_ok : wait_ok;
	long b = st->bucket_of[s];
	int pos = st->pos_of[s];

	if (st->checked[s])
		return 0;
	if (chk(p, st, st->sy_in[s], "input COPY", b, pos, err, errlen) ||
	    chk(p, st, st->sy_exec[s], "EXEC", b, pos, err, errlen) ||
	    chk(p, st, st->sy_out[s], "output COPY", b, pos, err, errlen))
		return -1;
	st->checked[s] = true;
	return 0;
}

/* Move the fence of @src's syncobj @sy into @dst's syncobj @into. */
static int pass_fence(struct stage *src, uint32_t sy, struct stage *dst, uint32_t into,
		      char *err, size_t errlen)
{
	int fd, ret;

	if (rk_syncobj_export_sync_file(src->card, sy, 0, &fd))
		return perr(err, errlen, src, "%s", rk_error());
	ret = rk_syncobj_import_sync_file(dst->card, into, 0, fd);
	close(fd);
	if (ret)
		return perr(err, errlen, dst, "%s", rk_error());
	return 0;
}

/* Queue the input COPY, EXEC and output COPY of one bucket on stage @k, slot @s. */
static int submit_stage(struct pipeline *p, int k, int s, int n, int pos, long bucket,
			char *err, size_t errlen)
{
	struct stage *st = &p->st[k];
	struct rk1828_program *h;
	uint64_t hid = (uint64_t)n * p->m->dim * sizeof(float);
	uint32_t bos[4] = { st->weights.handle, st->kv.handle, st->in_card[s].handle,
			    st->out_card[s].handle };
	struct rk_sync in[3], out;
	int n_in;

	/* Bucket i-n must be done with slot s on this card. */
	if (check_slot(p, st, s, false, err, errlen))
		return -1;
	st->checked[s] = false;
	st->bucket_of[s] = bucket;
	st->pos_of[s] = pos;

	/* The program goes in front of the hidden states of input slot s. */
	memcpy(st->in_map[s], st->tmpl, st->prog_size);
	h = (struct rk1828_program *)st->in_map[s];
	h->n_tokens = htole32(n);
	h->pos = htole32(pos);
	h->in_addr = htole64(st->in_card[s].card_addr + st->prog_size);
	h->out_addr = htole64(st->out_card[s].card_addr);

	/* Program + hidden states in. */
	n_in = 0;
	in[n_in++] = (struct rk_sync){ st->sy_exec[s], 0 };
	if (k > 0) {
		if (pass_fence(&p->st[k - 1], p->st[k - 1].sy_out[s], st, st->sy_prev[s],
			       err, errlen))
			return -1;
		in[n_in++] = (struct rk_sync){ st->sy_prev[s], 0 };
	}
	out = (struct rk_sync){ st->sy_in[s], 0 };
	if (rk_submit_copy(st->card, st->in_host[s].handle, 0, st->in_card[s].handle, 0,
			   st->prog_size + hid, in, n_in, &out, 1, NULL))
		goto fail;

	/* EXEC. */
	in[0] = (struct rk_sync){ st->sy_in[s], 0 };
	in[1] = (struct rk_sync){ st->sy_exec[(s + p->nslot - 1) % p->nslot], 0 };
	in[2] = (struct rk_sync){ st->sy_out[s], 0 };
	out = (struct rk_sync){ st->sy_exec[s], 0 };
	if (rk_submit_exec(st->card, st->in_card[s].handle, 0, plan_prog_bytes(st->count),
			   bos, 4, in, 3, &out, 1, NULL))
		goto fail;

	/* Hidden states (behind stage k+1's program area) or logits out. */
	n_in = 0;
	in[n_in++] = (struct rk_sync){ st->sy_exec[s], 0 };
	if (!st->last && !p->st[k + 1].checked[s]) {
		/*
		 * Stage k+1 may still be reading bucket i-n from host slot s:
		 * wait for its input COPY (its syncobj still holds that fence).
		 */
		if (pass_fence(&p->st[k + 1], p->st[k + 1].sy_in[s], st, st->sy_next[s],
			       err, errlen))
			return -1;
		in[n_in++] = (struct rk_sync){ st->sy_next[s], 0 };
	}
	out = (struct rk_sync){ st->sy_out[s], 0 };
	if (rk_submit_copy(st->card, st->out_card[s].handle, 0, st->out_host[s].handle,
			   st->last ? 0 : p->st[k + 1].prog_size,
			   st->last ? st->out_bytes : hid, in, n_in, &out, 1, NULL))
		goto fail;
	return 0;
fail:
	return perr(err, errlen, st, "bucket %ld: %s", bucket, rk_error());
}

void pipe_get_stats(const struct pipeline *p, struct pipe_stats *st)
{
	*st = p->stats;
	st->host_ns -= st->wait_ns;
}

/* As pipe_forward(); -1: bad arguments (nothing queued), -2: a job or submit failed. */
static int forward(struct pipeline *p, const int32_t *tokens, int n, int pos,
		   float *logits, char *err, size_t errlen);

int pipe_forward(struct pipeline *p, const int32_t *tokens, int n, int pos,
		 float *logits, char *err, size_t errlen)
{
	int64_t t0 = rk_now_ns();
	int ret;

	if (p->failed[0])
		return perr(err, errlen, NULL, "pipeline unusable after an earlier job failure: %s",
			    p->failed);
	ret = forward(p, tokens, n, pos, logits, err, errlen);
	p->stats.host_ns += rk_now_ns() - t0;
	p->stats.forwards++;
	/* Queued jobs may have run on bad data: the KV caches are suspect. */
	if (ret == -2)
		snprintf(p->failed, sizeof(p->failed), "%s", err ? err : "job failure");
	return ret < 0 ? -1 : 0;
}

static int forward(struct pipeline *p, const int32_t *tokens, int n, int pos,
		   float *logits, char *err, size_t errlen)
{
	const struct llm_model *m = p->m;
	struct stage *first = &p->st[0], *last = &p->st[p->n_stages - 1];
	int done = 0, s = 0, k, t;

	if (n < 1 || pos < 0 || (uint64_t)pos + n > p->o.n_ctx)
		return perr(err, errlen, NULL,
			    "forward of %d tokens at position %d does not fit the context of %u",
			    n, pos, p->o.n_ctx);
	for (t = 0; t < n; t++)
		if (tokens[t] < 0 || (uint32_t)tokens[t] >= m->n_vocab)
			return perr(err, errlen, NULL, "token id %d outside the vocabulary (%u)",
				    tokens[t], m->n_vocab);

	while (done < n) {
		int nb = n - done < (int)p->o.bucket ? n - done : (int)p->o.bucket;
		long bucket = p->n_buckets;
		float *dst;

		s = (int)(bucket % p->nslot);
		/* The host rewrites input slot s: bucket i-n must have read it. */
		if (check_slot(p, first, s, false, err, errlen))
			return -2;
		dst = (float *)(first->in_map[s] + first->prog_size);
		for (t = 0; t < nb; t++)
			llm_embed(m, tokens[done + t], dst + (size_t)t * m->dim);
		for (k = 0; k < p->n_stages; k++) {
			if (submit_stage(p, k, s, nb, pos + done, bucket, err, errlen))
				return -2;
			p->stats.jobs += 3;
		}
		p->n_buckets++;
		done += nb;
	}

	/*
	 * Wait for the last bucket's logits: every job it depended on (all
	 * stages, older buckets) has finished then, so mostly only statuses
	 * are read (done_ok() waits for the rest, e.g. older logits copies),
	 * in pipeline order so the first failure (the cause) is reported. On a
	 * timeout the per-job waits name the job that is stuck.
	 */
	{
		int64_t t0 = rk_now_ns();
		bool finished = !rk_syncobj_wait(last->card, &last->sy_out[s], NULL, 1,
					     t0 + (int64_t)p->o.timeout_ms * 1000000, true);

		p->stats.wait_ns += rk_now_ns() - t0;
		for (k = 0; k < p->n_stages; k++) {
			int j;

			for (j = p->nslot - 1; j >= 0; j--)	/* oldest bucket first */
				if (check_slot(p, &p->st[k], (s + p->nslot - j) % p->nslot,
					       finished, err, errlen))
					return -2;
		}
	}
	memcpy(logits, last->out_host[s].map, (size_t)m->n_vocab * sizeof(float));
	return 0;
}

int pipe_n_stages(const struct pipeline *p)
{
	return p->n_stages;
}

int pipe_depth(const struct pipeline *p)
{
	return p->n_stages > 1 ? p->n_stages : 2;
}

int pipe_in_flight(const struct pipeline *p)
{
	return p->n_flight;
}

/*
 * Micro-batches of one sequence with contiguous positions run through
 * forward(); the logits of the last token (the only one that may ask for
 * them) wait in the flight ring until collected.
 */
int pipe_submit(struct pipeline *p, const struct pipe_tok *t, int n,
		char *err, size_t errlen)
{
	int32_t toks[MAX_BATCH_V1];
	int i, slot, ret;

	if (p->failed[0])
		return perr(err, errlen, NULL, "pipeline unusable after an earlier job failure: %s",
			    p->failed);
	if (n < 1 || n > (int)p->o.bucket || n > MAX_BATCH_V1)
		return perr(err, errlen, NULL, "micro-batch of %d tokens (bucket %u)", n,
			    p->o.bucket);
	if (p->n_flight >= pipe_depth(p))
		return perr(err, errlen, NULL, "%d micro-batches already in flight", p->n_flight);
	for (i = 0; i < n; i++) {
		if (t[i].seq != 0 || t[i].pos != t[0].pos + i ||
		    (i < n - 1 && (t[i].flags & PIPE_TOK_LOGITS)))
			return perr(err, errlen, NULL,
				    "micro-batch layout not supported by this pipeline");
		toks[i] = t[i].token;
	}
	slot = (p->flight_head + p->n_flight) % MAX_SLOTS;
	ret = pipe_forward(p, toks, n, t[0].pos, p->flight_logits[slot], err, errlen);
	if (ret)
		return ret;
	p->flight_rows[slot] = (t[n - 1].flags & PIPE_TOK_LOGITS) ? 1 : 0;
	p->n_flight++;
	return 0;
}

int pipe_collect(struct pipeline *p, float *logits, int max_rows, char *err, size_t errlen)
{
	int slot = p->flight_head, rows;

	if (!p->n_flight)
		return perr(err, errlen, NULL, "no micro-batch in flight");
	rows = p->flight_rows[slot];
	if (rows > max_rows)
		return perr(err, errlen, NULL, "room for %d logits rows, %d needed", max_rows, rows);
	if (rows)
		memcpy(logits, p->flight_logits[slot], (size_t)p->m->n_vocab * sizeof(float));
	p->flight_head = (slot + 1) % MAX_SLOTS;
	p->n_flight--;
	return rows;
}
