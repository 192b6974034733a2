// SPDX-License-Identifier: MIT
/*
 * The one sampling validator (userspace/common/sampler_params.c):
 * SAMPLER_PARAMS_DEFAULT is llama.cpp's defaults and passes; each field
 * just outside its range (and NaN) is refused with -EINVAL, the field's
 * API name and a message with the range and the value; the range ends
 * pass; the bias ids are checked against the vocabulary only when it is
 * known; nothing in the parameters changes.
 * Output: "ok N - name" / "not ok N - name", then "# N passed, M failed".
 */
#include "sampler.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

/* @p refused naming @field with @msg (the whole message). */
static bool refused(const struct sampler_params *p, int n_vocab, const char *field,
		    const char *msg)
{
	struct sampler_params copy = *p;
	const char *f = NULL;
	char err[160] = "";
	int rc = sampler_params_check(p, n_vocab, &f, err, sizeof(err));

	if (rc != -EINVAL || !f || strcmp(f, field) || strcmp(err, msg)) {
		printf("# rc %d field %s err \"%s\"\n", rc, f ? f : "(none)", err);
		return false;
	}
	return !memcmp(&copy, p, sizeof(copy));
}

static void test_defaults(void)
{
	const struct sampler_params d = SAMPLER_PARAMS_DEFAULT;
	const char *f = "untouched";

	tap_ok(d.temperature == 0.8f && d.top_k == 40 && d.top_p == 0.95f && d.min_p == 0 &&
	       d.repeat_penalty == 1.0f && d.repeat_last_n == 64 && d.presence_penalty == 0 &&
	       d.frequency_penalty == 0 && !d.n_bias && !d.have_seed && !d.logprobs &&
	       !d.n_probs, "defaults: temperature 0.8, top_k 40, top_p 0.95, repeat 1 over 64");
	tap_ok(sampler_params_check(&d, 8, &f, NULL, 0) == 0 && !strcmp(f, "untouched"),
	       "the defaults pass and leave the field name alone");
}

static void test_ranges(void)
{
	static const struct {
		const char *field, *msg;
		struct sampler_params p;
	} bad[] = {
		{ "temperature", "temperature must be in [0, 100] (got -0.5)",
		  { .temperature = -0.5f, .top_p = 1 } },
		{ "temperature", "temperature must be in [0, 100] (got 100.5)",
		  { .temperature = 100.5f, .top_p = 1 } },
		{ "top_p", "top_p must be in (0, 1] (got 0)", { .top_p = 0 } },
		{ "top_p", "top_p must be in (0, 1] (got 1.5)", { .top_p = 1.5f } },
		{ "top_k", "top_k must be in [0, 1073741824] (got -1)", { .top_p = 1, .top_k = -1 } },
		{ "min_p", "min_p must be in [0, 1] (got 1.25)", { .top_p = 1, .min_p = 1.25f } },
		{ "repeat_penalty", "repeat_penalty must be in [0, 3.402823466e+38] (got -1)",
		  { .top_p = 1, .repeat_penalty = -1 } },
		{ "repeat_last_n", "repeat_last_n must be in [-1, 1073741824] (got -2)",
		  { .top_p = 1, .repeat_last_n = -2 } },
		{ "presence_penalty", "presence_penalty must be in [-2, 2] (got 2.5)",
		  { .top_p = 1, .presence_penalty = 2.5f } },
		{ "frequency_penalty", "frequency_penalty must be in [-2, 2] (got -3)",
		  { .top_p = 1, .frequency_penalty = -3 } },
		{ "top_logprobs", "top_logprobs must be in [0, 20] (got 21)",
		  { .top_p = 1, .logprobs = true, .n_probs = 21 } },
		{ "logit_bias", "logit_bias: 2 entries and no array", { .top_p = 1, .n_bias = 2 } },
	};
	struct sampler_params nan_t = { .temperature = NAN, .top_p = 1 };
	struct sampler_params ends = {
		.temperature = 100, .top_p = 1, .top_k = 1 << 30, .min_p = 1,
		.repeat_penalty = FLT_MAX, .repeat_last_n = -1, .presence_penalty = -2,
		.frequency_penalty = 2, .n_probs = 20,
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tap_ok(refused(&bad[i].p, 8, bad[i].field, bad[i].msg), "refused: %s", bad[i].msg);
	tap_ok(refused(&nan_t, 8, "temperature", "temperature must be in [0, 100] (got nan)"),
	       "a NaN temperature is refused");
	tap_ok(sampler_params_check(&ends, 8, NULL, NULL, 0) == 0, "every range end passes");
	ends.top_p = nextafterf(0, 1);
	ends.temperature = 0;
	tap_ok(sampler_params_check(&ends, 8, NULL, NULL, 0) == 0,
	       "the smallest top_p above 0 and temperature 0 pass");
}

static void test_bias(void)
{
	static const struct sampler_bias out[] = { { 3, 1.0f }, { 8, -1.0f } };
	static const struct sampler_bias neg[] = { { -1, 1.0f } };
	static const struct sampler_bias nan_b[] = { { 2, NAN } };
	struct sampler_params p = { .top_p = 1, .bias = out, .n_bias = 2 };

	tap_ok(refused(&p, 8, "logit_bias",
		       "logit_bias entry 1: token 8 is outside the vocabulary (0..7)"),
	       "bias token 8 with a vocabulary of 8 is refused naming the entry");
	tap_ok(sampler_params_check(&p, 9, NULL, NULL, 0) == 0 &&
	       sampler_params_check(&p, 0, NULL, NULL, 0) == 0,
	       "token 8 passes with 9 tokens, and when the vocabulary is not known yet");
	p.bias = neg;
	p.n_bias = 1;
	tap_ok(refused(&p, 0, "logit_bias", "logit_bias entry 0: token -1 is negative"),
	       "a negative token id is refused, the vocabulary known or not");
	p.bias = nan_b;
	tap_ok(refused(&p, 8, "logit_bias", "logit_bias entry 0 (token 2): the bias is NaN"),
	       "a NaN bias is refused");
}

int main(void)
{
	test_defaults();
	test_ranges();
	test_bias();
	return tap_done();
}
