// SPDX-License-Identifier: MIT
/*
 * Engine setup: options, the segment plan (the caller's, or plan_fit()'s
 * for S sessions: lowering S, then an implicit bucket, until the cards
 * hold it), the pipeline, and the engine thread's buffers.
 */
#include "engine_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "tokenizer.h"
#include "rk1828/util.h"

void engine_fit_opts(const struct llm_model *m, const struct engine_opts *o,
		     struct plan_fit_opts *fo)
{
	*fo = (struct plan_fit_opts){
		.n_ctx = o->n_ctx,
		.bucket = o->bucket,
		.n_seq = o->n_slots > 0 ? (uint32_t)o->n_slots : ENGINE_DEFAULT_SLOTS,
		.max_seq = PIPE_MAX_SEQ,
		.snaps_per_seq = llm_model_hybrid(m) ? ENG_SNAPS + eng_spec_blocks(m, o) : 0,
		.snaps_optional = llm_model_hybrid(m) ? ENG_SNAPS - ENGINE_SNAPS_MIN_PER_SLOT : 0,
		.rows_per_seq = eng_spec_rows(o),
		.strict_seq = o->strict_slots,
		.split = o->split,
		.timing = o->timing,
		.kv_type = o->kv_type,
	};
}

/* Fill in defaults and check ranges. */
static int settle_opts(struct engine *e, const struct engine_opts *o, char *err, size_t errlen)
{
	if (o)
		e->o = *o;
	if (e->o.n_slots == 0)
		e->o.n_slots = ENGINE_DEFAULT_SLOTS;
	if (e->o.n_slots < 1 || e->o.n_slots > ENGINE_MAX_SLOTS)
		return util_err(err, errlen, -EINVAL, "--parallel %d: must be 1..%d", e->o.n_slots,
				ENGINE_MAX_SLOTS);
	if (e->o.queue_max == 0)
		e->o.queue_max = ENGINE_DEFAULT_QUEUE;
	if (e->o.queue_max < -1)
		return util_err(err, errlen, -EINVAL, "--queue %d: must be >= 0", e->o.queue_max);
	if (!e->o.plan != !e->o.sizes)
		return util_err(err, errlen, -EINVAL, "engine: a plan needs its sizes");
	e->info.queue_max = e->o.queue_max < 0 ? 0 : e->o.queue_max;
	e->info.n_vocab = e->m->n_vocab;
	return 0;
}

/*
 * The checkpoints a slot of a plan of @sz has (the snapshots past the
 * verify pass's blocks), or -1 when its snapshots are not a whole number
 * a slot in ENGINE_SNAPS_MIN_PER_SLOT..ENG_SNAPS checkpoints (0 for a
 * model without recurrent states, whose plans have none).
 */
static int plan_ckpts(const struct engine *e, const struct plan_sizes *sz)
{
	uint32_t each, spec = (uint32_t)e->n_spec_blk;

	if (!e->hybrid)
		return sz->n_snap ? -1 : 0;
	if (!sz->n_seq || sz->n_snap % sz->n_seq)
		return -1;
	each = sz->n_snap / sz->n_seq;
	if (each < spec + ENGINE_SNAPS_MIN_PER_SLOT || each > spec + ENG_SNAPS)
		return -1;
	return (int)(each - spec);
}

/*
 * A caller's plan (engine_opts.plan): sizes the engine can run (its slots,
 * a bucket within the context, the snapshots of engine_fit_opts(): its
 * checkpoints, maybe fewer, and the verify pass's blocks) and segments on
 * the cards offered.
 */
static int check_given(struct engine *e, int n_cards, struct plan_sizes *sz, char *err,
		       size_t errlen)
{
	const struct plan *p = e->o.plan;
	uint32_t snaps = e->hybrid ? ENG_SNAPS + (uint32_t)e->n_spec_blk : 0;
	int i;

	*sz = *e->o.sizes;
	if (sz->n_seq < 1 || sz->n_seq > PIPE_MAX_SEQ || !sz->n_ctx || !sz->bucket ||
	    sz->bucket > sz->n_ctx || plan_ckpts(e, sz) < 0 ||
	    !llm_kv_type_ok(e->m, sz->kv_type))
		return util_err(err, errlen, -EINVAL,
				"engine: the plan's sizes (%u sequences, ctx %u, bucket %u, %u snapshots) are not ones this engine runs (%u..%u snapshots a slot)",
				sz->n_seq, sz->n_ctx, sz->bucket, sz->n_snap,
				e->hybrid ? snaps - ENG_SNAPS + ENGINE_SNAPS_MIN_PER_SLOT : 0, snaps);
	if (p->n_segs < 1 || p->n_segs > n_cards)
		return util_err(err, errlen, -EINVAL, "engine: the plan has %d segments for %d cards",
				p->n_segs, n_cards);
	for (i = 0; i < p->n_segs; i++)
		if (p->seg[i].card < 0)
			return util_err(err, errlen, -EINVAL, "engine: plan segment %d has no card",
					i);
	e->plan = *p;
	return 0;
}

/*
 * The plan: the caller's (engine_opts.plan), or plan_fit() of
 * engine_fit_opts() on the cards' free memory, whose card indices become
 * indices into the caller's card array.
 */
static int plan_slots_fit(struct engine *e, struct rk_card *cards, const int *idx, int n_cards,
			  char *err, size_t errlen)
{
	uint64_t free_b[PLAN_MAX_CARDS];
	int ids[PLAN_MAX_CARDS], i, ret;
	char msg[96 * PLAN_MAX_CARDS + 256];
	struct plan_fit_opts fo;
	struct plan_sizes sz;

	if (n_cards < 1 || n_cards > PLAN_MAX_CARDS)
		return util_err(err, errlen, -EINVAL, "%d cards: must be 1..%d", n_cards,
				PLAN_MAX_CARDS);
	if (e->o.plan) {
		ret = check_given(e, n_cards, &sz, err, errlen);
		if (ret)
			return ret;
	} else {
		for (i = 0; i < n_cards; i++) {
			struct rk_card *c = &cards[idx ? idx[i] : i];

			if (rk_card_refresh(c))
				return util_err(err, errlen, -EIO, "%s", rk_error());
			free_b[i] = c->mem_free;
			ids[i] = c->index;
		}
		engine_fit_opts(e->m, &e->o, &fo);
		/* BO rounding at the coarsest card's granularity (64K-page kernels). */
		for (i = 0; i < n_cards; i++) {
			uint64_t a = rk_card_bo_align(&cards[idx ? idx[i] : i]);

			if (a > fo.bo_align)
				fo.bo_align = (uint32_t)a;
		}
		ret = plan_fit(e->m, &fo, n_cards, free_b, ids, &sz, &e->plan, e->info.note,
			       sizeof(e->info.note), msg, sizeof(msg));
		if (ret)
			return util_err(err, errlen, ret == PLAN_NOFIT ? -ENOSPC : -EINVAL, "%s",
					msg);
		for (i = 0; i < e->plan.n_segs; i++)
			e->plan.seg[i].card = idx ? idx[e->plan.seg[i].card] : e->plan.seg[i].card;
	}
	ret = plan_ckpts(e, &sz);
	if (ret < 0)	/* plan_fit() of engine_fit_opts() never gives such */
		return util_err(err, errlen, -EINVAL, "engine: %u snapshots for %u slots",
				sz.n_snap, sz.n_seq);
	e->info.n_ckpt = (uint32_t)ret;
	e->info.n_slots = (int)sz.n_seq;
	e->info.n_ctx = sz.n_ctx;
	e->info.bucket = sz.bucket;
	e->info.n_snap = sz.n_snap;
	e->info.kv_type = sz.kv_type;
	e->info.n_cards = e->plan.n_segs;
	plan_format(&e->plan, e->info.plan, sizeof(e->info.plan));
	if (!e->info.note[0] && e->plan.note[0])
		snprintf(e->info.note, sizeof(e->info.note), "%s", e->plan.note);
	if (!e->info.note[0] && e->m->note[0])
		snprintf(e->info.note, sizeof(e->info.note), "%s", e->m->note);
	return 0;
}

/* Buffers of the engine thread. */
static int alloc_buffers(struct engine *e)
{
	int S = e->info.n_slots, B = (int)e->info.bucket, i;

	e->slots = calloc((size_t)S, sizeof(*e->slots));
	e->run = calloc((size_t)S, sizeof(*e->run));
	e->mb = calloc((size_t)B, sizeof(*e->mb));
	e->ptok = calloc((size_t)B, sizeof(*e->ptok));
	if (e->o.trace && !(e->trace_tok = calloc((size_t)B, sizeof(*e->trace_tok))))
		return -ENOMEM;
	e->cost.max = B;
	e->cost.ns = calloc((size_t)B + 1, sizeof(*e->cost.ns));
	if (!e->cost.ns)
		return -ENOMEM;
	e->max_rows = S < B ? S : B;
	if (e->o.spec != SPEC_NONE && S * (1 + e->o.draft_max) > e->max_rows)
		e->max_rows = S * (1 + e->o.draft_max) < B ? S * (1 + e->o.draft_max) : B;
	e->snaps = calloc((size_t)S, sizeof(*e->snaps));
	e->logits = malloc((size_t)e->max_rows * e->m->n_vocab * sizeof(float));
	e->piece_cap = tok_max_piece(e->tok);
	e->piece = malloc(e->piece_cap);
	if (!e->slots || !e->run || !e->mb || !e->ptok || !e->logits || !e->piece || !e->snaps)
		return -ENOMEM;
	for (i = 0; i < S; i++) {
		e->slots[i].kv_type = e->info.kv_type;
		e->slots[i].toks = malloc((size_t)e->info.n_ctx * sizeof(int32_t));
		if (!e->slots[i].toks)
			return -ENOMEM;
	}
	for (i = 0; i < ENG_MAX_FLIGHT; i++) {
		e->fl[i].t = calloc((size_t)B, sizeof(*e->fl[i].t));
		e->fl[i].rq = calloc((size_t)B, sizeof(*e->fl[i].rq));
		if (!e->fl[i].t || !e->fl[i].rq)
			return -ENOMEM;
	}
	return 0;
}

void eng_free(struct engine *e)
{
	int i;

	pipe_destroy(e->pipe);
	if (e->slots)
		for (i = 0; i < e->info.n_slots; i++)
			free(e->slots[i].toks);
	for (i = 0; i < ENG_MAX_FLIGHT; i++) {
		free(e->fl[i].t);
		free(e->fl[i].rq);
	}
	if (!e->o.drafter && e->drafter.close)
		e->drafter.close(&e->drafter);	/* a caller's drafter stays the caller's */
	free(e->slots);
	free(e->snaps);
	free(e->run);
	free(e->mb);
	free(e->ptok);
	free(e->trace_tok);
	free(e->cost.ns);
	free(e->logits);
	free(e->piece);
	eng_json_free(e);
	free(e->ev_ids);
	free(e->ev_lp);
	pthread_mutex_destroy(&e->mu);
	pthread_cond_destroy(&e->cv);
	free(e);
}

int engine_create(struct engine **ep, const struct llm_model *m,
		  const struct tokenizer *tok, struct rk_card *cards,
		  const int *card_idx, int n_cards, const struct engine_opts *o,
		  char *err, size_t errlen)
{
	struct pipe_opts po = { 0 };
	struct engine *e;
	int ret;

	*ep = NULL;
	if (!m || !tok || !cards)
		return util_err(err, errlen, -EINVAL, "engine: no model, tokenizer or cards");
	if (tok_n_vocab(tok) != (int)m->n_vocab)
		return util_err(err, errlen, -EINVAL,
				"tokenizer has %d tokens but token_embd has %u rows",
				tok_n_vocab(tok), m->n_vocab);
	e = calloc(1, sizeof(*e));
	if (!e)
		return util_err(err, errlen, -ENOMEM, "out of host memory");
	e->m = m;
	e->hybrid = llm_model_hybrid(m);
	e->tok = tok;
	e->eos = tok_eos(tok);
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cv, NULL);
	ret = settle_opts(e, o, err, errlen);
	if (!ret)
		ret = eng_spec_setup(e, err, errlen);
	if (!ret)
		ret = plan_slots_fit(e, cards, card_idx, n_cards, err, errlen);
	if (!ret && e->o.spec != SPEC_NONE && e->info.bucket < 2)
		ret = util_err(err, errlen, -EINVAL,
			       "--spec needs a bucket of at least 2 tokens (a verify pass)");
	if (!ret)
		ret = eng_spec_open(e, err, errlen);
	if (ret)
		goto fail;
	if (e->o.verbose)
		fprintf(stderr, "engine: %d slots, ctx %u, bucket %u, KV %s; plan %s%s%s\n",
			e->info.n_slots, e->info.n_ctx, e->info.bucket,
			quant_kv_type_name(e->info.kv_type), e->info.plan,
			e->info.note[0] ? "; " : "", e->info.note);
	ret = -ENOMEM;
	if (alloc_buffers(e)) {
		util_err(err, errlen, ret, "out of host memory");
		goto fail;
	}
	po.n_ctx = e->info.n_ctx;
	po.bucket = e->info.bucket;
	po.n_seq = (uint32_t)e->info.n_slots;
	po.n_snap = eng_hybrid_snaps(e);	/* = info.n_snap, the plan's */
	po.max_rows = (uint32_t)e->max_rows;
	po.timeout_ms = e->o.timeout_ms;
	po.kv_type = e->info.kv_type;
	po.hidden = e->drafter.wants_hidden;	/* --spec mtp: the final hidden rows too */
	po.verbose = e->o.verbose;
	po.progress = e->o.progress;
	po.progress_user = e->o.progress_user;
	if (pipe_create(&e->pipe, m, cards, &e->plan, &po, err, errlen)) {
		ret = -EIO;
		goto fail;
	}
	/* F / T unknown until micro-batches of two sizes came back. */
	e->mb_limit = sched_mb_limit((int)e->info.bucket, pipe_depth(e->pipe), 0);
	e->t_created = eng_now_ms();
	if (eng_start_thread(e)) {
		ret = util_err(err, errlen, -ENOMEM, "cannot start the engine thread");
		goto fail;
	}
	e->thread_started = true;
	*ep = e;
	return 0;
fail:
	eng_free(e);
	return ret;
}
