// SPDX-License-Identifier: MIT
/*
 * The tokenizers of a synthetic model (enum synth_vocab): SentencePiece,
 * the byte-level placeholder, or a copy of a GGUF vocabulary's keys.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "gguf_write.h"
#include "synth_int.h"

/* The SentencePiece vocabulary described in synth_model.h. */
static void add_spm(struct synth *y)
{
	uint32_t n_vocab = y->s->n_vocab, i, n = 0;
	char (*names)[24] = calloc(n_vocab, sizeof(*names));
	const char **ptrs = calloc(n_vocab, sizeof(*ptrs));
	float *scores = calloc(n_vocab, sizeof(*scores));
	int32_t *types = calloc(n_vocab, sizeof(*types));

	if (n_vocab < 3 + 256 + 1 + 26) {
		synth_fail(y, "a vocabulary needs at least 286 tokens, not %u", n_vocab);
		goto out;
	}
	if (!names || !ptrs || !scores || !types) {
		synth_fail(y, "vocabulary: out of memory");
		goto out;
	}
	strcpy(names[n], "<unk>"); types[n++] = 2;	/* UNKNOWN */
	strcpy(names[n], "<s>"); types[n++] = 3;	/* CONTROL */
	strcpy(names[n], "</s>"); types[n++] = 3;
	for (i = 0; i < 256; i++) {
		snprintf(names[n], sizeof(names[n]), "<0x%02X>", i);
		types[n++] = 6;				/* BYTE */
	}
	strcpy(names[n], "\xe2\x96\x81"); types[n++] = 1;	/* NORMAL */
	for (i = 0; i < 26; i++) {
		names[n][0] = (char)('a' + i);
		types[n++] = 1;
	}
	while (n < n_vocab) {
		snprintf(names[n], sizeof(names[n]), "<unused%u>", n);
		types[n++] = 5;				/* UNUSED */
	}
	for (i = 0; i < n_vocab; i++) {
		ptrs[i] = names[i];
		scores[i] = types[i] == 1 ? -1.0f : 0.0f;
	}
	if (gguf_writer_add_str(y->w, "tokenizer.ggml.model", "llama") ||
	    gguf_writer_add_str_arr(y->w, "tokenizer.ggml.tokens", ptrs, n_vocab) ||
	    gguf_writer_add_f32_arr(y->w, "tokenizer.ggml.scores", scores, n_vocab) ||
	    gguf_writer_add_i32_arr(y->w, "tokenizer.ggml.token_type", types, n_vocab) ||
	    gguf_writer_add_u32(y->w, "tokenizer.ggml.unknown_token_id", 0) ||
	    gguf_writer_add_u32(y->w, "tokenizer.ggml.bos_token_id", 1) ||
	    gguf_writer_add_u32(y->w, "tokenizer.ggml.eos_token_id", 2))
		synth_fail(y, "vocabulary: cannot add the keys");
out:
	free(types);
	free(scores);
	free(ptrs);
	free(names);
}

/*
 * GPT-2's byte-level alphabet (bytes_to_unicode): printable bytes stand
 * for themselves, the others for U+0100 + their rank; @out gets the UTF-8.
 */
static void byte_piece(unsigned int b, char *out)
{
	unsigned int cp = b, k = 0, i;

	if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)) {
		for (i = 0; i < b; i++)
			k += !((i >= 33 && i <= 126) || (i >= 161 && i <= 172) || i >= 174);
		cp = 256 + k;
	}
	if (cp < 0x80) {
		out[0] = (char)cp;
		out[1] = '\0';
	} else {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		out[2] = '\0';
	}
}

/* The byte-level placeholder vocabulary described in synth_model.h. */
static void add_bytes(struct synth *y)
{
	uint32_t n = y->s->n_vocab, i;
	char **tok = calloc(n, sizeof(*tok));
	int32_t *type = calloc(n, sizeof(*type));
	int r = -1;

	if (!tok || !type || n <= 256)
		goto out;
	for (i = 0; i < n; i++) {
		tok[i] = malloc(16);
		if (!tok[i])
			goto out;
		if (i < 256)
			byte_piece(i, tok[i]);
		else
			snprintf(tok[i], 16, "<t%u>", i);
		type[i] = i == n - 1 ? 3 : 1;
	}
	r = gguf_writer_add_str(y->w, "tokenizer.ggml.model", "gpt2");
	r = r ? r : gguf_writer_add_str(y->w, "tokenizer.ggml.pre", "qwen2");
	r = r ? r : gguf_writer_add_str_arr(y->w, "tokenizer.ggml.tokens", (const char *const *)tok, n);
	r = r ? r : gguf_writer_add_i32_arr(y->w, "tokenizer.ggml.token_type", type, n);
	r = r ? r : gguf_writer_add_str_arr(y->w, "tokenizer.ggml.merges", NULL, 0);
	r = r ? r : gguf_writer_add_u32(y->w, "tokenizer.ggml.eos_token_id", n - 1);
	r = r ? r : gguf_writer_add_bool(y->w, "tokenizer.ggml.add_bos_token", false);
out:
	if (tok)
		for (i = 0; i < n; i++)
			free(tok[i]);
	free(tok);
	free(type);
	if (r)
		synth_fail(y, "vocabulary: %s", n <= 256 ? "needs more than 256 tokens" :
			   "cannot add the keys (out of memory)");
}

/* Copy tokenizer.* from the spec's vocabulary file; n_vocab = its token count. */
static void add_file(struct synth *y)
{
	const char *path = y->s->vocab_path;
	char msg[512];
	struct gguf_file *v = path ? gguf_open(path, msg, sizeof(msg)) : NULL;
	const struct gguf_kv *tok;
	uint64_t i;
	int r = 0;

	if (!v) {
		synth_fail(y, "%s", path ? msg : "no vocabulary file");
		return;
	}
	tok = gguf_find_kv(v, "tokenizer.ggml.tokens");
	if (!tok || tok->type != GGUF_VT_ARRAY || tok->arr_n == 0 || tok->arr_n > (1u << 24)) {
		synth_fail(y, "%s: no tokenizer.ggml.tokens array", path);
		gguf_close(v);
		return;
	}
	y->n_vocab = (uint32_t)tok->arr_n;
	for (i = 0; !r && i < v->n_kv; i++)
		if (v->kv[i].key.len > 10 && !memcmp(v->kv[i].key.s, "tokenizer.", 10))
			r = gguf_writer_copy_kv(y->w, &v->kv[i]);
	gguf_close(v);
	if (r)
		synth_fail(y, "%s: cannot copy the vocabulary", path);
}

void synth_add_vocab(struct synth *y)
{
	if (y->failed)
		return;
	switch (y->s->vocab) {
	case SYNTH_VOCAB_SPM:
		add_spm(y);
		break;
	case SYNTH_VOCAB_BYTES:
		add_bytes(y);
		break;
	case SYNTH_VOCAB_FILE:
		add_file(y);
		break;
	case SYNTH_VOCAB_NONE:
	default:
		break;
	}
}
