// SPDX-License-Identifier: MIT
/*
 * Byte-level BPE tokenizer tests (the llama.cpp vectors are in
 * test_tokenizer.c):
 *  - a synthetic gpt2 vocabulary: merge rank order, leftmost ties, the
 *    GPT-2 byte alphabet, special tokens only where allowed, add_bos/eos,
 *    end-of-generation ids, refused pre-tokenizers;
 *  - the real qwen2 / llama-bpe vocabularies (tools/fetch-vocab): long
 *    runs without a word break ('A' x 131072, 26000 CJK characters) with
 *    the merge work counted and bounded, chat markup with and without
 *    special parsing, invalid UTF-8, streaming decode of split characters.
 */
#include "gguf.h"
#include "gguf_write.h"
#include "tokenizer.h"
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

struct vocab {
	struct gguf_file *f;
	struct tokenizer *t;
	char path[64];
};

/* Write a gpt2 vocab with @toks/@types and @merges, then load it. */
static bool synth(struct vocab *v, const char *pre, const char *const *toks,
		  const int32_t *types, int n, const char *const *merges, int n_merges,
		  int add_bos, char *err, size_t errlen)
{
	struct gguf_writer *w = gguf_writer_new();
	int fd;

	memset(v, 0, sizeof(*v));
	snprintf(v->path, sizeof(v->path), "/tmp/rk1828-bpe-XXXXXX");
	fd = mkstemp(v->path);
	if (fd >= 0)
		close(fd);
	gguf_writer_add_str(w, "tokenizer.ggml.model", "gpt2");
	if (pre)
		gguf_writer_add_str(w, "tokenizer.ggml.pre", pre);
	gguf_writer_add_str_arr(w, "tokenizer.ggml.tokens", toks, n);
	gguf_writer_add_i32_arr(w, "tokenizer.ggml.token_type", types, n);
	gguf_writer_add_str_arr(w, "tokenizer.ggml.merges", merges, n_merges);
	gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", 0);
	gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", 1);
	if (add_bos >= 0)
		gguf_writer_add_bool(w, "tokenizer.ggml.add_bos_token", add_bos);
	if (fd >= 0 && gguf_writer_write_file(w, v->path, err, errlen) == 0)
		v->f = gguf_open(v->path, err, errlen);
	gguf_writer_free(w);
	if (v->f)
		v->t = tok_load(v->f, err, errlen);
	return v->t != NULL;
}

static void vclose(struct vocab *v)
{
	tok_free(v->t);
	gguf_close(v->f);
	if (v->path[0])
		unlink(v->path);
	memset(v, 0, sizeof(*v));
}

static int enc(const struct tokenizer *t, const char *s, unsigned int flags, int32_t *ids,
	       int max)
{
	struct tok_encode_opts o = { .flags = flags };

	return tok_encode_ex(t, s, strlen(s), &o, ids, max);
}

/* ids 0..: "<s>" "</s>" "<|end|>" "<think>" a b c ab bc Ġ Ġa zz */
static const char *const syn_toks[] = {
	"<s>", "</s>", "<|end|>", "<think>", "a", "b", "c", "ab", "bc", "\xc4\xa0",
	"\xc4\xa0" "a", "aa",
};
static const int32_t syn_types[] = { 3, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1 };
#define N_SYN 12

static void test_synthetic(void)
{
	static const char *const m_bc_first[] = { "b c", "a b", "\xc4\xa0 a", "a a" };
	static const char *const m_ab_first[] = { "a b", "b c" };
	struct vocab v;
	char err[512], buf[32];
	int32_t ids[64];
	int n;

	tap_ok(synth(&v, "gpt-2", syn_toks, syn_types, N_SYN, m_bc_first, 4, -1, err,
		     sizeof(err)), "synthetic gpt2 vocab loads (%s)", v.t ? "ok" : err);
	if (!v.t)
		return;
	n = enc(v.t, "abc", 0, ids, 64);
	tap_ok(n == 2 && ids[0] == 4 && ids[1] == 8, "rank order: 'abc' with 'b c' first -> a bc");
	n = enc(v.t, "abab", 0, ids, 64);
	tap_ok(n == 2 && ids[0] == 7 && ids[1] == 7, "'abab' -> ab ab");
	n = enc(v.t, "aaa", 0, ids, 64);
	tap_ok(n == 2 && ids[0] == 11 && ids[1] == 4, "equal ranks: leftmost first, 'aaa' -> aa a");
	n = enc(v.t, " a", 0, ids, 64);
	tap_ok(n == 1 && ids[0] == 10, "' a' -> 'Ġa' (GPT-2 byte alphabet: space is U+0120)");
	n = enc(v.t, "d", 0, ids, 64);
	tap_ok(n == 0, "a byte the vocab lacks gives no token, as in llama.cpp (got %d)", n);
	tap_ok(!tok_add_bos_default(v.t) && !tok_add_eos_default(v.t),
	       "gpt-2 pre-tokenizer: no BOS/EOS by default");
	n = enc(v.t, "a", TOK_ADD_BOS | TOK_ADD_EOS, ids, 64);
	tap_ok(n == 3 && ids[0] == 0 && ids[2] == 1, "TOK_ADD_BOS | TOK_ADD_EOS wrap the text");

	/* Special tokens: text unless allowed. */
	/* (This vocab has no tokens for '<', '|', ...: they give nothing.) */
	n = enc(v.t, "a<|end|>", 0, ids, 64);
	tap_ok(n == 1 && ids[0] == 4, "'<|end|>' in plain text is not the control token");
	n = enc(v.t, "a<|end|>", TOK_PARSE_SPECIAL, ids, 64);
	tap_ok(n == 2 && ids[0] == 4 && ids[1] == 2, "with TOK_PARSE_SPECIAL it is (2 tokens)");
	n = enc(v.t, "<think>a", 0, ids, 64);
	tap_ok(n == 1 && ids[0] == 4, "markup user-defined '<think>' is plain in user text");
	n = enc(v.t, "<think>a", TOK_PARSE_SPECIAL, ids, 64);
	tap_ok(n == 2 && ids[0] == 3, "and the token with TOK_PARSE_SPECIAL");
	tap_ok(tok_is_eog(v.t, 1) && tok_is_eog(v.t, 2) && !tok_is_eog(v.t, 3) &&
	       !tok_is_eog(v.t, 0), "EOG: EOS and <|end|>, not <think> or BOS");
	tap_ok(tok_piece(v.t, 10, buf, sizeof(buf)) == 2 && !memcmp(buf, " a", 2),
	       "piece of 'Ġa' is ' a'");
	tap_ok(tok_piece(v.t, 2, buf, sizeof(buf)) == 0 &&
	       tok_piece_ex(v.t, 2, TOK_PIECE_SPECIAL, buf, sizeof(buf)) == 7,
	       "control piece: empty, its text with TOK_PIECE_SPECIAL");
	tap_ok(tok_piece(v.t, 3, buf, sizeof(buf)) == 7 && !memcmp(buf, "<think>", 7),
	       "user-defined piece is its text");
	vclose(&v);

	tap_ok(synth(&v, "gpt-2", syn_toks, syn_types, N_SYN, m_ab_first, 2, 1, err,
		     sizeof(err)), "second vocab loads");
	if (v.t) {
		n = enc(v.t, "abc", 0, ids, 64);
		tap_ok(n == 2 && ids[0] == 7 && ids[1] == 6,
		       "rank order: 'a b' first -> ab c");
		tap_ok(tok_add_bos_default(v.t), "add_bos_token = true is honoured");
	}
	vclose(&v);

	tap_ok(!synth(&v, "klingon", syn_toks, syn_types, N_SYN, m_ab_first, 2, -1, err,
		      sizeof(err)) && strstr(err, "tokenizer.ggml.pre") && strstr(err, "klingon") &&
	       strstr(err, "qwen2"), "unknown pre-tokenizer refused, supported ones listed: %s",
	       err);
	vclose(&v);
}

static struct vocab open_vocab(const char *dir, const char *name)
{
	struct vocab v = { 0 };
	char path[4096], err[512];

	snprintf(path, sizeof(path), "%s/ggml-vocab-%s.gguf", dir, name);
	v.f = gguf_open(path, err, sizeof(err));
	if (v.f)
		v.t = tok_load(v.f, err, sizeof(err));
	if (!v.t)
		tap_ok(0, "%s: %s (run `make deps` or tools/fetch-vocab)", name, err);
	return v;
}

/* Concatenated pieces of @ids into @out (large enough); returns the length. */
static size_t decode(const struct tokenizer *t, const int32_t *ids, int n, char *out)
{
	size_t o = 0;
	int i;

	for (i = 0; i < n; i++) {
		int k = tok_piece(t, ids[i], out + o, tok_max_piece(t));

		o += k > 0 ? (size_t)k : 0;
	}
	return o;
}

/* Encode @text with stats; check the round trip and the work bound. */
static void long_run(const struct tokenizer *t, const char *name, const char *what,
		     const char *text, size_t len, struct tok_stats *st)
{
	struct tok_encode_opts o = { .stats = st };
	int max = tok_max_tokens(t, len), n;
	int32_t *ids = malloc(max * sizeof(*ids));
	char *back = malloc(len + tok_max_piece(t));
	size_t blen;

	memset(st, 0, sizeof(*st));
	n = tok_encode_ex(t, text, len, &o, ids, max);
	blen = n > 0 ? decode(t, ids, n, back) : 0;
	tap_ok(n > 0 && blen == len && !memcmp(back, text, len),
	       "%s: %s (%zu bytes) -> %d tokens, decodes back", name, what, len, n);
	tap_ok(st->symbols == len && st->merges < st->symbols &&
	       st->queue_pushes <= 3 * st->symbols && st->regex_calls <= st->pretokens + 1,
	       "%s: %s: bounded work: %llu symbols, %llu merges, %llu queue pushes, %llu regex calls for %llu pre-tokens",
	       name, what, (unsigned long long)st->symbols, (unsigned long long)st->merges,
	       (unsigned long long)st->queue_pushes, (unsigned long long)st->regex_calls,
	       (unsigned long long)st->pretokens);
	free(ids);
	free(back);
}

/* 'A' x n, and n CJK characters from a fixed LCG over U+4E00..U+9FA5. */
static char *make_as(size_t n)
{
	char *s = malloc(n + 1);

	memset(s, 'A', n);
	s[n] = '\0';
	return s;
}

static char *make_cjk(size_t n, size_t *len)
{
	char *s = malloc(3 * n + 1);
	uint32_t x = 12345;
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		o += utf8_encode(0x4e00 + (x >> 8) % 0x51a6, s + o);
	}
	s[o] = '\0';
	*len = o;
	return s;
}

static void test_long(const struct tokenizer *t, const char *name)
{
	struct tok_stats a, b;
	size_t len;
	char *s = make_as(131072), *c;

	long_run(t, name, "'A' x 131072", s, 131072, &a);
	long_run(t, name, "'A' x 65536", s, 65536, &b);
	tap_ok(a.queue_pushes <= 2 * b.queue_pushes + 16 && a.merges <= 2 * b.merges + 16,
	       "%s: twice the A's, at most twice the merge work (%llu vs %llu pushes)", name,
	       (unsigned long long)a.queue_pushes, (unsigned long long)b.queue_pushes);
	free(s);
	c = make_cjk(26000, &len);
	long_run(t, name, "26000 CJK characters", c, len, &a);
	free(c);
}

/* Chat markup with the real Qwen2 vocabulary. */
static void test_qwen_markup(const struct tokenizer *t)
{
	const char *chat = "<|im_start|>user\nHi<|im_end|>";
	int32_t ids[64], mid[16];
	struct tok_span sp[2] = { { 0, 17 }, { 19, 10 } };	/* "<|im_start|>user\n", "<|im_end|>" */
	struct tok_encode_opts o = { .special = sp, .n_special = 2 };
	int n, nm, i, high = 0;

	nm = enc(t, "user\nHi", 0, mid, 16);
	n = enc(t, chat, TOK_PARSE_SPECIAL, ids, 64);
	tap_ok(n == nm + 2 && ids[0] == 151644 && ids[n - 1] == 151645 &&
	       !memcmp(ids + 1, mid, nm * sizeof(*mid)),
	       "qwen2: chat markup with TOK_PARSE_SPECIAL -> <|im_start|> 'user\\nHi' <|im_end|> (%d tokens)",
	       n);
	n = enc(t, chat, 0, ids, 64);
	for (i = 0; i < n; i++)
		high += ids[i] >= 151643;
	tap_ok(n > 10 && !high, "qwen2: the same text as user text has no special token (%d tokens)",
	       n);
	n = tok_encode_ex(t, chat, strlen(chat), &o, ids, 64);
	tap_ok(n == nm + 2 && ids[0] == 151644 && ids[n - 1] == 151645,
	       "qwen2: special only inside the template's spans gives the same ids");
	tap_ok(tok_is_eog(t, 151643) && tok_is_eog(t, 151645) && !tok_is_eog(t, 151644),
	       "qwen2: <|endoftext|> and <|im_end|> end generation, <|im_start|> does not");
	tap_ok(!tok_add_bos_default(t) && tok_eot(t) == 151645,
	       "qwen2: no BOS by default; EOT is <|im_end|> (%d)", tok_eot(t));
}

/* Invalid UTF-8: the U+FFFD rule, the bound, and a stream decode. */
static void test_invalid(const struct tokenizer *t)
{
	int32_t a[64], b[64], *ids;
	char *text, *out, *san;
	int na, nb, n, max, i;
	uint32_t x = 7;
	size_t o = 0, k, sl;
	struct utf8_stream st = { 0 };
	bool whole = true;

	na = enc(t, "\xff ok\xe2\x82", 0, a, 64);
	nb = enc(t, UTF8_REPLACEMENT " ok" UTF8_REPLACEMENT UTF8_REPLACEMENT, 0, b, 64);
	tap_ok(na > 0 && na == nb && !memcmp(a, b, na * sizeof(*a)),
	       "qwen2: invalid bytes are encoded as U+FFFD each (%d tokens)", na);

	text = malloc(4096);
	for (i = 0; i < 4096; i++) {
		x = x * 1103515245u + 12345u;
		text[i] = (char)(x >> 16);
	}
	max = tok_max_tokens(t, 4096);
	ids = malloc(max * sizeof(*ids));
	n = tok_encode_ex(t, text, 4096, NULL, ids, max);
	out = malloc(UTF8_STREAM_BOUND(tok_max_piece(t)) * (n > 0 ? n : 1) + 16);
	san = malloc(3 * 4096);
	sl = utf8_sanitize(text, 4096, san);
	for (i = 0; i < n; i++) {
		char piece[512];
		int pk = tok_piece(t, ids[i], piece, sizeof(piece));

		k = utf8_stream_feed(&st, piece, pk > 0 ? (size_t)pk : 0, out + o);
		whole &= utf8_is_valid(out + o, k);
		o += k;
	}
	o += utf8_stream_flush(&st, out + o);
	tap_ok(n > 0 && n <= max && whole && o == sl && !memcmp(out, san, sl),
	       "qwen2: 4096 random bytes -> %d tokens (bound %d); streamed pieces are whole characters and give the sanitized text",
	       n, max);
	free(text);
	free(ids);
	free(out);
	free(san);
}

static void test_llama3(const struct tokenizer *t)
{
	int32_t ids[16];
	int n = enc(t, "Hello", TOK_ADD_BOS, ids, 16);

	tap_ok(tok_add_bos_default(t) && tok_bos(t) == 128000 && n == 2 && ids[0] == 128000,
	       "llama-bpe: BOS 128000 added by default");
	tap_ok(tok_is_eog(t, 128001) && tok_is_eog(t, 128009) && !tok_is_eog(t, 128000),
	       "llama-bpe: <|end_of_text|> and <|eot_id|> end generation");
}

int main(void)
{
	const char *dir = getenv("RK1828_VOCAB_DIR");
	struct vocab q, l;

	if (!dir)
		dir = "build/vocab";
	test_synthetic();
	q = open_vocab(dir, "qwen2");
	if (q.t) {
		test_long(q.t, "qwen2");
		test_qwen_markup(q.t);
		test_invalid(q.t);
	}
	vclose(&q);
	l = open_vocab(dir, "llama-bpe");
	if (l.t) {
		test_long(l.t, "llama-bpe");
		test_llama3(l.t);
	}
	vclose(&l);
	return tap_done();
}
