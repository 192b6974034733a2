// SPDX-License-Identifier: MIT
/*
 * Reference vector files: see refvec.h and tests/vectors/qwen/FORMAT.md.
 */
#include "refvec.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rv_parse {
	const char *path;
	int line;
	char *err;
	size_t errlen;
};

static int perr(struct rv_parse *p, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->err && p->errlen)
		snprintf(p->err, p->errlen, "%s:%d: %s", p->path, p->line, msg);
	return -1;
}

/* Parse the integers after the tag: *out (malloc'd), *n. */
static int parse_ids(struct rv_parse *p, char *s, int32_t **out, int *n)
{
	int cap = 16, k = 0;
	int32_t *v = malloc(sizeof(*v) * cap);
	char *end;

	if (!v)
		return perr(p, "out of memory");
	for (;;) {
		long x;

		while (*s == ' ')
			s++;
		if (!*s || *s == '\n')
			break;
		errno = 0;
		x = strtol(s, &end, 10);
		if (end == s || errno || x < 0 || x > INT32_MAX) {
			free(v);
			return perr(p, "bad token id");
		}
		if (k == cap) {
			int32_t *nv = realloc(v, sizeof(*v) * (cap *= 2));

			if (!nv) {
				free(v);
				return perr(p, "out of memory");
			}
			v = nv;
		}
		v[k++] = (int32_t)x;
		s = end;
	}
	*out = v;
	*n = k;
	return 0;
}

/* "logits WHERE ARGMAX MAXABS s0 ... s(n-1)" after the WHERE word. */
static int parse_logits(struct rv_parse *p, const struct refvec *rv, char *s,
			struct refvec_logits *l)
{
	char *end;
	int i;

	l->argmax = (int)strtol(s, &end, 10);
	if (end == s || l->argmax < 0 || l->argmax >= rv->n_vocab)
		return perr(p, "bad argmax");
	s = end;
	l->maxabs = strtod(s, &end);
	if (end == s || !(l->maxabs >= 0))
		return perr(p, "bad max|logit|");
	s = end;
	free(l->samples);
	l->samples = malloc(sizeof(float) * (size_t)rv->n_samples);
	if (!l->samples)
		return perr(p, "out of memory");
	for (i = 0; i < rv->n_samples; i++) {
		l->samples[i] = strtof(s, &end);
		if (end == s)
			return perr(p, "%d samples, want %d", i, rv->n_samples);
		s = end;
	}
	return 0;
}

/* "top WHERE id:v ..." after the WHERE word. */
static int parse_top(struct rv_parse *p, const struct refvec *rv, char *s,
		     struct refvec_logits *l)
{
	char *end;

	l->n_top = 0;
	for (;;) {
		long id;

		while (*s == ' ')
			s++;
		if (!*s || *s == '\n')
			break;
		if (l->n_top == REFVEC_MAX_TOP)
			return perr(p, "more than %d top entries", REFVEC_MAX_TOP);
		id = strtol(s, &end, 10);
		if (end == s || *end != ':' || id < 0 || id >= rv->n_vocab)
			return perr(p, "bad top entry");
		s = end + 1;
		l->top_v[l->n_top] = strtof(s, &end);
		if (end == s)
			return perr(p, "bad top value");
		l->top_id[l->n_top++] = (int)id;
		s = end;
	}
	return l->n_top ? 0 : perr(p, "empty top list");
}

static void copy_word(char *dst, size_t n, const char *src)
{
	size_t len = strcspn(src, "\n");

	if (len >= n)
		len = n - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* One line "TAG rest": dispatch on the tag. */
static int parse_line(struct rv_parse *p, struct refvec *rv, char *line, int *cur)
{
	char *rest = strchr(line, ' ');
	struct refvec_case *c = *cur >= 0 ? &rv->cases[*cur] : NULL;
	int n;

	rest = rest ? rest + 1 : line + strlen(line);
	if (!strncmp(line, "format ", 7))
		return atoi(rest) == 1 ? 0 : perr(p, "unknown format %s", rest);
	if (!strncmp(line, "source ", 7)) {
		copy_word(rv->source, sizeof(rv->source), rest);
		return 0;
	}
	if (!strncmp(line, "model ", 6)) {
		copy_word(rv->model, sizeof(rv->model), rest);
		return 0;
	}
	if (!strncmp(line, "generator ", 10)) {
		copy_word(rv->generator, sizeof(rv->generator), rest);
		return 0;
	}
	if (!strncmp(line, "sha256 ", 7)) {
		copy_word(rv->sha256, sizeof(rv->sha256), rest);
		return 0;
	}
	if (!strncmp(line, "vocab_sha256 ", 13) || !strncmp(line, "end", 3))
		return 0;
	if (!strncmp(line, "n_vocab ", 8)) {
		rv->n_vocab = atoi(rest);
		return rv->n_vocab > 0 ? 0 : perr(p, "bad n_vocab");
	}
	if (!strncmp(line, "samples ", 8)) {
		rv->n_samples = atoi(rest);
		return rv->n_samples > 0 && rv->n_samples <= rv->n_vocab ? 0 :
		       perr(p, "bad samples (n_vocab first)");
	}
	if (!strncmp(line, "case ", 5)) {
		if (atoi(rest) != rv->n_cases || rv->n_cases == REFVEC_MAX_CASES)
			return perr(p, "cases out of order or too many");
		*cur = rv->n_cases++;
		return 0;
	}
	if (!strncmp(line, "forced_", 7) || !strncmp(line, "text_", 5)) {
		bool text = line[0] == 't', top = strstr(line, "_top1 ") == strchr(line, '_');
		int32_t *v, *dst = text ? (top ? rv->text_top1 : rv->text) :
				  (top ? rv->forced_top1 : rv->forced);

		if (parse_ids(p, rest, &v, &n))
			return -1;
		if (n != REFVEC_FORCED) {
			free(v);
			return perr(p, "%d forced tokens, want %d", n, REFVEC_FORCED);
		}
		memcpy(dst, v, sizeof(rv->forced));
		free(v);
		return 0;
	}
	if (!c)
		return perr(p, "'%.20s' before the first case", line);
	if (!strncmp(line, "prompt_ids ", 11))
		return parse_ids(p, rest, &c->prompt, &c->n_prompt);
	if (!strncmp(line, "gen_ids ", 8))
		return parse_ids(p, rest, &c->gen, &c->n_gen);
	if (!strncmp(line, "logits prompt ", 14))
		return parse_logits(p, rv, line + 14, &c->prompt_logits);
	if (!strncmp(line, "logits final ", 13))
		return parse_logits(p, rv, line + 13, &c->final_logits);
	if (!strncmp(line, "top prompt ", 11))
		return parse_top(p, rv, line + 11, &c->prompt_logits);
	if (!strncmp(line, "top final ", 10))
		return parse_top(p, rv, line + 10, &c->final_logits);
	return perr(p, "unknown line '%.20s'", line);
}

int refvec_load(const char *path, struct refvec *rv, char *err, size_t errlen)
{
	struct rv_parse p = { .path = path, .err = err, .errlen = errlen };
	char *line = NULL;
	size_t cap = 0;
	int cur = -1, rc = 0, i;
	FILE *f;

	memset(rv, 0, sizeof(*rv));
	f = fopen(path, "r");
	if (!f)
		return perr(&p, "%s", strerror(errno));
	while (!rc && getline(&line, &cap, f) > 0) {
		p.line++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		rc = parse_line(&p, rv, line, &cur);
	}
	free(line);
	fclose(f);
	if (!rc && (!rv->n_cases || !rv->sha256[0]))
		rc = perr(&p, "no cases or no sha256");
	for (i = 0; !rc && i < rv->n_cases; i++) {
		struct refvec_case *c = &rv->cases[i];

		if (!c->n_prompt || !c->n_gen || !c->prompt_logits.samples ||
		    !c->final_logits.samples || !c->prompt_logits.n_top || !c->final_logits.n_top)
			rc = perr(&p, "case %d is incomplete", i);
	}
	if (rc)
		refvec_free(rv);
	return rc;
}

void refvec_free(struct refvec *rv)
{
	int i;

	for (i = 0; i < REFVEC_MAX_CASES; i++) {
		free(rv->cases[i].prompt);
		free(rv->cases[i].gen);
		free(rv->cases[i].prompt_logits.samples);
		free(rv->cases[i].final_logits.samples);
	}
	memset(rv, 0, sizeof(*rv));
}

int refvec_sample_id(const struct refvec *rv, int i)
{
	return (int)((long long)i * rv->n_vocab / rv->n_samples);
}

static double worse(double m, double d)
{
	return isnan(d) ? INFINITY : (d > m ? d : m);
}

double refvec_rel_diff(const struct refvec *rv, const struct refvec_logits *ref,
		       const float *logits)
{
	double m = 0.0;
	int i;

	for (i = 0; i < rv->n_samples; i++)
		m = worse(m, fabs((double)logits[refvec_sample_id(rv, i)] - ref->samples[i]));
	for (i = 0; i < ref->n_top; i++)
		m = worse(m, fabs((double)logits[ref->top_id[i]] - ref->top_v[i]));
	return ref->maxabs > 0 ? m / ref->maxabs : m;
}

static double maxabs(const float *v, size_t n)
{
	double m = 0.0;
	size_t i;

	for (i = 0; i < n; i++)
		if (fabs(v[i]) > m)
			m = fabs(v[i]);
	return m;
}

double refvec_rel_diff_to(const struct refvec *rv, const struct refvec_logits *ref,
			  const float *other)
{
	double m = 0.0, den = maxabs(other, (size_t)rv->n_vocab);
	int i;

	for (i = 0; i < rv->n_samples; i++)
		m = worse(m, fabs((double)ref->samples[i] - other[refvec_sample_id(rv, i)]));
	for (i = 0; i < ref->n_top; i++)
		m = worse(m, fabs((double)ref->top_v[i] - other[ref->top_id[i]]));
	return den > 0 ? m / den : m;
}

double refvec_rel_diff_full(const float *a, const float *b, size_t n)
{
	double m = 0.0, den = maxabs(b, n);
	size_t i;

	for (i = 0; i < n; i++)
		m = worse(m, fabs((double)a[i] - b[i]));
	return den > 0 ? m / den : m;
}

double refvec_rel_diff_sampled(const struct refvec *rv, const struct refvec_logits *ref,
			       const float *a, const float *b)
{
	double m = 0.0, den = maxabs(b, (size_t)rv->n_vocab);
	int i;

	for (i = 0; i < rv->n_samples; i++) {
		int id = refvec_sample_id(rv, i);

		m = worse(m, fabs((double)a[id] - b[id]));
	}
	for (i = 0; i < ref->n_top; i++)
		m = worse(m, fabs((double)a[ref->top_id[i]] - b[ref->top_id[i]]));
	return den > 0 ? m / den : m;
}

int refvec_argmax(const float *v, size_t n)
{
	size_t i, best = 0;

	for (i = 1; i < n; i++)
		if (v[i] > v[best])
			best = i;
	return (int)best;
}
