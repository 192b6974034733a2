// SPDX-License-Identifier: MIT
/*
 * Gated DeltaNet mixer (see deltanet.h for the math and the state layout).
 *
 * Phases of dn_forward(): projections (nn_matmul), gates, the causal
 * conv1d with its state, per-head L2 norms, the delta rule per value head
 * (parallel over heads: chunked or per token), the gated RMSNorm and the
 * output projection.
 *
 * Chunked form, for a chunk of C tokens of one head with incoming state M0
 * (derived from the per-token recurrence; G_t = g_0 + ... + g_t, the
 * cumulative log-decay inside the chunk, so every exponent is <= 0):
 *   d_t = beta_t (v_t - e^{G_t} M0 k_t) - beta_t sum_{s<t} e^{G_t-G_s} (k_t.k_s) d_s
 *       (a unit lower-triangular system, solved by forward substitution)
 *   o_t = e^{G_t} M0 q_t + sum_{s<=t} e^{G_t-G_s} (q_t.k_s) d_s
 *   M   = e^{G_last} M0 + sum_s e^{G_last-G_s} d_s k_s^T
 * which is exactly what applying the recurrence token by token gives.
 */
#include "deltanet.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"
#include "threadpool.h"

/* Tokens per chunk of the chunked form (llama.cpp uses 64 as well). */
#define DN_CHUNK 64

size_t dn_channels(const struct dn_layer *l)
{
	return (2 * l->n_k_heads + l->n_v_heads) * l->head_dim;
}

size_t dn_buf_floats(const struct dn_layer *l, size_t n_tok)
{
	size_t v = l->n_v_heads * l->head_dim;

	return n_tok * (dn_channels(l) + 2 * v + 2 * l->n_v_heads);
}

void dn_buf_init(struct dn_buf *b, const struct dn_layer *l, float *mem, size_t n_tok)
{
	size_t v = l->n_v_heads * l->head_dim;

	b->n_tok = n_tok;
	b->qkv = mem;
	b->z = b->qkv + n_tok * dn_channels(l);
	b->o = b->z + n_tok * v;
	b->beta = b->o + n_tok * v;
	b->g = b->beta + n_tok * l->n_v_heads;
}

/* Work of dn_mix(): the gathered rows (qkv, beta, g, o) and a conv window. */
size_t dn_mix_floats(const struct dn_layer *l, size_t n)
{
	size_t v = l->n_v_heads * l->head_dim;

	return n * (dn_channels(l) + v + 2 * l->n_v_heads) + l->conv_k;
}

static float softplus(float x)
{
	/* ggml_softplus: log(1 + e^x), the identity above 20. */
	return x > 20.0f ? x : log1pf(expf(x));
}

static float sigmoid(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

static float silu(float x)
{
	return x / (1.0f + expf(-x));
}

/*
 * Causal depthwise conv1d over time, in place on qkv [T][C]: out[t][c] =
 * sum_k in[t + k][c] * w[c][k] over the K - 1 state rows followed by the
 * T new rows; then silu. The state becomes the last K - 1 input rows.
 */
static void conv1d(const struct dn_layer *l, float *qkv, size_t T, float *state, float *win)
{
	size_t C = dn_channels(l), K = l->conv_k, t, c, k;

	for (c = 0; c < C; c++) {
		const float *w = l->conv + c * K;

		/* win: the K - 1 older inputs of this channel, then the current one. */
		for (k = 0; k + 1 < K; k++)
			win[k] = state[k * C + c];
		for (t = 0; t < T; t++) {
			float x = qkv[t * C + c], acc = 0.0f;

			win[K - 1] = x;
			for (k = 0; k < K; k++)
				acc += win[k] * w[k];
			memmove(win, win + 1, (K - 1) * sizeof(float));
			qkv[t * C + c] = silu(acc);
		}
		for (k = 0; k + 1 < K; k++)
			state[k * C + c] = win[k];
	}
}

static void l2norm(float *x, size_t n, float eps, float scale)
{
	double ss = 0.0;
	size_t i;

	for (i = 0; i < n; i++)
		ss += (double)x[i] * x[i];
	float f = (float)(1.0 / sqrt(ss + eps)) * scale;

	for (i = 0; i < n; i++)
		x[i] *= f;
}

/* One sequence's gathered rows: T tokens, contiguous. */
struct dn_job {
	const struct dn_layer *l;
	struct tpool *pool;
	size_t T;
	float *qkv, *beta, *g, *o, *state;
	bool chunked;
	volatile int failed;
};

/* Per-token recurrence of head h over all T tokens. */
static void mix_token(const struct dn_job *j, size_t h, float *d)
{
	const struct dn_layer *l = j->l;
	size_t S = l->head_dim, C = dn_channels(l), V = l->n_v_heads * S, Hv = l->n_v_heads;
	size_t kh = h % l->n_k_heads, t, r;
	float *M = j->state + h * S * S;

	for (t = 0; t < j->T; t++) {
		const float *q = j->qkv + t * C + kh * S;
		const float *k = j->qkv + t * C + l->n_k_heads * S + kh * S;
		const float *v = j->qkv + t * C + 2 * l->n_k_heads * S + h * S;
		float a = expf(j->g[t * Hv + h]), b = j->beta[t * Hv + h];
		float *o = j->o + t * V + h * S;

		for (r = 0; r < S * S; r++)
			M[r] *= a;
		for (r = 0; r < S; r++)
			d[r] = (v[r] - nn_dot(M + r * S, k, S)) * b;
		for (r = 0; r < S; r++)
			nn_axpy(M + r * S, d[r], k, S);
		for (r = 0; r < S; r++)
			o[r] = nn_dot(M + r * S, q, S);
	}
}

/*
 * One chunk [t0, t0 + n) of head h in the chunked form; @w holds
 * n * n (k.k), n * n (q.k), n (G) and n * S (d) floats.
 */
static void mix_chunk(const struct dn_job *j, size_t h, size_t t0, size_t n, float *w)
{
	const struct dn_layer *l = j->l;
	size_t S = l->head_dim, C = dn_channels(l), V = l->n_v_heads * S, Hv = l->n_v_heads;
	size_t kh = h % l->n_k_heads, t, s, r;
	float *M = j->state + h * S * S;
	float *KK = w, *QK = KK + n * n, *G = QK + n * n, *D = G + n;
	const float *q0 = j->qkv + t0 * C + kh * S;
	const float *k0 = q0 + l->n_k_heads * S;
	const float *v0 = j->qkv + t0 * C + 2 * l->n_k_heads * S + h * S;
	float gsum = 0.0f, glast, e;

#define Q(t) (q0 + (t) * C)
#define KEY(t) (k0 + (t) * C)
#define VAL(t) (v0 + (t) * C)
	for (t = 0; t < n; t++) {
		gsum += j->g[(t0 + t) * Hv + h];
		G[t] = gsum;
		for (s = 0; s <= t; s++) {
			KK[t * n + s] = nn_dot(KEY(t), KEY(s), S);
			QK[t * n + s] = nn_dot(Q(t), KEY(s), S);
		}
	}
	/* d_t by forward substitution; o_t's state part while M is still M0. */
	for (t = 0; t < n; t++) {
		float b = j->beta[(t0 + t) * Hv + h];
		float *d = D + t * S, *o = j->o + (t0 + t) * V + h * S;

		e = expf(G[t]);
		for (r = 0; r < S; r++) {
			d[r] = b * (VAL(t)[r] - e * nn_dot(M + r * S, KEY(t), S));
			o[r] = e * nn_dot(M + r * S, Q(t), S);
		}
		for (s = 0; s < t; s++)
			nn_axpy(d, -b * expf(G[t] - G[s]) * KK[t * n + s], D + s * S, S);
		for (s = 0; s <= t; s++)
			nn_axpy(o, expf(G[t] - G[s]) * QK[t * n + s], D + s * S, S);
	}
	/* M = e^{G_last} M0 + sum_s e^{G_last - G_s} d_s k_s^T. */
	glast = G[n - 1];
	e = expf(glast);
	for (r = 0; r < S; r++) {
		float *m = M + r * S;

		for (s = 0; s < S; s++)
			m[s] *= e;
		for (t = 0; t < n; t++)
			nn_axpy(m, expf(glast - G[t]) * D[t * S + r], KEY(t), S);
	}
#undef Q
#undef KEY
#undef VAL
}

static void mix_worker(void *arg, size_t b, size_t e, int tid)
{
	struct dn_job *j = arg;
	size_t S = j->l->head_dim, c = DN_CHUNK < j->T ? DN_CHUNK : j->T;
	size_t bytes = (j->chunked ? 2 * c * c + c + c * S : S) * sizeof(float);
	float *own = NULL;
	float *w = j->pool ? tp_scratch(j->pool, tid, bytes, 1) : (own = malloc(bytes));
	size_t h, t0;

	if (!w) {
		j->failed = 1;
		return;
	}
	for (h = b; h < e; h++) {
		if (!j->chunked) {
			mix_token(j, h, w);
			continue;
		}
		for (t0 = 0; t0 < j->T; t0 += DN_CHUNK)
			mix_chunk(j, h, t0, j->T - t0 < DN_CHUNK ? j->T - t0 : DN_CHUNK, w);
	}
	free(own);
}

static int mm(struct tpool *pool, const struct dn_weight *w, const float *x, float *y,
	      size_t rows, size_t k, size_t n_tok)
{
	return nn_matmul(pool, w->type, w->p, x, y, rows, k, n_tok);
}

int dn_project(struct tpool *pool, const struct dn_layer *l, const float *h, struct dn_buf *b)
{
	size_t Hv = l->n_v_heads, V = Hv * l->head_dim, T = b->n_tok, t, i;

	if (mm(pool, &l->qkv, h, b->qkv, dn_channels(l), l->dim, T) ||
	    mm(pool, &l->gate, h, b->z, V, l->dim, T) ||
	    mm(pool, &l->beta, h, b->beta, Hv, l->dim, T) ||
	    mm(pool, &l->alpha, h, b->g, Hv, l->dim, T))
		return -1;
	for (t = 0; t < T; t++) {
		for (i = 0; i < Hv; i++) {
			b->beta[t * Hv + i] = sigmoid(b->beta[t * Hv + i]);
			b->g[t * Hv + i] = softplus(b->g[t * Hv + i] + l->dt_bias[i]) * l->ssm_a[i];
		}
	}
	return 0;
}

int dn_mix(struct tpool *pool, const struct dn_layer *l, struct dn_buf *b,
	   const size_t *rows, size_t n, float *conv_state, float *ssm_state, float *work,
	   bool chunked)
{
	size_t S = l->head_dim, C = dn_channels(l), Hv = l->n_v_heads, V = Hv * S;
	size_t Hk = l->n_k_heads, t, i;
	float qscale = (float)(1.0 / sqrt((double)S));
	struct dn_job j = { .l = l, .pool = pool, .T = n, .qkv = work, .state = ssm_state,
			    .chunked = chunked };

	j.beta = j.qkv + n * C;
	j.g = j.beta + n * Hv;
	j.o = j.g + n * Hv;
	for (t = 0; t < n; t++) {
		memcpy(j.qkv + t * C, b->qkv + rows[t] * C, C * sizeof(float));
		memcpy(j.beta + t * Hv, b->beta + rows[t] * Hv, Hv * sizeof(float));
		memcpy(j.g + t * Hv, b->g + rows[t] * Hv, Hv * sizeof(float));
	}
	conv1d(l, j.qkv, n, conv_state, j.o + n * V);
	for (t = 0; t < n; t++) {
		for (i = 0; i < Hk; i++) {
			l2norm(j.qkv + t * C + i * S, S, l->eps, qscale);
			l2norm(j.qkv + t * C + (Hk + i) * S, S, l->eps, 1.0f);
		}
	}
	tp_parallel_for(pool, Hv, 1, mix_worker, &j);
	if (j.failed)
		return -1;
	for (t = 0; t < n; t++)
		memcpy(b->o + rows[t] * V, j.o + t * V, V * sizeof(float));
	return 0;
}

int dn_output(struct tpool *pool, const struct dn_layer *l, struct dn_buf *b, float *out)
{
	size_t S = l->head_dim, Hv = l->n_v_heads, V = Hv * S, t, i, r;

	for (t = 0; t < b->n_tok; t++) {
		for (i = 0; i < Hv; i++) {
			float *oh = b->o + t * V + i * S;
			const float *zh = b->z + t * V + i * S;

			nn_rmsnorm(oh, oh, l->norm, S, l->eps);
			for (r = 0; r < S; r++)
				oh[r] *= silu(zh[r]);
		}
	}
	return mm(pool, &l->out, b->o, out, l->dim, V, b->n_tok);
}

int dn_forward(struct tpool *pool, const struct dn_layer *l, const float *h, size_t n_tok,
	       float *conv_state, float *ssm_state, float *out, bool chunked)
{
	size_t nb = dn_buf_floats(l, n_tok), nw = dn_mix_floats(l, n_tok), t;
	float *mem = malloc((nb + nw) * sizeof(float));
	size_t *rows = malloc(n_tok * sizeof(*rows));
	struct dn_buf b;
	int rc = -1;

	if (!mem || !rows)
		goto out;
	for (t = 0; t < n_tok; t++)
		rows[t] = t;
	dn_buf_init(&b, l, mem, n_tok);
	if (!dn_project(pool, l, h, &b) &&
	    !dn_mix(pool, l, &b, rows, n_tok, conv_state, ssm_state, mem + nb, chunked))
		rc = dn_output(pool, l, &b, out);
out:
	free(mem);
	free(rows);
	return rc;
}
