// SPDX-License-Identifier: MIT
/*
 * Card emulator: contexts and their mappings, the access checks every
 * command's addresses go through, and the CTX_CREATE, CTX_DESTROY, MAP and
 * UNMAP commands. Locking: card.c.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "card_int.h"

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
int card_ctx_check(const struct emu_ctx *c, uint64_t addr, uint64_t len)
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
int card_access_check(void *priv, uint64_t addr, uint64_t len)
{
	return card_ctx_check(priv, addr, len);
}

/* Look up context @id and lock it (shared or exclusive); NULL if absent. */
struct emu_ctx *card_ctx_get(struct emu_card *card, uint32_t id, bool write)
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

void card_ctx_put(struct emu_ctx *c)
{
	if (c)
		pthread_rwlock_unlock(&c->lock);
}

void card_ctx_free(struct emu_ctx *c)
{
	/* Wait for the last user, then free. */
	pthread_rwlock_wrlock(&c->lock);
	pthread_rwlock_unlock(&c->lock);
	pthread_rwlock_destroy(&c->lock);
	free(c->maps);
	free(c);
}

uint32_t card_op_ctx_create(struct emu_card *card, uint32_t id)
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

uint32_t card_op_ctx_destroy(struct emu_card *card, uint32_t id)
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
	card_ctx_free(c);
	return RK1828_HIF_ST_OK;
}

/*
 * Drop whole pages [a, b): MADV_DONTNEED for the private anonymous
 * mapping, MADV_REMOVE for the shared peer window (DONTNEED would keep
 * the shared pages and their contents); memset where that fails.
 */
static void mem_drop(struct emu_card *card, uint64_t a, uint64_t b)
{
	uint64_t w0 = card->p2p_base, w1 = card->p2p_base + card->p2p_size;
	uint64_t c = a > w0 ? a : w0, d = b < w1 ? b : w1;

	if (!card->p2p_size || c >= d) {
		if (madvise(card->mem + a, b - a, MADV_DONTNEED))
			memset(card->mem + a, 0, b - a);
		return;
	}
	if (a < c)
		mem_drop(card, a, c);
	if (madvise(card->mem + c, d - c, MADV_REMOVE))
		memset(card->mem + c, 0, d - c);
	if (d < b)
		mem_drop(card, d, b);
}

/*
 * Zero card memory [start, start + len): whole pages are dropped (a
 * private anonymous mapping then reads zeros and the host gets the memory
 * back; see mem_drop()), the partial pages at the edges are cleared.
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
	mem_drop(card, a, b);
}

uint32_t card_op_map(struct emu_card *card, uint32_t id, uint64_t start,
		     uint64_t len)
{
	struct emu_ctx *c;
	uint32_t st = RK1828_HIF_ST_OK;
	long i;

	if (len == 0 || start >= card->cfg.mem_size ||
	    len > card->cfg.mem_size - start)
		return RK1828_HIF_ST_INVAL;
	c = card_ctx_get(card, id, true);
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
	card_ctx_put(c);
	return st;
}

uint32_t card_op_unmap(struct emu_card *card, uint32_t id, uint64_t start)
{
	struct emu_ctx *c = card_ctx_get(card, id, true);
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
	card_ctx_put(c);
	return st;
}
