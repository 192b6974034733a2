// SPDX-License-Identifier: MIT
/*
 * The answer of /v1/responses (gen.h): the reply parsed as it arrives
 * (chat.h's parser, as for chat completions) into output items, in the
 * order the model wrote them:
 *   - "reasoning" {id "rs_...", summary [], content [{reasoning_text}]}
 *     for the text inside <think>; with "reasoning.summary" asked for,
 *     summary [{summary_text}] holds the same text (the server has no
 *     summarizer: the reasoning is its own summary), streamed with the
 *     response.reasoning_summary_part / _text events;
 *   - "message" {id "msg_...", role assistant, content [{output_text}]}
 *     for the text (always one when the reply has no call, "" if need be);
 *   - "function_call" {id "fc_...", call_id "call_...", name, arguments,
 *     status} per call, with "namespace" when the function is a member of
 *     a namespace tool: "completed" when its closing tag came and its
 *     arguments are a JSON object, else "incomplete" (cut off by the token
 *     limit or a stop string). With parallel_tool_calls false only the
 *     first call is returned.
 * Whole answers list the items in "output"; streams send each item's
 * events (response.output_item.added, its deltas and .done events,
 * response.output_item.done) before the next item starts, between
 * response.created / response.in_progress and response.completed (or
 * response.incomplete / response.failed), each with its sequence_number.
 * Reference: the OpenAI API reference (responses: the Response object and
 * its streaming events) and the `openai` npm package's ResponseStream,
 * whose accumulator checks item ids and output indexes.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen.h"
#include "resp_store.h"

enum item_kind { ITEM_NONE, ITEM_REASONING, ITEM_MESSAGE, ITEM_CALL };

/**
 * struct resp_out - the output items of one response
 * @items: the items closed so far, in order (json array)
 * @open: the kind of the item being written (ITEM_NONE: none)
 * @open_id: its id
 * @call: ITEM_CALL: the parser's index of the call
 * @call_id, @name: ITEM_CALL: its call_id and function
 * @ns: ITEM_CALL: the function's namespace, "" when it has none
 * @buf, @len, @cap: the open item's text (or arguments) so far
 * @n_msg: message items opened (their ids: msg_X, msg_X_1, ...)
 * @tools, @tool_choice: the request's, echoed in the response object
 * @tool_ns: {function: namespace} of the offered namespace members, or NULL
 * @parallel: parallel_tool_calls as requested
 * @summary: reasoning items carry a summary ("reasoning.summary")
 * @store: keep the finished response in the server's store ("store")
 * @prev_id: "previous_response_id", echoed and stored, or NULL
 * @input: the request's own input items (references resolved), for the store
 */
struct resp_out {
	json_t *items;
	enum item_kind open;
	char open_id[64];
	int call;
	char call_id[48], name[80], ns[80];
	char *buf;
	size_t len, cap;
	int n_msg;
	json_t *tools, *tool_choice, *tool_ns;
	bool parallel, summary, store;
	char *prev_id;
	json_t *input;
};

static const char *const choice_names[] = {
	[API_TOOL_AUTO] = "auto", [API_TOOL_NONE] = "none",
	[API_TOOL_REQUIRED] = "required",
};

int fmt_resp_new(struct gen *g, const struct api_params *p)
{
	struct resp_out *r = calloc(1, sizeof(*r));

	if (!r)
		return -1;
	r->items = json_array();
	r->tools = p->tools_given ? json_incref(p->tools_given) : json_array();
	r->tool_ns = json_incref(p->tool_ns);
	r->tool_choice = p->tool_choice == API_TOOL_FUNCTION ?
			 json_pack("{s:s, s:s}", "type", "function", "name", p->tool_name) :
			 json_string(choice_names[p->tool_choice]);
	r->parallel = !p->one_call;
	r->summary = p->reasoning_summary;
	r->store = p->store;
	r->prev_id = p->previous_id ? strdup(p->previous_id) : NULL;
	r->input = json_incref(p->input_items);
	g->ro = r;
	if (!r->items || !r->tools || !r->tool_choice || (p->previous_id && !r->prev_id)) {
		fmt_resp_free(g);
		return -1;
	}
	return 0;
}

void fmt_resp_free(struct gen *g)
{
	struct resp_out *r = g->ro;

	if (!r)
		return;
	json_decref(r->items);
	json_decref(r->tools);
	json_decref(r->tool_choice);
	json_decref(r->tool_ns);
	json_decref(r->input);
	free(r->prev_id);
	free(r->buf);
	free(r);
	g->ro = NULL;
}

/* The Responses API's usage object. */
static json_t *usage_json(const struct gen *g)
{
	const struct engine_usage *u = &g->usage;

	return json_pack("{s:i, s:{s:i}, s:i, s:{s:i}, s:i}",
			 "input_tokens", u->prompt_tokens,
			 "input_tokens_details", "cached_tokens", u->cached_tokens,
			 "output_tokens", u->completion_tokens,
			 "output_tokens_details", "reasoning_tokens", fmt_reasoning_tokens(g),
			 "total_tokens", u->prompt_tokens + u->completion_tokens);
}

/* The response object with @status; its output the items closed so far. */
static json_t *response_obj(struct gen *g, const char *status)
{
	struct resp_out *r = g->ro;
	json_t *o = json_pack("{s:s, s:s, s:I, s:s, s:s, s:n, s:n, s:o, s:O, s:O, s:O, s:b, s:b}",
			      "id", g->id, "object", "response", "created_at",
			      (json_int_t)g->created, "status", status, "model", g->s->model_id,
			      "error", "incomplete_details", "previous_response_id",
			      r->prev_id ? json_string(r->prev_id) : json_null(),
			      "output", r->items, "tools", r->tools, "tool_choice", r->tool_choice,
			      "parallel_tool_calls", r->parallel, "store", r->store);

	if (!strcmp(status, "in_progress")) {
		json_object_set_new(o, "output", json_array());
		return o;
	}
	if (g->finish == ENGINE_FINISH_LENGTH)
		json_object_set_new(o, "incomplete_details",
				    json_pack("{s:s}", "reason", "max_output_tokens"));
	json_object_set_new(o, "usage", usage_json(g));
	json_object_set_new(o, "timings", fmt_timings(g));
	return o;
}

static int out_index(const struct gen *g)
{
	return (int)json_array_size(g->ro->items);
}

/* An event about the open item: {type, item_id, output_index, ...@extra}. */
static void item_event(struct gen *g, const char *type, json_t *extra)
{
	json_t *o = json_pack("{s:s, s:s, s:i}", "type", type, "item_id", g->ro->open_id,
			      "output_index", out_index(g));

	json_object_update(o, extra);
	json_decref(extra);
	if (g->stream)
		fmt_sse(g, type, o);
	else
		json_decref(o);
}

/* response.output_item.added / .done with @item (stolen). */
static void item_added_done(struct gen *g, bool done, json_t *item)
{
	const char *type = done ? "response.output_item.done" : "response.output_item.added";

	if (g->stream)
		fmt_sse(g, type, json_pack("{s:s, s:i, s:O}", "type", type, "output_index",
					   out_index(g), "item", item));
	if (done)
		json_array_append(g->ro->items, item);
	json_decref(item);
}

static json_t *text_part(const char *type, const char *text, size_t len)
{
	json_t *p = json_pack("{s:s, s:s%}", "type", type, "text", text, len);

	if (!strcmp(type, "output_text"))
		json_object_set_new(p, "annotations", json_array());
	return p;
}

/* The open item as an object, @done: finished (else in progress, no text yet). */
static json_t *open_item(struct gen *g, bool done, const char *status)
{
	struct resp_out *r = g->ro;
	const char *text = r->buf ? r->buf : "";
	json_t *it;

	switch (r->open) {
	case ITEM_REASONING:
		return json_pack("{s:s, s:s, s:o, s:o, s:s}", "type", "reasoning", "id", r->open_id,
				 "summary", done && r->summary ?
				 json_pack("[o]", text_part("summary_text", text, r->len)) :
				 json_array(), "content", done ?
				 json_pack("[o]", text_part("reasoning_text", text, r->len)) :
				 json_array(), "status", status);
	case ITEM_MESSAGE:
		return json_pack("{s:s, s:s, s:s, s:s, s:o}", "type", "message", "id", r->open_id,
				 "status", status, "role", "assistant", "content", done ?
				 json_pack("[o]", text_part("output_text", text, r->len)) :
				 json_array());
	default:
		it = json_pack("{s:s, s:s, s:s, s:s, s:s%, s:s}", "type", "function_call",
			       "id", r->open_id, "call_id", r->call_id, "name", r->name,
			       "arguments", done ? text : "", done ? r->len : 0, "status", status);
		if (r->ns[0])
			json_object_set_new(it, "namespace", json_string(r->ns));
		return it;
	}
}

/* A call's arguments are whole: @complete (its tag closed) and a JSON object. */
static bool args_whole(const struct resp_out *r, bool complete)
{
	json_t *v = complete && r->buf ? json_loads(r->buf, 0, NULL) : NULL;
	bool obj = json_is_object(v);

	json_decref(v);
	return obj;
}

/*
 * Close the open item: its .done events with the whole text; @complete:
 * a call's closing tag came (every call but one cut off by the end).
 */
static void close_item(struct gen *g, bool complete)
{
	struct resp_out *r = g->ro;
	const char *text = r->buf ? r->buf : "";
	const char *part = r->open == ITEM_REASONING ? "reasoning_text" : "output_text";

	if (r->open == ITEM_NONE)
		return;
	if (r->open == ITEM_CALL) {
		item_event(g, "response.function_call_arguments.done",
			   json_pack("{s:s, s:s%}", "name", r->name, "arguments", text, r->len));
		item_added_done(g, true, open_item(g, true, args_whole(r, complete) ?
						    "completed" : "incomplete"));
	} else {
		item_event(g, r->open == ITEM_REASONING ? "response.reasoning_text.done" :
			   "response.output_text.done",
			   json_pack("{s:i, s:s%}", "content_index", 0, "text", text, r->len));
		item_event(g, "response.content_part.done",
			   json_pack("{s:i, s:o}", "content_index", 0, "part",
				     text_part(part, text, r->len)));
		if (r->open == ITEM_REASONING && r->summary) {
			item_event(g, "response.reasoning_summary_text.done",
				   json_pack("{s:i, s:s%}", "summary_index", 0, "text", text, r->len));
			item_event(g, "response.reasoning_summary_part.done",
				   json_pack("{s:i, s:o}", "summary_index", 0, "part",
					     text_part("summary_text", text, r->len)));
		}
		item_added_done(g, true, open_item(g, true, "completed"));
	}
	r->open = ITEM_NONE;
	r->len = 0;
	if (r->buf)
		r->buf[0] = 0;
}

/* Open an item of @kind (closing the one before): its .added events. */
static void open_new(struct gen *g, enum item_kind kind, const struct chat_delta *d)
{
	struct resp_out *r = g->ro;

	close_item(g, true);
	r->open = kind;
	if (kind == ITEM_REASONING) {
		snprintf(r->open_id, sizeof(r->open_id), "rs_%s", g->item_id + 4);
	} else if (kind == ITEM_MESSAGE) {
		if (r->n_msg++)
			snprintf(r->open_id, sizeof(r->open_id), "%s_%d", g->item_id, r->n_msg - 1);
		else
			snprintf(r->open_id, sizeof(r->open_id), "%s", g->item_id);
	} else {
		/* The parser's "call_<n>_<i>": "fc_<n>_<i>" names the item. */
		snprintf(r->call_id, sizeof(r->call_id), "%s", d->id);
		snprintf(r->name, sizeof(r->name), "%s", d->name);
		snprintf(r->ns, sizeof(r->ns), "%s",
			 json_string_value(json_object_get(r->tool_ns, d->name)) ?: "");
		snprintf(r->open_id, sizeof(r->open_id), "fc_%s",
			 strncmp(d->id, "call_", 5) ? d->id : d->id + 5);
		r->call = d->index;
	}
	item_added_done(g, false, open_item(g, false, "in_progress"));
	if (kind != ITEM_CALL)
		item_event(g, "response.content_part.added",
			   json_pack("{s:i, s:o}", "content_index", 0, "part",
				     text_part(kind == ITEM_REASONING ? "reasoning_text" :
					       "output_text", "", 0)));
	if (kind == ITEM_REASONING && r->summary)
		item_event(g, "response.reasoning_summary_part.added",
			   json_pack("{s:i, s:o}", "summary_index", 0, "part",
				     text_part("summary_text", "", 0)));
}

/* The parser's pieces as items and their delta events. */
static void resp_piece(const struct chat_delta *d, void *user)
{
	struct gen *g = user;
	struct resp_out *r = g->ro;
	enum item_kind kind = d->kind == CHAT_DELTA_CONTENT ? ITEM_MESSAGE :
			      d->kind == CHAT_DELTA_REASONING ? ITEM_REASONING : ITEM_CALL;

	if (g->one_call && d->index > 0 && kind == ITEM_CALL)
		return;	/* parallel_tool_calls false: the first call only */
	if (d->kind == CHAT_DELTA_TOOL_BEGIN || (r->open != kind && kind != ITEM_CALL)) {
		if (kind != ITEM_CALL && !d->len)
			return;
		open_new(g, kind, d);
		if (kind == ITEM_CALL)
			return;
	}
	if (!d->len || r->open != kind)
		return;	/* arguments of a call whose TOOL_BEGIN was not ours */
	gen_append(&r->buf, &r->len, &r->cap, d->text, d->len);
	if (kind == ITEM_CALL)
		item_event(g, "response.function_call_arguments.delta",
			   json_pack("{s:s%}", "delta", d->text, d->len));
	else
		item_event(g, kind == ITEM_REASONING ? "response.reasoning_text.delta" :
			   "response.output_text.delta",
			   json_pack("{s:i, s:s%}", "content_index", 0, "delta", d->text, d->len));
	if (kind == ITEM_REASONING && r->summary)
		item_event(g, "response.reasoning_summary_text.delta",
			   json_pack("{s:i, s:s%}", "summary_index", 0, "delta", d->text, d->len));
}

void fmt_resp_start(struct gen *g)
{
	if (g->stream) {
		fmt_sse(g, "response.created", json_pack("{s:s, s:o}", "type", "response.created",
			"response", response_obj(g, "in_progress")));
		fmt_sse(g, "response.in_progress", json_pack("{s:s, s:o}", "type",
			"response.in_progress", "response", response_obj(g, "in_progress")));
	}
	if (g->prefix)
		chat_parser_feed(g->parser, g->prefix, strlen(g->prefix), resp_piece, g);
}

void fmt_resp_delta(struct gen *g, const struct engine_event *ev)
{
	enum chat_phase before;

	json_decref(fmt_take_text(g, ev));	/* logprobs: kept in g->lp only */
	before = chat_parser_phase(g->parser);
	chat_parser_feed(g->parser, ev->text, ev->len, resp_piece, g);
	fmt_count_reasoning(g, before, ev->n_ids);
}

/* Whether an item of @type is among the closed ones. */
static bool has_item(const struct resp_out *r, const char *type)
{
	json_t *it;
	size_t i;

	json_array_foreach(r->items, i, it)
		if (!strcmp(json_string_value(json_object_get(it, "type")), type))
			return true;
	return false;
}

void fmt_resp_done(struct gen *g)
{
	struct resp_out *r = g->ro;
	const struct chat_tool_call *c;
	bool failed = g->finish == ENGINE_FINISH_ERROR || g->finish == ENGINE_FINISH_CANCELLED;
	const char *ev;
	json_t *o;

	chat_parser_finish(g->parser, resp_piece, g);
	c = r->open == ITEM_CALL ? chat_parser_call(g->parser, r->call) : NULL;
	close_item(g, c && c->complete);
	if (!failed && !has_item(r, "message") && !has_item(r, "function_call")) {
		/* A reply with no call has a message, if need be empty (output_text ""). */
		open_new(g, ITEM_MESSAGE, NULL);
		close_item(g, true);
	}
	if (!failed && r->store && g->s->store) {
		/* Kept before the answer goes out: a GET right after it finds it. */
		o = response_obj(g, g->finish == ENGINE_FINISH_LENGTH ? "incomplete" : "completed");
		rstore_put(g->s->store, g->owner, g->id, r->prev_id,
			   o, r->input, time(NULL));
		json_decref(o);
	}
	if (!g->stream)
		return;
	if (failed) {
		o = response_obj(g, "failed");
		json_object_set_new(o, "error", fmt_error_obj(g));
		ev = "response.failed";
	} else {
		ev = g->finish == ENGINE_FINISH_LENGTH ? "response.incomplete" :
		     "response.completed";
		o = response_obj(g, g->finish == ENGINE_FINISH_LENGTH ? "incomplete" : "completed");
	}
	fmt_sse(g, ev, json_pack("{s:s, s:o}", "type", ev, "response", o));
}

char *fmt_resp_body(struct gen **gs, int n, size_t *len)
{
	struct gen *g = gs[0];
	json_t *o = response_obj(g, g->finish == ENGINE_FINISH_LENGTH ? "incomplete" :
				 "completed");
	char *s = json_dumps(o, JSON_COMPACT);

	(void)n;
	json_decref(o);
	*len = s ? strlen(s) : 0;
	return s;
}
