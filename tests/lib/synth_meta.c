// SPDX-License-Identifier: MIT
/*
 * The hyperparameter keys of a synthetic model (synth_model.h gives their
 * order): general.*, rk1828.shape_only, then <arch>.*.
 */
#include <stdio.h>
#include <string.h>

#include "gguf_write.h"
#include "synth_int.h"

/* Whether the spec leaves out <arch>.@key. */
static bool skipped(const struct synth *y, const char *key)
{
	return y->s->skip_key && !strcmp(key, y->s->skip_key);
}

/* Add the <arch>.@key u32 (unless it is the one to skip). */
static void add_u32(struct synth *y, const char *key, uint32_t v)
{
	char k[96];

	if (y->failed || skipped(y, key))
		return;
	snprintf(k, sizeof(k), "%s.%s", y->s->arch, key);
	if (gguf_writer_add_u32(y->w, k, v))
		synth_fail(y, "%s: cannot add the key", k);
}

/* Add the <arch>.@key f32 (unless it is the one to skip). */
static void add_f32(struct synth *y, const char *key, float v)
{
	char k[96];

	if (y->failed || skipped(y, key))
		return;
	snprintf(k, sizeof(k), "%s.%s", y->s->arch, key);
	if (gguf_writer_add_f32(y->w, k, v))
		synth_fail(y, "%s: cannot add the key", k);
}

/* qwen35's rope sections and Gated DeltaNet sizes. */
static void add_hybrid(struct synth *y)
{
	const struct synth_ssm *m = &y->s->ssm;
	char k[96];

	snprintf(k, sizeof(k), "%s.rope.dimension_sections", y->s->arch);
	if (!y->failed && !skipped(y, "rope.dimension_sections") &&
	    gguf_writer_add_i32_arr(y->w, k, m->sections, 4))
		synth_fail(y, "%s: cannot add the key", k);
	add_u32(y, "ssm.conv_kernel", m->conv);
	add_u32(y, "ssm.state_size", m->state);
	add_u32(y, "ssm.group_count", m->groups);
	add_u32(y, "ssm.time_step_rank", m->rank);
	add_u32(y, "ssm.inner_size", m->rank * m->state);
	add_u32(y, "full_attention_interval", m->fa_interval);
}

void synth_add_meta(struct synth *y)
{
	const struct synth_model *s = y->s;

	if (gguf_writer_add_str(y->w, "general.architecture", s->arch) ||
	    (s->name && gguf_writer_add_str(y->w, "general.name", s->name)))
		synth_fail(y, "cannot add the general keys");
	/* The weights are holes: the runtime need not upload them (pipeline.h). */
	if (!y->failed && s->shape_only &&
	    gguf_writer_add_bool(y->w, "rk1828.shape_only", true))
		synth_fail(y, "rk1828.shape_only: cannot add the key");
	add_u32(y, "block_count", s->n_layers + s->n_mtp);
	if (s->n_mtp)
		add_u32(y, "nextn_predict_layers", s->n_mtp);
	add_u32(y, "context_length", s->n_ctx);
	add_u32(y, "embedding_length", s->dim);
	add_u32(y, "feed_forward_length", s->ffn);
	add_u32(y, "attention.head_count", s->n_heads);
	add_u32(y, "attention.head_count_kv", s->n_kv_heads);
	if (s->head_dim) {
		add_u32(y, "attention.key_length", s->head_dim);
		add_u32(y, "attention.value_length", s->head_dim);
	}
	if (s->rope_dim)
		add_u32(y, "rope.dimension_count", s->rope_dim);
	add_f32(y, "rope.freq_base", s->rope_theta);
	if (s->rms_eps)
		add_f32(y, "attention.layer_norm_rms_epsilon", s->rms_eps);
	if (synth_is_hybrid(s))
		add_hybrid(y);
}
