// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * The SUBMIT ioctl: validates a COPY or EXEC job (types, flags, counts,
 * handles of this file, ranges, copy directions), collects its explicit
 * (syncobj) dependencies (rk1828_syncs.c) and the implicit (dma_resv)
 * ones of its BOs, and queues it on the file's drm_sched entity of the
 * compute or copy queue (rk1828_sched.c runs it).
 */

#include <linux/dma-resv.h>
#include <linux/lockdep.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/rk1828_accel.h>

#include "rk1828_compat.h"
#include "rk1828_drv.h"
#include "rk1828_fence.h"
#include "rk1828_gem.h"
#include "rk1828_job.h"
#include "rk1828_job_priv.h"
#include "rk1828_peer.h"
#include "rk1828_syncs.h"

/*
 * Add @obj (a looked-up reference that the job takes over) to the job's
 * BO list, merging duplicates.
 */
static void rk1828_job_add_bo(struct rk1828_job *job,
			      struct drm_gem_object *obj, bool write)
{
	u32 i;

	for (i = 0; i < job->bo_count; i++) {
		if (job->bos[i] == obj) {
			drm_gem_object_put(obj);
			goto found;
		}
	}
	job->bos[job->bo_count++] = obj;
found:
	if (write)
		__set_bit(i, job->bo_write);
}

/*
 * Look up a BO of this file and check [offset, offset + size) lies
 * inside it. Card BOs must be mapped in the file's own context.
 */
static int rk1828_job_lookup_bo(struct drm_file *file, u32 handle,
				u64 offset, u64 size,
				struct drm_gem_object **out)
{
	struct rk1828_file *fpriv = file->driver_priv;
	struct drm_gem_object *obj;
	u64 end;

	obj = drm_gem_object_lookup(file, handle);
	if (!obj)
		return -ENOENT;
	if (rk1828_bo_is_card(obj) && to_rk1828_card_bo(obj)->ctx != fpriv->ctx) {
		drm_gem_object_put(obj);
		return -ENOENT;
	}
	if (!rk1828_bo_is_card(obj) && !rk1828_bo_is_host(obj) &&
	    !rk1828_bo_is_peer(obj)) {
		drm_gem_object_put(obj);
		return -EINVAL;
	}
	if (check_add_overflow(offset, size, &end) || end > obj->size) {
		drm_gem_object_put(obj);
		return -EINVAL;
	}
	*out = obj;
	return 0;
}

static u64 rk1828_card_addr(struct drm_gem_object *obj, u64 offset)
{
	return to_rk1828_card_bo(obj)->node.start + offset;
}

/*
 * The pages of the job's host BO mapped for the card's DMA: the
 * attachment's table of a BO imported for &rk1828_device.dma_dev, or the
 * shmem BO's own table (mapped for the device on first use, kept with the
 * pages pinned until the BO is freed).
 */
static int rk1828_job_get_sgt(struct rk1828_job *job)
{
	struct drm_gem_shmem_object *shmem = to_drm_gem_shmem_obj(job->host_bo);
	struct sg_table *sgt;

	if (rk1828_gem_is_imported(job->host_bo)) {
		if (!shmem->sgt)
			return -EOPNOTSUPP;
		job->host_sgt = shmem->sgt;
		return 0;
	}
	sgt = drm_gem_shmem_get_pages_sgt(shmem);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	job->host_sgt = sgt;
	return 0;
}

/*
 * A job on a peer BO takes its mapping while the reservation lock is held
 * and adds its fence before the lock is dropped: a revocation (under the
 * same lock) waits for the job, and a job after it fails with -ENODEV.
 */
static int rk1828_job_take_peer_sgt(struct rk1828_job *job)
{
	struct sg_table *sgt;

	if (!job->host_peer)
		return 0;
	sgt = rk1828_peer_bo_sgt(job->host_bo);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	job->host_sgt = sgt;
	return 0;
}

static int rk1828_job_setup_copy(struct rk1828_job *job,
				 const struct drm_rk1828_submit *args,
				 struct drm_file *file)
{
	struct drm_gem_object *src, *dst;
	bool src_card, dst_card;
	int ret;

	if (args->bo_handle_count)
		return -EINVAL;

	ret = rk1828_job_lookup_bo(file, args->src_handle, args->src_offset,
				   args->size, &src);
	if (ret)
		return ret;
	rk1828_job_add_bo(job, src, false);
	ret = rk1828_job_lookup_bo(file, args->dst_handle, args->dst_offset,
				   args->size, &dst);
	if (ret)
		return ret;
	rk1828_job_add_bo(job, dst, true);

	src_card = rk1828_bo_is_card(src);
	dst_card = rk1828_bo_is_card(dst);
	job->size = args->size;

	if (src_card && dst_card) {
		/*
		 * A COPY is sent again after a reset; with overlapping ranges
		 * the first, aborted attempt may already have changed the
		 * source, so the retry would copy corrupted data.
		 */
		if (src == dst &&
		    args->src_offset < args->dst_offset + args->size &&
		    args->dst_offset < args->src_offset + args->size)
			return -EINVAL;
		job->kind = RK1828_JOB_CARD_COPY;
		job->card_src = rk1828_card_addr(src, args->src_offset);
		job->card_dst = rk1828_card_addr(dst, args->dst_offset);
		return 0;
	}
	if (!src_card && !dst_card)
		return -EINVAL;

	if (dst_card) {
		job->kind = RK1828_JOB_WRITE;
		job->card_dst = rk1828_card_addr(dst, args->dst_offset);
		job->host_bo = src;
		job->host_off = args->src_offset;
	} else {
		job->kind = RK1828_JOB_READ;
		job->card_src = rk1828_card_addr(src, args->src_offset);
		job->host_bo = dst;
		job->host_off = args->dst_offset;
	}

	/* A peer BO's mapping is taken under its reservation lock at push. */
	if (rk1828_bo_is_peer(job->host_bo)) {
		job->host_peer = true;
		return job->rdev->tops->exec ? 0 : -EOPNOTSUPP;
	}
	if (job->rdev->tops->exec)
		return rk1828_job_get_sgt(job);
	ret = rk1828_gem_vmap(job->host_bo, &job->host_map);
	if (ret)
		return ret;
	job->host_mapped = true;
	if (job->host_map.is_iomem)
		return -EOPNOTSUPP;
	return 0;
}

static int rk1828_job_setup_exec(struct rk1828_job *job,
				 const struct drm_rk1828_submit *args,
				 struct drm_file *file)
{
	u32 __user *uhandles = u64_to_user_ptr(args->bo_handles);
	struct drm_gem_object *obj;
	u32 i, handle;
	int ret;

	if (args->dst_handle || args->dst_offset)
		return -EINVAL;

	ret = rk1828_job_lookup_bo(file, args->src_handle, args->src_offset,
				   args->size, &obj);
	if (ret)
		return ret;
	rk1828_job_add_bo(job, obj, false);
	if (!rk1828_bo_is_card(obj))
		return -EINVAL;
	if (args->size > U32_MAX)
		return -EINVAL;
	job->kind = RK1828_JOB_EXEC;
	job->card_src = rk1828_card_addr(obj, args->src_offset);
	job->size = args->size;

	for (i = 0; i < args->bo_handle_count; i++) {
		if (get_user(handle, uhandles + i))
			return -EFAULT;
		ret = rk1828_job_lookup_bo(file, handle, 0, 0, &obj);
		if (ret)
			return ret;
		/* The card only addresses card memory. */
		if (!rk1828_bo_is_card(obj)) {
			drm_gem_object_put(obj);
			return -EINVAL;
		}
		/* The program may write any BO it names. */
		rk1828_job_add_bo(job, obj, true);
	}
	return 0;
}

static int rk1828_submit_check(const struct drm_rk1828_submit *args)
{
	if (args->type != DRM_RK1828_JOB_COPY &&
	    args->type != DRM_RK1828_JOB_EXEC)
		return -EINVAL;
	if (args->flags || !args->size)
		return -EINVAL;
	if (args->in_sync_count > RK1828_MAX_SUBMIT_COUNT ||
	    args->out_sync_count > RK1828_MAX_SUBMIT_COUNT ||
	    args->bo_handle_count > RK1828_MAX_SUBMIT_COUNT)
		return -EINVAL;
	if ((args->in_sync_count || args->out_sync_count) &&
	    (args->sync_struct_size < sizeof(struct drm_rk1828_sync) ||
	     args->sync_struct_size > PAGE_SIZE))
		return -EINVAL;
	return 0;
}

/*
 * Queue @job; on failure nothing was queued and the job is intact. The
 * caller holds &rk1828_file.submit_lock, so jobs of one file are armed
 * (get their fence seqno) and pushed in the same order.
 */
static int rk1828_job_push_locked(struct rk1828_job *job,
				  struct rk1828_file *fpriv,
				  struct drm_file *file,
				  struct rk1828_submit_syncs *syncs, u32 q,
				  u64 *seqno)
{
	struct ww_acquire_ctx acquire;
	struct dma_fence *finished;
	u32 i;
	int ret;

	lockdep_assert_held(&fpriv->submit_lock);

	ret = rk1828_sched_job_init(&job->base, &fpriv->entity[q], fpriv,
				    rk1828_file_client_id(file));
	if (ret)
		return ret;

	for (i = 0; i < syncs->in_count; i++) {
		job->in_fences[job->in_count++] =
			dma_fence_get(syncs->in_fences[i]);
		/* Consumes the reference, also on failure. */
		ret = drm_sched_job_add_dependency(&job->base,
						   syncs->in_fences[i]);
		syncs->in_fences[i] = NULL;
		if (ret)
			goto err_cleanup;
	}

	ret = drm_gem_lock_reservations(job->bos, job->bo_count, &acquire);
	if (ret)
		goto err_cleanup;
	for (i = 0; i < job->bo_count; i++) {
		ret = dma_resv_reserve_fences(job->bos[i]->resv, 1);
		if (ret)
			goto err_unlock;
		ret = drm_sched_job_add_implicit_dependencies(&job->base,
							      job->bos[i],
							      test_bit(i, job->bo_write));
		if (ret)
			goto err_unlock;
	}
	ret = rk1828_job_take_peer_sgt(job);
	if (ret)
		goto err_unlock;

	/* Point of no return: from here on nothing can fail. */
	drm_sched_job_arm(&job->base);
	finished = dma_fence_get(&job->base.s_fence->finished);
	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i]->resv, finished,
				   test_bit(i, job->bo_write) ?
				   DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
	drm_gem_unlock_reservations(job->bos, job->bo_count, &acquire);

	rk1828_set_out_syncs(syncs, finished);

	dma_fence_put(fpriv->last_fence[q]);
	fpriv->last_fence[q] = finished;
	*seqno = ++fpriv->seqno;
	atomic64_inc(&fpriv->ctx->submitted);
	atomic64_inc(&job->sched->jobs_submitted);

	/* The file stays until this job passed run_job. */
	atomic_inc(&fpriv->pending);
	job->fpriv = fpriv;
	drm_sched_entity_push_job(&job->base);
	return 0;

err_unlock:
	drm_gem_unlock_reservations(job->bos, job->bo_count, &acquire);
err_cleanup:
	drm_sched_job_cleanup(&job->base);
	return ret;
}

/**
 * rk1828_ioctl_submit() - DRM_IOCTL_RK1828_SUBMIT
 * @drm: the device
 * @data: &struct drm_rk1828_submit
 * @file: the caller
 *
 * Validates the whole job (types, flags, counts, handles owned by this
 * file, ranges with overflow checks, copy directions), collects the
 * in-syncobj fences and out-syncobjs, then queues the job on the file's
 * entity of the compute (EXEC) or copy (COPY) queue with the implicit
 * dependencies of its BOs, attaches its finished fence to the BOs
 * (written ones as WRITE, read ones as READ) and to the out-syncobjs.
 *
 * Return: 0 with @seqno set; -EINVAL, -ENOENT, -EFAULT, -ENOMEM as
 * documented in the uapi; -ECANCELED for a banned context; -ENODEV once
 * unplugged. Nothing is queued on failure.
 */
int rk1828_ioctl_submit(struct drm_device *drm, void *data,
			struct drm_file *file)
{
	struct rk1828_device *rdev = to_rk1828_device(drm);
	struct rk1828_file *fpriv = file->driver_priv;
	struct drm_rk1828_submit *args = data;
	struct rk1828_submit_syncs *syncs = NULL;
	struct rk1828_job *job;
	u32 q;
	int ret, idx;

	ret = rk1828_submit_check(args);
	if (ret)
		return ret;
	if (READ_ONCE(fpriv->ctx->banned))
		return -ECANCELED;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	syncs = kzalloc(sizeof(*syncs), GFP_KERNEL);
	if (!job || !syncs) {
		kfree(job);
		ret = -ENOMEM;
		goto out_exit;
	}
	rk1828_job_init(job, rdev, fpriv->ctx);

	q = args->type == DRM_RK1828_JOB_EXEC ? RK1828_SCHED_COMPUTE :
		RK1828_SCHED_COPY;
	job->sched = &rdev->sched[q];

	if (args->type == DRM_RK1828_JOB_EXEC)
		ret = rk1828_job_setup_exec(job, args, file);
	else
		ret = rk1828_job_setup_copy(job, args, file);
	if (ret)
		goto out_release;

	ret = rk1828_get_syncs(args, file, syncs);
	if (ret)
		goto out_release;

	job->hw = kzalloc(sizeof(*job->hw), GFP_KERNEL);
	if (!job->hw) {
		ret = -ENOMEM;
		goto out_release;
	}

	mutex_lock(&fpriv->submit_lock);
	ret = rk1828_job_push_locked(job, fpriv, file, syncs, q,
				     &args->seqno);
	mutex_unlock(&fpriv->submit_lock);
	if (ret)
		goto out_release;
	goto out_syncs;

out_release:
	rk1828_job_release(job);
out_syncs:
	rk1828_put_syncs(syncs);
out_exit:
	kfree(syncs);
	drm_dev_exit(idx);
	return ret;
}
