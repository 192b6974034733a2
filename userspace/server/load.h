/* SPDX-License-Identifier: MIT */
/*
 * Loading the model (load.c; tests/server/fake/fake_load.c for the
 * scripted engine): the model file, tokenizer, chat template, cards and
 * engine into a struct srv, progress through srv_set_progress().
 */
#ifndef RK_SERVER_LOAD_H
#define RK_SERVER_LOAD_H

#include <stddef.h>

#include "srv.h"

/**
 * srv_load() - open s->o.model, plan it over s->o.cards and start the engine
 * @s: the server; on success s->gf, s->tok, s->ct, s->e, s->plan and the
 *	sizes (n_cards, n_ctx, n_slots) are set
 * @err, @errlen: why it failed
 *
 * Runs on the loader thread while the HTTP layer answers 503 loading.
 * Return: 0, or -1 with @err.
 */
int srv_load(struct srv *s, char *err, size_t errlen);

/** srv_unload() - stop the engine and free what srv_load() opened (idempotent). */
void srv_unload(struct srv *s);

#endif
