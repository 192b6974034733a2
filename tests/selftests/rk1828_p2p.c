// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * kselftest of card-to-card peer-to-peer DMA (kernel/rk1828_p2p.c,
 * kernel/rk1828_peer.c; Documentation/accel/rk1828/protocol.rst, "Peer
 * window"): P2P_QUERY for every pair of cards, the rules of BO_P2P card
 * BOs (only they export), and import of their dma-buf: refused with
 * -EOPNOTSUPP where the query says P2P is impossible (every pair on a
 * kernel without CONFIG_PCI_P2PDMA, such as Debian's 6.12), the same BO
 * on the exporting card itself, and where the query says P2P_OK a peer
 * BO that a COPY on the importing card writes straight into the
 * exporter's memory; last, unbinding a PCIe card from the driver while a
 * dma-buf of its window is open revokes it cleanly (the dma-buf outlives
 * the card, the card's files get -ENODEV) and the card binds again.
 *
 * Runs as root in the guest with at least two cards (tools/vm-run);
 * without PCIe cards the export tests skip.
 */
#include <sys/utsname.h>

#include "kselftest_harness.h"
#include "rk1828_util.h"

#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wclobbered"

/* 1 when the running kernel has CONFIG_PCI_P2PDMA=y, 0 when not, -1 unknown. */
static int rkt_kernel_p2pdma(void)
{
	char path[300], line[256];
	struct utsname u;
	int ret = -1;
	FILE *f;

	if (uname(&u))
		return -1;
	snprintf(path, sizeof(path), "/boot/config-%s", u.release);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strcmp(line, "CONFIG_PCI_P2PDMA=y\n"))
			ret = 1;
		else if (!strcmp(line, "# CONFIG_PCI_P2PDMA is not set\n"))
			ret = 0;
	}
	fclose(f);
	return ret;
}

/* P2P_QUERY of @fd (importer) towards @peer_fd; 0 or -errno. */
static int rkt_p2p_query(int fd, int peer_fd, struct drm_rk1828_p2p_query *q)
{
	memset(q, 0, sizeof(*q));
	q->peer_fd = peer_fd;
	return rkt_ioctl(fd, DRM_IOCTL_RK1828_P2P_QUERY, q);
}

FIXTURE(p2p) {
	int n;
	int fd[RKT_MAX_CARDS];
	int minor[RKT_MAX_CARDS];
	uint64_t link[RKT_MAX_CARDS];
	uint64_t window[RKT_MAX_CARDS];
};

FIXTURE_SETUP(p2p)
{
	int idx[RKT_MAX_CARDS], n = rkt_card_indices(idx), i;

	self->n = 0;
	for (i = 0; i < n; i++) {
		int fd = rkt_open_card(idx[i]);

		if (fd < 0)
			continue;
		ASSERT_EQ(0, rkt_get_param(fd, DRM_RK1828_PARAM_LINK_TYPE,
					   &self->link[self->n]));
		ASSERT_EQ(0, rkt_get_param(fd, DRM_RK1828_PARAM_P2P_WINDOW,
					   &self->window[self->n]));
		self->minor[self->n] = idx[i];
		self->fd[self->n++] = fd;
	}
	if (self->n < 2)
		SKIP(return, "needs two cards, found %d", self->n);
}

FIXTURE_TEARDOWN(p2p)
{
	int i;

	for (i = 0; i < self->n; i++)
		close(self->fd[i]);
}

/* Index of a card with a peer window, -1 if none. */
static int rkt_window_card(const FIXTURE_DATA(p2p) *self)
{
	int i;

	for (i = 0; i < self->n; i++)
		if (self->window[i])
			return i;
	return -1;
}

TEST_F(p2p, capability_and_window)
{
	uint64_t caps, mem;
	int i;

	for (i = 0; i < self->n; i++) {
		ASSERT_EQ(0, rkt_get_param(self->fd[i],
					   DRM_RK1828_PARAM_CAPABILITIES, &caps));
		EXPECT_TRUE(caps & DRM_RK1828_CAP_P2P);
		ASSERT_EQ(0, rkt_get_param(self->fd[i],
					   DRM_RK1828_PARAM_CARD_MEM_SIZE, &mem));
		/*
		 * USB cards have no window; emulated PCIe cards 64 MiB (none
		 * when card memory is under twice that, rk1828-emu --help).
		 */
		if (self->link[i] == DRM_RK1828_LINK_USB) {
			EXPECT_EQ(0, self->window[i]);
		} else {
			EXPECT_EQ(mem + RKT_CARD_ALIGN >= (128ULL << 20) ? 64ULL << 20 : 0,
				  self->window[i]);
		}
	}
}

TEST_F(p2p, query_every_pair)
{
	int kp2p = rkt_kernel_p2pdma(), i, j;
	struct drm_rk1828_p2p_query q;

	for (i = 0; i < self->n; i++) {
		for (j = 0; j < self->n; j++) {
			uint32_t want;

			ASSERT_EQ(0, rkt_p2p_query(self->fd[i], self->fd[j], &q));
			EXPECT_EQ(self->window[j], q.window_size);
			if (i == j)
				want = DRM_RK1828_P2P_SAME_CARD;
			else if (!self->window[j])
				want = DRM_RK1828_P2P_NO_WINDOW;
			else if (self->link[i] != DRM_RK1828_LINK_PCIE)
				want = DRM_RK1828_P2P_NOT_PCI;
			else if (kp2p == 0)
				want = DRM_RK1828_P2P_NO_KERNEL;
			else
				want = q.status;	/* topology decides */
			if (want != q.status)
				TH_LOG("importer %d exporter %d", i, j);
			EXPECT_EQ(want, q.status);
			if (q.status != DRM_RK1828_P2P_OK) {
				EXPECT_EQ(-1, q.distance);
			} else {
				EXPECT_LE(0, q.distance);
			}
		}
	}
}

TEST_F(p2p, query_rejects_bad_arguments)
{
	struct drm_rk1828_p2p_query q = { .peer_fd = self->fd[1], .flags = 1 };
	int null_fd = open("/dev/null", O_RDONLY);

	EXPECT_EQ(-EINVAL, rkt_ioctl(self->fd[0], DRM_IOCTL_RK1828_P2P_QUERY, &q));
	EXPECT_EQ(-EBADF, rkt_p2p_query(self->fd[0], -1, &q));
	ASSERT_LE(0, null_fd);
	EXPECT_EQ(-EINVAL, rkt_p2p_query(self->fd[0], null_fd, &q));
	close(null_fd);
}

TEST_F(p2p, bo_p2p_rules)
{
	int w = rkt_window_card(self), i, dfd = -1;
	uint64_t mem, win_lo;
	struct drm_rk1828_bo_info info;
	struct rkt_bo bo, plain;

	for (i = 0; i < self->n; i++) {
		EXPECT_EQ(-EINVAL, rkt_bo_create(self->fd[i], 4096,
						 DRM_RK1828_BO_HOST | DRM_RK1828_BO_P2P, &bo));
		if (!self->window[i]) {
			EXPECT_EQ(-EOPNOTSUPP, rkt_bo_create(self->fd[i], 4096,
							     DRM_RK1828_BO_CARD | DRM_RK1828_BO_P2P, &bo));
		}
	}
	if (w < 0)
		SKIP(return, "no card with a peer window (PCIe)");
	ASSERT_EQ(0, rkt_get_param(self->fd[w], DRM_RK1828_PARAM_CARD_MEM_SIZE, &mem));
	mem += RKT_CARD_ALIGN;	/* the reserved first granule */
	win_lo = mem - self->window[w];
	EXPECT_EQ(-E2BIG, rkt_bo_create(self->fd[w], self->window[w] + 4096,
					DRM_RK1828_BO_CARD | DRM_RK1828_BO_P2P, &bo));
	ASSERT_EQ(0, rkt_bo_create(self->fd[w], 1 << 20,
				   DRM_RK1828_BO_CARD | DRM_RK1828_BO_P2P, &bo));
	EXPECT_LE(win_lo, bo.card_addr);
	EXPECT_GE(mem, bo.card_addr + bo.size);
	ASSERT_EQ(0, rkt_bo_info(self->fd[w], bo.handle, &info));
	EXPECT_EQ(DRM_RK1828_BO_CARD | DRM_RK1828_BO_P2P, info.flags);
	/* Other card BOs stay below the window and do not export. */
	ASSERT_EQ(0, rkt_bo_create(self->fd[w], 1 << 20, DRM_RK1828_BO_CARD, &plain));
	EXPECT_GE(win_lo, plain.card_addr + plain.size);
	EXPECT_NE(0, drmPrimeHandleToFD(self->fd[w], plain.handle, DRM_CLOEXEC, &dfd));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(0, drmPrimeHandleToFD(self->fd[w], bo.handle, DRM_CLOEXEC | DRM_RDWR, &dfd));
	if (dfd >= 0)
		close(dfd);
	rkt_gem_close(self->fd[w], &plain);
	rkt_gem_close(self->fd[w], &bo);
}

/*
 * Import on every other card: refused unless the query said P2P_OK; on
 * the exporting card (another file) it is the same BO. With P2P_OK a COPY
 * on the importer moves data into the exporter's memory directly.
 */
TEST_F(p2p, import_follows_the_query)
{
	int w = rkt_window_card(self), i, dfd, again;
	struct drm_rk1828_p2p_query q;
	uint8_t src[4096], back[4096];
	struct drm_rk1828_bo_info info;
	struct rkt_bo bo, cb;
	uint32_t h;

	if (w < 0)
		SKIP(return, "no card with a peer window (PCIe)");
	ASSERT_EQ(0, rkt_bo_create(self->fd[w], 64 << 10,
				   DRM_RK1828_BO_CARD | DRM_RK1828_BO_P2P, &bo));
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd[w], bo.handle,
					DRM_CLOEXEC | DRM_RDWR, &dfd));

	again = rkt_open_card(self->minor[w]);
	ASSERT_LE(0, again);
	EXPECT_EQ(0, drmPrimeFDToHandle(again, dfd, &h));
	EXPECT_EQ(0, rkt_bo_info(again, h, &info));
	EXPECT_EQ(DRM_RK1828_BO_CARD | DRM_RK1828_BO_P2P, info.flags);
	EXPECT_EQ(bo.card_addr, info.card_addr);
	close(again);
	for (i = 0; i < self->n; i++) {
		int ret;

		if (i == w)
			continue;
		ASSERT_EQ(0, rkt_p2p_query(self->fd[i], self->fd[w], &q));
		ret = drmPrimeFDToHandle(self->fd[i], dfd, &h) ? -errno : 0;
		if (q.status != DRM_RK1828_P2P_OK) {
			if (ret != -EOPNOTSUPP)
				TH_LOG("card %d: import gave %d, the query said %u",
				       i, ret, q.status);
			EXPECT_EQ(-EOPNOTSUPP, ret);
			continue;
		}
		ASSERT_EQ(0, ret);
		ASSERT_EQ(0, rkt_bo_info(self->fd[i], h, &info));
		EXPECT_EQ(DRM_RK1828_BO_PEER, info.flags);
		EXPECT_EQ(bo.size, info.size);

		rkt_fill(src, sizeof(src), 0x24 + i);
		ASSERT_EQ(0, rkt_bo_create(self->fd[i], 4096, DRM_RK1828_BO_CARD, &cb));
		ASSERT_EQ(0, rkt_upload(self->fd[i], cb.handle, src, sizeof(src)));
		/* Card i's READ lands in card w's window: no host hop. */
		EXPECT_EQ(0, rkt_copy_sync(self->fd[i], cb.handle, 0, h, 0, 4096));
		ASSERT_EQ(0, rkt_download(self->fd[w], bo.handle, 0, back, sizeof(back)));
		EXPECT_EQ(-1, rkt_check(back, sizeof(back), 0x24 + i));
		rkt_gem_close(self->fd[i], &cb);
		drmCloseBufferHandle(self->fd[i], h);
	}
	close(dfd);
	rkt_gem_close(self->fd[w], &bo);
}

/* Write @val to the sysfs file @path; 0 or -errno. */
static int rkt_sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* The accel nodes that exist; waits up to @ms for @want of them. */
static int rkt_wait_cards(int want, int ms)
{
	int idx[RKT_MAX_CARDS], n = 0;

	while (ms > 0 && (n = rkt_card_indices(idx)) < want) {
		rkt_sleep_ms(100);
		ms -= 100;
	}
	return n;
}

TEST_F_TIMEOUT(p2p, unbind_with_live_export_revokes, 180)
{
	int w = rkt_window_card(self), dfd, n_before, ret, idx[RKT_MAX_CARDS];
	char link[64], dev[PATH_MAX], *pci;
	struct rkt_bo bo;
	uint32_t h;
	uint64_t v;

	if (w < 0)
		SKIP(return, "no card with a peer window (PCIe)");
	snprintf(link, sizeof(link), "/sys/class/accel/accel%d/device", self->minor[w]);
	ASSERT_NE(NULL, realpath(link, dev));
	pci = basename(dev);
	n_before = rkt_card_indices(idx);
	ASSERT_EQ(0, rkt_bo_create(self->fd[w], 64 << 10,
				   DRM_RK1828_BO_CARD | DRM_RK1828_BO_P2P, &bo));
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd[w], bo.handle,
					DRM_CLOEXEC | DRM_RDWR, &dfd));

	/* Removal with the export alive: revoked under its reservation lock. */
	ASSERT_EQ(0, rkt_sysfs_write("/sys/bus/pci/drivers/rk1828/unbind", pci));
	EXPECT_EQ(-ENODEV, rkt_get_param(self->fd[w], DRM_RK1828_PARAM_P2P_WINDOW, &v));
	/* The dma-buf outlives the card; no other card can import it. */
	ret = drmPrimeFDToHandle(self->fd[w == 0 ? 1 : 0], dfd, &h) ? -errno : 0;
	EXPECT_NE(0, ret);
	close(dfd);
	close(self->fd[w]);
	self->fd[w] = open("/dev/null", O_RDONLY);	/* teardown closes it */

	ASSERT_EQ(0, rkt_sysfs_write("/sys/bus/pci/drivers/rk1828/bind", pci));
	EXPECT_EQ(n_before, rkt_wait_cards(n_before, 60000));
}

TEST_HARNESS_MAIN
