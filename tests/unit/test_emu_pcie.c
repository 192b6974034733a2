// SPDX-License-Identifier: MIT
/*
 * PCIe front end tests (emulator/pcie.c, pcie_ring.c, pcie_dma.c) without
 * QEMU: this test plays the rk1828-pci proxy (emulator/qemu/rk1828-link.h)
 * and the guest driver at once, over a socketpair, with a memfd as guest
 * RAM. Checks the identity handshake, the registers, DMA off before bus
 * mastering, INFO/WRITE/READ through descriptor and completion rings
 * (contiguous buffers and SG lists, data compared byte for byte), the
 * phase bit over many ring wraps, interrupts per queue vector, DMA faults
 * (address out of reach, reply larger than the buffer, the BAD_DMA test
 * knob) failing only their command, the BAD_CPL knob, a full completion
 * ring holding back completions until the host consumes, RESET_QUEUES and
 * RESET_CARD, the peer window (its memfd in HELLO_ACK, P2P_BASE, the same
 * pages as card memory, a READ whose buffer is the window's bus address,
 * MAP clearing window pages for the BAR's side too), and the end of the
 * connection.
 * Output: "ok N - name" / "not ok N - name", then "# N passed, M failed".
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "card.h"
#include "pcie.h"
#include "qemu/rk1828-link.h"
#include "rk1828_hif_pci.h"

#include "tap.h"

#define MGMT	RK1828_HIF_QUEUE_MGMT
#define COPYQ	RK1828_HIF_QUEUE_COPY
#define RAM_GPA	0x100000ull		/* guest RAM starts at 1 MiB */
#define RAM	(16u << 20)
/* ms to wait for what must come (a completion, an interrupt): only a hang reaches it */
#define TMO	60000

/* Layout of the guest RAM used by the "driver". */
#define SQ_OFF(q)	(0x1000u + (q) * 0x4000u)
#define CQ_OFF(q)	(0x2000u + (q) * 0x4000u)
#define SGL_OFF		0x10000u
#define BUF_OFF		0x20000u
#define BUF2_OFF	0x200000u

/* The card's peer window: 4 MiB at the top of its 64 MiB, BAR4 at WIN_GPA. */
#define WIN_SIZE	(4u << 20)
#define WIN_GPA		0x80000000ull

static int sock = -1, ramfd = -1, winfd = -1;
static uint8_t *win;
static uint8_t *ram;
static int irq[EMU_PCIE_VECTORS];
static uint32_t next_seq = 500;

struct ring {
	uint32_t size, tail, head, phase;
};
static struct ring sq[3], cq[3];

static int xsend(const void *p, size_t n, const int *fds, unsigned int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)p, .iov_len = n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfds) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	return sendmsg(sock, &mh, 0) == (ssize_t)n ? 0 : -1;
}

static int xrecv(void *p, size_t n)
{
	size_t done = 0;

	while (done < n) {
		struct pollfd pf = { .fd = sock, .events = POLLIN };
		ssize_t r;

		if (poll(&pf, 1, TMO) <= 0)
			return -1;
		r = recv(sock, (char *)p + done, n - done, 0);
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

static void link_msg(uint32_t type, uint32_t size, uint32_t count,
		     uint64_t addr, uint64_t value, const void *payload,
		     size_t plen, const int *fds, unsigned int nfds)
{
	uint8_t buf[sizeof(struct rk1828_link_msg) + 4096];
	struct rk1828_link_msg m = {
		.magic = RK1828_LINK_MAGIC, .type = type, .size = size,
		.count = count, .addr = addr, .value = value,
	};

	memcpy(buf, &m, sizeof(m));
	if (plen)
		memcpy(buf + sizeof(m), payload, plen);
	if (xsend(buf, sizeof(m) + plen, fds, nfds))
		fprintf(stderr, "link send failed: %s\n", strerror(errno));
}

static uint32_t rd(uint64_t off)
{
	struct rk1828_link_msg r;

	link_msg(RK1828_LINK_MMIO_READ, 4, 0, off, 0, NULL, 0, NULL, 0);
	if (xrecv(&r, sizeof(r)) || r.type != RK1828_LINK_MMIO_DATA)
		return 0xffffffffu;
	return (uint32_t)r.value;
}

static void wr(uint64_t off, uint32_t v)
{
	link_msg(RK1828_LINK_MMIO_WRITE, 4, 0, off, v, NULL, 0, NULL, 0);
}

static void memmap(bool on)
{
	struct rk1828_link_region r = {
		.gpa = RAM_GPA, .size = RAM, .offset = 0, .fd_index = 0,
	};

	if (on)
		link_msg(RK1828_LINK_MEMMAP, 1, 1, 0, 0, &r, sizeof(r), &ramfd, 1);
	else
		link_msg(RK1828_LINK_MEMMAP, 0, 0, 0, 0, NULL, 0, NULL, 0);
}

static void setup_ring(unsigned int q, uint32_t sq_size, uint32_t cq_size)
{
	memset(ram + SQ_OFF(q), 0, 0x1000);
	memset(ram + CQ_OFF(q), 0, 0x1000);
	wr(RK1828_PCI_QREG(q, RK1828_PCI_Q_SQ_BASE_LO), (uint32_t)(RAM_GPA + SQ_OFF(q)));
	wr(RK1828_PCI_QREG(q, RK1828_PCI_Q_SQ_BASE_HI), 0);
	wr(RK1828_PCI_QREG(q, RK1828_PCI_Q_CQ_BASE_LO), (uint32_t)(RAM_GPA + CQ_OFF(q)));
	wr(RK1828_PCI_QREG(q, RK1828_PCI_Q_CQ_BASE_HI), 0);
	wr(RK1828_PCI_QREG(q, RK1828_PCI_Q_SQ_SIZE), sq_size);
	wr(RK1828_PCI_QREG(q, RK1828_PCI_Q_CQ_SIZE), cq_size);
	sq[q] = (struct ring){ .size = sq_size };
	cq[q] = (struct ring){ .size = cq_size, .phase = 1 };
}

/* A command header as the driver builds it. */
static struct rk1828_hif_msg hdr(uint16_t op, uint32_t ctx, uint64_t a0,
				 uint64_t a1, uint64_t a2, uint32_t data_len)
{
	struct rk1828_hif_msg m;

	memset(&m, 0, sizeof(m));
	m.magic = htole32(RK1828_HIF_MAGIC);
	m.opcode = htole16(op);
	m.seq = htole32(next_seq++);
	m.ctx = htole32(ctx);
	m.data_len = htole32(data_len);
	m.arg[0] = htole64(a0);
	m.arg[1] = htole64(a1);
	m.arg[2] = htole64(a2);
	return m;
}

/* Put one descriptor into queue @q's ring (no doorbell). */
static void put_desc(unsigned int q, const struct rk1828_hif_msg *h,
		     uint64_t data_addr, uint32_t count, uint32_t flags)
{
	struct rk1828_pci_desc d = {
		.hdr = *h,
		.data_addr = htole64(data_addr),
		.data_count = htole32(count),
		.flags = htole32(flags),
	};

	memcpy(ram + SQ_OFF(q) + sq[q].tail * sizeof(d), &d, sizeof(d));
	sq[q].tail = (sq[q].tail + 1) % sq[q].size;
}

static void doorbell(unsigned int q)
{
	wr(RK1828_PCI_QREG(q, RK1828_PCI_Q_SQ_TAIL), sq[q].tail);
}

/* Wait for the vector of queue @q; true when it fired. */
static bool wait_irq(unsigned int q)
{
	struct pollfd pf = { .fd = irq[q], .events = POLLIN };
	uint64_t v;

	if (poll(&pf, 1, TMO) <= 0)
		return false;
	return read(irq[q], &v, sizeof(v)) == sizeof(v);
}

/* The next completion of @q if its phase says it is new; false if none. */
static bool peek_cpl(unsigned int q, struct rk1828_pci_cpl *out)
{
	struct rk1828_pci_cpl *e = (void *)(ram + CQ_OFF(q) + cq[q].head * sizeof(*e));
	uint16_t f = __atomic_load_n(&e->flags, __ATOMIC_ACQUIRE);

	if ((le16toh(f) & RK1828_PCI_CPL_F_PHASE) != cq[q].phase)
		return false;
	memcpy(out, e, sizeof(*out));
	return true;
}

static void consume_cpl(unsigned int q)
{
	cq[q].head = (cq[q].head + 1) % cq[q].size;
	if (!cq[q].head)
		cq[q].phase ^= 1;
	wr(RK1828_PCI_QREG(q, RK1828_PCI_Q_CQ_HEAD), cq[q].head);
}

/* Wait for the next completion of @q; its status, or -1 on timeout. */
static int get_cpl(unsigned int q, struct rk1828_pci_cpl *out)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (peek_cpl(q, out)) {
			consume_cpl(q);
			return (int)le32toh(out->hdr.status);
		}
		if (!wait_irq(q))
			return -1;
	}
	if (!peek_cpl(q, out))
		return -1;
	consume_cpl(q);
	return (int)le32toh(out->hdr.status);
}

/* Run one command on @q and wait; returns the completion status. */
static int run(unsigned int q, const struct rk1828_hif_msg *h, uint64_t data,
	       uint32_t count, uint32_t flags, struct rk1828_pci_cpl *c)
{
	struct rk1828_pci_cpl tmp;

	put_desc(q, h, data, count, flags);
	doorbell(q);
	return get_cpl(q, c ? c : &tmp);
}

static void *serve_thread(void *arg)
{
	void **a = arg;

	*(int *)a[2] = emu_pcie_serve(a[0], *(int *)a[1], -1, 0);
	return NULL;
}

static void test_identity(void)
{
	struct {
		struct rk1828_link_msg m;
		struct rk1828_link_identity id;
	} ack;

	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = &ack, .iov_len = sizeof(ack) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct pollfd pf = { .fd = sock, .events = POLLIN };
	struct cmsghdr *c;
	ssize_t got;

	link_msg(RK1828_LINK_HELLO, 0, 0, 0, RK1828_LINK_VERSION, NULL, 0, NULL, 0);
	/* The window's memfd comes with the first byte of the answer. */
	got = poll(&pf, 1, TMO) == 1 ? recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) : -1;
	for (c = got > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&winfd, CMSG_DATA(c), sizeof(int));
	tap_ok(got > 0 && xrecv((char *)&ack + got, sizeof(ack) - got) == 0 &&
	       ack.m.type == RK1828_LINK_HELLO_ACK && ack.m.value == RK1828_LINK_VERSION,
	       "HELLO answered with HELLO_ACK, version 2");
	win = winfd >= 0 ? mmap(NULL, WIN_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, winfd, 0) :
	      MAP_FAILED;
	tap_ok(ack.id.p2p_size_mib == 4 && winfd >= 0 && win != MAP_FAILED,
	       "HELLO_ACK: a 4 MiB peer window with its memfd (got %u MiB, fd %d)",
	       ack.id.p2p_size_mib, winfd);
	tap_ok(ack.id.vendor_id == 0x1d87 && ack.id.device_id == 0x1828 &&
	       ack.id.class_code == 0x120000, "identity 1d87:1828, class 120000 (processing accelerator)");
	tap_ok(ack.id.vectors == 3 && ack.id.bar0_size == 4096 &&
	       ack.id.link_speed == 2 && ack.id.link_width == 2,
	       "3 MSI-X vectors, 4 KiB BAR0, link 5 GT/s x2");
	link_msg(RK1828_LINK_IRQFDS, 0, 3, 0, 0, NULL, 0, irq, 3);

	tap_ok(rd(RK1828_PCI_REG_ID) == RK1828_PCI_MAGIC &&
	       rd(RK1828_PCI_REG_IF_VERSION) == RK1828_PCI_IF_VERSION &&
	       rd(RK1828_PCI_REG_HIF_VERSION) == RK1828_HIF_VERSION,
	       "ID, IF_VERSION, HIF_VERSION registers");
	tap_ok(RK1828_PCI_CAPS_QUEUES(rd(RK1828_PCI_REG_CAPS)) == 3 &&
	       RK1828_PCI_CAPS_RING_SHIFT(rd(RK1828_PCI_REG_CAPS)) == 12 &&
	       RK1828_PCI_CAPS_MAX_SG(rd(RK1828_PCI_REG_CAPS)) == 4096,
	       "CAPS: 3 queues, 4096-entry rings, 4096 SG entries");
	tap_ok(RK1828_PCI_LINK_SPEED(rd(RK1828_PCI_REG_LINK)) == 2 &&
	       RK1828_PCI_LINK_WIDTH(rd(RK1828_PCI_REG_LINK)) == 2, "LINK register: gen 2, x2");
	wr(RK1828_PCI_REG_SCRATCH, 0xa5a51828);
	tap_ok(rd(RK1828_PCI_REG_SCRATCH) == 0xa5a51828, "SCRATCH reads back");
	tap_ok(rd(RK1828_PCI_REG_STATUS) == RK1828_PCI_STATUS_READY, "STATUS: ready, no error");
	tap_ok(rd(RK1828_PCI_QREG(2, RK1828_PCI_Q_VECTOR)) == 2, "queue 2 raises vector 2");
	tap_ok(rd(RK1828_PCI_REG_P2P_BASE_LO) == (60u << 20) && rd(RK1828_PCI_REG_P2P_BASE_HI) == 0,
	       "P2P_BASE: the window is card memory from 60 MiB (the top 4 MiB)");
}

/*
 * The window's pages are card memory; a READ whose buffer is the window's
 * bus address (a peer's BAR in the guest, here the card's own) lands there.
 */
static void test_peer_window(struct emu_card *card)
{
	struct rk1828_link_region r[2] = {
		{ .gpa = RAM_GPA, .size = RAM, .offset = 0, .fd_index = 0 },
		{ .gpa = WIN_GPA, .size = WIN_SIZE, .offset = 0, .fd_index = 1 },
	};
	const uint64_t base = 60u << 20;
	uint8_t *cm = emu_card_mem(card);
	int fds[2] = { ramfd, winfd };
	struct rk1828_hif_msg h;
	bool zero = true;
	uint32_t i;

	if (win == MAP_FAILED) {
		tap_ok(false, "peer window tests: no window mapping");
		return;
	}
	memset(win, 0x5a, 8192);
	tap_ok(cm[base] == 0x5a && cm[base + 8191] == 0x5a,
	       "bytes written through the BAR's memfd are card memory at P2P_BASE");
	h = hdr(RK1828_HIF_OP_MAP, 1, base, 1u << 20, 0, 0);
	tap_ok(run(MGMT, &h, 0, 0, 0, NULL) == 0, "MAP 1 MiB of the window into context 1");
	for (i = 0; i < 8192; i++)
		zero &= win[i] == 0 && cm[base + i] == 0;
	tap_ok(zero, "MAP cleared the window pages on both sides (MADV_REMOVE)");

	link_msg(RK1828_LINK_MEMMAP, 2, 2, 0, 0, r, sizeof(r), fds, 2);
	setup_ring(COPYQ, 4, 4);
	h = hdr(RK1828_HIF_OP_READ, 1, 0x20000, 65536, 0, 0);
	tap_ok(run(COPYQ, &h, WIN_GPA + 0x1000, 65536, 0, NULL) == 0 &&
	       memcmp(win + 0x1000, cm + 0x20000, 65536) == 0 &&
	       memcmp(cm + base + 0x1000, cm + 0x20000, 65536) == 0,
	       "READ into the window's bus address: card to card memory, no host RAM");
	memmap(true);
}

static void test_dma_off(void)
{
	struct rk1828_hif_msg h = hdr(RK1828_HIF_OP_INFO, 0, 0, 0, 0, 0);
	struct rk1828_pci_cpl c;

	setup_ring(MGMT, 4, 4);
	put_desc(MGMT, &h, RAM_GPA + BUF_OFF, 64, 0);
	doorbell(MGMT);
	tap_ok(rd(RK1828_PCI_REG_STATUS) & RK1828_PCI_STATUS_RING_ERROR,
	       "bus mastering off: the card cannot reach its rings (RING_ERROR)");
	tap_ok(!peek_cpl(MGMT, &c), "and writes no completion");
	wr(RK1828_PCI_REG_RESET, RK1828_PCI_RESET_CARD);
	tap_ok(rd(RK1828_PCI_REG_STATUS) == RK1828_PCI_STATUS_READY &&
	       rd(RK1828_PCI_QREG(MGMT, RK1828_PCI_Q_SQ_SIZE)) == 0,
	       "RESET_CARD clears RING_ERROR and disables the rings");
}

static void test_info(struct emu_card *card)
{
	struct rk1828_hif_msg h = hdr(RK1828_HIF_OP_INFO, 0, 0, 0, 0, 0);
	struct rk1828_hif_info info;
	struct rk1828_pci_cpl c;
	int st;

	memmap(true);
	setup_ring(MGMT, 4, 4);
	memset(ram + BUF_OFF, 0xee, 128);
	st = run(MGMT, &h, RAM_GPA + BUF_OFF, 64, 0, &c);
	memcpy(&info, ram + BUF_OFF, sizeof(info));
	tap_ok(st == 0 && c.hdr.seq == h.seq && le16toh(c.hdr.opcode) == RK1828_HIF_OP_INFO &&
	       le32toh(c.hdr.data_len) == 64, "INFO through the rings: OK, seq echoed, 64 bytes");
	tap_ok(le32toh(info.version) == RK1828_HIF_VERSION &&
	       le64toh(info.mem_size) == emu_card_mem_size(card) &&
	       ram[BUF_OFF + 64] == 0xee, "INFO data DMA'd into the buffer, nothing beyond it");
	tap_ok(le16toh(c.sq_head) == 1 && rd(RK1828_PCI_QREG(MGMT, RK1828_PCI_Q_SQ_HEAD)) == 1 &&
	       rd(RK1828_PCI_QREG(MGMT, RK1828_PCI_Q_CQ_TAIL)) == 1,
	       "completion reports sq_head 1; SQ_HEAD and CQ_TAIL registers agree");
	h = hdr(RK1828_HIF_OP_CTX_CREATE, 1, 0, 0, 0, 0);
	tap_ok(run(MGMT, &h, 0, 0, 0, NULL) == 0, "CTX_CREATE 1");
	h = hdr(RK1828_HIF_OP_MAP, 1, 0x10000, 4u << 20, 0, 0);
	tap_ok(run(MGMT, &h, 0, 0, 0, NULL) == 0, "MAP 4 MiB at card address 64 KiB");
}

/* Fill @n bytes at guest offset @off with a pattern of @seed. */
static void fill(uint32_t off, uint32_t n, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		ram[off + i] = (uint8_t)(seed * 31 + i * 7 + (i >> 9));
}

static void test_write_read(struct emu_card *card)
{
	struct rk1828_pci_sg sg[3] = {
		{ .addr = htole64(RAM_GPA + BUF_OFF), .len = htole32(4096) },
		{ .addr = htole64(RAM_GPA + BUF_OFF + 0x40000), .len = htole32(60000) },
		{ .addr = htole64(RAM_GPA + BUF_OFF + 0x80000), .len = htole32(35904) },
	};
	struct rk1828_hif_msg h;
	const uint32_t total = 100000;
	uint32_t i, off;
	bool same = true;
	int st;

	setup_ring(COPYQ, 4, 4);
	memcpy(ram + SGL_OFF, sg, sizeof(sg));
	fill(BUF_OFF, 4096, 1);
	fill(BUF_OFF + 0x40000, 60000, 2);
	fill(BUF_OFF + 0x80000, 35904, 3);
	h = hdr(RK1828_HIF_OP_WRITE, 1, 0x20000, total, 0, total);
	st = run(COPYQ, &h, RAM_GPA + SGL_OFF, 3, RK1828_PCI_DESC_F_SGL, NULL);
	tap_ok(st == 0, "WRITE of 100000 bytes gathered from a 3-entry SG list");
	tap_ok(memcmp(emu_card_mem(card) + 0x20000, ram + BUF_OFF, 4096) == 0 &&
	       memcmp(emu_card_mem(card) + 0x20000 + 4096, ram + BUF_OFF + 0x40000, 60000) == 0 &&
	       memcmp(emu_card_mem(card) + 0x20000 + 64096, ram + BUF_OFF + 0x80000, 35904) == 0,
	       "card memory holds the three pieces in order");

	memset(ram + BUF2_OFF, 0, total + 16);
	h = hdr(RK1828_HIF_OP_READ, 1, 0x20000, total, 0, 0);
	st = run(COPYQ, &h, RAM_GPA + BUF2_OFF, total, 0, NULL);
	for (i = 0, off = 0; i < 3; off += le32toh(sg[i].len), i++)
		same &= memcmp(ram + BUF2_OFF + off,
			       ram + (le64toh(sg[i].addr) - RAM_GPA),
			       le32toh(sg[i].len)) == 0;
	tap_ok(st == 0 && same && ram[BUF2_OFF + total] == 0,
	       "READ of 100000 bytes DMA'd back into one buffer, byte for byte");

	/* READ scattered into an SG list. */
	memset(ram + BUF_OFF, 0, 0x100000);
	h = hdr(RK1828_HIF_OP_READ, 1, 0x20000, total, 0, 0);
	st = run(COPYQ, &h, RAM_GPA + SGL_OFF, 3, RK1828_PCI_DESC_F_SGL, NULL);
	tap_ok(st == 0 && memcmp(ram + BUF_OFF, ram + BUF2_OFF, 4096) == 0 &&
	       memcmp(ram + BUF_OFF + 0x80000, ram + BUF2_OFF + 64096, 35904) == 0,
	       "READ scattered into a 3-entry SG list");
}

static void test_wrap(void)
{
	struct rk1828_pci_cpl c;
	bool ok = true;
	int i, irqs = 0;

	/* 4-entry rings: 60 commands wrap them 15 times, phase flips each. */
	setup_ring(COPYQ, 4, 4);
	for (i = 0; i < 30 && ok; i++) {
		struct rk1828_hif_msg h;

		fill(BUF_OFF, 512, 100 + i);
		h = hdr(RK1828_HIF_OP_WRITE, 1, 0x10000 + i * 512, 512, 0, 512);
		ok &= run(COPYQ, &h, RAM_GPA + BUF_OFF, 512, 0, &c) == 0 &&
		      c.hdr.seq == h.seq;
		memset(ram + BUF2_OFF, 0, 512);
		h = hdr(RK1828_HIF_OP_READ, 1, 0x10000 + i * 512, 512, 0, 0);
		ok &= run(COPYQ, &h, RAM_GPA + BUF2_OFF, 512, 0, &c) == 0 &&
		      c.hdr.seq == h.seq &&
		      memcmp(ram + BUF_OFF, ram + BUF2_OFF, 512) == 0;
		irqs += 2;
	}
	tap_ok(ok, "60 commands over 4-entry rings (15 wraps): every completion new by phase, data right");
	tap_ok(cq[COPYQ].phase == ((60 / 4) % 2 ? 0 : 1), "host phase after 15 wraps is %u", cq[COPYQ].phase);
	(void)irqs;
}

static void test_faults(void)
{
	struct rk1828_hif_msg h;
	struct rk1828_pci_cpl c;

	setup_ring(COPYQ, 8, 8);
	h = hdr(RK1828_HIF_OP_WRITE, 1, 0x10000, 4096, 0, 4096);
	tap_ok(run(COPYQ, &h, RAM_GPA + RAM, 4096, 0, &c) == RK1828_HIF_ST_DMA &&
	       c.hdr.seq == h.seq, "WRITE from beyond guest RAM: status DMA, seq echoed");
	h = hdr(RK1828_HIF_OP_WRITE, 1, 0x10000, 4096, 0, 4096);
	tap_ok(run(COPYQ, &h, RAM_GPA + BUF_OFF, 4096, 0, NULL) == 0,
	       "the next command on the queue works");
	h = hdr(RK1828_HIF_OP_READ, 1, 0x10000, 8192, 0, 0);
	tap_ok(run(COPYQ, &h, RAM_GPA + BUF_OFF, 4096, 0, &c) == RK1828_HIF_ST_DMA &&
	       c.hdr.data_len == 0, "READ of 8 KiB into a 4 KiB buffer: status DMA, no data");
	h = hdr(RK1828_HIF_OP_WRITE, 1, 0x10000, 4096, 0, 4096);
	tap_ok(run(COPYQ, &h, RAM_GPA + BUF_OFF, 100, 0, NULL) == RK1828_HIF_ST_DMA,
	       "WRITE of 4096 bytes from a 100-byte buffer: status DMA");
	h = hdr(RK1828_HIF_OP_WRITE, 1, 0x10000, 4096, 0, 4096);
	tap_ok(run(COPYQ, &h, RAM_GPA + SGL_OFF, EMU_PCIE_MAX_SG + 1,
		   RK1828_PCI_DESC_F_SGL, NULL) == RK1828_HIF_ST_INVAL,
	       "SG list longer than CAPS allows: status INVAL");

	wr(RK1828_PCI_REG_TEST, RK1828_PCI_TEST_BAD_DMA);
	h = hdr(RK1828_HIF_OP_WRITE, 1, 0x10000, 4096, 0, 4096);
	tap_ok(run(COPYQ, &h, RAM_GPA + BUF_OFF, 4096, 0, &c) == RK1828_HIF_ST_DMA,
	       "BAD_DMA knob: the next data command fails with status DMA");
	h = hdr(RK1828_HIF_OP_WRITE, 1, 0x10000, 4096, 0, 4096);
	tap_ok(run(COPYQ, &h, RAM_GPA + BUF_OFF, 4096, 0, NULL) == 0,
	       "the knob applies once");
	wr(RK1828_PCI_REG_TEST, RK1828_PCI_TEST_BAD_CPL);
	h = hdr(RK1828_HIF_OP_WRITE, 1, 0x10000, 4096, 0, 4096);
	tap_ok(run(COPYQ, &h, RAM_GPA + BUF_OFF, 4096, 0, &c) == 0 && c.hdr.seq != h.seq,
	       "BAD_CPL knob: the completion carries a wrong seq");
}

static void test_backpressure(void)
{
	struct rk1828_pci_cpl c;
	int i, n = 0;

	/* A 2-entry completion ring holds one entry until the host consumes. */
	setup_ring(MGMT, 4, 2);
	for (i = 0; i < 3; i++) {
		struct rk1828_hif_msg h = hdr(RK1828_HIF_OP_INFO, 0, 0, 0, 0, 0);

		put_desc(MGMT, &h, RAM_GPA + BUF_OFF + i * 64, 64, 0);
	}
	doorbell(MGMT);
	wait_irq(MGMT);
	usleep(100000);
	tap_ok(peek_cpl(MGMT, &c) && rd(RK1828_PCI_QREG(MGMT, RK1828_PCI_Q_CQ_TAIL)) == 1,
	       "full completion ring: one completion posted, the others held");
	for (i = 0; i < 3; i++)
		n += get_cpl(MGMT, &c) == 0;
	tap_ok(n == 3, "consuming releases the held completions in order");
}

static void test_reset(void)
{
	struct rk1828_hif_msg h;
	struct rk1828_pci_cpl c;

	setup_ring(COPYQ, 4, 4);
	h = hdr(RK1828_HIF_OP_WRITE, 1, 0x10000, 4096, 0, 4096);
	run(COPYQ, &h, RAM_GPA + BUF_OFF, 4096, 0, NULL);
	wr(RK1828_PCI_REG_RESET, RK1828_PCI_RESET_QUEUES);
	tap_ok(rd(RK1828_PCI_QREG(COPYQ, RK1828_PCI_Q_SQ_HEAD)) == 0 &&
	       rd(RK1828_PCI_QREG(COPYQ, RK1828_PCI_Q_CQ_TAIL)) == 0 &&
	       rd(RK1828_PCI_QREG(COPYQ, RK1828_PCI_Q_SQ_SIZE)) == 4,
	       "RESET_QUEUES: ring indices back to 0, sizes kept");
	memset(ram + CQ_OFF(COPYQ), 0, 0x1000);
	sq[COPYQ].tail = 0;
	cq[COPYQ].head = 0;
	cq[COPYQ].phase = 1;
	h = hdr(RK1828_HIF_OP_READ, 1, 0x10000, 4096, 0, 0);
	tap_ok(run(COPYQ, &h, RAM_GPA + BUF2_OFF, 4096, 0, &c) == 0 && c.hdr.seq == h.seq,
	       "after RESET_QUEUES the queue runs again from slot 0, phase 1");
	h = hdr(RK1828_HIF_OP_WRITE, 1, 0x10000, 16, 0, 16);
	tap_ok(run(COPYQ, &h, RAM_GPA + BUF_OFF, 16, 0, NULL) == 0,
	       "contexts and mappings survive RESET_QUEUES");
	wr(RK1828_PCI_REG_RESET, RK1828_PCI_RESET_CARD);
	setup_ring(COPYQ, 4, 4);
	h = hdr(RK1828_HIF_OP_WRITE, 1, 0x10000, 16, 0, 16);
	tap_ok(run(COPYQ, &h, RAM_GPA + BUF_OFF, 16, 0, NULL) == RK1828_HIF_ST_NOCTX,
	       "RESET_CARD destroys the contexts");
}

int main(void)
{
	struct emu_card_config cfg = { .mem_size = 64u << 20, .serial = 7, .threads = 1,
				       .p2p_window = WIN_SIZE };
	struct emu_card *card = emu_card_create(&cfg);
	pthread_t th;
	int sv[2], ret = -1, i;
	void *args[3];

	ramfd = memfd_create("guest-ram", MFD_CLOEXEC);
	if (!card || ramfd < 0 || ftruncate(ramfd, RAM) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		tap_ok(false, "setup");
		return tap_done();
	}
	ram = mmap(NULL, RAM, PROT_READ | PROT_WRITE, MAP_SHARED, ramfd, 0);
	for (i = 0; i < EMU_PCIE_VECTORS; i++)
		irq[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sock = sv[0];
	args[0] = card;
	args[1] = &sv[1];
	args[2] = &ret;
	pthread_create(&th, NULL, serve_thread, args);

	test_identity();
	test_dma_off();
	test_info(card);
	test_write_read(card);
	test_peer_window(card);
	test_wrap();
	test_faults();
	test_backpressure();
	test_reset();

	close(sock);
	pthread_join(th, NULL);
	tap_ok(ret == 0, "closing the link ends emu_pcie_serve() with 0");
	emu_card_destroy(card);
	close(sv[1]);
	return tap_done();
}
