// SPDX-License-Identifier: MIT
/*
 * Structured output together with tools (jsonmatch.h, jm_compile_tools()):
 * the reply is either a document of the schema or tool calls in the JSON
 * <tool_call> form that chat.h's templates ask for (Qwen2.5/3, and the
 * generic route of chat_generic.c), which is decided by the reply's first
 * byte ('<' starts a call; no JSON value starts with it):
 *
 *   reply  := DOC | calls
 *   calls  := "<tool_call>\n" call "\n</tool_call>"
 *             ("\n<tool_call>\n" call "\n</tool_call>")*
 *   call   := "{\"name\": " NAME ", \"arguments\": " ARGS(NAME) "}"
 *
 * NAME is one of the tools' names as a JSON string; ARGS(NAME) is that
 * function's "parameters" schema when it is "strict", else any object.
 * The call's text is the exact form the templates show the model and
 * render past calls in (name first, one space after each colon and
 * comma), which is what such models write; chat_parse.c reads it back.
 * A name selects its arguments' schema as it completes (a JN_LIT with a
 * continuation per name), so any number of tools costs one reading.
 *
 * tool_choice "required" and a named function start the reply inside the
 * call (chat_render()'s reply prefix: after "<tool_call>\n", or after
 * the name and "\"arguments\": "), so the grammar starts there too and
 * offers no document; "none" passes no tools, hence the schema alone.
 */
#include "jsonmatch_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char open_first[] = "<tool_call>\n";
static const char open_next[] = "\n<tool_call>\n";
static const char close_call[] = "\n</tool_call>";
static const char name_key[] = "{\"name\": ";
static const char args_key[] = ", \"arguments\": ";

/* One build: the schema, its node count, the error. */
struct tctx {
	struct jm_schema *s;
	int n_nodes;
	char *err;
	size_t errlen;
};

static void *oom(struct tctx *c)
{
	snprintf(c->err, c->errlen, "out of memory");
	return NULL;
}

/* A literal node of @n texts (copied), without continuations. */
static struct jm_node *lit_node(struct tctx *c, const char *const *texts, int n)
{
	struct jm_node *l = jm_node_add(c->s);
	int i;

	if (!l)
		return oom(c);
	l->form = JN_LIT;
	l->lit = calloc((size_t)n, sizeof(*l->lit));
	l->lit_len = calloc((size_t)n, sizeof(*l->lit_len));
	if (!l->lit || !l->lit_len)
		return oom(c);
	for (i = 0; i < n; i++) {
		l->lit[i] = strdup(texts[i]);
		if (!l->lit[i])
			return oom(c);
		l->lit_len[i] = (uint32_t)strlen(texts[i]);
		l->n_lit++;
	}
	return l;
}

/* A sequence of @n parts (NULL parts: out of memory earlier), repeated by @rep. */
static struct jm_node *seq_node(struct tctx *c, const struct jm_node *const *parts, int n,
				const struct jm_node *rep)
{
	struct jm_node *q;
	int i;

	for (i = 0; i < n; i++)
		if (!parts[i])
			return NULL;
	q = jm_node_add(c->s);
	if (!q || !(q->seq = calloc((size_t)n, sizeof(*q->seq))))
		return oom(c);
	q->form = JN_SEQ;
	memcpy(q->seq, parts, (size_t)n * sizeof(*q->seq));
	q->n_seq = n;
	q->rep = rep;
	return q;
}

static const struct jm_node *text(struct tctx *c, const char *t)
{
	return lit_node(c, &t, 1);
}

/* Any object: the arguments of a tool that is not strict. */
static const struct jm_node *any_object(struct tctx *c)
{
	struct jm_node *o = jm_node_add(c->s);

	if (!o)
		return oom(c);
	o->form = JN_TYPED;
	o->types = JT_OBJ;
	o->addl = &jm_any;
	return o;
}

/* The function object of tools[@i] (chat shape: {"type":"function","function":{...}}). */
static const json_t *function_of(const json_t *tools, size_t i)
{
	const json_t *t = json_array_get(tools, i), *f = json_object_get(t, "function");

	return json_is_object(f) ? f : t;
}

/* The arguments of tools[@i]: its parameters when strict, else any object. */
static const struct jm_node *args_of(struct tctx *c, const json_t *tools, size_t i)
{
	const json_t *f = function_of(tools, i), *p = json_object_get(f, "parameters");
	const struct jm_node *n;
	char err[320];

	if (!json_is_true(json_object_get(f, "strict")) || !p)
		return any_object(c);
	n = jm_compile_part(c->s, p, &c->n_nodes, err, sizeof(err));
	if (!n)
		snprintf(c->err, c->errlen, "tools[%zu].function.parameters: %s", i, err);
	return n;
}

/*
 * "{\"name\": " then one of the names (tools[i] for each i with @only
 * NULL or naming it), each going on with ", \"arguments\": " ARGS "}".
 * Names come in literal nodes of at most JM_MAX_ENUM (the literal
 * frame's mask), alternatives of each other beyond that.
 */
static const struct jm_node *call_node(struct tctx *c, const json_t *tools, const char *only)
{
	const struct jm_node *parts[2], **alts;
	struct jm_node *names = NULL, *alt;
	size_t i, n = json_array_size(tools);
	int k = 0;

	alts = calloc(n / JM_MAX_ENUM + 1, sizeof(*alts));
	alt = jm_node_add(c->s);
	if (!alts || !alt) {
		free(alts);
		return oom(c);
	}
	alt->form = JN_ALT;
	alt->alt = alts;
	for (i = 0; i < n; i++) {
		const char *name = json_string_value(json_object_get(function_of(tools, i), "name"));
		const struct jm_node *tail[3];
		char *q;

		if (!name || (only && strcmp(name, only)))
			continue;
		if (!names || names->n_lit == JM_MAX_ENUM) {
			names = jm_node_add(c->s);
			if (!names)
				return oom(c);
			names->form = JN_LIT;
			names->lit = calloc(JM_MAX_ENUM, sizeof(*names->lit));
			names->lit_len = calloc(JM_MAX_ENUM, sizeof(*names->lit_len));
			names->cont = calloc(JM_MAX_ENUM, sizeof(*names->cont));
			if (!names->lit || !names->lit_len || !names->cont)
				return oom(c);
			alts[k++] = names;
			alt->n_alt = k;
		}
		q = json_dumps(json_object_get(function_of(tools, i), "name"), JSON_ENCODE_ANY);
		if (!q)
			return oom(c);
		tail[0] = text(c, args_key);
		tail[1] = args_of(c, tools, i);
		tail[2] = text(c, "}");
		names->lit[names->n_lit] = q;
		names->lit_len[names->n_lit] = (uint32_t)strlen(q);
		names->cont[names->n_lit++] = seq_node(c, tail, 3, NULL);
		if (!names->cont[names->n_lit - 1])
			return NULL;
	}
	if (!k) {
		snprintf(c->err, c->errlen, "no tool named '%.64s'", only ? only : "");
		return NULL;
	}
	parts[0] = text(c, name_key);
	parts[1] = k == 1 ? alts[0] : alt;
	return seq_node(c, parts, 2, NULL);
}

/* The tool-call part of the reply after its start @choice. */
static const struct jm_node *calls(struct tctx *c, const json_t *tools, int choice,
				   const char *name, bool one_call)
{
	const struct jm_node *call, *parts[3], *more = NULL, *args;
	struct jm_node *loop = NULL;
	size_t i;

	call = call_node(c, tools, choice == JM_TOOLS_FUNCTION ? name : NULL);
	if (!call)
		return NULL;
	if (!one_call && choice != JM_TOOLS_FUNCTION) {
		/* loop := "\n<tool_call>\n" call "\n</tool_call>", then loop again or the end. */
		parts[0] = text(c, open_next);
		parts[1] = call;
		parts[2] = text(c, close_call);
		loop = seq_node(c, parts, 3, NULL);
		if (!loop)
			return NULL;
		loop->rep = loop;
		more = loop;
	}
	switch (choice) {
	case JM_TOOLS_REQUIRED:	/* after "<tool_call>\n" */
		parts[0] = call;
		parts[1] = text(c, close_call);
		return seq_node(c, parts, 2, more);
	case JM_TOOLS_FUNCTION:	/* after the name and "\"arguments\": " */
		for (i = 0; i < json_array_size(tools); i++) {
			const char *n = json_string_value(json_object_get(function_of(tools, i), "name"));

			if (n && !strcmp(n, name))
				break;
		}
		args = args_of(c, tools, i);
		parts[0] = args;
		parts[1] = text(c, "}");
		parts[2] = text(c, close_call);
		return args ? seq_node(c, parts, 3, NULL) : NULL;
	default:
		parts[0] = text(c, open_first);
		parts[1] = call;
		parts[2] = text(c, close_call);
		return seq_node(c, parts, 3, more);
	}
}

struct jm_schema *jm_compile_tools(const json_t *doc, const json_t *tools, int choice,
				   const char *name, bool one_call, char *err, size_t errlen)
{
	struct tctx c = { .err = err, .errlen = errlen };
	const struct jm_node *d = NULL, *k;
	char dummy[1];

	if (!errlen) {
		c.err = dummy;
		c.errlen = sizeof(dummy);
	}
	c.err[0] = '\0';
	if (!json_is_array(tools) || !json_array_size(tools)) {
		snprintf(c.err, c.errlen, "no tools are given");
		return NULL;
	}
	if (choice == JM_TOOLS_FUNCTION && !name) {
		snprintf(c.err, c.errlen, "no function is named");
		return NULL;
	}
	c.s = jm_schema_new();
	if (!c.s) {
		oom(&c);
		return NULL;
	}
	if (doc && choice == JM_TOOLS_AUTO) {
		d = jm_compile_part(c.s, doc, &c.n_nodes, c.err, c.errlen);
		if (!d)
			goto fail;
	}
	k = calls(&c, tools, choice, name, one_call);
	if (!k)
		goto fail;
	if (d) {
		struct jm_node *a = jm_node_add(c.s);

		if (!a || !(a->alt = calloc(2, sizeof(*a->alt)))) {
			oom(&c);
			goto fail;
		}
		a->form = JN_ALT;
		a->alt[0] = d;
		a->alt[1] = k;
		a->n_alt = 2;
		k = a;
	}
	c.s->root = k;
	return c.s;
fail:
	if (!c.err[0])
		oom(&c);
	jm_schema_put(c.s);
	return NULL;
}
