// SPDX-License-Identifier: MIT
/*
 * Tokenizer tests:
 *  - llama.cpp's test vectors (build/vocab/ggml-vocab-*.gguf with .inp/.out
 *    from tools/fetch-vocab) must match exactly and decode back, for the
 *    SPM vocabularies and the byte-level BPE ones (qwen2, qwen35,
 *    llama-bpe, gpt-2 and the other pre-tokenizers we support);
 *  - stories260K round trips and encodings checked by hand;
 *  - edge cases (empty text, invalid UTF-8, buffer too small, bad ids).
 * Output: "ok N - name" / "not ok N - name", then "# N passed, M failed".
 */
#include "gguf.h"
#include "gguf_write.h"
#include "tokenizer.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"


static char *read_all(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	long n;

	if (!fp)
		return NULL;
	if (fseek(fp, 0, SEEK_END) || (n = ftell(fp)) < 0 ||
	    fseek(fp, 0, SEEK_SET)) {
		fclose(fp);
		return NULL;
	}
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	if (buf) {
		buf[n] = '\0';
		*len = (size_t)n;
	}
	return buf;
}

/* Encode text; returns count (or negative) into ids[]. */
static int enc(const struct tokenizer *t, const char *text, bool bos,
	       int32_t *ids, int max)
{
	return tok_encode(t, text, bos, ids, max);
}

static void fmt_ids(char *dst, size_t len, const int32_t *ids, int n)
{
	size_t o = 0;
	int i;

	dst[0] = '\0';
	for (i = 0; i < n && o + 12 < len; i++)
		o += snprintf(dst + o, len - o, " %d", ids[i]);
}

/* Parse one line of space-separated ids into a growing array. */
static int parse_ids(char *line, int32_t **ids, int *cap)
{
	char *tokp;
	int n = 0;

	for (tokp = strtok(line, " "); tokp; tokp = strtok(NULL, " ")) {
		if (n == *cap) {
			*cap = *cap ? 2 * *cap : 256;
			*ids = realloc(*ids, *cap * sizeof(**ids));
		}
		(*ids)[n++] = (int32_t)strtol(tokp, NULL, 10);
	}
	return n;
}

/*
 * llama.cpp vectors: inputs separated by "\n__ggml_vocab_test__\n" (each
 * input is followed by the marker); outputs: one line per input, token ids
 * separated by spaces (empty line = no tokens). Encoded without BOS and
 * without special-token parsing (test-tokenizer-0 does the same); each
 * encoding must also decode back to its input (byte-level BPE round trips
 * exactly; SPM adds the prefix space).
 */
static void test_vectors(const char *dir, const char *name, int n_vocab)
{
	static const char marker[] = "\n__ggml_vocab_test__\n";
	char path[4096], err[512];
	struct gguf_file *f;
	struct tokenizer *t;
	char *inp, *outp, *ip, *op, *dec = NULL;
	int32_t *want = NULL, *got = NULL;
	int cap_w = 0, n_cases = 0, n_bad = 0, n_rt = 0;
	size_t ilen, olen;

	snprintf(path, sizeof(path), "%s/ggml-vocab-%s.gguf", dir, name);
	f = gguf_open(path, err, sizeof(err));
	if (!f) {
		tap_ok(0, "%s vocab: %s (run `make deps` or tools/fetch-vocab %s)",
		      name, err, dir);
		return;
	}
	t = tok_load(f, err, sizeof(err));
	tap_ok(t != NULL, "%s vocab loads (%s)", name, t ? "ok" : err);
	if (!t) {
		gguf_close(f);
		return;
	}
	tap_ok(tok_n_vocab(t) == n_vocab, "%s: n_vocab %d (want %d)", name, tok_n_vocab(t),
	       n_vocab);

	snprintf(path, sizeof(path), "%s/ggml-vocab-%s.gguf.inp", dir, name);
	inp = read_all(path, &ilen);
	snprintf(path, sizeof(path), "%s/ggml-vocab-%s.gguf.out", dir, name);
	outp = read_all(path, &olen);
	tap_ok(inp && outp, "%s .inp/.out readable", name);
	if (!inp || !outp)
		goto out;

	ip = inp;
	op = outp;
	for (;;) {
		char *m = strstr(ip, marker);
		char *nl;
		int nw, ng, max;

		if (!m)
			break;
		*m = '\0';
		nl = strchr(op, '\n');
		if (!nl) {
			tap_ok(0, "%s vector %d: no output line", name, n_cases);
			n_bad++;
			break;
		}
		*nl = '\0';
		nw = parse_ids(op, &want, &cap_w);
		max = tok_max_tokens(t, strlen(ip));
		got = realloc(got, max * sizeof(*got));
		ng = tok_encode(t, ip, false, got, max);
		if (ng != nw || memcmp(got, want, nw * sizeof(int32_t))) {
			char a[1024], b[1024];

			fmt_ids(a, sizeof(a), want, nw);
			fmt_ids(b, sizeof(b), got, ng < 0 ? 0 : ng);
			printf("# %s vector %d: input '%.200s'\n#   want%s\n#   got %s\n",
			       name, n_cases, ip, a, b);
			n_bad++;
		} else if (ng > 0) {
			/* Decode: pieces joined must give the input back. */
			size_t cap = strlen(ip) + 8, o = 0;
			int i;

			dec = realloc(dec, cap + tok_max_piece(t));
			for (i = 0; i < ng && o <= cap; i++) {
				int k = tok_piece(t, got[i], dec + o, tok_max_piece(t));

				o += k > 0 ? (size_t)k : 0;
			}
			if (tok_get_model(t) == TOK_MODEL_SPM && o && dec[0] == ' ')
				memmove(dec, dec + 1, --o);
			if (o == strlen(ip) && !memcmp(dec, ip, o))
				n_rt++;
			else
				printf("# %s vector %d: decodes to '%.*s'\n", name, n_cases,
				       (int)(o > 200 ? 200 : o), dec);
		} else {
			n_rt++;
		}
		n_cases++;
		ip = m + sizeof(marker) - 1;
		op = nl + 1;
	}
	tap_ok(n_cases >= 40 && n_bad == 0,
	      "%s: %d llama.cpp test vectors, %d mismatches", name, n_cases,
	      n_bad);
	tap_ok(n_rt == n_cases, "%s: %d of %d vectors decode back to their input", name, n_rt,
	       n_cases);
out:
	free(dec);
	free(want);
	free(got);
	free(inp);
	free(outp);
	tok_free(t);
	gguf_close(f);
}

/* Decode ids into one string (pieces concatenated). */
static int detok(const struct tokenizer *t, const int32_t *ids, int n,
		 char *buf, size_t size)
{
	size_t o = 0;
	int i;

	for (i = 0; i < n; i++) {
		int k = tok_piece(t, ids[i], buf + o, size - o - 1);

		if (k < 0)
			return -1;
		o += (size_t)k;
	}
	buf[o] = '\0';
	return (int)o;
}

static void test_stories(const char *model)
{
	static const char *const texts[] = {
		"Once upon a time",
		"Once upon a time, there was a little girl named Lily.",
		"She liked to play outside in the sun!",
		"  two leading spaces and trailing  ",
		"caf\xc3\xa9 \xe2\x82\xac 5 \xf0\x9f\x98\x80 \xe4\xb8\xad\xe6\x96\x87",
		"tabs\tand\nnewlines\r\n",
		"x",
	};
	char err[512], buf[1024], want[1024];
	struct gguf_file *f = gguf_open(model, err, sizeof(err));
	struct tokenizer *t;
	int32_t ids[256];
	size_t i;
	int n;

	tap_ok(f != NULL, "stories260K opens (%s)", f ? model : err);
	if (!f)
		return;
	t = tok_load(f, err, sizeof(err));
	tap_ok(t && tok_n_vocab(t) == 512 && tok_bos(t) == 1 &&
	      tok_eos(t) == 2 && tok_unk(t) == 0 && tok_add_bos_default(t),
	      "stories260K tokenizer: 512 tokens, BOS 1, EOS 2, UNK 0, add BOS");
	if (!t) {
		gguf_close(f);
		return;
	}

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		n = enc(t, texts[i], true, ids, 256);
		snprintf(want, sizeof(want), " %s", texts[i]);
		tap_ok(n > 1 && ids[0] == 1 && detok(t, ids, n, buf, sizeof(buf)) >= 0 &&
		      strcmp(buf, want) == 0,
		      "stories260K round trip %zu (%d tokens)", i, n);
	}

	/*
	 * Hand-checked against the vocab: "▁Once" 403, "▁upon" 407, "▁a" 261,
	 * "▁time" 378 are single tokens (ids read from tokenizer.ggml.tokens).
	 */
	n = enc(t, "Once upon a time", true, ids, 256);
	tap_ok(n == 5 && ids[0] == 1 && ids[1] == 403 && ids[2] == 407 &&
	      ids[3] == 261 && ids[4] == 378,
	      "'Once upon a time' -> 1 403 407 261 378 (got %d tokens)", n);
	/*
	 * Byte fallback: U+4E2D (E4 B8 AD, not in the 512 vocab) -> "▁" 410,
	 * then <0xE4><0xB8><0xAD> = 3 + byte; "€" (503) is in the vocab.
	 */
	n = enc(t, "\xe4\xb8\xad\xe2\x82\xac", false, ids, 256);
	tap_ok(n == 5 && ids[0] == 410 && ids[1] == 3 + 0xe4 &&
	      ids[2] == 3 + 0xb8 && ids[3] == 3 + 0xad && ids[4] == 503,
	      "U+4E2D U+20AC -> 410 231 187 176 503 (got %d)", n);
	/* Empty text: nothing, or just BOS. */
	tap_ok(enc(t, "", false, ids, 256) == 0 &&
	      enc(t, "", true, ids, 256) == 1 && ids[0] == 1,
	      "empty text -> [] / [BOS]");
	/* Too-small buffer: -(needed), and nothing past max is written. */
	ids[2] = 12345;
	n = enc(t, "Once upon a time", true, ids, 2);
	tap_ok(n == -5 && ids[2] == 12345, "max too small -> -5 (got %d)", n);
	tap_ok(enc(t, "Once upon a time", true, NULL, 0) == -5,
	      "count only (out NULL, max 0) -> -5");
	tap_ok(enc(t, NULL, true, ids, 2) == INT_MIN, "NULL text -> INT_MIN");
	/* Invalid UTF-8 (lone continuation, truncated lead) never crashes. */
	n = enc(t, "\x80\xff\xe2\x82", false, ids, 256);
	tap_ok(n == 5 && ids[1] == 3 + 0x80 && ids[2] == 3 + 0xff &&
	      ids[3] == 3 + 0xe2 && ids[4] == 3 + 0x82,
	      "invalid UTF-8 -> byte tokens (got %d)", n);
	/* Pieces: BOS/EOS empty, byte token -> raw byte, bad ids -> -1. */
	tap_ok(tok_piece(t, 1, buf, sizeof(buf)) == 0 &&
	      tok_piece(t, 2, buf, sizeof(buf)) == 0, "BOS/EOS pieces are empty");
	tap_ok(tok_piece(t, 3 + 'A', buf, sizeof(buf)) == 1 && buf[0] == 'A',
	      "<0x41> piece is 'A'");
	tap_ok(tok_piece(t, 403, buf, sizeof(buf)) == 5 &&
	      memcmp(buf, " Once", 5) == 0, "piece 403 is ' Once'");
	tap_ok(tok_piece(t, 403, buf, 3) == -5, "piece into a 3-byte buffer -> -5 (needed)");
	tap_ok(tok_piece(t, -1, buf, sizeof(buf)) == INT_MIN &&
	      tok_piece(t, 512, buf, sizeof(buf)) == INT_MIN, "bad ids -> INT_MIN");
	tap_ok(tok_piece_ex(t, 1, TOK_PIECE_SPECIAL, buf, sizeof(buf)) == 3 &&
	      !memcmp(buf, "<s>", 3), "BOS piece with TOK_PIECE_SPECIAL is '<s>'");
	/*
	 * Issue 8 part 7: "\xff " is 5 tokens without BOS (prefix U+2581, then
	 * the symbol FF E2 96 81 falls back to 4 byte tokens), more than the
	 * old documented bound strlen + 2; tok_max_tokens() covers it.
	 */
	n = enc(t, "\xff ", false, ids, 256);
	tap_ok(n == 5 && n <= tok_max_tokens(t, 2) && ids[1] == 3 + 0xff,
	      "'\\xff ' -> 5 tokens (got %d), within tok_max_tokens() = %d", n,
	      tok_max_tokens(t, 2));
	/* Special-token text is plain unless allowed, then it is the token. */
	{
		struct tok_encode_opts o = { .flags = TOK_PARSE_SPECIAL };
		struct tok_span sp = { 3, 4 };
		int32_t a[16];
		int na = tok_encode_ex(t, "</s>", 4, &o, a, 16);
		int nb = enc(t, "</s>", false, ids, 256);

		tap_ok(na == 1 && a[0] == 2 && nb > 1,
		      "'</s>' is EOS only with TOK_PARSE_SPECIAL (%d / %d tokens)", na, nb);
		o.flags = 0;
		o.special = &sp;
		o.n_special = 1;
		na = tok_encode_ex(t, "ab </s>", 7, &o, a, 16);
		tap_ok(na >= 2 && a[na - 1] == 2, "'</s>' inside an allowed span is EOS");
		sp.len = 3;
		na = tok_encode_ex(t, "ab </s>", 7, &o, a, 16);
		tap_ok(na >= 2 && a[na - 1] != 2, "'</s>' crossing the span's end stays text");
	}
	tok_free(t);
	gguf_close(f);
}

/* A synthetic vocab exercising score order, ties and missing byte tokens. */
static void test_synthetic(void)
{
	static const char *const toks[] = {
		"<unk>", "<s>", "</s>", "\xe2\x96\x81", "a", "b", "c",
		"ab", "bc", "\xe2\x96\x81" "a", "bca", "aa",
	};
	float scores[] = { 0, 0, 0, -1, -2, -2, -2, -5, -3, -4, -1, -2 };
	int32_t types[] = { 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	char path[] = "/tmp/rk1828-tok-XXXXXX", err[512], buf[64];
	struct gguf_writer *w = gguf_writer_new();
	struct gguf_file *f = NULL;
	struct tokenizer *t = NULL;
	int32_t ids[32];
	int fd, n;

	fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
	gguf_writer_add_str(w, "tokenizer.ggml.model", "llama");
	gguf_writer_add_str_arr(w, "tokenizer.ggml.tokens", toks, 12);
	gguf_writer_add_f32_arr(w, "tokenizer.ggml.scores", scores, 12);
	gguf_writer_add_i32_arr(w, "tokenizer.ggml.token_type", types, 12);
	gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", 1);
	gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", 2);
	gguf_writer_add_u32(w, "tokenizer.ggml.unknown_token_id", 0);
	gguf_writer_add_bool(w, "tokenizer.ggml.add_space_prefix", false);
	gguf_writer_add_bool(w, "tokenizer.ggml.add_bos_token", false);
	if (fd >= 0 && gguf_writer_write_file(w, path, err, sizeof(err)) == 0)
		f = gguf_open(path, err, sizeof(err));
	if (f)
		t = tok_load(f, err, sizeof(err));
	tap_ok(t != NULL, "synthetic vocab loads (%s)", t ? "12 tokens" : err);
	if (t) {
		/*
		 * "abc": bigrams ab (-5) and bc (-3): bc merges first, then a+bc
		 * is not in the vocab -> [a, bc] (ab first would give [ab, c]).
		 * No space prefix in this vocab.
		 */
		n = enc(t, "abc", false, ids, 32);
		tap_ok(n == 2 && ids[0] == 4 && ids[1] == 8,
		      "score order: 'abc' -> a bc (got %d)", n);
		/* Merged symbols merge again: b+c -> bc, bc+a -> bca. */
		n = enc(t, "bca", false, ids, 32);
		tap_ok(n == 1 && ids[0] == 10, "chained merge: 'bca' -> bca");
		/* Equal scores: the leftmost pair wins: 'aaa' -> aa a. */
		n = enc(t, "aaa", false, ids, 32);
		tap_ok(n == 2 && ids[0] == 11 && ids[1] == 4,
		      "tie: 'aaa' -> aa a (got %d)", n);
		/* "ab": only bigram ab -> merged, then abc absent. */
		n = enc(t, "ab", false, ids, 32);
		tap_ok(n == 1 && ids[0] == 7, "'ab' -> ab");
		/* 'x' has no token and no byte tokens -> unk. */
		n = enc(t, "xa", false, ids, 32);
		tap_ok(n == 2 && ids[0] == 0 && ids[1] == 4,
		      "no byte tokens: 'xa' -> unk a (got %d)", n);
		/* Space (no prefix): ' a' -> ▁a. */
		n = enc(t, " a", false, ids, 32);
		tap_ok(n == 1 && ids[0] == 9, "' a' -> ▁a");
		tap_ok(!tok_add_bos_default(t), "add_bos_token false is honoured");
		tap_ok(tok_piece(t, 0, buf, sizeof(buf)) == 3 &&
		      memcmp(buf, "\xe2\x96\x85", 3) == 0, "unk piece is U+2585");
	}
	/* A vocab of the wrong model is refused with the file name. */
	tok_free(t);
	gguf_close(f);
	gguf_writer_free(w);
	w = gguf_writer_new();
	gguf_writer_add_str(w, "tokenizer.ggml.model", "gpt2");
	gguf_writer_add_str_arr(w, "tokenizer.ggml.tokens", toks, 11);
	f = NULL;
	t = NULL;
	if (gguf_writer_write_file(w, path, err, sizeof(err)) == 0)
		f = gguf_open(path, err, sizeof(err));
	if (f)
		t = tok_load(f, err, sizeof(err));
	tap_ok(f && !t && strstr(err, path) && strstr(err, "tokenizer.ggml.merges"),
	      "gpt2 vocab without merges refused: %s", err);
	tok_free(t);
	gguf_close(f);
	gguf_writer_free(w);
	/* Scores of the wrong length are refused. */
	w = gguf_writer_new();
	gguf_writer_add_str_arr(w, "tokenizer.ggml.tokens", toks, 11);
	gguf_writer_add_f32_arr(w, "tokenizer.ggml.scores", scores, 10);
	f = NULL;
	t = NULL;
	if (gguf_writer_write_file(w, path, err, sizeof(err)) == 0)
		f = gguf_open(path, err, sizeof(err));
	if (f)
		t = tok_load(f, err, sizeof(err));
	tap_ok(f && !t && strstr(err, "tokenizer.ggml.scores"),
	      "short scores array refused: %s", err);
	tok_free(t);
	gguf_close(f);
	gguf_writer_free(w);
	unlink(path);
}

int main(void)
{
	const char *model = getenv("RK1828_MODEL");
	const char *vocab = getenv("RK1828_VOCAB_DIR");

	if (!model)
		model = "../shared/models/stories260K.gguf";
	if (!vocab)
		vocab = "build/vocab";
	test_vectors(vocab, "llama-spm", 32000);
	test_vectors(vocab, "phi-3", 32064);
	test_vectors(vocab, "qwen2", 151936);
	test_vectors(vocab, "qwen35", 151936);
	test_vectors(vocab, "llama-bpe", 128256);
	test_vectors(vocab, "gpt-2", 50257);
	test_vectors(vocab, "mpt", 50432);
	test_vectors(vocab, "starcoder", 49152);
	test_vectors(vocab, "refact", 49216);
	test_vectors(vocab, "command-r", 256000);
	test_vectors(vocab, "falcon", 65024);
	test_stories(model);
	test_synthetic();
	return tap_done();
}
