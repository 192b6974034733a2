/* SPDX-License-Identifier: MIT */
/*
 * Streamed completion text: turns the byte pieces of generated tokens into
 * deltas that are safe to send (engine.h, ENGINE_EV_TEXT):
 *  - UTF-8: bytes are decoded as they arrive; a delta never ends inside a
 *    character. A sequence that cannot become valid UTF-8 (a stray
 *    continuation byte, an overlong form, a surrogate, > U+10FFFF, a lead
 *    byte followed by a non-continuation) becomes U+FFFD, one per maximal
 *    invalid subpart (Unicode 15, section 3.9, "U+FFFD Substitution of
 *    Maximal Subparts"), so every delta is valid UTF-8 for JSON.
 *  - Stop strings: matched on the decoded text across token boundaries.
 *    A tail of the text that is a proper prefix of a stop string is held
 *    back until the next piece decides it; when a stop string appears, the
 *    text before it is released and the stop string and everything after
 *    it are dropped.
 *  - Tokens: each token is "completed" by the delta that releases the last
 *    byte of its decoded text; a token without text completes at once; a
 *    token whose text reaches into the stop string never completes.
 * At the end (txo_finish()) held text is released and an incomplete
 * character at the very end is dropped.
 *
 * Pure logic (no engine state), unit-tested in tests/unit/test_textout.c.
 */
#ifndef RK_LLM_TEXTOUT_H
#define RK_LLM_TEXTOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TXO_MAX_STOP	4
#define TXO_MAX_STOP_LEN 4096

/**
 * struct txo_tok - a token waiting for its text to be released
 * @id: token id
 * @idx: its index among the request's generated tokens (0-based)
 * @raw_end: raw bytes fed up to and including this token's last byte
 * @end: decoded bytes up to the end of its text, or -1 while the decoder
 *	still holds some of its bytes
 */
struct txo_tok {
	int32_t id;
	int idx;
	uint64_t raw_end;
	int64_t end;
};

/**
 * struct txo - text stream state (treat as opaque)
 * @stop: stop strings (copies), @stop_len their lengths
 * @n_stop: stop strings
 * @max_stop: longest stop string
 * @pend: decoded text not yet released, @n_pend bytes (capacity @cap_pend)
 * @sent: decoded bytes released so far (offset of @pend[0])
 * @utf: undecided bytes of the current character, @n_utf of @need_utf
 * @raw: raw bytes fed
 * @toks: tokens not yet completed, @n_toks (capacity @cap_toks)
 * @n_fed: tokens fed
 * @rel_text, @rel_toks: bytes of @pend and entries of @toks handed out by
 *	the last delta, dropped at the next call
 * @stopped: a stop string was found; further input is ignored
 * @stop_hit: index into @stop of the stop string found, -1 when none was
 */
struct txo {
	char *stop[TXO_MAX_STOP];
	size_t stop_len[TXO_MAX_STOP];
	int n_stop;
	size_t max_stop;
	char *pend;
	size_t n_pend, cap_pend;
	uint64_t sent;
	unsigned char utf[4];
	int n_utf, need_utf;
	uint64_t raw;
	struct txo_tok *toks;
	int n_toks, cap_toks;
	int n_fed;
	size_t rel_text;
	int rel_toks;
	bool stopped;
	int stop_hit;
};

/**
 * struct txo_delta - what became releasable
 * @text: @len bytes of valid UTF-8 (points into the struct txo; valid
 *	until the next call on it)
 * @len: bytes
 * @done: indices (struct txo_tok.idx) of the tokens completed, in order,
 *	@n_done entries (points into the struct txo, valid likewise)
 * @n_done: entries of @done
 * @stopped: a stop string ended the text with this delta
 */
struct txo_delta {
	const char *text;
	size_t len;
	const struct txo_tok *done;
	int n_done;
	bool stopped;
};

/**
 * txo_init() - start a stream
 * @t: state to initialise
 * @stop: @n_stop stop strings (each 1..TXO_MAX_STOP_LEN bytes of valid
 *	UTF-8); copied
 * @n_stop: 0..TXO_MAX_STOP
 * Return: 0, -EINVAL (too many, empty, too long or not UTF-8) or -ENOMEM.
 */
int txo_init(struct txo *t, const char *const *stop, int n_stop);

/** txo_free() - free the copies and buffers (the struct itself is the caller's). */
void txo_free(struct txo *t);

/**
 * txo_push() - feed the piece of the next generated token
 * @t: stream
 * @id: token id
 * @piece: its bytes (may be empty)
 * @len: bytes of @piece
 * @d: out: what became releasable (possibly nothing); valid until the next
 *	txo_push() or txo_finish(), which forget it
 * Return: 0 or -ENOMEM. After a delta with @d->stopped, later pushes
 * return empty deltas.
 */
int txo_push(struct txo *t, int32_t id, const char *piece, size_t len, struct txo_delta *d);

/**
 * txo_finish() - the generation ended without a stop string: release
 * everything held back, drop an incomplete final character
 * @t: stream
 * @d: out
 */
void txo_finish(struct txo *t, struct txo_delta *d);

/**
 * txo_utf8_valid() - whether @len bytes at @s are valid UTF-8 (no
 * overlong forms, surrogates or code points above U+10FFFF)
 */
bool txo_utf8_valid(const char *s, size_t len);

#endif
