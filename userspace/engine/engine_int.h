/* SPDX-License-Identifier: MIT */
/*
 * Engine internals shared by engine.c (requests, thread), engine_setup.c
 * (planning, create/free) and engine_token.c (micro-batches, sampling,
 * text, finishing). Not a public header: the server uses engine.h only.
 */
#ifndef RK_LLM_ENGINE_INT_H
#define RK_LLM_ENGINE_INT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "jsonmatch.h"
#include "pipeline.h"
#include "planner.h"
#include "sampler.h"
#include "scheduler.h"
#include "textout.h"

/* Micro-batches the engine tracks at most (>= pipe_depth()). */
#define ENG_MAX_FLIGHT	8

/**
 * enum rq_state - where a request is
 * @RQ_QUEUED: waiting for a slot (in the queue, or admitted and not started)
 * @RQ_ACTIVE: running in a slot
 * @RQ_DONE: DONE delivered
 */
enum rq_state { RQ_QUEUED, RQ_ACTIVE, RQ_DONE };

/**
 * struct engine_req - one request (engine.h's handle)
 * @e: its engine
 * @refs: caller's + engine's references (atomic)
 * @cancel: engine_cancel() was called (atomic)
 * @state: enum rq_state (engine thread)
 * @engine_ref_dropped: the engine's reference is gone
 * @n_flight: its tokens in micro-batches not yet collected
 * @next: queue / list link
 * @prompt, @n_prompt, @max_tokens, @s, @ignore_eos, @prompt_logits, @cb,
 *	@user: copied from struct engine_request
 * @bias: the copy of s.bias that s.bias points at (owned)
 * @slot: its session slot once admitted, else -1
 * @cached: prompt tokens reused from the slot (prefix cache)
 * @sq: scheduling state
 * @smp: its sampler
 * @jm: the JSON-schema matcher of engine_request.schema, or NULL
 * @txo: its text stream
 * @n_gen: tokens generated (EOS not counted)
 * @lp: log-probabilities per generated token (with s.logprobs), @cap_lp
 * @got_first: the first token was sampled
 * @t_submit, @t_start, @t_first: times, ms (eng_now_ms())
 */
struct engine_req {
	struct engine *e;
	int refs;
	bool cancel;
	enum rq_state state;
	bool engine_ref_dropped;
	int n_flight;
	struct engine_req *next;

	int32_t *prompt;
	int n_prompt;
	int max_tokens;
	struct sampler_params s;
	struct sampler_bias *bias;
	bool ignore_eos;
	float *prompt_logits;
	engine_event_fn cb;
	void *user;

	int slot, cached;
	int restore;		/* hybrid: snapshot block to restore first, or -1 */
	struct sched_seq sq;
	struct sampler *smp;
	struct jm_state *jm;
	struct txo txo;
	int n_gen;
	struct engine_logprob *lp;
	int cap_lp;
	bool got_first;
	double t_submit, t_start, t_first;

	/* Speculative decoding (engine_spec.c). */
	int draft_max, draft_min;	/* this request's; draft_max 0: none */
	int32_t *draft;			/* draft_max entries: the proposal */
	int draft_n, draft_acc;		/* drafted / accepted so far */
	bool spec_rb;			/* a rollback is pending (restore / replay) */
	struct spec_rng rng;		/* acceptance draws */
};

/*
 * Most recurrent-state checkpoints per slot of a hybrid model
 * (engine_hybrid.c); a slot has engine_info.n_ckpt of them.
 */
#define ENG_SNAPS	ENGINE_SNAPS_PER_SLOT

/**
 * struct eng_snaps - a slot's checkpoints
 * @pos: per checkpoint (the first engine_info.n_ckpt), the tokens of the slot's history its state
 *	has seen (0: none)
 * @taken: per snapshot block, @clock when it was written (its age)
 * @clock: checkpoints taken in this slot so far
 * @keep: the running request's reuse point: checkpoints at or before it
 *	(the shared prefix, e.g. a system prompt) are overwritten last
 * @spec_blk: speculative decoding: per index j of the last verify pass
 *	(0: the decode token, j: its j-th draft), the pipeline block its
 *	state after that token was copied to, or 0 (none: blocks of
 *	snapshots are >= n_slots)
 * @spec_from: the block the verify pass's first token restored, or 0
 * @live_blk: the slot's live state is not its history's (a request ended
 *	with a rollback pending): the block that holds the state of its
 *	@n_toks tokens instead, or 0
 */
struct eng_snaps {
	int pos[ENG_SNAPS];
	unsigned int taken[ENG_SNAPS];
	unsigned int clock;
	int keep;
	int spec_blk[SPEC_MAX_DRAFT];
	int spec_from;
	int live_blk;
};

/**
 * struct eng_flight - a micro-batch in flight
 * @n: tokens
 * @t: the tokens (bucket entries)
 * @rq: the request of each token
 */
struct eng_flight {
	int n;
	struct sched_tok *t;
	struct engine_req **rq;
};

/**
 * struct engine - see engine.h
 * @m, @tok: model and tokenizer
 * @o: options as given (defaults filled in)
 * @info: what was settled
 * @plan: the segment plan (card indices into the caller's array)
 * @pipe: the card pipeline
 * @eos: end-of-sequence token id (-1: none); generation stops at every
 *	end-of-generation token (tok_is_eog(): EOS, <|im_end|>, <|eot_id|>...)
 * @thr, @thread_started: the engine thread
 * @mu, @cv: protect and signal everything below up to @stats
 * @stopping: engine_destroy() was called
 * @dead: a card job failed; @dead_msg why
 * @kick: a submit or cancel happened since the thread last looked
 * @q_head, @q_tail, @n_queued: the FIFO of requests waiting for a slot
 * @n_busy: slots held by requests (admitted)
 * @stats: counters (engine_get_stats())
 * @busy_ns: per card, EXEC time observed, ns
 * @t_created: engine_create() time, ms
 * @slots: engine thread from here on: the prefix-cache record per slot
 * @run: the running request of each slot, or NULL
 * @n_running: non-NULL entries of @run
 * @order: admission counter
 * @step: scheduler steps
 * @mb: the micro-batch being built (bucket entries)
 * @ptok: its pipeline form
 * @fl, @fl_head, @n_flight: ring of micro-batches in flight, oldest at
 *	@fl_head
 * @n_mb: micro-batches submitted so far (the next one's number)
 * @cost: card time by micro-batch size (bucket + 1 entries)
 * @mb_limit: most tokens of a micro-batch while sessions decode
 *	(sched_mb_limit() of @cost's F / T)
 * @trace_tok: with engine_opts.trace, bucket entries for its events
 * @logits: collected logits rows, @max_rows of n_vocab floats
 * @piece: token text buffer of @piece_cap = tok_max_piece() bytes (a piece
 *	is never cut, however long its token is)
 * @ev_ids, @ev_lp, @cap_ev: event scratch
 * @hybrid: the model has recurrent (DeltaNet) blocks (engine_hybrid.c)
 * @snaps: hybrid: the checkpoints of each slot
 * @jv: the vocabulary's bytes for JSON-schema requests (engine_json.c),
 *	built at the first one
 * @drafter: speculative decoding's drafter (engine_opts.spec != SPEC_NONE)
 * @n_spec_blk: hybrid with speculation: snapshot blocks per slot for the
 *	verify passes (draft_max + 1), after the engine_info.n_ckpt checkpoints
 */
struct engine {
	const struct llm_model *m;
	const struct tokenizer *tok;
	struct engine_opts o;
	struct engine_info info;
	struct plan plan;
	struct pipeline *pipe;
	int32_t eos;
	pthread_t thr;
	bool thread_started;

	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stopping, dead, kick;
	char dead_msg[384];
	struct engine_req *q_head, *q_tail;
	int n_queued, n_busy;
	struct engine_stats stats;
	int64_t busy_ns[ENGINE_MAX_CARDS];
	double t_created;

	struct sched_slot *slots;
	struct engine_req **run;
	int n_running;
	uint64_t order, step;
	struct sched_tok *mb;
	struct pipe_tok *ptok;
	struct eng_flight fl[ENG_MAX_FLIGHT];
	int fl_head, n_flight;
	uint64_t n_mb;
	struct sched_cost cost;
	int mb_limit;
	struct engine_trace_tok *trace_tok;
	float *logits;
	int max_rows;
	char *piece;
	size_t piece_cap;
	int32_t *ev_ids;
	struct engine_logprob *ev_lp;
	int cap_ev;
	bool hybrid;
	struct eng_snaps *snaps;
	struct eng_jvocab *jv;
	struct spec_drafter drafter;
	int n_spec_blk;
};

double eng_now_ms(void);
/* Drop the engine's reference of a DONE request with nothing in flight. */
void eng_req_release(struct engine_req *q);
/* Engine thread entry (engine.c); 0 or -1. */
int eng_start_thread(struct engine *e);
/* Free everything of an engine whose thread is gone (engine_setup.c). */
void eng_free(struct engine *e);

/*
 * engine_json.c: eng_json_pick() checks the sampled token @tok of @q
 * against its JSON schema (q->jm) and, when it is refused, draws again
 * from @logits with every refused token masked to -inf; the chosen token
 * is consumed by the matcher (an end-of-generation token is chosen only
 * when the document is whole). *@used: the logits the token was drawn
 * from (@logits or the engine's masked copy), for its log-probability.
 * Return: the token, or -1 when no token continues the document (or out
 * of memory: @why says which). eng_json_free() frees e->jv.
 */
struct eng_jvocab;
int32_t eng_json_pick(struct engine *e, struct engine_req *q, const float *logits, int32_t tok,
		      const float **used, const char **why);
void eng_json_free(struct engine *e);

/* engine_token.c */
int eng_start(struct engine *e, struct engine_req *q);
void eng_finish(struct engine *e, struct engine_req *q, enum engine_finish f,
		const char *msg);
int eng_build(struct engine *e);
int eng_submit_batch(struct engine *e, int n, char *err, size_t errlen);
int eng_collect(struct engine *e, char *err, size_t errlen);
void eng_drop_flight(struct engine *e);
/*
 * Card times of collected micro-batches (pipe_exec_cost()) refine F / T
 * and so the token limit of micro-batches while sessions decode.
 */
void eng_learn_cost(struct engine *e);
/* Nothing to do: read the fence timestamps still pending (statistics, F / T). */
void eng_idle(struct engine *e);

/*
 * engine_hybrid.c: eng_hybrid_snaps() is the pipeline's n_snap (0 unless
 * hybrid); eng_hybrid_reuse() turns the scheduler's reuse q->cached into
 * one the recurrent state allows and picks the checkpoint to restore
 * (q->restore); eng_hybrid_flags() marks the restores and checkpoints of a
 * micro-batch in its pipeline form.
 */
uint32_t eng_hybrid_snaps(const struct engine *e);
/* The n_ckpt checkpoint blocks of all slots (before the spec blocks). */
uint32_t eng_hybrid_ckpt_blocks(const struct engine *e);
int eng_hybrid_reuse(struct engine *e, struct engine_req *q);
void eng_hybrid_flags(struct engine *e, struct pipe_tok *t, int n);

/*
 * engine_spec.c: speculative decoding. eng_spec_setup() settles the
 * options (drafter, draft_max, draft_min, the spec blocks of hybrid
 * models) before planning; eng_spec_open() opens the draft model of
 * --spec draft or the MTP block of --spec mtp once the context is planned
 * (0 or spec_draft_open()'s / spec_mtp_open()'s error); eng_spec_start() a
 * request's (0 or -ENOMEM); eng_spec_prepare() drafts for @q's ready
 * decode token, sampled from the collected logits row @row (whose final
 * hidden state the mtp drafter takes); eng_spec_verify()
 * takes the logits rows @rows of a verify pass (@t: its decode token and
 * @nd drafts after it), accepts, emits and rolls back; eng_spec_flags()
 * marks the per-position snapshots of the verify passes of a micro-batch
 * (hybrid); eng_spec_end() records a pending rollback of a request that
 * ends in the slot's prefix-cache state.
 */
int eng_spec_setup(struct engine *e, char *err, size_t errlen);
int eng_spec_open(struct engine *e, char *err, size_t errlen);
/*
 * eng_spec_blocks() - state snapshot blocks a slot needs for the verify
 * pass's rollback (hybrid models with --spec: draft_max + 1, else 0);
 * eng_spec_rows() - logits rows a slot's micro-batch may return (--spec:
 * 1 + draft_max, else 0: one). Both read unsettled options as
 * eng_spec_setup() settles them (engine_fit_opts() plans with them).
 */
uint32_t eng_spec_blocks(const struct llm_model *m, const struct engine_opts *o);
uint32_t eng_spec_rows(const struct engine_opts *o);
int eng_spec_start(struct engine *e, struct engine_req *q, uint64_t seed);
void eng_spec_prepare(struct engine *e, struct engine_req *q, const float *row);
void eng_spec_verify(struct engine *e, struct engine_req *q, const struct sched_tok *t, int nd,
		     const float *rows);
void eng_spec_flags(struct engine *e, struct pipe_tok *t, int n);
void eng_spec_end(struct engine *e, struct engine_req *q);

/*
 * engine_token.c: eng_emit() streams token @tok of @q sampled from @used
 * (log-probabilities) and finishes the request when it ends there.
 * Return: true when the request goes on.
 */
bool eng_emit(struct engine *e, struct engine_req *q, const float *used, int32_t tok);

#endif
