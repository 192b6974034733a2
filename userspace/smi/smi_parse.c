// SPDX-License-Identifier: MIT
/*
 * Card and event messages of the generic netlink family "rk1828" into
 * struct smi_card / struct smi_event. Each attribute is checked against
 * its type in Documentation/netlink/specs/rk1828.yaml: u8, u32 and s32
 * exactly their size, "uint" 4 or 8 bytes (the kernel's nla_put_uint()
 * sends the smaller when the value fits), strings NUL-terminated; an
 * attribute type above what drm/rk1828_netlink.h knows is skipped so that
 * a newer driver still parses. Also the generic netlink controller's
 * notifications about the family (registered, unregistered: the driver
 * was loaded or unloaded), which rk1828-smi events follows.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "drm/rk1828_netlink.h"
#include "smi.h"

/* The spec's attribute types. */
enum ty { T_U8, T_U32, T_S32, T_UINT, T_STR };

/*
 * get() - check attribute @a against type @t and store it in @dst: a
 * uint64_t for T_UINT, a uint32_t (or int32_t) for T_U32/T_S32, a bool
 * for T_U8, a char[@size] for T_STR (truncated to fit).
 */
static int get(const struct nlattr *a, enum ty t, void *dst, size_t size)
{
	int len = nla_len(a);

	switch (t) {
	case T_U8:
		if (len != 1)
			return -EBADMSG;
		*(bool *)dst = nla_get_u8(a) != 0;
		return 0;
	case T_U32:
	case T_S32:
		if (len != 4)
			return -EBADMSG;
		*(uint32_t *)dst = nla_get_u32(a);
		return 0;
	case T_UINT:
		if (len == 4)
			*(uint64_t *)dst = nla_get_u32(a);
		else if (len == 8)
			*(uint64_t *)dst = nla_get_u64(a);
		else
			return -EBADMSG;
		return 0;
	case T_STR:
		if (len < 1 || ((const char *)nla_data(a))[len - 1] != '\0')
			return -EBADMSG;
		snprintf(dst, size, "%s", (const char *)nla_data(a));
		return 0;
	}
	return -EBADMSG;
}

#define GET(a, t, field) get(a, t, &(field), sizeof(field))

static int parse_queue(const struct nlattr *nest, struct smi_card *c)
{
	struct smi_queue q = { .present = true };
	const struct nlattr *a;
	uint32_t id = UINT32_MAX;
	int rem, err = 0;

	nla_for_each_nested(a, nest, rem) {
		switch (nla_type(a)) {
		case RK1828_A_QUEUE_ID:
			err = GET(a, T_U32, id);
			break;
		case RK1828_A_QUEUE_COMMANDS:
			err = GET(a, T_UINT, q.commands);
			break;
		case RK1828_A_QUEUE_COMMAND_ERRORS:
			err = GET(a, T_UINT, q.command_errors);
			break;
		case RK1828_A_QUEUE_JOBS_SUBMITTED:
			q.has_jobs = true;
			err = GET(a, T_UINT, q.jobs_submitted);
			break;
		case RK1828_A_QUEUE_JOBS_COMPLETED:
			err = GET(a, T_UINT, q.jobs_completed);
			break;
		case RK1828_A_QUEUE_JOBS_FAILED:
			err = GET(a, T_UINT, q.jobs_failed);
			break;
		case RK1828_A_QUEUE_JOBS_TIMEDOUT:
			err = GET(a, T_UINT, q.jobs_timedout);
			break;
		case RK1828_A_QUEUE_DEPTH:
			err = GET(a, T_U32, q.depth);
			break;
		case RK1828_A_QUEUE_BUSY:
			q.has_busy = true;
			err = GET(a, T_UINT, q.busy_ns);
			break;
		}
		if (err)
			return err;
	}
	if (id >= SMI_NUM_QUEUES)
		return -EBADMSG;
	c->queue[id] = q;
	return 0;
}

/* One attribute of set "card" into @c. */
static int card_attr(const struct nlattr *a, struct smi_card *c, bool *has_index)
{
	switch (nla_type(a)) {
	case RK1828_A_CARD_INDEX:
		*has_index = true;
		return GET(a, T_U32, c->index);
	case RK1828_A_CARD_ACCEL_MINOR:
		return GET(a, T_U32, c->accel_minor);
	case RK1828_A_CARD_DEV_NAME:
		return GET(a, T_STR, c->dev_name);
	case RK1828_A_CARD_SERIAL:
		return GET(a, T_UINT, c->serial);
	case RK1828_A_CARD_FW_VERSION:
		c->has |= SMI_HAS_STATE;
		return GET(a, T_STR, c->fw_version);
	case RK1828_A_CARD_PROTOCOL_VERSION:
		return GET(a, T_U32, c->protocol_version);
	case RK1828_A_CARD_LINK_TYPE:
		return GET(a, T_U32, c->link_type);
	case RK1828_A_CARD_LINK_SPEED:
		return GET(a, T_U32, c->link_speed_mbps);
	case RK1828_A_CARD_MEM_TOTAL:
		c->has |= SMI_HAS_STATE;
		return GET(a, T_UINT, c->mem_total);
	case RK1828_A_CARD_MEM_FREE:
		return GET(a, T_UINT, c->mem_free);
	case RK1828_A_CARD_CONTEXTS:
		return GET(a, T_U32, c->contexts);
	case RK1828_A_CARD_STATE: {
		uint32_t st = 0;
		int err = GET(a, T_U32, st);

		c->dead = st == RK1828_CARD_STATE_DEAD;
		return err;
	}
	case RK1828_A_CARD_RESETS:
		return GET(a, T_UINT, c->resets);
	case RK1828_A_CARD_P2P_WINDOW:
		return GET(a, T_UINT, c->p2p_window);
	case RK1828_A_CARD_P2P_BYTES:
		return GET(a, T_UINT, c->p2p_bytes);
	case RK1828_A_CARD_BOUNCE_BYTES:
		return GET(a, T_UINT, c->bounce_bytes);
	case RK1828_A_CARD_TEMPERATURE:
		c->has |= SMI_HAS_THERMAL;
		return GET(a, T_S32, c->temp_mc);
	case RK1828_A_CARD_TEMP_LIMIT:
		return GET(a, T_S32, c->temp_limit_mc);
	case RK1828_A_CARD_THROTTLED:
		return GET(a, T_U8, c->throttled);
	case RK1828_A_CARD_POWER:
		return GET(a, T_U32, c->power_mw);
	case RK1828_A_CARD_ENERGY:
		return GET(a, T_UINT, c->energy_uj);
	case RK1828_A_CARD_UPTIME:
		c->has |= SMI_HAS_UPTIME;
		return GET(a, T_UINT, c->uptime_ns);
	case RK1828_A_CARD_QUEUE:
		return parse_queue(a, c);
	}
	return 0;	/* newer than this header */
}

int smi_parse_card(const struct nlmsghdr *nlh, struct smi_card *card)
{
	struct nlmsghdr *h = (struct nlmsghdr *)nlh;
	const struct nlattr *a;
	bool has_index = false;
	int rem, err;

	memset(card, 0, sizeof(*card));
	if (!genlmsg_valid_hdr(h, 0))
		return -EBADMSG;
	nla_for_each_attr(a, genlmsg_attrdata(nlmsg_data(h), 0),
			  genlmsg_attrlen(nlmsg_data(h), 0), rem) {
		err = card_attr(a, card, &has_index);
		if (err)
			return err;
	}
	return has_index ? 0 : -EBADMSG;
}

static int event_attr(const struct nlattr *a, struct smi_event *ev, bool *has_index)
{
	switch (nla_type(a)) {
	case RK1828_A_EVENT_INDEX:
		*has_index = true;
		return GET(a, T_U32, ev->index);
	case RK1828_A_EVENT_REASON:
		return GET(a, T_U32, ev->reason);
	case RK1828_A_EVENT_CTX:
		ev->has_ctx = true;
		return GET(a, T_U32, ev->ctx);
	case RK1828_A_EVENT_RESULT:
		return GET(a, T_S32, ev->result);
	case RK1828_A_EVENT_RESETS:
		return GET(a, T_UINT, ev->resets);
	case RK1828_A_EVENT_QUEUE:
		return GET(a, T_U32, ev->queue);
	case RK1828_A_EVENT_TIMEOUT_MS:
		return GET(a, T_U32, ev->timeout_ms);
	case RK1828_A_EVENT_TEMPERATURE:
		return GET(a, T_S32, ev->temp_mc);
	case RK1828_A_EVENT_TEMP_LIMIT:
		return GET(a, T_S32, ev->temp_limit_mc);
	case RK1828_A_EVENT_THROTTLED:
		return GET(a, T_U8, ev->throttled);
	}
	return 0;
}

int smi_parse_event(const struct nlmsghdr *nlh, struct smi_event *ev)
{
	struct nlmsghdr *h = (struct nlmsghdr *)nlh;
	int64_t t = ev->time_ns;
	const struct nlattr *a;
	bool has_index = false;
	int rem, err;

	memset(ev, 0, sizeof(*ev));
	ev->time_ns = t;
	if (!genlmsg_valid_hdr(h, 0))
		return -EBADMSG;
	switch (((struct genlmsghdr *)nlmsg_data(h))->cmd) {
	case RK1828_CMD_CARD_ADD:
	case RK1828_CMD_CARD_REMOVE:
		ev->kind = ((struct genlmsghdr *)nlmsg_data(h))->cmd == RK1828_CMD_CARD_ADD ?
			   SMI_EV_CARD_ADD : SMI_EV_CARD_REMOVE;
		err = smi_parse_card(nlh, &ev->card);
		ev->index = ev->card.index;
		return err;
	case RK1828_CMD_RESET:
		ev->kind = SMI_EV_RESET;
		break;
	case RK1828_CMD_JOB_TIMEOUT:
		ev->kind = SMI_EV_JOB_TIMEOUT;
		break;
	case RK1828_CMD_THERMAL_LIMIT:
		ev->kind = SMI_EV_THERMAL_LIMIT;
		break;
	default:
		return -ENOMSG;
	}
	nla_for_each_attr(a, genlmsg_attrdata(nlmsg_data(h), 0),
			  genlmsg_attrlen(nlmsg_data(h), 0), rem) {
		err = event_attr(a, ev, &has_index);
		if (err)
			return err;
	}
	return has_index ? 0 : -EBADMSG;
}

/* The "events" group's id in a CTRL_ATTR_MCAST_GROUPS nest, or 0. */
static uint32_t ctrl_events_group(const struct nlattr *groups)
{
	const struct nlattr *g, *a;
	int rem, rem2;

	nla_for_each_nested(g, groups, rem) {
		const char *name = NULL;
		uint32_t id = 0;

		nla_for_each_nested(a, g, rem2) {
			if (nla_type(a) == CTRL_ATTR_MCAST_GRP_NAME && nla_len(a) > 0 &&
			    memchr(nla_data(a), '\0', nla_len(a)))
				name = nla_data(a);
			else if (nla_type(a) == CTRL_ATTR_MCAST_GRP_ID && nla_len(a) == 4)
				id = nla_get_u32((struct nlattr *)a);
		}
		if (name && !strcmp(name, RK1828_MCGRP_EVENTS))
			return id;
	}
	return 0;
}

int smi_parse_ctrl(const struct nlmsghdr *nlh, struct smi_ctrl *ctrl)
{
	struct nlmsghdr *h = (struct nlmsghdr *)nlh;
	const struct genlmsghdr *gh;
	const struct nlattr *a;
	bool ours = false;
	int rem;

	memset(ctrl, 0, sizeof(*ctrl));
	if (!genlmsg_valid_hdr(h, 0))
		return -EBADMSG;
	gh = nlmsg_data(h);
	switch (gh->cmd) {
	case CTRL_CMD_NEWFAMILY:
	case CTRL_CMD_DELFAMILY:
	case CTRL_CMD_NEWMCAST_GRP:
		break;
	default:
		return -ENOMSG;
	}
	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), rem) {
		switch (nla_type(a)) {
		case CTRL_ATTR_FAMILY_NAME:
			ours = nla_len(a) > 0 && memchr(nla_data(a), '\0', nla_len(a)) &&
			       !strcmp(nla_data(a), RK1828_FAMILY_NAME);
			break;
		case CTRL_ATTR_FAMILY_ID:
			if (nla_len(a) != 2)
				return -EBADMSG;
			ctrl->family = nla_get_u16((struct nlattr *)a);
			break;
		case CTRL_ATTR_VERSION:
			if (nla_len(a) != 4)
				return -EBADMSG;
			ctrl->version = nla_get_u32((struct nlattr *)a);
			break;
		case CTRL_ATTR_MCAST_GROUPS:
			ctrl->events_grp = ctrl_events_group(a);
			break;
		}
	}
	if (!ours)
		return -ENOMSG;
	ctrl->gone = gh->cmd == CTRL_CMD_DELFAMILY;
	return 0;
}
