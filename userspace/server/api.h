/* SPDX-License-Identifier: MIT */
/*
 * OpenAI request schema: parse and validate the JSON bodies of
 * /v1/chat/completions, /v1/completions and /v1/responses into one
 * struct api_params, and the OpenAI error envelope
 * {"error":{"message","type","param","code"}}. Reference: the OpenAI API
 * reference and the `openai` npm package's types; llama-server where the
 * reference leaves room. Every rule is listed in
 * userspace/doc/server.rst.
 */
#ifndef RK_SERVER_API_H
#define RK_SERVER_API_H

#include <stdbool.h>
#include <stddef.h>

#include "engine.h"

#define API_MAX_STOP 4

enum api_kind { API_CHAT, API_COMPLETION, API_RESPONSES };

/**
 * struct api_error - an error answer
 * @status: HTTP status (400, 401, 404, 405, 413, 503, 500)
 * @type: OpenAI error type ("invalid_request_error", ...)
 * @code: OpenAI error code or NULL ("context_length_exceeded", ...)
 * @param: the offending request field or "" (JSON null)
 * @retry_after: seconds for a Retry-After header (503), 0 = none
 * @msg: human-readable message naming the field and the rule
 */
struct api_error {
	int status;
	const char *type;
	const char *code;
	char param[64];
	int retry_after;
	char msg[480];
};

/**
 * struct api_msg - one chat message after validation
 * @role: "system", "user" or "assistant" ("developer" is mapped to system)
 * @content: text (text parts joined, BR-23)
 */
struct api_msg {
	const char *role;
	char *content;
};

/**
 * struct api_params - a validated generation request
 * @kind: endpoint
 * @stream: SSE answer
 * @include_usage: stream_options.include_usage (chat/completions streams)
 * @msgs, @n_msgs: chat/responses messages (instructions first)
 * @prompt: completions prompt text
 * @max_tokens: -1 = until EOS or the context is full; 0 = no tokens
 * @s: sampling for the engine
 * @stop, @n_stop: stop strings (owned)
 * @logprobs: return log probabilities of the chosen tokens
 * @top_logprobs: alternatives per token (0..20)
 */
struct api_params {
	enum api_kind kind;
	bool stream, include_usage;
	struct api_msg *msgs;
	int n_msgs;
	char *prompt;
	int max_tokens;
	struct engine_sampling s;
	char *stop[API_MAX_STOP];
	int n_stop;
	bool logprobs;
	int top_logprobs;
};

/**
 * api_parse() - parse and validate a request body
 * @kind: which endpoint
 * @body, @len: the body (not NUL-terminated)
 * @p: out; free with api_params_free() whatever the result
 * @e: out, set when the result is -1
 *
 * Return: 0, or -1 with @e a 400 describing the first problem.
 */
int api_parse(enum api_kind kind, const char *body, size_t len, struct api_params *p,
	      struct api_error *e);
void api_params_free(struct api_params *p);

/** api_error_set() - fill @e; @param may be NULL (JSON null). */
void api_error_set(struct api_error *e, int status, const char *type, const char *code,
		   const char *param, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/** api_error_json() - the envelope as a malloc'ed JSON string (@len out). */
char *api_error_json(const struct api_error *e, size_t *len);

#endif
