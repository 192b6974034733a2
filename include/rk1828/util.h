/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Small helpers every userspace layer, the emulator and the tests share:
 * monotonic clocks, float bit casts, argmax, byte-size parsing and
 * formatting, and the one (err, errlen) error formatter. Header-only and
 * stateless (it needs only the C library), so
 * it sits at the bottom of the layering next to the format headers and no
 * layer has to link another's library for it.
 */
#ifndef RK1828_UTIL_H
#define RK1828_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/**
 * util_now_ns() - CLOCK_MONOTONIC time
 *
 * Return: nanoseconds since an arbitrary start (for intervals and the
 * absolute timeouts of the DRM syncobj and BO_WAIT ioctls).
 */
static inline int64_t util_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/**
 * util_now_ms() - CLOCK_MONOTONIC time in milliseconds
 *
 * Return: milliseconds (with fraction) since an arbitrary start.
 */
static inline double util_now_ms(void)
{
	return (double)util_now_ns() / 1e6;
}

/**
 * util_f32_bits() - the IEEE-754 bits of @f
 * @f: value
 *
 * Return: the 32 bits of @f, as stored (no conversion).
 */
static inline uint32_t util_f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

/**
 * util_bits_f32() - the float whose IEEE-754 bits are @u
 * @u: bits
 *
 * Return: the float (any NaN payload kept).
 */
static inline float util_bits_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/**
 * util_argmax() - index of the largest of @n floats
 * @v: values
 * @n: count (>= 1)
 *
 * NaN counts as -inf; ties go to the lowest index.
 *
 * Return: the index, 0 when every value is NaN or -inf.
 */
static inline size_t util_argmax(const float *v, size_t n)
{
	size_t i, best = 0;
	float bv = isnan(v[0]) ? -INFINITY : v[0];

	for (i = 1; i < n; i++) {
		if (v[i] > bv) {	/* false for NaN */
			bv = v[i];
			best = i;
		}
	}
	return best;
}

/*
 * UTIL_SIZE_HELP - what util_parse_size() accepts, for error messages and
 * --help texts.
 */
#define UTIL_SIZE_HELP "bytes, or a number (up to 6 decimals) and a unit: K, M, G, T " \
	"or KiB, MiB, GiB, TiB are powers of 1024, kB, MB, GB, TB powers of 1000 " \
	"(1.5MiB = 1572864, 1.5MB = 1500000)"

/**
 * util_parse_size() - parse a byte count such as "4096", "512M", "4.9G",
 * "5GiB" or "1.5MB"
 * @s: decimal digits, optionally a '.' and up to 6 more digits, optionally
 *	followed by a unit: "B" (bytes); K, M, G or T (either case) alone
 *	or followed by "iB", the binary (IEC 80000-13) multiples 1024^1..4;
 *	K, M, G or T followed by "B" ("kB", "MB", "GB", "TB"), the decimal
 *	(SI) multiples 1000^1..4, as disk and memory vendors and the
 *	metric prefixes mean them. A fraction needs a unit larger than a
 *	byte and is rounded down to a whole byte (4.9G = 5261334937,
 *	1.5MB = 1500000).
 * @out: the byte count on success, untouched on failure
 *
 * No sign, blanks or other unit is accepted ("5Gi", "5Gb", "1.5XB"); a
 * value that does not fit in 64 bits once scaled is an error, never a
 * wrapped number.
 *
 * Return: 0, or -1 for anything else (including the empty string).
 */
static inline int util_parse_size(const char *s, uint64_t *out)
{
	static const char prefixes[] = "kmgt";
	uint64_t v = 0, frac = 0, den = 1, mult = 1, whole, part;
	const char *p = s, *k;
	int i;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return -1;
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (den == 1000000)
				return -1;
			frac = frac * 10 + (uint64_t)(*p - '0');
			den *= 10;
		}
	}
	k = *p ? strchr(prefixes, *p | 0x20) : NULL;
	if (k) {
		/* "B": decimal (SI) multiples; nothing or "iB": binary. */
		unsigned int base = p[1] == 'B' ? 1000 : 1024;

		for (i = 0; i <= k - prefixes; i++)
			mult *= base;
		p += p[1] == 'B' ? 2 : p[1] == 'i' && p[2] == 'B' ? 3 : 1;
	} else if (*p == 'B') {
		p++;
	}
	if (*p || (den > 1 && mult == 1) || v > UINT64_MAX / mult)
		return -1;
	/* frac < 10^6 < 2^20 and mult <= 2^40: frac * mult fits. */
	whole = v * mult;
	part = frac * mult / den;
	if (whole > UINT64_MAX - part)
		return -1;
	*out = whole + part;
	return 0;
}

/**
 * util_mul_u64() - @a * @b, saturating
 * @a: a factor
 * @b: the other factor
 * @ok: cleared when the product does not fit in 64 bits (NULL: not reported)
 *
 * For byte sizes computed from file or command-line values: a product
 * that overflows becomes UINT64_MAX, which no card memory holds, and
 * UINT64_MAX stays UINT64_MAX through util_mul_u64() and util_add_u64(),
 * so a size never wraps to a small number.
 *
 * Return: the product, or UINT64_MAX.
 */
static inline uint64_t util_mul_u64(uint64_t a, uint64_t b, bool *ok)
{
	uint64_t r;

	if (!a || !b)
		return 0;
	if (a == UINT64_MAX || b == UINT64_MAX || __builtin_mul_overflow(a, b, &r)) {
		if (ok)
			*ok = false;
		return UINT64_MAX;
	}
	return r;
}

/**
 * util_add_u64() - @a + @b, saturating at UINT64_MAX like util_mul_u64()
 * @a: a term
 * @b: the other term
 * @ok: cleared when the sum does not fit in 64 bits (NULL: not reported)
 *
 * Return: the sum, or UINT64_MAX (and *@ok cleared when @ok is not NULL).
 */
static inline uint64_t util_add_u64(uint64_t a, uint64_t b, bool *ok)
{
	uint64_t r;

	if (a == UINT64_MAX || b == UINT64_MAX || __builtin_add_overflow(a, b, &r)) {
		if (ok)
			*ok = false;
		return UINT64_MAX;
	}
	return r;
}

/**
 * util_fmt_bytes() - "1.50 GiB", "12.00 MiB", "3.0 KiB" or "512 B": the
 * largest binary unit the value reaches, so a small size never prints as
 * "0.00 GiB" or "0.0 KiB"
 * @buf: output
 * @n: size of @buf (24 bytes always suffice)
 * @b: byte count
 */
static inline void util_fmt_bytes(char *buf, size_t n, uint64_t b)
{
	if (b >= (1ULL << 30))
		snprintf(buf, n, "%.2f GiB", (double)b / (1ULL << 30));
	else if (b >= (1ULL << 20))
		snprintf(buf, n, "%.2f MiB", (double)b / (1ULL << 20));
	else if (b >= 1024)
		snprintf(buf, n, "%.1f KiB", (double)b / 1024);
	else
		snprintf(buf, n, "%u B", (unsigned int)b);
}

/**
 * util_err() - format an error message into a caller's buffer
 * @err: buffer for the message (may be NULL)
 * @errlen: size of @err in bytes (0: nothing is written)
 * @ret: value to return
 * @fmt: printf format of the message
 *
 * The one helper behind every function of the project that reports errors
 * through an (err, errlen) pair: writes the NUL-terminated, truncated
 * message when there is room for it, so a caller may pass NULL, 0.
 *
 * Return: @ret, so that a failing path can read
 * ``return util_err(err, errlen, -EINVAL, "...", ...);``.
 */
static inline int __attribute__((format(printf, 4, 5)))
util_err(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

#endif /* RK1828_UTIL_H */
