/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/rk1828.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_RK1828_GEN_H
#define _LINUX_RK1828_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/drm/rk1828_netlink.h>

int rk1828_nl_card_get_doit(struct sk_buff *skb, struct genl_info *info);
int rk1828_nl_card_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int rk1828_nl_card_reset_doit(struct sk_buff *skb, struct genl_info *info);

enum {
	RK1828_NLGRP_EVENTS,
};

extern struct genl_family rk1828_nl_family;

#endif /* _LINUX_RK1828_GEN_H */
