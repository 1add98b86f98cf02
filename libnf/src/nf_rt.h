/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_rt.h -- real-time priority with a cap the kernel enforces (nf_rt.c).
 * Self-contained (no EAL), so the unit tests run it on its own.
 */
#ifndef NF_RT_H
#define NF_RT_H

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

struct nfl_rt {
	bool on; /* this thread is at SCHED_FIFO by nfl_rt_enter() */
	int saved_policy;
	struct sched_param saved_param;
	struct rlimit saved_limit;
	struct sigaction saved_action;
};

/* The calling thread to SCHED_FIFO priority 1, the kernel cutting it back to
 * its own policy after `cap_us` of CPU without blocking.  Returns true, or
 * false with nothing changed (no CAP_SYS_NICE, already real-time, a hard
 * RLIMIT_RTTIME too low to cap with a signal).  One thread per process. */
bool nfl_rt_enter(struct nfl_rt *rt, uint64_t cap_us);

/* Back to the thread's own policy, limit and SIGXCPU action (no-op if not
 * on).  The thread that entered. */
void nfl_rt_exit(struct nfl_rt *rt);

/* Did the kernel's cap fire since the last nfl_rt_enter()? */
bool nfl_rt_revoked(void);

#endif /* NF_RT_H */
