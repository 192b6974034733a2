/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * The job object, private to the job files: what SUBMIT builds
 * (rk1828_submit.c), the scheduler backend runs (rk1828_sched.c) and
 * rk1828_job.c releases, and the release workqueue every deferred teardown
 * (job, file, hardware fence) runs on.
 */
#ifndef __RK1828_JOB_PRIV_H__
#define __RK1828_JOB_PRIV_H__

#include <linux/bitmap.h>
#include <linux/iosys-map.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <drm/gpu_scheduler.h>

#include "rk1828_drv.h"

struct dma_fence;
struct drm_gem_object;
struct rk1828_hw_fence;
struct sg_table;

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
 * @host_peer: @host_bo is a peer BO (rk1828_peer.c): @host_sgt holds a
 *	peer card's bus addresses, set under the reservation lock at push
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
	bool host_peer;
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

static inline struct rk1828_job *to_rk1828_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct rk1828_job, base);
}

void rk1828_job_init(struct rk1828_job *job, struct rk1828_device *rdev,
		     struct rk1828_ctx *ctx);
void rk1828_job_release(struct rk1828_job *job);
void rk1828_job_queue_release(struct rk1828_job *job);
void rk1828_queue_release_work(struct work_struct *work);
void rk1828_file_job_started(struct rk1828_file *fpriv);

#endif /* __RK1828_JOB_PRIV_H__ */
