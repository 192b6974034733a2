/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Rockchip RK1828 NPU card accel driver: device, context and transport
 * definitions shared by all files of the driver.
 */
#ifndef __RK1828_DRV_H__
#define __RK1828_DRV_H__

#include <linux/atomic.h>
#include <linux/idr.h>
#include <linux/kref.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <drm/drm_device.h>
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>

#include "rk1828_hif.h"
#include "rk1828_p2p.h"
#include "rk1828_telemetry.h"

#define RK1828_DRIVER_NAME	"rk1828"
#define RK1828_DRIVER_DESC	"Rockchip RK1828 NPU card"

/* Card memory allocation granule and alignment of card BOs. */
#define RK1828_CARD_ALIGN	SZ_4K

/*
 * Size granule of card BOs: drm_gem_private_object_init() wants whole
 * pages, which are larger than the card granule on 16K/64K-page kernels.
 */
#define RK1828_CARD_BO_ALIGN	max_t(u64, RK1828_CARD_ALIGN, PAGE_SIZE)

/* Job timeouts after which a context is banned. */
#define RK1828_BAN_TIMEOUTS	3

/* Upper bound on the array counts of a submit. */
#define RK1828_MAX_SUBMIT_COUNT	64

/**
 * enum rk1828_sched_queue - scheduled queues of a card
 * @RK1828_SCHED_COMPUTE: EXEC jobs, runs on %RK1828_HIF_QUEUE_COMPUTE
 * @RK1828_SCHED_COPY: COPY jobs, runs on %RK1828_HIF_QUEUE_COPY
 * @RK1828_SCHED_NUM: number of scheduled queues
 */
enum rk1828_sched_queue {
	RK1828_SCHED_COMPUTE = 0,
	RK1828_SCHED_COPY = 1,
	RK1828_SCHED_NUM = 2,
};

struct rk1828_device;
struct rk1828_hif_cmd;
struct sg_table;

/**
 * struct rk1828_transport_ops - byte-stream transport to the card
 *
 * A transport either moves bytes on the command (OUT) and completion (IN)
 * streams of each hardware queue (@send, @recv_start, @recv_wait,
 * @recv_cancel: the USB transport, with bulk endpoints), or runs whole
 * commands through descriptor rings whose data the card moves by DMA
 * itself (@exec: the PCIe transport); both can reset the card's queues.
 * Buffers passed to @send and @recv are DMA-able (kmalloc) and at most
 * &rk1828_device.bounce_size bytes. A queue has at most one send and one
 * receive, or one @exec, in flight: @send, @recv_start, @recv_wait,
 * @recv_cancel and @exec are called with &rk1828_hif_queue_state.lock of
 * @queue held (implementations check it with rk1828_assert_queue_locked()),
 * @reset_queues with &rk1828_device.reset_lock held; @abort takes no lock
 * of the caller's and may run concurrently with any of them.
 *
 * Every operation may be called from a job's worker, inside the dma-fence
 * signalling critical section of the job's hardware fence (a job that
 * times out resets the card from there): an implementation allocates no
 * memory that can enter reclaim (preallocate at probe; GFP_ATOMIC at
 * most, for allocations of the bus layer underneath), takes no lock that
 * is held while waiting for a dma_fence and waits only for the card,
 * bounded by the timeouts it is given.
 */
struct rk1828_transport_ops {
	/**
	 * @send: send @len bytes of @buf on the command stream of @queue.
	 * The transfer must be started between rk1828_xfer_begin(@gen) and
	 * rk1828_xfer_end(). Waits at most @timeout jiffies
	 * (MAX_SCHEDULE_TIMEOUT: forever). Returns 0, -ETIMEDOUT,
	 * -ECANCELED when a card reset started (before or during the
	 * transfer), -ENODEV when the card is gone, or another negative
	 * errno.
	 */
	int (*send)(struct rk1828_device *rdev, u32 queue, u32 gen,
		    const void *buf, size_t len, long timeout);
	/**
	 * @recv_start: start receiving up to @len bytes of the completion
	 * stream of @queue into @buf (rules of @send), then call
	 * @recv_wait or @recv_cancel. Returns 0 or an errno as for @send.
	 */
	int (*recv_start)(struct rk1828_device *rdev, u32 queue, u32 gen,
			  void *buf, size_t len);
	/**
	 * @recv_wait: wait at most @timeout jiffies for the receive started
	 * by @recv_start; *@actual gets the byte count (0 for a zero-length
	 * packet). On timeout the receive is cancelled. Errors as for @send.
	 */
	int (*recv_wait)(struct rk1828_device *rdev, u32 queue,
			 size_t *actual, long timeout);
	/** @recv_cancel: cancel the receive started by @recv_start. */
	void (*recv_cancel)(struct rk1828_device *rdev, u32 queue);
	/**
	 * @exec: if set, used instead of the stream operations: post the
	 * command header @msg with the data of @cmd (&rk1828_hif_cmd.sgt
	 * pages, or the kernel buffers &rk1828_hif_cmd.wdata and
	 * &rk1828_hif_cmd.rdata) on the ring of @queue, started between
	 * rk1828_xfer_begin(@gen) and rk1828_xfer_end(), and wait at most
	 * @timeout jiffies for its completion header, copied to @cpl. Reply
	 * data for a kernel buffer is copied to &rk1828_hif_cmd.rdata when
	 * the completion reports success. Returns 0 (@cpl is valid),
	 * -ETIMEDOUT, -ECANCELED, -ENODEV as for @send, -E2BIG for data the
	 * transport cannot describe in one command.
	 */
	int (*exec)(struct rk1828_device *rdev, u32 queue, u32 gen,
		    const struct rk1828_hif_msg *msg,
		    const struct rk1828_hif_cmd *cmd,
		    struct rk1828_hif_msg *cpl, long timeout);
	/**
	 * @abort: cancel every transfer in flight (they fail with
	 * -ECANCELED) and wait until they have completed.
	 */
	void (*abort)(struct rk1828_device *rdev);
	/**
	 * @reset_queues: make the card drop every command in flight and all
	 * partial stream state (%RK1828_HIF_REQ_RESET_QUEUES).
	 */
	int (*reset_queues)(struct rk1828_device *rdev);
};

/**
 * struct rk1828_hif_queue_state - driver side of one hardware queue
 * @lock: serialises commands: one command in flight per queue
 * @bounce: kmalloc'ed (DMA-able) staging buffer of the command stream,
 *	&rk1828_device.bounce_size bytes
 * @rx: staging buffer of the completion stream, same size
 * @seq: sequence number of the last command sent
 * @commands: commands completed (debugfs)
 * @errors: commands that failed (debugfs)
 */
struct rk1828_hif_queue_state {
	struct mutex lock; /* one command in flight per queue */
	void *bounce;
	void *rx;
	u32 seq;
	atomic64_t commands;
	atomic64_t errors;
};

/**
 * struct rk1828_sched - one scheduled queue
 * @base: the DRM GPU scheduler
 * @rdev: owning device
 * @queue: &enum rk1828_sched_queue
 * @hif_queue: hardware queue the jobs run on
 * @name: queue name ("compute" or "copy")
 * @run_wq: ordered workqueue that executes jobs on the transport
 * @fence_context: dma_fence context of the hardware fences
 * @fence_seqno: last hardware fence seqno
 * @jobs_submitted: jobs pushed to the scheduler (debugfs, netlink)
 * @jobs_done: jobs completed without error (debugfs)
 * @jobs_failed: jobs completed with an error (debugfs)
 * @timeouts: jobs that timed out (debugfs)
 */
struct rk1828_sched {
	struct drm_gpu_scheduler base;
	struct rk1828_device *rdev;
	u32 queue;
	u32 hif_queue;
	const char *name;
	struct workqueue_struct *run_wq;
	u64 fence_context;
	atomic64_t fence_seqno;
	atomic64_t jobs_submitted;
	atomic64_t jobs_done;
	atomic64_t jobs_failed;
	atomic64_t timeouts;
};

/**
 * struct rk1828_device - one RK1828 card
 * @drm: DRM device (one accel node per card)
 * @tops: transport operations
 * @transport: transport private data
 * @dma_dev: device that does DMA for PRIME imports (the USB host
 *	controller), holds a reference
 * @index: card index of the netlink family (rk1828_netlink.c), from
 *	registration to unplug
 * @link_type: &enum drm_rk1828_link_type
 * @link_speed: link speed in Mbit/s
 * @version: protocol version the card reported in INFO
 * @mem_size: card memory size in bytes
 * @serial: card serial number
 * @max_ctx: highest context id the card accepts
 * @fw: firmware version string, NUL terminated
 * @bounce_size: size of each queue's bounce buffer in bytes
 * @xfer_max: largest WRITE/READ a job sends as one command (bytes), 0 for
 *	the default (64 MiB); a transport that describes data with a bounded
 *	scatter-gather list sets it
 * @hq: driver state of each hardware queue
 * @gone: set once the card is unplugged; nothing reaches it afterwards
 * @xfer_sem: read-held while a transfer or queue reset request is started,
 *	write-held while @reset_gen is bumped or @gone is set, so no transfer
 *	of an older generation starts after a reset began and nothing is sent
 *	after unplug
 * @reset_lock: serialises card resets
 * @resetting: a reset is in progress; commands wait on @reset_wq
 * @reset_gen: incremented (full barrier) at the start of every reset
 * @reset_wq: woken when a reset finishes and on unplug
 * @resets: completed resets (debugfs)
 * @dead: set when a reset request failed, cleared by a reset that works;
 *	while set every command fails with -EIO at once
 * @fault_fail_mgmt: debugfs fault injection: this many management
 *	commands (CTX_*, MAP, UNMAP) fail before they reach the card
 * @fault_lose_mgmt: likewise, applied by the card but their completion
 *	lost (the driver resets the queues as for a timeout)
 * @fault_fail_reset: likewise, reset requests that fail
 * @mm_lock: protects @mm and @mem_free
 * @mm: allocator of card memory, over [RK1828_CARD_ALIGN, mem_size)
 * @mem_free: card memory bytes not allocated to card BOs
 * @mm_quarantine: freed card BOs (&rk1828_card_bo.quarantine) whose UNMAP
 *	failed: their ranges stay allocated until the device is released,
 *	protected by @mm_lock
 * @ctx_ida: allocator of card context ids
 * @ctx_lost: &struct rk1828_lost_ctx of ids whose context may still exist
 *	on the card, protected by @ctx_lock
 * @sched: the scheduled queues
 * @ctx_lock: protects @ctx_list and @ctx_lost
 * @ctx_list: live contexts (debugfs)
 * @job_timeout_ms: job timeout in milliseconds
 * @telemetry: the card's last STATS reply and its poll
 * @p2p: the peer window, exported P2P dma-bufs, P2P and host byte counts
 */
struct rk1828_device {
	struct drm_device drm;
	const struct rk1828_transport_ops *tops;
	void *transport;
	struct device *dma_dev;
	u32 index;

	u32 link_type;
	u32 link_speed;
	u32 version;
	u64 mem_size;
	u64 serial;
	u32 max_ctx;
	char fw[33];

	size_t bounce_size;
	u64 xfer_max;
	struct rk1828_hif_queue_state hq[RK1828_HIF_NUM_QUEUES];

	atomic_t gone;
	struct rw_semaphore xfer_sem;
	struct mutex reset_lock; /* serialises card resets */
	bool resetting;
	atomic_t reset_gen;
	wait_queue_head_t reset_wq;
	atomic64_t resets;
	atomic_t dead;
	atomic_t fault_fail_mgmt;
	atomic_t fault_lose_mgmt;
	atomic_t fault_fail_reset;

	struct mutex mm_lock; /* protects mm and mem_free */
	struct drm_mm mm;
	u64 mem_free;
	struct list_head mm_quarantine;

	struct ida ctx_ida;
	struct list_head ctx_lost;

	struct rk1828_sched sched[RK1828_SCHED_NUM];

	struct mutex ctx_lock; /* protects ctx_list and ctx_lost */
	struct list_head ctx_list;

	unsigned int job_timeout_ms;
	struct rk1828_telemetry telemetry;
	struct rk1828_p2p p2p;
};

/**
 * struct rk1828_ctx - a card context (one per open file)
 * @ref: references: the file, each card BO mapped into it, each job
 * @rdev: the card
 * @id: card context id, 1..&rk1828_device.max_ctx
 * @node: entry in &rk1828_device.ctx_list
 * @jobs: jobs of this context not yet freed (debugfs)
 * @submitted: jobs submitted (debugfs)
 * @closed: the file was closed: jobs that have not started on the card
 *	are cancelled with -ECANCELED (written once, read with READ_ONCE())
 * @timeouts: jobs of this context that timed out on the card
 * @banned: set after %RK1828_BAN_TIMEOUTS timeouts: submits fail and
 *	queued jobs are cancelled with -ECANCELED
 *
 * The context is destroyed on the card (CTX_DESTROY, which also drops
 * every mapping) when the last reference goes. Card BOs hold a reference
 * so that their UNMAP always names a live context.
 */
struct rk1828_ctx {
	struct kref ref;
	struct rk1828_device *rdev;
	u32 id;
	struct list_head node;
	atomic_t jobs;
	atomic64_t submitted;
	bool closed;
	atomic_t timeouts;
	bool banned;
};

/**
 * struct rk1828_lost_ctx - a context id whose fate on the card is unknown
 * @node: entry in &rk1828_device.ctx_lost
 * @id: the id; allocated in &rk1828_device.ctx_ida until the card
 *	confirms the context gone
 */
struct rk1828_lost_ctx {
	struct list_head node;
	u32 id;
};

/**
 * struct rk1828_file - per-file state
 * @rdev: the card
 * @ctx: card context of this file
 * @entity: scheduler entity per &enum rk1828_sched_queue
 * @submit_lock: serialises submits of this file (fence order per entity)
 * @last_fence: finished fence of the last job per queue (protected by
 *	@submit_lock)
 * @seqno: last job sequence number of this file
 * @pending: 1 while the file is open plus one per pushed job that has not
 *	reached &drm_sched_backend_ops.run_job; the entities (and this
 *	struct) are torn down when it drops to zero, so every job passes
 *	run_job and closing never waits for the card
 * @free_work: deferred teardown on the release workqueue, for a file
 *	closed with jobs pending
 */
struct rk1828_file {
	struct rk1828_device *rdev;
	struct rk1828_ctx *ctx;
	struct drm_sched_entity entity[RK1828_SCHED_NUM];
	struct mutex submit_lock; /* submit order, last_fence */
	struct dma_fence *last_fence[RK1828_SCHED_NUM];
	u64 seqno;
	atomic_t pending;
	struct work_struct free_work;
};

static inline struct rk1828_device *to_rk1828_device(struct drm_device *drm)
{
	return container_of(drm, struct rk1828_device, drm);
}

static inline bool rk1828_is_gone(struct rk1828_device *rdev)
{
	return atomic_read(&rdev->gone);
}

static inline bool rk1828_is_dead(struct rk1828_device *rdev)
{
	return atomic_read(&rdev->dead);
}

/**
 * rk1828_assert_queue_locked() - check the lock contract of the per-queue
 *	transport operations
 * @rdev: the card
 * @queue: &enum rk1828_hif_queue
 *
 * The caller must hold &rk1828_hif_queue_state.lock of @queue: only one
 * command is in flight per queue, so a transport needs no locking of its
 * own for the queue's transfers.
 */
static inline void rk1828_assert_queue_locked(struct rk1828_device *rdev,
					      u32 queue)
{
	lockdep_assert_held(&rdev->hq[queue].lock);
}

/* rk1828_drv.c */
struct rk1828_device *rk1828_device_alloc(struct device *parent);
int rk1828_device_register(struct rk1828_device *rdev);
void rk1828_device_unplug(struct rk1828_device *rdev);
void rk1828_ctx_put(struct rk1828_ctx *ctx);
struct rk1828_ctx *rk1828_ctx_get(struct rk1828_ctx *ctx);

/* rk1828_fops.c */
extern const struct file_operations rk1828_accel_fops;

/* rk1828_usb.c */
#if IS_ENABLED(CONFIG_USB)
int rk1828_usb_register(void);
void rk1828_usb_unregister(void);
#else
static inline int rk1828_usb_register(void) { return 0; }
static inline void rk1828_usb_unregister(void) { }
#endif

/* rk1828_pci.c */
#if IS_ENABLED(CONFIG_PCI)
int rk1828_pci_register(void);
void rk1828_pci_unregister(void);
#else
static inline int rk1828_pci_register(void) { return 0; }
static inline void rk1828_pci_unregister(void) { }
#endif

/* rk1828_debugfs.c */
#ifdef CONFIG_DEBUG_FS
void rk1828_debugfs_init(struct rk1828_device *rdev);
#else
static inline void rk1828_debugfs_init(struct rk1828_device *rdev) { }
#endif

#endif /* __RK1828_DRV_H__ */
