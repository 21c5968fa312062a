/*
 * The io kind's reading (sonde collect -i): its packets (SONDE_PKT_IO, one
 * per traced call, and SONDE_PKT_IO_FILE, the names of the files,
 * include/sonde/format.h), its events by time and its file names.  See
 * reader/kind.h.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/grow.h"
#include "base/u64map.h"
#include "reader/kind.h"

struct io_state {
	struct sonde_io_event *v;
	size_t n, cap;
	struct iofile {
		uint64_t id;
		const char *name; /* in the mapped file */
	} * files;
	size_t nfiles, capfiles;
	struct u64map filemap;
};

static const char *take(struct scan *sc, const uint8_t *pkt, char *why, size_t whylen)
{
	const struct sonde_packet *h = (const void *)pkt;

	if (h->type != SONDE_PKT_IO && h->type != SONDE_PKT_IO_FILE)
		return sonde_rk_not_mine;
	if (sonde_rk_again(sc))
		return NULL;

	struct sonde_exp *exp = sonde_rk_exp(sc);
	struct io_state *s = sonde_rk_state_new(exp, SONDE_KIND_IO, sizeof(*s));

	if (!s)
		return NULL;
	switch (h->type) {
	case SONDE_PKT_IO: {
		const struct sonde_io_packet *p = (const void *)pkt;

		if (h->size < sizeof(*p))
			return sonde_rk_too_small(why, whylen, "io", h->size, sizeof(*p));
		if (sonde_grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v), 16)) {
			sonde_rk_oom(exp);
			return NULL;
		}
		s->v[s->n++] =
			(struct sonde_io_event){ sonde_rk_tid(sc), p->func,   p->flags, p->fd,	    p->err,
						 p->time_ns,	   p->dur_ns, p->bytes, p->file_id, p->stack_id };
		sonde_rk_stack_ref(exp, p->stack_id);
		return NULL;
	}
	case SONDE_PKT_IO_FILE: {
		const struct sonde_io_file_packet *p = (const void *)pkt;

		if (h->size < sizeof(*p))
			return sonde_rk_too_small(why, whylen, "io file", h->size, sizeof(*p));
		if ((size_t)p->name_len + 1 > h->size - sizeof(*p) || pkt[sizeof(*p) + p->name_len] != '\0') {
			snprintf(why, whylen, "io file packet name of %u bytes does not fit its size %u", p->name_len,
				 h->size);
			return why;
		}
		if (!p->file_id || u64map_get(&s->filemap, p->file_id) >= 0)
			return NULL; /* the first name of an id is kept */
		if (sonde_grow(&s->files, &s->capfiles, s->nfiles + 1, sizeof(*s->files), 16) ||
		    u64map_put(&s->filemap, p->file_id, (uint32_t)s->nfiles)) {
			sonde_rk_oom(exp);
			return NULL;
		}
		s->files[s->nfiles++] = (struct iofile){ p->file_id, (const char *)pkt + sizeof(*p) };
		return NULL;
	}
	}
	return sonde_rk_not_mine;
}

const struct sonde_io_event *sonde_exp_io_events(const struct sonde_exp *exp, size_t *n)
{
	const struct io_state *s = sonde_rk_state(exp, SONDE_KIND_IO);

	*n = s ? s->n : 0;
	return s ? s->v : NULL;
}

const char *sonde_exp_io_file(const struct sonde_exp *exp, uint64_t file_id)
{
	const struct io_state *s = sonde_rk_state(exp, SONDE_KIND_IO);
	long i = s && file_id ? u64map_get(&s->filemap, file_id) : -1;

	return i < 0 ? NULL : s->files[i].name;
}

static size_t events(const struct sonde_exp *exp)
{
	size_t n;

	sonde_exp_io_events(exp, &n);
	return n;
}

SONDE_RK_TIME_SORT(sort_io, struct sonde_io_event)

static void finish(struct sonde_exp *exp)
{
	struct io_state *s = sonde_rk_state(exp, SONDE_KIND_IO);

	if (!s || s->n < 2)
		return;
	struct sonde_io_event *tmp = malloc(s->n * sizeof(*tmp));

	if (!tmp) {
		sonde_rk_oom(exp);
		return;
	}
	sort_io(s->v, tmp, s->n);
	free(tmp);
}

static void free_state(void *state)
{
	struct io_state *s = state;

	free(s->v);
	free(s->files);
	u64map_release(&s->filemap);
	free(s);
}

const char *sonde_io_func_name(unsigned func)
{
	static const char *const names[] = {
		[SONDE_IO_READ] = "read",	[SONDE_IO_PREAD] = "pread",	    [SONDE_IO_READV] = "readv",
		[SONDE_IO_PREADV] = "preadv",	[SONDE_IO_FREAD] = "fread",	    [SONDE_IO_FGETS] = "fgets",
		[SONDE_IO_GETC] = "getc",	[SONDE_IO_GETLINE] = "getline",	    [SONDE_IO_WRITE] = "write",
		[SONDE_IO_PWRITE] = "pwrite",	[SONDE_IO_WRITEV] = "writev",	    [SONDE_IO_PWRITEV] = "pwritev",
		[SONDE_IO_FWRITE] = "fwrite",	[SONDE_IO_PRINTF] = "printf",	    [SONDE_IO_FPRINTF] = "fprintf",
		[SONDE_IO_DPRINTF] = "dprintf", [SONDE_IO_PUTS] = "puts",	    [SONDE_IO_FPUTS] = "fputs",
		[SONDE_IO_PUTC] = "putc",	[SONDE_IO_OPEN] = "open",	    [SONDE_IO_OPENAT] = "openat",
		[SONDE_IO_CREAT] = "creat",	[SONDE_IO_CLOSE] = "close",	    [SONDE_IO_DUP] = "dup",
		[SONDE_IO_DUP2] = "dup2",	[SONDE_IO_DUP3] = "dup3",	    [SONDE_IO_LSEEK] = "lseek",
		[SONDE_IO_FSYNC] = "fsync",	[SONDE_IO_FDATASYNC] = "fdatasync", [SONDE_IO_FOPEN] = "fopen",
		[SONDE_IO_FDOPEN] = "fdopen",	[SONDE_IO_FCLOSE] = "fclose",	    [SONDE_IO_FFLUSH] = "fflush",
	};
	return sonde_rk_name_in(names, sizeof(names) / sizeof(names[0]), func);
}

const struct sonde_reader_kind sonde_reader_kind_IO = {
	.take = take, .events = events, .finish = finish, .free = free_state,
};
