// SPDX-License-Identifier: MIT
/*
 * The response store (resp_store.h): a list of entries, oldest first,
 * under one mutex. Lookups scan it (at most RSTORE_MAX_ENTRIES per owner);
 * every call first drops the entries past their TTL.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp_store.h"

/**
 * struct rentry - one stored response
 * @next, @prev: the list, oldest first
 * @owner, @id, @prev_id: whose, its id, the response it continued ("")
 * @response: the response object
 * @input: its request's own input items
 * @bytes: what it counts against its owner's limit
 * @created: when it was stored, s
 */
struct rentry {
	struct rentry *next, *prev;
	char *owner, *id, *prev_id;
	json_t *response, *input;
	size_t bytes;
	long long created;
};

/**
 * struct rstore - the store
 * @mu: protects everything below
 * @l: limits
 * @head, @tail: entries, oldest first
 */
struct rstore {
	pthread_mutex_t mu;
	struct rstore_limits l;
	struct rentry *head, *tail;
};

struct rstore *rstore_new(const struct rstore_limits *l)
{
	struct rstore *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	pthread_mutex_init(&st->mu, NULL);
	st->l = l ? *l : (struct rstore_limits){ RSTORE_MAX_BYTES, RSTORE_MAX_ENTRIES,
						 RSTORE_TTL_S };
	return st;
}

static void entry_free(struct rentry *en)
{
	free(en->owner);
	free(en->id);
	free(en->prev_id);
	json_decref(en->response);
	json_decref(en->input);
	free(en);
}

static void unlink_entry(struct rstore *st, struct rentry *en)
{
	if (en->prev)
		en->prev->next = en->next;
	else
		st->head = en->next;
	if (en->next)
		en->next->prev = en->prev;
	else
		st->tail = en->prev;
	entry_free(en);
}

void rstore_free(struct rstore *st)
{
	if (!st)
		return;
	while (st->head)
		unlink_entry(st, st->head);
	pthread_mutex_destroy(&st->mu);
	free(st);
}

/* Drop the entries stored more than the TTL before @now (the oldest come first). */
static void expire(struct rstore *st, long long now)
{
	while (st->head && now - st->head->created > st->l.ttl_s)
		unlink_entry(st, st->head);
}

/* Drop @owner's oldest entries until its bytes and count are within the limits. */
static void fit(struct rstore *st, const char *owner)
{
	struct rentry *en, *next;
	size_t bytes = 0;
	int n = 0;

	for (en = st->head; en; en = en->next) {
		if (!strcmp(en->owner, owner)) {
			bytes += en->bytes;
			n++;
		}
	}
	for (en = st->head; en && (bytes > st->l.max_bytes || n > st->l.max_entries); en = next) {
		next = en->next;
		if (strcmp(en->owner, owner))
			continue;
		bytes -= en->bytes;
		n--;
		unlink_entry(st, en);
	}
}

static struct rentry *find(struct rstore *st, const char *owner, const char *id)
{
	struct rentry *en;

	for (en = st->tail; en; en = en->prev)
		if (!strcmp(en->id, id) && !strcmp(en->owner, owner))
			return en;
	return NULL;
}

int rstore_put(struct rstore *st, const char *owner, const char *id, const char *prev,
	       json_t *response, json_t *input, long long now)
{
	struct rentry *en = calloc(1, sizeof(*en));

	if (!en)
		return -1;
	en->owner = strdup(owner);
	en->id = strdup(id);
	en->prev_id = strdup(prev ? prev : "");
	en->response = json_deep_copy(response);
	en->input = input ? json_deep_copy(input) : json_array();
	en->created = now;
	if (!en->owner || !en->id || !en->prev_id || !en->response || !en->input) {
		entry_free(en);
		return -1;
	}
	en->bytes = json_dumpb(en->response, NULL, 0, JSON_COMPACT) +
		    json_dumpb(en->input, NULL, 0, JSON_COMPACT);
	if (en->bytes > st->l.max_bytes) {
		entry_free(en);
		return -1;
	}
	pthread_mutex_lock(&st->mu);
	expire(st, now);
	en->prev = st->tail;
	if (st->tail)
		st->tail->next = en;
	else
		st->head = en;
	st->tail = en;
	fit(st, owner);
	pthread_mutex_unlock(&st->mu);
	return 0;
}

json_t *rstore_get(struct rstore *st, const char *owner, const char *id, long long now)
{
	struct rentry *en;
	json_t *r;

	pthread_mutex_lock(&st->mu);
	expire(st, now);
	en = find(st, owner, id);
	r = en ? json_deep_copy(en->response) : NULL;
	pthread_mutex_unlock(&st->mu);
	return r;
}

bool rstore_del(struct rstore *st, const char *owner, const char *id, long long now)
{
	struct rentry *en;

	pthread_mutex_lock(&st->mu);
	expire(st, now);
	en = find(st, owner, id);
	if (en)
		unlink_entry(st, en);
	pthread_mutex_unlock(&st->mu);
	return en != NULL;
}

/* The item of @arr whose "id" is @id, or NULL. */
static json_t *item_in(json_t *arr, const char *id)
{
	json_t *it;
	size_t i;

	json_array_foreach(arr, i, it) {
		const char *v = json_string_value(json_object_get(it, "id"));

		if (v && !strcmp(v, id))
			return it;
	}
	return NULL;
}

json_t *rstore_item(struct rstore *st, const char *owner, const char *item_id, long long now)
{
	struct rentry *en;
	json_t *it = NULL;

	pthread_mutex_lock(&st->mu);
	expire(st, now);
	for (en = st->tail; en && !it; en = en->prev) {
		if (strcmp(en->owner, owner))
			continue;
		it = item_in(json_object_get(en->response, "output"), item_id);
		if (!it)
			it = item_in(en->input, item_id);
	}
	it = it ? json_deep_copy(it) : NULL;
	pthread_mutex_unlock(&st->mu);
	return it;
}

/* Append a copy of @arr's elements to @out. Return: 0 or -1 (out of memory). */
static int append_copy(json_t *out, json_t *arr)
{
	json_t *cp = json_deep_copy(arr);
	int ret = cp ? json_array_extend(out, cp) : -1;

	json_decref(cp);
	return ret;
}

json_t *rstore_context(struct rstore *st, const char *owner, const char *id, long long now,
		       char *why, size_t n)
{
	struct rentry *chain[RSTORE_MAX_CHAIN];
	const char *at = id;
	json_t *out = NULL;
	int k = 0, i;

	pthread_mutex_lock(&st->mu);
	expire(st, now);
	while (*at && k < RSTORE_MAX_CHAIN) {
		struct rentry *en = find(st, owner, at);

		if (!en) {
			snprintf(why, n, "%s'%.64s' is not in the store", at == id ? "" :
				 "the earlier response ", at);
			goto out;
		}
		chain[k++] = en;
		at = en->prev_id;
	}
	if (*at) {
		snprintf(why, n, "the conversation goes back more than %d responses", RSTORE_MAX_CHAIN);
		goto out;
	}
	out = json_array();
	for (i = k - 1; out && i >= 0; i--) {
		if (append_copy(out, chain[i]->input) ||
		    append_copy(out, json_object_get(chain[i]->response, "output"))) {
			json_decref(out);
			out = NULL;
		}
	}
	if (!out)
		snprintf(why, n, "out of memory");
out:
	pthread_mutex_unlock(&st->mu);
	return out;
}
