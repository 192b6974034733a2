/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Buffer objects of the RK1828 driver: host BOs (GEM shmem, also the ones
 * imported by PRIME) and card BOs (a range of card memory).
 */
#ifndef __RK1828_GEM_H__
#define __RK1828_GEM_H__

#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>

struct dma_buf;
struct drm_device;
struct drm_file;
struct rk1828_ctx;

/**
 * struct rk1828_card_bo - a buffer in card memory
 * @base: GEM object (private: no shmem backing, not mmap-able; only
 *	@p2p BOs are exportable)
 * @node: range of card memory, [node.start, node.start + node.size)
 * @ctx: context the range is mapped into (holds a reference)
 * @mapped: the MAP may have been applied on the card (UNMAP is due)
 * @p2p: the range lies in the card's peer window (%DRM_RK1828_BO_P2P):
 *	exportable as a P2P dma-buf (rk1828_p2p.c)
 * @revoked: the card is gone and the mappings of the dma-buf were
 *	revoked; protected by the reservation lock
 * @dmabuf: the live dma-buf of a @p2p BO (no reference: it holds one on
 *	the BO), NULL when none; protected by &rk1828_p2p.lock
 * @export_node: entry in &rk1828_p2p.exports while @dmabuf is set
 * @quarantine: entry in &rk1828_device.mm_quarantine once freed with a
 *	failed UNMAP
 */
struct rk1828_card_bo {
	struct drm_gem_object base;
	struct drm_mm_node node;
	struct rk1828_ctx *ctx;
	bool mapped;
	bool p2p;
	bool revoked;
	struct dma_buf *dmabuf;
	struct list_head export_node;
	struct list_head quarantine;
};

extern const struct drm_gem_object_funcs rk1828_card_bo_funcs;
extern const struct drm_gem_object_funcs rk1828_host_bo_funcs;

static inline bool rk1828_bo_is_card(const struct drm_gem_object *obj)
{
	return obj->funcs == &rk1828_card_bo_funcs;
}

static inline bool rk1828_bo_is_host(const struct drm_gem_object *obj)
{
	return obj->funcs == &rk1828_host_bo_funcs;
}

static inline struct rk1828_card_bo *to_rk1828_card_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct rk1828_card_bo, base);
}

struct drm_gem_object *rk1828_gem_create_object(struct drm_device *drm,
						size_t size);
struct drm_gem_object *rk1828_gem_prime_import(struct drm_device *drm,
					       struct dma_buf *dma_buf);
int rk1828_ioctl_bo_create(struct drm_device *drm, void *data,
			   struct drm_file *file);
int rk1828_ioctl_bo_info(struct drm_device *drm, void *data,
			 struct drm_file *file);
int rk1828_ioctl_bo_wait(struct drm_device *drm, void *data,
			 struct drm_file *file);

#endif /* __RK1828_GEM_H__ */
