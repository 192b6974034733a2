/* SPDX-License-Identifier: MIT */
/*
 * The store of recent /v1/responses answers (store: true, the default):
 * what previous_response_id and item_reference input items resolve
 * against, and what GET and DELETE /v1/responses/{id} answer. In memory
 * only, per owner (the API key the request came with, "" without
 * --api-key): an owner sees only its own responses. Bounded: an entry
 * older than the TTL is dropped, and an owner's oldest entries go while
 * its entries take more than the byte limit (their compact JSON) or are
 * more than the entry limit. A conversation whose earlier response went
 * is a 400 for its client (api_resp.c), never a silently shorter prompt.
 * Reference: the OpenAI API reference (responses: store,
 * previous_response_id, ItemReference, retrieve, delete).
 *
 * Thread safety: every function may be called from any thread; objects
 * passed in are copied and objects returned are the caller's copies.
 */
#ifndef RK_SERVER_RESP_STORE_H
#define RK_SERVER_RESP_STORE_H

#include <stdbool.h>
#include <stddef.h>

struct json_t;
struct rstore;

/* The server's limits: 64 MiB and 4096 responses per owner, 1 hour each. */
#define RSTORE_MAX_BYTES	(64u << 20)
#define RSTORE_MAX_ENTRIES	4096
#define RSTORE_TTL_S		3600

/* The most responses a previous_response_id chain may go back. */
#define RSTORE_MAX_CHAIN	1024

/**
 * struct rstore_limits - the bounds of a store (per owner)
 * @max_bytes: compact JSON bytes of an owner's entries (response + input)
 * @max_entries: entries of an owner
 * @ttl_s: seconds an entry is kept after it was stored
 */
struct rstore_limits {
	size_t max_bytes;
	int max_entries;
	long long ttl_s;
};

/** rstore_new() - an empty store with @l (NULL: the RSTORE_* limits); NULL: no memory. */
struct rstore *rstore_new(const struct rstore_limits *l);
void rstore_free(struct rstore *st);

/**
 * rstore_put() - keep a finished response
 * @st: store
 * @owner: its owner (API key or "")
 * @id: the response's id ("resp_...")
 * @prev: the previous_response_id it continued, or NULL
 * @response: the whole response object (its "output" holds the items)
 * @input: the request's input items after item references were resolved
 *	(a JSON array; the previous responses' items not included)
 * @now: the time, s
 *
 * An entry larger than the byte limit by itself is not kept. Return: 0,
 * or -1 (not kept: too large, or out of memory).
 */
int rstore_put(struct rstore *st, const char *owner, const char *id, const char *prev,
	       struct json_t *response, struct json_t *input, long long now);

/** rstore_get() - a copy of the response @id of @owner, or NULL. */
struct json_t *rstore_get(struct rstore *st, const char *owner, const char *id, long long now);

/** rstore_del() - drop the response @id of @owner; false when it is not there. */
bool rstore_del(struct rstore *st, const char *owner, const char *id, long long now);

/**
 * rstore_item() - a copy of the item whose "id" is @item_id in @owner's
 * responses (output items first, then input items; newest response
 * first), or NULL
 */
struct json_t *rstore_item(struct rstore *st, const char *owner, const char *item_id,
			   long long now);

/**
 * rstore_context() - the conversation up to and including response @id:
 * each response's input items then its output items, oldest first,
 * following previous_response_id links (a copy, a JSON array)
 * @why, @n: when the result is NULL: which response is missing
 *
 * Return: the items, or NULL when @id or a response before it is not in
 * the store (never stored, deleted, evicted) or out of memory.
 */
struct json_t *rstore_context(struct rstore *st, const char *owner, const char *id,
			      long long now, char *why, size_t n);

#endif
