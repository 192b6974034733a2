/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by chat_detect.c, chat_render.c, chat_json.c and
 * chat_parse.c (not a public header; the API is chat.h).
 */
#ifndef RK_LLM_CHAT_IMPL_H
#define RK_LLM_CHAT_IMPL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "chat.h"

/* llama2 / mistral sub-variants (struct chat_template.variant). */
enum {
	CHAT_V_LLAMA2, CHAT_V_LLAMA2_SYS, CHAT_V_LLAMA2_SYS_BOS, CHAT_V_LLAMA2_SYS_STRIP,
	CHAT_V_MISTRAL_V1, CHAT_V_MISTRAL_V3, CHAT_V_MISTRAL_V3_TEKKEN, CHAT_V_MISTRAL_V7,
	CHAT_V_MISTRAL_V7_TEKKEN,
};

/**
 * struct sbuf - a growing string with the template's own ranges marked
 * @p, @len, @cap: the bytes (always NUL-terminated when @p is set)
 * @sp, @n_sp, @cap_sp: template ranges, adjacent ones merged
 * @oom: an allocation failed; everything after is dropped
 */
struct sbuf {
	char *p;
	size_t len, cap;
	struct tok_span *sp;
	size_t n_sp, cap_sp;
	bool oom;
};

/* Append @n bytes of template text (special tokens allowed there). */
void sb_tmpl(struct sbuf *b, const char *s, size_t n);
/* Append @n bytes of content (plain text). */
void sb_text(struct sbuf *b, const char *s, size_t n);
static inline void sb_tmpls(struct sbuf *b, const char *s)
{
	sb_tmpl(b, s, strlen(s));
}
static inline void sb_texts(struct sbuf *b, const char *s)
{
	if (s)
		sb_text(b, s, strlen(s));
}

/*
 * chat_json_dump() - @v as Python's json.dumps(v, ensure_ascii=False)
 * writes it (what Jinja's tojson gives in Hugging Face chat templates):
 * ", " and ": " separators, keys in their order, non-ASCII kept, floats
 * in shortest round-trip form. Appended to @b as content.
 */
void chat_json_dump(struct sbuf *b, const json_t *v);
/* Python's str() of a JSON scalar (Jinja's |string): True, None, 1.5, text. */
void chat_json_str(struct sbuf *b, const json_t *v);

/*
 * chat_json_call() - call @c in the JSON form, as Qwen2.5/3's templates
 * write it: <tool_call>\n{"name": N, "arguments": A}\n</tool_call>, A
 * dumped as tojson does (verbatim when it is not JSON, "{}" when empty).
 * The markup is template text with @tags_tmpl (a template's own tool
 * format), content otherwise (the generic route, chat_generic.c).
 */
void chat_json_call(struct sbuf *b, const struct chat_tool_call *c, bool tags_tmpl);

/**
 * struct chat_generic - a conversation rewritten for a template without a
 * tool format (chat_generic.c)
 * @m, @n: the messages: no tool calls, no "tool" role
 * @own, @n_own: the strings made for them (freed by chat_generic_free())
 */
struct chat_generic {
	struct chat_msg *m;
	int n;
	char **own;
	int n_own;
};

/*
 * chat_generic_needed() - @ct has no tool format and the conversation
 * uses tools (@tools offered, an assistant call or a tool result).
 */
bool chat_generic_needed(const struct chat_template *ct, const struct chat_msg *m, int n,
			 bool tools);

/*
 * chat_generic_rewrite() - @m[0..@n) with the tool list (@tools, a JSON
 * array, or NULL) in the system message, calls written into the
 * assistant's content in the JSON form and consecutive tool results
 * merged into one user message. The other messages are shared with @m.
 * Return: 0 or -ENOMEM (@g zeroed).
 */
int chat_generic_rewrite(const struct chat_msg *m, int n, const json_t *tools,
			 struct chat_generic *g);
void chat_generic_free(struct chat_generic *g);

#endif
