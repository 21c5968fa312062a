/*
 * sonde collect and MPI (doc/sonde-collect.md, "MPI programs").
 *
 * Two launch forms give one tree, a founder with a sub-experiment
 * M_r<rank>.er per rank:
 *   sonde collect -M on [opts] mpirun [ARGS] -- PROGRAM [ARGS]
 *     records the launcher in the founder and runs
 *     mpirun [ARGS] <this sonde> collect [opts] PROGRAM [ARGS]
 *     with the founder's path in SONDE_MPI_FOUNDER (forwarded by the
 *     launcher to every node: -x for Open MPI, -genv for MPICH), so that
 *     each rank is the second form's;
 *   mpirun -np N sonde collect [opts] PROGRAM [ARGS]
 *     each sonde collect finds its rank in the launcher's environment
 *     and records its process in FOUNDER/M_r<rank>.er: the founder is
 *     SONDE_MPI_FOUNDER's, or the one that the ranks of the job agree on
 *     (join_founder).
 * Either way a rank's process records with SONDE_EXPDIR the founder and
 * SONDE_LINEAGE "M_r<rank>", so its descendants are M_r<rank>_f1.er and
 * so on, beside it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <sonde/format.h>
#include <sonde/settings.h>

#include "collect_settings.h"

/* ---- the rank, from the launcher's environment ------------------------------------ */

static long env_long(const char *name)
{
	const char *v = getenv(name);
	char *end;

	if (!v || !*v)
		return -1;
	errno = 0;
	long n = strtol(v, &end, 10);
	return errno || *end || n < 0 || n > INT32_MAX ? -1 : n;
}

/* Hydra (MPICH) puts no job id in the environment: its proxy on this
 * node, by pid and start time, names the job for the ranks of this node. */
static void hydra_job(char *out, size_t cap)
{
	char path[64], buf[1024] = "";
	unsigned long long start = 0;
	pid_t pp = getppid();
	struct utsname u;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pp);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fgets(buf, sizeof buf, f)) {
			/* field 22, counted after the command's closing ')' */
			char *p = strrchr(buf, ')');
			for (int field = 2; p && field < 22; field++)
				p = strchr(p + 1, ' ');
			if (p)
				start = strtoull(p + 1, NULL, 10);
		}
		fclose(f);
	}
	uname(&u);
	snprintf(out, cap, "hydra:%s:%ld:%llu", u.nodename, (long)pp, start);
}

int collect_mpi_rank_env(struct collect_opts *o)
{
	static const struct {
		const char *launcher, *rank, *size;
	} forms[] = {
		{ "OPENMPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "MPICH", "PMI_RANK", "PMI_SIZE" },
		{ "PMIX", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "SLURM", "SLURM_PROCID", "SLURM_NTASKS" },
	};
	const char *job;

	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		long r = env_long(forms[i].rank);
		if (r < 0)
			continue;
		o->mpi_rank = r;
		o->mpi_size = env_long(forms[i].size);
		o->mpi_launcher = forms[i].launcher;
		if ((job = getenv(SONDE_ENV_MPI_JOB)) && *job)
			snprintf(o->mpi_job, sizeof o->mpi_job, "%s", job);
		else if ((job = getenv("OMPI_MCA_ess_base_jobid")) && *job)
			snprintf(o->mpi_job, sizeof o->mpi_job, "ompi:%s", job);
		else if ((job = getenv("PMIX_NAMESPACE")) && *job)
			snprintf(o->mpi_job, sizeof o->mpi_job, "pmix:%s", job);
		else if ((job = getenv("SLURM_JOB_ID")) && *job)
			snprintf(o->mpi_job, sizeof o->mpi_job, "slurm:%s.%s", job,
				 getenv("SLURM_STEP_ID") ? getenv("SLURM_STEP_ID") : "");
		else if (i == 1)
			hydra_job(o->mpi_job, sizeof o->mpi_job);
		else
			snprintf(o->mpi_job, sizeof o->mpi_job, "unknown");
		return 1;
	}
	return 0;
}

/* ---- which MPI a program or a launcher is ------------------------------------------ */

/* The MPI of a shared object's name: Open MPI's libraries are libmpi*.so.40
 * (libmpi, libmpi_mpifh, libmpi_cxx, ...), MPICH's libmpich*.so.12 and its
 * libmpi*.so.12 (libmpi, libmpifort, libmpicxx). */
static const char *mpi_of_soname(const char *so)
{
	const char *v = strstr(so, ".so.");

	if (strncmp(so, "libmpi", 6) || !v)
		return NULL;
	if (!strncmp(so, "libmpich", 8) || !strncmp(v, ".so.12", 6))
		return "MPICH";
	if (!strncmp(v, ".so.40", 6))
		return "OPENMPI";
	return NULL;
}

const char *collect_needed_match(const char *path, const char *(*match)(const char *soname))
{
	const char *which = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;

	while (e && !which && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize && !which; i++) {
			GElf_Dyn dyn;
			const char *so;

			if (gelf_getdyn(d, (int)i, &dyn) && dyn.d_tag == DT_NEEDED &&
			    (so = elf_strptr(e, sh.sh_link, dyn.d_un.d_val)))
				which = match(so);
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return which ? which : "";
}

const char *collect_mpi_of_program(const char *path)
{
	return collect_needed_match(path, mpi_of_soname);
}

const char *collect_mpi_name(const char *which)
{
	return !strcmp(which, "OPENMPI") ? "Open MPI" : !strcmp(which, "MPICH") ? "MPICH" : which;
}

/* The MPI whose launcher is at path: by its real name (Debian's mpirun is
 * a chain of alternatives: mpirun.openmpi -> orterun), else by what its
 * --version says.  NULL: not an MPI launcher sonde knows. */
static const char *mpi_of_launcher(const char *path)
{
	static const struct {
		const char *name, *which;
	} names[] = {
		{ "orterun", "OPENMPI" },      { "prterun", "OPENMPI" },    { "mpirun.openmpi", "OPENMPI" },
		{ "mpiexec.openmpi", "OPENMPI" }, { "mpiexec.hydra", "MPICH" }, { "mpirun.mpich", "MPICH" },
		{ "mpiexec.mpich", "MPICH" },  { "hydra", "MPICH" },
	};
	char real[PATH_MAX];
	const char *base;

	if (!realpath(path, real))
		return NULL;
	base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(base, names[i].name))
			return names[i].which;
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (strncmp(base, "mpirun", 6) && strncmp(base, "mpiexec", 7))
		return NULL; /* not run to ask: it could be anything */
	char cmd[PATH_MAX + 64], line[512];
	const char *which = NULL;

	snprintf(cmd, sizeof cmd, "'%s' --version 2>&1 </dev/null", real);
	FILE *p = strchr(real, '\'') ? NULL : popen(cmd, "r");
	while (p && fgets(line, sizeof line, p))
		if (!which && strstr(line, "Open MPI"))
			which = "OPENMPI";
		else if (!which && (strstr(line, "HYDRA") || strstr(line, "MPICH")))
			which = "MPICH";
	if (p)
		pclose(p);
	return which;
}

/* ---- the founder that the ranks of a job share ---------------------------------------- */

#define MARKER "mpi_job"

/* The job id in founder's marker into out; 0, or -1 when it has none
 * (yet). */
static int read_marker(const char *founder, char *out, size_t cap)
{
	char path[PATH_MAX + 16], line[256];

	snprintf(path, sizeof path, "%s/" MARKER, founder);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int rc = -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "job=", 4)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(out, cap, "%s", line + 4);
			rc = 0;
		}
	fclose(f);
	return rc;
}

/* The job of a founder another rank is making: its marker comes a moment
 * after its mkdir; waited for while the directory is young. */
static int wait_marker(const char *founder, char *out, size_t cap)
{
	for (int i = 0; i < 500; i++) {
		struct stat st;

		if (read_marker(founder, out, cap) == 0)
			return 0;
		if (stat(founder, &st) < 0 || time(NULL) - st.st_ctime > 10)
			return -1;
		usleep(10000);
	}
	return -1;
}

/* The rank that made the founder says whose it is: the marker (written
 * whole, then renamed into place, so no rank reads half of it) and a
 * log.xml that says the launcher was not recorded. */
static int write_founder(const struct collect_opts *o, const char *founder)
{
	char tmp[PATH_MAX + 64], path[PATH_MAX + 16];
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(path, sizeof path, "%s/log.xml", founder);
	FILE *f = fopen(path, "wx");
	if (f) {
		fprintf(f,
			"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<experiment format=\"%d\" collector=\"sonde %s\">\n"
			"<event kind=\"info\" time_ns=\"%llu\" text=\"the founder of MPI job %s (%s, %ld ranks): each "
			"rank was started under sonde collect; the launcher was not recorded\"/>\n</experiment>\n",
			SONDE_FORMAT_VERSION, SONDE_VERSION,
			(unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec, o->mpi_job,
			collect_mpi_name(o->mpi_launcher), o->mpi_size);
		if (fclose(f))
			return -1;
	}
	snprintf(tmp, sizeof tmp, "%s/." MARKER ".%ld", founder, (long)getpid());
	snprintf(path, sizeof path, "%s/" MARKER, founder);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "job=%s\nlauncher=%s\nsize=%ld\n", o->mpi_job, o->mpi_launcher, o->mpi_size);
	if (fclose(f) || rename(tmp, path) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Makes or joins path: 0 when it is this job's, 1 when it is another's
 * (or nobody's), -1 with errno on an error. */
static int make_or_join(const struct collect_opts *o, const char *path)
{
	char job[256];

	if (mkdir(path, 0755) == 0)
		return write_founder(o, path);
	if (errno != EEXIST)
		return -1;
	if (wait_marker(path, job, sizeof job) < 0)
		return 1;
	return strcmp(job, o->mpi_job) ? 1 : 0;
}

static int bad(const char *msg, const char *arg)
{
	fprintf(stderr, "sonde collect: %s '%s'\n", msg, arg);
	return 2;
}

/*
 * The founder the ranks of a job agree on, without talking: -o NAME's,
 * made by the first rank there and joined by the others (its marker names
 * the job; one of another job is not joined); or test.N.er: the one whose
 * marker is this job's, else the next free N, which every rank of the job
 * arrives at (a rank that finds test.N.er made by another job goes on to
 * N+1).  Returns 0 with the path in out, or an exit status.
 */
static int join_founder(const struct collect_opts *o, char *out, size_t cap)
{
	const char *dir = o->dir ? o->dir : ".";
	char dirbuf[PATH_MAX], job[256];
	const char *name = o->name, *slash = name ? strrchr(name, '/') : NULL;

	if (slash) {
		int len = (int)(slash - name);
		if (name[0] == '/')
			snprintf(dirbuf, sizeof dirbuf, "%.*s", len ? len : 1, name);
		else
			snprintf(dirbuf, sizeof dirbuf, "%s/%.*s", dir, len, name);
		dir = dirbuf;
		name = slash + 1;
	}
	if (name) {
		if ((size_t)snprintf(out, cap, "%s/%s", dir, name) >= cap)
			return bad("experiment path too long", o->name);
		int rc = make_or_join(o, out);
		if (rc < 0)
			return bad("cannot create", out);
		if (rc > 0)
			return bad("experiment already exists (not of this MPI job), not overwriting", out);
		return 0;
	}
	long next = 1;
	DIR *d = opendir(dir);
	if (!d)
		return bad("no such directory", dir);
	struct dirent *e;
	while ((e = readdir(d))) {
		long v;
		char tail[8];
		if (sscanf(e->d_name, "test.%ld%7s", &v, tail) != 2 || strcmp(tail, ".er"))
			continue;
		if (v >= next)
			next = v + 1;
		snprintf(out, cap, "%s/%s", dir, e->d_name);
		if (wait_marker(out, job, sizeof job) == 0 && !strcmp(job, o->mpi_job)) {
			closedir(d);
			return 0;
		}
	}
	closedir(d);
	for (int tries = 0; tries < 1000; tries++, next++) {
		if ((size_t)snprintf(out, cap, "%s/test.%ld.er", dir, next) >= cap)
			return bad("directory path too long", dir);
		int rc = make_or_join(o, out);
		if (rc < 0)
			return bad("cannot create", out);
		if (rc == 0)
			return 0;
	}
	return bad("cannot find a free experiment name in", dir);
}

/* sonde's libraries out of LD_PRELOAD: a rank's sonde collect inherits
 * the launcher's collector, inert there, which its own target must not
 * get twice. */
static void drop_sonde_preload(void)
{
	const char *pl = getenv("LD_PRELOAD");
	char keep[8192];
	size_t used = 0;

	if (!pl)
		return;
	while (*pl) {
		size_t len = strcspn(pl, ": ");
		const char *base = pl;
		for (const char *c = pl; c < pl + len; c++)
			if (*c == '/')
				base = c + 1;
		if (len && strncmp(base, "libsonde_", 9) && used + len + 2 < sizeof keep) {
			if (used)
				keep[used++] = ':';
			memcpy(keep + used, pl, len);
			used += len;
		}
		pl += len;
		pl += strspn(pl, ": ");
	}
	keep[used] = 0;
	if (used)
		setenv("LD_PRELOAD", keep, 1);
	else
		unsetenv("LD_PRELOAD");
}

/* Where a node's ranks record, said once per node (by its first local
 * rank, when the launcher says which that is). */
static void say_local(const struct collect_opts *o, const char *dir, const char *founder, int seen)
{
	long lr = env_long("OMPI_COMM_WORLD_LOCAL_RANK");

	if (lr < 0)
		lr = env_long("MPI_LOCALRANKID");
	if (lr < 0)
		lr = env_long("SLURM_LOCALID");
	if (lr > 0)
		return;
	if (founder && !seen)
		fprintf(stderr, "sonde collect: warning: the MPI job's founder '%s' is not on this node; its ranks record "
				"in '%s' (gather them: sonde gather FOUNDER %s)\n",
			founder, dir, dir);
	else
		fprintf(stderr, "sonde collect: the ranks on this node record in '%s' (SONDE_MPI_LOCALDIR; gather them: "
				"sonde gather FOUNDER %s)\n",
			dir, dir);
}

int collect_mpi_rank_setup(struct collect_opts *o)
{
	const char *given = getenv(SONDE_ENV_MPI_FOUNDER);
	char founder[PATH_MAX], sub[PATH_MAX + 64];
	struct stat st;
	int rc;

	const char *local = getenv(SONDE_ENV_MPI_LOCALDIR);

	drop_sonde_preload();
	if (given && *given) {
		/* the -M form's: made by the launcher's sonde collect; on a
		 * node that does not see it, the rank records node-locally */
		const char *base = strrchr(given, '/') ? strrchr(given, '/') + 1 : given;
		int seen = stat(given, &st) == 0 && S_ISDIR(st.st_mode);

		if (!seen && !(local && *local))
			local = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
		if (local && *local) {
			if ((size_t)snprintf(founder, sizeof founder, "%s/%s", local, base) >= sizeof founder)
				return bad("experiment path too long", local);
			if (mkdir(founder, 0755) < 0 && errno != EEXIST)
				return bad("cannot create", founder);
			say_local(o, founder, given, seen);
		} else {
			snprintf(founder, sizeof founder, "%s", given);
		}
	} else if (local && *local) {
		struct collect_opts lo = *o;
		const char *base = o->name && strrchr(o->name, '/') ? strrchr(o->name, '/') + 1 : o->name;

		lo.dir = local;
		lo.name = base;
		if ((rc = join_founder(&lo, founder, sizeof founder)))
			return rc;
		say_local(o, founder, NULL, 1);
	} else if ((rc = join_founder(o, founder, sizeof founder))) {
		return rc;
	}
	if (!realpath(founder, o->mpi_founder))
		return bad("cannot resolve", founder);
	snprintf(o->mpi_lineage, sizeof o->mpi_lineage, "M_r%ld", o->mpi_rank);
	snprintf(sub, sizeof sub, "%s/%s.er", o->mpi_founder, o->mpi_lineage);
	if (mkdir(sub, 0755) < 0 && errno == EEXIST) {
		/* Two processes of the job with one rank: nothing is lost, the
		 * second records beside the first, as a process of that rank. */
		fprintf(stderr,
			"sonde collect: warning: two processes claim MPI rank %ld of job %s ('%s' exists); this one "
			"(pid %ld) records in M_r%ld_p%ld.er\n",
			o->mpi_rank, o->mpi_job, sub, (long)getpid(), o->mpi_rank, (long)getpid());
		snprintf(o->mpi_lineage, sizeof o->mpi_lineage, "M_r%ld_p%ld", o->mpi_rank, (long)getpid());
		snprintf(sub, sizeof sub, "%s/%s.er", o->mpi_founder, o->mpi_lineage);
		if (mkdir(sub, 0755) < 0)
			return bad("cannot create", sub);
	} else if (errno != EEXIST && access(sub, F_OK) < 0) {
		return bad("cannot create", sub);
	}
	if ((size_t)snprintf(o->exp, sizeof o->exp, "%s", sub) >= sizeof o->exp)
		return bad("experiment path too long", sub);
	return 0;
}

void collect_mpi_rank_record(const struct collect_opts *o, FILE *f)
{
	fprintf(f, "<mpirank rank=\"%ld\" size=\"%ld\" launcher=\"%s\" job=\"", o->mpi_rank, o->mpi_size,
		o->mpi_launcher);
	for (const char *c = o->mpi_job; *c; c++)
		if (*c == '"' || *c == '<' || *c == '&')
			fprintf(f, "&#%d;", *c);
		else
			fputc(*c, f);
	fprintf(f, "\"/>\n");
}

/* ---- the -M form: the launcher's command -------------------------------------------- */

/* Options that stay with the founder: the experiment's name and place,
 * its notes, collect's own output, the dry run, -M itself. */
static int founder_only(char c)
{
	return strchr("ModCOn", c) != NULL;
}

int collect_mpi_launch(struct collect_opts *o, char **argv)
{
	char **a = o->argv;
	int sep = -1, n = 0;

	for (n = 0; a[n]; n++)
		if (sep < 0 && !strcmp(a[n], "--"))
			sep = n;
	if (sep < 0 || sep == n - 1) {
		fprintf(stderr, "sonde collect: -M needs the launcher, its arguments, --, then the program: "
				"sonde collect -M %s mpirun -np 4 -- ./prog\n",
			o->mpi);
		return 2;
	}
	char launcher[PATH_MAX];
	if (collect_resolve(a[0], launcher, sizeof launcher) < 0)
		return bad("cannot find MPI launcher", a[0]);
	const char *which = mpi_of_launcher(launcher);
	if (!which)
		return bad("-M: not an MPI launcher sonde knows (Open MPI's mpirun or MPICH's mpiexec.hydra):", a[0]);
	if (strcmp(o->mpi, "on") && strcmp(o->mpi, which)) {
		fprintf(stderr, "sonde collect: -M %s: '%s' is %s's launcher\n", o->mpi, a[0], collect_mpi_name(which));
		return 2;
	}
	o->mpi_launcher = which;
	char prog[PATH_MAX];
	if (collect_resolve(a[sep + 1], prog, sizeof prog) < 0)
		return bad("cannot find program", a[sep + 1]);
	const char *built = collect_mpi_of_program(prog);
	if (built && !*built)
		fprintf(stderr,
			"sonde collect: warning: '%s' is linked with neither Open MPI nor MPICH; its processes are "
			"recorded as ranks by the launcher's numbering, with no MPI data\n",
			prog);
	else if (built && strcmp(built, which))
		fprintf(stderr,
			"sonde collect: warning: '%s' is built with %s but '%s' is %s's launcher: each process will be "
			"a singleton, rank 0 of 1\n",
			prog, collect_mpi_name(built), a[0], collect_mpi_name(which));

	/* mpirun [ARGS] FORWARD... <sonde> collect [rank options] PROGRAM [ARGS] */
	char self[PATH_MAX];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	if (sl <= 0)
		return bad("cannot find sonde itself:", "/proc/self/exe");
	self[sl] = 0;
	static const char *const fwd[] = { SONDE_ENV_MPI_FOUNDER, "SONDE_COLLECTOR", SONDE_ENV_SIGNAL,
					   SONDE_ENV_CLOCK_SOURCE, SONDE_ENV_MPI_JOB, SONDE_ENV_MPI_LOCALDIR };
	int nfwd = (int)(sizeof fwd / sizeof fwd[0]);
	char **l = calloc((size_t)(n + 3 * nfwd + o->nopts * 2 + 8), sizeof *l);
	if (!l)
		return bad("out of memory", "");
	int k = 0;
	for (int i = 0; i < sep; i++)
		l[k++] = a[i];
	o->launch_fwd_at = k;
	for (int i = 0; i < nfwd; i++) {
		/* SONDE_MPI_FOUNDER is set for the launcher (collect_env) */
		if (i && !getenv(fwd[i]))
			continue;
		if (!strcmp(which, "OPENMPI")) {
			l[k++] = "-x";
			l[k++] = (char *)fwd[i];
		} else {
			l[k++] = "-genv";
			l[k++] = (char *)fwd[i];
			l[k++] = i ? getenv(fwd[i]) : o->expabs;
		}
	}
	l[k++] = strdup(self);
	l[k++] = "collect";
	for (int i = 0; i < o->nopts; i++) {
		const char *opt = argv[o->opt_at[i]];
		if (founder_only(opt[1]))
			continue;
		for (int j = o->opt_at[i]; j < o->opt_end[i]; j++)
			l[k++] = argv[j];
	}
	l[k++] = "--";
	for (int i = sep + 1; i < n; i++)
		l[k++] = a[i];
	l[k] = NULL;
	o->argv = l;
	/* The launcher itself: recorded in the founder, not its daemons,
	 * proxies nor the ranks' sonde collect, which record the ranks. */
	o->follow = "off";
	for (int kd = 1; kd <= SONDE_KIND_MAX; kd++)
		if (sonde_kind_traced(kd) && !strcmp(sonde_kind_desc(kd)->name, "mpi"))
			o->trace[kd] = NULL;
	return 0;
}
