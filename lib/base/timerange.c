/* A range of seconds (timerange.h). */
#include <stdio.h>

#include "base/timerange.h"

/* Seconds with up to nine decimals, exactly, into ns: the end of the
 * number in *end.  -1 when there is no number or it is too large. */
static int parse_sec(const char *s, const char **end, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	int digits = 0, fd = 0;

	while (*s >= '0' && *s <= '9') {
		if (sec > 1000000000ull)
			return -1;
		sec = sec * 10 + (uint64_t)(*s++ - '0');
		digits++;
	}
	if (*s == '.') {
		s++;
		while (*s >= '0' && *s <= '9') {
			if (fd < 9) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				fd++;
			} else if (*s != '0') {
				return -1; /* below a nanosecond */
			}
			s++;
			digits++;
		}
	}
	if (!digits)
		return -1;
	while (fd < 9) {
		frac *= 10;
		fd++;
	}
	*ns = sec * 1000000000ull + frac;
	*end = s;
	return 0;
}

int sonde_time_parse(const char *s, uint64_t *start_ns, uint64_t *end_ns, char *err, size_t errlen)
{
	const char *p = s, *e;
	uint64_t a = 0, b = 0;

	if (*p != '-') {
		if (parse_sec(p, &e, &a) < 0)
			goto bad;
		p = e;
	}
	if (*p++ != '-')
		goto bad;
	if (*p) {
		if (parse_sec(p, &e, &b) < 0 || *e)
			goto bad;
		if (b <= a) {
			snprintf(err, errlen, "time range '%s' ends before it starts", s);
			return -1;
		}
	} else if (p - 1 == s) {
		goto bad; /* "-" alone */
	}
	*start_ns = a;
	*end_ns = b;
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not a time range in seconds (START-END, START- or -END, like 0.5-1.25)", s);
	return -1;
}
