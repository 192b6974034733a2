/* SPDX-License-Identifier: MIT */
/*
 * Block encoders for Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K and BF16 (see
 * quant_enc.c). Each encodes one block: 32 floats for Q4_1/Q5_0/Q5_1, 256
 * for the K-quants, into the block's bytes (layouts in rk1828/quant_blocks.h).
 * Callers normally use quant_quantize_row(), which dispatches here.
 */
#ifndef RK_QUANT_ENC_H
#define RK_QUANT_ENC_H

#include <stdint.h>

void quant_enc_q4_1(const float *x, uint8_t *out);
void quant_enc_q5_0(const float *x, uint8_t *out);
void quant_enc_q5_1(const float *x, uint8_t *out);
void quant_enc_q4_k(const float *x, uint8_t *out);
void quant_enc_q5_k(const float *x, uint8_t *out);
void quant_enc_q6_k(const float *x, uint8_t *out);
/** quant_fp32_to_bf16() - float to bfloat16 bits, round to nearest even */
uint16_t quant_fp32_to_bf16(float f);

#endif
