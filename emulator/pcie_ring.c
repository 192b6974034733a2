// SPDX-License-Identifier: MIT
/*
 * Card emulator, PCIe front end: the descriptor and completion rings.
 *
 * A doorbell makes the card fetch descriptors (kernel/rk1828_hif_pci.h)
 * from host memory and turn each into the bytes of its queue's command
 * stream: the 48-byte header, then for a command with data the payload
 * pieces straight from guest memory (the card's workers copy them into
 * card memory, no copy here). The card model (emulator/card.h) runs them
 * exactly as it runs the USB bulk streams and answers with completion
 * stream bytes; these are parsed here, reply data (INFO, READ) is written
 * into the command's buffer in guest memory, and each completion becomes a
 * completion ring entry followed by the queue's MSI-X vector.
 *
 * A command whose buffer the card cannot reach never enters the card: it
 * is completed here with %RK1828_HIF_ST_DMA, in its turn, so the order of
 * completions always follows the order of descriptors.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcie_priv.h"

#define HDR_SIZE	sizeof(struct rk1828_hif_msg)

_Static_assert(sizeof(struct rk1828_pci_desc) == 64, "descriptor is 64 bytes");
_Static_assert(sizeof(struct rk1828_pci_cpl) == 64, "completion is 64 bytes");
_Static_assert(sizeof(struct rk1828_pci_sg) == 16, "SG entry is 16 bytes");

static struct pcie_cmd *fifo_at(struct pcie_queue *pq, unsigned int i)
{
	return &pq->fifo[(pq->fifo_head + i) % EMU_PCIE_RING_MAX];
}

static struct pcie_cmd *fifo_push(struct pcie_queue *pq)
{
	struct pcie_cmd *c;

	if (pq->fifo_n == EMU_PCIE_RING_MAX)
		return NULL;
	c = fifo_at(pq, pq->fifo_n++);
	memset(c, 0, sizeof(*c));
	return c;
}

static void fifo_pop(struct pcie_queue *pq)
{
	struct pcie_cmd *c = fifo_at(pq, 0);

	free(c->segs);
	c->segs = NULL;
	pq->fifo_head = (pq->fifo_head + 1) % EMU_PCIE_RING_MAX;
	pq->fifo_n--;
}

/* Guest memory needs no release when the card is done with it. */
static void guest_mem_release(void *opaque, uint8_t *data)
{
	(void)opaque;
	(void)data;
}

/* Hand one command and its outgoing data to the card; false on ENOMEM. */
static bool feed_command(struct pcie_dev *d, unsigned int q,
			 const struct rk1828_hif_msg *hdr,
			 const struct dma_seg *segs, uint64_t data_len)
{
	unsigned int i;

	if (emu_card_feed(d->card, q, hdr, HDR_SIZE))
		return false;
	for (i = 0; data_len; i++) {
		uint64_t n = segs[i].len < data_len ? segs[i].len : data_len;

		/* The header is in: from here on a failure desyncs the stream. */
		if (emu_card_feed_owned(d->card, q, segs[i].p, (size_t)n,
					guest_mem_release, NULL))
			pcie_log(d, "queue %u: out of memory feeding data, the command will time out",
				 q);
		data_len -= n;
	}
	return true;
}

/* Take one descriptor from the ring into @c. */
static void fetch_one(struct pcie_dev *d, unsigned int q, struct pcie_cmd *c)
{
	struct pcie_queue *pq = &d->q[q];
	uint64_t addr = pq->sq_base + (uint64_t)pq->sq_head * sizeof(struct rk1828_pci_desc);
	const uint8_t *p = pcie_dma_ptr(&d->dma, addr, sizeof(struct rk1828_pci_desc));
	struct rk1828_pci_desc desc;
	struct dma_seg *segs;
	unsigned int n_segs;
	uint64_t cap, data_len;
	int ret;

	pq->sq_head = (pq->sq_head + 1) & (pq->sq_size - 1);
	c->sq_head = pq->sq_head;
	if (!p) {
		pcie_log(d, "queue %u: descriptor at %#" PRIx64 " is out of DMA reach", q, addr);
		c->hdr.magic = htole32(RK1828_HIF_MAGIC);
		c->local_status = RK1828_HIF_ST_DMA;
		return;
	}
	memcpy(&desc, p, sizeof(desc));	/* one snapshot: the host may reuse it */
	c->hdr = desc.hdr;
	if ((d->test & (1u << (RK1828_PCI_TEST_BAD_DMA - 1))) && desc.data_count) {
		d->test &= ~(1u << (RK1828_PCI_TEST_BAD_DMA - 1));
		desc.data_addr = htole64(le64toh(desc.data_addr) | (UINT64_C(1) << 60));
		pcie_log(d, "queue %u: test knob: seq %u gets data address %#" PRIx64,
			 q, le32toh(desc.hdr.seq), (uint64_t)le64toh(desc.data_addr));
	}
	ret = pcie_dma_buffer(&d->dma, &desc, &segs, &n_segs, &cap);
	data_len = le32toh(desc.hdr.data_len);
	if (!ret && data_len > cap) {
		pcie_log(d, "queue %u: seq %u: %" PRIu64 " data bytes, buffer of %" PRIu64,
			 q, le32toh(desc.hdr.seq), data_len, cap);
		free(segs);
		segs = NULL;
		ret = -ENOSPC;
	}
	if (ret == -ENOSPC) {
		d->dma_faults++;
		c->local_status = RK1828_HIF_ST_DMA;
		return;
	}
	if (ret) {
		if (ret != -ENOMEM)
			d->dma_faults++;
		c->local_status = ret == -EINVAL ? RK1828_HIF_ST_INVAL :
				  ret == -ENOMEM ? RK1828_HIF_ST_NOMEM :
				  RK1828_HIF_ST_DMA;
		pcie_log(d, "queue %u: seq %u: data buffer %#" PRIx64 " (%u%s) %s",
			 q, le32toh(desc.hdr.seq), (uint64_t)le64toh(desc.data_addr),
			 le32toh(desc.data_count),
			 le32toh(desc.flags) & RK1828_PCI_DESC_F_SGL ? " SG entries" : " bytes",
			 ret == -EFAULT ? "is out of DMA reach" : "is malformed");
		free(segs);
		return;
	}
	if (!feed_command(d, q, &desc.hdr, segs, data_len)) {
		c->local_status = RK1828_HIF_ST_NOMEM;
		free(segs);
		return;
	}
	if (data_len) {
		free(segs);	/* outgoing data: no reply buffer */
	} else {
		c->segs = segs;
		c->n_segs = n_segs;
	}
	if (d->verbose)
		pcie_log(d, "queue %u: fetched op %u seq %u, %" PRIu64 " data bytes, buffer %" PRIu64,
			 q, le16toh(desc.hdr.opcode), le32toh(desc.hdr.seq),
			 data_len, cap);
}

/**
 * pcie_ring_doorbell() - the host moved the descriptor ring's tail
 * @d: the device
 * @q: the queue
 *
 * Fetches every descriptor up to the tail (the card holds at most one
 * ring's worth of commands) and posts what can be completed at once.
 */
void pcie_ring_doorbell(struct pcie_dev *d, unsigned int q)
{
	struct pcie_queue *pq = &d->q[q];

	if (!pq->sq_size || !pq->cq_size)
		return;
	if (pq->sq_tail >= pq->sq_size) {
		pcie_log(d, "queue %u: doorbell %u beyond the ring of %u", q,
			 pq->sq_tail, pq->sq_size);
		d->ring_error = true;
		return;
	}
	while (pq->sq_head != pq->sq_tail) {
		struct pcie_cmd *c = fifo_push(pq);

		if (!c)
			break;
		fetch_one(d, q, c);
	}
	pcie_ring_complete(d);
}

/* Receive the completion at the head of the card's stream; false: not yet. */
static bool receive_completion(struct pcie_dev *d, unsigned int q,
			       struct pcie_cmd *c)
{
	struct pcie_queue *pq = &d->q[q];
	uint8_t sink[4096];
	uint64_t len;

	if (pq->cpl_have < HDR_SIZE) {
		pq->cpl_have += emu_card_read(d->card, q,
					      (uint8_t *)&pq->cpl + pq->cpl_have,
					      HDR_SIZE - pq->cpl_have);
		if (pq->cpl_have < HDR_SIZE)
			return false;
		pq->data_done = 0;
		pq->seg_i = 0;
		pq->seg_off = 0;
		pq->data_fault = false;
	}
	len = le32toh(pq->cpl.data_len);
	while (pq->data_done < len) {
		uint64_t want = len - pq->data_done;
		uint8_t *dst = sink;
		size_t n;

		while (pq->seg_i < c->n_segs && pq->seg_off == c->segs[pq->seg_i].len) {
			pq->seg_i++;
			pq->seg_off = 0;
		}
		if (pq->seg_i < c->n_segs) {
			const struct dma_seg *s = &c->segs[pq->seg_i];

			dst = s->p + pq->seg_off;
			if (want > s->len - pq->seg_off)
				want = s->len - pq->seg_off;
		} else {
			/* More reply data than buffer: drop the rest. */
			pq->data_fault = true;
			if (want > sizeof(sink))
				want = sizeof(sink);
		}
		n = emu_card_read(d->card, q, dst, (size_t)want);
		if (!n)
			return false;
		pq->data_done += n;
		if (dst != sink)
			pq->seg_off += n;
	}
	return true;
}

/* Write one completion ring entry; false when the ring is full. */
static bool post_completion(struct pcie_dev *d, unsigned int q,
			    const struct rk1828_hif_msg *hdr, uint32_t sq_head)
{
	struct pcie_queue *pq = &d->q[q];
	uint64_t addr = pq->cq_base + (uint64_t)pq->cq_tail * sizeof(struct rk1828_pci_cpl);
	struct rk1828_pci_cpl e;
	uint8_t *p;

	if (((pq->cq_tail + 1) & (pq->cq_size - 1)) == pq->cq_head)
		return false;
	memset(&e, 0, sizeof(e));
	e.hdr = *hdr;
	e.sq_head = htole16((uint16_t)sq_head);
	if (d->test & (1u << (RK1828_PCI_TEST_BAD_CPL - 1))) {
		d->test &= ~(1u << (RK1828_PCI_TEST_BAD_CPL - 1));
		e.hdr.seq = htole32(le32toh(e.hdr.seq) ^ 0x5a5a0000u);
		pcie_log(d, "queue %u: test knob: completion of seq %u carries seq %u",
			 q, le32toh(hdr->seq), le32toh(e.hdr.seq));
	}
	p = pcie_dma_ptr(&d->dma, addr, sizeof(e));
	if (!p) {
		pcie_log(d, "queue %u: completion ring slot %#" PRIx64 " is out of DMA reach",
			 q, addr);
		d->ring_error = true;
	} else {
		uint16_t flags = htole16(pq->phase ? RK1828_PCI_CPL_F_PHASE : 0);

		/* The entry first, its phase bit last: the host polls that. */
		memcpy(p, &e, sizeof(e));
		__atomic_thread_fence(__ATOMIC_RELEASE);
		__atomic_store_n((uint16_t *)(p + offsetof(struct rk1828_pci_cpl, flags)),
				 flags, __ATOMIC_RELEASE);
	}
	pq->cq_tail = (pq->cq_tail + 1) & (pq->cq_size - 1);
	if (!pq->cq_tail)
		pq->phase ^= 1;
	pq->raise = true;
	return true;
}

/* Post every completion of queue @q that is ready and fits. */
static void complete_queue(struct pcie_dev *d, unsigned int q)
{
	struct pcie_queue *pq = &d->q[q];

	if (!pq->cq_size)
		return;
	while (pq->fifo_n) {
		struct pcie_cmd *c = fifo_at(pq, 0);
		struct rk1828_hif_msg hdr;

		if (c->local_status) {
			hdr = c->hdr;
			hdr.status = htole32(c->local_status);
			hdr.data_len = 0;
		} else {
			if (!pq->cpl_ready && !receive_completion(d, q, c))
				return;
			pq->cpl_ready = true;
			hdr = pq->cpl;
			if (pq->data_fault) {
				d->dma_faults++;
				pcie_log(d, "queue %u: seq %u: %u reply bytes do not fit the buffer",
					 q, le32toh(hdr.seq), le32toh(hdr.data_len));
				hdr.status = htole32(RK1828_HIF_ST_DMA);
				hdr.data_len = 0;
			}
		}
		if (!post_completion(d, q, &hdr, c->sq_head))
			return;		/* ring full: the CQ_HEAD doorbell resumes */
		pq->cpl_have = 0;
		pq->cpl_ready = false;
		fifo_pop(pq);
	}
	/* Completion bytes with no command: cannot happen; drop them. */
	if (emu_card_out_avail(d->card, q)) {
		uint8_t sink[256];

		pcie_log(d, "queue %u: completion bytes with no command, dropped", q);
		while (emu_card_read(d->card, q, sink, sizeof(sink)))
			continue;
	}
}

/**
 * pcie_ring_complete() - post what the card completed, raise the vectors
 * @d: the device
 */
void pcie_ring_complete(struct pcie_dev *d)
{
	static const uint64_t one = 1;
	unsigned int q;

	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		struct pcie_queue *pq = &d->q[q];

		complete_queue(d, q);
		if (!pq->raise)
			continue;
		pq->raise = false;
		if (pq->vector < d->n_irqfd) {
			if (write(d->irqfd[pq->vector], &one, sizeof(one)) < 0 &&
			    errno != EAGAIN)
				pcie_log(d, "vector %u: %s", pq->vector, strerror(errno));
			d->raised[pq->vector]++;
		}
	}
}

/**
 * pcie_ring_drop() - forget every command of queue @q (after the card
 *	dropped them in a reset)
 * @d: the device
 * @q: the queue
 */
void pcie_ring_drop(struct pcie_dev *d, unsigned int q)
{
	struct pcie_queue *pq = &d->q[q];

	while (pq->fifo_n)
		fifo_pop(pq);
	pq->fifo_head = 0;
	pq->cpl_have = 0;
	pq->cpl_ready = false;
	pq->raise = false;
}

/**
 * pcie_ring_restart() - both rings of queue @q start again at index 0,
 *	phase 1 (RESET_QUEUES); bases and sizes are kept
 * @d: the device
 * @q: the queue
 */
void pcie_ring_restart(struct pcie_dev *d, unsigned int q)
{
	struct pcie_queue *pq = &d->q[q];

	pcie_ring_drop(d, q);
	pq->sq_head = 0;
	pq->sq_tail = 0;
	pq->cq_head = 0;
	pq->cq_tail = 0;
	pq->phase = 1;
}
