// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Card telemetry (kernel/rk1828_telemetry.h): STATS on the management
 * queue (Documentation/accel/rk1828/protocol.rst), a short-lived cache so
 * that many readers of the netlink family cost one card command, and a
 * poll that turns changes of the card's throttle flag into thermal-limit
 * events while anyone listens for events. The card has no interrupt of
 * its own for this, so polling is the only way to notice it in time.
 */

#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "rk1828_drv.h"
#include "rk1828_hif_engine.h"
#include "rk1828_netlink.h"
#include "rk1828_telemetry.h"

/* Readers within this many milliseconds of a STATS share its reply. */
#define RK1828_TELEMETRY_MAX_AGE_MS	100

static unsigned int rk1828_telemetry_poll_ms = 1000;
module_param_named(telemetry_poll_ms, rk1828_telemetry_poll_ms, uint, 0644);
MODULE_PARM_DESC(telemetry_poll_ms,
		 "Interval of the card telemetry poll in milliseconds while a process listens to the rk1828 netlink events (thermal-limit events), 0 to turn it off (default 1000)");

static_assert(sizeof(struct rk1828_hif_stats) == 128);

/* Send STATS and convert the reply. */
static int rk1828_telemetry_query(struct rk1828_device *rdev,
				  struct rk1828_telemetry_sample *s)
{
	struct rk1828_hif_stats st;
	struct rk1828_hif_cmd cmd = {
		.opcode = RK1828_HIF_OP_STATS,
		.rdata = &st,
		.rlen = sizeof(st),
		.timeout = msecs_to_jiffies(READ_ONCE(rdev->job_timeout_ms)),
	};
	int ret, q;

	ret = rk1828_hif_run(rdev, RK1828_HIF_QUEUE_MGMT, &cmd);
	if (ret)
		return ret;
	s->flags = le32_to_cpu(st.flags);
	s->power_mw = le32_to_cpu(st.power_mw);
	s->temp_mc = (s32)le32_to_cpu(st.temp_mc);
	s->temp_limit_mc = (s32)le32_to_cpu(st.temp_limit_mc);
	s->uptime_ns = le64_to_cpu(st.uptime_ns);
	s->energy_uj = le64_to_cpu(st.energy_uj);
	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++)
		s->busy_ns[q] = le64_to_cpu(st.busy_ns[q]);
	return 0;
}

/**
 * rk1828_telemetry_read() - the card's telemetry, at most 100 ms old
 * @rdev: the card; the caller is inside drm_dev_enter()
 * @out: the sample
 *
 * A reply younger than %RK1828_TELEMETRY_MAX_AGE_MS is shared; otherwise
 * STATS is sent. When the card's throttle flag changed since the last
 * reply, a thermal-limit event goes out.
 *
 * Context: process context, may sleep (a management command).
 * Return: 0; -EOPNOTSUPP for a card older than protocol 1.1; -EINTR on a
 * fatal signal; the errors of rk1828_hif_run().
 */
int rk1828_telemetry_read(struct rk1828_device *rdev,
			  struct rk1828_telemetry_sample *out)
{
	struct rk1828_telemetry *t = &rdev->telemetry;
	bool changed = false;
	int ret = 0;

	if ((rdev->version & 0xffff) < RK1828_HIF_MINOR_STATS)
		return -EOPNOTSUPP;
	if (mutex_lock_killable(&t->lock))
		return -EINTR;
	if (!t->valid ||
	    time_after(jiffies, t->stamp +
		       msecs_to_jiffies(RK1828_TELEMETRY_MAX_AGE_MS))) {
		ret = rk1828_telemetry_query(rdev, &t->last);
		if (ret == -EOPNOTSUPP) {
			/* BADOP: the card claims 1.1 but has no STATS. */
			drm_warn_once(&rdev->drm, "card does not answer STATS\n");
		}
		if (!ret) {
			bool throttled = t->last.flags &
					 RK1828_HIF_STATS_THROTTLED;

			t->valid = true;
			t->stamp = jiffies;
			changed = throttled != t->throttled;
			t->throttled = throttled;
		}
	}
	if (!ret)
		*out = t->last;
	mutex_unlock(&t->lock);
	if (changed)
		rk1828_nl_thermal_event(rdev, out);
	return ret;
}

static void rk1828_telemetry_poll(struct work_struct *work)
{
	struct rk1828_device *rdev = container_of(to_delayed_work(work),
						  struct rk1828_device,
						  telemetry.poll);
	unsigned int ms = READ_ONCE(rk1828_telemetry_poll_ms);
	struct rk1828_telemetry_sample s;
	int idx;

	if (ms && rk1828_nl_has_listeners() && drm_dev_enter(&rdev->drm, &idx)) {
		rk1828_telemetry_read(rdev, &s);
		drm_dev_exit(idx);
	}
	/* Turned off: look again once a second whether it is back on. */
	queue_delayed_work(system_unbound_wq, &rdev->telemetry.poll,
			   msecs_to_jiffies(ms ?: 1000));
}

static void rk1828_telemetry_release(struct drm_device *drm, void *data)
{
	mutex_destroy(&to_rk1828_device(drm)->telemetry.lock);
}

/**
 * rk1828_telemetry_init() - set up the telemetry cache of a card
 * @rdev: the card, before it is registered
 *
 * Return: 0 or -ENOMEM.
 */
int rk1828_telemetry_init(struct rk1828_device *rdev)
{
	struct rk1828_telemetry *t = &rdev->telemetry;

	mutex_init(&t->lock);
	INIT_DELAYED_WORK(&t->poll, rk1828_telemetry_poll);
	return drmm_add_action_or_reset(&rdev->drm, rk1828_telemetry_release,
					NULL);
}

/**
 * rk1828_telemetry_start() - start the poll of a registered card
 * @rdev: the card
 */
void rk1828_telemetry_start(struct rk1828_device *rdev)
{
	rdev->telemetry.polling = true;
	queue_delayed_work(system_unbound_wq, &rdev->telemetry.poll,
			   msecs_to_jiffies(1000));
}

/**
 * rk1828_telemetry_stop() - stop the poll for good (unplug)
 * @rdev: the card
 *
 * Context: process context; waits for a poll in progress.
 */
void rk1828_telemetry_stop(struct rk1828_device *rdev)
{
	if (rdev->telemetry.polling)
		cancel_delayed_work_sync(&rdev->telemetry.poll);
	rdev->telemetry.polling = false;
}
