// SPDX-License-Identifier: MIT
/*
 * Host test of the mtp drafter (--spec mtp, userspace/engine/spec_mtp.c)
 * over the real pipeline and the mock librk1828 (every job through the
 * card emulator), on the synthetic qwen35 hybrid with one
 * multi-token-prediction block ($RK1828_MTP_MODEL or
 * build/synth/qwen35-mtp.gguf, mksynth --mtp 1: llama.cpp's nextn tensors):
 * - the reference loads the MTP block (8 decoder blocks, 1 MTP) and the
 *   card pipeline skips it (8 blocks);
 * - pipe_opts.hidden (RK1828_PROG_F_HIDDEN): the final hidden state the
 *   last card returns next to the logits matches the reference forward
 *   pass's rmsnorm(x) * output_norm (1, 2 and 4 cards), and the logits
 *   are those without the flag, bit for bit;
 * - the drafter's first draft is the reference MTP block's argmax on the
 *   reference hidden state (the drafter as a unit, on the host);
 * - greedy ids and log-probabilities with --spec mtp identical to no
 *   speculation on 1, 2 and 4 cards, --draft-max 3 and 6, with drafts
 *   verified (whatever the synthetic block's acceptance);
 * - the hidden state the engine hands a drafter (an oracle one through
 *   engine_opts.drafter that accepts 0..4 drafts a pass) is the
 *   reference's at the row whose logits gave the last token;
 * - --spec mtp on a model without an MTP block is refused, naming it.
 * Output: TAP.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "gguf.h"
#include "model.h"
#include "pipeline.h"
#include "planner.h"
#include "ref_forward.h"
#include "spec.h"
#include "tokenizer.h"
#include "rk1828/util.h"

#include "mock_rk.h"
#include "tap.h"

#define MAX_GEN 40

struct res {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	int32_t ids[MAX_GEN];
	float lp[MAX_GEN];
	int n_ids, draft_n, draft_acc;
	struct engine_req *q;
};

static struct rk_card cards[MOCK_CARDS];
static struct llm_model M;
static struct tokenizer *tk;
static char mk_err[512];

static void on_event(const struct engine_event *ev, void *user)
{
	struct res *r = user;
	int i;

	pthread_mutex_lock(&r->mu);
	for (i = 0; i < ev->n_ids && r->n_ids < MAX_GEN; i++) {
		r->lp[r->n_ids] = ev->logprobs ? ev->logprobs[i].logprob : 0.0f;
		r->ids[r->n_ids++] = ev->ids[i];
	}
	if (ev->kind == ENGINE_EV_DONE) {
		r->draft_n = ev->usage.draft_n;
		r->draft_acc = ev->usage.draft_n_accepted;
		r->done = true;
		pthread_cond_signal(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
}

static struct engine *mk(const struct llm_model *m, const struct tokenizer *t, int n_cards,
			 enum spec_kind spec, int k)
{
	struct engine_opts o = { .n_slots = 1, .n_ctx = 256, .bucket = 8, .queue_max = 4,
				 .strict_slots = true, .spec = spec, .draft_max = k };
	struct engine *e = NULL;

	mock_rk_reset();
	mk_err[0] = '\0';
	if (engine_create(&e, m, t, cards, NULL, n_cards, &o, mk_err, sizeof(mk_err)))
		fprintf(stderr, "# engine_create: %s\n", mk_err);
	return e;
}

static void run1(int n_cards, enum spec_kind spec, int k, const int32_t *toks, int n,
		 struct res *r)
{
	struct engine *e = mk(&M, tk, n_cards, spec, k);
	struct engine_request rq = { 0 };
	char err[256];

	memset(r, 0, sizeof(*r));
	r->n_ids = -1;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	rq.prompt = toks;
	rq.n_prompt = n;
	rq.max_tokens = MAX_GEN;
	rq.ignore_eos = true;
	rq.s.top_p = 1.0f;
	rq.s.logprobs = true;
	rq.cb = on_event;
	rq.user = r;
	if (e && !engine_submit(e, &rq, &r->q, err, sizeof(err))) {
		r->n_ids = 0;
		pthread_mutex_lock(&r->mu);
		while (!r->done)
			pthread_cond_wait(&r->cv, &r->mu);
		pthread_mutex_unlock(&r->mu);
		engine_req_put(r->q);
	}
	engine_destroy(e);
}

static bool same(const struct res *a, const struct res *b)
{
	return a->n_ids == MAX_GEN && b->n_ids == MAX_GEN &&
	       !memcmp(a->ids, b->ids, sizeof(a->ids)) && !memcmp(a->lp, b->lp, sizeof(a->lp));
}

static double rel_diff(const float *a, const float *b, int n)
{
	double md = 0, mb = 0;
	int i;

	for (i = 0; i < n; i++) {
		double d = fabs((double)a[i] - b[i]);

		if (d > md || isnan(d))
			md = isnan(d) ? INFINITY : d;
		if (fabs(b[i]) > mb)
			mb = fabs(b[i]);
	}
	return mb > 0 ? md / mb : md;
}

/* Prefill @toks on @n_cards cards with pipe_opts.hidden @hidden: logits and hidden out. */
static int card_forward(int n_cards, bool hidden, const int32_t *toks, int n, float *lg,
			float *hid)
{
	struct plan_sizes sz = { .n_ctx = 64, .bucket = 8 };
	struct pipe_opts po = { .n_ctx = 64, .bucket = 8, .timeout_ms = 1000, .hidden = hidden };
	uint64_t fr[MOCK_CARDS];
	struct pipeline *p = NULL;
	struct plan plan;
	char err[512];
	int i, ret;

	mock_rk_reset();
	for (i = 0; i < n_cards; i++)
		fr[i] = MOCK_CARD_MEM - 4096;
	ret = plan_model(&M, &sz, n_cards, fr, NULL, &plan, err, sizeof(err));
	if (!ret)
		ret = pipe_create(&p, &M, cards, &plan, &po, err, sizeof(err));
	if (!ret)
		ret = pipe_forward(p, toks, n, 0, lg, err, sizeof(err));
	if (!ret && hid) {
		if (pipe_hidden(p))
			memcpy(hid, pipe_hidden(p), sizeof(float) * M.dim);
		else
			ret = -1;
	}
	if (ret)
		fprintf(stderr, "# card_forward: %s\n", err);
	pipe_destroy(p);
	return ret;
}

/* The hidden rows and the drafter against the reference. */
static void test_reference(const char *path, const int32_t *toks, int n)
{
	static const int n_cards[] = { 1, 2, 4 };
	struct ref_model *ref;
	struct spec_drafter d;
	float *lg = calloc(M.n_vocab, sizeof(float)), *lg0 = calloc(M.n_vocab, sizeof(float));
	float *rl = calloc(M.n_vocab, sizeof(float)), *h = calloc(M.dim, sizeof(float));
	float *rh = calloc(M.dim, sizeof(float)), *ml = calloc(M.n_vocab, sizeof(float));
	int32_t draft[2], next;
	char err[512];
	int i, nd;

	ref = ref_load(path, 64, err, sizeof(err));
	tap_ok(ref && ref->c.n_layers == 8 && ref->c.n_mtp == 1 && M.n_layers == 8 && M.n_mtp == 1,
	       "reference: 8 decoder blocks and 1 MTP block; the card model runs 8 %s",
	       ref ? "" : err);
	if (!ref || !lg || !lg0 || !rl || !h || !rh || !ml)
		goto out;
	for (i = 0; i < n; i++)
		ref_forward_hidden(ref, toks[i], i, i == n - 1 ? rl : NULL, i == n - 1 ? rh : NULL);
	for (i = 0; i < 3; i++) {
		int ok = !card_forward(n_cards[i], true, toks, n, lg, h) &&
			 !card_forward(n_cards[i], false, toks, n, lg0, NULL);

		tap_ok(ok && rel_diff(h, rh, M.dim) < 1e-4 && rel_diff(lg, rl, M.n_vocab) < 1e-4 &&
		       !memcmp(lg, lg0, sizeof(float) * M.n_vocab),
		       "%d card%s: F_HIDDEN's hidden row matches the reference (rel %.2e), logits unchanged",
		       n_cards[i], i ? "s" : "", ok ? rel_diff(h, rh, M.dim) : -1.0);
	}
	/* The drafter: its first draft is the MTP block's argmax at position n. */
	next = (int32_t)util_argmax(rl, M.n_vocab);
	ref_mtp(ref, next, rh, n, ml, NULL);
	if (!spec_mtp_open(&d, path, 64, err, sizeof(err))) {
		int32_t hist[64];

		memcpy(hist, toks, sizeof(int32_t) * n);
		hist[n] = next;
		nd = d.draft(&d, hist, n + 1, 2, rh, draft);
		tap_ok(d.wants_hidden && nd == 2 && draft[0] == (int32_t)util_argmax(ml, M.n_vocab),
		       "drafter: 2 drafts, the first the MTP block's argmax %d (%d)",
		       (int)util_argmax(ml, M.n_vocab), nd ? draft[0] : -1);
		tap_ok(d.draft(&d, hist, n + 1, 2, NULL, draft) == 0,
		       "drafter: no hidden state, no drafts");
		d.close(&d);
	} else {
		tap_ok(false, "spec_mtp_open: %s", err);
	}
out:
	ref_free(ref);
	free(lg);
	free(lg0);
	free(rl);
	free(h);
	free(rh);
	free(ml);
}

static void test_identity(const int32_t *toks, int n)
{
	static const int n_cards[] = { 1, 2, 4 }, ks[] = { 3, 6 };
	struct res base, sp;
	int i, j;

	for (i = 0; i < 3; i++) {
		run1(n_cards[i], SPEC_NONE, 0, toks, n, &base);
		for (j = 0; j < 2; j++) {
			run1(n_cards[i], SPEC_MTP, ks[j], toks, n, &sp);
			tap_ok(same(&base, &sp) && sp.draft_n >= MAX_GEN / 2,
			       "%d card%s --spec mtp --draft-max %d: greedy ids and logprobs identical "
			       "(%d drafted, %d accepted)", n_cards[i], i ? "s" : "", ks[j],
			       sp.draft_n, sp.draft_acc);
		}
	}
}

/*
 * The hidden state the engine hands a drafter, after verify passes that
 * accept 0..k drafts: an oracle drafter (engine_opts.drafter, wants_hidden)
 * that knows the greedy continuation proposes its first j tokens right,
 * and checks each hidden state against the reference's at n_hist - 2.
 */
struct hcheck {
	const int32_t *seq;
	const float *href;	/* [n_seq][dim] */
	int n_seq, calls, bad, right;
	double worst;
};

static struct hcheck hc;

static int hcheck_draft(struct spec_drafter *d, const int32_t *hist, int n_hist, int n_max,
			const float *hidden, int32_t *out)
{
	int c = hc.calls++, j = c % 3 == 2 ? 0 : 1 + c % n_max, i;
	double r;

	(void)d;
	if (!hidden || n_hist < 2 || n_hist > hc.n_seq) {
		hc.bad++;
		return 0;
	}
	r = rel_diff(hidden, hc.href + (size_t)(n_hist - 2) * M.dim, (int)M.dim);
	if (r > hc.worst)
		hc.worst = r;
	if (r > 1e-4 || memcmp(hist, hc.seq, sizeof(int32_t) * (size_t)n_hist))
		hc.bad++;
	for (i = 0; i < n_max; i++) {
		int32_t want = n_hist + i < hc.n_seq ? hc.seq[n_hist + i] : 0;

		out[i] = i < j ? want : (want + 1) % (int32_t)M.n_vocab;
	}
	hc.right += j < n_max ? j : n_max;
	return n_max;
}

static void test_hidden_handoff(const char *path, const int32_t *toks, int n)
{
	static const struct spec_drafter dr = { .draft = hcheck_draft, .wants_hidden = true };
	struct engine_opts o = { .n_slots = 1, .n_ctx = 256, .bucket = 8, .queue_max = 4,
				 .strict_slots = true, .spec = SPEC_MTP, .draft_max = 4,
				 .drafter = &dr };
	int32_t seq[64 + MAX_GEN];
	struct ref_model *ref;
	struct res base, sp;
	struct engine *e = NULL;
	struct engine_request rq = { 0 };
	float *href;
	char err[512];
	int i, n_seq;

	run1(2, SPEC_NONE, 0, toks, n, &base);
	n_seq = n + MAX_GEN;
	memcpy(seq, toks, sizeof(int32_t) * (size_t)n);
	memcpy(seq + n, base.ids, sizeof(base.ids));
	ref = ref_load(path, 128, err, sizeof(err));
	href = calloc((size_t)n_seq * M.dim, sizeof(float));
	for (i = 0; ref && href && i < n_seq; i++)
		ref_forward_hidden(ref, seq[i], i, NULL, href + (size_t)i * M.dim);
	memset(&hc, 0, sizeof(hc));
	hc = (struct hcheck){ .seq = seq, .href = href, .n_seq = n_seq };
	memset(&sp, 0, sizeof(sp));
	sp.n_ids = -1;
	pthread_mutex_init(&sp.mu, NULL);
	pthread_cond_init(&sp.cv, NULL);
	mock_rk_reset();
	if (ref && href && !engine_create(&e, &M, tk, cards, NULL, 2, &o, err, sizeof(err))) {
		rq = (struct engine_request){ .prompt = toks, .n_prompt = n, .max_tokens = MAX_GEN,
					      .ignore_eos = true, .s = { .top_p = 1.0f, .logprobs = true },
					      .cb = on_event, .user = &sp };
		sp.n_ids = 0;
		if (!engine_submit(e, &rq, &sp.q, err, sizeof(err))) {
			pthread_mutex_lock(&sp.mu);
			while (!sp.done)
				pthread_cond_wait(&sp.cv, &sp.mu);
			pthread_mutex_unlock(&sp.mu);
			engine_req_put(sp.q);
		}
	}
	engine_destroy(e);
	tap_ok(same(&base, &sp) && hc.calls > 5 && hc.bad == 0 && sp.draft_acc == hc.right &&
	       sp.draft_acc > 0,
	       "2 cards: each draft call got the reference's hidden state at n_hist - 2 (worst rel "
	       "%.2e, %d bad of %d), after passes accepting 0..4 (%d accepted); ids identical",
	       hc.worst, hc.bad, hc.calls, sp.draft_acc);
	ref_free(ref);
	free(href);
}

static int load(const char *path, struct llm_model *m, struct gguf_file **gf,
		struct tokenizer **t)
{
	char err[256];

	*gf = gguf_open(path, err, sizeof(err));
	if (!*gf || llm_model_load(m, *gf, err, sizeof(err)) || !(*t = tok_load(*gf, err, sizeof(err)))) {
		tap_ok(false, "load %s: %s", path, err);
		return -1;
	}
	return 0;
}

int main(void)
{
	const char *p = getenv("RK1828_MTP_MODEL"), *h = getenv("RK1828_HYBRID_MODEL");
	struct gguf_file *gf, *gf2;
	struct llm_model m2;
	struct tokenizer *t2;
	struct engine *e;
	int32_t toks[64];
	int n;

	mock_rk_cards(cards);
	if (!p)
		p = "build/synth/qwen35-mtp.gguf";
	if (!h)
		h = "build/synth/qwen35-engine.gguf";
	if (load(p, &M, &gf, &tk))
		return tap_done();
	n = tok_encode(tk, "abbcabbbdabbbbeab", true, toks, 64);
	test_reference(p, toks, n);
	test_identity(toks, n);
	test_hidden_handoff(p, toks, n);
	if (!load(h, &m2, &gf2, &t2)) {
		e = mk(&m2, t2, 2, SPEC_MTP, 4);
		tap_ok(!e && strstr(mk_err, "no multi-token-prediction block") && strstr(mk_err, h),
		       "--spec mtp without an MTP block is refused: %s", mk_err);
		engine_destroy(e);
		tok_free(t2);
		llm_model_free(&m2);
		gguf_close(gf2);
	}
	tok_free(tk);
	llm_model_free(&M);
	gguf_close(gf);
	tap_ok(mock_rk_live_objs() == 0, "every BO and syncobj released");
	mock_rk_free();
	return tap_done();
}
