// SPDX-License-Identifier: MIT
/*
 * Engine scheduler: prefix-cache slot choice and micro-batch building
 * (see scheduler.h for the rules).
 */
#include "scheduler.h"


int sched_lcp(const int32_t *a, int na, const int32_t *b, int nb)
{
	int n = na < nb ? na : nb, i;

	for (i = 0; i < n && a[i] == b[i]; i++)
		;
	return i;
}

int sched_pick_slot(const struct sched_slot *slots, int n, const int32_t *prompt,
		    int n_prompt, int kv_type, int *reuse)
{
	int best = -1, best_lcp = -1, i;

	*reuse = 0;
	for (i = 0; i < n; i++) {
		int l;

		if (slots[i].busy)
			continue;
		l = slots[i].kv_type == kv_type ?
		    sched_lcp(slots[i].toks, slots[i].n_toks, prompt, n_prompt) : 0;
		if (l > best_lcp || (l == best_lcp && slots[i].last_used < slots[best].last_used)) {
			best = i;
			best_lcp = l;
		}
	}
	if (best < 0)
		return -1;
	*reuse = best_lcp < n_prompt - 1 ? best_lcp : n_prompt - 1;
	if (*reuse < 0)
		*reuse = 0;
	return best;
}

static void put(struct sched_tok *t, int seq, int32_t token, const struct sched_seq *s,
		uint32_t flags)
{
	t->seq = seq;
	t->token = token;
	t->pos = s->pos;
	t->slot = s->slot;
	t->flags = flags;
}

/* Index of the ready sequence that waited longest and is not taken, or -1. */
static int oldest_ready(struct sched_seq *const *seqs, int n)
{
	int best = -1, i;

	for (i = 0; i < n; i++) {
		const struct sched_seq *s = seqs[i];

		if (!s || !s->ready)
			continue;
		if (best < 0 || s->ready_since < seqs[best]->ready_since ||
		    (s->ready_since == seqs[best]->ready_since && s->order < seqs[best]->order))
			best = i;
	}
	return best;
}

/* Index of the earliest admitted sequence with prompt tokens left, or -1. */
static int first_prefill(struct sched_seq *const *seqs, int n)
{
	int best = -1, i;

	for (i = 0; i < n; i++) {
		const struct sched_seq *s = seqs[i];

		if (s && s->next < s->n_prompt && (best < 0 || s->order < seqs[best]->order))
			best = i;
	}
	return best;
}

void sched_cost_add(struct sched_cost *c, int n, double ns)
{
	if (n < 1 || n > c->max || !(ns > 0))
		return;
	c->ns[n] = c->ns[n] > 0 ? c->ns[n] + (ns - c->ns[n]) / 4 : ns;
}

double sched_cost_fixed_tok(const struct sched_cost *c)
{
	double s1 = 0, sn = 0, snn = 0, sy = 0, sny = 0, den, t, f;
	int n, lo = 0, hi = 0;

	for (n = 1; n <= c->max; n++) {
		if (!(c->ns[n] > 0))
			continue;
		if (!lo)
			lo = n;
		hi = n;
		s1 += 1;
		sn += n;
		snn += (double)n * n;
		sy += c->ns[n];
		sny += n * c->ns[n];
	}
	den = s1 * snn - sn * sn;
	/* Sizes close together give T from noise: trust only a wide span. */
	if (s1 < 2 || den <= 0 || 4 * (hi - lo) < c->max)
		return 0;
	t = (s1 * sny - sn * sy) / den;
	f = (sy - t * sn) / s1;
	return t > 0 && f > 0 ? f / t : 0;
}

int sched_mb_limit(int bucket, int depth, double fixed_tok)
{
	double l;

	if (depth < 1)
		depth = 1;
	if (!(fixed_tok > 0))	/* unknown (or NaN): no fixed cost */
		fixed_tok = 0;
	l = ((double)bucket - (depth - 1) * fixed_tok) / depth;
	/* A prompt's prefill keeps at least about half its speed. */
	if (l < bucket / (2 * depth))
		l = bucket / (2 * depth);
	if (l < 1)
		return 1;
	return l > bucket ? bucket : (int)l;
}

/*
 * The decode tokens of at most @cap ready sequences (oldest first) with
 * their replay tokens and as many drafts as @limit tokens in all allow
 * (see sched_build()). Return: tokens placed.
 */
static int place_decode(struct sched_seq *const *seqs, int n, int cap, int bucket, int limit,
			struct sched_tok *out)
{
	int pick[64], n_pick = 0, k = 0, left, i, j;

	if (cap > 64)
		cap = 64;
	while (n_pick < cap) {
		i = oldest_ready(seqs, n);
		if (i < 0 || k + 1 + seqs[i]->replay > bucket)
			break;
		seqs[i]->ready = false;		/* taken: oldest_ready() skips it */
		pick[n_pick++] = i;
		k += 1 + seqs[i]->replay;
	}
	if (limit > bucket)
		limit = bucket;
	left = limit - k;
	if (first_prefill(seqs, n) >= 0)
		left = (left - 1) / 2;	/* prefill keeps at least half, one token at least */
	k = 0;
	for (j = 0; j < n_pick; j++) {
		struct sched_seq *s = seqs[pick[j]];
		int nd = s->n_draft < left ? s->n_draft : left;

		if (nd < 0 || nd < s->n_min || nd < 1)
			nd = 0;
		left -= nd;
		if (s->replay) {
			s->pos--;
			put(&out[k++], pick[j], s->replay_tok, s, SCHED_TOK_DECODE | SCHED_TOK_REPLAY);
			s->pos++;
			s->replay = false;
		}
		put(&out[k++], pick[j], s->next_tok, s, SCHED_TOK_LOGITS | SCHED_TOK_DECODE);
		s->pos++;
		for (i = 0; i < nd; i++) {
			put(&out[k++], pick[j], s->draft[i], s,
			    SCHED_TOK_LOGITS | SCHED_TOK_DECODE | SCHED_TOK_DRAFT);
			s->pos++;
		}
		s->n_spec = nd;
		s->waiting = true;
	}
	return k;
}

int sched_build(struct sched_seq *const *seqs, int n, int bucket, int n_stages, int limit,
		struct sched_tok *out)
{
	int n_dec = 0, cap, k = 0, dlimit, i;

	for (i = 0; i < n; i++)
		if (seqs[i] && seqs[i]->next >= seqs[i]->n_prompt && (seqs[i]->ready ||
								      seqs[i]->waiting))
			n_dec++;
	cap = n_stages > 1 ? (n_dec + n_stages - 1) / n_stages : n_dec;
	if (cap < 1)
		cap = 1;
	if (cap > bucket)
		cap = bucket;

	/*
	 * Decode tokens, oldest ready first, each with its replay and drafts.
	 * One sequence decoding and no prompt waiting: nobody shares the
	 * cards with its verify pass, so its drafts may fill the bucket (the
	 * budget would cut them to nothing on 4 cards: 8 / 4 - 1 = 1, or 0
	 * once the fixed cost is learnt).
	 */
	dlimit = n_dec && limit > 0 && limit < bucket ? limit : bucket;
	if (n_dec == 1 && first_prefill(seqs, n) < 0)
		dlimit = bucket;
	k = place_decode(seqs, n, cap, bucket, dlimit, out);

	/*
	 * Prompt chunks in admission order. While sessions decode, the
	 * micro-batch holds at most @limit tokens, its decode tokens
	 * included (a token budget, as in chunked prefill), but at least one
	 * prompt token so that the prompt advances.
	 */
	if (n_dec && limit > 0 && limit < bucket)
		bucket = limit > k ? limit : k + 1 < bucket ? k + 1 : bucket;
	while (k < bucket) {
		struct sched_seq *s;
		int take, j;

		i = first_prefill(seqs, n);
		if (i < 0)
			break;
		s = seqs[i];
		take = s->n_prompt - s->next;
		if (take > bucket - k)
			take = bucket - k;
		for (j = 0; j < take; j++) {
			bool last = s->next + 1 == s->n_prompt;

			put(&out[k++], i, s->prompt[s->next], s, last ? SCHED_TOK_LOGITS : 0);
			s->next++;
			s->pos++;
			if (last)
				s->waiting = true;
		}
	}
	return k;
}
