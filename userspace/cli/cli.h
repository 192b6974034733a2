/* SPDX-License-Identifier: MIT */
/*
 * rk1828-llm's command line: the parsed options and the model session
 * shared by main.c (info, plan, run) and the subcommands in their own
 * files (cmd_prompt.c: the prompt of run and chat; cmd_run.c;
 * cmd_tokenize.c; cmd_chat.c; cmd_bench.c). Not a library interface.
 */
#ifndef RK_LLM_CLI_H
#define RK_LLM_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cardspec.h"
#include "chat.h"
#include "cost.h"
#include "model.h"
#include "planner.h"
#include "sampler.h"
#include "tokenizer.h"

struct gguf_file;
struct rk_card;

/* Exit status: 0 success, see usage() in main.c. */
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

/* --logit-bias may be given this many times. */
#define CLI_MAX_BIAS 256

/**
 * struct args - the options of every command
 * @json: run, plan: print one JSON object instead of text
 * @ignore_eos: run/chat: generate past end-of-generation tokens
 * @parse_special: special-token text in the prompt becomes the token
 * @chat: run: apply the chat template to the prompt as one user message
 * @ids: tokenize: print only the ids
 * @system: run --chat / chat: a system message
 * @thinking: enum chat_thinking (--think / --no-think)
 * @n_predict_set: -n was given (chat: otherwise until end of generation)
 * @json_schema: run --json-schema: schema text ('{...') or a file name
 * (the rest as in usage())
 */
struct args {
	const char *cmd, *model, *prompt, *cards, *dump_logits, *system, *json_schema;
	struct cards_spec cs;
	int n_predict;
	struct sampler_params s;	/* --temp ... --seed; s.bias is @bias */
	struct sampler_bias bias[CLI_MAX_BIAS];	/* --logit-bias, in order */
	bool no_bos, bucket_set;
	bool json, ignore_eos, parse_special, chat, ids, n_predict_set;
	int thinking;
	uint32_t bucket, n_ctx;
	uint64_t card_mem;	/* plan only: simulated cards of this size */
	uint32_t parallel;	/* plan only: sessions whose KV caches the cards hold */
	bool predict, cards_auto;	/* plan --predict, --cards auto */
	enum cost_link link;	/* plan/bench --link */
	bool link_set;		/* --link given (bench: else the cards' own link) */
	const char *profile;	/* plan/bench --profile FILE, NULL: the built-in one */
	const char *trace;	/* bench --trace FILE */
	int sessions, reps;	/* bench --sessions S, -r N (0: unset) */
	int spec;		/* run/chat/bench --spec: enum spec_kind */
	int spec_k;		/* plan --spec K: drafts a verify pass predicted (0: none) */
	double spec_accept;	/* plan --accept A: their acceptance rate (default 0.7) */
	int draft_max, draft_min;	/* --draft-max, --draft-min (0: the engine's) */
	enum plan_split split;	/* --split (plan_time.h) */
	int kv_type;		/* --kv-type: QUANT_TYPE_* or PLAN_KV_AUTO (0: f32) */
	const char *draft_model;	/* --draft-model FILE (--spec draft) */
	int verbose;
};

/**
 * struct session - the model, the cards and the plan (plan, run, chat)
 * @gf: the GGUF file
 * @m: the model on it
 * @cards, @n_cards: every card found
 * @sel, @n_sel: the cards --cards selected, in pipeline order
 * @fit: what the plan was asked for (the engine's engine_fit_opts())
 * @plan, @sizes, @plan_str: the segment plan (plan_fit()), the one run and
 *	chat hand to the engine (cli_engine_opts())
 */
struct session {
	struct gguf_file *gf;
	struct llm_model m;
	struct rk_card *cards;
	int n_cards;
	int sel[PLAN_MAX_CARDS], n_sel;
	struct plan_fit_opts fit;
	struct plan plan;
	struct plan_sizes sizes;
	char plan_str[PLAN_STR_MAX];
};

/**
 * plan_print_snaps() - the plan line's ", N state snapshots" of a hybrid
 * model (nothing else), with " (K a session, W wanted: fewer prefix-cache
 * checkpoints)" when plan_fit() gave some up for memory
 * (plan_sizes_out.c)
 * @f: where to print
 * @S: the planned session
 */
void plan_print_snaps(FILE *f, const struct session *S);

/**
 * plan_json_sizes() - the plan --json object @js with its "sizes" object
 * added: sessions, ctx, bucket, kv_type (the type --kv-type auto chose),
 * state_snapshots, snapshots_per_session and snapshots_wanted_per_session
 * (what the engine asks for; more than snapshots_per_session when plan_fit()
 * gave some up for memory; 0 for a model without recurrent states)
 * @js: the object, as predict_json() or predict_split_json() make it
 * @S: the planned session
 * Return: a new string (free()), or NULL when out of memory or @js is not
 * an object.
 */
char *plan_json_sizes(const char *js, const struct session *S);

struct engine_opts;

/*
 * cli_engine_opts() - the engine options of run and chat (main.c): those
 * @S was planned with, and its plan and sizes, so the engine runs the plan
 * the command planned (and prints) instead of planning again.
 */
void cli_engine_opts(const struct args *a, const struct session *S, struct engine_opts *eo);

struct card_profile;

/* load_profile() - --profile FILE or the built-in profile (main.c); -1 printed. */
int load_profile(const struct args *a, struct card_profile *prof);

/* session_open() - load @a->model and plan it on the cards (main.c); -1 printed. */
int session_open(struct session *S, const struct args *a, bool simulate);
void session_close(struct session *S);

/**
 * struct cli_prompt - the prompt of run or chat, tokenized
 * @ids, @n: token ids (malloc'ed), BOS/EOS as the vocabulary wants them
 *	(unless --no-bos)
 * @ct: the chat template (run --chat and chat)
 * @in_think: the prompt left a <think> block open
 */
struct cli_prompt {
	int32_t *ids;
	int n;
	struct chat_template ct;
	bool in_think;
};

/**
 * cli_template() - the model's chat template (tokenizer.chat_template)
 * @gf: the model file
 * @tok: its tokenizer
 * @ct: out
 * @warn: print a warning to stderr when it falls back to chatml
 */
void cli_template(const struct gguf_file *gf, const struct tokenizer *tok,
		  struct chat_template *ct, bool warn);

/* TOK_* flags for the prompt: BOS/EOS as the vocabulary wants (--no-bos), --parse-special. */
unsigned int cli_tok_flags(const struct tokenizer *tok, const struct args *a);

/**
 * cli_encode() - tokenize @text as the prompt (plain: run without --chat)
 * @a: --no-bos, --parse-special
 * Return: 0, or -1 with the reason printed.
 */
int cli_encode(const struct tokenizer *tok, const struct args *a, const char *text,
	       struct cli_prompt *p);

/**
 * cli_encode_chat() - render @msgs with @p->ct (set by cli_template()) and tokenize
 * Return: 0, or -1 with the reason printed.
 */
int cli_encode_chat(const struct tokenizer *tok, const struct args *a,
		    const struct chat_msg *msgs, int n, struct cli_prompt *p);

/* cmd_run() - rk1828-llm run (cmd_run.c): exit status. */
int cmd_run(const struct args *a);

/*
 * cli_print_hop() - print "hop cardA -> cardB: p2p" or "...: host (REASON)":
 * how hidden states would go from @from to @to (cli_hops.c).
 */
void cli_print_hop(struct rk_card *from, struct rk_card *to);

/* cmd_tokenize() - rk1828-llm tokenize (cmd_tokenize.c): exit status. */
int cmd_tokenize(const struct args *a);

/* cmd_chat() - rk1828-llm chat, the interactive terminal chat (cmd_chat.c). */
int cmd_chat(const struct args *a);

/* cmd_bench() - rk1828-llm bench, measured next to the prediction (cmd_bench.c). */
int cmd_bench(const struct args *a);

#endif
