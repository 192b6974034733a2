/* SPDX-License-Identifier: MIT */
/*
 * A small persistent pthread pool for the emulator's compute kernels.
 *
 * One pool runs one parallel_for at a time: callers from several threads
 * are serialized by an internal lock, so a process serving several cards
 * can share one pool. The calling thread takes part as worker 0; workers
 * sleep on a condition variable between jobs (no busy waiting: the
 * emulator shares its CPUs with the guest).
 */
#ifndef RK_EMU_THREADPOOL_H
#define RK_EMU_THREADPOOL_H

#include <stddef.h>

struct tpool;

/**
 * typedef tp_fn - body of a parallel_for
 * @arg: the caller's argument
 * @begin: first index of this worker's range
 * @end: one past the last index (begin < end)
 * @tid: worker index in [0, tp_threads()), stable for the call; use it to
 *	pick per-thread scratch (tp_scratch())
 */
typedef void (*tp_fn)(void *arg, size_t begin, size_t end, int tid);

/**
 * tp_create() - start a pool of @n_threads workers (the caller counts as
 * one, so @n_threads - 1 threads are created)
 * @n_threads: >= 1; 0 means one per online CPU
 *
 * Return: the pool, or NULL when memory or threads cannot be had.
 */
struct tpool *tp_create(int n_threads);

/**
 * tp_destroy() - stop and join the workers, free the pool and its scratch
 * @p: pool or NULL; no parallel_for may be running
 */
void tp_destroy(struct tpool *p);

/** tp_threads() - number of workers of @p (including the caller) */
int tp_threads(const struct tpool *p);

/**
 * tp_parallel_for() - run @fn over [0, @n) split into contiguous ranges
 * @p: pool; NULL runs everything on the caller
 * @n: number of indices; 0 does nothing
 * @grain: ranges (except the last) are multiples of @grain (>= 1)
 * @fn: body, called at most once per worker with a non-empty range
 * @arg: passed to @fn
 *
 * Returns when every range is done. Must not be called from inside a body
 * of the same pool (it would wait for itself).
 */
void tp_parallel_for(struct tpool *p, size_t n, size_t grain, tp_fn fn, void *arg);

/**
 * tp_scratch() - per-worker scratch memory of at least @bytes bytes,
 * 64-byte aligned, kept between calls (grows when needed)
 * @p: pool
 * @tid: the worker index given to the body
 * @bytes: size needed
 * @slot: 0 or 1, two independent buffers per worker
 *
 * Only valid inside a parallel_for body of @p. Return: the buffer, or NULL
 * when out of memory or @p is NULL (callers without a pool malloc their
 * own).
 */
void *tp_scratch(struct tpool *p, int tid, size_t bytes, int slot);

#endif
