/*
 * archive: EXP/archives/ (see archive.h and doc/experiment-format.md).
 *
 * Copies are named by build id, so a copy is valid for exactly one build
 * of an object and never has to be compared again: a second run keeps
 * what is there, and the reader can find a copy from map.xml alone
 * (archives/BUILDID/BASENAME) without reading the index.  Every file is
 * written under a temporary name and renamed, so an interrupted archive
 * leaves no half-copied object that the reader would trust.
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "reader/exptree.h"
#include "symbols/archive.h"
#include "sonde/utf8.h"
#include "base/xmlline.h"

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"
#define MAX_BUILDID_HEX 128 /* 64 bytes; real ones are 20 (SHA-1) or 16 (MD5) */

/* Source files under these come with the system (libc, compiler headers)
 * and are the same on every machine with the same packages. */
static const char *const system_src[] = { "/usr/include/", "/usr/lib/gcc/", "/usr/local/include/" };

struct obj {
	char *path, *buildid; /* buildid NULL when none was recorded */
	const char *status;   /* index status, see doc/experiment-format.md */
	char *file, *debug;   /* archive-relative copies, NULL when none */
	long long size, mtime_ns; /* of the file on disk, -1 when unknown */
};

struct src {
	char *path;  /* as the line table names it */
	char *canon; /* realpath: what is copied, and where (no "..") */
};

struct ctx {
	const char *expdir;
	char adir[PATH_MAX]; /* EXP/archives */
	int mode;
	FILE *notes;
	struct sonde_archive_stats st;
	struct obj *objs;
	size_t nobjs, capobjs;
	struct src *srcs;
	size_t nsrcs, capsrcs;
	char *debug_path; /* elfutils debuginfo_path for finding separate debug files */
	bool oom;
};

static void note(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->notes)
		return;
	fputs("sonde archive: ", c->notes);
	va_start(ap, fmt);
	vfprintf(c->notes, fmt, ap);
	va_end(ap);
	fputc('\n', c->notes);
}

static bool valid_buildid(const char *b)
{
	size_t n = strlen(b);

	/* It becomes a directory name: hex digits only, nothing like "..". */
	if (n < 2 || n > MAX_BUILDID_HEX)
		return false;
	for (const char *p = b; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')))
			return false;
	return true;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* A base name that is safe as one path component. */
static bool valid_base(const char *b)
{
	return *b && strcmp(b, ".") && strcmp(b, "..") && !strchr(b, '/') && strlen(b) < NAME_MAX;
}

static char *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat sb;
	char *buf = NULL;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
		size_t cap = (size_t)sb.st_size + 1, n = 0;
		ssize_t r;

		buf = malloc(cap);
		/* The file may still grow (a running target's map.xml): read
		 * what was there at fstat time. */
		while (buf && n < cap - 1 && (r = read(fd, buf + n, cap - 1 - n)) != 0) {
			if (r < 0) {
				if (errno == EINTR)
					continue;
				free(buf);
				buf = NULL;
				break;
			}
			n += (size_t)r;
		}
		if (buf)
			*len = n;
	} else {
		errno = EINVAL;
	}
	close(fd);
	return buf;
}

/* mkdir -p for a path under c->adir (which exists). */
static int make_dirs(char *path, size_t keep)
{
	for (char *p = path + keep + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		int r = mkdir(path, 0755);
		*p = '/';
		if (r < 0 && errno != EEXIST)
			return -1;
	}
	return 0;
}

/*
 * Copies src to dst (through dst.tmp and a rename).  Keeps an existing dst
 * of the same size: copies are named by build id (or are sources archived
 * before), so an existing one is the same file.  Adds the bytes written.
 */
static int copy_file(struct ctx *c, const char *src, char *dst)
{
	struct stat ss, ds;
	char tmp[PATH_MAX + 16] = "";
	int in = -1, out = -1, rc = -1;

	in = open(src, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not hang us */
	if (in < 0 || fstat(in, &ss) < 0 || !S_ISREG(ss.st_mode))
		goto out;
	if (stat(dst, &ds) == 0 && ds.st_size == ss.st_size) {
		rc = 0;
		goto out;
	}
	if (make_dirs(dst, strlen(c->adir)) < 0)
		goto out;
	snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
	/* Private while it is written; then the original's permission bits
	 * and never more: a source of mode 640 (the line table may name any
	 * file) must not become readable by everyone in the archive. */
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_EXCL, 0600);
	if (out < 0 && errno == EEXIST && unlink(tmp) == 0) /* a stale one */
		out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_EXCL, 0600);
	if (out < 0)
		goto out;
	off_t left = ss.st_size;
	bool plain = false;

	while (left > 0) {
		ssize_t n;

		if (!plain) {
			n = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
			if (n < 0 && (errno == ENOSYS || errno == EXDEV || errno == EINVAL ||
				      errno == EOPNOTSUPP)) {
				plain = true; /* older kernels, some file systems */
				continue;
			}
		} else {
			char buf[65536];

			n = read(in, buf, sizeof(buf) < (size_t)left ? sizeof(buf) : (size_t)left);
			for (ssize_t w = 0, k; n > 0 && w < n; w += k) {
				k = write(out, buf + w, (size_t)(n - w));
				if (k < 0 && errno == EINTR)
					k = 0;
				else if (k <= 0)
					n = -1;
			}
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) /* 0: the file shrank under us */
			goto out;
		left -= n;
	}
	/* The copy keeps the original's mtime (as cp -p): the index of a
	 * later run reports it when the original has changed. */
	struct timespec times[2] = { ss.st_atim, ss.st_mtim };

	futimens(out, times);
	if (fchmod(out, ss.st_mode & 0777) < 0)
		goto out;
	if (close(out) < 0) {
		out = -1;
		goto out;
	}
	out = -1;
	if (rename(tmp, dst) < 0)
		goto out;
	c->st.bytes += (uint64_t)ss.st_size;
	rc = 0;
out:
	if (rc < 0) {
		int e = errno;

		if (out >= 0)
			close(out);
		if (tmp[0])
			unlink(tmp);
		errno = e;
	}
	if (in >= 0)
		close(in);
	return rc;
}

static void hexify(const unsigned char *b, size_t n, char *hex, size_t hexlen)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k + 3 <= hexlen; i++)
		k += (size_t)snprintf(hex + k, hexlen - k, "%02x", b[i]);
	if (hexlen)
		hex[k] = 0;
}

int sonde_file_buildid(const char *path, char *hex, size_t hexlen)
{
	/* O_NONBLOCK: a path in map.xml that now names a FIFO must not hang. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat sb;

	if (fd < 0) {
		snprintf(hex, hexlen, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(hex, hexlen, "not a regular file");
		close(fd);
		return -1;
	}
	elf_version(EV_CURRENT);
	/* Read, not mapped: libelf then reads the headers and the note
	 * alone (three preads), where a mapping of the whole file cost an
	 * mmap and a munmap (a TLB flush) per object: an MPI job's founder
	 * checks 130 objects at the end of every collect. */
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	int rc;

	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(hex, hexlen, "not an ELF file");
		rc = -1;
	} else {
		const void *bits = NULL;
		ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);

		if (n < 0) {
			snprintf(hex, hexlen, "%s", elf_errmsg(-1));
			rc = -1;
		} else if (n == 0) {
			hex[0] = 0;
			rc = 0;
		} else {
			hexify(bits, (size_t)n, hex, hexlen);
			rc = 1;
		}
	}
	elf_end(elf);
	close(fd);
	return rc;
}

/* ---- reading map.xml ---------------------------------------------------- */

static void add_obj(struct ctx *c, const char *path, const char *buildid)
{
	if (buildid && !*buildid)
		buildid = NULL;
	for (size_t i = 0; i < c->nobjs; i++)
		if (!strcmp(c->objs[i].path, path) &&
		    (buildid ? c->objs[i].buildid && !strcasecmp(c->objs[i].buildid, buildid)
			     : !c->objs[i].buildid))
			return;
	if (sonde_grow(&c->objs, &c->capobjs, c->nobjs + 1, sizeof(*c->objs), 16)) {
		c->oom = true;
		return;
	}
	struct obj *o = &c->objs[c->nobjs];

	memset(o, 0, sizeof(*o));
	o->size = o->mtime_ns = -1;
	o->path = strdup(path);
	o->buildid = buildid ? strdup(buildid) : NULL;
	if (!o->path || (buildid && !o->buildid)) {
		free(o->path);
		free(o->buildid);
		c->oom = true;
		return;
	}
	c->nobjs++;
}

/* The file objects loaded according to dir/map.xml.  -1 when it cannot be read. */
static int read_map(struct ctx *c, const char *dir)
{
	char file[PATH_MAX + 16], msg[128];
	size_t len = 0;

	snprintf(file, sizeof(file), "%s/map.xml", dir);
	char *buf = read_file(file, &len);

	if (!buf)
		return -1;
	struct sonde_xml x;
	struct sonde_xml_elem e;
	int r;

	sonde_xml_init(&x, buf, len);
	while ((r = sonde_xml_next(&x, &e, msg, sizeof(msg))) != 0) {
		if (r < 0 || e.kind == SONDE_XML_CLOSE || e.kind == SONDE_XML_OTHER ||
		    strcmp(e.name, "object"))
			continue;
		const char *ev = sonde_xml_attr(&e, "event");
		const char *path = sonde_xml_attr(&e, "path");

		/* Only files: "[vdso]" and the like are not (the vDSO's copy is
		 * already in the experiment, as vdso.so). */
		if ((ev && strcmp(ev, "load")) || !path || path[0] != '/')
			continue;
		add_obj(c, path, sonde_xml_attr(&e, "buildid"));
	}
	free(buf);
	return 0;
}

/* ---- copying ------------------------------------------------------------ */

static int add_src(struct ctx *c, const char *path, const char *canon)
{
	if (sonde_grow(&c->srcs, &c->capsrcs, c->nsrcs + 1, sizeof(*c->srcs), 64))
		return -1;
	struct src *s = &c->srcs[c->nsrcs];

	s->path = strdup(path);
	s->canon = strdup(canon);
	if (!s->path || !s->canon) {
		free(s->path);
		free(s->canon);
		return -1;
	}
	c->nsrcs++;
	return 0;
}

static bool is_system_src(const char *p)
{
	for (size_t i = 0; i < sizeof(system_src) / sizeof(system_src[0]); i++)
		if (!strncmp(p, system_src[i], strlen(system_src[i])))
			return true;
	return false;
}

/* The source files named by the line tables of dw's compilation units. */
static void collect_sources(struct ctx *c, Dwarf *dw)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;

	while (dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0) {
		Dwarf_Files *files;
		size_t nfiles;
		Dwarf_Attribute a;
		const char *comp = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &a));

		if (dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0)
			continue;
		for (size_t i = 0; i < nfiles; i++) {
			const char *name = dwarf_filesrc(files, i, NULL, NULL);
			char full[PATH_MAX], canon[PATH_MAX];
			struct stat sb;

			if (!name || !*name || !strcmp(name, "<built-in>") || !strcmp(name, "???"))
				continue;
			if (name[0] == '/')
				snprintf(full, sizeof(full), "%s", name);
			else if (comp && comp[0] == '/')
				snprintf(full, sizeof(full), "%s/%s", comp, name);
			else
				continue; /* no way to tell where it was */
			/* realpath: the copy's place must not depend on "..". */
			if (!realpath(full, canon) || is_system_src(canon) || stat(canon, &sb) < 0 ||
			    !S_ISREG(sb.st_mode))
				continue;
			bool seen = false;

			for (size_t k = 0; k < c->nsrcs && !seen; k++)
				seen = !strcmp(c->srcs[k].canon, canon);
			if (!seen && add_src(c, full, canon) < 0) {
				c->oom = true;
				return;
			}
		}
	}
}

/* Names an archived copy of o made earlier, with its debug file; its
 * size and mtime (kept from the original by copy_file) become o's. */
static bool existing_copy(struct ctx *c, struct obj *o)
{
	char f[PATH_MAX * 2];
	struct stat fs;
	const char *base = base_name(o->path);

	snprintf(f, sizeof(f), "%s/%s/%s", c->adir, o->buildid, base);
	if (!valid_base(base) || stat(f, &fs) < 0 || !S_ISREG(fs.st_mode))
		return false;
	o->size = (long long)fs.st_size;
	o->mtime_ns = (long long)fs.st_mtim.tv_sec * 1000000000LL + fs.st_mtim.tv_nsec;
	if (!(o->file = strdup(f + strlen(c->adir) + 1)))
		c->oom = true;
	snprintf(f, sizeof(f), "%s/.build-id/%.2s/%s.debug", c->adir, o->buildid, o->buildid + 2);
	if (stat(f, &fs) == 0 && !(o->debug = strdup(f + strlen(c->adir) + 1)))
		c->oom = true;
	return true;
}

/* Copies o and its separate debug file (mode on), and finds its sources
 * (mode src).  o's build id on disk was checked by the caller. */
static void archive_object(struct ctx *c, struct obj *o)
{
	char dst[PATH_MAX];
	const char *base = base_name(o->path);
	int n = snprintf(dst, sizeof(dst), "%s/%s/%s", c->adir, o->buildid, base);

	if (n < 0 || (size_t)n >= sizeof(dst) || !valid_base(base)) {
		o->status = "missing";
		note(c, "'%s': its name is too long to archive", o->path);
		c->st.missing++;
		return;
	}
	if (copy_file(c, o->path, dst) < 0) {
		note(c, "cannot copy '%s' to '%s': %s", o->path, dst, strerror(errno));
		o->status = "missing";
		c->st.missing++;
		return;
	}
	o->status = "archived";
	c->st.archived++;
	o->file = strdup(dst + strlen(c->adir) + 1);
	if (!o->file)
		c->oom = true;

	/* The separate debug file, found as the reader finds it (build id,
	 * then .gnu_debuglink), goes where elfutils looks by build id. */
	Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &c->debug_path,
	};
	Dwfl *dwfl = dwfl_begin(&cb);

	if (!dwfl)
		return;
	Dwfl_Module *m = dwfl_report_elf(dwfl, base, o->path, -1, 0, true);

	dwfl_report_end(dwfl, NULL, NULL);
	Dwarf_Addr bias;
	Dwarf *dw = m ? dwfl_module_getdwarf(m, &bias) : NULL;
	const char *mainfile = NULL, *debugfile = NULL;

	if (m)
		dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	if (debugfile && (!mainfile || strcmp(debugfile, mainfile))) {
		n = snprintf(dst, sizeof(dst), "%s/.build-id/%.2s/%s.debug", c->adir, o->buildid,
			     o->buildid + 2);
		if (n < 0 || (size_t)n >= sizeof(dst)) {
			note(c, "cannot copy the debug file '%s' of '%s': the archive path is too long", debugfile,
			     o->path);
		} else if (copy_file(c, debugfile, dst) < 0) {
			note(c, "cannot copy the debug file '%s' of '%s': %s", debugfile, o->path,
			     strerror(errno));
		} else {
			c->st.debug++;
			o->debug = strdup(dst + strlen(c->adir) + 1);
			if (!o->debug)
				c->oom = true;
		}
	}
	if (c->mode >= SONDE_ARCHIVE_SRC && dw)
		collect_sources(c, dw);
	dwfl_end(dwfl);
}

/* ---- the index ---------------------------------------------------------- */

/* Names are bytes: what is not UTF-8, and control bytes, go as the
 * reversible U+F7XY references of include/sonde/utf8.h. */
static void xml_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		size_t ul = sonde_utf8_len((const unsigned char *)s);

		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if (!ul || (unsigned char)*s < 0x20) {
				fprintf(f, "&#x%X;", SONDE_BYTE_ESCAPE_BASE + (unsigned char)*s);
			} else {
				fwrite(s, 1, ul, f);
				s += ul - 1;
			}
		}
	}
}

static int write_index(struct ctx *c)
{
	static const char *const modes[] = { "ids", "on", "src" };
	char tmp[PATH_MAX + 32], path[PATH_MAX + 32];
	struct timespec now;

	snprintf(path, sizeof(path), "%s/index.xml", c->adir);
	snprintf(tmp, sizeof(tmp), "%s/index.xml.tmp", c->adir);
	FILE *f = fopen(tmp, "w");

	if (!f)
		return -1;
	clock_gettime(CLOCK_REALTIME, &now);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<archive format=\"1\" mode=\"%s\" time=\"%lld\">\n", modes[c->mode],
		(long long)now.tv_sec);
	for (size_t i = 0; i < c->nobjs; i++) {
		const struct obj *o = &c->objs[i];

		fputs("<object path=\"", f);
		xml_str(f, o->path);
		fprintf(f, "\" buildid=\"");
		xml_str(f, o->buildid ? o->buildid : "");
		fprintf(f, "\" size=\"%lld\" mtime_ns=\"%lld\" status=\"%s\"", o->size, o->mtime_ns,
			o->status);
		if (o->file) {
			fputs(" file=\"", f);
			xml_str(f, o->file);
			fputc('"', f);
		}
		if (o->debug) {
			fputs(" debug=\"", f);
			xml_str(f, o->debug);
			fputc('"', f);
		}
		fputs("/>\n", f);
	}
	for (size_t i = 0; i < c->nsrcs; i++) {
		fputs("<source path=\"", f);
		xml_str(f, c->srcs[i].path);
		fputs("\" file=\"src", f);
		xml_str(f, c->srcs[i].canon);
		fputs("\"/>\n", f);
	}
	fputs("</archive>\n", f);
	if (ferror(f) | fclose(f)) {
		unlink(tmp);
		return -1;
	}
	return rename(tmp, path);
}

/* ---- the whole ---------------------------------------------------------- */

static bool is_experiment(const char *dir, char *err, size_t errlen)
{
	struct stat sb;
	char f[PATH_MAX + 16];

	if (stat(dir, &sb) < 0) {
		snprintf(err, errlen, "cannot open experiment '%s': %s", dir, strerror(errno));
		return false;
	}
	if (!S_ISDIR(sb.st_mode)) {
		snprintf(err, errlen, "'%s' is not an experiment (not a directory)", dir);
		return false;
	}
	snprintf(f, sizeof(f), "%s/log.xml", dir);
	if (access(f, F_OK) < 0) {
		snprintf(err, errlen, "'%s' is not an experiment (no log.xml)", dir);
		return false;
	}
	return true;
}

/* The founder archives for its sub-experiments (reader/exptree.h), as the
 * reference says: they have no archives of their own.  A sub-experiment
 * without map.xml has nothing to add. */
static int read_sub(void *arg, const char *path, const char *name, const struct sonde_subexp_kind *k)
{
	read_map(arg, path);
	return 0;
}

static void read_descendants(struct ctx *c)
{
	sonde_subexp_scan(c->expdir, sonde_subexp_kinds, sonde_subexp_nkinds, read_sub, c, NULL, NULL, 0);
}

int sonde_archive_run(const char *expdir, int mode, FILE *notes, struct sonde_archive_stats *st,
		      char *err, size_t errlen)
{
	struct ctx c = { .expdir = expdir, .mode = mode, .notes = notes };
	int rc = -1;

	if (mode < SONDE_ARCHIVE_IDS || mode > SONDE_ARCHIVE_SRC) {
		snprintf(err, errlen, "invalid archive mode %d", mode);
		return -1;
	}
	if (!is_experiment(expdir, err, errlen))
		return -1;
	if (read_map(&c, expdir) < 0) {
		snprintf(err, errlen, "cannot read '%s/map.xml': %s", expdir, strerror(errno));
		goto out;
	}
	read_descendants(&c);
	const char *root = getenv("SONDE_DEBUG_ROOT");

	if (!root || !*root)
		root = DEFAULT_DEBUG_ROOT;
	if (asprintf(&c.debug_path, ":.debug:%s", root) < 0) {
		c.debug_path = NULL;
		c.oom = true;
	}
	if (c.oom) {
		snprintf(err, errlen, "out of memory archiving '%s'", expdir);
		goto out;
	}
	int n = snprintf(c.adir, sizeof(c.adir), "%s/archives", expdir);

	if (n < 0 || (size_t)n >= sizeof(c.adir) - NAME_MAX - MAX_BUILDID_HEX) {
		snprintf(err, errlen, "experiment path '%s' is too long", expdir);
		goto out;
	}
	if (mkdir(c.adir, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create '%s': %s", c.adir, strerror(errno));
		goto out;
	}

	for (size_t i = 0; i < c.nobjs; i++) {
		struct obj *o = &c.objs[i];
		struct stat sb;
		char hex[MAX_BUILDID_HEX + 64];

		c.st.objects++;
		if (stat(o->path, &sb) == 0) {
			o->size = (long long)sb.st_size;
			o->mtime_ns = (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
		}
		if (!strncmp(base_name(o->path), "libsonde_", 9)) {
			/* sonde's own: every view folds its frames away. */
			o->status = "sonde";
			continue;
		}
		if (!o->buildid || !valid_buildid(o->buildid)) {
			o->status = "no-buildid";
			if (mode > SONDE_ARCHIVE_IDS)
				note(&c, "'%s' has no recorded build id; not archived", o->path);
			continue;
		}
		int r = sonde_file_buildid(o->path, hex, sizeof(hex));
		bool same = r > 0 && !strcasecmp(hex, o->buildid);

		if (same && mode >= SONDE_ARCHIVE_ON) {
			archive_object(&c, o);
			continue;
		}
		/* A copy made before (by collect -a on, or an earlier sonde
		 * archive) stays named, even when the file has changed since:
		 * it is the reason to archive. */
		if (existing_copy(&c, o)) {
			o->status = "archived";
			c.st.archived++;
			continue;
		}
		if (same) {
			o->status = "recorded";
		} else if (r < 0) {
			o->status = "missing";
			c.st.missing++;
			note(&c, "cannot read '%s': %s; not archived", o->path, hex);
		} else {
			o->status = "changed";
			c.st.changed++;
			note(&c, "'%s' has changed since the experiment (build id %s, recorded %s); "
				 "not archived",
			     o->path, r ? hex : "none", o->buildid);
		}
		if (!same)
			o->size = o->mtime_ns = -1; /* they would describe another file */
	}

	if (mode >= SONDE_ARCHIVE_SRC) {
		for (size_t i = 0; i < c.nsrcs; i++) {
			char dst[PATH_MAX * 2];

			snprintf(dst, sizeof(dst), "%s/src%s", c.adir, c.srcs[i].canon);
			if (copy_file(&c, c.srcs[i].canon, dst) < 0)
				note(&c, "cannot copy the source file '%s': %s", c.srcs[i].canon,
				     strerror(errno));
			else
				c.st.sources++;
		}
	}
	if (c.oom) {
		snprintf(err, errlen, "out of memory archiving '%s'", expdir);
		goto out;
	}
	if (write_index(&c) < 0) {
		snprintf(err, errlen, "cannot write '%s/index.xml': %s", c.adir, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (st)
		*st = c.st;
	for (size_t i = 0; i < c.nobjs; i++) {
		free(c.objs[i].path);
		free(c.objs[i].buildid);
		free(c.objs[i].file);
		free(c.objs[i].debug);
	}
	free(c.objs);
	for (size_t i = 0; i < c.nsrcs; i++) {
		free(c.srcs[i].path);
		free(c.srcs[i].canon);
	}
	free(c.srcs);
	free(c.debug_path);
	return rc;
}

/* ---- the reader's side -------------------------------------------------- */

/*
 * The archives/ directories of expdir, best first: its own, then, for a
 * sub-experiment (a name of a kind of reader/exptree.h), its founder's.
 * Returns how many (0-2).
 */
static int archive_dirs(const char *expdir, char dirs[2][PATH_MAX])
{
	char d[PATH_MAX];
	size_t n = (size_t)snprintf(d, sizeof(d), "%s", expdir);
	int k = 0;

	if (n >= sizeof(d))
		return 0;
	while (n > 1 && d[n - 1] == '/')
		d[--n] = 0;
	snprintf(dirs[k++], PATH_MAX, "%.*s/archives", PATH_MAX - 10, d);
	char *slash = strrchr(d, '/');
	const char *base = slash ? slash + 1 : d;

	if (sonde_subexp_kind_of(base)) {
		if (slash == d)
			snprintf(dirs[k++], PATH_MAX, "/archives");
		else if (slash) {
			*slash = 0;
			snprintf(dirs[k++], PATH_MAX, "%.*s/archives", PATH_MAX - 10, d);
		} else {
			snprintf(dirs[k++], PATH_MAX, "../archives");
		}
	}
	return k;
}

int sonde_archive_find(const char *expdir, const char *path, const char *buildid, char *out,
		       size_t outlen)
{
	char dirs[2][PATH_MAX];
	const char *base = path ? base_name(path) : "";

	if (!buildid || !valid_buildid(buildid) || !valid_base(base))
		return 0;
	int k = archive_dirs(expdir, dirs);

	for (int i = 0; i < k; i++) {
		int n = snprintf(out, outlen, "%s/%s/%s", dirs[i], buildid, base);

		if (n > 0 && (size_t)n < outlen && access(out, R_OK) == 0)
			return 1;
	}
	if (outlen)
		out[0] = 0;
	return 0;
}

void sonde_archive_debug_dirs(const char *expdir, char *out, size_t outlen)
{
	char dirs[2][PATH_MAX], abs[PATH_MAX];
	size_t used = 0;
	int k = archive_dirs(expdir, dirs);

	if (outlen)
		out[0] = 0;
	for (int i = 0; i < k; i++) {
		/* elfutils uses only absolute entries for build-id lookups. */
		if (!realpath(dirs[i], abs))
			continue;
		int n = snprintf(out + used, outlen - used, ":%s", abs);

		if (n < 0 || (size_t)n >= outlen - used) {
			out[used] = 0;
			return;
		}
		used += (size_t)n;
	}
}

enum sonde_archive_state sonde_archive_check(const char *expdir, const char *path,
					     const char *buildid, char *file, size_t filelen,
					     char *msg, size_t msglen)
{
	char hex[MAX_BUILDID_HEX + 64];

	if (msglen)
		msg[0] = 0;
	if (buildid && !*buildid)
		buildid = NULL;
	if (sonde_archive_find(expdir, path, buildid, file, filelen))
		return SONDE_OBJ_ARCHIVED;
	snprintf(file, filelen, "%s", path);
	if (!buildid)
		return SONDE_OBJ_UNKNOWN;
	int r = sonde_file_buildid(path, hex, sizeof(hex));

	if (r < 0) {
		snprintf(msg, msglen, "cannot read '%s' (%s), and the experiment has no archived copy",
			 path, hex);
		return SONDE_OBJ_MISSING;
	}
	if (r == 0 || strcasecmp(hex, buildid)) {
		snprintf(msg, msglen,
			 "'%s' has changed since the experiment (build id %s, recorded %s), and the "
			 "experiment has no archived copy",
			 path, r ? hex : "none", buildid);
		return SONDE_OBJ_CHANGED;
	}
	return SONDE_OBJ_SAME;
}
