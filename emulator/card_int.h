/* SPDX-License-Identifier: MIT */
/*
 * Card emulator internals shared by card.c (lifetime, resets, accessors),
 * card_ctx.c (contexts and mappings), card_stream.c (command and
 * completion streams) and card_cmd.c (command handlers, queue workers).
 * Not a contract: only those files include it. The locking rules are at
 * the top of card.c.
 */
#ifndef RK_EMU_CARD_INT_H
#define RK_EMU_CARD_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "card.h"
#include "timing.h"

#define HDR_SIZE	sizeof(struct rk1828_hif_msg)

/* A piece of a queue's OUT stream. */
struct in_chunk {
	struct in_chunk *next;
	uint8_t *data;
	size_t len;
	size_t off;		/* bytes already consumed */
	emu_release_fn release;
	void *opaque;
};

/* A piece of a queue's completion stream. */
struct out_chunk {
	struct out_chunk *next;
	size_t len;
	size_t off;		/* bytes already handed to the transport */
	uint8_t data[];
};

/* One mapping [start, start + len) of a context. */
struct emu_map {
	uint64_t start;
	uint64_t len;
};

/* A context: its mappings sorted by start, never overlapping. */
struct emu_ctx {
	pthread_rwlock_t lock;
	struct emu_map *maps;
	size_t n_maps;
	size_t cap_maps;
};

struct emu_queue {
	struct emu_card *card;
	unsigned int idx;
	pthread_t thread;
	bool thread_started;

	pthread_mutex_t lock;
	pthread_cond_t cv;		/* worker: input, reset, stop, room */
	pthread_cond_t idle_cv;		/* reset / wait_idle: worker state */
	pthread_cond_t out_cv;		/* wait_output: new completions */

	struct in_chunk *in_head, *in_tail;
	uint64_t in_bytes;
	struct out_chunk *out_head, *out_tail;
	uint64_t out_bytes;

	bool busy;		/* a command is in progress */
	bool starved;		/* the worker waits for input */
	bool reset_pending;	/* RESET_QUEUES in progress */
	bool desync;		/* bad magic seen; input dropped until reset */
	bool drain_notify;	/* wake the I/O thread when input drains */
	bool stop;

	struct emu_card_stats stats;
};

/*
 * The card's telemetry (card_stats.c): busy time measured per queue and
 * the thermal model it drives. @lock protects everything here; it nests
 * inside nothing and takes nothing.
 */
struct emu_telemetry {
	pthread_mutex_t lock;
	int64_t last_ns;		/* last model step */
	int64_t busy_start_ns[RK1828_HIF_NUM_QUEUES];	/* 0: idle */
	uint64_t busy_ns[RK1828_HIF_NUM_QUEUES];	/* finished commands */
	uint64_t busy_seen_ns[RK1828_HIF_NUM_QUEUES];	/* at the last step */
	uint64_t commands[RK1828_HIF_NUM_QUEUES];
	int32_t limit_mc;
	bool throttled;
	double power_w;			/* smoothed */
	double energy_j;
	double temp_c;
};

/* Thermal model constants (card_stats.c, protocol.rst "STATS"). */
#define EMU_P_IDLE_MW		2000.0
#define EMU_P_COMPUTE_MW	8000.0
#define EMU_P_COPY_MW		1000.0
#define EMU_POWER_TAU_S		1.0
#define EMU_T_AMBIENT_MC	30000.0
#define EMU_R_TH_MC_PER_W	6000.0
#define EMU_THERMAL_TAU_S	30.0
#define EMU_T_LIMIT_MC		95000
#define EMU_T_HYST_MC		2000

struct emu_card {
	struct emu_card_config cfg;
	struct emu_telemetry tel;
	uint8_t *mem;
	int p2p_fd;			/* memfd of the peer window, or -1 */
	uint64_t p2p_base, p2p_size;	/* the window in card memory */
	int notify_fd;
	volatile int abort;

	pthread_rwlock_t ctx_lock;
	struct emu_ctx *ctx[EMU_MAX_CTX + 1];

	struct emu_queue q[RK1828_HIF_NUM_QUEUES];
	struct emu_timing *timing;	/* NULL unless cfg.timing */
	int64_t start_ns;		/* creation (STATS uptime) */
};

typedef void (*card_sink_fn)(void *arg, uint64_t off, const uint8_t *p, size_t n);

/* card.c */
extern const char *const card_queue_names[RK1828_HIF_NUM_QUEUES];
const char *card_op_name(unsigned int op);
__attribute__((format(printf, 2, 3)))
void card_log(const struct emu_card *card, const char *fmt, ...);

/* card_ctx.c: a status (RK1828_HIF_ST_*) from the card_op_* commands */
int card_ctx_check(const struct emu_ctx *c, uint64_t addr, uint64_t len);
int card_access_check(void *priv, uint64_t addr, uint64_t len);
struct emu_ctx *card_ctx_get(struct emu_card *card, uint32_t id, bool write);
void card_ctx_put(struct emu_ctx *c);
void card_ctx_free(struct emu_ctx *c);
uint32_t card_op_ctx_create(struct emu_card *card, uint32_t id);
uint32_t card_op_ctx_destroy(struct emu_card *card, uint32_t id);
uint32_t card_op_map(struct emu_card *card, uint32_t id, uint64_t start,
		     uint64_t len);
uint32_t card_op_unmap(struct emu_card *card, uint32_t id, uint64_t start);

/* card_stream.c: _locked functions are called with q->lock held */
void card_in_drop_locked(struct emu_queue *q);
void card_out_drop_locked(struct emu_queue *q);
void card_in_take_locked(struct emu_queue *q, void *dst, size_t n);
int card_in_consume(struct emu_queue *q, uint64_t n, card_sink_fn sink, void *arg);
struct out_chunk *card_out_alloc(struct emu_queue *q, size_t len);
bool card_out_append(struct emu_queue *q, struct out_chunk *c);
bool card_out_wait_room(struct emu_queue *q);
void card_fill_header(uint8_t *dst, const struct rk1828_hif_msg *cmd,
		      uint32_t status, uint32_t data_len);
void card_count_completion(struct emu_queue *q, uint32_t status, bool sent);
void card_complete(struct emu_queue *q, const struct rk1828_hif_msg *cmd,
		   uint32_t status, const void *data, uint32_t len);

/* card_cmd.c */
void *card_queue_worker(void *arg);

/* card_stats.c: a queue's worker brackets each command with busy/idle */
void card_stats_init(struct emu_card *card);
void card_stats_destroy(struct emu_card *card);
void card_stats_busy(struct emu_queue *q, int64_t start_ns);
void card_stats_idle(struct emu_queue *q, int64_t end_ns);

#endif
