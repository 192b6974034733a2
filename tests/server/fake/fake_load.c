// SPDX-License-Identifier: MIT
/*
 * build/tests/serve-fake: `rk1828-llm serve` with the scripted engine
 * (fake_engine.c) for host tests of the HTTP layer. The model file and
 * its tokenizer are real (templates and token counts are real); no cards.
 * RK1828_FAKE_TEMPLATE replaces the model's chat template by its text
 * (the markers chat.h recognises, e.g. "<|im_start|><think>" for a
 * reasoning chatml model), for tests of reasoning replies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "load.h"
#include "server.h"
#include "tokenizer.h"

void fake_engine_set_global(struct engine *e);

int srv_load(struct srv *s, char *err, size_t errlen)
{
	struct engine_opts eo = { .n_slots = s->o.n_slots ? s->o.n_slots : 4,
				  .n_ctx = s->o.n_ctx ? s->o.n_ctx : 512,
				  .queue_max = s->o.queue_max };
	const char *tmpl = getenv("RK1828_FAKE_TEMPLATE");
	struct gguf_str t;
	const char *base;

	srv_set_progress(s, 100, "reading the model");
	s->gf = gguf_open(s->o.model, err, errlen);
	if (!s->gf)
		return -1;
	s->tok = tok_load(s->gf, err, errlen);
	if (!s->tok)
		return -1;
	s->add_bos = tok_add_bos_default(s->tok);
	if (tmpl)
		chat_template_init(&s->ct, tmpl, strlen(tmpl), s->tok);
	else if (gguf_get_str(s->gf, "tokenizer.chat_template", &t))
		chat_template_init(&s->ct, t.s, t.len, s->tok);
	else
		chat_template_init(&s->ct, NULL, 0, s->tok);
	srv_set_progress(s, 500, "starting the scripted engine");
	usleep(300000);
	if (engine_create(&s->e, NULL, s->tok, NULL, NULL, 2, &eo, err, errlen))
		return -1;
	fake_engine_set_global(s->e);
	base = strrchr(s->o.model, '/');
	snprintf(s->model_id, sizeof(s->model_id), "%s", s->o.alias ? s->o.alias :
		 base ? base + 1 : s->o.model);
	snprintf(s->plan, sizeof(s->plan), "card0: blk 0-2, card1: blk 3-4 + output (scripted)");
	snprintf(s->cards_desc, sizeof(s->cards_desc), "card0,card1");
	s->n_cards = 2;
	s->card_ids[0] = 0;
	s->card_ids[1] = 1;
	s->n_slots = eo.n_slots;
	s->n_ctx = eo.n_ctx;
	/* What the cards would store: --kv-type, auto as if F32 fitted. */
	s->kv_type = s->o.kv_type == PLAN_KV_AUTO ? QUANT_TYPE_F32 : s->o.kv_type;
	srv_set_progress(s, 1000, "done");
	return 0;
}

void srv_unload(struct srv *s)
{
	if (s->e)
		engine_destroy(s->e);
	s->e = NULL;
	if (s->tok)
		tok_free(s->tok);
	if (s->gf)
		gguf_close(s->gf);
}

int main(int argc, char **argv)
{
	return serve_main(argc, argv);
}
