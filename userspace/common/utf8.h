/* SPDX-License-Identifier: MIT */
/*
 * UTF-8 helpers shared by the tokenizer and everything that prints model
 * output: strict decoding (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF), the replacement rule for invalid input, and a
 * stream that turns token pieces (arbitrary byte strings, e.g. one byte of
 * a multi-byte character per byte-level token) into whole characters.
 *
 * The one rule for invalid UTF-8, used everywhere in rk1828: every byte
 * that does not begin a well-formed sequence (a stray continuation byte,
 * C0/C1/F5..FF, a lead byte whose sequence is cut short or malformed,
 * overlong forms, surrogates) becomes U+FFFD, and decoding resumes at the
 * next byte. For the common cases (stray and truncated bytes) this is what
 * llama.cpp's unicode_cpts_from_utf8() does.
 */
#ifndef RK_UTF8_H
#define RK_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* U+FFFD in UTF-8. */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/**
 * utf8_decode() - decode one character
 * @s: bytes
 * @n: bytes available at @s (>= 1)
 * @cp: out, the code point (U+FFFD for an invalid sequence)
 *
 * Return: bytes consumed: 1..4 for a well-formed character, 1 (with @cp =
 * 0xFFFD) when @s does not begin a well-formed sequence.
 */
size_t utf8_decode(const char *s, size_t n, uint32_t *cp);

/* utf8_valid_len() - length of the well-formed sequence at @s, or 0. */
size_t utf8_valid_len(const char *s, size_t n);

/**
 * utf8_encode() - write @cp (<= 0x10FFFF, not a surrogate) as UTF-8
 * @cp: code point
 * @out: at least 4 bytes
 *
 * Return: 1..4, or 0 for a code point that has no UTF-8 form.
 */
size_t utf8_encode(uint32_t cp, char *out);

/**
 * utf8_sanitize() - copy @s with the replacement rule applied
 * @s, @n: input bytes (may contain NUL)
 * @out: at least 3 * @n bytes (each invalid byte becomes 3)
 *
 * Return: bytes written. Valid input is copied unchanged.
 */
size_t utf8_sanitize(const char *s, size_t n, char *out);

/* utf8_is_valid() - whether all of @s is well-formed UTF-8. */
bool utf8_is_valid(const char *s, size_t n);

/**
 * struct utf8_stream - joins byte pieces into whole characters
 * @pend: bytes of an incomplete character carried to the next feed
 * @n_pend: how many (0..3)
 *
 * Zero-initialise. Not thread-safe; one per output stream.
 */
struct utf8_stream {
	char pend[4];
	int n_pend;
};

/* Output bytes utf8_stream_feed() may write for @n input bytes. */
#define UTF8_STREAM_BOUND(n) (3 * ((size_t)(n) + 3))

/**
 * utf8_stream_feed() - append @n bytes; write the complete characters
 * @st: the stream
 * @in, @n: the next bytes (e.g. one token's piece)
 * @out: UTF8_STREAM_BOUND(@n) bytes
 *
 * A character split across feeds is written once its last byte arrives,
 * never half of it. Bytes that can no longer become a well-formed
 * character are written as U+FFFD (the rule above) as soon as that is
 * known. The output is always well-formed UTF-8.
 *
 * Return: bytes written to @out.
 */
size_t utf8_stream_feed(struct utf8_stream *st, const char *in, size_t n, char *out);

/**
 * utf8_stream_flush() - end of stream: the held bytes become U+FFFD each
 * @st: the stream (reset to empty)
 * @out: at least 9 bytes
 *
 * Return: bytes written (0 when nothing was held).
 */
size_t utf8_stream_flush(struct utf8_stream *st, char *out);

/* utf8_stream_pending() - bytes held back, waiting for their character's end. */
static inline int utf8_stream_pending(const struct utf8_stream *st)
{
	return st->n_pend;
}

#endif
