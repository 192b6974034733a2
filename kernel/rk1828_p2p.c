// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Card-to-card peer-to-peer DMA, exporter side. A PCIe card may expose
 * the top of its memory as a BAR, its peer window (protocol.rst, "Peer
 * window"). Card BOs created there (%DRM_RK1828_BO_P2P) are exported as
 * dma-bufs with their own &dma_buf_ops: attach admits only importers that
 * handle page-less memory (allow_peer2peer) and that the PCI core lets
 * reach the BAR (pci_p2pdma_distance()), map hands out the BO's bus
 * address from dma_map_resource() in an sg_table without struct pages,
 * and unplug revokes every mapping with dma_buf_move_notify() under the
 * reservation lock. Card memory never moves, so nothing else ever
 * invalidates a mapping.
 */

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/file.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>
#include <drm/rk1828_accel.h>

#include "rk1828_compat.h"
#include "rk1828_drv.h"
#include "rk1828_gem.h"
#include "rk1828_p2p.h"

/* Largest window the driver uses: one sg entry (a 32-bit length) maps a BO. */
#define RK1828_P2P_MAX_WINDOW	SZ_2G

/**
 * rk1828_p2p_init() - initialise the P2P state of a new device
 * @rdev: the card, just allocated; no window until a transport sets one
 */
void rk1828_p2p_init(struct rk1828_device *rdev)
{
	struct rk1828_p2p *p2p = &rdev->p2p;

	mutex_init(&p2p->lock);
	INIT_LIST_HEAD(&p2p->exports);
	atomic64_set(&p2p->p2p_bytes, 0);
	atomic64_set(&p2p->bounce_bytes, 0);
}

/**
 * rk1828_p2p_set_window() - record the card's peer window
 * @rdev: the card, before rk1828_device_register()
 * @pdev: its PCI function
 * @bar: the BAR of the window (a memory BAR of a power-of-two size)
 * @base: card address of BAR offset 0, from the card's registers
 *
 * Where the kernel has CONFIG_PCI_P2PDMA the BAR is also registered with
 * pci_p2pdma_add_resource(), as providers of peer memory do; a failure
 * there only costs the window (the card keeps the host path).
 */
void rk1828_p2p_set_window(struct rk1828_device *rdev, struct pci_dev *pdev,
			   int bar, u64 base)
{
	struct rk1828_p2p *p2p = &rdev->p2p;
	u64 size = pci_resource_len(pdev, bar);
	int ret;

	if (!size || !(pci_resource_flags(pdev, bar) & IORESOURCE_MEM))
		return;
	if (pci_resource_flags(pdev, bar) & IORESOURCE_UNSET) {
		pci_warn(pdev, "peer window BAR%d has no address: host path only\n",
			 bar);
		return;
	}
	if (IS_ENABLED(CONFIG_PCI_P2PDMA)) {
		ret = pci_p2pdma_add_resource(pdev, bar, 0, 0);
		if (ret) {
			pci_warn(pdev, "peer window BAR%d not usable for P2P DMA: %d\n",
				 bar, ret);
			return;
		}
	}
	p2p->pdev = pdev;
	p2p->phys = pci_resource_start(pdev, bar);
	p2p->base = base;
	p2p->size = size;
}

/**
 * rk1828_p2p_check_window() - check the window against the card's memory
 * @rdev: the card, after INFO told its memory size
 *
 * A window that is not a power of two, larger than the driver maps with
 * one sg entry, not 4 KiB aligned or not inside card memory above the
 * reserved first granule is ignored (with a warning).
 */
void rk1828_p2p_check_window(struct rk1828_device *rdev)
{
	struct rk1828_p2p *p2p = &rdev->p2p;
	u64 end;

	if (!p2p->size)
		return;
	if (!is_power_of_2(p2p->size) || p2p->size > RK1828_P2P_MAX_WINDOW ||
	    !IS_ALIGNED(p2p->base, RK1828_CARD_BO_ALIGN) ||
	    p2p->base < RK1828_CARD_ALIGN ||
	    check_add_overflow(p2p->base, p2p->size, &end) ||
	    end > rdev->mem_size) {
		drm_warn(&rdev->drm, "peer window %#llx+%#llx outside card memory (%#llx): not used\n",
			 p2p->base, p2p->size, rdev->mem_size);
		p2p->pdev = NULL;
		p2p->size = 0;
		return;
	}
	drm_info(&rdev->drm, "peer window: card %#llx+%llu MiB at %pa%s\n",
		 p2p->base, p2p->size >> 20, &p2p->phys,
		 IS_ENABLED(CONFIG_PCI_P2PDMA) ? "" :
		 " (no CONFIG_PCI_P2PDMA: host path only)");
}

/*
 * The kernel's verdict on @client (a DMA device) reaching @rdev's window:
 * its distance, or -1 when P2P is impossible (no window, no P2PDMA in the
 * kernel, a topology the PCI core does not allow).
 */
static int rk1828_p2p_distance(struct rk1828_device *rdev,
			       struct device *client, bool verbose)
{
	if (!rdev->p2p.pdev || !IS_ENABLED(CONFIG_PCI_P2PDMA))
		return -1;
	return pci_p2pdma_distance(rdev->p2p.pdev, client, verbose);
}

static struct rk1828_card_bo *rk1828_p2p_bo(struct dma_buf *dmabuf)
{
	return to_rk1828_card_bo(dmabuf->priv);
}

static int rk1828_p2p_attach(struct dma_buf *dmabuf,
			     struct dma_buf_attachment *attach)
{
	struct rk1828_card_bo *bo = rk1828_p2p_bo(dmabuf);
	struct rk1828_device *rdev = to_rk1828_device(bo->base.dev);

	/* Window memory has no struct pages: only P2P-aware importers. */
	if (!attach->peer2peer)
		return -EOPNOTSUPP;
	if (rk1828_p2p_distance(rdev, attach->dev, true) < 0)
		return -EOPNOTSUPP;
	if (rk1828_is_gone(rdev))
		return -ENODEV;
	return 0;
}

/* Card memory never moves: pinning only checks it is still there. */
static int rk1828_p2p_pin(struct dma_buf_attachment *attach)
{
	struct rk1828_card_bo *bo = rk1828_p2p_bo(attach->dmabuf);

	dma_resv_assert_held(bo->base.resv);
	return bo->revoked ? -ENODEV : 0;
}

static void rk1828_p2p_unpin(struct dma_buf_attachment *attach)
{
}

static struct sg_table *rk1828_p2p_map(struct dma_buf_attachment *attach,
				       enum dma_data_direction dir)
{
	struct rk1828_card_bo *bo = rk1828_p2p_bo(attach->dmabuf);
	struct rk1828_device *rdev = to_rk1828_device(bo->base.dev);
	struct sg_table *sgt;
	phys_addr_t phys;
	dma_addr_t addr;
	int ret;

	dma_resv_assert_held(bo->base.resv);
	if (bo->revoked)
		return ERR_PTR(-ENODEV);

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = sg_alloc_table(sgt, 1, GFP_KERNEL);
	if (ret)
		goto err_free;

	phys = rdev->p2p.phys + (bo->node.start - rdev->p2p.base);
	addr = dma_map_resource(attach->dev, phys, bo->base.size, dir,
				DMA_ATTR_SKIP_CPU_SYNC);
	ret = dma_mapping_error(attach->dev, addr);
	if (ret)
		goto err_table;
	/* Bus address only: no page behind the entry. */
	sg_dma_address(sgt->sgl) = addr;
	sg_dma_len(sgt->sgl) = bo->base.size;
	return sgt;

err_table:
	sg_free_table(sgt);
err_free:
	kfree(sgt);
	return ERR_PTR(ret);
}

static void rk1828_p2p_unmap(struct dma_buf_attachment *attach,
			     struct sg_table *sgt, enum dma_data_direction dir)
{
	dma_resv_assert_held(attach->dmabuf->resv);
	dma_unmap_resource(attach->dev, sg_dma_address(sgt->sgl),
			   sg_dma_len(sgt->sgl), dir, DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(sgt);
	kfree(sgt);
}

static void rk1828_p2p_release(struct dma_buf *dmabuf)
{
	struct rk1828_card_bo *bo = rk1828_p2p_bo(dmabuf);
	struct rk1828_p2p *p2p = &to_rk1828_device(bo->base.dev)->p2p;

	mutex_lock(&p2p->lock);
	if (bo->dmabuf == dmabuf) {
		list_del_init(&bo->export_node);
		bo->dmabuf = NULL;
	}
	mutex_unlock(&p2p->lock);
	/* Drops the dma-buf's references on the BO and the drm_device. */
	drm_gem_dmabuf_release(dmabuf);
}

static const struct dma_buf_ops rk1828_p2p_dmabuf_ops = {
	.attach = rk1828_p2p_attach,
	.pin = rk1828_p2p_pin,
	.unpin = rk1828_p2p_unpin,
	.map_dma_buf = rk1828_p2p_map,
	.unmap_dma_buf = rk1828_p2p_unmap,
	.release = rk1828_p2p_release,
};

/**
 * rk1828_p2p_is_ours() - is @dmabuf a peer-window BO of an rk1828 card
 * @dmabuf: any dma-buf
 *
 * Return: true when rk1828_p2p_export() made it; its priv is then the
 * card BO's GEM object.
 */
bool rk1828_p2p_is_ours(const struct dma_buf *dmabuf)
{
	return dmabuf->ops == &rk1828_p2p_dmabuf_ops;
}

/**
 * rk1828_p2p_export() - export a peer-window card BO as a dma-buf
 * @obj: a card BO created with %DRM_RK1828_BO_P2P
 * @flags: file flags of the dma-buf (O_CLOEXEC, O_RDWR)
 *
 * The dma-buf shares the BO's reservation object, so the fences of the
 * jobs that write or read the BO on its card order the importers' jobs
 * too. It holds a reference on the BO and the drm_device until released.
 *
 * Return: the dma-buf; ERR_PTR(-ENODEV) once the card is unplugged, or
 * the error of drm_gem_dmabuf_export().
 */
struct dma_buf *rk1828_p2p_export(struct drm_gem_object *obj, int flags)
{
	struct rk1828_card_bo *bo = to_rk1828_card_bo(obj);
	struct rk1828_p2p *p2p = &to_rk1828_device(obj->dev)->p2p;
	DEFINE_DMA_BUF_EXPORT_INFO(exp_info);
	struct dma_buf *dmabuf;

	exp_info.ops = &rk1828_p2p_dmabuf_ops;
	exp_info.size = obj->size;
	exp_info.flags = flags;
	exp_info.priv = obj;
	exp_info.resv = obj->resv;

	mutex_lock(&p2p->lock);
	if (rk1828_is_gone(to_rk1828_device(obj->dev))) {
		dmabuf = ERR_PTR(-ENODEV);
		goto out;
	}
	dmabuf = drm_gem_dmabuf_export(obj->dev, &exp_info);
	if (IS_ERR(dmabuf))
		goto out;
	bo->dmabuf = dmabuf;
	list_add_tail(&bo->export_node, &p2p->exports);
out:
	mutex_unlock(&p2p->lock);
	return dmabuf;
}

/**
 * rk1828_p2p_revoke_all() - revoke every mapping of the card's exports
 * @rdev: the card, unplugged (rk1828_device_unplug())
 *
 * Each exported BO is marked revoked and its importers are told with
 * dma_buf_move_notify() under its reservation lock; they wait for their
 * jobs and unmap. Later attaches, pins and maps fail with -ENODEV, so no
 * peer DMA reaches the window of a card that is gone.
 */
void rk1828_p2p_revoke_all(struct rk1828_device *rdev)
{
	struct rk1828_p2p *p2p = &rdev->p2p;
	struct rk1828_card_bo *bo;

	mutex_lock(&p2p->lock);
	list_for_each_entry(bo, &p2p->exports, export_node) {
		dma_resv_lock(bo->base.resv, NULL);
		bo->revoked = true;
		rk1828_dma_buf_invalidate(bo->dmabuf);
		dma_resv_unlock(bo->base.resv);
	}
	mutex_unlock(&p2p->lock);
}

/* Why @importer can or cannot DMA into @exporter's window. */
static u32 rk1828_p2p_status(struct rk1828_device *importer,
			     struct rk1828_device *exporter, s32 *distance)
{
	int d;

	*distance = -1;
	if (importer == exporter)
		return DRM_RK1828_P2P_SAME_CARD;
	if (!exporter->p2p.size)
		return DRM_RK1828_P2P_NO_WINDOW;
	if (importer->link_type != DRM_RK1828_LINK_PCIE ||
	    !importer->dma_dev || !dev_is_pci(importer->dma_dev))
		return DRM_RK1828_P2P_NOT_PCI;
	if (!IS_ENABLED(CONFIG_PCI_P2PDMA))
		return DRM_RK1828_P2P_NO_KERNEL;
	d = rk1828_p2p_distance(exporter, importer->dma_dev, false);
	if (d < 0)
		return DRM_RK1828_P2P_TOPOLOGY;
	*distance = d;
	return DRM_RK1828_P2P_OK;
}

/**
 * rk1828_ioctl_p2p_query() - DRM_IOCTL_RK1828_P2P_QUERY
 * @drm: the device (the importer)
 * @data: &struct drm_rk1828_p2p_query
 * @file: the caller
 *
 * Return: 0 with @status, @distance and @window_size set; -EINVAL for
 * non-zero flags or a @peer_fd that is not an rk1828 accel file; -EBADF
 * for a bad descriptor; -ENODEV when the peer is unplugged.
 */
int rk1828_ioctl_p2p_query(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct drm_rk1828_p2p_query *args = data;
	struct rk1828_device *peer;
	struct drm_file *peer_file;
	struct fd f;
	int ret = 0, idx;

	if (args->flags)
		return -EINVAL;
	f = fdget(args->peer_fd);
	if (fd_empty(f))
		return -EBADF;
	if (fd_file(f)->f_op != &rk1828_accel_fops) {
		ret = -EINVAL;
		goto out;
	}
	/* The open file keeps its drm_device (and so the peer) alive. */
	peer_file = fd_file(f)->private_data;
	peer = to_rk1828_device(peer_file->minor->dev);
	if (!drm_dev_enter(&peer->drm, &idx)) {
		ret = -ENODEV;
		goto out;
	}
	args->status = rk1828_p2p_status(to_rk1828_device(drm), peer,
					 &args->distance);
	args->window_size = peer->p2p.size;
	drm_dev_exit(idx);
out:
	fdput(f);
	return ret;
}
