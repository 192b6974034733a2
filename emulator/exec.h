/* SPDX-License-Identifier: MIT */
/*
 * Card emulator: EXEC of segment programs (struct rk1828_program,
 * include/rk1828/program.h) against card memory, with the context's access
 * checks applied to every address the program names.
 */
#ifndef RK_EMU_EXEC_H
#define RK_EMU_EXEC_H

#include <stdbool.h>
#include <stdint.h>

struct card_profile;

/*
 * struct emu_access - a context's view of card memory
 * @base: host pointer of card address 0
 * @mem_size: card memory size in bytes
 * @check: returns 0 when [addr, addr + len) lies within one mapping of
 *	the context (and inside card memory), non-zero otherwise
 * @priv: passed to @check
 * @abort: set to non-zero (by RESET_QUEUES) to make a running EXEC stop
 *	early; EXEC then returns -1 and its output is undefined
 */
struct emu_access {
	uint8_t *base;
	uint64_t mem_size;
	int (*check)(void *priv, uint64_t addr, uint64_t len);
	void *priv;
	volatile int *abort;
};

/*
 * emu_exec() - validate and run the program at card address @prog_addr,
 * @prog_size bytes. Every tensor, KV-cache, input and output range is
 * checked with acc->check before anything is written.
 * Returns an RK1828_HIF_ST_* status, or -1 when aborted.
 */
int emu_exec(const struct emu_access *acc, uint64_t prog_addr, uint64_t prog_size);

/**
 * struct emu_exec_opts - how an EXEC runs (timing mode, --timing)
 * @no_math: validate the program and every address it names as always,
 *	then write filler outputs instead of computing (ex_fill_outputs():
 *	hidden states pass through, logits rows peak at a token chosen by
 *	position and sequence); K/V caches and states are not touched
 * @prof: when not NULL, the card profile to model the program's time on
 */
struct emu_exec_opts {
	bool no_math;
	const struct card_profile *prof;
};

/**
 * emu_exec_timed() - emu_exec() with options
 * @model_ns: out, the modelled time of the program on @o->prof (0 without
 *	a profile, for a DELAY program, or when validation failed)
 * Return: as emu_exec().
 */
int emu_exec_timed(const struct emu_access *acc, uint64_t prog_addr, uint64_t prog_size,
		   const struct emu_exec_opts *o, double *model_ns);

/* Number of compute threads EXEC uses (0 = one per online CPU). Call once at start. */
void emu_exec_set_threads(int n);

#endif
