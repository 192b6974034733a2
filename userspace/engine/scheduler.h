/* SPDX-License-Identifier: MIT */
/*
 * Scheduler of the engine (engine.h): which session slot a new request
 * takes (the prefix cache) and which tokens go into the next micro-batch
 * (continuous batching). Pure logic over the structs below, so the rules
 * are unit-tested on the host (tests/unit/test_sched.c; the engine's
 * schedule as a whole in tests/unit/test_engine_sched.c).
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
 * decodes, a micro-batch holds at most sched_mb_limit() tokens, its
 * decode tokens included (a token budget, as in chunked prefill): with D
 * micro-batches in flight (one per card; 2 on one card) a decode token
 * reaches its logits through D micro-batches' card time (its own on each
 * of N cards, or its own and the one ahead on one card), each costing a
 * fixed F plus T per token, and D * (F + limit * T) <= F + bucket * T is
 * one bucket's card time: a running stream never waits longer than that
 * for its next token. The engine measures F / T from the cards' fence
 * timestamps. With nobody decoding, chunks are whole buckets. A session has
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
 * @kv_type: QUANT_TYPE_* the slot's K/V rows are stored in on the cards
 *	(the pipeline's, struct pipe_opts.kv_type): rows of another type
 *	than the one asked for are no prefix to reuse
 */
struct sched_slot {
	int32_t *toks;
	int n_toks;
	uint64_t last_used;
	bool busy;
	int kv_type;
};

/** sched_lcp() - length of the common prefix of @a (@na) and @b (@nb). */
int sched_lcp(const int32_t *a, int na, const int32_t *b, int nb);

/**
 * sched_pick_slot() - the free slot for a prompt
 * @slots: @n slot records
 * @n: slots
 * @prompt: @n_prompt token ids (>= 1)
 * @n_prompt: tokens
 * @kv_type: the K/V type the request runs with: a slot of another type
 *	(sched_slot.kv_type) shares no prefix with it
 * @reuse: out: prompt tokens whose KV the slot already holds and that need
 *	no evaluation, min(common prefix, @n_prompt - 1)
 * Return: the slot index, or -1 when every slot is busy.
 */
int sched_pick_slot(const struct sched_slot *slots, int n, const int32_t *prompt,
		    int n_prompt, int kv_type, int *reuse);

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
 * @draft: speculative decoding: @n_draft drafted tokens that would follow
 *	@next_tok (positions @pos + 1 ...), verified in the same micro-batch
 *	when the token budget leaves room for at least @n_min of them
 * @n_draft: entries of @draft (0: plain decode)
 * @n_min: fewest drafts worth verifying (--draft-min)
 * @n_spec: out: drafts sched_build() placed after @next_tok (0..@n_draft)
 * @replay: a token to evaluate again before @next_tok, at @pos - 1
 *	(recurrent-state rollback: restore a checkpoint, replay the token);
 *	@replay_tok is it
 * @replay_tok: see @replay
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
	const int32_t *draft;
	int n_draft, n_min, n_spec;
	bool replay;
	int32_t replay_tok;
};

/* struct sched_tok.flags: the micro-batch must return this token's logits. */
#define SCHED_TOK_LOGITS	0x1u
/* struct sched_tok.flags: a decode token (sampled, fed back), not a prompt token. */
#define SCHED_TOK_DECODE	0x2u
/* struct sched_tok.flags: a drafted token verified after a decode token (with DECODE). */
#define SCHED_TOK_DRAFT		0x4u
/* struct sched_tok.flags: a token evaluated again for a rollback (with DECODE). */
#define SCHED_TOK_REPLAY	0x8u

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
 * struct sched_cost - measured card time by micro-batch size, for the
 * fixed cost F and per-token cost T of sched_mb_limit()
 * @ns: @max + 1 entries; @ns[n]: the mean card time of one stage's EXEC of
 *	an n-token micro-batch (exponentially weighted, the newest a quarter),
 *	ns; 0: no such micro-batch seen
 * @max: largest size kept (the bucket)
 */
struct sched_cost {
	double *ns;
	int max;
};

/** sched_cost_add() - one n-token micro-batch took @ns (ignored: n outside 1..max, @ns <= 0). */
void sched_cost_add(struct sched_cost *c, int n, double ns);

/**
 * sched_cost_fixed_tok() - F / T from the sizes seen: the least-squares
 * line time = F + T * n through their mean times
 * Return: F / T (>= 0), or 0 when unknown: fewer than two sizes seen,
 * sizes spanning less than a quarter of @max (T would be noise), or T <= 0.
 */
double sched_cost_fixed_tok(const struct sched_cost *c);

/**
 * sched_mb_limit() - most tokens of a micro-batch while sessions decode
 * @bucket: the bucket B (>= 1)
 * @depth: micro-batches in flight D (pipe_depth(): the cards N, or 2 on
 *	one card), >= 1
 * @fixed_tok: a micro-batch's fixed card time F (program start, weights
 *	streamed once a job) in tokens' worth, F / T; 0 (or less, or NaN)
 *	when unknown
 *
 * A decode token waits for D micro-batches of at most L tokens; D * (F +
 * L * T) <= F + B * T, one bucket's time, gives L = (B - (D - 1) * F / T)
 * / D. Copies are taken to overlap with the card's compute. When F is so
 * large that L would fall below B / (2 * D), the limit stays there: a
 * prompt's prefill keeps about half its speed, and the streams wait
 * somewhat longer than one bucket's time.
 *
 * Return: floor(L), at least max(1, B / (2 * D)), at most @bucket.
 */
int sched_mb_limit(int bucket, int depth, double fixed_tok);

/**
 * sched_build() - fill the next micro-batch and advance the sequences
 * @seqs: @n running sequences (NULL entries are skipped)
 * @n: entries
 * @bucket: most tokens per micro-batch (>= 1)
 * @n_stages: pipeline stages (cards), >= 1
 * @limit: most tokens of the micro-batch, decode tokens included, while
 *	any sequence decodes (sched_mb_limit()); 0: @bucket
 * @out: room for @bucket tokens
 *
 * Decode tokens of sequences that are @ready (oldest first, at most
 * ceil(decoding / @n_stages)), then prompt chunks in @order up to @limit
 * tokens in all while any sequence decodes (at least one prompt token, so
 * a prompt always advances), else up to @bucket. A sequence's last prompt
 * token and its decode token carry SCHED_TOK_LOGITS and set @waiting;
 * decode tokens also carry SCHED_TOK_DECODE. Tokens of one sequence
 * appear in position order.
 *
 * Speculative decoding: a decode sequence's @replay token goes just
 * before its decode token, and its drafts just after it (SCHED_TOK_DRAFT,
 * each with logits), as many as the budget left after every chosen
 * sequence's decode (and replay) token allows: the whole micro-batch stays
 * within @limit (so the others' streams wait no longer than without
 * speculation), and while a prompt waits for prefill drafts take at most
 * half of what is left, so prefill keeps at least half its share; a
 * sequence decoding alone with no prompt waiting has the whole @bucket
 * (nobody else's stream to protect). Drafts
 * are shared out oldest sequence first; a sequence whose share falls
 * below its @n_min verifies none.
 *
 * Return: tokens placed in @out (0: nothing to do now).
 */
int sched_build(struct sched_seq *const *seqs, int n, int bucket, int n_stages, int limit,
		struct sched_tok *out);

#endif
