// SPDX-License-Identifier: MIT
/*
 * Pipeline setup: the weights image of each stage (tensors at
 * PLAN_TENSOR_ALIGN, norms and biases as F32) uploaded through two staging
 * host BOs, the program template with card addresses, the K/V caches of
 * n_seq sequences per block, the buffer slots and their syncobjs, and the
 * dma-buf links between neighbouring stages. The runtime is pipeline.c.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline_int.h"
#include "rk1828/util.h"

#define STAGING_BUFS	2
#define STAGING_MAX	(8ULL << 20)

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

/* ------------------------------------------------------------- weights */

int pipe_lay_tensor(struct pipe_layout *L, const struct gguf_tensor *t, bool as_f32,
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
	L->pieces[L->n_pieces++] = (struct pipe_piece){ off, src, bytes };
	L->size = off + bytes;
	/* Offset + 1 so that offset 0 is not "absent"; rebased later. */
	ht->addr = off + 1;
	ht->type = htole32(as_f32 ? GGML_TYPE_F32 : (uint32_t)t->type);
	return 0;
}

void pipe_rebase(struct rk1828_prog_tensor *ht, uint64_t base)
{
	if (ht->addr)
		ht->addr = htole64(base + ht->addr - 1);
}

static void layout_free(struct pipe_layout *L)
{
	int i;

	for (i = 0; i < L->n_owned; i++)
		free(L->owned[i]);
	free(L->owned);
	free(L->pieces);
}

/* Fill @dst with image bytes [off, off + len). */
static void fill_image(const struct pipe_layout *L, uint8_t *dst, uint64_t off, uint64_t len)
{
	int i;

	memset(dst, 0, len);
	for (i = 0; i < L->n_pieces; i++) {
		const struct pipe_piece *pc = &L->pieces[i];
		uint64_t a = pc->off > off ? pc->off : off;
		uint64_t b = pc->off + pc->size < off + len ? pc->off + pc->size : off + len;

		if (a < b)
			memcpy(dst + (a - off), (const uint8_t *)pc->src + (a - pc->off), b - a);
	}
}

/* Build the weights layout and the program template of stage @st. */
static int build_stage_layout(struct pipeline *p, struct stage *st, struct pipe_layout *L,
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

		if (pipe_lay_tensor(L, s->attn_norm, true, &d->attn_norm) ||
		    pipe_lay_tensor(L, s->wq, false, &d->wq) ||
		    pipe_lay_tensor(L, s->wk, false, &d->wk) ||
		    pipe_lay_tensor(L, s->wv, false, &d->wv) ||
		    pipe_lay_tensor(L, s->wo, false, &d->wo) ||
		    pipe_lay_tensor(L, s->bq, true, &d->bq) ||
		    pipe_lay_tensor(L, s->bk, true, &d->bk) ||
		    pipe_lay_tensor(L, s->bv, true, &d->bv) ||
		    pipe_lay_tensor(L, s->q_norm, true, &d->q_norm) ||
		    pipe_lay_tensor(L, s->k_norm, true, &d->k_norm) ||
		    pipe_lay_tensor(L, s->ffn_norm, true, &d->ffn_norm) ||
		    pipe_lay_tensor(L, s->ffn_gate, false, &d->ffn_gate) ||
		    pipe_lay_tensor(L, s->ffn_up, false, &d->ffn_up) ||
		    pipe_lay_tensor(L, s->ffn_down, false, &d->ffn_down))
			return -1;
	}
	memset(h, 0, sizeof(*h));
	if (st->last) {
		if (pipe_lay_tensor(L, m->output_norm, true, &h->output_norm) ||
		    pipe_lay_tensor(L, m->output, false, &h->output))
			return -1;
	}
	pipe_prog_header(p, st, RK1828_PROG_OP_DECODER,
			 (uint32_t)plan_prog_bytes(st->count, p->hybrid), h);
	h->kv_seq_stride = htole64(st->kv_one);
	return 0;
}

void pipe_prog_header(const struct pipeline *p, const struct stage *st, uint32_t op,
		      uint32_t size, struct rk1828_program *h)
{
	const struct llm_model *m = p->m;

	h->magic = htole32(RK1828_PROG_MAGIC);
	h->op = htole32(op);
	h->size = htole32(size);
	h->n_layers = htole32(st->count);
	h->first_layer = htole32(st->first);
	h->flags = htole32((st->last ? RK1828_PROG_F_OUTPUT : 0) | RK1828_PROG_F_BATCH |
			   (st->last && p->o.hidden ? RK1828_PROG_F_HIDDEN : 0) |
			   (m->rope_neox ? RK1828_PROG_F_ROPE_NEOX : 0));
	h->dim = htole32(m->dim);
	h->n_heads = htole32(m->n_heads);
	h->n_kv_heads = htole32(m->n_kv_heads);
	h->head_dim = htole32(m->head_dim);
	h->ffn_dim = htole32(m->ffn_dim);
	h->n_ctx = htole32(p->o.n_ctx);
	h->rope_dim = htole32(m->rope_dim);
	h->n_vocab = htole32(st->last ? m->n_vocab : 0);
	h->rms_eps = htole32(util_f32_bits(m->rms_eps));
	h->rope_theta = htole32(util_f32_bits(m->rope_theta));
	h->n_seq = htole32(p->o.n_seq);
	h->kv_type = htole32((uint32_t)p->o.kv_type);
}

/* Tell the caller about @len more bytes on their way to a card. */
static void report_progress(struct pipeline *p, uint64_t len)
{
	p->up_done += len;
	if (p->up_done > p->up_total)
		p->up_total = p->up_done;
	if (p->o.progress)
		p->o.progress(p->o.progress_user, p->up_done, p->up_total);
}

/*
 * Whether image bytes [off, off + len) are all zero without reading them:
 * every tensor piece there lies in a hole of the model file (a shape-only
 * sparse GGUF, whose weights were never written) and the rest is
 * alignment padding. A card BO reads as zeros when it is mapped (the card
 * clears every mapping), so such a chunk needs no upload, and the file's
 * holes are never faulted into memory. @fd: the model file, or -1 (and
 * file systems without SEEK_DATA, such as a guest's 9p root, report no
 * holes); @shape_only: the file says its weights are all holes
 * (rk1828.shape_only, written by tools/mksynth --shape-only).
 */
static bool image_is_hole(const struct pipeline *p, const struct pipe_layout *L, int fd,
			  bool shape_only, uint64_t off, uint64_t len)
{
	const uint8_t *map = p->m->gf->map;
	int i;

	if (fd < 0 && !shape_only)
		return false;
	for (i = 0; i < L->n_pieces; i++) {
		const struct pipe_piece *pc = &L->pieces[i];
		uint64_t a = pc->off > off ? pc->off : off;
		uint64_t b = pc->off + pc->size < off + len ? pc->off + pc->size : off + len;
		const uint8_t *src = (const uint8_t *)pc->src + (a - pc->off);
		off_t data;

		if (a >= b)
			continue;
		/* A converted (F32) copy, not the file: real data. */
		if (src < map || src + (b - a) > map + p->m->gf->map_size)
			return false;
		if (shape_only)
			continue;
		/* ENXIO: no data from there to the end of the file. */
		data = lseek(fd, (off_t)(src - map), SEEK_DATA);
		if (data < 0 ? errno != ENXIO : (uint64_t)data < (uint64_t)(src - map) + (b - a))
			return false;
	}
	return true;
}

/*
 * Copy the weights image into the card BO through two staging host BOs,
 * skipping what is a hole of the model file.
 */
static int upload(struct pipeline *p, struct stage *st, const struct pipe_layout *L,
		  char *err, size_t errlen)
{
	uint64_t chunk = L->size < STAGING_MAX ? L->size : STAGING_MAX, off;
	struct rk_bo stg[STAGING_BUFS] = { 0 };
	uint32_t sy[STAGING_BUFS] = { 0 };
	int i, n = 0, ret = -1;
	int fd = p->m->gf->path ? open(p->m->gf->path, O_RDONLY | O_CLOEXEC) : -1;
	uint64_t flag = 0;
	bool shape_only = gguf_get_u64(p->m->gf, "rk1828.shape_only", &flag) && flag;

	for (i = 0; i < STAGING_BUFS; i++) {
		if (rk_bo_create(st->card, chunk, RK_BO_HOST, &stg[i]) ||
		    rk_bo_mmap(st->card, &stg[i]) ||
		    rk_syncobj_create(st->card, true, &sy[i])) {
			pipe_err(err, errlen, st, "weight staging: %s", rk_error());
			goto out;
		}
	}
	for (off = 0; off < L->size; off += chunk) {
		uint64_t len = L->size - off < chunk ? L->size - off : chunk;
		struct rk_sync out = { sy[n % STAGING_BUFS], 0 };

		if (image_is_hole(p, L, fd, shape_only, off, len)) {
			report_progress(p, len);
			continue;
		}
		if (pipe_job_ok(p, st, sy[n % STAGING_BUFS], true, "weight upload COPY",
				n - STAGING_BUFS, 0, NULL, err, errlen))
			goto out;
		fill_image(L, stg[n % STAGING_BUFS].map, off, len);
		if (rk_submit_copy(st->card, stg[n % STAGING_BUFS].handle, 0, st->weights.handle,
				   off, len, NULL, 0, &out, 1, NULL)) {
			pipe_err(err, errlen, st, "weight upload: %s", rk_error());
			goto out;
		}
		report_progress(p, len);
		n++;
	}
	for (i = 0; i < STAGING_BUFS; i++)
		if (pipe_job_ok(p, st, sy[i], true, "weight upload COPY", n - STAGING_BUFS + i, 0,
				NULL, err, errlen))
			goto out;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
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
		rk_bo_destroy(st->card, &st->out_peer[s]);
	}
	rk_bo_destroy(st->card, &st->weights);
	rk_bo_destroy(st->card, &st->kv);
	free(st->tmpl);
	st->tmpl = NULL;
	free(st->state_off);
	free(st->state_one);
	st->state_off = st->state_one = NULL;
}

void pipe_destroy(struct pipeline *p)
{
	int k;

	if (!p)
		return;
	for (k = 0; p->st && k < p->n_stages; k++)
		stage_free(&p->st[k]);
	free(p->st);
	free(p->hid);
	free(p);
}

/*
 * Stage @k's BOs: weights (@wsize bytes), KV cache / recurrent states
 * (@state_bytes), and per slot the card input and output and their host
 * side; @act is one bucket's activations in bytes.
 */
static int stage_alloc_bos(struct pipeline *p, int k, uint64_t wsize, uint64_t state_bytes,
			   uint64_t act, char *err, size_t errlen)
{
	struct stage *st = &p->st[k];
	int s;

#define MK(bo, size, kind, what)						\
	do {									\
		if (rk_bo_create(st->card, size, kind, bo)) {			\
			pipe_err(err, errlen, st, "allocating %s: %s", what, rk_error()); \
			return -1;						\
		}								\
	} while (0)
	MK(&st->weights, wsize, RK_BO_CARD, "weights");
	MK(&st->kv, state_bytes ? state_bytes : 4096, RK_BO_CARD,
	   p->hybrid ? "KV caches and recurrent states" : "KV cache");
	for (s = 0; s < p->nslot; s++) {
		if (st->p2p_in) {
			if (rk_bo_create_p2p(st->card, st->prog_size + act, &st->in_card[s]))
				return pipe_err(err, errlen, st,
						"allocating input activations in the peer window: %s",
						rk_error());
			MK(&st->in_host[s], st->prog_size, RK_BO_HOST, "host program area");
		}
		if (!st->p2p_in)
			MK(&st->in_card[s], st->prog_size + act, RK_BO_CARD,
			   "program + input activations");
		MK(&st->out_card[s], st->last ? st->out_bytes : act, RK_BO_CARD,
		   "output activations");
		MK(&st->out_host[s], st->out_bytes, RK_BO_HOST, "host output");
		if (k == 0)
			MK(&st->in_host[s], st->prog_size + act, RK_BO_HOST, "host input");
	}
#undef MK
	return 0;
}

/* Map stage @k's host BOs and create each slot's three syncobjs. */
static int stage_map_sync(struct pipeline *p, int k, char *err, size_t errlen)
{
	struct stage *st = &p->st[k];
	int s;

	for (s = 0; s < p->nslot; s++) {
		bool own_in = k == 0 || st->p2p_in;

		if ((own_in && rk_bo_mmap(st->card, &st->in_host[s])) ||
		    rk_bo_mmap(st->card, &st->out_host[s]))
			return pipe_err(err, errlen, st, "%s", rk_error());
		if (own_in)
			st->in_map[s] = st->in_host[s].map;
		if (rk_syncobj_create(st->card, true, &st->sy_in[s]) ||
		    rk_syncobj_create(st->card, true, &st->sy_exec[s]) ||
		    rk_syncobj_create(st->card, true, &st->sy_out[s]))
			return pipe_err(err, errlen, st, "%s", rk_error());
		st->checked[s] = true;
	}
	return 0;
}

/* Card addresses into the template @h (layers @ly) of stage @st. */
static void stage_rebase(struct pipeline *p, struct stage *st, struct rk1828_program *h,
			 struct rk1828_prog_layer *ly)
{
	int i;

	if (p->hybrid) {
		pipe_hybrid_rebase(p, st, h);
		return;
	}
	for (i = 0; i < st->count; i++) {
		struct rk1828_prog_layer *d = &ly[i];
		struct rk1828_prog_tensor *t = &d->attn_norm;
		size_t j;

		for (j = 0; j < 14; j++)
			pipe_rebase(&t[j], st->weights.card_addr);
		d->k_cache = htole64(st->kv.card_addr + (2 * i) * st->kv_region);
		d->v_cache = htole64(st->kv.card_addr + (2 * i + 1) * st->kv_region);
	}
	pipe_rebase(&h->output_norm, st->weights.card_addr);
	pipe_rebase(&h->output, st->weights.card_addr);
}

/* Allocate stage @k's BOs and syncobjs, upload its weights, build its template. */
static int stage_init(struct pipeline *p, int k, char *err, size_t errlen)
{
	const struct llm_model *m = p->m;
	struct stage *st = &p->st[k];
	struct rk1828_program *h;
	struct rk1828_prog_layer *ly;
	struct pipe_layout L = { 0 };
	uint64_t act = (uint64_t)p->o.bucket * m->dim * sizeof(float), state_bytes = 0;
	int ret = -1;

	/* Stage k+1's program travels in front of the hidden states. */
	st->out_bytes = st->last ? (uint64_t)p->max_rows * p->row_floats * sizeof(float) :
			p->st[k + 1].prog_size + act;
	st->tmpl = calloc(1, st->prog_size);
	if (!st->tmpl)
		return pipe_err(err, errlen, st, "out of host memory");
	h = (struct rk1828_program *)st->tmpl;
	ly = (struct rk1828_prog_layer *)(h + 1);
	if (p->hybrid ? pipe_hybrid_template(p, st, &L, h, &state_bytes) :
			build_stage_layout(p, st, &L, h, ly)) {
		pipe_err(err, errlen, st, "cannot lay out weights (out of host memory)");
		goto out;
	}
	if (!p->hybrid)
		state_bytes = 2 * st->kv_region * st->count;
	if (stage_alloc_bos(p, k, L.size, state_bytes, act, err, errlen) ||
	    stage_map_sync(p, k, err, errlen))
		goto out;
	stage_rebase(p, st, h, ly);

	if (p->o.verbose) {
		struct plan_seg sg = { .first = st->first, .count = st->count, .output = st->last };
		char blk[PLAN_BLK_MAX], w[32], kv[32];

		plan_seg_blocks(&sg, blk, sizeof(blk));
		util_fmt_bytes(w, sizeof(w), L.size);
		util_fmt_bytes(kv, sizeof(kv), st->kv.size);
		fprintf(stderr, "card%d: %s: weights %s, KV %s, program %llu B\n",
			st->card->index, blk, w, kv, (unsigned long long)st->prog_size);
	}
	ret = upload(p, st, &L, err, errlen);
out:
	layout_free(&L);
	return ret;
}

/* A handle on @to's card to syncobj @sy of @from (the same syncobj). */
static int share_syncobj(struct stage *from, uint32_t sy, struct stage *to, uint32_t *out,
			 char *err, size_t errlen)
{
	int fd, ret;

	if (rk_syncobj_export(from->card, sy, &fd))
		return pipe_err(err, errlen, from, "%s", rk_error());
	ret = rk_syncobj_import(to->card, fd, out);
	close(fd);
	if (ret)
		return pipe_err(err, errlen, to, "importing card%d's syncobj: %s",
				from->card->index, rk_error());
	return 0;
}

/*
 * Share stage k-1's output host BOs with stage k (dma-buf), and the
 * syncobjs of the hand-over: stage k-1's out[s] as stage k's prev[s],
 * stage k's in[s] as stage k-1's next[s].
 */
static int link_stages(struct pipeline *p, int k, char *err, size_t errlen)
{
	struct stage *a = &p->st[k - 1], *b = &p->st[k];
	int s;

	for (s = 0; s < p->nslot; s++) {
		int fd;

		if (share_syncobj(a, a->sy_out[s], b, &b->sy_prev[s], err, errlen) ||
		    share_syncobj(b, b->sy_in[s], a, &a->sy_next[s], err, errlen))
			return -1;

		if (b->p2p_in) {
			/* b's input buffer in its window, written by a's DMA. */
			if (rk_bo_export(b->card, &b->in_card[s], &fd))
				return pipe_err(err, errlen, b, "%s", rk_error());
			if (rk_bo_import(a->card, fd, &a->out_peer[s])) {
				close(fd);
				return pipe_err(err, errlen, a,
						"importing card%d's input buffer for P2P: %s",
						b->card->index, rk_error());
			}
			close(fd);
			continue;
		}

		if (rk_bo_export(a->card, &a->out_host[s], &fd))
			return pipe_err(err, errlen, a, "%s", rk_error());
		if (rk_bo_import(b->card, fd, &b->in_host[s])) {
			close(fd);
			return pipe_err(err, errlen, b, "importing card%d's hidden-state buffer: %s",
				    a->card->index, rk_error());
		}
		close(fd);
		b->in_map[s] = a->out_host[s].map;
	}
	return 0;
}

/*
 * How hidden states reach stage @k from stage k-1: P2P when the pair
 * allows it and stage k's input buffers fit its peer window.
 */
static int stage_hop(struct pipeline *p, int k, char *err, size_t errlen)
{
	struct stage *a = &p->st[k - 1], *b = &p->st[k];
	uint64_t act = (uint64_t)p->o.bucket * p->m->dim * sizeof(float);
	uint64_t one = align_up(b->prog_size + act, 4096);
	char how[64];

	if (llm_hop_decide(a->card, b->card, one * (uint64_t)p->nslot, p->o.no_p2p, &b->hop))
		return pipe_err(err, errlen, a, "%s", rk_error());
	b->p2p_in = b->hop.p2p;
	if (p->o.verbose)
		fprintf(stderr, "card%d -> card%d: hidden states by %s\n", a->card->index,
			b->card->index, llm_hop_format(&b->hop, how, sizeof(how)));
	return 0;
}

int pipe_hop_p2p(const struct pipeline *p, int k)
{
	return k > 0 && k < p->n_stages && p->st[k].p2p_in;
}

int pipe_create(struct pipeline **pp, const struct llm_model *m,
		struct rk_card *cards, const struct plan *plan,
		const struct pipe_opts *o, char *err, size_t errlen)
{
	/* K or V of one layer and sequence, saturated. */
	uint64_t kv_one = llm_kv_bytes(m, o->n_ctx, o->kv_type) / 2;
	uint32_t n_seq = o->n_seq ? o->n_seq : 1;
	struct pipeline *p;
	int k;
	uint32_t l;

	*pp = NULL;
	if (!plan->n_segs || !o->bucket || !o->n_ctx || o->bucket > o->n_ctx ||
	    n_seq > PIPE_MAX_SEQ || kv_one > (UINT64_MAX >> 8) || !llm_kv_type_ok(m, o->kv_type))
		return pipe_err(err, errlen, NULL, "pipeline: bad plan or options");
	p = calloc(1, sizeof(*p));
	if (!p)
		return pipe_err(err, errlen, NULL, "out of host memory");
	p->m = m;
	p->o = *o;
	p->o.n_seq = n_seq;
	p->hybrid = llm_model_hybrid(m);
	if (!p->hybrid)
		p->o.n_snap = 0;
	if (!p->o.timeout_ms)
		p->o.timeout_ms = 120000;
	p->n_stages = plan->n_segs;
	p->nslot = (int)plan_slots(p->n_stages);
	p->max_rows = (int)(o->max_rows > n_seq ? o->max_rows : n_seq);
	if (p->max_rows > (int)o->bucket)
		p->max_rows = (int)o->bucket;
	p->row_floats = m->n_vocab + (o->hidden ? m->dim : 0);
	if (o->hidden && !(p->hid = calloc((size_t)p->max_rows * m->dim, sizeof(float)))) {
		pipe_destroy(p);
		return pipe_err(err, errlen, NULL, "out of host memory");
	}
	for (l = 0; l < m->n_layers; l++)
		p->up_total += llm_layer_weight_bytes(m, l);
	p->up_total += llm_head_bytes(m);
	p->st = calloc(p->n_stages, sizeof(*p->st));
	if (!p->st) {
		pipe_destroy(p);
		return pipe_err(err, errlen, NULL, "out of host memory");
	}
	for (k = 0; k < p->n_stages; k++) {
		struct stage *st = &p->st[k];

		st->first = plan->seg[k].first;
		st->count = plan->seg[k].count;
		st->last = k == p->n_stages - 1;
		st->prog_bytes = plan_prog_bytes(st->count, p->hybrid);
		st->prog_size = align_up(st->prog_bytes + (uint64_t)o->bucket *
					 sizeof(struct rk1828_prog_token), 64);
		st->kv_one = kv_one;
		st->kv_region = kv_one * n_seq;
	}
	for (k = 0; k < p->n_stages; k++) {
		struct stage *st = &p->st[k];

		st->card = &cards[plan->seg[k].card];
		if (k > 0 && stage_hop(p, k, err, errlen)) {
			pipe_destroy(p);
			return -1;
		}
		if (stage_init(p, k, err, errlen) ||
		    (k > 0 && link_stages(p, k, err, errlen))) {
			pipe_destroy(p);
			return -1;
		}
	}
	memset(&p->stats, 0, sizeof(p->stats));
	if (p->o.progress && p->up_done < p->up_total)
		p->o.progress(p->o.progress_user, p->up_total, p->up_total);
	*pp = p;
	return 0;
}

