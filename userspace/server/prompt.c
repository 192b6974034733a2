// SPDX-License-Identifier: MIT
/*
 * Prompt building: a request's messages through the model's chat template
 * (chat.h), tools and tool choice included, or a completions prompt as
 * plain text, tokenized and checked against the context. The HTTP layer
 * calls it between parsing a request and submitting it to the engine.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_ops.h"
#include "prompt.h"
#include "tokenizer.h"

/*
 * Leading system messages (e.g. /v1/responses instructions followed by a
 * developer message) as one: a template has one system block. Returns the
 * joined text (malloc'ed; NULL when out of memory) and the count in @n_sys.
 */
static char *join_system(const struct api_params *p, int *n_sys)
{
	size_t len = 0;
	char *t;
	int i;

	for (i = 0; i < p->n_msgs && !strcmp(p->msgs[i].role, "system"); i++)
		len += strlen(p->msgs[i].content) + 2;
	*n_sys = i;
	t = malloc(len + 1);
	if (!t)
		return NULL;
	t[0] = 0;
	for (i = 0; i < *n_sys; i++) {
		if (i)
			strcat(t, "\n\n");
		strcat(t, p->msgs[i].content);
	}
	return t;
}

static const int tool_choice_map[] = {
	[API_TOOL_AUTO] = CHAT_TOOL_AUTO,
	[API_TOOL_NONE] = CHAT_TOOL_AUTO,	/* with no tools passed */
	[API_TOOL_REQUIRED] = CHAT_TOOL_REQUIRED,
	[API_TOOL_FUNCTION] = CHAT_TOOL_FUNCTION,
};

/* The request's messages as chat.h's (views; the calls array malloc'ed per message). */
static struct chat_msg *chat_msgs(const struct api_params *p, char *sys, int n_sys, int *k)
{
	struct chat_msg *m = calloc(p->n_msgs + 1, sizeof(*m));
	int i, j;

	if (!m)
		return NULL;
	*k = 0;
	if (n_sys) {
		m[*k].role = "system";
		m[(*k)++].content = sys;
	}
	for (i = n_sys; i < p->n_msgs; i++, (*k)++) {
		const struct api_msg *a = &p->msgs[i];
		struct chat_tool_call *c = a->n_calls ? calloc(a->n_calls, sizeof(*c)) : NULL;

		if (a->n_calls && !c)
			return m;	/* the caller sees n_tool_calls without calls: -EINVAL */
		for (j = 0; j < a->n_calls; j++)
			c[j] = (struct chat_tool_call){ .id = a->calls[j].id,
							.name = a->calls[j].name,
							.arguments = a->calls[j].arguments };
		m[*k] = (struct chat_msg){ .role = a->role, .content = a->content,
					   .reasoning = a->reasoning, .tool_calls = c,
					   .n_tool_calls = a->n_calls,
					   .tool_call_id = a->tool_call_id, .name = a->name };
	}
	return m;
}

static void chat_msgs_free(struct chat_msg *m, int k)
{
	int i;

	for (i = 0; m && i < k; i++)
		free((void *)m[i].tool_calls);
	free(m);
}

int srv_chat_prompt(struct srv *s, const struct api_params *p, struct chat_prompt *cp,
		    struct api_error *e)
{
	struct chat_opts co = {
		.add_generation_prompt = strcmp(p->msgs[p->n_msgs - 1].role, "assistant") != 0 ||
					 p->msgs[p->n_msgs - 1].n_calls,
		.thinking = CHAT_THINK_DEFAULT,
		.tools_json = p->tools_json,
		.tool_choice = tool_choice_map[p->tool_choice],
		.tool_name = p->tool_name,
	};
	struct chat_msg *m = NULL;
	char why[256] = "", *sys;
	int k = 0, n_sys, ret;

	memset(cp, 0, sizeof(*cp));
	sys = join_system(p, &n_sys);
	m = sys ? chat_msgs(p, sys, n_sys, &k) : NULL;
	if (!m) {
		free(sys);
		goto oom;
	}
	ret = chat_render(&s->ct, m, k, &co, cp, why, sizeof(why));
	chat_msgs_free(m, k);
	free(sys);
	if (ret == -EINVAL) {
		api_error_set(e, 400, "invalid_request_error", NULL, api_ops_of(p->kind)->prompt_param,
			      "the conversation cannot be rendered with the model's chat template (%s): %s",
			      s->ct.name, why);
		return -1;
	}
	if (ret)
		goto oom;
	if (cp->len > TOK_MAX_TEXT) {
		api_error_set(e, 400, "invalid_request_error", NULL, NULL,
			      "the prompt is longer than %u bytes", TOK_MAX_TEXT);
		chat_prompt_free(cp);
		return -1;
	}
	return 0;
oom:
	api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
	return -1;
}

/* The prompt of a chat or responses request through the model's template (chat.h). */
static int render_chat(struct srv *s, const struct api_params *p, int32_t **toks, int *n,
		       struct reply_start *rs, struct api_error *e)
{
	struct chat_prompt cp;
	int ret;

	if (srv_chat_prompt(s, p, &cp, e))
		return -1;
	ret = chat_encode(s->tok, &cp, 0, toks, n);
	rs->in_think = cp.reply_in_think;
	if (!ret && cp.reply_prefix && *cp.reply_prefix) {
		rs->prefix = cp.reply_prefix;
		cp.reply_prefix = NULL;
	}
	chat_prompt_free(&cp);
	if (ret == -ENOMEM) {
		api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
		return -1;
	}
	if (ret) {
		api_error_set(e, 500, "server_error", NULL, NULL, "cannot tokenize the prompt");
		return -1;
	}
	return 0;
}

/* A completions prompt: the text as it is, no template, no special tokens. */
static int encode_text(struct srv *s, const char *text, int32_t **toks, int *n,
		       struct api_error *e)
{
	int need, got;

	if (strlen(text) > TOK_MAX_TEXT) {
		api_error_set(e, 400, "invalid_request_error", NULL, "prompt",
			      "the prompt is longer than %u bytes", TOK_MAX_TEXT);
		return -1;
	}
	need = tok_max_tokens(s->tok, strlen(text));	/* not strlen * 3: "\xff " is 5 */
	*toks = malloc(need * sizeof(**toks));
	got = *toks ? tok_encode(s->tok, text, s->add_bos, *toks, need) : INT32_MIN;
	if (got < 0) {
		api_error_set(e, 500, "server_error", NULL, NULL, *toks ? "cannot tokenize the prompt" :
			      "out of memory");
		return -1;
	}
	*n = got;
	return 0;
}

/* A prompt of no tokens is a 400 naming @param. Return: @ret, or -1 then. */
static int not_empty(int ret, int n, const char *param, struct api_error *e)
{
	if (ret || n)
		return ret;
	api_error_set(e, 400, "invalid_request_error", NULL, param, "the prompt is empty");
	return -1;
}

int prompt_chat_tokens(struct srv *s, const struct api_params *p, int32_t **toks, int *n,
		       struct reply_start *rs, struct api_error *e)
{
	int ret = render_chat(s, p, toks, n, rs, e);

	return not_empty(ret, *n, "messages", e);
}

int prompt_text_tokens(struct srv *s, const struct api_params *p, int32_t **toks, int *n,
		       struct reply_start *rs, struct api_error *e)
{
	int ret = encode_text(s, p->prompt, toks, n, e);

	(void)rs;	/* no template: the reply starts afresh */
	return not_empty(ret, *n, "prompt", e);
}

int prompt_tokenize(struct srv *s, const struct api_params *p, int32_t **toks, int *n,
		    struct reply_start *rs, struct api_error *e)
{
	int ret;

	*toks = NULL;
	*n = 0;
	ret = api_ops_of(p->kind)->tokenize(s, p, toks, n, rs, e);
	if (ret) {
		free(*toks);
		*toks = NULL;
	}
	return ret;
}

/*
 * The prompt alone must leave room for one token: a prompt that fills the
 * context is context_length_exceeded, naming the prompt's field. A token
 * limit (max_tokens, max_completion_tokens, max_output_tokens, n_predict)
 * larger than the room left is not an error: it is an upper bound, as in
 * llama-server and Ollama (gen_max_tokens()).
 */
int prompt_check_ctx(struct srv *s, const struct api_params *p, int n_prompt,
		     struct api_error *e)
{
	const char *in = api_ops_of(p->kind)->prompt_param;

	if ((uint32_t)n_prompt >= s->n_ctx) {
		api_error_set(e, 400, "invalid_request_error", "context_length_exceeded", in,
			      "context length exceeded: the prompt has %d tokens, but the context is %u tokens",
			      n_prompt, s->n_ctx);
		return -1;
	}
	return 0;
}
