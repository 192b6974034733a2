// SPDX-License-Identifier: MIT
/*
 * Loading for `rk1828-llm serve`: the GGUF file, its tokenizer and chat
 * template, the cards named by --cards, and the engine (which plans the
 * segments and uploads the weights, reporting progress). The server keeps
 * only read-only handles; every session lives in the engine.
 */
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "gguf.h"
#include "model.h"
#include "rk1828.h"
#include "load.h"
#include "tokenizer.h"

/**
 * struct srv_load_state - what srv_load() opened (freed by srv_unload())
 * @m: the model
 * @cards, @n_all: every card opened
 */
static struct {
	struct llm_model m;
	bool have_m;
	struct rk_card *cards;
	int n_all;
} L;

static void on_progress(void *user, uint64_t done, uint64_t total)
{
	srv_set_progress(user, 200 + (int)(total ? 800 * done / total : 0),
			 "uploading the weights to the cards");
}

int srv_load(struct srv *s, char *err, size_t errlen)
{
	struct engine_opts eo = {
		.n_slots = s->o.n_slots, .n_ctx = s->o.n_ctx, .bucket = s->o.bucket,
		.kv_type = s->o.kv_type,
		.spec = (enum spec_kind)s->o.spec, .draft_max = s->o.draft_max,
		.draft_min = s->o.draft_min, .draft_model = s->o.draft_model,
		.split = (enum plan_split)s->o.split,
		.queue_max = s->o.queue_max ? s->o.queue_max : -1, .verbose = s->o.verbose,
		.progress = on_progress, .progress_user = s,
	};
	int idx[PLAN_MAX_CARDS], n_idx, i, ret;
	struct engine_info info;
	struct gguf_str t;
	char e2[768];
	const char *base;

	srv_set_progress(s, 0, "reading the model file");
	s->gf = gguf_open(s->o.model, err, errlen);
	if (!s->gf)
		return -1;
	if (llm_model_load(&L.m, s->gf, e2, sizeof(e2))) {
		snprintf(err, errlen, "%s", e2);
		return -1;
	}
	L.have_m = true;
	if (llm_ctx_warning(&L.m, s->o.n_ctx, e2, sizeof(e2)))
		fprintf(stderr, "rk1828-llm: warning: %s\n", e2);
	s->tok = tok_load(s->gf, err, errlen);
	if (!s->tok)
		return -1;
	s->add_bos = tok_add_bos_default(s->tok);
	if (s->o.chat_template)
		chat_template_init(&s->ct, s->o.chat_template, strlen(s->o.chat_template), s->tok);
	else if (gguf_get_str(s->gf, "tokenizer.chat_template", &t))
		chat_template_init(&s->ct, t.s, t.len, s->tok);
	else
		chat_template_init(&s->ct, NULL, 0, s->tok);
	if (s->ct.fallback)
		fprintf(stderr, "rk1828-llm: warning: %s: chat template not recognised; chats are rendered as chatml\n",
			s->o.model);
	srv_set_progress(s, 100, "opening the cards");
	if (rk_open_all(&L.cards, &L.n_all)) {
		snprintf(err, errlen, "%s", rk_error());
		return -1;
	}
	if (cards_spec_select(&s->o.cs, L.n_all, idx, &n_idx, err, errlen))
		return -1;
	srv_set_progress(s, 200, "planning the segments");
	ret = engine_create(&s->e, &L.m, s->tok, L.cards, idx, n_idx, &eo, e2, sizeof(e2));
	if (ret) {
		snprintf(err, errlen, "%s: %s", s->o.model, e2);
		return -1;
	}
	engine_get_info(s->e, &info);
	if (info.note[0])
		fprintf(stderr, "rk1828-llm: note: %s\n", info.note);
	base = strrchr(s->o.model, '/');
	snprintf(s->model_id, sizeof(s->model_id), "%s", s->o.alias ? s->o.alias :
		 base ? base + 1 : s->o.model);
	snprintf(s->plan, sizeof(s->plan), "%s", info.plan);
	s->cards_desc[0] = 0;
	for (i = 0; i < info.n_cards && i < n_idx; i++) {
		size_t l = strlen(s->cards_desc);

		snprintf(s->cards_desc + l, sizeof(s->cards_desc) - l, "%scard%d", i ? "," : "",
			 idx[i]);
		s->card_ids[i] = idx[i];
	}
	s->n_cards = info.n_cards;
	s->n_slots = info.n_slots;
	s->n_ctx = info.n_ctx;
	s->kv_type = info.kv_type;
	s->o.queue_max = info.queue_max;
	srv_set_progress(s, 1000, "done");
	return 0;
}

void srv_unload(struct srv *s)
{
	engine_destroy(s->e);
	s->e = NULL;
	if (L.cards)
		rk_close_all(L.cards, L.n_all);
	L.cards = NULL;
	if (L.have_m)
		llm_model_free(&L.m);
	L.have_m = false;
	if (s->tok)
		tok_free(s->tok);
	s->tok = NULL;
	if (s->gf)
		gguf_close(s->gf);
	s->gf = NULL;
}
