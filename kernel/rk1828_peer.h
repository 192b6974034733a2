/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Card-to-card peer-to-peer DMA, importer side: a peer card's
 * peer-window BO imported by PRIME with a dynamic, P2P-capable
 * attachment (rk1828_peer.c).
 */
#ifndef __RK1828_PEER_H__
#define __RK1828_PEER_H__

#include <drm/drm_gem.h>

struct dma_buf;
struct dma_buf_attachment;
struct rk1828_device;
struct sg_table;

/**
 * struct rk1828_peer_bo - a peer card's window BO imported for P2P DMA
 * @base: GEM object; its reservation object is the dma-buf's
 * @attach: the dynamic attachment for this card's DMA device
 * @sgt: the mapping (bus addresses, no pages), NULL once revoked;
 *	protected by the reservation lock
 * @revoked: the exporter revoked the mapping (its card is gone): jobs
 *	submitted from then on fail with -ENODEV; protected by the
 *	reservation lock
 */
struct rk1828_peer_bo {
	struct drm_gem_object base;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	bool revoked;
};

extern const struct drm_gem_object_funcs rk1828_peer_bo_funcs;

static inline bool rk1828_bo_is_peer(const struct drm_gem_object *obj)
{
	return obj->funcs == &rk1828_peer_bo_funcs;
}

struct drm_gem_object *rk1828_peer_bo_import(struct rk1828_device *rdev,
					     struct dma_buf *dmabuf);
struct sg_table *rk1828_peer_bo_sgt(struct drm_gem_object *obj);

#endif /* __RK1828_PEER_H__ */
