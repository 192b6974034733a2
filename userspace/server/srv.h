/* SPDX-License-Identifier: MIT */
/*
 * The state of one running server (struct srv) and its options (struct
 * srv_opts): the contract every server file below serve.c shares. Lowest
 * layer of userspace/server: it includes no other server header. See
 * userspace/doc/server.rst.
 */
#ifndef RK_SERVER_SRV_H
#define RK_SERVER_SRV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * @kv_type: --kv-type, QUANT_TYPE_* or PLAN_KV_AUTO (0: f32)
 * @queue_max: --queue, requests waiting beyond the slots (default 16)
 * @api_keys: the accepted API keys (owned copies), from every --api-key
 *	(comma-separated lists, repeated options add) and --api-key-file (a
 *	key a line), as llama-server takes them; NULL = no authentication
 * @n_api_keys: entries in @api_keys
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
	const char *model, *host, *cards, *alias;
	char *chat_template, **api_keys;
	int n_api_keys;
	struct cards_spec cs;
	int port, n_slots, queue_max, verbose;
	uint32_t n_ctx, bucket;
	int kv_type;
	int spec, draft_max, draft_min;	/* --spec (enum spec_kind), --draft-max, --draft-min */
	int split;	/* --split: enum plan_split (bytes, the default, or time) */
	const char *draft_model;	/* --draft-model FILE */
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
 * @n_cards, @n_ctx, @n_slots, @kv_type: what the engine runs with (the
 *	K/V cache type for /props and /v1/models: "f32", "f16", "q8_0", "q4_0")
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
	int kv_type;
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

/**
 * srv_set_progress() - the loading progress /health and the log show
 * @s: the server
 * @permille: 0..1000
 * @what: the stage being loaded (copied, cut to 63 bytes)
 *
 * Any thread (the loader's, serve_main()'s); takes @s->lock.
 */
void srv_set_progress(struct srv *s, int permille, const char *what);

#endif
