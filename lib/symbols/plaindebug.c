/* Uncompressed copies of compressed DWARF for libdw: see plaindebug.h. */
#define _GNU_SOURCE
#include "symbols/plaindebug.h"

#include <dirent.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libdeflate.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/safeopen.h"

#define KEEP_SECONDS (30 * 86400) /* an unused copy goes after this */
#define TMP_SECONDS 3600          /* a copy being written for this long was abandoned */
#define CACHE_MAX (2ull << 30)    /* bytes of copies kept at most */
#define MAX_WORKERS 4

/* A compressed section and, once inflated, its contents. */
struct zsec {
	size_t index;
	const unsigned char *in; /* the zlib stream after the Chdr */
	size_t inlen;
	unsigned char *out;
	size_t outlen; /* ch_size */
	uint64_t align;
	bool ok;
};

struct inflate_job {
	struct zsec *secs; /* largest first: the longest job starts first */
	size_t n;
	atomic_size_t next;
};

static void *inflate_worker(void *arg)
{
	struct inflate_job *j = arg;
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	size_t i;

	while (d && (i = atomic_fetch_add(&j->next, 1)) < j->n) {
		struct zsec *z = &j->secs[i];
		size_t got = 0;

		z->ok = libdeflate_zlib_decompress(d, z->in, z->inlen, z->out, z->outlen, &got) ==
				LIBDEFLATE_SUCCESS &&
			got == z->outlen;
	}
	if (d)
		libdeflate_free_decompressor(d);
	return NULL;
}

static int cmp_zsec_size(const void *a, const void *b)
{
	const struct zsec *x = a, *y = b;

	return x->outlen > y->outlen ? -1 : x->outlen < y->outlen;
}

/* Inflates every section of secs, in parallel; false when one fails. */
static bool inflate_all(struct zsec *secs, size_t n)
{
	struct inflate_job j = { .secs = secs, .n = n };
	pthread_t th[MAX_WORKERS - 1];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t want = cpus > 1 ? (size_t)cpus : 1, started = 0;

	if (want > MAX_WORKERS)
		want = MAX_WORKERS;
	if (want > n)
		want = n;
	qsort(secs, n, sizeof(*secs), cmp_zsec_size);
	for (size_t i = 0; i < n; i++) {
		secs[i].out = malloc(secs[i].outlen ? secs[i].outlen : 1);
		if (!secs[i].out)
			return false;
	}
	atomic_init(&j.next, 0);
	/* the calling thread works too, so no thread is needed to finish */
	while (started + 1 < want && pthread_create(&th[started], NULL, inflate_worker, &j) == 0)
		started++;
	inflate_worker(&j);
	for (size_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	for (size_t i = 0; i < n; i++)
		if (!secs[i].ok)
			return false;
	return true;
}

/* The file's compressed sections (zlib, not allocated), into *out; their
 * number, 0 when there are none, or -1 when the file is not one this
 * module copies (then libdw reads it as it is). */
static long find_compressed(Elf *e, struct zsec **out)
{
	size_t shnum, shstrndx, n = 0, cap = 0;
	struct zsec *v = NULL;
	Elf_Scn *scn = NULL;

	*out = NULL;
	if (elf_getshdrnum(e, &shnum) < 0 || elf_getshdrstrndx(e, &shstrndx) < 0 ||
	    shnum >= SHN_LORESERVE || shstrndx >= SHN_LORESERVE)
		return -1;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;

		if (!gelf_getshdr(scn, &sh))
			goto bad;
		if (!(sh.sh_flags & SHF_COMPRESSED) || sh.sh_type == SHT_NOBITS)
			continue;
		if (sh.sh_flags & SHF_ALLOC)
			goto bad;
		Elf_Data *raw = elf_rawdata(scn, NULL);
		size_t hdr = gelf_getclass(e) == ELFCLASS32 ? sizeof(Elf32_Chdr) : sizeof(Elf64_Chdr);

		/* deflate expands 1,032 times at most: a larger size is damage,
		 * not a reason to allocate it */
		if (!raw || raw->d_size < hdr || !gelf_getchdr(scn, &ch) || ch.ch_type != ELFCOMPRESS_ZLIB ||
		    ch.ch_size > (uint64_t)(raw->d_size - hdr) * 1032 + 64)
			goto bad;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			struct zsec *nv = realloc(v, cap * sizeof(*v));

			if (!nv)
				goto bad;
			v = nv;
		}
		v[n++] = (struct zsec){ .index = elf_ndxscn(scn),
					.in = (const unsigned char *)raw->d_buf + hdr,
					.inlen = raw->d_size - hdr,
					.outlen = ch.ch_size,
					.align = ch.ch_addralign };
	}
	*out = v;
	return (long)n;
bad:
	free(v);
	return -1;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return a > 1 ? (x + a - 1) / a * a : x;
}

struct secplace {
	size_t index;
	uint64_t off;
};

static int cmp_place(const void *a, const void *b)
{
	const struct secplace *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static struct zsec *zsec_of(struct zsec *z, size_t n, size_t index)
{
	for (size_t i = 0; i < n; i++)
		if (z[i].index == index)
			return &z[i];
	return NULL;
}

/* Writes e, with the inflated sections z, to ofd; false on any failure. */
static bool write_plain(Elf *e, struct zsec *z, size_t nz, int ofd)
{
	GElf_Ehdr eh;
	size_t shnum, phnum;
	struct secplace *order = NULL;
	Elf *o = NULL;
	bool ok = false;

	if (!gelf_getehdr(e, &eh) || elf_getshdrnum(e, &shnum) < 0 || elf_getphdrnum(e, &phnum) < 0)
		return false;
	order = calloc(shnum ? shnum : 1, sizeof(*order));
	if (!order)
		return false;
	/* Sections before the first compressed one keep their offsets (and
	 * the program headers, before them, their meaning); the rest follow
	 * one another in their old order. */
	uint64_t first = UINT64_MAX, end = 0;

	for (size_t i = 0; i < nz; i++) {
		GElf_Shdr sh;

		if (!gelf_getshdr(elf_getscn(e, z[i].index), &sh))
			goto out;
		if (sh.sh_offset < first)
			first = sh.sh_offset;
	}
	if (eh.e_phoff + (uint64_t)phnum * eh.e_phentsize > first && phnum)
		goto out;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || (ph.p_filesz && ph.p_offset + ph.p_filesz > first))
			goto out;
	}
	for (size_t i = 1; i < shnum; i++) {
		GElf_Shdr sh;

		if (!gelf_getshdr(elf_getscn(e, i), &sh))
			goto out;
		order[i - 1] = (struct secplace){ i, sh.sh_offset };
		if (sh.sh_offset < first && sh.sh_type != SHT_NOBITS && sh.sh_offset + sh.sh_size > first)
			goto out;
		if (sh.sh_offset < first && sh.sh_type != SHT_NOBITS && sh.sh_offset + sh.sh_size > end)
			end = sh.sh_offset + sh.sh_size;
	}
	if (end < eh.e_ehsize)
		end = eh.e_ehsize;
	if (phnum && eh.e_phoff + (uint64_t)phnum * eh.e_phentsize > end)
		end = eh.e_phoff + (uint64_t)phnum * eh.e_phentsize;
	qsort(order, shnum - 1, sizeof(*order), cmp_place);

	o = elf_begin(ofd, ELF_C_WRITE, NULL);
	if (!o || !gelf_newehdr(o, gelf_getclass(e)) || (phnum && !gelf_newphdr(o, phnum)))
		goto out;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || !gelf_update_phdr(o, (int)i, &ph))
			goto out;
	}
	for (size_t i = 1; i < shnum; i++)
		if (!elf_newscn(o))
			goto out;
	for (size_t k = 0; k + 1 < shnum; k++) {
		size_t i = order[k].index;
		Elf_Scn *is = elf_getscn(e, i), *os = elf_getscn(o, i);
		struct zsec *zs = zsec_of(z, nz, i);
		GElf_Shdr sh;
		const void *buf = NULL;

		if (!is || !os || !gelf_getshdr(is, &sh))
			goto out;
		if (zs) {
			sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
			sh.sh_size = zs->outlen;
			sh.sh_addralign = zs->align;
			buf = zs->out;
		} else if (sh.sh_type != SHT_NOBITS && sh.sh_size) {
			Elf_Data *raw = elf_rawdata(is, NULL);

			if (!raw || raw->d_size != sh.sh_size)
				goto out;
			buf = raw->d_buf;
		}
		if (sh.sh_offset >= first) {
			sh.sh_offset = align_up(end, sh.sh_addralign);
			if (sh.sh_type != SHT_NOBITS)
				end = sh.sh_offset + sh.sh_size;
		}
		if (!gelf_update_shdr(os, &sh))
			goto out;
		if (buf) {
			Elf_Data *d = elf_newdata(os);

			if (!d)
				goto out;
			d->d_buf = (void *)buf;
			d->d_size = sh.sh_size;
			d->d_type = ELF_T_BYTE;
			d->d_align = 1;
			d->d_off = 0;
			d->d_version = EV_CURRENT;
		}
	}
	eh.e_shoff = align_up(end, 8);
	if (!gelf_update_ehdr(o, &eh))
		goto out;
	elf_flagelf(o, ELF_C_SET, ELF_F_LAYOUT);
	ok = elf_update(o, ELF_C_WRITE) >= 0;
out:
	if (o)
		elf_end(o);
	free(order);
	return ok;
}

/* ---- the cache ---------------------------------------------------------------------------------- */

/* mkdir -p (a relative path from the working directory). */
static bool mkdirs(char *path)
{
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;

		*p = 0;
		int r = mkdir(path, 0700);

		*p = c;
		if (r < 0 && errno != EEXIST)
			return false;
		if (!c)
			return true;
	}
}

/* The cache directory, created; false when there is none. */
static bool cache_dir(char *buf, size_t len)
{
	const char *d = getenv("SONDE_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	int n;

	if (d)
		n = *d && strcmp(d, "off") ? snprintf(buf, len, "%s/debug", d) : -1;
	else if (x && *x == '/')
		n = snprintf(buf, len, "%s/sonde/debug", x);
	else if (h && *h == '/')
		n = snprintf(buf, len, "%s/.cache/sonde/debug", h);
	else
		n = -1;
	return n > 0 && (size_t)n < len && mkdirs(buf);
}

/* The name of e's copy: its build id (or, without one, the file's device
 * and inode), size and modification time: a changed file is a new name. */
static bool cache_name(Elf *e, const struct stat *st, char *buf, size_t len)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(e, &id);
	char hex[2 * 64 + 1];
	int w;

	if (n > 0 && n <= 64) {
		for (ssize_t i = 0; i < n; i++)
			sprintf(hex + 2 * i, "%02x", ((const unsigned char *)id)[i]);
		w = snprintf(buf, len, "%s", hex);
	} else {
		w = snprintf(buf, len, "noid-%llx-%llx", (unsigned long long)st->st_dev,
			     (unsigned long long)st->st_ino);
	}
	if (w < 0 || (size_t)w >= len)
		return false;
	int w2 = snprintf(buf + w, len - (size_t)w, "-%llu-%lld.%09ld.debug", (unsigned long long)st->st_size,
			  (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);

	return w2 > 0 && (size_t)w2 < len - (size_t)w;
}

/* A cached copy at path, checked whole (it ends where its section headers
 * do: a copy cut short by a full disk or a crash is not used), or -1. */
static int cache_open(const char *path)
{
	int fd = sonde_open_regular(path);
	struct stat st;

	if (fd < 0)
		return -1;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t shnum;
	bool ok = e && fstat(fd, &st) == 0 && gelf_getehdr(e, &eh) && elf_getshdrnum(e, &shnum) == 0 &&
		  (uint64_t)st.st_size == eh.e_shoff + (uint64_t)shnum * eh.e_shentsize;

	if (e)
		elf_end(e);
	if (!ok) {
		close(fd);
		unlink(path);
		return -1;
	}
	futimens(fd, NULL); /* in use: kept KEEP_SECONDS more */
	return fd;
}

struct centry {
	char name[256];
	off_t size;
	time_t mtime;
};

static int cmp_centry_age(const void *a, const void *b)
{
	const struct centry *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* Removes the copies unused for KEEP_SECONDS, abandoned partial copies,
 * and the oldest while the whole exceeds CACHE_MAX. */
static void cache_prune(const char *dir)
{
	DIR *d = opendir(dir);
	struct centry *v = NULL;
	size_t n = 0, cap = 0;
	unsigned long long total = 0;
	time_t now = time(NULL);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;
		bool tmp = !strncmp(de->d_name, "tmp-", 4);
		size_t l = strlen(de->d_name);

		if (!tmp && (l < 6 || strcmp(de->d_name + l - 6, ".debug")))
			continue;
		if (l >= sizeof(v->name) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (now - st.st_mtime > (tmp ? TMP_SECONDS : KEEP_SECONDS)) {
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (tmp)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			struct centry *nv = realloc(v, cap * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		memcpy(v[n].name, de->d_name, l + 1);
		v[n].size = st.st_size;
		v[n].mtime = st.st_mtime;
		total += (unsigned long long)st.st_size;
		n++;
	}
	if (total > CACHE_MAX) {
		qsort(v, n, sizeof(*v), cmp_centry_age);
		for (size_t i = 0; i < n && total > CACHE_MAX; i++)
			if (unlinkat(dirfd(d), v[i].name, 0) == 0)
				total -= (unsigned long long)v[i].size;
	}
	free(v);
	closedir(d);
}

/* ---- the copy --------------------------------------------------------------------------------------- */

/* A new copy of e with z inflated: into the cache (as `name` in `dir`)
 * when dir is given and writable, else into a memory file; -1 on failure. */
static int make_copy(Elf *e, struct zsec *z, size_t nz, const char *dir, const char *name)
{
	char tmp[PATH_MAX], final[PATH_MAX];

	if (dir && snprintf(tmp, sizeof(tmp), "%s/tmp-XXXXXX", dir) < (int)sizeof(tmp) &&
	    snprintf(final, sizeof(final), "%s/%s", dir, name) < (int)sizeof(final)) {
		int fd = mkostemp(tmp, O_CLOEXEC);

		if (fd >= 0) {
			if (write_plain(e, z, nz, fd)) {
				if (rename(tmp, final) < 0)
					unlink(tmp);
				cache_prune(dir);
				return fd;
			}
			close(fd);
			unlink(tmp);
		}
	}
	int fd = memfd_create("sonde-plain-debug", MFD_CLOEXEC);

	if (fd >= 0 && !write_plain(e, z, nz, fd)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Whether e has a .debug_info section with contents. */
static bool has_debug_info(Elf *e)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && sh.sh_size &&
		    (name = elf_strptr(e, shstrndx, sh.sh_name)) && !strcmp(name, ".debug_info"))
			return true;
	}
	return false;
}

int sonde_plain_debug(int fd, bool *has_dwarf, const void *build_id, size_t build_id_len)
{
	struct stat st;
	struct zsec *z = NULL;
	int res = fd;

	if (has_dwarf)
		*has_dwarf = false;
	if (fd < 0 || fstat(fd, &st) < 0 || elf_version(EV_CURRENT) == EV_NONE)
		return fd;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);

	if (!e)
		return fd;
	if (build_id) {
		const void *id;
		ssize_t n = elf_kind(e) == ELF_K_ELF ? dwelf_elf_gnu_build_id(e, &id) : -1;

		if (n != (ssize_t)build_id_len || memcmp(id, build_id, build_id_len)) {
			elf_end(e);
			close(fd);
			return -1;
		}
	}
	if (has_dwarf)
		*has_dwarf = elf_kind(e) == ELF_K_ELF && has_debug_info(e);
	long nz = elf_kind(e) == ELF_K_ELF ? find_compressed(e, &z) : -1;

	if (nz > 0) {
		char dir[PATH_MAX], name[400];
		bool cached = cache_dir(dir, sizeof(dir)) && cache_name(e, &st, name, sizeof(name));
		int cfd = -1;

		if (cached) {
			char path[PATH_MAX];

			if (snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path))
				cfd = cache_open(path);
		}
		if (cfd < 0 && inflate_all(z, (size_t)nz))
			cfd = make_copy(e, z, (size_t)nz, cached ? dir : NULL, name);
		if (cfd >= 0)
			res = cfd;
		for (long i = 0; i < nz; i++)
			free(z[i].out);
	}
	free(z);
	elf_end(e);
	if (res != fd)
		close(fd);
	return res;
}
