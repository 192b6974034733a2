// SPDX-License-Identifier: MIT
/*
 * A mock librk1828 for host tests of the pipeline and the engine (see
 * mock_rk.h): the rk_* functions they call, over per-card memory arenas,
 * with every job run synchronously at submit time. COPY is a
 * bounds-checked memcpy, EXEC is the card emulator's emu_exec() with an
 * access check that only admits allocated card BOs. Since the pipeline
 * queues jobs in dependency order, running them at submit time is a valid
 * schedule. Like the driver, a job whose in-sync fence carries an error
 * does not run and signals that error (a chain stops at the first
 * failure); rk_bo_wait() reports the status of the last job that wrote a
 * host BO. Syncobjs live in one table shared by all cards, so
 * rk_syncobj_export() and rk_syncobj_import() give another card a handle
 * to the same syncobj. mock_rk_get_calls() counts the calls that are
 * system calls on a real card. With a modelled clock (mock_rk_clock())
 * every job also gets a start and end time on its card's timeline, which
 * waits, sync_file status and timestamps report.
 */
#include "mock_rk.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "exec.h"
#include "rk1828_hif.h"
#include "rk1828/program.h"
#include "rk1828/util.h"

#define MOBJS		256
#define MDMABUF		64
#define DMABUF_FD0	1000000
#define SYNCFILE_FD0	2000000		/* fd = SYNCFILE_FD0 + 1000 + status */
#define CLKFILE_FD0	3000000		/* modelled clock: CLKFILE_FD0 + ring index */
#define CLKFILES	8192
#define SYNCOBJ_FD0	4000000		/* syncobj fd: SYNCOBJ_FD0 + shared index */
#define P2PBUF_FD0	5000000		/* dma-buf of a peer-window card BO */
#define MP2PBUF		64
#define MOCK_P2P_WINDOW	(MOCK_CARD_MEM / 4)
#define MSYNCS		4096

struct mbuf {
	uint8_t *p;
	uint64_t size;
	int status;		/* of the last job that wrote it */
	int64_t t_done;		/* modelled clock: end of the last job using it */
};

/* A syncobj, shared by the handles of every card that imported it. */
struct msync {
	int status;		/* 0 or -errno of the job that signalled it last */
	int64_t t_done;		/* modelled clock: its fence's end */
};

enum { M_FREE, M_HOST, M_CARD, M_SYNC, M_PEER };

struct mobj {
	int kind;
	struct mbuf *buf;	/* host BOs */
	uint64_t addr, size;	/* card BOs */
	int sync;		/* syncobjs: index into syncs[] */
	bool p2p;		/* card BOs: in the peer window (exportable) */
	int peer_card;		/* peer BOs: the exporter (its memory at addr) */
};

/* An exported peer-window card BO: where its memory is. */
struct mp2pbuf {
	int card;
	uint64_t addr, size;
};

/* A sync_file exported on the modelled clock. */
struct clkfile {
	int status;
	int64_t t_done;
};

struct mcard {
	uint8_t *mem;
	uint64_t brk;
	struct mobj obj[MOBJS];
	int fail_exec;		/* make every EXEC fail with RK1828_HIF_ST_ACCESS */
	int unplugged;		/* rk_card_refresh() fails with -ENODEV */
	int n_exec;
	double exec_ns[MOCK_MAX_TIMED];	/* modelled time of each EXEC (timing) */
	int64_t free_at;	/* modelled clock: end of its last job */
	int64_t copy_free_at;	/* mock_rk_clock_link(): end of its last COPY */
	uint64_t live;		/* sparse: bytes of its card BOs not destroyed */
	uint64_t p2p_bytes;	/* COPY bytes to or from peer BOs */
};

static struct mcard mcards[MOCK_CARDS];
/* Card memory (mock_rk_card_mem()); sparse: mmap()ed, fresh BOs zero. */
static uint64_t mock_mem = MOCK_CARD_MEM;
static bool mock_sparse;
/*
 * A sparse card's address space: SPARSE_SPAN times its memory, so that
 * BOs freed and made again (the bump allocator never reuses addresses)
 * still find room; what counts against the memory is the live bytes.
 */
#define SPARSE_SPAN	8

/* Bytes of a card's arena. */
static uint64_t arena_size(void)
{
	return mock_sparse ? SPARSE_SPAN * mock_mem : mock_mem;
}
/* CPU time inside rk_submit_copy() and rk_submit_exec() (mock_rk_self_ns()). */
static int64_t self_ns;
static struct mbuf *dmabufs[MDMABUF];
static struct mbuf *all_bufs[4096];	/* freed at exit (no refcounts in the mock) */
static int n_all_bufs;
static int n_dmabufs;
static struct mp2pbuf p2pbufs[MP2PBUF];
static int n_p2pbufs;
static bool p2p_on;
static char mock_err[256];
static int mock_live_objs;
static int n_cards_made;
static struct msync syncs[MSYNCS];
static int n_syncs;
static struct mock_rk_calls calls;
static struct emu_exec_opts mock_timing;	/* .prof NULL: plain emu_exec() */
/* Modelled clock: on, the costs, the host's time (atomic), sync_files. */
static bool clk_on;
static struct mock_cost clk_cost;
static int64_t clk_now;
static bool clk_link_on;	/* mock_rk_clock_link() */
static enum cost_link clk_link;
static struct clkfile clkfiles[CLKFILES];
static unsigned int n_clkfiles;

static struct mcard *mc(const struct rk_card *c)
{
	return &mcards[c->fd];
}

static struct mobj *obj(const struct rk_card *c, uint32_t h, int kind)
{
	if (h < 1 || h > MOBJS || mc(c)->obj[h - 1].kind != kind)
		return NULL;
	return &mc(c)->obj[h - 1];
}

static uint32_t new_obj(const struct rk_card *c, int kind)
{
	int i;

	for (i = 0; i < MOBJS; i++) {
		if (mc(c)->obj[i].kind == M_FREE) {
			memset(&mc(c)->obj[i], 0, sizeof(mc(c)->obj[i]));
			mc(c)->obj[i].kind = kind;
			mock_live_objs++;
			return i + 1;
		}
	}
	return 0;
}

static int mfail(int e, const char *what)
{
	snprintf(mock_err, sizeof(mock_err), "mock: %s: %s", what, strerror(-e));
	return e;
}

const char *rk_error(void)
{
	return mock_err;
}

int rk_card_refresh(struct rk_card *card)
{
	if (mc(card)->unplugged)
		return mfail(-ENODEV, "GET_PARAM");
	card->mem_free = mock_mem - (mock_sparse ? 4096 + mc(card)->live : mc(card)->brk);
	return 0;
}

/* Mock cards take BOs at the card's own 4 KiB granule. */
uint64_t rk_card_bo_align(const struct rk_card *card)
{
	return 4096;
}

int64_t rk_now_ns(void)
{
	return clk_on ? __atomic_load_n(&clk_now, __ATOMIC_ACQUIRE) : util_now_ns();
}

void mock_rk_clock(const struct mock_cost *c)
{
	clk_on = c != NULL;
	clk_link_on = false;
	if (c)
		clk_cost = *c;
	/* Not 0: the pipeline takes a 0 timestamp for "none". */
	__atomic_store_n(&clk_now, 1000000000LL, __ATOMIC_RELEASE);
	n_clkfiles = 0;
}

/* The host waited until @t: move the clock on. */
static void clk_reach(int64_t t)
{
	if (t > __atomic_load_n(&clk_now, __ATOMIC_ACQUIRE))
		__atomic_store_n(&clk_now, t, __ATOMIC_RELEASE);
}

int rk_bo_create(struct rk_card *card, uint64_t size, enum rk_bo_kind kind, struct rk_bo *bo)
{
	uint32_t h;
	struct mobj *o;

	memset(bo, 0, sizeof(*bo));
	if (!size || (kind != RK_BO_HOST && kind != RK_BO_CARD))
		return mfail(-EINVAL, "BO_CREATE");
	size = (size + 4095) & ~4095ULL;
	if (kind == RK_BO_CARD && (mc(card)->brk + size > arena_size() ||
				   (mock_sparse && 4096 + mc(card)->live + size > mock_mem)))
		return mfail(-ENOMEM, "BO_CREATE");
	h = new_obj(card, kind == RK_BO_HOST ? M_HOST : M_CARD);
	if (!h)
		return mfail(-ENOMEM, "BO_CREATE");
	o = &mc(card)->obj[h - 1];
	o->size = size;
	if (kind == RK_BO_HOST) {
		if (n_all_bufs == 4096)
			return mfail(-ENOMEM, "BO_CREATE");
		o->buf = calloc(1, sizeof(*o->buf));
		o->buf->p = calloc(1, size);
		o->buf->size = size;
		all_bufs[n_all_bufs++] = o->buf;
	} else {
		o->addr = mc(card)->brk;
		mc(card)->brk += size;
		mc(card)->live += size;
		/* Poison fresh card memory: reading unwritten data shows up. */
		if (!mock_sparse)
			memset(mc(card)->mem + o->addr, 0xff, size);
	}
	bo->handle = h;
	bo->kind = kind;
	bo->size = size;
	bo->card_addr = o->addr;
	return 0;
}

int rk_bo_mmap(struct rk_card *card, struct rk_bo *bo)
{
	struct mobj *o = obj(card, bo->handle, M_HOST);

	if (!o)
		return mfail(-EINVAL, "mmap");
	bo->map = o->buf->p;
	return 0;
}

int rk_bo_destroy(struct rk_card *card, struct rk_bo *bo)
{
	if (bo->handle) {
		struct mobj *o = &mc(card)->obj[bo->handle - 1];

		if (o->kind == M_FREE)
			return mfail(-ENOENT, "GEM_CLOSE");
		/* A sparse card's pages go back (and read as zeros again). */
		if (o->kind == M_CARD && mock_sparse) {
			mc(card)->live -= o->size;
			madvise(mc(card)->mem + o->addr, o->size, MADV_DONTNEED);
		}
		o->kind = M_FREE;	/* host buffers leak in the mock: fine */
		mock_live_objs--;
	}
	memset(bo, 0, sizeof(*bo));
	return 0;
}

int rk_p2p_query(struct rk_card *importer, const struct rk_card *exporter,
		 enum rk_p2p_status *status, uint64_t *window)
{
	calls.other++;
	*status = importer->fd == exporter->fd ? RK_P2P_SAME_CARD :
		  p2p_on ? RK_P2P_OK : RK_P2P_NO_KERNEL;
	if (window)
		*window = MOCK_P2P_WINDOW;
	return 0;
}

const char *rk_p2p_status_name(enum rk_p2p_status status)
{
	return status == RK_P2P_OK ? "p2p" : status == RK_P2P_NO_KERNEL ?
	       "no-kernel-p2pdma" : "other";
}

int rk_bo_create_p2p(struct rk_card *card, uint64_t size, struct rk_bo *bo)
{
	int ret = rk_bo_create(card, size, RK_BO_CARD, bo);

	if (!ret)
		mc(card)->obj[bo->handle - 1].p2p = true;
	return ret;
}

void mock_rk_p2p(bool on)
{
	p2p_on = on;
}

uint64_t mock_rk_p2p_bytes(int card)
{
	return mcards[card].p2p_bytes;
}

/* A peer-window card BO as a dma-buf fd. */
static int export_p2p(struct rk_card *card, const struct mobj *o, int *fd)
{
	if (!o->p2p || n_p2pbufs == MP2PBUF)
		return mfail(-EOPNOTSUPP, "PRIME export of a card BO");
	p2pbufs[n_p2pbufs] = (struct mp2pbuf){ card->fd, o->addr, o->size };
	*fd = P2PBUF_FD0 + n_p2pbufs++;
	return 0;
}

/* Import of a peer-window BO: the same BO on its card, a peer BO elsewhere. */
static int import_p2p(struct rk_card *card, int fd, struct rk_bo *bo)
{
	const struct mp2pbuf *pb = &p2pbufs[fd - P2PBUF_FD0];
	uint32_t h;

	if (pb->card == card->fd || !p2p_on)
		return mfail(-EOPNOTSUPP, "PRIME import of a peer-window BO");
	h = new_obj(card, M_PEER);
	if (!h)
		return mfail(-ENOMEM, "PRIME import");
	mc(card)->obj[h - 1].peer_card = pb->card;
	mc(card)->obj[h - 1].addr = pb->addr;
	mc(card)->obj[h - 1].size = pb->size;
	bo->handle = h;
	bo->kind = RK_BO_PEER;
	bo->size = pb->size;
	return 0;
}

int rk_bo_export(struct rk_card *card, const struct rk_bo *bo, int *fd)
{
	struct mobj *o = obj(card, bo->handle, M_HOST);

	if (!o && obj(card, bo->handle, M_CARD))
		return export_p2p(card, obj(card, bo->handle, M_CARD), fd);
	if (!o || n_dmabufs == MDMABUF)
		return mfail(-EINVAL, "PRIME export");
	dmabufs[n_dmabufs] = o->buf;
	*fd = DMABUF_FD0 + n_dmabufs++;
	return 0;
}

int rk_bo_import(struct rk_card *card, int fd, struct rk_bo *bo)
{
	uint32_t h;

	memset(bo, 0, sizeof(*bo));
	if (fd >= P2PBUF_FD0 && fd < P2PBUF_FD0 + n_p2pbufs)
		return import_p2p(card, fd, bo);
	if (fd < DMABUF_FD0 || fd >= DMABUF_FD0 + n_dmabufs)
		return mfail(-EBADF, "PRIME import");
	h = new_obj(card, M_HOST);
	if (!h)
		return mfail(-ENOMEM, "PRIME import");
	mc(card)->obj[h - 1].buf = dmabufs[fd - DMABUF_FD0];
	mc(card)->obj[h - 1].size = dmabufs[fd - DMABUF_FD0]->size;
	bo->handle = h;
	bo->kind = RK_BO_HOST;
	bo->size = dmabufs[fd - DMABUF_FD0]->size;
	return 0;
}

int rk_syncobj_create(struct rk_card *card, bool signaled, uint32_t *handle)
{
	if (n_syncs == MSYNCS)
		return mfail(-ENOMEM, "SYNCOBJ_CREATE");
	*handle = new_obj(card, M_SYNC);
	if (!*handle)
		return mfail(-ENOMEM, "SYNCOBJ_CREATE");
	mc(card)->obj[*handle - 1].sync = n_syncs;
	syncs[n_syncs++] = (struct msync){ 0, 0 };
	return 0;
}

/* The syncobj behind handle @h of @card, or NULL. */
static struct msync *sy(const struct rk_card *card, uint32_t h)
{
	struct mobj *o = obj(card, h, M_SYNC);

	return o ? &syncs[o->sync] : NULL;
}

int rk_syncobj_export(struct rk_card *card, uint32_t handle, int *fd)
{
	struct mobj *o = obj(card, handle, M_SYNC);

	calls.other++;
	if (!o)
		return mfail(-ENOENT, "export syncobj");
	*fd = SYNCOBJ_FD0 + o->sync;
	return 0;
}

int rk_syncobj_import(struct rk_card *card, int fd, uint32_t *handle)
{
	calls.other++;
	if (fd < SYNCOBJ_FD0 || fd >= SYNCOBJ_FD0 + n_syncs)
		return mfail(-EINVAL, "import syncobj");
	*handle = new_obj(card, M_SYNC);
	if (!*handle)
		return mfail(-ENOMEM, "import syncobj");
	mc(card)->obj[*handle - 1].sync = fd - SYNCOBJ_FD0;
	return 0;
}

int rk_bo_wait(struct rk_card *card, const struct rk_bo *bo, int64_t abs_timeout_ns,
	       int *job_status)
{
	struct mobj *o = obj(card, bo->handle, M_HOST);

	calls.bo_wait++;
	if (!o && !obj(card, bo->handle, M_CARD))
		return mfail(-ENOENT, "BO_WAIT");
	if (o && clk_on && o->buf->t_done > rk_now_ns()) {
		if (abs_timeout_ns < o->buf->t_done)
			return mfail(-ETIMEDOUT, "BO_WAIT");
		clk_reach(o->buf->t_done);
	}
	if (job_status)
		*job_status = o ? o->buf->status : 0;
	return 0;
}

int rk_syncobj_destroy(struct rk_card *card, uint32_t handle)
{
	struct mobj *o = obj(card, handle, M_SYNC);

	if (!o)
		return mfail(-ENOENT, "SYNCOBJ_DESTROY");
	o->kind = M_FREE;
	mock_live_objs--;
	return 0;
}

int rk_syncobj_status(struct rk_card *card, uint32_t handle, uint64_t point,
		      int64_t abs_timeout_ns)
{
	struct msync *y = sy(card, handle);

	calls.other++;
	if (!y)
		return mfail(-ENOENT, "SYNCOBJ_WAIT");
	return y->status ? mfail(y->status, "job") : 0;
}

int rk_syncobj_wait(struct rk_card *card, const uint32_t *handles, const uint64_t *points,
		    unsigned int n, int64_t abs_timeout_ns, bool wait_all)
{
	unsigned int i;

	calls.syncobj_wait++;
	for (i = 0; i < n; i++)
		if (!obj(card, handles[i], M_SYNC) || (points && points[i]))
			return mfail(-EINVAL, "SYNCOBJ_WAIT");
	for (i = 0; clk_on && i < n; i++)	/* the pipeline waits for all */
		clk_reach(sy(card, handles[i])->t_done);
	return 0;	/* every job ran at submit time */
}

/* The modelled-clock sync_file behind @fd, or NULL. */
static const struct clkfile *clkfile(int fd)
{
	if (fd < CLKFILE_FD0 || fd >= CLKFILE_FD0 + CLKFILES)
		return NULL;
	return &clkfiles[fd - CLKFILE_FD0];
}

int rk_sync_file_status(int fd)
{
	const struct clkfile *cf = clkfile(fd);
	int st = fd - SYNCFILE_FD0 - 1000;

	if (cf)		/* not signalled until the clock got there */
		return cf->t_done > rk_now_ns() ? 0 : cf->status ? cf->status : 1;
	if (fd < SYNCFILE_FD0 || fd > SYNCFILE_FD0 + 1000)
		return mfail(-EBADF, "SYNC_IOC_FILE_INFO");
	return st ? st : 1;
}

int rk_sync_file_info(int fd, int64_t *timestamp_ns)
{
	const struct clkfile *cf = clkfile(fd);
	int st;

	calls.sync_file_info++;
	st = rk_sync_file_status(fd);
	*timestamp_ns = st == 1 ? (cf ? cf->t_done : rk_now_ns()) : 0;
	return st;
}

int rk_syncobj_export_sync_file(struct rk_card *card, uint32_t handle, uint64_t point,
				int *fd)
{
	struct msync *y = sy(card, handle);

	calls.export_sync_file++;
	if (!y || point)
		return mfail(-EINVAL, "export sync_file");
	if (clk_on) {
		unsigned int k = n_clkfiles++ % CLKFILES;

		clkfiles[k] = (struct clkfile){ y->status, y->t_done };
		*fd = CLKFILE_FD0 + (int)k;
		return 0;
	}
	*fd = SYNCFILE_FD0 + 1000 + y->status;
	return 0;
}

int rk_syncobj_import_sync_file(struct rk_card *card, uint32_t handle, uint64_t point,
				int fd)
{
	struct msync *y = sy(card, handle);
	const struct clkfile *cf = clkfile(fd);

	calls.import_sync_file++;
	if (y && !point && cf) {
		y->status = cf->status;
		y->t_done = cf->t_done;
		return 0;
	}
	if (!y || point || fd < SYNCFILE_FD0 || fd > SYNCFILE_FD0 + 1000)
		return mfail(-EINVAL, "import sync_file");
	y->status = fd - SYNCFILE_FD0 - 1000;
	y->t_done = 0;
	return 0;
}

/* Pointer to [off, off + size) of BO @h, or NULL when out of bounds. */
static uint8_t *bo_ptr(const struct rk_card *card, uint32_t h, uint64_t off, uint64_t size)
{
	struct mobj *o = obj(card, h, M_HOST);

	if (!o)
		o = obj(card, h, M_CARD);
	if (!o)
		o = obj(card, h, M_PEER);
	if (!o || off > o->size || size > o->size - off)
		return NULL;
	if (o->kind == M_PEER)
		return mcards[o->peer_card].mem + o->addr + off;
	return o->kind == M_HOST ? o->buf->p + off : mc(card)->mem + o->addr + off;
}

static int check_syncs(const struct rk_card *card, const struct rk_sync *s, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!obj(card, s[i].handle, M_SYNC) || s[i].point)
			return -ENOENT;
	return 0;
}

/*
 * Modelled clock: a job of @dur ns on the queue that ends at *@q, after
 * its in-syncs @in and the queue's previous job, submitted now. Return:
 * its end (0 without clock).
 */
static int64_t clk_queue_job(const struct rk_card *card, const struct rk_sync *in,
			     unsigned int n_in, int64_t dur, int64_t *q)
{
	int64_t start = rk_now_ns();
	unsigned int i;

	if (!clk_on)
		return 0;
	if (*q > start)
		start = *q;
	for (i = 0; i < n_in; i++)
		if (sy(card, in[i].handle)->t_done > start)
			start = sy(card, in[i].handle)->t_done;
	*q = start + dur;
	return start + dur;
}

/* A job on @card's one queue (or its EXEC queue with mock_rk_clock_link()). */
static int64_t clk_job(const struct rk_card *card, const struct rk_sync *in, unsigned int n_in,
		       int64_t dur)
{
	return clk_queue_job(card, in, n_in, dur, &mc(card)->free_at);
}

void mock_rk_clock_link(enum cost_link link)
{
	clk_link_on = true;
	clk_link = link;
}

/* A COPY of @size bytes: its own queue and link time with mock_rk_clock_link(). */
static int64_t clk_copy(const struct rk_card *card, const struct rk_sync *in, unsigned int n_in,
			uint64_t size, bool host_side)
{
	double ns;

	if (!clk_link_on || !mock_timing.prof)
		return clk_job(card, in, n_in, clk_cost.copy_ns);
	ns = host_side ? cost_link_ns(mock_timing.prof, clk_link, size) :
	     cost_card_copy_ns(mock_timing.prof, size);
	return clk_queue_job(card, in, n_in, (int64_t)ns, &mc(card)->copy_free_at);
}

static void signal_out(const struct rk_card *card, const struct rk_sync *out,
		       unsigned int n, int status, int64_t t_done)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		sy(card, out[i].handle)->status = status;
		sy(card, out[i].handle)->t_done = t_done;
	}
}

/* The error of the first failed in-sync (the driver's cancel rule), or 0. */
static int in_error(const struct rk_card *card, const struct rk_sync *in, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (sy(card, in[i].handle)->status)
			return sy(card, in[i].handle)->status;
	return 0;
}

/* This thread's CPU time, ns. */
static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int copy_job(struct rk_card *card, uint32_t src, uint64_t src_off, uint32_t dst,
		    uint64_t dst_off, uint64_t size, const struct rk_sync *in, unsigned int n_in,
		    const struct rk_sync *out, unsigned int n_out);
static int exec_job(struct rk_card *card, uint32_t prog, uint64_t prog_off, uint64_t prog_size,
		    const uint32_t *bos, unsigned int n_bos, const struct rk_sync *in,
		    unsigned int n_in, const struct rk_sync *out, unsigned int n_out);

int rk_submit_copy(struct rk_card *card, uint32_t src, uint64_t src_off, uint32_t dst,
		   uint64_t dst_off, uint64_t size, const struct rk_sync *in, unsigned int n_in,
		   const struct rk_sync *out, unsigned int n_out, uint64_t *seqno)
{
	int64_t t0 = thread_cpu_ns();
	int ret = copy_job(card, src, src_off, dst, dst_off, size, in, n_in, out, n_out);

	(void)seqno;
	__atomic_add_fetch(&self_ns, thread_cpu_ns() - t0, __ATOMIC_RELAXED);
	return ret;
}

int rk_submit_exec(struct rk_card *card, uint32_t prog, uint64_t prog_off, uint64_t prog_size,
		   const uint32_t *bos, unsigned int n_bos, const struct rk_sync *in,
		   unsigned int n_in, const struct rk_sync *out, unsigned int n_out,
		   uint64_t *seqno)
{
	int64_t t0 = thread_cpu_ns();
	int ret = exec_job(card, prog, prog_off, prog_size, bos, n_bos, in, n_in, out, n_out);

	(void)seqno;
	__atomic_add_fetch(&self_ns, thread_cpu_ns() - t0, __ATOMIC_RELAXED);
	return ret;
}

/* The card's side of a COPY: the bytes moved, the fences signalled. */
static int copy_job(struct rk_card *card, uint32_t src, uint64_t src_off, uint32_t dst,
		    uint64_t dst_off, uint64_t size, const struct rk_sync *in, unsigned int n_in,
		    const struct rk_sync *out, unsigned int n_out)
{
	uint8_t *s = bo_ptr(card, src, src_off, size), *d = bo_ptr(card, dst, dst_off, size);
	struct mobj *sh = obj(card, src, M_HOST), *dh = obj(card, dst, M_HOST);
	int64_t t_done;
	int st;

	calls.submit++;
	if (!size || !s || !d || check_syncs(card, in, n_in) || check_syncs(card, out, n_out))
		return mfail(-EINVAL, "SUBMIT(COPY)");
	if (sh && dh)
		return mfail(-EINVAL, "SUBMIT(COPY) host->host");
	/* Like the driver: a peer BO pairs with a card BO of this card. */
	if ((obj(card, src, M_PEER) && !obj(card, dst, M_CARD)) ||
	    (obj(card, dst, M_PEER) && !obj(card, src, M_CARD)))
		return mfail(-EINVAL, "SUBMIT(COPY) peer BO without a card BO");
	if (obj(card, src, M_PEER) || obj(card, dst, M_PEER))
		mc(card)->p2p_bytes += size;
	st = in_error(card, in, n_in);
	if (!st)
		memmove(d, s, size);
	t_done = clk_copy(card, in, n_in, size, sh || dh);
	if (dh) {
		dh->buf->status = st;
		dh->buf->t_done = t_done;
	}
	if (sh && sh->buf->t_done < t_done)
		sh->buf->t_done = t_done;
	signal_out(card, out, n_out, st, t_done);
	return 0;
}

/* Admit only ranges inside one allocated card BO. */
static int mock_check(void *priv, uint64_t addr, uint64_t len)
{
	struct mcard *m = priv;
	int i;

	for (i = 0; i < MOBJS; i++) {
		const struct mobj *o = &m->obj[i];

		if (o->kind == M_CARD && addr >= o->addr && len <= o->size &&
		    addr - o->addr <= o->size - len)
			return 0;
	}
	return 1;
}

/* The card's side of an EXEC: the program run (or timed), the fences signalled. */
static int exec_job(struct rk_card *card, uint32_t prog, uint64_t prog_off, uint64_t prog_size,
		    const uint32_t *bos, unsigned int n_bos, const struct rk_sync *in,
		    unsigned int n_in, const struct rk_sync *out, unsigned int n_out)
{
	static volatile int no_abort;
	struct mobj *p = obj(card, prog, M_CARD);
	struct emu_access acc = {
		.base = mc(card)->mem, .mem_size = arena_size(), .check = mock_check,
		.priv = mc(card), .abort = &no_abort,
	};
	const struct rk1828_program *h;
	double ns = 0;
	unsigned int i;
	int64_t t_done;
	int st;

	calls.submit++;
	if (!p || !prog_size || prog_off > p->size || prog_size > p->size - prog_off ||
	    check_syncs(card, in, n_in) || check_syncs(card, out, n_out))
		return mfail(-EINVAL, "SUBMIT(EXEC)");
	for (i = 0; i < n_bos; i++)
		if (!obj(card, bos[i], M_CARD))
			return mfail(-ENOENT, "SUBMIT(EXEC) BO list");
	st = in_error(card, in, n_in);
	if (st) {	/* cancelled: it does not run */
		signal_out(card, out, n_out, st, clk_job(card, in, n_in, 0));
		return 0;
	}
	if (mc(card)->fail_exec) {
		st = RK1828_HIF_ST_ACCESS;
	} else if (mock_timing.prof) {
		st = emu_exec_timed(&acc, p->addr + prog_off, prog_size, &mock_timing, &ns);
		if (mc(card)->n_exec < MOCK_MAX_TIMED)
			mc(card)->exec_ns[mc(card)->n_exec] = ns;
	} else {
		st = emu_exec(&acc, p->addr + prog_off, prog_size);
	}
	mc(card)->n_exec++;
	h = prog_size >= sizeof(*h) ? (const void *)(mc(card)->mem + p->addr + prog_off) : NULL;
	t_done = clk_job(card, in, n_in, mock_timing.prof ? (int64_t)ns :
			 clk_cost.exec_ns + clk_cost.exec_tok_ns *
			 (h ? (int64_t)le32toh(h->n_tokens) : 1));
	signal_out(card, out, n_out, st == RK1828_HIF_ST_OK ? 0 :
		   st == RK1828_HIF_ST_ACCESS ? -EFAULT : -EINVAL, t_done);
	return 0;
}

void mock_rk_reset(void)
{
	int i;

	for (i = 0; i < MOCK_CARDS; i++) {
		memset(mcards[i].obj, 0, sizeof(mcards[i].obj));
		if (mock_sparse && mcards[i].mem && mcards[i].brk > 4096)
			madvise(mcards[i].mem, mcards[i].brk, MADV_DONTNEED);
		mcards[i].brk = 4096;	/* card address 0 stays unused */
		mcards[i].fail_exec = 0;
		mcards[i].unplugged = 0;
		mcards[i].n_exec = 0;
		mcards[i].free_at = 0;
		mcards[i].copy_free_at = 0;
		mcards[i].live = 0;
		mcards[i].p2p_bytes = 0;
	}
	n_dmabufs = 0;
	n_p2pbufs = 0;
	p2p_on = false;
	n_syncs = 0;
	mock_live_objs = 0;
	memset(&calls, 0, sizeof(calls));
}

void mock_rk_card_mem(uint64_t bytes)
{
	uint64_t want = bytes ? bytes : MOCK_CARD_MEM;

	if (want == mock_mem && mock_sparse == (bytes != 0))
		return;
	mock_rk_free();
	mock_mem = want;
	mock_sparse = bytes != 0;
}

int64_t mock_rk_self_ns(void)
{
	return __atomic_load_n(&self_ns, __ATOMIC_RELAXED);
}

/* A card's memory: malloc()ed, or sparse pages mapped as they are touched. */
static uint8_t *card_mem_alloc(void)
{
	void *p;

	if (!mock_sparse)
		return malloc(mock_mem);
	p = mmap(NULL, arena_size(), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void mock_rk_cards(struct rk_card *cards)
{
	int i;

	for (i = 0; i < MOCK_CARDS; i++) {
		memset(&cards[i], 0, sizeof(cards[i]));
		cards[i].fd = i;
		cards[i].index = i;
		snprintf(cards[i].node, sizeof(cards[i].node), "mock%d", i);
		if (!mcards[i].mem)
			mcards[i].mem = card_mem_alloc();
		cards[i].mem_size = mock_mem;
		cards[i].mem_free = mock_mem - 4096;
	}
	n_cards_made = MOCK_CARDS;
	mock_rk_reset();
	mock_rk_clock(NULL);
}

void mock_rk_free(void)
{
	int i;

	for (i = 0; i < MOCK_CARDS; i++) {
		if (mock_sparse && mcards[i].mem)
			munmap(mcards[i].mem, arena_size());
		else
			free(mcards[i].mem);
		mcards[i].mem = NULL;
	}
	for (i = 0; i < n_all_bufs; i++) {
		free(all_bufs[i]->p);
		free(all_bufs[i]);
	}
	n_all_bufs = 0;
}

int mock_rk_live_objs(void)
{
	return mock_live_objs;
}

void mock_rk_fail_exec(int card, int on)
{
	mcards[card].fail_exec = on;
}

void mock_rk_unplug(int card, int on)
{
	mcards[card].unplugged = on;
}

int mock_rk_n_exec(int card)
{
	return mcards[card].n_exec;
}

void mock_rk_timing(const struct card_profile *prof, bool no_math)
{
	mock_timing.prof = prof;
	mock_timing.no_math = no_math;
}

double mock_rk_exec_ns(int card, int i)
{
	if (card < 0 || card >= MOCK_CARDS || i < 0 || i >= mcards[card].n_exec ||
	    i >= MOCK_MAX_TIMED)
		return -1;
	return mcards[card].exec_ns[i];
}

void mock_rk_get_calls(struct mock_rk_calls *c)
{
	*c = calls;
}
