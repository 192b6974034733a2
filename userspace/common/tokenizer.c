// SPDX-License-Identifier: MIT
/*
 * SentencePiece "llama" tokenizer from GGUF metadata.
 *
 * Behaviour follows llama.cpp's SPM tokenizer (src/llama-vocab.cpp,
 * llm_tokenizer_spm and llama_vocab::token_to_piece):
 *   - a space is prepended when tokenizer.ggml.add_space_prefix (default
 *     true) and every ' ' becomes U+2581 ("\xe2\x96\x81");
 *   - the text is split into UTF-8 characters (the length comes from the
 *     lead byte's high nibble, clamped to the bytes left, so invalid UTF-8
 *     never reads out of bounds);
 *   - repeatedly the adjacent pair of symbols whose concatenation is a vocab
 *     entry with the highest score is merged (ties: leftmost pair);
 *   - each final symbol is emitted as its token when it is in the vocab,
 *     otherwise as byte tokens "<0xXX>" for each of its bytes (byte
 *     fallback), or the unknown token when the vocab has no byte tokens.
 * Special-token text in the input (e.g. "<s>") is not parsed: it is plain
 * text, like llama.cpp with parse_special = false.
 */
#include "tokenizer.h"
#include "gguf.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* llama.cpp / SentencePiece token types (tokenizer.ggml.token_type). */
enum {
	TT_NORMAL = 1,
	TT_UNKNOWN = 2,
	TT_CONTROL = 3,
	TT_USER_DEFINED = 4,
	TT_UNUSED = 5,
	TT_BYTE = 6,
};

struct tok_entry {
	const char *s;		/* inside the GGUF mapping */
	uint32_t len;
	float score;
	int32_t type;
};

struct tokenizer {
	int n_vocab;
	struct tok_entry *vocab;
	uint32_t *hash;		/* token id + 1, 0 = empty */
	uint64_t hmask;
	int32_t byte_tok[256];	/* -1 when the vocab has no <0xXX> */
	int32_t bos, eos, unk;
	bool add_bos;
	bool add_space_prefix;
};

static uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Token id of exactly the bytes s[0..len), or -1. */
static int32_t lookup(const struct tokenizer *t, const char *s, size_t len)
{
	uint64_t h = fnv1a(s, len) & t->hmask;

	while (t->hash[h]) {
		const struct tok_entry *e = &t->vocab[t->hash[h] - 1];

		if (e->len == len && memcmp(e->s, s, len) == 0)
			return (int32_t)(t->hash[h] - 1);
		h = (h + 1) & t->hmask;
	}
	return -1;
}

static void __attribute__((format(printf, 4, 5)))
tfail(char *err, size_t errlen, const struct gguf_file *f, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return;
	n = snprintf(err, errlen, "%s: ", f->path ? f->path : "(gguf)");
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
}

/* Optional token id kv: -1 when absent; false when present but invalid. */
static bool get_id(const struct gguf_file *f, const char *key, int n_vocab,
		   int32_t *out, char *err, size_t errlen)
{
	const struct gguf_kv *kv = gguf_find_kv(f, key);
	uint64_t v;

	*out = -1;
	if (!kv)
		return true;
	if (!gguf_get_u64(f, key, &v)) {
		/* llama.cpp writes -1 (as i32) for "none". */
		if (kv->type == GGUF_VT_I32 || kv->type == GGUF_VT_I64)
			return true;
		tfail(err, errlen, f, "%s: value type %d is not an integer",
		      key, kv->type);
		return false;
	}
	if (v == UINT32_MAX)	/* u32 -1 = none */
		return true;
	if (v >= (uint64_t)n_vocab) {
		tfail(err, errlen, f, "%s: id %" PRIu64 " out of range (vocab %d)",
		      key, v, n_vocab);
		return false;
	}
	*out = (int32_t)v;
	return true;
}

static bool get_bool(const struct gguf_file *f, const char *key, bool def)
{
	const struct gguf_kv *kv = gguf_find_kv(f, key);

	if (!kv || kv->type != GGUF_VT_BOOL)
		return def;
	return kv->v.u != 0;
}

struct tokenizer *tok_load(const struct gguf_file *f, char *err, size_t errlen)
{
	const struct gguf_kv *toks, *scores, *types;
	struct tokenizer *t;
	struct gguf_str model;
	uint64_t n, i, sz = 8;

	if (err && errlen)
		err[0] = '\0';
	if (gguf_get_str(f, "tokenizer.ggml.model", &model) &&
	    !(model.len == 5 && memcmp(model.s, "llama", 5) == 0)) {
		tfail(err, errlen, f, "tokenizer.ggml.model: '%.*s' is not supported (need 'llama')",
		      (int)(model.len > 40 ? 40 : model.len), model.s);
		return NULL;
	}
	toks = gguf_find_kv(f, "tokenizer.ggml.tokens");
	if (!toks || toks->type != GGUF_VT_ARRAY ||
	    toks->arr_type != GGUF_VT_STRING) {
		tfail(err, errlen, f, "tokenizer.ggml.tokens: %s",
		      toks ? "not an array of strings" : "missing");
		return NULL;
	}
	n = toks->arr_n;
	if (n == 0 || n > INT32_MAX / 4) {
		tfail(err, errlen, f, "tokenizer.ggml.tokens: %" PRIu64 " tokens (need 1..%d)",
		      n, INT32_MAX / 4);
		return NULL;
	}
	scores = gguf_find_kv(f, "tokenizer.ggml.scores");
	if (scores && (scores->type != GGUF_VT_ARRAY ||
		       (scores->arr_type != GGUF_VT_F32 &&
			scores->arr_type != GGUF_VT_F64) ||
		       scores->arr_n != n)) {
		tfail(err, errlen, f, "tokenizer.ggml.scores: need an f32 array of %" PRIu64
		      " elements", n);
		return NULL;
	}
	types = gguf_find_kv(f, "tokenizer.ggml.token_type");
	if (types && (types->type != GGUF_VT_ARRAY || types->arr_n != n ||
		      types->arr_type == GGUF_VT_STRING ||
		      types->arr_type == GGUF_VT_F32 ||
		      types->arr_type == GGUF_VT_F64)) {
		tfail(err, errlen, f, "tokenizer.ggml.token_type: need an integer array of %" PRIu64
		      " elements", n);
		return NULL;
	}

	t = calloc(1, sizeof(*t));
	if (!t)
		goto oom;
	t->n_vocab = (int)n;
	t->vocab = calloc(n, sizeof(*t->vocab));
	while (sz < 2 * n)
		sz <<= 1;
	t->hmask = sz - 1;
	t->hash = calloc(sz, sizeof(*t->hash));
	if (!t->vocab || !t->hash)
		goto oom;
	for (i = 0; i < 256; i++)
		t->byte_tok[i] = -1;

	for (i = 0; i < n; i++) {
		struct tok_entry *e = &t->vocab[i];
		struct gguf_str s;
		int64_t ty = TT_NORMAL;
		uint64_t h;

		if (!gguf_arr_str(toks, i, &s) || s.len > UINT32_MAX) {
			tfail(err, errlen, f, "tokenizer.ggml.tokens: element %" PRIu64
			      " unreadable", i);
			goto fail;
		}
		e->s = s.s;
		e->len = (uint32_t)s.len;
		e->score = 0.0f;
		if (scores && !gguf_arr_f32(scores, i, &e->score)) {
			tfail(err, errlen, f, "tokenizer.ggml.scores: element %" PRIu64
			      " unreadable", i);
			goto fail;
		}
		if (types && !gguf_arr_i64(types, i, &ty)) {
			tfail(err, errlen, f, "tokenizer.ggml.token_type: element %" PRIu64
			      " unreadable", i);
			goto fail;
		}
		e->type = (int32_t)ty;
		/* Insert; a later duplicate string wins, as in llama.cpp. */
		h = fnv1a(e->s, e->len) & t->hmask;
		while (t->hash[h]) {
			const struct tok_entry *o = &t->vocab[t->hash[h] - 1];

			if (o->len == e->len && memcmp(o->s, e->s, e->len) == 0)
				break;
			h = (h + 1) & t->hmask;
		}
		t->hash[h] = (uint32_t)(i + 1);
	}
	/* Byte tokens "<0xXX>" (upper-case hex, as SentencePiece writes them). */
	for (i = 0; i < 256; i++) {
		char b[7];

		snprintf(b, sizeof(b), "<0x%02" PRIX64 ">", i);
		t->byte_tok[i] = lookup(t, b, 6);
	}

	if (!get_id(f, "tokenizer.ggml.bos_token_id", t->n_vocab, &t->bos, err, errlen) ||
	    !get_id(f, "tokenizer.ggml.eos_token_id", t->n_vocab, &t->eos, err, errlen) ||
	    !get_id(f, "tokenizer.ggml.unknown_token_id", t->n_vocab, &t->unk, err, errlen))
		goto fail;
	t->add_bos = get_bool(f, "tokenizer.ggml.add_bos_token", true);
	t->add_space_prefix = get_bool(f, "tokenizer.ggml.add_space_prefix", true);
	return t;

oom:
	tfail(err, errlen, f, "tokenizer: out of memory");
fail:
	tok_free(t);
	return NULL;
}

void tok_free(struct tokenizer *t)
{
	if (!t)
		return;
	free(t->vocab);
	free(t->hash);
	free(t);
}

int tok_n_vocab(const struct tokenizer *t)
{
	return t->n_vocab;
}

int32_t tok_bos(const struct tokenizer *t)
{
	return t->bos;
}

int32_t tok_eos(const struct tokenizer *t)
{
	return t->eos;
}

bool tok_add_bos_default(const struct tokenizer *t)
{
	return t->add_bos && t->bos >= 0;
}

int32_t tok_unk(const struct tokenizer *t)
{
	return t->unk;
}

/* ---- encoding ---- */

struct sym {
	uint32_t off;		/* into the escaped text */
	uint32_t n;		/* bytes; 0 once merged into the left neighbour */
	int32_t prev, next;
};

struct bigram {
	int32_t left, right;
	float score;
	uint32_t size;
};

struct heap {
	struct bigram *a;
	size_t n, cap;
};

/* True when a should be popped before b: higher score, then leftmost. */
static bool bg_before(const struct bigram *a, const struct bigram *b)
{
	if (a->score != b->score)
		return a->score > b->score;
	return a->left < b->left;
}

static int heap_push(struct heap *h, const struct bigram *b)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		struct bigram *na = realloc(h->a, cap * sizeof(*na));

		if (!na)
			return -ENOMEM;
		h->a = na;
		h->cap = cap;
	}
	i = h->n++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!bg_before(b, &h->a[parent]))
			break;
		h->a[i] = h->a[parent];
		i = parent;
	}
	h->a[i] = *b;
	return 0;
}

static struct bigram heap_pop(struct heap *h)
{
	struct bigram top = h->a[0];
	struct bigram last = h->a[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && bg_before(&h->a[c + 1], &h->a[c]))
			c++;
		if (!bg_before(&h->a[c], &last))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = last;
	return top;
}

static int try_bigram(const struct tokenizer *t, const char *text,
		      const struct sym *sy, struct heap *h, int32_t l, int32_t r)
{
	struct bigram b;
	int32_t id;

	if (l < 0 || r < 0)
		return 0;
	id = lookup(t, text + sy[l].off, sy[l].n + sy[r].n);
	if (id < 0)
		return 0;
	b.left = l;
	b.right = r;
	b.score = t->vocab[id].score;
	b.size = sy[l].n + sy[r].n;
	return heap_push(h, &b);
}

/* Token output with growth; counts beyond max are still counted. */
struct outv {
	int32_t *out;
	int max;
	int n;
};

static void emit(struct outv *o, int32_t id)
{
	if (o->n < o->max)
		o->out[o->n] = id;
	o->n++;
}

/* Length of a UTF-8 sequence from its lead byte (llama.cpp's table). */
static uint32_t utf8_len(unsigned char c)
{
	static const uint8_t lut[16] = { 1, 1, 1, 1, 1, 1, 1, 1,
					 1, 1, 1, 1, 2, 2, 3, 4 };

	return lut[c >> 4];
}

int tok_encode(const struct tokenizer *t, const char *text, bool add_bos,
	       int32_t *out, int max)
{
	struct outv o = { .out = out, .max = max < 0 ? 0 : max };
	struct heap h = { 0 };
	struct sym *sy = NULL;
	size_t tlen, i, esc_len = 0, n_sp = 0, cap;
	char *esc = NULL;
	int32_t n_sym = 0, k;
	int ret = INT_MIN;	/* out of memory */

	if (!t || !text || (!out && max > 0))
		return INT_MIN;
	if (add_bos && t->bos >= 0)
		emit(&o, t->bos);
	tlen = strlen(text);
	if (tlen == 0)
		goto done;
	/* Escape: optional leading space, ' ' -> U+2581 (3 bytes). */
	for (i = 0; i < tlen; i++)
		n_sp += text[i] == ' ';
	if (tlen > TOK_MAX_TEXT)
		goto out;
	cap = tlen + 2 * n_sp + 3 + 1;
	esc = malloc(cap);
	if (!esc)
		goto out;
	if (t->add_space_prefix) {
		memcpy(esc, "\xe2\x96\x81", 3);
		esc_len = 3;
	}
	for (i = 0; i < tlen; i++) {
		if (text[i] == ' ') {
			memcpy(esc + esc_len, "\xe2\x96\x81", 3);
			esc_len += 3;
		} else {
			esc[esc_len++] = text[i];
		}
	}

	sy = malloc(esc_len * sizeof(*sy));
	if (!sy)
		goto out;
	for (i = 0; i < esc_len; n_sym++) {
		uint32_t n = utf8_len((unsigned char)esc[i]);

		if (n > esc_len - i)
			n = (uint32_t)(esc_len - i);
		sy[n_sym].off = (uint32_t)i;
		sy[n_sym].n = n;
		sy[n_sym].prev = n_sym - 1;
		sy[n_sym].next = i + n < esc_len ? n_sym + 1 : -1;
		i += n;
	}
	for (k = 1; k < n_sym; k++)
		if (try_bigram(t, esc, sy, &h, k - 1, k))
			goto out;
	while (h.n) {
		struct bigram b = heap_pop(&h);
		struct sym *l = &sy[b.left], *r = &sy[b.right];

		/* Stale: one side already merged away or changed size. */
		if (l->n == 0 || r->n == 0 || l->n + r->n != b.size)
			continue;
		l->n += r->n;
		r->n = 0;
		l->next = r->next;
		if (r->next >= 0)
			sy[r->next].prev = b.left;
		if (try_bigram(t, esc, sy, &h, l->prev, b.left) ||
		    try_bigram(t, esc, sy, &h, b.left, l->next))
			goto out;
	}
	for (k = 0; k != -1; k = sy[k].next) {
		int32_t id = lookup(t, esc + sy[k].off, sy[k].n);
		uint32_t j;

		if (id >= 0) {
			emit(&o, id);
			continue;
		}
		for (j = 0; j < sy[k].n; j++) {
			int32_t bt = t->byte_tok[(unsigned char)esc[sy[k].off + j]];

			if (bt < 0)
				bt = t->unk;
			if (bt >= 0)
				emit(&o, bt);
		}
	}
done:
	ret = o.n > o.max ? -o.n : o.n;
out:
	free(h.a);
	free(sy);
	free(esc);
	return ret;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int tok_piece(const struct tokenizer *t, int32_t id, char *buf, size_t size)
{
	const struct tok_entry *e;
	size_t n = 0, i;

	if (!t || id < 0 || id >= t->n_vocab || (!buf && size))
		return -1;
	e = &t->vocab[id];
	switch (e->type) {
	case TT_CONTROL:
	case TT_UNUSED:
		return 0;
	case TT_UNKNOWN:
		/* llama.cpp prints U+2585 for the unknown token. */
		if (size < 3)
			return -1;
		memcpy(buf, "\xe2\x96\x85", 3);
		return 3;
	case TT_BYTE: {
		int hi = e->len == 6 ? hexval(e->s[3]) : -1;
		int lo = e->len == 6 ? hexval(e->s[4]) : -1;

		if (hi >= 0 && lo >= 0 && memcmp(e->s, "<0x", 3) == 0 &&
		    e->s[5] == '>') {
			if (size < 1)
				return -1;
			buf[0] = (char)(hi << 4 | lo);
			return 1;
		}
		break;
	}
	default:
		break;
	}
	/* Normal and user-defined: U+2581 -> ' '. */
	for (i = 0; i < e->len; i++) {
		if (i + 3 <= e->len && memcmp(e->s + i, "\xe2\x96\x81", 3) == 0) {
			if (n >= size)
				return -1;
			buf[n++] = ' ';
			i += 2;
			continue;
		}
		if (n >= size)
			return -1;
		buf[n++] = e->s[i];
	}
	return (int)n;
}
