/* SPDX-License-Identifier: MIT */
/*
 * Card emulator: the PCIe front end. The card's registers, descriptor and
 * completion rings and its bus-master DMA engine (kernel/rk1828_hif_pci.h,
 * Documentation/accel/rk1828/protocol.rst section PCIe), reached by the
 * QEMU device model emulator/qemu/rk1828-pci.c over the link protocol of
 * emulator/qemu/rk1828-link.h. Commands fetched from the rings go into the
 * same card model (emulator/card.h) as the USB front end's bulk streams.
 */
#ifndef RK_EMU_PCIE_H
#define RK_EMU_PCIE_H

#include "card.h"

/* Descriptor and completion rings: most entries per ring (log2). */
#define EMU_PCIE_RING_SHIFT	12
/* Most scatter-gather entries per command. */
#define EMU_PCIE_MAX_SG		4096
/* MSI-X vectors: one per queue. */
#define EMU_PCIE_VECTORS	RK1828_HIF_NUM_QUEUES

/**
 * emu_pcie_serve() - present @card as a PCIe device on connection @fd
 * @card: the card model (its queues are the rings' queues)
 * @fd: connected stream socket to the rk1828-pci proxy in QEMU; not closed
 * @stop_fd: file descriptor that becomes readable when the emulator must
 *	stop (a signalfd), or -1
 * @verbose: log register accesses and ring traffic on stderr when non-zero
 *
 * Runs the I/O loop on the calling thread until the peer closes the
 * connection (the device was unplugged or QEMU quit) or @stop_fd fires.
 * This thread alone touches the registers, the rings and the guest memory
 * map; the card's workers copy WRITE data straight from guest memory.
 *
 * Return: 0 when the peer closed the connection, 1 when @stop_fd fired,
 * -1 on a protocol or I/O error (logged).
 */
int emu_pcie_serve(struct emu_card *card, int fd, int stop_fd, int verbose);

#endif
