/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * The syncobjs of one SUBMIT: the in-fences a job waits for and the
 * out-syncobjs that get its finished fence (uapi struct drm_rk1828_sync).
 */
#ifndef __RK1828_SYNCS_H__
#define __RK1828_SYNCS_H__

#include <linux/types.h>

#include "rk1828_drv.h"

struct dma_fence;
struct dma_fence_chain;
struct drm_file;
struct drm_rk1828_submit;
struct drm_syncobj;

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

int rk1828_get_syncs(const struct drm_rk1828_submit *args,
		     struct drm_file *file,
		     struct rk1828_submit_syncs *syncs);
void rk1828_put_syncs(struct rk1828_submit_syncs *syncs);
void rk1828_set_out_syncs(struct rk1828_submit_syncs *syncs,
			  struct dma_fence *finished);

#endif /* __RK1828_SYNCS_H__ */
