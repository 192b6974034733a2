/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Kernel API differences between the Debian 6.12 kernel and newer kernels.
 *
 * Upstream changed the drm_sched API the driver uses:
 *  - 6.15: drm_sched_init() takes a struct drm_sched_init_args;
 *  - 6.17: drm_sched_job_init() takes the drm_file client id and
 *    DRM_GPU_SCHED_STAT_NOMINAL became DRM_GPU_SCHED_STAT_RESET.
 *
 * Distribution kernels backport some of these (Debian's 6.12.117 has both
 * the 6.15 and the 6.17 forms), so the version number says nothing
 * reliable. kernel/Makefile instead probes the kernel's gpu_scheduler.h and
 * defines the RK1828_HAVE_* macros this header tests.
 */
#ifndef __RK1828_COMPAT_H__
#define __RK1828_COMPAT_H__

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

#endif /* __RK1828_COMPAT_H__ */
