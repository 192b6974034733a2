// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * PCIe transport of the RK1828 card (kernel/rk1828_hif_pci.h): registers
 * in BAR0; per hardware queue a descriptor ring and a completion ring in
 * coherent host memory and an MSI-X vector; command data moved by the
 * card's own bus-master DMA from and to the pages of host BOs, described
 * by scatter-gather lists built from their DMA-mapped sg_tables. Commands,
 * contexts and the memory model are those of the USB link; the transport
 * runs whole commands (&rk1828_transport_ops.exec) where USB streams
 * bytes.
 */

#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/iopoll.h>
#include <linux/kstrtox.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/rk1828_accel.h>

#include "rk1828_drv.h"
#include "rk1828_hif_engine.h"
#include "rk1828_hif_pci.h"

/* Entries of each descriptor and completion ring. */
#define RK1828_PCI_RING_SIZE		64
/* Scatter-gather entries of a command's list (table of 64 KiB). */
#define RK1828_PCI_MAX_SG		4096
/* Largest WRITE/READ per command: fits the list with any page layout. */
#define RK1828_PCI_XFER_MAX		SZ_8M
/* Bounce buffer per queue, for the driver's own small buffers (INFO). */
#define RK1828_PCI_BOUNCE_SIZE		SZ_64K
/* How long a reset may take. */
#define RK1828_PCI_RESET_TIMEOUT_US	(5 * USEC_PER_SEC)

static_assert(sizeof(struct rk1828_pci_desc) == 64);
static_assert(sizeof(struct rk1828_pci_cpl) == 64);
static_assert(sizeof(struct rk1828_pci_sg) == 16);
static_assert((u64)(RK1828_PCI_MAX_SG - 1) * PAGE_SIZE >= RK1828_PCI_XFER_MAX);

struct rk1828_pci;

/**
 * struct rk1828_pci_queue - driver side of one hardware queue's rings
 * @pci: the transport
 * @index: &enum rk1828_hif_queue
 * @lock: protects @cq_head, @phase, @busy, @inside, @result and @cpl;
 *	taken by the interrupt handler
 * @sq: descriptor ring, %RK1828_PCI_RING_SIZE entries
 * @cq: completion ring, %RK1828_PCI_RING_SIZE entries
 * @sgl: scatter-gather list of the command in flight
 * @bounce: staging buffer of the command in flight's kernel buffer
 * @sq_dma: bus address of @sq
 * @cq_dma: bus address of @cq
 * @sgl_dma: bus address of @sgl
 * @bounce_dma: bus address of @bounce
 * @sq_tail: next descriptor slot (only the command's thread writes it,
 *	with &rk1828_hif_queue_state.lock held, or the reset)
 * @cq_head: next completion slot to look at
 * @phase: phase bit that marks new completions in this pass over @cq
 * @busy: a command is posted and neither completed nor given up
 * @inside: rk1828_pci_exec() uses the rings or the bounce buffer; the
 *	abort waits until it stops
 * @result: 0 once the completion arrived, -ECANCELED when aborted
 * @cpl: the completion header of the command in flight
 * @done: completed with @result
 * @idle: woken when @inside drops
 * @irq_name: name of the queue's vector in /proc/interrupts
 */
struct rk1828_pci_queue {
	struct rk1828_pci *pci;
	u32 index;
	spinlock_t lock; /* completion state, see above */
	struct rk1828_pci_desc *sq;
	struct rk1828_pci_cpl *cq;
	struct rk1828_pci_sg *sgl;
	void *bounce;
	dma_addr_t sq_dma;
	dma_addr_t cq_dma;
	dma_addr_t sgl_dma;
	dma_addr_t bounce_dma;
	u32 sq_tail;
	u32 cq_head;
	u32 phase;
	bool busy;
	bool inside;
	int result;
	struct rk1828_hif_msg cpl;
	struct completion done;
	wait_queue_head_t idle;
	char *irq_name;
};

/**
 * struct rk1828_pci - PCIe transport state of one card
 * @rdev: the card
 * @pdev: the PCI function
 * @regs: BAR0
 * @max_sg: scatter-gather entries per command (driver and card limits)
 * @q: the hardware queues
 */
struct rk1828_pci {
	struct rk1828_device *rdev;
	struct pci_dev *pdev;
	void __iomem *regs;
	u32 max_sg;
	struct rk1828_pci_queue q[RK1828_HIF_NUM_QUEUES];
};

static const char * const rk1828_pci_queue_names[RK1828_HIF_NUM_QUEUES] = {
	[RK1828_HIF_QUEUE_MGMT] = "mgmt",
	[RK1828_HIF_QUEUE_COMPUTE] = "compute",
	[RK1828_HIF_QUEUE_COPY] = "copy",
};

static u32 rk1828_pci_rd(struct rk1828_pci *pci, u32 reg)
{
	return readl(pci->regs + reg);
}

static void rk1828_pci_wr(struct rk1828_pci *pci, u32 reg, u32 val)
{
	writel(val, pci->regs + reg);
}

/* New completions of @pq: hand the one of the command in flight over. */
static irqreturn_t rk1828_pci_irq(int irq, void *data)
{
	struct rk1828_pci_queue *pq = data;
	bool seen = false;

	spin_lock(&pq->lock);
	for (;;) {
		struct rk1828_pci_cpl *e = &pq->cq[pq->cq_head];

		if ((le16_to_cpu(READ_ONCE(e->flags)) & RK1828_PCI_CPL_F_PHASE) !=
		    pq->phase)
			break;
		/* The entry's body was written before its phase bit. */
		dma_rmb();
		seen = true;
		if (pq->busy) {
			pq->cpl = e->hdr;
			pq->busy = false;
			pq->result = 0;
			complete(&pq->done);
		}
		if (++pq->cq_head == RK1828_PCI_RING_SIZE) {
			pq->cq_head = 0;
			pq->phase ^= 1;
		}
	}
	if (seen)
		rk1828_pci_wr(pq->pci, RK1828_PCI_QREG(pq->index, RK1828_PCI_Q_CQ_HEAD),
			      pq->cq_head);
	spin_unlock(&pq->lock);
	return seen ? IRQ_HANDLED : IRQ_NONE;
}

/*
 * Describe [@off, @off + @len) of @sgt in the queue's list; returns the
 * entry count, or -E2BIG / -EINVAL when it does not fit or @sgt is short.
 */
static int rk1828_pci_fill_sgl(struct rk1828_pci *pci,
			       struct rk1828_pci_queue *pq,
			       struct sg_table *sgt, u64 off, u64 len)
{
	struct scatterlist *sg;
	int i, n = 0;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		u64 seg = sg_dma_len(sg), take;

		if (off >= seg) {
			off -= seg;
			continue;
		}
		if (n == pci->max_sg)
			return -E2BIG;
		take = min(seg - off, len);
		pq->sgl[n].addr = cpu_to_le64(sg_dma_address(sg) + off);
		pq->sgl[n].len = cpu_to_le32((u32)take);
		pq->sgl[n].pad = 0;
		n++;
		len -= take;
		off = 0;
		if (!len)
			return n;
	}
	return -EINVAL;
}

/* Fill the descriptor's data fields for @cmd. */
static int rk1828_pci_fill_data(struct rk1828_pci *pci,
				struct rk1828_pci_queue *pq,
				const struct rk1828_hif_cmd *cmd,
				struct rk1828_pci_desc *desc)
{
	u64 len = cmd->wlen ?: cmd->rlen;
	int n;

	if (!len)
		return 0;
	if (cmd->sgt) {
		n = rk1828_pci_fill_sgl(pci, pq, cmd->sgt, cmd->sg_off, len);
		if (n < 0)
			return n;
		if (n == 1) {
			/* One piece: the card reads no list. */
			desc->data_addr = pq->sgl[0].addr;
			desc->data_count = pq->sgl[0].len;
			return 0;
		}
		desc->data_addr = cpu_to_le64(pq->sgl_dma);
		desc->data_count = cpu_to_le32(n);
		desc->flags = cpu_to_le32(RK1828_PCI_DESC_F_SGL);
		return 0;
	}
	if (len > RK1828_PCI_BOUNCE_SIZE)
		return -E2BIG;
	if (cmd->wlen)
		memcpy(pq->bounce, cmd->wdata, cmd->wlen);
	desc->data_addr = cpu_to_le64(pq->bounce_dma);
	desc->data_count = cpu_to_le32((u32)len);
	return 0;
}

static void rk1828_pci_leave(struct rk1828_pci_queue *pq)
{
	spin_lock_irq(&pq->lock);
	pq->inside = false;
	spin_unlock_irq(&pq->lock);
	wake_up_all(&pq->idle);
}

/* Post @msg with its data on @pq's ring; called with the transfer section entered. */
static int rk1828_pci_post(struct rk1828_pci *pci, struct rk1828_pci_queue *pq,
			   const struct rk1828_hif_msg *msg,
			   const struct rk1828_hif_cmd *cmd)
{
	struct rk1828_pci_desc desc = { .hdr = *msg };
	int ret;

	ret = rk1828_pci_fill_data(pci, pq, cmd, &desc);
	if (ret)
		return ret;

	spin_lock_irq(&pq->lock);
	pq->busy = true;
	pq->result = -EINPROGRESS;
	reinit_completion(&pq->done);
	spin_unlock_irq(&pq->lock);

	pq->sq[pq->sq_tail] = desc;
	pq->sq_tail = (pq->sq_tail + 1) % RK1828_PCI_RING_SIZE;
	/* The descriptor and its list are in memory before the doorbell. */
	dma_wmb();
	rk1828_pci_wr(pci, RK1828_PCI_QREG(pq->index, RK1828_PCI_Q_SQ_TAIL),
		      pq->sq_tail);
	return 0;
}

static int rk1828_pci_exec(struct rk1828_device *rdev, u32 queue, u32 gen,
			   const struct rk1828_hif_msg *msg,
			   const struct rk1828_hif_cmd *cmd,
			   struct rk1828_hif_msg *cpl, long timeout)
{
	struct rk1828_pci *pci = rdev->transport;
	struct rk1828_pci_queue *pq = &pci->q[queue];
	int ret;

	rk1828_assert_queue_locked(rdev, queue);
	if (!rk1828_xfer_begin(rdev, gen))
		return rk1828_is_gone(rdev) ? -ENODEV : -ECANCELED;
	spin_lock_irq(&pq->lock);
	pq->inside = true;
	spin_unlock_irq(&pq->lock);
	ret = rk1828_pci_post(pci, pq, msg, cmd);
	rk1828_xfer_end(rdev);
	if (ret) {
		rk1828_pci_leave(pq);
		return ret;
	}

	wait_for_completion_timeout(&pq->done, timeout);

	spin_lock_irq(&pq->lock);
	if (pq->busy) {
		/* Given up: a late completion is dropped (the reset follows). */
		pq->busy = false;
		pq->result = -ETIMEDOUT;
	}
	ret = pq->result;
	*cpl = pq->cpl;
	spin_unlock_irq(&pq->lock);

	if (!ret && cmd->rlen && !cmd->sgt &&
	    le32_to_cpu(cpl->status) == RK1828_HIF_ST_OK &&
	    le32_to_cpu(cpl->data_len) == cmd->rlen)
		memcpy(cmd->rdata, pq->bounce, cmd->rlen);
	rk1828_pci_leave(pq);
	if (ret == -ECANCELED && rk1828_is_gone(rdev))
		ret = -ENODEV;
	return ret;
}

static bool rk1828_pci_outside(struct rk1828_pci_queue *pq)
{
	bool inside;

	spin_lock_irq(&pq->lock);
	inside = pq->inside;
	spin_unlock_irq(&pq->lock);
	return !inside;
}

static void rk1828_pci_abort(struct rk1828_device *rdev)
{
	struct rk1828_pci *pci = rdev->transport;
	int q;

	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		struct rk1828_pci_queue *pq = &pci->q[q];

		spin_lock_irq(&pq->lock);
		if (pq->busy) {
			pq->busy = false;
			pq->result = -ECANCELED;
			complete(&pq->done);
		}
		spin_unlock_irq(&pq->lock);
	}
	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++)
		wait_event(pci->q[q].idle, rk1828_pci_outside(&pci->q[q]));
}

/* Ask for a reset with @cmd and wait until the card says it is done. */
static int rk1828_pci_reset_wait(struct rk1828_pci *pci, u32 cmd)
{
	u32 st;
	int ret;

	rk1828_pci_wr(pci, RK1828_PCI_REG_RESET, cmd);
	ret = readl_poll_timeout(pci->regs + RK1828_PCI_REG_STATUS, st,
				 st == U32_MAX ||
				 !(st & RK1828_PCI_STATUS_RESETTING),
				 10, RK1828_PCI_RESET_TIMEOUT_US);
	if (st == U32_MAX)
		return -ENODEV;	/* reads as all-ones: it left the bus */
	return ret;
}

/* Both sides of every ring start again at slot 0, phase 1. */
static void rk1828_pci_rings_restart(struct rk1828_pci *pci)
{
	int q;

	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		struct rk1828_pci_queue *pq = &pci->q[q];

		spin_lock_irq(&pq->lock);
		memset(pq->cq, 0, RK1828_PCI_RING_SIZE * sizeof(*pq->cq));
		pq->sq_tail = 0;
		pq->cq_head = 0;
		pq->phase = 1;
		spin_unlock_irq(&pq->lock);
	}
}

static int rk1828_pci_reset_queues(struct rk1828_device *rdev)
{
	struct rk1828_pci *pci = rdev->transport;
	int ret;

	lockdep_assert_held(&rdev->reset_lock);
	ret = rk1828_pci_reset_wait(pci, RK1828_PCI_RESET_QUEUES);
	if (!ret)
		rk1828_pci_rings_restart(pci);
	return ret;
}

static const struct rk1828_transport_ops rk1828_pci_ops = {
	.exec = rk1828_pci_exec,
	.abort = rk1828_pci_abort,
	.reset_queues = rk1828_pci_reset_queues,
};

/* Program the rings of every queue into the card (after a full reset). */
static int rk1828_pci_rings_setup(struct rk1828_pci *pci)
{
	int q;

	rk1828_pci_rings_restart(pci);
	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		struct rk1828_pci_queue *pq = &pci->q[q];

		rk1828_pci_wr(pci, RK1828_PCI_QREG(q, RK1828_PCI_Q_SQ_BASE_LO),
			      lower_32_bits(pq->sq_dma));
		rk1828_pci_wr(pci, RK1828_PCI_QREG(q, RK1828_PCI_Q_SQ_BASE_HI),
			      upper_32_bits(pq->sq_dma));
		rk1828_pci_wr(pci, RK1828_PCI_QREG(q, RK1828_PCI_Q_CQ_BASE_LO),
			      lower_32_bits(pq->cq_dma));
		rk1828_pci_wr(pci, RK1828_PCI_QREG(q, RK1828_PCI_Q_CQ_BASE_HI),
			      upper_32_bits(pq->cq_dma));
		rk1828_pci_wr(pci, RK1828_PCI_QREG(q, RK1828_PCI_Q_VECTOR), q);
		rk1828_pci_wr(pci, RK1828_PCI_QREG(q, RK1828_PCI_Q_SQ_SIZE),
			      RK1828_PCI_RING_SIZE);
		rk1828_pci_wr(pci, RK1828_PCI_QREG(q, RK1828_PCI_Q_CQ_SIZE),
			      RK1828_PCI_RING_SIZE);
	}
	if (rk1828_pci_rd(pci, RK1828_PCI_REG_STATUS) & RK1828_PCI_STATUS_RING_ERROR)
		return -EIO;
	return 0;
}

static int rk1828_pci_queue_init(struct rk1828_pci *pci, u32 q)
{
	struct rk1828_pci_queue *pq = &pci->q[q];
	struct device *dev = &pci->pdev->dev;
	int ret;

	pq->pci = pci;
	pq->index = q;
	spin_lock_init(&pq->lock);
	init_completion(&pq->done);
	init_waitqueue_head(&pq->idle);
	pq->sq = dmam_alloc_coherent(dev, RK1828_PCI_RING_SIZE * sizeof(*pq->sq),
				     &pq->sq_dma, GFP_KERNEL);
	pq->cq = dmam_alloc_coherent(dev, RK1828_PCI_RING_SIZE * sizeof(*pq->cq),
				     &pq->cq_dma, GFP_KERNEL);
	pq->sgl = dmam_alloc_coherent(dev, pci->max_sg * sizeof(*pq->sgl),
				      &pq->sgl_dma, GFP_KERNEL);
	pq->bounce = dmam_alloc_coherent(dev, RK1828_PCI_BOUNCE_SIZE,
					 &pq->bounce_dma, GFP_KERNEL);
	pq->irq_name = devm_kasprintf(dev, GFP_KERNEL, "rk1828-%s@%s",
				      rk1828_pci_queue_names[q],
				      pci_name(pci->pdev));
	if (!pq->sq || !pq->cq || !pq->sgl || !pq->bounce || !pq->irq_name)
		return -ENOMEM;

	ret = devm_request_irq(dev, pci_irq_vector(pci->pdev, q), rk1828_pci_irq,
			       0, pq->irq_name, pq);
	if (ret)
		dev_err(dev, "%s: cannot request its MSI-X vector: %d\n",
			pq->irq_name, ret);
	return ret;
}

/* Check the card's identity registers; 0 or -ENODEV. */
static int rk1828_pci_check_card(struct rk1828_pci *pci)
{
	struct device *dev = &pci->pdev->dev;
	u32 id = rk1828_pci_rd(pci, RK1828_PCI_REG_ID);
	u32 ifv = rk1828_pci_rd(pci, RK1828_PCI_REG_IF_VERSION);
	u32 caps = rk1828_pci_rd(pci, RK1828_PCI_REG_CAPS);

	if (id != RK1828_PCI_MAGIC) {
		dev_err(dev, "not an RK1828 register file (ID %#x)\n", id);
		return -ENODEV;
	}
	if ((ifv >> 16) != (RK1828_PCI_IF_VERSION >> 16)) {
		dev_err(dev, "register interface %u.%u, driver %u.%u\n",
			ifv >> 16, ifv & 0xffff, RK1828_PCI_IF_VERSION >> 16,
			RK1828_PCI_IF_VERSION & 0xffff);
		return -ENODEV;
	}
	if (RK1828_PCI_CAPS_QUEUES(caps) < RK1828_HIF_NUM_QUEUES ||
	    RK1828_PCI_CAPS_RING_SHIFT(caps) < ilog2(RK1828_PCI_RING_SIZE) ||
	    RK1828_PCI_CAPS_MAX_SG(caps) < RK1828_PCI_XFER_MAX / PAGE_SIZE + 1) {
		dev_err(dev, "card offers %u queues, rings of 2^%u, %u SG entries\n",
			RK1828_PCI_CAPS_QUEUES(caps),
			RK1828_PCI_CAPS_RING_SHIFT(caps),
			RK1828_PCI_CAPS_MAX_SG(caps));
		return -ENODEV;
	}
	pci->max_sg = min_t(u32, RK1828_PCI_CAPS_MAX_SG(caps), RK1828_PCI_MAX_SG);
	return 0;
}

/* The peer window of an interface 1.1 card (protocol.rst, "Peer window"). */
static void rk1828_pci_p2p_window(struct rk1828_pci *pci)
{
	u32 ifv = rk1828_pci_rd(pci, RK1828_PCI_REG_IF_VERSION);
	u64 base;

	if ((ifv & 0xffff) < 1)
		return;
	base = rk1828_pci_rd(pci, RK1828_PCI_REG_P2P_BASE_LO) |
	       (u64)rk1828_pci_rd(pci, RK1828_PCI_REG_P2P_BASE_HI) << 32;
	if (base)
		rk1828_p2p_set_window(pci->rdev, pci->pdev, RK1828_PCI_BAR_P2P,
				      base);
}

/* Raw link rate in Mbit/s (lanes x GT/s), as USB reports 5000 for 5 Gbit/s. */
static u32 rk1828_pci_link_speed(u32 link)
{
	static const u32 lane_mbps[] = { 0, 2500, 5000, 8000, 16000, 32000 };
	u32 speed = RK1828_PCI_LINK_SPEED(link);

	if (speed >= ARRAY_SIZE(lane_mbps))
		return 0;
	return lane_mbps[speed] * RK1828_PCI_LINK_WIDTH(link);
}

#ifdef CONFIG_DEBUG_FS
/* debugfs "pcie": both sides' ring indices of every queue. */
static int rk1828_pci_rings_show(struct seq_file *m, void *unused)
{
	struct rk1828_device *rdev = m->private;
	struct rk1828_pci *pci = rdev->transport;
	int q, idx;

	if (!drm_dev_enter(&rdev->drm, &idx))
		return -ENODEV;
	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		struct rk1828_pci_queue *pq = &pci->q[q];
		u32 sq_tail, cq_head, phase;

		spin_lock_irq(&pq->lock);
		sq_tail = pq->sq_tail;
		cq_head = pq->cq_head;
		phase = pq->phase;
		spin_unlock_irq(&pq->lock);
		seq_printf(m, "%s: irq %d, ring %u, host sq_tail %u cq_head %u phase %u, card sq_head %u cq_tail %u\n",
			   rk1828_pci_queue_names[q], pci_irq_vector(pci->pdev, q),
			   RK1828_PCI_RING_SIZE, sq_tail, cq_head, phase,
			   rk1828_pci_rd(pci, RK1828_PCI_QREG(q, RK1828_PCI_Q_SQ_HEAD)),
			   rk1828_pci_rd(pci, RK1828_PCI_QREG(q, RK1828_PCI_Q_CQ_TAIL)));
	}
	seq_printf(m, "status: %#x\n", rk1828_pci_rd(pci, RK1828_PCI_REG_STATUS));
	drm_dev_exit(idx);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rk1828_pci_rings);

/*
 * debugfs "pcie_test": write a RK1828_PCI_TEST_* knob number to make the
 * (emulated) card misbehave once, for the tests of the error paths.
 */
static ssize_t rk1828_pci_test_write(struct file *file, const char __user *buf,
				     size_t len, loff_t *ppos)
{
	struct rk1828_device *rdev = file->private_data;
	struct rk1828_pci *pci = rdev->transport;
	u32 knob;
	int ret, idx;

	ret = kstrtou32_from_user(buf, len, 0, &knob);
	if (ret)
		return ret;
	if (knob != RK1828_PCI_TEST_BAD_DMA && knob != RK1828_PCI_TEST_BAD_CPL)
		return -EINVAL;
	if (!drm_dev_enter(&rdev->drm, &idx))
		return -ENODEV;
	rk1828_pci_wr(pci, RK1828_PCI_REG_TEST, knob);
	drm_dev_exit(idx);
	return len;
}

static const struct file_operations rk1828_pci_test_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = rk1828_pci_test_write,
};

static void rk1828_pci_debugfs_init(struct rk1828_device *rdev)
{
	struct dentry *root = rdev->drm.debugfs_root;

	debugfs_create_file("pcie", 0444, root, rdev, &rk1828_pci_rings_fops);
	debugfs_create_file("pcie_test", 0200, root, rdev, &rk1828_pci_test_fops);
}
#else
static inline void rk1828_pci_debugfs_init(struct rk1828_device *rdev) { }
#endif

static void rk1828_pci_put_dma_dev(struct drm_device *drm, void *data)
{
	put_device(data);
}

/* Enable the function, map BAR0, DMA mask, MSI-X; the card's checks. */
static int rk1828_pci_enable(struct rk1828_pci *pci)
{
	struct pci_dev *pdev = pci->pdev;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	pci->regs = pcim_iomap_region(pdev, RK1828_PCI_BAR_REGS, RK1828_DRIVER_NAME);
	if (IS_ERR(pci->regs))
		return PTR_ERR(pci->regs);
	/* Bus mastering before MSI-X: the card's MSI-X writes are DMA too. */
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	dma_set_max_seg_size(&pdev->dev, U32_MAX);

	ret = rk1828_pci_check_card(pci);
	if (ret)
		return ret;
	/* Start from a clean card whatever the last driver left behind. */
	ret = rk1828_pci_reset_wait(pci, RK1828_PCI_RESET_CARD);
	if (ret) {
		dev_err(&pdev->dev, "card reset failed: %d\n", ret);
		return ret;
	}
	ret = pci_alloc_irq_vectors(pdev, RK1828_HIF_NUM_QUEUES,
				    RK1828_HIF_NUM_QUEUES, PCI_IRQ_MSIX);
	if (ret < 0) {
		dev_err(&pdev->dev, "needs %u MSI-X vectors: %d\n",
			RK1828_HIF_NUM_QUEUES, ret);
		return ret;
	}
	return 0;
}

static int rk1828_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct rk1828_device *rdev;
	struct rk1828_pci *pci;
	int ret, q;

	rdev = rk1828_device_alloc(&pdev->dev);
	if (IS_ERR(rdev))
		return PTR_ERR(rdev);
	pci = drmm_kzalloc(&rdev->drm, sizeof(*pci), GFP_KERNEL);
	if (!pci)
		return -ENOMEM;
	pci->rdev = rdev;
	pci->pdev = pdev;

	ret = rk1828_pci_enable(pci);
	if (ret)
		return ret;
	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		ret = rk1828_pci_queue_init(pci, q);
		if (ret)
			return ret;
	}
	ret = rk1828_pci_rings_setup(pci);
	if (ret) {
		dev_err(&pdev->dev, "card rejected the ring setup\n");
		return ret;
	}

	rdev->dma_dev = get_device(&pdev->dev);
	ret = drmm_add_action_or_reset(&rdev->drm, rk1828_pci_put_dma_dev,
				       rdev->dma_dev);
	if (ret)
		return ret;
	rdev->transport = pci;
	rdev->tops = &rk1828_pci_ops;
	rdev->link_type = DRM_RK1828_LINK_PCIE;
	rdev->link_speed = rk1828_pci_link_speed(rk1828_pci_rd(pci, RK1828_PCI_REG_LINK));
	rdev->bounce_size = SZ_64K;
	rdev->xfer_max = RK1828_PCI_XFER_MAX;
	rk1828_pci_p2p_window(pci);

	ret = rk1828_device_register(rdev);
	if (ret)
		return ret;
	rk1828_pci_debugfs_init(rdev);
	pci_set_drvdata(pdev, rdev);
	return 0;
}

/*
 * Removal, orderly (driver unbind, QMP device_del through the hot-plug
 * controller) or after the card vanished: exactly as a USB disconnect.
 * Then the card is reset so it never touches the rings again; they and
 * the vectors are freed when the driver detaches.
 */
static void rk1828_pci_remove(struct pci_dev *pdev)
{
	struct rk1828_device *rdev = pci_get_drvdata(pdev);
	struct rk1828_pci *pci;

	if (!rdev)
		return;
	pci = rdev->transport;
	rk1828_device_unplug(rdev);
	if (pci_device_is_present(pdev))
		rk1828_pci_reset_wait(pci, RK1828_PCI_RESET_CARD);
	pci_set_drvdata(pdev, NULL);
}

static const struct pci_device_id rk1828_pci_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_ROCKCHIP, RK1828_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, rk1828_pci_ids);

static struct pci_driver rk1828_pci_driver = {
	.name = RK1828_DRIVER_NAME,
	.id_table = rk1828_pci_ids,
	.probe = rk1828_pci_probe,
	.remove = rk1828_pci_remove,
};

/**
 * rk1828_pci_register() - register the PCIe transport driver
 *
 * Return: 0 or the errno of pci_register_driver().
 */
int rk1828_pci_register(void)
{
	return pci_register_driver(&rk1828_pci_driver);
}

/**
 * rk1828_pci_unregister() - unregister the PCIe transport driver
 */
void rk1828_pci_unregister(void)
{
	pci_unregister_driver(&rk1828_pci_driver);
}
