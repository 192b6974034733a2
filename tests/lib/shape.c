// SPDX-License-Identifier: MIT
/*
 * Shape files (shape.h): a "key = value" reader and the W4A16 layers of a
 * shape for the cost function.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape.h"
#include "rk1828/util.h"

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

#define U(k, f) { k, offsetof(struct model_shape, f) }
static const struct { const char *key; size_t off; } ukeys[] = {
	U("layers", layers), U("dim", dim), U("ffn", ffn), U("heads", heads),
	U("kv_heads", kv_heads), U("head_dim", head_dim), U("vocab", vocab),
	U("full_attention_interval", fa_interval), U("ssm_head_dim", ssm_head_dim),
	U("ssm_k_heads", ssm_k_heads), U("ssm_v_heads", ssm_v_heads), U("ssm_conv", ssm_conv),
};
#undef U
#define N_UKEYS (sizeof(ukeys) / sizeof(ukeys[0]))

static int set_key(struct model_shape *s, const char *k, const char *v, unsigned int *seen)
{
	size_t i;
	char *end;
	unsigned long n;

	if (!strcmp(k, "name") || !strcmp(k, "arch")) {
		char *dst = k[0] == 'n' ? s->name : s->arch;
		size_t size = k[0] == 'n' ? sizeof(s->name) : sizeof(s->arch);

		if (strlen(v) >= size)
			return -1;
		strcpy(dst, v);
		*seen |= k[0] == 'n' ? 1u : 2u;
		return 0;
	}
	errno = 0;
	n = strtoul(v, &end, 10);
	if (!*v || *end || errno || n > UINT32_MAX || *v == '-')
		return -1;
	if (!strcmp(k, "tied")) {
		if (n > 1)
			return -1;
		s->tied = n;
		return 0;
	}
	for (i = 0; i < N_UKEYS; i++)
		if (!strcmp(k, ukeys[i].key)) {
			*(uint32_t *)((char *)s + ukeys[i].off) = (uint32_t)n;
			*seen |= 4u << i;
			return 0;
		}
	return -1;
}

int shape_load(struct model_shape *s, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[256];
	unsigned int seen = 0, need = 3 | (0x7fu << 2);	/* name, arch, layers..vocab */
	int ln = 0;

	memset(s, 0, sizeof(*s));
	if (!f)
		return util_err(err, errlen, -1, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, '#'), *eq, *k;

		ln++;
		if (c)
			*c = '\0';
		k = trim(line);
		if (!*k)
			continue;
		eq = strchr(k, '=');
		if (!eq) {
			fclose(f);
			return util_err(err, errlen, -1, "%s:%d: expected 'key = value'", path, ln);
		}
		*eq = '\0';
		if (set_key(s, trim(k), trim(eq + 1), &seen)) {
			fclose(f);
			return util_err(err, errlen, -1, "%s:%d: bad key or value '%s'", path, ln, trim(k));
		}
	}
	fclose(f);
	if ((seen & need) != need)
		return util_err(err, errlen, -1, "%s: missing one of name, arch, layers, dim, ffn, heads, "
				"kv_heads, head_dim, vocab", path);
	if (!strcmp(s->arch, "qwen35") &&
	    (!s->fa_interval || !s->ssm_head_dim || !s->ssm_k_heads || !s->ssm_v_heads))
		return util_err(err, errlen, -1, "%s: qwen35 needs full_attention_interval and the ssm_* sizes",
				path);
	return 0;
}

bool shape_is_attn(const struct model_shape *s, uint32_t l)
{
	if (strcmp(s->arch, "qwen35"))
		return true;
	return l % s->fa_interval == s->fa_interval - 1;
}

static void add_mat(struct cost_layer *c, uint32_t rows, uint32_t cols)
{
	c->mat[c->n_mats++] = (struct cost_matrix){
		rows, cols, (uint64_t)rows * (cols / 32) * SHAPE_W4A16_BLOCK_BYTES };
}

void shape_cost_layer(const struct model_shape *s, uint32_t l, struct cost_layer *c)
{
	bool q35 = !strcmp(s->arch, "qwen35");
	uint32_t d = s->dim;

	memset(c, 0, sizeof(*c));
	c->dim = d;
	c->ffn_dim = s->ffn;
	c->kv_elt_bytes = 4;
	c->state_elt_bytes = 4;
	c->small_bytes = 2ull * d * 4;		/* attn_norm, ffn_norm */
	if (shape_is_attn(s, l)) {
		uint32_t q = s->heads * s->head_dim, kv = s->kv_heads * s->head_dim;

		c->mixer = COST_MIX_ATTN;
		c->n_heads = s->heads;
		c->n_kv_heads = s->kv_heads;
		c->head_dim = s->head_dim;
		c->qk_norm = !strcmp(s->arch, "qwen3") || q35;
		c->bias = !strcmp(s->arch, "qwen2");
		c->gate = q35;
		add_mat(c, q35 ? 2 * q : q, d);
		add_mat(c, kv, d);
		add_mat(c, kv, d);
		add_mat(c, d, q);
		if (c->qk_norm)
			c->small_bytes += 2ull * s->head_dim * 4;
		if (c->bias)
			c->small_bytes += (uint64_t)(q + 2 * kv) * 4;
	} else {
		uint32_t S = s->ssm_head_dim, Hv = s->ssm_v_heads;
		uint32_t C = (2 * s->ssm_k_heads + Hv) * S;

		c->mixer = COST_MIX_DELTANET;
		c->dn_head_dim = S;
		c->dn_k_heads = s->ssm_k_heads;
		c->dn_v_heads = Hv;
		c->dn_conv = s->ssm_conv;
		add_mat(c, C, d);		/* qkv */
		add_mat(c, Hv * S, d);		/* z */
		add_mat(c, Hv, d);		/* beta */
		add_mat(c, Hv, d);		/* alpha */
		add_mat(c, d, Hv * S);		/* out */
		c->small_bytes += ((uint64_t)C * s->ssm_conv + 2ull * Hv + S) * 4;
	}
	add_mat(c, s->ffn, d);
	add_mat(c, s->ffn, d);
	add_mat(c, d, s->ffn);
}

void shape_cost_head(const struct model_shape *s, struct cost_head *h)
{
	h->dim = s->dim;
	h->n_vocab = s->vocab;
	/* 6.5625 bits a weight (a row that is no multiple of 256 at that density too). */
	h->bytes = (uint64_t)s->vocab * s->dim * SHAPE_HEAD_BLOCK_BYTES / 256;
}
