/* SPDX-License-Identifier: MIT */
/*
 * rk1828-llm serve: the OpenAI-compatible HTTP server (libmicrohttpd +
 * jansson) over the engine (userspace/engine/engine.h). The server parses,
 * validates, templates, tokenizes and streams; the engine owns every
 * session, KV cache and card. See userspace/doc/server.rst.
 */
#ifndef RK_SERVER_H
#define RK_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cardspec.h"
#include "chat.h"
#include "engine.h"
#include "planner.h"

struct gguf_file;
struct tokenizer;
struct MHD_Daemon;
struct gen;
struct conn_set;
struct origin_policy;
struct rstore;
struct agent;

/** Default request body limit (413 beyond it), bytes. */
#define SRV_BODY_LIMIT (8u << 20)
/** Connections the server holds at most (libmicrohttpd refuses more). */
#define SRV_MAX_CONNS 512

/**
 * struct srv_opts - `rk1828-llm serve` options
 * @model: GGUF path (-m)
 * @host: listen address (numeric IPv4/IPv6 or a name), default 127.0.0.1
 * @port: TCP port, default 8080; 0 = any free one (set to it by http_start())
 * @cards: --cards spec ("all", a count or a list), default "all"
 * @cs: @cards parsed (cardspec.h)
 * @n_slots: --parallel, 0 = engine default (4)
 * @n_ctx: --ctx per slot, 0 = min(model context, 4096)
 * @bucket: --bucket, 0 = default (128)
 * @queue_max: --queue, requests waiting beyond the slots (default 16)
 * @api_key: --api-key or --api-key-file; NULL = no authentication
 * @api_key_buf: --api-key-file's key (owned; @api_key points to it)
 * @alias: --alias, the model id in the API; NULL = the file name
 * @chat_template: --chat-template-file's text (in place of the model's
 *	tokenizer.chat_template, as llama-server's option), or NULL
 * @no_ui: --no-ui: GET / answers 404
 * @body_limit: request body limit in bytes
 * @verbose: -v
 * @header_timeout: --header-timeout, s a request has for its headers
 * @body_timeout: --body-timeout, s it has for its body after them
 * @per_ip_limit: --per-ip-limit, connections per client address (0: none)
 * @allowed_hosts: the --allowed-host values joined with "," (malloc'ed), or NULL
 * @cors_origins: the --cors-origin values joined with "," (malloc'ed), or NULL
 * @agent_port: --agent-port, the TCP port of HAProxy's agent check on
 *	@host (agent.c); -1 = none, 0 = any free one (set to it by agent_start())
 */
struct srv_opts {
	const char *model, *host, *cards, *api_key, *alias;
	char *chat_template, *api_key_buf;
	struct cards_spec cs;
	int port, n_slots, queue_max, verbose;
	uint32_t n_ctx, bucket;
	int spec, draft_max, draft_min;	/* --spec (enum spec_kind), --draft-max, --draft-min */
	int split;	/* --split: enum plan_split (bytes, the default, or time) */
	bool no_ui;
	size_t body_limit;
	int header_timeout, body_timeout, per_ip_limit;
	char *allowed_hosts, *cors_origins;
	int agent_port;
};

/*
 * SRV_DRAINING (SIGUSR1): the model is loaded and the running requests go
 * on, new ones get 503 "draining"; the server exits once none is left.
 */
enum srv_state { SRV_LOADING, SRV_READY, SRV_DRAINING, SRV_STOPPING };

/**
 * struct srv - one running server
 * @o: options
 * @state: enum srv_state
 * @load_permille: loading progress 0..1000 (for /health and the log)
 * @load_what: what is being loaded now (under @lock)
 * @d: the HTTP daemon
 * @e: the engine (NULL until loaded)
 * @gf, @tok: the model file and its tokenizer (read-only once loaded)
 * @model_id: the id in the API (alias or file name)
 * @plan, @cards_desc: the segment plan and "card0,card1" for /v1/models
 * @card_ids: the device index of each card of the plan, in pipeline order
 * @n_cards, @n_ctx, @n_slots: what the engine runs with
 * @ct: the model's chat template (chat.h; plain when it has none)
 * @add_bos: prepend BOS to every prompt
 * @lock: protects @gens, @by_status, @load_what
 * @gens: generation requests in flight (watched for clients that left)
 * @n_gens: length of @gens
 * @by_status: HTTP requests answered, by status code (for /metrics)
 * @monitor: thread polling the sockets of @gens
 * @monitor_stop: ends @monitor
 * @t_start: start time (s since the epoch) for "created" fields
 * @conns: the open connections and their deadlines (http_conn.h)
 * @policy: the Host and Origin names it answers to (http_guard.h)
 * @store: the recent /v1/responses answers (resp_store.h; made by
 *	http_start())
 * @agent: the agent-check listener (agent.c), or NULL
 */
struct srv {
	struct srv_opts o;
	atomic_int state;
	atomic_int load_permille;
	char load_what[64];
	struct MHD_Daemon *d;
	struct engine *e;
	struct gguf_file *gf;
	struct tokenizer *tok;
	char model_id[256];
	char plan[PLAN_STR_MAX], cards_desc[128];
	int card_ids[ENGINE_MAX_CARDS];
	int n_cards, n_slots;
	uint32_t n_ctx;
	struct chat_template ct;
	bool add_bos;
	pthread_mutex_t lock;
	struct gen *gens;
	int n_gens;
	uint64_t by_status[600];
	pthread_t monitor;
	atomic_bool monitor_stop;
	long long t_start;
	struct conn_set *conns;
	struct origin_policy *policy;
	struct rstore *store;
	struct agent *agent;
};

/* serve.c: the `serve` subcommand; argv[0] is "serve". */
int serve_main(int argc, char **argv);

struct option;

/*
 * srv_options() - serve's options: the getopt_long() table serve_main()
 * parses with, ending in a zeroed entry; the one list of them, which the
 * CLI consults to name serve when another command is given one
 * ("run does not take --port (an option of serve)"). Static storage.
 */
const struct option *srv_options(void);

/* load.c: model, tokenizer, cards and engine; progress in s->load_*. */
int srv_load(struct srv *s, char *err, size_t errlen);
void srv_unload(struct srv *s);
void srv_set_progress(struct srv *s, int permille, const char *what);

/* http.c */
int http_start(struct srv *s, char *err, size_t errlen);
void http_quiesce(struct srv *s);
void http_cancel_all(struct srv *s);
int http_wait_idle(struct srv *s, int timeout_ms);
void http_stop(struct srv *s);

/*
 * srv_chat_prompt() (http.c) - the text of a chat or responses request
 * through the model's chat template, as /v1/chat/completions renders it
 * (generation prompt unless the last message is an assistant prefill).
 * Return: 0 with @cp (free with chat_prompt_free()), or -1 with @e.
 */
struct api_params;
struct api_error;
int srv_chat_prompt(struct srv *s, const struct api_params *p, struct chat_prompt *cp,
		    struct api_error *e);

/*
 * utility.c: llama-server's utility endpoints. util_tokenize(),
 * util_detokenize() and util_apply_template() take the request body and
 * return 0 with *@out the answer ({"tokens"}, {"content"}, {"prompt"}),
 * or -1 with @e (a 400 naming the field, or 500); util_tokenize()'s answer
 * is its JSON text (malloc'ed, *@out_len bytes), written token by token.
 * util_props() is the GET /props object (NULL: out of memory).
 */
struct json_t;
int util_tokenize(struct srv *s, const char *body, size_t len, char **out, size_t *out_len,
		  struct api_error *e);
int util_detokenize(struct srv *s, const char *body, size_t len, struct json_t **out,
		    struct api_error *e);
int util_apply_template(struct srv *s, const char *body, size_t len, struct json_t **out,
			struct api_error *e);
struct json_t *util_props(struct srv *s);

/*
 * agent.c: HAProxy's agent check on its own TCP port (--agent-port).
 * agent_reply() writes the one line answered for @st (enum srv_state)
 * with the engine snapshot @es (NULL while loading) into @buf (NUL-
 * terminated, at most @n bytes) and returns its length. agent_start()
 * listens on s->o.host:s->o.agent_port and answers from a thread of its
 * own: 0, or -1 with @err. agent_stop() closes it (NULL-safe, idempotent).
 */
size_t agent_reply(int st, const struct engine_stats *es, int queue_max, char *buf, size_t n);
int agent_start(struct srv *s, char *err, size_t errlen);
void agent_stop(struct srv *s);

/* metrics.c: count an answered request; the /metrics text (malloc'ed). */
void metrics_observe(struct srv *s, int status);
char *metrics_render(struct srv *s, size_t *len);
/* metrics_gateway.c: the vllm:* families gateways score servers by. */
void metrics_gateway(FILE *f, const struct engine_stats *st);

/* ui.c: embedded web UI files; NULL when @path is not one of them. */
const char *ui_find(const char *path, size_t *len, const char **mime);

#endif
