// SPDX-License-Identifier: MIT
/*
 * `rk1828-llm serve`: options, the load with its progress line, the
 * graceful stop on SIGINT, SIGTERM and SIGHUP (stop accepting, cancel the
 * running requests, wait for their connections to finish, free the cards,
 * exit 0) and the drain on SIGUSR1 (new requests get 503 "draining", the
 * running ones finish, then the same stop with nothing left to cancel).
 * The server listens from the start so GET /health reports the load.
 *
 * Signals: no handler runs. They are blocked in every thread (the mask is
 * set before any thread starts) and the main thread takes them
 * synchronously with sigwaitinfo()/sigtimedwait(), so whatever it does
 * next runs in ordinary thread context: nothing here needs to be
 * async-signal-safe.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "api_keys.h"
#include "engine_opts.h"
#include "http.h"
#include "http_guard.h"
#include "load.h"
#include "server.h"

#define EXIT_RUNTIME	1
#define EXIT_USAGE	2
#define STOP_WAIT_MS	10000
/* How often a draining server looks whether its last request finished. */
#define DRAIN_POLL_MS	100
/* Deadlines of a request's headers and body (nginx's client_header_timeout is 60 s). */
#define DEFAULT_HEADER_S	30
#define DEFAULT_BODY_S	60
/*
 * Connections per client address beyond what the sessions and the queue
 * take: a proxy in front (one address for every client) forwards at most
 * that many requests that are not refused at once, plus health checks
 * and the web UI's polling.
 */
#define PER_IP_SPARE	32

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rk1828-llm serve -m MODEL [--host 127.0.0.1] [--port 8080]\n"
		"                        [--cards all|N|LIST] [--parallel S] [--ctx N] [--bucket B]\n"
		"                        [--kv-type f32|f16|q8_0|q4_0|auto]\n"
		"                        [--api-key KEY | --api-key-file FILE] [--alias NAME] [--queue Q]\n"
		"                        [--no-ui] [-v]\n"
		"                        [--allowed-host H] [--cors-origin O] [--per-ip-limit N]\n"
		"                        [--header-timeout S] [--body-timeout S]\n"
		"                        [--chat-template-file FILE] [--agent-port P] [--split bytes|time]\n"
		"\n"
		"  OpenAI-compatible HTTP server with a web UI at http://HOST:PORT/\n"
		"  --host H       listen address (default 127.0.0.1; 0.0.0.0 or :: for all)\n"
		"  --port P       TCP port (default 8080; 0: any free port, printed)\n"
		"  --cards C      all (default), N (the first N cards) or a list (\"0,2\")\n"
		"  --parallel S   concurrent sessions, each with its own KV cache (default 4)\n"
		"  --ctx N        context per session in tokens (default min(model, 4096))\n"
		"  --bucket B     prefill bucket in tokens (default 128)\n"
		"  --kv-type T    K/V cache type on the cards: f32 (default), f16, q8_0, q4_0,\n"
		"                 or auto: the widest that fits --parallel sessions of --ctx\n"
		"  --spec ngram|draft|mtp  speculative decoding by prompt lookup, a draft\n"
		"                 model (--draft-model) or the model's MTP block (default none);\n"
		"                 per request: speculative.n_max / speculative.n_min\n"
		"  --draft-max K  most drafted tokens per verify pass, 1..32 (default 16)\n"
		"  --draft-min K  fewest drafted tokens worth a verify pass (default 0)\n"
		"  --split S      bytes (default): balance the cards' bytes; time: balance\n"
		"                 their predicted prefill time (built-in profile, PCIe)\n"
		"  --draft-model FILE  --spec draft: the draft model (same vocabulary), run on\n"
		"                 the host CPU\n"
		"  --api-key KEY  require 'Authorization: Bearer KEY' (all but /health and /);\n"
		"                 KEY,KEY2,... or the option repeated accepts each key\n"
		"  --api-key-file FILE  the keys are FILE's lines, one a line (kept out of\n"
		"                 the process list, where --api-key shows them to every user)\n"
		"  --alias NAME   model id in the API (default: the model's file name)\n"
		"  --queue Q      requests waiting beyond the sessions before 503 (default %d)\n"
		"  --no-ui        do not serve the web UI\n"
		"  --allowed-host H  without --api-key, answer to the host name H too (besides\n"
		"                 localhost, IP addresses, --host and this machine's name);\n"
		"                 repeatable or a comma list, '*' any\n"
		"  --cors-origin O   without --api-key, let web pages at origin O call the API\n"
		"                 (besides the server's own pages and localhost's), e.g.\n"
		"                 http://192.168.1.7:3000; repeatable or a comma list, '*' any\n"
		"  --per-ip-limit N  connections per client address (default: sessions + queue\n"
		"                 + %d, at most %d; 0: no limit)\n"
		"  --header-timeout S  seconds a request has for its headers (default %d)\n"
		"  --body-timeout S    seconds it has for its body after them (default %d)\n"
		"  --chat-template-file FILE  the chat template (Jinja) instead of the model's\n"
		"  --agent-port P  answer HAProxy's agent check on HOST:P (a line such as\n"
		"                 'up ready 100%%': a weight from the queue, 'drain' while\n"
		"                 draining; 0: any free port, printed); default none\n"
		"  -v             verbose\n"
		"\n"
		"Stops on SIGINT, SIGTERM or SIGHUP: running requests are cancelled, exit status 0.\n"
		"Drains on SIGUSR1: new requests get 503 (GET /health: \"draining\"), running\n"
		"ones finish, then it exits 0 (a SIGTERM meanwhile cancels them and stops).\n"
		"exit status: 0 stopped by a signal; 1 runtime failure (model, cards, port);\n"
		"2 usage error\n", ENGINE_DEFAULT_QUEUE, PER_IP_SPARE, SRV_MAX_CONNS, DEFAULT_HEADER_S,
		DEFAULT_BODY_S);
}

static int parse_int(const char *s, const char *opt, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min || v > max) {
		fprintf(stderr, "rk1828-llm: %s: bad value \"%s\" (%ld..%ld)\n", opt, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

enum { O_HOST = 256, O_PORT, O_CARDS, O_PARALLEL, O_CTX, O_BUCKET, O_KEY, O_KEY_FILE, O_ALIAS,
       O_QUEUE, O_NOUI, O_ALLOWED_HOST, O_CORS_ORIGIN, O_PER_IP, O_HEADER_TIMEOUT,
       O_BODY_TIMEOUT, O_TEMPLATE, O_SPEC, O_DRAFTMAX, O_DRAFTMIN, O_AGENT_PORT, O_KVTYPE,
       O_DRAFTMODEL, O_SPLIT };

static const struct option srv_long_opts[] = {
	{ "model", required_argument, NULL, 'm' },
	{ "host", required_argument, NULL, O_HOST },
	{ "port", required_argument, NULL, O_PORT },
	{ "cards", required_argument, NULL, O_CARDS },
	{ "parallel", required_argument, NULL, O_PARALLEL },
	{ "ctx", required_argument, NULL, O_CTX },
	{ "bucket", required_argument, NULL, O_BUCKET },
	{ "kv-type", required_argument, NULL, O_KVTYPE },
	{ "api-key", required_argument, NULL, O_KEY },
	{ "api-key-file", required_argument, NULL, O_KEY_FILE },
	{ "alias", required_argument, NULL, O_ALIAS },
	{ "queue", required_argument, NULL, O_QUEUE },
	{ "no-ui", no_argument, NULL, O_NOUI },
	{ "allowed-host", required_argument, NULL, O_ALLOWED_HOST },
	{ "cors-origin", required_argument, NULL, O_CORS_ORIGIN },
	{ "per-ip-limit", required_argument, NULL, O_PER_IP },
	{ "header-timeout", required_argument, NULL, O_HEADER_TIMEOUT },
	{ "body-timeout", required_argument, NULL, O_BODY_TIMEOUT },
	{ "chat-template-file", required_argument, NULL, O_TEMPLATE },
	{ "spec", required_argument, NULL, O_SPEC },
	{ "draft-max", required_argument, NULL, O_DRAFTMAX },
	{ "draft-min", required_argument, NULL, O_DRAFTMIN },
	{ "draft-model", required_argument, NULL, O_DRAFTMODEL },
	{ "agent-port", required_argument, NULL, O_AGENT_PORT },
	{ "split", required_argument, NULL, O_SPLIT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct option *srv_options(void)
{
	return srv_long_opts;
}

/* A repeatable list option: @arg (itself a comma list) appended to *@list. */
static int append_list(char **list, const char *arg, const char *opt)
{
	size_t old = *list ? strlen(*list) : 0;
	char *l;

	if (!*arg || *arg == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,")) {
		fprintf(stderr, "rk1828-llm: %s: an empty entry in \"%s\"\n", opt, arg);
		return -1;
	}
	l = realloc(*list, old + strlen(arg) + 2);
	if (!l) {
		fprintf(stderr, "rk1828-llm: out of memory\n");
		return -1;
	}
	if (old)
		l[old++] = ',';
	strcpy(l + old, arg);
	*list = l;
	return 0;
}

/* The HTTP layer's options of the open network. */
static int parse_net_opt(int c, const char *arg, struct srv_opts *o)
{
	long v;

	switch (c) {
	case O_ALLOWED_HOST: return append_list(&o->allowed_hosts, arg, "--allowed-host");
	case O_CORS_ORIGIN: return append_list(&o->cors_origins, arg, "--cors-origin");
	case O_PER_IP:
		if (parse_int(arg, "--per-ip-limit", 0, SRV_MAX_CONNS, &v))
			return -1;
		o->per_ip_limit = (int)v;
		return 0;
	case O_HEADER_TIMEOUT:
		if (parse_int(arg, "--header-timeout", 1, 3600, &v))
			return -1;
		o->header_timeout = (int)v;
		return 0;
	default:
		if (parse_int(arg, "--body-timeout", 1, 3600, &v))
			return -1;
		o->body_timeout = (int)v;
		return 0;
	}
}

/* --chat-template-file: the file's text (at most 1 MiB) into o->chat_template. */
static int read_template(const char *path, struct srv_opts *o)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;
	char *t = malloc((1u << 20) + 1);

	if (f && t)
		n = fread(t, 1, 1u << 20, f);
	if (!f || !t || ferror(f) || !feof(f) || !n) {
		fprintf(stderr, "rk1828-llm: --chat-template-file %s: %s\n", path,
			!f ? strerror(errno) : !n ? "empty" : "not a file of at most 1 MiB");
		if (f)
			fclose(f);
		free(t);
		return -1;
	}
	fclose(f);
	t[n] = 0;
	free(o->chat_template);
	o->chat_template = t;
	return 0;
}

/* One option @c with @arg into @o: 0, or -1 with the message printed (-h exits 0). */
static int parse_opt(int c, const char *arg, struct srv_opts *o)
{
	uint32_t u;
	long v;

	if (c >= O_ALLOWED_HOST && c <= O_BODY_TIMEOUT)
		return parse_net_opt(c, arg, o);

	switch (c) {
	case 'm': o->model = arg; break;
	case O_HOST: o->host = arg; break;
	case O_PORT:
		if (parse_int(arg, "--port", 0, 65535, &v))
			return -1;
		o->port = (int)v;
		break;
	case O_CARDS: o->cards = arg; break;
	case O_PARALLEL:
		if (engine_opt_arg(ENGINE_OPT_PARALLEL, arg, &u))
			return -1;
		o->n_slots = (int)u;
		break;
	case O_CTX:
		return engine_opt_arg(ENGINE_OPT_CTX, arg, &o->n_ctx);
	case O_BUCKET:
		return engine_opt_arg(ENGINE_OPT_BUCKET, arg, &o->bucket);
	case O_KVTYPE:
		return engine_opt_kv_type(arg, &o->kv_type);
	case O_KEY:
		return api_keys_add(o, arg, "--api-key");
	case O_KEY_FILE:
		return api_keys_read_file(o, arg);
	case O_ALIAS:
		if (!*arg || strlen(arg) > 200) {
			fprintf(stderr, "rk1828-llm: --alias: 1..200 characters\n");
			return -1;
		}
		o->alias = arg;
		break;
	case O_QUEUE:
		if (parse_int(arg, "--queue", 0, 4096, &v))
			return -1;
		o->queue_max = (int)v;
		break;
	case O_NOUI: o->no_ui = true; break;
	case O_SPEC: {
		enum spec_kind k;

		if (spec_parse(arg, &k)) {
			fprintf(stderr, "rk1828-llm: --spec %s: %s\n", arg, SPEC_NAMES);
			return -1;
		}
		o->spec = (int)k;
		break;
	}
	case O_DRAFTMAX:
		if (parse_int(arg, "--draft-max", 1, SPEC_MAX_DRAFT, &v))
			return -1;
		o->draft_max = (int)v;
		break;
	case O_SPLIT:
		/* plan_split_parse()'s names; serve-fake links no planner. */
		if (strcmp(arg, "bytes") && strcmp(arg, "time")) {
			fprintf(stderr, "rk1828-llm: --split %s: bytes or time\n", arg);
			return -1;
		}
		o->split = strcmp(arg, "time") ? PLAN_SPLIT_BYTES : PLAN_SPLIT_TIME;
		break;
	case O_DRAFTMODEL:
		o->draft_model = arg;
		break;
	case O_DRAFTMIN:
		if (parse_int(arg, "--draft-min", 0, SPEC_MAX_DRAFT, &v))
			return -1;
		o->draft_min = (int)v;
		break;
	case O_TEMPLATE:
		return read_template(arg, o);
	case O_AGENT_PORT:
		if (parse_int(arg, "--agent-port", 0, 65535, &v))
			return -1;
		o->agent_port = (int)v;
		break;
	case 'v': o->verbose++; break;
	case 'h': usage(stdout); exit(0);
	default: usage(stderr); return -1;
	}
	return 0;
}

static int parse_opts(int argc, char **argv, struct srv_opts *o)
{
	char err[160];
	int c;

	memset(o, 0, sizeof(*o));
	o->host = "127.0.0.1";
	o->port = 8080;
	o->cards = "all";
	o->queue_max = ENGINE_DEFAULT_QUEUE;
	o->body_limit = SRV_BODY_LIMIT;
	o->header_timeout = DEFAULT_HEADER_S;
	o->body_timeout = DEFAULT_BODY_S;
	o->per_ip_limit = -1;
	o->agent_port = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "m:vh", srv_long_opts, NULL)) != -1) {
		if (parse_opt(c, optarg, o))
			return -1;
	}
	if (o->agent_port > 0 && o->agent_port == o->port) {
		fprintf(stderr, "rk1828-llm: --agent-port %d is the HTTP port (--port)\n", o->agent_port);
		return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "rk1828-llm: serve: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	if (!o->model) {
		fprintf(stderr, "rk1828-llm: serve: no model given (-m MODEL)\n");
		return -1;
	}
	if (cards_spec_parse(o->cards, &o->cs, err, sizeof(err))) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		return -1;
	}
	if (o->per_ip_limit < 0) {
		o->per_ip_limit = (o->n_slots ? o->n_slots : ENGINE_DEFAULT_SLOTS) + o->queue_max +
				  PER_IP_SPARE;
		if (o->per_ip_limit > SRV_MAX_CONNS)
			o->per_ip_limit = SRV_MAX_CONNS;
	}
	return 0;
}

/* Who may call (http_guard.h); a note where the options change nothing. */
static int make_policy(struct srv *s)
{
	const struct srv_opts *o = &s->o;
	char err[256];

	s->policy = origin_policy_new(o->n_api_keys > 0, o->host, o->allowed_hosts,
				      o->cors_origins, err, sizeof(err));
	if (!s->policy) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		return -1;
	}
	if (!o->n_api_keys && strcmp(o->host, "localhost") && strncmp(o->host, "127.", 4) &&
	    strcmp(o->host, "::1"))
		fprintf(stderr, "rk1828-llm: note: --host %s without --api-key: every client that reaches it may use the server (web pages only from its own origin, localhost and --cors-origin)\n",
			o->host);
	if (o->n_api_keys && (o->allowed_hosts || o->cors_origins))
		fprintf(stderr, "rk1828-llm: note: with --api-key every host name and web page may call (the key is the check): --allowed-host and --cors-origin change nothing\n");
	return 0;
}

static void free_srv(struct srv *s)
{
	origin_policy_free(s->policy);
	free(s->o.allowed_hosts);
	free(s->o.cors_origins);
	free(s->o.chat_template);
	api_keys_free(&s->o);
	free(s);
}

struct loader {
	struct srv *s;
	int ret;
	atomic_bool finished;
	char err[1024];
};

static void *load_thread(void *arg)
{
	struct loader *L = arg;

	L->ret = srv_load(L->s, L->err, sizeof(L->err));
	atomic_store(&L->finished, true);
	return NULL;
}

/* The progress line: rewritten in place on a terminal, one line per stage otherwise. */
static void progress(struct srv *s, char *last, size_t n, bool tty)
{
	char what[64], line[128];
	int pm = atomic_load(&s->load_permille);

	pthread_mutex_lock(&s->lock);
	snprintf(what, sizeof(what), "%s", s->load_what);
	pthread_mutex_unlock(&s->lock);
	snprintf(line, sizeof(line), "loading %s: %3d%% %s", s->o.model, pm / 10, what);
	if (!strcmp(line, last))
		return;
	snprintf(last, n, "%s", line);
	if (tty)
		fprintf(stderr, "\r\033[K%s", line);
	else
		fprintf(stderr, "%s\n", line);
}

/* Wait for the load while watching for a signal; returns the signal or 0. */
static int wait_load(struct srv *s, struct loader *L, const sigset_t *set)
{
	struct timespec ts = { 0, 100 * 1000000L };
	bool tty = isatty(2);
	char last[128] = "";
	int sig;

	while (!atomic_load(&L->finished)) {
		progress(s, last, sizeof(last), tty);
		sig = sigtimedwait(set, NULL, &ts);
		if (sig > 0) {
			fprintf(stderr, "%srk1828-llm: %s while loading: stopping after the load step\n",
				tty ? "\n" : "", strsignal(sig));
			return sig;
		}
	}
	progress(s, last, sizeof(last), tty);
	if (tty)
		fputc('\n', stderr);
	return 0;
}

static void shutdown_server(struct srv *s, const sigset_t *set, int sig)
{
	struct timespec ts = { 0, 0 };
	int left;

	if (sig == SIGUSR1)
		fprintf(stderr, "rk1828-llm: drained: stopping\n");
	else {
		int n = http_running(s);

		fprintf(stderr, "rk1828-llm: %s: stopping (no new connections, cancelling %d running request%s)\n",
			strsignal(sig), n, n == 1 ? "" : "s");
	}
	atomic_store(&s->state, SRV_STOPPING);
	agent_stop(s);
	http_quiesce(s);
	http_cancel_all(s);
	left = http_wait_idle(s, STOP_WAIT_MS);
	if (left)
		fprintf(stderr, "rk1828-llm: %d request%s still open after %d s: closing them\n",
			left, left == 1 ? "" : "s", STOP_WAIT_MS / 1000);
	(void)sigtimedwait(set, NULL, &ts);
	http_stop(s);
}

/*
 * Serve until a signal stops it; returns that signal. SIGUSR1 drains:
 * new requests get 503 while the running ones go on, and once none has
 * been left at two looks DRAIN_POLL_MS apart (one that passed the state
 * check just before the drain began has had that long to register),
 * SIGUSR1 is returned. SIGINT, SIGTERM and SIGHUP stop at once, draining
 * or not; a second SIGUSR1 changes nothing.
 */
static int serve_until_signal(struct srv *s, const sigset_t *set)
{
	struct timespec poll = { 0, DRAIN_POLL_MS * 1000000L };
	int sig, idle = 0, n;

	for (;;) {
		if (atomic_load(&s->state) == SRV_DRAINING) {
			pthread_mutex_lock(&s->lock);
			n = s->n_gens;
			pthread_mutex_unlock(&s->lock);
			idle = n ? 0 : idle + 1;
			if (idle >= 2)
				return SIGUSR1;
			sig = sigtimedwait(set, NULL, &poll);
		} else {
			sig = sigwaitinfo(set, NULL);
		}
		if (sig < 0)	/* EINTR, or the drain poll's EAGAIN */
			continue;
		if (sig != SIGUSR1)
			return sig;
		if (atomic_load(&s->state) != SRV_READY)
			continue;
		n = http_running(s);
		atomic_store(&s->state, SRV_DRAINING);
		fprintf(stderr, "rk1828-llm: User defined signal 1: draining (new requests get 503, %d running request%s finish%s, then exit)\n",
			n, n == 1 ? "" : "s", n == 1 ? "es" : "");
	}
}


int serve_main(int argc, char **argv)
{
	struct srv *s = calloc(1, sizeof(*s));
	struct loader L = { .s = s };
	char err[512];
	pthread_t lt;
	sigset_t set;
	int sig = 0;

	if (!s)
		return EXIT_RUNTIME;
	if (parse_opts(argc, argv, &s->o) || make_policy(s)) {
		free_srv(s);
		return EXIT_USAGE;
	}
	/*
	 * The model loads after the port is open (GET /health says how far);
	 * a file that cannot be read at all is said before anything listens.
	 */
	{
		FILE *mf = fopen(s->o.model, "rb");

		if (!mf) {
			fprintf(stderr, "rk1828-llm: %s: %s\n", s->o.model, strerror(errno));
			free_srv(s);
			return EXIT_RUNTIME;
		}
		fclose(mf);
	}
	pthread_mutex_init(&s->lock, NULL);
	s->t_start = time(NULL);
	atomic_store(&s->state, SRV_LOADING);
	srv_set_progress(s, 0, "starting");
	/* Every thread inherits the mask: only sigtimedwait() below sees them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	/*
	 * SIGHUP (the terminal or the ssh session went away) stops it as
	 * gracefully: there is no configuration to reload, and the default
	 * action would kill it with requests running and the cards held.
	 */
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);	/* drain (serve_until_signal()) */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (http_start(s, err, sizeof(err))) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		free_srv(s);
		return EXIT_RUNTIME;
	}
	fprintf(stderr, "rk1828-llm: listening on http://%s:%d/ (GET /health answers 503 until the model is loaded)\n",
		strchr(s->o.host, ':') ? "[::]" : s->o.host, s->o.port);
	if (s->o.agent_port >= 0 && agent_start(s, err, sizeof(err))) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		http_stop(s);
		free_srv(s);
		return EXIT_RUNTIME;
	}
	if (pthread_create(&lt, NULL, load_thread, &L)) {
		agent_stop(s);
		http_stop(s);
		free_srv(s);
		return EXIT_RUNTIME;
	}
	sig = wait_load(s, &L, &set);
	pthread_join(lt, NULL);
	if (L.ret) {
		fprintf(stderr, "rk1828-llm: %s\n", L.err);
		agent_stop(s);
		http_stop(s);
		srv_unload(s);
		free_srv(s);
		return EXIT_RUNTIME;
	}
	if (!sig) {
		atomic_store(&s->state, SRV_READY);
		fprintf(stderr, "rk1828-llm: ready: model %s, %d session%s of %u tokens, KV %s, plan %s\n"
			"rk1828-llm: %s http://%s:%d/  (OpenAI API at /v1, metrics at /metrics)\n",
			s->model_id, s->n_slots, s->n_slots == 1 ? "" : "s", s->n_ctx,
			quant_kv_type_name(s->kv_type), s->plan,
			s->o.no_ui ? "API" : "web UI", strchr(s->o.host, ':') ? "[::]" : s->o.host,
			s->o.port);
		sig = serve_until_signal(s, &set);
	}
	shutdown_server(s, &set, sig);
	srv_unload(s);
	fprintf(stderr, "rk1828-llm: stopped\n");
	pthread_mutex_destroy(&s->lock);
	free_srv(s);
	return 0;
}
