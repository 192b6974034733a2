// SPDX-License-Identifier: MIT
/*
 * Host unit test of the emulator's hybrid programs (RK1828_PROG_OP_HYBRID,
 * emulator/exec.c + exec_dnet.c + deltanet.c) on a synthetic qwen35 model
 * written by build/tools/mksynth (dim 256, 8 blocks: Gated DeltaNet in
 * blocks 0-2 and 4-6, gated full attention with IMROPE in 3 and 7, a
 * 512-token vocabulary), against the scalar reference forward
 * (ref_forward.c, per-token recurrence, double accumulation) on the very
 * same weights:
 *
 *  - one sequence in buckets of 1, 7 and 80 tokens (buckets ending inside
 *    and across the 16-position chunks of the state), two segments (blocks
 *    0-4, then 5-7 + output), logits of every token within 1e-4 relative;
 *    the runs follow each other on the same states, so each restart at
 *    position 0 must begin from zero recurrent states; and the logits of
 *    the three bucket sizes are bit for bit the same (the recurrent state
 *    keeps position-aligned chunks, so the grouping does not matter);
 *  - F32 and Q4_K_M weights (Q4_K matrices, Q6_K in some blocks);
 *  - a micro-batch of two sequences interleaved token by token;
 *  - snapshot and restore, into another live sequence and into one of the
 *    header's n_snap snapshot blocks: a prefix with a snapshot of its
 *    recurrent state, another continuation, then a restore and the first
 *    one, whose logits must be the reference's for prefix + continuation;
 *  - malformed hybrid programs are INVAL (or ACCESS: regions past the
 *    mappings) and write nothing.
 */
#include <endian.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec.h"
#include "rk1828_hif.h"
#include "rk1828/program.h"
#include "ref_forward.h"
#include "tap.h"
#include "rk1828/util.h"

#define TOL 1e-4
#define N_CTX 128
#define N_TOK 90
#define N_SEQS 3
#define N_SNAP 1		/* snapshot blocks of the DeltaNet regions */
#define SPLIT 5
#define MEM_SIZE (192u << 20)
#define PROG_BYTES 8192

struct map {
	uint64_t addr, len;
};

struct card {
	uint8_t *mem;
	uint64_t size, top;
	struct map maps[1024];
	int n_maps;
};

static int card_check(void *priv, uint64_t addr, uint64_t len)
{
	struct card *c = priv;
	int i;

	for (i = 0; i < c->n_maps; i++)
		if (addr >= c->maps[i].addr && len <= c->maps[i].len &&
		    addr - c->maps[i].addr <= c->maps[i].len - len)
			return 0;
	return -1;
}

static uint64_t card_alloc(struct card *c, uint64_t len)
{
	uint64_t a = (c->top + 63) & ~63ULL;

	if (a + len > c->size || c->n_maps == 1024) {
		fprintf(stderr, "fake card memory exhausted\n");
		exit(2);
	}
	c->top = a + len;
	c->maps[c->n_maps++] = (struct map){ a, len };
	return a;
}

/* A model on the fake card: weights, states of N_SEQS sequences, buffers. */
struct dev {
	struct card c;
	const struct ref_model *m;
	struct rk1828_prog_hlayer *layers;	/* strides filled per program */
	uint64_t state_bytes[64][2];
	int blocks[64];
	struct rk1828_prog_tensor output_norm, output;
	uint64_t in, hid, logits, toks, prog[2];
};

static struct rk1828_prog_tensor upload(struct card *c, const struct ref_tensor *t)
{
	struct rk1828_prog_tensor h = { 0 };
	uint64_t a;

	if (!t->data)
		return h;
	a = card_alloc(c, t->nbytes);
	memcpy(c->mem + a, t->data, t->nbytes);
	h.addr = htole64(a);
	h.type = htole32((uint32_t)t->type);
	return h;
}

static void upload_layer(struct dev *d, int i)
{
	const struct ref_config *cfg = &d->m->c;
	const struct ref_layer *r = &d->m->layers[i];
	struct rk1828_prog_hlayer *l = &d->layers[i];
	uint64_t b0, b1;
	int j;

	l->attn_norm = upload(&d->c, &r->attn_norm);
	l->ffn_norm = upload(&d->c, &r->ffn_norm);
	l->ffn_gate = upload(&d->c, &r->ffn_gate);
	l->ffn_up = upload(&d->c, &r->ffn_up);
	l->ffn_down = upload(&d->c, &r->ffn_down);
	if (r->recurrent) {
		uint64_t S = (uint64_t)cfg->ssm_state, C = (2ULL * cfg->ssm_groups + cfg->ssm_rank) * S;

		l->kind = htole32(RK1828_PROG_LAYER_DELTANET);
		l->dnet.qkv = upload(&d->c, &r->wqkv);
		l->dnet.gate = upload(&d->c, &r->wgate);
		l->dnet.beta = upload(&d->c, &r->beta);
		l->dnet.alpha = upload(&d->c, &r->alpha);
		l->dnet.conv = upload(&d->c, &r->conv1d);
		l->dnet.dt_bias = upload(&d->c, &r->dt_bias);
		l->dnet.ssm_a = upload(&d->c, &r->ssm_a);
		l->dnet.norm = upload(&d->c, &r->ssm_norm);
		l->dnet.out = upload(&d->c, &r->ssm_out);
		l->dnet.head_dim = htole32((uint32_t)S);
		l->dnet.n_k_heads = htole16((uint16_t)cfg->ssm_groups);
		l->dnet.n_v_heads = htole16((uint16_t)cfg->ssm_rank);
		l->dnet.conv_kernel = htole32((uint32_t)cfg->conv_k);
		b0 = (uint64_t)(cfg->conv_k - 1) * C * 4;
		b1 = rk1828_dnet_state_floats(S, (uint64_t)cfg->ssm_rank) * 4;
	} else {
		l->kind = htole32(RK1828_PROG_LAYER_ATTN);
		l->flags = htole32(RK1828_PROG_LF_GATE | RK1828_PROG_LF_IMROPE);
		l->attn.wq = upload(&d->c, &r->wq);
		l->attn.wk = upload(&d->c, &r->wk);
		l->attn.wv = upload(&d->c, &r->wv);
		l->attn.wo = upload(&d->c, &r->wo);
		l->attn.q_norm = upload(&d->c, &r->q_norm);
		l->attn.k_norm = upload(&d->c, &r->k_norm);
		for (j = 0; j < 4; j++)
			l->attn.rope_sections[j] = htole16((uint16_t)cfg->sections[j]);
		b0 = b1 = (uint64_t)N_CTX * cfg->n_kv_heads * cfg->head_dim * 4;
	}
	d->state_bytes[i][0] = b0;
	d->state_bytes[i][1] = b1;
	d->blocks[i] = r->recurrent ? N_SEQS + N_SNAP : N_SEQS;
	l->state[0].addr = htole64(card_alloc(&d->c, b0 * d->blocks[i]));
	l->state[1].addr = htole64(card_alloc(&d->c, b1 * d->blocks[i]));
}

static struct dev *dev_new(const struct ref_model *m)
{
	const struct ref_config *cfg = &m->c;
	struct dev *d = calloc(1, sizeof(*d));
	int i;

	d->c.size = MEM_SIZE;
	d->c.mem = calloc(1, MEM_SIZE);
	d->c.top = 4096;
	d->m = m;
	d->layers = calloc((size_t)cfg->n_layers, sizeof(*d->layers));
	if (!d->c.mem || !d->layers || cfg->n_layers > 64) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	for (i = 0; i < cfg->n_layers; i++)
		upload_layer(d, i);
	d->output_norm = upload(&d->c, &m->output_norm);
	d->output = upload(&d->c, &m->output);
	d->in = card_alloc(&d->c, (uint64_t)N_TOK * cfg->dim * 4);
	d->hid = card_alloc(&d->c, (uint64_t)N_TOK * cfg->dim * 4);
	d->logits = card_alloc(&d->c, (uint64_t)N_TOK * cfg->n_vocab * 4);
	d->toks = card_alloc(&d->c, (uint64_t)N_TOK * sizeof(struct rk1828_prog_token));
	d->prog[0] = card_alloc(&d->c, PROG_BYTES);
	d->prog[1] = card_alloc(&d->c, PROG_BYTES);
	return d;
}

static void dev_free(struct dev *d)
{
	free(d->c.mem);
	free(d->layers);
	free(d);
}

static void dev_reset_states(struct dev *d)
{
	int i, j;

	for (i = 0; i < d->m->c.n_layers; i++)
		for (j = 0; j < 2; j++)
			memset(d->c.mem + le64toh(d->layers[i].state[j].addr), 0,
			       d->state_bytes[i][j] * d->blocks[i]);
}

/*
 * A hybrid program for blocks [first, first + n) in @p; @batch: F_BATCH
 * with the token table at d->toks and N_SEQS sequences. Returns its size.
 */
static uint32_t make_prog(const struct dev *d, void *p, int first, int n, uint32_t n_tok,
			  uint32_t pos, uint32_t flags, bool batch, uint64_t in, uint64_t out)
{
	const struct ref_config *c = &d->m->c;
	struct rk1828_program *h = p;
	struct rk1828_prog_hlayer *l = (struct rk1828_prog_hlayer *)(h + 1);
	uint32_t size = (uint32_t)(sizeof(*h) + (size_t)n * sizeof(*l));
	int i, j;

	memset(p, 0, PROG_BYTES);
	h->magic = htole32(RK1828_PROG_MAGIC);
	h->op = htole32(RK1828_PROG_OP_HYBRID);
	h->size = htole32(size);
	h->n_layers = htole32((uint32_t)n);
	h->first_layer = htole32((uint32_t)first);
	h->n_tokens = htole32(n_tok);
	h->pos = htole32(pos);
	h->flags = htole32(flags | RK1828_PROG_F_ROPE_NEOX | (batch ? RK1828_PROG_F_BATCH : 0));
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
	if (batch) {
		h->tok_addr = htole64(d->toks);
		h->n_seq = htole32(N_SEQS);
		h->n_snap = htole32(N_SNAP);
	}
	if (flags & RK1828_PROG_F_OUTPUT) {
		h->output_norm = d->output_norm;
		h->output = d->output;
	}
	memcpy(l, &d->layers[first], (size_t)n * sizeof(*l));
	for (i = 0; i < n; i++)
		for (j = 0; j < 2; j++)
			l[i].state[j].seq_stride = htole64(batch ? d->state_bytes[first + i][j] : 0);
	return size;
}

static int exec_prog(struct dev *d, int slot, const void *p, uint32_t size)
{
	struct emu_access a = { .base = d->c.mem, .mem_size = d->c.size, .check = card_check,
				.priv = &d->c };

	memcpy(d->c.mem + d->prog[slot], p, size);
	return emu_exec(&a, d->prog[slot], PROG_BYTES);
}

/* Both segments over the @n tokens already embedded at d->in (batch: table at d->toks). */
static int run_both(struct dev *d, uint32_t n, uint32_t pos, uint32_t out_flags, bool batch)
{
	static uint8_t prog[PROG_BYTES];
	int L = d->m->c.n_layers, rc;
	uint32_t sz;

	sz = make_prog(d, prog, 0, SPLIT, n, pos, 0, batch, d->in, d->hid);
	rc = exec_prog(d, 0, prog, sz);
	if (rc)
		return rc;
	sz = make_prog(d, prog, SPLIT, L - SPLIT, n, pos, RK1828_PROG_F_OUTPUT | out_flags, batch,
		       d->hid, d->logits);
	return exec_prog(d, 1, prog, sz);
}

static double rel_diff(const float *a, const float *b, size_t n)
{
	double md = 0, mb = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		double e = fabs((double)a[i] - b[i]);

		if (!(e <= md))
			md = isnan(e) ? INFINITY : e;
		mb = fmax(mb, fabs(b[i]));
	}
	return mb > 0 ? md / mb : md;
}

static void embed(struct dev *d, const int *toks, int n, int row0)
{
	int t;

	for (t = 0; t < n; t++)
		ref_embed(d->m, toks[t], (float *)(d->c.mem + d->in) +
			  (size_t)(row0 + t) * d->m->c.dim);
}

/* The reference logits after each of @n tokens from position 0. */
static float *ref_logits(const char *path, const int *toks, int n)
{
	char err[256];
	struct ref_model *m = ref_load(path, N_CTX, err, sizeof(err));
	float *lg = m ? malloc(sizeof(float) * (size_t)n * m->c.n_vocab) : NULL;
	int i;

	for (i = 0; lg && i < n; i++)
		ref_forward(m, toks[i], i, lg + (size_t)i * m->c.n_vocab);
	ref_free(m);
	return lg;
}

/* One sequence in buckets: every token's logits against the reference. */
static void check_buckets(struct dev *d, const char *label, const int *toks, const float *ref)
{
	static const int buckets[] = { 1, 7, 80 };
	size_t V = (size_t)d->m->c.n_vocab;
	size_t bi;

	float *first = malloc(sizeof(float) * N_TOK * V);

	for (bi = 0; first && bi < sizeof(buckets) / sizeof(buckets[0]); bi++) {
		double worst = 0;
		int done = 0, rc = 0, b = buckets[bi];
		size_t differ = 0, i;

		/* No reset between runs: position 0 must start from zero states. */
		while (!rc && done < N_TOK) {
			int n = N_TOK - done < b ? N_TOK - done : b;
			const float *got = (float *)(d->c.mem + d->logits);

			embed(d, toks + done, n, 0);
			rc = run_both(d, (uint32_t)n, (uint32_t)done, RK1828_PROG_F_ALL_LOGITS, false);
			if (!rc)
				worst = fmax(worst, rel_diff(got, ref + (size_t)done * V, (size_t)n * V));
			for (i = 0; !rc && i < (size_t)n * V; i++) {
				if (bi == 0)
					first[(size_t)done * V + i] = got[i];
				else
					differ += memcmp(&first[(size_t)done * V + i], &got[i], 4) != 0;
			}
			done += n;
		}
		tap_ok(!rc && worst <= TOL, "%s: %d tokens in buckets of %d, every token's logits "
		       "within %g of the reference (%.2e, rc %d)", label, N_TOK, b, TOL, worst, rc);
		if (bi)
			tap_ok(!rc && differ == 0, "%s: buckets of %d give bit for bit the logits of "
			       "buckets of %d (%zu of %zu differ)", label, b, buckets[0], differ,
			       (size_t)N_TOK * V);
	}
	free(first);
}

static void set_tok(struct dev *d, int i, uint32_t pos, uint32_t seq, uint32_t flags,
		    uint32_t aux)
{
	struct rk1828_prog_token *t = (struct rk1828_prog_token *)(d->c.mem + d->toks) + i;

	*t = (struct rk1828_prog_token){ htole32(pos), htole32(seq), htole32(flags), htole32(aux) };
}

/* Two sequences interleaved in micro-batches of 2 x 5 tokens. */
static void check_batch(struct dev *d, const int *ta, const int *tb, const float *ra,
			const float *rb)
{
	size_t V = (size_t)d->m->c.n_vocab;
	double worst = 0;
	int done = 0, rc = 0, i;

	dev_reset_states(d);
	while (!rc && done < 40) {
		for (i = 0; i < 10; i++) {
			int k = done + i / 2;

			embed(d, i % 2 ? tb + k : ta + k, 1, i);
			set_tok(d, i, (uint32_t)k, (uint32_t)(i % 2) * 2, RK1828_PROG_TOK_LOGITS, 0);
		}
		rc = run_both(d, 10, 0, 0, true);
		for (i = 0; !rc && i < 10; i++) {
			int k = done + i / 2;
			const float *want = (i % 2 ? rb : ra) + (size_t)k * V;

			worst = fmax(worst, rel_diff((float *)(d->c.mem + d->logits) + i * V,
						     want, V));
		}
		done += 5;
	}
	tap_ok(!rc && worst <= TOL, "two sequences interleaved in micro-batches (seq 0 and 2): "
	       "logits within %g of each one's reference (%.2e, rc %d)", TOL, worst, rc);
}

/*
 * Prefix of 20 tokens with a snapshot into block @snap (a live sequence
 * or a snapshot block); continuation A (20 more tokens of toks_a);
 * restore from @snap and continuation B: its logits are prefix + B's.
 */
static void check_snapshot(struct dev *d, const int *ta, const int *tb, const float *rb,
			   uint32_t snap)
{
	size_t V = (size_t)d->m->c.n_vocab;
	double worst = 0;
	int rc, i;

	dev_reset_states(d);
	embed(d, tb, 20, 0);
	for (i = 0; i < 20; i++)
		set_tok(d, i, (uint32_t)i, 0, 0, 0);
	set_tok(d, 19, 19, 0, RK1828_PROG_TOK_SNAPSHOT, snap);
	rc = run_both(d, 20, 0, 0, true);
	embed(d, ta + 20, 20, 0);
	for (i = 0; i < 20; i++)
		set_tok(d, i, (uint32_t)(20 + i), 0, 0, 0);
	rc = rc ? rc : run_both(d, 20, 0, 0, true);
	/* Resume the prefix on sequence 0: its KV rows 0..19 are the prefix's. */
	embed(d, tb + 20, 20, 0);
	for (i = 0; i < 20; i++)
		set_tok(d, i, (uint32_t)(20 + i), 0, RK1828_PROG_TOK_LOGITS, 0);
	set_tok(d, 0, 20, 0, RK1828_PROG_TOK_LOGITS | RK1828_PROG_TOK_RESTORE, snap);
	rc = rc ? rc : run_both(d, 20, 0, 0, true);
	if (!rc)
		worst = rel_diff((float *)(d->c.mem + d->logits), rb + 20 * V, 20 * V);
	tap_ok(!rc && worst <= TOL, "snapshot into %s %u after a 20-token prefix, another "
	       "continuation, restore: the logits are prefix + continuation's (%.2e, rc %d)",
	       snap < N_SEQS ? "sequence" : "snapshot block", snap, worst, rc);
}

/* A malformed program fails with @want and changes no card memory. */
static void neg_st(struct dev *d, const void *prog, uint32_t size, int want, const char *what)
{
	uint8_t *before = malloc(d->c.top);
	int rc, same;

	memcpy(before, d->c.mem, d->c.top);
	rc = exec_prog(d, 1, prog, size);
	memcpy(before + d->prog[1], d->c.mem + d->prog[1], PROG_BYTES);
	same = !memcmp(before, d->c.mem, d->c.top);
	tap_ok(rc == want && same, "%s -> %s (rc %d, memory %s)", what,
	       want == RK1828_HIF_ST_INVAL ? "INVAL" : "ACCESS", rc, same ? "unchanged" : "CHANGED");
	free(before);
}

static void neg(struct dev *d, const void *prog, uint32_t size, const char *what)
{
	neg_st(d, prog, size, RK1828_HIF_ST_INVAL, what);
}

static void check_rejections(struct dev *d)
{
	static uint8_t p[PROG_BYTES];
	struct rk1828_program *h = (struct rk1828_program *)p;
	struct rk1828_prog_hlayer *l = (struct rk1828_prog_hlayer *)(h + 1);
	uint32_t sz;
	int i;

#define FRESH(batch) (sz = make_prog(d, p, 0, SPLIT, 4, 0, 0, batch, d->in, d->hid))
	for (i = 0; i < 4; i++)
		set_tok(d, i, (uint32_t)i, 0, 0, 0);
	FRESH(false);
	l[0].kind = htole32(9);
	neg(d, p, sz, "unknown layer kind");
	FRESH(false);
	l[0].dnet.n_v_heads = htole16(3);
	neg(d, p, sz, "DeltaNet v heads not a multiple of k heads");
	FRESH(false);
	l[0].dnet.conv_kernel = htole32(1);
	neg(d, p, sz, "DeltaNet conv kernel 1");
	FRESH(false);
	l[0].dnet.conv.type = htole32(QUANT_TYPE_Q8_0);
	neg(d, p, sz, "quantized conv taps");
	FRESH(false);
	l[0].flags = htole32(RK1828_PROG_LF_GATE);
	neg(d, p, sz, "attention flag on a DeltaNet layer");
	FRESH(false);
	l[3].attn.rope_sections[0] = l[3].attn.rope_sections[1] = 0;
	l[3].attn.rope_sections[2] = l[3].attn.rope_sections[3] = 0;
	neg(d, p, sz, "IMROPE with all sections zero");
	FRESH(false);
	h->flags &= htole32(~RK1828_PROG_F_ROPE_NEOX);
	neg(d, p, sz, "IMROPE without NEOX pairs");
	FRESH(false);
	l[3].attn.bq = l[3].attn.wk;
	neg(d, p, sz, "q bias with an output gate");
	FRESH(false);
	l[0].state[1].seq_stride = htole64(4096);
	neg(d, p, sz, "state stride without F_BATCH");
	FRESH(false);
	l[0].reserved = htole64(1);
	neg(d, p, sz, "non-zero reserved word in a layer");
	FRESH(true);
	l[0].state[0].seq_stride = htole64(d->state_bytes[0][0] - 4);
	neg(d, p, sz, "conv state stride below one block");
	FRESH(true);
	h->kv_seq_stride = htole64(1 << 20);
	neg(d, p, sz, "header kv_seq_stride in a hybrid program");
	FRESH(true);
	set_tok(d, 2, 3, 0, 0, 0);
	neg(d, p, sz, "DeltaNet sequence with a gap in its positions");
	set_tok(d, 2, 2, 0, RK1828_PROG_TOK_RESTORE, 1);
	neg(d, p, sz, "RESTORE on a token that is not its sequence's first");
	set_tok(d, 2, 2, 0, RK1828_PROG_TOK_SNAPSHOT, 0);
	neg(d, p, sz, "SNAPSHOT into its own sequence");
	set_tok(d, 2, 2, 0, RK1828_PROG_TOK_SNAPSHOT, N_SEQS + N_SNAP);
	neg(d, p, sz, "SNAPSHOT into a block >= n_seq + n_snap");
	set_tok(d, 2, 2, 0, 0, 0);
	FRESH(true);
	h->n_snap = htole32(50000);
	neg_st(d, p, sz, RK1828_HIF_ST_ACCESS, "n_snap beyond the mapped DeltaNet regions");
	set_tok(d, 2, 2, 0, 0, 0);
	FRESH(false);
	h->n_snap = htole32(1);
	neg(d, p, sz, "n_snap without F_BATCH");
	FRESH(false);
	h->op = htole32(RK1828_PROG_OP_DECODER);
	neg(d, p, sz, "hybrid records under OP_DECODER (size mismatch)");
#undef FRESH
}

/* A prompt of @n token ids from a seed (the model's 512-token vocabulary). */
static void make_tokens(int *t, int n, unsigned int seed)
{
	int i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		t[i] = (int)((seed >> 16) % 512);
	}
}

static int make_model(const char *type, char *path, size_t len)
{
	char cmd[512];
	int fd;

	snprintf(path, len, "/tmp/rk1828-hybrid-%s-XXXXXX", type);
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "build/tools/mksynth -o %s --arch qwen35 --type %s", path, type);
	return system(cmd);
}

static void check_type(const char *type, bool all)
{
	char path[256], err[256];
	int ta[N_TOK], tb[N_TOK];
	struct ref_model *m;
	float *ra, *rb;
	struct dev *d;

	if (!tap_ok(make_model(type, path, sizeof(path)) == 0,
		    "build/tools/mksynth writes a qwen35 %s model", type))
		return;
	m = ref_load(path, N_CTX, err, sizeof(err));
	make_tokens(ta, N_TOK, 1);
	make_tokens(tb, N_TOK, 2);
	ra = ref_logits(path, ta, N_TOK);
	rb = ref_logits(path, tb, N_TOK);
	if (!tap_ok(m && ra && rb && m->c.hybrid, "%s model loads (%s)", type, m ? "" : err))
		goto out;
	d = dev_new(m);
	check_buckets(d, type, ta, ra);
	if (all) {
		check_batch(d, ta, tb, ra, rb);
		check_snapshot(d, ta, tb, rb, 1);
		check_snapshot(d, ta, tb, rb, N_SEQS);
		check_rejections(d);
	}
	dev_free(d);
out:
	free(ra);
	free(rb);
	ref_free(m);
	unlink(path);
}

int main(void)
{
	check_type("f32", true);
	check_type("q4_k_m", false);
	return tap_done();
}
