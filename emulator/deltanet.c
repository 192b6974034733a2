// SPDX-License-Identifier: MIT
/*
 * Gated DeltaNet mixer (see deltanet.h for the math and the state layout).
 *
 * Phases of dn_forward(): projections (nn_matmul), gates, the causal
 * conv1d with its state, per-head L2 norms, the delta rule per value head
 * (parallel over heads, the chunked form of position-aligned chunks), the
 * gated RMSNorm and the output projection.
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
#include "rk1828/program.h"
#include "threadpool.h"

/* Positions per chunk of the recurrent state (rk1828/program.h). */
#define DN_CHUNK RK1828_DNET_CHUNK

size_t dn_state_floats(const struct dn_layer *l)
{
	return rk1828_dnet_state_floats(l->head_dim, l->n_v_heads);
}

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
	size_t T, count;	/* tokens; chunk tokens already in the state */
	float *qkv, *beta, *g, *o, *state;
};

/*
 * The chunked form of head h, token by token (deltanet.h): the state
 * holds M0 (the state at the chunk's start) and the chunk's earlier
 * tokens' keys, corrected values d and cumulative log decays G. For token
 * t at chunk offset i:
 *   d_t = beta_t (v_t - e^{G_i} M0 k_t) - beta_t sum_{s<i} e^{G_i-G_s} (k_t.k_s) d_s
 *   o_t = e^{G_i} M0 q_t + sum_{s<=i} e^{G_i-G_s} (q_t.k_s) d_s
 * and when the chunk is full M0 <- e^{G_last} M0 + sum_s e^{G_last-G_s} d_s k_s^T.
 * Every term is computed in the same order whatever tokens came before
 * in the same program, so the result does not depend on the grouping.
 */
static void mix_head(const struct dn_job *j, size_t h)
{
	const struct dn_layer *l = j->l;
	size_t S = l->head_dim, C = dn_channels(l), Hv = l->n_v_heads, V = Hv * S;
	size_t kh = h % l->n_k_heads, c = j->count, t, s, r;
	float *M = j->state + h * S * S;
	float *bk = j->state + Hv * S * S, *bd = bk + DN_CHUNK * V, *bg = bd + DN_CHUNK * V;

#define KB(i) (bk + (i) * V + h * S)
#define DB(i) (bd + (i) * V + h * S)
#define GB(i) (bg[(i) * Hv + h])
	for (t = 0; t < j->T; t++) {
		const float *q = j->qkv + t * C + kh * S;
		const float *k = j->qkv + t * C + l->n_k_heads * S + kh * S;
		const float *v = j->qkv + t * C + 2 * l->n_k_heads * S + h * S;
		float b = j->beta[t * Hv + h], G = (c ? GB(c - 1) : 0.0f) + j->g[t * Hv + h];
		float e = expf(G), *d = DB(c), *o = j->o + t * V + h * S;

		memcpy(KB(c), k, S * sizeof(float));
		GB(c) = G;
		for (r = 0; r < S; r++) {
			d[r] = b * (v[r] - e * nn_dot(M + r * S, k, S));
			o[r] = e * nn_dot(M + r * S, q, S);
		}
		for (s = 0; s < c; s++)
			nn_axpy(d, -b * expf(G - GB(s)) * nn_dot(k, KB(s), S), DB(s), S);
		for (s = 0; s <= c; s++)
			nn_axpy(o, expf(G - GB(s)) * nn_dot(q, KB(s), S), DB(s), S);
		if (++c < DN_CHUNK)
			continue;
		/* The chunk is full: M0 <- e^{G} M0 + sum_s e^{G - G_s} d_s k_s^T. */
		for (r = 0; r < S; r++) {
			float *m = M + r * S;

			for (s = 0; s < S; s++)
				m[s] *= e;
			for (s = 0; s < DN_CHUNK; s++)
				nn_axpy(m, expf(G - GB(s)) * DB(s)[r], KB(s), S);
		}
		c = 0;
	}
#undef KB
#undef DB
#undef GB
}

static void mix_worker(void *arg, size_t b, size_t e, int tid)
{
	struct dn_job *j = arg;
	size_t h;

	(void)tid;
	for (h = b; h < e; h++)
		mix_head(j, h);
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
	   const size_t *rows, size_t n, float *conv_state, float *ssm_state, float *work)
{
	size_t S = l->head_dim, C = dn_channels(l), Hv = l->n_v_heads, V = Hv * S;
	size_t Hk = l->n_k_heads, t, i;
	float qscale = (float)(1.0 / sqrt((double)S));
	float *count = ssm_state + dn_state_floats(l) - 1;
	struct dn_job j = { .l = l, .pool = pool, .T = n, .qkv = work, .state = ssm_state };

	/* The chunk offset, kept in the state; anything else is a fresh state. */
	j.count = *count >= 1.0f && *count < (float)DN_CHUNK ? (size_t)*count : 0;
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
	*count = (float)((j.count + n) % DN_CHUNK);
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
	       float *conv_state, float *ssm_state, float *out)
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
	    !dn_mix(pool, l, &b, rows, n_tok, conv_state, ssm_state, mem + nb))
		rc = dn_output(pool, l, &b, out);
out:
	free(mem);
	free(rows);
	return rc;
}
