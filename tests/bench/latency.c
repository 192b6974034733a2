// SPDX-License-Identifier: MIT
/*
 * latency: driver overhead against the raw card round trip (run in the
 * guest by tests/bench/guest-bench, needs root for debugfs).
 *
 *   latency [-n ITERATIONS] [--size BYTES]
 *
 * On card 0 (the first /dev/accel node of the rk1828 driver) it measures
 * the following in 5 interleaved rounds (so that the shared host's load
 * drifts hit all of them alike), each round doing 2 ping reads and
 * ITERATIONS / 5 jobs of each kind:
 *  - raw: reads /sys/kernel/debug/accel/<dev>/ping. Each read makes the
 *    kernel time 32 INFO round trips on the management queue
 *    (kernel/rk1828_debugfs.c, rk1828_ping_show()), no ioctl, scheduler or
 *    fence in the way; the median of the 10 per-round-trip times is taken.
 *  - single: ITERATIONS (default 200) times, a host->card COPY of BYTES
 *    (default 4096) submitted through librk1828 with an out-syncobj and
 *    waited for (rk_syncobj_status()); median, mean and 10th/90th
 *    percentile of the submit-to-wake time (the ITERATIONS after 10
 *    warm-up jobs; the chains below give means, compare them with it).
 *  - chain: per round, ITERATIONS / 5 COPY jobs submitted back to back,
 *    job i waiting for point i of a timeline syncobj and signalling point
 *    i + 1, then one wait for the last point; total time / ITERATIONS.
 *  - cross-card chain (when there are 2 or more cards): likewise, the jobs
 *    round-robin over the cards (at most 8), each waiting for the previous
 *    card's job through a sync_file exported from one card's syncobj and
 *    imported into the next card's (the LLM pipeline's hand-over).
 * Output: one "key value" line per figure (microseconds), e.g.
 * "raw_rtt_us 650" (tests/run-bench computes the ratios). Exit status 0,
 * or 1 with the librk1828 message when an operation fails.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rk1828.h"

#define TIMEOUT_NS (10LL * 1000000000LL)
/* Measurement rounds; each does 2 ping reads and n/ROUNDS jobs of each kind. */
#define ROUNDS 5

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* pct() - the @p-th percentile (0..100, nearest rank) of sorted v[0..n). */
static int64_t pct(const int64_t *v, int n, int p)
{
	int i = (int)((int64_t)p * (n - 1) / 100);

	return v[i];
}

/*
 * debugfs_dir() - /sys/kernel/debug/accel/<dev> of the card on accel node
 * @minor: the transport device is the target of /sys/class/accel/accelN/device.
 * Returns 0 or -errno.
 */
static int debugfs_dir(int minor, char *buf, size_t len)
{
	char link[128], target[256];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/sys/class/accel/accel%d/device", minor);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = 0;
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	snprintf(buf, len, "/sys/kernel/debug/accel/%s", base);
	return 0;
}

/*
 * ping_path() - the debugfs ping file of @c into @buf. Returns 0 or -errno
 * with a message printed.
 */
static int ping_path(const struct rk_card *c, char *buf, size_t len)
{
	char dir[PATH_MAX];
	int ret;

	ret = debugfs_dir(c->minor, dir, sizeof(dir));
	if (ret) {
		fprintf(stderr, "latency: no sysfs device for accel%d: %s\n", c->minor,
			strerror(-ret));
		return ret;
	}
	snprintf(buf, len, "%s/ping", dir);
	return 0;
}

/*
 * ping_once() - one read of debugfs "ping" (32 INFO round trips).
 * Returns the time of one round trip in us (> 0), or -errno with a
 * message printed.
 */
static int64_t ping_once(const char *path)
{
	char line[128] = "";
	long long us;
	int nrt, ret;
	FILE *f = fopen(path, "r");

	if (!f) {
		ret = -errno;
		fprintf(stderr, "latency: %s: %s (debugfs mounted? root?)\n", path,
			strerror(errno));
		return ret;
	}
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "%d INFO round trips: %lld us each", &nrt, &us) != 2 || us <= 0) {
		fprintf(stderr, "latency: %s: unexpected content \"%s\"\n", path, line);
		fclose(f);
		return -EPROTO;
	}
	fclose(f);
	return us;
}

/* fail() - print the librk1828 error of @what and return 1. */
static int fail(const char *what)
{
	fprintf(stderr, "latency: %s: %s\n", what, rk_error());
	return 1;
}

/**
 * struct copy_pair - a host BO and a card BO of the same size on one card
 * @host: source, mapped and filled with a pattern
 * @dev: destination in card memory
 */
struct copy_pair {
	struct rk_bo host, dev;
};

static int pair_create(struct rk_card *c, uint64_t size, struct copy_pair *p)
{
	memset(p, 0, sizeof(*p));
	if (rk_bo_create(c, size, RK_BO_HOST, &p->host) ||
	    rk_bo_mmap(c, &p->host) ||
	    rk_bo_create(c, size, RK_BO_CARD, &p->dev))
		return -1;
	memset(p->host.map, 0x5a, size);
	return 0;
}

static void pair_destroy(struct rk_card *c, struct copy_pair *p)
{
	rk_bo_destroy(c, &p->dev);
	rk_bo_destroy(c, &p->host);
}

/* bench_single() - submit + wait, @n times; fills t[] (ns). 0 or 1. */
static int bench_single(struct rk_card *c, struct copy_pair *p, uint64_t size,
			int n, int64_t *t)
{
	uint32_t so;
	int i;

	if (rk_syncobj_create(c, false, &so))
		return fail("syncobj create");
	for (i = 0; i < n; i++) {
		struct rk_sync out = { so, 0 };
		int64_t t0 = rk_now_ns();
		int st;

		if (rk_submit_copy(c, p->host.handle, 0, p->dev.handle, 0, size,
				   NULL, 0, &out, 1, NULL))
			return fail("submit COPY");
		st = rk_syncobj_status(c, so, 0, rk_now_ns() + TIMEOUT_NS);
		if (st) {
			fprintf(stderr, "latency: COPY job %d: %s\n", i, strerror(-st));
			return 1;
		}
		t[i] = rk_now_ns() - t0;
	}
	rk_syncobj_destroy(c, so);
	return 0;
}

/* bench_chain() - @n jobs chained on a timeline syncobj; *total_ns. 0 or 1. */
static int bench_chain(struct rk_card *c, struct copy_pair *p, uint64_t size,
		       int n, int64_t *total_ns)
{
	uint32_t tl;
	int64_t t0;
	int i, st;

	if (rk_syncobj_create(c, false, &tl))
		return fail("syncobj create");
	t0 = rk_now_ns();
	for (i = 0; i < n; i++) {
		struct rk_sync in = { tl, (uint64_t)i }, out = { tl, (uint64_t)i + 1 };

		if (rk_submit_copy(c, p->host.handle, 0, p->dev.handle, 0, size,
				   i ? &in : NULL, i ? 1 : 0, &out, 1, NULL))
			return fail("submit chained COPY");
	}
	st = rk_syncobj_status(c, tl, (uint64_t)n, rk_now_ns() + TIMEOUT_NS);
	*total_ns = rk_now_ns() - t0;
	rk_syncobj_destroy(c, tl);
	if (st) {
		fprintf(stderr, "latency: chained COPY: %s\n", strerror(-st));
		return 1;
	}
	return 0;
}

/*
 * bench_cross() - @n jobs round-robin over @nc cards, each waiting for the
 * previous one through a sync_file; *total_ns. 0 or 1.
 */
static int bench_cross(struct rk_card *cards, struct copy_pair *pairs, int nc,
		       uint64_t size, int n, int64_t *total_ns)
{
	uint32_t so[8][2];
	int64_t t0;
	int i, k, st, prev_fd = -1;

	for (k = 0; k < nc; k++)
		if (rk_syncobj_create(&cards[k], false, &so[k][0]) ||
		    rk_syncobj_create(&cards[k], false, &so[k][1]))
			return fail("syncobj create");
	t0 = rk_now_ns();
	for (i = 0; i < n; i++) {
		struct rk_card *c = &cards[i % nc];
		struct rk_sync in = { so[i % nc][0], 0 }, out = { so[i % nc][1], 0 };
		int fd;

		if (prev_fd >= 0) {
			if (rk_syncobj_import_sync_file(c, in.handle, 0, prev_fd))
				return fail("import sync_file");
			close(prev_fd);
			prev_fd = -1;
		}
		if (rk_submit_copy(c, pairs[i % nc].host.handle, 0, pairs[i % nc].dev.handle,
				   0, size, i ? &in : NULL, i ? 1 : 0, &out, 1, NULL))
			return fail("submit cross-card COPY");
		if (rk_syncobj_export_sync_file(c, out.handle, 0, &fd))
			return fail("export sync_file");
		prev_fd = fd;
	}
	st = rk_sync_file_wait(prev_fd, rk_now_ns() + TIMEOUT_NS);
	*total_ns = rk_now_ns() - t0;
	close(prev_fd);
	for (k = 0; k < nc; k++) {
		rk_syncobj_destroy(&cards[k], so[k][0]);
		rk_syncobj_destroy(&cards[k], so[k][1]);
	}
	if (st) {
		fprintf(stderr, "latency: cross-card chain: %s\n", strerror(-st));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct copy_pair pairs[8];
	struct rk_card *cards;
	char path[PATH_MAX + 8];
	int64_t rtt[2 * ROUNDS], *t, ns, chain_ns = 0, cross_ns = 0;
	uint64_t size = 4096;
	int n = 200, per, nc, ncross, i, r, rc = 1;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size = strtoull(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: latency [-n ITERATIONS] [--size BYTES]\n");
			return 1;
		}
	}
	if (n < 10 * ROUNDS || n > 100000 || size == 0 || size > (64u << 20)) {
		fprintf(stderr, "latency: need %d <= n <= 100000 and 0 < size <= 64 MiB\n",
			10 * ROUNDS);
		return 1;
	}
	per = n / ROUNDS;
	n = per * ROUNDS;
	t = calloc(n, sizeof(*t));
	if (!t)
		return 1;
	if (rk_open_all(&cards, &nc)) {
		fprintf(stderr, "latency: %s\n", rk_error());
		free(t);
		return 1;
	}
	ncross = nc > 8 ? 8 : nc;
	memset(pairs, 0, sizeof(pairs));
	for (i = 0; i < ncross; i++)
		if (pair_create(&cards[i], size, &pairs[i])) {
			fail("create BOs");
			goto out;
		}
	if (ping_path(&cards[0], path, sizeof(path)))
		goto out;

	/* Warm-up: first jobs pay for scheduler and card state set-up. */
	if (bench_single(&cards[0], &pairs[0], size, 10, t))
		goto out;
	/*
	 * Interleaved rounds: the shared host's load drifts, and every figure
	 * should see the same drift.
	 */
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < 2; i++) {
			rtt[2 * r + i] = ping_once(path);
			if (rtt[2 * r + i] <= 0)
				goto out;
		}
		if (bench_single(&cards[0], &pairs[0], size, per, t + r * per))
			goto out;
		if (bench_chain(&cards[0], &pairs[0], size, per, &ns))
			goto out;
		chain_ns += ns;
		if (ncross > 1) {
			if (bench_cross(cards, pairs, ncross, size, per, &ns))
				goto out;
			cross_ns += ns;
		}
	}
	qsort(rtt, 2 * ROUNDS, sizeof(rtt[0]), cmp_i64);
	qsort(t, n, sizeof(*t), cmp_i64);

	printf("cards %d\n", nc);
	printf("copy_bytes %llu\n", (unsigned long long)size);
	printf("iterations %d\n", n);
	printf("raw_rtt_us %lld\n", (long long)pct(rtt, 2 * ROUNDS, 50));
	printf("raw_rtt_min_us %lld\n", (long long)rtt[0]);
	printf("raw_rtt_max_us %lld\n", (long long)rtt[2 * ROUNDS - 1]);
	printf("job_median_us %.1f\n", pct(t, n, 50) / 1e3);
	printf("job_p10_us %.1f\n", pct(t, n, 10) / 1e3);
	printf("job_p90_us %.1f\n", pct(t, n, 90) / 1e3);
	for (ns = 0, i = 0; i < n; i++)
		ns += t[i];
	printf("job_mean_us %.1f\n", ns / 1e3 / n);
	printf("chain_per_job_us %.1f\n", chain_ns / 1e3 / n);
	if (ncross > 1)
		printf("cross_chain_per_job_us %.1f\n", cross_ns / 1e3 / n);
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "latency: failed\n");
	for (i = 0; i < ncross; i++)
		pair_destroy(&cards[i], &pairs[i]);
	rk_close_all(cards, nc);
	free(t);
	return rc;
}
