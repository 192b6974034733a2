/* SPDX-License-Identifier: MIT */
/*
 * The engine's passes through the cards during bench's engine rows
 * (bench.c, tgN ngram): recorded from the engine's scheduler trace
 * (engine_opts.trace) and written into bench's Chrome trace-event file,
 * one event per micro-batch on the host process, so a verify pass (the
 * decode token and k drafted tokens of speculative decoding, engine_spec.c)
 * is visible next to a plain decode pass.
 */
#ifndef RK_LLM_BENCH_PASSES_H
#define RK_LLM_BENCH_PASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct engine_trace;

/**
 * struct bench_pass - one micro-batch the engine submitted
 * @mb: its number in the engine's submission order
 * @t0, @t1: submitted and collected (CLOCK_MONOTONIC ns; @t1 0 until
 *	collected)
 * @n_tok: tokens in it (decode tokens, drafts and prompt tokens)
 * @k: drafted tokens it verifies (0: no verify pass)
 * @n_decode: decode tokens in it (sessions it advances by sampling)
 * @rep: the bench repetition it belongs to (bench_passes.rep then)
 */
struct bench_pass {
	uint64_t mb;
	int64_t t0, t1;
	int n_tok, k, n_decode, rep;
};

/**
 * struct bench_passes - the passes of one engine, in submission order
 * @p: @n of them (room for @cap)
 * @rep: repetition of the passes recorded from now on (set by the caller)
 * @oom: a pass was dropped for want of memory
 */
struct bench_passes {
	struct bench_pass *p;
	size_t n, cap;
	int rep;
	bool oom;
};

/**
 * bench_passes_rec() - engine_opts.trace callback: record a SUBMIT as a
 * new pass and a COLLECT as the end of its pass
 * @user: the struct bench_passes
 * @t: the engine's event
 * Runs on the engine thread; read @user only after engine_destroy().
 */
void bench_passes_rec(void *user, const struct engine_trace *t);

/**
 * bench_passes_write() - the passes as Chrome trace "X" events of process
 * @pid, thread 3 (named "engine passes: @test"): "verify pass" with
 * args.k (the drafts it verifies), or "decode pass" / "prefill pass";
 * times from @t0_ns, in µs
 * @f: the open trace file, inside its traceEvents array
 * @first: whether no event was written yet (updated)
 */
void bench_passes_write(const struct bench_passes *ps, FILE *f, bool *first, int pid,
			int64_t t0_ns, const char *test);

/** bench_passes_free() - free the records of @ps (zeroes it). */
void bench_passes_free(struct bench_passes *ps);

#endif
