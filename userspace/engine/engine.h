/* SPDX-License-Identifier: MIT */
/*
 * Inference engine: sessions (slots), a continuous-batching scheduler,
 * the prefix cache and streamed text, on top of the card pipeline
 * (pipeline.h). Shared by `rk1828-llm run` (one slot) and
 * `rk1828-llm serve` (userspace/server/, S slots).
 *
 * Model: the engine owns one thread that drives the cards. A request
 * (already templated and tokenized by the caller) is accepted by
 * engine_submit(), waits in a bounded FIFO queue until a slot is free,
 * takes the free slot whose cached tokens share the longest prefix with
 * its prompt (the prefix cache), prefills the rest of the prompt in
 * buckets interleaved with the other sessions' decode steps, and streams
 * text through its callback. Every accepted request gets exactly one
 * ENGINE_EV_DONE event, always its last; after it the caller releases the
 * request with engine_req_put().
 *
 * Guarantees:
 *  - Greedy output of a request (temperature 0) is byte-identical whether
 *    it ran alone or batched with others, with or without a prefix-cache
 *    hit (the card math is per token; see userspace/doc/runtime.rst,
 *    "Engine").
 *  - TEXT deltas hold whole UTF-8 characters only; text that may be the
 *    start of a stop string is held back until it is known not to be one;
 *    the stop string itself is never sent; the concatenation of all deltas
 *    is the full completion text. An incomplete UTF-8 character left at
 *    the end (token limit) is dropped.
 *  - engine_cancel() finishes the request with ENGINE_FINISH_CANCELLED
 *    within one scheduler step (one decode step or one prefill bucket) and
 *    frees its slot at once; the KV of its already evaluated tokens stays
 *    in the slot for the prefix cache.
 *
 * Thread safety: every function may be called from any thread, except
 * that callbacks run on the engine thread and must not block or call
 * engine_destroy(). engine_submit(), engine_cancel(), engine_req_put() and
 * engine_get_stats() may be called from a callback.
 */
#ifndef RK_LLM_ENGINE_H
#define RK_LLM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "planner.h"
#include "rk1828.h"
#include "sampler.h"
#include "spec.h"

struct tokenizer;
struct jm_schema;
struct engine;
struct engine_req;
struct engine_trace;

/* Default --parallel, --queue (the engine's and the server's); --ctx and
 * --bucket: PLAN_DEFAULT_CTX, PLAN_DEFAULT_BUCKET (planner.h). */
#define ENGINE_DEFAULT_SLOTS	4
#define ENGINE_DEFAULT_QUEUE	16

/*
 * Recurrent-state checkpoints per slot of a hybrid model (prefix-cache
 * reuse points, engine_hybrid.c): ENGINE_SNAPS_PER_SLOT, or as few as
 * ENGINE_SNAPS_MIN_PER_SLOT when the cards are short of memory
 * (plan_fit_opts.snaps_optional). One keeps the hit of a repeated prompt
 * (the last prefill micro-batch's boundary); more keep shared prefixes of
 * other prompts. Fewer cost only hits: every restore is of a state that
 * was taken, and speculative decoding's rollback has its own blocks.
 */
#define ENGINE_SNAPS_PER_SLOT		4
#define ENGINE_SNAPS_MIN_PER_SLOT	1

/* Most slots (--parallel). */
#define ENGINE_MAX_SLOTS	64

/* Limits of one request. */
#define ENGINE_MAX_STOP		4	/* stop strings */
#define ENGINE_MAX_STOP_LEN	256	/* bytes per stop string */
#define ENGINE_MAX_TOP		SAMPLER_MAX_PROBS	/* top_logprobs alternatives */

/**
 * struct engine_opts - engine parameters (zero fields take the defaults)
 * @n_slots: sessions decoded concurrently (--parallel S, 1..ENGINE_MAX_SLOTS),
 *	each with its own KV cache of @n_ctx rows on every card; 0:
 *	ENGINE_DEFAULT_SLOTS. When
 *	the cards cannot hold S sessions' KV the engine lowers S to what fits
 *	and says so in engine_info.note (with @strict_slots it fails instead)
 * @n_ctx: context (KV rows) of each slot; 0: min(model context,
 *	PLAN_DEFAULT_CTX)
 * @bucket: prefill bucket in tokens (also the largest micro-batch);
 *	0: PLAN_DEFAULT_BUCKET, halved until the activations fit
 * @queue_max: requests waiting beyond the busy slots (--queue); 0:
 *	ENGINE_DEFAULT_QUEUE; -1: no queue (submit fails when no slot is free)
 * @strict_slots: fail instead of lowering @n_slots
 * @kv_type: K/V cache type (--kv-type): QUANT_TYPE_F32 (0, default),
 *	_F16, _Q8_0, _Q4_0 or PLAN_KV_AUTO (plan_fit_opts.kv_type)
 * @timeout_ms: per-job timeout (0: 120 s)
 * @verbose: log plan, buffer sizes and scheduler decisions to stderr
 * @progress: optional, called on the calling thread of engine_create()
 *	while the weights are uploaded, @done of @total bytes
 * @progress_user: passed to @progress
 * @trace: optional, called on the engine thread for every micro-batch
 *	submitted to the cards and collected from them (struct engine_trace):
 *	the scheduler's decisions, for tests and diagnostics; must not block
 * @trace_user: passed to @trace
 * @spec: speculative decoding (--spec): SPEC_NONE (default) or a drafter;
 *	see engine_spec.c and userspace/doc/runtime.rst, "Speculative decoding"
 * @draft_max: most drafted tokens per verify pass (--draft-max,
 *	0..SPEC_MAX_DRAFT); 0: ENGINE_DEFAULT_DRAFT_MAX
 * @draft_min: fewest drafted tokens worth a verify pass (--draft-min,
 *	0..@draft_max): a shorter proposal is not verified
 * @draft_model: SPEC_DRAFT: the draft model's GGUF file (--draft-model),
 *	same vocabulary as the model; run on the host CPU (spec_draft.c)
 * @drafter: optional, with @spec != SPEC_NONE: the caller's own drafter,
 *	used instead of @spec's (copied at engine_create(); its @priv stays
 *	the caller's and must outlive the engine). The counters stay under
 *	@spec's name. For tests that need drafts of a known quality (e.g.
 *	tests/unit/test_engine_spec_rollback.c: mostly wrong ones)
 * @plan, @sizes: optional, a plan made by plan_fit() with engine_fit_opts()
 *	of these options (rk1828-llm run and chat plan before they create
 *	the engine and print that plan): the engine runs it as it is instead
 *	of planning again (@n_slots, @n_ctx and @bucket are then
 *	@sizes'); its segments' cards are indices into engine_create()'s
 *	@cards. Both or neither
 * @split: what the plan's segments balance (--split, &enum plan_split;
 *	default bytes)
 * @timing: profile and link of a time split (plan_time.h), or NULL for
 *	the built-in profile over PCIe
 */
struct engine_opts {
	int n_slots;
	uint32_t n_ctx;
	uint32_t bucket;
	int queue_max;
	bool strict_slots;
	int kv_type;
	uint32_t timeout_ms;
	int verbose;
	void (*progress)(void *user, uint64_t done, uint64_t total);
	void *progress_user;
	void (*trace)(void *user, const struct engine_trace *t);
	void *trace_user;
	enum spec_kind spec;
	int draft_max;
	int draft_min;
	const char *draft_model;
	const struct spec_drafter *drafter;
	const struct plan *plan;
	const struct plan_sizes *sizes;
	enum plan_split split;
	const struct plan_timing *timing;
};

/* Default --draft-max (llama-server's is 16). */
#define ENGINE_DEFAULT_DRAFT_MAX	16

/**
 * engine_fit_opts() - the plan_fit() request the engine makes of @o for
 * @m: its slots (0: ENGINE_DEFAULT_SLOTS, at most PIPE_MAX_SEQ), context,
 * bucket, strictness and, for a hybrid model, ENGINE_SNAPS_PER_SLOT
 * checkpoints per slot (of which all but ENGINE_SNAPS_MIN_PER_SLOT are
 * optional) plus the verify pass's blocks of --spec. A caller that plans before engine_create()
 * plans with this and passes the result in engine_opts.plan and .sizes.
 */
void engine_fit_opts(const struct llm_model *m, const struct engine_opts *o,
		     struct plan_fit_opts *fo);

/**
 * enum engine_trace_kind - what a trace event reports
 * @ENGINE_TRACE_SUBMIT: a micro-batch was queued on the cards
 * @ENGINE_TRACE_COLLECT: the oldest micro-batch in flight came back (its
 *	logits were sampled, before the next micro-batch is built)
 */
enum engine_trace_kind {
	ENGINE_TRACE_SUBMIT,
	ENGINE_TRACE_COLLECT,
};

/**
 * struct engine_trace_tok - one token of a traced micro-batch
 * @slot: its session slot
 * @pos: its position in the slot's sequence
 * @decode: a sampled token fed back (decode step), else a prompt token
 *	(prefill)
 * @logits: the micro-batch returns its logits (a decode token or a
 *	prompt's last token)
 * @draft: a drafted token of a verify pass (speculative decoding; also
 *	@decode and @logits), which follows its session's decode token
 * @replay: a token evaluated again after a rollback (hybrid models,
 *	engine_spec.c; also @decode), before its session's decode token
 */
struct engine_trace_tok {
	int slot;
	int pos;
	bool decode;
	bool logits;
	bool draft;
	bool replay;
};

/**
 * struct engine_trace - one scheduler event (engine_opts.trace); valid
 * only during the call
 * @kind: &enum engine_trace_kind
 * @mb: micro-batch number, in submission order from 0 (COLLECT: the one
 *	collected; micro-batches are collected in submission order)
 * @n_flight: micro-batches in flight after the event
 * @depth: most micro-batches the engine keeps in flight (one per card;
 *	2 with one card)
 * @n_tok: SUBMIT: tokens of the micro-batch (1..bucket); COLLECT: 0
 * @tok: SUBMIT: @n_tok tokens in micro-batch order; COLLECT: NULL
 * @t_ms: when, on the engine's clock (ms, monotonic)
 */
struct engine_trace {
	enum engine_trace_kind kind;
	uint64_t mb;
	int n_flight;
	int depth;
	int n_tok;
	const struct engine_trace_tok *tok;
	double t_ms;
};

/**
 * enum engine_finish - why a request ended
 * @ENGINE_FINISH_STOP: end-of-sequence token or a stop string
 * @ENGINE_FINISH_LENGTH: max_tokens reached or the context is full
 * @ENGINE_FINISH_CANCELLED: engine_cancel() or engine_destroy()
 * @ENGINE_FINISH_ERROR: a card job failed (engine_event.error says which);
 *	the engine refuses further requests afterwards
 */
enum engine_finish {
	ENGINE_FINISH_STOP,
	ENGINE_FINISH_LENGTH,
	ENGINE_FINISH_CANCELLED,
	ENGINE_FINISH_ERROR,
};

/**
 * struct engine_usage - token counts of a request
 * @prompt_tokens: tokens of the prompt
 * @completion_tokens: tokens generated (an end-of-sequence token is not
 *	counted; the tokens that spelled a stop string are)
 * @cached_tokens: prompt tokens whose KV came from the prefix cache (not
 *	evaluated again); always < @prompt_tokens
 * @draft_n: speculative decoding: tokens drafted and verified (llama-server's
 *	timings.draft_n)
 * @draft_n_accepted: of those, accepted (timings.draft_n_accepted)
 */
struct engine_usage {
	int prompt_tokens, completion_tokens, cached_tokens;
	int draft_n, draft_n_accepted;
};

/**
 * struct engine_timing - times of a request, milliseconds
 * @queued_ms: submit to slot assignment
 * @ttft_ms: submit to the first generated token (prefill included)
 * @total_ms: submit to DONE
 * @prefill_ms: slot assignment to the first generated token
 * @decode_ms: first generated token to DONE
 */
struct engine_timing {
	double queued_ms, ttft_ms, total_ms, prefill_ms, decode_ms;
};

/**
 * struct engine_top - one alternative token
 * @id: token id
 * @logprob: natural log of its probability
 */
struct engine_top {
	int32_t id;
	float logprob;
};

/**
 * struct engine_logprob - log-probabilities at one generated position
 * @id: the generated token
 * @logprob: its log-probability
 * @n_top: entries of @top (the request's n_probs), most likely first
 * @top: alternatives
 */
struct engine_logprob {
	int32_t id;
	float logprob;
	int n_top;
	struct engine_top top[ENGINE_MAX_TOP];
};

/**
 * enum engine_event_kind - callback events
 * @ENGINE_EV_TEXT: new text (and/or completed tokens)
 * @ENGINE_EV_DONE: the request ended; always the last event
 */
enum engine_event_kind {
	ENGINE_EV_TEXT,
	ENGINE_EV_DONE,
};

/**
 * struct engine_event - what the callback gets; valid only during the call
 * @kind: TEXT or DONE
 * @text: TEXT, and DONE for the flushed rest: @len bytes of whole UTF-8
 *	characters (not NUL-terminated; may be empty)
 * @len: bytes of @text
 * @ids: the tokens this delta completes: a token is completed by the event
 *	that sends the last byte of its text (tokens without text complete at
 *	once); tokens of a stop string are never listed
 * @n_ids: entries of @ids
 * @logprobs: with sampler_params.logprobs, one entry per @ids, else NULL
 * @finish: DONE: why
 * @usage: DONE: token counts (TEXT: counts so far)
 * @timing: DONE: times
 * @error: DONE with ENGINE_FINISH_ERROR: the reason, else NULL
 * @stop_word: DONE with ENGINE_FINISH_STOP ended by a stop string: that
 *	string (NUL-terminated, valid during the call); NULL after an
 *	end-of-generation token and for the other finishes
 */
struct engine_event {
	enum engine_event_kind kind;
	const char *text;
	size_t len;
	const int32_t *ids;
	int n_ids;
	const struct engine_logprob *logprobs;
	enum engine_finish finish;
	struct engine_usage usage;
	struct engine_timing timing;
	const char *error;
	const char *stop_word;
};

/**
 * typedef engine_event_fn - request callback, on the engine thread
 * @ev: the event
 * @user: engine_request.user
 */
typedef void (*engine_event_fn)(const struct engine_event *ev, void *user);

/**
 * struct engine_request - one completion
 * @prompt: @n_prompt token ids (templated and tokenized, BOS included when
 *	the model wants it); copied by engine_submit()
 * @n_prompt: >= 1
 * @max_tokens: tokens to generate at most; -1: until the context is full
 *	(n_ctx - n_prompt + 1 tokens: the last one needs no KV row); 0: none
 *	(the prompt is still evaluated, which warms the prefix cache)
 * @s: sampling (struct sampler_params: checked by sampler_params_check(),
 *	its bias copied; without have_seed the engine picks a time-based seed)
 * @stop: @n_stop stop strings (0..ENGINE_MAX_STOP, each 1..
 *	ENGINE_MAX_STOP_LEN bytes), matched on the decoded text across token
 *	boundaries; copied
 * @n_stop: entries of @stop
 * @ignore_eos: keep generating after end-of-generation tokens (EOS, and the
 *	ones tok_is_eog() names such as <|im_end|>)
 * @prompt_logits: optional, n_vocab floats: receives the logits of the
 *	last prompt position before the first token is sampled (--dump-logits)
 * @schema: optional, a compiled JSON schema (jsonmatch.h; the request
 *	takes a reference): structured output. Each sampled token whose
 *	bytes do not continue a document the schema accepts is replaced by
 *	a draw from the logits with every such token masked to -inf (the
 *	sampled token is checked first; the vocabulary is scanned only when
 *	it is refused); special tokens other than end-of-generation ones
 *	never match, an end-of-generation token only once the document is
 *	whole. The request ends with ENGINE_FINISH_STOP as soon as nothing
 *	can follow the document, or at an end-of-generation token (even with
 *	@ignore_eos); max_tokens may cut it short (ENGINE_FINISH_LENGTH).
 *	Log-probabilities are then those of the masked distribution that
 *	was sampled from. If no token of the vocabulary continues the
 *	document the request ends with ENGINE_FINISH_ERROR
 * @draft_max: speculative decoding per request (llama-server's
 *	speculative.n_max): most drafts per verify pass, 1..SPEC_MAX_DRAFT,
 *	capped by the engine's engine_opts.draft_max; 0: the engine's;
 *	-1: no speculation for this request. Ignored when the engine has
 *	no drafter; requests with a JSON schema are never speculated
 * @draft_min: speculative.n_min: fewest drafts worth a verify pass,
 *	0..SPEC_MAX_DRAFT; 0: the engine's
 * @cb: event callback (required)
 * @user: passed to @cb
 */
struct engine_request {
	const int32_t *prompt;
	int n_prompt;
	int max_tokens;
	struct sampler_params s;
	const char *const *stop;
	int n_stop;
	bool ignore_eos;
	float *prompt_logits;
	struct jm_schema *schema;
	int draft_max, draft_min;
	engine_event_fn cb;
	void *user;
};

/**
 * engine_create() - plan the model over the cards, upload the weights and
 * start the engine thread
 * @ep: out
 * @m: the model (must outlive the engine)
 * @tok: its tokenizer (must outlive the engine)
 * @cards: opened cards (rk_open_all())
 * @card_idx: indices into @cards to use, in pipeline order; NULL: 0..
 * @n_cards: entries of @card_idx (or cards used), >= 1
 * @o: options (NULL: defaults)
 * @err, @errlen: on failure the reason: "model does not fit on 2 cards:
 *	card0 needs ...", "card1 (/dev/accel/accel1): weight upload: ...",
 *	an option out of range
 *
 * Return: 0, -EINVAL (bad options), -ENOSPC (the model does not fit, even
 * with one slot; or @o->strict_slots and S slots do not fit), -ENOMEM, or
 * -EIO (a card failed).
 */
int engine_create(struct engine **ep, const struct llm_model *m,
		  const struct tokenizer *tok, struct rk_card *cards,
		  const int *card_idx, int n_cards, const struct engine_opts *o,
		  char *err, size_t errlen);

/**
 * engine_destroy() - cancel every request (each gets DONE with
 * ENGINE_FINISH_CANCELLED), stop the thread, free the cards' BOs. The
 * cards stay open. NULL is a no-op. Requests not yet put must still be
 * put (before or after).
 */
void engine_destroy(struct engine *e);

/**
 * struct engine_info - what engine_create() settled on
 * @n_slots: slots (after lowering)
 * @n_ctx: context per slot
 * @bucket: prefill bucket
 * @n_snap: hybrid models: state snapshot blocks on every card (0 else)
 * @n_ckpt: hybrid models: prefix-cache checkpoints per slot, of @n_snap
 *	(ENGINE_SNAPS_MIN_PER_SLOT..ENGINE_SNAPS_PER_SLOT; 0 else)
 * @kv_type: the K/V cache rows' QUANT_TYPE_* (never PLAN_KV_AUTO: what
 *	auto chose)
 * @queue_max: queue bound
 * @n_cards: cards used (may be fewer than offered: a card per block at most)
 * @n_vocab: vocabulary size
 * @plan: "card0: blk 0-2, card1: blk 3-4 + output"
 * @note: "" or why fewer slots, cards or a smaller bucket were taken
 */
struct engine_info {
	int n_slots;
	uint32_t n_ctx, bucket, n_snap, n_ckpt;
	int kv_type;
	int queue_max;
	int n_cards;
	uint32_t n_vocab;
	char plan[PLAN_STR_MAX];
	char note[256];
};

/** engine_get_info() - copy the settled parameters. */
void engine_get_info(const struct engine *e, struct engine_info *info);

/**
 * engine_submit() - queue a request
 * @e: engine
 * @r: the request (copied; @r may be freed on return)
 * @out: the request handle, to cancel and to put; set before the first
 *	callback can run (NULL on failure)
 * @err, @errlen: optional, a message for the non-zero returns, e.g. "the
 *	prompt has 4000 tokens and max_tokens is 200, more than the context
 *	of 4096 tokens"
 *
 * Return: 0 (the callback will be called; DONE last), -EINVAL (bad
 * request: no prompt, token out of range, bad sampling values, too many
 * or too long stop strings, no callback), -E2BIG (n_prompt + max_tokens
 * > n_ctx, or n_prompt > n_ctx with max_tokens -1), -EBUSY (the queue is
 * full: retry later), -EIO (the engine is dead after a card failure),
 * -ESHUTDOWN (engine_destroy() is under way), -ENOMEM. On failure nothing
 * was queued and no callback is made.
 */
int engine_submit(struct engine *e, const struct engine_request *r,
		  struct engine_req **out, char *err, size_t errlen);

/**
 * engine_cancel() - the client went away: finish @q with
 * ENGINE_FINISH_CANCELLED within one scheduler step (a queued request
 * at once). No-op after DONE. @q must not have been put.
 */
void engine_cancel(struct engine_req *q);

/**
 * engine_req_put() - drop the caller's reference. Allowed at any time; a
 * request put before its DONE keeps running (cancel it first if it should
 * not). The callback is never made after both put and DONE.
 */
void engine_req_put(struct engine_req *q);

/* TTFT / TPOT histogram bucket upper bounds, ms (the last bucket is +Inf). */
#define ENGINE_HIST_BUCKETS	12
extern const double engine_hist_le_ms[ENGINE_HIST_BUCKETS];

/**
 * struct engine_hist - cumulative histogram (Prometheus semantics)
 * @count: observations <= engine_hist_le_ms[i] (cumulative), i <
 *	ENGINE_HIST_BUCKETS; observations above the last bound only in @total
 * @total: observations
 * @sum_ms: sum of the observations, ms
 */
struct engine_hist {
	uint64_t count[ENGINE_HIST_BUCKETS];
	uint64_t total;
	double sum_ms;
};

#define ENGINE_MAX_CARDS	64

/**
 * struct engine_stats - counters since engine_create(), for /metrics
 * @active: requests holding a slot
 * @queued: requests waiting for a slot
 * @n_slots: slots
 * @requests: requests finished, by enum engine_finish
 * @prompt_tokens: prompt tokens of started requests
 * @cached_tokens: of those, taken from the prefix cache
 * @completion_tokens: tokens generated
 * @prefix_hits: requests that reused at least one cached token
 * @prefix_misses: requests that reused none
 * @steps: scheduler steps (micro-batches submitted)
 * @batch_tokens: tokens in those micro-batches
 * @jobs: card jobs submitted
 * @host_ns: host time spent in the pipeline not blocked on fences
 *	(embedding, programs, submits, fence passing, status reads), ns
 * @wait_ns: time the engine thread was blocked on fences, ns
 * @n_cards: entries of @card_busy
 * @card_busy: per card of the plan, the fraction of wall time since
 *	engine_create() its EXEC jobs were running (0..1), measured by the
 *	host from job submission/completion order
 * @uptime_s: seconds since engine_create()
 * @ttft: time to first token of finished requests
 * @tpot: time per output token (decode time / (completion_tokens - 1))
 *	of finished requests with at least two tokens
 * @draft_tokens: speculative decoding: tokens drafted and verified
 * @draft_accepted: of those, accepted
 * @verify_passes: micro-batches that verified drafts of a session
 * @spec: the engine's drafter (engine_opts.spec; SPEC_NONE without
 *	speculation), which the three counters above belong to
 * @failed: the engine stopped after a card failure (every request since
 *	gets -EIO); a server reports itself unhealthy
 * @failure: then the card's error, NUL-terminated; else ""
 */
struct engine_stats {
	int active, queued, n_slots;
	uint64_t requests[4];
	uint64_t prompt_tokens, cached_tokens, completion_tokens;
	uint64_t prefix_hits, prefix_misses;
	uint64_t steps, batch_tokens, jobs;
	uint64_t draft_tokens, draft_accepted, verify_passes;
	enum spec_kind spec;
	int64_t host_ns, wait_ns;
	int n_cards;
	double card_busy[ENGINE_MAX_CARDS];
	double uptime_s;
	struct engine_hist ttft, tpot;
	bool failed;
	char failure[384];
};

/** engine_get_stats() - a consistent snapshot of the counters. */
void engine_get_stats(struct engine *e, struct engine_stats *st);

/** engine_finish_name() - "stop", "length", "cancelled", "error". */
const char *engine_finish_name(enum engine_finish f);

#endif
