/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf.h -- the NF life cycle on the manager side: launching NFs and their
 * standbys (processes or containers), registration over rte_mp, liveness
 * through pidfds and heartbeats, reclaiming a dead NF's mbufs, handing its
 * slot to its standby, service instance tables, and the state pool NF state
 * blocks come from.  What the rest of the manager calls; what these files
 * call of each other is in nf_ctl.h.
 *
 * What each file is for:
 *   ctl_thread.c       the control thread: pidfd/registration events, timers,
 *                      start time-outs, hung NFs, start-up wait and shutdown
 *   nf_ipc.c           rte_mp handlers on EAL's IPC thread: register,
 *                      unregister, state allocation
 *   nf_launch.c        binaries, CPU sets, fork/exec of actives and standbys
 *   nf_container.c     NFs in podman containers: run arguments, names, pids
 *                      in their namespaces, removal
 *   nf_reap.c          pidfd watches, exits, reclamation of a dead NF's mbufs
 *   nf_reaper.c        reaping dead NFs off the control thread
 *   nf_failover.c      standbys on the manager side: watch, hand-over of a slot
 *                      whose active died, re-protection
 *   nf_services.c      service instance tables (RCU), slot reset, status names
 *   nf_state_layout.c  the layout of an NF's state block from its requests
 *   state_pool.c       first-fit allocator of NF state blocks (state_pool.h)
 *   state_pool.h       its interface (pure C: unit-tested alone)
 *   nf_ctl.h           what the files above share; the locking rules
 *   nf.h               this interface
 */
#ifndef MGR_NF_H
#define MGR_NF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "onvm_common.h"

struct nf_state_layout;

/* Manager-private facts about one NF slot (not shared with NFs). */
struct mgr_nf_priv {
	int pidfd;		/* -1: none */
	pid_t pid;		/* the process pidfd watches */
	bool exited;		/* pidfd said the process is gone */
	bool held_reclaimed;	/* held[] and RX backlog already returned */
	bool killed;		/* we sent SIGKILL (start timeout, shutdown) */
	bool recovery_kill;	/* ... for its stateless chain's recovery (mgr_nf_kill) */
	/* mgr_nf_kill() of an NF still in its start: refused when it
	 * registers, so that it leaves by itself (see there) */
	bool kill_at_register;
	int cfg_index;		/* index in cfg.nfs if launched, else -1 */
	int exit_status;	/* from waitid, launched NFs only */
	bool exit_signaled;	/* ... a signal's number, not an exit status */
	/* The standby of this slot, if any (launched or hand-started). */
	pid_t sb_pid;
	int sb_pidfd;
	bool sb_exited;
	uint64_t sb_failovers;	/* the slot's failovers when this standby came */
	/* Handed over to a standby that has not promoted yet (it may still be
	 * starting up): until the slot's failovers pass sb_failovers. */
	bool awaiting_promotion;
	uint64_t handed_ns;	/* when (a standby has nf_start_timeout_ms to promote) */
	/* Standby launches: consecutive standbys that failed before parking
	 * (also slot->standby_failures), when the next may start (exponential
	 * back-off), and why the last one failed. */
	uint32_t sb_failures;
	uint64_t sb_retry_ns;
	char sb_last_failure[64];
	bool sb_has_parked;	/* the control thread saw this standby parked */
	bool sb_exit_failed;	/* it exited with an error or a signal ... */
	bool sb_exit_signal;	/* ... a signal: sb_exit_status is its number */
	int sb_exit_status;
	/* Hung-NF check: last heartbeat seen and when it last moved. */
	uint64_t hb_seen;
	uint64_t hb_moved_ns;
	/* A container NF (nf_container.c).  Until it registers, pidfd/pid
	 * above are the runtime CLI's (launcher_watched): its exit is the
	 * start's failure.  From then on they are the NF's, and the CLI's
	 * pidfd (launcher_pidfd, tagged LAUNCHER_TAG) is only reaped.  The
	 * same for the standby with the sb_ fields. */
	bool launcher_watched;
	int launcher_pidfd;
	char ctr_name[128];
	pid_t ctr_ns_pid; /* its pid in its container (nf_pidns.c), 0: none */
	bool sb_launcher_watched;
	bool sb_killed;		/* its container did not register in time */
	uint64_t sb_launch_ns;
	int sb_launcher_pidfd;
	char sb_ctr_name[128];
	pid_t sb_ctr_ns_pid;
};

/* epoll data of a standby's pidfd: slot id | STANDBY_TAG. */
#define STANDBY_TAG 0x10000u
/* ... of a container runtime CLI's pidfd once its NF registered: | LAUNCHER_TAG. */
#define LAUNCHER_TAG 0x20000u
/* ... of a process let go while still running (nf_reap.c): ORPHAN_TAG | index. */
#define ORPHAN_TAG 0x40000u
#define MGR_NF_PRIV_INIT                                                                     \
	((struct mgr_nf_priv){.pidfd = -1, .sb_pidfd = -1, .cfg_index = -1,                  \
			      .launcher_pidfd = -1, .sb_launcher_pidfd = -1})

/* epoll data of the registration eventfd and of link_watch.c's rtnetlink
 * socket in the control thread's epoll set (a standby's pidfd is slot id |
 * STANDBY_TAG, an active's the slot id). */
#define CTL_EV_REGISTRATION UINT32_MAX
#define CTL_EV_LINK (UINT32_MAX - 1)

/* A slot whose NF is neither free nor dead (any thread: one atomic read). */
static inline bool
mgr_nf_slot_live(const struct onvm_nf_slot *s)
{
	uint32_t st = __atomic_load_n(&s->status, __ATOMIC_ACQUIRE);

	return st != ONVM_NF_FREE && st != ONVM_NF_DEAD;
}

/* The NF life cycle.  Main thread at start-up: mgr_nf_ctl_init() (epoll,
 * IPC actions), mgr_nf_launch_all(), mgr_ctl_start() (the control thread),
 * mgr_nf_wait_ready(); at exit, once the data lcores have stopped,
 * mgr_ctl_stop().  Any lcore, never blocking: mgr_nf_stop_all() and
 * mgr_nf_kill_launched() only ask the control thread. */
int mgr_nf_ctl_init(void);
int mgr_nf_launch_all(void);
/* ctl_lock held: one more instance of NF entry `cfg_index` in a free slot
 * (a stateless chain's recovery); SIGKILL a launched NF (`why` logged). */
int mgr_nf_launch_cfg(int cfg_index);
int mgr_nf_kill(uint16_t id, const char *why);
int mgr_ctl_start(void);
int mgr_nf_wait_ready(uint32_t timeout_ms);
void mgr_ctl_stop(void);
void mgr_ctl_wake(void); /* any thread, never blocks: the control thread looks now */
/* Hand mbufs back to the pool through the TX unit: a preemptible thread
 * never does a pool ring operation while the data lcores run. */
struct rte_mbuf;
void mgr_nf_give_back(struct rte_mbuf **m, unsigned int n);
/* At exit, once the data lcores have stopped: the alloc rings of FREE slots
 * and what the control thread handed back return to the pool. */
void mgr_nf_alloc_rings_drain(void);
void mgr_ctl_free_drain(void);
void mgr_nf_stop_all(void);     /* ask every NF to leave its loop */
void mgr_nf_kill_launched(void); /* SIGKILL launched NFs still alive */
void mgr_nf_alive_lock_init(struct onvm_nf_slot *s);
const char *mgr_nf_status_str(uint32_t status);
/* ctl_lock held; wait for an RCU grace period (never from a data lcore). */
int mgr_service_add(uint16_t service, uint16_t instance);
int mgr_service_remove(uint16_t service, uint16_t instance);
/* Flow migration's flip: `buckets` (a bitmap of ONVM_FLOW_BUCKETS) to
 * rank `to`; returns after every unit routes by the new table. */
int mgr_service_move_buckets(uint16_t service, const uint64_t *buckets, uint16_t to);
/* The buckets at its instance on another node back to jump's ranks here,
 * without their state; how many. */
int mgr_service_unpeer(uint16_t service);
/* While pinned, an instance added to `service` gets no bucket of a moved
 * table (scale-out: moves give it some); else it gets jump's share. */
void mgr_service_pin(uint16_t service, bool pin);
/* An RCU grace period of the data units (rte_rcu_qsbr_synchronize). */
void mgr_rcu_wait(void);

/* nf_container.c -- main thread, before NFs launch and after the control
 * thread stopped: remove every container of this node (a no-op without
 * container NFs), waiting at most `timeout_ms`; `when` is for the log. */
#define CTR_REMOVE_WAIT_MS 15000
void mgr_ctr_remove_node(unsigned int timeout_ms, const char *when);

/* nf_state_layout.c: the layout of slot `s`'s state block from the regions
 * its NF requested (copied first: the NF writes them).  0, or <0 with a
 * sentence in err (may be NULL). */
int mgr_nf_state_layout(const struct onvm_nf_slot *s, struct nf_state_layout *layout, char *err,
			size_t errlen);

#endif /* MGR_NF_H */
