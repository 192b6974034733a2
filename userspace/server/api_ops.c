// SPDX-License-Identifier: MIT
/*
 * The generation APIs, one row each (api_ops.h): OpenAI's chat
 * completions, completions and Responses, llama-server's POST /completion.
 */
#include "api_ops.h"
#include "api_native.h"
#include "gen.h"
#include "prompt.h"

static const struct api_ops ops[] = {
	[API_CHAT] = {
		.kind = API_CHAT, .prompt_param = "messages", .call_id_param = "tool_call_id",
		.tool_params = "tools[%u].function.parameters", .id_prefix = "chatcmpl-",
		.object = "chat.completion", .chunk_object = "chat.completion.chunk",
		.reply_parser = true, .parse = api_parse_chat, .tokenize = prompt_chat_tokens,
		.start = fmt_chat_start, .delta = fmt_chat_delta, .done = fmt_chat_done,
		.body = fmt_chat_body,
	},
	[API_COMPLETION] = {
		.kind = API_COMPLETION, .prompt_param = "prompt",
		.tool_params = "tools[%u].function.parameters", .id_prefix = "cmpl-",
		.object = "text_completion", .chunk_object = "text_completion",
		.parse = api_parse_completion, .tokenize = prompt_text_tokens,
		.delta = fmt_text_delta, .done = fmt_text_done, .body = fmt_text_body,
	},
	[API_RESPONSES] = {
		.kind = API_RESPONSES, .prompt_param = "input", .call_id_param = "call_id",
		.tool_params = "tools[%u].parameters", .items = true, .id_prefix = "resp_",
		.reply_parser = true, .parse = api_parse_responses, .tokenize = prompt_chat_tokens,
		.gen_init = fmt_resp_new, .start = fmt_resp_start, .delta = fmt_resp_delta,
		.done = fmt_resp_done, .body = fmt_resp_body,
	},
	/* POST /completion parses and tokenizes its own prompts (api_native.h). */
	[API_NATIVE] = {
		.kind = API_NATIVE, .prompt_param = "prompt",
		.tool_params = "tools[%u].function.parameters", .id_prefix = "resp_",
		.delta = native_delta, .done = native_done, .body = native_body,
	},
};

const struct api_ops *api_ops_of(enum api_kind kind)
{
	return &ops[kind];
}
