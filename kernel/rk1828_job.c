// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Lifetime of jobs and of the files that submit them: the release
 * workqueue that module exit drains, the count of live jobs it waits for,
 * the references a job holds from submit to its release, and the file
 * teardown that waits for the file's last job to pass run_job.
 */

#include <linux/atomic.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>

#include "rk1828_compat.h"
#include "rk1828_drv.h"
#include "rk1828_fence.h"
#include "rk1828_job.h"
#include "rk1828_job_priv.h"

/* Runs the final release of jobs; created and drained by the module. */
static struct workqueue_struct *rk1828_release_wq;
/* Jobs not yet released, of all devices; module exit waits for zero. */
static atomic_t rk1828_live_jobs = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(rk1828_live_jobs_wq);

/**
 * rk1828_job_module_init() - create the job release workqueue
 *
 * Return: 0 or -ENOMEM.
 */
int rk1828_job_module_init(void)
{
	rk1828_release_wq = alloc_workqueue("rk1828-release", WQ_UNBOUND, 0);
	return rk1828_release_wq ? 0 : -ENOMEM;
}

/**
 * rk1828_job_module_exit() - wait until every job is released, free the
 * workqueue
 *
 * Called after the transport drivers are unregistered: every card is
 * unplugged, so running and queued jobs fail quickly.
 */
void rk1828_job_module_exit(void)
{
	wait_event(rk1828_live_jobs_wq, !atomic_read(&rk1828_live_jobs));
	/* Also waits for the release that dropped the count to zero. */
	destroy_workqueue(rk1828_release_wq);
}

/**
 * rk1828_queue_release_work() - run @work on the release workqueue
 * @work: a deferred release (job, file or hardware fence)
 *
 * Module exit drains that workqueue, so @work may drop the last module
 * reference; it runs in process context also when this is called in
 * atomic context.
 */
void rk1828_queue_release_work(struct work_struct *work)
{
	queue_work(rk1828_release_wq, work);
}

/**
 * rk1828_job_init() - take the references a new job holds
 * @job: a zeroed job
 * @rdev: the card (drm_device reference)
 * @ctx: the submitting file's context (reference, and one of its jobs)
 *
 * Also counts the job live for module exit and holds the module; all of
 * it is dropped by rk1828_job_release().
 */
void rk1828_job_init(struct rk1828_job *job, struct rk1828_device *rdev,
		     struct rk1828_ctx *ctx)
{
	atomic_inc(&rk1828_live_jobs);
	__module_get(THIS_MODULE);
	job->rdev = rdev;
	drm_dev_get(&rdev->drm);
	job->ctx = rk1828_ctx_get(ctx);
	atomic_inc(&job->ctx->jobs);
}

/**
 * rk1828_job_release() - free everything a job holds
 * @job: the job, from rk1828_job_init() on
 *
 * The job may never have been queued. The job holds references on its
 * context and on the drm_device, so the last put of either can happen
 * here: that sends CTX_DESTROY or tears the device down, which must not
 * run on a scheduler workqueue (see rk1828_sched_free_job()).
 */
void rk1828_job_release(struct rk1828_job *job)
{
	struct rk1828_device *rdev = job->rdev;
	struct rk1828_ctx *ctx = job->ctx;
	u32 i;

	if (job->host_mapped)
		rk1828_gem_vunmap(job->host_bo, &job->host_map);
	for (i = 0; i < job->bo_count; i++)
		drm_gem_object_put(job->bos[i]);
	for (i = 0; i < job->in_count; i++)
		dma_fence_put(job->in_fences[i]);
	if (job->hw_inited)
		dma_fence_put(&job->hw->base);
	else
		kfree(job->hw);
	kfree(job);

	atomic_dec(&ctx->jobs);
	rk1828_ctx_put(ctx);
	drm_dev_put(&rdev->drm);

	if (atomic_dec_and_test(&rk1828_live_jobs))
		wake_up(&rk1828_live_jobs_wq);
	/*
	 * Last: on rk1828_release_wq, which module exit drains; in the
	 * submit ioctl, the open file holds the module as well.
	 */
	module_put(THIS_MODULE);
}

static void rk1828_job_release_work(struct work_struct *work)
{
	rk1828_job_release(container_of(work, struct rk1828_job, release_work));
}

/**
 * rk1828_job_queue_release() - release @job on the release workqueue
 * @job: a job drm_sched is done with
 *
 * For drm_sched's free_job, which must not tear down what the job's last
 * references may hold (see rk1828_job_release()).
 */
void rk1828_job_queue_release(struct rk1828_job *job)
{
	INIT_WORK(&job->release_work, rk1828_job_release_work);
	rk1828_queue_release_work(&job->release_work);
}

/*
 * Tear a closed file down once every job it pushed has passed run_job:
 * its entities are idle then, so drm_sched_entity_destroy() returns at
 * once and kills nothing.
 */
static void rk1828_file_free(struct rk1828_file *fpriv)
{
	int q;

	for (q = 0; q < RK1828_SCHED_NUM; q++) {
		drm_sched_entity_destroy(&fpriv->entity[q]);
		dma_fence_put(fpriv->last_fence[q]);
	}
	rk1828_ctx_put(fpriv->ctx);
	mutex_destroy(&fpriv->submit_lock);
	kfree(fpriv);
}

static void rk1828_file_free_work(struct work_struct *work)
{
	struct rk1828_file *fpriv = container_of(work, struct rk1828_file,
						 free_work);
	struct rk1828_device *rdev = fpriv->rdev;

	rk1828_file_free(fpriv);
	drm_dev_put(&rdev->drm);
	/* Last: module exit drains rk1828_release_wq before the text goes. */
	module_put(THIS_MODULE);
}

/**
 * rk1828_file_sched_init() - create a file's scheduler entities
 * @fpriv: the file
 *
 * Return: 0 or a negative errno.
 */
int rk1828_file_sched_init(struct rk1828_file *fpriv)
{
	struct rk1828_device *rdev = fpriv->rdev;
	int ret, q;

	atomic_set(&fpriv->pending, 1);
	INIT_WORK(&fpriv->free_work, rk1828_file_free_work);
	for (q = 0; q < RK1828_SCHED_NUM; q++) {
		struct drm_gpu_scheduler *sched = &rdev->sched[q].base;

		ret = drm_sched_entity_init(&fpriv->entity[q],
					    DRM_SCHED_PRIORITY_NORMAL,
					    &sched, 1, NULL);
		if (ret) {
			while (--q >= 0)
				drm_sched_entity_destroy(&fpriv->entity[q]);
			return ret;
		}
	}
	return 0;
}

/**
 * rk1828_file_job_started() - a job of @fpriv passed run_job
 * @fpriv: the job's file
 *
 * The last one of a closed file hands the teardown to rk1828_release_wq
 * (not the scheduler's own workqueue, which the entity teardown may wait
 * for).
 */
void rk1828_file_job_started(struct rk1828_file *fpriv)
{
	if (atomic_dec_and_test(&fpriv->pending))
		rk1828_queue_release_work(&fpriv->free_work);
}

/**
 * rk1828_file_close() - a file is closed (also when its process exits)
 * @fpriv: the file; freed here or once its last pushed job passed run_job
 *
 * Marks the file's context closed: every job of the file that has not
 * started on the card is cancelled with -ECANCELED when it would run
 * (after its dependencies, as drm_sched orders it), a job already running
 * on the card finishes or times out, and nothing here waits for a job.
 * A file with no job pending is torn down here; otherwise its last job
 * hands the teardown to rk1828_release_wq. The jobs hold the context, so
 * CTX_DESTROY goes to the card after the last of them is freed.
 */
void rk1828_file_close(struct rk1828_file *fpriv)
{
	struct rk1828_device *rdev = fpriv->rdev;

	WRITE_ONCE(fpriv->ctx->closed, true);
	/* Held by a deferred teardown (rk1828_file_free_work()). */
	drm_dev_get(&rdev->drm);
	__module_get(THIS_MODULE);
	if (!atomic_dec_and_test(&fpriv->pending))
		return;
	/* No job pending: tear down now, CTX_DESTROY before close returns. */
	rk1828_file_free(fpriv);
	drm_dev_put(&rdev->drm);
	module_put(THIS_MODULE);
}
