// SPDX-License-Identifier: MIT
/*
 * The server's API keys: parsing --api-key and --api-key-file into one
 * list and matching a request's key against it (api_keys.h).
 */
#include "api_keys.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Constant-time comparison of @h with the key @k. */
static bool key_eq(const char *h, const char *k)
{
	size_t i, n = strlen(h), m = strlen(k);
	unsigned char d = 0;

	for (i = 0; i < m; i++)
		d |= (unsigned char)k[i] ^ (unsigned char)(i < n ? h[i] : 0);
	return !d && n == m;
}

/* Append the @n bytes at @k as one key (once). 0, or -1 out of memory. */
static int push_key(struct srv_opts *o, const char *k, size_t n)
{
	char **v, *d;
	int i;

	for (i = 0; i < o->n_api_keys; i++)
		if (strlen(o->api_keys[i]) == n && !memcmp(o->api_keys[i], k, n))
			return 0;
	d = strndup(k, n);
	v = d ? realloc(o->api_keys, (o->n_api_keys + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(d);
		fprintf(stderr, "rk1828-llm: out of memory for the API keys\n");
		return -1;
	}
	v[o->n_api_keys++] = d;
	o->api_keys = v;
	return 0;
}

int api_keys_add(struct srv_opts *o, const char *list, const char *what)
{
	const char *p = list;

	for (;;) {
		size_t n = strcspn(p, ",");

		if (!n) {
			fprintf(stderr, "rk1828-llm: %s: %s\n", what,
				*list ? "an empty key in the comma-separated list" : "the key is empty");
			return -1;
		}
		if (n > API_KEY_MAX) {
			fprintf(stderr, "rk1828-llm: %s: a key is longer than %d bytes\n", what,
				API_KEY_MAX);
			return -1;
		}
		if (push_key(o, p, n))
			return -1;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

/* One line of the key file into @o (skipped when blank or a comment). */
static int file_line(struct srv_opts *o, char *line)
{
	size_t n;

	while (isspace((unsigned char)*line))
		line++;
	n = strlen(line);
	while (n && isspace((unsigned char)line[n - 1]))
		n--;
	if (!n || line[0] == '#')
		return 0;
	if (n > API_KEY_MAX)
		return -1;
	return push_key(o, line, n);
}

int api_keys_read_file(struct srv_opts *o, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[API_KEY_MAX + 3];
	int before = o->n_api_keys, lineno = 0, ret = 0;

	if (!f) {
		fprintf(stderr, "rk1828-llm: --api-key-file %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			fprintf(stderr, "rk1828-llm: --api-key-file %s: line %d is longer than %d bytes\n",
				path, lineno, API_KEY_MAX);
			ret = -1;
			break;
		}
		ret = file_line(o, line);
		if (ret)
			fprintf(stderr, "rk1828-llm: --api-key-file %s: line %d: a key longer than %d bytes, or no memory\n",
				path, lineno, API_KEY_MAX);
	}
	if (!ret && ferror(f)) {
		fprintf(stderr, "rk1828-llm: --api-key-file %s: %s\n", path, strerror(errno));
		ret = -1;
	}
	fclose(f);
	if (!ret && o->n_api_keys == before) {
		fprintf(stderr, "rk1828-llm: --api-key-file %s: no key in it (one key a line)\n",
			path);
		ret = -1;
	}
	return ret;
}

const char *api_keys_match(const struct srv_opts *o, const char *given)
{
	const char *hit = NULL;
	int i;

	/* No early exit: every key is compared, whichever matches. */
	for (i = 0; i < o->n_api_keys; i++)
		if (key_eq(given, o->api_keys[i]) && !hit)
			hit = o->api_keys[i];
	return hit;
}

void api_keys_free(struct srv_opts *o)
{
	int i;

	for (i = 0; i < o->n_api_keys; i++)
		free(o->api_keys[i]);
	free(o->api_keys);
	o->api_keys = NULL;
	o->n_api_keys = 0;
}
