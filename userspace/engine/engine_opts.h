/* SPDX-License-Identifier: MIT */
/*
 * The engine's shape options, with one home for every command that takes
 * them (rk1828-llm run, chat, plan, bench and serve): --parallel, --ctx
 * and --bucket, their ranges and the message of a bad value. (--cards is
 * a cards_spec, cardspec.h; what a 0 means is the planner's, planner.h.)
 */
#ifndef RK_ENGINE_OPTS_H
#define RK_ENGINE_OPTS_H

#include <stddef.h>
#include <stdint.h>

/* The options engine_opt_parse() knows. */
enum engine_opt {
	ENGINE_OPT_PARALLEL,	/* --parallel S: sessions, 1..ENGINE_MAX_SLOTS */
	ENGINE_OPT_CTX,		/* --ctx N: tokens of context per session, 1..INT32_MAX */
	ENGINE_OPT_BUCKET,	/* --bucket B: prefill bucket in tokens, 1..INT32_MAX */
};

/**
 * engine_opt_parse() - the value of option @opt
 * @opt: which option
 * @arg: its argument (decimal, the whole string)
 * @out: the value, set on success only
 * @err, @errlen: on failure the one-line message, naming the option, the
 *	value and the range ("--ctx: bad value \"0\" (an integer 1..2147483647)")
 *
 * Return: 0, or -1 with @err (nothing is printed).
 */
int engine_opt_parse(enum engine_opt opt, const char *arg, uint32_t *out, char *err,
		     size_t errlen);

#endif
