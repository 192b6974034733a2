// SPDX-License-Identifier: MIT
/*
 * Speculative decoding in the engine (engine.h, spec.h).
 *
 * When a session's decode token is ready, its drafter proposes up to
 * draft_max tokens that would follow (eng_spec_prepare()). The scheduler
 * puts the decode token and as many drafts as the token budget allows into
 * one micro-batch, each with its logits (sched_build(): drafts only fill
 * what the other sessions' decode tokens leave of the budget, so nobody's
 * stream waits longer than without speculation): the verify pass. It goes
 * through the cards like a prefill chunk, and the last card returns the
 * logits of every position. Row j gives the target distribution after
 * the decode token and drafts 1..j; eng_spec_verify() accepts drafts by
 * the rule of spec.h position by position (the sampler's penalties see
 * the accepted tokens before each position), emits each accepted draft,
 * and at the first rejection emits the residual's token; when every draft
 * is accepted the last row gives one more token. So a pass yields 1 to
 * k + 1 tokens.
 *
 * Rollback of the rejected positions: their K/V rows need nothing, since
 * a token at position p attends to rows 0..p only and the next pass
 * overwrites them (the session's position and the slot's prefix-cache
 * record are set back to the accepted tokens). The recurrent (conv and
 * DeltaNet) states of a hybrid model have seen every token of the pass,
 * so the verify pass takes per-position snapshots: after its decode token
 * and each draft but the last, the slot's states are copied on every card
 * into one of the slot's draft_max + 1 spec blocks (PIPE_TOK_SNAPSHOT),
 * and the session's next micro-batch restores the one after the last
 * accepted token (PIPE_TOK_RESTORE on its first token). A restored token
 * cannot also snapshot (both use the token's aux), so a verify pass that
 * starts with a restore has no snapshot after its decode token; when that
 * pass then accepts no draft, the next micro-batch restores the same
 * block again and evaluates the decode token once more before the new one
 * (a replay of one token, SCHED_TOK_REPLAY). Per-position snapshots cost a
 * state copy per token on the card but never an extra pass through the
 * cards, where checkpoint + replay would replay up to k tokens in the
 * next pass; see userspace/doc/runtime.rst, "Speculative decoding".
 */
#include "engine_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rk1828/util.h"

/* --draft-max as eng_spec_setup() settles it (0 without speculation). */
static uint32_t spec_draft_max(const struct engine_opts *o)
{
	if (o->spec == SPEC_NONE || o->draft_max < 0)
		return 0;
	return o->draft_max ? (uint32_t)o->draft_max : ENGINE_DEFAULT_DRAFT_MAX;
}

uint32_t eng_spec_blocks(const struct llm_model *m, const struct engine_opts *o)
{
	uint32_t k = spec_draft_max(o);

	return k && llm_model_hybrid(m) ? k + 1 : 0;
}

uint32_t eng_spec_rows(const struct engine_opts *o)
{
	uint32_t k = spec_draft_max(o);

	return k ? k + 1 : 0;
}

int eng_spec_setup(struct engine *e, char *err, size_t errlen)
{
	struct engine_opts *o = &e->o;

	e->n_spec_blk = 0;
	if (o->spec == SPEC_NONE) {
		o->draft_max = 0;
		o->draft_min = 0;
		return 0;
	}
	if (!o->draft_max)
		o->draft_max = ENGINE_DEFAULT_DRAFT_MAX;
	if (o->draft_max < 1 || o->draft_max > SPEC_MAX_DRAFT)
		return util_err(err, errlen, -EINVAL, "--draft-max %d: must be 1..%d",
				o->draft_max, SPEC_MAX_DRAFT);
	if (o->draft_min < 0 || o->draft_min > o->draft_max)
		return util_err(err, errlen, -EINVAL, "--draft-min %d: must be 0..%d (--draft-max)",
				o->draft_min, o->draft_max);
	if (o->drafter) {
		e->drafter = *o->drafter;
		e->drafter.kind = o->spec;
	} else if (o->spec == SPEC_DRAFT || o->spec == SPEC_MTP) {
		/* Opened by eng_spec_open() once the context is planned. */
		if (o->spec == SPEC_DRAFT && !o->draft_model)
			return util_err(err, errlen, -EINVAL, "--spec draft needs --draft-model FILE");
	} else if (spec_drafter_init(&e->drafter, o->spec)) {
		return util_err(err, errlen, -EINVAL, "--spec: unknown drafter %d", (int)o->spec);
	}
	if (e->hybrid)
		e->n_spec_blk = o->draft_max + 1;
	return 0;
}

int eng_spec_open(struct engine *e, char *err, size_t errlen)
{
	if (e->o.drafter)
		return 0;
	if (e->o.spec == SPEC_MTP)
		return spec_mtp_open(&e->drafter, e->m->gf->path, (int)e->info.n_ctx, err, errlen);
	if (e->o.spec != SPEC_DRAFT)
		return 0;
	return spec_draft_open(&e->drafter, e->o.draft_model, e->tok, e->m->gf->path,
			       (int)e->info.n_ctx, err, errlen);
}

int eng_spec_start(struct engine *e, struct engine_req *q, uint64_t seed)
{
	int k = e->o.draft_max;

	/* q->draft_max / draft_min hold the request's fields until here. */
	if (!k || q->jm || q->draft_max < 0)
		k = 0;
	else if (q->draft_max > 0 && q->draft_max < k)
		k = q->draft_max;
	q->draft_min = q->draft_min > 0 ? q->draft_min : e->o.draft_min;
	q->draft_max = k;
	q->draft_n = 0;
	q->draft_acc = 0;
	q->spec_rb = false;
	spec_rng_seed(&q->rng, seed ^ 0x9e3779b97f4a7c15ULL);
	if (!k)
		return 0;
	free(q->draft);
	q->draft = malloc((size_t)k * sizeof(*q->draft));
	return q->draft ? 0 : -ENOMEM;
}

/* The final hidden state of collected logits row @row (pipe_opts.hidden), or NULL. */
static const float *hidden_of(const struct engine *e, const float *row)
{
	const float *h = e->drafter.wants_hidden ? pipe_hidden(e->pipe) : NULL;

	if (!h || !row)
		return NULL;
	return h + (size_t)((row - e->logits) / e->m->n_vocab) * e->m->dim;
}

void eng_spec_prepare(struct engine *e, struct engine_req *q, const float *row)
{
	struct sched_slot *sl = &e->slots[q->slot];
	int pos = q->sq.pos, k = q->draft_max, nd;
	const float *h = hidden_of(e, row);

	q->sq.n_draft = 0;
	if (!k)
		return;
	/* Drafts must fit the context and the tokens still to generate. */
	if (k > (int)e->info.n_ctx - 1 - pos)
		k = (int)e->info.n_ctx - 1 - pos;
	if (q->max_tokens > 0 && k > q->max_tokens - q->n_gen - 1)
		k = q->max_tokens - q->n_gen - 1;
	if (k < 1 || k < q->draft_min)
		return;
	/* The history: the slot's tokens below pos, then the ready token. */
	sl->toks[pos] = q->sq.next_tok;
	if (e->drafter.wants_hidden && !h)
		return;
	nd = e->drafter.draft(&e->drafter, sl->toks, pos + 1, k, h, q->draft);
	if (nd < 1 || nd < q->draft_min)
		return;
	q->sq.draft = q->draft;
	q->sq.n_draft = nd;
	q->sq.n_min = q->draft_min;
}

/*
 * Keep the decode token at @pos and its first @j drafts of a verify pass
 * of @nd: the session goes on at @pos + 1 + @j; for a hybrid model with
 * @j < @nd the states to resume from (a snapshot, or the pass's own
 * restore plus a replay of @t0).
 */
static void keep(struct engine *e, struct engine_req *q, int pos, int j, int nd, int32_t t0)
{
	struct eng_snaps *sn = &e->snaps[q->slot];

	q->sq.pos = pos + 1 + j;
	e->slots[q->slot].n_toks = pos + 1 + j;
	if (!e->hybrid)
		return;
	q->restore = -1;
	q->sq.replay = false;
	q->spec_rb = false;
	if (j == nd)
		return;		/* every token of the pass stays: the live states are right */
	if (sn->spec_blk[j] > 0) {
		q->restore = sn->spec_blk[j];
	} else {
		q->restore = sn->spec_from;
		q->sq.replay = true;
		q->sq.replay_tok = t0;
	}
	q->spec_rb = true;
}

void eng_spec_verify(struct engine *e, struct engine_req *q, const struct sched_tok *t, int nd,
		     const float *rows)
{
	size_t V = e->m->n_vocab;
	int pos = t[0].pos, j, acc_n = 0;
	bool alive = true, acc = false;
	const float *last = rows;
	int32_t tok = -1;

	q->sq.waiting = false;
	q->draft_n += nd;
	for (j = 0; j <= nd && alive; j++) {
		const float *row = rows + (size_t)j * V;

		last = row;
		keep(e, q, pos, j, nd, t[0].token);
		if (j < nd) {
			const int32_t *ids;
			const double *probs;
			int n = sampler_dist(q->smp, row, &ids, &probs);
			double u_acc = spec_rng_unit(&q->rng), u_res = spec_rng_unit(&q->rng);

			tok = spec_accept_point(ids, probs, n, t[1 + j].token, u_acc, u_res, &acc);
		} else {
			tok = sampler_sample(q->smp, row);
			acc = false;
		}
		sampler_accept(q->smp, tok);
		if (acc) {
			q->draft_acc++;
			acc_n++;
		}
		alive = eng_emit(e, q, row, tok);
		if (!acc)
			break;
	}
	pthread_mutex_lock(&e->mu);
	e->stats.verify_passes++;
	e->stats.draft_tokens += (uint64_t)nd;
	e->stats.draft_accepted += (uint64_t)acc_n;
	pthread_mutex_unlock(&e->mu);
	if (!alive)
		return;
	q->sq.next_tok = tok;
	q->sq.ready = true;
	q->sq.ready_since = e->step;
	eng_spec_prepare(e, q, last);
}

/* Pipeline block of spec block @b of @slot. */
static int spec_block(const struct engine *e, int slot, int b)
{
	return (int)eng_hybrid_ckpt_blocks(e) + e->info.n_slots + slot * e->n_spec_blk + b;
}

void eng_spec_flags(struct engine *e, struct pipe_tok *t, int n)
{
	int i, idx = 0, n_spec = 0, c = 0;

	if (!e->n_spec_blk)
		return;
	for (i = 0; i < n; i++) {
		const struct sched_tok *m = &e->mb[i];
		struct eng_snaps *sn = &e->snaps[m->slot];

		if (!(m->flags & SCHED_TOK_DECODE) || (m->flags & SCHED_TOK_REPLAY))
			continue;
		if (!(m->flags & SCHED_TOK_DRAFT)) {
			/* A decode token: a new group (its drafts follow it). */
			idx = 0;
			c = 0;
			n_spec = e->run[m->slot]->sq.n_spec;
			sn->spec_from = 0;
			if (t[i].flags & PIPE_TOK_RESTORE)
				sn->spec_from = (int)t[i].aux;
			else if (i && (e->mb[i - 1].flags & SCHED_TOK_REPLAY) &&
				 (t[i - 1].flags & PIPE_TOK_RESTORE))
				sn->spec_from = (int)t[i - 1].aux;
			memset(sn->spec_blk, 0, sizeof(sn->spec_blk));
		} else {
			idx++;
		}
		if (idx >= n_spec || (t[i].flags & PIPE_TOK_RESTORE))
			continue;
		/* Never over the block this pass restored: a replay may need it again. */
		if (spec_block(e, m->slot, c) == sn->spec_from)
			c++;
		sn->spec_blk[idx] = spec_block(e, m->slot, c++);
		t[i].flags |= PIPE_TOK_SNAPSHOT;
		t[i].aux = (uint32_t)sn->spec_blk[idx];
	}
}

void eng_spec_end(struct engine *e, struct engine_req *q)
{
	struct eng_snaps *sn;

	if (!e->hybrid || !q->spec_rb)
		return;
	/* The live states saw rejected drafts: the prefix cache must restore. */
	sn = &e->snaps[q->slot];
	sn->live_blk = q->restore;
	if (q->sq.replay)
		e->slots[q->slot].n_toks = q->sq.pos - 1;
	q->spec_rb = false;
}
