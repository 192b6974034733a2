/* SPDX-License-Identifier: MIT */
/*
 * Private chat-template fallback used until the tokenizer layer's
 * renderer (userspace/llm, helper "bpe") lands: recognises the chatml,
 * llama-3 and llama-2 families of tokenizer.chat_template by their
 * markers; anything else (or no template, e.g. stories260K) gets the plain
 * rendering: the message contents in order, one per line.
 */
#ifndef RK_SERVER_TMPL_FALLBACK_H
#define RK_SERVER_TMPL_FALLBACK_H

#include "api.h"

/*
 * tmpl_render() - the prompt text for @msgs; a trailing assistant message
 * is left open (prefill), otherwise the assistant header is appended.
 * Returns a malloc'ed string, NULL when out of memory.
 */
char *tmpl_render(const char *tmpl, const struct api_msg *msgs, int n);

#endif
