/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_nflib.h -- the NF developer's API.
 *
 * An NF is a DPDK secondary process that attaches to one onvm_mgr node,
 * receives packets on its RX ring, runs a handler on them and hands them back
 * with an action (DROP, NEXT, TONF, OUT) in the packet metadata.  Everything
 * else -- EAL start-up, registration with the manager, the poll/sleep loop,
 * crash-safe batch accounting, clean stop on SIGINT/SIGTERM -- is libnf's job.
 *
 *	struct nf_ctx *nf;
 *	int n = nf_init(argc, argv, "my_nf", &nf);   // EAL args -- libnf args -- NF args
 *	argc -= n; argv += n;                        // argv[0] is the program, then NF args
 *	struct nf_ops ops = { .pkt = my_handler };
 *	nf_run(nf, &ops, my_state);
 *	nf_fini(nf);
 *
 * libnf options (between the first and second "--"):
 *   -r, --service ID     service id this instance serves (required)
 *   -n, --instance ID    ask for a particular instance id (default: any free)
 *   -N, --name NAME      name shown in stats (default: the name given to nf_init)
 *       --idle-spin-us U how long to busy-poll an empty ring before sleeping (default 200)
 *       --standby        start as the hot standby of instance -n (local resiliency): map
 *                        its state replica, park without using the CPU, and take over
 *                        when the active dies (nf_run returns only at shutdown)
 *
 * Handlers run in the NF's only thread; they must not block.  The default
 * action of a packet entering the handler is NEXT.
 */
#ifndef ONVM_NFLIB_H
#define ONVM_NFLIB_H

#include <stdint.h>
#include <stdbool.h>
#include <rte_mbuf.h>

#include "onvm_common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nf_ctx;
struct nf_state_set;

/* Per-packet handler: inspect/modify the packet, set meta->action. */
typedef void (*nf_pkt_handler_t)(struct rte_mbuf *pkt, struct onvm_pkt_meta *meta,
				 struct nf_ctx *nf);
/* Per-batch handler: called once per burst instead of the per-packet one. */
typedef void (*nf_batch_handler_t)(struct rte_mbuf **pkts, uint16_t n, struct nf_ctx *nf);
/* Periodic callback (every tick_ms, while idle and between batches under
 * load); may generate packets. */
typedef void (*nf_tick_handler_t)(struct nf_ctx *nf, uint64_t now_ns);

struct nf_ops {
	nf_pkt_handler_t pkt;	  /* one of pkt / batch is required */
	nf_batch_handler_t batch;
	nf_tick_handler_t tick;	  /* optional */
	uint32_t tick_ms;	  /* tick period, default 1000 */
	/* Optional: called once by nf_fini() after the last packet was handled
	 * and before libnf detaches (state regions are still mapped). */
	void (*fini)(struct nf_ctx *nf);
	/* Optional: true if all of the NF's per-flow state is in libnf flow
	 * tables (onvm_flow_table.h) and its random or time decisions go
	 * through nf_nd_*(), so libnf may move flows to another instance
	 * (docs/design/elastic.md).  Per-instance counters may live elsewhere;
	 * per-flow state that does not (a NAT's port pool) must not.  A move
	 * of an NF that does not say so is refused.  Packet handlers only. */
	bool movable;
};

/* Offset of struct onvm_pkt_meta in every mbuf; valid after nf_init(). */
extern int nf_pkt_meta_offset;

/*
 * Start the EAL as a secondary of the node's manager, parse libnf's options
 * and register with the manager.  Returns the number of arguments consumed
 * (so that argv + ret holds the program name followed by the NF's own
 * arguments), or a negative errno with a message logged.  The NF is
 * registered and routed to when this returns.
 */
int nf_init(int argc, char **argv, const char *default_name, struct nf_ctx **nf);

/* Run the loop until nf_stop(), SIGINT/SIGTERM, or the manager asks. */
int nf_run(struct nf_ctx *nf, const struct nf_ops *ops, void *user);

/* Ask the run loop to return (async-signal-safe). */
void nf_stop(struct nf_ctx *nf);

/* Unregister from the manager and release the EAL. */
void nf_fini(struct nf_ctx *nf);

/*
 * Shared state across instances, on every node (docs/design/elastic.md):
 * ONVM_SHARED_KEYS 64-bit counters by key, one value cluster-wide.
 * nf_shared_add() adds `delta` (at once to this NF's running sum; the
 * node's agent applies it to etcd in a batch, in one transaction, never
 * twice); nf_shared_get() returns the value etcd last committed (this
 * node's adds not applied yet are not in it).  0, or -EINVAL for a key out
 * of range.
 */
/*
 * True while the packet handler runs on a flow migration's copy: the
 * packet was handled by the flow's old instance already, and is run here
 * only to bring the flow's state (its flow-table entries) up to date --
 * its output is dropped.  Per-instance counters (totals, statistics)
 * should not count it again.
 */
bool nf_is_reprocessing(const struct nf_ctx *nf);

int nf_shared_add(struct nf_ctx *nf, uint32_t key, int64_t delta);
int64_t nf_shared_get(struct nf_ctx *nf, uint32_t key);

void *nf_user(const struct nf_ctx *nf);
uint16_t nf_service_id(const struct nf_ctx *nf);
uint16_t nf_instance_id(const struct nf_ctx *nf);
const char *nf_name(const struct nf_ctx *nf);
const struct onvm_nf_stats *nf_stats(const struct nf_ctx *nf);
/* Number of ports the node has (valid port ids for nf_pkt_out are 0..n-1). */
uint16_t nf_port_count(const struct nf_ctx *nf);
bool nf_stopping(const struct nf_ctx *nf);

/* Packet metadata and actions. */
static inline struct onvm_pkt_meta *
nf_pkt_meta(struct rte_mbuf *pkt)
{
	return onvm_pkt_meta(pkt, nf_pkt_meta_offset);
}

static inline void
nf_pkt_drop(struct onvm_pkt_meta *meta)
{
	meta->action = ONVM_ACTION_DROP;
}

static inline void
nf_pkt_next(struct onvm_pkt_meta *meta)
{
	meta->action = ONVM_ACTION_NEXT;
}

static inline void
nf_pkt_to_nf(struct onvm_pkt_meta *meta, uint16_t service_id)
{
	meta->action = ONVM_ACTION_TONF;
	meta->destination = service_id;
}

static inline void
nf_pkt_out(struct onvm_pkt_meta *meta, uint16_t port_id)
{
	meta->action = ONVM_ACTION_OUT;
	meta->destination = port_id;
}

/*
 * NF-generated packets, from a handler or the tick only.  nf_pkt_alloc()
 * returns an mbuf (fresh metadata, action DROP) that already belongs to the
 * current batch, or NULL: outside a handler or tick, when the batch holds
 * ONVM_NF_HELD_MAX packets, or when no mbuf can be had (it may wait a little
 * for the manager to refill the NF's reserve; the first call asks for one).
 * Fill it, set its action, and nf_pkt_send() it: 0, or -EINVAL for an mbuf
 * that is not an unsent nf_pkt_alloc() one of this batch.  A packet never sent
 * leaves as DROP; never free one yourself (nor call DPDK's mbuf allocation or
 * free functions: see docs/nf-developer-guide.md).
 */
struct rte_mbuf *nf_pkt_alloc(struct nf_ctx *nf);
int nf_pkt_send(struct nf_ctx *nf, struct rte_mbuf *pkt);

/*
 * State regions.  Declare every region before nf_run() with
 * nf_state_declare(), then nf_state_map() once: the manager allocates the
 * regions (and a replica of each for a standby) in hugepage memory that
 * outlives the NF.  nf_state_ptr() gives a region's address.
 *
 * The contract: call nf_touch() on a range BEFORE writing it.  libnf commits
 * the touched chunks to the replica at the end of every batch, atomically
 * (process -> commit -> emit), so the replica always holds the state that
 * matches exactly the packets the NF has emitted.  Writes to untouched memory
 * are not committed.  Regions are used in place, so pointers into them stay
 * valid for a standby on the same node.
 *
 * chunk_size: dirty-tracking granularity, a power of two 64 B..1 MiB (0: 1 KB).
 * Returns 0 or a negative errno with the reason logged.
 */
int nf_state_declare(struct nf_ctx *nf, const char *name, size_t size, size_t chunk_size);
int nf_state_map(struct nf_ctx *nf);
void *nf_state_ptr(struct nf_ctx *nf, const char *name);
void nf_touch(struct nf_ctx *nf, const void *ptr, size_t len);

/* The NF's state set (after nf_state_map(); NULL before or without state),
 * for EAL-free helpers that track their own writes -- the flow table
 * (onvm_flow_table.h), the region heap (onvm_region_heap.h). */
struct nf_state_set *nf_state(struct nf_ctx *nf);

/* The clock for idle timers and expiry, and for every time an NF keeps in
 * its state, in ns (the tick's now_ns is of it too): CLOCK_MONOTONIC, plus
 * the offset the manager sets when a protected chain takes over on another
 * node -- there it is the primary's clock, going on, so that an entry
 * stamped there keeps its age.  Only differences mean anything. */
uint64_t nf_clock_ns(void);

/*
 * Publish counters of the NF's own in the node's telemetry, where
 * /onvm/nf/app,INSTANCE shows them as a dict (DPDK 22.11 gives secondary
 * processes no telemetry socket of their own).  Rewrite the whole table at
 * once: nf_app_stats_begin(), up to 32 nf_app_stat() calls, then
 * nf_app_stats_end().  Names keep [A-Za-z0-9_] and at most 23 characters
 * (anything else becomes '_').  Slow path: call from the tick.
 * nf_app_stat() returns 0, or -ENOSPC when the table is full.
 */
void nf_app_stats_begin(struct nf_ctx *nf);
int nf_app_stat(struct nf_ctx *nf, const char *name, uint64_t value);
void nf_app_stats_end(struct nf_ctx *nf);

/* True from nf_init() of a standby until it is promoted. */
bool nf_is_standby(const struct nf_ctx *nf);

/*
 * Fault injection, for tests of resiliency: the hook is called at each point
 * of every batch's end; a hook that kills the process there simulates a crash
 * at that instruction.  Not for production NFs (it changes how batches are
 * emitted: in two halves).  Without code, any NF can be failed from the
 * environment: ONVM_NF_FAULT=NAME:POINT:N (POINT processed, mid_commit,
 * committed, mid_emit, mid_alloc or fini) SIGKILLs the first incarnation of
 * the NF named NAME at POINT once it has received N or more packets; and
 * ONVM_NF_FAULT=NAME:registered:MS stalls it MS milliseconds between
 * registration and taking its liveness lock (a slow active), and
 * ONVM_NF_FAULT=NAME:promoting:0 SIGKILLs every standby of NAME inside its
 * promotion.
 */
enum nf_fault_point {
	NF_FAULT_PROCESSED,  /* handlers done, state not committed */
	NF_FAULT_MID_COMMIT, /* commit point passed, replica half-updated */
	NF_FAULT_COMMITTED,  /* state committed, nothing emitted */
	NF_FAULT_MID_EMIT,   /* the first half of the batch emitted */
	NF_FAULT_MID_ALLOC,  /* inside nf_pkt_alloc(): mbuf taken, not yet recorded */
	NF_FAULT_REGISTERED, /* registered, liveness lock not yet taken (active) */
	NF_FAULT_FINI,	     /* in nf_fini(): unregistered and drained, lock still held */
	NF_FAULT_PROMOTING,  /* a standby's promotion: the dead batch decided, not emitted */
	NF_FAULT_PARKING,    /* a standby registered (state attached), not yet parked */
};
typedef void (*nf_fault_fn)(struct nf_ctx *nf, enum nf_fault_point point);
void nf_set_fault_hook(struct nf_ctx *nf, nf_fault_fn fn);

/*
 * Non-determinism.  A decision that a replay of the same input might take
 * differently (a random choice, the time of day) must be announced, so that
 * resiliency knows the packet's outcome cannot be re-derived and has to be
 * made durable before the packet leaves.  nf_mark_nd() flags a packet by hand;
 * the helpers below flag the packet being handled themselves, so they cannot
 * be forgotten: in a per-packet handler the current packet, in a batch
 * handler (where there is no single current packet) every packet of the
 * batch, and in a tick every packet the tick generates.
 */
static inline void
nf_mark_nd(struct rte_mbuf *pkt)
{
	nf_pkt_meta(pkt)->flags |= ONVM_PKT_F_ND;
}

static inline bool
nf_pkt_is_nd(struct rte_mbuf *pkt)
{
	return (nf_pkt_meta(pkt)->flags & ONVM_PKT_F_ND) != 0;
}

/* A random 64-bit number (rte_rand); marks the packet(s) being handled ND. */
uint64_t nf_nd_rand(struct nf_ctx *nf);
/* Wall-clock time in ns (CLOCK_REALTIME); marks the packet(s) being handled ND. */
uint64_t nf_nd_time_ns(struct nf_ctx *nf);

#ifdef __cplusplus
}
#endif
#endif /* ONVM_NFLIB_H */
