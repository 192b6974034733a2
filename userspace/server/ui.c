// SPDX-License-Identifier: MIT
/*
 * The web UI (userspace/server/ui/), embedded into the binary at build
 * time with the assembler's .incbin: no build step, no CDN. The Makefile
 * makes this object depend on the files.
 */
#include <stddef.h>
#include <string.h>

#include "ui.h"

#define EMBED(sym, file) \
	__asm__(".section .rodata\n.global " #sym "\n.balign 16\n" #sym ":\n" \
		".incbin \"" file "\"\n.global " #sym "_end\n" #sym "_end:\n.byte 0\n.previous\n"); \
	extern const char sym[], sym##_end[]

EMBED(ui_index_html, "userspace/server/ui/index.html");
EMBED(ui_app_js, "userspace/server/ui/app.js");
EMBED(ui_style_css, "userspace/server/ui/style.css");
EMBED(ui_favicon_svg, "userspace/server/ui/favicon.svg");

static const struct {
	const char *path, *mime, *start, *end;
} files[] = {
	{ "/", "text/html; charset=utf-8", ui_index_html, ui_index_html_end },
	{ "/index.html", "text/html; charset=utf-8", ui_index_html, ui_index_html_end },
	{ "/app.js", "text/javascript; charset=utf-8", ui_app_js, ui_app_js_end },
	{ "/style.css", "text/css; charset=utf-8", ui_style_css, ui_style_css_end },
	{ "/favicon.svg", "image/svg+xml", ui_favicon_svg, ui_favicon_svg_end },
	{ "/favicon.ico", "image/svg+xml", ui_favicon_svg, ui_favicon_svg_end },
};

const char *ui_find(const char *path, size_t *len, const char **mime)
{
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (strcmp(path, files[i].path))
			continue;
		if (len)
			*len = (size_t)(files[i].end - files[i].start);
		if (mime)
			*mime = files[i].mime;
		return files[i].start;
	}
	return NULL;
}
