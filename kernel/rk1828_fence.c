// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Hardware fences of jobs (struct rk1828_hw_fence): initialised when a
 * job passes run_job, signalled by its worker, released on the release
 * workqueue with the device and module references they hold.
 */

#include <linux/dma-fence.h>
#include <linux/module.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <drm/drm_drv.h>

#include "rk1828_drv.h"
#include "rk1828_fence.h"
#include "rk1828_job_priv.h"

static const char *rk1828_fence_driver_name(struct dma_fence *fence)
{
	return RK1828_DRIVER_NAME;
}

static const char *rk1828_fence_timeline_name(struct dma_fence *fence)
{
	return container_of(fence, struct rk1828_hw_fence, base)->name;
}

static void rk1828_hw_fence_release_work(struct work_struct *work)
{
	struct rk1828_hw_fence *hw = container_of(work, struct rk1828_hw_fence,
						  release_work);
	struct rk1828_device *rdev = hw->rdev;

	dma_fence_free(&hw->base);
	drm_dev_put(&rdev->drm);
	/* Last: module exit drains rk1828_release_wq before the text goes. */
	module_put(THIS_MODULE);
}

static void rk1828_hw_fence_release(struct dma_fence *fence)
{
	struct rk1828_hw_fence *hw = container_of(fence, struct rk1828_hw_fence,
						  base);

	rk1828_queue_release_work(&hw->release_work);
}

/*
 * With .release the fence stays attached to these ops after it signalled
 * (kernels that detach a signalled fence from its ops, setting
 * &dma_fence.ops to NULL, do so only for fences with neither .release nor
 * .wait), so the ops, the timeline name and the release work must outlive
 * it: the fence holds the module and the drm_device until its release.
 * dma_fence_free() frees it after an RCU grace period, as those kernels
 * require of a fence with .release.
 */
static const struct dma_fence_ops rk1828_hw_fence_ops = {
	.get_driver_name = rk1828_fence_driver_name,
	.get_timeline_name = rk1828_fence_timeline_name,
	.release = rk1828_hw_fence_release,
};

/**
 * rk1828_hw_fence_init() - initialise a job's hardware fence
 * @hw: the fence's memory, allocated at submit
 * @rdev: the card; referenced by the fence until its release
 * @sched: the queue whose fence context and seqno the fence takes
 *
 * From here on the fence holds a reference on @rdev's drm_device and on
 * the module, dropped by its release on the release workqueue.
 */
void rk1828_hw_fence_init(struct rk1828_hw_fence *hw,
			  struct rk1828_device *rdev,
			  struct rk1828_sched *sched)
{
	spinlock_t *lock; /* of the fence: NULL for its own (inline) lock */

#ifdef RK1828_HAVE_FENCE_INLINE_LOCK
	lock = NULL;
#else
	spin_lock_init(&hw->lock);
	lock = &hw->lock;
#endif
	hw->name = sched->name;
	hw->rdev = rdev;
	INIT_WORK(&hw->release_work, rk1828_hw_fence_release_work);
	drm_dev_get(&hw->rdev->drm);
	__module_get(THIS_MODULE);
	dma_fence_init(&hw->base, &rk1828_hw_fence_ops, lock,
		       sched->fence_context,
		       atomic64_inc_return(&sched->fence_seqno));
}
