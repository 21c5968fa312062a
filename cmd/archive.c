/*
 * sonde archive [-a on|src|off] EXPERIMENT: copy what the analysis needs
 * into EXPERIMENT/archives/ (see lib/symbols/archive.h).  The explicit command
 * defaults to -a on (copies of the load objects): whoever runs it by hand
 * wants the experiment to survive a rebuild, which the ids-only index that
 * sonde collect writes by default does not achieve.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "symbols/archive.h"
#include "commands.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: sonde archive [-a on|src|off] EXPERIMENT\n"
		   "\n"
		   "  -a on   copy the load objects (and their separate debug files) into\n"
		   "          EXPERIMENT/archives/, named by build id (the default)\n"
		   "  -a src  also copy the source files their line tables name\n"
		   "  -a off  only record each load object's build id, size and mtime\n"
		   "\n"
		   "sonde print then reads the archived copy whose build id matches the\n"
		   "recorded one, so the experiment stays analysable after a rebuild.\n");
}

int cmd_archive(int argc, char **argv)
{
	int mode = SONDE_ARCHIVE_ON, i = 1;

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (strcmp(argv[i], "-a")) {
			fprintf(stderr, "sonde archive: unknown option '%s'\n", argv[i]);
			return 2;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "sonde archive: missing value for option '-a'\n");
			return 2;
		}
		const char *v = argv[++i];

		if (!strcmp(v, "on"))
			mode = SONDE_ARCHIVE_ON;
		else if (!strcmp(v, "src"))
			mode = SONDE_ARCHIVE_SRC;
		else if (!strcmp(v, "off"))
			mode = SONDE_ARCHIVE_IDS;
		else {
			fprintf(stderr, "sonde archive: invalid -a value (on, src or off) '%s'\n", v);
			return 2;
		}
	}
	if (argc - i != 1) {
		fprintf(stderr, "sonde archive: %s\n",
			i >= argc ? "no experiment given" : "one experiment at a time");
		return 2;
	}
	char err[512];
	struct sonde_archive_stats st;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (sonde_archive_run(argv[i], mode, stderr, &st, err, sizeof(err)) < 0) {
		fprintf(stderr, "sonde archive: %s\n", err);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%s: %u load objects, %u archived, %u changed, %u missing; %u debug files, "
	       "%u source files; %.1f KiB copied in %.3f s\n",
	       argv[i], st.objects, st.archived, st.changed, st.missing, st.debug, st.sources,
	       (double)st.bytes / 1024,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
	/* Objects that could not be archived were reported; the experiment may
	 * still be usable, but the user asked for copies and did not get them
	 * all. */
	return mode > SONDE_ARCHIVE_IDS && (st.changed || st.missing) ? 1 : 0;
}
