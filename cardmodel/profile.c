// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Card profile files (profile.h): a line parser for "key = value" with
 * '#' comments, a table of the keys with where each value goes, and the
 * built-in default (emulator/profiles/rk1828.conf embedded with the
 * assembler's .incbin; the Makefile makes this object depend on it).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile.h"

__asm__(".section .rodata\n.global card_profile_conf\n.balign 16\ncard_profile_conf:\n"
	".incbin \"emulator/profiles/rk1828.conf\"\n.byte 0\n.previous\n");
extern const char card_profile_conf[];

/* Largest profile file read (the real one is a few KiB). */
#define PROFILE_MAX_BYTES	(1 << 20)

enum kind { K_TEXT, K_U64, K_RATE, K_TIME };

/**
 * struct key - one profile key
 * @name: the key
 * @kind: K_TEXT (a string), K_U64 (bytes), K_RATE (> 0), K_TIME (>= 0)
 * @off: offset of the field in struct card_profile
 * @size: field size (K_TEXT: the buffer)
 * @optional: the key may be left out (its field stays 0)
 */
struct key {
	const char *name;
	enum kind kind;
	size_t off, size;
	bool optional;
};

#define F(k, kind, field) { k, kind, offsetof(struct card_profile, field), \
			    sizeof(((struct card_profile *)0)->field), false }
#define OPT(k, kind, field) { k, kind, offsetof(struct card_profile, field), \
			      sizeof(((struct card_profile *)0)->field), true }
static const struct key keys[] = {
	{ "profile.version", K_U64, offsetof(struct card_profile, version), sizeof(uint32_t), false },
	F("profile.name", K_TEXT, name),
	F("profile.revision", K_TEXT, revision),
	F("card.mem_bytes", K_U64, mem_bytes),
	F("card.mem_usable_bytes", K_U64, mem_usable_bytes),
	F("card.dram_bytes_per_s", K_RATE, dram_bw),
	F("npu.w4a16_flops_per_s", K_RATE, mm_rate[COST_PREC_W4A16]),
	F("npu.w8a16_flops_per_s", K_RATE, mm_rate[COST_PREC_W8A16]),
	F("npu.f16_flops_per_s", K_RATE, mm_rate[COST_PREC_F16]),
	F("npu.f32_flops_per_s", K_RATE, mm_rate[COST_PREC_F32]),
	F("npu.vector_ops_per_s", K_RATE, vec_rate),
	F("npu.job_ns", K_TIME, job_ns),
	F("npu.op_ns", K_TIME, op_ns),
	F("npu.op_row_ns", K_TIME, op_row_ns),
	OPT("npu.deltanet_ns", K_TIME, dn_ns),
	OPT("npu.deltanet_row_ns", K_TIME, dn_row_ns),
	F("link.usb.bytes_per_s", K_RATE, link[COST_LINK_USB].bytes_per_s),
	F("link.usb.latency_ns", K_TIME, link[COST_LINK_USB].latency_ns),
	F("link.pcie.bytes_per_s", K_RATE, link[COST_LINK_PCIE].bytes_per_s),
	F("link.pcie.latency_ns", K_TIME, link[COST_LINK_PCIE].latency_ns),
	F("power.idle_w", K_TIME, power_idle_w),
	F("power.busy_w", K_TIME, power_busy_w),
};
#undef F
#undef OPT
#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

static int perr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* Store @val for key @k into @p; -1 with a reason in @why. */
static int set_value(struct card_profile *p, const struct key *k, const char *val,
		     const char **why)
{
	char *field = (char *)p + k->off, *end;
	double d;

	if (k->kind == K_TEXT) {
		if (strlen(val) >= k->size) {
			*why = "text too long";
			return -1;
		}
		memcpy(field, val, strlen(val) + 1);
		return 0;
	}
	if (!*val || *val == '-' || *val == '+') {
		*why = "expected a number >= 0";
		return -1;
	}
	errno = 0;
	d = strtod(val, &end);
	if (*end || errno == ERANGE || !isfinite(d) || d < 0) {
		*why = "expected a finite number >= 0";
		return -1;
	}
	switch (k->kind) {
	case K_U64:
		if (d != floor(d) || d >= 18446744073709551616.0 ||
		    (k->size == sizeof(uint32_t) && d > UINT32_MAX)) {
			*why = "expected a whole number that fits the field";
			return -1;
		}
		if (k->size == sizeof(uint32_t))
			*(uint32_t *)field = (uint32_t)d;
		else
			*(uint64_t *)field = (uint64_t)d;
		return 0;
	case K_RATE:
		if (d <= 0) {
			*why = "a rate must be > 0";
			return -1;
		}
		/* fall through */
	default:
		*(double *)field = d;
		return 0;
	}
}

/* Cross-field rules, once every key is in. */
static int check_profile(const struct card_profile *p, const char *name, char *err,
			 size_t errlen)
{
	if (p->version != CARD_PROFILE_VERSION)
		return perr(err, errlen, "%s: profile.version %u, this program reads version %d",
			    name, p->version, CARD_PROFILE_VERSION);
	if (!p->mem_bytes || p->mem_usable_bytes > p->mem_bytes)
		return perr(err, errlen,
			    "%s: card.mem_usable_bytes must be at most card.mem_bytes (> 0)", name);
	if (p->power_busy_w < p->power_idle_w)
		return perr(err, errlen, "%s: power.busy_w is below power.idle_w", name);
	return 0;
}

int card_profile_parse(struct card_profile *out, const char *text, const char *name,
		       char *err, size_t errlen)
{
	struct card_profile p;
	bool seen[N_KEYS] = { false };
	const char *s = text;
	int line = 0;
	size_t i;

	memset(&p, 0, sizeof(p));
	while (*s) {
		char buf[512], *c, *eq, *key, *val;
		const char *nl = strchr(s, '\n'), *why = NULL;
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		line++;
		if (len >= sizeof(buf))
			return perr(err, errlen, "%s:%d: line too long", name, line);
		memcpy(buf, s, len);
		buf[len] = '\0';
		s += len + (nl ? 1 : 0);
		c = strchr(buf, '#');
		if (c)
			*c = '\0';
		key = trim(buf);
		if (!*key)
			continue;
		eq = strchr(key, '=');
		if (!eq)
			return perr(err, errlen, "%s:%d: expected 'key = value'", name, line);
		*eq = '\0';
		key = trim(key);
		val = trim(eq + 1);
		for (i = 0; i < N_KEYS && strcmp(keys[i].name, key); i++)
			;
		if (i == N_KEYS)
			return perr(err, errlen, "%s:%d: unknown key '%s'", name, line, key);
		if (seen[i])
			return perr(err, errlen, "%s:%d: '%s' given twice", name, line, key);
		if (set_value(&p, &keys[i], val, &why))
			return perr(err, errlen, "%s:%d: %s: %s", name, line, key, why);
		seen[i] = true;
	}
	for (i = 0; i < N_KEYS; i++)
		if (!seen[i] && !keys[i].optional)
			return perr(err, errlen, "%s: missing key '%s'", name, keys[i].name);
	if (check_profile(&p, name, err, errlen))
		return -1;
	*out = p;
	return 0;
}

int card_profile_load(struct card_profile *p, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat sb;
	FILE *f;
	char *buf;
	size_t n;
	int ret;

	/*
	 * Opened without blocking and checked before the first read, so a
	 * FIFO or a device given as the profile is refused instead of
	 * waiting forever for a writer.
	 */
	if (fd < 0)
		return perr(err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return perr(err, errlen, "%s: not a regular file", path);
	}
	f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return perr(err, errlen, "%s: %s", path, strerror(errno));
	}
	buf = malloc(PROFILE_MAX_BYTES + 1);
	if (!buf) {
		fclose(f);
		return perr(err, errlen, "%s: out of memory", path);
	}
	n = fread(buf, 1, PROFILE_MAX_BYTES + 1, f);
	if (ferror(f) || n > PROFILE_MAX_BYTES) {
		ret = perr(err, errlen, "%s: %s", path,
			   ferror(f) ? "read error" : "larger than 1 MiB, not a profile");
	} else if (memchr(buf, '\0', n)) {
		ret = perr(err, errlen, "%s: contains a NUL byte, not a text profile", path);
	} else {
		buf[n] = '\0';
		ret = card_profile_parse(p, buf, path, err, errlen);
	}
	free(buf);
	fclose(f);
	return ret;
}

const char *card_profile_builtin_text(void)
{
	return card_profile_conf;
}

int card_profile_builtin(struct card_profile *p, char *err, size_t errlen)
{
	return card_profile_parse(p, card_profile_conf, "built-in rk1828.conf", err, errlen);
}

double card_profile_power_w(const struct card_profile *p, double busy_ns, double window_ns)
{
	double u = window_ns > 0 ? busy_ns / window_ns : 0;

	if (u < 0)
		u = 0;
	if (u > 1)
		u = 1;
	return p->power_idle_w + (p->power_busy_w - p->power_idle_w) * u;
}
