// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * kselftest for the rk1828 driver's recovery paths: job timeout with card
 * reset, disconnect under load (USB deauthorization, or removal of a PCIe
 * function from its bus), a sync_file that outlives its card, module
 * unload (refused while a job's fence lives) and reload.
 *
 * Runs as root inside the guest after rk1828_uapi, with the module loaded
 * and (for the disconnect test) at least two cards:
 *   tools/vm-run --cards 2 -- build/tests/rk1828_robust
 * The tests run in this order and change the system: the disconnect test
 * leaves the last card re-enumerated under a new accel node, the reload
 * test unloads and reloads rk1828.ko. The module file is $RK1828_KO, or
 * ../rk1828.ko next to this binary's directory (build/rk1828.ko).
 * Module parameters for the reload are $RK1828_MODULE_PARAMS, or else the
 * current job_timeout_ms.
 */
#include <linux/sync_file.h>
#include <poll.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "rk1828_util.h"

/*
 * The harness compares its two operands as given; comparing an errno or a
 * literal with an unsigned value is intended here.
 */
#pragma GCC diagnostic ignored "-Wsign-compare"
/* setjmp in the harness's TEST_F wrapper; its locals are not reused. */
#pragma GCC diagnostic ignored "-Wclobbered"

#define RKT_PARAM_DIR	"/sys/module/rk1828/parameters"
#define RKT_TIMEOUT_FILE	RKT_PARAM_DIR "/job_timeout_ms"

/**
 * rkt_write_file() - write a string to a sysfs file
 * @path: file
 * @s: text
 *
 * Return: 0 or -errno.
 */
static int rkt_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	return 0;
}

/**
 * rkt_usb_dev_of() - the USB device directory behind an accel node
 * @idx: accel minor
 * @out: output path, PATH_MAX bytes
 *
 * Walks up from /sys/class/accel/accelN/device (the bound interface) to
 * the first directory that has both idVendor and authorized.
 *
 * Return: 0 or -ENOENT.
 */
static int rkt_usb_dev_of(int idx, char *out)
{
	char path[PATH_MAX], probe[PATH_MAX + 32];
	char *p;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device", idx);
	if (!realpath(path, out))
		return -ENOENT;
	while (strlen(out) > 4) {
		snprintf(probe, sizeof(probe), "%s/idVendor", out);
		if (access(probe, F_OK) == 0) {
			snprintf(probe, sizeof(probe), "%s/authorized", out);
			if (access(probe, W_OK) == 0)
				return 0;
		}
		p = strrchr(out, '/');
		if (!p)
			break;
		*p = '\0';
	}
	return -ENOENT;
}

/**
 * struct rkt_unplug - how to unplug a card and plug it in again from sysfs
 * @off: file to write to unplug
 * @off_val: what to write
 * @on: file to write to plug it in again
 * @on_val: what to write
 */
struct rkt_unplug {
	char off[PATH_MAX + 16];
	const char *off_val;
	char on[PATH_MAX + 16];
	const char *on_val;
};

/**
 * rkt_unplug_of() - the sysfs switches of the card behind an accel node
 * @idx: accel minor
 * @u: output
 *
 * A USB card is deauthorized and authorized again (authorized 0/1), a
 * PCIe card is removed from its bus and found again by a rescan
 * (remove, /sys/bus/pci/rescan). Either way the driver sees the card
 * leave while it is in use.
 *
 * Return: 0 or -ENOENT.
 */
static int rkt_unplug_of(int idx, struct rkt_unplug *u)
{
	char dev[PATH_MAX], path[PATH_MAX + 32];

	if (rkt_usb_dev_of(idx, dev) == 0) {
		snprintf(u->off, sizeof(u->off), "%s/authorized", dev);
		snprintf(u->on, sizeof(u->on), "%s/authorized", dev);
		u->off_val = "0";
		u->on_val = "1";
		return 0;
	}
	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device", idx);
	if (!realpath(path, dev))
		return -ENOENT;
	snprintf(u->off, sizeof(u->off), "%s/remove", dev);
	if (!strstr(dev, "/pci") || access(u->off, W_OK))
		return -ENOENT;
	snprintf(u->on, sizeof(u->on), "/sys/bus/pci/rescan");
	u->off_val = "1";
	u->on_val = "1";
	return 0;
}

/*
 * How long the nodes may take to come or go after an unplug, a re-plug or
 * insmod: only a hang reaches it (a loaded TCG guest probes 4 cards in
 * well over the second it takes natively). The tests that wait for it
 * have 300 s.
 */
#define RKT_NODES_MS	90000

/**
 * rkt_wait_cards() - wait until exactly @n accel nodes exist
 * @n: wanted count
 * @ms: timeout
 *
 * Return: the count seen last.
 */
static int rkt_wait_cards(int n, int ms)
{
	int idx[RKT_MAX_CARDS], have = 0;
	int64_t end = rkt_now_ns() + ms * RKT_MS;

	do {
		have = rkt_card_indices(idx);
		if (have == n)
			break;
		rkt_sleep_ms(100);
	} while (rkt_now_ns() < end);
	return have;
}

/* The tests share nothing; the fixture only gives them a longer timeout. */
FIXTURE(sys) {
	int unused;
};

FIXTURE_SETUP(sys)
{
}

FIXTURE_TEARDOWN(sys)
{
}

/* ------------------------------------------------------------ job timeout */

TEST_F_TIMEOUT(sys, job_timeout_resets_and_spares_others, 120)
{
	unsigned long long tmo;
	struct rkt_bo guilty, innocent;
	int64_t t0, elapsed;
	int fd_a, fd_b, ret, status, sfd;
	uint32_t so;
	int32_t st;

	if (access("/dev/accel/accel0", F_OK))
		SKIP(return, "no /dev/accel/accel0");
	ret = rkt_read_param_file(RKT_TIMEOUT_FILE, &tmo);
	if (ret)
		SKIP(return, "cannot read %s (%d)", RKT_TIMEOUT_FILE, ret);
	if (tmo > 10000)
		SKIP(return, "job_timeout_ms=%llu too long for a test; load with job_timeout_ms=2000",
		     tmo);
	fd_a = rkt_open_card(0);
	fd_b = rkt_open_card(0);
	ASSERT_LE(0, fd_a);
	ASSERT_LE(0, fd_b);
	ASSERT_EQ(0, drmSyncobjCreate(fd_a, 0, &so));

	/* A: a DELAY well over the timeout; B: a short DELAY queued behind it */
	t0 = rkt_now_ns();
	ASSERT_EQ(0, rkt_delay_job(fd_a, (uint32_t)tmo + 3000, &guilty, so));
	ASSERT_EQ(0, rkt_delay_job(fd_b, 100, &innocent, 0));

	ASSERT_EQ(0, rkt_bo_wait(fd_a, guilty.handle, rkt_now_ns() + (tmo + 60000) * RKT_MS,
				&st));
	elapsed = rkt_now_ns() - t0;
	TH_LOG("job_timeout_ms=%llu: guilty job status %d after %lld ms", tmo, st,
	       (long long)(elapsed / RKT_MS));
	EXPECT_EQ(-ETIMEDOUT, st);
	EXPECT_LE((int64_t)tmo * RKT_MS, elapsed);
	ASSERT_EQ(0, drmSyncobjExportSyncFile(fd_a, so, &sfd));
	ASSERT_EQ(0, rkt_sync_file_status(sfd, 0, &status));
	EXPECT_EQ(-ETIMEDOUT, status);
	close(sfd);

	/* the innocent job queued behind the guilty one still succeeds */
	ASSERT_EQ(0, rkt_bo_wait(fd_b, innocent.handle, rkt_now_ns() + 30 * RKT_NS, &st));
	EXPECT_EQ(0, st);
	/* and the card works for B afterwards */
	EXPECT_EQ(0, rkt_round_trip(fd_b, 1 << 20, 7));
	ASSERT_EQ(0, rkt_delay_job(fd_b, 50, &innocent, 0));
	ASSERT_EQ(0, rkt_bo_wait(fd_b, innocent.handle, rkt_now_ns() + 30 * RKT_NS, &st));
	EXPECT_EQ(0, st);
	close(fd_a);
	close(fd_b);
}

/* ----------------------------------------------- disconnect (USB, PCIe) */

/**
 * struct waiter - a thread blocked in BO_WAIT across the unplug
 * @fd: accel fd
 * @handle: BO to wait on
 * @ret: BO_WAIT return
 * @status: BO_WAIT job status
 * @done_ns: when BO_WAIT returned
 */
struct waiter {
	int fd;
	uint32_t handle;
	int ret;
	int32_t status;
	int64_t done_ns;
};

/**
 * waiter_fn() - thread body: BO_WAIT with a 60 s deadline
 * @arg: struct waiter
 *
 * Return: NULL.
 */
/**
 * rkt_fenced_sync_file() - run one small COPY and export its out-fence
 * @fd: accel fd
 * @sfd: output, sync_file fd of the finished job
 *
 * Return: 0 once the job finished successfully, or a negative errno.
 */
static int rkt_fenced_sync_file(int fd, int *sfd)
{
	struct rkt_bo host, card;
	uint32_t so;
	int ret, st;

	ret = rkt_host_bo(fd, 4096, &host);
	if (!ret)
		ret = rkt_bo_create(fd, 4096, DRM_RK1828_BO_CARD, &card);
	if (!ret)
		ret = drmSyncobjCreate(fd, 0, &so) ? -errno : 0;
	if (!ret)
		ret = rkt_copy(fd, host.handle, 0, card.handle, 0, 4096, 0, so);
	if (!ret)
		ret = drmSyncobjExportSyncFile(fd, so, sfd) ? -errno : 0;
	if (!ret)
		ret = rkt_sync_file_status(*sfd, 20000, &st);
	if (!ret && st != 1)
		ret = st < 0 ? st : -ETIMEDOUT;
	munmap(host.map, host.size);
	return ret;
}

/**
 * rkt_sync_file_names() - read a one-fence sync_file's names and status
 * @sfd: sync_file fd
 * @fence: output, the fence's info (driver and timeline name, status)
 *
 * Return: 0 or -errno.
 */
static int rkt_sync_file_names(int sfd, struct sync_fence_info *fence)
{
	struct sync_file_info info = { 0 };

	memset(fence, 0, sizeof(*fence));
	info.num_fences = 1;
	info.sync_fence_info = (uintptr_t)fence;
	return ioctl(sfd, SYNC_IOC_FILE_INFO, &info) ? -errno : 0;
}

/**
 * rkt_names_detached() - does a signalled fence report placeholder names?
 * @fi: the fence's info from SYNC_IOC_FILE_INFO
 *
 * Newer kernels no longer call a signalled fence's ops for its names
 * (drivers may free what they point to once the fence signalled):
 * dma_fence_driver_name() and dma_fence_timeline_name() then return
 * "detached-driver" and "signaled-timeline". Older kernels (Debian's 6.12)
 * return the names of the fence's ops at any time.
 *
 * Return: true for the placeholders of a signalled fence.
 */
static bool rkt_names_detached(const struct sync_fence_info *fi)
{
	return fi->status == 1 && !strcmp(fi->driver_name, "detached-driver") &&
	       !strcmp(fi->obj_name, "signaled-timeline");
}

/*
 * Fault 2: a sync_file of a job outlives its card. After close and
 * unplug, SYNC_IOC_FILE_INFO read the scheduler fence's timeline name
 * from the freed device (a GPF on slab poison). The job's fences keep the
 * device, so the names stay valid until the sync_file is closed (kernels
 * that give a signalled fence placeholder names do not read them).
 */
TEST_F_TIMEOUT(sys, sync_file_outlives_unplugged_card, 300)
{
	int idx[RKT_MAX_CARDS], n, last, fd, sfd = -1;
	struct sync_fence_info fi;
	struct rkt_unplug u;

	n = rkt_card_indices(idx);
	if (n < 1)
		SKIP(return, "no card");
	last = idx[n - 1];
	ASSERT_EQ(0, rkt_unplug_of(last, &u));
	fd = rkt_open_card(last);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rkt_fenced_sync_file(fd, &sfd));
	close(fd);
	ASSERT_EQ(0, rkt_write_file(u.off, u.off_val));
	ASSERT_EQ(n - 1, rkt_wait_cards(n - 1, RKT_NODES_MS));
	rkt_sleep_ms(500);	/* let the device's last references go */

	ASSERT_EQ(0, rkt_sync_file_names(sfd, &fi));
	if (!rkt_names_detached(&fi)) {
		EXPECT_STREQ("drm_sched", fi.driver_name);
		EXPECT_STREQ("copy", fi.obj_name);
	}
	EXPECT_EQ(1, fi.status);
	close(sfd);

	ASSERT_EQ(0, rkt_write_file(u.on, u.on_val));
	ASSERT_EQ(n, rkt_wait_cards(n, RKT_NODES_MS));
}

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	w->ret = rkt_bo_wait(w->fd, w->handle, rkt_now_ns() + 60 * RKT_NS, &w->status);
	w->done_ns = rkt_now_ns();
	return NULL;
}

TEST_F_TIMEOUT(sys, disconnect_under_load, 300)
{
	int idx[RKT_MAX_CARDS], n, n_after, last, fd, fd0, sfd, status, i;
	struct rkt_unplug u;
	struct rkt_bo host, card, prog;
	struct waiter w = { 0 };
	struct rkt_bo bo;
	uint64_t v;
	pthread_t th;
	uint32_t so;
	int64_t t_unplug;

	n = rkt_card_indices(idx);
	if (n < 2)
		SKIP(return, "needs two cards (found %d)", n);
	last = idx[n - 1];
	ASSERT_EQ(0, rkt_unplug_of(last, &u)) {
		TH_LOG("no USB device or PCI function behind accel%d", last);
	}
	TH_LOG("unplugging accel%d: %s", last, u.off);

	fd = rkt_open_card(last);
	ASSERT_LE(0, fd);
	fd0 = rkt_open_card(idx[0]);
	ASSERT_LE(0, fd0);
	ASSERT_EQ(0, rkt_host_bo(fd, 1 << 20, &host));
	ASSERT_EQ(0, rkt_bo_create(fd, 1 << 20, DRM_RK1828_BO_CARD, &card));
	ASSERT_EQ(0, drmSyncobjCreate(fd, 0, &so));
	rkt_fill(host.map, 1 << 20, 3);

	/*
	 * Queue ~6 s of work on both queues: six 1 s EXECs of one program BO
	 * (a submit, no BO create or upload each, so even a debug kernel's
	 * slow ioctls queue it well before the first job ends) between
	 * copies; the last EXEC signals @so.
	 */
	ASSERT_EQ(0, rkt_delay_job(fd, 1000, &prog, 0));
	for (i = 1; i < 6; i++) {
		ASSERT_EQ(0, rkt_copy(fd, host.handle, 0, card.handle, 0, 1 << 20, 0, 0));
		ASSERT_EQ(0, rkt_copy(fd, card.handle, 0, host.handle, 0, 1 << 20, 0, 0));
		ASSERT_EQ(0, rkt_exec(fd, prog.handle, sizeof(struct rk1828_program), NULL, 0,
				      0, i == 5 ? so : 0));
	}
	ASSERT_EQ(0, drmSyncobjExportSyncFile(fd, so, &sfd));
	w.fd = fd;
	w.handle = prog.handle;
	ASSERT_EQ(0, pthread_create(&th, NULL, waiter_fn, &w));
	rkt_sleep_ms(300);
	/* the precondition: the last job is still queued when the card goes */
	ASSERT_EQ(-ETIME, drmSyncobjWait(fd, &so, 1, 0, 0, NULL));

	t_unplug = rkt_now_ns();
	ASSERT_EQ(0, rkt_write_file(u.off, u.off_val));

	/* the blocked waiter wakes up with an error, well before its deadline */
	pthread_join(th, NULL);
	TH_LOG("waiter: BO_WAIT %d, job status %d, %lld ms after the unplug",
	       w.ret, w.status, (long long)((w.done_ns - t_unplug) / RKT_MS));
	EXPECT_TRUE(w.ret == -ENODEV || (w.ret == 0 && w.status < 0)) {
		TH_LOG("BO_WAIT across unplug: ret %d status %d", w.ret, w.status);
	}
	EXPECT_GT(t_unplug + 20 * RKT_NS, w.done_ns);
	/* the last job's fence is signalled with an error */
	ASSERT_EQ(0, rkt_sync_file_status(sfd, 20000, &status));
	EXPECT_GT(0, status);
	close(sfd);

	/* every ioctl now fails with -ENODEV; close still works */
	EXPECT_EQ(-ENODEV, rkt_get_param(fd, DRM_RK1828_PARAM_CARD_MEM_SIZE, &v));
	EXPECT_EQ(-ENODEV, rkt_bo_create(fd, 4096, DRM_RK1828_BO_HOST, &bo));
	EXPECT_EQ(-ENODEV, rkt_bo_create(fd, 4096, DRM_RK1828_BO_CARD, &bo));
	EXPECT_EQ(-ENODEV, rkt_copy(fd, host.handle, 0, card.handle, 0, 4096, 0, 0));
	EXPECT_EQ(-ENODEV, rkt_bo_wait(fd, card.handle, rkt_now_ns() + RKT_NS, NULL));
	munmap(host.map, host.size);
	EXPECT_EQ(0, close(fd));

	/* the other cards keep working */
	EXPECT_EQ(0, rkt_round_trip(fd0, 1 << 20, 4));
	EXPECT_EQ(0, rkt_get_param(fd0, DRM_RK1828_PARAM_CARD_MEM_SIZE, &v));

	/* re-authorize (USB) or rescan (PCIe): the card comes back */
	ASSERT_EQ(0, rkt_write_file(u.on, u.on_val));
	n_after = rkt_wait_cards(n, RKT_NODES_MS);
	ASSERT_EQ(n, n_after);
	rkt_card_indices(idx);
	for (i = 0; i < n; i++) {
		int f = rkt_open_card(idx[i]);

		ASSERT_LE(0, f);
		EXPECT_EQ(0, rkt_round_trip(f, 65536, 10 + i)) {
			TH_LOG("accel%d after re-plug", idx[i]);
		}
		close(f);
	}
	close(fd0);
}

/* ----------------------------------------------------------- unload/reload */

/**
 * rkt_insmod() - load @path with @params through finit_module(2)
 * @path: module file
 * @params: parameter string
 *
 * Return: 0 or -errno.
 */
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

/**
 * rkt_rmmod() - delete_module(2) without waiting
 *
 * Return: 0 or -errno (-EWOULDBLOCK while the module is in use).
 */
static int rkt_rmmod(void)
{
	return syscall(SYS_delete_module, "rk1828", O_NONBLOCK) ? -errno : 0;
}

TEST_F_TIMEOUT(sys, unload_reload, 300)
{
	char ko[PATH_MAX], params[256];
	const char *env = getenv("RK1828_MODULE_PARAMS");
	unsigned long long tmo = 0, tmo_after;
	int idx[RKT_MAX_CARDS], n, fd, i, rm_busy, rm, ins, gone_nodes, sfd;
	struct sync_fence_info fi;
	bool have_tmo;

	if (access("/sys/module/rk1828", F_OK))
		SKIP(return, "rk1828 is not loaded");
	rkt_project_path("RK1828_KO", "build/rk1828.ko", ko);
	if (access(ko, R_OK))
		SKIP(return, "no module file %.200s (set RK1828_KO)", ko);
	have_tmo = rkt_read_param_file(RKT_TIMEOUT_FILE, &tmo) == 0;
	if (env)
		snprintf(params, sizeof(params), "%s", env);
	else if (have_tmo)
		snprintf(params, sizeof(params), "job_timeout_ms=%llu", tmo);
	else
		params[0] = '\0';
	n = rkt_card_indices(idx);
	ASSERT_LT(0, n);

	/* an open file pins the module */
	fd = rkt_open_card(idx[0]);
	ASSERT_LE(0, fd);
	rm_busy = rkt_rmmod();
	close(fd);
	EXPECT_TRUE(rm_busy == -EWOULDBLOCK || rm_busy == -EBUSY) {
		TH_LOG("rmmod with an open fd: %d", rm_busy);
	}
	if (rm_busy == 0)
		ASSERT_EQ(0, rkt_insmod(ko, params));
	ASSERT_EQ(0, access("/sys/module/rk1828", F_OK));

	/*
	 * Fault 3: so does a sync_file of a finished job, with no file open:
	 * its fences call into the module when they are read or released.
	 */
	fd = rkt_open_card(idx[0]);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rkt_fenced_sync_file(fd, &sfd));
	close(fd);
	for (i = 0, rm_busy = -EBUSY; rm_busy && i < 10; i++) {
		rkt_sleep_ms(100);
		rm_busy = rkt_rmmod();
	}
	EXPECT_TRUE(rm_busy == -EWOULDBLOCK || rm_busy == -EBUSY) {
		TH_LOG("rmmod with a live sync_file: %d", rm_busy);
	}
	ASSERT_EQ(0, rkt_sync_file_names(sfd, &fi));
	if (!rkt_names_detached(&fi)) {
		EXPECT_STREQ("copy", fi.obj_name);
	}
	EXPECT_EQ(1, fi.status);
	close(sfd);
	if (rm_busy == 0)
		ASSERT_EQ(0, rkt_insmod(ko, params));

	/* no open files: unload, check it is gone, load again */
	rm = rkt_rmmod();
	for (i = 0; rm == -EWOULDBLOCK && i < 600; i++) {
		/* the last fd's release may still be running */
		rkt_sleep_ms(100);
		rm = rkt_rmmod();
	}
	gone_nodes = rkt_card_indices(idx);
	EXPECT_EQ(0, rm);
	EXPECT_NE(0, access("/sys/module/rk1828", F_OK));
	EXPECT_EQ(0, gone_nodes);
	ins = rm ? 0 : rkt_insmod(ko, params);
	ASSERT_EQ(0, ins) {
		TH_LOG("insmod %s %s", ko, params);
	}
	ASSERT_EQ(n, rkt_wait_cards(n, RKT_NODES_MS));
	if (have_tmo && !env) {
		ASSERT_EQ(0, rkt_read_param_file(RKT_TIMEOUT_FILE, &tmo_after));
		EXPECT_EQ(tmo, tmo_after);
	}
	rkt_card_indices(idx);
	for (i = 0; i < n; i++) {
		fd = rkt_open_card(idx[i]);
		ASSERT_LE(0, fd);
		EXPECT_EQ(0, rkt_round_trip(fd, 65536, 20 + i)) {
			TH_LOG("accel%d after reload", idx[i]);
		}
		close(fd);
	}
}

TEST_HARNESS_MAIN
