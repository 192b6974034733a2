// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Rockchip RK1828 NPU card accel driver: drm_driver, ioctl table, device
 * and card-context lifetime, module entry points.
 */

#include <linux/module.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/rk1828_accel.h>

#include "rk1828_compat.h"
#include "rk1828_drv.h"
#include "rk1828_hif_engine.h"
#include "rk1828_gem.h"
#include "rk1828_job.h"
#include "rk1828_netlink.h"
#include "rk1828_p2p.h"
#include "rk1828_telemetry.h"

static unsigned int rk1828_job_timeout_ms = 20000;
module_param_named(job_timeout_ms, rk1828_job_timeout_ms, uint, 0644);
MODULE_PARM_DESC(job_timeout_ms,
		 "Job timeout in milliseconds for cards probed afterwards; a job running longer resets the card's queues and fails with -ETIMEDOUT (default 20000)");

/*
 * Give a context id back once the card confirmed the context gone; an id
 * whose fate stays unknown is parked on &rk1828_device.ctx_lost and never
 * handed out until a later CTX_DESTROY confirms it (rk1828_ctx_reclaim()).
 */
static void rk1828_ctx_id_put(struct rk1828_device *rdev, u32 id,
			      bool confirmed)
{
	struct rk1828_lost_ctx *lost;

	if (confirmed) {
		ida_free(&rdev->ctx_ida, id);
		return;
	}
	drm_warn(&rdev->drm, "context %u: state on the card unknown, id parked\n",
		 id);
	lost = kmalloc(sizeof(*lost), GFP_KERNEL);
	if (!lost)
		return;	/* the id stays allocated: never reused */
	lost->id = id;
	mutex_lock(&rdev->ctx_lock);
	list_add_tail(&lost->node, &rdev->ctx_lost);
	mutex_unlock(&rdev->ctx_lock);
}

/* Retry CTX_DESTROY of the parked ids; free the ones the card confirms. */
static void rk1828_ctx_reclaim(struct rk1828_device *rdev)
{
	struct rk1828_lost_ctx *lost, *next;
	LIST_HEAD(retry);

	mutex_lock(&rdev->ctx_lock);
	list_splice_init(&rdev->ctx_lost, &retry);
	mutex_unlock(&rdev->ctx_lock);

	list_for_each_entry_safe(lost, next, &retry, node) {
		if (rk1828_hif_mgmt_confirmed(rdev, RK1828_HIF_OP_CTX_DESTROY,
					      lost->id, 0))
			continue;
		list_del(&lost->node);
		ida_free(&rdev->ctx_ida, lost->id);
		kfree(lost);
	}
	mutex_lock(&rdev->ctx_lock);
	list_splice(&retry, &rdev->ctx_lost);
	mutex_unlock(&rdev->ctx_lock);
}

static void rk1828_ctx_release(struct kref *ref)
{
	struct rk1828_ctx *ctx = container_of(ref, struct rk1828_ctx, ref);
	struct rk1828_device *rdev = ctx->rdev;
	int ret = 0;

	/*
	 * The context may still live on the card with its mappings unless
	 * the card confirms it gone: never hand its id to another file
	 * before that. A card that is gone took everything with it.
	 */
	if (!rk1828_is_gone(rdev))
		ret = rk1828_hif_mgmt_confirmed(rdev, RK1828_HIF_OP_CTX_DESTROY,
						ctx->id, 0);
	mutex_lock(&rdev->ctx_lock);
	list_del(&ctx->node);
	mutex_unlock(&rdev->ctx_lock);
	rk1828_ctx_id_put(rdev, ctx->id, !ret || ret == -ENODEV);
	kfree(ctx);
}

/**
 * rk1828_ctx_get() - take a reference on a context
 * @ctx: the context
 *
 * Return: @ctx.
 */
struct rk1828_ctx *rk1828_ctx_get(struct rk1828_ctx *ctx)
{
	kref_get(&ctx->ref);
	return ctx;
}

/**
 * rk1828_ctx_put() - drop a context reference
 * @ctx: the context, or NULL
 *
 * The last reference destroys the context on the card (unless the card is
 * gone) and frees its id.
 *
 * Context: process context, may sleep.
 */
void rk1828_ctx_put(struct rk1828_ctx *ctx)
{
	if (ctx)
		kref_put(&ctx->ref, rk1828_ctx_release);
}

/*
 * CTX_CREATE of @id, safe against "applied but not acknowledged": a
 * create whose answer was lost is undone with a confirmed CTX_DESTROY
 * (else the id is parked), and a card that says the context already
 * exists holds a stale one from such a create, which is destroyed before
 * the create is sent once more.
 */
static int rk1828_ctx_create_on_card(struct rk1828_device *rdev, u32 id,
				     bool *id_free)
{
	enum rk1828_hif_fate fate;
	int ret;

	*id_free = true;
	ret = rk1828_hif_mgmt(rdev, RK1828_HIF_OP_CTX_CREATE, id, 0, 0, &fate);
	if (ret == -EINVAL && fate == RK1828_HIF_ANSWERED &&
	    !rk1828_hif_mgmt_confirmed(rdev, RK1828_HIF_OP_CTX_DESTROY, id, 0))
		ret = rk1828_hif_mgmt(rdev, RK1828_HIF_OP_CTX_CREATE, id, 0, 0,
				      &fate);
	if (ret && fate == RK1828_HIF_UNKNOWN)
		*id_free = !rk1828_hif_mgmt_confirmed(rdev,
						      RK1828_HIF_OP_CTX_DESTROY,
						      id, 0);
	return ret;
}

static struct rk1828_ctx *rk1828_ctx_create(struct rk1828_device *rdev)
{
	struct rk1828_ctx *ctx;
	bool id_free;
	int ret;

	if (!list_empty_careful(&rdev->ctx_lost))
		rk1828_ctx_reclaim(rdev);

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return ERR_PTR(-ENOMEM);

	ret = ida_alloc_range(&rdev->ctx_ida, 1, rdev->max_ctx, GFP_KERNEL);
	if (ret < 0) {
		kfree(ctx);
		return ERR_PTR(ret == -ENOSPC ? -EBUSY : ret);
	}
	ctx->id = ret;
	ctx->rdev = rdev;
	kref_init(&ctx->ref);
	atomic_set(&ctx->jobs, 0);
	atomic64_set(&ctx->submitted, 0);
	atomic_set(&ctx->timeouts, 0);

	ret = rk1828_ctx_create_on_card(rdev, ctx->id, &id_free);
	if (ret) {
		drm_dbg_driver(&rdev->drm, "CTX_CREATE %u failed: %d\n",
			       ctx->id, ret);
		rk1828_ctx_id_put(rdev, ctx->id, id_free);
		kfree(ctx);
		return ERR_PTR(ret);
	}

	mutex_lock(&rdev->ctx_lock);
	list_add_tail(&ctx->node, &rdev->ctx_list);
	mutex_unlock(&rdev->ctx_lock);
	return ctx;
}

static int rk1828_open(struct drm_device *drm, struct drm_file *file)
{
	struct rk1828_device *rdev = to_rk1828_device(drm);
	struct rk1828_file *fpriv;
	int ret, idx;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	fpriv = kzalloc(sizeof(*fpriv), GFP_KERNEL);
	if (!fpriv) {
		ret = -ENOMEM;
		goto out_exit;
	}
	fpriv->rdev = rdev;
	mutex_init(&fpriv->submit_lock);

	fpriv->ctx = rk1828_ctx_create(rdev);
	if (IS_ERR(fpriv->ctx)) {
		ret = PTR_ERR(fpriv->ctx);
		goto out_free;
	}

	ret = rk1828_file_sched_init(fpriv);
	if (ret)
		goto out_ctx;

	file->driver_priv = fpriv;
	drm_dev_exit(idx);
	return 0;

out_ctx:
	rk1828_ctx_put(fpriv->ctx);
out_free:
	mutex_destroy(&fpriv->submit_lock);
	kfree(fpriv);
out_exit:
	drm_dev_exit(idx);
	return ret;
}

/*
 * Close and exit alike: jobs that have not started on the card are
 * cancelled, a running one finishes, nothing waits for the card
 * (rk1828_file_close(), driver.rst "Closing a file").
 */
static void rk1828_postclose(struct drm_device *drm, struct drm_file *file)
{
	rk1828_file_close(file->driver_priv);
}

static int rk1828_ioctl_get_param(struct drm_device *drm, void *data,
				  struct drm_file *file)
{
	struct rk1828_device *rdev = to_rk1828_device(drm);
	struct rk1828_file *fpriv = file->driver_priv;
	struct drm_rk1828_get_param *args = data;
	int ret = 0, idx;

	if (args->pad)
		return -EINVAL;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	switch (args->param) {
	case DRM_RK1828_PARAM_PROTOCOL_VERSION:
		args->value = rdev->version;
		break;
	case DRM_RK1828_PARAM_CARD_MEM_SIZE:
		args->value = rdev->mem_size - RK1828_CARD_ALIGN;
		break;
	case DRM_RK1828_PARAM_CARD_MEM_FREE:
		mutex_lock(&rdev->mm_lock);
		args->value = rdev->mem_free;
		mutex_unlock(&rdev->mm_lock);
		break;
	case DRM_RK1828_PARAM_LINK_TYPE:
		args->value = rdev->link_type;
		break;
	case DRM_RK1828_PARAM_LINK_SPEED:
		args->value = rdev->link_speed;
		break;
	case DRM_RK1828_PARAM_CARD_SERIAL:
		args->value = rdev->serial;
		break;
	case DRM_RK1828_PARAM_CAPABILITIES:
		args->value = DRM_RK1828_CAP_TIMELINE_SYNCOBJ |
			      DRM_RK1828_CAP_EXEC_DECODER | DRM_RK1828_CAP_P2P;
		if (rdev->dma_dev)
			args->value |= DRM_RK1828_CAP_PRIME_IMPORT;
		break;
	case DRM_RK1828_PARAM_NUM_QUEUES:
		args->value = RK1828_SCHED_NUM;
		break;
	case DRM_RK1828_PARAM_CONTEXT_ID:
		args->value = fpriv->ctx->id;
		break;
	case DRM_RK1828_PARAM_CARD_STATE:
		args->value = rk1828_is_dead(rdev) ? DRM_RK1828_CARD_DEAD :
			      DRM_RK1828_CARD_OK;
		break;
	case DRM_RK1828_PARAM_P2P_WINDOW:
		args->value = rdev->p2p.size;
		break;
	default:
		ret = -EINVAL;
		break;
	}
	drm_dev_exit(idx);
	return ret;
}

static const struct drm_ioctl_desc rk1828_ioctls[] = {
	DRM_IOCTL_DEF_DRV(RK1828_GET_PARAM, rk1828_ioctl_get_param, 0),
	DRM_IOCTL_DEF_DRV(RK1828_BO_CREATE, rk1828_ioctl_bo_create, 0),
	DRM_IOCTL_DEF_DRV(RK1828_BO_INFO, rk1828_ioctl_bo_info, 0),
	DRM_IOCTL_DEF_DRV(RK1828_SUBMIT, rk1828_ioctl_submit, 0),
	DRM_IOCTL_DEF_DRV(RK1828_BO_WAIT, rk1828_ioctl_bo_wait, 0),
	DRM_IOCTL_DEF_DRV(RK1828_P2P_QUERY, rk1828_ioctl_p2p_query, 0),
};

/*
 * Driver version, &drm_driver.major and .minor (DRM_IOCTL_VERSION). The
 * minor grows with every backwards-compatible uapi addition, the major
 * would only change with an incompatible ABI (never, upstream):
 *
 * 1.0 - GET_PARAM, BO_CREATE, BO_INFO, SUBMIT (COPY, EXEC; binary and
 *       timeline syncobjs), BO_WAIT
 * 1.1 - GET_PARAM CARD_STATE (dead card); SUBMIT -ECANCELED for a banned
 *       context; jobs of a closed file and jobs whose dependency failed
 *       are cancelled; legacy and master core ioctls refused (-EACCES)
 * 1.2 - card-to-card P2P: GET_PARAM P2P_WINDOW, CAP_P2P, BO_CREATE
 *       BO_P2P (exportable peer-window card BOs), BO_INFO BO_PEER,
 *       P2P_QUERY
 */
#define RK1828_DRIVER_MAJOR	1
#define RK1828_DRIVER_MINOR	2

static const struct drm_driver rk1828_drm_driver = {
	.driver_features = DRIVER_COMPUTE_ACCEL | DRIVER_GEM |
			   DRIVER_SYNCOBJ | DRIVER_SYNCOBJ_TIMELINE,
	.open = rk1828_open,
	.postclose = rk1828_postclose,
	.ioctls = rk1828_ioctls,
	.num_ioctls = ARRAY_SIZE(rk1828_ioctls),
	.fops = &rk1828_accel_fops,
	.gem_create_object = rk1828_gem_create_object,
	.gem_prime_import = rk1828_gem_prime_import,
	.gem_prime_import_sg_table = drm_gem_shmem_prime_import_sg_table,
	.name = RK1828_DRIVER_NAME,
	.desc = RK1828_DRIVER_DESC,
	.major = RK1828_DRIVER_MAJOR,
	.minor = RK1828_DRIVER_MINOR,
};

/**
 * rk1828_device_alloc() - allocate the device of one card
 * @parent: the transport's device (the USB interface); the drm_device is
 *	devres-managed on it
 *
 * The caller sets &rk1828_device.tops, .transport, .dma_dev, .link_type,
 * .link_speed and .bounce_size and then calls rk1828_device_register().
 *
 * Return: the device or an ERR_PTR().
 */
struct rk1828_device *rk1828_device_alloc(struct device *parent)
{
	struct rk1828_device *rdev;

	rdev = devm_drm_dev_alloc(parent, &rk1828_drm_driver,
				  struct rk1828_device, drm);
	if (IS_ERR(rdev))
		return rdev;

	atomic_set(&rdev->gone, 0);
	atomic_set(&rdev->dead, 0);
	atomic_set(&rdev->fault_fail_mgmt, 0);
	atomic_set(&rdev->fault_lose_mgmt, 0);
	atomic_set(&rdev->fault_fail_reset, 0);
	init_rwsem(&rdev->xfer_sem);
	mutex_init(&rdev->reset_lock);
	atomic_set(&rdev->reset_gen, 0);
	init_waitqueue_head(&rdev->reset_wq);
	atomic64_set(&rdev->resets, 0);
	mutex_init(&rdev->mm_lock);
	ida_init(&rdev->ctx_ida);
	mutex_init(&rdev->ctx_lock);
	INIT_LIST_HEAD(&rdev->ctx_list);
	INIT_LIST_HEAD(&rdev->ctx_lost);
	INIT_LIST_HEAD(&rdev->mm_quarantine);
	rk1828_p2p_init(rdev);
	rdev->job_timeout_ms = max(rk1828_job_timeout_ms, 1U);
	return rdev;
}

static void rk1828_hif_release(struct drm_device *drm, void *data)
{
	rk1828_hif_fini(to_rk1828_device(drm));
}

static void rk1828_mm_release(struct drm_device *drm, void *data)
{
	struct rk1828_device *rdev = to_rk1828_device(drm);
	struct rk1828_lost_ctx *lost, *lost_next;
	struct rk1828_card_bo *bo, *next;

	list_for_each_entry_safe(lost, lost_next, &rdev->ctx_lost, node) {
		list_del(&lost->node);
		kfree(lost);
	}
	list_for_each_entry_safe(bo, next, &rdev->mm_quarantine, quarantine) {
		list_del(&bo->quarantine);
		drm_mm_remove_node(&bo->node);
		kfree(bo);
	}
	drm_mm_takedown(&rdev->mm);
	ida_destroy(&rdev->ctx_ida);
}

/**
 * rk1828_device_register() - bring up a card and register its accel node
 * @rdev: device from rk1828_device_alloc() with the transport filled in
 *
 * Queries the card with INFO, sets up the card-memory allocator and the
 * schedulers, registers the drm_device and gives the card its netlink
 * index (card-add event). Everything set up here is released with the
 * drm_device.
 *
 * Return: 0 or a negative errno.
 */
int rk1828_device_register(struct rk1828_device *rdev)
{
	struct drm_device *drm = &rdev->drm;
	int ret;

	ret = rk1828_hif_init(rdev);
	if (ret)
		return ret;
	ret = drmm_add_action_or_reset(drm, rk1828_hif_release, NULL);
	if (ret)
		return ret;

	ret = rk1828_hif_info(rdev);
	if (ret) {
		drm_err(drm, "card did not answer INFO: %d\n", ret);
		return ret;
	}
	ret = rk1828_telemetry_init(rdev);
	if (ret)
		return ret;

	/* Card address 0 is never valid: the first granule is reserved. */
	drm_mm_init(&rdev->mm, RK1828_CARD_ALIGN,
		    rdev->mem_size - RK1828_CARD_ALIGN);
	rdev->mem_free = rdev->mem_size - RK1828_CARD_ALIGN;
	ret = drmm_add_action_or_reset(drm, rk1828_mm_release, NULL);
	if (ret)
		return ret;
	rk1828_p2p_check_window(rdev);

	ret = rk1828_sched_init_all(rdev);
	if (ret)
		return ret;

	ret = drm_dev_register(drm, 0);
	if (ret)
		return ret;
	rk1828_debugfs_init(rdev);
	ret = rk1828_nl_card_add(rdev);
	if (ret) {
		drm_dev_unregister(drm);
		return ret;
	}

	drm_info(drm, "RK1828 card %016llx: %llu MiB, protocol %u.%u, fw \"%s\", %s %u Mbit/s, %u contexts\n",
		 rdev->serial, rdev->mem_size >> 20, rdev->version >> 16,
		 rdev->version & 0xffff, rdev->fw,
		 rdev->link_type == DRM_RK1828_LINK_USB ? "USB" : "PCIe",
		 rdev->link_speed, rdev->max_ctx);
	return 0;
}

/**
 * rk1828_device_unplug() - the card is gone
 * @rdev: the card
 *
 * Marks the card gone, aborts every transfer (running and queued jobs fail
 * with -ENODEV), wakes every waiter, takes the card out of the netlink
 * registry (card-remove event) and unplugs the drm_device: ioctls return
 * -ENODEV from now on, memory is freed when the last file closes.
 *
 * Context: process context (the transport's remove/disconnect).
 */
void rk1828_device_unplug(struct rk1828_device *rdev)
{
	atomic_set(&rdev->gone, 1);
	/* No transfer starts after this point, ... */
	down_write(&rdev->xfer_sem);
	up_write(&rdev->xfer_sem);
	/* ... and the ones in flight are cancelled. */
	rdev->tops->abort(rdev);
	wake_up_all(&rdev->reset_wq);
	rk1828_nl_card_remove(rdev);
	drm_dev_unplug(&rdev->drm);
	/* After our jobs failed: importers wait for theirs and unmap. */
	rk1828_p2p_revoke_all(rdev);
}

static int __init rk1828_init(void)
{
	int ret;

	ret = rk1828_job_module_init();
	if (ret)
		return ret;
	ret = rk1828_netlink_register();
	if (ret)
		goto err_job;
	ret = rk1828_usb_register();
	if (ret)
		goto err_netlink;
	ret = rk1828_pci_register();
	if (ret)
		goto err_usb;
	return 0;

err_usb:
	rk1828_usb_unregister();
err_netlink:
	rk1828_netlink_unregister();
err_job:
	rk1828_job_module_exit();
	return ret;
}

static void __exit rk1828_exit(void)
{
	rk1828_pci_unregister();
	rk1828_usb_unregister();
	rk1828_netlink_unregister();
	rk1828_job_module_exit();
}

module_init(rk1828_init);
module_exit(rk1828_exit);

MODULE_AUTHOR("The rk1828 authors");
MODULE_DESCRIPTION("Rockchip RK1828 NPU card accel driver");
MODULE_LICENSE("Dual MIT/GPL");
RK1828_IMPORT_NS_DMA_BUF();
