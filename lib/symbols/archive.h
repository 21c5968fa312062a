/*
 * archive: keep an experiment analysable after its load objects are
 * rebuilt, upgraded or left behind on another machine.
 *
 * sonde_archive_run() writes EXP/archives/index.xml, one line per load object
 * of map.xml with its recorded build id and the size and mtime of the file
 * on disk, and, by mode, copies of the objects (and of their separate
 * debug files) named by build id, and of their source files.  The layout
 * is described in doc/experiment-format.md ("archives/").
 *
 * The reader side: sonde_archive_find() names the archived copy of an
 * object, which the symbol reader prefers over the recorded path, and
 * sonde_archive_check() says whether the object the analyzer would read is
 * still the one that was loaded (for sonde print -header).
 */
#ifndef SONDE_ARCHIVE_H
#define SONDE_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum sonde_archive_mode {
	SONDE_ARCHIVE_IDS = 0, /* index only: build ids, sizes, mtimes; copies nothing */
	SONDE_ARCHIVE_ON = 1,  /* also the objects and their separate debug files */
	SONDE_ARCHIVE_SRC = 2, /* also the source files their line tables name */
};

struct sonde_archive_stats {
	unsigned objects;  /* distinct file objects (path and build id) in map.xml */
	unsigned archived; /* of those, with a copy in archives/ (new or already there) */
	unsigned changed;  /* whose file on disk no longer has the recorded build id */
	unsigned missing;  /* whose file cannot be read */
	unsigned debug;	   /* separate debug files copied */
	unsigned sources;  /* source files copied */
	uint64_t bytes;	   /* bytes copied by this call */
};

/*
 * Archives the experiment in expdir.  Returns 0 on success, -1 with a
 * one-line message in err when expdir is not an experiment (no log.xml or
 * no map.xml) or archives/ cannot be written.  Objects that cannot be
 * archived (changed, missing, no build id) are not errors: the index says
 * why, and so does a line on notes when notes is not NULL.  st may be NULL.
 * Safe to run again: copies already there (same build id) are kept.
 */
int sonde_archive_run(const char *expdir, int mode, FILE *notes, struct sonde_archive_stats *st,
		      char *err, size_t errlen);

/*
 * The archived copy of the object loaded from path with build id buildid
 * (hex): EXP/archives/BUILDID/BASENAME, or, for a sub-experiment (a
 * directory named _*), the same in its founder's archives/.  Returns 1 and
 * the file name in out when a copy exists, else 0.
 */
int sonde_archive_find(const char *expdir, const char *path, const char *buildid, char *out,
		       size_t outlen);

/*
 * The absolute archives/ directories to search for separate debug files
 * (their .build-id/ trees), joined by ':' and prefixed by ':' (to append
 * to an elfutils debuginfo_path); "" when there are none.
 */
void sonde_archive_debug_dirs(const char *expdir, char *out, size_t outlen);

/*
 * The GNU build id of ELF file path as lowercase hex in hex.  Returns 1
 * when found, 0 when the file has none, -1 when it cannot be read as ELF
 * (then hex holds the reason).
 */
int sonde_file_buildid(const char *path, char *hex, size_t hexlen);

enum sonde_archive_state {
	SONDE_OBJ_ARCHIVED, /* an archived copy will be read */
	SONDE_OBJ_SAME,	    /* the recorded path still holds the recorded build id */
	SONDE_OBJ_CHANGED,  /* the file at the recorded path has another build id */
	SONDE_OBJ_MISSING,  /* no archived copy and the recorded path cannot be read */
	SONDE_OBJ_UNKNOWN,  /* no build id was recorded: nothing to compare */
};

/*
 * Which file the analyzer reads for an object and whether it is the one
 * that was loaded.  file receives the file name (archived copy or path);
 * msg, for CHANGED and MISSING, a sentence saying why.
 */
enum sonde_archive_state sonde_archive_check(const char *expdir, const char *path,
					     const char *buildid, char *file, size_t filelen,
					     char *msg, size_t msglen);

#endif
