// SPDX-License-Identifier: MIT
/*
 * The unit tests' small random qwen2 / qwen3 model (synth_model.h,
 * synth_small_qwen_write()).
 */
#include <string.h>

#include "quant.h"
#include "synth_model.h"

int synth_small_qwen_write(const char *path, const char *arch, char *err, size_t errlen)
{
	bool q3 = !strcmp(arch, "qwen3");
	/* qwen2's heads are dim / heads (16): no key_length, as llama.cpp's. */
	struct synth_model s = {
		.arch = arch, .n_layers = 4, .dim = 64, .ffn = 96, .n_heads = 4,
		.n_kv_heads = 2, .head_dim = q3 ? 32 : 0, .n_ctx = 128, .n_vocab = 40,
		.rope_theta = 1000000.0f, .rms_eps = 1e-6f,
		.biases = !q3, .qk_norm = q3, .tied = q3, .fill = SYNTH_RANDOM,
		.t = {
			[SYNTH_EMBD] = { QUANT_TYPE_Q8_0, 0, 0.5f },
			[SYNTH_ATTN_NORM] = { QUANT_TYPE_F32, 1, 0.1f },
			[SYNTH_Q] = { QUANT_TYPE_Q4_0, 0, 0.25f },
			[SYNTH_K] = { QUANT_TYPE_Q8_0, 0, 0.25f },
			[SYNTH_V] = { QUANT_TYPE_F16, 0, 0.25f },
			[SYNTH_O] = { QUANT_TYPE_Q4_0, 0, 0.15f },
			[SYNTH_BIAS] = { QUANT_TYPE_F32, 0, 0.1f },
			[SYNTH_QK_NORM] = { QUANT_TYPE_F32, 1, 0.1f },
			[SYNTH_FFN_NORM] = { QUANT_TYPE_F32, 1, 0.1f },
			[SYNTH_GATE] = { QUANT_TYPE_Q4_0, 0, 0.25f },
			[SYNTH_UP] = { QUANT_TYPE_Q8_0, 0, 0.25f },
			[SYNTH_DOWN] = { QUANT_TYPE_Q4_0, 0, 0.15f },
			[SYNTH_OUT_NORM] = { QUANT_TYPE_F32, 1, 0.1f },
			[SYNTH_OUTPUT] = { QUANT_TYPE_Q8_0, 0, 0.25f },
		},
	};

	return synth_model_write(&s, path, err, errlen);
}
