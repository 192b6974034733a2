// SPDX-License-Identifier: MIT
/*
 * The `draft` drafter of speculative decoding (spec.h, --spec draft
 * --draft-model FILE): a small GGUF model with the target's vocabulary,
 * run on the host CPU by the project's scalar reference forward pass
 * (userspace/llm/ref_forward.h, the numeric reference the card kernels
 * are tested against), proposes its greedy continuation of the history.
 *
 * The draft model keeps one KV cache and the tokens it holds. Each call
 * keeps the longest common prefix of those tokens and the history (the
 * K/V rows past it are simply overwritten: a token at position p attends
 * to rows 0..p only), evaluates the rest of the history, then drafts
 * token by token. A hybrid (qwen35) draft model is refused: its recurrent
 * state cannot be cut back to the common prefix on the host (the target
 * may be hybrid). One engine thread calls it; sessions
 * that take turns share the cache (the prefix check makes that correct,
 * only slower).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_forward.h"
#include "spec.h"
#include "tokenizer.h"
#include "rk1828/util.h"

struct spec_draft {
	struct ref_model *m;
	int32_t *toks;		/* the tokens whose K/V (and state) the model holds */
	int n, n_ctx;
	float *logits;
};

static int32_t argmax(const float *x, int n)
{
	int i, best = 0;

	for (i = 1; i < n; i++)
		if (x[i] > x[best])
			best = i;
	return best;
}

/* Evaluate @tok at the next position; logits when @out. 0, or -1. */
static int feed(struct spec_draft *s, int32_t tok, bool out)
{
	if (s->n >= s->n_ctx || ref_forward(s->m, tok, s->n, out ? s->logits : NULL))
		return -1;
	s->toks[s->n++] = tok;
	return 0;
}

static int draft_draft(struct spec_drafter *d, const int32_t *hist, int n_hist, int n_max,
		       const float *hidden, int32_t *out)
{
	struct spec_draft *s = d->priv;
	int keep = 0, i, k;

	(void)hidden;
	if (n_hist < 1 || n_max < 1 || n_hist + n_max > s->n_ctx)
		return 0;
	while (keep < s->n && keep < n_hist - 1 && s->toks[keep] == hist[keep])
		keep++;
	s->n = keep;
	for (i = keep; i < n_hist; i++)
		if (feed(s, hist[i], i == n_hist - 1))
			return 0;
	for (k = 0; k < n_max; k++) {
		out[k] = argmax(s->logits, s->m->c.n_vocab);
		if (k + 1 < n_max && feed(s, out[k], true))
			return k + 1;
	}
	return k;
}

/* Same vocabulary: the count and every token's text. */
static int same_vocab(const struct tokenizer *a, const char *pa, const struct tokenizer *b,
		      const char *pb, char *err, size_t errlen)
{
	int n = tok_n_vocab(a), i;

	if (tok_n_vocab(b) != n)
		return util_err(err, errlen, -EINVAL,
				"--draft-model %s: its vocabulary has %d tokens, the model %s has %d: "
				"a draft model needs the same vocabulary", pb, tok_n_vocab(b), pa, n);
	for (i = 0; i < n; i++) {
		size_t la, lb;
		const char *ta = tok_text(a, i, &la), *tb = tok_text(b, i, &lb);

		if (la != lb || (la && memcmp(ta, tb, la)))
			return util_err(err, errlen, -EINVAL,
					"--draft-model %s: token %d is \"%.*s\" there but \"%.*s\" in the model %s: "
					"a draft model needs the same vocabulary", pb, i, (int)lb, tb ? tb : "",
					(int)la, ta ? ta : "", pa);
	}
	return 0;
}

void spec_draft_close(struct spec_drafter *d)
{
	struct spec_draft *s = d->priv;

	if (!s)
		return;
	ref_free(s->m);
	free(s->toks);
	free(s->logits);
	free(s);
	d->priv = NULL;
}

int spec_draft_open(struct spec_drafter *d, const char *path, const struct tokenizer *target,
		    const char *target_path, int n_ctx, char *err, size_t errlen)
{
	struct spec_draft *s;
	struct tokenizer *tk;
	int ret;

	memset(d, 0, sizeof(*d));
	if (!path)
		return util_err(err, errlen, -EINVAL, "--spec draft needs --draft-model FILE");
	s = calloc(1, sizeof(*s));
	if (!s)
		return util_err(err, errlen, -ENOMEM, "out of memory");
	d->kind = SPEC_DRAFT;
	d->draft = draft_draft;
	d->close = spec_draft_close;
	d->priv = s;
	s->m = ref_load(path, n_ctx, err, errlen);
	if (!s->m) {
		spec_draft_close(d);
		return -EINVAL;
	}
	tk = tok_load(s->m->file, err, errlen);
	if (!tk) {
		spec_draft_close(d);
		return -EINVAL;
	}
	ret = same_vocab(target, target_path, tk, path, err, errlen);
	tok_free(tk);
	if (!ret && s->m->c.n_vocab != tok_n_vocab(target))
		ret = util_err(err, errlen, -EINVAL,
			       "--draft-model %s: its output head has %d rows, the vocabulary %d",
			       path, s->m->c.n_vocab, tok_n_vocab(target));
	if (!ret && s->m->c.hybrid)
		ret = util_err(err, errlen, -EINVAL, "--draft-model %s: a hybrid (%s) draft model "
			       "is not supported: its recurrent state cannot be rolled back on the "
			       "host", path, s->m->c.arch);
	s->n_ctx = s->m->c.n_ctx;
	s->toks = calloc((size_t)s->n_ctx, sizeof(*s->toks));
	s->logits = calloc((size_t)s->m->c.n_vocab, sizeof(*s->logits));
	if (!ret && (!s->toks || !s->logits))
		ret = util_err(err, errlen, -ENOMEM, "out of memory");
	if (ret)
		spec_draft_close(d);
	return ret;
}
