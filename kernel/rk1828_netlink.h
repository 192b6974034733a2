/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * The generic netlink family "rk1828" (rk1828_netlink.c): the card
 * registry that names cards by index, and the events of the "events"
 * multicast group. The family's messages and policies are specified in
 * Documentation/netlink/specs/rk1828.yaml (rk1828_netlink_gen.[ch] and
 * uapi/drm/rk1828_netlink.h are generated from it).
 */
#ifndef __RK1828_NETLINK_H__
#define __RK1828_NETLINK_H__

#include <linux/types.h>

struct rk1828_device;
struct rk1828_telemetry_sample;

int rk1828_netlink_register(void);
void rk1828_netlink_unregister(void);
int rk1828_nl_card_add(struct rk1828_device *rdev);
void rk1828_nl_card_remove(struct rk1828_device *rdev);
bool rk1828_nl_has_listeners(void);
void rk1828_nl_reset_event(struct rk1828_device *rdev, u32 reason, u32 ctx,
			   int result);
void rk1828_nl_job_timeout_event(struct rk1828_device *rdev, u32 ctx,
				 u32 queue, u32 timeout_ms);
void rk1828_nl_thermal_event(struct rk1828_device *rdev,
			     const struct rk1828_telemetry_sample *s);

#endif /* __RK1828_NETLINK_H__ */
