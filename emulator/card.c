// SPDX-License-Identifier: MIT
/*
 * Card emulator: the card model. See card.h for the threading model and
 * Documentation/accel/rk1828/protocol.rst for the protocol it implements.
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
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
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

#include "card.h"
#include "exec.h"

#define HDR_SIZE	sizeof(struct rk1828_hif_msg)

_Static_assert(sizeof(struct rk1828_hif_msg) == 48, "HIF header is 48 bytes");
_Static_assert(sizeof(struct rk1828_hif_info) == 64, "HIF info is 64 bytes");

/* A piece of a queue's OUT stream. */
struct in_chunk {
	struct in_chunk *next;
	uint8_t *data;
	size_t len;
	size_t off;		/* bytes already consumed */
	emu_release_fn release;
	void *opaque;
};

/* A piece of a queue's completion stream. */
struct out_chunk {
	struct out_chunk *next;
	size_t len;
	size_t off;		/* bytes already handed to the transport */
	uint8_t data[];
};

/* One mapping [start, start + len) of a context. */
struct emu_map {
	uint64_t start;
	uint64_t len;
};

/* A context: its mappings sorted by start, never overlapping. */
struct emu_ctx {
	pthread_rwlock_t lock;
	struct emu_map *maps;
	size_t n_maps;
	size_t cap_maps;
};

struct emu_queue {
	struct emu_card *card;
	unsigned int idx;
	pthread_t thread;
	bool thread_started;

	pthread_mutex_t lock;
	pthread_cond_t cv;		/* worker: input, reset, stop, room */
	pthread_cond_t idle_cv;		/* reset / wait_idle: worker state */
	pthread_cond_t out_cv;		/* wait_output: new completions */

	struct in_chunk *in_head, *in_tail;
	uint64_t in_bytes;
	struct out_chunk *out_head, *out_tail;
	uint64_t out_bytes;

	bool busy;		/* a command is in progress */
	bool starved;		/* the worker waits for input */
	bool reset_pending;	/* RESET_QUEUES in progress */
	bool desync;		/* bad magic seen; input dropped until reset */
	bool drain_notify;	/* wake the I/O thread when input drains */
	bool stop;

	struct emu_card_stats stats;
};

struct emu_card {
	struct emu_card_config cfg;
	uint8_t *mem;
	int notify_fd;
	volatile int abort;

	pthread_rwlock_t ctx_lock;
	struct emu_ctx *ctx[EMU_MAX_CTX + 1];

	struct emu_queue q[RK1828_HIF_NUM_QUEUES];
};

static const char *const queue_names[RK1828_HIF_NUM_QUEUES] = {
	"mgmt", "compute", "copy",
};

static const char *op_name(unsigned int op)
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
	};

	if (op < sizeof(names) / sizeof(names[0]) && names[op])
		return names[op];
	return "?";
}

__attribute__((format(printf, 2, 3)))
static void card_log(const struct emu_card *card, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rk1828-emu: card %u: %s\n", card->cfg.index, buf);
}

/* ---- contexts and access checks ---------------------------------------- */

/* Index of the last mapping with start <= addr, or -1. */
static long map_find(const struct emu_ctx *c, uint64_t addr)
{
	size_t lo = 0, hi = c->n_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/*
 * 0 when [addr, addr + len) lies inside one mapping of @c (a zero-length
 * range must start inside a mapping), -1 otherwise. Caller holds c->lock.
 */
static int ctx_check(const struct emu_ctx *c, uint64_t addr, uint64_t len)
{
	long i = map_find(c, addr);
	uint64_t end;

	if (i < 0)
		return -1;
	end = c->maps[i].start + c->maps[i].len;
	if (addr >= end || len > end - addr)
		return -1;
	return 0;
}

/* emu_access.check for EXEC: the caller (run_exec) holds the read lock. */
static int access_check_cb(void *priv, uint64_t addr, uint64_t len)
{
	return ctx_check(priv, addr, len);
}

/* Look up context @id and lock it (shared or exclusive); NULL if absent. */
static struct emu_ctx *ctx_get(struct emu_card *card, uint32_t id, bool write)
{
	struct emu_ctx *c = NULL;

	if (id == 0 || id > EMU_MAX_CTX)
		return NULL;
	pthread_rwlock_rdlock(&card->ctx_lock);
	c = card->ctx[id];
	if (c) {
		if (write)
			pthread_rwlock_wrlock(&c->lock);
		else
			pthread_rwlock_rdlock(&c->lock);
	}
	pthread_rwlock_unlock(&card->ctx_lock);
	return c;
}

static void ctx_put(struct emu_ctx *c)
{
	if (c)
		pthread_rwlock_unlock(&c->lock);
}

static void ctx_free(struct emu_ctx *c)
{
	/* Wait for the last user, then free. */
	pthread_rwlock_wrlock(&c->lock);
	pthread_rwlock_unlock(&c->lock);
	pthread_rwlock_destroy(&c->lock);
	free(c->maps);
	free(c);
}

static uint32_t op_ctx_create(struct emu_card *card, uint32_t id)
{
	struct emu_ctx *c;
	uint32_t st = RK1828_HIF_ST_OK;

	if (id == 0 || id > EMU_MAX_CTX)
		return RK1828_HIF_ST_INVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return RK1828_HIF_ST_NOMEM;
	if (pthread_rwlock_init(&c->lock, NULL)) {
		free(c);
		return RK1828_HIF_ST_NOMEM;
	}
	pthread_rwlock_wrlock(&card->ctx_lock);
	if (card->ctx[id])
		st = RK1828_HIF_ST_INVAL;
	else
		card->ctx[id] = c;
	pthread_rwlock_unlock(&card->ctx_lock);
	if (st != RK1828_HIF_ST_OK) {
		pthread_rwlock_destroy(&c->lock);
		free(c);
	}
	return st;
}

static uint32_t op_ctx_destroy(struct emu_card *card, uint32_t id)
{
	struct emu_ctx *c = NULL;

	if (id == 0 || id > EMU_MAX_CTX)
		return RK1828_HIF_ST_NOCTX;
	pthread_rwlock_wrlock(&card->ctx_lock);
	c = card->ctx[id];
	card->ctx[id] = NULL;
	pthread_rwlock_unlock(&card->ctx_lock);
	if (!c)
		return RK1828_HIF_ST_NOCTX;
	ctx_free(c);
	return RK1828_HIF_ST_OK;
}

/*
 * Zero card memory [start, start + len): whole pages are dropped with
 * MADV_DONTNEED (a private anonymous mapping then reads zeros and the host
 * gets the memory back), the partial pages at the edges are cleared.
 */
static void mem_clear(struct emu_card *card, uint64_t start, uint64_t len)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t end = start + len;
	uint64_t a = (start + page - 1) & ~(page - 1);
	uint64_t b = end & ~(page - 1);

	if (a >= b) {
		memset(card->mem + start, 0, len);
		return;
	}
	memset(card->mem + start, 0, a - start);
	memset(card->mem + b, 0, end - b);
	if (madvise(card->mem + a, b - a, MADV_DONTNEED))
		memset(card->mem + a, 0, b - a);
}

static uint32_t op_map(struct emu_card *card, uint32_t id, uint64_t start,
		       uint64_t len)
{
	struct emu_ctx *c;
	uint32_t st = RK1828_HIF_ST_OK;
	long i;

	if (len == 0 || start >= card->cfg.mem_size ||
	    len > card->cfg.mem_size - start)
		return RK1828_HIF_ST_INVAL;
	c = ctx_get(card, id, true);
	if (!c)
		return RK1828_HIF_ST_NOCTX;
	i = map_find(c, start);
	/* No overlap with the mapping before or the one after. */
	if (i >= 0 && c->maps[i].start + c->maps[i].len > start)
		st = RK1828_HIF_ST_INVAL;
	else if ((size_t)(i + 1) < c->n_maps &&
		 c->maps[i + 1].start < start + len)
		st = RK1828_HIF_ST_INVAL;
	else if (c->n_maps >= EMU_MAX_MAPS)
		st = RK1828_HIF_ST_NOMEM;
	if (st == RK1828_HIF_ST_OK && c->n_maps == c->cap_maps) {
		size_t ncap = c->cap_maps ? c->cap_maps * 2 : 16;
		struct emu_map *m = realloc(c->maps, ncap * sizeof(*m));

		if (!m) {
			st = RK1828_HIF_ST_NOMEM;
		} else {
			c->maps = m;
			c->cap_maps = ncap;
		}
	}
	if (st == RK1828_HIF_ST_OK) {
		size_t pos = (size_t)(i + 1);

		/* A new mapping reads as zeros: no data of a former user. */
		mem_clear(card, start, len);

		memmove(&c->maps[pos + 1], &c->maps[pos],
			(c->n_maps - pos) * sizeof(c->maps[0]));
		c->maps[pos].start = start;
		c->maps[pos].len = len;
		c->n_maps++;
	}
	ctx_put(c);
	return st;
}

static uint32_t op_unmap(struct emu_card *card, uint32_t id, uint64_t start)
{
	struct emu_ctx *c = ctx_get(card, id, true);
	uint32_t st = RK1828_HIF_ST_INVAL;
	long i;

	if (!c)
		return RK1828_HIF_ST_NOCTX;
	i = map_find(c, start);
	if (i >= 0 && c->maps[i].start == start) {
		memmove(&c->maps[i], &c->maps[i + 1],
			(c->n_maps - (size_t)i - 1) * sizeof(c->maps[0]));
		c->n_maps--;
		st = RK1828_HIF_ST_OK;
	}
	ctx_put(c);
	return st;
}

/* ---- stream plumbing ---------------------------------------------------- */

static void notify(struct emu_card *card)
{
	uint64_t one = 1;
	ssize_t r;

	do {
		r = write(card->notify_fd, &one, sizeof(one));
	} while (r < 0 && errno == EINTR);
	/* EAGAIN: the counter is saturated, the I/O thread wakes anyway. */
}

static void in_chunk_free(struct in_chunk *c)
{
	if (c->release)
		c->release(c->opaque, c->data);
	free(c);
}

static void notify(struct emu_card *card);

/* Input was consumed: fire the armed drain wake-up. Holds q->lock. */
static void in_drained_locked(struct emu_queue *q)
{
	if (q->drain_notify && q->in_bytes <= EMU_IN_HIGH_WATER / 2) {
		q->drain_notify = false;
		notify(q->card);
	}
}

/* Drop all input. Caller holds q->lock; the worker is idle. */
static void in_drop_locked(struct emu_queue *q)
{
	struct in_chunk *c = q->in_head;

	while (c) {
		struct in_chunk *next = c->next;

		in_chunk_free(c);
		c = next;
	}
	q->in_head = q->in_tail = NULL;
	q->in_bytes = 0;
	in_drained_locked(q);
}

static void out_drop_locked(struct emu_queue *q)
{
	struct out_chunk *c = q->out_head;

	while (c) {
		struct out_chunk *next = c->next;

		free(c);
		c = next;
	}
	q->out_head = q->out_tail = NULL;
	q->out_bytes = 0;
}

/* Worker only: copy @n <= in_bytes bytes from the stream. Holds q->lock. */
static void in_take_locked(struct emu_queue *q, void *dst, size_t n)
{
	uint8_t *d = dst;

	while (n) {
		struct in_chunk *c = q->in_head;
		size_t take = c->len - c->off;

		if (take > n)
			take = n;
		memcpy(d, c->data + c->off, take);
		c->off += take;
		d += take;
		n -= take;
		q->in_bytes -= take;
		if (c->off == c->len) {
			q->in_head = c->next;
			if (!q->in_head)
				q->in_tail = NULL;
			in_chunk_free(c);
		}
	}
	in_drained_locked(q);
}

/* Worker only: wait for input; false on reset/stop. Holds q->lock. */
static bool wait_input_locked(struct emu_queue *q)
{
	while (!q->stop && !q->reset_pending && q->in_bytes == 0) {
		q->starved = true;
		pthread_cond_broadcast(&q->idle_cv);
		pthread_cond_wait(&q->cv, &q->lock);
	}
	q->starved = false;
	return !q->stop && !q->reset_pending;
}

typedef void (*sink_fn)(void *arg, uint64_t off, const uint8_t *p, size_t n);

/*
 * Worker only: pass the next @n stream bytes to @sink (NULL: discard) as
 * they arrive, without holding the queue lock during @sink.
 * Returns 0, or -1 when a reset or stop interrupted the command.
 */
static int in_consume(struct emu_queue *q, uint64_t n, sink_fn sink, void *arg)
{
	uint64_t done = 0;

	pthread_mutex_lock(&q->lock);
	while (done < n) {
		struct in_chunk *c;
		size_t take;

		if (!wait_input_locked(q)) {
			pthread_mutex_unlock(&q->lock);
			return -1;
		}
		c = q->in_head;
		take = c->len - c->off;
		if (take > n - done)
			take = (size_t)(n - done);
		if (sink) {
			const uint8_t *p = c->data + c->off;

			pthread_mutex_unlock(&q->lock);
			sink(arg, done, p, take);
			pthread_mutex_lock(&q->lock);
		}
		c->off += take;
		q->in_bytes -= take;
		done += take;
		if (c->off == c->len) {
			q->in_head = c->next;
			if (!q->in_head)
				q->in_tail = NULL;
			in_chunk_free(c);
		}
		in_drained_locked(q);
	}
	pthread_mutex_unlock(&q->lock);
	return 0;
}

/*
 * Worker only: allocate an output chunk for @len bytes. Retries while
 * memory is short (a completion cannot be skipped without breaking the
 * stream); NULL only when a reset or stop interrupts.
 */
static struct out_chunk *out_alloc(struct emu_queue *q, size_t len)
{
	for (;;) {
		struct out_chunk *c = malloc(sizeof(*c) + len);
		bool give_up;

		if (c) {
			c->next = NULL;
			c->len = len;
			c->off = 0;
			return c;
		}
		pthread_mutex_lock(&q->lock);
		give_up = q->stop || q->reset_pending;
		pthread_mutex_unlock(&q->lock);
		if (give_up)
			return NULL;
		card_log(q->card, "%s: out of memory for %zu completion bytes, retrying",
			 queue_names[q->idx], len);
		usleep(10000);
	}
}

/*
 * Worker only: append @c to the completion stream; frees it instead when
 * a reset or stop is in progress. Returns false in that case.
 */
static bool out_append(struct emu_queue *q, struct out_chunk *c)
{
	bool ok;

	pthread_mutex_lock(&q->lock);
	ok = !q->stop && !q->reset_pending;
	if (ok) {
		if (q->out_tail)
			q->out_tail->next = c;
		else
			q->out_head = c;
		q->out_tail = c;
		q->out_bytes += c->len;
		pthread_cond_broadcast(&q->out_cv);
	}
	pthread_mutex_unlock(&q->lock);
	if (ok)
		notify(q->card);
	else
		free(c);
	return ok;
}

/* Worker only: wait until the host drained the backlog; false on reset. */
static bool out_wait_room(struct emu_queue *q)
{
	bool ok;

	pthread_mutex_lock(&q->lock);
	while (!q->stop && !q->reset_pending &&
	       q->out_bytes > EMU_OUT_HIGH_WATER)
		pthread_cond_wait(&q->cv, &q->lock);
	ok = !q->stop && !q->reset_pending;
	pthread_mutex_unlock(&q->lock);
	return ok;
}

static void fill_header(uint8_t *dst, const struct rk1828_hif_msg *cmd,
			uint32_t status, uint32_t data_len)
{
	struct rk1828_hif_msg h;

	memset(&h, 0, sizeof(h));
	h.magic = htole32(RK1828_HIF_MAGIC);
	h.opcode = cmd->opcode;
	h.seq = cmd->seq;
	h.ctx = cmd->ctx;
	h.status = htole32(status);
	h.data_len = htole32(data_len);
	memcpy(h.arg, cmd->arg, sizeof(h.arg));
	memcpy(dst, &h, sizeof(h));
}

static void count_completion(struct emu_queue *q, uint32_t status, bool sent)
{
	pthread_mutex_lock(&q->lock);
	if (sent) {
		q->stats.commands++;
		if (status != RK1828_HIF_ST_OK)
			q->stats.errors++;
	} else {
		q->stats.aborted++;
	}
	pthread_mutex_unlock(&q->lock);
}

/* Worker only: queue one completion with @len bytes of @data. */
static void complete(struct emu_queue *q, const struct rk1828_hif_msg *cmd,
		     uint32_t status, const void *data, uint32_t len)
{
	struct out_chunk *c = out_alloc(q, HDR_SIZE + len);
	bool sent = false;

	if (c) {
		fill_header(c->data, cmd, status, len);
		if (len)
			memcpy(c->data + HDR_SIZE, data, len);
		sent = out_append(q, c);
	}
	count_completion(q, status, sent);
	if (q->card->cfg.verbose)
		card_log(q->card, "%s: %s seq %u ctx %u -> status %u%s",
			 queue_names[q->idx], op_name(le16toh(cmd->opcode)),
			 le32toh(cmd->seq), le32toh(cmd->ctx), status,
			 sent ? "" : " (dropped by reset)");
}

/* ---- commands ------------------------------------------------------------ */

struct write_sink {
	struct emu_card *card;
	uint32_t ctx;
	uint64_t addr;
	bool failed;
};

/* Copy one piece of WRITE data into card memory, re-checking its range. */
static void write_sink_fn(void *arg, uint64_t off, const uint8_t *p, size_t n)
{
	struct write_sink *ws = arg;
	struct emu_ctx *c = ctx_get(ws->card, ws->ctx, false);

	if (c && ctx_check(c, ws->addr + off, n) == 0)
		memcpy(ws->card->mem + ws->addr + off, p, n);
	else
		ws->failed = true;
	ctx_put(c);
}

/* Check [addr, addr + len) in context @id. Returns a status. */
static uint32_t check_range(struct emu_card *card, uint32_t id, uint64_t addr,
			    uint64_t len)
{
	struct emu_ctx *c = ctx_get(card, id, false);
	uint32_t st;

	if (!c)
		return RK1828_HIF_ST_NOCTX;
	st = ctx_check(c, addr, len) ? RK1828_HIF_ST_ACCESS : RK1828_HIF_ST_OK;
	ctx_put(c);
	return st;
}

static void run_write(struct emu_queue *q, const struct rk1828_hif_msg *cmd)
{
	struct write_sink ws = {
		.card = q->card,
		.ctx = le32toh(cmd->ctx),
		.addr = le64toh(cmd->arg[0]),
	};
	uint32_t len = le32toh(cmd->data_len);
	uint64_t arg_len = le64toh(cmd->arg[1]);
	uint32_t st;

	/* arg1 repeats the length (or is 0, meaning data_len). */
	if (arg_len && arg_len != len)
		st = RK1828_HIF_ST_INVAL;
	else
		st = check_range(q->card, ws.ctx, ws.addr, len);

	if (in_consume(q, len, st == RK1828_HIF_ST_OK ? write_sink_fn : NULL,
		       &ws)) {
		count_completion(q, 0, false);
		return;
	}
	if (st == RK1828_HIF_ST_OK && ws.failed) {
		/* The range was unmapped while the data streamed in. */
		card_log(q->card, "copy: WRITE seq %u: mapping vanished during the transfer",
			 le32toh(cmd->seq));
		st = RK1828_HIF_ST_ACCESS;
	}
	complete(q, cmd, st, NULL, 0);
}

static void run_read(struct emu_queue *q, const struct rk1828_hif_msg *cmd)
{
	struct emu_card *card = q->card;
	uint32_t id = le32toh(cmd->ctx);
	uint64_t addr = le64toh(cmd->arg[0]);
	uint64_t len = le64toh(cmd->arg[1]);
	uint64_t done = 0;
	struct out_chunk *c;
	uint32_t st;

	if (len > UINT32_MAX)
		st = RK1828_HIF_ST_INVAL;
	else
		st = check_range(card, id, addr, len);
	if (st != RK1828_HIF_ST_OK) {
		complete(q, cmd, st, NULL, 0);
		return;
	}
	c = out_alloc(q, HDR_SIZE);
	if (!c || (fill_header(c->data, cmd, st, (uint32_t)len),
		   !out_append(q, c))) {
		count_completion(q, st, false);
		return;
	}
	while (done < len) {
		size_t n = len - done > EMU_READ_PIECE ? EMU_READ_PIECE :
			   (size_t)(len - done);
		struct emu_ctx *x;

		if (!out_wait_room(q))
			goto aborted;
		c = out_alloc(q, n);
		if (!c)
			goto aborted;
		x = ctx_get(card, id, false);
		if (x && ctx_check(x, addr + done, n) == 0) {
			memcpy(c->data, card->mem + addr + done, n);
		} else {
			/* Header already sent: the host unmapped mid-READ. */
			memset(c->data, 0, n);
			card_log(card, "copy: READ seq %u: mapping vanished during the transfer",
				 le32toh(cmd->seq));
		}
		ctx_put(x);
		if (!out_append(q, c))
			goto aborted;
		done += n;
	}
	count_completion(q, st, true);
	if (card->cfg.verbose)
		card_log(card, "%s: READ seq %u ctx %u -> status 0, %" PRIu64 " bytes",
			 queue_names[q->idx], le32toh(cmd->seq), id, len);
	return;
aborted:
	count_completion(q, st, false);
}

static uint32_t run_copy(struct emu_card *card,
			 const struct rk1828_hif_msg *cmd)
{
	struct emu_ctx *c = ctx_get(card, le32toh(cmd->ctx), false);
	uint64_t src = le64toh(cmd->arg[0]);
	uint64_t dst = le64toh(cmd->arg[1]);
	uint64_t len = le64toh(cmd->arg[2]);
	uint32_t st = RK1828_HIF_ST_OK;

	if (!c)
		return RK1828_HIF_ST_NOCTX;
	if (ctx_check(c, src, len) || ctx_check(c, dst, len))
		st = RK1828_HIF_ST_ACCESS;
	else
		memmove(card->mem + dst, card->mem + src, len);
	ctx_put(c);
	return st;
}

/* Returns a status, or -1 when aborted by a reset. */
static int run_exec(struct emu_card *card, const struct rk1828_hif_msg *cmd)
{
	struct emu_ctx *c = ctx_get(card, le32toh(cmd->ctx), false);
	uint64_t addr = le64toh(cmd->arg[0]);
	uint64_t len = le64toh(cmd->arg[1]);
	struct emu_access acc = {
		.base = card->mem,
		.mem_size = card->cfg.mem_size,
		.check = access_check_cb,
		.priv = c,
		.abort = &card->abort,
	};
	int st;

	if (!c)
		return RK1828_HIF_ST_NOCTX;
	if (ctx_check(c, addr, len))
		st = RK1828_HIF_ST_ACCESS;
	else
		st = emu_exec(&acc, addr, len);
	ctx_put(c);
	return st;
}

static void run_info(struct emu_queue *q, const struct rk1828_hif_msg *cmd)
{
	struct emu_card *card = q->card;
	struct rk1828_hif_info info;

	memset(&info, 0, sizeof(info));
	info.version = htole32(RK1828_HIF_VERSION);
	info.num_queues = htole32(RK1828_HIF_NUM_QUEUES);
	info.mem_size = htole64(card->cfg.mem_size);
	info.serial = htole64(card->cfg.serial);
	info.max_ctx = htole32(EMU_MAX_CTX);
	info.threads = htole32((uint32_t)card->cfg.threads);
	snprintf(info.fw, sizeof(info.fw), "rk1828-emu 1.0");
	complete(q, cmd, RK1828_HIF_ST_OK, &info, sizeof(info));
}

/* Run one command whose header has been taken from the stream. */
static void run_command(struct emu_queue *q, const struct rk1828_hif_msg *cmd)
{
	struct emu_card *card = q->card;
	unsigned int op = le16toh(cmd->opcode);
	uint32_t data_len = le32toh(cmd->data_len);
	uint32_t id = le32toh(cmd->ctx);
	int st;

	if (card->cfg.verbose)
		card_log(card, "%s: %s seq %u ctx %u args %#" PRIx64 " %#" PRIx64
			 " %#" PRIx64 " data %u", queue_names[q->idx],
			 op_name(op), le32toh(cmd->seq), id,
			 (uint64_t)le64toh(cmd->arg[0]),
			 (uint64_t)le64toh(cmd->arg[1]),
			 (uint64_t)le64toh(cmd->arg[2]), data_len);

	if (op == RK1828_HIF_OP_WRITE && cmd->flags == 0) {
		run_write(q, cmd);
		return;
	}
	/* Only WRITE carries data: consume it to stay in sync, then fail. */
	if (data_len || cmd->flags) {
		if (in_consume(q, data_len, NULL, NULL)) {
			count_completion(q, 0, false);
			return;
		}
		complete(q, cmd, RK1828_HIF_ST_INVAL, NULL, 0);
		return;
	}

	switch (op) {
	case RK1828_HIF_OP_INFO:
		run_info(q, cmd);
		return;
	case RK1828_HIF_OP_READ:
		run_read(q, cmd);
		return;
	case RK1828_HIF_OP_CTX_CREATE:
		st = op_ctx_create(card, id);
		break;
	case RK1828_HIF_OP_CTX_DESTROY:
		st = op_ctx_destroy(card, id);
		break;
	case RK1828_HIF_OP_MAP:
		st = op_map(card, id, le64toh(cmd->arg[0]), le64toh(cmd->arg[1]));
		break;
	case RK1828_HIF_OP_UNMAP:
		st = op_unmap(card, id, le64toh(cmd->arg[0]));
		break;
	case RK1828_HIF_OP_COPY:
		st = run_copy(card, cmd);
		break;
	case RK1828_HIF_OP_EXEC:
		st = run_exec(card, cmd);
		if (st < 0) {
			bool resetting;

			pthread_mutex_lock(&q->lock);
			resetting = q->reset_pending || q->stop;
			pthread_mutex_unlock(&q->lock);
			if (resetting) {
				card_log(card, "%s: EXEC seq %u aborted by reset",
					 queue_names[q->idx], le32toh(cmd->seq));
				count_completion(q, 0, false);
				return;
			}
			st = RK1828_HIF_ST_INVAL;
		}
		break;
	default:
		st = RK1828_HIF_ST_BADOP;
		break;
	}
	complete(q, cmd, (uint32_t)st, NULL, 0);
}

static void *queue_worker(void *arg)
{
	struct emu_queue *q = arg;
	struct rk1828_hif_msg cmd;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->stop && (q->reset_pending || q->desync ||
				    q->in_bytes < HDR_SIZE)) {
			q->starved = true;
			pthread_cond_broadcast(&q->idle_cv);
			pthread_cond_wait(&q->cv, &q->lock);
		}
		q->starved = false;
		if (q->stop)
			break;
		in_take_locked(q, &cmd, HDR_SIZE);
		if (le32toh(cmd.magic) != RK1828_HIF_MAGIC) {
			card_log(q->card, "%s: bad magic %#x: stream out of sync, dropping input until RESET_QUEUES",
				 queue_names[q->idx], le32toh(cmd.magic));
			q->desync = true;
			q->stats.desyncs++;
			in_drop_locked(q);
			continue;
		}
		q->busy = true;
		pthread_mutex_unlock(&q->lock);
		run_command(q, &cmd);
		pthread_mutex_lock(&q->lock);
		q->busy = false;
		pthread_cond_broadcast(&q->idle_cv);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* ---- I/O thread API ------------------------------------------------------ */

static int feed_chunk(struct emu_card *card, unsigned int q_idx,
		      struct in_chunk *c)
{
	struct emu_queue *q = &card->q[q_idx];

	pthread_mutex_lock(&q->lock);
	if (q->desync) {
		pthread_mutex_unlock(&q->lock);
		in_chunk_free(c);
		return 0;
	}
	if (q->in_tail)
		q->in_tail->next = c;
	else
		q->in_head = c;
	q->in_tail = c;
	q->in_bytes += c->len;
	q->stats.bytes_in += c->len;
	q->starved = false;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

static void free_release(void *opaque, uint8_t *data)
{
	(void)opaque;
	free(data);
}

int emu_card_feed(struct emu_card *card, unsigned int q, const void *data,
		  size_t len)
{
	uint8_t *copy;

	if (q >= RK1828_HIF_NUM_QUEUES)
		return -EINVAL;
	if (len == 0)
		return 0;
	copy = malloc(len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, len);
	return emu_card_feed_owned(card, q, copy, len, free_release, NULL);
}

int emu_card_feed_owned(struct emu_card *card, unsigned int q, uint8_t *data,
			size_t len, emu_release_fn release, void *opaque)
{
	struct in_chunk *c;

	if (q >= RK1828_HIF_NUM_QUEUES || len == 0) {
		if (release)
			release(opaque, data);
		return q >= RK1828_HIF_NUM_QUEUES ? -EINVAL : 0;
	}
	c = malloc(sizeof(*c));
	if (!c) {
		if (release)
			release(opaque, data);
		return -ENOMEM;
	}
	c->next = NULL;
	c->data = data;
	c->len = len;
	c->off = 0;
	c->release = release;
	c->opaque = opaque;
	return feed_chunk(card, q, c);
}

bool emu_card_in_throttled(struct emu_card *card, unsigned int q_idx)
{
	struct emu_queue *q;
	bool full;

	if (q_idx >= RK1828_HIF_NUM_QUEUES)
		return false;
	q = &card->q[q_idx];
	pthread_mutex_lock(&q->lock);
	full = q->in_bytes > EMU_IN_HIGH_WATER;
	if (full)
		q->drain_notify = true;
	pthread_mutex_unlock(&q->lock);
	return full;
}

size_t emu_card_out_avail(struct emu_card *card, unsigned int q_idx)
{
	struct emu_queue *q;
	size_t n;

	if (q_idx >= RK1828_HIF_NUM_QUEUES)
		return 0;
	q = &card->q[q_idx];
	pthread_mutex_lock(&q->lock);
	n = q->out_bytes;
	pthread_mutex_unlock(&q->lock);
	return n;
}

size_t emu_card_read(struct emu_card *card, unsigned int q_idx, void *buf,
		     size_t max)
{
	struct emu_queue *q;
	uint8_t *d = buf;
	size_t done = 0;

	if (q_idx >= RK1828_HIF_NUM_QUEUES)
		return 0;
	q = &card->q[q_idx];
	pthread_mutex_lock(&q->lock);
	while (done < max && q->out_head) {
		struct out_chunk *c = q->out_head;
		size_t take = c->len - c->off;

		if (take > max - done)
			take = max - done;
		memcpy(d + done, c->data + c->off, take);
		c->off += take;
		done += take;
		if (c->off == c->len) {
			q->out_head = c->next;
			if (!q->out_head)
				q->out_tail = NULL;
			free(c);
		}
	}
	q->out_bytes -= done;
	q->stats.bytes_out += done;
	if (done)
		pthread_cond_broadcast(&q->cv);	/* room for a streaming READ */
	pthread_mutex_unlock(&q->lock);
	return done;
}

static void deadline_after(struct timespec *ts, int timeout_ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += timeout_ms / 1000;
	ts->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int emu_card_wait_output(struct emu_card *card, unsigned int q_idx,
			 size_t min, int timeout_ms)
{
	struct emu_queue *q;
	struct timespec ts;
	int ret = 0;

	if (q_idx >= RK1828_HIF_NUM_QUEUES)
		return -EINVAL;
	q = &card->q[q_idx];
	deadline_after(&ts, timeout_ms);
	pthread_mutex_lock(&q->lock);
	while (q->out_bytes < min && ret == 0)
		ret = pthread_cond_timedwait(&q->out_cv, &q->lock, &ts);
	if (q->out_bytes >= min)
		ret = 0;
	pthread_mutex_unlock(&q->lock);
	return ret ? -ETIMEDOUT : 0;
}

int emu_card_wait_idle(struct emu_card *card, int timeout_ms)
{
	struct timespec ts;
	unsigned int i;

	deadline_after(&ts, timeout_ms);
	for (i = 0; i < RK1828_HIF_NUM_QUEUES; i++) {
		struct emu_queue *q = &card->q[i];
		int ret = 0;

		pthread_mutex_lock(&q->lock);
		while (!q->starved && ret == 0)
			ret = pthread_cond_timedwait(&q->idle_cv, &q->lock, &ts);
		ret = q->starved ? 0 : ret;
		pthread_mutex_unlock(&q->lock);
		if (ret)
			return -ETIMEDOUT;
	}
	return 0;
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
		in_drop_locked(q);
		out_drop_locked(q);
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
			ctx_free(card->ctx[id]);
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

/* ---- lifetime ------------------------------------------------------------ */

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
	err = pthread_create(&q->thread, NULL, queue_worker, q);
	if (err)
		return err;
	q->thread_started = true;
	return 0;
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
	card->mem = mmap(NULL, cfg->mem_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (card->mem == MAP_FAILED) {
		err = errno;
		card->mem = NULL;
		goto fail;
	}
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
		in_drop_locked(q);
		out_drop_locked(q);
		pthread_cond_destroy(&q->cv);
		pthread_cond_destroy(&q->idle_cv);
		pthread_cond_destroy(&q->out_cv);
		pthread_mutex_destroy(&q->lock);
	}
	for (i = 1; i <= EMU_MAX_CTX; i++)
		if (card->ctx[i])
			ctx_free(card->ctx[i]);
	if (card->q[0].card)
		pthread_rwlock_destroy(&card->ctx_lock);
	if (card->notify_fd >= 0)
		close(card->notify_fd);
	if (card->mem)
		munmap(card->mem, card->cfg.mem_size);
	free(card);
}
