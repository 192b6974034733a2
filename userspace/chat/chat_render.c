// SPDX-License-Identifier: MIT
/*
 * Rendering a conversation with a recognised template (chat.h). What each
 * family writes follows the templates the models ship (Qwen2.5, Qwen3,
 * Qwen3.5 tokenizer_config.json; Meta's Llama 3/3.1) and, for llama2 and
 * mistral, llama.cpp's built-in renderers (src/llama-chat.cpp).
 */
#include "chat_impl.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rctx {
	const struct chat_template *ct;
	const struct chat_msg *m;
	int n;
	const struct chat_opts *o;
	json_t *tools;		/* the tools array, or NULL */
	struct sbuf b;
	bool open_last;		/* the last message is an assistant prefill */
	bool in_think;
	char *prefix;		/* chat_prompt.reply_prefix */
	char *err;
	size_t errlen;
};

static int __attribute__((format(printf, 2, 3))) fail(struct rctx *r, const char *fmt, ...)
{
	va_list ap;

	if (r->err && r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err, r->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static bool role_is(const struct chat_msg *m, const char *role)
{
	if (!strcmp(role, "system") && !strcmp(m->role, "developer"))
		return true;
	return !strcmp(m->role, role);
}

/* A view of a string: pointer and length. */
struct view {
	const char *s;
	size_t n;
};

static struct view view(const char *s)
{
	return (struct view){ s ? s : "", s ? strlen(s) : 0 };
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Python str.strip() (ASCII whitespace) / strip('\n') / lstrip('\n') / rstrip('\n'). */
static struct view trim(struct view v)
{
	while (v.n && is_ws(v.s[0])) {
		v.s++;
		v.n--;
	}
	while (v.n && is_ws(v.s[v.n - 1]))
		v.n--;
	return v;
}

static struct view lstrip_nl(struct view v)
{
	while (v.n && v.s[0] == '\n') {
		v.s++;
		v.n--;
	}
	return v;
}

static struct view rstrip_nl(struct view v)
{
	while (v.n && v.s[v.n - 1] == '\n')
		v.n--;
	return v;
}

/* First occurrence of @needle in @v, or NULL. */
static const char *vfind(struct view v, const char *needle)
{
	return memmem(v.s, v.n, needle, strlen(needle));
}

/* Last occurrence. */
static const char *vrfind(struct view v, const char *needle)
{
	const char *p = NULL, *q = v.s;
	size_t k = strlen(needle);

	while ((q = memmem(q, v.n - (size_t)(q - v.s), needle, k))) {
		p = q;
		q++;
	}
	return p;
}

static void put(struct rctx *r, struct view v)
{
	sb_text(&r->b, v.s, v.n);
}

static struct view content(const struct rctx *r, const struct chat_msg *m)
{
	struct view v = view(m->content);

	return r->ct->trim ? trim(v) : v;
}

/* ---- chatml (Qwen) ---- */

static bool is_qwen35(const struct chat_template *ct)
{
	return ct->tools == CHAT_TOOLS_XML;
}

/* The system block, with the tool prompt when tools are given. */
static int chatml_system(struct rctx *r)
{
	const struct chat_template *ct = r->ct;
	struct view sys = { NULL, 0 };
	bool has_sys = r->n && role_is(&r->m[0], "system");
	size_t i;

	if (has_sys)
		sys = content(r, &r->m[0]);
	if (!r->tools) {
		if (has_sys) {
			sb_tmpls(&r->b, "<|im_start|>system\n");
			put(r, sys);
			sb_tmpls(&r->b, "<|im_end|>\n");
		} else if (ct->default_system[0]) {
			sb_tmpls(&r->b, "<|im_start|>system\n");
			sb_tmpls(&r->b, ct->default_system);
			sb_tmpls(&r->b, "<|im_end|>\n");
		}
		return 0;
	}
	sb_tmpls(&r->b, "<|im_start|>system\n");
	if (!ct->system_after_tools) {
		if (has_sys && sys.n) {
			put(r, sys);
			sb_tmpls(&r->b, "\n\n");
		} else if (!has_sys && ct->default_system[0]) {
			sb_tmpls(&r->b, ct->default_system);
			sb_tmpls(&r->b, "\n\n");
		}
	}
	sb_tmpls(&r->b, ct->tools_pre);
	for (i = 0; i < json_array_size(r->tools); i++) {
		sb_tmpls(&r->b, "\n");
		chat_json_dump(&r->b, json_array_get(r->tools, i));
	}
	sb_tmpls(&r->b, ct->tools_post);
	if (ct->system_after_tools && has_sys && trim(sys).n) {
		sb_tmpls(&r->b, "\n\n");
		put(r, trim(sys));
	}
	sb_tmpls(&r->b, "<|im_end|>\n");
	return 0;
}

/* Index of the last user message that is a query (not a wrapped tool response). */
static int last_query(const struct rctx *r)
{
	int i;

	for (i = r->n - 1; i >= 0; i--) {
		struct view c;

		if (!role_is(&r->m[i], "user"))
			continue;
		c = trim(view(r->m[i].content));
		if (!(c.n >= 31 && !memcmp(c.s, "<tool_response>", 15) &&
		      !memcmp(c.s + c.n - 16, "</tool_response>", 16)))
			return i;
	}
	return -1;
}

/* One call in Qwen3.5's XML form: a <parameter=K> block per argument. */
static int call_xml(struct rctx *r, const struct chat_tool_call *c, int k)
{
	json_error_t je;
	json_t *a = json_loads(c->arguments && *c->arguments ? c->arguments : "{}", 0, &je);
	const char *key;
	json_t *v;

	if (!a || !json_is_object(a)) {
		json_decref(a);
		return fail(r, "tool call %d (%s): arguments are not a JSON object", k,
			    c->name ? c->name : "?");
	}
	sb_tmpls(&r->b, "<tool_call>\n<function=");
	sb_texts(&r->b, c->name ? c->name : "");
	sb_tmpls(&r->b, ">\n");
	json_object_foreach(a, key, v) {
		sb_tmpls(&r->b, "<parameter=");
		sb_texts(&r->b, key);
		sb_tmpls(&r->b, ">\n");
		if (json_is_object(v) || json_is_array(v))
			chat_json_dump(&r->b, v);
		else
			chat_json_str(&r->b, v);
		sb_tmpls(&r->b, "\n</parameter>\n");
	}
	sb_tmpls(&r->b, "</function>\n</tool_call>");
	json_decref(a);
	return 0;
}

static int chatml_calls(struct rctx *r, const struct chat_msg *m, struct view c)
{
	const struct chat_template *ct = r->ct;
	int k, ret;

	for (k = 0; k < m->n_tool_calls; k++) {
		if (ct->tools == CHAT_TOOLS_XML) {
			if (k)
				sb_tmpls(&r->b, "\n");
			else if (trim(c).n)
				sb_tmpls(&r->b, "\n\n");
			ret = call_xml(r, &m->tool_calls[k], k);
		} else {
			/* Qwen3: "\n" between parts; Qwen2.5: before every call. */
			if (!ct->think || k || c.n)
				sb_tmpls(&r->b, "\n");
			chat_json_call(&r->b, &m->tool_calls[k], true);
			ret = 0;
		}
		if (ret)
			return ret;
	}
	return 0;
}

static int chatml_assistant(struct rctx *r, int i, int lq)
{
	const struct chat_template *ct = r->ct;
	const struct chat_msg *m = &r->m[i];
	struct view c = content(r, m), rs = { "", 0 };
	bool qwen35 = is_qwen35(ct);

	if (m->n_tool_calls && !ct->tools)
		return fail(r, "message %d: this chat template (%s) has no tool-call format", i,
			    ct->name);
	if (ct->think) {
		const char *end = vfind(c, "</think>");

		if (m->reasoning) {
			rs = view(m->reasoning);
		} else if (end) {
			struct view head = { c.s, (size_t)(end - c.s) };
			const char *open;

			head = rstrip_nl(head);
			open = vrfind(head, "<think>");
			if (open)
				head = (struct view){ open + 7, head.n - (size_t)(open + 7 - head.s) };
			rs = lstrip_nl(head);
		}
		if (end) {
			const char *last = vrfind(c, "</think>") + 8;

			c = lstrip_nl((struct view){ last, c.n - (size_t)(last - c.s) });
		}
		if (qwen35)
			rs = trim(rs);
		if (i > lq && (qwen35 || i == r->n - 1 || rs.n)) {
			sb_tmpls(&r->b, "<|im_start|>assistant\n<think>\n");
			put(r, qwen35 ? rs : lstrip_nl(rstrip_nl(rs)));
			sb_tmpls(&r->b, "\n</think>\n\n");
			c = lstrip_nl(c);
		} else {
			sb_tmpls(&r->b, "<|im_start|>assistant\n");
		}
		put(r, c);
	} else if (m->n_tool_calls) {
		/* Qwen2.5: the header without "\n" when there is no content. */
		sb_tmpls(&r->b, "<|im_start|>assistant");
		if (c.n) {
			sb_tmpls(&r->b, "\n");
			put(r, c);
		}
	} else {
		sb_tmpls(&r->b, "<|im_start|>assistant\n");
		put(r, c);
	}
	if (chatml_calls(r, m, c))
		return -EINVAL;
	if (!(r->open_last && i == r->n - 1))
		sb_tmpls(&r->b, "<|im_end|>\n");
	return 0;
}

static int chatml_tool(struct rctx *r, int i)
{
	if (!r->ct->tools) {
		sb_tmpls(&r->b, "<|im_start|>tool\n");
		put(r, content(r, &r->m[i]));
		sb_tmpls(&r->b, "<|im_end|>\n");
		return 0;
	}
	if (!i || !role_is(&r->m[i - 1], "tool"))
		sb_tmpls(&r->b, "<|im_start|>user");
	sb_tmpls(&r->b, "\n<tool_response>\n");
	put(r, content(r, &r->m[i]));
	sb_tmpls(&r->b, "\n</tool_response>");
	if (i == r->n - 1 || !role_is(&r->m[i + 1], "tool"))
		sb_tmpls(&r->b, "<|im_end|>\n");
	return 0;
}

static bool forced(const struct rctx *r)
{
	return r->tools && r->o->tool_choice != CHAT_TOOL_AUTO;
}

/*
 * A forced call: the reply starts with the call's opening (and, for a
 * named function, its name), written as template text and remembered as
 * the reply's prefix.
 */
static int force_call(struct rctx *r)
{
	bool xml = r->ct->tools == CHAT_TOOLS_XML;
	size_t start = r->b.len;

	sb_tmpls(&r->b, "<tool_call>\n");
	if (r->o->tool_choice == CHAT_TOOL_FUNCTION) {
		sb_tmpls(&r->b, xml ? "<function=" : "{\"name\": \"");
		sb_texts(&r->b, r->o->tool_name);
		sb_tmpls(&r->b, xml ? ">\n" : "\", \"arguments\": ");
	}
	if (r->b.oom)
		return -ENOMEM;
	r->prefix = strndup(r->b.p + start, r->b.len - start);
	return r->prefix ? 0 : -ENOMEM;
}

static int render_chatml(struct rctx *r)
{
	const struct chat_template *ct = r->ct;
	int i, lq = last_query(r), ret = 0;

	if (lq < 0) {
		if (is_qwen35(ct))
			return fail(r, "the %s template needs a user message", ct->name);
		lq = r->n - 1;
	}
	chatml_system(r);
	for (i = 0; i < r->n && !ret; i++) {
		const struct chat_msg *m = &r->m[i];

		if (role_is(m, "system")) {
			if (!i)
				continue;
			if (is_qwen35(ct))
				return fail(r, "message %d: a system message must be the first", i);
			sb_tmpls(&r->b, "<|im_start|>system\n");
			put(r, content(r, m));
			sb_tmpls(&r->b, "<|im_end|>\n");
		} else if (role_is(m, "user")) {
			sb_tmpls(&r->b, "<|im_start|>user\n");
			put(r, content(r, m));
			sb_tmpls(&r->b, "<|im_end|>\n");
		} else if (role_is(m, "assistant")) {
			ret = chatml_assistant(r, i, lq);
		} else {
			ret = chatml_tool(r, i);
		}
	}
	if (ret || r->open_last || !r->o->add_generation_prompt)
		return ret;
	sb_tmpls(&r->b, "<|im_start|>assistant\n");
	if (ct->think && (r->o->thinking == CHAT_THINK_OFF || forced(r))) {
		sb_tmpls(&r->b, "<think>\n\n</think>\n\n");
	} else if (ct->think_open) {
		sb_tmpls(&r->b, "<think>\n");
		r->in_think = true;
	}
	return forced(r) ? force_call(r) : 0;
}

/* ---- llama3 ---- */

static int render_llama3(struct rctx *r)
{
	const struct chat_template *ct = r->ct;
	int i = 0;

	if (ct->knowledge[0]) {
		sb_tmpls(&r->b, "<|start_header_id|>system<|end_header_id|>\n\n");
		sb_tmpls(&r->b, ct->knowledge);
		sb_tmpls(&r->b, "Today Date: ");
		sb_tmpls(&r->b, ct->date);
		sb_tmpls(&r->b, "\n\n");
		if (r->n && role_is(&r->m[0], "system")) {
			put(r, trim(view(r->m[0].content)));
			i = 1;
		}
		sb_tmpls(&r->b, "<|eot_id|>");
	}
	for (; i < r->n; i++) {
		const struct chat_msg *m = &r->m[i];
		bool tool = role_is(m, "tool");

		if (m->n_tool_calls)
			return fail(r, "message %d: tool calls are not supported with the %s template",
				    i, ct->name);
		sb_tmpls(&r->b, "<|start_header_id|>");
		sb_tmpls(&r->b, tool && ct->knowledge[0] ? "ipython" :
			 role_is(m, "system") ? "system" : m->role);
		sb_tmpls(&r->b, "<|end_header_id|>\n\n");
		put(r, trim(view(m->content)));
		if (!(r->open_last && i == r->n - 1))
			sb_tmpls(&r->b, "<|eot_id|>");
	}
	if (!r->open_last && r->o->add_generation_prompt)
		sb_tmpls(&r->b, "<|start_header_id|>assistant<|end_header_id|>\n\n");
	return 0;
}

/* ---- llama2 / mistral (llama.cpp's built-in forms) ---- */

static int render_llama2(struct rctx *r)
{
	const struct chat_template *ct = r->ct;
	bool sys_ok = ct->variant != CHAT_V_LLAMA2;
	bool bos_in = ct->variant == CHAT_V_LLAMA2_SYS_BOS;
	bool strip = ct->variant == CHAT_V_LLAMA2_SYS_STRIP;
	bool inside = true;
	int i;

	sb_tmpls(&r->b, "[INST] ");
	for (i = 0; i < r->n; i++) {
		const struct chat_msg *m = &r->m[i];
		struct view c = strip ? trim(view(m->content)) : view(m->content);

		if (!inside) {
			inside = true;
			if (bos_in)
				sb_tmpls(&r->b, ct->bos);
			sb_tmpls(&r->b, "[INST] ");
		}
		if (role_is(m, "system")) {
			if (sys_ok)
				sb_tmpls(&r->b, "<<SYS>>\n");
			put(r, c);
			sb_tmpls(&r->b, sys_ok ? "\n<</SYS>>\n\n" : "\n");
		} else if (role_is(m, "user")) {
			put(r, c);
			sb_tmpls(&r->b, " [/INST]");
		} else {
			put(r, c);
			if (!(r->open_last && i == r->n - 1))
				sb_tmpls(&r->b, ct->eos);
			inside = false;
		}
	}
	return 0;
}

static int render_mistral(struct rctx *r)
{
	const struct chat_template *ct = r->ct;
	bool v7 = ct->variant >= CHAT_V_MISTRAL_V7;
	const char *lead = ct->variant == CHAT_V_MISTRAL_V1 ? " " : "";
	const char *trail = ct->variant == CHAT_V_MISTRAL_V3_TEKKEN ||
			    ct->variant == CHAT_V_MISTRAL_V7_TEKKEN ? "" : " ";
	bool inside = false;
	int i;

	for (i = 0; i < r->n; i++) {
		const struct chat_msg *m = &r->m[i];
		struct view c = view(m->content);
		bool last_open = r->open_last && i == r->n - 1;

		if (v7) {
			if (role_is(m, "system")) {
				sb_tmpls(&r->b, "[SYSTEM_PROMPT]");
				sb_tmpls(&r->b, trail);
				put(r, c);
				sb_tmpls(&r->b, "[/SYSTEM_PROMPT]");
			} else if (role_is(m, "user")) {
				sb_tmpls(&r->b, "[INST]");
				sb_tmpls(&r->b, trail);
				put(r, c);
				sb_tmpls(&r->b, "[/INST]");
			} else {
				sb_tmpls(&r->b, trail);
				put(r, c);
				if (!last_open)
					sb_tmpls(&r->b, ct->eos);
			}
			continue;
		}
		if (!inside) {
			sb_tmpls(&r->b, lead);
			sb_tmpls(&r->b, "[INST]");
			sb_tmpls(&r->b, trail);
			inside = true;
		}
		if (role_is(m, "system")) {
			put(r, c);
			sb_tmpls(&r->b, "\n\n");
		} else if (role_is(m, "user")) {
			put(r, c);
			sb_tmpls(&r->b, lead);
			sb_tmpls(&r->b, "[/INST]");
		} else {
			sb_tmpls(&r->b, trail);
			put(r, ct->variant == CHAT_V_MISTRAL_V3 ? trim(c) : c);
			if (!last_open)
				sb_tmpls(&r->b, ct->eos);
			inside = false;
		}
	}
	return 0;
}

/* ---- plain ---- */

static int render_plain(struct rctx *r)
{
	int i;

	for (i = 0; i < r->n; i++) {
		if (i)
			sb_tmpls(&r->b, "\n");
		put(r, view(r->m[i].content));
	}
	return 0;
}

static bool has_tool(const json_t *tools, const char *name)
{
	size_t i;

	for (i = 0; name && i < json_array_size(tools); i++) {
		json_t *f = json_object_get(json_array_get(tools, i), "function");
		const char *n = json_string_value(json_object_get(f, "name"));

		if (n && !strcmp(n, name))
			return true;
	}
	return false;
}

/* Roles, system position, tool messages after a call, tools JSON. */
static int check(struct rctx *r)
{
	static const char *const roles[] = { "system", "developer", "user", "assistant", "tool" };
	json_error_t je;
	bool called = false;
	size_t k;
	int i;

	if (r->n < 1 || !r->m)
		return fail(r, "no messages");
	for (i = 0; i < r->n; i++) {
		const struct chat_msg *m = &r->m[i];

		for (k = 0; k < sizeof(roles) / sizeof(roles[0]); k++)
			if (m->role && !strcmp(m->role, roles[k]))
				break;
		if (k == sizeof(roles) / sizeof(roles[0]))
			return fail(r, "message %d: unknown role '%.32s'", i,
				    m->role ? m->role : "(none)");
		if (m->n_tool_calls && (!role_is(m, "assistant") || !m->tool_calls))
			return fail(r, "message %d: only assistant messages carry tool calls", i);
		called |= m->n_tool_calls > 0;
		if (role_is(m, "tool") && !called)
			return fail(r, "message %d: a tool result without an assistant tool call before it",
				    i);
	}
	if (r->o->tools_json) {
		r->tools = json_loads(r->o->tools_json, 0, &je);
		if (!r->tools || !json_is_array(r->tools))
			return fail(r, "tools: not a JSON array (%s)", r->tools ? "" : je.text);
		for (k = 0; k < json_array_size(r->tools); k++)
			if (!json_is_object(json_array_get(r->tools, k)))
				return fail(r, "tools[%zu]: not a JSON object", k);
		if (!json_array_size(r->tools)) {
			json_decref(r->tools);
			r->tools = NULL;
		}
	}
	if (r->o->tool_choice != CHAT_TOOL_AUTO && !r->tools)
		return fail(r, "tool_choice: a call is required but no tools are given");
	if (r->o->tool_choice == CHAT_TOOL_FUNCTION && !has_tool(r->tools, r->o->tool_name))
		return fail(r, "tool_choice: no tool named '%.64s'",
			    r->o->tool_name ? r->o->tool_name : "(none)");
	return 0;
}

static int render_family(struct rctx *r)
{
	switch (r->ct->family) {
	case CHAT_CHATML: return render_chatml(r);
	case CHAT_LLAMA3: return render_llama3(r);
	case CHAT_LLAMA2: return render_llama2(r);
	case CHAT_MISTRAL: return render_mistral(r);
	default: return render_plain(r);
	}
}

/*
 * A template without a tool format (chat_generic.c): render the rewritten
 * conversation without tools, then open a forced call in the JSON form.
 */
static int render_generic(struct rctx *r)
{
	const struct chat_msg *m = r->m;
	struct chat_generic g;
	json_t *tools = r->tools;
	int n = r->n, ret;

	ret = chat_generic_rewrite(m, n, tools, &g);
	if (ret)
		return ret;
	r->m = g.m;
	r->n = g.n;
	r->tools = NULL;
	ret = render_family(r);
	r->tools = tools;
	if (!ret && !r->open_last && forced(r)) {
		if (r->ct->family == CHAT_PLAIN)
			sb_tmpls(&r->b, "\n");
		ret = force_call(r);
	}
	r->m = m;
	r->n = n;
	chat_generic_free(&g);
	return ret;
}

int chat_render(const struct chat_template *ct, const struct chat_msg *msgs, int n,
		const struct chat_opts *o, struct chat_prompt *out, char *err, size_t errlen)
{
	static const struct chat_opts def = { .add_generation_prompt = true,
					      .thinking = CHAT_THINK_DEFAULT };
	struct rctx r = { .ct = ct, .m = msgs, .n = n, .o = o ? o : &def, .err = err,
			  .errlen = errlen };
	const struct chat_msg *last;
	int ret;

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	ret = check(&r);
	if (ret)
		goto out;
	last = &msgs[n - 1];
	r.open_last = role_is(last, "assistant") && !last->n_tool_calls &&
		      ct->family != CHAT_PLAIN;
	ret = chat_generic_needed(ct, msgs, n, r.tools) ? render_generic(&r) : render_family(&r);
	if (!ret && r.b.oom)
		ret = -ENOMEM;
	if (!ret && !r.b.p)
		sb_text(&r.b, "", 0);
out:
	json_decref(r.tools);
	if (!ret && !r.prefix)
		r.prefix = strdup("");
	if (!ret && !r.prefix)
		ret = -ENOMEM;
	if (ret || r.b.oom) {
		free(r.b.p);
		free(r.b.sp);
		free(r.prefix);
		if (!ret)
			ret = -ENOMEM;
		if (ret == -ENOMEM && err && errlen)
			snprintf(err, errlen, "out of memory");
		return ret;
	}
	out->text = r.b.p;
	out->len = r.b.len;
	out->special = r.b.sp;
	out->n_special = r.b.n_sp;
	out->reply_in_think = r.in_think;
	out->reply_prefix = r.prefix;
	return 0;
}

void chat_prompt_free(struct chat_prompt *p)
{
	if (!p)
		return;
	free(p->text);
	free(p->special);
	free(p->reply_prefix);
	memset(p, 0, sizeof(*p));
}

int chat_encode(const struct tokenizer *tok, const struct chat_prompt *p, unsigned int flags,
		int32_t **ids, int *n)
{
	struct tok_encode_opts o = { .flags = flags, .special = p->special,
				     .n_special = p->n_special };
	int max = tok_max_tokens(tok, p->len), got;

	*ids = NULL;
	*n = 0;
	if (tok_add_bos_default(tok))
		o.flags |= TOK_ADD_BOS;
	*ids = malloc((size_t)max * sizeof(**ids));
	if (!*ids)
		return -ENOMEM;
	got = tok_encode_ex(tok, p->text, p->len, &o, *ids, max);
	if (got < 0) {
		free(*ids);
		*ids = NULL;
		return got == INT_MIN ? -EINVAL : -ENOMEM;
	}
	*n = got;
	return 0;
}
