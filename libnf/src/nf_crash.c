/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_crash.c -- a crash of the NF's own making hands over to its standby at
 * once, instead of after the kernel has torn the process down.
 *
 * The standby waits on the active's robust liveness lock (nf_standby.c); the
 * kernel marks it "owner died" only when the dead thread exits, after the
 * whole thread group has been stopped: ~300 us here under load.  But the
 * commonest failure is not SIGKILL, it is the NF's own bug -- SIGSEGV,
 * SIGBUS, SIGFPE, SIGILL, abort() -- delivered to the thread that runs the
 * packets and holds the lock.  Its handler:
 *
 *   1. fences the process: the handler never returns to the code it
 *      interrupted, so from the faulting instruction on this thread touches
 *      no ring, batch record or state again -- exactly the situation of a
 *      SIGKILL at that instruction, which promotion already handles (rings
 *      repaired, batch rolled forward or back);
 *   2. records the hand-over in the slot (before the release below: after
 *      it, the slot is the standby's);
 *   3. takes the lock out of its thread's robust list (as glibc's unlock
 *      does: once the standby holds it, glibc links it into the standby's
 *      list through the mutex itself, and the kernel's walk of ours at exit
 *      would follow those links and miss every robust mutex after it), then
 *      does to the lock word what the kernel's robust-list walk would do on
 *      the thread's exit (its TID replaced by FUTEX_OWNER_DIED, the waiters
 *      bit kept, one waiter woken), so the parked standby returns from its
 *      wait with EOWNERDEAD now -- a futex wake, no teardown;
 *   4. if it woke a standby, waits (asleep, at most CRASH_WAIT_NS) until the
 *      standby runs on the CPUs it ran on: the standby moves there as it
 *      promotes, and a CPU busy in a dying process's exit (the address space
 *      of a DPDK process takes milliseconds to tear down, with few
 *      preemption points) kept it waiting 70-180 us to get there;
 *   5. dies of the same signal with its default action (queued again to the
 *      thread with its own siginfo, pending until the handler returns, so no
 *      instruction of the NF runs in between): the exit status and core
 *      dumps (fault address included) stay what the NF's developer expects.
 * The kernel's own walk at exit then finds the word no longer names this
 * thread and leaves it alone.
 *
 * Only the lock's owner hands over: a signal on another thread (an EAL
 * thread, a thread of the NF's own) would leave the packet thread running
 * next to its successor, so it takes the default path (the whole process
 * dies, and the kernel's robust-list walk wakes the standby).  SIGKILL and
 * the OOM killer cannot be caught: they keep that path too.  A signal whose
 * handler someone else installed first (the NF itself, a sanitizer) is left
 * to it.  ONVM_NF_CRASH_HANDOFF=0 turns the whole thing off.
 *
 * Everything the handler calls is async-signal-safe: atomics on the lock
 * word, get_robust_list(2), futex(2), clock_gettime(2), sigaction(2),
 * rt_tgsigqueueinfo(2), raise(3).  crash_wait is
 * a shared futex word like the lock's (no FUTEX_PRIVATE_FLAG).  The lock word
 * is glibc's (pthread_mutex_t.__data.__lock, the futex of a robust mutex;
 * onvm_robust.h, which refuses to build elsewhere).
 */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nf_private.h"
#include "onvm_robust.h"

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

/* How long a dying active waits for its standby to arrive on its CPUs. */
#define CRASH_WAIT_NS (2 * 1000 * 1000L)

/* What the handler needs, written before it is armed.  One per process:
 * the process has one slot it is the active of. */
static struct {
	pthread_mutex_t *lock;		/* the slot's alive_lock */
	struct onvm_nf_slot *slot;
	uint32_t armed_mask;		/* 1u << signal, for the signals we handle */
	uint32_t ours_mask;		/* of those, still with our handler ... */
	bool ours_checked;		/* ... once nfl_crash_check_handlers() ran */
	volatile sig_atomic_t enabled;	/* 0 once fenced, or in nf_fini */
} crash;

static void
crash_handler(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	int saved_errno = errno;
	uint32_t tid = (uint32_t)syscall(SYS_gettid);

	(void)uc;
	if (crash.enabled && crash.lock != NULL && onvm_robust_owner(crash.lock) == tid) {
		struct onvm_nf_slot *s = crash.slot;
		struct timespec ts;

		crash.enabled = 0; /* the fence: we never go back */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		s->crash_signal = (uint32_t)sig;
		s->crash_handoff_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		__atomic_fetch_add(&s->crash_handoffs, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&s->crash_wait, 1, __ATOMIC_RELAXED);
		if (onvm_robust_release_dead(crash.lock, tid) == ONVM_ROBUST_RELEASED_WOKE) {
			/* Out of the way until the standby runs here (it clears
			 * crash_wait and wakes us).  Reading the slot is all we
			 * do: it is the standby's now. */
			struct timespec wait = {.tv_nsec = CRASH_WAIT_NS};

			syscall(SYS_futex, &s->crash_wait, FUTEX_WAIT, 1, &wait, NULL, 0);
		}
		/* Dying at real-time priority (a promoted standby's first
		 * batch) would make its teardown preempt its successor. */
		syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, &(struct sched_param){0});
		/* The init of a pid namespace (an NF container without an
		 * init) ignores a signal queued by itself: the fence must not
		 * depend on it. */
		if (getpid() == 1)
			syscall(SYS_exit_group, 128 + sig);
	}
	/* Die of it, as without us.  The signal is blocked while its handler
	 * runs: the one queued here is delivered when the handler returns,
	 * before the interrupted instruction could run again -- with the
	 * fault's own siginfo (a core dump shows the address), or raised. */
	sigaction(sig, &dfl, NULL);
	if (si == NULL || syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, sig, si) != 0)
		raise(sig);
	errno = saved_errno;
}

/* A stack for the handler: a stack overflow is a SIGSEGV too. */
static int
alt_stack(void)
{
	size_t sz = 64 * 1024;
	long min = sysconf(_SC_SIGSTKSZ);
	stack_t st = {0}, cur;
	void *p;

	if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE))
		return 0; /* the thread has one already */
	if (min > 0 && (size_t)min * 4 > sz)
		sz = (size_t)min * 4;
	/* Populated: the signal frame (with the AVX state) is written there
	 * at the worst moment, and a fresh page costs a fault. */
	p = mmap(NULL, sz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	st.ss_sp = p;
	st.ss_size = sz;
	if (sigaltstack(&st, NULL) != 0) {
		int e = errno;

		munmap(p, sz);
		return -e;
	}
	return 0; /* kept for the life of the process */
}

/*
 * Install the handlers and the thread's alternate stack: ~20 us of system
 * calls, done at registration -- by a standby before it parks, not in its
 * promotion.  The handlers do nothing until nfl_crash_arm().
 */
void
nfl_crash_prepare(void)
{
	const char *env = getenv("ONVM_NF_CRASH_HANDOFF");

	if (env != NULL && strcmp(env, "0") == 0)
		return;
	if (crash.armed_mask == 0) {
		struct sigaction sa = {.sa_sigaction = crash_handler,
				       .sa_flags = SA_SIGINFO | SA_ONSTACK};
		int r = alt_stack();

		if (r < 0)
			NF_LOG(WARNING, "crash hand-over: no alternate signal stack (%s): a stack "
					"overflow takes the slow path",
			       strerror(-r));
		sigfillset(&sa.sa_mask);
		for (size_t i = 0; i < sizeof(crash_signals) / sizeof(crash_signals[0]); i++) {
			int sig = crash_signals[i];
			struct sigaction old;

			/* Someone else's handler (the NF's, a sanitizer's) stays. */
			if (sigaction(sig, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
			    old.sa_handler != SIG_DFL)
				continue;
			if (sigaction(sig, &sa, NULL) == 0)
				crash.armed_mask |= 1u << sig;
		}
	}
}

void
nfl_crash_arm(struct nf_ctx *nf)
{
	if (!nf->holds_alive_lock || crash.armed_mask == 0)
		return;
	crash.slot = nf->slot;
	crash.lock = &nf->slot->alive_lock;
	__atomic_store_n(&nf->slot->crash_armed, crash.armed_mask, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the fields above before `enabled` */
	crash.enabled = 1;
}

/* Promoted after a crash hand-over, and now on the dead active's CPUs: let
 * it go and die.  True if the death was a hand-over. */
bool
nfl_crash_arrived(struct onvm_nf_slot *slot)
{
	if (__atomic_exchange_n(&slot->crash_wait, 0, __ATOMIC_ACQ_REL) == 0)
		return false;
	syscall(SYS_futex, &slot->crash_wait, FUTEX_WAKE, 1, NULL, NULL, 0);
	return true;
}

/* Which armed signals still have our handler (an NF may install its own
 * after nf_init()): five sigaction() calls, which a standby makes before it
 * parks, not between its wake and its first packet. */
void
nfl_crash_check_handlers(void)
{
	uint32_t mask = 0;

	for (size_t i = 0; i < sizeof(crash_signals) / sizeof(crash_signals[0]); i++) {
		int sig = crash_signals[i];
		struct sigaction cur;

		if ((crash.armed_mask & (1u << sig)) && sigaction(sig, NULL, &cur) == 0 &&
		    (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == crash_handler)
			mask |= 1u << sig;
	}
	crash.ours_mask = mask;
	crash.ours_checked = true;
}

/*
 * At nf_run(): the hand-over holds only if this thread is the one that holds
 * the lock (else the packet thread would run on next to its successor), and
 * only for the signals whose handler is still ours (an NF may install its
 * own after nf_init()).  The slot's crash_armed says which.
 */
void
nfl_crash_check(struct nf_ctx *nf)
{
	uint32_t tid = (uint32_t)syscall(SYS_gettid), mask = 0;

	if (!crash.enabled || crash.slot != nf->slot)
		return;
	if (onvm_robust_owner(crash.lock) != tid) {
		NF_LOG(WARNING, "%s: nf_run() on another thread than nf_init(): no crash hand-over "
				"(a crash takes the kernel's path)",
		       nf->name);
	} else {
		if (!crash.ours_checked)
			nfl_crash_check_handlers();
		mask = crash.ours_mask;
		if (mask != crash.armed_mask)
			NF_LOG(INFO, "%s: the NF handles some crash signals itself (mask %#x of %#x): "
				     "no hand-over from those",
			       nf->name, mask, crash.armed_mask);
	}
	crash.enabled = mask != 0;
	__atomic_store_n(&nf->slot->crash_armed, mask, __ATOMIC_RELAXED);
}

void
nfl_crash_disarm(void)
{
	crash.enabled = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}
