// SPDX-License-Identifier: MIT
/*
 * POST /completion (llama-server's native endpoint): the request's prompt
 * forms and fields into a struct native_req, the prompts' token ids, and
 * the per-prompt state of a generation. Reference: llama.cpp
 * tools/server/README.md ("POST /completion"); the shared fields (stream,
 * sampling, seed, stop, max_tokens) go through api.c's parser.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_native.h"
#include "tokenizer.h"
#include "utf8.h"

/* llama-server reports this seed (LLAMA_DEFAULT_SEED) when none was given. */
#define NATIVE_RANDOM_SEED 4294967295u

/* A flat list of ids and strings (one prompt) with at least one id. */
static bool is_mixed(json_t *a)
{
	bool any_id = false;
	json_t *v;
	size_t i;

	if (!json_is_array(a) || !json_array_size(a))
		return false;
	json_array_foreach(a, i, v) {
		if (json_is_integer(v))
			any_id = true;
		else if (!json_is_string(v))
			return false;
	}
	return any_id;
}

/* One prompt from a string or a list of ids and strings (@v). */
static int one_prompt(json_t *v, struct native_prompt *np, const char *where,
		      struct api_error *e)
{
	json_t *it;
	size_t i, n = json_is_array(v) ? json_array_size(v) : 1;

	snprintf(np->where, sizeof(np->where), "%s", where);
	np->el = calloc(n, sizeof(*np->el));
	if (!np->el)
		return api_bad(e, where, "out of memory");
	if (json_is_string(v)) {
		np->el[0].text = strndup(json_string_value(v), json_string_length(v));
		np->n = 1;
		return np->el[0].text ? 0 : api_bad(e, where, "out of memory");
	}
	json_array_foreach(v, i, it) {
		struct native_elem *el = &np->el[np->n++];

		if (json_is_integer(it)) {
			json_int_t id = json_integer_value(it);

			if (id < 0 || id > INT32_MAX)
				return api_bad(e, where, "'%s[%zu]' is %lld: token ids are 0 or more",
					       where, i, (long long)id);
			el->is_id = true;
			el->id = (int32_t)id;
		} else {
			el->text = strndup(json_string_value(it), json_string_length(it));
			if (!el->text)
				return api_bad(e, where, "out of memory");
		}
	}
	return 0;
}

/*
 * "prompt": a string or a flat list of ids and strings is one prompt; any
 * other list is a batch whose every element is one prompt.
 */
static int parse_prompts(json_t *pr, struct native_req *nr, struct api_error *e)
{
	json_t *v;
	size_t i, n;

	if (!pr)
		return api_bad(e, "prompt", "'prompt' is required");
	if (json_is_string(pr) || is_mixed(pr)) {
		nr->prompts = calloc(1, sizeof(*nr->prompts));
		if (!nr->prompts)
			return api_bad(e, "prompt", "out of memory");
		nr->n_prompts = 1;
		return one_prompt(pr, nr->prompts, "prompt", e);
	}
	if (!json_is_array(pr) || !json_array_size(pr))
		return api_bad(e, "prompt", "'prompt' must be a string, a list of token ids, a list of token ids and strings, or a non-empty list of such prompts");
	n = json_array_size(pr);
	if (n > NATIVE_MAX_BATCH)
		return api_bad(e, "prompt", "'prompt' holds %zu prompts; at most %d are allowed in one request",
			       n, NATIVE_MAX_BATCH);
	nr->prompts = calloc(n, sizeof(*nr->prompts));
	if (!nr->prompts)
		return api_bad(e, "prompt", "out of memory");
	nr->batch = true;
	json_array_foreach(pr, i, v) {
		char where[32];

		snprintf(where, sizeof(where), "prompt[%zu]", i);
		if (!json_is_string(v) && !is_mixed(v))
			return api_bad(e, where, "'%s' must be a string, a list of token ids, or a list of token ids and strings",
				       where);
		nr->n_prompts++;
		if (one_prompt(v, &nr->prompts[i], where, e))
			return -1;
	}
	return 0;
}

/* generation_settings of the result: the settings the request ran with. */
static json_t *settings_json(const struct native_req *nr)
{
	const struct api_params *p = &nr->p;
	json_t *stop = json_array(), *o;
	int i;

	for (i = 0; i < p->n_stop; i++)
		json_array_append_new(stop, json_string(p->stop[i]));
	o = json_pack("{s:i, s:I, s:f, s:i, s:f, s:o, s:i, s:i, s:b, s:b, s:b, s:b, s:b}",
			 "n_predict", p->max_tokens,
			 "seed", (json_int_t)(p->s.have_seed ? p->s.seed : NATIVE_RANDOM_SEED),
			 "temperature", (double)p->s.temperature, "top_k", p->s.top_k,
			 "top_p", (double)p->s.top_p, "stop", stop, "max_tokens", p->max_tokens,
			 "n_probs", nr->n_probs, "stream", p->stream, "ignore_eos", nr->ignore_eos,
			 "post_sampling_probs", 0, "cache_prompt", 1,
			 "return_tokens", nr->return_tokens);
	if (o && json_object_update_new(o, json_pack("{s:f, s:f, s:i, s:f, s:f, s:i}",
			"min_p", (double)p->s.min_p, "repeat_penalty", (double)p->s.repeat_penalty,
			"repeat_last_n", p->s.repeat_last_n, "presence_penalty",
			(double)p->s.presence_penalty, "frequency_penalty",
			(double)p->s.frequency_penalty, "n_logit_bias", p->n_bias))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/*
 * llama-server's speculative.n_max / speculative.n_min of /completion: the
 * drafts of one verify pass (n_max 0 turns speculation off for the
 * request). Without --spec they change nothing.
 */
static int native_spec(json_t *o, struct api_params *p, struct api_error *e)
{
	json_int_t v = 0;
	bool have = false;

	if (api_get_int(o, "speculative.n_max", 0, SPEC_MAX_DRAFT, &v, &have, e))
		return -1;
	if (have)
		p->draft_max = v ? (int)v : -1;
	v = 0;
	if (api_get_int(o, "speculative.n_min", 0, SPEC_MAX_DRAFT, &v, NULL, e))
		return -1;
	p->draft_min = (int)v;
	return 0;
}

static int parse_fields(json_t *o, struct native_req *nr, struct api_error *e)
{
	struct api_params *p = &nr->p;
	long long v = 0;
	bool have = false, post = false, cache = true;
	json_t *rf, *it;
	size_t i;

	if (parse_prompts(json_object_get(o, "prompt"), nr, e) ||
	    api_parse_common(o, p, "max_tokens", e) || api_parse_format(o, p, e))
		return -1;
	if (api_get_int(o, "n_predict", -1, 1 << 30, &v, &have, e))
		return api_bad(e, "n_predict", "'n_predict' must be an integer >= -1 (-1: until the end of generation or the context is full)");
	if (have)
		p->max_tokens = (int)v;
	v = 0;
	if (api_get_int(o, "n_probs", 0, NATIVE_MAX_PROBS, &v, NULL, e))
		return -1;
	nr->n_probs = (int)v;
	if (native_spec(o, p, e))
		return -1;
	if (api_get_bool(o, "post_sampling_probs", &post, e) ||
	    api_get_bool(o, "return_tokens", &nr->return_tokens, e) ||
	    api_get_bool(o, "cache_prompt", &cache, e) || api_get_bool(o, "ignore_eos", &nr->ignore_eos, e))
		return -1;
	if (post)
		return api_bad(e, "post_sampling_probs", "'post_sampling_probs': true is not supported: n_probs reports the model's log-probabilities before sampling");
	rf = api_field(o, "response_fields");
	if (rf) {
		if (!json_is_array(rf))
			return api_bad(e, "response_fields", "'response_fields' must be a list of strings");
		json_array_foreach(rf, i, it)
			if (!json_is_string(it))
				return api_bad(e, "response_fields", "'response_fields[%zu]' must be a string",
					       i);
		nr->fields = json_incref(rf);
	}
	if (p->stream && nr->n_prompts > 1)
		return api_bad(e, "stream", "'stream': true takes one prompt; 'prompt' holds %d",
			       nr->n_prompts);
	p->logprobs = p->s.logprobs = nr->n_probs > 0;
	p->top_logprobs = p->s.n_probs = nr->n_probs;
	nr->settings = settings_json(nr);
	return nr->settings ? 0 : api_bad(e, NULL, "out of memory");
}

int native_parse(const char *body, size_t len, struct native_req *nr, struct api_error *e)
{
	json_error_t je;
	json_t *o;
	int ret;

	memset(nr, 0, sizeof(*nr));
	api_params_init(&nr->p, API_NATIVE);
	o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!o)
		return api_bad(e, NULL, "invalid JSON body: %s (line %d, column %d)", je.text, je.line,
			       je.column);
	if (!json_is_object(o)) {
		json_decref(o);
		return api_bad(e, NULL, "the request body must be a JSON object");
	}
	ret = parse_fields(o, nr, e);
	json_decref(o);
	return ret;
}

void native_req_free(struct native_req *nr)
{
	int i, k;

	for (i = 0; i < nr->n_prompts; i++) {
		for (k = 0; k < nr->prompts[i].n; k++)
			free(nr->prompts[i].el[k].text);
		free(nr->prompts[i].el);
	}
	free(nr->prompts);
	json_decref(nr->settings);
	json_decref(nr->fields);
	api_params_free(&nr->p);
	memset(nr, 0, sizeof(*nr));
}

int native_tokenize(const struct tokenizer *tok, bool add_bos, const struct native_prompt *np,
		    int32_t **toks, int *n, struct api_error *e)
{
	int n_vocab = tok_n_vocab(tok), i, got;
	long long cap = 1;

	*toks = NULL;
	*n = 0;
	for (i = 0; i < np->n; i++) {
		size_t len = np->el[i].is_id ? 0 : strlen(np->el[i].text);

		if (len > TOK_MAX_TEXT)
			return api_bad(e, np->where, "'%s' has a text longer than %u bytes", np->where,
				       TOK_MAX_TEXT);
		cap += np->el[i].is_id ? 1 : tok_max_tokens(tok, len);
		if (!np->el[i].is_id || np->el[i].id < n_vocab)
			continue;
		if (np->n == 1 && !strcmp(np->where, "prompt"))
			return api_bad(e, "prompt", "token id %d is outside the vocabulary (0..%d)",
				       np->el[i].id, n_vocab - 1);
		return api_bad(e, np->where, "'%s[%d]' is token id %d, outside the vocabulary (0..%d)",
			       np->where, i, np->el[i].id, n_vocab - 1);
	}
	if (cap > INT_MAX)
		return api_bad(e, np->where, "'%s' is too long", np->where);
	*toks = malloc(cap * sizeof(**toks));
	if (!*toks)
		goto oom;
	for (i = 0; i < np->n; i++) {
		if (np->el[i].is_id) {
			(*toks)[(*n)++] = np->el[i].id;
			continue;
		}
		/* BOS only before a prompt that starts with text (llama-server). */
		got = tok_encode(tok, np->el[i].text, add_bos && i == 0, *toks + *n, (int)cap - *n);
		if (got < 0)
			goto oom;
		*n += got;
	}
	if (!*n)
		return api_bad(e, np->where, "'%s' is empty", np->where);
	return 0;
oom:
	api_error_set(e, 500, "server_error", NULL, NULL, "out of memory or the tokenizer failed");
	return -1;
}

/* The prompt's text as llama-server shows it: special tokens (BOS) as text. */
static char *prompt_text(const struct tokenizer *tok, const int32_t *toks, int n)
{
	size_t cap = tok_max_piece(tok), len = 0, k;
	char *raw = malloc((size_t)n * cap + 1), *out;
	int i, got;

	if (!raw)
		return NULL;
	for (i = 0; i < n; i++) {
		got = tok_piece_ex(tok, toks[i], TOK_PIECE_SPECIAL, raw + len, cap);
		if (got > 0)
			len += (size_t)got;
	}
	out = malloc(3 * len + 1);
	if (out) {
		k = utf8_sanitize(raw, len, out);
		out[k] = 0;
	}
	free(raw);
	return out;
}

struct native_info *native_info_new(const struct native_req *nr, int index,
				    const struct tokenizer *tok, const int32_t *toks, int n)
{
	struct native_info *ni = calloc(1, sizeof(*ni));

	if (!ni)
		return NULL;
	ni->prompt = prompt_text(tok, toks, n);
	if (!ni->prompt) {
		free(ni);
		return NULL;
	}
	ni->index = index;
	ni->n_probs = nr->n_probs;
	ni->return_tokens = nr->return_tokens;
	ni->settings = json_incref(nr->settings);
	ni->fields = nr->fields ? json_incref(nr->fields) : NULL;
	return ni;
}

void native_info_free(struct native_info *ni)
{
	if (!ni)
		return;
	free(ni->prompt);
	json_decref(ni->settings);
	json_decref(ni->fields);
	free(ni->ids);
	free(ni);
}

json_t *native_filter(json_t *res, const json_t *fields)
{
	json_t *out = json_object(), *f;
	size_t i;

	json_array_foreach(fields, i, f) {
		const char *path = json_string_value(f), *p = path;
		json_t *v = res;

		while (v && *p) {
			const char *slash = strchr(p, '/');
			size_t n = slash ? (size_t)(slash - p) : strlen(p);

			v = json_is_object(v) ? json_object_getn(v, p, n) : NULL;
			p += n + (slash ? 1 : 0);
		}
		if (v && v != res)
			json_object_set(out, path, v);
	}
	json_decref(res);
	return out;
}
