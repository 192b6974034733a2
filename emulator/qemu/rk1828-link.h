/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * The link between the QEMU device model of the emulated RK1828 PCIe card
 * (emulator/qemu/rk1828-pci.c, the "proxy", built into our
 * qemu-system-x86_64) and the card emulator (rk1828-emu --pcie,
 * emulator/pcie.c). It is not part of the card's host interface: the
 * guest's driver only sees the registers of kernel/rk1828_hif_pci.h, the
 * proxy forwards its BAR0 accesses here.
 *
 * One unix stream socket per card; the emulator listens, the proxy
 * connects when the device is realized. Messages are a fixed 32-byte
 * &struct rk1828_link_msg, in host byte order (both ends run on the same
 * host), optionally followed by a payload and accompanied by file
 * descriptors (SCM_RIGHTS):
 *
 * - %RK1828_LINK_HELLO (proxy -> emulator): @value = %RK1828_LINK_VERSION.
 *   The emulator answers %RK1828_LINK_HELLO_ACK with its version in @value
 *   followed by a &struct rk1828_link_identity: the card, not the proxy,
 *   decides its PCI identity, BAR0 size, link and MSI-X vector count.
 *   With a peer window (@p2p_size_mib not 0, link version 2) the answer
 *   carries one file descriptor, the memfd of the window: the proxy maps
 *   it as BAR4 (RAM, 64-bit prefetchable), so the pages of the card's
 *   window and of the BAR are the same.
 * - %RK1828_LINK_IRQFDS (proxy -> emulator): @count eventfds, one per MSI-X
 *   vector. The emulator raises vector v by writing to eventfd v; the
 *   proxy then calls msix_notify() (or sets the pending bit while the
 *   vector is masked).
 * - %RK1828_LINK_MMIO_WRITE: a guest write of @size bytes (4 or 8) of
 *   @value at BAR0 offset @addr. Posted: no answer, like a PCIe memory
 *   write.
 * - %RK1828_LINK_MMIO_READ: a guest read of @size bytes at @addr; the
 *   emulator answers %RK1828_LINK_MMIO_DATA with the value. The vCPU waits
 *   for it (a non-posted PCIe read).
 * - %RK1828_LINK_MEMMAP: the guest memory the card may reach by bus-master
 *   DMA, sent whenever bus mastering is switched on or off and after a
 *   reset: @count &struct rk1828_link_region entries follow, and the
 *   message carries the @size distinct file descriptors they name (the
 *   guest RAM is a memory-backend-memfd with share=on, and the peer
 *   windows of the other cards, also memfds, at the bus addresses of
 *   their BAR4). Sent again whenever the guest's memory map changes
 *   while bus mastering is on (BARs assigned, a card hot-plugged or
 *   removed). @count 0: DMA is disabled (bus mastering off), every access
 *   of the card fails.
 * - %RK1828_LINK_RESET: the device was reset (system reset, FLR): the card
 *   performs a full reset and disables its rings.
 */
#ifndef RK1828_LINK_H
#define RK1828_LINK_H

#include <stdint.h>

#define RK1828_LINK_MAGIC	0x4b4e4c52u	/* "RLNK" */
#define RK1828_LINK_VERSION	2u	/* 2: peer window (p2p_size_mib) */

/* Most MSI-X vectors and memory regions a link message may carry. */
#define RK1828_LINK_MAX_VECTORS	16u
#define RK1828_LINK_MAX_REGIONS	64u

enum rk1828_link_type {
	RK1828_LINK_HELLO = 1,
	RK1828_LINK_HELLO_ACK = 2,
	RK1828_LINK_MMIO_WRITE = 3,
	RK1828_LINK_MMIO_READ = 4,
	RK1828_LINK_MMIO_DATA = 5,
	RK1828_LINK_MEMMAP = 6,
	RK1828_LINK_RESET = 7,
	RK1828_LINK_IRQFDS = 8,
};

/**
 * struct rk1828_link_msg - one message on the proxy <-> emulator link
 * @magic: %RK1828_LINK_MAGIC
 * @type: &enum rk1828_link_type
 * @size: access size in bytes (MMIO messages), file descriptors (MEMMAP)
 * @count: eventfds (IRQFDS) or regions (MEMMAP) that come with it
 * @addr: BAR0 offset (MMIO messages)
 * @value: the data (MMIO messages), the version (HELLO, HELLO_ACK)
 */
struct rk1828_link_msg {
	uint32_t magic;
	uint32_t type;
	uint32_t size;
	uint32_t count;
	uint64_t addr;
	uint64_t value;
};

/**
 * struct rk1828_link_identity - the card's PCI identity (HELLO_ACK payload)
 * @vendor_id: PCI vendor id
 * @device_id: PCI device id
 * @subsystem_vendor_id: PCI subsystem vendor id
 * @subsystem_id: PCI subsystem id
 * @class_code: 24-bit class code (class, subclass, programming interface)
 * @revision: revision id
 * @link_speed: PCIe link speed code (1 = 2.5 GT/s, 2 = 5 GT/s, 3 = 8 GT/s)
 * @link_width: PCIe lanes
 * @vectors: MSI-X vectors, 1 to %RK1828_LINK_MAX_VECTORS
 * @bar0_size: bytes of BAR0 (registers), a power of two >= 4096
 * @p2p_size_mib: MiB of the peer window (BAR4), a power of two; 0: none
 * @pad: zero
 */
struct rk1828_link_identity {
	uint16_t vendor_id;
	uint16_t device_id;
	uint16_t subsystem_vendor_id;
	uint16_t subsystem_id;
	uint32_t class_code;
	uint8_t revision;
	uint8_t link_speed;
	uint8_t link_width;
	uint8_t vectors;
	uint32_t bar0_size;
	uint32_t p2p_size_mib;
	uint32_t pad[2];
};

/**
 * struct rk1828_link_region - guest memory reachable by DMA
 * @gpa: bus address (guest physical address; no IOMMU) of the range
 * @size: bytes
 * @offset: offset of @gpa in the file
 * @fd_index: which of the message's file descriptors holds it
 * @pad: zero
 */
struct rk1828_link_region {
	uint64_t gpa;
	uint64_t size;
	uint64_t offset;
	uint32_t fd_index;
	uint32_t pad;
};

_Static_assert(sizeof(struct rk1828_link_msg) == 32, "link message is 32 bytes");
_Static_assert(sizeof(struct rk1828_link_region) == 32, "link region is 32 bytes");
_Static_assert(sizeof(struct rk1828_link_identity) == 32, "link identity is 32 bytes");

#endif
