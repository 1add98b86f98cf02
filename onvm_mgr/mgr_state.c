/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * mgr_state.c -- the manager's one global state object, its log types and
 * its clock, kept apart from main() so unit tests can link the data path
 * and router alone.
 */
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "mgr.h"

RTE_LOG_REGISTER_IMPL(mgr_logtype, "onvm.mgr", INFO);
RTE_LOG_REGISTER_IMPL(mgr_nf_logtype, "onvm.nf_ctl", INFO);
RTE_LOG_REGISTER_IMPL(mgr_dp_logtype, "onvm.datapath", INFO);

struct mgr mgr = {.stats_ms_override = -1, .epfd = -1, .ctl_evfd = -1};

__thread int mgr_self_unit = -1;

static pid_t
self_tid(void)
{
	static __thread pid_t tid;

	if (tid == 0)
		tid = gettid();
	return tid;
}

void
mgr_ctl_lock(void)
{
	MGR_ASSERT_NOT_DATA_UNIT();
	pthread_mutex_lock(&mgr.ctl_lock);
	__atomic_store_n(&mgr.ctl_lock_owner, self_tid(), __ATOMIC_RELAXED);
}

void
mgr_ctl_unlock(void)
{
	MGR_ASSERT_CTL_LOCKED();
	__atomic_store_n(&mgr.ctl_lock_owner, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&mgr.ctl_lock);
}

bool
mgr_ctl_lock_held(void)
{
	/* Only the owner itself can see its own id here: another thread's
	 * store of a different id, or 0, never makes this true for us. */
	return __atomic_load_n(&mgr.ctl_lock_owner, __ATOMIC_RELAXED) == self_tid();
}

void
mgr_ctl_wake(void)
{
	uint64_t one = 1;

	/* Non-blocking (EFD_NONBLOCK): a full counter already means "look". */
	if (mgr.ctl_evfd >= 0 && write(mgr.ctl_evfd, &one, sizeof(one)) < 0)
		return;
}

void
mgr_remote_run_init(void)
{
	uint64_t r = 0;

	/* Two starts of a node must differ: 64 random bits (the clock mixed
	 * in only should the kernel have no entropy to give). */
	while (r == 0) {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = mgr_now_ns() ^ ((uint64_t)getpid() << 40);
	}
	mgr.remote.run = r;
}

uint64_t
mgr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}
