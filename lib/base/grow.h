/*
 * grow: the one way the analyzer (lib/, cmd/) makes an array bigger.
 *
 *	if (sonde_grow(&v, &cap, n + 1, sizeof *v, 16) < 0)
 *		return -1;	// out of memory: v and cap are as they were
 *	v[n++] = x;
 *
 * Makes the array *arrp points to (the address of the array's pointer)
 * hold at least need elements of elemsize bytes.  When *cap is short, the
 * capacity doubles, from *cap or from first when *cap is 0, until it holds
 * need (so a run of appends costs amortized O(1) each), the array is
 * realloc'ed and *cap set.  Returns 0, or -1 when the byte size would
 * overflow size_t or memory runs out; then the array and *cap are left as
 * they were, still the caller's to free.
 *
 * Not for the collector (collector/, tracers/): it runs in signal handlers
 * of the target and never calls malloc.
 */
#ifndef SONDE_GROW_H
#define SONDE_GROW_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline int sonde_grow(void *arrp, size_t *cap, size_t need, size_t elemsize, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : first ? first : 1;

	while (nc < need)
		nc = nc > SIZE_MAX / 2 ? need : nc * 2;
	if (elemsize && nc > SIZE_MAX / elemsize)
		return -1;

	void *old, *n;

	memcpy(&old, arrp, sizeof old); /* arrp is a T **: read it without type punning */
	n = realloc(old, nc * elemsize);
	if (!n)
		return -1;
	memcpy(arrp, &n, sizeof n);
	*cap = nc;
	return 0;
}

#endif
