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

/**
 * struct sampler_params - how a sampler picks tokens
 * @temp: 0 = greedy (argmax of the biased, penalised logits, lowest id on
 *	ties)
 * @top_k: <= 0: whole vocabulary
 * @top_p: >= 1: off
 * @min_p: keep tokens whose probability is >= @min_p times the most likely
 *	one's (llama.cpp's min-p); <= 0: off
 * @repeat_penalty: llama.cpp's repeat penalty over the last @repeat_last_n
 *	tokens (prompt included): a positive logit is divided by it, a
 *	negative one multiplied; 1 (and 0, which would divide by zero) = off
 * @repeat_last_n: window of @repeat_penalty in tokens; 0 = off, -1 = all
 * @presence_penalty: OpenAI's: subtracted from the logit of every token
 *	generated at least once in this reply; 0 = off
 * @frequency_penalty: OpenAI's: times the token's count in this reply,
 *	subtracted; 0 = off
 * @bias, @n_bias: logit biases (copied by sampler_new(); ids repeated
 *	add up)
 * @seed: generator seed (0 is replaced by a fixed non-zero value)
 */
struct sampler_params {
	float temp;
	int top_k;
	float top_p;
	float min_p;
	float repeat_penalty;
	int repeat_last_n;
	float presence_penalty;
	float frequency_penalty;
	const struct sampler_bias *bias;
	int n_bias;
	uint64_t seed;
};

struct sampler;

/*
 * sampler_new() - a sampler over @n_vocab logits. Return: NULL when @p is
 * invalid (NaN temperature/top_p, a bias id outside 0..n_vocab-1) or on
 * out of memory.
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
