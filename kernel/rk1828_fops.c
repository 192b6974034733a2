// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * File operations of the rk1828 accel node: those of
 * DEFINE_DRM_ACCEL_FOPS() with an ioctl filter in front of drm_ioctl().
 */

#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/sizes.h>
#include <linux/module.h>
#include <linux/stddef.h>
#include <linux/uaccess.h>
#include <drm/drm.h>
#include <drm/drm_accel.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>

#include "rk1828_drv.h"

/*
 * Largest handle count of a syncobj array ioctl. DRM core allocates
 * several arrays of count_handles entries (up to ~56 bytes each for a
 * wait) with plain kmalloc, so a huge count makes the page allocator warn;
 * 64Ki handles keep every array well below its limit and far above any
 * real use.
 */
#define RK1828_MAX_SYNCOBJ_HANDLES	SZ_64K

/**
 * DOC: core ioctls on the accel node
 *
 * An accel file has no DRM master and is neither a primary nor a render
 * client, so drm_ioctl_permit() lets every core ioctl without DRM_MASTER
 * or DRM_AUTH flags through, and some of them assume a master: in 6.12
 * DRM_IOCTL_GET_UNIQUE dereferences &drm_file.master (NULL for accel
 * files) with &drm_device.master_mutex held, so one call oopses and
 * leaves the mutex locked, and DRM_IOCTL_GET_MAGIC and the SET/DROP_MASTER
 * pair reach the same master code. The driver therefore lets only the
 * core ioctls a render node allows reach drm_ioctl() and answers every
 * other core ioctl with -EACCES, as DRM core does for render clients.
 * Documentation/accel/rk1828/driver.rst describes the fix for DRM core.
 */
static bool rk1828_core_ioctl_allowed(unsigned int nr)
{
	switch (nr) {
	case DRM_IOCTL_NR(DRM_IOCTL_VERSION):
	case DRM_IOCTL_NR(DRM_IOCTL_GET_CAP):
	case DRM_IOCTL_NR(DRM_IOCTL_GEM_CLOSE):
	case DRM_IOCTL_NR(DRM_IOCTL_PRIME_HANDLE_TO_FD):
	case DRM_IOCTL_NR(DRM_IOCTL_PRIME_FD_TO_HANDLE):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_CREATE):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_DESTROY):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_WAIT):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_RESET):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_SIGNAL):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_QUERY):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_TRANSFER):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_EVENTFD):
		return true;
	default:
		return false;
	}
}

/*
 * Offset of count_handles in the argument of a syncobj array ioctl, or
 * SIZE_MAX for other ioctls.
 */
static size_t rk1828_syncobj_count_offset(unsigned int nr)
{
	switch (nr) {
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_WAIT):
		return offsetof(struct drm_syncobj_wait, count_handles);
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT):
		return offsetof(struct drm_syncobj_timeline_wait, count_handles);
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_RESET):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_SIGNAL):
		return offsetof(struct drm_syncobj_array, count_handles);
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_QUERY):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL):
		return offsetof(struct drm_syncobj_timeline_array,
				count_handles);
	default:
		return SIZE_MAX;
	}
}

/*
 * Filter a core ioctl before DRM core sees it: -EACCES for the ones an
 * accel file must not reach, -EINVAL for a syncobj array over
 * RK1828_MAX_SYNCOBJ_HANDLES. A racing thread may still grow the count
 * after this check; the count limit belongs in DRM core.
 */
static int rk1828_core_ioctl_check(unsigned int cmd, void __user *argp)
{
	unsigned int nr = DRM_IOCTL_NR(cmd);
	size_t off;
	u32 count;

	if (nr >= DRM_COMMAND_BASE && nr < DRM_COMMAND_END)
		return 0;
	if (!rk1828_core_ioctl_allowed(nr))
		return -EACCES;
	off = rk1828_syncobj_count_offset(nr);
	if (off == SIZE_MAX || _IOC_SIZE(cmd) < off + sizeof(count))
		return 0;
	if (copy_from_user(&count, argp + off, sizeof(count)))
		return -EFAULT;
	return count > RK1828_MAX_SYNCOBJ_HANDLES ? -EINVAL : 0;
}

static long rk1828_accel_ioctl(struct file *filp, unsigned int cmd,
			       unsigned long arg)
{
	int ret = rk1828_core_ioctl_check(cmd, (void __user *)arg);

	return ret ? ret : drm_ioctl(filp, cmd, arg);
}

#ifdef CONFIG_COMPAT
static long rk1828_accel_compat_ioctl(struct file *filp, unsigned int cmd,
				      unsigned long arg)
{
	int ret = rk1828_core_ioctl_check(cmd, compat_ptr(arg));

	return ret ? ret : drm_compat_ioctl(filp, cmd, arg);
}
#else
#define rk1828_accel_compat_ioctl	NULL
#endif

/*
 * File operations of the accel node: DRM_ACCEL_FOPS with
 * rk1828_accel_ioctl() and rk1828_accel_compat_ioctl() in front of
 * drm_ioctl() and drm_compat_ioctl().
 */
const struct file_operations rk1828_accel_fops = {
	.owner = THIS_MODULE,
	.open = accel_open,
	.release = drm_release,
	.unlocked_ioctl = rk1828_accel_ioctl,
	.compat_ioctl = rk1828_accel_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = drm_gem_mmap,
	.fop_flags = FOP_UNSIGNED_OFFSET,
};
