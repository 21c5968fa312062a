#ifndef SONDE_COMMANDS_H
#define SONDE_COMMANDS_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef SONDE_VERSION
#define SONDE_VERSION "0.1.0"
#endif

/* Each returns the process exit status; argv[0] is the command's name. */
int cmd_agg(int argc, char **argv);
int cmd_archive(int argc, char **argv);
int cmd_collect(int argc, char **argv);
int cmd_gather(int argc, char **argv);

/* collect_clock.c: the page `sonde collect` shares with the collectors
 * (sonde/shared.h).  start creates it before the target is forked (tick:
 * keep the millisecond tick, for heap tracing; period_ns: the -S period,
 * 0 off) in the experiment and gives its path (SONDE_SHARED); run starts
 * the thread that keeps the tick and writes the periodic points; stop
 * ends it and removes the page. */
int collect_clock_start(const char *expdir, uint64_t period_ns, int tick, char *path_out, size_t cap);
int collect_clock_run(pid_t target);
/* Wait for the target's end and reap it (see collect_watch.c for why not
 * a plain waitpid). */
void collect_clock_wait(pid_t target, int *status);
void collect_clock_stop(void);
/* collect_watch.c: clock profiling's guard, from outside the target. */
void collect_watch_init(pid_t child, int calls_ok);
uint64_t collect_watch(void *head, const char *expdir);
/* collect_counters.c: counter overflow profiling (-h).  check opens each
 * counter on sonde collect itself before the target starts (raw events
 * resolved first): 0, or 2 with a one-line error on stderr naming the
 * counter and why; env writes SONDE_COUNTERS for the collector (0, or -1
 * when it does not fit); list prints the counters this machine counts. */
struct sonde_hwc;
#include <stdio.h>
int collect_counters_check(struct sonde_hwc *c, int n);
/* collect_kernel.c: kernel call stacks (-k on).  check opens the clock
 * counter with kernel call stacks on sonde collect itself: 0, or 2 with a
 * one-line error (no clock profiling, no permission and what would give
 * it); syms copies /proc/kallsyms into the experiment (0, or 1 when it
 * cannot be written; a warning when the addresses are hidden). */
struct collect_opts;
int collect_kernel_check(const struct collect_opts *o);
int collect_kernel_syms(const char *expdir);
/* The integer a /proc or /sys file holds (perf_event_paranoid), -100
 * when it cannot be read. */
int collect_read_int(const char *path);
/* collect.c: the experiment directory of o (-o, -d; else test.N.er),
 * made unless dry: 0, or 2 with a one-line error. */
int collect_make_experiment(const struct collect_opts *o, char *path, size_t cap, int dry);
/* collect_attach.c: sonde collect -P PID, from outside the process. */
int collect_attach(struct collect_opts *o, int argc, char **argv);
int collect_attach_check(const struct collect_opts *o);
void collect_attach_signals(void);
/* Whether pid runs: a zombie its parent has not reaped has ended. */
int collect_attach_alive(pid_t pid);
extern volatile sig_atomic_t collect_attach_stop;
/* collect_jattach.c: sonde collect -P PID of a JVM, through its attach
 * mechanism; 1 in *done when it took the job (else -P from outside). */
int collect_java_attach(struct collect_opts *o, int argc, char **argv, int *done);
/* collect.c: the collector's path; an experiment's end as sonde collect
 * writes it (collect_close); a directory removed, an XML line appended */
int find_collector(char *out, size_t cap);
void collect_close(const char *expabs, const char *ev, int archive);
void remove_tree(const char *path);
void collect_append(const char *exp, const char *file, const char *text);
int cmd_kernel(int argc, char **argv);
int collect_counters_env(const struct sonde_hwc *c, int n, char *out, size_t cap);
void collect_counters_list(FILE *f);
int cmd_export(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_print(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* expopen.c: opens the experiment at path and (for a founder, unless
 * flags has SONDE_TREE_ALONE) its sub-experiments into the tree t
 * (reader/exptree.h: sonde_exp_tree_add).  What cannot be opened is said
 * on stderr as "CMD: ..." and the rest still opened; returns 0, or -1
 * when something was not. */
struct sonde_exp_tree;
int cmd_open_experiment(const char *cmd, const char *path, struct sonde_exp_tree *t, unsigned flags);

#endif
