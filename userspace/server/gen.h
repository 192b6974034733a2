/* SPDX-License-Identifier: MIT */
/*
 * One generation request in flight between an HTTP connection and the
 * engine. Two owners hold a reference: the HTTP side (until libmicrohttpd
 * reports the request completed) and the engine side (until its DONE
 * event). The engine's callback only appends to the buffers and resumes
 * the suspended connection; the HTTP threads drain them.
 */
#ifndef RK_SERVER_GEN_H
#define RK_SERVER_GEN_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "api.h"
#include "chat.h"
#include "srv.h"

struct MHD_Connection;
struct native_info;
struct api_ops;

/**
 * struct gen - generation state shared by an HTTP request and the engine
 * @s: the server
 * @owner: the request's API key, whose store a stored response goes to
 *	(an entry of the server's keys, or ""; not owned)
 * @mu: protects everything below that changes after submit
 * @refs: HTTP side + engine side (freed at 0)
 * @next, @prev: list in s->gens (under s->lock)
 * @conn: the connection (valid while !@conn_gone)
 * @fd: its socket (watched by the monitor for a client that left)
 * @kind, @stream, @include_usage, @logprobs, @top_logprobs: from the request
 * @ops: the API of @kind (api_ops.h): its renderers
 * @id, @item_id: "chatcmpl-...", "cmpl-...", "resp_..." and "msg_..."
 * @created: creation time, s since the epoch
 * @q: the engine request (valid until engine_req_put() in gen_put())
 * @out, @out_len, @out_off, @out_cap: SSE bytes not yet sent
 * @text, @text_len, @text_cap: the whole generated text
 * @parser: chat, responses: the reply split into content, reasoning_content and
 *	tool calls (chat.h), fed every piece of text as it arrives
 * @prefix: chat, responses: the reply's start the prompt already wrote (a forced
 *	tool call's opening), fed to @parser first; NULL when none
 * @tools: chat: tools were offered (the first chunk's content is null)
 * @one_call: "parallel_tool_calls": false: only the reply's first call
 *	is returned
 * @pend_lp: streamed chat: logprobs of the current event not yet sent
 *	with a chunk
 * @lp: logprobs entries (json array) or NULL
 * @seq: next sequence_number of a /v1/responses stream
 * @ro: responses: the output items (format_responses.c)
 * @done: DONE arrived (@finish, @usage, @timing, @error are final)
 * @suspended: the connection is suspended waiting for output
 * @conn_gone: libmicrohttpd completed the request (client gone or done)
 * @cancel_sent: engine_cancel() was called
 * @shutdown: cancelled because the server is stopping
 * @stop_word: DONE: the stop string that ended the reply, "" when none
 * @reasoning_tokens: chat, responses: generated tokens spent in the
 *	reply's <think> block, its tags included (usage's reasoning_tokens)
 * @rs_pending: tokens of a reply start that may still open one
 * @nat: POST /completion: its per-prompt state (api_native.h), else NULL
 */
struct gen {
	struct srv *s;
	const char *owner;
	pthread_mutex_t mu;
	int refs;
	struct gen *next, *prev;
	struct MHD_Connection *conn;
	int fd;
	enum api_kind kind;
	const struct api_ops *ops;
	bool stream, include_usage, logprobs;
	int top_logprobs;
	char id[48], item_id[48];
	long long created;
	struct engine_req *q;
	char *out;
	size_t out_len, out_off, out_cap;
	char *text;
	size_t text_len, text_cap;
	struct chat_parser *parser;
	char *prefix;
	bool tools, one_call;
	json_t *pend_lp;
	json_t *lp;
	int seq;
	struct resp_out *ro;
	bool done, suspended, conn_gone, cancel_sent, shutdown;
	enum engine_finish finish;
	struct engine_usage usage;
	struct engine_timing timing;
	char error[256];
	char stop_word[ENGINE_MAX_STOP_LEN + 1];
	int reasoning_tokens, rs_pending;
	struct native_info *nat;
};

void gen_append(char **buf, size_t *len, size_t *cap, const char *p, size_t n);

/*
 * The renderers of the API kinds (their rows in api_ops.c; called through
 * g->ops with g->mu held): format.c for chat completions (fmt_chat_*) and
 * completions (fmt_text_*), format_responses.c for /v1/responses
 * (fmt_resp_*), format_native.c for POST /completion (api_native.h).
 */
void fmt_chat_start(struct gen *g);
void fmt_chat_delta(struct gen *g, const struct engine_event *ev);
void fmt_chat_done(struct gen *g);
char *fmt_chat_body(struct gen **g, int n, size_t *len);
void fmt_text_delta(struct gen *g, const struct engine_event *ev);
void fmt_text_done(struct gen *g);
char *fmt_text_body(struct gen **g, int n, size_t *len);

/*
 * fmt_token_json() - {token, logprob, bytes} of token @id (and an empty
 * top_logprobs array when @top), "token" lossy for a partial UTF-8
 * character, "bytes" exact.
 */
json_t *fmt_token_json(const struct gen *g, int32_t id, float lp, bool top);

/*
 * format.c's pieces shared by the renderers: fmt_sse() appends one SSE
 * event (named @event with its sequence_number, or a bare data line when
 * NULL; steals @o); fmt_take_text() appends an event's text to g->text
 * and its logprobs entries to g->lp, returning them (a new reference, or
 * NULL without logprobs); fmt_count_reasoning() counts the event's @n
 * tokens as reasoning when they lie in the <think> block (the parser's
 * phase was @before); fmt_reasoning_tokens() is usage's reasoning_tokens;
 * fmt_timings() the timings object; fmt_error_obj() the error of a
 * failed generation.
 */
void fmt_sse(struct gen *g, const char *event, json_t *o);
json_t *fmt_take_text(struct gen *g, const struct engine_event *ev);
void fmt_count_reasoning(struct gen *g, enum chat_phase before, int n);
int fmt_reasoning_tokens(const struct gen *g);
json_t *fmt_timings(const struct gen *g);
json_t *fmt_error_obj(const struct gen *g);

/*
 * format_responses.c: /v1/responses. fmt_resp_new() sets up g->ro from
 * the request (0, or -1 when out of memory), fmt_resp_free() frees it
 * (NULL-safe); the others are its api_ops hooks.
 */
int fmt_resp_new(struct gen *g, const struct api_params *p);
void fmt_resp_free(struct gen *g);
void fmt_resp_start(struct gen *g);
void fmt_resp_delta(struct gen *g, const struct engine_event *ev);
void fmt_resp_done(struct gen *g);
char *fmt_resp_body(struct gen **g, int n, size_t *len);

#endif
