/*
 * The unit tests' shared harness: each CHECK counts a pass or prints
 * "not ok - GROUP: line N: what"; main() ends with
 *	printf("%d passed, %d failed\n", npass, nfail);
 * Set `group` to name the checks that follow.
 */
#ifndef SONDE_TEST_CHECK_H
#define SONDE_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int npass, nfail;
static const char *group = "";

static inline __attribute__((unused)) void check(int ok, const char *what, int line)
{
	if (ok) {
		npass++;
		return;
	}
	nfail++;
	printf("not ok - %s: line %d: %s\n", group, line, what);
}

#define CHECK(c) check(!!(c), #c, __LINE__)
/* Integers compared as signed (CHECK_I) or unsigned (CHECK_U, also shown
 * in hex, as addresses are). */
#define CHECK_I(a, b)                                                                            \
	do {                                                                                     \
		int64_t a_ = (int64_t)(a), b_ = (int64_t)(b);                                    \
		char m_[256];                                                                    \
		snprintf(m_, sizeof(m_), "%s == %s (%" PRId64 " != %" PRId64 ")", #a, #b, a_, b_); \
		check(a_ == b_, m_, __LINE__);                                                   \
	} while (0)
#define CHECK_U(a, b)                                                                            \
	do {                                                                                     \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                  \
		char m_[256];                                                                    \
		snprintf(m_, sizeof(m_), "%s == %s (%" PRIu64 " != %" PRIu64 ", 0x%" PRIx64 " != 0x%" PRIx64 ")", \
			 #a, #b, a_, b_, a_, b_);                                                \
		check(a_ == b_, m_, __LINE__);                                                   \
	} while (0)
#define CHECK_S(a, b)                                                                            \
	do {                                                                                     \
		const char *a_ = (a), *b_ = (b);                                                 \
		char m_[2600];                                                                   \
		snprintf(m_, sizeof(m_), "%s == \"%s\" (got \"%s\")", #a, b_, a_ ? a_ : "(null)"); \
		check(a_ && !strcmp(a_, b_), m_, __LINE__);                                      \
	} while (0)

#endif
