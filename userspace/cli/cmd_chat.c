// SPDX-License-Identifier: MIT
/*
 * rk1828-llm chat -m MODEL [-s SYSTEM] [--think|--no-think] [options]
 *
 * An interactive chat in the terminal: each line read from stdin is a
 * user message; the whole conversation so far goes through the model's
 * chat template (chat.h) and the reply streams to stdout as it is
 * generated, reasoning (<think>) dimmed on a terminal. The history is
 * kept for the next turn (the engine's prefix cache, where it has one,
 * finds the earlier turns' KV). Ctrl-C stops a reply (what was generated
 * stays in the history) and, at the prompt, only clears the line; Ctrl-D
 * (end of input) quits. "/reset" starts a new conversation, "/exit" quits.
 *
 * Without -n a reply runs until an end-of-generation token or the
 * context is full. A conversation that no longer fits the context says so
 * and drops the message; /reset then starts afresh.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "engine.h"
#include "gguf.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/**
 * struct turn - one reply in progress (events come on the engine thread)
 * @mu, @cv, @done: the DONE handshake
 * @parser: splits reasoning, content (and nothing else: no tools here)
 * @tty: dim the reasoning
 * @in_reasoning: the last delta printed was reasoning
 * @finish, @error: how it ended
 */
struct turn {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done, tty, in_reasoning;
	struct chat_parser *parser;
	enum engine_finish finish;
	char error[384];
};

static void on_delta(const struct chat_delta *d, void *user)
{
	struct turn *t = user;
	bool r = d->kind == CHAT_DELTA_REASONING;

	if (d->kind != CHAT_DELTA_CONTENT && !r)
		return;
	if (t->tty && r != t->in_reasoning)
		fputs(r ? "\033[2m" : "\033[0m", stdout);
	if (!t->tty && !r && t->in_reasoning)
		fputs("\n\n", stdout);	/* reasoning, then the answer */
	t->in_reasoning = r;
	fwrite(d->text, 1, d->len, stdout);
	fflush(stdout);
}

static void on_event(const struct engine_event *ev, void *user)
{
	struct turn *t = user;

	if (ev->len)
		chat_parser_feed(t->parser, ev->text, ev->len, on_delta, t);
	if (ev->kind != ENGINE_EV_DONE)
		return;
	chat_parser_finish(t->parser, on_delta, t);
	if (t->tty && t->in_reasoning)
		fputs("\033[0m", stdout);
	pthread_mutex_lock(&t->mu);
	t->finish = ev->finish;
	if (ev->error)
		snprintf(t->error, sizeof(t->error), "%s", ev->error);
	t->done = true;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

/* Wait for DONE; Ctrl-C cancels the request (the engine then sends DONE). */
static void wait_reply(struct turn *t, struct engine_req *q)
{
	bool cancelled = false;

	pthread_mutex_lock(&t->mu);
	while (!t->done) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&t->cv, &t->mu, &ts);
		if (interrupted && !cancelled) {
			pthread_mutex_unlock(&t->mu);
			engine_cancel(q);
			cancelled = true;
			pthread_mutex_lock(&t->mu);
		}
	}
	pthread_mutex_unlock(&t->mu);
	interrupted = 0;
}

/* The conversation: messages with owned texts. */
struct history {
	struct chat_msg *m;
	int n, cap;
};

static int hist_add(struct history *h, const char *role, const char *content,
		    const char *reasoning)
{
	struct chat_msg *nm;

	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 16;
		nm = realloc(h->m, (size_t)h->cap * sizeof(*nm));
		if (!nm)
			return -1;
		h->m = nm;
	}
	h->m[h->n] = (struct chat_msg){ .role = role, .content = strdup(content),
					.reasoning = reasoning && *reasoning ? strdup(reasoning) : NULL };
	if (!h->m[h->n].content)
		return -1;
	h->n++;
	return 0;
}

static void hist_drop(struct history *h, int keep)
{
	while (h->n > keep) {
		h->n--;
		free((char *)h->m[h->n].content);
		free((char *)h->m[h->n].reasoning);
	}
}

struct chat_ctx {
	const struct args *a;
	struct session S;
	struct tokenizer *tok;
	struct engine *e;
	struct history h;
	int keep;		/* messages /reset keeps (the system message) */
	bool tty;
	unsigned long turn;
};

/* One user message: render, submit, stream, record the reply. */
static int reply(struct chat_ctx *c)
{
	struct engine_request rq = { 0 };
	struct turn t = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER,
			  .tty = c->tty };
	struct cli_prompt pr = { 0 };
	struct engine_req *q = NULL;
	char err[512];
	int ret = -1;

	cli_template(c->S.gf, c->tok, &pr.ct, false);
	if (cli_encode_chat(c->tok, c->a, c->h.m, c->h.n, &pr))
		return -1;
	if ((uint32_t)pr.n >= c->S.sizes.n_ctx) {
		fprintf(stderr, "rk1828-llm: the conversation has %d tokens, the context only %u (--ctx); /reset starts a new one\n",
			pr.n, c->S.sizes.n_ctx);
		free(pr.ids);
		return -1;
	}
	t.parser = chat_parser_new(&pr.ct, pr.in_think, NULL, c->turn++);
	if (!t.parser)
		goto out;
	rq.prompt = pr.ids;
	rq.n_prompt = pr.n;
	rq.max_tokens = c->a->n_predict_set ? c->a->n_predict : -1;
	rq.s = c->a->s;
	rq.s.seed = c->a->s.seed + c->turn;
	rq.ignore_eos = c->a->ignore_eos;
	rq.cb = on_event;
	rq.user = &t;
	if (engine_submit(c->e, &rq, &q, err, sizeof(err))) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		goto out;
	}
	wait_reply(&t, q);
	printf("\n");
	if (t.finish == ENGINE_FINISH_ERROR) {
		fprintf(stderr, "rk1828-llm: %s\n", t.error);
		goto out;
	}
	if (t.finish == ENGINE_FINISH_CANCELLED)
		fprintf(stderr, "(stopped)\n");
	else if (t.finish == ENGINE_FINISH_LENGTH && !c->a->n_predict_set)
		fprintf(stderr, "rk1828-llm: the context is full (%u tokens); /reset starts a new conversation\n",
			c->S.sizes.n_ctx);
	ret = hist_add(&c->h, "assistant", chat_parser_content(t.parser),
		       chat_parser_reasoning(t.parser));
out:
	engine_req_put(q);
	chat_parser_free(t.parser);
	free(pr.ids);
	return ret;
}

static int chat_open(struct chat_ctx *c)
{
	struct engine_opts eo;
	struct chat_template ct;
	char err[768];

	if (session_open(&c->S, c->a, false))
		return -1;
	c->tok = tok_load(c->S.gf, err, sizeof(err));
	if (!c->tok) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		return -1;
	}
	cli_template(c->S.gf, c->tok, &ct, true);
	cli_engine_opts(c->a, &c->S, &eo);
	if (engine_create(&c->e, &c->S.m, c->tok, c->S.cards, c->S.sel, c->S.n_sel, &eo, err,
			  sizeof(err))) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		return -1;
	}
	if (c->a->system && hist_add(&c->h, "system", c->a->system, NULL))
		return -1;
	c->keep = c->h.n;
	if (c->tty)
		fprintf(stderr, "chat with %s (template %s, plan %s); Ctrl-C stops a reply, Ctrl-D quits, /reset forgets\n",
			c->a->model, ct.name, c->S.plan_str);
	return 0;
}

/* Read one line; NULL at end of input. Ctrl-C at the prompt clears it. */
static char *read_line(struct chat_ctx *c, char **buf, size_t *cap)
{
	for (;;) {
		ssize_t n;

		if (c->tty) {
			fputs("> ", stdout);
			fflush(stdout);
		}
		errno = 0;
		n = getline(buf, cap, stdin);
		if (n >= 0) {
			while (n && ((*buf)[n - 1] == '\n' || (*buf)[n - 1] == '\r'))
				(*buf)[--n] = '\0';
			return *buf;
		}
		if (errno != EINTR || !interrupted)
			return NULL;
		interrupted = 0;
		clearerr(stdin);
		if (c->tty)
			fputs("\n(Ctrl-D quits)\n", stdout);
	}
}

int cmd_chat(const struct args *a)
{
	struct chat_ctx c = { .a = a, .tty = isatty(0) && isatty(1) };
	struct sigaction sa = { .sa_handler = on_sigint };	/* no SA_RESTART */
	char *line = NULL;
	size_t cap = 0;
	int rc = EXIT_RUNTIME;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	if (chat_open(&c))
		goto out;
	while (read_line(&c, &line, &cap)) {
		if (!*line)
			continue;
		if (!strcmp(line, "/exit") || !strcmp(line, "/quit"))
			break;
		if (!strcmp(line, "/reset")) {
			hist_drop(&c.h, c.keep);
			continue;
		}
		if (hist_add(&c.h, "user", line, NULL)) {
			fprintf(stderr, "rk1828-llm: out of memory\n");
			goto out;
		}
		if (reply(&c))
			hist_drop(&c.h, c.h.n - 1);	/* the message that did not fit or failed */
	}
	if (c.tty)
		putchar('\n');
	rc = 0;
out:
	free(line);
	hist_drop(&c.h, 0);
	free(c.h.m);
	engine_destroy(c.e);
	tok_free(c.tok);
	session_close(&c.S);
	return rc;
}
