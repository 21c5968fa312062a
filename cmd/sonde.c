/*
 * sonde: one dispatch table drives lookup, usage and exit status.
 *
 * How to add a command: write `int cmd_NAME(int argc, char **argv)` in
 * cmd/NAME.c (argv[0] is the command name), declare it in cmd/commands.h,
 * and add one row to commands[] below, kept sorted by name.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "agg", cmd_agg, "DTrace-style aggregations over an experiment's events or stdin" },
	{ "archive", cmd_archive, "copy an experiment's load objects (and sources) into it" },
	{ "collect", cmd_collect, "run a program with the collector and record an experiment" },
	{ "export", cmd_export, "write experiments as pprof, folded stacks, speedscope or Chrome trace" },
	{ "gather", cmd_gather, "move MPI ranks' node-local sub-experiments into their founder" },
	{ "kernel", cmd_kernel, "record every CPU's time with the kernel's call stacks (as er_kernel)" },
	{ "merge", cmd_merge, "merge a founder's sub-experiments (MPI ranks) into one experiment" },
	{ "print", cmd_print, "print views of an experiment (er_print style)" },
	{ "report", cmd_report, "write a self-contained HTML report of experiments" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: sonde COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'sonde COMMAND' with no arguments prints the command's usage.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("sonde %s\n", SONDE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		int rc = commands[i].fn(argc - 1, argv + 1);
		/* A report cut short by a full disk or closed pipe must not exit 0. */
		if (fflush(stdout) || ferror(stdout)) {
			if (errno != EPIPE)
				fprintf(stderr, "sonde: error writing output: %s\n", strerror(errno));
			return rc ? rc : 1;
		}
		return rc;
	}
	fprintf(stderr, "sonde: unknown command '%s' (try 'sonde help')\n", argv[1]);
	return 2;
}
