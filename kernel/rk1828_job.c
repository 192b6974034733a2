// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Jobs: the SUBMIT ioctl validates a COPY or EXEC job, resolves its
 * explicit (syncobj) and implicit (dma_resv) dependencies and queues it on
 * the file's drm_sched entity of the compute or copy queue. The backend
 * hands each job to an ordered workqueue that streams its commands through
 * the transport and signals the job's hardware fence with the job's error.
 */

#include <linux/dma-fence-chain.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/iosys-map.h>
#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <drm/rk1828_accel.h>

#include "rk1828_compat.h"
#include "rk1828_drv.h"
#include "rk1828_gem.h"
#include "rk1828_job.h"

/* Jobs one scheduler hands to its workqueue ahead of the running one. */
#define RK1828_SCHED_CREDITS	4

/* Largest WRITE/READ command a job sends; larger copies are split. */
#define RK1828_JOB_CHUNK	SZ_64M

/* BOs a job can hold: the EXEC program or COPY source/destination + list. */
#define RK1828_JOB_MAX_BOS	(RK1828_MAX_SUBMIT_COUNT + 2)

/**
 * enum rk1828_job_kind - what a job does on the card
 * @RK1828_JOB_WRITE: host BO -> card BO (HIF WRITE)
 * @RK1828_JOB_READ: card BO -> host BO (HIF READ)
 * @RK1828_JOB_CARD_COPY: card BO -> card BO (HIF COPY)
 * @RK1828_JOB_EXEC: run a segment program (HIF EXEC)
 */
enum rk1828_job_kind {
	RK1828_JOB_WRITE,
	RK1828_JOB_READ,
	RK1828_JOB_CARD_COPY,
	RK1828_JOB_EXEC,
};

/**
 * struct rk1828_hw_fence - completion of a job on the card
 * @base: the fence; signalled by the job's worker, with the job's error
 *	(first member: dma_fence_free() frees the allocation)
 * @lock: fence lock (the fence may outlive the job)
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
	spinlock_t lock; /* dma_fence lock of @base */
	const char *name;
	struct rk1828_device *rdev;
	struct work_struct release_work;
};

/**
 * struct rk1828_job - one submitted job
 * @base: drm_sched job
 * @rdev: the card
 * @ctx: card context of the submitting file (reference held)
 * @sched: the scheduled queue
 * @kind: &enum rk1828_job_kind
 * @card_src: card address read (READ, COPY source, EXEC program)
 * @card_dst: card address written (WRITE, COPY destination)
 * @size: bytes to move, or program size
 * @fpriv: the submitting file until the job passed run_job (see
 *	&rk1828_file.pending), NULL afterwards
 * @host_bo: host BO of a WRITE or READ (reference in @bos)
 * @host_map: kernel mapping of @host_bo while the job lives (stream
 *	transports)
 * @host_sgt: pages of @host_bo mapped for the card's DMA (transports with
 *	&rk1828_transport_ops.exec); owned by the BO
 * @host_off: byte offset in @host_bo
 * @host_mapped: @host_map is valid
 * @bos: distinct BOs of the job (references held)
 * @bo_count: entries in @bos
 * @bo_write: bit i set when the job writes @bos[i]
 * @in_fences: the explicit in-fences (references), checked for errors
 *	when the job is about to run
 * @in_count: entries in @in_fences
 * @hw: hardware fence, allocated at submit
 * @hw_inited: @hw was initialised by run_job (else it is just memory)
 * @work: execution on &rk1828_sched.run_wq
 * @release_work: final release on rk1828_release_wq
 */
struct rk1828_job {
	struct drm_sched_job base;
	struct rk1828_device *rdev;
	struct rk1828_ctx *ctx;
	struct rk1828_sched *sched;
	struct rk1828_file *fpriv;
	enum rk1828_job_kind kind;
	u64 card_src;
	u64 card_dst;
	u64 size;
	struct drm_gem_object *host_bo;
	struct iosys_map host_map;
	struct sg_table *host_sgt;
	u64 host_off;
	bool host_mapped;
	struct drm_gem_object *bos[RK1828_JOB_MAX_BOS];
	u32 bo_count;
	DECLARE_BITMAP(bo_write, RK1828_JOB_MAX_BOS);
	struct dma_fence *in_fences[RK1828_MAX_SUBMIT_COUNT];
	u32 in_count;
	struct rk1828_hw_fence *hw;
	bool hw_inited;
	struct work_struct work;
	struct work_struct release_work;
};

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

static void rk1828_file_free_work(struct work_struct *work);
static void rk1828_file_job_started(struct rk1828_file *fpriv);

static struct rk1828_job *to_rk1828_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct rk1828_job, base);
}

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

	queue_work(rk1828_release_wq, &hw->release_work);
}

static const struct dma_fence_ops rk1828_hw_fence_ops = {
	.get_driver_name = rk1828_fence_driver_name,
	.get_timeline_name = rk1828_fence_timeline_name,
	.release = rk1828_hw_fence_release,
};

/* Initialise @job's hardware fence; from here on it holds its references. */
static void rk1828_hw_fence_init(struct rk1828_job *job)
{
	struct rk1828_hw_fence *hw = job->hw;
	struct rk1828_sched *sched = job->sched;

	spin_lock_init(&hw->lock);
	hw->name = sched->name;
	hw->rdev = job->rdev;
	INIT_WORK(&hw->release_work, rk1828_hw_fence_release_work);
	drm_dev_get(&hw->rdev->drm);
	__module_get(THIS_MODULE);
	dma_fence_init(&hw->base, &rk1828_hw_fence_ops, &hw->lock,
		       sched->fence_context,
		       atomic64_inc_return(&sched->fence_seqno));
	job->hw_inited = true;
}

/*
 * Free everything a job holds; the job may never have been queued. The
 * job holds references on its context and on the drm_device, so the last
 * put of either can happen here: that sends CTX_DESTROY or tears the
 * device down, which must not run on a scheduler workqueue (see
 * rk1828_sched_free_job()).
 */
static void rk1828_job_release(struct rk1828_job *job)
{
	struct rk1828_device *rdev = job->rdev;
	struct rk1828_ctx *ctx = job->ctx;
	u32 i;

	if (job->host_mapped)
		drm_gem_vunmap_unlocked(job->host_bo, &job->host_map);
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

	if (!job->host_sgt)
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
	rk1828_hw_fence_init(job);
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
	INIT_WORK(&job->release_work, rk1828_job_release_work);
	queue_work(rk1828_release_wq, &job->release_work);
}

static const struct drm_sched_backend_ops rk1828_sched_ops = {
	.run_job = rk1828_sched_run_job,
	.timedout_job = rk1828_sched_timedout_job,
	.free_job = rk1828_sched_free_job,
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

/*
 * A job of @fpriv passed run_job; the last one of a closed file hands the
 * teardown to rk1828_release_wq (not the scheduler's own workqueue, which
 * the entity teardown may wait for).
 */
static void rk1828_file_job_started(struct rk1828_file *fpriv)
{
	if (atomic_dec_and_test(&fpriv->pending))
		queue_work(rk1828_release_wq, &fpriv->free_work);
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
	if (!rk1828_bo_is_card(obj) && !rk1828_bo_is_host(obj)) {
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

	if (drm_gem_is_imported(job->host_bo)) {
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

	if (job->rdev->tops->exec)
		return rk1828_job_get_sgt(job);
	ret = drm_gem_vmap_unlocked(job->host_bo, &job->host_map);
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

/**
 * struct rk1828_submit_syncs - syncobj state of one submit
 * @in_fences: fences to wait for (references)
 * @in_count: entries in @in_fences
 * @out_syncobjs: syncobjs to signal (references)
 * @out_points: timeline point per out-syncobj, 0 for binary
 * @out_chains: preallocated chain node per timeline out-syncobj
 * @out_count: entries in the out arrays
 */
struct rk1828_submit_syncs {
	struct dma_fence *in_fences[RK1828_MAX_SUBMIT_COUNT];
	u32 in_count;
	struct drm_syncobj *out_syncobjs[RK1828_MAX_SUBMIT_COUNT];
	u64 out_points[RK1828_MAX_SUBMIT_COUNT];
	struct dma_fence_chain *out_chains[RK1828_MAX_SUBMIT_COUNT];
	u32 out_count;
};

static int rk1828_read_sync(const struct drm_rk1828_submit *args, u64 uptr,
			    u32 i, struct drm_rk1828_sync *sync)
{
	void __user *p = u64_to_user_ptr(uptr + (u64)i * args->sync_struct_size);
	int ret;

	ret = copy_struct_from_user(sync, sizeof(*sync), p,
				    args->sync_struct_size);
	if (ret == -E2BIG)
		return -EINVAL;
	if (ret)
		return ret;
	return sync->flags ? -EINVAL : 0;
}

static int rk1828_get_syncs(const struct drm_rk1828_submit *args,
			    struct drm_file *file,
			    struct rk1828_submit_syncs *syncs)
{
	struct drm_rk1828_sync sync;
	u32 i;
	int ret;

	for (i = 0; i < args->in_sync_count; i++) {
		ret = rk1828_read_sync(args, args->in_syncs, i, &sync);
		if (ret)
			return ret;
		ret = drm_syncobj_find_fence(file, sync.handle, sync.point, 0,
					     &syncs->in_fences[syncs->in_count]);
		if (ret)
			return ret;
		syncs->in_count++;
	}

	for (i = 0; i < args->out_sync_count; i++) {
		struct drm_syncobj *syncobj;

		ret = rk1828_read_sync(args, args->out_syncs, i, &sync);
		if (ret)
			return ret;
		syncobj = drm_syncobj_find(file, sync.handle);
		if (!syncobj)
			return -ENOENT;
		syncs->out_syncobjs[syncs->out_count] = syncobj;
		syncs->out_points[syncs->out_count] = sync.point;
		syncs->out_count++;
		if (sync.point) {
			syncs->out_chains[i] = dma_fence_chain_alloc();
			if (!syncs->out_chains[i])
				return -ENOMEM;
		}
	}
	return 0;
}

static void rk1828_put_syncs(struct rk1828_submit_syncs *syncs)
{
	u32 i;

	for (i = 0; i < syncs->in_count; i++)
		dma_fence_put(syncs->in_fences[i]);
	for (i = 0; i < syncs->out_count; i++) {
		drm_syncobj_put(syncs->out_syncobjs[i]);
		dma_fence_chain_free(syncs->out_chains[i]);
	}
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
				    file->client_id);
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

	/* Point of no return: from here on nothing can fail. */
	drm_sched_job_arm(&job->base);
	finished = dma_fence_get(&job->base.s_fence->finished);
	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i]->resv, finished,
				   test_bit(i, job->bo_write) ?
				   DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
	drm_gem_unlock_reservations(job->bos, job->bo_count, &acquire);

	for (i = 0; i < syncs->out_count; i++) {
		if (syncs->out_points[i]) {
			drm_syncobj_add_point(syncs->out_syncobjs[i],
					      syncs->out_chains[i], finished,
					      syncs->out_points[i]);
			syncs->out_chains[i] = NULL;
		} else {
			drm_syncobj_replace_fence(syncs->out_syncobjs[i],
						  finished);
		}
	}

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
	atomic_inc(&rk1828_live_jobs);
	__module_get(THIS_MODULE);
	job->rdev = rdev;
	drm_dev_get(&rdev->drm);
	job->ctx = rk1828_ctx_get(fpriv->ctx);
	atomic_inc(&job->ctx->jobs);

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
