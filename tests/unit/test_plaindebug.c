/*
 * Unit test of lib/symbols/plaindebug.c, the uncompressed copies of
 * compressed DWARF that srcinfo gives libdw, on tests/fixtures/srclines.c
 * built -O2 -g at test time and compressed by objcopy
 * (--compress-debug-sections=zlib, as Debian's debug packages are):
 *
 *   - the copy has every section of the uncompressed build, byte for byte,
 *     its program headers, and the offsets of the sections before the
 *     first compressed one;
 *   - a file with nothing compressed is given back as it is; a damaged
 *     zlib stream too (libdw then says what it says); another build id is
 *     refused;
 *   - the cache: one copy per file, used again (the same inode), a copy cut
 *     short replaced, copies unused for 30 days and abandoned partial ones
 *     removed when a copy is written, "off" and an unwritable directory
 *     giving a memory file;
 *   - srcobj (lib/symbols/srcinfo.c) reads the copy, not the compressed
 *     file (checked in /proc/self/maps), for a file's own DWARF and for a
 *     separate debug file found by build id, and answers every address of
 *     caller_a as it does from the uncompressed build.
 */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "symrange.h"
#include "symbols/plaindebug.h"
#include "symbols/srcinfo.h"

static char dir[] = "/tmp/sonde-plaindebug.XXXXXX";
static char *debug_path = NULL;
static const Dwfl_Callbacks cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debug_path,
};

static int sh(const char *fmt, const char *a, const char *b)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	return system(cmd);
}

static char *path(const char *name)
{
	static char buf[4][600];
	static int k;
	char *p = buf[k++ % 4];

	snprintf(p, 600, "%s/%s", dir, name);
	return p;
}

/* Whether the sections of a (the copy) are b's (uncompressed) byte for
 * byte, and the sections of a before the first compressed one of z, and
 * its program headers, sit where z's do. */
static void same_elf(int afd, const char *b, const char *z)
{
	int bfd = open(b, O_RDONLY), zfd = open(z, O_RDONLY);
	Elf *ea = elf_begin(afd, ELF_C_READ, NULL), *eb = elf_begin(bfd, ELF_C_READ, NULL),
	    *ez = elf_begin(zfd, ELF_C_READ, NULL);
	size_t na = 0, nb = 0, sa = 0, sb = 0, pa = 0, pz = 0;

	CHECK(ea && eb && ez);
	if (!ea || !eb || !ez)
		goto out;
	CHECK(elf_getshdrnum(ea, &na) == 0 && elf_getshdrnum(eb, &nb) == 0 && na == nb);
	CHECK(elf_getshdrstrndx(ea, &sa) == 0 && elf_getshdrstrndx(eb, &sb) == 0 && sa == sb);
	uint64_t first = UINT64_MAX;

	for (size_t i = 1; i < nb; i++) {
		GElf_Shdr s;

		if (gelf_getshdr(elf_getscn(ez, i), &s) && (s.sh_flags & SHF_COMPRESSED) && s.sh_offset < first)
			first = s.sh_offset;
	}
	CHECK(first != UINT64_MAX); /* objcopy compressed something */
	int bad_bytes = 0, bad_hdr = 0, bad_off = 0, compressed = 0;

	for (size_t i = 1; i < na && i < nb; i++) {
		GElf_Shdr x, y, w;

		if (!gelf_getshdr(elf_getscn(ea, i), &x) || !gelf_getshdr(elf_getscn(eb, i), &y) ||
		    !gelf_getshdr(elf_getscn(ez, i), &w)) {
			bad_hdr++;
			continue;
		}
		compressed += (x.sh_flags & SHF_COMPRESSED) != 0;
		if (strcmp(elf_strptr(ea, sa, x.sh_name), elf_strptr(eb, sb, y.sh_name)) || x.sh_type != y.sh_type ||
		    x.sh_flags != y.sh_flags || x.sh_size != y.sh_size || x.sh_addr != y.sh_addr ||
		    x.sh_link != y.sh_link || x.sh_info != y.sh_info)
			bad_hdr++;
		if (w.sh_offset < first && x.sh_offset != w.sh_offset)
			bad_off++;
		if (x.sh_type == SHT_NOBITS || x.sh_size != y.sh_size)
			continue;
		Elf_Data *dx = elf_rawdata(elf_getscn(ea, i), NULL), *dy = elf_rawdata(elf_getscn(eb, i), NULL);

		if (x.sh_size && (!dx || !dy || dx->d_size != dy->d_size || memcmp(dx->d_buf, dy->d_buf, dx->d_size)))
			bad_bytes++;
	}
	CHECK_I(bad_hdr, 0);
	CHECK_I(bad_bytes, 0);
	CHECK_I(bad_off, 0);
	CHECK_I(compressed, 0);
	CHECK(elf_getphdrnum(ea, &pa) == 0 && elf_getphdrnum(ez, &pz) == 0 && pa == pz && pa > 0);
	int bad_ph = 0;

	for (size_t i = 0; i < pa && i < pz; i++) {
		GElf_Phdr x, y;

		if (!gelf_getphdr(ea, (int)i, &x) || !gelf_getphdr(ez, (int)i, &y) || memcmp(&x, &y, sizeof(x)))
			bad_ph++;
	}
	CHECK_I(bad_ph, 0);
out:
	if (ea)
		elf_end(ea);
	if (eb)
		elf_end(eb);
	if (ez)
		elf_end(ez);
	close(bfd);
	close(zfd);
}

/* The regular files in the cache's directory: their number; the first's
 * name into first. */
static int cache_files(const char *cdir, char *first, size_t len)
{
	char cmd[800];

	snprintf(cmd, sizeof(cmd), "ls '%s/debug' 2>/dev/null", cdir);
	FILE *p = popen(cmd, "r");
	char line[600];
	int n = 0;

	while (p && fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = 0;
		if (!n && first)
			snprintf(first, len, "%s/debug/%s", cdir, line);
		n++;
	}
	if (p)
		pclose(p);
	return n;
}

static int fd_of(const char *p)
{
	return open(p, O_RDONLY | O_CLOEXEC);
}

/* Whether sonde_plain_debug() gives back a copy of z whose bytes at
 * offset `at` (shell arithmetic of $o and $n, the offset and size of the
 * compressed .debug_info) are what the shell command `bytes` prints, as it
 * is: 0 when it does, 1 when not, -1 when the copy cannot be made. */
static int damaged(const char *z, const char *at, const char *bytes)
{
	char cmd[1600], bad[700];

	snprintf(bad, sizeof(bad), "%s.bad", z);
	snprintf(cmd, sizeof(cmd),
		 "cp '%s' '%s' && set -- $(readelf -SW '%s' | sed 's/\\[ */[/' | "
		 "awk '$2 == \".debug_info\" { print $5, $6 }') && o=$1 n=$2 && %s | "
		 "dd of='%s' bs=1 seek=$((%s)) conv=notrunc 2>/dev/null",
		 z, bad, z, bytes, bad, at);
	if (system(cmd) != 0)
		return -1;
	int fd = fd_of(bad), r = sonde_plain_debug(fd, NULL, NULL, 0);

	if (r >= 0)
		close(r);
	if (r != fd && fd >= 0)
		close(fd);
	return r != fd;
}

/* Whether /proc/self/maps has a mapping of a file whose name holds s. */
static int mapped(const char *s)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1200];
	int found = 0;

	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, s) != NULL;
	if (f)
		fclose(f);
	return found;
}

static int str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Whether srcobj answers every address in [lo, hi) of so as of ref. */
static void same_answers(struct srcobj *so, struct srcobj *ref, uint64_t lo, uint64_t hi)
{
	int diff = 0, inl = 0;

	for (uint64_t a = lo; a < hi; a++) {
		const struct sonde_srcframe *x, *y;
		int n = srcobj_lookup(so, a, &x), m = srcobj_lookup(ref, a, &y);

		if (n != m) {
			diff++;
			continue;
		}
		for (int i = 0; i < n; i++) {
			diff += !str_eq(x[i].name, y[i].name) || !str_eq(x[i].file, y[i].file) || x[i].line != y[i].line ||
				x[i].inlined != y[i].inlined;
			inl += x[i].inlined;
		}
	}
	CHECK_I(diff, 0);
	CHECK(inl > 0); /* caller_a has inlined code: the lookups reach the DWARF */
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	elf_version(EV_CURRENT);
	char *prog = strdup(path("prog")), *progz = strdup(path("prog.z")), *cache = strdup(path("cache"));

	/* (run from the source tree's top, as tests/run.sh does) */
	if (sh("cc -O2 -g -o '%s' tests/fixtures/srclines.c", prog, "") ||
	    sh("objcopy --compress-debug-sections=zlib '%s' '%s'", prog, progz)) {
		printf("not ok - cannot build and compress tests/fixtures/srclines.c\n0 passed, 1 failed\n");
		return 1;
	}

	group = "the copy";
	setenv("SONDE_CACHE_DIR", "off", 1);
	int fd = fd_of(progz);
	bool has = false;
	int cfd = sonde_plain_debug(fd, &has, NULL, 0);

	CHECK(cfd >= 0 && cfd != fd);
	CHECK(has);
	char link[600] = "", proc[64];
	ssize_t ll;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", cfd);
	ll = readlink(proc, link, sizeof(link) - 1);
	link[ll > 0 ? ll : 0] = 0;
	CHECK(strstr(link, "/memfd:") == link); /* "off": nothing on disk */
	CHECK_I(cache_files(cache, NULL, 0), 0);
	same_elf(cfd, prog, progz);
	close(cfd);

	group = "nothing to copy";
	fd = fd_of(prog);
	CHECK_I(sonde_plain_debug(fd, &has, NULL, 0), fd);
	CHECK(has);
	close(fd);
	sh("objcopy --strip-debug '%s' '%s'", prog, path("nodebug"));
	fd = fd_of(path("nodebug"));
	CHECK_I(sonde_plain_debug(fd, &has, NULL, 0), fd);
	CHECK(!has);
	close(fd);
	fd = fd_of("tests/fixtures/srclines.c"); /* not ELF */
	CHECK_I(sonde_plain_debug(fd, &has, NULL, 0), fd);
	close(fd);
	CHECK_I(sonde_plain_debug(-1, &has, NULL, 0), -1);

	group = "another build id";
	fd = fd_of(progz);
	CHECK_I(sonde_plain_debug(fd, NULL, "\x01\x02\x03\x04", 4), -1);
	CHECK(fcntl(fd, F_GETFD) < 0); /* closed */

	group = "a damaged zlib stream";
	/* garbage in the middle of the compressed .debug_info */
	CHECK_I(damaged(progz, "0x$o + 0x$n / 2", "head -c 64 /dev/zero | tr '\\0' '\\377'"), 0);
	/* a size in the header (Elf64_Chdr's ch_size, 8 bytes in) of 2^56:
	 * not allocated, the file given back */
	CHECK_I(damaged(progz, "0x$o + 15", "printf '\\001'"), 0);

	group = "the cache";
	setenv("SONDE_CACHE_DIR", cache, 1);
	char entry[800] = "", entry2[800] = "";
	struct stat st1, st2;

	cfd = sonde_plain_debug(fd_of(progz), NULL, NULL, 0);
	CHECK_I(cache_files(cache, entry, sizeof(entry)), 1);
	CHECK(stat(entry, &st1) == 0 && fstat(cfd, &st2) == 0 && st1.st_ino == st2.st_ino);
	same_elf(cfd, prog, progz);
	close(cfd);
	/* used again, not made again */
	cfd = sonde_plain_debug(fd_of(progz), NULL, NULL, 0);
	CHECK_I(cache_files(cache, entry2, sizeof(entry2)), 1);
	CHECK(!strcmp(entry, entry2) && fstat(cfd, &st2) == 0 && st1.st_ino == st2.st_ino);
	close(cfd);
	/* cut short: made again */
	CHECK(truncate(entry, st1.st_size / 2) == 0);
	cfd = sonde_plain_debug(fd_of(progz), NULL, NULL, 0);
	CHECK(stat(entry, &st2) == 0 && st2.st_size == st1.st_size);
	same_elf(cfd, prog, progz);
	close(cfd);
	/* a new copy (the file changed: its time) removes those unused for
	 * 30 days and partial ones abandoned for an hour, not the others */
	sh("touch -d '40 days ago' '%s/debug/old.debug' && touch -d '2 hours ago' '%s/debug/tmp-abcdef'", cache,
	   cache);
	sh("touch -d '10 days ago' '%s/debug/recent.debug' && touch '%s'", cache, progz);
	cfd = sonde_plain_debug(fd_of(progz), NULL, NULL, 0);
	close(cfd);
	CHECK(access(path("cache/debug/old.debug"), F_OK) != 0);
	CHECK(access(path("cache/debug/tmp-abcdef"), F_OK) != 0);
	CHECK(access(path("cache/debug/recent.debug"), F_OK) == 0);
	CHECK_I(cache_files(cache, NULL, 0), 3); /* the two copies, recent.debug */
	/* a directory that cannot be made: a memory file */
	setenv("SONDE_CACHE_DIR", prog, 1); /* a file */
	cfd = sonde_plain_debug(fd_of(progz), NULL, NULL, 0);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", cfd);
	ll = readlink(proc, link, sizeof(link) - 1);
	link[ll > 0 ? ll : 0] = 0;
	CHECK(strstr(link, "/memfd:") == link);
	same_elf(cfd, prog, progz);
	close(cfd);

	group = "srcobj reads the copy";
	uint64_t lo = 0, hi = 0;
	char *cache2 = strdup(path("cache2"));

	CHECK(sym_range(prog, "caller_a", &lo, &hi));
	setenv("SONDE_CACHE_DIR", cache2, 1);
	struct srcobj *ref = srcobj_open(prog, &cb), *so = srcobj_open(progz, &cb);

	CHECK(ref && so);
	CHECK(mapped(cache2) && !mapped(progz));
	if (ref && so)
		same_answers(so, ref, lo, hi);
	srcobj_close(so);
	/* a stripped program, its compressed debug file under a root by build id */
	{
		char cmd[2400], id[200] = "";
		FILE *p;

		snprintf(cmd, sizeof(cmd), "readelf -n '%s' | awk '/Build ID/ { print $3 }'", prog);
		p = popen(cmd, "r");
		if (p && fgets(id, sizeof(id), p))
			id[strcspn(id, "\n")] = 0;
		if (p)
			pclose(p);
		CHECK(strlen(id) > 2);
		snprintf(cmd, sizeof(cmd),
			 "mkdir -p '%s/root/.build-id/%.2s' && objcopy --only-keep-debug --compress-debug-sections=zlib "
			 "'%s' '%s/root/.build-id/%.2s/%s.debug' && objcopy --strip-all '%s' '%s/stripped'",
			 dir, id, prog, dir, id, id + 2, prog, dir);
		CHECK(system(cmd) == 0);
		debug_path = strdup(path("root"));
		so = srcobj_open(path("stripped"), &cb);
		CHECK(so != NULL);
		CHECK(so && srcobj_has_lines(so));
		CHECK(mapped(cache2) && !mapped(path("root/.build-id")));
		if (ref && so)
			same_answers(so, ref, lo, hi);
		srcobj_close(so);
	}
	srcobj_close(ref);

	sh("rm -rf '%s'%s", dir, "");
	free(prog);
	free(progz);
	free(cache);
	free(cache2);
	free(debug_path);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
