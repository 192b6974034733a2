// SPDX-License-Identifier: MIT
/*
 * Deployment prediction (predict.h): the model's layers for the cost
 * function, a simulation of the pipeline's job graph on modelled queue
 * clocks, and the scenarios plan --predict reports.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict.h"
#include "rk1828/program.h"

static const uint32_t ttft_prompts[PREDICT_N_TTFT] = { 1024, 4096, 8192 };
static const uint32_t sessions[PREDICT_N_SESSIONS] = { 1, 2, 4 };

uint32_t predict_ttft_prompt(int i)
{
	return i >= 0 && i < PREDICT_N_TTFT ? ttft_prompts[i] : 0;
}

uint32_t predict_sessions(int i)
{
	return i >= 0 && i < PREDICT_N_SESSIONS ? sessions[i] : 0;
}

static void add_mat(struct cost_layer *c, const struct gguf_tensor *t)
{
	if (!t || c->n_mats == COST_MAX_MATS)
		return;
	c->mat[c->n_mats++] = (struct cost_matrix){ (uint32_t)t->ne[1], (uint32_t)t->ne[0],
						    t->nbytes };
}

void predict_cost_layer(const struct llm_model *m, uint32_t l, struct cost_layer *c)
{
	const struct llm_layer *L = &m->layers[l];
	const struct gguf_tensor *small[] = {
		L->attn_norm, L->ffn_norm, L->q_norm, L->k_norm, L->bq, L->bk, L->bv,
		L->ssm_conv, L->ssm_dt, L->ssm_a, L->ssm_norm,
	};
	size_t i;

	memset(c, 0, sizeof(*c));
	c->dim = m->dim;
	c->ffn_dim = m->ffn_dim;
	c->kv_elt_bytes = sizeof(float);	/* predict_run() sets the plan's type */
	c->state_elt_bytes = sizeof(float);
	if (L->kind == LLM_LAYER_DELTANET) {
		/* Gated DeltaNet (qwen35): as emulator/exec_cost.c reads the program. */
		c->mixer = COST_MIX_DELTANET;
		c->dn_head_dim = m->ssm_state;
		c->dn_k_heads = m->ssm_k_heads;
		c->dn_v_heads = m->ssm_v_heads;
		c->dn_conv = m->ssm_conv;
		add_mat(c, L->ssm_qkv);
		add_mat(c, L->ssm_gate);
		add_mat(c, L->ssm_beta);
		add_mat(c, L->ssm_alpha);
		add_mat(c, L->ssm_out);
	} else {
		c->mixer = COST_MIX_ATTN;
		c->n_heads = m->n_heads;
		c->n_kv_heads = m->n_kv_heads;
		c->head_dim = m->head_dim;
		c->qk_norm = L->q_norm != NULL;
		c->bias = L->bq != NULL;
		/* qwen35: wq also yields the output gate (2 * n_heads * head_dim rows). */
		c->gate = m->attn_gate;
		add_mat(c, L->wq);
		add_mat(c, L->wk);
		add_mat(c, L->wv);
		add_mat(c, L->wo);
	}
	add_mat(c, L->ffn_gate);
	add_mat(c, L->ffn_up);
	add_mat(c, L->ffn_down);
	for (i = 0; i < sizeof(small) / sizeof(small[0]); i++)
		c->small_bytes += llm_tensor_card_bytes(small[i], true);
}

void predict_cost_head(const struct llm_model *m, struct cost_head *h)
{
	h->dim = m->dim;
	h->n_vocab = m->n_vocab;
	h->bytes = llm_tensor_card_bytes(m->output, false);
}

/* Most slots a stage has (plan_slots() caps at 8). */
#define PSIM_SLOTS	8

/**
 * struct psim_stage - one card's modelled queues
 * @first, @count: its blocks
 * @last: it runs the output head
 * @prog_size: bytes of program and token table in front of the hidden
 *	states of its input COPY (as pipeline_setup.c lays them out)
 * @link: its card's host link
 * @copy_free, @exec_free: when its COPY and COMPUTE queues are next free
 * @in_end, @exec_end, @out_end: per slot, when the jobs of the slot's
 *	latest micro-batch end
 * @busy: EXEC time so far
 */
struct psim_stage {
	uint32_t first, count;
	bool last;
	uint64_t prog_size;
	enum cost_link link;
	double copy_free, exec_free;
	double in_end[PSIM_SLOTS], exec_end[PSIM_SLOTS], out_end[PSIM_SLOTS];
	double busy;
};

struct psim {
	const struct card_profile *prof;
	uint32_t dim, vocab;
	int n_stages, nslot, depth;
	long n_mb;
	double done[PSIM_SLOTS];
	const struct cost_layer *layers;
	struct cost_head head;
	struct psim_stage st[];
};

struct psim *psim_create(const struct cost_layer *layers, uint32_t n_layers,
			 const struct cost_head *head, const struct plan *plan,
			 const struct predict_opts *o)
{
	struct psim *s;
	int k;

	if (plan->n_segs < 1 || plan->n_segs > PLAN_MAX_CARDS || !n_layers)
		return NULL;
	for (k = 0; k < plan->n_segs; k++)
		if (plan->seg[k].first < 0 || plan->seg[k].count < 1 ||
		    (uint32_t)(plan->seg[k].first + plan->seg[k].count) > n_layers)
			return NULL;
	s = calloc(1, sizeof(*s) + (size_t)plan->n_segs * sizeof(s->st[0]));
	if (!s)
		return NULL;
	s->layers = layers;
	s->head = *head;
	s->prof = o->prof;
	s->dim = head->dim;
	s->vocab = head->n_vocab;
	s->n_stages = plan->n_segs;
	s->nslot = (int)plan_slots(plan->n_segs);
	s->depth = plan->n_segs > 1 ? plan->n_segs : 2;
	for (k = 0; k < plan->n_segs; k++) {
		struct psim_stage *st = &s->st[k];

		st->first = (uint32_t)plan->seg[k].first;
		st->count = (uint32_t)plan->seg[k].count;
		st->last = k == plan->n_segs - 1;
		st->link = o->card_links ? o->card_links[k] : o->link;
		st->prog_size = (plan_prog_bytes(st->count, false) +
				 (uint64_t)o->bucket * sizeof(struct rk1828_prog_token) + 63) & ~63ULL;
	}
	return s;
}

void psim_destroy(struct psim *s)
{
	free(s);
}

int psim_depth(const struct psim *s)
{
	return s->depth;
}

double psim_busy_ns(const struct psim *s, int k)
{
	return k >= 0 && k < s->n_stages ? s->st[k].busy : 0;
}

/* The bytes of a stage's output COPY: hidden states, or the logits (4 bytes without). */
static uint64_t stage_out_bytes(const struct psim *s, const struct psim_stage *st,
				const struct cost_batch *b)
{
	if (!st->last)
		return (uint64_t)b->n_tokens * s->dim * sizeof(float);
	return b->n_logits ? (uint64_t)b->n_logits * s->vocab * sizeof(float) : 4;
}

double psim_stage_ns(const struct psim *s, int k, const struct cost_batch *b)
{
	const struct psim_stage *st;
	uint64_t hid, out;

	if (k < 0 || k >= s->n_stages)
		return 0;
	st = &s->st[k];
	hid = (uint64_t)b->n_tokens * s->dim * sizeof(float);
	out = stage_out_bytes(s, st, b);
	return cost_link_ns(s->prof, st->link, st->prog_size + hid) +
	       cost_exec_ns(s->prof, s->layers + st->first, st->count,
			    st->last ? &s->head : NULL, b) +
	       cost_link_ns(s->prof, st->link, out);
}

static double max3(double a, double b, double c)
{
	double m = a > b ? a : b;

	return m > c ? m : c;
}

/* The IN, EXEC and OUT of one stage (the dependencies of pipeline.c). */
static void stage_jobs(struct psim *s, int k, int slot, double t, const struct cost_batch *b)
{
	struct psim_stage *st = &s->st[k];
	uint64_t hid = (uint64_t)b->n_tokens * s->dim * sizeof(float), out;
	double in_start, ex_start, out_start, ex;

	/* IN waits for EXEC i-n (slot reuse) and stage k-1's OUT of this one. */
	in_start = max3(t, st->copy_free, st->exec_end[slot]);
	if (k > 0 && s->st[k - 1].out_end[slot] > in_start)
		in_start = s->st[k - 1].out_end[slot];
	st->copy_free = in_start + cost_link_ns(s->prof, st->link, st->prog_size + hid);
	/* EXEC waits for its input, EXEC i-1 and OUT i-n (output slot drained). */
	ex_start = max3(st->copy_free, st->exec_free, st->out_end[slot]);
	ex = cost_exec_ns(s->prof, s->layers + st->first, st->count,
			  st->last ? &s->head : NULL, b);
	st->exec_free = ex_start + ex;
	st->busy += ex;
	/* OUT waits for the EXEC and for stage k+1's IN i-n (host slot read). */
	out_start = max3(st->exec_free, st->copy_free,
			 st->last ? 0 : s->st[k + 1].in_end[slot]);
	out = stage_out_bytes(s, st, b);
	st->in_end[slot] = st->copy_free;
	st->exec_end[slot] = st->exec_free;
	st->copy_free = out_start + cost_link_ns(s->prof, st->link, out);
	st->out_end[slot] = st->copy_free;
}

double psim_submit(struct psim *s, double t, const struct cost_batch *b)
{
	int slot = (int)(s->n_mb % s->nslot), k;

	/* pipe_submit() refuses more than pipe_depth() in flight: the host
	 * waits for the oldest first.
	 */
	if (s->n_mb >= s->depth) {
		double oldest = s->done[(s->n_mb - s->depth) % s->nslot];

		if (oldest > t)
			t = oldest;
	}
	for (k = 0; k < s->n_stages; k++)
		stage_jobs(s, k, slot, t, b);
	s->done[slot] = s->st[s->n_stages - 1].out_end[slot];
	s->n_mb++;
	return s->done[slot];
}

double psim_prefill(struct psim *s, uint32_t n, uint32_t bucket)
{
	double end = 0;
	uint32_t done;

	for (done = 0; done < n; done += bucket) {
		uint32_t nb = n - done < bucket ? n - done : bucket;
		struct cost_batch b = { 0 };

		cost_batch_add_seq(&b, nb, done, done + nb == n);
		end = psim_submit(s, 0, &b);
	}
	return end;
}

double psim_decode(struct psim *s, double t, uint32_t pos, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct cost_batch b = { 0 };

		cost_batch_add_seq(&b, 1, pos + i, 1);
		t = psim_submit(s, t, &b);
	}
	return t;
}

double psim_aggregate(struct psim *s, uint32_t n_sess, uint32_t pos)
{
	enum { ROUNDS = 24, WARM = 4 };
	int cap = s->n_stages > 1 ? (int)((n_sess + s->n_stages - 1) / s->n_stages) : (int)n_sess;
	int groups = ((int)n_sess + cap - 1) / cap, r, g;
	double ready[PLAN_MAX_CARDS] = { 0 }, t_warm = 0, t_end = 0;
	uint32_t toks = 0;

	for (r = 0; r < ROUNDS; r++) {
		for (g = 0; g < groups; g++) {
			int n = g == groups - 1 ? (int)n_sess - cap * (groups - 1) : cap, i;
			struct cost_batch b = { 0 };

			for (i = 0; i < n; i++)
				cost_batch_add_seq(&b, 1, pos + r, 1);
			ready[g] = psim_submit(s, ready[g], &b);
			if (r >= WARM)
				toks += n;
		}
		t_end = ready[groups - 1];
		if (r == WARM - 1)
			t_warm = t_end;
	}
	return t_end > t_warm ? toks / ((t_end - t_warm) / 1e9) : 0;
}

int predict_run_layers(const struct cost_layer *layers, uint32_t n_layers,
		       const struct cost_head *head, const struct plan *plan,
		       const struct predict_opts *o, struct prediction *out,
		       char *err, size_t errlen)
{
	struct psim *s;
	double t, t0;
	int i, k;

	memset(out, 0, sizeof(*out));
	if (!o->bucket || !o->prof) {
		snprintf(err, errlen, "predict: no bucket size or profile");
		return -1;
	}
	for (i = 0; i < PREDICT_N_TTFT; i++) {
		out->ttft_ms[i] = NAN;
		if (ttft_prompts[i] > o->n_ctx)
			continue;
		s = psim_create(layers, n_layers, head, plan, o);
		if (!s)
			goto oom;
		out->ttft_ms[i] = psim_prefill(s, ttft_prompts[i], o->bucket) / 1e6;
		psim_destroy(s);
	}

	/*
	 * The vendor's conditions: a PREDICT_PROMPT prompt, PREDICT_GEN tokens,
	 * each figure only where its tokens fit the context (else NAN).
	 */
	out->prefill_tok_s = out->tpot_ms = out->decode_tok_s = NAN;
	for (k = 0; k < plan->n_segs; k++)
		out->card_busy[k] = NAN;
	for (i = 0; i < PREDICT_N_SESSIONS; i++)
		out->aggregate_tok_s[i] = NAN;
	if (PREDICT_PROMPT > o->n_ctx)
		goto spec;
	s = psim_create(layers, n_layers, head, plan, o);
	if (!s)
		goto oom;
	t0 = t = psim_prefill(s, PREDICT_PROMPT, o->bucket);
	out->prefill_tok_s = PREDICT_PROMPT / (t / 1e9);
	for (k = 0; k < plan->n_segs; k++)
		out->card_busy[k] = psim_busy_ns(s, k) / t;
	if (PREDICT_PROMPT + PREDICT_GEN <= o->n_ctx) {
		t = psim_decode(s, t, PREDICT_PROMPT, PREDICT_GEN);
		out->tpot_ms = (t - t0) / PREDICT_GEN / 1e6;
		out->decode_tok_s = 1000.0 / out->tpot_ms;
	}
	psim_destroy(s);

	for (i = 0; i < PREDICT_N_SESSIONS && PREDICT_PROMPT + PREDICT_GEN <= o->n_ctx; i++) {
		s = psim_create(layers, n_layers, head, plan, o);
		if (!s)
			goto oom;
		out->aggregate_tok_s[i] = psim_aggregate(s, sessions[i], PREDICT_PROMPT);
		psim_destroy(s);
	}
spec:
	if (!predict_spec(layers, n_layers, head, plan, o, out))
		return 0;
oom:
	snprintf(err, errlen, "predict: out of memory or a plan that does not match the model");
	return -1;
}

/*
 * Aggregate decode of S sessions needs S KV caches (and DeltaNet states)
 * on every card: where they do not fit the plan's cards, it is not
 * predicted.
 */
static void drop_unfit_sessions(const struct llm_model *m, const struct plan *plan,
				const struct plan_sizes *sizes, struct prediction *out)
{
	int i, k;

	for (i = 0; i < PREDICT_N_SESSIONS; i++) {
		struct plan_sizes sz = *sizes;

		if (sz.n_seq < sessions[i])
			sz.n_seq = sessions[i];
		for (k = 0; k < plan->n_segs; k++)
			if (plan_seg_need(m, &plan->seg[k], plan->n_segs, &sz) > plan->seg[k].free)
				out->agg_nofit[i] = true;
		if (out->agg_nofit[i])
			out->aggregate_tok_s[i] = NAN;
	}
}

double predict_kv_elt_bytes(const struct llm_model *m, int kv_type)
{
	uint64_t kv_dim = (uint64_t)m->n_kv_heads * m->head_dim;
	size_t row = kv_dim ? rk1828_kv_row_bytes(kv_type, (size_t)kv_dim) : 0;

	return row ? (double)row / (double)kv_dim : sizeof(float);
}

int predict_run(const struct llm_model *m, const struct plan *plan,
		const struct predict_opts *o, struct prediction *out,
		char *err, size_t errlen)
{
	struct cost_layer *layers = calloc(m->n_layers ? m->n_layers : 1, sizeof(*layers));
	struct cost_head head;
	uint32_t l;
	int ret;

	if (!layers) {
		snprintf(err, errlen, "predict: out of memory");
		return -1;
	}
	for (l = 0; l < m->n_layers; l++) {
		predict_cost_layer(m, l, &layers[l]);
		if (o->sizes)
			layers[l].kv_elt_bytes = predict_kv_elt_bytes(m, o->sizes->kv_type);
	}
	predict_cost_head(m, &head);
	ret = predict_run_layers(layers, m->n_layers, &head, plan, o, out, err, errlen);
	free(layers);
	if (!ret && o->sizes)
		drop_unfit_sessions(m, plan, o->sizes, out);
	return ret;
}

/* A number, or null for NAN (a figure that is not predicted). */
static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(round(v * 100.0) / 100.0);
}

/* "spec": the speculative figures of @pr in @o; false when out of memory. */
static bool spec_json(json_t *o, const struct prediction *pr)
{
	double x = pr->spec_decode_tok_s / pr->decode_tok_s;

	return !json_object_set_new(o, "spec",
				    json_pack("{s:i, s:f, s:o, s:o, s:o, s:o}", "k", (int)pr->spec_k,
					      "accept", pr->spec_accept, "tokens_per_pass",
					      num_or_null(pr->spec_tokens_per_pass),
					      "verify_ratio", num_or_null(pr->spec_verify_ratio),
					      "decode_tok_s", num_or_null(pr->spec_decode_tok_s),
					      "speedup", num_or_null(x)));
}

char *predict_json(const struct plan *plan, const struct prediction *pr)
{
	json_t *o = json_object(), *segs = json_array(), *t, *agg;
	char key[16], *s;
	int i;

	if (!o || !segs)
		goto fail;
	for (i = 0; i < plan->n_segs; i++) {
		const struct plan_seg *g = &plan->seg[i];

		if (json_array_append_new(segs, json_pack("{s:i,s:i,s:i,s:b,s:I}", "card", g->card_id,
							  "first", g->first, "last",
							  g->first + g->count - 1, "output",
							  g->output, "bytes",
							  (json_int_t)g->bytes)))
			goto fail;
	}
	json_object_set_new(o, "plan", segs);
	segs = NULL;
	if (pr) {
		t = json_object();
		agg = json_object();
		if (!t || !agg) {
			json_decref(t);
			json_decref(agg);
			goto fail;
		}
		for (i = 0; i < PREDICT_N_TTFT; i++) {
			snprintf(key, sizeof(key), "%u", predict_ttft_prompt(i));
			json_object_set_new(t, key, num_or_null(pr->ttft_ms[i]));
		}
		for (i = 0; i < PREDICT_N_SESSIONS; i++) {
			snprintf(key, sizeof(key), "%u", predict_sessions(i));
			json_object_set_new(agg, key, num_or_null(pr->aggregate_tok_s[i]));
		}
		json_object_set_new(o, "ttft_ms", t);
		json_object_set_new(o, "prefill_tok_s", num_or_null(pr->prefill_tok_s));
		json_object_set_new(o, "decode_tok_s", num_or_null(pr->decode_tok_s));
		json_object_set_new(o, "tpot_ms", num_or_null(pr->tpot_ms));
		json_object_set_new(o, "aggregate_decode_tok_s", agg);
		if (pr->spec_k && !spec_json(o, pr))
			goto fail;
	}
	s = json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(10));
	json_decref(o);
	return s;
fail:
	json_decref(segs);
	json_decref(o);
	return NULL;
}

/* The speculative line of predict_print(). */
static void spec_print(FILE *f, const struct prediction *pr)
{
	fprintf(f, "  speculative decoding, %u drafts a pass accepted at %.2f: %.2f tokens a pass",
		pr->spec_k, pr->spec_accept, pr->spec_tokens_per_pass);
	if (isnan(pr->spec_decode_tok_s)) {
		fprintf(f, ", decode - (over --ctx)\n");
		return;
	}
	if (!isnan(pr->spec_verify_ratio))
		fprintf(f, ", verify pass %.2fx a decode step", pr->spec_verify_ratio);
	fprintf(f, ", decode %.2f tok/s", pr->spec_decode_tok_s);
	if (!isnan(pr->decode_tok_s))
		fprintf(f, " (%.2fx)", pr->spec_decode_tok_s / pr->decode_tok_s);
	fprintf(f, "\n");
}

void predict_print(FILE *f, const struct plan *plan, const struct prediction *pr,
		   const struct predict_opts *o)
{
	int i;

	fprintf(f, "prediction: profile %s (%s), link %s, bucket %u; card time only (host "
		"time not included)\n", o->prof->name, o->prof->revision,
		o->card_links ? "per card" : cost_link_name(o->link), o->bucket);
	fprintf(f, "  TTFT:");
	for (i = 0; i < PREDICT_N_TTFT; i++) {
		if (isnan(pr->ttft_ms[i]))
			fprintf(f, "%s %u tokens: - (over --ctx %u)", i ? "," : "",
				predict_ttft_prompt(i), o->n_ctx);
		else
			fprintf(f, "%s %u tokens %.0f ms", i ? "," : "", predict_ttft_prompt(i),
				pr->ttft_ms[i]);
	}
	if (isnan(pr->prefill_tok_s))
		fprintf(f, "\n  prefill -, decode -");
	else if (isnan(pr->decode_tok_s))
		fprintf(f, "\n  prefill %.1f tok/s, decode -", pr->prefill_tok_s);
	else
		fprintf(f, "\n  prefill %.1f tok/s, decode %.2f tok/s (TPOT %.2f ms)",
			pr->prefill_tok_s, pr->decode_tok_s, pr->tpot_ms);
	fprintf(f, " with a %d-token prompt and %d generated", PREDICT_PROMPT, PREDICT_GEN);
	if (isnan(pr->decode_tok_s))
		fprintf(f, ": - is over --ctx %u (--ctx %d or more predicts them)", o->n_ctx,
			PREDICT_PROMPT + PREDICT_GEN);
	fprintf(f, "\n  aggregate decode:");
	for (i = 0; i < PREDICT_N_SESSIONS; i++) {
		fprintf(f, "%s %u session%s", i ? "," : "", predict_sessions(i),
			predict_sessions(i) == 1 ? "" : "s");
		if (!isnan(pr->aggregate_tok_s[i]))
			fprintf(f, " %.1f tok/s", pr->aggregate_tok_s[i]);
		else if (pr->agg_nofit[i])
			fprintf(f, " - (their KV caches do not fit this plan; --parallel %u plans for them)",
				predict_sessions(i));
		else
			fprintf(f, " -");
	}
	fprintf(f, "\n  NPU busy during that prefill:");
	for (i = 0; i < plan->n_segs; i++)
		if (isnan(pr->card_busy[i]))
			fprintf(f, "%s card%d -", i ? "," : "", plan->seg[i].card_id);
		else
			fprintf(f, "%s card%d %.0f %%", i ? "," : "", plan->seg[i].card_id,
				100 * pr->card_busy[i]);
	fprintf(f, "\n");
	if (pr->spec_k)
		spec_print(f, pr);
}
