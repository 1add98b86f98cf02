/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_loop.c -- the NF's run loop.
 *
 * It busy-polls its RX ring while packets flow and, after idle_spin_us
 * without work, blocks on a futex in its shared slot.  The manager wakes it
 * after enqueueing (it checks `sleeping` after every enqueue), so an idle NF
 * costs no CPU and wakes in microseconds.  The sleeping/wake_seq handshake is
 * the classic one: the NF publishes `sleeping`, issues a full barrier and
 * re-checks the ring before it waits; the producer enqueues, issues a full
 * barrier and then reads `sleeping`.
 */
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "nf_private.h"

#define NF_MAX_SLEEP_MS 100 /* upper bound on one futex wait (ticks, stop) */
/* A remote standby's real-time priority after its takeover, at most: the
 * replay's first packet comes within a millisecond or two. */
#define NF_TAKEOVER_FIFO_MAX_NS (20 * 1000 * 1000ULL)

/* This process's NF slot, for nf_clock_ns() (set at registration). */
static const struct onvm_nf_slot *clock_slot;

void
nfl_clock_init(const struct onvm_nf_slot *slot)
{
	__atomic_store_n(&clock_slot, slot, __ATOMIC_RELEASE);
}

uint64_t
nf_clock_ns(void)
{
	const struct onvm_nf_slot *s = __atomic_load_n(&clock_slot, __ATOMIC_ACQUIRE);

	/* (modulo 2^64: a negative offset is a smaller clock) */
	return nfl_mono_ns() +
	       (s != NULL ? (uint64_t)__atomic_load_n(&s->clock_offset, __ATOMIC_RELAXED) : 0);
}

/* Process one burst; returns the number of packets received. */
uint32_t
nfl_loop_poll_once(struct nf_ctx *nf)
{
	struct onvm_nf_batch *b = &nf->slot->batch;
	uint32_t n;

	/* held[] must be out before it is reused (a promotion that found the
	 * TX ring full left the rest of its batch to us). */
	if (unlikely(!nfl_batch_out(nf)))
		return 0;
	/* Dequeue straight into the shared held[] array: the ring's consumer
	 * tail and held[] together say what the NF owns at every instant. */
	n = rte_ring_sc_dequeue_burst(nf->rx, (void **)b->held, ONVM_BURST, NULL);
	if (n == 0)
		return 0;
	nfl_batch_open(nf, n);
	if (unlikely(nf->slot->first_pkt_ns == 0))
		nf->slot->first_pkt_ns = nfl_mono_ns();
	if (unlikely(nf->failover_pending)) {
		nf->slot->failover_first_pkt_ns = nfl_mono_ns();
		nf->failover_pending = false;
	}
	nfl_batch_run_handlers(nf, n);
	if (unlikely(nf->fault != NULL))
		return nfl_fault_batch_end(nf, n);
	nfl_batch_commit(nf);
	nfl_batch_emit(nf);
	return n;
}

static long
futex_wait(uint32_t *addr, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = {
		.tv_sec = timeout_ns / 1000000000ULL,
		.tv_nsec = timeout_ns % 1000000000ULL,
	};

	return syscall(SYS_futex, addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

enum sleep_kind {
	SLEEP_IDLE,	    /* for packets, at the NF's own priority */
	SLEEP_TAKEOVER,	    /* for a remote takeover's first packets, keeping real-time priority */
	SLEEP_PARKED,	    /* for the takeover itself, whatever the RX ring holds (a parked
			     * NF dequeues nothing: a packet there must not make it spin) */
};

/* Block until the manager enqueues (or wakes it), a tick is due, or we are
 * told to stop -- for a parked NF, until the takeover clears remote_parked.
 * A blocked thread holds no CPU: only these sleeps keep real-time priority
 * (a remote standby's park and its wait for its first packets). */
static void
sleep_for_work(struct nf_ctx *nf, uint64_t wait_ns, enum sleep_kind kind)
{
	struct onvm_nf_slot *slot = nf->slot;
	uint32_t seq = __atomic_load_n(&slot->wake_seq, __ATOMIC_ACQUIRE);
	bool wait;

	if (kind == SLEEP_IDLE)
		nfl_rt_leave(nf);
	__atomic_store_n(&slot->sleeping, 1, __ATOMIC_RELAXED);
	rte_smp_mb();
	/* (checked after reading wake_seq: an enqueue or a takeover in between
	 * changes it, and the futex does not wait) */
	wait = kind == SLEEP_PARKED ? __atomic_load_n(&slot->remote_parked, __ATOMIC_ACQUIRE) != 0
				    : rte_ring_empty(nf->rx) != 0;
	if (wait && !nf_stopping(nf)) {
		futex_wait(&slot->wake_seq, seq, wait_ns);
		slot->stats.wakeups++;
	}
	__atomic_store_n(&slot->sleeping, 0, __ATOMIC_RELAXED);
}


int
nf_run(struct nf_ctx *nf, const struct nf_ops *ops, void *user)
{
	const uint64_t tsc_hz = rte_get_tsc_hz();
	uint64_t tick_cycles, next_tick, idle_since = 0;
	bool shares_mgr_cpu;

	if (ops == NULL || (ops->pkt == NULL && ops->batch == NULL)) {
		NF_LOG(ERR, "nf_run: a packet or batch handler is required");
		return -EINVAL;
	}
	nf->ops = ops;
	nf->user = user;
	if (nf->standby) {
		int r;

		nfl_crash_check_handlers(); /* now: a promotion's time is the failover's */
		r = nfl_standby_run(nf);

		if (r <= 0)
			return r; /* stopped while parked, or refused to promote */
	}
	/* A protected chain's NF on the standby node: nothing to do (not even
	 * ticks: the manager writes the primary's state into the block) until
	 * the takeover clears the flag and wakes it. */
	if (__atomic_load_n(&nf->slot->remote_parked, __ATOMIC_ACQUIRE)) {
		/* Woken by a takeover, it must run at once, not after the slice
		 * of a busy poller on its CPU: like a local standby
		 * (nf_standby.c) it parks at real-time priority -- asleep, it
		 * uses no CPU -- and keeps it for its first burst of packets,
		 * or NF_TAKEOVER_FIFO_MAX_NS, the kernel's cap as a backstop.
		 * Not on a CPU of the manager's data lcores: it would take the
		 * CPU from the lcore that feeds it the replay, whose link then
		 * overflows (measured: frames lost in 1 takeover of 20).
		 * Without CAP_SYS_NICE, normal priority. */
		if (!nfl_on_mgr_cpus(nf, NULL))
			nfl_rt_enter(&nf->rt, NF_TAKEOVER_FIFO_MAX_NS / 1000);
		/* Its start-up is done (it wrote its initial state): from now
		 * on the manager may write the block. */
		__atomic_store_n(&nf->slot->remote_park_ack, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&nf->slot->remote_parked, __ATOMIC_ACQUIRE) &&
		       !nf_stopping(nf)) {
			nfl_heartbeat(nf);
			sleep_for_work(nf, (uint64_t)NF_MAX_SLEEP_MS * 1000000ULL, SLEEP_PARKED);
		}
		__atomic_store_n(&nf->slot->remote_park_ack, 0, __ATOMIC_RELEASE);
		nf->fifo_until_ns = nfl_mono_ns() + NF_TAKEOVER_FIFO_MAX_NS;
		/* (an FTC node that took a failed one's place: its NF goes on
		 * from the update number of the state the manager wrote) */
		nfl_ftc_unparked(nf);
	}
	nfl_crash_check(nf); /* the thread that holds the lock, our handlers */
	/* A stateless chain's NF: its state from the store, before any packet. */
	if (nf->store == NULL) {
		int r;

		/* Its warm-up waits on the store: never at real-time priority. */
		nfl_rt_leave(nf);
		r = nfl_store_start(nf);
		if (r < 0) {
			nfl_store_stop(nf); /* nothing half-built is left to use */
			return r;
		}
	}
	/* (after a promotion: on the active's CPUs by now) */
	shares_mgr_cpu = nfl_on_mgr_cpus(nf, NULL);
	tick_cycles = (ops->tick_ms ? ops->tick_ms : 1000) * (tsc_hz / 1000);
	next_tick = rte_get_tsc_cycles() + tick_cycles;
	/* flows may move to another instance only if the NF says so (and
	 * handles packets one by one: copies are reprocessed that way) */
	nf->slot->movable = ops->movable && ops->pkt != NULL && ops->batch == NULL;
	nfl_move_adopt(nf);
	__atomic_store_n(&nf->slot->nf_running, 1, __ATOMIC_RELEASE);
	nf->gen_enabled = __atomic_load_n(&nf->slot->gen_enabled, __ATOMIC_ACQUIRE);

	while (!nf_stopping(nf)) {
		uint64_t now;
		uint32_t got;

		/* Liveness for the manager's hung-NF check (a sleeping NF is
		 * waiting for work, not hung). */
		nfl_heartbeat(nf);
		got = nfl_loop_poll_once(nf);
		if (unlikely(nf->moves_live != 0))
			nfl_move_poll(nf);
		if (nf->store != NULL && nfl_store_busy(nf))
			nfl_store_poll(nf);
		if (unlikely(nf->promotion_unfinished))
			nfl_standby_finish(nf);
		else if (unlikely(nf->rt.on)) {
			uint64_t t = nfl_mono_ns();

			/* A remote takeover (above): until its first packets the
			 * NF waits at real-time priority, asleep -- the manager's
			 * enqueue wakes it and it runs at once.  Once they are
			 * through, its own policy again: a replay streams in, and
			 * at real-time priority it would keep its CPU from the
			 * managers that feed and drain it (their rings overflow). */
			if (got == 0 && nf->slot->first_pkt_ns == 0 && t < nf->fifo_until_ns) {
				sleep_for_work(nf, nf->fifo_until_ns - t, SLEEP_TAKEOVER);
				continue;
			}
			nfl_rt_leave(nf);
		}
		/* Ticks are due under load too (expiry, stats): checked once
		 * per burst, between batches. */
		now = rte_get_tsc_cycles();
		if (ops->tick != NULL && now >= next_tick) {
			nfl_batch_run_tick(nf, nf_clock_ns());
			next_tick = now + tick_cycles;
		}
		/* An FTC chain: a whole-state update asked for while no packet
		 * comes goes out in a batch of none. */
		if (unlikely(nfl_ftc_full_due(nf)) && nfl_batch_out(nf)) {
			nfl_batch_open(nf, 0);
			nfl_batch_commit(nf);
			got++;
		}
		if (got > 0) {
			idle_since = 0;
			continue;
		}
		if (idle_since == 0) {
			idle_since = now;
		} else if (nf->store != NULL && nfl_store_busy(nf)) {
			/* Replies still due: wait on the store's socket, not the
			 * futex (at most 1 ms: the manager's enqueue does not
			 * wake a poll). */
			nfl_rt_leave(nf);
			nfl_store_wait(nf);
		} else if (now - idle_since > nf->idle_spin_cycles) {
			uint64_t wait_ns = (uint64_t)NF_MAX_SLEEP_MS * 1000000ULL;

			if (ops->tick != NULL) {
				uint64_t until = next_tick > now ? next_tick - now : 0;

				wait_ns = RTE_MIN(wait_ns, until * 1000000000ULL / tsc_hz);
			}
			if (wait_ns > 0)
				sleep_for_work(nf, wait_ns, SLEEP_IDLE);
		} else {
			nfl_rt_leave(nf); /* an idle spin is a wait too */
			/* On a CPU of the manager's data lcores, the lcore may
			 * have work for us: let it run (units.c does the same
			 * with idle.share_nf_cpus). */
			if (shares_mgr_cpu)
				sched_yield();
			else
				rte_pause();
		}
	}
	nfl_rt_leave(nf); /* stopped at real-time priority (parked, a takeover's wait) */
	return 0;
}
