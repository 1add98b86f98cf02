/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * mgr_state.c -- the manager's one global state object, its log types,
 * its clock and the gate of its telemetry commands, kept apart from main()
 * so unit tests can link the data path and router alone.
 */
#include <errno.h>
#include <string.h>
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

/* ---- the telemetry gate (mgr.h) ---- */

/* The commands registered through mgr_tel_register(), and the gate. */
static struct {
	const char *cmd;
	telemetry_cb fn;
} tel_cmds[64];
static unsigned int tel_ncmds;
static uint32_t tel_inside; /* callbacks running (atomic) */
static bool tel_closed;	    /* (atomic) */

static int
tel_gate(const char *cmd, const char *params, struct rte_tel_data *d)
{
	telemetry_cb fn = NULL;
	int ret;

	for (unsigned int i = 0; i < __atomic_load_n(&tel_ncmds, __ATOMIC_ACQUIRE); i++)
		if (strcmp(tel_cmds[i].cmd, cmd) == 0) {
			fn = tel_cmds[i].fn;
			break;
		}
	if (fn == NULL)
		return -EINVAL;
	__atomic_fetch_add(&tel_inside, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&tel_closed, __ATOMIC_SEQ_CST)) {
		__atomic_fetch_sub(&tel_inside, 1, __ATOMIC_RELEASE);
		return -EBUSY;
	}
	ret = fn(cmd, params, d);
	__atomic_fetch_sub(&tel_inside, 1, __ATOMIC_RELEASE);
	return ret;
}

int
mgr_tel_register(const char *cmd, telemetry_cb fn, const char *help)
{
	/* (at start-up, before the telemetry thread can call any of them) */
	if (tel_ncmds == RTE_DIM(tel_cmds))
		return -ENOSPC;
	tel_cmds[tel_ncmds].cmd = cmd;
	tel_cmds[tel_ncmds].fn = fn;
	__atomic_store_n(&tel_ncmds, tel_ncmds + 1, __ATOMIC_RELEASE);
	return rte_telemetry_register_cmd(cmd, tel_gate, help);
}

void
mgr_telemetry_close(void)
{
	uint64_t until = mgr_now_ns() + 2000ull * 1000 * 1000;

	/* (seq_cst both ways, with tel_gate's: one of the two sees the other) */
	__atomic_store_n(&tel_closed, true, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&tel_inside, __ATOMIC_SEQ_CST) != 0)
		if (mgr_now_ns() < until) {
			usleep(1000);
		} else {
			MGR_LOG(WARNING, "a telemetry command still runs after 2 s: exiting anyway");
			break;
		}
}
