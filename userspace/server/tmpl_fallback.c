// SPDX-License-Identifier: MIT
/* Private chat-template fallback (tmpl_fallback.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmpl_fallback.h"

enum family { PLAIN, CHATML, LLAMA3, LLAMA2 };

static enum family family_of(const char *t)
{
	if (!t || !*t)
		return PLAIN;
	if (strstr(t, "<|im_start|>"))
		return CHATML;
	if (strstr(t, "<|start_header_id|>"))
		return LLAMA3;
	if (strstr(t, "[INST]"))
		return LLAMA2;
	return PLAIN;
}

static void put(FILE *f, const char *a, const char *b, const char *c)
{
	fputs(a, f);
	fputs(b, f);
	fputs(c, f);
}

char *tmpl_render(const char *tmpl, const struct api_msg *m, int n)
{
	enum family fam = family_of(tmpl);
	bool open_last = n && !strcmp(m[n - 1].role, "assistant");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const char *sys = NULL;
	int i;

	if (!f)
		return NULL;
	for (i = 0; i < n; i++) {
		bool last_open = open_last && i == n - 1;

		switch (fam) {
		case CHATML:
			put(f, "<|im_start|>", m[i].role, "\n");
			put(f, m[i].content, last_open ? "" : "<|im_end|>\n", "");
			break;
		case LLAMA3:
			put(f, "<|start_header_id|>", m[i].role, "<|end_header_id|>\n\n");
			put(f, m[i].content, last_open ? "" : "<|eot_id|>", "");
			break;
		case LLAMA2:
			if (!strcmp(m[i].role, "system")) {
				sys = m[i].content;
			} else if (!strcmp(m[i].role, "user")) {
				fputs("[INST] ", f);
				if (sys)
					put(f, "<<SYS>>\n", sys, "\n<</SYS>>\n\n");
				put(f, m[i].content, " [/INST]", "");
				sys = NULL;
			} else {
				put(f, " ", m[i].content, last_open ? "" : " </s>");
			}
			break;
		default:
			put(f, i ? "\n" : "", m[i].content, "");
			break;
		}
	}
	if (!open_last) {
		if (fam == CHATML)
			fputs("<|im_start|>assistant\n", f);
		else if (fam == LLAMA3)
			fputs("<|start_header_id|>assistant<|end_header_id|>\n\n", f);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
