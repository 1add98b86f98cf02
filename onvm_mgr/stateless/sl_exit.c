/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * sl_exit.c -- a stateless chain's exit, on the TX unit (design:
 * docs/design/stateless.md).
 *
 * What leaves the chain is held, markers included, in order, and released
 * up to a marker once every NF of the chain closed that marker's epoch in
 * the store (the chain's committed epoch).  So nothing leaves whose state
 * the store does not have: a recovery restarts the chain from a state that
 * produced every packet released, and a load balancer's released choice
 * is never made again, differently.
 *
 * The newest marker released is the chain's committed epoch (published as
 * sl_committed): every NF passed that very marker and closed its epoch, so
 * a recovery restarts from it (sl_recover.c), the root's log is trimmed up
 * to it, and everything still held here is after it.  A recovery starts a
 * new incarnation: what the old one left here is dropped -- the replay
 * after that marker makes it again -- and so is anything of the old
 * incarnation still on its way.  A replayed packet whose timestamp was
 * released already is dropped too (counted): by construction there is
 * none, unless the store lost acknowledged state.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "sl_priv.h"

static void
drop_head(struct sl_chain *c, uint64_t *counter)
{
	rte_pktmbuf_free(c->q[c->hold.head]);
	c->hold.head = (c->hold.head + 1) % c->hold.cap;
	c->hold.n--;
	c->hold.abs_head++;
	if (counter != NULL)
		(*counter)++;
}

void
mgr_sl_on_exit(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m)
{
	const struct onvm_pkt_meta *meta = onvm_pkt_meta(m, mgr.dyn_off);
	struct sl_chain *c = &mgr_sl[meta->chain_id % ONVM_MAX_CHAINS];
	bool marker = (meta->flags & ONVM_PKT_F_MARKER) != 0;
	uint32_t at;

	RTE_SET_USED(ctx);
	if (meta->chain_run != c->tx_run) {
		c->stale_dropped++; /* the dead incarnation's: the replay makes it again */
		rte_pktmbuf_free(m);
		return;
	}
	if (!marker && (meta->flags & ONVM_PKT_F_REPLAY) && meta->ts != 0 &&
	    meta->ts <= c->released_ts) {
		c->dup_suppressed++;
		rte_pktmbuf_free(m);
		return;
	}
	if (c->hold.n >= c->hold.cap - (marker ? 0 : SL_MARKER_ROOM)) {
		/* Loss, counted; never an unprotected release. */
		if (marker)
			c->markers_full++;
		else
			c->exit_full++;
		rte_pktmbuf_free(m);
		return;
	}
	at = (c->hold.head + c->hold.n) % c->hold.cap;
	if (marker) {
		struct onvm_marker mk;
		uint32_t mat = (c->xmk.head + c->xmk.n) % c->xmk.cap;

		memcpy(&mk, rte_pktmbuf_mtod(m, const void *), sizeof(mk));
		c->xmk_id[mat] = mk.cut_id;
		c->xmk_pos[mat] = c->hold.abs_head + c->hold.n;
		c->xmk.n++;
		c->markers_out++;
	} else {
		c->held_total++;
	}
	c->q[at] = m;
	c->port[at] = port;
	c->hold.n++;
}

bool
mgr_sl_crossing(uint16_t from_service, const struct mgr_dest *d, struct rte_mbuf *m)
{
	uint8_t a = mgr_sl_service[from_service % ONVM_MAX_SERVICES];
	uint8_t b = d->kind == MGR_DEST_NF
			    ? mgr_sl_service[mgr.shm->nfs[d->id].service_id % ONVM_MAX_SERVICES]
			    : a;
	const struct onvm_chain *ch;

	if (a != b) {
		mgr_sl[(a != 0 ? a : b) - 1].crossing++;
		rte_pktmbuf_free(m);
		return true;
	}
	if (a == 0)
		return false;
	/* Inside a stateless chain, packets move one step at a time, in the
	 * markers' order: a packet that skipped a step (TONF) or left before
	 * the last (OUT) would pass a marker it belongs before, and be
	 * counted in the wrong epoch or released before its state is stored. */
	ch = &mgr.shm->chains[a - 1];
	if (d->kind == MGR_DEST_NF
		    ? onvm_pkt_meta(m, mgr.dyn_off)->action == ONVM_ACTION_NEXT
		    : d->kind != MGR_DEST_PORT || from_service == ch->services[ch->len - 1])
		return false;
	mgr_sl[a - 1].skipped++;
	rte_pktmbuf_free(m);
	return true;
}

/* The newest epoch every NF of the chain closed in the store. */
static uint64_t
committed_of(uint16_t ci)
{
	uint64_t low = UINT64_MAX;

	for (uint16_t k = 0; k < mgr.shm->chains[ci].len; k++) {
		const struct onvm_nf_slot *s = mgr_sl_step_slot(ci, k);

		if (s == NULL)
			return 0; /* an NF is missing: nothing more is safe */
		low = RTE_MIN(low, __atomic_load_n(&s->store_closed, __ATOMIC_ACQUIRE));
	}
	return low == UINT64_MAX ? 0 : low;
}

/* Release up to and including each marker at or below `c->committed`, as
 * far as the ports take them now. */
static void
release(struct mgr_dp_ctx *ctx, struct sl_chain *c, int *moved)
{
	while (c->xmk.n > 0 && c->xmk_id[c->xmk.head] <= c->committed) {
		uint64_t upto = c->xmk_pos[c->xmk.head];

		/* Published before the epoch's first packet goes: a recovery
		 * from here on starts after it (sl_recover.c), and change_run()
		 * sends the rest of it, should a full port leave some here. */
		if (c->released_marker != c->xmk_id[c->xmk.head]) {
			c->released_marker = c->xmk_id[c->xmk.head];
			__atomic_store_n(&mgr.shm->chains[c->id].sl_committed, c->released_marker,
					 __ATOMIC_RELEASE);
		}
		while (c->hold.abs_head < upto) {
			struct rte_mbuf *m = c->q[c->hold.head];

			if (!mgr_dp_port_try(ctx, m, c->port[c->hold.head]))
				return; /* the port is full: on a later poll */
			c->released_ts = RTE_MAX(c->released_ts, onvm_pkt_meta(m, mgr.dyn_off)->ts);
			c->hold.head = (c->hold.head + 1) % c->hold.cap;
			c->hold.n--;
			c->hold.abs_head++;
			c->released++;
			(*moved)++;
		}
		/* (behind a predecessor: its log may go up to here, sl_peer.c) */
		c->peer_trim_ts = onvm_pkt_meta(c->q[c->hold.head], mgr.dyn_off)->ts;
		drop_head(c, NULL); /* the marker */
		c->xmk.head = (c->xmk.head + 1) % c->xmk.cap;
		c->xmk.n--;
		c->xmk.abs_head++;
	}
}

/* A new incarnation: what the old one left here is after the recovery
 * point (the newest marker released), dropped -- the replay makes it
 * again -- but for the rest of an epoch a full port cut short: it is the
 * recovery point's, already half out, and goes on as it was. */
static void
change_run(struct sl_chain *c, uint8_t run)
{
	uint64_t keep = c->hold.abs_head; /* entries below it stay */

	if (c->xmk.n > 0 && c->xmk_id[c->xmk.head] == c->released_marker)
		keep = c->xmk_pos[c->xmk.head] + 1;
	while (c->hold.abs_head + c->hold.n > keep) {
		/* from the tail */
		c->hold.n--;
		rte_pktmbuf_free(c->q[(c->hold.head + c->hold.n) % c->hold.cap]);
		c->recovery_dropped++;
	}
	c->xmk.n = keep > c->hold.abs_head ? 1 : 0;
	c->committed = RTE_MAX(c->committed, c->replay_epoch);
	c->tx_run = run;
	/* From here its output is held: the root may replay. */
	__atomic_store_n(&c->tx_switched, run, __ATOMIC_RELEASE);
}

int
mgr_sl_tx(struct mgr_dp_ctx *ctx)
{
	int moved = 0;

	for (uint16_t ci = 0; ci < ONVM_MAX_CHAINS; ci++) {
		struct sl_chain *c = &mgr_sl[ci];
		uint32_t st;

		if (!c->on)
			continue;
		if (unlikely(c->peer_role != 0))
			mgr_sl_peer_tx(ctx, c, mgr_now_ns());
		st = sl_state(c);
		if (sl_recovering(st)) {
			/* Nothing released from here on (until the new run): the
			 * control thread may take the newest marker released. */
			__atomic_store_n(&c->tx_seen, st, __ATOMIC_RELEASE);
			continue;
		}
		if (c->tx_run != SL_RUN(st))
			change_run(c, SL_RUN(st));
		if (c->xmk.n == 0)
			continue;
		c->committed = RTE_MAX(c->committed, committed_of(ci));
		release(ctx, c, &moved);
	}
	return moved;
}

void
mgr_sl_drop_held(void)
{
	for (uint16_t ci = 0; ci < ONVM_MAX_CHAINS; ci++) {
		struct sl_chain *c = &mgr_sl[ci];
		uint32_t n = c->hold.n;

		if (!c->on)
			continue;
		while (c->hold.n > 0)
			drop_head(c, NULL);
		c->xmk.n = 0;
		if (n > 0)
			MGR_LOG(INFO, "chain '%s': %u entries held at its exit dropped at stop",
				mgr.shm->chains[ci].name, n);
		while (c->log.n > 0) {
			rte_pktmbuf_free(c->log_m[c->log.head]);
			c->log.head = (c->log.head + 1) % c->log.cap;
			c->log.n--;
		}
	}
}
