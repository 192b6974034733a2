/* SPDX-License-Identifier: MIT */
/*
 * Card emulator, timing mode (rk1828-emu --timing PROFILE): every job
 * completes at the time the card cost function (cardmodel/cost.h) gives
 * it, and the host link is shaped to the profile's bandwidth and latency.
 *
 * A queue's job starts when its worker takes it (the previous job of the
 * queue has completed, at its modelled time) and completes at start +
 * modelled time: an EXEC at its program's cost, a COPY inside the card at
 * 2 * bytes / DRAM bandwidth, a WRITE or READ when the link, reserved per
 * direction (host to card, card to host: both links are full duplex),
 * has carried its bytes: latency + bytes / bandwidth after the later of
 * the job's start and the end of the direction's previous transfer. The
 * shaping lives here and in the transport-independent command handlers
 * (card_cmd.c), so every link front end (USB, PCIe) gets it.
 *
 * The real work (math, data streaming) runs first and must finish by the
 * modelled time; a job that finishes later completes at once and is
 * counted late. Modelled busy time of the NPU (the COMPUTE queue) gives
 * the card's modelled power (profile.h). Thread-safe: the queue workers
 * call it concurrently.
 */
#ifndef RK_EMU_TIMING_H
#define RK_EMU_TIMING_H

#include <stdbool.h>
#include <stdint.h>

#include "cost.h"
#include "profile.h"

/* Link directions. */
enum emu_link_dir {
	EMU_LINK_TO_CARD,
	EMU_LINK_TO_HOST,
	EMU_LINK_DIRS,
};

/* Queues whose jobs are modelled (the HIF queues). */
#define EMU_TIMING_QUEUES	3

struct emu_timing;

/**
 * struct emu_timing_stats - modelled and real counters since creation
 * @jobs: modelled jobs per queue
 * @late: of them, jobs whose real work overran the modelled time
 * @late_ns: total overrun, ns
 * @busy_ns: modelled busy time per queue, ns
 * @since_ns: CLOCK_MONOTONIC time of creation
 * @energy_j: modelled energy: idle power over the whole time plus the
 *	busy-idle difference over the COMPUTE queue's busy time, joules
 */
struct emu_timing_stats {
	uint64_t jobs[EMU_TIMING_QUEUES];
	uint64_t late[EMU_TIMING_QUEUES];
	double late_ns;
	double busy_ns[EMU_TIMING_QUEUES];
	int64_t since_ns;
	double energy_j;
};

/**
 * emu_timing_create() - timing state for one card
 * @prof: the profile (copied)
 * @link: the card's host link
 * @no_math: timing-only: EXEC writes filler outputs (emu_exec_opts)
 * Return: the state, or NULL (out of memory).
 */
struct emu_timing *emu_timing_create(const struct card_profile *prof, enum cost_link link,
				     bool no_math);

/** emu_timing_destroy() - free (NULL is a no-op). */
void emu_timing_destroy(struct emu_timing *t);

/** emu_timing_profile() - the profile. */
const struct card_profile *emu_timing_profile(const struct emu_timing *t);

/** emu_timing_no_math() - whether EXEC skips the math. */
bool emu_timing_no_math(const struct emu_timing *t);

/**
 * emu_timing_link_end() - reserve the link for a transfer
 * @dir: its direction
 * @start_ns: when the job starts (CLOCK_MONOTONIC)
 * @bytes: payload
 * Return: the modelled end of the transfer, ns.
 */
int64_t emu_timing_link_end(struct emu_timing *t, enum emu_link_dir dir, int64_t start_ns,
			    uint64_t bytes);

/**
 * emu_timing_complete() - wait until the modelled end of a job and count it
 * @q: its queue
 * @start_ns: when it started
 * @end_ns: its modelled end
 * @abort: when it becomes non-zero (RESET_QUEUES) the wait stops early
 * Return: true when the job was late (the real work ended after @end_ns).
 */
bool emu_timing_complete(struct emu_timing *t, unsigned int q, int64_t start_ns,
			 int64_t end_ns, volatile int *abort);

/** emu_timing_get_stats() - copy the counters. */
void emu_timing_get_stats(struct emu_timing *t, struct emu_timing_stats *st);

/**
 * emu_timing_power_w() - modelled average power since creation, watts
 */
double emu_timing_power_w(struct emu_timing *t);

#endif
