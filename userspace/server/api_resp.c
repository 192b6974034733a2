// SPDX-License-Identifier: MIT
/*
 * The Responses API's own request fields (api.h: api_parse_response_opts()):
 * "reasoning" ({effort, summary}; a summary asked for fills the reasoning
 * item's summary with the model's reasoning text, format_responses.c).
 * Reference: the OpenAI API reference (responses: Reasoning) and the
 * `openai` npm package's types.
 */
#include <jansson.h>
#include <string.h>

#include "api.h"

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

int api_parse_response_opts(json_t *o, struct api_params *p, struct api_error *e)
{
	return parse_reasoning(o, p, e);
}
