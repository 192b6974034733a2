/* SPDX-License-Identifier: MIT */
/*
 * Token sampler: logit bias and repetition penalties, then greedy (temp 0)
 * or top-k + top-p + min-p + temperature sampling with a seeded xorshift64*
 * generator, in llama.cpp's order (see sampler.c for the chain and its
 * sources). The penalties need the tokens seen so far: the caller feeds
 * the context with sampler_prime() and every chosen token with
 * sampler_accept().
 */
#ifndef RK_SAMPLER_H
#define RK_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * struct sampler_bias - one logit_bias entry
 * @id: token id (0..n_vocab-1)
 * @bias: added to the logit; -INFINITY bans the token
 */
struct sampler_bias {
	int32_t id;
	float bias;
};

/* Upper ends of the validated ranges (sampler_params_check()). */
#define SAMPLER_MAX_TEMPERATURE	100.0f	/* llama.cpp takes any; 100 is flat */
#define SAMPLER_MAX_N		(1 << 30)	/* top_k and repeat_last_n */
#define SAMPLER_MAX_PROBS	20	/* n_probs, OpenAI's top_logprobs limit */

/**
 * struct sampler_params - how a request picks tokens: the one set of
 *	sampling parameters of the CLI, the server's APIs and the engine
 * @temperature: [0, SAMPLER_MAX_TEMPERATURE]; 0 = greedy (argmax of the
 *	biased, penalised logits, lowest id on ties)
 * @top_p: nucleus, (0, 1]; 1 = off
 * @top_k: [0, SAMPLER_MAX_N]; 0 = whole vocabulary
 * @min_p: [0, 1]: keep tokens whose probability is >= @min_p times the
 *	most likely one's (llama.cpp's min-p); 0 = off
 * @repeat_penalty: [0, FLT_MAX]: llama.cpp's repeat penalty over the last
 *	@repeat_last_n tokens (prompt included): a positive logit is divided
 *	by it, a negative one multiplied; 1 (and 0, which would divide by
 *	zero) = off
 * @repeat_last_n: window of @repeat_penalty in tokens, [-1, SAMPLER_MAX_N];
 *	0 = off, -1 = all
 * @presence_penalty: OpenAI's, [-2, 2]: subtracted from the logit of every
 *	token generated at least once in this reply; 0 = off
 * @frequency_penalty: OpenAI's, [-2, 2]: times the token's count in this
 *	reply, subtracted; 0 = off
 * @bias, @n_bias: logit biases, token ids 0..n_vocab-1, not NaN (copied by
 *	sampler_new() and engine_submit(); ids repeated add up)
 * @seed: generator seed (0 is replaced by a fixed non-zero value)
 * @have_seed: @seed was chosen by the user; the engine replaces it by a
 *	time-based seed otherwise (sampler_new() uses @seed as it is)
 * @logprobs: report the log-probability of every generated token (engine;
 *	the sampler ignores it)
 * @n_probs: with @logprobs, also the @n_probs (0..SAMPLER_MAX_PROBS) most
 *	likely alternatives at each position (engine; the sampler ignores it)
 *
 * SAMPLER_PARAMS_DEFAULT is llama.cpp's defaults (common/common.h), the
 * sampling of a request that sets none. Log-probabilities are those of the
 * model's distribution (log-softmax of the raw logits, before bias,
 * penalties, temperature, top-k, top-p and min-p), as OpenAI reports.
 */
struct sampler_params {
	float temperature;
	float top_p;
	int top_k;
	float min_p;
	float repeat_penalty;
	int repeat_last_n;
	float presence_penalty;
	float frequency_penalty;
	const struct sampler_bias *bias;
	int n_bias;
	uint64_t seed;
	bool have_seed;
	bool logprobs;
	int n_probs;
};

/* The defaults (temperature 0.8, top_k 40, top_p 0.95, repeat_penalty 1
 * over 64 tokens, the rest off, no seed). */
#define SAMPLER_PARAMS_DEFAULT {					\
	.temperature = 0.8f, .top_p = 0.95f, .top_k = 40,		\
	.repeat_penalty = 1.0f, .repeat_last_n = 64,			\
}

/**
 * sampler_params_check() - whether @p is in the ranges struct
 *	sampler_params gives (the one validator of the CLI, the APIs and the
 *	engine)
 * @p: the parameters
 * @n_vocab: the bias ids must be below it; <= 0: not checked yet
 * @field: if not NULL, gets the name of the first bad field ("top_p",
 *	"logit_bias", ...), as the APIs spell it
 * @err, @errlen: gets "top_p must be in (0, 1] (got 1.5)"
 *
 * Return: 0, or -EINVAL with @err and @field set.
 */
int sampler_params_check(const struct sampler_params *p, int n_vocab, const char **field,
			 char *err, size_t errlen);

struct sampler;

/*
 * sampler_new() - a sampler over @n_vocab logits. Return: NULL when @p
 * fails sampler_params_check() or on out of memory.
 */
struct sampler *sampler_new(const struct sampler_params *p, int n_vocab);
void sampler_free(struct sampler *s);

/*
 * sampler_prime() - @n context tokens (the prompt) before the reply: they
 * enter the repeat-penalty window only (OpenAI's presence and frequency
 * penalties count the reply's tokens). Ids outside the vocabulary are
 * skipped.
 */
void sampler_prime(struct sampler *s, const int32_t *toks, int n);

/* sampler_accept() - @tok was chosen (generated): it enters the history. */
void sampler_accept(struct sampler *s, int32_t tok);

/* Picks a token id from n_vocab logits (logits are not modified). */
int32_t sampler_sample(struct sampler *s, const float *logits);

/*
 * sampler_dist() - the distribution sampler_sample() would draw from for
 * @logits: *@ids and *@probs (valid until the next call) get the
 * candidates, most likely first when top-k, top-p or min-p cut, and their
 * probabilities (summing to 1). Greedy: the one argmax, probability 1.
 * Return: the number of candidates (>= 1). Consumes no random number.
 */
int sampler_dist(struct sampler *s, const float *logits, const int32_t **ids,
		 const double **probs);

#endif
