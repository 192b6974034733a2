// SPDX-License-Identifier: MIT
/*
 * JSON schema compiler (jsonmatch.h): a jansson schema into the node
 * graph the matcher walks (jsonmatch_int.h). Keywords follow JSON Schema
 * 2020-12 (json-schema.org, "Validation" and "Core"); the generation
 * defaults for absent additionalProperties / tuple items follow
 * llama.cpp's json-schema-to-grammar (only what the schema declares).
 */
#include "jsonmatch_int.h"
#include "jsonregex.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *lit_null = "null";
static char *bool_lits[] = { "true", "false" };
static uint32_t bool_lens[] = { 4, 5 };
static uint32_t null_len = 4;

const struct jm_node jm_any = {
	.form = JN_TYPED, .types = JT_ALL, .addl = &jm_any, .items = &jm_any,
	.max_items = UINT32_MAX, .max_len = UINT32_MAX, .key_max = UINT32_MAX,
};
const struct jm_node jm_lit_bool = {
	.form = JN_LIT, .lit = bool_lits, .lit_len = bool_lens, .n_lit = 2,
};
const struct jm_node jm_lit_null = {
	.form = JN_LIT, .lit = &lit_null, .lit_len = &null_len, .n_lit = 1,
};

/*
 * Every keyword not listed below is ignored: the annotations (title,
 * description, default, examples, format, $schema, $id, $comment,
 * deprecated, readOnly, writeOnly, discriminator, content*), the
 * containers $defs / definitions (reached by $ref) and unknown keywords,
 * as JSON Schema does.
 */
/* Constraints we do not implement: refused, since ignoring them widens the language. */
static const char *const refused[] = {
	"patternProperties", "uniqueItems", "contains",
	"minContains", "maxContains", "minProperties", "maxProperties", "dependentRequired",
	"dependentSchemas", "dependencies", "not", "if", "then", "else",
	"unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef",
	"$dynamicAnchor", "$recursiveAnchor", NULL,
};

/* Keywords that constrain a typed node (siblings of $ref/anyOf are refused). */
static const char *const typed_kw[] = {
	"type", "properties", "required", "additionalProperties", "items", "prefixItems",
	"additionalItems", "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
	"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "pattern", "propertyNames", NULL,
};

/* Keywords of a propertyNames schema that are annotations. */
static const char *const annotations[] = {
	"title", "description", "$comment", "default", "examples", "format", "deprecated",
	"readOnly", "writeOnly", "$schema", "$id", NULL,
};

/* A $ref target already compiled (or being compiled: recursion). */
struct memo {
	const json_t *j;
	struct jm_node *n;
};

/**
 * struct ctx - one compilation
 * @root: the schema document ($ref "#" and JSON pointers start here)
 * @s: the schema being built
 * @memo, @n_memo, @cap_memo: $ref targets by their JSON value
 * @n_nodes: nodes so far (bounded by JM_MAX_NODES)
 * @lit_bytes: enum/const bytes so far (bounded by JM_MAX_LIT)
 * @path: where we are ("properties.a.items"), for errors
 * @err, @errlen: the error
 */
struct ctx {
	const json_t *root;
	struct jm_schema *s;
	struct memo *memo;
	int n_memo, cap_memo;
	int n_nodes;
	size_t lit_bytes;
	char path[192];
	char *err;
	size_t errlen;
};

static void vfail(struct ctx *c, const char *fmt, va_list ap)
{
	char msg[256];

	if (c->err[0])
		return;	/* the first error wins */
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (c->path[0])
		snprintf(c->err, c->errlen, "%s (at %s)", msg, c->path);
	else
		snprintf(c->err, c->errlen, "%s", msg);
}

/* Record the error (the first one wins); fail() returns NULL, bad() -1. */
static void *fail(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void *fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(c, fmt, ap);
	va_end(ap);
	return NULL;
}

static int bad(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(c, fmt, ap);
	va_end(ap);
	return -1;
}

static bool in_list(const char *const *l, const char *k)
{
	for (; *l; l++)
		if (!strcmp(*l, k))
			return true;
	return false;
}

static struct jm_node *node_new(struct ctx *c)
{
	struct jm_node *n;

	if (++c->n_nodes > JM_MAX_NODES)
		return fail(c, "the schema has more than %d subschemas", JM_MAX_NODES);
	n = jm_node_add(c->s);
	return n ? n : fail(c, "out of memory");
}

/* Append ".key" or ".key[i]" (@i >= 0) to the path; returns the old length. */
static size_t path_push(struct ctx *c, const char *key, long i)
{
	size_t at = strlen(c->path);

	if (i >= 0)
		snprintf(c->path + at, sizeof(c->path) - at, "%s%s[%ld]", at ? "." : "", key, i);
	else
		snprintf(c->path + at, sizeof(c->path) - at, "%s%s", at ? "." : "", key);
	return at;
}

static const struct jm_node *compile(struct ctx *c, const json_t *j, int depth);

/* compile() of @j reached through @key (or index @i) of the current node. */
static const struct jm_node *sub(struct ctx *c, const json_t *j, const char *key, long i,
				 int depth)
{
	size_t at = path_push(c, key, i);
	const struct jm_node *n = compile(c, j, depth + 1);

	if (n)
		c->path[at] = '\0';
	return n;
}

/* A non-negative integer keyword into @out (absent: unchanged). */
static int get_count(struct ctx *c, const json_t *o, const char *k, uint32_t *out)
{
	const json_t *v = json_object_get(o, k);
	double d;

	if (!v)
		return 0;
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = json_integer_value(v) > UINT32_MAX - 1 ? UINT32_MAX - 1 :
		       (uint32_t)json_integer_value(v);
		return 0;
	}
	d = json_is_real(v) ? json_real_value(v) : -1;
	if (d >= 0 && d == (double)(uint32_t)d) {
		*out = (uint32_t)d;
		return 0;
	}
	return bad(c, "'%s' must be a non-negative integer", k);
}

/* "type": a name or an array of names into a JT_* set. */
static int get_types(struct ctx *c, const json_t *t, unsigned int *out)
{
	static const struct { const char *name; unsigned int bit; } names[] = {
		{ "null", JT_NULL }, { "boolean", JT_BOOL }, { "object", JT_OBJ },
		{ "array", JT_ARR }, { "string", JT_STR }, { "integer", JT_INT },
		{ "number", JT_NUM },
	};
	size_t i, k, n = json_is_array(t) ? json_array_size(t) : 1;

	*out = 0;
	if (!json_is_string(t) && (!json_is_array(t) || !n)) {
		return bad(c, "'type' must be a type name or a non-empty array of them");
	}
	for (i = 0; i < n; i++) {
		const json_t *v = json_is_array(t) ? json_array_get(t, i) : t;
		const char *s = json_string_value(v);

		for (k = 0; s && k < sizeof(names) / sizeof(names[0]); k++)
			if (!strcmp(s, names[k].name))
				break;
		if (!s || k == sizeof(names) / sizeof(names[0])) {
			return bad(c, "'type' %s%.40s%s is not a JSON type (object, array, string, number, integer, boolean, null)",
			     s ? "'" : "", s ? s : "entry that is not a string", s ? "'" : "");
		}
		*out |= names[k].bit;
	}
	return 0;
}

/* The literal text of one enum/const value into @n (typed by @types, 0: any). */
static int add_lit(struct ctx *c, struct jm_node *n, const json_t *v, unsigned int types)
{
	unsigned int t;
	char *s;

	switch (json_typeof(v)) {
	case JSON_OBJECT: t = JT_OBJ; break;
	case JSON_ARRAY: t = JT_ARR; break;
	case JSON_STRING: t = JT_STR; break;
	case JSON_INTEGER: t = JT_INT | JT_NUM; break;
	case JSON_REAL: t = JT_NUM; break;
	case JSON_TRUE: case JSON_FALSE: t = JT_BOOL; break;
	default: t = JT_NULL; break;
	}
	if (types && !(types & t))
		return 0;	/* excluded by "type" */
	if (n->n_lit == JM_MAX_ENUM) {
		return bad(c, "'enum' has more than %d values", JM_MAX_ENUM);
	}
	if (json_is_true(v) || json_is_false(v) || json_is_null(v))
		s = strdup(json_is_true(v) ? "true" : json_is_false(v) ? "false" : "null");
	else
		s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
	if (!s) {
		return bad(c, "out of memory");
	}
	c->lit_bytes += strlen(s);
	n->lit[n->n_lit] = s;
	n->lit_len[n->n_lit++] = (uint32_t)strlen(s);
	if (c->lit_bytes > JM_MAX_LIT) {
		return bad(c, "the enum and const values have more than %d bytes", JM_MAX_LIT);
	}
	return 0;
}

static const struct jm_node *compile_lit(struct ctx *c, const json_t *o, struct jm_node *n)
{
	const json_t *en = json_object_get(o, "enum"), *cv = json_object_get(o, "const");
	const json_t *t = json_object_get(o, "type");
	unsigned int types = 0;
	size_t i, cnt;
	json_t *v;

	if (en && cv)
		return fail(c, "'enum' and 'const' together are not supported");
	if (en && !json_is_array(en))
		return fail(c, "'enum' must be an array");
	if (t && get_types(c, t, &types))
		return NULL;
	cnt = en ? json_array_size(en) : 1;
	n->form = JN_LIT;
	n->lit = calloc(cnt < JM_MAX_ENUM ? cnt + 1 : JM_MAX_ENUM, sizeof(*n->lit));
	n->lit_len = calloc(cnt < JM_MAX_ENUM ? cnt + 1 : JM_MAX_ENUM, sizeof(*n->lit_len));
	if (!n->lit || !n->lit_len)
		return fail(c, "out of memory");
	if (cv) {
		if (add_lit(c, n, cv, types))
			return NULL;
	} else {
		json_array_foreach(en, i, v)
			if (add_lit(c, n, v, types))
				return NULL;
	}
	if (!n->n_lit)
		return fail(c, "'%s' has no value%s", en ? "enum" : "const",
			    types ? " of the given 'type'" : "");
	return n;
}

/* Resolve a JSON pointer "#/a/b" (RFC 6901) in the document. */
static const json_t *resolve(struct ctx *c, const char *ref)
{
	const json_t *j = c->root;
	const char *p;

	if (strcmp(ref, "#") && strncmp(ref, "#/$defs/", 8) && strncmp(ref, "#/definitions/", 14))
		return fail(c, "'$ref' '%.64s' is not supported: only \"#\", \"#/$defs/...\" and \"#/definitions/...\"",
			    ref);
	for (p = ref + 1; *p == '/' && j; ) {
		char key[128];
		size_t k = 0;

		for (p++; *p && *p != '/'; p++) {
			char ch = *p;

			if (ch == '~' && (p[1] == '0' || p[1] == '1'))
				ch = *++p == '0' ? '~' : '/';
			if (k + 1 >= sizeof(key))
				return fail(c, "'$ref' '%.64s': a name longer than %zu bytes", ref,
					    sizeof(key) - 1);
			key[k++] = ch;
		}
		key[k] = '\0';
		j = json_is_object(j) ? json_object_get(j, key) :
		    json_is_array(j) ? json_array_get(j, strtoul(key, NULL, 10)) : NULL;
	}
	if (!j)
		return fail(c, "'$ref' '%.64s' names nothing in the schema", ref);
	return j;
}

static struct jm_node *memo_find(struct ctx *c, const json_t *j)
{
	int i;

	for (i = 0; i < c->n_memo; i++)
		if (c->memo[i].j == j)
			return c->memo[i].n;
	return NULL;
}

static int memo_add(struct ctx *c, const json_t *j, struct jm_node *n)
{
	if (c->n_memo == c->cap_memo) {
		int cap = c->cap_memo ? 2 * c->cap_memo : 16;
		struct memo *m = realloc(c->memo, (size_t)cap * sizeof(*m));

		if (!m)
			return -1;
		c->memo = m;
		c->cap_memo = cap;
	}
	c->memo[c->n_memo++] = (struct memo){ j, n };
	return 0;
}

/* $ref: the target's node, compiled once (a recursive $ref finds it in the memo). */
static const struct jm_node *compile_ref(struct ctx *c, const json_t *r, struct jm_node *n,
					 int depth)
{
	const json_t *t;
	struct jm_node *m;
	char saved[sizeof(c->path)];

	if (!json_is_string(r))
		return fail(c, "'$ref' must be a string");
	t = resolve(c, json_string_value(r));
	if (!t)
		return NULL;
	n->form = JN_REF;
	m = memo_find(c, t);
	if (m) {
		n->ref = m;
		return n;
	}
	if (memo_add(c, t, n))
		return fail(c, "out of memory");
	/* The target's errors say where it is defined. */
	memcpy(saved, c->path, sizeof(saved));
	snprintf(c->path, sizeof(c->path), "%s", json_string_value(r));
	n->ref = compile(c, t, depth + 1);
	if (!n->ref)
		return NULL;
	memcpy(c->path, saved, sizeof(saved));
	return n;
}

static const struct jm_node *compile_alt(struct ctx *c, const json_t *a, const char *kw,
					 struct jm_node *n, int depth)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a) || !json_array_size(a))
		return fail(c, "'%s' must be a non-empty array of schemas", kw);
	if (!strcmp(kw, "allOf")) {
		if (json_array_size(a) != 1)
			return fail(c, "'allOf' of more than one schema is not supported");
		n->form = JN_REF;
		n->ref = sub(c, json_array_get(a, 0), "allOf", 0, depth);
		return n->ref ? n : NULL;
	}
	n->form = JN_ALT;
	n->alt = calloc(json_array_size(a), sizeof(*n->alt));
	if (!n->alt)
		return fail(c, "out of memory");
	json_array_foreach(a, i, v) {
		n->alt[i] = sub(c, v, kw, (long)i, depth);
		if (!n->alt[i])
			return NULL;
		n->n_alt++;
	}
	return n;
}

static uint32_t utf8_count(const char *s)
{
	uint32_t n = 0;

	for (; *s; s++)
		n += ((uint8_t)*s & 0xc0) != 0x80;
	return n;
}

/* "pattern" of a string node (after its length bounds). */
static int compile_pattern(struct ctx *c, const json_t *o, struct jm_node *n, struct jm_re **out,
			   const char *kw)
{
	const json_t *p = json_object_get(o, "pattern");
	char err[256];

	if (!p)
		return 0;
	if (!json_is_string(p))
		return bad(c, "'%s' must be a string", kw);
	*out = jm_re_compile(json_string_value(p), json_string_length(p),
			     out == &n->re ? n->min_len : n->key_min,
			     out == &n->re ? n->max_len : n->key_max, &c->s->re_work, err, sizeof(err));
	if (!*out)
		return bad(c, "'%s' '%.60s': %s", kw, json_string_value(p), err);
	return 0;
}

/* The name @k satisfies the object's propertyNames. */
static bool name_ok(const struct jm_node *n, const char *k)
{
	uint32_t len = utf8_count(k);

	if (len < n->key_min || len > n->key_max)
		return false;
	return !n->key_re || jm_re_match(n->key_re, k, strlen(k));
}

/*
 * "propertyNames": a string schema of type, minLength, maxLength and
 * pattern (zod's records); every key must satisfy it, so a declared
 * property that does not is dropped (refused when it is required).
 */
static int compile_names(struct ctx *c, const json_t *o, struct jm_node *n)
{
	const json_t *pn = json_object_get(o, "propertyNames"), *t, *v;
	unsigned int types;
	const char *k;
	size_t at;
	int i, ret = 0;

	if (!pn || json_is_true(pn))
		return 0;
	if (!json_is_object(pn))
		return bad(c, "'propertyNames' must be a schema object (or true)");
	at = path_push(c, "propertyNames", -1);
	json_object_foreach((json_t *)pn, k, v) {
		if (strcmp(k, "type") && strcmp(k, "pattern") && strcmp(k, "minLength") &&
		    strcmp(k, "maxLength") && !in_list(annotations, k)) {
			ret = bad(c, "'%s' in 'propertyNames' is not supported (only type, pattern, minLength, maxLength)",
				  k);
			break;
		}
	}
	t = json_object_get(pn, "type");
	if (!ret && t && (get_types(c, t, &types) || (!(types & JT_STR) &&
						       bad(c, "'propertyNames' must allow strings"))))
		ret = -1;
	if (!ret && (get_count(c, pn, "minLength", &n->key_min) ||
		     get_count(c, pn, "maxLength", &n->key_max) ||
		     compile_pattern(c, pn, n, &n->key_re, "pattern")))
		ret = -1;
	if (ret)
		return -1;
	c->path[at] = '\0';
	for (i = 0; i < n->n_props; i++) {
		if (name_ok(n, n->props[i].name))
			continue;
		free(n->props[i].name);
		memmove(&n->props[i], &n->props[i + 1], (size_t)(n->n_props - i - 1) * sizeof(*n->props));
		n->n_props--;
		i--;
	}
	return 0;
}

static int compile_props(struct ctx *c, const json_t *o, struct jm_node *n, int depth)
{
	const json_t *pr = json_object_get(o, "properties"), *rq = json_object_get(o, "required");
	const json_t *ad = json_object_get(o, "additionalProperties"), *v;
	const char *k;
	size_t i;
	int p;

	if (pr && !json_is_object(pr))
		return bad(c, "'properties' must be an object");
	if (pr && json_object_size(pr) > JM_MAX_PROPS)
		return bad(c, "'properties' has more than %d properties", JM_MAX_PROPS);
	n->props = calloc(pr ? json_object_size(pr) + 1 : 1, sizeof(*n->props));
	if (!n->props)
		return bad(c, "out of memory");
	if (pr) {
		size_t at = path_push(c, "properties", -1);

		json_object_foreach((json_t *)pr, k, v) {
			struct jm_prop *q = &n->props[n->n_props];

			q->n = sub(c, v, k, -1, depth);
			if (!q->n)
				return -1;
			q->name = strdup(k);
			if (!q->name)
				return bad(c, "out of memory");
			q->len = (uint32_t)strlen(k);
			n->n_props++;
		}
		c->path[at] = '\0';
	}
	if (compile_names(c, o, n))
		return -1;
	if (rq && !json_is_array(rq))
		return bad(c, "'required' must be an array of property names");
	json_array_foreach(rq, i, v) {
		for (p = 0; json_is_string(v) && p < n->n_props; p++)
			if (!strcmp(n->props[p].name, json_string_value(v)))
				break;
		if (json_is_string(v) && p == n->n_props && !name_ok(n, json_string_value(v)))
			return bad(c, "'required' names '%.40s', which 'propertyNames' does not allow",
				   json_string_value(v));
		if (!json_is_string(v) || p == n->n_props)
			return bad(c, "'required' names %s%.40s%s, which is not in 'properties'",
				    json_is_string(v) ? "'" : "", json_is_string(v) ? json_string_value(v) : "a non-string",
				    json_is_string(v) ? "'" : "");
		n->required |= 1ull << p;
	}
	/* Absent: only the declared properties when there are some (llama.cpp). */
	if (!ad)
		n->addl = n->n_props ? NULL : &jm_any;
	else if (json_is_boolean(ad))
		n->addl = json_is_true(ad) ? &jm_any : NULL;
	else if (!(n->addl = sub(c, ad, "additionalProperties", -1, depth)))
		return -1;
	return 0;
}

/* A tuple's schemas (prefixItems, or the legacy "items" array) into @n->prefix. */
static int compile_tuple(struct ctx *c, const json_t *a, const char *kw, struct jm_node *n,
			 int depth)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a))
		return bad(c, "'%s' must be an array of schemas", kw);
	n->prefix = calloc(json_array_size(a) + 1, sizeof(*n->prefix));
	if (!n->prefix)
		return bad(c, "out of memory");
	json_array_foreach(a, i, v) {
		n->prefix[i] = sub(c, v, kw, (long)i, depth);
		if (!n->prefix[i])
			return -1;
		n->n_prefix++;
	}
	return 0;
}

static int compile_items(struct ctx *c, const json_t *o, struct jm_node *n, int depth)
{
	const json_t *pi = json_object_get(o, "prefixItems"), *it = json_object_get(o, "items");
	const json_t *ai = json_object_get(o, "additionalItems"), *rest = it;
	const char *rest_kw = "items";

	if (pi && compile_tuple(c, pi, "prefixItems", n, depth))
		return -1;
	if (json_is_array(it)) {
		if (pi)
			return bad(c, "'items' must be a schema next to 'prefixItems'");
		if (compile_tuple(c, it, "items", n, depth))
			return -1;
		rest = ai;
		rest_kw = "additionalItems";
	}
	/* Absent after a tuple: only the tuple's items (llama.cpp). */
	if (!rest)
		n->items = (pi || json_is_array(it)) ? NULL : &jm_any;
	else if (json_is_boolean(rest))
		n->items = json_is_true(rest) ? &jm_any : NULL;
	else if (!(n->items = sub(c, rest, rest_kw, -1, depth)))
		return -1;
	if (get_count(c, o, "minItems", &n->min_items) ||
	    get_count(c, o, "maxItems", &n->max_items))
		return -1;
	if (n->min_items > n->max_items)
		return bad(c, "'minItems' %u is above 'maxItems' %u", n->min_items, n->max_items);
	if (!n->items && n->min_items > (uint32_t)n->n_prefix)
		return bad(c, "'minItems' %u is above the %d items the tuple allows", n->min_items,
			    n->n_prefix);
	return 0;
}

/* The range keywords on a number or integer node (jsonnum.c). */
static int compile_range(struct ctx *c, const json_t *o, struct jm_node *n)
{
	char err[256];

	if (jm_num_compile(o, n, err, sizeof(err)))
		return bad(c, "%s", err);
	return 0;
}

static const struct jm_node *compile_typed(struct ctx *c, const json_t *o, struct jm_node *n,
					   int depth)
{
	const json_t *t = json_object_get(o, "type");

	n->form = JN_TYPED;
	if (t) {
		if (get_types(c, t, &n->types))
			return NULL;
	} else {
		/* No "type": what the keywords imply (llama.cpp), else anything. */
		if (json_object_get(o, "properties") || json_object_get(o, "required") ||
		    json_object_get(o, "additionalProperties") || json_object_get(o, "propertyNames"))
			n->types |= JT_OBJ;
		if (json_object_get(o, "items") || json_object_get(o, "prefixItems") ||
		    json_object_get(o, "minItems") || json_object_get(o, "maxItems") ||
		    json_object_get(o, "additionalItems"))
			n->types |= JT_ARR;
		if (json_object_get(o, "minLength") || json_object_get(o, "maxLength") ||
		    json_object_get(o, "pattern"))
			n->types |= JT_STR;
		if (json_object_get(o, "minimum") || json_object_get(o, "maximum") ||
		    json_object_get(o, "exclusiveMinimum") || json_object_get(o, "exclusiveMaximum") ||
		    json_object_get(o, "multipleOf"))
			n->types |= JT_NUM;
		if (!n->types)
			n->types = JT_ALL;
	}
	if ((n->types & JT_OBJ) && compile_props(c, o, n, depth))
		return NULL;
	if ((n->types & JT_ARR) && compile_items(c, o, n, depth))
		return NULL;
	if ((n->types & (JT_INT | JT_NUM)) && compile_range(c, o, n))
		return NULL;
	if (get_count(c, o, "minLength", &n->min_len) ||
	    get_count(c, o, "maxLength", &n->max_len))
		return NULL;
	if (n->min_len > n->max_len)
		return fail(c, "'minLength' %u is above 'maxLength' %u", n->min_len, n->max_len);
	if ((n->types & JT_STR) && compile_pattern(c, o, n, &n->re, "pattern"))
		return NULL;
	return n;
}

/*
 * Refuse what we do not implement; @form: the keyword that makes the node
 * a $ref, an alternative or a literal, or NULL for a typed node.
 */
static int check_keywords(struct ctx *c, const json_t *o, const char **form)
{
	static const char *const forms[] = { "$ref", "anyOf", "oneOf", "allOf", NULL };
	const char *k, *typed = NULL, *lit = NULL;
	json_t *v;

	*form = NULL;
	json_object_foreach((json_t *)o, k, v) {
		if (in_list(refused, k))
			return bad(c, "'%s' is not supported", k);
		if (in_list(forms, k)) {
			if (*form)
				return bad(c, "'%s' next to '%s' is not supported", k, *form);
			*form = k;
		} else if (!strcmp(k, "enum") || !strcmp(k, "const")) {
			lit = k;
		} else if (in_list(typed_kw, k) && (!typed || !strcmp(typed, "type"))) {
			typed = k;
		}
		/* Annotations and unknown keywords are ignored (JSON Schema). */
	}
	if (*form && (lit || typed))
		return bad(c, "'%s' next to '%s' is not supported", lit ? lit : typed, *form);
	if (lit && typed && strcmp(typed, "type"))
		return bad(c, "'%s' next to '%s' is not supported (only 'type')", typed, lit);
	if (lit && !*form)
		*form = lit;
	return 0;
}

static const struct jm_node *compile(struct ctx *c, const json_t *j, int depth)
{
	struct jm_node *n;
	const char *form;

	if (depth > JM_MAX_NEST)
		return fail(c, "the schema is nested deeper than %d levels", JM_MAX_NEST);
	if (json_is_true(j))
		return &jm_any;
	if (json_is_false(j))
		return fail(c, "the schema false accepts nothing");
	if (!json_is_object(j))
		return fail(c, "a schema must be an object or a boolean");
	if (check_keywords(c, j, &form))
		return NULL;
	n = node_new(c);
	if (!n)
		return NULL;
	if (!form)
		return compile_typed(c, j, n, depth);
	if (!strcmp(form, "$ref"))
		return compile_ref(c, json_object_get(j, "$ref"), n, depth);
	if (!strcmp(form, "enum") || !strcmp(form, "const"))
		return compile_lit(c, j, n);
	return compile_alt(c, json_object_get(j, form), form, n, depth);
}

bool jm_node_can_start(const struct jm_node *n)
{
	struct jm_schema tmp = { .refs = 1, .root = n };
	struct jm_state *st = jm_new(&tmp);
	uint64_t set[4] = { 0 };

	if (!st)
		return true;	/* out of memory: the request fails on its own */
	jm_next_bytes(st, set);
	jm_free(st);
	return set[0] | set[1] | set[2] | set[3];
}

struct jm_node *jm_node_add(struct jm_schema *s)
{
	struct jm_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->next = s->nodes;
	s->nodes = n;
	n->max_items = UINT32_MAX;
	n->max_len = UINT32_MAX;
	n->key_max = UINT32_MAX;
	return n;
}

const struct jm_node *jm_compile_part(struct jm_schema *s, const json_t *schema, int *n_nodes,
				      char *err, size_t errlen)
{
	struct ctx c = { .root = schema, .s = s, .n_nodes = *n_nodes, .err = err,
			 .errlen = errlen };
	const struct jm_node *root;

	c.err[0] = '\0';
	root = compile(&c, schema, 0);
	free(c.memo);
	*n_nodes = c.n_nodes;
	if (!root) {
		fail(&c, "invalid schema");
		return NULL;
	}
	if (!jm_node_can_start(root)) {
		fail(&c, "the schema accepts no document this matcher can generate (a $ref that only refers to itself, a number range beyond %d digits, or nesting beyond %d levels)",
		     JM_MAX_DIGITS, JM_MAX_DEPTH);
		return NULL;
	}
	return root;
}

struct jm_schema *jm_schema_new(void)
{
	struct jm_schema *s = calloc(1, sizeof(*s));

	if (s)
		s->refs = 1;
	return s;
}

struct jm_schema *jm_compile(const json_t *schema, char *err, size_t errlen)
{
	struct jm_schema *s = jm_schema_new();
	char dummy[1];
	int n_nodes = 0;

	if (!errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->root = jm_compile_part(s, schema, &n_nodes, err, errlen);
	if (!s->root) {
		jm_schema_put(s);
		return NULL;
	}
	return s;
}

struct jm_schema *jm_compile_text(const char *text, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *j = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
	struct jm_schema *s;

	if (!j) {
		if (errlen)
			snprintf(err, errlen, "the schema is not JSON: %s (line %d, column %d)", je.text,
				 je.line, je.column);
		return NULL;
	}
	s = jm_compile(j, err, errlen);
	json_decref(j);
	return s;
}

struct jm_schema *jm_schema_get(struct jm_schema *s)
{
	if (s)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	return s;
}

void jm_schema_put(struct jm_schema *s)
{
	struct jm_node *n, *next;
	int i;

	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (n = s->nodes; n; n = next) {
		next = n->next;
		for (i = 0; i < n->n_lit; i++)
			free(n->lit[i]);
		for (i = 0; i < n->n_props; i++)
			free(n->props[i].name);
		jm_re_free(n->re);
		jm_re_free(n->key_re);
		free(n->lit);
		free(n->lit_len);
		free(n->cont);
		free(n->seq);
		free(n->props);
		free(n->alt);
		free(n->prefix);
		free(n);
	}
	free(s);
}
