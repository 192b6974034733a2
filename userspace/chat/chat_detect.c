// SPDX-License-Identifier: MIT
/*
 * Recognising a chat template (chat.h): the family by its markers, as
 * llama.cpp's llm_chat_detect_template (src/llama-chat.cpp) does, and the
 * texts a Qwen or Llama 3.1 template adds (default system prompt, tool
 * prompt, knowledge-date header) read from the template's string literals.
 */
#include "chat_impl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The Jinja string literals of a template, unescaped, in order. */
struct lits {
	char **s;
	int n, cap;
};

static void lits_free(struct lits *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		free(l->s[i]);
	free(l->s);
}

static int lits_add(struct lits *l, const char *s, size_t n)
{
	char *c, **ns;
	size_t i, o = 0;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		ns = realloc(l->s, l->cap * sizeof(*ns));
		if (!ns)
			return -1;
		l->s = ns;
	}
	c = malloc(n + 1);
	if (!c)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n) {
			i++;
			c[o++] = s[i] == 'n' ? '\n' : s[i] == 't' ? '\t' : s[i] == 'r' ? '\r' : s[i];
		} else {
			c[o++] = s[i];
		}
	}
	c[o] = '\0';
	l->s[l->n++] = c;
	return 0;
}

/* Collect the quoted strings inside {{ }} and {% %} (comments skipped). */
static void scan_literals(const char *t, size_t len, struct lits *l)
{
	size_t i = 0;
	bool in_block = false;

	while (i < len) {
		if (!in_block) {
			if (i + 1 < len && t[i] == '{' && t[i + 1] == '#') {
				const char *e = strstr(t + i + 2, "#}");

				i = e ? (size_t)(e - t) + 2 : len;
				continue;
			}
			if (i + 1 < len && t[i] == '{' && (t[i + 1] == '{' || t[i + 1] == '%'))
				in_block = true;
			i++;
			continue;
		}
		if (i + 1 < len && (t[i] == '}' || t[i] == '%') && t[i + 1] == '}') {
			in_block = false;
			i += 2;
			continue;
		}
		if (t[i] == '\'' || t[i] == '"') {
			char q = t[i];
			size_t b = ++i;

			while (i < len && t[i] != q)
				i += t[i] == '\\' ? 2 : 1;
			if (i > len)
				i = len;
			if (lits_add(l, t + b, i - b))
				return;
		}
		i++;
	}
}

static bool starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static bool ends(const char *s, const char *p)
{
	size_t n = strlen(s), k = strlen(p);

	return n >= k && !strcmp(s + n - k, p);
}

static void copy(char *dst, size_t size, const char *s, size_t n)
{
	if (n >= size)
		n = size - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* Qwen-style tool prompt: the literals around the <tools> list. */
static void find_tool_prompt(struct chat_template *ct, const struct lits *l)
{
	int i, pre = -1, post = -1;
	size_t n;

	for (i = 0; i < l->n && pre < 0; i++)
		if (ends(l->s[i], "<tools>") && strstr(l->s[i], "# Tools"))
			pre = i;
	for (i = pre + 1; pre >= 0 && i < l->n && post < 0; i++)
		if (starts(l->s[i], "\n</tools>"))
			post = i;
	if (pre < 0 || post < 0)
		return;
	/* "\n\n# Tools" (Qwen2.5) and "# Tools" (Qwen3) are the same prompt. */
	copy(ct->tools_pre, sizeof(ct->tools_pre), l->s[pre] + strspn(l->s[pre], "\n"),
	     strlen(l->s[pre] + strspn(l->s[pre], "\n")));
	copy(ct->tools_post, sizeof(ct->tools_post), l->s[post], strlen(l->s[post]));
	/* Qwen3.5: the call-format instructions are the next literal. */
	for (i = post + 1; i < l->n && (strstr(l->s[i], "<tool_call>") ||
					strstr(l->s[i], "<function=")); i++) {
		n = strlen(ct->tools_post);
		copy(ct->tools_post + n, sizeof(ct->tools_post) - n, l->s[i], strlen(l->s[i]));
	}
	n = strlen(ct->tools_post);
	if (ends(ct->tools_post, "<|im_end|>\n")) {
		ct->tools_post[n - strlen("<|im_end|>\n")] = '\0';
	} else {
		ct->system_after_tools = true;
	}
}

static void detect_chatml(struct chat_template *ct, const char *t, const struct lits *l)
{
	bool xml = strstr(t, "<function=") != NULL;
	int i;

	ct->family = CHAT_CHATML;
	ct->think = strstr(t, "<think>") != NULL;
	ct->trim = strstr(t, ")|trim") || strstr(t, "content|trim") || strstr(t, "content | trim");
	for (i = 0; i < l->n; i++) {
		const char *s = l->s[i];

		if (!strcmp(s, "<think>\n") || ends(s, "assistant\n<think>\n"))
			ct->think_open = true;
		if (starts(s, "<|im_start|>system\n") && ends(s, "<|im_end|>\n") &&
		    strlen(s) > strlen("<|im_start|>system\n<|im_end|>\n") && !ct->default_system[0])
			copy(ct->default_system, sizeof(ct->default_system),
			     s + strlen("<|im_start|>system\n"),
			     strlen(s) - strlen("<|im_start|>system\n<|im_end|>\n"));
	}
	if (strstr(t, "<tool_call>"))
		find_tool_prompt(ct, l);
	if (ct->tools_pre[0])
		ct->tools = xml ? CHAT_TOOLS_XML : CHAT_TOOLS_JSON;
	if (xml && ct->think)
		snprintf(ct->name, sizeof(ct->name), "qwen3.5");
	else if (xml)
		snprintf(ct->name, sizeof(ct->name), "qwen3-coder");
	else if (ct->think && ct->tools)
		snprintf(ct->name, sizeof(ct->name), "qwen3");
	else if (ct->tools)
		snprintf(ct->name, sizeof(ct->name), "qwen2.5");
	else if (ct->default_system[0])
		snprintf(ct->name, sizeof(ct->name), "qwen2");
	else
		snprintf(ct->name, sizeof(ct->name), "chatml");
}

/* "26 Jul 2024"-like literal. */
static bool is_date(const char *s)
{
	return strlen(s) >= 10 && strlen(s) <= 11 && isdigit((unsigned char)s[0]) &&
	       strchr(s, ' ') && isdigit((unsigned char)s[strlen(s) - 1]);
}

static void detect_llama3(struct chat_template *ct, const char *t, const struct lits *l)
{
	int i;

	ct->family = CHAT_LLAMA3;
	ct->trim = true;
	snprintf(ct->name, sizeof(ct->name), "llama3");
	for (i = 0; i < l->n; i++) {
		if (starts(l->s[i], "Cutting Knowledge Date"))
			copy(ct->knowledge, sizeof(ct->knowledge), l->s[i], strlen(l->s[i]));
		if (is_date(l->s[i]) && !ct->date[0])
			copy(ct->date, sizeof(ct->date), l->s[i], strlen(l->s[i]));
	}
	if (!ct->knowledge[0])
		return;
	snprintf(ct->name, sizeof(ct->name), "llama3.1");
	if (strstr(t, "strftime_now") || !ct->date[0]) {
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(ct->date, sizeof(ct->date), "%d %b %Y", &tm);
	}
}

static void detect_inst(struct chat_template *ct, const char *t)
{
	static const char *const names[] = {
		"llama2", "llama2-sys", "llama2-sys-bos", "llama2-sys-strip", "mistral-v1",
		"mistral-v3", "mistral-v3-tekken", "mistral-v7", "mistral-v7-tekken",
	};

	if (strstr(t, "[SYSTEM_PROMPT]"))
		ct->variant = strstr(t, "[SYSTEM_PROMPT] ") ? CHAT_V_MISTRAL_V7 : CHAT_V_MISTRAL_V7_TEKKEN;
	else if (strstr(t, "' [INST] ' + system_message") || strstr(t, "[AVAILABLE_TOOLS]"))
		ct->variant = strstr(t, " [INST]") ? CHAT_V_MISTRAL_V1 :
			      strstr(t, "\"[INST]\"") ? CHAT_V_MISTRAL_V3_TEKKEN : CHAT_V_MISTRAL_V3;
	else if (strstr(t, "content.strip()"))
		ct->variant = CHAT_V_LLAMA2_SYS_STRIP;
	else if (strstr(t, "bos_token + '[INST]"))
		ct->variant = CHAT_V_LLAMA2_SYS_BOS;
	else if (strstr(t, "<<SYS>>"))
		ct->variant = CHAT_V_LLAMA2_SYS;
	else
		ct->variant = CHAT_V_LLAMA2;
	ct->family = ct->variant >= CHAT_V_MISTRAL_V1 ? CHAT_MISTRAL : CHAT_LLAMA2;
	snprintf(ct->name, sizeof(ct->name), "%s", names[ct->variant]);
}

static void special_text(const struct tokenizer *tok, int32_t id, char *dst, size_t size,
			 const char *def)
{
	size_t n = 0;
	const char *s = tok && id >= 0 ? tok_text(tok, id, &n) : NULL;

	if (s && n < size)
		copy(dst, size, s, n);
	else
		snprintf(dst, size, "%s", def);
}

void chat_template_init(struct chat_template *ct, const char *tmpl, size_t len,
			const struct tokenizer *tok)
{
	struct lits l = { 0 };
	char *t;

	memset(ct, 0, sizeof(*ct));
	special_text(tok, tok ? tok_bos(tok) : -1, ct->bos, sizeof(ct->bos), "<s>");
	special_text(tok, tok ? tok_eos(tok) : -1, ct->eos, sizeof(ct->eos), "</s>");
	if (!tmpl || !len) {
		ct->family = CHAT_PLAIN;
		snprintf(ct->name, sizeof(ct->name), "plain");
		return;
	}
	t = strndup(tmpl, len);
	if (!t) {
		ct->family = CHAT_CHATML;
		ct->fallback = true;
		snprintf(ct->name, sizeof(ct->name), "chatml");
		return;
	}
	scan_literals(t, strlen(t), &l);
	if (strstr(t, "<|im_start|>"))
		detect_chatml(ct, t, &l);
	else if (!strncmp(t, "mistral", 7) || strstr(t, "[INST]"))
		detect_inst(ct, t);
	else if (strstr(t, "<|start_header_id|>") && strstr(t, "<|end_header_id|>"))
		detect_llama3(ct, t, &l);
	else {
		ct->family = CHAT_CHATML;
		ct->fallback = true;
		snprintf(ct->name, sizeof(ct->name), "chatml");
	}
	lits_free(&l);
	free(t);
}
