// SPDX-License-Identifier: MIT
/*
 * rk1828-llm: run a GGUF language model split over RK1828 cards.
 *
 *   rk1828-llm run  -m MODEL -p PROMPT [options]   generate text
 *   rk1828-llm chat -m MODEL [options]             chat in the terminal (cmd_chat.c)
 *   rk1828-llm tokenize -m MODEL -p TEXT           print the tokens (cmd_tokenize.c)
 *   rk1828-llm info                                list the cards
 *   rk1828-llm plan -m MODEL [--cards ...] [--ctx N] [--bucket B]
 *                   [--predict] [--link usb|pcie] [--json] [--split bytes|time]
 *                                                  print the segment plan
 *                                                  and predict its speed
 *   rk1828-llm bench -m MODEL [-p 128,4096] [-n 128] [--sessions S]
 *                    [--trace FILE]                measure next to the
 *                                                  prediction (cmd_bench.c)
 *   rk1828-llm serve -m MODEL [options]            OpenAI-compatible server
 *                                                  and web UI (serve.c)
 *
 * The generated text goes to stdout as it is produced (the prompt is not
 * echoed); one stats line goes to stderr at the end. With --json, run
 * prints one JSON object instead.
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cardspec.h"
#include "cli.h"
#include "engine.h"
#include "engine_opts.h"
#include "gguf.h"
#include "model.h"
#include "planner.h"
#include "plan_time.h"
#include "predict.h"
#include "predict_split.h"
#include "profile.h"
#include "rk1828.h"
#include "server.h"
#include "rk1828/quant_blocks.h"
#include "rk1828/util.h"


static void usage(FILE *f)
{
	fprintf(f,
		"usage: rk1828-llm run -m MODEL -p PROMPT [-n N_PREDICT] [--temp T] [--top-k K]\n"
		"                      [--top-p P] [--min-p P] [--repeat-penalty R]\n"
		"                      [--repeat-last-n N] [--presence-penalty A]\n"
		"                      [--frequency-penalty A] [--logit-bias ID(+|-)B]... [--seed S]\n"
		"                      [--cards all|N|LIST] [--bucket B]\n"
		"                      [--ctx N] [--no-bos] [--dump-logits FILE] [--json]\n"
		"                      [--ignore-eos] [--parse-special] [--json-schema FILE|JSON] [-v]\n"
		"                      [--chat [-s SYSTEM] [--think|--no-think]]\n"
		"                      [--spec none|ngram|draft|mtp] [--draft-max K] [--draft-min K]\n"
		"                      [--draft-model FILE] [--kv-type f32|f16|q8_0|q4_0|auto]\n"
		"                      [--split bytes|time]\n"
		"       rk1828-llm chat -m MODEL [-s SYSTEM] [--think|--no-think] [-n N] [--temp T]\n"
		"                       [--top-k K] [--top-p P] [--min-p P] [--repeat-penalty R]\n"
		"                       [--repeat-last-n N] [--presence-penalty A]\n"
		"                       [--frequency-penalty A] [--logit-bias ID(+|-)B]... [--seed S]\n"
		"                       [--cards C] [--ctx N]\n"
		"                       [--bucket B] [--no-bos] [--ignore-eos] [--parse-special] [-v]\n"
		"                       [--spec none|ngram|draft|mtp] [--draft-max K] [--draft-min K]\n"
		"                       [--draft-model FILE] [--kv-type f32|f16|q8_0|q4_0|auto]\n"
		"                       [--split bytes|time]\n"
		"       rk1828-llm tokenize -m MODEL -p TEXT [--ids] [--no-bos] [--parse-special]\n"
		"       rk1828-llm info\n"
		"       rk1828-llm --version\n"
		"       rk1828-llm plan -m MODEL [--cards all|N|LIST|auto] [--ctx N] [--bucket B]\n"
		"                       [--card-mem SIZE] [--predict] [--link usb|pcie]\n"
		"                       [--profile FILE] [--json] [--parallel S]\n"
		"                       [--kv-type f32|f16|q8_0|q4_0|auto] [--spec K [--accept A]]\n"
		"                       [--split bytes|time]\n"
		"       rk1828-llm bench -m MODEL [-p 128,4096] [-n 128] [-r 3] [--sessions S]\n"
		"                        [--trace FILE] [--cards all|N|LIST] [--ctx N] [--bucket B]\n"
		"                        [--link usb|pcie] [--profile FILE] [--kv-type T]\n"
		"                        [--spec ngram|draft|mtp] [--draft-max K] [--draft-model FILE]\n"
		"                        [--split bytes|time]\n"
		"       rk1828-llm serve -m MODEL [--host H] [--port P] [--cards all|N|LIST]\n"
		"                        [--parallel S] [--ctx N] [--bucket B] [--api-key KEY]\n"
		"                        [--alias NAME] [--queue Q] [--no-ui] [--agent-port P] [-v]\n"
		"                        [--kv-type f32|f16|q8_0|q4_0|auto] [--split bytes|time]\n"
		"                        [--spec none|ngram|draft|mtp] [--draft-model FILE]\n"
		"                        (OpenAI-compatible HTTP server and web UI; SIGUSR1\n"
		"                        drains it, --agent-port answers HAProxy's agent check;\n"
		"                        'rk1828-llm serve --help' explains its options)\n"
		"\n"
		"  -n N_PREDICT     tokens to generate (default 128)\n"
		"  --temp T         temperature, 0 = greedy (default 0.8)\n"
		"  --top-k K        top-k (default 40, 0 = off)\n"
		"  --top-p P        nucleus sampling, 0 < P <= 1 (default 0.95, 1 = off)\n"
		"  --min-p P        min-p, 0..1: keep tokens at least P times as likely as the\n"
		"                   most likely one (default 0 = off)\n"
		"  --repeat-penalty R  llama.cpp repeat penalty, >= 0, over the last\n"
		"                   --repeat-last-n tokens, prompt included (default 1 = off)\n"
		"  --repeat-last-n N  its window, -1..2^30 tokens (default 64, 0 = off,\n"
		"                   -1 = the whole context)\n"
		"  --presence-penalty A  OpenAI presence penalty, -2..2: subtracted once from\n"
		"                   each token already generated (default 0 = off)\n"
		"  --frequency-penalty A  OpenAI frequency penalty, -2..2: times the count of\n"
		"                   each token already generated (default 0 = off)\n"
		"  --logit-bias ID(+|-)B  add B (0..100) to token ID's logit, -inf bans it\n"
		"                   (llama.cpp's form: 15043+1, 15043-inf); up to 256 times\n"
		"                   (order: bias, penalties, top-k, top-p, min-p, temperature)\n"
		"  --seed S         sampler seed, an integer >= 0; -1 or none: time based\n"
		"  --cards C        all (default), N (the first N cards) or a comma\n"
		"                   separated list of card indices (\"0,2\")\n"
		"  --bucket B       prefill bucket in tokens (default 128, capped to fit)\n"
		"  --spec ngram     run, chat, serve, bench: speculative decoding with prompt lookup\n"
		"                   (default none): drafts verified in one pass, lossless\n"
		"  --draft-max K    most drafted tokens per verify pass, 1..32 (default 16)\n"
		"  --draft-min K    fewest drafted tokens worth a verify pass (default 0)\n"
		"  --spec draft --draft-model FILE  drafts by a small model of the same\n"
		"                   vocabulary, run on the host CPU (reference kernels)\n"
		"  --spec mtp       drafts by the model's own multi-token-prediction block\n"
		"                   (Qwen3.5 nextn) on the host CPU from the last card's hidden state\n"
		"  --ctx N          context length (default min(model context, 4096))\n"
		"  --kv-type T      K/V cache type on the cards: f32 (default), f16, q8_0 or\n"
		"                   q4_0 (ggml's blocks of 32 with an f16 scale: 1.06 and\n"
		"                   0.56 bytes a value), or auto: the widest that fits the\n"
		"                   sessions and context asked (run, chat, plan, bench, serve)\n"
		"  --no-bos         do not prepend the BOS token (prepended when the model's\n"
		"                   tokenizer.ggml.add_bos_token says so)\n"
		"  --dump-logits F  write the last prompt position's logits to F\n"
		"  --json           print {\"prompt_ids\",\"ids\",\"text\",\"stats\"} instead of text\n"
		"  --ignore-eos     keep generating past end-of-generation tokens\n"
		"  --json-schema S  run: the output is a JSON document of the schema S (JSON\n"
		"                   text starting with '{', or a file holding it); see\n"
		"                   userspace/doc/server.rst \"Structured outputs\"\n"
		"  --parse-special  special-token text in the prompt (<|im_start|>) is the token\n"
		"  --chat           apply the model's chat template to PROMPT as a user message\n"
		"  -s, --system S   system message (run --chat, chat)\n"
		"  --think, --no-think  reasoning on/off where the template has a switch (Qwen3)\n"
		"  --ids            tokenize: print the ids only, as [1, 2, 3]\n"
		"  --card-mem SIZE  plan for simulated cards with SIZE free bytes each (default:\n"
		"                   the card profile's usable memory): bytes, or a number and\n"
		"                   a unit: K, M, G, T or KiB, MiB, GiB, TiB are powers of 1024,\n"
		"                   kB, MB, GB, TB powers of 1000 (4.9G, 512MiB, 1.5MB = 1500000)\n"
		"  --cards auto     plan: the fewest simulated cards the model fits on\n"
		"  --predict        plan: predict TTFT, prefill/decode tok/s, TPOT and the\n"
		"                   aggregate decode of 1/2/4 sessions on the card profile\n"
		"  --spec K         plan --predict: also predict speculative decoding with K\n"
		"                   drafts a verify pass (1..32)\n"
		"  --accept A       plan --spec: the drafts' acceptance rate, 0..1 (default 0.7)\n"
		"  --link L         plan --predict, bench: the link predicted, usb or pcie\n"
		"                   (default: plan pcie, bench the link of the cards used)\n"
		"  --split S        run, chat, plan, bench, serve: what the plan balances:\n"
		"                   bytes (default: weights, KV cache and buffers per card) or\n"
		"                   time (each card's predicted prefill time, LM head\n"
		"                   included, on --profile and --link); plan --predict\n"
		"                   prints the other split's prediction next to it\n"
		"  --profile FILE   card profile (default: the built-in rk1828.conf)\n"
		"  --json           plan: print one JSON object (the plan, and the prediction)\n"
		"  --parallel S     plan: for S concurrent sessions' KV caches, as\n"
		"                   `rk1828-llm serve --parallel S` (default 1, as run)\n"
		"  bench: -p LIST   prompt lengths of the prefill tests (default 128,4096)\n"
		"         -n N      tokens of the decode test (default 128; 0: none)\n"
		"         -r N      repetitions of each test (default 3)\n"
		"         --sessions S  also the aggregate decode of S sessions (engine)\n"
		"         --trace FILE  Chrome trace-event JSON of every job per card and queue\n"
		"  -v               verbose\n"
		"\n"
		"Each command takes the options listed with it (-h aside); another\n"
		"command's option is refused, not ignored.\n"
		"\n"
		"exit status: 0 success; 1 runtime failure (no cards or fewer than --cards\n"
		"asks for, bad model file, model does not fit, job failure); 2 usage error\n"
		"(unknown command or option, an option the command does not take, bad\n"
		"option value, bad --cards, missing -m/-p)\n");
}


/* An integer in [@min, @max] for option @opt; -1 with the range said. */
static int parse_u32_in(const char *s, const char *opt, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s || v < min || v > max) {
		fprintf(stderr, "rk1828-llm: %s: bad value \"%s\" (an integer %u..%u)\n",
			opt, s, min, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_u32(const char *s, const char *opt, uint32_t min, uint32_t *out)
{
	return parse_u32_in(s, opt, min, 0x7fffffff, out);
}

/* A number (strtof() syntax, the whole string) for option @opt. */
static int parse_num(const char *s, const char *opt, float *out)
{
	char *end;
	float v;

	errno = 0;
	v = strtof(s, &end);
	if (errno || *end || end == s) {
		fprintf(stderr, "rk1828-llm: %s: bad value \"%s\" (a number)\n", opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* An int (decimal, the whole string) for option @opt. */
static int parse_int(const char *s, const char *opt, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < INT_MIN || v > INT_MAX) {
		fprintf(stderr, "rk1828-llm: %s: bad value \"%s\" (an integer)\n", opt, s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

enum { O_TEMP = 256, O_TOPK, O_TOPP, O_MINP, O_REPPEN, O_REPN, O_PRESPEN, O_FREQPEN, O_BIAS,
       O_SEED, O_CARDS, O_BUCKET, O_CTX,
       O_NOBOS, O_DUMP, O_CARDMEM, O_PREDICT, O_JSON, O_LINK, O_PROFILE, O_IGNEOS,
       O_SPECIAL, O_CHAT, O_IDS, O_THINK, O_NOTHINK, O_PARALLEL, O_SESSIONS, O_TRACE,
       O_JSONSCHEMA, O_SPEC, O_DRAFTMAX, O_DRAFTMIN, O_KVTYPE, O_ACCEPT, O_DRAFTMODEL,
       O_SPLIT };

/* serve's own options in all_opts[]: O_SERVE + their index in srv_options(). */
#define O_SERVE		1024

/* Every command's long options (one table: getopt_long() takes one). */
static const struct option cli_opts[] = {
	{ "model", required_argument, NULL, 'm' },
	{ "prompt", required_argument, NULL, 'p' },
	{ "n-predict", required_argument, NULL, 'n' },
	{ "temp", required_argument, NULL, O_TEMP },
	{ "top-k", required_argument, NULL, O_TOPK },
	{ "top-p", required_argument, NULL, O_TOPP },
	{ "min-p", required_argument, NULL, O_MINP },
	{ "repeat-penalty", required_argument, NULL, O_REPPEN },
	{ "repeat-last-n", required_argument, NULL, O_REPN },
	{ "presence-penalty", required_argument, NULL, O_PRESPEN },
	{ "frequency-penalty", required_argument, NULL, O_FREQPEN },
	{ "logit-bias", required_argument, NULL, O_BIAS },
	{ "seed", required_argument, NULL, O_SEED },
	{ "cards", required_argument, NULL, O_CARDS },
	{ "bucket", required_argument, NULL, O_BUCKET },
	{ "ctx", required_argument, NULL, O_CTX },
	{ "kv-type", required_argument, NULL, O_KVTYPE },
	{ "no-bos", no_argument, NULL, O_NOBOS },
	{ "dump-logits", required_argument, NULL, O_DUMP },
	{ "json-schema", required_argument, NULL, O_JSONSCHEMA },
	{ "card-mem", required_argument, NULL, O_CARDMEM },
	{ "parallel", required_argument, NULL, O_PARALLEL },
	{ "predict", no_argument, NULL, O_PREDICT },
	{ "json", no_argument, NULL, O_JSON },
	{ "link", required_argument, NULL, O_LINK },
	{ "profile", required_argument, NULL, O_PROFILE },
	{ "ignore-eos", no_argument, NULL, O_IGNEOS },
	{ "parse-special", no_argument, NULL, O_SPECIAL },
	{ "chat", no_argument, NULL, O_CHAT },
	{ "ids", no_argument, NULL, O_IDS },
	{ "system", required_argument, NULL, 's' },
	{ "think", no_argument, NULL, O_THINK },
	{ "no-think", no_argument, NULL, O_NOTHINK },
	{ "sessions", required_argument, NULL, O_SESSIONS },
	{ "spec", required_argument, NULL, O_SPEC },
	{ "draft-max", required_argument, NULL, O_DRAFTMAX },
	{ "draft-min", required_argument, NULL, O_DRAFTMIN },
	{ "accept", required_argument, NULL, O_ACCEPT },
	{ "draft-model", required_argument, NULL, O_DRAFTMODEL },
	{ "trace", required_argument, NULL, O_TRACE },
	{ "split", required_argument, NULL, O_SPLIT },
	{ "reps", required_argument, NULL, 'r' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Most entries of all_opts[]. */
#define MAX_OPTS	96

/*
 * all_opts[] - what getopt_long() parses with: cli_opts[], then the
 * options of serve's table (srv_options(), the one list of them; serve.c
 * parses them) that no other command has, only so that another command
 * given one names serve. Filled by opts_init().
 */
static struct option all_opts[MAX_OPTS + 1];
static size_t n_opts;

/* The index of --@name in srv_options(), or -1. */
static int srv_opt_index(const char *name)
{
	const struct option *so = srv_options();
	int k;

	for (k = 0; so[k].name; k++)
		if (!strcmp(so[k].name, name))
			return k;
	return -1;
}

static void opts_init(void)
{
	const struct option *so = srv_options();
	size_t i, k;

	if (n_opts)
		return;
	for (i = 0; cli_opts[i].name && n_opts < MAX_OPTS; i++)
		all_opts[n_opts++] = cli_opts[i];
	for (k = 0; so[k].name && n_opts < MAX_OPTS; k++) {
		for (i = 0; cli_opts[i].name && strcmp(cli_opts[i].name, so[k].name); i++)
			;
		if (cli_opts[i].name)
			continue;
		all_opts[n_opts] = so[k];
		all_opts[n_opts].flag = NULL;
		all_opts[n_opts++].val = O_SERVE + (int)k;
	}
}

/*
 * The options each command takes, by all_opts[] name (-h aside, which
 * every command takes). An option another command takes is refused, not
 * ignored. serve's are its own table's (srv_options(); serve.c parses
 * them): its entry only names it in the messages ("run does not take
 * --port (an option of serve)").
 */
static const struct {
	const char *cmd, *opts;
} cmd_opts[] = {
	{ "run", " model prompt n-predict temp top-k top-p min-p repeat-penalty repeat-last-n"
		 " presence-penalty frequency-penalty logit-bias seed cards bucket ctx no-bos"
		 " dump-logits json json-schema ignore-eos parse-special chat system think no-think"
		 " spec draft-max draft-min draft-model kv-type verbose split " },
	{ "chat", " model system think no-think n-predict temp top-k top-p min-p repeat-penalty"
		  " repeat-last-n presence-penalty frequency-penalty logit-bias seed cards bucket"
		  " ctx no-bos ignore-eos parse-special spec draft-max draft-min draft-model kv-type"
		  " verbose split " },
	{ "tokenize", " model prompt ids no-bos parse-special " },
	{ "info", " " },
	{ "plan", " model cards ctx bucket card-mem predict link profile json parallel kv-type"
		  " spec accept split " },
	{ "bench", " model prompt n-predict reps sessions trace cards ctx bucket link profile"
		   " kv-type spec draft-max draft-model split " },
	{ "serve", NULL },	/* srv_options() */
};

#define N_CMDS		(sizeof(cmd_opts) / sizeof(cmd_opts[0]))
/* Does @cmd (an entry of cmd_opts[]) take the option all_opts[@o]? */
static bool cmd_takes(size_t cmd, size_t o)
{
	char word[32];

	if (!cmd_opts[cmd].opts)
		return srv_opt_index(all_opts[o].name) >= 0;
	snprintf(word, sizeof(word), " %s ", all_opts[o].name);
	return strstr(cmd_opts[cmd].opts, word) != NULL;
}

/* The entry of @name in cmd_opts[] that parse_args() runs, or -1 (serve is main()'s). */
static int cmd_index(const char *name)
{
	size_t i;

	for (i = 0; i < N_CMDS; i++)
		if (!strcmp(cmd_opts[i].cmd, name) && strcmp(name, "serve"))
			return (int)i;
	return -1;
}

/*
 * struct opt_seen - the options given, as typed: @as_long[o] for
 * all_opts[o] given as --name (else -c), @given[o] when given at all
 */
struct opt_seen {
	bool given[MAX_OPTS], as_long[MAX_OPTS];
};

/* The option as the user typed it: "--n-predict" or "-n", in @buf. */
static const char *opt_spelled(const struct opt_seen *seen, size_t o, char *buf, size_t size)
{
	if (seen->as_long[o] || all_opts[o].val >= 256)
		snprintf(buf, size, "--%s", all_opts[o].name);
	else
		snprintf(buf, size, "-%c", all_opts[o].val);
	return buf;
}

/* "run, chat and bench": the commands that take all_opts[@o], in @buf. */
static void opt_owners(size_t o, char *buf, size_t size)
{
	size_t i, n = 0, k = 0, len = 0;

	for (i = 0; i < N_CMDS; i++)
		n += cmd_takes(i, o);
	buf[0] = '\0';
	for (i = 0; i < N_CMDS && len < size; i++) {
		if (!cmd_takes(i, o))
			continue;
		k++;
		len += snprintf(buf + len, size - len, "%s%s",
				k == 1 ? "" : k == n ? " and " : ", ", cmd_opts[i].cmd);
	}
}

/* An option @cmd takes only with another: run -s/--think need --chat, plan --link --predict. */
static int check_needs(const struct args *a, const struct opt_seen *seen)
{
	static const struct {
		const char *cmd, *opt, *needs, *why;
	} needs[] = {
		{ "run", "system", "chat", "a message of the chat template" },
		{ "run", "think", "chat", "a switch of the chat template" },
		{ "run", "no-think", "chat", "a switch of the chat template" },
		{ "plan", "link", "predict", "the link of the prediction" },
		{ "plan", "spec", "predict", "drafts a verify pass of the prediction" },
		{ "plan", "accept", "spec", "the acceptance rate of those drafts" },
	};
	char sp[32];
	size_t i, o, w;

	for (i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		if (strcmp(a->cmd, needs[i].cmd))
			continue;
		for (o = 0; o < n_opts && strcmp(all_opts[o].name, needs[i].opt); o++)
			;
		for (w = 0; w < n_opts && strcmp(all_opts[w].name, needs[i].needs); w++)
			;
		if (o < n_opts && w < n_opts && seen->given[o] && !seen->given[w]) {
			fprintf(stderr, "rk1828-llm: %s: %s needs --%s (%s)\n", a->cmd,
				opt_spelled(seen, o, sp, sizeof(sp)), needs[i].needs, needs[i].why);
			return -1;
		}
	}
	return 0;
}

/*
 * check_opts() - every option given is one @a->cmd takes (cmd_opts[]):
 * "rk1828-llm: tokenize does not take -n (an option of run, chat and
 * bench)", as getopt refuses an unknown one. Return: 0, or -1 printed.
 */
static int check_opts(const struct args *a, const struct opt_seen *seen)
{
	int cmd = cmd_index(a->cmd);
	char sp[32], owners[96];
	size_t o;

	for (o = 0; o < n_opts; o++) {
		if (!seen->given[o] || all_opts[o].val == 'h' || cmd_takes((size_t)cmd, o))
			continue;
		opt_owners(o, owners, sizeof(owners));
		fprintf(stderr, "rk1828-llm: %s does not take %s (an option of %s)\n", a->cmd,
			opt_spelled(seen, o, sp, sizeof(sp)), owners);
		return -1;
	}
	return check_needs(a, seen);
}

/* The option handlers: 0 taken, -1 bad value (printed), 1 not this group's. */
#define OPT_NOT_MINE 1

/*
 * --seed S: an integer 0..2^64-1, or -1 for a time-based seed (llama.cpp's
 * -s -1, and what the server's "seed": -1 means); strtoull() alone would
 * take "-1" as 2^64 - 1. *@have is false for -1.
 */
static int parse_seed(const char *s, uint64_t *out, bool *have)
{
	char *end;

	if (!strcmp(s, "-1")) {
		*have = false;
		return 0;
	}
	errno = 0;
	*out = strtoull(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || errno || *end) {
		fprintf(stderr, "rk1828-llm: --seed: bad value \"%s\" (an integer 0..%llu, or -1 for a time-based seed)\n",
			s, (unsigned long long)UINT64_MAX);
		return -1;
	}
	*have = true;
	return 0;
}

/*
 * --logit-bias ID(+|-)B, llama.cpp's form (common/arg.cpp -l): B a number
 * 0..100 or inf (-inf bans the token); the id is checked against the
 * vocabulary when the request is submitted.
 */
static int parse_bias(const char *s, struct args *a)
{
	char *end;
	unsigned long id;
	float b;

	errno = 0;
	id = strtoul(s, &end, 10);
	if (a->s.n_bias == CLI_MAX_BIAS) {
		fprintf(stderr, "rk1828-llm: --logit-bias: at most %d\n", CLI_MAX_BIAS);
		return -1;
	}
	if (s[0] >= '0' && s[0] <= '9' && !errno && id <= INT32_MAX && (*end == '+' || *end == '-')) {
		char *e2;

		b = strtof(end + 1, &e2);
		if (end[1] != '+' && end[1] != '-' && e2 != end + 1 && !*e2 &&
		    ((b >= 0.0f && b <= 100.0f) || (isinf(b) && *end == '-'))) {
			a->bias[a->s.n_bias].id = (int32_t)id;
			a->bias[a->s.n_bias++].bias = *end == '-' ? -b : b;
			a->s.bias = a->bias;
			return 0;
		}
	}
	fprintf(stderr, "rk1828-llm: --logit-bias: bad value \"%s\" (ID+B or ID-B with B 0..100, or ID-inf to ban)\n",
		s);
	return -1;
}

/*
 * The value of sampling option @opt, parsed into the copy @t, against
 * sampler_params_check(): a->s takes it only when valid.
 */
static int set_sampling(const char *opt, const char *arg, int parsed,
			const struct sampler_params *t, struct args *a)
{
	char msg[160];

	if (parsed)
		return -1;
	if (sampler_params_check(t, 0, NULL, msg, sizeof(msg))) {
		fprintf(stderr, "rk1828-llm: %s: bad value \"%s\": %s\n", opt, arg, msg);
		return -1;
	}
	a->s = *t;
	return 0;
}

/* Generation (run, chat): -n, --temp, --top-k, --top-p, the penalties, --seed. */
static int parse_sampling_opt(int c, const char *arg, struct args *a)
{
	struct sampler_params t = a->s;
	const char *opt;
	uint32_t u;
	int r;

	switch (c) {
	case 'n':
		if (parse_u32(arg, "-n", 0, &u))
			return -1;
		a->n_predict = (int)u;
		a->n_predict_set = true;
		return 0;
	case O_BIAS:
		return parse_bias(arg, a);
	case O_SEED:
		return parse_seed(arg, &a->s.seed, &a->s.have_seed) ? -1 : 0;
	case O_TEMP: opt = "--temp"; r = parse_num(arg, opt, &t.temperature); break;
	case O_TOPK: opt = "--top-k"; r = parse_int(arg, opt, &t.top_k); break;
	case O_TOPP: opt = "--top-p"; r = parse_num(arg, opt, &t.top_p); break;
	case O_MINP: opt = "--min-p"; r = parse_num(arg, opt, &t.min_p); break;
	case O_REPPEN: opt = "--repeat-penalty"; r = parse_num(arg, opt, &t.repeat_penalty); break;
	case O_REPN: opt = "--repeat-last-n"; r = parse_int(arg, opt, &t.repeat_last_n); break;
	case O_PRESPEN:
		opt = "--presence-penalty";
		r = parse_num(arg, opt, &t.presence_penalty);
		break;
	case O_FREQPEN:
		opt = "--frequency-penalty";
		r = parse_num(arg, opt, &t.frequency_penalty);
		break;
	default:
		return OPT_NOT_MINE;
	}
	return set_sampling(opt, arg, r, &t, a);
}

/* plan: --card-mem, --predict, --link, --profile, --parallel; --split. */
static int parse_plan_opt(int c, const char *arg, struct args *a)
{
	switch (c) {
	case O_CARDMEM:
		if (util_parse_size(arg, &a->card_mem) || !a->card_mem) {
			fprintf(stderr, "rk1828-llm: --card-mem: bad size \"%s\": give more than 0 "
				UTIL_SIZE_HELP "\n", arg);
			return -1;
		}
		return 0;
	case O_PREDICT: a->predict = true; return 0;
	case O_LINK:
		if (cost_link_parse(arg, &a->link)) {
			fprintf(stderr, "rk1828-llm: --link: bad value \"%s\" (usb or pcie)\n", arg);
			return -1;
		}
		a->link_set = true;
		return 0;
	case O_PROFILE: a->profile = arg; return 0;
	case O_SPLIT:
		if (plan_split_parse(arg, &a->split)) {
			fprintf(stderr, "rk1828-llm: --split: bad value \"%s\" (bytes or time)\n", arg);
			return -1;
		}
		return 0;
	case O_ACCEPT: {
		char *end;
		double v;

		errno = 0;
		v = strtod(arg, &end);
		if (errno || *end || end == arg || !(v >= 0 && v <= 1)) {
			fprintf(stderr, "rk1828-llm: --accept: bad value \"%s\" (a rate 0..1)\n",
				arg);
			return -1;
		}
		a->spec_accept = v;
		return 0;
	}
	case O_PARALLEL:
		return engine_opt_arg(ENGINE_OPT_PARALLEL, arg, &a->parallel);
	}
	return OPT_NOT_MINE;
}

/* bench: -r, --sessions, --trace. */
static int parse_bench_opt(int c, const char *arg, struct args *a)
{
	uint32_t u;

	switch (c) {
	case 'r':
		if (parse_u32(arg, "-r", 1, &u))
			return -1;
		if (u > 64) {
			fprintf(stderr, "rk1828-llm: -r: 1 to 64 repetitions\n");
			return -1;
		}
		a->reps = (int)u;
		return 0;
	case O_SESSIONS:
		if (parse_u32(arg, "--sessions", 1, &u))
			return -1;
		if (u > 64) {
			fprintf(stderr, "rk1828-llm: --sessions: 1 to 64\n");
			return -1;
		}
		a->sessions = (int)u;
		return 0;
	case O_TRACE: a->trace = arg; return 0;
	}
	return OPT_NOT_MINE;
}

/* The model, the prompt and its text, the cards and shapes, -v. */
static int parse_common_opt(int c, const char *arg, struct args *a)
{
	switch (c) {
	case 'm': a->model = arg; return 0;
	case 's': a->system = arg; return 0;
	case 'p': a->prompt = arg; return 0;
	case O_JSON: a->json = true; return 0;
	case O_IGNEOS: a->ignore_eos = true; return 0;
	case O_SPECIAL: a->parse_special = true; return 0;
	case O_CHAT: a->chat = true; return 0;
	case O_IDS: a->ids = true; return 0;
	case O_THINK: a->thinking = CHAT_THINK_ON; return 0;
	case O_NOTHINK: a->thinking = CHAT_THINK_OFF; return 0;
	case O_CARDS: a->cards = arg; return 0;
	case O_BUCKET:
		if (engine_opt_arg(ENGINE_OPT_BUCKET, arg, &a->bucket))
			return -1;
		a->bucket_set = true;
		return 0;
	case O_CTX:
		return engine_opt_arg(ENGINE_OPT_CTX, arg, &a->n_ctx);
	case O_KVTYPE:
		return engine_opt_kv_type(arg, &a->kv_type);
	case O_NOBOS: a->no_bos = true; return 0;
	case O_DUMP: a->dump_logits = arg; return 0;
	case O_JSONSCHEMA: a->json_schema = arg; return 0;
	case O_SPEC: {
		enum spec_kind k;
		uint32_t u;

		if (!strcmp(a->cmd, "plan")) {	/* plan --spec K: drafts a pass */
			if (parse_u32_in(arg, "--spec", 1, SPEC_MAX_DRAFT, &u))
				return -1;
			a->spec_k = (int)u;
			return 0;
		}
		if (spec_parse(arg, &k)) {
			fprintf(stderr, "rk1828-llm: --spec %s: %s\n", arg, SPEC_NAMES);
			return -1;
		}
		a->spec = (int)k;
		return 0;
	}
	case O_DRAFTMAX:
	case O_DRAFTMIN: {
		uint32_t u;

		if (parse_u32_in(arg, c == O_DRAFTMAX ? "--draft-max" : "--draft-min",
				 c == O_DRAFTMAX, SPEC_MAX_DRAFT, &u))
			return -1;
		*(c == O_DRAFTMAX ? &a->draft_max : &a->draft_min) = (int)u;
		return 0;
	}
	case O_DRAFTMODEL: a->draft_model = arg; return 0;
	case 'v': a->verbose++; return 0;
	}
	return OPT_NOT_MINE;
}

/* serve's options: only noted (check_opts() refuses them, serve_main() parses them). */
static int parse_serve_opt(int c, const char *arg, struct args *a)
{
	(void)arg;
	(void)a;
	return c >= O_SERVE ? 0 : OPT_NOT_MINE;
}

/* One option @c with @arg: 0, or -1 printed (-h exits 0). */
static int parse_opt(int c, const char *arg, struct args *a)
{
	static int (*const groups[])(int, const char *, struct args *) = {
		parse_common_opt, parse_sampling_opt, parse_plan_opt, parse_bench_opt,
		parse_serve_opt,
	};
	size_t i;
	int r;

	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		r = groups[i](c, arg, a);
		if (r != OPT_NOT_MINE)
			return r;
	}
	if (c == 'h') {
		usage(stdout);
		exit(0);
	}
	/* getopt said which option; the whole usage would bury it. */
	fprintf(stderr, "rk1828-llm: try 'rk1828-llm --help'\n");
	return -1;
}

static void args_defaults(struct args *a)
{
	memset(a, 0, sizeof(*a));
	a->n_predict = 128;
	a->s = (struct sampler_params)SAMPLER_PARAMS_DEFAULT;
	a->cards = "all";
	a->link = COST_LINK_PCIE;
	a->thinking = CHAT_THINK_DEFAULT;
	a->spec_accept = 0.7;
}

static bool is_cmd(const struct args *a, const char *cmd)
{
	return !strcmp(a->cmd, cmd);
}

/* The command has what it needs (-m, -p). */
static int check_command(const struct args *a)
{
	if (!is_cmd(a, "info") && !a->model) {
		fprintf(stderr, "rk1828-llm: no model given (-m MODEL)\n");
		return -1;
	}
	if ((is_cmd(a, "run") || is_cmd(a, "tokenize")) && !a->prompt) {
		fprintf(stderr, "rk1828-llm: no prompt given (-p PROMPT)\n");
		return -1;
	}
	return 0;
}

/* --cards: auto (plan only: one simulated card to start from) or a card list. */
static int resolve_cards(struct args *a)
{
	char err[160];

	if (!strcmp(a->cards, "auto")) {
		if (!is_cmd(a, "plan")) {
			fprintf(stderr, "rk1828-llm: --cards auto is an option of plan\n");
			return -1;
		}
		a->cards_auto = true;
		a->cs.kind = CARDS_COUNT;
		a->cs.n = 1;
		return 0;
	}
	if (cards_spec_parse(a->cards, &a->cs, err, sizeof(err))) {
		fprintf(stderr, "rk1828-llm: %s%s\n", err,
			is_cmd(a, "plan") ? "; plan also takes auto" : "");
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	struct opt_seen seen;
	int c;

	memset(&seen, 0, sizeof(seen));
	args_defaults(a);
	if (argc < 2) {
		usage(stderr);
		return -1;
	}
	a->cmd = argv[1];
	if (!strcmp(a->cmd, "-h") || !strcmp(a->cmd, "--help") || !strcmp(a->cmd, "help")) {
		usage(stdout);
		exit(0);
	}
	if (!strcmp(a->cmd, "--version") || !strcmp(a->cmd, "version")) {
		if (argc > 2) {
			fprintf(stderr, "rk1828-llm: %s takes no argument (got \"%s\")\n", a->cmd,
				argv[2]);
			return -1;
		}
		printf("rk1828-llm %s\n", RK1828_VERSION);
		exit(0);
	}
	if (cmd_index(a->cmd) < 0) {
		fprintf(stderr, "rk1828-llm: unknown command \"%s\"\n", a->cmd);
		usage(stderr);
		return -1;
	}
	opts_init();
	optind = 2;
	for (;;) {
		int li = -1;
		size_t o;

		c = getopt_long(argc, argv, "m:p:n:s:r:vh", all_opts, &li);
		if (c == -1)
			break;
		if (parse_opt(c, optarg, a))
			return -1;
		for (o = 0; o < n_opts && all_opts[o].val != c; o++)
			;
		if (o < n_opts) {
			seen.given[o] = true;
			seen.as_long[o] = li >= 0;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rk1828-llm: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	if (check_opts(a, &seen) || check_command(a))
		return -1;
	return resolve_cards(a);
}

/*
 * Where card @c sits, for info: " (pci 0000:01:00.0)" or " (usb 2-1:1.0)"
 * (the bus and name of the device behind its accel node), "" when unknown.
 */
static void card_location(const struct rk_card *c, char *buf, size_t n)
{
	char path[96], dev[512], bus[512];
	const char *d, *b;
	ssize_t k;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device", c->minor);
	k = readlink(path, dev, sizeof(dev) - 1);
	if (k <= 0)
		return;
	dev[k] = '\0';
	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/subsystem",
		 c->minor);
	k = readlink(path, bus, sizeof(bus) - 1);
	if (k <= 0)
		return;
	bus[k] = '\0';
	d = strrchr(dev, '/');
	b = strrchr(bus, '/');
	snprintf(buf, n, " (%.64s %.128s)", b ? b + 1 : bus, d ? d + 1 : dev);
}

static int cmd_info(void)
{
	struct rk_card *cards;
	int n, i;

	if (rk_open_all(&cards, &n)) {
		fprintf(stderr, "rk1828-llm: %s\n", rk_error());
		return EXIT_RUNTIME;
	}
	for (i = 0; i < n; i++) {
		const struct rk_card *c = &cards[i];
		char tot[32], fr[32], at[256];

		util_fmt_bytes(tot, sizeof(tot), c->mem_size);
		util_fmt_bytes(fr, sizeof(fr), c->mem_free);
		card_location(c, at, sizeof(at));
		printf("card%d: %s, link %s %u Mbit/s%s, memory %s total / %s free, protocol %u.%u, serial %016llx\n",
		       i, c->node, rk_link_name(c->link_type), c->link_speed, at, tot, fr,
		       c->protocol >> 16, c->protocol & 0xffff,
		       (unsigned long long)c->serial);
	}
	/* Every ordered pair: a plan may put the cards in any order. */
	for (i = 0; i < n; i++) {
		int j;

		for (j = 0; j < n; j++)
			if (j != i)
				cli_print_hop(&cards[i], &cards[j]);
	}
	rk_close_all(cards, n);
	return 0;
}

void session_close(struct session *S)
{
	if (S->cards)
		rk_close_all(S->cards, S->n_cards);
	llm_model_free(&S->m);
	if (S->gf)
		gguf_close(S->gf);
}

/*
 * cli_timing() - the cards a time split is balanced for: --profile (or
 * the built-in profile) over --link. The profile was loaded once before
 * (load_profile() refused a bad one), so a failure here keeps the
 * built-in one.
 */
static const struct plan_timing *cli_timing(const struct args *a)
{
	static struct card_profile prof;
	static struct plan_timing t;
	char err[512];

	t.link = a->link;
	t.prof = a->profile && !card_profile_load(&prof, a->profile, err, sizeof(err)) ?
		 &prof : NULL;
	return &t;
}

/*
 * What the commands ask of the engine: one session (plan: --parallel S),
 * never fewer (a plan is for what was asked), --ctx and --bucket (0: the
 * planner's defaults).
 */
static void args_engine_opts(const struct args *a, struct engine_opts *eo)
{
	*eo = (struct engine_opts){
		.n_slots = a->parallel ? (int)a->parallel : 1,
		.strict_slots = true,
		.queue_max = -1,
		.n_ctx = a->n_ctx,
		.bucket = a->bucket_set ? a->bucket : 0,
		.kv_type = a->kv_type,
		.verbose = a->verbose,
		.spec = (enum spec_kind)a->spec,
		.draft_max = a->draft_max,
		.draft_min = a->draft_min, .draft_model = a->draft_model,
		.split = a->split,
		.timing = a->split == PLAN_SPLIT_TIME ? cli_timing(a) : NULL,
	};
}

void cli_engine_opts(const struct args *a, const struct session *S, struct engine_opts *eo)
{
	args_engine_opts(a, eo);
	eo->plan = &S->plan;
	eo->sizes = &S->sizes;
}

/* The plan_fit() request of @a for @m: the engine's (engine_fit_opts()). */
static void session_fit(const struct args *a, const struct llm_model *m,
			struct plan_fit_opts *fo)
{
	struct engine_opts eo;

	args_engine_opts(a, &eo);
	engine_fit_opts(m, &eo, fo);
}

/* The planner's message buffer: a line per card and the rest. */
#define SESSION_ERR_LEN (96 * PLAN_MAX_CARDS + 256)

/* Open and load @a->model into @S; -1 printed. */
static int session_load(struct session *S, const struct args *a, char *err, size_t errlen)
{
	if (!a->model) {
		fprintf(stderr, "rk1828-llm: no model given (-m MODEL)\n");
		return -1;
	}
	S->gf = gguf_open(a->model, err, errlen);
	if (!S->gf) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		return -1;
	}
	if (llm_model_load(&S->m, S->gf, err, errlen)) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		return -1;
	}
	if (S->m.note[0])
		fprintf(stderr, "rk1828-llm: note: %s\n", S->m.note);
	return 0;
}

/*
 * The cards to plan on, in pipeline order: their free bytes in @free_b and
 * indices in @ids (simulated cards of --card-mem bytes with @simulate, else
 * the cards --cards selects, opened and refreshed); -1 printed.
 */
static int session_cards(struct session *S, const struct args *a, bool simulate,
			 uint64_t *free_b, int *ids, char *err, size_t errlen)
{
	int i;

	if (simulate) {
		/* cmd_plan() refused a list; all: one card. */
		int n = a->cs.kind == CARDS_COUNT ? a->cs.n : 1;

		S->n_sel = n;
		for (i = 0; i < n; i++) {
			S->sel[i] = i;
			free_b[i] = a->card_mem;
			ids[i] = i;
		}
		return 0;
	}
	if (rk_open_all(&S->cards, &S->n_cards)) {
		fprintf(stderr, "rk1828-llm: %s\n", rk_error());
		return -1;
	}
	if (cards_spec_select(&a->cs, S->n_cards, S->sel, &S->n_sel, err, errlen)) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		return -1;
	}
	for (i = 0; i < S->n_sel; i++) {
		struct rk_card *c = &S->cards[S->sel[i]];

		if (rk_card_refresh(c)) {
			fprintf(stderr, "rk1828-llm: %s\n", rk_error());
			return -1;
		}
		free_b[i] = c->mem_free;
		ids[i] = S->sel[i];
		/* The plan counts BO rounding at the coarsest card's granularity. */
		if (rk_card_bo_align(c) > S->fit.bo_align)
			S->fit.bo_align = (uint32_t)rk_card_bo_align(c);
	}
	return 0;
}

/* Why the model does not fit and what would make it fit. */
static void session_nofit_hint(const struct session *S)
{
	char kv[32];

	/* Only full-attention blocks have a KV cache. */
	util_fmt_bytes(kv, sizeof(kv),
		       util_mul_u64(llm_kv_bytes(&S->m, 1024, S->sizes.kv_type),
				    S->m.n_layers - S->m.n_deltanet, NULL));
	fprintf(stderr, "rk1828-llm: hint: use more cards, a smaller --ctx (now %u; the KV cache is %s per 1024 tokens of context and session here)%s%s%s\n",
		S->sizes.n_ctx, kv,
		S->sizes.kv_type != QUANT_TYPE_Q4_0 ? ", a smaller --kv-type" : "",
		S->sizes.n_seq > 1 ? ", fewer sessions (--parallel)" : "",
		S->sizes.bucket > 1 ? " or a smaller --bucket" : "");
}

/*
 * Plan the model on the cards of session_cards() with plan_fit(), the
 * engine's policy: the plan run and chat hand to the engine; -1 printed.
 */
static int session_plan(struct session *S, const struct args *a, const uint64_t *free_b,
			const int *ids, char *err, size_t errlen)
{
	char note[256];
	int i, ret;

	ret = plan_fit(&S->m, &S->fit, S->n_sel, free_b, ids, &S->sizes, &S->plan, note,
		       sizeof(note), err, errlen);
	if (ret) {
		fprintf(stderr, "rk1828-llm: %s: %s\n", a->model, err);
		if (ret == PLAN_NOFIT)
			session_nofit_hint(S);
		return -1;
	}
	if (note[0])
		fprintf(stderr, "rk1828-llm: note: %s\n", note);
	for (i = 0; i < S->plan.n_segs; i++)	/* plan indices -> S->sel */
		S->plan.seg[i].card = S->sel[S->plan.seg[i].card];
	plan_format(&S->plan, S->plan_str, sizeof(S->plan_str));
	if (S->plan.note[0])
		fprintf(stderr, "rk1828-llm: note: %s\n", S->plan.note);
	return 0;
}

/*
 * session_model() - the first half of session_open(): load @a->model into
 * @S (zeroed first) and size its plan (plan_fit_sizes(), with the --ctx
 * warning); -1 printed. plan calls it before it says anything about the
 * cards, so that a bad model file's error is all it prints.
 */
static int session_model(struct session *S, const struct args *a)
{
	char err[SESSION_ERR_LEN];

	memset(S, 0, sizeof(*S));
	if (session_load(S, a, err, sizeof(err)))
		return -1;
	session_fit(a, &S->m, &S->fit);
	plan_fit_sizes(&S->m, &S->fit, &S->sizes);
	if (llm_ctx_warning(&S->m, S->sizes.n_ctx, err, sizeof(err)))
		fprintf(stderr, "rk1828-llm: warning: %s\n", err);
	return 0;
}

/*
 * session_place() - the second half: plan the model of session_model() on
 * the cards (simulated ones with @simulate, see session_cards()); -1 printed.
 */
static int session_place(struct session *S, const struct args *a, bool simulate)
{
	uint64_t free_b[PLAN_MAX_CARDS];
	int ids[PLAN_MAX_CARDS];
	char err[SESSION_ERR_LEN];

	if (session_cards(S, a, simulate, free_b, ids, err, sizeof(err)))
		return -1;
	return session_plan(S, a, free_b, ids, err, sizeof(err));
}

int session_open(struct session *S, const struct args *a, bool simulate)
{
	if (session_model(S, a))
		return -1;
	return session_place(S, a, simulate);
}

/*
 * --cards auto: the fewest cards of @mem free bytes the model @m (at @a's
 * sizes) fits on, with the reason in @why ("fits on one card", or why one
 * card fewer does not). Return: the count, or 0 (nothing fits; the
 * reason printed).
 */
static int plan_auto(const struct args *a, const struct llm_model *m, uint64_t mem,
		     char *why, size_t whylen)
{
	static uint64_t free_b[PLAN_MAX_CARDS];
	static char err[SESSION_ERR_LEN], last[SESSION_ERR_LEN];
	struct plan_sizes sz0, sz;
	struct plan_fit_opts fo;
	struct plan p;
	char bk[64] = "";
	int n, ret = 0, max, r = PLAN_NOFIT;

	session_fit(a, m, &fo);
	plan_fit_sizes(m, &fo, &sz0);
	max = m->n_layers < PLAN_MAX_CARDS ? (int)m->n_layers : PLAN_MAX_CARDS;
	last[0] = '\0';
	for (n = 1; n <= max && !ret && r == PLAN_NOFIT; n++) {
		free_b[n - 1] = mem;
		r = plan_fit(m, &fo, n, free_b, NULL, &sz, &p, NULL, 0, err, sizeof(err));
		if (r == 0)
			ret = n;
		else if (r == PLAN_NOFIT)
			snprintf(last, sizeof(last), "%s", err);
	}
	if (ret && sz.bucket < sz0.bucket)
		snprintf(bk, sizeof(bk), " with bucket %u (%u does not fit)", sz.bucket,
			 sz0.bucket);
	if (!ret && r != PLAN_NOFIT) {
		fprintf(stderr, "rk1828-llm: %s: --cards auto: %s\n", a->model, err);
	} else if (!ret) {
		/* Not the per-card list of each count tried: the limit itself. */
		plan_nofit_reason(m, &sz, max, mem, err, sizeof(err), last, sizeof(last));
		util_fmt_bytes(bk, sizeof(bk), mem);
		fprintf(stderr, "rk1828-llm: %s: --cards auto: fits on no number of %s cards: %s\n"
			"rk1828-llm: hint: %s\n", a->model, bk, err, last);
	} else if (ret == 1)
		snprintf(why, whylen, "the model fits on one card%s", bk);
	else
		snprintf(why, whylen, "the fewest that fit%s; on %d: %s", bk, ret - 1, last);
	return ret;
}

int load_profile(const struct args *a, struct card_profile *prof)
{
	char err[512];

	if (a->profile ? card_profile_load(prof, a->profile, err, sizeof(err))
		       : card_profile_builtin(prof, err, sizeof(err))) {
		fprintf(stderr, "rk1828-llm: profile: %s\n", err);
		return -1;
	}
	return 0;
}

/* K and V bytes of one session on the card of segment @s (its attention blocks). */
static uint64_t seg_kv_bytes(const struct llm_model *m, const struct plan_seg *s,
			     const struct plan_sizes *sz)
{
	uint64_t b = 0;
	int l;

	for (l = s->first; l < s->first + s->count; l++)
		if (m->layers[l].kind != LLM_LAYER_DELTANET)
			b = util_add_u64(b, llm_kv_bytes(m, sz->n_ctx, sz->kv_type), NULL);
	return b;
}

static void print_plan(const struct args *a, const struct session *S)
{
	int i;

	printf("model: %s (%s, %u blocks, dim %u, %u heads / %u kv, vocab %u), ctx %u, bucket %u, %u session%s",
	       a->model, S->m.arch_name, S->m.n_layers, S->m.dim, S->m.n_heads, S->m.n_kv_heads,
	       S->m.n_vocab, S->sizes.n_ctx, S->sizes.bucket, S->sizes.n_seq,
	       S->sizes.n_seq == 1 ? "" : "s");
	plan_print_snaps(stdout, S);	/* hybrid: the engine's state snapshots */
	printf(", KV %s\n", quant_kv_type_name(S->sizes.kv_type));
	printf("plan: %s\n", S->plan_str);
	for (i = 0; i < S->plan.n_segs; i++) {
		const struct plan_seg *s = &S->plan.seg[i];
		char need[32], fr[32], kv[32], blk[PLAN_BLK_MAX];

		util_fmt_bytes(need, sizeof(need), s->bytes);
		util_fmt_bytes(fr, sizeof(fr), s->free);
		util_fmt_bytes(kv, sizeof(kv), seg_kv_bytes(&S->m, s, &S->sizes));
		plan_seg_blocks(s, blk, sizeof(blk));
		printf("card%d: %s: %s of %s free (%llu bytes), KV %s a session\n", s->card_id,
		       blk, need, fr, (unsigned long long)s->bytes, kv);
	}
	/* Real cards: how hidden states go from each stage to the next. */
	for (i = 1; S->cards && i < S->plan.n_segs; i++)
		cli_print_hop(&S->cards[S->plan.seg[i - 1].card], &S->cards[S->plan.seg[i].card]);
}

/*
 * plan --predict: the plan's split and the other one at the same sizes
 * on the same cards (predict_split.h), into @run and @other; -1 printed.
 */
static int plan_splits(const struct args *a, const struct session *S,
		       const struct card_profile *prof, const struct predict_opts *po,
		       struct predict_split *run, struct predict_split *other)
{
	struct plan_timing t = { prof, a->link };
	enum plan_split alt = a->split == PLAN_SPLIT_TIME ? PLAN_SPLIT_BYTES : PLAN_SPLIT_TIME;
	char err[SESSION_ERR_LEN];

	if (predict_split_run(&S->m, &S->sizes, &S->plan, a->split, &t, po, run, err,
			      sizeof(err)) ||
	    predict_split_run(&S->m, &S->sizes, &S->plan, alt, &t, po, other, err,
			      sizeof(err))) {
		fprintf(stderr, "rk1828-llm: %s\n", err);
		return -1;
	}
	return 0;
}

/* The plan as JSON and/or the prediction; 0 or an exit status. */
static int plan_report(const struct args *a, const struct session *S,
		       const struct card_profile *prof)
{
	struct predict_opts po = { prof, a->link, S->sizes.bucket, S->sizes.n_ctx, &S->sizes, NULL,
				  (uint32_t)a->spec_k, a->spec_accept };
	static struct predict_split run, other;
	struct prediction *pr = &run.pr;
	char *js;

	if (a->predict && plan_splits(a, S, prof, &po, &run, &other))
		return EXIT_RUNTIME;
	if (a->json) {
		char *base = a->predict ? predict_split_json(&run, &other)
					: predict_json(&S->plan, NULL);

		js = base ? plan_json_sizes(base, S) : NULL;
		free(base);
		if (!js) {
			fprintf(stderr, "rk1828-llm: out of memory\n");
			return EXIT_RUNTIME;
		}
		printf("%s\n", js);
		free(js);
		return 0;
	}
	print_plan(a, S);
	if (a->predict) {
		predict_print(stdout, &S->plan, pr, &po);
		predict_split_print(stdout, &run, &other);
	}
	return 0;
}

/*
 * plan_cards() - the cards cmd_plan() plans on, in @sim (--cards auto:
 * the fewest simulated cards the model of @S fits on; no cards here:
 * simulated cards of the profile's usable memory), said on stderr;
 * *@simulate set for simulated cards. Return: 0, or an exit status
 * (printed).
 */
static int plan_cards(const struct args *a, const struct session *S,
		      const struct card_profile *prof, struct args *sim, bool *simulate)
{
	char why[SESSION_ERR_LEN + 64], mem[32];
	struct rk_card *cards;
	int n;

	if (a->cards_auto) {
		/* Deployment planning: simulated cards of the profile's usable memory. */
		*simulate = true;
		if (!sim->card_mem)
			sim->card_mem = prof->mem_usable_bytes;
		sim->cs.n = plan_auto(a, &S->m, sim->card_mem, why, sizeof(why));
		if (!sim->cs.n)
			return EXIT_RUNTIME;
		util_fmt_bytes(mem, sizeof(mem), sim->card_mem);
		fprintf(stderr, "rk1828-llm: --cards auto: %d card%s of %s: %s\n", sim->cs.n,
			sim->cs.n == 1 ? "" : "s", mem, why);
		return 0;
	}
	if (*simulate)
		return 0;
	/* No cards here: plan for simulated cards of the profile's usable memory. */
	if (rk_open_all(&cards, &n) != -ENOENT) {
		if (n > 0)
			rk_close_all(cards, n);
		return 0;
	}
	if (a->cs.kind == CARDS_LIST) {
		fprintf(stderr, "rk1828-llm: no cards found: a list of card indices (--cards %s) cannot be used without real cards; give a count (--cards N) to plan for simulated cards\n",
			a->cards);
		return EXIT_RUNTIME;
	}
	*simulate = true;
	sim->card_mem = prof->mem_usable_bytes;
	if (sim->cs.kind == CARDS_ALL) {
		sim->cs.kind = CARDS_COUNT;
		sim->cs.n = 1;
	}
	util_fmt_bytes(mem, sizeof(mem), sim->card_mem);
	fprintf(stderr, "rk1828-llm: no cards found: planning for %d simulated card%s of %s, profile %s's usable memory (--card-mem to change)\n",
		sim->cs.n, sim->cs.n == 1 ? "" : "s", mem, prof->name);
	return 0;
}

/*
 * rk1828-llm plan: the model is loaded first (a bad file's error is the
 * only output), then the cards chosen (plan_cards()) and the plan printed.
 */
static int cmd_plan(const struct args *a)
{
	struct card_profile prof;
	struct session S;
	struct args sim = *a;
	bool simulate = a->card_mem != 0;
	int ret;

	/* The profile's usable memory is the simulated cards' (--card-mem aside). */
	if (load_profile(a, &prof))
		return EXIT_RUNTIME;
	if (simulate && a->cs.kind == CARDS_LIST) {
		fprintf(stderr, "rk1828-llm: --cards %s: a list of card indices needs real cards; with --card-mem give a count (--cards N)\n",
			a->cards);
		return EXIT_USAGE;
	}
	ret = session_model(&S, a) ? EXIT_RUNTIME : 0;
	if (!ret)
		ret = plan_cards(a, &S, &prof, &sim, &simulate);
	if (!ret)
		ret = session_place(&S, &sim, simulate) ? EXIT_RUNTIME : 0;
	if (!ret)
		ret = plan_report(a, &S, &prof);
	session_close(&S);
	return ret;
}

int main(int argc, char **argv)
{
	struct args a;

	/*
	 * getopt's messages ("unrecognized option") name the program by
	 * argv[0]: the name, as every other message, not the path it was run by.
	 */
	argv[0] = (char *)"rk1828-llm";
	/* `serve` has its own options (userspace/server/serve.c). */
	if (argc >= 2 && !strcmp(argv[1], "serve")) {
		argv[1] = argv[0];
		return serve_main(argc - 1, argv + 1);
	}
	if (parse_args(argc, argv, &a))
		return EXIT_USAGE;
	if (!strcmp(a.cmd, "info"))
		return cmd_info();
	if (!strcmp(a.cmd, "plan"))
		return cmd_plan(&a);
	if (!strcmp(a.cmd, "run"))
		return cmd_run(&a);
	if (!strcmp(a.cmd, "tokenize"))
		return cmd_tokenize(&a);
	if (!strcmp(a.cmd, "chat"))
		return cmd_chat(&a);
	if (!strcmp(a.cmd, "bench"))
		return cmd_bench(&a);
	return EXIT_USAGE;	/* parse_args() rejects other commands */
}
