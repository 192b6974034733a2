// SPDX-License-Identifier: MIT
/*
 * The one fitting policy (planner.h, plan_fit()): the sizes a plan starts
 * from and what is given up, in which order, when the model does not fit
 * the cards. rk1828-llm plan, run and chat plan through it and hand the
 * plan to the engine; the engine that serve creates plans through it too,
 * so every command prints the plan that runs.
 */
#include "planner.h"
#include "plan_time.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "rk1828/quant_blocks.h"

/* The K/V types, widest first (--kv-type auto tries them in this order). */
static const struct {
	const char *name;
	int type;
} kv_types[] = {
	{ "f32", QUANT_TYPE_F32 },
	{ "f16", QUANT_TYPE_F16 },
	{ "q8_0", QUANT_TYPE_Q8_0 },
	{ "q4_0", QUANT_TYPE_Q4_0 },
};


#define N_KV_TYPES (sizeof(kv_types) / sizeof(kv_types[0]))


void plan_fit_sizes(const struct llm_model *m, const struct plan_fit_opts *o,
		    struct plan_sizes *sz)
{
	uint32_t n = o->n_seq ? o->n_seq : 1;

	if (o->max_seq && n > o->max_seq)
		n = o->max_seq;
	*sz = (struct plan_sizes){ 0 };
	sz->n_ctx = o->n_ctx ? o->n_ctx :
		    (m->n_ctx_train < PLAN_DEFAULT_CTX ? m->n_ctx_train : PLAN_DEFAULT_CTX);
	sz->bucket = o->bucket ? o->bucket : PLAN_DEFAULT_BUCKET;
	if (sz->bucket > sz->n_ctx)
		sz->bucket = sz->n_ctx;
	sz->n_seq = n;
	sz->n_snap = n * o->snaps_per_seq;
	sz->max_rows = o->rows_per_seq > 1 ? n * o->rows_per_seq : 0;
	sz->bo_align = o->bo_align;
	sz->kv_type = o->kv_type == PLAN_KV_AUTO ? QUANT_TYPE_F32 : o->kv_type;
}

/* Snapshot blocks a sequence of @sz (0: none, or no sequences). */
static uint32_t snaps_each(const struct plan_sizes *sz)
{
	return sz->n_seq ? sz->n_snap / sz->n_seq : 0;
}

/* What plan_fit() lowered, into @note (NULL: nothing said). */
static void fit_note(const struct plan_fit_opts *o, const struct plan_sizes *sz0,
		     const struct plan_sizes *sz, char *note, size_t notelen)
{
	uint32_t want = o->n_seq ? o->n_seq : 1;
	size_t l;

	if (!note || !notelen)
		return;
	note[0] = '\0';
	if (sz->n_seq < want && sz0->n_seq < want && sz->n_seq == sz0->n_seq)
		snprintf(note, notelen, "%u slots (--parallel %u): this pipeline runs at most %u",
			 want, want, sz0->n_seq);
	else if (sz->n_seq < want)
		snprintf(note, notelen,
			 "%u slots (--parallel %u) do not fit the cards' memory with a context of %u; using %u",
			 want, want, sz->n_ctx, sz->n_seq);
	else if (sz->bucket < sz0->bucket)
		snprintf(note, notelen,
			 "bucket lowered from %u to %u to fit the cards' memory (--bucket to choose)",
			 sz0->bucket, sz->bucket);
	if (snaps_each(sz) >= o->snaps_per_seq)
		return;
	l = strlen(note);
	snprintf(note + l, notelen - l,
		 "%sstate snapshots lowered from %u to %u a slot to fit the cards' memory (fewer prefix-cache checkpoints)",
		 l ? "; " : "", o->snaps_per_seq, snaps_each(sz));
}

/*
 * plan_model_split() at @sz with the most snapshots a sequence that fit:
 * @o->snaps_per_seq, then one fewer down to the optional ones' floor.
 */
static int fit_snaps(const struct llm_model *m, const struct plan_fit_opts *o, int n_cards,
		     const uint64_t *card_free, const int *card_ids, struct plan_sizes *sz,
		     struct plan *p, char *err, size_t errlen)
{
	uint32_t k = o->snaps_per_seq;
	uint32_t lo = o->snaps_optional < k ? k - o->snaps_optional : 0;
	int ret;

	for (;;) {
		sz->n_snap = sz->n_seq * k;
		ret = plan_model_split(m, sz, o->split, o->timing, n_cards, card_free, card_ids,
				       p, err, errlen);
		if (ret != PLAN_NOFIT || k <= lo)
			return ret;
		k--;
	}
}

/* plan_fit() at one K/V type (@o->kv_type is never PLAN_KV_AUTO here). */
static int fit_one(const struct llm_model *m, const struct plan_fit_opts *o, int n_cards,
		   const uint64_t *card_free, const int *card_ids, struct plan_sizes *sz,
		   struct plan *p, char *note, size_t notelen, char *err, size_t errlen)
{
	struct plan_sizes sz0;
	int ret;

	if (!llm_kv_type_ok(m, o->kv_type)) {
		if (err && errlen)
			snprintf(err, errlen,
				 "--kv-type %s: the K/V rows of %u values (n_kv_heads %u x head_dim %u) are not whole blocks of %u",
				 quant_kv_type_name(o->kv_type), m->n_kv_heads * m->head_dim,
				 m->n_kv_heads, m->head_dim, quant_block_size(o->kv_type));
		return -1;
	}

	plan_fit_sizes(m, o, &sz0);
	*sz = sz0;
	for (;;) {
		/* The refusal reported is the last: what the smallest sizes need. */
		ret = fit_snaps(m, o, n_cards, card_free, card_ids, sz, p, err, errlen);
		if (ret != PLAN_NOFIT)
			break;
		if (sz->n_seq > 1 && !o->strict_seq) {
			sz->n_seq--;
			if (o->rows_per_seq > 1)
				sz->max_rows = sz->n_seq * o->rows_per_seq;
		} else if (!o->bucket && sz->bucket > 1) {
			sz->bucket /= 2;
		} else {
			if (sz0.n_seq > 1 && !o->strict_seq && err && errlen) {
				size_t l = 0;

				while (l < errlen - 1 && err[l])
					l++;
				snprintf(err + l, errlen - l, " (even with 1 slot)");
			}
			break;
		}
	}
	if (!ret)
		fit_note(o, &sz0, sz, note, notelen);
	return ret;
}

/*
 * --kv-type auto: the widest type at which the asked sequences and
 * context fit; else the narrowest the model can store, with the usual
 * lowering. The note says which was chosen and why.
 */
static int fit_auto(const struct llm_model *m, const struct plan_fit_opts *o, int n_cards,
		    const uint64_t *card_free, const int *card_ids, struct plan_sizes *sz,
		    struct plan *p, char *note, size_t notelen, char *err, size_t errlen)
{
	struct plan_fit_opts t = *o;
	char wider[64] = "", inner[256];
	size_t i, len = 0;
	int ret = PLAN_NOFIT, last = -1;

	t.strict_seq = true;
	for (i = 0; i < N_KV_TYPES; i++) {
		if (!llm_kv_type_ok(m, kv_types[i].type))
			continue;
		last = kv_types[i].type;
		t.kv_type = last;
		ret = fit_one(m, &t, n_cards, card_free, card_ids, sz, p, inner, sizeof(inner),
			      err, errlen);
		if (ret != PLAN_NOFIT)
			break;
		len += snprintf(wider + len, sizeof(wider) - len, "%s%s", len ? ", " : "",
				kv_types[i].name);
		if (len >= sizeof(wider))
			len = sizeof(wider) - 1;
	}
	if (ret == PLAN_NOFIT && last >= 0 && !o->strict_seq) {
		t = *o;
		t.kv_type = last;
		ret = fit_one(m, &t, n_cards, card_free, card_ids, sz, p, inner, sizeof(inner),
			      err, errlen);
	}
	if (ret || !note || !notelen)
		return ret;
	if (len)
		snprintf(note, notelen, "--kv-type auto: K/V cache %s (%s %s not fit %u slots of context %u)%s%s",
			 quant_kv_type_name(sz->kv_type), wider, strchr(wider, ',') ? "do" : "does",
			 o->n_seq ? o->n_seq : 1, sz->n_ctx, inner[0] ? "; " : "", inner);
	else
		snprintf(note, notelen, "--kv-type auto: K/V cache %s (the widest; it fits)%s%s",
			 quant_kv_type_name(sz->kv_type), inner[0] ? "; " : "", inner);
	return ret;
}

int plan_fit(const struct llm_model *m, const struct plan_fit_opts *o, int n_cards,
	     const uint64_t *card_free, const int *card_ids, struct plan_sizes *sz,
	     struct plan *p, char *note, size_t notelen, char *err, size_t errlen)
{
	if (o->kv_type == PLAN_KV_AUTO)
		return fit_auto(m, o, n_cards, card_free, card_ids, sz, p, note, notelen,
				err, errlen);
	return fit_one(m, o, n_cards, card_free, card_ids, sz, p, note, notelen, err, errlen);
}
