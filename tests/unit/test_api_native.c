// SPDX-License-Identifier: MIT
/*
 * POST /completion request tests (userspace/server/api_native.c, the rules
 * of userspace/doc/server.rst, "POST /completion"): the prompt forms (text,
 * ids, ids and text mixed, a batch of them) land as their elements; the
 * ids of a mixed prompt are text pieces tokenized without BOS after the
 * first element, with BOS only before leading text, against the
 * stories260K tokenizer; n_predict, n_probs and the shared sampling fields
 * land in struct api_params; each bad field is a 400 naming it;
 * response_fields keeps only the listed paths. Output: TAP.
 */
#include "api_native.h"

#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "tap.h"
#include "tokenizer.h"

static int parse(const char *body, struct native_req *nr, struct api_error *e)
{
	memset(e, 0, sizeof(*e));
	return native_parse(body, strlen(body), nr, e);
}

static void test_forms(void)
{
	struct native_req nr;
	struct api_error e;
	int rc;

	rc = parse("{\"prompt\":\"Once upon\"}", &nr, &e);
	tap_ok(rc == 0 && nr.n_prompts == 1 && !nr.batch && nr.prompts[0].n == 1 &&
	       !nr.prompts[0].el[0].is_id && !strcmp(nr.prompts[0].el[0].text, "Once upon") &&
	       nr.p.max_tokens == -1 && nr.p.kind == API_NATIVE,
	       "a string prompt is one prompt of one text; n_predict defaults to -1");
	native_req_free(&nr);

	rc = parse("{\"prompt\":[1, 400, \"x\", 7]}", &nr, &e);
	tap_ok(rc == 0 && nr.n_prompts == 1 && !nr.batch && nr.prompts[0].n == 4 &&
	       nr.prompts[0].el[0].is_id && nr.prompts[0].el[1].id == 400 &&
	       !strcmp(nr.prompts[0].el[2].text, "x") && nr.prompts[0].el[3].id == 7,
	       "ids and text mixed in one list are one prompt, in order");
	native_req_free(&nr);

	rc = parse("{\"prompt\":[[1, 2], \"a\", [\"b\", 3]]}", &nr, &e);
	tap_ok(rc == 0 && nr.batch && nr.n_prompts == 3 && nr.prompts[0].n == 2 &&
	       !strcmp(nr.prompts[1].el[0].text, "a") && nr.prompts[2].n == 2 &&
	       !strcmp(nr.prompts[2].where, "prompt[2]"),
	       "a list of lists and strings is a batch of 3 prompts (%s)", rc ? e.msg : "ok");
	native_req_free(&nr);

	rc = parse("{\"prompt\":[\"a\", \"b\"]}", &nr, &e);
	tap_ok(rc == 0 && nr.batch && nr.n_prompts == 2, "a list of strings is a batch");
	native_req_free(&nr);

	rc = parse("{\"prompt\":[\"a\", \"b\"], \"stream\":true}", &nr, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "stream"),
	       "stream with a batch of 2 prompts is a 400 naming 'stream'");
	native_req_free(&nr);

	rc = parse("{\"prompt\":[\"a\", 1.5]}", &nr, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "prompt[1]"),
	       "a fractional id is a 400 naming prompt[1] (%s)", e.param);
	native_req_free(&nr);

	rc = parse("{\"prompt\":[[1, {}]]}", &nr, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "prompt[0]"), "an object in a prompt is a 400 naming prompt[0]");
	native_req_free(&nr);

	rc = parse("{\"prompt\":[]}", &nr, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "prompt"), "an empty list is a 400 naming prompt");
	native_req_free(&nr);

	rc = parse("{\"n_predict\":4}", &nr, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "prompt") && strstr(e.msg, "required"),
	       "no prompt: 400 'prompt' is required");
	native_req_free(&nr);

	rc = parse("{\"prompt\":[1, -3]}", &nr, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "prompt"), "a negative id is a 400 naming prompt");
	native_req_free(&nr);
}

static void test_fields(void)
{
	struct native_req nr;
	struct api_error e;
	int rc;

	rc = parse("{\"prompt\":\"a\",\"n_predict\":7,\"max_tokens\":3,\"n_probs\":5,\"temperature\":0,"
		   "\"top_k\":3,\"top_p\":0.5,\"seed\":9,\"stop\":[\"x\",\"yy\"],\"return_tokens\":true,"
		   "\"cache_prompt\":false,\"ignore_eos\":true,\"min_p\":0.25,\"repeat_penalty\":1.5,\"dry_multiplier\":\"unknown fields are ignored\"}",
		   &nr, &e);
	tap_ok(rc == 0 && nr.p.max_tokens == 7 && nr.n_probs == 5 && nr.p.s.logprobs &&
	       nr.p.s.n_probs == 5 && nr.p.s.temperature == 0 && nr.p.s.top_k == 3 &&
	       nr.p.s.top_p == 0.5f && nr.p.s.have_seed && nr.p.s.seed == 9 && nr.p.n_stop == 2 &&
	       !strcmp(nr.p.stop[1], "yy") && nr.return_tokens && nr.ignore_eos &&
	       nr.p.s.min_p == 0.25f && nr.p.s.repeat_penalty == 1.5f &&
	       json_real_value(json_object_get(nr.settings, "min_p")) == 0.25,
	       "n_predict wins over max_tokens; n_probs, sampling (min_p, repeat_penalty: api.c's), seed, stop, return_tokens, ignore_eos land (%s)",
	       rc ? e.msg : "ok");
	tap_ok(rc == 0 && json_integer_value(json_object_get(nr.settings, "n_predict")) == 7 &&
	       json_integer_value(json_object_get(nr.settings, "seed")) == 9 &&
	       json_array_size(json_object_get(nr.settings, "stop")) == 2 &&
	       json_integer_value(json_object_get(nr.settings, "n_probs")) == 5,
	       "generation_settings holds n_predict 7, seed 9, both stop strings, n_probs 5");
	native_req_free(&nr);

	rc = parse("{\"prompt\":\"a\",\"max_tokens\":3}", &nr, &e);
	tap_ok(rc == 0 && nr.p.max_tokens == 3, "max_tokens alone is the limit (llama-server's alias)");
	native_req_free(&nr);

	rc = parse("{\"prompt\":\"a\"}", &nr, &e);
	tap_ok(rc == 0 && json_integer_value(json_object_get(nr.settings, "seed")) == 4294967295LL &&
	       !nr.p.s.logprobs, "no seed: generation_settings.seed is 4294967295 (random), no logprobs");
	native_req_free(&nr);

	rc = parse("{\"prompt\":\"a\",\"n_predict\":-2}", &nr, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "n_predict"), "n_predict -2 is a 400");
	native_req_free(&nr);
	rc = parse("{\"prompt\":\"a\",\"n_probs\":21}", &nr, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "n_probs"), "n_probs 21 is a 400");
	native_req_free(&nr);
	rc = parse("{\"prompt\":\"a\",\"return_tokens\":1}", &nr, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "return_tokens"), "return_tokens 1 (not a boolean) is a 400");
	native_req_free(&nr);
	rc = parse("{\"prompt\":\"a\",\"post_sampling_probs\":true}", &nr, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "post_sampling_probs"), "post_sampling_probs true is refused");
	native_req_free(&nr);
	rc = parse("{\"prompt\":\"a\",\"response_fields\":[\"content\", 3]}", &nr, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "response_fields"), "a number in response_fields is a 400");
	native_req_free(&nr);
	rc = parse("{\"prompt\":\"a\",\"temperature\":\"hot\"}", &nr, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "temperature"), "the shared fields are checked (temperature)");
	native_req_free(&nr);
	rc = parse("[1]", &nr, &e);
	tap_ok(rc == -1 && e.status == 400, "a body that is not an object is a 400");
	native_req_free(&nr);
}

static void test_filter(void)
{
	json_t *r = json_pack("{s:s, s:{s:i, s:f}, s:b}", "content", "hi", "generation_settings",
			      "n_predict", 8, "temperature", 0.5, "stop", 1);
	json_t *f = json_pack("[s, s, s, s]", "content", "generation_settings/n_predict",
			      "generation_settings/missing", "content/deeper");
	json_t *o = native_filter(r, f);

	tap_ok(json_object_size(o) == 2 && !strcmp(json_string_value(json_object_get(o, "content")), "hi") &&
	       json_integer_value(json_object_get(o, "generation_settings/n_predict")) == 8,
	       "response_fields keeps content and generation_settings/n_predict (flattened), drops paths not found");
	json_decref(o);
	json_decref(f);
}

static void test_tokenize(const struct tokenizer *t)
{
	struct native_req nr;
	struct api_error e;
	int32_t *a = NULL, *b = NULL, ref[64];
	int na = 0, nb = 0, nref, rc;

	nref = tok_encode(t, "Once upon a time", true, ref, 64);
	rc = parse("{\"prompt\":\"Once upon a time\"}", &nr, &e);
	rc = rc ? rc : native_tokenize(t, true, &nr.prompts[0], &a, &na, &e);
	tap_ok(rc == 0 && nref > 1 && na == nref && ref[0] == 1 && !memcmp(a, ref, nref * 4),
	       "text is tokenized with BOS first (%d tokens)", na);
	native_req_free(&nr);
	free(a);
	a = NULL;

	/* [ids of "Once upon a time" with BOS] equals the text. */
	{
		char body[512];
		int k, off;

		off = snprintf(body, sizeof(body), "{\"prompt\":[");
		for (k = 0; k < nref; k++)
			off += snprintf(body + off, sizeof(body) - off, "%s%d", k ? "," : "", ref[k]);
		snprintf(body + off, sizeof(body) - off, ",\" the end\"]}");
		rc = parse(body, &nr, &e);
		rc = rc ? rc : native_tokenize(t, true, &nr.prompts[0], &a, &na, &e);
		nb = tok_encode(t, " the end", false, ref + nref, 64 - nref);
		tap_ok(rc == 0 && na == nref + nb && !memcmp(a, ref, (size_t)na * 4) && a[0] == 1 &&
		       a[nref] != 1,
		       "ids then text: the ids as given, the text tokenized without BOS (%d tokens)", na);
		native_req_free(&nr);
		free(a);
		a = NULL;
	}

	rc = parse("{\"prompt\":[5, 512]}", &nr, &e);
	rc = rc ? rc : native_tokenize(t, true, &nr.prompts[0], &b, &nb, &e);
	tap_ok(rc == -1 && e.status == 400 && !strcmp(e.param, "prompt") && strstr(e.msg, "0..511"),
	       "id 512 of a 512-token vocabulary is a 400 naming prompt (%s)", e.msg);
	native_req_free(&nr);
	free(b);
	b = NULL;

	rc = parse("{\"prompt\":[\"a\", [3, 999]]}", &nr, &e);
	rc = rc ? rc : native_tokenize(t, true, &nr.prompts[1], &b, &nb, &e);
	tap_ok(rc == -1 && !strcmp(e.param, "prompt[1]") && strstr(e.msg, "prompt[1][1]"),
	       "in a batch the error names prompt[1] and the element prompt[1][1] (%s)", e.msg);
	native_req_free(&nr);
	free(b);
	b = NULL;

	rc = parse("{\"prompt\":\"\"}", &nr, &e);
	rc = rc ? rc : native_tokenize(t, false, &nr.prompts[0], &b, &nb, &e);
	tap_ok(rc == -1 && e.status == 400, "an empty text without BOS is an empty prompt: 400");
	native_req_free(&nr);
	free(b);
}

int main(void)
{
	const char *model = getenv("RK1828_MODEL");
	struct gguf_file *f;
	struct tokenizer *t = NULL;
	char err[512];

	test_forms();
	test_fields();
	test_filter();
	if (!model)
		model = "../shared/models/stories260K.gguf";
	f = gguf_open(model, err, sizeof(err));
	if (f)
		t = tok_load(f, err, sizeof(err));
	tap_ok(t != NULL, "stories260K tokenizer loads (%s)", t ? model : err);
	if (t)
		test_tokenize(t);
	tok_free(t);
	if (f)
		gguf_close(f);
	return tap_done();
}
