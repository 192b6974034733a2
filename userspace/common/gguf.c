// SPDX-License-Identifier: MIT
/*
 * GGUF reader.
 *
 * Follows the GGUF specification (ggml docs/gguf.md, versions 2 and 3):
 *
 *   header:   "GGUF" | u32 version | u64 n_tensors | u64 n_kv
 *   kv pairs: string key | u32 value type | value
 *             (arrays: u32 element type | u64 count | elements)
 *   tensors:  string name | u32 n_dims | u64 ne[n_dims] | u32 type | u64 offset
 *   padding to general.alignment (default 32), then the data section.
 *
 * Strings are u64 length + bytes (no NUL). All integers are little endian.
 *
 * The file is mapped read-only and every field is validated against the
 * mapping size with overflow-safe arithmetic before it is used, so a
 * truncated or corrupted file yields an error message of the form
 * "PATH: field: reason" and never an out-of-bounds access.
 *
 * Implementation note: for array kvs the scalar union @v of struct gguf_kv
 * is unused by the public API; for STRING arrays the reader stores there
 * (v.u) a pointer to a private table of element offsets so gguf_arr_str()
 * is O(1). Callers must not read @v of an array kv.
 */
#include "gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define GGUF_MAGIC		"GGUF"
#define GGUF_DEFAULT_ALIGN	32
#define GGUF_MAX_DIMS		4
#define GGUF_MAX_KEY_LEN	65535
#define GGUF_MAX_NAME_LEN	64

/* Smallest possible encodings, used to reject absurd counts early. */
#define MIN_KV_BYTES		(8 + 1 + 4 + 1)	/* key len, 1-byte key, type, u8 */
#define MIN_TENSOR_BYTES	(8 + 1 + 4 + 8 + 4 + 8)

/*
 * struct gguf_priv - private state wrapped around the public struct.
 * @pub:          what the caller sees (must stay the first member)
 * @kv_hash:      open-addressing table of kv indices + 1 (0 = empty)
 * @tensor_hash:  same for tensors
 * @kv_hmask:     table size - 1 (power of two)
 * @tensor_hmask: table size - 1
 * @str_index:    per kv, element offsets of STRING arrays (or NULL)
 */
struct gguf_priv {
	struct gguf_file pub;
	uint32_t *kv_hash;
	uint32_t *tensor_hash;
	uint64_t kv_hmask;
	uint64_t tensor_hmask;
	uint64_t **str_index;
};

/* Parse cursor over the mapping. */
struct cur {
	const uint8_t *base;
	uint64_t size;
	uint64_t pos;
	const char *path;
	char *err;
	size_t errlen;
	char field[160];	/* current field description for messages */
};

static void __attribute__((format(printf, 2, 3)))
fail(struct cur *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!c->err || !c->errlen)
		return;
	if (c->field[0])
		n = snprintf(c->err, c->errlen, "%s: %s: ", c->path, c->field);
	else
		n = snprintf(c->err, c->errlen, "%s: ", c->path);
	if (n < 0 || (size_t)n >= c->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - n, fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 2, 3)))
set_field(struct cur *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->field, sizeof(c->field), fmt, ap);
	va_end(ap);
}

/* Printable, bounded copy of a file string for messages. */
static void quote(char *dst, size_t dstlen, const char *s, uint64_t len)
{
	size_t o = 0;
	uint64_t i;

	for (i = 0; i < len && o + 5 < dstlen; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
			dst[o++] = (char)ch;
		} else {
			snprintf(dst + o, dstlen - o, "\\x%02x", ch);
			o += 4;
		}
	}
	if (i < len && o + 3 < dstlen) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
}

static uint64_t rd_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t remain(const struct cur *c)
{
	return c->size - c->pos;
}

/* Check that n more bytes exist; @what names the item being read. */
static bool need(struct cur *c, uint64_t n, const char *what)
{
	if (n > remain(c)) {
		fail(c, "%s: %" PRIu64 " bytes at offset %" PRIu64
		     " run past end of file (size %" PRIu64 ")",
		     what, n, c->pos, c->size);
		return false;
	}
	return true;
}

static bool get_u32(struct cur *c, const char *what, uint32_t *out)
{
	if (!need(c, 4, what))
		return false;
	*out = rd_u32(c->base + c->pos);
	c->pos += 4;
	return true;
}

static bool get_u64(struct cur *c, const char *what, uint64_t *out)
{
	if (!need(c, 8, what))
		return false;
	*out = rd_u64(c->base + c->pos);
	c->pos += 8;
	return true;
}

static bool get_str(struct cur *c, const char *what, struct gguf_str *out)
{
	uint64_t len;
	uint64_t at = c->pos;

	if (!get_u64(c, what, &len))
		return false;
	if (len > remain(c)) {
		fail(c, "%s: length %" PRIu64 " at offset %" PRIu64
		     " runs past end of file (size %" PRIu64 ")",
		     what, len, at, c->size);
		return false;
	}
	out->s = (const char *)(c->base + c->pos);
	out->len = len;
	c->pos += len;
	return true;
}

uint64_t gguf_vtype_size(uint32_t t)
{
	switch (t) {
	case GGUF_VT_U8: case GGUF_VT_I8: case GGUF_VT_BOOL:
		return 1;
	case GGUF_VT_U16: case GGUF_VT_I16:
		return 2;
	case GGUF_VT_U32: case GGUF_VT_I32: case GGUF_VT_F32:
		return 4;
	case GGUF_VT_U64: case GGUF_VT_I64: case GGUF_VT_F64:
		return 8;
	default:
		return 0;
	}
}

static bool vtype_known(uint32_t t)
{
	return t <= GGUF_VT_F64;
}

/* Decode one fixed-size scalar of type t at p into kv->v. */
static void decode_scalar(struct gguf_kv *kv, uint32_t t, const uint8_t *p)
{
	uint16_t u16;
	uint32_t u32;
	float f32;
	double f64;

	switch (t) {
	case GGUF_VT_U8:
	case GGUF_VT_BOOL:
		kv->v.u = p[0];
		break;
	case GGUF_VT_I8:
		kv->v.i = (int8_t)p[0];
		break;
	case GGUF_VT_U16:
		memcpy(&u16, p, 2);
		kv->v.u = u16;
		break;
	case GGUF_VT_I16:
		memcpy(&u16, p, 2);
		kv->v.i = (int16_t)u16;
		break;
	case GGUF_VT_U32:
		kv->v.u = rd_u32(p);
		break;
	case GGUF_VT_I32:
		u32 = rd_u32(p);
		kv->v.i = (int32_t)u32;
		break;
	case GGUF_VT_F32:
		memcpy(&f32, p, 4);
		kv->v.f = f32;
		break;
	case GGUF_VT_U64:
	case GGUF_VT_I64:
		kv->v.u = rd_u64(p);
		break;
	case GGUF_VT_F64:
		memcpy(&f64, p, 8);
		kv->v.f = f64;
		break;
	}
}

/* FNV-1a over a file string. */
static uint64_t hash_str(const char *s, uint64_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	uint64_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static bool str_eq(const struct gguf_str *a, const char *s, uint64_t len)
{
	return a->len == len && memcmp(a->s, s, len) == 0;
}

/* Table size: power of two >= 2n (at least 8). */
static uint64_t table_size(uint64_t n)
{
	uint64_t sz = 8;

	while (sz < 2 * n)
		sz <<= 1;
	return sz;
}

/*
 * Insert index i of entry named (s, len) into table; returns the index of an
 * existing entry with the same name (duplicate) or UINT64_MAX on success.
 * name_of() yields the name of an existing entry.
 */
static uint64_t hash_insert(uint32_t *tab, uint64_t mask, const char *s,
			    uint64_t len, uint32_t i,
			    const struct gguf_str *(*name_of)(const void *, uint32_t),
			    const void *ctx)
{
	uint64_t h = hash_str(s, len) & mask;

	while (tab[h]) {
		uint32_t j = tab[h] - 1;

		if (str_eq(name_of(ctx, j), s, len))
			return j;
		h = (h + 1) & mask;
	}
	tab[h] = i + 1;
	return UINT64_MAX;
}

static const struct gguf_str *kv_name(const void *ctx, uint32_t i)
{
	return &((const struct gguf_kv *)ctx)[i].key;
}

static const struct gguf_str *tensor_name(const void *ctx, uint32_t i)
{
	return &((const struct gguf_tensor *)ctx)[i].name;
}

static int64_t hash_lookup(const uint32_t *tab, uint64_t mask, const char *s,
			   const struct gguf_str *(*name_of)(const void *, uint32_t),
			   const void *ctx)
{
	uint64_t len = strlen(s);
	uint64_t h;

	if (!tab)
		return -1;
	h = hash_str(s, len) & mask;
	while (tab[h]) {
		uint32_t j = tab[h] - 1;

		if (str_eq(name_of(ctx, j), s, len))
			return j;
		h = (h + 1) & mask;
	}
	return -1;
}

/* The key of kv[@idx]: 1..GGUF_MAX_KEY_LEN bytes, not seen before. */
static bool parse_kv_key(struct cur *c, struct gguf_priv *p, uint64_t idx)
{
	struct gguf_kv *kv = &p->pub.kv[idx];
	char q[80];
	uint64_t dup;

	set_field(c, "kv[%" PRIu64 "]", idx);
	if (!get_str(c, "key", &kv->key))
		return false;
	quote(q, sizeof(q), kv->key.s, kv->key.len);
	if (kv->key.len == 0 || kv->key.len > GGUF_MAX_KEY_LEN) {
		fail(c, "key length %" PRIu64 " not in 1..%d",
		     kv->key.len, GGUF_MAX_KEY_LEN);
		return false;
	}
	set_field(c, "kv[%" PRIu64 "] '%s'", idx, q);
	dup = hash_insert(p->kv_hash, p->kv_hmask, kv->key.s, kv->key.len,
			  (uint32_t)idx, kv_name, p->pub.kv);
	if (dup != UINT64_MAX) {
		fail(c, "duplicate key (also kv[%" PRIu64 "])", dup);
		return false;
	}
	return true;
}

/* A scalar value of type @t (not a string or array). */
static bool parse_kv_scalar(struct cur *c, struct gguf_kv *kv, uint32_t t)
{
	uint64_t sz = gguf_vtype_size(t);

	if (!need(c, sz, "value"))
		return false;
	if (t == GGUF_VT_BOOL && c->base[c->pos] > 1) {
		fail(c, "bool value %u is not 0 or 1", c->base[c->pos]);
		return false;
	}
	decode_scalar(kv, t, c->base + c->pos);
	c->pos += sz;
	return true;
}

/* The @n elements of an array of fixed-size type @et, skipped (bools checked). */
static bool parse_kv_array_fixed(struct cur *c, uint32_t et, uint64_t n)
{
	uint64_t esz = gguf_vtype_size(et);
	uint64_t i;

	if (n > remain(c) / esz) {
		fail(c, "array of %" PRIu64 " x %" PRIu64
		     "-byte elements at offset %" PRIu64
		     " runs past end of file (size %" PRIu64 ")",
		     n, esz, c->pos, c->size);
		return false;
	}
	if (et == GGUF_VT_BOOL) {
		for (i = 0; i < n; i++) {
			if (c->base[c->pos + i] > 1) {
				fail(c, "element %" PRIu64 ": bool value %u is not 0 or 1",
				     i, c->base[c->pos + i]);
				return false;
			}
		}
	}
	c->pos += n * esz;
	return true;
}

/* The @n strings of kv[@idx]'s array: their offsets go to str_index[@idx]. */
static bool parse_kv_array_strings(struct cur *c, struct gguf_priv *p, uint64_t idx,
				   uint64_t n)
{
	struct gguf_kv *kv = &p->pub.kv[idx];
	uint64_t i;

	/* Each string takes at least its 8-byte length. */
	if (n > remain(c) / 8) {
		fail(c, "array of %" PRIu64 " strings at offset %" PRIu64
		     " cannot fit in the file (size %" PRIu64 ")",
		     n, c->pos, c->size);
		return false;
	}
	p->str_index[idx] = malloc((n ? n : 1) * sizeof(uint64_t));
	if (!p->str_index[idx]) {
		fail(c, "out of memory for %" PRIu64 " strings", n);
		return false;
	}
	kv->v.u = (uint64_t)(uintptr_t)p->str_index[idx];
	for (i = 0; i < n; i++) {
		struct gguf_str s;
		char what[48];

		p->str_index[idx][i] = c->pos;
		snprintf(what, sizeof(what), "element %" PRIu64, i);
		if (!get_str(c, what, &s))
			return false;
	}
	return true;
}

/* The array value of kv[@idx]: element type, count, then the elements. */
static bool parse_kv_array(struct cur *c, struct gguf_priv *p, uint64_t idx)
{
	struct gguf_kv *kv = &p->pub.kv[idx];
	uint32_t et;
	uint64_t n;

	if (!get_u32(c, "array element type", &et))
		return false;
	if (et == GGUF_VT_ARRAY) {
		fail(c, "nested arrays are not supported");
		return false;
	}
	if (!vtype_known(et)) {
		fail(c, "unknown array element type %" PRIu32, et);
		return false;
	}
	if (!get_u64(c, "array count", &n))
		return false;
	kv->arr_type = et;
	kv->arr_n = n;
	kv->arr_data = c->base + c->pos;
	if (et != GGUF_VT_STRING)
		return parse_kv_array_fixed(c, et, n);
	return parse_kv_array_strings(c, p, idx, n);
}

static bool parse_kv(struct cur *c, struct gguf_priv *p, uint64_t idx)
{
	struct gguf_kv *kv = &p->pub.kv[idx];
	uint32_t t;

	if (!parse_kv_key(c, p, idx))
		return false;
	if (!get_u32(c, "value type", &t))
		return false;
	if (!vtype_known(t)) {
		fail(c, "unknown value type %" PRIu32, t);
		return false;
	}
	kv->type = t;
	if (t == GGUF_VT_STRING)
		return get_str(c, "string value", &kv->v.str);
	if (t != GGUF_VT_ARRAY)
		return parse_kv_scalar(c, kv, t);
	return parse_kv_array(c, p, idx);
}

static bool parse_tensor_info(struct cur *c, struct gguf_priv *p, uint64_t idx)
{
	struct gguf_tensor *t = &p->pub.tensors[idx];
	char q[80];
	uint32_t nd, ty, d;
	uint64_t dup, nel = 1;

	set_field(c, "tensor[%" PRIu64 "]", idx);
	if (!get_str(c, "name", &t->name))
		return false;
	quote(q, sizeof(q), t->name.s, t->name.len);
	if (t->name.len == 0 || t->name.len > GGUF_MAX_NAME_LEN) {
		fail(c, "name length %" PRIu64 " not in 1..%d",
		     t->name.len, GGUF_MAX_NAME_LEN);
		return false;
	}
	set_field(c, "tensor '%s'", q);
	dup = hash_insert(p->tensor_hash, p->tensor_hmask, t->name.s,
			  t->name.len, (uint32_t)idx, tensor_name,
			  p->pub.tensors);
	if (dup != UINT64_MAX) {
		fail(c, "duplicate tensor name (tensor[%" PRIu64 "] and tensor[%"
		     PRIu64 "])", dup, idx);
		return false;
	}
	if (!get_u32(c, "n_dims", &nd))
		return false;
	if (nd < 1 || nd > GGUF_MAX_DIMS) {
		fail(c, "n_dims %" PRIu32 " not in 1..%d", nd, GGUF_MAX_DIMS);
		return false;
	}
	t->n_dims = nd;
	for (d = 0; d < GGUF_MAX_DIMS; d++)
		t->ne[d] = 1;
	for (d = 0; d < nd; d++) {
		char what[16];

		snprintf(what, sizeof(what), "ne[%" PRIu32 "]", d);
		if (!get_u64(c, what, &t->ne[d]))
			return false;
		if (t->ne[d] == 0 || t->ne[d] > INT64_MAX) {
			fail(c, "ne[%" PRIu32 "] = %" PRIu64 " is not in 1..INT64_MAX",
			     d, t->ne[d]);
			return false;
		}
		if (t->ne[d] > INT64_MAX / nel) {
			fail(c, "element count overflows (ne[%" PRIu32 "] = %" PRIu64
			     " after %" PRIu64 " elements)", d, t->ne[d], nel);
			return false;
		}
		nel *= t->ne[d];
	}
	if (!get_u32(c, "type", &ty))
		return false;
	if (!gguf_block_size(ty)) {
		fail(c, "unknown tensor type %" PRIu32 " (not a ggml type)", ty);
		return false;
	}
	t->type = ty;
	if (t->ne[0] % gguf_block_size(ty)) {
		fail(c, "row length ne[0] = %" PRIu64 " is not a multiple of the %s block size %" PRIu32,
		     t->ne[0], gguf_type_name(ty), gguf_block_size(ty));
		return false;
	}
	t->nbytes = gguf_type_size(ty, nel);
	if (!t->nbytes) {
		fail(c, "byte size of %" PRIu64 " %s elements overflows",
		     nel, gguf_type_name(ty));
		return false;
	}
	if (!get_u64(c, "offset", &t->offset))
		return false;
	return true;
}

static bool place_tensor(struct cur *c, struct gguf_priv *p, uint64_t idx)
{
	struct gguf_file *f = &p->pub;
	struct gguf_tensor *t = &f->tensors[idx];
	char q[80];
	uint64_t start;

	quote(q, sizeof(q), t->name.s, t->name.len);
	set_field(c, "tensor '%s'", q);
	if (t->offset % f->alignment) {
		fail(c, "offset %" PRIu64 " is not a multiple of the alignment %" PRIu64,
		     t->offset, f->alignment);
		return false;
	}
	if (t->offset > c->size || f->data_offset > c->size - t->offset ||
	    t->nbytes > c->size - t->offset - f->data_offset) {
		fail(c, "data [offset %" PRIu64 ", %" PRIu64
		     " bytes] ends past end of file (size %" PRIu64
		     ", data section at %" PRIu64 ")",
		     t->offset, t->nbytes, c->size, f->data_offset);
		return false;
	}
	start = f->data_offset + t->offset;
	t->data = c->base + start;
	return true;
}

/* Magic, version and the two counts, each checked against the file's size. */
static bool parse_header(struct cur *c, struct gguf_file *f)
{
	uint32_t ver;

	set_field(c, "header");
	if (c->size < 4 || memcmp(c->base, GGUF_MAGIC, 4) != 0) {
		char q[24];

		quote(q, sizeof(q), (const char *)c->base, c->size < 4 ? c->size : 4);
		set_field(c, "magic");
		fail(c, "'%s' is not \"GGUF\" (file size %" PRIu64 ")", q, c->size);
		return false;
	}
	c->pos = 4;
	set_field(c, "version");
	if (!get_u32(c, "u32", &ver))
		return false;
	if (ver != 2 && ver != 3) {
		if ((ver & 0xffff) == 0 && ver)
			fail(c, "%" PRIu32 " looks byte-swapped: big-endian GGUF is not supported", ver);
		else
			fail(c, "unsupported version %" PRIu32 " (need 2 or 3)", ver);
		return false;
	}
	f->version = ver;
	set_field(c, "n_tensors");
	if (!get_u64(c, "u64", &f->n_tensors))
		return false;
	set_field(c, "n_kv");
	if (!get_u64(c, "u64", &f->n_kv))
		return false;
	if (f->n_kv > remain(c) / MIN_KV_BYTES || f->n_kv >= UINT32_MAX) {
		fail(c, "%" PRIu64 " pairs cannot fit in the %" PRIu64
		     " bytes after the header", f->n_kv, remain(c));
		return false;
	}
	if (f->n_tensors > remain(c) / MIN_TENSOR_BYTES ||
	    f->n_tensors >= UINT32_MAX) {
		set_field(c, "n_tensors");
		fail(c, "%" PRIu64 " tensor infos cannot fit in the %" PRIu64
		     " bytes after the header", f->n_tensors, remain(c));
		return false;
	}
	return true;
}

/* The kv and tensor arrays and their hash tables, for the header's counts. */
static bool alloc_tables(struct cur *c, struct gguf_priv *p)
{
	struct gguf_file *f = &p->pub;

	f->kv = calloc(f->n_kv ? f->n_kv : 1, sizeof(*f->kv));
	p->str_index = calloc(f->n_kv ? f->n_kv : 1, sizeof(*p->str_index));
	p->kv_hmask = table_size(f->n_kv) - 1;
	p->kv_hash = calloc(p->kv_hmask + 1, sizeof(uint32_t));
	f->tensors = calloc(f->n_tensors ? f->n_tensors : 1, sizeof(*f->tensors));
	p->tensor_hmask = table_size(f->n_tensors) - 1;
	p->tensor_hash = calloc(p->tensor_hmask + 1, sizeof(uint32_t));
	if (!f->kv || !p->str_index || !p->kv_hash || !f->tensors ||
	    !p->tensor_hash) {
		set_field(c, "header");
		fail(c, "out of memory for %" PRIu64 " kv pairs and %" PRIu64
		     " tensors", f->n_kv, f->n_tensors);
		return false;
	}
	return true;
}

/* general.alignment: a u32 power of two, GGUF_DEFAULT_ALIGN when absent. */
static bool parse_alignment(struct cur *c, struct gguf_file *f)
{
	const struct gguf_kv *akv;

	f->alignment = GGUF_DEFAULT_ALIGN;
	akv = gguf_find_kv(f, "general.alignment");
	if (!akv)
		return true;
	set_field(c, "general.alignment");
	if (akv->type != GGUF_VT_U32) {
		fail(c, "value type %d is not u32 (%d)", akv->type, GGUF_VT_U32);
		return false;
	}
	if (akv->v.u == 0 || (akv->v.u & (akv->v.u - 1))) {
		fail(c, "%" PRIu64 " is not a power of two", akv->v.u);
		return false;
	}
	f->alignment = akv->v.u;
	return true;
}

static bool parse(struct cur *c, struct gguf_priv *p)
{
	struct gguf_file *f = &p->pub;
	uint64_t i, pad;

	if (!parse_header(c, f) || !alloc_tables(c, p))
		return false;
	for (i = 0; i < f->n_kv; i++)
		if (!parse_kv(c, p, i))
			return false;
	if (!parse_alignment(c, f))
		return false;
	for (i = 0; i < f->n_tensors; i++)
		if (!parse_tensor_info(c, p, i))
			return false;

	/* Data section: next multiple of the alignment (pos <= size < 2^63). */
	pad = (f->alignment - c->pos % f->alignment) % f->alignment;
	f->data_offset = c->pos + pad;
	if (f->n_tensors && f->data_offset > c->size) {
		set_field(c, "data section");
		fail(c, "starts at %" PRIu64 ", past end of file (size %" PRIu64 ")",
		     f->data_offset, c->size);
		return false;
	}
	for (i = 0; i < f->n_tensors; i++)
		if (!place_tensor(c, p, i))
			return false;
	return true;
}

struct gguf_file *gguf_open(const char *path, char *err, size_t errlen)
{
	struct gguf_priv *p;
	struct cur c = { .path = path, .err = err, .errlen = errlen };
	struct stat st;
	int fd;

	if (err && errlen)
		err[0] = '\0';
	/*
	 * O_NONBLOCK: a FIFO (or a device) must not block the open; it is
	 * refused as "not a regular file" below. Regular files ignore it.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		fail(&c, "open: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		fail(&c, "stat: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		fail(&c, "not a regular file");
		close(fd);
		return NULL;
	}
	if (st.st_size < 24) {
		set_field(&c, "header");
		fail(&c, "file size %lld is smaller than the 24-byte header",
		     (long long)st.st_size);
		close(fd);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->pub.path = strdup(path))) {
		fail(&c, "out of memory");
		free(p);
		close(fd);
		return NULL;
	}
	p->pub.map_size = (size_t)st.st_size;
	p->pub.map = mmap(NULL, p->pub.map_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p->pub.map == MAP_FAILED) {
		p->pub.map = NULL;
		fail(&c, "mmap: %s", strerror(errno));
		gguf_close(&p->pub);
		return NULL;
	}
	c.base = p->pub.map;
	c.size = p->pub.map_size;
	if (!parse(&c, p)) {
		gguf_close(&p->pub);
		return NULL;
	}
	return &p->pub;
}

void gguf_close(struct gguf_file *f)
{
	struct gguf_priv *p = (struct gguf_priv *)f;
	uint64_t i;

	if (!f)
		return;
	if (p->str_index) {
		for (i = 0; i < f->n_kv; i++)
			free(p->str_index[i]);
		free(p->str_index);
	}
	free(p->kv_hash);
	free(p->tensor_hash);
	free(f->kv);
	free(f->tensors);
	if (f->map)
		munmap(f->map, f->map_size);
	free(f->path);
	free(p);
}

const struct gguf_kv *gguf_find_kv(const struct gguf_file *f, const char *key)
{
	const struct gguf_priv *p = (const struct gguf_priv *)f;
	int64_t i;

	if (!f || !key)
		return NULL;
	i = hash_lookup(p->kv_hash, p->kv_hmask, key, kv_name, f->kv);
	/* Entries past a parse failure are never in the table. */
	return i < 0 ? NULL : &f->kv[i];
}

const struct gguf_tensor *gguf_find_tensor(const struct gguf_file *f,
					   const char *name)
{
	const struct gguf_priv *p = (const struct gguf_priv *)f;
	int64_t i;

	if (!f || !name)
		return NULL;
	i = hash_lookup(p->tensor_hash, p->tensor_hmask, name, tensor_name,
			f->tensors);
	return i < 0 ? NULL : &f->tensors[i];
}

static bool is_unsigned(enum gguf_vtype t)
{
	return t == GGUF_VT_U8 || t == GGUF_VT_U16 || t == GGUF_VT_U32 ||
	       t == GGUF_VT_U64;
}

static bool is_signed(enum gguf_vtype t)
{
	return t == GGUF_VT_I8 || t == GGUF_VT_I16 || t == GGUF_VT_I32 ||
	       t == GGUF_VT_I64;
}

bool gguf_get_u64(const struct gguf_file *f, const char *key, uint64_t *out)
{
	const struct gguf_kv *kv = gguf_find_kv(f, key);

	if (!kv)
		return false;
	if (is_unsigned(kv->type) || kv->type == GGUF_VT_BOOL) {
		*out = kv->v.u;
		return true;
	}
	if (is_signed(kv->type) && kv->v.i >= 0) {
		*out = (uint64_t)kv->v.i;
		return true;
	}
	return false;
}

bool gguf_get_f32(const struct gguf_file *f, const char *key, float *out)
{
	const struct gguf_kv *kv = gguf_find_kv(f, key);

	if (!kv || (kv->type != GGUF_VT_F32 && kv->type != GGUF_VT_F64))
		return false;
	*out = (float)kv->v.f;
	return true;
}

bool gguf_get_str(const struct gguf_file *f, const char *key,
		  struct gguf_str *out)
{
	const struct gguf_kv *kv = gguf_find_kv(f, key);

	if (!kv || kv->type != GGUF_VT_STRING)
		return false;
	*out = kv->v.str;
	return true;
}

bool gguf_arr_str(const struct gguf_kv *kv, uint64_t i, struct gguf_str *out)
{
	const uint64_t *index;
	const uint8_t *base;

	if (!kv || kv->type != GGUF_VT_ARRAY || kv->arr_type != GGUF_VT_STRING ||
	    i >= kv->arr_n)
		return false;
	index = (const uint64_t *)(uintptr_t)kv->v.u;
	if (!index)
		return false;
	/* index holds absolute file offsets; element 0 is at arr_data. */
	base = kv->arr_data - index[0];
	out->len = rd_u64(base + index[i]);
	out->s = (const char *)(base + index[i] + 8);
	return true;
}

bool gguf_arr_f32(const struct gguf_kv *kv, uint64_t i, float *out)
{
	double d;

	if (!kv || kv->type != GGUF_VT_ARRAY || i >= kv->arr_n)
		return false;
	if (kv->arr_type == GGUF_VT_F32) {
		memcpy(out, kv->arr_data + 4 * i, 4);
		return true;
	}
	if (kv->arr_type == GGUF_VT_F64) {
		memcpy(&d, kv->arr_data + 8 * i, 8);
		*out = (float)d;
		return true;
	}
	return false;
}

bool gguf_arr_i64(const struct gguf_kv *kv, uint64_t i, int64_t *out)
{
	const uint8_t *p;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	if (!kv || kv->type != GGUF_VT_ARRAY || i >= kv->arr_n)
		return false;
	p = kv->arr_data + i * gguf_vtype_size(kv->arr_type);
	switch (kv->arr_type) {
	case GGUF_VT_U8:
	case GGUF_VT_BOOL:
		*out = p[0];
		return true;
	case GGUF_VT_I8:
		*out = (int8_t)p[0];
		return true;
	case GGUF_VT_U16:
		memcpy(&u16, p, 2);
		*out = u16;
		return true;
	case GGUF_VT_I16:
		memcpy(&u16, p, 2);
		*out = (int16_t)u16;
		return true;
	case GGUF_VT_U32:
		*out = rd_u32(p);
		return true;
	case GGUF_VT_I32:
		u32 = rd_u32(p);
		*out = (int32_t)u32;
		return true;
	case GGUF_VT_U64:
		u64 = rd_u64(p);
		if (u64 > INT64_MAX)
			return false;
		*out = (int64_t)u64;
		return true;
	case GGUF_VT_I64:
		*out = (int64_t)rd_u64(p);
		return true;
	default:
		return false;
	}
}

/*
 * Every tensor type ggml defines (ggml/include/ggml.h enum ggml_type): its
 * name, elements per block and bytes per block, from the block structs of
 * ggml/src/ggml-common.h. The reader knows all of them so that a file with
 * any ggml type opens and the model loader can name the type it refuses.
 */
static const struct {
	const char *name;
	uint32_t block;
	uint32_t bytes;
} type_info[] = {
	[GGML_TYPE_F32] = { "F32", 1, 4 },
	[GGML_TYPE_F16] = { "F16", 1, 2 },
	[GGML_TYPE_Q4_0] = { "Q4_0", 32, 18 },
	[GGML_TYPE_Q4_1] = { "Q4_1", 32, 20 },
	[GGML_TYPE_Q5_0] = { "Q5_0", 32, 22 },
	[GGML_TYPE_Q5_1] = { "Q5_1", 32, 24 },
	[GGML_TYPE_Q8_0] = { "Q8_0", 32, 34 },
	[GGML_TYPE_Q8_1] = { "Q8_1", 32, 36 },
	[GGML_TYPE_Q2_K] = { "Q2_K", 256, 84 },
	[GGML_TYPE_Q3_K] = { "Q3_K", 256, 110 },
	[GGML_TYPE_Q4_K] = { "Q4_K", 256, 144 },
	[GGML_TYPE_Q5_K] = { "Q5_K", 256, 176 },
	[GGML_TYPE_Q6_K] = { "Q6_K", 256, 210 },
	[GGML_TYPE_Q8_K] = { "Q8_K", 256, 292 },
	[GGML_TYPE_IQ2_XXS] = { "IQ2_XXS", 256, 66 },
	[GGML_TYPE_IQ2_XS] = { "IQ2_XS", 256, 74 },
	[GGML_TYPE_IQ3_XXS] = { "IQ3_XXS", 256, 98 },
	[GGML_TYPE_IQ1_S] = { "IQ1_S", 256, 50 },
	[GGML_TYPE_IQ4_NL] = { "IQ4_NL", 32, 18 },
	[GGML_TYPE_IQ3_S] = { "IQ3_S", 256, 110 },
	[GGML_TYPE_IQ2_S] = { "IQ2_S", 256, 82 },
	[GGML_TYPE_IQ4_XS] = { "IQ4_XS", 256, 136 },
	[GGML_TYPE_I8] = { "I8", 1, 1 },
	[GGML_TYPE_I16] = { "I16", 1, 2 },
	[GGML_TYPE_I32] = { "I32", 1, 4 },
	[GGML_TYPE_I64] = { "I64", 1, 8 },
	[GGML_TYPE_F64] = { "F64", 1, 8 },
	[GGML_TYPE_IQ1_M] = { "IQ1_M", 256, 56 },
	[GGML_TYPE_BF16] = { "BF16", 1, 2 },
	[GGML_TYPE_TQ1_0] = { "TQ1_0", 256, 54 },
	[GGML_TYPE_TQ2_0] = { "TQ2_0", 256, 66 },
	[GGML_TYPE_MXFP4] = { "MXFP4", 32, 17 },
	[GGML_TYPE_NVFP4] = { "NVFP4", 64, 36 },
	[GGML_TYPE_Q1_0] = { "Q1_0", 128, 18 },
	[GGML_TYPE_Q2_0] = { "Q2_0", 64, 18 },
};

uint32_t gguf_block_size(enum gguf_type t)
{
	if ((unsigned int)t >= sizeof(type_info) / sizeof(type_info[0]))
		return 0;
	return type_info[t].block;
}

/* Bytes per block. */
static uint64_t block_bytes(enum gguf_type t)
{
	return gguf_block_size(t) ? type_info[t].bytes : 0;
}

uint64_t gguf_type_size(enum gguf_type t, uint64_t n)
{
	uint32_t bs = gguf_block_size(t);
	uint64_t nb;

	if (!bs || n % bs)
		return 0;
	nb = n / bs;
	if (nb > UINT64_MAX / block_bytes(t))
		return 0;
	return nb * block_bytes(t);
}

const char *gguf_type_name(enum gguf_type t)
{
	return gguf_block_size(t) ? type_info[t].name : "unknown";
}
