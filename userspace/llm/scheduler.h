/* SPDX-License-Identifier: MIT */
/*
 * Scheduler of the engine (engine.h): which session slot a new request
 * takes (the prefix cache) and which tokens go into the next micro-batch
 * (continuous batching). Pure logic over the structs below, so the rules
 * are unit-tested on the host (tests/unit/test_scheduler.c).
 *
 * Prefix cache (DESIGN.md section 9): every slot remembers the tokens
 * whose KV rows it holds on the cards. A new request takes the free slot
 * with the longest common token prefix with its prompt (ties: the least
 * recently used slot, so distinct prefixes survive longest) and evaluates
 * only the rest of the prompt, always at least its last token: the logits
 * of the last prompt position are needed to sample the first token and the
 * cache keeps no logits (llama.cpp #1884, vLLM #5543). A shorter prompt
 * that shares a cached prefix reuses n_prompt - 1 tokens; rows beyond a
 * request's positions are never read (attention of a token at position p
 * covers rows 0..p only), so no truncation on the card is needed.
 *
 * Micro-batches: each step gathers at most @bucket tokens. Decode tokens
 * come first, at most ceil(decoding sessions / stages) of them, oldest
 * ready first, so that with S sessions and N cards the sessions form N
 * groups whose micro-batches are in flight on different cards at once.
 * The rest of the micro-batch is filled with prompt tokens (prefill) of
 * admitted sessions in admission order, so a long prompt is cut into
 * chunks interleaved with the others' decode steps. While any session
 * decodes, a micro-batch carries at most bucket / stages prompt tokens, so
 * the micro-batches in flight together hold about one bucket and a
 * running stream waits about one bucket's card time per token; with
 * nobody decoding, chunks are whole buckets. A session has
 * at most one token that needs logits in flight (its last prompt token or
 * its decode token), so a micro-batch asks for at most one logits row per
 * session.
 */
#ifndef RK_LLM_SCHEDULER_H
#define RK_LLM_SCHEDULER_H

#include <stdbool.h>
#include <stdint.h>

/**
 * struct sched_slot - one session slot's prefix-cache record
 * @toks: token ids whose KV rows the slot holds, positions 0..@n_toks-1
 *	(capacity n_ctx)
 * @n_toks: valid entries
 * @last_used: engine step the slot was last released (LRU tie-break)
 * @busy: a request holds the slot
 */
struct sched_slot {
	int32_t *toks;
	int n_toks;
	uint64_t last_used;
	bool busy;
};

/** sched_lcp() - length of the common prefix of @a (@na) and @b (@nb). */
int sched_lcp(const int32_t *a, int na, const int32_t *b, int nb);

/**
 * sched_pick_slot() - the free slot for a prompt
 * @slots: @n slot records
 * @n: slots
 * @prompt: @n_prompt token ids (>= 1)
 * @n_prompt: tokens
 * @reuse: out: prompt tokens whose KV the slot already holds and that need
 *	no evaluation, min(common prefix, @n_prompt - 1)
 * Return: the slot index, or -1 when every slot is busy.
 */
int sched_pick_slot(const struct sched_slot *slots, int n, const int32_t *prompt,
		    int n_prompt, int *reuse);

/**
 * struct sched_seq - scheduling state of one running request
 * @slot: its session slot
 * @prompt: @n_prompt prompt tokens
 * @n_prompt: tokens
 * @next: prompt tokens already submitted (evaluated or in flight, the
 *	reused prefix included); prefill while @next < @n_prompt
 * @pos: position of the next token to submit
 * @next_tok: decode: the sampled token to submit next (valid with @ready)
 * @ready: a decode token waits to be submitted
 * @waiting: its token that needs logits is in flight
 * @order: admission order (FIFO of prefill)
 * @ready_since: scheduler step at which @ready became true
 */
struct sched_seq {
	int slot;
	const int32_t *prompt;
	int n_prompt;
	int next;
	int pos;
	int32_t next_tok;
	bool ready, waiting;
	uint64_t order, ready_since;
};

/* struct sched_tok.flags: the micro-batch must return this token's logits. */
#define SCHED_TOK_LOGITS	0x1u

/**
 * struct sched_tok - one token of a micro-batch
 * @seq: index into the sequence array given to sched_build()
 * @token: token id
 * @pos: its position in its slot's sequence
 * @slot: its session slot (whose KV rows it reads and writes)
 * @flags: SCHED_TOK_*
 */
struct sched_tok {
	int seq;
	int32_t token;
	int32_t pos;
	int slot;
	uint32_t flags;
};

/**
 * sched_build() - fill the next micro-batch and advance the sequences
 * @seqs: @n running sequences (NULL entries are skipped)
 * @n: entries
 * @bucket: most tokens per micro-batch (>= 1)
 * @n_stages: pipeline stages (cards), >= 1
 * @out: room for @bucket tokens
 *
 * Decode tokens of sequences that are @ready (oldest first, at most
 * ceil(decoding / @n_stages)), then prompt chunks in @order (at most
 * @bucket / @n_stages prompt tokens while any sequence decodes). A sequence's
 * last prompt token and its decode token carry SCHED_TOK_LOGITS and set
 * @waiting. Tokens of one sequence appear in position order.
 *
 * Return: tokens placed in @out (0: nothing to do now).
 */
int sched_build(struct sched_seq *const *seqs, int n, int bucket, int n_stages,
		struct sched_tok *out);

#endif
