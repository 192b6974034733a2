// SPDX-License-Identifier: MIT
/*
 * Card emulator, timing mode (timing.h): per-card modelled clocks, the
 * link reservation per direction, the wait for a job's modelled end and
 * the counters.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rk1828/util.h"
#include "rk1828_hif.h"
#include "timing.h"

struct emu_timing {
	struct card_profile prof;
	enum cost_link link;
	bool no_math;
	pthread_mutex_t lock;
	int64_t link_free[EMU_LINK_DIRS];	/* end of the direction's last transfer */
	struct emu_timing_stats st;
};

struct emu_timing *emu_timing_create(const struct card_profile *prof, enum cost_link link,
				     bool no_math)
{
	struct emu_timing *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->prof = *prof;
	t->link = link;
	t->no_math = no_math;
	pthread_mutex_init(&t->lock, NULL);
	t->st.since_ns = util_now_ns();
	return t;
}

void emu_timing_destroy(struct emu_timing *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t);
}

const struct card_profile *emu_timing_profile(const struct emu_timing *t)
{
	return &t->prof;
}

bool emu_timing_no_math(const struct emu_timing *t)
{
	return t->no_math;
}

int64_t emu_timing_link_end(struct emu_timing *t, enum emu_link_dir dir, int64_t start_ns,
			    uint64_t bytes)
{
	int64_t begin, end;

	pthread_mutex_lock(&t->lock);
	begin = t->link_free[dir] > start_ns ? t->link_free[dir] : start_ns;
	end = begin + (int64_t)cost_link_ns(&t->prof, t->link, bytes);
	t->link_free[dir] = end;
	pthread_mutex_unlock(&t->lock);
	return end;
}

/* Sleep until CLOCK_MONOTONIC @until in slices of at most 1 ms, watching @abort. */
static void sleep_until(int64_t until, volatile int *abort)
{
	for (;;) {
		int64_t now = util_now_ns(), step = until - now;
		struct timespec ts;

		if (step <= 0 || (abort && *abort))
			return;
		if (step > 1000000)
			step = 1000000;
		now += step;
		ts.tv_sec = now / 1000000000LL;
		ts.tv_nsec = now % 1000000000LL;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
}

bool emu_timing_complete(struct emu_timing *t, unsigned int q, int64_t start_ns,
			 int64_t end_ns, volatile int *abort)
{
	int64_t now = util_now_ns();
	bool late = now > end_ns;

	if (!late)
		sleep_until(end_ns, abort);
	if (q >= EMU_TIMING_QUEUES)
		return late;
	pthread_mutex_lock(&t->lock);
	t->st.jobs[q]++;
	if (late) {
		t->st.late[q]++;
		t->st.late_ns += (double)(now - end_ns);
	}
	t->st.busy_ns[q] += (double)(end_ns - start_ns);
	pthread_mutex_unlock(&t->lock);
	return late;
}

static double energy_locked(const struct emu_timing *t, int64_t now, unsigned int compute)
{
	double span = (double)(now - t->st.since_ns) / 1e9;

	return t->prof.power_idle_w * span +
	       (t->prof.power_busy_w - t->prof.power_idle_w) * t->st.busy_ns[compute] / 1e9;
}

void emu_timing_get_stats(struct emu_timing *t, struct emu_timing_stats *st)
{
	int64_t now = util_now_ns();

	pthread_mutex_lock(&t->lock);
	*st = t->st;
	st->energy_j = energy_locked(t, now, RK1828_HIF_QUEUE_COMPUTE);
	pthread_mutex_unlock(&t->lock);
}

double emu_timing_power_w(struct emu_timing *t)
{
	int64_t now = util_now_ns();
	double w;

	pthread_mutex_lock(&t->lock);
	w = card_profile_power_w(&t->prof, t->st.busy_ns[RK1828_HIF_QUEUE_COMPUTE],
				 (double)(now - t->st.since_ns));
	pthread_mutex_unlock(&t->lock);
	return w;
}
