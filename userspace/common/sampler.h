/* SPDX-License-Identifier: MIT */
/*
 * Token sampler: greedy (temp 0), or temperature + top-k + top-p (nucleus)
 * sampling with a seeded xorshift64* generator, in llama.cpp's order
 * (top-k, top-p, temperature, then a draw).
 */
#ifndef RK_SAMPLER_H
#define RK_SAMPLER_H

#include <stdint.h>

struct sampler_params {
	float temp;		/* 0 = greedy (argmax, lowest id on ties) */
	int top_k;		/* <= 0: whole vocabulary */
	float top_p;		/* >= 1: off */
	uint64_t seed;
};

struct sampler;

struct sampler *sampler_new(const struct sampler_params *p, int n_vocab);
void sampler_free(struct sampler *s);
/* Picks a token id from n_vocab logits (logits are not modified). */
int32_t sampler_sample(struct sampler *s, const float *logits);

#endif
