// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * The generic netlink family "rk1828" (Documentation/netlink/specs/
 * rk1828.yaml; its policies and ops table are generated into
 * rk1828_netlink_gen.c): card-get (do and dump) reports a card's
 * identity, memory, contexts, per-queue job counters and the card's own
 * telemetry; card-reset (CAP_NET_ADMIN) resets its queues; the "events"
 * group carries card-add, card-remove, reset, job-timeout and
 * thermal-limit. Cards are named by an index from the card registry
 * here, held from registration to unplug.
 *
 * Dumps take a device reference per card and never hold a lock while
 * they talk to the card, so a card unplugged during a dump is reported
 * without its telemetry or skipped. Events may be sent from a job's
 * worker (a reset after a timeout), inside the fence signalling section:
 * they allocate with GFP_ATOMIC, and only when someone listens.
 */

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/xarray.h>
#include <net/genetlink.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/rk1828_accel.h>
#include <drm/rk1828_netlink.h>

#include "rk1828_drv.h"
#include "rk1828_hif_engine.h"
#include "rk1828_netlink.h"
#include "rk1828_netlink_gen.h"
#include "rk1828_telemetry.h"

/* Room for one event message (a handful of scalar attributes). */
#define RK1828_NL_EVENT_SIZE	256

/* Cards by index, from registration to unplug. */
static DEFINE_XARRAY_ALLOC(rk1828_cards);

/**
 * enum rk1828_nl_detail - how much of a card a message carries
 * @RK1828_NL_BRIEF: identity only: index, minor, device name, serial
 *	(card-remove)
 * @RK1828_NL_STATE: and the driver's state and counters (card-add)
 * @RK1828_NL_FULL: and the card's telemetry (card-get)
 */
enum rk1828_nl_detail {
	RK1828_NL_BRIEF,
	RK1828_NL_STATE,
	RK1828_NL_FULL,
};

/* The card at @index, with a device reference, or NULL. */
static struct rk1828_device *rk1828_nl_card_get(unsigned long index)
{
	struct rk1828_device *rdev;

	xa_lock(&rk1828_cards);
	rdev = xa_load(&rk1828_cards, index);
	if (rdev)
		drm_dev_get(&rdev->drm);
	xa_unlock(&rk1828_cards);
	return rdev;
}

/* The first card at or above *@index, with a device reference, or NULL. */
static struct rk1828_device *rk1828_nl_card_next(unsigned long *index)
{
	struct rk1828_device *rdev;

	xa_lock(&rk1828_cards);
	rdev = xa_find(&rk1828_cards, index, ULONG_MAX, XA_PRESENT);
	if (rdev)
		drm_dev_get(&rdev->drm);
	xa_unlock(&rk1828_cards);
	return rdev;
}

static int rk1828_nl_put_identity(struct sk_buff *skb,
				  struct rk1828_device *rdev)
{
	if (nla_put_u32(skb, RK1828_A_CARD_INDEX, rdev->index) ||
	    nla_put_u32(skb, RK1828_A_CARD_ACCEL_MINOR,
			rdev->drm.accel ? rdev->drm.accel->index : 0) ||
	    nla_put_string(skb, RK1828_A_CARD_DEV_NAME,
			   dev_name(rdev->drm.dev)) ||
	    nla_put_uint(skb, RK1828_A_CARD_SERIAL, rdev->serial))
		return -EMSGSIZE;
	return 0;
}

static int rk1828_nl_put_state(struct sk_buff *skb, struct rk1828_device *rdev)
{
	u64 mem_free;
	u32 contexts;

	mutex_lock(&rdev->mm_lock);
	mem_free = rdev->mem_free;
	mutex_unlock(&rdev->mm_lock);
	mutex_lock(&rdev->ctx_lock);
	contexts = list_count_nodes(&rdev->ctx_list);
	mutex_unlock(&rdev->ctx_lock);

	if (nla_put_string(skb, RK1828_A_CARD_FW_VERSION, rdev->fw) ||
	    nla_put_u32(skb, RK1828_A_CARD_PROTOCOL_VERSION, rdev->version) ||
	    nla_put_u32(skb, RK1828_A_CARD_LINK_TYPE, rdev->link_type) ||
	    nla_put_u32(skb, RK1828_A_CARD_LINK_SPEED, rdev->link_speed) ||
	    nla_put_uint(skb, RK1828_A_CARD_MEM_TOTAL,
			 rdev->mem_size - RK1828_CARD_ALIGN) ||
	    nla_put_uint(skb, RK1828_A_CARD_MEM_FREE, mem_free) ||
	    nla_put_u32(skb, RK1828_A_CARD_CONTEXTS, contexts) ||
	    nla_put_u32(skb, RK1828_A_CARD_STATE,
			rk1828_is_dead(rdev) ? RK1828_CARD_STATE_DEAD :
			RK1828_CARD_STATE_OK) ||
	    nla_put_uint(skb, RK1828_A_CARD_RESETS,
			 atomic64_read(&rdev->resets)) ||
	    nla_put_uint(skb, RK1828_A_CARD_P2P_WINDOW, rdev->p2p.size) ||
	    nla_put_uint(skb, RK1828_A_CARD_P2P_BYTES,
			 atomic64_read(&rdev->p2p.p2p_bytes)) ||
	    nla_put_uint(skb, RK1828_A_CARD_BOUNCE_BYTES,
			 atomic64_read(&rdev->p2p.bounce_bytes)))
		return -EMSGSIZE;
	return 0;
}

/* The scheduled queue whose jobs run on hardware queue @q, or NULL. */
static struct rk1828_sched *rk1828_nl_sched_of(struct rk1828_device *rdev,
					       u32 q)
{
	int i;

	for (i = 0; i < RK1828_SCHED_NUM; i++)
		if (rdev->sched[i].hif_queue == q)
			return &rdev->sched[i];
	return NULL;
}

static int rk1828_nl_put_jobs(struct sk_buff *skb, struct rk1828_sched *s)
{
	/* Completions first: a job counted done is counted submitted. */
	u64 done = atomic64_read(&s->jobs_done);
	u64 failed = atomic64_read(&s->jobs_failed);
	u64 submitted = atomic64_read(&s->jobs_submitted);
	u64 depth = submitted > done + failed ? submitted - done - failed : 0;

	if (nla_put_uint(skb, RK1828_A_QUEUE_JOBS_SUBMITTED, submitted) ||
	    nla_put_uint(skb, RK1828_A_QUEUE_JOBS_COMPLETED, done) ||
	    nla_put_uint(skb, RK1828_A_QUEUE_JOBS_FAILED, failed) ||
	    nla_put_uint(skb, RK1828_A_QUEUE_JOBS_TIMEDOUT,
			 atomic64_read(&s->timeouts)) ||
	    nla_put_u32(skb, RK1828_A_QUEUE_DEPTH, min_t(u64, depth, U32_MAX)))
		return -EMSGSIZE;
	return 0;
}

static int rk1828_nl_put_queue(struct sk_buff *skb, struct rk1828_device *rdev,
			       u32 q, const struct rk1828_telemetry_sample *tel)
{
	struct rk1828_hif_queue_state *hq = &rdev->hq[q];
	struct rk1828_sched *s = rk1828_nl_sched_of(rdev, q);
	struct nlattr *nest;

	nest = nla_nest_start(skb, RK1828_A_CARD_QUEUE);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, RK1828_A_QUEUE_ID, q) ||
	    nla_put_uint(skb, RK1828_A_QUEUE_COMMANDS,
			 atomic64_read(&hq->commands)) ||
	    nla_put_uint(skb, RK1828_A_QUEUE_COMMAND_ERRORS,
			 atomic64_read(&hq->errors)) ||
	    (s && rk1828_nl_put_jobs(skb, s)) ||
	    (tel && nla_put_uint(skb, RK1828_A_QUEUE_BUSY, tel->busy_ns[q]))) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int rk1828_nl_put_telemetry(struct sk_buff *skb,
				   const struct rk1828_telemetry_sample *tel)
{
	if (tel->flags & RK1828_HIF_STATS_THERMAL &&
	    (nla_put_s32(skb, RK1828_A_CARD_TEMPERATURE, tel->temp_mc) ||
	     nla_put_s32(skb, RK1828_A_CARD_TEMP_LIMIT, tel->temp_limit_mc) ||
	     nla_put_u8(skb, RK1828_A_CARD_THROTTLED,
			!!(tel->flags & RK1828_HIF_STATS_THROTTLED)) ||
	     nla_put_u32(skb, RK1828_A_CARD_POWER, tel->power_mw)))
		return -EMSGSIZE;
	if (nla_put_uint(skb, RK1828_A_CARD_ENERGY, tel->energy_uj) ||
	    nla_put_uint(skb, RK1828_A_CARD_UPTIME, tel->uptime_ns))
		return -EMSGSIZE;
	return 0;
}

/*
 * One card-get (or card-add/card-remove) message. Telemetry is read
 * first, outside the message, because it may wait for the card.
 */
static int rk1828_nl_fill_card(struct sk_buff *skb, struct rk1828_device *rdev,
			       u32 portid, u32 seq, int flags, u8 cmd,
			       enum rk1828_nl_detail detail)
{
	struct rk1828_telemetry_sample tel;
	bool have_tel = false;
	void *hdr;
	int idx;
	u32 q;

	if (detail == RK1828_NL_FULL && drm_dev_enter(&rdev->drm, &idx)) {
		have_tel = !rk1828_telemetry_read(rdev, &tel);
		drm_dev_exit(idx);
	}
	hdr = genlmsg_put(skb, portid, seq, &rk1828_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (rk1828_nl_put_identity(skb, rdev))
		goto cancel;
	if (detail >= RK1828_NL_STATE) {
		if (rk1828_nl_put_state(skb, rdev))
			goto cancel;
		for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++)
			if (rk1828_nl_put_queue(skb, rdev, q,
						have_tel ? &tel : NULL))
				goto cancel;
	}
	if (have_tel && rk1828_nl_put_telemetry(skb, &tel))
		goto cancel;
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* The card a request names (its index attribute is required). */
static struct rk1828_device *rk1828_nl_card_from_info(struct genl_info *info)
{
	struct rk1828_device *rdev;

	if (GENL_REQ_ATTR_CHECK(info, RK1828_A_CARD_INDEX))
		return ERR_PTR(-EINVAL);
	rdev = rk1828_nl_card_get(nla_get_u32(info->attrs[RK1828_A_CARD_INDEX]));
	if (!rdev) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[RK1828_A_CARD_INDEX],
				    "no rk1828 card with this index");
		return ERR_PTR(-ENODEV);
	}
	return rdev;
}

/**
 * rk1828_nl_card_get_doit() - RK1828_CMD_CARD_GET, one card
 * @skb: the request
 * @info: its attributes: %RK1828_A_CARD_INDEX (required)
 *
 * Return: 0 with the reply sent; -EINVAL without an index; -ENODEV for
 * an index that names no card; -ENOMEM.
 */
int rk1828_nl_card_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct rk1828_device *rdev;
	struct sk_buff *msg;
	int ret;

	rdev = rk1828_nl_card_from_info(info);
	if (IS_ERR(rdev))
		return PTR_ERR(rdev);
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out;
	}
	ret = rk1828_nl_fill_card(msg, rdev, info->snd_portid, info->snd_seq,
				  0, RK1828_CMD_CARD_GET, RK1828_NL_FULL);
	if (ret) {
		nlmsg_free(msg);
		goto out;
	}
	ret = genlmsg_reply(msg, info);
out:
	drm_dev_put(&rdev->drm);
	return ret;
}

/**
 * rk1828_nl_card_get_dumpit() - RK1828_CMD_CARD_GET, every card
 * @skb: the reply buffer
 * @cb: the dump; cb->args[0] is the next card index
 *
 * Return: skb->len while more cards follow, 0 at the end, or a negative
 * errno.
 */
int rk1828_nl_card_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long index = cb->args[0];
	struct rk1828_device *rdev;
	int ret = 0;

	while ((rdev = rk1828_nl_card_next(&index))) {
		ret = rk1828_nl_fill_card(skb, rdev, NETLINK_CB(cb->skb).portid,
					  cb->nlh->nlmsg_seq, NLM_F_MULTI,
					  RK1828_CMD_CARD_GET, RK1828_NL_FULL);
		drm_dev_put(&rdev->drm);
		if (ret)
			break;
		index++;
	}
	cb->args[0] = index;
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret;
}

/**
 * rk1828_nl_card_reset_doit() - RK1828_CMD_CARD_RESET (CAP_NET_ADMIN)
 * @skb: the request
 * @info: its attributes: %RK1828_A_CARD_INDEX (required)
 *
 * Resets the card's queues as rk1828_card_reset() does, with the reason
 * %RK1828_RESET_REASON_ADMIN; a reset event follows.
 *
 * Return: 0; -EINVAL, -ENODEV as for card-get; -ENODEV once unplugged;
 * the errno of a failed reset request (the card is then dead).
 */
int rk1828_nl_card_reset_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct rk1828_device *rdev;
	int ret, idx;

	rdev = rk1828_nl_card_from_info(info);
	if (IS_ERR(rdev))
		return PTR_ERR(rdev);
	if (drm_dev_enter(&rdev->drm, &idx)) {
		ret = rk1828_card_reset(rdev, RK1828_RESET_REASON_ADMIN, 0);
		drm_dev_exit(idx);
		if (ret)
			NL_SET_ERR_MSG(info->extack,
				       "queue reset failed: the card is declared dead");
	} else {
		NL_SET_ERR_MSG(info->extack, "the card was unplugged");
		ret = -ENODEV;
	}
	drm_dev_put(&rdev->drm);
	return ret;
}

/**
 * rk1828_nl_has_listeners() - does anyone listen to the events group?
 *
 * Return: true when a socket of the initial network namespace joined it.
 */
bool rk1828_nl_has_listeners(void)
{
	return genl_has_listeners(&rk1828_nl_family, &init_net,
				  RK1828_NLGRP_EVENTS) > 0;
}

static void rk1828_nl_card_event(struct rk1828_device *rdev, u8 cmd,
				 enum rk1828_nl_detail detail)
{
	struct sk_buff *skb;

	if (!rk1828_nl_has_listeners())
		return;
	skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!skb)
		return;
	if (rk1828_nl_fill_card(skb, rdev, 0, 0, 0, cmd, detail)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_multicast(&rk1828_nl_family, skb, 0, RK1828_NLGRP_EVENTS,
			  GFP_KERNEL);
}

/* Start an event message; NULL when nobody listens or memory is short. */
static struct sk_buff *rk1828_nl_event_start(struct rk1828_device *rdev,
					     u8 cmd, void **hdr)
{
	struct sk_buff *skb;

	if (!rk1828_nl_has_listeners())
		return NULL;
	skb = genlmsg_new(RK1828_NL_EVENT_SIZE, GFP_ATOMIC);
	if (!skb)
		return NULL;
	*hdr = genlmsg_put(skb, 0, 0, &rk1828_nl_family, 0, cmd);
	if (!*hdr || nla_put_u32(skb, RK1828_A_EVENT_INDEX, rdev->index)) {
		nlmsg_free(skb);
		return NULL;
	}
	return skb;
}

static void rk1828_nl_event_send(struct sk_buff *skb, void *hdr, int err)
{
	if (err) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&rk1828_nl_family, skb, 0, RK1828_NLGRP_EVENTS,
			  GFP_ATOMIC);
}

/**
 * rk1828_nl_reset_event() - a queue reset finished (or failed)
 * @rdev: the card
 * @reason: &enum rk1828_reset_reason
 * @ctx: context whose command caused it, 0 for none
 * @result: 0, or the errno of the failed reset request
 *
 * Context: any process context, also a job's fence signalling section.
 */
void rk1828_nl_reset_event(struct rk1828_device *rdev, u32 reason, u32 ctx,
			   int result)
{
	struct sk_buff *skb;
	void *hdr;

	skb = rk1828_nl_event_start(rdev, RK1828_CMD_RESET, &hdr);
	if (!skb)
		return;
	rk1828_nl_event_send(skb, hdr,
			     nla_put_u32(skb, RK1828_A_EVENT_REASON, reason) ||
			     (ctx && nla_put_u32(skb, RK1828_A_EVENT_CTX, ctx)) ||
			     nla_put_s32(skb, RK1828_A_EVENT_RESULT, result) ||
			     nla_put_uint(skb, RK1828_A_EVENT_RESETS,
					  atomic64_read(&rdev->resets)));
}

/**
 * rk1828_nl_job_timeout_event() - a job's command timed out
 * @rdev: the card
 * @ctx: the job's context id
 * @queue: &enum rk1828_hif_queue the command ran on
 * @timeout_ms: the timeout that passed
 *
 * Context: a job's worker, inside its fence signalling section.
 */
void rk1828_nl_job_timeout_event(struct rk1828_device *rdev, u32 ctx,
				 u32 queue, u32 timeout_ms)
{
	struct sk_buff *skb;
	void *hdr;

	skb = rk1828_nl_event_start(rdev, RK1828_CMD_JOB_TIMEOUT, &hdr);
	if (!skb)
		return;
	rk1828_nl_event_send(skb, hdr,
			     nla_put_u32(skb, RK1828_A_EVENT_CTX, ctx) ||
			     nla_put_u32(skb, RK1828_A_EVENT_QUEUE, queue) ||
			     nla_put_u32(skb, RK1828_A_EVENT_TIMEOUT_MS,
					 timeout_ms));
}

/**
 * rk1828_nl_thermal_event() - the card's throttle flag changed
 * @rdev: the card
 * @s: the telemetry that shows the change
 */
void rk1828_nl_thermal_event(struct rk1828_device *rdev,
			     const struct rk1828_telemetry_sample *s)
{
	struct sk_buff *skb;
	void *hdr;

	skb = rk1828_nl_event_start(rdev, RK1828_CMD_THERMAL_LIMIT, &hdr);
	if (!skb)
		return;
	rk1828_nl_event_send(skb, hdr,
			     nla_put_s32(skb, RK1828_A_EVENT_TEMPERATURE,
					 s->temp_mc) ||
			     nla_put_s32(skb, RK1828_A_EVENT_TEMP_LIMIT,
					 s->temp_limit_mc) ||
			     nla_put_u8(skb, RK1828_A_EVENT_THROTTLED,
					!!(s->flags & RK1828_HIF_STATS_THROTTLED)));
}

/**
 * rk1828_nl_card_add() - give a registered card its index and announce it
 * @rdev: the card, after drm_dev_register()
 *
 * Sends card-add and starts the card's telemetry poll.
 *
 * Return: 0, -ENOMEM or -EBUSY (no index left).
 */
int rk1828_nl_card_add(struct rk1828_device *rdev)
{
	u32 index;
	int ret;

	ret = xa_alloc(&rk1828_cards, &index, rdev, xa_limit_31b, GFP_KERNEL);
	if (ret)
		return ret;
	rdev->index = index;
	rk1828_nl_card_event(rdev, RK1828_CMD_CARD_ADD, RK1828_NL_STATE);
	rk1828_telemetry_start(rdev);
	return 0;
}

/**
 * rk1828_nl_card_remove() - the card is unplugged: forget its index
 * @rdev: the card
 *
 * Stops the telemetry poll, removes the card from the registry (a dump
 * in progress may still report it from the reference it holds) and
 * sends card-remove.
 *
 * Context: process context.
 */
void rk1828_nl_card_remove(struct rk1828_device *rdev)
{
	rk1828_telemetry_stop(rdev);
	xa_erase(&rk1828_cards, rdev->index);
	rk1828_nl_card_event(rdev, RK1828_CMD_CARD_REMOVE, RK1828_NL_BRIEF);
}

/**
 * rk1828_netlink_register() - register the family (module init)
 *
 * Return: 0 or the errno of genl_register_family().
 */
int rk1828_netlink_register(void)
{
	return genl_register_family(&rk1828_nl_family);
}

/**
 * rk1828_netlink_unregister() - unregister the family (module exit,
 *	after every card is gone)
 */
void rk1828_netlink_unregister(void)
{
	genl_unregister_family(&rk1828_nl_family);
}
