/* SPDX-License-Identifier: MIT */
/*
 * Compiled JSON schema shared by the compiler (jsonschema.c) and the
 * matcher (jsonmatch.c): a graph of struct jm_node ($ref and recursion
 * are pointers, possibly cyclic), owned by struct jm_schema.
 */
#ifndef RK_LLM_JSONMATCH_INT_H
#define RK_LLM_JSONMATCH_INT_H

#include "jsonmatch.h"

struct jm_re;

/*
 * A number in fixed point: the value times 10^16 (JM_FIX_ONE), exact for
 * every number the matcher generates (at most 16 digits in the integer
 * and in the fraction part: below 10^32 in magnitude). GCC's and Clang's
 * 128-bit integer on 64-bit targets.
 */
typedef __int128 jm_fix;
#define JM_FIX_ONE	((jm_fix)10000000000000000LL)

/* JSON types of a typed node (a set). */
enum {
	JT_NULL = 1 << 0,
	JT_BOOL = 1 << 1,
	JT_OBJ = 1 << 2,
	JT_ARR = 1 << 3,
	JT_STR = 1 << 4,
	JT_INT = 1 << 5,	/* integers only (-?(0|[1-9][0-9]*)) */
	JT_NUM = 1 << 6,	/* any RFC 8259 number (wins over JT_INT) */
	JT_ALL = (1 << 7) - 1,
};

/**
 * enum jm_form - what a node is
 * @JN_TYPED: a value of one of @types, with the type keywords below
 * @JN_ALT: one of @alt (anyOf / oneOf)
 * @JN_REF: the node @ref ($ref, allOf of one)
 * @JN_LIT: one of the literal texts @lit (enum / const, compact JSON; or
 *	raw text of a tool-call form, jsontools.c)
 * @JN_SEQ: the nodes @seq one after the other with nothing between them,
 *	then optionally @rep (a tool call's form: its tags as JN_LIT, its
 *	JSON as values)
 */
enum jm_form { JN_TYPED, JN_ALT, JN_REF, JN_LIT, JN_SEQ };

/**
 * struct jm_prop - a declared property
 * @name, @len: its name (decoded, UTF-8)
 * @n: its schema
 */
struct jm_prop {
	char *name;
	uint32_t len;
	const struct jm_node *n;
};

/**
 * struct jm_node - one compiled subschema
 * @form: enum jm_form
 * @types: JN_TYPED: the JT_* set
 * @ref: JN_REF: the target
 * @alt, @n_alt: JN_ALT: the alternatives
 * @lit, @lit_len, @n_lit: JN_LIT: the values' texts (at most JM_MAX_ENUM)
 * @cont: JN_LIT, optional: @n_lit nodes; after literal i the value goes on
 *	with cont[i] (a tool's name, then its arguments), NULL: it ends
 * @seq, @n_seq: JN_SEQ: the parts
 * @rep: JN_SEQ: what may follow the last part (NULL: nothing); the
 *	sequence may end before it
 * @props, @n_props: object: declared properties (at most JM_MAX_PROPS)
 * @required: object: bit i = @props[i] is required
 * @addl: object: the schema of other properties, NULL: none allowed
 * @prefix, @n_prefix: array: schemas of the first items
 * @items: array: schema of the items after @prefix, NULL: none allowed
 * @min_items, @max_items: array bounds
 * @min_len, @max_len: string bounds in code points
 * @re: string: the automaton of "pattern" (with the bounds), or NULL
 * @key_re: object: "propertyNames"' pattern, or NULL
 * @key_min, @key_max: object: "propertyNames"' length bounds (code points)
 * @has_range: numbers and integers: the value is within @lo..@hi and a
 *	multiple of @step (minimum, maximum, exclusiveMinimum,
 *	exclusiveMaximum, multipleOf); an exponent is not generated
 * @lo, @hi: inclusive, jm_fix, on the grid of @step
 * @step: jm_fix: JM_FIX_ONE for integers, 1 for numbers, times multipleOf
 * @next: the schema's list of nodes (for freeing)
 */
struct jm_node {
	enum jm_form form;
	unsigned int types;
	const struct jm_node *ref;
	const struct jm_node **alt;
	int n_alt;
	char **lit;
	uint32_t *lit_len;
	int n_lit;
	const struct jm_node **cont;
	const struct jm_node **seq;
	int n_seq;
	const struct jm_node *rep;
	struct jm_prop *props;
	int n_props;
	uint64_t required;
	const struct jm_node *addl;
	const struct jm_node **prefix;
	int n_prefix;
	const struct jm_node *items;
	uint32_t min_items, max_items;
	uint32_t min_len, max_len;
	struct jm_re *re, *key_re;
	uint32_t key_min, key_max;
	bool has_range;
	jm_fix lo, hi, step;
	struct jm_node *next;
};

/**
 * struct jm_schema - a compiled schema
 * @refs: reference count
 * @root: the document's schema
 * @nodes: every node allocated for it
 * @re_work: compiling: the steps its patterns took (jsonregex.h)
 */
struct jm_schema {
	int refs;
	const struct jm_node *root;
	struct jm_node *nodes;
	uint64_t re_work;
};

/**
 * jm_num_compile() - jsonnum.c: the range keywords of schema object @o
 * (minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf)
 * into @n's @has_range, @lo, @hi, @step (@n->types set first: JT_NUM
 * makes it a number). Return: 0, or -1 with @err naming the keyword.
 */
int jm_num_compile(const struct json_t *o, struct jm_node *n, char *err, size_t errlen);
/** jm_num_span() - some multiple of @n->step in [@a, @b] is within @n->lo..@n->hi. */
bool jm_num_span(const struct jm_node *n, jm_fix a, jm_fix b);
/** jm_num_ok() - the number @v is within @n's range and a multiple of its step. */
bool jm_num_ok(const struct jm_node *n, jm_fix v);
/** jm_pow10() - 10^@k as jm_fix, 0 <= @k <= 36. */
jm_fix jm_pow10(int k);

/*
 * jsonschema.c, for building schemas from parts (jsontools.c):
 * jm_schema_new() an empty schema (reference count 1, no root);
 * jm_node_add() a zeroed node owned by @s (no bounds: max_* UINT32_MAX),
 * NULL when out of memory; jm_compile_part() compiles @schema into @s
 * (its $refs resolved in @schema itself), counting its subschemas in
 * *@n_nodes against JM_MAX_NODES, and checks that some byte can start
 * it (jm_node_can_start()); NULL with @err set on failure.
 */
struct jm_schema *jm_schema_new(void);
struct jm_node *jm_node_add(struct jm_schema *s);
const struct jm_node *jm_compile_part(struct jm_schema *s, const struct json_t *schema,
				      int *n_nodes, char *err, size_t errlen);
bool jm_node_can_start(const struct jm_node *n);

/* Any JSON value ({} or true), and the literals true/false and null. */
extern const struct jm_node jm_any, jm_lit_bool, jm_lit_null;

#endif
