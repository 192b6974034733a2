// SPDX-License-Identifier: MIT
/*
 * The response store (userspace/server/resp_store.c) and what /v1/responses
 * resolves against it (api_resp.c): a stored response comes back as it
 * went in, for its owner only; entries go after their TTL and, oldest
 * first, when an owner passes its byte or entry limit; a
 * previous_response_id chain yields each response's input then output
 * items, oldest first, and fails naming the response that went missing;
 * item_reference input items are replaced by the stored items; what is
 * not in the store is a 400 naming previous_response_id or input[i].id;
 * errors after a chain number the client's own items. Time is passed
 * in, so the TTL is tested without waiting. Output: TAP.
 */
#include "api.h"
#include "resp_store.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

/* A response @id whose output is one message item @msg with @text. */
static json_t *response(const char *id, const char *msg, const char *text)
{
	return json_pack("{s:s, s:s, s:[{s:s, s:s, s:s, s:[{s:s, s:s}]}]}", "id", id, "object",
			 "response", "output", "type", "message", "id", msg, "role", "assistant",
			 "content", "type", "output_text", "text", text);
}

static json_t *user(const char *text)
{
	return json_pack("[{s:s, s:s}]", "role", "user", "content", text);
}

static int put(struct rstore *st, const char *owner, const char *id, const char *prev,
	       const char *msg, const char *in, long long now)
{
	json_t *r = response(id, msg, "reply"), *i = user(in);
	int ret = rstore_put(st, owner, id, prev, r, i, now);

	json_decref(r);
	json_decref(i);
	return ret;
}

static void test_get_del_owner(void)
{
	struct rstore *st = rstore_new(NULL);
	json_t *r, *it;

	tap_ok(st && !put(st, "k1", "resp_1", NULL, "msg_1", "hi", 100), "a response is stored");
	r = rstore_get(st, "k1", "resp_1", 101);
	tap_ok(r && !strcmp(json_string_value(json_object_get(r, "id")), "resp_1") &&
	       json_array_size(json_object_get(r, "output")) == 1, "GET: the response as stored");
	json_decref(r);
	tap_ok(!rstore_get(st, "k2", "resp_1", 101) && !rstore_item(st, "k2", "msg_1", 101),
	       "another API key sees neither the response nor its items");
	it = rstore_item(st, "k1", "msg_1", 101);
	tap_ok(it && !strcmp(json_string_value(json_object_get(it, "role")), "assistant"),
	       "an output item by its id");
	json_decref(it);
	tap_ok(!rstore_del(st, "k2", "resp_1", 102) && rstore_del(st, "k1", "resp_1", 102) &&
	       !rstore_get(st, "k1", "resp_1", 102) && !rstore_del(st, "k1", "resp_1", 102),
	       "DELETE: only its owner's, once; then it is gone");
	rstore_free(st);
}

static void test_eviction(void)
{
	struct rstore_limits l = { .max_bytes = 1000, .max_entries = 3, .ttl_s = 60 };
	struct rstore *st = rstore_new(&l);
	char big[600];
	json_t *r;

	put(st, "k", "resp_a", NULL, "msg_a", "a", 0);
	put(st, "k", "resp_b", NULL, "msg_b", "b", 30);
	r = rstore_get(st, "k", "resp_a", 60);
	tap_ok(r != NULL, "kept for its TTL (60 s after it was stored)");
	json_decref(r);
	tap_ok(!rstore_get(st, "k", "resp_a", 61) && (r = rstore_get(st, "k", "resp_b", 61)),
	       "gone once older than the TTL; a younger one stays");
	json_decref(r);
	put(st, "k", "resp_c", NULL, "msg_c", "c", 62);
	put(st, "k", "resp_d", NULL, "msg_d", "d", 62);
	put(st, "other", "resp_x", NULL, "msg_x", "x", 62);
	put(st, "k", "resp_e", NULL, "msg_e", "e", 62);
	tap_ok(!rstore_get(st, "k", "resp_b", 62) && (r = rstore_get(st, "other", "resp_x", 62)),
	       "over 3 entries: the owner's oldest goes, not another owner's");
	json_decref(r);
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	put(st, "k", "resp_f", NULL, "msg_f", big, 63);
	tap_ok(!rstore_get(st, "k", "resp_c", 63) && !rstore_get(st, "k", "resp_d", 63) &&
	       (r = rstore_get(st, "k", "resp_f", 63)),
	       "over 1000 bytes: the oldest go until the owner fits");
	json_decref(r);
	memset(big, 'z', sizeof(big) - 1);
	{
		char huge[1200];
		json_t *rr, *in;

		memset(huge, 'y', sizeof(huge) - 1);
		huge[sizeof(huge) - 1] = 0;
		rr = response("resp_h", "msg_h", huge);
		in = user("h");
		tap_ok(rstore_put(st, "k", "resp_h", NULL, rr, in, 63) == -1 &&
		       (r = rstore_get(st, "k", "resp_f", 63)),
		       "one response over the limit by itself is not kept (and evicts nothing)");
		json_decref(r);
		json_decref(rr);
		json_decref(in);
	}
	rstore_free(st);
}

static void test_chain(void)
{
	struct rstore *st = rstore_new(NULL);
	char why[128];
	json_t *c;

	put(st, "k", "resp_1", NULL, "msg_1", "one", 0);
	put(st, "k", "resp_2", "resp_1", "msg_2", "two", 1);
	put(st, "k", "resp_3", "resp_2", "msg_3", "three", 2);
	c = rstore_context(st, "k", "resp_3", 3, why, sizeof(why));
	tap_ok(c && json_array_size(c) == 6 &&
	       !strcmp(json_string_value(json_object_get(json_array_get(c, 0), "content")), "one") &&
	       !strcmp(json_string_value(json_object_get(json_array_get(c, 1), "id")), "msg_1") &&
	       !strcmp(json_string_value(json_object_get(json_array_get(c, 4), "content")), "three") &&
	       !strcmp(json_string_value(json_object_get(json_array_get(c, 5), "id")), "msg_3"),
	       "a chain of 3: input, output of each, oldest first");
	json_decref(c);
	rstore_del(st, "k", "resp_1", 3);
	c = rstore_context(st, "k", "resp_3", 3, why, sizeof(why));
	tap_ok(!c && strstr(why, "resp_1") && strstr(why, "earlier"),
	       "a chain whose first response went: NULL, naming it (%s)", why);
	rstore_free(st);
}

/* /v1/responses against a store: previous_response_id and item_reference. */
static void test_parse(void)
{
	struct rstore *st = rstore_new(NULL);
	struct api_store as = { .st = st, .owner = "k", .now = 10 };
	struct api_params p;
	struct api_error e;
	const char *b;
	int rc;

	put(st, "k", "resp_1", NULL, "msg_1", "first question", 1);
	b = "{\"previous_response_id\":\"resp_1\",\"input\":\"second question\"}";
	rc = api_parse_with(API_RESPONSES, b, strlen(b), &as, &p, &e);
	tap_ok(rc == 0 && p.n_msgs == 3 && !strcmp(p.msgs[0].content, "first question") &&
	       !strcmp(p.msgs[1].role, "assistant") && !strcmp(p.msgs[1].content, "reply") &&
	       !strcmp(p.msgs[2].content, "second question") && p.n_chain == 2 &&
	       !strcmp(p.previous_id, "resp_1") && json_array_size(p.input_items) == 1 && p.store,
	       "previous_response_id: the stored conversation, then the new input (%s)",
	       rc ? e.msg : "ok");
	api_params_free(&p);
	b = "{\"store\":false,\"input\":[{\"role\":\"user\",\"content\":\"q\"},{\"type\":"
	    "\"item_reference\",\"id\":\"msg_1\"},{\"role\":\"user\",\"content\":\"again\"}]}";
	rc = api_parse_with(API_RESPONSES, b, strlen(b), &as, &p, &e);
	tap_ok(rc == 0 && p.n_msgs == 3 && !strcmp(p.msgs[1].role, "assistant") &&
	       !strcmp(p.msgs[1].content, "reply") && !p.store &&
	       !strcmp(json_string_value(json_object_get(json_array_get(p.input_items, 1), "type")),
		       "message"),
	       "item_reference: the stored item in its place; store false taken (%s)",
	       rc ? e.msg : "ok");
	api_params_free(&p);
	b = "{\"input\":[{\"role\":\"user\",\"content\":\"q\"},{\"type\":\"item_reference\","
	    "\"id\":\"msg_9\"}]}";
	rc = api_parse_with(API_RESPONSES, b, strlen(b), &as, &p, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "input[1].id") &&
	       strstr(e.msg, "msg_9") && strstr(e.msg, "not in the store"),
	       "an item_reference to no stored item: 400 naming input[1].id (%s)", e.msg);
	api_params_free(&p);
	as.owner = "other";
	b = "{\"previous_response_id\":\"resp_1\",\"input\":\"x\"}";
	rc = api_parse_with(API_RESPONSES, b, strlen(b), &as, &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "previous_response_id") && strstr(e.msg, "not in the store"),
	       "another key's previous_response_id: 400 naming previous_response_id (%s)", e.msg);
	api_params_free(&p);
	as.owner = "k";
	as.now = 1 + RSTORE_TTL_S + 1;
	rc = api_parse_with(API_RESPONSES, b, strlen(b), &as, &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "previous_response_id"),
	       "a previous response past its TTL: a 400, not a conversation without it");
	api_params_free(&p);
	as.now = 10;
	put(st, "k", "resp_2", NULL, "msg_2", "q", 5);
	b = "{\"previous_response_id\":\"resp_2\",\"input\":[{\"type\":\"function_call_output\","
	    "\"call_id\":\"c9\",\"output\":\"r\"}]}";
	rc = api_parse_with(API_RESPONSES, b, strlen(b), &as, &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "input[0].call_id"),
	       "after a chain, errors name the client's own items (input[0], not input[2]): %s",
	       e.param);
	api_params_free(&p);
	b = "{\"previous_response_id\":\"resp_2\",\"input\":\"x\"}";
	rc = api_parse(API_RESPONSES, b, strlen(b), &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "previous_response_id"),
	       "without a store (api_parse()): previous_response_id is a 400");
	api_params_free(&p);
	b = "{\"store\":\"yes\",\"input\":\"x\"}";
	rc = api_parse_with(API_RESPONSES, b, strlen(b), &as, &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "store"), "store \"yes\": 400 naming store");
	api_params_free(&p);
	rstore_free(st);
}

int main(void)
{
	test_get_del_owner();
	test_eviction();
	test_chain();
	test_parse();
	return tap_done();
}
