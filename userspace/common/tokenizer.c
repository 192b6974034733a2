// SPDX-License-Identifier: MIT
/*
 * Tokenizer: vocabulary loading, special tokens, encoding front end and
 * pieces (tokenizer.h). The merge algorithms live in tok_spm.c and
 * tok_bpe.c, the BPE pre-tokenizer in tok_pre.c.
 *
 * Behaviour follows llama.cpp's src/llama-vocab.cpp (llama_vocab::impl::
 * load, tokenize, tokenizer_st_partition, token_to_piece) except where
 * tokenizer.h says otherwise (special tokens only where allowed, SPM
 * unknown piece U+2585).
 */
#include "tok_impl.h"
#include "gguf.h"
#include "utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

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

int32_t tok_lookup(const struct tokenizer *t, const char *s, size_t len)
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

/*
 * Optional token id kv: *out keeps its default when absent; false when
 * present but not an id inside the vocabulary. llama.cpp writes -1 (as
 * i32, or u32 0xffffffff) for "none".
 */
static bool get_id(const struct gguf_file *f, const char *key, int n_vocab,
		   int32_t *out, char *err, size_t errlen)
{
	const struct gguf_kv *kv = gguf_find_kv(f, key);
	uint64_t v;

	if (!kv)
		return true;
	if (!gguf_get_u64(f, key, &v)) {
		if (kv->type == GGUF_VT_I32 || kv->type == GGUF_VT_I64) {
			*out = -1;
			return true;
		}
		tfail(err, errlen, f, "%s: value type %d is not an integer", key, kv->type);
		return false;
	}
	if (v == UINT32_MAX) {
		*out = -1;
		return true;
	}
	if (v >= (uint64_t)n_vocab) {
		tfail(err, errlen, f, "%s: id %" PRIu64 " out of range (vocab %d)", key, v,
		      n_vocab);
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

static bool str_is(struct gguf_str s, const char *lit)
{
	return s.len == strlen(lit) && memcmp(s.s, lit, s.len) == 0;
}

/* Check the optional scores and token type arrays against the vocab size. */
static bool check_arrays(const struct gguf_file *f, uint64_t n, const struct gguf_kv *scores,
			 const struct gguf_kv *types, char *err, size_t errlen)
{
	if (scores && (scores->type != GGUF_VT_ARRAY ||
		       (scores->arr_type != GGUF_VT_F32 && scores->arr_type != GGUF_VT_F64) ||
		       scores->arr_n != n)) {
		tfail(err, errlen, f, "tokenizer.ggml.scores: need an f32 array of %" PRIu64
		      " elements", n);
		return false;
	}
	if (types && (types->type != GGUF_VT_ARRAY || types->arr_n != n ||
		      types->arr_type == GGUF_VT_STRING || types->arr_type == GGUF_VT_F32 ||
		      types->arr_type == GGUF_VT_F64)) {
		tfail(err, errlen, f, "tokenizer.ggml.token_type: need an integer array of %" PRIu64
		      " elements", n);
		return false;
	}
	return true;
}

/* Read every token's text, score and type and index the texts. */
static bool load_vocab(struct tokenizer *t, const struct gguf_file *f, const struct gguf_kv *toks,
		       const struct gguf_kv *scores, const struct gguf_kv *types, char *err,
		       size_t errlen)
{
	uint64_t i, n = (uint64_t)t->n_vocab;

	for (i = 0; i < n; i++) {
		struct tok_entry *e = &t->vocab[i];
		struct gguf_str s;
		int64_t ty = TT_NORMAL;
		uint64_t h;

		if (!gguf_arr_str(toks, i, &s) || s.len > UINT32_MAX) {
			tfail(err, errlen, f, "tokenizer.ggml.tokens: element %" PRIu64 " unreadable", i);
			return false;
		}
		e->s = s.s;
		e->len = (uint32_t)s.len;
		if (e->len > t->max_len)
			t->max_len = e->len;
		e->score = 0.0f;
		if (scores && !gguf_arr_f32(scores, i, &e->score)) {
			tfail(err, errlen, f, "tokenizer.ggml.scores: element %" PRIu64 " unreadable", i);
			return false;
		}
		if (types && !gguf_arr_i64(types, i, &ty)) {
			tfail(err, errlen, f, "tokenizer.ggml.token_type: element %" PRIu64
			      " unreadable", i);
			return false;
		}
		e->type = ty >= TT_NORMAL && ty <= TT_BYTE ? (int32_t)ty : 0;
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
	return true;
}

static bool is_special_type(int32_t type)
{
	return type == TT_CONTROL || type == TT_USER_DEFINED || type == TT_UNKNOWN;
}

/* Bracketed markup: "<...>" or "[...]" (<think>, <tool_call>, [PAD151646]). */
static bool is_markup(const char *s, size_t n)
{
	return n >= 3 && ((s[0] == '<' && s[n - 1] == '>') || (s[0] == '[' && s[n - 1] == ']'));
}

/* By first byte, then longest first (leftmost-longest matching), then id. */
static int cmp_special(const void *a, const void *b, void *ctx)
{
	const struct tokenizer *t = ctx;
	const struct tok_entry *x = &t->vocab[*(const int32_t *)a];
	const struct tok_entry *y = &t->vocab[*(const int32_t *)b];
	unsigned char cx = (unsigned char)x->s[0], cy = (unsigned char)y->s[0];

	if (cx != cy)
		return cx < cy ? -1 : 1;
	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return *(const int32_t *)a < *(const int32_t *)b ? -1 : 1;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

/* Special tokens for the partition, and the end-of-generation set. */
static int index_special(struct tokenizer *t)
{
	static const char *const eog_text[] = {
		"<|im_end|>", "<|eot_id|>", "<|endoftext|>", "<|end_of_text|>", "<|end|>",
		"<|eom_id|>", "<end_of_turn>", "<|return|>", "<|call|>", "<EOT>",
	};
	int i, n = 0, b;
	size_t k;

	for (i = 0; i < t->n_vocab; i++)
		n += is_special_type(t->vocab[i].type) && t->vocab[i].len > 0;
	t->special = malloc((n ? n : 1) * sizeof(*t->special));
	t->eog = malloc((ARRAY_LEN(eog_text) + 3) * sizeof(*t->eog));
	if (!t->special || !t->eog)
		return -ENOMEM;
	for (i = 0; i < t->n_vocab; i++) {
		struct tok_entry *e = &t->vocab[i];

		if (!is_special_type(e->type) || !e->len)
			continue;
		t->special[t->n_special++] = i;
		e->plain = e->type == TT_USER_DEFINED && !is_markup(e->s, e->len);
		t->n_plain += e->plain;
	}
	qsort_r(t->special, t->n_special, sizeof(*t->special), cmp_special, t);
	for (b = 0, i = 0; b < 256; b++) {
		t->special_first[b] = i;
		while (i < t->n_special && (unsigned char)t->vocab[t->special[i]].s[0] == b)
			i++;
	}
	t->special_first[256] = i;

	if (t->eot < 0) {
		static const char *const eot_text[] = { "<|eot_id|>", "<|im_end|>", "<|end|>",
							"<end_of_turn>", "<|endoftext|>" };

		for (k = 0; k < ARRAY_LEN(eot_text) && t->eot < 0; k++)
			t->eot = tok_special_id(t, eot_text[k]);
	}
	for (k = 0; k < ARRAY_LEN(eog_text); k++) {
		int32_t id = tok_special_id(t, eog_text[k]);

		if (id >= 0)	/* control or markup user-defined, as llama.cpp forces */
			t->eog[t->n_eog++] = id;
	}
	if (t->eos >= 0)
		t->eog[t->n_eog++] = t->eos;
	if (t->eot >= 0)
		t->eog[t->n_eog++] = t->eot;
	if (t->eom >= 0)
		t->eog[t->n_eog++] = t->eom;
	qsort(t->eog, t->n_eog, sizeof(*t->eog), cmp_i32);
	return 0;
}

/* tokenizer.ggml.model -> t->model; false (with @err) when unsupported. */
static bool get_model(struct tokenizer *t, const struct gguf_file *f, char *err, size_t errlen)
{
	struct gguf_str model;

	t->model = TOK_MODEL_SPM;
	if (!gguf_get_str(f, "tokenizer.ggml.model", &model) || str_is(model, "llama"))
		return true;
	if (str_is(model, "gpt2")) {
		t->model = TOK_MODEL_BPE;
		return true;
	}
	tfail(err, errlen, f, "tokenizer.ggml.model: '%.*s' is not supported (supported: 'llama' (SentencePiece), 'gpt2' (byte-level BPE))",
	      (int)(model.len > 40 ? 40 : model.len), model.s);
	return false;
}

/* Special ids and the add_* flags, with llama.cpp's defaults. */
static bool load_flags(struct tokenizer *t, const struct gguf_file *f, char *err, size_t errlen)
{
	bool spm = t->model == TOK_MODEL_SPM;

	t->bos = spm && t->n_vocab > 1 ? 1 : -1;
	t->eos = spm && t->n_vocab > 2 ? 2 : -1;
	t->unk = spm ? 0 : -1;
	t->eot = -1;
	t->eom = -1;
	if (!get_id(f, "tokenizer.ggml.bos_token_id", t->n_vocab, &t->bos, err, errlen) ||
	    !get_id(f, "tokenizer.ggml.eos_token_id", t->n_vocab, &t->eos, err, errlen) ||
	    !get_id(f, "tokenizer.ggml.unknown_token_id", t->n_vocab, &t->unk, err, errlen) ||
	    !get_id(f, "tokenizer.ggml.eot_token_id", t->n_vocab, &t->eot, err, errlen) ||
	    !get_id(f, "tokenizer.ggml.eom_token_id", t->n_vocab, &t->eom, err, errlen))
		return false;
	/* llama.cpp: SPM adds BOS; BPE only for the llama-3 pre-tokenizer. */
	t->add_bos = spm || !strcmp(t->pre_name, "llama-bpe") || !strcmp(t->pre_name, "llama3") ||
		     !strcmp(t->pre_name, "llama-v3");
	t->add_bos = get_bool(f, "tokenizer.ggml.add_bos_token", t->add_bos);
	t->add_eos = get_bool(f, "tokenizer.ggml.add_eos_token", false);
	t->add_space_prefix = get_bool(f, "tokenizer.ggml.add_space_prefix", spm);
	return true;
}

struct tokenizer *tok_load(const struct gguf_file *f, char *err, size_t errlen)
{
	const struct gguf_kv *toks, *scores, *types;
	struct tokenizer *t;
	uint64_t n, i, sz = 8;

	if (err && errlen)
		err[0] = '\0';
	t = calloc(1, sizeof(*t));
	if (!t) {
		tfail(err, errlen, f, "tokenizer: out of memory");
		return NULL;
	}
	if (!get_model(t, f, err, errlen))
		goto fail;
	toks = gguf_find_kv(f, "tokenizer.ggml.tokens");
	if (!toks || toks->type != GGUF_VT_ARRAY || toks->arr_type != GGUF_VT_STRING) {
		tfail(err, errlen, f, "tokenizer.ggml.tokens: %s",
		      toks ? "not an array of strings" : "missing");
		goto fail;
	}
	n = toks->arr_n;
	if (n == 0 || n > INT32_MAX / 4) {
		tfail(err, errlen, f, "tokenizer.ggml.tokens: %" PRIu64 " tokens (need 1..%d)", n,
		      INT32_MAX / 4);
		goto fail;
	}
	scores = gguf_find_kv(f, "tokenizer.ggml.scores");
	types = gguf_find_kv(f, "tokenizer.ggml.token_type");
	if (!check_arrays(f, n, scores, types, err, errlen))
		goto fail;

	t->n_vocab = (int)n;
	t->vocab = calloc(n, sizeof(*t->vocab));
	while (sz < 2 * n)
		sz <<= 1;
	t->hmask = sz - 1;
	t->hash = calloc(sz, sizeof(*t->hash));
	if (!t->vocab || !t->hash)
		goto oom;
	if (!load_vocab(t, f, toks, scores, types, err, errlen))
		goto fail;
	for (i = 0; i < 256; i++)
		t->byte_tok[i] = -1;
	if (t->model == TOK_MODEL_SPM) {
		/* Byte tokens "<0xXX>" (upper-case hex, as SentencePiece writes them). */
		for (i = 0; i < 256; i++) {
			char b[7];

			snprintf(b, sizeof(b), "<0x%02" PRIX64 ">", i);
			t->byte_tok[i] = tok_lookup(t, b, 6);
		}
	} else if (tok_bpe_load(t, f, err, errlen)) {
		goto fail;
	}
	if (!load_flags(t, f, err, errlen))
		goto fail;
	if (index_special(t))
		goto oom;
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
	tok_bpe_free(t);
	free(t->special);
	free(t->eog);
	free(t->vocab);
	free(t->hash);
	free(t);
}

/* ---- accessors ---- */

enum tok_model tok_get_model(const struct tokenizer *t)
{
	return t->model;
}

const char *tok_pre(const struct tokenizer *t)
{
	return t->pre_name;
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

int32_t tok_unk(const struct tokenizer *t)
{
	return t->unk;
}

int32_t tok_eot(const struct tokenizer *t)
{
	return t->eot;
}

bool tok_add_space_prefix(const struct tokenizer *t)
{
	return t->model == TOK_MODEL_SPM && t->add_space_prefix;
}

bool tok_add_bos_default(const struct tokenizer *t)
{
	return t->add_bos && t->bos >= 0;
}

bool tok_add_eos_default(const struct tokenizer *t)
{
	return t->add_eos && t->eos >= 0;
}

bool tok_is_special(const struct tokenizer *t, int32_t id)
{
	return id >= 0 && id < t->n_vocab && is_special_type(t->vocab[id].type) &&
	       !t->vocab[id].plain;
}

bool tok_is_eog(const struct tokenizer *t, int32_t id)
{
	return bsearch(&id, t->eog, t->n_eog, sizeof(*t->eog), cmp_i32) != NULL;
}

int32_t tok_special_id(const struct tokenizer *t, const char *text)
{
	int32_t id = tok_lookup(t, text, strlen(text));

	return id >= 0 && is_special_type(t->vocab[id].type) && !t->vocab[id].plain ? id : -1;
}

const char *tok_text(const struct tokenizer *t, int32_t id, size_t *len)
{
	if (!t || id < 0 || id >= t->n_vocab)
		return NULL;
	if (len)
		*len = t->vocab[id].len;
	return t->vocab[id].s;
}

size_t tok_max_piece(const struct tokenizer *t)
{
	return t->max_len > 3 ? t->max_len : 3;
}

int tok_max_tokens(const struct tokenizer *t, size_t len)
{
	if (len > ((size_t)INT_MAX - 5) / 6)
		return INT_MAX;
	return (int)(6 * len + 5);
}

/* ---- encoding ---- */

/*
 * The special token starting at @p (wholly inside [@p, @end)), or -1;
 * with !@all only the plain user-defined tokens count.
 */
static int32_t special_at(const struct tokenizer *t, const char *p, const char *end, bool all)
{
	unsigned char c = (unsigned char)*p;
	int i;

	for (i = t->special_first[c]; i < t->special_first[c + 1]; i++) {
		const struct tok_entry *e = &t->vocab[t->special[i]];

		if ((all || e->plain) && (size_t)(end - p) >= e->len &&
		    memcmp(p, e->s, e->len) == 0)
			return t->special[i];
	}
	return -1;
}

/*
 * Find the next special token at or after @from: *@at gets its offset.
 * All of them count everywhere with @any, else only inside @o's spans;
 * plain user-defined tokens count everywhere.
 */
static int32_t next_special(const struct tokenizer *t, const char *text, size_t len,
			    size_t from, bool any, const struct tok_encode_opts *o, size_t *at)
{
	size_t s = 0, n_spans = o && !any ? o->n_special : 0, p, hi = n_spans;

	if (!t->n_special || (!any && !n_spans && !t->n_plain))
		return -1;
	/*
	 * The first span ending after @from (spans are sorted and disjoint):
	 * a binary search, so that a prompt of many messages is not scanned
	 * from its first span at every special token (quadratic).
	 */
	while (s < hi) {
		size_t mid = s + (hi - s) / 2;

		if (o->special[mid].off + o->special[mid].len <= from)
			s = mid + 1;
		else
			hi = mid;
	}
	for (p = from; p < len; p++) {
		const char *end = text + len;
		bool in_span;
		int32_t id;

		while (s < n_spans && o->special[s].off + o->special[s].len <= p)
			s++;
		in_span = s < n_spans && o->special[s].off <= p;
		if (!any && !in_span && !t->n_plain) {
			if (s == n_spans)
				return -1;
			p = o->special[s].off - 1;	/* skip to the next span */
			continue;
		}
		if (in_span)
			end = text + o->special[s].off + o->special[s].len;
		id = special_at(t, text + p, end, any || in_span);
		if (id < 0 && in_span && t->n_plain)
			id = special_at(t, text + p, text + len, false);
		if (id >= 0) {
			*at = p;
			return id;
		}
	}
	return -1;
}

static int encode_run(const struct tokenizer *t, const char *s, size_t n, bool after_special,
		      struct tok_out *o)
{
	if (!n)
		return 0;
	if (t->model == TOK_MODEL_SPM)
		return tok_spm_encode(t, s, n, after_special, o);
	return tok_bpe_encode(t, s, n, o);
}

static bool spans_ok(const struct tok_encode_opts *o, size_t len)
{
	size_t i, prev_end = 0;

	if (!o || !o->n_special)
		return true;
	if (!o->special)
		return false;
	for (i = 0; i < o->n_special; i++) {
		const struct tok_span *sp = &o->special[i];

		if (sp->off < prev_end || sp->off > len || sp->len > len - sp->off)
			return false;
		prev_end = sp->off + sp->len;
	}
	return true;
}

int tok_encode_ex(const struct tokenizer *t, const char *text, size_t len,
		  const struct tok_encode_opts *o, int32_t *out, int max)
{
	struct tok_out to = { .out = out, .max = max < 0 ? 0 : max };
	unsigned int flags = o ? o->flags : 0;
	bool any = flags & TOK_PARSE_SPECIAL, prev_special = true;
	size_t pos = 0, at;
	int32_t id;

	if (!t || !text || (!out && max > 0) || len > TOK_MAX_TEXT || !spans_ok(o, len))
		return INT_MIN;
	to.stats = o ? o->stats : NULL;
	if ((flags & TOK_ADD_BOS) && t->bos >= 0)
		tok_emit(&to, t->bos);
	while ((id = next_special(t, text, len, pos, any, o, &at)) >= 0) {
		if (encode_run(t, text + pos, at - pos, prev_special, &to))
			return INT_MIN;
		tok_emit(&to, id);
		prev_special = true;
		pos = at + t->vocab[id].len;
	}
	if (encode_run(t, text + pos, len - pos, prev_special, &to))
		return INT_MIN;
	if ((flags & TOK_ADD_EOS) && t->eos >= 0)
		tok_emit(&to, t->eos);
	return to.n > to.max ? -to.n : to.n;
}

int tok_encode(const struct tokenizer *t, const char *text, bool add_bos, int32_t *out, int max)
{
	struct tok_encode_opts o = { .flags = add_bos ? TOK_ADD_BOS : 0 };

	if (!text)
		return INT_MIN;
	return tok_encode_ex(t, text, strlen(text), &o, out, max);
}

/* ---- pieces ---- */

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

static int copy_out(const char *s, size_t n, char *buf, size_t size)
{
	if (n > size)
		return -(int)n;
	memcpy(buf, s, n);
	return (int)n;
}

/* Write byte @c at @n when @buf (a counting pass passes NULL). */
static void put(char *buf, size_t n, char c)
{
	if (buf)
		buf[n] = c;
}

/* SPM normal token: U+2581 -> ' '. Returns the length; writes when @buf. */
static size_t spm_text(const struct tok_entry *e, char *buf)
{
	size_t n = 0, i;

	for (i = 0; i < e->len; i++) {
		if (i + 3 <= e->len && memcmp(e->s + i, "\xe2\x96\x81", 3) == 0) {
			put(buf, n++, ' ');
			i += 2;
		} else {
			put(buf, n++, e->s[i]);
		}
	}
	return n;
}

/*
 * BPE normal token: each byte-level character becomes its byte; anything
 * else (a code point outside the alphabet, invalid UTF-8) is copied.
 */
static size_t bpe_text(const struct tok_entry *e, char *buf)
{
	size_t i = 0, n = 0;

	while (i < e->len) {
		uint32_t cp;
		size_t k = utf8_decode(e->s + i, e->len - i, &cp), j;
		int b = tok_cp_to_byte(cp);

		if (b >= 0) {
			put(buf, n++, (char)b);
		} else {
			for (j = 0; j < k; j++)
				put(buf, n++, e->s[i + j]);
		}
		i += k;
	}
	return n;
}

/* Normal token text, two passes: measure, then write. */
static int normal_text(const struct tokenizer *t, const struct tok_entry *e, char *buf,
		       size_t size)
{
	size_t (*fn)(const struct tok_entry *, char *) =
		t->model == TOK_MODEL_SPM ? spm_text : bpe_text;
	size_t n = fn(e, NULL);

	if (n > size)
		return -(int)n;
	fn(e, buf);
	return (int)n;
}

int tok_piece_ex(const struct tokenizer *t, int32_t id, unsigned int flags, char *buf,
		 size_t size)
{
	const struct tok_entry *e;

	if (!t || id < 0 || id >= t->n_vocab || (!buf && size))
		return INT_MIN;
	e = &t->vocab[id];
	switch (e->type) {
	case TT_CONTROL:
	case TT_UNUSED:
		return flags & TOK_PIECE_SPECIAL ? copy_out(e->s, e->len, buf, size) : 0;
	case TT_UNKNOWN:
		if (flags & TOK_PIECE_SPECIAL)
			return copy_out(e->s, e->len, buf, size);
		/* SPM: U+2585 marks the unknown token, as older llama.cpp printed it. */
		return t->model == TOK_MODEL_SPM ? copy_out("\xe2\x96\x85", 3, buf, size) : 0;
	case TT_USER_DEFINED:
		return copy_out(e->s, e->len, buf, size);
	case TT_BYTE:
		if (t->model == TOK_MODEL_SPM && e->len == 6 && memcmp(e->s, "<0x", 3) == 0 &&
		    e->s[5] == '>' && hexval(e->s[3]) >= 0 && hexval(e->s[4]) >= 0) {
			char b = (char)(hexval(e->s[3]) << 4 | hexval(e->s[4]));

			return copy_out(&b, 1, buf, size);
		}
		break;
	default:
		break;
	}
	return normal_text(t, e, buf, size);
}

int tok_piece(const struct tokenizer *t, int32_t id, char *buf, size_t size)
{
	return tok_piece_ex(t, id, 0, buf, size);
}
