/*
 * arena: strings (and other small blocks) that live in large chunks and
 * are freed all at once (arena_free), for the analyzer's symbol and
 * source tables.  Internal to lib/.
 */
#ifndef SONDE_ARENA_H
#define SONDE_ARENA_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	char data[];
};

/* n bytes aligned to 8 (so that small structures may live here too). */
static inline char *arena_alloc(struct arena_chunk **head, size_t n)
{
	struct arena_chunk *c = *head;

	n = (n + 7) & ~(size_t)7;
	if (!c || c->size - c->used < n) {
		size_t size = n > 60000 ? n : 60000;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = *head;
		c->used = 0;
		c->size = size;
		*head = c;
	}
	char *p = c->data + c->used;

	c->used += n;
	return p;
}

static inline char *arena_strdup(struct arena_chunk **head, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = arena_alloc(head, n);

	if (p)
		memcpy(p, s, n);
	return p;
}

static inline char *arena_printf(struct arena_chunk **head, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline char *arena_printf(struct arena_chunk **head, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return arena_strdup(head, buf);
}

static inline void arena_free(struct arena_chunk **head)
{
	for (struct arena_chunk *c = *head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	*head = NULL;
}

#endif
