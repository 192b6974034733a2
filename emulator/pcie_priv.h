/* SPDX-License-Identifier: MIT */
/*
 * Card emulator, PCIe front end: state shared by its files (pcie.c: link
 * and registers, pcie_ring.c: rings, pcie_dma.c: guest memory). Only the
 * I/O thread of emu_pcie_serve() touches any of it.
 */
#ifndef RK_EMU_PCIE_PRIV_H
#define RK_EMU_PCIE_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "card.h"
#include "pcie.h"
#include "qemu/rk1828-link.h"
#include "rk1828_hif_pci.h"

#define EMU_PCIE_RING_MAX	(1u << EMU_PCIE_RING_SHIFT)

/**
 * struct dma_region - guest memory the card can reach
 * @gpa: first bus address
 * @size: bytes
 * @host: where the emulator sees @gpa
 */
struct dma_region {
	uint64_t gpa;
	uint64_t size;
	uint8_t *host;
};

/**
 * struct dma_file - a guest RAM file mapped into the emulator (kept until
 *	the end: pointers handed to the card's workers stay valid)
 * @dev: st_dev of the file
 * @ino: st_ino of the file
 * @base: the shared mapping
 * @size: its length
 */
struct dma_file {
	dev_t dev;
	ino_t ino;
	uint8_t *base;
	size_t size;
};

/**
 * struct dma_seg - a host-side view of a piece of a command's buffer
 * @p: host pointer into guest memory
 * @len: bytes
 */
struct dma_seg {
	uint8_t *p;
	uint64_t len;
};

/**
 * struct dma_map - what bus-master DMA reaches now
 * @r: regions, sorted as the proxy sent them
 * @n: entries in @r; 0 while bus mastering is off
 * @files: every file ever mapped
 * @n_files: entries in @files
 */
struct dma_map {
	struct dma_region r[RK1828_LINK_MAX_REGIONS];
	unsigned int n;
	struct dma_file *files;
	unsigned int n_files;
};

/**
 * struct pcie_cmd - a command taken from a descriptor ring, waiting for its
 *	completion
 * @hdr: its header (for completions the front end makes itself)
 * @sq_head: descriptor ring index after it
 * @local_status: non-zero: never given to the card; the front end
 *	completes it with this status (a DMA fault) in its turn
 * @segs: where reply data (INFO, READ) goes; NULL for none
 * @n_segs: entries in @segs
 */
struct pcie_cmd {
	struct rk1828_hif_msg hdr;
	uint32_t sq_head;
	uint32_t local_status;
	struct dma_seg *segs;
	unsigned int n_segs;
};

/**
 * struct pcie_queue - one queue's rings and completion parser
 * @sq_base: descriptor ring bus address
 * @cq_base: completion ring bus address
 * @sq_size: descriptor ring entries, 0 when disabled
 * @cq_size: completion ring entries, 0 when disabled
 * @sq_head: next descriptor the card fetches
 * @sq_tail: doorbell value
 * @cq_head: doorbell value
 * @cq_tail: next completion slot the card writes
 * @phase: phase bit of the current pass over the completion ring
 * @vector: MSI-X vector
 * @fifo: commands given to the card (or failed locally), in order
 * @fifo_head: index of the oldest in @fifo
 * @fifo_n: commands in @fifo
 * @cpl: the completion header being received from the card
 * @cpl_have: bytes of @cpl received
 * @data_done: reply data bytes of @cpl received
 * @seg_i: piece of the command's buffer the next reply byte goes to
 * @seg_off: offset in that piece
 * @data_fault: reply data did not fit the command's buffer
 * @cpl_ready: @cpl and its data are complete; posting waits for room
 * @raise: a completion was posted since the last interrupt
 */
struct pcie_queue {
	uint64_t sq_base;
	uint64_t cq_base;
	uint32_t sq_size;
	uint32_t cq_size;
	uint32_t sq_head;
	uint32_t sq_tail;
	uint32_t cq_head;
	uint32_t cq_tail;
	uint32_t phase;
	uint32_t vector;
	struct pcie_cmd fifo[EMU_PCIE_RING_MAX];
	unsigned int fifo_head;
	unsigned int fifo_n;
	struct rk1828_hif_msg cpl;
	size_t cpl_have;
	uint64_t data_done;
	unsigned int seg_i;
	uint64_t seg_off;
	bool data_fault;
	bool cpl_ready;
	bool raise;
};

/**
 * struct pcie_dev - the card's PCIe function
 * @card: the card model
 * @fd: connection to the proxy
 * @verbose: log on stderr
 * @irqfd: eventfd of each MSI-X vector, -1 until the proxy sent them
 * @n_irqfd: entries of @irqfd received
 * @dma: guest memory map
 * @q: the queues
 * @scratch: REG_SCRATCH
 * @ring_error: STATUS.RING_ERROR
 * @test: armed RK1828_PCI_TEST_* knobs (bit n - 1 for knob n)
 * @raised: interrupts raised, per vector (statistics)
 * @dma_faults: commands failed with %RK1828_HIF_ST_DMA
 */
struct pcie_dev {
	struct emu_card *card;
	int fd;
	int verbose;
	int irqfd[RK1828_LINK_MAX_VECTORS];
	unsigned int n_irqfd;
	struct dma_map dma;
	struct pcie_queue q[RK1828_HIF_NUM_QUEUES];
	uint32_t scratch;
	bool ring_error;
	uint32_t test;
	uint64_t raised[RK1828_LINK_MAX_VECTORS];
	uint64_t dma_faults;
};

void pcie_log(const struct pcie_dev *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* pcie_dma.c */
int pcie_dma_set_map(struct dma_map *m, const struct rk1828_link_region *r,
		     unsigned int n, const int *fds, unsigned int n_fds);
void pcie_dma_fini(struct dma_map *m);
uint8_t *pcie_dma_ptr(const struct dma_map *m, uint64_t addr, uint64_t len);
int pcie_dma_buffer(const struct dma_map *m, const struct rk1828_pci_desc *desc,
		    struct dma_seg **segs, unsigned int *n_segs, uint64_t *cap);

/* pcie_ring.c */
void pcie_ring_doorbell(struct pcie_dev *d, unsigned int q);
void pcie_ring_complete(struct pcie_dev *d);
void pcie_ring_restart(struct pcie_dev *d, unsigned int q);
void pcie_ring_drop(struct pcie_dev *d, unsigned int q);

#endif
