/* SPDX-License-Identifier: MIT */
/*
 * How hidden states travel between the cards of a cascade: by
 * peer-to-peer DMA where the driver, the kernel and the PCI topology
 * allow it (rk_p2p_query()), through a host buffer (the host hop)
 * everywhere else (USB cards, mixed cascades, kernels without
 * CONFIG_PCI_P2PDMA, root ports the kernel does not allow).
 */
#ifndef RK_LLM_HOPS_H
#define RK_LLM_HOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rk1828.h"

/**
 * struct llm_hop - one hand-over between consecutive pipeline stages
 * @p2p: hidden states go card to card (the receiver exports its input
 *	buffers, the sender's output COPY writes them)
 * @status: rk_p2p_query()'s answer for the pair (sender imports)
 * @window_short: the pair could, but the receiver's peer window is too
 *	small for its input buffers
 */
struct llm_hop {
	bool p2p;
	enum rk_p2p_status status;
	bool window_short;
};

/**
 * llm_hop_decide() - how hidden states go from @from to @to
 * @from: the sending card (stage k)
 * @to: the receiving card (stage k + 1)
 * @need: bytes of @to's input buffers that must fit its peer window
 *	(0: do not check)
 * @off: force the host hop (RK1828_P2P=off in the environment does too)
 * @hop: out
 *
 * Return: 0, or a negative errno of the query (then @hop is a host hop).
 */
int llm_hop_decide(struct rk_card *from, struct rk_card *to, uint64_t need, bool off,
		   struct llm_hop *hop);

/**
 * llm_hop_format() - "p2p" or "host (REASON)" for messages
 * @hop: the hop
 * @buf: output
 * @n: its size
 *
 * Return: @buf.
 */
const char *llm_hop_format(const struct llm_hop *hop, char *buf, size_t n);

#endif /* RK_LLM_HOPS_H */
