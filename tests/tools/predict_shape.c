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
 * per-card ones of print_extra().
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "planner.h"
#include "predict.h"
#include "shape.h"

static uint64_t layer_bytes(const struct cost_layer *l, uint32_t n_ctx)
{
	uint64_t b = l->small_bytes;
	uint32_t i;

	for (i = 0; i < l->n_mats; i++)
		b += l->mat[i].bytes;
	if (l->mixer == COST_MIX_ATTN)
		b += 2ull * n_ctx * l->n_kv_heads * l->head_dim * l->kv_elt_bytes;
	else
		b += (uint64_t)l->dn_v_heads * l->dn_head_dim * l->dn_head_dim *
		     l->state_elt_bytes;
	return b;
}

/*
 * The figures multi-card deployments publish besides predict_run()'s
 * (tests/shapes/vendor-multicard.txt): per card, its share of a decode
 * step at position PREDICT_PROMPT and its rate on one bucket from
 * position 0; the TTFT of a one-bucket prompt; the prefill rate of a
 * 5120-token prompt (only when it fits --ctx).
 */
static int print_extra(const struct cost_layer *layers, uint32_t n_layers,
		       const struct cost_head *head, const struct plan *plan,
		       const struct predict_opts *po)
{
	struct psim *s = psim_create(layers, n_layers, head, plan, po);
	struct cost_batch step = { 0 }, bucket = { 0 };
	int k;

	if (!s)
		return -1;
	cost_batch_add_seq(&step, 1, PREDICT_PROMPT, 1);
	cost_batch_add_seq(&bucket, po->bucket, 0, 0);
	for (k = 0; k < plan->n_segs; k++) {
		printf("card%d_step_ms = %.2f\n", k, psim_stage_ns(s, k, &step) / 1e6);
		printf("card%d_bucket_tok_s = %.1f\n", k,
		       po->bucket / (psim_stage_ns(s, k, &bucket) / 1e9));
	}
	printf("ttft%u_ms = %.1f\n", po->bucket, psim_prefill(s, po->bucket, po->bucket) / 1e6);
	psim_destroy(s);
	if (po->n_ctx < 5120)
		return 0;
	s = psim_create(layers, n_layers, head, plan, po);
	if (!s)
		return -1;
	printf("prefill5120_tok_s = %.1f\n", 5120 / (psim_prefill(s, 5120, po->bucket) / 1e9));
	psim_destroy(s);
	return 0;
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
	struct model_shape sh;
	struct card_profile prof;
	struct predict_opts po = { .link = COST_LINK_PCIE, .bucket = 128, .n_ctx = PREDICT_PROMPT + PREDICT_GEN };
	struct cost_layer *layers;
	struct cost_head head;
	struct plan_input in = { 0 };
	struct plan plan;
	struct prediction pr;
	uint64_t bb[1024], free_b[PLAN_MAX_CARDS];
	const char *profile = NULL;
	char err[4096], buf[512];
	int c, n_cards = 1, i;
	uint32_t l;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': n_cards = atoi(optarg); break;
		case 'l':
			if (cost_link_parse(optarg, &po.link)) {
				fprintf(stderr, "predict_shape: --link usb|pcie\n");
				return 2;
			}
			break;
		case 'b': po.bucket = (uint32_t)atoi(optarg); break;
		case 'x': po.n_ctx = (uint32_t)atoi(optarg); break;
		case 'p': profile = optarg; break;
		default: return 2;
		}
	}
	if (optind + 1 != argc || n_cards < 1 || n_cards > PLAN_MAX_CARDS || !po.bucket) {
		fprintf(stderr, "usage: predict_shape SHAPE [--cards N] [--link usb|pcie] "
			"[--bucket B] [--ctx N] [--profile FILE]\n");
		return 2;
	}
	if (shape_load(&sh, argv[optind], err, sizeof(err)) ||
	    (profile ? card_profile_load(&prof, profile, err, sizeof(err))
		     : card_profile_builtin(&prof, err, sizeof(err)))) {
		fprintf(stderr, "predict_shape: %s\n", err);
		return 1;
	}
	if (sh.layers > 1024) {
		fprintf(stderr, "predict_shape: too many layers\n");
		return 1;
	}
	po.prof = &prof;
	layers = calloc(sh.layers, sizeof(*layers));
	if (!layers)
		return 1;
	for (l = 0; l < sh.layers; l++) {
		shape_cost_layer(&sh, l, &layers[l]);
		bb[l] = layer_bytes(&layers[l], po.n_ctx);
	}
	shape_cost_head(&sh, &head);
	for (i = 0; i < n_cards; i++)
		free_b[i] = prof.mem_usable_bytes;
	in.n_blocks = (int)sh.layers;
	in.block_bytes = bb;
	in.head_bytes = head.bytes + (uint64_t)sh.dim * 4;
	in.n_cards = n_cards;
	in.card_free = free_b;
	if (plan_make(&in, &plan, err, sizeof(err))) {
		fprintf(stderr, "predict_shape: %s\n", err);
		return 1;
	}
	if (predict_run_layers(layers, sh.layers, &head, &plan, &po, &pr, err, sizeof(err))) {
		fprintf(stderr, "predict_shape: %s\n", err);
		return 1;
	}
	plan_format(&plan, buf, sizeof(buf));
	printf("%s, %d card%s, %s, bucket %u: %s\n", sh.name, n_cards, n_cards == 1 ? "" : "s",
	       cost_link_name(po.link), po.bucket, buf);
	for (i = 0; i < PREDICT_N_TTFT; i++)
		if (!isnan(pr.ttft_ms[i]))
			printf("ttft_ms[%u] = %.1f\n", predict_ttft_prompt(i), pr.ttft_ms[i]);
	printf("prefill_tok_s = %.1f\ndecode_tok_s = %.2f\ntpot_ms = %.2f\n", pr.prefill_tok_s,
	       pr.decode_tok_s, pr.tpot_ms);
	for (i = 0; i < PREDICT_N_SESSIONS; i++)
		printf("aggregate_decode_tok_s[%u] = %.1f\n", predict_sessions(i),
		       pr.aggregate_tok_s[i]);
	for (i = 0; i < plan.n_segs; i++)
		printf("card%d busy %.0f %% of the prefill\n", i, 100 * pr.card_busy[i]);
	if (print_extra(layers, sh.layers, &head, &plan, &po)) {
		fprintf(stderr, "predict_shape: out of memory\n");
		free(layers);
		return 1;
	}
	free(layers);
	return 0;
}
