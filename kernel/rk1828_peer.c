// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Card-to-card peer-to-peer DMA, importer side. A peer-window BO of
 * another rk1828 card (rk1828_p2p.c) is imported with a dynamic
 * attachment that accepts page-less memory (allow_peer2peer). Its
 * mapping, the peer BAR's bus addresses, is what this card's COPY jobs
 * give the card's DMA engine instead of host pages, so a hidden state
 * moves card to card without touching host memory. When the exporter
 * revokes the mapping (its card is unplugged), move_notify waits for
 * every job that may still use it, drops it, and jobs submitted later
 * fail with -ENODEV.
 */

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <drm/drm_prime.h>

#include "rk1828_compat.h"
#include "rk1828_drv.h"
#include "rk1828_peer.h"

static struct rk1828_peer_bo *to_rk1828_peer_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct rk1828_peer_bo, base);
}

/*
 * The exporter revokes the mapping (called with the reservation lock
 * held). Jobs of this card that use the BO have their fences in the
 * shared reservation object: wait for all of them, so no DMA of this
 * card targets the peer's window after the unmap. Waiting is safe here:
 * the jobs' fences never wait for a reservation lock, and the exporter's
 * own jobs already failed with its unplug.
 */
static void rk1828_peer_move_notify(struct dma_buf_attachment *attach)
{
	struct rk1828_peer_bo *bo = attach->importer_priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	bo->revoked = true;
	dma_resv_wait_timeout(attach->dmabuf->resv, DMA_RESV_USAGE_BOOKKEEP,
			      false, MAX_SCHEDULE_TIMEOUT);
	if (bo->sgt) {
		dma_buf_unmap_attachment(attach, bo->sgt, DMA_BIDIRECTIONAL);
		bo->sgt = NULL;
	}
}

static const struct dma_buf_attach_ops rk1828_peer_attach_ops = {
	.allow_peer2peer = true,
	.RK1828_DMABUF_INVALIDATE_OP = rk1828_peer_move_notify,
};

static void rk1828_peer_bo_free(struct drm_gem_object *obj)
{
	struct rk1828_peer_bo *bo = to_rk1828_peer_bo(obj);
	struct dma_buf_attachment *attach = bo->attach;

	if (attach) {
		struct dma_buf *dmabuf = attach->dmabuf;

		dma_resv_lock(dmabuf->resv, NULL);
		if (bo->sgt)
			dma_buf_unmap_attachment(attach, bo->sgt,
						 DMA_BIDIRECTIONAL);
		bo->sgt = NULL;
		dma_resv_unlock(dmabuf->resv);
		dma_buf_detach(dmabuf, attach);
		dma_buf_put(dmabuf);
	}
	drm_gem_object_release(obj);
	kfree(bo);
}

/**
 * DOC: peer BOs
 *
 * A peer BO is a peer card's %DRM_RK1828_BO_P2P buffer imported here. It
 * cannot be mmap()ed; a COPY job moves data between it and a card BO of
 * this card (as with a host BO), with the peer's bus addresses as the
 * card's DMA buffer. Re-exporting it gives back the original dma-buf.
 */
const struct drm_gem_object_funcs rk1828_peer_bo_funcs = {
	.free = rk1828_peer_bo_free,
};

/**
 * rk1828_peer_bo_import() - import a peer card's window BO for P2P DMA
 * @rdev: the importing card (a PCIe card: its DMA device is the function)
 * @dmabuf: a dma-buf for which rk1828_p2p_is_ours() is true, of another
 *	card
 *
 * Attaches dynamically with allow_peer2peer (the exporter refuses when
 * the PCI core does not allow P2P between the two functions) and maps
 * the buffer at once, under its reservation lock.
 *
 * Return: the new GEM object (one reference), or an ERR_PTR():
 * -EOPNOTSUPP when P2P is not possible between the cards (no
 * CONFIG_PCI_P2PDMA, topology, a USB card), -ENODEV when the exporter is
 * gone, -ENOMEM.
 */
struct drm_gem_object *rk1828_peer_bo_import(struct rk1828_device *rdev,
					     struct dma_buf *dmabuf)
{
	struct dma_buf_attachment *attach;
	struct rk1828_peer_bo *bo;
	struct sg_table *sgt;

	if (!rdev->dma_dev)
		return ERR_PTR(-EOPNOTSUPP);
	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.funcs = &rk1828_peer_bo_funcs;
	bo->base.resv = dmabuf->resv;
	drm_gem_private_object_init(&rdev->drm, &bo->base, dmabuf->size);

	attach = dma_buf_dynamic_attach(dmabuf, rdev->dma_dev,
					&rk1828_peer_attach_ops, bo);
	if (IS_ERR(attach)) {
		drm_gem_object_put(&bo->base);
		return ERR_CAST(attach);
	}
	get_dma_buf(dmabuf);
	bo->attach = attach;
	bo->base.import_attach = attach;

	dma_resv_lock(dmabuf->resv, NULL);
	sgt = dma_buf_map_attachment(attach, DMA_BIDIRECTIONAL);
	if (!IS_ERR(sgt))
		bo->sgt = sgt;
	dma_resv_unlock(dmabuf->resv);
	if (IS_ERR(sgt)) {
		drm_gem_object_put(&bo->base);
		return ERR_CAST(sgt);
	}
	return &bo->base;
}

/**
 * rk1828_peer_bo_sgt() - the mapping a job of this card may use
 * @obj: a peer BO; the caller holds its reservation lock and adds its
 *	job's fence before dropping it, so a later revocation waits for
 *	that job
 *
 * Return: the sg_table of bus addresses, or ERR_PTR(-ENODEV) once the
 * exporter revoked it.
 */
struct sg_table *rk1828_peer_bo_sgt(struct drm_gem_object *obj)
{
	struct rk1828_peer_bo *bo = to_rk1828_peer_bo(obj);

	dma_resv_assert_held(obj->resv);
	if (bo->revoked || !bo->sgt)
		return ERR_PTR(-ENODEV);
	return bo->sgt;
}
