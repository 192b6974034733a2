// SPDX-License-Identifier: MIT
/*
 * OpenAI request parsing tests (userspace/server/api.c, the rules of
 * userspace/doc/server.rst): the sampling fields land in struct
 * sampler_params with their values; "seed": -1 asks for a random seed as
 * in llama-server, another negative one is refused as by the CLI; an empty
 * completions prompt is refused; a wrong type or range
 * is a 400 naming the field, and max_tokens is checked next to
 * max_completion_tokens; tools, tool_choice and the tool fields of
 * messages land in struct api_params (api_tools.c); /v1/responses' flat
 * tools and its input items (function_call, function_call_output,
 * reasoning) become the same messages (api_input.c); structured outputs
 * (api_format.c): response_format text/json_object/json_schema, the
 * top-level json_schema, completions' response_format and responses'
 * text.format compile a schema that accepts and refuses what it should,
 * and each malformed form is a 400 naming its field. Output: TAP.
 */
#include "api.h"
#include "gguf.h"
#include "tokenizer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "chat.h"
#include "jsonmatch.h"

#include "tap.h"

/* Parse @body as a chat completion; 0 or -1 as api_parse(). */
static int chat(const char *body, struct api_params *p, struct api_error *e)
{
	memset(e, 0, sizeof(*e));
	return api_parse(API_CHAT, body, strlen(body), p, e);
}

#define MSGS "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"

static void test_seed(void)
{
	struct api_params p;
	struct api_error e;
	int rc;

	rc = chat("{" MSGS ",\"seed\":42}", &p, &e);
	tap_ok(rc == 0 && p.s.have_seed && p.s.seed == 42, "seed 42 is seed 42");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"seed\":-1}", &p, &e);
	tap_ok(rc == 0 && !p.s.have_seed, "seed -1 asks for a random seed (no fixed seed)");
	api_params_free(&p);

	rc = chat("{" MSGS "}", &p, &e);
	tap_ok(rc == 0 && !p.s.have_seed, "no seed: a random seed");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"seed\":-2}", &p, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "seed"),
	       "another negative seed is a 400 naming 'seed', as the CLI refuses it");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"seed\":\"7\"}", &p, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "seed"),
	       "a string seed is a 400 naming 'seed' (got %d, param '%s')", e.status, e.param);
	api_params_free(&p);

	rc = chat("{" MSGS ",\"seed\":1.5}", &p, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "seed"),
	       "a fractional seed is a 400 naming 'seed'");
	api_params_free(&p);
}

static void test_sampling(void)
{
	struct api_params p;
	struct api_error e;
	int rc;

	rc = chat("{" MSGS ",\"temperature\":0.5,\"top_p\":0.25,\"top_k\":7,\"max_tokens\":9}",
		  &p, &e);
	tap_ok(rc == 0 && p.s.temperature == 0.5f && p.s.top_p == 0.25f && p.s.top_k == 7 &&
	       p.max_tokens == 9, "temperature, top_p, top_k and max_tokens carry their values");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"max_completion_tokens\":5,\"max_tokens\":-3}", &p, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "max_tokens"),
	       "a bad max_tokens is a 400 even next to max_completion_tokens (param '%s')",
	       e.param);
	api_params_free(&p);

	rc = chat("{" MSGS ",\"max_completion_tokens\":5,\"max_tokens\":8}", &p, &e);
	tap_ok(rc == 0 && p.max_tokens == 5, "max_completion_tokens wins over max_tokens");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"temperature\":\"hot\"}", &p, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "temperature") &&
	       !strcmp(e.type, "invalid_request_error"),
	       "a string temperature is an invalid_request_error naming 'temperature'");
	api_params_free(&p);
}

static void test_prompt(void)
{
	struct api_params p;
	struct api_error e;
	int rc;

	memset(&e, 0, sizeof(e));
	rc = api_parse(API_COMPLETION, "{\"prompt\":\"\"}", 13, &p, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "prompt"),
	       "an empty completions prompt is a 400 naming 'prompt'");
	api_params_free(&p);
	memset(&e, 0, sizeof(e));
	rc = api_parse(API_COMPLETION, "{\"prompt\":[\"\"]}", 15, &p, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "prompt"),
	       "an array of one empty prompt too");
	api_params_free(&p);
	memset(&e, 0, sizeof(e));
	rc = api_parse(API_COMPLETION, "{\"prompt\":\"x\"}", 14, &p, &e);
	tap_ok(rc == 0 && p.prompt && !strcmp(p.prompt, "x"), "a one-character prompt is taken");
	api_params_free(&p);
}

#define TOOLS "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"," \
	"\"parameters\":{\"type\":\"object\"}}},{\"type\":\"function\",\"function\":{\"name\":\"mcp.fs:read\"}}]"

static void test_tools(void)
{
	struct api_params p;
	struct api_error e;
	const char *body;
	int rc;

	rc = chat("{" MSGS "," TOOLS "}", &p, &e);
	tap_ok(rc == 0 && p.tools_json && strstr(p.tools_json, "\"name\":\"get_weather\"") &&
	       strstr(p.tools_json, "mcp.fs:read") && p.tool_choice == API_TOOL_AUTO,
	       "tools: kept as JSON for the template, tool_choice auto by default (%s)",
	       p.tools_json ? p.tools_json : "none");
	api_params_free(&p);
	rc = chat("{" MSGS "," TOOLS ",\"tool_choice\":\"none\"}", &p, &e);
	tap_ok(rc == 0 && !p.tools_json && p.tool_choice == API_TOOL_NONE,
	       "tool_choice none: no tools passed on");
	api_params_free(&p);
	rc = chat("{" MSGS "," TOOLS ",\"tool_choice\":{\"type\":\"function\",\"function\":"
		  "{\"name\":\"get_weather\"}}}", &p, &e);
	tap_ok(rc == 0 && p.tool_choice == API_TOOL_FUNCTION && p.tool_name &&
	       !strcmp(p.tool_name, "get_weather"), "tool_choice naming a function");
	api_params_free(&p);
	rc = chat("{\"messages\":[{\"role\":\"user\",\"content\":\"w?\"},{\"role\":\"assistant\","
		  "\"content\":null,\"reasoning_content\":\"r\",\"tool_calls\":[{\"id\":\"c1\",\"type\":"
		  "\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"a\\\":1}\"}},"
		  "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":{\"b\":2}}}]},"
		  "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"21\"}]}", &p, &e);
	tap_ok(rc == 0 && p.n_msgs == 3 && p.msgs[1].n_calls == 2 && !strcmp(p.msgs[1].content, "") &&
	       !strcmp(p.msgs[1].reasoning, "r") && !strcmp(p.msgs[1].calls[0].id, "c1") &&
	       !strcmp(p.msgs[1].calls[0].arguments, "{\"a\":1}") &&
	       !strcmp(p.msgs[1].calls[1].arguments, "{\"b\":2}") && !strcmp(p.msgs[2].role, "tool") &&
	       !strcmp(p.msgs[2].tool_call_id, "c1") && !strcmp(p.msgs[2].content, "21"),
	       "an assistant's tool_calls (string and object arguments) and a tool result (%s)",
	       rc ? e.msg : "ok");
	api_params_free(&p);
	rc = chat("{" MSGS ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\\\"b\"}}]}",
		  &p, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "tools[0].function.name"),
	       "a function name with a quote is refused, naming tools[0].function.name (%s)", e.msg);
	api_params_free(&p);
	rc = chat("{" MSGS "," TOOLS ",\"tool_choice\":\"required\",\"stream\":1}", &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "stream"), "other fields are still checked with tools");
	api_params_free(&p);
	rc = chat("{\"messages\":[{\"role\":\"user\",\"content\":null}]}", &p, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "messages[0].content"),
	       "a user message with null content: 400 naming messages[0].content (%s)", e.msg);
	api_params_free(&p);
	rc = chat("{\"messages\":[{\"role\":\"system\",\"content\":\"s\"},{\"role\":\"user\"}]}",
		  &p, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "messages[1].content"),
	       "a user message without content: 400 naming messages[1].content (%s)", e.msg);
	api_params_free(&p);
	rc = chat("{\"messages\":[{\"role\":\"tool\",\"content\":\"x\"}]," TOOLS "}", &p, &e);
	tap_ok(rc == 0 && !strcmp(p.msgs[0].role, "tool") && !p.msgs[0].tool_call_id,
	       "a tool message without tool_call_id parses (the template decides; llama-server is lenient)");
	api_params_free(&p);
	memset(&e, 0, sizeof(e));
	body = "{\"input\":[{\"role\":\"tool\",\"content\":\"x\"}]}";
	rc = api_parse(API_RESPONSES, body, strlen(body), &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "input[0].role"),
	       "/v1/responses has no tool role: 400 naming input[0].role (%s)", e.msg);
	api_params_free(&p);
}

/* @body (after MSGS) is a 400 naming @param. */
static bool bad_field(const char *extra, const char *param)
{
	char body[1024];
	struct api_params p;
	struct api_error e;
	int rc;

	snprintf(body, sizeof(body), "{" MSGS ",%s}", extra);
	rc = chat(body, &p, &e);
	api_params_free(&p);
	return rc == -1 && e.status == 400 && !strcmp(e.param, param) &&
	       !strcmp(e.type, "invalid_request_error");
}

static void test_penalties(const struct tokenizer *tk)
{
	static const struct { const char *extra, *param; } bad[] = {
		{ "\"presence_penalty\":2.01", "presence_penalty" },
		{ "\"presence_penalty\":-2.5", "presence_penalty" },
		{ "\"presence_penalty\":\"1\"", "presence_penalty" },
		{ "\"frequency_penalty\":3", "frequency_penalty" },
		{ "\"frequency_penalty\":-2.0001", "frequency_penalty" },
		{ "\"repeat_penalty\":-0.1", "repeat_penalty" },
		{ "\"repeat_penalty\":true", "repeat_penalty" },
		{ "\"repeat_last_n\":-2", "repeat_last_n" },
		{ "\"repeat_last_n\":1.5", "repeat_last_n" },
		{ "\"min_p\":1.5", "min_p" },
		{ "\"min_p\":-0.01", "min_p" },
		{ "\"logit_bias\":{\"abc\":1}", "logit_bias" },
		{ "\"logit_bias\":{\"-1\":1}", "logit_bias" },
		{ "\"logit_bias\":{\"1.5\":1}", "logit_bias" },
		{ "\"logit_bias\":{\"\":1}", "logit_bias" },
		{ "\"logit_bias\":{\"99999999999\":1}", "logit_bias" },
		{ "\"logit_bias\":{\"5\":100.5}", "logit_bias" },
		{ "\"logit_bias\":{\"5\":-101}", "logit_bias" },
		{ "\"logit_bias\":{\"5\":\"-100\"}", "logit_bias" },
		{ "\"logit_bias\":[[5]]", "logit_bias" },
		{ "\"logit_bias\":[[\"Hello\",101]]", "logit_bias" },
		{ "\"logit_bias\":[[\"Hello\"]]", "logit_bias" },
		{ "\"logit_bias\":[[[1],1]]", "logit_bias" },
		{ "\"logit_bias\":[[5,true]]", "logit_bias" },
		{ "\"logit_bias\":[5,1]", "logit_bias" },
		{ "\"logit_bias\":\"5:1\"", "logit_bias" },
	};
	struct api_params p;
	struct api_error e;
	size_t i;
	char *big;
	int rc, k;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tap_ok(bad_field(bad[i].extra, bad[i].param), "%s is a 400 naming '%s'",
		       bad[i].extra, bad[i].param);

	rc = chat("{" MSGS "}", &p, &e);
	tap_ok(rc == 0 && p.s.presence_penalty == 0 && p.s.frequency_penalty == 0 &&
	       p.s.repeat_penalty == 1.0f && p.s.repeat_last_n == 64 && p.s.min_p == 0 &&
	       p.s.n_bias == 0 && !p.s.bias,
	       "defaults: presence/frequency 0, repeat_penalty 1, repeat_last_n 64, min_p 0, no bias");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"presence_penalty\":-2,\"frequency_penalty\":2,\"repeat_penalty\":1.3,"
		  "\"repeat_last_n\":-1,\"min_p\":0.05}", &p, &e);
	tap_ok(rc == 0 && p.s.presence_penalty == -2.0f && p.s.frequency_penalty == 2.0f &&
	       p.s.repeat_penalty == 1.3f && p.s.repeat_last_n == -1 && p.s.min_p == 0.05f,
	       "the range ends and repeat_last_n -1 are accepted with their values");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"logit_bias\":{\"7\":-100,\"12\":2.5,\"0\":100}}", &p, &e);
	tap_ok(rc == 0 && p.s.n_bias == 3 && p.s.bias == p.bias &&
	       p.bias[0].id == 7 && p.bias[0].bias == -100.0f &&
	       p.bias[1].id == 12 && p.bias[1].bias == 2.5f &&
	       p.bias[2].id == 0 && p.bias[2].bias == 100.0f,
	       "OpenAI logit_bias {\"7\":-100,\"12\":2.5,\"0\":100} -> 3 entries in order");
	tap_ok(rc == 0 && api_check_bias(&p, 13, &e) == 0, "ids 0..12 fit a vocabulary of 13");
	memset(&e, 0, sizeof(e));
	tap_ok(rc == 0 && api_check_bias(&p, 12, &e) == -1 && e.status == 400 &&
	       !strcmp(e.param, "logit_bias") && strstr(e.msg, "12"),
	       "id 12 outside a vocabulary of 12 is a 400 naming logit_bias (%s)", e.msg);
	api_params_free(&p);

	rc = chat("{" MSGS ",\"logit_bias\":[[3,false],[4,-0.5]]}", &p, &e);
	tap_ok(rc == 0 && p.s.n_bias == 2 && p.bias[0].id == 3 && isinf(p.bias[0].bias) &&
	       p.bias[0].bias < 0 && p.bias[1].id == 4 && p.bias[1].bias == -0.5f,
	       "llama-server logit_bias [[3,false],[4,-0.5]]: 3 banned (-inf), 4 -0.5");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"logit_bias\":{}}", &p, &e);
	tap_ok(rc == 0 && p.s.n_bias == 0, "an empty logit_bias is no bias");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"logit_bias\":[[\"Once upon\",-2],[9,false]]}", &p, &e);
	tap_ok(rc == 0 && p.n_bias == 1 && p.n_bias_text == 1 && p.bias[0].id == 9 &&
	       !strcmp(p.bias_text[0].text, "Once upon") && p.bias_text[0].bias == -2.0f,
	       "llama-server logit_bias [[\"Once upon\",-2],[9,false]]: one id, one text kept");
	if (tk) {
		int32_t want[16];
		int nw = tok_encode(tk, "Once upon", false, want, 16), j;
		bool same;

		memset(&e, 0, sizeof(e));
		same = rc == 0 && nw > 0 && api_resolve_bias(&p, tk, &e) == 0 &&
		       p.n_bias == 1 + nw && p.s.n_bias == p.n_bias && p.s.bias == p.bias;
		for (j = 0; same && j < nw; j++)
			same = p.bias[1 + j].id == want[j] && p.bias[1 + j].bias == -2.0f;
		tap_ok(same, "api_resolve_bias: \"Once upon\" becomes its %d tokens (no BOS), each -2 (%s)",
		       nw, e.msg);
	}
	api_params_free(&p);
	if (tk) {
		rc = chat("{" MSGS ",\"logit_bias\":[[600,1]]}", &p, &e);
		memset(&e, 0, sizeof(e));
		tap_ok(rc == 0 && api_resolve_bias(&p, tk, &e) == -1 && !strcmp(e.param, "logit_bias"),
		       "api_resolve_bias: id 600 outside stories260K's 512 is a 400 naming logit_bias");
		api_params_free(&p);
	}

	/* API_MAX_BIAS entries pass, one more is a 400 */
	big = malloc(16 * (API_MAX_BIAS + 1) + 256);
	for (k = API_MAX_BIAS; big && k <= API_MAX_BIAS + 1; k++) {
		size_t o = (size_t)sprintf(big, "{" MSGS ",\"logit_bias\":{");
		int j;

		for (j = 0; j < k; j++)
			o += (size_t)sprintf(big + o, "%s\"%d\":1", j ? "," : "", j);
		sprintf(big + o, "}}");
		rc = chat(big, &p, &e);
		if (k == API_MAX_BIAS)
			tap_ok(rc == 0 && p.n_bias == API_MAX_BIAS, "%d logit_bias entries are accepted", k);
		else
			tap_ok(rc == -1 && !strcmp(e.param, "logit_bias"),
			       "%d logit_bias entries are a 400 naming logit_bias", k);
		api_params_free(&p);
	}
	free(big);
}

/* Parse @body as a /v1/responses request. */
static int resp(const char *body, struct api_params *p, struct api_error *e)
{
	memset(e, 0, sizeof(*e));
	return api_parse(API_RESPONSES, body, strlen(body), p, e);
}

#define RTOOLS "\"tools\":[{\"type\":\"function\",\"name\":\"get_weather\",\"description\":\"d\"," \
	"\"parameters\":{\"type\":\"object\"},\"strict\":true},{\"type\":\"function\",\"name\":\"f\"}]"

/* Flat tools and tool_choice of /v1/responses, validated as chat's. */
static void test_responses_tools(void)
{
	struct api_params p;
	struct api_error e;
	int rc;

	rc = resp("{\"input\":\"w?\"," RTOOLS ",\"parallel_tool_calls\":false}", &p, &e);
	tap_ok(rc == 0 && p.tools_json && p.one_call && p.tool_choice == API_TOOL_AUTO &&
	       !strcmp(p.tools_json, "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
		       "\"description\":\"d\",\"parameters\":{\"type\":\"object\"},\"strict\":true}},"
		       "{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]"),
	       "responses: flat tools reach the template in the chat shape, parallel_tool_calls false (%s)",
	       p.tools_json ? p.tools_json : e.msg);
	api_params_free(&p);
	rc = resp("{\"input\":\"w?\"," RTOOLS ",\"tool_choice\":{\"type\":\"function\",\"name\":\"f\"}}",
		  &p, &e);
	tap_ok(rc == 0 && p.tool_choice == API_TOOL_FUNCTION && !strcmp(p.tool_name, "f"),
	       "responses: tool_choice {type: function, name: f}");
	api_params_free(&p);
	rc = resp("{\"input\":\"w?\"," RTOOLS ",\"tool_choice\":\"none\"}", &p, &e);
	tap_ok(rc == 0 && !p.tools_json && p.tool_choice == API_TOOL_NONE,
	       "responses: tool_choice none passes no tools");
	api_params_free(&p);
	rc = resp("{\"input\":\"w?\",\"tools\":[{\"type\":\"function\",\"name\":\"f\"},"
		  "{\"type\":\"code_interpreter\",\"container\":{\"type\":\"auto\"}}]}", &p, &e);
	tap_ok(rc == 0 && p.tools_json && !strcmp(p.tools_json, "[{\"type\":\"function\","
						     "\"function\":{\"name\":\"f\"}}]") &&
	       json_array_size(p.tools_given) == 2,
	       "responses: a hosted tool is a declaration: taken, echoed, not offered (%s)",
	       rc ? e.msg : p.tools_json);
	api_params_free(&p);
	rc = resp("{\"input\":\"w?\",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]}",
		  &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "tools[0].name") && strstr(e.msg, "flat"),
	       "responses: a chat-shaped tool is a 400 saying tools are flat (%s)", e.msg);
	api_params_free(&p);
	rc = resp("{\"input\":\"w?\",\"tools\":[{\"type\":\"function\",\"name\":\"f\"},"
		  "{\"type\":\"function\",\"name\":\"f\"}]}", &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "tools[1].name"), "responses: duplicate names: tools[1].name");
	api_params_free(&p);
	rc = resp("{\"input\":\"w?\"," RTOOLS ",\"tool_choice\":{\"type\":\"function\","
		  "\"function\":{\"name\":\"f\"}}}", &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "tool_choice"),
	       "responses: a chat-shaped tool_choice is a 400 naming tool_choice (%s)", e.msg);
	api_params_free(&p);
	rc = chat("{" MSGS ",\"tools\":[{\"type\":\"web_search\"}]}", &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "tools[0].type"),
	       "chat shares the validator: a web_search tool is a 400 naming tools[0].type");
	api_params_free(&p);
}

#define CALL(id, n) "{\"type\":\"function_call\",\"call_id\":\"" id "\",\"name\":\"" n \
	"\",\"arguments\":\"{}\"}"
#define OUT(id, o) "{\"type\":\"function_call_output\",\"call_id\":\"" id "\",\"output\":" o "}"

/* Input items as the chat messages they stand for. */
static void test_responses_input(void)
{
	struct api_params p;
	struct api_error e;
	int rc;

	rc = resp("{\"instructions\":\"be brief\",\"input\":[{\"role\":\"user\",\"content\":\"w?\"},"
		  "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[],\"content\":[{\"type\":"
		  "\"reasoning_text\",\"text\":\"think\"}]},{\"type\":\"message\",\"role\":\"assistant\","
		  "\"content\":[{\"type\":\"output_text\",\"text\":\"I will check.\"}]},"
		  CALL("c1", "get_weather") "," CALL("c2", "f") "," OUT("c2", "\"r2\"") ","
		  OUT("c1", "[{\"type\":\"input_text\",\"text\":\"r\"},{\"type\":\"input_text\","
		  "\"text\":\"1\"}]") ",{\"role\":\"developer\",\"content\":\"d\"}]}", &p, &e);
	tap_ok(rc == 0 && p.n_msgs == 6 && !strcmp(p.msgs[0].role, "system") &&
	       !strcmp(p.msgs[1].role, "user") && !strcmp(p.msgs[2].role, "assistant") &&
	       !strcmp(p.msgs[2].content, "I will check.") && !strcmp(p.msgs[2].reasoning, "think") &&
	       p.msgs[2].n_calls == 2 && !strcmp(p.msgs[2].calls[1].id, "c2") &&
	       !strcmp(p.msgs[2].calls[1].name, "f") && !strcmp(p.msgs[2].calls[1].arguments, "{}") &&
	       p.msgs[2].item == 2 && !strcmp(p.msgs[3].role, "tool") &&
	       !strcmp(p.msgs[3].tool_call_id, "c2") && !strcmp(p.msgs[3].name, "f") &&
	       !strcmp(p.msgs[3].content, "r2") && !strcmp(p.msgs[4].content, "r1") &&
	       !strcmp(p.msgs[4].name, "get_weather") && p.msgs[4].item == 6 &&
	       !strcmp(p.msgs[5].role, "system"),
	       "responses input: reasoning + message + two calls are one assistant turn, outputs are tool messages (%s)",
	       rc ? e.msg : "ok");
	api_params_free(&p);
	rc = resp("{\"input\":[{\"role\":\"user\",\"content\":\"w?\"},{\"type\":\"reasoning\","
		  "\"summary\":[{\"type\":\"summary_text\",\"text\":\"a\"},{\"type\":\"summary_text\","
		  "\"text\":\"b\"}]}," CALL("c1", "f") "," OUT("c1", "\"x\"") "," CALL("c2", "f") "]}",
		  &p, &e);
	tap_ok(rc == 0 && p.n_msgs == 4 && p.msgs[1].n_calls == 1 &&
	       !strcmp(p.msgs[1].reasoning, "a\n\nb") && !strcmp(p.msgs[1].content, "") &&
	       p.msgs[3].n_calls == 1 && !p.msgs[3].reasoning && p.msgs[3].item == 4,
	       "responses input: a summary is the reasoning; a call after an output starts a new turn (%s)",
	       rc ? e.msg : "ok");
	api_params_free(&p);
	rc = resp("{\"input\":[{\"role\":\"user\",\"content\":\"w?\"}," CALL("c1", "f") ","
		  OUT("c9", "\"x\"") "]}", &p, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "input[2].call_id") &&
	       strstr(e.msg, "c9"), "responses input: a call_id naming no call is a 400 naming input[2].call_id (%s)",
	       e.msg);
	api_params_free(&p);
	rc = resp("{\"instructions\":\"i\",\"input\":[" OUT("c1", "\"x\"") "]}", &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "input[0].call_id"),
	       "responses input: an output with no call before it: input[0].call_id (%s)", e.msg);
	api_params_free(&p);
	rc = resp("{\"input\":[{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"f\","
		  "\"arguments\":{}}]}", &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "input[0].arguments"),
	       "responses input: arguments must be a string: input[0].arguments");
	api_params_free(&p);
	rc = resp("{\"input\":[{\"type\":\"file_search_call\",\"id\":\"x\"}]}", &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "input[0].type") && strstr(e.msg, "file_search_call"),
	       "responses input: an item we cannot take is a 400 naming input[0].type (%s)", e.msg);
	api_params_free(&p);
	rc = resp("{\"input\":[{\"type\":\"reasoning\",\"summary\":[]}]}", &p, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "input"),
	       "responses input: only a reasoning item is a 400 (nothing to answer)");
	api_params_free(&p);
}

/* @p's schema accepts @doc whole. */
static bool takes(struct api_params *p, const char *doc)
{
	struct jm_state *st = p->schema ? jm_new(p->schema) : NULL;
	bool ok = st && jm_feed(st, doc, strlen(doc)) && jm_accepting(st);

	jm_free(st);
	return ok;
}

static int parse(enum api_kind k, const char *body, struct api_params *p, struct api_error *e)
{
	memset(e, 0, sizeof(*e));
	return api_parse(k, body, strlen(body), p, e);
}

static void test_format(void)
{
	static const struct { enum api_kind k; const char *body, *param, *msg; } bad[] = {
		{ API_CHAT, "{" MSGS ",\"response_format\":{\"type\":\"sound\"}}", "response_format.type", "'sound'" },
		{ API_CHAT, "{" MSGS ",\"response_format\":\"json\"}", "response_format", "must be an object" },
		{ API_CHAT, "{" MSGS ",\"response_format\":{\"type\":\"json_schema\"}}", "response_format.json_schema", "must be an object" },
		{ API_CHAT, "{" MSGS ",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\"}}}",
		  "response_format.json_schema.schema", "is required" },
		{ API_CHAT, "{" MSGS ",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":1,\"schema\":{}}}}",
		  "response_format.json_schema.name", "must be a string" },
		{ API_CHAT, "{" MSGS ",\"response_format\":{\"type\":\"json_object\",\"schema\":123}}", "response_format.schema",
		  "must be an object or a boolean" },
		{ API_CHAT, "{" MSGS ",\"response_format\":{\"type\":\"json_object\",\"schema\":{\"type\":123}}}",
		  "response_format.schema", "'type' must be" },
		{ API_CHAT, "{" MSGS ",\"response_format\":{\"type\":\"json_object\",\"schema\":{\"type\":\"hiccup\"}}}",
		  "response_format.schema", "'hiccup' is not a JSON type" },
		{ API_CHAT, "{" MSGS ",\"json_schema\":{\"type\":\"string\",\"pattern\":\"a(?!b)\"}}", "json_schema",
		  "'pattern' 'a(?!b)': look-ahead '(?!' is not supported (at offset 1)" },
		{ API_CHAT, "{" MSGS ",\"json_schema\":{\"properties\":{\"p\":{\"type\":\"number\",\"multipleOf\":0.1}}}}",
		  "json_schema", "'multipleOf' 0.1 is not supported: only integers and multiples of 2^-16" },
		{ API_COMPLETION, "{\"prompt\":\"x\",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{}}}",
		  "response_format.json_schema.schema", "is required" },
		{ API_RESPONSES, "{\"input\":\"x\",\"text\":{\"format\":{\"type\":\"json_schema\",\"name\":\"n\"}}}",
		  "text.format.schema", "is required" },
		{ API_RESPONSES, "{\"input\":\"x\",\"text\":{\"format\":{\"type\":\"xml\"}}}", "text.format.type", "'xml'" },
		{ API_RESPONSES, "{\"input\":\"x\",\"text\":5}", "text", "must be an object" },
	};
	struct api_params p;
	struct api_error e;
	size_t i, good = 0;
	int rc;

	rc = parse(API_CHAT, "{" MSGS ",\"response_format\":{\"type\":\"text\"}}", &p, &e);
	tap_ok(rc == 0 && !p.schema, "response_format text: no schema");
	api_params_free(&p);
	rc = parse(API_CHAT, "{" MSGS ",\"response_format\":{\"type\":\"json_object\"}}", &p, &e);
	tap_ok(rc == 0 && takes(&p, "{\"a\":[1]}") && !takes(&p, "[1]") && !takes(&p, "\"x\""),
	       "response_format json_object: any object, not an array or a string");
	api_params_free(&p);
	rc = parse(API_CHAT, "{" MSGS ",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":"
		   "{\"name\":\"n\",\"strict\":true,\"schema\":{\"const\":\"foooooo\"}}}}", &p, &e);
	tap_ok(rc == 0 && takes(&p, "\"foooooo\"") && !takes(&p, "\"foo\""),
	       "response_format json_schema: the schema's language (%s)", e.msg);
	api_params_free(&p);
	rc = parse(API_CHAT, "{" MSGS ",\"json_schema\":{\"items\":[{\"type\":\"integer\"}]}}", &p, &e);
	tap_ok(rc == 0 && takes(&p, "[ -3000 ]") && !takes(&p, "[1,2]"), "top-level json_schema (llama-server)");
	api_params_free(&p);
	rc = parse(API_COMPLETION, "{\"prompt\":\"x\",\"response_format\":{\"type\":\"json_schema\","
		   "\"json_schema\":{\"schema\":{\"enum\":[1,2]}}}}", &p, &e);
	tap_ok(rc == 0 && takes(&p, "2") && !takes(&p, "3"), "completions response_format json_schema");
	api_params_free(&p);
	rc = parse(API_COMPLETION, "{\"prompt\":\"x\",\"json_schema\":{\"type\":\"boolean\"}}", &p, &e);
	tap_ok(rc == 0 && takes(&p, "true") && !takes(&p, "1"), "completions top-level json_schema");
	api_params_free(&p);
	rc = parse(API_RESPONSES, "{\"input\":\"x\",\"text\":{\"format\":{\"type\":\"json_schema\",\"name\":\"n\","
		   "\"schema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"required\":[\"a\"]}}}}",
		   &p, &e);
	tap_ok(rc == 0 && takes(&p, "{\"a\":\"b\"}") && !takes(&p, "{}"), "responses text.format json_schema");
	api_params_free(&p);
	rc = parse(API_RESPONSES, "{\"input\":\"x\",\"text\":{\"format\":{\"type\":\"json_object\"}}}", &p, &e);
	tap_ok(rc == 0 && takes(&p, "{}"), "responses text.format json_object");
	api_params_free(&p);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = parse(bad[i].k, bad[i].body, &p, &e);
		if (rc == -1 && e.status == 400 && !strcmp(e.param, bad[i].param) && strstr(e.msg, bad[i].msg))
			good++;
		else
			printf("#   %s: %d %s '%s'\n", bad[i].body, e.status, e.param, e.msg);
		api_params_free(&p);
	}
	tap_ok(good == sizeof(bad) / sizeof(bad[0]), "%zu malformed formats: each a 400 naming its field (%zu right)",
	       sizeof(bad) / sizeof(bad[0]), good);
}

/* @doc is a whole document of @s (fed at once). */
static bool whole(struct jm_schema *s, const char *doc)
{
	struct jm_state *st = s ? jm_new(s) : NULL;
	bool ok = st && jm_feed(st, doc, strlen(doc)) && jm_accepting(st);

	jm_free(st);
	return ok;
}

#define TOOL_F "{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"object\"}}}"
#define FMT_A ",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"a\",\"schema\":" \
	"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},\"required\":[\"a\"]}}}"
#define CALL_F "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1}}\n</tool_call>"

/* Structured output with tools: calls or a document, once the template is known. */
static void test_format_tools(void)
{
	struct chat_template json_ct = { .tools = CHAT_TOOLS_JSON, .name = "qwen2.5" },
			     xml_ct = { .tools = CHAT_TOOLS_XML, .name = "qwen3.5" },
			     plain = { .tools = CHAT_TOOLS_NONE, .name = "plain" };
	struct api_params p;
	struct api_error e;
	int rc;

	rc = chat("{" MSGS ",\"tools\":[" TOOL_F "]" FMT_A "}", &p, &e);
	rc = rc ? rc : api_resolve_format(&p, &json_ct, &e);
	tap_ok(!rc && whole(p.schema, "{\"a\":1}") && whole(p.schema, CALL_F) &&
	       !whole(p.schema, "{\"b\":1}") && !whole(p.schema, "hello"),
	       "chat: response_format with tools: a document of the schema or a call of 'f', nothing else (%d %s)",
	       rc, rc ? e.msg : "");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"tools\":[" TOOL_F "],\"tool_choice\":\"required\"" FMT_A "}", &p, &e);
	rc = rc ? rc : api_resolve_format(&p, &plain, &e);
	tap_ok(!rc && whole(p.schema, "{\"name\": \"f\", \"arguments\": {}}\n</tool_call>") &&
	       !whole(p.schema, "{\"a\":1}"),
	       "tool_choice required with a schema, generic route: calls only, from inside the first");
	api_params_free(&p);

	/* No schema: tool_choice required or a named function are calls only. */
	rc = chat("{" MSGS ",\"tools\":[" TOOL_F "],\"tool_choice\":\"required\"}", &p, &e);
	rc = rc ? rc : api_resolve_format(&p, &json_ct, &e);
	tap_ok(!rc && p.schema && whole(p.schema, "{\"name\": \"f\", \"arguments\": {}}\n</tool_call>") &&
	       !whole(p.schema, "hello") && !whole(p.schema, "{\"a\":1}"),
	       "tool_choice required without a schema: calls only, no free text (%d %s)", rc,
	       rc ? e.msg : "");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"tools\":[" TOOL_F ",{\"type\":\"function\",\"function\":{\"name\":\"g\",\"strict\":true,"
		  "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"maxLength\":10}},"
		  "\"required\":[\"city\"],\"additionalProperties\":false}}}],"
		  "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"g\"}}}", &p, &e);
	rc = rc ? rc : api_resolve_format(&p, &plain, &e);
	tap_ok(!rc && p.schema && whole(p.schema, "{\"city\": \"Paris\"}}\n</tool_call>") &&
	       !whole(p.schema, "\"Atef\"}\n</tool_call>") &&
	       !whole(p.schema, "{\"city\": \"Paris is big\"}}\n</tool_call>") &&
	       !whole(p.schema, "{}}\n</tool_call>"),
	       "a named strict function without a schema: its arguments follow its parameters (%d %s)",
	       rc, rc ? e.msg : "");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"tools\":[" TOOL_F "]}", &p, &e);
	rc = rc ? rc : api_resolve_format(&p, &json_ct, &e);
	tap_ok(!rc && !p.schema, "tool_choice auto without a schema: free text or calls, unconstrained");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"tools\":[" TOOL_F "],\"tool_choice\":\"required\"}", &p, &e);
	rc = rc ? rc : api_resolve_format(&p, &xml_ct, &e);
	tap_ok(!rc && !p.schema, "tool_choice required, an XML template: no grammar (the reply prefix only)");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"tools\":[" TOOL_F "],\"tool_choice\":\"none\"" FMT_A "}", &p, &e);
	rc = rc ? rc : api_resolve_format(&p, &json_ct, &e);
	tap_ok(!rc && whole(p.schema, "{\"a\":1}") && !whole(p.schema, CALL_F),
	       "tool_choice none with a schema: the schema only");
	api_params_free(&p);

	{
		static const char b[] = "{\"input\":\"x\",\"tools\":[{\"type\":\"function\",\"name\":\"f\"}],"
					"\"text\":{\"format\":{\"type\":\"json_object\"}}}";

		rc = api_parse(API_RESPONSES, b, strlen(b), &p, &e);
	}
	rc = rc ? rc : api_resolve_format(&p, &json_ct, &e);
	tap_ok(!rc && whole(p.schema, "{}") && whole(p.schema, CALL_F),
	       "responses: text.format with tools: a document or a call (%d %s)", rc, rc ? e.msg : "");
	api_params_free(&p);

	rc = chat("{" MSGS ",\"tools\":[" TOOL_F "]" FMT_A "}", &p, &e);
	rc = rc ? rc : api_resolve_format(&p, &xml_ct, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "response_format") &&
	       strstr(e.msg, "XML tool-call form (qwen3.5 template)"),
	       "a template whose calls are XML: a 400 naming response_format (%s)", e.msg);
	api_params_free(&p);

	rc = chat("{" MSGS ",\"tools\":[" TOOL_F ",{\"type\":\"function\",\"function\":{\"name\":\"g\",\"strict\":true,"
		  "\"parameters\":{\"type\":\"object\",\"properties\":{\"x\":{\"not\":{}}}}}}]" FMT_A "}", &p, &e);
	rc = rc ? rc : api_resolve_format(&p, &json_ct, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "tools[1].function.parameters") &&
	       strstr(e.msg, "'not' is not supported (at properties.x)"),
	       "a strict tool's parameters we cannot follow: a 400 naming them (%s: %s)", e.param, e.msg);
	api_params_free(&p);
}

int main(void)
{
	test_format();
	test_format_tools();
	test_tools();
	test_responses_tools();
	test_responses_input();
	test_prompt();
	test_seed();
	test_sampling();
	{
		const char *path = getenv("RK1828_MODEL");
		char err[256];
		struct gguf_file *gf = gguf_open(path ? path : "../shared/models/stories260K.gguf",
						 err, sizeof(err));
		struct tokenizer *tk = gf ? tok_load(gf, err, sizeof(err)) : NULL;

		tap_ok(tk != NULL, "stories260K's tokenizer for the logit_bias texts (%s)",
		       tk ? "loaded" : err);
		test_penalties(tk);
		tok_free(tk);
		if (gf)
			gguf_close(gf);
	}
	return tap_done();
}
