// SPDX-License-Identifier: MIT
/*
 * The vocabulary as bytes for constrained decoding (jsonvocab.h).
 */
#include "jsonvocab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonmatch.h"
#include "jsonregex.h"
#include "tokenizer.h"
#include "utf8.h"

/*
 * What a token can be under a schema; JV_PLAIN: a text token of printable
 * characters only, none of them '"' or '\\' (whole UTF-8 sequences).
 */
enum { JV_NEVER, JV_TEXT, JV_EOG, JV_KIND = 3, JV_PLAIN = 4 };

/**
 * struct jm_vocab - see jsonvocab.h
 * @n: tokens
 * @off: @n + 1 offsets of each token's bytes in @bytes
 * @bytes: the pieces, concatenated
 * @kind: JV_* per token
 */
struct jm_vocab {
	int n;
	uint32_t *off;
	char *bytes;
	uint8_t *kind;
};

void jm_vocab_free(struct jm_vocab *v)
{
	if (!v)
		return;
	free(v->off);
	free(v->bytes);
	free(v->kind);
	free(v);
}

/* Append @len bytes of @p to v->bytes (capacity *@cap). */
static int put(struct jm_vocab *v, size_t *cap, size_t at, const char *p, size_t len)
{
	if (at + len > *cap) {
		char *b;

		while (at + len > *cap)
			*cap *= 2;
		b = realloc(v->bytes, *cap);
		if (!b)
			return -1;
		v->bytes = b;
	}
	memcpy(v->bytes + at, p, len);
	return 0;
}

static bool plain(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((uint8_t)p[i] < 0x20 || p[i] == '"' || p[i] == '\\' || p[i] == 0x7f)
			return false;
	return utf8_is_valid(p, len);
}

struct jm_vocab *jm_vocab_new(const struct tokenizer *t)
{
	struct jm_vocab *v = calloc(1, sizeof(*v));
	size_t cap = 1 << 16, at = 0, pcap = tok_max_piece(t);
	char *piece = malloc(pcap);
	int i, n = tok_n_vocab(t);

	if (!v || !piece)
		goto nomem;
	v->n = n;
	v->off = malloc((size_t)(n + 1) * sizeof(*v->off));
	v->kind = malloc((size_t)n);
	v->bytes = malloc(cap);
	if (!v->off || !v->kind || !v->bytes)
		goto nomem;
	for (i = 0; i < n; i++) {
		int len = 0;

		v->off[i] = (uint32_t)at;
		if (tok_is_eog(t, i)) {
			v->kind[i] = JV_EOG;
		} else if (tok_is_special(t, i)) {
			v->kind[i] = JV_NEVER;
		} else {
			len = tok_piece(t, i, piece, pcap);
			v->kind[i] = len > 0 ? JV_TEXT : JV_NEVER;
			if (len > 0 && plain(piece, (size_t)len))
				v->kind[i] |= JV_PLAIN;
		}
		if (len > 0) {
			if (put(v, &cap, at, piece, (size_t)len))
				goto nomem;
			at += (size_t)len;
		}
	}
	v->off[n] = (uint32_t)at;
	free(piece);
	return v;
nomem:
	free(piece);
	jm_vocab_free(v);
	return NULL;
}

bool jm_vocab_ok(const struct jm_vocab *v, struct jm_state *st, int32_t id)
{
	if (id < 0 || id >= v->n)
		return false;
	if ((v->kind[id] & JV_KIND) == JV_EOG)
		return jm_accepting(st);
	return (v->kind[id] & JV_KIND) == JV_TEXT &&
	       jm_try(st, v->bytes + v->off[id], v->off[id + 1] - v->off[id]);
}

/*
 * Inside a pattern string: the plain token @p (@len bytes) is taken when
 * the automaton takes its code points in turn within @max (what the
 * matcher checks for them, without its frames).
 */
static bool pattern_ok(const struct jm_re *re, uint32_t rs, uint32_t count, uint32_t max,
		       const char *p, uint32_t len)
{
	uint32_t cp;
	size_t k;

	while (len) {
		k = utf8_decode(p, len, &cp);
		if (!k || count >= max)
			return false;
		rs = jm_re_next(re, rs, cp, count++);
		if (rs == JM_RE_DEAD)
			return false;
		p += k;
		len -= (uint32_t)k;
	}
	return true;
}

int jm_vocab_mask(const struct jm_vocab *v, struct jm_state *st, const float *logits, int n,
		  float *masked, int32_t *best)
{
	uint64_t first[4];
	bool whole = jm_accepting(st), in_str = jm_in_free_string(st), in_pat;
	const struct jm_re *re = NULL;
	uint32_t rs = 0, count = 0, max = 0;
	int i, n_ok = 0;

	in_pat = jm_pattern_string(st, &re, &rs, &count, &max);
	jm_next_bytes(st, first);
	*best = -1;
	for (i = v->n; i < n; i++)
		masked[i] = -INFINITY;
	for (i = 0; i < v->n && i < n; i++) {
		uint32_t len = v->off[i + 1] - v->off[i];
		uint8_t b = len ? (uint8_t)v->bytes[v->off[i]] : 0;
		bool ok;

		if ((v->kind[i] & JV_KIND) == JV_EOG)
			ok = whole;
		else
			ok = (v->kind[i] & JV_KIND) == JV_TEXT && (first[b >> 6] >> (b & 63) & 1) &&
			     (len == 1 || (in_str && (v->kind[i] & JV_PLAIN)) ||
			      (in_pat && (v->kind[i] & JV_PLAIN) ?
			       pattern_ok(re, rs, count, max, v->bytes + v->off[i], len) :
			       jm_try(st, v->bytes + v->off[i], len)));
		masked[i] = ok ? logits[i] : -INFINITY;
		if (!ok)
			continue;
		n_ok++;
		if (*best < 0 || logits[i] > logits[*best])
			*best = i;
	}
	return n_ok;
}

void jm_vocab_take(const struct jm_vocab *v, struct jm_state *st, int32_t id)
{
	if (id >= 0 && id < v->n && (v->kind[id] & JV_KIND) == JV_TEXT)
		jm_feed(st, v->bytes + v->off[id], v->off[id + 1] - v->off[id]);
}
