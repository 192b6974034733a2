// SPDX-License-Identifier: MIT
/*
 * The `mtp` drafter of speculative decoding (spec.h, --spec mtp): the
 * model's own multi-token-prediction block (Qwen3.5's nextn block, the
 * <arch>.nextn_predict_layers trailing blocks of the GGUF that the card
 * pipeline skips), run on the host CPU by the project's scalar reference
 * kernels (ref_mtp(), userspace/llm/ref_forward.h). This is the host
 * version: the block runs after the last card has returned the logits and
 * the final hidden state of the session's last token
 * (pipe_opts.hidden, RK1828_PROG_F_HIDDEN), not on the card.
 *
 * Draft i (i = 0, 1, ...) at position p0 + i, p0 = n_hist - 1 the
 * position of the token about to be submitted: the block takes the token
 * there (that token, then the previous draft) and a hidden state (the
 * model's at p0 - 1, then the block's own output of the step before, as
 * vLLM chains its one Qwen3-Next MTP layer) and its LM head gives the
 * next token greedily. The block attends over its own K/V rows: a row is
 * kept while the token it was computed for is still the history's at that
 * position (ref_model.mtp_valid), so rows of rejected drafts are left out;
 * positions it never saw (the prompt, whose hidden states the cards do
 * not return) have no row. Drafts only change speed: the verify pass
 * keeps the output the model's own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ref_forward.h"
#include "spec.h"
#include "rk1828/util.h"

struct spec_mtp {
	struct ref_model *m;
	int32_t *toks;		/* the token each valid K/V row was computed for */
	unsigned char *valid;	/* ref_model.mtp_valid */
	float *h, *h_next, *logits;
	int n_ctx;
};

static int32_t argmax(const float *x, int n)
{
	int i, best = 0;

	for (i = 1; i < n; i++)
		if (x[i] > x[best])
			best = i;
	return best;
}

static int mtp_draft(struct spec_drafter *d, const int32_t *hist, int n_hist, int n_max,
		     const float *hidden, int32_t *out)
{
	struct spec_mtp *s = d->priv;
	int dim = s->m->c.dim, p0 = n_hist - 1, p, k;
	int32_t tok;
	float *t;

	if (!hidden || n_hist < 1 || n_max < 1)
		return 0;
	/* Rows whose token is no longer the history's are stale (rejected drafts). */
	for (p = 0; p < p0 && p < s->n_ctx; p++)
		if (s->valid[p] && s->toks[p] != hist[p])
			s->valid[p] = 0;
	memcpy(s->h, hidden, sizeof(float) * (size_t)dim);
	tok = hist[p0];
	for (k = 0; k < n_max && p0 + k < s->n_ctx; k++) {
		p = p0 + k;
		s->valid[p] = 0;
		if (ref_mtp(s->m, tok, s->h, p, s->logits, s->h_next))
			break;
		s->valid[p] = 1;
		s->toks[p] = tok;
		tok = argmax(s->logits, s->m->c.n_vocab);
		out[k] = tok;
		t = s->h;
		s->h = s->h_next;
		s->h_next = t;
	}
	return k;
}

static void mtp_close(struct spec_drafter *d)
{
	struct spec_mtp *s = d->priv;

	if (!s)
		return;
	ref_free(s->m);
	free(s->toks);
	free(s->valid);
	free(s->h);
	free(s->h_next);
	free(s->logits);
	free(s);
	d->priv = NULL;
}

int spec_mtp_open(struct spec_drafter *d, const char *path, int n_ctx, char *err, size_t errlen)
{
	struct spec_mtp *s;
	int ret = 0;

	memset(d, 0, sizeof(*d));
	s = calloc(1, sizeof(*s));
	if (!s)
		return util_err(err, errlen, -ENOMEM, "out of memory");
	d->kind = SPEC_MTP;
	d->draft = mtp_draft;
	d->close = mtp_close;
	d->wants_hidden = true;
	d->priv = s;
	s->m = ref_load(path, n_ctx, err, errlen);
	if (!s->m) {
		mtp_close(d);
		return -EINVAL;
	}
	if (!s->m->c.n_mtp) {
		ret = util_err(err, errlen, -EINVAL, "--spec mtp: %s has no multi-token-prediction "
			       "block (%s.nextn_predict_layers)", path, s->m->c.arch);
		goto out;
	}
	s->n_ctx = s->m->c.n_ctx;
	s->toks = calloc((size_t)s->n_ctx, sizeof(*s->toks));
	s->valid = calloc((size_t)s->n_ctx, 1);
	s->h = calloc((size_t)s->m->c.dim, sizeof(float));
	s->h_next = calloc((size_t)s->m->c.dim, sizeof(float));
	s->logits = calloc((size_t)s->m->c.n_vocab, sizeof(float));
	if (!s->toks || !s->valid || !s->h || !s->h_next || !s->logits)
		ret = util_err(err, errlen, -ENOMEM, "out of memory");
	s->m->mtp_valid = s->valid;
out:
	if (ret)
		mtp_close(d);
	return ret;
}
