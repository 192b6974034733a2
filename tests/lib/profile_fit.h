/* SPDX-License-Identifier: MIT */
/*
 * The card profile fit (userspace/doc/timing.rst, "Fitting
 * the profile"): least squares of the cost model (cardmodel/cost.h) on
 * the vendor's single-card figures (tests/shapes/vendor-rk1828.txt), for
 * tests/tools/fit_profile.c and tests/unit/test_cardmodel.c.
 *
 * A vendor figure is modelled as our runtime would produce it on one card
 * over PCIe: TTFT = the input COPY of 128 embedded tokens (F32) + one
 * EXEC of every layer on the 128-token bucket at positions 0..127 with
 * one logits row + the logits COPY (F32 row); TPOT = the mean, over the
 * decode steps at positions 128..254, of the COPY of one hidden row + the
 * EXEC of one token + the logits COPY. The link terms use the profile's
 * (not fitted) PCIe parameters; the six fitted parameters are npu.job_ns,
 * npu.op_ns, npu.op_row_ns, card.dram_bytes_per_s, one A16 matmul rate
 * (npu.w4a16, w8a16 and f16 flops: the MAC array runs A16 x A16 whatever
 * the weights' storage) and npu.vector_ops_per_s; npu.f32_flops_per_s
 * keeps its ratio to the f16 rate from the input profile. Residuals are
 * relative and weighted equally (each figure counts as much as any other).
 */
#ifndef RK_TEST_PROFILE_FIT_H
#define RK_TEST_PROFILE_FIT_H

#include <stddef.h>

#include "profile.h"
#include "shape.h"

#define FIT_MAX_POINTS	32
#define FIT_N_PARAMS	6

/* Vendor conditions: prompt and generated tokens. */
#define FIT_PROMPT	128
#define FIT_GEN		128

/**
 * struct fit_point - one model's figures
 * @key: the shape file's base name
 * @shape: the shape
 * @ttft_ms, @tpot_ms: vendor figures
 * @model_ttft_ms, @model_tpot_ms: the fitted model's (fit_run())
 */
struct fit_point {
	char key[64];
	struct model_shape shape;
	double ttft_ms, tpot_ms;
	double model_ttft_ms, model_tpot_ms;
};

/**
 * struct fit_data - the inputs and, after fit_run(), the residuals
 * @n: points
 * @pt: the points
 * @max_rel: largest |model - vendor| / vendor over all 2n figures
 * @rms_rel: root mean square of the relative residuals
 */
struct fit_data {
	int n;
	struct fit_point pt[FIT_MAX_POINTS];
	double max_rel, rms_rel;
};

/**
 * fit_load() - read the figures file and the shape named on each line
 * (@shapes_dir/NAME.shape)
 * Return: 0, or -1 with @err naming the file and line.
 */
int fit_load(struct fit_data *d, const char *figures, const char *shapes_dir,
	     char *err, size_t errlen);

/**
 * fit_vendor_ms() - the model of one vendor measurement on profile @p
 * @ttft_ms, @tpot_ms: out
 */
void fit_vendor_ms(const struct card_profile *p, const struct model_shape *s,
		   double *ttft_ms, double *tpot_ms);

/**
 * fit_run() - fit the six parameters into @p (its other keys are priors)
 * and fill the model figures and residuals of @d
 * Return: 0, or -1 with @err when the system is singular or a parameter
 * comes out <= 0 (the model does not describe the data).
 */
int fit_run(struct fit_data *d, struct card_profile *p, char *err, size_t errlen);

#endif
