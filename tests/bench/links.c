// SPDX-License-Identifier: MIT
/*
 * links: the PCIe link against the USB link, side by side (run in the
 * guest by tests/bench/guest-bench links, on a tools/vm-run --transport
 * mixed boot; needs root for debugfs).
 *
 *   links [-r ROUNDS] [-n JOBS]
 *
 * Takes the first PCIe card and the first USB card (librk1828 order) and,
 * in ROUNDS interleaved rounds (default 5; each round measures both links
 * one after the other, so the shared host's load drifts hit both alike):
 *  - raw: one read of debugfs "ping" (32 INFO round trips timed in the
 *    kernel, no ioctl, scheduler or fence in the way);
 *  - job: JOBS / ROUNDS times (default 100 jobs) a 4 KiB host->card COPY
 *    submitted with an out-syncobj and waited for; the median;
 *  - bandwidth: a COPY of 64 KiB, 256 KiB, 1 MiB, 4 MiB and 8 MiB, host to
 *    card and card to host, each size repeated until it moved at least
 *    16 MiB; MB/s (10^6 bytes per second) of the submit-to-wake time.
 * Output: "key value" lines, e.g. "pcie_raw_rtt_us 310" (the median over
 * the rounds) and "pcie_raw_rtt_us_all 300,310,..." (each round's value,
 * for ratios of neighbours in time); keys are <link>_raw_rtt_us,
 * <link>_job_us, <link>_h2c_<size>_mbps and <link>_c2h_<size>_mbps with
 * <link> "pcie" or "usb" and <size> "64k", "256k", "1m", "4m", "8m".
 * Exit status 0, or 1 when a link is missing or an operation fails.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rk1828.h"

#define TIMEOUT_NS	(30LL * 1000000000LL)
#define MAX_ROUNDS	15
#define N_SIZES		5
#define BW_MIN_BYTES	(16u << 20)

static const uint64_t sizes[N_SIZES] = {
	64u << 10, 256u << 10, 1u << 20, 4u << 20, 8u << 20,
};
static const char *const size_names[N_SIZES] = { "64k", "256k", "1m", "4m", "8m" };

/**
 * struct link - one card of one link and its results
 * @name: "pcie" or "usb"
 * @card: the card
 * @ping: its debugfs ping file
 * @host: host BO, 8 MiB, mapped
 * @dev: card BO, 8 MiB
 * @so: syncobj the jobs signal
 * @rtt: raw round trip per round, us
 * @job: median 4 KiB COPY per round, us
 * @h2c: host->card MB/s per size and round
 * @c2h: card->host MB/s per size and round
 */
struct link {
	const char *name;
	struct rk_card *card;
	char ping[PATH_MAX + 8];
	struct rk_bo host, dev;
	uint32_t so;
	double rtt[MAX_ROUNDS], job[MAX_ROUNDS];
	double h2c[N_SIZES][MAX_ROUNDS], c2h[N_SIZES][MAX_ROUNDS];
};

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* median() - of v[0..n) (the lower middle for even n); v is reordered. */
static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return v[(n - 1) / 2];
}

/* ping_path() - /sys/kernel/debug/accel/<dev>/ping of card @c; 0 or -1. */
static int ping_path(const struct rk_card *c, char *buf, size_t len)
{
	char link[96], target[256];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/sys/class/accel/accel%d/device", c->minor);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return -1;
	target[n] = 0;
	base = strrchr(target, '/');
	snprintf(buf, len, "/sys/kernel/debug/accel/%s/ping", base ? base + 1 : target);
	return 0;
}

/* ping_once() - one round trip in us from one read of @path, or -1. */
static double ping_once(const char *path)
{
	char line[128] = "";
	long long us;
	int nrt;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "links: %s: %s (debugfs mounted? root?)\n", path, strerror(errno));
		return -1;
	}
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "%d INFO round trips: %lld us each", &nrt, &us) != 2) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return (double)us;
}

/* copy_once() - one COPY submitted and waited for; ns, or -1. */
static int64_t copy_once(struct link *l, bool to_card, uint64_t size)
{
	struct rk_sync out = { l->so, 0 };
	int64_t t0 = rk_now_ns();
	int st;

	if (to_card)
		st = rk_submit_copy(l->card, l->host.handle, 0, l->dev.handle, 0, size,
				    NULL, 0, &out, 1, NULL);
	else
		st = rk_submit_copy(l->card, l->dev.handle, 0, l->host.handle, 0, size,
				    NULL, 0, &out, 1, NULL);
	if (st) {
		fprintf(stderr, "links: %s: submit: %s\n", l->name, rk_error());
		return -1;
	}
	st = rk_syncobj_status(l->card, l->so, 0, rk_now_ns() + TIMEOUT_NS);
	if (st) {
		fprintf(stderr, "links: %s: COPY of %llu bytes: %s\n", l->name,
			(unsigned long long)size, strerror(-st));
		return -1;
	}
	return rk_now_ns() - t0;
}

/* round_one() - every figure of round @r on link @l; 0 or -1. */
static int round_one(struct link *l, int r, int jobs)
{
	double t[1000];
	int i, s, dir;

	l->rtt[r] = ping_once(l->ping);
	if (l->rtt[r] <= 0)
		return -1;
	for (i = 0; i < jobs; i++) {
		int64_t ns = copy_once(l, true, 4096);

		if (ns < 0)
			return -1;
		t[i] = ns / 1e3;
	}
	l->job[r] = median(t, jobs);
	for (s = 0; s < N_SIZES; s++) {
		for (dir = 0; dir < 2; dir++) {
			uint64_t moved = 0;
			int64_t total = 0;

			while (moved < BW_MIN_BYTES) {
				int64_t ns = copy_once(l, dir == 0, sizes[s]);

				if (ns < 0)
					return -1;
				total += ns;
				moved += sizes[s];
			}
			(dir ? l->c2h : l->h2c)[s][r] = moved * 1e3 / total;
		}
	}
	return 0;
}

/* report() - "<link>_<key> median" and "<link>_<key>_all v1,v2,...". */
static void report(const char *link, const char *key, const double *v, int n,
		   int decimals)
{
	double tmp[MAX_ROUNDS];
	int i;

	memcpy(tmp, v, n * sizeof(*v));
	printf("%s_%s %.*f\n%s_%s_all ", link, key, decimals, median(tmp, n), link, key);
	for (i = 0; i < n; i++)
		printf("%s%.*f", i ? "," : "", decimals, v[i]);
	printf("\n");
}

static int link_setup(struct link *l)
{
	if (ping_path(l->card, l->ping, sizeof(l->ping)) ||
	    rk_bo_create(l->card, sizes[N_SIZES - 1], RK_BO_HOST, &l->host) ||
	    rk_bo_mmap(l->card, &l->host) ||
	    rk_bo_create(l->card, sizes[N_SIZES - 1], RK_BO_CARD, &l->dev) ||
	    rk_syncobj_create(l->card, false, &l->so)) {
		fprintf(stderr, "links: %s: set-up: %s\n", l->name, rk_error());
		return -1;
	}
	memset(l->host.map, 0x5a, sizes[N_SIZES - 1]);
	return 0;
}

int main(int argc, char **argv)
{
	struct link links[2] = { { .name = "pcie" }, { .name = "usb" } };
	struct rk_card *cards;
	int rounds = 5, jobs = 100, nc, i, r, s, rc = 1;
	char key[32];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-r") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			jobs = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: links [-r ROUNDS] [-n JOBS]\n");
			return 1;
		}
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || jobs < rounds || jobs / rounds > 1000) {
		fprintf(stderr, "links: need 1 <= ROUNDS <= %d and ROUNDS <= JOBS <= 1000 * ROUNDS\n",
			MAX_ROUNDS);
		return 1;
	}
	jobs /= rounds;
	if (rk_open_all(&cards, &nc)) {
		fprintf(stderr, "links: %s\n", rk_error());
		return 1;
	}
	for (i = 0; i < nc; i++) {
		struct link *l = cards[i].link_type == RK_LINK_PCIE ? &links[0] :
				 cards[i].link_type == RK_LINK_USB ? &links[1] : NULL;

		if (l && !l->card)
			l->card = &cards[i];
	}
	if (!links[0].card || !links[1].card) {
		fprintf(stderr, "links: needs a PCIe card and a USB card (tools/vm-run --transport mixed)\n");
		goto out;
	}
	if (link_setup(&links[0]) || link_setup(&links[1]))
		goto out;
	/* warm-up */
	if (round_one(&links[0], 0, 1) || round_one(&links[1], 0, 1))
		goto out;
	for (r = 0; r < rounds; r++)
		for (i = 0; i < 2; i++)
			if (round_one(&links[(i + r) % 2], r, jobs))
				goto out;
	for (i = 0; i < 2; i++) {
		struct link *l = &links[i];

		printf("%s_card %d\n", l->name, l->card->minor);
		printf("%s_link_mbps %u\n", l->name, l->card->link_speed);
		report(l->name, "raw_rtt_us", l->rtt, rounds, 0);
		report(l->name, "job_us", l->job, rounds, 1);
		for (s = 0; s < N_SIZES; s++) {
			snprintf(key, sizeof(key), "h2c_%s_mbps", size_names[s]);
			report(l->name, key, l->h2c[s], rounds, 1);
			snprintf(key, sizeof(key), "c2h_%s_mbps", size_names[s]);
			report(l->name, key, l->c2h[s], rounds, 1);
		}
	}
	rc = 0;
out:
	for (i = 0; i < 2; i++) {
		if (!links[i].card)
			continue;
		rk_bo_destroy(links[i].card, &links[i].dev);
		rk_bo_destroy(links[i].card, &links[i].host);
	}
	rk_close_all(cards, nc);
	return rc;
}
