/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * RK1828 card host interface (HIF): the transport between the driver and
 * the card firmware (or the card emulator): queues, opcodes, statuses and
 * the message and INFO records. All fields are little endian. This header
 * is shared by the kernel driver and the card emulator, so it only uses
 * <linux/types.h> types. The normative description is
 * Documentation/accel/rk1828/protocol.rst. The segment program an EXEC
 * runs is not part of it: the driver never reads programs, their format is
 * include/rk1828/program.h, owned by the runtime and the card.
 */
#ifndef __RK1828_HIF_H__
#define __RK1828_HIF_H__

#include <linux/types.h>

/* USB identity of the card: Rockchip vendor id, RK1828 product id. */
#define RK1828_USB_VID			0x2207
#define RK1828_USB_PID			0x1828

/* Protocol version 1.1 (1.1 adds STATS), (major << 16) | minor. */
#define RK1828_HIF_VERSION		0x00010001
/* First minor version with %RK1828_HIF_OP_STATS. */
#define RK1828_HIF_MINOR_STATS		1

/**
 * enum rk1828_hif_queue - hardware queues, one bulk endpoint pair each
 * @RK1828_HIF_QUEUE_MGMT: management (INFO, CTX_*, MAP, UNMAP); EP 1
 * @RK1828_HIF_QUEUE_COMPUTE: EXEC; EP 2
 * @RK1828_HIF_QUEUE_COPY: WRITE, READ, COPY; EP 3
 * @RK1828_HIF_NUM_QUEUES: number of queues
 *
 * Queue q uses bulk OUT endpoint (q + 1) and bulk IN endpoint
 * (0x80 | (q + 1)). Each OUT endpoint carries a byte stream of commands
 * (header + data), each IN endpoint the stream of completions (header +
 * data). A queue runs its commands in order, one at a time, and answers
 * each with exactly one completion; different queues run concurrently.
 */
enum rk1828_hif_queue {
	RK1828_HIF_QUEUE_MGMT = 0,
	RK1828_HIF_QUEUE_COMPUTE = 1,
	RK1828_HIF_QUEUE_COPY = 2,
	RK1828_HIF_NUM_QUEUES = 3,
};

/*
 * Vendor control request on EP0 (bmRequestType 0x40, no data stage):
 * abort the running command of every queue and drop all queued commands
 * and partial stream state. Aborted commands complete with no completion
 * at all; card memory, contexts and mappings are kept. The driver uses it
 * to recover from a job timeout. wValue and wIndex are zero.
 */
#define RK1828_HIF_REQ_RESET_QUEUES	0x01

#define RK1828_HIF_MAGIC		0x31434b52	/* "RKC1" */

/**
 * enum rk1828_hif_opcode - command opcodes
 * @RK1828_HIF_OP_INFO: reply data is struct rk1828_hif_info
 * @RK1828_HIF_OP_CTX_CREATE: create context @ctx (no mappings)
 * @RK1828_HIF_OP_CTX_DESTROY: destroy context @ctx and all its mappings
 * @RK1828_HIF_OP_MAP: map [arg0, arg0 + arg1) into context @ctx
 * @RK1828_HIF_OP_UNMAP: unmap the mapping that starts at arg0 of @ctx
 * @RK1828_HIF_OP_WRITE: write the command's data to card address arg0
 * @RK1828_HIF_OP_READ: reply with arg1 bytes read from card address arg0
 * @RK1828_HIF_OP_COPY: copy arg2 bytes from card address arg0 to arg1
 * @RK1828_HIF_OP_EXEC: run the program at card address arg0, arg1 bytes
 * @RK1828_HIF_OP_STATS: (1.1) reply data is struct rk1828_hif_stats
 *
 * Every card address of WRITE, READ, COPY and EXEC (including every
 * address inside the program) must lie within one mapping of @ctx, or the
 * command fails with %RK1828_HIF_ST_ACCESS and touches nothing.
 */
enum rk1828_hif_opcode {
	RK1828_HIF_OP_INFO = 1,
	RK1828_HIF_OP_CTX_CREATE = 2,
	RK1828_HIF_OP_CTX_DESTROY = 3,
	RK1828_HIF_OP_MAP = 4,
	RK1828_HIF_OP_UNMAP = 5,
	RK1828_HIF_OP_WRITE = 6,
	RK1828_HIF_OP_READ = 7,
	RK1828_HIF_OP_COPY = 8,
	RK1828_HIF_OP_EXEC = 9,
	RK1828_HIF_OP_STATS = 10,
};

/**
 * enum rk1828_hif_status - completion status
 * @RK1828_HIF_ST_OK: success
 * @RK1828_HIF_ST_ACCESS: an address is outside the context's mappings
 * @RK1828_HIF_ST_INVAL: malformed command or program
 * @RK1828_HIF_ST_NOCTX: unknown context
 * @RK1828_HIF_ST_NOMEM: the card ran out of internal resources
 * @RK1828_HIF_ST_BADOP: unknown opcode
 */
enum rk1828_hif_status {
	RK1828_HIF_ST_OK = 0,
	RK1828_HIF_ST_ACCESS = 1,
	RK1828_HIF_ST_INVAL = 2,
	RK1828_HIF_ST_NOCTX = 3,
	RK1828_HIF_ST_NOMEM = 4,
	RK1828_HIF_ST_BADOP = 5,
};

/**
 * struct rk1828_hif_msg - command and completion header (48 bytes)
 * @magic: %RK1828_HIF_MAGIC
 * @opcode: &enum rk1828_hif_opcode (echoed in the completion)
 * @flags: zero
 * @seq: host-chosen sequence number, echoed in the completion
 * @ctx: context id (0 for INFO)
 * @status: &enum rk1828_hif_status in a completion, zero in a command
 * @data_len: number of data bytes that follow this header in the stream
 * @arg: opcode arguments (card addresses and byte counts)
 */
struct rk1828_hif_msg {
	__le32 magic;
	__le16 opcode;
	__le16 flags;
	__le32 seq;
	__le32 ctx;
	__le32 status;
	__le32 data_len;
	__le64 arg[3];
};

/**
 * struct rk1828_hif_info - INFO reply data (64 bytes)
 * @version: %RK1828_HIF_VERSION the card speaks
 * @num_queues: %RK1828_HIF_NUM_QUEUES
 * @mem_size: card memory in bytes, addresses [0, mem_size)
 * @serial: card serial number
 * @max_ctx: highest context id the card accepts (ids start at 1)
 * @threads: compute threads (informational)
 * @fw: firmware/emulator version string, NUL padded
 */
struct rk1828_hif_info {
	__le32 version;
	__le32 num_queues;
	__le64 mem_size;
	__le64 serial;
	__le32 max_ctx;
	__le32 threads;
	char fw[32];
};

/* struct rk1828_hif_stats.flags: the card runs with modelled timing. */
#define RK1828_HIF_STATS_TIMING		0x1U
/* ... and its EXEC skips the math (timing-only emulation). */
#define RK1828_HIF_STATS_TIMING_ONLY	0x2U
/* The temperature is at or above the limit: the card throttles. */
#define RK1828_HIF_STATS_THROTTLED	0x4U
/* @power_mw, @temp_mc and @temp_limit_mc are valid. */
#define RK1828_HIF_STATS_THERMAL	0x8U

/**
 * struct rk1828_hif_stats - STATS reply data (128 bytes): the card's own
 *	account of its work and its sensors since it started
 * @flags: RK1828_HIF_STATS_*
 * @power_mw: power now (smoothed over about a second), milliwatts; with
 *	modelled timing, the modelled average since the card started
 * @uptime_ns: time since the card started
 * @busy_ns: time each queue (&enum rk1828_hif_queue) was executing
 *	commands; a card whose time is modelled (the emulator's timing mode)
 *	reports the modelled time
 * @energy_uj: energy used since the card started, microjoules
 * @late_jobs: with modelled timing, jobs that finished after their
 *	modelled time
 * @jobs: commands counted in @busy_ns
 * @temp_mc: die temperature, millidegrees Celsius (signed)
 * @temp_limit_mc: temperature at which the card throttles, millidegrees
 *	Celsius (signed)
 * @reserved: zero
 */
struct rk1828_hif_stats {
	__le32 flags;
	__le32 power_mw;
	__le64 uptime_ns;
	__le64 busy_ns[3];
	__le64 energy_uj;
	__le64 late_jobs;
	__le64 jobs;
	__le32 temp_mc;
	__le32 temp_limit_mc;
	__le64 reserved[7];
};

#endif /* __RK1828_HIF_H__ */
