// SPDX-License-Identifier: MIT
/*
 * The prompt buffer with template ranges, and JSON written the way a
 * Hugging Face chat template's tojson writes it (Python json.dumps with
 * ensure_ascii=False), so that tools and arguments render byte for byte
 * as the model saw them in training.
 */
#include "chat_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sb_grow(struct sbuf *b, size_t n)
{
	size_t cap;
	char *np;

	if (b->oom || b->len + n + 1 <= b->cap)
		return;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + n + 1)
		cap *= 2;
	np = realloc(b->p, cap);
	if (!np) {
		b->oom = true;
		return;
	}
	b->p = np;
	b->cap = cap;
}

void sb_text(struct sbuf *b, const char *s, size_t n)
{
	sb_grow(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void sb_tmpl(struct sbuf *b, const char *s, size_t n)
{
	size_t off = b->len;

	if (!n)
		return;
	sb_text(b, s, n);
	if (b->oom)
		return;
	if (b->n_sp && b->sp[b->n_sp - 1].off + b->sp[b->n_sp - 1].len == off) {
		b->sp[b->n_sp - 1].len += n;
		return;
	}
	if (b->n_sp == b->cap_sp) {
		size_t cap = b->cap_sp ? 2 * b->cap_sp : 32;
		struct tok_span *ns = realloc(b->sp, cap * sizeof(*ns));

		if (!ns) {
			b->oom = true;
			return;
		}
		b->sp = ns;
		b->cap_sp = cap;
	}
	b->sp[b->n_sp++] = (struct tok_span){ .off = off, .len = n };
}

static void put_char(struct sbuf *b, char c)
{
	sb_text(b, &c, 1);
}

/* A JSON string literal with Python's escapes. */
static void dump_string(struct sbuf *b, const char *s, size_t n)
{
	size_t i;

	put_char(b, '"');
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];

		switch (c) {
		case '"': sb_text(b, "\\\"", 2); break;
		case '\\': sb_text(b, "\\\\", 2); break;
		case '\n': sb_text(b, "\\n", 2); break;
		case '\r': sb_text(b, "\\r", 2); break;
		case '\t': sb_text(b, "\\t", 2); break;
		case '\b': sb_text(b, "\\b", 2); break;
		case '\f': sb_text(b, "\\f", 2); break;
		default:
			if (c < 0x20) {
				snprintf(esc, sizeof(esc), "\\u%04x", c);
				sb_text(b, esc, 6);
			} else {
				put_char(b, (char)c);
			}
		}
	}
	put_char(b, '"');
}

/*
 * Python repr() of a float: the shortest digits that read back; fixed
 * notation for exponents -4..15 (with ".0" when integral), else d.ddde+XX.
 */
static void dump_real(struct sbuf *b, double d)
{
	char s[48], dig[24], out[64];
	int prec, e, nd = 0, i, o = 0;
	char *p;

	if (isnan(d) || isinf(d)) {
		sb_texts(b, isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
		return;
	}
	for (prec = 0; prec < 17; prec++) {
		snprintf(s, sizeof(s), "%.*e", prec, d);
		if (strtod(s, NULL) == d)
			break;
	}
	p = s;
	if (*p == '-')
		out[o++] = *p++;
	for (; *p && *p != 'e'; p++)
		if (*p != '.')
			dig[nd++] = *p;
	e = atoi(p + 1);
	while (nd > 1 && dig[nd - 1] == '0')
		nd--;
	if (e >= -4 && e < 16) {
		if (e < 0) {
			o += snprintf(out + o, sizeof(out) - o, "0.");
			for (i = -1; i > e; i--)
				out[o++] = '0';
			for (i = 0; i < nd; i++)
				out[o++] = dig[i];
		} else {
			for (i = 0; i <= e; i++)
				out[o++] = i < nd ? dig[i] : '0';
			out[o++] = '.';
			if (nd > e + 1)
				for (i = e + 1; i < nd; i++)
					out[o++] = dig[i];
			else
				out[o++] = '0';
		}
		out[o] = '\0';
	} else {
		out[o++] = dig[0];
		if (nd > 1) {
			out[o++] = '.';
			for (i = 1; i < nd; i++)
				out[o++] = dig[i];
		}
		snprintf(out + o, sizeof(out) - o, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
	}
	sb_texts(b, out);
}

void chat_json_dump(struct sbuf *b, const json_t *v)
{
	const char *key;
	json_t *val;
	size_t i;
	char num[32];
	bool first = true;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		put_char(b, '{');
		json_object_foreach((json_t *)v, key, val) {
			if (!first)
				sb_text(b, ", ", 2);
			first = false;
			dump_string(b, key, strlen(key));
			sb_text(b, ": ", 2);
			chat_json_dump(b, val);
		}
		put_char(b, '}');
		break;
	case JSON_ARRAY:
		put_char(b, '[');
		for (i = 0; i < json_array_size(v); i++) {
			if (i)
				sb_text(b, ", ", 2);
			chat_json_dump(b, json_array_get(v, i));
		}
		put_char(b, ']');
		break;
	case JSON_STRING:
		dump_string(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		sb_texts(b, num);
		break;
	case JSON_REAL:
		dump_real(b, json_real_value(v));
		break;
	case JSON_TRUE:
		sb_texts(b, "true");
		break;
	case JSON_FALSE:
		sb_texts(b, "false");
		break;
	default:
		sb_texts(b, "null");
		break;
	}
}

void chat_json_str(struct sbuf *b, const json_t *v)
{
	char num[32];

	switch (json_typeof(v)) {
	case JSON_STRING:
		sb_text(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		sb_texts(b, num);
		break;
	case JSON_REAL:
		dump_real(b, json_real_value(v));
		break;
	case JSON_TRUE:
		sb_texts(b, "True");
		break;
	case JSON_FALSE:
		sb_texts(b, "False");
		break;
	case JSON_NULL:
		sb_texts(b, "None");
		break;
	default:
		chat_json_dump(b, v);
		break;
	}
}

void chat_json_call(struct sbuf *b, const struct chat_tool_call *c, bool tags_tmpl)
{
	void (*tag)(struct sbuf *b, const char *s) = tags_tmpl ? sb_tmpls : sb_texts;
	json_error_t je;
	json_t *a = c->arguments ? json_loads(c->arguments, JSON_DECODE_ANY, &je) : NULL;

	tag(b, "<tool_call>\n{\"name\": \"");
	sb_texts(b, c->name ? c->name : "");
	tag(b, "\", \"arguments\": ");
	if (a)
		chat_json_dump(b, a);	/* as tojson writes an object */
	else
		sb_texts(b, c->arguments && *c->arguments ? c->arguments : "{}");
	tag(b, "}\n</tool_call>");
	json_decref(a);
}
