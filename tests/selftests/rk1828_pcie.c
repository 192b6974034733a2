// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * kselftest for the PCIe transport of the rk1828 driver (kernel/
 * rk1828_pci.c, register interface kernel/rk1828_hif_pci.h): the PCI
 * identity and link, one MSI-X vector per queue (counted in
 * /proc/interrupts), card DMA into a host BO that another card then reads
 * through PRIME, descriptor and completion rings that wrap many times
 * (10 000 jobs, every byte checked), the card's test knobs (an
 * out-of-range DMA address, a corrupted completion) failing only the job
 * they hit, and last the hot removal of a PCIe card through QMP
 * device_del while rk1828-llm generates on two cards.
 *
 * Runs as root in the guest with PCIe cards (tools/vm-run --transport
 * pcie|mixed); tests skip when their cards are missing. The hot removal
 * needs $RK1828_VM_CTL (the control channel of tools/vm-run) and removes
 * the card for good, so this binary runs last in tests/guest-suite; it
 * runs build/rk1828-llm on the model and reloads build/rk1828.ko, found
 * through $RK1828_LLM, $RK1828_MODEL and $RK1828_KO (tests/guest-suite sets
 * them) or else relative to this binary in build/tests/.
 */
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "rk1828_util.h"

#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wclobbered"

/*
 * The emulator's test knobs (Documentation/accel/rk1828/protocol.rst,
 * section PCIe, register TEST), armed through the driver's debugfs file
 * pcie_test: the card misbehaves once.
 */
#define RKT_PCI_TEST_BAD_DMA	1	/* next data address out of range */
#define RKT_PCI_TEST_BAD_CPL	2	/* next completion with a wrong seq */
/* Hardware queues and their vectors, in this order. */
#define RKT_NUM_QUEUES		3
#define RKT_QUEUE_MGMT		0
#define RKT_QUEUE_COMPUTE	1
#define RKT_QUEUE_COPY		2

/**
 * struct rkt_pcard - a PCIe card as the tests see it
 * @minor: accel minor
 * @serial: card serial (tools/vm-run: 0x18280000 + QEMU card index)
 * @pci: PCI function name, e.g. "0000:01:00.0"
 * @sysfs: /sys/bus/pci/devices/<pci>
 */
struct rkt_pcard {
	int minor;
	uint64_t serial;
	char pci[32];
	char sysfs[PATH_MAX];
};

/**
 * rkt_pcie_cards() - the PCIe cards among the accel nodes, in minor order
 * @out: output, RKT_MAX_CARDS entries
 *
 * Return: how many were found.
 */
static int rkt_pcie_cards(struct rkt_pcard *out)
{
	int idx[RKT_MAX_CARDS], n = rkt_card_indices(idx), i, k = 0;

	for (i = 0; i < n; i++) {
		char link[64], dev[PATH_MAX];
		uint64_t type, serial;
		int fd = rkt_open_card(idx[i]);

		if (fd < 0)
			continue;
		if (rkt_get_param(fd, DRM_RK1828_PARAM_LINK_TYPE, &type) ||
		    type != DRM_RK1828_LINK_PCIE ||
		    rkt_get_param(fd, DRM_RK1828_PARAM_CARD_SERIAL, &serial)) {
			close(fd);
			continue;
		}
		close(fd);
		snprintf(link, sizeof(link), "/sys/class/accel/accel%d/device", idx[i]);
		if (!realpath(link, dev))
			continue;
		out[k].minor = idx[i];
		out[k].serial = serial;
		snprintf(out[k].pci, sizeof(out[k].pci), "%s", basename(dev));
		snprintf(out[k].sysfs, sizeof(out[k].sysfs), "/sys/bus/pci/devices/%s",
			 out[k].pci);
		k++;
	}
	return k;
}

/**
 * rkt_sysfs_hex() - read a hexadecimal sysfs attribute of a PCI function
 * @c: the card
 * @attr: attribute name ("vendor", "class", ...)
 *
 * Return: the value, or ~0 when it cannot be read.
 */
static unsigned long long rkt_sysfs_hex(const struct rkt_pcard *c, const char *attr)
{
	char path[PATH_MAX + 64];
	unsigned long long v = ~0ULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", c->sysfs, attr);
	f = fopen(path, "r");
	if (!f)
		return ~0ULL;
	if (fscanf(f, "%llx", &v) != 1)
		v = ~0ULL;
	fclose(f);
	return v;
}

/**
 * struct rkt_irqs - the card's three MSI-X vectors in /proc/interrupts
 * @irq: interrupt number per queue (mgmt, compute, copy), -1 if absent
 * @count: interrupts taken, summed over the CPUs
 */
struct rkt_irqs {
	int irq[RKT_NUM_QUEUES];
	unsigned long long count[RKT_NUM_QUEUES];
};

/**
 * rkt_read_irqs() - find the vectors of @c ("rk1828-<queue>@<pci>")
 * @c: the card
 * @out: output
 *
 * Return: the number of the card's vectors found.
 */
static int rkt_read_irqs(const struct rkt_pcard *c, struct rkt_irqs *out)
{
	static const char * const names[RKT_NUM_QUEUES] = {
		"mgmt", "compute", "copy",
	};
	char line[1024], want[96];
	int q, found = 0;
	FILE *f = fopen("/proc/interrupts", "r");

	for (q = 0; q < RKT_NUM_QUEUES; q++) {
		out->irq[q] = -1;
		out->count[q] = 0;
	}
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		for (q = 0; q < RKT_NUM_QUEUES; q++) {
			char *p, *end;
			unsigned long long sum = 0;

			snprintf(want, sizeof(want), "rk1828-%s@%s", names[q], c->pci);
			p = strstr(line, want);
			if (!p || (p[strlen(want)] != '\n' && p[strlen(want)] != ' ' &&
				   p[strlen(want)] != '\0'))
				continue;
			out->irq[q] = (int)strtol(line, &end, 10);
			p = strchr(line, ':');
			if (!p)
				continue;
			p++;
			/* per-CPU counts until the first non-number */
			for (;;) {
				unsigned long long v = strtoull(p, &end, 10);

				if (end == p)
					break;
				sum += v;
				p = end;
			}
			out->count[q] = sum;
			found++;
		}
	}
	fclose(f);
	return found;
}

/**
 * rkt_debugfs_write() - write @text to the driver's debugfs file @name of @c
 * @c: the card
 * @name: file in /sys/kernel/debug/accel/<pci>/
 * @text: what to write
 *
 * Mounts debugfs when it is not mounted yet.
 *
 * Return: 0 or -errno.
 */
static int rkt_debugfs_write(const struct rkt_pcard *c, const char *name,
			     const char *text)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (access("/sys/kernel/debug/accel", F_OK))
		mount("none", "/sys/kernel/debug", "debugfs", 0, NULL);
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/%s", c->pci, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

/**
 * rkt_partner() - a second card for a test on PCIe card @a
 * @c: the PCIe cards (rkt_pcie_cards())
 * @np: how many
 * @idx: every card's accel minor, ascending (rkt_card_indices())
 * @n: how many
 * @a: accel minor of the first card
 * @pcie: output, whether the partner is on PCIe too
 *
 * One on the other link when there is one (tools/vm-run --transport
 * mixed), so that the test crosses both links; else another PCIe card.
 *
 * Return: the partner's position in @idx (its rk1828-llm card index), or
 * -1 when @a is the only card.
 */
static int rkt_partner(const struct rkt_pcard *c, int np, const int *idx, int n,
		       int a, bool *pcie)
{
	int i, j, b = -1;

	*pcie = true;
	for (i = 0; i < n; i++) {
		bool on_pcie = false;

		if (idx[i] == a)
			continue;
		for (j = 0; j < np; j++)
			on_pcie |= c[j].minor == idx[i];
		if (b < 0 || (*pcie && !on_pcie)) {
			b = i;
			*pcie = on_pcie;
		}
	}
	return b;
}

/* The tests share nothing; the fixture only gives them their timeouts. */
FIXTURE(pcie) {
	int unused;
};

FIXTURE_SETUP(pcie)
{
}

FIXTURE_TEARDOWN(pcie)
{
}

/* ------------------------------------------------------------- identity */

TEST_F_TIMEOUT(pcie, pci_identity_and_link, 60)
{
	struct rkt_pcard c[RKT_MAX_CARDS];
	char path[PATH_MAX + 16];
	int n = rkt_pcie_cards(c), i, k, fd;
	struct dirent *e;
	uint64_t speed;
	DIR *d;

	if (!n)
		SKIP(return, "no PCIe card");
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0x1d87, rkt_sysfs_hex(&c[i], "vendor"));
		EXPECT_EQ(0x1828, rkt_sysfs_hex(&c[i], "device"));
		EXPECT_EQ(0x120000, rkt_sysfs_hex(&c[i], "class"));
		fd = rkt_open_card(c[i].minor);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, rkt_get_param(fd, DRM_RK1828_PARAM_LINK_SPEED, &speed));
		/* PCIe 2.1 x2: 2 lanes x 5 GT/s */
		EXPECT_EQ(10000, speed);
		close(fd);
		/* three MSI-X vectors, enabled */
		snprintf(path, sizeof(path), "%s/msi_irqs", c[i].sysfs);
		d = opendir(path);
		ASSERT_NE(NULL, d);
		k = 0;
		while ((e = readdir(d)))
			k += e->d_name[0] != '.';
		closedir(d);
		EXPECT_EQ(RKT_NUM_QUEUES, k);
		TH_LOG("accel%d: %s, serial %#llx, %d MSI-X vectors", c[i].minor,
		       c[i].pci, (unsigned long long)c[i].serial, k);
	}
}

/* ------------------------------------------------------- MSI-X per queue */

TEST_F_TIMEOUT(pcie, msix_vector_per_queue, 120)
{
	struct rkt_pcard c[RKT_MAX_CARDS];
	struct rkt_irqs before, after;
	unsigned long long d[RKT_NUM_QUEUES];
	struct rkt_bo host, card, prog, tmp[5];
	int fd, i;
	int32_t st;

	if (!rkt_pcie_cards(c))
		SKIP(return, "no PCIe card");
	fd = rkt_open_card(c[0].minor);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rkt_host_bo(fd, 4096, &host));
	ASSERT_EQ(0, rkt_bo_create(fd, 4096, DRM_RK1828_BO_CARD, &card));
	ASSERT_EQ(0, rkt_delay_job(fd, 1, &prog, 0));
	ASSERT_EQ(0, rkt_bo_wait(fd, prog.handle, rkt_now_ns() + 30 * RKT_NS, &st));

	ASSERT_EQ(RKT_NUM_QUEUES, rkt_read_irqs(&c[0], &before));
	EXPECT_NE(before.irq[0], before.irq[1]);
	EXPECT_NE(before.irq[1], before.irq[2]);
	EXPECT_NE(before.irq[0], before.irq[2]);

	/* 5 MAPs and UNMAPs (mgmt), 40 COPYs (copy), 8 EXECs (compute) */
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, rkt_bo_create(fd, 8192, DRM_RK1828_BO_CARD, &tmp[i]));
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, rkt_gem_close(fd, &tmp[i]));
	for (i = 0; i < 40; i++)
		ASSERT_EQ(0, rkt_copy_sync(fd, host.handle, 0, card.handle, 0, 4096));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, rkt_exec(fd, prog.handle, sizeof(struct rk1828_program),
				     NULL, 0, 0, 0));
		ASSERT_EQ(0, rkt_bo_wait(fd, prog.handle, rkt_now_ns() + 30 * RKT_NS, &st));
		ASSERT_EQ(0, st);
	}
	ASSERT_EQ(RKT_NUM_QUEUES, rkt_read_irqs(&c[0], &after));
	for (i = 0; i < RKT_NUM_QUEUES; i++)
		d[i] = after.count[i] - before.count[i];
	TH_LOG("accel%d interrupts: mgmt +%llu (irq %d), compute +%llu (irq %d), copy +%llu (irq %d)",
	       c[0].minor, d[0], after.irq[0], d[1], after.irq[1], d[2], after.irq[2]);
	/* one completion per command, each on its own queue's vector */
	EXPECT_LE(10, d[RKT_QUEUE_MGMT]);
	EXPECT_LE(40, d[RKT_QUEUE_COPY]);
	EXPECT_LE(8, d[RKT_QUEUE_COMPUTE]);
	EXPECT_GT(40, d[RKT_QUEUE_COMPUTE]);
	EXPECT_GT(40, d[RKT_QUEUE_MGMT]);
	close(fd);
}

/* ---------------------------------------- card DMA, then another card */

TEST_F_TIMEOUT(pcie, dma_into_bo_read_by_other_card, 120)
{
	const size_t size = 3 << 20;	/* several pages and SG entries */
	struct rkt_pcard c[RKT_MAX_CARDS];
	int idx[RKT_MAX_CARDS], n = rkt_card_indices(idx), np, a, b, fa, fb, dmabuf;
	struct rkt_bo src, card_a, host_a, card_b, host_b;
	uint32_t imported;
	bool b_pcie;

	np = rkt_pcie_cards(c);
	if (!np || n < 2)
		SKIP(return, "needs a PCIe card and a second card");
	a = c[0].minor;
	b = idx[rkt_partner(c, np, idx, n, a, &b_pcie)];
	fa = rkt_open_card(a);
	fb = rkt_open_card(b);
	ASSERT_LE(0, fa);
	ASSERT_LE(0, fb);

	/* card A holds the pattern; a card->host COPY DMAs it into host_a */
	ASSERT_EQ(0, rkt_host_bo(fa, size, &src));
	ASSERT_EQ(0, rkt_bo_create(fa, size, DRM_RK1828_BO_CARD, &card_a));
	rkt_fill(src.map, size, 1828);
	ASSERT_EQ(0, rkt_copy_sync(fa, src.handle, 0, card_a.handle, 0, size));
	ASSERT_EQ(0, rkt_host_bo(fa, size, &host_a));
	memset(host_a.map, 0, size);
	ASSERT_EQ(0, rkt_copy_sync(fa, card_a.handle, 0, host_a.handle, 0, size));
	EXPECT_EQ(-1, rkt_check(host_a.map, size, 1828));

	/* card B imports host_a and copies it into its own memory and back */
	ASSERT_EQ(0, drmPrimeHandleToFD(fa, host_a.handle, DRM_CLOEXEC | DRM_RDWR, &dmabuf));
	ASSERT_EQ(0, drmPrimeFDToHandle(fb, dmabuf, &imported));
	ASSERT_EQ(0, rkt_bo_create(fb, size, DRM_RK1828_BO_CARD, &card_b));
	ASSERT_EQ(0, rkt_copy_sync(fb, imported, 0, card_b.handle, 0, size));
	ASSERT_EQ(0, rkt_host_bo(fb, size, &host_b));
	memset(host_b.map, 0, size);
	ASSERT_EQ(0, rkt_copy_sync(fb, card_b.handle, 0, host_b.handle, 0, size));
	EXPECT_EQ(-1, rkt_check(host_b.map, size, 1828)) {
		TH_LOG("accel%d read what accel%d's DMA wrote: mismatch", b, a);
	}
	/* and B can DMA into the imported BO, which A's mapping sees */
	rkt_fill(src.map, size, 4242);
	ASSERT_EQ(0, rkt_copy_sync(fa, src.handle, 0, card_a.handle, 0, size));
	ASSERT_EQ(0, rkt_copy_sync(fa, card_a.handle, 0, host_a.handle, 0, size));
	ASSERT_EQ(0, rkt_copy_sync(fb, imported, 0, card_b.handle, 0, size));
	ASSERT_EQ(0, rkt_copy_sync(fb, card_b.handle, 4096, imported, 0, 8192));
	EXPECT_EQ(0, memcmp(host_a.map, src.map + 4096, 8192));
	TH_LOG("accel%d (PCIe) -> dma-buf -> accel%d (%s): %zu bytes intact", a, b,
	       b_pcie ? "PCIe" : "USB", size);
	close(dmabuf);
	close(fa);
	close(fb);
}

/* ----------------------------------------------------------- ring wraps */

TEST_F_TIMEOUT(pcie, ring_wraps_with_10000_jobs, 600)
{
	const int jobs = 10000, piece = 64;
	struct rkt_pcard c[RKT_MAX_CARDS];
	struct rkt_bo src, card, back;
	int64_t t0, dt;
	int fd, i, ret;
	int32_t st;

	if (!rkt_pcie_cards(c))
		SKIP(return, "no PCIe card");
	fd = rkt_open_card(c[0].minor);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rkt_host_bo(fd, (uint64_t)jobs * piece, &src));
	ASSERT_EQ(0, rkt_bo_create(fd, (uint64_t)jobs * piece, DRM_RK1828_BO_CARD, &card));
	ASSERT_EQ(0, rkt_host_bo(fd, (uint64_t)jobs * piece, &back));
	rkt_fill(src.map, (size_t)jobs * piece, 10000);

	/* every job moves its own 64 bytes: 10 000 descriptors, 156 wraps */
	t0 = rkt_now_ns();
	for (i = 0; i < jobs; i++) {
		ret = rkt_copy(fd, src.handle, (uint64_t)i * piece, card.handle,
			      (uint64_t)i * piece, piece, 0, 0);
		if (ret)
			break;
	}
	ASSERT_EQ(0, ret) {
		TH_LOG("submit %d failed", i);
	}
	ASSERT_EQ(0, rkt_bo_wait(fd, card.handle, rkt_now_ns() + 300 * RKT_NS, &st));
	ASSERT_EQ(0, st);
	dt = rkt_now_ns() - t0;
	memset(back.map, 0, back.size);
	ASSERT_EQ(0, rkt_copy_sync(fd, card.handle, 0, back.handle, 0,
				  (uint64_t)jobs * piece));
	EXPECT_EQ(-1, rkt_check(back.map, (size_t)jobs * piece, 10000));
	TH_LOG("%d jobs of %d bytes in %lld ms (%lld us per job)", jobs, piece,
	       (long long)(dt / RKT_MS), (long long)(dt / jobs / 1000));
	close(fd);
}

/* ------------------------------------------------ a misbehaving card */

/**
 * rkt_knob_job() - arm test knob @knob, run one COPY and check the damage
 * @_metadata: harness state
 * @c: the card
 * @knob: RKT_PCI_TEST_*
 * @want: the job status the knob must cause
 */
static void rkt_knob_job(struct __test_metadata *_metadata,
			const struct rkt_pcard *c, uint32_t knob, int want)
{
	struct rkt_bo src, card, back, other;
	char text[16];
	int fd, fd2;
	int32_t st;

	fd = rkt_open_card(c->minor);
	fd2 = rkt_open_card(c->minor);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, rkt_host_bo(fd, 65536, &src));
	ASSERT_EQ(0, rkt_host_bo(fd, 65536, &back));
	ASSERT_EQ(0, rkt_bo_create(fd, 65536, DRM_RK1828_BO_CARD, &card));
	ASSERT_EQ(0, rkt_bo_create(fd2, 65536, DRM_RK1828_BO_CARD, &other));
	rkt_fill(src.map, 65536, 77);
	ASSERT_EQ(0, rkt_copy_sync(fd, src.handle, 0, card.handle, 0, 65536));

	/* the next command with data (or the next completion) goes wrong */
	snprintf(text, sizeof(text), "%u\n", knob);
	ASSERT_EQ(0, rkt_debugfs_write(c, "pcie_test", text));
	rkt_fill(src.map, 65536, 78);
	ASSERT_EQ(0, rkt_copy(fd, src.handle, 0, card.handle, 0, 65536, 0, 0));
	ASSERT_EQ(0, rkt_bo_wait(fd, card.handle, rkt_now_ns() + 60 * RKT_NS, &st));
	EXPECT_EQ(want, st);

	/* only that job: the card BO keeps its old contents */
	ASSERT_EQ(0, rkt_copy_sync(fd, card.handle, 0, back.handle, 0, 65536));
	if (knob == RKT_PCI_TEST_BAD_DMA)
		EXPECT_EQ(-1, rkt_check(back.map, 65536, 77));
	/* the same file, and another one, work as before */
	ASSERT_EQ(0, rkt_copy_sync(fd, src.handle, 0, card.handle, 0, 65536));
	ASSERT_EQ(0, rkt_copy_sync(fd, card.handle, 0, back.handle, 0, 65536));
	EXPECT_EQ(-1, rkt_check(back.map, 65536, 78));
	EXPECT_EQ(0, rkt_round_trip(fd2, 1 << 20, 79));
	close(fd);
	close(fd2);
}

TEST_F_TIMEOUT(pcie, bad_dma_address_fails_only_that_job, 120)
{
	struct rkt_pcard c[RKT_MAX_CARDS];

	if (!rkt_pcie_cards(c))
		SKIP(return, "no PCIe card");
	/* the card cannot reach the address: status DMA, -EIO */
	rkt_knob_job(_metadata, &c[0], RKT_PCI_TEST_BAD_DMA, -EIO);
}

TEST_F_TIMEOUT(pcie, bad_completion_fails_only_that_job, 120)
{
	struct rkt_pcard c[RKT_MAX_CARDS];

	if (!rkt_pcie_cards(c))
		SKIP(return, "no PCIe card");
	/* a completion for a command not in flight: -EPROTO, queues reset */
	rkt_knob_job(_metadata, &c[0], RKT_PCI_TEST_BAD_CPL, -EPROTO);
}

/* ------------------------------------------------ hot removal (last) */

static int rkt_insmod(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

TEST_F_TIMEOUT(pcie, hot_removal_during_generation, 300)
{
	char llm[PATH_MAX], model[PATH_MAX], ko[PATH_MAX], req[64], answer[128];
	char log[] = "/tmp/rk1828-hot-removal.XXXXXX";
	int idx[RKT_MAX_CARDS], n, i, fd_keep, fd_gone, logfd, status, rm;
	struct rkt_pcard c[RKT_MAX_CARDS];
	const struct rkt_pcard *victim = NULL;
	int keep, n_after = 0, k, pv, pk;
	char cards[16];
	bool keep_pcie;
	unsigned long long tmo = 3000;
	char params[64];
	struct rkt_bo host, card, bo;
	int64_t t_del, t_exit;
	uint64_t v;
	pid_t pid;
	FILE *f;

	if (!getenv("RK1828_VM_CTL"))
		SKIP(return, "no control channel ($RK1828_VM_CTL, tools/vm-run)");
	n = rkt_card_indices(idx);
	if (n < 2)
		SKIP(return, "needs two cards, one on PCIe");
	/*
	 * The generation runs on the first PCIe card and a partner (a USB
	 * card when there is one: the cascade then crosses both links); the
	 * PCIe card goes. rk1828-llm numbers the cards by ascending minor.
	 */
	k = rkt_pcie_cards(c);
	if (!k)
		SKIP(return, "no PCIe card");
	victim = &c[0];
	pk = rkt_partner(c, k, idx, n, victim->minor, &keep_pcie);
	keep = idx[pk];
	for (pv = 0; idx[pv] != victim->minor; pv++)
		;
	snprintf(cards, sizeof(cards), "%d,%d", pv, pk);
	rkt_project_path("RK1828_MODEL", "../shared/models/stories260K.gguf", model);
	rkt_project_path("RK1828_LLM", "build/rk1828-llm", llm);
	rkt_project_path("RK1828_KO", "build/rk1828.ko", ko);
	rkt_read_param_file("/sys/module/rk1828/parameters/job_timeout_ms", &tmo);
	snprintf(params, sizeof(params), "job_timeout_ms=%llu", tmo);
	/* under tools/vm-run (a control channel) these must be there */
	ASSERT_EQ(0, access(model, R_OK)) {
		TH_LOG("no model %s (set RK1828_MODEL)", model);
	}
	ASSERT_EQ(0, access(llm, X_OK)) {
		TH_LOG("no %s (set RK1828_LLM)", llm);
	}
	ASSERT_EQ(0, access(ko, R_OK)) {
		TH_LOG("no module file %s (set RK1828_KO)", ko);
	}

	/* a file on each card, with work queued on the one that goes */
	fd_keep = rkt_open_card(keep);
	fd_gone = rkt_open_card(victim->minor);
	ASSERT_LE(0, fd_keep);
	ASSERT_LE(0, fd_gone);
	ASSERT_EQ(0, rkt_host_bo(fd_gone, 1 << 20, &host));
	ASSERT_EQ(0, rkt_bo_create(fd_gone, 1 << 20, DRM_RK1828_BO_CARD, &card));

	/* a long greedy generation over both cards */
	logfd = mkstemp(log);
	ASSERT_LE(0, logfd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(logfd, 1);
		dup2(logfd, 2);
		execl(llm, llm, "run", "-m", model, "-p", "Once upon a time",
		      "-n", "100000", "--temp", "0", "--cards", cards, NULL);
		_exit(127);
	}
	/* wait until it is generating (a deadline only a hang reaches) */
	for (i = 0; i < 1200; i++) {
		struct stat st;

		if (fstat(logfd, &st) == 0 && st.st_size > 64)
			break;
		rkt_sleep_ms(100);
	}
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, rkt_copy(fd_gone, host.handle, 0, card.handle, 0, 1 << 20, 0, 0));

	snprintf(req, sizeof(req), "device_del card%llu",
		 (unsigned long long)(victim->serial - RKT_SERIAL_BASE));
	TH_LOG("%s (accel%d, %s) while rk1828-llm generates on cards %s (accel%d on %s stays)",
	       req, victim->minor, victim->pci, cards, keep, keep_pcie ? "PCIe" : "USB");
	t_del = rkt_now_ns();
	ASSERT_EQ(0, rkt_ctl(req, answer)) {
		TH_LOG("vm-ctl: %s", answer);
	}

	/* the generation ends with an error, soon, and no crash */
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	t_exit = rkt_now_ns();
	f = fdopen(logfd, "r");
	ASSERT_NE(NULL, f);
	rewind(f);
	{
		char line[512], last[512] = "";

		while (fgets(line, sizeof(line), f))
			if (strstr(line, "rk1828-llm"))
				snprintf(last, sizeof(last), "%s", line);
		TH_LOG("rk1828-llm exit %d after %lld ms: %s",
		       WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status),
		       (long long)((t_exit - t_del) / RKT_MS), last);
	}
	fclose(f);
	unlink(log);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_GT(t_del + 30 * RKT_NS, t_exit);

	/* the removed card's file fails cleanly, the other keeps working */
	EXPECT_EQ(-ENODEV, rkt_get_param(fd_gone, DRM_RK1828_PARAM_CARD_MEM_SIZE, &v));
	EXPECT_EQ(-ENODEV, rkt_bo_create(fd_gone, 4096, DRM_RK1828_BO_CARD, &bo));
	EXPECT_EQ(-ENODEV, rkt_copy(fd_gone, host.handle, 0, card.handle, 0, 4096, 0, 0));
	EXPECT_EQ(0, rkt_round_trip(fd_keep, 1 << 20, 99));
	munmap(host.map, host.size);
	EXPECT_EQ(0, close(fd_gone));
	EXPECT_EQ(0, close(fd_keep));
	snprintf(req, sizeof(req), "wait_deleted card%llu",
		 (unsigned long long)(victim->serial - RKT_SERIAL_BASE));
	EXPECT_EQ(0, rkt_ctl(req, answer)) {
		TH_LOG("QEMU did not finish removing the card: %s", answer);
	}
	EXPECT_NE(0, access(victim->sysfs, F_OK));

	/* the module unloads and loads again, with one card less */
	rm = syscall(SYS_delete_module, "rk1828", O_NONBLOCK) ? -errno : 0;
	for (i = 0; rm == -EWOULDBLOCK && i < 600; i++) {
		rkt_sleep_ms(100);
		rm = syscall(SYS_delete_module, "rk1828", O_NONBLOCK) ? -errno : 0;
	}
	ASSERT_EQ(0, rm);
	ASSERT_EQ(0, rkt_insmod(ko, params));
	for (i = 0; i < 900; i++) {
		n_after = rkt_card_indices(idx);
		if (n_after == n - 1)
			break;
		rkt_sleep_ms(100);
	}
	EXPECT_EQ(n - 1, n_after);
	for (i = 0; i < n_after; i++) {
		int f2 = rkt_open_card(idx[i]);

		ASSERT_LE(0, f2);
		EXPECT_EQ(0, rkt_round_trip(f2, 65536, 40 + i));
		close(f2);
	}
}

TEST_HARNESS_MAIN
