// SPDX-License-Identifier: MIT
/*
 * The engine's shape options (engine_opts.h): one table of names and
 * ranges, one parser.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine.h"
#include "engine_opts.h"
#include "quant.h"

static const struct {
	const char *name;
	uint32_t min, max;
} opts[] = {
	[ENGINE_OPT_PARALLEL] = { "--parallel", 1, ENGINE_MAX_SLOTS },
	[ENGINE_OPT_CTX] = { "--ctx", 1, 0x7fffffff },
	[ENGINE_OPT_BUCKET] = { "--bucket", 1, 0x7fffffff },
};

int engine_opt_parse(enum engine_opt opt, const char *arg, uint32_t *out, char *err,
		     size_t errlen)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || *end || end == arg || v < opts[opt].min || v > opts[opt].max) {
		snprintf(err, errlen, "%s: bad value \"%s\" (an integer %u..%u)", opts[opt].name,
			 arg, opts[opt].min, opts[opt].max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int engine_opt_arg(enum engine_opt opt, const char *arg, uint32_t *out)
{
	char err[128];

	if (engine_opt_parse(opt, arg, out, err, sizeof(err))) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		return -1;
	}
	return 0;
}

int engine_opt_kv_type(const char *arg, int *out)
{
	int t;

	if (quant_kv_type_parse(arg, &t)) {
		fprintf(stderr, "rk1828-llm: --kv-type: bad value \"%s\" (f32, f16, q8_0, q4_0 or auto)\n",
			arg);
		return -1;
	}
	*out = t;
	return 0;
}
