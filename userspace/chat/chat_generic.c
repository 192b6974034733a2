// SPDX-License-Identifier: MIT
/*
 * Tool calls for templates that have no tool format of their own (chat.h:
 * CHAT_TOOLS_NONE: plain, llama2/mistral, llama3, a chatml without Qwen's
 * tool prompt). The conversation is rewritten into one the family's
 * renderer already knows: the tool list goes into the system message with
 * an instruction to answer in the JSON form of CHAT_TOOLS_JSON, the
 * assistant's earlier calls become that form in its content, and tool
 * results become user messages wrapped in <tool_response>. The reply is
 * then parsed in the JSON form (chat_parser_new()). This is the role
 * llama.cpp's "generic" chat format plays for such templates
 * (common/chat.cpp), in the <tool_call> notation Qwen and Hermes models
 * were trained on.
 */
#include "chat_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char tool_intro[] =
	"# Tools\n\n"
	"You can call functions to help with the user's request. They are listed here, one JSON\n"
	"schema a line:\n<tools>";
static const char tool_rules[] =
	"\n</tools>\n\n"
	"To call a function, write a JSON object with its name and arguments between\n"
	"<tool_call> and </tool_call>, one call a block:\n"
	"<tool_call>\n{\"name\": <function-name>, \"arguments\": <arguments-object>}\n</tool_call>\n"
	"The results come back in <tool_response> blocks.";

bool chat_generic_needed(const struct chat_template *ct, const struct chat_msg *m, int n,
			 bool tools)
{
	int i;

	if (ct->tools != CHAT_TOOLS_NONE)
		return false;
	for (i = 0; i < n && !tools; i++)
		tools = m[i].n_tool_calls || !strcmp(m[i].role, "tool");
	return tools;
}

/* Keep @b's bytes as a message string owned by @g; NULL when out of memory. */
static char *take(struct chat_generic *g, struct sbuf *b)
{
	char *s = b->oom ? NULL : b->p;

	free(b->sp);
	if (!s) {
		free(b->p);
		return NULL;
	}
	if (!b->p) {
		s = strdup("");
		if (!s)
			return NULL;
	}
	g->own[g->n_own++] = s;
	memset(b, 0, sizeof(*b));
	return s;
}

static void put_tools(struct sbuf *b, const char *sys, const json_t *tools)
{
	size_t i;

	if (sys && *sys) {
		sb_texts(b, sys);
		sb_texts(b, "\n\n");
	}
	sb_texts(b, tool_intro);
	for (i = 0; i < json_array_size(tools); i++) {
		sb_texts(b, "\n");
		chat_json_dump(b, json_array_get(tools, i));
	}
	sb_texts(b, tool_rules);
}

/* The assistant's content followed by its calls in the JSON form. */
static void put_calls(struct sbuf *b, const struct chat_msg *m)
{
	int k;

	sb_texts(b, m->content);
	for (k = 0; k < m->n_tool_calls; k++) {
		if (b->len)
			sb_texts(b, "\n");
		chat_json_call(b, &m->tool_calls[k], false);
	}
}

/* Tool results from @i on, merged into one user message; returns the next index. */
static int put_results(struct sbuf *b, const struct chat_msg *m, int n, int i)
{
	for (; i < n && !strcmp(m[i].role, "tool"); i++) {
		if (b->len)
			sb_texts(b, "\n");
		sb_texts(b, "<tool_response>\n");
		sb_texts(b, m[i].content);
		sb_texts(b, "\n</tool_response>");
	}
	return i;
}

int chat_generic_rewrite(const struct chat_msg *m, int n, const json_t *tools,
			 struct chat_generic *g)
{
	struct sbuf b = { 0 };
	int i = 0, k = 0;

	memset(g, 0, sizeof(*g));
	g->m = calloc((size_t)n + 1, sizeof(*g->m));
	g->own = calloc((size_t)n + 1, sizeof(*g->own));
	if (!g->m || !g->own)
		goto oom;
	if (tools) {
		bool sys = !strcmp(m[0].role, "system") || !strcmp(m[0].role, "developer");

		put_tools(&b, sys ? m[0].content : NULL, tools);
		g->m[k].role = "system";
		g->m[k].content = take(g, &b);
		if (!g->m[k++].content)
			goto oom;
		i = sys;
	}
	while (i < n) {
		if (!strcmp(m[i].role, "tool")) {
			i = put_results(&b, m, n, i);
			g->m[k].role = "user";
		} else if (m[i].n_tool_calls) {
			put_calls(&b, &m[i]);
			g->m[k].role = "assistant";
			g->m[k].reasoning = m[i].reasoning;
			i++;
		} else {
			g->m[k++] = m[i++];
			continue;
		}
		g->m[k].content = take(g, &b);
		if (!g->m[k++].content)
			goto oom;
	}
	g->n = k;
	return 0;
oom:
	chat_generic_free(g);
	return -ENOMEM;
}

void chat_generic_free(struct chat_generic *g)
{
	int i;

	for (i = 0; g->own && i < g->n_own; i++)
		free(g->own[i]);
	free(g->own);
	free(g->m);
	memset(g, 0, sizeof(*g));
}
