// SPDX-License-Identifier: MIT
/*
 * qwen_check: run a synthetic Qwen-family model on the cards and compare
 * with llama.cpp's reference vectors (tests/vectors/qwen/FORMAT.md). Runs
 * in the guest (tests/e2e/qwen-vs-llama.sh); prints TAP.
 *
 *   qwen_check VECTORS.ref MODEL.gguf CARDS BUCKET... [--deq DEQ]
 *              [--decode] [--forced]
 *
 * The model is loaded once on the first CARDS cards (pipeline bucket: the
 * largest BUCKET) and, for each BUCKET, every prompt is prefilled in
 * micro-batches of BUCKET tokens (logits of its last position).
 *
 * F32 models (llama.cpp computes them in F32 too): the logits after the
 * prompt within 1e-4 of llama.cpp's (max |a - b| / max |b| over the
 * sampled and top ids), the greedy tokens llama.cpp's and the logits after
 * the continuation within 1e-4. With --decode the continuation is
 * generated one token a job, as rk1828-llm generates; without it,
 * llama.cpp's continuation is fed in micro-batches of BUCKET with logits
 * at every position and each position's argmax must be llama.cpp's next
 * token: by induction the same check as greedy generation (whose next
 * input is that argmax), in BUCKET-sized jobs instead of one a token.
 * With BUCKET 1 both are one token a job. With --forced, also
 * teacher-forced top-1 32 of 32 (and the natural text's, reported).
 *
 * Other types (llama.cpp quantizes activations, so only closeness holds):
 * with --deq (the scalar dequantize-then-F32 reference's prompt logits,
 * written by test_qwen_ref), our prompt logits must be at least as close
 * to it as llama.cpp's are, and teacher-forced top-1 must agree with
 * llama.cpp's on at least 31 of the 32 positions (95 %), where a position
 * also counts as agreeing when it is a near-tie that llama.cpp's own
 * error cannot resolve: our logits of the two ids differ by at most twice
 * llama.cpp's measured distance from the exact (dequantized) logits of
 * this model (the worst over the prompt cases) times our max |logit|. The
 * raw agreement and every such tie are printed.
 *
 * Exit status: 0, 1 when a check failed, 2 on bad input or no cards.
 */
#include <endian.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gguf.h"
#include "model.h"
#include "pipeline.h"
#include "planner.h"
#include "refvec.h"
#include "rk1828.h"
#include "tap.h"

#define F32_TOL 1e-4
#define MIN_FORCED 31
#define N_CTX 256	/* the longest case: 164 prompt + 12 generated tokens (v512) */

struct run {
	struct pipeline *p;
	const struct llm_model *m;
	const struct refvec *rv;
	float *logits;		/* REFVEC_FORCED rows of n_vocab */
	double llama_err;	/* worst llama.cpp distance to the exact logits */
	char err[512];
};

/*
 * Run @n tokens of sequence 0 from @pos in micro-batches of @bucket; the
 * logits of every token (@all) or of the last one go to r->logits.
 * Returns the rows written or -1.
 */
static int run_tokens(struct run *r, const int32_t *ids, int n, int pos, int bucket, bool all)
{
	struct pipe_tok t[64];
	int done = 0, rows = 0, i;
	size_t V = r->m->n_vocab;

	while (done < n) {
		int nb = n - done < bucket ? n - done : bucket, got;

		for (i = 0; i < nb; i++)
			t[i] = (struct pipe_tok){ .token = ids[done + i], .pos = pos + done + i,
						  .flags = all || done + i == n - 1 ? PIPE_TOK_LOGITS : 0 };
		if (pipe_submit(r->p, t, nb, r->err, sizeof(r->err)))
			return -1;
		got = pipe_collect(r->p, r->logits + (all ? (size_t)rows * V : 0),
				   REFVEC_FORCED - (all ? rows : 0), r->err, sizeof(r->err));
		if (got < 0)
			return -1;
		rows += got;
		done += nb;
	}
	return rows;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ARCH-f32 or ARCH-f32-v512 (FORMAT.md). */
static bool is_f32(const char *model)
{
	const char *t = strstr(model, "-f32");

	return t && (!t[4] || t[4] == '-');
}

/*
 * F32: the greedy continuation of case @ci after its prompt, whose logits
 * are in r->logits: one token a job (@decode), or llama.cpp's tokens in
 * micro-batches of @bucket with logits at every position, each argmax
 * then being the token greedy generation would have fed next. Returns the
 * tokens that agree (n_gen when all do: r->logits then holds the logits
 * after the last one), or -1 after a failed job.
 */
static int greedy_agree(struct run *r, const struct refvec_case *c, int bucket, bool decode)
{
	size_t V = r->m->n_vocab;
	int i, same = 0, rows;

	if (refvec_argmax(r->logits, V) != c->gen[0])
		return 0;
	if (decode) {
		for (i = 0; i < c->n_gen; i++) {
			int32_t next = refvec_argmax(r->logits, V);

			if (next != c->gen[i])
				break;
			same++;
			if (run_tokens(r, &next, 1, c->n_prompt + i, 1, false) < 0)
				return -1;
		}
		return same;
	}
	rows = run_tokens(r, c->gen, c->n_gen, c->n_prompt, bucket, true);
	if (rows != c->n_gen)
		return -1;
	for (same = 1; same < c->n_gen; same++)
		if (refvec_argmax(r->logits + (size_t)(same - 1) * V, V) != c->gen[same])
			break;
	if (same == c->n_gen && c->n_gen > 1)
		memmove(r->logits, r->logits + (size_t)(c->n_gen - 1) * V, V * sizeof(float));
	return same;
}

/*
 * Prompt logits of case @ci in micro-batches of @bucket, and for F32
 * models the greedy continuation (greedy_agree()) and final logits.
 */
static void check_case(struct run *r, int ci, int bucket, bool decode, const float *deq,
		       const char *tag)
{
	const struct refvec_case *c = &r->rv->cases[ci];
	size_t V = r->m->n_vocab;
	double d, dl;
	int same;

	if (run_tokens(r, c->prompt, c->n_prompt, 0, bucket, false) < 0) {
		tap_ok(false, "%s case %d: prompt runs: %s", tag, ci, r->err);
		return;
	}
	d = refvec_rel_diff(r->rv, &c->prompt_logits, r->logits);
	if (!is_f32(r->rv->model)) {
		const float *ref = deq ? deq + (size_t)ci * V : NULL;

		if (!ref)
			return;
		dl = refvec_rel_diff_to(r->rv, &c->prompt_logits, ref);
		d = refvec_rel_diff_sampled(r->rv, &c->prompt_logits, r->logits, ref);
		if (dl > r->llama_err)
			r->llama_err = dl;
		tap_ok(d <= dl, "%s case %d: prompt logits as close to the dequantized reference "
		       "as llama.cpp's (ours %.2e, llama.cpp %.2e)", tag, ci, d, dl);
		return;
	}
	tap_ok(d <= F32_TOL, "%s case %d: prompt logits within %g of llama.cpp (%.2e)", tag, ci,
	       F32_TOL, d);
	same = greedy_agree(r, c, bucket, decode);
	if (same < 0) {
		tap_ok(false, "%s case %d: continuation runs: %s", tag, ci, r->err);
		return;
	}
	tap_ok(same == c->n_gen, "%s case %d: greedy %d tokens are llama.cpp's (%d agree; %s)",
	       tag, ci, c->n_gen, same, decode ? "decoded one a job" : "its tokens fed in the bucket");
	if (same == c->n_gen) {
		d = refvec_rel_diff(r->rv, &c->final_logits, r->logits);
		tap_ok(d <= F32_TOL, "%s case %d: logits after the continuation within %g (%.2e)",
		       tag, ci, F32_TOL, d);
	}
}

/*
 * Teacher-forced top-1 over the 32 tokens of @ids against @top1: the
 * positions that agree, and in *@ties those that differ only by a gap
 * within twice r->llama_err of our max |logit| (0 for F32 models).
 */
static int forced_agree(struct run *r, const int32_t *ids, const int32_t *top1, int bucket,
			const char *tag, int *ties)
{
	size_t V = r->m->n_vocab, j;
	int i, agree = 0;

	*ties = 0;
	if (run_tokens(r, ids, REFVEC_FORCED, 0, bucket, true) != REFVEC_FORCED)
		return -1;
	for (i = 0; i < REFVEC_FORCED; i++) {
		const float *row = r->logits + (size_t)i * V;
		int32_t ours = refvec_argmax(row, V);
		double mx = 0, gap;

		if (ours == top1[i]) {
			agree++;
			continue;
		}
		for (j = 0; j < V; j++)
			mx = fabs(row[j]) > mx ? fabs(row[j]) : mx;
		gap = (double)row[ours] - (double)row[top1[i]];
		printf("# %s: position %d: ours %d, llama.cpp %d: gap %.4g of max |logit| %.4g "
		       "(%.2e; llama.cpp's error %.2e)\n", tag, i, ours, top1[i], gap, mx,
		       gap / mx, r->llama_err);
		if (!is_f32(r->rv->model) && gap <= 2 * r->llama_err * mx)
			(*ties)++;
	}
	return agree;
}

static float *read_deq(const char *path, const struct refvec *rv)
{
	FILE *f = fopen(path, "rb");
	uint32_t hdr[2];
	char magic[4];
	size_t n = (size_t)rv->n_cases * rv->n_vocab;
	float *v = NULL;

	if (f && fread(magic, 4, 1, f) == 1 && !memcmp(magic, "RKDQ", 4) &&
	    fread(hdr, sizeof(hdr), 1, f) == 1 && hdr[0] == (uint32_t)rv->n_cases &&
	    hdr[1] == (uint32_t)rv->n_vocab) {
		v = malloc(n * sizeof(float));
		if (v && fread(v, sizeof(float), n, f) != n) {
			free(v);
			v = NULL;
		}
	}
	if (f)
		fclose(f);
	return v;
}

static int setup(struct run *r, struct rk_card *cards, int n_cards, int bucket,
		 struct plan *plan)
{
	struct plan_sizes sz = { .n_ctx = N_CTX, .bucket = (uint32_t)bucket,
				 .n_seq = REFVEC_FORCED };
	struct pipe_opts po = { .n_ctx = N_CTX, .bucket = (uint32_t)bucket,
				.n_seq = REFVEC_FORCED };
	uint64_t free_b[PLAN_MAX_CARDS];
	int i;

	for (i = 0; i < n_cards; i++) {
		if (rk_card_refresh(&cards[i]))
			return -1;
		free_b[i] = cards[i].mem_free;
	}
	if (plan_model(r->m, &sz, n_cards, free_b, NULL, plan, r->err, sizeof(r->err)))
		return -1;
	return pipe_create(&r->p, r->m, cards, plan, &po, r->err, sizeof(r->err));
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	struct refvec rv;
	struct llm_model m;
	struct gguf_file *gf;
	struct rk_card *cards;
	struct plan plan;
	const char *deq_path = NULL;
	float *deq = NULL;
	int buckets[8], n_b = 0, have, want, i, ci, bmax = 1;
	bool decode = false, forced = false;
	char err[512], tag[128], ps[256];
	double t0 = now_s();

	if (argc < 5) {
		fprintf(stderr, "usage: %s VECTORS.ref MODEL.gguf CARDS BUCKET... [--deq DEQ] "
			"[--decode] [--forced]\n",
			argv[0]);
		return 2;
	}
	want = atoi(argv[3]);
	for (i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--deq") && i + 1 < argc)
			deq_path = argv[++i];
		else if (!strcmp(argv[i], "--decode"))
			decode = true;
		else if (!strcmp(argv[i], "--forced"))
			forced = true;
		else if (n_b < 8 && atoi(argv[i]) >= 1 && atoi(argv[i]) <= 64)
			buckets[n_b++] = atoi(argv[i]);
	}
	for (i = 0; i < n_b; i++)
		bmax = buckets[i] > bmax ? buckets[i] : bmax;
	if (refvec_load(argv[1], &rv, err, sizeof(err)) || !(gf = gguf_open(argv[2], err, sizeof(err))) ||
	    llm_model_load(&m, gf, err, sizeof(err))) {
		fprintf(stderr, "qwen_check: %s\n", err);
		return 2;
	}
	printf("# %s: vectors and model parsed in %.1f s\n", rv.model, now_s() - t0);
	if (rk_open_all(&cards, &have) || have < want) {
		printf("ok 1 - %s on %d cards # SKIP only %d cards\n", rv.model, want, have);
		return 0;
	}
	r.m = &m;
	r.rv = &rv;
	r.logits = malloc(sizeof(float) * REFVEC_FORCED * m.n_vocab);
	if (deq_path)
		deq = read_deq(deq_path, &rv);
	if (deq_path && !is_f32(rv.model))
		tap_ok(deq != NULL, "%s: dequantized reference %s read", rv.model, deq_path);
	if (!tap_ok(r.logits && !setup(&r, cards, want, bmax, &plan), "%s loads on %d cards",
		    rv.model, want)) {
		printf("# %s\n", r.err);
		goto out;
	}
	plan_format(&plan, ps, sizeof(ps));
	printf("# %s: %s (loaded in %.1f s)\n", rv.model, ps, now_s() - t0);
	for (i = 0; i < n_b; i++) {
		int agree, text, ties, tt;

		snprintf(tag, sizeof(tag), "%s cards %d bucket %d", rv.model, want, buckets[i]);
		for (ci = 0; ci < rv.n_cases; ci++)
			check_case(&r, ci, buckets[i], decode, deq, tag);
		if (is_f32(rv.model) && !forced) {
			printf("# %s: %.1f s so far\n", tag, now_s() - t0);
			continue;
		}
		agree = forced_agree(&r, rv.forced, rv.forced_top1, buckets[i], tag, &ties);
		tap_ok(agree + ties >= (is_f32(rv.model) ? REFVEC_FORCED : MIN_FORCED),
		       "%s: teacher-forced top-1 agrees with llama.cpp on %d of %d, %d more near-ties "
		       "(%s)", tag, agree, REFVEC_FORCED, ties, agree < 0 ? r.err : "own greedy text");
		if (is_f32(rv.model)) {
			text = forced_agree(&r, rv.text, rv.text_top1, buckets[i], tag, &tt);
			printf("# %s: natural-text teacher-forced top-1 agreement %d of %d\n", tag,
			       text, REFVEC_FORCED);
		}
		printf("# %s: %.1f s so far\n", tag, now_s() - t0);
	}
out:
	pipe_destroy(r.p);
	rk_close_all(cards, have);
	llm_model_free(&m);
	gguf_close(gf);
	refvec_free(&rv);
	free(r.logits);
	free(deq);
	return tap_done();
}
