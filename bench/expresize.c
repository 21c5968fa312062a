/*
 * expresize: a sonde experiment with exactly N clock-profile samples, made
 * from a real recording, for bench/print.sh (bench/perfresize.c does the
 * same to a perf.data, so that both tools read the same samples).
 *
 *	expresize SRC DST N
 *
 * DST is a copy of experiment SRC (made beforehand, e.g. cp -r); expresize
 * rewrites its profile, stacks and log.xml.  With N at most the samples
 * SRC holds, DST keeps the first N (in file order: the blocks the threads
 * claimed first); with more, it holds the recording over and over, each
 * copy's samples shifted in time by the recording's span, until N.  The
 * stacks file keeps the frame nodes that the kept samples reach, and only
 * them (a shortened recording has only its own stacks); log.xml's end
 * event counts N samples, and the thread ends, end and exit move to the
 * last copy.  The format is include/sonde/format.h's; the tool works on
 * the files' blocks and packets, not through the reader, so that DST is
 * what the collector would have written.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sonde/format.h>

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "expresize: %s '%s'\n", what, path);
	return 1;
}

/* An open-addressing set of 64-bit keys (never 0), with a value each. */
struct set {
	uint64_t *key, *val;
	size_t cap, n;
};

static size_t slot(const struct set *s, uint64_t k)
{
	size_t i = (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20) & (s->cap - 1);

	while (s->key[i] && s->key[i] != k)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int set_put(struct set *s, uint64_t k, uint64_t v)
{
	if (!k)
		k = 1; /* ids are hashes; 0 does not occur in practice */
	if ((s->n + 1) * 2 > s->cap) {
		struct set t = { .cap = s->cap ? s->cap * 2 : 1024 };

		t.key = calloc(t.cap, sizeof(*t.key));
		t.val = calloc(t.cap, sizeof(*t.val));
		if (!t.key || !t.val)
			return -1;
		for (size_t i = 0; i < s->cap; i++)
			if (s->key[i]) {
				size_t j = slot(&t, s->key[i]);

				t.key[j] = s->key[i];
				t.val[j] = s->val[i];
				t.n++;
			}
		free(s->key);
		free(s->val);
		*s = t;
	}
	size_t i = slot(s, k);

	if (!s->key[i]) {
		s->key[i] = k;
		s->val[i] = v;
		s->n++;
	}
	return 0;
}

static int set_get(const struct set *s, uint64_t k, uint64_t *v)
{
	if (!s->cap)
		return 0;
	if (!k)
		k = 1;
	size_t i = slot(s, k);

	if (!s->key[i])
		return 0;
	if (v)
		*v = s->val[i];
	return 1;
}

struct file {
	unsigned char *p;
	size_t len, nblocks;
};

static int map_file(const char *dir, const char *name, struct file *f)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0 || (size_t)st.st_size < SONDE_FILE_HEADER_SIZE)
		return fail("cannot read", path);
	f->len = (size_t)st.st_size;
	f->p = mmap(NULL, f->len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f->p == MAP_FAILED || memcmp(f->p, SONDE_DATA_MAGIC, 8))
		return fail("not a sonde data file:", path);
	f->nblocks = (f->len - SONDE_FILE_HEADER_SIZE) / SONDE_BLOCK_SIZE;
	return 0;
}

static struct sonde_block_header *block(const struct file *f, size_t i)
{
	return (struct sonde_block_header *)(f->p + SONDE_FILE_HEADER_SIZE + i * SONDE_BLOCK_SIZE);
}

/* Calls fn on each packet of block b; stops (returning 1) when fn does. */
#define FOR_PACKETS(b, pk)                                                                              \
	for (unsigned char *pk = (unsigned char *)(b) + sizeof(struct sonde_block_header),              \
			   *pk##_end = pk + ((b)->used <= SONDE_BLOCK_PAYLOAD ? (b)->used : 0);         \
	     pk + 4 <= pk##_end && ((struct sonde_packet *)pk)->size >= 8 &&                              \
	     pk + ((struct sonde_packet *)pk)->size <= pk##_end;                                        \
	     pk += ((struct sonde_packet *)pk)->size)

static int live(const struct sonde_block_header *b, uint32_t kind)
{
	return b->magic == SONDE_BLOCK_MAGIC && b->kind == kind;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: expresize SRC DST N\n");
		return 2;
	}
	const char *src = argv[1], *dst = argv[2];
	uint64_t want = strtoull(argv[3], NULL, 10);
	struct file prof, stk;

	if (map_file(src, "profile", &prof) || map_file(src, "stacks", &stk))
		return 1;

	/* the recording's samples and span */
	uint64_t nsamples = 0, tmin = UINT64_MAX, tmax = 0;

	for (size_t i = 0; i < prof.nblocks; i++) {
		struct sonde_block_header *b = block(&prof, i);

		if (!live(b, SONDE_KIND_PROFILE))
			continue;
		FOR_PACKETS(b, pk)
		{
			struct sonde_profile_packet *p = (struct sonde_profile_packet *)pk;

			if (p->type != SONDE_PKT_PROFILE)
				continue;
			nsamples++;
			if (p->time_ns < tmin)
				tmin = p->time_ns;
			if (p->time_ns > tmax)
				tmax = p->time_ns;
		}
	}
	if (!nsamples)
		return fail("no samples in", src);
	uint64_t copies = want ? (want + nsamples - 1) / nsamples : 1, span = tmax - tmin + 1000000;

	/* the profile: copies of the blocks, the last cut at N samples */
	char path[4096];

	snprintf(path, sizeof(path), "%s/profile", dst);
	FILE *out = fopen(path, "w");

	if (!out)
		return fail("cannot create", path);
	fwrite(prof.p, 1, SONDE_FILE_HEADER_SIZE, out);

	struct set used = { 0 };
	unsigned char *nb = malloc(SONDE_BLOCK_SIZE);
	uint64_t written = 0;

	if (!nb)
		return 1;
	for (uint64_t c = 0; c < copies && written < want; c++)
		for (size_t i = 0; i < prof.nblocks && written < want; i++) {
			struct sonde_block_header *b = block(&prof, i);

			if (!live(b, SONDE_KIND_PROFILE))
				continue;
			memcpy(nb, b, SONDE_BLOCK_SIZE);
			struct sonde_block_header *h = (struct sonde_block_header *)nb;

			h->first_ns += c * span;
			FOR_PACKETS(h, pk)
			{
				struct sonde_packet *q = (struct sonde_packet *)pk;

				if (q->type == SONDE_PKT_PROFILE) {
					struct sonde_profile_packet *p = (struct sonde_profile_packet *)pk;

					if (written == want) {
						/* cut the block here */
						h->used = (uint32_t)(pk - nb - sizeof(*h));
						break;
					}
					p->time_ns += c * span;
					written++;
					if (set_put(&used, p->stack_id, 0) < 0)
						return 1;
				} else if (q->type == SONDE_PKT_OFFCPU) {
					struct sonde_offcpu_packet *p = (struct sonde_offcpu_packet *)pk;

					p->time_ns += c * span;
					if (set_put(&used, p->stack_id, 0) < 0)
						return 1;
				}
			}
			memset(nb + sizeof(*h) + h->used, 0, SONDE_BLOCK_PAYLOAD - h->used);
			fwrite(nb, 1, SONDE_BLOCK_SIZE, out);
		}
	if (fclose(out))
		return fail("cannot write", path);

	/* the stacks: the frame nodes of the kept samples and their callers */
	struct set parent = { 0 }, keep = { 0 };

	for (size_t i = 0; i < stk.nblocks; i++) {
		struct sonde_block_header *b = block(&stk, i);

		if (!live(b, SONDE_KIND_STACKS))
			continue;
		FOR_PACKETS(b, pk)
		{
			struct sonde_frame_packet *f = (struct sonde_frame_packet *)pk;

			if (f->type == SONDE_PKT_FRAME && set_put(&parent, f->node_id, f->parent_id) < 0)
				return 1;
		}
	}
	for (size_t i = 0; i < used.cap; i++) {
		uint64_t id = used.key[i], up;

		while (id && !set_get(&keep, id, NULL)) {
			if (set_put(&keep, id, 0) < 0)
				return 1;
			if (!set_get(&parent, id, &up) || up < SONDE_FRAME_ROOT_LIMIT)
				break;
			id = up;
		}
	}
	snprintf(path, sizeof(path), "%s/stacks", dst);
	if (!(out = fopen(path, "w")))
		return fail("cannot create", path);
	fwrite(stk.p, 1, SONDE_FILE_HEADER_SIZE, out);
	for (size_t i = 0; i < stk.nblocks; i++) {
		struct sonde_block_header *b = block(&stk, i);

		if (!live(b, SONDE_KIND_STACKS))
			continue;
		memcpy(nb, b, sizeof(*b));
		struct sonde_block_header *h = (struct sonde_block_header *)nb;
		uint32_t n = 0;

		FOR_PACKETS(b, pk)
		{
			struct sonde_packet *q = (struct sonde_packet *)pk;
			uint64_t id;

			if (q->type == SONDE_PKT_FRAME)
				id = ((struct sonde_frame_packet *)pk)->node_id;
			else if (q->type == SONDE_PKT_STACK)
				id = ((struct sonde_stack_packet *)pk)->stack_id;
			else
				id = 0;
			if (id && !set_get(&keep, id, NULL))
				continue;
			memcpy(nb + sizeof(*h) + n, pk, q->size);
			n += q->size;
		}
		if (!n)
			continue;
		h->used = n;
		memset(nb + sizeof(*h) + n, 0, SONDE_BLOCK_PAYLOAD - n);
		fwrite(nb, 1, SONDE_BLOCK_SIZE, out);
	}
	if (fclose(out))
		return fail("cannot write", path);

	/* log.xml: the samples written; the ends after the last copy */
	snprintf(path, sizeof(path), "%s/log.xml", src);
	FILE *in = fopen(path, "r");

	snprintf(path, sizeof(path), "%s/log.xml", dst);
	if (!in || !(out = fopen(path, "w")))
		return fail("cannot rewrite", path);
	char *line = NULL;
	size_t cap = 0;
	uint64_t shift = (copies - 1) * span;

	while (getline(&line, &cap, in) > 0) {
		int is_end = strstr(line, "kind=\"end\"") != NULL;
		int ends = is_end || strstr(line, "kind=\"thread_end\"") || strstr(line, "kind=\"exit\"");
		char *t = strstr(line, " time_ns=\""), *s;

		if (ends && t && shift) {
			uint64_t v = strtoull(t + 10, &s, 10);

			fprintf(out, "%.*s time_ns=\"%" PRIu64, (int)(t - line), line, v + shift);
			memmove(line, s, strlen(s) + 1);
		}
		if (is_end && (t = strstr(line, " samples=\""))) {
			strtoull(t + 10, &s, 10);
			fprintf(out, "%.*s samples=\"%" PRIu64, (int)(t - line), line, written);
			memmove(line, s, strlen(s) + 1);
		}
		fputs(line, out);
	}
	free(line);
	fclose(in);
	if (fclose(out))
		return fail("cannot write", path);
	fprintf(stderr, "expresize: %" PRIu64 " samples (%" PRIu64 " recorded, %" PRIu64 " copies), %zu of %zu frame nodes\n",
		written, nsamples, copies, keep.n, parent.n);
	return 0;
}
