// SPDX-License-Identifier: MIT
/*
 * The rk1828 generic netlink family from userspace, on libnl-genl-3
 * (https://www.infradead.org/~tgr/libnl/doc/core.html): resolve the
 * family and its "events" group through the generic netlink controller,
 * send card-get (do and dump) and card-reset, receive events (and follow
 * the family through a reload of the driver: nlctrl's "notify" group says
 * when it goes and when it is back, with the new events group's id).
 *
 * Every request has its own callback set: replies go to the parser, the
 * kernel's error (with its extended-ack message, NETLINK_EXT_ACK) is kept
 * as a negative errno rather than libnl's own error codes, so callers
 * can tell "no such card" (ENODEV) from "not allowed" (EPERM).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/family.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/socket.h>

#include "drm/rk1828_netlink.h"
#include "smi.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* Events parsed from one datagram and not yet handed out. */
#define SMI_EVQ	16

struct smi {
	struct nl_sock *sk;
	int family;
	unsigned int version;
	bool joined;		/* member of the family's events group */
	struct smi_event evq[SMI_EVQ];
	int evq_head, evq_len;
};

static __thread char err_msg[512];

const char *smi_error(void)
{
	return err_msg;
}

void smi_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err_msg, sizeof(err_msg), fmt, ap);
	va_end(ap);
}

/* libnl's error codes as errno (for failures libnl itself reports). */
static int nlerr_errno(int nlerr)
{
	switch (-nlerr) {
	case NLE_PERM:		return -EPERM;
	case NLE_NOMEM:		return -ENOBUFS;
	case NLE_OBJ_NOTFOUND:	return -ENOENT;
	case NLE_INTR:		return -EINTR;
	case NLE_AGAIN:		return -EAGAIN;
	case NLE_NODEV:		return -ENODEV;
	case NLE_INVAL:		return -EINVAL;
	default:		return -EIO;
	}
}

int smi_open(struct smi **out)
{
	struct genl_family *fam;
	struct nl_cache *cache;
	struct smi *s;
	int one = 1, err;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->sk = nl_socket_alloc();
	if (!s->sk) {
		free(s);
		return -ENOMEM;
	}
	err = genl_connect(s->sk);
	if (err) {
		smi_set_error("generic netlink socket: %s", nl_geterror(err));
		err = nlerr_errno(err);
		goto fail;
	}
	nl_socket_enable_msg_peek(s->sk);
	setsockopt(nl_socket_get_fd(s->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	err = genl_ctrl_alloc_cache(s->sk, &cache);
	if (err) {
		smi_set_error("generic netlink families: %s", nl_geterror(err));
		err = nlerr_errno(err);
		goto fail;
	}
	fam = genl_ctrl_search_by_name(cache, RK1828_FAMILY_NAME);
	if (!fam) {
		nl_cache_free(cache);
		smi_set_error("generic netlink family '%s' not found", RK1828_FAMILY_NAME);
		err = -ENOENT;
		goto fail;
	}
	s->family = genl_family_get_id(fam);
	s->version = genl_family_get_version(fam);
	genl_family_put(fam);
	nl_cache_free(cache);
	*out = s;
	return 0;
fail:
	nl_socket_free(s->sk);
	free(s);
	return err;
}

void smi_close(struct smi *s)
{
	if (!s)
		return;
	nl_socket_free(s->sk);
	free(s);
}

unsigned int smi_family_version(const struct smi *s)
{
	return s->version;
}

/* One request in flight: what its callbacks collect. */
struct req {
	const char *what;		/* for messages: "card-get dump", ... */
	bool done;
	int err;			/* 0 or the kernel's negative errno */
	struct smi_card *cards;		/* replies (card-get) */
	int n, cap;
};

/* The NLMSGERR_ATTR_MSG text of an error with extended ack, or NULL. */
static const char *extack_msg(const struct nlmsgerr *e)
{
	const struct nlmsghdr *h = (const void *)((const char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off = sizeof(*e);
	int len;

	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return NULL;
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	len = (int)h->nlmsg_len - NLMSG_HDRLEN - (int)off;
	if (len <= 0 || nla_parse(tb, NLMSGERR_ATTR_MAX,
				  (struct nlattr *)((char *)e + off), len, NULL) < 0)
		return NULL;
	if (!tb[NLMSGERR_ATTR_MSG] || nla_len(tb[NLMSGERR_ATTR_MSG]) < 1)
		return NULL;
	return nla_data(tb[NLMSGERR_ATTR_MSG]);
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct req *r = arg;
	const char *msg = extack_msg(e);

	r->err = e->error < 0 ? e->error : -EIO;
	r->done = true;
	if (msg && *msg)
		smi_set_error("%s: %s (%s)", r->what, msg, strerror(-r->err));
	else
		smi_set_error("%s: %s", r->what, strerror(-r->err));
	return NL_STOP;
}

static int on_done(struct nl_msg *msg, void *arg)
{
	struct req *r = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);

	/* A dump that failed part-way ends with NLMSG_DONE carrying the errno. */
	if (h->nlmsg_type == NLMSG_DONE && nlmsg_datalen(h) >= (int)sizeof(int) &&
	    *(int *)nlmsg_data(h) < 0) {
		r->err = *(int *)nlmsg_data(h);
		smi_set_error("%s: %s", r->what, strerror(-r->err));
	}
	r->done = true;
	return NL_STOP;
}

static int on_card(struct nl_msg *msg, void *arg)
{
	struct req *r = arg;
	struct smi_card *c;
	int err;

	if (r->n == r->cap) {
		int cap = r->cap ? 2 * r->cap : 8;

		c = realloc(r->cards, cap * sizeof(*c));
		if (!c) {
			r->err = -ENOMEM;
			return NL_STOP;
		}
		r->cards = c;
		r->cap = cap;
	}
	err = smi_parse_card(nlmsg_hdr(msg), &r->cards[r->n]);
	if (err) {
		r->err = err;
		smi_set_error("%s: malformed card message from the kernel", r->what);
		return NL_SKIP;
	}
	r->n++;
	return NL_OK;
}

/*
 * request() - send @cmd (with the card index when @index >= 0, as a dump
 * when @dump) and collect the replies into @r until the kernel's ack,
 * error or the end of the dump.
 */
static int request(struct smi *s, uint8_t cmd, bool dump, int64_t index, struct req *r)
{
	struct nl_msg *m = nlmsg_alloc();
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int err = -ENOMEM;

	if (!m || !cb)
		goto out;
	if (!genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, s->family, 0,
			 dump ? NLM_F_DUMP : 0, cmd, RK1828_FAMILY_VERSION) ||
	    (index >= 0 && nla_put_u32(m, RK1828_A_CARD_INDEX, (uint32_t)index) < 0))
		goto out;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_card, r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_done, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_done, r);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, r);
	err = nl_send_auto(s->sk, m);
	if (err < 0) {
		smi_set_error("%s: send: %s", r->what, nl_geterror(err));
		err = nlerr_errno(err);
		goto out;
	}
	err = 0;
	while (!r->done) {
		int ret = nl_recvmsgs(s->sk, cb);

		if (ret < 0 && !r->done) {
			smi_set_error("%s: receive: %s", r->what, nl_geterror(ret));
			err = nlerr_errno(ret);
			break;
		}
	}
	if (!err)
		err = r->err;
out:
	nl_cb_put(cb);
	nlmsg_free(m);
	return err;
}

int smi_dump(struct smi *s, struct smi_card **cards, int *n)
{
	struct req r = { .what = "card-get dump" };
	int err = request(s, RK1828_CMD_CARD_GET, true, -1, &r);

	if (err) {
		free(r.cards);
		*cards = NULL;
		*n = 0;
		return err;
	}
	*cards = r.cards;
	*n = r.n;
	return 0;
}

int smi_get(struct smi *s, uint32_t index, struct smi_card *card)
{
	char what[48];
	struct req r = { .what = what };
	int err;

	snprintf(what, sizeof(what), "card-get of card %u", index);
	err = request(s, RK1828_CMD_CARD_GET, false, index, &r);
	if (!err && r.n != 1) {
		smi_set_error("%s: the kernel sent %d cards", what, r.n);
		err = -EBADMSG;
	}
	if (!err)
		*card = r.cards[0];
	free(r.cards);
	return err;
}

int smi_reset(struct smi *s, uint32_t index)
{
	char what[48];
	struct req r = { .what = what };

	snprintf(what, sizeof(what), "card-reset of card %u", index);
	return request(s, RK1828_CMD_CARD_RESET, false, index, &r);
}

int smi_subscribe(struct smi *s)
{
	int grp = genl_ctrl_resolve_grp(s->sk, RK1828_FAMILY_NAME, RK1828_MCGRP_EVENTS);
	int err;

	if (grp < 0) {
		smi_set_error("multicast group '%s' of family '%s': %s", RK1828_MCGRP_EVENTS,
			      RK1828_FAMILY_NAME, nl_geterror(grp));
		return nlerr_errno(grp);
	}
	nl_socket_disable_seq_check(s->sk);
	err = nl_socket_add_membership(s->sk, grp);
	if (err) {
		smi_set_error("join group '%s': %s", RK1828_MCGRP_EVENTS, nl_geterror(err));
		return nlerr_errno(err);
	}
	s->joined = true;
	/* Without nlctrl's notifications a reload is not followed; no error. */
	grp = genl_ctrl_resolve_grp(s->sk, "nlctrl", "notify");
	if (grp >= 0)
		nl_socket_add_membership(s->sk, grp);
	return 0;
}

/* Events are not answers: they carry sequence number 0. */
static int no_seq_check(struct nl_msg *msg, void *arg)
{
	return NL_OK;
}

/* The next free slot of the event queue, zeroed with its time set; NULL when full. */
static struct smi_event *evq_slot(struct smi *s)
{
	struct smi_event *ev;
	struct timespec ts;

	if (s->evq_len == SMI_EVQ)
		return NULL;
	ev = &s->evq[(s->evq_head + s->evq_len) % SMI_EVQ];
	memset(ev, 0, sizeof(*ev));
	clock_gettime(CLOCK_REALTIME, &ts);
	ev->time_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return ev;
}

/*
 * A controller notification: the family went (rmmod) or came back
 * (insmod); in the latter case join its new events group at once, so that
 * the card-add events of the reloaded driver's cards are not missed.
 */
static void on_ctrl(struct smi *s, const struct nlmsghdr *h)
{
	struct smi_event *ev;
	struct smi_ctrl c;

	if (smi_parse_ctrl(h, &c))
		return;
	if (c.gone) {
		if (!s->joined)
			return;
		s->joined = false;
		ev = evq_slot(s);
		if (ev) {
			ev->kind = SMI_EV_DRIVER_GONE;
			s->evq_len++;
		}
		return;
	}
	if (c.family)
		s->family = c.family;
	if (c.version)
		s->version = c.version;
	if (s->joined || !c.events_grp)
		return;
	if (nl_socket_add_membership(s->sk, (int)c.events_grp))
		return;
	s->joined = true;
	ev = evq_slot(s);
	if (ev) {
		ev->kind = SMI_EV_DRIVER_BACK;
		ev->resets = s->version;
		s->evq_len++;
	}
}

static int on_event(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct smi *s = arg;
	struct smi_event *ev;

	if (h->nlmsg_type == GENL_ID_CTRL) {
		on_ctrl(s, h);
		return NL_OK;
	}
	if (h->nlmsg_type != s->family)
		return NL_SKIP;
	ev = evq_slot(s);
	if (!ev)
		return NL_SKIP;
	if (smi_parse_event(h, ev) == 0)
		s->evq_len++;
	return NL_OK;
}

int smi_next_event(struct smi *s, struct smi_event *ev, int timeout_ms)
{
	struct pollfd p = { .fd = nl_socket_get_fd(s->sk), .events = POLLIN };
	struct nl_cb *cb;
	int ret;

	while (!s->evq_len) {
		ret = poll(&p, 1, timeout_ms);
		if (ret < 0)
			return -errno;
		if (ret == 0)
			return 0;
		cb = nl_cb_alloc(NL_CB_DEFAULT);
		if (!cb)
			return -ENOMEM;
		nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_event, s);
		nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, no_seq_check, NULL);
		ret = nl_recvmsgs(s->sk, cb);
		nl_cb_put(cb);
		if (ret < 0) {
			smi_set_error("events: receive: %s", nl_geterror(ret));
			return nlerr_errno(ret);
		}
	}
	*ev = s->evq[s->evq_head];
	s->evq_head = (s->evq_head + 1) % SMI_EVQ;
	s->evq_len--;
	return 1;
}
