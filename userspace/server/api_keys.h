/* SPDX-License-Identifier: MIT */
/*
 * The server's API keys (--api-key, --api-key-file): the list the options
 * build and the check of a request's key against it. A server with keys
 * answers every route but / and /health only to a caller holding one;
 * each key is also the owner of the responses stored under it (POST
 * /v1/responses with store), so two keys never see each other's.
 */
#ifndef RK_SERVER_API_KEYS_H
#define RK_SERVER_API_KEYS_H

#include "srv.h"

/* The longest key accepted, bytes. */
#define API_KEY_MAX	1022

/**
 * api_keys_add() - add the keys of one --api-key value to @o
 * @o: options; o->api_keys grows
 * @list: one key or a comma-separated list (llama-server's form); every
 *	item must be non-empty and at most API_KEY_MAX bytes
 * @what: the option's name for the message ("--api-key")
 *
 * Repeated options add: "--api-key a --api-key b,c" accepts a, b and c.
 * A key given twice is kept once.
 *
 * Return: 0, or -1 with a message on stderr (an empty item, a key too
 * long, no memory); @o keeps the keys added before.
 */
int api_keys_add(struct srv_opts *o, const char *list, const char *what);

/**
 * api_keys_read_file() - add the keys of --api-key-file @path to @o
 * @o: options
 * @path: a text file of one key a line (LF or CRLF); empty lines and
 *	lines starting with '#' are skipped, spaces around a key dropped
 *
 * The file keeps the keys out of the process list, where --api-key shows
 * them to every user.
 *
 * Return: 0, or -1 with the file's name and the reason on stderr (cannot
 * be read, no key in it, a line longer than API_KEY_MAX bytes).
 */
int api_keys_read_file(struct srv_opts *o, const char *path);

/**
 * api_keys_match() - the key of @o that @given is
 * @o: options
 * @given: the key a request sent (NUL-terminated)
 *
 * Every key is compared in constant time for its length, so the time of
 * a refusal does not tell how much of a key was right.
 *
 * Return: the matching entry of o->api_keys (lives as long as @o), or
 * NULL when none matches.
 */
const char *api_keys_match(const struct srv_opts *o, const char *given);

/**
 * api_keys_free() - free o->api_keys and set it to none
 * @o: options
 */
void api_keys_free(struct srv_opts *o);

#endif
