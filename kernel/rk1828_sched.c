// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * The drm_sched backend of the compute and copy queues: run_job gives
 * each job its hardware fence and hands it to the queue's ordered
 * workqueue, whose worker streams the job's commands through the
 * transport and signals the fence with the job's error; free_job defers
 * the release to the release workqueue.
 */

#include <linux/dma-fence-chain.h>
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/sizes.h>
#include <linux/workqueue.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "rk1828_compat.h"
#include "rk1828_drv.h"
#include "rk1828_hif_engine.h"
#include "rk1828_fence.h"
#include "rk1828_job.h"
#include "rk1828_job_priv.h"

/* Jobs one scheduler hands to its workqueue ahead of the running one. */
#define RK1828_SCHED_CREDITS	4

/* Largest WRITE/READ command a job sends; larger copies are split. */
#define RK1828_JOB_CHUNK	SZ_64M

/*
 * Run one WRITE or READ of a job; around a card DMA into or out of the
 * host BO's pages, hand them to the device and back (both tables are
 * mapped bidirectional; Documentation/core-api/dma-api.rst).
 */
static int rk1828_job_run_dma(struct rk1828_job *job,
			      const struct rk1828_hif_cmd *cmd)
{
	struct device *dev = job->rdev->dma_dev;
	int ret;

	/* A peer card's window (bus addresses, no pages) needs no sync. */
	if (!job->host_sgt || job->host_peer)
		return rk1828_hif_run(job->rdev, job->sched->hif_queue, cmd);
	if (job->kind == RK1828_JOB_WRITE)
		dma_sync_sgtable_for_device(dev, job->host_sgt, DMA_BIDIRECTIONAL);
	ret = rk1828_hif_run(job->rdev, job->sched->hif_queue, cmd);
	if (job->kind == RK1828_JOB_READ)
		dma_sync_sgtable_for_cpu(dev, job->host_sgt, DMA_BIDIRECTIONAL);
	return ret;
}

/* Stream the job's commands to the card; returns the job's error. */
static int rk1828_job_execute(struct rk1828_job *job)
{
	struct rk1828_device *rdev = job->rdev;
	struct rk1828_hif_cmd cmd = {
		.ctx = job->ctx->id,
		.timeout = msecs_to_jiffies(READ_ONCE(rdev->job_timeout_ms)),
	};
	u32 queue = job->sched->hif_queue;
	u64 done, n, chunk = rdev->xfer_max ?: RK1828_JOB_CHUNK;
	int ret;

	switch (job->kind) {
	case RK1828_JOB_WRITE:
	case RK1828_JOB_READ:
		for (done = 0; done < job->size; done += n) {
			u8 *host = NULL;

			if (job->host_mapped)
				host = (u8 *)job->host_map.vaddr + job->host_off + done;
			cmd.sgt = job->host_sgt;
			cmd.sg_off = job->host_off + done;
			n = min_t(u64, job->size - done, chunk);
			if (job->kind == RK1828_JOB_WRITE) {
				cmd.opcode = RK1828_HIF_OP_WRITE;
				cmd.arg[0] = job->card_dst + done;
				cmd.arg[1] = n;
				cmd.wdata = host;
				cmd.wlen = n;
			} else {
				cmd.opcode = RK1828_HIF_OP_READ;
				cmd.arg[0] = job->card_src + done;
				cmd.arg[1] = n;
				cmd.rdata = host;
				cmd.rlen = n;
			}
			ret = rk1828_job_run_dma(job, &cmd);
			if (ret)
				return ret;
		}
		atomic64_add(job->size, job->host_peer ?
			     &rdev->p2p.p2p_bytes : &rdev->p2p.bounce_bytes);
		return 0;
	case RK1828_JOB_CARD_COPY:
		cmd.opcode = RK1828_HIF_OP_COPY;
		cmd.arg[0] = job->card_src;
		cmd.arg[1] = job->card_dst;
		cmd.arg[2] = job->size;
		return rk1828_hif_run(rdev, queue, &cmd);
	case RK1828_JOB_EXEC:
		cmd.opcode = RK1828_HIF_OP_EXEC;
		cmd.arg[0] = job->card_src;
		cmd.arg[1] = job->size;
		return rk1828_hif_run(rdev, queue, &cmd);
	}
	return -EINVAL;
}

/*
 * The job's own command timed out (commands aborted by other contexts'
 * resets are sent again, so they never end here): after
 * %RK1828_BAN_TIMEOUTS of them the context is banned, so one client
 * cannot keep resetting the card under the others.
 */
static void rk1828_ctx_timed_out(struct rk1828_job *job)
{
	struct rk1828_ctx *ctx = job->ctx;

	if (atomic_inc_return(&ctx->timeouts) == RK1828_BAN_TIMEOUTS) {
		WRITE_ONCE(ctx->banned, true);
		drm_warn(&job->rdev->drm, "context %u banned after %d job timeouts\n",
			 ctx->id, RK1828_BAN_TIMEOUTS);
	}
}

/*
 * The job's execution: from run_job until its hardware fence signals the
 * worker is in the fence signalling critical section
 * (Documentation/driver-api/dma-buf.rst, "DMA Fence Signalling
 * Annotations"): reclaim may wait for this fence, so nothing here
 * allocates memory other than GFP_ATOMIC (bounce buffers, URBs and the
 * reset request are preallocated, see &struct rk1828_transport_ops) and
 * no lock taken here is held by anyone who waits for a fence. The
 * annotations let lockdep check both.
 */
static void rk1828_job_work(struct work_struct *work)
{
	struct rk1828_job *job = container_of(work, struct rk1828_job, work);
	struct rk1828_sched *sched = job->sched;
	struct dma_fence *hw = &job->hw->base;
	bool cookie;
	int ret;

	cookie = dma_fence_begin_signalling();
	/*
	 * Closed or banned while it waited behind the jobs ahead of it:
	 * never sent.
	 */
	if (READ_ONCE(job->ctx->closed) || READ_ONCE(job->ctx->banned))
		ret = -ECANCELED;
	else
		ret = rk1828_job_execute(job);
	if (ret) {
		dma_fence_set_error(hw, ret);
		atomic64_inc(&sched->jobs_failed);
		if (ret == -ETIMEDOUT) {
			atomic64_inc(&sched->timeouts);
			rk1828_ctx_timed_out(job);
		}
	} else {
		atomic64_inc(&sched->jobs_done);
	}
	/* The job may be freed as soon as the fence signals. */
	dma_fence_get(hw);
	dma_fence_signal(hw);
	dma_fence_end_signalling(cookie);
	dma_fence_put(hw);
}

/*
 * Why a job must not run: drm_sched cancelled it, a job it explicitly
 * depends on (an in-sync) failed, so a pipeline stops at the first failed
 * stage, its file was closed or its context banned. 0 when it may run.
 * Implicit (dma_resv) fences order memory accesses rather than data flow
 * and do not pass errors on: a BO written by a failed job stays usable.
 */
static int rk1828_job_cancel_error(struct rk1828_job *job)
{
	int error = job->base.s_fence->finished.error;
	u32 i;

	if (error)
		return error;
	/* Signalled by now: drm_sched waited for them. */
	for (i = 0; i < job->in_count; i++) {
		error = dma_fence_chain_contained(job->in_fences[i])->error;
		if (error)
			return error;
	}
	if (READ_ONCE(job->ctx->closed) || READ_ONCE(job->ctx->banned))
		return -ECANCELED;
	return 0;
}

/*
 * Every job passes here, also a cancelled one, so every finished fence
 * gets a hardware fence as its parent (struct rk1828_hw_fence).
 */
static struct dma_fence *rk1828_sched_run_job(struct drm_sched_job *sched_job)
{
	struct rk1828_job *job = to_rk1828_job(sched_job);
	struct rk1828_sched *sched = job->sched;
	struct dma_fence *hw;
	bool cookie;
	int error;

	/* The scheduler signals the finished fence through ours: see above. */
	cookie = dma_fence_begin_signalling();
	rk1828_hw_fence_init(job->hw, job->rdev, sched);
	job->hw_inited = true;
	hw = &job->hw->base;
	error = rk1828_job_cancel_error(job);
	rk1828_file_job_started(job->fpriv);
	job->fpriv = NULL;

	if (unlikely(error)) {
		dma_fence_set_error(hw, error);
		atomic64_inc(&sched->jobs_failed);
		dma_fence_signal(hw);
	} else {
		INIT_WORK(&job->work, rk1828_job_work);
		queue_work(sched->run_wq, &job->work);
	}
	dma_fence_end_signalling(cookie);
	return dma_fence_get(hw);
}

/*
 * Job timeouts are enforced by the worker, which knows when a job really
 * started on the card: it resets the card's queues and fails the job with
 * -ETIMEDOUT (rk1828_hif_run()). The scheduler's own timeout is disabled,
 * so this handler never runs.
 */
static enum drm_gpu_sched_stat
rk1828_sched_timedout_job(struct drm_sched_job *sched_job)
{
	struct rk1828_job *job = to_rk1828_job(sched_job);

	drm_warn_once(&job->rdev->drm, "unexpected scheduler timeout\n");
	return RK1828_SCHED_STAT_RESET;
}

/*
 * Called on the scheduler's workqueue (or, for jobs of a killed entity, on
 * a system workqueue): hand the release to rk1828_release_wq, where the
 * last device reference may tear the schedulers down.
 */
static void rk1828_sched_free_job(struct drm_sched_job *sched_job)
{
	struct rk1828_job *job = to_rk1828_job(sched_job);

	drm_sched_job_cleanup(sched_job);
	rk1828_job_queue_release(job);
}

#ifdef RK1828_HAVE_SCHED_CANCEL_JOB
/*
 * drm_sched_fini() on a job that passed run_job and was not freed yet: its
 * hardware fence must be signalled before free_job. run_job signalled it
 * already (a cancelled job) or queued the worker that signals it; a worker
 * that has not started is cancelled here and the job fails with
 * -ECANCELED, one that runs is waited for. drm_sched calls nothing else
 * of the scheduler by now (its run_job work is stopped).
 *
 * Every job holds a reference on the drm_device whose release calls
 * drm_sched_fini(), so its pending list is empty there today; this keeps
 * drm_sched_fini() from leaking or warning should that ever change.
 */
static void rk1828_sched_cancel_job(struct drm_sched_job *sched_job)
{
	struct rk1828_job *job = to_rk1828_job(sched_job);
	struct dma_fence *hw = &job->hw->base;
	bool cookie;

	if (dma_fence_is_signaled(hw) || !cancel_work_sync(&job->work))
		return;
	cookie = dma_fence_begin_signalling();
	dma_fence_set_error(hw, -ECANCELED);
	atomic64_inc(&job->sched->jobs_failed);
	dma_fence_signal(hw);
	dma_fence_end_signalling(cookie);
}
#endif

static const struct drm_sched_backend_ops rk1828_sched_ops = {
	.run_job = rk1828_sched_run_job,
	.timedout_job = rk1828_sched_timedout_job,
	.free_job = rk1828_sched_free_job,
#ifdef RK1828_HAVE_SCHED_CANCEL_JOB
	.cancel_job = rk1828_sched_cancel_job,
#endif
};

static void rk1828_sched_release(struct drm_device *drm, void *data)
{
	struct rk1828_device *rdev = to_rk1828_device(drm);
	int q;

	for (q = 0; q < RK1828_SCHED_NUM; q++) {
		struct rk1828_sched *s = &rdev->sched[q];

		if (s->base.ready)
			drm_sched_fini(&s->base);
		if (s->run_wq)
			destroy_workqueue(s->run_wq);
		s->run_wq = NULL;
	}
}

/**
 * rk1828_sched_init_all() - create the compute and copy schedulers
 * @rdev: the card
 *
 * Each scheduler gets an ordered workqueue of its own that runs the jobs
 * on the transport one at a time; they are torn down with the drm_device.
 *
 * Return: 0 or a negative errno.
 */
int rk1828_sched_init_all(struct rk1828_device *rdev)
{
	static const char * const names[RK1828_SCHED_NUM] = {
		[RK1828_SCHED_COMPUTE] = "compute",
		[RK1828_SCHED_COPY] = "copy",
	};
	int ret, q;

	ret = drmm_add_action(&rdev->drm, rk1828_sched_release, NULL);
	if (ret)
		return ret;

	for (q = 0; q < RK1828_SCHED_NUM; q++) {
		struct rk1828_sched *s = &rdev->sched[q];

		s->rdev = rdev;
		s->queue = q;
		s->name = names[q];
		s->hif_queue = q == RK1828_SCHED_COMPUTE ?
			RK1828_HIF_QUEUE_COMPUTE : RK1828_HIF_QUEUE_COPY;
		s->fence_context = dma_fence_context_alloc(1);
		atomic64_set(&s->fence_seqno, 0);
		atomic64_set(&s->jobs_submitted, 0);
		atomic64_set(&s->jobs_done, 0);
		atomic64_set(&s->jobs_failed, 0);
		atomic64_set(&s->timeouts, 0);

		s->run_wq = alloc_ordered_workqueue("rk1828-%s-%s",
						    WQ_MEM_RECLAIM,
						    dev_name(rdev->drm.dev),
						    s->name);
		if (!s->run_wq)
			return -ENOMEM;

		ret = rk1828_sched_init(&s->base, &rk1828_sched_ops, NULL, NULL,
					RK1828_SCHED_CREDITS,
					MAX_SCHEDULE_TIMEOUT, s->name,
					rdev->drm.dev);
		if (ret) {
			drm_err(&rdev->drm, "%s scheduler: %d\n", s->name, ret);
			return ret;
		}
	}
	return 0;
}
