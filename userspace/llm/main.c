// SPDX-License-Identifier: MIT
/*
 * rk1828-llm: run a GGUF language model split over RK1828 cards.
 *
 *   rk1828-llm run  -m MODEL -p PROMPT [options]   generate text
 *   rk1828-llm info                                list the cards
 *   rk1828-llm plan -m MODEL [--cards ...] [--ctx N] [--bucket B]
 *                   [--predict] [--link usb|pcie] [--json]
 *                                                  print the segment plan
 *                                                  and predict its speed
 *   rk1828-llm serve -m MODEL [options]            OpenAI-compatible server
 *                                                  and web UI (serve.c)
 *
 * The generated text goes to stdout as it is produced (the prompt is not
 * echoed); one stats line goes to stderr at the end.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cardspec.h"
#include "engine.h"
#include "gguf.h"
#include "model.h"
#include "planner.h"
#include "predict.h"
#include "profile.h"
#include "rk1828.h"
#include "server.h"
#include "tokenizer.h"
#include "rk1828/util.h"

#define DEFAULT_CTX	4096
#define DEFAULT_BUCKET	128
#define DEFAULT_CARD_MEM (5ULL << 30)

/* Exit status: see the end of usage(). */
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

struct args {
	const char *cmd, *model, *prompt, *cards, *dump_logits;
	struct cards_spec cs;
	int n_predict;
	float temp, top_p;
	int top_k;
	uint64_t seed;
	bool have_seed, no_bos, bucket_set;
	uint32_t bucket, n_ctx;
	uint64_t card_mem;	/* plan only: simulated cards of this size */
	bool predict, json, cards_auto;	/* plan --predict, --json, --cards auto */
	enum cost_link link;
	const char *profile;	/* --profile FILE, NULL: the built-in one */
	int verbose;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rk1828-llm run -m MODEL -p PROMPT [-n N_PREDICT] [--temp T] [--top-k K]\n"
		"                      [--top-p P] [--seed S] [--cards all|N|LIST] [--bucket B]\n"
		"                      [--ctx N] [--no-bos] [--dump-logits FILE] [-v]\n"
		"       rk1828-llm info\n"
		"       rk1828-llm plan -m MODEL [--cards all|N|LIST|auto] [--ctx N] [--bucket B]\n"
		"                       [--card-mem BYTES[K|M|G]] [--predict] [--link usb|pcie]\n"
		"                       [--profile FILE] [--json]\n"
		"       rk1828-llm serve -m MODEL [--host H] [--port P] [--cards all|N|LIST]\n"
		"                        [--parallel S] [--ctx N] [--bucket B] [--api-key KEY]\n"
		"                        [--alias NAME] [--queue Q] [--no-ui] [-v]\n"
		"                        (OpenAI-compatible HTTP server and web UI;\n"
		"                        'rk1828-llm serve --help' explains its options)\n"
		"\n"
		"  -n N_PREDICT     tokens to generate (default 128)\n"
		"  --temp T         temperature, 0 = greedy (default 0.8)\n"
		"  --top-k K        top-k (default 40, 0 = off)\n"
		"  --top-p P        nucleus sampling, 0 < P <= 1 (default 0.95, 1 = off)\n"
		"  --seed S         sampler seed, an integer >= 0 (default: time based)\n"
		"  --cards C        all (default), N (the first N cards) or a comma\n"
		"                   separated list of card indices (\"0,2\")\n"
		"  --bucket B       prefill bucket in tokens (default 128, capped to fit)\n"
		"  --ctx N          context length (default min(model context, 4096))\n"
		"  --no-bos         do not prepend the BOS token\n"
		"  --dump-logits F  write the last prompt position's logits to F\n"
		"  --card-mem SIZE  plan for simulated cards with SIZE free bytes each\n"
		"  --cards auto     plan: the fewest simulated cards the model fits on\n"
		"  --predict        plan: predict TTFT, prefill/decode tok/s, TPOT and the\n"
		"                   aggregate decode of 1/2/4 sessions on the card profile\n"
		"  --link L         plan --predict: usb or pcie (default pcie)\n"
		"  --profile FILE   card profile (default: the built-in rk1828.conf)\n"
		"  --json           plan: print one JSON object (the plan, and the prediction)\n"
		"  -v               verbose\n"
		"\n"
		"exit status: 0 success; 1 runtime failure (no cards or fewer than --cards\n"
		"asks for, bad model file, model does not fit, job failure); 2 usage error\n"
		"(unknown command or option, bad option value, bad --cards, missing -m/-p)\n");
}


static int parse_u32(const char *s, const char *opt, uint32_t min, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s || v < min || v > 0x7fffffff) {
		fprintf(stderr, "rk1828-llm: %s: bad value \"%s\"\n", opt, s);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* A float in [min, max], or (min, max] with @min_open. */
static int parse_float(const char *s, const char *opt, float min, bool min_open, float max,
		       float *out)
{
	char *end;
	float v;

	errno = 0;
	v = strtof(s, &end);
	if (errno || *end || end == s || !(v >= min && v <= max) || (min_open && v == min)) {
		if (min_open)
			fprintf(stderr, "rk1828-llm: %s: bad value \"%s\" (must be > %g and <= %g)\n",
				opt, s, min, max);
		else
			fprintf(stderr, "rk1828-llm: %s: bad value \"%s\" (%g..%g)\n", opt, s, min,
				max);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	enum { O_TEMP = 256, O_TOPK, O_TOPP, O_SEED, O_CARDS, O_BUCKET, O_CTX,
	       O_NOBOS, O_DUMP, O_CARDMEM, O_PREDICT, O_JSON, O_LINK, O_PROFILE };
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "prompt", required_argument, NULL, 'p' },
		{ "n-predict", required_argument, NULL, 'n' },
		{ "temp", required_argument, NULL, O_TEMP },
		{ "top-k", required_argument, NULL, O_TOPK },
		{ "top-p", required_argument, NULL, O_TOPP },
		{ "seed", required_argument, NULL, O_SEED },
		{ "cards", required_argument, NULL, O_CARDS },
		{ "bucket", required_argument, NULL, O_BUCKET },
		{ "ctx", required_argument, NULL, O_CTX },
		{ "no-bos", no_argument, NULL, O_NOBOS },
		{ "dump-logits", required_argument, NULL, O_DUMP },
		{ "card-mem", required_argument, NULL, O_CARDMEM },
		{ "predict", no_argument, NULL, O_PREDICT },
		{ "json", no_argument, NULL, O_JSON },
		{ "link", required_argument, NULL, O_LINK },
		{ "profile", required_argument, NULL, O_PROFILE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[160];
	uint32_t u;
	int c;

	memset(a, 0, sizeof(*a));
	a->n_predict = 128;
	a->temp = 0.8f;
	a->top_k = 40;
	a->top_p = 0.95f;
	a->cards = "all";
	a->link = COST_LINK_PCIE;
	if (argc < 2) {
		usage(stderr);
		return -1;
	}
	a->cmd = argv[1];
	if (!strcmp(a->cmd, "-h") || !strcmp(a->cmd, "--help") || !strcmp(a->cmd, "help")) {
		usage(stdout);
		exit(0);
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "m:p:n:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'm': a->model = optarg; break;
		case 'p': a->prompt = optarg; break;
		case 'n':
			if (parse_u32(optarg, "-n", 0, &u))
				return -1;
			a->n_predict = (int)u;
			break;
		case O_TEMP:
			if (parse_float(optarg, "--temp", 0.0f, false, 100.0f, &a->temp))
				return -1;
			break;
		case O_TOPK:
			if (parse_u32(optarg, "--top-k", 0, &u))
				return -1;
			a->top_k = (int)u;
			break;
		case O_TOPP:
			if (parse_float(optarg, "--top-p", 0.0f, true, 1.0f, &a->top_p))
				return -1;
			break;
		case O_SEED: {
			char *end;

			/* strtoull() alone would take "-1" as 2^64 - 1. */
			errno = 0;
			a->seed = strtoull(optarg, &end, 10);
			if (optarg[0] < '0' || optarg[0] > '9' || errno || *end) {
				fprintf(stderr, "rk1828-llm: --seed: bad value \"%s\" (an integer 0..%llu)\n",
					optarg, (unsigned long long)UINT64_MAX);
				return -1;
			}
			a->have_seed = true;
			break;
		}
		case O_CARDS: a->cards = optarg; break;
		case O_BUCKET:
			if (parse_u32(optarg, "--bucket", 1, &a->bucket))
				return -1;
			a->bucket_set = true;
			break;
		case O_CTX:
			if (parse_u32(optarg, "--ctx", 1, &a->n_ctx))
				return -1;
			break;
		case O_NOBOS: a->no_bos = true; break;
		case O_DUMP: a->dump_logits = optarg; break;
		case O_CARDMEM:
			if (util_parse_size(optarg, &a->card_mem) || !a->card_mem) {
				fprintf(stderr, "rk1828-llm: --card-mem: bad size \"%s\"\n", optarg);
				return -1;
			}
			break;
		case O_PREDICT: a->predict = true; break;
		case O_JSON: a->json = true; break;
		case O_LINK:
			if (cost_link_parse(optarg, &a->link)) {
				fprintf(stderr, "rk1828-llm: --link: bad value \"%s\" (usb or pcie)\n",
					optarg);
				return -1;
			}
			break;
		case O_PROFILE: a->profile = optarg; break;
		case 'v': a->verbose++; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rk1828-llm: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	if (strcmp(a->cmd, "info") && strcmp(a->cmd, "plan") && strcmp(a->cmd, "run")) {
		fprintf(stderr, "rk1828-llm: unknown command \"%s\"\n", a->cmd);
		usage(stderr);
		return -1;
	}
	if (strcmp(a->cmd, "info") && !a->model) {
		fprintf(stderr, "rk1828-llm: no model given (-m MODEL)\n");
		return -1;
	}
	if (!strcmp(a->cmd, "run") && !a->prompt) {
		fprintf(stderr, "rk1828-llm: no prompt given (-p PROMPT)\n");
		return -1;
	}
	if (strcmp(a->cmd, "plan") && (a->predict || a->json)) {
		fprintf(stderr, "rk1828-llm: --predict and --json are options of plan\n");
		return -1;
	}
	if (!strcmp(a->cards, "auto")) {
		if (strcmp(a->cmd, "plan")) {
			fprintf(stderr, "rk1828-llm: --cards auto is an option of plan\n");
			return -1;
		}
		a->cards_auto = true;
		a->cs.kind = CARDS_COUNT;
		a->cs.n = 1;
		return 0;
	}
	if (cards_spec_parse(a->cards, &a->cs, err, sizeof(err))) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		return -1;
	}
	return 0;
}

static int cmd_info(void)
{
	struct rk_card *cards;
	int n, i;

	if (rk_open_all(&cards, &n)) {
		fprintf(stderr, "rk1828-llm: %s\n", rk_error());
		return EXIT_RUNTIME;
	}
	for (i = 0; i < n; i++) {
		const struct rk_card *c = &cards[i];
		char tot[32], fr[32];

		util_fmt_bytes(tot, sizeof(tot), c->mem_size);
		util_fmt_bytes(fr, sizeof(fr), c->mem_free);
		printf("card%d: %s, link %s %u Mbit/s, memory %s total / %s free, protocol %u.%u, serial %016llx\n",
		       i, c->node, rk_link_name(c->link_type), c->link_speed, tot, fr,
		       c->protocol >> 16, c->protocol & 0xffff,
		       (unsigned long long)c->serial);
	}
	rk_close_all(cards, n);
	return 0;
}

/* State shared by plan and run. */
struct session {
	struct gguf_file *gf;
	struct llm_model m;
	struct rk_card *cards;
	int n_cards;
	int sel[PLAN_MAX_CARDS], n_sel;
	struct plan plan;
	struct plan_sizes sizes;
	char plan_str[PLAN_STR_MAX];
};

static void session_close(struct session *S)
{
	if (S->cards)
		rk_close_all(S->cards, S->n_cards);
	llm_model_free(&S->m);
	if (S->gf)
		gguf_close(S->gf);
}

/* Context and bucket of a plan for @m: the options, or the defaults. */
static void session_sizes(const struct args *a, const struct llm_model *m,
			  struct plan_sizes *sz)
{
	memset(sz, 0, sizeof(*sz));
	sz->n_ctx = a->n_ctx ? a->n_ctx :
		    (m->n_ctx_train < DEFAULT_CTX ? m->n_ctx_train : DEFAULT_CTX);
	sz->bucket = a->bucket_set ? a->bucket : DEFAULT_BUCKET;
	if (sz->bucket > sz->n_ctx)
		sz->bucket = sz->n_ctx;
}

static int session_open(struct session *S, const struct args *a, bool simulate)
{
	uint64_t free_b[PLAN_MAX_CARDS];
	int ids[PLAN_MAX_CARDS];
	char err[96 * PLAN_MAX_CARDS + 256];
	int i;

	memset(S, 0, sizeof(*S));
	if (!a->model) {
		fprintf(stderr, "rk1828-llm: no model given (-m MODEL)\n");
		return -1;
	}
	S->gf = gguf_open(a->model, err, sizeof(err));
	if (!S->gf) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		return -1;
	}
	if (llm_model_load(&S->m, S->gf, err, sizeof(err))) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		return -1;
	}
	session_sizes(a, &S->m, &S->sizes);

	if (simulate) {
		/* cmd_plan() refused a list; all: one card. */
		int n = a->cs.kind == CARDS_COUNT ? a->cs.n : 1;

		S->n_sel = n;
		for (i = 0; i < n; i++) {
			S->sel[i] = i;
			free_b[i] = a->card_mem;
			ids[i] = i;
		}
	} else {
		if (rk_open_all(&S->cards, &S->n_cards)) {
			fprintf(stderr, "rk1828-llm: %s\n", rk_error());
			return -1;
		}
		if (cards_spec_select(&a->cs, S->n_cards, S->sel, &S->n_sel, err, sizeof(err))) {
			fprintf(stderr, "rk1828-llm: %s\n", err);
			return -1;
		}
		for (i = 0; i < S->n_sel; i++) {
			struct rk_card *c = &S->cards[S->sel[i]];

			if (rk_card_refresh(c)) {
				fprintf(stderr, "rk1828-llm: %s\n", rk_error());
				return -1;
			}
			free_b[i] = c->mem_free;
			ids[i] = S->sel[i];
		}
	}

	for (;;) {
		int ret = plan_model(&S->m, &S->sizes, S->n_sel, free_b, ids, &S->plan, err,
				     sizeof(err));

		if (!ret)
			break;
		/* An implicit bucket shrinks until the activations fit. */
		if (ret == PLAN_NOFIT && !a->bucket_set && S->sizes.bucket > 1) {
			S->sizes.bucket /= 2;
			continue;
		}
		fprintf(stderr, "rk1828-llm: %s: %s\n", a->model, err);
		if (ret == PLAN_NOFIT) {
			char kv[32];

			util_fmt_bytes(kv, sizeof(kv), llm_kv_bytes(&S->m, 1024) * S->m.n_layers);
			fprintf(stderr, "rk1828-llm: hint: use more cards, a smaller --ctx (now %u; the KV cache is %s per 1024 tokens of context here)%s\n",
				S->sizes.n_ctx, kv,
				S->sizes.bucket > 1 ? " or a smaller --bucket" : "");
		}
		return -1;
	}
	for (i = 0; i < S->plan.n_segs; i++)	/* plan indices -> S->sel */
		S->plan.seg[i].card = S->sel[S->plan.seg[i].card];
	plan_format(&S->plan, S->plan_str, sizeof(S->plan_str));
	if (S->plan.note[0])
		fprintf(stderr, "rk1828-llm: note: %s\n", S->plan.note);
	return 0;
}

/*
 * --cards auto: the fewest cards of @mem free bytes the model fits on, with
 * the reason in @why ("fits on one card", or why one card fewer does not).
 * Return: the count, or 0 (nothing fits; the reason printed).
 */
static int plan_auto(const struct args *a, uint64_t mem, char *why, size_t whylen)
{
	static uint64_t free_b[PLAN_MAX_CARDS];
	static char err[96 * PLAN_MAX_CARDS + 256], last[96 * PLAN_MAX_CARDS + 256];
	struct gguf_file *gf;
	struct llm_model m;
	struct plan_sizes sz;
	struct plan p;
	int n, ret = 0, max;

	gf = gguf_open(a->model, err, sizeof(err));
	if (!gf || llm_model_load(&m, gf, err, sizeof(err))) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		if (gf)
			gguf_close(gf);
		return 0;
	}
	session_sizes(a, &m, &sz);
	max = m.n_layers < PLAN_MAX_CARDS ? (int)m.n_layers : PLAN_MAX_CARDS;
	last[0] = '\0';
	for (n = 1; n <= max && !ret; n++) {
		int r;

		free_b[n - 1] = mem;
		r = plan_model(&m, &sz, n, free_b, NULL, &p, err, sizeof(err));
		if (r == 0)
			ret = n;
		else if (r == PLAN_NOFIT)
			snprintf(last, sizeof(last), "%s", err);
		else
			break;
	}
	if (!ret)
		fprintf(stderr, "rk1828-llm: %s: --cards auto: %s\n", a->model,
			last[0] ? last : err);
	else if (ret == 1)
		snprintf(why, whylen, "the model fits on one card");
	else
		snprintf(why, whylen, "the fewest that fit; on %d: %s", ret - 1, last);
	llm_model_free(&m);
	gguf_close(gf);
	return ret;
}

static int load_profile(const struct args *a, struct card_profile *prof)
{
	char err[512];

	if (a->profile ? card_profile_load(prof, a->profile, err, sizeof(err))
		       : card_profile_builtin(prof, err, sizeof(err))) {
		fprintf(stderr, "rk1828-llm: profile: %s\n", err);
		return -1;
	}
	return 0;
}

static void print_plan(const struct args *a, const struct session *S)
{
	int i;

	printf("model: %s (%s, %u blocks, dim %u, %u heads / %u kv, vocab %u), ctx %u, bucket %u\n",
	       a->model, S->m.arch_name, S->m.n_layers, S->m.dim, S->m.n_heads, S->m.n_kv_heads,
	       S->m.n_vocab, S->sizes.n_ctx, S->sizes.bucket);
	printf("plan: %s\n", S->plan_str);
	for (i = 0; i < S->plan.n_segs; i++) {
		const struct plan_seg *s = &S->plan.seg[i];
		char need[32], fr[32], blk[32];

		util_fmt_bytes(need, sizeof(need), s->bytes);
		util_fmt_bytes(fr, sizeof(fr), s->free);
		if (s->count == 1)
			snprintf(blk, sizeof(blk), "%d", s->first);
		else
			snprintf(blk, sizeof(blk), "%d-%d", s->first, s->first + s->count - 1);
		printf("card%d: blk %s%s: %s of %s free (%llu bytes)\n", s->card_id, blk,
		       s->output ? " + output" : "", need, fr, (unsigned long long)s->bytes);
	}
}

/* The plan as JSON and/or the prediction; 0 or an exit status. */
static int plan_report(const struct args *a, const struct session *S,
		       const struct card_profile *prof)
{
	struct predict_opts po = { prof, a->link, S->sizes.bucket, S->sizes.n_ctx };
	struct prediction pr;
	char err[256], *js;

	if (a->predict && predict_run(&S->m, &S->plan, &po, &pr, err, sizeof(err))) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		return EXIT_RUNTIME;
	}
	if (a->json) {
		js = predict_json(&S->plan, a->predict ? &pr : NULL);
		if (!js) {
			fprintf(stderr, "rk1828-llm: out of memory\n");
			return EXIT_RUNTIME;
		}
		printf("%s\n", js);
		free(js);
		return 0;
	}
	print_plan(a, S);
	if (a->predict)
		predict_print(stdout, &S->plan, &pr, &po);
	return 0;
}

static int cmd_plan(const struct args *a)
{
	struct card_profile prof;
	struct session S;
	struct args sim = *a;
	bool simulate = a->card_mem != 0;
	char why[96 * PLAN_MAX_CARDS + 320];
	int ret;

	if ((a->predict || a->cards_auto) && load_profile(a, &prof))
		return EXIT_RUNTIME;
	if (simulate && a->cs.kind == CARDS_LIST) {
		fprintf(stderr, "rk1828-llm: --cards %s: a list of card indices needs real cards; with --card-mem give a count (--cards N)\n",
			a->cards);
		return EXIT_USAGE;
	}
	if (a->cards_auto) {
		/* Deployment planning: simulated cards of the profile's usable memory. */
		simulate = true;
		if (!sim.card_mem)
			sim.card_mem = prof.mem_usable_bytes;
		sim.cs.n = plan_auto(a, sim.card_mem, why, sizeof(why));
		if (!sim.cs.n)
			return EXIT_RUNTIME;
		fprintf(stderr, "rk1828-llm: --cards auto: %d card%s of %.2f GiB: %s\n", sim.cs.n,
			sim.cs.n == 1 ? "" : "s", sim.card_mem / 1073741824.0, why);
	} else if (!simulate) {
		struct rk_card *cards;
		int n;

		/*
		 * No cards here: plan for simulated cards (the emulator's 5 GiB, or
		 * with --predict the profile's usable memory).
		 */
		if (rk_open_all(&cards, &n) == -ENOENT) {
			if (a->cs.kind == CARDS_LIST) {
				fprintf(stderr, "rk1828-llm: no cards found: a list of card indices (--cards %s) cannot be used without real cards; give a count (--cards N) to plan for simulated cards\n",
					a->cards);
				return EXIT_RUNTIME;
			}
			simulate = true;
			sim.card_mem = a->predict ? prof.mem_usable_bytes : DEFAULT_CARD_MEM;
			if (sim.cs.kind == CARDS_ALL) {
				sim.cs.kind = CARDS_COUNT;
				sim.cs.n = 1;
			}
			fprintf(stderr, "rk1828-llm: no cards found: planning for %d simulated card%s of %.2f GiB (--card-mem to change)\n",
				sim.cs.n, sim.cs.n == 1 ? "" : "s", sim.card_mem / 1073741824.0);
		} else if (n > 0) {
			rk_close_all(cards, n);
		}
	}
	if (session_open(&S, &sim, simulate)) {
		session_close(&S);
		return EXIT_RUNTIME;
	}
	ret = plan_report(a, &S, &prof);
	session_close(&S);
	return ret;
}

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

/* What cmd_run() learns from the engine's events (engine thread). */
struct run_out {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done, first;
	struct engine *e;
	struct engine_event last;	/* the DONE event (text fields cleared) */
	struct engine_stats at_first;	/* stats when the first text arrived */
	char error[384];
};

static void run_event(const struct engine_event *ev, void *user)
{
	struct run_out *ro = user;

	if (ev->len)
		fwrite(ev->text, 1, ev->len, stdout);
	fflush(stdout);
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

static void run_stats(const struct args *a, const struct session *S, struct run_out *ro,
		      int n_prompt)
{
	const struct engine_event *ev = &ro->last;
	int n_gen = ev->usage.completion_tokens;
	/* Decode forwards: one per token after the first, and one for the EOS. */
	int steps = ev->finish == ENGINE_FINISH_STOP ? n_gen : (n_gen ? n_gen - 1 : 0);
	double ttft = ev->timing.ttft_ms, dec = ev->timing.decode_ms;
	double tpot = steps ? dec / steps : 0.0;

	if (ev->finish == ENGINE_FINISH_LENGTH && (a->n_predict < 0 || n_gen < a->n_predict))
		fprintf(stderr, "rk1828-llm: context full (%u tokens); use --ctx to raise it\n",
			S->sizes.n_ctx);
	fprintf(stderr,
		"stats: TTFT %.1f ms, TPOT %.1f ms, prefill %.1f tok/s, decode %.1f tok/s, "
		"prompt %d tok, gen %d tok, plan %s\n",
		ttft, tpot, ttft > 0 ? n_prompt * 1000.0 / ttft : 0.0,
		steps && dec > 0 ? steps * 1000.0 / dec : 0.0, n_prompt, n_gen, S->plan_str);
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
			steps,
			steps ? (st.host_ns - p0->host_ns) / 1e6 / steps : 0.0,
			steps ? (st.wait_ns - p0->wait_ns) / 1e6 / steps : 0.0);
	}
}

static int cmd_run(const struct args *a)
{
	struct engine_opts eo = { .n_slots = 1, .queue_max = -1, .strict_slots = true };
	struct engine_request rq = { 0 };
	struct run_out ro = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	struct engine_req *q = NULL;
	struct engine *e = NULL;
	struct tokenizer *tok = NULL;
	struct session S;
	int32_t *toks = NULL;
	float *logits = NULL;
	char err[768];
	int n_prompt, rc = EXIT_RUNTIME, ret;

	if (session_open(&S, a, false))
		goto out;
	tok = tok_load(S.gf, err, sizeof(err));
	if (!tok) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		goto out;
	}
	if (tok_n_vocab(tok) != (int)S.m.n_vocab) {
		fprintf(stderr, "rk1828-llm: %s: tokenizer has %d tokens but token_embd has %u rows\n",
			a->model, tok_n_vocab(tok), S.m.n_vocab);
		goto out;
	}
	n_prompt = tok_encode(tok, a->prompt, !a->no_bos, NULL, 0);
	if (n_prompt < 0)
		n_prompt = -n_prompt;
	toks = calloc(n_prompt + 1, sizeof(*toks));
	logits = calloc(S.m.n_vocab, sizeof(*logits));
	if (!toks || !logits) {
		fprintf(stderr, "rk1828-llm: out of memory\n");
		goto out;
	}
	n_prompt = tok_encode(tok, a->prompt, !a->no_bos, toks, n_prompt + 1);
	if (n_prompt <= 0) {
		fprintf(stderr, "rk1828-llm: the prompt has no tokens (empty prompt with --no-bos)\n");
		goto out;
	}
	if ((uint32_t)n_prompt >= S.sizes.n_ctx) {
		fprintf(stderr, "rk1828-llm: the prompt has %d tokens, the context only %u (--ctx)\n",
			n_prompt, S.sizes.n_ctx);
		goto out;
	}

	eo.n_ctx = S.sizes.n_ctx;
	eo.bucket = S.sizes.bucket;
	eo.verbose = a->verbose;
	if (a->verbose)
		fprintf(stderr, "model %s: %s, %u blocks, dim %u, vocab %u; ctx %u, bucket %u; plan %s\n",
			a->model, S.m.arch_name, S.m.n_layers, S.m.dim, S.m.n_vocab, eo.n_ctx,
			eo.bucket, S.plan_str);
	ret = engine_create(&e, &S.m, tok, S.cards, S.sel, S.n_sel, &eo, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		goto out;
	}
	ro.e = e;
	rq.prompt = toks;
	rq.n_prompt = n_prompt;
	/* -n beyond the context: generate until it is full, as before. */
	rq.max_tokens = (uint64_t)n_prompt + a->n_predict > S.sizes.n_ctx ? -1 : a->n_predict;
	rq.s.temperature = a->temp;
	rq.s.top_k = a->top_k;
	rq.s.top_p = a->top_p;
	rq.s.seed = a->seed;
	rq.s.have_seed = a->have_seed;
	rq.prompt_logits = a->dump_logits ? logits : NULL;
	rq.cb = run_event;
	rq.user = &ro;
	ret = engine_submit(e, &rq, &q, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		goto out;
	}
	pthread_mutex_lock(&ro.mu);
	while (!ro.done)
		pthread_cond_wait(&ro.cv, &ro.mu);
	pthread_mutex_unlock(&ro.mu);
	printf("\n");
	fflush(stdout);
	if (ro.last.finish == ENGINE_FINISH_ERROR) {
		fprintf(stderr, "rk1828-llm: %s\n", ro.error);
		goto out;
	}
	if (a->dump_logits && dump_logits(a->dump_logits, toks, n_prompt, logits, S.m.n_vocab))
		goto out;
	run_stats(a, &S, &ro, n_prompt);
	rc = 0;
out:
	engine_req_put(q);
	engine_destroy(e);
	if (tok)
		tok_free(tok);
	free(toks);
	free(logits);
	session_close(&S);
	return rc;
}

int main(int argc, char **argv)
{
	struct args a;

	/* `serve` has its own options (userspace/server/serve.c). */
	if (argc >= 2 && !strcmp(argv[1], "serve"))
		return serve_main(argc - 1, argv + 1);
	if (parse_args(argc, argv, &a))
		return EXIT_USAGE;
	if (!strcmp(a.cmd, "info"))
		return cmd_info();
	if (!strcmp(a.cmd, "plan"))
		return cmd_plan(&a);
	if (!strcmp(a.cmd, "run"))
		return cmd_run(&a);
	return EXIT_USAGE;	/* parse_args() rejects other commands */
}
