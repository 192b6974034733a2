/* SPDX-License-Identifier: MIT */
/*
 * Minimal TAP output for the host unit tests: one "ok N - name" or
 * "not ok N - name" line per check and a closing "# P passed, F failed"
 * line that tests/run-all counts.
 */
#ifndef RK_TEST_TAP_H
#define RK_TEST_TAP_H

#include <stdbool.h>

/* tap_ok() - record one check; the name is a printf format. Returns cond. */
bool tap_ok(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* tap_failed() - number of failed checks so far. */
int tap_failed(void);
/* tap_done() - print the plan and summary; returns the exit status (0 or 1). */
int tap_done(void);

#endif
