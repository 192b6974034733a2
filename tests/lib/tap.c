// SPDX-License-Identifier: MIT
#include "tap.h"

#include <stdarg.h>
#include <stdio.h>

static int tap_pass, tap_fail;

bool tap_ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", tap_pass + tap_fail + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (cond)
		tap_pass++;
	else
		tap_fail++;
	return cond;
}

int tap_failed(void)
{
	return tap_fail;
}

int tap_done(void)
{
	printf("1..%d\n# %d passed, %d failed\n", tap_pass + tap_fail, tap_pass, tap_fail);
	fflush(stdout);
	return tap_fail ? 1 : 0;
}
