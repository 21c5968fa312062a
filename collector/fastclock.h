/*
 * The fast clock's arithmetic (fastclock.c), pure, for its unit test.
 */
#ifndef SONDE_COLLECTOR_FASTCLOCK_H
#define SONDE_COLLECTOR_FASTCLOCK_H

#include <stdbool.h>
#include <stdint.h>

/* CLOCK_MONOTONIC, by the TSC from a per-thread anchor where the TSC is a
 * clock, else now_ns.  Not async-signal-safe (see fastclock.c). */
uint64_t fast_now_ns(void);
/* Whether it answers by the TSC (a scale is known). */
bool fast_clock_on(void);

/* Nanoseconds a TSC tick, << 32: ns nanoseconds took ticks ticks (ticks
 * > 0).  Saturates rather than wraps. */
static inline uint64_t fc_scale(uint64_t ns, uint64_t ticks)
{
	unsigned __int128 m = ((unsigned __int128)ns << 32) / ticks;
	return m > UINT64_MAX ? UINT64_MAX : (uint64_t)m;
}

/* The time at TSC now from an anchor (anchor_ns at anchor_tsc) and the
 * scale, into *out; false when now is before the anchor or window
 * nanoseconds or more after it (then the anchor is too old to answer). */
static inline bool fc_apply(uint64_t anchor_ns, uint64_t anchor_tsc, uint64_t now, uint64_t mult, uint64_t window,
			    uint64_t *out)
{
	if (now < anchor_tsc)
		return false;
	unsigned __int128 d = ((unsigned __int128)(now - anchor_tsc) * mult) >> 32;
	if (d >= window)
		return false;
	*out = anchor_ns + (uint64_t)d;
	return true;
}

#endif
