// SPDX-License-Identifier: MIT
/*
 * The prefill-balanced split (plan_time.h): a table of every contiguous
 * segment's predicted prefill time, then the planner's two dynamic
 * programs over it (planner.c does the same over bytes): the least
 * achievable largest time among splits whose cards fit their memory, then
 * within it the least sum of squared times.
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_time.h"
#include "predict.h"
#include "rk1828/program.h"

int plan_split_parse(const char *s, enum plan_split *out)
{
	if (!strcmp(s, "bytes"))
		*out = PLAN_SPLIT_BYTES;
	else if (!strcmp(s, "time"))
		*out = PLAN_SPLIT_TIME;
	else
		return -1;
	return 0;
}

const char *plan_split_name(enum plan_split split)
{
	return split == PLAN_SPLIT_BYTES ? "bytes" : split == PLAN_SPLIT_TIME ? "time" : "?";
}

uint32_t plan_time_prompt(uint32_t n_ctx)
{
	return n_ctx && n_ctx < PREDICT_PROMPT ? n_ctx : PREDICT_PROMPT;
}

double plan_seg_prefill_ns(const struct cost_layer *layers, const struct cost_head *head,
			   uint32_t first, uint32_t count, bool last,
			   const struct plan_timing *t, uint32_t prompt, uint32_t bucket)
{
	/* The input COPY's program and token table, as psim_create() sizes them. */
	uint64_t prog = (plan_prog_bytes(count, false) +
			 (uint64_t)bucket * sizeof(struct rk1828_prog_token) + 63) & ~63ULL;
	double ns = 0;
	uint32_t done;

	for (done = 0; bucket && done < prompt; done += bucket) {
		uint32_t nb = prompt - done < bucket ? prompt - done : bucket;
		uint64_t hid = (uint64_t)nb * head->dim * sizeof(float), out = hid;
		struct cost_batch b = { 0 };

		cost_batch_add_seq(&b, nb, done, done + nb == prompt);
		if (last)	/* the logits of the prompt's last token, else 4 bytes */
			out = b.n_logits ? (uint64_t)b.n_logits * head->n_vocab * sizeof(float) : 4;
		ns += cost_link_ns(t->prof, t->link, prog + hid) +
		      cost_exec_ns(t->prof, layers + first, count, last ? head : NULL, &b) +
		      cost_link_ns(t->prof, t->link, out);
	}
	return ns;
}

/* @t with the built-in profile when it names none (in @own); -1: none parses. */
static int timing_of(const struct plan_timing *t, struct plan_timing *use,
		     struct card_profile *own)
{
	char err[256];

	use->link = t ? t->link : COST_LINK_PCIE;
	use->prof = t ? t->prof : NULL;
	if (use->prof)
		return 0;
	if (card_profile_builtin(own, err, sizeof(err)))
		return -1;
	use->prof = own;
	return 0;
}

/* The model's layers and head for the cost function; NULL: out of memory. */
static struct cost_layer *cost_model(const struct llm_model *m, struct cost_head *head)
{
	struct cost_layer *layers = calloc(m->n_layers ? m->n_layers : 1, sizeof(*layers));
	uint32_t l;

	if (!layers)
		return NULL;
	for (l = 0; l < m->n_layers; l++)
		predict_cost_layer(m, l, &layers[l]);
	predict_cost_head(m, head);
	return layers;
}

int plan_prefill_ms(const struct llm_model *m, const struct plan *p,
		    const struct plan_sizes *sz, const struct plan_timing *t, double *ms)
{
	struct card_profile own;
	struct plan_timing use;
	struct cost_head head;
	struct cost_layer *layers;
	int k;

	if (timing_of(t, &use, &own))
		return -1;
	layers = cost_model(m, &head);
	if (!layers)
		return -1;
	for (k = 0; k < p->n_segs; k++)
		ms[k] = plan_seg_prefill_ns(layers, &head, (uint32_t)p->seg[k].first,
					    (uint32_t)p->seg[k].count, p->seg[k].output, &use,
					    plan_time_prompt(sz->n_ctx), sz->bucket) / 1e6;
	free(layers);
	return 0;
}

/**
 * struct tsplit - the time split's tables
 * @L: blocks
 * @n: cards used
 * @ns: (L + 1)^2, ns[a * (L + 1) + b]: prefill time of blocks [a, b)
 *	(with the head when b == L)
 * @prefix: L + 1 prefix sums of the blocks' bytes
 * @over, @head: each card's buffers, and the last card's head, bytes
 * @card_free: each card's free bytes
 */
struct tsplit {
	int L, n;
	double *ns;
	uint64_t *prefix;
	uint64_t over, head;
	const uint64_t *card_free;
};

static double seg_ns(const struct tsplit *t, int a, int b)
{
	return t->ns[(size_t)a * (t->L + 1) + b];
}

/* Does blocks [a, b) fit card j? (The load as planner.c's seg_load().) */
static bool seg_fits(const struct tsplit *t, int j, int a, int b)
{
	uint64_t load = t->prefix[b] - t->prefix[a] + t->over + (b == t->L ? t->head : 0);

	return load <= t->card_free[j];
}

/*
 * One dynamic program over (cards, blocks): with @cap < 0, dp is the least
 * largest time; else, among segments of at most @cap, the least sum of
 * squares (@cut: the start of each card's segment; ties keep the
 * largest start, as planner.c). Return: dp of all blocks on n cards
 * (DBL_MAX: infeasible).
 */
static double tdp(const struct tsplit *t, double cap, double *dp, int *cut)
{
	int L = t->L, n = t->n, j, i, a;

#define DP(j, i) dp[(size_t)(j) * (L + 1) + (i)]
	for (j = 0; j <= n; j++)
		for (i = 0; i <= L; i++)
			DP(j, i) = DBL_MAX;
	DP(0, 0) = 0;
	for (j = 1; j <= n; j++)
		for (i = j; i <= L - (n - j); i++)
			for (a = j - 1; a < i; a++) {
				double x = seg_ns(t, a, i), v;

				if (DP(j - 1, a) == DBL_MAX || !seg_fits(t, j - 1, a, i) ||
				    (cap >= 0 && x > cap))
					continue;
				v = cap < 0 ? (DP(j - 1, a) > x ? DP(j - 1, a) : x) :
				    DP(j - 1, a) + x * x;
				if (cap < 0 ? v < DP(j, i) : v <= DP(j, i)) {
					DP(j, i) = v;
					if (cut)
						cut[(size_t)j * (L + 1) + i] = a;
				}
			}
	return DP(n, L);
#undef DP
}

/* Fill @t's time table for @m; -1: out of memory or no profile. */
static int tsplit_times(struct tsplit *t, const struct llm_model *m, const struct plan_sizes *sz,
			const struct plan_timing *timing)
{
	struct card_profile own;
	struct plan_timing use;
	struct cost_head head;
	struct cost_layer *layers;
	int a, b;

	if (timing_of(timing, &use, &own))
		return -1;
	layers = cost_model(m, &head);
	if (!layers)
		return -1;
	for (a = 0; a < t->L; a++)
		for (b = a + 1; b <= t->L; b++)
			t->ns[(size_t)a * (t->L + 1) + b] =
				plan_seg_prefill_ns(layers, &head, (uint32_t)a, (uint32_t)(b - a),
						    b == t->L, &use, plan_time_prompt(sz->n_ctx),
						    sz->bucket);
	free(layers);
	return 0;
}

/* Replace @p's segments (a fitting bytes plan) by the time split's. */
static int split_by_time(const struct llm_model *m, const struct plan_sizes *s,
			 const struct plan_timing *timing, const uint64_t *card_free,
			 struct plan *p)
{
	struct tsplit t = { .L = (int)m->n_layers, .n = p->n_segs, .card_free = card_free };
	struct plan_sizes sz = *s;
	size_t cells = (size_t)(t.L + 1) * (t.L + 1);
	double *dp = NULL, best;
	int *cut = NULL, ret = -1, j, i, l;

	if (!sz.slots)
		sz.slots = plan_slots(t.n);
	t.ns = calloc(cells, sizeof(*t.ns));
	t.prefix = calloc((size_t)t.L + 1, sizeof(*t.prefix));
	dp = calloc(cells, sizeof(*dp));
	cut = calloc(cells, sizeof(*cut));
	if (!t.ns || !t.prefix || !dp || !cut || tsplit_times(&t, m, &sz, timing))
		goto out;
	for (l = 0; l < t.L; l++)	/* planner.c checked these sums do not overflow */
		t.prefix[l + 1] = t.prefix[l] + plan_block_bytes(m, (uint32_t)l, &sz);
	t.over = plan_card_overhead(m, &sz);
	t.head = plan_head_bytes(m, &sz);
	best = tdp(&t, -1, dp, NULL);
	if (best == DBL_MAX || tdp(&t, best, dp, cut) == DBL_MAX)
		goto out;	/* cannot be: the bytes plan fits */
	for (j = t.n, i = t.L; j >= 1; j--) {
		struct plan_seg *sg = &p->seg[j - 1];
		int a = cut[(size_t)j * (t.L + 1) + i];

		sg->first = a;
		sg->count = i - a;
		sg->bytes = t.prefix[i] - t.prefix[a] + t.over + (i == t.L ? t.head : 0);
		i = a;
	}
	ret = 0;
out:
	free(t.ns);
	free(t.prefix);
	free(dp);
	free(cut);
	return ret;
}

int plan_model_split(const struct llm_model *m, const struct plan_sizes *s,
		     enum plan_split split, const struct plan_timing *t,
		     int n_cards, const uint64_t *card_free, const int *card_ids,
		     struct plan *p, char *err, size_t errlen)
{
	int ret = plan_model(m, s, n_cards, card_free, card_ids, p, err, errlen);

	/* A bytes plan that fits: some split fits, so the time split exists. */
	if (ret || split != PLAN_SPLIT_TIME)
		return ret;
	if (split_by_time(m, s, t, card_free, p)) {
		if (err && errlen)
			snprintf(err, errlen, "planner: --split time: out of memory or no card profile");
		return -1;
	}
	return 0;
}
