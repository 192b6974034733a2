// SPDX-License-Identifier: MIT
/*
 * Answers of the generation endpoints in the OpenAI schema, whole (JSON)
 * or streamed (SSE, "data: {...}\n\n", ending "data: [DONE]"; /v1/responses
 * streams named events "event: response.output_text.delta" and has no
 * [DONE]: format_responses.c). Reference: the OpenAI API reference
 * (chat.completion, chat.completion.chunk, text_completion).
 */
#include <stdlib.h>
#include <string.h>

#include "api_ops.h"
#include "gen.h"
#include "tokenizer.h"

void gen_append(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t c = *cap ? *cap : 256;
		char *nb;

		while (c < *len + n + 1)
			c *= 2;
		nb = realloc(*buf, c);
		if (!nb)
			return;	/* out of memory: the delta is lost, never the heap */
		*buf = nb;
		*cap = c;
	}
	memcpy(*buf + *len, p, n);
	*len += n;
	(*buf)[*len] = 0;
}

/* The calls returned: all of the reply's, or its first with @one_call. */
static int n_calls(const struct gen *g)
{
	int n = g->parser ? chat_parser_n_calls(g->parser) : 0;

	return g->one_call && n > 1 ? 1 : n;
}

/*
 * Every call of the reply is whole: closed by its tag, its arguments a
 * JSON object (the XML form closes a cut-off call's object, so the tag
 * is what tells).
 */
static bool calls_whole(const struct gen *g)
{
	int i, n = n_calls(g);

	for (i = 0; i < n; i++) {
		const struct chat_tool_call *c = chat_parser_call(g->parser, i);
		json_t *v = c->complete ? json_loads(c->arguments, 0, NULL) : NULL;
		bool obj = json_is_object(v);

		json_decref(v);
		if (!obj)
			return false;
	}
	return n > 0;
}

/*
 * A reply that called tools ends "tool_calls" (OpenAI, llama-server),
 * unless a call was cut off (by the token limit: "length"; by a stop
 * string: "stop", its arguments as far as they came).
 */
static const char *finish_name(const struct gen *g)
{
	if (g->finish == ENGINE_FINISH_LENGTH)
		return "length";
	if (g->parser && calls_whole(g))
		return "tool_calls";
	return "stop";
}

/* Emit "data: JSON\n\n" (or "event: NAME\ndata: ..." for responses); steals @o. */
void fmt_sse(struct gen *g, const char *event, json_t *o)
{
	char *s;

	if (event) {
		json_object_set_new(o, "sequence_number", json_integer(g->seq++));
		gen_append(&g->out, &g->out_len, &g->out_cap, "event: ", 7);
		gen_append(&g->out, &g->out_len, &g->out_cap, event, strlen(event));
		gen_append(&g->out, &g->out_len, &g->out_cap, "\n", 1);
	}
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!s)
		return;
	gen_append(&g->out, &g->out_len, &g->out_cap, "data: ", 6);
	gen_append(&g->out, &g->out_len, &g->out_cap, s, strlen(s));
	gen_append(&g->out, &g->out_len, &g->out_cap, "\n\n", 2);
	free(s);
}

int fmt_reasoning_tokens(const struct gen *g)
{
	const struct engine_usage *u = &g->usage;

	return g->reasoning_tokens < u->completion_tokens ? g->reasoning_tokens :
	       u->completion_tokens;
}

/* The usage object of chat completions and completions. */
static json_t *usage_json(const struct gen *g)
{
	const struct engine_usage *u = &g->usage;
	int rs = fmt_reasoning_tokens(g);

	return json_pack("{s:i, s:i, s:i, s:{s:i}, s:{s:i}}", "prompt_tokens", u->prompt_tokens,
			 "completion_tokens", u->completion_tokens,
			 "total_tokens", u->prompt_tokens + u->completion_tokens,
			 "prompt_tokens_details", "cached_tokens", u->cached_tokens,
			 "completion_tokens_details", "reasoning_tokens", rs);
}

/*
 * Count the @n tokens of a piece of the reply (an engine event's ids) as
 * reasoning when they lie in its <think> block: the parser was in it
 * before the piece (@before) or is in it after. Tokens of an undecided
 * start (what may be "<think>" split over tokens) wait in rs_pending for
 * the parser to decide. The closing tag's tokens count; those wholly
 * after it do not.
 */
void fmt_count_reasoning(struct gen *g, enum chat_phase before, int n)
{
	switch (chat_parser_phase(g->parser)) {
	case CHAT_PHASE_START:
		g->rs_pending += n;
		return;
	case CHAT_PHASE_NO_THINK:
		break;
	case CHAT_PHASE_AFTER_THINK:
		if (before != CHAT_PHASE_THINK && before != CHAT_PHASE_START)
			break;
		/* fall through */
	case CHAT_PHASE_THINK:
		g->reasoning_tokens += g->rs_pending + n;
		break;
	}
	g->rs_pending = 0;
}

/* Our extension: the engine's timing of this request (the web UI shows it). */
json_t *fmt_timings(const struct gen *g)
{
	const struct engine_timing *t = &g->timing;
	double dec = t->decode_ms;
	int n = g->usage.completion_tokens;

	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}", "queued_ms", t->queued_ms,
			 "prefill_ms", t->prefill_ms, "ttft_ms", t->ttft_ms, "total_ms", t->total_ms,
			 "tpot_ms", n > 1 ? dec / (n - 1) : 0.0,
			 "decode_tokens_per_second", n > 1 && dec > 0 ? (n - 1) * 1000.0 / dec : 0.0);
}

static json_t *chunk_base(const struct gen *g)
{
	return json_pack("{s:s, s:s, s:I, s:s, s:s}", "id", g->id, "object", g->ops->chunk_object,
			 "created", (json_int_t)g->created, "model", g->s->model_id,
			 "system_fingerprint", "rk1828");
}

/* A streamed chat chunk with @delta (stolen) and any pending logprobs. */
static void chat_chunk(struct gen *g, json_t *delta)
{
	json_t *c = chunk_base(g);

	json_object_set_new(c, "choices",
		json_pack("[{s:i, s:o, s:o, s:n}]", "index", 0, "delta", delta, "logprobs",
			  g->pend_lp ? json_pack("{s:o}", "content", g->pend_lp) : json_null(),
			  "finish_reason"));
	g->pend_lp = NULL;
	fmt_sse(g, NULL, c);
}

/*
 * The parser's pieces as OpenAI deltas: content, reasoning_content, and
 * tool_calls entries (the first with id, type and name, then argument
 * pieces that concatenate to the call's arguments).
 */
static void chat_piece(const struct chat_delta *d, void *user)
{
	struct gen *g = user;
	json_t *call;

	if (g->one_call && d->index > 0 &&
	    (d->kind == CHAT_DELTA_TOOL_BEGIN || d->kind == CHAT_DELTA_TOOL_ARGS))
		return;	/* parallel_tool_calls false: the first call only */
	switch (d->kind) {
	case CHAT_DELTA_CONTENT:
		chat_chunk(g, json_pack("{s:s%}", "content", d->text, d->len));
		return;
	case CHAT_DELTA_REASONING:
		chat_chunk(g, json_pack("{s:s%}", "reasoning_content", d->text, d->len));
		return;
	case CHAT_DELTA_TOOL_BEGIN:
		call = json_pack("{s:i, s:s, s:s, s:{s:s, s:s}}", "index", d->index, "id", d->id,
				 "type", "function", "function", "name", d->name, "arguments", "");
		break;
	default:
		call = json_pack("{s:i, s:{s:s%}}", "index", d->index, "function", "arguments",
				 d->text, d->len);
		break;
	}
	chat_chunk(g, json_pack("{s:[o]}", "tool_calls", call));
}

/* Feed the parser (streams: with chunks out); the text is kept whole too. */
static void chat_feed(struct gen *g, const char *text, size_t len)
{
	if (g->parser)
		chat_parser_feed(g->parser, text, len, g->stream ? chat_piece : NULL, g);
}

/* Chat: a stream opens with the assistant's role; a forced call's opening is fed first. */
void fmt_chat_start(struct gen *g)
{
	json_t *c;

	if (g->stream) {
		c = chunk_base(g);
		/* With tools the content may stay null (only calls), as in the whole answer. */
		json_object_set_new(c, "choices",
			json_pack("[{s:i, s:{s:s, s:o}, s:n, s:n}]", "index", 0, "delta", "role",
				  "assistant", "content", g->tools ? json_null() : json_string(""),
				  "logprobs", "finish_reason"));
		fmt_sse(g, NULL, c);
	}
	if (g->prefix)
		chat_feed(g, g->prefix, strlen(g->prefix));
}

json_t *fmt_token_json(const struct gen *g, int32_t id, float lp, bool top)
{
	size_t cap = tok_max_piece(g->s->tok);
	char *piece = malloc(cap);
	int n = piece ? tok_piece(g->s->tok, id, piece, cap) : 0;
	json_t *bytes = json_array(), *o;
	int i;

	if (n < 0)
		n = 0;
	for (i = 0; i < n; i++)
		json_array_append_new(bytes, json_integer((unsigned char)piece[i]));
	/* A piece may be part of a UTF-8 character: then "token" is lossy, "bytes" exact. */
	o = json_pack("{s:s%, s:f, s:o}", "token", piece, (size_t)n, "logprob", (double)lp,
		      "bytes", bytes);
	if (!o) {
		o = json_pack("{s:s, s:f, s:o}", "token", "\ufffd", (double)lp, "bytes", bytes);
	}
	if (top)
		json_object_set_new(o, "top_logprobs", json_array());
	free(piece);
	return o;
}

/* Chat logprobs entries ({token, logprob, bytes, top_logprobs}) of one event. */
static json_t *logprobs_json(const struct gen *g, const struct engine_event *ev)
{
	json_t *arr = json_array();
	int i, k;

	for (i = 0; ev->logprobs && i < ev->n_ids; i++) {
		const struct engine_logprob *l = &ev->logprobs[i];
		json_t *e = fmt_token_json(g, l->id, l->logprob, true);

		for (k = 0; k < l->n_top; k++)
			json_array_append_new(json_object_get(e, "top_logprobs"),
					      fmt_token_json(g, l->top[k].id, l->top[k].logprob, false));
		json_array_append_new(arr, e);
	}
	return arr;
}

/* Completions logprobs ({tokens, token_logprobs, top_logprobs, text_offset}). */
static json_t *legacy_logprobs(const json_t *entries, size_t text_off)
{
	json_t *o = json_pack("{s:[], s:[], s:[], s:[]}", "tokens", "token_logprobs",
			      "top_logprobs", "text_offset"), *e, *t;
	size_t i, k;

	json_array_foreach(entries, i, e) {
		json_t *top = json_object();

		json_array_append(json_object_get(o, "tokens"), json_object_get(e, "token"));
		json_array_append(json_object_get(o, "token_logprobs"), json_object_get(e, "logprob"));
		json_array_foreach(json_object_get(e, "top_logprobs"), k, t)
			json_object_set(top, json_string_value(json_object_get(t, "token")),
					json_object_get(t, "logprob"));
		json_array_append_new(json_object_get(o, "top_logprobs"), top);
		json_array_append_new(json_object_get(o, "text_offset"), json_integer(text_off));
		text_off += json_array_size(json_object_get(e, "bytes"));
	}
	return o;
}

json_t *fmt_take_text(struct gen *g, const struct engine_event *ev)
{
	json_t *lp = NULL;

	gen_append(&g->text, &g->text_len, &g->text_cap, ev->text, ev->len);
	if (g->logprobs && ev->logprobs && ev->n_ids) {
		lp = logprobs_json(g, ev);
		if (!g->lp)
			g->lp = json_array();
		json_array_extend(g->lp, lp);
	}
	return lp;
}

/* Chat: chunks as the parser settles the text; logprobs ride on the first. */
void fmt_chat_delta(struct gen *g, const struct engine_event *ev)
{
	json_t *lp = fmt_take_text(g, ev);
	enum chat_phase before;

	g->pend_lp = g->stream ? lp : NULL;
	before = chat_parser_phase(g->parser);
	chat_feed(g, ev->text, ev->len);
	fmt_count_reasoning(g, before, ev->n_ids);
	if (g->pend_lp)
		chat_chunk(g, json_pack("{s:s}", "content", ""));
	if (!g->stream)
		json_decref(lp);
}

/* Completions: a chunk of the text as it comes, with its legacy logprobs. */
void fmt_text_delta(struct gen *g, const struct engine_event *ev)
{
	size_t off = g->text_len;
	json_t *c, *lp = fmt_take_text(g, ev);

	if (!g->stream || (!ev->len && !lp)) {
		json_decref(lp);
		return;
	}
	c = chunk_base(g);
	json_object_set_new(c, "choices",
		json_pack("[{s:i, s:s%, s:o, s:n}]", "index", 0, "text", ev->text, ev->len,
			  "logprobs", lp ? legacy_logprobs(lp, off) : json_null(),
			  "finish_reason"));
	json_decref(lp);
	fmt_sse(g, NULL, c);
}

json_t *fmt_error_obj(const struct gen *g)
{
	return json_pack("{s:s, s:s, s:n, s:n}", "message",
			 g->shutdown ? "the server is shutting down" :
			 g->error[0] ? g->error : "generation failed",
			 "type", g->shutdown ? "unavailable_error" : "server_error", "param", "code");
}

/*
 * The end of a chat or completions stream: the last chunk with @choice
 * (stolen) and the finish reason, the usage chunk when asked for, [DONE];
 * a failed generation's is an error event instead of the last chunk.
 */
static void stream_end(struct gen *g, json_t *choice)
{
	json_t *c;

	if (g->finish == ENGINE_FINISH_ERROR || g->finish == ENGINE_FINISH_CANCELLED) {
		json_decref(choice);
		fmt_sse(g, NULL, json_pack("{s:o}", "error", fmt_error_obj(g)));
	} else {
		c = chunk_base(g);
		json_object_set_new(choice, "finish_reason", json_string(finish_name(g)));
		json_object_set_new(c, "choices", json_pack("[o]", choice));
		if (!g->include_usage)
			json_object_set_new(c, "timings", fmt_timings(g));
		fmt_sse(g, NULL, c);
		if (g->include_usage) {
			c = chunk_base(g);
			json_object_set_new(c, "choices", json_array());
			json_object_set_new(c, "usage", usage_json(g));
			json_object_set_new(c, "timings", fmt_timings(g));
			fmt_sse(g, NULL, c);
		}
	}
	gen_append(&g->out, &g->out_len, &g->out_cap, "data: [DONE]\n\n", 14);
}

/* Chat: what the parser held back (a tag that never closed), then the stream's end. */
void fmt_chat_done(struct gen *g)
{
	chat_parser_finish(g->parser, g->stream ? chat_piece : NULL, g);
	if (g->stream)
		stream_end(g, json_pack("{s:i, s:{}, s:n}", "index", 0, "delta", "logprobs"));
}

/* Completions: the stream's end. */
void fmt_text_done(struct gen *g)
{
	if (g->stream)
		stream_end(g, json_pack("{s:i, s:s, s:n}", "index", 0, "text", "", "logprobs"));
}

/*
 * The assistant message of a whole chat answer: content (null when the
 * reply is only tool calls, as OpenAI sends it), reasoning_content when
 * the model reasoned, tool_calls when it called.
 */
static json_t *chat_message(struct gen *g, const char *text)
{
	const char *content = g->parser ? chat_parser_content(g->parser) : text;
	int n = n_calls(g), i;
	json_t *m = json_pack("{s:s}", "role", "assistant"), *calls;

	json_object_set_new(m, "content", n && !*content ? json_null() : json_string(content));
	if (g->parser && *chat_parser_reasoning(g->parser))
		json_object_set_new(m, "reasoning_content",
				    json_string(chat_parser_reasoning(g->parser)));
	if (!n)
		return m;
	calls = json_array();
	for (i = 0; i < n; i++) {
		const struct chat_tool_call *c = chat_parser_call(g->parser, i);

		json_array_append_new(calls, json_pack("{s:s, s:s, s:{s:s, s:s}}", "id", c->id,
						       "type", "function", "function", "name",
						       c->name, "arguments", c->arguments));
	}
	json_object_set_new(m, "tool_calls", calls);
	return m;
}

/* A whole chat or completions answer with its one @choice (stolen). */
static char *whole_body(struct gen *g, json_t *choice, size_t *len)
{
	json_t *o;
	char *s;

	o = json_pack("{s:s, s:s, s:I, s:s, s:s}", "id", g->id, "object", g->ops->object,
		      "created", (json_int_t)g->created, "model", g->s->model_id,
		      "system_fingerprint", "rk1828");
	json_object_set_new(o, "choices", json_pack("[o]", choice));
	json_object_set_new(o, "usage", usage_json(g));
	json_object_set_new(o, "timings", fmt_timings(g));
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	*len = s ? strlen(s) : 0;
	return s;
}

char *fmt_chat_body(struct gen **gs, int n, size_t *len)
{
	struct gen *g = gs[0];
	const char *text = g->text ? g->text : "";

	(void)n;
	return whole_body(g, json_pack("{s:i, s:o, s:o, s:s}", "index", 0, "message",
				       chat_message(g, text), "logprobs", g->lp ?
				       json_pack("{s:O}", "content", g->lp) : json_null(),
				       "finish_reason", finish_name(g)), len);
}

char *fmt_text_body(struct gen **gs, int n, size_t *len)
{
	struct gen *g = gs[0];
	const char *text = g->text ? g->text : "";

	(void)n;
	return whole_body(g, json_pack("{s:i, s:s%, s:o, s:s}", "index", 0, "text", text,
				       g->text_len, "logprobs", g->lp ? legacy_logprobs(g->lp, 0) :
				       json_null(), "finish_reason", finish_name(g)), len);
}
