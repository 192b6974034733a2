/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Jobs of the RK1828 driver: SUBMIT, drm_sched integration and execution
 * on the card's hardware queues.
 */
#ifndef __RK1828_JOB_H__
#define __RK1828_JOB_H__

struct drm_device;
struct drm_file;
struct rk1828_device;
struct rk1828_file;

int rk1828_job_module_init(void);
void rk1828_job_module_exit(void);
int rk1828_sched_init_all(struct rk1828_device *rdev);
int rk1828_file_sched_init(struct rk1828_file *fpriv);
void rk1828_file_close(struct rk1828_file *fpriv);
int rk1828_ioctl_submit(struct drm_device *drm, void *data,
			struct drm_file *file);

#endif /* __RK1828_JOB_H__ */
