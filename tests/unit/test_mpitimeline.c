/*
 * test_mpitimeline: the MPI kind's timelines (lib/kinds/mpi_timeline.c)
 * on a job of 4 ranks written with the tests' writer
 * (lib/reader/expwriter.h), whose traffic is known: a blocking pair and a
 * non-blocking pair (Isend; Irecv and Wait), a message from every rank to
 * every other, two on one channel (rank 0 to 1, tag 3: MPI's order
 * decides which send is which receive), a broadcast, an allreduce and a
 * barrier; and a send to rank 5, which no experiment has (no arrow,
 * counted), and one to MPI_PROC_NULL (no arrow, not counted).  Checked
 * exactly:
 *   - chrome: every rank a process "rank N (mpiring [P])" with its sort
 *     index; one flow ("s" then "f", one id) per matched message, from
 *     the sending call's slice (its rank's pid, the MPI track's tid, the
 *     call's start) to the receiving call's; the note counts the send
 *     that matched nothing; the calls on the MPI track, messages none;
 *   - the report's "mpi" view: 4 lanes in rank order, every call, every
 *     matched message from its send's time to its receive's, and the
 *     matrix's cells (messages and bytes from row rank to column rank).
 *
 *	test_mpitimeline            the checks
 *	test_mpitimeline --write D  writes the job into D (M_r0.er ... M_r3.er)
 *	                            and its truth, D/mpitruth.json, for
 *	                            tests/t60-export.sh and t61-report.sh
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <sys/stat.h>

#include "check.h"
#include "kinds/mpi_timeline.h"
#include "reader/experiment.h"
#include "reader/expwriter.h"
#include "sonde/mpifuncs.h"
#include "views/export.h"

#define T0 ((uint64_t)1000000000)
#define US ((uint64_t)1000)
#define MS ((uint64_t)1000000)
#define F(name) SONDE_MPI_F_##name
#define NRANKS 4

static char jobdir[4096];

/* A check whose message says what, with numbers. */
#define CHECK_MSG(c, ...)                                         \
	do {                                                      \
		char m_[600];                                     \
		snprintf(m_, sizeof(m_), __VA_ARGS__);            \
		check(!!(c), m_, __LINE__);                       \
		if (getenv("SONDE_TEST_SHOW") && (c))             \
			printf("ok - %s\n", m_);                 \
	} while (0)

/* One point-to-point message of the job and the calls that move it. */
struct msg {
	int src, dst, tag;
	uint64_t bytes;
	bool nonblocking; /* Isend; Irecv, then Wait */
};

static struct msg truth[64];
static size_t ntruth;
/* when each message's calls are: message i's send starts at T0 + (i+1) ms */
static uint64_t send_at(size_t i) { return T0 + (i + 1) * MS; }
#define SEND_DUR (100 * US)
/* the receive starts 50 us after the send and takes 200 us */
static uint64_t recv_at(size_t i) { return send_at(i) + 50 * US; }
#define RECV_DUR (200 * US)

static void traffic(void)
{
	/* the pairs: 0 -> 1 and 2 -> 3 blocking, 1 -> 0 and 3 -> 2 non-blocking */
	truth[ntruth++] = (struct msg){ 0, 1, 1, 4096, false };
	truth[ntruth++] = (struct msg){ 2, 3, 1, 4096, false };
	truth[ntruth++] = (struct msg){ 1, 0, 2, 8192, true };
	truth[ntruth++] = (struct msg){ 3, 2, 2, 8192, true };
	/* every rank to every other */
	for (int a = 0; a < NRANKS; a++)
		for (int b = 0; b < NRANKS; b++)
			if (a != b)
				truth[ntruth++] = (struct msg){ a, b, 7, (uint64_t)(100 * a + b + 1), false };
	/* two on one channel: the first send is the first receive */
	truth[ntruth++] = (struct msg){ 0, 1, 3, 111, false };
	truth[ntruth++] = (struct msg){ 0, 1, 3, 222, false };
}

static void call(struct sonde_expw *w, uint32_t tid, unsigned func, int32_t peer, int32_t tag, uint64_t t,
		 uint64_t dur, uint64_t coll)
{
	struct sonde_mpi_call_packet p = { .func = (uint16_t)func, .peer = peer, .tag = tag,
					   .comm = SONDE_MPI_COMM_WORLD, .time_ns = t, .dur_ns = dur,
					   .coll_bytes = coll, .stack_id = 7 };

	sonde_expw_mpi_call(w, tid, &p);
}

static void message(struct sonde_expw *w, uint32_t tid, unsigned dir, unsigned func, int32_t peer, int32_t tag,
		    uint64_t t, uint64_t bytes)
{
	struct sonde_mpi_msg_packet p = { .dir = (uint8_t)dir, .func = (uint16_t)func, .peer = peer, .tag = tag,
					  .comm = SONDE_MPI_COMM_WORLD, .time_ns = t, .bytes = bytes, .stack_id = 7 };

	sonde_expw_mpi_msg(w, tid, &p);
}

/* The calls each rank makes: per rank, for the timeline's truth. */
static size_t ncalls[NRANKS];
static uint64_t tail_at; /* the collectives, after the messages */

static int write_rank(int r)
{
	char path[4200], err[512];
	uint32_t pid = 1000 + (uint32_t)r;

	snprintf(path, sizeof(path), "%s/M_r%d.er", jobdir, r);
	struct sonde_expw *w = sonde_expw_create(path, err, sizeof(err));

	if (!w) {
		printf("# cannot create %s: %s\n", path, err);
		return -1;
	}
	const uint64_t st[2] = { 0x10100 | SONDE_PC_EXACT, 0x10200 };

	sonde_expw_log_preamble(w, pid, T0);
	sonde_expw_object(w, 1, "/nonexistent/libring.so", 0x10000, 0x10000, 0x20000, T0);
	sonde_expw_stack(w, 7, 0, 2, st);
	sonde_expw_mpi_decl(w, r, NRANKS, "openmpi", "Open MPI v4.1.4");
	ncalls[r] = 0;
	for (size_t i = 0; i < ntruth; i++) {
		const struct msg *m = &truth[i];

		if (m->src == r) {
			unsigned f = m->nonblocking ? F(MPI_Isend) : F(MPI_Send);

			call(w, pid, f, m->dst, m->tag, send_at(i), SEND_DUR, 0);
			message(w, pid, SONDE_MPI_SEND, f, m->dst, m->tag, send_at(i), m->bytes);
			ncalls[r]++;
		}
		if (m->dst == r) {
			if (m->nonblocking) {
				call(w, pid, F(MPI_Irecv), m->src, m->tag, recv_at(i) - 10 * US, 1 * US, 0);
				call(w, pid, F(MPI_Wait), m->src, m->tag, recv_at(i), RECV_DUR, 0);
				message(w, pid, SONDE_MPI_RECV, F(MPI_Wait), m->src, m->tag, recv_at(i) + RECV_DUR, m->bytes);
				ncalls[r] += 2;
			} else {
				call(w, pid, F(MPI_Recv), m->src, m->tag, recv_at(i), RECV_DUR, 0);
				message(w, pid, SONDE_MPI_RECV, F(MPI_Recv), m->src, m->tag, recv_at(i) + RECV_DUR, m->bytes);
				ncalls[r]++;
			}
		}
	}
	tail_at = send_at(ntruth) + MS;
	/* rank 3: a send to rank 5, which is not in the job's experiments,
	 * and one to MPI_PROC_NULL */
	if (r == 3) {
		call(w, pid, F(MPI_Send), 5, 9, tail_at, SEND_DUR, 0);
		message(w, pid, SONDE_MPI_SEND, F(MPI_Send), 5, 9, tail_at, 64);
		call(w, pid, F(MPI_Send), SONDE_MPI_PROC_NULL, 9, tail_at + MS, SEND_DUR, 0);
		ncalls[r] += 2;
	}
	call(w, pid, F(MPI_Bcast), 0, 0, tail_at + 2 * MS, 300 * US, 1024);
	call(w, pid, F(MPI_Allreduce), SONDE_MPI_NONE, 0, tail_at + 3 * MS, 400 * US, 16);
	call(w, pid, F(MPI_Barrier), SONDE_MPI_NONE, 0, tail_at + 4 * MS, 500 * US, 0);
	ncalls[r] += 3;
	/* a few CPU samples, so that the experiment has a profile */
	for (int k = 1; k <= 5; k++)
		sonde_expw_sample(w, pid, 0, T0 + (uint64_t)k * 10 * MS, 10 * MS, 7);
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%" PRIu64 "\" status=\"0\"/>\n", T0 + 60 * MS);
	if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0) {
		printf("# cannot write %s: %s\n", path, err);
		return -1;
	}
	return 0;
}

static int write_job(void)
{
	for (int r = 0; r < NRANKS; r++)
		if (write_rank(r) < 0)
			return -1;
	return 0;
}

/* The truth for the shell tests: lanes, calls per lane, the messages
 * (from rank, send time, to rank, receive time, bytes; ns since T0) and
 * the matrix's cells. */
static int write_truth(void)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/mpitruth.json", jobdir);
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "{\"lanes\":[0,1,2,3],\"calls\":[%zu,%zu,%zu,%zu],\"unmatched\":1,\"msgs\":[", ncalls[0], ncalls[1],
		ncalls[2], ncalls[3]);
	for (size_t i = 0; i < ntruth; i++) {
		uint64_t recv_end = recv_at(i) + RECV_DUR;

		fprintf(f, "%s[%d,%" PRIu64 ",%d,%" PRIu64 ",%" PRIu64 "]", i ? "," : "", truth[i].src, send_at(i) - T0,
			truth[i].dst, recv_end - T0, truth[i].bytes);
	}
	fputs("],\"matrix\":[", f);
	bool first = true;

	for (int a = 0; a < NRANKS; a++)
		for (int b = 0; b <= 5; b++) {
			uint64_t n = 0, bytes = 0;

			for (size_t i = 0; i < ntruth; i++)
				if (truth[i].src == a && truth[i].dst == b) {
					n++;
					bytes += truth[i].bytes;
				}
			if (a == 3 && b == 5) {
				n++;
				bytes += 64;
			}
			if (n) {
				fprintf(f, "%s[%d,%d,%" PRIu64 ",%" PRIu64 "]", first ? "" : ",", a, b, n, bytes);
				first = false;
			}
		}
	fputs("]}\n", f);
	return fclose(f);
}

static struct sonde_exp *exps[NRANKS];

static int open_job(void)
{
	for (int r = 0; r < NRANKS; r++) {
		char path[4200], err[512];

		snprintf(path, sizeof(path), "%s/M_r%d.er", jobdir, r);
		/* opened in reverse: lanes and sort indices come from the ranks */
		if (!(exps[NRANKS - 1 - r] = sonde_exp_open(path, err, sizeof(err)))) {
			printf("# cannot open %s: %s\n", path, err);
			return -1;
		}
	}
	return 0;
}

/* ---- chrome ------------------------------------------------------------------------ */

static char notes[2000];

static void note(void *arg, const char *msg)
{
	(void)arg;
	strncat(notes, msg, sizeof(notes) - strlen(notes) - 2);
	strcat(notes, "\n");
}

struct flow {
	uint64_t id;
	unsigned pid;
	uint64_t tid;
	double ts;
};

/* "ph":"s" and "f" lines, and the X event at a place */
static size_t flows_of(const char *doc, const char *ph, struct flow *out, size_t cap)
{
	size_t n = 0;
	char pat[32];

	snprintf(pat, sizeof(pat), "{\"ph\":\"%s\"", ph);
	for (const char *p = strstr(doc, pat); p; p = strstr(p + 1, pat)) {
		struct flow fl;
		const char *q = strstr(p, "\"id\":");

		if (!q || sscanf(q, "\"id\":%" SCNu64 ",\"pid\":%u,\"tid\":%" SCNu64 ",\"ts\":%lf", &fl.id, &fl.pid,
				 &fl.tid, &fl.ts) != 4)
			continue;
		if (n < cap)
			out[n++] = fl;
	}
	return n;
}

static const char *slice_name(const char *doc, unsigned pid, uint64_t tid, double ts)
{
	static char name[64];
	char pat[200];

	snprintf(pat, sizeof(pat), "\"cat\":\"mpi\",\"pid\":%u,\"tid\":%" PRIu64 ",\"ts\":%.3f,", pid, tid, ts);
	const char *p = strstr(doc, pat);

	if (!p || sscanf(strstr(p, "\"name\":\"") + 8, "%63[^\"]", name) != 1)
		return "(none)";
	return name;
}

static void test_chrome(void)
{
	group = "chrome";
	struct sonde_export_opts o;
	char err[512], *doc = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&doc, &len);

	sonde_export_opts_init(&o);
	o.note = note;
	notes[0] = '\0';
	int rc = sonde_export_write(f, sonde_export_find("chrome"), (const struct sonde_exp *const *)exps, NRANKS, &o,
				    err, sizeof(err));

	fclose(f);
	CHECK(rc == 0);
	if (rc) {
		printf("# %s\n", err);
		free(doc);
		return;
	}
	if (getenv("SONDE_TEST_SHOW"))
		printf("%s", doc);
	for (int r = 0; r < NRANKS; r++) {
		char want[200];

		snprintf(want, sizeof(want),
			 "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"rank %d (M_r%d.er [%d])\"}}",
			 1000 + r, 1000 + r, r, r, 1000 + r);
		/* (the writer's command is the experiment's name) */
		if (!strstr(doc, want)) {
			snprintf(want, sizeof(want), "\"name\":\"process_name\",\"pid\":%d,", 1000 + r);
			const char *p = strstr(doc, want);
			char got[120] = "(none)";

			if (p)
				sscanf(strstr(p, "\"args\":{\"name\":\"") + 16, "%119[^\"]", got);
			char pre[40];

			snprintf(pre, sizeof(pre), "rank %d (", r);
			CHECK_MSG(!strncmp(got, pre, strlen(pre)), "rank %d's process is named \"%s\"", r, got);
		} else {
			npass++;
		}
		snprintf(want, sizeof(want),
			 "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":%d,\"args\":{\"sort_index\":%d}}",
			 1000 + r, 1000 + r, r);
		CHECK_MSG(strstr(doc, want) != NULL, "rank %d's sort index", r);
	}
	/* the MPI track: tid 2^30 + 2^24 + tid, named */
	CHECK_MSG(strstr(doc, "\"thread_name\",\"pid\":1002,\"tid\":1090520042,\"args\":{\"name\":\"thread 1: MPI calls\"}") !=
			  NULL,
		  "rank 2's MPI track is named");
	size_t nx = 0;

	for (const char *p = strstr(doc, "\"ph\":\"X\",\"cat\":\"mpi\""); p; p = strstr(p + 1, "\"ph\":\"X\",\"cat\":\"mpi\""))
		nx++;
	CHECK_MSG(nx == ncalls[0] + ncalls[1] + ncalls[2] + ncalls[3], "%zu MPI calls as spans (want %zu)", nx,
		  ncalls[0] + ncalls[1] + ncalls[2] + ncalls[3]);

	struct flow s[128], fl[128];
	size_t ns = flows_of(doc, "s", s, 128), nf = flows_of(doc, "f", fl, 128);

	CHECK_MSG(ns == ntruth && nf == ntruth, "%zu flow starts and %zu ends (want %zu each: the matched messages)", ns, nf,
		  ntruth);
	CHECK_MSG(strstr(doc, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"mpi\",\"id\":") != NULL, "flow ends bind to the enclosing slice");
	/* each message: its arrow from its send's call to its receive's */
	bool used[128] = { false };

	for (size_t i = 0; i < ntruth; i++) {
		const struct msg *m = &truth[i];
		double ts = (double)(send_at(i) - T0) / 1e3, tr = (double)(recv_at(i) - T0) / 1e3;
		bool found = false;

		for (size_t k = 0; k < ns && !found; k++) {
			if (used[k] || s[k].pid != 1000u + (unsigned)m->src || s[k].ts != ts)
				continue;
			for (size_t j = 0; j < nf; j++)
				if (fl[j].id == s[k].id) {
					found = fl[j].pid == 1000u + (unsigned)m->dst && fl[j].ts == tr &&
						s[k].tid == 0x41000000u + 1000u + (unsigned)m->src &&
						fl[j].tid == 0x41000000u + 1000u + (unsigned)m->dst;
					used[k] = found;
					if (found) {
						char sname[64];

						/* (slice_name's buffer is one: copied first) */
						snprintf(sname, sizeof(sname), "%s", slice_name(doc, s[k].pid, s[k].tid, s[k].ts));
						const char *rn = slice_name(doc, fl[j].pid, fl[j].tid, fl[j].ts);
						const char *wr = m->nonblocking ? "MPI_Wait" : "MPI_Recv";

						found = !strcmp(sname, m->nonblocking ? "MPI_Isend" : "MPI_Send") &&
							!strcmp(rn, wr);
					}
					break;
				}
		}
		CHECK_MSG(found, "message %zu: an arrow from rank %d's send at %.3f us to rank %d's receive at %.3f us", i,
			  m->src, ts, m->dst, tr);
	}
	CHECK_MSG(strstr(notes, "1 MPI messages matched nothing") != NULL, "the send to rank 5 is counted: notes \"%s\"",
		  notes);
	free(doc);
}

/* ---- the report's view ----------------------------------------------------------------- */

static void test_report(void)
{
	group = "report";
	char err[512], *doc = NULL, want[8192];
	static char shown[560];
	size_t len = 0, w = 0;
	FILE *f = open_memstream(&doc, &len);
	struct sonde_view_opts vo;

	memset(&vo, 0, sizeof(vo));
	int rc = sonde_mpi_report[0].run(f, (const struct sonde_exp *const *)exps, NRANKS, &vo, err, sizeof(err));

	fclose(f);
	CHECK(rc == 0);
	if (getenv("SONDE_TEST_SHOW"))
		printf("%s", doc);
	CHECK_MSG(strstr(doc, "{\"ranks\":[{\"rank\":0,\"exp\":3,") != NULL &&
			  strstr(doc, "{\"rank\":3,\"exp\":0,") != NULL,
		  "4 lanes in rank order");
	CHECK_MSG(strstr(doc, "\"nranks\":6,") != NULL, "the matrix spans ranks 0 to 5 (the send to 5)");
	snprintf(want, sizeof(want), "\"calls_total\":%zu,", ncalls[0] + ncalls[1] + ncalls[2] + ncalls[3]);
	snprintf(shown, sizeof(shown), "%.500s", want);
	CHECK_MSG(strstr(doc, want) != NULL, "every call: %s", shown);
	/* the messages in send order, which is the truth's */
	w = (size_t)snprintf(want, sizeof(want), "\"msgs_total\":%zu,\"unmatched\":1,\"msgs\":[", ntruth);
	for (size_t i = 0; i < ntruth; i++)
		w += (size_t)snprintf(want + w, sizeof(want) - w, "%s[%d,%" PRIu64 ",%d,%" PRIu64 ",%" PRIu64 "]",
				      i ? "," : "", truth[i].src, send_at(i) - T0, truth[i].dst,
				      recv_at(i) + RECV_DUR - T0, truth[i].bytes);
	snprintf(want + w, sizeof(want) - w, "]");
	CHECK_MSG(strstr(doc, want) != NULL, "every message from its send to its receive, exactly");
	/* the matrix */
	w = (size_t)snprintf(want, sizeof(want), "\"matrix\":[");
	bool first = true;

	for (int a = 0; a < NRANKS; a++)
		for (int b = 0; b <= 5; b++) {
			uint64_t n = 0, bytes = 0;

			for (size_t i = 0; i < ntruth; i++)
				if (truth[i].src == a && truth[i].dst == b) {
					n++;
					bytes += truth[i].bytes;
				}
			if (a == 3 && b == 5) {
				n++;
				bytes += 64;
			}
			if (n) {
				w += (size_t)snprintf(want + w, sizeof(want) - w, "%s[%d,%d,%" PRIu64 ",%" PRIu64 "]",
						      first ? "" : ",", a, b, n, bytes);
				first = false;
			}
		}
	snprintf(want + w, sizeof(want) - w, "]}");
	snprintf(shown, sizeof(shown), "%.500s", want);
	CHECK_MSG(strstr(doc, want) != NULL, "the matrix's cells: %s", shown);
	free(doc);
}

static int no_pair(void *arg, const struct sonde_mpi_pair *p)
{
	(void)arg;
	(void)p;
	return -1; /* none expected: matching fails if one comes */
}

/* An experiment without MPI data: no flows, no lanes, process names as
 * before. */
static void test_match_none(void)
{
	group = "match";
	struct sonde_exp *one[1] = { exps[0] };
	long lost = sonde_mpi_match((const struct sonde_exp *const *)one, 1, no_pair, NULL);

	/* rank 3 alone: its sends and receives all lack their other end
	 * (the send to MPI_PROC_NULL has none to lack) */
	size_t nm;

	sonde_exp_mpi_msgs(exps[0], &nm);
	CHECK_MSG(lost == (long)nm, "rank 3 alone: %ld of %zu messages match nothing", lost, nm);
}

int main(int argc, char **argv)
{
	traffic();
	if (argc == 3 && !strcmp(argv[1], "--write")) {
		snprintf(jobdir, sizeof(jobdir), "%s", argv[2]);
		if (mkdir(jobdir, 0777) < 0 && errno != EEXIST) {
			perror(jobdir);
			return 1;
		}
		return write_job() < 0 || write_truth() < 0;
	}
	snprintf(jobdir, sizeof(jobdir), "/tmp/sonde-test-mpitl-XXXXXX");
	if (!mkdtemp(jobdir) || write_job() < 0 || open_job() < 0) {
		printf("not ok - cannot write or open the job\n");
		return 1;
	}
	test_chrome();
	test_report();
	test_match_none();
	for (int r = 0; r < NRANKS; r++)
		sonde_exp_close(exps[r]);
	if (!getenv("SONDE_TEST_KEEP")) {
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", jobdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", jobdir);
	}
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
