// SPDX-License-Identifier: MIT
/*
 * Card emulator, PCIe front end: the link to the QEMU proxy
 * (emulator/qemu/rk1828-link.h) and the card's BAR0 registers
 * (kernel/rk1828_hif_pci.h). The rings live in pcie_ring.c, the DMA
 * window in pcie_dma.c. One thread (the caller of emu_pcie_serve()) does
 * all of it: a register access is answered before the next one is read,
 * so a reset is complete when the write that asked for it is followed by
 * any read.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pcie_priv.h"

/* Receive buffer: a message and the largest payload (MEMMAP). */
#define LINK_BUF	(sizeof(struct rk1828_link_msg) + \
			 RK1828_LINK_MAX_REGIONS * sizeof(struct rk1828_link_region))
/* File descriptors received but not yet claimed by their message. */
#define LINK_MAX_FDS	(2 * RK1828_LINK_MAX_REGIONS)

/* PCIe 2.1 x2: 5 GT/s (speed code 2), two lanes. */
#define EMU_PCIE_LINK_SPEED	2
#define EMU_PCIE_LINK_WIDTH	2

struct link_rx {
	uint8_t buf[LINK_BUF];
	size_t have;
	int fds[LINK_MAX_FDS];
	unsigned int n_fds;
};

void pcie_log(const struct pcie_dev *d, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	(void)d;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rk1828-emu: pcie: %s\n", buf);
}

static int link_send(struct pcie_dev *d, const void *buf, size_t len);

/* Send @len bytes of @buf with one file descriptor in the first piece. */
static int link_send_fd(struct pcie_dev *d, const void *buf, size_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c;
	ssize_t n;

	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	do {
		n = sendmsg(d->fd, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		pcie_log(d, "sendmsg: %s", strerror(errno));
		return -1;
	}
	/* The descriptor went with the first byte; the rest is plain. */
	return link_send(d, (const uint8_t *)buf + n, len - (size_t)n);
}

static int link_send(struct pcie_dev *d, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(d->fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			pcie_log(d, "send: %s", strerror(errno));
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- registers ------------------------------------------------------------ */

static uint32_t queue_reg_read(struct pcie_dev *d, unsigned int q, uint32_t r)
{
	const struct pcie_queue *pq = &d->q[q];

	switch (r) {
	case RK1828_PCI_Q_SQ_BASE_LO: return (uint32_t)pq->sq_base;
	case RK1828_PCI_Q_SQ_BASE_HI: return (uint32_t)(pq->sq_base >> 32);
	case RK1828_PCI_Q_SQ_SIZE: return pq->sq_size;
	case RK1828_PCI_Q_CQ_BASE_LO: return (uint32_t)pq->cq_base;
	case RK1828_PCI_Q_CQ_BASE_HI: return (uint32_t)(pq->cq_base >> 32);
	case RK1828_PCI_Q_CQ_SIZE: return pq->cq_size;
	case RK1828_PCI_Q_SQ_HEAD: return pq->sq_head;
	case RK1828_PCI_Q_CQ_TAIL: return pq->cq_tail;
	case RK1828_PCI_Q_VECTOR: return pq->vector;
	default: return 0;
	}
}

static uint32_t reg_read(struct pcie_dev *d, uint64_t off)
{
	if (off >= RK1828_PCI_QUEUE_BASE &&
	    off < RK1828_PCI_QREG(RK1828_HIF_NUM_QUEUES, 0))
		return queue_reg_read(d, (unsigned int)((off - RK1828_PCI_QUEUE_BASE) /
							RK1828_PCI_QUEUE_STRIDE),
				      (uint32_t)((off - RK1828_PCI_QUEUE_BASE) %
						 RK1828_PCI_QUEUE_STRIDE));
	switch (off) {
	case RK1828_PCI_REG_ID: return RK1828_PCI_MAGIC;
	case RK1828_PCI_REG_IF_VERSION: return RK1828_PCI_IF_VERSION;
	case RK1828_PCI_REG_HIF_VERSION: return RK1828_HIF_VERSION;
	case RK1828_PCI_REG_CAPS:
		return RK1828_HIF_NUM_QUEUES | (EMU_PCIE_RING_SHIFT << 8) |
		       ((uint32_t)EMU_PCIE_MAX_SG << 16);
	case RK1828_PCI_REG_LINK:
		return EMU_PCIE_LINK_SPEED | (EMU_PCIE_LINK_WIDTH << 4);
	case RK1828_PCI_REG_STATUS:
		return RK1828_PCI_STATUS_READY |
		       (d->ring_error ? RK1828_PCI_STATUS_RING_ERROR : 0);
	case RK1828_PCI_REG_SCRATCH: return d->scratch;
	case RK1828_PCI_REG_P2P_BASE_LO:
	case RK1828_PCI_REG_P2P_BASE_HI: {
		uint64_t base, size;

		if (emu_card_p2p_window(d->card, &base, &size) < 0)
			return 0;
		return off == RK1828_PCI_REG_P2P_BASE_LO ? (uint32_t)base :
		       (uint32_t)(base >> 32);
	}
	default: return 0;
	}
}

/* A ring size: 0 (off) or a power of two from 2 to the CAPS limit. */
static bool ring_size_ok(uint32_t v)
{
	return v == 0 || (v >= 2 && v <= EMU_PCIE_RING_MAX && !(v & (v - 1)));
}

static void set_base(struct pcie_dev *d, uint64_t *base, uint32_t v, bool hi)
{
	*base = hi ? (*base & 0xffffffffu) | ((uint64_t)v << 32) :
		     (*base & ~(uint64_t)0xffffffffu) | v;
	if (*base & 63) {
		pcie_log(d, "ring base %#" PRIx64 " is not 64-byte aligned", *base);
		d->ring_error = true;
	}
}

static void queue_reg_write(struct pcie_dev *d, unsigned int q, uint32_t r,
			    uint32_t v)
{
	struct pcie_queue *pq = &d->q[q];

	switch (r) {
	case RK1828_PCI_Q_SQ_BASE_LO: set_base(d, &pq->sq_base, v, false); break;
	case RK1828_PCI_Q_SQ_BASE_HI: set_base(d, &pq->sq_base, v, true); break;
	case RK1828_PCI_Q_CQ_BASE_LO: set_base(d, &pq->cq_base, v, false); break;
	case RK1828_PCI_Q_CQ_BASE_HI: set_base(d, &pq->cq_base, v, true); break;
	case RK1828_PCI_Q_SQ_SIZE:
	case RK1828_PCI_Q_CQ_SIZE:
		if (!ring_size_ok(v)) {
			pcie_log(d, "queue %u: bad ring size %u", q, v);
			d->ring_error = true;
			v = 0;
		}
		if (r == RK1828_PCI_Q_SQ_SIZE) {
			pq->sq_size = v;
			pq->sq_head = pq->sq_tail = 0;
		} else {
			pq->cq_size = v;
			pq->cq_head = pq->cq_tail = 0;
			pq->phase = 1;
		}
		break;
	case RK1828_PCI_Q_SQ_TAIL:
		pq->sq_tail = v;
		pcie_ring_doorbell(d, q);
		break;
	case RK1828_PCI_Q_CQ_HEAD:
		if (!pq->cq_size || v >= pq->cq_size) {
			pcie_log(d, "queue %u: completion doorbell %u beyond the ring", q, v);
			d->ring_error = true;
			break;
		}
		pq->cq_head = v;
		pcie_ring_complete(d);	/* a full ring has room again */
		break;
	case RK1828_PCI_Q_VECTOR:
		if (v < EMU_PCIE_VECTORS)
			pq->vector = v;
		break;
	default:
		break;
	}
}

/* RK1828_PCI_RESET_CARD, and a device reset by QEMU. */
static void reset_card(struct pcie_dev *d)
{
	unsigned int q;

	emu_card_reset_all(d->card);
	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		pcie_ring_drop(d, q);
		memset(&d->q[q], 0, sizeof(d->q[q]));
		d->q[q].vector = q;
		d->q[q].phase = 1;
	}
	d->ring_error = false;
	d->test = 0;
}

static void reg_write(struct pcie_dev *d, uint64_t off, uint32_t v)
{
	unsigned int q;

	if (off >= RK1828_PCI_QUEUE_BASE &&
	    off < RK1828_PCI_QREG(RK1828_HIF_NUM_QUEUES, 0)) {
		queue_reg_write(d, (unsigned int)((off - RK1828_PCI_QUEUE_BASE) /
						  RK1828_PCI_QUEUE_STRIDE),
				(uint32_t)((off - RK1828_PCI_QUEUE_BASE) %
					   RK1828_PCI_QUEUE_STRIDE), v);
		return;
	}
	switch (off) {
	case RK1828_PCI_REG_RESET:
		if (v == RK1828_PCI_RESET_QUEUES) {
			emu_card_reset_queues(d->card);
			for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++)
				pcie_ring_restart(d, q);
			if (d->verbose)
				pcie_log(d, "queues reset");
		} else if (v == RK1828_PCI_RESET_CARD) {
			reset_card(d);
			pcie_log(d, "card reset");
		}
		break;
	case RK1828_PCI_REG_TEST:
		if (v == RK1828_PCI_TEST_BAD_DMA || v == RK1828_PCI_TEST_BAD_CPL) {
			d->test |= 1u << (v - 1);
			pcie_log(d, "test knob %u armed", v);
		}
		break;
	case RK1828_PCI_REG_SCRATCH:
		d->scratch = v;
		break;
	default:
		break;
	}
}

/* ---- link messages ---------------------------------------------------------- */

static int on_hello(struct pcie_dev *d, const struct rk1828_link_msg *m)
{
	struct {
		struct rk1828_link_msg msg;
		struct rk1828_link_identity id;
	} ack;
	uint64_t base, size;
	int wfd;

	memset(&ack, 0, sizeof(ack));
	ack.msg.magic = RK1828_LINK_MAGIC;
	ack.msg.type = RK1828_LINK_HELLO_ACK;
	ack.msg.value = RK1828_LINK_VERSION;
	ack.id.vendor_id = RK1828_PCI_VENDOR_ID;
	ack.id.device_id = RK1828_PCI_DEVICE_ID;
	ack.id.subsystem_vendor_id = RK1828_PCI_VENDOR_ID;
	ack.id.subsystem_id = 0x0001;
	ack.id.class_code = RK1828_PCI_CLASS;
	ack.id.revision = 0x01;
	ack.id.link_speed = EMU_PCIE_LINK_SPEED;
	ack.id.link_width = EMU_PCIE_LINK_WIDTH;
	ack.id.vectors = EMU_PCIE_VECTORS;
	ack.id.bar0_size = RK1828_PCI_BAR0_SIZE;
	if (m->value != RK1828_LINK_VERSION)
		pcie_log(d, "proxy speaks link version %" PRIu64 ", we speak %u",
			 m->value, RK1828_LINK_VERSION);
	wfd = emu_card_p2p_window(d->card, &base, &size);
	if (wfd < 0)
		return link_send(d, &ack, sizeof(ack));
	ack.id.p2p_size_mib = (uint32_t)(size >> 20);
	return link_send_fd(d, &ack, sizeof(ack), wfd);
}

static int on_mmio_read(struct pcie_dev *d, const struct rk1828_link_msg *m)
{
	struct rk1828_link_msg r = {
		.magic = RK1828_LINK_MAGIC,
		.type = RK1828_LINK_MMIO_DATA,
		.size = m->size,
		.addr = m->addr,
	};

	if (m->size == 8)
		r.value = reg_read(d, m->addr) |
			  ((uint64_t)reg_read(d, m->addr + 4) << 32);
	else
		r.value = reg_read(d, m->addr);
	if (d->verbose)
		pcie_log(d, "read  %#05" PRIx64 " -> %#" PRIx64, m->addr, r.value);
	return link_send(d, &r, sizeof(r));
}

static void on_mmio_write(struct pcie_dev *d, const struct rk1828_link_msg *m)
{
	if (d->verbose)
		pcie_log(d, "write %#05" PRIx64 " <- %#" PRIx64, m->addr, m->value);
	reg_write(d, m->addr, (uint32_t)m->value);
	if (m->size == 8)
		reg_write(d, m->addr + 4, (uint32_t)(m->value >> 32));
}

/* Take @n of the received descriptors; false when fewer arrived. */
static bool take_fds(struct link_rx *rx, int *fds, unsigned int n)
{
	if (n > rx->n_fds)
		return false;
	memcpy(fds, rx->fds, n * sizeof(int));
	memmove(rx->fds, rx->fds + n, (rx->n_fds - n) * sizeof(int));
	rx->n_fds -= n;
	return true;
}

static int on_irqfds(struct pcie_dev *d, struct link_rx *rx,
		     const struct rk1828_link_msg *m)
{
	unsigned int i;

	if (m->count > RK1828_LINK_MAX_VECTORS || !take_fds(rx, d->irqfd, m->count)) {
		pcie_log(d, "IRQFDS: %u eventfds announced, %u received", m->count,
			 rx->n_fds);
		return -1;
	}
	for (i = m->count; i < RK1828_LINK_MAX_VECTORS; i++)
		d->irqfd[i] = -1;
	d->n_irqfd = m->count;
	return 0;
}

static int on_memmap(struct pcie_dev *d, struct link_rx *rx,
		     const struct rk1828_link_msg *m, const void *payload)
{
	struct rk1828_link_region r[RK1828_LINK_MAX_REGIONS];
	int fds[LINK_MAX_FDS];

	if (m->count > RK1828_LINK_MAX_REGIONS || m->size > RK1828_LINK_MAX_REGIONS ||
	    !take_fds(rx, fds, m->size)) {
		pcie_log(d, "MEMMAP: %u regions with %u descriptors (%u received)",
			 m->count, m->size, rx->n_fds);
		return -1;
	}
	memcpy(r, payload, m->count * sizeof(r[0]));
	if (pcie_dma_set_map(&d->dma, r, m->count, fds, m->size)) {
		pcie_log(d, "MEMMAP: a region cannot be mapped; DMA is off");
		return 0;
	}
	if (d->verbose || !m->count)
		pcie_log(d, "DMA %s: %u region(s)", m->count ? "on" : "off", m->count);
	return 0;
}

/* Handle every complete message in @rx; -1 on a protocol or I/O error. */
static int link_dispatch(struct pcie_dev *d, struct link_rx *rx)
{
	while (rx->have >= sizeof(struct rk1828_link_msg)) {
		struct rk1828_link_msg m;
		size_t plen = 0, len;
		int ret = 0;

		memcpy(&m, rx->buf, sizeof(m));
		if (m.magic != RK1828_LINK_MAGIC) {
			pcie_log(d, "bad link message magic %#x", m.magic);
			return -1;
		}
		if (m.type == RK1828_LINK_MEMMAP)
			plen = (size_t)m.count * sizeof(struct rk1828_link_region);
		if (plen > LINK_BUF - sizeof(m)) {
			pcie_log(d, "MEMMAP with %u regions", m.count);
			return -1;
		}
		len = sizeof(m) + plen;
		if (rx->have < len)
			return 0;
		switch (m.type) {
		case RK1828_LINK_HELLO: ret = on_hello(d, &m); break;
		case RK1828_LINK_IRQFDS: ret = on_irqfds(d, rx, &m); break;
		case RK1828_LINK_MMIO_READ: ret = on_mmio_read(d, &m); break;
		case RK1828_LINK_MMIO_WRITE: on_mmio_write(d, &m); break;
		case RK1828_LINK_MEMMAP: ret = on_memmap(d, rx, &m, rx->buf + sizeof(m)); break;
		case RK1828_LINK_RESET:
			reset_card(d);
			pcie_log(d, "device reset");
			break;
		default:
			pcie_log(d, "unknown link message type %u", m.type);
			return -1;
		}
		if (ret)
			return ret;
		memmove(rx->buf, rx->buf + len, rx->have - len);
		rx->have -= len;
	}
	return 0;
}

/* Read what the socket has; 0 ok, 1 peer closed, -1 error. */
static int link_receive(struct pcie_dev *d, struct link_rx *rx)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * RK1828_LINK_MAX_REGIONS)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {
		.iov_base = rx->buf + rx->have,
		.iov_len = sizeof(rx->buf) - rx->have,
	};
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c;
	ssize_t n;

	n = recvmsg(d->fd, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -1;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		unsigned int i, k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (unsigned int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (rx->n_fds < LINK_MAX_FDS)
				rx->fds[rx->n_fds++] = fd;
			else
				close(fd);
		}
	}
	if (mh.msg_flags & MSG_CTRUNC)
		pcie_log(d, "file descriptors were dropped (MSG_CTRUNC)");
	if (n == 0)
		return 1;
	rx->have += (size_t)n;
	return link_dispatch(d, rx);
}

/* ---- the I/O loop ------------------------------------------------------------ */

static void pcie_fini(struct pcie_dev *d, struct link_rx *rx)
{
	unsigned int i;

	/* The workers may still copy from guest memory: stop them first. */
	emu_card_reset_queues(d->card);
	for (i = 0; i < RK1828_HIF_NUM_QUEUES; i++)
		pcie_ring_drop(d, i);
	pcie_dma_fini(&d->dma);
	for (i = 0; i < d->n_irqfd; i++)
		close(d->irqfd[i]);
	for (i = 0; i < rx->n_fds; i++)
		close(rx->fds[i]);
	if (d->verbose || d->dma_faults)
		pcie_log(d, "interrupts raised: %" PRIu64 " %" PRIu64 " %" PRIu64 ", DMA faults %" PRIu64,
			 d->raised[0], d->raised[1], d->raised[2], d->dma_faults);
}

int emu_pcie_serve(struct emu_card *card, int fd, int stop_fd, int verbose)
{
	struct pcie_dev *d = calloc(1, sizeof(*d));
	struct link_rx *rx = calloc(1, sizeof(*rx));
	int nfd = emu_card_notify_fd(card);
	unsigned int q;
	int ret = -1;

	if (!d || !rx) {
		fprintf(stderr, "rk1828-emu: pcie: out of memory\n");
		free(d);
		free(rx);
		return -1;
	}
	d->card = card;
	d->fd = fd;
	d->verbose = verbose;
	for (q = 0; q < RK1828_LINK_MAX_VECTORS; q++)
		d->irqfd[q] = -1;
	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		d->q[q].vector = q;
		d->q[q].phase = 1;
	}

	for (;;) {
		struct pollfd p[3] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = nfd, .events = POLLIN },
			{ .fd = stop_fd, .events = POLLIN },
		};
		int r;

		if (poll(p, stop_fd >= 0 ? 3 : 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			pcie_log(d, "poll: %s", strerror(errno));
			break;
		}
		if (stop_fd >= 0 && (p[2].revents & POLLIN)) {
			ret = 1;
			break;
		}
		if (p[1].revents & POLLIN) {
			uint64_t v;

			if (read(nfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				pcie_log(d, "notify: %s", strerror(errno));
			pcie_ring_complete(d);
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			r = link_receive(d, rx);
			if (r) {
				ret = r > 0 ? 0 : -1;
				break;
			}
		}
	}
	pcie_fini(d, rx);
	free(d);
	free(rx);
	return ret;
}
