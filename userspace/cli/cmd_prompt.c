// SPDX-License-Identifier: MIT
/*
 * The prompt of rk1828-llm run and chat: plain text or a conversation
 * through the model's chat template (chat.h), tokenized with the
 * vocabulary's BOS/EOS rule (tokenizer.ggml.add_bos_token/add_eos_token,
 * --no-bos to drop BOS) and special tokens only from the template unless
 * --parse-special.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gguf.h"

void cli_template(const struct gguf_file *gf, const struct tokenizer *tok,
		  struct chat_template *ct, bool warn)
{
	struct gguf_str s = { 0 };

	if (!gguf_get_str(gf, "tokenizer.chat_template", &s))
		s.len = 0;
	chat_template_init(ct, s.s, s.len, tok);
	if (warn && ct->fallback)
		fprintf(stderr, "rk1828-llm: warning: %s: the chat template is not one we know (chatml, Qwen, Llama 3, Llama 2, Mistral); using chatml\n",
			gf->path);
	if (warn && ct->family == CHAT_PLAIN)
		fprintf(stderr, "rk1828-llm: note: %s has no chat template: messages are sent as plain text, one per line\n",
			gf->path);
}

unsigned int cli_tok_flags(const struct tokenizer *tok, const struct args *a)
{
	unsigned int f = 0;

	if (tok_add_bos_default(tok) && !a->no_bos)
		f |= TOK_ADD_BOS;
	if (tok_add_eos_default(tok))
		f |= TOK_ADD_EOS;
	if (a->parse_special)
		f |= TOK_PARSE_SPECIAL;
	return f;
}

int cli_encode(const struct tokenizer *tok, const struct args *a, const char *text,
	       struct cli_prompt *p)
{
	struct tok_encode_opts o = { .flags = cli_tok_flags(tok, a) };
	size_t len = strlen(text);
	int max, n;

	if (len > TOK_MAX_TEXT) {
		fprintf(stderr, "rk1828-llm: the prompt is longer than %u bytes\n", TOK_MAX_TEXT);
		return -1;
	}
	max = tok_max_tokens(tok, len);
	p->ids = malloc((size_t)max * sizeof(*p->ids));
	if (!p->ids) {
		fprintf(stderr, "rk1828-llm: out of memory\n");
		return -1;
	}
	n = tok_encode_ex(tok, text, len, &o, p->ids, max);
	if (n < 0) {
		fprintf(stderr, "rk1828-llm: cannot tokenize the prompt\n");
		return -1;
	}
	if (!n) {
		fprintf(stderr, "rk1828-llm: the prompt has no tokens (an empty prompt%s)\n",
			tok_add_bos_default(tok) ? " with --no-bos" : " and the model adds no BOS");
		return -1;
	}
	p->n = n;
	return 0;
}

int cli_encode_chat(const struct tokenizer *tok, const struct args *a,
		    const struct chat_msg *msgs, int n, struct cli_prompt *p)
{
	struct chat_opts o = { .add_generation_prompt = true, .thinking = a->thinking };
	struct chat_prompt cp;
	char err[256];
	unsigned int extra = a->parse_special ? TOK_PARSE_SPECIAL : 0;
	int ret;

	ret = chat_render(&p->ct, msgs, n, &o, &cp, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "rk1828-llm: chat template (%s): %s\n", p->ct.name, err);
		return -1;
	}
	if (a->verbose > 1)
		fprintf(stderr, "prompt (%s): %s\n", p->ct.name, cp.text);
	free(p->ids);
	p->ids = NULL;
	/* chat_encode() adds BOS as the vocabulary wants; --no-bos takes it off. */
	ret = chat_encode(tok, &cp, extra, &p->ids, &p->n);
	if (!ret && a->no_bos && p->n && tok_add_bos_default(tok) && p->ids[0] == tok_bos(tok))
		memmove(p->ids, p->ids + 1, (size_t)--p->n * sizeof(*p->ids));
	p->in_think = cp.reply_in_think;
	chat_prompt_free(&cp);
	if (ret || !p->n) {
		fprintf(stderr, "rk1828-llm: cannot tokenize the chat prompt\n");
		return -1;
	}
	return 0;
}
