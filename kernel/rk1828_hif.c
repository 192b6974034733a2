// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Driver side of the RK1828 card host interface (kernel/rk1828_hif.h,
 * Documentation/accel/rk1828/protocol.rst): build command headers, stream
 * commands and their data through the transport, parse completions, map
 * card status codes to errno values and recover with a queue reset.
 */

#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <drm/drm_print.h>
#include <drm/rk1828_netlink.h>

#include "rk1828_drv.h"
#include "rk1828_hif_engine.h"
#include "rk1828_hif_pci.h"
#include "rk1828_netlink.h"

#define RK1828_HIF_HDR_SIZE	sizeof(struct rk1828_hif_msg)
/* Attempts of rk1828_hif_mgmt_confirmed(). */
#define RK1828_HIF_CONFIRM_TRIES	3

static_assert(sizeof(struct rk1828_hif_msg) == 48);
static_assert(sizeof(struct rk1828_hif_info) == 64);

/**
 * rk1828_hif_status_to_errno() - map a completion status to an errno
 * @status: &enum rk1828_hif_status from a completion
 *
 * Return: 0 for %RK1828_HIF_ST_OK, -EFAULT for an access outside the
 * context's mappings, -EINVAL for a malformed command or program, -ENOENT
 * for an unknown context, -ENOMEM when the card ran out of resources,
 * -EOPNOTSUPP for an unknown opcode and -EIO for anything else (such as
 * a PCIe card's %RK1828_HIF_ST_DMA: it could not reach host memory).
 */
int rk1828_hif_status_to_errno(u32 status)
{
	switch (status) {
	case RK1828_HIF_ST_OK:
		return 0;
	case RK1828_HIF_ST_ACCESS:
		return -EFAULT;
	case RK1828_HIF_ST_INVAL:
		return -EINVAL;
	case RK1828_HIF_ST_NOCTX:
		return -ENOENT;
	case RK1828_HIF_ST_NOMEM:
		return -ENOMEM;
	case RK1828_HIF_ST_BADOP:
		return -EOPNOTSUPP;
	default:
		return -EIO;
	}
}

/**
 * rk1828_xfer_begin() - enter the section in which a transport starts a
 * transfer
 * @rdev: the card
 * @gen: &rk1828_device.reset_gen value the command started with
 *
 * A transport calls this right before it hands a transfer to the hardware
 * and rk1828_xfer_end() right after. A reset bumps the generation with
 * &rk1828_device.xfer_sem held for writing and then aborts the transfers in
 * flight, so a transfer either starts before the reset (and is aborted) or
 * sees the new generation here and is not started at all.
 *
 * Return: true when the transfer may start (call rk1828_xfer_end()), false
 * when a reset began since @gen or the card is gone.
 */
bool rk1828_xfer_begin(struct rk1828_device *rdev, u32 gen)
{
	down_read(&rdev->xfer_sem);
	if (atomic_read(&rdev->reset_gen) != gen || rk1828_is_gone(rdev)) {
		up_read(&rdev->xfer_sem);
		return false;
	}
	return true;
}

/**
 * rk1828_xfer_end() - leave the section entered by rk1828_xfer_begin()
 * @rdev: the card
 */
void rk1828_xfer_end(struct rk1828_device *rdev)
{
	up_read(&rdev->xfer_sem);
}

/* Time left until @deadline for one transfer, 0 when it passed. */
static long rk1828_hif_timeout(unsigned long deadline)
{
	if (!deadline)
		return MAX_SCHEDULE_TIMEOUT;
	if (time_after_eq(jiffies, deadline))
		return 0;
	return deadline - jiffies;
}

/*
 * Start receiving up to @len bytes of the completion stream into the
 * queue's receive buffer at @off; finish with rk1828_hif_recv_wait_locked().
 */
static int rk1828_hif_recv_start_locked(struct rk1828_device *rdev, u32 queue,
					u32 gen, size_t off, size_t len)
{
	struct rk1828_hif_queue_state *hq = &rdev->hq[queue];

	lockdep_assert_held(&hq->lock);
	return rdev->tops->recv_start(rdev, queue, gen, hq->rx + off,
				      min(len, rdev->bounce_size - off));
}

/* Wait for the receive started last; a zero-length packet is restarted. */
static int rk1828_hif_recv_wait_locked(struct rk1828_device *rdev, u32 queue,
				       u32 gen, size_t off, size_t len,
				       unsigned long deadline, size_t *actual)
{
	long timeout;
	int ret;

	lockdep_assert_held(&rdev->hq[queue].lock);
	for (;;) {
		timeout = rk1828_hif_timeout(deadline);
		if (!timeout) {
			rdev->tops->recv_cancel(rdev, queue);
			return -ETIMEDOUT;
		}
		ret = rdev->tops->recv_wait(rdev, queue, actual, timeout);
		if (ret || *actual)
			return ret;
		ret = rk1828_hif_recv_start_locked(rdev, queue, gen, off, len);
		if (ret)
			return ret;
	}
}

/* Fill the command header of @cmd with sequence number @seq. */
static void rk1828_hif_fill_header(struct rk1828_hif_msg *msg, u32 seq,
				   const struct rk1828_hif_cmd *cmd)
{
	memset(msg, 0, sizeof(*msg));
	msg->magic = cpu_to_le32(RK1828_HIF_MAGIC);
	msg->opcode = cpu_to_le16(cmd->opcode);
	msg->seq = cpu_to_le32(seq);
	msg->ctx = cpu_to_le32(cmd->ctx);
	msg->data_len = cpu_to_le32((u32)cmd->wlen);
	msg->arg[0] = cpu_to_le64(cmd->arg[0]);
	msg->arg[1] = cpu_to_le64(cmd->arg[1]);
	msg->arg[2] = cpu_to_le64(cmd->arg[2]);
}

/*
 * Send half of one attempt: stream the header (already in the bounce
 * buffer) and the command's data, a bounce buffer at a time. Header and
 * data form one byte stream, so the first transfer carries the header and
 * as much data as fits behind it.
 */
static int rk1828_hif_send_locked(struct rk1828_device *rdev, u32 queue,
				  u32 gen, const struct rk1828_hif_cmd *cmd,
				  unsigned long deadline)
{
	struct rk1828_hif_queue_state *hq = &rdev->hq[queue];
	size_t bsz = rdev->bounce_size;
	u8 *bounce = hq->bounce;
	size_t off = RK1828_HIF_HDR_SIZE, n;
	u64 sent = 0;
	long timeout;
	int ret;

	lockdep_assert_held(&hq->lock);
	for (;;) {
		n = min_t(u64, bsz - off, cmd->wlen - sent);
		if (n)
			memcpy(bounce + off, cmd->wdata + sent, n);
		timeout = rk1828_hif_timeout(deadline);
		if (!timeout)
			return -ETIMEDOUT;
		ret = rdev->tops->send(rdev, queue, gen, bounce, off + n,
				       timeout);
		if (ret)
			return ret;
		sent += n;
		off = 0;
		if (sent == cmd->wlen)
			return 0;
	}
}

/* Check a completion header against the command it answers. */
static int rk1828_hif_check_cpl(struct rk1828_device *rdev, u32 queue,
				u32 seq, const struct rk1828_hif_cmd *cmd,
				const struct rk1828_hif_msg *cpl)
{
	u32 status = le32_to_cpu(cpl->status);
	u32 data_len = le32_to_cpu(cpl->data_len);

	if (le32_to_cpu(cpl->magic) != RK1828_HIF_MAGIC ||
	    le16_to_cpu(cpl->opcode) != cmd->opcode ||
	    le32_to_cpu(cpl->seq) != seq) {
		drm_err(&rdev->drm,
			"queue %u: bad completion (magic %#x op %u seq %u, want op %u seq %u)\n",
			queue, le32_to_cpu(cpl->magic),
			le16_to_cpu(cpl->opcode), le32_to_cpu(cpl->seq),
			cmd->opcode, seq);
		return -EPROTO;
	}
	if (status == RK1828_HIF_ST_OK ? data_len != cmd->rlen :
	    data_len > cmd->rlen) {
		drm_err(&rdev->drm,
			"queue %u: op %u completion carries %u bytes, expected %llu\n",
			queue, cmd->opcode, data_len, cmd->rlen);
		return -EPROTO;
	}
	return 0;
}

/*
 * Receive half of one attempt: wait for the completion whose receive
 * rk1828_hif_xfer_locked() started (at most @want bytes: header and
 * data), check it and copy its data to @cmd->rdata (on success only),
 * receiving the rest of the data a bounce buffer at a time.
 */
static int rk1828_hif_recv_locked(struct rk1828_device *rdev, u32 queue,
				  u32 gen, u32 seq, size_t want,
				  const struct rk1828_hif_cmd *cmd,
				  unsigned long deadline, u32 *status)
{
	struct rk1828_hif_queue_state *hq = &rdev->hq[queue];
	const struct rk1828_hif_msg *cpl = hq->rx;
	size_t n, got = 0, actual;
	u64 have, data_len;
	int ret;

	lockdep_assert_held(&hq->lock);
	/* The completion header, possibly with data behind it. */
	for (;;) {
		ret = rk1828_hif_recv_wait_locked(rdev, queue, gen, got,
						  want - got, deadline, &actual);
		if (ret)
			return ret;
		got += actual;
		if (got >= RK1828_HIF_HDR_SIZE)
			break;
		ret = rk1828_hif_recv_start_locked(rdev, queue, gen, got,
						   want - got);
		if (ret)
			return ret;
	}

	ret = rk1828_hif_check_cpl(rdev, queue, seq, cmd, cpl);
	if (ret)
		return ret;
	*status = le32_to_cpu(cpl->status);
	data_len = le32_to_cpu(cpl->data_len);
	have = got - RK1828_HIF_HDR_SIZE;
	if (have > data_len)
		return -EPROTO;
	if (have && *status == RK1828_HIF_ST_OK)
		memcpy(cmd->rdata, (u8 *)hq->rx + RK1828_HIF_HDR_SIZE, have);

	/* The rest of the completion data, a bounce buffer at a time. */
	while (have < data_len) {
		n = min_t(u64, rdev->bounce_size, data_len - have);
		ret = rk1828_hif_recv_start_locked(rdev, queue, gen, 0, n);
		if (ret)
			return ret;
		ret = rk1828_hif_recv_wait_locked(rdev, queue, gen, 0, n,
						  deadline, &actual);
		if (ret)
			return ret;
		if (actual > n)
			return -EPROTO;
		if (*status == RK1828_HIF_ST_OK)
			memcpy(cmd->rdata + have, hq->rx, actual);
		have += actual;
	}
	return 0;
}

/*
 * One attempt at a command on a transport that runs whole commands
 * (&rk1828_transport_ops.exec): the card fetches the command and its data
 * from host memory itself and answers with a completion header.
 */
static int rk1828_hif_exec_locked(struct rk1828_device *rdev, u32 queue,
				  u32 gen, u32 seq,
				  const struct rk1828_hif_cmd *cmd, u32 *status)
{
	/* The command's time starts now, not while it waited for the queue. */
	long timeout = cmd->timeout ?: MAX_SCHEDULE_TIMEOUT;
	struct rk1828_hif_msg msg, cpl;
	int ret;

	lockdep_assert_held(&rdev->hq[queue].lock);
	rk1828_hif_fill_header(&msg, seq, cmd);
	ret = rdev->tops->exec(rdev, queue, gen, &msg, cmd, &cpl, timeout);
	if (ret)
		return ret;
	ret = rk1828_hif_check_cpl(rdev, queue, seq, cmd, &cpl);
	if (!ret)
		*status = le32_to_cpu(cpl.status);
	return ret;
}

/*
 * One attempt at a command: stream the header and data, read the
 * completion. The receive of the completion is started before the command
 * is sent, so the card can answer as soon as it is done (one round trip
 * per command instead of two); it never asks for more than this
 * completion can hold, so it cannot run into the next one. Returns a
 * transport errno (< 0) or 0 with *@status set.
 */
static int rk1828_hif_xfer_locked(struct rk1828_device *rdev, u32 queue,
				  u32 gen, u32 seq,
				  const struct rk1828_hif_cmd *cmd, u32 *status)
{
	struct rk1828_hif_queue_state *hq = &rdev->hq[queue];
	size_t want = RK1828_HIF_HDR_SIZE + cmd->rlen;
	unsigned long deadline = 0;
	int ret;

	lockdep_assert_held(&hq->lock);
	if (rdev->tops->exec)
		return rk1828_hif_exec_locked(rdev, queue, gen, seq, cmd, status);
	/* The command's time starts now, not while it waited for the queue. */
	if (cmd->timeout)
		deadline = jiffies + cmd->timeout;
	rk1828_hif_fill_header(hq->bounce, seq, cmd);
	ret = rk1828_hif_recv_start_locked(rdev, queue, gen, 0, want);
	if (ret)
		return ret;
	ret = rk1828_hif_send_locked(rdev, queue, gen, cmd, deadline);
	if (ret) {
		rdev->tops->recv_cancel(rdev, queue);
		return ret;
	}
	return rk1828_hif_recv_locked(rdev, queue, gen, seq, want, cmd,
				      deadline, status);
}

/**
 * rk1828_hif_run() - run one command on a hardware queue and wait for it
 * @rdev: the card
 * @queue: &enum rk1828_hif_queue
 * @cmd: the command; @cmd->wlen and @cmd->rlen must fit in 32 bits
 *
 * Commands of one queue run one at a time. An idempotent command aborted
 * by a card reset that another command caused (a timeout on another queue,
 * the debugfs knob) is sent again from the start once the reset finished,
 * as often as that happens, each time with its full @cmd->timeout; MAP,
 * UNMAP, CTX_CREATE and CTX_DESTROY are not idempotent (the card may have
 * applied them before the reset) and fail with -EIO instead (see
 * rk1828_hif_mgmt_confirmed() for the ones that can be confirmed).
 * A timeout, transport or protocol error of this command resets the
 * card's queues so that the streams are in sync again and fails the
 * command. On a dead card (a reset failed) every command fails at once.
 *
 * Context: process context, may sleep; the waits for the queue and for a
 * reset in progress end on a fatal signal.
 * Return: 0 on success; the errno of the card status
 * (rk1828_hif_status_to_errno()); -ETIMEDOUT when the command timed out;
 * -ENODEV when the card is gone; -EIO when the card is dead or a reset
 * aborted a non-idempotent command; -EPROTO for a malformed completion;
 * -EINTR on a fatal signal; another negative errno from the transport.
 */
int rk1828_hif_run(struct rk1828_device *rdev, u32 queue,
		   const struct rk1828_hif_cmd *cmd)
{
	return rk1828_hif_run_fate(rdev, queue, cmd, NULL);
}

/* May @opcode be sent again after a reset aborted it? */
static bool rk1828_hif_op_idempotent(u16 opcode)
{
	switch (opcode) {
	case RK1828_HIF_OP_MAP:
	case RK1828_HIF_OP_UNMAP:
	case RK1828_HIF_OP_CTX_CREATE:
	case RK1828_HIF_OP_CTX_DESTROY:
		return false;
	default:
		return true;
	}
}

/*
 * Fault injection (debugfs fail_mgmt, lose_mgmt): should this management
 * command fail before it reaches the card, or have its completion lost
 * after the card applied it?
 */
static bool rk1828_hif_inject(struct rk1828_device *rdev, u32 queue,
			      const struct rk1828_hif_cmd *cmd, atomic_t *knob)
{
	if (queue != RK1828_HIF_QUEUE_MGMT || cmd->opcode == RK1828_HIF_OP_INFO ||
	    cmd->opcode == RK1828_HIF_OP_STATS)
		return false;
	return atomic_dec_if_positive(knob) >= 0;
}

/*
 * Wait until no reset is in progress; returns the generation to send
 * with, or a negative errno (gone, dead, fatal signal).
 */
static int rk1828_hif_wait_ready(struct rk1828_device *rdev, u32 *gen)
{
	for (;;) {
		if (wait_event_killable(rdev->reset_wq,
					!READ_ONCE(rdev->resetting) ||
					rk1828_is_gone(rdev)))
			return -EINTR;
		if (rk1828_is_gone(rdev))
			return -ENODEV;
		if (rk1828_is_dead(rdev))
			return -EIO;
		*gen = atomic_read(&rdev->reset_gen);
		/*
		 * A reset sets resetting before it bumps the generation: a
		 * generation read after the bump comes with resetting seen.
		 */
		smp_rmb();
		if (!READ_ONCE(rdev->resetting))
			return 0;
	}
}

/*
 * One attempt, under the queue lock; *@fate as for the caller, *@final
 * when the result must not be retried or reset for (injected faults).
 */
static int rk1828_hif_attempt_locked(struct rk1828_device *rdev, u32 queue,
				     u32 gen, const struct rk1828_hif_cmd *cmd,
				     enum rk1828_hif_fate *fate, bool *final)
{
	struct rk1828_hif_queue_state *hq = &rdev->hq[queue];
	u32 status = 0;
	int ret;

	lockdep_assert_held(&hq->lock);
	*fate = RK1828_HIF_UNKNOWN;
	*final = true;
	/* Lost on its way: the driver cannot tell it from a lost answer. */
	if (rk1828_hif_inject(rdev, queue, cmd, &rdev->fault_fail_mgmt))
		return -EIO;
	ret = rk1828_hif_xfer_locked(rdev, queue, gen, ++hq->seq, cmd, &status);
	if (!ret && rk1828_hif_inject(rdev, queue, cmd, &rdev->fault_lose_mgmt)) {
		/* Applied, but the completion is lost: as if a reset hit it. */
		rk1828_card_reset(rdev, RK1828_RESET_REASON_LOST_COMPLETION,
				  cmd->ctx);
		return -EIO;
	}
	*final = false;
	if (ret)
		return ret;
	*fate = RK1828_HIF_ANSWERED;
	return rk1828_hif_status_to_errno(status);
}

/*
 * Reset after a command of ours failed with @err: a timeout of a job's
 * command (compute and copy queues carry only those) blames the job's
 * context, which the job-timeout event names; a management command that
 * timed out and a transport or protocol error blame nobody.
 */
static void rk1828_hif_reset_for(struct rk1828_device *rdev, u32 queue,
				 const struct rk1828_hif_cmd *cmd, int err)
{
	bool job = queue != RK1828_HIF_QUEUE_MGMT;

	if (err != -ETIMEDOUT) {
		rk1828_card_reset(rdev, RK1828_RESET_REASON_TRANSPORT, 0);
		return;
	}
	if (job)
		rk1828_nl_job_timeout_event(rdev, cmd->ctx, queue,
					    jiffies_to_msecs(cmd->timeout));
	rk1828_card_reset(rdev, RK1828_RESET_REASON_TIMEOUT,
			  job ? cmd->ctx : 0);
}

/**
 * rk1828_hif_run_fate() - rk1828_hif_run() telling what the card knows
 * @rdev: the card
 * @queue: &enum rk1828_hif_queue
 * @cmd: the command
 * @fate: if not NULL, &enum rk1828_hif_fate of the command: answered by
 *	the card (the result is then the card's status), never sent (the
 *	card certainly did not execute it), or unknown (transport error,
 *	timeout, reset, unplug after it was sent: the card may or may not
 *	have executed it)
 *
 * Return: as rk1828_hif_run().
 */
int rk1828_hif_run_fate(struct rk1828_device *rdev, u32 queue,
			const struct rk1828_hif_cmd *cmd,
			enum rk1828_hif_fate *fate)
{
	enum rk1828_hif_fate f = RK1828_HIF_NOT_SENT;
	struct rk1828_hif_queue_state *hq;
	bool final;
	u32 gen;
	int ret;

	if (fate)
		*fate = RK1828_HIF_NOT_SENT;
	if (queue >= RK1828_HIF_NUM_QUEUES || cmd->wlen > U32_MAX ||
	    cmd->rlen > U32_MAX)
		return -EINVAL;

	hq = &rdev->hq[queue];
	if (mutex_lock_killable(&hq->lock))
		return -EINTR;
	for (;;) {
		ret = rk1828_hif_wait_ready(rdev, &gen);
		if (ret)
			break;
		ret = rk1828_hif_attempt_locked(rdev, queue, gen, cmd, &f,
						&final);
		if (f == RK1828_HIF_ANSWERED || final)
			break;
		if (rk1828_is_gone(rdev) || ret == -ENODEV) {
			/* Unplugged; the disconnect may still be on its way. */
			ret = -ENODEV;
			break;
		}
		if (atomic_read(&rdev->reset_gen) != gen) {
			/* Aborted by a reset somebody else started. */
			if (rk1828_hif_op_idempotent(cmd->opcode))
				continue;
			ret = -EIO;
			break;
		}
		/* Our own command timed out or failed: resync the streams. */
		drm_warn(&rdev->drm, "queue %u: op %u ctx %u %s (%d), resetting queues\n",
			 queue, cmd->opcode, cmd->ctx,
			 ret == -ETIMEDOUT ? "timed out" : "failed", ret);
		rk1828_hif_reset_for(rdev, queue, cmd, ret);
		if (ret == -ECANCELED)
			ret = -EIO;
		break;
	}
	mutex_unlock(&hq->lock);

	if (fate)
		*fate = f;
	atomic64_inc(&hq->commands);
	if (ret)
		atomic64_inc(&hq->errors);
	return ret;
}

/**
 * rk1828_hif_mgmt() - run a management command without data
 * @rdev: the card
 * @opcode: %RK1828_HIF_OP_CTX_CREATE, _CTX_DESTROY, _MAP or _UNMAP
 * @ctx: context id
 * @arg0: first argument (card address for MAP/UNMAP)
 * @arg1: second argument (size for MAP)
 * @fate: if not NULL, as for rk1828_hif_run_fate()
 *
 * Waits at most &rk1828_device.job_timeout_ms once the command is sent.
 *
 * Return: as rk1828_hif_run().
 */
int rk1828_hif_mgmt(struct rk1828_device *rdev, u16 opcode, u32 ctx,
		    u64 arg0, u64 arg1, enum rk1828_hif_fate *fate)
{
	struct rk1828_hif_cmd cmd = {
		.opcode = opcode,
		.ctx = ctx,
		.arg = { arg0, arg1, 0 },
		.timeout = msecs_to_jiffies(READ_ONCE(rdev->job_timeout_ms)),
	};

	return rk1828_hif_run_fate(rdev, RK1828_HIF_QUEUE_MGMT, &cmd, fate);
}

/**
 * rk1828_hif_mgmt_confirmed() - undo something on the card and know it
 *	is gone
 * @rdev: the card
 * @opcode: %RK1828_HIF_OP_CTX_DESTROY or %RK1828_HIF_OP_UNMAP
 * @ctx: context id
 * @arg0: card address of the mapping (UNMAP)
 *
 * Destroying twice is harmless, so a command that got no answer (a reset
 * aborted it, its completion was lost) is sent again, up to
 * %RK1828_HIF_CONFIRM_TRIES times; a "not there" answer (NOCTX, or INVAL
 * for an UNMAP: no such mapping) means an earlier attempt was applied.
 *
 * Return: 0 when the card confirmed the context or mapping gone; -ENODEV
 * when the card is gone (so is everything on it); another negative errno
 * when the card's state stays unknown (then the id or range must never be
 * reused).
 */
int rk1828_hif_mgmt_confirmed(struct rk1828_device *rdev, u16 opcode,
			      u32 ctx, u64 arg0)
{
	enum rk1828_hif_fate fate;
	unsigned int tries;
	int ret = -EIO;

	for (tries = 0; tries < RK1828_HIF_CONFIRM_TRIES; tries++) {
		ret = rk1828_hif_mgmt(rdev, opcode, ctx, arg0, 0, &fate);
		if (rk1828_is_gone(rdev))
			return -ENODEV;
		if (fate == RK1828_HIF_ANSWERED)
			break;
		if (ret == -EINTR || rk1828_is_dead(rdev))
			return ret;
	}
	if (ret == -ENOENT || (opcode == RK1828_HIF_OP_UNMAP && ret == -EINVAL))
		return 0;
	return ret;
}

/**
 * rk1828_hif_info() - query the card with INFO and check it
 * @rdev: the card; version, mem_size, serial, max_ctx and fw are filled in
 *
 * Return: 0; -ENODEV for a card that speaks another major protocol
 * version or reports no usable memory, queues or contexts; errors of
 * rk1828_hif_run().
 */
int rk1828_hif_info(struct rk1828_device *rdev)
{
	struct rk1828_hif_info info;
	struct rk1828_hif_cmd cmd = {
		.opcode = RK1828_HIF_OP_INFO,
		.rdata = &info,
		.rlen = sizeof(info),
		.timeout = msecs_to_jiffies(READ_ONCE(rdev->job_timeout_ms)),
	};
	int ret;

	ret = rk1828_hif_run(rdev, RK1828_HIF_QUEUE_MGMT, &cmd);
	if (ret)
		return ret;

	rdev->version = le32_to_cpu(info.version);
	rdev->mem_size = le64_to_cpu(info.mem_size);
	rdev->serial = le64_to_cpu(info.serial);
	rdev->max_ctx = le32_to_cpu(info.max_ctx);
	memcpy(rdev->fw, info.fw, sizeof(info.fw));
	rdev->fw[sizeof(info.fw)] = '\0';

	if ((rdev->version >> 16) != (RK1828_HIF_VERSION >> 16)) {
		drm_err(&rdev->drm, "card speaks protocol %u.%u, driver %u.%u\n",
			rdev->version >> 16, rdev->version & 0xffff,
			RK1828_HIF_VERSION >> 16, RK1828_HIF_VERSION & 0xffff);
		return -ENODEV;
	}
	if (le32_to_cpu(info.num_queues) < RK1828_HIF_NUM_QUEUES ||
	    rdev->mem_size <= RK1828_CARD_ALIGN || !rdev->max_ctx) {
		drm_err(&rdev->drm, "card reports %u queues, %llu bytes, %u contexts\n",
			le32_to_cpu(info.num_queues), rdev->mem_size,
			rdev->max_ctx);
		return -ENODEV;
	}
	return 0;
}

/**
 * rk1828_card_reset() - abort everything in flight on every queue
 * @rdev: the card
 * @reason: &enum rk1828_reset_reason, for the reset event
 * @ctx: context whose command caused the reset, 0 for none (the event's
 *	guilty context)
 *
 * Bumps &rk1828_device.reset_gen so that no transfer of the old
 * generation starts any more, aborts the transfers in flight and sends
 * %RK1828_HIF_REQ_RESET_QUEUES. Idempotent commands waiting in
 * rk1828_hif_run() are retried afterwards. Card memory, contexts and
 * mappings survive. A card whose reset request fails is declared dead:
 * every command fails with -EIO at once (nothing waits for it any more)
 * until a later reset succeeds, which revives it. Every reset sends one
 * reset event on the netlink family (rk1828_nl_reset_event()), except
 * on a card that is gone.
 *
 * Context: process context, may sleep; also a job's worker inside its
 * fence signalling section (the transport's reset request and the event
 * allocate nothing that can enter reclaim).
 * Return: 0 or the errno of the reset request.
 */
int rk1828_card_reset(struct rk1828_device *rdev, u32 reason, u32 ctx)
{
	int ret = -ENODEV;

	mutex_lock(&rdev->reset_lock);
	down_write(&rdev->xfer_sem);
	WRITE_ONCE(rdev->resetting, true);
	atomic_inc_return(&rdev->reset_gen);
	up_write(&rdev->xfer_sem);

	rdev->tops->abort(rdev);
	/*
	 * Send the request inside the transfer section: once
	 * rk1828_device_unplug() took xfer_sem for writing, gone is seen
	 * here and nothing reaches the transport any more.
	 */
	down_read(&rdev->xfer_sem);
	if (!rk1828_is_gone(rdev)) {
		if (atomic_dec_if_positive(&rdev->fault_fail_reset) >= 0)
			ret = -EIO;
		else
			ret = rdev->tops->reset_queues(rdev);
	}
	up_read(&rdev->xfer_sem);
	if (!ret) {
		atomic64_inc(&rdev->resets);
		if (atomic_xchg(&rdev->dead, 0))
			drm_info(&rdev->drm, "card answers again after a reset\n");
	} else if (ret != -ENODEV && !rk1828_is_gone(rdev)) {
		if (!atomic_xchg(&rdev->dead, 1))
			drm_err(&rdev->drm, "queue reset failed: %d, card declared dead until a reset succeeds\n",
				ret);
	}

	WRITE_ONCE(rdev->resetting, false);
	wake_up_all(&rdev->reset_wq);
	mutex_unlock(&rdev->reset_lock);
	if (!rk1828_is_gone(rdev))
		rk1828_nl_reset_event(rdev, reason, ctx, ret);
	return ret;
}

/**
 * rk1828_hif_init() - set up the driver side of the hardware queues
 * @rdev: the card; &rk1828_device.bounce_size must be set (at least
 *	64 KiB; it may be lowered to 64 KiB when memory is fragmented)
 *
 * Return: 0 or -ENOMEM.
 */
int rk1828_hif_init(struct rk1828_device *rdev)
{
	int q;

	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		struct rk1828_hif_queue_state *hq = &rdev->hq[q];

		mutex_init(&hq->lock);
		atomic64_set(&hq->commands, 0);
		atomic64_set(&hq->errors, 0);
	}
	for (;;) {
		for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
			rdev->hq[q].bounce = kmalloc(rdev->bounce_size,
						     GFP_KERNEL | __GFP_NOWARN);
			rdev->hq[q].rx = kmalloc(rdev->bounce_size,
						 GFP_KERNEL | __GFP_NOWARN);
			if (!rdev->hq[q].bounce || !rdev->hq[q].rx)
				break;
		}
		if (q == RK1828_HIF_NUM_QUEUES)
			return 0;
		rk1828_hif_fini(rdev);
		/* High-order allocations may fail: fall back to 64 KiB. */
		if (rdev->bounce_size <= SZ_64K)
			return -ENOMEM;
		rdev->bounce_size = SZ_64K;
	}
}

/**
 * rk1828_hif_fini() - free what rk1828_hif_init() allocated
 * @rdev: the card, no command may be running
 */
void rk1828_hif_fini(struct rk1828_device *rdev)
{
	int q;

	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		kfree(rdev->hq[q].bounce);
		rdev->hq[q].bounce = NULL;
		kfree(rdev->hq[q].rx);
		rdev->hq[q].rx = NULL;
	}
}
