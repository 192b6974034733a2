// SPDX-License-Identifier: MIT
/*
 * Scalar reference forward pass: see ref_forward.h. Deliberately plain and
 * independent of emulator/nn.c.
 */
#include "ref_forward.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "quant.h"

static void set_err(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", path, msg);
}

/* Metadata "<arch>.<key>" as an integer, or @def when absent. */
static bool get_int(const struct gguf_file *f, const char *arch, const char *key,
		    long def, long *out)
{
	char name[128];
	uint64_t v;

	snprintf(name, sizeof(name), "%s.%s", arch, key);
	if (!gguf_get_u64(f, name, &v)) {
		if (def < 0)
			return false;
		*out = def;
		return true;
	}
	if (v == 0 || v > (1u << 30))
		return false;
	*out = (long)v;
	return true;
}

static float get_float(const struct gguf_file *f, const char *arch, const char *key, float def)
{
	char name[128];
	float v;

	snprintf(name, sizeof(name), "%s.%s", arch, key);
	return gguf_get_f32(f, name, &v) ? v : def;
}

/*
 * Look up tensor @name and check it has @ne1 rows of @ne0 elements
 * (@ne1 1: a vector). @optional: absence is fine (t->data NULL).
 */
static int get_tensor(const struct gguf_file *f, const char *name, uint64_t ne0,
		      uint64_t ne1, bool optional, bool f32_only, struct ref_tensor *t,
		      const char *path, char *err, size_t errlen)
{
	const struct gguf_tensor *g = gguf_find_tensor(f, name);
	uint64_t rows = 1;
	uint32_t i;

	memset(t, 0, sizeof(*t));
	if (!g) {
		if (optional)
			return 0;
		set_err(err, errlen, path, "missing tensor %s", name);
		return -1;
	}
	for (i = 1; i < g->n_dims; i++)
		rows *= g->ne[i];
	if (g->ne[0] != ne0 || rows != ne1) {
		set_err(err, errlen, path, "tensor %s has shape [%llu x %llu], want [%llu x %llu]",
			name, (unsigned long long)g->ne[0], (unsigned long long)rows,
			(unsigned long long)ne0, (unsigned long long)ne1);
		return -1;
	}
	if (quant_row_size((int)g->type, ne0) == 0 || (f32_only && g->type != GGML_TYPE_F32)) {
		set_err(err, errlen, path, "tensor %s has unsupported type %d", name, (int)g->type);
		return -1;
	}
	t->type = (int)g->type;
	t->ne0 = ne0;
	t->ne1 = ne1;
	t->data = g->data;
	t->nbytes = quant_row_size(t->type, ne0) * ne1;
	return 0;
}

struct ref_model *ref_load(const char *path, int n_ctx, char *err, size_t errlen)
{
	struct ref_model *m;
	struct ref_config *c;
	struct gguf_str s;
	long v;
	int i;

	m = calloc(1, sizeof(*m));
	if (!m) {
		set_err(err, errlen, path, "out of memory");
		return NULL;
	}
	c = &m->c;
	m->file = gguf_open(path, err, errlen);
	if (!m->file)
		goto fail_quiet;
	if (!gguf_get_str(m->file, "general.architecture", &s) || s.len == 0 ||
	    s.len >= sizeof(c->arch)) {
		set_err(err, errlen, path, "missing or bad general.architecture");
		goto fail;
	}
	memcpy(c->arch, s.s, s.len);
	if (strcmp(c->arch, "llama") && strcmp(c->arch, "qwen2") && strcmp(c->arch, "qwen3")) {
		set_err(err, errlen, path, "unsupported architecture %s", c->arch);
		goto fail;
	}
	c->neox = strcmp(c->arch, "llama") != 0;
#define INT(field, key, def) do { \
		if (!get_int(m->file, c->arch, key, def, &v)) { \
			set_err(err, errlen, path, "missing or bad %s.%s", c->arch, key); \
			goto fail; \
		} \
		c->field = (int)v; \
	} while (0)
	INT(n_layers, "block_count", -1);
	INT(dim, "embedding_length", -1);
	INT(ffn_dim, "feed_forward_length", -1);
	INT(n_heads, "attention.head_count", -1);
	INT(n_kv_heads, "attention.head_count_kv", c->n_heads);
	INT(head_dim, "attention.key_length", c->dim / c->n_heads);
	INT(rope_dim, "rope.dimension_count", c->head_dim);
	INT(n_ctx, "context_length", 2048);
#undef INT
	if (n_ctx < 1) {
		set_err(err, errlen, path, "bad n_ctx %d", n_ctx);
		goto fail;
	}
	if (n_ctx < c->n_ctx)
		c->n_ctx = n_ctx;
	if (c->n_heads % c->n_kv_heads || c->rope_dim % 2 || c->rope_dim > c->head_dim ||
	    c->head_dim == 0) {
		set_err(err, errlen, path, "inconsistent head counts or rope dimension");
		goto fail;
	}
	c->eps = get_float(m->file, c->arch, "attention.layer_norm_rms_epsilon", 1e-5f);
	c->theta = get_float(m->file, c->arch, "rope.freq_base", 10000.0f);

	const struct gguf_tensor *emb = gguf_find_tensor(m->file, "token_embd.weight");

	if (!emb || emb->n_dims != 2) {
		set_err(err, errlen, path, "missing or bad tensor token_embd.weight");
		goto fail;
	}
	c->n_vocab = (int)emb->ne[1];

	uint64_t dim = (uint64_t)c->dim, qd = (uint64_t)c->n_heads * c->head_dim;
	uint64_t kvd = (uint64_t)c->n_kv_heads * c->head_dim, ffn = (uint64_t)c->ffn_dim;

	if (get_tensor(m->file, "token_embd.weight", dim, (uint64_t)c->n_vocab, false, false,
		       &m->token_embd, path, err, errlen) ||
	    get_tensor(m->file, "output_norm.weight", dim, 1, false, true,
		       &m->output_norm, path, err, errlen) ||
	    get_tensor(m->file, "output.weight", dim, (uint64_t)c->n_vocab, true, false,
		       &m->output, path, err, errlen))
		goto fail_quiet;
	if (!m->output.data)
		m->output = m->token_embd;	/* tied */

	m->layers = calloc((size_t)c->n_layers, sizeof(*m->layers));
	if (!m->layers) {
		set_err(err, errlen, path, "out of memory");
		goto fail;
	}
	for (i = 0; i < c->n_layers; i++) {
		struct ref_layer *l = &m->layers[i];
		char n[64];

#define T(field, name, ne0, ne1, opt, f32) do { \
		snprintf(n, sizeof(n), "blk.%d.%s", i, name); \
		if (get_tensor(m->file, n, ne0, ne1, opt, f32, &l->field, path, err, errlen)) \
			goto fail_quiet; \
	} while (0)
		T(attn_norm, "attn_norm.weight", dim, 1, false, true);
		T(wq, "attn_q.weight", dim, qd, false, false);
		T(wk, "attn_k.weight", dim, kvd, false, false);
		T(wv, "attn_v.weight", dim, kvd, false, false);
		T(wo, "attn_output.weight", qd, dim, false, false);
		T(bq, "attn_q.bias", qd, 1, true, true);
		T(bk, "attn_k.bias", kvd, 1, true, true);
		T(bv, "attn_v.bias", kvd, 1, true, true);
		T(q_norm, "attn_q_norm.weight", (uint64_t)c->head_dim, 1, true, true);
		T(k_norm, "attn_k_norm.weight", (uint64_t)c->head_dim, 1, true, true);
		T(ffn_norm, "ffn_norm.weight", dim, 1, false, true);
		T(ffn_gate, "ffn_gate.weight", dim, ffn, false, false);
		T(ffn_up, "ffn_up.weight", dim, ffn, false, false);
		T(ffn_down, "ffn_down.weight", ffn, dim, false, false);
#undef T
	}
	size_t kv = (size_t)c->n_layers * (size_t)c->n_ctx * kvd;

	m->k_cache = calloc(kv, sizeof(float));
	m->v_cache = calloc(kv, sizeof(float));
	if (!m->k_cache || !m->v_cache) {
		set_err(err, errlen, path, "out of memory for the KV cache");
		goto fail;
	}
	return m;
fail:
fail_quiet:
	ref_free(m);
	return NULL;
}

static void free_tensor(struct ref_tensor *t)
{
	free(t->owned);
	t->owned = NULL;
}

void ref_free(struct ref_model *m)
{
	int i;

	if (!m)
		return;
	if (m->layers) {
		for (i = 0; i < m->c.n_layers; i++) {
			struct ref_layer *l = &m->layers[i];

			free_tensor(&l->wq);
			free_tensor(&l->wk);
			free_tensor(&l->wv);
			free_tensor(&l->wo);
			free_tensor(&l->ffn_gate);
			free_tensor(&l->ffn_up);
			free_tensor(&l->ffn_down);
		}
	}
	free_tensor(&m->output);
	free(m->layers);
	free(m->k_cache);
	free(m->v_cache);
	if (m->file)
		gguf_close(m->file);
	free(m);
}

/* Re-encode one matrix as @type when its rows allow it. 1 done, 0 kept, -1 error. */
static int requant(struct ref_tensor *t, int type)
{
	size_t out_row = quant_row_size(type, t->ne0), in_row = quant_row_size(t->type, t->ne0);
	float *row;
	uint8_t *dst;
	uint64_t r;

	if (out_row == 0 || t->type == type)
		return 0;
	row = malloc(t->ne0 * sizeof(float));
	dst = malloc(out_row * t->ne1);
	if (!row || !dst) {
		free(row);
		free(dst);
		return -1;
	}
	for (r = 0; r < t->ne1; r++) {
		quant_dequantize_row(t->type, (const uint8_t *)t->data + r * in_row, row, t->ne0);
		quant_quantize_row(type, row, dst + r * out_row, t->ne0);
	}
	free(row);
	free(t->owned);
	t->owned = dst;
	t->data = dst;
	t->type = type;
	t->nbytes = out_row * t->ne1;
	return 1;
}

int ref_quantize(struct ref_model *m, int type)
{
	int i, n = 0, rc;

	if (type != QUANT_TYPE_F16 && type != QUANT_TYPE_Q8_0 && type != QUANT_TYPE_Q4_0)
		return -1;
	for (i = 0; i < m->c.n_layers; i++) {
		struct ref_layer *l = &m->layers[i];
		struct ref_tensor *ts[] = { &l->wq, &l->wk, &l->wv, &l->wo,
					    &l->ffn_gate, &l->ffn_up, &l->ffn_down };
		size_t j;

		for (j = 0; j < sizeof(ts) / sizeof(ts[0]); j++) {
			rc = requant(ts[j], type);
			if (rc < 0)
				return -1;
			n += rc;
		}
	}
	/* A tied head shares token_embd's data; requant gives it its own copy. */
	rc = requant(&m->output, type);
	if (rc < 0)
		return -1;
	return n + rc;
}

int ref_embed(const struct ref_model *m, int token, float *out)
{
	size_t row = quant_row_size(m->token_embd.type, (size_t)m->c.dim);

	if (token < 0 || token >= m->c.n_vocab)
		return -1;
	return quant_dequantize_row(m->token_embd.type,
			      (const uint8_t *)m->token_embd.data + (size_t)token * row,
			      out, (size_t)m->c.dim);
}

/* out[r] = sum_k W[r][k] * x[k], double accumulation; tmp holds one row. */
static void matvec(const struct ref_tensor *w, const float *x, float *out, float *tmp)
{
	size_t row = quant_row_size(w->type, w->ne0);
	uint64_t r, k;

	for (r = 0; r < w->ne1; r++) {
		double s = 0.0;

		quant_dequantize_row(w->type, (const uint8_t *)w->data + r * row, tmp, w->ne0);
		for (k = 0; k < w->ne0; k++)
			s += (double)tmp[k] * x[k];
		out[r] = (float)s;
	}
}

static void rmsnorm(float *out, const float *x, const float *w, int n, float eps)
{
	double ss = 0.0;
	int i;

	for (i = 0; i < n; i++)
		ss += (double)x[i] * x[i];
	double scale = 1.0 / sqrt(ss / n + eps);

	for (i = 0; i < n; i++)
		out[i] = (float)(x[i] * scale) * w[i];
}

static void rope(float *v, int n_heads, const struct ref_config *c, int pos)
{
	int h, i, half = c->rope_dim / 2;

	for (h = 0; h < n_heads; h++) {
		float *x = v + h * c->head_dim;

		for (i = 0; i < half; i++) {
			double ang = pos * pow(c->theta, -2.0 * i / c->rope_dim);
			int a = c->neox ? i : 2 * i, b = c->neox ? i + half : 2 * i + 1;
			double x0 = x[a], x1 = x[b];

			x[a] = (float)(x0 * cos(ang) - x1 * sin(ang));
			x[b] = (float)(x0 * sin(ang) + x1 * cos(ang));
		}
	}
}

int ref_forward(struct ref_model *m, int token, int pos, float *logits)
{
	const struct ref_config *c = &m->c;
	int dim = c->dim, hd = c->head_dim;
	int qd = c->n_heads * hd, kvd = c->n_kv_heads * hd;
	int group = c->n_heads / c->n_kv_heads;
	int maxw = dim > c->ffn_dim ? dim : c->ffn_dim;
	float *x, *xb, *xb2, *q, *k, *v, *att, *hb, *hb2, *tmp;
	double *sc;
	int l, h, j, i;

	if (pos < 0 || pos >= c->n_ctx)
		return -1;
	maxw = maxw > qd ? maxw : qd;	/* longest row of any matrix */
	int xbn = dim > qd ? dim : qd;	/* xb: any activation vector */
	size_t nf = (size_t)dim * 2 + xbn + qd * 2 + kvd * 2 + c->ffn_dim * 2 + maxw;

	x = malloc(sizeof(float) * nf);
	sc = malloc(sizeof(double) * (size_t)c->n_ctx);
	if (!x || !sc || ref_embed(m, token, x)) {
		free(x);
		free(sc);
		return -1;
	}
	xb = x + dim;
	xb2 = xb + xbn;
	q = xb2 + dim;
	k = q + qd;
	v = k + kvd;
	att = v + kvd;
	hb = att + qd;
	hb2 = hb + c->ffn_dim;
	tmp = hb2 + c->ffn_dim;

	for (l = 0; l < c->n_layers; l++) {
		const struct ref_layer *L = &m->layers[l];
		float *kc = m->k_cache + (size_t)l * c->n_ctx * kvd;
		float *vc = m->v_cache + (size_t)l * c->n_ctx * kvd;

		rmsnorm(xb, x, L->attn_norm.data, dim, c->eps);
		matvec(&L->wq, xb, q, tmp);
		matvec(&L->wk, xb, k, tmp);
		matvec(&L->wv, xb, v, tmp);
		for (i = 0; L->bq.data && i < qd; i++)
			q[i] += ((const float *)L->bq.data)[i];
		for (i = 0; L->bk.data && i < kvd; i++)
			k[i] += ((const float *)L->bk.data)[i];
		for (i = 0; L->bv.data && i < kvd; i++)
			v[i] += ((const float *)L->bv.data)[i];
		for (h = 0; L->q_norm.data && h < c->n_heads; h++)
			rmsnorm(q + h * hd, q + h * hd, L->q_norm.data, hd, c->eps);
		for (h = 0; L->k_norm.data && h < c->n_kv_heads; h++)
			rmsnorm(k + h * hd, k + h * hd, L->k_norm.data, hd, c->eps);
		rope(q, c->n_heads, c, pos);
		rope(k, c->n_kv_heads, c, pos);
		memcpy(kc + (size_t)pos * kvd, k, sizeof(float) * kvd);
		memcpy(vc + (size_t)pos * kvd, v, sizeof(float) * kvd);

		for (h = 0; h < c->n_heads; h++) {
			const float *qh = q + h * hd;
			int off = (h / group) * hd;
			double max = -INFINITY, sum = 0.0;

			for (j = 0; j <= pos; j++) {
				double s = 0.0;

				for (i = 0; i < hd; i++)
					s += (double)qh[i] * kc[(size_t)j * kvd + off + i];
				sc[j] = s / sqrt((double)hd);
				if (sc[j] > max)
					max = sc[j];
			}
			for (j = 0; j <= pos; j++) {
				sc[j] = exp(sc[j] - max);
				sum += sc[j];
			}
			for (i = 0; i < hd; i++) {
				double o = 0.0;

				for (j = 0; j <= pos; j++)
					o += sc[j] / sum * vc[(size_t)j * kvd + off + i];
				att[h * hd + i] = (float)o;
			}
		}
		matvec(&L->wo, att, xb2, tmp);
		for (i = 0; i < dim; i++)
			x[i] += xb2[i];

		rmsnorm(xb, x, L->ffn_norm.data, dim, c->eps);
		matvec(&L->ffn_gate, xb, hb, tmp);
		matvec(&L->ffn_up, xb, hb2, tmp);
		for (i = 0; i < c->ffn_dim; i++)
			hb[i] = (float)(hb[i] / (1.0 + exp(-(double)hb[i])) * hb2[i]);
		matvec(&L->ffn_down, hb, xb2, tmp);
		for (i = 0; i < dim; i++)
			x[i] += xb2[i];
	}
	if (logits) {
		rmsnorm(xb, x, m->output_norm.data, dim, c->eps);
		matvec(&m->output, xb, logits, tmp);
	}
	free(x);
	free(sc);
	return 0;
}
