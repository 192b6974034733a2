// SPDX-License-Identifier: MIT
/*
 * rk1828-llm tokenize -m MODEL -p TEXT [--ids] [--no-bos] [--parse-special]
 *
 * Tokenizes TEXT with the model's vocabulary (no cards needed) the way run
 * does: BOS/EOS as tokenizer.ggml.add_bos_token/add_eos_token say (--no-bos
 * drops BOS), special-token text only with --parse-special. Prints one
 * token per line, "ID<TAB>PIECE", the piece written as a C string literal
 * body (\n, \t, \\, \", \xNN for other control bytes and for bytes of a
 * character the token only partly holds; control tokens as their text),
 * or with --ids the ids alone as "[1, 2, 3]" (llama-tokenize's form).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gguf.h"
#include "utf8.h"

/* The piece as an escaped string: printable UTF-8 as is, the rest escaped. */
static void print_piece(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		size_t k = utf8_valid_len(s + i, n - i);

		if (c == '\n' || c == '\t' || c == '\r' || c == '\\' || c == '"') {
			putchar('\\');
			putchar(c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : c);
			i++;
		} else if (!k || c < 0x20 || c == 0x7f) {
			printf("\\x%02x", c);
			i++;
		} else {
			fwrite(s + i, 1, k, stdout);
			i += k;
		}
	}
}

static int print_tokens(const struct tokenizer *tok, const struct cli_prompt *p, bool ids)
{
	size_t cap = tok_max_piece(tok);
	char *buf = malloc(cap);
	int i;

	if (!buf) {
		fprintf(stderr, "rk1828-llm: out of memory\n");
		return -1;
	}
	if (ids)
		putchar('[');
	for (i = 0; i < p->n; i++) {
		int k;

		if (ids) {
			printf("%s%d", i ? ", " : "", p->ids[i]);
			continue;
		}
		k = tok_piece_ex(tok, p->ids[i], TOK_PIECE_SPECIAL, buf, cap);
		printf("%d\t", p->ids[i]);
		print_piece(buf, k > 0 ? (size_t)k : 0);
		putchar('\n');
	}
	if (ids)
		puts("]");
	free(buf);
	return 0;
}

/* Like cli_encode(), but no tokens (empty text) is an answer, not an error. */
static int encode(const struct tokenizer *tok, const struct args *a, struct cli_prompt *p)
{
	struct tok_encode_opts o = { .flags = cli_tok_flags(tok, a) };
	size_t len = strlen(a->prompt);
	int max;

	if (len > TOK_MAX_TEXT) {
		fprintf(stderr, "rk1828-llm: the text is longer than %u bytes\n", TOK_MAX_TEXT);
		return -1;
	}
	max = tok_max_tokens(tok, len);
	p->ids = malloc((size_t)max * sizeof(*p->ids));
	p->n = p->ids ? tok_encode_ex(tok, a->prompt, len, &o, p->ids, max) : -1;
	if (p->n < 0) {
		fprintf(stderr, "rk1828-llm: cannot tokenize the text (out of memory)\n");
		return -1;
	}
	return 0;
}

int cmd_tokenize(const struct args *a)
{
	struct cli_prompt p = { 0 };
	struct gguf_file *gf;
	struct tokenizer *tok = NULL;
	char err[512];
	int rc = EXIT_RUNTIME;

	gf = gguf_open(a->model, err, sizeof(err));
	if (!gf) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		return EXIT_RUNTIME;
	}
	tok = tok_load(gf, err, sizeof(err));
	if (!tok) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		goto out;
	}
	if (encode(tok, a, &p))
		goto out;
	if (!print_tokens(tok, &p, a->ids))
		rc = 0;
out:
	free(p.ids);
	tok_free(tok);
	gguf_close(gf);
	return rc;
}
