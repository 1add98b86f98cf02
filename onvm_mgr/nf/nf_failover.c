/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_failover.c -- local resiliency on the manager side.  The standby
 * promotes itself (it wakes on the robust liveness lock long before the dead
 * active's pidfd fires); the manager only hands the slot over -- its watch,
 * its records -- and then keeps the slot protected: a fresh standby once the
 * promotion is visible, and, for standbys that fail before they park (a bad
 * config, an EAL that cannot start, a state layout that does not match), an
 * exponential back-off instead of a fork on every pass of the control thread.
 * All of it runs on the control thread with ctl_lock held.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "nf_ctl.h"

/* Back-off after a standby that failed before parking: 100 ms, doubling,
 * at most 30 s; a standby that parks resets it. */
#define SB_RETRY_FIRST_MS 100
#define SB_RETRY_MAX_MS	  30000

/*
 * The active of slot `id` died and its standby lives: the standby promotes
 * itself, so the manager reclaims nothing -- rings, held packets and state
 * now belong to the standby -- and only moves its watch to the standby's pid.
 */
void
mgr_nf_hand_over(uint16_t id)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	struct mgr_nf_priv *p = &mgr.nf_priv[id];
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = id};
	uint32_t dead_lcore = s->lcore_id;

	MGR_ASSERT_CTL_LOCKED();
	mgr.nf_deaths++; /* nf_failovers counts once the promotion shows */
	NFCTL_LOG(WARNING, "NF '%s' (pid %d, instance %u) died: standby pid %d takes over",
		  s->name, p->pid, id, p->sb_pid);
	p->pid = p->sb_pid;
	p->pidfd = p->sb_pidfd;
	p->sb_pidfd = -1;
	if (p->pidfd >= 0)
		epoll_ctl(mgr.epfd, EPOLL_CTL_MOD, p->pidfd, &ev);
	/* A container standby's runtime CLI is the active's now (the dead
	 * one's, if still there, is retired). */
	mgr_nf_launcher_move(&p->sb_launcher_pidfd, &p->launcher_pidfd, id | LAUNCHER_TAG);
	memcpy(p->ctr_name, p->sb_ctr_name, sizeof(p->ctr_name));
	p->sb_ctr_name[0] = '\0';
	p->ctr_ns_pid = p->sb_ctr_ns_pid;
	p->sb_ctr_ns_pid = 0;
	/* A container standby that has not registered yet: the slot's watch is
	 * its runtime CLI until it does (nf_ipc.c: it then promotes at once,
	 * finding the liveness lock orphaned). */
	p->launcher_watched = p->sb_launcher_watched;
	p->sb_launcher_watched = false;
	__atomic_store_n(&s->pid, p->sb_pid, __ATOMIC_RELEASE);
	if (s->standby_lcore != UINT32_MAX)
		s->lcore_id = s->standby_lcore;
	s->standby_lcore = UINT32_MAX;
	__atomic_store_n(&s->standby_pid, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&s->standby_parked, 0, __ATOMIC_RELAXED);
	p->sb_pid = 0;
	p->exited = false;
	p->killed = false;
	p->hb_moved_ns = 0;
	/* A standby started by hand has an lcore id of its own: the dead one's
	 * mempool cache is nobody's now (and empty unless the NF called DPDK's
	 * mbuf functions itself; see reclaim_held()). */
	if (dead_lcore != s->lcore_id)
		mgr_nf_cache_give_back(dead_lcore, s->name, id);
	/* It may have promoted already (EOWNERDEAD comes before the pidfd):
	 * the slot's failovers against sb_failovers tells. */
	p->awaiting_promotion = true;
	p->handed_ns = mgr_now_ns();
}

/* A standby of slot `id` failed (`why`): count it, say so, and hold the next
 * launch back -- 100 ms after the first failure in a row, doubling, at most
 * 30 s. */
void
mgr_nf_standby_failed(uint16_t id, const char *why, uint64_t now_ns)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	struct mgr_nf_priv *p = &mgr.nf_priv[id];
	uint64_t delay_ms = (uint64_t)SB_RETRY_FIRST_MS << RTE_MIN(p->sb_failures, 16u);

	MGR_ASSERT_CTL_LOCKED();
	delay_ms = RTE_MIN(delay_ms, (uint64_t)SB_RETRY_MAX_MS);
	p->sb_failures++;
	s->standby_failures = p->sb_failures;
	mgr.nf_standby_failures++;
	snprintf(p->sb_last_failure, sizeof(p->sb_last_failure), "%s", why);
	p->sb_retry_ns = now_ns + delay_ms * 1000000ULL;
	NFCTL_LOG(ERR, "standby of NF '%s' (instance %u): %s (%u in a row); next standby in "
		       "%" PRIu64 " ms",
		  s->name, id, why, p->sb_failures, delay_ms);
}

/*
 * The standby of slot `id` exited without being promoted.  One that leaves
 * cleanly (status 0: its active stopped, or the node) is not a failure; one
 * that exits with an error or a signal is.
 */
void
mgr_nf_standby_exited(uint16_t id, uint64_t now_ns)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	struct mgr_nf_priv *p = &mgr.nf_priv[id];

	MGR_ASSERT_CTL_LOCKED();
	if (__atomic_load_n(&s->standby_pid, __ATOMIC_RELAXED) == p->sb_pid) {
		__atomic_store_n(&s->standby_pid, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&s->standby_parked, 0, __ATOMIC_RELAXED);
		s->standby_lcore = UINT32_MAX;
	}
	if (p->sb_exit_failed && !mgr.shm->shutting_down) {
		char why[64];

		if (p->sb_exit_status < 0) /* a container NF: not our child */
			snprintf(why, sizeof(why), "pid %d exited before parking", p->sb_pid);
		else
			snprintf(why, sizeof(why), "pid %d %s %d%s", p->sb_pid,
				 p->sb_exit_signal ? "killed by signal" : "exited with status",
				 p->sb_exit_status, p->sb_has_parked ? "" : " before parking");
		mgr_nf_standby_failed(id, why, now_ns);
	}
	p->sb_pid = 0;
	p->sb_exited = false;
	p->sb_exit_failed = false;
	p->sb_has_parked = false;
	/* Its container's CLI: reaped apart (it may outlive its NF a while). */
	mgr_nf_launcher_retire(&p->sb_launcher_pidfd);
	if (p->sb_launcher_watched) /* it never registered: its container may remain */
		mgr_ctr_remove(p->sb_ctr_name);
	p->sb_launcher_watched = false;
	p->sb_killed = false;
	p->sb_ctr_ns_pid = 0;
	p->sb_ctr_name[0] = '\0';
}

/* A standby parked: the slot is protected; forget past failures. */
void
mgr_nf_standby_parked(uint16_t id)
{
	struct mgr_nf_priv *p = &mgr.nf_priv[id];

	MGR_ASSERT_CTL_LOCKED();
	p->sb_has_parked = true;
	if (p->sb_failures != 0)
		NFCTL_LOG(INFO, "NF '%s' (instance %u) is protected again after %u failed "
				"standbys",
			  mgr.shm->nfs[id].name, id, p->sb_failures);
	p->sb_failures = 0;
	p->sb_retry_ns = 0;
	mgr.shm->nfs[id].standby_failures = 0;
}

/* Should the control thread start a standby for slot `id` now? */
bool
mgr_nf_standby_due(uint16_t id, uint64_t now_ns)
{
	const struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	const struct mgr_nf_priv *p = &mgr.nf_priv[id];

	MGR_ASSERT_CTL_LOCKED();
	return __atomic_load_n(&s->status, __ATOMIC_RELAXED) == ONVM_NF_RUNNING && s->launched &&
	       p->cfg_index >= 0 && mgr.cfg.nfs[p->cfg_index].local &&
	       __atomic_load_n(&s->standby_pid, __ATOMIC_RELAXED) == 0 && p->sb_pid == 0 &&
	       !p->awaiting_promotion && !mgr.shm->shutting_down && now_ns >= p->sb_retry_ns;
}
