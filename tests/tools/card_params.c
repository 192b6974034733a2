// SPDX-License-Identifier: MIT
/*
 * card_params: the GET_PARAM view of every card, for comparing with
 * rk1828-smi --json (tests/e2e/smi.sh): one JSON object per line with
 * node, memory_total_bytes (CARD_MEM_SIZE), memory_free_bytes
 * (CARD_MEM_FREE), link, link_speed_mbps, serial and protocol_version,
 * named as rk1828-smi names them. Runs in the guest; exit 1 when the
 * cards cannot be opened.
 */
#include <stdio.h>

#include "rk1828.h"

int main(void)
{
	struct rk_card *cards;
	int n, i;

	if (rk_open_all(&cards, &n)) {
		fprintf(stderr, "card_params: %s\n", rk_error());
		return 1;
	}
	for (i = 0; i < n; i++) {
		const struct rk_card *c = &cards[i];

		printf("{\"node\": \"%s\", \"memory_total_bytes\": %llu, \"memory_free_bytes\": %llu, "
		       "\"link\": \"%s\", \"link_speed_mbps\": %u, \"serial\": %llu, "
		       "\"protocol_version\": \"%u.%u\"}\n",
		       c->node, (unsigned long long)c->mem_size, (unsigned long long)c->mem_free,
		       rk_link_name(c->link_type), c->link_speed, (unsigned long long)c->serial,
		       c->protocol >> 16, c->protocol & 0xffff);
	}
	rk_close_all(cards, n);
	return 0;
}
