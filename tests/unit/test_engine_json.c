// SPDX-License-Identifier: MIT
/*
 * Structured outputs in the engine (engine_request.schema,
 * userspace/engine/engine_json.c) with stories260K on 2 mock cards: a const
 * schema gives exactly its value and ends with STOP, greedy and sampled;
 * an enum gives one of its values for 6 seeds; an object schema gives a
 * JSON object with the required keys and types (parsed with jansson, not
 * with our matcher); an integer range holds; constrained logprobs are those of the masked
 * distribution (finite, <= 0, alternatives all valid); 4 sessions batched
 * (3 constrained differently, 1 free) give each one's text alone; the
 * same request again is a prefix-cache hit with the same text; a
 * max_tokens cut ends with LENGTH; the vocabulary scan allows exactly
 * what checking each token alone allows; a "pattern" (a code of two
 * capitals, a dash and three digits) and a number range with multipleOf
 * hold on sampled text (checked by hand, not by the matcher); schema and
 * tools together give either a whole call of a tool (its strict
 * parameters kept) or a document, and tool_choice required a call.
 * The model never writes JSON by itself:
 * without the schema its greedy text is a story. Output: TAP.
 */
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "gguf.h"
#include "jsonmatch.h"
#include "jsonvocab.h"
#include "mock_rk.h"
#include "model.h"
#include "tap.h"
#include "tokenizer.h"

#define MAX_OUT 2048

struct res {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	char text[MAX_OUT];
	size_t len;
	int n_ids;
	float lp[256];
	int n_top[256];
	int32_t top[256][4];
	struct engine_event done_ev;
	struct engine_req *q;
};

static struct rk_card cards[MOCK_CARDS];
static struct llm_model M;
static struct tokenizer *tk;

static void on_event(const struct engine_event *ev, void *user)
{
	struct res *r = user;
	int i, k;

	pthread_mutex_lock(&r->mu);
	if (r->len + ev->len < MAX_OUT) {
		memcpy(r->text + r->len, ev->text, ev->len);
		r->len += ev->len;
		r->text[r->len] = 0;
	}
	for (i = 0; i < ev->n_ids && r->n_ids < 256; i++, r->n_ids++) {
		if (!ev->logprobs)
			continue;
		r->lp[r->n_ids] = ev->logprobs[i].logprob;
		r->n_top[r->n_ids] = ev->logprobs[i].n_top;
		for (k = 0; k < ev->logprobs[i].n_top && k < 4; k++)
			r->top[r->n_ids][k] = ev->logprobs[i].top[k].id;
	}
	if (ev->kind == ENGINE_EV_DONE) {
		r->done_ev = *ev;
		r->done_ev.error = NULL;
		r->done = true;
		pthread_cond_signal(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
}

static struct engine *mk_engine(int n_slots)
{
	struct engine_opts o = { .n_slots = n_slots, .n_ctx = 256, .bucket = 8, .queue_max = 8,
				 .strict_slots = true };
	struct engine *e = NULL;
	char err[512];

	mock_rk_reset();
	if (engine_create(&e, &M, tk, cards, NULL, 2, &o, err, sizeof(err)))
		printf("# engine_create: %s\n", err);
	return e;
}

static struct jm_schema *sch(const char *text)
{
	char err[256];
	struct jm_schema *s = jm_compile_text(text, strlen(text), err, sizeof(err));

	if (!s)
		printf("# schema %s: %s\n", text, err);
	return s;
}

/* Submit @prompt under @s (NULL: free) for @n tokens; temp 0 unless @seed. */
static int submit(struct engine *e, struct res *r, const char *prompt, struct jm_schema *s,
		  int n, uint64_t seed, bool logprobs)
{
	struct engine_request rq = { 0 };
	int32_t toks[256];
	char err[256];
	int ret;

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	rq.n_prompt = tok_encode(tk, prompt, true, toks, 256);
	rq.prompt = toks;
	rq.max_tokens = n;
	rq.s.top_p = 1.0f;
	rq.s.temperature = seed ? 1.0f : 0.0f;
	rq.s.seed = seed;
	rq.s.have_seed = seed != 0;
	rq.s.logprobs = logprobs;
	rq.s.n_probs = logprobs ? 4 : 0;
	rq.schema = s;
	rq.cb = on_event;
	rq.user = r;
	ret = engine_submit(e, &rq, &r->q, err, sizeof(err));
	if (ret)
		printf("# submit: %s\n", err);
	return ret;
}

static void wait_put(struct res *r)
{
	pthread_mutex_lock(&r->mu);
	while (!r->done)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	engine_req_put(r->q);
}

/* One request alone on a fresh engine. */
static void run1(struct res *r, const char *prompt, struct jm_schema *s, int n, uint64_t seed,
		 bool logprobs)
{
	struct engine *e = mk_engine(1);

	if (!e || submit(e, r, prompt, s, n, seed, logprobs)) {
		r->done = true;
		engine_destroy(e);
		return;
	}
	wait_put(r);
	engine_destroy(e);
}

static void test_const(void)
{
	struct jm_schema *s = sch("{\"const\":\"foooooo\"}"), *s42 = sch("{\"const\":\"42\"}");
	struct res r, free_r;
	int seed, good = 0;

	run1(&free_r, "Once upon a time", NULL, 10, 0, false);
	tap_ok(free_r.len > 0 && !strchr(free_r.text, '"'),
	       "without a schema the model writes a story (\"%.40s\")", free_r.text);
	run1(&r, "Once upon a time", s, 10, 0, false);
	tap_ok(!strcmp(r.text, "\"foooooo\"") && r.done_ev.finish == ENGINE_FINISH_STOP,
	       "const \"foooooo\", greedy, max_tokens 10: exactly \"foooooo\" (quotes included), finish stop (got '%s', %d tokens)",
	       r.text, r.done_ev.usage.completion_tokens);
	run1(&r, "Once upon a time", s42, 6, 0, false);
	tap_ok(!strcmp(r.text, "\"42\"") && r.done_ev.finish == ENGINE_FINISH_STOP,
	       "const \"42\", max_tokens 6: \"42\" (got '%s')", r.text);
	for (seed = 1; seed <= 3; seed++) {
		run1(&r, "Once upon a time", s, 10, (uint64_t)seed, false);
		good += !strcmp(r.text, "\"foooooo\"") && r.done_ev.finish == ENGINE_FINISH_STOP;
	}
	tap_ok(good == 3, "const, sampled at temperature 1 with 3 seeds: always \"foooooo\" (%d of 3)",
	       good);
	run1(&r, "Once upon a time", s, 3, 0, false);
	tap_ok(r.done_ev.finish == ENGINE_FINISH_LENGTH && r.len < 9 &&
	       !strncmp(r.text, "\"foooooo\"", r.len) && r.done_ev.usage.completion_tokens == 3,
	       "const cut by max_tokens 3: finish length, a prefix of the value ('%s')", r.text);
	jm_schema_put(s);
	jm_schema_put(s42);
}

static void test_enum(void)
{
	struct jm_schema *s = sch("{\"enum\":[\"red\",\"green\",\"blue\",7]}");
	static const char *const vals[] = { "\"red\"", "\"green\"", "\"blue\"", "7" };
	struct res r;
	int seed, k, good = 0, distinct = 0, seen[4] = { 0 };

	for (seed = 0; seed <= 6; seed++) {
		run1(&r, "The cat", s, 12, (uint64_t)seed, false);
		for (k = 0; k < 4; k++)
			if (!strcmp(r.text, vals[k]) && r.done_ev.finish == ENGINE_FINISH_STOP) {
				good++;
				distinct += !seen[k]++;
			}
		if (k == 4 && good <= seed)
			printf("#   seed %d: '%s'\n", seed, r.text);
	}
	tap_ok(good == 7, "enum, greedy and 6 seeds: each reply is one of the values, finish stop (%d of 7, %d distinct)",
	       good, distinct);
	jm_schema_put(s);
}

/* @text is {"name": string of 1..8 code points, "age": integer}, nothing else. */
static bool person_ok(const char *text)
{
	json_error_t je;
	json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	json_t *name = json_object_get(o, "name"), *age = json_object_get(o, "age");
	bool ok = json_is_object(o) && json_object_size(o) == 2 && json_is_string(name) &&
		  json_string_length(name) >= 1 && json_is_integer(age);

	if (!ok)
		printf("#   not a person: '%s'\n", text);
	json_decref(o);
	return ok;
}

static void test_object(void)
{
	struct jm_schema *s = sch("{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\","
				  "\"minLength\":1,\"maxLength\":8},\"age\":{\"type\":\"integer\"}},"
				  "\"required\":[\"name\",\"age\"],\"additionalProperties\":false}");
	struct res r;
	int seed, good = 0, i, lp_ok = 1;

	run1(&r, "Lily and Ben", s, 120, 0, true);
	tap_ok(person_ok(r.text) && r.done_ev.finish == ENGINE_FINISH_STOP,
	       "object schema, greedy: a JSON object with a string name and an integer age, finish stop ('%s')",
	       r.text);
	for (i = 0; i < r.n_ids; i++)
		lp_ok &= isfinite(r.lp[i]) && r.lp[i] <= 0 && r.n_top[i] >= 1 &&
			 r.top[i][0] >= 0 && r.lp[i] >= -1e30f;
	tap_ok(lp_ok && r.n_ids > 0,
	       "constrained logprobs: %d tokens, each finite and <= 0 (the masked distribution)", r.n_ids);
	for (seed = 11; seed <= 14; seed++) {
		run1(&r, "Lily and Ben", s, 120, (uint64_t)seed, false);
		good += person_ok(r.text) && r.done_ev.finish == ENGINE_FINISH_STOP;
	}
	tap_ok(good == 4, "object schema, sampled with 4 seeds: always a valid object (%d of 4)", good);
	jm_schema_put(s);
}

/* An integer range inside an object, greedy and sampled. */
static void test_range(void)
{
	struct jm_schema *s = sch("{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\","
				  "\"minimum\":3,\"maximum\":7}},\"required\":[\"n\"],\"additionalProperties\":false}");
	struct res r;
	int seed, good = 0;

	for (seed = 0; seed <= 3; seed++) {
		json_t *o, *n;

		run1(&r, "Tom had", s, 40, (uint64_t)seed, false);
		o = json_loads(r.text, 0, NULL);
		n = json_object_get(o, "n");
		if (json_is_integer(n) && json_integer_value(n) >= 3 && json_integer_value(n) <= 7 &&
		    json_object_size(o) == 1 && r.done_ev.finish == ENGINE_FINISH_STOP)
			good++;
		else
			printf("#   seed %d: '%s'\n", seed, r.text);
		json_decref(o);
	}
	tap_ok(good == 4, "integer 3..7 in an object, greedy and 3 seeds: always in range (%d of 4)", good);
	jm_schema_put(s);
}

/* A pattern and a number range with multipleOf in one object, greedy and sampled. */
static void test_pattern_number(void)
{
	struct jm_schema *s = sch("{\"type\":\"object\",\"properties\":{"
				  "\"code\":{\"type\":\"string\",\"pattern\":\"^[A-Z]{2}-\\\\d{3}$\"},"
				  "\"x\":{\"type\":\"number\",\"minimum\":0.5,\"exclusiveMaximum\":2.5,\"multipleOf\":0.25}},"
				  "\"required\":[\"code\",\"x\"],\"additionalProperties\":false}");
	struct res r;
	int seed, good = 0;

	for (seed = 0; seed <= 4; seed++) {
		json_t *o, *c, *x;
		const char *v;
		double d;

		run1(&r, "Tom had", s, 80, (uint64_t)seed, false);
		o = json_loads(r.text, 0, NULL);
		c = json_object_get(o, "code");
		x = json_object_get(o, "x");
		v = json_string_value(c);
		d = json_number_value(x);
		if (v && strlen(v) == 6 && v[0] >= 'A' && v[0] <= 'Z' && v[1] >= 'A' && v[1] <= 'Z' &&
		    v[2] == '-' && strspn(v + 3, "0123456789") == 3 && json_is_number(x) &&
		    d >= 0.5 && d < 2.5 && d * 4 == floor(d * 4) && r.done_ev.finish == ENGINE_FINISH_STOP)
			good++;
		else
			printf("#   seed %d: '%s'\n", seed, r.text);
		json_decref(o);
	}
	tap_ok(good == 5, "pattern ^[A-Z]{2}-\\d{3}$ and a number in [0.5, 2.5) multipleOf 0.25, greedy and 4 seeds (%d of 5)",
	       good);
	jm_schema_put(s);
}

static const char tools_json[] =
	"[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"strict\":true,"
	"\"parameters\":{\"type\":\"object\",\"properties\":{\"location\":{\"type\":\"string\",\"maxLength\":12}},"
	"\"required\":[\"location\"],\"additionalProperties\":false}}},"
	"{\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"strict\":true,\"parameters\":"
	"{\"type\":\"object\",\"properties\":{\"zone\":{\"enum\":[\"UTC\",\"CET\"]}},\"additionalProperties\":false}}}]";

/* The reply is whole calls of the tools above (1 or more), each in the JSON <tool_call> form. */
static bool calls_ok(const char *text)
{
	static const char open[] = "<tool_call>\n", close[] = "\n</tool_call>";
	const char *p = text;
	int n = 0;

	while (*p) {
		const char *e;
		json_t *c, *a;
		const char *name;
		bool ok;

		if (n && *p++ != '\n')
			return false;
		if (strncmp(p, open, strlen(open)))
			return false;
		p += strlen(open);
		e = strstr(p, close);
		if (!e)
			return false;
		c = json_loadb(p, (size_t)(e - p), 0, NULL);
		name = json_string_value(json_object_get(c, "name"));
		a = json_object_get(c, "arguments");
		ok = name && json_is_object(a) && json_object_size(c) == 2 &&
		     ((!strcmp(name, "get_time") && json_object_size(a) <= 1 &&
		       (!json_object_size(a) || json_is_string(json_object_get(a, "zone")))) ||
		      (!strcmp(name, "get_weather") && json_object_size(a) == 1 &&
		       json_is_string(json_object_get(a, "location")) &&
		       json_string_length(json_object_get(a, "location")) <= 12));
		json_decref(c);
		if (!ok)
			return false;
		p = e + strlen(close);
		n++;
	}
	return n > 0;
}

/*
 * Schema and tools: a call or a document. The model has no end-of-turn
 * after a call, so with parallel calls it writes calls up to max_tokens
 * (the whole ones before the cut are checked); with one call
 * (parallel_tool_calls false) the reply ends after it.
 */
static void test_tools(void)
{
	json_t *t = json_loads(tools_json, 0, NULL),
	       *d = json_loads("{\"type\":\"object\",\"properties\":{\"answer\":{\"type\":\"string\"}},"
			       "\"required\":[\"answer\"],\"additionalProperties\":false}", 0, NULL);
	struct jm_schema *one = jm_compile_tools(d, t, JM_TOOLS_AUTO, NULL, true, NULL, 0),
			 *par = jm_compile_tools(d, t, JM_TOOLS_AUTO, NULL, false, NULL, 0),
			 *rq = jm_compile_tools(d, t, JM_TOOLS_REQUIRED, NULL, true, NULL, 0);
	int seed, good = 0, calls = 0, docs = 0;
	struct res r;

	for (seed = 0; one && seed <= 7; seed++) {
		json_t *o;

		run1(&r, "Tom had", one, 160, (uint64_t)seed, false);
		o = json_loads(r.text, 0, NULL);
		if (json_is_string(json_object_get(o, "answer")) && json_object_size(o) == 1 &&
		    r.done_ev.finish == ENGINE_FINISH_STOP) {
			good++;
			docs++;
		} else if (calls_ok(r.text) && r.done_ev.finish == ENGINE_FINISH_STOP) {
			good++;
			calls++;
		} else {
			printf("#   seed %d (%d): '%s'\n", seed, r.done_ev.finish, r.text);
		}
		json_decref(o);
	}
	tap_ok(good == 8 && calls > 0, "schema and tools, one call, greedy and 7 seeds: each reply a whole document or a whole call, finish stop (%d of 8: %d documents, %d calls)",
	       good, docs, calls);
	for (seed = 0, good = 0; par && seed <= 3; seed++) {
		char *e;

		run1(&r, "Tom had", par, 120, (uint64_t)seed, false);
		e = strstr(r.text, "<tool_call>") == r.text ? r.text + r.len : NULL;
		while (e && e > r.text && strncmp(e, "\n</tool_call>", 13))
			e--;
		if (e && e > r.text)
			e[13] = '\0';
		if (e && e > r.text && calls_ok(r.text))
			good++;
		else if (!e && json_is_string(json_object_get(json_loads(r.text, 0, NULL), "answer")))
			good++;
		else
			printf("#   parallel, seed %d: '%s'\n", seed, r.text);
	}
	tap_ok(good == 4, "schema and tools, parallel calls: whole calls up to the token limit, or a document (%d of 4)",
	       good);
	for (seed = 0, good = 0; rq && seed <= 2; seed++) {
		char text[MAX_OUT + 16];

		run1(&r, "Tom had", rq, 120, (uint64_t)seed, false);
		snprintf(text, sizeof(text), "<tool_call>\n%s", r.text);
		if (calls_ok(text) && r.done_ev.finish == ENGINE_FINISH_STOP)
			good++;
		else
			printf("#   required, seed %d: '%s'\n", seed, r.text);
	}
	tap_ok(good == 3, "tool_choice required: the reply goes on from '<tool_call>\\n' with a whole call (%d of 3)",
	       good);
	jm_schema_put(one);
	jm_schema_put(par);
	jm_schema_put(rq);
	json_decref(t);
	json_decref(d);
}

/* Greedy with logprobs: the top alternative is the chosen token (masked argmax). */
static void test_logprob_top(void)
{
	struct jm_schema *s = sch("{\"type\":\"array\",\"items\":{\"type\":\"boolean\"},\"maxItems\":3}");
	struct res r;
	int i, same = 1;

	run1(&r, "One day", s, 40, 0, true);
	for (i = 0; i < r.n_ids && i < 256; i++)
		same &= r.n_top[i] >= 1;
	tap_ok(r.text[0] == '[' && r.done_ev.finish == ENGINE_FINISH_STOP && same,
	       "array of at most 3 booleans, greedy: '%s', finish stop, alternatives reported", r.text);
	jm_schema_put(s);
}

static void test_batched(void)
{
	static const char *const schemas[3] = {
		"{\"const\":\"foooooo\"}",
		"{\"enum\":[\"yes\",\"no\"]}",
		"{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":1,\"maxItems\":2}",
	};
	static struct res alone[4], both[4], again;
	struct jm_schema *s[4] = { NULL };
	struct engine *e;
	int i, same = 1;

	for (i = 0; i < 3; i++)
		s[i] = sch(schemas[i]);
	for (i = 0; i < 4; i++)
		run1(&alone[i], "Once upon a time", s[i], 24, 0, false);
	e = mk_engine(4);
	for (i = 0; e && i < 4; i++)
		submit(e, &both[i], "Once upon a time", s[i], 24, 0, false);
	for (i = 0; e && i < 4; i++) {
		wait_put(&both[i]);
		same &= both[i].len == alone[i].len && !memcmp(both[i].text, alone[i].text, alone[i].len);
	}
	tap_ok(e && same && !strcmp(alone[0].text, "\"foooooo\"") && alone[3].len > 0 &&
	       alone[3].text[0] != '"',
	       "4 sessions batched (3 schemas, 1 free) each give their text alone ('%s', '%s', '%s')",
	       both[0].text, both[1].text, both[2].text);
	if (e) {
		submit(e, &again, "Once upon a time", s[2], 24, 0, false);
		wait_put(&again);
		tap_ok(again.done_ev.usage.cached_tokens > 0 && again.len == alone[2].len &&
		       !memcmp(again.text, alone[2].text, again.len),
		       "the same constrained request again: a prefix-cache hit (%d cached), same text",
		       again.done_ev.usage.cached_tokens);
	}
	engine_destroy(e);
	for (i = 0; i < 3; i++)
		jm_schema_put(s[i]);
	tap_ok(mock_rk_live_objs() == 0, "every BO and syncobj released");
}

/*
 * jm_vocab_mask() (first-byte filter, the free-string fast path) allows
 * exactly the tokens jm_vocab_ok() allows one by one, at every byte of a
 * document with keys, strings, numbers and a closing.
 */
static void test_mask(void)
{
	static const char doc[] = "{\"name\":\"Tom, caf\xc3\xa9 \\\"x\\\"\",\"age\":12,\"tags\":[\"a b\",\"c\"],"
				  "\"code\":\"the cat!\"}";
	struct jm_schema *s = sch("{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
				  "\"code\":{\"type\":\"string\",\"pattern\":\"^[a-z ]+!?$\",\"maxLength\":8},"
				  "\"age\":{\"type\":\"integer\"},\"tags\":{\"type\":\"array\","
				  "\"items\":{\"type\":\"string\",\"maxLength\":3}}}}");
	struct jm_vocab *v = jm_vocab_new(tk);
	struct jm_state *st = s ? jm_new(s) : NULL;
	int n = tok_n_vocab(tk), i, id, bad = 0, allowed = 0;
	float *logits = calloc((size_t)n + 3, sizeof(float)), *masked = malloc(((size_t)n + 3) * sizeof(float));
	int32_t best;
	size_t k;

	for (k = 0; st && v && k <= strlen(doc); k++) {
		allowed += jm_vocab_mask(v, st, logits, n + 3, masked, &best);
		for (id = 0; id < n; id++)
			bad += jm_vocab_ok(v, st, id) != (masked[id] == 0.0f);
		for (i = n; i < n + 3; i++)
			bad += masked[i] != -INFINITY;
		if (k < strlen(doc) && !jm_feed(st, doc + k, 1))
			bad += 1000;
	}
	tap_ok(st && v && !bad && allowed > 0 && jm_done(st),
	       "vocabulary scan (its free-string and pattern-string fast paths too) = token-by-token check at each of %zu bytes (%d allowed in all, %d mismatches); logits past the vocabulary masked",
	       strlen(doc) + 1, allowed, bad);
	jm_free(st);
	jm_vocab_free(v);
	jm_schema_put(s);
	free(logits);
	free(masked);
}

int main(void)
{
	const char *path = getenv("RK1828_MODEL");
	struct gguf_file *gf;
	char err[512];

	if (!path)
		path = "../shared/models/stories260K.gguf";
	mock_rk_cards(cards);
	gf = gguf_open(path, err, sizeof(err));
	if (!gf || llm_model_load(&M, gf, err, sizeof(err)) || !(tk = tok_load(gf, err, sizeof(err)))) {
		tap_ok(false, "load %s: %s", path, err);
		return tap_done();
	}
	test_mask();
	test_const();
	test_enum();
	test_object();
	test_logprob_top();
	test_range();
	test_pattern_number();
	test_tools();
	test_batched();
	tok_free(tk);
	llm_model_free(&M);
	gguf_close(gf);
	mock_rk_free();
	return tap_done();
}
