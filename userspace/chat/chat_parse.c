// SPDX-License-Identifier: MIT
/*
 * The reply parser (chat.h): splits a model's output into reasoning
 * (<think>...</think>), content and tool calls as the Qwen templates ask
 * for them, incrementally, so that a server can stream each part as
 * OpenAI deltas (content, reasoning_content, tool_calls[i].function
 * .name/.arguments).
 *
 * Text that could still be the start of a tag is held back until it is
 * known not to be; whitespace between the parts (the "\n\n" after
 * </think>, around <tool_call> blocks) is dropped, as the templates strip
 * it when a reply is rendered back into the history; the whitespace that
 * ends the reply is kept (a part's trailing whitespace waits until what
 * follows shows which it is).
 *
 * Tool calls, JSON form: <tool_call>\n{"name": N, "arguments": {...}}
 * \n</tool_call>. TOOL_BEGIN goes out once the name string is complete,
 * then the arguments object's text as it arrives (a small scanner tracks
 * strings and nesting to find where it ends); a </tool_call> inside one
 * of the call's JSON strings is text, not the end of the call. XML form (Qwen3.5):
 * <function=N> begins the call; each <parameter=K>\nV\n</parameter> adds
 * "K": V to the arguments once complete, V as JSON when the tool's schema
 * does not say "string" and V reads as JSON, else as a string.
 */
#include "chat_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum pstate { P_START, P_CONTENT, P_THINK, P_CALL };

struct pcall {
	char id[48];
	struct sbuf name, args, body;
	struct sbuf pre;	/* whitespace dropped before <tool_call> */
	bool begun;		/* TOOL_BEGIN sent */
	size_t scanned;		/* JSON: body bytes already looked at for args */
	size_t args_from;	/* JSON: body offset of the arguments value, 0 = unknown */
	bool args_done;
	int n_params;		/* XML: parameters added */
	bool closed;		/* XML: "}" added */
	bool complete;		/* its </tool_call> was seen */
	struct jlex {		/* JSON: the lexer over the body, for the closing tag */
		int depth;	/* open objects and arrays of the call's value */
		bool str, esc;	/* inside a string; after its backslash */
		bool started;	/* the value's first character was seen */
		bool plain;	/* the body is not a JSON value: look for the tag anywhere */
	} lex;
};

struct chat_parser {
	const struct chat_template *ct;
	json_t *tools;
	bool xml;		/* calls in the XML form (else JSON) */
	enum pstate st;
	bool thought;		/* a <think> block was entered */
	unsigned long seed;
	struct sbuf hold;	/* text not yet classified */
	struct sbuf ws;		/* content or reasoning whitespace held back */
	bool skip_ws;		/* drop leading whitespace of the next part */
	struct sbuf content, reasoning;
	struct pcall *calls;
	int n_calls, cap_calls;
	struct chat_tool_call *out;	/* chat_parser_call() views */
	chat_delta_fn fn;
	void *user;
};

static void sb_free(struct sbuf *b)
{
	free(b->p);
	free(b->sp);
	memset(b, 0, sizeof(*b));
}

static const char *sb_str(const struct sbuf *b)
{
	return b->p ? b->p : "";
}

static void consume(struct sbuf *b, size_t n)
{
	memmove(b->p, b->p + n, b->len - n);
	b->len -= n;
	b->p[b->len] = '\0';
}

static void delta(struct chat_parser *p, enum chat_delta_kind k, int index, const char *s,
		  size_t n)
{
	struct chat_delta d = { .kind = k, .index = index, .text = s, .len = n };

	if (k == CHAT_DELTA_TOOL_BEGIN) {
		d.id = p->calls[index].id;
		d.name = sb_str(&p->calls[index].name);
	}
	if (p->fn && (n || k == CHAT_DELTA_TOOL_BEGIN))
		p->fn(&d, p->user);
}

static bool ws_char(char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* Content or reasoning text: trailing whitespace waits for what follows. */
static void emit_text(struct chat_parser *p, bool think, const char *s, size_t n)
{
	struct sbuf *dst = think ? &p->reasoning : &p->content;
	enum chat_delta_kind k = think ? CHAT_DELTA_REASONING : CHAT_DELTA_CONTENT;
	size_t e;

	if (p->skip_ws) {
		while (n && ws_char(*s)) {
			s++;
			n--;
		}
		if (!n)
			return;
		p->skip_ws = false;
	}
	for (e = n; e && ws_char(s[e - 1]); e--)
		;
	if (e) {
		if (p->ws.len) {
			sb_text(dst, p->ws.p, p->ws.len);
			delta(p, k, 0, p->ws.p, p->ws.len);
			p->ws.len = 0;
		}
		sb_text(dst, s, e);
		delta(p, k, 0, s, e);
	}
	sb_text(&p->ws, s + e, n - e);
}

/* Length of the longest suffix of @s[0..n) that is a proper prefix of @tag. */
static size_t tag_prefix(const char *s, size_t n, const char *tag)
{
	size_t k = strlen(tag) - 1;

	if (k > n)
		k = n;
	for (; k; k--)
		if (!memcmp(s + n - k, tag, k))
			return k;
	return 0;
}

/* ---- tool calls ---- */

static struct pcall *new_call(struct chat_parser *p)
{
	struct pcall *c;

	if (p->n_calls == p->cap_calls) {
		int cap = p->cap_calls ? 2 * p->cap_calls : 4;
		struct pcall *nc = realloc(p->calls, cap * sizeof(*nc));

		if (!nc)
			return NULL;
		p->calls = nc;
		p->cap_calls = cap;
	}
	c = &p->calls[p->n_calls];
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "call_%lu_%d", p->seed, p->n_calls);
	p->n_calls++;
	return c;
}

static void begin(struct chat_parser *p, struct pcall *c)
{
	if (c->begun)
		return;
	c->begun = true;
	delta(p, CHAT_DELTA_TOOL_BEGIN, (int)(c - p->calls), NULL, 0);
}

static void add_args(struct chat_parser *p, struct pcall *c, const char *s, size_t n)
{
	sb_text(&c->args, s, n);
	delta(p, CHAT_DELTA_TOOL_ARGS, (int)(c - p->calls), s, n);
}

/*
 * End of the JSON value starting at s[0] (after whitespace), or 0 when
 * the text ends first. Strings, nesting and escapes are tracked; the
 * value's validity is checked by jansson later.
 */
static size_t json_value_end(const char *s, size_t n)
{
	bool str = false;
	int depth = 0;
	size_t i;

	if (!n)
		return 0;
	if (s[0] != '{' && s[0] != '[' && s[0] != '"') {
		/* A number or literal ends at a delimiter. */
		for (i = 0; i < n; i++)
			if (s[i] == ',' || s[i] == '}' || s[i] == ']' || ws_char(s[i]))
				return i;
		return 0;
	}
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (str) {
			if (c == '\\') {
				i++;
			} else if (c == '"') {
				str = false;
				if (!depth)
					return i + 1;
			}
		} else if (c == '"') {
			str = true;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if ((c == '}' || c == ']') && --depth == 0) {
			return i + 1;
		}
	}
	return 0;
}

/* A complete JSON string at s[0]: its decoded value (malloc'ed) and end. */
static char *json_string_at(const char *s, size_t n, size_t *end)
{
	size_t e = s[0] == '"' ? json_value_end(s, n) : 0;
	json_error_t je;
	json_t *v;
	char *r;

	if (!e)
		return NULL;
	v = json_loadb(s, e, JSON_DECODE_ANY, &je);
	r = v && json_is_string(v) ? strdup(json_string_value(v)) : NULL;
	json_decref(v);
	*end = e;
	return r;
}

static size_t skip_ws(const char *s, size_t i, size_t n)
{
	while (i < n && ws_char(s[i]))
		i++;
	return i;
}

/* JSON form: find the name and stream the arguments as the body grows. */
static void scan_json(struct chat_parser *p, struct pcall *c)
{
	const char *s = c->body.p;
	size_t n = c->body.len, i;

	if (!c->begun) {
		const char *k = s ? memmem(s, n, "\"name\"", 6) : NULL;
		size_t e;
		char *name;

		if (!k)
			return;
		i = skip_ws(s, (size_t)(k - s) + 6, n);
		if (i >= n || s[i] != ':')
			return;
		i = skip_ws(s, i + 1, n);
		if (i >= n)
			return;
		name = json_string_at(s + i, n - i, &e);
		if (!name)
			return;
		sb_texts(&c->name, name);
		free(name);
		begin(p, c);
	}
	if (!c->args_from) {
		const char *k = memmem(s, n, "\"arguments\"", 11);

		if (!k)
			return;
		i = skip_ws(s, (size_t)(k - s) + 11, n);
		if (i >= n || s[i] != ':')
			return;
		i = skip_ws(s, i + 1, n);
		if (i >= n)
			return;
		c->args_from = c->scanned = i;
	}
	if (c->args_done || s[c->args_from] == '"')
		return;		/* arguments as a JSON string: decoded at the end */
	i = json_value_end(s + c->args_from, n - c->args_from);
	if (i) {
		add_args(p, c, s + c->scanned, c->args_from + i - c->scanned);
		c->scanned = c->args_from + i;
		c->args_done = true;
	} else if (n > c->scanned) {
		add_args(p, c, s + c->scanned, n - c->scanned);
		c->scanned = n;
	}
}

/* The schema type of parameter @key of function @name ("" when unknown). */
static const char *param_type(const struct chat_parser *p, const char *name, const char *key)
{
	size_t i;

	for (i = 0; p->tools && i < json_array_size(p->tools); i++) {
		json_t *f = json_object_get(json_array_get(p->tools, i), "function");
		json_t *t;

		if (!f || !json_is_string(json_object_get(f, "name")) ||
		    strcmp(json_string_value(json_object_get(f, "name")), name))
			continue;
		t = json_object_get(json_object_get(json_object_get(json_object_get(f,
			"parameters"), "properties"), key), "type");
		return json_is_string(t) ? json_string_value(t) : "";
	}
	return "";
}

/* XML form: one complete <parameter=K>\nV\n</parameter> -> "K": V. */
static void xml_param(struct chat_parser *p, struct pcall *c, const char *k, size_t kn,
		      const char *v, size_t vn)
{
	struct sbuf a = { 0 };
	char *key = strndup(k, kn);
	json_error_t je;
	json_t *j = NULL;

	if (vn && v[0] == '\n') {
		v++;
		vn--;
	}
	if (vn && v[vn - 1] == '\n')
		vn--;
	if (key && strcmp(param_type(p, sb_str(&c->name), key), "string"))
		j = json_loadb(v, vn, JSON_DECODE_ANY, &je);
	if (!j)
		j = json_stringn(v, vn);
	sb_texts(&a, c->n_params ? ", " : "{");
	if (key && j) {
		json_t *ks = json_string(key);

		chat_json_dump(&a, ks);
		sb_texts(&a, ": ");
		chat_json_dump(&a, j);
		json_decref(ks);
	}
	add_args(p, c, a.p, a.len);
	c->n_params++;
	json_decref(j);
	free(key);
	sb_free(&a);
}

static void xml_close(struct chat_parser *p, struct pcall *c)
{
	if (c->begun && !c->closed) {
		add_args(p, c, c->n_params ? "}" : "{}", c->n_params ? 1 : 2);
		c->closed = true;
	}
}

/* XML form: <function=N> and each finished parameter, as the body grows. */
static void scan_xml(struct chat_parser *p, struct pcall *c)
{
	const char *s = c->body.p;
	size_t n = c->body.len;

	if (!c->begun) {
		const char *f = s ? memmem(s, n, "<function=", 10) : NULL;
		const char *e = f ? memchr(f, '>', n - (size_t)(f - s)) : NULL;

		if (!e)
			return;
		sb_text(&c->name, f + 10, (size_t)(e - f - 10));
		begin(p, c);
		c->scanned = (size_t)(e - s) + 1;
	}
	for (;;) {
		const char *b = memmem(s + c->scanned, n - c->scanned, "<parameter=", 11);
		const char *ke, *end;

		if (!b)
			break;
		ke = memchr(b, '>', n - (size_t)(b - s));
		end = ke ? memmem(ke, n - (size_t)(ke - s), "</parameter>", 12) : NULL;
		if (!end)
			break;
		xml_param(p, c, b + 11, (size_t)(ke - b - 11), ke + 1, (size_t)(end - ke - 1));
		c->scanned = (size_t)(end - s) + 12;
	}
	if (memmem(s + c->scanned, n - c->scanned, "</function>", 11))
		xml_close(p, c);
}

static void scan_call(struct chat_parser *p, struct pcall *c)
{
	if (p->xml)
		scan_xml(p, c);
	else
		scan_json(p, c);
}

/* </tool_call> seen: settle the call's name and arguments. */
static void finish_call(struct chat_parser *p, struct pcall *c)
{
	json_error_t je;
	json_t *v, *a;

	scan_call(p, c);
	if (p->xml) {
		xml_close(p, c);
		return;
	}
	v = json_loadb(sb_str(&c->body), c->body.len, 0, &je);
	a = v ? json_object_get(v, "arguments") : NULL;
	if (c->begun && json_is_string(a) && !c->args.len)
		add_args(p, c, json_string_value(a), json_string_length(a));
	else if (c->begun && !c->args.len)
		add_args(p, c, "{}", 2);
	json_decref(v);
}

/* An unfinished call: content when it never began. */
static void abandon_call(struct chat_parser *p, struct pcall *c)
{
	if (c->begun) {
		if (p->xml)
			xml_close(p, c);
		return;
	}
	emit_text(p, false, sb_str(&c->pre), c->pre.len);
	emit_text(p, false, "<tool_call>", 11);
	emit_text(p, false, sb_str(&c->body), c->body.len);
	sb_free(&c->pre);
	sb_free(&c->name);
	sb_free(&c->args);
	sb_free(&c->body);
	p->n_calls--;
}

/* ---- the state machine ---- */

/*
 * The states of step(): each consumes what it can of @s[0..@n) (the held
 * text) and returns true to go on with the next state, false when it
 * needs more text.
 */
static bool step_start(struct chat_parser *p, const char *s, size_t n, bool final)
{
	size_t i = skip_ws(s, 0, n);

	if (n - i >= 7 && !memcmp(s + i, "<think>", 7)) {
		consume(&p->hold, i + 7);
		p->st = P_THINK;
		p->thought = true;
		p->skip_ws = true;
		return true;
	}
	if (!final && n - i < 7 && !memcmp(s + i, "<think>", n - i))
		return false;
	p->st = P_CONTENT;
	return true;
}

static bool step_think(struct chat_parser *p, const char *s, size_t n, bool final)
{
	const char *tag = memmem(s, n, "</think>", 8);
	size_t keep;

	if (tag) {
		emit_text(p, true, s, (size_t)(tag - s));
		consume(&p->hold, (size_t)(tag - s) + 8);
		p->ws.len = 0;
		p->st = P_CONTENT;
		p->skip_ws = true;
		return true;
	}
	keep = final ? 0 : tag_prefix(s, n, "</think>");
	emit_text(p, true, s, n - keep);
	consume(&p->hold, n - keep);
	return false;
}

static bool step_content(struct chat_parser *p, const char *s, size_t n, bool final)
{
	const char *tag = p->tools ? memmem(s, n, "<tool_call>", 11) : NULL;
	struct pcall *c;
	size_t keep;

	if (!tag) {
		keep = final || !p->tools ? 0 : tag_prefix(s, n, "<tool_call>");
		emit_text(p, false, s, n - keep);
		consume(&p->hold, n - keep);
		return false;
	}
	emit_text(p, false, s, (size_t)(tag - s));
	consume(&p->hold, (size_t)(tag - s) + 11);
	c = new_call(p);
	if (!c) {
		p->content.oom = true;
		return false;
	}
	if (p->ws.len)
		sb_text(&c->pre, p->ws.p, p->ws.len);
	p->ws.len = 0;
	p->st = P_CALL;
	return true;
}

/*
 * JSON form: the first </tool_call> outside the call's JSON strings in
 * @s[0..@n), continuing @x over the body so far; NULL when there is none.
 * *@keep is how much of @s can join the body: all of it but a trailing
 * prefix of the tag outside a string (unless @final). A tag inside a
 * string ("arguments": {"code": "...</tool_call>..."}) is text: the call
 * ends at the first tag after its top-level value closed, or anywhere
 * when the body does not start as a JSON object or array.
 */
static const char *json_close_tag(struct jlex *x, const char *s, size_t n, bool final,
				  size_t *keep)
{
	static const char tag[] = "</tool_call>";
	const size_t tl = sizeof(tag) - 1;
	size_t i;

	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (x->str) {
			if (x->esc)
				x->esc = false;
			else if (ch == '\\')
				x->esc = true;
			else if (ch == '"')
				x->str = false;
			continue;
		}
		if (!x->started && !x->plain && !ws_char(ch)) {
			x->started = true;
			x->plain = ch != '{' && ch != '[';
		}
		if (ch == '<' && (x->plain || !x->depth)) {
			if (n - i >= tl && !memcmp(s + i, tag, tl)) {
				*keep = i;
				return s + i;
			}
			if (!final && n - i < tl && !memcmp(s + i, tag, n - i)) {
				*keep = i;
				return NULL;
			}
		}
		if (x->plain)
			continue;
		if (ch == '"' && x->depth)
			x->str = true;
		else if (ch == '{' || ch == '[')
			x->depth++;
		else if ((ch == '}' || ch == ']') && x->depth)
			x->depth--;
	}
	*keep = n;
	return NULL;
}

static bool step_call(struct chat_parser *p, const char *s, size_t n, bool final)
{
	struct pcall *c = &p->calls[p->n_calls - 1];
	const char *tag;
	size_t keep;

	if (p->xml) {
		tag = memmem(s, n, "</tool_call>", 12);
		keep = tag ? (size_t)(tag - s) : n - (final ? 0 : tag_prefix(s, n, "</tool_call>"));
	} else {
		tag = json_close_tag(&c->lex, s, n, final, &keep);
	}
	sb_text(&c->body, s, keep);
	consume(&p->hold, keep);
	if (!tag) {
		scan_call(p, c);
		return false;
	}
	consume(&p->hold, 12);
	c->complete = true;
	finish_call(p, c);
	if (!c->begun) {
		/* No name: not a call after all. */
		p->skip_ws = false;
		abandon_call(p, c);
		emit_text(p, false, "</tool_call>", 12);
	}
	p->st = P_CONTENT;
	p->skip_ws = true;
	return true;
}

/* Classify as much of p->hold as can be; @final: nothing more comes. */
static void step(struct chat_parser *p, bool final)
{
	bool more = true;

	while (more && p->hold.len) {
		const char *s = p->hold.p;
		size_t n = p->hold.len;

		switch (p->st) {
		case P_START: more = step_start(p, s, n, final); break;
		case P_THINK: more = step_think(p, s, n, final); break;
		case P_CONTENT: more = step_content(p, s, n, final); break;
		default: more = step_call(p, s, n, final); break;
		}
	}
}

struct chat_parser *chat_parser_new(const struct chat_template *ct, bool in_think,
				    const char *tools_json, unsigned long id_seed)
{
	struct chat_parser *p = calloc(1, sizeof(*p));
	json_error_t je;

	if (!p)
		return NULL;
	p->ct = ct;
	p->seed = id_seed;
	p->st = in_think ? P_THINK : ct->think ? P_START : P_CONTENT;
	p->thought = in_think;
	p->skip_ws = in_think;
	/* Templates without a tool format use the JSON form (chat_generic.c). */
	p->xml = ct->tools == CHAT_TOOLS_XML;
	if (tools_json) {
		p->tools = json_loads(tools_json, 0, &je);
		if (p->tools && (!json_is_array(p->tools) || !json_array_size(p->tools))) {
			json_decref(p->tools);
			p->tools = NULL;
		}
	}
	return p;
}

void chat_parser_free(struct chat_parser *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < p->n_calls; i++) {
		sb_free(&p->calls[i].name);
		sb_free(&p->calls[i].args);
		sb_free(&p->calls[i].body);
		sb_free(&p->calls[i].pre);
	}
	free(p->calls);
	free(p->out);
	sb_free(&p->hold);
	sb_free(&p->ws);
	sb_free(&p->content);
	sb_free(&p->reasoning);
	json_decref(p->tools);
	free(p);
}

static bool oom(const struct chat_parser *p)
{
	int i;

	for (i = 0; i < p->n_calls; i++)
		if (p->calls[i].args.oom || p->calls[i].body.oom || p->calls[i].name.oom)
			return true;
	return p->hold.oom || p->ws.oom || p->content.oom || p->reasoning.oom;
}

int chat_parser_feed(struct chat_parser *p, const char *s, size_t n, chat_delta_fn fn,
		     void *user)
{
	p->fn = fn;
	p->user = user;
	sb_text(&p->hold, s, n);
	if (!oom(p))
		step(p, false);
	return oom(p) ? -ENOMEM : 0;
}

int chat_parser_finish(struct chat_parser *p, chat_delta_fn fn, void *user)
{
	int i;

	p->fn = fn;
	p->user = user;
	step(p, true);
	if (p->st == P_CALL) {
		abandon_call(p, &p->calls[p->n_calls - 1]);
		p->st = P_CONTENT;
	}
	/*
	 * The reply's trailing whitespace is the end of its last part, not
	 * whitespace between parts: it is kept, as completions keep it.
	 */
	if (p->ws.len) {
		bool think = p->st == P_THINK;

		sb_text(think ? &p->reasoning : &p->content, p->ws.p, p->ws.len);
		delta(p, think ? CHAT_DELTA_REASONING : CHAT_DELTA_CONTENT, 0, p->ws.p, p->ws.len);
		p->ws.len = 0;
	}
	free(p->out);
	p->out = calloc(p->n_calls ? p->n_calls : 1, sizeof(*p->out));
	if (!p->out || oom(p))
		return -ENOMEM;
	for (i = 0; i < p->n_calls; i++) {
		p->out[i].id = p->calls[i].id;
		p->out[i].name = sb_str(&p->calls[i].name);
		p->out[i].arguments = sb_str(&p->calls[i].args);
		p->out[i].complete = p->calls[i].complete;
	}
	return 0;
}

enum chat_phase chat_parser_phase(const struct chat_parser *p)
{
	if (p->st == P_START)
		return CHAT_PHASE_START;
	if (p->st == P_THINK)
		return CHAT_PHASE_THINK;
	return p->thought ? CHAT_PHASE_AFTER_THINK : CHAT_PHASE_NO_THINK;
}

const char *chat_parser_content(const struct chat_parser *p)
{
	return sb_str(&p->content);
}

const char *chat_parser_reasoning(const struct chat_parser *p)
{
	return sb_str(&p->reasoning);
}

int chat_parser_n_calls(const struct chat_parser *p)
{
	return p->n_calls;
}

const struct chat_tool_call *chat_parser_call(const struct chat_parser *p, int i)
{
	return p->out && i >= 0 && i < p->n_calls ? &p->out[i] : NULL;
}
