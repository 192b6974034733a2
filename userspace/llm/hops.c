// SPDX-License-Identifier: MIT
/*
 * Hidden-state hops between pipeline stages: P2P where possible, the host
 * hop elsewhere (hops.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hops.h"

int llm_hop_decide(struct rk_card *from, struct rk_card *to, uint64_t need, bool off,
		   struct llm_hop *hop)
{
	const char *env = getenv("RK1828_P2P");
	uint64_t window = 0;
	int ret;

	memset(hop, 0, sizeof(*hop));
	hop->status = RK_P2P_NO_DRIVER;
	ret = rk_p2p_query(from, to, &hop->status, &window);
	if (ret)
		return ret;
	if (hop->status != RK_P2P_OK)
		return 0;
	if (need && need > window) {
		hop->window_short = true;
		return 0;
	}
	hop->p2p = !off && !(env && !strcmp(env, "off"));
	return 0;
}

const char *llm_hop_format(const struct llm_hop *hop, char *buf, size_t n)
{
	if (hop->p2p)
		snprintf(buf, n, "p2p");
	else if (hop->status == RK_P2P_OK)
		snprintf(buf, n, "host (%s)", hop->window_short ?
			 "peer window too small" : "p2p turned off");
	else
		snprintf(buf, n, "host (%s)", rk_p2p_status_name(hop->status));
	return buf;
}
