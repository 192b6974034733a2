// SPDX-License-Identifier: MIT
/*
 * JSON-schema "pattern" (jsonregex.h): an ECMA-262 regular expression
 * parsed into a syntax tree, built into a Thompson NFA over code-point
 * sets, then into a DFA by the subset construction over the alphabet's
 * classes (the intervals between the sets' boundaries), trimmed to the
 * states from which a match is reachable, and given a table of the
 * lengths at which each state can still match when the string has
 * length bounds. References: ECMA-262 section 22.2 (RegExp, the u flag),
 * Thompson (CACM 11(6), 1968), Aho/Sethi/Ullman's subset construction.
 */
#include "jsonregex.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NEST	64	/* groups in groups */

struct range {
	uint32_t lo, hi;
};

/* A set of code points: sorted, disjoint, non-adjacent ranges after norm(). */
struct cset {
	struct range *r;
	int n, cap;
};

enum { RA_SET, RA_CAT, RA_ALT, RA_REP, RA_BOL, RA_EOL, RA_EMPTY };

/*
 * A syntax-tree node: RA_SET: @set; RA_CAT / RA_ALT: @n kids at
 * kids[@kid..]; RA_REP: kid @kid, @min..@max (-1: unbounded).
 */
struct ast {
	uint8_t op;
	int kid, n;
	int min, max;
	int set;
};

struct parser {
	const char *s, *p, *end;
	struct ast *ast;
	int n_ast, cap_ast;
	int *kids;
	int n_kids, cap_kids;
	struct cset *sets;
	int n_sets, cap_sets;
	char *err;
	size_t errlen;
	bool failed;
};

/* NFA states: an epsilon edge (@out), a split (@out, @out2), a code-point set, assertions. */
enum { NS_EPS, NS_SPLIT, NS_SET, NS_BOL, NS_EOL, NS_MATCH };

struct nst {
	uint8_t kind;
	int set;
	int out, out2;
};

struct nfa {
	struct nst *st;
	int n, cap;
};

/**
 * struct jm_re - see jsonregex.h
 * @n_states: DFA states (0 is the start)
 * @n_cls: alphabet classes; class i is [bound[i], bound[i + 1] - 1]
 * @bound: @n_cls + 1 boundaries, bound[0] = 0, bound[n_cls] = 0x110000
 * @next: @n_states x @n_cls targets (UINT16_MAX: none)
 * @accept: per state, a string ending there matches
 * @min_len, @max_len: the string's bounds
 * @len_bits: when the bounds constrain: bits 0..@len_top of each state:
 *	bit l of state s set when some string of l more code points goes
 *	from s to an accepting state (@len_words words a state); NULL: none
 */
struct jm_re {
	uint32_t n_states, n_cls;
	uint32_t *bound;
	uint16_t *next;
	uint8_t *accept;
	uint32_t min_len, max_len;
	uint64_t *len_bits;
	uint32_t len_top, len_words;
};

static int perr(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(struct parser *ps, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	if (ps->failed)
		return -1;
	ps->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->errlen)
		snprintf(ps->err, ps->errlen, "%s (at offset %ld)", msg, (long)(ps->p - ps->s));
	return -1;
}

static void *grow(void *p, int *cap, int need, size_t size)
{
	int c = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return p;
	while (c < need)
		c *= 2;
	q = realloc(p, (size_t)c * size);
	if (q)
		*cap = c;
	return q;
}

/* ---------------------------------------------------------------- sets */

static int set_add(struct cset *cs, uint32_t lo, uint32_t hi)
{
	struct range *r = grow(cs->r, &cs->cap, cs->n + 1, sizeof(*r));

	if (!r)
		return -1;
	cs->r = r;
	cs->r[cs->n++] = (struct range){ lo, hi };
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sort and merge overlapping or adjacent ranges. */
static void set_norm(struct cset *cs)
{
	int i, k = 0;

	if (cs->n < 2)
		return;
	qsort(cs->r, (size_t)cs->n, sizeof(*cs->r), cmp_range);
	for (i = 1; i < cs->n; i++) {
		if (cs->r[i].lo <= cs->r[k].hi + 1) {
			if (cs->r[i].hi > cs->r[k].hi)
				cs->r[k].hi = cs->r[i].hi;
		} else {
			cs->r[++k] = cs->r[i];
		}
	}
	cs->n = k + 1;
}

/* @cs := every code point not in @cs (normalised first). */
static int set_negate(struct cset *cs)
{
	struct cset o = { 0 };
	uint32_t at = 0;
	int i;

	set_norm(cs);
	for (i = 0; i < cs->n; i++) {
		if (cs->r[i].lo > at && set_add(&o, at, cs->r[i].lo - 1))
			goto oom;
		at = cs->r[i].hi + 1;
	}
	if (at <= JM_RE_MAX_CP && set_add(&o, at, JM_RE_MAX_CP))
		goto oom;
	free(cs->r);
	*cs = o;
	return 0;
oom:
	free(o.r);
	return -1;
}

/* The class escapes: \d, \w, \s and '.' (ECMA-262 22.2.2.9, WhiteSpace and LineTerminator). */
static int set_named(struct cset *cs, char k)
{
	static const struct range digit[] = { { '0', '9' } };
	static const struct range word[] = { { '0', '9' }, { 'A', 'Z' }, { '_', '_' }, { 'a', 'z' } };
	static const struct range space[] = {
		{ 0x09, 0x0d }, { 0x20, 0x20 }, { 0xa0, 0xa0 }, { 0x1680, 0x1680 },
		{ 0x2000, 0x200a }, { 0x2028, 0x2029 }, { 0x202f, 0x202f }, { 0x205f, 0x205f },
		{ 0x3000, 0x3000 }, { 0xfeff, 0xfeff },
	};
	static const struct range dot[] = {
		{ 0, 0x09 }, { 0x0b, 0x0c }, { 0x0e, 0x2027 }, { 0x202a, JM_RE_MAX_CP },
	};
	const struct range *r;
	size_t i, n;

	switch (k | 0x20) {
	case 'd': r = digit; n = 1; break;
	case 'w': r = word; n = 4; break;
	case 's': r = space; n = sizeof(space) / sizeof(space[0]); break;
	default: r = dot; n = 4; break;
	}
	if (k >= 'A' && k <= 'Z') {
		struct cset t = { 0 };

		for (i = 0; i < n; i++)
			if (set_add(&t, r[i].lo, r[i].hi))
				return -1;
		if (set_negate(&t))
			return -1;
		for (i = 0; i < (size_t)t.n; i++)
			if (set_add(cs, t.r[i].lo, t.r[i].hi)) {
				free(t.r);
				return -1;
			}
		free(t.r);
		return 0;
	}
	for (i = 0; i < n; i++)
		if (set_add(cs, r[i].lo, r[i].hi))
			return -1;
	return 0;
}

/* -------------------------------------------------------------- parser */

static int new_ast(struct parser *ps, int op)
{
	struct ast *a = grow(ps->ast, &ps->cap_ast, ps->n_ast + 1, sizeof(*a));

	if (!a)
		return perr(ps, "out of memory");
	ps->ast = a;
	a[ps->n_ast] = (struct ast){ .op = (uint8_t)op, .set = -1 };
	return ps->n_ast++;
}

static int new_set(struct parser *ps)
{
	struct cset *s = grow(ps->sets, &ps->cap_sets, ps->n_sets + 1, sizeof(*s));

	if (!s)
		return perr(ps, "out of memory");
	ps->sets = s;
	s[ps->n_sets] = (struct cset){ 0 };
	return ps->n_sets++;
}

/* A node matching the set @set (already filled). */
static int set_node(struct parser *ps, int set)
{
	int a = new_ast(ps, RA_SET);

	if (a >= 0)
		ps->ast[a].set = set;
	return a;
}

/* The next code point of the pattern (UTF-8; the JSON decoder checked it). */
static uint32_t next_cp(struct parser *ps)
{
	const uint8_t *p = (const uint8_t *)ps->p;
	uint32_t cp = *p;
	int n = cp < 0x80 ? 0 : cp < 0xe0 ? 1 : cp < 0xf0 ? 2 : 3;

	if (n)
		cp &= 0x3f >> n;
	if ((const char *)p + n >= ps->end)
		n = (int)(ps->end - (const char *)p) - 1;
	for (ps->p++; n > 0; n--)
		cp = cp << 6 | (*(const uint8_t *)ps->p++ & 0x3f);
	return cp;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* @n hex digits at ps->p into *@cp; false when they are not there. */
static bool hexn(struct parser *ps, int n, uint32_t *cp)
{
	int i;

	*cp = 0;
	if (ps->end - ps->p < n)
		return false;
	for (i = 0; i < n; i++) {
		int h = hexval(ps->p[i]);

		if (h < 0)
			return false;
		*cp = *cp << 4 | (uint32_t)h;
	}
	ps->p += n;
	return true;
}

/* \u after the backslash and 'u': \uHHHH (a surrogate pair joined) or \u{H...}. */
static int esc_unicode(struct parser *ps, uint32_t *cp)
{
	uint32_t lo;

	if (ps->p < ps->end && *ps->p == '{') {
		*cp = 0;
		for (ps->p++; ps->p < ps->end && *ps->p != '}'; ps->p++) {
			int h = hexval(*ps->p);

			if (h < 0 || *cp > JM_RE_MAX_CP >> 4)
				return perr(ps, "'\\u{...}' must be hexadecimal digits up to 10FFFF");
			*cp = *cp << 4 | (uint32_t)h;
		}
		if (ps->p == ps->end)
			return perr(ps, "'\\u{' is not closed");
		ps->p++;
		return *cp > JM_RE_MAX_CP ? perr(ps, "'\\u{...}' is beyond 10FFFF") : 0;
	}
	if (!hexn(ps, 4, cp))
		return perr(ps, "'\\u' must be followed by 4 hexadecimal digits");
	if (*cp >= 0xd800 && *cp <= 0xdbff && ps->end - ps->p >= 6 && ps->p[0] == '\\' &&
	    ps->p[1] == 'u') {
		const char *save = ps->p;

		ps->p += 2;
		if (hexn(ps, 4, &lo) && lo >= 0xdc00 && lo <= 0xdfff)
			*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
		else
			ps->p = save;
	}
	return 0;
}

/*
 * An escape after '\\' (consumed): a code point into *@cp (return 0) or
 * a class into set @set (return 1), -1 on error. @in_class: inside
 * [...], where \b is backspace and '-' may be escaped.
 */
static int escape(struct parser *ps, bool in_class, uint32_t *cp, int set)
{
	static const char syntax[] = "^$\\.*+?()[]{}|/";
	char c;

	if (ps->p == ps->end)
		return perr(ps, "the pattern ends with a lone '\\'");
	c = *ps->p++;
	switch (c) {
	case 'd': case 'D': case 'w': case 'W': case 's': case 'S':
		if (set_named(&ps->sets[set], c))
			return perr(ps, "out of memory");
		return 1;
	case 't': *cp = '\t'; return 0;
	case 'n': *cp = '\n'; return 0;
	case 'v': *cp = '\v'; return 0;
	case 'f': *cp = '\f'; return 0;
	case 'r': *cp = '\r'; return 0;
	case 'x':
		return hexn(ps, 2, cp) ? 0 : perr(ps, "'\\x' must be followed by 2 hexadecimal digits");
	case 'u':
		return esc_unicode(ps, cp);
	case 'c':
		if (ps->p < ps->end && ((*ps->p | 0x20) >= 'a' && (*ps->p | 0x20) <= 'z')) {
			*cp = (uint32_t)(*ps->p++ % 32);
			return 0;
		}
		return perr(ps, "'\\c' must be followed by a letter");
	case '0':
		if (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
			return perr(ps, "octal escape '\\0%c' is not supported", *ps->p);
		*cp = 0;
		return 0;
	case 'b':
		if (in_class) {
			*cp = '\b';
			return 0;
		}
		return perr(ps, "word boundary '\\b' is not supported");
	case 'B':
		return perr(ps, "word boundary '\\B' is not supported");
	case 'k':
		return perr(ps, "back-reference '\\k' is not supported");
	case 'p': case 'P':
		return perr(ps, "Unicode property escape '\\%c' is not supported", c);
	default:
		break;
	}
	if (c >= '1' && c <= '9')
		return perr(ps, "back-reference '\\%c' is not supported", c);
	if ((c && strchr(syntax, c)) || (in_class && c == '-')) {
		*cp = (uint8_t)c;
		return 0;
	}
	ps->p--;
	if ((uint8_t)c >= 0x80)
		return perr(ps, "escape '\\' before a non-ASCII character is not supported");
	return perr(ps, "escape '\\%c' is not supported", c);
}

/* One class atom: a code point (0) or a class escape added to @set (1). */
static int class_atom(struct parser *ps, uint32_t *cp, int set)
{
	if (*ps->p == '\\') {
		ps->p++;
		return escape(ps, true, cp, set);
	}
	*cp = next_cp(ps);
	return 0;
}

/* [...] after '[' (consumed). */
static int parse_class(struct parser *ps)
{
	bool neg = false;
	uint32_t lo, hi;
	int set = new_set(ps), k;

	if (set < 0)
		return -1;
	if (ps->p < ps->end && *ps->p == '^') {
		neg = true;
		ps->p++;
	}
	for (;;) {
		if (ps->p == ps->end)
			return perr(ps, "a '[' is not closed");
		if (*ps->p == ']')
			break;
		k = class_atom(ps, &lo, set);
		if (k < 0)
			return -1;
		if (k == 1) {
			if (ps->p + 1 < ps->end && *ps->p == '-' && ps->p[1] != ']')
				return perr(ps, "a class escape cannot start a range");
			continue;
		}
		hi = lo;
		if (ps->p + 1 < ps->end && *ps->p == '-' && ps->p[1] != ']') {
			ps->p++;
			k = class_atom(ps, &hi, set);
			if (k < 0)
				return -1;
			if (k == 1)
				return perr(ps, "a class escape cannot end a range");
			if (hi < lo)
				return perr(ps, "a range out of order in a class");
		}
		if (set_add(&ps->sets[set], lo, hi))
			return perr(ps, "out of memory");
	}
	ps->p++;
	if (neg && set_negate(&ps->sets[set]))
		return perr(ps, "out of memory");
	set_norm(&ps->sets[set]);
	return set_node(ps, set);
}

static int parse_alt(struct parser *ps, int depth);

/* (...) after '(' (consumed). */
static int parse_group(struct parser *ps, int depth)
{
	int a;

	if (depth >= MAX_NEST)
		return perr(ps, "groups nested deeper than %d", MAX_NEST);
	if (ps->p < ps->end && *ps->p == '?') {
		const char *q = ps->p + 1;

		ps->p--;	/* an error points at the '(' */
		if (q < ps->end && *q == ':') {
			ps->p += 3;
		} else if (q < ps->end && (*q == '=' || *q == '!')) {
			return perr(ps, "look-ahead '(?%c' is not supported", *q);
		} else if (q + 1 < ps->end && *q == '<' && (q[1] == '=' || q[1] == '!')) {
			return perr(ps, "look-behind '(?<%c' is not supported", q[1]);
		} else if (q < ps->end && (*q == '<' || (*q == 'P' && q + 1 < ps->end && q[1] == '<'))) {
			/* A named group: the name does not change the language. */
			const char *e = memchr(q, '>', (size_t)(ps->end - q));

			if (!e)
				return perr(ps, "a group name is not closed with '>'");
			ps->p = e + 1;
		} else {
			return perr(ps, "group '(?%.1s' (inline flags and other extensions) is not supported",
				    q < ps->end ? q : "");
		}
	}
	a = parse_alt(ps, depth + 1);
	if (a < 0)
		return -1;
	if (ps->p == ps->end || *ps->p != ')')
		return perr(ps, "a '(' is not closed");
	ps->p++;
	return a;
}

/* A decimal number of a {n,m} quantifier; -1 when none is there. */
static long quant_num(struct parser *ps)
{
	long v = -1;

	while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
		v = (v < 0 ? 0 : v) * 10 + (*ps->p++ - '0');
		if (v > 1000000)
			v = 1000000;
	}
	return v;
}

/* {n}, {n,}, {n,m} at ps->p: 1 with the bounds, 0 when it is not one (a literal '{'). */
static int parse_braces(struct parser *ps, int *min, int *max)
{
	const char *save = ps->p;
	long n, m;

	ps->p++;
	n = quant_num(ps);
	m = n;
	if (n >= 0 && ps->p < ps->end && *ps->p == ',') {
		ps->p++;
		m = quant_num(ps);
	}
	if (n < 0 || ps->p == ps->end || *ps->p != '}') {
		ps->p = save;
		return 0;
	}
	ps->p++;
	if (n > JM_RE_MAX_REPEAT || m > JM_RE_MAX_REPEAT)
		return perr(ps, "a repetition bound above %d is not supported", JM_RE_MAX_REPEAT);
	if (m >= 0 && m < n)
		return perr(ps, "a repetition {%ld,%ld} out of order", n, m);
	*min = (int)n;
	*max = (int)m;
	return 1;
}

/* Quantifiers after the atom @a. */
static int parse_quant(struct parser *ps, int a)
{
	while (ps->p < ps->end) {
		int min, max, r;
		char c = *ps->p;

		if (c == '*' || c == '+' || c == '?') {
			ps->p++;
			min = c == '+';
			max = c == '?' ? 1 : -1;
		} else if (c == '{') {
			r = parse_braces(ps, &min, &max);
			if (r <= 0)
				return r < 0 ? -1 : a;
		} else {
			return a;
		}
		if (ps->ast[a].op == RA_BOL || ps->ast[a].op == RA_EOL)
			return perr(ps, "a quantifier after an anchor is not supported");
		if (ps->p < ps->end && *ps->p == '?')
			ps->p++;	/* lazy: the same language */
		r = new_ast(ps, RA_REP);
		if (r < 0)
			return -1;
		ps->ast[r].kid = a;
		ps->ast[r].min = min;
		ps->ast[r].max = max;
		a = r;
	}
	return a;
}

static int parse_atom(struct parser *ps, int depth)
{
	uint32_t cp;
	int set, k;
	char c = *ps->p;

	switch (c) {
	case '(':
		ps->p++;
		return parse_group(ps, depth);
	case '[':
		ps->p++;
		return parse_class(ps);
	case '^':
		ps->p++;
		return new_ast(ps, RA_BOL);
	case '$':
		ps->p++;
		return new_ast(ps, RA_EOL);
	case '*': case '+': case '?':
		return perr(ps, "'%c' has nothing to repeat", c);
	case ')':
		return perr(ps, "a ')' has no '('");
	default:
		break;
	}
	set = new_set(ps);
	if (set < 0)
		return -1;
	if (c == '.') {
		ps->p++;
		if (set_named(&ps->sets[set], '.'))
			return perr(ps, "out of memory");
	} else if (c == '\\') {
		ps->p++;
		k = escape(ps, false, &cp, set);
		if (k < 0)
			return -1;
		if (!k && set_add(&ps->sets[set], cp, cp))
			return perr(ps, "out of memory");
	} else {
		if (c == '{') {
			int min, max;
			const char *save = ps->p;

			if (parse_braces(ps, &min, &max) != 0) {
				ps->p = save;
				return perr(ps, "'{' has nothing to repeat");
			}
		}
		cp = next_cp(ps);
		if (set_add(&ps->sets[set], cp, cp))
			return perr(ps, "out of memory");
	}
	set_norm(&ps->sets[set]);
	return set_node(ps, set);
}

/* Append @n entries of @v as the kids of node @a (@op RA_CAT or RA_ALT). */
static int make_list(struct parser *ps, int op, const int *v, int n)
{
	int a, i, *k;

	if (n == 1)
		return v[0];
	a = new_ast(ps, n ? op : RA_EMPTY);
	if (a < 0 || !n)
		return a;
	k = grow(ps->kids, &ps->cap_kids, ps->n_kids + n, sizeof(*k));
	if (!k)
		return perr(ps, "out of memory");
	ps->kids = k;
	for (i = 0; i < n; i++)
		k[ps->n_kids + i] = v[i];
	ps->ast[a].kid = ps->n_kids;
	ps->ast[a].n = n;
	ps->n_kids += n;
	return a;
}

/* A list of node indices being collected. */
struct ivec {
	int *v;
	int n, cap;
};

static int ivec_push(struct parser *ps, struct ivec *l, int x)
{
	int *v = grow(l->v, &l->cap, l->n + 1, sizeof(*v));

	if (!v)
		return perr(ps, "out of memory");
	l->v = v;
	l->v[l->n++] = x;
	return 0;
}

static int parse_cat(struct parser *ps, int depth)
{
	struct ivec l = { 0 };
	int a;

	while (ps->p < ps->end && *ps->p != '|' && *ps->p != ')') {
		a = parse_atom(ps, depth);
		if (a >= 0)
			a = parse_quant(ps, a);
		if (a < 0 || ivec_push(ps, &l, a)) {
			free(l.v);
			return -1;
		}
	}
	a = make_list(ps, RA_CAT, l.v, l.n);
	free(l.v);
	return a;
}

static int parse_alt(struct parser *ps, int depth)
{
	struct ivec l = { 0 };
	int a;

	for (;;) {
		a = parse_cat(ps, depth);
		if (a < 0 || ivec_push(ps, &l, a)) {
			free(l.v);
			return -1;
		}
		if (ps->p == ps->end || *ps->p != '|')
			break;
		ps->p++;
	}
	a = make_list(ps, RA_ALT, l.v, l.n);
	free(l.v);
	return a;
}

/* ----------------------------------------------------------------- NFA */

static int nst_new(struct nfa *f, struct parser *ps, int kind, int out)
{
	struct nst *s;

	if (f->n >= JM_RE_MAX_NFA)
		return perr(ps, "too large: its automaton would have more than %d states",
			    JM_RE_MAX_NFA);
	s = grow(f->st, &f->cap, f->n + 1, sizeof(*s));
	if (!s)
		return perr(ps, "out of memory");
	f->st = s;
	s[f->n] = (struct nst){ .kind = (uint8_t)kind, .set = -1, .out = out, .out2 = -1 };
	return f->n++;
}

/* Thompson's construction of node @a, continuing to state @to; returns its entry. */
static int build(struct nfa *f, struct parser *ps, int a, int to)
{
	const struct ast *n = &ps->ast[a];
	int i, s, t = to;

	switch (n->op) {
	case RA_SET:
		s = nst_new(f, ps, NS_SET, to);
		if (s >= 0)
			f->st[s].set = n->set;
		return s;
	case RA_BOL:
	case RA_EOL:
		return nst_new(f, ps, n->op == RA_BOL ? NS_BOL : NS_EOL, to);
	case RA_EMPTY:
		return to;
	case RA_CAT:
		for (i = n->n - 1; i >= 0 && t >= 0; i--)
			t = build(f, ps, ps->kids[n->kid + i], t);
		return t;
	case RA_ALT:
		s = nst_new(f, ps, NS_EPS, -1);
		for (i = 0; i < n->n && s >= 0; i++) {
			int e = build(f, ps, ps->kids[n->kid + i], to), sp;

			if (e < 0)
				return -1;
			sp = nst_new(f, ps, NS_SPLIT, e);
			if (sp < 0)
				return -1;
			f->st[sp].out2 = f->st[s].out;
			f->st[s].out = sp;
		}
		return s;
	default:	/* RA_REP */
		break;
	}
	if (n->max < 0) {
		/* The loop of X* at the end: a split into X (back to it) or on. */
		s = nst_new(f, ps, NS_SPLIT, -1);
		if (s < 0)
			return -1;
		f->st[s].out2 = to;
		i = build(f, ps, n->kid, s);
		if (i < 0)
			return -1;
		f->st[s].out = i;
		t = s;
	} else {
		/* (X(X(X)?)?)? for the optional copies, built from the end. */
		for (i = 0; i < n->max - n->min && t >= 0; i++) {
			int e = build(f, ps, n->kid, t);

			s = e < 0 ? -1 : nst_new(f, ps, NS_SPLIT, e);
			if (s < 0)
				return -1;
			f->st[s].out2 = to;
			t = s;
		}
	}
	for (i = 0; i < n->min && t >= 0; i++)
		t = build(f, ps, n->kid, t);
	return t;
}

/* ----------------------------------------------------------------- DFA */

/**
 * struct dfa_build - the subset construction
 * @f: the NFA
 * @sets: the code-point sets of its NS_SET states
 * @words: 64-bit words of one NFA state set
 * @set_of: @n x @words: the NFA state set of each DFA state
 * @n, @cap: DFA states so far
 * @hash, @hcap: open addressing over @set_of (index + 1, 0 empty)
 * @stack: closure work list
 * @work: steps so far (bounded by JM_RE_MAX_WORK: a hostile pattern is
 *	refused rather than compiled for seconds)
 */
struct dfa_build {
	const struct nfa *f;
	const struct cset *sets;
	int words;
	uint64_t *set_of;
	int n, cap;
	int *hash;
	int hcap;
	int *stack;
	uint64_t work;
};

/*
 * The epsilon closure of @set in place: through ^ only at the start, and
 * through $ only when testing for a match (@at_end).
 */
static void closure(struct dfa_build *b, uint64_t *set, bool at_start, bool at_end)
{
	int top = 0, i;

	for (i = 0; i < b->words; i++) {
		uint64_t w = set[i];

		while (w) {
			b->stack[top++] = i * 64 + __builtin_ctzll(w);
			w &= w - 1;
		}
	}
	while (top) {
		const struct nst *s = &b->f->st[b->stack[--top]];
		int o[2] = { -1, -1 }, k;

		b->work++;
		if (s->kind == NS_EPS || s->kind == NS_SPLIT)
			o[0] = s->out, o[1] = s->out2;
		else if ((s->kind == NS_BOL && at_start) || (s->kind == NS_EOL && at_end))
			o[0] = s->out;
		for (k = 0; k < 2; k++) {
			if (o[k] < 0 || (set[o[k] / 64] >> (o[k] % 64) & 1))
				continue;
			set[o[k] / 64] |= 1ull << (o[k] % 64);
			b->stack[top++] = o[k];
		}
	}
}

static uint64_t hash_set(const uint64_t *s, int words)
{
	uint64_t h = 1469598103934665603ull;
	int i;

	for (i = 0; i < words; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h;
}

/* The DFA state of NFA set @s (added when new); -1 beyond JM_RE_MAX_DFA or out of memory. */
static int dfa_state(struct dfa_build *b, const uint64_t *s)
{
	size_t bytes = (size_t)b->words * sizeof(uint64_t);
	uint64_t h = hash_set(s, b->words);
	int i = (int)(h % (uint64_t)b->hcap);
	uint64_t *ns;

	for (; b->hash[i]; i = (i + 1) % b->hcap)
		if (!memcmp(b->set_of + (size_t)(b->hash[i] - 1) * b->words, s, bytes))
			return b->hash[i] - 1;
	if (b->n >= JM_RE_MAX_DFA)
		return -1;
	if (b->n == b->cap) {
		int cap = b->cap ? 2 * b->cap : 64;

		ns = realloc(b->set_of, (size_t)cap * bytes);
		if (!ns)
			return -1;
		b->set_of = ns;
		b->cap = cap;
	}
	memcpy(b->set_of + (size_t)b->n * b->words, s, bytes);
	b->hash[i] = b->n + 1;
	return b->n++;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The alphabet's classes: every boundary of every set. */
static int make_classes(struct jm_re *re, const struct cset *sets, int n_sets)
{
	int i, k, n = 2;
	uint32_t *b;

	for (i = 0; i < n_sets; i++)
		n += 2 * sets[i].n;
	b = malloc((size_t)n * sizeof(*b));
	if (!b)
		return -1;
	n = 0;
	b[n++] = 0;
	b[n++] = JM_RE_MAX_CP + 1;
	for (i = 0; i < n_sets; i++)
		for (k = 0; k < sets[i].n; k++) {
			b[n++] = sets[i].r[k].lo;
			b[n++] = sets[i].r[k].hi + 1;
		}
	qsort(b, (size_t)n, sizeof(*b), cmp_u32);
	for (i = 1, k = 1; i < n; i++)
		if (b[i] != b[k - 1])
			b[k++] = b[i];
	re->bound = b;
	re->n_cls = (uint32_t)k - 1;
	return 0;
}

static uint32_t class_of(const struct jm_re *re, uint32_t cp)
{
	uint32_t lo = 0, hi = re->n_cls;

	while (hi - lo > 1) {
		uint32_t m = (lo + hi) / 2;

		if (cp < re->bound[m])
			hi = m;
		else
			lo = m;
	}
	return lo;
}

/* Grow the transition table and the accept flags to @cap states; -1 when it would be too large. */
static int grow_table(struct jm_re *re, uint16_t **next, uint8_t **acc, int cap, char *err,
		      size_t errlen)
{
	uint16_t *nn;
	uint8_t *na;

	if ((size_t)cap * re->n_cls > (size_t)JM_RE_MAX_DFA * 512) {
		snprintf(err, errlen, "too large: its automaton's table would exceed %d entries",
			 JM_RE_MAX_DFA * 512);
		return -1;
	}
	nn = realloc(*next, (size_t)cap * re->n_cls * sizeof(*nn));
	if (nn)
		*next = nn;
	na = realloc(*acc, (size_t)cap);
	if (na)
		*acc = na;
	if (!nn || !na) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/*
 * The transitions of DFA state @s: each NS_SET member adds its target to
 * the NFA set of every class its code points cover (@to, a set per
 * class; @touched lists the classes used, @mark flags them), then each
 * used class's set is closed and looked up. 0, or -1 with @err.
 */
static int transitions(struct dfa_build *b, struct jm_re *re, int s, uint16_t *row, uint64_t *to,
		       uint32_t *touched, uint8_t *mark, char *err, size_t errlen)
{
	const uint64_t *from = b->set_of + (size_t)s * b->words;
	uint32_t n_touched = 0, c, k;
	int i, r, t;

	for (c = 0; c < re->n_cls; c++)
		row[c] = UINT16_MAX;
	for (i = 0; i < b->words; i++) {
		uint64_t w = from[i];

		while (w) {
			const struct nst *q = &b->f->st[i * 64 + __builtin_ctzll(w)];
			const struct cset *cs;

			w &= w - 1;
			if (q->kind != NS_SET)
				continue;
			cs = &b->sets[q->set];
			for (r = 0; r < cs->n; r++)
				for (c = class_of(re, cs->r[r].lo); c < re->n_cls && re->bound[c] <= cs->r[r].hi;
				     c++) {
					if (!mark[c]) {
						mark[c] = 1;
						touched[n_touched++] = c;
					}
					to[(size_t)c * b->words + q->out / 64] |= 1ull << (q->out % 64);
					b->work++;
				}
		}
	}
	for (k = 0; k < n_touched; k++) {
		uint64_t *set = to + (size_t)touched[k] * b->words;

		closure(b, set, false, false);
		t = b->work > JM_RE_MAX_WORK ? -1 : dfa_state(b, set);
		memset(set, 0, (size_t)b->words * sizeof(*set));
		mark[touched[k]] = 0;
		if (t < 0) {
			if (b->work > JM_RE_MAX_WORK)
				snprintf(err, errlen, "too large: the schema's patterns take more than %d steps to build",
					 JM_RE_MAX_WORK);
			else if (b->n >= JM_RE_MAX_DFA)
				snprintf(err, errlen, "too large: its automaton would have more than %d states",
					 JM_RE_MAX_DFA);
			else
				snprintf(err, errlen, "out of memory");
			for (k++; k < n_touched; k++)
				mark[touched[k]] = 0;	/* (@to is freed by the caller) */
			return -1;
		}
		row[touched[k]] = (uint16_t)t;
	}
	return 0;
}

/* The subset construction; 0, or -1 with @err (too many states, out of memory). */
static int subsets(struct dfa_build *b, struct jm_re *re, uint8_t **acc, char *err, size_t errlen)
{
	size_t bytes = (size_t)b->words * sizeof(uint64_t);
	uint64_t *cur = calloc(1, bytes), *to = NULL;
	uint32_t *touched = malloc((size_t)re->n_cls * sizeof(*touched));
	uint8_t *mark = calloc(re->n_cls, 1), *a = NULL;
	uint16_t *next = NULL;
	int s, cap = 0, ret = -1;

	if ((size_t)re->n_cls * b->words > (1u << 19)) {
		snprintf(err, errlen, "too large: %u character classes over %d automaton states",
			 re->n_cls, b->f->n);
		goto out;
	}
	to = calloc(re->n_cls, bytes);
	if (!cur || !to || !touched || !mark) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	cur[0] = 1;	/* NFA entry: state 0 (see jm_re_compile()) */
	closure(b, cur, true, false);
	if (dfa_state(b, cur) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (s = 0; s < b->n; s++) {
		if (s >= cap) {
			cap = cap ? 2 * cap : 64;
			if (grow_table(re, &next, &a, cap, err, errlen))
				goto out;
		}
		/* A match ends here when the closure through $ reaches NS_MATCH (the last state). */
		memcpy(cur, b->set_of + (size_t)s * b->words, bytes);
		closure(b, cur, s == 0, true);
		a[s] = (cur[(b->f->n - 1) / 64] >> ((b->f->n - 1) % 64)) & 1;
		if (transitions(b, re, s, next + (size_t)s * re->n_cls, to, touched, mark, err, errlen))
			goto out;
	}
	re->n_states = (uint32_t)b->n;
	re->next = next;
	*acc = a;
	next = NULL;
	a = NULL;
	ret = 0;
out:
	free(next);
	free(a);
	free(cur);
	free(to);
	free(touched);
	free(mark);
	return ret;
}

/*
 * Keep the states from which a match is reachable (renumbered, the start
 * first); 0, 1 when the start is not one of them, -1 out of memory.
 */
static int trim(struct jm_re *re, uint8_t *acc)
{
	uint32_t n = re->n_states, k = re->n_cls, s, c, m = 0, top = 0;
	uint32_t *cnt = calloc(n + 1, sizeof(*cnt)), *rev = NULL, *stack = NULL, *map = NULL;
	uint8_t *live = calloc(n, 1);
	uint16_t *nn = NULL;
	int ret = -1;

	if (!cnt || !live)
		goto out;
	for (s = 0; s < n; s++)
		for (c = 0; c < k; c++)
			if (re->next[s * k + c] != UINT16_MAX)
				cnt[re->next[s * k + c] + 1]++;
	for (s = 0; s < n; s++)
		cnt[s + 1] += cnt[s];
	rev = malloc(((size_t)cnt[n] + 1) * sizeof(*rev));
	stack = malloc((size_t)n * sizeof(*stack));
	map = malloc((size_t)n * sizeof(*map));
	if (!rev || !stack || !map)
		goto out;
	for (s = 0; s < n; s++)
		for (c = 0; c < k; c++)
			if (re->next[s * k + c] != UINT16_MAX)
				rev[cnt[re->next[s * k + c]]++] = s;
	/* cnt[t] is now the end of t's predecessors; its start is cnt[t - 1]. */
	for (s = 0; s < n; s++)
		if (acc[s]) {
			live[s] = 1;
			stack[top++] = s;
		}
	while (top) {
		uint32_t t = stack[--top], i;

		for (i = t ? cnt[t - 1] : 0; i < cnt[t]; i++)
			if (!live[rev[i]]) {
				live[rev[i]] = 1;
				stack[top++] = rev[i];
			}
	}
	ret = 1;
	if (!live[0])
		goto out;
	for (s = 0; s < n; s++)
		map[s] = live[s] ? m++ : UINT32_MAX;
	nn = malloc((size_t)m * k * sizeof(*nn));
	if (!nn) {
		ret = -1;
		goto out;
	}
	for (s = 0; s < n; s++) {
		if (!live[s])
			continue;
		for (c = 0; c < k; c++) {
			uint16_t t = re->next[s * k + c];

			nn[map[s] * k + c] = t == UINT16_MAX || !live[t] ? UINT16_MAX : (uint16_t)map[t];
		}
		acc[map[s]] = acc[s];
	}
	free(re->next);
	re->next = nn;
	re->n_states = m;
	ret = 0;
out:
	free(cnt);
	free(rev);
	free(stack);
	free(map);
	free(live);
	return ret;
}

static bool len_bit(const struct jm_re *re, uint32_t s, uint32_t l)
{
	return re->len_bits[(size_t)s * re->len_words + l / 64] >> (l % 64) & 1;
}

/*
 * The length table: len_top = min(max_len, min_len + states) bits a state
 * suffice (a string longer than min_len + states can be pumped down to
 * one in [min_len, min_len + states), see feasible()). 0, or -1 with @err.
 */
static int len_table(struct jm_re *re, uint64_t *work, char *err, size_t errlen)
{
	uint32_t n = re->n_states, k = re->n_cls, s, c, l;
	uint64_t top = (uint64_t)re->min_len + n;

	if (!re->min_len && re->max_len == UINT32_MAX)
		return 0;
	if (re->max_len < top)
		top = re->max_len;
	*work += (top + 1) * n * k / 4;
	if ((top + 1) * n > JM_RE_MAX_LENBITS || *work > JM_RE_MAX_WORK) {
		snprintf(err, errlen, "with 'minLength'/'maxLength' %u..%u too large to follow",
			 re->min_len, re->max_len);
		return -1;
	}
	re->len_top = (uint32_t)top;
	re->len_words = (uint32_t)(top / 64 + 1);
	re->len_bits = calloc((size_t)n * re->len_words, sizeof(uint64_t));
	if (!re->len_bits) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (s = 0; s < n; s++)
		if (re->accept[s])
			re->len_bits[(size_t)s * re->len_words] |= 1;
	for (l = 1; l <= top; l++)
		for (s = 0; s < n; s++)
			for (c = 0; c < k; c++) {
				uint16_t t = re->next[(size_t)s * k + c];

				if (t != UINT16_MAX && len_bit(re, t, l - 1)) {
					re->len_bits[(size_t)s * re->len_words + l / 64] |= 1ull << (l % 64);
					break;
				}
			}
	return 0;
}

/* A string at state @s after @count code points can still end in a match within the bounds. */
static bool feasible(const struct jm_re *re, uint32_t s, uint32_t count)
{
	const uint64_t *w;
	uint32_t lo, hi, i;

	if (!re->len_bits)
		return true;	/* trim() kept only states that reach a match */
	if (count > re->max_len)
		return false;
	lo = count < re->min_len ? re->min_len - count : 0;
	hi = re->max_len - count;
	if (hi > re->len_top)
		hi = re->len_top;
	if (lo > hi)
		return false;
	/* Any bit of lo..hi, a word at a time. */
	w = re->len_bits + (size_t)s * re->len_words;
	for (i = lo / 64; i <= hi / 64; i++) {
		uint64_t m = w[i];

		if (i == lo / 64)
			m &= ~0ull << (lo % 64);
		if (i == hi / 64 && hi % 64 != 63)
			m &= (1ull << (hi % 64 + 1)) - 1;
		if (m)
			return true;
	}
	return false;
}

/* The pattern's tree, unanchored as RegExp test(): [\s\S]*(?:pattern)[\s\S]*. */
static int parse_pattern(struct parser *ps)
{
	int root = parse_alt(ps, 0), any, r, wrap[3];

	if (root >= 0 && ps->p != ps->end)
		root = perr(ps, "a ')' has no '('");
	if (root < 0)
		return -1;
	any = new_set(ps);
	if (any < 0 || set_add(&ps->sets[any], 0, JM_RE_MAX_CP))
		return perr(ps, "out of memory");
	r = set_node(ps, any);
	wrap[0] = r < 0 ? -1 : new_ast(ps, RA_REP);
	if (wrap[0] < 0)
		return -1;
	ps->ast[wrap[0]].kid = r;
	ps->ast[wrap[0]].max = -1;
	wrap[1] = root;
	wrap[2] = wrap[0];
	return make_list(ps, RA_CAT, wrap, 3);
}

/* The NFA of tree @root: state 0 the entry (an epsilon), NS_MATCH the last one. */
static int build_nfa(struct nfa *f, struct parser *ps, int root)
{
	const int placeholder = JM_RE_MAX_NFA + 1;	/* the match state, not made yet */
	int entry = nst_new(f, ps, NS_EPS, -1), r, i;

	if (entry < 0)
		return -1;
	r = build(f, ps, root, placeholder);
	if (r < 0 || nst_new(f, ps, NS_MATCH, -1) < 0)
		return -1;
	for (i = 0; i < f->n; i++) {
		if (f->st[i].out == placeholder)
			f->st[i].out = f->n - 1;
		if (f->st[i].out2 == placeholder)
			f->st[i].out2 = f->n - 1;
	}
	f->st[entry].out = r == placeholder ? f->n - 1 : r;
	return 0;
}

/* The DFA of @b's NFA into @re: classes, subsets, trim, the length table. 0 or -1 with @err. */
static int make_dfa(struct jm_re *re, struct dfa_build *b, const struct parser *ps, char *err,
		    size_t errlen)
{
	uint8_t *acc = NULL;
	int r;

	if (make_classes(re, ps->sets, ps->n_sets))
		goto oom;
	b->sets = ps->sets;
	b->words = (b->f->n + 63) / 64;
	b->hcap = 2 * JM_RE_MAX_DFA + 1;
	b->hash = calloc((size_t)b->hcap, sizeof(*b->hash));
	b->stack = malloc((size_t)b->f->n * 2 * sizeof(*b->stack));
	if (!b->hash || !b->stack)
		goto oom;
	if (b->work > JM_RE_MAX_WORK) {
		snprintf(err, errlen, "too large: the schema's patterns take more than %d steps to build",
			 JM_RE_MAX_WORK);
		return -1;
	}
	if (subsets(b, re, &acc, err, errlen))
		return -1;
	re->accept = acc;
	r = trim(re, acc);
	if (r < 0)
		goto oom;
	if (r > 0) {
		snprintf(err, errlen, "it matches no string");
		return -1;
	}
	if (len_table(re, &b->work, err, errlen))
		return -1;
	if (!feasible(re, 0, 0)) {
		snprintf(err, errlen, "it matches no string of %u to %u characters", re->min_len,
			 re->max_len);
		return -1;
	}
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

struct jm_re *jm_re_compile(const char *pat, size_t len, uint32_t min_len, uint32_t max_len,
			    uint64_t *work, char *err, size_t errlen)
{
	struct parser ps = { .s = pat, .p = pat, .end = pat + len, .err = err, .errlen = errlen };
	struct nfa f = { 0 };
	struct dfa_build b = { .f = &f, .work = *work };
	struct jm_re *re = calloc(1, sizeof(*re));
	int root, i;

	if (errlen)
		err[0] = '\0';
	if (!re) {
		perr(&ps, "out of memory");
		return NULL;
	}
	re->min_len = min_len;
	re->max_len = max_len;
	root = parse_pattern(&ps);
	if (root < 0 || build_nfa(&f, &ps, root)) {
		jm_re_free(re);
		re = NULL;
	} else {
		b.work += (uint64_t)f.n;
		if (make_dfa(re, &b, &ps, err, errlen)) {
			jm_re_free(re);
			re = NULL;
		}
	}
	*work = b.work > *work ? b.work : *work + (uint64_t)f.n;
	for (i = 0; i < ps.n_sets; i++)
		free(ps.sets[i].r);
	free(ps.sets);
	free(ps.ast);
	free(ps.kids);
	free(f.st);
	free(b.set_of);
	free(b.hash);
	free(b.stack);
	return re;
}

void jm_re_free(struct jm_re *re)
{
	if (!re)
		return;
	free(re->bound);
	free(re->next);
	free(re->accept);
	free(re->len_bits);
	free(re);
}

uint32_t jm_re_next(const struct jm_re *re, uint32_t s, uint32_t cp, uint32_t count)
{
	uint16_t t;

	if (cp > JM_RE_MAX_CP)
		return JM_RE_DEAD;
	t = re->next[(size_t)s * re->n_cls + class_of(re, cp)];
	if (t == UINT16_MAX || !feasible(re, t, count + 1))
		return JM_RE_DEAD;
	return t;
}

bool jm_re_any(const struct jm_re *re, uint32_t s, uint32_t lo, uint32_t hi, uint32_t count)
{
	uint32_t c;

	if (hi > JM_RE_MAX_CP)
		hi = JM_RE_MAX_CP;
	for (c = class_of(re, lo); c < re->n_cls && re->bound[c] <= hi; c++) {
		uint16_t t = re->next[(size_t)s * re->n_cls + c];

		if (t != UINT16_MAX && feasible(re, t, count + 1))
			return true;
	}
	return false;
}

bool jm_re_final(const struct jm_re *re, uint32_t s, uint32_t count)
{
	return re->accept[s] && count >= re->min_len && count <= re->max_len;
}

bool jm_re_match(const struct jm_re *re, const char *str, size_t len)
{
	struct parser ps = { .s = str, .p = str, .end = str + len };
	uint32_t s = 0, n = 0;

	while (ps.p < ps.end) {
		s = jm_re_next(re, s, next_cp(&ps), n++);
		if (s == JM_RE_DEAD)
			return false;
	}
	return jm_re_final(re, s, n);
}

uint32_t jm_re_states(const struct jm_re *re)
{
	return re->n_states;
}
