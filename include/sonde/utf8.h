#ifndef SONDE_UTF8_H
#define SONDE_UTF8_H

/*
 * Names in experiments (program paths, object paths, source files, I/O
 * file names) are bytes; the documents sonde writes (log.xml, map.xml,
 * archives/index.xml, json and csv views) must be valid UTF-8 whatever
 * those bytes are.  A byte that does not start a valid UTF-8 sequence, and
 * a control byte XML cannot carry (below 0x20, except tab), is written as
 * the private-use code point U+F700 + byte (U+F780..U+F7FF, U+F701..
 * U+F71F): in XML as the character reference "&#xF7XY;", in json as
 * "\uf7XY", in csv as that code point's UTF-8.  The reader turns the XML
 * character references back into the byte, so names read back exactly
 * (a real U+F7XY in a name is written as itself, never as a reference,
 * so it cannot be confused with an escaped byte).  See
 * doc/experiment-format.md, "Names that are not UTF-8".
 *
 * Pure and async-signal-safe: the collector uses it in its log writer.
 */
#include <stddef.h>

#define SONDE_BYTE_ESCAPE_BASE 0xf700u

/* The length (1-4) of the valid UTF-8 sequence at s, or 0 when the byte
 * at s does not start one (a stray continuation byte, an overlong form,
 * a surrogate, a code point above U+10FFFF, a sequence cut short). */
static inline size_t sonde_utf8_len(const unsigned char *s)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return 0; /* continuation byte, or overlong 2-byte lead */
	if (c < 0xe0)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c < 0xf0) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))
			return 0; /* overlong, surrogate */
		return 3;
	}
	if (c < 0xf5) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
			return 0; /* overlong, above U+10FFFF */
		return 4;
	}
	return 0;
}

#endif
