// SPDX-License-Identifier: MIT
/*
 * Byte-level BPE ("gpt2") merges, following llama.cpp's
 * llm_tokenizer_bpe_session (src/llama-vocab.cpp) and GPT-2's
 * bytes_to_unicode():
 *   - the run is made valid UTF-8 (utf8.h's rule) and cut into pre-tokens
 *     (tok_pre.c);
 *   - each byte of a pre-token becomes a symbol, the token of the byte's
 *     printable stand-in character;
 *   - with ignore_merges (llama-3), a pre-token that is a token as a whole
 *     is emitted at once;
 *   - otherwise the adjacent pair with the lowest merge rank (the index in
 *     tokenizer.ggml.merges; ties: leftmost) is merged until no pair has a
 *     merge; each symbol is then emitted as its token.
 * Merges are kept as token-id triples (left, right -> merged) in a hash
 * table, so a merge step costs O(1) plus the queue's O(log n) and the
 * whole pre-token O(n log n), however long it is. A merge whose parts or
 * result are not in the vocabulary can never apply and is dropped at load.
 */
#include "tok_impl.h"
#include "gguf.h"
#include "utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- GPT-2 byte alphabet ---- */

/* Bytes that stand for themselves: '!'..'~', 0xA1..0xAC, 0xAE..0xFF. */
static bool self_byte(unsigned int b)
{
	return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
}

/*
 * The others get 256, 257, ... in byte order: 0x00..0x20 -> 256..288,
 * 0x7F..0xA0 -> 289..322, 0xAD -> 323.
 */
uint32_t tok_byte_to_cp(unsigned char b)
{
	if (self_byte(b))
		return b;
	if (b <= 0x20)
		return 256 + b;
	if (b <= 0xa0)
		return 256 + 33 + (b - 0x7f);
	return 256 + 67;	/* 0xAD */
}

int tok_cp_to_byte(uint32_t cp)
{
	if (cp < 256)
		return self_byte(cp) ? (int)cp : -1;
	cp -= 256;
	if (cp <= 32)
		return (int)cp;
	if (cp < 67)
		return (int)(0x7f + cp - 33);
	return cp == 67 ? 0xad : -1;
}

/* ---- merge table ---- */

static uint64_t pair_hash(int32_t l, int32_t r)
{
	uint64_t k = (uint64_t)(uint32_t)l << 32 | (uint32_t)r;

	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static const struct tok_merge *find_merge(const struct tokenizer *t, int32_t l, int32_t r)
{
	uint64_t h = pair_hash(l, r) & t->mmask;

	while (t->merges[h].merged >= 0) {
		const struct tok_merge *m = &t->merges[h];

		if (m->left == l && m->right == r)
			return m;
		h = (h + 1) & t->mmask;
	}
	return NULL;
}

/* Add one "A B" merge string as rank @rank; the first of duplicates wins. */
static void add_merge(struct tokenizer *t, struct gguf_str s, int32_t rank, char *buf)
{
	const char *sp = s.len > 1 ? memchr(s.s + 1, ' ', s.len - 1) : NULL;
	size_t la, lb;
	int32_t l, r, m;
	uint64_t h;

	if (!sp)
		return;
	la = (size_t)(sp - s.s);
	lb = s.len - la - 1;
	l = tok_lookup(t, s.s, la);
	r = tok_lookup(t, sp + 1, lb);
	memcpy(buf, s.s, la);
	memcpy(buf + la, sp + 1, lb);
	m = tok_lookup(t, buf, la + lb);
	if (l < 0 || r < 0 || m < 0)
		return;
	h = pair_hash(l, r) & t->mmask;
	while (t->merges[h].merged >= 0) {
		if (t->merges[h].left == l && t->merges[h].right == r)
			return;
		h = (h + 1) & t->mmask;
	}
	t->merges[h] = (struct tok_merge){ .left = l, .right = r, .merged = m, .rank = rank };
}

static int load_merges(struct tokenizer *t, const struct gguf_file *f, char *err,
		       size_t errlen)
{
	const struct gguf_kv *kv = gguf_find_kv(f, "tokenizer.ggml.merges");
	uint64_t i, sz = 16;
	char *buf;

	if (!kv || kv->type != GGUF_VT_ARRAY || kv->arr_type != GGUF_VT_STRING) {
		snprintf(err, errlen, "%s: tokenizer.ggml.merges: %s (a gpt2 vocabulary needs them)",
			 f->path ? f->path : "(gguf)", kv ? "not an array of strings" : "missing");
		return -EINVAL;
	}
	if (kv->arr_n > INT32_MAX / 4) {
		snprintf(err, errlen, "%s: tokenizer.ggml.merges: %" PRIu64 " merges is too many",
			 f->path ? f->path : "(gguf)", kv->arr_n);
		return -EINVAL;
	}
	while (sz < 2 * kv->arr_n)
		sz <<= 1;
	t->mmask = sz - 1;
	t->merges = malloc(sz * sizeof(*t->merges));
	buf = malloc(2 * (size_t)t->max_len + 2);
	if (!t->merges || !buf) {
		free(buf);
		return -ENOMEM;
	}
	for (i = 0; i < sz; i++)
		t->merges[i].merged = -1;
	for (i = 0; i < kv->arr_n; i++) {
		struct gguf_str s;

		if (!gguf_arr_str(kv, i, &s)) {
			snprintf(err, errlen, "%s: tokenizer.ggml.merges: element %" PRIu64
				 " unreadable", f->path ? f->path : "(gguf)", i);
			free(buf);
			return -EINVAL;
		}
		/* Longer than any two tokens: cannot name two of them. */
		if (s.len <= 2 * (uint64_t)t->max_len + 1)
			add_merge(t, s, (int32_t)i, buf);
	}
	free(buf);
	return 0;
}

int tok_bpe_load(struct tokenizer *t, const struct gguf_file *f, char *err, size_t errlen)
{
	struct gguf_str pre = { 0 };
	unsigned int b;
	int ret;

	if (gguf_get_str(f, "tokenizer.ggml.pre", &pre) && pre.len >= sizeof(t->pre_name)) {
		snprintf(err, errlen, "%s: tokenizer.ggml.pre: '%.40s...' is not supported (supported: %s)",
			 f->path ? f->path : "(gguf)", pre.s, tok_pre_names());
		return -EINVAL;
	}
	memcpy(t->pre_name, pre.s, pre.len);
	t->pre_name[pre.len] = '\0';
	t->pre = tok_pre_get(t->pre_name, &t->ignore_merges, err, errlen);
	if (!t->pre) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, errlen, "%s: %s", f->path ? f->path : "(gguf)", msg);
		return -EINVAL;
	}
	ret = load_merges(t, f, err, errlen);
	if (ret)
		return ret;
	for (b = 0; b < 256; b++) {
		char u[4];
		size_t n = utf8_encode(tok_byte_to_cp((unsigned char)b), u);

		t->byte_tok[b] = tok_lookup(t, u, n);
	}
	return 0;
}

void tok_bpe_free(struct tokenizer *t)
{
	free(t->merges);
	t->merges = NULL;
}

/* ---- merging one pre-token ---- */

struct bsym {
	int32_t id;		/* token, -1 for a byte the vocab lacks */
	int32_t prev, next;	/* -1: none */
	unsigned char byte;	/* the first byte it covers (for byte fallback) */
	bool alive;
};

struct bpair {
	int32_t rank, left, right;
	int32_t lid, rid, merged;
};

struct bwork {
	const struct tokenizer *t;
	struct tok_out *o;
	struct bsym *sy;
	struct bpair *q;
	size_t cap_sy, cap_q, nq;
	char *enc;		/* byte-level text of a pre-token (ignore_merges) */
	size_t cap_enc;
};

/* Lower rank first, then leftmost. */
static bool pair_before(const struct bpair *a, const struct bpair *b)
{
	return a->rank != b->rank ? a->rank < b->rank : a->left < b->left;
}

static void q_push(struct bwork *w, const struct bpair *p)
{
	size_t i = w->nq++;

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!pair_before(p, &w->q[parent]))
			break;
		w->q[i] = w->q[parent];
		i = parent;
	}
	w->q[i] = *p;
}

static struct bpair q_pop(struct bwork *w)
{
	struct bpair top = w->q[0], last = w->q[--w->nq];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= w->nq)
			break;
		if (c + 1 < w->nq && pair_before(&w->q[c + 1], &w->q[c]))
			c++;
		if (!pair_before(&w->q[c], &last))
			break;
		w->q[i] = w->q[c];
		i = c;
	}
	if (w->nq)
		w->q[i] = last;
	return top;
}

/* Queue the pair (l, r) when a merge exists for it. */
static void try_pair(struct bwork *w, int32_t l, int32_t r)
{
	const struct tok_merge *m;
	struct bpair p;

	if (l < 0 || r < 0 || w->sy[l].id < 0 || w->sy[r].id < 0)
		return;
	m = find_merge(w->t, w->sy[l].id, w->sy[r].id);
	if (!m)
		return;
	p = (struct bpair){ .rank = m->rank, .left = l, .right = r,
			    .lid = w->sy[l].id, .rid = w->sy[r].id, .merged = m->merged };
	q_push(w, &p);
	if (w->o->stats)
		w->o->stats->queue_pushes++;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	void *np;

	if (need <= *cap)
		return 0;
	np = realloc(*p, need * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = need;
	return 0;
}

/* A symbol the vocab has no token for: the byte-level character's bytes one by one. */
static void emit_fallback(struct bwork *w, unsigned char b)
{
	char u[4];
	size_t n = utf8_encode(tok_byte_to_cp(b), u), i;

	for (i = 0; i < n; i++) {
		int32_t id = tok_lookup(w->t, u + i, 1);

		if (id >= 0)
			tok_emit(w->o, id);
	}
}

/* ignore_merges: the whole pre-token as one token, when it is one. */
static int whole_word(struct bwork *w, const char *s, size_t n, bool *done)
{
	size_t i, k = 0;
	int32_t id;

	*done = false;
	if (grow((void **)&w->enc, &w->cap_enc, 2 * n, 1))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		k += utf8_encode(tok_byte_to_cp((unsigned char)s[i]), w->enc + k);
	id = tok_lookup(w->t, w->enc, k);
	if (id >= 0) {
		tok_emit(w->o, id);
		*done = true;
	}
	return 0;
}

static int merge_word(void *ctx, const char *s, size_t n)
{
	struct bwork *w = ctx;
	struct tok_stats *st = w->o->stats;
	size_t i;
	int32_t k;

	if (st)
		st->pretokens++;
	if (w->t->ignore_merges) {
		bool done;

		if (whole_word(w, s, n, &done))
			return -ENOMEM;
		if (done)
			return 0;
	}
	/* Each symbol starts at most one pair; each merge adds at most two. */
	if (grow((void **)&w->sy, &w->cap_sy, n, sizeof(*w->sy)) ||
	    grow((void **)&w->q, &w->cap_q, 3 * n, sizeof(*w->q)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		unsigned char b = (unsigned char)s[i];

		w->sy[i] = (struct bsym){ .id = w->t->byte_tok[b], .byte = b, .alive = true,
					  .prev = (int32_t)i - 1,
					  .next = i + 1 < n ? (int32_t)i + 1 : -1 };
	}
	if (st)
		st->symbols += n;
	w->nq = 0;
	for (i = 1; i < n; i++)
		try_pair(w, (int32_t)i - 1, (int32_t)i);
	while (w->nq) {
		struct bpair p = q_pop(w);
		struct bsym *l = &w->sy[p.left], *r = &w->sy[p.right];

		/* Stale: a side was merged away or grew since the pair was queued. */
		if (!l->alive || !r->alive || l->next != p.right || l->id != p.lid ||
		    r->id != p.rid)
			continue;
		l->id = p.merged;
		l->next = r->next;
		if (r->next >= 0)
			w->sy[r->next].prev = p.left;
		r->alive = false;
		if (st)
			st->merges++;
		try_pair(w, l->prev, p.left);
		try_pair(w, p.left, l->next);
	}
	for (k = 0; k >= 0; k = w->sy[k].next) {
		if (w->sy[k].id >= 0)
			tok_emit(w->o, w->sy[k].id);
		else
			emit_fallback(w, w->sy[k].byte);
	}
	return 0;
}

int tok_bpe_encode(const struct tokenizer *t, const char *text, size_t len, struct tok_out *o)
{
	struct bwork w = { .t = t, .o = o };
	char *clean = NULL;
	const char *s = text;
	int ret;

	if (!utf8_is_valid(text, len)) {
		clean = malloc(3 * len);
		if (!clean)
			return -ENOMEM;
		len = utf8_sanitize(text, len, clean);
		s = clean;
	}
	ret = tok_pre_split(t->pre, s, len, merge_word, &w, o->stats);
	free(w.sy);
	free(w.q);
	free(w.enc);
	free(clean);
	return ret;
}
