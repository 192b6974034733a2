// SPDX-License-Identifier: MIT
/*
 * Host test of speculative decoding's rollback under many rejections
 * (engine_spec.c), over the real pipeline and the mock librk1828 (every
 * job through the card emulator's emu_exec()), on the synthetic qwen35
 * hybrid model ($RK1828_HYBRID_MODEL or build/synth/qwen35-engine.gguf),
 * on 1, 2 and 4 mock cards and buckets 8 and 16.
 *
 * The drafter is the test's own (engine_opts.drafter), an oracle that
 * knows the greedy continuation (from a run without speculation) and
 * proposes a draft whose first j tokens are right and the rest wrong,
 * with j = 0 on four calls of five and 1..draft-max on the fifth: most
 * verify passes reject their first draft, the others reject at every
 * other index or accept all. Each rejection rolls the Gated DeltaNet
 * conv and recurrent states back on every card (a per-position snapshot,
 * or a restore plus a replay of one token). Asserted:
 * - greedy ids and log-probabilities identical to no speculation, bit for
 *   bit, with at least 30 rejections, for every card count and bucket;
 * - the drafter always saw the accepted history (never a rejected token);
 * - some rollbacks restore a snapshot and replay one token (traced);
 * - the accepted count is what the oracle's pattern predicts (so the test
 *   knows how many were rolled back), and the engine's counters agree;
 * - the prefix cache after such a request: a request that extends its
 *   whole history, and one that shares only its prompt, on the same
 *   engine give what a fresh engine without speculation gives.
 * Output: TAP.
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
#include "tap.h"

#define MAX_GEN 64
#define MAX_SEQ 256

struct res {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	int32_t ids[MAX_GEN];
	float lp[MAX_GEN];
	int n_ids, draft_n, draft_acc;
	struct engine_req *q;
};

/*
 * The oracle drafter's state: @seq[0..@n_seq) the expected sequence
 * (prompt then greedy output); @calls, @right: proposals made and right
 * tokens in them (the accepted count a greedy target gives); @bad_hist:
 * calls whose history was not a prefix of @seq.
 */
struct oracle {
	int32_t seq[MAX_SEQ];
	int n_seq, n_vocab;
	int calls, right, bad_hist;
};

static struct rk_card cards[MOCK_CARDS];
static struct llm_model M;
static struct tokenizer *tk;
static struct oracle orc;
static int n_replay, n_draft_tok;	/* replayed and drafted tokens the engine traced */

static void on_trace(void *user, const struct engine_trace *t)
{
	int i;

	(void)user;
	for (i = 0; i < t->n_tok; i++) {
		n_replay += t->tok[i].replay;
		n_draft_tok += t->tok[i].draft;
	}
}

static int oracle_draft(struct spec_drafter *d, const int32_t *hist, int n_hist, int n_max,
			const float *hidden, int32_t *out)
{
	struct oracle *o = d->priv;
	int c = o->calls++, j = c % 5 ? 0 : 1 + (c / 5) % n_max, i;

	(void)hidden;
	if (n_hist > o->n_seq || memcmp(hist, o->seq, sizeof(int32_t) * (size_t)n_hist))
		o->bad_hist++;
	for (i = 0; i < n_max; i++) {
		int32_t want = n_hist + i < o->n_seq ? o->seq[n_hist + i] : 0;

		out[i] = i < j ? want : (want + 1 + c % 7) % o->n_vocab;
	}
	/* The greedy target accepts the right prefix (all when j == n_max). */
	o->right += j;
	return n_max;
}

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

static struct engine *mk(int n_cards, int bucket, bool spec, int k)
{
	static const struct spec_drafter oracle_drafter = { .draft = oracle_draft, .priv = &orc };
	struct engine_opts o = { .n_slots = 1, .n_ctx = 256, .bucket = (uint32_t)bucket,
				 .queue_max = 4, .strict_slots = true,
				 .spec = spec ? SPEC_NGRAM : SPEC_NONE, .draft_max = k,
				 .drafter = spec ? &oracle_drafter : NULL, .trace = on_trace };
	struct engine *e = NULL;
	char err[512];

	mock_rk_reset();
	n_replay = n_draft_tok = 0;
	if (engine_create(&e, &M, tk, cards, NULL, n_cards, &o, err, sizeof(err)))
		fprintf(stderr, "# engine_create: %s\n", err);
	return e;
}

static int submit(struct engine *e, struct res *r, const int32_t *toks, int n, int n_gen)
{
	struct engine_request rq = { 0 };
	char err[256];

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	rq.prompt = toks;
	rq.n_prompt = n;
	rq.max_tokens = n_gen;
	rq.ignore_eos = true;
	rq.s.top_p = 1.0f;
	rq.s.logprobs = true;
	rq.cb = on_event;
	rq.user = r;
	if (engine_submit(e, &rq, &r->q, err, sizeof(err))) {
		fprintf(stderr, "# engine_submit: %s\n", err);
		r->done = true;
		r->n_ids = -1;
		return -1;
	}
	return 0;
}

static void wait_put(struct res *r)
{
	pthread_mutex_lock(&r->mu);
	while (!r->done)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	engine_req_put(r->q);
	r->q = NULL;
}

/* Run @toks on @e; r->n_ids -1 when it could not. */
static void run_on(struct engine *e, const int32_t *toks, int n, int n_gen, struct res *r)
{
	r->n_ids = -1;
	if (e && !submit(e, r, toks, n, n_gen))
		wait_put(r);
}

/* @toks without speculation on a fresh engine of @n_cards cards. */
static void run_base(int n_cards, int bucket, const int32_t *toks, int n, int n_gen,
		     struct res *r)
{
	struct engine *e = mk(n_cards, bucket, false, 0);

	run_on(e, toks, n, n_gen, r);
	engine_destroy(e);
}

static bool same(const struct res *a, const struct res *b, int n_gen)
{
	return a->n_ids == n_gen && b->n_ids == n_gen &&
	       !memcmp(a->ids, b->ids, sizeof(int32_t) * n_gen) &&
	       !memcmp(a->lp, b->lp, sizeof(float) * n_gen);
}

/* The oracle's expected sequence: @toks[0..@n) then @r's ids. */
static void oracle_set(const int32_t *toks, int n, const struct res *r)
{
	memset(&orc, 0, sizeof(orc));
	orc.n_vocab = (int)M.n_vocab;
	memcpy(orc.seq, toks, sizeof(int32_t) * (size_t)n);
	memcpy(orc.seq + n, r->ids, sizeof(int32_t) * (size_t)(r->n_ids > 0 ? r->n_ids : 0));
	orc.n_seq = n + (r->n_ids > 0 ? r->n_ids : 0);
}

/* Identity with many rejections on @n_cards cards, bucket @bucket, draft-max @k. */
static void test_identity(int n_cards, int bucket, int k, const int32_t *toks, int n)
{
	struct res base, sp;
	struct engine *e;
	struct engine_stats st = { 0 };
	int rejected;

	run_base(n_cards, bucket, toks, n, MAX_GEN, &base);
	oracle_set(toks, n, &base);
	e = mk(n_cards, bucket, true, k);
	run_on(e, toks, n, MAX_GEN, &sp);
	if (e)
		engine_get_stats(e, &st);
	engine_destroy(e);
	rejected = sp.draft_n - sp.draft_acc;
	tap_ok(same(&base, &sp, MAX_GEN),
	       "%d card%s, bucket %d, --draft-max %d: greedy ids and logprobs identical to no speculation",
	       n_cards, n_cards > 1 ? "s" : "", bucket, k);
	tap_ok(sp.draft_acc < sp.draft_n / 3 && rejected >= 30 && orc.calls >= 10,
	       "  %d drafted, %d accepted, %d rejected in %d proposals: mostly wrong drafts",
	       sp.draft_n, sp.draft_acc, rejected, orc.calls);
	tap_ok(orc.bad_hist == 0, "  the drafter always saw the accepted history (%d bad of %d)",
	       orc.bad_hist, orc.calls);
	tap_ok(n_replay > 0 && n_draft_tok == sp.draft_n,
	       "  rollbacks both ways: %d replayed tokens (restore + replay), %d drafts traced",
	       n_replay, n_draft_tok);
	/*
	 * Proposals are cut to the tokens still to generate only by the
	 * engine, which passes the cut n_max: the right prefix the oracle
	 * counted is what the greedy target accepts.
	 */
	tap_ok(sp.draft_acc == orc.right && st.draft_accepted == (uint64_t)sp.draft_acc &&
	       st.draft_tokens == (uint64_t)sp.draft_n && st.verify_passes == (uint64_t)orc.calls,
	       "  accepted %d = the oracle's right tokens %d; engine counters %llu/%llu in %llu passes",
	       sp.draft_acc, orc.right, (unsigned long long)st.draft_accepted,
	       (unsigned long long)st.draft_tokens, (unsigned long long)st.verify_passes);
}

/*
 * The prefix cache after a request with many rollbacks: on the same
 * speculating engine, (a) the whole history extended, (b) the prompt
 * with another continuation, each against a fresh engine without
 * speculation (run first: mk() resets the mock's cards, so two engines
 * never live at once).
 */
static void test_prefix(int n_cards, const int32_t *toks, int n)
{
	int32_t ext[MAX_SEQ], alt[MAX_SEQ];
	struct res base, sp, f_ext, f_alt;
	struct engine *e;
	int n_ext = n + 40, n_alt = n + 3;

	run_base(n_cards, 8, toks, n, 40, &base);
	memcpy(ext, toks, sizeof(int32_t) * (size_t)n);
	memcpy(ext + n, base.ids, sizeof(int32_t) * 40);
	run_base(n_cards, 8, ext, n_ext, 20, &f_ext);
	/* The prompt, then three tokens the first request did not generate. */
	memcpy(alt, toks, sizeof(int32_t) * (size_t)n);
	alt[n] = (base.ids[0] + 5) % (int32_t)M.n_vocab;
	alt[n + 1] = (base.ids[1] + 9) % (int32_t)M.n_vocab;
	alt[n + 2] = (base.ids[2] + 2) % (int32_t)M.n_vocab;
	run_base(n_cards, 8, alt, n_alt, 20, &f_alt);

	oracle_set(toks, n, &base);
	e = mk(n_cards, 8, true, 4);
	run_on(e, toks, n, 40, &sp);
	tap_ok(same(&base, &sp, 40) && sp.draft_n - sp.draft_acc >= 20,
	       "%d card%s: first request identical with %d rejected drafts", n_cards,
	       n_cards > 1 ? "s" : "", sp.draft_n - sp.draft_acc);
	oracle_set(ext, n_ext, &f_ext);
	run_on(e, ext, n_ext, 20, &sp);
	tap_ok(same(&sp, &f_ext, 20) && sp.draft_n > sp.draft_acc,
	       "  prefix-cache hit on the whole history after the rollbacks: as a fresh engine gives");
	oracle_set(alt, n_alt, &f_alt);
	run_on(e, alt, n_alt, 20, &sp);
	tap_ok(same(&sp, &f_alt, 20) && sp.draft_n > sp.draft_acc,
	       "  prefix-cache hit on the prompt only, then new tokens: as a fresh engine gives");
	engine_destroy(e);
}

int main(void)
{
	static const int n_cards[] = { 1, 2, 4 };
	const char *h = getenv("RK1828_HYBRID_MODEL");
	struct gguf_file *gf;
	int32_t toks[64];
	char err[256];
	int n, i;

	mock_rk_cards(cards);
	if (!h)
		h = "build/synth/qwen35-engine.gguf";
	gf = gguf_open(h, err, sizeof(err));
	if (!gf || llm_model_load(&M, gf, err, sizeof(err)) ||
	    !(tk = tok_load(gf, err, sizeof(err)))) {
		tap_ok(false, "load %s: %s", h, err);
		return tap_done();
	}
	tap_ok(llm_model_hybrid(&M), "%s is a hybrid (Gated DeltaNet) model", h);
	n = tok_encode(tk, "abbcabbbdabbbbeab", true, toks, 64);
	for (i = 0; i < 3; i++) {
		test_identity(n_cards[i], 8, 4, toks, n);
		test_identity(n_cards[i], 16, 7, toks, n);
	}
	test_prefix(2, toks, n);
	test_prefix(4, toks, n);
	tok_free(tk);
	llm_model_free(&M);
	gguf_close(gf);
	tap_ok(mock_rk_live_objs() == 0, "every BO and syncobj released");
	mock_rk_free();
	return tap_done();
}
