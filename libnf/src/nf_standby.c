/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_standby.c -- local resiliency's standby: park on the active's liveness
 * lock without using the CPU, and when the active dies, promote: recover the
 * state, take over its rings and its batch, and go on as the active.
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
#include <rte_mempool.h>
#include <rte_ring.h>

#include "nf_private.h"

/*
 * Standby: block on the active's liveness lock without using the CPU.  The
 * timed wait only exists so a stop request is noticed (100 ms).  Returns 1 to
 * promote (the active died), 0 to exit (it stopped cleanly, or we are told to
 * stop).
 */
/*
 * Scheduling around a failover.  The dying NF's threads (its main thread and
 * EAL's control threads) exit on their CPUs, and the last one tears the
 * address space down in the kernel: ~3 ms here, with few preemption points on
 * a PREEMPT_NONE kernel.  A standby woken at normal priority queues behind
 * that.  So the standby parks at SCHED_FIFO (it sleeps: no CPU used) and
 * keeps the priority through promotion and its first batch, until the dead
 * process is gone (its pidfd) -- at most PROMOTION_FIFO_MAX_NS -- then goes
 * back to its own policy.  Promoted, it moves to the CPUs the active ran on.
 * Without CAP_SYS_NICE all of this quietly degrades to normal priority.
 */
#define PROMOTION_FIFO_MAX_NS (20 * 1000 * 1000ULL)

static void
park_priority(struct nf_ctx *nf)
{
	struct sched_param fifo = {.sched_priority = 1};

	nf->parked_fifo = false;
	nf->dead_pidfd = -1;
	if (pthread_getschedparam(pthread_self(), &nf->saved_policy, &nf->saved_param) != 0)
		return;
	nf->parked_fifo = pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo) == 0;
}

static void
restore_priority(struct nf_ctx *nf)
{
	if (nf->parked_fifo)
		pthread_setschedparam(pthread_self(), nf->saved_policy, &nf->saved_param);
	nf->parked_fifo = false;
	if (nf->dead_pidfd >= 0)
		close(nf->dead_pidfd);
	nf->dead_pidfd = -1;
}

/* Promoted: watch the dead active until it is gone; move to its CPUs. */
static void
promoted_placement(struct nf_ctx *nf, pid_t dead_pid)
{
	const cpu_set_t *cpus = &nf->slot->active_cpus;

	nf->fifo_until_ns = nfl_mono_ns() + PROMOTION_FIFO_MAX_NS;
	/* After a hand-over to a standby that registered late, the slot
	 * already names us: there is no dead process left to watch. */
	if (nf->parked_fifo && dead_pid > 0 && dead_pid != getpid())
		nf->dead_pidfd = (int)syscall(SYS_pidfd_open, dead_pid, 0);
	if (CPU_COUNT(cpus) > 0) {
		int r = pthread_setaffinity_np(pthread_self(), sizeof(*cpus), cpus);

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

static int
park(struct nf_ctx *nf)
{
	for (;;) {
		struct timespec ts;
		int r;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		r = pthread_mutex_timedlock(&nf->slot->alive_lock, &ts);
		if (r == EOWNERDEAD) {
			pthread_mutex_consistent(&nf->slot->alive_lock);
			return 1;
		}
		if (r == 0) {
			/* The active unlocked: it stopped in order, so do we. */
			pthread_mutex_unlock(&nf->slot->alive_lock);
			return 0;
		}
		if (r != ETIMEDOUT) {
			NF_LOG(ERR, "standby: liveness lock: %s", strerror(r));
			return 0;
		}
		if (nf_stopping(nf))
			return 0;
	}
}

/*
 * Become the active of a slot whose NF just died, at any instruction:
 *  - state: roll the dead NF's batch forward (committed) or back (not);
 *  - its mempool cache (our lcore id may be its): return it to the pool;
 *  - its rings: undo half-done ring operations (we are now their only
 *    consumer/producer on the NF side);
 *  - its batch: packets dequeued but never processed are processed now;
 *    outputs of a batch whose state committed are emitted (the rest of them:
 *    the emitted prefix is known from the TX ring); outputs of a batch that
 *    did not commit are dropped and counted -- their effects were rolled
 *    back, like packets lost on a wire.  Nothing is emitted twice.
 */
static void
promote(struct nf_ctx *nf)
{
	struct onvm_nf_slot *slot = nf->slot;
	struct onvm_nf_batch *b = &slot->batch;
	uint64_t woke = nfl_mono_ns(), seq = 0;
	uint32_t unprocessed = 0;

	if (nf->has_state) {
		char err[160];

		if (nf_state_recover(&nf->state, &seq, err, sizeof(err)) < 0)
			NF_LOG(ERR, "promotion: state recovery failed: %s", err);
	}
	if (slot->lcore_id < RTE_MAX_LCORE) {
		struct rte_mempool_cache *c = rte_mempool_default_cache(nf->pool, slot->lcore_id);

		if (c != NULL && c->len > 0)
			rte_mempool_cache_flush(c, nf->pool);
	}
	slot->lcore_id = rte_lcore_id();
	nf->rx->cons.head = nf->rx->cons.tail;
	nf->tx->prod.head = nf->tx->prod.tail;

	if (nf->rx->cons.tail != b->rx_seen) {
		unprocessed = nf->rx->cons.tail - b->rx_seen;
		if (unprocessed > ONVM_BURST) {
			NF_LOG(ERR, "promotion: inconsistent batch record (%u)", unprocessed);
			unprocessed = 0;
		}
	} else {
		uint32_t emitted = nf->tx->prod.tail - b->tx_base;

		if (emitted > b->held_n || b->held_n > ONVM_NF_HELD_MAX) {
			NF_LOG(ERR, "promotion: inconsistent batch record (%u of %u)", emitted,
			       b->held_n);
		} else if (b->committed || (nf->has_state && seq > b->seq_before)) {
			slot->failover_reemitted += b->held_n - emitted;
			nfl_batch_emit(nf);
		} else {
			rte_pktmbuf_free_bulk(&b->held[emitted], b->held_n - emitted);
			slot->failover_dropped += b->held_n - emitted;
			b->held_n = emitted;
		}
	}
	slot->pid = getpid();
	slot->failovers++;
	slot->failover_wake_ns = woke;
	nf->standby = false;
	nf->holds_alive_lock = true;
	nf->failover_pending = true;
	nf->promoted_seq = seq;
	nf->promotion_unfinished = true;
	if (unprocessed > 0) {
		nfl_batch_open(nf, unprocessed);
		slot->failover_reprocessed += unprocessed;
		nf->slot->failover_first_pkt_ns = nfl_mono_ns();
		nf->failover_pending = false;
		nfl_batch_run_handlers(nf, unprocessed);
		nfl_batch_commit(nf);
		nfl_batch_emit(nf);
	}
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
	 * no traffic, when the priority's time is up anyway. */
	if ((nf->failover_pending || !dead_active_gone(nf)) && nfl_mono_ns() <= nf->fifo_until_ns)
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
	       (double)onvm_nf_failover_ns(nf->slot) / 1e3,
	       nf->slot->failover_reemitted, nf->slot->failover_dropped,
	       nf->slot->failover_reprocessed);
}

int
nfl_standby_run(struct nf_ctx *nf)
{
	pid_t dead;
	int r;

	park_priority(nf);
	__atomic_store_n(&nf->slot->standby_parked, 1, __ATOMIC_RELEASE);
	r = park(nf);
	nf->slot->standby_parked = 0;
	if (r == 0) {
		restore_priority(nf);
		return 0;
	}
	dead = nf->slot->pid;
	promote(nf);
	promoted_placement(nf, dead);
	return 1;
}
