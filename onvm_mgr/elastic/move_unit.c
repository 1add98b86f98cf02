/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * move_unit.c -- flow migration on the data units (move.h).
 *
 * The hook runs for packets routed to an NF that is the src of a live
 * move, after routing and before the packet is buffered for the NF's ring:
 * whatever the unit, every packet of a moving bucket is tagged with the
 * move's next sequence number, and its copy (REPROCESS) goes into dst's
 * buffer -- the same unit's, so per flow the copies reach dst in the order
 * the originals reach src.  A copy is a real copy of the data: src may
 * rewrite the original (a balancer does) before dst reprocesses it.
 */
#include <rte_mbuf.h>

#include "mgr.h"
#include "elastic/move.h"
#include "elastic/move_peer.h"

bool mgr_moves_any;
uint32_t mgr_move_hook[ONVM_MAX_NFS];
uint8_t mgr_move_into[ONVM_MAX_NFS];
struct onvm_move_xfer *mgr_move_xfer[ONVM_MAX_MOVES];

void
mgr_move_fail(uint32_t slot, enum onvm_move_fail why)
{
	struct onvm_move *mv = &mgr.shm->moves[slot];
	uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);
	uint8_t none = ONVM_MOVE_OK;

	if (st == ONVM_MOVE_FREE)
		return;
	/* Once the flip began dst owns the flows: a copy lost then leaves
	 * dst a packet short -- said, not undone (lossy). */
	if (st >= ONVM_MOVE_FLIPPING) {
		if (why == ONVM_MOVE_FAIL_COPY && st != ONVM_MOVE_FAILED)
			__atomic_store_n(&mv->lossy, 1, __ATOMIC_RELEASE);
		return;
	}
	/* the first reason given is the one, there before FAILED is */
	__atomic_compare_exchange_n(&mv->fail, &none, (uint8_t)why, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
	while (st != ONVM_MOVE_FREE && st < ONVM_MOVE_FLIPPING)
		if (__atomic_compare_exchange_n(&mv->state, &st, ONVM_MOVE_FAILED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return;
	if (st >= ONVM_MOVE_FLIPPING && st != ONVM_MOVE_FAILED && why == ONVM_MOVE_FAIL_COPY)
		__atomic_store_n(&mv->lossy, 1, __ATOMIC_RELEASE);
}

/* The same for a dst on another node: over the link (move_peer_unit.c). */
static bool
divert_to_peer(uint32_t slot, struct onvm_move *mv, struct rte_mbuf *m)
{
	struct rte_mbuf *c = m;
	bool sent;

	/* Counted once queued (or not): the copies a SYNC counts are ahead of
	 * it on the link, so the dst node can tell one lost on the way. */
	if (mv->method == ONVM_MOVE_BUFFER) {
		sent = mgr_move_peer_send_tagged(m, mv, ONVM_XM_BUFFERED);
	} else {
		c = rte_pktmbuf_copy(m, mgr.pool, 0, UINT32_MAX);
		if (c != NULL)
			*onvm_pkt_meta(c, mgr.dyn_off) = *onvm_pkt_meta(m, mgr.dyn_off);
		sent = c != NULL && mgr_move_peer_send_tagged(c, mv, ONVM_XM_COPY);
	}
	if (likely(sent)) {
		__atomic_add_fetch(&mv->copies, 1, __ATOMIC_RELEASE);
	} else {
		/* (buffering: the flow's packet with it) -- the move fails,
		 * or after the flip began is lossy */
		__atomic_add_fetch(&mv->copies_lost, 1, __ATOMIC_RELAXED);
		mgr_move_fail(slot, ONVM_MOVE_FAIL_COPY);
	}
	return mv->method == ONVM_MOVE_BUFFER;
}

bool
mgr_move_divert(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, const struct mgr_dest *d)
{
	struct onvm_pkt_meta *meta = onvm_pkt_meta(m, mgr.dyn_off);
	uint32_t hook = __atomic_load_n(&mgr_move_hook[d->id], __ATOMIC_ACQUIRE);
	uint32_t b = ONVM_FLOW_BUCKET(meta->flow_hash);

	if (meta->flags & (ONVM_PKT_F_MARKER | ONVM_PKT_F_MOVE_COPY | ONVM_PKT_F_CTRL))
		return false;
	while (hook != 0) {
		uint32_t slot = (uint32_t)__builtin_ctz(hook);
		struct onvm_move *mv = &mgr.shm->moves[slot];
		struct mgr_dest to = {.kind = MGR_DEST_NF, .id = mv->dst};
		uint64_t seq;

		hook &= hook - 1;
		if (!onvm_bucket_in(mv->buckets, b))
			continue;
		/* (a failed move's hook is about to go: not this move's
		 * packet -- another live one may cover the bucket) */
		if (__atomic_load_n(&mv->state, __ATOMIC_ACQUIRE) == ONVM_MOVE_FAILED)
			continue;
		seq = __atomic_add_fetch(&mv->seq, 1, __ATOMIC_RELAXED);
		meta->ts = ONVM_MOVE_TAG(slot, mv->gen, seq);
		if (mv->xnode == ONVM_MOVE_TO_PEER)
			return divert_to_peer(slot, mv, m);
		if (mv->method == ONVM_MOVE_BUFFER) {
			__atomic_add_fetch(&mv->copies, 1, __ATOMIC_RELAXED);
			mgr_dp_dispatch(ctx, m, &to);
			return true;
		}
		struct rte_mbuf *c = rte_pktmbuf_copy(m, mgr.pool, 0, UINT32_MAX);

		if (unlikely(c == NULL)) {
			/* dst would miss a packet src handles: the move fails,
			 * src keeps the flows (and this packet). */
			meta->ts = 0;
			mgr_move_fail(slot, ONVM_MOVE_FAIL_COPY);
			return false;
		}
		*onvm_pkt_meta(c, mgr.dyn_off) = *meta;
		onvm_pkt_meta(c, mgr.dyn_off)->flags |= ONVM_PKT_F_MOVE_COPY;
		__atomic_add_fetch(&mv->copies, 1, __ATOMIC_RELAXED);
		mgr_dp_dispatch(ctx, c, &to);
		return false;
	}
	return false;
}

void
mgr_move_lost(uint16_t id, struct rte_mbuf *m)
{
	const struct onvm_pkt_meta *meta = onvm_pkt_meta(m, mgr.dyn_off);
	uint32_t slot = ONVM_MOVE_TAG_SLOT(meta->ts);
	struct onvm_move *mv;
	struct onvm_move_log_entry *e;

	if (slot >= ONVM_MAX_MOVES)
		return;
	mv = &mgr.shm->moves[slot];
	if ((mv->gen & 0xff) != ONVM_MOVE_TAG_GEN(meta->ts))
		return;
	if (id == mv->dst) {
		/* A copy dst never gets (its state would lack the packet), or,
		 * buffering, the packet itself: lost, so the move fails (after
		 * the flip began: lossy). */
		__atomic_add_fetch(&mv->copies_lost, 1, __ATOMIC_RELAXED);
		mgr_move_fail(slot, ONVM_MOVE_FAIL_COPY);
		return;
	}
	if (id != mv->src || mgr_move_xfer[slot] == NULL)
		return;
	/* (the entry may still be dst's to read: src_begin's check) */
	if (ONVM_MOVE_TAG_SEQ(meta->ts) >
	    __atomic_load_n(&mv->dst_seen, __ATOMIC_ACQUIRE) + ONVM_MOVE_LOG_SIZE) {
		mgr_move_fail(slot, ONVM_MOVE_FAIL_LOG);
		return;
	}
	/* src never handles it, and its copy may be reprocessed already
	 * (dst waits for src's log only for ND values): dst's state would
	 * count a packet src's never did.  The move fails (after the flip
	 * began: lossy); the entry tells a dst waiting on it. */
	e = &mgr_move_xfer[slot]->log[ONVM_MOVE_TAG_SEQ(meta->ts) & (ONVM_MOVE_LOG_SIZE - 1)];
	e->flags = ONVM_MOVE_LOG_DROPPED;
	e->n_nd = 0;
	__atomic_store_n(&e->tag, meta->ts, __ATOMIC_RELEASE);
	mgr_move_fail(slot, ONVM_MOVE_FAIL_COPY);
}

bool
mgr_move_marker_out(struct mgr_dp_ctx *ctx, uint16_t id, struct rte_mbuf *m)
{
	struct onvm_marker mk;
	struct onvm_move *mv;
	uint32_t slot;

	if (rte_pktmbuf_data_len(m) < sizeof(mk))
		return false;
	memcpy(&mk, rte_pktmbuf_mtod(m, const void *), sizeof(mk));
	if (!(mk.flags & ONVM_MARKER_F_MOVE))
		return false;
	slot = ONVM_MOVE_TAG_SLOT(mk.cut_id);
	/* (one of a dead NF's uncommitted batch says nothing: its standby
	 * rolled back to before it) */
	if (slot < ONVM_MAX_MOVES &&
	    !(onvm_pkt_meta(m, mgr.dyn_off)->flags & ONVM_PKT_F_FAILOVER_DROP)) {
		mv = &mgr.shm->moves[slot];
		/* Every output src made before it has been routed on (into
		 * this unit's buffers, ahead of anything dst sends later). */
		if ((mv->gen & 0xff) == ONVM_MOVE_TAG_GEN(mk.cut_id) && id == mv->src) {
			if (mk.base_id == ONVM_MOVE_MK_START)
				__atomic_store_n(&mv->start_out, 1, __ATOMIC_RELEASE);
			else if (mk.base_id == ONVM_MOVE_MK_END)
				__atomic_store_n(&mv->end_out, 1, __ATOMIC_RELEASE);
		}
	}
	ctx->move_markers++;
	rte_pktmbuf_free(m);
	return true;
}
