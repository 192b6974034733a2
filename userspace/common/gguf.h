/* SPDX-License-Identifier: MIT */
/*
 * GGUF reader: validates and indexes a GGUF v3 (and v2) file mapped read-only.
 * Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
 */
#ifndef RK_GGUF_H
#define RK_GGUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/*
 * GGML tensor types (ggml/include/ggml.h enum ggml_type); the reader knows
 * the block size and bytes of each, whether or not the card runs it.
 */
enum gguf_type {
	GGML_TYPE_F32 = 0,
	GGML_TYPE_F16 = 1,
	GGML_TYPE_Q4_0 = 2,
	GGML_TYPE_Q4_1 = 3,
	GGML_TYPE_Q5_0 = 6,
	GGML_TYPE_Q5_1 = 7,
	GGML_TYPE_Q8_0 = 8,
	GGML_TYPE_Q8_1 = 9,
	GGML_TYPE_Q2_K = 10,
	GGML_TYPE_Q3_K = 11,
	GGML_TYPE_Q4_K = 12,
	GGML_TYPE_Q5_K = 13,
	GGML_TYPE_Q6_K = 14,
	GGML_TYPE_Q8_K = 15,
	GGML_TYPE_IQ2_XXS = 16,
	GGML_TYPE_IQ2_XS = 17,
	GGML_TYPE_IQ3_XXS = 18,
	GGML_TYPE_IQ1_S = 19,
	GGML_TYPE_IQ4_NL = 20,
	GGML_TYPE_IQ3_S = 21,
	GGML_TYPE_IQ2_S = 22,
	GGML_TYPE_IQ4_XS = 23,
	GGML_TYPE_I8 = 24,
	GGML_TYPE_I16 = 25,
	GGML_TYPE_I32 = 26,
	GGML_TYPE_I64 = 27,
	GGML_TYPE_F64 = 28,
	GGML_TYPE_IQ1_M = 29,
	GGML_TYPE_BF16 = 30,
	GGML_TYPE_TQ1_0 = 34,
	GGML_TYPE_TQ2_0 = 35,
	GGML_TYPE_MXFP4 = 39,
	GGML_TYPE_NVFP4 = 40,
	GGML_TYPE_Q1_0 = 41,
	GGML_TYPE_Q2_0 = 42,
};

/* GGUF metadata value types. */
enum gguf_vtype {
	GGUF_VT_U8 = 0, GGUF_VT_I8 = 1, GGUF_VT_U16 = 2, GGUF_VT_I16 = 3,
	GGUF_VT_U32 = 4, GGUF_VT_I32 = 5, GGUF_VT_F32 = 6, GGUF_VT_BOOL = 7,
	GGUF_VT_STRING = 8, GGUF_VT_ARRAY = 9, GGUF_VT_U64 = 10,
	GGUF_VT_I64 = 11, GGUF_VT_F64 = 12,
};

/* A string inside the mapped file (not NUL terminated). */
struct gguf_str {
	const char *s;
	uint64_t len;
};

struct gguf_kv {
	struct gguf_str key;
	enum gguf_vtype type;
	/* Scalars: value (integers widened, bool 0/1, float in f). */
	union {
		uint64_t u;
		int64_t i;
		double f;
		struct gguf_str str;
	} v;
	/* Arrays: element type, count and pointer to the first element. */
	enum gguf_vtype arr_type;
	uint64_t arr_n;
	const uint8_t *arr_data;
};

struct gguf_tensor {
	struct gguf_str name;
	uint32_t n_dims;
	uint64_t ne[4];		/* ne[0] is the row length (innermost) */
	enum gguf_type type;
	uint64_t offset;	/* relative to the data section */
	uint64_t nbytes;
	const void *data;	/* inside the mapping */
};

struct gguf_file {
	char *path;
	void *map;
	size_t map_size;
	uint32_t version;
	uint64_t n_kv, n_tensors;
	struct gguf_kv *kv;
	struct gguf_tensor *tensors;
	uint64_t alignment;
	uint64_t data_offset;
};

/*
 * gguf_open() - map and validate @path.
 * Checks magic, version (2 or 3), every count and length against the file
 * size, string/array bounds, known value types, tensor types, dimension
 * products (no overflow), alignment and that every tensor's data lies in
 * the file. On failure returns NULL and writes "PATH: reason" into err.
 */
struct gguf_file *gguf_open(const char *path, char *err, size_t errlen);
void gguf_close(struct gguf_file *f);

/*
 * Notes on the reader (gguf.c):
 * - Errors read "PATH: FIELD: reason", FIELD naming the item, e.g.
 *   "m.gguf: tensor 'blk.0.attn_q.weight': data [offset 123, 4096 bytes]
 *   ends past end of file (size 2000, data section at 640)".
 * - Beyond the checks above it rejects: duplicate keys and tensor names,
 *   nested arrays, bool values other than 0/1, empty keys, tensor names
 *   longer than 64 bytes, n_dims outside 1..4, zero dimensions, rows not a
 *   multiple of the block size, offsets not a multiple of the alignment,
 *   and general.alignment that is not a u32 power of two.
 * - Lookups use hash tables kept next to the returned struct: pass the
 *   pointer gguf_open() returned, never a copy of the struct.
 * - For array kvs the scalar union v is private (the reader keeps an
 *   element index there for O(1) gguf_arr_str()); use the gguf_arr_*()
 *   accessors. Scalars: unsigned and bool in v.u, signed in v.i (sign
 *   extended), F32/F64 in v.f, strings in v.str.
 * - gguf_get_u64() accepts any unsigned, bool, or non-negative signed
 *   integer; gguf_get_f32() accepts F32 and F64; gguf_arr_f32() F32 and
 *   F64 arrays; gguf_arr_i64() every integer and bool array (U64 elements
 *   above INT64_MAX -> false).
 * - gguf_type_size() returns 0 for unknown types, n not a multiple of the
 *   block size, or overflow; gguf_block_size() 0 and gguf_type_name()
 *   "unknown" for unknown types.
 * - Everything is read-only after gguf_open(): concurrent readers are safe.
 */

const struct gguf_kv *gguf_find_kv(const struct gguf_file *f, const char *key);
const struct gguf_tensor *gguf_find_tensor(const struct gguf_file *f, const char *name);
/* Typed getters: return false when missing or of a non-matching type. */
bool gguf_get_u64(const struct gguf_file *f, const char *key, uint64_t *out);
bool gguf_get_f32(const struct gguf_file *f, const char *key, float *out);
bool gguf_get_str(const struct gguf_file *f, const char *key, struct gguf_str *out);
/* Array element access for STRING, F32 and integer arrays; false on type/bounds error. */
bool gguf_arr_str(const struct gguf_kv *kv, uint64_t i, struct gguf_str *out);
bool gguf_arr_f32(const struct gguf_kv *kv, uint64_t i, float *out);
bool gguf_arr_i64(const struct gguf_kv *kv, uint64_t i, int64_t *out);

/* Bytes of one value of a fixed-size metadata type; 0 for STRING, ARRAY, unknown. */
uint64_t gguf_vtype_size(uint32_t t);
/* Bytes for n elements of type t (n must be a multiple of the block size). */
uint64_t gguf_type_size(enum gguf_type t, uint64_t n);
uint32_t gguf_block_size(enum gguf_type t);
const char *gguf_type_name(enum gguf_type t);

#endif
