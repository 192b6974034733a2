// SPDX-License-Identifier: MIT
/*
 * Segment planner; see planner.h for the rule. Two dynamic programs over
 * (cards used, blocks placed): the first finds the smallest achievable
 * maximum card load under the memory limits (the classic linear partition
 * problem), the second, restricted to segments no larger than that
 * optimum, minimises the sum of squared loads so the split is as even as
 * the optimum allows.
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk1828/program.h"
#include "planner.h"
#include "rk1828/util.h"

static int card_id(const struct plan_input *in, int j)
{
	return in->card_ids ? in->card_ids[j] : j;
}

/* Load of card j (of n used) holding blocks [a, b). */
static uint64_t seg_load(const struct plan_input *in, const uint64_t *prefix,
			 int n, int j, int a, int b)
{
	return prefix[b] - prefix[a] + in->card_overhead +
	       (j == n - 1 ? in->head_bytes : 0);
}

/*
 * Pass 1: dp[j][i] = smallest max load placing blocks [0, i) on cards
 * 0..j-1 (each >= 1 block, within memory when @fit). UINT64_MAX: infeasible.
 * Returns the optimum for all blocks on n cards.
 */
static uint64_t minmax(const struct plan_input *in, const uint64_t *prefix,
		       int n, int fit, uint64_t *dp)
{
	int L = in->n_blocks, j, i, a;

#define DP(j, i) dp[(size_t)(j) * (L + 1) + (i)]
	for (j = 0; j <= n; j++)
		for (i = 0; i <= L; i++)
			DP(j, i) = UINT64_MAX;
	DP(0, 0) = 0;
	for (j = 1; j <= n; j++) {
		for (i = j; i <= L - (n - j); i++) {
			for (a = j - 1; a < i; a++) {
				uint64_t prev = DP(j - 1, a), load, m;

				if (prev == UINT64_MAX)
					continue;
				load = seg_load(in, prefix, n, j - 1, a, i);
				if (fit && load > in->card_free[j - 1])
					continue;
				m = prev > load ? prev : load;
				if (m < DP(j, i))
					DP(j, i) = m;
			}
		}
	}
	return DP(n, L);
#undef DP
}

/*
 * Pass 2: with every load <= @cap, minimise the sum of squared loads;
 * cut[j][i] records the start of card j-1's segment. Ties keep the
 * largest start, i.e. earlier cards take more blocks.
 */
static int min_sumsq(const struct plan_input *in, const uint64_t *prefix,
		     int n, uint64_t cap, int fit, double *dp, int *cut)
{
	int L = in->n_blocks, j, i, a;

#define DP(j, i) dp[(size_t)(j) * (L + 1) + (i)]
#define CUT(j, i) cut[(size_t)(j) * (L + 1) + (i)]
	for (j = 0; j <= n; j++)
		for (i = 0; i <= L; i++) {
			DP(j, i) = DBL_MAX;
			CUT(j, i) = -1;
		}
	DP(0, 0) = 0;
	for (j = 1; j <= n; j++) {
		for (i = j; i <= L - (n - j); i++) {
			for (a = j - 1; a < i; a++) {
				uint64_t load;
				double v;

				if (DP(j - 1, a) == DBL_MAX)
					continue;
				load = seg_load(in, prefix, n, j - 1, a, i);
				if (load > cap || (fit && load > in->card_free[j - 1]))
					continue;
				v = DP(j - 1, a) + (double)load * (double)load;
				if (v <= DP(j, i)) {
					DP(j, i) = v;
					CUT(j, i) = a;
				}
			}
		}
	}
	return DP(n, L) == DBL_MAX ? -1 : 0;
#undef DP
#undef CUT
}

static void build_segs(const struct plan_input *in, const uint64_t *prefix,
		       int n, const int *cut, struct plan *p)
{
	int L = in->n_blocks, j, i = L;

	p->n_segs = n;
	for (j = n; j >= 1; j--) {
		int a = cut[(size_t)j * (L + 1) + i];
		struct plan_seg *s = &p->seg[j - 1];

		s->card = j - 1;
		s->card_id = card_id(in, j - 1);
		s->first = a;
		s->count = i - a;
		s->output = j == n;
		s->bytes = seg_load(in, prefix, n, j - 1, a, i);
		s->free = in->card_free[j - 1];
		i = a;
	}
}

static int fail(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	return -1;
}

/*
 * prefix_sums() - @prefix[i] = bytes of blocks 0..i-1 (L + 1 entries).
 * Sizes come from file and command-line values: a total that does not fit
 * in 64 bits (or a size that already saturated, see util_mul_u64()) is
 * refused instead of wrapping into a small load. Return: 0, or -1 when a
 * sum (with the head and the card's overhead) overflows.
 */
static int prefix_sums(const struct plan_input *in, uint64_t *prefix)
{
	bool ok = true;
	int i;

	for (i = 0; i < in->n_blocks; i++)
		prefix[i + 1] = util_add_u64(prefix[i], in->block_bytes[i], &ok);
	util_add_u64(util_add_u64(prefix[in->n_blocks], in->head_bytes, &ok),
		     in->card_overhead, &ok);
	return ok ? 0 : -1;
}

/*
 * nofit_message() - the error of a model that does not fit: the balanced
 * plan ignoring memory (@cut from min_sumsq() without the memory bound)
 * with every card it overfills named, its need, blocks and free memory.
 */
static void nofit_message(const struct plan_input *in, const uint64_t *prefix, int n,
			  const int *cut, char *err, size_t errlen)
{
	struct plan tmp;
	/* Room to name every card. */
	char msg[96 * PLAN_MAX_CARDS], need[32], have[32], blk[PLAN_BLK_MAX];
	int len = snprintf(msg, sizeof(msg), "model does not fit on %d card%s:",
			   n, n == 1 ? "" : "s");
	int j, first = 1;

	build_segs(in, prefix, n, cut, &tmp);
	for (j = 0; j < n; j++) {
		const struct plan_seg *s = &tmp.seg[j];

		if (s->bytes <= s->free)
			continue;
		util_fmt_bytes(need, sizeof(need), s->bytes);
		util_fmt_bytes(have, sizeof(have), s->free);
		plan_seg_blocks(s, blk, sizeof(blk));
		len += snprintf(msg + len, sizeof(msg) - len,
				"%s card%d needs %s (%s) but has %s free",
				first ? "" : ";", s->card_id, need, blk, have);
		first = 0;
		if (len >= (int)sizeof(msg))
			break;
	}
	if (first)	/* balanced plan fits each card: unbalanced free sizes */
		snprintf(msg + len, sizeof(msg) - len,
			 " no contiguous split fits the cards' free memory");
	fail(err, errlen, msg);
}

int plan_make(const struct plan_input *in, struct plan *p, char *err, size_t errlen)
{
	uint64_t *prefix = NULL, *dp1 = NULL, best;
	double *dp2 = NULL;
	int *cut = NULL;
	int L = in->n_blocks, n, ret = -1;
	size_t cells;

	memset(p, 0, sizeof(*p));
	if (L < 1 || !in->block_bytes)
		return fail(err, errlen, "planner: the model has no blocks");
	if (in->n_cards < 1 || !in->card_free)
		return fail(err, errlen, "planner: no cards to place the model on");
	if (in->n_cards > PLAN_MAX_CARDS)
		return fail(err, errlen, "planner: too many cards (at most 64)");
	n = in->n_cards < L ? in->n_cards : L;
	if (n < in->n_cards)
		snprintf(p->note, sizeof(p->note),
			 "using %d of %d cards: the model has only %d blocks",
			 n, in->n_cards, L);

	cells = (size_t)(n + 1) * (L + 1);
	prefix = calloc(L + 1, sizeof(*prefix));
	dp1 = calloc(cells, sizeof(*dp1));
	dp2 = calloc(cells, sizeof(*dp2));
	cut = calloc(cells, sizeof(*cut));
	if (!prefix || !dp1 || !dp2 || !cut) {
		fail(err, errlen, "planner: out of memory");
		goto out;
	}
	if (prefix_sums(in, prefix)) {
		fail(err, errlen, "planner: the model's card memory does not fit in 64 bits "
		     "(a --ctx, --parallel or --bucket too large for this model, or a "
		     "corrupt size in the file)");
		goto out;
	}

	best = minmax(in, prefix, n, 1, dp1);
	if (best != UINT64_MAX && !min_sumsq(in, prefix, n, best, 1, dp2, cut)) {
		build_segs(in, prefix, n, cut, p);
		ret = 0;
		goto out;
	}

	/*
	 * Does not fit: show the balanced plan ignoring memory and name every
	 * card it overfills.
	 */
	best = minmax(in, prefix, n, 0, dp1);
	if (min_sumsq(in, prefix, n, best, 0, dp2, cut)) {
		fail(err, errlen, "planner: internal error");
		goto out;
	}
	nofit_message(in, prefix, n, cut, err, errlen);
	ret = PLAN_NOFIT;
out:
	free(prefix);
	free(dp1);
	free(dp2);
	free(cut);
	return ret;
}

int plan_seg_blocks(const struct plan_seg *s, char *buf, size_t size)
{
	const char *out = s->output ? " + output" : "";

	if (s->count == 1)
		return snprintf(buf, size, "blk %d%s", s->first, out);
	return snprintf(buf, size, "blk %d-%d%s", s->first, s->first + s->count - 1, out);
}

int plan_format(const struct plan *p, char *buf, size_t size)
{
	int i, len = 0;

	if (size)
		buf[0] = '\0';
	for (i = 0; i < p->n_segs; i++) {
		const struct plan_seg *s = &p->seg[i];
		/* Past the end of @buf only count: never form buf + len there. */
		char *at = (size_t)len < size ? buf + len : NULL;
		size_t room = at ? size - (size_t)len : 0;
		char blk[PLAN_BLK_MAX];

		plan_seg_blocks(s, blk, sizeof(blk));
		len += snprintf(at, room, "%scard%d: %s", i ? ", " : "", s->card_id, blk);
	}
	return len;
}

/* Sizes saturate at UINT64_MAX (util_mul_u64()): so does their alignment. */
uint64_t plan_align(uint64_t x)
{
	return x > UINT64_MAX - 4095 ? UINT64_MAX : (x + 4095) & ~4095ULL;
}

static uint64_t talign(uint64_t x)
{
	return x > UINT64_MAX - (PLAN_TENSOR_ALIGN - 1) ? UINT64_MAX :
	       (x + PLAN_TENSOR_ALIGN - 1) & ~(uint64_t)(PLAN_TENSOR_ALIGN - 1);
}

/* @a + @b, saturating. */
static uint64_t sadd(uint64_t a, uint64_t b)
{
	return util_add_u64(a, b, NULL);
}

/* @a * @b, saturating. */
static uint64_t smul(uint64_t a, uint64_t b)
{
	return util_mul_u64(a, b, NULL);
}

uint32_t plan_slots(int n_stages)
{
	if (n_stages < 1)
		return 2;
	return n_stages + 1 > 8 ? 8 : (uint32_t)n_stages + 1;
}

static uint32_t slots_of(const struct plan_sizes *s)
{
	return s->slots ? s->slots : 2;
}

static uint32_t seqs_of(const struct plan_sizes *s)
{
	return s->n_seq ? s->n_seq : 1;
}

/* Logits rows of one micro-batch: one per sequence (or max_rows), at most a bucket. */
static uint32_t logit_rows(const struct plan_sizes *s)
{
	uint32_t n = s->max_rows > seqs_of(s) ? s->max_rows : seqs_of(s);

	return s->bucket && s->bucket < n ? s->bucket : n;
}

uint64_t plan_prog_bytes(uint32_t n_layers, bool hybrid)
{
	return sizeof(struct rk1828_program) +
	       (uint64_t)n_layers * (hybrid ? sizeof(struct rk1828_prog_hlayer) :
				     sizeof(struct rk1828_prog_layer));
}

uint64_t plan_block_bytes(const struct llm_model *m, uint32_t l,
			  const struct plan_sizes *s)
{
	const struct llm_layer *L = &m->layers[l];
	const struct gguf_tensor *mats[] = {
		L->wq, L->wk, L->wv, L->wo, L->ffn_gate, L->ffn_up, L->ffn_down,
		L->ssm_qkv, L->ssm_gate, L->ssm_beta, L->ssm_alpha, L->ssm_out,
	};
	const struct gguf_tensor *vecs[] = {
		L->attn_norm, L->bq, L->bk, L->bv, L->q_norm, L->k_norm, L->ffn_norm,
		L->ssm_conv, L->ssm_dt, L->ssm_a, L->ssm_norm,
	};
	uint64_t w = 0, state;
	size_t i;

	for (i = 0; i < sizeof(mats) / sizeof(mats[0]); i++)
		w = sadd(w, talign(llm_tensor_card_bytes(mats[i], false)));
	for (i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++)
		w = sadd(w, talign(llm_tensor_card_bytes(vecs[i], true)));
	/* Its entry in each slot's program. */
	w = sadd(w, smul(slots_of(s), plan_prog_bytes(1, llm_model_hybrid(m)) -
			 sizeof(struct rk1828_program)));
	if (L->kind == LLM_LAYER_DELTANET)
		state = smul(sadd(seqs_of(s), s->n_snap),
			     sadd(talign(llm_conv_state_bytes(m)), talign(llm_ssm_state_bytes(m))));
	else
		state = smul(seqs_of(s), llm_kv_bytes(m, s->n_ctx, s->kv_type));
	return sadd(w, state);
}

uint64_t plan_head_bytes(const struct llm_model *m, const struct plan_sizes *s)
{
	uint64_t rows = smul(smul(logit_rows(s), m->n_vocab), sizeof(float));

	return sadd(sadd(talign(llm_tensor_card_bytes(m->output_norm, true)),
			 talign(llm_tensor_card_bytes(m->output, false))),
		    smul(slots_of(s), plan_align(rows)));
}

uint64_t plan_card_overhead(const struct llm_model *m, const struct plan_sizes *s)
{
	uint64_t act = plan_align(smul(smul(s->bucket, m->dim), sizeof(float)));
	uint64_t prog = sadd(sizeof(struct rk1828_program),
			     smul(s->bucket, sizeof(struct rk1828_prog_token)));

	/* In and out per slot, program headers and token tables, BO rounding slack. */
	return sadd(sadd(smul(2ULL * slots_of(s), act), plan_align(smul(slots_of(s), prog))),
		    (2ULL * slots_of(s) + 2) * 4096);
}

uint64_t plan_seg_need(const struct llm_model *m, const struct plan_seg *seg, int n_segs,
		       const struct plan_sizes *s)
{
	struct plan_sizes sz = *s;
	uint64_t need;
	int l;

	if (!sz.slots)
		sz.slots = plan_slots(n_segs);
	need = plan_card_overhead(m, &sz);
	for (l = seg->first; l < seg->first + seg->count && l < (int)m->n_layers; l++)
		need = sadd(need, plan_block_bytes(m, (uint32_t)l, &sz));
	return seg->output ? sadd(need, plan_head_bytes(m, &sz)) : need;
}

int plan_model(const struct llm_model *m, const struct plan_sizes *s,
	       int n_cards, const uint64_t *card_free, const int *card_ids,
	       struct plan *p, char *err, size_t errlen)
{
	struct plan_sizes sz = *s;
	struct plan_input in = { 0 };
	uint64_t *bb = calloc(m->n_layers ? m->n_layers : 1, sizeof(*bb));
	uint32_t l;
	int ret;

	if (!bb)
		return fail(err, errlen, "planner: out of memory");
	if (!llm_kv_type_ok(m, sz.kv_type)) {
		free(bb);
		if (err && errlen)
			snprintf(err, errlen,
				 "planner: K/V type %s cannot store this model's rows of %u values (the K/V types that can: f32, f16%s)",
				 quant_kv_type_name(sz.kv_type), m->n_kv_heads * m->head_dim,
				 (m->n_kv_heads * m->head_dim) % 32 ? "" : ", q8_0, q4_0");
		return -1;
	}
	if (!sz.slots)
		sz.slots = plan_slots(n_cards < (int)m->n_layers ? n_cards : (int)m->n_layers);
	in.n_blocks = (int)m->n_layers;
	in.head_bytes = plan_head_bytes(m, &sz);
	in.card_overhead = plan_card_overhead(m, &sz);
	in.n_cards = n_cards;
	in.card_free = card_free;
	in.card_ids = card_ids;
	for (l = 0; l < m->n_layers; l++)
		bb[l] = plan_block_bytes(m, l, &sz);
	in.block_bytes = bb;
	ret = plan_make(&in, p, err, errlen);
	free(bb);
	return ret;
}

/*
 * The least load of @k adjacent blocks on one card of @n (@bb: each block's
 * bytes; the window with the last block also holds the head); *@first
 * its first block.
 */
static uint64_t least_window(const uint64_t *bb, int L, int k, uint64_t over, uint64_t head,
			     int *first)
{
	uint64_t best = UINT64_MAX, sum = 0;
	int l;

	*first = 0;
	for (l = 0; l < L; l++) {
		sum = sadd(sum, bb[l]);
		if (l >= k)
			sum -= bb[l - k];	/* sum did not saturate: the caller checked */
		if (l >= k - 1) {
			uint64_t load = sadd(sadd(sum, over), l == L - 1 ? head : 0);

			if (load < best) {
				best = load;
				*first = l - k + 1;
			}
		}
	}
	return best;
}

/* The single block whose load alone is largest (the last one with the head). */
static int worst_block(const uint64_t *bb, int L, uint64_t over, uint64_t head,
		       uint64_t card_free, uint64_t *worst, int *n_over)
{
	int l, at = 0;

	*worst = 0;
	*n_over = 0;
	for (l = 0; l < L; l++) {
		uint64_t load = sadd(sadd(bb[l], over), l == L - 1 ? head : 0);

		*n_over += load > card_free;
		if (load > *worst) {
			*worst = load;
			at = l;
		}
	}
	return at;
}

/* plan_nofit_reason()'s case of a block too large for a card alone. */
static void nofit_block(const struct llm_model *m, const struct plan_sizes *sz, int at,
			uint64_t worst, int n_over, uint64_t over, uint64_t card_free,
			char *buf, size_t size, char *hint, size_t hint_size)
{
	int L = (int)m->n_layers;
	/* The KV cache of that block (a DeltaNet block's state does not grow with ctx). */
	uint64_t kv = m->layers[at].kind == LLM_LAYER_DELTANET ? 0 :
		      smul(seqs_of(sz), llm_kv_bytes(m, sz->n_ctx, sz->kv_type));
	char a[32], b[32];

	util_fmt_bytes(a, sizeof(a), worst);
	util_fmt_bytes(b, sizeof(b), card_free);
	snprintf(buf, size, "blk %d%s alone needs %s, more than a card's %s (a block is never split over cards; %d of the %d blocks %s too large for one)",
		 at, at == L - 1 ? " + output" : "", a, b, n_over, L, n_over == 1 ? "is" : "are");
	util_fmt_bytes(a, sizeof(a), kv);
	util_fmt_bytes(b, sizeof(b), over);
	snprintf(hint, hint_size, "larger cards (--card-mem); of what blk %d needs, its KV cache is %s at ctx %u (--ctx) and the card's buffers %s at bucket %u (--bucket)",
		 at, a, sz->n_ctx, b, sz->bucket);
}

void plan_nofit_reason(const struct llm_model *m, const struct plan_sizes *s, int max_cards,
		       uint64_t card_free, char *buf, size_t size, char *hint, size_t hint_size)
{
	struct plan_sizes sz = *s;
	int L = (int)m->n_layers, n = max_cards < L ? max_cards : L, at, n_over, k, l;
	uint64_t over, head, worst, total, least, *bb = calloc(L ? L : 1, sizeof(*bb));
	char a[32], b[32], c[32];

	if (!bb || n < 1) {
		snprintf(buf, size, "%s", n < 1 ? "no cards" : "out of memory");
		snprintf(hint, hint_size, "-");
		free(bb);
		return;
	}
	if (!sz.slots)
		sz.slots = plan_slots(n);
	over = plan_card_overhead(m, &sz);
	head = plan_head_bytes(m, &sz);
	total = head;
	for (l = 0; l < L; l++) {
		bb[l] = plan_block_bytes(m, (uint32_t)l, &sz);
		total = sadd(total, bb[l]);
	}
	total = sadd(total, smul((uint64_t)n, over));
	at = worst_block(bb, L, over, head, card_free, &worst, &n_over);
	util_fmt_bytes(b, sizeof(b), card_free);
	k = (L + n - 1) / n;	/* some card holds this many blocks */
	if (worst > card_free) {
		nofit_block(m, &sz, at, worst, n_over, over, card_free, buf, size, hint, hint_size);
	} else if (total != UINT64_MAX && k > 1 &&
		   (least = least_window(bb, L, k, over, head, &at)) > card_free) {
		util_fmt_bytes(a, sizeof(a), least);
		snprintf(buf, size, "on %d cards, the most planned, some card holds %d of the %d blocks, and the least any %d adjacent blocks need on one card is %s (blk %d-%d), more than a card's %s",
			 n, k, L, k, a, at, at + k - 1, b);
		snprintf(hint, hint_size, "larger cards (--card-mem) or a smaller --ctx (now %u)",
			 sz.n_ctx);
	} else {
		util_fmt_bytes(a, sizeof(a), total);
		util_fmt_bytes(c, sizeof(c), smul((uint64_t)n, card_free));
		if (total > smul((uint64_t)n, card_free))
			snprintf(buf, size, "the model needs %s on %d cards, the most planned; %d cards of %s hold %s",
				 a, n, n, b, c);
		else
			snprintf(buf, size, "the model needs %s on %d cards of %s, but no split into %d contiguous segments fits (the blocks are too uneven)",
				 a, n, b, n);
		snprintf(hint, hint_size, "larger cards (--card-mem) or a smaller --ctx (now %u)",
			 sz.n_ctx);
	}
	free(bb);
}
