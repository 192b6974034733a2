/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Userspace ABI of the Rockchip RK1828 NPU card accel driver.
 *
 * The ABI follows Documentation/process/botching-up-ioctls.rst: only
 * fixed-size types, explicit padding that must be zero, 64-bit user
 * pointers, absolute CLOCK_MONOTONIC timeouts, unknown flags rejected with
 * -EINVAL and structs only ever extended at the end.
 */
#ifndef __UAPI_RK1828_ACCEL_H__
#define __UAPI_RK1828_ACCEL_H__

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_RK1828_GET_PARAM		0x00
#define DRM_RK1828_BO_CREATE		0x01
#define DRM_RK1828_BO_INFO		0x02
#define DRM_RK1828_SUBMIT		0x03
#define DRM_RK1828_BO_WAIT		0x04
#define DRM_RK1828_P2P_QUERY		0x05

#define DRM_IOCTL_RK1828_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RK1828_GET_PARAM, struct drm_rk1828_get_param)
#define DRM_IOCTL_RK1828_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RK1828_BO_CREATE, struct drm_rk1828_bo_create)
#define DRM_IOCTL_RK1828_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RK1828_BO_INFO, struct drm_rk1828_bo_info)
#define DRM_IOCTL_RK1828_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RK1828_SUBMIT, struct drm_rk1828_submit)
#define DRM_IOCTL_RK1828_BO_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RK1828_BO_WAIT, struct drm_rk1828_bo_wait)
#define DRM_IOCTL_RK1828_P2P_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RK1828_P2P_QUERY, struct drm_rk1828_p2p_query)

/**
 * DOC: core ioctls
 *
 * Of DRM core's ioctls an rk1828 file accepts the ones a render node
 * accepts: &DRM_IOCTL_VERSION, &DRM_IOCTL_GET_CAP, &DRM_IOCTL_GEM_CLOSE,
 * &DRM_IOCTL_PRIME_HANDLE_TO_FD, &DRM_IOCTL_PRIME_FD_TO_HANDLE and the
 * DRM_IOCTL_SYNCOBJ_* family. Every other core ioctl (the legacy and
 * master ones such as GET_UNIQUE, GET_MAGIC, SET_MASTER, modesetting,
 * GEM flink names) fails with -EACCES. A syncobj ioctl naming more than
 * 65536 handles fails with -EINVAL.
 */

/**
 * DOC: parameters
 *
 * Parameters read with &DRM_IOCTL_RK1828_GET_PARAM.
 *
 * %DRM_RK1828_PARAM_PROTOCOL_VERSION:
 *	Card host-interface protocol version, (major << 16) | minor.
 * %DRM_RK1828_PARAM_CARD_MEM_SIZE:
 *	Card memory in bytes usable for card BOs.
 * %DRM_RK1828_PARAM_CARD_MEM_FREE:
 *	Card memory in bytes not yet allocated to any card BO (all clients).
 * %DRM_RK1828_PARAM_LINK_TYPE:
 *	One of &enum drm_rk1828_link_type.
 * %DRM_RK1828_PARAM_LINK_SPEED:
 *	Negotiated link speed in Mbit/s, the raw signalling rate (5000 for
 *	USB 3.0 SuperSpeed, 10000 for PCIe 2.1 x2: two lanes of 5 GT/s).
 * %DRM_RK1828_PARAM_CARD_SERIAL:
 *	64-bit serial number the card reports.
 * %DRM_RK1828_PARAM_CAPABILITIES:
 *	Bit mask of %DRM_RK1828_CAP_* the driver and card support.
 * %DRM_RK1828_PARAM_NUM_QUEUES:
 *	Number of hardware queues (one compute and one copy queue: 2).
 * %DRM_RK1828_PARAM_CONTEXT_ID:
 *	Card context id of this file (for debugging and logs).
 * %DRM_RK1828_PARAM_CARD_STATE:
 *	One of &enum drm_rk1828_card_state (driver 1.1).
 * %DRM_RK1828_PARAM_P2P_WINDOW:
 *	Bytes of card memory the card exposes to its peers on the bus (its
 *	peer window, a PCIe BAR), where %DRM_RK1828_BO_P2P card BOs live; 0
 *	when it has none (USB cards, PCIe cards without the window). Driver
 *	1.2.
 */
#define DRM_RK1828_PARAM_PROTOCOL_VERSION	0
#define DRM_RK1828_PARAM_CARD_MEM_SIZE		1
#define DRM_RK1828_PARAM_CARD_MEM_FREE		2
#define DRM_RK1828_PARAM_LINK_TYPE		3
#define DRM_RK1828_PARAM_LINK_SPEED		4
#define DRM_RK1828_PARAM_CARD_SERIAL		5
#define DRM_RK1828_PARAM_CAPABILITIES		6
#define DRM_RK1828_PARAM_NUM_QUEUES		7
#define DRM_RK1828_PARAM_CONTEXT_ID		8
#define DRM_RK1828_PARAM_CARD_STATE		9
#define DRM_RK1828_PARAM_P2P_WINDOW		10

/**
 * enum drm_rk1828_card_state - %DRM_RK1828_PARAM_CARD_STATE values
 * @DRM_RK1828_CARD_OK: the card answers
 * @DRM_RK1828_CARD_DEAD: a queue reset failed: every job and BO_CREATE
 *	of a card BO fails with -EIO at once, until a later reset (for
 *	instance through debugfs) succeeds and the card is OK again
 */
enum drm_rk1828_card_state {
	DRM_RK1828_CARD_OK = 0,
	DRM_RK1828_CARD_DEAD = 1,
};

/** DRM_RK1828_CAP_TIMELINE_SYNCOBJ - submit accepts timeline syncobj points */
#define DRM_RK1828_CAP_TIMELINE_SYNCOBJ		0x1ULL
/** DRM_RK1828_CAP_PRIME_IMPORT - host BOs of other devices can be imported */
#define DRM_RK1828_CAP_PRIME_IMPORT		0x2ULL
/** DRM_RK1828_CAP_EXEC_DECODER - EXEC runs decoder-layer segment programs */
#define DRM_RK1828_CAP_EXEC_DECODER		0x4ULL
/**
 * DRM_RK1828_CAP_P2P - the driver knows &DRM_IOCTL_RK1828_P2P_QUERY and
 * %DRM_RK1828_BO_P2P (driver 1.2); whether a given pair of cards can use
 * peer-to-peer DMA is what the query answers
 */
#define DRM_RK1828_CAP_P2P			0x8ULL

/**
 * enum drm_rk1828_link_type - link between host and card
 * @DRM_RK1828_LINK_USB: USB 3.0 bulk endpoints
 * @DRM_RK1828_LINK_PCIE: PCIe 2.1 x2
 */
enum drm_rk1828_link_type {
	DRM_RK1828_LINK_USB = 1,
	DRM_RK1828_LINK_PCIE = 2,
};

/**
 * struct drm_rk1828_get_param - read one device parameter
 *
 * Errors: -EINVAL for an unknown @param or non-zero @pad, -ENODEV once
 * the card is gone.
 */
struct drm_rk1828_get_param {
	/** @param: in, one of DRM_RK1828_PARAM_* */
	__u32 param;
	/** @pad: in, must be zero */
	__u32 pad;
	/** @value: out, the parameter value */
	__u64 value;
};

/** DRM_RK1828_BO_HOST - host memory (shmem): mmap-able, PRIME export/import */
#define DRM_RK1828_BO_HOST	0x1U
/** DRM_RK1828_BO_CARD - card memory: weights, KV cache, activations */
#define DRM_RK1828_BO_CARD	0x2U
/**
 * DRM_RK1828_BO_P2P - with %DRM_RK1828_BO_CARD: a card BO in the card's
 * peer window, exportable by PRIME as a dma-buf that other PCIe devices
 * (another rk1828 card) write or read by peer-to-peer DMA (driver 1.2)
 */
#define DRM_RK1828_BO_P2P	0x4U
/**
 * DRM_RK1828_BO_PEER - BO_INFO only: a %DRM_RK1828_BO_P2P buffer of
 * another card imported by PRIME for peer-to-peer DMA; a COPY job moves
 * data between it and this card's BOs as with a host BO, but the card's
 * DMA engine reaches the peer's memory directly (driver 1.2)
 */
#define DRM_RK1828_BO_PEER	0x8U

/**
 * struct drm_rk1828_bo_create - create a buffer object
 *
 * Exactly one of %DRM_RK1828_BO_HOST and %DRM_RK1828_BO_CARD must be set.
 * Sizes are rounded up to the page size (host) or to 4 KiB or the page
 * size, whichever is larger (card).
 * A card BO is mapped into this file's card context before the ioctl
 * returns; only jobs of this file can touch it. A new BO of either kind
 * reads as zeros (the card clears card memory when it is mapped), so no
 * client ever sees another client's data.
 *
 * %DRM_RK1828_BO_P2P (with %DRM_RK1828_BO_CARD only) allocates the BO in
 * the card's peer window (%DRM_RK1828_PARAM_P2P_WINDOW) and makes it
 * exportable with &DRM_IOCTL_PRIME_HANDLE_TO_FD; every other card BO is
 * refused export with -EOPNOTSUPP. Importing the dma-buf succeeds only
 * for a device that can reach the window by peer-to-peer DMA (see
 * &DRM_IOCTL_RK1828_P2P_QUERY); on this card itself it gives back the
 * same BO.
 *
 * Errors: -EINVAL for zero size, unknown flags, none/both kinds or
 * %DRM_RK1828_BO_P2P on a host BO,
 * -ENOMEM when the card (or the host) has not enough free memory (for
 * %DRM_RK1828_BO_P2P: in the peer window),
 * -E2BIG for a size above the card memory size (or the peer window),
 * -EOPNOTSUPP for %DRM_RK1828_BO_P2P on a card without a peer window,
 * -ENODEV once unplugged.
 */
struct drm_rk1828_bo_create {
	/** @size: in, size in bytes; out, the rounded-up size */
	__u64 size;
	/** @flags: in, DRM_RK1828_BO_* */
	__u32 flags;
	/** @handle: out, GEM handle */
	__u32 handle;
	/** @card_addr: out, card address of a card BO, 0 for host BOs */
	__u64 card_addr;
	/** @mmap_offset: out, offset for mmap() on the accel fd (host BOs), 0 for card BOs */
	__u64 mmap_offset;
};

/**
 * struct drm_rk1828_bo_info - look up a BO, also one imported by PRIME
 *
 * Errors: -ENOENT for a handle this file does not own, -ENODEV once the
 * card is gone.
 */
struct drm_rk1828_bo_info {
	/** @handle: in, GEM handle */
	__u32 handle;
	/**
	 * @flags: out, DRM_RK1828_BO_HOST or DRM_RK1828_BO_CARD (with
	 * DRM_RK1828_BO_P2P for a BO in the peer window), or
	 * DRM_RK1828_BO_PEER
	 */
	__u32 flags;
	/** @size: out, size in bytes */
	__u64 size;
	/** @card_addr: out, card address (card BOs) */
	__u64 card_addr;
	/** @mmap_offset: out, fake offset for mmap() (host BOs) */
	__u64 mmap_offset;
};

/**
 * struct drm_rk1828_sync - one syncobj wait or signal operation
 */
struct drm_rk1828_sync {
	/** @handle: in, syncobj handle of this file */
	__u32 handle;
	/** @flags: in, must be zero */
	__u32 flags;
	/** @point: in, timeline point, 0 for a binary syncobj */
	__u64 point;
};

/**
 * enum drm_rk1828_job_type - what a submitted job does
 * @DRM_RK1828_JOB_COPY: copy @size bytes from (src_handle, src_offset) to
 *	(dst_handle, dst_offset). Host->card, card->host and card->card are
 *	allowed; host->host is -EINVAL. Runs on the copy queue.
 * @DRM_RK1828_JOB_EXEC: run the segment program stored in the card BO
 *	@src_handle at @src_offset, @size bytes long. The driver does not
 *	read the program: its format (struct rk1828_program) is a contract
 *	between the runtime and the card firmware, defined in the rk1828
 *	project's include/rk1828/program.h and described in the "Segment
 *	programs" section of Documentation/accel/rk1828/protocol.rst. Runs
 *	on the compute queue. Every card BO the program touches must be
 *	listed in @bo_handles (they are kept alive and implicitly fenced).
 */
enum drm_rk1828_job_type {
	DRM_RK1828_JOB_COPY = 1,
	DRM_RK1828_JOB_EXEC = 2,
};

/**
 * struct drm_rk1828_submit - queue one job
 *
 * The job waits for every @in_syncs entry (binary or timeline point) and
 * for the implicit fences of the BOs it reads (all writers) and writes
 * (all users), runs, and then signals every @out_syncs entry and the BOs'
 * reservation objects with its fence. A job that fails (card reports an
 * error such as an access outside this file's mappings, timeout, card
 * reset, unplug) signals its fence with the error set: read it with
 * &DRM_IOCTL_RK1828_BO_WAIT or from the sync_file status.
 *
 * Errors: -EINVAL for an unknown @type, non-zero @flags (also in a
 * struct drm_rk1828_sync), counts over 64, @sync_struct_size smaller than
 * struct drm_rk1828_sync (or larger with non-zero extra bytes), zero
 * @size, offsets or sizes outside a BO, host->host copies, a card->card
 * copy whose source and destination ranges overlap in the same BO, an
 * EXEC program
 * or @bo_handles entry that is not a card BO, an in-sync binary syncobj
 * with no fence or timeline point not yet submitted; -ENOENT for a BO or
 * syncobj handle this file does not own; -EFAULT for bad user pointers;
 * -ENOMEM; -ECANCELED once this file's context is banned (three of its
 * jobs timed out, driver 1.1); -ENODEV once the card is gone, or for a
 * COPY on a %DRM_RK1828_BO_PEER BO whose exporting card is gone (driver
 * 1.2); -EOPNOTSUPP for a peer BO on a card that cannot use it. Nothing
 * is queued when the ioctl fails.
 *
 * A job that does not run signals its fence with the reason: -ECANCELED
 * when its file was closed (or its process exited) before the job started
 * on the card, or its context got banned; the error of the first failed
 * job it depends on (in-syncs and implicit fences), so a chain of jobs
 * stops at the first failure.
 */
struct drm_rk1828_submit {
	/** @type: in, one of &enum drm_rk1828_job_type */
	__u32 type;
	/** @flags: in, must be zero */
	__u32 flags;
	/** @in_syncs: in, user pointer to @in_sync_count struct drm_rk1828_sync */
	__u64 in_syncs;
	/** @out_syncs: in, user pointer to @out_sync_count struct drm_rk1828_sync */
	__u64 out_syncs;
	/** @bo_handles: in, user pointer to @bo_handle_count __u32 handles (EXEC) */
	__u64 bo_handles;
	/** @in_sync_count: in, number of in-syncobjs (at most 64) */
	__u32 in_sync_count;
	/** @out_sync_count: in, number of out-syncobjs (at most 64) */
	__u32 out_sync_count;
	/** @bo_handle_count: in, number of BO handles (EXEC only, at most 64) */
	__u32 bo_handle_count;
	/** @sync_struct_size: in, sizeof(struct drm_rk1828_sync), for extension */
	__u32 sync_struct_size;
	/** @src_handle: in, COPY source BO, or the EXEC program card BO */
	__u32 src_handle;
	/** @dst_handle: in, COPY destination BO; must be zero for EXEC */
	__u32 dst_handle;
	/** @src_offset: in, byte offset in @src_handle */
	__u64 src_offset;
	/** @dst_offset: in, byte offset in @dst_handle; must be zero for EXEC */
	__u64 dst_offset;
	/**
	 * @size: in, bytes to copy, or size of the EXEC program. The source and
	 * destination ranges of a card->card COPY within one BO must not
	 * overlap (-EINVAL): a COPY aborted by a card reset is sent again
	 * and must find its source unchanged.
	 */
	__u64 size;
	/** @seqno: out, per-file job sequence number (for logs and debugfs) */
	__u64 seqno;
};

/**
 * struct drm_rk1828_bo_wait - wait for the jobs using a BO
 *
 * Waits until every job that reads or writes the BO has finished, or
 * until the absolute CLOCK_MONOTONIC time @timeout_ns.
 *
 * @job_status is the first error among the job fences still attached to
 * the BO: a job's fence stays attached until a later job on the BO is
 * submitted after it finished, so it reports the most recent jobs.
 *
 * Return: 0 when the jobs finished (their status is in @job_status),
 * -ETIMEDOUT when @timeout_ns passed first (a time in the past polls),
 * -ENOENT for a bad handle, -EINVAL for non-zero @flags or @pad,
 * -ERESTARTSYS when interrupted, -ENODEV for a call made after the card
 * is gone (a wait already in progress returns 0 with @job_status -ENODEV
 * for the jobs the unplug failed).
 */
struct drm_rk1828_bo_wait {
	/** @handle: in, GEM handle */
	__u32 handle;
	/** @flags: in, must be zero */
	__u32 flags;
	/** @timeout_ns: in, absolute CLOCK_MONOTONIC deadline in ns */
	__s64 timeout_ns;
	/** @job_status: out, 0 or the negative errno of the first failed job */
	__s32 job_status;
	/** @pad: in, must be zero */
	__u32 pad;
};

/**
 * enum drm_rk1828_p2p_status - why peer-to-peer DMA is or is not possible
 * @DRM_RK1828_P2P_OK: this card's DMA engine can reach the peer's window;
 *	its %DRM_RK1828_BO_P2P BOs import here for peer-to-peer COPY jobs
 * @DRM_RK1828_P2P_NO_WINDOW: the peer exposes no peer window (a USB card,
 *	or a PCIe card without one)
 * @DRM_RK1828_P2P_NOT_PCI: this card is not a PCIe device (USB)
 * @DRM_RK1828_P2P_NO_KERNEL: the kernel was built without
 *	CONFIG_PCI_P2PDMA, so no dma-buf exporter allows peer-to-peer DMA
 * @DRM_RK1828_P2P_TOPOLOGY: the kernel's pci_p2pdma_distance() refuses
 *	the pair (for instance separate root ports of a host bridge not on
 *	its allow list; the kernel log names the reason)
 * @DRM_RK1828_P2P_SAME_CARD: the peer is this card (its BOs need no
 *	transfer between cards)
 */
enum drm_rk1828_p2p_status {
	DRM_RK1828_P2P_OK = 0,
	DRM_RK1828_P2P_NO_WINDOW = 1,
	DRM_RK1828_P2P_NOT_PCI = 2,
	DRM_RK1828_P2P_NO_KERNEL = 3,
	DRM_RK1828_P2P_TOPOLOGY = 4,
	DRM_RK1828_P2P_SAME_CARD = 5,
};

/**
 * struct drm_rk1828_p2p_query - can this card DMA into a peer card's window
 *
 * Asks whether this card (the file the ioctl is called on, the importer)
 * can move data by peer-to-peer DMA to and from the %DRM_RK1828_BO_P2P
 * BOs of the card behind @peer_fd (the exporter), i.e. whether importing
 * such a BO here will succeed. The answer depends only on the two cards,
 * the PCI topology and the kernel, so a runtime asks once per pair.
 *
 * Errors: -EINVAL for non-zero @flags, or a @peer_fd that is not
 * an open rk1828 accel node; -EBADF for a @peer_fd that is not an open
 * file; -ENODEV once either card is gone. A pair that cannot use
 * peer-to-peer DMA is not an error: the ioctl returns 0 with @status
 * saying why.
 */
struct drm_rk1828_p2p_query {
	/** @peer_fd: in, an open file of the peer's accel node */
	__s32 peer_fd;
	/** @flags: in, must be zero */
	__u32 flags;
	/**
	 * @distance: out, the kernel's pci_p2pdma_distance() of the pair
	 * (a relative cost, smaller is better) with %DRM_RK1828_P2P_OK,
	 * else -1
	 */
	__s32 distance;
	/** @status: out, one of &enum drm_rk1828_p2p_status */
	__u32 status;
	/** @window_size: out, bytes of the peer's window (0: none) */
	__u64 window_size;
};

#if defined(__cplusplus)
}
#endif

#endif /* __UAPI_RK1828_ACCEL_H__ */
