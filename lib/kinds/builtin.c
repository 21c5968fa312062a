/*
 * The collector's own files that are no kind of events (include/sonde/kinds.h):
 * the call stacks and the sample points.  The reader reads them itself
 * (reader/experiment.c), and -dump has its own dumps of them
 * (views/view_dump.c): their modules are empty.  The clock profile's is
 * lib/kinds/profile.c.
 */
#include "base/kindmod.h"

const struct sonde_kind_module sonde_kind_module_STACKS = { 0 };
const struct sonde_kind_module sonde_kind_module_OVERVIEW = { 0 };
