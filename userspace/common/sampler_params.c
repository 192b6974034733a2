// SPDX-License-Identifier: MIT
/*
 * The one validator of struct sampler_params (see sampler.h): the CLI
 * checks every sampling option with it, the server's APIs every request
 * body, the engine every submitted request and the sampler its
 * parameters, so a range is written once, here. The ranges are
 * llama.cpp's and OpenAI's (penalties in [-2, 2], top_logprobs <= 20).
 */
#include "sampler.h"

#include <errno.h>
#include <float.h>
#include <math.h>

#include "rk1828/util.h"

/*
 * One field: 0 when @v is in [@lo, @hi] ((@lo, @hi] when @open_lo; NaN
 * never is), else -EINVAL with @name in *@field and the range in @err.
 */
static int range(const char **field, char *err, size_t errlen, const char *name, double v,
		 double lo, bool open_lo, double hi)
{
	if (v >= lo && v <= hi && !(open_lo && v == lo))
		return 0;
	if (field)
		*field = name;
	return util_err(err, errlen, -EINVAL, "%s must be in %c%.10g, %.10g] (got %g)", name,
			open_lo ? '(' : '[', lo, hi, v);
}

/* The logit biases: an array when n_bias > 0, ids below @n_vocab, no NaN. */
static int check_bias(const struct sampler_params *p, int n_vocab, const char **field,
		      char *err, size_t errlen)
{
	int i;

	if (p->n_bias < 0 || (p->n_bias && !p->bias)) {
		if (field)
			*field = "logit_bias";
		return util_err(err, errlen, -EINVAL, "logit_bias: %d entries and %s array",
				p->n_bias, p->bias ? "an" : "no");
	}
	for (i = 0; i < p->n_bias; i++) {
		const struct sampler_bias *b = &p->bias[i];

		if (b->id >= 0 && (n_vocab <= 0 || b->id < n_vocab) && !isnan(b->bias))
			continue;
		if (field)
			*field = "logit_bias";
		if (isnan(b->bias))
			return util_err(err, errlen, -EINVAL,
					"logit_bias entry %d (token %d): the bias is NaN", i, b->id);
		if (b->id < 0)
			return util_err(err, errlen, -EINVAL,
					"logit_bias entry %d: token %d is negative", i, b->id);
		return util_err(err, errlen, -EINVAL,
				"logit_bias entry %d: token %d is outside the vocabulary (0..%d)",
				i, b->id, n_vocab - 1);
	}
	return 0;
}

int sampler_params_check(const struct sampler_params *p, int n_vocab, const char **field,
			 char *err, size_t errlen)
{
	if (!p)
		return util_err(err, errlen, -EINVAL, "no sampling parameters");
	if (range(field, err, errlen, "temperature", p->temperature, 0, false,
		  SAMPLER_MAX_TEMPERATURE) ||
	    range(field, err, errlen, "top_p", p->top_p, 0, true, 1) ||
	    range(field, err, errlen, "top_k", p->top_k, 0, false, SAMPLER_MAX_N) ||
	    range(field, err, errlen, "min_p", p->min_p, 0, false, 1) ||
	    range(field, err, errlen, "repeat_penalty", p->repeat_penalty, 0, false, FLT_MAX) ||
	    range(field, err, errlen, "repeat_last_n", p->repeat_last_n, -1, false,
		  SAMPLER_MAX_N) ||
	    range(field, err, errlen, "presence_penalty", p->presence_penalty, -2, false, 2) ||
	    range(field, err, errlen, "frequency_penalty", p->frequency_penalty, -2, false, 2) ||
	    range(field, err, errlen, "top_logprobs", p->n_probs, 0, false, SAMPLER_MAX_PROBS))
		return -EINVAL;
	return check_bias(p, n_vocab, field, err, errlen);
}
