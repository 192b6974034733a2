// SPDX-License-Identifier: MIT
/*
 * predict_shape: the deployment prediction (userspace/llm/predict.h) of a
 * model known only by its shape file (tests/shapes/), in the vendor's
 * W4A16 format (tests/lib/shape.h), for the timing documentation and the
 * benchmarks when no GGUF of the model is at hand.
 *
 *   predict_shape SHAPE [--cards N] [--link usb|pcie] [--bucket B]
 *                 [--ctx N] [--profile FILE]
 *
 * The split is the planner's rule (plan_make()) on the shape's weight
 * bytes per block plus its F32 K/V cache for --ctx tokens; the last card
 * adds the LM head. Prints the plan and the predicted figures, with the
 * per-card ones (tests/lib/shape_predict.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape_predict.h"

/* Two decimals for the per-token times and the decode rate, else one. */
static const char *fig_format(const char *key)
{
	size_t n = strlen(key);

	if (!strcmp(key, "decode_tok_s") || !strcmp(key, "tpot_ms") ||
	    (n > 8 && !strcmp(key + n - 8, "_step_ms")))
		return "%s = %.2f\n";
	return "%s = %.1f\n";
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cards", required_argument, NULL, 'c' },
		{ "link", required_argument, NULL, 'l' },
		{ "bucket", required_argument, NULL, 'b' },
		{ "ctx", required_argument, NULL, 'x' },
		{ "profile", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct shape_deploy d = { .cards = 1, .link = COST_LINK_PCIE, .bucket = 128,
				  .n_ctx = PREDICT_PROMPT + PREDICT_GEN };
	static struct shape_prediction sp;
	struct model_shape sh;
	struct card_profile prof;
	const char *profile = NULL;
	char err[4096], buf[512];
	int c, i, busy = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': d.cards = atoi(optarg); break;
		case 'l':
			if (cost_link_parse(optarg, &d.link)) {
				fprintf(stderr, "predict_shape: --link usb|pcie\n");
				return 2;
			}
			break;
		case 'b': d.bucket = (uint32_t)atoi(optarg); break;
		case 'x': d.n_ctx = (uint32_t)atoi(optarg); break;
		case 'p': profile = optarg; break;
		default: return 2;
		}
	}
	if (optind + 1 != argc || d.cards < 1 || d.cards > PLAN_MAX_CARDS || !d.bucket) {
		fprintf(stderr, "usage: predict_shape SHAPE [--cards N] [--link usb|pcie] "
			"[--bucket B] [--ctx N] [--profile FILE]\n");
		return 2;
	}
	if (shape_load(&sh, argv[optind], err, sizeof(err)) ||
	    (profile ? card_profile_load(&prof, profile, err, sizeof(err))
		     : card_profile_builtin(&prof, err, sizeof(err))) ||
	    shape_predict(&sh, &prof, &d, &sp, err, sizeof(err))) {
		fprintf(stderr, "predict_shape: %s\n", err);
		return 1;
	}
	plan_format(&sp.plan, buf, sizeof(buf));
	printf("%s, %d card%s, %s, bucket %u: %s\n", sh.name, d.cards, d.cards == 1 ? "" : "s",
	       cost_link_name(d.link), d.bucket, buf);
	for (i = 0; i < sp.n; i++) {
		if (!busy && !strncmp(sp.fig[i].key, "card", 4)) {
			int k;

			for (k = 0; k < sp.plan.n_segs; k++)
				printf("card%d busy %.0f %% of the prefill\n", k,
				       100 * sp.pr.card_busy[k]);
			busy = 1;
		}
		printf(fig_format(sp.fig[i].key), sp.fig[i].key, sp.fig[i].val);
	}
	return 0;
}
