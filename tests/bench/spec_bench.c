// SPDX-License-Identifier: MIT
/*
 * spec_bench: speculative decoding's figures for `make bench`, on the
 * host over the real pipeline and the mock librk1828 (2 emulated cards,
 * every job through the card emulator): greedy decode of a repetitive
 * prompt on stories260K without and with --spec ngram (draft-max 8):
 * decode tokens/s (wall clock of the emulation), tokens per pass through
 * the cards (decode micro-batches), and the acceptance rate. Tokens per
 * pass is the figure that carries over to real cards (a pass costs about
 * the same with 1 or k + 1 tokens while decode is bandwidth-bound).
 *
 *   spec_bench MODEL [N_GEN]
 *
 * Prints "BENCH key value" lines.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "gguf.h"
#include "model.h"
#include "tokenizer.h"

#include "mock_rk.h"

struct res {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	struct engine_usage u;
	struct engine_timing t;
};

static void on_event(const struct engine_event *ev, void *user)
{
	struct res *r = user;

	if (ev->kind != ENGINE_EV_DONE)
		return;
	pthread_mutex_lock(&r->mu);
	r->u = ev->usage;
	r->t = ev->timing;
	r->done = true;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

static const char *prompt =
	"Once upon a time, there was a little girl named Lily. She liked to play with her ball. "
	"Once upon a time, there was a little boy named Tom. He liked to play with his";

/* One greedy request; @passes: decode micro-batches. Return: 0 or -1. */
static int run(const struct llm_model *m, const struct tokenizer *tk, struct rk_card *cards,
	       enum spec_kind spec, int n_gen, struct res *r, double *passes)
{
	struct engine_opts o = { .n_slots = 1, .n_ctx = 512, .bucket = 16, .strict_slots = true,
				 .queue_max = -1, .spec = spec, .draft_max = 8 };
	struct engine_request rq = { 0 };
	struct engine_stats s0, s1;
	struct engine *e = NULL;
	struct engine_req *q = NULL;
	int32_t toks[256];
	char err[512];

	mock_rk_reset();
	if (engine_create(&e, m, tk, cards, NULL, 2, &o, err, sizeof(err))) {
		fprintf(stderr, "spec_bench: %s\n", err);
		return -1;
	}
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	rq.n_prompt = tok_encode(tk, prompt, true, toks, 256);
	rq.prompt = toks;
	rq.max_tokens = n_gen;
	rq.ignore_eos = true;
	rq.s.top_p = 1.0f;
	rq.cb = on_event;
	rq.user = r;
	engine_get_stats(e, &s0);
	if (engine_submit(e, &rq, &q, err, sizeof(err))) {
		fprintf(stderr, "spec_bench: %s\n", err);
		engine_destroy(e);
		return -1;
	}
	pthread_mutex_lock(&r->mu);
	while (!r->done)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	engine_get_stats(e, &s1);
	/* Prefill: ceil(n_prompt / bucket) micro-batches, the last one gives token 1. */
	*passes = (double)(s1.steps - s0.steps) - (rq.n_prompt + 15) / 16;
	engine_req_put(q);
	engine_destroy(e);
	return 0;
}

int main(int argc, char **argv)
{
	static struct rk_card cards[MOCK_CARDS];
	struct gguf_file *gf;
	struct llm_model m;
	struct tokenizer *tk;
	struct res off, on;
	double p_off, p_on;
	int n_gen = argc > 2 ? atoi(argv[2]) : 200;
	char err[256];

	if (argc < 2 || n_gen < 2) {
		fprintf(stderr, "usage: spec_bench MODEL [N_GEN]\n");
		return 2;
	}
	gf = gguf_open(argv[1], err, sizeof(err));
	if (!gf || llm_model_load(&m, gf, err, sizeof(err)) || !(tk = tok_load(gf, err, sizeof(err)))) {
		fprintf(stderr, "spec_bench: %s: %s\n", argv[1], err);
		return 1;
	}
	mock_rk_cards(cards);
	if (run(&m, tk, cards, SPEC_NONE, n_gen, &off, &p_off) ||
	    run(&m, tk, cards, SPEC_NGRAM, n_gen, &on, &p_on))
		return 1;
	printf("BENCH spec_off_decode_tok_s %.1f\n",
	       (off.u.completion_tokens - 1) * 1000.0 / off.t.decode_ms);
	printf("BENCH spec_ngram_decode_tok_s %.1f\n",
	       (on.u.completion_tokens - 1) * 1000.0 / on.t.decode_ms);
	printf("BENCH spec_off_tokens_per_pass %.2f\n", (off.u.completion_tokens - 1) / p_off);
	printf("BENCH spec_ngram_tokens_per_pass %.2f\n", (on.u.completion_tokens - 1) / p_on);
	printf("BENCH spec_ngram_drafted %d\n", on.u.draft_n);
	printf("BENCH spec_ngram_accept_rate %.3f\n",
	       on.u.draft_n ? (double)on.u.draft_n_accepted / on.u.draft_n : 0.0);
	mock_rk_free();
	tok_free(tk);
	llm_model_free(&m);
	gguf_close(gf);
	return 0;
}
