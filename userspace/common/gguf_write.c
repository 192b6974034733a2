// SPDX-License-Identifier: MIT
/*
 * Small GGUF v3 writer (see gguf_write.h). Layout per ggml docs/gguf.md.
 * Each kv pair is encoded into a byte blob when added; serialisation
 * concatenates header, blobs, tensor infos, padding and aligned data.
 */
#include "gguf_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Growable byte buffer. */
struct bbuf {
	uint8_t *p;
	size_t len, cap;
};

struct wtensor {
	char *name;
	uint32_t n_dims;
	uint64_t ne[4];
	uint32_t type;
	bool raw_offset;
	uint64_t offset;	/* when raw_offset */
	uint8_t *data;		/* NULL for a hole */
	size_t nbytes;
};

struct gguf_writer {
	uint32_t version;
	uint32_t align;
	int error;		/* first error (negative errno) or 0 */
	struct bbuf *kvs;
	size_t n_kv, cap_kv;
	struct wtensor *tensors;
	size_t n_tensors, cap_tensors;
	/* layout of the last serialisation */
	bool laid_out;
	uint64_t *kv_off;
	uint64_t *ti_off;
	uint64_t *td_off;
	uint64_t data_off;
};

static int bb_put(struct bbuf *b, const void *src, size_t n)
{
	if (n > SIZE_MAX - b->len)
		return -ENOMEM;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		uint8_t *np;

		while (cap < b->len + n) {
			if (cap > SIZE_MAX / 2)
				return -ENOMEM;
			cap *= 2;
		}
		np = realloc(b->p, cap);
		if (!np)
			return -ENOMEM;
		b->p = np;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, src, n);
	b->len += n;
	return 0;
}

static int bb_u32(struct bbuf *b, uint32_t v)
{
	return bb_put(b, &v, 4);
}

static int bb_u64(struct bbuf *b, uint64_t v)
{
	return bb_put(b, &v, 8);
}

static int bb_str(struct bbuf *b, const char *s, size_t len)
{
	int r = bb_u64(b, len);

	return r ? r : bb_put(b, s, len);
}

struct gguf_writer *gguf_writer_new(void)
{
	struct gguf_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->version = 3;
	w->align = 32;
	return w;
}

static void clear_layout(struct gguf_writer *w)
{
	free(w->kv_off);
	free(w->ti_off);
	free(w->td_off);
	w->kv_off = w->ti_off = w->td_off = NULL;
	w->laid_out = false;
}

void gguf_writer_free(struct gguf_writer *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->n_kv; i++)
		free(w->kvs[i].p);
	free(w->kvs);
	for (i = 0; i < w->n_tensors; i++) {
		free(w->tensors[i].name);
		free(w->tensors[i].data);
	}
	free(w->tensors);
	clear_layout(w);
	free(w);
}

void gguf_writer_set_version(struct gguf_writer *w, uint32_t version)
{
	w->version = version;
}

static int set_err(struct gguf_writer *w, int r)
{
	if (r && !w->error)
		w->error = r;
	return r;
}

/* Start a new kv blob with key and type; returns it or NULL. */
static struct bbuf *kv_begin(struct gguf_writer *w, const char *key,
			     uint32_t type)
{
	struct bbuf *b;

	if (!key) {
		set_err(w, -EINVAL);
		return NULL;
	}
	if (w->n_kv == w->cap_kv) {
		size_t cap = w->cap_kv ? 2 * w->cap_kv : 16;
		struct bbuf *nk = realloc(w->kvs, cap * sizeof(*nk));

		if (!nk) {
			set_err(w, -ENOMEM);
			return NULL;
		}
		w->kvs = nk;
		w->cap_kv = cap;
	}
	b = &w->kvs[w->n_kv];
	memset(b, 0, sizeof(*b));
	if (bb_str(b, key, strlen(key)) || bb_u32(b, type)) {
		free(b->p);
		set_err(w, -ENOMEM);
		return NULL;
	}
	return b;
}

/* Finish the blob started by kv_begin(): keep it when r == 0. */
static int kv_end(struct gguf_writer *w, struct bbuf *b, int r)
{
	if (r) {
		free(b->p);
		return set_err(w, r);
	}
	w->n_kv++;
	clear_layout(w);
	return 0;
}

int gguf_writer_add_scalar(struct gguf_writer *w, const char *key,
		      enum gguf_vtype vtype, const void *val)
{
	size_t sz = gguf_vtype_size(vtype);
	struct bbuf *b;

	if (!sz || !val)
		return set_err(w, -EINVAL);
	b = kv_begin(w, key, vtype);
	if (!b)
		return w->error;
	return kv_end(w, b, bb_put(b, val, sz));
}

int gguf_writer_add_u32(struct gguf_writer *w, const char *key, uint32_t v)
{
	return gguf_writer_add_scalar(w, key, GGUF_VT_U32, &v);
}

int gguf_writer_add_i32(struct gguf_writer *w, const char *key, int32_t v)
{
	return gguf_writer_add_scalar(w, key, GGUF_VT_I32, &v);
}

int gguf_writer_add_f32(struct gguf_writer *w, const char *key, float v)
{
	return gguf_writer_add_scalar(w, key, GGUF_VT_F32, &v);
}

int gguf_writer_add_bool(struct gguf_writer *w, const char *key, bool v)
{
	uint8_t u = v ? 1 : 0;

	return gguf_writer_add_scalar(w, key, GGUF_VT_BOOL, &u);
}

int gguf_writer_add_strn(struct gguf_writer *w, const char *key, const char *v,
		    size_t len)
{
	struct bbuf *b;

	if (!v && len)
		return set_err(w, -EINVAL);
	b = kv_begin(w, key, GGUF_VT_STRING);
	if (!b)
		return w->error;
	return kv_end(w, b, bb_str(b, v, len));
}

int gguf_writer_add_str(struct gguf_writer *w, const char *key, const char *v)
{
	if (!v)
		return set_err(w, -EINVAL);
	return gguf_writer_add_strn(w, key, v, strlen(v));
}

static int add_arr(struct gguf_writer *w, const char *key,
		   enum gguf_vtype et, const void *v, size_t n)
{
	size_t esz = gguf_vtype_size(et);
	struct bbuf *b;
	int r;

	if (!v && n)
		return set_err(w, -EINVAL);
	if (n && esz > SIZE_MAX / n)
		return set_err(w, -ENOMEM);
	b = kv_begin(w, key, GGUF_VT_ARRAY);
	if (!b)
		return w->error;
	r = bb_u32(b, et);
	if (!r)
		r = bb_u64(b, n);
	if (!r)
		r = bb_put(b, v, n * esz);
	return kv_end(w, b, r);
}

int gguf_writer_add_f32_arr(struct gguf_writer *w, const char *key,
		       const float *v, size_t n)
{
	return add_arr(w, key, GGUF_VT_F32, v, n);
}

int gguf_writer_add_i32_arr(struct gguf_writer *w, const char *key,
		       const int32_t *v, size_t n)
{
	return add_arr(w, key, GGUF_VT_I32, v, n);
}

int gguf_writer_add_str_arr(struct gguf_writer *w, const char *key,
		       const char *const *v, size_t n)
{
	struct bbuf *b;
	size_t i;
	int r;

	if (!v && n)
		return set_err(w, -EINVAL);
	for (i = 0; i < n; i++)
		if (!v[i])
			return set_err(w, -EINVAL);
	b = kv_begin(w, key, GGUF_VT_ARRAY);
	if (!b)
		return w->error;
	r = bb_u32(b, GGUF_VT_STRING);
	if (!r)
		r = bb_u64(b, n);
	for (i = 0; !r && i < n; i++)
		r = bb_str(b, v[i], strlen(v[i]));
	return kv_end(w, b, r);
}

int gguf_writer_copy_kv(struct gguf_writer *w, const struct gguf_kv *kv)
{
	char key[256];
	struct bbuf *b;
	size_t esz, bytes = 0;
	uint64_t i;
	int r;

	if (!kv || kv->key.len >= sizeof(key))
		return set_err(w, -EINVAL);
	memcpy(key, kv->key.s, kv->key.len);
	key[kv->key.len] = '\0';
	switch (kv->type) {
	case GGUF_VT_STRING:
		return gguf_writer_add_strn(w, key, kv->v.str.s, kv->v.str.len);
	case GGUF_VT_ARRAY:
		break;
	case GGUF_VT_F32: {
		float f = (float)kv->v.f;

		return gguf_writer_add_scalar(w, key, kv->type, &f);
	}
	case GGUF_VT_F64:
		return gguf_writer_add_scalar(w, key, kv->type, &kv->v.f);
	default:
		/* Integers and bool: the low bytes of the widened value (LE). */
		if (!gguf_vtype_size(kv->type))
			return set_err(w, -EINVAL);
		return gguf_writer_add_scalar(w, key, kv->type, &kv->v.u);
	}
	/* Arrays: copy the encoded elements as they are in the file. */
	esz = gguf_vtype_size(kv->arr_type);
	if (kv->arr_type == GGUF_VT_STRING) {
		for (i = 0; i < kv->arr_n; i++) {
			uint64_t len;

			memcpy(&len, kv->arr_data + bytes, 8);
			bytes += 8 + len;
		}
	} else if (esz) {
		bytes = kv->arr_n * esz;
	} else {
		return set_err(w, -EINVAL);
	}
	b = kv_begin(w, key, GGUF_VT_ARRAY);
	if (!b)
		return w->error;
	r = bb_u32(b, kv->arr_type);
	if (!r)
		r = bb_u64(b, kv->arr_n);
	if (!r)
		r = bb_put(b, kv->arr_data, bytes);
	return kv_end(w, b, r);
}

int gguf_writer_set_alignment(struct gguf_writer *w, uint32_t align,
			      bool add_kv)
{
	w->align = align;
	clear_layout(w);
	if (add_kv)
		return gguf_writer_add_u32(w, "general.alignment", align);
	return 0;
}

static int add_tensor(struct gguf_writer *w, const char *name,
		      uint32_t n_dims, const uint64_t *ne, uint32_t type,
		      bool raw, uint64_t offset, const void *data,
		      size_t nbytes, bool hole)
{
	struct wtensor *t;
	uint32_t d;

	if (!name || !ne || n_dims > 4)
		return set_err(w, -EINVAL);
	if (w->n_tensors == w->cap_tensors) {
		size_t cap = w->cap_tensors ? 2 * w->cap_tensors : 16;
		struct wtensor *nt = realloc(w->tensors, cap * sizeof(*nt));

		if (!nt)
			return set_err(w, -ENOMEM);
		w->tensors = nt;
		w->cap_tensors = cap;
	}
	t = &w->tensors[w->n_tensors];
	memset(t, 0, sizeof(*t));
	t->name = strdup(name);
	t->data = hole ? NULL : malloc(nbytes ? nbytes : 1);
	if (!t->name || (!hole && !t->data)) {
		free(t->name);
		free(t->data);
		return set_err(w, -ENOMEM);
	}
	if (data && !hole)
		memcpy(t->data, data, nbytes);
	else if (!hole)
		memset(t->data, 0, nbytes);
	t->nbytes = nbytes;
	t->n_dims = n_dims;
	for (d = 0; d < n_dims; d++)
		t->ne[d] = ne[d];
	t->type = type;
	t->raw_offset = raw;
	t->offset = offset;
	w->n_tensors++;
	clear_layout(w);
	return 0;
}

int gguf_writer_add_tensor(struct gguf_writer *w, const char *name,
		      uint32_t n_dims, const uint64_t *ne, uint32_t type,
		      const void *data, size_t nbytes)
{
	return add_tensor(w, name, n_dims, ne, type, false, 0, data, nbytes, false);
}

int gguf_writer_add_tensor_hole(struct gguf_writer *w, const char *name,
			   uint32_t n_dims, const uint64_t *ne, uint32_t type,
			   size_t nbytes)
{
	return add_tensor(w, name, n_dims, ne, type, false, 0, NULL, nbytes, true);
}

int gguf_writer_add_tensor_raw(struct gguf_writer *w, const char *name,
			  uint32_t n_dims, const uint64_t *ne, uint32_t type,
			  uint64_t offset, const void *data, size_t nbytes)
{
	return add_tensor(w, name, n_dims, ne, type, true, offset, data,
			  nbytes, false);
}

static size_t pad_to(size_t pos, uint32_t align)
{
	if (align <= 1)
		return pos;
	return (pos + align - 1) / align * align;
}

/*
 * Serialise the header, the kv pairs and the tensor infos into @b and lay
 * out the data section: w->data_off and w->td_off[i] (absolute file
 * offsets of each tensor's data) are set, *@total is the file size.
 */
static int build_header(struct gguf_writer *w, struct bbuf *b, uint64_t *total)
{
	uint64_t *toff = NULL;
	size_t i;
	int r = w->error;
	uint64_t pos;

	if (r)
		return r;
	clear_layout(w);
	w->kv_off = calloc(w->n_kv + 1, sizeof(uint64_t));
	w->ti_off = calloc(w->n_tensors + 1, sizeof(uint64_t));
	w->td_off = calloc(w->n_tensors + 1, sizeof(uint64_t));
	toff = calloc(w->n_tensors + 1, sizeof(uint64_t));
	if (!w->kv_off || !w->ti_off || !w->td_off || !toff) {
		free(toff);
		clear_layout(w);
		return -ENOMEM;
	}
	/* Relative data offsets first. */
	pos = 0;
	for (i = 0; i < w->n_tensors; i++) {
		pos = pad_to(pos, w->align);
		toff[i] = pos;
		pos += w->tensors[i].nbytes;
	}

	r = bb_put(b, "GGUF", 4);
	if (!r)
		r = bb_u32(b, w->version);
	if (!r)
		r = bb_u64(b, w->n_tensors);
	if (!r)
		r = bb_u64(b, w->n_kv);
	for (i = 0; !r && i < w->n_kv; i++) {
		w->kv_off[i] = b->len;
		r = bb_put(b, w->kvs[i].p, w->kvs[i].len);
	}
	for (i = 0; !r && i < w->n_tensors; i++) {
		const struct wtensor *t = &w->tensors[i];
		uint32_t d;

		w->ti_off[i] = b->len;
		r = bb_str(b, t->name, strlen(t->name));
		if (!r)
			r = bb_u32(b, t->n_dims);
		for (d = 0; !r && d < t->n_dims; d++)
			r = bb_u64(b, t->ne[d]);
		if (!r)
			r = bb_u32(b, t->type);
		if (!r)
			r = bb_u64(b, t->raw_offset ? t->offset : toff[i]);
	}
	w->data_off = pad_to(b->len, w->align);
	*total = w->data_off;
	for (i = 0; i < w->n_tensors; i++) {
		w->td_off[i] = w->data_off + toff[i];
		*total = w->td_off[i] + w->tensors[i].nbytes;
	}
	free(toff);
	if (r) {
		free(b->p);
		b->p = NULL;
		clear_layout(w);
		return r;
	}
	w->laid_out = true;
	return 0;
}

int gguf_writer_to_mem(struct gguf_writer *w, uint8_t **buf, size_t *len)
{
	struct bbuf b = { 0 };
	uint64_t total;
	size_t i;
	int r;

	*buf = NULL;
	*len = 0;
	r = build_header(w, &b, &total);
	if (r)
		return r;
	for (i = 0; !r && i <= w->n_tensors; i++) {
		size_t want = i < w->n_tensors ? w->td_off[i] : total;
		static const uint8_t zeros[64];

		while (!r && b.len < want)
			r = bb_put(&b, zeros, want - b.len < sizeof(zeros) ?
					     want - b.len : sizeof(zeros));
		if (!r && i < w->n_tensors && w->tensors[i].data)
			r = bb_put(&b, w->tensors[i].data, w->tensors[i].nbytes);
	}
	if (r) {
		free(b.p);
		clear_layout(w);
		return r;
	}
	*buf = b.p ? b.p : malloc(1);
	*len = b.len;
	return *buf ? 0 : -ENOMEM;
}

static int write_all(int fd, const uint8_t *p, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int gguf_writer_write_file(struct gguf_writer *w, const char *path,
			   char *err, size_t errlen)
{
	struct bbuf b = { 0 };
	uint64_t total;
	size_t i;
	int fd, r;

	r = build_header(w, &b, &total);
	if (r) {
		snprintf(err, errlen, "%s: serialising: %s", path, strerror(-r));
		return r;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: open: %s", path, strerror(errno));
		free(b.p);
		return r;
	}
	r = write_all(fd, b.p, b.len, 0);
	for (i = 0; !r && i < w->n_tensors; i++)
		if (w->tensors[i].data)
			r = write_all(fd, w->tensors[i].data, w->tensors[i].nbytes,
				      w->td_off[i]);
	/* Padding and holes read as zeros; the size covers the last tensor. */
	if (!r && ftruncate(fd, (off_t)total) < 0)
		r = -errno;
	if (r)
		snprintf(err, errlen, "%s: write: %s", path, strerror(-r));
	if (close(fd) < 0 && !r) {
		r = -errno;
		snprintf(err, errlen, "%s: close: %s", path, strerror(-r));
	}
	free(b.p);
	if (r)
		unlink(path);
	return r;
}

uint64_t gguf_writer_kv_offset(const struct gguf_writer *w, size_t i)
{
	return w->laid_out && i < w->n_kv ? w->kv_off[i] : UINT64_MAX;
}

uint64_t gguf_writer_tensor_info_offset(const struct gguf_writer *w, size_t i)
{
	return w->laid_out && i < w->n_tensors ? w->ti_off[i] : UINT64_MAX;
}

uint64_t gguf_writer_data_offset(const struct gguf_writer *w)
{
	return w->laid_out ? w->data_off : UINT64_MAX;
}

uint64_t gguf_writer_tensor_data_offset(const struct gguf_writer *w, size_t i)
{
	return w->laid_out && i < w->n_tensors ? w->td_off[i] : UINT64_MAX;
}
