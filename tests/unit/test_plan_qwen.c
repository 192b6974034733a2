// SPDX-License-Identifier: MIT
/*
 * The planner on real shapes: Qwen3.5-9B and -27B (DESIGN.md section 10)
 * as sparse shape-only GGUFs that build/tools/mksynth writes here (tensor
 * data are holes: the 5.8 GB file takes ~20 MB of disk), in the vendor's
 * W4A16 layout (Q4_1 group-32 asymmetric matrices, a Q6_K LM head).
 *
 *  - per-block costs: an attention block carries K/V caches that grow with
 *    the context, a Gated DeltaNet block a conv + recurrent state that
 *    does not (n_seq sequences plus n_snap snapshots of it), weights as
 *    their GGUF types;
 *  - 9B on 2 cards of 5 GiB with the CLI's defaults (ctx 4096, bucket 128):
 *    the vendor's 19 | 13, the LM head on the second card;
 *  - 27B fits 4 cards of 5 GiB and is refused on 3, naming the cards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "model.h"
#include "planner.h"
#include "rk1828/program.h"
#include "tap.h"

#define GIB (1ULL << 30)

static int make(const char *preset, char *path, size_t len)
{
	char cmd[512];
	int fd;

	snprintf(path, len, "/tmp/rk1828-plan-%s-XXXXXX", preset);
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "build/tools/mksynth -o %s --arch qwen35 --preset %s --type w4a16", path, preset);
	return system(cmd);
}

static void check_costs(const struct llm_model *m)
{
	struct plan_sizes a = { .n_ctx = 4096, .bucket = 128, .n_seq = 1 };
	struct plan_sizes b = a, c = a;
	uint64_t kv = llm_kv_bytes(m, 4096, QUANT_TYPE_F32), st = llm_state_bytes(m, 0);

	b.n_ctx = 8192;
	c.n_snap = 3;
	tap_ok(m->layers[0].kind == LLM_LAYER_DELTANET && m->layers[3].kind == LLM_LAYER_ATTN &&
	       m->n_deltanet == 24, "9B: blocks 0-2 DeltaNet, 3 full attention, 24 DeltaNet blocks");
	tap_ok(plan_block_bytes(m, 3, &b) - plan_block_bytes(m, 3, &a) == kv &&
	       plan_block_bytes(m, 0, &b) == plan_block_bytes(m, 0, &a),
	       "doubling the context adds %llu KV bytes to an attention block, none to a DeltaNet block",
	       (unsigned long long)kv);
	tap_ok(st == 4 * (3ULL * 8192 + 32ULL * 128 * 128 + RK1828_DNET_CHUNK * (2ULL * 32 * 128 + 32) + 1) &&
	       plan_block_bytes(m, 0, &c) - plan_block_bytes(m, 0, &a) >= 3 * st &&
	       plan_block_bytes(m, 0, &c) - plan_block_bytes(m, 0, &a) < 3 * (st + 2 * PLAN_TENSOR_ALIGN),
	       "DeltaNet state %llu bytes (conv 3 x 8192, recurrent 32 x 128 x 128 + a chunk, F32), "
	       "counted (aligned) for each snapshot too", (unsigned long long)st);
	tap_ok(plan_block_bytes(m, 0, &a) > llm_layer_weight_bytes(m, 0) &&
	       llm_layer_weight_bytes(m, 0) < 150ull << 20,
	       "a DeltaNet block's W4A16 weights: %.1f MiB",
	       (double)llm_layer_weight_bytes(m, 0) / 1048576.0);
}

/* rk1828-llm plan --json on the same file: the format. */
static void check_cli_9b(const char *path)
{
	char cmd[512], out[1024] = "";
	size_t n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "build/rk1828-llm plan -m %s --cards 2 --card-mem 5G --ctx 4096 --bucket 128 "
		 "--json 2>/dev/null", path);
	f = popen(cmd, "r");
	if (f) {
		n = fread(out, 1, sizeof(out) - 1, f);
		out[n] = '\0';
		pclose(f);
	}
	tap_ok(strstr(out, "{\"plan\":[{\"card\":0,\"first\":0,\"last\":18,\"output\":false,"
			   "\"bytes\":") &&
	       strstr(out, "{\"card\":1,\"first\":19,\"last\":31,\"output\":true,\"bytes\":"),
	       "rk1828-llm plan --cards 2 --json: %.*s", (int)strcspn(out, "\n"), out);
}

static void check_9b(void)
{
	char path[128], err[512];
	struct gguf_file *gf;
	struct llm_model m;
	struct plan p;
	struct plan_sizes sz = { .n_ctx = 4096, .bucket = 128 };
	uint64_t free_b[2] = { 5 * GIB, 5 * GIB };
	int rc;

	if (!tap_ok(make("9b", path, sizeof(path)) == 0, "mksynth writes a sparse Qwen3.5-9B"))
		return;
	gf = gguf_open(path, err, sizeof(err));
	if (!tap_ok(gf && !llm_model_load(&m, gf, err, sizeof(err)), "9B shape file loads (%s)",
		    gf ? "" : err))
		goto out;
	tap_ok(m.n_layers == 32 && m.dim == 4096 && m.ffn_dim == 12288 && m.n_heads == 16 &&
	       m.n_kv_heads == 4 && m.head_dim == 256 && m.ssm_k_heads == 16 &&
	       m.ssm_v_heads == 32 && m.ssm_state == 128 && m.n_vocab == 248320,
	       "9B shapes: 32 blocks, hidden 4096, FFN 12288, 16/4 heads of 256, GDN 16/32 of 128");
	check_costs(&m);
	rc = plan_model(&m, &sz, 2, free_b, NULL, &p, err, sizeof(err));
	tap_ok(rc == 0 && p.n_segs == 2 && p.seg[0].first == 0 && p.seg[0].count == 19 &&
	       p.seg[1].first == 19 && p.seg[1].count == 13 && p.seg[1].output && !p.seg[0].output,
	       "9B W4A16 on 2 cards: the vendor's 19 | 13 (got %d | %d)", rc ? -1 : p.seg[0].count,
	       rc ? -1 : p.seg[1].count);
	if (!rc)
		printf("# 9B: card0 %.2f GiB, card1 %.2f GiB\n", (double)p.seg[0].bytes / GIB,
		       (double)p.seg[1].bytes / GIB);
	llm_model_free(&m);
	check_cli_9b(path);
out:
	if (gf)
		gguf_close(gf);
	unlink(path);
}

static void check_27b(void)
{
	char path[128], err[4096];
	struct gguf_file *gf;
	struct llm_model m;
	struct plan p;
	struct plan_sizes sz = { .n_ctx = 4096, .bucket = 128 };
	uint64_t free_b[4] = { 5 * GIB, 5 * GIB, 5 * GIB, 5 * GIB };
	int rc, i, ok;

	if (!tap_ok(make("27b", path, sizeof(path)) == 0, "mksynth writes a sparse Qwen3.5-27B"))
		return;
	gf = gguf_open(path, err, sizeof(err));
	if (!tap_ok(gf && !llm_model_load(&m, gf, err, sizeof(err)), "27B shape file loads"))
		goto out;
	tap_ok(m.n_layers == 64 && m.dim == 5120 && m.ffn_dim == 17408 && m.n_heads == 24 &&
	       m.ssm_v_heads == 48, "27B shapes: 64 blocks, hidden 5120, FFN 17408, 24 q heads, "
	       "48 GDN value heads");
	rc = plan_model(&m, &sz, 4, free_b, NULL, &p, err, sizeof(err));
	ok = rc == 0 && p.n_segs == 4 && p.seg[3].output;
	for (i = 0; ok && i < 4; i++)
		ok = p.seg[i].bytes <= 5 * GIB;
	tap_ok(ok, "27B W4A16 fits 4 cards of 5 GiB");
	if (!rc)
		printf("# 27B: %d | %d | %d | %d blocks, %.2f / %.2f / %.2f / %.2f GiB\n",
		       p.seg[0].count, p.seg[1].count, p.seg[2].count, p.seg[3].count,
		       (double)p.seg[0].bytes / GIB, (double)p.seg[1].bytes / GIB,
		       (double)p.seg[2].bytes / GIB, (double)p.seg[3].bytes / GIB);
	rc = plan_model(&m, &sz, 3, free_b, NULL, &p, err, sizeof(err));
	tap_ok(rc == PLAN_NOFIT && strstr(err, "does not fit on 3 cards") && strstr(err, "card2"),
	       "27B on 3 cards of 5 GiB is refused, naming the cards: %.120s", err);
	llm_model_free(&m);

out:
	if (gf)
		gguf_close(gf);
	unlink(path);
}

int main(void)
{
	check_9b();
	check_27b();
	return tap_done();
}
