/* SPDX-License-Identifier: MIT */
/*
 * llama-server's native completion endpoint, POST /completion: its request
 * (prompt as text, token ids, ids and text mixed, or a batch of prompts;
 * n_predict, n_probs, return_tokens, response_fields, ...) parsed into a
 * struct native_req, and its answers (the result object, the stream's
 * chunks). Reference: llama.cpp tools/server/README.md, "POST /completion",
 * and its tests (tools/server/tests/unit/test_completion.py). The rules and
 * what differs are listed in userspace/doc/server.rst.
 */
#ifndef RK_SERVER_API_NATIVE_H
#define RK_SERVER_API_NATIVE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api.h"

struct tokenizer;
struct gen;
struct engine_event;

/* Most prompts of one batch request. */
#define NATIVE_MAX_BATCH	64
/* Most n_probs (engine alternatives per position). */
#define NATIVE_MAX_PROBS	SAMPLER_MAX_PROBS

/**
 * struct native_elem - one element of a prompt
 * @is_id: a token id (@id), else text (@text)
 * @id: the token id (checked against the vocabulary by native_tokenize())
 * @text: the text (owned)
 */
struct native_elem {
	bool is_id;
	int32_t id;
	char *text;
};

/**
 * struct native_prompt - one prompt: ids and text in order
 * @el, @n: its elements (>= 1)
 * @where: its path in the request ("prompt", "prompt[1]") for errors
 */
struct native_prompt {
	struct native_elem *el;
	int n;
	char where[32];
};

/**
 * struct native_req - a validated POST /completion request
 * @p: the shared fields (kind API_NATIVE): stream, max_tokens (n_predict,
 *	-1 = until EOS or the context is full), sampling, seed, stop; with
 *	n_probs @p.logprobs and @p.top_logprobs
 * @prompts, @n_prompts: the prompts (1..NATIVE_MAX_BATCH)
 * @batch: "prompt" was a list of prompts (the answer is an array when it
 *	holds more than one)
 * @n_probs: n_probs (0..NATIVE_MAX_PROBS): completion_probabilities
 * @return_tokens: the result's "tokens" lists the generated ids
 * @ignore_eos: generate past end-of-generation tokens
 * @settings: the result's generation_settings object (owned)
 * @fields: response_fields (a JSON array of strings, owned) or NULL
 */
struct native_req {
	struct api_params p;
	struct native_prompt *prompts;
	int n_prompts;
	bool batch;
	int n_probs;
	bool return_tokens, ignore_eos;
	json_t *settings;
	json_t *fields;
};

/**
 * native_parse() - parse and validate a POST /completion body
 * @body, @len: the body (not NUL-terminated)
 * @nr: out; free with native_req_free() whatever the result
 * @e: out, a 400 naming the field when the result is -1
 *
 * Unknown fields are ignored, as llama-server does; post_sampling_probs
 * true and stream with a batch of several prompts are refused.
 *
 * Return: 0 or -1.
 */
int native_parse(const char *body, size_t len, struct native_req *nr, struct api_error *e);
void native_req_free(struct native_req *nr);

/**
 * native_tokenize() - the token ids of prompt @np
 * @tok: the model's tokenizer
 * @add_bos: the model wants BOS: prepended when the prompt starts with text
 *	(a prompt starting with an id is taken as given, as llama-server does)
 * @np: the prompt
 * @toks, @n: out, malloc'ed ids (freed by the caller, also on failure)
 * @e: out on failure: 400 for an id outside the vocabulary, a text over
 *	TOK_MAX_TEXT bytes or an empty prompt; 500 out of memory
 *
 * Text is tokenized as plain text (special-token text is not a special
 * token), each piece on its own. Return: 0 or -1.
 */
int native_tokenize(const struct tokenizer *tok, bool add_bos, const struct native_prompt *np,
		    int32_t **toks, int *n, struct api_error *e);

/**
 * struct native_info - the POST /completion state of one prompt's struct gen
 * @index: the prompt's index in the request
 * @prompt: the prompt detokenized, special tokens as text (owned)
 * @n_probs, @return_tokens: from the request
 * @settings: generation_settings (a reference)
 * @fields: response_fields (a reference) or NULL
 * @ids, @n_ids, @cap_ids: the generated ids so far
 */
struct native_info {
	int index;
	char *prompt;
	int n_probs;
	bool return_tokens;
	json_t *settings, *fields;
	int32_t *ids;
	int n_ids, cap_ids;
};

/**
 * native_info_new() - the state of prompt @index of @nr, whose @n ids are
 * @toks (the "prompt" field is their text). NULL when out of memory.
 */
struct native_info *native_info_new(const struct native_req *nr, int index,
				    const struct tokenizer *tok, const int32_t *toks, int n);
void native_info_free(struct native_info *ni);

/* format_native.c: format.c's hooks for API_NATIVE (called with g->mu held). */
void native_delta(struct gen *g, const struct engine_event *ev);
void native_done(struct gen *g);

/**
 * native_body() - the whole answer of @n finished generations: the result
 * object of @g[0] when @n is 1, else the array of their results in order
 * (malloc'ed JSON, @len its length; NULL when out of memory).
 */
char *native_body(struct gen **g, int n, size_t *len);

/**
 * native_filter() - llama-server's response_fields: a new object holding
 * only the paths of @fields found in @res, each under its path as the key
 * ("generation_settings/n_predict"); a path goes down nested objects at
 * each '/'. Steals @res.
 */
json_t *native_filter(json_t *res, const json_t *fields);

#endif
