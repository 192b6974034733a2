// SPDX-License-Identifier: MIT
/*
 * The tools of /v1/responses as Codex CLI sends them (api_tools.c,
 * api_input.c; userspace/doc/server.rst, "Function calling"): a
 * namespace tool's member functions are offered to the model in the
 * chat shape under their own names, with their namespace in
 * api_params.tool_ns; hosted tools (web_search, file_search, mcp, ...) and
 * client tools of other item types (custom, local_shell) are declarations,
 * echoed and never offered; a tool_choice naming one, a member whose name
 * another function has, a namespace without its tools or inside another
 * are 400s naming the field; a replayed function_call carries its
 * namespace. Output: TAP.
 */
#include "api.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

static int resp(const char *body, struct api_params *p, struct api_error *e)
{
	memset(e, 0, sizeof(*e));
	return api_parse(API_RESPONSES, body, strlen(body), p, e);
}

#define FN(n) "{\"type\":\"function\",\"name\":\"" n "\",\"strict\":false,\"parameters\":" \
	"{\"type\":\"object\",\"properties\":{}}}"
/* Codex CLI 0.169's shape: functions, a namespace of agent tools, web_search. */
#define CODEX_TOOLS "\"tools\":[" FN("exec_command") ",{\"type\":\"namespace\",\"name\":" \
	"\"multi_agent_v1\",\"description\":\"sub-agents\",\"tools\":[" FN("spawn_agent") "," \
	FN("wait_agent") "]}," FN("get_goal") ",{\"type\":\"web_search\"," \
	"\"external_web_access\":false}]"

/* The names offered to the model, in order, joined by ",". */
static void offered(const struct api_params *p, char *out, size_t n)
{
	json_t *arr = p->tools_json ? json_loads(p->tools_json, 0, NULL) : NULL, *t;
	size_t i, len = 0;

	out[0] = 0;
	json_array_foreach(arr, i, t) {
		const char *name = json_string_value(json_object_get(json_object_get(t, "function"),
								     "name"));

		len += snprintf(out + len, n - len, "%s%s", i ? "," : "", name ? name : "?");
		if (len >= n)
			break;
	}
	json_decref(arr);
}

static void test_namespace(void)
{
	struct api_params p;
	struct api_error e;
	char names[256];
	int rc;

	rc = resp("{\"input\":\"x\"," CODEX_TOOLS ",\"tool_choice\":\"auto\"}", &p, &e);
	offered(&p, names, sizeof(names));
	tap_ok(rc == 0 && !strcmp(names, "exec_command,spawn_agent,wait_agent,get_goal"),
	       "Codex's tools: the namespace's members are flattened, web_search is not offered (%s)",
	       rc ? e.msg : names);
	tap_ok(rc == 0 && json_object_size(p.tool_ns) == 2 &&
	       !strcmp(json_string_value(json_object_get(p.tool_ns, "spawn_agent")), "multi_agent_v1") &&
	       !json_object_get(p.tool_ns, "exec_command"),
	       "tool_ns maps each member (only the members) to its namespace");
	tap_ok(rc == 0 && json_array_size(p.tools_given) == 4 &&
	       !strcmp(json_string_value(json_object_get(json_array_get(p.tools_given, 1), "type")),
		       "namespace"),
	       "the tools as sent are kept for the response's echo");
	tap_ok(rc == 0 && p.tools_json && strstr(p.tools_json, "\"strict\":false") &&
	       !strstr(p.tools_json, "namespace"),
	       "a member reaches the template as a chat function with its fields");
	api_params_free(&p);

	rc = resp("{\"input\":\"x\"," CODEX_TOOLS ",\"tool_choice\":{\"type\":\"function\","
		  "\"name\":\"wait_agent\"}}", &p, &e);
	tap_ok(rc == 0 && p.tool_choice == API_TOOL_FUNCTION && !strcmp(p.tool_name, "wait_agent"),
	       "tool_choice may name a namespace member (%s)", rc ? e.msg : "taken");
	api_params_free(&p);
	rc = resp("{\"input\":\"x\"," CODEX_TOOLS ",\"tool_choice\":{\"type\":\"function\","
		  "\"name\":\"multi_agent_v1\"}}", &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "tool_choice"),
	       "tool_choice naming the namespace itself is a 400 (%s)", e.msg);
	api_params_free(&p);
	rc = resp("{\"input\":\"x\"," CODEX_TOOLS ",\"tool_choice\":{\"type\":\"web_search\"}}",
		  &p, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "tool_choice") &&
	       strstr(e.msg, "web_search") && strstr(e.msg, "declaration"),
	       "tool_choice naming a declared hosted tool stays a 400 (%s)", e.msg);
	api_params_free(&p);
	rc = resp("{\"input\":\"x\",\"tools\":[{\"type\":\"web_search\"},{\"type\":\"mcp\","
		  "\"server_label\":\"s\"}],\"tool_choice\":\"required\"}", &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "tool_choice"),
	       "tool_choice required with only declared tools is a 400 (%s)", e.msg);
	api_params_free(&p);
	rc = resp("{\"input\":\"x\",\"tools\":[{\"type\":\"web_search\"},{\"type\":\"file_search\","
		  "\"vector_store_ids\":[\"v\"]},{\"type\":\"code_interpreter\"},{\"type\":"
		  "\"image_generation\"},{\"type\":\"computer_use_preview\"},{\"type\":\"mcp\"},"
		  "{\"type\":\"local_shell\"},{\"type\":\"custom\",\"name\":\"apply_patch\"}]}", &p, &e);
	tap_ok(rc == 0 && !p.tools_json && json_array_size(p.tools_given) == 8,
	       "eight declared-only tools: taken, none offered (%s)", rc ? e.msg : "ok");
	api_params_free(&p);
}

/* Each malformed namespace is a 400 naming the field. */
static void test_namespace_errors(void)
{
	static const struct { const char *tools, *param, *what; } bad[] = {
		{ "[{\"type\":\"namespace\",\"name\":\"n\"}]", "tools[0].tools",
		  "a namespace without tools" },
		{ "[{\"type\":\"namespace\",\"tools\":[]}]", "tools[0].name",
		  "a namespace without a name" },
		{ "[{\"type\":\"namespace\",\"name\":\"a b\",\"tools\":[]}]", "tools[0].name",
		  "a namespace name with a space" },
		{ "[{\"type\":\"namespace\",\"name\":\"n\",\"description\":1,\"tools\":[]}]",
		  "tools[0].description", "a description that is not a string" },
		{ "[{\"type\":\"namespace\",\"name\":\"n\",\"tools\":[{\"type\":\"namespace\","
		  "\"name\":\"m\",\"tools\":[]}]}]", "tools[0].tools[0].type", "a nested namespace" },
		{ "[{\"type\":\"namespace\",\"name\":\"n\",\"tools\":[{\"type\":\"function\"}]}]",
		  "tools[0].tools[0].name", "a member without a name" },
		{ "[{\"type\":\"namespace\",\"name\":\"n\",\"tools\":[{\"type\":\"funktion\","
		  "\"name\":\"f\"}]}]", "tools[0].tools[0].type", "a member of an unknown type" },
		{ "[" FN("f") ",{\"type\":\"namespace\",\"name\":\"n\",\"tools\":[" FN("f") "]}]",
		  "tools[1].tools[0].name", "a member named as a function" },
		{ "[{\"type\":\"namespace\",\"name\":\"a\",\"tools\":[" FN("f") "]},{\"type\":"
		  "\"namespace\",\"name\":\"b\",\"tools\":[" FN("f") "]}]", "tools[1].tools[0].name",
		  "two namespaces with a member of one name" },
		{ "[{\"type\":\"funktion\",\"name\":\"f\"}]", "tools[0].type", "an unknown tool type" },
	};
	struct api_params p;
	struct api_error e;
	char body[1024];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(body, sizeof(body), "{\"input\":\"x\",\"tools\":%s}", bad[i].tools);
		rc = resp(body, &p, &e);
		tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, bad[i].param),
		       "%s is a 400 naming %s (got %s: %s)", bad[i].what, bad[i].param, e.param, e.msg);
		api_params_free(&p);
	}
}

/* A replayed function_call of a member carries its namespace (Codex sends it back). */
static void test_namespace_input(void)
{
	struct api_params p;
	struct api_error e;
	int rc;

	rc = resp("{\"input\":[{\"role\":\"user\",\"content\":\"x\"},{\"type\":\"function_call\","
		  "\"call_id\":\"c1\",\"namespace\":\"multi_agent_v1\",\"name\":\"spawn_agent\","
		  "\"arguments\":\"{}\"},{\"type\":\"function_call_output\",\"call_id\":\"c1\","
		  "\"output\":\"ok\"}]," CODEX_TOOLS "}", &p, &e);
	tap_ok(rc == 0 && p.n_msgs == 3 && p.msgs[1].n_calls == 1 &&
	       !strcmp(p.msgs[1].calls[0].name, "spawn_agent") && !strcmp(p.msgs[2].name, "spawn_agent"),
	       "a function_call with a namespace is the member's call (%s)", rc ? e.msg : "ok");
	api_params_free(&p);
	rc = resp("{\"input\":[{\"role\":\"user\",\"content\":\"x\"},{\"type\":\"function_call\","
		  "\"call_id\":\"c1\",\"namespace\":7,\"name\":\"spawn_agent\",\"arguments\":\"{}\"}]}",
		  &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "input[1].namespace"),
	       "a namespace that is not a string is a 400 naming input[1].namespace (%s)", e.msg);
	api_params_free(&p);
}

int main(void)
{
	test_namespace();
	test_namespace_errors();
	test_namespace_input();
	return tap_done();
}
