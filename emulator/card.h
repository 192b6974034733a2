/* SPDX-License-Identifier: MIT */
/*
 * Card emulator: the card model (memory, contexts, mappings, the three
 * command queues and their worker threads), independent of the transport.
 *
 * The transport (emulator/usbredir.c, or a unit test) is the "I/O thread":
 * it appends the bytes of each queue's OUT stream with emu_card_feed(),
 * takes completion bytes with emu_card_read(), and calls
 * emu_card_reset_queues() / emu_card_reset_all() for the control requests.
 * Every one of those calls must come from that one thread. The per-queue
 * worker threads parse and execute the commands (wire format:
 * kernel/rk1828_hif.h, normative text: Documentation/accel/rk1828/
 * protocol.rst) and signal new completion bytes through
 * emu_card_notify_fd().
 */
#ifndef RK_EMU_CARD_H
#define RK_EMU_CARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost.h"

#include "rk1828_hif.h"

/* Highest context id the card accepts; ids are 1..EMU_MAX_CTX. */
#define EMU_MAX_CTX		255
/* Most mappings one context may hold (MAP beyond this fails with NOMEM). */
#define EMU_MAX_MAPS		65536
/* Output backlog (bytes) above which a READ waits for the host to drain. */
#define EMU_OUT_HIGH_WATER	(8u << 20)
/*
 * Unconsumed input (bytes) above which the transport should stop
 * acknowledging OUT transfers of that queue (see emu_card_in_throttled()).
 */
#define EMU_IN_HIGH_WATER	(16u << 20)
/* Size of one READ data piece appended to the completion stream. */
#define EMU_READ_PIECE		(1u << 20)

/**
 * struct emu_card_config - parameters of one emulated card
 * @mem_size: card memory in bytes (addresses [0, mem_size)); the memory is
 *	an anonymous MAP_NORESERVE mapping, so untouched pages cost nothing
 * @serial: serial number reported by INFO and the USB serial string
 * @index: card index (log messages only)
 * @threads: compute threads reported by INFO (0: number of online CPUs);
 *	the caller passes the same value to emu_exec_set_threads()
 * @verbose: log every command on stderr when non-zero
 * @timing: timing mode (timing.h): every job completes at its modelled
 *	time on this profile (copied at creation); NULL: as fast as the host
 * @timing_only: with @timing, EXEC skips the math (filler outputs)
 * @link: with @timing, the host link whose bandwidth and latency shape
 *	WRITE and READ
 * @temp_limit_mc: temperature at which the card flags itself throttled
 *	(STATS), millidegrees Celsius; 0: 95000
 * @p2p_window: bytes at the top of card memory to expose as the PCIe peer
 *	window (a power of two, at most half of @mem_size), backed by a
 *	memfd the PCIe front end shares with QEMU; 0: none
 */
struct emu_card_config {
	uint64_t mem_size;
	uint64_t serial;
	unsigned int index;
	int threads;
	int verbose;
	const struct card_profile *timing;
	bool timing_only;
	enum cost_link link;
	int32_t temp_limit_mc;
	uint64_t p2p_window;
};

/**
 * struct emu_card_stats - counters of one queue, for logs and tests
 * @commands: commands completed (a completion was queued)
 * @errors: completions with a status other than %RK1828_HIF_ST_OK
 * @aborted: commands abandoned by a reset (no completion)
 * @desyncs: times the stream lost synchronisation (bad magic)
 * @bytes_in: OUT stream bytes accepted
 * @bytes_out: completion bytes handed to the transport
 */
struct emu_card_stats {
	uint64_t commands;
	uint64_t errors;
	uint64_t aborted;
	uint64_t desyncs;
	uint64_t bytes_in;
	uint64_t bytes_out;
};

struct emu_card;

/**
 * typedef emu_release_fn - releases a buffer handed to emu_card_feed_owned()
 * @opaque: the value given with the buffer
 * @data: the buffer
 *
 * Called exactly once per buffer, from any thread (usually a worker),
 * as soon as the card no longer needs the bytes.
 */
typedef void (*emu_release_fn)(void *opaque, uint8_t *data);

/**
 * emu_card_get_hif_stats() - the STATS reply (rk1828_hif.h, protocol 1.1)
 * @card: the card
 * @r: output, little-endian as on the wire: uptime; busy time and
 *	commands per queue, power and energy as measured and modelled by
 *	the thermal model (card_stats.c), in timing mode the modelled busy
 *	time, jobs, late jobs, average power and energy instead; always the
 *	thermal model's temperature, limit and throttle flag
 *	(%RK1828_HIF_STATS_THERMAL)
 *
 * Callable from any thread.
 *
 * Return: 0.
 */
int emu_card_get_hif_stats(struct emu_card *card, struct rk1828_hif_stats *r);

/**
 * emu_card_create() - allocate card memory and start the queue workers
 * @cfg: card parameters (copied)
 *
 * Return: the card, or NULL with errno set (EINVAL for a zero or
 * unaddressable @cfg->mem_size, ENOMEM, or a pthread error).
 */
struct emu_card *emu_card_create(const struct emu_card_config *cfg);

/**
 * emu_card_destroy() - stop the workers and free everything
 * @card: card from emu_card_create(), or NULL
 *
 * A running EXEC is aborted through emu_access.abort first.
 */
void emu_card_destroy(struct emu_card *card);

/**
 * emu_card_notify_fd() - eventfd that becomes readable when any queue has
 *	new completion bytes
 * @card: the card
 *
 * The I/O thread reads (and so clears) it, then calls emu_card_read() for
 * each queue with pending IN requests.
 *
 * Return: the file descriptor, owned by the card.
 */
int emu_card_notify_fd(const struct emu_card *card);

/**
 * emu_card_feed() - append bytes to a queue's command stream (copied)
 * @card: the card
 * @q: &enum rk1828_hif_queue
 * @data: bytes of the OUT stream, split anywhere
 * @len: byte count (0 is a no-op)
 *
 * Return: 0, -EINVAL for a bad @q, -ENOMEM (nothing appended).
 */
int emu_card_feed(struct emu_card *card, unsigned int q, const void *data,
		  size_t len);

/**
 * emu_card_feed_owned() - append a buffer to a queue's command stream
 *	without copying it
 * @card: the card
 * @q: &enum rk1828_hif_queue
 * @data: bytes of the OUT stream; ownership passes to the card
 * @len: byte count
 * @release: called once when the card is done with @data (also on error)
 * @opaque: first argument of @release
 *
 * WRITE payloads are copied straight from @data into card memory.
 *
 * Return: 0, -EINVAL for a bad @q, -ENOMEM.
 */
int emu_card_feed_owned(struct emu_card *card, unsigned int q, uint8_t *data,
			size_t len, emu_release_fn release, void *opaque);

/**
 * emu_card_in_throttled() - whether queue @q holds too much unconsumed input
 * @card: the card
 * @q: &enum rk1828_hif_queue
 *
 * When it returns true, the card also arms a one-shot wake-up: the
 * notify fd fires once the backlog has dropped to half of
 * %EMU_IN_HIGH_WATER (or was dropped by a reset or a desync), so the
 * transport can acknowledge the OUT transfers it held back, the way a
 * real device NAKs OUT packets while its buffers are full.
 *
 * Return: true when more than %EMU_IN_HIGH_WATER bytes wait; false for a
 * bad @q.
 */
bool emu_card_in_throttled(struct emu_card *card, unsigned int q);

/**
 * emu_card_out_avail() - completion bytes of queue @q ready to be read
 * @card: the card
 * @q: &enum rk1828_hif_queue (0 for a bad one)
 *
 * Return: byte count.
 */
size_t emu_card_out_avail(struct emu_card *card, unsigned int q);

/**
 * emu_card_read() - take up to @max completion bytes of queue @q
 * @card: the card
 * @q: &enum rk1828_hif_queue
 * @buf: destination
 * @max: most bytes to take (an IN transfer never gets more than it asked)
 *
 * Does not block. Completions are byte streams like commands: a read may
 * end inside a completion, the next read continues there.
 *
 * Return: bytes copied (0 when none are ready or @q is bad).
 */
size_t emu_card_read(struct emu_card *card, unsigned int q, void *buf,
		     size_t max);

/**
 * emu_card_wait_output() - wait until queue @q has at least @min bytes of
 *	completions ready (for tests and tools)
 * @card: the card
 * @q: &enum rk1828_hif_queue
 * @min: bytes wanted
 * @timeout_ms: give up after this many milliseconds
 *
 * Return: 0, or -ETIMEDOUT, or -EINVAL for a bad @q.
 */
int emu_card_wait_output(struct emu_card *card, unsigned int q, size_t min,
			 int timeout_ms);

/**
 * emu_card_wait_idle() - wait until every queue has consumed all the input
 *	it can (no command in progress and fewer than a header's worth of
 *	bytes, or a desynchronised stream), for tests
 * @card: the card
 * @timeout_ms: give up after this many milliseconds
 *
 * Return: 0 or -ETIMEDOUT.
 */
int emu_card_wait_idle(struct emu_card *card, int timeout_ms);

/**
 * emu_card_reset_queues() - %RK1828_HIF_REQ_RESET_QUEUES
 * @card: the card
 *
 * Aborts the running command of every queue (EXEC through
 * emu_access.abort, stream waits directly) without a completion, waits
 * until all workers are idle, drops all queued input and all completion
 * bytes not yet read, clears the desynchronised state. Card memory,
 * contexts and mappings are kept.
 */
void emu_card_reset_queues(struct emu_card *card);

/**
 * emu_card_reset_all() - full card reset (USB SET_CONFIGURATION or port
 *	reset): emu_card_reset_queues() plus destroying every context and
 *	mapping. Card memory contents are kept but unreachable until mapped.
 * @card: the card
 */
void emu_card_reset_all(struct emu_card *card);

/**
 * emu_card_get_stats() - copy the counters of queue @q
 * @card: the card
 * @q: &enum rk1828_hif_queue
 * @st: filled in (zeroed for a bad @q)
 */
void emu_card_get_stats(struct emu_card *card, unsigned int q,
			struct emu_card_stats *st);

/**
 * emu_card_mem() - host pointer of card address 0 (for tests and tools)
 * @card: the card
 *
 * Return: base of the card memory mapping.
 */
uint8_t *emu_card_mem(const struct emu_card *card);

/**
 * emu_card_mem_size() - card memory size in bytes
 * @card: the card
 *
 * Return: the size.
 */
uint64_t emu_card_mem_size(const struct emu_card *card);

/**
 * emu_card_p2p_window() - the card's peer window
 * @card: the card
 * @base: set to the card address of the window's first byte
 * @size: set to its size in bytes (0: no window)
 *
 * Return: the memfd behind the window (owned by the card), or -1.
 */
int emu_card_p2p_window(const struct emu_card *card, uint64_t *base,
			uint64_t *size);

/**
 * emu_card_serial() - the card's serial number
 * @card: the card
 *
 * Return: the serial.
 */
uint64_t emu_card_serial(const struct emu_card *card);

/**
 * emu_card_threads() - compute threads reported by INFO
 * @card: the card
 *
 * Return: thread count (>= 1).
 */
int emu_card_threads(const struct emu_card *card);

#endif
