// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * kselftest for the rk1828 accel uapi (uapi/drm/rk1828_accel.h).
 *
 * Runs inside the guest with the module loaded and at least one card
 * (tools/vm-run --cards 2 -- build/tests/rk1828_uapi). Every ioctl's
 * success path is checked against the values the header promises, and
 * every documented rejection against its exact errno. Tests that need a
 * second card (accel1) or the vgem module (a fence userspace controls)
 * SKIP with a message when those are missing.
 *
 * Raw ioctls (drmIoctl) are used throughout so that the ABI is tested,
 * not librk1828. Some tests run DELAY programs of up to 1.5 s, so the
 * module's job_timeout_ms must be at least 2000 (the default is larger).
 */
#include <linux/dma-buf.h>
#include <stddef.h>
#include <linux/sync_file.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "kselftest_harness.h"
#include "rk1828_util.h"

/*
 * The harness compares its two operands as given; comparing an errno or a
 * literal with an unsigned ABI field is intended here.
 */
#pragma GCC diagnostic ignored "-Wsign-compare"
/* setjmp in the harness's TEST_F wrapper; its locals are not reused. */
#pragma GCC diagnostic ignored "-Wclobbered"

_Static_assert(sizeof(struct drm_rk1828_get_param) == 16, "get_param layout");
_Static_assert(sizeof(struct drm_rk1828_bo_create) == 32, "bo_create layout");
_Static_assert(sizeof(struct drm_rk1828_bo_info) == 32, "bo_info layout");
_Static_assert(sizeof(struct drm_rk1828_sync) == 16, "sync layout");
_Static_assert(sizeof(struct drm_rk1828_submit) == 88, "submit layout");
_Static_assert(sizeof(struct drm_rk1828_bo_wait) == 24, "bo_wait layout");
/*
 * Same layout for 32-bit userspace (i386 aligns __u64 to 4 bytes): every
 * __u64 at a multiple of 8 and no tail padding.
 */
#define RKT_FIELD_AT(type, member, off) \
	_Static_assert(offsetof(struct type, member) == (off), #type "." #member)
RKT_FIELD_AT(drm_rk1828_get_param, value, 8);
RKT_FIELD_AT(drm_rk1828_bo_create, size, 0);
RKT_FIELD_AT(drm_rk1828_bo_create, card_addr, 16);
RKT_FIELD_AT(drm_rk1828_bo_create, mmap_offset, 24);
RKT_FIELD_AT(drm_rk1828_bo_info, size, 8);
RKT_FIELD_AT(drm_rk1828_bo_info, card_addr, 16);
RKT_FIELD_AT(drm_rk1828_bo_info, mmap_offset, 24);
RKT_FIELD_AT(drm_rk1828_sync, point, 8);
RKT_FIELD_AT(drm_rk1828_submit, in_syncs, 8);
RKT_FIELD_AT(drm_rk1828_submit, out_syncs, 16);
RKT_FIELD_AT(drm_rk1828_submit, bo_handles, 24);
RKT_FIELD_AT(drm_rk1828_submit, src_offset, 56);
RKT_FIELD_AT(drm_rk1828_submit, dst_offset, 64);
RKT_FIELD_AT(drm_rk1828_submit, size, 72);
RKT_FIELD_AT(drm_rk1828_submit, seqno, 80);
RKT_FIELD_AT(drm_rk1828_bo_wait, timeout_ns, 8);
RKT_FIELD_AT(drm_rk1828_bo_wait, job_status, 16);
_Static_assert(sizeof(struct rk1828_program) == 160, "program layout");
_Static_assert(sizeof(struct rk1828_prog_layer) == 240, "layer layout");

/* vgem uapi (include/uapi/drm/vgem_drm.h): a fence userspace signals. */
struct rkt_vgem_fence_attach {
	__u32 handle;
	__u32 flags;
	__u32 out_fence;
	__u32 pad;
};

struct rkt_vgem_fence_signal {
	__u32 fence;
	__u32 flags;
};

#define RKT_VGEM_FENCE_WRITE	0x1
#define RKT_IOCTL_VGEM_FENCE_ATTACH \
	DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct rkt_vgem_fence_attach)
#define RKT_IOCTL_VGEM_FENCE_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + 0x2, struct rkt_vgem_fence_signal)

/**
 * struct rkt_blocker - an unsignalled fence that the test signals at will
 * @vfd: vgem device fd
 * @bo: vgem dumb BO handle
 * @fence: vgem fence id
 * @dmabuf: dma-buf fd of @bo (carries the fence in its reservation)
 * @size: BO size in bytes
 * @map: CPU mapping of the vgem BO
 *
 * vgem signals its fences by itself after 10 s, so tests must release
 * the blocker well before that.
 */
struct rkt_blocker {
	int vfd;
	uint32_t bo;
	uint32_t fence;
	int dmabuf;
	uint64_t size;
	uint8_t *map;
};

/**
 * rkt_vgem_open() - find (loading the module if needed) the vgem device
 *
 * Return: an fd on vgem's primary node, or -ENODEV.
 */
static int rkt_vgem_open(void)
{
	int attempt, i;

	for (attempt = 0; attempt < 2; attempt++) {
		for (i = 0; i < 16; i++) {
			char path[32];
			drmVersionPtr v;
			int fd;

			snprintf(path, sizeof(path), "/dev/dri/card%d", i);
			fd = open(path, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				continue;
			v = drmGetVersion(fd);
			if (v && !strcmp(v->name, "vgem")) {
				drmFreeVersion(v);
				return fd;
			}
			if (v)
				drmFreeVersion(v);
			close(fd);
		}
		if (!attempt && system("modprobe vgem >/dev/null 2>&1") != 0)
			break;
		rkt_sleep_ms(200);
	}
	return -ENODEV;
}

/**
 * rkt_blocker_init() - vgem BO with an unsignalled write fence
 * @b: output
 * @size: BO bytes (multiple of 4096)
 *
 * Return: 0 or -errno (-ENODEV without vgem).
 */
static int rkt_blocker_init(struct rkt_blocker *b, uint64_t size)
{
	struct drm_mode_create_dumb cd = { .width = size / 4, .height = 1, .bpp = 32 };
	struct drm_mode_map_dumb md = { 0 };
	struct rkt_vgem_fence_attach fa = { 0 };
	void *p;
	int ret;

	memset(b, 0, sizeof(*b));
	b->vfd = rkt_vgem_open();
	if (b->vfd < 0)
		return b->vfd;
	ret = rkt_ioctl(b->vfd, DRM_IOCTL_MODE_CREATE_DUMB, &cd);
	if (ret)
		return ret;
	b->bo = cd.handle;
	b->size = cd.size;
	md.handle = cd.handle;
	ret = rkt_ioctl(b->vfd, DRM_IOCTL_MODE_MAP_DUMB, &md);
	if (ret)
		return ret;
	p = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, b->vfd, md.offset);
	if (p == MAP_FAILED)
		return -errno;
	b->map = p;
	if (drmPrimeHandleToFD(b->vfd, b->bo, DRM_CLOEXEC | DRM_RDWR, &b->dmabuf))
		return -errno;
	fa.handle = b->bo;
	fa.flags = RKT_VGEM_FENCE_WRITE;
	ret = rkt_ioctl(b->vfd, RKT_IOCTL_VGEM_FENCE_ATTACH, &fa);
	if (ret)
		return ret;
	b->fence = fa.out_fence;
	return 0;
}

/**
 * rkt_blocker_syncobj() - put the blocker's fence into a new syncobj of @fd
 * @b: blocker
 * @fd: accel fd
 * @syncobj: output handle
 *
 * Return: 0 or -errno.
 */
static int rkt_blocker_syncobj(struct rkt_blocker *b, int fd, uint32_t *syncobj)
{
	struct dma_buf_export_sync_file ex = { .flags = DMA_BUF_SYNC_RW, .fd = -1 };
	int ret;

	ret = rkt_ioctl(b->dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &ex);
	if (ret)
		return ret;
	ret = drmSyncobjCreate(fd, 0, syncobj) ? -errno : 0;
	if (!ret && drmSyncobjImportSyncFile(fd, *syncobj, ex.fd))
		ret = -errno;
	close(ex.fd);
	return ret;
}

/**
 * rkt_blocker_signal() - signal the blocker's fence
 * @b: blocker
 *
 * Return: 0 or -errno.
 */
static int rkt_blocker_signal(struct rkt_blocker *b)
{
	struct rkt_vgem_fence_signal s = { .fence = b->fence };

	return rkt_ioctl(b->vfd, RKT_IOCTL_VGEM_FENCE_SIGNAL, &s);
}

/**
 * rkt_blocker_fini() - release everything (signals first if still pending)
 * @b: blocker
 */
static void rkt_blocker_fini(struct rkt_blocker *b)
{
	if (b->vfd < 0)
		return;
	if (b->fence)
		rkt_blocker_signal(b);
	if (b->map)
		munmap(b->map, b->size);
	if (b->dmabuf > 0)
		close(b->dmabuf);
	close(b->vfd);
	b->vfd = -1;
}

/**
 * rkt_syncobj_status() - sync_file status of the fence in a syncobj
 * @fd: accel fd
 * @syncobj: handle
 * @status: output: 1 signalled, 0 active, < 0 error of the fence
 *
 * Return: 0 or -errno.
 */
static int rkt_syncobj_status(int fd, uint32_t syncobj, int *status)
{
	struct sync_file_info info = { 0 };
	int sfd, ret;

	if (drmSyncobjExportSyncFile(fd, syncobj, &sfd))
		return -errno;
	ret = ioctl(sfd, SYNC_IOC_FILE_INFO, &info) ? -errno : 0;
	close(sfd);
	if (!ret)
		*status = info.status;
	return ret;
}

/**
 * rkt_syncobj_wait() - wait for one binary syncobj
 * @fd: accel fd
 * @syncobj: handle
 * @ms: relative timeout
 *
 * Return: 0 or -errno (-ETIME on timeout, as drm_syncobj reports it).
 */
static int rkt_syncobj_wait(int fd, uint32_t syncobj, int ms)
{
	return drmSyncobjWait(fd, &syncobj, 1, rkt_now_ns() + ms * RKT_MS,
			      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL) ? -errno : 0;
}

/**
 * rkt_pending() - whether a job's out-fence is still unsignalled
 * @fd: accel fd
 * @syncobj: binary syncobj holding the job's out-fence
 *
 * A test that checks a job waits behind a DELAY asks this after its
 * check: only while the DELAY is still running does "not done yet" prove
 * anything, whatever the speed of the machine (a loaded TCG guest can
 * take longer than the DELAY between two ioctls).
 *
 * Return: true while the fence is unsignalled.
 */
static bool rkt_pending(int fd, uint32_t syncobj)
{
	return rkt_syncobj_wait(fd, syncobj, 0) == -ETIME;
}

/* Geometry of the tiny decoder program used by the EXEC tests. */
#define DEC_DIM		8
#define DEC_HEADS	2
#define DEC_KV_HEADS	1
#define DEC_HEAD_DIM	4
#define DEC_FFN		8
#define DEC_CTX		4

/* Byte offsets of the tensors inside the data card BO. */
enum {
	DEC_ATTN_NORM = 0, DEC_WQ = 256, DEC_WK = 512, DEC_WV = 768,
	DEC_WO = 1024, DEC_FFN_NORM = 1280, DEC_GATE = 1536, DEC_UP = 1792,
	DEC_DOWN = 2048, DEC_KCACHE = 2304, DEC_VCACHE = 2560, DEC_IN = 2816,
	DEC_OUT = 3072, DEC_BYTES = 4096,
};

/**
 * struct dec_prog - a one-layer decoder program
 * @hdr: program header
 * @layer: its only layer
 */
struct dec_prog {
	struct rk1828_program hdr;
	struct rk1828_prog_layer layer;
};

/**
 * f32_bits() - IEEE-754 bits of a float, as the program header stores them
 * @f: value
 *
 * Return: the bit pattern.
 */
static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

/**
 * dec_tensor() - an F32 tensor descriptor at @base + @off
 * @base: card address of the data BO
 * @off: DEC_* byte offset
 *
 * Return: the descriptor.
 */
static struct rk1828_prog_tensor dec_tensor(uint64_t base, uint64_t off)
{
	struct rk1828_prog_tensor t = { .addr = base + off, .type = QUANT_TYPE_F32 };

	return t;
}

/**
 * dec_prog_build() - one decoder layer, all weights at @base
 * @p: output
 * @base: card address of the data BO laid out as DEC_* offsets
 *
 * With all weights zero, the attention and FFN branches add exactly zero
 * to the residual stream, so the output equals the input bit for bit.
 */
static void dec_prog_build(struct dec_prog *p, uint64_t base)
{
	struct rk1828_prog_layer *l = &p->layer;

	memset(p, 0, sizeof(*p));
	p->hdr.magic = RK1828_PROG_MAGIC;
	p->hdr.op = RK1828_PROG_OP_DECODER;
	p->hdr.size = sizeof(*p);
	p->hdr.n_layers = 1;
	p->hdr.n_tokens = 1;
	p->hdr.dim = DEC_DIM;
	p->hdr.n_heads = DEC_HEADS;
	p->hdr.n_kv_heads = DEC_KV_HEADS;
	p->hdr.head_dim = DEC_HEAD_DIM;
	p->hdr.ffn_dim = DEC_FFN;
	p->hdr.n_ctx = DEC_CTX;
	p->hdr.rope_dim = DEC_HEAD_DIM;
	p->hdr.rms_eps = f32_bits(1e-5f);
	p->hdr.rope_theta = f32_bits(10000.0f);
	p->hdr.in_addr = base + DEC_IN;
	p->hdr.out_addr = base + DEC_OUT;
	l->attn_norm = dec_tensor(base, DEC_ATTN_NORM);
	l->wq = dec_tensor(base, DEC_WQ);
	l->wk = dec_tensor(base, DEC_WK);
	l->wv = dec_tensor(base, DEC_WV);
	l->wo = dec_tensor(base, DEC_WO);
	l->ffn_norm = dec_tensor(base, DEC_FFN_NORM);
	l->ffn_gate = dec_tensor(base, DEC_GATE);
	l->ffn_up = dec_tensor(base, DEC_UP);
	l->ffn_down = dec_tensor(base, DEC_DOWN);
	l->k_cache = base + DEC_KCACHE;
	l->v_cache = base + DEC_VCACHE;
}

static const float dec_input[DEC_DIM] = {
	0.5f, -1.25f, 2.0f, 3.5f, -0.75f, 1.0f, -2.5f, 0.125f,
};

/**
 * dec_data_init() - upload zero weights, the input and a poisoned output
 * @fd: accel fd
 * @data: card BO of at least DEC_BYTES
 *
 * Return: 0 or a negative errno.
 */
static int dec_data_init(int fd, struct rkt_bo *data)
{
	uint8_t buf[DEC_BYTES];

	memset(buf, 0, sizeof(buf));
	memcpy(buf + DEC_IN, dec_input, sizeof(dec_input));
	memset(buf + DEC_OUT, 0x7f, DEC_DIM * sizeof(float));
	return rkt_upload(fd, data->handle, buf, sizeof(buf));
}

/**
 * dec_run() - upload @p into a new card BO, EXEC it and wait
 * @fd: accel fd
 * @p: program
 * @len: program bytes
 * @bos: card BOs the program names
 * @n_bos: entries in @bos
 * @fence_status: output, sync_file status of the job's out-syncobj
 *
 * Return: the job status from BO_WAIT, or a negative errno of a failed
 * ioctl (then *@fence_status is 1).
 */
static int dec_run(int fd, const void *p, size_t len, const uint32_t *bos,
		   uint32_t n_bos, int *fence_status)
{
	struct rkt_bo prog;
	uint32_t sync;
	int32_t st;
	int ret;

	*fence_status = 1;
	ret = rkt_bo_create(fd, len, DRM_RK1828_BO_CARD, &prog);
	if (ret)
		return ret;
	ret = rkt_upload(fd, prog.handle, p, len);
	if (ret)
		return ret;
	if (drmSyncobjCreate(fd, 0, &sync))
		return -errno;
	ret = rkt_exec(fd, prog.handle, len, bos, n_bos, 0, sync);
	if (ret)
		return ret;
	ret = rkt_bo_wait(fd, prog.handle, rkt_now_ns() + 30 * RKT_NS, &st);
	if (ret)
		return ret;
	ret = rkt_syncobj_status(fd, sync, fence_status);
	drmSyncobjDestroy(fd, sync);
	rkt_gem_close(fd, &prog);
	return ret ? ret : st;
}

FIXTURE(rk) {
	int fd;		/* accel0, file A */
	int fd_b;	/* accel0, file B */
	int fd1;	/* accel1, or -1 */
	uint64_t mem_size;
};

FIXTURE_SETUP(rk)
{
	self->fd = rkt_open_card(0);
	self->fd_b = -1;
	self->fd1 = -1;
	if (self->fd == -ENOENT)
		SKIP(return, "no /dev/accel/accel0 (module not loaded or no card)");
	ASSERT_LE(0, self->fd);
	self->fd_b = rkt_open_card(0);
	ASSERT_LE(0, self->fd_b);
	self->fd1 = rkt_open_card(1);
	if (self->fd1 < 0)
		self->fd1 = -1;
	ASSERT_EQ(0, rkt_get_param(self->fd, DRM_RK1828_PARAM_CARD_MEM_SIZE,
				  &self->mem_size));
}

FIXTURE_TEARDOWN(rk)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->fd_b >= 0)
		close(self->fd_b);
	if (self->fd1 >= 0)
		close(self->fd1);
}

/**
 * pad_handles() - create @n throwaway host BOs
 * @fd: accel fd
 * @n: count
 *
 * Handles are allocated lowest-free per file, so afterwards this file's
 * next handle is above @n: used to make a handle of one file certainly
 * unknown to another.
 */
static void pad_handles(int fd, int n)
{
	struct rkt_bo bo;

	while (n-- > 0)
		rkt_bo_create(fd, 4096, DRM_RK1828_BO_HOST, &bo);
}

/* ---------------------------------------------------------------- GET_PARAM */

TEST_F(rk, param_values)
{
	uint64_t v, size, free_b, link;

	ASSERT_EQ(0, rkt_get_param(self->fd, DRM_RK1828_PARAM_PROTOCOL_VERSION, &v));
	EXPECT_EQ(1, v >> 16);	/* protocol 1.x (protocol.rst) */
	ASSERT_EQ(0, rkt_get_param(self->fd, DRM_RK1828_PARAM_CARD_MEM_SIZE, &size));
	EXPECT_LT(0, size);
	EXPECT_EQ(0, size % RKT_CARD_ALIGN);
	ASSERT_EQ(0, rkt_get_param(self->fd, DRM_RK1828_PARAM_CARD_MEM_FREE, &free_b));
	EXPECT_LE(free_b, size);
	EXPECT_LT(0, free_b);
	ASSERT_EQ(0, rkt_get_param(self->fd, DRM_RK1828_PARAM_LINK_TYPE, &link));
	EXPECT_TRUE(link == DRM_RK1828_LINK_USB || link == DRM_RK1828_LINK_PCIE);
	ASSERT_EQ(0, rkt_get_param(self->fd, DRM_RK1828_PARAM_LINK_SPEED, &v));
	/* USB 3.0 SuperSpeed, or PCIe 2.1 x2 (2 lanes of 5 GT/s) */
	EXPECT_EQ(link == DRM_RK1828_LINK_USB ? 5000 : 10000, v);
	ASSERT_EQ(0, rkt_get_param(self->fd, DRM_RK1828_PARAM_CARD_SERIAL, &v));
	ASSERT_EQ(0, rkt_get_param(self->fd, DRM_RK1828_PARAM_CAPABILITIES, &v));
	EXPECT_TRUE(v & DRM_RK1828_CAP_TIMELINE_SYNCOBJ);
	EXPECT_TRUE(v & DRM_RK1828_CAP_PRIME_IMPORT);
	EXPECT_TRUE(v & DRM_RK1828_CAP_EXEC_DECODER);
	EXPECT_TRUE(v & DRM_RK1828_CAP_P2P);	/* driver 1.2 */
	EXPECT_EQ(0, v & ~(DRM_RK1828_CAP_TIMELINE_SYNCOBJ |
			   DRM_RK1828_CAP_PRIME_IMPORT |
			   DRM_RK1828_CAP_EXEC_DECODER | DRM_RK1828_CAP_P2P));
	ASSERT_EQ(0, rkt_get_param(self->fd, DRM_RK1828_PARAM_NUM_QUEUES, &v));
	EXPECT_EQ(2, v);
	ASSERT_EQ(0, rkt_get_param(self->fd, DRM_RK1828_PARAM_CARD_STATE, &v));
	EXPECT_EQ(DRM_RK1828_CARD_OK, v);
}

TEST_F(rk, param_context_ids_differ)
{
	uint64_t a, b;

	ASSERT_EQ(0, rkt_get_param(self->fd, DRM_RK1828_PARAM_CONTEXT_ID, &a));
	ASSERT_EQ(0, rkt_get_param(self->fd_b, DRM_RK1828_PARAM_CONTEXT_ID, &b));
	EXPECT_LE(1, a);	/* HIF context ids start at 1 */
	EXPECT_LE(1, b);
	EXPECT_NE(a, b);
}

TEST_F(rk, param_serials_differ)
{
	uint64_t a, b;

	if (self->fd1 < 0)
		SKIP(return, "needs a second card (accel1)");
	ASSERT_EQ(0, rkt_get_param(self->fd, DRM_RK1828_PARAM_CARD_SERIAL, &a));
	ASSERT_EQ(0, rkt_get_param(self->fd1, DRM_RK1828_PARAM_CARD_SERIAL, &b));
	EXPECT_NE(a, b);
}

TEST_F(rk, param_rejects)
{
	struct drm_rk1828_get_param gp = { 0 };

	gp.param = DRM_RK1828_PARAM_P2P_WINDOW + 1;
	EXPECT_EQ(-EINVAL, rkt_ioctl(self->fd, DRM_IOCTL_RK1828_GET_PARAM, &gp));
	gp.param = 0xffffffff;
	EXPECT_EQ(-EINVAL, rkt_ioctl(self->fd, DRM_IOCTL_RK1828_GET_PARAM, &gp));
	gp.param = DRM_RK1828_PARAM_CARD_MEM_SIZE;
	gp.pad = 1;
	EXPECT_EQ(-EINVAL, rkt_ioctl(self->fd, DRM_IOCTL_RK1828_GET_PARAM, &gp));
	gp.pad = 0x80000000;
	EXPECT_EQ(-EINVAL, rkt_ioctl(self->fd, DRM_IOCTL_RK1828_GET_PARAM, &gp));
	gp.pad = 0;
	EXPECT_EQ(0, rkt_ioctl(self->fd, DRM_IOCTL_RK1828_GET_PARAM, &gp));
	EXPECT_EQ(self->mem_size, gp.value);
}

/* ---------------------------------------------------------------- BO_CREATE */

TEST_F(rk, bo_create_host)
{
	long page = sysconf(_SC_PAGESIZE);
	struct drm_rk1828_bo_info info;
	struct rkt_bo bo, bo2;

	ASSERT_EQ(0, rkt_bo_create(self->fd, 1, DRM_RK1828_BO_HOST, &bo));
	EXPECT_NE(0, bo.handle);
	EXPECT_EQ((uint64_t)page, bo.size);
	EXPECT_EQ(0, bo.card_addr);
	EXPECT_NE(0, bo.mmap_offset);
	ASSERT_EQ(0, rkt_bo_create(self->fd, 3 * page + 1, DRM_RK1828_BO_HOST, &bo2));
	EXPECT_EQ((uint64_t)4 * page, bo2.size);
	EXPECT_NE(bo.handle, bo2.handle);
	EXPECT_NE(bo.mmap_offset, bo2.mmap_offset);
	ASSERT_EQ(0, rkt_bo_info(self->fd, bo2.handle, &info));
	EXPECT_EQ(DRM_RK1828_BO_HOST, info.flags);
	EXPECT_EQ(bo2.size, info.size);
	EXPECT_EQ(0, info.card_addr);
	EXPECT_EQ(bo2.mmap_offset, info.mmap_offset);
	EXPECT_EQ(0, rkt_gem_close(self->fd, &bo));
	EXPECT_EQ(0, rkt_gem_close(self->fd, &bo2));
}

TEST_F(rk, bo_create_card_accounting)
{
	struct drm_rk1828_bo_info info;
	uint64_t f0, f1, f2, f3;
	struct rkt_bo a, b;

	f0 = rkt_mem_free(self->fd);
	ASSERT_NE(UINT64_MAX, f0);
	ASSERT_EQ(0, rkt_bo_create(self->fd, 1, DRM_RK1828_BO_CARD, &a));
	EXPECT_EQ(RKT_CARD_ALIGN, a.size);
	EXPECT_EQ(0, a.mmap_offset);
	EXPECT_EQ(0, a.card_addr % RKT_CARD_ALIGN);
	EXPECT_LE(a.card_addr + a.size, self->mem_size);
	f1 = rkt_mem_free(self->fd);
	EXPECT_EQ(f0 - a.size, f1);

	ASSERT_EQ(0, rkt_bo_create(self->fd_b, (1 << 20) + 5, DRM_RK1828_BO_CARD, &b));
	EXPECT_EQ((1 << 20) + RKT_CARD_ALIGN, b.size);
	/* the two BOs must not overlap in card memory */
	EXPECT_TRUE(a.card_addr + a.size <= b.card_addr ||
		    b.card_addr + b.size <= a.card_addr);
	f2 = rkt_mem_free(self->fd);
	EXPECT_EQ(f1 - b.size, f2);	/* free is over all clients */

	ASSERT_EQ(0, rkt_bo_info(self->fd, a.handle, &info));
	EXPECT_EQ(DRM_RK1828_BO_CARD, info.flags);
	EXPECT_EQ(a.size, info.size);
	EXPECT_EQ(a.card_addr, info.card_addr);

	EXPECT_EQ(0, rkt_gem_close(self->fd_b, &b));
	f3 = rkt_mem_free(self->fd);
	EXPECT_EQ(f1, f3);
	EXPECT_EQ(0, rkt_gem_close(self->fd, &a));
	EXPECT_EQ(f0, rkt_mem_free(self->fd));
}

TEST_F(rk, bo_create_freed_on_close_of_file)
{
	uint64_t f0 = rkt_mem_free(self->fd);
	struct rkt_bo a;

	ASSERT_EQ(0, rkt_bo_create(self->fd_b, 1 << 20, DRM_RK1828_BO_CARD, &a));
	EXPECT_EQ(f0 - (1 << 20), rkt_mem_free(self->fd));
	close(self->fd_b);
	self->fd_b = -1;
	EXPECT_EQ(f0, rkt_mem_free(self->fd));
}

TEST_F(rk, bo_create_rejects)
{
	static const uint32_t bad_flags[] = {
		0, DRM_RK1828_BO_HOST | DRM_RK1828_BO_CARD,
		DRM_RK1828_BO_HOST | (1U << 2), DRM_RK1828_BO_CARD | (1U << 31),
		1U << 2, DRM_RK1828_BO_CARD | DRM_RK1828_BO_PEER,
	};
	uint64_t f0 = rkt_mem_free(self->fd);
	struct rkt_bo bo;
	unsigned int i;

	EXPECT_EQ(-EINVAL, rkt_bo_create(self->fd, 0, DRM_RK1828_BO_HOST, &bo));
	EXPECT_EQ(-EINVAL, rkt_bo_create(self->fd, 0, DRM_RK1828_BO_CARD, &bo));
	for (i = 0; i < sizeof(bad_flags) / sizeof(bad_flags[0]); i++) {
		EXPECT_EQ(-EINVAL, rkt_bo_create(self->fd, 4096, bad_flags[i], &bo)) {
			TH_LOG("flags %#x accepted", bad_flags[i]);
		}
	}
	EXPECT_EQ(f0, rkt_mem_free(self->fd));
}

TEST_F(rk, bo_create_huge)
{
	uint64_t f0 = rkt_mem_free(self->fd), f1;
	struct rkt_bo bo, hold;
	int ret;

	EXPECT_EQ(-E2BIG, rkt_bo_create(self->fd, self->mem_size + RKT_CARD_ALIGN,
				       DRM_RK1828_BO_CARD, &bo));
	EXPECT_EQ(-E2BIG, rkt_bo_create(self->fd, self->mem_size + 1,
				       DRM_RK1828_BO_CARD, &bo));
	/* rounding up must not wrap to a small size */
	EXPECT_EQ(-E2BIG, rkt_bo_create(self->fd, UINT64_MAX, DRM_RK1828_BO_CARD, &bo));
	EXPECT_EQ(-E2BIG, rkt_bo_create(self->fd, UINT64_MAX - 100,
				       DRM_RK1828_BO_CARD, &bo));
	EXPECT_EQ(f0, rkt_mem_free(self->fd));

	/* below the card size but above what is free: -ENOMEM */
	ASSERT_EQ(0, rkt_bo_create(self->fd, 1 << 20, DRM_RK1828_BO_CARD, &hold));
	f1 = rkt_mem_free(self->fd);
	ASSERT_LE(f1 + RKT_CARD_ALIGN, self->mem_size);
	EXPECT_EQ(-ENOMEM, rkt_bo_create(self->fd, f1 + RKT_CARD_ALIGN,
					DRM_RK1828_BO_CARD, &bo));
	EXPECT_EQ(-ENOMEM, rkt_bo_create(self->fd, self->mem_size,
					DRM_RK1828_BO_CARD, &bo));
	EXPECT_EQ(f1, rkt_mem_free(self->fd));
	rkt_gem_close(self->fd, &hold);

	/* host: the host cannot back 2^63 bytes (nor UINT64_MAX) */
	ret = rkt_bo_create(self->fd, 1ULL << 63, DRM_RK1828_BO_HOST, &bo);
	EXPECT_TRUE(ret == -ENOMEM || ret == -E2BIG) {
		TH_LOG("host 2^63 bytes: %d", ret);
	}
	ret = rkt_bo_create(self->fd, UINT64_MAX, DRM_RK1828_BO_HOST, &bo);
	EXPECT_TRUE(ret == -ENOMEM || ret == -E2BIG) {
		TH_LOG("host UINT64_MAX bytes: %d", ret);
	}
}

/* --------------------------------------------------------- mmap and BO_INFO */

TEST_F(rk, host_bo_mmap)
{
	struct rkt_bo bo;
	uint8_t *p2;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 3 * 4096 + 17, &bo));
	/* a fresh host BO reads as zeros */
	for (uint64_t i = 0; i < bo.size; i++)
		ASSERT_EQ(0, bo.map[i]);
	rkt_fill(bo.map, bo.size, 11);
	p2 = mmap(NULL, bo.size, PROT_READ, MAP_SHARED, self->fd, bo.mmap_offset);
	ASSERT_NE(MAP_FAILED, p2);
	EXPECT_EQ(-1, rkt_check(p2, bo.size, 11));
	munmap(p2, bo.size);
	munmap(bo.map, bo.size);
	bo.map = NULL;
	ASSERT_EQ(0, rkt_bo_map(self->fd, &bo));
	EXPECT_EQ(-1, rkt_check(bo.map, bo.size, 11));
	rkt_gem_close(self->fd, &bo);
}

TEST_F(rk, bo_info_rejects)
{
	struct drm_rk1828_bo_info info;
	struct rkt_bo a;

	EXPECT_EQ(-ENOENT, rkt_bo_info(self->fd, 0, &info));
	EXPECT_EQ(-ENOENT, rkt_bo_info(self->fd, 0xdead, &info));
	pad_handles(self->fd, 3);
	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, DRM_RK1828_BO_CARD, &a));
	EXPECT_EQ(-ENOENT, rkt_bo_info(self->fd_b, a.handle, &info));
	ASSERT_EQ(0, rkt_gem_close(self->fd, &a));
	EXPECT_EQ(-ENOENT, rkt_bo_info(self->fd, a.handle, &info));
}

/* ------------------------------------------------------------- SUBMIT COPY */

TEST_F_TIMEOUT(rk, copy_round_trip_sizes, 120)
{
	static const uint64_t sizes[] = {
		1, 7, 512, 1023, 1024, 4096, 4097, 16384, 65536, 65537,
		1 << 20, (4 << 20) + 3,
	};
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		EXPECT_EQ(0, rkt_round_trip(self->fd, sizes[i], i + 1)) {
			TH_LOG("round trip of %llu bytes",
			       (unsigned long long)sizes[i]);
		}
	}
}

TEST_F(rk, copy_with_syncobjs)
{
	struct rkt_bo src, dst, card;
	uint32_t s1, s2;
	int status;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 65536, &src));
	ASSERT_EQ(0, rkt_host_bo(self->fd, 65536, &dst));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 65536, DRM_RK1828_BO_CARD, &card));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &s1));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &s2));
	rkt_fill(src.map, 65536, 21);
	ASSERT_EQ(0, rkt_copy(self->fd, src.handle, 0, card.handle, 0, 65536, 0, s1));
	ASSERT_EQ(0, rkt_copy(self->fd, card.handle, 0, dst.handle, 0, 65536, s1, s2));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, s2, 10000));
	EXPECT_EQ(-1, rkt_check(dst.map, 65536, 21));
	ASSERT_EQ(0, rkt_syncobj_status(self->fd, s2, &status));
	EXPECT_EQ(1, status);
	ASSERT_EQ(0, rkt_syncobj_status(self->fd, s1, &status));
	EXPECT_EQ(1, status);
}

TEST_F(rk, copy_seqno_increases)
{
	struct drm_rk1828_submit s;
	struct rkt_bo h, c;
	uint64_t first;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 4096, &h));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, DRM_RK1828_BO_CARD, &c));
	rkt_copy_args(&s, h.handle, 0, c.handle, 0, 4096);
	ASSERT_EQ(0, rkt_submit(self->fd, &s));
	first = s.seqno;
	rkt_copy_args(&s, c.handle, 0, h.handle, 0, 4096);
	ASSERT_EQ(0, rkt_submit(self->fd, &s));
	EXPECT_LT(first, s.seqno);
	EXPECT_EQ(0, rkt_bo_wait(self->fd, h.handle, rkt_now_ns() + 10 * RKT_NS, NULL));
}

TEST_F(rk, copy_offsets)
{
	struct rkt_bo src, dst, card;
	uint8_t ref[8192];

	ASSERT_EQ(0, rkt_host_bo(self->fd, 8192, &src));
	ASSERT_EQ(0, rkt_host_bo(self->fd, 8192, &dst));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 8192, DRM_RK1828_BO_CARD, &card));
	rkt_fill(src.map, 8192, 31);
	memset(dst.map, 0xa5, 8192);
	/* whole card BO := 0x5a, then 1000 bytes of src+7 land at card+4000 */
	memset(ref, 0x5a, sizeof(ref));
	memcpy(dst.map, ref, 8192);
	ASSERT_EQ(0, rkt_copy_sync(self->fd, dst.handle, 0, card.handle, 0, 8192));
	ASSERT_EQ(0, rkt_copy_sync(self->fd, src.handle, 7, card.handle, 4000, 1000));
	memcpy(ref + 4000, src.map + 7, 1000);
	/* read back card[3990, 5010) into dst+13 over a 0xa5 background */
	memset(dst.map, 0xa5, 8192);
	ASSERT_EQ(0, rkt_copy_sync(self->fd, card.handle, 3990, dst.handle, 13, 1020));
	for (int i = 0; i < 8192; i++) {
		uint8_t want = (i >= 13 && i < 13 + 1020) ? ref[3990 + i - 13] : 0xa5;

		ASSERT_EQ(want, dst.map[i]) {
			TH_LOG("byte %d", i);
		}
	}
	/* the last byte of a BO is reachable */
	ASSERT_EQ(0, rkt_copy_sync(self->fd, src.handle, 8191, card.handle, 8191, 1));
	ASSERT_EQ(0, rkt_copy_sync(self->fd, card.handle, 8191, dst.handle, 0, 1));
	EXPECT_EQ(src.map[8191], dst.map[0]);
}

TEST_F(rk, copy_card_to_card)
{
	struct rkt_bo src, dst, c1, c2;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 1 << 20, &src));
	ASSERT_EQ(0, rkt_host_bo(self->fd, 1 << 20, &dst));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 1 << 20, DRM_RK1828_BO_CARD, &c1));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 2 << 20, DRM_RK1828_BO_CARD, &c2));
	rkt_fill(src.map, 1 << 20, 41);
	ASSERT_EQ(0, rkt_copy_sync(self->fd, src.handle, 0, c1.handle, 0, 1 << 20));
	ASSERT_EQ(0, rkt_copy_sync(self->fd, c1.handle, 0, c2.handle, 1 << 20, 1 << 20));
	ASSERT_EQ(0, rkt_copy_sync(self->fd, c2.handle, 1 << 20, dst.handle, 0, 1 << 20));
	EXPECT_EQ(-1, rkt_check(dst.map, 1 << 20, 41));
}

/*
 * A card->card copy within one BO must not overlap (-EINVAL: a COPY is
 * sent again after a reset); disjoint ranges of one BO copy exactly.
 */
TEST_F(rk, copy_card_to_card_same_bo)
{
	struct rkt_bo src, dst, c;
	uint32_t so;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 8192, &src));
	ASSERT_EQ(0, rkt_host_bo(self->fd, 8192, &dst));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 8192, DRM_RK1828_BO_CARD, &c));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &so));

	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, c.handle, 0, c.handle, 0, 4096, 0, so));
	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, c.handle, 0, c.handle, 4095, 4096, 0, so));
	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, c.handle, 4095, c.handle, 0, 4096, 0, so));
	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, c.handle, 100, c.handle, 101, 2, 0, so));

	rkt_fill(src.map, 8192, 53);
	memset(dst.map, 0xa5, 8192);
	ASSERT_EQ(0, rkt_copy_sync(self->fd, src.handle, 0, c.handle, 0, 8192));
	/* adjacent, not overlapping: [0, 4096) -> [4096, 8192) */
	ASSERT_EQ(0, rkt_copy_sync(self->fd, c.handle, 0, c.handle, 4096, 4096));
	ASSERT_EQ(0, rkt_copy_sync(self->fd, c.handle, 0, dst.handle, 0, 8192));
	for (int i = 0; i < 8192; i++) {
		ASSERT_EQ(src.map[i % 4096], dst.map[i]) {
			TH_LOG("byte %d", i);
		}
	}
	drmSyncobjDestroy(self->fd, so);
}

TEST_F(rk, submit_bad_handles)
{
	struct rkt_bo h, c, other;
	struct drm_rk1828_submit s;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 4096, &h));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, DRM_RK1828_BO_CARD, &c));
	EXPECT_EQ(-ENOENT, rkt_copy(self->fd, 0, 0, c.handle, 0, 16, 0, 0));
	EXPECT_EQ(-ENOENT, rkt_copy(self->fd, h.handle, 0, 0, 0, 16, 0, 0));
	EXPECT_EQ(-ENOENT, rkt_copy(self->fd, 0xdead, 0, c.handle, 0, 16, 0, 0));
	EXPECT_EQ(-ENOENT, rkt_copy(self->fd, h.handle, 0, 0xdead, 0, 16, 0, 0));

	/* a card BO of file B: its handle means nothing in file A */
	pad_handles(self->fd_b, 4);
	ASSERT_EQ(0, rkt_bo_create(self->fd_b, 4096, DRM_RK1828_BO_CARD, &other));
	ASSERT_LT(c.handle, other.handle);
	EXPECT_EQ(-ENOENT, rkt_copy(self->fd, h.handle, 0, other.handle, 0, 16, 0, 0));
	EXPECT_EQ(-ENOENT, rkt_copy(self->fd, other.handle, 0, h.handle, 0, 16, 0, 0));

	/* unknown syncobj handles */
	EXPECT_EQ(-ENOENT, rkt_copy(self->fd, h.handle, 0, c.handle, 0, 16, 0xdead, 0));
	EXPECT_EQ(-ENOENT, rkt_copy(self->fd, h.handle, 0, c.handle, 0, 16, 0, 0xdead));

	/* EXEC naming another file's BO in bo_handles */
	rkt_copy_args(&s, c.handle, 0, 0, 0, 160);
	s.type = DRM_RK1828_JOB_EXEC;
	s.bo_handles = (uintptr_t)&other.handle;
	s.bo_handle_count = 1;
	EXPECT_EQ(-ENOENT, rkt_submit(self->fd, &s));
	/* nothing was queued on the card BO */
	EXPECT_EQ(0, rkt_bo_wait(self->fd, c.handle, 0, NULL));
}

TEST_F(rk, submit_bad_type_flags_pad)
{
	struct drm_rk1828_sync sy = { 0 };
	struct drm_rk1828_submit s;
	struct rkt_bo h, c;
	uint32_t so;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 4096, &h));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, DRM_RK1828_BO_CARD, &c));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &so));

	rkt_copy_args(&s, h.handle, 0, c.handle, 0, 16);
	s.type = 0;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));
	s.type = DRM_RK1828_JOB_EXEC + 1;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));
	s.type = 0xffffffff;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));

	rkt_copy_args(&s, h.handle, 0, c.handle, 0, 16);
	s.flags = 1;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));
	s.flags = 0x80000000;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));

	/* non-zero flags in a sync entry */
	rkt_copy_args(&s, h.handle, 0, c.handle, 0, 16);
	sy.handle = so;
	sy.flags = 1;
	s.out_syncs = (uintptr_t)&sy;
	s.out_sync_count = 1;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));
	s.out_syncs = 0;
	s.out_sync_count = 0;
	s.in_syncs = (uintptr_t)&sy;
	s.in_sync_count = 1;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));

	/* EXEC: dst_handle and dst_offset must be zero */
	rkt_copy_args(&s, c.handle, 0, 0, 0, 160);
	s.type = DRM_RK1828_JOB_EXEC;
	s.dst_handle = h.handle;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));
	s.dst_handle = 0;
	s.dst_offset = 8;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));

	/* nothing ran: the syncobj never got a fence */
	EXPECT_EQ(-EINVAL, drmSyncobjWait(self->fd, &so, 1, 0, 0, NULL) ? -errno : 0);
	EXPECT_EQ(0, rkt_bo_wait(self->fd, c.handle, 0, NULL));
}

TEST_F(rk, submit_bad_sizes_offsets)
{
	struct drm_rk1828_submit s;
	struct rkt_bo h, c, h2;
	uint32_t so;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 8192, &h));
	ASSERT_EQ(0, rkt_host_bo(self->fd, 8192, &h2));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 8192, DRM_RK1828_BO_CARD, &c));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &so));

	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, h.handle, 0, c.handle, 0, 0, 0, so));
	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, h.handle, 0, c.handle, 0, 8193, 0, so));
	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, h.handle, 1, c.handle, 0, 8192, 0, so));
	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, h.handle, 0, c.handle, 1, 8192, 0, so));
	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, h.handle, 8192, c.handle, 0, 1, 0, so));
	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, c.handle, 0, h.handle, 8192, 1, 0, so));
	/* offset + size wrapping around 2^64 */
	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, h.handle, UINT64_MAX - 4095, c.handle,
				   0, 8192, 0, so));
	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, h.handle, 0, c.handle,
				   UINT64_MAX - 4095, 8192, 0, so));
	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, h.handle, 16, c.handle, 0,
				   UINT64_MAX - 8, 0, so));
	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, h.handle, 0, c.handle, 0, UINT64_MAX, 0, so));
	/* host -> host */
	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, h.handle, 0, h2.handle, 0, 16, 0, so));
	EXPECT_EQ(-EINVAL, rkt_copy(self->fd, h.handle, 0, h.handle, 4096, 16, 0, so));

	/* EXEC size and range */
	rkt_copy_args(&s, c.handle, 0, 0, 0, 0);
	s.type = DRM_RK1828_JOB_EXEC;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));
	s.size = 160;
	s.src_offset = 8192 - 100;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));
	s.src_offset = UINT64_MAX - 10;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));

	/* nothing was queued */
	EXPECT_EQ(-EINVAL, drmSyncobjWait(self->fd, &so, 1, 0, 0, NULL) ? -errno : 0);
	EXPECT_EQ(0, rkt_bo_wait(self->fd, c.handle, 0, NULL));
	EXPECT_EQ(0, rkt_bo_wait(self->fd, h.handle, 0, NULL));
}

TEST_F(rk, submit_counts_and_pointers)
{
	struct drm_rk1828_sync syncs[65];
	uint32_t handles[65];
	struct drm_rk1828_submit s;
	struct rkt_bo h, c;
	uint32_t so;
	int i;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 4096, &h));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, DRM_RK1828_BO_CARD, &c));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &so));
	ASSERT_EQ(0, drmSyncobjSignal(self->fd, &so, 1));
	memset(syncs, 0, sizeof(syncs));
	for (i = 0; i < 65; i++) {
		syncs[i].handle = so;
		handles[i] = c.handle;
	}

	/* 64 signalled in-syncobjs are fine */
	rkt_copy_args(&s, h.handle, 0, c.handle, 0, 16);
	s.in_syncs = (uintptr_t)syncs;
	s.in_sync_count = 64;
	EXPECT_EQ(0, rkt_submit(self->fd, &s));
	EXPECT_EQ(0, rkt_bo_wait(self->fd, c.handle, rkt_now_ns() + 10 * RKT_NS, NULL));
	s.in_sync_count = 65;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));

	rkt_copy_args(&s, h.handle, 0, c.handle, 0, 16);
	s.out_syncs = (uintptr_t)syncs;
	s.out_sync_count = 65;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));

	rkt_copy_args(&s, c.handle, 0, 0, 0, 160);
	s.type = DRM_RK1828_JOB_EXEC;
	s.bo_handles = (uintptr_t)handles;
	s.bo_handle_count = 65;
	EXPECT_EQ(-EINVAL, rkt_submit(self->fd, &s));

	/* unmapped user pointers */
	rkt_copy_args(&s, h.handle, 0, c.handle, 0, 16);
	s.in_syncs = 8;
	s.in_sync_count = 1;
	EXPECT_EQ(-EFAULT, rkt_submit(self->fd, &s));
	rkt_copy_args(&s, h.handle, 0, c.handle, 0, 16);
	s.out_syncs = 8;
	s.out_sync_count = 1;
	EXPECT_EQ(-EFAULT, rkt_submit(self->fd, &s));
	rkt_copy_args(&s, c.handle, 0, 0, 0, 160);
	s.type = DRM_RK1828_JOB_EXEC;
	s.bo_handles = 8;
	s.bo_handle_count = 1;
	EXPECT_EQ(-EFAULT, rkt_submit(self->fd, &s));
}

/* ------------------------------------------------------ syncobjs and waits */

TEST_F(rk, in_syncobj_orders_jobs)
{
	struct rkt_bo src, card, prog;
	int64_t t0, elapsed;
	uint32_t s;
	int32_t st;
	int ret;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 65536, &src));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 65536, DRM_RK1828_BO_CARD, &card));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &s));
	rkt_fill(src.map, 65536, 51);
	t0 = rkt_now_ns();
	ASSERT_EQ(0, rkt_delay_job(self->fd, 600, &prog, s));
	/* the COPY (copy queue) must wait for the DELAY (compute queue) */
	ASSERT_EQ(0, rkt_copy(self->fd, src.handle, 0, card.handle, 0, 65536, s, 0));
	ret = rkt_bo_wait(self->fd, card.handle, rkt_now_ns() + 100 * RKT_MS, NULL);
	/* the DELAY still runs after that poll: the COPY had not run */
	if (rkt_pending(self->fd, s)) {
		EXPECT_EQ(-ETIMEDOUT, ret);
	} else {
		TH_LOG("the 600 ms DELAY ended during the 100 ms poll: only its end orders the COPY");
	}
	ASSERT_EQ(0, rkt_bo_wait(self->fd, card.handle, rkt_now_ns() + 20 * RKT_NS, &st));
	elapsed = rkt_now_ns() - t0;
	EXPECT_EQ(0, st);
	EXPECT_LE(600 * RKT_MS, elapsed);
	uint8_t back[65536];

	ASSERT_EQ(0, rkt_download(self->fd, card.handle, 0, back, sizeof(back)));
	EXPECT_EQ(-1, rkt_check(back, sizeof(back), 51));
}

TEST_F(rk, timeline_syncobj_points)
{
	struct drm_rk1828_sync in = { 0 }, out = { 0 };
	struct drm_rk1828_submit sub;
	struct rkt_bo src, card, prog;
	uint32_t bin, tl, tl_out;
	uint64_t point, p5 = 5;
	int64_t t0;
	int ret;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 4096, &src));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, DRM_RK1828_BO_CARD, &card));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &bin));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl_out));
	rkt_fill(src.map, 4096, 61);

	/* point 1 of tl := the fence of a 500 ms DELAY */
	t0 = rkt_now_ns();
	ASSERT_EQ(0, rkt_delay_job(self->fd, 500, &prog, bin));
	ASSERT_EQ(0, drmSyncobjTransfer(self->fd, tl, 1, bin, 0, 0));

	rkt_copy_args(&sub, src.handle, 0, card.handle, 0, 4096);
	in.handle = tl;
	in.point = 1;
	out.handle = tl_out;
	out.point = 5;
	sub.in_syncs = (uintptr_t)&in;
	sub.in_sync_count = 1;
	sub.out_syncs = (uintptr_t)&out;
	sub.out_sync_count = 1;
	ASSERT_EQ(0, rkt_submit(self->fd, &sub));
	ret = rkt_bo_wait(self->fd, card.handle, rkt_now_ns() + 100 * RKT_MS, NULL);
	/* the DELAY still runs after that poll: the COPY had not run */
	if (rkt_pending(self->fd, bin)) {
		EXPECT_EQ(-ETIMEDOUT, ret);
	} else {
		TH_LOG("the 500 ms DELAY ended during the 100 ms poll: only its end orders the COPY");
	}
	ASSERT_EQ(0, drmSyncobjTimelineWait(self->fd, &tl_out, &p5, 1,
					    rkt_now_ns() + 20 * RKT_NS,
					    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL));
	EXPECT_LE(500 * RKT_MS, rkt_now_ns() - t0);
	ASSERT_EQ(0, drmSyncobjQuery(self->fd, &tl_out, &point, 1));
	EXPECT_EQ(5, point);

	/* a point signalled from the CPU lets the job run at once */
	ASSERT_EQ(0, drmSyncobjTimelineSignal(self->fd, &tl, &(uint64_t){ 2 }, 1));
	in.point = 2;
	out.point = 6;
	rkt_copy_args(&sub, card.handle, 0, src.handle, 0, 4096);
	memset(src.map, 0, 4096);
	sub.in_syncs = (uintptr_t)&in;
	sub.in_sync_count = 1;
	sub.out_syncs = (uintptr_t)&out;
	sub.out_sync_count = 1;
	ASSERT_EQ(0, rkt_submit(self->fd, &sub));
	ASSERT_EQ(0, drmSyncobjTimelineWait(self->fd, &tl_out, &(uint64_t){ 6 }, 1,
					    rkt_now_ns() + 20 * RKT_NS,
					    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL));
	EXPECT_EQ(-1, rkt_check(src.map, 4096, 61));
}

TEST_F(rk, in_syncobj_never_signalled)
{
	struct drm_rk1828_sync in = { 0 };
	struct drm_rk1828_submit sub;
	struct rkt_bo src, card, back;
	struct rkt_blocker b;
	uint32_t s, tl;
	int32_t st;
	int ret;

	ret = rkt_blocker_init(&b, 4096);
	if (ret == -ENODEV)
		SKIP(return, "vgem not available: no CPU-signalled fence");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, rkt_host_bo(self->fd, 4096, &src));
	ASSERT_EQ(0, rkt_host_bo(self->fd, 4096, &back));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, DRM_RK1828_BO_CARD, &card));
	memset(back.map, 0xee, 4096);
	ASSERT_EQ(0, rkt_copy_sync(self->fd, back.handle, 0, card.handle, 0, 4096));
	rkt_fill(src.map, 4096, 71);

	ASSERT_EQ(0, rkt_blocker_syncobj(&b, self->fd, &s));
	ASSERT_EQ(0, rkt_copy(self->fd, src.handle, 0, card.handle, 0, 4096, s, 0));
	EXPECT_EQ(-ETIMEDOUT, rkt_bo_wait(self->fd, card.handle,
					 rkt_now_ns() + 300 * RKT_MS, &st));
	ASSERT_EQ(0, rkt_blocker_signal(&b));
	ASSERT_EQ(0, rkt_bo_wait(self->fd, card.handle, rkt_now_ns() + 20 * RKT_NS, &st));
	EXPECT_EQ(0, st);
	ASSERT_EQ(0, rkt_copy_sync(self->fd, card.handle, 0, back.handle, 0, 4096));
	EXPECT_EQ(-1, rkt_check(back.map, 4096, 71));
	rkt_blocker_fini(&b);

	/* same through a timeline point that holds the blocker's fence */
	ret = rkt_blocker_init(&b, 4096);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, rkt_blocker_syncobj(&b, self->fd, &s));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	ASSERT_EQ(0, drmSyncobjTransfer(self->fd, tl, 1, s, 0, 0));
	rkt_copy_args(&sub, card.handle, 0, back.handle, 0, 4096);
	in.handle = tl;
	in.point = 1;
	sub.in_syncs = (uintptr_t)&in;
	sub.in_sync_count = 1;
	memset(back.map, 0, 4096);
	ASSERT_EQ(0, rkt_submit(self->fd, &sub));
	EXPECT_EQ(-ETIMEDOUT, rkt_bo_wait(self->fd, back.handle,
					 rkt_now_ns() + 300 * RKT_MS, NULL));
	/* the COPY has not run: back is still all zeros */
	for (int i = 0; i < 4096; i++)
		ASSERT_EQ(0, back.map[i]);
	ASSERT_EQ(0, rkt_blocker_signal(&b));
	ASSERT_EQ(0, rkt_bo_wait(self->fd, back.handle, rkt_now_ns() + 20 * RKT_NS, &st));
	EXPECT_EQ(0, st);
	EXPECT_EQ(-1, rkt_check(back.map, 4096, 71));
	rkt_blocker_fini(&b);
}

TEST_F(rk, implicit_fence_of_foreign_dmabuf)
{
	struct rkt_bo card, back;
	struct rkt_blocker b;
	uint32_t imported;
	int32_t st;
	int ret;

	ret = rkt_blocker_init(&b, 8192);
	if (ret == -ENODEV)
		SKIP(return, "vgem not available: no foreign dma-buf with fences");
	ASSERT_EQ(0, ret);
	rkt_fill(b.map, 8192, 81);
	ASSERT_EQ(0, drmPrimeFDToHandle(self->fd, b.dmabuf, &imported));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 8192, DRM_RK1828_BO_CARD, &card));
	ASSERT_EQ(0, rkt_host_bo(self->fd, 8192, &back));
	/* the vgem write fence is in the dma-buf's reservation: the copy waits */
	ASSERT_EQ(0, rkt_copy(self->fd, imported, 0, card.handle, 0, 8192, 0, 0));
	EXPECT_EQ(-ETIMEDOUT, rkt_bo_wait(self->fd, card.handle,
					 rkt_now_ns() + 300 * RKT_MS, NULL));
	ASSERT_EQ(0, rkt_blocker_signal(&b));
	ASSERT_EQ(0, rkt_bo_wait(self->fd, card.handle, rkt_now_ns() + 20 * RKT_NS, &st));
	EXPECT_EQ(0, st);
	ASSERT_EQ(0, rkt_copy_sync(self->fd, card.handle, 0, back.handle, 0, 8192));
	EXPECT_EQ(-1, rkt_check(back.map, 8192, 81));
	rkt_blocker_fini(&b);
}

TEST_F(rk, bo_wait_deadlines)
{
	struct drm_rk1828_bo_wait w;
	struct rkt_bo prog, idle;
	int r0, r1, r2;
	uint32_t so;
	int32_t st;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 4096, &idle));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &so));
	ASSERT_EQ(0, rkt_delay_job(self->fd, 800, &prog, so));
	/* busy BO, deadline in the past: polls (while the DELAY still runs) */
	r0 = rkt_bo_wait(self->fd, prog.handle, 0, NULL);
	r1 = rkt_bo_wait(self->fd, prog.handle, rkt_now_ns() - RKT_NS, NULL);
	r2 = rkt_bo_wait(self->fd, prog.handle, INT64_MIN, NULL);
	if (rkt_pending(self->fd, so)) {
		EXPECT_EQ(-ETIMEDOUT, r0);
		EXPECT_EQ(-ETIMEDOUT, r1);
		EXPECT_EQ(-ETIMEDOUT, r2);
	} else {
		TH_LOG("the 800 ms DELAY ended during the polls (%d %d %d): not checked", r0, r1, r2);
	}
	/* idle BO, deadline in the past */
	EXPECT_EQ(0, rkt_bo_wait(self->fd, idle.handle, 0, &st));
	EXPECT_EQ(0, st);
	EXPECT_EQ(0, rkt_bo_wait(self->fd, idle.handle, rkt_now_ns() - RKT_NS, &st));
	/* rejects */
	EXPECT_EQ(-ENOENT, rkt_bo_wait(self->fd, 0xdead, 0, NULL));
	EXPECT_EQ(-ENOENT, rkt_bo_wait(self->fd_b, prog.handle + 100, 0, NULL));
	memset(&w, 0, sizeof(w));
	w.handle = idle.handle;
	w.flags = 1;
	EXPECT_EQ(-EINVAL, rkt_ioctl(self->fd, DRM_IOCTL_RK1828_BO_WAIT, &w));
	w.flags = 0;
	w.pad = 1;
	EXPECT_EQ(-EINVAL, rkt_ioctl(self->fd, DRM_IOCTL_RK1828_BO_WAIT, &w));
	/* the busy BO becomes idle with status 0 */
	EXPECT_EQ(0, rkt_bo_wait(self->fd, prog.handle, rkt_now_ns() + 20 * RKT_NS, &st));
	EXPECT_EQ(0, st);
	EXPECT_EQ(0, rkt_bo_wait(self->fd, prog.handle, 0, &st));
}

TEST_F(rk, multiple_in_and_out_syncs)
{
	struct drm_rk1828_sync in[3] = { 0 }, out[2] = { 0 };
	struct drm_rk1828_submit sub;
	struct rkt_bo src, card, prog;
	uint32_t bin, tl, s_delay, o_bin, o_tl;
	uint64_t p3 = 3, p7 = 7, point = 0;
	int64_t t0;
	int status;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 4096, &src));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, DRM_RK1828_BO_CARD, &card));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &bin));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &s_delay));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &o_bin));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &o_tl));
	ASSERT_EQ(0, drmSyncobjTimelineSignal(self->fd, &tl, &p3, 1));
	t0 = rkt_now_ns();
	ASSERT_EQ(0, rkt_delay_job(self->fd, 400, &prog, s_delay));

	in[0].handle = bin;
	in[1].handle = tl;
	in[1].point = 3;
	in[2].handle = s_delay;
	out[0].handle = o_bin;
	out[1].handle = o_tl;
	out[1].point = 7;
	rkt_copy_args(&sub, src.handle, 0, card.handle, 0, 4096);
	sub.in_syncs = (uintptr_t)in;
	sub.in_sync_count = 3;
	sub.out_syncs = (uintptr_t)out;
	sub.out_sync_count = 2;
	ASSERT_EQ(0, rkt_submit(self->fd, &sub));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, o_bin, 20000));
	EXPECT_LE(400 * RKT_MS, rkt_now_ns() - t0);	/* waited for the DELAY */
	ASSERT_EQ(0, drmSyncobjTimelineWait(self->fd, &o_tl, &p7, 1,
					    rkt_now_ns() + 20 * RKT_NS,
					    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL));
	ASSERT_EQ(0, drmSyncobjQuery(self->fd, &o_tl, &point, 1));
	EXPECT_EQ(7, point);
	ASSERT_EQ(0, rkt_syncobj_status(self->fd, o_bin, &status));
	EXPECT_EQ(1, status);
}

TEST_F(rk, copy_queue_overlaps_compute)
{
	struct rkt_bo prog, a, b, c;
	int64_t t0, t_copy;
	int32_t st;

	/* all BOs first: MAP is a management command, not what is tested */
	ASSERT_EQ(0, rkt_host_bo(self->fd, 65536, &a));
	ASSERT_EQ(0, rkt_host_bo(self->fd, 65536, &b));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 65536, DRM_RK1828_BO_CARD, &c));
	rkt_fill(a.map, 65536, 154);
	t0 = rkt_now_ns();
	ASSERT_EQ(0, rkt_delay_job(self->fd, 1500, &prog, 0));
	/* independent BOs: the copy queue must not wait for the compute queue */
	ASSERT_EQ(0, rkt_copy_sync(self->fd, a.handle, 0, c.handle, 0, 65536));
	ASSERT_EQ(0, rkt_copy_sync(self->fd, c.handle, 0, b.handle, 0, 65536));
	t_copy = rkt_now_ns() - t0;
	EXPECT_EQ(-1, rkt_check(b.map, 65536, 154));
	EXPECT_EQ(-ETIMEDOUT, rkt_bo_wait(self->fd, prog.handle, 0, NULL)) {
		TH_LOG("the DELAY finished before the copies (%lld ms)",
		       (long long)(t_copy / RKT_MS));
	}
	ASSERT_EQ(0, rkt_bo_wait(self->fd, prog.handle, rkt_now_ns() + 20 * RKT_NS, &st));
	EXPECT_EQ(0, st);
}

TEST_F(rk, gem_close_with_job_pending)
{
	struct rkt_bo src, dst, card, prog;
	uint32_t s_delay, s_done;
	uint8_t *keep;
	int status;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 65536, &src));
	ASSERT_EQ(0, rkt_host_bo(self->fd, 65536, &dst));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 65536, DRM_RK1828_BO_CARD, &card));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &s_delay));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &s_done));
	rkt_fill(src.map, 65536, 151);
	ASSERT_EQ(0, rkt_delay_job(self->fd, 400, &prog, s_delay));
	ASSERT_EQ(0, rkt_copy(self->fd, src.handle, 0, card.handle, 0, 65536, s_delay, 0));
	ASSERT_EQ(0, rkt_copy(self->fd, card.handle, 0, dst.handle, 0, 65536, 0, s_done));
	/* drop every handle while the jobs wait: the jobs keep the BOs alive */
	keep = dst.map;
	dst.map = NULL;
	ASSERT_EQ(0, rkt_gem_close(self->fd, &src));
	ASSERT_EQ(0, rkt_gem_close(self->fd, &card));
	ASSERT_EQ(0, rkt_gem_close(self->fd, &dst));
	ASSERT_EQ(0, rkt_gem_close(self->fd, &prog));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, s_done, 20000));
	ASSERT_EQ(0, rkt_syncobj_status(self->fd, s_done, &status));
	EXPECT_EQ(1, status);
	EXPECT_EQ(-1, rkt_check(keep, 65536, 151));
	munmap(keep, 65536);
}

TEST_F(rk, close_file_with_jobs_queued)
{
	uint64_t f0 = rkt_mem_free(self->fd);
	struct rkt_bo h, c, prog;
	int64_t end;
	int i;

	ASSERT_EQ(0, rkt_host_bo(self->fd_b, 1 << 20, &h));
	ASSERT_EQ(0, rkt_bo_create(self->fd_b, 1 << 20, DRM_RK1828_BO_CARD, &c));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, rkt_delay_job(self->fd_b, 200, &prog, 0));
		ASSERT_EQ(0, rkt_copy(self->fd_b, h.handle, 0, c.handle, 0, 1 << 20, 0, 0));
	}
	munmap(h.map, h.size);
	close(self->fd_b);
	self->fd_b = -1;
	/* B's card memory comes back once its jobs are done or dropped */
	end = rkt_now_ns() + 20 * RKT_NS;
	while (rkt_mem_free(self->fd) != f0 && rkt_now_ns() < end)
		rkt_sleep_ms(50);
	EXPECT_EQ(f0, rkt_mem_free(self->fd));
	EXPECT_EQ(0, rkt_round_trip(self->fd, 65536, 152));
}

TEST_F_TIMEOUT(rk, many_chained_jobs, 120)
{
	const int n = 200;
	struct rkt_bo h, back, c[2];
	uint32_t s;
	int i;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 4096, &h));
	ASSERT_EQ(0, rkt_host_bo(self->fd, 4096, &back));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, DRM_RK1828_BO_CARD, &c[0]));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, DRM_RK1828_BO_CARD, &c[1]));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &s));
	rkt_fill(h.map, 4096, 153);
	ASSERT_EQ(0, rkt_copy(self->fd, h.handle, 0, c[0].handle, 0, 4096, 0, s));
	/* ping-pong between two card BOs, each step shifted by one byte */
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, rkt_copy(self->fd, c[i & 1].handle, 1, c[!(i & 1)].handle, 0,
				     4095, s, s));
	ASSERT_EQ(0, rkt_copy(self->fd, c[n & 1].handle, 0, back.handle, 0,
			     4096 - n, s, s));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, s, 60000));
	EXPECT_EQ(0, memcmp(back.map, h.map + n, 4096 - n));
}

/* -------------------------------------------------------------------- PRIME */

TEST_F(rk, prime_same_card)
{
	struct drm_rk1828_bo_info info;
	struct rkt_bo bo;
	uint32_t self_h, b_h;
	uint8_t *p;
	int dmabuf;

	ASSERT_EQ(0, rkt_host_bo(self->fd, 3 * 4096, &bo));
	rkt_fill(bo.map, bo.size, 91);
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, bo.handle, DRM_CLOEXEC | DRM_RDWR,
					&dmabuf));
	ASSERT_EQ(0, drmPrimeFDToHandle(self->fd, dmabuf, &self_h));
	EXPECT_EQ(bo.handle, self_h);

	pad_handles(self->fd_b, 1);
	ASSERT_EQ(0, drmPrimeFDToHandle(self->fd_b, dmabuf, &b_h));
	ASSERT_EQ(0, rkt_bo_info(self->fd_b, b_h, &info));
	EXPECT_EQ(DRM_RK1828_BO_HOST, info.flags);
	EXPECT_EQ(bo.size, info.size);
	EXPECT_EQ(0, info.card_addr);
	p = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd_b,
		 info.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, rkt_check(p, info.size, 91));
	p[5] ^= 0xff;
	EXPECT_EQ(p[5], bo.map[5]);
	munmap(p, info.size);
	close(dmabuf);
}

TEST_F(rk, prime_other_card)
{
	struct drm_rk1828_bo_info info;
	struct rkt_bo bo, card1, back1;
	uint32_t h1;
	int dmabuf;

	if (self->fd1 < 0)
		SKIP(return, "needs a second card (accel1)");
	ASSERT_EQ(0, rkt_host_bo(self->fd, 65536, &bo));
	rkt_fill(bo.map, 65536, 101);
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, bo.handle, DRM_CLOEXEC | DRM_RDWR,
					&dmabuf));
	ASSERT_EQ(0, drmPrimeFDToHandle(self->fd1, dmabuf, &h1));
	ASSERT_EQ(0, rkt_bo_info(self->fd1, h1, &info));
	EXPECT_EQ(DRM_RK1828_BO_HOST, info.flags);
	EXPECT_EQ(65536, info.size);
	ASSERT_EQ(0, rkt_bo_create(self->fd1, 65536, DRM_RK1828_BO_CARD, &card1));
	ASSERT_EQ(0, rkt_host_bo(self->fd1, 65536, &back1));
	ASSERT_EQ(0, rkt_copy_sync(self->fd1, h1, 0, card1.handle, 0, 65536));
	ASSERT_EQ(0, rkt_copy_sync(self->fd1, card1.handle, 0, back1.handle, 0, 65536));
	EXPECT_EQ(-1, rkt_check(back1.map, 65536, 101));
	/* and back into the imported BO: the exporter sees it */
	memset(bo.map, 0, 65536);
	ASSERT_EQ(0, rkt_copy_sync(self->fd1, card1.handle, 0, h1, 0, 65536));
	EXPECT_EQ(-1, rkt_check(bo.map, 65536, 101));
	close(dmabuf);
}

TEST_F_TIMEOUT(rk, two_card_chain, 60)
{
	const uint64_t n = 256 * 1024;
	struct rkt_bo h0, c0, x, prog, c1, h1;
	uint32_t s_delay, s0, s1, x1;
	int dmabuf, sync_fd, status;
	int32_t st;

	if (self->fd1 < 0)
		SKIP(return, "needs a second card (accel1)");
	ASSERT_EQ(0, rkt_host_bo(self->fd, n, &h0));
	ASSERT_EQ(0, rkt_bo_create(self->fd, n, DRM_RK1828_BO_CARD, &c0));
	ASSERT_EQ(0, rkt_host_bo(self->fd, n, &x));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &s_delay));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &s0));
	rkt_fill(h0.map, n, 111);
	ASSERT_EQ(0, rkt_copy_sync(self->fd, h0.handle, 0, c0.handle, 0, n));

	/* card0: DELAY, then c0 -> x (exported) once the DELAY is done */
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, x.handle, DRM_CLOEXEC | DRM_RDWR,
					&dmabuf));
	ASSERT_EQ(0, rkt_delay_job(self->fd, 500, &prog, s_delay));
	ASSERT_EQ(0, rkt_copy(self->fd, c0.handle, 0, x.handle, 0, n, s_delay, s0));

	/* card1: import x and card0's fence, then x -> c1 -> h1 */
	ASSERT_EQ(0, drmPrimeFDToHandle(self->fd1, dmabuf, &x1));
	ASSERT_EQ(0, drmSyncobjExportSyncFile(self->fd, s0, &sync_fd));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd1, 0, &s1));
	ASSERT_EQ(0, drmSyncobjImportSyncFile(self->fd1, s1, sync_fd));
	close(sync_fd);
	ASSERT_EQ(0, rkt_bo_create(self->fd1, n, DRM_RK1828_BO_CARD, &c1));
	ASSERT_EQ(0, rkt_host_bo(self->fd1, n, &h1));
	ASSERT_EQ(0, rkt_copy(self->fd1, x1, 0, c1.handle, 0, n, s1, 0));
	ASSERT_EQ(0, rkt_copy(self->fd1, c1.handle, 0, h1.handle, 0, n, 0, 0));
	ASSERT_EQ(0, rkt_bo_wait(self->fd1, h1.handle, rkt_now_ns() + 30 * RKT_NS, &st));
	EXPECT_EQ(0, st);
	EXPECT_EQ(-1, rkt_check(h1.map, n, 111));
	ASSERT_EQ(0, rkt_syncobj_status(self->fd1, s1, &status));
	EXPECT_EQ(1, status);
	close(dmabuf);
}

/* --------------------------------------------------------------------- EXEC */

TEST_F(rk, exec_delay)
{
	struct rkt_bo prog;
	int64_t t0;
	int32_t st;

	t0 = rkt_now_ns();
	ASSERT_EQ(0, rkt_delay_job(self->fd, 200, &prog, 0));
	ASSERT_EQ(0, rkt_bo_wait(self->fd, prog.handle, rkt_now_ns() + 20 * RKT_NS, &st));
	EXPECT_EQ(0, st);
	EXPECT_LE(200 * RKT_MS, rkt_now_ns() - t0);
}

TEST_F(rk, exec_decoder_identity)
{
	struct rkt_bo data;
	struct dec_prog p;
	float out[DEC_DIM];
	int fst;

	ASSERT_EQ(0, rkt_bo_create(self->fd, DEC_BYTES, DRM_RK1828_BO_CARD, &data));
	ASSERT_EQ(0, dec_data_init(self->fd, &data));
	dec_prog_build(&p, data.card_addr);
	ASSERT_EQ(0, dec_run(self->fd, &p, sizeof(p), &data.handle, 1, &fst));
	EXPECT_EQ(1, fst);
	ASSERT_EQ(0, rkt_download(self->fd, data.handle, DEC_OUT, out, sizeof(out)));
	EXPECT_EQ(0, memcmp(out, dec_input, sizeof(out)));
}

TEST_F(rk, exec_bad_program)
{
	struct rkt_bo data;
	struct dec_prog p;
	int fst;

	ASSERT_EQ(0, rkt_bo_create(self->fd, DEC_BYTES, DRM_RK1828_BO_CARD, &data));
	ASSERT_EQ(0, dec_data_init(self->fd, &data));
	dec_prog_build(&p, data.card_addr);
	p.hdr.magic ^= 1;
	EXPECT_EQ(-EINVAL, dec_run(self->fd, &p, sizeof(p), &data.handle, 1, &fst));
	EXPECT_EQ(-EINVAL, fst);
	dec_prog_build(&p, data.card_addr);
	p.hdr.op = 77;
	EXPECT_EQ(-EINVAL, dec_run(self->fd, &p, sizeof(p), &data.handle, 1, &fst));
	dec_prog_build(&p, data.card_addr);
	p.hdr.n_kv_heads = 3;	/* does not divide n_heads */
	EXPECT_EQ(-EINVAL, dec_run(self->fd, &p, sizeof(p), &data.handle, 1, &fst));
	/* the file keeps working */
	dec_prog_build(&p, data.card_addr);
	EXPECT_EQ(0, dec_run(self->fd, &p, sizeof(p), &data.handle, 1, &fst));
}

/**
 * exec_foreign() - run A's decoder program with one address moved into
 * file B's card BO and check the fault and its containment
 * @_metadata: harness
 * @self: fixture
 * @which: 0 in_addr, 1 out_addr, 2 wq weight, 3 k_cache, 4 out past own BO
 */
static void exec_foreign(struct __test_metadata *_metadata,
			 FIXTURE_DATA(rk) *self, int which)
{
	struct rkt_bo data, victim;
	uint8_t vbuf[DEC_BYTES], back[DEC_BYTES];
	struct dec_prog p;
	int fst;

	ASSERT_EQ(0, rkt_bo_create(self->fd_b, DEC_BYTES, DRM_RK1828_BO_CARD, &victim));
	rkt_fill(vbuf, sizeof(vbuf), 121);
	ASSERT_EQ(0, rkt_upload(self->fd_b, victim.handle, vbuf, sizeof(vbuf)));
	ASSERT_EQ(0, rkt_bo_create(self->fd, DEC_BYTES, DRM_RK1828_BO_CARD, &data));
	ASSERT_EQ(0, dec_data_init(self->fd, &data));
	dec_prog_build(&p, data.card_addr);
	switch (which) {
	case 0:
		p.hdr.in_addr = victim.card_addr + DEC_IN;
		break;
	case 1:
		p.hdr.out_addr = victim.card_addr + DEC_OUT;
		break;
	case 2:
		p.layer.wq.addr = victim.card_addr + DEC_WQ;
		break;
	case 3:
		p.layer.k_cache = victim.card_addr + DEC_KCACHE;
		break;
	default:
		/* straddles the end of A's own BO */
		p.hdr.out_addr = data.card_addr + data.size - 16;
		break;
	}
	EXPECT_EQ(-EFAULT, dec_run(self->fd, &p, sizeof(p), &data.handle, 1, &fst));
	EXPECT_EQ(-EFAULT, fst);

	/* B's memory is untouched and B's jobs still run */
	ASSERT_EQ(0, rkt_download(self->fd_b, victim.handle, 0, back, sizeof(back)));
	EXPECT_EQ(0, memcmp(vbuf, back, sizeof(back)));
	EXPECT_EQ(0, rkt_round_trip(self->fd_b, 65536, 122));
	/* and so do A's own later jobs */
	dec_prog_build(&p, data.card_addr);
	EXPECT_EQ(0, dec_run(self->fd, &p, sizeof(p), &data.handle, 1, &fst));
	EXPECT_EQ(0, rkt_round_trip(self->fd, 65536, 123));
}

TEST_F(rk, exec_fault_foreign_in_addr)
{
	exec_foreign(_metadata, self, 0);
}

TEST_F(rk, exec_fault_foreign_out_addr)
{
	exec_foreign(_metadata, self, 1);
}

TEST_F(rk, exec_fault_foreign_weight)
{
	exec_foreign(_metadata, self, 2);
}

TEST_F(rk, exec_fault_foreign_kv_cache)
{
	exec_foreign(_metadata, self, 3);
}

TEST_F(rk, exec_fault_past_own_bo)
{
	exec_foreign(_metadata, self, 4);
}

TEST_F(rk, exec_fault_other_card_unaffected)
{
	struct rkt_bo data;
	struct dec_prog p;
	int fst;

	if (self->fd1 < 0)
		SKIP(return, "needs a second card (accel1)");
	ASSERT_EQ(0, rkt_bo_create(self->fd, DEC_BYTES, DRM_RK1828_BO_CARD, &data));
	dec_prog_build(&p, data.card_addr);
	p.hdr.in_addr = self->mem_size - 64;	/* nobody maps this for A */
	p.hdr.out_addr = self->mem_size - 32;
	EXPECT_EQ(-EFAULT, dec_run(self->fd, &p, sizeof(p), &data.handle, 1, &fst));
	EXPECT_EQ(0, rkt_round_trip(self->fd1, 65536, 131));
}

TEST_F(rk, card_bo_no_stale_data)
{
	uint8_t pat[65536], back[65536];
	struct rkt_bo a, b;

	rkt_fill(pat, sizeof(pat), 141);
	ASSERT_EQ(0, rkt_bo_create(self->fd, sizeof(pat), DRM_RK1828_BO_CARD, &a));
	ASSERT_EQ(0, rkt_upload(self->fd, a.handle, pat, sizeof(pat)));
	ASSERT_EQ(0, rkt_gem_close(self->fd, &a));
	ASSERT_EQ(0, rkt_bo_create(self->fd_b, sizeof(pat), DRM_RK1828_BO_CARD, &b));
	if (b.card_addr != a.card_addr)
		TH_LOG("B got %#llx, A had %#llx: reuse not exercised",
		       (unsigned long long)b.card_addr,
		       (unsigned long long)a.card_addr);
	ASSERT_EQ(0, rkt_download(self->fd_b, b.handle, 0, back, sizeof(back)));
	/* B must not see what A left behind */
	EXPECT_NE(-1, rkt_check(back, sizeof(back), 141));
}

TEST_HARNESS_MAIN
