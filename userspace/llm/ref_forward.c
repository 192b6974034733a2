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

/* qwen35 rope.dimension_sections: an array of 4 non-negative integers. */
static bool get_sections(const struct gguf_file *f, struct ref_config *c)
{
	char name[128];
	const struct gguf_kv *kv;
	int64_t v;
	int i;

	snprintf(name, sizeof(name), "%s.rope.dimension_sections", c->arch);
	kv = gguf_find_kv(f, name);
	if (!kv || kv->type != GGUF_VT_ARRAY || kv->arr_n < 3 || kv->arr_n > 4)
		return false;
	for (i = 0; i < 4; i++) {
		c->sections[i] = 0;
		if ((uint64_t)i < kv->arr_n) {
			if (!gguf_arr_i64(kv, (uint64_t)i, &v) || v < 0 || v > 4096)
				return false;
			c->sections[i] = (int)v;
		}
	}
	return c->sections[0] + c->sections[1] + c->sections[2] + c->sections[3] > 0;
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

/* The nextn tensors of MTP block @i (the first after the decoder blocks). */
static int load_mtp(struct ref_model *m, int i, const char *path, char *err, size_t errlen)
{
	static const char *const names[] = { "eh_proj", "enorm", "hnorm", "shared_head_norm" };
	struct ref_tensor *t[] = { &m->mtp.eh_proj, &m->mtp.enorm, &m->mtp.hnorm,
				   &m->mtp.shared_head_norm };
	uint64_t dim = (uint64_t)m->c.dim;
	char n[64];
	int k;

	for (k = 0; k < 4; k++) {
		snprintf(n, sizeof(n), "blk.%d.nextn.%s.weight", i, names[k]);
		/* eh_proj: [2 dim] -> dim, a matrix; the norms F32 vectors, the last optional. */
		if (get_tensor(m->file, n, k ? dim : 2 * dim, k ? 1 : dim, k == 3, k != 0, t[k],
			       path, err, errlen))
			return -1;
	}
	if (!m->mtp.shared_head_norm.data)
		m->mtp.shared_head_norm = m->output_norm;
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
	if (strcmp(c->arch, "llama") && strcmp(c->arch, "qwen2") && strcmp(c->arch, "qwen3") &&
	    strcmp(c->arch, "qwen35")) {
		set_err(err, errlen, path, "unsupported architecture %s", c->arch);
		goto fail;
	}
	c->neox = strcmp(c->arch, "llama") != 0;
	c->hybrid = !strcmp(c->arch, "qwen35");
#define INT(field, key, def) do { \
		if (!get_int(m->file, c->arch, key, def, &v)) { \
			set_err(err, errlen, path, "missing or bad %s.%s", c->arch, key); \
			goto fail; \
		} \
		c->field = (int)v; \
	} while (0)
	INT(n_layers, "block_count", -1);
	INT(n_mtp, "nextn_predict_layers", 0);
	if (c->n_mtp < 0 || c->n_mtp >= c->n_layers) {
		set_err(err, errlen, path, "bad %s.nextn_predict_layers %d", c->arch, c->n_mtp);
		goto fail;
	}
	c->n_layers -= c->n_mtp;	/* the decoder blocks; the MTP ones follow */
	INT(dim, "embedding_length", -1);
	INT(ffn_dim, "feed_forward_length", -1);
	INT(n_heads, "attention.head_count", -1);
	INT(n_kv_heads, "attention.head_count_kv", c->n_heads);
	INT(head_dim, "attention.key_length", c->dim / c->n_heads);
	INT(rope_dim, "rope.dimension_count", c->head_dim);
	INT(n_ctx, "context_length", 2048);
	if (c->hybrid) {
		INT(ssm_state, "ssm.state_size", -1);
		INT(ssm_groups, "ssm.group_count", -1);
		INT(ssm_rank, "ssm.time_step_rank", -1);
		INT(conv_k, "ssm.conv_kernel", -1);
		INT(fa_interval, "full_attention_interval", 4);
		if (!get_sections(m->file, c)) {
			set_err(err, errlen, path, "missing or bad %s.rope.dimension_sections",
				c->arch);
			goto fail;
		}
	}
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

	m->layers = calloc((size_t)(c->n_layers + c->n_mtp), sizeof(*m->layers));
	if (!m->layers) {
		set_err(err, errlen, path, "out of memory");
		goto fail;
	}
	for (i = 0; i < c->n_layers + c->n_mtp; i++) {
		struct ref_layer *l = &m->layers[i];
		char n[64];

#define T(field, name, ne0, ne1, opt, f32) do { \
		snprintf(n, sizeof(n), "blk.%d.%s", i, name); \
		if (get_tensor(m->file, n, ne0, ne1, opt, f32, &l->field, path, err, errlen)) \
			goto fail_quiet; \
	} while (0)
		T(attn_norm, "attn_norm.weight", dim, 1, false, true);
		/* MTP blocks are full attention. */
		l->recurrent = c->hybrid && i < c->n_layers && (i + 1) % c->fa_interval != 0;
		if (l->recurrent) {
			uint64_t S = (uint64_t)c->ssm_state, key = S * c->ssm_groups;
			uint64_t val = S * c->ssm_rank, ch = 2 * key + val;

			T(wqkv, "attn_qkv.weight", dim, 2 * key + val, false, false);
			T(wgate, "attn_gate.weight", dim, val, false, false);
			T(conv1d, "ssm_conv1d.weight", (uint64_t)c->conv_k, ch, false, true);
			T(dt_bias, "ssm_dt.bias", (uint64_t)c->ssm_rank, 1, false, true);
			T(ssm_a, "ssm_a", (uint64_t)c->ssm_rank, 1, false, true);
			T(beta, "ssm_beta.weight", dim, (uint64_t)c->ssm_rank, false, false);
			T(alpha, "ssm_alpha.weight", dim, (uint64_t)c->ssm_rank, false, false);
			T(ssm_norm, "ssm_norm.weight", S, 1, false, true);
			T(ssm_out, "ssm_out.weight", val, dim, false, false);
		} else {
			T(wq, "attn_q.weight", dim, c->hybrid ? 2 * qd : qd, false, false);
			T(wk, "attn_k.weight", dim, kvd, false, false);
			T(wv, "attn_v.weight", dim, kvd, false, false);
			T(wo, "attn_output.weight", qd, dim, false, false);
			T(bq, "attn_q.bias", qd, 1, true, true);
			T(bk, "attn_k.bias", kvd, 1, true, true);
			T(bv, "attn_v.bias", kvd, 1, true, true);
			T(q_norm, "attn_q_norm.weight", (uint64_t)c->head_dim, 1, true, true);
			T(k_norm, "attn_k_norm.weight", (uint64_t)c->head_dim, 1, true, true);
		}
		if (c->hybrid)
			T(ffn_norm, "post_attention_norm.weight", dim, 1, false, true);
		else
			T(ffn_norm, "ffn_norm.weight", dim, 1, false, true);
		T(ffn_gate, "ffn_gate.weight", dim, ffn, false, false);
		T(ffn_up, "ffn_up.weight", dim, ffn, false, false);
		T(ffn_down, "ffn_down.weight", ffn, dim, false, false);
		if (i == c->n_layers && load_mtp(m, i, path, err, errlen))
			goto fail_quiet;
#undef T
	}
	/* Untouched rows of a calloc()ed cache take no memory (MTP users). */
	size_t kv = (size_t)(c->n_layers + c->n_mtp) * (size_t)c->n_ctx * kvd;

	m->k_cache = calloc(kv, sizeof(float));
	m->v_cache = calloc(kv, sizeof(float));
	if (!m->k_cache || !m->v_cache) {
		set_err(err, errlen, path, "out of memory for the KV cache");
		goto fail;
	}
	if (c->hybrid) {
		size_t ch = (size_t)(2 * c->ssm_groups + c->ssm_rank) * c->ssm_state;

		m->conv_state = calloc((size_t)c->n_layers * (c->conv_k - 1) * ch, sizeof(float));
		m->ssm_state = calloc((size_t)c->n_layers * c->ssm_rank * c->ssm_state *
				      c->ssm_state, sizeof(float));
		if (!m->conv_state || !m->ssm_state) {
			set_err(err, errlen, path, "out of memory for the recurrent state");
			goto fail;
		}
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
			free_tensor(&l->wqkv);
			free_tensor(&l->wgate);
			free_tensor(&l->beta);
			free_tensor(&l->alpha);
			free_tensor(&l->ssm_out);
		}
	}
	free_tensor(&m->output);
	free(m->layers);
	free(m->k_cache);
	free(m->v_cache);
	free(m->conv_state);
	free(m->ssm_state);
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

	if (!t->data || out_row == 0 || t->type == type)
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

	if (type == QUANT_TYPE_F32 || quant_block_size(type) == 0)
		return -1;
	for (i = 0; i < m->c.n_layers; i++) {
		struct ref_layer *l = &m->layers[i];
		struct ref_tensor *ts[] = { &l->wq, &l->wk, &l->wv, &l->wo,
					    &l->ffn_gate, &l->ffn_up, &l->ffn_down,
					    &l->wqkv, &l->wgate, &l->beta, &l->alpha,
					    &l->ssm_out };
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

/*
 * IMROPE (ggml_rope_multi, GGML_ROPE_TYPE_IMROPE): pair i belongs to
 * section t, h or w when the interleaved rule says so (their position is
 * the token's for text), else to section e, whose text position is 0.
 */
static bool imrope_uses_pos(const struct ref_config *c, int i)
{
	const int *s = c->sections;
	int sect = i % (s[0] + s[1] + s[2] + s[3]);

	return (sect % 3 == 0 && sect < 3 * s[0]) || (sect % 3 == 1 && sect < 3 * s[1]) ||
	       (sect % 3 == 2 && sect < 3 * s[2]);
}

static void rope(float *v, int n_heads, const struct ref_config *c, int pos)
{
	int h, i, half = c->rope_dim / 2;

	for (h = 0; h < n_heads; h++) {
		float *x = v + h * c->head_dim;

		for (i = 0; i < half; i++) {
			int p = !c->hybrid || imrope_uses_pos(c, i) ? pos : 0;
			double ang = p * pow(c->theta, -2.0 * i / c->rope_dim);
			int a = c->neox ? i : 2 * i, b = c->neox ? i + half : 2 * i + 1;
			double x0 = x[a], x1 = x[b];

			x[a] = (float)(x0 * cos(ang) - x1 * sin(ang));
			x[b] = (float)(x0 * sin(ang) + x1 * cos(ang));
		}
	}
}

static double sigmoid(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

/* Scratch of one forward: every vector a layer needs, sized generously. */
struct ref_scratch {
	float *xb, *q, *k, *v, *att, *tmp;
	double *sc;
};

/*
 * A cached K or V row of @n values as a card of K/V type @type stores it:
 * encoded, then decoded (@tmp holds the bytes, at least 4 @n).
 */
static void kv_round(int type, float *row, int n, void *tmp)
{
	if (type == QUANT_TYPE_F32)
		return;
	if (!quant_quantize_row(type, row, tmp, (size_t)n))
		quant_dequantize_row(type, tmp, row, (size_t)n);
}

/*
 * Self-attention of block @l on the normalised input @xb; the output
 * projection goes to @out [dim]. qwen35: gated, q rows interleaved [q, gate].
 */
/* Whether K/V row @j of layer @l is left out of position @pos's attention. */
static bool masked(const struct ref_model *m, int l, int j, int pos)
{
	return l >= m->c.n_layers && m->mtp_valid && j < pos && !m->mtp_valid[j];
}

static void attention(struct ref_model *m, int l, const float *xb, int pos, float *out,
		      struct ref_scratch *w)
{
	const struct ref_config *c = &m->c;
	const struct ref_layer *L = &m->layers[l];
	int hd = c->head_dim, qd = c->n_heads * hd, kvd = c->n_kv_heads * hd;
	int group = c->n_heads / c->n_kv_heads, h, i, j;
	float *kc = m->k_cache + (size_t)l * c->n_ctx * kvd;
	float *vc = m->v_cache + (size_t)l * c->n_ctx * kvd;
	float *q = w->q, *k = w->k, *v = w->v, *att = w->att;

	matvec(&L->wq, xb, q, w->tmp);
	matvec(&L->wk, xb, k, w->tmp);
	matvec(&L->wv, xb, v, w->tmp);
	if (c->hybrid) {
		/* [q_h, gate_h] per head: gather the queries, keep the gates after them. */
		float *gate = q + 2 * qd;

		for (h = 0; h < c->n_heads; h++) {
			memcpy(gate + h * hd, q + (2 * h + 1) * hd, sizeof(float) * hd);
			memmove(q + h * hd, q + 2 * h * hd, sizeof(float) * hd);
		}
	}
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
	kv_round(m->kv_type, kc + (size_t)pos * kvd, kvd, w->tmp);
	kv_round(m->kv_type, vc + (size_t)pos * kvd, kvd, w->tmp);

	for (h = 0; h < c->n_heads; h++) {
		const float *qh = q + h * hd;
		int off = (h / group) * hd;
		double max = -INFINITY, sum = 0.0;

		for (j = 0; j <= pos; j++) {
			double s = 0.0;

			if (masked(m, l, j, pos)) {
				w->sc[j] = -INFINITY;
				continue;
			}
			for (i = 0; i < hd; i++)
				s += (double)qh[i] * kc[(size_t)j * kvd + off + i];
			w->sc[j] = s / sqrt((double)hd);
			if (w->sc[j] > max)
				max = w->sc[j];
		}
		for (j = 0; j <= pos; j++) {
			w->sc[j] = w->sc[j] == -INFINITY ? 0.0 : exp(w->sc[j] - max);
			sum += w->sc[j];
		}
		for (i = 0; i < hd; i++) {
			double o = 0.0;

			for (j = 0; j <= pos; j++)
				o += w->sc[j] / sum * vc[(size_t)j * kvd + off + i];
			if (c->hybrid)
				o *= sigmoid(q[2 * qd + h * hd + i]);
			att[h * hd + i] = (float)o;
		}
	}
	matvec(&L->wo, att, out, w->tmp);
}

/* L2 norm over @n values: x / sqrt(sum x^2 + eps), times @scale. */
static void l2norm(float *x, int n, float eps, double scale)
{
	double ss = 0.0;
	int i;

	for (i = 0; i < n; i++)
		ss += (double)x[i] * x[i];
	for (i = 0; i < n; i++)
		x[i] = (float)(x[i] / sqrt(ss + eps) * scale);
}

/*
 * qwen35 Gated DeltaNet mixer of block @l for one token, the per-token
 * recurrence (emulator/deltanet.h has the equations); output to @out [dim].
 */
static void deltanet(struct ref_model *m, int l, const float *xb, float *out,
		     struct ref_scratch *w)
{
	const struct ref_config *c = &m->c;
	const struct ref_layer *L = &m->layers[l];
	int S = c->ssm_state, Hk = c->ssm_groups, Hv = c->ssm_rank, K = c->conv_k;
	int key = Hk * S, val = Hv * S, ch = 2 * key + val, h, i, j, t;
	float *cs = m->conv_state + (size_t)l * (K - 1) * ch;
	float *ss = m->ssm_state + (size_t)l * Hv * S * S;
	float *qkv = w->q, *z = w->k, *gb = w->v, *o = w->att;
	const float *cw = L->conv1d.data, *dt = L->dt_bias.data, *a = L->ssm_a.data;

	matvec(&L->wqkv, xb, qkv, w->tmp);
	matvec(&L->wgate, xb, z, w->tmp);
	matvec(&L->beta, xb, gb, w->tmp);
	matvec(&L->alpha, xb, gb + Hv, w->tmp);
	for (i = 0; i < ch; i++) {
		double acc = (double)qkv[i] * cw[i * K + K - 1];

		for (t = 0; t < K - 1; t++)
			acc += (double)cs[t * ch + i] * cw[i * K + t];
		for (t = 0; t + 1 < K - 1; t++)
			cs[t * ch + i] = cs[(t + 1) * ch + i];
		cs[(K - 2) * ch + i] = qkv[i];
		qkv[i] = (float)(acc * sigmoid(acc));
	}
	for (h = 0; h < Hk; h++) {
		l2norm(qkv + h * S, S, c->eps, 1.0 / sqrt((double)S));
		l2norm(qkv + key + h * S, S, c->eps, 1.0);
	}
	for (h = 0; h < Hv; h++) {
		const float *q = qkv + (h % Hk) * S, *k = qkv + key + (h % Hk) * S;
		const float *v = qkv + 2 * key + h * S;
		double x = (double)gb[Hv + h] + dt[h];
		double g = (x > 20.0 ? x : log1p(exp(x))) * a[h];
		double beta = sigmoid(gb[h]), decay = exp(g);
		float *M = ss + (size_t)h * S * S;

		for (i = 0; i < S * S; i++)
			M[i] = (float)(M[i] * decay);
		for (j = 0; j < S; j++) {
			double u = 0.0, d;

			for (i = 0; i < S; i++)
				u += (double)M[j * S + i] * k[i];
			d = (v[j] - u) * beta;
			for (i = 0; i < S; i++)
				M[j * S + i] = (float)(M[j * S + i] + d * k[i]);
		}
		for (j = 0; j < S; j++) {
			double u = 0.0;

			for (i = 0; i < S; i++)
				u += (double)M[j * S + i] * q[i];
			o[h * S + j] = (float)u;
		}
		rmsnorm(o + h * S, o + h * S, L->ssm_norm.data, S, c->eps);
		for (j = 0; j < S; j++) {
			double zz = z[h * S + j];

			o[h * S + j] = (float)(o[h * S + j] * zz * sigmoid(zz));
		}
	}
	matvec(&L->ssm_out, o, out, w->tmp);
}

/* Scratch of one token's forward: x, xb2 and the buffers of struct ref_scratch. */
struct ref_work {
	float *x, *xb2, *hb, *hb2;
	struct ref_scratch w;
};

static int work_alloc(const struct ref_model *m, struct ref_work *k)
{
	const struct ref_config *c = &m->c;
	int dim = c->dim, qd = c->n_heads * c->head_dim;
	int big = dim > c->ffn_dim ? dim : c->ffn_dim;

	/* Longest vector any layer uses: q with gates, qkv, rows of any matrix, [e; h]. */
	if (3 * qd > big)
		big = 3 * qd;
	if (c->hybrid && (2 * c->ssm_groups + c->ssm_rank) * c->ssm_state > big)
		big = (2 * c->ssm_groups + c->ssm_rank) * c->ssm_state;
	if (2 * dim > big)
		big = 2 * dim;
	size_t nf = (size_t)dim * 2 + (size_t)big * 9;

	k->x = malloc(sizeof(float) * nf);
	k->w.sc = malloc(sizeof(double) * (size_t)c->n_ctx);
	if (!k->x || !k->w.sc) {
		free(k->x);
		free(k->w.sc);
		return -1;
	}
	k->xb2 = k->x + dim;
	k->w.xb = k->xb2 + dim;
	k->w.q = k->w.xb + big;
	k->w.k = k->w.q + big;
	k->w.v = k->w.k + big;
	k->w.att = k->w.v + big;
	k->hb = k->w.att + big;
	k->hb2 = k->hb + big;
	k->w.tmp = k->hb2 + big;
	return 0;
}

static void work_free(struct ref_work *k)
{
	free(k->x);
	free(k->w.sc);
}

/* Block @l on the residual stream k->x at @pos. */
static void block(struct ref_model *m, int l, int pos, struct ref_work *k)
{
	const struct ref_config *c = &m->c;
	const struct ref_layer *L = &m->layers[l];
	int dim = c->dim, i;
	float *x = k->x, *xb2 = k->xb2, *hb = k->hb, *hb2 = k->hb2;
	struct ref_scratch *w = &k->w;

	rmsnorm(w->xb, x, L->attn_norm.data, dim, c->eps);
	if (L->recurrent)
		deltanet(m, l, w->xb, xb2, w);
	else
		attention(m, l, w->xb, pos, xb2, w);
	for (i = 0; i < dim; i++)
		x[i] += xb2[i];

	rmsnorm(w->xb, x, L->ffn_norm.data, dim, c->eps);
	matvec(&L->ffn_gate, w->xb, hb, w->tmp);
	matvec(&L->ffn_up, w->xb, hb2, w->tmp);
	for (i = 0; i < c->ffn_dim; i++)
		hb[i] = (float)(hb[i] / (1.0 + exp(-(double)hb[i])) * hb2[i]);
	matvec(&L->ffn_down, hb, xb2, w->tmp);
	for (i = 0; i < dim; i++)
		x[i] += xb2[i];
}

int ref_forward_hidden(struct ref_model *m, int token, int pos, float *logits, float *hidden)
{
	const struct ref_config *c = &m->c;
	struct ref_work k;
	int l;

	if (pos < 0 || pos >= c->n_ctx || work_alloc(m, &k))
		return -1;
	if (ref_embed(m, token, k.x)) {
		work_free(&k);
		return -1;
	}
	for (l = 0; l < c->n_layers; l++)
		block(m, l, pos, &k);
	if (logits || hidden) {
		rmsnorm(k.w.xb, k.x, m->output_norm.data, c->dim, c->eps);
		if (hidden)
			memcpy(hidden, k.w.xb, sizeof(float) * (size_t)c->dim);
		if (logits)
			matvec(&m->output, k.w.xb, logits, k.w.tmp);
	}
	work_free(&k);
	return 0;
}

int ref_forward(struct ref_model *m, int token, int pos, float *logits)
{
	return ref_forward_hidden(m, token, pos, logits, NULL);
}

int ref_mtp(struct ref_model *m, int token, const float *hidden, int pos, float *logits,
	    float *hidden_out)
{
	const struct ref_config *c = &m->c;
	const struct ref_mtp *t = &m->mtp;
	int dim = c->dim;
	struct ref_work k;
	float *eh;

	if (!c->n_mtp || pos < 0 || pos >= c->n_ctx || work_alloc(m, &k))
		return -1;
	/* [enorm(e); hnorm(h)] in hb (2 dim floats), projected into x. */
	eh = k.hb;
	if (ref_embed(m, token, k.xb2)) {
		work_free(&k);
		return -1;
	}
	rmsnorm(eh, k.xb2, t->enorm.data, dim, c->eps);
	rmsnorm(eh + dim, hidden, t->hnorm.data, dim, c->eps);
	matvec(&t->eh_proj, eh, k.x, k.w.tmp);
	block(m, c->n_layers, pos, &k);
	rmsnorm(k.w.xb, k.x, t->shared_head_norm.data, dim, c->eps);
	if (hidden_out)
		memcpy(hidden_out, k.w.xb, sizeof(float) * (size_t)dim);
	if (logits)
		matvec(&m->output, k.w.xb, logits, k.w.tmp);
	work_free(&k);
	return 0;
}
