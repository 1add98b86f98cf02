/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_standby.c -- local resiliency's standby: park on the active's liveness
 * lock without using the CPU, and when the active dies, promote: recover the
 * state, take over its rings and its batch, and go on as the active.
 *
 * Whether to promote.  The robust lock says the active is gone (EOWNERDEAD)
 * or let go of it (0).  Neither alone means "take over":
 *   - an active in nf_fini() sets `leaving` before it unregisters; if it dies
 *     there, the manager is already taking the slot down, so the standby
 *     exits instead of promoting into a slot nobody routes to;
 *   - a standby started by hand may park before its active has even taken
 *     the lock: getting the lock then means nothing, and it waits on --
 *     unless the manager has handed the slot to it (the active died before
 *     ever holding the lock: slot->pid is then the standby's).
 * And a standby whose state recovery fails refuses to promote: it says why,
 * counts it, and leaves the slot to the manager.
 *
 * Scheduling around a failover.  The dying NF's threads (its main thread and
 * EAL's control threads) exit on their CPUs, and the last one tears the
 * address space down in the kernel: ~3 ms here, with few preemption points on
 * a PREEMPT_NONE kernel.  A standby woken at normal priority queues behind
 * that.  So the standby parks at SCHED_FIFO (it sleeps: no CPU used) and keeps
 * that priority through promotion and its first batch, until the dead
 * process is gone (its pidfd) -- at most PROMOTION_FIFO_MAX_NS -- then goes
 * back to its own policy.  Promoted, it moves to the CPUs the active ran on.
 * Without CAP_SYS_NICE all of this quietly degrades to normal priority.  The
 * cap is the kernel's too (RLIMIT_RTTIME, nf_rt.c), not only ours.
 *
 * Real-time priority buys the promotion its CPU, never a wait: every wait
 * (a full TX ring, an idle spin, a sleep) leaves it first (nfl_rt_leave()) --
 * but for a blocking sleep that ends with the work it waits for (a remote
 * standby's park and its wait for the takeover's first packet, nf_loop.c:
 * blocked, it holds no CPU; spinning or yielding at real-time priority never),
 * promotion itself only does bounded work and emits what the TX ring takes
 * without waiting (the run loop finishes the rest at normal priority), and
 * a promoted NF whose CPUs include one of the manager's data lcores leaves
 * it before it moves there.  A real-time thread waiting on a CPU the manager
 * uses starves the very lcore that would end its wait: the hardening review
 * measured node-wide stalls of ~950 ms (the kernel's RT throttling budget),
 * and with sched_rt_runtime_us = -1 it would be a livelock.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "nf_private.h"

#define PROMOTION_FIFO_MAX_NS (20 * 1000 * 1000ULL)
#define PARK_WAIT_NS	      (100 * 1000 * 1000L) /* a stop request is seen this fast */
#define PARK_RETRY_NS	      (1000 * 1000L)	   /* lock free but not the active's yet */

enum park_result { PARK_EXIT, PARK_PROMOTE };

/* A pidfd of the process the slot names as its active, unless that is
 * us, or in a pid namespace of our own we cannot open the manager's pids
 * (then the active counts as gone: the real-time window ends with the
 * failover's own work, never later). */
static void
watch_active(struct nf_ctx *nf, pid_t pid)
{
	if (nf->dead_pidfd >= 0)
		close(nf->dead_pidfd);
	nf->dead_pidfd = -1;
	nf->watched_pid = pid;
	if (pid > 0 && pid != nf->mgr_view_pid && nf->mgr_view_pid == getpid())
		nf->dead_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Before parking, whatever can be done ahead of a failover: the real-time
 * priority, and the pidfd of the active (~15 us here at promotion). */
static void
park_priority(struct nf_ctx *nf)
{
	nf->dead_pidfd = -1;
	watch_active(nf, __atomic_load_n(&nf->slot->pid, __ATOMIC_ACQUIRE));
	nfl_rt_enter(&nf->rt, PROMOTION_FIFO_MAX_NS / 1000);
}

void
nfl_rt_leave(struct nf_ctx *nf)
{
	if (unlikely(nf->rt.on))
		nfl_rt_exit(&nf->rt);
}

static void
restore_priority(struct nf_ctx *nf)
{
	nfl_rt_leave(nf);
	if (nf->dead_pidfd >= 0)
		close(nf->dead_pidfd);
	nf->dead_pidfd = -1;
}

/* Do the CPUs this thread may run on include one of the manager's data
 * lcores' (the shared tables' mgr_cpus)? */
bool
nfl_on_mgr_cpus(struct nf_ctx *nf, const cpu_set_t *cpus)
{
	cpu_set_t mine, shared;

	if (cpus == NULL) {
		if (pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine) != 0)
			return true;
		cpus = &mine;
	}
	CPU_AND(&shared, cpus, &nf->shm->mgr_cpus);
	return CPU_COUNT(&shared) > 0;
}

/* Promoted: watch the dead active until it is gone; move to its CPUs --
 * at normal priority if the manager's data lcores run on any of them. */
static void
promoted_placement(struct nf_ctx *nf, pid_t dead_pid)
{
	const cpu_set_t *cpus = &nf->slot->active_cpus;
	cpu_set_t here;

	nf->fifo_until_ns = nfl_mono_ns() + PROMOTION_FIFO_MAX_NS;
	/* Normally the pid watched since parking.  After a hand-over to a
	 * standby that registered late, the slot already names us: there is
	 * no dead process left to watch. */
	if (dead_pid != nf->watched_pid)
		watch_active(nf, dead_pid);
	if (!nf->rt.on && nf->dead_pidfd >= 0) {
		close(nf->dead_pidfd);
		nf->dead_pidfd = -1;
	}
	/* No CPUs recorded (an active that died before it wrote them): we stay
	 * where we are, so the same rule for these. */
	if (nfl_on_mgr_cpus(nf, CPU_COUNT(cpus) > 0 ? cpus : NULL))
		nfl_rt_leave(nf);
	/* Parked where the active ran (standby_cpus): nothing to move. */
	if (CPU_COUNT(cpus) > 0 &&
	    (pthread_getaffinity_np(pthread_self(), sizeof(here), &here) != 0 ||
	     !CPU_EQUAL(&here, cpus))) {
		int r;

		r = pthread_setaffinity_np(pthread_self(), sizeof(*cpus), cpus);
		if (r != 0)
			NF_LOG(WARNING, "promotion: cannot move to the active's CPUs: %s",
			       strerror(r));
	}
}

static bool
dead_active_gone(struct nf_ctx *nf)
{
	struct pollfd p = {.fd = nf->dead_pidfd, .events = POLLIN};

	return nf->dead_pidfd < 0 || poll(&p, 1, 0) != 0;
}

static void
deadline_in(struct timespec *ts, long ns)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += ns;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/*
 * Block on the active's liveness lock without using the CPU (the timed wait
 * only exists so a stop request is noticed) until there is something to do:
 * promote, or exit (see the top of the file for which is which).
 */
static enum park_result
park(struct nf_ctx *nf)
{
	struct onvm_nf_slot *slot = nf->slot;

	for (;;) {
		struct timespec ts;
		int r;

		deadline_in(&ts, PARK_WAIT_NS);
		r = pthread_mutex_clocklock(&slot->alive_lock, CLOCK_MONOTONIC, &ts);
		if (r == EOWNERDEAD) {
			pthread_mutex_consistent(&slot->alive_lock);
			if (!__atomic_load_n(&slot->leaving, __ATOMIC_ACQUIRE))
				return PARK_PROMOTE;
			pthread_mutex_unlock(&slot->alive_lock);
			NF_LOG(WARNING, "%s: the active of instance %u died while it was stopping: "
					"not taking over a slot that is going away",
			       nf->name, nf->instance_id);
			return PARK_EXIT;
		}
		if (r == 0) {
			if (__atomic_load_n(&slot->leaving, __ATOMIC_ACQUIRE)) {
				/* The active unlocked: it stopped in order, so do we. */
				pthread_mutex_unlock(&slot->alive_lock);
				return PARK_EXIT;
			}
			if (__atomic_load_n(&slot->pid, __ATOMIC_ACQUIRE) == nf->mgr_view_pid)
				return PARK_PROMOTE; /* handed over before it held the lock */
			/* The active registered but has not taken the lock yet. */
			pthread_mutex_unlock(&slot->alive_lock);
			ts = (struct timespec){.tv_nsec = PARK_RETRY_NS};
			nanosleep(&ts, NULL);
		} else if (r != ETIMEDOUT) {
			NF_LOG(ERR, "standby: liveness lock: %s", strerror(r));
			return PARK_EXIT;
		}
		if (nf_stopping(nf))
			return PARK_EXIT;
	}
}

/*
 * Become the active of a slot whose NF just died, at any instruction:
 *  - state: roll the dead NF's batch forward (committed) or back (not); if
 *    that fails, refuse (return -EIO) -- the manager then reclaims the slot;
 *  - its rings: undo half-done ring operations (we are now their only
 *    consumer/producer on the NF side);
 *  - its batch (onvm_batch_owned()): packets dequeued but never processed are
 *    processed now; outputs of a batch whose state committed are emitted (the
 *    rest of them: the emitted prefix is known from the TX ring); outputs of
 *    a batch that did not commit are dropped and counted -- their effects
 *    were rolled back, like packets lost on a wire.  Nothing is emitted twice.
 *    Dropped packets go to the manager as DROP through the TX ring, so the
 *    mbufs change hands with one enqueue: a standby that dies here too
 *    leaves each of them either emitted or still held, never both.
 * Bounded work only: what the TX ring does not take now, the run loop emits
 * (at normal priority) before its first dequeue.
 */
static int
promote(struct nf_ctx *nf)
{
	struct onvm_nf_slot *slot = nf->slot;
	struct onvm_nf_batch *b = &slot->batch;
	struct onvm_batch_owned own;
	uint64_t woke = nfl_mono_ns(), seq = 0;

	if (nf->has_state) {
		char err[160];

		if (nf_state_recover(&nf->state, &seq, err, sizeof(err)) < 0) {
			__atomic_fetch_add(&slot->failover_refused, 1, __ATOMIC_RELAXED);
			NF_LOG(ERR, "%s: standby of instance %u refuses to promote: state recovery "
				    "failed: %s",
			       nf->name, nf->instance_id, err);
			return -EIO;
		}
	}
	/* Its crash hand-over was the dead one's: ours is armed once promoted. */
	__atomic_store_n(&slot->crash_armed, 0, __ATOMIC_RELAXED);
	/* The dead active may have been asleep: we are not (the manager would
	 * futex-wake us after every burst and never check our heartbeat). */
	__atomic_store_n(&slot->sleeping, 0, __ATOMIC_RELAXED);
	onvm_nf_rings_repair(slot);
	if (onvm_batch_owned(slot, &own) < 0) {
		/* A stray write of the dying NF: emit nothing we cannot account
		 * for (leaking a batch beats sending or freeing mbufs twice). */
		NF_LOG(ERR, "promotion: inconsistent batch record (held_n %u, rx_seen %u, tx_base "
			    "%u): its packets are lost",
		       b->held_n, b->rx_seen, b->tx_base);
		onvm_batch_record_settled(slot, onvm_batch_emitted(b, nf->tx), NULL);
	} else if (!own.unprocessed) {
		/* alloc_seen too: a later batch of ours must not inherit a
		 * stale one (it would read as a death inside nf_pkt_alloc). */
		onvm_batch_record_settled(slot, own.last, NULL);
	}
	nf->gen_enabled = __atomic_load_n(&slot->gen_enabled, __ATOMIC_ACQUIRE);

	if (own.unprocessed) {
		/* The NF's handlers are not ours to bound: never at real-time
		 * priority on a CPU the manager's data lcores use. */
		if (nfl_on_mgr_cpus(nf, NULL))
			nfl_rt_leave(nf);
		nfl_batch_open(nf, own.last);
		slot->failover_reprocessed += own.last;
		slot->failover_first_pkt_ns = nfl_mono_ns();
		nfl_batch_run_handlers(nf, own.last);
		nfl_batch_commit(nf);
	} else if (own.last > own.first) {
		if (b->committed || (nf->has_state && seq > b->seq_before)) {
			slot->failover_reemitted += own.last - own.first;
		} else {
			for (uint32_t i = own.first; i < own.last; i++) {
				struct onvm_pkt_meta *meta = nf_pkt_meta(b->held[i]);

				meta->action = ONVM_ACTION_DROP;
				meta->flags |= ONVM_PKT_F_FAILOVER_DROP;
			}
			slot->failover_dropped += own.last - own.first;
		}
	}
	nfl_fault_point(nf, NF_FAULT_PROMOTING);
	(void)nfl_batch_emit_try(nf); /* the rest: the run loop, at normal priority */
	/* The manager writes the same at hand-over, once the dead process's
	 * pidfd fires; telemetry shows the new active before that. */
	__atomic_store_n(&slot->pid, nf->mgr_view_pid, __ATOMIC_RELEASE);
	slot->failovers++;
	slot->failover_wake_ns = woke;
	nf->standby = false;
	nf->holds_alive_lock = true;
	nf->failover_pending = !own.unprocessed;
	nf->promoted_seq = seq;
	nf->promotion_unfinished = true;
	return 0;
}

/*
 * The rest of a promotion, once the first batch is out and the dead process
 * is gone: normal priority again; the process's other threads (EAL control
 * threads) follow the main thread to the active's CPUs, so that this NF's
 * own exit work later stays off its standby's CPU; and the log line (DPDK
 * logs to the console and syslog: ~85 us here, more than the promotion).
 */
void
nfl_standby_finish(struct nf_ctx *nf)
{
	const cpu_set_t *cpus = &nf->slot->active_cpus;
	pid_t self = (pid_t)syscall(SYS_gettid);
	struct dirent *e;
	DIR *d;

	/* Normally after the first batch, once the dead process is gone; with
	 * no traffic, when the priority's time is up anyway.  After a crash
	 * hand-over, the dead process waits for this CPU to die (at our
	 * priority it would not get it): the first batch is enough. */
	if ((nf->failover_pending || (!nf->crash_takeover && !dead_active_gone(nf))) &&
	    nfl_mono_ns() <= nf->fifo_until_ns)
		return;
	nf->promotion_unfinished = false;
	restore_priority(nf);
	if (CPU_COUNT(cpus) > 0 && (d = opendir("/proc/self/task")) != NULL) {
		while ((e = readdir(d)) != NULL) {
			pid_t tid = (pid_t)atoi(e->d_name);

			if (tid > 0 && tid != self)
				sched_setaffinity(tid, sizeof(*cpus), cpus);
		}
		closedir(d);
	}
	NF_LOG(WARNING,
	       "%s: promoted to active of instance %u (state at batch %" PRIu64
	       "; first packet %.1f us after waking; re-emitted %" PRIu64 ", dropped %" PRIu64
	       ", reprocessed %" PRIu64 ")",
	       nf->name, nf->instance_id, nf->promoted_seq,
	       (double)onvm_nf_failover_ns(nf->slot) / 1e3, nf->slot->failover_reemitted,
	       nf->slot->failover_dropped, nf->slot->failover_reprocessed);
}

int
nfl_standby_run(struct nf_ctx *nf)
{
	enum park_result r;
	pid_t dead;

	nfl_fault_point(nf, NF_FAULT_PARKING);
	park_priority(nf);
	__atomic_store_n(&nf->slot->standby_parked, 1, __ATOMIC_RELEASE);
	r = park(nf);
	__atomic_store_n(&nf->slot->standby_parked, 0, __ATOMIC_RELEASE);
	if (r == PARK_EXIT) {
		restore_priority(nf);
		return 0;
	}
	dead = __atomic_load_n(&nf->slot->pid, __ATOMIC_ACQUIRE);
	if (promote(nf) < 0) {
		/* The lock stays ours until we exit: no second standby of this
		 * slot can wake on it and promote on the same broken state. */
		restore_priority(nf);
		return -EIO;
	}
	nfl_crash_arm(nf); /* its own successor, once parked, is woken as fast */
	promoted_placement(nf, dead);
	nf->crash_takeover = nfl_crash_arrived(nf->slot);
	return 1;
}
