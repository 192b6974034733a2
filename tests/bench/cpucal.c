// SPDX-License-Identifier: MIT
/*
 * cpucal: a fixed single-threaded CPU workload, to compare the speed of the
 * TCG guest's CPU with the host's (tests/run-bench runs it on both sides).
 *
 *   cpucal [ROUNDS]
 *
 * The workload mixes what the runtime's host side does per step: integer
 * hashing, float multiply-adds over a 64 KiB array and memcpy. It runs
 * ROUNDS (default 5) times; prints "cpucal_ms M" with the fastest round in
 * milliseconds (the least disturbed by other load) and "cpucal_check X" (a
 * checksum, so the compiler cannot drop the work). Exit status 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk1828/util.h"

#define N 16384

/* one_round() - the fixed workload; returns a checksum. */
static float one_round(float *a, const float *b)
{
	static float c[N];
	uint32_t h = 2166136261u;
	float acc = 0;
	int it, i;

	for (it = 0; it < 400; it++) {
		for (i = 0; i < N; i++) {
			h = (h ^ (uint32_t)i) * 16777619u;
			a[i] = a[i] * 0.999f + b[i] * (float)(h & 0xff) * (1.0f / 256);
			acc += a[i];
		}
		memcpy(c, a, sizeof(*a) * N);
		acc -= c[h % N];
	}
	return acc;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5, r;
	float *a = calloc(N, sizeof(*a)), *b = calloc(N, sizeof(*b));
	double best = 1e30;
	float check = 0;

	if (!a || !b || rounds < 1) {
		fprintf(stderr, "usage: cpucal [ROUNDS >= 1]\n");
		return 1;
	}
	for (r = 0; r < N; r++)
		b[r] = 1.0f;
	for (r = 0; r < rounds; r++) {
		double t0 = util_now_ms(), dt;

		check += one_round(a, b);
		dt = util_now_ms() - t0;
		if (dt < best)
			best = dt;
	}
	printf("cpucal_ms %.2f\n", best);
	printf("cpucal_check %g\n", check);
	free(a);
	free(b);
	return 0;
}
