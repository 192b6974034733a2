// SPDX-License-Identifier: MIT
/*
 * The Responses API's own request fields (api.h: api_parse_response_opts()):
 * "reasoning" ({effort, summary}; a summary asked for fills the reasoning
 * item's summary with the model's reasoning text, format_responses.c);
 * "store"; and the conversation "input" stands for: the items of the
 * previous_response_id chain (resp_store.h), then the request's input
 * items, each {"type": "item_reference", "id"} replaced by the stored
 * item of that id. What is not in the store (never stored, deleted,
 * evicted) is a 400 that says so, never a shorter conversation.
 * api_parse_responses() is the whole request (api_ops.c's parser of
 * /v1/responses). Reference: the OpenAI API reference (responses: Reasoning, store,
 * previous_response_id, ItemReference) and the `openai` npm package's
 * types.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "resp_store.h"

/* "reasoning": {effort?, summary?, generate_summary? (deprecated)}. */
static int parse_reasoning(json_t *o, struct api_params *p, struct api_error *e)
{
	static const char *const summaries[] = { "auto", "concise", "detailed", NULL };
	json_t *r = api_field(o, "reasoning"), *v;
	const char *key = "summary";
	int i;

	if (!r)
		return 0;
	if (!json_is_object(r))
		return api_bad(e, "reasoning", "'reasoning' must be an object ({\"effort\": ..., \"summary\": ...})");
	v = api_field(r, "effort");
	if (v && !json_is_string(v))
		return api_bad(e, "reasoning.effort", "'reasoning.effort' must be a string");
	v = api_field(r, key);
	if (!v) {
		key = "generate_summary";
		v = api_field(r, key);
	}
	if (!v)
		return 0;
	for (i = 0; summaries[i]; i++)
		if (json_is_string(v) && !strcmp(json_string_value(v), summaries[i]))
			break;
	if (!summaries[i])
		return api_bad(e, !strcmp(key, "summary") ? "reasoning.summary" :
			       "reasoning.generate_summary",
			       "'reasoning.%s' must be \"auto\", \"concise\", \"detailed\" or null", key);
	p->reasoning_summary = true;
	return 0;
}

/* What a client is told when something it refers to is not in the store. */
#define NOT_STORED "responses are kept in memory for %d s and %u MiB per API key, and only with 'store' true"

/* "previous_response_id": the items of its conversation into *@chain. */
static int previous(json_t *o, const struct api_store *st, struct api_params *p, json_t **chain,
		    struct api_error *e)
{
	json_t *v = api_field(o, "previous_response_id");
	char why[128] = "";

	if (!v)
		return 0;
	if (!json_is_string(v))
		return api_bad(e, "previous_response_id", "'previous_response_id' must be a string");
	p->previous_id = strdup(json_string_value(v));
	if (!p->previous_id)
		return api_bad(e, "previous_response_id", "out of memory");
	if (!st || !st->st)
		return api_bad(e, "previous_response_id",
			       "'previous_response_id' is not supported here: responses are not stored; send the whole conversation in 'input'");
	*chain = rstore_context(st->st, st->owner, p->previous_id, st->now, why, sizeof(why));
	if (!*chain)
		return api_bad(e, "previous_response_id",
			       "'previous_response_id' is '%.64s', but %s: " NOT_STORED "; send the whole conversation in 'input'",
			       p->previous_id, why, RSTORE_TTL_S, RSTORE_MAX_BYTES >> 20);
	return 0;
}

/* Item @i of "input", an item_reference: the stored item it names, in place. */
static int resolve_ref(json_t *items, size_t i, const struct api_store *st, struct api_error *e)
{
	json_t *ref = json_array_get(items, i), *id = api_field(ref, "id"), *it;
	char at[48];

	snprintf(at, sizeof(at), "input[%zu].id", i);
	if (!json_is_string(id))
		return api_bad(e, at, "'%s' is required: the id of a stored item", at);
	if (!st || !st->st)
		return api_bad(e, at, "'input[%zu]' is an item_reference: responses are not stored here; send the item itself",
			       i);
	it = rstore_item(st->st, st->owner, json_string_value(id), st->now);
	if (!it)
		return api_bad(e, at, "'%s' is '%.64s', which is not in the store: " NOT_STORED "; send the item itself",
			       at, json_string_value(id), RSTORE_TTL_S, RSTORE_MAX_BYTES >> 20);
	json_array_set_new(items, i, it);
	return 0;
}

/* "input": a string (a user message) or a non-empty array of items, references resolved. */
static json_t *input_items(json_t *o, const struct api_store *st, struct api_error *e)
{
	json_t *in = json_object_get(o, "input"), *items, *it;
	size_t i;

	if (json_is_string(in))
		return json_pack("[{s:s, s:O}]", "role", "user", "content", in);
	if (!json_is_array(in) || !json_array_size(in)) {
		api_bad(e, "input", "'input' must be a string or a non-empty array of message items");
		return NULL;
	}
	items = json_deep_copy(in);
	json_array_foreach(items, i, it) {
		json_t *ty = json_object_get(it, "type");

		if (json_is_string(ty) && !strcmp(json_string_value(ty), "item_reference") &&
		    resolve_ref(items, i, st, e)) {
			json_decref(items);
			return NULL;
		}
	}
	return items;
}

int api_parse_response_opts(json_t *o, const struct api_store *st, struct api_params *p,
			    json_t **items, struct api_error *e)
{
	json_t *chain = NULL, *all;

	*items = NULL;
	if (parse_reasoning(o, p, e) || api_get_bool(o, "store", &p->store, e) ||
	    previous(o, st, p, &chain, e))
		goto fail;
	p->input_items = input_items(o, st, e);
	if (!p->input_items)
		goto fail;
	all = chain ? chain : json_array();
	if (!all || json_array_extend(all, p->input_items)) {
		json_decref(all);
		api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
		return -1;
	}
	p->n_chain = chain ? (int)(json_array_size(all) - json_array_size(p->input_items)) : 0;
	*items = all;
	return 0;
fail:
	json_decref(chain);
	return -1;
}

int api_parse_responses(json_t *o, const struct api_store *store, struct api_params *p,
			struct api_error *e)
{
	json_t *ins = api_field(o, "instructions"), *items = NULL;
	int pre = 0, ret;

	if (!json_object_get(o, "input"))
		return api_bad(e, "input", "'input' is required");
	if (ins && !json_is_string(ins))
		return api_bad(e, "instructions", "'instructions' must be a string");
	if (api_parse_common(o, p, "max_output_tokens", e) || api_parse_response_tools(o, p, e) ||
	    api_parse_text_format(o, p, e) || api_parse_response_opts(o, store, p, &items, e))
		return -1;
	p->include_usage = true;
	pre = ins ? 1 : 0;
	ret = api_parse_input(items, pre, p, e);
	json_decref(items);
	if (ret)
		return -1;
	if (ins) {
		p->msgs[0].role = "system";
		p->msgs[0].content = strndup(json_string_value(ins), json_string_length(ins));
		p->msgs[0].item = -1;
	}
	return api_check_tool_ids(p, e);
}
