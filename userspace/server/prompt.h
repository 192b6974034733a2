/* SPDX-License-Identifier: MIT */
/*
 * Prompt building (prompt.c): a validated request (api.h) as the token ids
 * the engine is given. Chat and responses requests go through the model's
 * chat template (chat.h: system messages joined, tools and tool choice,
 * assistant prefill), completions prompts are tokenized as plain text.
 * Below the HTTP layer: it knows the loaded model (struct srv's template,
 * tokenizer and context), never a connection.
 */
#ifndef RK_SERVER_PROMPT_H
#define RK_SERVER_PROMPT_H

#include <stdbool.h>
#include <stdint.h>

#include "chat.h"
#include "srv.h"

struct api_params;
struct api_error;

/**
 * struct reply_start - how the reply of a chat prompt begins
 * @in_think: inside an open <think> block (chat_prompt.reply_in_think)
 * @prefix: the opening of a forced tool call the prompt wrote, or NULL
 *	(malloc'ed; whoever takes it sets it to NULL)
 */
struct reply_start {
	bool in_think;
	char *prefix;
};

/**
 * srv_chat_prompt() - the text of a chat or responses request @p through
 * the model's chat template s->ct, as /v1/chat/completions renders it
 * (generation prompt unless the last message is an assistant prefill).
 *
 * Return: 0 with @cp (free with chat_prompt_free()), or -1 with @e: a 400
 * naming messages (input) when the template cannot render the
 * conversation or the prompt is over TOK_MAX_TEXT bytes, a 500 when out
 * of memory.
 */
int srv_chat_prompt(struct srv *s, const struct api_params *p, struct chat_prompt *cp,
		    struct api_error *e);

/**
 * prompt_tokenize() - the prompt of @p as token ids, by its API's
 * tokenizer (api_ops.h): completions as its text (s->add_bos, no special
 * tokens), chat and responses through the template (srv_chat_prompt()),
 * with @rs set from the rendering.
 *
 * Return: 0 with *@toks (malloc'ed, *@n >= 1 ids), or -1 with @e (a 400
 * for an empty or too long prompt, naming its field; a 500) and *@toks
 * NULL.
 */
int prompt_tokenize(struct srv *s, const struct api_params *p, int32_t **toks, int *n,
		    struct reply_start *rs, struct api_error *e);

/*
 * The tokenizers of the API kinds (api_ops.h's @tokenize, called by
 * prompt_tokenize()): prompt_chat_tokens() renders @p's messages through
 * the template (@rs set from the rendering), prompt_text_tokens() encodes
 * @p->prompt as plain text. Return: 0 with *@toks (*@n >= 1), or -1 with
 * @e (a 400 naming "messages" or "prompt" for an empty prompt).
 */
int prompt_chat_tokens(struct srv *s, const struct api_params *p, int32_t **toks, int *n,
		       struct reply_start *rs, struct api_error *e);
int prompt_text_tokens(struct srv *s, const struct api_params *p, int32_t **toks, int *n,
		       struct reply_start *rs, struct api_error *e);

/**
 * prompt_check_ctx() - a prompt of @n_prompt tokens leaves room for one
 * generated token in s->n_ctx. Return: 0, or -1 with @e a 400
 * context_length_exceeded naming the prompt's field of @p.
 */
int prompt_check_ctx(struct srv *s, const struct api_params *p, int n_prompt,
		     struct api_error *e);

#endif
