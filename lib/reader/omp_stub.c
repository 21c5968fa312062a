/* TEMPORARY (branch i30-viewmode): no regions until lib/kinds/omp.c of
 * branch i30-regions is merged; removed by that merge. */
#include <stddef.h>

#include "reader/experiment.h"

const struct sonde_omp_region *sonde_exp_omp_regions(const struct sonde_exp *exp, size_t *n)
{
	(void)exp;
	*n = 0;
	return NULL;
}

const struct sonde_omp_region *sonde_exp_omp_region_at(const struct sonde_exp *exp, uint32_t tid, uint64_t time_ns,
							 const struct sonde_omp_itask **itask)
{
	(void)exp, (void)tid, (void)time_ns;
	*itask = NULL;
	return NULL;
}
