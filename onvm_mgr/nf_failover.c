/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_failover.c -- local resiliency on the manager side.  The standby
 * promotes itself (it wakes on the robust liveness lock long before the dead
 * active's pidfd fires); the manager only hands the slot over -- its watch,
 * its records -- and later starts a fresh standby (nf_launch.c).
 */
#include <sys/epoll.h>

#include "nf_ctl.h"

/*
 * The active of slot `id` died and its standby lives: the standby promotes
 * itself (it woke on the robust mutex long before this pidfd event), so the
 * manager reclaims nothing -- rings, held packets and state now belong to the
 * standby -- and only moves its watch to the standby's pid.  A fresh standby
 * is launched once the slot runs again.  ctl_lock held.
 */
void
mgr_nf_hand_over(uint16_t id)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	struct mgr_nf_priv *p = &mgr.nf_priv[id];
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = id};

	mgr.nf_deaths++;
	mgr.nf_failovers++;
	NFCTL_LOG(WARNING, "NF '%s' (pid %d, instance %u) died: standby pid %d takes over",
		  s->name, p->pid, id, p->sb_pid);
	p->pid = p->sb_pid;
	p->pidfd = p->sb_pidfd;
	p->sb_pidfd = -1;
	if (p->pidfd >= 0)
		epoll_ctl(mgr.epfd, EPOLL_CTL_MOD, p->pidfd, &ev);
	s->pid = p->sb_pid;
	s->standby_pid = 0;
	s->standby_parked = 0;
	p->sb_pid = 0;
	p->exited = false;
	p->killed = false;
	p->hb_moved_ns = 0;
	/* It may have promoted already (EOWNERDEAD comes before the pidfd):
	 * the slot's failovers against sb_failovers tells. */
	p->awaiting_promotion = true;
}
