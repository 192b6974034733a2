/* SPDX-License-Identifier: MIT */
/*
 * Pipeline internals shared by pipeline_setup.c (weights layout, upload,
 * buffers, cross-card links) and pipeline.c (micro-batches in flight:
 * programs, jobs, fences, status checks). Not a public header.
 */
#ifndef RK_LLM_PIPELINE_INT_H
#define RK_LLM_PIPELINE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "hops.h"
#include "pipeline.h"
#include "rk1828/program.h"

/* Buffer slots per stage at most (plan_slots()). */
#define MAX_SLOTS	8
/* Micro-batch card times kept for pipe_exec_cost() (> MAX_SLOTS). */
#define PIPE_COST_RING	16

/**
 * struct stage - one card of the pipeline and its buffers
 * @card: the card
 * @first: first block of its segment
 * @count: blocks in the segment
 * @last: it also runs the output norm and the LM head
 * @weights: card BO with the segment's weights image
 * @kv: card BO with every block's K and V caches: for block i, K at
 *	2 * i * @kv_region and V at (2 * i + 1) * @kv_region, each region
 *	n_seq blocks of @kv_one bytes (the program's kv_seq_stride)
 * @kv_one: bytes of one sequence's cache of one block (n_ctx rows of
 *	kv_dim values in pipe_opts.kv_type, rk1828_kv_seq_bytes())
 * @kv_region: n_seq * @kv_one
 * @in_card: per buffer slot, card BO: program area, then hidden states in
 * @out_card: per buffer slot, card BO: hidden states or logits out
 * @in_host: per buffer slot, host BO the IN copy reads (stage 0: its own;
 *	stage k > 0: stage k-1's @out_host, imported as a dma-buf)
 * @out_host: per buffer slot, host BO the OUT copy writes
 * @in_map: CPU view of @in_host
 * @sy_in: per slot, syncobj signalled by the IN copy
 * @sy_exec: per slot, syncobj signalled by the EXEC
 * @sy_out: per slot, syncobj signalled by the OUT copy
 * @sy_prev: per slot, this card's handle to stage k-1's @sy_out (k > 0)
 * @sy_next: per slot, this card's handle to stage k+1's @sy_in (the reader
 *	of @out_host), k < last
 * @checked: the jobs last queued in the slot were waited for and their
 *	status read
 * @bucket_of: micro-batch number last queued in the slot (messages)
 * @pos_of: position of its first token (messages)
 * @tmpl: program template (header and layers), @prog_bytes bytes
 * @prog_bytes: header and layers (the program's size field)
 * @prog_size: program area at the start of each input buffer: the
 *	program, then the token table (bucket entries), 64-aligned; the
 *	hidden states follow it
 * @out_bytes: output BO size per slot
 * @submit_ns: per slot, when its micro-batch was submitted (traces)
 * @in_bytes_of, @out_bytes_of: per slot, bytes of its two COPY jobs
 * @exec_end_ns: when the last checked EXEC finished (fence timestamp)
 * @busy_ns: EXEC time observed from fence timestamps, ns
 * @state_off: hybrid models: offset in @kv of block i's two state regions
 *	(K and V caches, or conv and recurrent state), 2 per block
 * @state_one: hybrid models: bytes of one sequence's block of each region
 * @p2p_in: k > 0: hidden states arrive by peer-to-peer DMA: @in_card are
 *	peer-window BOs that stage k-1's OUT copy writes directly (its
 *	@out_peer), and @in_host holds only the program area
 * @hop: k > 0: how hidden states come from stage k-1 (hops.h)
 * @out_peer: per slot, stage k+1's @in_card imported here when stage k+1
 *	has @p2p_in (the OUT copy's destination)
 */
struct stage {
	struct rk_card *card;
	int first, count, last;
	struct rk_bo weights, kv;
	uint64_t kv_one, kv_region;
	struct rk_bo in_card[MAX_SLOTS], out_card[MAX_SLOTS];
	struct rk_bo in_host[MAX_SLOTS], out_host[MAX_SLOTS];
	uint8_t *in_map[MAX_SLOTS];
	uint32_t sy_in[MAX_SLOTS], sy_exec[MAX_SLOTS], sy_out[MAX_SLOTS];
	uint32_t sy_prev[MAX_SLOTS], sy_next[MAX_SLOTS];
	bool checked[MAX_SLOTS];
	long bucket_of[MAX_SLOTS];
	int pos_of[MAX_SLOTS];
	int64_t submit_ns[MAX_SLOTS];
	uint64_t in_bytes_of[MAX_SLOTS], out_bytes_of[MAX_SLOTS];
	uint8_t *tmpl;
	uint64_t prog_bytes, prog_size;
	uint64_t out_bytes;
	int64_t exec_end_ns, busy_ns;
	uint64_t *state_off, *state_one;
	bool p2p_in;
	struct llm_hop hop;
	struct rk_bo out_peer[MAX_SLOTS];
};

/**
 * struct pipeline - the cards, their buffers and the micro-batches in flight
 * @m: the model
 * @o: options (defaults filled in)
 * @n_stages: cards
 * @st: the stages
 * @nslot: buffer slots per stage (plan_slots()); micro-batch i uses slot
 *	i % @nslot
 * @max_rows: logits rows one micro-batch may return (min(n_seq, bucket))
 * @n_buckets: micro-batches submitted so far
 * @n_flight: of those, not yet collected (the newest ones)
 * @n_acct: micro-batches whose fence timestamps were read into the busy
 *	times (the oldest ones; those collected after them are pending)
 * @ntok_of: per slot, tokens of its micro-batch
 * @cost, @cost_head, @cost_n: ring of accounted micro-batches' card times
 *	(tokens, ns summed over the stages) not yet taken by pipe_exec_cost()
 * @rows_of: per slot, logits rows its micro-batch returns
 * @up_done: weight bytes uploaded so far (progress)
 * @up_total: weight bytes to upload, estimated from the model
 * @stats: host-side counters
 * @trace: optional per micro-batch and stage callback (pipe_set_trace())
 * @trace_user: passed to @trace
 * @failed: first job failure; the pipeline is unusable after it
 * @hybrid: the model has DeltaNet or gated-attention blocks: programs are
 *	RK1828_PROG_OP_HYBRID
 * @row_floats: floats of one returned row: n_vocab, plus dim with
 *	pipe_opts.hidden (the hidden rows follow the logits rows)
 * @hid: pipe_opts.hidden: the last collected micro-batch's hidden rows
 *	(@max_rows of dim floats), else NULL
 */
struct pipeline {
	const struct llm_model *m;
	bool hybrid;
	struct pipe_opts o;
	int n_stages;
	struct stage *st;
	int nslot;
	int max_rows;
	long n_buckets, n_acct;
	int n_flight;
	int ntok_of[MAX_SLOTS];
	struct { int n_tok; int64_t ns; } cost[PIPE_COST_RING];
	unsigned int cost_head, cost_n;
	int rows_of[MAX_SLOTS];
	uint64_t up_done, up_total;
	struct pipe_stats stats;
	pipe_trace_fn trace;
	void *trace_user;
	char failed[384];
	size_t row_floats;
	float *hid;
};

/* One contiguous piece of a weights image: @size bytes from @src at @off. */
struct pipe_piece {
	uint64_t off;
	const void *src;
	uint64_t size;
};

/*
 * struct pipe_layout - a stage's weights image being built: the pieces,
 * the F32 copies made for norms and biases (@owned, freed with it), and
 * the image size
 */
struct pipe_layout {
	struct pipe_piece *pieces;
	int n_pieces, cap;
	void **owned;
	int n_owned;
	uint64_t size;
};

/*
 * pipe_lay_tensor() - place tensor @t (norms and biases @as_f32) in the
 * image at PLAN_TENSOR_ALIGN; @ht gets its offset + 1 (0 stays "absent";
 * pipe_rebase() turns it into a card address) and type. NULL @t: absent.
 * Return: 0, or -1 when out of memory or pieces.
 */
int pipe_lay_tensor(struct pipe_layout *L, const struct gguf_tensor *t, bool as_f32,
		    struct rk1828_prog_tensor *ht);

/*
 * pipe_prog_header() - the fields of program header @h that every program
 * of stage @st shares (include/rk1828/program.h): magic, @op, @size bytes,
 * the stage's layers, the model's shapes, n_ctx and n_seq. The caller sets
 * the op's own fields (kv_seq_stride, n_snap) and the output tensors.
 */
void pipe_prog_header(const struct pipeline *p, const struct stage *st, uint32_t op,
		      uint32_t size, struct rk1828_program *h);

/* pipe_rebase() - offset + 1 written by pipe_lay_tensor() -> card address. */
void pipe_rebase(struct rk1828_prog_tensor *ht, uint64_t base);

/*
 * Hybrid models (qwen35, pipeline_hybrid.c): RK1828_PROG_OP_HYBRID programs
 * of struct rk1828_prog_hlayer records.
 *
 * pipe_hybrid_template() lays out stage @st's tensors into @L and writes
 * the program template @h (header and records, state regions as offsets
 * into the state BO: st->state_off/state_one are allocated and filled);
 * returns the state BO size in *@state_bytes, or -1 (out of memory).
 * pipe_hybrid_rebase() turns the template's offsets into card addresses
 * once the weights and state BOs exist.
 */
int pipe_hybrid_template(struct pipeline *p, struct stage *st, struct pipe_layout *L,
			 struct rk1828_program *h, uint64_t *state_bytes);
void pipe_hybrid_rebase(struct pipeline *p, struct stage *st, struct rk1828_program *h);

/* "card1 (/dev/accel/accel1): ..." (or just the message without @st); -1. */
int pipe_err(char *err, size_t errlen, const struct stage *st, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * pipe_job_ok() - status of the job that signals @sy on @st: waits for it
 * when @wait (or when it turns out to be still running); @ts_ns (optional)
 * gets its fence timestamp (0 when unknown). -1 with @err naming the job
 * (@what, micro-batch @bucket, position @pos) on failure or timeout.
 */
int pipe_job_ok(struct pipeline *p, struct stage *st, uint32_t sy, bool wait,
		const char *what, long bucket, int pos, int64_t *ts_ns,
		char *err, size_t errlen);

#endif
