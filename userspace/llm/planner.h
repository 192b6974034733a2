/* SPDX-License-Identifier: MIT */
/*
 * Segment planner: splits the decoder blocks 0..L-1 of a model into
 * contiguous segments, one per card, balancing card bytes.
 *
 * Rule (Rockchip's RKLLM multi-card rule, DESIGN.md section 7): segments
 * are contiguous; a card's load is the weight bytes of its blocks plus
 * their KV caches plus the card's activation buffers; the last card also
 * holds the final norm and the LM head (and the logits buffer), so it gets
 * fewer blocks. The plan minimises the largest card load; among plans
 * with that optimum it minimises the sum of squared loads (most even).
 * Every card's load must fit its free memory; otherwise the planner
 * refuses and names the card, what it needs and what it has.
 */
#ifndef RK_LLM_PLANNER_H
#define RK_LLM_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "quant.h"

#define PLAN_MAX_CARDS	64

/* plan_make()/plan_model() return value: the model does not fit. */
#define PLAN_NOFIT	(-2)

/**
 * struct plan_input - what the planner balances
 * @n_blocks: decoder blocks (>= 1)
 * @block_bytes: card bytes of each block (weights + KV cache), @n_blocks
 * @head_bytes: extra card bytes on the last card (output norm, LM head,
 *	logits buffers)
 * @card_overhead: card bytes every used card needs besides its blocks
 *	(activation and program buffers)
 * @n_cards: cards offered (1..PLAN_MAX_CARDS)
 * @card_free: free card memory of each offered card, bytes
 * @card_ids: device index of each offered card for messages ("card3"),
 *	or NULL for 0..n_cards-1
 */
struct plan_input {
	int n_blocks;
	const uint64_t *block_bytes;
	uint64_t head_bytes;
	uint64_t card_overhead;
	int n_cards;
	const uint64_t *card_free;
	const int *card_ids;
};

/**
 * struct plan_seg - one card's segment
 * @card: position in the offered cards (index into plan_input arrays)
 * @card_id: device index used in messages
 * @first: first block
 * @count: number of blocks (>= 1)
 * @output: this segment also runs output norm + LM head (the last one)
 * @bytes: card bytes this segment needs
 * @free: free bytes the card had
 */
struct plan_seg {
	int card;
	int card_id;
	int first;
	int count;
	int output;
	uint64_t bytes;
	uint64_t free;
};

/**
 * struct plan - the result
 * @n_segs: cards used (min(n_cards, n_blocks))
 * @seg: segments in pipeline order
 * @note: "" or a remark such as "using 5 of 8 cards: the model has 5 blocks"
 */
struct plan {
	int n_segs;
	struct plan_seg seg[PLAN_MAX_CARDS];
	char note[160];
};

/**
 * plan_make() - compute the plan
 * @in: the costs and cards
 * @p: out
 * @err, @errlen: reason on failure; when the model does not fit it names
 *	every card the balanced plan overfills, e.g. "model does not fit on 2
 *	cards: card0 needs 5.10 GiB (blk 0-15) but has 4.90 GiB free; card1
 *	needs 5.30 GiB (blk 16-31 + output) but has 4.90 GiB free"
 *
 * Return: 0; PLAN_NOFIT when the model does not fit the cards' free
 * memory; -1 for bad input (no blocks/cards, too many cards) or out of
 * memory.
 */
int plan_make(const struct plan_input *in, struct plan *p, char *err, size_t errlen);

/*
 * PLAN_STR_MAX - a buffer this size holds plan_format() of any plan: at
 * most PLAN_MAX_CARDS segments of at most 64 characters each
 * (", card<int>: blk <int>-<int> + output"), plus the NUL.
 */
#define PLAN_STR_MAX	(PLAN_MAX_CARDS * 64 + 1)

/*
 * PLAN_BLK_MAX - a buffer this size holds plan_seg_blocks() of any
 * segment ("blk <int>-<int> + output" and the NUL).
 */
#define PLAN_BLK_MAX	40

/**
 * plan_seg_blocks() - the blocks of @s as every message names them: "blk 3",
 * "blk 0-19" or "blk 20-35 + output" (one block is never "blk 3-3")
 * Return: the string length (snprintf semantics).
 */
int plan_seg_blocks(const struct plan_seg *s, char *buf, size_t size);

/**
 * plan_format() - "card0: blk 0-2, card1: blk 3-4 + output"
 * Return: the string length (snprintf semantics).
 */
int plan_format(const struct plan *p, char *buf, size_t size);

/**
 * struct plan_sizes - per-card buffer sizes the pipeline allocates, from
 * which the planner costs are derived (so plan and allocation agree)
 * @n_ctx: KV cache rows
 * @bucket: tokens per prefill bucket
 * @slots: activation buffer slots per card; 0: plan_slots() of the
 *	number of cards used
 * @n_seq: sequences (session slots) whose KV caches every card holds, and
 *	the most logits rows one micro-batch returns (one per sequence, at
 *	most @bucket); 0 means 1
 * @n_snap: hybrid models: recurrent-state snapshot blocks every card holds
 *	besides the @n_seq sequences (struct pipe_opts.n_snap)
 * @max_rows: most logits rows one micro-batch returns when more than one
 *	per sequence (speculative decoding verifies several positions of a
 *	sequence); 0: one per sequence. Capped at @bucket
 *	(struct pipe_opts.max_rows)
 * @bo_align: granularity in bytes (a power of two >= 4096) the kernel
 *	rounds every card BO size up to, rk_card_bo_align() of the cards
 *	(64 KiB on a 64K-page arm64 kernel); 0: plan_host_bo_align()
 * @kv_type: QUANT_TYPE_* of the K/V cache rows (F32 0, F16, Q8_0, Q4_0;
 *	struct pipe_opts.kv_type, struct rk1828_program.kv_type)
 */
struct plan_sizes {
	uint32_t n_ctx;
	uint32_t bucket;
	uint32_t slots;
	uint32_t n_seq;
	uint32_t n_snap;
	uint32_t max_rows;
	uint32_t bo_align;
	int kv_type;
};

/**
 * plan_slots() - activation buffer slots per card the pipeline uses with
 * @n_stages cards: n_stages + 1 (at least 2, at most 8), so that the host
 * can queue bucket i on every card while bucket i - n_stages is still
 * leaving the last one (a full pipeline in prefill)
 */
uint32_t plan_slots(int n_stages);

/**
 * plan_host_bo_align() - the BO granularity when no card says it: the
 * larger of 4 KiB and this host's page size (sysconf(_SC_PAGESIZE)),
 * bytes; what the kernel uses on the host the planner runs on
 */
uint32_t plan_host_bo_align(void);

/**
 * plan_bo_align() - @s->bo_align, or plan_host_bo_align() when it is 0:
 * the card BO granularity the plan at @s counts with, bytes
 */
uint64_t plan_bo_align(const struct plan_sizes *s);

/**
 * plan_align() - round @x up to the card BO granularity of @s
 * (plan_bo_align()); UINT64_MAX when that overflows
 */
uint64_t plan_align(uint64_t x, const struct plan_sizes *s);

/* Alignment of each tensor inside a segment's weights BO, bytes. */
#define PLAN_TENSOR_ALIGN 64

/**
 * plan_block_bytes() - card bytes of block @l: its tensors laid out at
 * PLAN_TENSOR_ALIGN (norms and biases as F32, matrices in their GGUF
 * types), its per-sequence state and its entry in each slot's program.
 * The state of an attention block is its K and V caches ([n_seq][n_ctx]
 * rows of n_kv_heads * head_dim values in @s->kv_type each), that of a DeltaNet block
 * its conv and recurrent states for n_seq sequences and n_snap snapshots
 * (llm_state_bytes(), independent of n_ctx).
 */
uint64_t plan_block_bytes(const struct llm_model *m, uint32_t l,
			  const struct plan_sizes *s);

/**
 * plan_head_bytes() - output_norm (F32) + output + one logits buffer
 * (F32 [min(n_seq, bucket)][n_vocab]) per slot, card bytes
 */
uint64_t plan_head_bytes(const struct llm_model *m, const struct plan_sizes *s);

/**
 * plan_card_overhead() - per-card activations: @s->slots slots of input
 * and output hidden states (F32 [bucket][dim]), program headers and token
 * tables (bucket struct rk1828_prog_token), plus
 * slack for the rounding of the card BOs: one plan_bo_align() per BO
 */
uint64_t plan_card_overhead(const struct llm_model *m, const struct plan_sizes *s);

/**
 * plan_prog_bytes() - bytes of a segment program with @n_layers layers
 * (struct rk1828_program + n_layers struct rk1828_prog_layer, or with
 * @hybrid, llm_model_hybrid() models, struct rk1828_prog_hlayer)
 */
uint64_t plan_prog_bytes(uint32_t n_layers, bool hybrid);

/**
 * plan_seg_need() - card bytes segment @seg of a plan of @n_segs cards
 * needs at @s (as plan_model() counts them: its blocks, the per-card
 * activations, and the output head on the last card); with @s->slots 0,
 * plan_slots(@n_segs). For checking a plan at other sizes (more
 * sessions' KV caches) against the cards' free memory, @seg->free.
 */
uint64_t plan_seg_need(const struct llm_model *m, const struct plan_seg *seg, int n_segs,
		       const struct plan_sizes *s);

/**
 * plan_model() - plan_make() with costs computed from @m and @s (with
 * @s->slots 0, plan_slots() of the cards that will be used)
 * @n_cards, @card_free, @card_ids: as in struct plan_input
 * Return: as plan_make().
 */
int plan_model(const struct llm_model *m, const struct plan_sizes *s,
	       int n_cards, const uint64_t *card_free, const int *card_ids,
	       struct plan *p, char *err, size_t errlen);

/**
 * plan_nofit_reason() - why @m at the sizes @s fits on no number of cards
 * of @card_free bytes each up to @max_cards (--cards auto's refusal), in
 * one line: a block that alone (its weights and state, the card's
 * buffers, and on the last card the head) is larger than a card ("blk 35
 * + output alone needs 638.89 MiB ..."; a block is never split), else the
 * whole model larger than @max_cards such cards hold, else that no
 * contiguous split fits
 * @m: the model
 * @s: the sizes last planned (@s->slots 0: plan_slots() of the cards)
 * @max_cards: the most cards tried (1..PLAN_MAX_CARDS)
 * @card_free: free bytes of each card
 * @buf, @size: the reason, without a trailing newline
 * @hint, @hint_size: what would make it fit, e.g. "larger cards (--card-mem);
 *	of what blk 35 needs, its KV cache is 32.00 MiB at ctx 4096 (--ctx) ..."
 */
void plan_nofit_reason(const struct llm_model *m, const struct plan_sizes *s, int max_cards,
		       uint64_t card_free, char *buf, size_t size, char *hint, size_t hint_size);

/**
 * enum plan_split - what the segments balance (--split)
 * @PLAN_SPLIT_BYTES: card bytes (weights, state, buffers): the vendor's
 *	rule above, the default
 * @PLAN_SPLIT_TIME: each card's predicted prefill time, LM head included,
 *	within every card's free memory (plan_time.h)
 */
enum plan_split {
	PLAN_SPLIT_BYTES,
	PLAN_SPLIT_TIME,
};

struct plan_timing;

/* Defaults of a plan's sizes (--ctx, --bucket): their one home. */
#define PLAN_DEFAULT_CTX	4096
#define PLAN_DEFAULT_BUCKET	128

/**
 * struct plan_fit_opts - what plan_fit() is asked for
 * @n_ctx: KV rows per sequence; 0: min(the model's context, PLAN_DEFAULT_CTX)
 * @bucket: prefill bucket; 0: PLAN_DEFAULT_BUCKET, halved until it fits
 *	(an explicit one is never lowered); either is capped to @n_ctx
 * @n_seq: sequences (sessions) wanted; 0: 1
 * @max_seq: most sequences the runtime runs (0: no limit); @n_seq is
 *	capped to it
 * @snaps_per_seq: hybrid models: state snapshot blocks per sequence
 *	(plan_sizes.n_snap = n_seq * @snaps_per_seq)
 * @snaps_optional: of @snaps_per_seq, how many a sequence may go without
 *	when the cards are short of memory (0: none). The engine's prefix-cache
 *	checkpoints are such: fewer cost only prefix-cache hits. plan_fit()
 *	gives them up one a sequence at a time, down to @snaps_per_seq -
 *	@snaps_optional, before it lowers the sequences or the bucket, and
 *	says so in its note
 * @rows_per_seq: logits rows one micro-batch may return per sequence
 *	(speculative decoding's verify pass: 1 + drafts); 0 or 1: one a
 *	sequence (plan_sizes.max_rows = n_seq * @rows_per_seq, capped to the
 *	bucket by the planner)
 * @bo_align: the cards' BO granularity (plan_sizes.bo_align; 0: the host's)
 * @strict_seq: fail rather than lower @n_seq
 * @split: what the segments balance (&enum plan_split)
 * @timing: profile and link of a PLAN_SPLIT_TIME split (plan_time.h), or
 *	NULL for the built-in profile over PCIe
 * @kv_type: K/V cache type (plan_sizes.kv_type): QUANT_TYPE_F32 (0),
 *	_F16, _Q8_0, _Q4_0, or %PLAN_KV_AUTO: the widest of these the model
 *	can store (llm_kv_type_ok()) at which @n_seq sequences of @n_ctx fit
 *	without lowering either (the bucket may still be halved); when none
 *	does, the narrowest, lowering as usual
 */
struct plan_fit_opts {
	uint32_t n_ctx;
	uint32_t bucket;
	uint32_t n_seq;
	uint32_t max_seq;
	uint32_t snaps_per_seq;
	uint32_t snaps_optional;
	uint32_t rows_per_seq;
	uint32_t bo_align;
	bool strict_seq;
	enum plan_split split;
	const struct plan_timing *timing;
	int kv_type;
};

/*
 * plan_fit_opts.kv_type: choose the K/V type that fits (--kv-type auto;
 * quant_kv_type_parse() and quant_kv_type_name() of userspace/common).
 */
#define PLAN_KV_AUTO	QUANT_KV_AUTO

/**
 * plan_fit_sizes() - the sizes plan_fit() starts from: @o's with the
 * defaults filled in (n_ctx, bucket capped to it, n_seq capped, n_snap)
 */
void plan_fit_sizes(const struct llm_model *m, const struct plan_fit_opts *o,
		    struct plan_sizes *sz);

/**
 * plan_fit() - the one fitting policy of the runtime (rk1828-llm plan,
 *	run, chat and the engine that serve creates): plan_model_split() of
 *	@o->split at
 *	plan_fit_sizes(); while it does not fit, first give up the optional
 *	snapshots (@o->snaps_optional, one a sequence at a time), then lower
 *	the sequences (unless @o->strict_seq) down to 1, then halve an
 *	implicit bucket; at each number of sequences and bucket, the most
 *	snapshots that fit
 * @m: the model
 * @o: what is asked
 * @n_cards, @card_free, @card_ids: as plan_model()
 * @sz: out: the sizes of the plan (those tried last on failure)
 * @p: out: the plan (card indices 0..@n_cards-1, as plan_model())
 * @note, @notelen: out: what was lowered, or "" (may be NULL)
 * @err, @errlen: on failure, the refusal at the sizes tried last (@sz)
 * Return: 0, PLAN_NOFIT, or plan_model()'s other errors.
 */
int plan_fit(const struct llm_model *m, const struct plan_fit_opts *o, int n_cards,
	     const uint64_t *card_free, const int *card_ids, struct plan_sizes *sz,
	     struct plan *p, char *note, size_t notelen, char *err, size_t errlen);

#endif
