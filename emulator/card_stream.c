// SPDX-License-Identifier: MIT
/*
 * Card emulator: the byte streams of each queue. The I/O thread feeds
 * command bytes in (emu_card_feed*, with the input high-water mark) and
 * reads completion bytes out (emu_card_read, emu_card_wait_output); the
 * queue worker takes command bytes and appends completions. Locking:
 * card.c.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "card_int.h"

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

/* Input was consumed: fire the armed drain wake-up. Holds q->lock. */
static void in_drained_locked(struct emu_queue *q)
{
	if (q->drain_notify && q->in_bytes <= EMU_IN_HIGH_WATER / 2) {
		q->drain_notify = false;
		notify(q->card);
	}
}

/* Unlink and free the first input chunk (the byte count is the caller's). */
static void in_pop_locked(struct emu_queue *q)
{
	struct in_chunk *c = q->in_head;

	q->in_head = c->next;
	if (!q->in_head)
		q->in_tail = NULL;
	in_chunk_free(c);
}

static void out_pop_locked(struct emu_queue *q)
{
	struct out_chunk *c = q->out_head;

	q->out_head = c->next;
	if (!q->out_head)
		q->out_tail = NULL;
	free(c);
}

/*
 * @take bytes (at most the rest of it) of the first input chunk were
 * consumed; the chunk goes once it is used up. Holds q->lock.
 */
static void in_advance_locked(struct emu_queue *q, size_t take)
{
	struct in_chunk *c = q->in_head;

	c->off += take;
	q->in_bytes -= take;
	if (c->off == c->len)
		in_pop_locked(q);
}

/* Drop all input. Caller holds q->lock; the worker is idle. */
void card_in_drop_locked(struct emu_queue *q)
{
	while (q->in_head)
		in_pop_locked(q);
	q->in_bytes = 0;
	in_drained_locked(q);
}

void card_out_drop_locked(struct emu_queue *q)
{
	while (q->out_head)
		out_pop_locked(q);
	q->out_bytes = 0;
}

/* Worker only: copy @n <= in_bytes bytes from the stream. Holds q->lock. */
void card_in_take_locked(struct emu_queue *q, void *dst, size_t n)
{
	uint8_t *d = dst;

	while (n) {
		struct in_chunk *c = q->in_head;
		size_t take = c->len - c->off;

		if (take > n)
			take = n;
		memcpy(d, c->data + c->off, take);
		in_advance_locked(q, take);
		d += take;
		n -= take;
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

/*
 * Worker only: pass the next @n stream bytes to @sink (NULL: discard) as
 * they arrive, without holding the queue lock during @sink.
 * Returns 0, or -1 when a reset or stop interrupted the command.
 */
int card_in_consume(struct emu_queue *q, uint64_t n, card_sink_fn sink, void *arg)
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
		in_advance_locked(q, take);
		done += take;
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
struct out_chunk *card_out_alloc(struct emu_queue *q, size_t len)
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
			 card_queue_names[q->idx], len);
		usleep(10000);
	}
}

/*
 * Worker only: append @c to the completion stream; frees it instead when
 * a reset or stop is in progress. Returns false in that case.
 */
bool card_out_append(struct emu_queue *q, struct out_chunk *c)
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
bool card_out_wait_room(struct emu_queue *q)
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

void card_fill_header(uint8_t *dst, const struct rk1828_hif_msg *cmd,
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

void card_count_completion(struct emu_queue *q, uint32_t status, bool sent)
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
void card_complete(struct emu_queue *q, const struct rk1828_hif_msg *cmd,
		   uint32_t status, const void *data, uint32_t len)
{
	struct out_chunk *c = card_out_alloc(q, HDR_SIZE + len);
	bool sent = false;

	if (c) {
		card_fill_header(c->data, cmd, status, len);
		if (len)
			memcpy(c->data + HDR_SIZE, data, len);
		sent = card_out_append(q, c);
	}
	card_count_completion(q, status, sent);
	if (q->card->cfg.verbose)
		card_log(q->card, "%s: %s seq %u ctx %u -> status %u%s",
			 card_queue_names[q->idx], card_op_name(le16toh(cmd->opcode)),
			 le32toh(cmd->seq), le32toh(cmd->ctx), status,
			 sent ? "" : " (dropped by reset)");
}

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
		if (c->off == c->len)
			out_pop_locked(q);
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
