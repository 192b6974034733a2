// SPDX-License-Identifier: MIT
/*
 * A mock librk1828 for host tests of the pipeline and the engine (see
 * mock_rk.h): the rk_* functions they call, over per-card memory arenas,
 * with every job run synchronously at submit time. COPY is a
 * bounds-checked memcpy, EXEC is the card emulator's emu_exec() with an
 * access check that only admits allocated card BOs. Since the pipeline
 * queues jobs in dependency order, running them at submit time is a valid
 * schedule.
 */
#include "mock_rk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "rk1828_hif.h"
#include "rk1828/util.h"

#define MOBJS		256
#define MDMABUF		64
#define DMABUF_FD0	1000000
#define SYNCFILE_FD0	2000000		/* fd = SYNCFILE_FD0 + 1000 + status */

struct mbuf {
	uint8_t *p;
	uint64_t size;
};

enum { M_FREE, M_HOST, M_CARD, M_SYNC };

struct mobj {
	int kind;
	struct mbuf *buf;	/* host BOs */
	uint64_t addr, size;	/* card BOs */
	int status;		/* syncobjs: 0 or -errno of the last job */
};

struct mcard {
	uint8_t *mem;
	uint64_t brk;
	struct mobj obj[MOBJS];
	int fail_exec;		/* make every EXEC fail with ST_ACCESS */
	int n_exec;
	double exec_ns[MOCK_MAX_TIMED];	/* modelled time of each EXEC (timing) */
};

static struct mcard mcards[MOCK_CARDS];
static struct mbuf *dmabufs[MDMABUF];
static struct mbuf *all_bufs[4096];	/* freed at exit (no refcounts in the mock) */
static int n_all_bufs;
static int n_dmabufs;
static char mock_err[256];
static int mock_live_objs;
static int n_cards_made;
static struct emu_exec_opts mock_timing;	/* .prof NULL: plain emu_exec() */

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
	card->mem_free = MOCK_CARD_MEM - mc(card)->brk;
	return 0;
}

int64_t rk_now_ns(void)
{
	return util_now_ns();
}

int rk_bo_create(struct rk_card *card, uint64_t size, enum rk_bo_kind kind, struct rk_bo *bo)
{
	uint32_t h;
	struct mobj *o;

	memset(bo, 0, sizeof(*bo));
	if (!size || (kind != RK_BO_HOST && kind != RK_BO_CARD))
		return mfail(-EINVAL, "BO_CREATE");
	size = (size + 4095) & ~4095ULL;
	if (kind == RK_BO_CARD && mc(card)->brk + size > MOCK_CARD_MEM)
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
		/* Poison fresh card memory: reading unwritten data shows up. */
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
		o->kind = M_FREE;	/* host buffers leak in the mock: fine */
		mock_live_objs--;
	}
	memset(bo, 0, sizeof(*bo));
	return 0;
}

int rk_bo_export(struct rk_card *card, const struct rk_bo *bo, int *fd)
{
	struct mobj *o = obj(card, bo->handle, M_HOST);

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
	*handle = new_obj(card, M_SYNC);
	return *handle ? 0 : mfail(-ENOMEM, "SYNCOBJ_CREATE");
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
	struct mobj *o = obj(card, handle, M_SYNC);

	if (!o)
		return mfail(-ENOENT, "SYNCOBJ_WAIT");
	return o->status ? mfail(o->status, "job") : 0;
}

int rk_syncobj_wait(struct rk_card *card, const uint32_t *handles, const uint64_t *points,
		    unsigned int n, int64_t abs_timeout_ns, bool wait_all)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!obj(card, handles[i], M_SYNC) || (points && points[i]))
			return mfail(-EINVAL, "SYNCOBJ_WAIT");
	return 0;	/* every job ran at submit time */
}

int rk_sync_file_status(int fd)
{
	int st = fd - SYNCFILE_FD0 - 1000;

	if (fd < SYNCFILE_FD0 || fd > SYNCFILE_FD0 + 1000)
		return mfail(-EBADF, "SYNC_IOC_FILE_INFO");
	return st ? st : 1;
}

int rk_sync_file_info(int fd, int64_t *timestamp_ns)
{
	int st = rk_sync_file_status(fd);

	*timestamp_ns = st == 1 ? rk_now_ns() : 0;
	return st;
}

int rk_syncobj_export_sync_file(struct rk_card *card, uint32_t handle, uint64_t point,
				int *fd)
{
	struct mobj *o = obj(card, handle, M_SYNC);

	if (!o || point)
		return mfail(-EINVAL, "export sync_file");
	*fd = SYNCFILE_FD0 + 1000 + o->status;
	return 0;
}

int rk_syncobj_import_sync_file(struct rk_card *card, uint32_t handle, uint64_t point,
				int fd)
{
	struct mobj *o = obj(card, handle, M_SYNC);

	if (!o || point || fd < SYNCFILE_FD0 || fd > SYNCFILE_FD0 + 1000)
		return mfail(-EINVAL, "import sync_file");
	o->status = fd - SYNCFILE_FD0 - 1000;
	return 0;
}

/* Pointer to [off, off + size) of BO @h, or NULL when out of bounds. */
static uint8_t *bo_ptr(const struct rk_card *card, uint32_t h, uint64_t off, uint64_t size)
{
	struct mobj *o = obj(card, h, M_HOST);

	if (!o)
		o = obj(card, h, M_CARD);
	if (!o || off > o->size || size > o->size - off)
		return NULL;
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

static void signal_out(const struct rk_card *card, const struct rk_sync *out,
		       unsigned int n, int status)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		obj(card, out[i].handle, M_SYNC)->status = status;
}

int rk_submit_copy(struct rk_card *card, uint32_t src, uint64_t src_off, uint32_t dst,
		   uint64_t dst_off, uint64_t size, const struct rk_sync *in, unsigned int n_in,
		   const struct rk_sync *out, unsigned int n_out, uint64_t *seqno)
{
	uint8_t *s = bo_ptr(card, src, src_off, size), *d = bo_ptr(card, dst, dst_off, size);

	if (!size || !s || !d || check_syncs(card, in, n_in) || check_syncs(card, out, n_out))
		return mfail(-EINVAL, "SUBMIT(COPY)");
	if (obj(card, src, M_HOST) && obj(card, dst, M_HOST))
		return mfail(-EINVAL, "SUBMIT(COPY) host->host");
	memmove(d, s, size);
	signal_out(card, out, n_out, 0);
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

int rk_submit_exec(struct rk_card *card, uint32_t prog, uint64_t prog_off, uint64_t prog_size,
		   const uint32_t *bos, unsigned int n_bos, const struct rk_sync *in,
		   unsigned int n_in, const struct rk_sync *out, unsigned int n_out,
		   uint64_t *seqno)
{
	static volatile int no_abort;
	struct mobj *p = obj(card, prog, M_CARD);
	struct emu_access acc = {
		.base = mc(card)->mem, .mem_size = MOCK_CARD_MEM, .check = mock_check,
		.priv = mc(card), .abort = &no_abort,
	};
	unsigned int i;
	int st;

	if (!p || !prog_size || prog_off > p->size || prog_size > p->size - prog_off ||
	    check_syncs(card, in, n_in) || check_syncs(card, out, n_out))
		return mfail(-EINVAL, "SUBMIT(EXEC)");
	for (i = 0; i < n_bos; i++)
		if (!obj(card, bos[i], M_CARD))
			return mfail(-ENOENT, "SUBMIT(EXEC) BO list");
	if (mc(card)->fail_exec) {
		st = RK1828_HIF_ST_ACCESS;
	} else if (mock_timing.prof) {
		double ns;

		st = emu_exec_timed(&acc, p->addr + prog_off, prog_size, &mock_timing, &ns);
		if (mc(card)->n_exec < MOCK_MAX_TIMED)
			mc(card)->exec_ns[mc(card)->n_exec] = ns;
	} else {
		st = emu_exec(&acc, p->addr + prog_off, prog_size);
	}
	mc(card)->n_exec++;
	signal_out(card, out, n_out, st == RK1828_HIF_ST_OK ? 0 :
		   st == RK1828_HIF_ST_ACCESS ? -EFAULT : -EINVAL);
	return 0;
}

void mock_rk_reset(void)
{
	int i;

	for (i = 0; i < MOCK_CARDS; i++) {
		memset(mcards[i].obj, 0, sizeof(mcards[i].obj));
		mcards[i].brk = 4096;	/* card address 0 stays unused */
		mcards[i].fail_exec = 0;
		mcards[i].n_exec = 0;
	}
	n_dmabufs = 0;
	mock_live_objs = 0;
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
			mcards[i].mem = malloc(MOCK_CARD_MEM);
		cards[i].mem_size = MOCK_CARD_MEM;
		cards[i].mem_free = MOCK_CARD_MEM - 4096;
	}
	n_cards_made = MOCK_CARDS;
	mock_rk_reset();
}

void mock_rk_free(void)
{
	int i;

	for (i = 0; i < MOCK_CARDS; i++) {
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
