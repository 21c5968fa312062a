/*
 * The sampling handler's hooks (include/sonde/hooks.h): adding and
 * removing state providers and stack sources, in normal context.  The
 * handler's side, which calls them, is in sample.c; the table they share
 * is clock_internal.h's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock_internal.h"
#include "unwind.h"

struct hook_slot g_hooks[SONDE_HOOK_MAX];
_Atomic int g_hook_n[3];
_Atomic uint64_t g_hook_bad_states, g_hook_bad_frames, g_hook_skipped;

/* Serialises adding and removing (normal context only; a spin lock, as
 * clock.c's: tasks made by raw clone may register too). */
static _Atomic int g_hook_lock;

static void hook_lock(void)
{
	while (atomic_exchange_explicit(&g_hook_lock, 1, memory_order_acquire))
		syscall(SYS_sched_yield);
}

static void hook_unlock(void)
{
	atomic_store_explicit(&g_hook_lock, 0, memory_order_release);
}

static int hook_add(int type, uintptr_t fn, void *arg)
{
	if (!fn || t_state.in_hook)
		return -1;
	int saved = errno;
	int handle = -1;
	hook_lock();
	for (int i = 0; i < SONDE_HOOK_MAX; i++) {
		struct hook_slot *h = &g_hooks[i];
		if (atomic_load(&h->fn))
			continue;
		h->arg = arg;
		h->type = type;
		atomic_store(&h->fn, fn); /* after arg and type */
		atomic_fetch_add(&g_hook_n[type], 1);
		atomic_fetch_add(&g_hook_n[0], 1);
		handle = i + 1;
		break;
	}
	hook_unlock();
	errno = saved;
	return handle;
}

EXPORT int __sonde_hook_state_add(sonde_state_provider *fn, void *arg)
{
	return hook_add(HOOK_STATE, (uintptr_t)fn, arg);
}

EXPORT int __sonde_hook_stack_add(sonde_stack_source *fn, void *arg)
{
	return hook_add(HOOK_STACK, (uintptr_t)fn, arg);
}

EXPORT int __sonde_hook_jit_region(uint64_t lo, uint64_t hi, uint64_t entry_lo, uint64_t entry_hi)
{
	if (t_state.in_hook)
		return -1;
	hook_lock();
	int r = uw_jit_region(lo, hi, entry_lo, entry_hi);
	hook_unlock();
	return r;
}

EXPORT int __sonde_hook_remove(int handle)
{
	if (handle < 1 || handle > SONDE_HOOK_MAX || t_state.in_hook)
		return -1;
	int saved = errno;
	struct hook_slot *h = &g_hooks[handle - 1];
	hook_lock();
	if (!atomic_load(&h->fn)) {
		hook_unlock();
		errno = saved;
		return -1;
	}
	atomic_store(&h->fn, 0);
	atomic_fetch_sub(&g_hook_n[h->type], 1);
	atomic_fetch_sub(&g_hook_n[0], 1);
	/* A handler that counted itself in before fn went 0 may still be in
	 * the hook (on another thread: this one's handler runs to its end
	 * before this goes on).  Hooks are quick; the slot stays taken (the
	 * lock held) until they have left. */
	while (atomic_load(&h->users))
		syscall(SYS_sched_yield);
	h->arg = NULL;
	h->type = 0;
	hook_unlock();
	errno = saved;
	return 0;
}

/* In a fork child: a handler that was in a hook at the fork was on a
 * thread the child does not have, and a lock another thread held is
 * free.  The hooks stay registered (the child runs the same code). */
void hooks_fork_child(void)
{
	for (int i = 0; i < SONDE_HOOK_MAX; i++)
		atomic_store(&g_hooks[i].users, 0);
	atomic_store(&g_hook_lock, 0);
	atomic_store(&g_hook_bad_states, 0);
	atomic_store(&g_hook_bad_frames, 0);
	atomic_store(&g_hook_skipped, 0);
}

/* At the end of recording: what hooks gave that was not taken. */
void hooks_report(void)
{
	uint64_t st = atomic_exchange(&g_hook_bad_states, 0), fr = atomic_exchange(&g_hook_bad_frames, 0);
	uint64_t sk = atomic_exchange(&g_hook_skipped, 0);
	char msg[300];
	if (sk) {
		snprintf(msg, sizeof msg,
			 "the hooks were slow (two samples in a row took half the interval or more in their "
			 "hooks): %llu sample(s) were recorded without them, as the thread's state of CPU and "
			 "its native stack",
			 (unsigned long long)sk);
		log_event_text("warning", msg);
	}
	if (st) {
		snprintf(msg, sizeof msg,
			 "state providers gave %llu state(s) that are no state of CPU samples; those samples "
			 "were recorded as the providers after them or the CPU state said",
			 (unsigned long long)st);
		log_event_text("warning", msg);
	}
	if (fr) {
		snprintf(msg, sizeof msg,
			 "stack sources gave %llu result(s) that could not be taken (more frames than asked "
			 "for, or a place outside the stack or over another source's); those samples have "
			 "their stacks without them",
			 (unsigned long long)fr);
		log_event_text("warning", msg);
	}
}

const struct collector_module hooks_module = {
	.name = "hooks",
	.stop = hooks_report,
	.fork_child = hooks_fork_child,
};
