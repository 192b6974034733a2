// SPDX-License-Identifier: MIT
/*
 * The engine's shape options (userspace/engine/engine_opts.c), the one
 * parser of --parallel, --ctx and --bucket for rk1828-llm run, chat, plan,
 * bench and serve: the values at the ends of each range are taken, those
 * past them and non-numbers are refused with the option, the value and
 * the range. Output: TAP.
 */
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "engine_opts.h"

#include "tap.h"

int main(void)
{
	static const struct {
		enum engine_opt opt;
		const char *arg;
		int ret;
		uint32_t val;
		const char *msg;
	} c[] = {
		{ ENGINE_OPT_PARALLEL, "1", 0, 1, NULL },
		{ ENGINE_OPT_PARALLEL, "64", 0, ENGINE_MAX_SLOTS, NULL },
		{ ENGINE_OPT_PARALLEL, "65", -1, 0, "--parallel: bad value \"65\" (an integer 1..64)" },
		{ ENGINE_OPT_PARALLEL, "0", -1, 0, "--parallel: bad value \"0\" (an integer 1..64)" },
		{ ENGINE_OPT_CTX, "4096", 0, 4096, NULL },
		{ ENGINE_OPT_CTX, "2147483647", 0, 2147483647u, NULL },
		{ ENGINE_OPT_CTX, "2147483648", -1, 0,
		  "--ctx: bad value \"2147483648\" (an integer 1..2147483647)" },
		{ ENGINE_OPT_CTX, "0", -1, 0, "--ctx: bad value \"0\" (an integer 1..2147483647)" },
		{ ENGINE_OPT_CTX, "12k", -1, 0, "--ctx: bad value \"12k\" (an integer 1..2147483647)" },
		{ ENGINE_OPT_BUCKET, "128", 0, 128, NULL },
		{ ENGINE_OPT_BUCKET, "", -1, 0, "--bucket: bad value \"\" (an integer 1..2147483647)" },
		{ ENGINE_OPT_BUCKET, "-1", -1, 0, "--bucket: bad value \"-1\" (an integer 1..2147483647)" },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char err[128] = "";
		uint32_t v = 7;
		int ret = engine_opt_parse(c[i].opt, c[i].arg, &v, err, sizeof(err));

		if (!c[i].msg)
			tap_ok(ret == 0 && v == c[i].val, "option %d \"%s\" is %u (got %d, %u)",
			       c[i].opt, c[i].arg, c[i].val, ret, v);
		else
			tap_ok(ret == -1 && v == 7 && !strcmp(err, c[i].msg),
			       "option %d \"%s\" is refused: %s", c[i].opt, c[i].arg, err);
	}
	return tap_done();
}
