// SPDX-License-Identifier: MIT
/*
 * JSON-schema matcher (jsonmatch.h): a pushdown automaton over RFC 8259
 * JSON run on a set of threads, each a stack of frames. A value's first
 * byte picks its type; alternatives (anyOf/oneOf, $ref chains) are
 * expanded at that byte into one thread each. Strings are checked as
 * UTF-8 (RFC 3629: no overlong forms, no surrogates) with escapes and
 * surrogate pairs decoded; object keys are matched, decoded, against the
 * declared properties. A string under a "pattern" also steps its
 * automaton (jsonregex.h) at each code point; a number under a range is
 * checked digit by digit (jsonnum.c); a sequence (JN_SEQ, the tool-call
 * form of jsontools.c) matches its parts in turn.
 */
#include "jsonmatch_int.h"
#include "jsonregex.h"

#include <stdlib.h>
#include <string.h>

/* Frame kinds. */
enum { K_VALUE, K_OBJ, K_ARR, K_STR, K_KEY, K_NUM, K_LIT, K_SEQ };

/* Object states: after '{', after a key, after a value, after ','. */
enum { O_START, O_KEYDONE, O_AFTER, O_NEXT };
/* Array states: after '[', after an item. */
enum { A_START, A_AFTER };
/* String states (UTF-8: the first continuation byte's range, then any). */
enum { S_CHAR, S_ESC, S_HEX, S_LOW_BS, S_LOW_U, S_U8, S_U8_A0, S_U8_9F, S_U8_90, S_U8_8F };
/* Number states. */
enum { N_MINUS, N_ZERO, N_INT, N_DOT, N_FRAC, N_E, N_ESIGN, N_EXP };

#define JM_MAX_EXPAND	16	/* $ref / anyOf levels expanded at one byte */
#define NUM_INT		1	/* K_NUM aux: integers only */
#define NUM_NEG		2	/* K_NUM aux: a '-' came */
#define VAL_TIGHT	1	/* K_VALUE aux: no whitespace before the value */
#define JM_MAX_EXP	3	/* exponent digits */

/**
 * struct jm_frame - one level of a thread's stack
 * @n: the schema of the value (K_KEY: the object's)
 * @mask: K_OBJ: properties seen; K_KEY: properties the key may still be;
 *	K_LIT: literals still possible; K_NUM: the integer part's magnitude
 * @count: K_ARR: items started; K_STR, K_KEY: code points; K_NUM: digits
 *	of the current part; K_SEQ: the part being matched (or next)
 * @cp: K_STR/K_KEY: \u digits (low half), a pending high surrogate (high);
 *	under a pattern, the bits of a UTF-8 sequence so far
 * @off: K_KEY: bytes of the key so far; K_LIT: bytes matched
 * @cp, @off: K_NUM with a range: the fraction's digits (@off high half)
 * @rs: K_STR/K_KEY under a pattern: the automaton's state (jsonregex.h)
 * @key: K_OBJ: the property of the current key, -1: an additional one
 * @kind: K_*
 * @st: the kind's state
 * @ws: whitespace bytes in the current gap
 * @aux: K_STR/K_KEY: \u digits read or UTF-8 continuation bytes due;
 *	K_NUM: NUM_INT for an integer, NUM_NEG after '-'; K_VALUE: VAL_TIGHT
 */
struct jm_frame {
	const struct jm_node *n;
	uint64_t mask;
	uint32_t count;
	uint32_t cp;
	uint32_t off;
	uint32_t rs;
	int16_t key;
	uint8_t kind, st, ws, aux;
};

struct jm_thread {
	int depth;
	struct jm_frame f[JM_MAX_DEPTH];
};

struct jm_set {
	int n;
	struct jm_thread t[JM_MAX_THREADS];
};

/**
 * struct jm_state - see jsonmatch.h
 * @s: the schema (a reference)
 * @cur: the threads after the bytes fed so far
 * @tmp: two scratch sets for jm_try()/jm_feed()
 */
struct jm_state {
	struct jm_schema *s;
	struct jm_set *cur, *tmp[2];
};

static void emit(struct jm_set *out, const struct jm_thread *t);

static bool is_ws(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void thread_copy(struct jm_thread *d, const struct jm_thread *s)
{
	d->depth = s->depth;
	memcpy(d->f, s->f, (size_t)s->depth * sizeof(s->f[0]));
}

static bool frame_eq(const struct jm_frame *a, const struct jm_frame *b)
{
	return a->n == b->n && a->mask == b->mask && a->count == b->count && a->cp == b->cp &&
	       a->off == b->off && a->rs == b->rs && a->key == b->key && a->kind == b->kind && a->st == b->st &&
	       a->ws == b->ws && a->aux == b->aux;
}

static bool thread_eq(const struct jm_thread *a, const struct jm_thread *b)
{
	int i;

	if (a->depth != b->depth)
		return false;
	for (i = a->depth - 1; i >= 0; i--)
		if (!frame_eq(&a->f[i], &b->f[i]))
			return false;
	return true;
}

/* Keep a live thread (once; beyond JM_MAX_THREADS readings are dropped). */
static void emit(struct jm_set *out, const struct jm_thread *t)
{
	int i;

	for (i = 0; i < out->n; i++)
		if (thread_eq(&out->t[i], t))
			return;
	if (out->n < JM_MAX_THREADS)
		thread_copy(&out->t[out->n++], t);
}

static struct jm_frame *top(struct jm_thread *t)
{
	return &t->f[t->depth - 1];
}

/* Push a frame; false at JM_MAX_DEPTH (the reading dies). */
static bool push(struct jm_thread *t, int kind, const struct jm_node *n)
{
	if (t->depth == JM_MAX_DEPTH)
		return false;
	t->f[t->depth++] = (struct jm_frame){ .n = n, .kind = (uint8_t)kind, .key = -1 };
	return true;
}

/*
 * A whitespace byte @c in a gap between two tokens. A gap is empty, one
 * space, or a newline and at most JM_MAX_WS spaces or tabs (llama.cpp's
 * "space" rule); f->ws: 0 empty, 1 + indentation after the newline,
 * WS_CLOSED after the space.
 */
#define WS_CLOSED	0xff
static bool gap_ws(struct jm_frame *f, uint8_t c)
{
	if (!f->ws) {
		f->ws = c == ' ' ? WS_CLOSED : 1;
		return c == ' ' || c == '\n';
	}
	if (f->ws == WS_CLOSED || f->ws > JM_MAX_WS || (c != ' ' && c != '\t'))
		return false;
	f->ws++;
	return true;
}

static void step(struct jm_set *out, struct jm_thread *t, uint8_t c);

/* ---------------------------------------------------------------- values */

static const struct jm_node *item_at(const struct jm_node *n, uint32_t i)
{
	if (i >= n->max_items)
		return NULL;
	return i < (uint32_t)n->n_prefix ? n->prefix[i] : n->items;
}

static uint64_t num_frac(const struct jm_frame *f)
{
	return (uint64_t)f->off << 32 | f->cp;
}

static void num_set_frac(struct jm_frame *f, uint64_t v)
{
	f->off = (uint32_t)(v >> 32);
	f->cp = (uint32_t)v;
}

/* Some value in the magnitudes [@a, @b] (negated after '-') is in range. */
static bool num_span(const struct jm_frame *f, jm_fix a, jm_fix b)
{
	return f->aux & NUM_NEG ? jm_num_span(f->n, -b, -a) : jm_num_span(f->n, a, b);
}

/*
 * A number with a range: some continuation of the digits so far (at most
 * JM_MAX_DIGITS per part, no exponent) is within the range and a
 * multiple of its step. The values a prefix can still reach are one
 * interval of magnitudes per count of integer digits still to come.
 */
static bool num_feasible(const struct jm_frame *f)
{
	jm_fix v = (jm_fix)f->mask, a;
	uint32_t k;

	if (!f->n->has_range)
		return true;
	switch (f->st) {
	case N_MINUS:
		return num_span(f, 0, jm_pow10(32) - 1);
	case N_ZERO:
		return num_span(f, 0, JM_FIX_ONE - 1);
	case N_DOT:
		return num_span(f, v * JM_FIX_ONE, v * JM_FIX_ONE + JM_FIX_ONE - 1);
	case N_FRAC:
		k = JM_MAX_DIGITS - f->count;
		a = v * JM_FIX_ONE + (jm_fix)num_frac(f) * jm_pow10((int)k);
		return num_span(f, a, a + jm_pow10((int)k) - 1);
	default:	/* N_INT: k more integer digits, then any fraction */
		for (k = 0; f->count + k <= JM_MAX_DIGITS; k++)
			if (num_span(f, v * jm_pow10((int)k) * JM_FIX_ONE,
				     (v + 1) * jm_pow10((int)k) * JM_FIX_ONE - 1))
				return true;
		return false;
	}
}

/* The number read is within its range (no range: any). */
static bool num_in_range(const struct jm_frame *f)
{
	jm_fix v;

	if (f->kind != K_NUM || !f->n->has_range)
		return true;
	v = (jm_fix)f->mask * JM_FIX_ONE;
	if (f->st == N_FRAC)
		v += (jm_fix)num_frac(f) * jm_pow10((int)(JM_MAX_DIGITS - f->count));
	return jm_num_ok(f->n, f->aux & NUM_NEG ? -v : v);
}

/* Start a literal frame on @n (its first byte @c follows). */
static void start_lit(struct jm_set *out, struct jm_thread *t, const struct jm_node *n,
		      uint8_t c)
{
	struct jm_frame *f = top(t);

	*f = (struct jm_frame){ .n = n, .kind = K_LIT, .key = -1,
				.mask = n->n_lit >= 64 ? ~0ull : (1ull << n->n_lit) - 1 };
	step(out, t, c);
}

/* The value's first byte @c on a typed node: pick the type. */
static void start_typed(struct jm_set *out, struct jm_thread *t, const struct jm_node *n,
			uint8_t c)
{
	struct jm_frame *f = top(t);
	unsigned int ty = n->types;
	int kind;

	if (c == '{' && (ty & JT_OBJ))
		kind = K_OBJ;
	else if (c == '[' && (ty & JT_ARR))
		kind = K_ARR;
	else if (c == '"' && (ty & JT_STR))
		kind = K_STR;
	else if ((c == '-' || (c >= '0' && c <= '9')) && (ty & (JT_INT | JT_NUM)))
		kind = K_NUM;
	else if ((c == 't' || c == 'f') && (ty & JT_BOOL))
		return start_lit(out, t, &jm_lit_bool, c);
	else if (c == 'n' && (ty & JT_NULL))
		return start_lit(out, t, &jm_lit_null, c);
	else
		return;
	*f = (struct jm_frame){ .n = n, .kind = (uint8_t)kind, .key = -1 };
	if (kind == K_NUM) {
		f->aux = (ty & JT_NUM ? 0 : NUM_INT) | (c == '-' ? NUM_NEG : 0);
		f->st = c == '-' ? N_MINUS : c == '0' ? N_ZERO : N_INT;
		f->count = c >= '1' && c <= '9';
		f->mask = c >= '1' && c <= '9' ? (uint64_t)(c - '0') : 0;
		if (!num_feasible(f))
			return;
	}
	emit(out, t);
}

/* Expand @n at the value's first byte @c into one thread per reading. */
static void expand(struct jm_set *out, struct jm_thread *t, const struct jm_node *n, uint8_t c,
		   int level)
{
	struct jm_thread alt;
	int i;

	if (level > JM_MAX_EXPAND)
		return;
	switch (n->form) {
	case JN_REF:
		expand(out, t, n->ref, c, level + 1);
		break;
	case JN_ALT:
		for (i = 0; i < n->n_alt; i++) {
			thread_copy(&alt, t);
			expand(out, &alt, n->alt[i], c, level + 1);
		}
		break;
	case JN_LIT:
		start_lit(out, t, n, c);
		break;
	case JN_SEQ:
		/* The sequence's frame, then its first part with @c. */
		*top(t) = (struct jm_frame){ .n = n, .kind = K_SEQ, .key = -1 };
		if (push(t, K_VALUE, n->seq[0]))
			expand(out, t, n->seq[0], c, level + 1);
		break;
	default:
		start_typed(out, t, n, c);
		break;
	}
}

/*
 * A frame was popped: a sequence under it goes on to its next part, and
 * one whose last part ended with nothing to repeat ends too.
 */
static void child_done(struct jm_thread *t)
{
	while (t->depth && top(t)->kind == K_SEQ) {
		struct jm_frame *f = top(t);

		if (++f->count < (uint32_t)f->n->n_seq || f->n->rep)
			return;
		t->depth--;
	}
}

/* A value of top(t)->n is done: pop its frame; the parent is after it. */
static void pop(struct jm_set *out, struct jm_thread *t)
{
	t->depth--;
	child_done(t);
	emit(out, t);
}

/* A value that ends at the byte after it (number, literal): pop, feed @c on. */
static void pop_refeed(struct jm_set *out, struct jm_thread *t, uint8_t c)
{
	t->depth--;
	child_done(t);
	if (t->depth)
		step(out, t, c);	/* nothing follows the document */
}

/* A sequence between parts: @c starts the next part, or after the last one its repetition. */
static void step_seq(struct jm_set *out, struct jm_thread *t, struct jm_frame *f, uint8_t c)
{
	const struct jm_node *n = f->n;

	if (f->count < (uint32_t)n->n_seq) {
		if (push(t, K_VALUE, n->seq[f->count]))
			expand(out, t, n->seq[f->count], c, 0);
		return;
	}
	/* In place: a loop of repetitions does not grow the stack. */
	*f = (struct jm_frame){ .n = n->rep, .kind = K_VALUE, .key = -1, .aux = VAL_TIGHT };
	expand(out, t, n->rep, c, 0);
}

/* --------------------------------------------------------------- objects */

static uint64_t all_props(const struct jm_node *n)
{
	return n->n_props >= 64 ? ~0ull : (1ull << n->n_props) - 1;
}

/* Another key may come (an undeclared one, or a declared one not yet seen). */
static bool key_possible(const struct jm_frame *f)
{
	return f->n->addl || (all_props(f->n) & ~f->mask);
}

static void start_key(struct jm_set *out, struct jm_thread *t)
{
	struct jm_frame *f = top(t);
	const struct jm_node *n = f->n;
	uint64_t seen = f->mask;

	if (!key_possible(f))
		return;
	f->st = O_KEYDONE;
	f->ws = 0;
	if (!push(t, K_KEY, n))
		return;
	/* An additional key may spell a seen one: that is caught at its end. */
	top(t)->mask = n->addl ? all_props(n) : all_props(n) & ~seen;
	emit(out, t);
}

static void step_obj(struct jm_set *out, struct jm_thread *t, struct jm_frame *f, uint8_t c)
{
	const struct jm_node *n = f->n;

	if (is_ws(c)) {
		if (gap_ws(f, c))
			emit(out, t);
		return;
	}
	switch (f->st) {
	case O_START:
	case O_AFTER:
		if (c == '}' && !(n->required & ~f->mask))
			return pop(out, t);
		if (f->st == O_START && c == '"')
			return start_key(out, t);
		if (f->st == O_AFTER && c == ',' && key_possible(f)) {
			f->st = O_NEXT;
			f->ws = 0;
			emit(out, t);
		}
		return;
	case O_NEXT:
		if (c == '"')
			start_key(out, t);
		return;
	default:	/* O_KEYDONE */
		if (c != ':')
			return;
		f->st = O_AFTER;
		f->ws = 0;
		if (push(t, K_VALUE, f->key >= 0 ? n->props[f->key].n : n->addl))
			emit(out, t);
	}
}

/* One decoded byte @b of a key: narrow the properties it may be. */
static bool key_byte(struct jm_frame *f, uint8_t b)
{
	const struct jm_node *n = f->n;
	uint64_t m = f->mask;
	int i;

	for (i = 0; m && i < n->n_props; i++)
		if ((m >> i & 1) && (n->props[i].len <= f->off ||
				     (uint8_t)n->props[i].name[f->off] != b))
			m &= ~(1ull << i);
	f->mask = m;
	f->off++;
	return m || n->addl;
}

/* The key's closing quote: record which property it is in the object frame. */
static void end_key(struct jm_set *out, struct jm_thread *t)
{
	struct jm_frame *k = top(t), *o = &t->f[t->depth - 2];
	const struct jm_node *n = k->n;
	int i;

	for (i = 0; i < n->n_props; i++)
		if ((k->mask >> i & 1) && n->props[i].len == k->off)
			break;
	if (i < n->n_props) {
		if (o->mask >> i & 1)
			return;	/* the same property twice */
		o->mask |= 1ull << i;
		o->key = (int16_t)i;
	} else if (n->addl && k->count >= n->key_min &&
		   (!n->key_re || jm_re_final(n->key_re, k->rs, k->count))) {
		o->key = -1;
	} else {
		return;
	}
	pop(out, t);
}

/* ---------------------------------------------------------------- arrays */

static void step_arr(struct jm_set *out, struct jm_thread *t, struct jm_frame *f, uint8_t c)
{
	const struct jm_node *n = f->n, *item;

	if (is_ws(c)) {
		if (gap_ws(f, c))
			emit(out, t);
		return;
	}
	if (c == ']') {
		if (f->count >= n->min_items)
			pop(out, t);
		return;
	}
	if (f->st == A_AFTER && c != ',')
		return;
	item = item_at(n, f->count);
	if (!item)
		return;
	f->count++;
	f->ws = 0;
	if (!push(t, K_VALUE, item))
		return;
	if (f->st == A_START) {
		f->st = A_AFTER;
		step(out, t, c);	/* the item's first byte */
	} else {
		emit(out, t);
	}
}

/* --------------------------------------------------------------- strings */

/* UTF-8 of code point @cp into @b; returns its length. */
static int utf8_put(uint32_t cp, uint8_t *b)
{
	if (cp < 0x80) {
		b[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		b[0] = (uint8_t)(0xc0 | cp >> 6);
		b[1] = (uint8_t)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		b[0] = (uint8_t)(0xe0 | cp >> 12);
		b[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (uint8_t)(0x80 | (cp & 0x3f));
		return 3;
	}
	b[0] = (uint8_t)(0xf0 | cp >> 18);
	b[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
	b[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
	b[3] = (uint8_t)(0x80 | (cp & 0x3f));
	return 4;
}

/* The string's maxLength (a key: propertyNames' maxLength). */
static uint32_t str_max(const struct jm_frame *f)
{
	return f->kind == K_KEY ? f->n->key_max : f->n->max_len;
}

/* The string's pattern automaton (a key: propertyNames'), or NULL. */
static const struct jm_re *str_re(const struct jm_frame *f)
{
	return f->kind == K_KEY ? f->n->key_re : f->n->re;
}

/* A new code point starts: within maxLength? */
static bool str_cp(struct jm_frame *f)
{
	if (f->count >= str_max(f))
		return false;
	f->count++;
	return true;
}

/* The pattern takes the code point @cp, the string's count-th (counted). */
static bool re_cp(struct jm_frame *f, uint32_t cp)
{
	const struct jm_re *re = str_re(f);
	uint32_t s;

	if (!re)
		return true;
	s = jm_re_next(re, f->rs, cp, f->count - 1);
	if (s == JM_RE_DEAD)
		return false;
	f->rs = s;
	return true;
}

/*
 * The pattern takes some code point of [@lo, @hi] (surrogates excluded)
 * after the @before code points so far: a UTF-8 sequence or an escape on
 * its way.
 */
static bool re_range(const struct jm_frame *f, uint32_t lo, uint32_t hi, uint32_t before)
{
	const struct jm_re *re = str_re(f);

	if (!re)
		return true;
	if (lo < 0xd800 && jm_re_any(re, f->rs, lo, hi < 0xd7ff ? hi : 0xd7ff, before))
		return true;
	return hi > 0xdfff && jm_re_any(re, f->rs, lo > 0xe000 ? lo : 0xe000, hi, before);
}

/* Decoded bytes of a key (values need none). */
static bool str_bytes(struct jm_frame *f, const uint8_t *b, int n)
{
	int i;

	if (f->kind != K_KEY)
		return true;
	for (i = 0; i < n; i++)
		if (!key_byte(f, b[i]))
			return false;
	return true;
}

/* An escaped code point @cp (a whole one: not a high surrogate). */
static bool str_escaped(struct jm_frame *f, uint32_t cp, bool counted)
{
	uint8_t b[4];

	if (!counted && (!str_cp(f) || !re_cp(f, cp)))
		return false;
	f->st = S_CHAR;
	return str_bytes(f, b, utf8_put(cp, b));
}

/* The 4th hex digit of \uXXXX is in: a code point, or a surrogate half. */
static bool str_hex_done(struct jm_frame *f)
{
	uint32_t v = f->cp & 0xffff, hi = f->cp >> 16;

	f->cp = 0;
	if (hi) {
		if (v < 0xdc00 || v > 0xdfff)
			return false;
		return str_escaped(f, 0x10000 + ((hi - 0xd800) << 10) + (v - 0xdc00), true);
	}
	if (v >= 0xdc00 && v <= 0xdfff)
		return false;	/* a lone low surrogate */
	if (v >= 0xd800 && v <= 0xdbff) {
		if (str_re(f))
			return false;	/* under a pattern, no surrogate pairs */
		f->cp = v << 16;
		f->st = S_LOW_BS;
		return str_cp(f);
	}
	return str_escaped(f, v, false);
}

static int hex_val(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* A byte of an escape (after '\\'). */
static bool str_escape(struct jm_frame *f, uint8_t c)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *p = c ? strchr(from, c) : NULL;
	int h;

	switch (f->st) {
	case S_ESC:
		if (c == 'u') {
			f->st = S_HEX;
			f->aux = 0;
			return re_range(f, 0, 0xffff, f->count);
		}
		return p && str_escaped(f, (uint8_t)to[p - from], false);
	case S_LOW_BS:
		f->st = S_LOW_U;
		return c == '\\';
	case S_LOW_U:
		f->st = S_HEX;
		f->aux = 0;
		return c == 'u';
	default:	/* S_HEX */
		h = hex_val(c);
		if (h < 0)
			return false;
		f->cp = (f->cp & 0xffff0000u) | ((f->cp << 4 | (uint32_t)h) & 0xffff);
		if (++f->aux < 4) {
			uint32_t sh = 4 * (4 - (uint32_t)f->aux), lo = (f->cp & 0xffff) << sh;

			return f->cp >> 16 || re_range(f, lo, lo | ((1u << sh) - 1), f->count);
		}
		return str_hex_done(f);
	}
}

/*
 * Under a pattern: some code point that the UTF-8 sequence so far (its
 * bits in f->cp, f->aux continuation bytes still due) can become is
 * taken. The sequence's own validity (table 3-7) is checked byte by
 * byte; this only spans the bits still to come.
 */
static bool utf8_viable(const struct jm_frame *f)
{
	uint32_t sh = 6 * f->aux, lo = f->cp << sh, hi = lo | ((1u << sh) - 1);
	static const uint32_t min[] = { 0, 0x80, 0x800, 0x10000 };

	if (lo < min[f->aux])	/* the lead byte alone: no overlong forms */
		lo = min[f->aux];
	return re_range(f, lo, hi, f->count - 1);
}

/* A raw byte >= 0x80 (RFC 3629 table 3-7 ranges). */
static bool str_utf8(struct jm_frame *f, uint8_t c)
{
	switch (f->st) {
	case S_CHAR:
		if (c >= 0xc2 && c <= 0xdf) {
			f->st = S_U8;
			f->aux = 1;
		} else if (c == 0xe0 || c == 0xed) {
			f->st = c == 0xe0 ? S_U8_A0 : S_U8_9F;
			f->aux = 2;
		} else if (c >= 0xe1 && c <= 0xef) {
			f->st = S_U8;
			f->aux = 2;
		} else if (c == 0xf0 || c == 0xf4) {
			f->st = c == 0xf0 ? S_U8_90 : S_U8_8F;
			f->aux = 3;
		} else if (c >= 0xf1 && c <= 0xf3) {
			f->st = S_U8;
			f->aux = 3;
		} else {
			return false;
		}
		if (!str_cp(f) || !str_bytes(f, &c, 1))
			return false;
		f->cp = c & (0x7f >> (f->aux + 1));
		return !str_re(f) || utf8_viable(f);
	case S_U8_A0:
		if (c < 0xa0 || c > 0xbf)
			return false;
		break;
	case S_U8_9F:
		if (c < 0x80 || c > 0x9f)
			return false;
		break;
	case S_U8_90:
		if (c < 0x90 || c > 0xbf)
			return false;
		break;
	case S_U8_8F:
		if (c < 0x80 || c > 0x8f)
			return false;
		break;
	default:
		if (c < 0x80 || c > 0xbf)
			return false;
	}
	f->st = --f->aux ? S_U8 : S_CHAR;
	if (!str_bytes(f, &c, 1))
		return false;
	if (!str_re(f))
		return true;
	f->cp = f->cp << 6 | (c & 0x3f);
	return f->aux ? utf8_viable(f) : re_cp(f, f->cp);
}

static void step_str(struct jm_set *out, struct jm_thread *t, struct jm_frame *f, uint8_t c)
{
	bool ok;

	if (f->st == S_CHAR && c == '"') {
		if (f->kind == K_KEY)
			return end_key(out, t);
		if (f->count >= f->n->min_len && (!f->n->re || jm_re_final(f->n->re, f->rs, f->count)))
			pop(out, t);
		return;
	}
	if (f->st == S_CHAR && c == '\\') {
		/* Some escape must be able to follow (simple ones are BMP code points). */
		f->st = S_ESC;
		ok = f->count < str_max(f) && re_range(f, 0, 0xffff, f->count);
	} else if (f->st == S_ESC || f->st == S_HEX || f->st == S_LOW_BS || f->st == S_LOW_U) {
		ok = str_escape(f, c);
	} else if (f->st == S_CHAR && c < 0x80) {
		ok = c >= 0x20 && str_cp(f) && str_bytes(f, &c, 1) && re_cp(f, c);
	} else {
		ok = str_utf8(f, c);
	}
	if (ok)
		emit(out, t);
}

/* --------------------------------------------------------- numbers, literals */

static void step_num(struct jm_set *out, struct jm_thread *t, struct jm_frame *f, uint8_t c)
{
	bool digit = c >= '0' && c <= '9', integer = f->aux & NUM_INT;

	switch (f->st) {
	case N_MINUS:
		if (!digit)
			return;
		f->st = c == '0' ? N_ZERO : N_INT;
		f->count = c != '0';
		f->mask = (uint64_t)(c - '0');
		if (num_feasible(f))
			emit(out, t);
		return;
	case N_INT:
		if (digit) {
			f->mask = f->mask * 10 + (uint64_t)(c - '0');
			if (f->count++ < JM_MAX_DIGITS && num_feasible(f))
				emit(out, t);
			return;
		}
		/* '.', 'e' or the end, as after "0" */
		/* fall through */
	case N_ZERO:
		if (!integer && (c == '.' || ((c == 'e' || c == 'E') && !f->n->has_range))) {
			f->st = c == '.' ? N_DOT : N_E;
			f->count = 0;
			num_set_frac(f, 0);
			if (num_feasible(f))
				emit(out, t);
			return;
		}
		if (num_in_range(f))
			pop_refeed(out, t, c);
		return;
	case N_DOT:
	case N_FRAC:
		if (digit) {
			f->st = N_FRAC;
			if (f->n->has_range)
				num_set_frac(f, num_frac(f) * 10 + (uint64_t)(c - '0'));
			if (f->count++ < JM_MAX_DIGITS && num_feasible(f))
				emit(out, t);
			return;
		}
		if (f->st == N_FRAC && (c == 'e' || c == 'E') && !f->n->has_range) {
			f->st = N_E;
			f->count = 0;
			return emit(out, t);
		}
		if (f->st == N_FRAC && num_in_range(f))
			pop_refeed(out, t, c);
		return;
	case N_E:
		if (c == '+' || c == '-') {
			f->st = N_ESIGN;
			return emit(out, t);
		}
		/* fall through */
	default:	/* N_ESIGN, N_EXP */
		if (digit) {
			f->st = N_EXP;
			if (f->count++ < JM_MAX_EXP)
				emit(out, t);
			return;
		}
		if (f->st == N_EXP)
			pop_refeed(out, t, c);
	}
}

static bool num_accepting(const struct jm_frame *f)
{
	return f->st == N_ZERO || f->st == N_INT || f->st == N_FRAC || f->st == N_EXP;
}

/* Some still possible literal is complete at @f->off. */
static bool lit_complete(const struct jm_frame *f)
{
	int i;

	for (i = 0; i < f->n->n_lit; i++)
		if ((f->mask >> i & 1) && f->n->lit_len[i] == f->off)
			return true;
	return false;
}

static void step_lit(struct jm_set *out, struct jm_thread *t, struct jm_frame *f, uint8_t c)
{
	const struct jm_node *n = f->n;
	uint64_t m = 0;
	bool longer = false;
	int i;

	for (i = 0; i < n->n_lit; i++)
		if ((f->mask >> i & 1) && n->lit_len[i] > f->off && (uint8_t)n->lit[i][f->off] == c) {
			m |= 1ull << i;
			longer |= n->lit_len[i] > f->off + 1;
		}
	if (!m) {
		/* Only a number literal can be complete and be followed here. */
		if (lit_complete(f))
			pop_refeed(out, t, c);
		return;
	}
	f->mask = m;
	f->off++;
	if (longer) {
		emit(out, t);
	} else if (n->cont) {
		/* One literal is whole (they are quoted names): go on with its continuation. */
		for (i = 0; !(m >> i & 1); i++)
			;
		*f = (struct jm_frame){ .n = n->cont[i], .kind = K_VALUE, .key = -1, .aux = VAL_TIGHT };
		emit(out, t);
	} else {
		pop(out, t);	/* every candidate is complete */
	}
}

static void step_value(struct jm_set *out, struct jm_thread *t, struct jm_frame *f, uint8_t c)
{
	if (is_ws(c)) {
		if (t->depth == 1 || (f->aux & VAL_TIGHT))
			return;	/* the document starts with its value */
		if (gap_ws(f, c))
			emit(out, t);
		return;
	}
	expand(out, t, f->n, c, 0);
}

/* Feed @c to thread @t (a scratch copy, changed); live results go to @out. */
static void step(struct jm_set *out, struct jm_thread *t, uint8_t c)
{
	struct jm_frame *f;

	if (!t->depth)
		return;	/* the document is closed */
	f = top(t);
	switch (f->kind) {
	case K_VALUE: step_value(out, t, f, c); break;
	case K_OBJ: step_obj(out, t, f, c); break;
	case K_ARR: step_arr(out, t, f, c); break;
	case K_STR: case K_KEY: step_str(out, t, f, c); break;
	case K_NUM: step_num(out, t, f, c); break;
	case K_SEQ: step_seq(out, t, f, c); break;
	default: step_lit(out, t, f, c); break;
	}
}

/* ------------------------------------------------------------------- API */

struct jm_state *jm_new(struct jm_schema *s)
{
	struct jm_state *st = calloc(1, sizeof(*st));
	int i;

	if (!st)
		return NULL;
	st->cur = malloc(sizeof(*st->cur));
	for (i = 0; i < 2; i++)
		st->tmp[i] = malloc(sizeof(*st->tmp[i]));
	if (!st->cur || !st->tmp[0] || !st->tmp[1]) {
		jm_free(st);
		return NULL;
	}
	st->s = jm_schema_get(s);
	st->cur->n = 1;
	st->cur->t[0].depth = 1;
	st->cur->t[0].f[0] = (struct jm_frame){ .n = s->root, .kind = K_VALUE, .key = -1 };
	return st;
}

void jm_free(struct jm_state *st)
{
	if (!st)
		return;
	jm_schema_put(st->s);
	free(st->cur);
	free(st->tmp[0]);
	free(st->tmp[1]);
	free(st);
}

/* Run @len bytes from st->cur; the result set (NULL: none live). */
static struct jm_set *run(struct jm_state *st, const uint8_t *b, size_t len)
{
	struct jm_set *from = st->cur, *to;
	struct jm_thread t;
	size_t k;
	int i, w = 0;

	for (k = 0; k < len; k++) {
		to = st->tmp[w];
		w ^= 1;
		to->n = 0;
		for (i = 0; i < from->n; i++) {
			thread_copy(&t, &from->t[i]);
			step(to, &t, b[k]);
		}
		if (!to->n)
			return NULL;
		from = to;
	}
	return from;
}

bool jm_try(struct jm_state *st, const void *buf, size_t len)
{
	return run(st, buf, len) != NULL;
}

bool jm_feed(struct jm_state *st, const void *buf, size_t len)
{
	struct jm_set *r = run(st, buf, len), *old = st->cur;

	if (!r)
		return false;
	if (r != old) {
		st->cur = r;
		st->tmp[st->tmp[0] == r ? 0 : 1] = old;
	}
	return true;
}

void jm_next_bytes(struct jm_state *st, uint64_t set[4])
{
	int b;

	memset(set, 0, 4 * sizeof(set[0]));
	for (b = 0; b < 256; b++) {
		uint8_t c = (uint8_t)b;

		if (run(st, &c, 1))
			set[b >> 6] |= 1ull << (b & 63);
	}
}

bool jm_accepting(const struct jm_state *st)
{
	int i;

	for (i = 0; i < st->cur->n; i++) {
		const struct jm_thread *t = &st->cur->t[i];

		if (!t->depth)
			return true;
		if (t->depth == 1 && t->f[0].kind == K_NUM && num_accepting(&t->f[0]) &&
		    num_in_range(&t->f[0]))
			return true;
		if (t->depth == 1 && t->f[0].kind == K_LIT && lit_complete(&t->f[0]))
			return true;
		/* A sequence whose repetition may follow may also end. */
		if (t->depth == 1 && t->f[0].kind == K_SEQ && t->f[0].count == (uint32_t)t->f[0].n->n_seq)
			return true;
	}
	return false;
}

bool jm_in_free_string(const struct jm_state *st)
{
	const struct jm_thread *t = &st->cur->t[0];
	const struct jm_frame *f;

	if (st->cur->n != 1 || !t->depth)
		return false;
	f = &t->f[t->depth - 1];
	return f->kind == K_STR && f->st == S_CHAR && f->n->max_len == UINT32_MAX && !f->n->re;
}

bool jm_pattern_string(const struct jm_state *st, const struct jm_re **re, uint32_t *rs,
		       uint32_t *count, uint32_t *max)
{
	const struct jm_thread *t = &st->cur->t[0];
	const struct jm_frame *f;

	if (st->cur->n != 1 || !t->depth)
		return false;
	f = &t->f[t->depth - 1];
	if (f->kind != K_STR || f->st != S_CHAR || !f->n->re)
		return false;
	*re = f->n->re;
	*rs = f->rs;
	*count = f->count;
	*max = f->n->max_len;
	return true;
}

bool jm_done(const struct jm_state *st)
{
	int i;

	for (i = 0; i < st->cur->n; i++)
		if (st->cur->t[i].depth)
			return false;
	return true;
}
