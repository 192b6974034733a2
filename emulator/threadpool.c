// SPDX-License-Identifier: MIT
/*
 * Persistent pthread pool: see threadpool.h.
 *
 * Protocol: the caller holds run_lock for a whole parallel_for, publishes
 * the job under mu, bumps gen and broadcasts wake; each worker runs its
 * static range and decrements pending; the last one signals done.
 */
#include "threadpool.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define TP_SLOTS 2
#define TP_MAX_THREADS 256

struct tp_scratch_buf {
	void *ptr;
	size_t size;
};

struct tpool {
	int n;
	pthread_t *threads;
	pthread_mutex_t run_lock;	/* one parallel_for at a time */
	pthread_mutex_t mu;
	pthread_cond_t wake;
	pthread_cond_t done;
	unsigned long gen;
	int pending;
	int stop;
	/* current job */
	tp_fn fn;
	void *arg;
	size_t n_items;
	size_t grain;
	struct tp_scratch_buf (*scratch)[TP_SLOTS];
};

struct tp_start {
	struct tpool *p;
	int tid;
};

/* Static split: worker tid gets the tid-th of nth near-equal grain-aligned ranges. */
static void tp_range(size_t n, size_t grain, int nth, int tid, size_t *b, size_t *e)
{
	size_t units = (n + grain - 1) / grain;
	size_t per = units / (size_t)nth, extra = units % (size_t)nth;
	size_t ub = (size_t)tid * per + ((size_t)tid < extra ? (size_t)tid : extra);
	size_t ue = ub + per + ((size_t)tid < extra ? 1 : 0);

	*b = ub * grain;
	*e = ue * grain;
	if (*b > n)
		*b = n;
	if (*e > n)
		*e = n;
}

static void tp_run_part(struct tpool *p, int tid)
{
	size_t b, e;

	tp_range(p->n_items, p->grain, p->n, tid, &b, &e);
	if (b < e)
		p->fn(p->arg, b, e, tid);
}

static void *tp_worker(void *v)
{
	struct tp_start *st = v;
	struct tpool *p = st->p;
	int tid = st->tid;
	unsigned long seen = 0;

	free(st);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && p->gen == seen)
			pthread_cond_wait(&p->wake, &p->mu);
		if (p->stop)
			break;
		seen = p->gen;
		pthread_mutex_unlock(&p->mu);
		tp_run_part(p, tid);
		pthread_mutex_lock(&p->mu);
		if (--p->pending == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct tpool *tp_create(int n_threads)
{
	struct tpool *p;
	int i;

	if (n_threads <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		n_threads = c > 0 ? (int)c : 1;
	}
	if (n_threads > TP_MAX_THREADS)
		n_threads = TP_MAX_THREADS;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->n = n_threads;
	p->threads = calloc((size_t)n_threads, sizeof(*p->threads));
	p->scratch = calloc((size_t)n_threads, sizeof(*p->scratch));
	if (!p->threads || !p->scratch) {
		free(p->threads);
		free(p->scratch);
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->run_lock, NULL);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->done, NULL);
	for (i = 1; i < n_threads; i++) {
		struct tp_start *st = malloc(sizeof(*st));

		if (st) {
			st->p = p;
			st->tid = i;
		}
		if (!st || pthread_create(&p->threads[i], NULL, tp_worker, st)) {
			free(st);
			p->n = i;	/* workers 1..i-1 exist */
			tp_destroy(p);
			return NULL;
		}
	}
	return p;
}

void tp_destroy(struct tpool *p)
{
	int i, j;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->mu);
	for (i = 1; i < p->n; i++)
		pthread_join(p->threads[i], NULL);
	for (i = 0; i < p->n; i++)
		for (j = 0; j < TP_SLOTS; j++)
			free(p->scratch[i][j].ptr);
	pthread_mutex_destroy(&p->run_lock);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->done);
	free(p->threads);
	free(p->scratch);
	free(p);
}

int tp_threads(const struct tpool *p)
{
	return p ? p->n : 1;
}

void tp_parallel_for(struct tpool *p, size_t n, size_t grain, tp_fn fn, void *arg)
{
	if (n == 0)
		return;
	if (grain == 0)
		grain = 1;
	if (!p) {
		fn(arg, 0, n, 0);
		return;
	}
	pthread_mutex_lock(&p->run_lock);
	if (p->n == 1 || n <= grain) {
		/* Still under run_lock: worker 0's scratch is shared. */
		fn(arg, 0, n, 0);
		pthread_mutex_unlock(&p->run_lock);
		return;
	}
	pthread_mutex_lock(&p->mu);
	p->fn = fn;
	p->arg = arg;
	p->n_items = n;
	p->grain = grain;
	p->pending = p->n - 1;
	p->gen++;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->mu);

	tp_run_part(p, 0);

	pthread_mutex_lock(&p->mu);
	while (p->pending)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
	pthread_mutex_unlock(&p->run_lock);
}

void *tp_scratch(struct tpool *p, int tid, size_t bytes, int slot)
{
	struct tp_scratch_buf *s;

	if (!p || slot < 0 || slot >= TP_SLOTS || tid < 0 || tid >= p->n)
		return NULL;
	s = &p->scratch[tid][slot];
	if (s->size < bytes) {
		void *n = NULL;
		size_t sz = (bytes + 63) & ~(size_t)63;

		if (posix_memalign(&n, 64, sz))
			return NULL;
		free(s->ptr);
		s->ptr = n;
		s->size = sz;
	}
	return s->ptr;
}
