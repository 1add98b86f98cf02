/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * move_peer_unit.c -- flow migration across nodes on the data units
 * (move_peer.h).
 *
 * Every frame for the peer goes through the port's TX ring (also from the
 * TX unit, which drains that ring): one queue, so the peer gets them in
 * the order they were queued.  That is what orders a moving flow's copies
 * (queued before the flip's grace period ends) ahead of its handed-over
 * packets (routed after it), as dst's ring does on one node.
 */
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "mgr.h"
#include "elastic/move.h"
#include "elastic/move_peer.h"

bool mgr_peer_any;
bool mgr_peer_port[ONVM_MAX_PORTS];
uint64_t mgr_peer_mirror[ONVM_MAX_PORTS][ONVM_MAX_MOVES];
struct rte_ring *mgr_peer_ctl_ring;
struct rte_ring *mgr_peer_out_ring, *mgr_peer_out_free;
struct mgr_peer_out mgr_peer_out[MGR_PEER_OUT_N];
/* TX unit: an entry the port's ring had no room for, sent first next poll. */
static struct mgr_peer_out *out_held;
struct mgr_peer_stats mgr_peer_stats;
uint16_t mgr_peer_owner[ONVM_MAX_NFS];
uint64_t mgr_peer_owned[ONVM_MAX_NFS][ONVM_FLOW_BUCKETS / 64];
/* Destination (broadcast: a point-to-point link) and source MACs, by port
 * (move_peer_ctl.c fills them at start-up). */
uint8_t mgr_peer_mac[ONVM_MAX_PORTS][12];

#define COUNT(field) __atomic_fetch_add(&mgr_peer_stats.field, 1, __ATOMIC_RELAXED)

static void
data_of(struct onvm_xm_data *d, const struct onvm_pkt_meta *meta, uint8_t type)
{
	memset(d, 0, sizeof(*d));
	d->type = type;
	d->chain_id = meta->chain_id;
	d->chain_index = meta->chain_index;
	d->flags = (meta->flags & ONVM_PKT_F_ND) ? ONVM_XM_F_ND : 0;
	d->in_port = meta->in_port;
	d->egress_port = meta->egress_port;
	d->flow_hash = meta->flow_hash;
}

/* Wrap `m` in the frame of `d` and queue it for `port`; false: dropped
 * (freed, counted). */
static bool
send_data(struct rte_mbuf *m, uint16_t port, const struct onvm_xm_data *d)
{
	/* (the link must carry the chain's longest frame and these 42
	 * bytes: one too long is lost on it, counted by its port) */
	uint8_t *f = (uint8_t *)rte_pktmbuf_prepend(m, ONVM_XM_DATA_LEN);

	if (unlikely(f == NULL)) {
		COUNT(no_headroom);
		rte_pktmbuf_free(m);
		return false;
	}
	onvm_xm_data_encode(f, mgr_peer_mac[port], d);
	/* (out of the port as it is: no chain's exit handling) */
	onvm_pkt_meta(m, mgr.dyn_off)->flags = ONVM_PKT_F_CTRL;
	if (unlikely(rte_ring_mp_enqueue(mgr.shm->ports[port].tx_ring, m) != 0)) {
		COUNT(tx_full);
		rte_pktmbuf_free(m);
		return false;
	}
	__atomic_fetch_add(&mgr_peer_stats.tx[d->type], 1, __ATOMIC_RELAXED);
	return true;
}

bool
mgr_move_peer_send_tagged(struct rte_mbuf *m, const struct onvm_move *mv, uint8_t type)
{
	struct onvm_xm_data d;

	data_of(&d, onvm_pkt_meta(m, mgr.dyn_off), type);
	d.service = mv->service;
	d.inst = mv->peer_inst;
	d.tag = onvm_pkt_meta(m, mgr.dyn_off)->ts;
	return send_data(m, mv->peer_port, &d);
}

void
mgr_move_peer_handoff(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t service)
{
	const struct onvm_service *svc = &mgr.shm->services[service];
	struct onvm_xm_data d;

	/* (peer_port and peer_inst were set before the table that sent the
	 * packet here was published, and stay while it routes so) */
	data_of(&d, onvm_pkt_meta(m, mgr.dyn_off), ONVM_XM_HANDOFF);
	d.service = service;
	d.inst = svc->peer_inst;
	if (unlikely(svc->peer_port >= mgr.nb_ports || !mgr_peer_port[svc->peer_port])) {
		ctx->drops[MGR_DROP_BAD_PORT]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (!send_data(m, svc->peer_port, &d))
		ctx->drops[MGR_DROP_RING_FULL]++;
}

void
mgr_move_peer_return(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t port,
		     uint16_t service)
{
	const struct onvm_pkt_meta *meta = onvm_pkt_meta(m, mgr.dyn_off);
	struct onvm_xm_data d;

	data_of(&d, meta, ONVM_XM_RETURN);
	d.service = service;
	d.action = meta->action;
	d.destination = meta->destination;
	if (unlikely(port >= mgr.nb_ports || !mgr_peer_port[port] || service == 0)) {
		ctx->drops[MGR_DROP_BAD_PORT]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (!send_data(m, port, &d))
		ctx->drops[MGR_DROP_RING_FULL]++;
}

bool
mgr_move_peer_send_ctl(uint16_t port, const struct onvm_xm_ctl *c)
{
	struct mgr_peer_out *e;
	size_t len;

	/* (the control thread: a frame into one of the buffers, the TX unit
	 * makes it an mbuf -- no pool or port ring operation here) */
	if (rte_ring_sc_dequeue(mgr_peer_out_free, (void **)&e) != 0) {
		COUNT(tx_full);
		return false;
	}
	len = onvm_xm_ctl_encode(e->frame, sizeof(e->frame), mgr_peer_mac[port], c);
	if (len == 0) {
		rte_ring_sp_enqueue(mgr_peer_out_free, e);
		return false;
	}
	/* (Ethernet's minimum: the decoders take padding) */
	if (len < 60) {
		memset(e->frame + len, 0, 60 - len);
		len = 60;
	}
	e->port = port;
	e->len = (uint16_t)len;
	e->type = c->type;
	/* (never full: it holds every buffer) */
	rte_ring_sp_enqueue(mgr_peer_out_ring, e);
	return true;
}

int
mgr_move_peer_tx(void)
{
	int work = 0;

	for (int k = 0; k < ONVM_BURST; k++) {
		struct mgr_peer_out *e = out_held;
		struct rte_ring *r;
		struct rte_mbuf *m;

		if (e == NULL && rte_ring_sc_dequeue(mgr_peer_out_ring, (void **)&e) != 0)
			break;
		out_held = NULL;
		r = mgr.shm->ports[e->port].tx_ring;
		/* Control frames leave a quarter of the port's ring to the moving
		 * flows' copies and packets: a burst of them never fails a move. */
		if (rte_ring_free_count(r) < rte_ring_get_capacity(r) / 4 ||
		    (m = rte_pktmbuf_alloc(mgr.pool)) == NULL) {
			out_held = e;
			break;
		}
		memcpy(rte_pktmbuf_mtod(m, uint8_t *), e->frame, e->len);
		m->data_len = e->len;
		m->pkt_len = e->len;
		memset(onvm_pkt_meta(m, mgr.dyn_off), 0, sizeof(struct onvm_pkt_meta));
		onvm_pkt_meta(m, mgr.dyn_off)->flags = ONVM_PKT_F_CTRL;
		/* (behind every copy the SYNC counts: queued before it was read) */
		if (rte_ring_mp_enqueue(r, m) != 0) {
			rte_pktmbuf_free(m);
			out_held = e;
			break;
		}
		__atomic_fetch_add(&mgr_peer_stats.tx[e->type], 1, __ATOMIC_RELAXED);
		rte_ring_sp_enqueue(mgr_peer_out_free, e);
		work++;
	}
	return work;
}

/* A copy or buffered packet for the mirror of the src node's move: to dst,
 * tagged with the mirror's slot and gen. */
static void
rx_tagged(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m, struct onvm_pkt_meta *meta,
	  const struct onvm_xm_data *d)
{
	uint32_t a_slot = ONVM_MOVE_TAG_SLOT(d->tag);
	uint64_t e = a_slot < ONVM_MAX_MOVES
			     ? __atomic_load_n(&mgr_peer_mirror[port][a_slot], __ATOMIC_ACQUIRE)
			     : 0;
	struct onvm_move *mv;
	struct mgr_dest to;
	uint16_t dst;

	mv = &mgr.shm->moves[MGR_PEER_MIRROR_SLOT(e) % ONVM_MAX_MOVES];
	dst = __atomic_load_n(&mv->dst, __ATOMIC_RELAXED); /* (read once: checked, used) */
	/* (the slot may have been taken by another move since: its gen says) */
	if (e == 0 || (MGR_PEER_MIRROR_AGEN(e) & 0xff) != ONVM_MOVE_TAG_GEN(d->tag) ||
	    (__atomic_load_n(&mv->gen, __ATOMIC_ACQUIRE) & 0xffff) != MGR_PEER_MIRROR_BGEN(e) ||
	    mv->xnode != ONVM_MOVE_FROM_PEER || dst >= ONVM_MAX_NFS) {
		COUNT(copies_stale);
		rte_pktmbuf_free(m);
		return;
	}
	meta->ts = ONVM_MOVE_TAG(MGR_PEER_MIRROR_SLOT(e), mv->gen, ONVM_MOVE_TAG_SEQ(d->tag));
	if (d->type == ONVM_XM_COPY) {
		meta->flags |= ONVM_PKT_F_MOVE_COPY;
	} else {
		/* buffering's: dst's output goes on along the chain there */
		meta->flags |= ONVM_PKT_F_PEER;
		meta->peer_port = (uint8_t)port;
	}
	__atomic_add_fetch(&mv->copies, 1, __ATOMIC_RELAXED);
	to.kind = MGR_DEST_NF;
	to.id = dst;
	mgr_dp_dispatch(ctx, m, &to);
}

bool
mgr_move_peer_rx(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	int t = onvm_xm_peek(f, len);
	struct onvm_pkt_meta *meta;
	struct onvm_xm_data d;
	enum onvm_xm_reason r;
	struct mgr_dest to;

	if (t == -ONVM_XM_NOT_XM)
		return false;
	if (t < 0 || m->nb_segs != 1) {
		__atomic_fetch_add(&mgr_peer_stats.refused[t < 0 ? -t : ONVM_XM_BAD_LENGTH], 1,
				   __ATOMIC_RELAXED);
		rte_pktmbuf_free(m);
		return true;
	}
	if (t >= ONVM_XM_SYNC && t <= ONVM_XM_STATUS) {
		/* The control thread decodes it (and counts it); woken once
		 * for what piles up, not per frame (a syscall each). */
		bool was_empty = rte_ring_empty(mgr_peer_ctl_ring);

		if (rte_ring_sp_enqueue(mgr_peer_ctl_ring, m) != 0) {
			COUNT(ctl_ring_full);
			rte_pktmbuf_free(m);
		} else if (was_empty) {
			mgr_ctl_wake();
		}
		return true;
	}
	r = onvm_xm_data_decode(f, len, &d);
	if (r != ONVM_XM_OK) {
		__atomic_fetch_add(&mgr_peer_stats.refused[r], 1, __ATOMIC_RELAXED);
		rte_pktmbuf_free(m);
		return true;
	}
	__atomic_fetch_add(&mgr_peer_stats.rx[d.type], 1, __ATOMIC_RELAXED);
	rte_pktmbuf_adj(m, ONVM_XM_DATA_LEN);
	meta = onvm_pkt_meta(m, mgr.dyn_off);
	memset(meta, 0, sizeof(*meta));
	meta->chain_id = d.chain_id;
	meta->chain_index = d.chain_index;
	meta->flow_hash = d.flow_hash;
	meta->in_port = d.in_port;
	meta->egress_port = d.egress_port;
	meta->flags = (d.flags & ONVM_XM_F_ND) ? ONVM_PKT_F_ND : 0;
	switch (d.type) {
	case ONVM_XM_COPY:
	case ONVM_XM_BUFFERED:
		rx_tagged(ctx, port, m, meta, &d);
		return true;
	case ONVM_XM_HANDOFF:
		if (d.service >= ONVM_MAX_SERVICES || d.inst >= ONVM_MAX_NFS ||
		    mgr.shm->nfs[d.inst].service_id != d.service ||
		    !mgr_nf_peer_only(&mgr.nf_priv[d.inst]) ||
		    __atomic_load_n(&mgr.shm->nfs[d.inst].status, __ATOMIC_ACQUIRE) !=
			    ONVM_NF_RUNNING) {
			COUNT(handoff_no_inst);
			ctx->drops[MGR_DROP_NO_INSTANCE]++;
			rte_pktmbuf_free(m);
			return true;
		}
		if (__atomic_load_n(&mgr_peer_owner[d.inst], __ATOMIC_ACQUIRE) != port + 1 ||
		    !((__atomic_load_n(&mgr_peer_owned[d.inst][ONVM_FLOW_BUCKET(d.flow_hash) / 64],
				       __ATOMIC_ACQUIRE) >>
		       (ONVM_FLOW_BUCKET(d.flow_hash) % 64)) & 1)) {
			COUNT(handoff_not_moved);
			ctx->drops[MGR_DROP_NO_INSTANCE]++;
			rte_pktmbuf_free(m);
			return true;
		}
		meta->flags |= ONVM_PKT_F_PEER;
		meta->peer_port = (uint8_t)port;
		to.kind = MGR_DEST_NF;
		to.id = d.inst;
		mgr_dp_dispatch(ctx, m, &to);
		return true;
	default: /* RETURN: on along the chain, as the NF there left it */
		meta->action = d.action;
		meta->destination = d.destination;
		mgr_route_action(mgr.shm, meta, &to);
		mgr_dp_dispatch(ctx, m, &to);
		return true;
	}
}
