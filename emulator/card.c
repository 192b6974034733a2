// SPDX-License-Identifier: MIT
/*
 * Card emulator: the card model. See card.h for the threading model and
 * Documentation/accel/rk1828/protocol.rst for the protocol it implements.
 * This file: creation and destruction, queue and full resets, statistics
 * and accessors. Contexts and mappings are card_ctx.c, the command and
 * completion streams card_stream.c, the command handlers and the queue
 * workers card_cmd.c (shared declarations: card_int.h).
 *
 * Locking:
 * - emu_queue.lock protects the queue's input and output chunk lists, the
 *   byte counters and the state flags. The worker copies bytes out of the
 *   head input chunk with the lock dropped: only the worker removes input
 *   chunks, and a reset drops them only once the worker is idle.
 * - emu_card.ctx_lock (rwlock) protects the context table; each context's
 *   own rwlock protects its mapping list. Lock order: table, then context.
 *   Readers (WRITE/READ/COPY/EXEC) hold the context read lock while they
 *   check and touch memory; MAP/UNMAP take it for writing, so a mapping
 *   never disappears under a running access. WRITE and READ payloads are
 *   moved piece by piece and re-check each piece, so no lock is held while
 *   waiting for the host.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "card_int.h"
#include "rk1828/util.h"

_Static_assert(sizeof(struct rk1828_hif_msg) == 48, "HIF header is 48 bytes");
_Static_assert(sizeof(struct rk1828_hif_info) == 64, "HIF info is 64 bytes");

const char *const card_queue_names[RK1828_HIF_NUM_QUEUES] = {
	"mgmt", "compute", "copy",
};

const char *card_op_name(unsigned int op)
{
	static const char *const names[] = {
		[RK1828_HIF_OP_INFO] = "INFO",
		[RK1828_HIF_OP_CTX_CREATE] = "CTX_CREATE",
		[RK1828_HIF_OP_CTX_DESTROY] = "CTX_DESTROY",
		[RK1828_HIF_OP_MAP] = "MAP",
		[RK1828_HIF_OP_UNMAP] = "UNMAP",
		[RK1828_HIF_OP_WRITE] = "WRITE",
		[RK1828_HIF_OP_READ] = "READ",
		[RK1828_HIF_OP_COPY] = "COPY",
		[RK1828_HIF_OP_EXEC] = "EXEC",
		[RK1828_HIF_OP_STATS] = "STATS",
	};

	if (op < sizeof(names) / sizeof(names[0]) && names[op])
		return names[op];
	return "?";
}

void card_log(const struct emu_card *card, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rk1828-emu: card %u: %s\n", card->cfg.index, buf);
}

void emu_card_reset_queues(struct emu_card *card)
{
	unsigned int i;

	__atomic_store_n(&card->abort, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < RK1828_HIF_NUM_QUEUES; i++) {
		struct emu_queue *q = &card->q[i];

		pthread_mutex_lock(&q->lock);
		q->reset_pending = true;
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->lock);
	}
	for (i = 0; i < RK1828_HIF_NUM_QUEUES; i++) {
		struct emu_queue *q = &card->q[i];

		pthread_mutex_lock(&q->lock);
		while (q->busy)
			pthread_cond_wait(&q->idle_cv, &q->lock);
		card_in_drop_locked(q);
		card_out_drop_locked(q);
		q->desync = false;
		q->reset_pending = false;
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->lock);
	}
	__atomic_store_n(&card->abort, 0, __ATOMIC_SEQ_CST);
	if (card->cfg.verbose)
		card_log(card, "queues reset");
}

void emu_card_reset_all(struct emu_card *card)
{
	unsigned int id, n = 0;

	emu_card_reset_queues(card);
	pthread_rwlock_wrlock(&card->ctx_lock);
	for (id = 1; id <= EMU_MAX_CTX; id++) {
		if (card->ctx[id]) {
			card_ctx_free(card->ctx[id]);
			card->ctx[id] = NULL;
			n++;
		}
	}
	pthread_rwlock_unlock(&card->ctx_lock);
	if (card->cfg.verbose || n)
		card_log(card, "card reset, %u context(s) destroyed", n);
}

void emu_card_get_stats(struct emu_card *card, unsigned int q_idx,
			struct emu_card_stats *st)
{
	struct emu_queue *q;

	memset(st, 0, sizeof(*st));
	if (q_idx >= RK1828_HIF_NUM_QUEUES)
		return;
	q = &card->q[q_idx];
	pthread_mutex_lock(&q->lock);
	*st = q->stats;
	pthread_mutex_unlock(&q->lock);
}

int emu_card_notify_fd(const struct emu_card *card)
{
	return card->notify_fd;
}

uint8_t *emu_card_mem(const struct emu_card *card)
{
	return card->mem;
}

uint64_t emu_card_mem_size(const struct emu_card *card)
{
	return card->cfg.mem_size;
}

uint64_t emu_card_serial(const struct emu_card *card)
{
	return card->cfg.serial;
}

int emu_card_threads(const struct emu_card *card)
{
	return card->cfg.threads;
}

static int queue_init(struct emu_card *card, unsigned int idx)
{
	struct emu_queue *q = &card->q[idx];
	pthread_condattr_t ca;
	int err;

	q->idx = idx;
	err = pthread_mutex_init(&q->lock, NULL);
	if (err)
		return err;
	q->card = card;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cv, &ca);
	pthread_cond_init(&q->idle_cv, &ca);
	pthread_cond_init(&q->out_cv, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&q->thread, NULL, card_queue_worker, q);
	if (err)
		return err;
	q->thread_started = true;
	return 0;
}

/*
 * The peer window: the top cfg.p2p_window bytes of card memory are a memfd
 * mapped shared over the anonymous mapping (MAP_FIXED), so the same pages
 * are QEMU's BAR and the card's memory. 0 or an errno.
 */
static int p2p_window_init(struct emu_card *card)
{
	uint64_t size = card->cfg.p2p_window, base;
	void *p;

	if (!size)
		return 0;
	if ((size & (size - 1)) || size > card->cfg.mem_size / 2 ||
	    size % (uint64_t)sysconf(_SC_PAGESIZE))
		return EINVAL;
	base = card->cfg.mem_size - size;
	card->p2p_fd = memfd_create("rk1828-p2p-window", MFD_CLOEXEC);
	if (card->p2p_fd < 0)
		return errno;
	if (ftruncate(card->p2p_fd, (off_t)size) < 0)
		return errno;
	p = mmap(card->mem + base, size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, card->p2p_fd, 0);
	if (p == MAP_FAILED)
		return errno;
	card->p2p_base = base;
	card->p2p_size = size;
	return 0;
}

int emu_card_p2p_window(const struct emu_card *card, uint64_t *base,
			uint64_t *size)
{
	*base = card->p2p_base;
	*size = card->p2p_size;
	return card->p2p_size ? card->p2p_fd : -1;
}

struct emu_card *emu_card_create(const struct emu_card_config *cfg)
{
	struct emu_card *card;
	unsigned int i;
	int err;

	if (!cfg->mem_size || cfg->mem_size > (UINT64_C(1) << 46)) {
		errno = EINVAL;
		return NULL;
	}
	card = calloc(1, sizeof(*card));
	if (!card) {
		errno = ENOMEM;
		return NULL;
	}
	card->cfg = *cfg;
	if (card->cfg.threads <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		card->cfg.threads = n > 0 ? (int)n : 1;
	}
	card->notify_fd = -1;
	card->p2p_fd = -1;
	card->start_ns = util_now_ns();
	if (cfg->timing) {
		card->timing = emu_timing_create(cfg->timing, cfg->link, cfg->timing_only);
		if (!card->timing) {
			err = ENOMEM;
			goto fail;
		}
		card->cfg.timing = emu_timing_profile(card->timing);
	}
	card_stats_init(card);
	card->mem = mmap(NULL, cfg->mem_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (card->mem == MAP_FAILED) {
		err = errno;
		card->mem = NULL;
		goto fail;
	}
	err = p2p_window_init(card);
	if (err)
		goto fail;
	card->notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (card->notify_fd < 0) {
		err = errno;
		goto fail;
	}
	err = pthread_rwlock_init(&card->ctx_lock, NULL);
	if (err)
		goto fail;
	for (i = 0; i < RK1828_HIF_NUM_QUEUES; i++) {
		err = queue_init(card, i);
		if (err)
			goto fail;
	}
	return card;
fail:
	emu_card_destroy(card);
	errno = err;
	return NULL;
}

void emu_card_destroy(struct emu_card *card)
{
	unsigned int i;

	if (!card)
		return;
	__atomic_store_n(&card->abort, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < RK1828_HIF_NUM_QUEUES; i++) {
		struct emu_queue *q = &card->q[i];

		if (!q->thread_started)
			continue;
		pthread_mutex_lock(&q->lock);
		q->stop = true;
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->lock);
	}
	for (i = 0; i < RK1828_HIF_NUM_QUEUES; i++) {
		struct emu_queue *q = &card->q[i];

		if (!q->card)
			continue;
		if (q->thread_started)
			pthread_join(q->thread, NULL);
		card_in_drop_locked(q);
		card_out_drop_locked(q);
		pthread_cond_destroy(&q->cv);
		pthread_cond_destroy(&q->idle_cv);
		pthread_cond_destroy(&q->out_cv);
		pthread_mutex_destroy(&q->lock);
	}
	for (i = 1; i <= EMU_MAX_CTX; i++)
		if (card->ctx[i])
			card_ctx_free(card->ctx[i]);
	if (card->q[0].card)
		pthread_rwlock_destroy(&card->ctx_lock);
	if (card->notify_fd >= 0)
		close(card->notify_fd);
	if (card->p2p_fd >= 0)
		close(card->p2p_fd);
	if (card->mem)
		munmap(card->mem, card->cfg.mem_size);
	emu_timing_destroy(card->timing);
	card_stats_destroy(card);
	free(card);
}
