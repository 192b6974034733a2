// SPDX-License-Identifier: MIT
/*
 * Function calling (api.h): the "tools" array and "tool_choice" of a
 * request, one validator for chat completions' nested tools and the
 * Responses API's flat ones, and the tool fields of chat messages (an
 * assistant's "tool_calls", a tool result's "tool_call_id"). Reference:
 * the OpenAI API reference (chat completions: tools, tool_choice,
 * ChatCompletionMessageToolCall; responses: FunctionTool, ToolChoiceFunction)
 * and llama-server, which takes the same fields. The deprecated "functions" /
 * "function_call" are refused with a pointer to their replacements.
 *
 * The Responses API also groups functions in namespaces ({type:
 * "namespace", name, tools: [function tools]}, as Codex CLI sends its
 * agent tools and each MCP server): the members are offered to the model
 * under their own names, and a call to one is answered with its namespace
 * (api_params.tool_ns). Tools the server cannot run or have the model
 * call (hosted ones such as web_search, and client tools called through
 * other item types such as custom or local_shell) are taken as
 * declarations and not offered; a tool_choice naming one is a 400.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_ops.h"

#define MAX_NAME 64
#define MAX_TOOLS 128	/* OpenAI's limit; also bounds the duplicate check */

/*
 * Function names: 1-64 of [A-Za-z0-9_-] as OpenAI requires, plus '.' and
 * ':' that MCP tool names use. Nothing that could close a tag or a
 * string in the prompt's tool-call forms.
 */
static bool good_name(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n > MAX_NAME)
		return false;
	for (i = 0; i < n; i++)
		if (!(s[i] >= 'a' && s[i] <= 'z') && !(s[i] >= 'A' && s[i] <= 'Z') &&
		    !(s[i] >= '0' && s[i] <= '9') && !strchr("_-.:", s[i]))
			return false;
	return true;
}

/* One function definition {name, description?, parameters?, strict?} at @where. */
static int check_function(json_t *fn, const char *where, struct api_error *e)
{
	json_t *name = json_object_get(fn, "name"), *v;
	char at[96];

	if (!json_is_object(fn))
		return api_bad(e, where, "'%s' must be an object with the function's name", where);
	snprintf(at, sizeof(at), "%s.name", where);
	if (!json_is_string(name))
		return api_bad(e, at, "'%s' is required and must be a string", at);
	if (!good_name(json_string_value(name)))
		return api_bad(e, at, "'%s' ('%.64s') must be 1 to %d letters, digits, '_', '-', '.' or ':'",
			   at, json_string_value(name), MAX_NAME);
	v = api_field(fn, "description");
	snprintf(at, sizeof(at), "%s.description", where);
	if (v && !json_is_string(v))
		return api_bad(e, at, "'%s' must be a string", at);
	v = api_field(fn, "parameters");
	snprintf(at, sizeof(at), "%s.parameters", where);
	if (v && !json_is_object(v))
		return api_bad(e, at, "'%s' must be a JSON Schema object", at);
	v = api_field(fn, "strict");
	snprintf(at, sizeof(at), "%s.strict", where);
	if (v && !json_is_boolean(v))
		return api_bad(e, at, "'%s' must be a boolean", at);
	return 0;
}

/*
 * The two shapes of a function tool: chat completions nest the function
 * ({type, function: {name, ...}}), the Responses API has it flat ({type,
 * name, ...}); tool_choice likewise ({type, function: {name}} or {type,
 * name}).
 */
struct tool_shape {
	bool flat;
	const char *form;	/* for messages: how a tool is written */
	const char *choice_form;
};

static const struct tool_shape chat_shape = {
	false, "{\"type\": \"function\", \"function\": {\"name\": ...}}",
	"{\"type\": \"function\", \"function\": {\"name\": \"...\"}}",
};
static const struct tool_shape responses_shape = {
	true, "{\"type\": \"function\", \"name\": ...}",
	"{\"type\": \"function\", \"name\": \"...\"}",
};

/* The function definition of tool @t: @t itself (flat) or its "function". */
static json_t *tool_fn(json_t *t, const struct tool_shape *sh)
{
	return sh->flat ? t : json_object_get(t, "function");
}

/*
 * Tool types of the OpenAI API that the server cannot run and the model
 * cannot call (hosted tools, and client tools called through item types
 * other than function_call): /v1/responses takes them as declarations and
 * does not offer them; chat completions refuses them.
 */
static const char *const hosted_tools[] = {
	"web_search", "web_search_preview", "web_search_preview_2025_03_11",
	"web_search_2025_08_26", "file_search", "code_interpreter", "computer",
	"computer_use", "computer_use_preview", "mcp", "image_generation", "local_shell",
	"shell", "apply_patch", "custom", "tool_search", "programmatic_tool_calling",
	"retrieval", NULL,
};

static bool hosted(const char *ty)
{
	int i;

	for (i = 0; hosted_tools[i]; i++)
		if (!strcmp(hosted_tools[i], ty))
			return true;
	return false;
}

/* What a tool entry is. */
enum tool_kind { TK_FUNCTION, TK_NAMESPACE, TK_DECLARED };

/*
 * tools[i].type at @at: "function"; on /v1/responses also "namespace" and
 * the declared-only types. Return: the kind, or -1 with @e a 400.
 */
static int check_type(json_t *t, const char *at, const struct tool_shape *sh,
		      struct api_error *e)
{
	json_t *ty = json_object_get(t, "type");
	char p[96];

	snprintf(p, sizeof(p), "%s.type", at);
	if (!json_is_string(ty))
		return api_bad(e, p, "'%s' is required and must be \"function\"", p);
	if (!strcmp(json_string_value(ty), "function"))
		return TK_FUNCTION;
	if (sh->flat && !strcmp(json_string_value(ty), "namespace"))
		return TK_NAMESPACE;
	if (sh->flat && hosted(json_string_value(ty)))
		return TK_DECLARED;
	if (hosted(json_string_value(ty)))
		return api_bad(e, p, "'%s' is '%.40s': that tool is not supported here (the server runs no hosted tools); only \"function\" tools, which the client runs",
			       p, json_string_value(ty));
	return api_bad(e, p, "'%s' is '%.40s': only \"function\" tools are supported%s", p,
		       json_string_value(ty), sh->flat ? " (and namespaces of them)" : "");
}

/**
 * struct offer - the functions offered to the model, being collected
 * @fns: their definitions in the chat shape ({type, function: {...}})
 * @at: where each came from ("tools[2]", "tools[4].tools[1]"), for errors
 * @ns: {name: namespace} of the namespace members (NULL: none yet)
 * @n: entries of @fns
 */
struct offer {
	json_t *fns;
	char at[MAX_TOOLS][32];
	json_t *ns;
	int n;
};

/* Function @fn (flat or nested per @sh) at @where joins the offer; names unique. */
static int offer_fn(struct offer *o, json_t *fn, const char *where, const char *ns,
		    const struct tool_shape *sh, struct api_error *e)
{
	json_t *def = json_deep_copy(sh->flat ? fn : json_object_get(fn, "function"));
	const char *name = json_string_value(json_object_get(def, "name"));
	char at[96];
	int k;

	if (!def)
		return api_bad(e, "tools", "out of memory");
	snprintf(at, sizeof(at), sh->flat ? "%s.name" : "%s.function.name", where);
	for (k = 0; k < o->n; k++) {
		const char *other = json_string_value(json_object_get(json_object_get(
					json_array_get(o->fns, k), "function"), "name"));

		if (strcmp(other, name))
			continue;
		if (ns)
			api_bad(e, at, "'%s' is '%s', as '%s' is: the members of a namespace are offered to the model under their own names, so they must differ from every other function's",
				at, name, o->at[k]);
		else
			api_bad(e, at, "'%s' and '%s' are both named '%s'", o->at[k], where, name);
		json_decref(def);
		return -1;
	}
	if (o->n >= MAX_TOOLS) {
		json_decref(def);
		return api_bad(e, "tools", "'tools' offers more than %d functions (namespace members included); at most %d are supported (as OpenAI)",
			       MAX_TOOLS, MAX_TOOLS);
	}
	if (sh->flat)
		json_object_del(def, "type");
	snprintf(o->at[o->n], sizeof(o->at[o->n]), "%s", where);
	json_array_append_new(o->fns, json_pack("{s:s, s:o}", "type", "function", "function", def));
	o->n++;
	if (!ns)
		return 0;
	if (!o->ns)
		o->ns = json_object();
	json_object_set_new(o->ns, name, json_string(ns));
	return 0;
}

/*
 * A namespace tool at @at: {type, name, description?, tools: [function
 * tools]}; its functions join the offer, its declared-only members
 * (custom tools) do not.
 */
static int offer_namespace(struct offer *o, json_t *t, const char *at, const struct tool_shape *sh,
			   struct api_error *e)
{
	json_t *name = json_object_get(t, "name"), *members = json_object_get(t, "tools"), *v, *m;
	char p[96], mat[64];
	size_t k;
	int kind;

	snprintf(p, sizeof(p), "%s.name", at);
	if (!json_is_string(name) || !good_name(json_string_value(name)))
		return api_bad(e, p, "'%s' is required: the namespace's name, 1 to %d letters, digits, '_', '-', '.' or ':'",
			       p, MAX_NAME);
	v = api_field(t, "description");
	snprintf(p, sizeof(p), "%s.description", at);
	if (v && !json_is_string(v))
		return api_bad(e, p, "'%s' must be a string", p);
	snprintf(p, sizeof(p), "%s.tools", at);
	if (!json_is_array(members))
		return api_bad(e, p, "'%s' is required: an array of the namespace's function tools", p);
	json_array_foreach(members, k, m) {
		snprintf(mat, sizeof(mat), "%s.tools[%zu]", at, k);
		if (!json_is_object(m))
			return api_bad(e, mat, "'%s' must be an object", mat);
		kind = check_type(m, mat, sh, e);
		if (kind < 0)
			return -1;
		if (kind == TK_NAMESPACE) {
			snprintf(p, sizeof(p), "%s.type", mat);
			return api_bad(e, p, "'%s' is 'namespace': namespaces do not nest", p);
		}
		if (kind == TK_DECLARED)
			continue;
		if (check_function(m, mat, e) ||
		    offer_fn(o, m, mat, json_string_value(name), sh, e))
			return -1;
	}
	return 0;
}

/*
 * "tools": an array of function tools in shape @sh (and, flat, namespaces
 * and declared-only tools) into @o; names unique.
 */
static int check_tools(json_t *tools, const struct tool_shape *sh, struct offer *o,
		       struct api_error *e)
{
	json_t *t;
	size_t i;
	char at[32], fn_at[80];
	int kind;

	if (!json_is_array(tools))
		return api_bad(e, "tools", "'tools' must be an array of %s objects", sh->form);
	if (json_array_size(tools) > MAX_TOOLS)
		return api_bad(e, "tools", "'tools' has %zu entries; at most %d are supported (as OpenAI)",
			       json_array_size(tools), MAX_TOOLS);
	json_array_foreach(tools, i, t) {
		snprintf(at, sizeof(at), "tools[%zu]", i);
		if (!json_is_object(t))
			return api_bad(e, at, "'%s' must be an object", at);
		kind = check_type(t, at, sh, e);
		if (kind < 0)
			return -1;
		if (kind == TK_DECLARED)
			continue;
		if (kind == TK_NAMESPACE) {
			if (offer_namespace(o, t, at, sh, e))
				return -1;
			continue;
		}
		snprintf(fn_at, sizeof(fn_at), "%s.name", at);
		if (sh->flat && json_object_get(t, "function") && !json_object_get(t, "name"))
			return api_bad(e, fn_at, "'%s' is required: tools of /v1/responses are flat, %s (not nested under 'function' as in chat completions)",
				       fn_at, sh->form);
		snprintf(fn_at, sizeof(fn_at), sh->flat ? "%s" : "%s.function", at);
		if (check_function(tool_fn(t, sh), fn_at, e) || offer_fn(o, t, at, NULL, sh, e))
			return -1;
	}
	return 0;
}

static bool has_tool(const struct offer *o, const char *name)
{
	int i;

	for (i = 0; i < o->n; i++)
		if (!strcmp(json_string_value(json_object_get(json_object_get(
				json_array_get(o->fns, i), "function"), "name")), name))
			return true;
	return false;
}

/* A tool_choice object naming one function ({type: "function", ...}). */
static int parse_choice_obj(json_t *c, const struct offer *o, const struct tool_shape *sh,
			    struct api_params *p, struct api_error *e)
{
	json_t *ty = json_object_get(c, "type");
	json_t *name = json_object_get(sh->flat ? c : json_object_get(c, "function"), "name");

	if (json_is_string(ty) && sh->flat && hosted(json_string_value(ty)))
		return api_bad(e, "tool_choice", "'tool_choice.type' is '%.40s': the server takes that tool as a declaration only (it cannot run it, and the model cannot call it); it can force a function: %s",
			       json_string_value(ty), sh->choice_form);
	if (!json_is_string(ty) || strcmp(json_string_value(ty), "function"))
		return api_bad(e, "tool_choice", "'tool_choice.type' is '%.40s': it must be \"function\" (%s); other tool choices are not supported",
			       json_is_string(ty) ? json_string_value(ty) : "missing", sh->choice_form);
	if (!json_is_string(name))
		return api_bad(e, "tool_choice", "'tool_choice' must name a function: %s",
			       sh->choice_form);
	if (!has_tool(o, json_string_value(name)))
		return api_bad(e, "tool_choice", "'tool_choice' names the function '%.64s', which is not in 'tools'",
			   json_string_value(name));
	p->tool_choice = API_TOOL_FUNCTION;
	p->tool_name = strdup(json_string_value(name));
	if (!p->tool_name)
		return api_bad(e, "tool_choice", "out of memory");
	return 0;
}

/* tool_choice into @p: "auto", "none", "required" or one named function. */
static int parse_choice(json_t *c, const struct offer *o, const struct tool_shape *sh,
			struct api_params *p, struct api_error *e)
{
	if (json_is_string(c)) {
		const char *s = json_string_value(c);

		if (!strcmp(s, "auto"))
			p->tool_choice = API_TOOL_AUTO;
		else if (!strcmp(s, "none"))
			p->tool_choice = API_TOOL_NONE;
		else if (!strcmp(s, "required"))
			p->tool_choice = API_TOOL_REQUIRED;
		else
			return api_bad(e, "tool_choice", "'tool_choice' is '%.32s': it must be \"auto\", \"none\", \"required\" or %s",
				   s, sh->choice_form);
	} else if (json_is_object(c)) {
		if (parse_choice_obj(c, o, sh, p, e))
			return -1;
	} else {
		return api_bad(e, "tool_choice", "'tool_choice' must be a string or an object");
	}
	if (p->tool_choice == API_TOOL_REQUIRED && !o->n)
		return api_bad(e, "tool_choice", "'tool_choice' is \"required\" but no tools are given%s",
			       sh->flat ? " that the model can call (functions)" : "");
	return 0;
}

/*
 * tools, tool_choice and parallel_tool_calls of @o in shape @sh. The
 * offered functions reach the chat template and the reply parser as the
 * chat completions array ({type, function: {...}}), whatever shape came
 * in; on /v1/responses the request's tools are kept as sent (echoed in
 * the response) with the namespace of each member function.
 */
static int parse_tools(json_t *o, const struct tool_shape *sh, struct api_params *p,
		       struct api_error *e)
{
	json_t *tools = api_field(o, "tools"), *c = api_field(o, "tool_choice"), *ptc;
	struct offer *of = calloc(1, sizeof(*of));
	int ret = -1;

	if (!of || !(of->fns = json_array())) {
		free(of);
		api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
		return -1;
	}
	ptc = api_field(o, "parallel_tool_calls");
	if (ptc && !json_is_boolean(ptc)) {
		api_bad(e, "parallel_tool_calls", "'parallel_tool_calls' must be a boolean");
		goto out;
	}
	p->one_call = ptc && json_is_false(ptc);
	if (tools && check_tools(tools, sh, of, e))
		goto out;
	if (c && parse_choice(c, of, sh, p, e))
		goto out;
	ret = 0;
	if (sh->flat && tools)
		p->tools_given = json_incref(tools);
	if (of->n && p->tool_choice != API_TOOL_NONE) {
		p->tools_json = json_dumps(of->fns, JSON_COMPACT);
		p->tool_ns = json_incref(of->ns);
		if (!p->tools_json) {
			api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
			ret = -1;
		}
	}
out:
	json_decref(of->fns);
	json_decref(of->ns);
	free(of);
	return ret;
}

int api_parse_tools(json_t *o, struct api_params *p, struct api_error *e)
{
	if (api_field(o, "functions") || api_field(o, "function_call"))
		return api_bad(e, api_field(o, "functions") ? "functions" : "function_call",
			   "'functions' and 'function_call' are deprecated and not supported: use 'tools' and 'tool_choice'");
	return parse_tools(o, &chat_shape, p, e);
}

int api_parse_response_tools(json_t *o, struct api_params *p, struct api_error *e)
{
	return parse_tools(o, &responses_shape, p, e);
}

/* One entry of an assistant's tool_calls: {id, type: "function", function: {name, arguments}}. */
static int parse_call(json_t *c, const char *where, struct api_tool_call *out, struct api_error *e)
{
	json_t *fn = json_object_get(c, "function"), *id, *ty, *name, *args;

	if (!json_is_object(c))
		return api_bad(e, where, "'%s' must be an object", where);
	id = api_field(c, "id");
	ty = api_field(c, "type");
	if ((id && !json_is_string(id)) ||
	    (ty && (!json_is_string(ty) || strcmp(json_string_value(ty), "function"))))
		return api_bad(e, where, "'%s' must have a string 'id' and the type \"function\"", where);
	name = json_object_get(fn, "name");
	if (!json_is_object(fn) || !json_is_string(name))
		return api_bad(e, where, "'%s.function' must have the function's 'name' as a string", where);
	args = api_field(fn, "arguments");
	if (args && !json_is_string(args) && !json_is_object(args))
		return api_bad(e, where, "'%s.function.arguments' must be a string holding a JSON object",
			   where);
	out->id = strdup(id ? json_string_value(id) : "");
	out->name = strdup(json_string_value(name));
	out->arguments = !args ? strdup("{}") : json_is_string(args) ?
			 strdup(json_string_value(args)) : json_dumps(args, JSON_COMPACT);
	if (!out->id || !out->name || !out->arguments) {
		api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
		return -1;
	}
	return 0;
}

static int parse_calls(json_t *m, const char *where, struct api_msg *out, struct api_error *e)
{
	json_t *tc = api_field(m, "tool_calls"), *c;
	char at[96];
	size_t i;

	if (!tc)
		return 0;
	snprintf(at, sizeof(at), "%s.tool_calls", where);
	if (!json_is_array(tc))
		return api_bad(e, at, "'%s' must be an array", at);
	/* As many as tools may be offered; also bounds the tool_call_id checks. */
	if (json_array_size(tc) > MAX_TOOLS)
		return api_bad(e, at, "'%s' has %zu calls; at most %d are supported", at,
			       json_array_size(tc), MAX_TOOLS);
	out->calls = calloc(json_array_size(tc) + 1, sizeof(*out->calls));
	if (!out->calls) {
		api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
		return -1;
	}
	json_array_foreach(tc, i, c) {
		snprintf(at, sizeof(at), "%s.tool_calls[%zu]", where, i);
		out->n_calls++;
		if (parse_call(c, at, &out->calls[i], e))
			return -1;
	}
	return 0;
}

int api_parse_tool_msg(json_t *m, const char *where, struct api_msg *out, struct api_error *e)
{
	json_t *id = api_field(m, "tool_call_id"), *name = api_field(m, "name"), *rs;
	char at[96];

	snprintf(at, sizeof(at), "%s.name", where);
	if (name && !json_is_string(name))
		return api_bad(e, at, "'%s' must be a string", at);
	if (!strcmp(out->role, "assistant")) {
		rs = api_field(m, "reasoning_content");
		snprintf(at, sizeof(at), "%s.reasoning_content", where);
		if (rs && !json_is_string(rs))
			return api_bad(e, at, "'%s' must be a string", at);
		if (rs && !(out->reasoning = strdup(json_string_value(rs))))
			return api_bad(e, where, "out of memory");
		return parse_calls(m, where, out, e);
	}
	if (strcmp(out->role, "tool"))
		return 0;
	snprintf(at, sizeof(at), "%s.tool_call_id", where);
	if (id && !json_is_string(id))
		return api_bad(e, at, "'%s' must be a string", at);
	if ((id && !(out->tool_call_id = strdup(json_string_value(id)))) ||
	    (name && !(out->name = strdup(json_string_value(name)))))
		return api_bad(e, where, "out of memory");
	return 0;
}

/* Whether call @id was already answered by a tool message in [from, to). */
static bool answered(const struct api_params *p, int from, int to, const char *id)
{
	int i;

	for (i = from; i < to; i++)
		if (p->msgs[i].tool_call_id && !strcmp(p->msgs[i].tool_call_id, id))
			return true;
	return false;
}

int api_check_tool_ids(const struct api_params *p, struct api_error *e)
{
	const struct api_ops *ops = api_ops_of(p->kind);
	bool resp = ops->items;
	const char *list = ops->prompt_param, *key = ops->call_id_param;
	int i, k, last = -1;

	for (i = 0; i < p->n_msgs; i++) {
		const struct api_msg *m = &p->msgs[i];
		char at[64];

		if (m->n_calls) {
			last = i;
			continue;
		}
		if (strcmp(m->role, "tool") || !m->tool_call_id)
			continue;
		snprintf(at, sizeof(at), "%s[%d].%s", list, m->item, key);
		if (last < 0 && !resp)
			continue;	/* chat_render() refuses a result with no call before */
		if (last < 0)
			return api_bad(e, at, "'%s' is '%.64s', but no function_call item comes before it",
				       at, m->tool_call_id);
		for (k = 0; k < p->msgs[last].n_calls; k++)
			if (!strcmp(p->msgs[last].calls[k].id, m->tool_call_id))
				break;
		if (k == p->msgs[last].n_calls && resp)
			return api_bad(e, at, "'%s' is '%.64s', which is not the call_id of a function_call of the assistant turn before it (from input[%d])",
				       at, m->tool_call_id, p->msgs[last].item);
		if (k == p->msgs[last].n_calls)
			return api_bad(e, at, "'%s' is '%.64s', which is not the id of a call of messages[%d]",
				       at, m->tool_call_id, last);
		if (answered(p, last + 1, i, m->tool_call_id))
			return api_bad(e, at, "'%s': call '%.64s' was answered already", at,
				       m->tool_call_id);
	}
	return 0;
}
