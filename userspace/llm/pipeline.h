/* SPDX-License-Identifier: MIT */
/*
 * Pipeline-parallel execution of a model over several RK1828 cards.
 *
 * Each card (stage) holds the weights of one contiguous segment of blocks
 * (planner.h) and the KV caches of n_seq sequences in card memory. The
 * unit of work is a micro-batch of at most B (bucket) tokens, each with
 * its own sequence and position (segment program 1.1, F_BATCH): a prefill
 * chunk, the decode tokens of several sessions, or both. For every
 * micro-batch and stage the runtime queues
 *   IN   COPY host BO -> card input BO: the stage's segment program and
 *        token table followed by the hidden states (stage 0: embeddings
 *        the host wrote; stage k > 0: what stage k-1 wrote into a host BO
 *        shared as a dma-buf, waiting on stage k-1's OUT syncobj, which
 *        the two cards share)
 *   EXEC the segment program (RK1828_PROG_OP_DECODER)
 *   OUT  COPY card output BO -> host BO (last stage: logits rows)
 * with explicit syncobj dependencies only (a card names its neighbours'
 * syncobjs through handles shared at setup), and stages + 1 buffer slots
 * per stage (plan_slots()), so micro-batch i+1 runs on card k while i runs
 * on card k+1: pipe_submit() queues without waiting and pipe_collect()
 * waits for the oldest, so up to one micro-batch per card is in flight.
 * Every job's status is checked: the last job's status carries the error
 * of any job before it (the driver fails a job whose in-sync failed), and
 * a failure is traced back to the first failed job, so it is reported
 * with its card and errno, never as garbage.
 * See userspace/doc/runtime.rst.
 */
#ifndef RK_LLM_PIPELINE_H
#define RK_LLM_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "planner.h"
#include "rk1828.h"

/**
 * struct pipe_opts - pipeline parameters
 * @n_ctx: KV cache rows (maximum sequence length) of each sequence
 * @bucket: tokens per prefill bucket and per micro-batch (>= 1)
 * @n_snap: hybrid models (qwen35): recurrent-state snapshot blocks on
 *	every card besides the n_seq sequences (checkpoints a prefix cache
 *	restores; PIPE_TOK_SNAPSHOT / PIPE_TOK_RESTORE); 0 for none, ignored
 *	for other models
 * @n_seq: sequences (the engine's session slots) with their own KV caches
 *	on every card; 0 means 1
 * @max_rows: most logits rows one micro-batch may return; 0: one per
 *	sequence (min(n_seq, bucket)); more for speculative decoding, which
 *	verifies several positions of a sequence at once (capped at @bucket;
 *	plan with the same struct plan_sizes.max_rows)
 * @timeout_ms: per-wait timeout, ms (a card that stalls longer is an error)
 * @kv_type: K/V cache rows' QUANT_TYPE_*: F32 (0), F16, Q8_0 or Q4_0
 *	(llm_kv_type_ok(); plan with the same struct plan_sizes.kv_type)
 * @verbose: log buffer sizes and uploads to stderr
 * @progress: optional, called during the weight upload with the bytes
 *	uploaded so far and the total over all cards
 * @progress_user: passed to @progress
 * @no_p2p: hidden states always take the host hop, also between cards
 *	that could use peer-to-peer DMA (comparisons; RK1828_P2P=off in the
 *	environment does the same)
 * @hidden: the last card also returns, after the logits rows, each logits
 *	token's final hidden state rmsnorm(x) * output_norm (dim floats;
 *	RK1828_PROG_F_HIDDEN, program revision 1.4), read with pipe_hidden():
 *	what a multi-token-prediction drafter takes (spec_mtp.c)
 */
struct pipe_opts {
	uint32_t n_ctx;
	uint32_t bucket;
	uint32_t n_seq;
	uint32_t n_snap;
	uint32_t max_rows;
	uint32_t timeout_ms;
	int kv_type;
	int verbose;
	void (*progress)(void *user, uint64_t done, uint64_t total);
	void *progress_user;
	bool no_p2p;
	bool hidden;
};

struct pipeline;
struct llm_hop;

/**
 * pipe_create() - allocate buffers on every card of @plan and upload the
 * segments' weights
 * @pp: out
 * @m: the model (its GGUF mapping must outlive the pipeline)
 * @cards: all opened cards; @plan's seg[].card indexes this array
 * @plan: from plan_model() with the same n_ctx and bucket as @o
 * @o: options
 * @err, @errlen: "card1 (/dev/accel/accel1): ...: reason" on failure
 *
 * Return: 0 or -1 (everything already allocated is released).
 */
int pipe_create(struct pipeline **pp, const struct llm_model *m,
		struct rk_card *cards, const struct plan *plan,
		const struct pipe_opts *o, char *err, size_t errlen);

/** pipe_destroy() - release every BO and syncobj (NULL is a no-op). */
void pipe_destroy(struct pipeline *p);

/**
 * pipe_forward() - run @n tokens of sequence 0 at positions [@pos, @pos +
 * @n) through every stage in buckets (pipelined: up to pipe_depth() in
 * flight) and return the logits of the last one; no micro-batch of
 * pipe_submit() may be in flight
 * @tokens: @n token ids (< n_vocab)
 * @pos: position of tokens[0]; the KV caches must hold positions < @pos
 *	from earlier calls
 * @logits: out, n_vocab floats
 *
 * Return: 0, or -1 with @err naming the card, the job and the errno
 * (e.g. "card1: EXEC (bucket 2, pos 8): job failed: Bad address"). After
 * a failed job (or submit) the KV caches are suspect and every later call
 * fails with that first error; bad arguments (context overflow, token out
 * of range) fail without queuing anything and leave the pipeline usable.
 */
int pipe_forward(struct pipeline *p, const int32_t *tokens, int n, int pos,
		 float *logits, char *err, size_t errlen);

/* Most sequences (struct pipe_opts.n_seq). */
#define PIPE_MAX_SEQ		64

/* struct pipe_tok.flags: return this token's logits. */
#define PIPE_TOK_LOGITS		0x1u
/*
 * Hybrid models: after this token, copy its sequence's recurrent states
 * (every DeltaNet block on every card) into block @aux, a snapshot: @aux
 * is n_seq + j for snapshot j < n_snap (or another sequence < n_seq).
 */
#define PIPE_TOK_SNAPSHOT	0x2u
/*
 * Hybrid models: before this token, the first of its sequence in the
 * micro-batch, copy block @aux's recurrent states into its sequence
 * (resume from a checkpoint; the K/V rows below its position must still
 * be the checkpoint's prefix).
 */
#define PIPE_TOK_RESTORE	0x4u

/**
 * struct pipe_tok - one token of a micro-batch
 * @token: token id (< n_vocab)
 * @pos: its position in its sequence (< n_ctx); its KV row
 * @seq: its sequence (< n_seq), whose KV cache it reads and writes
 * @flags: PIPE_TOK_*
 * @aux: with PIPE_TOK_SNAPSHOT or PIPE_TOK_RESTORE, the other block
 *	(< n_seq + n_snap, not @seq); else 0
 */
struct pipe_tok {
	int32_t token;
	int32_t pos;
	uint32_t seq;
	uint32_t flags;
	uint32_t aux;
};

/**
 * pipe_submit() - queue one micro-batch on every stage without waiting
 * for its result
 * @p: pipeline
 * @t: @n tokens (1..bucket); within one sequence positions must be
 *	distinct, and the KV rows below each token's position must have been
 *	written by this or earlier micro-batches (attention of a token at
 *	position q reads rows 0..q of its sequence)
 * @n: tokens
 * @err, @errlen: reason on failure
 *
 * Micro-batches run on each card in submission order, so a micro-batch
 * sees the KV rows written by every earlier one. At most pipe_depth()
 * micro-batches may be uncollected at a time.
 *
 * Return: 0, or -1: bad arguments (nothing queued, the pipeline stays
 * usable) or a failed submit (the pipeline is unusable, as after a failed
 * job).
 */
int pipe_submit(struct pipeline *p, const struct pipe_tok *t, int n,
		char *err, size_t errlen);

/**
 * pipe_collect() - wait for the oldest uncollected micro-batch
 * @p: pipeline
 * @logits: out, one row of n_vocab floats per token of that micro-batch
 *	with PIPE_TOK_LOGITS, in token order (may be NULL when it has none)
 * @max_rows: rows @logits has room for (at most min(max(n_seq,
 *	pipe_opts.max_rows), bucket) rows are ever returned)
 * @err, @errlen: the failed card and job
 * Return: rows written (>= 0), or -1 (nothing uncollected, too little room,
 * or a failed job: then the pipeline is unusable).
 */
int pipe_collect(struct pipeline *p, float *logits, int max_rows, char *err,
		 size_t errlen);

/**
 * pipe_probe() - ask every card of @p whether it is still there
 * @p: pipeline, idle or not (no job is submitted or waited for)
 * @err, @errlen: out, the first card that did not answer and why
 *
 * One GET_PARAM per card (rk_card_refresh(): the card's free memory), so
 * that an idle server learns of a card that was unplugged, removed or
 * whose link died before the next request fails on it.
 *
 * Return: 0 when every card answers; -1 with @err ("card1
 * (/dev/accel/accel1): ...: No such device") otherwise, and then the
 * pipeline is unusable, as after a failed job.
 */
int pipe_probe(struct pipeline *p, char *err, size_t errlen);

/**
 * pipe_exec_cost() - card time of a collected micro-batch, oldest first:
 * its EXEC jobs' times summed over the stages, from the fence timestamps
 * (each from the later of its input's arrival and the previous EXEC's end
 * to its own end, as in struct pipe_stats.busy_ns)
 * @p: pipeline
 * @n_tok: out, its tokens
 * @ns: out, its card time, ns
 *
 * The timestamps are read when the host has time (see pipe_account()),
 * so a micro-batch's time arrives up to stages + 1 micro-batches after
 * its collection; micro-batches without timestamps on some stage give
 * none, and only the newest 16 are kept.
 * Return: 1 (@n_tok and @ns set), or 0 when none is pending.
 */
int pipe_exec_cost(struct pipeline *p, int *n_tok, int64_t *ns);

/** pipe_in_flight() - micro-batches submitted and not yet collected. */
int pipe_in_flight(const struct pipeline *p);

/**
 * pipe_depth() - how many micro-batches may be in flight at once: the
 * number of stages (one per card); a single-card pipeline allows 2 so the
 * host prepares the next micro-batch while the card runs one
 */
int pipe_depth(const struct pipeline *p);

/** pipe_n_stages() - cards in the pipeline. */
int pipe_n_stages(const struct pipeline *p);

/**
 * pipe_hop_p2p() - do hidden states reach stage @k by peer-to-peer DMA
 * @p: the pipeline
 * @k: a stage, 1 .. pipe_n_stages() - 1
 *
 * Return: 1 when stage k-1 writes them straight into stage @k's card
 * memory, 0 for the host hop (or a @k out of range).
 */
int pipe_hop_p2p(const struct pipeline *p, int k);

/**
 * struct pipe_stats - host-side accounting since pipe_create()
 * @forwards: micro-batches submitted
 * @jobs: jobs submitted
 * @host_ns: time in pipe_submit()/pipe_collect()/pipe_account() not spent
 *	blocked waiting for fences (embedding, programs, submits, status and
 *	fence timestamp reads), ns
 * @wait_ns: time blocked in fence waits, ns
 * @busy_ns: per stage, time its EXEC jobs ran, from the fence timestamps
 *	(from the later of the input's arrival and the previous EXEC's end
 *	to the EXEC's end), ns; 0 where the driver gives no timestamps. The
 *	timestamps of a collected micro-batch are read when the host has
 *	time (see pipe_account()), so this lags by up to stages + 1
 *	micro-batches until then.
 */
struct pipe_stats {
	uint64_t forwards, jobs;
	int64_t host_ns, wait_ns;
	int64_t busy_ns[PLAN_MAX_CARDS];
};

/**
 * pipe_account() - read the fence timestamps of every collected
 * micro-batch not accounted yet into the busy times
 * @p: pipeline
 * @err, @errlen: reason on failure
 *
 * pipe_collect() reads them itself while it would wait for a micro-batch
 * still running, and pipe_submit() before it reuses a buffer slot; call
 * this when the host is idle so that pipe_get_stats() is up to date.
 * Return: micro-batches accounted (0 also after an earlier job failure),
 * or -1 when a read failed (the pipeline is unusable then).
 */
int pipe_account(struct pipeline *p, char *err, size_t errlen);

/**
 * struct pipe_trace_rec - the jobs of one micro-batch on one stage, as
 * the accounting of collected micro-batches reads their fence timestamps
 * (when pipe_collect() would wait, before a slot is reused, or in
 * pipe_account(): call that at the end of a traced run)
 * @stage: pipeline stage
 * @card: its card's device index
 * @mb: micro-batch number (0, 1, ... in submission order)
 * @n_tokens: tokens in the micro-batch
 * @n_logits: logits rows it returned (last stage), else 0
 * @submit_ns: when pipe_submit() queued it (CLOCK_MONOTONIC)
 * @in_end_ns, @exec_end_ns, @out_end_ns: fence timestamps of its input
 *	COPY, EXEC and output COPY (CLOCK_MONOTONIC; 0 where the driver
 *	gives none)
 * @in_bytes, @out_bytes: bytes of the two COPY jobs
 *
 * The jobs of a queue run one at a time in submission order, so a job's
 * start is the later of its dependencies' ends and the previous job of
 * its queue's end (pipeline.h): a trace reader rebuilds the timeline.
 */
struct pipe_trace_rec {
	int stage, card;
	long mb;
	int n_tokens, n_logits;
	int64_t submit_ns, in_end_ns, exec_end_ns, out_end_ns;
	uint64_t in_bytes, out_bytes;
};

/* A trace callback: called once per micro-batch and stage, in order. */
typedef void (*pipe_trace_fn)(void *user, const struct pipe_trace_rec *r);

/**
 * pipe_set_trace() - call @fn for the jobs of every micro-batch from now on
 * (NULL: stop)
 */
void pipe_set_trace(struct pipeline *p, pipe_trace_fn fn, void *user);

/**
 * pipe_hidden() - with pipe_opts.hidden: the final hidden states of the
 * micro-batch pipe_collect() returned last, one row of m->dim floats per
 * logits row in the same order; NULL without pipe_opts.hidden. Valid
 * until the next pipe_collect().
 */
const float *pipe_hidden(const struct pipeline *p);

/** pipe_get_stats() - copy the counters of @p into @st. */
void pipe_get_stats(const struct pipeline *p, struct pipe_stats *st);

#endif
