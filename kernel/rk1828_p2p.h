/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Card-to-card peer-to-peer DMA, exporter side: the card's peer window (a
 * PCIe BAR over the top of card memory), card BOs in it exported as
 * dma-bufs with bus addresses, the P2P_QUERY ioctl and revocation at
 * unplug. The importer side is rk1828_peer.c.
 */
#ifndef __RK1828_P2P_H__
#define __RK1828_P2P_H__

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>

struct device;
struct dma_buf;
struct drm_device;
struct drm_file;
struct drm_gem_object;
struct pci_dev;
struct rk1828_device;

/**
 * struct rk1828_p2p - the card's peer window and P2P accounting
 * @pdev: the PCI function whose BAR is the window; NULL: no window
 * @phys: CPU physical address of window offset 0 (the BAR's resource)
 * @base: card address of window offset 0
 * @size: window bytes (0: none); card BOs with %DRM_RK1828_BO_P2P live in
 *	[@base, @base + @size), all others below @base
 * @lock: protects @exports; taken before any reservation lock
 * @exports: card BOs with a live dma-buf (&rk1828_card_bo.export_node)
 * @p2p_bytes: bytes COPY jobs of this card moved to or from a peer card's
 *	window (imported %DRM_RK1828_BO_PEER BOs)
 * @bounce_bytes: bytes COPY jobs of this card moved to or from host
 *	memory (host BOs)
 */
struct rk1828_p2p {
	struct pci_dev *pdev;
	phys_addr_t phys;
	u64 base;
	u64 size;
	struct mutex lock; /* protects exports */
	struct list_head exports;
	atomic64_t p2p_bytes;
	atomic64_t bounce_bytes;
};

void rk1828_p2p_init(struct rk1828_device *rdev);
void rk1828_p2p_set_window(struct rk1828_device *rdev, struct pci_dev *pdev,
			   int bar, u64 base);
void rk1828_p2p_check_window(struct rk1828_device *rdev);
bool rk1828_p2p_is_ours(const struct dma_buf *dmabuf);
struct dma_buf *rk1828_p2p_export(struct drm_gem_object *obj, int flags);
void rk1828_p2p_revoke_all(struct rk1828_device *rdev);
int rk1828_ioctl_p2p_query(struct drm_device *drm, void *data,
			   struct drm_file *file);

#endif /* __RK1828_P2P_H__ */
