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

struct json_t;

#define API_MAX_STOP 4
/*
 * logit_bias: at most this many entries (OpenAI refuses more than 300,
 * dottxt-ai/outlines#99; llama-server has no limit; 4096 lets a client ban
 * a whole class of tokens, e.g. the 1128 digit tokens of cl100k), each bias
 * in [-API_BIAS_MAX, API_BIAS_MAX] (the OpenAI API reference).
 */
#define API_MAX_BIAS 4096
#define API_BIAS_MAX 100

/* API_NATIVE: llama-server's POST /completion (api_native.h). */
enum api_kind { API_CHAT, API_COMPLETION, API_RESPONSES, API_NATIVE };

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
 * struct api_tool_call - a call an earlier assistant message made
 * @id: its id ("" when the client sent none)
 * @name: the function
 * @arguments: the arguments as JSON text (the client's string, or an
 *	object serialised)
 */
struct api_tool_call {
	char *id;
	char *name;
	char *arguments;
};

/**
 * struct api_msg - one chat message after validation
 * @role: "system", "user", "assistant" or "tool" ("developer" is mapped to
 *	system)
 * @content: text (text parts joined, BR-23); "" when the message has none
 * @reasoning: assistant reasoning_content, or NULL
 * @calls, @n_calls: the assistant's tool_calls
 * @tool_call_id: role tool: the call it answers, or NULL
 * @name: role tool: the function's name, or NULL
 * @item: the request item it came from (messages[@item], input[@item]; a
 *	responses assistant turn: its first item), for error params
 */
struct api_msg {
	const char *role;
	char *content;
	char *reasoning;
	struct api_tool_call *calls;
	int n_calls;
	char *tool_call_id;
	char *name;
	int item;
};

/* tool_choice (OpenAI): "auto", "none", "required" or one named function. */
enum api_tool_choice {
	API_TOOL_AUTO,
	API_TOOL_NONE,
	API_TOOL_REQUIRED,
	API_TOOL_FUNCTION,
};

/* One [["text", bias]] entry of logit_bias: @text (@len bytes, owned). */
struct api_bias_text {
	char *text;
	size_t len;
	float bias;
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
 * @tools_json: chat, responses: the "tools" array as compact JSON text in
 *	the chat completions shape (the template's), NULL when none are
 *	offered or tool_choice is "none"
 * @tool_choice: enum api_tool_choice
 * @tool_name: the function of API_TOOL_FUNCTION
 * @one_call: "parallel_tool_calls": false: at most one call is returned
 * @bias, @n_bias: logit_bias entries (owned; @s.bias points at them);
 *	ids are checked against the vocabulary by api_check_bias()
 * @bias_text, @n_bias_text: llama-server's [["text", bias]] entries,
 *	tokenized into @bias by api_resolve_bias()
 * @schema: structured output ("response_format", "json_schema",
 *	"text.format"; api_format.c), compiled, or NULL (free text); owned.
 *	With tools, api_resolve_format() replaces it by the schema of "calls
 *	or a document"
 * @schema_json: the document's schema as given (a reference), for that
 * @schema_param: the field that gave it ("response_format", ...)
 * @tools_given: responses: the request's "tools" array as sent, echoed in
 *	the response object (a reference), or NULL
 * @tool_ns: responses: {function name: namespace} of the offered functions
 *	that are members of a namespace tool (a reference), or NULL: a call
 *	to one is answered with its namespace
 * @reasoning_summary: responses: "reasoning.summary" asks for the
 *	reasoning item's summary
 * @store: responses: "store" (default true): keep the answer (resp_store.h)
 * @previous_id: responses: "previous_response_id", or NULL
 * @input_items: responses: the request's own input items with their
 *	item references resolved (a JSON array, a reference), for the store
 * @n_chain: responses: items of the previous responses before them in
 *	the conversation (their "input[i]" in errors is i - @n_chain)
 * @owner: responses: whose store the answer goes to, the api_store's
 *	@owner the request was parsed with (not owned; "" or NULL: none)
 * @draft_max, @draft_min: /completion speculative.n_max / n_min (0:
 *	unset, -1: off)
 */
struct api_params {
	enum api_kind kind;
	bool stream, include_usage;
	struct api_msg *msgs;
	int n_msgs;
	char *prompt;
	int max_tokens;
	struct sampler_params s;
	char *stop[API_MAX_STOP];
	int n_stop;
	bool logprobs;
	int top_logprobs;
	char *tools_json;
	int tool_choice;
	char *tool_name;
	bool one_call;
	struct sampler_bias *bias;
	int n_bias;
	struct api_bias_text *bias_text;
	int n_bias_text;
	struct jm_schema *schema;
	struct json_t *schema_json;
	const char *schema_param;
	struct json_t *tools_given, *tool_ns;
	bool reasoning_summary, store;
	char *previous_id;
	struct json_t *input_items;
	int n_chain;
	int draft_max, draft_min;
	const char *owner;
};

struct rstore;

/**
 * struct api_store - where /v1/responses resolves previous_response_id
 * and item_reference items (resp_store.h)
 * @st: the store, or NULL (none: both are a 400)
 * @owner: whose responses the request may use (its API key, "" without)
 * @now: the time, s (for the entries' TTL)
 */
struct api_store {
	struct rstore *st;
	const char *owner;
	long long now;
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
/* api_parse_with() - api_parse() with @store for /v1/responses (NULL: none). */
int api_parse_with(enum api_kind kind, const char *body, size_t len,
		   const struct api_store *store, struct api_params *p, struct api_error *e);
void api_params_free(struct api_params *p);

struct json_t;

/*
 * The parsers of each API's own fields (api.c; their rows in api_ops.c):
 * api_parse_chat() /v1/chat/completions, api_parse_completion()
 * /v1/completions, api_parse_responses() /v1/responses (previous
 * responses and item references from @store, NULL: none). @o is the body,
 * a JSON object; @p is initialised. Return: 0, or -1 with @e a 400.
 */
int api_parse_chat(struct json_t *o, const struct api_store *store, struct api_params *p,
		   struct api_error *e);
int api_parse_completion(struct json_t *o, const struct api_store *store, struct api_params *p,
			 struct api_error *e);
int api_parse_responses(struct json_t *o, const struct api_store *store, struct api_params *p,
			struct api_error *e);

/** api_params_init() - @p zeroed with @kind and the sampling defaults. */
void api_params_init(struct api_params *p, enum api_kind kind);

struct json_t;

/*
 * api_parse_common() - the fields every endpoint shares, from object @o:
 * stream, stream_options, @max_key (the token limit, 0..2^30), the
 * sampling fields, seed, n and stop. Return: 0, or -1 with @e a 400.
 */
int api_parse_common(struct json_t *o, struct api_params *p, const char *max_key,
		     struct api_error *e);

/*
 * api_check_bias() - every logit_bias id of @p is below @n_vocab.
 * Return: 0, or -1 with @e a 400 naming logit_bias.
 */
int api_check_bias(const struct api_params *p, int n_vocab, struct api_error *e);

/*
 * api_resolve_bias() - tokenize the logit_bias texts of @p with @tok (no
 * BOS, special-token text plain, as llama-server does) into @p->bias, then
 * api_check_bias() against @tok's vocabulary. Return: 0, or -1 with @e a
 * 400 naming logit_bias.
 */
struct tokenizer;
int api_resolve_bias(struct api_params *p, const struct tokenizer *tok, struct api_error *e);

/*
 * api_tools.c: the chat tool fields. api_parse_tools() reads "tools",
 * "tool_choice" and "parallel_tool_calls" of @o (and refuses the
 * deprecated "functions" / "function_call"); api_parse_tool_msg() the tool fields of message
 * @m (role already normalised into @out->role), @where its path
 * ("messages[2]"). Return: 0, or -1 with @e a 400 naming the field.
 */
struct json_t;
int api_parse_tools(struct json_t *o, struct api_params *p, struct api_error *e);

/*
 * api_parse_response_tools() - the same for /v1/responses, whose tools
 * and tool_choice are flat ({type: "function", name, ...}); p->tools_json
 * gets them in the chat shape.
 */
int api_parse_response_tools(struct json_t *o, struct api_params *p, struct api_error *e);

/*
 * api_parse_format() - api_format.c: chat's, completions' and POST
 * /completion's "response_format" and top-level "json_schema" of @o
 * ("grammar" refused) into @p->schema (and @p->schema_json);
 * api_parse_text_format() the same of the Responses API's "text.format".
 * Return: 0, or -1 with @e a 400 naming the field (response_format.type,
 * response_format.json_schema.schema, ...) and, for a schema we cannot
 * follow, the keyword and where it is.
 */
int api_parse_format(struct json_t *o, struct api_params *p, struct api_error *e);
int api_parse_text_format(struct json_t *o, struct api_params *p, struct api_error *e);

/*
 * api_resolve_format() - api_format.c: structured output together with
 * tools, once the model's chat template @ct is known: @p->schema becomes
 * "tool calls in the template's form, or a document of the schema"
 * (jm_compile_tools(); tool_choice required or a function: calls only).
 * Nothing to do without both. Return: 0, or -1 with @e a 400 (a strict
 * tool's parameters we cannot follow, naming them; a template whose
 * calls are not JSON) or a 500.
 */
struct chat_template;
int api_resolve_format(struct api_params *p, const struct chat_template *ct, struct api_error *e);

/*
 * api_check_tool_ids() - each tool message's tool_call_id (when given)
 * names a call of the nearest assistant message with tool_calls before it,
 * and answers it once; on /v1/responses a function_call_output with no
 * function_call before it is refused too. Return: 0, or -1 with @e naming
 * messages[i].tool_call_id (input[i].call_id).
 */
int api_check_tool_ids(const struct api_params *p, struct api_error *e);

/*
 * Shared by api.c and api_tools.c: api_bad() fills @e with a 400
 * invalid_request_error naming @param and returns -1; api_field() is
 * @key of @o, or NULL when it is absent or JSON null (the default).
 */
int api_bad(struct api_error *e, const char *param, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
struct json_t *api_field(struct json_t *o, const char *key);
/*
 * api_get_bool() / api_get_int(): field @key of @o as a boolean, or as an
 * integer (a number with an integral value too) in [@min, @max]; absent or
 * null leaves *@out as it is (*@present, when given, is set only when the
 * field was there). Return: 0, or -1 with a 400 naming @key in @e.
 */
int api_get_bool(struct json_t *o, const char *key, bool *out, struct api_error *e);
int api_get_int(struct json_t *o, const char *key, long long min, long long max, long long *out,
		bool *present, struct api_error *e);
int api_parse_tool_msg(struct json_t *m, const char *where, struct api_msg *out,
		       struct api_error *e);

/*
 * api_parse_content() - message content at @where: a string, or an array
 * of text parts ("text", "output_text" and @part_type2 when not NULL),
 * joined; absent (@c NULL) is "". @out malloc'ed. Return: 0 or -1 (400).
 */
int api_parse_content(struct json_t *c, const char *where, const char *part_type2, char **out,
		      struct api_error *e);

/*
 * api_parse_input() - api_input.c: the /v1/responses "input" array of
 * items (messages, function_call, function_call_output, reasoning) into
 * p->msgs after @n_pre slots, as the chat messages they stand for.
 * Return: 0, or -1 with @e a 400 naming input[i]...
 */
int api_parse_input(struct json_t *in, int n_pre, struct api_params *p, struct api_error *e);

/*
 * api_parse_response_opts() - api_resp.c: the Responses API's own fields
 * of @o: "reasoning", "store", "previous_response_id"; and "input" as the
 * items the conversation holds: the previous responses' (from @store),
 * then the request's with its item references resolved, in *@items (a
 * new reference). Return: 0, or -1 with @e a 400 naming the field (a
 * response or item not in the store names previous_response_id or
 * input[i].id).
 */
int api_parse_response_opts(struct json_t *o, const struct api_store *store,
			    struct api_params *p, struct json_t **items, struct api_error *e);

/** api_error_set() - fill @e; @param may be NULL (JSON null). */
void api_error_set(struct api_error *e, int status, const char *type, const char *code,
		   const char *param, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/** api_error_json() - the envelope as a malloc'ed JSON string (@len out). */
char *api_error_json(const struct api_error *e, size_t *len);

#endif
