// SPDX-License-Identifier: MIT
/*
 * HAProxy's agent check (`--agent-port P`, issue 25): HAProxy connects to
 * P, reads one line and closes; the line is a series of words separated
 * by spaces (HAProxy configuration manual, 5.2 "agent-check"):
 *
 *   up ready 75% maxconn:20   serving: operational state up, administrative
 *                             state ready (cancels a drain reported before),
 *                             75% of the configured weight, at most 20
 *                             requests at once (the sessions and the queue)
 *   drain                     draining (SIGUSR1): no new requests
 *   down#loading              the model is still loading
 *   fail#engine failed        the engine lost a card
 *   stopped#shutting down     stopping
 *
 * The weight falls in four steps as requests wait in the queue: 100% with
 * none waiting, then 75%, 50%, 25% and at least 10% as the queue fills a
 * quarter at a time. It takes few values on purpose: with `hash-type
 * consistent` a new weight moves keys between servers, so it changes only
 * when a server has a queue, never with each request that starts. The
 * finer share of the load is HAProxy's own (`hash-balance-factor`).
 *
 * One thread answers: poll() on the listening socket and on a pipe that
 * agent_stop() writes to; a connection gets its line and is closed at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent.h"

/**
 * struct agent - the agent-check listener
 * @s: the server it reports on
 * @lfd: the listening socket
 * @wake: a pipe; a byte on @wake[1] ends @thread
 * @thread: the thread that answers
 */
struct agent {
	struct srv *s;
	int lfd;
	int wake[2];
	pthread_t thread;
};

/* The weight in percent for @es (module comment); @queue_max: --queue. */
static int agent_weight(const struct engine_stats *es, int queue_max)
{
	int quarter;

	if (es->queued <= 0)
		return 100;
	if (queue_max <= 0 || es->queued >= queue_max)
		return 10;
	quarter = (4 * es->queued + queue_max - 1) / queue_max;	/* 1..4 */
	return quarter >= 4 ? 10 : 100 - 25 * quarter;
}

size_t agent_reply(int st, const struct engine_stats *es, int queue_max, char *buf, size_t n)
{
	int len;

	if (st == SRV_STOPPING)
		len = snprintf(buf, n, "stopped#shutting down\n");
	else if (st == SRV_DRAINING)
		len = snprintf(buf, n, "drain\n");
	else if (st == SRV_LOADING || !es)
		len = snprintf(buf, n, "down#loading\n");
	else if (es->failed)
		len = snprintf(buf, n, "fail#engine failed\n");
	else
		len = snprintf(buf, n, "up ready %d%% maxconn:%d\n", agent_weight(es, queue_max),
			       es->n_slots + (queue_max > 0 ? queue_max : 0));
	if (len < 0)
		return 0;
	return (size_t)len < n ? (size_t)len : n ? n - 1 : 0;
}

/* One connection: its line, then close (what HAProxy sent, if anything, is not read). */
static void answer(struct agent *a, int fd)
{
	struct srv *s = a->s;
	int st = atomic_load(&s->state);
	struct engine_stats es;
	char line[96];
	size_t len;

	if ((st == SRV_READY || st == SRV_DRAINING) && s->e)
		engine_get_stats(s->e, &es);
	len = agent_reply(st, (st == SRV_READY || st == SRV_DRAINING) && s->e ? &es : NULL,
			  s->o.queue_max, line, sizeof(line));
	/* A fresh socket's buffer takes a line: one non-blocking send. */
	if (send(fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && s->o.verbose)
		fprintf(stderr, "rk1828-llm: agent: send: %s\n", strerror(errno));
	shutdown(fd, SHUT_WR);
	close(fd);
}

static void *agent_thread(void *arg)
{
	struct agent *a = arg;
	struct pollfd p[2] = { { .fd = a->lfd, .events = POLLIN }, { .fd = a->wake[0], .events = POLLIN } };
	int fd;

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "rk1828-llm: agent: poll: %s: the agent check stops\n",
				strerror(errno));
			return NULL;
		}
		if (p[1].revents)
			return NULL;
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0)
			answer(a, fd);
		else if (errno == EMFILE || errno == ENFILE)
			usleep(10000);	/* out of descriptors: do not spin */
	}
}

/* The listening socket on @host:@port (port 0: any; *@port set to it), or -1 with @err. */
static int agent_listen(const char *host, int *port, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	char p[16];
	int fd, one = 1, zero = 0, ret;

	snprintf(p, sizeof(p), "%d", *port);
	ret = getaddrinfo(host, p, &hints, &ai);
	if (ret) {
		snprintf(err, errlen, "--agent-port: --host %s: %s", host, gai_strerror(ret));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6)	/* "::" serves IPv4 too, as the HTTP port */
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	}
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		snprintf(err, errlen, "cannot listen on %s port %d (--agent-port): %s", host, *port,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	*port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port :
					       ((struct sockaddr_in *)&sa)->sin_port);
	return fd;
}

int agent_start(struct srv *s, char *err, size_t errlen)
{
	struct agent *a = calloc(1, sizeof(*a));

	if (!a) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	a->s = s;
	a->lfd = agent_listen(s->o.host, &s->o.agent_port, err, errlen);
	if (a->lfd < 0) {
		free(a);
		return -1;
	}
	if (pipe2(a->wake, O_CLOEXEC)) {
		snprintf(err, errlen, "--agent-port: pipe: %s", strerror(errno));
		close(a->lfd);
		free(a);
		return -1;
	}
	if (pthread_create(&a->thread, NULL, agent_thread, a)) {
		snprintf(err, errlen, "--agent-port: cannot start its thread");
		close(a->wake[0]);
		close(a->wake[1]);
		close(a->lfd);
		free(a);
		return -1;
	}
	s->agent = a;
	fprintf(stderr, "rk1828-llm: agent check on %s port %d\n", s->o.host, s->o.agent_port);
	return 0;
}

void agent_stop(struct srv *s)
{
	struct agent *a = s->agent;
	char b = 0;

	if (!a)
		return;
	s->agent = NULL;
	while (write(a->wake[1], &b, 1) < 0 && errno == EINTR)
		;
	pthread_join(a->thread, NULL);
	close(a->wake[0]);
	close(a->wake[1]);
	close(a->lfd);
	free(a);
}
