/* Formatting without stdio, so that log lines can be built anywhere,
 * including signal handlers. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "sonde/utf8.h"

/* Async-signal-safe. */
void xb_init(struct xbuf *b, char *mem, size_t cap)
{
	b->p = mem;
	b->len = 0;
	b->cap = cap;
	b->overflow = 0;
	if (cap)
		mem[0] = 0;
}

/* Async-signal-safe. */
static void xb_putc(struct xbuf *b, char c)
{
	if (b->len + 1 < b->cap) {
		b->p[b->len++] = c;
		b->p[b->len] = 0;
	} else {
		b->overflow = 1;
	}
}

/* Async-signal-safe. */
void xb_str(struct xbuf *b, const char *s)
{
	while (s && *s)
		xb_putc(b, *s++);
}

/* Async-signal-safe.  Control characters other than tab become '?', so
 * that one event stays on one line of log.xml.  An entity is written whole
 * or not at all, so a cut string is still well-formed. */
void xb_xml(struct xbuf *b, const char *s)
{
	for (; s && *s && !b->overflow; s++) {
		unsigned char c = (unsigned char)*s;
		const char *ent = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;" : NULL;
		size_t ul = ent ? 1 : sonde_utf8_len((const unsigned char *)s);

		if (!ent && (ul == 0 || (c < 0x20 && c != '\t'))) {
			/* Not UTF-8 or not an XML character: the byte as U+F7XY
			 * (include/sonde/utf8.h), which the reader decodes back. */
			char ref[] = "&#xF7XY;";

			ref[5] = "0123456789ABCDEF"[c >> 4];
			ref[6] = "0123456789ABCDEF"[c & 15];
			if (b->len + sizeof(ref) - 1 < b->cap)
				xb_str(b, ref);
			else
				b->overflow = 1;
		} else if (!ent) {
			/* a whole valid sequence (its bytes are non-NUL) */
			for (size_t k = 0; k < ul; k++)
				xb_putc(b, s[k]);
			s += ul - 1;
		} else if (b->len + strlen(ent) < b->cap) {
			xb_str(b, ent);
		} else {
			b->overflow = 1;
		}
	}
}

/* Async-signal-safe. */
void xb_u64(struct xbuf *b, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		xb_putc(b, tmp[--n]);
}

/* Async-signal-safe. */
void xb_hex(struct xbuf *b, uint64_t v)
{
	char tmp[20];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	xb_str(b, "0x");
	while (n)
		xb_putc(b, tmp[--n]);
}

/* Async-signal-safe. */
void xb_attr_u64(struct xbuf *b, const char *name, uint64_t v)
{
	xb_putc(b, ' ');
	xb_str(b, name);
	xb_str(b, "=\"");
	xb_u64(b, v);
	xb_putc(b, '"');
}

/* Async-signal-safe. */
void xb_attr_hex(struct xbuf *b, const char *name, uint64_t v)
{
	xb_putc(b, ' ');
	xb_str(b, name);
	xb_str(b, "=\"");
	xb_hex(b, v);
	xb_putc(b, '"');
}

/* Async-signal-safe. */
void xb_attr_str(struct xbuf *b, const char *name, const char *v)
{
	xb_putc(b, ' ');
	xb_str(b, name);
	xb_str(b, "=\"");
	xb_xml(b, v);
	xb_putc(b, '"');
}

/* Async-signal-safe (clock_gettime is on the POSIX list; here it is the
 * vDSO). */
/* The tick `sonde collect` keeps (shared.c), for when no clock can be
 * read: seccomp's strict mode disables the TSC. */
extern _Atomic uint64_t __sonde_trace_now;

uint64_t now_ns(void)
{
	struct timespec ts;
	if (__builtin_expect(clock_gettime(CLOCK_MONOTONIC, &ts) < 0, 0))
		return atomic_load_explicit(&__sonde_trace_now, memory_order_relaxed); /* strict mode: the tick */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Async-signal-safe.  By the instruction: it runs in the sampling
 * handler's first part, on the interrupted (perhaps small) stack, where
 * the variadic syscall(3) would spill its register save area. */
pid_t sys_gettid(void)
{
	return (pid_t)sonde_sys6(SYS_gettid, 0, 0, 0, 0, 0, 0);
}

/* getpid through the seccomp gate, or the pid the collector knows when
 * the target's filter refuses it.  Async-signal-safe. */
pid_t sonde_getpid(void)
{
	long r = sonde_sys6(SYS_getpid, 0, 0, 0, 0, 0, 0);
	return r == -EPERM && g_col.pid ? g_col.pid : (pid_t)r;
}

EXPORT __thread int __sonde_quiet __attribute__((tls_model("initial-exec")));
EXPORT __thread int __sonde_vforked __attribute__((tls_model("initial-exec")));
