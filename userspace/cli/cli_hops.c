// SPDX-License-Identifier: MIT
/*
 * rk1828-llm info and plan: which hand-overs of hidden states between
 * cards use peer-to-peer DMA and why the others take the host hop
 * (userspace/llm/hops.h).
 */
#include <stdio.h>

#include "cli.h"
#include "hops.h"

void cli_print_hop(struct rk_card *from, struct rk_card *to)
{
	struct llm_hop hop;
	char how[64];

	if (llm_hop_decide(from, to, 0, false, &hop)) {
		printf("hop card%d -> card%d: unknown (%s)\n", from->index, to->index, rk_error());
		return;
	}
	printf("hop card%d -> card%d: %s\n", from->index, to->index,
	       llm_hop_format(&hop, how, sizeof(how)));
}
