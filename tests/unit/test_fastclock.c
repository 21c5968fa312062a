/*
 * The collector's fast clock (collector/fastclock.c): its arithmetic
 * exactly, and its answers against CLOCK_MONOTONIC read around each of
 * them, on this machine, for 300 ms of calls with pauses longer than an
 * anchor's life among them: each answer within 5 us of the readings
 * around it (the error the clock allows: half a microsecond of the
 * kernel's frequency correction over an anchor's millisecond, a few
 * nanoseconds of the scale's, the anchor's own reading), and a thread's
 * answers never decreasing.  Where the TSC is not a clock the fast clock
 * is now_ns and the same checks hold; the last line before the count says
 * which was tested.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "fastclock.h"

#include "check.h"

/* What the collector's other files give xfmt.c and sysgate.c. */
struct collector_state g_col;
_Atomic uint64_t __sonde_trace_now;
void log_event_text(const char *kind, const char *text)
{
	(void)kind;
	(void)text;
}

static void arithmetic(void)
{
	group = "arithmetic";
	/* 1 s in 2.5e9 ticks: 0.4 ns a tick, << 32, rounded down */
	CHECK_U(fc_scale(1000000000ull, 2500000000ull), 1717986918ull);
	CHECK_U(fc_scale(1000000000ull, 1000000000ull), 1ull << 32);
	CHECK_U(fc_scale(UINT64_MAX, 1), UINT64_MAX); /* saturates */
	uint64_t m = fc_scale(1000000000ull, 2500000000ull), v = 0;
	CHECK(fc_apply(5000, 1000, 1000, m, 1000000, &v));
	CHECK_U(v, 5000);
	CHECK(fc_apply(5000, 1000, 1000 + 2500, m, 1000000, &v)); /* 2500 ticks: 999.99.. ns */
	CHECK_U(v, 5000 + 999);
	CHECK(!fc_apply(5000, 1000, 999, m, 1000000, &v));		      /* before the anchor */
	CHECK(!fc_apply(5000, 1000, 1000 + 2500000001ull, m, 1000000000, &v)); /* the window's end */
	CHECK(fc_apply(5000, 1000, 1000 + 2499999990ull, m, 1000000000, &v));
	CHECK(v < 5000 + 1000000000ull && v > 5000 + 999999990ull);
	CHECK(!fc_apply(5000, 0, UINT64_MAX, UINT64_MAX, 1000000, &v)); /* no overflow */
}

static void against_the_clock(void)
{
	group = "against CLOCK_MONOTONIC";
	const uint64_t tol = 5000;
	uint64_t start = now_ns(), last = 0, worst = 0, n = 0;
	int outside = 0, back = 0;
	while (now_ns() - start < 300000000ull) {
		uint64_t a = now_ns(), f = fast_now_ns(), b = now_ns();
		if (f + tol < a || f > b + tol) {
			if (outside++ < 5)
				printf("# answer %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "] by more than %" PRIu64
				       " ns\n",
				       f, a, b, tol);
		}
		uint64_t off = f < a ? a - f : f > b ? f - b : 0;
		if (off > worst)
			worst = off;
		back += f < last;
		last = f;
		/* pauses longer than an anchor's life, now and then */
		if (++n % 20000 == 0) {
			struct timespec ts = { 0, 1500000 };
			nanosleep(&ts, NULL);
		}
	}
	CHECK_I(outside, 0);
	CHECK_I(back, 0);
	CHECK(n > 1000);
	printf("# %" PRIu64 " answers, the farthest %" PRIu64 " ns outside the readings around it\n", n, worst);
}

int main(void)
{
	arithmetic();
	/* whether this machine's TSC is used: a fast answer costs no
	 * clock read, so many of them take less time than as many reads */
	for (int i = 0; i < 1000; i++)
		fast_now_ns();
	struct timespec d = { 0, 20000000 };
	nanosleep(&d, NULL); /* past the scale's shortest baseline */
	against_the_clock();
	printf("# %s\n", fast_clock_on() ? "the TSC was used" : "the TSC is not a clock here: now_ns was");
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
