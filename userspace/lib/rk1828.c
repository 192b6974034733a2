// SPDX-License-Identifier: MIT
/*
 * librk1828: RK1828 accel runtime on libdrm. See rk1828.h for the API.
 *
 * Ioctls: uapi/drm/rk1828_accel.h (driver specific), include/uapi/drm/drm.h
 * (GEM_CLOSE, PRIME_*, SYNCOBJ_*), include/uapi/linux/sync_file.h
 * (SYNC_IOC_FILE_INFO). Every ioctl goes through drmIoctl(), which
 * restarts on EINTR/EAGAIN.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/sync_file.h>
#include <xf86drm.h>

#include "drm/rk1828_accel.h"
#include "rk1828.h"
#include "rk1828/util.h"

static __thread char rk_errbuf[320];

/* Record "NODE: OP: strerror" and return @err (a negative errno). */
static int rk_fail(const struct rk_card *card, int err, const char *fmt, ...)
{
	char op[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(op, sizeof(op), fmt, ap);
	va_end(ap);
	snprintf(rk_errbuf, sizeof(rk_errbuf), "%s: %s: %s",
		 card ? card->node : "rk1828", op, strerror(-err));
	return err;
}

/* Negative errno of the last failed call; never 0. */
static int neg_errno(void)
{
	return errno ? -errno : -EIO;
}

const char *rk_error(void)
{
	return rk_errbuf;
}

int64_t rk_now_ns(void)
{
	return util_now_ns();
}

const char *rk_link_name(enum rk_link_type link_type)
{
	switch (link_type) {
	case RK_LINK_USB:
		return "usb";
	case RK_LINK_PCIE:
		return "pcie";
	default:
		return "unknown";
	}
}

static enum rk_link_type link_from_uapi(uint64_t v)
{
	switch (v) {
	case DRM_RK1828_LINK_USB:
		return RK_LINK_USB;
	case DRM_RK1828_LINK_PCIE:
		return RK_LINK_PCIE;
	default:
		return RK_LINK_UNKNOWN;
	}
}

static uint64_t caps_from_uapi(uint64_t v)
{
	return ((v & DRM_RK1828_CAP_TIMELINE_SYNCOBJ) ? RK_CAP_TIMELINE_SYNCOBJ : 0) |
	       ((v & DRM_RK1828_CAP_PRIME_IMPORT) ? RK_CAP_PRIME_IMPORT : 0) |
	       ((v & DRM_RK1828_CAP_EXEC_DECODER) ? RK_CAP_EXEC_DECODER : 0) |
	       ((v & DRM_RK1828_CAP_P2P) ? RK_CAP_P2P : 0);
}

static enum rk_bo_kind kind_from_uapi(uint32_t flags)
{
	if (flags & DRM_RK1828_BO_PEER)
		return RK_BO_PEER;
	return (flags & DRM_RK1828_BO_CARD) ? RK_BO_CARD : RK_BO_HOST;
}

/* Read one DRM_RK1828_PARAM_* value. Return: 0 or negative errno. */
static int rk_get_param(const struct rk_card *card, uint32_t param, uint64_t *value)
{
	struct drm_rk1828_get_param gp = { .param = param };

	if (drmIoctl(card->fd, DRM_IOCTL_RK1828_GET_PARAM, &gp))
		return rk_fail(card, neg_errno(), "GET_PARAM(%u)", param);
	*value = gp.value;
	return 0;
}

int rk_card_refresh(struct rk_card *card)
{
	return rk_get_param(card, DRM_RK1828_PARAM_CARD_MEM_FREE, &card->mem_free);
}

/* rk_open(); *@foreign is set when the node belongs to another driver. */
static int open_card(const char *node, struct rk_card *card, bool *foreign)
{
	drmVersionPtr ver;
	uint64_t v;
	int ret, is_ours;
	const char *base;

	memset(card, 0, sizeof(*card));
	card->fd = -1;
	snprintf(card->node, sizeof(card->node), "%s", node);
	base = strrchr(node, '/');
	base = base ? base + 1 : node;
	if (sscanf(base, "accel%d", &card->minor) != 1)
		card->minor = -1;

	card->fd = open(node, O_RDWR | O_CLOEXEC);
	if (card->fd < 0)
		return rk_fail(card, neg_errno(), "open");

	ver = drmGetVersion(card->fd);
	if (!ver) {
		ret = rk_fail(card, neg_errno(), "DRM_IOCTL_VERSION");
		goto err;
	}
	is_ours = ver->name && !strcmp(ver->name, "rk1828");
	drmFreeVersion(ver);
	if (!is_ours) {
		*foreign = true;
		ret = rk_fail(card, -ENODEV, "not an rk1828 device");
		goto err;
	}

	ret = rk_get_param(card, DRM_RK1828_PARAM_PROTOCOL_VERSION, &v);
	if (ret)
		goto err;
	card->protocol = (uint32_t)v;
	ret = rk_get_param(card, DRM_RK1828_PARAM_CARD_MEM_SIZE, &card->mem_size);
	if (ret)
		goto err;
	ret = rk_get_param(card, DRM_RK1828_PARAM_CARD_MEM_FREE, &card->mem_free);
	if (ret)
		goto err;
	ret = rk_get_param(card, DRM_RK1828_PARAM_LINK_TYPE, &v);
	if (ret)
		goto err;
	card->link_type = link_from_uapi(v);
	ret = rk_get_param(card, DRM_RK1828_PARAM_LINK_SPEED, &v);
	if (ret)
		goto err;
	card->link_speed = (uint32_t)v;
	ret = rk_get_param(card, DRM_RK1828_PARAM_CARD_SERIAL, &card->serial);
	if (ret)
		goto err;
	ret = rk_get_param(card, DRM_RK1828_PARAM_CAPABILITIES, &v);
	if (ret)
		goto err;
	card->caps = caps_from_uapi(v);
	/* Informational only; older drivers may lack it. */
	if (rk_get_param(card, DRM_RK1828_PARAM_CONTEXT_ID, &card->ctx_id))
		card->ctx_id = 0;
	rk_errbuf[0] = '\0';
	return 0;
err:
	close(card->fd);
	card->fd = -1;
	return ret;
}

int rk_open(const char *node, struct rk_card *card)
{
	bool foreign = false;

	return open_card(node, card, &foreign);
}

void rk_close(struct rk_card *card)
{
	if (card && card->fd >= 0) {
		close(card->fd);
		card->fd = -1;
	}
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int rk_open_all(struct rk_card **cards, int *n_cards)
{
	struct rk_card *arr = NULL;
	int minors[256], n_minor = 0, n = 0, i, ret;
	struct dirent *de;
	DIR *d;

	*cards = NULL;
	*n_cards = 0;
	d = opendir("/dev/accel");
	if (!d) {
		if (errno == ENOENT) {
			snprintf(rk_errbuf, sizeof(rk_errbuf),
				 "no RK1828 card found: /dev/accel does not exist (is rk1828.ko loaded and a card attached?)");
			return -ENOENT;
		}
		return rk_fail(NULL, neg_errno(), "opendir /dev/accel");
	}
	while ((de = readdir(d)) && n_minor < (int)(sizeof(minors) / sizeof(minors[0]))) {
		int m;
		char tail;

		if (sscanf(de->d_name, "accel%d%c", &m, &tail) == 1 && m >= 0)
			minors[n_minor++] = m;
	}
	closedir(d);
	qsort(minors, n_minor, sizeof(int), cmp_int);

	if (n_minor) {
		arr = calloc(n_minor, sizeof(*arr));
		if (!arr)
			return rk_fail(NULL, -ENOMEM, "rk_open_all");
	}
	for (i = 0; i < n_minor; i++) {
		bool foreign = false;
		char node[64];

		snprintf(node, sizeof(node), "/dev/accel/accel%d", minors[i]);
		ret = open_card(node, &arr[n], &foreign);
		if (ret && foreign)
			continue;	/* another driver's accel node */
		if (ret) {
			rk_close_all(arr, n);
			return ret;
		}
		arr[n].index = n;
		n++;
	}
	if (!n) {
		free(arr);
		snprintf(rk_errbuf, sizeof(rk_errbuf),
			 "no RK1828 card found in /dev/accel (is rk1828.ko loaded and a card attached?)");
		return -ENOENT;
	}
	*cards = arr;
	*n_cards = n;
	return 0;
}

void rk_close_all(struct rk_card *cards, int n_cards)
{
	int i;

	for (i = 0; i < n_cards; i++)
		rk_close(&cards[i]);
	free(cards);
}

int rk_bo_create(struct rk_card *card, uint64_t size, enum rk_bo_kind kind,
		 struct rk_bo *bo)
{
	struct drm_rk1828_bo_create c = {
		.size = size,
		.flags = kind == RK_BO_CARD ? DRM_RK1828_BO_CARD :
			 kind == RK_BO_HOST ? DRM_RK1828_BO_HOST : 0,
	};

	memset(bo, 0, sizeof(*bo));
	if (!c.flags)
		return rk_fail(card, -EINVAL, "BO_CREATE(kind %d, %llu bytes)",
			       (int)kind, (unsigned long long)size);
	if (drmIoctl(card->fd, DRM_IOCTL_RK1828_BO_CREATE, &c))
		return rk_fail(card, neg_errno(), "BO_CREATE(%s, %llu bytes)",
			       kind == RK_BO_CARD ? "card" : "host",
			       (unsigned long long)size);
	bo->handle = c.handle;
	bo->kind = kind;
	bo->size = c.size;
	bo->card_addr = c.card_addr;
	bo->mmap_offset = c.mmap_offset;
	return 0;
}

int rk_bo_info(struct rk_card *card, uint32_t handle, struct rk_bo *bo)
{
	struct drm_rk1828_bo_info in = { .handle = handle };

	if (drmIoctl(card->fd, DRM_IOCTL_RK1828_BO_INFO, &in))
		return rk_fail(card, neg_errno(), "BO_INFO(%u)", handle);
	memset(bo, 0, sizeof(*bo));
	bo->handle = handle;
	bo->kind = kind_from_uapi(in.flags);
	bo->size = in.size;
	bo->card_addr = in.card_addr;
	bo->mmap_offset = in.mmap_offset;
	return 0;
}

int rk_bo_mmap(struct rk_card *card, struct rk_bo *bo)
{
	void *p;

	if (bo->map)
		return 0;
	if (bo->kind != RK_BO_HOST)
		return rk_fail(card, -EINVAL, "mmap of card BO %u", bo->handle);
	p = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED, card->fd,
		 (off_t)bo->mmap_offset);
	if (p == MAP_FAILED)
		return rk_fail(card, neg_errno(), "mmap BO %u (%llu bytes)",
			       bo->handle, (unsigned long long)bo->size);
	bo->map = p;
	return 0;
}

int rk_bo_destroy(struct rk_card *card, struct rk_bo *bo)
{
	struct drm_gem_close gc = { .handle = bo->handle };
	int ret = 0;

	if (bo->map)
		munmap(bo->map, bo->size);
	if (bo->handle && drmIoctl(card->fd, DRM_IOCTL_GEM_CLOSE, &gc))
		ret = rk_fail(card, neg_errno(), "GEM_CLOSE(%u)", bo->handle);
	memset(bo, 0, sizeof(*bo));
	return ret;
}

int rk_bo_export(struct rk_card *card, const struct rk_bo *bo, int *dmabuf_fd)
{
	struct drm_prime_handle ph = {
		.handle = bo->handle,
		.flags = DRM_CLOEXEC | DRM_RDWR,
		.fd = -1,
	};

	*dmabuf_fd = -1;
	if (drmIoctl(card->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph))
		return rk_fail(card, neg_errno(), "PRIME export of BO %u", bo->handle);
	*dmabuf_fd = ph.fd;
	return 0;
}

int rk_bo_import(struct rk_card *card, int dmabuf_fd, struct rk_bo *bo)
{
	struct drm_prime_handle ph = { .fd = dmabuf_fd };
	int ret;

	memset(bo, 0, sizeof(*bo));
	if (drmIoctl(card->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &ph))
		return rk_fail(card, neg_errno(), "PRIME import of dma-buf fd %d", dmabuf_fd);
	ret = rk_bo_info(card, ph.handle, bo);
	if (ret) {
		struct drm_gem_close gc = { .handle = ph.handle };

		drmIoctl(card->fd, DRM_IOCTL_GEM_CLOSE, &gc);
	}
	return ret;
}

int rk_p2p_query(struct rk_card *importer, const struct rk_card *exporter,
		 enum rk_p2p_status *status, uint64_t *window)
{
	struct drm_rk1828_p2p_query q = { .peer_fd = exporter->fd };

	if (window)
		*window = 0;
	if (!(importer->caps & RK_CAP_P2P) || !(exporter->caps & RK_CAP_P2P)) {
		*status = RK_P2P_NO_DRIVER;
		return 0;
	}
	if (drmIoctl(importer->fd, DRM_IOCTL_RK1828_P2P_QUERY, &q))
		return rk_fail(importer, neg_errno(), "P2P_QUERY(%s)", exporter->node);
	*status = q.status <= RK_P2P_SAME_CARD ? (enum rk_p2p_status)q.status :
		  RK_P2P_TOPOLOGY;
	if (window)
		*window = q.window_size;
	return 0;
}

const char *rk_p2p_status_name(enum rk_p2p_status status)
{
	static const char *const names[] = {
		[RK_P2P_OK] = "p2p", [RK_P2P_NO_WINDOW] = "no-window",
		[RK_P2P_NOT_PCI] = "not-pcie", [RK_P2P_NO_KERNEL] = "no-kernel-p2pdma",
		[RK_P2P_TOPOLOGY] = "topology", [RK_P2P_SAME_CARD] = "same-card",
		[RK_P2P_NO_DRIVER] = "old-driver",
	};

	return (unsigned int)status < sizeof(names) / sizeof(names[0]) ?
	       names[status] : "unknown";
}

int rk_bo_create_p2p(struct rk_card *card, uint64_t size, struct rk_bo *bo)
{
	struct drm_rk1828_bo_create c = {
		.size = size,
		.flags = DRM_RK1828_BO_CARD | DRM_RK1828_BO_P2P,
	};

	memset(bo, 0, sizeof(*bo));
	if (drmIoctl(card->fd, DRM_IOCTL_RK1828_BO_CREATE, &c))
		return rk_fail(card, neg_errno(), "BO_CREATE(card, peer window, %llu bytes)",
			       (unsigned long long)size);
	bo->handle = c.handle;
	bo->kind = RK_BO_CARD;
	bo->size = c.size;
	bo->card_addr = c.card_addr;
	return 0;
}

int rk_bo_wait(struct rk_card *card, const struct rk_bo *bo,
	       int64_t abs_timeout_ns, int *job_status)
{
	struct drm_rk1828_bo_wait w = {
		.handle = bo->handle,
		.timeout_ns = abs_timeout_ns,
	};

	if (drmIoctl(card->fd, DRM_IOCTL_RK1828_BO_WAIT, &w))
		return rk_fail(card, neg_errno(), "BO_WAIT(%u)", bo->handle);
	if (job_status)
		*job_status = w.job_status;
	return 0;
}

/* Copy rk_sync entries into the uapi layout. */
static void fill_syncs(struct drm_rk1828_sync *dst, const struct rk_sync *src,
		       unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		dst[i].handle = src[i].handle;
		dst[i].flags = 0;
		dst[i].point = src[i].point;
	}
}

static int do_submit(struct rk_card *card, struct drm_rk1828_submit *s,
		     const struct rk_sync *in, unsigned int n_in,
		     const struct rk_sync *out, unsigned int n_out,
		     uint64_t *seqno, const char *what)
{
	struct drm_rk1828_sync ins[RK_MAX_SYNCS], outs[RK_MAX_SYNCS];

	if (n_in > RK_MAX_SYNCS || n_out > RK_MAX_SYNCS)
		return rk_fail(card, -EINVAL, "SUBMIT(%s): more than %d syncobjs",
			       what, RK_MAX_SYNCS);
	fill_syncs(ins, in, n_in);
	fill_syncs(outs, out, n_out);
	s->in_syncs = (uintptr_t)ins;
	s->in_sync_count = n_in;
	s->out_syncs = (uintptr_t)outs;
	s->out_sync_count = n_out;
	s->sync_struct_size = sizeof(struct drm_rk1828_sync);
	if (drmIoctl(card->fd, DRM_IOCTL_RK1828_SUBMIT, s))
		return rk_fail(card, neg_errno(), "SUBMIT(%s)", what);
	if (seqno)
		*seqno = s->seqno;
	return 0;
}

int rk_submit_copy(struct rk_card *card, uint32_t src, uint64_t src_off,
		   uint32_t dst, uint64_t dst_off, uint64_t size,
		   const struct rk_sync *in, unsigned int n_in,
		   const struct rk_sync *out, unsigned int n_out,
		   uint64_t *seqno)
{
	struct drm_rk1828_submit s = {
		.type = DRM_RK1828_JOB_COPY,
		.src_handle = src,
		.dst_handle = dst,
		.src_offset = src_off,
		.dst_offset = dst_off,
		.size = size,
	};

	return do_submit(card, &s, in, n_in, out, n_out, seqno, "COPY");
}

int rk_submit_exec(struct rk_card *card, uint32_t prog, uint64_t prog_off,
		   uint64_t prog_size, const uint32_t *bos, unsigned int n_bos,
		   const struct rk_sync *in, unsigned int n_in,
		   const struct rk_sync *out, unsigned int n_out,
		   uint64_t *seqno)
{
	struct drm_rk1828_submit s = {
		.type = DRM_RK1828_JOB_EXEC,
		.src_handle = prog,
		.src_offset = prog_off,
		.size = prog_size,
		.bo_handles = (uintptr_t)bos,
		.bo_handle_count = n_bos,
	};

	if (n_bos > RK_MAX_BOS)
		return rk_fail(card, -EINVAL, "SUBMIT(EXEC): more than %d BOs", RK_MAX_BOS);
	return do_submit(card, &s, in, n_in, out, n_out, seqno, "EXEC");
}

int rk_syncobj_create(struct rk_card *card, bool signaled, uint32_t *handle)
{
	struct drm_syncobj_create c = {
		.flags = signaled ? DRM_SYNCOBJ_CREATE_SIGNALED : 0,
	};

	if (drmIoctl(card->fd, DRM_IOCTL_SYNCOBJ_CREATE, &c))
		return rk_fail(card, neg_errno(), "SYNCOBJ_CREATE");
	*handle = c.handle;
	return 0;
}

int rk_syncobj_destroy(struct rk_card *card, uint32_t handle)
{
	struct drm_syncobj_destroy d = { .handle = handle };

	if (drmIoctl(card->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d))
		return rk_fail(card, neg_errno(), "SYNCOBJ_DESTROY(%u)", handle);
	return 0;
}

int rk_syncobj_export(struct rk_card *card, uint32_t handle, int *fd)
{
	struct drm_syncobj_handle h = { .handle = handle, .fd = -1 };

	*fd = -1;
	if (drmIoctl(card->fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h))
		return rk_fail(card, neg_errno(), "export syncobj %u", handle);
	*fd = h.fd;
	return 0;
}

int rk_syncobj_import(struct rk_card *card, int fd, uint32_t *handle)
{
	struct drm_syncobj_handle h = { .fd = fd };

	if (drmIoctl(card->fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &h))
		return rk_fail(card, neg_errno(), "import syncobj fd %d", fd);
	*handle = h.handle;
	return 0;
}

int rk_syncobj_wait(struct rk_card *card, const uint32_t *handles,
		    const uint64_t *points, unsigned int n,
		    int64_t abs_timeout_ns, bool wait_all)
{
	uint32_t flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT |
			 (wait_all ? DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL : 0);
	int ret;

	if (points) {
		struct drm_syncobj_timeline_wait w = {
			.handles = (uintptr_t)handles,
			.points = (uintptr_t)points,
			.timeout_nsec = abs_timeout_ns,
			.count_handles = n,
			.flags = flags,
		};

		ret = drmIoctl(card->fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
	} else {
		struct drm_syncobj_wait w = {
			.handles = (uintptr_t)handles,
			.timeout_nsec = abs_timeout_ns,
			.count_handles = n,
			.flags = flags,
		};

		ret = drmIoctl(card->fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
	}
	if (ret)
		return rk_fail(card, neg_errno(), "SYNCOBJ_WAIT(%u syncobjs)", n);
	return 0;
}

static int syncobj_transfer(struct rk_card *card, uint32_t dst, uint64_t dst_point,
			    uint32_t src, uint64_t src_point)
{
	struct drm_syncobj_transfer t = {
		.src_handle = src,
		.dst_handle = dst,
		.src_point = src_point,
		.dst_point = dst_point,
	};

	if (drmIoctl(card->fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &t))
		return rk_fail(card, neg_errno(), "SYNCOBJ_TRANSFER(%u:%llu -> %u:%llu)",
			       src, (unsigned long long)src_point, dst,
			       (unsigned long long)dst_point);
	return 0;
}

/* Export the binary fence of @handle as a sync_file. */
static int export_binary(struct rk_card *card, uint32_t handle, int *fd)
{
	struct drm_syncobj_handle h = {
		.handle = handle,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
		.fd = -1,
	};

	if (drmIoctl(card->fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h))
		return rk_fail(card, neg_errno(), "export syncobj %u as sync_file", handle);
	*fd = h.fd;
	return 0;
}

static int import_binary(struct rk_card *card, uint32_t handle, int fd)
{
	struct drm_syncobj_handle h = {
		.handle = handle,
		.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
		.fd = fd,
	};

	if (drmIoctl(card->fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &h))
		return rk_fail(card, neg_errno(), "import sync_file %d into syncobj %u",
			       fd, handle);
	return 0;
}

int rk_syncobj_export_sync_file(struct rk_card *card, uint32_t handle,
				uint64_t point, int *fd)
{
	uint32_t tmp = 0;
	int ret;

	*fd = -1;
	if (!point)
		return export_binary(card, handle, fd);
	ret = rk_syncobj_create(card, false, &tmp);
	if (ret)
		return ret;
	ret = syncobj_transfer(card, tmp, 0, handle, point);
	if (!ret)
		ret = export_binary(card, tmp, fd);
	rk_syncobj_destroy(card, tmp);
	return ret;
}

int rk_syncobj_import_sync_file(struct rk_card *card, uint32_t handle,
				uint64_t point, int fd)
{
	uint32_t tmp = 0;
	int ret;

	if (!point)
		return import_binary(card, handle, fd);
	ret = rk_syncobj_create(card, false, &tmp);
	if (ret)
		return ret;
	ret = import_binary(card, tmp, fd);
	if (!ret)
		ret = syncobj_transfer(card, handle, point, tmp, 0);
	rk_syncobj_destroy(card, tmp);
	return ret;
}

int rk_sync_file_status(int fd)
{
	struct sync_file_info info;

	memset(&info, 0, sizeof(info));
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return rk_fail(NULL, neg_errno(), "SYNC_IOC_FILE_INFO(fd %d)", fd);
	return info.status;
}

int rk_sync_file_info(int fd, int64_t *timestamp_ns)
{
	struct sync_fence_info fi;
	struct sync_file_info info;

	*timestamp_ns = 0;
	memset(&info, 0, sizeof(info));
	memset(&fi, 0, sizeof(fi));
	info.num_fences = 1;
	info.sync_fence_info = (uintptr_t)&fi;
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info)) {
		/* EINVAL: more than one fence; fall back to the status alone. */
		if (errno == EINVAL)
			return rk_sync_file_status(fd);
		return rk_fail(NULL, neg_errno(), "SYNC_IOC_FILE_INFO(fd %d)", fd);
	}
	if (info.status == 1)
		*timestamp_ns = (int64_t)fi.timestamp_ns;
	return info.status;
}

int rk_sync_file_wait(int fd, int64_t abs_timeout_ns)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = abs_timeout_ns - rk_now_ns();
		int ms, r, st;

		if (left < 0)
			left = 0;
		ms = left / 1000000 > 0x7fffffff ? 0x7fffffff : (int)((left + 999999) / 1000000);
		r = poll(&p, 1, ms);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return rk_fail(NULL, neg_errno(), "poll(sync_file %d)", fd);
		st = rk_sync_file_status(fd);
		if (st < 0)
			return rk_fail(NULL, st, "job behind sync_file %d failed", fd);
		if (st == 1)
			return 0;
		if (r == 0 && rk_now_ns() >= abs_timeout_ns)
			return rk_fail(NULL, -ETIME, "wait for sync_file %d", fd);
	}
}

int rk_syncobj_status(struct rk_card *card, uint32_t handle, uint64_t point,
		      int64_t abs_timeout_ns)
{
	int fd, ret;

	ret = rk_syncobj_wait(card, &handle, point ? &point : NULL, 1,
			      abs_timeout_ns, true);
	if (ret)
		return ret;
	ret = rk_syncobj_export_sync_file(card, handle, point, &fd);
	if (ret)
		return ret;
	ret = rk_sync_file_status(fd);
	close(fd);
	if (ret < 0)
		return rk_fail(card, ret, "job signalling syncobj %u failed", handle);
	return 0;
}
