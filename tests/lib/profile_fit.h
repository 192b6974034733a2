/* SPDX-License-Identifier: MIT */
/*
 * The card profile fit (userspace/doc/timing.rst, "Fitting
 * the profile"): one least-squares fit of the eight timing parameters of
 * the cost model (cardmodel/cost.h) on the vendor's single-card figures
 * (tests/shapes/vendor-rk1828.txt) and the published multi-card ones
 * (tests/shapes/vendor-multicard.txt) together, for
 * tools/fit_profile.c and tests/unit/test_cardmodel.c.
 *
 * A single-card figure is modelled as our runtime would produce it on one
 * card over PCIe: TTFT = the input COPY of 128 embedded tokens (F32) + one
 * EXEC of every layer on the 128-token bucket at positions 0..127 with
 * one logits row + the logits COPY (F32 row); TPOT = the mean, over the
 * decode steps at positions 128..254, of the COPY of one hidden row + the
 * EXEC of one token + the logits COPY. A multi-card figure is the
 * prediction of its deployment (shape_predict(): the planner's split and
 * the pipeline simulation of plan --predict) at a context of
 * FIT_MC_CTX tokens. The link terms use the profile's (not fitted) link
 * parameters. The eight fitted parameters are npu.job_ns, npu.op_ns,
 * npu.op_row_ns, card.dram_bytes_per_s, one A16 matmul rate (npu.w4a16,
 * w8a16 and f16 flops: the MAC array runs A16 x A16 whatever the weights'
 * storage), npu.vector_ops_per_s, npu.deltanet_ns and
 * npu.deltanet_row_ns; npu.f32_flops_per_s keeps its ratio to the f16
 * rate from the input profile. Every figure is a time (a rate r is the
 * time 1 / r of one token), a figure's time is piecewise linear in the
 * parameters (linear in each job's cost, with the pipeline's max() where
 * jobs wait for each other), so the fit is a Gauss-Newton iteration of
 * linear least squares, each figure's residual relative to its value and
 * weighted equally (each figure counts as much as any other).
 */
#ifndef RK_TEST_PROFILE_FIT_H
#define RK_TEST_PROFILE_FIT_H

#include <stddef.h>

#include "profile.h"
#include "shape.h"
#include "shape_predict.h"

#define FIT_MAX_POINTS	32
#define FIT_MAX_MC	32
#define FIT_N_PARAMS	8

/* Vendor conditions: prompt and generated tokens. */
#define FIT_PROMPT	128
#define FIT_GEN		128

/* Context of the multi-card deployments: a 5120-token prompt and 128 generated. */
#define FIT_MC_CTX	5248

/**
 * struct fit_point - one model's single-card figures
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
 * struct fit_mc - one published multi-card figure (a line of
 * vendor-multicard.txt)
 * @shape_key: the shape file's base name
 * @shape: the shape
 * @dep: the deployment (cards, link, bucket; context FIT_MC_CTX)
 * @key: the figure's shape_predict() name
 * @source: where it was published (the file's source column)
 * @value: the published value (ms, or tokens a second for *_tok_s)
 * @model: the fitted model's (fit_run())
 */
struct fit_mc {
	char shape_key[64];
	struct model_shape shape;
	struct shape_deploy dep;
	char key[40];
	char source[32];
	double value, model;
};

/**
 * struct fit_data - the inputs and, after fit_run(), the residuals
 * @n: single-card points
 * @pt: the points
 * @n_mc: multi-card figures
 * @mc: the figures
 * @iterations: Gauss-Newton iterations fit_run() took
 * @max_rel: largest |model - published| / published over all figures
 * @rms_rel: root mean square of the relative residuals of all figures
 */
struct fit_data {
	int n;
	struct fit_point pt[FIT_MAX_POINTS];
	int n_mc;
	struct fit_mc mc[FIT_MAX_MC];
	int iterations;
	double max_rel, rms_rel;
};

/**
 * fit_load() - read the single-card figures file and the shape named on
 * each line (@shapes_dir/NAME.shape); forgets any earlier input of @d
 * Return: 0, or -1 with @err naming the file and line.
 */
int fit_load(struct fit_data *d, const char *figures, const char *shapes_dir,
	     char *err, size_t errlen);

/**
 * fit_load_multicard() - add the multi-card figures of @figures (format
 * in its header: shape cards link bucket key value source) to @d
 * Return: 0, or -1 with @err naming the file and line (also for a key
 * the prediction does not give).
 */
int fit_load_multicard(struct fit_data *d, const char *figures, const char *shapes_dir,
		       char *err, size_t errlen);

/**
 * fit_vendor_ms() - the model of one vendor single-card measurement on
 * profile @p
 * @ttft_ms, @tpot_ms: out
 */
void fit_vendor_ms(const struct card_profile *p, const struct model_shape *s,
		   double *ttft_ms, double *tpot_ms);

/**
 * fit_mc_value() - the model of multi-card figure @f on profile @p
 * @val: out, in the figure's unit
 * Return: 0, or -1 with @err (the deployment does not fit).
 */
int fit_mc_value(const struct card_profile *p, const struct fit_mc *f, double *val,
		 char *err, size_t errlen);

/**
 * fit_run() - fit the eight parameters into @p (its other keys are
 * priors; its fitted ones are the starting point) and fill the model
 * figures and residuals of @d
 * Return: 0, or -1 with @err when the system is singular, a parameter
 * comes out <= 0 (the model does not describe the data) or the iteration
 * does not settle.
 */
int fit_run(struct fit_data *d, struct card_profile *p, char *err, size_t errlen);

#endif
