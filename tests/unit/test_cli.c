// SPDX-License-Identifier: MIT
/*
 * Host tests of rk1828-llm's command line that need no card: a FIFO or a
 * directory given as the model is refused at once (it used to block
 * `plan` and `run` forever in open()), --card-mem refuses negative and
 * overflowing sizes (-1 was taken as 2^64-1 bytes, 17179869185G wrapped to
 * 1 GiB) and reads 1.5MB as 1500000 bytes (it was 1.5 MiB), and the plan line of a 40-card plan is printed whole (it was cut
 * at 511 characters), --seed -1 is a time-based seed and -2 is refused,
 * a bad model file's error is all plan prints, an option the command
 * does not take is refused naming it, and run --json-schema refuses a
 * schema it cannot follow (inline or in a file) before opening a card. Runs build/rk1828-llm (or $RK1828_LLM) under
 * timeout(1), so a hang fails instead of stalling the suite. Prints TAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rk1828/quant_blocks.h"

#include "synth_model.h"
#include "tap.h"

static const char *llm;

/*
 * run() - run "timeout 120 rk1828-llm ARGS 2>&1" (a hang guard only), output into @out.
 * Return: the exit status (124: timed out), or -1.
 */
static int run(const char *args, char *out, size_t size)
{
	char cmd[1024];
	size_t n = 0;
	FILE *f;
	int st;

	snprintf(cmd, sizeof(cmd), "timeout 120 %s %s 2>&1", llm, args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(out, 1, size - 1, f);
	out[n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_not_regular(void)
{
	char dir[] = "/tmp/rk1828-cli-XXXXXX", fifo[64], args[256], out[4096];
	int rc;

	if (!tap_ok(mkdtemp(dir) != NULL, "temporary directory"))
		return;
	snprintf(fifo, sizeof(fifo), "%s/model.fifo", dir);
	if (tap_ok(mkfifo(fifo, 0600) == 0, "mkfifo %s", fifo)) {
		snprintf(args, sizeof(args), "plan -m %s --cards 2 --card-mem 1G", fifo);
		rc = run(args, out, sizeof(out));
		tap_ok(rc == 1 && strstr(out, fifo) && strstr(out, "not a regular file"),
		       "plan -m FIFO: exit %d, \"%.*s\"", rc, (int)strcspn(out, "\n"), out);
		snprintf(args, sizeof(args), "run -m %s -p hello -n 1", fifo);
		rc = run(args, out, sizeof(out));
		tap_ok(rc == 1 && strstr(out, fifo) && strstr(out, "not a regular file"),
		       "run -m FIFO: exit %d, \"%.*s\"", rc, (int)strcspn(out, "\n"), out);
		unlink(fifo);
	}
	snprintf(args, sizeof(args), "plan -m %s --cards 1 --card-mem 1G", dir);
	rc = run(args, out, sizeof(out));
	tap_ok(rc == 1 && strstr(out, "not a regular file"),
	       "plan -m DIRECTORY: exit %d, \"%.*s\"", rc, (int)strcspn(out, "\n"), out);
	rmdir(dir);
}

/* "plan -m @model --cards 2 --card-mem @mem" into @out; the exit status. */
static int plan_mem(const char *model, const char *mem, char *out, size_t size)
{
	char args[256];

	snprintf(args, sizeof(args), "plan -m %s --cards 2 --ctx 64 --card-mem '%s'", model, mem);
	return run(args, out, size);
}

/*
 * Decimal (SI) units are powers of 1000, binary ones and bare K/M/G/T
 * powers of 1024: --card-mem 1.5MB was 1.5 MiB.
 */
static void test_card_mem_units(const char *model)
{
	static const struct {
		const char *mem, *same, *free;
	} units[] = {
		{ "1.5MB", "1500000", "of 1.43 MiB free" },
		{ "1.5MiB", "1572864", "of 1.50 MiB free" },
		{ "1.5M", "1572864", "of 1.50 MiB free" },
		{ "2000kB", "2000000", "of 1.91 MiB free" },
	};
	char a[8192], b[8192];
	size_t i;
	int ra, rb;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		ra = plan_mem(model, units[i].mem, a, sizeof(a));
		rb = plan_mem(model, units[i].same, b, sizeof(b));
		tap_ok(ra == 0 && rb == 0 && !strcmp(a, b) && strstr(a, units[i].free),
		       "--card-mem %s plans as %s bytes (\"%s\"): exit %d/%d", units[i].mem,
		       units[i].same, units[i].free, ra, rb);
	}
}

static void test_card_mem(const char *model)
{
	static const char *const bad[] = { "-1", "17179869185G", "0", "1X", "", "1.5XB", "-1G",
					   "5Gb" };
	char args[256], out[4096];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(args, sizeof(args), "plan -m %s --cards 2 --card-mem '%s'", model, bad[i]);
		rc = run(args, out, sizeof(out));
		tap_ok(rc == 2 && strstr(out, "--card-mem: bad size") &&
		       strstr(out, "kB, MB, GB, TB powers of 1000"),
		       "--card-mem '%s' refused: exit %d, \"%.*s\"", bad[i], rc,
		       (int)strcspn(out, "\n"), out);
	}
	snprintf(args, sizeof(args), "plan -m %s --cards 2 --card-mem 16777215T", model);
	rc = run(args, out, sizeof(out));
	tap_ok(rc == 0 && strstr(out, "plan: card0: blk 0-"),
	       "--card-mem 16777215T (just below 2^64) plans: exit %d", rc);
}

static void test_long_plan(const char *model)
{
	char args[256], out[16384], *line, *end;
	int rc;

	snprintf(args, sizeof(args), "plan -m %s --cards 40 --card-mem 1G", model);
	rc = run(args, out, sizeof(out));
	line = strstr(out, "plan: ");
	end = line ? strchr(line, '\n') : NULL;
	tap_ok(rc == 0 && line && end && end - line > 511 &&
	       !strncmp(end - strlen("card39: blk 47 + output"), "card39: blk 47 + output",
			strlen("card39: blk 47 + output")),
	       "40-card plan line printed whole (%d chars, ends \"%.*s\")",
	       line && end ? (int)(end - line) : -1, 24,
	       end && end - line > 24 ? end - 24 : "");
}

/* --seed -1 is a time-based seed (as llama.cpp's -s -1); -2 is refused. */
static void test_seed(const char *model)
{
	char args[256], out[4096];
	int rc;

	snprintf(args, sizeof(args), "run -m %s -p x -n 1 --seed -1", model);
	rc = run(args, out, sizeof(out));
	tap_ok(rc != 2 && !strstr(out, "--seed"),
	       "--seed -1 is taken (status %d: the run itself needs cards)", rc);
	snprintf(args, sizeof(args), "run -m %s -p x -n 1 --seed -2", model);
	rc = run(args, out, sizeof(out));
	tap_ok(rc == 2 && strstr(out, "--seed: bad value \"-2\""),
	       "--seed -2 is refused naming the option (status %d)", rc);
}

/* run --json-schema: a schema we cannot follow is a usage error naming why, before any card. */
static void test_json_schema(const char *model)
{
	char args[512], out[4096], path[] = "/tmp/rk1828-schema-XXXXXX";
	int rc, fd = mkstemp(path);
	static const char bad[] = "{\"properties\":{\"a\":{\"pattern\":\"x(?!y)\"}}}";
	bool wrote = fd >= 0 && write(fd, bad, strlen(bad)) == (ssize_t)strlen(bad);

	if (fd >= 0)
		close(fd);
	snprintf(args, sizeof(args), "run -m %s -p x --json-schema '{\"type\":\"hiccup\"}'", model);
	rc = run(args, out, sizeof(out));
	tap_ok(rc == 2 && strstr(out, "--json-schema: 'type' 'hiccup' is not a JSON type"),
	       "run --json-schema with type hiccup: status 2 naming it (%d: %.80s)", rc, out);
	snprintf(args, sizeof(args), "run -m %s -p x --json-schema %s", model, path);
	rc = run(args, out, sizeof(out));
	tap_ok(wrote && rc == 2 && strstr(out, "'pattern' 'x(?!y)': look-ahead '(?!' is not supported (at offset 1) (at properties.a)"),
	       "run --json-schema FILE with a look-ahead in a pattern: status 2 naming it and where (%d)", rc);
	snprintf(args, sizeof(args), "run -m %s -p x --json-schema /nonexistent/s.json", model);
	rc = run(args, out, sizeof(out));
	tap_ok(rc == 2 && strstr(out, "No such file"), "run --json-schema of a missing file: status 2 (%d)", rc);
	snprintf(args, sizeof(args), "run -m %s -p x -n 1 --json-schema '{\"const\":1}'", model);
	rc = run(args, out, sizeof(out));
	tap_ok(rc != 2 && !strstr(out, "json-schema"),
	       "run --json-schema with a good schema is taken (status %d: the run itself needs cards)", rc);
	unlink(path);
}

/* Option errors say what is accepted. */
static void test_option_errors(const char *model)
{
	char args[256], out[4096];
	int rc;

	snprintf(args, sizeof(args), "plan -m %s --ctx 0", model);
	rc = run(args, out, sizeof(out));
	tap_ok(rc == 2 && strstr(out, "--ctx: bad value \"0\" (an integer 1..2147483647)"),
	       "--ctx 0 is refused with the accepted range (status %d)", rc);
	snprintf(args, sizeof(args), "plan -m %s --parallel 65", model);
	rc = run(args, out, sizeof(out));
	tap_ok(rc == 2 && strstr(out, "--parallel: bad value \"65\" (an integer 1..64)"),
	       "--parallel 65 is refused with its range 1..64 (status %d)", rc);
	{
		static const struct { const char *opt, *want; } pen[] = {
			{ "--min-p 1.5", "--min-p: bad value \"1.5\": min_p must be in [0, 1] (got 1.5)" },
			{ "--repeat-penalty -1", "--repeat-penalty: bad value \"-1\": repeat_penalty must be in [0, 3.402823466e+38] (got -1)" },
			{ "--repeat-last-n -2", "--repeat-last-n: bad value \"-2\": repeat_last_n must be in [-1, 1073741824] (got -2)" },
			{ "--presence-penalty 2.5", "--presence-penalty: bad value \"2.5\": presence_penalty must be in [-2, 2] (got 2.5)" },
			{ "--frequency-penalty -3", "--frequency-penalty: bad value \"-3\": frequency_penalty must be in [-2, 2] (got -3)" },
			{ "--top-p 0", "--top-p: bad value \"0\": top_p must be in (0, 1] (got 0)" },
			{ "--temp 101", "--temp: bad value \"101\": temperature must be in [0, 100] (got 101)" },
			{ "--top-k -1", "--top-k: bad value \"-1\": top_k must be in [0, 1073741824] (got -1)" },
			{ "--temp hot", "--temp: bad value \"hot\" (a number)" },
			{ "--logit-bias 5+101", "--logit-bias: bad value \"5+101\" (ID+B or ID-B with B 0..100, or ID-inf to ban)" },
			{ "--logit-bias 5+inf", "--logit-bias: bad value \"5+inf\"" },
			{ "--logit-bias x+1", "--logit-bias: bad value \"x+1\"" },
			{ "--logit-bias 5", "--logit-bias: bad value \"5\"" },
		};
		size_t k;

		for (k = 0; k < sizeof(pen) / sizeof(pen[0]); k++) {
			snprintf(args, sizeof(args), "run -m %s -p x -n 1 %s", model, pen[k].opt);
			rc = run(args, out, sizeof(out));
			tap_ok(rc == 2 && strstr(out, pen[k].want),
			       "run %s is refused with its range (status %d)", pen[k].opt, rc);
		}
	}
	snprintf(args, sizeof(args), "plan -m %s --cards abc", model);
	rc = run(args, out, sizeof(out));
	tap_ok(rc == 2 && strstr(out, "plan also takes auto"),
	       "plan --cards abc names auto among the accepted forms (status %d)", rc);
}

/*
 * An option the command does not take is a usage error naming it and the
 * commands that take it (tokenize -n 5 was accepted and ignored), and an
 * option that needs another says so; every option a command documents is
 * taken (the command then fails only for want of cards, never status 2).
 */
static void test_foreign_options(const char *model)
{
	static const struct {
		const char *args, *msg;
	} bad[] = {
		{ "tokenize -m M -p hi -n 5", "tokenize does not take -n (an option of run, chat and bench)" },
		{ "tokenize -m M -p hi --n-predict 5", "tokenize does not take --n-predict (an option of run, chat and bench)" },
		{ "tokenize -m M -p hi --cards 2", "tokenize does not take --cards (an option of run, chat, plan, bench and serve)" },
		{ "tokenize -m M -p hi --chat", "tokenize does not take --chat (an option of run)" },
		{ "plan -m M -p hi", "plan does not take -p (an option of run, tokenize and bench)" },
		{ "plan -m M --temp 0", "plan does not take --temp (an option of run and chat)" },
		{ "plan -m M --min-p 0.1", "plan does not take --min-p (an option of run and chat)" },
		{ "plan -m M -v", "plan does not take -v (an option of run, chat and serve)" },
		{ "plan -m M --link usb", "plan: --link needs --predict (the link of the prediction)" },
		{ "run -m M -p hi --predict", "run does not take --predict (an option of plan)" },
		{ "run -m M -p hi --parallel 2", "run does not take --parallel (an option of plan and serve)" },
		{ "run -m M -p hi --profile x.conf", "run does not take --profile (an option of plan and bench)" },
		{ "run -m M -p hi -s sys", "run: -s needs --chat (a message of the chat template)" },
		{ "run -m M -p hi --no-think", "run: --no-think needs --chat (a switch of the chat template)" },
		{ "chat -m M -p hi", "chat does not take -p (an option of run, tokenize and bench)" },
		{ "chat -m M --json", "chat does not take --json (an option of run and plan)" },
		{ "chat -m M --dump-logits /tmp/rk1828-cli.logits", "chat does not take --dump-logits (an option of run)" },
		{ "bench -m M --no-bos", "bench does not take --no-bos (an option of run, chat and tokenize)" },
		{ "bench -m M --card-mem 1G", "bench does not take --card-mem (an option of plan)" },
		{ "info -m M", "info does not take -m (an option of run, chat, tokenize, plan, bench and serve)" },
		{ "info --ctx 64", "info does not take --ctx (an option of run, chat, plan, bench and serve)" },
		{ "run -m M -p hi --port 8080", "run does not take --port (an option of serve)" },
		{ "plan -m M --no-ui", "plan does not take --no-ui (an option of serve)" },
		/* serve's whole table (srv_options()), not a copy of part of it. */
		{ "run -m M -p hi --allowed-host h", "run does not take --allowed-host (an option of serve)" },
		{ "bench -m M --api-key-file k", "bench does not take --api-key-file (an option of serve)" },
		{ "chat -m M --chat-template-file t", "chat does not take --chat-template-file (an option of serve)" },
		{ "plan -m M --queue 4", "plan does not take --queue (an option of serve)" },
		{ "--version extra", "--version takes no argument (got \"extra\")" },
		{ "version -m M", "version takes no argument (got \"-m\")" },
	};
	static const char *const good[] = {
		"tokenize -m M -p hi --ids --no-bos --parse-special",
		"plan -m M --cards 2 --ctx 64 --bucket 4 --card-mem 1G --predict --link usb"
		" --profile emulator/profiles/rk1828.conf --json --parallel 2",
		"run -m M -p hi -n 1 --temp 0 --top-k 1 --top-p 0.5 --min-p 0.05 --repeat-penalty 1.1"
		" --repeat-last-n -1 --presence-penalty -2 --frequency-penalty 2 --logit-bias 5+1"
		" --logit-bias 6-inf --logit-bias 7-2.5 --seed 1 --cards 1 --bucket 4"
		" --ctx 64 --no-bos --dump-logits /tmp/rk1828-cli.logits --json --ignore-eos"
		" --parse-special --chat -s sys --think -v",
		"chat -m M -s sys --no-think -n 1 --temp 0 --top-k 1 --top-p 0.5 --min-p 0 --repeat-penalty 0"
		" --repeat-last-n 0 --presence-penalty 0.5 --frequency-penalty -0.5 --seed 1 --cards 1"
		" --bucket 4 --ctx 64 --no-bos --ignore-eos --parse-special -v </dev/null",
		"bench -m M -p 16 -n 1 -r 1 --sessions 1 --trace /tmp/rk1828-cli.trace --cards 1"
		" --ctx 64 --bucket 4 --link usb --profile emulator/profiles/rk1828.conf",
		"info",
		"--version",
	};
	char args[512], out[8192], want[256], *at;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* " -m M " is the model. */
		at = strstr(bad[i].args, " -m M");
		if (at)
			snprintf(args, sizeof(args), "%.*s -m %s%s", (int)(at - bad[i].args),
				 bad[i].args, model, at + strlen(" -m M"));
		else
			snprintf(args, sizeof(args), "%s", bad[i].args);
		snprintf(want, sizeof(want), "rk1828-llm: %s\n", bad[i].msg);
		rc = run(args, out, sizeof(out));
		tap_ok(rc == 2 && !strcmp(out, want), "%s: exit %d, \"%.*s\"", bad[i].args, rc,
		       (int)strcspn(out, "\n"), out);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		at = strstr(good[i], " -m M");
		if (at)
			snprintf(args, sizeof(args), "%.*s -m %s%s", (int)(at - good[i]), good[i],
				 model, at + strlen(" -m M"));
		else
			snprintf(args, sizeof(args), "%s", good[i]);
		rc = run(args, out, sizeof(out));
		tap_ok(rc != 2 && rc != 124 && !strstr(out, "does not take") && !strstr(out, " needs --"),
		       "%.*s takes every option it lists: exit %d, \"%.*s\"",
		       (int)strcspn(good[i], " "), good[i], rc, (int)strcspn(out, "\n"), out);
	}
	unlink("/tmp/rk1828-cli.logits");
	unlink("/tmp/rk1828-cli.trace");
}

/*
 * A bad model file's error is all plan prints, naming the file and the
 * reason: "no cards found: planning for ... simulated cards" (and --cards
 * auto's pick) used to come first, as if the plan had started.
 */
static void test_model_error_only(void)
{
	static const char *const how[] = { "--cards 2", "--cards auto", "" };
	char bad[] = "/tmp/rk1828-cli-bad-XXXXXX", args[256], out[4096], want[256];
	size_t i;
	FILE *f;
	int fd, rc;

	fd = mkstemp(bad);
	if (!tap_ok(fd >= 0, "temporary file"))
		return;
	f = fdopen(fd, "w");
	fputs("garbage\n", f);
	fclose(f);
	for (i = 0; i < sizeof(how) / sizeof(how[0]); i++) {
		snprintf(args, sizeof(args), "plan -m /nonexistent/m.gguf %s", how[i]);
		rc = run(args, out, sizeof(out));
		tap_ok(rc == 1 && !strcmp(out, "rk1828-llm: /nonexistent/m.gguf: open: No such file or directory\n"),
		       "plan %s of a missing model: exit %d, the error alone: \"%.*s\"",
		       how[i][0] ? how[i] : "(no --cards)", rc, (int)strcspn(out, "\n"), out);
		snprintf(args, sizeof(args), "plan -m %s %s", bad, how[i]);
		snprintf(want, sizeof(want),
			 "rk1828-llm: %s: header: file size 8 is smaller than the 24-byte header\n", bad);
		rc = run(args, out, sizeof(out));
		tap_ok(rc == 1 && !strcmp(out, want),
		       "plan %s of an 8-byte file: exit %d, the error alone: \"%.*s\"",
		       how[i][0] ? how[i] : "(no --cards)", rc, (int)strcspn(out, "\n"), out);
	}
	unlink(bad);
}

int main(void)
{
	struct synth_model s = {
		.arch = "llama", .n_layers = 48, .dim = 32, .ffn = 64, .n_heads = 4,
		.n_kv_heads = 2, .n_ctx = 256, .n_vocab = 300, .rope_theta = 10000.0f,
		.vocab = true, .tied = true, .fill = SYNTH_PATTERN,
		.t = {
			[SYNTH_EMBD] = { QUANT_TYPE_F32 }, [SYNTH_ATTN_NORM] = { QUANT_TYPE_F32 },
			[SYNTH_Q] = { QUANT_TYPE_Q8_0 }, [SYNTH_K] = { QUANT_TYPE_Q8_0 },
			[SYNTH_V] = { QUANT_TYPE_Q8_0 }, [SYNTH_O] = { QUANT_TYPE_Q8_0 },
			[SYNTH_FFN_NORM] = { QUANT_TYPE_F32 }, [SYNTH_GATE] = { QUANT_TYPE_Q8_0 },
			[SYNTH_UP] = { QUANT_TYPE_Q8_0 }, [SYNTH_DOWN] = { QUANT_TYPE_Q8_0 },
			[SYNTH_OUT_NORM] = { QUANT_TYPE_F32 },
		},
	};
	char model[64], err[256];

	printf("TAP version 13\n");
	llm = getenv("RK1828_LLM") ? getenv("RK1828_LLM") : "build/rk1828-llm";
	if (!tap_ok(access(llm, X_OK) == 0, "%s is built", llm))
		return tap_done();
	if (!tap_ok(synth_model_tmp(&s, model, err, sizeof(err)) == 0,
		    "48-block synthetic model%s%s", err[0] ? ": " : "", err))
		return tap_done();
	test_not_regular();
	test_card_mem(model);
	test_card_mem_units(model);
	test_long_plan(model);
	test_seed(model);
	test_json_schema(model);
	test_option_errors(model);
	test_model_error_only();
	test_foreign_options(model);
	unlink(model);
	return tap_done();
}
