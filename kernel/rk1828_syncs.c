// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Syncobjs of SUBMIT: the in- and out-sync arrays copied from userspace
 * (extensible struct drm_rk1828_sync), their fences and syncobjs looked
 * up, and the job's finished fence installed in the out-syncobjs (binary:
 * replaced; timeline: a new point, its chain node preallocated).
 */

#include <linux/dma-fence-chain.h>
#include <linux/uaccess.h>
#include <drm/drm_file.h>
#include <drm/drm_syncobj.h>
#include <drm/rk1828_accel.h>

#include "rk1828_syncs.h"

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

/**
 * rk1828_get_syncs() - copy and look up the syncobjs of a submit
 * @args: the submit, its counts and struct size checked
 * @file: the caller, whose syncobj handles they are
 * @syncs: zeroed; filled with references even on failure
 *
 * Return: 0; -EFAULT, -EINVAL (bad struct or flags), -ENOENT (no such
 * syncobj or no fence at the point) or -ENOMEM. rk1828_put_syncs() drops
 * what was taken in either case.
 */
int rk1828_get_syncs(const struct drm_rk1828_submit *args,
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

/**
 * rk1828_put_syncs() - drop what rk1828_get_syncs() took and nothing used
 * @syncs: the submit's syncs
 */
void rk1828_put_syncs(struct rk1828_submit_syncs *syncs)
{
	u32 i;

	for (i = 0; i < syncs->in_count; i++)
		dma_fence_put(syncs->in_fences[i]);
	for (i = 0; i < syncs->out_count; i++) {
		drm_syncobj_put(syncs->out_syncobjs[i]);
		dma_fence_chain_free(syncs->out_chains[i]);
	}
}

/**
 * rk1828_set_out_syncs() - give the out-syncobjs the job's finished fence
 * @syncs: the submit's syncs; the timeline chain nodes are consumed
 * @finished: the job's finished fence (the syncobjs take references)
 *
 * Cannot fail: called after the job is armed.
 */
void rk1828_set_out_syncs(struct rk1828_submit_syncs *syncs,
			  struct dma_fence *finished)
{
	u32 i;

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
}
