// SPDX-License-Identifier: MIT
/*
 * The uapi ioctl structs of drm/rk1828_accel.h have one layout on every
 * ABI (x86_64, i386, arm64, armhf): explicit padding only, every __u64 at
 * an 8-byte offset, sizes a multiple of 8 (Documentation/process/
 * botching-up-ioctls.rst). The _Static_asserts stop the build of this
 * test on any target where a field moves, so a cross build (make
 * check-arm64) or -m32 build checks that ABI at compile time; the TAP
 * lines repeat the figures at run time.
 */
#include <stddef.h>
#include <stdio.h>

#include "drm/rk1828_accel.h"

#include "tap.h"

/* Size and offsets as the kernel and every runtime must see them. */
#define RK_AT(s, f, off) _Static_assert(offsetof(struct s, f) == (off), #s "." #f)
#define RK_SIZE(s, n) _Static_assert(sizeof(struct s) == (n), #s " size")

RK_SIZE(drm_rk1828_get_param, 16);
RK_AT(drm_rk1828_get_param, param, 0);
RK_AT(drm_rk1828_get_param, pad, 4);
RK_AT(drm_rk1828_get_param, value, 8);

RK_SIZE(drm_rk1828_bo_create, 32);
RK_AT(drm_rk1828_bo_create, size, 0);
RK_AT(drm_rk1828_bo_create, flags, 8);
RK_AT(drm_rk1828_bo_create, handle, 12);
RK_AT(drm_rk1828_bo_create, card_addr, 16);
RK_AT(drm_rk1828_bo_create, mmap_offset, 24);

RK_SIZE(drm_rk1828_bo_info, 32);
RK_AT(drm_rk1828_bo_info, handle, 0);
RK_AT(drm_rk1828_bo_info, flags, 4);
RK_AT(drm_rk1828_bo_info, size, 8);
RK_AT(drm_rk1828_bo_info, card_addr, 16);
RK_AT(drm_rk1828_bo_info, mmap_offset, 24);

RK_SIZE(drm_rk1828_sync, 16);
RK_AT(drm_rk1828_sync, handle, 0);
RK_AT(drm_rk1828_sync, flags, 4);
RK_AT(drm_rk1828_sync, point, 8);

RK_SIZE(drm_rk1828_submit, 88);
RK_AT(drm_rk1828_submit, type, 0);
RK_AT(drm_rk1828_submit, flags, 4);
RK_AT(drm_rk1828_submit, in_syncs, 8);
RK_AT(drm_rk1828_submit, out_syncs, 16);
RK_AT(drm_rk1828_submit, bo_handles, 24);
RK_AT(drm_rk1828_submit, in_sync_count, 32);
RK_AT(drm_rk1828_submit, out_sync_count, 36);
RK_AT(drm_rk1828_submit, bo_handle_count, 40);
RK_AT(drm_rk1828_submit, sync_struct_size, 44);
RK_AT(drm_rk1828_submit, src_handle, 48);
RK_AT(drm_rk1828_submit, dst_handle, 52);
RK_AT(drm_rk1828_submit, src_offset, 56);
RK_AT(drm_rk1828_submit, dst_offset, 64);
RK_AT(drm_rk1828_submit, size, 72);
RK_AT(drm_rk1828_submit, seqno, 80);

RK_SIZE(drm_rk1828_bo_wait, 24);
RK_AT(drm_rk1828_bo_wait, handle, 0);
RK_AT(drm_rk1828_bo_wait, flags, 4);
RK_AT(drm_rk1828_bo_wait, timeout_ns, 8);
RK_AT(drm_rk1828_bo_wait, job_status, 16);
RK_AT(drm_rk1828_bo_wait, pad, 20);

RK_SIZE(drm_rk1828_p2p_query, 24);
RK_AT(drm_rk1828_p2p_query, peer_fd, 0);
RK_AT(drm_rk1828_p2p_query, flags, 4);
RK_AT(drm_rk1828_p2p_query, distance, 8);
RK_AT(drm_rk1828_p2p_query, status, 12);
RK_AT(drm_rk1828_p2p_query, window_size, 16);

int main(void)
{
	tap_ok(sizeof(struct drm_rk1828_get_param) == 16, "get_param is 16 bytes");
	tap_ok(sizeof(struct drm_rk1828_bo_create) == 32, "bo_create is 32 bytes");
	tap_ok(sizeof(struct drm_rk1828_bo_info) == 32, "bo_info is 32 bytes");
	tap_ok(sizeof(struct drm_rk1828_sync) == 16, "sync is 16 bytes");
	tap_ok(sizeof(struct drm_rk1828_submit) == 88 &&
	       offsetof(struct drm_rk1828_submit, src_offset) == 56,
	       "submit is 88 bytes, src_offset at 56 (after six __u32)");
	tap_ok(sizeof(struct drm_rk1828_bo_wait) == 24 &&
	       offsetof(struct drm_rk1828_bo_wait, job_status) == 16,
	       "bo_wait is 24 bytes, job_status at 16");
	tap_ok(sizeof(struct drm_rk1828_p2p_query) == 24 &&
	       offsetof(struct drm_rk1828_p2p_query, window_size) == 16,
	       "p2p_query is 24 bytes, window_size at 16");
	return tap_done();
}
