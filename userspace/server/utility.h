/* SPDX-License-Identifier: MIT */
/*
 * llama-server's utility endpoints (utility.c): POST /tokenize,
 * /detokenize, /apply-template and GET /props.
 */
#ifndef RK_SERVER_UTILITY_H
#define RK_SERVER_UTILITY_H

#include <stddef.h>

#include "srv.h"

struct api_error;
struct json_t;

/*
 * util_tokenize(), util_detokenize() and util_apply_template() take the
 * request body (@body, @len bytes) and return 0 with *@out the answer
 * ({"tokens"}, {"content"}, {"prompt"}), or -1 with @e (a 400 naming the
 * field, or 500); util_tokenize()'s answer is its JSON text (malloc'ed,
 * *@out_len bytes), written token by token.
 */
int util_tokenize(struct srv *s, const char *body, size_t len, char **out, size_t *out_len,
		  struct api_error *e);
int util_detokenize(struct srv *s, const char *body, size_t len, struct json_t **out,
		    struct api_error *e);
int util_apply_template(struct srv *s, const char *body, size_t len, struct json_t **out,
			struct api_error *e);

/** util_props() - the GET /props object (NULL: out of memory). */
struct json_t *util_props(struct srv *s);

#endif
