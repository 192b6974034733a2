/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * The HIF engine (rk1828_hif.c): runs one command on one hardware queue of
 * a card through its transport, resets the card and tells what is known of
 * a command that failed. The device itself (&struct rk1828_device, the
 * transports' operations) stays in rk1828_drv.h; the wire format is
 * rk1828_hif.h.
 */
#ifndef __RK1828_HIF_ENGINE_H__
#define __RK1828_HIF_ENGINE_H__

#include <linux/types.h>

struct rk1828_device;
struct sg_table;

/**
 * struct rk1828_hif_cmd - one command for rk1828_hif_run()
 * @opcode: &enum rk1828_hif_opcode
 * @ctx: context id (0 for INFO)
 * @arg: opcode arguments
 * @wdata: data sent after the header (WRITE), or NULL
 * @wlen: bytes of @wdata
 * @rdata: buffer for the completion data (READ, INFO), or NULL
 * @rlen: bytes expected in the completion data on success
 * @sgt: host BO pages mapped for &rk1828_device.dma_dev, or NULL: with a
 *	transport that has &rk1828_transport_ops.exec, the card reads the
 *	WRITE data (@wlen bytes) or writes the READ data (@rlen bytes) at
 *	[@sg_off, @sg_off + length) of it by DMA, and @wdata/@rdata are
 *	unused
 * @sg_off: byte offset of the data in @sgt
 * @timeout: jiffies the command may take from the moment it is sent (not
 *	while it waits for its queue), 0 for none; when they pass the queues
 *	are reset and the command fails with -ETIMEDOUT
 */
struct rk1828_hif_cmd {
	u16 opcode;
	u32 ctx;
	u64 arg[3];
	const void *wdata;
	u64 wlen;
	void *rdata;
	u64 rlen;
	struct sg_table *sgt;
	u64 sg_off;
	long timeout;
};

int rk1828_hif_init(struct rk1828_device *rdev);
void rk1828_hif_fini(struct rk1828_device *rdev);
int rk1828_hif_run(struct rk1828_device *rdev, u32 queue,
		   const struct rk1828_hif_cmd *cmd);
/**
 * enum rk1828_hif_fate - what is known of a command that returned
 * @RK1828_HIF_NOT_SENT: it never reached the transport
 * @RK1828_HIF_UNKNOWN: it was sent but not answered; the card may have
 *	applied it
 * @RK1828_HIF_ANSWERED: the card answered; the result is its status
 */
enum rk1828_hif_fate {
	RK1828_HIF_NOT_SENT,
	RK1828_HIF_UNKNOWN,
	RK1828_HIF_ANSWERED,
};

int rk1828_hif_run_fate(struct rk1828_device *rdev, u32 queue,
			const struct rk1828_hif_cmd *cmd,
			enum rk1828_hif_fate *fate);
int rk1828_hif_mgmt(struct rk1828_device *rdev, u16 opcode, u32 ctx,
		    u64 arg0, u64 arg1, enum rk1828_hif_fate *fate);
int rk1828_hif_mgmt_confirmed(struct rk1828_device *rdev, u16 opcode,
			      u32 ctx, u64 arg0);
int rk1828_hif_info(struct rk1828_device *rdev);
int rk1828_card_reset(struct rk1828_device *rdev, u32 reason, u32 ctx);
int rk1828_hif_status_to_errno(u32 status);
bool rk1828_xfer_begin(struct rk1828_device *rdev, u32 gen);
void rk1828_xfer_end(struct rk1828_device *rdev);

#endif /* __RK1828_HIF_ENGINE_H__ */
