// SPDX-License-Identifier: MIT
/*
 * Request validation for the three generation endpoints (api.h). Unknown
 * fields are ignored (as llama-server does); known fields with the wrong
 * type or out of range are a 400 naming the field.
 */
#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_ops.h"
#include "jsonmatch.h"
#include "tokenizer.h"

/*
 * OpenAI's temperature limit (the API reference: "between 0 and 2"), an API
 * rule on top of the sampling ranges of sampler_params_check().
 */
#define API_MAX_TEMPERATURE 2.0

void api_error_set(struct api_error *e, int status, const char *type, const char *code,
		   const char *param, const char *fmt, ...)
{
	va_list ap;

	memset(e, 0, sizeof(*e));
	e->status = status;
	e->type = type;
	e->code = code;
	snprintf(e->param, sizeof(e->param), "%s", param ? param : "");
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

char *api_error_json(const struct api_error *e, size_t *len)
{
	json_t *err = json_pack("{s:s, s:s, s:o, s:o}", "message", e->msg,
				"type", e->type ? e->type : "invalid_request_error",
				"param", e->param[0] ? json_string(e->param) : json_null(),
				"code", e->code ? json_string(e->code) : json_null());
	json_t *root = json_pack("{s:o}", "error", err);
	char *s = json_dumps(root, JSON_COMPACT);

	json_decref(root);
	*len = s ? strlen(s) : 0;
	return s;
}

int api_bad(struct api_error *e, const char *param, const char *fmt, ...)
{
	va_list ap;

	api_error_set(e, 400, "invalid_request_error", NULL, param, "%s", "");
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

json_t *api_field(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return v && !json_is_null(v) ? v : NULL;
}

int api_get_bool(json_t *o, const char *key, bool *out, struct api_error *e)
{
	json_t *v = api_field(o, key);

	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return api_bad(e, key, "'%s' must be a boolean (true or false)", key);
	*out = json_is_true(v);
	return 0;
}

/* A number in [min, max] ((min, max] with @min_open). */
static int get_num(json_t *o, const char *key, float *out, struct api_error *e)
{
	json_t *v = api_field(o, key);

	if (!v)
		return 0;
	if (!json_is_number(v))
		return api_bad(e, key, "'%s' must be a number", key);
	*out = (float)json_number_value(v);
	return 0;
}

/* An integer (or a number with an integral value) in [min, max]. */
int api_get_int(json_t *o, const char *key, long long min, long long max, long long *out,
		bool *present, struct api_error *e)
{
	json_t *v = api_field(o, key);
	long long i;

	if (!v)
		return 0;
	if (json_is_integer(v)) {
		i = json_integer_value(v);
	} else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
		   fabs(json_real_value(v)) < 9e18) {
		i = (long long)json_real_value(v);
	} else {
		return api_bad(e, key, "'%s' must be an integer", key);
	}
	if (i < min || i > max)
		return api_bad(e, key, "'%s' must be between %lld and %lld (got %lld)", key, min, max, i);
	*out = i;
	if (present)
		*present = true;
	return 0;
}

/*
 * One stop string: at most ENGINE_MAX_STOP_LEN bytes (the engine's limit,
 * checked here so that the 400 names "stop" before the prompt is
 * templated); "" is no stop string.
 */
static int add_stop(json_t *v, const char *where, struct api_params *p, struct api_error *e)
{
	if (json_string_length(v) > ENGINE_MAX_STOP_LEN)
		return api_bad(e, "stop", "'%s' is %zu bytes long; a stop string has at most %d bytes",
			   where, json_string_length(v), ENGINE_MAX_STOP_LEN);
	if (json_string_length(v))
		p->stop[p->n_stop++] = strdup(json_string_value(v));
	return 0;
}

static int parse_stop(json_t *o, struct api_params *p, struct api_error *e)
{
	json_t *v = api_field(o, "stop"), *it;
	char where[32];
	size_t i;

	if (!v)
		return 0;
	if (json_is_string(v))
		return add_stop(v, "stop", p, e);
	if (!json_is_array(v))
		return api_bad(e, "stop", "'stop' must be a string or an array of strings");
	if (json_array_size(v) > API_MAX_STOP)
		return api_bad(e, "stop", "'stop' has %zu entries; at most %d are supported",
			   json_array_size(v), API_MAX_STOP);
	json_array_foreach(v, i, it) {
		if (!json_is_string(it))
			return api_bad(e, "stop", "'stop[%zu]' must be a string", i);
		snprintf(where, sizeof(where), "stop[%zu]", i);
		if (add_stop(it, where, p, e))
			return -1;
	}
	return 0;
}

/* One logit_bias value: a number in [-100, 100], or false (ban). */
static int bias_value(json_t *v, const char *where, float *out, struct api_error *e)
{
	double d;

	if (json_is_false(v)) {
		*out = -INFINITY;
		return 0;
	}
	if (!json_is_number(v))
		return api_bad(e, "logit_bias", "'%s' must be a number from -100 to 100 (or false to ban the token)",
			   where);
	d = json_number_value(v);
	if (!(d >= -API_BIAS_MAX && d <= API_BIAS_MAX))
		return api_bad(e, "logit_bias", "'%s' must be from -100 to 100 (got %g)", where, d);
	*out = (float)d;
	return 0;
}

/* A token id: a non-negative integer (vocabulary checked by api_check_bias()). */
static int bias_id_str(const char *key, int32_t *out, struct api_error *e)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(key, &end, 10);
	if (key[0] < '0' || key[0] > '9' || *end || errno || v > INT32_MAX)
		return api_bad(e, "logit_bias", "invalid key in 'logit_bias': \"%.40s\"; keys are token ids (non-negative integers)",
			   key);
	*out = (int32_t)v;
	return 0;
}

/*
 * One [id, bias] or [text, bias] pair of llama-server's array form; a text
 * is kept in p->bias_text until api_resolve_bias() tokenizes it.
 */
static int bias_pair(json_t *it, size_t i, struct api_params *p, struct api_error *e)
{
	json_t *id = json_array_get(it, 0);
	char where[64];
	float bias;

	snprintf(where, sizeof(where), "logit_bias[%zu][1]", i);
	if (!json_is_array(it) || json_array_size(it) != 2 ||
	    !(json_is_string(id) || (json_is_integer(id) && json_integer_value(id) >= 0 &&
				     json_integer_value(id) <= INT32_MAX)))
		return api_bad(e, "logit_bias", "'logit_bias[%zu]' must be [token id, bias] with a non-negative integer id, or [\"text\", bias]",
			   i);
	if (bias_value(json_array_get(it, 1), where, &bias, e))
		return -1;
	if (json_is_string(id)) {
		struct api_bias_text *t = &p->bias_text[p->n_bias_text];

		t->text = strndup(json_string_value(id), json_string_length(id));
		if (!t->text)
			return api_bad(e, "logit_bias", "out of memory");
		t->len = json_string_length(id);
		t->bias = bias;
		p->n_bias_text++;
		return 0;
	}
	p->bias[p->n_bias].id = (int32_t)json_integer_value(id);
	p->bias[p->n_bias].bias = bias;
	p->n_bias++;
	return 0;
}

/*
 * logit_bias: OpenAI's object {"token id": bias}, or llama-server's array
 * [[id, bias], ...] where bias false bans the token and an id may be a
 * text: each of its tokens gets the bias.
 */
static int parse_bias(json_t *o, struct api_params *p, struct api_error *e)
{
	json_t *v = api_field(o, "logit_bias"), *val, *it;
	const char *key;
	size_t n, i;
	char where[64];

	if (!v)
		return 0;
	if (!json_is_object(v) && !json_is_array(v))
		return api_bad(e, "logit_bias", "'logit_bias' must be an object mapping token ids to a bias from -100 to 100");
	n = json_is_object(v) ? json_object_size(v) : json_array_size(v);
	if (n > API_MAX_BIAS)
		return api_bad(e, "logit_bias", "'logit_bias' has %zu entries; at most %d are supported",
			   n, API_MAX_BIAS);
	if (!n)
		return 0;
	p->bias = calloc(n, sizeof(*p->bias));
	p->bias_text = json_is_array(v) ? calloc(n, sizeof(*p->bias_text)) : NULL;
	if (!p->bias || (json_is_array(v) && !p->bias_text))
		return api_bad(e, "logit_bias", "out of memory");
	if (json_is_object(v)) {
		json_object_foreach(v, key, val) {
			struct sampler_bias *b = &p->bias[p->n_bias];

			snprintf(where, sizeof(where), "logit_bias[\"%.30s\"]", key);
			if (bias_id_str(key, &b->id, e) || bias_value(val, where, &b->bias, e))
				return -1;
			p->n_bias++;
		}
	} else {
		json_array_foreach(v, i, it) {
			if (bias_pair(it, i, p, e))
				return -1;
		}
	}
	p->s.bias = p->bias;
	p->s.n_bias = p->n_bias;
	return 0;
}

int api_check_bias(const struct api_params *p, int n_vocab, struct api_error *e)
{
	int i;

	for (i = 0; i < p->n_bias; i++)
		if (p->bias[i].id >= n_vocab)
			return api_bad(e, "logit_bias", "invalid key in 'logit_bias': %d; token ids are 0..%d (the model's vocabulary has %d tokens)",
				   p->bias[i].id, n_vocab - 1, n_vocab);
	return 0;
}

int api_resolve_bias(struct api_params *p, const struct tokenizer *tok, struct api_error *e)
{
	struct tok_encode_opts to = { 0 };	/* as llama-server: no BOS, specials plain */
	struct sampler_bias *nb;
	int32_t *ids;
	int i, j, n;

	for (i = 0; i < p->n_bias_text; i++) {
		const struct api_bias_text *t = &p->bias_text[i];

		if (t->len > TOK_MAX_TEXT)
			return api_bad(e, "logit_bias", "a logit_bias text is longer than %u bytes", TOK_MAX_TEXT);
		n = tok_max_tokens(tok, t->len);
		ids = malloc((size_t)n * sizeof(*ids));
		n = ids ? tok_encode_ex(tok, t->text, t->len, &to, ids, n) : -1;
		if (n < 0 || p->n_bias + n > API_MAX_BIAS) {
			free(ids);
			return n < 0 ? api_bad(e, "logit_bias", "cannot tokenize a logit_bias text") :
			       api_bad(e, "logit_bias", "'logit_bias' has more than %d token entries once its texts are tokenized",
				       API_MAX_BIAS);
		}
		nb = realloc(p->bias, (size_t)(p->n_bias + n + 1) * sizeof(*nb));
		if (!nb) {
			free(ids);
			return api_bad(e, "logit_bias", "out of memory");
		}
		p->bias = nb;
		for (j = 0; j < n; j++)
			p->bias[p->n_bias++] = (struct sampler_bias){ .id = ids[j], .bias = t->bias };
		free(ids);
	}
	p->s.bias = p->bias;
	p->s.n_bias = p->n_bias;
	return api_check_bias(p, tok_n_vocab(tok), e);
}

/* presence/frequency (OpenAI), repeat_penalty, repeat_last_n, min_p (llama-server). */
static int parse_penalties(json_t *o, struct api_params *p, struct api_error *e)
{
	long long v = p->s.repeat_last_n;

	if (get_num(o, "presence_penalty", &p->s.presence_penalty, e) ||
	    get_num(o, "frequency_penalty", &p->s.frequency_penalty, e) ||
	    get_num(o, "repeat_penalty", &p->s.repeat_penalty, e) ||
	    get_num(o, "min_p", &p->s.min_p, e))
		return -1;
	if (api_get_int(o, "repeat_last_n", INT_MIN, INT_MAX, &v, NULL, e))
		return -1;
	p->s.repeat_last_n = (int)v;
	return parse_bias(o, p, e);
}

/*
 * The sampling fields parsed so far against sampler_params_check() (the
 * vocabulary is checked by api_check_bias()) and OpenAI's temperature
 * limit: a 400 naming the field.
 */
static int check_sampling(const struct sampler_params *sp, struct api_error *e)
{
	const char *field = NULL;
	char msg[160];

	if (sp->temperature > API_MAX_TEMPERATURE)
		return api_bad(e, "temperature", "'temperature' must be in [0, %g] (got %g)",
			       API_MAX_TEMPERATURE, (double)sp->temperature);
	if (sampler_params_check(sp, 0, &field, msg, sizeof(msg)))
		return api_bad(e, field, "%s", msg);
	return 0;
}

/* Fields shared by every endpoint: stream, sampling, stop, n. */
static int parse_common(json_t *o, struct api_params *p, const char *max_key,
			struct api_error *e)
{
	long long v = 0;
	bool have = false;
	json_t *so;

	if (api_get_bool(o, "stream", &p->stream, e))
		return -1;
	so = api_field(o, "stream_options");
	if (so) {
		if (!json_is_object(so))
			return api_bad(e, "stream_options", "'stream_options' must be an object");
		if (api_get_bool(so, "include_usage", &p->include_usage, e))
			return api_bad(e, "stream_options.include_usage",
				   "'stream_options.include_usage' must be a boolean");
	}
	if (api_get_int(o, max_key, 0, 1 << 30, &v, &have, e))
		return -1;
	if (have)
		p->max_tokens = (int)v;
	if (get_num(o, "temperature", &p->s.temperature, e) ||
	    get_num(o, "top_p", &p->s.top_p, e) || parse_penalties(o, p, e))
		return -1;
	v = p->s.top_k;
	if (api_get_int(o, "top_k", INT_MIN, INT_MAX, &v, NULL, e))
		return -1;
	p->s.top_k = v == -1 ? 0 : (int)v;	/* -1 (vLLM) and 0: the whole vocabulary */
	if (check_sampling(&p->s, e))
		return -1;
	have = false;
	if (api_get_int(o, "seed", INT64_MIN, INT64_MAX, &v, &have, e))
		return -1;
	/* -1 asks for a random seed, as in llama-server (LLAMA_DEFAULT_SEED). */
	if (have && v < -1)
		return api_bad(e, "seed", "'seed' must be an integer >= 0, or -1 for a random seed");
	if (have && v != -1) {
		p->s.seed = (uint64_t)v;
		p->s.have_seed = true;
	}
	v = 1;
	if (api_get_int(o, "n", 1, 1, &v, NULL, e))
		return api_bad(e, "n", "'n' must be 1: one choice per request is supported");
	return parse_stop(o, p, e);
}

int api_parse_common(json_t *o, struct api_params *p, const char *max_key, struct api_error *e)
{
	return parse_common(o, p, max_key, e);
}

/* completions: function calling is a feature of chat completions and responses. */
static int no_tools(json_t *o, const char *endpoint, struct api_error *e)
{
	json_t *t = api_field(o, "tools");

	if (t && (!json_is_array(t) || json_array_size(t)))
		return api_bad(e, "tools", "'tools' (function calling) is not supported on %s: use /v1/chat/completions or /v1/responses",
			   endpoint);
	if (api_field(o, "functions"))
		return api_bad(e, "functions", "'functions' is not supported on %s: use 'tools' on /v1/chat/completions",
			   endpoint);
	return 0;
}

/* Chat content: a string, or an array of text parts (joined, BR-23). */
int api_parse_content(json_t *c, const char *where, const char *part_type2, char **out,
			 struct api_error *e)
{
	json_t *part;
	size_t i, n = 0;
	char *s;

	if (!c) {
		*out = strdup("");
		return 0;
	}
	if (json_is_string(c)) {
		*out = strndup(json_string_value(c), json_string_length(c));
		return 0;
	}
	if (!json_is_array(c))
		return api_bad(e, where, "'%s' must be a string or an array of content parts", where);
	json_array_foreach(c, i, part) {
		json_t *ty = json_object_get(part, "type"), *tx = json_object_get(part, "text");

		if (!json_is_object(part) || !json_is_string(ty))
			return api_bad(e, where, "'%s[%zu]' must be a content part object with a 'type'",
				   where, i);
		if (strcmp(json_string_value(ty), "text") &&
		    (!part_type2 || strcmp(json_string_value(ty), part_type2)) &&
		    strcmp(json_string_value(ty), "output_text"))
			return api_bad(e, where, "'%s[%zu].type' is '%s': only text parts are supported",
				   where, i, json_string_value(ty));
		if (!json_is_string(tx))
			return api_bad(e, where, "'%s[%zu].text' must be a string", where, i);
		n += json_string_length(tx);
	}
	s = malloc(n + 1);
	if (!s)
		return api_bad(e, where, "out of memory");
	n = 0;
	json_array_foreach(c, i, part) {
		json_t *tx = json_object_get(part, "text");

		memcpy(s + n, json_string_value(tx), json_string_length(tx));
		n += json_string_length(tx);
	}
	s[n] = 0;
	*out = s;
	return 0;
}

/* The role of a chat message ("developer" is system). */
static const char *norm_role(const char *r)
{
	if (!strcmp(r, "system") || !strcmp(r, "developer"))
		return "system";
	if (!strcmp(r, "user"))
		return "user";
	if (!strcmp(r, "assistant"))
		return "assistant";
	if (!strcmp(r, "tool"))
		return "tool";
	return NULL;
}

/*
 * Chat "messages" ({role, content} with tool calls and results) into
 * p->msgs; /v1/responses' input items are api_input.c's.
 */
static int parse_msgs(json_t *arr, struct api_params *p, struct api_error *e)
{
	json_t *m;
	size_t i;

	p->msgs = calloc(json_array_size(arr) + 1, sizeof(*p->msgs));
	if (!p->msgs)
		return api_bad(e, "messages", "out of memory");
	json_array_foreach(arr, i, m) {
		char where[64], at[80];
		json_t *role, *ty;
		const char *r;

		snprintf(where, sizeof(where), "messages[%zu]", i);
		if (!json_is_object(m))
			return api_bad(e, where, "'%s' must be an object", where);
		ty = json_object_get(m, "type");
		snprintf(at, sizeof(at), "%s.type", where);
		if (ty && (!json_is_string(ty) || strcmp(json_string_value(ty), "message")))
			return api_bad(e, at, "'%s' must be \"message\": only message items are supported",
				   at);
		role = json_object_get(m, "role");
		snprintf(at, sizeof(at), "%s.role", where);
		if (!json_is_string(role))
			return api_bad(e, at, "'%s' must be a string", at);
		r = norm_role(json_string_value(role));
		if (!r)
			return api_bad(e, at, "'%s' is '%.32s': roles are system, developer, user, assistant and tool",
				   at, json_string_value(role));
		p->msgs[p->n_msgs].role = r;
		p->msgs[p->n_msgs].item = (int)i;
		snprintf(at, sizeof(at), "%s.content", where);
		/* Only an assistant's (with its calls) may be null or absent. */
		if (!api_field(m, "content") && strcmp(json_string_value(role), "assistant"))
			return api_bad(e, at, "'%s' is required: a %s message has content", at, r);
		if (api_parse_content(api_field(m, "content"), at, NULL,
				      &p->msgs[p->n_msgs++].content, e))
			return -1;
		if (api_parse_tool_msg(m, where, &p->msgs[p->n_msgs - 1], e))
			return -1;
	}
	return 0;
}

int api_parse_chat(json_t *o, const struct api_store *store, struct api_params *p,
		   struct api_error *e)
{
	json_t *msgs = json_object_get(o, "messages");
	bool lp = false;
	long long top = 0;

	(void)store;	/* chat completions store nothing */
	if (!msgs)
		return api_bad(e, "messages", "'messages' is required");
	if (!json_is_array(msgs) || !json_array_size(msgs))
		return api_bad(e, "messages", "'messages' must be a non-empty array");
	if (api_field(o, "max_completion_tokens")) {
		long long ignored;

		/* It wins over the deprecated max_tokens, which must still be valid. */
		if (parse_common(o, p, "max_completion_tokens", e) ||
		    api_get_int(o, "max_tokens", 0, 1 << 30, &ignored, NULL, e))
			return -1;
	} else if (parse_common(o, p, "max_tokens", e)) {
		return -1;
	}
	if (api_parse_tools(o, p, e))
		return -1;
	if (api_get_bool(o, "logprobs", &lp, e) ||
	    api_get_int(o, "top_logprobs", 0, SAMPLER_MAX_PROBS, &top, NULL, e))
		return -1;
	if (top && !lp)
		return api_bad(e, "top_logprobs", "'top_logprobs' needs 'logprobs': true");
	p->logprobs = lp;
	p->top_logprobs = (int)top;
	if (api_parse_format(o, p, e))
		return -1;
	if (parse_msgs(msgs, p, e))
		return -1;
	return api_check_tool_ids(p, e);
}

int api_parse_completion(json_t *o, const struct api_store *store, struct api_params *p,
			 struct api_error *e)
{
	json_t *pr = json_object_get(o, "prompt"), *lp;
	long long n_best = 1;
	bool echo = false;

	(void)store;
	if (!pr)
		return api_bad(e, "prompt", "'prompt' is required");
	if (json_is_array(pr) && json_array_size(pr) == 1 &&
	    json_is_string(json_array_get(pr, 0)))
		pr = json_array_get(pr, 0);
	if (!json_is_string(pr))
		return api_bad(e, "prompt", "'prompt' must be a string or an array of one string");
	if (!json_string_length(pr))
		return api_bad(e, "prompt", "'prompt' must not be empty");
	if (parse_common(o, p, "max_tokens", e) || no_tools(o, "/v1/completions", e) ||
	    api_get_bool(o, "echo", &echo, e))
		return -1;
	if (echo)
		return api_bad(e, "echo", "'echo': true is not supported");
	if (api_field(o, "suffix"))
		return api_bad(e, "suffix", "'suffix' is not supported");
	/* best_of: the best of N server-side samples; one is what we make. */
	if (api_get_int(o, "best_of", 1, 1, &n_best, NULL, e))
		return api_bad(e, "best_of", "'best_of' must be 1: one sample per request is supported");
	if (api_parse_format(o, p, e))
		return -1;
	lp = api_field(o, "logprobs");
	if (lp) {
		long long n = 0;

		if (api_get_int(o, "logprobs", 0, 5, &n, NULL, e))
			return -1;
		p->logprobs = true;
		p->top_logprobs = (int)n;
	}
	p->prompt = strndup(json_string_value(pr), json_string_length(pr));
	return 0;
}

void api_params_init(struct api_params *p, enum api_kind kind)
{
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->max_tokens = -1;
	p->store = true;
	p->s = (struct sampler_params)SAMPLER_PARAMS_DEFAULT;
}

int api_parse(enum api_kind kind, const char *body, size_t len, struct api_params *p,
	      struct api_error *e)
{
	return api_parse_with(kind, body, len, NULL, p, e);
}

int api_parse_with(enum api_kind kind, const char *body, size_t len,
		   const struct api_store *store, struct api_params *p, struct api_error *e)
{
	const struct api_ops *ops;
	json_error_t je;
	json_t *o;
	int ret;

	api_params_init(p, kind);
	o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!o)
		return api_bad(e, NULL, "invalid JSON body: %s (line %d, column %d)", je.text, je.line,
			   je.column);
	if (!json_is_object(o)) {
		json_decref(o);
		return api_bad(e, NULL, "the request body must be a JSON object");
	}
	ops = api_ops_of(kind);
	if (store)
		p->owner = store->owner;
	ret = ops->parse ? ops->parse(o, store, p, e) :
	      api_bad(e, NULL, "this endpoint parses its own body");
	if (!ret && p->s.logprobs != p->logprobs) {
		p->s.logprobs = p->logprobs;
		p->s.n_probs = p->top_logprobs;
	}
	json_decref(o);
	return ret;
}

void api_params_free(struct api_params *p)
{
	int i;

	for (i = 0; i < p->n_msgs; i++) {
		struct api_msg *m = &p->msgs[i];
		int k;

		free(m->content);
		free(m->reasoning);
		for (k = 0; k < m->n_calls; k++) {
			free(m->calls[k].id);
			free(m->calls[k].name);
			free(m->calls[k].arguments);
		}
		free(m->calls);
		free(m->tool_call_id);
		free(m->name);
	}
	free(p->msgs);
	free(p->tools_json);
	free(p->tool_name);
	free(p->prompt);
	jm_schema_put(p->schema);
	json_decref(p->schema_json);
	json_decref(p->tools_given);
	json_decref(p->tool_ns);
	json_decref(p->input_items);
	free(p->previous_id);
	for (i = 0; i < p->n_stop; i++)
		free(p->stop[i]);
	free(p->bias);
	for (i = 0; i < p->n_bias_text; i++)
		free(p->bias_text[i].text);
	free(p->bias_text);
	memset(p, 0, sizeof(*p));
}
