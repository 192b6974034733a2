/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * A minimal generic netlink client for the rk1828 family
 * (Documentation/netlink/specs/rk1828.yaml, uapi/drm/rk1828_netlink.h),
 * on raw AF_NETLINK sockets, for rk1828_netlink.c: the tests build every
 * message themselves so that they can also send malformed ones. Helpers
 * return 0 or a negative errno (the kernel's error for a request) and
 * never abort.
 */
#ifndef RK1828_SELFTEST_NL_H
#define RK1828_SELFTEST_NL_H

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "drm/rk1828_netlink.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif

/** RKT_NL_BUF - receive buffer size (a dump part is at most 32 KiB) */
#define RKT_NL_BUF	(64 * 1024)
/** RKT_NL_QUEUES - hardware queues a card message describes */
#define RKT_NL_QUEUES	3

/**
 * struct rkt_nl - a generic netlink socket bound to the rk1828 family
 * @fd: the socket
 * @family: the family's id (resolved by name)
 * @events_grp: id of the "events" multicast group
 * @seq: last sequence number used
 */
struct rkt_nl {
	int fd;
	uint16_t family;
	uint32_t events_grp;
	uint32_t seq;
};

/**
 * struct rkt_nl_queue - one nested queue attribute of a card message
 *	(nests carry NLA_F_NESTED in their type: parsers mask with
 *	NLA_TYPE_MASK)
 * @present: the nest was there
 * @has_jobs: it carried the jobs-* and depth attributes (compute, copy)
 * @has_busy: it carried busy (the card reported telemetry)
 * @commands: card commands completed
 * @errors: card commands that failed
 * @submitted: jobs submitted
 * @completed: jobs completed without error
 * @failed: jobs completed with an error
 * @timedout: jobs whose command timed out
 * @depth: jobs not yet completed
 * @busy_ns: busy time the card reports
 */
struct rkt_nl_queue {
	bool present, has_jobs, has_busy;
	uint64_t commands, errors, submitted, completed, failed, timedout;
	uint32_t depth;
	uint64_t busy_ns;
};

/**
 * struct rkt_nl_card - the attributes of one card-get/card-add/card-remove
 * @cmd: genetlink command of the message
 * @seen: bit N set when attribute N (RK1828_A_CARD_*) was present
 * @index: card index
 * @minor: accel minor
 * @dev_name: transport device name
 * @serial: card serial
 * @fw: firmware version
 * @protocol: card protocol version
 * @link_type: RK1828_LINK_TYPE_*
 * @link_speed: Mbit/s
 * @mem_total: bytes
 * @mem_free: bytes
 * @contexts: open contexts
 * @state: RK1828_CARD_STATE_*
 * @resets: successful resets
 * @temp_mc: temperature, m°C
 * @temp_limit_mc: throttle temperature, m°C
 * @throttled: throttle flag
 * @power_mw: power, mW
 * @energy_uj: energy, µJ
 * @uptime_ns: card uptime
 * @q: the queue nests by queue id
 */
struct rkt_nl_card {
	uint8_t cmd;
	uint64_t seen;
	uint32_t index, minor;
	char dev_name[64];
	uint64_t serial;
	char fw[64];
	uint32_t protocol, link_type, link_speed;
	uint64_t mem_total, mem_free;
	uint32_t contexts, state;
	uint64_t resets;
	int32_t temp_mc, temp_limit_mc;
	uint8_t throttled;
	uint32_t power_mw;
	uint64_t energy_uj, uptime_ns;
	struct rkt_nl_queue q[RKT_NL_QUEUES];
};

/**
 * struct rkt_nl_event - one message of the events group
 * @cmd: RK1828_CMD_* (card-add, card-remove, reset, job-timeout,
 *	thermal-limit)
 * @seen: bit N set when RK1828_A_EVENT_N was present (reset, job-timeout,
 *	thermal-limit)
 * @index: card index
 * @reason: RK1828_RESET_REASON_*
 * @ctx: context id
 * @result: reset result
 * @resets: successful resets so far
 * @queue: RK1828_QUEUE_*
 * @timeout_ms: job timeout
 * @temp_mc: thermal-limit: the card's temperature, millidegrees Celsius
 * @temp_limit_mc: thermal-limit: its throttle limit, millidegrees Celsius
 * @throttled: thermal-limit: 1 reached the limit, 0 cooled below it
 * @card: card-add and card-remove: the card attributes
 */
struct rkt_nl_event {
	uint8_t cmd;
	uint64_t seen;
	uint32_t index, reason, ctx;
	int32_t result;
	uint64_t resets;
	uint32_t queue, timeout_ms;
	int32_t temp_mc, temp_limit_mc;
	uint8_t throttled;
	struct rkt_nl_card card;
};

/* Attribute payload helpers. */
static inline uint32_t rkt_nla_u32(const struct nlattr *a)
{
	uint32_t v = 0;

	memcpy(&v, (const char *)a + NLA_HDRLEN, sizeof(v));
	return v;
}

/* A NLA_UINT: 4 or 8 bytes. */
static inline uint64_t rkt_nla_uint(const struct nlattr *a)
{
	uint64_t v = 0;

	if (a->nla_len - NLA_HDRLEN == 8)
		memcpy(&v, (const char *)a + NLA_HDRLEN, 8);
	else
		v = rkt_nla_u32(a);
	return v;
}

static inline void rkt_nla_str(const struct nlattr *a, char *out, size_t n)
{
	size_t len = a->nla_len - NLA_HDRLEN;

	if (len >= n)
		len = n - 1;
	memcpy(out, (const char *)a + NLA_HDRLEN, len);
	out[len] = '\0';
}

#define rkt_nla_for_each(a, start, len)					\
	for (a = (struct nlattr *)(start);					\
	     (char *)(a) + NLA_HDRLEN <= (char *)(start) + (len) &&		\
	     (a)->nla_len >= NLA_HDRLEN &&					\
	     (char *)(a) + (a)->nla_len <= (char *)(start) + (len);		\
	     a = (struct nlattr *)((char *)(a) + NLA_ALIGN((a)->nla_len)))

/**
 * struct rkt_nl_msg - a request under construction
 * @buf: the message
 * @len: bytes used
 */
struct rkt_nl_msg {
	char buf[1024];
	size_t len;
};

/**
 * rkt_nl_msg_init() - start a request
 * @m: the message
 * @family: genetlink family id
 * @cmd: genetlink command
 * @flags: NLM_F_* besides NLM_F_REQUEST
 */
static inline void rkt_nl_msg_init(struct rkt_nl_msg *m, uint16_t family,
				   uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)m->buf;
	struct genlmsghdr *gh;

	memset(m, 0, sizeof(*m));
	nh->nlmsg_type = family;
	nh->nlmsg_flags = NLM_F_REQUEST | flags;
	gh = (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);
	gh->cmd = cmd;
	gh->version = 1;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
}

/**
 * rkt_nl_put() - append one attribute
 * @m: the message
 * @type: attribute type
 * @data: payload
 * @len: payload bytes
 */
static inline void rkt_nl_put(struct rkt_nl_msg *m, uint16_t type,
			      const void *data, uint16_t len)
{
	struct nlattr *a = (struct nlattr *)(m->buf + m->len);

	if (m->len + NLA_ALIGN(NLA_HDRLEN + len) > sizeof(m->buf))
		return;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	m->len += NLA_ALIGN(a->nla_len);
}

static inline void rkt_nl_put_u32(struct rkt_nl_msg *m, uint16_t type,
				  uint32_t v)
{
	rkt_nl_put(m, type, &v, sizeof(v));
}

static inline void rkt_nl_put_str(struct rkt_nl_msg *m, uint16_t type,
				  const char *s)
{
	rkt_nl_put(m, type, s, (uint16_t)(strlen(s) + 1));
}

/**
 * rkt_nl_send() - send a request (sequence number assigned here)
 * @nl: the socket
 * @m: the request
 *
 * Return: 0 or -errno.
 */
static inline int rkt_nl_send(struct rkt_nl *nl, struct rkt_nl_msg *m)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)m->buf;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	nh->nlmsg_len = (uint32_t)m->len;
	nh->nlmsg_seq = ++nl->seq;
	if (sendto(nl->fd, m->buf, m->len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0)
		return -errno;
	return 0;
}

/**
 * typedef rkt_nl_cb - called for each reply message of a request
 * @nh: the message
 * @arg: the caller's
 */
typedef void (*rkt_nl_cb)(const struct nlmsghdr *nh, void *arg);

/**
 * rkt_nl_wait_reply() - collect the replies to the last request
 * @nl: the socket
 * @cb: called per data message, may be NULL
 * @arg: passed to @cb
 * @ms: time to wait for each receive
 *
 * Ends at the ACK/error message (requests are sent with NLM_F_ACK) or at
 * NLMSG_DONE of a dump.
 *
 * Return: 0, the request's negative errno, or -ETIMEDOUT.
 */
static inline int rkt_nl_wait_reply(struct rkt_nl *nl, rkt_nl_cb cb,
				    void *arg, int ms)
{
	static __thread char buf[RKT_NL_BUF];
	struct pollfd pfd = { .fd = nl->fd, .events = POLLIN };

	for (;;) {
		struct nlmsghdr *nh;
		ssize_t n;

		if (poll(&pfd, 1, ms) != 1)
			return -ETIMEDOUT;
		n = recv(nl->fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != nl->seq)
				continue;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				return e->error;
			}
			if (nh->nlmsg_type == NLMSG_DONE) {
				int err = 0;

				/* a dump that failed part-way says so here */
				if (nh->nlmsg_len >= NLMSG_HDRLEN + sizeof(err))
					memcpy(&err, NLMSG_DATA(nh), sizeof(err));
				return err;
			}
			if (cb)
				cb(nh, arg);
		}
	}
}

/* CTRL_CMD_GETFAMILY reply: the family id and the events group id. */
static void rkt_nl_family_cb(const struct nlmsghdr *nh, void *arg)
{
	struct rkt_nl *nl = arg;
	const char *p = (const char *)NLMSG_DATA(nh) + GENL_HDRLEN;
	size_t len = nh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	struct nlattr *a, *g, *f;

	rkt_nla_for_each(a, p, len) {
		uint16_t type = a->nla_type & NLA_TYPE_MASK;

		if (type == CTRL_ATTR_FAMILY_ID)
			nl->family = (uint16_t)rkt_nla_u32(a);
		if (type != CTRL_ATTR_MCAST_GROUPS)
			continue;
		rkt_nla_for_each(g, (char *)a + NLA_HDRLEN,
				 a->nla_len - NLA_HDRLEN) {
			char name[32] = "";
			uint32_t id = 0;

			rkt_nla_for_each(f, (char *)g + NLA_HDRLEN,
					 g->nla_len - NLA_HDRLEN) {
				uint16_t ft = f->nla_type & NLA_TYPE_MASK;

				if (ft == CTRL_ATTR_MCAST_GRP_NAME)
					rkt_nla_str(f, name, sizeof(name));
				if (ft == CTRL_ATTR_MCAST_GRP_ID)
					id = rkt_nla_u32(f);
			}
			if (!strcmp(name, RK1828_MCGRP_EVENTS))
				nl->events_grp = id;
		}
	}
}

/**
 * rkt_nl_open() - open a socket and resolve the rk1828 family
 * @nl: output
 *
 * Return: 0, -ENOENT when the family is not registered, or -errno.
 */
static inline int rkt_nl_open(struct rkt_nl *nl)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct rkt_nl_msg m;
	int ret, one = 1;

	memset(nl, 0, sizeof(*nl));
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		return -errno;
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto err;
	/* extended ACKs: the error messages are shown in the logs */
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	rkt_nl_msg_init(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_ACK);
	rkt_nl_put_str(&m, CTRL_ATTR_FAMILY_NAME, RK1828_FAMILY_NAME);
	ret = rkt_nl_send(nl, &m);
	if (!ret)
		ret = rkt_nl_wait_reply(nl, rkt_nl_family_cb, nl, 5000);
	if (ret) {
		close(nl->fd);
		nl->fd = -1;
		return ret;
	}
	return nl->family ? 0 : -ENOENT;
err:
	ret = -errno;
	close(nl->fd);
	nl->fd = -1;
	return ret;
}

/**
 * rkt_nl_close() - close the socket
 * @nl: the socket (may be unopened: fd < 0 or 0)
 */
static inline void rkt_nl_close(struct rkt_nl *nl)
{
	if (nl->fd > 0)
		close(nl->fd);
	nl->fd = -1;
}

/**
 * rkt_nl_subscribe() - join the events group
 * @nl: the socket
 *
 * Return: 0 or -errno.
 */
static inline int rkt_nl_subscribe(struct rkt_nl *nl)
{
	if (setsockopt(nl->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
		       &nl->events_grp, sizeof(nl->events_grp)) < 0)
		return -errno;
	return 0;
}

static inline void rkt_nl_parse_queue(const struct nlattr *nest,
				      struct rkt_nl_card *c)
{
	struct rkt_nl_queue q = { .present = true };
	uint32_t id = UINT32_MAX;
	struct nlattr *a;

	rkt_nla_for_each(a, (char *)nest + NLA_HDRLEN,
			 nest->nla_len - NLA_HDRLEN) {
		switch (a->nla_type & NLA_TYPE_MASK) {
		case RK1828_A_QUEUE_ID:
			id = rkt_nla_u32(a);
			break;
		case RK1828_A_QUEUE_COMMANDS:
			q.commands = rkt_nla_uint(a);
			break;
		case RK1828_A_QUEUE_COMMAND_ERRORS:
			q.errors = rkt_nla_uint(a);
			break;
		case RK1828_A_QUEUE_JOBS_SUBMITTED:
			q.submitted = rkt_nla_uint(a);
			q.has_jobs = true;
			break;
		case RK1828_A_QUEUE_JOBS_COMPLETED:
			q.completed = rkt_nla_uint(a);
			break;
		case RK1828_A_QUEUE_JOBS_FAILED:
			q.failed = rkt_nla_uint(a);
			break;
		case RK1828_A_QUEUE_JOBS_TIMEDOUT:
			q.timedout = rkt_nla_uint(a);
			break;
		case RK1828_A_QUEUE_DEPTH:
			q.depth = rkt_nla_u32(a);
			break;
		case RK1828_A_QUEUE_BUSY:
			q.busy_ns = rkt_nla_uint(a);
			q.has_busy = true;
			break;
		}
	}
	if (id < RKT_NL_QUEUES)
		c->q[id] = q;
}

/**
 * rkt_nl_parse_card() - the attributes of a card message
 * @nh: a card-get, card-add or card-remove message
 * @c: output (zeroed first)
 */
static inline void rkt_nl_parse_card(const struct nlmsghdr *nh,
				     struct rkt_nl_card *c)
{
	const struct genlmsghdr *gh = NLMSG_DATA(nh);
	const char *p = (const char *)gh + GENL_HDRLEN;
	size_t len = nh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	struct nlattr *a;

	memset(c, 0, sizeof(*c));
	c->cmd = gh->cmd;
	rkt_nla_for_each(a, p, len) {
		uint16_t type = a->nla_type & NLA_TYPE_MASK;

		if (type < 64)
			c->seen |= 1ull << type;
		switch (type) {
		case RK1828_A_CARD_INDEX:
			c->index = rkt_nla_u32(a);
			break;
		case RK1828_A_CARD_ACCEL_MINOR:
			c->minor = rkt_nla_u32(a);
			break;
		case RK1828_A_CARD_DEV_NAME:
			rkt_nla_str(a, c->dev_name, sizeof(c->dev_name));
			break;
		case RK1828_A_CARD_SERIAL:
			c->serial = rkt_nla_uint(a);
			break;
		case RK1828_A_CARD_FW_VERSION:
			rkt_nla_str(a, c->fw, sizeof(c->fw));
			break;
		case RK1828_A_CARD_PROTOCOL_VERSION:
			c->protocol = rkt_nla_u32(a);
			break;
		case RK1828_A_CARD_LINK_TYPE:
			c->link_type = rkt_nla_u32(a);
			break;
		case RK1828_A_CARD_LINK_SPEED:
			c->link_speed = rkt_nla_u32(a);
			break;
		case RK1828_A_CARD_MEM_TOTAL:
			c->mem_total = rkt_nla_uint(a);
			break;
		case RK1828_A_CARD_MEM_FREE:
			c->mem_free = rkt_nla_uint(a);
			break;
		case RK1828_A_CARD_CONTEXTS:
			c->contexts = rkt_nla_u32(a);
			break;
		case RK1828_A_CARD_STATE:
			c->state = rkt_nla_u32(a);
			break;
		case RK1828_A_CARD_RESETS:
			c->resets = rkt_nla_uint(a);
			break;
		case RK1828_A_CARD_TEMPERATURE:
			c->temp_mc = (int32_t)rkt_nla_u32(a);
			break;
		case RK1828_A_CARD_TEMP_LIMIT:
			c->temp_limit_mc = (int32_t)rkt_nla_u32(a);
			break;
		case RK1828_A_CARD_THROTTLED:
			c->throttled = *((const uint8_t *)a + NLA_HDRLEN);
			break;
		case RK1828_A_CARD_POWER:
			c->power_mw = rkt_nla_u32(a);
			break;
		case RK1828_A_CARD_ENERGY:
			c->energy_uj = rkt_nla_uint(a);
			break;
		case RK1828_A_CARD_UPTIME:
			c->uptime_ns = rkt_nla_uint(a);
			break;
		case RK1828_A_CARD_QUEUE:
			rkt_nl_parse_queue(a, c);
			break;
		}
	}
}

/**
 * struct rkt_nl_cards - the result of a card-get dump
 * @n: cards
 * @c: the cards, in dump order
 */
struct rkt_nl_cards {
	int n;
	struct rkt_nl_card c[16];
};

static void rkt_nl_cards_cb(const struct nlmsghdr *nh, void *arg)
{
	struct rkt_nl_cards *cs = arg;

	if (cs->n < 16)
		rkt_nl_parse_card(nh, &cs->c[cs->n++]);
}

/**
 * rkt_nl_dump() - card-get dump
 * @nl: the socket
 * @cs: output
 *
 * Return: 0 or the dump's negative errno.
 */
static inline int rkt_nl_dump(struct rkt_nl *nl, struct rkt_nl_cards *cs)
{
	struct rkt_nl_msg m;
	int ret;

	cs->n = 0;
	rkt_nl_msg_init(&m, nl->family, RK1828_CMD_CARD_GET,
			NLM_F_DUMP | NLM_F_ACK);
	ret = rkt_nl_send(nl, &m);
	return ret ? ret : rkt_nl_wait_reply(nl, rkt_nl_cards_cb, cs, 30000);
}

/**
 * rkt_nl_get() - card-get of one card
 * @nl: the socket
 * @index: card index
 * @c: output
 *
 * Return: 0, -ENODEV for an index without card, or -errno.
 */
static inline int rkt_nl_get(struct rkt_nl *nl, uint32_t index,
			     struct rkt_nl_card *c)
{
	struct rkt_nl_cards cs = { 0 };
	struct rkt_nl_msg m;
	int ret;

	rkt_nl_msg_init(&m, nl->family, RK1828_CMD_CARD_GET, NLM_F_ACK);
	rkt_nl_put_u32(&m, RK1828_A_CARD_INDEX, index);
	ret = rkt_nl_send(nl, &m);
	if (!ret)
		ret = rkt_nl_wait_reply(nl, rkt_nl_cards_cb, &cs, 30000);
	if (!ret && cs.n != 1)
		ret = -EPROTO;
	if (!ret)
		*c = cs.c[0];
	return ret;
}

/**
 * rkt_nl_reset() - card-reset
 * @nl: the socket
 * @index: card index
 *
 * Return: 0, -EPERM without CAP_NET_ADMIN, -ENODEV, or the reset's errno.
 */
static inline int rkt_nl_reset(struct rkt_nl *nl, uint32_t index)
{
	struct rkt_nl_msg m;
	int ret;

	rkt_nl_msg_init(&m, nl->family, RK1828_CMD_CARD_RESET, NLM_F_ACK);
	rkt_nl_put_u32(&m, RK1828_A_CARD_INDEX, index);
	ret = rkt_nl_send(nl, &m);
	return ret ? ret : rkt_nl_wait_reply(nl, NULL, NULL, 30000);
}

/**
 * rkt_nl_event() - wait for the next event
 * @nl: a subscribed socket
 * @ev: output
 * @ms: timeout
 *
 * Return: 0, -ETIMEDOUT, or -errno (-ENOBUFS when events were lost).
 */
static inline int rkt_nl_event(struct rkt_nl *nl, struct rkt_nl_event *ev,
			       int ms)
{
	static __thread char buf[RKT_NL_BUF];
	struct pollfd pfd = { .fd = nl->fd, .events = POLLIN };
	const struct genlmsghdr *gh;
	struct nlmsghdr *nh;
	struct nlattr *a;
	size_t len;
	ssize_t n;

	if (poll(&pfd, 1, ms) != 1)
		return -ETIMEDOUT;
	/* one event per datagram */
	n = recv(nl->fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	nh = (struct nlmsghdr *)buf;
	if (!NLMSG_OK(nh, (size_t)n) || nh->nlmsg_type != nl->family)
		return -EPROTO;
	memset(ev, 0, sizeof(*ev));
	gh = NLMSG_DATA(nh);
	ev->cmd = gh->cmd;
	if (ev->cmd == RK1828_CMD_CARD_ADD || ev->cmd == RK1828_CMD_CARD_REMOVE) {
		rkt_nl_parse_card(nh, &ev->card);
		ev->index = ev->card.index;
		return 0;
	}
	len = nh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	rkt_nla_for_each(a, (const char *)gh + GENL_HDRLEN, len) {
		uint16_t type = a->nla_type & NLA_TYPE_MASK;

		if (type < 64)
			ev->seen |= 1ull << type;
		switch (type) {
		case RK1828_A_EVENT_INDEX:
			ev->index = rkt_nla_u32(a);
			break;
		case RK1828_A_EVENT_REASON:
			ev->reason = rkt_nla_u32(a);
			break;
		case RK1828_A_EVENT_CTX:
			ev->ctx = rkt_nla_u32(a);
			break;
		case RK1828_A_EVENT_RESULT:
			ev->result = (int32_t)rkt_nla_u32(a);
			break;
		case RK1828_A_EVENT_RESETS:
			ev->resets = rkt_nla_uint(a);
			break;
		case RK1828_A_EVENT_QUEUE:
			ev->queue = rkt_nla_u32(a);
			break;
		case RK1828_A_EVENT_TIMEOUT_MS:
			ev->timeout_ms = rkt_nla_u32(a);
			break;
		case RK1828_A_EVENT_TEMPERATURE:
			ev->temp_mc = (int32_t)rkt_nla_u32(a);
			break;
		case RK1828_A_EVENT_TEMP_LIMIT:
			ev->temp_limit_mc = (int32_t)rkt_nla_u32(a);
			break;
		case RK1828_A_EVENT_THROTTLED:
			ev->throttled = *((const uint8_t *)a + NLA_HDRLEN);
			break;
		}
	}
	return 0;
}

#endif /* RK1828_SELFTEST_NL_H */
