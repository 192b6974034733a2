// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/rk1828.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "rk1828_netlink_gen.h"

#include <uapi/drm/rk1828_netlink.h>

/* RK1828_CMD_CARD_GET - do */
static const struct nla_policy rk1828_card_get_nl_policy[RK1828_A_CARD_INDEX + 1] = {
	[RK1828_A_CARD_INDEX] = { .type = NLA_U32, },
};

/* RK1828_CMD_CARD_RESET - do */
static const struct nla_policy rk1828_card_reset_nl_policy[RK1828_A_CARD_INDEX + 1] = {
	[RK1828_A_CARD_INDEX] = { .type = NLA_U32, },
};

/* Ops table for rk1828 */
static const struct genl_split_ops rk1828_nl_ops[] = {
	{
		.cmd		= RK1828_CMD_CARD_GET,
		.doit		= rk1828_nl_card_get_doit,
		.policy		= rk1828_card_get_nl_policy,
		.maxattr	= RK1828_A_CARD_INDEX,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd	= RK1828_CMD_CARD_GET,
		.dumpit	= rk1828_nl_card_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= RK1828_CMD_CARD_RESET,
		.doit		= rk1828_nl_card_reset_doit,
		.policy		= rk1828_card_reset_nl_policy,
		.maxattr	= RK1828_A_CARD_INDEX,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
};

static const struct genl_multicast_group rk1828_nl_mcgrps[] = {
	[RK1828_NLGRP_EVENTS] = { "events", },
};

struct genl_family rk1828_nl_family __ro_after_init = {
	.name		= RK1828_FAMILY_NAME,
	.version	= RK1828_FAMILY_VERSION,
	.netnsok	= true,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.split_ops	= rk1828_nl_ops,
	.n_split_ops	= ARRAY_SIZE(rk1828_nl_ops),
	.mcgrps		= rk1828_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(rk1828_nl_mcgrps),
};
