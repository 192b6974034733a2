// SPDX-License-Identifier: MIT
/*
 * One tensor of a synthetic model (synth_int.h): its values from the
 * seeded stream or the pattern, the spec's defects, quantization, or a
 * hole of a shape-only file.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_write.h"
#include "quant.h"
#include "synth_int.h"

/* xorshift64* (Vigna 2016): uniform double in [0, 1). */
static double rng_unit(struct synth *y)
{
	y->rng ^= y->rng >> 12;
	y->rng ^= y->rng << 25;
	y->rng ^= y->rng >> 27;
	return (double)((y->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

/* Uniform double in [-1, 1). */
static double rng_sym(struct synth *y)
{
	return rng_unit(y) * 2.0 - 1.0;
}

/*
 * One element of a SYNTH_RANDOM tensor of distribution @t; @fan is
 * sqrt(3 / fan_in) * scale for SYNTH_FAN_IN.
 */
static float draw(struct synth *y, const struct synth_tensor *t, double fan)
{
	double dt;

	switch (t->dist) {
	case SYNTH_FAN_IN:
		return (float)(t->base + rng_sym(y) * fan);
	case SYNTH_NEG_A:
		return (float)-(1.0 + 15.0 * rng_unit(y));
	case SYNTH_DT_BIAS:
		dt = exp(log(1e-3) + rng_unit(y) * (log(1e-1) - log(1e-3)));
		return (float)log(expm1(dt));
	case SYNTH_NEAR_EMBD:
		if (y->embd_i >= y->embd_n) {
			synth_fail(y, "output: longer than the token embedding");
			return 0;
		}
		return (float)(y->embd[y->embd_i++] + rng_sym(y) * t->scale);
	case SYNTH_UNIFORM:
	default:
		if (!t->scale)
			return (float)t->base;
		return (float)(t->base + rng_sym(y) * t->scale);
	}
}

/* The @n values of role @role (fan-in @ne0) into @f. */
static void fill(struct synth *y, enum synth_role role, uint64_t ne0, float *f, size_t n)
{
	const struct synth_tensor *t = &y->s->t[role];
	double fan = sqrt(3.0 / (double)ne0) * t->scale;
	size_t i;

	for (i = 0; i < n; i++) {
		if (y->s->fill == SYNTH_PATTERN)
			f[i] = (float)((int)(i % 13) - 6) / 8.0f;
		else
			f[i] = draw(y, t, fan);
	}
	if (role == SYNTH_EMBD && y->embd)
		for (i = 0; i < n && y->embd_i < y->embd_n; i++)
			y->embd[y->embd_i++] = f[i];
}

/* Quantize @n values of role @role and add them as tensor @name. */
static void add_values(struct synth *y, const char *name, enum synth_role role, int type,
		       uint32_t n_dims, const uint64_t *ne, size_t n, size_t bytes)
{
	float *f = malloc(n * sizeof(*f));
	void *buf = malloc(bytes);

	if (!f || !buf) {
		synth_fail(y, "%s: out of memory", name);
		goto out;
	}
	fill(y, role, ne[0], f, n);
	if (quant_quantize_row(type, f, buf, n))
		synth_fail(y, "%s: cannot quantize to %s", name, quant_type_name(type));
	else if (gguf_writer_add_tensor(y->w, name, n_dims, ne, (uint32_t)type, buf, bytes))
		synth_fail(y, "%s: cannot add the tensor", name);
out:
	free(buf);
	free(f);
}

void synth_add_tensor(struct synth *y, const char *name, enum synth_role role, int type,
		      uint64_t ne0, uint64_t ne1)
{
	const struct synth_model *s = y->s;
	uint64_t ne[2] = { ne0, ne1 ? ne1 : 1 };
	uint32_t n_dims = ne1 ? 2 : 1;
	size_t n, bytes;

	if (y->failed || (s->skip_tensor && !strcmp(name, s->skip_tensor)))
		return;
	if (s->short_tensor && !strcmp(name, s->short_tensor))
		ne[n_dims - 1]--;
	if (s->retype_tensor && !strcmp(name, s->retype_tensor))
		type = s->retype;
	n = ne[0] * ne[1];
	bytes = quant_row_size(type, n);
	if (!bytes) {
		synth_fail(y, "%s: %zu elements cannot be %s (row %llu)", name, n,
			   quant_type_name(type), (unsigned long long)ne[0]);
		return;
	}
	if (!s->shape_only)
		add_values(y, name, role, type, n_dims, ne, n, bytes);
	else if (gguf_writer_add_tensor_hole(y->w, name, n_dims, ne, (uint32_t)type, bytes))
		synth_fail(y, "%s: cannot add the tensor", name);
}
