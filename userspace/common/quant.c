// SPDX-License-Identifier: MIT
/*
 * Scalar reference quantization (encoding): see quant.h and
 * rk1828/quant_blocks.h for the formats.
 */
#include "quant.h"
#include "quant_enc.h"
#include "rk1828/util.h"

#include <math.h>
#include <string.h>

const char *quant_type_name(int type)
{
	switch (type) {
	case QUANT_TYPE_F32:
		return "f32";
	case QUANT_TYPE_F16:
		return "f16";
	case QUANT_TYPE_Q4_0:
		return "q4_0";
	case QUANT_TYPE_Q8_0:
		return "q8_0";
	case QUANT_TYPE_Q4_1:
		return "q4_1";
	case QUANT_TYPE_Q5_0:
		return "q5_0";
	case QUANT_TYPE_Q5_1:
		return "q5_1";
	case QUANT_TYPE_Q4_K:
		return "q4_k";
	case QUANT_TYPE_Q5_K:
		return "q5_k";
	case QUANT_TYPE_Q6_K:
		return "q6_k";
	case QUANT_TYPE_BF16:
		return "bf16";
	default:
		return "?";
	}
}

int quant_kv_type_parse(const char *s, int *type)
{
	static const int types[] = {
		QUANT_TYPE_F32, QUANT_TYPE_F16, QUANT_TYPE_Q8_0, QUANT_TYPE_Q4_0,
	};
	size_t i;

	if (!strcmp(s, "auto")) {
		*type = QUANT_KV_AUTO;
		return 0;
	}
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (!strcmp(s, quant_type_name(types[i]))) {
			*type = types[i];
			return 0;
		}
	}
	return -1;
}

const char *quant_kv_type_name(int type)
{
	return type == QUANT_KV_AUTO ? "auto" : quant_type_name(type);
}

int quant_quantize_row(int type, const float *src, void *dst, size_t n)
{
	size_t i, bs = quant_block_size(type), per = quant_block_bytes(type);
	uint8_t *p = dst;

	if (n && quant_row_size(type, n) == 0)
		return -1;
	switch (type) {
	case QUANT_TYPE_F32:
		memcpy(dst, src, n * sizeof(float));
		return 0;
	case QUANT_TYPE_F16:
		for (i = 0; i < n; i++)
			quant_store_le16(p + 2 * i, quant_fp32_to_fp16(src[i]));
		return 0;
	case QUANT_TYPE_Q4_0:
		for (i = 0; i < n / QUANT_QK4_0; i++)
			quant_encode_q4_0(src + i * QUANT_QK4_0, p + i * QUANT_Q4_0_BLOCK_BYTES);
		return 0;
	case QUANT_TYPE_Q8_0:
		for (i = 0; i < n / QUANT_QK8_0; i++)
			quant_encode_q8_0(src + i * QUANT_QK8_0, p + i * QUANT_Q8_0_BLOCK_BYTES);
		return 0;
	case QUANT_TYPE_BF16:
		for (i = 0; i < n; i++)
			quant_store_le16(p + 2 * i, quant_fp32_to_bf16(src[i]));
		return 0;
	default:
		break;
	}
	for (i = 0; i < n / bs; i++, p += per, src += bs) {
		switch (type) {
		case QUANT_TYPE_Q4_1:
			quant_enc_q4_1(src, p);
			break;
		case QUANT_TYPE_Q5_0:
			quant_enc_q5_0(src, p);
			break;
		case QUANT_TYPE_Q5_1:
			quant_enc_q5_1(src, p);
			break;
		case QUANT_TYPE_Q4_K:
			quant_enc_q4_k(src, p);
			break;
		case QUANT_TYPE_Q5_K:
			quant_enc_q5_k(src, p);
			break;
		case QUANT_TYPE_Q6_K:
			quant_enc_q6_k(src, p);
			break;
		default:
			return -1;
		}
	}
	return 0;
}
