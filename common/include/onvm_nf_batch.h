/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_nf_batch.h -- the crash arithmetic: which mbufs an NF that died at any
 * instruction still owned, from its batch record (struct onvm_nf_batch, whose
 * comment gives the protocol) and the indices of its rings.  The manager's
 * reclamation, a promoting standby, and the shutdown drain all use these, so
 * the rules live in one place.
 *
 * The arithmetic reads and repairs the NF's end of each ring through the
 * head/tail pair of DPDK's MT/ST sync modes, and relies on the NF being that
 * end's only user.  onvm_nf_rings_check() verifies at start-up (manager) and
 * attach (libnf) that the rings have exactly the shape assumed: a ring created
 * with HTS/RTS sync, or by a DPDK whose struct rte_ring differs, is refused
 * rather than miscounted.
 */
#ifndef ONVM_NF_BATCH_H
#define ONVM_NF_BATCH_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ring.h>

#include "onvm_common.h"

/* What a dead NF owned of held[]. */
struct onvm_batch_owned {
	uint32_t first;	  /* held[first .. last) are the NF's, nobody else's */
	uint32_t last;
	bool unprocessed; /* it died between its dequeue and the record: held[0 .. last)
			   * were never handed to a handler, nothing was emitted */
};

/*
 * Is `r` a ring whose `sp`/`sc` end a single thread owns and whose other end
 * uses head/tail (MT or ST) sync?  (RTE_RING_SYNC_MT_HTS/RTS keep their
 * indices elsewhere.)
 */
static inline bool
onvm_ring_shape_ok(const struct rte_ring *r, bool sp, bool sc)
{
	enum rte_ring_sync_type p = r->prod.sync_type, c = r->cons.sync_type;

	if (p != RTE_RING_SYNC_ST && p != RTE_RING_SYNC_MT)
		return false;
	if (c != RTE_RING_SYNC_ST && c != RTE_RING_SYNC_MT)
		return false;
	return (!sp || p == RTE_RING_SYNC_ST) && (!sc || c == RTE_RING_SYNC_ST);
}

/* The shape every NF slot's rings must have: RX single-consumer, TX
 * single-producer and single-consumer, alloc single-producer (the manager's
 * TX unit) and single-consumer (the NF).  Returns 0 or -EPROTO. */
static inline int
onvm_nf_rings_check(const struct onvm_nf_slot *s)
{
	if (s->rx_ring == NULL || s->tx_ring == NULL || s->alloc_ring == NULL)
		return -EPROTO;
	if (!onvm_ring_shape_ok(s->rx_ring, false, true) ||
	    !onvm_ring_shape_ok(s->tx_ring, true, true) ||
	    !onvm_ring_shape_ok(s->alloc_ring, true, true))
		return -EPROTO;
	return 0;
}

/* Undo the dead NF's half-done ring operations: a dequeue that moved
 * cons.head but not cons.tail left its objects in the ring; an enqueue that
 * moved prod.head but not prod.tail was never visible.  Only after the NF is
 * dead (or by its promoting standby, now the only user of the NF's ends). */
static inline void
onvm_nf_rings_repair(struct onvm_nf_slot *s)
{
	s->rx_ring->cons.head = s->rx_ring->cons.tail;
	s->tx_ring->prod.head = s->tx_ring->prod.tail;
	s->alloc_ring->cons.head = s->alloc_ring->cons.tail;
}

/* Packets of held[] the NF has put on its TX ring so far. */
static inline uint32_t
onvm_batch_emitted(const struct onvm_nf_batch *b, const struct rte_ring *tx)
{
	return __atomic_load_n(&tx->prod.tail, __ATOMIC_ACQUIRE) - b->tx_base;
}

/*
 * What the dead NF of `s` owned (its rings repaired first).  Returns 0, or
 * -EINVAL if the record cannot be right (a stray write of the dying NF): then
 * `o` says it owned nothing, and the caller logs it -- leaking a batch is
 * better than freeing mbufs that are somewhere else.
 */
static inline int
onvm_batch_owned(const struct onvm_nf_slot *s, struct onvm_batch_owned *o)
{
	const struct onvm_nf_batch *b = &s->batch;
	uint32_t rx_tail = s->rx_ring->cons.tail;
	uint32_t held_n = b->held_n;

	*o = (struct onvm_batch_owned){0};
	if (rx_tail != b->rx_seen) {
		if (rx_tail - b->rx_seen > ONVM_BURST)
			return -EINVAL;
		o->unprocessed = true;
		o->last = rx_tail - b->rx_seen;
		return 0;
	}
	if (s->alloc_ring->cons.tail != b->alloc_seen) {
		/* Died inside nf_pkt_alloc(), after its dequeue. */
		if (s->alloc_ring->cons.tail - b->alloc_seen != 1 || b->alloc_at >= ONVM_NF_HELD_MAX)
			return -EINVAL;
		held_n = b->alloc_at + 1;
	}
	o->first = onvm_batch_emitted(b, s->tx_ring);
	o->last = held_n;
	if (o->last > ONVM_NF_HELD_MAX || o->first > o->last) {
		*o = (struct onvm_batch_owned){0};
		return -EINVAL;
	}
	return 0;
}

/*
 * The NF's side of the protocol: the record's stores, in the order the
 * arithmetic above relies on, each a release store (no store of the batch,
 * and no compiler, moves them).  `step`, if not NULL, is called after each
 * store (tests die there); libnf passes NULL, which compiles away.
 */
typedef void onvm_batch_step_fn(const char *step);

static inline void
onvm_batch_set_base(struct onvm_nf_batch *b, uint32_t tx_base, uint32_t held_n)
{
	struct onvm_nf_batch v;

	v.tx_base = tx_base;
	v.held_n = held_n;
	__atomic_store_n(&b->base_n, v.base_n, __ATOMIC_RELEASE);
}

/* A batch starts: `n` packets were just dequeued into held[] (0 for a tick). */
static inline void
onvm_batch_record_open(struct onvm_nf_slot *s, uint32_t n, uint64_t seq_before,
		       onvm_batch_step_fn *step)
{
	struct onvm_nf_batch *b = &s->batch;

	__atomic_store_n(&b->committed, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&b->seq_before, seq_before, __ATOMIC_RELEASE);
	__atomic_store_n(&b->alloc_seen, s->alloc_ring->cons.tail, __ATOMIC_RELEASE);
	if (step != NULL)
		step("open: alloc_seen");
	onvm_batch_set_base(b, s->tx_ring->prod.tail, n);
	if (step != NULL)
		step("open: tx_base and held_n");
	__atomic_store_n(&b->rx_seen, s->rx_ring->cons.tail, __ATOMIC_RELEASE);
}

/* nf_pkt_alloc(): before its dequeue into held[at] ... */
static inline void
onvm_batch_record_alloc_at(struct onvm_nf_slot *s, uint32_t at)
{
	__atomic_store_n(&s->batch.alloc_at, at, __ATOMIC_RELEASE);
}

/* ... and after it. */
static inline void
onvm_batch_record_alloc_done(struct onvm_nf_slot *s, uint32_t at, onvm_batch_step_fn *step)
{
	__atomic_store_n(&s->batch.held_n, at + 1, __ATOMIC_RELEASE);
	if (step != NULL)
		step("alloc: held_n");
	__atomic_store_n(&s->batch.alloc_seen, s->alloc_ring->cons.tail, __ATOMIC_RELEASE);
}

/* A promoting standby settled its dead active's batch at `held_n` (what it
 * owns, from onvm_batch_owned(); the emitted prefix if the record was bad). */
static inline void
onvm_batch_record_settled(struct onvm_nf_slot *s, uint32_t held_n, onvm_batch_step_fn *step)
{
	__atomic_store_n(&s->batch.held_n, held_n, __ATOMIC_RELEASE);
	if (step != NULL)
		step("settled: held_n");
	__atomic_store_n(&s->batch.alloc_seen, s->alloc_ring->cons.tail, __ATOMIC_RELEASE);
}

/* Has a live NF emitted everything it holds?  (The shutdown drain.)  Base
 * and count read in one load: they belong to the same batch. */
static inline bool
onvm_batch_drained(const struct onvm_nf_slot *s)
{
	struct onvm_nf_batch v;

	v.base_n = __atomic_load_n(&s->batch.base_n, __ATOMIC_ACQUIRE);
	return v.held_n == __atomic_load_n(&s->tx_ring->prod.tail, __ATOMIC_ACQUIRE) - v.tx_base;
}

#endif /* ONVM_NF_BATCH_H */
