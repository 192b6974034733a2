// SPDX-License-Identifier: MIT
/*
 * Card emulator: the command handlers (WRITE, READ, COPY, EXEC, INFO,
 * STATS and the dispatch of the context commands) and the queue worker
 * thread that takes one command at a time off its queue's stream.
 * Locking: card.c.
 */
#include <endian.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "card_int.h"
#include "exec.h"
#include "rk1828/util.h"

/*
 * Timing mode: hold the job until its modelled end @end_ns (count it late
 * when the real work ran past it). Without timing, nothing.
 */
static void timed(struct emu_queue *q, int64_t start_ns, int64_t end_ns)
{
	struct emu_timing *t = q->card->timing;

	if (t && emu_timing_complete(t, q->idx, start_ns, end_ns, &q->card->abort) &&
	    q->card->cfg.verbose)
		card_log(q->card, "%s: late by %.3f ms", card_queue_names[q->idx],
			 (util_now_ns() - end_ns) / 1e6);
}

/* Timing mode: bytes of a READ's data held back until its modelled end. */
#define READ_TAIL	4096

/* The modelled end of a transfer of @bytes over the link starting at @start_ns. */
static int64_t link_end(struct emu_queue *q, enum emu_link_dir dir, int64_t start_ns,
			uint64_t bytes)
{
	return q->card->timing ? emu_timing_link_end(q->card->timing, dir, start_ns, bytes) : 0;
}

struct write_sink {
	struct emu_card *card;
	uint32_t ctx;
	uint64_t addr;
	bool failed;
};

/* Copy one piece of WRITE data into card memory, re-checking its range. */
static void write_sink_fn(void *arg, uint64_t off, const uint8_t *p, size_t n)
{
	struct write_sink *ws = arg;
	struct emu_ctx *c = card_ctx_get(ws->card, ws->ctx, false);

	if (c && card_ctx_check(c, ws->addr + off, n) == 0)
		memcpy(ws->card->mem + ws->addr + off, p, n);
	else
		ws->failed = true;
	card_ctx_put(c);
}

/* Check [addr, addr + len) in context @id. Returns a status. */
static uint32_t check_range(struct emu_card *card, uint32_t id, uint64_t addr,
			    uint64_t len)
{
	struct emu_ctx *c = card_ctx_get(card, id, false);
	uint32_t st;

	if (!c)
		return RK1828_HIF_ST_NOCTX;
	st = card_ctx_check(c, addr, len) ? RK1828_HIF_ST_ACCESS : RK1828_HIF_ST_OK;
	card_ctx_put(c);
	return st;
}

static void run_write(struct emu_queue *q, const struct rk1828_hif_msg *cmd, int64_t t0)
{
	struct write_sink ws = {
		.card = q->card,
		.ctx = le32toh(cmd->ctx),
		.addr = le64toh(cmd->arg[0]),
	};
	uint32_t len = le32toh(cmd->data_len);
	uint64_t arg_len = le64toh(cmd->arg[1]);
	uint32_t st;

	/* arg1 repeats the length (or is 0, meaning data_len). */
	if (arg_len && arg_len != len)
		st = RK1828_HIF_ST_INVAL;
	else
		st = check_range(q->card, ws.ctx, ws.addr, len);

	if (card_in_consume(q, len, st == RK1828_HIF_ST_OK ? write_sink_fn : NULL,
		       &ws)) {
		card_count_completion(q, 0, false);
		return;
	}
	if (st == RK1828_HIF_ST_OK && ws.failed) {
		/* The range was unmapped while the data streamed in. */
		card_log(q->card, "copy: WRITE seq %u: mapping vanished during the transfer",
			 le32toh(cmd->seq));
		st = RK1828_HIF_ST_ACCESS;
	}
	timed(q, t0, link_end(q, EMU_LINK_TO_CARD, t0, len));
	card_complete(q, cmd, st, NULL, 0);
}

static void run_read(struct emu_queue *q, const struct rk1828_hif_msg *cmd, int64_t t0)
{
	struct emu_card *card = q->card;
	uint32_t id = le32toh(cmd->ctx);
	uint64_t addr = le64toh(cmd->arg[0]);
	uint64_t len = le64toh(cmd->arg[1]);
	uint64_t done = 0, tail;
	struct out_chunk *c;
	int64_t end;
	uint32_t st;

	if (len > UINT32_MAX)
		st = RK1828_HIF_ST_INVAL;
	else
		st = check_range(card, id, addr, len);
	if (st != RK1828_HIF_ST_OK) {
		card_complete(q, cmd, st, NULL, 0);
		return;
	}
	/*
	 * Timing mode: the data leaves at link speed. All of it but the last
	 * READ_TAIL bytes streams at once; the tail, which completes the
	 * READ for the host, waits for the modelled end of the transfer. So
	 * the READ takes the longer of the modelled and the real transfer,
	 * not their sum.
	 */
	end = link_end(q, EMU_LINK_TO_HOST, t0, len);
	tail = !card->timing ? 0 : len < READ_TAIL ? len : READ_TAIL;
	if (tail == len)
		timed(q, t0, end);
	c = card_out_alloc(q, HDR_SIZE);
	if (!c || (card_fill_header(c->data, cmd, st, (uint32_t)len),
		   !card_out_append(q, c))) {
		card_count_completion(q, st, false);
		return;
	}
	while (done < len) {
		size_t n = len - done > EMU_READ_PIECE ? EMU_READ_PIECE :
			   (size_t)(len - done);
		struct emu_ctx *x;

		if (tail && tail < len) {
			if (done == len - tail)
				timed(q, t0, end);
			else if (n > len - tail - done)
				n = (size_t)(len - tail - done);
		}
		if (!card_out_wait_room(q))
			goto aborted;
		c = card_out_alloc(q, n);
		if (!c)
			goto aborted;
		x = card_ctx_get(card, id, false);
		if (x && card_ctx_check(x, addr + done, n) == 0) {
			memcpy(c->data, card->mem + addr + done, n);
		} else {
			/* Header already sent: the host unmapped mid-READ. */
			memset(c->data, 0, n);
			card_log(card, "copy: READ seq %u: mapping vanished during the transfer",
				 le32toh(cmd->seq));
		}
		card_ctx_put(x);
		if (!card_out_append(q, c))
			goto aborted;
		done += n;
	}
	card_count_completion(q, st, true);
	if (card->cfg.verbose)
		card_log(card, "%s: READ seq %u ctx %u -> status 0, %" PRIu64 " bytes",
			 card_queue_names[q->idx], le32toh(cmd->seq), id, len);
	return;
aborted:
	card_count_completion(q, st, false);
}

static uint32_t run_copy(struct emu_card *card,
			 const struct rk1828_hif_msg *cmd)
{
	struct emu_ctx *c = card_ctx_get(card, le32toh(cmd->ctx), false);
	uint64_t src = le64toh(cmd->arg[0]);
	uint64_t dst = le64toh(cmd->arg[1]);
	uint64_t len = le64toh(cmd->arg[2]);
	uint32_t st = RK1828_HIF_ST_OK;

	if (!c)
		return RK1828_HIF_ST_NOCTX;
	if (card_ctx_check(c, src, len) || card_ctx_check(c, dst, len))
		st = RK1828_HIF_ST_ACCESS;
	else
		memmove(card->mem + dst, card->mem + src, len);
	card_ctx_put(c);
	return st;
}

/* Returns a status, or -1 when aborted by a reset; *@model_ns: timing mode. */
static int run_exec(struct emu_card *card, const struct rk1828_hif_msg *cmd, double *model_ns)
{
	struct emu_ctx *c = card_ctx_get(card, le32toh(cmd->ctx), false);
	uint64_t addr = le64toh(cmd->arg[0]);
	uint64_t len = le64toh(cmd->arg[1]);
	struct emu_access acc = {
		.base = card->mem,
		.mem_size = card->cfg.mem_size,
		.check = card_access_check,
		.priv = c,
		.abort = &card->abort,
	};
	struct emu_exec_opts eo = {
		.no_math = card->timing && emu_timing_no_math(card->timing),
		.prof = card->cfg.timing,
	};
	int st;

	*model_ns = 0;
	if (!c)
		return RK1828_HIF_ST_NOCTX;
	if (card_ctx_check(c, addr, len))
		st = RK1828_HIF_ST_ACCESS;
	else
		st = card->timing ? emu_exec_timed(&acc, addr, len, &eo, model_ns)
				  : emu_exec(&acc, addr, len);
	card_ctx_put(c);
	return st;
}

static void run_stats(struct emu_queue *q, const struct rk1828_hif_msg *cmd)
{
	struct rk1828_hif_stats r;

	emu_card_get_hif_stats(q->card, &r);
	card_complete(q, cmd, RK1828_HIF_ST_OK, &r, sizeof(r));
}

static void run_info(struct emu_queue *q, const struct rk1828_hif_msg *cmd)
{
	struct emu_card *card = q->card;
	struct rk1828_hif_info info;

	memset(&info, 0, sizeof(info));
	info.version = htole32(RK1828_HIF_VERSION);
	info.num_queues = htole32(RK1828_HIF_NUM_QUEUES);
	info.mem_size = htole64(card->cfg.mem_size);
	info.serial = htole64(card->cfg.serial);
	info.max_ctx = htole32(EMU_MAX_CTX);
	info.threads = htole32((uint32_t)card->cfg.threads);
	snprintf(info.fw, sizeof(info.fw), "rk1828-emu 1.0");
	card_complete(q, cmd, RK1828_HIF_ST_OK, &info, sizeof(info));
}

/*
 * An EXEC (timed in timing mode). Return: its status, or -1 when a reset
 * aborted it (counted here; no completion is sent).
 */
static int exec_command(struct emu_queue *q, const struct rk1828_hif_msg *cmd, int64_t t0)
{
	struct emu_card *card = q->card;
	double model_ns;
	bool resetting;
	int st = run_exec(card, cmd, &model_ns);

	if (st >= 0) {
		if (card->timing && model_ns > 0)
			timed(q, t0, t0 + (int64_t)model_ns);
		return st;
	}
	pthread_mutex_lock(&q->lock);
	resetting = q->reset_pending || q->stop;
	pthread_mutex_unlock(&q->lock);
	if (!resetting)
		return RK1828_HIF_ST_INVAL;
	card_log(card, "%s: EXEC seq %u aborted by reset", card_queue_names[q->idx],
		 le32toh(cmd->seq));
	card_count_completion(q, 0, false);
	return -1;
}

/* Run one command whose header has been taken from the stream. */
static void run_command(struct emu_queue *q, const struct rk1828_hif_msg *cmd)
{
	struct emu_card *card = q->card;
	unsigned int op = le16toh(cmd->opcode);
	uint32_t data_len = le32toh(cmd->data_len);
	uint32_t id = le32toh(cmd->ctx);
	int64_t t0 = util_now_ns();
	int st;

	if (card->cfg.verbose)
		card_log(card, "%s: %s seq %u ctx %u args %#" PRIx64 " %#" PRIx64
			 " %#" PRIx64 " data %u", card_queue_names[q->idx],
			 card_op_name(op), le32toh(cmd->seq), id,
			 (uint64_t)le64toh(cmd->arg[0]),
			 (uint64_t)le64toh(cmd->arg[1]),
			 (uint64_t)le64toh(cmd->arg[2]), data_len);

	if (op == RK1828_HIF_OP_WRITE && cmd->flags == 0) {
		run_write(q, cmd, t0);
		return;
	}
	/* Only WRITE carries data: consume it to stay in sync, then fail. */
	if (data_len || cmd->flags) {
		if (card_in_consume(q, data_len, NULL, NULL)) {
			card_count_completion(q, 0, false);
			return;
		}
		card_complete(q, cmd, RK1828_HIF_ST_INVAL, NULL, 0);
		return;
	}

	switch (op) {
	case RK1828_HIF_OP_INFO:
		run_info(q, cmd);
		return;
	case RK1828_HIF_OP_STATS:
		run_stats(q, cmd);
		return;
	case RK1828_HIF_OP_READ:
		run_read(q, cmd, t0);
		return;
	case RK1828_HIF_OP_CTX_CREATE:
		st = card_op_ctx_create(card, id);
		break;
	case RK1828_HIF_OP_CTX_DESTROY:
		st = card_op_ctx_destroy(card, id);
		break;
	case RK1828_HIF_OP_MAP:
		st = card_op_map(card, id, le64toh(cmd->arg[0]), le64toh(cmd->arg[1]));
		break;
	case RK1828_HIF_OP_UNMAP:
		st = card_op_unmap(card, id, le64toh(cmd->arg[0]));
		break;
	case RK1828_HIF_OP_COPY:
		st = run_copy(card, cmd);
		if (card->timing)
			timed(q, t0, t0 + (int64_t)cost_card_copy_ns(card->cfg.timing,
								     le64toh(cmd->arg[2])));
		break;
	case RK1828_HIF_OP_EXEC:
		st = exec_command(q, cmd, t0);
		if (st < 0)
			return;	/* aborted by a reset: no completion */
		break;
	default:
		st = RK1828_HIF_ST_BADOP;
		break;
	}
	card_complete(q, cmd, (uint32_t)st, NULL, 0);
}

void *card_queue_worker(void *arg)
{
	struct emu_queue *q = arg;
	struct rk1828_hif_msg cmd;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->stop && (q->reset_pending || q->desync ||
				    q->in_bytes < HDR_SIZE)) {
			q->starved = true;
			pthread_cond_broadcast(&q->idle_cv);
			pthread_cond_wait(&q->cv, &q->lock);
		}
		q->starved = false;
		if (q->stop)
			break;
		card_in_take_locked(q, &cmd, HDR_SIZE);
		if (le32toh(cmd.magic) != RK1828_HIF_MAGIC) {
			card_log(q->card, "%s: bad magic %#x: stream out of sync, dropping input until RESET_QUEUES",
				 card_queue_names[q->idx], le32toh(cmd.magic));
			q->desync = true;
			q->stats.desyncs++;
			card_in_drop_locked(q);
			continue;
		}
		q->busy = true;
		pthread_mutex_unlock(&q->lock);
		card_stats_busy(q, util_now_ns());
		run_command(q, &cmd);
		card_stats_idle(q, util_now_ns());
		pthread_mutex_lock(&q->lock);
		q->busy = false;
		pthread_cond_broadcast(&q->idle_cv);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}
