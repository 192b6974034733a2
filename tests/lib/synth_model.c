// SPDX-License-Identifier: MIT
/*
 * The synthetic-model writer's entry points (synth_model.h): the keys,
 * the tokenizer, then the tensors, into one GGUF file.
 */
#include "synth_model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf_write.h"
#include "synth_int.h"

void synth_fail(struct synth *y, const char *fmt, ...)
{
	va_list ap;

	if (y->failed++ || !y->err || !y->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(y->err, y->errlen, fmt, ap);
	va_end(ap);
}

bool synth_is_hybrid(const struct synth_model *s)
{
	return !strcmp(s->arch, "qwen35");
}

/* The embedding copy a SYNTH_NEAR_EMBD head draws on, when it has values. */
static void keep_embd(struct synth *y)
{
	const struct synth_model *s = y->s;

	if (s->tied || s->shape_only || s->fill != SYNTH_RANDOM ||
	    s->t[SYNTH_OUTPUT].dist != SYNTH_NEAR_EMBD)
		return;
	y->embd_n = (size_t)s->dim * y->n_vocab;
	y->embd = malloc(y->embd_n * sizeof(*y->embd));
	if (!y->embd)
		synth_fail(y, "embedding copy: out of memory");
}

int synth_model_write(const struct synth_model *s, const char *path, char *err,
		      size_t errlen)
{
	struct synth y = {
		.s = s, .n_vocab = s->n_vocab,
		.rng = s->seed ? s->seed : 0x9e3779b97f4a7c15ULL,
		.err = err, .errlen = errlen,
	};

	if (err && errlen)
		err[0] = '\0';
	if (!s->n_heads || !s->dim) {
		synth_fail(&y, "synthetic model needs dim and n_heads");
		return -1;
	}
	y.w = gguf_writer_new();
	if (!y.w) {
		synth_fail(&y, "out of memory");
		return -1;
	}
	synth_add_meta(&y);
	synth_add_vocab(&y);
	if (!y.failed)
		keep_embd(&y);
	synth_add_tensors(&y);
	free(y.embd);
	if (!y.failed && gguf_writer_write_file(y.w, path, err, errlen) < 0)
		y.failed = 1;
	gguf_writer_free(y.w);
	return y.failed ? -1 : 0;
}

int synth_model_tmp(const struct synth_model *s, char *path, char *err, size_t errlen)
{
	int fd;

	strcpy(path, "/tmp/rk1828-synth-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0) {
		if (err && errlen)
			snprintf(err, errlen, "mkstemp: %s", strerror(errno));
		return -1;
	}
	close(fd);
	if (synth_model_write(s, path, err, errlen)) {
		unlink(path);
		return -1;
	}
	return 0;
}
