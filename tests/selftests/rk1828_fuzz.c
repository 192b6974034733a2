// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Bounded ioctl fuzzer for the rk1828 driver: a fixed number of calls
 * (RK1828_FUZZ_CALLS, default 10000) of random rk1828 and DRM core ioctls
 * on several files of every card, with a mix of valid arguments (handles,
 * syncobjs and BOs the files own, also those of other files and cards,
 * ranges inside BOs) and random ones (sizes, offsets, flags, counts, user
 * pointers, unknown ioctl numbers and argument sizes). The seed is
 * RK1828_FUZZ_SEED (default 1) and printed, so a failure can be replayed.
 *
 * The test passes when every call returned (the process is alive), every
 * card still answers and moves data correctly afterwards and reports
 * CARD_STATE OK; tests/run-all then checks dmesg for WARN, BUG and slab
 * splats, and the guest suite runs a normal generation after it.
 * Runs as root in the guest with job_timeout_ms=3000.
 */
#include <linux/dma-buf.h>
#include <stddef.h>

#include "kselftest_harness.h"
#include "rk1828_util.h"

#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wclobbered"

#define RKT_FUZZ_FILES	8	/* open files at most (over all cards) */
#define RKT_FUZZ_POOL	16	/* remembered handles per kind and file */

/**
 * struct rkt_fuzz_file - one open file and what it owns
 * @fd: accel fd, -1 when closed
 * @card: index into the card list
 * @host: host BO handles (0 = empty slot)
 * @host_size: their sizes
 * @card_bo: card BO handles
 * @card_size: their sizes
 * @sync: syncobj handles
 */
struct rkt_fuzz_file {
	int fd;
	int card;
	uint32_t host[RKT_FUZZ_POOL];
	uint64_t host_size[RKT_FUZZ_POOL];
	uint32_t card_bo[RKT_FUZZ_POOL];
	uint64_t card_size[RKT_FUZZ_POOL];
	uint32_t sync[RKT_FUZZ_POOL];
};

/**
 * struct rkt_fuzz - fuzzer state
 * @seed: xorshift64 state
 * @files: the files
 * @cards: accel minors
 * @n_cards: entries in @cards
 * @calls: calls made so far, by outcome
 * @ok: calls that returned 0
 */
struct rkt_fuzz {
	uint64_t seed;
	struct rkt_fuzz_file files[RKT_FUZZ_FILES];
	int cards[RKT_MAX_CARDS];
	int n_cards;
	long calls;
	long ok;
};

/* Next pseudo-random 64-bit number (xorshift64*). */
static uint64_t rkt_rnd(struct rkt_fuzz *z)
{
	z->seed ^= z->seed >> 12;
	z->seed ^= z->seed << 25;
	z->seed ^= z->seed >> 27;
	return z->seed * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n). */
static uint32_t rkt_below(struct rkt_fuzz *z, uint32_t n)
{
	return (uint32_t)(rkt_rnd(z) % n);
}

/* A size: mostly small and valid, sometimes 0, huge or random. */
static uint64_t rkt_size(struct rkt_fuzz *z)
{
	switch (rkt_below(z, 10)) {
	case 0:
		return 0;
	case 1:
		return rkt_rnd(z);
	case 2:
		return UINT64_MAX - rkt_below(z, 8192);
	case 3:
		return 1ULL << rkt_below(z, 40);
	default:
		return 1 + rkt_below(z, 256 * 1024);
	}
}

/* An offset into a BO of @size bytes, or out of it. */
static uint64_t rkt_offset(struct rkt_fuzz *z, uint64_t size)
{
	switch (rkt_below(z, 8)) {
	case 0:
		return rkt_rnd(z);
	case 1:
		return size;
	default:
		return size ? rkt_below(z, (uint32_t)(size < 65536 ? size : 65536)) : 0;
	}
}

/* A user pointer: valid @p, NULL, a kernel address or random. */
static uint64_t rkt_ptr(struct rkt_fuzz *z, void *p)
{
	switch (rkt_below(z, 10)) {
	case 0:
		return 0;
	case 1:
		return 0xffffffff81000000ULL + rkt_below(z, 1 << 20);
	case 2:
		return rkt_rnd(z);
	default:
		return (uintptr_t)p;
	}
}

/* Some file that is open, or NULL. */
static struct rkt_fuzz_file *rkt_pick_file(struct rkt_fuzz *z)
{
	int i, start = rkt_below(z, RKT_FUZZ_FILES);

	for (i = 0; i < RKT_FUZZ_FILES; i++) {
		struct rkt_fuzz_file *f = &z->files[(start + i) % RKT_FUZZ_FILES];

		if (f->fd >= 0)
			return f;
	}
	return NULL;
}

/* A handle: one of @f's pool, another file's, 0 or random. */
static uint32_t rkt_handle(struct rkt_fuzz *z, struct rkt_fuzz_file *f,
			   const uint32_t *pool, uint64_t *size_out,
			   const uint64_t *sizes)
{
	uint32_t i = rkt_below(z, RKT_FUZZ_POOL);

	*size_out = 4096;
	switch (rkt_below(z, 10)) {
	case 0:
		return 0;
	case 1:
		return (uint32_t)rkt_rnd(z);
	case 2:
		return rkt_below(z, 64);
	default:
		if (sizes)
			*size_out = sizes[i];
		return pool[i];
	}
}

/* Remember @h in the first free slot of @pool (or a random one). */
static void rkt_remember(struct rkt_fuzz *z, uint32_t *pool, uint64_t *sizes,
			 uint32_t h, uint64_t size)
{
	int i;

	for (i = 0; i < RKT_FUZZ_POOL && pool[i]; i++)
		;
	if (i == RKT_FUZZ_POOL)
		i = rkt_below(z, RKT_FUZZ_POOL);
	pool[i] = h;
	if (sizes)
		sizes[i] = size;
}

static void rkt_count(struct rkt_fuzz *z, int ret)
{
	z->calls++;
	if (!ret)
		z->ok++;
}

static void rkt_open_slot(struct rkt_fuzz *z, struct rkt_fuzz_file *f)
{
	memset(f, 0, sizeof(*f));
	f->card = rkt_below(z, z->n_cards);
	f->fd = rkt_open_card(z->cards[f->card]);
	if (f->fd < 0)
		f->fd = -1;
}

static void rkt_fuzz_bo_create(struct rkt_fuzz *z, struct rkt_fuzz_file *f)
{
	struct drm_rk1828_bo_create c = { 0 };
	uint32_t kind = rkt_below(z, 3);
	int ret;

	c.size = kind == 2 ? rkt_size(z) : 4096 + rkt_below(z, 1 << 20);
	c.flags = kind == 0 ? DRM_RK1828_BO_HOST : kind == 1 ?
		  DRM_RK1828_BO_CARD : (uint32_t)rkt_rnd(z);
	ret = rkt_ioctl(f->fd, DRM_IOCTL_RK1828_BO_CREATE, &c);
	rkt_count(z, ret);
	if (ret)
		return;
	if (c.flags == DRM_RK1828_BO_HOST)
		rkt_remember(z, f->host, f->host_size, c.handle, c.size);
	else
		rkt_remember(z, f->card_bo, f->card_size, c.handle, c.size);
}

static void rkt_fuzz_submit(struct rkt_fuzz *z, struct rkt_fuzz_file *f)
{
	struct drm_rk1828_sync syncs[4];
	uint32_t handles[4];
	struct drm_rk1828_submit s = { 0 };
	uint64_t ssize, dsize, dummy;
	int i;

	for (i = 0; i < 4; i++) {
		syncs[i].handle = rkt_handle(z, f, f->sync, &dummy, NULL);
		syncs[i].flags = rkt_below(z, 20) ? 0 : (uint32_t)rkt_rnd(z);
		syncs[i].point = rkt_below(z, 4) ? 0 : rkt_below(z, 8);
		handles[i] = rkt_handle(z, f, f->card_bo, &dummy, f->card_size);
	}
	s.type = rkt_below(z, 10) ? 1 + rkt_below(z, 2) : (uint32_t)rkt_rnd(z);
	s.flags = rkt_below(z, 20) ? 0 : (uint32_t)rkt_rnd(z);
	s.sync_struct_size = rkt_below(z, 10) ? sizeof(struct drm_rk1828_sync) :
			     rkt_below(z, 64);
	s.in_sync_count = rkt_below(z, 3) ? rkt_below(z, 3) : (uint32_t)rkt_rnd(z);
	s.out_sync_count = rkt_below(z, 3) ? rkt_below(z, 3) : (uint32_t)rkt_rnd(z);
	s.in_syncs = rkt_ptr(z, syncs);
	s.out_syncs = rkt_ptr(z, syncs + 2);
	if (s.type == DRM_RK1828_JOB_EXEC) {
		s.src_handle = rkt_handle(z, f, f->card_bo, &ssize, f->card_size);
		s.bo_handle_count = rkt_below(z, 5);
		s.bo_handles = rkt_ptr(z, handles);
	} else {
		bool src_host = rkt_below(z, 2), dst_host = rkt_below(z, 2);

		s.src_handle = rkt_handle(z, f, src_host ? f->host : f->card_bo,
					  &ssize, src_host ? f->host_size : f->card_size);
		s.dst_handle = rkt_handle(z, f, dst_host ? f->host : f->card_bo,
					  &dsize, dst_host ? f->host_size : f->card_size);
		s.dst_offset = rkt_offset(z, dsize);
	}
	s.src_offset = rkt_offset(z, ssize);
	s.size = rkt_below(z, 4) ? 1 + rkt_below(z, (uint32_t)(ssize ? ssize : 1)) :
		 rkt_size(z);
	rkt_count(z, rkt_ioctl(f->fd, DRM_IOCTL_RK1828_SUBMIT, &s));
}

static void rkt_fuzz_syncobj(struct rkt_fuzz *z, struct rkt_fuzz_file *f)
{
	uint32_t h, hs[2];
	uint64_t dummy, pts[2] = { 1, 2 };
	int sfd, ret = 0;

	hs[0] = rkt_handle(z, f, f->sync, &dummy, NULL);
	hs[1] = rkt_handle(z, f, f->sync, &dummy, NULL);
	switch (rkt_below(z, 8)) {
	case 0:
		ret = drmSyncobjCreate(f->fd, rkt_below(z, 2), &h) ? -errno : 0;
		if (!ret)
			rkt_remember(z, f->sync, NULL, h, 0);
		break;
	case 1:
		ret = drmSyncobjWait(f->fd, hs, 1 + rkt_below(z, 2),
				     rkt_now_ns() + rkt_below(z, 3) * RKT_MS,
				     rkt_below(z, 4), NULL) ? -errno : 0;
		break;
	case 2:
		ret = drmSyncobjTimelineWait(f->fd, hs, pts, 1 + rkt_below(z, 2),
					     rkt_now_ns() + rkt_below(z, 3) * RKT_MS,
					     rkt_below(z, 8), NULL) ? -errno : 0;
		break;
	case 3:
		ret = drmSyncobjExportSyncFile(f->fd, hs[0], &sfd) ? -errno : 0;
		if (!ret) {
			struct rkt_fuzz_file *g = rkt_pick_file(z);

			if (g && drmSyncobjImportSyncFile(g->fd, g->sync[0], sfd))
				ret = -errno;
			close(sfd);
		}
		break;
	case 4:
		ret = drmSyncobjQuery(f->fd, hs, pts, 1 + rkt_below(z, 2)) ? -errno : 0;
		break;
	case 5:
		ret = drmSyncobjTransfer(f->fd, hs[0], rkt_below(z, 4), hs[1],
					 rkt_below(z, 4), 0) ? -errno : 0;
		break;
	case 6:
		ret = drmSyncobjTimelineSignal(f->fd, hs, pts, 1) ? -errno : 0;
		break;
	default:
		ret = drmSyncobjDestroy(f->fd, hs[0]) ? -errno : 0;
		break;
	}
	rkt_count(z, ret);
}

static void rkt_fuzz_prime(struct rkt_fuzz *z, struct rkt_fuzz_file *f)
{
	struct rkt_fuzz_file *g = rkt_pick_file(z);
	uint64_t size;
	uint32_t h = rkt_handle(z, f, rkt_below(z, 4) ? f->host : f->card_bo,
				&size, NULL), h2;
	int dfd, ret;

	ret = drmPrimeHandleToFD(f->fd, h, DRM_CLOEXEC | (rkt_below(z, 2) ? DRM_RDWR : 0),
				 &dfd) ? -errno : 0;
	if (!ret && g) {
		ret = drmPrimeFDToHandle(g->fd, dfd, &h2) ? -errno : 0;
		if (!ret)
			rkt_remember(z, g->host, g->host_size, h2, 4096);
		close(dfd);
	}
	rkt_count(z, ret);
}

/* An ioctl number and argument from nowhere: core and driver range. */
static void rkt_fuzz_raw(struct rkt_fuzz *z, struct rkt_fuzz_file *f)
{
	/* as large as any _IOC_SIZE, so the kernel never writes past it */
	static uint8_t arg[1 << 14];
	unsigned long nr, dir, size, req;
	uint32_t i;

	for (i = 0; i < 512; i++)
		arg[i] = rkt_below(z, 4) ? 0 : (uint8_t)rkt_rnd(z);
	nr = rkt_below(z, 2) ? rkt_below(z, 0x100) : 0x40 + rkt_below(z, 0x20);
	dir = rkt_below(z, 4);
	size = rkt_below(z, 2) ? rkt_below(z, 128) : rkt_below(z, 1 << 14);
	req = (dir << 30) | (size << 16) | ('d' << 8) | nr;
	/* a pointer that is not ours only for calls that read from it */
	rkt_count(z, ioctl(f->fd, req, dir & 2 ? (void *)arg :
			   (void *)(uintptr_t)rkt_ptr(z, arg)) ? -errno : 0);
}

static void rkt_fuzz_one(struct rkt_fuzz *z)
{
	struct rkt_fuzz_file *f = &z->files[rkt_below(z, RKT_FUZZ_FILES)];
	struct drm_rk1828_get_param gp = { 0 };
	struct drm_rk1828_bo_info bi = { 0 };
	struct drm_rk1828_bo_wait bw = { 0 };
	struct drm_gem_close gc = { 0 };
	uint64_t size;

	if (f->fd < 0) {
		rkt_open_slot(z, f);
		rkt_count(z, f->fd < 0 ? -1 : 0);
		return;
	}
	switch (rkt_below(z, 20)) {
	case 0:
		gp.param = rkt_below(z, 4) ? rkt_below(z, 16) : (uint32_t)rkt_rnd(z);
		gp.pad = rkt_below(z, 10) ? 0 : (uint32_t)rkt_rnd(z);
		rkt_count(z, rkt_ioctl(f->fd, DRM_IOCTL_RK1828_GET_PARAM, &gp));
		break;
	case 1:
	case 2:
	case 3:
		rkt_fuzz_bo_create(z, f);
		break;
	case 4:
		bi.handle = rkt_handle(z, f, f->card_bo, &size, NULL);
		rkt_count(z, rkt_ioctl(f->fd, DRM_IOCTL_RK1828_BO_INFO, &bi));
		break;
	case 5:
	case 6:
	case 7:
	case 8:
	case 9:
		rkt_fuzz_submit(z, f);
		break;
	case 10:
		bw.handle = rkt_handle(z, f, rkt_below(z, 2) ? f->host : f->card_bo,
				       &size, NULL);
		bw.timeout_ns = rkt_now_ns() + rkt_below(z, 4) * RKT_MS;
		bw.flags = rkt_below(z, 10) ? 0 : (uint32_t)rkt_rnd(z);
		rkt_count(z, rkt_ioctl(f->fd, DRM_IOCTL_RK1828_BO_WAIT, &bw));
		break;
	case 11:
		gc.handle = rkt_handle(z, f, rkt_below(z, 2) ? f->host : f->card_bo,
				       &size, NULL);
		rkt_count(z, rkt_ioctl(f->fd, DRM_IOCTL_GEM_CLOSE, &gc));
		break;
	case 12:
	case 13:
	case 14:
		rkt_fuzz_syncobj(z, f);
		break;
	case 15:
		rkt_fuzz_prime(z, f);
		break;
	case 16:
	case 17:
		rkt_fuzz_raw(z, f);
		break;
	case 18: {
		/* map a host BO and touch it */
		uint32_t i = rkt_below(z, RKT_FUZZ_POOL);
		struct drm_rk1828_bo_info info;

		if (f->host[i] && !rkt_bo_info(f->fd, f->host[i], &info) &&
		    info.mmap_offset) {
			uint8_t *p = mmap(NULL, info.size, PROT_READ | PROT_WRITE,
					  MAP_SHARED, f->fd, (off_t)info.mmap_offset);

			if (p != MAP_FAILED) {
				p[rkt_below(z, (uint32_t)info.size)] ^= 0x5a;
				munmap(p, info.size);
			}
		}
		rkt_count(z, 0);
		break;
	}
	default:
		/* close, possibly with jobs queued; reopened later */
		close(f->fd);
		f->fd = -1;
		rkt_count(z, 0);
		break;
	}
}

/* No shared state; the fixture only gives the test a longer timeout. */
FIXTURE(fuzz) {
	int unused;
};

FIXTURE_SETUP(fuzz)
{
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, fuzz_then_cards_work, 400)
{
	const char *env_calls = getenv("RK1828_FUZZ_CALLS");
	const char *env_seed = getenv("RK1828_FUZZ_SEED");
	long calls = env_calls ? atol(env_calls) : 10000, i;
	static struct rkt_fuzz z;
	int64_t t0 = rkt_now_ns();
	uint64_t state = UINT64_MAX;

	z.seed = env_seed ? strtoull(env_seed, NULL, 0) : 1;
	if (!z.seed)
		z.seed = 1;
	TH_LOG("seed %llu, %ld calls", (unsigned long long)z.seed, calls);
	z.n_cards = rkt_card_indices(z.cards);
	if (!z.n_cards)
		SKIP(return, "no card");
	for (i = 0; i < RKT_FUZZ_FILES; i++)
		rkt_open_slot(&z, &z.files[i]);
	for (i = 0; i < calls; i++) {
		rkt_fuzz_one(&z);
		if (i % 1000 == 999)
			TH_LOG("%ld calls, %lld ms", i + 1,
			       (long long)((rkt_now_ns() - t0) / RKT_MS));
	}
	for (i = 0; i < RKT_FUZZ_FILES; i++)
		if (z.files[i].fd >= 0)
			close(z.files[i].fd);
	TH_LOG("%ld calls (%ld returned 0) in %lld ms", z.calls, z.ok,
	       (long long)((rkt_now_ns() - t0) / RKT_MS));
	EXPECT_EQ(calls, z.calls);

	/* every card still answers and moves data intact */
	for (i = 0; i < z.n_cards; i++) {
		int fd = rkt_open_card(z.cards[i]);

		ASSERT_LE(0, fd) TH_LOG("accel%d after fuzzing", z.cards[i]);
		EXPECT_EQ(0, rkt_get_param(fd, DRM_RK1828_PARAM_CARD_STATE, &state));
		EXPECT_EQ(DRM_RK1828_CARD_OK, state);
		EXPECT_EQ(0, rkt_round_trip(fd, 1 << 20, 300 + i))
			TH_LOG("accel%d after fuzzing", z.cards[i]);
		close(fd);
	}
}

TEST_HARNESS_MAIN
