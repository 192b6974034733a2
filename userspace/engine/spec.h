/* SPDX-License-Identifier: MIT */
/*
 * Speculative decoding of the engine (engine.h): drafters that propose the
 * next tokens of a sequence cheaply, and the acceptance rule that keeps
 * the output distribution the target model's. Pure logic, unit-tested on
 * the host (tests/unit/test_spec.c); the verify pass itself (the last
 * accepted token and the drafts as one micro-batch through the cards, and
 * the rollback of rejected positions) is in engine_spec.c.
 *
 * Acceptance (Leviathan et al. 2023, "Fast Inference from Transformers
 * via Speculative Decoding", and Chen et al. 2023, "Accelerating Large
 * Language Model Decoding with Speculative Sampling"): draft token d with
 * draft probability q(d) is accepted with probability min(1, p(d) / q(d))
 * under the target distribution p; on rejection the token is drawn from
 * the residual norm(max(0, p - q)) and the rest of the drafts are dropped.
 * The drafters here are deterministic (q is a point mass on d), so d is
 * accepted with probability p(d) and the residual is p without d,
 * renormalised. Greedy decoding (p a point mass on the argmax) accepts
 * exactly the longest prefix of drafts that equal the target's argmax.
 */
#ifndef RK_LLM_SPEC_H
#define RK_LLM_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * enum spec_kind - drafters (engine_opts.spec, --spec)
 * @SPEC_NONE: no speculation (default)
 * @SPEC_NGRAM: prompt/history lookup (spec_ngram_draft())
 * @SPEC_DRAFT: a small draft model on the host CPU (spec_draft_open())
 * @SPEC_MTP: the model's own multi-token-prediction block on the host CPU
 *	(spec_mtp_open())
 */
enum spec_kind {
	SPEC_NONE,
	SPEC_NGRAM,
	SPEC_DRAFT,
	SPEC_MTP,
};

/* The names spec_parse() takes, for messages. */
#define SPEC_NAMES	"none, ngram, draft or mtp"

/* Longest and shortest n-gram the ngram drafter matches. */
#define SPEC_NGRAM_MAX	4
#define SPEC_NGRAM_MIN	2

/* Most drafts per verify pass (--draft-max). */
#define SPEC_MAX_DRAFT	32

/**
 * spec_parse() - the drafter named @name ("none", "ngram", "draft", "mtp")
 * Return: 0 and *@k set, or -1 for an unknown name (*@k unchanged).
 */
int spec_parse(const char *name, enum spec_kind *k);

/** spec_name() - "none", "ngram", "draft" or "mtp". */
const char *spec_name(enum spec_kind k);

/**
 * struct spec_drafter - a drafter behind the engine's one interface
 * @kind: which
 * @draft: propose up to @n_max tokens that follow @hist (@n_hist >= 1
 *	tokens: the sequence so far, its last token the one about to be
 *	submitted) into @out; return the count (0: no proposal). @hidden:
 *	with @wants_hidden, the model's final hidden state (dim floats,
 *	rmsnorm(x) * output_norm) at position @n_hist - 2, the row whose
 *	logits gave @hist[@n_hist - 1]; else NULL. Must not fail; runs on
 *	the engine thread, so it must be cheap
 * @close: free @priv (NULL: nothing to free)
 * @wants_hidden: the engine must ask the last card for the hidden rows
 *	(pipe_opts.hidden) and pass them to @draft
 * @priv: the drafter's own state (NULL for ngram; spec_draft.c's for
 *	draft, spec_mtp.c's for mtp)
 */
struct spec_drafter {
	enum spec_kind kind;
	int (*draft)(struct spec_drafter *d, const int32_t *hist, int n_hist, int n_max,
		     const float *hidden, int32_t *out);
	void (*close)(struct spec_drafter *d);
	bool wants_hidden;
	void *priv;
};

/**
 * spec_drafter_init() - set up the drafter of @kind in @d
 * Return: 0, or -1 for SPEC_NONE or an unknown kind.
 */
int spec_drafter_init(struct spec_drafter *d, enum spec_kind kind);

struct tokenizer;

/**
 * spec_draft_open() - the draft drafter in @d: the GGUF draft model @path
 * on the host CPU (userspace/engine/spec_draft.c)
 * @target, @target_path: the target model's tokenizer and file, whose
 *	vocabulary the draft model must have (count and every token's text)
 * @n_ctx: KV rows of the draft model (the engine's context)
 * @err, @errlen: the reason, naming both files when the vocabularies differ
 * Return: 0, or a negative errno (bad file, different vocabulary, a
 * hybrid draft model, out of memory); @d is then empty.
 */
int spec_draft_open(struct spec_drafter *d, const char *path, const struct tokenizer *target,
		    const char *target_path, int n_ctx, char *err, size_t errlen);

/** spec_draft_close() - free the draft drafter's state in @d (others: no-op). */
void spec_draft_close(struct spec_drafter *d);

/**
 * spec_mtp_open() - the mtp drafter in @d: the first multi-token-prediction
 * block (nextn) of the GGUF model @path, on the host CPU by the reference
 * kernels (ref_mtp(), userspace/engine/spec_mtp.c)
 * @n_ctx: positions of the block's own KV cache (the engine's context)
 * @err, @errlen: the reason (no MTP block in @path, bad file)
 * Return: 0, or a negative errno; @d is then empty.
 */
int spec_mtp_open(struct spec_drafter *d, const char *path, int n_ctx, char *err, size_t errlen);

/**
 * spec_ngram_draft() - prompt lookup decoding: the longest suffix of
 * @hist of SPEC_NGRAM_MAX down to SPEC_NGRAM_MIN tokens that occurred
 * earlier in @hist (the most recent occurrence), and up to @n_max of the
 * tokens that followed it there
 * @hist: @n_hist tokens (prompt and generated, the newest last)
 * @out: room for @n_max tokens
 * Return: tokens proposed (0 when no n-gram matches or @n_max < 1).
 * Cost: O(@n_hist * SPEC_NGRAM_MAX).
 */
int spec_ngram_draft(const int32_t *hist, int n_hist, int n_max, int32_t *out);

/**
 * spec_accept_greedy() - drafts a greedy target accepts: the length of the
 * longest prefix where @draft[i] == @target[i] (the target's argmax after
 * the accepted drafts before i)
 */
int spec_accept_greedy(const int32_t *target, const int32_t *draft, int n);

/**
 * spec_accept_point() - the speculative sampling rule for one position
 * with a point-mass draft
 * @ids, @probs: the target distribution p at this position: @n candidate
 *	ids and their probabilities (summing to 1, as sampler_dist() gives);
 *	ids not listed have probability 0
 * @n: candidates (>= 1)
 * @d: the draft token
 * @u_acc, @u_res: two uniform numbers in [0, 1)
 * @accepted: out: whether @d was accepted
 *
 * Accepts @d when @u_acc < p(@d); otherwise returns the candidate at
 * @u_res of the residual (p without @d, renormalised). When p(@d) is 1
 * the draft is always accepted.
 * Return: the emitted token (@d when accepted).
 */
int32_t spec_accept_point(const int32_t *ids, const double *probs, int n, int32_t d,
			  double u_acc, double u_res, bool *accepted);

/**
 * struct spec_rng - xorshift64* generator of a request's acceptance draws
 * @s: state (never 0)
 */
struct spec_rng {
	uint64_t s;
};

/** spec_rng_seed() - seed @r (0 is replaced by a fixed non-zero value). */
void spec_rng_seed(struct spec_rng *r, uint64_t seed);

/** spec_rng_unit() - the next uniform number in [0, 1) (53 bits). */
double spec_rng_unit(struct spec_rng *r);

#endif
