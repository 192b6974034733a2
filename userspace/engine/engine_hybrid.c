// SPDX-License-Identifier: MIT
/*
 * Prefix cache of hybrid models (qwen35) in the engine.
 *
 * A slot's K/V rows serve any prefix of its tokens, but its recurrent
 * (DeltaNet) state only describes the slot's whole history. So a request
 * may reuse a slot's prefix only where a recurrent state for exactly that
 * prefix exists: the live state (when the slot's whole history is a prefix
 * of the new prompt) or one of the slot's checkpoints, taken on the cards
 * after the last token of each prefill micro-batch (PIPE_TOK_SNAPSHOT
 * into a free snapshot block of the slot, else over its oldest checkpoint
 * past the request's reuse point, so the shared prefix it restored stays
 * available to the next request) and restored on the first
 * token the request submits (PIPE_TOK_RESTORE). Otherwise the prompt is
 * evaluated from position 0, where the cards start from zero states. The
 * reuse is the longest such point at most the common prefix the scheduler
 * found, so greedy output is the same with and without a hit.
 *
 * A slot has engine_info.n_ckpt checkpoints (the plan's: ENG_SNAPS, or
 * fewer down to ENGINE_SNAPS_MIN_PER_SLOT when the cards are short of
 * memory). Fewer cost only hits: a prefix whose checkpoint was overwritten
 * is evaluated again, and the output is the same.
 *
 * Snapshot blocks of slot s: pipeline blocks n_slots + s * n_ckpt + j.
 */
#include <string.h>

#include "engine_int.h"

static uint32_t block_of(const struct engine *e, int slot, int j)
{
	return (uint32_t)e->info.n_slots + (uint32_t)slot * e->info.n_ckpt + (uint32_t)j;
}

uint32_t eng_hybrid_ckpt_blocks(const struct engine *e)
{
	return (uint32_t)e->info.n_slots * e->info.n_ckpt;
}

uint32_t eng_hybrid_snaps(const struct engine *e)
{
	return e->hybrid ? (uint32_t)e->info.n_slots * (e->info.n_ckpt + (uint32_t)e->n_spec_blk)
			 : 0;
}

int eng_hybrid_reuse(struct engine *e, struct engine_req *q)
{
	struct eng_snaps *sn = &e->snaps[q->slot];
	int reuse = q->cached, best = -1, j, n = (int)e->info.n_ckpt;

	q->restore = -1;
	if (!e->hybrid)
		return reuse;
	/* The live states after a rollback pending at the last request's end. */
	if (reuse == e->slots[q->slot].n_toks && sn->live_blk > 0)
		q->restore = sn->live_blk;
	sn->live_blk = 0;
	if (reuse != e->slots[q->slot].n_toks) {
		for (j = 0; j < n; j++)
			if (sn->pos[j] > 0 && sn->pos[j] <= reuse &&
			    (best < 0 || sn->pos[j] > sn->pos[best]))
				best = j;
		reuse = best >= 0 ? sn->pos[best] : 0;
		q->restore = best >= 0 ? (int)block_of(e, q->slot, best) : -1;
	}
	/* The slot's tokens past the reuse point change: so do its checkpoints. */
	for (j = 0; j < n; j++)
		if (sn->pos[j] > reuse)
			sn->pos[j] = 0;
	sn->keep = reuse;
	return reuse;
}

/*
 * The checkpoint of @sn's @n (>= 1) a new one goes to: a free one, else
 * the oldest past the reuse point, else the oldest.
 */
static int victim(const struct eng_snaps *sn, int n)
{
	int j, old = -1, old_past = -1;

	for (j = 0; j < n; j++) {
		if (!sn->pos[j])
			return j;
		if (old < 0 || sn->taken[j] < sn->taken[old])
			old = j;
		if (sn->pos[j] > sn->keep &&
		    (old_past < 0 || sn->taken[j] < sn->taken[old_past]))
			old_past = j;
	}
	return old_past >= 0 ? old_past : old;
}

void eng_hybrid_flags(struct engine *e, struct pipe_tok *t, int n)
{
	int i, k;

	if (!e->hybrid)
		return;
	for (i = 0; i < n; i++) {
		struct engine_req *q = e->run[t[i].seq];
		struct eng_snaps *sn = &e->snaps[t[i].seq];
		bool first = true, last = true;

		for (k = 0; k < n; k++) {
			if (k != i && t[k].seq == t[i].seq) {
				first &= k > i;
				last &= k < i;
			}
		}
		if (first && q->restore >= 0) {
			t[i].flags |= PIPE_TOK_RESTORE;
			t[i].aux = (uint32_t)q->restore;
			q->restore = -1;
			q->spec_rb = false;	/* the rollback (and a replay) is under way */
		}
		/* Checkpoint after each prefill micro-batch of the prompt. */
		if (last && !(t[i].flags & PIPE_TOK_RESTORE) && t[i].pos + 1 < q->n_prompt) {
			int j = victim(sn, (int)e->info.n_ckpt);

			sn->taken[j] = ++sn->clock;
			sn->pos[j] = t[i].pos + 1;
			t[i].flags |= PIPE_TOK_SNAPSHOT;
			t[i].aux = block_of(e, t[i].seq, j);
		}
	}
	eng_spec_flags(e, t, n);
}
