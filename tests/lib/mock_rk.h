/* SPDX-License-Identifier: MIT */
/*
 * Mock librk1828 (mock_rk.c) for host tests: a test that calls any
 * mock_rk_*() function links the mock's rk_* functions instead of the real
 * library (the linker takes the mock's object from libtest.a first, so it
 * must define every rk_* function the pipeline and the engine call).
 * Cards are MOCK_CARDS arenas of MOCK_CARD_MEM bytes; every job runs at
 * submit time, so fences are always signalled - unless a modelled clock is
 * on (mock_rk_clock()).
 */
#ifndef RK_TEST_MOCK_RK_H
#define RK_TEST_MOCK_RK_H

#include <stdbool.h>

#include "cost.h"
#include "rk1828.h"

#define MOCK_CARDS	4
#define MOCK_CARD_MEM	(64ULL << 20)

/* mock_rk_cards() - fill @cards[MOCK_CARDS] (fd = index) and reset the mock. */
void mock_rk_cards(struct rk_card *cards);
/* mock_rk_reset() - forget every BO and syncobj, card memory from 4 KiB on. */
void mock_rk_reset(void);
/*
 * mock_rk_card_mem() - before mock_rk_cards(): cards of @bytes each, whose
 * memory is sparse (mmap()ed, a page mapped when first touched) and whose
 * fresh BOs read as zeros, as a real card's, instead of the 0xff poison:
 * a shape-only model's weights (never uploaded, pipeline_setup.c) and
 * unwritten KV caches take no host memory, so RK1828-sized cards (5 GiB)
 * hold 9B and 27B shapes under mock_rk_timing(prof, true). 0: back to
 * MOCK_CARD_MEM, malloc()ed and poisoned. Frees the arenas as
 * mock_rk_free() does when the size changes.
 */
void mock_rk_card_mem(uint64_t bytes);
/*
 * mock_rk_self_ns() - CPU time spent so far inside rk_submit_copy() and
 * rk_submit_exec(), ns (every thread): the mock doing the cards' work
 * (copying the bytes, running or timing the program), which a real card
 * does itself, so a measurement of the host's work leaves it out.
 */
int64_t mock_rk_self_ns(void);
/* mock_rk_free() - free the arenas and host buffers (at exit). */
void mock_rk_free(void);
/* mock_rk_live_objs() - BOs and syncobjs not destroyed. */
int mock_rk_live_objs(void);
/* mock_rk_fail_exec() - make every EXEC on @card fail (ACCESS) while @on. */
void mock_rk_fail_exec(int card, int on);
/*
 * mock_rk_unplug() - while @on, @card is gone: rk_card_refresh() on it
 * fails with -ENODEV, as on a card that was unplugged or removed.
 */
void mock_rk_unplug(int card, int on);
/* mock_rk_n_exec() - EXEC jobs run on @card since the last reset. */
int mock_rk_n_exec(int card);

struct card_profile;

/* Most EXEC jobs per card whose modelled time the mock keeps. */
#define MOCK_MAX_TIMED	256

/*
 * mock_rk_timing() - run every EXEC from now on as the emulator's timing
 * mode does (emu_exec_timed()): model its time on @prof (NULL: off) and,
 * when @no_math, write the timing-only filler instead of computing.
 */
void mock_rk_timing(const struct card_profile *prof, bool no_math);
/* mock_rk_exec_ns() - modelled ns of EXEC @i on @card since the last reset (-1: none). */
double mock_rk_exec_ns(int card, int i);

/**
 * struct mock_cost - modelled card time of the jobs (mock_rk_clock())
 * @exec_ns: an EXEC's fixed cost (program start, weights streamed once a
 *	job), ns
 * @exec_tok_ns: an EXEC's cost per token of its micro-batch, ns
 * @copy_ns: a COPY's cost, ns
 */
struct mock_cost {
	int64_t exec_ns, exec_tok_ns, copy_ns;
};

/**
 * mock_rk_clock() - run the cards on a modelled clock (@c), or on none
 * (NULL, the default after mock_rk_cards())
 *
 * Jobs still compute at submit time, but each card then has a timeline:
 * a job starts when the card finished its previous job, its in-syncs are
 * signalled and it was submitted, and takes the time @c gives it (an
 * EXEC under mock_rk_timing(): its modelled time on the profile). Host
 * work takes no time: rk_now_ns() returns the modelled clock, which only
 * a wait moves (rk_syncobj_wait() to the fences' end; a sync_file is
 * signalled only once the clock has reached its fence), and sync_file
 * timestamps are the modelled end times. So every time the engine
 * measures is card time, exactly, and the same in every run.
 */
void mock_rk_clock(const struct mock_cost *c);

/**
 * mock_rk_clock_link() - with mock_rk_clock() and mock_rk_timing() on, the
 * cards' COPY jobs as the emulator's timing mode runs them: on a queue of
 * their own beside the EXEC queue (each in submission order), a host<->card
 * COPY taking cost_link_ns() of its bytes over @link, a card-internal one
 * cost_card_copy_ns(), instead of mock_cost.copy_ns on the one queue;
 * mock_rk_clock() turns it off
 */
void mock_rk_clock_link(enum cost_link link);

/**
 * struct mock_rk_calls - calls since the last reset that are system calls
 * on a real card (the close() of an fd is not counted)
 * @submit: SUBMIT ioctls (COPY and EXEC)
 * @syncobj_wait: SYNCOBJ_WAIT
 * @bo_wait: BO_WAIT
 * @export_sync_file: SYNCOBJ_HANDLE_TO_FD of a fence as a sync_file
 * @import_sync_file: SYNCOBJ_FD_TO_HANDLE of a sync_file into a syncobj
 * @sync_file_info: SYNC_IOC_FILE_INFO
 * @other: syncobj export/import (the syncobj itself), status
 */
struct mock_rk_calls {
	long submit, syncobj_wait, bo_wait;
	long export_sync_file, import_sync_file, sync_file_info, other;
};

/* mock_rk_get_calls() - the counters of struct mock_rk_calls. */
void mock_rk_get_calls(struct mock_rk_calls *c);

/*
 * mock_rk_p2p() - make rk_p2p_query() answer RK_P2P_OK for every pair of
 * distinct cards (@on), or RK_P2P_NO_KERNEL (the default, Debian 6.12's
 * answer). Peer-window BOs export, their import on another card is a
 * RK_BO_PEER whose COPY moves bytes straight into the exporter's memory.
 */
void mock_rk_p2p(bool on);
/* mock_rk_p2p_bytes() - bytes COPY jobs of @card moved to or from peer BOs. */
uint64_t mock_rk_p2p_bytes(int card);

#endif
