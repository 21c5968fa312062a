/*
 * perfresize: a perf.data with exactly N samples, made from a real
 * recording, for bench/print.sh (bench/expresize.c does the same to a
 * sonde experiment, so that both tools read the same samples).
 *
 *	perfresize SRC DST N
 *
 * With N at most the samples SRC holds, DST keeps the first N sample
 * records (file order) and every other record.  With more, DST holds the
 * recording over and over, each copy's samples shifted in time by the
 * recording's span, until N: the same stacks, unwound again by perf report
 * for every copy, as a longer run of the same program would give.  The
 * records that describe the process (comm, mmap, fork) are written once,
 * at the start; exit records once, in the last copy (a sample of a thread
 * perf has seen exit would have no maps); round markers in every copy.
 *
 * Only the data section changes: the header's data size, and the offsets
 * of the feature sections that follow the data (tools/perf/Documentation/
 * perf.data-file-format.txt).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct section {
	uint64_t offset, size;
};

struct file_header {
	char magic[8];
	uint64_t size, attr_size;
	struct section attrs, data, event_types;
	uint64_t features[4];
};

#define REC_EXIT 4
#define REC_SAMPLE 9
#define REC_USER_FIRST 64
#define REC_FINISHED_ROUND 68

/* sample_type bits (linux/perf_event.h) */
#define S_IP (1u << 0)
#define S_TID (1u << 1)
#define S_TIME (1u << 2)
#define S_ID (1u << 6)
#define S_CPU (1u << 7)
#define S_STREAM_ID (1u << 9)
#define S_IDENTIFIER (1u << 16)

static const unsigned char *src;
static size_t src_len;
static uint64_t time_off_sample; /* offset of time in a sample record */
static uint64_t trailer_time_back; /* time's distance from a record's end */
static int has_trailer;

static int fail(const char *msg)
{
	fprintf(stderr, "perfresize: %s\n", msg);
	return 1;
}

static int rec_time(const unsigned char *r, uint32_t type, uint16_t size, uint64_t **at)
{
	*at = NULL;
	if (type == REC_SAMPLE) {
		if (time_off_sample + 8 > size)
			return -1;
		*at = (uint64_t *)(r + time_off_sample);
	} else if (type < REC_USER_FIRST && has_trailer) {
		if (trailer_time_back > size)
			return -1;
		*at = (uint64_t *)(r + size - trailer_time_back);
	}
	return 0;
}

static unsigned char *buf;
static size_t buf_len, buf_cap;

static void out(FILE *f, const void *p, size_t n)
{
	if (buf_len + n > buf_cap) {
		fwrite(buf, 1, buf_len, f);
		buf_len = 0;
	}
	if (n > buf_cap) {
		fwrite(p, 1, n, f);
		return;
	}
	memcpy(buf + buf_len, p, n);
	buf_len += n;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: perfresize SRC DST N\n");
		return 2;
	}
	uint64_t want = strtoull(argv[3], NULL, 10);
	int fd = open(argv[1], O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "perfresize: cannot open '%s'\n", argv[1]);
		return 1;
	}
	src_len = (size_t)st.st_size;
	src = mmap(NULL, src_len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (src == MAP_FAILED || src_len < sizeof(struct file_header))
		return fail("SRC is not a perf.data file");
	madvise((void *)src, src_len, MADV_SEQUENTIAL);

	struct file_header h;

	memcpy(&h, src, sizeof(h));
	if (memcmp(h.magic, "PERFILE2", 8) || h.data.offset + h.data.size > src_len ||
	    h.attrs.offset + h.attrs.size > h.data.offset || h.attr_size < 64 + 16)
		return fail("SRC is not a perf.data file (or not one in file mode)");

	/* every event must lay out its samples alike */
	uint64_t sample_type = 0;
	int sample_id_all = 0;

	for (uint64_t a = h.attrs.offset; a + h.attr_size <= h.attrs.offset + h.attrs.size; a += h.attr_size) {
		uint64_t t, flags;

		memcpy(&t, src + a + 24, 8);
		memcpy(&flags, src + a + 40, 8);
		if (a != h.attrs.offset && (t != sample_type || (int)((flags >> 18) & 1) != sample_id_all))
			return fail("the events of SRC lay out their samples differently");
		sample_type = t;
		sample_id_all = (int)((flags >> 18) & 1);
	}
	if (!(sample_type & S_TIME))
		return fail("SRC's samples have no time (perf record -T)");
	time_off_sample = 8 + 8 * (!!(sample_type & S_IDENTIFIER) + !!(sample_type & S_IP) + !!(sample_type & S_TID));
	has_trailer = sample_id_all;
	{
		/* sample_id trailer: tid, time, id, stream_id, cpu, identifier */
		uint64_t after = 8 * (!!(sample_type & S_ID) + !!(sample_type & S_STREAM_ID) +
				      !!(sample_type & S_CPU) + !!(sample_type & S_IDENTIFIER));
		trailer_time_back = after + 8;
	}

	/* the samples and their time span */
	const unsigned char *d0 = src + h.data.offset, *d1 = d0 + h.data.size;
	uint64_t nsamples = 0, tmin = UINT64_MAX, tmax = 0;

	for (const unsigned char *r = d0; r + 8 <= d1;) {
		uint32_t type;
		uint16_t size;
		uint64_t *t;

		memcpy(&type, r, 4);
		memcpy(&size, r + 6, 2);
		if (size < 8 || r + size > d1)
			return fail("SRC's data section is damaged");
		if (type == REC_SAMPLE) {
			if (rec_time(r, type, size, &t) < 0)
				return fail("a sample record of SRC is too short");
			nsamples++;
			if (*t < tmin)
				tmin = *t;
			if (*t > tmax)
				tmax = *t;
		}
		r += size;
	}
	if (!nsamples)
		return fail("SRC holds no samples");
	uint64_t copies = (want + nsamples - 1) / nsamples, span = tmax - tmin + 1000000;

	if (!copies)
		copies = 1;

	FILE *f = fopen(argv[2], "w");

	if (!f) {
		fprintf(stderr, "perfresize: cannot create '%s'\n", argv[2]);
		return 1;
	}
	buf_cap = 8u << 20;
	buf = malloc(buf_cap);
	if (!buf)
		return fail("out of memory");
	/* the header and attributes as they are; the header rewritten at the end */
	out(f, src, h.data.offset);

	uint64_t written = 0, data_size = 0;
	unsigned char *tmp = malloc(65536);

	if (!tmp)
		return fail("out of memory");
	for (uint64_t c = 0; c < copies; c++) {
		uint64_t shift = c * span;
		int last = c + 1 == copies;

		for (const unsigned char *r = d0; r + 8 <= d1;) {
			uint32_t type;
			uint16_t size;
			uint64_t *t;

			memcpy(&type, r, 4);
			memcpy(&size, r + 6, 2);
			int keep;

			if (type == REC_SAMPLE)
				keep = written < want;
			else if (type == REC_FINISHED_ROUND)
				keep = 1;
			else if (type == REC_EXIT)
				keep = last;
			else
				keep = c == 0;
			if (keep) {
				memcpy(tmp, r, size);
				if (rec_time(tmp, type, size, &t) == 0 && t && shift)
					*t += shift;
				out(f, tmp, size);
				data_size += size;
				written += type == REC_SAMPLE;
			}
			r += size;
		}
	}
	/* the feature sections after the data, their offsets moved */
	int64_t delta = (int64_t)data_size - (int64_t)h.data.size;
	uint64_t feat = h.data.offset + h.data.size, nfeat = 0;

	for (int i = 0; i < 4; i++)
		nfeat += (uint64_t)__builtin_popcountll(h.features[i]);
	if (feat + nfeat * sizeof(struct section) > src_len)
		return fail("SRC's feature sections are damaged");
	for (uint64_t i = 0; i < nfeat; i++) {
		struct section s;

		memcpy(&s, src + feat + i * sizeof(s), sizeof(s));
		if (s.offset >= feat)
			s.offset = (uint64_t)((int64_t)s.offset + delta);
		out(f, &s, sizeof(s));
	}
	out(f, src + feat + nfeat * sizeof(struct section), src_len - feat - nfeat * sizeof(struct section));
	fwrite(buf, 1, buf_len, f);
	h.data.size = data_size;
	if (fseek(f, 0, SEEK_SET) || fwrite(&h, sizeof(h), 1, f) != 1 || fclose(f)) {
		fprintf(stderr, "perfresize: writing '%s' failed\n", argv[2]);
		return 1;
	}
	fprintf(stderr, "perfresize: %llu samples (%llu recorded, %llu copies)\n", (unsigned long long)written,
		(unsigned long long)nsamples, (unsigned long long)copies);
	return 0;
}
