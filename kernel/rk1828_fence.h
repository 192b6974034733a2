/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Hardware fences: the completion of one job on the card, the parent of
 * its drm_sched finished fence, valid for the fence's whole life.
 */
#ifndef __RK1828_FENCE_H__
#define __RK1828_FENCE_H__

#include <linux/dma-fence.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

struct rk1828_device;
struct rk1828_sched;

/**
 * struct rk1828_hw_fence - completion of a job on the card
 * @base: the fence; signalled by the job's worker, with the job's error
 *	(first member: dma_fence_free() frees the allocation)
 * @lock: fence lock (the fence may outlive the job), on kernels whose
 *	dma_fence has no lock of its own (!RK1828_HAVE_FENCE_INLINE_LOCK)
 * @name: timeline name (queue name, static)
 * @rdev: the card; the fence holds a reference on its drm_device and on
 *	the module from dma_fence_init() to its release
 * @release_work: drops those references on rk1828_release_wq, because the
 *	last fence reference may go in atomic context
 *
 * drm_sched's scheduled and finished fences of a job keep the hardware
 * fence (their parent) until they are freed themselves, and they read
 * the timeline name from the scheduler inside the drm_device. So the
 * device references of the hardware fence keep every fence a job handed
 * out (syncobj, sync_file, dma_resv, also in other drivers) valid for
 * its whole life: after unplug, after close and, because the module
 * cannot be unloaded while one exists, after rmmod was tried.
 */
struct rk1828_hw_fence {
	struct dma_fence base;
#ifndef RK1828_HAVE_FENCE_INLINE_LOCK
	spinlock_t lock; /* dma_fence lock of @base */
#endif
	const char *name;
	struct rk1828_device *rdev;
	struct work_struct release_work;
};

void rk1828_hw_fence_init(struct rk1828_hw_fence *hw,
			  struct rk1828_device *rdev,
			  struct rk1828_sched *sched);

#endif /* __RK1828_FENCE_H__ */
