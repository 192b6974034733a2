// SPDX-License-Identifier: MIT
/*
 * JSON-schema matcher (jsonmatch.h): for each keyword, documents that
 * must be accepted whole, prefixes that must stay alive, and byte strings
 * that must be refused at the exact byte where they go wrong; the RFC
 * 8259 number and string grammar (escapes, surrogate pairs, UTF-8
 * ranges); integer ranges; the whitespace and digit bounds; jm_next_bytes(); jm_done();
 * number ranges and multipleOf on type number; "pattern" (classes,
 * anchors, escapes, UTF-8 lead bytes and \u escapes refused at the byte
 * where no code point can match, length bounds; zod's email, UUID and
 * datetime patterns) and "propertyNames"; the grammar of schema and tools
 * together (jm_compile_tools(): a document or calls in the <tool_call>
 * form, strict parameters, tool_choice, one call, 100 tools);
 * the compiler's refusals with the keyword named; and hostile schemas
 * (deep nesting, a self-referencing $ref, an anyOf fan-out) that must
 * stay bounded.
 */
#include "jsonmatch.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static struct jm_schema *sch(const char *text)
{
	char err[256];
	struct jm_schema *s = jm_compile_text(text, strlen(text), err, sizeof(err));

	if (!s)
		printf("# compile %s: %s\n", text, err);
	return s;
}

/*
 * Feed @doc byte by byte: the index of the first refused byte, or -1 when
 * every byte is taken (then *acc says whether it is a whole document).
 */
static long feed(struct jm_schema *s, const char *doc, size_t len, bool *acc, bool *done)
{
	struct jm_state *st = jm_new(s);
	size_t i;
	long at = -1;

	for (i = 0; i < len; i++) {
		if (!jm_feed(st, doc + i, 1)) {
			at = (long)i;
			break;
		}
	}
	if (acc)
		*acc = jm_accepting(st);
	if (done)
		*done = jm_done(st);
	jm_free(st);
	return at;
}

/* @doc is a whole document of @schema. */
static bool accepts(struct jm_schema *s, const char *doc)
{
	bool acc;

	return feed(s, doc, strlen(doc), &acc, NULL) < 0 && acc;
}

/* @doc is refused at byte @at (or, with @at -1, fully taken yet incomplete). */
static bool refuses_at(struct jm_schema *s, const char *doc, long at)
{
	bool acc;
	long r = feed(s, doc, strlen(doc), &acc, NULL);

	if (r != at || (at < 0 && acc))
		printf("#   '%s': refused at %ld (want %ld), accepting %d\n", doc, r, at, acc);
	return r == at && (at >= 0 || !acc);
}

/* Every document of @ok accepted, every entry of @no refused at its byte. */
struct no { const char *doc; long at; };
static void cases(const char *schema, const char *const *ok, const struct no *no,
		  const char *what)
{
	struct jm_schema *s = sch(schema);
	int good = 0, n_ok = 0, n_no = 0;

	if (!s) {
		tap_ok(false, "%s: compiles", what);
		return;
	}
	for (; ok && ok[n_ok]; n_ok++) {
		if (accepts(s, ok[n_ok]))
			good++;
		else
			printf("#   '%s' not accepted\n", ok[n_ok]);
	}
	for (; no && no[n_no].doc; n_no++)
		good += refuses_at(s, no[n_no].doc, no[n_no].at);
	tap_ok(good == n_ok + n_no, "%s: %d accepted, %d refused at the right byte (%d right)",
	       what, n_ok, n_no, good);
	jm_schema_put(s);
}

static void test_types(void)
{
	cases("{\"type\":\"integer\"}",
	      (const char *[]){ "0", "-0", "42", "-3000", "1234567890123456", NULL },
	      (const struct no[]){ { "01", 1 }, { "1.5", 1 }, { "-", -1 }, { "1e3", 1 },
				   { "12345678901234567", 16 }, { "\"1\"", 0 }, { "+1", 0 },
				   { "1 ", 1 }, { " 7", 0 }, { NULL, 0 } },
	      "integer (no whitespace around the document)");
	cases("{\"type\":\"number\"}",
	      (const char *[]){ "0", "-0.5", "3.25e10", "1E-3", "1e+99", "0.0001", NULL },
	      (const struct no[]){ { ".5", 0 }, { "1.", -1 }, { "1e", -1 }, { "1.e3", 2 },
				   { "00", 1 }, { "1e1234", 5 }, { "-a", 1 }, { NULL, 0 } },
	      "number (RFC 8259)");
	cases("{\"type\":\"boolean\"}", (const char *[]){ "true", "false", NULL },
	      (const struct no[]){ { "tru", -1 }, { "trUe", 2 }, { "null", 0 }, { "falsee", 5 },
				   { NULL, 0 } },
	      "boolean");
	cases("{\"type\":[\"string\",\"null\"]}", (const char *[]){ "null", "\"x\"", NULL },
	      (const struct no[]){ { "1", 0 }, { "nul", -1 }, { NULL, 0 } },
	      "type array string|null");
	cases("true", (const char *[]){ "{\"a\":[1,{\"b\":null}],\"c\":\"d\"}", "[]", "-1.5e2", "\"\"", NULL },
	      (const struct no[]){ { "{a:1}", 1 }, { "[1,]", 3 }, { "{\"a\" 1}", 5 }, { "[1 2]", 3 },
				   { "{\"a\":1,}", 7 }, { NULL, 0 } },
	      "true / any value");
}

static void test_strings(void)
{
	cases("{\"type\":\"string\"}",
	      (const char *[]){ "\"\"", "\"caf\xc3\xa9\"", "\"\\u00e9\\n\\\"\\\\\\/\\b\\f\\r\\t\"",
				"\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\"", "\"\xe2\x82\xac\"",
				"\"\xf4\x8f\xbf\xbf\"", NULL },
	      (const struct no[]){ { "\"a\nb\"", 2 }, { "\"\\x\"", 2 }, { "\"\\ude00\"", 6 },
				   { "\"\\ud83d\\u0041\"", 12 }, { "\"\\ud83dx\"", 7 },
				   { "\"\xc0\x80\"", 1 }, { "\"\xe0\x80\x80\"", 2 },
				   { "\"\xed\xa0\x80\"", 2 }, { "\"\xf4\x90\x80\x80\"", 2 },
				   { "\"\xff\"", 1 }, { "\"\x80\"", 1 }, { "\"\xc3\"", 2 },
				   { "\"\\u12g4\"", 5 }, { "\"abc", -1 }, { NULL, 0 } },
	      "string escapes, surrogate pairs, UTF-8 (RFC 3629)");
	cases("{\"type\":\"string\",\"minLength\":2,\"maxLength\":3}",
	      (const char *[]){ "\"ab\"", "\"abc\"", "\"\xc3\xa9\xc3\xa9\xc3\xa9\"", "\"\\u00e9b\"",
				"\"\\ud83d\\ude00x\"", NULL },
	      (const struct no[]){ { "\"a\"", 2 }, { "\"abcd\"", 4 }, { "\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"", 7 },
				   { NULL, 0 } },
	      "minLength / maxLength in code points");
}

static void test_objects(void)
{
	const char *person = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
			     "\"age\":{\"type\":\"integer\"}},\"required\":[\"name\"]}";

	cases(person,
	      (const char *[]){ "{\"name\":\"Al\"}", "{\"name\":\"Al\",\"age\":3}", "{\"age\":3,\"name\":\"Al\"}",
				"{ \"name\" : \"Al\" , \"age\" : 3 }", "{\"n\\u0061me\":\"x\"}", NULL },
	      (const struct no[]){ { "{}", 1 }, { "{\"age\":3}", 8 }, { "{\"nick\":1}", 3 },
				   { "{\"name\":1}", 8 }, { "{\"name\":\"a\",\"name\":\"b\"}", 13 },
				   { "{\"name\":\"a\",\"age\":1,", 19 }, { "{\"nam\":1}", 5 },
				   { NULL, 0 } },
	      "properties, required, no additionalProperties (declared only), a second name refused at its first byte");
	cases("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},"
	      "\"additionalProperties\":{\"type\":\"boolean\"}}",
	      (const char *[]){ "{\"a\":1,\"x\":true}", "{\"zz\":false}", "{}", NULL },
	      (const struct no[]){ { "{\"x\":1}", 5 }, { "{\"a\":true}", 5 }, { "{\"a\":1,\"a\":2}", 9 },
				   { NULL, 0 } },
	      "additionalProperties schema");
	cases("{\"type\":\"object\"}",
	      (const char *[]){ "{}", "{\"k\":[1,\"v\",{}]}", NULL },
	      (const struct no[]){ { "[]", 0 }, { "{\"k\"}", 4 }, { NULL, 0 } },
	      "type object alone: any object");
	cases("{\"type\":\"object\",\"properties\":{\"a\":{}},\"additionalProperties\":false}",
	      (const char *[]){ "{\"a\":[]}", "{}", NULL },
	      (const struct no[]){ { "{\"b\":1}", 2 }, { "{\"a\":1,\"", 6 }, { NULL, 0 } },
	      "additionalProperties false: ',' refused after the last declared one");
}

static void test_arrays(void)
{
	cases("{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":1,\"maxItems\":2}",
	      (const char *[]){ "[1]", "[ 1 , 2 ]", NULL },
	      (const struct no[]){ { "[]", 1 }, { "[1,2,3]", 4 }, { "[\"a\"]", 1 }, { "[1,]", 3 },
				   { NULL, 0 } },
	      "items, minItems, maxItems");
	cases("{\"items\":[{\"type\":\"integer\"}]}",
	      (const char *[]){ "[ -3000 ]", "[]", "[0]", NULL },
	      (const struct no[]){ { "[1,2]", 2 }, { "[\"x\"]", 1 }, { NULL, 0 } },
	      "legacy tuple items array: only its items");
	cases("{\"prefixItems\":[{\"type\":\"string\"},{\"type\":\"boolean\"}],\"items\":{\"type\":\"null\"}}",
	      (const char *[]){ "[\"a\",true,null,null]", "[\"a\"]", NULL },
	      (const struct no[]){ { "[true]", 1 }, { "[\"a\",true,1]", 10 }, { NULL, 0 } },
	      "prefixItems then items");
}

/* Integer ranges: a digit after which no continuation is in range is refused at once. */
static void test_ranges(void)
{
	cases("{\"type\":\"integer\",\"minimum\":-5,\"maximum\":10}",
	      (const char *[]){ "0", "-5", "10", "7", "-0", NULL },
	      (const struct no[]){ { "11", 1 }, { "-6", 1 }, { "100", 2 }, { "20", 1 }, { "-10", 2 },
				   { "-", -1 }, { NULL, 0 } },
	      "minimum -5, maximum 10");
	cases("{\"type\":\"integer\",\"exclusiveMinimum\":0,\"exclusiveMaximum\":100}",
	      (const char *[]){ "1", "99", NULL },
	      (const struct no[]){ { "0", 0 }, { "100", 2 }, { "-", 0 }, { NULL, 0 } },
	      "exclusiveMinimum 0, exclusiveMaximum 100");
	cases("{\"type\":\"integer\",\"minimum\":1,\"exclusiveMinimum\":true,\"maximum\":50}",
	      (const char *[]){ "2", "50", "19", NULL },
	      (const struct no[]){ { "1", -1 }, { "51", 1 }, { "0", 0 }, { NULL, 0 } },
	      "draft 4 exclusiveMinimum true next to minimum 1: from 2 ('1' stays open for 10..19)");
	cases("{\"properties\":{\"n\":{\"type\":\"integer\",\"maximum\":3}}}",
	      (const char *[]){ "{\"n\":3}", "{\"n\":-40}", NULL },
	      (const struct no[]){ { "{\"n\":4}", 5 }, { "{\"n\":30}", 6 }, { NULL, 0 } },
	      "a range inside an object");
}

static void test_literals(void)
{
	cases("{\"const\":\"foooooo\"}", (const char *[]){ "\"foooooo\"", NULL },
	      (const struct no[]){ { "\"fooooo\"", 7 }, { "\"foooooo\" ", 9 }, { "foo", 0 }, { " \"foooooo\"", 0 },
				   { NULL, 0 } },
	      "const string");
	cases("{\"enum\":[1,12,\"a\",null,{\"k\":[true]}]}",
	      (const char *[]){ "1", "12", "\"a\"", "null", "{\"k\":[true]}", NULL },
	      (const struct no[]){ { "123", 2 }, { "2", 0 }, { "\"b\"", 1 }, { "{\"k\":[false]}", 6 },
				   { NULL, 0 } },
	      "enum of numbers (one a prefix of another), a string, null, an object");
	cases("{\"type\":\"string\",\"enum\":[\"red\",1,\"blue\"]}",
	      (const char *[]){ "\"red\"", "\"blue\"", NULL },
	      (const struct no[]){ { "1", 0 }, { NULL, 0 } },
	      "enum filtered by type");
}

static void test_alternatives(void)
{
	cases("{\"anyOf\":[{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},\"required\":[\"a\"]},"
	      "{\"type\":\"object\",\"properties\":{\"b\":{\"type\":\"string\"}},\"required\":[\"b\"]},"
	      "{\"type\":\"null\"}]}",
	      (const char *[]){ "{\"a\":1}", "{\"b\":\"x\"}", "null", NULL },
	      (const struct no[]){ { "{\"a\":\"x\"}", 5 }, { "{\"c\":1}", 2 }, { "1", 0 }, { NULL, 0 } },
	      "anyOf of two objects and null (threads)");
	cases("{\"$defs\":{\"Item\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"},"
	      "\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/Item\"}}},\"required\":[\"id\"]}},"
	      "\"$ref\":\"#/$defs/Item\"}",
	      (const char *[]){ "{\"id\":1}", "{\"id\":1,\"kids\":[{\"id\":2,\"kids\":[]}]}", NULL },
	      (const struct no[]){ { "{\"id\":1,\"kids\":[{\"kids\":[]}]}", 26 }, { NULL, 0 } },
	      "recursive $ref to #/$defs");
	cases("{\"definitions\":{\"c\":{\"enum\":[\"r\",\"g\"]}},\"type\":\"object\","
	      "\"properties\":{\"color\":{\"allOf\":[{\"$ref\":\"#/definitions/c\"}],\"description\":\"d\"}}}",
	      (const char *[]){ "{\"color\":\"g\"}", NULL },
	      (const struct no[]){ { "{\"color\":\"b\"}", 10 }, { NULL, 0 } },
	      "#/definitions, allOf of one, annotations ignored");
}

/* Whitespace gaps hold at most JM_MAX_WS bytes; nothing after the document. */
static void test_bounds(void)
{
	struct jm_schema *s = sch("{\"type\":\"array\"}");
	char doc[64];
	bool acc, done;

	memset(doc, ' ', sizeof(doc));
	doc[0] = '[';
	doc[1] = '\n';
	doc[5] = '\t';
	tap_ok(feed(s, doc, 2 + JM_MAX_WS, &acc, NULL) < 0 &&
	       feed(s, doc, 3 + JM_MAX_WS, &acc, NULL) == 2 + JM_MAX_WS,
	       "a gap is a newline and %d spaces or tabs, not %d", JM_MAX_WS, JM_MAX_WS + 1);
	tap_ok(feed(s, "[ 1 ]", 5, &acc, NULL) < 0 && acc && feed(s, "[  1]", 5, NULL, NULL) == 2 &&
	       feed(s, "[ \n1]", 5, NULL, NULL) == 2 && feed(s, "[\t1]", 4, NULL, NULL) == 1 &&
	       feed(s, "[\r\n1]", 5, NULL, NULL) == 1,
	       "otherwise a gap is empty or one space (two spaces, space-newline, a tab, CR refused)");
	tap_ok(feed(s, "[]", 2, &acc, &done) < 0 && acc && done &&
	       feed(s, "[] ", 3, &acc, NULL) == 2,
	       "after the document nothing can follow (done, a space refused)");
	tap_ok(feed(s, "[", 1, &acc, &done) < 0 && !acc && !done, "'[' is neither whole nor done");
	jm_schema_put(s);

	s = sch("{\"type\":\"number\"}");
	tap_ok(feed(s, "12", 2, &acc, &done) < 0 && acc && !done,
	       "a number at the root is whole but not done (a digit may follow)");
	jm_schema_put(s);
}

static void test_next_bytes(void)
{
	struct jm_schema *s = sch("{\"type\":\"object\",\"properties\":{\"ab\":{\"type\":\"boolean\"}}}");
	struct jm_state *st = jm_new(s);
	uint64_t set[4];
	int b, n = 0;
	bool want;

	jm_feed(st, "{\"a", 3);
	jm_next_bytes(st, set);
	for (b = 0; b < 256; b++)
		n += (set[b >> 6] >> (b & 63)) & 1;
	want = n == 2 && ((set[1] >> ('b' - 64)) & 1) && ((set[1] >> ('\\' - 64)) & 1);
	jm_feed(st, "b\":", 3);
	jm_next_bytes(st, set);
	n = 0;
	for (b = 0; b < 256; b++)
		n += (set[b >> 6] >> (b & 63)) & 1;
	tap_ok(want && n == 4 && ((set[1] >> ('t' - 64)) & 1) && ((set[1] >> ('f' - 64)) & 1) &&
	       (set[0] >> ' ' & 1) && (set[0] >> '\n' & 1), "jm_next_bytes: only 'b' and '\\\\' after {\"a; t, f, space and newline after ':' (%d)", n);
	tap_ok(!jm_feed(st, "x", 1) && jm_feed(st, "true}", 5) && jm_done(st),
	       "a refused feed leaves the state intact");
	jm_free(st);
	jm_schema_put(s);
}

static void test_number_ranges(void)
{
	cases("{\"type\":\"number\",\"minimum\":0,\"maximum\":100}",
	      (const char *[]){ "0", "100", "99.5", "0.0001", "50", "-0", "100.0", NULL },
	      (const struct no[]){ { "-1", 1 }, { "100.5", 4 }, { "101", 2 }, { "1e3", 1 },
				   { "200", 2 }, { "-0.5", 3 }, { NULL, 0 } },
	      "number minimum 0, maximum 100 (no exponent under a range)");
	cases("{\"type\":\"number\",\"exclusiveMinimum\":1.5,\"exclusiveMaximum\":9}",
	      (const char *[]){ "1.6", "8.999", "1.5000000000000002", "8.999999999999998", NULL },
	      (const struct no[]){ { "1.5", -1 }, { "1.5000000000000001", 17 }, { "9", 0 },
				   { "-1", 0 }, { "8.999999999999999", 16 }, { NULL, 0 } },
	      "zod .gt(1.5).lt(9): the bounds are the doubles next to them, so every number passes a double comparison");
	cases("{\"type\":\"number\",\"exclusiveMinimum\":0}",
	      (const char *[]){ "0.0000000000000001", "3", NULL },
	      (const struct no[]){ { "0", -1 }, { "0.0000000000000000", 17 }, { "-", 0 }, { NULL, 0 } },
	      "number exclusiveMinimum 0");
	cases("{\"type\":\"number\",\"multipleOf\":0.5}",
	      (const char *[]){ "1.5", "0", "-2", "3.0", "2.50", "-0.5", NULL },
	      (const struct no[]){ { "1.2", 2 }, { "0.25", 2 }, { "1e2", 1 }, { NULL, 0 } },
	      "number multipleOf 0.5");
	cases("{\"type\":\"integer\",\"multipleOf\":3,\"minimum\":0,\"maximum\":10}",
	      (const char *[]){ "0", "3", "9", NULL },
	      (const struct no[]){ { "1", 0 }, { "4", 0 }, { "12", 0 }, { "-3", 1 }, { NULL, 0 } },
	      "integer multipleOf 3 within 0..10 (a digit that leads to no multiple in range is refused)");
	cases("{\"type\":\"integer\",\"multipleOf\":0.5}",
	      (const char *[]){ "7", "-12", NULL }, (const struct no[]){ { "7.5", 1 }, { NULL, 0 } },
	      "integer multipleOf 0.5: every integer");
	cases("{\"properties\":{\"p\":{\"type\":\"number\",\"maximum\":0.1}}}",
	      (const char *[]){ "{\"p\":0.1}", "{\"p\":-7}", "{\"p\":0.09}", NULL },
	      (const struct no[]){ { "{\"p\":0.11}", 8 }, { "{\"p\":1}", 5 }, { NULL, 0 } },
	      "number maximum 0.1 inside an object");
}

/* A schema of a string with @pattern (a regex written as C text) and @extra keywords. */
static struct jm_schema *pat(const char *pattern, const char *extra)
{
	json_t *o = json_loads(extra ? extra : "{}", 0, NULL);
	char err[320];
	struct jm_schema *s;

	json_object_set_new(o, "type", json_string("string"));
	json_object_set_new(o, "pattern", json_string(pattern));
	s = jm_compile(o, err, sizeof(err));
	if (!s)
		printf("# pattern %s: %s\n", pattern, err);
	json_decref(o);
	return s;
}

static void pat_cases(const char *pattern, const char *extra, const char *const *ok,
		      const struct no *no, const char *what)
{
	struct jm_schema *s = pat(pattern, extra);
	int good = 0, n_ok = 0, n_no = 0;

	if (!s) {
		tap_ok(false, "%s: compiles", what);
		return;
	}
	for (; ok && ok[n_ok]; n_ok++) {
		if (accepts(s, ok[n_ok]))
			good++;
		else
			printf("#   '%s' not accepted\n", ok[n_ok]);
	}
	for (; no && no[n_no].doc; n_no++)
		good += refuses_at(s, no[n_no].doc, no[n_no].at);
	tap_ok(good == n_ok + n_no, "%s: %d accepted, %d refused at the right byte (%d right)",
	       what, n_ok, n_no, good);
	jm_schema_put(s);
}

static void test_patterns(void)
{
	struct jm_schema *s;
	struct jm_state *st;

	pat_cases("^[a-z]{2,5}-\\d+$", NULL,
		  (const char *[]){ "\"ab-1\"", "\"abcde-123\"", NULL },
		  (const struct no[]){ { "\"a-", 2 }, { "\"abcdef", 6 }, { "\"ab-\"", 4 },
				       { "\"AB", 1 }, { "\"ab-1x", 5 }, { NULL, 0 } },
		  "pattern ^[a-z]{2,5}-\\d+$ (zod .regex())");
	pat_cases("xy", NULL, (const char *[]){ "\"axyb\"", "\"xy\"", "\"xxy\"", NULL },
		  (const struct no[]){ { "\"yx\"", 3 }, { "\"\"", 1 }, { NULL, 0 } },
		  "an unanchored pattern matches anywhere (zod .includes())");
	pat_cases("^a|b$", NULL, (const char *[]){ "\"az\"", "\"zb\"", "\"a\"", NULL },
		  (const struct no[]){ { "\"za\"", 3 }, { "\"bz\"", 3 }, { NULL, 0 } },
		  "anchors inside alternatives are assertions");
	pat_cases("^a\\nb$", NULL, (const char *[]){ "\"a\\nb\"", "\"a\\u000ab\"", NULL },
		  (const struct no[]){ { "\"ab", 2 }, { "\"a\\t", 3 }, { "\"a\\u000b", 7 }, { NULL, 0 } },
		  "escapes in the document are the code points they stand for");
	pat_cases("^\xc3\xa9+$", NULL, (const char *[]){ "\"\xc3\xa9\xc3\xa9\"", "\"\\u00e9\"", NULL },
		  (const struct no[]){ { "\"e", 1 }, { "\"\xc3\xa8", 2 }, { "\"\xe2", 1 },
				       { "\"\\u01", 4 }, { "\"\\ud83d", 3 }, { NULL, 0 } },
		  "UTF-8: a lead byte or \\u digits with no matching code point ahead are refused");
	pat_cases("^[^\\x00-\\x7f]$", NULL, (const char *[]){ "\"\xf0\x9f\x98\x80\"", "\"\xc3\xa9\"", NULL },
		  (const struct no[]){ { "\"a", 1 }, { "\"\xf0\x9f\x98\x80\xc3", 5 }, { NULL, 0 } },
		  "a negated class and a 4-byte code point (one character)");
	pat_cases("^[a-z]+$", "{\"maxLength\":3,\"minLength\":2}",
		  (const char *[]){ "\"ab\"", "\"abc\"", NULL },
		  (const struct no[]){ { "\"abcd", 4 }, { "\"a\"", 2 }, { "\"\\n", 2 }, { NULL, 0 } },
		  "pattern with minLength and maxLength");
	pat_cases("^(ab)*$", "{\"minLength\":3,\"maxLength\":4}",
		  (const char *[]){ "\"abab\"", NULL },
		  (const struct no[]){ { "\"ab\"", 3 }, { "\"ababa", 5 }, { NULL, 0 } },
		  "the lengths a pattern can still end at: (ab)* of 3 or 4 characters is abab");
	s = pat("^a", NULL);
	st = s ? jm_new(s) : NULL;
	tap_ok(st && jm_feed(st, "\"a", 2) && !jm_in_free_string(st),
	       "a string under a pattern takes no token without the matcher (no free-string fast path)");
	jm_free(st);
	jm_schema_put(s);
}

/* The patterns zod 4.6.7's toJSONSchema() writes for z.email(), z.uuid(), z.iso.datetime(). */
static void test_zod_patterns(void)
{
	pat_cases("^(?:[A-Za-z0-9_'+\\-]+\\.)*[A-Za-z0-9_'+\\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$",
		  NULL, (const char *[]){ "\"ada@example.org\"", "\"j.o'hara+x@mail.ex-ample.co\"", NULL },
		  (const struct no[]){ { "\"@", 1 }, { "\"a@b\"", 4 }, { "\"a@b.c\"", 6 },
				       { "\"a b", 2 }, { "\"a@-", 3 }, { NULL, 0 } },
		  "zod z.email()");
	pat_cases("^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$",
		  NULL, (const char *[]){ "\"123e4567-e89b-12d3-a456-426614174000\"",
					  "\"00000000-0000-0000-0000-000000000000\"", NULL },
		  (const struct no[]){ { "\"123e4567-e89b-92d3", 15 }, { "\"123e456-", 8 },
				       { "\"123e4567-e89b-12d3-c", 20 }, { "\"g", 1 }, { NULL, 0 } },
		  "zod z.uuid()");
	pat_cases("^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z))$",
		  NULL, (const char *[]){ "\"2024-02-29T12:00:00Z\"", "\"2023-12-31T23:59:59.125Z\"", NULL },
		  (const struct no[]){ { "\"2023-02-29", 10 }, { "\"2023-13", 7 }, { "\"2023-04-31", 10 },
				       { "\"2023-12-31T24", 13 }, { "\"2023-12-31T23:59:59\"", 20 },
				       { NULL, 0 } },
		  "zod z.iso.datetime(): leap days, month lengths, hours");
}

static void test_property_names(void)
{
	cases("{\"type\":\"object\",\"propertyNames\":{\"type\":\"string\"},\"additionalProperties\":{\"type\":\"number\"}}",
	      (const char *[]){ "{\"a\":1,\"b c\":2}", "{}", NULL },
	      (const struct no[]){ { "{\"a\":\"x\"}", 5 }, { NULL, 0 } },
	      "propertyNames {type: string} (zod z.record(z.string(), z.number()))");
	cases("{\"type\":\"object\",\"propertyNames\":{\"pattern\":\"^k\\\\d$\"},\"additionalProperties\":{\"type\":\"number\"}}",
	      (const char *[]){ "{\"k1\":1,\"k2\":2}", NULL },
	      (const struct no[]){ { "{\"x", 2 }, { "{\"k12", 4 }, { "{\"k\"", 3 }, { NULL, 0 } },
	      "propertyNames pattern: every key");
	cases("{\"properties\":{\"long\":{},\"ab\":{}},\"additionalProperties\":true,\"propertyNames\":{\"maxLength\":2,\"minLength\":2}}",
	      (const char *[]){ "{\"ab\":1,\"zz\":2}", NULL },
	      (const struct no[]){ { "{\"lon", 4 }, { "{\"z\"", 3 }, { NULL, 0 } },
	      "propertyNames lengths apply to declared properties too");
}

static const char tools_json[] =
	"[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"strict\":true,"
	"\"parameters\":{\"type\":\"object\",\"properties\":{\"location\":{\"type\":\"string\"}},"
	"\"required\":[\"location\"],\"additionalProperties\":false}}},"
	"{\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"parameters\":{\"type\":\"object\","
	"\"properties\":{\"zone\":{\"type\":\"string\"}}}}}]";
static const char answer_schema[] =
	"{\"type\":\"object\",\"properties\":{\"answer\":{\"type\":\"string\"}},\"required\":[\"answer\"]}";

#define CALL_W	"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}\n</tool_call>"
#define CALL_T	"<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": 5}}\n</tool_call>"

static struct jm_schema *tools_sch(const char *doc, const char *tools, int choice, const char *name,
				   bool one)
{
	json_t *d = doc ? json_loads(doc, 0, NULL) : NULL, *t = json_loads(tools, 0, NULL);
	char err[320];
	struct jm_schema *s = jm_compile_tools(d, t, choice, name, one, err, sizeof(err));

	if (!s)
		printf("# jm_compile_tools: %s\n", err);
	json_decref(d);
	json_decref(t);
	return s;
}

static void test_tools(void)
{
	struct jm_schema *s = tools_sch(answer_schema, tools_json, JM_TOOLS_AUTO, NULL, false);
	const char *w = CALL_W;
	bool acc, done;
	int good = 0;
	char doc[8192];
	size_t at;
	int i;

	good += s && accepts(s, "{\"answer\":\"x\"}");
	good += s && feed(s, w, strlen(w), &acc, &done) < 0 && acc && !done;
	good += s && accepts(s, CALL_W "\n" CALL_T);
	good += s && refuses_at(s, "<tool_call>\n{\"name\": \"get_wind\"", 27);
	good += s && refuses_at(s, CALL_W " ", (long)strlen(w));
	good += s && refuses_at(s, "Hello", 0);
	good += s && refuses_at(s, "<tool_call>\n{\"arguments\"", 14);
	good += s && refuses_at(s, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\"", 51);
	good += s && refuses_at(s, "<tool_call>\n{\"name\": \"get_weather\",\"arguments\"", 35);
	good += s && refuses_at(s, "{\"answer\":\"x\"}\n<tool_call>", 14);
	tap_ok(good == 10, "schema and tools: a document, or calls in the template's JSON form with a tool's name and (strict) its parameters, decided at the first byte (%d of 10)",
	       good);
	jm_schema_put(s);

	s = tools_sch(answer_schema, tools_json, JM_TOOLS_REQUIRED, NULL, false);
	good = s && accepts(s, "{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>") &&
	       accepts(s, "{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>\n" CALL_W) &&
	       refuses_at(s, "{\"answer\"", 2);
	jm_schema_put(s);
	s = tools_sch(answer_schema, tools_json, JM_TOOLS_FUNCTION, "get_weather", false);
	good = good && s && feed(s, "{\"location\": \"Rome\"}}\n</tool_call>", 34, &acc, &done) < 0 &&
	       acc && done && refuses_at(s, "{\"zone\"", 2);
	jm_schema_put(s);
	s = tools_sch(NULL, tools_json, JM_TOOLS_AUTO, NULL, true);
	good = good && s && feed(s, w, strlen(w), &acc, &done) < 0 && acc && done &&
	       refuses_at(s, "{", 0);
	jm_schema_put(s);
	tap_ok(good, "tool_choice required: calls from inside the first; a named function: its arguments, one call; parallel_tool_calls false: one call");

	at = (size_t)sprintf(doc, "[");
	for (i = 0; i < 100; i++)
		at += (size_t)sprintf(doc + at, "%s{\"type\":\"function\",\"function\":{\"name\":\"f%d\"}}",
				      i ? "," : "", i);
	sprintf(doc + at, "]");
	s = tools_sch(NULL, doc, JM_TOOLS_AUTO, NULL, false);
	tap_ok(s && accepts(s, "<tool_call>\n{\"name\": \"f99\", \"arguments\": {\"a\": [1]}}\n</tool_call>") &&
	       accepts(s, "<tool_call>\n{\"name\": \"f0\", \"arguments\": {}}\n</tool_call>") &&
	       refuses_at(s, "<tool_call>\n{\"name\": \"f100", 25),
	       "100 tools: every name callable (literal nodes of 64 names, no reading dropped)");
	jm_schema_put(s);
	{
		json_t *t = json_loads("[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"strict\":true,"
				       "\"parameters\":{\"type\":\"object\",\"properties\":{\"x\":{\"not\":{}}}}}}]",
				       0, NULL);
		char err[320] = "";

		s = jm_compile_tools(NULL, t, JM_TOOLS_AUTO, NULL, false, err, sizeof(err));
		tap_ok(!s && strstr(err, "tools[0].function.parameters: 'not' is not supported (at properties.x)"),
		       "a strict tool whose parameters cannot be followed is refused naming them: %s", err);
		jm_schema_put(s);
		json_decref(t);
	}
}

static bool refused(const char *schema, const char *needle)
{
	char err[256] = "";
	struct jm_schema *s = jm_compile_text(schema, strlen(schema), err, sizeof(err));

	if (s || !strstr(err, needle))
		printf("#   %s: %s\n", schema, s ? "compiled" : err);
	jm_schema_put(s);
	return !s && strstr(err, needle);
}

static void test_refusals(void)
{
	int good = 0, n = 0;

	good += refused("{\"type\":123}", "'type' must be"), n++;
	good += refused("{\"type\":\"hiccup\"}", "'type' 'hiccup' is not a JSON type"), n++;
	good += refused("{\"type\":\"string\",\"pattern\":\"^a(?=b)\"}", "look-ahead '(?=' is not supported (at offset 2)"), n++;
	good += refused("{\"type\":\"string\",\"pattern\":\"(?<!a)b\"}", "look-behind '(?<!' is not supported"), n++;
	good += refused("{\"type\":\"string\",\"pattern\":\"(a)\\\\1\"}", "back-reference '\\1' is not supported"), n++;
	good += refused("{\"type\":\"string\",\"pattern\":\"\\\\p{L}\"}", "Unicode property escape '\\p'"), n++;
	good += refused("{\"type\":\"string\",\"pattern\":\"\\\\bx\"}", "word boundary '\\b'"), n++;
	good += refused("{\"type\":\"string\",\"pattern\":\"a{2000}\"}", "repetition bound above 1000"), n++;
	good += refused("{\"type\":\"string\",\"pattern\":\"(.*a.{12})\"}", "too large"), n++;
	good += refused("{\"type\":\"string\",\"pattern\":\"[a\"}", "'[' is not closed"), n++;
	good += refused("{\"type\":\"string\",\"pattern\":\"^(ab)*$\",\"minLength\":3,\"maxLength\":3}", "matches no string of 3 to 3"), n++;
	good += refused("{\"properties\":{\"x\":{\"type\":\"string\",\"pattern\":7}}}", "'pattern' must be a string (at properties.x)"), n++;
	good += refused("{\"properties\":{\"x\":{\"multipleOf\":0.01}}}", "'multipleOf' 0.01 is not supported: only integers and multiples of 2^-16 (0.5, 0.25, ...) are exact in the binary floating point validators use (at properties.x)"), n++;
	good += refused("{\"type\":\"number\",\"multipleOf\":0}", "'multipleOf' must be a number above 0"), n++;
	good += refused("{\"type\":\"number\",\"minimum\":5,\"maximum\":4.5}", "no number is within 'minimum'/'maximum' (5 > 4.5)"), n++;
	good += refused("{\"type\":\"integer\",\"multipleOf\":7,\"minimum\":1,\"maximum\":6}", "no integer is within 'minimum'/'maximum'/'multipleOf'"), n++;
	good += refused("{\"type\":\"object\",\"propertyNames\":{\"enum\":[\"a\"]}}", "'enum' in 'propertyNames' is not supported"), n++;
	good += refused("{\"type\":\"object\",\"properties\":{\"long\":{}},\"required\":[\"long\"],\"propertyNames\":{\"maxLength\":3}}", "'required' names 'long', which 'propertyNames' does not allow"), n++;
	good += refused("{\"type\":\"integer\",\"minimum\":5,\"maximum\":4}", "no integer is within"), n++;
	good += refused("{\"type\":\"integer\",\"maximum\":\"x\"}", "'maximum' must be a number"), n++;
	good += refused("{\"$ref\":\"http://x/y\"}", "'$ref' 'http://x/y' is not supported"), n++;
	good += refused("{\"$ref\":\"#/$defs/nope\"}", "names nothing"), n++;
	good += refused("{\"allOf\":[{},{}]}", "'allOf' of more than one"), n++;
	good += refused("{\"anyOf\":[{\"type\":\"integer\"}],\"type\":\"string\"}", "next to 'anyOf'"), n++;
	good += refused("{\"enum\":[]}", "has no value"), n++;
	good += refused("{\"type\":\"object\",\"required\":[\"q\"]}", "'required' names 'q'"), n++;
	good += refused("{\"type\":\"array\",\"minItems\":3,\"maxItems\":2}", "'minItems' 3 is above"), n++;
	good += refused("{\"type\":\"string\",\"maxLength\":-1}", "'maxLength' must be"), n++;
	good += refused("false", "accepts nothing"), n++;
	good += refused("[1]", "must be an object or a boolean"), n++;
	good += refused("{\"anyOf\":[{\"items\":[1]}]}", "(at anyOf[0].items[0])"), n++;
	good += refused("{", "not JSON"), n++;
	tap_ok(good == n, "compiler refusals name the keyword and where it is (%d of %d)", good, n);
}

static void test_hostile(void)
{
	char *deep = malloc(200 * 12 + 8);
	char *doc = malloc(16384);
	struct jm_schema *s;
	size_t at = 0;
	int i;

	for (i = 0; i < 200; i++)
		at += (size_t)sprintf(deep + at, "{\"items\":");
	at += (size_t)sprintf(deep + at, "{}");
	for (i = 0; i < 200; i++)
		deep[at++] = '}';
	deep[at] = '\0';
	tap_ok(refused(deep, "nested deeper than 64"), "a schema nested 200 levels is refused");

	s = sch("true");
	memset(doc, '[', 100);
	tap_ok(feed(s, doc, 100, NULL, NULL) == JM_MAX_DEPTH,
	       "a document nested deeper than %d is refused at the byte past it", JM_MAX_DEPTH);
	jm_schema_put(s);

	tap_ok(refused("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/a\"}},\"$ref\":\"#/$defs/a\"}",
		       "accepts no document") && refused("{\"$ref\":\"#\"}", "accepts no document") &&
	       refused("{\"type\":\"integer\",\"minimum\":1e300}", "accepts no document"),
	       "a $ref cycle that never reaches a type, {$ref: #} and an integer minimum of 1e300 accept no document: refused at compile time");

	s = sch("{\"anyOf\":[{\"$ref\":\"#\"},{\"$ref\":\"#\"},{\"type\":\"array\",\"items\":{\"$ref\":\"#\"}}]}");
	memset(doc, '[', 20);
	memset(doc + 20, ']', 20);
	tap_ok(s && accepts(s, "[[[]]]") && feed(s, doc, 40, NULL, NULL) < 0,
	       "a self-referencing anyOf fan-out stays bounded and still matches nested arrays");
	jm_schema_put(s);

	at = (size_t)sprintf(doc, "{\"anyOf\":[");
	for (i = 0; i < 100; i++)
		at += (size_t)sprintf(doc + at, "%s{\"type\":\"object\",\"properties\":{\"k%d\":{}}}", i ? "," : "", i);
	sprintf(doc + at, "]}");
	s = sch(doc);
	tap_ok(s && accepts(s, "{\"k3\":1}") && refuses_at(s, "{\"q\":1}", 2),
	       "100 object alternatives: at most %d readings, the early ones still match", JM_MAX_THREADS);
	jm_schema_put(s);

	at = (size_t)sprintf(doc, "{\"anyOf\":[");
	for (i = 0; i < 120; i++)
		at += (size_t)sprintf(doc + at, "%s{\"type\":\"string\",\"pattern\":\".*a.{9}\"}", i ? "," : "");
	sprintf(doc + at, "]}");
	tap_ok(refused(doc, "the schema's patterns take more than"),
	       "120 patterns of 1025 automaton states each: the schema's construction budget refuses them");

	at = (size_t)sprintf(doc, "{\"type\":\"object\",\"properties\":{");
	for (i = 0; i < 65; i++)
		at += (size_t)sprintf(doc + at, "%s\"p%d\":{}", i ? "," : "", i);
	sprintf(doc + at, "}}");
	tap_ok(refused(doc, "more than 64 properties"), "65 properties are refused");
	free(deep);
	free(doc);
}

int main(void)
{
	test_types();
	test_strings();
	test_objects();
	test_arrays();
	test_ranges();
	test_number_ranges();
	test_patterns();
	test_zod_patterns();
	test_property_names();
	test_tools();
	test_literals();
	test_alternatives();
	test_bounds();
	test_next_bytes();
	test_refusals();
	test_hostile();
	return tap_done();
}
