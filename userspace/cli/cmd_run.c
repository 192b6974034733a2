// SPDX-License-Identifier: MIT
/*
 * rk1828-llm run: one completion through the engine (engine.h) with one
 * slot. The text streams to stdout as it is generated and one stats line
 * goes to stderr; with --json nothing streams and one JSON object is
 * printed at the end:
 *
 *   {"prompt_ids": [...], "ids": [...], "text": "...",
 *    "stats": {"prompt_tokens", "generated_tokens", "finish", "ttft_ms",
 *              "tpot_ms", "prefill_tok_s", "decode_tok_s", "plan", "draft_n",
 *              "draft_n_accepted", "draft_acceptance"}}  (the drafts of --spec:
 *              verified, accepted, and accepted / verified, 0 without drafts)
 *
 * ids are the generated tokens (an end-of-generation token that stopped
 * the run is not among them), text their decoded text (valid UTF-8).
 */
#include <endian.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engine.h"
#include "gguf.h"
#include "jsonmatch.h"

static int dump_logits(const char *path, const int32_t *toks, int n, const float *logits,
		       int n_vocab)
{
	FILE *f = fopen(path, "wb");
	uint32_t u;
	int i, ok = 1;

	if (!f) {
		fprintf(stderr, "rk1828-llm: %s: %s\n", path, strerror(errno));
		return -1;
	}
	u = htole32((uint32_t)n);
	ok &= fwrite(&u, 4, 1, f) == 1;
	for (i = 0; i < n; i++) {
		u = htole32((uint32_t)toks[i]);
		ok &= fwrite(&u, 4, 1, f) == 1;
	}
	u = htole32((uint32_t)n_vocab);
	ok &= fwrite(&u, 4, 1, f) == 1;
	for (i = 0; i < n_vocab; i++) {
		memcpy(&u, &logits[i], 4);
		u = htole32(u);
		ok &= fwrite(&u, 4, 1, f) == 1;
	}
	if (fclose(f))
		ok = 0;
	if (!ok) {
		fprintf(stderr, "rk1828-llm: %s: write failed\n", path);
		return -1;
	}
	return 0;
}

/**
 * struct run_out - what cmd_run() learns from the engine's events
 * @mu, @cv, @done: the DONE handshake (events come on the engine thread)
 * @first: the first text arrived (@at_first: the stats then)
 * @json: collect @text and @ids instead of printing
 * @text, @len, @cap: generated text (--json)
 * @ids, @n_ids, @cap_ids: generated ids (--json)
 * @oom: collecting failed
 * @last: the DONE event (pointers cleared)
 */
struct run_out {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done, first, json, oom;
	struct engine *e;
	char *text;
	size_t len, cap;
	int32_t *ids;
	int n_ids, cap_ids;
	struct engine_event last;
	struct engine_stats at_first;
	char error[384];
};

static void collect(struct run_out *ro, const struct engine_event *ev)
{
	if (ro->len + ev->len + 1 > ro->cap) {
		size_t cap = ro->cap ? 2 * ro->cap : 4096;
		char *t;

		while (cap < ro->len + ev->len + 1)
			cap *= 2;
		t = realloc(ro->text, cap);
		if (!t) {
			ro->oom = true;
			return;
		}
		ro->text = t;
		ro->cap = cap;
	}
	memcpy(ro->text + ro->len, ev->text, ev->len);
	ro->len += ev->len;
	if (ro->n_ids + ev->n_ids > ro->cap_ids) {
		int cap = ro->cap_ids ? 2 * ro->cap_ids : 256;
		int32_t *ni;

		while (cap < ro->n_ids + ev->n_ids)
			cap *= 2;
		ni = realloc(ro->ids, (size_t)cap * sizeof(*ni));
		if (!ni) {
			ro->oom = true;
			return;
		}
		ro->ids = ni;
		ro->cap_ids = cap;
	}
	memcpy(ro->ids + ro->n_ids, ev->ids, (size_t)ev->n_ids * sizeof(*ev->ids));
	ro->n_ids += ev->n_ids;
}

static void run_event(const struct engine_event *ev, void *user)
{
	struct run_out *ro = user;

	if (ro->json) {
		collect(ro, ev);
	} else if (ev->len) {
		fwrite(ev->text, 1, ev->len, stdout);
		fflush(stdout);
	}
	if (ev->kind == ENGINE_EV_TEXT && !ro->first) {
		ro->first = true;
		engine_get_stats(ro->e, &ro->at_first);
	}
	if (ev->kind != ENGINE_EV_DONE)
		return;
	pthread_mutex_lock(&ro->mu);
	ro->last = *ev;
	ro->last.text = NULL;
	ro->last.ids = NULL;
	ro->last.logprobs = NULL;
	ro->last.error = NULL;
	if (ev->error)
		snprintf(ro->error, sizeof(ro->error), "%s", ev->error);
	ro->done = true;
	pthread_cond_signal(&ro->cv);
	pthread_mutex_unlock(&ro->mu);
}

/* The numbers of the stats line and of --json's "stats". */
/* Accepted / drafted of a request's speculation, 0 without drafts. */
static double acceptance(const struct engine_usage *u)
{
	return u->draft_n ? (double)u->draft_n_accepted / u->draft_n : 0.0;
}

struct run_numbers {
	int n_prompt, n_gen, steps;
	double ttft, tpot, prefill, decode;
};

static struct run_numbers numbers(const struct run_out *ro, int n_prompt)
{
	const struct engine_event *ev = &ro->last;
	struct run_numbers r = { .n_prompt = n_prompt, .n_gen = ev->usage.completion_tokens };
	double dec = ev->timing.decode_ms;

	/* Decode forwards: one per token after the first, and one for the EOS. */
	r.steps = ev->finish == ENGINE_FINISH_STOP ? r.n_gen : (r.n_gen ? r.n_gen - 1 : 0);
	r.ttft = ev->timing.ttft_ms;
	r.tpot = r.steps ? dec / r.steps : 0.0;
	r.prefill = r.ttft > 0 ? n_prompt * 1000.0 / r.ttft : 0.0;
	r.decode = r.steps && dec > 0 ? r.steps * 1000.0 / dec : 0.0;
	return r;
}

static void run_stats(const struct args *a, const struct session *S, struct run_out *ro,
		      int n_prompt)
{
	struct run_numbers r = numbers(ro, n_prompt);

	if (ro->last.finish == ENGINE_FINISH_LENGTH && (a->n_predict < 0 || r.n_gen < a->n_predict))
		fprintf(stderr, "rk1828-llm: context full (%u tokens); use --ctx to raise it\n",
			S->sizes.n_ctx);
	fprintf(stderr,
		"stats: TTFT %.1f ms, TPOT %.1f ms, prefill %.1f tok/s, decode %.1f tok/s, "
		"prompt %d tok, gen %d tok, plan %s\n",
		r.ttft, r.tpot, r.prefill, r.decode, n_prompt, r.n_gen, S->plan_str);
	if (a->spec)
		fprintf(stderr, "spec %s: %d drafted, %d accepted (acceptance %.2f)\n",
			spec_name((enum spec_kind)a->spec), ro->last.usage.draft_n,
			ro->last.usage.draft_n_accepted, acceptance(&ro->last.usage));
	if (a->verbose) {
		struct engine_stats st;
		const struct engine_stats *p0 = &ro->at_first;

		engine_get_stats(ro->e, &st);
		fprintf(stderr, "host: %llu forwards, %llu jobs, %.3f ms/forward host work, %.3f ms/forward waiting\n",
			(unsigned long long)st.steps, (unsigned long long)st.jobs,
			st.steps ? st.host_ns / 1e6 / st.steps : 0.0,
			st.steps ? st.wait_ns / 1e6 / st.steps : 0.0);
		/* Decode steps alone: the totals minus those at the first token. */
		fprintf(stderr, "host decode: %d steps, %.3f ms/step host work, %.3f ms/step waiting\n",
			r.steps,
			r.steps ? (st.host_ns - p0->host_ns) / 1e6 / r.steps : 0.0,
			r.steps ? (st.wait_ns - p0->wait_ns) / 1e6 / r.steps : 0.0);
	}
}

static json_t *id_array(const int32_t *ids, int n)
{
	json_t *arr = json_array();
	int i;

	for (i = 0; arr && i < n; i++)
		json_array_append_new(arr, json_integer(ids[i]));
	return arr;
}

/* --json: the whole run as one object on stdout. */
static int run_json(const struct session *S, const struct engine_info *info,
		    const struct run_out *ro, const int32_t *prompt, int n_prompt)
{
	static const char *const finish[] = {
		[ENGINE_FINISH_STOP] = "stop", [ENGINE_FINISH_LENGTH] = "length",
		[ENGINE_FINISH_CANCELLED] = "cancelled", [ENGINE_FINISH_ERROR] = "error",
	};
	struct run_numbers r = numbers(ro, n_prompt);
	json_t *o;
	char *s;

	if (ro->oom)
		return -1;
	o = json_pack("{s:o, s:o, s:s%, s:{s:i, s:i, s:s, s:f, s:f, s:f, s:f, s:s, s:i, s:i, s:f}}",
		      "prompt_ids", id_array(prompt, n_prompt),
		      "ids", id_array(ro->ids, ro->n_ids),
		      "text", ro->text ? ro->text : "", ro->len,
		      "stats", "prompt_tokens", n_prompt, "generated_tokens", r.n_gen,
		      "finish", finish[ro->last.finish], "ttft_ms", r.ttft, "tpot_ms", r.tpot,
		      "prefill_tok_s", r.prefill, "decode_tok_s", r.decode, "plan", S->plan_str,
		      "draft_n", ro->last.usage.draft_n,
		      "draft_n_accepted", ro->last.usage.draft_n_accepted,
		      "draft_acceptance", acceptance(&ro->last.usage));
	/* What the engine runs (engine_get_info()): the plan run planned. */
	if (o && json_object_set_new(o, "engine",
				     json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:s}", "plan",
					       info->plan, "ctx", (int)info->n_ctx, "bucket",
					       (int)info->bucket, "slots", info->n_slots,
					       "snapshots", (int)info->n_snap, "checkpoints",
					       (int)info->n_ckpt, "kv_type",
					       quant_kv_type_name(info->kv_type)))) {
		json_decref(o);
		return -1;
	}
	s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!s)
		return -1;
	puts(s);
	free(s);
	return 0;
}

/* The prompt: -p as it is, or as one user message through the chat template. */
static int run_prompt(const struct session *S, const struct tokenizer *tok,
		      const struct args *a, struct cli_prompt *pr)
{
	struct chat_msg m[2];
	int n = 0;

	if (!a->chat)
		return cli_encode(tok, a, a->prompt, pr);
	cli_template(S->gf, tok, &pr->ct, true);
	if (a->system)
		m[n++] = (struct chat_msg){ .role = "system", .content = a->system };
	m[n++] = (struct chat_msg){ .role = "user", .content = a->prompt };
	return cli_encode_chat(tok, a, m, n, pr);
}

/*
 * --json-schema: the schema's JSON text itself when it starts with '{'
 * (after blanks), else the file of that name. NULL with the reason printed.
 */
static struct jm_schema *load_schema(const char *arg)
{
	char err[400], *text = NULL;
	struct jm_schema *s;
	size_t len = 0;
	FILE *f;

	if (arg[strspn(arg, " \t\n")] == '{') {
		s = jm_compile_text(arg, strlen(arg), err, sizeof(err));
		if (!s)
			fprintf(stderr, "rk1828-llm: --json-schema: %s\n", err);
		return s;
	}
	f = fopen(arg, "rb");
	if (!f || getdelim(&text, &len, '\0', f) < 0) {
		fprintf(stderr, "rk1828-llm: --json-schema %s: %s\n", arg,
			f ? "cannot read it" : strerror(errno));
		if (f)
			fclose(f);
		free(text);
		return NULL;
	}
	fclose(f);
	s = jm_compile_text(text, strlen(text), err, sizeof(err));
	if (!s)
		fprintf(stderr, "rk1828-llm: --json-schema %s: %s\n", arg, err);
	free(text);
	return s;
}

static int submit(struct engine *e, const struct session *S, const struct args *a,
		  const struct cli_prompt *pr, float *logits, struct jm_schema *schema,
		  struct run_out *ro, struct engine_req **q)
{
	struct engine_request rq = { 0 };
	char err[512];
	int ret;

	rq.prompt = pr->ids;
	rq.n_prompt = pr->n;
	/* -n beyond the context: generate until it is full, as before. */
	rq.max_tokens = (uint64_t)pr->n + a->n_predict > S->sizes.n_ctx ? -1 : a->n_predict;
	rq.s = a->s;
	rq.ignore_eos = a->ignore_eos;
	rq.prompt_logits = logits;
	rq.schema = schema;
	rq.cb = run_event;
	rq.user = ro;
	ret = engine_submit(e, &rq, q, err, sizeof(err));
	if (ret)
		fprintf(stderr, "rk1828-llm: %s\n", err);
	return ret;
}

int cmd_run(const struct args *a)
{
	struct engine_opts eo;
	struct run_out ro = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER,
			      .json = a->json };
	struct cli_prompt pr = { 0 };
	struct engine_req *q = NULL;
	struct engine *e = NULL;
	struct tokenizer *tok = NULL;
	struct jm_schema *schema = NULL;
	struct session S = { 0 };
	struct engine_info info;
	float *logits = NULL;
	char err[768];
	int rc = EXIT_RUNTIME;

	/* A schema we cannot follow is refused before the cards are opened. */
	if (a->json_schema && !(schema = load_schema(a->json_schema)))
		return EXIT_USAGE;
	if (session_open(&S, a, false))
		goto out;
	tok = tok_load(S.gf, err, sizeof(err));
	if (!tok) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		goto out;
	}
	if (run_prompt(&S, tok, a, &pr))
		goto out;
	if ((uint32_t)pr.n >= S.sizes.n_ctx) {
		fprintf(stderr, "rk1828-llm: the prompt has %d tokens, the context only %u (--ctx)\n",
			pr.n, S.sizes.n_ctx);
		goto out;
	}
	logits = a->dump_logits ? calloc(S.m.n_vocab, sizeof(*logits)) : NULL;
	if (a->dump_logits && !logits) {
		fprintf(stderr, "rk1828-llm: out of memory\n");
		goto out;
	}
	cli_engine_opts(a, &S, &eo);
	if (engine_create(&e, &S.m, tok, S.cards, S.sel, S.n_sel, &eo, err, sizeof(err))) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		goto out;
	}
	/* Print and report the plan the engine settled on: the one that runs. */
	engine_get_info(e, &info);
	snprintf(S.plan_str, sizeof(S.plan_str), "%s", info.plan);
	if (a->verbose)
		fprintf(stderr, "model %s: %s, %u blocks, dim %u, vocab %u; ctx %u, bucket %u, %d slot%s, %u state snapshots; plan %s; %u checkpoints a slot\n",
			a->model, S.m.arch_name, S.m.n_layers, S.m.dim, S.m.n_vocab, info.n_ctx,
			info.bucket, info.n_slots, info.n_slots == 1 ? "" : "s", info.n_snap,
			S.plan_str, info.n_ckpt);
	ro.e = e;
	if (submit(e, &S, a, &pr, logits, schema, &ro, &q))
		goto out;
	pthread_mutex_lock(&ro.mu);
	while (!ro.done)
		pthread_cond_wait(&ro.cv, &ro.mu);
	pthread_mutex_unlock(&ro.mu);
	if (!a->json) {
		printf("\n");
		fflush(stdout);
	}
	if (ro.last.finish == ENGINE_FINISH_ERROR) {
		fprintf(stderr, "rk1828-llm: %s\n", ro.error);
		goto out;
	}
	if (a->dump_logits && dump_logits(a->dump_logits, pr.ids, pr.n, logits, S.m.n_vocab))
		goto out;
	if (a->json) {
		if (run_json(&S, &info, &ro, pr.ids, pr.n)) {
			fprintf(stderr, "rk1828-llm: out of memory\n");
			goto out;
		}
	} else {
		run_stats(a, &S, &ro, pr.n);
	}
	rc = 0;
out:
	engine_req_put(q);
	engine_destroy(e);
	tok_free(tok);
	free(pr.ids);
	free(ro.text);
	free(ro.ids);
	free(logits);
	jm_schema_put(schema);
	session_close(&S);
	return rc;
}
