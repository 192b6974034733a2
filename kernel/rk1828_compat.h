/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Kernel API differences between the Debian 6.12 kernel and newer kernels.
 *
 * Upstream changed the DRM and dma-fence APIs the driver uses:
 *  - 6.15: drm_sched_init() takes a struct drm_sched_init_args;
 *    drm_gem_is_imported() replaces tests of &drm_gem_object.import_attach;
 *  - 6.16: drm_gem_vmap_unlocked() and drm_gem_vunmap_unlocked() were
 *    renamed drm_gem_vmap() and drm_gem_vunmap() (the locked variants
 *    became drm_gem_vmap_locked() and drm_gem_vunmap_locked());
 *  - 6.17: drm_sched_job_init() takes the drm_file client id
 *    (&drm_file.client_id) and DRM_GPU_SCHED_STAT_NOMINAL became
 *    DRM_GPU_SCHED_STAT_RESET;
 *  - later (both in Debian's 7.2 and 7.3): &drm_sched_backend_ops.cancel_job,
 *    with which drm_sched_fini() signals the jobs still pending, and
 *    dma_fences with a lock of their own (dma_fence_init() with a NULL
 *    lock), which new code must use instead of an external one.
 *
 * Distribution kernels backport some of these (Debian's 6.12.117 has the
 * 6.15 and the 6.17 forms), so the version number says nothing reliable.
 * kernel/Makefile instead probes the kernel's headers and defines the
 * RK1828_HAVE_* macros this header tests.
 */
#ifndef __RK1828_COMPAT_H__
#define __RK1828_COMPAT_H__

#include <linux/iosys-map.h>
#include <linux/types.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/gpu_scheduler.h>

/**
 * rk1828_sched_init() - drm_sched_init() for any supported kernel
 * @sched: scheduler to initialise
 * @ops: backend operations
 * @submit_wq: ordered workqueue for run_job/free_job, or NULL
 * @timeout_wq: workqueue for the timeout handler (shared by all queues of
 *	one card so that card resets are serialised), or NULL
 * @credit_limit: jobs that may be handed to the backend at once
 * @timeout: job timeout in jiffies
 * @name: scheduler name (debugging)
 * @dev: device for debug messages
 *
 * Return: 0 or a negative errno from drm_sched_init().
 */
static inline int rk1828_sched_init(struct drm_gpu_scheduler *sched,
				    const struct drm_sched_backend_ops *ops,
				    struct workqueue_struct *submit_wq,
				    struct workqueue_struct *timeout_wq,
				    u32 credit_limit, long timeout,
				    const char *name, struct device *dev)
{
#ifdef RK1828_HAVE_SCHED_INIT_ARGS
	const struct drm_sched_init_args args = {
		.ops = ops,
		.submit_wq = submit_wq,
		.timeout_wq = timeout_wq,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		.credit_limit = credit_limit,
		.hang_limit = 0,
		.timeout = timeout,
		.score = NULL,
		.name = name,
		.dev = dev,
	};

	return drm_sched_init(sched, &args);
#else
	return drm_sched_init(sched, ops, submit_wq, DRM_SCHED_PRIORITY_COUNT,
			      credit_limit, 0, timeout, timeout_wq, NULL,
			      name, dev);
#endif
}

/**
 * rk1828_sched_job_init() - drm_sched_job_init() for any supported kernel
 * @job: job to initialise
 * @entity: entity the job is queued on
 * @owner: job owner (debugging)
 * @client_id: &drm_file.client_id of the submitter (ignored before 6.17)
 *
 * Every rk1828 job costs one credit.
 *
 * Return: 0 or a negative errno from drm_sched_job_init().
 */
static inline int rk1828_sched_job_init(struct drm_sched_job *job,
					struct drm_sched_entity *entity,
					void *owner, u64 client_id)
{
#ifdef RK1828_HAVE_SCHED_CLIENT_ID
	return drm_sched_job_init(job, entity, 1, owner, client_id);
#else
	return drm_sched_job_init(job, entity, 1, owner);
#endif
}

#ifdef RK1828_HAVE_SCHED_STAT_RESET
#define RK1828_SCHED_STAT_RESET	DRM_GPU_SCHED_STAT_RESET
#else
#define RK1828_SCHED_STAT_RESET	DRM_GPU_SCHED_STAT_NOMINAL
#endif

/**
 * rk1828_gem_vmap() - map a GEM object into kernel address space
 * @obj: the object; its reservation lock must not be held
 * @map: filled with the mapping
 *
 * Return: 0 or a negative errno of the object's &drm_gem_object_funcs.vmap.
 */
static inline int rk1828_gem_vmap(struct drm_gem_object *obj,
				  struct iosys_map *map)
{
#ifdef RK1828_HAVE_GEM_VMAP_UNLOCKED
	return drm_gem_vmap_unlocked(obj, map);
#else
	return drm_gem_vmap(obj, map);
#endif
}

/**
 * rk1828_gem_vunmap() - undo rk1828_gem_vmap()
 * @obj: the object; its reservation lock must not be held
 * @map: the mapping rk1828_gem_vmap() returned; cleared
 */
static inline void rk1828_gem_vunmap(struct drm_gem_object *obj,
				     struct iosys_map *map)
{
#ifdef RK1828_HAVE_GEM_VMAP_UNLOCKED
	drm_gem_vunmap_unlocked(obj, map);
#else
	drm_gem_vunmap(obj, map);
#endif
}

/**
 * rk1828_gem_is_imported() - is @obj's memory a dma-buf of another driver?
 * @obj: the object
 *
 * Return: true for an object made by &drm_driver.gem_prime_import.
 */
static inline bool rk1828_gem_is_imported(const struct drm_gem_object *obj)
{
#ifdef RK1828_HAVE_GEM_IS_IMPORTED
	return drm_gem_is_imported(obj);
#else
	return obj->import_attach;
#endif
}

/**
 * rk1828_file_client_id() - the fdinfo client id of @file
 * @file: an open DRM file
 *
 * Return: &drm_file.client_id, or 0 on kernels without it (drm_sched
 * takes no client id there either).
 */
static inline u64 rk1828_file_client_id(const struct drm_file *file)
{
#ifdef RK1828_HAVE_FILE_CLIENT_ID
	return file->client_id;
#else
	return 0;
#endif
}

/*
 * MODULE_IMPORT_NS() takes a string literal from 6.13 on, a bare token
 * before.
 */
#ifdef RK1828_HAVE_IMPORT_NS_STRING
#define RK1828_IMPORT_NS_DMA_BUF()	MODULE_IMPORT_NS("DMA_BUF")
#else
#define RK1828_IMPORT_NS_DMA_BUF()	MODULE_IMPORT_NS(DMA_BUF)
#endif

/*
 * dma_buf_move_notify() and &dma_buf_attach_ops.move_notify are
 * dma_buf_invalidate_mappings() and .invalidate_mappings from 7.1 on
 * (same locking: the reservation lock is held).
 */
#ifdef RK1828_HAVE_DMABUF_INVALIDATE_MAPPINGS
#define rk1828_dma_buf_invalidate(dmabuf)	dma_buf_invalidate_mappings(dmabuf)
#define RK1828_DMABUF_INVALIDATE_OP		invalidate_mappings
#else
#define rk1828_dma_buf_invalidate(dmabuf)	dma_buf_move_notify(dmabuf)
#define RK1828_DMABUF_INVALIDATE_OP		move_notify
#endif

#endif /* __RK1828_COMPAT_H__ */
