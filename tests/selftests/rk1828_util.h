/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Helpers shared by the rk1828 kselftests (rk1828_uapi.c, rk1828_robust.c,
 * rk1828_netlink.c, rk1828_pcie.c).
 *
 * Every helper talks to the driver through raw ioctls (drmIoctl) so that
 * the tests exercise the ABI of uapi/drm/rk1828_accel.h itself, not a
 * library on top of it. They carry the rkt_ prefix ("rk1828 test"), so
 * they are never mistaken for librk1828's rk_ API, whose functions have
 * other signatures. Helpers that can fail return 0 or a negative errno
 * and never abort, so the callers can assert on the exact error.
 */
#ifndef RK1828_SELFTEST_UTIL_H
#define RK1828_SELFTEST_UTIL_H

#include <dirent.h>
#include <libgen.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sync_file.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "drm/rk1828_accel.h"
#include "rk1828/program.h"

/** RKT_MAX_CARDS - highest number of accel nodes the tests look at */
#define RKT_MAX_CARDS		16
/** RKT_CARD_ALIGN - card BO size granularity (uapi: rounded up to 4 KiB) */
#define RKT_CARD_ALIGN		4096ULL
/** RKT_NS - nanoseconds per second */
#define RKT_NS			1000000000LL
/** RKT_MS - nanoseconds per millisecond */
#define RKT_MS			1000000LL

/**
 * rkt_now_ns() - current CLOCK_MONOTONIC time
 *
 * Return: nanoseconds; the clock BO_WAIT and drmSyncobjWait deadlines use.
 */
static inline int64_t rkt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * RKT_NS + ts.tv_nsec;
}

/**
 * rkt_sleep_ms() - sleep
 * @ms: milliseconds
 */
static inline void rkt_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * RKT_MS };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/**
 * rkt_ioctl() - drmIoctl returning a negative errno
 * @fd: DRM fd
 * @req: ioctl request
 * @arg: argument struct
 *
 * Return: 0 or -errno (drmIoctl already restarts on EINTR and EAGAIN).
 */
static inline int rkt_ioctl(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
}

/**
 * rkt_accel_path() - path of /dev/accel/accelN
 * @buf: output, at least 32 bytes
 * @idx: minor index N
 *
 * Return: @buf.
 */
static inline char *rkt_accel_path(char *buf, int idx)
{
	snprintf(buf, 32, "/dev/accel/accel%d", idx);
	return buf;
}

/**
 * rkt_open_card() - open an accel node
 * @idx: minor index N of /dev/accel/accelN
 *
 * Return: the fd, or -errno (-ENOENT when the node does not exist).
 */
static inline int rkt_open_card(int idx)
{
	char path[32];
	int fd = open(rkt_accel_path(path, idx), O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/**
 * rkt_card_indices() - list the accel nodes that exist, in ascending order
 * @idx: output, up to RKT_MAX_CARDS minor indices
 *
 * Return: number of nodes found.
 */
static inline int rkt_card_indices(int *idx)
{
	char path[32];
	int i, n = 0;

	for (i = 0; i < RKT_MAX_CARDS * 4 && n < RKT_MAX_CARDS; i++)
		if (access(rkt_accel_path(path, i), F_OK) == 0)
			idx[n++] = i;
	return n;
}

/**
 * rkt_get_param() - DRM_IOCTL_RK1828_GET_PARAM
 * @fd: accel fd
 * @param: DRM_RK1828_PARAM_*
 * @value: output
 *
 * Return: 0 or -errno.
 */
static inline int rkt_get_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_rk1828_get_param gp = { .param = param };
	int ret = rkt_ioctl(fd, DRM_IOCTL_RK1828_GET_PARAM, &gp);

	if (!ret)
		*value = gp.value;
	return ret;
}

/**
 * rkt_mem_free() - free card memory in bytes
 * @fd: accel fd
 *
 * Return: DRM_RK1828_PARAM_CARD_MEM_FREE, or UINT64_MAX on error.
 */
static inline uint64_t rkt_mem_free(int fd)
{
	uint64_t v;

	return rkt_get_param(fd, DRM_RK1828_PARAM_CARD_MEM_FREE, &v) ? UINT64_MAX : v;
}

/**
 * struct rkt_bo - a buffer object created by a test
 * @handle: GEM handle
 * @flags: DRM_RK1828_BO_HOST or DRM_RK1828_BO_CARD
 * @size: rounded-up size in bytes
 * @card_addr: card address (card BOs)
 * @mmap_offset: fake mmap offset (host BOs)
 * @map: CPU mapping of a host BO after rkt_bo_map(), else NULL
 */
struct rkt_bo {
	uint32_t handle;
	uint32_t flags;
	uint64_t size;
	uint64_t card_addr;
	uint64_t mmap_offset;
	uint8_t *map;
};

/**
 * rkt_bo_create() - DRM_IOCTL_RK1828_BO_CREATE
 * @fd: accel fd
 * @size: requested size in bytes
 * @flags: DRM_RK1828_BO_*
 * @bo: output (zeroed first)
 *
 * Return: 0 or -errno.
 */
static inline int rkt_bo_create(int fd, uint64_t size, uint32_t flags,
			       struct rkt_bo *bo)
{
	struct drm_rk1828_bo_create c = { .size = size, .flags = flags };
	int ret;

	memset(bo, 0, sizeof(*bo));
	ret = rkt_ioctl(fd, DRM_IOCTL_RK1828_BO_CREATE, &c);
	if (ret)
		return ret;
	bo->handle = c.handle;
	bo->flags = flags;
	bo->size = c.size;
	bo->card_addr = c.card_addr;
	bo->mmap_offset = c.mmap_offset;
	return 0;
}

/**
 * rkt_bo_map() - mmap a host BO read/write into @bo->map
 * @fd: accel fd
 * @bo: host BO
 *
 * Return: 0 or -errno.
 */
static inline int rkt_bo_map(int fd, struct rkt_bo *bo)
{
	void *p = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       (off_t)bo->mmap_offset);

	if (p == MAP_FAILED)
		return -errno;
	bo->map = p;
	return 0;
}

/**
 * rkt_host_bo() - create and map a host BO
 * @fd: accel fd
 * @size: bytes
 * @bo: output
 *
 * Return: 0 or -errno.
 */
static inline int rkt_host_bo(int fd, uint64_t size, struct rkt_bo *bo)
{
	int ret = rkt_bo_create(fd, size, DRM_RK1828_BO_HOST, bo);

	return ret ? ret : rkt_bo_map(fd, bo);
}

/**
 * rkt_gem_close() - unmap (host BOs) and DRM_IOCTL_GEM_CLOSE a handle
 * @fd: accel fd
 * @bo: the BO; its handle is cleared
 *
 * Return: 0 or -errno.
 */
static inline int rkt_gem_close(int fd, struct rkt_bo *bo)
{
	struct drm_gem_close gc = { .handle = bo->handle };

	if (bo->map)
		munmap(bo->map, bo->size);
	bo->map = NULL;
	bo->handle = 0;
	return rkt_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &gc);
}

/**
 * rkt_bo_info() - DRM_IOCTL_RK1828_BO_INFO
 * @fd: accel fd
 * @handle: GEM handle
 * @info: output
 *
 * Return: 0 or -errno.
 */
static inline int rkt_bo_info(int fd, uint32_t handle,
			     struct drm_rk1828_bo_info *info)
{
	memset(info, 0, sizeof(*info));
	info->handle = handle;
	return rkt_ioctl(fd, DRM_IOCTL_RK1828_BO_INFO, info);
}

/**
 * rkt_bo_wait() - DRM_IOCTL_RK1828_BO_WAIT
 * @fd: accel fd
 * @handle: GEM handle
 * @deadline_ns: absolute CLOCK_MONOTONIC deadline
 * @job_status: output, may be NULL; set to 1 when the ioctl failed
 *
 * Return: 0 or -errno (-ETIMEDOUT when the deadline passed first).
 */
static inline int rkt_bo_wait(int fd, uint32_t handle, int64_t deadline_ns,
			     int32_t *job_status)
{
	struct drm_rk1828_bo_wait w = {
		.handle = handle, .timeout_ns = deadline_ns, .job_status = 1,
	};
	int ret = rkt_ioctl(fd, DRM_IOCTL_RK1828_BO_WAIT, &w);

	if (job_status)
		*job_status = ret ? 1 : w.job_status;
	return ret;
}

/**
 * rkt_copy_args() - fill a COPY submit with no syncobjs
 * @s: output
 * @src: source handle
 * @src_off: byte offset in @src
 * @dst: destination handle
 * @dst_off: byte offset in @dst
 * @size: bytes
 */
static inline void rkt_copy_args(struct drm_rk1828_submit *s, uint32_t src,
				uint64_t src_off, uint32_t dst,
				uint64_t dst_off, uint64_t size)
{
	memset(s, 0, sizeof(*s));
	s->type = DRM_RK1828_JOB_COPY;
	s->sync_struct_size = sizeof(struct drm_rk1828_sync);
	s->src_handle = src;
	s->src_offset = src_off;
	s->dst_handle = dst;
	s->dst_offset = dst_off;
	s->size = size;
}

/**
 * rkt_submit() - DRM_IOCTL_RK1828_SUBMIT
 * @fd: accel fd
 * @s: filled submit struct
 *
 * Return: 0 or -errno.
 */
static inline int rkt_submit(int fd, struct drm_rk1828_submit *s)
{
	return rkt_ioctl(fd, DRM_IOCTL_RK1828_SUBMIT, s);
}

/**
 * rkt_copy() - submit one COPY with optional single in/out binary syncobjs
 * @fd: accel fd
 * @src: source handle
 * @src_off: offset in @src
 * @dst: destination handle
 * @dst_off: offset in @dst
 * @size: bytes
 * @in_sync: syncobj to wait for, 0 for none
 * @out_sync: syncobj to signal, 0 for none
 *
 * Return: 0 or -errno of the submit ioctl.
 */
static inline int rkt_copy(int fd, uint32_t src, uint64_t src_off, uint32_t dst,
			  uint64_t dst_off, uint64_t size, uint32_t in_sync,
			  uint32_t out_sync)
{
	struct drm_rk1828_sync in = { .handle = in_sync };
	struct drm_rk1828_sync out = { .handle = out_sync };
	struct drm_rk1828_submit s;

	rkt_copy_args(&s, src, src_off, dst, dst_off, size);
	if (in_sync) {
		s.in_syncs = (uintptr_t)&in;
		s.in_sync_count = 1;
	}
	if (out_sync) {
		s.out_syncs = (uintptr_t)&out;
		s.out_sync_count = 1;
	}
	return rkt_submit(fd, &s);
}

/**
 * rkt_copy_sync() - COPY and wait for it with BO_WAIT on @dst
 * @fd: accel fd
 * @src: source handle
 * @src_off: offset in @src
 * @dst: destination handle
 * @dst_off: offset in @dst
 * @size: bytes
 *
 * Return: 0 when the job ran successfully, the submit or wait -errno, or
 * the job's negative status.
 */
static inline int rkt_copy_sync(int fd, uint32_t src, uint64_t src_off,
			       uint32_t dst, uint64_t dst_off, uint64_t size)
{
	int32_t st;
	int ret = rkt_copy(fd, src, src_off, dst, dst_off, size, 0, 0);

	if (ret)
		return ret;
	ret = rkt_bo_wait(fd, dst, rkt_now_ns() + 30 * RKT_NS, &st);
	return ret ? ret : st;
}

/**
 * rkt_exec() - submit an EXEC of the program in card BO @prog
 * @fd: accel fd
 * @prog: program card BO handle
 * @size: program bytes
 * @bos: card BOs the program touches
 * @n_bos: entries in @bos
 * @in_sync: syncobj to wait for, 0 for none
 * @out_sync: syncobj to signal, 0 for none
 *
 * Return: 0 or -errno of the submit ioctl.
 */
static inline int rkt_exec(int fd, uint32_t prog, uint64_t size,
			  const uint32_t *bos, uint32_t n_bos,
			  uint32_t in_sync, uint32_t out_sync)
{
	struct drm_rk1828_sync in = { .handle = in_sync };
	struct drm_rk1828_sync out = { .handle = out_sync };
	struct drm_rk1828_submit s = {
		.type = DRM_RK1828_JOB_EXEC,
		.sync_struct_size = sizeof(struct drm_rk1828_sync),
		.src_handle = prog,
		.size = size,
		.bo_handles = (uintptr_t)bos,
		.bo_handle_count = n_bos,
	};

	if (in_sync) {
		s.in_syncs = (uintptr_t)&in;
		s.in_sync_count = 1;
	}
	if (out_sync) {
		s.out_syncs = (uintptr_t)&out;
		s.out_sync_count = 1;
	}
	return rkt_submit(fd, &s);
}

/**
 * rkt_fill() - deterministic test pattern
 * @p: buffer
 * @n: bytes
 * @seed: pattern seed; different seeds give different patterns
 */
static inline void rkt_fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 0x9e3779b9u;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

/**
 * rkt_check() - compare a buffer with rkt_fill()'s pattern
 * @p: buffer
 * @n: bytes
 * @seed: pattern seed
 *
 * Return: index of the first differing byte, or -1 when equal.
 */
static inline long rkt_check(const uint8_t *p, size_t n, uint32_t seed)
{
	uint8_t *ref = malloc(n ? n : 1);
	long bad = -1;
	size_t i;

	if (!ref)
		return 0;
	rkt_fill(ref, n, seed);
	for (i = 0; i < n; i++) {
		if (p[i] != ref[i]) {
			bad = (long)i;
			break;
		}
	}
	free(ref);
	return bad;
}

/**
 * rkt_upload() - copy @len bytes into card BO @card through a temporary
 * host BO and wait for it
 * @fd: accel fd
 * @card: destination card BO handle
 * @data: bytes
 * @len: bytes, at most the card BO size
 *
 * Return: 0 or a negative errno (submit, wait or job status).
 */
static inline int rkt_upload(int fd, uint32_t card, const void *data, size_t len)
{
	struct rkt_bo h;
	int ret = rkt_host_bo(fd, len, &h);

	if (ret)
		return ret;
	memcpy(h.map, data, len);
	ret = rkt_copy_sync(fd, h.handle, 0, card, 0, len);
	rkt_gem_close(fd, &h);
	return ret;
}

/**
 * rkt_download() - read @len bytes of card BO @card at @off into @data
 * @fd: accel fd
 * @card: source card BO handle
 * @off: byte offset in @card
 * @data: output
 * @len: bytes
 *
 * Return: 0 or a negative errno (submit, wait or job status).
 */
static inline int rkt_download(int fd, uint32_t card, uint64_t off, void *data,
			      size_t len)
{
	struct rkt_bo h;
	int ret = rkt_host_bo(fd, len, &h);

	if (ret)
		return ret;
	ret = rkt_copy_sync(fd, card, off, h.handle, 0, len);
	if (!ret)
		memcpy(data, h.map, len);
	rkt_gem_close(fd, &h);
	return ret;
}

/**
 * rkt_delay_prog() - build a RK1828_PROG_OP_DELAY program
 * @p: output, header only (n_layers 0)
 * @ms: milliseconds the card spins
 */
static inline void rkt_delay_prog(struct rk1828_program *p, uint32_t ms)
{
	memset(p, 0, sizeof(*p));
	p->magic = RK1828_PROG_MAGIC;
	p->op = RK1828_PROG_OP_DELAY;
	p->size = sizeof(*p);
	p->delay_ms = ms;
}

/**
 * rkt_delay_job() - upload a DELAY program into a new card BO and run it
 * @fd: accel fd
 * @ms: delay in milliseconds
 * @prog: output, the program card BO (BO_WAIT on it waits for the job)
 * @out_sync: syncobj to signal, 0 for none
 *
 * Return: 0 or a negative errno.
 */
static inline int rkt_delay_job(int fd, uint32_t ms, struct rkt_bo *prog,
			       uint32_t out_sync)
{
	struct rk1828_program p;
	int ret;

	rkt_delay_prog(&p, ms);
	ret = rkt_bo_create(fd, sizeof(p), DRM_RK1828_BO_CARD, prog);
	if (ret)
		return ret;
	ret = rkt_upload(fd, prog->handle, &p, sizeof(p));
	if (ret)
		return ret;
	return rkt_exec(fd, prog->handle, sizeof(p), NULL, 0, 0, out_sync);
}

/**
 * rkt_round_trip() - host -> card -> host copy of @size pattern bytes
 * @fd: accel fd
 * @size: bytes
 * @seed: pattern seed
 *
 * Return: 0 when the data came back intact, 1 on a data mismatch, or a
 * negative errno.
 */
static inline int rkt_round_trip(int fd, uint64_t size, uint32_t seed)
{
	struct rkt_bo a, b, c;
	int ret;

	ret = rkt_host_bo(fd, size, &a);
	if (ret)
		return ret;
	ret = rkt_host_bo(fd, size, &b);
	if (ret)
		goto out_a;
	ret = rkt_bo_create(fd, size, DRM_RK1828_BO_CARD, &c);
	if (ret)
		goto out_b;
	rkt_fill(a.map, size, seed);
	ret = rkt_copy_sync(fd, a.handle, 0, c.handle, 0, size);
	if (!ret)
		ret = rkt_copy_sync(fd, c.handle, 0, b.handle, 0, size);
	if (!ret && rkt_check(b.map, size, seed) >= 0)
		ret = 1;
	rkt_gem_close(fd, &c);
out_b:
	rkt_gem_close(fd, &b);
out_a:
	rkt_gem_close(fd, &a);
	return ret;
}

/**
 * rkt_read_param_file() - read an unsigned number from a sysfs file
 * @path: file
 * @val: output
 *
 * Return: 0 or -errno (-EINVAL when the file holds no number).
 */
static inline int rkt_read_param_file(const char *path, unsigned long long *val)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%llu", val) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/**
 * rkt_sync_file_status() - poll a sync_file and read its status
 * @sfd: sync_file fd
 * @ms: poll timeout
 * @status: output: 1 signalled, 0 still active, < 0 fence error
 *
 * Return: 0 or -errno.
 */
static inline int rkt_sync_file_status(int sfd, int ms, int *status)
{
	struct sync_file_info info = { 0 };
	struct pollfd pfd = { .fd = sfd, .events = POLLIN };

	*status = 0;
	if (poll(&pfd, 1, ms) < 0)
		return -errno;
	if (ioctl(sfd, SYNC_IOC_FILE_INFO, &info))
		return -errno;
	*status = info.status;
	return 0;
}

/* Serial numbers tools/vm-run gives the emulators: 0x18280000 + card index. */
#define RKT_SERIAL_BASE	0x18280000ULL

/**
 * rkt_ctl() - one request on the vm-run control channel
 * @req: request line without newline
 * @answer: output, 128 bytes
 *
 * Return: 0 when the answer is "ok", -EIO otherwise, -ENOENT without a
 * channel.
 */
static inline int rkt_ctl(const char *req, char *answer)
{
	const char *path = getenv("RK1828_VM_CTL");
	char line[160];
	int fd, n = 0;

	answer[0] = '\0';
	if (!path || !*path)
		return -ENOENT;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(line, sizeof(line), "%s\n", req);
	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
		close(fd);
		return -EIO;
	}
	while (n < 127) {
		ssize_t r = read(fd, answer + n, 1);

		if (r <= 0 || answer[n] == '\n')
			break;
		n++;
	}
	answer[n] = '\0';
	close(fd);
	return strcmp(answer, "ok") ? -EIO : 0;
}

/**
 * rkt_project_path() - a file of the project: from the environment, or
 *	relative to the project directory
 * @env: environment variable that names the file (RK1828_LLM, ...)
 * @rel: path relative to the project directory, e.g. "build/rk1828-llm"
 * @out: output, PATH_MAX bytes
 *
 * Without @env this binary is taken to be build/tests/<test> of the
 * project; installed into a kernel tree it is not, so tests/guest-suite
 * sets RK1828_LLM, RK1828_SMI, RK1828_KO and RK1828_MODEL.
 */
static inline void rkt_project_path(const char *env, const char *rel, char *out)
{
	const char *val = getenv(env);
	char exe[PATH_MAX];
	ssize_t n;

	if (val && *val) {
		snprintf(out, PATH_MAX, "%s", val);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	/* build/tests/<test> -> the project directory */
	snprintf(out, PATH_MAX, "%s/../../%s", dirname(exe), rel);
}

#endif /* RK1828_SELFTEST_UTIL_H */
