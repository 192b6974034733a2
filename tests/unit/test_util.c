// SPDX-License-Identifier: MIT
/*
 * Host unit tests of the shared helpers (include/rk1828/util.h): size
 * parsing (binary and decimal units, and the overflows and signs it must refuse), byte
 * formatting, argmax with ties and NaN, float bit casts and the clocks.
 * Prints TAP.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rk1828/util.h"

#include "tap.h"

static void test_parse_size(void)
{
	static const struct {
		const char *s;
		uint64_t v;
	} good[] = {
		{ "0", 0 }, { "4096", 4096 }, { "4k", 4096 }, { "512M", 512ULL << 20 },
		{ "5G", 5ULL << 30 }, { "5GiB", 5ULL << 30 },
		/* Decimal (SI) units are powers of 1000: 5GB was read as 5 GiB. */
		{ "5GB", 5000000000ULL }, { "1.5MB", 1500000 }, { "1kB", 1000 },
		{ "1KB", 1000 }, { "4.9GB", 4900000000ULL }, { "2TB", 2000000000000ULL },
		{ "0.000001TB", 1000000 }, { "18446744TB", 18446744000000000000ULL },
		{ "1.5MiB", 1572864 }, { "3KiB", 3072 }, { "1TiB", 1ULL << 40 },
		{ "4096B", 4096 },
		{ "2T", 2ULL << 40 }, { "16777215T", 16777215ULL << 40 },
		{ "18446744073709551615", UINT64_MAX },
		{ "4.9G", 5261334937ULL },	/* 4.9 * 2^30 = 5261334937.6, rounded down */
		{ "0.5K", 512 }, { "1.25MiB", 1310720 }, { "1.000001K", 1024 },
		{ "2.5t", 5ULL << 39 }, { "0.0G", 0 },
		{ "16777215.999999T", (16777215ULL << 40) + (999999ULL << 40) / 1000000 },
	};
	static const char *const bad[] = {
		"", "-1", "+1", " 1", "1 ", "0x10", "1X", "5Gi", "5iB", "G",
		"1.5XB", "-1G", "5Gb", "5gb", "5GIB", "5GiBB", "5BB", "1.5B", "B", "5 GB",
		"18446745TB",			/* over 2^64 once scaled by 10^12 */
		"4.9",				/* a fraction of a byte */
		"4.G", ".5G", "4..9G", "4.9.1G", "4,9G", "1.0000001G",	/* 7 decimals */
		"17179869185G",			/* 2^34 + 1 GiB: wrapped to 1 GiB */
		"16777216T",			/* 2^64 exactly */
		"18446744073709551616",		/* 2^64 */
		"99999999999999999999999",
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 12345;
		tap_ok(util_parse_size(good[i].s, &v) == 0 && v == good[i].v,
		       "parse_size \"%s\" = %llu (got %llu)", good[i].s,
		       (unsigned long long)good[i].v, (unsigned long long)v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 12345;
		tap_ok(util_parse_size(bad[i], &v) == -1 && v == 12345,
		       "parse_size \"%s\" refused, output untouched", bad[i]);
	}
}

static void test_fmt_bytes(void)
{
	char b[32];

	util_fmt_bytes(b, sizeof(b), 512);
	tap_ok(!strcmp(b, "512 B"), "fmt_bytes 512 = \"%s\"", b);
	util_fmt_bytes(b, sizeof(b), 0);
	tap_ok(!strcmp(b, "0 B"), "fmt_bytes 0 = \"%s\"", b);
	util_fmt_bytes(b, sizeof(b), 1023);
	tap_ok(!strcmp(b, "1023 B"), "fmt_bytes 1023 = \"%s\"", b);
	util_fmt_bytes(b, sizeof(b), 1024 + 512);
	tap_ok(!strcmp(b, "1.5 KiB"), "fmt_bytes 1536 = \"%s\"", b);
	util_fmt_bytes(b, sizeof(b), UINT64_MAX);
	tap_ok(!strcmp(b, "17179869184.00 GiB"), "fmt_bytes 2^64-1 = \"%s\"", b);
	util_fmt_bytes(b, sizeof(b), 3ULL << 20);
	tap_ok(!strcmp(b, "3.00 MiB"), "fmt_bytes 3 MiB = \"%s\"", b);
	util_fmt_bytes(b, sizeof(b), (5ULL << 30) + (1ULL << 29));
	tap_ok(!strcmp(b, "5.50 GiB"), "fmt_bytes 5.5 GiB = \"%s\"", b);
}

static void test_argmax(void)
{
	const float a[] = { 1, 3, -2, 3, 0 };
	const float n[] = { NAN, -1, NAN, 2, 2, NAN };
	const float all_nan[] = { NAN, NAN };
	const float neg_inf[] = { -INFINITY, -INFINITY, -5 };

	tap_ok(util_argmax(a, 5) == 1, "argmax: first of equal maxima");
	tap_ok(util_argmax(n, 6) == 3, "argmax: NaN counts as -inf");
	tap_ok(util_argmax(all_nan, 2) == 0, "argmax: all NaN gives 0");
	tap_ok(util_argmax(neg_inf, 3) == 2, "argmax: -inf loses to a finite value");
	tap_ok(util_argmax(a, 1) == 0, "argmax: one element");
}

static void test_bits_and_clock(void)
{
	int64_t t0 = util_now_ns(), t1;
	double m0 = util_now_ms();

	tap_ok(util_f32_bits(1.0f) == 0x3f800000 && util_f32_bits(-2.5f) == 0xc0200000,
	       "f32_bits: 1.0 and -2.5");
	tap_ok(util_bits_f32(0x3f800000) == 1.0f && isnan(util_bits_f32(0x7fc00001)) &&
	       util_f32_bits(util_bits_f32(0x7fc00001)) == 0x7fc00001,
	       "bits_f32: 1.0 and a NaN payload kept");
	t1 = util_now_ns();
	tap_ok(t0 > 0 && t1 >= t0, "now_ns is monotonic (%lld -> %lld)",
	       (long long)t0, (long long)t1);
	/* read between the two: within them on the same clock, however slow */
	tap_ok(m0 >= t0 / 1e6 && m0 <= t1 / 1e6, "now_ms agrees with now_ns (%.6f in [%.6f, %.6f] ms)",
	       m0, t0 / 1e6, t1 / 1e6);
}

/* util_mul_u64() and util_add_u64(): exact below 2^64, saturated and reported above. */
static void test_checked(void)
{
	bool ok = true;
	uint64_t v;

	v = util_mul_u64(1ULL << 32, (1ULL << 32) - 1, &ok);
	tap_ok(ok && v == (1ULL << 32) * ((1ULL << 32) - 1), "util_mul_u64: 2^32 * (2^32 - 1) exact");
	v = util_mul_u64(1ULL << 32, 1ULL << 32, &ok);
	tap_ok(!ok && v == UINT64_MAX, "util_mul_u64: 2^32 * 2^32 saturates and clears ok");
	ok = true;
	v = util_mul_u64(util_mul_u64(UINT64_MAX, 2, &ok), 0, &ok);
	tap_ok(!ok && v == 0, "util_mul_u64: x * 0 is 0; the earlier overflow stays reported");
	ok = true;
	v = util_add_u64(UINT64_MAX - 1, 1, &ok);
	tap_ok(ok && v == UINT64_MAX, "util_add_u64: (2^64 - 2) + 1 exact");
	v = util_add_u64(util_mul_u64(3, 1ULL << 63, &ok), 1, &ok);
	tap_ok(!ok && v == UINT64_MAX, "util_add_u64: a saturated term stays saturated (3 * 2^63 + 1)");
	ok = true;
	v = util_add_u64(UINT64_MAX / 2 + 1, UINT64_MAX / 2 + 1, &ok);
	tap_ok(!ok && v == UINT64_MAX, "util_add_u64: 2^63 + 2^63 saturates");
}

int main(void)
{
	printf("TAP version 13\n");
	test_parse_size();
	test_fmt_bytes();
	test_argmax();
	test_bits_and_clock();
	test_checked();
	return tap_done();
}
