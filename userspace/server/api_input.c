// SPDX-License-Identifier: MIT
/*
 * The "input" items of /v1/responses (api.h: api_parse_input()) as the
 * chat messages they stand for, so that the template renders a Responses
 * conversation exactly as the same conversation in chat completions:
 *   - a message item ({"type": "message"} or untyped {role, content}):
 *     a message of that role (developer = system);
 *   - function_call items: the calls of an assistant message (one turn:
 *     consecutive calls, and the assistant message item just before them,
 *     the text the model wrote with its calls); the "namespace" of a
 *     namespace member's call is taken and not rendered (the model was
 *     offered the member under its own name);
 *   - a function_call_output: a tool message answering call_id;
 *   - a reasoning item (from a previous response passed back): the
 *     reasoning_content of the assistant turn that follows it (its
 *     reasoning_text content, else its summary texts); the template
 *     decides whether to render it (Qwen3 keeps the reasoning after the
 *     last user message). encrypted_content is ignored.
 * Reference: the OpenAI API reference (responses: ResponseInputItem) and
 * the `openai` npm package's ResponseInputItem types.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

#define MAX_CALLS 128	/* calls in one assistant turn, as for chat's tool_calls */

/**
 * struct input - the conversion's state
 * @p: the request, whose msgs array grows
 * @reasoning: text of a reasoning item waiting for its assistant turn, or
 *	NULL
 */
struct input {
	struct api_params *p;
	char *reasoning;
};

static int oom(struct api_error *e)
{
	api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
	return -1;
}

/* A new message of @role from item @i; the pending reasoning goes to an assistant. */
static struct api_msg *new_msg(struct input *in, const char *role, int i)
{
	struct api_msg *m = &in->p->msgs[in->p->n_msgs++];

	m->role = role;
	m->item = i - in->p->n_chain;	/* as the client numbers its input */
	if (!strcmp(role, "assistant")) {
		m->reasoning = in->reasoning;
		in->reasoning = NULL;
	}
	return m;
}

/* A string field @key of item @it at @where; -1 (400) when absent or not a string. */
static const char *need_string(json_t *it, const char *key, const char *where,
			       struct api_error *e)
{
	json_t *v = api_field(it, key);
	char at[96];

	snprintf(at, sizeof(at), "%s.%s", where, key);
	if (!json_is_string(v)) {
		api_bad(e, at, "'%s' is required and must be a string", at);
		return NULL;
	}
	return json_string_value(v);
}

static const char *role_of(const char *r)
{
	if (!strcmp(r, "system") || !strcmp(r, "developer"))
		return "system";
	if (!strcmp(r, "user") || !strcmp(r, "assistant"))
		return r[0] == 'u' ? "user" : "assistant";
	return NULL;
}

static int message(struct input *in, json_t *it, int i, const char *where, struct api_error *e)
{
	json_t *role = json_object_get(it, "role");
	const char *r;
	char at[96];

	snprintf(at, sizeof(at), "%s.role", where);
	if (!json_is_string(role))
		return api_bad(e, at, "'%s' must be a string", at);
	r = role_of(json_string_value(role));
	if (!r)
		return api_bad(e, at, "'%s' is '%.32s': roles are system, developer, user and assistant (tool results are function_call_output items)",
			       at, json_string_value(role));
	snprintf(at, sizeof(at), "%s.content", where);
	return api_parse_content(api_field(it, "content"), at, "input_text",
				 &new_msg(in, r, i)->content, e);
}

/*
 * The assistant turn a function_call at item @i joins: the message before
 * it when that is the assistant's (its text or earlier calls), else a new
 * one.
 */
static struct api_msg *call_turn(struct input *in, int i)
{
	struct api_params *p = in->p;
	struct api_msg *m = p->n_msgs ? &p->msgs[p->n_msgs - 1] : NULL;

	if (m && m->role && !strcmp(m->role, "assistant") && !in->reasoning)
		return m;
	m = new_msg(in, "assistant", i);
	m->content = strdup("");
	return m->content ? m : NULL;
}

static int function_call(struct input *in, json_t *it, int i, const char *where,
			 struct api_error *e)
{
	const char *id, *name;
	json_t *args = api_field(it, "arguments");
	struct api_tool_call *c, *grown;
	struct api_msg *m;
	char at[96];

	id = need_string(it, "call_id", where, e);
	name = id ? need_string(it, "name", where, e) : NULL;
	if (!name)
		return -1;
	snprintf(at, sizeof(at), "%s.arguments", where);
	if (!json_is_string(args))
		return api_bad(e, at, "'%s' is required and must be a string holding a JSON object",
			       at);
	/* A namespace member's call: the model saw (and wrote) its own name. */
	snprintf(at, sizeof(at), "%s.namespace", where);
	if (api_field(it, "namespace") && !json_is_string(api_field(it, "namespace")))
		return api_bad(e, at, "'%s' must be a string (the namespace tool of the function)", at);
	m = call_turn(in, i);
	if (!m)
		return oom(e);
	if (m->n_calls >= MAX_CALLS)
		return api_bad(e, where, "'%s' is call %d of one assistant turn; at most %d are supported",
			       where, m->n_calls + 1, MAX_CALLS);
	grown = realloc(m->calls, (m->n_calls + 1) * sizeof(*m->calls));
	if (!grown)
		return oom(e);
	m->calls = grown;
	c = &m->calls[m->n_calls++];
	c->id = strdup(id);
	c->name = strdup(name);
	c->arguments = strdup(json_string_value(args));
	return c->id && c->name && c->arguments ? 0 : oom(e);
}

/* The function of call @id in the nearest assistant turn with calls, or NULL. */
static const char *call_name(const struct api_params *p, const char *id)
{
	int i, k;

	for (i = p->n_msgs - 1; i >= 0; i--) {
		if (!p->msgs[i].n_calls)
			continue;
		for (k = 0; k < p->msgs[i].n_calls; k++)
			if (!strcmp(p->msgs[i].calls[k].id, id))
				return p->msgs[i].calls[k].name;
		return NULL;
	}
	return NULL;
}

static int call_output(struct input *in, json_t *it, int i, const char *where,
		       struct api_error *e)
{
	const char *id = need_string(it, "call_id", where, e), *fn;
	struct api_msg *m;
	char at[96];

	if (!id)
		return -1;
	snprintf(at, sizeof(at), "%s.output", where);
	if (!api_field(it, "output"))
		return api_bad(e, at, "'%s' is required: a string or an array of input_text parts", at);
	fn = call_name(in->p, id);
	free(in->reasoning);	/* reasoning belongs to the assistant's turn */
	in->reasoning = NULL;
	m = new_msg(in, "tool", i);
	m->tool_call_id = strdup(id);
	m->name = fn ? strdup(fn) : NULL;
	if (!m->tool_call_id || (fn && !m->name))
		return oom(e);
	return api_parse_content(api_field(it, "output"), at, "input_text", &m->content, e);
}

/* The texts of @arr (a reasoning item's content or summary) joined by "\n\n". */
static int join_texts(json_t *arr, const char *where, char **out, struct api_error *e)
{
	size_t i, n = 0;
	json_t *part;
	char *s;

	if (arr && !json_is_array(arr))
		return api_bad(e, where, "'%s' must be an array of text parts", where);
	json_array_foreach(arr, i, part) {
		json_t *tx = json_object_get(part, "text");

		if (!json_is_string(tx))
			return api_bad(e, where, "'%s[%zu].text' must be a string", where, i);
		n += json_string_length(tx) + 2;
	}
	s = calloc(1, n + 1);
	if (!s)
		return oom(e);
	json_array_foreach(arr, i, part) {
		if (i)
			strcat(s, "\n\n");
		strcat(s, json_string_value(json_object_get(part, "text")));
	}
	*out = s;
	return 0;
}

static int reasoning(struct input *in, json_t *it, const char *where, struct api_error *e)
{
	json_t *content = api_field(it, "content"), *summary = api_field(it, "summary");
	char at[96], *text = NULL;
	bool use_content = json_array_size(content) > 0;

	snprintf(at, sizeof(at), "%s.%s", where, use_content ? "content" : "summary");
	if (join_texts(use_content ? content : summary, at, &text, e))
		return -1;
	free(in->reasoning);
	in->reasoning = *text ? text : NULL;
	if (!*text)
		free(text);
	return 0;
}

/* Item @i of "input" by its type. */
static int item(struct input *in, json_t *it, int i, struct api_error *e)
{
	json_t *ty;
	const char *t;
	char where[48], at[64];

	snprintf(where, sizeof(where), "input[%d]", i - in->p->n_chain);
	if (!json_is_object(it))
		return api_bad(e, where, "'%s' must be an object", where);
	ty = api_field(it, "type");
	snprintf(at, sizeof(at), "%s.type", where);
	if (ty && !json_is_string(ty))
		return api_bad(e, at, "'%s' must be a string", at);
	t = ty ? json_string_value(ty) : "message";
	if (!strcmp(t, "message"))
		return message(in, it, i, where, e);
	if (!strcmp(t, "function_call"))
		return function_call(in, it, i, where, e);
	if (!strcmp(t, "function_call_output"))
		return call_output(in, it, i, where, e);
	if (!strcmp(t, "reasoning"))
		return reasoning(in, it, where, e);
	return api_bad(e, at, "'%s' is '%.40s': the items supported are message, function_call, function_call_output and reasoning",
		       at, t);
}

int api_parse_input(json_t *arr, int n_pre, struct api_params *p, struct api_error *e)
{
	struct input in = { .p = p };
	json_t *it;
	size_t i;
	int ret = 0;

	p->msgs = calloc(json_array_size(arr) + n_pre + 1, sizeof(*p->msgs));
	if (!p->msgs)
		return oom(e);
	p->n_msgs = n_pre;
	json_array_foreach(arr, i, it) {
		ret = item(&in, it, (int)i, e);
		if (ret)
			break;
	}
	free(in.reasoning);	/* a trailing reasoning item: nothing follows to think for */
	if (!ret && p->n_msgs == n_pre)
		return api_bad(e, "input", "'input' has no message, function_call or function_call_output item");
	return ret;
}
