// SPDX-License-Identifier: MIT
/*
 * Engine setup: options, the segment plan for S sessions (lowering S, and
 * an implicit bucket, until the cards hold it), the pipeline, and the
 * engine thread's buffers.
 */
#include "engine_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "tokenizer.h"
#include "rk1828/util.h"

#define DEFAULT_CTX	4096

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
	if (!e->o.n_ctx)
		e->o.n_ctx = e->m->n_ctx_train < DEFAULT_CTX ? e->m->n_ctx_train : DEFAULT_CTX;
	e->info.n_ctx = e->o.n_ctx;
	e->info.bucket = e->o.bucket ? e->o.bucket : ENGINE_DEFAULT_BUCKET;
	if (e->info.bucket > e->info.n_ctx)
		e->info.bucket = e->info.n_ctx;
	e->info.queue_max = e->o.queue_max < 0 ? 0 : e->o.queue_max;
	e->info.n_vocab = e->m->n_vocab;
	return 0;
}

/* Logits rows of a micro-batch for @S sessions: one each, or verify passes. */
static uint32_t spec_rows(const struct engine *e, int S)
{
	uint32_t r = (uint32_t)S * (uint32_t)(1 + e->o.draft_max);

	return r < e->info.bucket ? r : e->info.bucket;
}

/*
 * Plan for S sessions, S from o.n_slots down to 1 (unless strict); with
 * one session that does not fit, halve an implicit bucket. The plan's
 * card indices become indices into the caller's card array.
 */
static int plan_slots_fit(struct engine *e, struct rk_card *cards, const int *idx, int n_cards,
			  char *err, size_t errlen)
{
	uint64_t free_b[PLAN_MAX_CARDS];
	int ids[PLAN_MAX_CARDS], i, S = e->o.n_slots < PIPE_MAX_SEQ ? e->o.n_slots : PIPE_MAX_SEQ;
	struct plan_sizes sz = { .n_ctx = e->info.n_ctx, .bucket = e->info.bucket };
	char msg[96 * PLAN_MAX_CARDS + 256], first[sizeof(msg)] = "";
	int ret;

	if (n_cards < 1 || n_cards > PLAN_MAX_CARDS)
		return util_err(err, errlen, -EINVAL, "%d cards: must be 1..%d", n_cards,
				PLAN_MAX_CARDS);
	for (i = 0; i < n_cards; i++) {
		struct rk_card *c = &cards[idx ? idx[i] : i];

		if (rk_card_refresh(c))
			return util_err(err, errlen, -EIO, "%s", rk_error());
		free_b[i] = c->mem_free;
		ids[i] = c->index;
	}
	for (;;) {
		sz.n_seq = (uint32_t)S;
		sz.n_snap = e->hybrid ? (uint32_t)(S * (ENG_SNAPS + e->n_spec_blk)) : 0;
		sz.max_rows = spec_rows(e, S);
		ret = plan_model(e->m, &sz, n_cards, free_b, ids, &e->plan, msg, sizeof(msg));
		if (!ret)
			break;
		if (ret != PLAN_NOFIT)
			return util_err(err, errlen, -EINVAL, "%s", msg);
		if (!first[0])
			snprintf(first, sizeof(first), "%s", msg);
		if (S > 1 && !e->o.strict_slots) {
			S--;
			continue;
		}
		if (!e->o.bucket && sz.bucket > 1 && (S == 1 || e->o.strict_slots)) {
			sz.bucket /= 2;
			continue;
		}
		return util_err(err, errlen, -ENOSPC, "%s%s", first,
				e->o.strict_slots || e->o.n_slots == 1 ? "" : " (even with 1 slot)");
	}
	if (S < e->o.n_slots && e->o.n_slots > PIPE_MAX_SEQ && S == PIPE_MAX_SEQ)
		snprintf(e->info.note, sizeof(e->info.note),
			 "%d slots (--parallel %d): this pipeline runs at most %d", e->o.n_slots,
			 e->o.n_slots, PIPE_MAX_SEQ);
	else if (S < e->o.n_slots)
		snprintf(e->info.note, sizeof(e->info.note),
			 "%d slots (--parallel %d) do not fit the cards' memory with a context of %u; using %d",
			 e->o.n_slots, e->o.n_slots, e->info.n_ctx, S);
	else if (sz.bucket < e->info.bucket)
		snprintf(e->info.note, sizeof(e->info.note),
			 "bucket lowered from %u to %u to fit the cards' memory", e->info.bucket,
			 sz.bucket);
	e->info.n_slots = S;
	e->info.bucket = sz.bucket;
	for (i = 0; i < e->plan.n_segs; i++)
		e->plan.seg[i].card = idx ? idx[e->plan.seg[i].card] : e->plan.seg[i].card;
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
	if ((int)spec_rows(e, S) > e->max_rows)
		e->max_rows = (int)spec_rows(e, S);
	e->snaps = calloc((size_t)S, sizeof(*e->snaps));
	e->logits = malloc((size_t)e->max_rows * e->m->n_vocab * sizeof(float));
	e->piece_cap = tok_max_piece(e->tok);
	e->piece = malloc(e->piece_cap);
	if (!e->slots || !e->run || !e->mb || !e->ptok || !e->logits || !e->piece || !e->snaps)
		return -ENOMEM;
	for (i = 0; i < S; i++) {
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
	if (ret)
		goto fail;
	if (e->o.verbose)
		fprintf(stderr, "engine: %d slots, ctx %u, bucket %u; plan %s%s%s\n",
			e->info.n_slots, e->info.n_ctx, e->info.bucket, e->info.plan,
			e->info.note[0] ? "; " : "", e->info.note);
	ret = -ENOMEM;
	if (alloc_buffers(e)) {
		util_err(err, errlen, ret, "out of host memory");
		goto fail;
	}
	po.n_ctx = e->info.n_ctx;
	po.bucket = e->info.bucket;
	po.n_seq = (uint32_t)e->info.n_slots;
	po.n_snap = eng_hybrid_snaps(e);
	po.max_rows = (uint32_t)e->max_rows;
	po.timeout_ms = e->o.timeout_ms;
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
