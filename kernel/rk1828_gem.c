// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Buffer objects: host BOs are GEM shmem objects (mmap, PRIME export and
 * import, also of buffers exported by other devices); card BOs are ranges
 * of card memory handed out by a drm_mm and mapped into the creating
 * file's card context.
 */

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>
#include <drm/rk1828_accel.h>

#include "rk1828_drv.h"
#include "rk1828_hif_engine.h"
#include "rk1828_gem.h"
#include "rk1828_p2p.h"
#include "rk1828_peer.h"

/**
 * DOC: host BOs
 *
 * Host BOs are GEM shmem objects with &rk1828_host_bo_funcs. The driver's
 * &drm_driver.gem_create_object hook gives the same functions to shmem
 * objects created by PRIME import, so a BO imported from another card (or
 * any other exporter) is a host BO as well: jobs vmap it to stream its
 * bytes to or from the card.
 */
const struct drm_gem_object_funcs rk1828_host_bo_funcs = {
	.free = drm_gem_shmem_object_free,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

/**
 * rk1828_gem_create_object() - &drm_driver.gem_create_object hook
 * @drm: the device
 * @size: object size in bytes (unused)
 *
 * Return: a zeroed shmem object with the host BO functions, or
 * ERR_PTR(-ENOMEM).
 */
struct drm_gem_object *rk1828_gem_create_object(struct drm_device *drm,
						size_t size)
{
	struct drm_gem_shmem_object *shmem;

	shmem = kzalloc(sizeof(*shmem), GFP_KERNEL);
	if (!shmem)
		return ERR_PTR(-ENOMEM);
	shmem->base.funcs = &rk1828_host_bo_funcs;
	return &shmem->base;
}

/**
 * rk1828_gem_prime_import() - &drm_driver.gem_prime_import hook
 * @drm: the device
 * @dma_buf: buffer to import
 *
 * The card itself never touches host memory; the USB host controller
 * does, so the attachment is made for it (as drivers/gpu/drm/udl does).
 * A buffer exported by this device comes back as the same object. A
 * peer-window BO of another rk1828 card becomes a peer BO, attached for
 * P2P DMA (rk1828_peer.c); every other buffer keeps the host path.
 *
 * Return: the GEM object or an ERR_PTR(); -EOPNOTSUPP when the transport
 * has no DMA device or P2P between the cards is not possible.
 */
struct drm_gem_object *rk1828_gem_prime_import(struct drm_device *drm,
					       struct dma_buf *dma_buf)
{
	struct rk1828_device *rdev = to_rk1828_device(drm);

	if (rk1828_p2p_is_ours(dma_buf)) {
		struct drm_gem_object *obj = dma_buf->priv;

		if (obj->dev == drm) {
			drm_gem_object_get(obj);
			return obj;
		}
		return rk1828_peer_bo_import(rdev, dma_buf);
	}
	if (!rdev->dma_dev)
		return ERR_PTR(-EOPNOTSUPP);
	return drm_gem_prime_import_dev(drm, dma_buf, rdev->dma_dev);
}

static void rk1828_card_bo_free(struct drm_gem_object *obj)
{
	struct rk1828_card_bo *bo = to_rk1828_card_bo(obj);
	struct rk1828_device *rdev = to_rk1828_device(obj->dev);
	int ret;

	if (bo->mapped && !rk1828_is_gone(rdev)) {
		ret = rk1828_hif_mgmt_confirmed(rdev, RK1828_HIF_OP_UNMAP,
						bo->ctx->id, bo->node.start);
		if (ret && ret != -ENODEV) {
			/*
			 * A stale mapping may remain: never give the range to
			 * another BO, keep it until the device goes away.
			 */
			dev_warn_ratelimited(rdev->drm.dev,
					     "UNMAP %#llx ctx %u failed: %d, %llu bytes quarantined\n",
					     bo->node.start, bo->ctx->id, ret,
					     bo->node.size);
			rk1828_ctx_put(bo->ctx);
			drm_gem_object_release(obj);
			mutex_lock(&rdev->mm_lock);
			list_add_tail(&bo->quarantine, &rdev->mm_quarantine);
			mutex_unlock(&rdev->mm_lock);
			return;
		}
	}
	if (drm_mm_node_allocated(&bo->node)) {
		mutex_lock(&rdev->mm_lock);
		drm_mm_remove_node(&bo->node);
		rdev->mem_free += obj->size;
		mutex_unlock(&rdev->mm_lock);
	}
	rk1828_ctx_put(bo->ctx);
	drm_gem_object_release(obj);
	kfree(bo);
}

static struct dma_buf *rk1828_card_bo_export(struct drm_gem_object *obj,
					     int flags)
{
	if (!to_rk1828_card_bo(obj)->p2p)
		return ERR_PTR(-EOPNOTSUPP);
	return rk1828_p2p_export(obj, flags);
}

static int rk1828_card_bo_mmap(struct drm_gem_object *obj,
			       struct vm_area_struct *vma)
{
	return -EINVAL;
}

/**
 * DOC: card BOs
 *
 * A card BO owns [card_addr, card_addr + size) of card memory. It is
 * mapped into the card context of the file that created it before
 * BO_CREATE returns and unmapped before the range goes back to the
 * allocator, so the card rejects any access to it from other contexts.
 * Card BOs cannot be mmap()ed (-EINVAL). Only BOs in the peer window
 * (%DRM_RK1828_BO_P2P) can be exported, as P2P dma-bufs; others fail
 * with -EOPNOTSUPP.
 */
const struct drm_gem_object_funcs rk1828_card_bo_funcs = {
	.free = rk1828_card_bo_free,
	.export = rk1828_card_bo_export,
	.mmap = rk1828_card_bo_mmap,
};

/*
 * Card memory [*start, *end) for a card BO: the peer window for P2P BOs,
 * the memory below it for all others.
 */
static void rk1828_card_bo_range(struct rk1828_device *rdev, bool p2p,
				 u64 *start, u64 *end)
{
	if (p2p) {
		*start = rdev->p2p.base;
		*end = rdev->p2p.base + rdev->p2p.size;
	} else {
		*start = RK1828_CARD_ALIGN;
		*end = rdev->p2p.size ? rdev->p2p.base : rdev->mem_size;
	}
}

static int rk1828_card_bo_create(struct rk1828_device *rdev,
				 struct rk1828_file *fpriv, u64 size, bool p2p,
				 struct drm_gem_object **out)
{
	enum rk1828_hif_fate fate;
	struct rk1828_card_bo *bo;
	u64 start, end;
	int ret;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return -ENOMEM;
	bo->base.funcs = &rk1828_card_bo_funcs;
	drm_gem_private_object_init(&rdev->drm, &bo->base, size);
	bo->ctx = rk1828_ctx_get(fpriv->ctx);
	bo->p2p = p2p;
	INIT_LIST_HEAD(&bo->export_node);

	rk1828_card_bo_range(rdev, p2p, &start, &end);
	mutex_lock(&rdev->mm_lock);
	ret = drm_mm_insert_node_in_range(&rdev->mm, &bo->node, size,
					  RK1828_CARD_ALIGN, 0, start, end,
					  DRM_MM_INSERT_BEST);
	if (!ret)
		rdev->mem_free -= size;
	mutex_unlock(&rdev->mm_lock);
	if (ret) {
		ret = -ENOMEM;
		goto out_put;
	}

	ret = rk1828_hif_mgmt(rdev, RK1828_HIF_OP_MAP, bo->ctx->id,
			      bo->node.start, size, &fate);
	if (ret) {
		/*
		 * A MAP that was sent but not answered may have been applied:
		 * the free then sends a confirmed UNMAP (and quarantines the
		 * range only when the card cannot confirm it). A MAP the card
		 * refused or that was never sent (dead card) costs nothing.
		 */
		bo->mapped = fate == RK1828_HIF_UNKNOWN;
		drm_dbg_driver(&rdev->drm, "MAP %#llx+%#llx ctx %u failed: %d\n",
			       bo->node.start, size, bo->ctx->id, ret);
		goto out_put;
	}
	bo->mapped = true;
	*out = &bo->base;
	return 0;

out_put:
	drm_gem_object_put(&bo->base);
	return ret;
}

static int rk1828_host_bo_create(struct rk1828_device *rdev, u64 size,
				 struct drm_gem_object **out)
{
	struct drm_gem_shmem_object *shmem;

	if (size > (u64)totalram_pages() << PAGE_SHIFT)
		return -ENOMEM;
	shmem = drm_gem_shmem_create(&rdev->drm, size);
	if (IS_ERR(shmem))
		return PTR_ERR(shmem);
	*out = &shmem->base;
	return 0;
}

/* Fill the BO_INFO / BO_CREATE output fields of @obj. */
static int rk1828_bo_describe(struct drm_gem_object *obj, u32 *flags,
			      u64 *card_addr, u64 *mmap_offset)
{
	int ret;

	if (rk1828_bo_is_card(obj)) {
		*flags = DRM_RK1828_BO_CARD;
		if (to_rk1828_card_bo(obj)->p2p)
			*flags |= DRM_RK1828_BO_P2P;
		*card_addr = to_rk1828_card_bo(obj)->node.start;
		*mmap_offset = 0;
		return 0;
	}
	if (rk1828_bo_is_peer(obj)) {
		*flags = DRM_RK1828_BO_PEER;
		*card_addr = 0;
		*mmap_offset = 0;
		return 0;
	}
	if (!rk1828_bo_is_host(obj))
		return -EINVAL;

	ret = drm_gem_create_mmap_offset(obj);
	if (ret)
		return ret;
	*flags = DRM_RK1828_BO_HOST;
	*card_addr = 0;
	*mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	return 0;
}

/**
 * rk1828_ioctl_bo_create() - DRM_IOCTL_RK1828_BO_CREATE
 * @drm: the device
 * @data: &struct drm_rk1828_bo_create
 * @file: the caller
 *
 * Return: 0; -EINVAL for zero size, unknown flags, none or both kinds,
 * %DRM_RK1828_BO_P2P without %DRM_RK1828_BO_CARD; -E2BIG for a card BO
 * larger than card memory (or the peer window); -EOPNOTSUPP for a P2P BO
 * on a card without a peer window; -ENOMEM when memory is short; -ENODEV
 * once unplugged; errors of the card's MAP.
 */
int rk1828_ioctl_bo_create(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct rk1828_device *rdev = to_rk1828_device(drm);
	struct rk1828_file *fpriv = file->driver_priv;
	struct drm_rk1828_bo_create *args = data;
	const u32 kinds = DRM_RK1828_BO_HOST | DRM_RK1828_BO_CARD;
	bool p2p = args->flags & DRM_RK1828_BO_P2P;
	struct drm_gem_object *obj;
	u64 size, card_addr, mmap_offset;
	u32 handle, flags;
	int ret, idx;

	if (!args->size || (args->flags & ~(kinds | DRM_RK1828_BO_P2P)) ||
	    hweight32(args->flags & kinds) != 1 ||
	    (p2p && !(args->flags & DRM_RK1828_BO_CARD)))
		return -EINVAL;
	if (p2p && !rdev->p2p.size)
		return -EOPNOTSUPP;

	if (args->flags & DRM_RK1828_BO_CARD) {
		if (check_add_overflow(args->size, RK1828_CARD_BO_ALIGN - 1,
				       &size))
			return -E2BIG;
		size = round_down(size, RK1828_CARD_BO_ALIGN);
		if (size > rdev->mem_size - RK1828_CARD_ALIGN ||
		    (p2p && size > rdev->p2p.size))
			return -E2BIG;
	} else {
		if (check_add_overflow(args->size, (u64)PAGE_SIZE - 1, &size))
			return -E2BIG;
		size = round_down(size, PAGE_SIZE);
	}

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	if (args->flags & DRM_RK1828_BO_CARD)
		ret = rk1828_card_bo_create(rdev, fpriv, size, p2p, &obj);
	else
		ret = rk1828_host_bo_create(rdev, size, &obj);
	if (ret)
		goto out_exit;

	ret = rk1828_bo_describe(obj, &flags, &card_addr, &mmap_offset);
	if (!ret)
		ret = drm_gem_handle_create(file, obj, &handle);
	drm_gem_object_put(obj);
	if (ret)
		goto out_exit;

	args->size = size;
	args->handle = handle;
	args->card_addr = card_addr;
	args->mmap_offset = mmap_offset;
out_exit:
	drm_dev_exit(idx);
	return ret;
}

/**
 * rk1828_ioctl_bo_info() - DRM_IOCTL_RK1828_BO_INFO
 * @drm: the device
 * @data: &struct drm_rk1828_bo_info
 * @file: the caller
 *
 * Works for imported BOs. Once the card is unplugged DRM core refuses
 * every ioctl of the device with -ENODEV before it gets here.
 *
 * Return: 0; -ENOENT for a handle the file does not own; -EINVAL for an
 * object that is neither a host nor a card BO.
 */
int rk1828_ioctl_bo_info(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct drm_rk1828_bo_info *args = data;
	struct drm_gem_object *obj;
	int ret;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	ret = rk1828_bo_describe(obj, &args->flags, &args->card_addr,
				 &args->mmap_offset);
	args->size = obj->size;
	drm_gem_object_put(obj);
	return ret;
}

/*
 * Convert an absolute CLOCK_MONOTONIC deadline to a relative timeout in
 * jiffies; 0 when it already passed.
 */
static long rk1828_deadline_to_jiffies(s64 deadline_ns)
{
	s64 now = ktime_get_ns();
	u64 left;

	if (deadline_ns <= now)
		return 0;
	left = nsecs_to_jiffies64(deadline_ns - now) + 1;
	return left >= MAX_SCHEDULE_TIMEOUT ? MAX_SCHEDULE_TIMEOUT : left;
}

/**
 * rk1828_ioctl_bo_wait() - DRM_IOCTL_RK1828_BO_WAIT
 * @drm: the device
 * @data: &struct drm_rk1828_bo_wait
 * @file: the caller
 *
 * Waits for every fence in the BO's reservation object (all usages). The
 * job status is the first error found among the fences still attached to
 * the reservation object after the wait. A fence stays attached until a
 * later job adds its own fence to the BO after the first one signalled,
 * so the status reports the most recent jobs that used the BO: a failed
 * job is reported until the next job on the BO is submitted after it
 * finished. Also works after unplug (jobs then fail with -ENODEV).
 *
 * Return: 0 with @job_status set; -EINVAL for non-zero flags or pad;
 * -ENOENT for a bad handle; -ETIMEDOUT when the deadline passed first;
 * -ERESTARTSYS when interrupted.
 */
int rk1828_ioctl_bo_wait(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct drm_rk1828_bo_wait *args = data;
	struct drm_gem_object *obj;
	struct dma_resv_iter cursor;
	struct dma_fence *fence;
	long timeout, ret;
	int status = 0;

	if (args->flags || args->pad)
		return -EINVAL;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;

	timeout = rk1828_deadline_to_jiffies(args->timeout_ns);
	if (!timeout) {
		ret = dma_resv_test_signaled(obj->resv,
					     DMA_RESV_USAGE_BOOKKEEP) ? 1 : 0;
	} else {
		ret = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_BOOKKEEP,
					    true, timeout);
	}
	if (ret == 0)
		ret = -ETIMEDOUT;
	if (ret < 0)
		goto out_put;

	/* The unlocked iterator skips signalled fences: lock and walk all. */
	ret = dma_resv_lock_interruptible(obj->resv, NULL);
	if (ret) {
		/*
		 * ww_mutex reports a signal as -EINTR; the deadline is
		 * absolute, so the call may be restarted as documented.
		 */
		if (ret == -EINTR)
			ret = -ERESTARTSYS;
		goto out_put;
	}
	dma_resv_for_each_fence(&cursor, obj->resv, DMA_RESV_USAGE_BOOKKEEP,
				fence) {
		if (!status && fence->error)
			status = fence->error;
	}
	dma_resv_unlock(obj->resv);

	args->job_status = status;
	ret = 0;
out_put:
	drm_gem_object_put(obj);
	return ret;
}
