// SPDX-License-Identifier: MIT
/*
 * Pipeline-parallel runtime over RK1828 cards: micro-batches in flight
 * (see pipeline.h for the job graph; the buffers and weights are set up by
 * pipeline_setup.c). Each stage has n = plan_slots(stages) buffer slots;
 * micro-batch i uses slot s = i % n. Dependencies per stage k (all
 * explicit binary syncobjs; a binary syncobj named as an in-sync
 * contributes the fence it holds at submit time, so reusing one per role
 * and slot is safe as long as jobs are queued in micro-batch order):
 *
 *   IN   COPY [program | token table | hidden] host slot s -> card input
 *        slot s
 *        waits exec[s]  (EXEC i-n no longer reads input slot s)
 *        waits prev[s]  (k > 0: stage k-1's OUT of micro-batch i)
 *        signals in[s]
 *   EXEC the program at the start of card input slot s
 *        waits in[s], exec[s-1] (micro-batch i-1: KV cache order), out[s]
 *        (OUT i-n has drained output slot s); signals exec[s]
 *   OUT  COPY card output slot s -> host slot s, behind stage k+1's
 *        program area (last stage: the logits rows)
 *        waits exec[s], next[s] (k < last, unless already known: stage
 *        k+1's IN of micro-batch i-n has read host slot s); signals out[s]
 *
 * prev[s] is stage k-1's out[s] itself and next[s] stage k+1's in[s]:
 * pipe_create() gives each card a handle to its neighbours' syncobjs
 * (rk_syncobj_export()/rk_syncobj_import()), so a job on card k names the
 * fence a job on card k-1 signalled with no sync_file passed per
 * micro-batch. The host writes a stage's program (and, for stage 0, the
 * embeddings) into its input host slot only after the jobs of micro-batch
 * i-n on that stage are done and their status was checked. For k > 0 the
 * input host slot is stage k-1's output host BO (a shared dma-buf): the
 * host writes the program part while stage k-1 may be writing the hidden
 * part, which is disjoint.
 *
 * pipe_submit() queues one micro-batch on every stage and returns;
 * pipe_collect() waits for the oldest one's logits with one BO_WAIT on the
 * last stage's output host BO, whose status covers every job of the
 * micro-batch: each job waits for the one before it through an in-sync
 * and the driver fails a job whose in-sync failed with that error (uapi:
 * a chain of jobs stops at the first failure). Only when it failed are
 * the jobs read one by one, in pipeline order, so the first failure (the
 * cause) is reported. The fence timestamps behind the per-card busy time
 * (struct pipe_stats) are read later, while the host would wait anyway:
 * before pipe_collect() blocks on a micro-batch still running, before a
 * buffer slot is reused, or in pipe_account(). With at most pipe_depth()
 * = stages micro-batches in flight and stages + 1 slots, a slot is always
 * collected (checked) before it is reused, so submit never waits: every
 * card can work on its own micro-batch at the same time while the host
 * prepares the next.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline_int.h"

int pipe_err(char *err, size_t errlen, const struct stage *st, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err && errlen) {
		if (st)
			snprintf(err, errlen, "card%d (%s): %s", st->card->index,
				 st->card->node, msg);
		else
			snprintf(err, errlen, "%s", msg);
	}
	return -1;
}

int pipe_job_ok(struct pipeline *p, struct stage *st, uint32_t sy, bool wait,
		const char *what, long bucket, int pos, int64_t *ts_ns,
		char *err, size_t errlen)
{
	int64_t ts = 0;
	int fd, ret;

	if (wait) {
		int64_t t0 = rk_now_ns();

		ret = rk_syncobj_wait(st->card, &sy, NULL, 1,
				      t0 + (int64_t)p->o.timeout_ms * 1000000, true);
		p->stats.wait_ns += rk_now_ns() - t0;
		if (ret == -ETIME)
			return pipe_err(err, errlen, st,
					"%s (micro-batch %ld, pos %d): no completion within %u ms",
					what, bucket, pos, p->o.timeout_ms);
		if (ret)
			return pipe_err(err, errlen, st, "%s (micro-batch %ld, pos %d): wait: %s",
					what, bucket, pos, rk_error());
	}
	if (rk_syncobj_export_sync_file(st->card, sy, 0, &fd))
		return pipe_err(err, errlen, st, "%s", rk_error());
	ret = rk_sync_file_info(fd, &ts);
	close(fd);
	if (ret == 0 && !wait)	/* still running after all */
		return pipe_job_ok(p, st, sy, true, what, bucket, pos, ts_ns, err, errlen);
	if (ret < 0)
		return pipe_err(err, errlen, st, "%s (micro-batch %ld, pos %d): job failed: %s (%d)",
				what, bucket, pos, strerror(-ret), ret);
	if (ret == 0)
		return pipe_err(err, errlen, st, "%s (micro-batch %ld, pos %d): not signalled after its wait",
				what, bucket, pos);
	if (ts_ns)
		*ts_ns = ts;
	return 0;
}

/*
 * Status of the input COPY, EXEC and output COPY last queued in stage
 * @st's slot @s, in that order, waiting for them with @wait: the first
 * failure names its job. Marks the slot checked.
 */
static int slot_jobs_ok(struct pipeline *p, struct stage *st, int s, bool wait,
			char *err, size_t errlen)
{
	long b = st->bucket_of[s];
	int pos = st->pos_of[s];

	if (pipe_job_ok(p, st, st->sy_in[s], wait, "input COPY", b, pos, NULL, err, errlen) ||
	    pipe_job_ok(p, st, st->sy_exec[s], wait, "EXEC", b, pos, NULL, err, errlen) ||
	    pipe_job_ok(p, st, st->sy_out[s], wait, "output COPY", b, pos, NULL, err, errlen))
		return -1;
	st->checked[s] = true;
	return 0;
}

/* Keep micro-batch time @ns of @n_tok tokens for pipe_exec_cost(). */
static void push_cost(struct pipeline *p, int n_tok, int64_t ns)
{
	unsigned int i = (p->cost_head + p->cost_n) % PIPE_COST_RING;

	p->cost[i].n_tok = n_tok;
	p->cost[i].ns = ns;
	if (p->cost_n < PIPE_COST_RING)
		p->cost_n++;
	else	/* full: the oldest goes */
		p->cost_head = (p->cost_head + 1) % PIPE_COST_RING;
}

/*
 * The trace record of micro-batch @b on stage @st (slot @s), given the
 * input COPY's and EXEC's timestamps: reads the output COPY's too.
 */
static int trace_one(struct pipeline *p, struct stage *st, int s, long b, int64_t t_in,
		     int64_t t_exec, char *err, size_t errlen)
{
	struct pipe_trace_rec r = {
		.stage = (int)(st - p->st), .card = st->card->index, .mb = b,
		.n_tokens = p->ntok_of[s], .n_logits = st->last ? p->rows_of[s] : 0,
		.submit_ns = st->submit_ns[s], .in_end_ns = t_in, .exec_end_ns = t_exec,
		.in_bytes = st->in_bytes_of[s], .out_bytes = st->out_bytes_of[s],
	};

	if (pipe_job_ok(p, st, st->sy_out[s], false, "output COPY", b, st->pos_of[s],
			&r.out_end_ns, err, errlen))
		return -1;
	p->trace(p->trace_user, &r);
	return 0;
}

/*
 * Busy time of collected micro-batch @b on every stage, from the fence
 * timestamps of its input COPY and EXEC: from the later of the input's
 * arrival and the previous EXEC's end, to its own end; their sum is its
 * card time (pipe_exec_cost()). Its slot's syncobjs must still hold its
 * fences (slot not reused yet).
 */
static int account_one(struct pipeline *p, long b, char *err, size_t errlen)
{
	int s = (int)(b % p->nslot), k;
	int64_t sum = 0;
	bool all = true;

	for (k = 0; k < p->n_stages; k++) {
		struct stage *st = &p->st[k];
		int64_t t_in = 0, t_exec = 0, start, ns = 0;

		if (pipe_job_ok(p, st, st->sy_in[s], false, "input COPY", b, st->pos_of[s], &t_in,
				err, errlen) ||
		    pipe_job_ok(p, st, st->sy_exec[s], false, "EXEC", b, st->pos_of[s], &t_exec,
				err, errlen))
			return -1;
		if (p->trace && trace_one(p, st, s, b, t_in, t_exec, err, errlen))
			return -1;
		if (t_exec) {
			start = t_in > st->exec_end_ns ? t_in : st->exec_end_ns;
			if (start && t_exec > start)
				ns = t_exec - start;
			st->busy_ns += ns;
			st->exec_end_ns = t_exec;
		}
		all &= ns > 0;
		sum += ns;
	}
	if (all)
		push_cost(p, p->ntok_of[s], sum);
	return 0;
}

/* Account every collected micro-batch not accounted yet, in order. */
static int account_pending(struct pipeline *p, char *err, size_t errlen)
{
	long done = p->n_buckets - p->n_flight;
	int n = 0;

	for (; p->n_acct < done; p->n_acct++, n++)
		if (account_one(p, p->n_acct, err, errlen))
			return -1;
	return n;
}

int pipe_account(struct pipeline *p, char *err, size_t errlen)
{
	int64_t t0 = rk_now_ns();
	int n;

	if (p->failed[0])
		return 0;	/* the counters stop at the failure */
	n = account_pending(p, err, errlen);
	p->stats.host_ns += rk_now_ns() - t0;
	if (n < 0)
		snprintf(p->failed, sizeof(p->failed), "%s", err ? err : "fence status");
	return n;
}

int pipe_probe(struct pipeline *p, char *err, size_t errlen)
{
	int k;

	if (p->failed[0])
		return pipe_err(err, errlen, NULL, "%s", p->failed);
	for (k = 0; k < p->n_stages; k++) {
		struct stage *st = &p->st[k];

		if (rk_card_refresh(st->card)) {
			pipe_err(p->failed, sizeof(p->failed), st, "the card does not answer: %s",
				 rk_error());
			return pipe_err(err, errlen, NULL, "%s", p->failed);
		}
	}
	return 0;
}

/* Program and token table of micro-batch @t[0..n) into stage @st's slot @s. */
static void write_program(struct pipeline *p, struct stage *st, int s,
			  const struct pipe_tok *t, int n)
{
	struct rk1828_program *h;
	struct rk1828_prog_token *tt;
	int i;

	memcpy(st->in_map[s], st->tmpl, st->prog_bytes);
	h = (struct rk1828_program *)st->in_map[s];
	h->n_tokens = htole32(n);
	h->in_addr = htole64(st->in_card[s].card_addr + st->prog_size);
	h->out_addr = htole64(st->out_card[s].card_addr);
	h->tok_addr = htole64(st->in_card[s].card_addr + st->prog_bytes);
	tt = (struct rk1828_prog_token *)(st->in_map[s] + st->prog_bytes);
	for (i = 0; i < n; i++) {
		tt[i].pos = htole32((uint32_t)t[i].pos);
		tt[i].seq = htole32(t[i].seq);
		tt[i].flags = htole32(((t[i].flags & PIPE_TOK_LOGITS) ? RK1828_PROG_TOK_LOGITS : 0) |
				      ((t[i].flags & PIPE_TOK_SNAPSHOT) ? RK1828_PROG_TOK_SNAPSHOT : 0) |
				      ((t[i].flags & PIPE_TOK_RESTORE) ? RK1828_PROG_TOK_RESTORE : 0));
		tt[i].aux = htole32(t[i].aux);
	}
}

/* Queue the input COPY, EXEC and output COPY of one micro-batch on stage @k, slot @s. */
static int submit_stage(struct pipeline *p, int k, int s, const struct pipe_tok *t, int n,
			int n_out, long bucket, char *err, size_t errlen)
{
	struct stage *st = &p->st[k];
	uint64_t hid = (uint64_t)n * p->m->dim * sizeof(float), out_len;
	uint32_t bos[4] = { st->weights.handle, st->kv.handle, st->in_card[s].handle,
			    st->out_card[s].handle };
	struct rk_sync in[3], out;
	int n_in;

	/* Micro-batch i-n must be done with slot s on this card (collected). */
	if (!st->checked[s] && slot_jobs_ok(p, st, s, true, err, errlen))
		return -1;
	st->checked[s] = false;
	st->bucket_of[s] = bucket;
	st->pos_of[s] = t[0].pos;
	st->submit_ns[s] = rk_now_ns();
	write_program(p, st, s, t, n);

	/* Program + token table + hidden states in. */
	n_in = 0;
	in[n_in++] = (struct rk_sync){ st->sy_exec[s], 0 };
	if (k > 0)	/* stage k-1's out[s]: its OUT of micro-batch i, just queued */
		in[n_in++] = (struct rk_sync){ st->sy_prev[s], 0 };
	out = (struct rk_sync){ st->sy_in[s], 0 };
	/* With P2P stage k-1 wrote the hidden states into in_card itself. */
	if (rk_submit_copy(st->card, st->in_host[s].handle, 0, st->in_card[s].handle, 0,
			   st->prog_size + (st->p2p_in ? 0 : hid), in, n_in, &out, 1, NULL))
		goto fail;

	/* EXEC. */
	in[0] = (struct rk_sync){ st->sy_in[s], 0 };
	in[1] = (struct rk_sync){ st->sy_exec[(s + p->nslot - 1) % p->nslot], 0 };
	in[2] = (struct rk_sync){ st->sy_out[s], 0 };
	out = (struct rk_sync){ st->sy_exec[s], 0 };
	if (rk_submit_exec(st->card, st->in_card[s].handle, 0, st->prog_bytes,
			   bos, 4, in, 3, &out, 1, NULL))
		goto fail;

	/* Hidden states (behind stage k+1's program area) or logits rows out. */
	n_in = 0;
	in[n_in++] = (struct rk_sync){ st->sy_exec[s], 0 };
	/*
	 * Stage k+1 may still be reading micro-batch i-n from host slot s:
	 * wait for its input COPY (stage k+1's in[s] still holds that fence).
	 */
	if (!st->last && !p->st[k + 1].checked[s])
		in[n_in++] = (struct rk_sync){ st->sy_next[s], 0 };
	/* No logits rows: a token-sized copy keeps the job graph uniform. */
	out_len = st->last ? (n_out ? (uint64_t)n_out * p->row_floats * sizeof(float) : 4) : hid;
	st->in_bytes_of[s] = st->prog_size + (st->p2p_in ? 0 : hid);
	st->out_bytes_of[s] = out_len;
	out = (struct rk_sync){ st->sy_out[s], 0 };
	if (rk_submit_copy(st->card, st->out_card[s].handle, 0,
			   !st->last && p->st[k + 1].p2p_in ? st->out_peer[s].handle :
			   st->out_host[s].handle,
			   st->last ? 0 : p->st[k + 1].prog_size, out_len, in, n_in, &out, 1, NULL))
		goto fail;
	return 0;
fail:
	return pipe_err(err, errlen, st, "micro-batch %ld: %s", bucket, rk_error());
}

int pipe_n_stages(const struct pipeline *p)
{
	return p->n_stages;
}

int pipe_depth(const struct pipeline *p)
{
	return p->n_stages > 1 ? p->n_stages : 2;
}

int pipe_exec_cost(struct pipeline *p, int *n_tok, int64_t *ns)
{
	if (!p->cost_n)
		return 0;
	*n_tok = p->cost[p->cost_head].n_tok;
	*ns = p->cost[p->cost_head].ns;
	p->cost_head = (p->cost_head + 1) % PIPE_COST_RING;
	p->cost_n--;
	return 1;
}

int pipe_in_flight(const struct pipeline *p)
{
	return p->n_flight;
}

const float *pipe_hidden(const struct pipeline *p)
{
	return p->hid;
}

void pipe_set_trace(struct pipeline *p, pipe_trace_fn fn, void *user)
{
	p->trace = fn;
	p->trace_user = user;
}

void pipe_get_stats(const struct pipeline *p, struct pipe_stats *st)
{
	int k;

	*st = p->stats;
	st->host_ns -= st->wait_ns;
	for (k = 0; k < p->n_stages && k < PLAN_MAX_CARDS; k++)
		st->busy_ns[k] = p->st[k].busy_ns;
}

/* Arguments of pipe_submit(); -1 with a message, nothing changed. */
static int check_batch(const struct pipeline *p, const struct pipe_tok *t, int n, int *n_out,
		       char *err, size_t errlen)
{
	int i;

	if (n < 1 || n > (int)p->o.bucket)
		return pipe_err(err, errlen, NULL, "micro-batch of %d tokens (1..%u)", n,
				p->o.bucket);
	if (p->n_flight >= pipe_depth(p))
		return pipe_err(err, errlen, NULL, "%d micro-batches already in flight",
				p->n_flight);
	*n_out = 0;
	for (i = 0; i < n; i++) {
		if (t[i].token < 0 || (uint32_t)t[i].token >= p->m->n_vocab)
			return pipe_err(err, errlen, NULL, "token id %d outside the vocabulary (%u)",
					t[i].token, p->m->n_vocab);
		if (t[i].pos < 0 || (uint32_t)t[i].pos >= p->o.n_ctx)
			return pipe_err(err, errlen, NULL,
					"position %d does not fit the context of %u", t[i].pos,
					p->o.n_ctx);
		if (t[i].seq >= p->o.n_seq)
			return pipe_err(err, errlen, NULL, "sequence %u of %u", t[i].seq,
					p->o.n_seq);
		if (t[i].flags & (PIPE_TOK_SNAPSHOT | PIPE_TOK_RESTORE) ?
		    !p->hybrid || t[i].aux == t[i].seq || t[i].aux >= p->o.n_seq + p->o.n_snap :
		    t[i].aux != 0)
			return pipe_err(err, errlen, NULL,
					"token %d: snapshot block %u (%s model, %u sequences, %u snapshots)",
					i, t[i].aux, p->hybrid ? "hybrid" : "not a hybrid",
					p->o.n_seq, p->o.n_snap);
		*n_out += !!(t[i].flags & PIPE_TOK_LOGITS);
	}
	if (*n_out > p->max_rows)
		return pipe_err(err, errlen, NULL, "%d logits rows in one micro-batch (at most %d)",
				*n_out, p->max_rows);
	return 0;
}

int pipe_submit(struct pipeline *p, const struct pipe_tok *t, int n,
		char *err, size_t errlen)
{
	const struct llm_model *m = p->m;
	struct stage *first = &p->st[0];
	int64_t t0 = rk_now_ns();
	long bucket = p->n_buckets;
	int s = (int)(bucket % p->nslot), n_out = 0, k, i, ret = -1;
	float *dst;

	if (p->failed[0])
		return pipe_err(err, errlen, NULL,
				"pipeline unusable after an earlier job failure: %s", p->failed);
	if (check_batch(p, t, n, &n_out, err, errlen))
		return -1;
	/* Slot s gets new fences: micro-batch i-n's timestamps are read now. */
	if (p->n_acct <= bucket - p->nslot && account_pending(p, err, errlen) < 0)
		goto out;
	/* The host rewrites input slot s: micro-batch i-n must have read it. */
	if (!first->checked[s] && slot_jobs_ok(p, first, s, true, err, errlen))
		goto out;
	dst = (float *)(first->in_map[s] + first->prog_size);
	for (i = 0; i < n; i++)
		llm_embed(m, t[i].token, dst + (size_t)i * m->dim);
	for (k = 0; k < p->n_stages; k++) {
		if (submit_stage(p, k, s, t, n, n_out, bucket, err, errlen))
			goto out;
		p->stats.jobs += 3;
	}
	p->rows_of[s] = n_out;
	p->ntok_of[s] = n;
	p->n_buckets++;
	p->n_flight++;
	p->stats.forwards++;
	ret = 0;
out:
	p->stats.host_ns += rk_now_ns() - t0;
	/* Queued jobs may run on bad data: the KV caches are suspect. */
	if (ret)
		snprintf(p->failed, sizeof(p->failed), "%s", err ? err : "job failure");
	return ret;
}

/*
 * The micro-batch @bucket in slot @s failed (BO_WAIT said @w, the jobs
 * @status): the first failed (or, after a timeout, stuck) job in pipeline
 * order names the cause. Return: -1, or 0 when a wait that timed out is
 * followed by every job found done and good.
 */
static int collect_failed(struct pipeline *p, int s, long bucket, int w, int status,
			  char *err, size_t errlen)
{
	struct stage *last = &p->st[p->n_stages - 1];
	int k;

	if (w && w != -ETIMEDOUT)
		return pipe_err(err, errlen, last, "micro-batch %ld: waiting for the output: %s",
				bucket, rk_error());
	for (k = 0; k < p->n_stages; k++)
		if (slot_jobs_ok(p, &p->st[k], s, w != 0, err, errlen))
			return -1;
	if (!status)
		return 0;
	return pipe_err(err, errlen, last, "output COPY (micro-batch %ld, pos %d): job failed: %s (%d)",
			bucket, last->pos_of[s], strerror(-status), status);
}

int pipe_collect(struct pipeline *p, float *logits, int max_rows, char *err, size_t errlen)
{
	struct stage *last = &p->st[p->n_stages - 1];
	int64_t t0 = rk_now_ns();
	long bucket;
	int s, k, rows, w, status = 0, ret = -1;

	if (p->failed[0])
		return pipe_err(err, errlen, NULL,
				"pipeline unusable after an earlier job failure: %s", p->failed);
	if (!p->n_flight)
		return pipe_err(err, errlen, NULL, "no micro-batch in flight");
	bucket = p->n_buckets - p->n_flight;
	s = (int)(bucket % p->nslot);
	rows = p->rows_of[s];
	if (rows > max_rows || (rows && !logits))
		return pipe_err(err, errlen, NULL, "room for %d logits rows, %d needed", max_rows,
				rows);
	/*
	 * The last job, the output COPY of the last stage, waits for every
	 * other job of the micro-batch (and the older ones): its status is
	 * theirs. Still running? Then the host reads the timestamps of the
	 * micro-batches collected before while the cards work, and waits.
	 */
	w = rk_bo_wait(last->card, &last->out_host[s], 0, &status);
	if (w == -ETIMEDOUT) {
		int64_t tw;

		if (account_pending(p, err, errlen) < 0)
			goto out;
		tw = rk_now_ns();
		w = rk_bo_wait(last->card, &last->out_host[s],
			       tw + (int64_t)p->o.timeout_ms * 1000000, &status);
		p->stats.wait_ns += rk_now_ns() - tw;
	}
	if (w || status) {
		if (collect_failed(p, s, bucket, w, status, err, errlen))
			goto out;
	} else {
		for (k = 0; k < p->n_stages; k++)
			p->st[k].checked[s] = true;
	}
	if (rows)
		memcpy(logits, last->out_host[s].map,
		       (size_t)rows * p->m->n_vocab * sizeof(float));
	if (rows && p->hid)	/* F_HIDDEN: the hidden rows follow the logits rows */
		memcpy(p->hid, (const float *)last->out_host[s].map + (size_t)rows * p->m->n_vocab,
		       (size_t)rows * p->m->dim * sizeof(float));
	p->n_flight--;
	ret = rows;
out:
	p->stats.host_ns += rk_now_ns() - t0;
	if (ret < 0)
		snprintf(p->failed, sizeof(p->failed), "%s", err ? err : "job failure");
	return ret;
}

int pipe_forward(struct pipeline *p, const int32_t *tokens, int n, int pos,
		 float *logits, char *err, size_t errlen)
{
	struct pipe_tok *t;
	int done = 0, i, b = (int)p->o.bucket, ret = -1;

	if (p->failed[0])
		return pipe_err(err, errlen, NULL,
				"pipeline unusable after an earlier job failure: %s", p->failed);
	if (p->n_flight)
		return pipe_err(err, errlen, NULL, "pipe_forward with micro-batches in flight");
	if (n < 1 || pos < 0 || (uint64_t)pos + n > p->o.n_ctx)
		return pipe_err(err, errlen, NULL,
				"forward of %d tokens at position %d does not fit the context of %u",
				n, pos, p->o.n_ctx);
	for (i = 0; i < n; i++)
		if (tokens[i] < 0 || (uint32_t)tokens[i] >= p->m->n_vocab)
			return pipe_err(err, errlen, NULL, "token id %d outside the vocabulary (%u)",
					tokens[i], p->m->n_vocab);
	t = calloc((size_t)b, sizeof(*t));
	if (!t)
		return pipe_err(err, errlen, NULL, "out of host memory");
	while (done < n) {
		int nb = n - done < b ? n - done : b;

		/* Full pipeline: collect the oldest bucket only when it must. */
		if (p->n_flight == pipe_depth(p) && pipe_collect(p, NULL, 0, err, errlen) < 0)
			goto out;
		for (i = 0; i < nb; i++)
			t[i] = (struct pipe_tok){ .token = tokens[done + i], .pos = pos + done + i,
						  .flags = done + i == n - 1 ? PIPE_TOK_LOGITS : 0 };
		if (pipe_submit(p, t, nb, err, errlen))
			goto out;
		done += nb;
	}
	while (p->n_flight > 1)
		if (pipe_collect(p, NULL, 0, err, errlen) < 0)
			goto out;
	ret = pipe_collect(p, logits, 1, err, errlen) == 1 ? 0 : -1;
out:
	free(t);
	return ret;
}
