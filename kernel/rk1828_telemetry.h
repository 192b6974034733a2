/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Card telemetry: the card's own figures (HIF STATS, protocol 1.1:
 * busy time per queue, power, energy, temperature and its limit), cached
 * for the netlink family and polled for thermal-limit events.
 */
#ifndef __RK1828_TELEMETRY_H__
#define __RK1828_TELEMETRY_H__

#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "rk1828_hif.h"

struct rk1828_device;

/**
 * struct rk1828_telemetry_sample - one STATS reply, in CPU byte order
 * @flags: RK1828_HIF_STATS_* (kernel/rk1828_hif.h)
 * @power_mw: power now (mean over the last second), milliwatts
 * @temp_mc: temperature, millidegrees Celsius
 * @temp_limit_mc: throttle temperature, millidegrees Celsius
 * @uptime_ns: time since the card started, nanoseconds
 * @energy_uj: energy since the card started, microjoules
 * @busy_ns: busy time per hardware queue (&enum rk1828_hif_queue), ns
 */
struct rk1828_telemetry_sample {
	u32 flags;
	u32 power_mw;
	s32 temp_mc;
	s32 temp_limit_mc;
	u64 uptime_ns;
	u64 energy_uj;
	u64 busy_ns[RK1828_HIF_NUM_QUEUES];
};

/**
 * struct rk1828_telemetry - cached telemetry of one card
 * @lock: serialises STATS queries; protects the other members
 * @valid: @last holds a reply
 * @stamp: jiffies when @last was received
 * @last: the last reply
 * @throttled: %RK1828_HIF_STATS_THROTTLED as last reported (thermal-limit
 *	events fire when it changes)
 * @poll: periodic STATS while someone listens to the netlink events
 * @polling: @poll was started (by rk1828_telemetry_start())
 */
struct rk1828_telemetry {
	struct mutex lock; /* STATS queries and the cache */
	bool valid;
	unsigned long stamp;
	struct rk1828_telemetry_sample last;
	bool throttled;
	struct delayed_work poll;
	bool polling;
};

int rk1828_telemetry_init(struct rk1828_device *rdev);
void rk1828_telemetry_start(struct rk1828_device *rdev);
void rk1828_telemetry_stop(struct rk1828_device *rdev);
int rk1828_telemetry_read(struct rk1828_device *rdev,
			  struct rk1828_telemetry_sample *out);

#endif /* __RK1828_TELEMETRY_H__ */
