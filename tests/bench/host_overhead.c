// SPDX-License-Identifier: MIT
/*
 * host_overhead: the runtime's host work per generated token at native
 * speed, against the modelled card time (issue 22 part 4; `make bench`
 * section 13, userspace/doc/timing.rst "Host overhead at native speed").
 *
 *   host_overhead MODEL TAG CARDS SESSIONS [N_GEN [DRIVER_NS]]
 *
 * The real engine, scheduler, pipeline, sampler (llama.cpp's defaults:
 * temperature 0.8, top-k 40, top-p 0.95) and detokenizer run on the host
 * over the mock librk1828 (tests/lib/mock_rk.h) with RK1828-sized sparse
 * cards in timing-only mode on the built-in profile and its modelled
 * clock: no job computes, no wait sleeps, so the process's CPU time is
 * the host's work plus the mock's own (copying bytes, timing programs),
 * which mock_rk_self_ns() counts and the figure leaves out. SESSIONS
 * requests of a 32-token prompt decode N_GEN tokens each (default 64) at
 * once; the window runs from the moment every session has its first
 * token to the last token; of ROUNDS such rounds on one engine the least
 * host time is reported (another load on a shared host only adds). Per
 * generated token it prints, as "BENCH hostov_TAG_KEY value" lines:
 *   runtime_us  process CPU time minus the mock's (engine thread and any
 *               other), us
 *   ioctls      librk1828 calls that are system calls on a real card
 *   driver_us   ioctls x DRIVER_NS (the driver's cost per ioctl on this
 *               host, from the guest's `make bench` figure scaled by the
 *               guest/host CPU ratio; 0 when not given)
 *   card_us     modelled card time per token of the same plan and
 *               sessions (predict.h's pipeline simulation, psim_aggregate()
 *               at the prompt's position), us
 *   pct         100 * (runtime_us + driver_us) / card_us
 *   sampler_us  the sampler alone on one vocabulary of random logits, us
 *   logits_us   one row of logits copied from the host BO to the engine's
 *               buffer (pipeline.c's memcpy), alone, us
 * MODEL is a shape-only GGUF (mksynth --shape tests/shapes/X.shape).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "gguf.h"
#include "model.h"
#include "predict.h"
#include "profile.h"
#include "sampler.h"
#include "tokenizer.h"

#include "mock_rk.h"

#define PROMPT	32
#define MAX_S	8
#define ROUNDS	3	/* measured rounds; the least is reported */

/* Whether each session of the round has its first token (on_event()'s @user). */
static bool first[MAX_S];

/* The window's marks, taken on the engine thread. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int n_sess, n_first, n_done;
	long toks, toks0;
	int64_t cpu0, self0, cpu1, self1;
	struct mock_rk_calls c0, c1;
} W = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long n_calls(const struct mock_rk_calls *c)
{
	return c->submit + c->syncobj_wait + c->bo_wait + c->export_sync_file +
	       c->import_sync_file + c->sync_file_info + c->other;
}

static void mark(int64_t *cpu, int64_t *self, struct mock_rk_calls *c)
{
	*cpu = cpu_ns();
	*self = mock_rk_self_ns();
	mock_rk_get_calls(c);
}

static void on_event(const struct engine_event *ev, void *user)
{
	bool *first = user;

	pthread_mutex_lock(&W.mu);
	if (ev->kind == ENGINE_EV_TEXT && ev->n_ids) {
		W.toks += ev->n_ids;
		if (!*first) {
			*first = true;
			if (++W.n_first == W.n_sess) {
				W.toks0 = W.toks;
				mark(&W.cpu0, &W.self0, &W.c0);
			}
		}
	} else if (ev->kind == ENGINE_EV_DONE) {
		if (++W.n_done == W.n_sess)
			mark(&W.cpu1, &W.self1, &W.c1);
		pthread_cond_signal(&W.cv);
	}
	pthread_mutex_unlock(&W.mu);
}

/* Modelled card ns per generated token: @S sessions on @plan at @pos. */
static double card_ns(const struct llm_model *m, const struct plan *plan,
		      const struct plan_sizes *sz, const struct card_profile *prof, int S)
{
	struct predict_opts po = { .prof = prof, .link = COST_LINK_PCIE, .bucket = sz->bucket,
				   .n_ctx = sz->n_ctx };
	struct cost_layer *ly = calloc(m->n_layers, sizeof(*ly));
	struct cost_head h;
	struct psim *s;
	double r = 0;
	uint32_t l;

	for (l = 0; ly && l < m->n_layers; l++)
		predict_cost_layer(m, l, &ly[l]);
	predict_cost_head(m, &h);
	s = ly ? psim_create(ly, m->n_layers, &h, plan, &po) : NULL;
	if (s)
		r = psim_aggregate(s, (uint32_t)S, PROMPT);
	psim_destroy(s);
	free(ly);
	return r > 0 ? 1e9 / r : 0;
}

/* The sampler alone on one vocabulary of logits, ns a token (median of 3 x 50). */
static double sampler_ns(int n_vocab)
{
	struct sampler_params sp = SAMPLER_PARAMS_DEFAULT;
	struct sampler *s;
	float *lg = malloc(sizeof(*lg) * (size_t)n_vocab);
	double best = 0;
	int i, r;

	sp.seed = 1828;
	s = sampler_new(&sp, n_vocab);
	if (!s || !lg)
		return 0;
	srand(1);
	for (i = 0; i < n_vocab; i++)
		lg[i] = (float)rand() / RAND_MAX * 20.0f - 10.0f;
	for (r = 0; r < 3; r++) {
		int64_t t0 = cpu_ns();
		double x;

		for (i = 0; i < 50; i++)
			sampler_accept(s, sampler_sample(s, lg));
		x = (double)(cpu_ns() - t0) / 50;
		if (!r || x < best)
			best = x;
	}
	sampler_free(s);
	free(lg);
	return best;
}

/* One row of @n_vocab logits copied, ns (best of 3 x 50). */
static double logits_ns(int n_vocab)
{
	size_t bytes = sizeof(float) * (size_t)n_vocab;
	char *a = malloc(bytes), *b = malloc(bytes);
	double best = 0;
	int i, r;

	if (!a || !b) {
		free(a);
		free(b);
		return 0;
	}
	memset(a, 1, bytes);
	memset(b, 2, bytes);
	for (r = 0; r < 3; r++) {
		int64_t t0 = cpu_ns();
		double x;

		for (i = 0; i < 50; i++) {
			memcpy(i & 1 ? a : b, i & 1 ? b : a, bytes);
			__asm__ volatile("" : : "r"(a), "r"(b) : "memory");
		}
		x = (double)(cpu_ns() - t0) / 50;
		if (!r || x < best)
			best = x;
	}
	free(a);
	free(b);
	return best;
}

/* Submit @S requests and wait for them; -1 on failure (printed). */
static int run(struct engine *e, const struct tokenizer *tk, int S, int n_gen)
{
	struct engine_req *q[MAX_S] = { 0 };
	int32_t toks[PROMPT + 8];
	char text[PROMPT + 8], err[512];
	int i, n;

	W.n_sess = S;
	for (i = 0; i < S; i++) {
		struct engine_request rq = { 0 };
		struct sampler_params sp = SAMPLER_PARAMS_DEFAULT;

		/* A different prompt a session: no prefix is shared. */
		for (n = 0; n < PROMPT - 1; n++)
			text[n] = (char)('a' + (n * (i + 3)) % 26);
		text[n] = '\0';
		sp.seed = 1828 + i;
		rq.n_prompt = tok_encode(tk, text, true, toks, PROMPT + 8);
		rq.prompt = toks;
		rq.max_tokens = n_gen;
		rq.ignore_eos = true;
		rq.s = sp;
		rq.cb = on_event;
		rq.user = &first[i];
		if (engine_submit(e, &rq, &q[i], err, sizeof(err))) {
			fprintf(stderr, "host_overhead: %s\n", err);
			return -1;
		}
	}
	pthread_mutex_lock(&W.mu);
	while (W.n_done < S)
		pthread_cond_wait(&W.cv, &W.mu);
	pthread_mutex_unlock(&W.mu);
	for (i = 0; i < S; i++)
		engine_req_put(q[i]);
	return 0;
}

/*
 * ROUNDS rounds of run() on @e; of the round with the least host time per
 * token, that time (*@rt), its ioctls (*@io) and the mock's time (*@mock)
 * per token, ns, and its tokens (*@tok). Return: 0, or -1 (printed).
 */
static int measure(struct engine *e, const struct tokenizer *tk, int S, int n_gen,
		   double *rt, double *io, double *mock, double *tok)
{
	int r;

	for (r = 0; r < ROUNDS; r++) {
		double t, x;

		W.n_first = W.n_done = 0;
		W.toks = W.toks0 = 0;
		memset(first, 0, sizeof(first));
		if (run(e, tk, S, n_gen))
			return -1;
		t = (double)(W.toks - W.toks0);
		x = (double)((W.cpu1 - W.cpu0) - (W.self1 - W.self0)) / t;
		if (!r || x < *rt) {
			*rt = x;
			*tok = t;
			*io = (double)(n_calls(&W.c1) - n_calls(&W.c0)) / t;
			*mock = (double)(W.self1 - W.self0) / t;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct rk_card cards[MOCK_CARDS];
	struct engine_opts eo = { .n_ctx = 1024, .strict_slots = true, .queue_max = -1 };
	struct mock_cost cost = { 0 };
	struct card_profile prof;
	struct plan_fit_opts fo;
	struct plan_sizes sz;
	struct plan plan;
	struct gguf_file *gf;
	struct llm_model m;
	struct tokenizer *tk;
	struct engine *e;
	uint64_t free_b[MOCK_CARDS];
	const char *tag = argc > 2 ? argv[2] : "";
	int C = argc > 3 ? atoi(argv[3]) : 0, S = argc > 4 ? atoi(argv[4]) : 0, i;
	int n_gen = argc > 5 ? atoi(argv[5]) : 64;
	double drv = argc > 6 ? atof(argv[6]) : 0, tok, rt, io, card, mock;
	char err[4096];

	if (argc < 5 || C < 1 || C > MOCK_CARDS || S < 1 || S > MAX_S || n_gen < 8) {
		fprintf(stderr, "usage: host_overhead MODEL TAG CARDS(1..%d) SESSIONS(1..%d) [N_GEN [DRIVER_NS]]\n",
			MOCK_CARDS, MAX_S);
		return 2;
	}
	gf = gguf_open(argv[1], err, sizeof(err));
	if (!gf || llm_model_load(&m, gf, err, sizeof(err)) || !(tk = tok_load(gf, err, sizeof(err))) ||
	    card_profile_builtin(&prof, err, sizeof(err))) {
		fprintf(stderr, "host_overhead: %s: %s\n", argv[1], err);
		return 1;
	}
	mock_rk_card_mem(prof.mem_usable_bytes);
	mock_rk_cards(cards);
	mock_rk_timing(&prof, true);
	/* COPY jobs on the modelled clock: a hidden state over PCIe. */
	cost.copy_ns = (int64_t)cost_link_ns(&prof, COST_LINK_PCIE, (uint64_t)m.dim * 4);
	mock_rk_clock(&cost);
	eo.n_slots = S;
	engine_fit_opts(&m, &eo, &fo);
	for (i = 0; i < C; i++)
		free_b[i] = cards[i].mem_free;
	if (plan_fit(&m, &fo, C, free_b, NULL, &sz, &plan, NULL, 0, err, sizeof(err))) {
		fprintf(stderr, "host_overhead: %s\n", err);
		return 1;
	}
	eo.plan = &plan;
	eo.sizes = &sz;
	if (engine_create(&e, &m, tk, cards, NULL, C, &eo, err, sizeof(err))) {
		fprintf(stderr, "host_overhead: %s\n", err);
		return 1;
	}
	if (measure(e, tk, S, n_gen, &rt, &io, &mock, &tok))
		return 1;
	engine_destroy(e);
	card = card_ns(&m, &plan, &sz, &prof, S);
	printf("# %s: %d cards, %d sessions, %.0f tokens in the window, plan ", tag, C, S, tok);
	for (i = 0; i < plan.n_segs; i++)
		printf("%s%d", i ? " | " : "", plan.seg[i].count);
	printf(", vocab %u, dim %u, %u blocks\n", m.n_vocab, m.dim, m.n_layers);
	printf("BENCH hostov_%s_runtime_us %.1f\n", tag, rt / 1e3);
	printf("BENCH hostov_%s_mock_us %.1f\n", tag, mock / 1e3);
	printf("BENCH hostov_%s_ioctls %.2f\n", tag, io);
	printf("BENCH hostov_%s_driver_us %.1f\n", tag, io * drv / 1e3);
	printf("BENCH hostov_%s_card_us %.1f\n", tag, card / 1e3);
	printf("BENCH hostov_%s_pct %.2f\n", tag, card > 0 ? 100 * (rt + io * drv) / card : 0);
	printf("BENCH hostov_%s_sampler_us %.1f\n", tag, sampler_ns((int)m.n_vocab) / 1e3);
	printf("BENCH hostov_%s_logits_us %.1f\n", tag, logits_ns((int)m.n_vocab) / 1e3);
	mock_rk_free();
	tok_free(tk);
	llm_model_free(&m);
	gguf_close(gf);
	return 0;
}
