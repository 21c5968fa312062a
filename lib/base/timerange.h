/*
 * timerange: a range of seconds since an experiment's start, as sonde
 * print's -time / -time_select, sonde export's and sonde report's -time
 * and sonde agg's time_select() take it.
 */
#ifndef SONDE_TIMERANGE_H
#define SONDE_TIMERANGE_H

#include <stddef.h>
#include <stdint.h>

/* Parses a time range of seconds "START-END", "START-" or "-END" (up to
 * nine decimals, read exactly) into nanoseconds since the experiment's
 * start; end 0 for none.  Returns 0, or -1 with a message. */
int sonde_time_parse(const char *s, uint64_t *start_ns, uint64_t *end_ns, char *err, size_t errlen);

#endif
