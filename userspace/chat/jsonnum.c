// SPDX-License-Identifier: MIT
/*
 * Number ranges of JSON schemas (jsonmatch_int.h, struct jm_node's @lo,
 * @hi, @step): minimum, maximum, exclusiveMinimum, exclusiveMaximum
 * (numbers, or draft 4's booleans next to minimum/maximum) and
 * multipleOf, on type integer and type number, as exact fixed-point
 * bounds on the grid of what the matcher generates.
 *
 * Validators (ajv, Python's jsonschema, pydantic) compare the document's
 * number read as a binary double with the bound read the same way, so a
 * bound is taken as the shortest decimal that reads back as its double,
 * and an exclusive bound b as the inclusive bound of the double next to b
 * (nextafter()): a decimal at or beyond that reads as a double at or
 * beyond it, so every generated number passes in double arithmetic too
 * (the numbers between the two doubles, which a validator may round onto
 * b, are not generated). multipleOf is taken when it is exact in binary
 * (an integer, or a multiple of 2^-16 such as 0.5 or 0.125) and the
 * values are kept within 2^53 times its binary scale, where a double
 * holds them exactly and the quotient x / multipleOf is exact; a decimal
 * multipleOf such as 0.01 is refused, since validators' floating-point
 * tests disagree on it (0.3 / 0.1 is 2.9999999999999996).
 */
#include "jsonmatch_int.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P(k)	((jm_fix)k##LL)
static const jm_fix pow10_tab[] = {
	P(1), P(10), P(100), P(1000), P(10000), P(100000), P(1000000), P(10000000),
	P(100000000), P(1000000000), P(10000000000), P(100000000000), P(1000000000000),
	P(10000000000000), P(100000000000000), P(1000000000000000), P(10000000000000000),
	P(100000000000000000), P(1000000000000000000),
};
#undef P

jm_fix jm_pow10(int k)
{
	if (k <= 18)
		return pow10_tab[k];
	return pow10_tab[18] * pow10_tab[k - 18];	/* k <= 36 */
}

/* Beyond every generated magnitude (10^16 in the integer part). */
#define FIX_LIMIT	(jm_pow10(32))

static jm_fix fix_fdiv(jm_fix a, jm_fix b)	/* floor(a / b), b > 0 */
{
	jm_fix q = a / b;

	return (a % b < 0) ? q - 1 : q;
}

static jm_fix ceil_to(jm_fix a, jm_fix g)
{
	return -fix_fdiv(-a, g) * g;
}

static jm_fix floor_to(jm_fix a, jm_fix g)
{
	return fix_fdiv(a, g) * g;
}

bool jm_num_span(const struct jm_node *n, jm_fix a, jm_fix b)
{
	if (a < n->lo)
		a = n->lo;
	if (b > n->hi)
		b = n->hi;
	if (a > b)
		return false;
	return n->step <= 1 || floor_to(b, n->step) >= a;
}

bool jm_num_ok(const struct jm_node *n, jm_fix v)
{
	return v >= n->lo && v <= n->hi && (n->step <= 1 || v % n->step == 0);
}

/* The shortest "%e" text of @v that reads back as @v. */
static void shortest(double v, char *buf, size_t len)
{
	int p;

	for (p = 1; p <= 17; p++) {
		snprintf(buf, len, "%.*e", p - 1, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* The decimal @s ("-d.ddde+x") in fixed point, rounded up or down, within +-FIX_LIMIT. */
static jm_fix dec_fix(const char *s, bool up)
{
	jm_fix d = 0, q, r, p;
	bool neg = *s == '-';
	int nd = 0, e;

	if (neg || *s == '+')
		s++;
	for (; *s && *s != 'e' && *s != 'E'; s++)
		if (*s >= '0' && *s <= '9') {
			d = d * 10 + (*s - '0');
			nd++;
		}
	e = (*s ? atoi(s + 1) : 0) - nd + 1 + 16;
	if (!d)
		return 0;
	if (e >= 0) {
		if (e > 32 || d > FIX_LIMIT / jm_pow10(e))
			return neg ? -FIX_LIMIT : FIX_LIMIT;
		return neg ? -d * jm_pow10(e) : d * jm_pow10(e);
	}
	if (-e > 36) {
		q = 0;
		r = 1;
	} else {
		p = jm_pow10(-e);
		q = d / p;
		r = d % p;
	}
	/* Up is away from zero for a positive value, toward it for a negative one. */
	if (r && up != neg)
		q++;
	return neg ? -q : q;
}

/* A bound @v (a JSON number) as an inclusive fixed-point bound: a lower one when @low. */
static jm_fix bound(const json_t *v, bool low, bool exclusive)
{
	char buf[40];
	double d;

	if (json_is_integer(v) && !exclusive) {
		json_int_t i = json_integer_value(v);

		if (i > 10000000000000000LL || i < -10000000000000000LL)
			return i < 0 ? -FIX_LIMIT : FIX_LIMIT;
		return (jm_fix)i * JM_FIX_ONE;
	}
	d = json_number_value(v);
	if (exclusive)
		d = nextafter(d, low ? INFINITY : -INFINITY);
	if (isinf(d))
		return d < 0 ? -FIX_LIMIT : FIX_LIMIT;
	shortest(d, buf, sizeof(buf));
	return dec_fix(buf, low);
}

/* The fixed-point value @v as decimal text (at most 34 bytes) into @buf. */
static const char *fix_str(jm_fix v, char *buf, size_t len)
{
	unsigned long long hi, lo;
	jm_fix a = v < 0 ? -v : v;
	size_t k;

	hi = (unsigned long long)(a / JM_FIX_ONE);
	lo = (unsigned long long)(a % JM_FIX_ONE);
	snprintf(buf, len, "%s%llu.%016llu", v < 0 ? "-" : "", hi, lo);
	k = strlen(buf);
	while (buf[k - 1] == '0')
		buf[--k] = '\0';
	if (buf[k - 1] == '.')
		buf[--k] = '\0';
	return buf;
}

/* multipleOf @m into n->step (x 10^16) and the magnitude it is exact up to; 0 or -1. */
static int multiple(const json_t *m, struct jm_node *n, jm_fix *lim, char *err, size_t errlen)
{
	double d = json_is_number(m) ? json_number_value(m) : -1, t;
	jm_fix g, a, b;
	int e;

	if (!(d > 0)) {
		snprintf(err, errlen, "'multipleOf' must be a number above 0");
		return -1;
	}
	for (e = 0; e <= 16; e++)
		if (ldexp(d, e) == floor(ldexp(d, e)))
			break;
	if (e > 16 || d > 1e16) {
		snprintf(err, errlen, "'multipleOf' %g is not supported: only integers and multiples of 2^-16 (0.5, 0.25, ...) are exact in the binary floating point validators use",
			 d);
		return -1;
	}
	/* d x 10^16 = (d x 2^16) x 5^16, an integer. */
	t = ldexp(d, 16);
	g = (jm_fix)t * (jm_fix)152587890625LL;
	*lim = (jm_fix)(1LL << (53 - e)) * JM_FIX_ONE;
	if (n->types & JT_NUM) {
		n->step = g;
		return 0;
	}
	/* Integers: multiples of lcm(1, multipleOf), in fixed point lcm(10^16, g). */
	a = g;
	b = JM_FIX_ONE;
	while (b) {
		jm_fix r = a % b;

		a = b;
		b = r;
	}
	b = JM_FIX_ONE / a;
	n->step = g > FIX_LIMIT / b ? FIX_LIMIT : g * b;	/* beyond: only 0 */
	return 0;
}

int jm_num_compile(const json_t *o, struct jm_node *n, char *err, size_t errlen)
{
	static const char *const kw[] = { "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum" };
	const json_t *v[4], *mo = json_object_get(o, "multipleOf");
	const json_t *ex[2] = { json_object_get(o, "exclusiveMinimum"),
				json_object_get(o, "exclusiveMaximum") };
	bool integer = !(n->types & JT_NUM);
	jm_fix lim = FIX_LIMIT, x;
	char a[48], b[48];
	int i;

	for (i = 0; i < 4; i++) {
		v[i] = json_object_get(o, kw[i]);
		if (i >= 2 && json_is_boolean(v[i]))
			v[i] = NULL;	/* draft 4: modifies minimum / maximum */
		if (v[i] && !json_is_number(v[i])) {
			snprintf(err, errlen, "'%s' must be a number", kw[i]);
			return -1;
		}
	}
	if (!v[0] && !v[1] && !v[2] && !v[3] && !mo)
		return 0;
	n->has_range = true;
	n->lo = -FIX_LIMIT;
	n->hi = FIX_LIMIT;
	n->step = integer ? JM_FIX_ONE : 1;
	if (mo && multiple(mo, n, &lim, err, errlen))
		return -1;
	for (i = 0; i < 4; i++) {
		bool low = !(i & 1), exclusive = i >= 2 || json_is_true(ex[i & 1]);

		if (!v[i])
			continue;
		x = bound(v[i], low, exclusive);
		if (low && x > n->lo)
			n->lo = x;
		if (!low && x < n->hi)
			n->hi = x;
	}
	if (n->lo < -lim)
		n->lo = -lim;
	if (n->hi > lim)
		n->hi = lim;
	n->lo = ceil_to(n->lo, n->step);
	n->hi = floor_to(n->hi, n->step);
	if (n->lo > n->hi) {
		snprintf(err, errlen, "no %s is within 'minimum'/'maximum'%s (%s > %s)",
			 integer ? "integer" : "number", mo ? "/'multipleOf'" : "",
			 fix_str(n->lo, a, sizeof(a)), fix_str(n->hi, b, sizeof(b)));
		return -1;
	}
	return 0;
}
