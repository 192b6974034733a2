/* SPDX-License-Identifier: MIT */
/*
 * Deployment prediction (rk1828-llm plan --predict, and the "predicted"
 * column of rk1828-llm bench): what a plan will do on RK1828 cards of a
 * profile (cardmodel/profile.h) over a link, before anyone buys cards.
 *
 * Every job's time comes from the card cost function (cardmodel/cost.h),
 * the same the emulator's timing mode completes jobs with; this file adds
 * them up over the job graph the pipeline really queues (pipeline.h: per
 * micro-batch and card an input COPY, the EXEC and an output COPY; COPY
 * and EXEC on the card's two queues, each running its jobs one at a time
 * in submission order) and the engine's schedule (scheduler.h: decode
 * micro-batches of ceil(sessions / cards) tokens, at most one micro-batch
 * per card in flight). Host time (embedding, submits, sampling) is taken
 * as zero: the prediction is the cards' and links' time, and bench
 * measures the host's on top. userspace/doc/timing.rst.
 */
#ifndef RK_LLM_PREDICT_H
#define RK_LLM_PREDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cost.h"
#include "model.h"
#include "planner.h"
#include "profile.h"

/* Prompt lengths of the TTFT predictions, and the vendor's conditions. */
#define PREDICT_N_TTFT		3
#define PREDICT_PROMPT		4096	/* prompt of the prefill/decode rates */
#define PREDICT_GEN		128	/* generated tokens of the decode rate */
#define PREDICT_N_SESSIONS	3	/* aggregate decode at 1, 2, 4 sessions */

/** predict_ttft_prompt() - prompt length of TTFT prediction @i (1024, 4096, 8192). */
uint32_t predict_ttft_prompt(int i);

/** predict_sessions() - session count of aggregate prediction @i (1, 2, 4). */
uint32_t predict_sessions(int i);

/**
 * struct predict_opts - the deployment
 * @prof: card profile
 * @link: host link of every card (unless @card_links)
 * @card_links: per plan segment, the link of its card (a cascade on mixed
 *	links), or NULL
 * @bucket: prefill bucket, tokens (the pipeline's micro-batch limit)
 * @n_ctx: context, tokens; a figure whose tokens do not fit it is not
 *	predicted (NAN), never extrapolated past the KV cache the plan holds
 * @sizes: the buffer sizes the plan was made at, or NULL; with it,
 *	predict_run() predicts the aggregate decode of S sessions only where
 *	S sessions' KV caches and states fit each card of the plan
 *	(plan_seg_need() with n_seq S against the segment's free bytes)
 * @spec_k: speculative decoding (plan --spec K): drafts per verify pass,
 *	0: no speculative prediction; capped at @bucket - 1 as the engine
 *	caps a verify pass at one micro-batch
 * @spec_accept: the acceptance rate A of each draft, 0..1 (--accept)
 */
struct predict_opts {
	const struct card_profile *prof;
	enum cost_link link;
	uint32_t bucket;
	uint32_t n_ctx;
	const struct plan_sizes *sizes;
	const enum cost_link *card_links;
	uint32_t spec_k;
	double spec_accept;
};

/**
 * struct prediction - the predicted figures
 * @ttft_ms: time to first token at predict_ttft_prompt(i) prompt tokens
 *	(NAN for a prompt longer than the context)
 * @prefill_tok_s: prompt tokens per second of a PREDICT_PROMPT prompt
 *	(NAN when PREDICT_PROMPT is over the context)
 * @tpot_ms: mean time per output token of PREDICT_GEN tokens after it
 *	(NAN when PREDICT_PROMPT + PREDICT_GEN are over the context)
 * @decode_tok_s: 1000 / @tpot_ms (NAN with it)
 * @aggregate_tok_s: decode tokens per second over all sessions with
 *	predict_sessions(i) sessions decoding at once (after PREDICT_PROMPT
 *	each; NAN with @tpot_ms, or when their KV does not fit: @agg_nofit)
 * @agg_nofit: predict_sessions(i) sessions' KV caches do not fit the
 *	plan's cards (predict_opts.sizes), so @aggregate_tok_s[i] is NAN
 * @card_busy: per stage, fraction of the PREDICT_PROMPT prefill during
 *	which its NPU runs (NAN with @prefill_tok_s)
 * @spec_k, @spec_accept: the speculation predicted (predict_opts; @spec_k
 *	after the bucket's cap), @spec_k 0 when none was asked for
 * @spec_tokens_per_pass: tokens a verify pass yields on average,
 *	predict_spec_tokens_per_pass() (NAN without speculation)
 * @spec_verify_ratio: time of one verify pass of @spec_k + 1 tokens over
 *	that of a one-token decode step, both after PREDICT_PROMPT tokens
 *	(NAN with @spec_decode_tok_s)
 * @spec_decode_tok_s: decode tokens per second of one session with
 *	speculation, PREDICT_GEN tokens after PREDICT_PROMPT (NAN without
 *	speculation or when PREDICT_PROMPT + PREDICT_GEN + @spec_k tokens are
 *	over the context)
 */
struct prediction {
	double ttft_ms[PREDICT_N_TTFT];
	double prefill_tok_s;
	double tpot_ms;
	double decode_tok_s;
	double aggregate_tok_s[PREDICT_N_SESSIONS];
	bool agg_nofit[PREDICT_N_SESSIONS];
	double card_busy[PLAN_MAX_CARDS];
	uint32_t spec_k;
	double spec_accept;
	double spec_tokens_per_pass;
	double spec_verify_ratio;
	double spec_decode_tok_s;
};

/**
 * predict_spec_tokens_per_pass() - expected tokens one verify pass of @k
 * drafts yields when each draft is accepted with probability @a
 * independently (Leviathan et al. 2023, eq. 1): the accepted drafts plus
 * the target's own token, (1 - @a^(@k+1)) / (1 - @a); @k + 1 at @a = 1,
 * 1 at @a = 0
 * @a: acceptance rate, clamped to 0..1
 * @k: drafts per pass
 */
double predict_spec_tokens_per_pass(double a, uint32_t k);

/**
 * predict_spec() - the speculative figures of @out (@out->spec_*) for the
 * deployment @o, the rest of @out as predict_run_layers() filled it (its
 * @tpot_ms is the ratio's denominator): PREDICT_GEN tokens after a
 * PREDICT_PROMPT prefill in verify passes of @o->spec_k + 1 tokens (every
 * row's logits back), each submitted when the previous one's logits are
 * back and advancing the session by predict_spec_tokens_per_pass()
 * tokens on average. The card time of the recurrent-state snapshots of a
 * hybrid model's verify pass is not modelled (a state copy per token,
 * small against the weights a pass reads).
 * Return: 0, or -1 (out of memory).
 */
int predict_spec(const struct cost_layer *layers, uint32_t n_layers,
		 const struct cost_head *head, const struct plan *plan,
		 const struct predict_opts *o, struct prediction *out);

/**
 * predict_cost_layer() - block @l of @m as the cost function sees it (its
 * matrices in their file types, F32 norms and K/V caches)
 * @out: filled
 */
void predict_cost_layer(const struct llm_model *m, uint32_t l, struct cost_layer *out);

/**
 * predict_kv_elt_bytes() - struct cost_layer.kv_elt_bytes of @m's K/V rows
 * in @kv_type (4 F32, 2 F16, 34/32 Q8_0, 18/32 Q4_0; 4 when the type
 * does not fit the rows)
 */
double predict_kv_elt_bytes(const struct llm_model *m, int kv_type);

/** predict_cost_head() - the output head of @m. */
void predict_cost_head(const struct llm_model *m, struct cost_head *out);

/**
 * predict_run() - predict the figures of @plan
 * @m: the model
 * @plan: its segments (from plan_model())
 * @o: the deployment
 * @out: the figures
 * @err, @errlen: reason on failure
 * Return: 0, or -1 (out of memory, an empty plan).
 */
int predict_run(const struct llm_model *m, const struct plan *plan,
		const struct predict_opts *o, struct prediction *out,
		char *err, size_t errlen);

/**
 * predict_run_layers() - predict_run() for a model given as its layers
 * and head (cost.h): a model of which only the shape is known
 * @layers: @n_layers layers
 * @head: the output head
 */
int predict_run_layers(const struct cost_layer *layers, uint32_t n_layers,
		       const struct cost_head *head, const struct plan *plan,
		       const struct predict_opts *o, struct prediction *out,
		       char *err, size_t errlen);

/**
 * predict_json() - the plan (and the prediction, when @pr is not NULL) as
 * one JSON object: {"plan":[{"card":0,"first":0,"last":18,"output":false,
 * "bytes":N},...], "ttft_ms":{"1024":x,"4096":x,"8192":x},
 * "prefill_tok_s":x, "decode_tok_s":x, "tpot_ms":x,
 * "aggregate_decode_tok_s":{"1":x,"2":x,"4":x}}; a figure that is not
 * predicted (its tokens over the context) is null; "card" is the device
 * index
 * Return: a malloc()ed NUL-terminated string, or NULL (out of memory).
 */
char *predict_json(const struct plan *plan, const struct prediction *pr);

/**
 * predict_print() - the prediction in words, a few lines to @f
 */
void predict_print(FILE *f, const struct plan *plan, const struct prediction *pr,
		   const struct predict_opts *o);

/**
 * struct psim - the pipeline simulation behind predict_run(), exposed for
 * its tests: the modelled clocks of every card's two queues
 */
struct psim;

/**
 * psim_create() - a simulated pipeline of @plan's stages, all queues idle
 * at time 0
 * @layers: @n_layers layers (must outlive the simulation)
 * @head: the output head
 * Return: the simulation, or NULL (out of memory, or a plan whose
 * segments do not lie within the layers).
 */
struct psim *psim_create(const struct cost_layer *layers, uint32_t n_layers,
			 const struct cost_head *head, const struct plan *plan,
			 const struct predict_opts *o);

/** psim_destroy() - free (NULL is a no-op). */
void psim_destroy(struct psim *s);

/**
 * psim_submit() - queue one micro-batch on every stage at host time
 * @t_ns (after every earlier one)
 * @b: its tokens (cost_batch_add_seq())
 * Return: the modelled time its last stage's output COPY ends, ns.
 */
double psim_submit(struct psim *s, double t_ns, const struct cost_batch *b);

/**
 * psim_prefill() - a prompt of @n tokens from position 0, in buckets of
 * @bucket tokens submitted at time 0 (the logits of its last token only)
 * Return: the modelled time its logits are back on the host, ns.
 */
double psim_prefill(struct psim *s, uint32_t n, uint32_t bucket);

/**
 * psim_decode() - @n decode steps of one session at positions @pos,
 * @pos + 1, ..., each submitted when the previous one's logits are back,
 * the first at @t_ns
 * Return: the modelled time the last one's logits are back, ns.
 */
double psim_decode(struct psim *s, double t_ns, uint32_t pos, uint32_t n);

/**
 * psim_aggregate() - decode of @n_sess sessions at once at positions from
 * @pos, as the engine's scheduler groups them (micro-batches of
 * ceil(@n_sess / stages) tokens, each resubmitted when its logits are
 * back), measured after a few warm-up rounds
 * Return: decode tokens per second over all sessions.
 */
double psim_aggregate(struct psim *s, uint32_t n_sess, uint32_t pos);

/**
 * psim_stage_ns() - modelled time of stage @k alone on batch @b: its
 * input COPY (program, tokens, hidden states), EXEC and output COPY
 * (hidden states, or the logits on the last stage) one after the other,
 * as a card's share of a decode step or of a bucket (the per-card
 * figures of multi-card deployments)
 * Return: nanoseconds; 0 for a stage @k out of range. The simulation's
 * queues are not changed.
 */
double psim_stage_ns(const struct psim *s, int k, const struct cost_batch *b);

/**
 * psim_spec_decode() - speculative decode of one session from position
 * @pos: verify passes of @k + 1 tokens (every row's logits back), each
 * submitted when the previous one's logits are back (the first at @t_ns)
 * and advancing the session by predict_spec_tokens_per_pass(@a, @k)
 * tokens on average, until @n tokens are made
 * @made: out (may be NULL): the tokens made, >= @n (whole passes)
 * Return: the modelled time the last pass's logits are back, ns.
 */
double psim_spec_decode(struct psim *s, double t_ns, uint32_t pos, uint32_t n, uint32_t k,
			double a, double *made);

/** psim_busy_ns() - modelled EXEC time of stage @k so far, ns. */
double psim_busy_ns(const struct psim *s, int k);

/** psim_depth() - micro-batches in flight at most (pipe_depth()). */
int psim_depth(const struct psim *s);

#endif
