// SPDX-License-Identifier: MIT
/*
 * Structured outputs in the request schema (api.h): chat's and
 * completions' "response_format" ({"type":"text"}, {"type":"json_object"}
 * with an optional "schema" as llama-server takes it, {"type":
 * "json_schema","json_schema":{"name","schema","strict"}}), llama-server's
 * top-level "json_schema", and the Responses API's "text.format"
 * ({"type":"json_schema","name","schema","strict"}, json_object, text),
 * compiled into api_params.schema (jsonmatch.h); with tools, the schema of
 * "calls or a document" once the template is known (api_resolve_format()).
 * References: the OpenAI API reference ("Structured Outputs", "Function
 * calling": a reply is either tool calls or the structured output),
 * llama-server's README.
 */
#include "api.h"
#include "api_ops.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "chat.h"
#include "jsonmatch.h"

/* json_object mode: one JSON object (OpenAI's "JSON mode"). */
static const char json_object_schema[] = "{\"type\":\"object\"}";

/* Compile @sch (NULL: an object) into p->schema; errors name @param. */
static int compile(const json_t *sch, const char *param, struct api_params *p,
		   struct api_error *e)
{
	char err[320];

	p->schema_json = sch ? json_incref((json_t *)sch) :
			 json_loads(json_object_schema, 0, NULL);
	if (!p->schema_json) {
		api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
		return -1;
	}
	p->schema = jm_compile(p->schema_json, err, sizeof(err));
	if (!p->schema)
		return api_bad(e, param, "'%s' is not a JSON schema we can follow: %s", param, err);
	return 0;
}

/* The optional "name" (a string) and "strict" (a boolean) of a json_schema format. */
static int check_name(json_t *f, const char *where, struct api_error *e)
{
	json_t *name = api_field(f, "name"), *strict = api_field(f, "strict");
	char at[96];

	if (name && !json_is_string(name)) {
		snprintf(at, sizeof(at), "%.60s.name", where);
		return api_bad(e, at, "'%s' must be a string", at);
	}
	if (strict && !json_is_boolean(strict)) {
		snprintf(at, sizeof(at), "%.60s.strict", where);
		return api_bad(e, at, "'%s' must be a boolean", at);
	}
	return 0;
}

/*
 * One format object @f named @where ("response_format", "text.format"):
 * @nested: json_schema's fields sit in f.json_schema (chat, completions)
 * rather than in @f itself (responses).
 */
static int parse_one(json_t *f, const char *where, bool nested, struct api_params *p,
		     struct api_error *e)
{
	json_t *t = json_is_object(f) ? json_object_get(f, "type") : NULL, *js, *sch;
	const char *ty = json_string_value(t);
	char at[64];

	if (!json_is_object(f))
		return api_bad(e, where, "'%s' must be an object with a 'type'", where);
	snprintf(at, sizeof(at), "%s.type", where);
	if (!ty)
		return api_bad(e, at, "'%s' must be \"text\", \"json_object\" or \"json_schema\"", at);
	if (!strcmp(ty, "text"))
		return 0;
	if (!strcmp(ty, "json_object")) {
		sch = api_field(f, "schema");
		snprintf(at, sizeof(at), "%s.schema", where);
		return compile(sch, at, p, e);
	}
	if (strcmp(ty, "json_schema"))
		return api_bad(e, at, "'%s' is '%.32s': only \"text\", \"json_object\" and \"json_schema\" are supported",
			       at, ty);
	js = f;
	snprintf(at, sizeof(at), "%s", where);
	if (nested) {
		js = api_field(f, "json_schema");
		snprintf(at, sizeof(at), "%s.json_schema", where);
		/* llama-server also takes the schema in the format itself. */
		if (!js && api_field(f, "schema"))
			return compile(api_field(f, "schema"), "response_format.schema", p, e);
		if (!json_is_object(js))
			return api_bad(e, at, "'%s' must be an object with a 'schema' for type json_schema",
				       at);
	}
	if (check_name(js, at, e))
		return -1;
	sch = api_field(js, "schema");
	snprintf(at + strlen(at), sizeof(at) - strlen(at), ".schema");
	if (!sch)
		return api_bad(e, at, "'%s' is required for type json_schema", at);
	return compile(sch, at, p, e);
}

int api_parse_text_format(json_t *o, struct api_params *p, struct api_error *e)
{
	json_t *text = api_field(o, "text"), *rf;

	if (text && !json_is_object(text))
		return api_bad(e, "text", "'text' must be an object");
	rf = text ? api_field(text, "format") : NULL;
	if (rf && parse_one(rf, "text.format", false, p, e))
		return -1;
	p->schema_param = "text.format";
	return 0;
}

int api_parse_format(json_t *o, struct api_params *p, struct api_error *e)
{
	json_t *rf, *js = api_field(o, "grammar");
	const char *what = "response_format";

	/* llama-server's GBNF: refused rather than ignored (a reply
	 * that looks constrained but is not). "" is no grammar. */
	if (js && !(json_is_string(js) && !json_string_length(js)))
		return api_bad(e, "grammar", "'grammar' (GBNF) is not supported: give a JSON schema in 'json_schema' or 'response_format'");
	rf = api_field(o, "response_format");
	if (rf && parse_one(rf, what, true, p, e))
		return -1;
	js = api_field(o, "json_schema");
	if (js && p->schema)
		return api_bad(e, "json_schema", "'json_schema' and a 'response_format' with a schema are exclusive");
	if (js && compile(js, "json_schema", p, e))
		return -1;
	if (js)
		what = "json_schema";
	p->schema_param = what;
	return 0;
}

int api_resolve_format(struct api_params *p, const struct chat_template *ct, struct api_error *e)
{
	static const int choice[] = {
		[API_TOOL_AUTO] = JM_TOOLS_AUTO, [API_TOOL_NONE] = JM_TOOLS_AUTO,
		[API_TOOL_REQUIRED] = JM_TOOLS_REQUIRED, [API_TOOL_FUNCTION] = JM_TOOLS_FUNCTION,
	};
	struct jm_schema *s;
	json_t *tools;
	char err[400], at[64];
	unsigned int i;

	if (!p->tools_json)
		return 0;
	/*
	 * Without a schema a reply is free text or calls; tool_choice
	 * "required" or a named function makes it calls only, and OpenAI's
	 * "strict" holds their arguments to the parameters: the grammar of
	 * calls alone. It knows the JSON call form only; an XML template's
	 * calls keep the reply prefix chat_render() gives them.
	 */
	if (!p->schema && (ct->tools == CHAT_TOOLS_XML ||
			   (p->tool_choice != API_TOOL_REQUIRED && p->tool_choice != API_TOOL_FUNCTION)))
		return 0;
	if (ct->tools == CHAT_TOOLS_XML)
		return api_bad(e, p->schema_param,
			       "structured output ('%s') together with 'tools' is not supported with this model's XML tool-call form (%s template)",
			       p->schema_param, ct->name);
	tools = json_loads(p->tools_json, 0, NULL);
	s = tools ? jm_compile_tools(p->schema_json, tools, choice[p->tool_choice], p->tool_name,
				     p->one_call, err, sizeof(err)) : NULL;
	json_decref(tools);
	if (!s && tools && sscanf(err, "tools[%u]", &i) == 1) {
		snprintf(at, sizeof(at), api_ops_of(p->kind)->tool_params, i);
		return api_bad(e, at, "'%s' (strict) is not a JSON schema we can follow: %s", at,
			       strchr(err, ' ') + 1);
	}
	if (!s) {
		api_error_set(e, 500, "server_error", NULL, NULL, "%s", tools ? err : "out of memory");
		return -1;
	}
	jm_schema_put(p->schema);
	p->schema = s;
	return 0;
}
