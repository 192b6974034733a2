// SPDX-License-Identifier: MIT
/*
 * SentencePiece ("llama") merges, following llama.cpp's llm_tokenizer_spm
 * (src/llama-vocab.cpp):
 *   - a space is prepended to a text run that starts the text or follows a
 *     special token when add_space_prefix, and every ' ' becomes U+2581;
 *   - the run is split into UTF-8 characters (the length comes from the
 *     lead byte's high nibble, clamped to the bytes left, so invalid UTF-8
 *     never reads out of bounds and its bytes are kept);
 *   - repeatedly the adjacent pair of symbols whose concatenation is a vocab
 *     entry with the highest score is merged (ties: leftmost pair);
 *   - each final symbol is emitted as its token when it is in the vocab,
 *     otherwise as byte tokens "<0xXX>" for each of its bytes (byte
 *     fallback), or the unknown token when the vocab has no byte tokens.
 */
#include "tok_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

static int try_bigram(const struct tokenizer *t, const char *text, const struct sym *sy,
		      struct heap *h, int32_t l, int32_t r, struct tok_stats *st)
{
	struct bigram b;
	int32_t id;

	if (l < 0 || r < 0)
		return 0;
	id = tok_lookup(t, text + sy[l].off, sy[l].n + sy[r].n);
	if (id < 0)
		return 0;
	b.left = l;
	b.right = r;
	b.score = t->vocab[id].score;
	b.size = sy[l].n + sy[r].n;
	if (st)
		st->queue_pushes++;
	return heap_push(h, &b);
}

/* Length of a UTF-8 sequence from its lead byte (llama.cpp's table). */
static uint32_t utf8_len(unsigned char c)
{
	static const uint8_t lut[16] = { 1, 1, 1, 1, 1, 1, 1, 1,
					 1, 1, 1, 1, 2, 2, 3, 4 };

	return lut[c >> 4];
}

/* Escape into a new buffer: optional prefix space, ' ' -> U+2581. */
static char *escape(const struct tokenizer *t, const char *text, size_t len, bool prefix,
		    size_t *out_len)
{
	size_t i, n_sp = 0, o = 0;
	char *esc;

	for (i = 0; i < len; i++)
		n_sp += text[i] == ' ';
	esc = malloc(len + 2 * n_sp + 3 + 1);
	if (!esc)
		return NULL;
	if (prefix && t->add_space_prefix) {
		memcpy(esc, "\xe2\x96\x81", 3);
		o = 3;
	}
	for (i = 0; i < len; i++) {
		if (text[i] == ' ') {
			memcpy(esc + o, "\xe2\x96\x81", 3);
			o += 3;
		} else {
			esc[o++] = text[i];
		}
	}
	*out_len = o;
	return esc;
}

/* Emit each final symbol: its token, or byte fallback, or unknown. */
static void emit_symbols(const struct tokenizer *t, const char *esc, const struct sym *sy,
			 struct tok_out *o)
{
	int32_t k;

	for (k = 0; k != -1; k = sy[k].next) {
		int32_t id = tok_lookup(t, esc + sy[k].off, sy[k].n);
		uint32_t j;

		if (id >= 0) {
			tok_emit(o, id);
			continue;
		}
		for (j = 0; j < sy[k].n; j++) {
			int32_t bt = t->byte_tok[(unsigned char)esc[sy[k].off + j]];

			if (bt < 0)
				bt = t->unk;
			if (bt >= 0)
				tok_emit(o, bt);
		}
	}
}

int tok_spm_encode(const struct tokenizer *t, const char *text, size_t len, bool first,
		   struct tok_out *o)
{
	struct tok_stats *st = o->stats;
	struct heap h = { 0 };
	struct sym *sy = NULL;
	size_t esc_len = 0, i;
	int32_t n_sym = 0, k;
	int ret = -ENOMEM;
	char *esc;

	esc = escape(t, text, len, first, &esc_len);
	if (!esc)
		return -ENOMEM;
	sy = malloc((esc_len ? esc_len : 1) * sizeof(*sy));
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
	if (st) {
		st->pretokens++;
		st->symbols += (uint64_t)n_sym;
	}
	for (k = 1; k < n_sym; k++)
		if (try_bigram(t, esc, sy, &h, k - 1, k, st))
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
		if (st)
			st->merges++;
		if (try_bigram(t, esc, sy, &h, l->prev, b.left, st) ||
		    try_bigram(t, esc, sy, &h, b.left, l->next, st))
			goto out;
	}
	if (n_sym)
		emit_symbols(t, esc, sy, o);
	ret = 0;
out:
	free(h.a);
	free(sy);
	free(esc);
	return ret;
}
