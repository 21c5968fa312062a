/*
 * The sonde collector API: mark, pause and stop data collection from
 * inside the program being measured.
 *
 *	#include <sonde/collector.h>
 *	...
 *	sonde_sample("setup done");	// a sample point with a label
 *	sonde_pause();			// record nothing from here ...
 *	sonde_resume();			// ... to here
 *	sonde_terminate();		// stop collecting for the rest of the run
 *
 * Link with libsonde_api (`pkg-config --cflags --libs sonde`).  The
 * functions look for the collector once, at their first call; in a
 * program not run under `sonde collect` they do nothing, so the calls may
 * stay in production builds.  They may be called from any thread, but not
 * from a signal handler (the first call looks the collector up with
 * dlsym).
 *
 * sonde_sample(label): record a sample point now, ending the current
 * sample; `sonde print -samples` shows the label (up to 255 bytes; NULL
 * for none).
 * sonde_pause() / sonde_resume(): while paused, no clock-profile time and
 * no traced event is recorded; sample points still are.  Each records a
 * sample point when it changes the state; a pause while paused or a
 * resume while recording does nothing.
 * sonde_terminate(): stop all data collection for good and finish the
 * experiment; the program runs on.
 */
#ifndef SONDE_COLLECTOR_API_H
#define SONDE_COLLECTOR_API_H

#ifdef __cplusplus
extern "C" {
#endif

void sonde_sample(const char *label);
void sonde_pause(void);
void sonde_resume(void);
void sonde_terminate(void);

#ifdef __cplusplus
}
#endif

#endif
