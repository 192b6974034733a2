// SPDX-License-Identifier: MIT
/*
 * rk1828-llm bench -m MODEL [-p 128,4096] [-n 128] [-r 3] [--sessions S]
 * [--trace FILE] [--spec ngram [--draft-max K]]: the model on the cards present, every figure next to
 * its prediction (bench.h). -p is a list of prompt lengths here, as in
 * llama-bench.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "profile.h"
#include "rk1828.h"

/* -p: a comma separated list of prompt lengths. */
static int parse_prompts(const char *s, struct bench_opts *bo)
{
	const char *p = s;

	bo->n_prompts = 0;
	while (*p) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || end == p || *p == '-' || *p == '+' || !v || v > 0x7fffffff ||
		    (*end && *end != ',') || bo->n_prompts == BENCH_MAX_PROMPTS) {
			fprintf(stderr, "rk1828-llm: bench -p: bad list \"%s\" (up to %d lengths, "
				"like 128,4096)\n", s, BENCH_MAX_PROMPTS);
			return -1;
		}
		bo->prompts[bo->n_prompts++] = (uint32_t)v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/*
 * The link of the prediction: --link, else the link of the cards the plan
 * uses; on a cascade over both, each segment's card's own (@links, set
 * in @bo->card_links). Said in @why.
 */
static enum cost_link bench_link(const struct args *a, const struct session *S,
				 enum cost_link *links, struct bench_opts *bo, const char **why)
{
	bool usb = false, pcie = false;
	int i;

	*why = "--link";
	if (a->link_set)
		return a->link;
	for (i = 0; i < S->n_sel; i++) {
		usb |= S->cards[S->sel[i]].link_type == RK_LINK_USB;
		pcie |= S->cards[S->sel[i]].link_type == RK_LINK_PCIE;
	}
	if (usb && pcie) {
		for (i = 0; i < S->plan.n_segs; i++)
			links[i] = S->cards[S->sel[S->plan.seg[i].card]].link_type == RK_LINK_USB ?
				   COST_LINK_USB : COST_LINK_PCIE;
		bo->card_links = links;
		*why = "the cards are on usb and pcie: each card's own";
		return COST_LINK_USB;
	}
	if (usb || pcie) {
		*why = "the cards' link";
		return usb ? COST_LINK_USB : COST_LINK_PCIE;
	}
	*why = "the cards' link unknown: the default";
	return a->link;
}

int cmd_bench(const struct args *a)
{
	enum cost_link links[PLAN_MAX_CARDS];
	const char *link_why;
	struct bench_opts bo = { 0 };
	struct card_profile prof;
	struct tokenizer *tok = NULL;
	struct session S;
	char err[512];
	int i, n_gen = a->n_predict_set ? a->n_predict : 128, ret = EXIT_RUNTIME;

	if (parse_prompts(a->prompt ? a->prompt : "128,4096", &bo))
		return EXIT_USAGE;
	if (load_profile(a, &prof))
		return EXIT_RUNTIME;
	if (session_open(&S, a, false))
		goto out;
	/* ppN fills positions 0..N-1, tgN 0..N, tgN xS the first prompt and N more. */
	for (i = 0; i < bo.n_prompts; i++)
		if (bo.prompts[i] > S.sizes.n_ctx) {
			fprintf(stderr, "rk1828-llm: bench: a %u-token prompt does not fit the context of %u (--ctx)\n",
				bo.prompts[i], S.sizes.n_ctx);
			goto out;
		}
	if ((uint64_t)n_gen + 1 > S.sizes.n_ctx ||
	    ((a->sessions > 1 || a->spec) && n_gen > 0 &&
	     (uint64_t)(bo.n_prompts ? bo.prompts[0] : 128) + n_gen > S.sizes.n_ctx)) {
		fprintf(stderr, "rk1828-llm: bench: %d generated tokens%s do not fit the context of %u (--ctx)\n",
			n_gen, a->sessions > 1 ? " after the first prompt" : "", S.sizes.n_ctx);
		goto out;
	}
	if ((a->sessions > 1 || a->spec) && n_gen > 0) {
		tok = tok_load(S.gf, err, sizeof(err));
		if (!tok) {
			fprintf(stderr, "rk1828-llm: %s\n", err);
			goto out;
		}
	}
	bo.model_path = a->model;
	bo.m = &S.m;
	bo.tok = tok;
	bo.cards = S.cards;
	bo.card_idx = S.sel;
	bo.n_cards = S.n_sel;
	bo.plan = &S.plan;
	bo.n_ctx = S.sizes.n_ctx;
	bo.bucket = S.sizes.bucket;
	bo.kv_type = S.sizes.kv_type;
	bo.n_gen = n_gen;
	bo.sessions = a->sessions;
	bo.spec = a->spec;
	bo.draft_max = a->draft_max;
	bo.draft_model = a->draft_model;
	bo.reps = a->reps ? a->reps : 3;
	bo.trace = a->trace;
	bo.prof = &prof;
	bo.link = bench_link(a, &S, links, &bo, &link_why);
	bo.out = stdout;
	fprintf(stderr, "rk1828-llm: bench: plan %s; prediction on profile %s, link %s (%s)\n",
		S.plan_str, prof.name, bo.card_links ? "mixed" : cost_link_name(bo.link), link_why);
	if (bench_run(&bo, err, sizeof(err))) {
		fprintf(stderr, "rk1828-llm: bench: %s\n", err);
		goto out;
	}
	ret = 0;
out:
	if (tok)
		tok_free(tok);
	session_close(&S);
	return ret;
}
