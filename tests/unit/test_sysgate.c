/*
 * The seccomp gate (collector/sysgate.c) against the kernel itself: for
 * hand-written filters and for random valid classic BPF programs, the
 * gate's verdict on a call must be the kernel's.  Each probe runs in a
 * child that installs the filter(s) and makes the call: the kernel lets it
 * through (the call returns), fails it (SECCOMP_RET_ERRNO), or ends the
 * child (KILL, TRAP with no handler).  The gate says whether the collector
 * may make the call: exactly when the kernel lets it through.  Probes use
 * calls that ignore their arguments (getppid, getuid, ...), so a filter
 * may test any argument.  The instruction pointer is not modelled (the
 * gate judges a call it has not made yet): random programs do not load it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

int sysgate_add(int strict, const void *prog);
void sysgate_commit(int idx);
void sysgate_drop(int idx);
int sysgate_allows6(long nr, long a1, long a2, long a3, long a4, long a5, long a6);
int sysgate_would_allow6(long nr, long a1, long a2, long a3, long a4, long a5, long a6);
uint32_t sysgate_run(const struct sock_filter *f, uint32_t len, const struct seccomp_data *d);
int sysgate_active(void);
long sonde_syscall(long n, ...);

#define MAXF 4
struct set {
	int n;
	struct sock_fprog prog[MAXF];
	struct sock_filter ins[MAXF][256];
};

enum { LET = 0, FAILED = 1, ENDED = 2, REFUSED = 3 };

/* What the kernel does with call nr(args) under the filters of s. */
static int kernel(const struct set *s, long nr, const long a[6])
{
	pid_t pid = fork();
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(9);
		for (int i = 0; i < s->n; i++)
			if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &s->prog[i]) < 0)
				_exit(REFUSED);
		errno = 0;
		long r = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		syscall(SYS_exit_group, r < 0 ? FAILED : LET);
		_exit(8);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	if (WIFSIGNALED(st))
		return ENDED;
	return WEXITSTATUS(st);
}

/* The gate's verdict under the filters of s (in this process, as the
 * collector would see them installed one by one). */
static int gate(const struct set *s, long nr, const long a[6])
{
	int idx[MAXF];
	for (int i = 0; i < s->n; i++) {
		idx[i] = sysgate_add(0, &s->prog[i]);
		sysgate_commit(idx[i]);
	}
	int ok = sysgate_allows6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	for (int i = s->n - 1; i >= 0; i--)
		sysgate_drop(idx[i]);
	return ok;
}

/* The prefix every filter here starts with: exit_group and exit pass,
 * so that a probe's child can report. */
static int prefix(struct sock_filter *f)
{
	int n = 0;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 1, 0);
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 0, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return n;
}

static const long probes[] = { __NR_getppid, __NR_getuid, __NR_getgid, __NR_geteuid, __NR_getegid, __NR_getpgrp };

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

static const uint32_t actions[] = { SECCOMP_RET_ALLOW, SECCOMP_RET_ALLOW, SECCOMP_RET_LOG,
				    SECCOMP_RET_ERRNO | 13, SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD,
				    SECCOMP_RET_TRAP, SECCOMP_RET_TRACE };

/* A random program the kernel accepts: loads of seccomp_data's words
 * (not the instruction pointer), ALU, scratch memory, forward jumps,
 * returns of constants or of A. */
static int random_prog(struct sock_filter *f, int cap)
{
	int n = prefix(f);
	/* The kernel refuses a load of scratch memory no path stored first. */
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_IMM, rnd() % 7);
	for (int m = 0; m < 16; m++)
		f[n++] = (struct sock_filter)BPF_STMT(BPF_ST, (uint32_t)m);
	int len = n + 4 + (int)(rnd() % 40);
	if (len > cap - 1)
		len = cap - 1;
	static const uint32_t offs[] = { 0, 4, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60 };
	while (n < len) {
		uint32_t left = (uint32_t)(len - n); /* instructions after this one, the last return included */
		switch (rnd() % 12) {
		case 0:
		case 1:
			f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offs[rnd() % 14]);
			break;
		case 2: {
			/* seccomp takes no BPF_MOD; shifts by a constant of 32 or
			 * more, and division by a constant 0, are refused. */
			static const uint16_t ops[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_AND, BPF_OR, BPF_XOR, BPF_LSH, BPF_RSH, BPF_DIV };
			uint16_t op = ops[rnd() % 9];
			uint32_t k = rnd() % 4 ? rnd() % 64 : rnd();
			if (op == BPF_LSH || op == BPF_RSH)
				k %= 32;
			if (op == BPF_DIV && !k)
				k = 3;
			f[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | op | (rnd() % 3 ? BPF_K : BPF_X), k);
			break;
		}
		case 3:
			f[n++] = (struct sock_filter)BPF_STMT(BPF_ST, rnd() % 16);
			break;
		case 4:
			f[n++] = (struct sock_filter)BPF_STMT(BPF_LDX | BPF_W | BPF_MEM, rnd() % 16);
			break;
		case 5:
			f[n++] = (struct sock_filter)BPF_STMT(BPF_MISC | (rnd() % 2 ? BPF_TAX : BPF_TXA), 0);
			break;
		case 6:
			f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_IMM, rnd() % 300);
			break;
		case 7:
			f[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_NEG, 0);
			break;
		case 8:
			f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, actions[rnd() % 8]);
			break;
		default: {
			static const uint16_t jops[] = { BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET };
			uint8_t jt = (uint8_t)(rnd() % left), jf = (uint8_t)(rnd() % left);
			uint32_t k = rnd() % 3 ? probes[rnd() % 6] : rnd() % 4 ? rnd() % 256 : rnd();
			if (rnd() % 8 == 0 && left > 1)
				f[n++] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, rnd() % (left - 1));
			else
				f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | jops[rnd() % 4] | (rnd() % 4 ? BPF_K : BPF_X), k,
								      jt, jf);
			break;
		}
		}
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | (rnd() % 4 ? BPF_K : BPF_A), actions[rnd() % 8]);
	return n;
}

static void compare(const struct set *s, long nr, const long a[6], int *agree, int *total, int *refused)
{
	int k = kernel(s, nr, a);
	if (k == REFUSED) {
		(*refused)++;
		return;
	}
	int g = gate(s, nr, a);
	(*total)++;
	if ((k == LET) == !!g) {
		(*agree)++;
	} else if (*total - *agree <= 5) {
		printf("# disagree: nr %ld args %lx %lx: kernel %d gate %d; %d filters, first %u insns\n", nr,
		       (unsigned long)a[0], (unsigned long)a[1], k, g, s->n, s->prog[0].len);
	}
}

int main(void)
{
	struct set s;
	long a[6] = { 0 };

	group = "hand-written";
	/* An allow-list by number: getuid passes, getppid is killed. */
	{
		memset(&s, 0, sizeof s);
		struct sock_filter *f = s.ins[0];
		int n = prefix(f);
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getuid, 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
		s.n = 1;
		s.prog[0] = (struct sock_fprog){ (unsigned short)n, f };
		CHECK(gate(&s, __NR_getuid, a) == 1);
		CHECK(gate(&s, __NR_getppid, a) == 0);
		CHECK_I(kernel(&s, __NR_getuid, a), LET);
		CHECK_I(kernel(&s, __NR_getppid, a), ENDED);
		/* The arch word: a filter for another architecture kills. */
		f[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
		f[1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 2, 0);
		f[2] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
		f[3] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
		f[4] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		s.prog[0].len = 5;
		CHECK(gate(&s, __NR_getppid, a) == 1);
	}
	/* Arguments: getuid passes only with its second argument's low word
	 * 0x2407 (ioctl's PERF_EVENT_IOC_ID is checked this way). */
	{
		memset(&s, 0, sizeof s);
		struct sock_filter *f = s.ins[0];
		int n = prefix(f);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]));
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x2407, 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
		s.n = 1;
		s.prog[0] = (struct sock_fprog){ (unsigned short)n, f };
		long ok[6] = { 0, 0x2407 }, no[6] = { 0, 0x2408 };
		CHECK(gate(&s, __NR_getuid, ok) == 1);
		CHECK(gate(&s, __NR_getuid, no) == 0);
		CHECK_I(kernel(&s, __NR_getuid, ok), LET);
		CHECK_I(kernel(&s, __NR_getuid, no), FAILED);
	}
	/* Two filters: the most restrictive verdict wins (LOG and ALLOW
	 * pass, ERRNO does not). */
	{
		memset(&s, 0, sizeof s);
		for (int i = 0; i < 2; i++) {
			struct sock_filter *f = s.ins[i];
			int n = prefix(f);
			f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, i ? __NR_getgid : __NR_getuid, 0, 1);
			f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 5);
			f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, i ? SECCOMP_RET_LOG : SECCOMP_RET_ALLOW);
			s.prog[i] = (struct sock_fprog){ (unsigned short)n, f };
		}
		s.n = 2;
		CHECK(gate(&s, __NR_getuid, a) == 0);
		CHECK(gate(&s, __NR_getgid, a) == 0);
		CHECK(gate(&s, __NR_getppid, a) == 1);
	}
	/* The gate is idle without filters, and a call it refuses is not
	 * made: EPERM, whatever the kernel would have said. */
	{
		CHECK(!sysgate_active());
		memset(&s, 0, sizeof s);
		struct sock_filter *f = s.ins[0];
		int n = prefix(f);
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		struct sock_fprog p = { (unsigned short)n, f };
		int idx = sysgate_add(0, &p);
		CHECK(idx >= 0);
		CHECK(!sysgate_active()); /* not before its commit */
		CHECK(sysgate_would_allow6(__NR_getppid, 0, 0, 0, 0, 0, 0) == 0);
		sysgate_commit(idx);
		CHECK(sysgate_active());
		errno = 0;
		CHECK(sonde_syscall(__NR_getppid) == -1 && errno == EPERM);
		CHECK(sonde_syscall(__NR_getuid) == (long)getuid());
		sysgate_drop(idx);
		CHECK(!sysgate_active());
		/* A program the kernel refuses is refused here too. */
		struct sock_fprog bad = { 0, f };
		CHECK_I(sysgate_add(0, &bad), -2);
		CHECK_I(sysgate_add(0, (void *)8), -2);
		/* Strict mode: read, write, exit, rt_sigreturn. */
		idx = sysgate_add(1, NULL);
		sysgate_commit(idx);
		CHECK(sysgate_allows6(__NR_write, 1, 0, 0, 0, 0, 0) && sysgate_allows6(__NR_rt_sigreturn, 0, 0, 0, 0, 0, 0));
		CHECK(!sysgate_allows6(__NR_gettid, 0, 0, 0, 0, 0, 0) && !sysgate_allows6(__NR_exit_group, 0, 0, 0, 0, 0, 0));
		sysgate_drop(idx);
	}

	/* Every jump and ALU operation at its boundaries, gate and kernel. */
	{
		static const uint16_t jops[] = { BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET };
		static const uint16_t aops[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_AND, BPF_OR, BPF_XOR, BPF_LSH, BPF_RSH };
		int same = 0, all = 0;
		for (int j = 0; j < 4; j++)
			for (int d = -1; d <= 1; d++)
				for (int x = 0; x < 2; x++) {
					memset(&s, 0, sizeof s);
					struct sock_filter *f = s.ins[0];
					int n = prefix(f);
					uint32_t k = (uint32_t)(__NR_getuid + d);
					f[n++] = (struct sock_filter)BPF_STMT(BPF_LDX | BPF_IMM, k);
					f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
					f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | jops[j] | (x ? BPF_X : BPF_K), k, 0, 1);
					f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1);
					f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
					s.n = 1;
					s.prog[0] = (struct sock_fprog){ (unsigned short)n, f };
					all++;
					same += (kernel(&s, __NR_getuid, a) == LET) == !!gate(&s, __NR_getuid, a);
				}
		for (int o = 0; o < 9; o++)
			for (uint32_t k = 1; k < 40; k += 7) {
				memset(&s, 0, sizeof s);
				struct sock_filter *f = s.ins[0];
				int n = prefix(f);
				f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
				f[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | aops[o] | BPF_K, k % 32);
				/* The result decides: what C computes passes. */
				uint32_t A = __NR_getuid, K = k % 32, want = aops[o] == BPF_ADD ? A + K : aops[o] == BPF_SUB ? A - K :
					     aops[o] == BPF_MUL ? A * K : aops[o] == BPF_DIV ? (K ? A / K : 0) :
					     aops[o] == BPF_AND ? A & K : aops[o] == BPF_OR ? A | K : aops[o] == BPF_XOR ? A ^ K :
					     aops[o] == BPF_LSH ? A << K : A >> K;
				f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, want, 1, 0);
				f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1);
				f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
				s.n = 1;
				s.prog[0] = (struct sock_fprog){ (unsigned short)n, f };
				if (aops[o] == BPF_DIV && k % 32 == 0)
					continue;
				all++;
				same += (kernel(&s, __NR_getuid, a) == LET) == !!gate(&s, __NR_getuid, a);
			}
		printf("# %d of %d boundary programs agree with the kernel\n", same, all);
		CHECK_I(same, all);
	}

	group = "random programs against the kernel";
	int agree = 0, total = 0, refused = 0;
	for (int round = 0; round < 1000; round++) {
		memset(&s, 0, sizeof s);
		s.n = 1 + (round % 5 == 0) + (round % 11 == 0);
		for (int i = 0; i < s.n; i++)
			s.prog[i] = (struct sock_fprog){ (unsigned short)random_prog(s.ins[i], 256), s.ins[i] };
		long args[6];
		for (int i = 0; i < 6; i++)
			args[i] = rnd() % 2 ? (long)(rnd() % 8) : (long)((uint64_t)rnd() << 32 | rnd());
		compare(&s, probes[rnd() % 6], args, &agree, &total, &refused);
	}
	printf("# %d of %d random probes agree with the kernel (%d programs the kernel refused)\n", agree, total,
	       refused);
	CHECK(total >= 800);
	CHECK_I(agree, total);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
