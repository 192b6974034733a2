/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * RK1828 card host interface, PCIe link: identity, BAR0 registers, and the
 * descriptor, scatter-gather and completion formats of the rings in host
 * memory. The commands, statuses, contexts and memory model are those of
 * kernel/rk1828_hif.h; only the way they travel differs from USB. Shared
 * by the driver (kernel/rk1828_pci.c) and the card emulator
 * (emulator/pcie.c), so it only uses <linux/types.h> types. All fields
 * are little endian. The normative description is
 * Documentation/accel/rk1828/protocol.rst, section "PCIe".
 */
#ifndef __RK1828_HIF_PCI_H__
#define __RK1828_HIF_PCI_H__

#include <linux/types.h>

#include "rk1828_hif.h"

/* PCI identity: Rockchip's vendor id, our device id, processing accelerator. */
#define RK1828_PCI_VENDOR_ID		0x1d87
#define RK1828_PCI_DEVICE_ID		0x1828
#define RK1828_PCI_CLASS		0x120000

/* BAR0 (64-bit, so BAR0+1): registers, 4 KiB. BAR2: MSI-X table and PBA. */
#define RK1828_PCI_BAR_REGS		0
#define RK1828_PCI_BAR0_SIZE		0x1000

/* Value of %RK1828_PCI_REG_ID: "RPC1". */
#define RK1828_PCI_MAGIC		0x31435052
/*
 * Register interface version 1.1, (major << 16) | minor: 1.1 adds the
 * peer window (BAR4, P2P_BASE).
 */
#define RK1828_PCI_IF_VERSION		0x00010001
/* BAR4 (64-bit prefetchable, so BAR4+5): the peer window, optional. */
#define RK1828_PCI_BAR_P2P		4

/*
 * Global registers, 32 bits each. RO: writes are ignored; WO: reads
 * return 0.
 *
 * ID (RO): %RK1828_PCI_MAGIC.
 * IF_VERSION (RO): %RK1828_PCI_IF_VERSION, the layout of this header.
 * HIF_VERSION (RO): %RK1828_HIF_VERSION, the command set the card speaks.
 * CAPS (RO): RK1828_PCI_CAPS_* fields.
 * LINK (RO): RK1828_PCI_LINK_* fields, the link as the card trained it.
 * STATUS (RO): RK1828_PCI_STATUS_* bits.
 * RESET (WO): RK1828_PCI_RESET_* command; the reset is done when
 *	STATUS.RESETTING reads 0.
 * TEST (WO): RK1828_PCI_TEST_* test knobs of the emulator (a misbehaving
 *	card on purpose); real cards ignore them.
 * SCRATCH (RW): no effect; a register read round trip for link tests.
 * P2P_BASE_LO/HI (RO, interface 1.1): card address of offset 0 of the
 *	peer window (BAR4), whose size is the BAR's; 0 without a window.
 */
#define RK1828_PCI_REG_ID		0x000
#define RK1828_PCI_REG_IF_VERSION	0x004
#define RK1828_PCI_REG_HIF_VERSION	0x008
#define RK1828_PCI_REG_CAPS		0x00c
#define RK1828_PCI_REG_LINK		0x010
#define RK1828_PCI_REG_STATUS		0x014
#define RK1828_PCI_REG_RESET		0x018
#define RK1828_PCI_REG_TEST		0x01c
#define RK1828_PCI_REG_SCRATCH		0x020
#define RK1828_PCI_REG_P2P_BASE_LO	0x024
#define RK1828_PCI_REG_P2P_BASE_HI	0x028

/* CAPS: queues, largest ring (log2 entries), most SG entries per command. */
#define RK1828_PCI_CAPS_QUEUES(c)	((c) & 0xff)
#define RK1828_PCI_CAPS_RING_SHIFT(c)	(((c) >> 8) & 0xff)
#define RK1828_PCI_CAPS_MAX_SG(c)	(((c) >> 16) & 0xffff)

/* LINK: speed code as in the PCIe Link Status register (2 = 5 GT/s), lanes. */
#define RK1828_PCI_LINK_SPEED(l)	((l) & 0xf)
#define RK1828_PCI_LINK_WIDTH(l)	(((l) >> 4) & 0x3f)

/* STATUS bits. */
#define RK1828_PCI_STATUS_READY		0x1U	/* rings may be configured */
#define RK1828_PCI_STATUS_RESETTING	0x2U	/* a reset is in progress */
#define RK1828_PCI_STATUS_RING_ERROR	0x4U	/* bad ring setup, until reset */

/* RESET commands. */
#define RK1828_PCI_RESET_QUEUES		1	/* as RK1828_HIF_REQ_RESET_QUEUES */
#define RK1828_PCI_RESET_CARD		2	/* full reset, rings disabled */

/* TEST knobs (emulator only), each applies once. */
#define RK1828_PCI_TEST_BAD_DMA		1	/* next data address out of range */
#define RK1828_PCI_TEST_BAD_CPL		2	/* next completion: wrong seq */

/*
 * Queue registers: queue q (&enum rk1828_hif_queue) at
 * RK1828_PCI_QUEUE_BASE + q * RK1828_PCI_QUEUE_STRIDE.
 *
 * SQ_BASE_LO/HI, CQ_BASE_LO/HI (RW): bus addresses of the descriptor ring
 *	and the completion ring, 64-byte aligned.
 * SQ_SIZE, CQ_SIZE (RW): entries, a power of two from 2 to the CAPS
 *	limit; writing a size (re)starts that ring at index 0; 0 disables it.
 * SQ_TAIL (WO): doorbell, index of the slot after the last descriptor
 *	the host made valid.
 * CQ_HEAD (WO): doorbell, index of the slot after the last completion
 *	the host consumed.
 * SQ_HEAD, CQ_TAIL (RO): the card's own indices (diagnostics).
 * VECTOR (RW): MSI-X vector the card raises after writing completions of
 *	this queue; resets to the queue number.
 */
#define RK1828_PCI_QUEUE_BASE		0x100
#define RK1828_PCI_QUEUE_STRIDE		0x40
#define RK1828_PCI_Q_SQ_BASE_LO		0x00
#define RK1828_PCI_Q_SQ_BASE_HI		0x04
#define RK1828_PCI_Q_SQ_SIZE		0x08
#define RK1828_PCI_Q_SQ_TAIL		0x0c
#define RK1828_PCI_Q_CQ_BASE_LO		0x10
#define RK1828_PCI_Q_CQ_BASE_HI		0x14
#define RK1828_PCI_Q_CQ_SIZE		0x18
#define RK1828_PCI_Q_CQ_HEAD		0x1c
#define RK1828_PCI_Q_SQ_HEAD		0x20
#define RK1828_PCI_Q_CQ_TAIL		0x24
#define RK1828_PCI_Q_VECTOR		0x28

#define RK1828_PCI_QREG(q, r) \
	(RK1828_PCI_QUEUE_BASE + (q) * RK1828_PCI_QUEUE_STRIDE + (r))

/*
 * Status of a command whose data the card could not move by DMA: an
 * address outside the host memory the card can reach, bus mastering off,
 * or a buffer too small for the data (driver errno -EIO). PCIe only.
 */
#define RK1828_HIF_ST_DMA		6

/* Descriptor flags. */
#define RK1828_PCI_DESC_F_SGL		0x1U	/* @data_addr is an SG list */

/**
 * struct rk1828_pci_desc - one command in a descriptor ring (64 bytes)
 * @hdr: the command header exactly as on USB (&struct rk1828_hif_msg);
 *	@hdr.data_len is the number of bytes the card fetches for WRITE
 * @data_addr: bus address of the command's data: the WRITE payload the
 *	card reads, or the buffer the card writes the INFO/READ reply data
 *	to; with %RK1828_PCI_DESC_F_SGL the address of @data_count
 *	&struct rk1828_pci_sg entries instead
 * @data_count: bytes at @data_addr, or SG entries with
 *	%RK1828_PCI_DESC_F_SGL; 0 when the command has no data
 * @flags: RK1828_PCI_DESC_F_*
 */
struct rk1828_pci_desc {
	struct rk1828_hif_msg hdr;
	__le64 data_addr;
	__le32 data_count;
	__le32 flags;
};

/**
 * struct rk1828_pci_sg - one scatter-gather entry (16 bytes)
 * @addr: bus address
 * @len: bytes, at least 1
 * @pad: zero
 */
struct rk1828_pci_sg {
	__le64 addr;
	__le32 len;
	__le32 pad;
};

/* Completion flags. */
#define RK1828_PCI_CPL_F_PHASE		0x1U

/**
 * struct rk1828_pci_cpl - one entry of a completion ring (64 bytes)
 * @hdr: the completion header exactly as on USB; @hdr.data_len reply
 *	bytes were written to the descriptor's buffer before this entry
 * @sq_head: the card's descriptor ring index after the command
 * @flags: RK1828_PCI_CPL_F_*; the phase bit is 1 in the first pass over
 *	the ring after it was (re)started and flips at every wrap, so the
 *	host tells new entries from old ones without reading a register
 * @reserved: zero
 */
struct rk1828_pci_cpl {
	struct rk1828_hif_msg hdr;
	__le16 sq_head;
	__le16 flags;
	__le32 reserved[3];
};

#endif /* __RK1828_HIF_PCI_H__ */
