// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * kselftest for the rk1828 generic netlink family (card telemetry and
 * events, Documentation/netlink/specs/rk1828.yaml): card-get agrees with
 * GET_PARAM and debugfs and counts jobs and the card's busy time; bad
 * requests get clean errors; a reset through debugfs and one through
 * card-reset each send exactly one reset event with its reason; a job
 * timeout sends job-timeout and a reset naming the guilty context;
 * card-reset needs CAP_NET_ADMIN; a card driven over its thermal limit
 * sends one thermal-limit event, and one more once it cooled down, which
 * rk1828-smi events prints; 64 threads dump while the cards are reset and
 * while one is unplugged, which sends card-remove (and, on USB, the
 * re-plug card-add).
 *
 * Runs as root in the guest with the module loaded, after rk1828_fuzz and
 * before rk1828_robust (the last test unplugs the last USB card and plugs
 * it back; without USB cards it removes the last PCIe card for good
 * through QMP device_del, on $RK1828_VM_CTL):
 *   tools/vm-run --cards 2 --emu-args '1:--temp-limit 50' -- \
 *	env RK1828_THERMAL=1:50 build/tests/rk1828_netlink
 * The thermal test needs RK1828_THERMAL=N:C, card N's emulator started
 * with --temp-limit C (tests/guest-suite's boots have it), and runs
 * rk1828-smi from $RK1828_SMI (or build/rk1828-smi of the project).
 */
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "rk1828_util.h"
#include "rk1828_nl.h"

/* The harness compares its operands as given; mixed signedness is intended. */
#pragma GCC diagnostic ignored "-Wsign-compare"
/* setjmp in the harness's TEST_F wrapper; its locals are not reused. */
#pragma GCC diagnostic ignored "-Wclobbered"

/* Threads of the dump-under-stress tests (the figure). */
#define RKT_DUMPERS	64
/* nobody */
#define RKT_NOBODY	65534
/* The emulator's default throttle limit and hysteresis (protocol.rst, STATS). */
#define RKT_TEMP_LIMIT_MC	95000
#define RKT_TEMP_HYST_MC	2000

/**
 * rkt_thermal_env() - the card with a lowered thermal limit
 * @card: output, N of RK1828_THERMAL=N:C (the emulator's index: serial
 *	RKT_SERIAL_BASE + N)
 * @limit_mc: output, C in millidegrees Celsius
 *
 * Return: 0, or -ENOENT when RK1828_THERMAL is unset or malformed.
 */
static int rkt_thermal_env(unsigned int *card, int *limit_mc)
{
	const char *env = getenv("RK1828_THERMAL");
	int c;

	if (!env || sscanf(env, "%u:%d", card, &c) != 2 || c < 1 || c > 200)
		return -ENOENT;
	*limit_mc = c * 1000;
	return 0;
}

/* The throttle limit the emulator of the card with @serial was given. */
static int rkt_expected_limit_mc(uint64_t serial)
{
	unsigned int card;
	int limit_mc;

	if (!rkt_thermal_env(&card, &limit_mc) && serial == RKT_SERIAL_BASE + card)
		return limit_mc;
	return RKT_TEMP_LIMIT_MC;
}

/**
 * rkt_dbg_path() - /sys/kernel/debug/accel/<dev>/<name>
 * @dev: the card's device name (dev-name of card-get)
 * @name: file
 * @out: output, PATH_MAX bytes
 *
 * Return: 0, or -ENOENT when the file does not exist.
 */
static int rkt_dbg_path(const char *dev, const char *name, char *out)
{
	snprintf(out, PATH_MAX, "/sys/kernel/debug/accel/%s/%s", dev, name);
	return access(out, F_OK) ? -ENOENT : 0;
}

/* Write @s to a debugfs or sysfs file. Return: 0 or -errno. */
static int rkt_put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Read a whole small file into @buf. Return: 0 or -errno. */
static int rkt_slurp(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return -errno;
	got = read(fd, buf, n - 1);
	close(fd);
	if (got < 0)
		return -errno;
	buf[got] = '\0';
	return 0;
}

/**
 * struct rkt_dbg_sched - one "sched" line of debugfs queues
 * @submitted: jobs submitted
 * @done: jobs done
 * @failed: jobs failed
 * @timeouts: jobs timed out
 */
struct rkt_dbg_sched {
	unsigned long long submitted, done, failed, timeouts;
};

/* The "sched NAME ..." line of debugfs queues. Return: 0 or -ENOENT. */
static int rkt_dbg_sched(const char *dev, const char *name,
			 struct rkt_dbg_sched *s)
{
	char path[PATH_MAX], buf[2048], want[32];
	char *line;

	if (rkt_dbg_path(dev, "queues", path) || rkt_slurp(path, buf, sizeof(buf)))
		return -ENOENT;
	snprintf(want, sizeof(want), "sched %s ", name);
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, want, strlen(want)))
			continue;
		if (sscanf(line + strlen(want),
			   " submitted %llu done %llu failed %llu timeouts %llu",
			   &s->submitted, &s->done, &s->failed, &s->timeouts) == 4)
			return 0;
	}
	return -ENOENT;
}

/* "resets: N" of debugfs info. Return: N, or -1. */
static long long rkt_dbg_resets(const char *dev)
{
	char path[PATH_MAX], buf[2048];
	const char *p;

	if (rkt_dbg_path(dev, "info", path) || rkt_slurp(path, buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "resets: ");
	return p ? atoll(p + 8) : -1;
}

/* The dumped card whose accel minor is @minor, or NULL. */
static struct rkt_nl_card *rkt_by_minor(struct rkt_nl_cards *cs, uint32_t minor)
{
	int i;

	for (i = 0; i < cs->n; i++)
		if (cs->c[i].minor == minor)
			return &cs->c[i];
	return NULL;
}

/* Drop the events already queued on @ev. */
static void rkt_drain(struct rkt_nl *ev)
{
	struct rkt_nl_event e;

	while (rkt_nl_event(ev, &e, 200) != -ETIMEDOUT)
		;
}

/*
 * Collect for @ms the events of card @index with command @cmd (0: any)
 * into @out (up to @max). Return: how many arrived.
 */
static int rkt_collect(struct rkt_nl *ev, uint32_t index, uint8_t cmd,
		       struct rkt_nl_event *out, int max, int ms)
{
	int64_t end = rkt_now_ns() + ms * RKT_MS;
	struct rkt_nl_event e;
	int n = 0;

	for (;;) {
		int64_t left = (end - rkt_now_ns()) / RKT_MS;

		if (left <= 0 || rkt_nl_event(ev, &e, (int)left))
			break;
		if (e.index != index || (cmd && e.cmd != cmd))
			continue;
		if (n < max)
			out[n] = e;
		n++;
	}
	return n;
}

FIXTURE(nl) {
	struct rkt_nl nl;
	struct rkt_nl ev;
	struct rkt_nl_cards cards;
};

FIXTURE_SETUP(nl)
{
	int ret = rkt_nl_open(&self->nl);

	if (ret == -ENOENT)
		SKIP(return, "no rk1828 generic netlink family (module not loaded?)");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, rkt_nl_open(&self->ev));
	ASSERT_NE(0, self->ev.events_grp) {
		TH_LOG("the family has no \"events\" multicast group");
	}
	ASSERT_EQ(0, rkt_nl_subscribe(&self->ev));
	ASSERT_EQ(0, rkt_nl_dump(&self->nl, &self->cards));
	if (self->cards.n < 1)
		SKIP(return, "no rk1828 card");
}

FIXTURE_TEARDOWN(nl)
{
	rkt_nl_close(&self->nl);
	rkt_nl_close(&self->ev);
}

/*
 * Every accel node is in the dump once, and each card's identity, memory,
 * state and protocol agree with GET_PARAM on its node; a new file is one
 * more context and a new card BO is less free memory, in both; the card's
 * telemetry is there and plausible (the emulator's thermal model idles
 * at 42 C under a 95 C limit, or the limit of RK1828_THERMAL).
 */
TEST_F_TIMEOUT(nl, dump_agrees_with_get_param, 120)
{
	int idx[RKT_MAX_CARDS], n = rkt_card_indices(idx), i, fd, fd2;
	struct rkt_nl_cards after;
	struct rkt_nl_card *c, *c2;
	struct rkt_bo bo;
	uint64_t v;

	ASSERT_EQ(n, self->cards.n);
	for (i = 0; i < n; i++) {
		c = rkt_by_minor(&self->cards, idx[i]);
		ASSERT_NE(NULL, c) {
			TH_LOG("accel%d is not in the dump", idx[i]);
		}
		fd = rkt_open_card(idx[i]);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, rkt_get_param(fd, DRM_RK1828_PARAM_CARD_SERIAL, &v));
		EXPECT_EQ(v, c->serial);
		ASSERT_EQ(0, rkt_get_param(fd, DRM_RK1828_PARAM_CARD_MEM_SIZE, &v));
		EXPECT_EQ(v, c->mem_total);
		ASSERT_EQ(0, rkt_get_param(fd, DRM_RK1828_PARAM_LINK_TYPE, &v));
		EXPECT_EQ(v, c->link_type);
		ASSERT_EQ(0, rkt_get_param(fd, DRM_RK1828_PARAM_LINK_SPEED, &v));
		EXPECT_EQ(v, c->link_speed);
		ASSERT_EQ(0, rkt_get_param(fd, DRM_RK1828_PARAM_PROTOCOL_VERSION, &v));
		EXPECT_EQ(v, c->protocol);
		EXPECT_LE(0x00010001, c->protocol);
		ASSERT_EQ(0, rkt_get_param(fd, DRM_RK1828_PARAM_CARD_STATE, &v));
		EXPECT_EQ(v, c->state);
		EXPECT_EQ(RK1828_CARD_STATE_OK, c->state);
		EXPECT_EQ(rkt_dbg_resets(c->dev_name), (long long)c->resets);
		EXPECT_NE(0, c->fw[0]);
		EXPECT_NE(0, c->dev_name[0]);

		/* telemetry: every queue nest, the card's sensors */
		EXPECT_TRUE(c->q[RK1828_QUEUE_MGMT].present &&
			    !c->q[RK1828_QUEUE_MGMT].has_jobs);
		EXPECT_TRUE(c->q[RK1828_QUEUE_COMPUTE].has_jobs &&
			    c->q[RK1828_QUEUE_COPY].has_jobs);
		EXPECT_TRUE(c->q[RK1828_QUEUE_COMPUTE].has_busy);
		EXPECT_TRUE(c->seen & (1ull << RK1828_A_CARD_TEMPERATURE));
		EXPECT_LT(20000, c->temp_mc);
		EXPECT_GT(120000, c->temp_mc);
		EXPECT_EQ(rkt_expected_limit_mc(c->serial), c->temp_limit_mc);
		EXPECT_EQ(0, c->throttled);
		EXPECT_LE(2000, c->power_mw);
		EXPECT_LT(0, c->uptime_ns);
		TH_LOG("card %u accel%u %s serial %#llx: %d mC, %u mW, %llu/%llu bytes free",
		       c->index, c->minor, c->dev_name,
		       (unsigned long long)c->serial, c->temp_mc, c->power_mw,
		       (unsigned long long)c->mem_free,
		       (unsigned long long)c->mem_total);

		/* memory and contexts move with GET_PARAM */
		ASSERT_EQ(0, rkt_bo_create(fd, 8 << 20, DRM_RK1828_BO_CARD, &bo));
		fd2 = rkt_open_card(idx[i]);
		ASSERT_LE(0, fd2);
		ASSERT_EQ(0, rkt_nl_get(&self->nl, c->index, &after.c[0]));
		c2 = &after.c[0];
		ASSERT_EQ(0, rkt_get_param(fd, DRM_RK1828_PARAM_CARD_MEM_FREE, &v));
		EXPECT_EQ(v, c2->mem_free);
		EXPECT_EQ(c->mem_free - bo.size, c2->mem_free);
		EXPECT_EQ(c->contexts + 2, c2->contexts);
		EXPECT_EQ(c->serial, c2->serial);
		close(fd2);
		close(fd);
	}
}

/*
 * card-get of one index returns that card; malformed requests are refused
 * by the policy or the handler with a clean error and nothing changes.
 */
TEST_F_TIMEOUT(nl, bad_requests_get_clean_errors, 120)
{
	struct rkt_nl_card *c = &self->cards.c[0], one;
	struct rkt_nl_cards again;
	struct rkt_nl_msg m;
	uint16_t half = 0;
	uint64_t wide = 0;

	ASSERT_EQ(0, rkt_nl_get(&self->nl, c->index, &one));
	EXPECT_EQ(RK1828_CMD_CARD_GET, one.cmd);
	EXPECT_EQ(c->index, one.index);
	EXPECT_EQ(c->serial, one.serial);
	EXPECT_STREQ(c->dev_name, one.dev_name);

	/* no such card */
	EXPECT_EQ(-ENODEV, rkt_nl_get(&self->nl, 4096, &one));
	EXPECT_EQ(-ENODEV, rkt_nl_reset(&self->nl, 4096));

	/* no index */
	rkt_nl_msg_init(&m, self->nl.family, RK1828_CMD_CARD_GET, NLM_F_ACK);
	ASSERT_EQ(0, rkt_nl_send(&self->nl, &m));
	EXPECT_EQ(-EINVAL, rkt_nl_wait_reply(&self->nl, NULL, NULL, 5000));
	rkt_nl_msg_init(&m, self->nl.family, RK1828_CMD_CARD_RESET, NLM_F_ACK);
	ASSERT_EQ(0, rkt_nl_send(&self->nl, &m));
	EXPECT_EQ(-EINVAL, rkt_nl_wait_reply(&self->nl, NULL, NULL, 5000));

	/* index of the wrong size (strict validation: exact length) */
	rkt_nl_msg_init(&m, self->nl.family, RK1828_CMD_CARD_GET, NLM_F_ACK);
	rkt_nl_put(&m, RK1828_A_CARD_INDEX, &half, sizeof(half));
	ASSERT_EQ(0, rkt_nl_send(&self->nl, &m));
	EXPECT_EQ(-EINVAL, rkt_nl_wait_reply(&self->nl, NULL, NULL, 5000));
	rkt_nl_msg_init(&m, self->nl.family, RK1828_CMD_CARD_GET, NLM_F_ACK);
	rkt_nl_put(&m, RK1828_A_CARD_INDEX, &wide, sizeof(wide));
	ASSERT_EQ(0, rkt_nl_send(&self->nl, &m));
	EXPECT_EQ(-EINVAL, rkt_nl_wait_reply(&self->nl, NULL, NULL, 5000));

	/* an attribute the request does not take, one beyond the set */
	rkt_nl_msg_init(&m, self->nl.family, RK1828_CMD_CARD_GET, NLM_F_ACK);
	rkt_nl_put_u32(&m, RK1828_A_CARD_INDEX, c->index);
	rkt_nl_put_u32(&m, RK1828_A_CARD_CONTEXTS, 1);
	ASSERT_EQ(0, rkt_nl_send(&self->nl, &m));
	EXPECT_EQ(-EINVAL, rkt_nl_wait_reply(&self->nl, NULL, NULL, 5000));
	rkt_nl_msg_init(&m, self->nl.family, RK1828_CMD_CARD_GET, NLM_F_ACK);
	rkt_nl_put_u32(&m, RK1828_A_CARD_INDEX, c->index);
	rkt_nl_put_u32(&m, 200, 1);
	ASSERT_EQ(0, rkt_nl_send(&self->nl, &m));
	EXPECT_EQ(-EINVAL, rkt_nl_wait_reply(&self->nl, NULL, NULL, 5000));

	/* commands that are events, or do not exist, are no requests */
	rkt_nl_msg_init(&m, self->nl.family, RK1828_CMD_RESET, NLM_F_ACK);
	rkt_nl_put_u32(&m, RK1828_A_EVENT_INDEX, c->index);
	ASSERT_EQ(0, rkt_nl_send(&self->nl, &m));
	EXPECT_EQ(-EOPNOTSUPP, rkt_nl_wait_reply(&self->nl, NULL, NULL, 5000));
	rkt_nl_msg_init(&m, self->nl.family, 99, NLM_F_ACK);
	ASSERT_EQ(0, rkt_nl_send(&self->nl, &m));
	EXPECT_EQ(-EOPNOTSUPP, rkt_nl_wait_reply(&self->nl, NULL, NULL, 5000));

	/* nothing was reset, every card is still there */
	ASSERT_EQ(0, rkt_nl_dump(&self->nl, &again));
	EXPECT_EQ(self->cards.n, again.n);
	EXPECT_EQ(c->resets, again.c[0].resets);
}

/*
 * Jobs are counted per queue as they complete (with debugfs agreeing),
 * and the compute queue's busy time, as the card reports it, grows by at
 * least the length of a DELAY job.
 */
TEST_F_TIMEOUT(nl, jobs_and_busy_time_are_counted, 120)
{
	struct rkt_nl_card *c = &self->cards.c[0], a, b;
	struct rkt_nl_queue *qa, *qb;
	struct rkt_dbg_sched ds;
	struct rkt_bo host, card, prog;
	int32_t st;
	int fd, i;

	fd = rkt_open_card(c->minor);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rkt_host_bo(fd, 1 << 20, &host));
	ASSERT_EQ(0, rkt_bo_create(fd, 1 << 20, DRM_RK1828_BO_CARD, &card));
	ASSERT_EQ(0, rkt_nl_get(&self->nl, c->index, &a));

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, rkt_copy_sync(fd, host.handle, 0, card.handle, 0, 1 << 20));
	ASSERT_EQ(0, rkt_delay_job(fd, 400, &prog, 0));
	ASSERT_EQ(0, rkt_bo_wait(fd, prog.handle, rkt_now_ns() + 30 * RKT_NS, &st));
	ASSERT_EQ(0, st);
	/* telemetry replies are shared for up to 100 ms */
	rkt_sleep_ms(150);
	ASSERT_EQ(0, rkt_nl_get(&self->nl, c->index, &b));

	/* 4 copies plus the upload of the program; 1 EXEC */
	qa = &a.q[RK1828_QUEUE_COPY];
	qb = &b.q[RK1828_QUEUE_COPY];
	EXPECT_EQ(qa->submitted + 5, qb->submitted);
	EXPECT_EQ(qa->completed + 5, qb->completed);
	EXPECT_EQ(qa->failed, qb->failed);
	EXPECT_EQ(0, qb->depth);
	EXPECT_LE(qa->commands + 5, qb->commands);
	qa = &a.q[RK1828_QUEUE_COMPUTE];
	qb = &b.q[RK1828_QUEUE_COMPUTE];
	EXPECT_EQ(qa->submitted + 1, qb->submitted);
	EXPECT_EQ(qa->completed + 1, qb->completed);
	EXPECT_EQ(0, qb->depth);
	EXPECT_LE(qa->busy_ns + 400 * RKT_MS, qb->busy_ns);
	EXPECT_GT(qa->busy_ns + 10 * RKT_NS, qb->busy_ns);
	EXPECT_LT(a.energy_uj, b.energy_uj);
	EXPECT_LT(a.uptime_ns, b.uptime_ns);
	TH_LOG("compute busy %llu -> %llu ns, energy %llu -> %llu uJ",
	       (unsigned long long)qa->busy_ns, (unsigned long long)qb->busy_ns,
	       (unsigned long long)a.energy_uj, (unsigned long long)b.energy_uj);

	ASSERT_EQ(0, rkt_dbg_sched(c->dev_name, "copy", &ds));
	EXPECT_EQ(ds.submitted, b.q[RK1828_QUEUE_COPY].submitted);
	EXPECT_EQ(ds.done, b.q[RK1828_QUEUE_COPY].completed);
	EXPECT_EQ(ds.failed, b.q[RK1828_QUEUE_COPY].failed);
	EXPECT_EQ(ds.timeouts, b.q[RK1828_QUEUE_COPY].timedout);
	ASSERT_EQ(0, rkt_dbg_sched(c->dev_name, "compute", &ds));
	EXPECT_EQ(ds.submitted, qb->submitted);
	EXPECT_EQ(ds.done, qb->completed);
	close(fd);
}

/*
 * A reset through debugfs and one through card-reset each send exactly
 * one reset event, with the reason, no guilty context, result 0 and the
 * new reset count, which card-get and debugfs then show.
 */
TEST_F_TIMEOUT(nl, one_reset_event_per_reset, 120)
{
	struct rkt_nl_card *c = &self->cards.c[0], after;
	struct rkt_nl_event got[4];
	char path[PATH_MAX];
	int n;

	if (rkt_dbg_path(c->dev_name, "reset", path))
		SKIP(return, "no debugfs reset file");
	rkt_drain(&self->ev);

	ASSERT_EQ(0, rkt_put(path, "1"));
	n = rkt_collect(&self->ev, c->index, RK1828_CMD_RESET, got, 4, 1500);
	ASSERT_EQ(1, n);
	EXPECT_EQ(RK1828_RESET_REASON_DEBUGFS, got[0].reason);
	EXPECT_FALSE(got[0].seen & (1ull << RK1828_A_EVENT_CTX));
	EXPECT_EQ(0, got[0].result);
	EXPECT_EQ(c->resets + 1, got[0].resets);

	ASSERT_EQ(0, rkt_nl_reset(&self->nl, c->index));
	n = rkt_collect(&self->ev, c->index, RK1828_CMD_RESET, got, 4, 1500);
	ASSERT_EQ(1, n);
	EXPECT_EQ(RK1828_RESET_REASON_ADMIN, got[0].reason);
	EXPECT_FALSE(got[0].seen & (1ull << RK1828_A_EVENT_CTX));
	EXPECT_EQ(0, got[0].result);
	EXPECT_EQ(c->resets + 2, got[0].resets);

	ASSERT_EQ(0, rkt_nl_get(&self->nl, c->index, &after));
	EXPECT_EQ(c->resets + 2, after.resets);
	EXPECT_EQ(c->resets + 2, (uint64_t)rkt_dbg_resets(c->dev_name));
	EXPECT_EQ(RK1828_CARD_STATE_OK, after.state);
}

/*
 * A job whose command outlives the card's job timeout sends job-timeout
 * (its context, the compute queue, the timeout), then exactly one reset
 * event with the reason timeout naming the same context; both are out
 * before the job's fence signals.
 */
TEST_F_TIMEOUT(nl, job_timeout_events_name_the_context, 120)
{
	struct rkt_nl_card *c = &self->cards.c[0];
	char path[PATH_MAX], old[32];
	struct rkt_nl_event got[8], *jt = NULL, *rs = NULL;
	int fd, n, i, n_jt = 0, n_rs = 0;
	struct rkt_bo prog;
	uint64_t ctx;
	int32_t st;

	if (rkt_dbg_path(c->dev_name, "job_timeout_ms", path) ||
	    rkt_slurp(path, old, sizeof(old)))
		SKIP(return, "no debugfs job_timeout_ms");
	fd = rkt_open_card(c->minor);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rkt_get_param(fd, DRM_RK1828_PARAM_CONTEXT_ID, &ctx));
	rkt_drain(&self->ev);

	ASSERT_EQ(0, rkt_put(path, "1000"));
	ASSERT_EQ(0, rkt_delay_job(fd, 4000, &prog, 0));
	EXPECT_EQ(0, rkt_bo_wait(fd, prog.handle, rkt_now_ns() + 30 * RKT_NS, &st));
	EXPECT_GT(0, st);
	n = rkt_collect(&self->ev, c->index, 0, got, 8, 1000);
	EXPECT_EQ(0, rkt_put(path, old));
	for (i = 0; i < n && i < 8; i++) {
		if (got[i].cmd == RK1828_CMD_JOB_TIMEOUT && !n_jt++)
			jt = &got[i];
		if (got[i].cmd == RK1828_CMD_RESET && !n_rs++)
			rs = &got[i];
	}
	ASSERT_EQ(1, n_jt);
	ASSERT_EQ(1, n_rs);
	EXPECT_LT(jt, rs);
	EXPECT_EQ(ctx, jt->ctx);
	EXPECT_EQ(RK1828_QUEUE_COMPUTE, jt->queue);
	EXPECT_EQ(1000, jt->timeout_ms);
	EXPECT_EQ(RK1828_RESET_REASON_TIMEOUT, rs->reason);
	EXPECT_TRUE(rs->seen & (1ull << RK1828_A_EVENT_CTX));
	EXPECT_EQ(ctx, rs->ctx);
	EXPECT_EQ(0, rs->result);
	EXPECT_EQ(c->resets + 1, rs->resets);
	close(fd);
}

/*
 * card-reset is for CAP_NET_ADMIN only: as nobody, card-get works and
 * card-reset fails with -EPERM, and the card is not reset.
 */
TEST_F_TIMEOUT(nl, card_reset_needs_cap_net_admin, 120)
{
	struct rkt_nl_card *c = &self->cards.c[0], after;
	int status;
	pid_t pid;

	rkt_drain(&self->ev);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rkt_nl_cards cs;
		struct rkt_nl nl;

		if (setgroups(0, NULL) || setgid(RKT_NOBODY) || setuid(RKT_NOBODY))
			_exit(10);
		if (rkt_nl_open(&nl))
			_exit(11);
		if (rkt_nl_dump(&nl, &cs) || cs.n < 1)
			_exit(12);
		if (rkt_nl_reset(&nl, c->index) != -EPERM)
			_exit(13);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("as nobody: 10 setuid, 11 open, 12 dump, 13 reset not -EPERM: %d",
		       WEXITSTATUS(status));
	}
	EXPECT_EQ(0, rkt_collect(&self->ev, c->index, RK1828_CMD_RESET, NULL, 0, 500));
	ASSERT_EQ(0, rkt_nl_get(&self->nl, c->index, &after));
	EXPECT_EQ(c->resets, after.resets);
}

/**
 * struct rkt_smi - rk1828-smi events running in the background
 * @pid: its process
 * @out: its standard output (one line per event)
 * @err: its standard error ("listening ..." once subscribed)
 */
struct rkt_smi {
	pid_t pid;
	char out[32], err[32];
};

/*
 * Start `rk1828-smi events` (@smi) with its output in temporary files and
 * wait until it listens. Return: 0, or -errno / -ETIMEDOUT.
 */
static int rkt_smi_events_start(const char *smi, struct rkt_smi *r)
{
	char buf[512];
	int fo, fe, i;

	snprintf(r->out, sizeof(r->out), "/tmp/rk1828-smi-out.XXXXXX");
	snprintf(r->err, sizeof(r->err), "/tmp/rk1828-smi-err.XXXXXX");
	fo = mkstemp(r->out);
	fe = mkstemp(r->err);
	if (fo < 0 || fe < 0)
		return -errno;
	r->pid = fork();
	if (r->pid < 0)
		return -errno;
	if (!r->pid) {
		dup2(fo, 1);
		dup2(fe, 2);
		/* -t: it ends by itself should the test stop half-way */
		execl(smi, smi, "events", "-t", "300", NULL);
		_exit(127);
	}
	close(fo);
	close(fe);
	/* 120 s: only a hang reaches it, a loaded TCG guest takes seconds */
	for (i = 0; i < 2400; i++) {
		if (!rkt_slurp(r->err, buf, sizeof(buf)) && strstr(buf, "listening"))
			return 0;
		rkt_sleep_ms(50);
	}
	return -ETIMEDOUT;
}

/*
 * Stop it with SIGINT (it exits 0) and read its output into @buf.
 * Return: its exit status, or -1 when it did not exit normally.
 */
static int rkt_smi_events_stop(struct rkt_smi *r, char *buf, size_t n)
{
	int status;

	kill(r->pid, SIGINT);
	if (waitpid(r->pid, &status, 0) != r->pid)
		return -1;
	if (rkt_slurp(r->out, buf, n))
		buf[0] = '\0';
	unlink(r->out);
	unlink(r->err);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The " card N thermal-limit ..." line rk1828-smi prints for @e. */
static void rkt_smi_thermal_line(char *buf, size_t n, const struct rkt_nl_event *e)
{
	snprintf(buf, n, " card %u thermal-limit throttled=%u temperature=%.1fC limit=%.1fC\n",
		 e->index, e->throttled, e->temp_mc / 1000.0, e->temp_limit_mc / 1000.0);
}

/*
 * Take the thermal-limit events that arrive within @ms: those of card
 * @index go to @up (throttled) and @down (cooled), counted in @n_up and
 * @n_down; those of other cards are counted in @n_other. Return early
 * once an event of card @index with throttled == @until arrived (-1: wait
 * the whole time).
 */
static void rkt_thermal_collect(struct rkt_nl *ev, uint32_t index, int ms, int until,
				struct rkt_nl_event *up, int *n_up,
				struct rkt_nl_event *down, int *n_down, int *n_other)
{
	int64_t end = rkt_now_ns() + ms * RKT_MS;
	struct rkt_nl_event e;

	for (;;) {
		int64_t left = (end - rkt_now_ns()) / RKT_MS;

		if (left <= 0 || rkt_nl_event(ev, &e, (int)left))
			return;
		if (e.cmd != RK1828_CMD_THERMAL_LIMIT)
			continue;
		if (e.index != index) {
			(*n_other)++;
			continue;
		}
		if (e.throttled) {
			if (!(*n_up)++)
				*up = e;
		} else if (!(*n_down)++) {
			*down = e;
		}
		if (e.throttled == until)
			return;
	}
}

/*
 * A card driven over its thermal limit (RK1828_THERMAL=N:C, the card's
 * emulator started with --temp-limit C; the emulator's thermal model,
 * protocol.rst "STATS", heats a busy compute queue towards 90 C) sends
 * exactly one thermal-limit event naming the card, throttled, with a
 * temperature at or just above the limit, and card-get shows it
 * throttled; idle again, it cools and sends exactly one more event once
 * it is 2 C below the limit (the card's hysteresis). No other card sends
 * one, and rk1828-smi events prints both events with the same values.
 */
TEST_F_TIMEOUT(nl, thermal_limit_event, 180)
{
	struct rkt_nl_event up = { 0 }, down = { 0 };
	int n_up = 0, n_down = 0, n_other = 0, limit_mc, fd, round, st, rc;
	char smi[PATH_MAX], line[160], *out = NULL;
	struct rkt_nl_card *c = NULL, now;
	struct rkt_smi r = { .pid = 0 };
	bool have_smi;
	unsigned int card;
	struct rkt_bo prog;
	const char *p;
	int i;

	if (rkt_thermal_env(&card, &limit_mc))
		SKIP(return, "RK1828_THERMAL=N:C not set (card N's emulator started with --temp-limit C: tools/vm-run --emu-args 'N:--temp-limit C')");
	for (i = 0; i < self->cards.n; i++)
		if (self->cards.c[i].serial == RKT_SERIAL_BASE + card)
			c = &self->cards.c[i];
	ASSERT_NE(NULL, c) {
		TH_LOG("no card with serial %#llx (RK1828_THERMAL names emulator %u)",
		       RKT_SERIAL_BASE + card, card);
	}
	ASSERT_EQ(limit_mc, c->temp_limit_mc);
	ASSERT_EQ(0, c->throttled);
	ASSERT_GT(limit_mc - 3000, c->temp_mc) {
		TH_LOG("card %u is too warm to start: %d mC, limit %d mC",
		       c->index, c->temp_mc, limit_mc);
	}
	rkt_project_path("RK1828_SMI", "build/rk1828-smi", smi);
	have_smi = access(smi, X_OK) == 0;
	/* under tools/vm-run the project's rk1828-smi must be there */
	if (getenv("RK1828_VM"))
		ASSERT_TRUE(have_smi) {
			TH_LOG("no %s (set RK1828_SMI)", smi);
		}
	if (have_smi)
		ASSERT_EQ(0, rkt_smi_events_start(smi, &r));
	rkt_drain(&self->ev);
	fd = rkt_open_card(c->minor);
	ASSERT_LE(0, fd);

	/* heat: back-to-back 2 s DELAY jobs on the compute queue */
	for (round = 0; round < 20 && !n_up; round++) {
		ASSERT_EQ(0, rkt_delay_job(fd, 2000, &prog, 0));
		rkt_thermal_collect(&self->ev, c->index, 2000, -1, &up, &n_up,
				    &down, &n_down, &n_other);
		ASSERT_EQ(0, rkt_bo_wait(fd, prog.handle, rkt_now_ns() + 30 * RKT_NS, &st));
		EXPECT_EQ(0, st);
		rkt_gem_close(fd, &prog);
	}
	ASSERT_EQ(0, rkt_nl_get(&self->nl, c->index, &now));
	TH_LOG("card %u: %d mC -> thermal-limit after %d s of DELAY jobs at %d mC; now %d mC",
	       c->index, c->temp_mc, 2 * round, up.temp_mc, now.temp_mc);
	ASSERT_EQ(1, n_up);
	EXPECT_EQ(c->index, up.index);
	EXPECT_TRUE(up.seen & (1ull << RK1828_A_EVENT_TEMPERATURE));
	EXPECT_EQ(limit_mc, up.temp_limit_mc);
	EXPECT_LE(limit_mc, up.temp_mc);
	/*
	 * Just above: the model heats a busy card by 1.33 C/s near 50 C and
	 * telemetry polls once a second, so 10 C is 7 s late (a loaded TCG
	 * guest can delay a poll by seconds); the 20 rounds would reach 77 C.
	 */
	EXPECT_GT(limit_mc + 10000, up.temp_mc);
	EXPECT_EQ(1, now.throttled);
	EXPECT_LE(limit_mc, now.temp_mc);

	/* idle: it cools, and says so once 2 C below the limit */
	rkt_thermal_collect(&self->ev, c->index, 90000, 0, &up, &n_up,
			    &down, &n_down, &n_other);
	rkt_thermal_collect(&self->ev, c->index, 1500, -1, &up, &n_up,
			    &down, &n_down, &n_other);
	ASSERT_EQ(0, rkt_nl_get(&self->nl, c->index, &now));
	close(fd);
	TH_LOG("cooled: thermal-limit at %d mC; now %d mC", down.temp_mc, now.temp_mc);
	EXPECT_EQ(1, n_up);
	EXPECT_EQ(1, n_down);
	EXPECT_EQ(0, n_other);
	EXPECT_EQ(c->index, down.index);
	EXPECT_EQ(limit_mc, down.temp_limit_mc);
	EXPECT_GT(limit_mc - RKT_TEMP_HYST_MC, down.temp_mc);
	EXPECT_LT(limit_mc - RKT_TEMP_HYST_MC - 1500, down.temp_mc);
	EXPECT_EQ(0, now.throttled);

	if (!have_smi)
		return;
	out = malloc(65536);
	ASSERT_NE(NULL, out);
	rc = rkt_smi_events_stop(&r, out, 65536);
	EXPECT_EQ(0, rc);
	/* exactly these two thermal-limit lines, in this order */
	rkt_smi_thermal_line(line, sizeof(line), &up);
	p = strstr(out, line);
	EXPECT_NE(NULL, p) {
		TH_LOG("rk1828-smi events printed no%s in:\n%s", line, out);
	}
	if (p) {
		rkt_smi_thermal_line(line, sizeof(line), &down);
		EXPECT_NE(NULL, strstr(p, line)) {
			TH_LOG("rk1828-smi events printed no%s after the first:\n%s", line, out);
		}
	}
	for (i = 0, p = out; (p = strstr(p, " thermal-limit ")); p++)
		i++;
	EXPECT_EQ(2, i);
	free(out);
}

/**
 * struct dumper - one thread that dumps the cards until told to stop
 * @stop: set by the test
 * @min_cards: fewest cards a dump may show
 * @max_cards: most cards a dump may show
 * @dumps: dumps done
 * @errors: dumps that failed or showed a card count outside the bounds
 * @first_err: the first failure's errno (or 0 for a bad count)
 */
struct dumper {
	volatile int *stop;
	int min_cards, max_cards;
	int dumps, errors, first_err;
};

static void *dumper_fn(void *arg)
{
	struct dumper *d = arg;
	struct rkt_nl_cards *cs = malloc(sizeof(*cs));
	struct rkt_nl nl;
	int ret;

	if (!cs || rkt_nl_open(&nl)) {
		d->errors++;
		free(cs);
		return NULL;
	}
	while (!__atomic_load_n(d->stop, __ATOMIC_ACQUIRE)) {
		ret = rkt_nl_dump(&nl, cs);
		if (ret || cs->n < d->min_cards || cs->n > d->max_cards) {
			if (!d->errors)
				d->first_err = ret;
			d->errors++;
		}
		d->dumps++;
	}
	rkt_nl_close(&nl);
	free(cs);
	return NULL;
}

/* Start RKT_DUMPERS dumpers; Return: 0 or the pthread error. */
static int dumpers_start(pthread_t *th, struct dumper *d, volatile int *stop,
			 int min_cards, int max_cards)
{
	int i, ret;

	for (i = 0; i < RKT_DUMPERS; i++) {
		d[i] = (struct dumper){ .stop = stop, .min_cards = min_cards,
					.max_cards = max_cards };
		ret = pthread_create(&th[i], NULL, dumper_fn, &d[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Stop and join them; *@dumps and *@errors: the sums. */
static void dumpers_stop(pthread_t *th, struct dumper *d, volatile int *stop,
			 int *dumps, int *errors, int *first_err)
{
	int i;

	__atomic_store_n(stop, 1, __ATOMIC_RELEASE);
	*dumps = *errors = *first_err = 0;
	for (i = 0; i < RKT_DUMPERS; i++) {
		pthread_join(th[i], NULL);
		*dumps += d[i].dumps;
		*errors += d[i].errors;
		if (d[i].errors && !*first_err)
			*first_err = d[i].first_err;
	}
}

/*
 * 64 threads dump without a pause while every card is reset 8 times,
 * through debugfs and card-reset in turn: every dump succeeds with every
 * card, every reset works and is counted once.
 */
TEST_F_TIMEOUT(nl, dumps_during_resets, 300)
{
	pthread_t th[RKT_DUMPERS];
	struct dumper d[RKT_DUMPERS];
	struct rkt_nl_cards after;
	volatile int stop = 0;
	char path[PATH_MAX];
	int i, k, dumps, errors, first_err;

	if (rkt_dbg_path(self->cards.c[0].dev_name, "reset", path))
		SKIP(return, "no debugfs reset file");
	ASSERT_EQ(0, dumpers_start(th, d, &stop, self->cards.n, self->cards.n));
	for (k = 0; k < 8; k++) {
		for (i = 0; i < self->cards.n; i++) {
			struct rkt_nl_card *c = &self->cards.c[i];

			if (k % 2) {
				EXPECT_EQ(0, rkt_nl_reset(&self->nl, c->index));
			} else {
				ASSERT_EQ(0, rkt_dbg_path(c->dev_name, "reset", path));
				EXPECT_EQ(0, rkt_put(path, "1"));
			}
		}
		rkt_sleep_ms(100);
	}
	dumpers_stop(th, d, &stop, &dumps, &errors, &first_err);
	TH_LOG("%d dumps by %d threads during %d resets", dumps, RKT_DUMPERS,
	       8 * self->cards.n);
	EXPECT_EQ(0, errors) {
		TH_LOG("%d dumps failed, the first with %d", errors, first_err);
	}
	EXPECT_LE(RKT_DUMPERS, dumps);
	ASSERT_EQ(0, rkt_nl_dump(&self->nl, &after));
	ASSERT_EQ(self->cards.n, after.n);
	for (i = 0; i < after.n; i++) {
		EXPECT_EQ(self->cards.c[i].resets + 8, after.c[i].resets);
		EXPECT_EQ(RK1828_CARD_STATE_OK, after.c[i].state);
	}
}

/* The USB device directory (with "authorized") behind accel node @minor. */
static int rkt_usb_dev(uint32_t minor, char *out)
{
	char path[PATH_MAX], probe[PATH_MAX + 32];
	char *p;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%u/device", minor);
	if (!realpath(path, out))
		return -ENOENT;
	while (strlen(out) > 4) {
		snprintf(probe, sizeof(probe), "%s/idVendor", out);
		if (access(probe, F_OK) == 0) {
			snprintf(probe, sizeof(probe), "%s/authorized", out);
			if (access(probe, W_OK) == 0)
				return 0;
		}
		p = strrchr(out, '/');
		if (!p)
			break;
		*p = '\0';
	}
	return -ENOENT;
}

/* Wait for an event @cmd about serial @serial. Return: 0 or -ETIMEDOUT. */
static int rkt_wait_card_event(struct rkt_nl *ev, uint8_t cmd, uint64_t serial,
			       struct rkt_nl_event *out, int ms)
{
	int64_t end = rkt_now_ns() + ms * RKT_MS;

	for (;;) {
		int64_t left = (end - rkt_now_ns()) / RKT_MS;

		if (left <= 0 || rkt_nl_event(ev, out, (int)left))
			return -ETIMEDOUT;
		if (out->cmd == cmd && out->card.serial == serial)
			return 0;
	}
}

/*
 * Unplug the card @gone: a USB card through @auth (authorized = 0), else
 * the PCIe card through QMP device_del on the vm-run control channel.
 * Return: 0, or -errno (the control channel's answer is logged).
 */
static int rkt_unplug(struct __test_metadata *_metadata,
		      const struct rkt_nl_card *gone, const char *auth)
{
	char req[64], answer[128];
	int ret;

	if (auth)
		return rkt_put(auth, "0");
	snprintf(req, sizeof(req), "device_del card%llu",
		 (unsigned long long)(gone->serial - RKT_SERIAL_BASE));
	ret = rkt_ctl(req, answer);
	if (ret)
		TH_LOG("vm-ctl %s: %s (%d)", req, answer, ret);
	return ret;
}

/*
 * Unplugging a card while 64 threads dump sends card-remove with its
 * index, device and serial; the index is gone from card-get and the
 * dumps; no dump fails. A USB card (the last one) is unplugged with
 * authorized = 0 and plugged back, which sends card-add with the driver's
 * state of the card; without USB cards the last PCIe card is removed for
 * good the way an operator does (QMP device_del through $RK1828_VM_CTL,
 * tools/vm-ctl), and QEMU reports it deleted.
 */
TEST_F_TIMEOUT(nl, unplug_sends_card_remove, 300)
{
	struct rkt_nl_card gone, one;
	char usbdev[PATH_MAX], auth[PATH_MAX + 16], req[64], answer[128];
	pthread_t th[RKT_DUMPERS];
	struct dumper d[RKT_DUMPERS];
	struct rkt_nl_cards after;
	struct rkt_nl_event e;
	volatile int stop = 0;
	int i, dumps, errors, first_err, ret, idx[RKT_MAX_CARDS];
	int64_t end;
	bool usb;

	if (self->cards.n < 2)
		SKIP(return, "needs two cards (found %d)", self->cards.n);
	/* the last card on USB (PCIe cards have no authorized attribute) */
	for (i = self->cards.n - 1; i >= 0; i--)
		if (!rkt_usb_dev(self->cards.c[i].minor, usbdev))
			break;
	usb = i >= 0;
	if (!usb) {
		if (!getenv("RK1828_VM_CTL"))
			SKIP(return, "no card on USB and no control channel for PCIe ($RK1828_VM_CTL, tools/vm-run)");
		for (i = self->cards.n - 1; i >= 0; i--)
			if (self->cards.c[i].link_type == RK1828_LINK_TYPE_PCIE)
				break;
		ASSERT_LE(0, i) {
			TH_LOG("no card on USB or PCIe");
		}
	}
	gone = self->cards.c[i];
	snprintf(auth, sizeof(auth), "%s/authorized", usbdev);
	rkt_drain(&self->ev);
	ASSERT_EQ(0, dumpers_start(th, d, &stop, self->cards.n - 1, self->cards.n));
	rkt_sleep_ms(500);

	TH_LOG("unplugging card %u (accel%u, %s, %s)", gone.index, gone.minor,
	       gone.dev_name, usb ? usbdev : "PCIe: QMP device_del");
	ASSERT_EQ(0, rkt_unplug(_metadata, &gone, usb ? auth : NULL));
	/* 90 s for each event: only a hang reaches it (the test has 300 s) */
	ret = rkt_wait_card_event(&self->ev, RK1828_CMD_CARD_REMOVE, gone.serial,
				  &e, 90000);
	EXPECT_EQ(0, ret);
	if (!ret) {
		EXPECT_EQ(gone.index, e.index);
		EXPECT_EQ(gone.minor, e.card.minor);
		EXPECT_STREQ(gone.dev_name, e.card.dev_name);
	}
	if (!usb) {
		snprintf(req, sizeof(req), "wait_deleted card%llu",
			 (unsigned long long)(gone.serial - RKT_SERIAL_BASE));
		EXPECT_EQ(0, rkt_ctl(req, answer)) {
			TH_LOG("QEMU did not finish removing the card: %s", answer);
		}
	}
	EXPECT_EQ(-ENODEV, rkt_nl_get(&self->nl, gone.index, &one));
	ASSERT_EQ(0, rkt_nl_dump(&self->nl, &after));
	EXPECT_EQ(self->cards.n - 1, after.n);
	for (i = 0; i < after.n; i++)
		EXPECT_NE(gone.serial, after.c[i].serial);
	/*
	 * card-remove comes before drm_dev_unplug(), which waits for the
	 * dumpers' ioctls in flight before the node goes: wait for it (a
	 * loaded TCG guest can take more than the 500 ms once slept here).
	 */
	end = rkt_now_ns() + 60 * RKT_NS;
	while (rkt_card_indices(idx) != self->cards.n - 1 && rkt_now_ns() < end)
		rkt_sleep_ms(50);
	EXPECT_EQ(self->cards.n - 1, rkt_card_indices(idx));

	if (!usb) {
		/* removed for good: the dumps never saw a bad card count */
		dumpers_stop(th, d, &stop, &dumps, &errors, &first_err);
		TH_LOG("%d dumps by %d threads across the removal", dumps, RKT_DUMPERS);
		EXPECT_EQ(0, errors) {
			TH_LOG("%d dumps failed, the first with %d", errors, first_err);
		}
		EXPECT_LE(RKT_DUMPERS, dumps);
		return;
	}

	/* back: card-add with the state of the card */
	ASSERT_EQ(0, rkt_put(auth, "1"));
	ret = rkt_wait_card_event(&self->ev, RK1828_CMD_CARD_ADD, gone.serial,
				  &e, 90000);
	dumpers_stop(th, d, &stop, &dumps, &errors, &first_err);
	EXPECT_EQ(0, ret);
	if (!ret) {
		EXPECT_EQ(gone.mem_total, e.card.mem_total);
		EXPECT_TRUE(e.card.seen & (1ull << RK1828_A_CARD_MEM_FREE));
		EXPECT_TRUE(e.card.q[RK1828_QUEUE_COPY].has_jobs);
		EXPECT_EQ(0, e.card.resets);
		TH_LOG("re-plugged as card %u (accel%u)", e.index, e.card.minor);
	}
	TH_LOG("%d dumps by %d threads across the unplug", dumps, RKT_DUMPERS);
	EXPECT_EQ(0, errors) {
		TH_LOG("%d dumps failed, the first with %d", errors, first_err);
	}
	EXPECT_LE(RKT_DUMPERS, dumps);
	ASSERT_EQ(0, rkt_nl_dump(&self->nl, &after));
	EXPECT_EQ(self->cards.n, after.n);
}

TEST_HARNESS_MAIN
