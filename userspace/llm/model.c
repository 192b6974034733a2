// SPDX-License-Identifier: MIT
/*
 * Model description from GGUF metadata and tensors; see model.h.
 * Key names: llama.cpp gguf-py/gguf/constants.py (Keys.LLM, Keys.Attention,
 * Keys.Rope); tensor names: MODEL_TENSOR / TENSOR_NAMES there.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "rk1828/program.h"
#include "rk1828/quant_blocks.h"
#include "rk1828/util.h"

static int fail(char *err, size_t errlen, const struct gguf_file *gf,
		const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", gf && gf->path ? gf->path : "model", msg);
	return -1;
}

/* Read "<arch>.<suffix>" as an unsigned value in [1, UINT32_MAX]. */
static int get_u32(const struct gguf_file *gf, const char *arch,
		   const char *suffix, uint32_t *out, bool required,
		   uint32_t def, char *err, size_t errlen)
{
	char key[128];
	uint64_t v;

	snprintf(key, sizeof(key), "%s.%s", arch, suffix);
	const struct gguf_kv *kv = gguf_find_kv(gf, key);

	if (!kv) {
		if (required)
			return fail(err, errlen, gf, "missing metadata key %s", key);
		*out = def;
		return 0;
	}
	if (kv->type == GGUF_VT_ARRAY) {
		/* Per-layer arrays (llama.cpp get_key_or_arr): all equal here. */
		int64_t first, e;
		uint64_t i;

		if (!kv->arr_n || !gguf_arr_i64(kv, 0, &first))
			return fail(err, errlen, gf, "metadata key %s is not an integer array", key);
		for (i = 1; i < kv->arr_n; i++)
			if (!gguf_arr_i64(kv, i, &e) || e != first)
				return fail(err, errlen, gf,
					    "metadata key %s differs between layers; not supported", key);
		v = first < 0 ? 0 : (uint64_t)first;
	} else if (!gguf_get_u64(gf, key, &v)) {
		return fail(err, errlen, gf, "metadata key %s is not an unsigned integer", key);
	}
	if (v == 0 || v > 0x7fffffff)
		return fail(err, errlen, gf, "metadata key %s = %llu out of range",
			    key, (unsigned long long)v);
	*out = (uint32_t)v;
	return 0;
}

static int get_f32(const struct gguf_file *gf, const char *arch,
		   const char *suffix, float *out, float def, char *err,
		   size_t errlen)
{
	char key[128];

	snprintf(key, sizeof(key), "%s.%s", arch, suffix);
	if (!gguf_find_kv(gf, key)) {
		*out = def;
		return 0;
	}
	if (!gguf_get_f32(gf, key, out))
		return fail(err, errlen, gf, "metadata key %s is not a float", key);
	if (!(*out > 0.0f) || *out > 1e12f)
		return fail(err, errlen, gf, "metadata key %s = %g out of range", key, *out);
	return 0;
}

static bool is_small_type(enum gguf_type t)
{
	return t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16;
}

/* The weight types the card runs (rk1828/quant_blocks.h). */
static bool is_matrix_type(enum gguf_type t)
{
	return quant_block_size((int)t) != 0;
}

/*
 * Look up tensor @name and check its shape: a vector [ne0] when ne1 == 0,
 * else a matrix [ne0, ne1]. Vectors must be F32/F16.
 */
static int get_tensor(const struct llm_model *m, const char *name,
		      uint64_t ne0, uint64_t ne1, bool required,
		      const struct gguf_tensor **out, char *err, size_t errlen)
{
	const struct gguf_tensor *t = gguf_find_tensor(m->gf, name);
	uint32_t d, first_extra = ne1 ? 2 : 1;
	bool ok;

	*out = NULL;
	if (!t) {
		if (required)
			return fail(err, errlen, m->gf, "missing tensor %s", name);
		return 0;
	}
	ok = t->ne[0] == ne0 && (!ne1 || (t->n_dims >= 2 ? t->ne[1] : 1) == ne1);
	for (d = first_extra; d < t->n_dims; d++)
		ok = ok && t->ne[d] == 1;
	if (!ok) {
		char shape[96];
		int n = 0;

		for (d = 0; d < t->n_dims && d < 4; d++)
			n += snprintf(shape + n, sizeof(shape) - n, "%s%llu",
				      d ? ", " : "", (unsigned long long)t->ne[d]);
		if (ne1)
			return fail(err, errlen, m->gf,
				    "tensor %s has shape [%s], expected [%llu, %llu]",
				    name, shape, (unsigned long long)ne0,
				    (unsigned long long)ne1);
		return fail(err, errlen, m->gf,
			    "tensor %s has shape [%s], expected [%llu]", name,
			    shape, (unsigned long long)ne0);
	}
	if (!ne1 && !is_small_type(t->type))
		return fail(err, errlen, m->gf, "tensor %s has type %s, expected F32, F16 or BF16",
			    name, gguf_type_name(t->type));
	if (ne1 && !is_matrix_type(t->type))
		return fail(err, errlen, m->gf,
			    "tensor %s has type %s, which the card does not run "
			    "(supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K)",
			    name, gguf_type_name(t->type));
	*out = t;
	return 0;
}

#define T(field, suffix, ne0, ne1, req)						\
	do {									\
		snprintf(name, sizeof(name), "blk.%u.%s.weight", l, suffix);	\
		if (get_tensor(m, name, ne0, ne1, req, &L->field, err, errlen))	\
			return -1;						\
	} while (0)
#define B(field, suffix, ne0, req)						\
	do {									\
		snprintf(name, sizeof(name), "blk.%u.%s.bias", l, suffix);	\
		if (get_tensor(m, name, ne0, 0, req, &L->field, err, errlen))	\
			return -1;						\
	} while (0)

/* Self-attention tensors of block @l (llama, qwen2, qwen3, qwen35 full attention). */
static int load_attention(struct llm_model *m, uint32_t l, char *err, size_t errlen)
{
	struct llm_layer *L = &m->layers[l];
	uint64_t q = (uint64_t)m->n_heads * m->head_dim;
	uint64_t kv = (uint64_t)m->n_kv_heads * m->head_dim;
	bool bias = m->arch == LLM_ARCH_QWEN2;
	bool qk_norm = m->arch == LLM_ARCH_QWEN3 || m->arch == LLM_ARCH_QWEN35;
	char name[64], qname[64];

	snprintf(name, sizeof(name), "blk.%u.attn_qkv.weight", l);
	snprintf(qname, sizeof(qname), "blk.%u.attn_q.weight", l);
	if (gguf_find_tensor(m->gf, name) && !gguf_find_tensor(m->gf, qname))
		return fail(err, errlen, m->gf,
			    "block %u has a fused attn_qkv attention projection; only separate "
			    "attn_q, attn_k and attn_v are supported", l);
	T(wq, "attn_q", m->dim, m->attn_gate ? 2 * q : q, true);
	T(wk, "attn_k", m->dim, kv, true);
	T(wv, "attn_v", m->dim, kv, true);
	T(wo, "attn_output", q, m->dim, true);
	B(bq, "attn_q", q, bias);
	B(bk, "attn_k", kv, bias);
	B(bv, "attn_v", kv, bias);
	T(q_norm, "attn_q_norm", m->head_dim, 0, qk_norm);
	T(k_norm, "attn_k_norm", m->head_dim, 0, qk_norm);
	return 0;
}

/* qwen35 Gated DeltaNet tensors of block @l (llama.cpp qwen35.cpp names). */
static int load_deltanet(struct llm_model *m, uint32_t l, char *err, size_t errlen)
{
	struct llm_layer *L = &m->layers[l];
	uint64_t val = (uint64_t)m->ssm_v_heads * m->ssm_state, ch = llm_ssm_channels(m);
	char name[64];

	T(ssm_qkv, "attn_qkv", m->dim, ch, true);
	T(ssm_gate, "attn_gate", m->dim, val, true);
	T(ssm_beta, "ssm_beta", m->dim, m->ssm_v_heads, true);
	T(ssm_alpha, "ssm_alpha", m->dim, m->ssm_v_heads, true);
	T(ssm_conv, "ssm_conv1d", m->ssm_conv, ch, true);
	if (L->ssm_conv->type != GGML_TYPE_F32 && L->ssm_conv->type != GGML_TYPE_F16 &&
	    L->ssm_conv->type != GGML_TYPE_BF16)
		return fail(err, errlen, m->gf, "tensor %s has type %s, expected F32, F16 or BF16",
			    name, gguf_type_name(L->ssm_conv->type));
	B(ssm_dt, "ssm_dt", m->ssm_v_heads, true);
	snprintf(name, sizeof(name), "blk.%u.ssm_a", l);
	if (get_tensor(m, name, m->ssm_v_heads, 0, true, &L->ssm_a, err, errlen))
		return -1;
	T(ssm_norm, "ssm_norm", m->ssm_state, 0, true);
	T(ssm_out, "ssm_out", val, m->dim, true);
	return 0;
}

static int load_layer(struct llm_model *m, uint32_t l, bool recurrent, char *err,
		      size_t errlen)
{
	struct llm_layer *L = &m->layers[l];
	char name[64];

	L->kind = recurrent ? LLM_LAYER_DELTANET : LLM_LAYER_ATTN;
	T(attn_norm, "attn_norm", m->dim, 0, true);
	if (recurrent ? load_deltanet(m, l, err, errlen) : load_attention(m, l, err, errlen))
		return -1;
	/* qwen35 names the norm before the FFN post_attention_norm. */
	T(ffn_norm, m->arch == LLM_ARCH_QWEN35 ? "post_attention_norm" : "ffn_norm", m->dim, 0,
	  true);
	T(ffn_gate, "ffn_gate", m->dim, m->ffn_dim, true);
	T(ffn_up, "ffn_up", m->dim, m->ffn_dim, true);
	T(ffn_down, "ffn_down", m->ffn_dim, m->dim, true);
	return 0;
}
#undef T
#undef B

/*
 * qwen35 hyperparameters (llama_model_qwen35::load_arch_hparams): the
 * ssm.* sizes, rope.dimension_sections, which blocks are recurrent
 * (attention.recurrent_layers, else every block but each
 * full_attention_interval-th) and nextn_predict_layers (MTP blocks at the
 * end of the file, skipped). Fills @recurrent[n_layers].
 */
static int load_qwen35(struct llm_model *m, bool **recurrent, char *err, size_t errlen)
{
	const struct gguf_file *gf = m->gf;
	const char *a = m->arch_name;
	const struct gguf_kv *kv;
	uint32_t interval, nextn = 0, total = m->n_layers, i;
	char key[128];
	int64_t v;

	if (get_u32(gf, a, "ssm.state_size", &m->ssm_state, true, 0, err, errlen) ||
	    get_u32(gf, a, "ssm.group_count", &m->ssm_k_heads, true, 0, err, errlen) ||
	    get_u32(gf, a, "ssm.time_step_rank", &m->ssm_v_heads, true, 0, err, errlen) ||
	    get_u32(gf, a, "ssm.conv_kernel", &m->ssm_conv, true, 0, err, errlen) ||
	    get_u32(gf, a, "full_attention_interval", &interval, false, 4, err, errlen))
		return -1;
	snprintf(key, sizeof(key), "%s.nextn_predict_layers", a);
	if (gguf_find_kv(gf, key)) {
		uint64_t n;

		if (!gguf_get_u64(gf, key, &n))
			return fail(err, errlen, gf, "metadata key %s is not an integer", key);
		if (n >= total)
			return fail(err, errlen, gf, "%s = %llu leaves no decoder blocks", key,
				    (unsigned long long)n);
		nextn = (uint32_t)n;
	}
	if (m->ssm_v_heads % m->ssm_k_heads)
		return fail(err, errlen, gf,
			    "%s.ssm.time_step_rank %u is not a multiple of ssm.group_count %u", a,
			    m->ssm_v_heads, m->ssm_k_heads);
	if (m->ssm_conv < 2 || m->ssm_conv > 16 || m->ssm_state > 1024)
		return fail(err, errlen, gf, "%s.ssm.conv_kernel %u or ssm.state_size %u out of range",
			    a, m->ssm_conv, m->ssm_state);
	snprintf(key, sizeof(key), "%s.rope.dimension_sections", a);
	kv = gguf_find_kv(gf, key);
	if (!kv || kv->type != GGUF_VT_ARRAY || kv->arr_n < 3 || kv->arr_n > 4)
		return fail(err, errlen, gf, "missing or bad metadata key %s (3 or 4 integers)", key);
	for (i = 0; i < kv->arr_n; i++) {
		if (!gguf_arr_i64(kv, i, &v) || v < 0 || v > 0xffff)
			return fail(err, errlen, gf, "metadata key %s has a bad entry", key);
		m->rope_sections[i] = (uint32_t)v;
	}
	if (!m->rope_sections[0] && !m->rope_sections[1] && !m->rope_sections[2] &&
	    !m->rope_sections[3])
		return fail(err, errlen, gf, "metadata key %s is all zero", key);
	m->n_mtp = nextn;
	m->n_layers = total - nextn;
	if (nextn) {
		char blk[32];

		if (nextn == 1)
			snprintf(blk, sizeof(blk), "blk.%u", m->n_layers);
		else
			snprintf(blk, sizeof(blk), "blk.%u-%u", m->n_layers, total - 1);
		snprintf(m->note, sizeof(m->note),
			 "%s: %u multi-token-prediction block%s (%s, %s.nextn_predict_layers) "
			 "skipped on the cards (--spec mtp drafts with the first on the host)", gf->path ? gf->path : "model", nextn,
			 nextn == 1 ? "" : "s", blk, a);
	}
	*recurrent = calloc(total, sizeof(bool));
	if (!*recurrent)
		return fail(err, errlen, gf, "out of memory");
	snprintf(key, sizeof(key), "%s.attention.recurrent_layers", a);
	kv = gguf_find_kv(gf, key);
	for (i = 0; i < m->n_layers; i++) {
		if (kv && kv->type == GGUF_VT_ARRAY && kv->arr_n >= m->n_layers) {
			if (!gguf_arr_i64(kv, i, &v))
				return fail(err, errlen, gf, "metadata key %s has a bad entry", key);
			(*recurrent)[i] = v != 0;
		} else {
			(*recurrent)[i] = interval && (i + 1) % interval != 0;
		}
		m->n_deltanet += (*recurrent)[i];
	}
	m->attn_gate = true;
	return 0;
}

/* general.architecture: one of LLM_SUPPORTED_ARCHS. */
static int load_arch(struct llm_model *m, const struct gguf_file *gf, char *err, size_t errlen)
{
	struct gguf_str s;

	if (!gguf_get_str(gf, "general.architecture", &s))
		return fail(err, errlen, gf, "missing metadata key general.architecture");
	if (s.len == 5 && !memcmp(s.s, "llama", 5))
		m->arch = LLM_ARCH_LLAMA;
	else if (s.len == 5 && !memcmp(s.s, "qwen2", 5))
		m->arch = LLM_ARCH_QWEN2;
	else if (s.len == 5 && !memcmp(s.s, "qwen3", 5))
		m->arch = LLM_ARCH_QWEN3;
	else if (s.len == 6 && !memcmp(s.s, "qwen35", 6))
		m->arch = LLM_ARCH_QWEN35;
	else
		return fail(err, errlen, gf,
			    "unsupported architecture \"%.*s\" (supported: " LLM_SUPPORTED_ARCHS ")",
			    (int)(s.len > 32 ? 32 : s.len), s.s);
	memcpy(m->arch_name, s.s, s.len);
	m->arch_name[s.len] = '\0';
	m->rope_neox = m->arch != LLM_ARCH_LLAMA;
	return 0;
}

/* The hyperparameters ARCH.* and their consistency (heads, head size, RoPE). */
static int load_hparams(struct llm_model *m, const struct gguf_file *gf, char *err,
			size_t errlen)
{
	const char *a = m->arch_name;
	char key[128];

	if (get_u32(gf, a, "block_count", &m->n_layers, true, 0, err, errlen) ||
	    get_u32(gf, a, "embedding_length", &m->dim, true, 0, err, errlen) ||
	    get_u32(gf, a, "feed_forward_length", &m->ffn_dim, true, 0, err, errlen) ||
	    get_u32(gf, a, "attention.head_count", &m->n_heads, true, 0, err, errlen) ||
	    get_u32(gf, a, "attention.head_count_kv", &m->n_kv_heads, false,
		    m->n_heads, err, errlen) ||
	    get_u32(gf, a, "context_length", &m->n_ctx_train, false, 2048, err, errlen) ||
	    get_f32(gf, a, "rope.freq_base", &m->rope_theta, 10000.0f, err, errlen) ||
	    get_f32(gf, a, "attention.layer_norm_rms_epsilon", &m->rms_eps, 1e-5f,
		    err, errlen))
		return -1;
	if (m->n_layers > 4096)
		return fail(err, errlen, gf, "%s.block_count = %u is too large", a, m->n_layers);
	if (m->n_heads % m->n_kv_heads)
		return fail(err, errlen, gf,
			    "%s.attention.head_count %u is not a multiple of head_count_kv %u",
			    a, m->n_heads, m->n_kv_heads);
	snprintf(key, sizeof(key), "%s.attention.key_length", a);
	if (!gguf_find_kv(gf, key) && m->dim % m->n_heads)
		return fail(err, errlen, gf,
			    "%s.embedding_length %u is not a multiple of head_count %u",
			    a, m->dim, m->n_heads);
	if (get_u32(gf, a, "attention.key_length", &m->head_dim, false,
		    m->dim / m->n_heads, err, errlen))
		return -1;
	if (get_u32(gf, a, "rope.dimension_count", &m->rope_dim, false,
		    m->head_dim, err, errlen))
		return -1;
	if (m->rope_dim > m->head_dim || (m->rope_dim & 1))
		return fail(err, errlen, gf,
			    "%s.rope.dimension_count %u must be even and at most the head size %u",
			    a, m->rope_dim, m->head_dim);
	return 0;
}

/* The embedding (which gives n_vocab), the final norm and the output (or tied). */
static int load_globals(struct llm_model *m, const struct gguf_file *gf, char *err,
			size_t errlen)
{
	m->token_embd = gguf_find_tensor(gf, "token_embd.weight");
	if (!m->token_embd)
		return fail(err, errlen, gf, "missing tensor token_embd.weight");
	if (m->token_embd->n_dims != 2 || m->token_embd->ne[1] == 0 ||
	    m->token_embd->ne[1] > 0x7fffffff)
		return fail(err, errlen, gf, "tensor token_embd.weight must be 2-D [dim, n_vocab]");
	m->n_vocab = (uint32_t)m->token_embd->ne[1];
	if (get_tensor(m, "token_embd.weight", m->dim, m->n_vocab, true,
		       &m->token_embd, err, errlen) ||
	    get_tensor(m, "output_norm.weight", m->dim, 0, true, &m->output_norm,
		       err, errlen) ||
	    get_tensor(m, "output.weight", m->dim, m->n_vocab, false, &m->output,
		       err, errlen))
		return -1;
	if (!m->output) {
		m->output = m->token_embd;
		m->tied = true;
	}
	return 0;
}

/* The decoder blocks (qwen35: which are Gated DeltaNet); frees @m on failure. */
static int load_layers(struct llm_model *m, const struct gguf_file *gf, char *err,
		       size_t errlen)
{
	bool *recurrent = NULL;
	uint32_t l;

	if (m->arch == LLM_ARCH_QWEN35 && load_qwen35(m, &recurrent, err, errlen)) {
		free(recurrent);
		return -1;
	}
	m->layers = calloc(m->n_layers, sizeof(*m->layers));
	if (!m->layers) {
		free(recurrent);
		return fail(err, errlen, gf, "out of memory");
	}
	for (l = 0; l < m->n_layers; l++) {
		if (load_layer(m, l, recurrent && recurrent[l], err, errlen)) {
			free(recurrent);
			llm_model_free(m);
			return -1;
		}
	}
	free(recurrent);
	return 0;
}

int llm_model_load(struct llm_model *m, const struct gguf_file *gf,
		   char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	m->gf = gf;
	if (load_arch(m, gf, err, errlen) || load_hparams(m, gf, err, errlen) ||
	    load_globals(m, gf, err, errlen))
		return -1;
	return load_layers(m, gf, err, errlen);
}

void llm_model_free(struct llm_model *m)
{
	free(m->layers);
	m->layers = NULL;
}

static uint64_t n_elems(const struct gguf_tensor *t)
{
	uint64_t n = 1;
	uint32_t d;

	/* The GGUF reader checked the product; saturate all the same. */
	for (d = 0; d < t->n_dims; d++)
		n = util_mul_u64(n, t->ne[d], NULL);
	return n;
}

uint64_t llm_tensor_card_bytes(const struct gguf_tensor *t, bool as_f32)
{
	if (!t)
		return 0;
	return as_f32 ? util_mul_u64(n_elems(t), 4, NULL) : t->nbytes;
}

uint64_t llm_layer_weight_bytes(const struct llm_model *m, uint32_t l)
{
	const struct llm_layer *L = &m->layers[l];

	return llm_tensor_card_bytes(L->ssm_qkv, false) +
	       llm_tensor_card_bytes(L->ssm_gate, false) +
	       llm_tensor_card_bytes(L->ssm_beta, false) +
	       llm_tensor_card_bytes(L->ssm_alpha, false) +
	       llm_tensor_card_bytes(L->ssm_conv, true) +
	       llm_tensor_card_bytes(L->ssm_dt, true) +
	       llm_tensor_card_bytes(L->ssm_a, true) +
	       llm_tensor_card_bytes(L->ssm_norm, true) +
	       llm_tensor_card_bytes(L->ssm_out, false) +
	       llm_tensor_card_bytes(L->attn_norm, true) +
	       llm_tensor_card_bytes(L->wq, false) +
	       llm_tensor_card_bytes(L->wk, false) +
	       llm_tensor_card_bytes(L->wv, false) +
	       llm_tensor_card_bytes(L->wo, false) +
	       llm_tensor_card_bytes(L->bq, true) +
	       llm_tensor_card_bytes(L->bk, true) +
	       llm_tensor_card_bytes(L->bv, true) +
	       llm_tensor_card_bytes(L->q_norm, true) +
	       llm_tensor_card_bytes(L->k_norm, true) +
	       llm_tensor_card_bytes(L->ffn_norm, true) +
	       llm_tensor_card_bytes(L->ffn_gate, false) +
	       llm_tensor_card_bytes(L->ffn_up, false) +
	       llm_tensor_card_bytes(L->ffn_down, false);
}

bool llm_ctx_warning(const struct llm_model *m, uint32_t n_ctx, char *buf, size_t n)
{
	if (n)
		buf[0] = '\0';
	if (n_ctx <= m->n_ctx_train)
		return false;
	snprintf(buf, n, "--ctx %u is over the %u tokens the model was trained on (%s.context_length): positions past them may give degraded output",
		 n_ctx, m->n_ctx_train, m->arch_name);
	return true;
}

bool llm_kv_type_ok(const struct llm_model *m, int kv_type)
{
	uint64_t kv_dim = (uint64_t)m->n_kv_heads * m->head_dim;

	return kv_dim <= SIZE_MAX && rk1828_kv_row_bytes(kv_type, (size_t)kv_dim) != 0;
}

uint64_t llm_kv_bytes(const struct llm_model *m, uint32_t n_ctx, int kv_type)
{
	uint64_t kv_dim = (uint64_t)m->n_kv_heads * m->head_dim, one;

	if (!llm_kv_type_ok(m, kv_type))
		return UINT64_MAX;
	/* Saturating: the factors come from the file and --ctx. */
	one = rk1828_kv_seq_bytes(kv_type, n_ctx, (size_t)kv_dim);
	if (!one && n_ctx)
		return UINT64_MAX;
	return util_mul_u64(2, one, NULL);
}

uint64_t llm_ssm_channels(const struct llm_model *m)
{
	return (2ULL * m->ssm_k_heads + m->ssm_v_heads) * m->ssm_state;
}

uint64_t llm_conv_state_bytes(const struct llm_model *m)
{
	return m->ssm_conv ? (uint64_t)(m->ssm_conv - 1) * llm_ssm_channels(m) * sizeof(float) : 0;
}

uint64_t llm_ssm_state_bytes(const struct llm_model *m)
{
	return rk1828_dnet_state_floats(m->ssm_state, m->ssm_v_heads) * sizeof(float);
}

uint64_t llm_state_bytes(const struct llm_model *m, uint32_t l)
{
	if (m->layers[l].kind != LLM_LAYER_DELTANET)
		return 0;
	return llm_conv_state_bytes(m) + llm_ssm_state_bytes(m);
}

uint64_t llm_head_bytes(const struct llm_model *m)
{
	return llm_tensor_card_bytes(m->output_norm, true) +
	       llm_tensor_card_bytes(m->output, false);
}

int llm_tensor_to_f32(const struct gguf_tensor *t, float *out)
{
	return quant_dequantize_row(t->type, t->data, out, n_elems(t)) ? -1 : 0;
}

int llm_embed(const struct llm_model *m, int32_t token, float *out)
{
	const struct gguf_tensor *t = m->token_embd;
	uint64_t row;

	if (token < 0 || (uint32_t)token >= m->n_vocab)
		return -1;
	row = gguf_type_size(t->type, m->dim);
	return quant_dequantize_row(t->type, (const uint8_t *)t->data + row * token,
			      out, m->dim) ? -1 : 0;
}
