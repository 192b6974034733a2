/* SPDX-License-Identifier: MIT */
/*
 * librk1828: userspace runtime for RK1828 NPU cards on top of libdrm.
 *
 * Wraps the ioctls of uapi/drm/rk1828_accel.h (GET_PARAM, BO_CREATE,
 * BO_INFO, SUBMIT, BO_WAIT), the generic DRM syncobj and PRIME ioctls and
 * the sync_file ioctls (linux/sync_file.h) into small functions.
 *
 * Conventions: every function that can fail returns 0 on success or a
 * negative errno. On failure a human-readable message naming the device
 * node and the operation is kept per thread; read it with rk_error().
 * Timeouts are absolute CLOCK_MONOTONIC times in nanoseconds (rk_now_ns()
 * + a delay), the convention of the DRM syncobj and rk1828 BO_WAIT ioctls.
 *
 * Cross-card chaining (the pattern the LLM pipeline uses): card A signals a
 * syncobj when its job is done; rk_syncobj_export_sync_file() turns the
 * fence into a sync_file fd, rk_syncobj_import_sync_file() on card B puts
 * it into one of B's syncobjs, and B's next job lists that syncobj in its
 * in-syncs. Host BOs move between cards as dma-bufs (rk_bo_export() /
 * rk_bo_import()), so both cards address the same pages.
 *
 * Installed as <rk1828/rk1828.h> with librk1828.so.1 and rk1828.pc
 * (pkg-config --cflags --libs rk1828). ABI: only these rk_* functions are
 * exported; what keeps or bumps the soname is in
 * userspace/doc/librk1828.rst ("ABI").
 */
#ifndef RK1828_LIB_H
#define RK1828_LIB_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Maximum syncobjs and BO handles per submit (uapi limit). */
#define RK_MAX_SYNCS	64
#define RK_MAX_BOS	64

/**
 * enum rk_bo_kind - where a buffer object's memory lives
 * @RK_BO_HOST: host memory: mmap-able, shareable with other cards as a
 *	dma-buf; COPY jobs move it to and from card memory
 * @RK_BO_CARD: card memory: weights, KV cache, activations; EXEC programs
 *	address it, the CPU cannot map it
 * @RK_BO_PEER: another card's memory imported for peer-to-peer DMA
 *	(rk_bo_import() of a dma-buf from rk_bo_create_p2p() on another
 *	card): COPY jobs move data between it and this card's card BOs as
 *	with a host BO, without touching host memory; not mmap-able
 */
enum rk_bo_kind {
	RK_BO_HOST = 1,
	RK_BO_CARD = 2,
	RK_BO_PEER = 3,
};

/**
 * enum rk_link_type - link between host and card
 * @RK_LINK_UNKNOWN: a link type this library does not know
 * @RK_LINK_USB: USB 3.0
 * @RK_LINK_PCIE: PCIe
 */
enum rk_link_type {
	RK_LINK_UNKNOWN = 0,
	RK_LINK_USB = 1,
	RK_LINK_PCIE = 2,
};

/* Capabilities of a card and its driver (struct rk_card @caps bits). */
/* Submits accept timeline syncobj points. */
#define RK_CAP_TIMELINE_SYNCOBJ		0x1ULL
/* Host BOs of other devices can be imported. */
#define RK_CAP_PRIME_IMPORT		0x2ULL
/* EXEC runs decoder-layer segment programs. */
#define RK_CAP_EXEC_DECODER		0x4ULL
/* The driver knows card-to-card P2P (rk_p2p_query(), rk_bo_create_p2p()). */
#define RK_CAP_P2P			0x8ULL

/**
 * enum rk_p2p_status - whether one card can DMA into another's memory
 * @RK_P2P_OK: yes: the exporter's rk_bo_create_p2p() BOs import on the
 *	importer as %RK_BO_PEER and its COPY jobs reach them directly
 * @RK_P2P_NO_WINDOW: the exporter exposes no memory to peers (USB card)
 * @RK_P2P_NOT_PCI: the importer is not a PCIe card
 * @RK_P2P_NO_KERNEL: the kernel has no CONFIG_PCI_P2PDMA
 * @RK_P2P_TOPOLOGY: the kernel refuses the pair (PCI topology)
 * @RK_P2P_SAME_CARD: both are the same card
 * @RK_P2P_NO_DRIVER: a driver older than 1.2 (no P2P support)
 */
enum rk_p2p_status {
	RK_P2P_OK = 0,
	RK_P2P_NO_WINDOW = 1,
	RK_P2P_NOT_PCI = 2,
	RK_P2P_NO_KERNEL = 3,
	RK_P2P_TOPOLOGY = 4,
	RK_P2P_SAME_CARD = 5,
	RK_P2P_NO_DRIVER = 6,
};

/**
 * struct rk_card - one opened RK1828 accel node
 * @fd: file descriptor of the accel node (one card context)
 * @index: position in the array rk_open_all() returned (0-based)
 * @minor: N of /dev/accel/accelN
 * @node: device node path
 * @protocol: host-interface protocol version, (major << 16) | minor
 * @mem_size: usable card memory in bytes
 * @mem_free: card memory not allocated to any BO, bytes (at open time;
 *	call rk_card_refresh() to re-read)
 * @link_type: &enum rk_link_type
 * @link_speed: link speed in Mbit/s
 * @serial: card serial number
 * @caps: RK_CAP_* bit mask
 * @ctx_id: the card context id of @fd
 */
struct rk_card {
	int fd;
	int index;
	int minor;
	char node[64];
	uint32_t protocol;
	uint64_t mem_size;
	uint64_t mem_free;
	enum rk_link_type link_type;
	uint32_t link_speed;
	uint64_t serial;
	uint64_t caps;
	uint64_t ctx_id;
};

/**
 * struct rk_bo - a buffer object of one card (own or PRIME-imported)
 * @handle: GEM handle on the card's fd
 * @kind: &enum rk_bo_kind
 * @size: size in bytes (rounded up by the kernel)
 * @card_addr: card address (card BOs), 0 for host BOs
 * @mmap_offset: fake mmap offset on the fd (host BOs)
 * @map: CPU mapping after rk_bo_mmap(), else NULL
 */
struct rk_bo {
	uint32_t handle;
	enum rk_bo_kind kind;
	uint64_t size;
	uint64_t card_addr;
	uint64_t mmap_offset;
	void *map;
};

/**
 * struct rk_sync - one syncobj to wait on or signal in a submit
 * @handle: syncobj handle on the submitting card's fd
 * @point: timeline point, 0 for a binary syncobj
 */
struct rk_sync {
	uint32_t handle;
	uint64_t point;
};

/**
 * rk_error() - message of the last failure of this thread
 *
 * Return: a NUL-terminated string such as
 * "/dev/accel/accel1: SUBMIT(COPY): Invalid argument"; "" when none.
 * Valid until the next librk1828 call in this thread.
 */
const char *rk_error(void);

/** rk_now_ns() - current CLOCK_MONOTONIC time in ns (for absolute timeouts). */
int64_t rk_now_ns(void);

/** rk_link_name() - "usb", "pcie" or "unknown" for an &enum rk_link_type. */
const char *rk_link_name(enum rk_link_type link_type);

/**
 * rk_open() - open one accel node and read its parameters
 * @node: path such as "/dev/accel/accel0"
 * @card: filled on success (@card->index is set to 0)
 *
 * Checks that the node belongs to the "rk1828" driver (drmGetVersion) and
 * reads every GET_PARAM value into @card.
 *
 * Return: 0; -ENODEV when the node is another driver's; open()/ioctl
 * errors as negative errno.
 */
int rk_open(const char *node, struct rk_card *card);

/** rk_close() - close @card's fd (its BOs and syncobjs go with it). */
void rk_close(struct rk_card *card);

/**
 * rk_open_all() - open every RK1828 card
 * @cards: out, malloc'ed array sorted by accel minor; free with
 *	rk_close_all()
 * @n_cards: out, number of cards
 *
 * Enumerates /dev/accel/accel*, skipping nodes of other drivers. A node
 * of ours that cannot be opened is an error (it would silently change the
 * card numbering otherwise).
 *
 * Return: 0 with @n_cards >= 1; -ENOENT when no RK1828 card exists (the
 * message hints at loading the module); other negative errno on failure.
 */
int rk_open_all(struct rk_card **cards, int *n_cards);

/** rk_close_all() - close and free an array from rk_open_all(). */
void rk_close_all(struct rk_card *cards, int n_cards);

/** rk_card_refresh() - re-read @card->mem_free. Return: 0 or negative errno. */
int rk_card_refresh(struct rk_card *card);

/**
 * rk_bo_create() - create a BO
 * @card: the card
 * @size: bytes (> 0)
 * @kind: host or card memory
 * @bo: out; @bo->map is NULL
 *
 * Return: 0; -EINVAL (also for an unknown @kind), -ENOMEM (card memory
 * full), -E2BIG, -ENODEV.
 */
int rk_bo_create(struct rk_card *card, uint64_t size, enum rk_bo_kind kind,
		 struct rk_bo *bo);

/**
 * rk_bo_info() - describe the BO @handle of @card into @bo (map = NULL)
 * Return: 0 or negative errno (-ENOENT unknown handle).
 */
int rk_bo_info(struct rk_card *card, uint32_t handle, struct rk_bo *bo);

/**
 * rk_bo_mmap() - map a host BO read/write into this process
 *
 * Sets @bo->map (idempotent). Return: 0; -EINVAL for a card BO; mmap
 * errors.
 */
int rk_bo_mmap(struct rk_card *card, struct rk_bo *bo);

/**
 * rk_bo_destroy() - unmap and close the GEM handle; @bo is zeroed.
 * Return: 0 or negative errno. A zero handle is a no-op.
 */
int rk_bo_destroy(struct rk_card *card, struct rk_bo *bo);

/**
 * rk_bo_export() - export a host BO as a dma-buf
 * @dmabuf_fd: out, a new close-on-exec read/write dma-buf fd (caller
 *	closes it)
 * Return: 0 or negative errno.
 */
int rk_bo_export(struct rk_card *card, const struct rk_bo *bo, int *dmabuf_fd);

/**
 * rk_bo_import() - import a dma-buf (e.g. another card's host BO)
 * @dmabuf_fd: the dma-buf; still owned by the caller
 * @bo: out, the new handle and its BO_INFO
 * Return: 0 or negative errno.
 */
int rk_bo_import(struct rk_card *card, int dmabuf_fd, struct rk_bo *bo);

/**
 * rk_p2p_query() - can @importer move data to and from @exporter's memory
 *	by peer-to-peer DMA
 * @importer: the card whose COPY jobs would use the peer's memory
 * @exporter: the card that would create the buffers (rk_bo_create_p2p())
 * @status: out, &enum rk_p2p_status
 * @window: out (may be NULL), bytes of @exporter's peer window
 *
 * Asks the driver once; the answer depends only on the pair, the PCI
 * topology and the kernel. Return: 0 (a pair that cannot is not an
 * error); negative errno of the ioctl.
 */
int rk_p2p_query(struct rk_card *importer, const struct rk_card *exporter,
		 enum rk_p2p_status *status, uint64_t *window);

/** rk_p2p_status_name() - a short word for @status ("p2p", "no-kernel", ...). */
const char *rk_p2p_status_name(enum rk_p2p_status status);

/**
 * rk_bo_create_p2p() - create a card BO in the card's peer window
 * @card: the card (the exporter)
 * @size: bytes (> 0)
 * @bo: out, a %RK_BO_CARD BO that rk_bo_export() can share with cards
 *	for which rk_p2p_query() says %RK_P2P_OK
 *
 * Return: 0; -EOPNOTSUPP without a peer window; -ENOMEM when the window
 * is full; -E2BIG; other negative errno.
 */
int rk_bo_create_p2p(struct rk_card *card, uint64_t size, struct rk_bo *bo);

/**
 * rk_bo_wait() - wait for every job using @bo
 * @abs_timeout_ns: absolute CLOCK_MONOTONIC deadline (past: poll)
 * @job_status: out (may be NULL), 0 or the first failed job's -errno
 * Return: 0 when idle; -ETIMEDOUT; other negative errno. A failed job is
 * NOT a failure of the wait: check @job_status.
 */
int rk_bo_wait(struct rk_card *card, const struct rk_bo *bo,
	       int64_t abs_timeout_ns, int *job_status);

/**
 * rk_submit_copy() - queue a COPY job
 * @src, @src_off: source BO handle and byte offset
 * @dst, @dst_off: destination BO handle and byte offset
 * @size: bytes (> 0)
 * @in, @n_in: syncobjs (binary or timeline points) to wait for
 * @out, @n_out: syncobjs to signal (timeline: the point is added)
 * @seqno: out (may be NULL), the per-file job sequence number
 *
 * Host->card, card->host and card->card are allowed. Return: 0 or
 * negative errno; nothing is queued on failure.
 */
int rk_submit_copy(struct rk_card *card, uint32_t src, uint64_t src_off,
		   uint32_t dst, uint64_t dst_off, uint64_t size,
		   const struct rk_sync *in, unsigned int n_in,
		   const struct rk_sync *out, unsigned int n_out,
		   uint64_t *seqno);

/**
 * rk_submit_exec() - queue an EXEC job running a segment program
 * @prog, @prog_off, @prog_size: card BO holding a struct
 *	rk1828_program (include/rk1828/program.h) at @prog_off
 * @bos, @n_bos: every card BO the program touches (<= RK_MAX_BOS)
 * @in, @n_in, @out, @n_out, @seqno: as for rk_submit_copy()
 * Return: 0 or negative errno.
 */
int rk_submit_exec(struct rk_card *card, uint32_t prog, uint64_t prog_off,
		   uint64_t prog_size, const uint32_t *bos, unsigned int n_bos,
		   const struct rk_sync *in, unsigned int n_in,
		   const struct rk_sync *out, unsigned int n_out,
		   uint64_t *seqno);

/**
 * rk_syncobj_create() - create a syncobj
 * @signaled: create it already signalled (a wait on it returns at once)
 * Return: 0 or negative errno.
 */
int rk_syncobj_create(struct rk_card *card, bool signaled, uint32_t *handle);

/** rk_syncobj_destroy() - destroy a syncobj. Return: 0 or negative errno. */
int rk_syncobj_destroy(struct rk_card *card, uint32_t handle);

/**
 * rk_syncobj_export() - a syncobj itself as an fd (DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD
 * without flags: the opaque syncobj file, not a sync_file of its fence)
 * @handle: syncobj of @card
 * @fd: out, a new fd (caller closes it)
 *
 * rk_syncobj_import() of that fd on another card gives a handle there to
 * the same syncobj: whatever fence a job on one card signals into it is
 * the fence a job on the other card names as its in-sync, with no
 * sync_file export/import per job (drm_syncobj.c; syncobjs belong to no
 * device).
 * Return: 0 or negative errno.
 */
int rk_syncobj_export(struct rk_card *card, uint32_t handle, int *fd);

/**
 * rk_syncobj_import() - a handle on @card to the syncobj behind an fd of
 * rk_syncobj_export() (DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE without flags)
 * @fd: still owned by the caller
 * @handle: out; rk_syncobj_destroy() drops this card's reference only
 * Return: 0 or negative errno (-EINVAL when @fd is not a syncobj file).
 */
int rk_syncobj_import(struct rk_card *card, int fd, uint32_t *handle);

/**
 * rk_syncobj_wait() - wait for syncobjs
 * @handles, @n: syncobjs of @card
 * @points: timeline points, or NULL for binary syncobjs
 * @abs_timeout_ns: absolute CLOCK_MONOTONIC deadline
 * @wait_all: all (true) or any (false)
 *
 * Waits also for fences not yet submitted (WAIT_FOR_SUBMIT). This only
 * waits; fence errors are read with rk_syncobj_status().
 * Return: 0; -ETIME on timeout; other negative errno.
 */
int rk_syncobj_wait(struct rk_card *card, const uint32_t *handles,
		    const uint64_t *points, unsigned int n,
		    int64_t abs_timeout_ns, bool wait_all);

/**
 * rk_syncobj_export_sync_file() - the fence of a syncobj as a sync_file
 * @point: timeline point, 0 for a binary syncobj (a timeline point is
 *	first transferred into a temporary binary syncobj)
 * @fd: out, a new sync_file fd (caller closes it)
 * Return: 0 or negative errno (-EINVAL when no fence is attached).
 */
int rk_syncobj_export_sync_file(struct rk_card *card, uint32_t handle,
				uint64_t point, int *fd);

/**
 * rk_syncobj_import_sync_file() - put a sync_file's fence into a syncobj
 * @point: 0 replaces the fence of a binary syncobj; otherwise the fence
 *	becomes timeline point @point
 * @fd: sync_file fd, still owned by the caller
 * Return: 0 or negative errno.
 */
int rk_syncobj_import_sync_file(struct rk_card *card, uint32_t handle,
				uint64_t point, int fd);

/**
 * rk_sync_file_status() - status of a sync_file (SYNC_IOC_FILE_INFO)
 * Return: 1 signalled without error, 0 still active, or the negative errno
 * the job failed with (e.g. -EIO, -EFAULT, -ETIMEDOUT, -ENODEV).
 */
int rk_sync_file_status(int fd);

/**
 * rk_sync_file_info() - status and signal time of a sync_file holding one
 * fence (SYNC_IOC_FILE_INFO with one struct sync_fence_info)
 * @fd: sync_file fd
 * @timestamp_ns: out: when the fence signalled (CLOCK_MONOTONIC, the
 *	clock of rk_now_ns()), 0 while it is active or when the sync_file
 *	holds several fences (then only the status is read)
 * Return: as rk_sync_file_status().
 */
int rk_sync_file_info(int fd, int64_t *timestamp_ns);

/**
 * rk_sync_file_wait() - wait until a sync_file signals
 * @abs_timeout_ns: absolute CLOCK_MONOTONIC deadline
 * Return: 0 when signalled without error, -ETIME on timeout, or the job's
 * negative errno.
 */
int rk_sync_file_wait(int fd, int64_t abs_timeout_ns);

/**
 * rk_syncobj_status() - wait for a syncobj's fence and return its status
 * @point: timeline point or 0
 * Return: 0 when it signalled without error, -ETIME on timeout, or the
 * negative errno of the job that signalled it.
 */
int rk_syncobj_status(struct rk_card *card, uint32_t handle, uint64_t point,
		      int64_t abs_timeout_ns);

#ifdef __cplusplus
}
#endif

#endif
