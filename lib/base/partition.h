/*
 * PARTITION_POINT: the binary search of the analyzer's sorted tables
 * (symbols, objects, CU ranges, instructions, sample points).  Internal
 * to lib/.
 */
#ifndef SONDE_PARTITION_H
#define SONDE_PARTITION_H

#include <stddef.h>

/* The first index i in [lo, hi) at which `pred`, an expression in i, is
 * false; hi when it holds throughout.  pred must hold on a prefix of the
 * range and fail after it, as "v[i].key <= x" does on v sorted by key
 * (then the result is the first entry above x). */
#define PARTITION_POINT(lo, hi, i, pred)                          \
	({                                                         \
		size_t pp_lo_ = (lo), pp_hi_ = (hi);               \
		while (pp_lo_ < pp_hi_) {                          \
			size_t i = pp_lo_ + (pp_hi_ - pp_lo_) / 2; \
			if (pred)                                  \
				pp_lo_ = i + 1;                    \
			else                                       \
				pp_hi_ = i;                        \
		}                                                  \
		pp_lo_;                                            \
	})

#endif
