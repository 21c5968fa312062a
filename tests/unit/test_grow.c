/*
 * sonde_grow (lib/base/grow.h), the analyzer's one array growth helper:
 * doubling from the first capacity, appends keep their elements, a byte
 * size that overflows size_t fails and leaves the array as it was.
 */
#include <stdint.h>
#include <stdlib.h>

#include "base/grow.h"
#include "check.h"

int main(void)
{
	group = "grow";
	int *v = NULL;
	size_t cap = 0;

	CHECK_I(sonde_grow(&v, &cap, 0, sizeof *v, 16), 0); /* nothing needed: nothing done */
	CHECK(v == NULL);
	CHECK_U(cap, 0);
	for (int i = 0; i < 1000; i++) {
		CHECK_I(sonde_grow(&v, &cap, (size_t)i + 1, sizeof *v, 16), 0);
		v[i] = i;
	}
	CHECK_U(cap, 1024); /* 16, 32, ... 1024 */
	int same = 1;

	for (int i = 0; i < 1000; i++)
		same &= v[i] == i;
	CHECK(same);
	CHECK_I(sonde_grow(&v, &cap, 1024, sizeof *v, 16), 0);
	CHECK_U(cap, 1024);
	CHECK_I(sonde_grow(&v, &cap, 5000, sizeof *v, 16), 0); /* doubles until it holds need */
	CHECK_U(cap, 8192);

	group = "grow overflow";
	int *old = v;

	CHECK_I(sonde_grow(&v, &cap, SIZE_MAX / 2, sizeof *v, 16), -1);
	CHECK(v == old);
	CHECK_U(cap, 8192);
	CHECK_I(v[999], 999);
	free(v);

	group = "grow first";
	char *s = NULL;
	size_t scap = 0;

	CHECK_I(sonde_grow(&s, &scap, 3, 1, 0), 0); /* first 0 is taken as 1 */
	CHECK_U(scap, 4);
	free(s);

	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
