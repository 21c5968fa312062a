/*
 * Output captured in memory, for the unit tests of views on synthetic
 * experiments: out_open() a stream, out_close() it and get what was
 * written with every occurrence of the test's directory replaced by DIR
 * (so the expected text does not depend on mkdtemp's name), shown when
 * the test runs with its `show` flag; CHECK_TEXT compares it (check.h's
 * counts).  The includer defines, before including this:
 *	static bool show;
 *	static char tmpdir[];	(the experiments' directory)
 */
#ifndef SONDE_TEST_CAPTURE_H
#define SONDE_TEST_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static char *outbuf;
static size_t outlen;

static __attribute__((unused)) FILE *out_open(void)
{
	free(outbuf);
	outbuf = NULL;
	return open_memstream(&outbuf, &outlen);
}

static __attribute__((unused)) const char *out_close(FILE *f)
{
	fclose(f);
	size_t n = strlen(tmpdir);
	char *p;

	while ((p = strstr(outbuf, tmpdir))) {
		memcpy(p, "DIR", 3);
		memmove(p + 3, p + n, strlen(p + n) + 1);
	}
	if (show)
		printf("# ---\n%s", outbuf);
	return outbuf;
}

#define CHECK_TEXT(got, want) check_text(got, want, __LINE__)
static __attribute__((unused)) void check_text(const char *got, const char *want, int line)
{
	if (got && !strcmp(got, want)) {
		npass++;
		return;
	}
	nfail++;
	printf("not ok - %s: line %d: text differs\n# --- want:\n%s# --- got:\n%s# ---\n", group, line, want,
	       got ? got : "(null)\n");
}

#endif
