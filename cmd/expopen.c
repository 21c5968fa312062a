/*
 * Opening experiments as the analysis commands do (sonde print, export,
 * report, agg): the reader's tree (reader/exptree.h), its messages said on
 * stderr as "CMD: ...", see commands.h.
 */
#include <stdio.h>

#include "commands.h"
#include "reader/exptree.h"

static void say(void *arg, const char *msg)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s\n", (const char *)arg, msg);
}

int cmd_open_experiment(const char *cmd, const char *path, struct sonde_exp_tree *t, unsigned flags)
{
	return sonde_exp_tree_add(t, path, flags, say, (void *)cmd);
}
