// SPDX-License-Identifier: MIT
/*
 * llama-server's utility endpoints (server.h): POST /tokenize,
 * POST /detokenize, POST /apply-template and GET /props, with the request
 * and answer shapes of llama.cpp tools/server/README.md:
 *
 *   /tokenize {"content", "add_special" (false), "parse_special" (true),
 *             "with_pieces" (false)} -> {"tokens": [id, ...]} or, with
 *             with_pieces, {"tokens": [{"id", "piece"}, ...]}, the piece a
 *             string when it is valid UTF-8, else an array of its bytes;
 *   /detokenize {"tokens": [id, ...]} -> {"content"};
 *   /apply-template {"messages"} -> {"prompt"}: the chat prompt text
 *             /v1/chat/completions would evaluate;
 *   /props -> {"default_generation_settings", "total_slots",
 *             "model_alias", "model_path", "chat_template", ...}.
 *
 * Unknown fields are ignored; a known one of the wrong type is a 400
 * naming it (api.h's error envelope).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "gguf.h"
#include "prompt.h"
#include "utility.h"
#include "tokenizer.h"
#include "utf8.h"

#ifndef RK1828_BUILD_INFO
#define RK1828_BUILD_INFO "rk1828-llm (gcc " __VERSION__ ")"
#endif

/* The body as a JSON object, or -1 with @e (the OpenAI 400 of api_parse()). */
static json_t *load_body(const char *body, size_t len, struct api_error *e)
{
	json_error_t je;
	json_t *o = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &je);

	if (!o) {
		api_bad(e, NULL, "invalid JSON body: %s (line %d, column %d)", je.text, je.line,
			je.column);
		return NULL;
	}
	if (!json_is_object(o)) {
		json_decref(o);
		api_bad(e, NULL, "the request body must be a JSON object");
		return NULL;
	}
	return o;
}

static int opt_bool(json_t *o, const char *key, bool *v, struct api_error *e)
{
	json_t *b = api_field(o, key);

	if (!b)
		return 0;
	if (!json_is_boolean(b))
		return api_bad(e, key, "'%s' must be a boolean (true or false)", key);
	*v = json_is_true(b);
	return 0;
}

static int oom(struct api_error *e)
{
	api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
	return -1;
}

/* One token's piece: a string when it is valid UTF-8, else its bytes. */
static json_t *piece_json(const char *p, size_t n)
{
	json_t *a;
	size_t i;

	if (utf8_is_valid(p, n))
		return json_stringn(p, n);
	a = json_array();
	for (i = 0; a && i < n; i++)
		json_array_append_new(a, json_integer((unsigned char)p[i]));
	return a;
}

/*
 * The answer {"tokens": [...]} of @n ids, as text (malloc'ed, its length
 * in *@len): written token by token, because a tree of one JSON value per
 * token (up to 8M of them for a body of 8 MiB) took hundreds of bytes
 * each, and the allocator keeps such a peak long after it is freed.
 */
static char *tokens_text(struct srv *s, const int32_t *ids, int n, bool with_pieces,
			 size_t *len)
{
	size_t cap = tok_max_piece(s->tok);
	char *buf = with_pieces ? malloc(cap) : NULL, *out = NULL;
	FILE *f = open_memstream(&out, len);
	bool bad = !f || (with_pieces && !buf);
	int i, k;

	if (f)
		fputs("{\"tokens\":[", f);
	for (i = 0; !bad && i < n; i++) {
		json_t *piece;

		if (i)
			fputc(',', f);
		if (!with_pieces) {
			fprintf(f, "%d", (int)ids[i]);
			continue;
		}
		/* control tokens as their text, as llama-server's pieces */
		k = tok_piece_ex(s->tok, ids[i], TOK_PIECE_SPECIAL, buf, cap);
		piece = piece_json(buf, k > 0 ? (size_t)k : 0);
		fprintf(f, "{\"id\":%d,\"piece\":", (int)ids[i]);
		bad = !piece || json_dumpf(piece, f, JSON_COMPACT | JSON_ENCODE_ANY);
		fputc('}', f);
		json_decref(piece);
	}
	if (f) {
		fputs("]}", f);
		bad |= ferror(f) != 0;
		bad |= fclose(f) != 0;
	}
	free(buf);
	if (bad) {
		free(out);
		return NULL;
	}
	return out;
}

int util_tokenize(struct srv *s, const char *body, size_t len, char **out, size_t *out_len,
		  struct api_error *e)
{
	bool add_special = false, parse_special = true, with_pieces = false;
	struct tok_encode_opts to = { 0 };
	json_t *o = load_body(body, len, e), *c;
	int32_t *ids;
	int n, max;

	if (!o)
		return -1;
	c = api_field(o, "content");
	if (!c || !json_is_string(c)) {
		json_decref(o);
		return api_bad(e, "content", "'content' (the text to tokenize) must be a string");
	}
	if (opt_bool(o, "add_special", &add_special, e) ||
	    opt_bool(o, "parse_special", &parse_special, e) ||
	    opt_bool(o, "with_pieces", &with_pieces, e)) {
		json_decref(o);
		return -1;
	}
	if (json_string_length(c) > TOK_MAX_TEXT) {
		json_decref(o);
		return api_bad(e, "content", "'content' is longer than %u bytes", TOK_MAX_TEXT);
	}
	/* add_special: BOS and EOS as the model wants them (rk1828-llm tokenize). */
	if (add_special && tok_add_bos_default(s->tok))
		to.flags |= TOK_ADD_BOS;
	if (add_special && tok_add_eos_default(s->tok))
		to.flags |= TOK_ADD_EOS;
	if (parse_special)
		to.flags |= TOK_PARSE_SPECIAL;
	max = tok_max_tokens(s->tok, json_string_length(c));
	ids = malloc((size_t)max * sizeof(*ids));
	n = ids ? tok_encode_ex(s->tok, json_string_value(c), json_string_length(c), &to, ids,
				max) : INT32_MIN;
	json_decref(o);
	*out = n >= 0 ? tokens_text(s, ids, n, with_pieces, out_len) : NULL;
	free(ids);
	return *out ? 0 : oom(e);
}

/* The ids of "tokens": integers in the vocabulary. */
static int read_ids(struct srv *s, json_t *t, int32_t **ids, struct api_error *e)
{
	int n_vocab = tok_n_vocab(s->tok);
	size_t i, n;
	json_t *v;

	if (!t || !json_is_array(t))
		return api_bad(e, "tokens", "'tokens' must be an array of token ids");
	n = json_array_size(t);
	*ids = malloc((n ? n : 1) * sizeof(**ids));
	if (!*ids)
		return oom(e);
	json_array_foreach(t, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) >= n_vocab)
			return api_bad(e, "tokens", "'tokens[%zu]' must be a token id 0..%d (the model's vocabulary has %d tokens)",
				   i, n_vocab - 1, n_vocab);
		(*ids)[i] = (int32_t)json_integer_value(v);
	}
	return (int)n;
}

/*
 * The text of @ids: the pieces joined (control tokens as their text), the
 * space an SPM encoder prepends dropped from the first, invalid UTF-8
 * replaced by U+FFFD (JSON strings are UTF-8).
 */
static char *detok_text(struct srv *s, const int32_t *ids, int n, size_t *len)
{
	size_t cap = tok_max_piece(s->tok), used = 0, room = 64;
	char *piece = malloc(cap), *txt = malloc(room), *clean = NULL, *t;
	int i, k;

	for (i = 0; piece && txt && i < n; i++) {
		k = tok_piece_ex(s->tok, ids[i], TOK_PIECE_SPECIAL, piece, cap);
		if (k <= 0)
			continue;
		if (!i && tok_add_space_prefix(s->tok) && !tok_is_special(s->tok, ids[i]) &&
		    piece[0] == ' ')
			memmove(piece, piece + 1, (size_t)--k);
		if (used + (size_t)k > room) {
			room = 2 * (used + (size_t)k);
			t = realloc(txt, room);
			if (!t)
				break;
			txt = t;
		}
		memcpy(txt + used, piece, (size_t)k);
		used += (size_t)k;
	}
	if (piece && txt && i == n)
		clean = malloc(3 * used + 1);
	if (clean)
		*len = utf8_sanitize(txt, used, clean);
	free(piece);
	free(txt);
	return clean;
}

int util_detokenize(struct srv *s, const char *body, size_t len, json_t **out,
		    struct api_error *e)
{
	json_t *o = load_body(body, len, e);
	int32_t *ids = NULL;
	size_t tlen = 0;
	char *txt;
	int n;

	if (!o)
		return -1;
	n = read_ids(s, api_field(o, "tokens"), &ids, e);
	json_decref(o);
	if (n < 0) {
		free(ids);
		return -1;
	}
	txt = detok_text(s, ids, n, &tlen);
	free(ids);
	if (!txt)
		return oom(e);
	*out = json_pack("{s:s%}", "content", txt, tlen);
	free(txt);
	return *out ? 0 : oom(e);
}

int util_apply_template(struct srv *s, const char *body, size_t len, json_t **out,
			struct api_error *e)
{
	struct api_params p;
	struct chat_prompt cp;
	int ret;

	/* the whole chat validation (messages, tools), as /v1/chat/completions */
	ret = api_parse(API_CHAT, body ? body : "", len, &p, e);
	if (!ret)
		ret = srv_chat_prompt(s, &p, &cp, e);
	api_params_free(&p);
	if (ret)
		return -1;
	*out = utf8_is_valid(cp.text, cp.len) ?
	       json_pack("{s:s%}", "prompt", cp.text, cp.len) : NULL;
	chat_prompt_free(&cp);
	return *out ? 0 : oom(e);
}

/* A token's text for bos_token / eos_token ("" when the vocab has none). */
static json_t *tok_str(struct srv *s, int32_t id)
{
	size_t n = 0;
	const char *t = id >= 0 ? tok_text(s->tok, id, &n) : NULL;

	return t && utf8_is_valid(t, n) ? json_stringn(t, n) : json_string("");
}

/* A float parameter as the decimal it was written as (0.8, not 0.800000011920929). */
static json_t *num(float f)
{
	char b[32];

	snprintf(b, sizeof(b), "%.7g", (double)f);
	return json_real(strtod(b, NULL));
}

json_t *util_props(struct srv *s)
{
	const struct sampler_params d = SAMPLER_PARAMS_DEFAULT;
	struct gguf_str t = { 0 };
	bool have_t = s->gf && gguf_get_str(s->gf, "tokenizer.chat_template", &t);
	json_t *params, *dgs;

	params = json_pack("{s:o, s:i, s:o, s:o, s:o, s:i, s:o, s:o, s:i, s:i, s:[], s:o}",
			   "temperature", num(d.temperature), "top_k", d.top_k,
			   "top_p", num(d.top_p), "min_p", num(d.min_p),
			   "repeat_penalty", num(d.repeat_penalty),
			   "repeat_last_n", d.repeat_last_n,
			   "presence_penalty", num(d.presence_penalty),
			   "frequency_penalty", num(d.frequency_penalty),
			   "seed", -1, "n_predict", -1, "logit_bias",
			   "samplers", json_pack("[s, s, s, s, s]", "penalties", "top_k", "top_p",
						 "min_p", "temperature"));
	dgs = json_pack("{s:i, s:o}", "n_ctx", (int)s->n_ctx, "params", params);
	return json_pack("{s:o, s:i, s:s, s:s, s:s, s:s%, s:s, s:o, s:o, s:s, s:i, s:{s:b, s:b}}",
			 "default_generation_settings", dgs,
			 "total_slots", s->n_slots,
			 "kv_type", quant_kv_type_name(s->kv_type),
			 "model_alias", s->model_id,
			 "model_path", s->o.model ? s->o.model : "",
			 "chat_template", have_t && utf8_is_valid(t.s, t.len) ? t.s : "",
			 have_t && utf8_is_valid(t.s, t.len) ? (size_t)t.len : (size_t)0,
			 "chat_template_name", s->ct.name,
			 "bos_token", tok_str(s, tok_bos(s->tok)),
			 "eos_token", tok_str(s, tok_eos(s->tok)),
			 "build_info", RK1828_BUILD_INFO,
			 "n_vocab", tok_n_vocab(s->tok),
			 "modalities", "vision", 0, "audio", 0);
}
