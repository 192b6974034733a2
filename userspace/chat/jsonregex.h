/* SPDX-License-Identifier: MIT */
/*
 * The "pattern" of a JSON schema (JSON Schema 2020-12 section 6.3.3, an
 * ECMA-262 regular expression, matched with the u flag's code-point
 * semantics) compiled into a deterministic automaton over the string's
 * code points, for the matcher (jsonmatch.c) to follow one code point at
 * a time.
 *
 * The dialect is ECMA-262's without the features that are not regular or
 * that we do not implement, each refused by name: look-aheads and
 * look-behinds, back-references (\1, \k<name>), word boundaries (\b,
 * \B), Unicode property escapes (\p{...}), inline flags. Taken: literals
 * (UTF-8), '.', classes [...] and [^...] with ranges and the escapes
 * \d \w \s \D \W \S, \t \n \v \f \r \0 \xHH \uHHHH (surrogate pairs
 * joined) \u{H...} \cX and the escaped syntax characters; groups (...),
 * (?:...), (?<name>...) (and Python's (?P<name>...)); alternation;
 * quantifiers * + ? {n} {n,} {n,m} (lazy forms too: the same language);
 * the anchors ^ and $. As ECMA-262's RegExp.prototype.test() does, a
 * pattern matches anywhere in the string: ^ and $ are assertions, and the
 * automaton is that of [\s\S]*(?:pattern)[\s\S]*.
 *
 * The string's length bounds (minLength / maxLength, in code points) are
 * part of the automaton: a step is taken only when some continuation can
 * still end on an accepting state within them, so a generator that takes
 * only such steps always has a way to finish.
 *
 * Bounds (a hostile pattern is refused, never slow): JM_RE_MAX_NFA
 * Thompson states, JM_RE_MAX_DFA deterministic states, JM_RE_MAX_WORK
 * steps to build them, a counted
 * repetition's bound at most JM_RE_MAX_REPEAT, and the length table
 * (states x (bound + 1) bits) at most JM_RE_MAX_LENBITS.
 *
 * Thread safety: a compiled automaton is immutable.
 */
#ifndef RK_LLM_JSONREGEX_H
#define RK_LLM_JSONREGEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JM_RE_DEAD		UINT32_MAX	/* no state: the code point is refused */
#define JM_RE_MAX_NFA		8192
#define JM_RE_MAX_DFA		2048
#define JM_RE_MAX_REPEAT	1000
#define JM_RE_MAX_LENBITS	(1u << 23)
#define JM_RE_MAX_WORK		(1 << 24)	/* construction steps of a schema's patterns */
#define JM_RE_MAX_CP		0x10ffff

struct jm_re;

/**
 * jm_re_compile() - compile @pat (@len bytes of UTF-8)
 * @min_len, @max_len: the string's length bounds in code points
 *	(UINT32_MAX: none above)
 * @work: in and out, the construction steps spent so far by this and the
 *	other patterns of one schema: the total is bounded by JM_RE_MAX_WORK
 * @err, @errlen: on failure the reason, naming the construct and its
 *	offset: "look-ahead '(?=' is not supported (at offset 3)"
 *
 * Return: the automaton (start state 0), or NULL with @err set; also
 * NULL when no string within the bounds matches ("matches no string of
 * 2 to 3 characters").
 */
struct jm_re *jm_re_compile(const char *pat, size_t len, uint32_t min_len, uint32_t max_len,
			    uint64_t *work, char *err, size_t errlen);
void jm_re_free(struct jm_re *re);

/**
 * jm_re_next() - the state after code point @cp from state @s, where
 * @count code points came before @cp; JM_RE_DEAD when no string within
 * the length bounds continues with it.
 */
uint32_t jm_re_next(const struct jm_re *re, uint32_t s, uint32_t cp, uint32_t count);

/**
 * jm_re_any() - some code point in [@lo, @hi] has a jm_re_next() other
 * than JM_RE_DEAD (a UTF-8 sequence or \u escape not yet complete).
 */
bool jm_re_any(const struct jm_re *re, uint32_t s, uint32_t lo, uint32_t hi, uint32_t count);

/** jm_re_final() - a string that reached @s with @count code points matches. */
bool jm_re_final(const struct jm_re *re, uint32_t s, uint32_t count);

/** jm_re_match() - the UTF-8 string @str (@len bytes) matches, within the bounds. */
bool jm_re_match(const struct jm_re *re, const char *str, size_t len);

/** jm_re_states() - number of deterministic states (for tests and limits). */
uint32_t jm_re_states(const struct jm_re *re);

#endif
