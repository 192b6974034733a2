/* SPDX-License-Identifier: MIT */
/*
 * Compiled JSON schema shared by the compiler (jsonschema.c) and the
 * matcher (jsonmatch.c): a graph of struct jm_node ($ref and recursion
 * are pointers, possibly cyclic), owned by struct jm_schema.
 */
#ifndef RK_LLM_JSONMATCH_INT_H
#define RK_LLM_JSONMATCH_INT_H

#include "jsonmatch.h"

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
 * @JN_LIT: one of the literal texts @lit (enum / const, compact JSON)
 */
enum jm_form { JN_TYPED, JN_ALT, JN_REF, JN_LIT };

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
 * @props, @n_props: object: declared properties (at most JM_MAX_PROPS)
 * @required: object: bit i = @props[i] is required
 * @addl: object: the schema of other properties, NULL: none allowed
 * @prefix, @n_prefix: array: schemas of the first items
 * @items: array: schema of the items after @prefix, NULL: none allowed
 * @min_items, @max_items: array bounds
 * @min_len, @max_len: string bounds in code points
 * @has_range: integers: @lo..@hi (inclusive) bound the value
 *	(minimum, maximum, exclusiveMinimum, exclusiveMaximum)
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
	struct jm_prop *props;
	int n_props;
	uint64_t required;
	const struct jm_node *addl;
	const struct jm_node **prefix;
	int n_prefix;
	const struct jm_node *items;
	uint32_t min_items, max_items;
	uint32_t min_len, max_len;
	bool has_range;
	int64_t lo, hi;
	struct jm_node *next;
};

/**
 * struct jm_schema - a compiled schema
 * @refs: reference count
 * @root: the document's schema
 * @nodes: every node allocated for it
 */
struct jm_schema {
	int refs;
	const struct jm_node *root;
	struct jm_node *nodes;
};

/* Any JSON value ({} or true), and the literals true/false and null. */
extern const struct jm_node jm_any, jm_lit_bool, jm_lit_null;

#endif
