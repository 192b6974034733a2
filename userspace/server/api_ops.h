/* SPDX-License-Identifier: MIT */
/*
 * What differs between the generation APIs (enum api_kind): one row of
 * struct api_ops per kind (api_ops.c) holds its request parser, its
 * prompt builder, the names its errors and answers use and its answer
 * renderers, so that the rest of the server never branches on the kind.
 * A new API is a parser, renderers and one row.
 */
#ifndef RK_SERVER_API_OPS_H
#define RK_SERVER_API_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api.h"

struct gen;
struct srv;
struct reply_start;
struct engine_event;

/**
 * struct api_ops - one generation API
 * @kind: its enum api_kind (its index in the table)
 * @prompt_param: the request field that holds the prompt, named by the
 *	prompt's errors (empty, too long, over the context): "messages",
 *	"prompt", "input"
 * @call_id_param: the field of a tool result naming its call
 *	("tool_call_id", Responses: "call_id"; NULL: no tools)
 * @tool_params: where a function's parameters are in "tools", a printf
 *	format of the tool's index ("tools[%u].function.parameters")
 * @items: the conversation is a list of items (Responses): a tool result
 *	needs a call before it
 * @id_prefix: the answer's id before its random part ("chatcmpl-")
 * @object, @chunk_object: the answer's "object" whole and streamed
 *	(NULL: the renderers name their own)
 * @reply_parser: the reply goes through the chat template's parser
 *	(content, reasoning, tool calls: chat.h)
 * @parse: the body's fields, @o a JSON object; @store resolves stored
 *	responses (NULL: none). Return: 0, or -1 with @e a 400. NULL: the
 *	endpoint parses its own body (POST /completion: api_native.h)
 * @tokenize: the prompt of @p as token ids (prompt.h, prompt_tokenize())
 * @gen_init: the answer's own state in @g from @p (NULL: none); 0, or -1
 *	when out of memory
 * @start: the answer's opening (streams: the first events; NULL: none)
 * @delta: a piece of the reply (ENGINE_EV_TEXT, or DONE's held-back rest)
 * @done: the reply ended (g->finish set): the stream's last events, its
 *	error event when the generation failed (each API its own error shape)
 * @body: the whole answer of @n finished generations (@n > 1 only for a
 *	POST /completion batch), malloc'ed JSON of *@len bytes, or NULL
 *
 * @start, @delta and @done run with g->mu held (the engine's thread for
 * the last two: they must not block).
 */
struct api_ops {
	enum api_kind kind;
	const char *prompt_param;
	const char *call_id_param;
	const char *tool_params;
	bool items;
	const char *id_prefix;
	const char *object, *chunk_object;
	bool reply_parser;
	int (*parse)(struct json_t *o, const struct api_store *store, struct api_params *p,
		     struct api_error *e);
	int (*tokenize)(struct srv *s, const struct api_params *p, int32_t **toks, int *n,
			struct reply_start *rs, struct api_error *e);
	int (*gen_init)(struct gen *g, const struct api_params *p);
	void (*start)(struct gen *g);
	void (*delta)(struct gen *g, const struct engine_event *ev);
	void (*done)(struct gen *g);
	char *(*body)(struct gen **g, int n, size_t *len);
};

/** api_ops_of() - the row of @kind (a valid enum api_kind). */
const struct api_ops *api_ops_of(enum api_kind kind);

#endif
