/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/rk1828.yaml */
/* YNL-GEN uapi header */

#ifndef _UAPI_LINUX_RK1828_H
#define _UAPI_LINUX_RK1828_H

#define RK1828_FAMILY_NAME	"rk1828"
#define RK1828_FAMILY_VERSION	1

/**
 * enum rk1828_link_type - Link between host and card (the values of
 *   DRM_RK1828_LINK_*).
 * @RK1828_LINK_TYPE_USB: USB 3.0 bulk endpoints.
 * @RK1828_LINK_TYPE_PCIE: PCIe 2.1 x2.
 */
enum rk1828_link_type {
	RK1828_LINK_TYPE_USB = 1,
	RK1828_LINK_TYPE_PCIE,
};

/**
 * enum rk1828_card_state - Whether the card answers.
 * @RK1828_CARD_STATE_OK: The card answers.
 * @RK1828_CARD_STATE_DEAD: A queue reset failed: every command fails at once
 *   until a later reset works.
 */
enum rk1828_card_state {
	RK1828_CARD_STATE_OK,
	RK1828_CARD_STATE_DEAD,
};

/**
 * enum rk1828_queue - Hardware queues of a card (the card protocol's queue
 *   numbers).
 * @RK1828_QUEUE_MGMT: Management commands (contexts, mappings, queries).
 * @RK1828_QUEUE_COMPUTE: EXEC jobs.
 * @RK1828_QUEUE_COPY: COPY jobs.
 */
enum rk1828_queue {
	RK1828_QUEUE_MGMT,
	RK1828_QUEUE_COMPUTE,
	RK1828_QUEUE_COPY,
};

/**
 * enum rk1828_reset_reason - Why the card's queues were reset.
 * @RK1828_RESET_REASON_TIMEOUT: A command (a job's, or a management command)
 *   timed out.
 * @RK1828_RESET_REASON_TRANSPORT: A malformed completion or a transport error.
 * @RK1828_RESET_REASON_LOST_COMPLETION: A management command was applied but
 *   its completion was lost (the debugfs fault injection lose_mgmt).
 * @RK1828_RESET_REASON_DEBUGFS: Requested through debugfs (the card's reset
 *   file).
 * @RK1828_RESET_REASON_ADMIN: Requested with the card-reset command.
 */
enum rk1828_reset_reason {
	RK1828_RESET_REASON_TIMEOUT = 1,
	RK1828_RESET_REASON_TRANSPORT,
	RK1828_RESET_REASON_LOST_COMPLETION,
	RK1828_RESET_REASON_DEBUGFS,
	RK1828_RESET_REASON_ADMIN,
};

enum {
	RK1828_A_CARD_INDEX = 1,
	RK1828_A_CARD_ACCEL_MINOR,
	RK1828_A_CARD_DEV_NAME,
	RK1828_A_CARD_SERIAL,
	RK1828_A_CARD_FW_VERSION,
	RK1828_A_CARD_PROTOCOL_VERSION,
	RK1828_A_CARD_LINK_TYPE,
	RK1828_A_CARD_LINK_SPEED,
	RK1828_A_CARD_MEM_TOTAL,
	RK1828_A_CARD_MEM_FREE,
	RK1828_A_CARD_CONTEXTS,
	RK1828_A_CARD_STATE,
	RK1828_A_CARD_RESETS,
	RK1828_A_CARD_TEMPERATURE,
	RK1828_A_CARD_TEMP_LIMIT,
	RK1828_A_CARD_THROTTLED,
	RK1828_A_CARD_POWER,
	RK1828_A_CARD_ENERGY,
	RK1828_A_CARD_UPTIME,
	RK1828_A_CARD_QUEUE,

	__RK1828_A_CARD_MAX,
	RK1828_A_CARD_MAX = (__RK1828_A_CARD_MAX - 1)
};

enum {
	RK1828_A_QUEUE_ID = 1,
	RK1828_A_QUEUE_COMMANDS,
	RK1828_A_QUEUE_COMMAND_ERRORS,
	RK1828_A_QUEUE_JOBS_SUBMITTED,
	RK1828_A_QUEUE_JOBS_COMPLETED,
	RK1828_A_QUEUE_JOBS_FAILED,
	RK1828_A_QUEUE_JOBS_TIMEDOUT,
	RK1828_A_QUEUE_DEPTH,
	RK1828_A_QUEUE_BUSY,

	__RK1828_A_QUEUE_MAX,
	RK1828_A_QUEUE_MAX = (__RK1828_A_QUEUE_MAX - 1)
};

enum {
	RK1828_A_EVENT_INDEX = 1,
	RK1828_A_EVENT_REASON,
	RK1828_A_EVENT_CTX,
	RK1828_A_EVENT_RESULT,
	RK1828_A_EVENT_RESETS,
	RK1828_A_EVENT_QUEUE,
	RK1828_A_EVENT_TIMEOUT_MS,
	RK1828_A_EVENT_TEMPERATURE,
	RK1828_A_EVENT_TEMP_LIMIT,
	RK1828_A_EVENT_THROTTLED,

	__RK1828_A_EVENT_MAX,
	RK1828_A_EVENT_MAX = (__RK1828_A_EVENT_MAX - 1)
};

enum {
	RK1828_CMD_CARD_GET = 1,
	RK1828_CMD_CARD_RESET,
	RK1828_CMD_CARD_ADD,
	RK1828_CMD_CARD_REMOVE,
	RK1828_CMD_RESET,
	RK1828_CMD_JOB_TIMEOUT,
	RK1828_CMD_THERMAL_LIMIT,

	__RK1828_CMD_MAX,
	RK1828_CMD_MAX = (__RK1828_CMD_MAX - 1)
};

#define RK1828_MCGRP_EVENTS	"events"

#endif /* _UAPI_LINUX_RK1828_H */
