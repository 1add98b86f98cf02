/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_common.h -- the contract between onvm_mgr (DPDK primary) and the NFs
 * (DPDK secondaries linked with libnf).
 *
 * Everything both sides must agree on lives here: the per-packet metadata
 * kept in an rte_mbuf dynamic field, the action vocabulary, and the layout of
 * the one shared memzone ("onvm_shm") that holds the NF, service, chain, port
 * and flow-rule tables.  The layout is versioned (ONVM_SHM_VERSION): an NF
 * built against another layout refuses to attach instead of corrupting the
 * manager's tables.
 *
 * Ownership rules, which the rest of the code relies on:
 *  - the manager writes every table; NFs only write their own slot's
 *    "NF-written" part (batch tracking, stats, run state);
 *  - an NF's RX ring has many producers (the manager's RX and TX units) and a
 *    single consumer (the NF); its TX ring has a single producer (the NF) and
 *    a single consumer (the manager's TX unit).  The crash-accounting scheme
 *    in struct onvm_nf_batch depends on this SP/SC shape.
 */
#ifndef ONVM_COMMON_H
#define ONVM_COMMON_H

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <rte_common.h>
#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_ring.h>

#include "onvm_store.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ONVM_SHM_NAME "onvm_shm"
#define ONVM_SHM_MAGIC 0x4f4e564d52464e31ULL /* "ONVMRFN1" */
#define ONVM_SHM_VERSION 17
#define ONVM_PKTMBUF_POOL_NAME "onvm_pktmbuf_pool"
#define ONVM_PKT_META_DYNFIELD "onvm_dynfield_pkt_meta"
#define ONVM_NF_RX_RING_FMT "onvm_nf%u_rx"
#define ONVM_NF_TX_RING_FMT "onvm_nf%u_tx"
#define ONVM_NF_ALLOC_RING_FMT "onvm_nf%u_alloc"
#define ONVM_PORT_TX_RING_FMT "onvm_port%u_tx"

/* rte_mp IPC action names (NF -> manager requests, synchronous replies). */
#define ONVM_MP_NF_REGISTER "onvm_nf_register"
#define ONVM_MP_NF_UNREGISTER "onvm_nf_unregister"
#define ONVM_MP_NF_STATE "onvm_nf_state"
#define ONVM_MP_NF_GEN "onvm_nf_gen"
#define ONVM_STATE_MAX_REGIONS 16 /* == NF_STATE_MAX_REGIONS */

#define ONVM_MAX_NFS 64		/* NF slots == instance ids 0..63 */
#define ONVM_MAX_SERVICES 64	/* service ids 1..63; 0 is "none" */
#define ONVM_MAX_INSTANCES 8	/* instances of one service */
#define ONVM_MAX_PORTS 16
#define ONVM_MAX_CHAINS 32
#define ONVM_MAX_CHAIN_LEN 8
#define ONVM_MAX_FLOW_RULES 256
#define ONVM_BURST 32
/* held[] has room for a received burst plus packets the NF generates
 * (a process-local 64-bit mask tracks which generated ones are unsent). */
#define ONVM_NF_HELD_MAX (2 * ONVM_BURST)
/* NF-generated packets come from a per-NF ring the manager keeps filled
 * (never from the mempool directly: see struct onvm_nf_batch). */
#define ONVM_NF_ALLOC_RING_SIZE 256
#define ONVM_NF_ALLOC_LOW	ONVM_NF_HELD_MAX	/* the TX unit tops up below this */
#define ONVM_NF_ALLOC_FILL	(2 * ONVM_NF_HELD_MAX)	/* ... by this many */
#define ONVM_NAME_LEN 32
#define ONVM_SHARED_KEYS 16 /* shared-state counters (nf_shared_add) */
/* A service's flows are split into buckets by their flow hash's top bits
 * (struct onvm_pkt_meta.flow_hash); a bucket is what is routed to an
 * instance, and what flow migration moves (docs/design/elastic.md). */
#define ONVM_FLOW_BUCKET_BITS 10
#define ONVM_FLOW_BUCKETS     (1u << ONVM_FLOW_BUCKET_BITS)
#define ONVM_FLOW_BUCKET(hash) ((uint32_t)(hash) >> (32 - ONVM_FLOW_BUCKET_BITS))
#define ONVM_PORT_UNSET 0xff

/* What an NF (or the chain) wants done with a packet. */
enum onvm_action {
	ONVM_ACTION_DROP = 0, /* free it (counted) */
	ONVM_ACTION_NEXT = 1, /* next service of the packet's chain */
	ONVM_ACTION_TONF = 2, /* the service named in destination */
	ONVM_ACTION_OUT = 3,  /* out of the port named in destination */
};

/* Packet metadata flags. */
#define ONVM_PKT_F_ND 0x01     /* a non-deterministic decision touched this packet */
#define ONVM_PKT_F_REPLAY 0x02 /* replayed by a packet logger after failover */
#define ONVM_PKT_F_FAILOVER_DROP 0x04 /* output of a dead NF's uncommitted batch, dropped */
#define ONVM_PKT_F_MARKER 0x08 /* a consistent-cut marker (struct onvm_marker), not a packet */
#define ONVM_PKT_F_CTRL 0x10   /* the manager's own control frame: out of its port as it is */
#define ONVM_PKT_F_MOVE_COPY 0x20 /* a moved flow's packet copied for its new instance to
				   * reprocess (output suppressed: struct onvm_move) */
#define ONVM_PKT_F_PEER 0x40 /* handed over by a peer node to an instance here (a
			      * cross-node move): its output goes back through
			      * meta->peer_port */

/*
 * A consistent-cut marker (remote resiliency, docs/design/remote.md): an mbuf the
 * manager injects at a protected chain's ingress, flagged ONVM_PKT_F_MARKER,
 * whose metadata `ts` is the cut's timestamp (the last packet before it) and
 * whose data is this struct.  libnf never hands it to the NF: it freezes the
 * NF's state changed since `base_id` (onvm_cut.h) and passes it on.
 */
struct onvm_marker {
	uint64_t cut_id;
	uint64_t base_id; /* the chain's last cut, the delta's base */
	uint64_t flags;	  /* ONVM_MARKER_F_* */
};
/* Every NF freezes all of its state (a full cut: a standby resynchronises). */
#define ONVM_MARKER_F_FULL 0x1
/* A flow migration's marker (struct onvm_move): cut_id is the move's tag
 * (ONVM_MOVE_TAG(slot, gen, 0)), base_id its enum onvm_move_marker. */
#define ONVM_MARKER_F_MOVE 0x2

/*
 * Per-packet metadata, kept in an rte_mbuf dynamic field registered by the
 * manager under ONVM_PKT_META_DYNFIELD.
 */
struct onvm_pkt_meta {
	uint8_t action;	      /* enum onvm_action, set by the NF handler */
	uint8_t chain_index;  /* index of the step the packet is at */
	uint16_t destination; /* service id (TONF) or port id (OUT) */
	uint16_t chain_id;    /* chain the packet follows */
	uint8_t flags;	      /* ONVM_PKT_F_* */
	uint8_t in_port;      /* port it entered the node on */
	uint32_t flow_hash;   /* 5-tuple hash, picks the service instance */
	uint8_t egress_port;  /* ONVM_PORT_UNSET, or where the chain's end sends it */
	uint8_t chain_run;    /* a stateless chain's incarnation it entered in (sl_unit.c) */
	uint8_t peer_port;    /* ONVM_PKT_F_PEER: the link it came over (move_peer.c) */
	uint8_t reserved;
	uint64_t ts;	      /* logical timestamp (remote resiliency, stateless chains) */
};
_Static_assert(sizeof(struct onvm_pkt_meta) == 24, "packet metadata is 24 bytes");
_Static_assert(_Alignof(struct onvm_pkt_meta) == 8, "packet metadata is 8-byte aligned");
_Static_assert(ONVM_MAX_PORTS <= ONVM_PORT_UNSET, "port ids fit in_port/egress_port");

/* Stateless resiliency (docs/design/stateless.md): an NF's store client,
 * written by the NF only. */
enum onvm_store_state {
	ONVM_STORE_OFF = 0,   /* not in a stateless chain */
	ONVM_STORE_LOADING,   /* connecting, fencing, loading its state */
	ONVM_STORE_READY,     /* connected, updates flowing */
	ONVM_STORE_DOWN,      /* connection lost: reconnecting, updates kept */
	ONVM_STORE_STOPPED,   /* fenced, or the store lost its record: no more updates */
};

struct onvm_store_stats {
	uint64_t updates_sent;	   /* WRITEs sent (first sends) */
	uint64_t updates_acked;	   /* answered applied, or already applied */
	uint64_t updates_retried;  /* sent again on a new connection */
	uint64_t versions_refused; /* answered "not newer": a retry already applied */
	uint64_t fenced;	   /* refused: a newer incarnation of the chain runs */
	uint64_t lost;		   /* refused: the store no longer has the NF's record */
	uint64_t bad_replies;	   /* not an answer the protocol gives: connection reset */
	uint64_t resets;	   /* connections lost or reset */
	uint64_t connect_fails;
	uint64_t pipeline_waits;   /* backpressure: a full pipeline held the NF */
	uint64_t sync_waits;	   /* sync mode: batches that waited for their replies */
	uint64_t wait_ns;	   /* time the NF spent waiting on the store */
	uint64_t bytes_sent;	   /* chunk bytes in WRITEs */
	uint64_t chunks_sent;
	uint64_t chunks_dirtied;   /* chunk touches per batch; less chunks_sent: absorbed by the cache */
	uint64_t epochs_closed;	   /* markers whose close the store acknowledged */
	uint64_t loaded_chunks;	   /* warm-up: chunks loaded from the store */
	uint64_t load_ns;	   /* warm-up: fence and load */
	uint64_t recovered_epoch;  /* the epoch the warm-up loaded (0: fresh) */
	uint64_t recovered_ts;	   /* ... the timestamp of its marker (0: not known) */
	uint64_t gen;		   /* the chain's incarnation in the store */
	uint32_t state;		   /* enum onvm_store_state */
	uint32_t outstanding;	   /* WRITEs not yet answered */
};

/* NF slot life cycle. */
enum onvm_nf_status {
	ONVM_NF_FREE = 0,
	ONVM_NF_STARTING, /* launched by the manager, not registered yet */
	ONVM_NF_READY,	  /* registered: rings assigned, routed to */
	ONVM_NF_RUNNING,  /* in its run loop */
	ONVM_NF_STOPPING, /* asked to unregister, no longer routed to */
	ONVM_NF_DEAD,	  /* process gone, resources being reclaimed */
};

/*
 * Crash accounting for the batch an NF is working on.  Written only by the
 * NF (active, or a standby promoting itself), read by the manager after the
 * NF has died.  With `rx` the NF's RX ring (it is the only consumer), `tx`
 * its TX ring (only producer) and `alloc` the ring its generated packets come
 * from (only consumer):
 *   - the NF dequeues straight into held[], then records committed = 0,
 *     seq_before, alloc_seen (= alloc->cons.tail), {tx_base (= tx->prod.tail),
 *     held_n} in one store, and finally rx_seen (= rx->cons.tail);
 *   - the packets of held[] it has emitted are exactly tx->prod.tail - tx_base,
 *     in held[] order, because it is the TX ring's only producer;
 *   - nf_pkt_alloc() stores alloc_at = held_n, dequeues one mbuf from `alloc`
 *     straight into held[alloc_at], then stores held_n = alloc_at + 1 and
 *     alloc_seen = alloc->cons.tail;
 *   - a promoting standby that settles its dead active's batch stores the
 *     batch's held_n, then alloc_seen = alloc->cons.tail, before it emits.
 * So after a death: if rx->cons.tail != rx_seen, the NF died between its
 * dequeue and the record and owns held[0 .. tail - rx_seen) with nothing
 * processed or emitted; otherwise it owns held[emitted .. held_n), where
 * held_n is alloc_at + 1 if alloc->cons.tail != alloc_seen (it died inside
 * nf_pkt_alloc).  No window exists in which a packet is both emitted and
 * counted as held, or owned and counted by nobody.  NFs never put mbufs into
 * the mempool themselves (a DROP goes back to the manager through the TX
 * ring): DPDK's mempool cache and MP/MC ring are not crash-atomic.
 * onvm_nf_batch.h holds the arithmetic.
 */
struct onvm_nf_batch {
	/* tx_base and held_n change together at a batch's start: one 64-bit
	 * store (onvm_batch_record_open()), so no death can leave a new tx_base
	 * with an old held_n (a batch without received packets, a tick, has no
	 * rx_seen to tell a half-written record). */
	union {
		struct {
			uint32_t tx_base;
			uint32_t held_n;
		};
		uint64_t base_n;
	};
	uint32_t rx_seen;
	uint32_t committed;  /* 1 once this batch's state commit has returned */
	uint64_t seq_before; /* state sequence when the batch began */
	uint32_t alloc_seen; /* alloc->cons.tail after the last recorded allocation */
	uint32_t alloc_at;   /* held[] index the current allocation fills */
	struct rte_mbuf *held[ONVM_NF_HELD_MAX];
} __rte_cache_aligned;
_Static_assert(offsetof(struct onvm_nf_batch, base_n) % 8 == 0, "base_n is stored at once");
_Static_assert(ONVM_NF_HELD_MAX >= 2 * ONVM_BURST, "held[] takes a burst plus generated packets");
_Static_assert(ONVM_NF_HELD_MAX <= 64, "unsent generated packets are a 64-bit mask");
_Static_assert(ONVM_NF_ALLOC_LOW + ONVM_NF_ALLOC_FILL < ONVM_NF_ALLOC_RING_SIZE,
	       "a top-up always fits the alloc ring");

/* Counters kept by the NF (one writer: the NF). */
struct onvm_nf_stats {
	uint64_t rx;	  /* packets handed to the handler */
	uint64_t rx_bytes;
	uint64_t tx;	  /* packets put on the TX ring (all actions) */
	uint64_t act_drop;
	uint64_t act_next;
	uint64_t act_tonf;
	uint64_t act_out;
	uint64_t generated; /* NF-made packets */
	uint64_t gen_unsent; /* of those, allocated but never sent (dropped) */
	uint64_t gen_waits;  /* allocations that waited for the manager to refill */
	uint64_t gen_fail;   /* allocations that found no mbuf (nf_pkt_alloc NULL) */
	uint64_t tx_wait;   /* times the TX ring was full and the NF waited */
	uint64_t batches;
	uint64_t wakeups;   /* times it slept and was woken */
	uint64_t nd_events; /* calls of the ND helpers */
	uint64_t bad_touches; /* nf_touch() outside every state region */
	uint64_t move_copies; /* flow migration: copies it reprocessed or skipped (not in rx) */
} __rte_cache_aligned;

/* A state region the NF asks for (written by the NF before ONVM_MP_NF_STATE). */
struct onvm_nf_state_req {
	char name[ONVM_NAME_LEN];
	uint64_t size;
	uint32_t chunk_size; /* 0: default */
	uint32_t pad;
};

/*
 * Sequence lock for data one process rewrites and others copy (an NF's
 * published counters).  `seq` is odd while the writer is inside its update.
 * A writer that dies inside leaves it odd, and whoever writes next (a promoted
 * standby) must not flip it back to even at its begin: so begin forces odd and
 * end moves to the next even value, whatever parity was inherited.
 */
static inline void
onvm_seq_write_begin(uint32_t *seq)
{
	__atomic_store_n(seq, __atomic_load_n(seq, __ATOMIC_RELAXED) | 1u, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE); /* odd before any data store */
}

static inline void
onvm_seq_write_end(uint32_t *seq)
{
	__atomic_store_n(seq, (__atomic_load_n(seq, __ATOMIC_RELAXED) | 1u) + 1u,
			 __ATOMIC_RELEASE);
}

/* Copy `len` bytes at `src` consistently: 0, or -EBUSY when every one of
 * `tries` attempts met a writer (or a writer that died mid-update). */
static inline int
onvm_seq_read(const uint32_t *seq, void *dst, const void *src, size_t len, int tries)
{
	while (tries-- > 0) {
		uint32_t before = __atomic_load_n(seq, __ATOMIC_ACQUIRE);

		if (before & 1u)
			continue;
		memcpy(dst, src, len);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(seq, __ATOMIC_RELAXED) == before)
			return 0;
	}
	return -EBUSY;
}

/* Counters an NF publishes for the node's telemetry (/onvm/nf/app,ID), e.g.
 * dpi's per-protocol flow counts, under the sequence lock `seq`. */
#define ONVM_NF_APP_STATS     32
#define ONVM_NF_APP_STAT_NAME 24
struct onvm_nf_app_stats {
	uint32_t seq;
	uint32_t n;
	char name[ONVM_NF_APP_STATS][ONVM_NF_APP_STAT_NAME];
	uint64_t value[ONVM_NF_APP_STATS];
};

/*
 * One NF instance.  Fields are grouped by the process that writes them, each
 * group on cache lines of its own, so the NF's per-iteration writes (heartbeat)
 * never bounce a line the manager writes.  Fields both sides read while the
 * other may write are accessed with __atomic builtins (noted "atomic").
 */
struct onvm_nf_slot {
	/* ---- Manager-written: identity, rings, control. ---- */
	uint32_t status;	  /* enum onvm_nf_status; atomic */
	uint16_t instance_id;	  /* == slot index */
	uint16_t service_id;
	int32_t pid;		  /* the process the manager deems the active */
	uint32_t lcore_id;	  /* the active's EAL lcore id (mempool cache index) */
	uint32_t launched;	  /* 1 if the manager fork/exec'd it */
	uint32_t generation;	  /* bumped on every reuse of the slot */
	char name[ONVM_NAME_LEN];
	uint64_t register_ns;	  /* CLOCK_MONOTONIC of registration */
	uint64_t launch_ns;	  /* CLOCK_MONOTONIC of fork, if launched */
	struct rte_ring *rx_ring;
	struct rte_ring *tx_ring;
	struct rte_ring *alloc_ring; /* generated packets' mbufs (see onvm_nf_batch) */
	uint32_t gen_enabled;	  /* atomic: the TX unit keeps alloc_ring filled */
	uint32_t movable;	  /* written by libnf at nf_run(): its flows may move (nf_ops) */
	uint32_t move_waiting;	  /* atomic: libnf waits for a move's source (not draining) */
	int32_t standby_pid;	  /* atomic; 0: no standby */
	uint32_t standby_lcore;	  /* the standby's lcore id (reserved while it lives) */
	uint32_t standby_failures; /* standbys that failed before parking, in a row */
	uint64_t hung_kills;	  /* times the manager killed it as hung */
	uint64_t reclaimed;	  /* mbufs the manager returned to the pool after a death */
	char state_mz[ONVM_NAME_LEN]; /* "" until a state block is allocated (then the pool's name) */
	uint64_t state_off;	      /* the block's offset in the state segment */
	uint64_t state_size;
	uint64_t cut_off;	      /* the cut area (onvm_cut.h) in that segment; */
	uint64_t cut_size;	      /* cut_size 0: the NF is not in a remote chain */
	/* An FTC chain's NF: the ring it hands its updates to the manager on
	 * (onvm_ftc_ring.h), after its state block; ftc_size 0: not in one. */
	uint64_t ftc_off;
	uint64_t ftc_size;

	/* ---- Manager-written, read by a sleeping NF: the futex word. ---- */
	uint32_t wake_seq __rte_cache_aligned; /* atomic; bumped by whoever enqueues */
	uint32_t stop;			       /* atomic; 1: leave the run loop */
	/* atomic; 1: an NF of a protected chain on its standby node -- it waits
	 * before its run loop (no packets, no ticks) while the manager writes
	 * the primary's committed state into its block, until the takeover */
	uint32_t remote_parked;
	/* atomic; the clock the NF stamps its state with (nf_clock_ns()) less
	 * this node's CLOCK_MONOTONIC, in ns: 0, but on the standby node of a
	 * protected chain that took over -- there the primary's clock goes on
	 * (set before remote_parked is cleared), so the stamps in the state it
	 * brought keep their age on a host that booted at another time */
	int64_t clock_offset;

	/* ---- NF-written, hot: the run loop's own line. ---- */
	uint64_t heartbeat __rte_cache_aligned; /* atomic; bumped every loop iteration */
	uint32_t sleeping;	 /* atomic; 1 while it waits on wake_seq */
	uint32_t nf_running;	 /* atomic; set when it enters its loop */
	uint32_t leaving;	 /* atomic; the active is in nf_fini: no promotion */
	uint32_t standby_parked; /* atomic; the standby waits on alive_lock */
	uint32_t remote_park_ack; /* atomic; 1 while waiting on remote_parked (start-up done) */
	uint64_t first_pkt_ns;	 /* CLOCK_MONOTONIC of the first packet */

	/* The active holds alive_lock (process-shared, robust) for as long as it
	 * lives; its standby blocks on it and gets EOWNERDEAD the moment the
	 * kernel runs the dead task's robust list. */
	pthread_mutex_t alive_lock __rte_cache_aligned;

	struct onvm_nf_batch batch;	/* NF-written */
	struct onvm_nf_stats stats;	/* NF-written */

	/* ---- NF-written, cold: failovers, state, placement, app counters. ---- */
	uint64_t failovers __rte_cache_aligned; /* promotions of a standby in this slot */
	uint64_t failover_wake_ns;	 /* last: standby woke (CLOCK_MONOTONIC) */
	uint64_t failover_first_pkt_ns;	 /* last: first packet after promotion */
	uint64_t failover_reemitted;	 /* held outputs of committed batches sent */
	uint64_t failover_dropped;	 /* held packets of uncommitted batches dropped */
	uint64_t failover_reprocessed;	 /* dequeued-but-unprocessed packets redone */
	uint64_t failover_refused;	 /* standbys that would not promote (state) */
	/* Crash-signal hand-overs (libnf's nf_crash.c): written by the dying
	 * active's signal handler just before it wakes the standby. */
	uint64_t crash_handoffs;
	uint64_t crash_handoff_ns;	 /* CLOCK_MONOTONIC of the last one */
	uint32_t crash_signal;		 /* its signal */
	uint32_t crash_armed;		 /* atomic; 1u << signal, for those the active handles */
	/* atomic, a futex word: 1 while the dying active, woken out of the
	 * way, waits for its standby to run on its CPUs (nf_crash.c). */
	uint32_t crash_wait;
	cpu_set_t active_cpus;		 /* the active's CPU affinity */
	uint32_t n_state_req;
	struct onvm_nf_state_req state_req[ONVM_STATE_MAX_REGIONS];
	uint64_t state_seq;	      /* last committed batch */
	uint64_t state_chunks;	      /* chunks committed in all */
	/* What local mode adds to every packet's latency: its batch's commit,
	 * between processing and emitting (TSC cycles). */
	uint64_t state_commits;
	uint64_t state_commit_cycles;
	uint64_t state_commit_max_cycles;
	/* Remote resiliency.  nd_cut: the lowest cut id that covers every ND
	 * decision this NF made -- the id of the first marker to pass it after
	 * the decision (the newest marker it passed, + 1).  Atomic, stored
	 * (release) before the batch's outputs are emitted, so whoever sees an
	 * output of a later batch sees it.  Cut ids rather than timestamps: a
	 * decision in a tick has no timestamp of its own, and one right after a
	 * marker shares the marker's.  nd_cut_floor: written by the manager
	 * before the NF runs (start, promotion) with the newest marker id
	 * injected into the chain so far; libnf counts markers from there, so
	 * an NF that has not yet passed a marker cannot name an old cut. */
	uint64_t nd_cut;
	uint64_t nd_cut_floor;
	/* The newest marker any process of this slot passed on (atomic): a
	 * promoted local standby counts its ND decisions' cut from here. */
	uint64_t marker_seen;
	uint64_t markers;	      /* consistent-cut markers passed on */
	uint64_t cut_chunks;	      /* chunks frozen into the cut log */
	uint64_t cut_failed;	      /* markers whose freeze failed (log full, base unknown) */
	uint64_t bad_markers;	      /* markers too short to hold struct onvm_marker */
	/* Stateless resiliency: the newest epoch (marker id) whose updates the
	 * store acknowledged, every one of them (atomic, NF-written; the
	 * manager releases a stateless chain's output up to the lowest of its
	 * NFs'). */
	uint64_t store_closed;
	/* The token of the chain's run this NF fenced and loaded for (atomic,
	 * stored after store.state READY's fields): the manager counts it as
	 * loaded only for the run it launched it for. */
	uint64_t store_token;
	struct onvm_store_stats store;
	/* FTC (docs/design/ftc.md): the sequence number of the NF's newest
	 * update in its ring (atomic; stored, release, before the batch's
	 * outputs leave: an output's update is at or below it).  Written by the
	 * manager before the NF runs (an NF restarted on a spare node goes on
	 * from its replicas' state), then by the NF. */
	uint64_t ftc_seq;
	uint64_t ftc_updates;	  /* updates handed over */
	uint64_t ftc_bytes;	  /* ... their records' bytes */
	uint64_t ftc_ring_waits;  /* batches that waited for room in the ring */
	/* atomic, manager-written: bumped to ask for a whole-state update (a
	 * replica of the NF was replaced); the NF makes one at its next batch
	 * and counts it in ftc_full_updates */
	uint64_t ftc_full_req;
	uint64_t ftc_full_updates;
	struct onvm_nf_app_stats app; /* NF-published counters */
	/* Shared state (nf_shared_add): running sums of the deltas this NF
	 * added per key, and how many adds (atomic, NF-written; the manager
	 * takes their growth: struct onvm_shared). */
	int64_t shared_added[ONVM_SHARED_KEYS] __rte_cache_aligned;
	uint64_t shared_ops[ONVM_SHARED_KEYS];
} __rte_cache_aligned;

#define ONVM_SLOT_LINE(field) (offsetof(struct onvm_nf_slot, field) / RTE_CACHE_LINE_SIZE)
_Static_assert(ONVM_SLOT_LINE(heartbeat) != ONVM_SLOT_LINE(wake_seq) &&
		       ONVM_SLOT_LINE(heartbeat) != ONVM_SLOT_LINE(state_size),
	       "the NF's heartbeat line is not a line the manager writes");
_Static_assert(ONVM_SLOT_LINE(wake_seq) != ONVM_SLOT_LINE(state_size),
	       "the futex word has a line of its own");
_Static_assert(ONVM_SLOT_LINE(alive_lock) != ONVM_SLOT_LINE(first_pkt_ns),
	       "the liveness lock has a line of its own");

/* The last failover as the node can time it: from the standby's wake-up (the
 * earliest sign of the death) to its first packet; 0 if none yet. */
static inline uint64_t
onvm_nf_failover_ns(const struct onvm_nf_slot *s)
{
	return s->failover_first_pkt_ns > s->failover_wake_ns
		       ? s->failover_first_pkt_ns - s->failover_wake_ns
		       : 0;
}

/*
 * Instances of a service.  Readers (data-path units) read `active` (atomic,
 * acquire) and the array it selects; the control side writes the other copy,
 * then flips `active`, and waits for a grace period before touching it again.
 *
 * A service of a protected chain (remote resiliency) has a fixed number of
 * instances, `fixed`: its list always has that many entries, a missing
 * instance being ONVM_INST_NONE, so a flow maps to the same entry -- the
 * same rank -- on every node, whichever instances have started, and a
 * rank's state has a place of its own (rsync_unit_state.c).
 */
#define ONVM_INST_NONE 0xffff
struct onvm_service {
	uint32_t active;
	uint16_t n[2];
	uint16_t inst[2][ONVM_MAX_INSTANCES];
	uint16_t fixed; /* 0, or the ranks of a protected chain's service */
	/* Buckets an operator or the scaler moved (flow migration): with
	 * moved[a] set, bucket b's rank is rank_of[a][b], else jump consistent
	 * hashing's for n[a] ranks (router.c).  Same double buffer. */
	uint8_t moved[2];
	uint8_t rank_of[2][ONVM_FLOW_BUCKETS];
	uint16_t rank_buckets[2][ONVM_MAX_INSTANCES]; /* with moved[]: buckets per rank */
	/* Buckets moved to an instance on another node (rank_of[][] ==
	 * ONVM_RANK_PEER) go over port peer_port to its instance peer_inst;
	 * one such instance per service, set before the first such bucket is
	 * published and kept while any is. */
	uint16_t peer_port, peer_inst;
};
#define ONVM_RANK_PEER 0xfe

/*
 * Flow migration (docs/design/elastic.md): the flows of a set of buckets
 * of a service move from one instance (src) to another (dst), state and
 * all, while traffic flows.  The manager's control thread drives a move;
 * libnf in the two NFs does the state's part.  In order:
 *
 *  1. an IN marker into dst's ring, then the units' hook on src: every
 *     packet of the buckets routed to src is tagged (meta->ts =
 *     ONVM_MOVE_TAG) and, by the REPROCESS method, copied to dst flagged
 *     ONVM_PKT_F_MOVE_COPY (BUFFER: sent to dst instead of src), then a
 *     START marker into src's ring;
 *  2. src at START exports the buckets' flow-table entries into the
 *     move's memzone (EXPORTED) with the tags it handled before START
 *     (their effect is in that state); from then on it logs the ND values
 *     each tagged packet drew;
 *  3. dst at IN waits for the export, imports it (IMPORTED), then
 *     reprocesses the copies -- skipping the included ones, an ND value
 *     taken from src's log entry for the packet (waiting for it only
 *     then), output dropped by libnf;
 *  4. the control thread flips the service's bucket table (FLIPPED) and
 *     puts an END marker into src's ring: new packets go to dst, after
 *     the copies; dst outputs none of them before END came out of src (so
 *     src's last output is ahead, per flow);
 *  5. src at END frees the buckets' entries: the defined moment its copy
 *     dies.  DONE when dst has had every copy.
 * A move that cannot finish before the flip (an NF gone, a copy lost, a
 * time-out) is FAILED: src never stopped serving the flows and keeps
 * them; dst drops what it imported and the copies.
 */
#define ONVM_MAX_MOVES 24	 /* moves at once, node-wide */
#define ONVM_MOVE_LOG_SIZE 16384 /* tagged packets in flight per move (power of two) */
#define ONVM_MOVE_ND_MAX 4	 /* ND values logged per packet */
#define ONVM_MOVE_XFER_MAX (4u << 20) /* bytes of exported state per move */
#define ONVM_MOVE_INCLUDED_MAX 8192	/* tagged packets src may handle before START */
#define ONVM_MOVE_MZ_FMT "onvm_move%u"
#define ONVM_MOVE_TAG(slot, gen, seq)                                                       \
	((UINT64_C(1) << 63) | ((uint64_t)(slot) << 48) | ((uint64_t)((gen) & 0xff) << 40) |  \
	 ((uint64_t)(seq) & ((UINT64_C(1) << 40) - 1)))
#define ONVM_MOVE_TAG_IS(ts)	(((ts) >> 63) != 0)
#define ONVM_MOVE_TAG_SLOT(ts)	((uint32_t)((ts) >> 48) & 0x7fff)
#define ONVM_MOVE_TAG_GEN(ts)	((uint32_t)((ts) >> 40) & 0xff)
#define ONVM_MOVE_TAG_SEQ(ts)	((ts) & ((UINT64_C(1) << 40) - 1))

enum onvm_move_method {
	ONVM_MOVE_REPROCESS = 0, /* copies reprocessed by dst, src serves on (the default) */
	ONVM_MOVE_BUFFER,	 /* OpenNF's loss-free move: packets held for dst */
};

enum onvm_move_state {
	ONVM_MOVE_FREE = 0,
	ONVM_MOVE_STARTED,
	ONVM_MOVE_EXPORTED,
	ONVM_MOVE_IMPORTED,
	ONVM_MOVE_FLIPPING, /* the table being published: too late to fail */
	ONVM_MOVE_FLIPPED,
	ONVM_MOVE_DONE,
	ONVM_MOVE_FAILED,
};

enum onvm_move_marker {
	ONVM_MOVE_MK_START = 1, /* into src: export */
	ONVM_MOVE_MK_IN,	/* into dst: import */
	ONVM_MOVE_MK_END,	/* into src: free */
};

/* Why a move failed (onvm_move.fail). */
enum onvm_move_fail {
	ONVM_MOVE_OK = 0,
	ONVM_MOVE_FAIL_SRC_GONE,
	ONVM_MOVE_FAIL_DST_GONE,
	ONVM_MOVE_FAIL_TIMEOUT,	   /* not flipped in time */
	ONVM_MOVE_FAIL_COPY,	   /* a copy could not be made or did not reach dst */
	ONVM_MOVE_FAIL_RING,	   /* a marker did not fit an NF's ring */
	ONVM_MOVE_FAIL_EXPORT,	   /* the state did not fit ONVM_MOVE_XFER_MAX */
	ONVM_MOVE_FAIL_IMPORT,	   /* dst refused a record (onvm_ft_import's reason: logged) */
	ONVM_MOVE_FAIL_WAIT,	   /* dst waited too long for src (export, a log entry) */
	ONVM_MOVE_FAIL_LOG,	   /* more tagged packets in flight than the log holds */
	ONVM_MOVE_FAIL_NF,	   /* the NF cannot take part (not movable, a batch handler) */
	ONVM_MOVE_FAIL_SRC_FAILOVER, /* src's local standby took over (it keeps the flows) */
	ONVM_MOVE_FAIL_PEER_LOST,    /* the other node stopped answering (a cross-node move) */
	ONVM_MOVE_FAIL_PEER_REFUSED, /* the other node could not take the move */
	ONVM_MOVE_FAIL_REASON_MAX,
};

/* Is bucket b in a move's bucket set (a bitmap of ONVM_FLOW_BUCKETS)? */
static inline bool
onvm_bucket_in(const uint64_t *set, uint32_t b)
{
	return b < ONVM_FLOW_BUCKETS && (set[b / 64] >> (b % 64) & 1) != 0;
}

/* One tagged packet's entry in a move's log: written by src (or by the
 * unit that dropped the packet), `tag` last with release; dst reads. */
struct onvm_move_log_entry {
	uint64_t tag;
	uint32_t flags;	/* ONVM_MOVE_LOG_* */
	uint32_t n_nd;	/* ND values src drew for it (at most ONVM_MOVE_ND_MAX) */
	uint64_t nd[ONVM_MOVE_ND_MAX];
};
#define ONVM_MOVE_LOG_INCLUDED 0x1 /* handled before the export: in the state */
#define ONVM_MOVE_LOG_DROPPED 0x2  /* never reached src (its ring was full) */
#define ONVM_MOVE_LOG_ND_OVER 0x4  /* drew more ND values than the log holds */

/* The move's memzone (ONVM_MOVE_MZ_FMT, one per slot, made by the manager
 * at the slot's first move): the log, then the exported state -- sections
 * of a struct onvm_move_section and its flow-table records. */
struct onvm_move_xfer {
	struct onvm_move_log_entry log[ONVM_MOVE_LOG_SIZE];
	/* The tags src handled before START, its export holds them: dst
	 * skips their copies (sorted at the export; src the only writer
	 * until then). */
	uint32_t n_included;
	uint32_t pad;
	uint64_t included[ONVM_MOVE_INCLUDED_MAX];
	uint64_t len; /* bytes in data */
	uint8_t data[ONVM_MOVE_XFER_MAX];
};
struct onvm_move_section {
	uint32_t region;     /* the state region the table is in (same NF binary) */
	uint32_t capacity;   /* its shape, to format dst's if it has none yet */
	uint32_t value_size;
	uint32_t nrec;
	uint64_t bytes;	     /* of records that follow */
};

/* Which side of a move this node is (docs/design/elastic.md, "Across
 * nodes"): both instances here, src here and dst on the node behind
 * peer_port (dst is then ONVM_INST_NONE here), or dst here and src there
 * (src ONVM_INST_NONE: the record mirrors the other node's move). */
enum onvm_move_xnode {
	ONVM_MOVE_LOCAL = 0,
	ONVM_MOVE_TO_PEER,
	ONVM_MOVE_FROM_PEER,
};

struct onvm_move {
	uint32_t state;	 /* enum onvm_move_state, atomic */
	uint32_t gen;	 /* a new one per move in the slot (the tag's) */
	uint16_t service, src, dst;
	uint8_t method;	 /* enum onvm_move_method */
	uint8_t fail;	 /* enum onvm_move_fail: the first reason given (atomic) */
	uint8_t xnode;	 /* enum onvm_move_xnode */
	uint8_t pad_x;
	uint16_t peer_port; /* the link to the other node (not LOCAL) */
	uint16_t peer_inst; /* TO_PEER: dst's instance id on the other node */
	uint32_t peer_slot, peer_gen; /* the move's slot and gen on the other node */
	/* Progress that must outlive the NF process (a local standby promoted
	 * after the flip carries on from it), each published by libnf once
	 * the batch that did it has committed. */
	uint32_t src_exported, dst_imported;
	uint32_t src_gone; /* the manager: src died or failed over (dst waits no more) */
	uint32_t lossy;	   /* a copy lost after the flip began: dst lacks a packet */
	uint64_t buckets[ONVM_FLOW_BUCKETS / 64];
	uint32_t n_buckets;
	/* TX unit: the START (END) marker came out of src, every output
	 * before it routed on. */
	uint32_t start_out, end_out;
	uint64_t seq;	 /* tags handed out (units, atomic) */
	uint64_t copies; /* REPROCESS: copies made (BUFFER: packets sent to dst) */
	uint64_t copies_lost; /* of them, never reached dst (its ring full, it died) */
	/* src's libnf */
	uint32_t src_freed;
	uint64_t exported_flows, exported_bytes, freed_flows;
	uint64_t src_flows;	/* entries src's tables held at the export, in all */
	/* dst's libnf */
	uint64_t imported_flows;
	uint64_t dst_seen;	/* tagged packets dst handled or dropped */
	uint64_t reprocessed, skipped_included, nd_replayed, nd_short, dst_dropped;
	uint64_t dst_waits_ns;	/* time dst waited for src */
	/* times (CLOCK_MONOTONIC ns) */
	uint64_t t_start, t_exported, t_imported, t_flip, t_done;
};

struct onvm_chain {
	char name[ONVM_NAME_LEN];
	uint16_t len;			    /* number of services */
	uint16_t services[ONVM_MAX_CHAIN_LEN];
	uint16_t exit_port;		    /* where NEXT after the last step goes */
	uint8_t exit_drop;		    /* 1: drop instead of exit_port */
	uint8_t used;
	/* Stateless resiliency (docs/design/stateless.md): its NFs keep their
	 * state in `store`.  sl_token names this run of the chain (a recovery
	 * of it: onvm_store.h FENCE); sl_committed (atomic, manager-written)
	 * is the newest epoch whose marker the exit released: every NF closed
	 * it, and the store has it. */
	uint8_t stateless;
	struct onvm_store_cfg store;
	uint64_t sl_token;
	uint64_t sl_committed;
	/* Written by the manager before a recovery's launch: 1 + the epoch its
	 * NFs load (the newest marker the exit released); 0: not known (a
	 * node's first start), the store decides. */
	uint64_t sl_recover_epoch;
	/* Atomic, manager-written: 1 while the NFs must not touch the store
	 * yet -- a spare node's, until its predecessor fails the chain over to
	 * it (docs/design/stateless.md, "A node lost"). */
	uint8_t sl_hold;
};

/* A flow rule: IPv4 5-tuple with prefixes and port ranges; 0-length prefix
 * or full port range means wildcard; proto 0 means any. */
struct onvm_flow_rule {
	uint32_t src_ip, src_mask;
	uint32_t dst_ip, dst_mask;
	uint16_t sport_lo, sport_hi;
	uint16_t dport_lo, dport_hi;
	uint8_t proto;
	uint8_t in_port;     /* 0xff: any ingress port */
	uint16_t chain_id;
	uint64_t hits;
};

struct onvm_port_info {
	uint16_t port_id;
	uint8_t used;
	char name[ONVM_NAME_LEN];
	uint16_t default_chain; /* chain id for this ingress port */
	uint8_t has_default_chain;
	uint8_t no_rx;		  /* output-only port */
	uint8_t peer;		  /* a link to a node flows may move to and from */
	struct rte_ring *tx_ring; /* port-bound packets from the RX unit */
};

/*
 * Shared state across a service's instances on every node
 * (docs/design/elastic.md): counters by key, updated by nf_shared_add()
 * (an NF adds to its slot's running sum), made linearizable by etcd --
 * the node's agent takes the deltas in batches (/onvm/shared/take),
 * applies each batch in one etcd transaction, and hands the committed
 * values back (/onvm/shared/commit), which nf_shared_get() reads.
 */
struct onvm_shared {
	int64_t value[ONVM_SHARED_KEYS];    /* committed (manager-written, atomic) */
	uint64_t revision[ONVM_SHARED_KEYS]; /* etcd's mod revision of it */
};

struct onvm_shm {
	uint64_t magic;
	uint32_t version;
	uint32_t layout; /* ONVM_SHM_LAYOUT of the manager's build */
	uint32_t nb_ports;
	int dynfield_offset;
	char node_name[ONVM_NAME_LEN];
	int32_t mgr_pid;
	uint32_t shutting_down; /* atomic */
	/* The longest nap of an idle data lcore (idle.max_sleep_us): how long an
	 * NF may have to wait for the TX unit to refill its alloc ring. */
	uint32_t mgr_max_nap_us;
	/* CPUs the manager's data lcores run on: a standby never waits or spins
	 * at real-time priority there (libnf's nf_standby.c). */
	cpu_set_t mgr_cpus;
	/* NF state blocks live in a hugetlbfs segment mapped at the same fixed
	 * address by the manager and every NF (onvm_seg.h): state_seg_size 0
	 * when the node has none.  Slots name blocks by offset in it. */
	char state_seg_path[256];
	uint64_t state_seg_va;
	uint64_t state_seg_size;

	uint16_t default_chain;
	uint8_t has_default_chain;
	uint16_t nb_rules;
	struct onvm_flow_rule rules[ONVM_MAX_FLOW_RULES];
	struct onvm_chain chains[ONVM_MAX_CHAINS];
	struct onvm_port_info ports[ONVM_MAX_PORTS];
	struct onvm_service services[ONVM_MAX_SERVICES];
	struct onvm_nf_slot nfs[ONVM_MAX_NFS];
	struct onvm_move moves[ONVM_MAX_MOVES];
	struct onvm_shared shared;
};

/*
 * A signature of the layout both sides compile: sizes, the offsets the
 * crash arithmetic reads, and the registration messages.  The manager and every NF compare it as well as
 * ONVM_SHM_VERSION, so a layout changed without a version bump is refused
 * (a record read at the wrong offsets would free mbufs twice), not trusted.
 */
#define ONVM_SHM_LAYOUT                                                                     \
	((uint32_t)(sizeof(struct onvm_shm) * 31u + sizeof(struct onvm_nf_slot) * 17u +        \
		    offsetof(struct onvm_nf_slot, batch) * 13u +                                \
		    offsetof(struct onvm_nf_batch, rx_seen) * 7u +                              \
		    offsetof(struct onvm_nf_batch, alloc_seen) * 5u +                           \
		    offsetof(struct onvm_nf_batch, held) * 3u + sizeof(struct onvm_pkt_meta) +       \
		    sizeof(struct onvm_mp_register_req) * 11u +                                 \
		    sizeof(struct onvm_mp_register_rep) * 19u))

/* rte_mp request/reply payloads. */
/* Sent with a pidfd of the NF (rte_mp_msg.fds[0]): the manager takes the
 * NF's pid from it and watches it. */
struct onvm_mp_register_req {
	uint32_t shm_version;
	uint32_t shm_layout; /* ONVM_SHM_LAYOUT */
	int32_t pid;	     /* getpid(): for the logs, if it differs */
	uint16_t service_id;
	int16_t instance_id; /* -1: any free slot */
	uint32_t lcore_id;
	uint32_t standby; /* 1: register as the standby of instance_id */
	char name[ONVM_NAME_LEN];
};

struct onvm_mp_register_rep {
	int32_t result;	      /* 0 or -errno */
	int32_t pid;	      /* the NF's pid as the manager (and its slot) knows it */
	uint16_t instance_id;
	char reason[96];
};

struct onvm_mp_state_req {
	uint16_t instance_id;
	uint32_t generation;
};

struct onvm_mp_state_rep {
	int32_t result; /* 0 or -errno */
	char reason[160];
};

struct onvm_mp_unregister_req {
	uint16_t instance_id;
	uint32_t generation;
};

/* The first nf_pkt_alloc() asks the manager to fill the NF's alloc ring and
 * keep it filled (the TX unit does, from its next poll). */
struct onvm_mp_gen_req {
	uint16_t instance_id;
	uint32_t generation;
};

struct onvm_mp_gen_rep {
	int32_t result; /* 0 or -errno */
};

_Static_assert(sizeof(struct onvm_mp_register_req) <= RTE_MP_MAX_PARAM_LEN, "fits rte_mp");
_Static_assert(sizeof(struct onvm_mp_register_rep) <= RTE_MP_MAX_PARAM_LEN, "fits rte_mp");
_Static_assert(sizeof(struct onvm_mp_state_req) <= RTE_MP_MAX_PARAM_LEN, "fits rte_mp");
_Static_assert(sizeof(struct onvm_mp_state_rep) <= RTE_MP_MAX_PARAM_LEN, "fits rte_mp");
_Static_assert(sizeof(struct onvm_mp_unregister_req) <= RTE_MP_MAX_PARAM_LEN, "fits rte_mp");
_Static_assert(sizeof(struct onvm_mp_gen_req) <= RTE_MP_MAX_PARAM_LEN, "fits rte_mp");
_Static_assert(ONVM_MAX_NFS <= INT16_MAX && ONVM_MAX_SERVICES <= UINT16_MAX,
	       "instance and service ids fit the request fields");

static inline struct onvm_pkt_meta *
onvm_pkt_meta(struct rte_mbuf *m, int offset)
{
	return RTE_MBUF_DYNFIELD(m, offset, struct onvm_pkt_meta *);
}

#ifdef __cplusplus
}
#endif
#endif /* ONVM_COMMON_H */
