// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * debugfs of the RK1828 driver, in /sys/kernel/debug/accel/<device>/
 * (<device> is the transport device name, e.g. 2-1:1.0 for USB):
 *  - info: card identity and memory;
 *  - queues: commands per hardware queue, jobs per scheduled queue;
 *  - contexts: live card contexts and their jobs;
 *  - reset: write 1 to reset the card's queues (running data and EXEC
 *    commands of every context are aborted and sent again, management
 *    commands fail);
 *  - job_timeout_ms: job timeout, read/write, at least 1 (0 is -EINVAL);
 *  - ping: read to time 32 INFO round trips on the management queue;
 *  - fail_mgmt, lose_mgmt, fail_reset: fault injection, read/write: the
 *    next N management commands (CTX_*, MAP, UNMAP) fail before they
 *    reach the card, or are applied by the card with their completion
 *    lost; the next N queue resets fail (the card is declared dead).
 */

#include <linux/debugfs.h>
#include <linux/jiffies.h>
#include <linux/kstrtox.h>
#include <linux/limits.h>
#include <linux/ktime.h>
#include <linux/seq_file.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/rk1828_netlink.h>

#include "rk1828_drv.h"
#include "rk1828_hif_engine.h"

static int rk1828_info_show(struct seq_file *m, void *unused)
{
	struct rk1828_device *rdev = m->private;
	u64 mem_free;

	mutex_lock(&rdev->mm_lock);
	mem_free = rdev->mem_free;
	mutex_unlock(&rdev->mm_lock);

	seq_printf(m, "serial: %016llx\n", rdev->serial);
	seq_printf(m, "protocol: %u.%u\n", rdev->version >> 16,
		   rdev->version & 0xffff);
	seq_printf(m, "firmware: %s\n", rdev->fw);
	seq_printf(m, "link: type %u, %u Mbit/s\n", rdev->link_type,
		   rdev->link_speed);
	seq_printf(m, "memory: %llu bytes, %llu free\n", rdev->mem_size,
		   mem_free);
	seq_printf(m, "max contexts: %u\n", rdev->max_ctx);
	seq_printf(m, "bounce buffer: %zu bytes\n", rdev->bounce_size);
	seq_printf(m, "gone: %d\n", atomic_read(&rdev->gone));
	seq_printf(m, "dead: %d\n", atomic_read(&rdev->dead));
	seq_printf(m, "resets: %lld\n", atomic64_read(&rdev->resets));
	seq_printf(m, "p2p window: card %#llx, %llu bytes\n", rdev->p2p.base,
		   rdev->p2p.size);
	seq_printf(m, "p2p bytes: %lld, bounce bytes: %lld\n",
		   atomic64_read(&rdev->p2p.p2p_bytes),
		   atomic64_read(&rdev->p2p.bounce_bytes));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rk1828_info);

static int rk1828_queues_show(struct seq_file *m, void *unused)
{
	static const char * const hif_names[RK1828_HIF_NUM_QUEUES] = {
		"mgmt", "compute", "copy",
	};
	struct rk1828_device *rdev = m->private;
	int q;

	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++)
		seq_printf(m, "hif %-8s commands %lld errors %lld\n",
			   hif_names[q], atomic64_read(&rdev->hq[q].commands),
			   atomic64_read(&rdev->hq[q].errors));
	for (q = 0; q < RK1828_SCHED_NUM; q++) {
		struct rk1828_sched *s = &rdev->sched[q];

		seq_printf(m, "sched %-8s submitted %lld done %lld failed %lld timeouts %lld\n",
			   s->name, atomic64_read(&s->jobs_submitted),
			   atomic64_read(&s->jobs_done),
			   atomic64_read(&s->jobs_failed),
			   atomic64_read(&s->timeouts));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rk1828_queues);

static int rk1828_contexts_show(struct seq_file *m, void *unused)
{
	struct rk1828_device *rdev = m->private;
	struct rk1828_ctx *ctx;

	mutex_lock(&rdev->ctx_lock);
	list_for_each_entry(ctx, &rdev->ctx_list, node)
		seq_printf(m, "ctx %u refs %u jobs %d submitted %lld\n",
			   ctx->id, kref_read(&ctx->ref),
			   atomic_read(&ctx->jobs),
			   atomic64_read(&ctx->submitted));
	mutex_unlock(&rdev->ctx_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rk1828_contexts);

static int rk1828_ping_show(struct seq_file *m, void *unused)
{
	struct rk1828_device *rdev = m->private;
	struct rk1828_hif_info info;
	struct rk1828_hif_cmd cmd = {
		.opcode = RK1828_HIF_OP_INFO,
		.rdata = &info,
		.rlen = sizeof(info),
	};
	const int n = 32;
	ktime_t t0;
	s64 us;
	int i, idx, ret = 0;

	/* drm_dev_unplug() waits for us before the transport is torn down. */
	if (!drm_dev_enter(&rdev->drm, &idx))
		return -ENODEV;
	t0 = ktime_get();
	for (i = 0; i < n; i++) {
		cmd.timeout = msecs_to_jiffies(READ_ONCE(rdev->job_timeout_ms));
		ret = rk1828_hif_run(rdev, RK1828_HIF_QUEUE_MGMT, &cmd);
		if (ret)
			goto out;
	}
	us = ktime_us_delta(ktime_get(), t0);
	seq_printf(m, "%d INFO round trips: %lld us each\n", n, us / n);
out:
	drm_dev_exit(idx);
	return ret;
}
DEFINE_SHOW_ATTRIBUTE(rk1828_ping);

static ssize_t rk1828_reset_write(struct file *file, const char __user *ubuf,
				  size_t len, loff_t *pos)
{
	struct rk1828_device *rdev = file->private_data;
	bool reset;
	int idx, ret;

	ret = kstrtobool_from_user(ubuf, len, &reset);
	if (ret)
		return ret;
	if (!reset)
		return len;
	/* drm_dev_unplug() waits for us before the transport is torn down. */
	if (!drm_dev_enter(&rdev->drm, &idx))
		return -ENODEV;
	ret = rk1828_card_reset(rdev, RK1828_RESET_REASON_DEBUGFS, 0);
	drm_dev_exit(idx);
	return ret ? ret : len;
}

static const struct file_operations rk1828_reset_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = rk1828_reset_write,
	.llseek = noop_llseek,
};

/* job_timeout_ms: the module parameter's rule, at least 1 ms. */
static int rk1828_job_timeout_get(void *data, u64 *val)
{
	struct rk1828_device *rdev = data;

	*val = READ_ONCE(rdev->job_timeout_ms);
	return 0;
}

static int rk1828_job_timeout_set(void *data, u64 val)
{
	struct rk1828_device *rdev = data;

	if (!val || val > UINT_MAX)
		return -EINVAL;
	WRITE_ONCE(rdev->job_timeout_ms, val);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(rk1828_job_timeout_fops, rk1828_job_timeout_get,
			 rk1828_job_timeout_set, "%llu\n");

/* Fault-injection counters: how many of the next commands to hit. */
static int rk1828_fault_get(void *data, u64 *val)
{
	*val = atomic_read(data);
	return 0;
}

static int rk1828_fault_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	atomic_set(data, val);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(rk1828_fault_fops, rk1828_fault_get,
			 rk1828_fault_set, "%llu\n");

/**
 * rk1828_debugfs_init() - create the debugfs files of a card
 * @rdev: the card, after drm_dev_register() (accel devices get their
 *	debugfs directory, &drm_device.debugfs_root, from the DRM core but no
 *	&drm_driver.debugfs_init call)
 *
 * The files go away with the directory when the drm_device is released.
 */
void rk1828_debugfs_init(struct rk1828_device *rdev)
{
	struct dentry *root = rdev->drm.debugfs_root;

	if (IS_ERR_OR_NULL(root))
		return;

	debugfs_create_file("info", 0444, root, rdev, &rk1828_info_fops);
	debugfs_create_file("queues", 0444, root, rdev, &rk1828_queues_fops);
	debugfs_create_file("contexts", 0444, root, rdev,
			    &rk1828_contexts_fops);
	debugfs_create_file("reset", 0200, root, rdev, &rk1828_reset_fops);
	debugfs_create_file("ping", 0400, root, rdev, &rk1828_ping_fops);
	debugfs_create_file_unsafe("job_timeout_ms", 0644, root, rdev,
				   &rk1828_job_timeout_fops);
	debugfs_create_file_unsafe("fail_mgmt", 0600, root,
				   &rdev->fault_fail_mgmt, &rk1828_fault_fops);
	debugfs_create_file_unsafe("lose_mgmt", 0600, root,
				   &rdev->fault_lose_mgmt, &rk1828_fault_fops);
	debugfs_create_file_unsafe("fail_reset", 0600, root,
				   &rdev->fault_fail_reset, &rk1828_fault_fops);
}
