// SPDX-License-Identifier: MIT
/*
 * mksynth's model specs (synth_preset.h): named shapes, shape files, type
 * plans, weight distributions and seeds.
 */
#include "synth_preset.h"

#include <stdio.h>
#include <string.h>

#include "quant.h"
#include "shape.h"

/**
 * struct preset - one named shape
 * @set: "tiny", "bench", "9b" or "27b"
 * @embd_scale: half-width of the token embedding's values
 * @m: the shape (the other fields are set by preset_spec())
 */
struct preset {
	const char *set;
	double embd_scale;
	struct synth_model m;
};

static const struct preset presets[] = {
	{ "tiny", 1.4, { .arch = "llama", .n_layers = 8, .dim = 256, .ffn = 768,
	  .n_heads = 4, .n_kv_heads = 2, .head_dim = 64, .rope_dim = 64, .n_ctx = 4096,
	  .rope_theta = 10000.0f, .rms_eps = 1e-5f, .n_vocab = 512, .tied = true } },
	{ "tiny", 1.4, { .arch = "qwen2", .n_layers = 8, .dim = 256, .ffn = 768,
	  .n_heads = 4, .n_kv_heads = 2, .head_dim = 64, .rope_dim = 64, .n_ctx = 32768,
	  .rope_theta = 1000000.0f, .rms_eps = 1e-6f, .n_vocab = 512, .tied = false } },
	{ "tiny", 1.4, { .arch = "qwen3", .n_layers = 8, .dim = 256, .ffn = 768,
	  .n_heads = 4, .n_kv_heads = 2, .head_dim = 128, .rope_dim = 128, .n_ctx = 40960,
	  .rope_theta = 1000000.0f, .rms_eps = 1e-6f, .n_vocab = 512, .tied = true } },
	/*
	 * Sections sum to 8 of the 8 rotated pairs; the interleaved rule sends
	 * pairs 6 and 7 to the fourth (position 0) section, so they stay
	 * unrotated: the synthetic model exercises that case too.
	 */
	{ "tiny", 1.4, { .arch = "qwen35", .n_layers = 8, .dim = 256, .ffn = 768,
	  .n_heads = 4, .n_kv_heads = 2, .head_dim = 64, .rope_dim = 16, .n_ctx = 262144,
	  .rope_theta = 10000000.0f, .rms_eps = 1e-6f, .n_vocab = 512, .tied = true,
	  .ssm = { .state = 64, .groups = 2, .rank = 4, .conv = 4, .fa_interval = 4,
		   .sections = { 2, 2, 2, 2 } } } },
	/*
	 * Benchmark shapes (tests/bench/hybrid): qwen35 and a llama model of
	 * the same parameter count (101.9 M in the blocks; the llama FFN is
	 * widened to match), dim 1024, 8 blocks, 8 query / 2 KV heads of 128.
	 */
	{ "bench", 1.0, { .arch = "llama", .n_layers = 8, .dim = 1024, .ffn = 3296,
	  .n_heads = 8, .n_kv_heads = 2, .head_dim = 128, .rope_dim = 128, .n_ctx = 4096,
	  .rope_theta = 10000.0f, .rms_eps = 1e-5f, .n_vocab = 512, .tied = true } },
	{ "bench", 1.0, { .arch = "qwen35", .n_layers = 8, .dim = 1024, .ffn = 2816,
	  .n_heads = 8, .n_kv_heads = 2, .head_dim = 128, .rope_dim = 32, .n_ctx = 4096,
	  .rope_theta = 10000000.0f, .rms_eps = 1e-6f, .n_vocab = 512, .tied = true,
	  .ssm = { .state = 64, .groups = 8, .rank = 16, .conv = 4, .fa_interval = 4,
		   .sections = { 6, 5, 5, 0 } } } },
	{ "9b", 1.0, { .arch = "qwen35", .n_layers = 32, .dim = 4096, .ffn = 12288,
	  .n_heads = 16, .n_kv_heads = 4, .head_dim = 256, .rope_dim = 64, .n_ctx = 262144,
	  .rope_theta = 10000000.0f, .rms_eps = 1e-6f, .n_vocab = 248320, .tied = false,
	  .shape_only = true,
	  .ssm = { .state = 128, .groups = 16, .rank = 32, .conv = 4, .fa_interval = 4,
		   .sections = { 11, 11, 10, 0 } } } },
	{ "27b", 1.0, { .arch = "qwen35", .n_layers = 64, .dim = 5120, .ffn = 17408,
	  .n_heads = 24, .n_kv_heads = 4, .head_dim = 256, .rope_dim = 64, .n_ctx = 262144,
	  .rope_theta = 10000000.0f, .rms_eps = 1e-6f, .n_vocab = 248320, .tied = false,
	  .shape_only = true,
	  .ssm = { .state = 128, .groups = 16, .rank = 48, .conv = 4, .fa_interval = 4,
		   .sections = { 11, 11, 10, 0 } } } },
};

#define N_PRESETS (sizeof(presets) / sizeof(presets[0]))

/* The preset of @set and @arch, or NULL. */
static const struct preset *find(const char *set, const char *arch)
{
	size_t i;

	for (i = 0; i < N_PRESETS; i++)
		if (!strcmp(presets[i].set, set) && !strcmp(presets[i].m.arch, arch))
			return &presets[i];
	return NULL;
}

/* The weight distributions of synth_preset.h, every tensor F32. */
static void set_dists(struct synth_model *s, double embd_scale)
{
	static const enum synth_role mats[] = {
		SYNTH_Q, SYNTH_K, SYNTH_V, SYNTH_O, SYNTH_GATE, SYNTH_UP, SYNTH_DOWN,
		SYNTH_SSM_QKV, SYNTH_SSM_GATE, SYNTH_SSM_BETA, SYNTH_SSM_ALPHA, SYNTH_SSM_OUT,
		SYNTH_MTP_EH_PROJ,
	};
	static const enum synth_role norms[] = {
		SYNTH_ATTN_NORM, SYNTH_QK_NORM, SYNTH_FFN_NORM, SYNTH_OUT_NORM, SYNTH_SSM_NORM,
		SYNTH_MTP_NORM,
	};
	size_t i;

	for (i = 0; i < sizeof(mats) / sizeof(mats[0]); i++)
		s->t[mats[i]] = (struct synth_tensor){ QUANT_TYPE_F32, 0, 1.0, SYNTH_FAN_IN };
	s->t[SYNTH_SSM_ALPHA].scale = 0.5;
	for (i = 0; i < sizeof(norms) / sizeof(norms[0]); i++)
		s->t[norms[i]] = (struct synth_tensor){ QUANT_TYPE_F32, 1.0, 0.1, SYNTH_UNIFORM };
	s->t[SYNTH_BIAS] = (struct synth_tensor){ QUANT_TYPE_F32, 0, 0.1, SYNTH_UNIFORM };
	s->t[SYNTH_SSM_CONV] = (struct synth_tensor){ QUANT_TYPE_F32, 0, 0.5, SYNTH_UNIFORM };
	s->t[SYNTH_SSM_DT] = (struct synth_tensor){ QUANT_TYPE_F32, 0, 0, SYNTH_DT_BIAS };
	s->t[SYNTH_SSM_A] = (struct synth_tensor){ QUANT_TYPE_F32, 0, 0, SYNTH_NEG_A };
	s->t[SYNTH_EMBD] = (struct synth_tensor){ QUANT_TYPE_F32, 0, 0, SYNTH_UNIFORM };
	s->t[SYNTH_OUTPUT] = (struct synth_tensor){ QUANT_TYPE_F32, 0, 0, SYNTH_NEAR_EMBD };
	synth_preset_embd_scale(s, embd_scale);
	s->more_bits = true;
	s->more_type = QUANT_TYPE_F32;
}

/* @s = preset @p with mksynth's name, layout flags, vocabulary and weights. */
static void preset_spec(struct synth_model *s, const struct preset *p)
{
	*s = p->m;
	s->name = "rk1828 synthetic";
	s->biases = !strcmp(s->arch, "qwen2");
	s->qk_norm = !strcmp(s->arch, "qwen3") || !strcmp(s->arch, "qwen35");
	s->vocab = SYNTH_VOCAB_BYTES;
	s->fill = SYNTH_RANDOM;
	s->seed = synth_preset_seed(s->arch, 0);
	set_dists(s, p->embd_scale);
}

int synth_preset(struct synth_model *s, const char *preset, const char *arch,
		 char *err, size_t errlen)
{
	const struct preset *p = find(preset, arch);
	size_t i;

	if (!p) {
		for (i = 0; i < N_PRESETS && strcmp(presets[i].set, preset); i++)
			;
		if (i == N_PRESETS)
			snprintf(err, errlen, "unknown --preset %s", preset);
		else if (!strcmp(preset, "9b") || !strcmp(preset, "27b"))
			snprintf(err, errlen, "--preset %s is a qwen35 shape", preset);
		else
			snprintf(err, errlen, "--preset %s has no --arch %s", preset, arch);
		return -1;
	}
	preset_spec(s, p);
	return 0;
}

int synth_preset_shape(struct synth_model *s, const struct model_shape *m,
		       char *err, size_t errlen)
{
	bool qwen35 = !strcmp(m->arch, "qwen35");
	const struct preset *p = find(qwen35 ? "9b" : "tiny", m->arch);

	if (!p) {
		snprintf(err, errlen, "%s: unknown arch %s", m->name, m->arch);
		return -1;
	}
	preset_spec(s, p);
	if (!qwen35)
		s->rope_dim = m->head_dim;
	s->n_layers = m->layers;
	s->dim = m->dim;
	s->ffn = m->ffn;
	s->n_heads = m->heads;
	s->n_kv_heads = m->kv_heads;
	s->head_dim = m->head_dim;
	s->n_vocab = m->vocab;
	s->tied = m->tied;
	if (qwen35) {
		s->ssm.fa_interval = m->fa_interval;
		s->ssm.state = m->ssm_head_dim;
		s->ssm.groups = m->ssm_k_heads;
		s->ssm.rank = m->ssm_v_heads;
		s->ssm.conv = m->ssm_conv;
	}
	s->shape_only = true;
	return 0;
}

/**
 * struct type_plan - the types of one --type
 * @name: its name
 * @mat: matrices
 * @embd: token embedding
 * @head: LM head
 * @more: attn_v and ffn_down in the use_more_bits() layers
 */
struct type_plan {
	const char *name;
	int mat, embd, head, more;
};

static const struct type_plan plans[] = {
	{ "f32", QUANT_TYPE_F32, QUANT_TYPE_F32, QUANT_TYPE_F32, QUANT_TYPE_F32 },
	{ "f16", QUANT_TYPE_F16, QUANT_TYPE_F16, QUANT_TYPE_F16, QUANT_TYPE_F16 },
	{ "bf16", QUANT_TYPE_BF16, QUANT_TYPE_BF16, QUANT_TYPE_BF16, QUANT_TYPE_BF16 },
	{ "q8_0", QUANT_TYPE_Q8_0, QUANT_TYPE_Q8_0, QUANT_TYPE_Q8_0, QUANT_TYPE_Q8_0 },
	{ "q4_0", QUANT_TYPE_Q4_0, QUANT_TYPE_Q4_0, QUANT_TYPE_Q4_0, QUANT_TYPE_Q4_0 },
	{ "q4_1", QUANT_TYPE_Q4_1, QUANT_TYPE_Q4_1, QUANT_TYPE_Q4_1, QUANT_TYPE_Q4_1 },
	{ "q5_0", QUANT_TYPE_Q5_0, QUANT_TYPE_Q5_0, QUANT_TYPE_Q5_0, QUANT_TYPE_Q5_0 },
	{ "q5_1", QUANT_TYPE_Q5_1, QUANT_TYPE_Q5_1, QUANT_TYPE_Q5_1, QUANT_TYPE_Q5_1 },
	{ "q5_k", QUANT_TYPE_Q5_K, QUANT_TYPE_Q5_K, QUANT_TYPE_Q5_K, QUANT_TYPE_Q5_K },
	{ "q6_k", QUANT_TYPE_Q6_K, QUANT_TYPE_Q6_K, QUANT_TYPE_Q6_K, QUANT_TYPE_Q6_K },
	{ "q4_k_m", QUANT_TYPE_Q4_K, QUANT_TYPE_Q4_K, QUANT_TYPE_Q6_K, QUANT_TYPE_Q6_K },
	{ "w4a16", QUANT_TYPE_Q4_1, QUANT_TYPE_Q4_1, QUANT_TYPE_Q6_K, QUANT_TYPE_Q4_1 },
};

int synth_preset_types(struct synth_model *s, const char *plan, char *err, size_t errlen)
{
	static const enum synth_role mats[] = {
		SYNTH_Q, SYNTH_K, SYNTH_V, SYNTH_O, SYNTH_GATE, SYNTH_UP, SYNTH_DOWN,
		SYNTH_SSM_QKV, SYNTH_SSM_GATE, SYNTH_SSM_BETA, SYNTH_SSM_ALPHA, SYNTH_SSM_OUT,
		SYNTH_MTP_EH_PROJ,
	};
	const struct type_plan *p = NULL;
	size_t i;

	for (i = 0; i < sizeof(plans) / sizeof(plans[0]); i++)
		if (!strcmp(plans[i].name, plan))
			p = &plans[i];
	if (!p) {
		snprintf(err, errlen, "unknown --type %s", plan);
		return -1;
	}
	for (i = 0; i < sizeof(mats) / sizeof(mats[0]); i++)
		s->t[mats[i]].type = p->mat;
	s->t[SYNTH_EMBD].type = p->embd;
	s->t[SYNTH_OUTPUT].type = p->head;
	s->more_type = p->more;
	return 0;
}

void synth_preset_embd_scale(struct synth_model *s, double scale)
{
	s->t[SYNTH_EMBD].scale = scale;
	s->t[SYNTH_OUTPUT].scale = 0.5 * scale;
}

uint64_t synth_preset_seed(const char *arch, uint64_t seed)
{
	size_t n = strlen(arch);

	return 0x9e3779b97f4a7c15ULL ^ (seed * 0x100000001b3ULL) ^ (uint64_t)n ^
	       ((uint64_t)(unsigned char)arch[n - 1] << 32);
}
