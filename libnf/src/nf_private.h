/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_private.h -- libnf's internals: the NF context and what the files of
 * libnf/src/ call of each other.  The public contract is onvm_nflib.h; the
 * contract with the manager is onvm_common.h.
 *
 * Files (one concern each):
 *   nf_init.c       EAL arguments, libnf options, attach, registration with
 *                   the manager, unregistration, nf_fini, the context's
 *                   accessors
 *   nf_loop.c       the run loop: poll, tick, futex sleep and wake-up
 *   nf_batch.c      a batch's life: record, handlers, state commit, emission;
 *                   NF-generated packets (nf_pkt_alloc/nf_pkt_send)
 *   nf_standby.c    local resiliency's standby: parking, promotion, the
 *                   scheduling around a failover
 *   nf_rt.c         real-time priority with a cap the kernel enforces
 *   nf_rt.h         its interface (pure C: unit-tested alone)
 *   nf_state.c      state regions: declare, map, touch (glue to onvm_state.c)
 *   nf_fault.c      failure injection at the batch's fault points (tests)
 *   nf_crash.c      a crash signal on the packet thread hands over to the
 *                   standby at once (a futex wake), then the process dies
 *   nf_nd.c         non-determinism helpers (nf_nd_rand, nf_nd_time_ns)
 *   nf_app_stats.c  NF-published counters (/onvm/nf/app,ID)
 *   nf_store.c      stateless resiliency: the state's versioned updates to a
 *                   Redis-protocol store, the warm-up of a fresh instance
 *   nf_ftc.c        FTC: each batch's dirty chunks, as an update, to the
 *                   manager's ring (it piggybacks them to the replicas)
 *   nf_pidns.c      an NF in a container: taking the pid the manager gave it
 *                   in its pid namespace, as a minimal init
 *   nf_move.c       flow migration: the NF's flow tables found, exported,
 *                   imported and freed; copies reprocessed, output dropped
 *   nf_shared.c     shared state across instances: adds and reads
 *   pkt_helper.c, flow_table.c, region_heap.c, nf_json.c, nf_output.c:
 *                   helpers with public headers of their own
 *   nf_private.h    this header
 *
 * Naming: the public API is nf_<verb> (onvm_nflib.h); functions shared
 * between these files are nfl_<area>_<verb>; everything else is static.
 */
#ifndef NF_PRIVATE_H
#define NF_PRIVATE_H

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <rte_log.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "nf_rt.h"
#include "onvm_nf_batch.h"
#include "onvm_cut.h"
#include "onvm_ftc_ring.h"
#include "onvm_nflib.h"
#include "onvm_seg.h"
#include "onvm_state.h"

_Static_assert(ONVM_STATE_MAX_REGIONS == NF_STATE_MAX_REGIONS,
	       "the slot's state requests hold every region onvm_state.c can lay out");

extern int nf_logtype;
#define NF_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, nf_logtype, "libnf: " fmt "\n", ##__VA_ARGS__)

struct nf_ctx {
	struct onvm_shm *shm;
	struct onvm_nf_slot *slot;
	struct rte_mempool *pool;
	struct rte_ring *rx;
	struct rte_ring *tx;
	struct rte_ring *alloc;	/* generated packets' mbufs, filled by the manager */
	bool gen_enabled;	/* the manager keeps `alloc` filled for us */
	uint64_t gen_retry_ns;	/* a refused request for that is not repeated before */
	uint64_t gen_unsent;	/* held[] bits: allocated, not (yet) nf_pkt_send()'d */
	uint16_t service_id;
	uint16_t instance_id;
	int16_t want_instance;
	bool registered;
	/* Our pid in the manager's pid namespace, as the slot records it; not
	 * getpid() when the NF runs in a pid namespace of its own. */
	pid_t mgr_view_pid;
	volatile sig_atomic_t stop;
	uint64_t idle_spin_cycles;
	const struct nf_ops *ops;
	void *user;
	/* What the ND helpers mark: the packet in the per-packet handler, else
	 * held[nd_first .. held_n) of the current batch (NULL/0 outside one). */
	struct rte_mbuf *cur_pkt;
	bool in_batch;
	bool nd_batch; /* an ND helper ran in this batch's batch handler/tick */
	bool has_state;
	struct nf_state_set state;
	struct onvm_seg seg;	/* the node's state segment, once mapped */
	bool has_cut;		/* in a remote chain: markers freeze into `cut` */
	struct onvm_cut_set cut;
	uint64_t last_ts;	/* highest timestamp of a packet handled */
	uint16_t last_chain;	/* ... its chain and chain_run (what a tick generates takes) */
	uint8_t last_run;
	uint64_t last_marker;	/* cut id of the newest marker passed on */
	uint64_t nd_cut_batch;	/* the cut the batch's ND decisions wait for (published at commit) */
	uint32_t n_decl;
	struct onvm_nf_state_req decl[ONVM_STATE_MAX_REGIONS]; /* declared regions */
	bool standby;	       /* parked until the active dies */
	bool holds_alive_lock; /* this process is the slot's active */
	bool failover_pending; /* promoted, first packet not yet handled */
	bool promotion_unfinished; /* finish_promotion() is still due */
	int dead_pidfd;		   /* the active we replace, until it is gone */
	pid_t watched_pid;	   /* ... whose pid is this (as the manager sees it) */
	bool crash_takeover;	   /* it handed over from its crash handler */
	uint64_t fifo_until_ns;	   /* latest end of the promotion's priority */
	uint64_t promoted_seq;	 /* state batch the promotion recovered to */
	struct nf_store *store;	 /* in a stateless chain: its store client (nf_store.c) */
	struct onvm_ftc_ring *ftc; /* in an FTC chain: its updates' ring (nf_ftc.c) */
	uint64_t ftc_seq;	 /* the last update handed over */
	uint64_t ftc_full_done;	 /* the slot's ftc_full_req this NF answered */
	bool ftc_full;		 /* the batch's update is a whole-state one */
	/* Flow migration (nf_move.c): the move slots this NF takes part in
	 * (bit per slot), and, while a packet is handled, src's log entry
	 * being written or the entry dst replays ND decisions from. */
	uint32_t moves_live;
	struct onvm_move_log_entry *move_rec;
	uint64_t move_rec_tag;
	const struct onvm_move_log_entry *move_replay; /* fetched when first needed */
	const struct onvm_move_xfer *move_replay_xfer;
	uint64_t move_replay_tag;
	uint32_t move_replay_i;
	bool move_replay_fetched;
	/* nfl_move_log_entry (set by nf_move.c: nf_nd.c links alone in tests) */
	const struct onvm_move_log_entry *(*move_log_fetch)(struct nf_ctx *nf);
	struct onvm_move *move_cur;
	uint32_t move_cur_gen;
	bool move_pending; /* shared progress due at the batch's commit */
	struct nfl_rt rt;      /* real-time priority while parked and promoting */
	nf_fault_fn fault;     /* test hook: called at the batch's fault points */
	char name[ONVM_NAME_LEN];
};

/* nf_loop.c: the slot whose clock_offset nf_clock_ns() adds (NULL: none). */
void nfl_clock_init(const struct onvm_nf_slot *slot);

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t
nfl_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* nf_init.c: one synchronous request to the manager, with file descriptor
 * `fd` attached unless it is -1; copies up to `replen` bytes of the answer
 * into `rep`.  Returns 0, or -ETIMEDOUT if the manager did not answer within
 * 5 s.  Any thread; blocks. */
int nfl_mp_call(const char *action, const void *req, size_t len, int fd, void *rep,
		size_t replen);
/* The same, waiting at most `timeout_ms`. */
int nfl_mp_call_ms(const char *action, const void *req, size_t len, int fd, void *rep,
		   size_t replen, unsigned int timeout_ms);

/* nf_batch.c -- the NF's thread only.  nfl_batch_emit() waits (counted,
 * yielding, never at real-time priority) while the TX ring is full, and
 * returns false only if the manager is shutting down (held[] then stays with
 * the manager to reclaim); nfl_batch_emit_try() enqueues what fits and
 * returns true if all is out.  No batch may open before the previous one is
 * out (held[] would be overwritten): nfl_batch_out() first. */
void nfl_batch_open(struct nf_ctx *nf, uint32_t n);
bool nfl_batch_emit(struct nf_ctx *nf);
bool nfl_batch_emit_try(struct nf_ctx *nf);
bool nfl_batch_out(struct nf_ctx *nf);
void nfl_batch_run_handlers(struct nf_ctx *nf, uint32_t n);
void nfl_batch_run_tick(struct nf_ctx *nf, uint64_t now_ns);
void nfl_batch_commit(struct nf_ctx *nf);

/* An ND decision now: only the next marker to pass this NF covers it.  The
 * manager's floor keeps a fresh NF that has passed no marker yet from
 * naming a cut older than its own start; the slot's record of the markers
 * passed does the same for a promoted local standby (its own process has
 * passed none). */
static inline void
nfl_nd_wait_next_cut(struct nf_ctx *nf)
{
	uint64_t floor = __atomic_load_n(&nf->slot->nd_cut_floor, __ATOMIC_RELAXED);
	uint64_t seen = __atomic_load_n(&nf->slot->marker_seen, __ATOMIC_RELAXED);
	uint64_t last = nf->last_marker > seen ? nf->last_marker : seen;
	uint64_t need = (last > floor ? last : floor) + 1;

	if (need > nf->nd_cut_batch)
		nf->nd_cut_batch = need;
}

/* nf_store.c -- stateless resiliency, the NF's thread only.  start: in a
 * stateless chain, connect, fence the chain's older incarnation and load
 * the state (before the first packet; 0 when not in one); batch_end: before
 * the batch's state commit (a sync NF waits there for its replies);
 * marker: a marker closes an epoch; poll/busy/wait: the connection from
 * the run loop; stop: at nf_fini. */
int nfl_store_start(struct nf_ctx *nf);
void nfl_store_batch_end(struct nf_ctx *nf);
void nfl_store_marker(struct nf_ctx *nf, uint64_t cut_id, uint64_t ts);
void nfl_store_poll(struct nf_ctx *nf);
bool nfl_store_busy(const struct nf_ctx *nf);
void nfl_store_wait(struct nf_ctx *nf);
void nfl_store_stop(struct nf_ctx *nf);

/* nf_ftc.c -- FTC, the NF's thread only.  attach: once the state is mapped
 * (0 when not in an FTC chain); batch_end: before the batch's state commit,
 * hand its dirty chunks over as the next update (waiting for room). */
int nfl_ftc_attach(struct nf_ctx *nf);
bool nfl_ftc_batch_end(struct nf_ctx *nf);
/* A whole-state update asked for: true once; then every chunk that is not
 * all zero is touched, so the batch's update holds the whole state. */
bool nfl_ftc_full_due(const struct nf_ctx *nf);
void nfl_ftc_batch_start_commit(struct nf_ctx *nf);
/* After a park: the manager may have set the update number to go on from. */
void nfl_ftc_unparked(struct nf_ctx *nf);

/* A wait is coming (a full TX ring, an idle spin, a sleep): leave real-time
 * priority first.  A waiting real-time thread on a CPU it shares with the
 * manager's data lcore starves the very lcore it waits for (finding 1 of the
 * hardening review).  Cheap when not at real-time priority. */
void nfl_rt_leave(struct nf_ctx *nf);
/* Whether `cpus` (NULL: this thread's) include a manager data lcore's CPU:
 * no real-time priority there -- it would starve the lcore feeding us. */
bool nfl_on_mgr_cpus(struct nf_ctx *nf, const cpu_set_t *cpus);

/* One slot-local heartbeat: proof of progress for the manager's hung-NF check. */
static inline void
nfl_heartbeat(struct nf_ctx *nf)
{
	__atomic_store_n(&nf->slot->heartbeat, nf->slot->heartbeat + 1, __ATOMIC_RELAXED);
}

/* nf_move.c -- flow migration, on the NF's thread.  A move's marker; a
 * packet before its handler (false: skip the handler, the packet leaves
 * as DROP) and after it; the loop's check of the moves it takes part in.
 * (The ND helpers replay and record values themselves: nf_nd.c.) */
void nfl_move_marker(struct nf_ctx *nf, const struct onvm_marker *mk);
bool nfl_move_pkt_begin(struct nf_ctx *nf, struct rte_mbuf *m, struct onvm_pkt_meta *meta);
void nfl_move_pkt_end(struct nf_ctx *nf, struct onvm_pkt_meta *meta);
void nfl_move_poll(struct nf_ctx *nf);
void nfl_move_committed(struct nf_ctx *nf);
/* At the start of nf_run: the moves the slot takes part in already (a
 * standby promoted mid-move). */
void nfl_move_adopt(struct nf_ctx *nf);
/* The log entry of the copy being reprocessed (waiting for src to write
 * it), or NULL: no value to replay (counted by the caller). */
const struct onvm_move_log_entry *nfl_move_log_entry(struct nf_ctx *nf);

/* nf_loop.c: process one burst; returns the number of packets received. */
uint32_t nfl_loop_poll_once(struct nf_ctx *nf);

/* nf_fault.c: the end of a batch with the fault hook called at each point;
 * reads ONVM_NF_FAULT at start-up; nfl_fault_point() calls the hook at one
 * point outside a batch's end (registration, allocation, fini). */
uint32_t nfl_fault_batch_end(struct nf_ctx *nf, uint32_t n);
void nfl_fault_env_setup(struct nf_ctx *nf);
static inline void
nfl_fault_point(struct nf_ctx *nf, enum nf_fault_point point)
{
	if (unlikely(nf->fault != NULL))
		nf->fault(nf, point);
}

/* nf_standby.c: a standby parks until its active dies (returns 1: it has
 * promoted itself and nf_run goes on as the active) or stops (returns 0);
 * nfl_standby_finish() completes a promotion from the run loop. */
int nfl_standby_run(struct nf_ctx *nf);
/* nf_crash.c: prepare on the thread that will run the packets, before it
 * takes the liveness lock or parks (the system calls); arm once it holds the
 * lock (the active, or a promoted standby): from then on its crash signals
 * hand over at once.  Disarmed before the lock is let go in order (nf_fini). */
void nfl_crash_prepare(void);
/* nf_pidns.c: as the init of a container's pid namespace with ONVM_NF_NS_PID
 * set, become that pid (the caller returns as the NF there; pid 1 stays an
 * init that never returns).  Before anything else of nf_init(). */
void nfl_pidns_init(void);
void nfl_crash_arm(struct nf_ctx *nf);
void nfl_crash_check(struct nf_ctx *nf);
void nfl_crash_check_handlers(void);
void nfl_crash_disarm(void);
/* A promoted standby on the dead active's CPUs: releases the dying process
 * waiting for it; true if the death was a crash hand-over. */
bool nfl_crash_arrived(struct onvm_nf_slot *slot);
void nfl_standby_finish(struct nf_ctx *nf);

#endif /* NF_PRIVATE_H */
