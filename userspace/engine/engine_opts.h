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

/**
 * engine_opt_arg() - engine_opt_parse() for the command line: a bad
 * value's message goes to stderr as "rk1828-llm: MESSAGE"
 * @opt, @arg, @out: as engine_opt_parse()
 *
 * Return: 0, or -1 with the message printed.
 */
int engine_opt_arg(enum engine_opt opt, const char *arg, uint32_t *out);

/**
 * engine_opt_kv_type() - a --kv-type argument (quant_kv_type_parse():
 * f32, f16, q8_0, q4_0 or auto); a bad one's message goes to stderr
 * @arg: the argument
 * @out: QUANT_TYPE_* or QUANT_KV_AUTO, set on success only
 *
 * Return: 0, or -1 with the message printed.
 */
int engine_opt_kv_type(const char *arg, int *out);

#endif
