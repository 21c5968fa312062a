/*
 * The collector's own files as kinds (include/sonde/kinds.h): the clock
 * profile, the call stacks and the sample points.  The reader reads them
 * itself (reader/experiment.c), the model builder turns the profile's
 * samples into the clock metrics (model/profile.c), agg has its profile
 * events (agg/dlang_events.c) and -dump its own dumps of them
 * (views/view_dump.c): their modules are empty.
 */
#include "base/kindmod.h"

const struct sonde_kind_module sonde_kind_module_PROFILE = { 0 };
const struct sonde_kind_module sonde_kind_module_STACKS = { 0 };
const struct sonde_kind_module sonde_kind_module_OVERVIEW = { 0 };
