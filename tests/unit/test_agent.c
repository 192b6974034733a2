// SPDX-License-Identifier: MIT
/*
 * HAProxy's agent check (userspace/server/agent.c): the line answered in
 * each server state, the weight's steps as the queue fills (4 sessions,
 * --queue 16), and a real listener on 127.0.0.1 (port 0) answering one
 * line per connection and closing it. Output: TAP.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent.h"

#include "tap.h"

static void test_reply(void)
{
	static const struct {
		int state, queued;
		bool failed;
		const char *line;
	} c[] = {
		{ SRV_LOADING, 0, false, "down#loading\n" },
		{ SRV_READY, 0, false, "up ready 100% maxconn:20\n" },
		{ SRV_READY, 1, false, "up ready 75% maxconn:20\n" },
		{ SRV_READY, 4, false, "up ready 75% maxconn:20\n" },
		{ SRV_READY, 5, false, "up ready 50% maxconn:20\n" },
		{ SRV_READY, 8, false, "up ready 50% maxconn:20\n" },
		{ SRV_READY, 12, false, "up ready 25% maxconn:20\n" },
		{ SRV_READY, 13, false, "up ready 10% maxconn:20\n" },
		{ SRV_READY, 16, false, "up ready 10% maxconn:20\n" },
		{ SRV_READY, 0, true, "fail#engine failed\n" },
		{ SRV_DRAINING, 3, false, "drain\n" },
		{ SRV_STOPPING, 0, false, "stopped#shutting down\n" },
	};
	struct engine_stats es;
	char buf[96];
	size_t i, n;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memset(&es, 0, sizeof(es));
		es.n_slots = 4;
		es.active = 4;
		es.queued = c[i].queued;
		es.failed = c[i].failed;
		n = agent_reply(c[i].state, c[i].state == SRV_LOADING ? NULL : &es, 16, buf,
				sizeof(buf));
		tap_ok(n == strlen(c[i].line) && !strcmp(buf, c[i].line),
		       "state %d, %d queued of 16%s: \"%.*s\" (got \"%.*s\")", c[i].state,
		       c[i].queued, c[i].failed ? ", engine failed" : "",
		       (int)strlen(c[i].line) - 1, c[i].line, (int)(n ? n - 1 : 0), buf);
	}
	memset(&es, 0, sizeof(es));
	es.n_slots = 2;
	es.queued = 0;
	n = agent_reply(SRV_READY, &es, 0, buf, sizeof(buf));
	tap_ok(!strcmp(buf, "up ready 100% maxconn:2\n") && n == 24,
	       "--queue 0: maxconn is the sessions alone (got \"%.*s\")", (int)(n ? n - 1 : 0), buf);
	n = agent_reply(SRV_READY, &es, 16, buf, 8);
	tap_ok(n == 7 && !strcmp(buf, "up read"), "a short buffer: truncated, NUL-terminated (%zu)", n);
}

/* Connect to 127.0.0.1:@port and read to the end into @buf; the bytes, or -1. */
static ssize_t fetch_line(int port, char *buf, size_t n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ssize_t got = 0, r;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((size_t)got < n - 1 && (r = read(fd, buf + got, n - 1 - got)) > 0)
		got += r;
	buf[got] = 0;
	close(fd);
	return got;
}

static void test_listener(void)
{
	static struct srv s;
	char err[256] = "", buf[128];
	ssize_t n;
	int ret;

	s.o.host = "127.0.0.1";
	s.o.agent_port = 0;
	s.o.queue_max = 16;
	atomic_store(&s.state, SRV_LOADING);
	ret = agent_start(&s, err, sizeof(err));
	if (!tap_ok(!ret && s.agent && s.o.agent_port > 0,
		    "agent_start() on 127.0.0.1 port 0 listens on a port (%d) %s", s.o.agent_port, err))
		return;
	{
		static struct srv t;

		t.o.host = "127.0.0.1";
		t.o.agent_port = s.o.agent_port;
		tap_ok(agent_start(&t, err, sizeof(err)) && !t.agent &&
		       strstr(err, "Address already in use") && strstr(err, "--agent-port"),
		       "a second agent on the busy port fails naming the option and the cause (%s)", err);
	}
	n = fetch_line(s.o.agent_port, buf, sizeof(buf));
	tap_ok(n == 13 && !strcmp(buf, "down#loading\n"),
	       "a connection while loading reads \"down#loading\\n\" and then the end (%zd bytes)", n);
	atomic_store(&s.state, SRV_STOPPING);
	n = fetch_line(s.o.agent_port, buf, sizeof(buf));
	tap_ok(n == 22 && !strcmp(buf, "stopped#shutting down\n"),
	       "a second connection reads the new state (%zd bytes)", n);
	atomic_store(&s.state, SRV_DRAINING);
	n = fetch_line(s.o.agent_port, buf, sizeof(buf));
	tap_ok(n == 6 && !strcmp(buf, "drain\n"),
	       "draining without an engine snapshot is still \"drain\" (%zd bytes)", n);
	agent_stop(&s);
	tap_ok(!s.agent && fetch_line(s.o.agent_port, buf, sizeof(buf)) < 0,
	       "after agent_stop() the port refuses connections");
	agent_stop(&s);	/* idempotent: a second call must not touch the freed agent */
}

int main(void)
{
	test_reply();
	test_listener();
	return tap_done();
}
