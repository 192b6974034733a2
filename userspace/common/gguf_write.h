/* SPDX-License-Identifier: MIT */
/*
 * Small GGUF v3 writer for tests and synthetic models.
 *
 * Builds a file in memory from metadata key/value pairs and tensors, in the
 * order they are added, following the GGUF specification
 * (ggml docs/gguf.md): header, kv pairs, tensor infos, padding to the
 * alignment, then each tensor's data at an aligned offset.
 *
 * Usage:
 *	struct gguf_writer *w = gguf_writer_new();
 *	gguf_writer_add_str(w, "general.architecture", "llama");
 *	gguf_writer_add_u32(w, "llama.block_count", 5);
 *	gguf_writer_add_tensor(w, "output_norm.weight", 1, ne, GGML_TYPE_F32, data, 256);
 *	if (gguf_writer_write_file(w, "x.gguf", err, sizeof(err)) < 0) ...
 *	gguf_writer_free(w);
 *
 * The writer does not validate tensor types or sizes on purpose: tests use
 * it to produce invalid files too (see gguf_writer_add_tensor_raw()). Every
 * adder copies its arguments. All adders return 0, or -ENOMEM / -EINVAL
 * (NULL argument); after the first failure the writer remembers the error
 * and gguf_writer_to_mem()/gguf_writer_write_file() report it.
 */
#ifndef RK_GGUF_WRITE_H
#define RK_GGUF_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "gguf.h"

struct gguf_writer;

/* New empty writer: version 3, alignment 32. NULL when out of memory. */
struct gguf_writer *gguf_writer_new(void);
void gguf_writer_free(struct gguf_writer *w);

/* Header version written (default 3); any value, to make bad files. */
void gguf_writer_set_version(struct gguf_writer *w, uint32_t version);

/*
 * gguf_writer_set_alignment() - data alignment in bytes (default 32).
 * Also adds the u32 kv "general.alignment" (at the current position) unless
 * @add_kv is false. Values that are not a power of two are accepted so
 * tests can write bad files; the writer itself then pads to a multiple of
 * @align (1 when 0).
 */
int gguf_writer_set_alignment(struct gguf_writer *w, uint32_t align, bool add_kv);

/* Scalars. */
int gguf_writer_add_u32(struct gguf_writer *w, const char *key, uint32_t v);
int gguf_writer_add_i32(struct gguf_writer *w, const char *key, int32_t v);
int gguf_writer_add_f32(struct gguf_writer *w, const char *key, float v);
int gguf_writer_add_bool(struct gguf_writer *w, const char *key, bool v);
int gguf_writer_add_str(struct gguf_writer *w, const char *key, const char *v);
/* String with explicit length (may contain NULs). */
int gguf_writer_add_strn(struct gguf_writer *w, const char *key, const char *v,
		    size_t len);
/*
 * Any fixed-size scalar type: @val points to vtype's little-endian encoding
 * (1, 2, 4 or 8 bytes). -EINVAL for STRING/ARRAY/unknown types.
 */
int gguf_writer_add_scalar(struct gguf_writer *w, const char *key,
		      enum gguf_vtype vtype, const void *val);

/* Arrays (n elements). */
int gguf_writer_add_str_arr(struct gguf_writer *w, const char *key,
		       const char *const *v, size_t n);
int gguf_writer_add_f32_arr(struct gguf_writer *w, const char *key,
		       const float *v, size_t n);
int gguf_writer_add_i32_arr(struct gguf_writer *w, const char *key,
		       const int32_t *v, size_t n);

/*
 * gguf_writer_copy_kv() - add a copy of a pair read by gguf_open() (any
 * type, arrays of any element type included), e.g. to carry a
 * vocabulary's tokenizer.* keys into a new model. -EINVAL for a key of 256
 * bytes or more or an unknown type.
 */
int gguf_writer_copy_kv(struct gguf_writer *w, const struct gguf_kv *kv);

/*
 * gguf_writer_add_tensor() - add a tensor with @n_dims (1..4) dimensions ne[]
 * (ne[0] innermost) of GGML type @type and @nbytes of raw data (copied).
 * @data may be NULL: @nbytes zero bytes are written. The tensor's offset
 * is the next aligned position in the data section.
 */
int gguf_writer_add_tensor(struct gguf_writer *w, const char *name,
		      uint32_t n_dims, const uint64_t *ne, uint32_t type,
		      const void *data, size_t nbytes);

/*
 * gguf_writer_add_tensor_hole() - like gguf_writer_add_tensor() but
 * without data: gguf_writer_write_file() leaves the @nbytes as a hole in a
 * sparse file (they read as zeros and take no disk space),
 * gguf_writer_to_mem() writes zeros. For shape-only models of real sizes
 * (planner tests).
 */
int gguf_writer_add_tensor_hole(struct gguf_writer *w, const char *name,
				uint32_t n_dims, const uint64_t *ne, uint32_t type,
				size_t nbytes);

/*
 * gguf_writer_add_tensor_raw() - like gguf_writer_add_tensor() but the tensor info
 * records @offset as given (it may be unaligned or out of range) and the
 * @nbytes of data are still placed at the next aligned position. For
 * corrupted test files.
 */
int gguf_writer_add_tensor_raw(struct gguf_writer *w, const char *name,
			  uint32_t n_dims, const uint64_t *ne, uint32_t type,
			  uint64_t offset, const void *data, size_t nbytes);

/*
 * gguf_writer_to_mem() - serialise. On success *buf (malloc'd, caller
 * frees) holds *len bytes and 0 is returned; otherwise a negative errno.
 */
int gguf_writer_to_mem(struct gguf_writer *w, uint8_t **buf, size_t *len);

/*
 * gguf_writer_write_file() - serialise into @path (created or truncated,
 * mode 0644), writing each tensor's data in place (no copy of the whole
 * file in memory; holes stay holes). Returns 0, or a negative errno with
 * "PATH: reason" in err; the file is removed on failure.
 */
int gguf_writer_write_file(struct gguf_writer *w, const char *path,
			   char *err, size_t errlen);

/*
 * Layout of the last serialisation (for targeted corruption in tests):
 * byte offsets in the file of kv pair i (its key length), of tensor info i
 * (its name length), of the data section, and of tensor i's data.
 * Return UINT64_MAX for out-of-range indices or before serialising.
 */
uint64_t gguf_writer_kv_offset(const struct gguf_writer *w, size_t i);
uint64_t gguf_writer_tensor_info_offset(const struct gguf_writer *w, size_t i);
uint64_t gguf_writer_data_offset(const struct gguf_writer *w);
uint64_t gguf_writer_tensor_data_offset(const struct gguf_writer *w, size_t i);

#endif
