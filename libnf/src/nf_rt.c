/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_rt.c -- real-time priority with a cap the kernel enforces.
 *
 * A standby parks at SCHED_FIFO so that, when its active dies, it gets its
 * CPU at once (nf_standby.c says why).  Real-time priority must never outlast
 * a promotion's bounded work: a thread that spins at SCHED_FIFO starves every
 * normal thread of its CPU -- the manager's data lcore, other NFs, the
 * control thread that would kill it as hung -- until the kernel's RT
 * throttle, or forever with sched_rt_runtime_us = -1.  libnf leaves it before
 * any wait; this file makes the kernel enforce a cap as well, for the case
 * libnf cannot see (an NF's handler that loops):
 *
 *   RLIMIT_RTTIME (soft) = the cap: once the thread has run that long at
 *   real-time priority without blocking, the kernel sends SIGXCPU, and the
 *   handler puts the thread back to the policy it had.  Blocking (parking)
 *   resets the count.  Entering refuses -- changing nothing -- when the cap
 *   cannot be set (a hard limit at or below it would make the kernel send
 *   SIGKILL instead) or when the thread is already real-time (an operator's
 *   choice, not ours to lower).
 *
 * The count comes from the scheduler tick: on a nohz_full CPU with one task
 * the cap may not fire (libnf's own rule still holds there).  A handler that
 * blocks now and then resets the count: for a hang that sleeps, the bound is
 * the manager's heartbeat check.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nf_rt.h"

/* One real-time thread per process (the NF's): the handler needs globals. */
static pid_t rt_tid;
static int rt_policy;
static struct sched_param rt_param;
static volatile sig_atomic_t rt_revoked;

static void
on_sigxcpu(int sig)
{
	int saved = errno;
	pid_t self = (pid_t)syscall(SYS_gettid);

	(void)sig;
	/* Async-signal-safe: system calls only.  The thread that ran out is
	 * the one running (the kernel signals it); the saved one too. */
	syscall(SYS_sched_setscheduler, rt_tid, rt_policy, &rt_param);
	if (self != rt_tid)
		syscall(SYS_sched_setscheduler, self, rt_policy, &rt_param);
	rt_revoked = 1;
	errno = saved;
}

bool
nfl_rt_enter(struct nfl_rt *rt, uint64_t cap_us)
{
	struct sched_param fifo = {.sched_priority = 1};
	struct sigaction sa = {.sa_handler = on_sigxcpu};
	struct rlimit cap;

	if (rt->on && !nfl_rt_revoked())
		return true; /* entered already (a local standby promoted into a remote park) */
	nfl_rt_exit(rt); /* (the kernel's cap took it back: restore, then enter anew) */
	/* The kernel's view of this thread (glibc's pthread_getschedparam()
	 * answers from a cache that sched_setscheduler() does not update). */
	rt->saved_policy = (int)syscall(SYS_sched_getscheduler, 0);
	if (rt->saved_policy < 0 || syscall(SYS_sched_getparam, 0, &rt->saved_param) != 0 ||
	    rt->saved_policy == SCHED_FIFO || rt->saved_policy == SCHED_RR ||
	    getrlimit(RLIMIT_RTTIME, &rt->saved_limit) != 0)
		return false;
	cap = rt->saved_limit;
	cap.rlim_cur = cap_us;
	if (cap.rlim_max != RLIM_INFINITY && cap.rlim_max <= cap_us + 1000000)
		return false;
	rt_tid = (pid_t)syscall(SYS_gettid);
	rt_policy = rt->saved_policy;
	rt_param = rt->saved_param;
	rt_revoked = 0;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGXCPU, &sa, &rt->saved_action) != 0)
		return false;
	if (setrlimit(RLIMIT_RTTIME, &cap) != 0 ||
	    pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo) != 0) {
		setrlimit(RLIMIT_RTTIME, &rt->saved_limit);
		sigaction(SIGXCPU, &rt->saved_action, NULL);
		return false;
	}
	rt->on = true;
	return true;
}

void
nfl_rt_exit(struct nfl_rt *rt)
{
	if (!rt->on)
		return;
	/* Also after a revocation: glibc caches the policy it set. */
	pthread_setschedparam(pthread_self(), rt->saved_policy, &rt->saved_param);
	setrlimit(RLIMIT_RTTIME, &rt->saved_limit);
	sigaction(SIGXCPU, &rt->saved_action, NULL);
	rt->on = false;
}

bool
nfl_rt_revoked(void)
{
	return rt_revoked != 0;
}
