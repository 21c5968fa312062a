/*
 * xmlline: a tiny tokenizer for the XML that sonde writes (log.xml,
 * map.xml): elements with double- or single-quoted attributes, no text
 * content that matters, no DTD, no namespaces.  It is not a general XML
 * parser; it is lenient where sonde's own files can be damaged (a file cut
 * off by a killed target) and never reads outside the buffer.
 *
 * The tokenizer works in place: it writes NUL terminators into the buffer
 * and decodes entities (&amp; &lt; &gt; &quot; &apos; &#N; &#xN;) there, so
 * names and values point into the caller's buffer and live as long as it.
 * Nothing is allocated.  Thread-safe as long as buffers are not shared.
 */
#ifndef SONDE_XMLLINE_H
#define SONDE_XMLLINE_H

#include <stddef.h>

#define SONDE_XML_MAX_ATTR 48 /* further attributes of one element are ignored */

enum sonde_xml_kind {
	SONDE_XML_OPEN,	 /* <name ...> */
	SONDE_XML_EMPTY, /* <name .../> */
	SONDE_XML_CLOSE, /* </name> */
	SONDE_XML_OTHER, /* <?...?>, <!...>, comments: name is "" */
};

struct sonde_xml_attr {
	const char *name;
	const char *value; /* entities decoded */
};

struct sonde_xml_elem {
	enum sonde_xml_kind kind;
	const char *name;
	unsigned line; /* 1-based line where the element starts */
	size_t nattr;
	struct sonde_xml_attr attr[SONDE_XML_MAX_ATTR];
};

/* Cursor over a writable buffer of len bytes (need not be NUL-terminated). */
struct sonde_xml {
	char *p, *end;
	unsigned line;
};

void sonde_xml_init(struct sonde_xml *x, char *buf, size_t len);

/*
 * Reads the next element into *e.  Returns 1 when one was read, 0 at the
 * end of the buffer, and -1 when the next element is malformed (cut off at
 * the end of the buffer, a missing quote or '='): then err holds a message
 * naming the line ("line 12: element <event> is cut off"), the cursor has
 * moved past the bad element (to the end of its line at least), and the
 * caller may go on calling.  Text between elements is skipped.
 */
int sonde_xml_next(struct sonde_xml *x, struct sonde_xml_elem *e, char *err, size_t errlen);

/* The value of attribute name, or NULL when the element has none. */
const char *sonde_xml_attr(const struct sonde_xml_elem *e, const char *name);

#endif
