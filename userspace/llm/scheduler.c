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
		    int n_prompt, int *reuse)
{
	int best = -1, best_lcp = -1, i;

	*reuse = 0;
	for (i = 0; i < n; i++) {
		int l;

		if (slots[i].busy)
			continue;
		l = sched_lcp(slots[i].toks, slots[i].n_toks, prompt, n_prompt);
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

int sched_build(struct sched_seq *const *seqs, int n, int bucket, int n_stages,
		struct sched_tok *out)
{
	int n_dec = 0, cap, k = 0, i;

	for (i = 0; i < n; i++)
		if (seqs[i] && seqs[i]->next >= seqs[i]->n_prompt && (seqs[i]->ready ||
								      seqs[i]->waiting))
			n_dec++;
	cap = n_stages > 1 ? (n_dec + n_stages - 1) / n_stages : n_dec;
	if (cap < 1)
		cap = 1;
	if (cap > bucket)
		cap = bucket;

	/* Decode tokens, oldest ready first. */
	while (k < cap) {
		struct sched_seq *s;

		i = oldest_ready(seqs, n);
		if (i < 0)
			break;
		s = seqs[i];
		put(&out[k++], i, s->next_tok, s, SCHED_TOK_LOGITS);
		s->pos++;
		s->ready = false;
		s->waiting = true;
	}

	/*
	 * Prompt chunks in admission order. While sessions decode, a
	 * micro-batch carries at most bucket / n_stages prompt tokens: the N
	 * micro-batches in flight then hold one bucket together, and a
	 * decoding session waits for about one bucket's card time per token
	 * rather than N of them (chunked prefill with a token budget).
	 */
	if (n_dec && n_stages > 1) {
		int budget = bucket / n_stages > 1 ? bucket / n_stages : 1;

		if (budget < bucket - k)
			bucket = k + budget;
	}
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
