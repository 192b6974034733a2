/* SPDX-License-Identifier: MIT */
/*
 * Chat templates and tool calls: turn an OpenAI-style conversation into
 * the prompt a model was trained on (tokenizer.chat_template), and the
 * model's reply back into content, reasoning and structured tool calls.
 *
 * The template is recognised by its markers, not run as Jinja (the way
 * llama.cpp's llm_chat_detect_template works), and rendered by our code
 * for each family:
 *   - chatml ("<|im_start|>"): Qwen2/2.5/3/3.5 and generic ChatML. What a
 *     Qwen template adds is read from the template itself: its default
 *     system prompt, <think> handling (Qwen3: reasoning kept after the last
 *     user query; Qwen3.5: the generation prompt opens "<think>\n"), and
 *     its tool prompt (the literals around the <tools> list) with the
 *     tool-call format it asks for: JSON in <tool_call> (Qwen2.5/3) or
 *     <function=NAME><parameter=P> XML (Qwen3.5, Qwen3-Coder);
 *   - llama3 ("<|start_header_id|>"), with the "Cutting Knowledge Date"
 *     system header of Llama 3.1+ when the template has one;
 *   - llama2 / mistral ("[INST]"): llama-2 with or without <<SYS>>, the
 *     v1, v3, v3-tekken and v7 Mistral variants;
 *   - plain: a model without a template (stories260K): the message
 *     contents joined by "\n", no markup, no generation prompt; so a
 *     single user message renders as itself.
 * A template with none of these markers falls back to generic chatml and
 * sets @fallback (the caller prints a warning).
 *
 * Tools with a template that has no tool format of its own (@tools ==
 * CHAT_TOOLS_NONE) take the generic route (chat_generic.c): the tool list
 * and the JSON <tool_call> form are described in the system message, past
 * calls and tool results are written as text the family renders, and the
 * reply is parsed in the JSON form.
 *
 * The renderer marks which bytes of the prompt are the template's own
 * (struct chat_prompt.special): only there do special tokens such as
 * <|im_start|> become tokens (tokenizer.h); message contents are always
 * plain text. BOS is not part of the text: chat_encode() adds it when the
 * vocabulary wants it (tokenizer.ggml.add_bos_token), as llama.cpp does.
 *
 * Thread safety: a struct chat_template is read-only after
 * chat_template_init(); parsers are per reply.
 */
#ifndef RK_LLM_CHAT_H
#define RK_LLM_CHAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tokenizer.h"

enum chat_family {
	CHAT_PLAIN,
	CHAT_CHATML,
	CHAT_LLAMA3,
	CHAT_LLAMA2,
	CHAT_MISTRAL,
};

/* How the template asks the model to call tools. */
enum chat_tool_style {
	CHAT_TOOLS_NONE,	/* the template renders no tools */
	CHAT_TOOLS_JSON,	/* <tool_call>\n{"name": N, "arguments": {...}}\n</tool_call> */
	CHAT_TOOLS_XML,		/* <tool_call>\n<function=N>\n<parameter=P>\nV\n</parameter>... */
};

#define CHAT_TEXT_MAX 2048

/**
 * struct chat_template - a recognised template
 * @family: see above
 * @name: short name for logs ("qwen3.5", "qwen3", "qwen2.5", "qwen2",
 *	"chatml", "llama3", "llama3.1", "llama2", "llama2-sys", "mistral-v1",
 *	"mistral-v3", "mistral-v3-tekken", "mistral-v7", "plain")
 * @fallback: the template was not recognised; rendered as chatml
 * @tools: tool-call format; CHAT_TOOLS_NONE = tools cannot be rendered
 * @think: the template knows <think> reasoning blocks
 * @think_open: its generation prompt opens "<think>\n" unless thinking is off
 * @trim: message contents are trimmed (Qwen3.5, llama3)
 * @default_system: system prompt used when the conversation has none ("")
 * @tools_pre: text before the tool list (ends with "<tools>")
 * @tools_post: text after it (starts with "\n</tools>")
 * @system_after_tools: the system message follows the tool prompt (Qwen3.5)
 *	instead of preceding it
 * @knowledge: llama3.1: the "Cutting Knowledge Date" line ("" = none)
 * @date: llama3.1: the "Today Date" value (the template's default, or today)
 * @variant: llama2/mistral sub-variant (chat_render.c)
 * @bos, @eos: BOS/EOS text of the vocabulary ("<s>", "</s>"), for the
 *	families that write them between turns
 */
struct chat_template {
	enum chat_family family;
	char name[24];
	bool fallback;
	enum chat_tool_style tools;
	bool think, think_open, trim;
	char default_system[256];
	char tools_pre[CHAT_TEXT_MAX];
	char tools_post[CHAT_TEXT_MAX];
	bool system_after_tools;
	char knowledge[128];
	char date[32];
	int variant;
	char bos[32], eos[32];
};

/**
 * chat_template_init() - recognise @tmpl
 * @ct: out
 * @tmpl: tokenizer.chat_template text, or NULL/"" for none (plain)
 * @len: bytes of @tmpl
 * @tok: the model's tokenizer (for BOS/EOS text) or NULL
 *
 * Never fails: an unknown template is chatml with @ct->fallback set.
 */
void chat_template_init(struct chat_template *ct, const char *tmpl, size_t len,
			const struct tokenizer *tok);

/**
 * struct chat_tool_call - one call, as in an OpenAI assistant message
 * @id: call id ("call_..."; may be NULL in input)
 * @name: function name
 * @arguments: the arguments as JSON object text
 * @complete: parsed replies: the call's closing tag came (a call cut off
 *	by the end of the reply has its arguments as far as they came, or,
 *	in the XML form, closed after its last whole parameter); ignored in
 *	input
 */
struct chat_tool_call {
	const char *id;
	const char *name;
	const char *arguments;
	bool complete;
};

/**
 * struct chat_msg - one message of the conversation
 * @role: "system", "user", "assistant" or "tool" ("developer" = system)
 * @content: text, or NULL for none (an assistant message with only calls)
 * @reasoning: assistant reasoning_content, or NULL
 * @tool_calls, @n_tool_calls: calls the assistant made
 * @tool_call_id: role "tool": the call answered
 * @name: role "tool": the function's name, or NULL
 */
struct chat_msg {
	const char *role;
	const char *content;
	const char *reasoning;
	const struct chat_tool_call *tool_calls;
	int n_tool_calls;
	const char *tool_call_id;
	const char *name;
};

/* Thinking for the generation prompt. */
enum chat_thinking {
	CHAT_THINK_DEFAULT = -1,	/* what the template does by default */
	CHAT_THINK_OFF = 0,		/* Qwen3/3.5: an empty <think></think> block */
	CHAT_THINK_ON = 1,
};

/*
 * OpenAI tool_choice with tools given ("none": pass no tools instead).
 * REQUIRED and FUNCTION start the reply inside a <tool_call> (and, for
 * FUNCTION, with the function's name): the prompt ends with that text,
 * reasoning is switched off for the turn, and chat_prompt.reply_prefix
 * holds the text so that the parser sees the call from its start.
 */
enum chat_tool_choice {
	CHAT_TOOL_AUTO = 0,	/* the model decides */
	CHAT_TOOL_REQUIRED,	/* some call */
	CHAT_TOOL_FUNCTION,	/* a call of chat_opts.tool_name */
};

/**
 * struct chat_opts - rendering options
 * @add_generation_prompt: end with the assistant's header (the usual
 *	case); without it a trailing assistant message stays open (prefill)
 * @thinking: enum chat_thinking
 * @tools_json: the OpenAI "tools" array as JSON text, or NULL
 * @tool_choice: enum chat_tool_choice (with @tools_json)
 * @tool_name: the function for CHAT_TOOL_FUNCTION (one of @tools_json's)
 */
struct chat_opts {
	bool add_generation_prompt;
	int thinking;
	const char *tools_json;
	int tool_choice;
	const char *tool_name;
};

/**
 * struct chat_prompt - a rendered prompt
 * @text: NUL-terminated UTF-8 (malloc'ed)
 * @len: bytes of @text
 * @special: the template's own byte ranges (sorted, disjoint): where
 *	special tokens are recognised
 * @n_special: number of ranges
 * @reply_in_think: the prompt ends inside an open <think> block, so the
 *	reply starts with reasoning (pass to chat_parser_new())
 * @reply_prefix: the start of the reply the prompt already wrote (the
 *	opening of a forced tool call, chat_tool_choice), "" when none: feed
 *	it to the parser before the generated text (malloc'ed)
 */
struct chat_prompt {
	char *text;
	size_t len;
	struct tok_span *special;
	size_t n_special;
	bool reply_in_think;
	char *reply_prefix;
};

/**
 * chat_render() - the prompt for @msgs
 * @ct: template
 * @msgs, @n: the conversation (n >= 1)
 * @o: options (NULL: generation prompt, default thinking, no tools)
 * @out: result, free with chat_prompt_free() (zeroed on failure)
 * @err, @errlen: reason on failure
 *
 * Return: 0; -EINVAL for an unknown role, a system message after the
 * first, a tool message without a preceding assistant call, @tools_json
 * that is not a JSON array of objects, a forced tool choice without
 * tools or naming a function they do not have; -ENOMEM.
 */
int chat_render(const struct chat_template *ct, const struct chat_msg *msgs, int n,
		const struct chat_opts *o, struct chat_prompt *out, char *err, size_t errlen);
void chat_prompt_free(struct chat_prompt *p);

/**
 * chat_encode() - tokenize a rendered prompt
 * @tok: tokenizer
 * @p: prompt
 * @flags: extra TOK_* flags (TOK_PARSE_SPECIAL: special tokens in the
 *	contents too, for testing templates by hand)
 * @ids: out, malloc'ed
 * @n: out, number of ids
 *
 * Adds BOS when tok_add_bos_default(); special tokens only in @p's
 * template ranges. Return: 0, -ENOMEM or -EINVAL.
 */
int chat_encode(const struct tokenizer *tok, const struct chat_prompt *p, unsigned int flags,
		int32_t **ids, int *n);

/* ---- the reply ---- */

enum chat_delta_kind {
	CHAT_DELTA_CONTENT,	/* @text: reply text */
	CHAT_DELTA_REASONING,	/* @text: text inside <think> */
	CHAT_DELTA_TOOL_BEGIN,	/* @index, @id, @name: a new call */
	CHAT_DELTA_TOOL_ARGS,	/* @index, @text: the next piece of its arguments JSON */
};

/**
 * struct chat_delta - one piece of the parsed reply, for streaming
 * @kind: what it is
 * @index: tool call index (0, 1, ...) for the TOOL kinds
 * @text, @len: the text (not NUL-terminated) for CONTENT/REASONING/ARGS
 * @id, @name: TOOL_BEGIN: the call id we made up ("call_<n>_<index>") and
 *	the function name (NUL-terminated)
 *
 * The TOOL_ARGS pieces of a call concatenate to its final arguments.
 */
struct chat_delta {
	enum chat_delta_kind kind;
	int index;
	const char *text;
	size_t len;
	const char *id, *name;
};

typedef void (*chat_delta_fn)(const struct chat_delta *d, void *user);

struct chat_parser;

/**
 * chat_parser_new() - a parser for one reply
 * @ct: the template the prompt was rendered with (its tool style)
 * @in_think: the prompt left a <think> block open (chat_prompt.reply_in_think)
 * @tools_json: the tools offered (the OpenAI array as JSON text), or NULL:
 *	then <tool_call> is plain content. With the XML style the parameter
 *	types of the tools' JSON schemas decide whether a value is a string;
 *	a template without a tool format is parsed in the JSON style (the
 *	generic route of chat_render()).
 * @id_seed: number used in the call ids ("call_<id_seed>_<index>")
 *
 * Return: the parser, NULL when out of memory.
 */
struct chat_parser *chat_parser_new(const struct chat_template *ct, bool in_think,
				    const char *tools_json, unsigned long id_seed);
void chat_parser_free(struct chat_parser *p);

/**
 * chat_parser_feed() - the next piece of the reply's text
 * @p: parser
 * @s, @n: text (any split; may end inside a UTF-8 character or a tag)
 * @fn, @user: called for each delta that is certain (text that may start a
 *	tag such as "<tool_" is held back until it is not one); may be NULL
 *
 * Return: 0 or -ENOMEM.
 */
int chat_parser_feed(struct chat_parser *p, const char *s, size_t n, chat_delta_fn fn,
		     void *user);

/**
 * chat_parser_finish() - end of the reply: flush what was held back
 * @p: parser
 * @fn, @user: as for chat_parser_feed()
 *
 * A tool call cut off before its name was known is returned as content
 * (its text, as CONTENT deltas). One whose TOOL_BEGIN was sent stays a
 * call: its arguments are what was streamed, closed if they were cut off
 * inside the XML form; JSON arguments cut off are left as they are.
 *
 * Return: 0 or -ENOMEM.
 */
int chat_parser_finish(struct chat_parser *p, chat_delta_fn fn, void *user);

/**
 * enum chat_phase - where the reply stands with respect to reasoning
 * @CHAT_PHASE_START: undecided: nothing yet, or only what may be the
 *	opening <think> (a reasoning template's reply start)
 * @CHAT_PHASE_THINK: inside the <think> block
 * @CHAT_PHASE_AFTER_THINK: past its </think> (content or calls)
 * @CHAT_PHASE_NO_THINK: the reply did not open a <think> block
 */
enum chat_phase {
	CHAT_PHASE_START,
	CHAT_PHASE_THINK,
	CHAT_PHASE_AFTER_THINK,
	CHAT_PHASE_NO_THINK,
};

/**
 * chat_parser_phase() - the phase after the text fed so far; with the
 * phase before and after each piece of text a caller attributes the
 * tokens of that piece to reasoning or not (usage.reasoning_tokens)
 * @p: parser
 */
enum chat_phase chat_parser_phase(const struct chat_parser *p);

/* After chat_parser_finish(): the whole reply, split. */
const char *chat_parser_content(const struct chat_parser *p);	/* "" when none */
const char *chat_parser_reasoning(const struct chat_parser *p);	/* "" when none */
int chat_parser_n_calls(const struct chat_parser *p);
const struct chat_tool_call *chat_parser_call(const struct chat_parser *p, int i);

#endif
