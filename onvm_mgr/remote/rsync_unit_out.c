/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * rsync_unit_out.c -- packets leaving a protected chain, on the TX unit:
 * the primary latches them until the standby votes (waiting in order while
 * every stage is busy), runs the library's timers and lazy cuts; a standby
 * that took over lets out what its TxTs does not know.  Design: rsync_unit.c.
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "onvm_pkt_parse.h"
#include "rsync_unit_priv.h"

#define CUT_AFTER_FULL_NS (1000 * 1000ull) /* the cut after a full one: asked every 1 ms */
#define CUT_AFTER_FULL_MAX_NS (1000 * 1000 * 1000ull) /* ... for 1 s at most */

static void
flow_of(const struct rte_mbuf *m, struct rsync_flow *f)
{
	struct onvm_pkt_info pi;

	memset(f, 0, sizeof(*f));
	if (onvm_pkt_parse(m, &pi) != ONVM_PARSE_OK)
		return; /* not IPv4: one flow for all of them */
	f->src_ip = pi.src_ip;
	f->dst_ip = pi.dst_ip;
	f->sport = pi.sport;
	f->dport = pi.dport;
	f->proto = pi.proto;
}

/* Into the latch; false when it is full (the packet is kept). */
static bool
latch(struct rsync_chain *c, struct rte_mbuf *m, uint64_t now)
{
	struct onvm_pkt_meta *meta = onvm_pkt_meta(m, mgr.dyn_off);
	struct rsync_flow f;
	int rc;

	if (unlikely(meta->flags & ONVM_PKT_F_MARKER))
		return rsync_state_marker_at_exit(c, m, now) != -ENOBUFS;
	flow_of(m, &f);
	rc = rsync_primary_add(c->pri, m, &f, meta->ts, now);
	if (rc == -ENOBUFS)
		return false;
	if (rc != 0) { /* fenced, or a cut is open (never here) */
		c->out_refused++;
		rte_pktmbuf_free(m);
		return true;
	}
	c->out_latched++;
	if (meta->ts > c->newest_ts)
		c->newest_ts = meta->ts;
	/* The open stage's close timer (and everything after it) runs from
	 * the next tick: the library's last answer may predate this stage. */
	if (c->next_tick_ns > now + (uint64_t)c->cfg->stage_close_us * 1000)
		c->next_tick_ns = now + (uint64_t)c->cfg->stage_close_us * 1000;
	return true;
}

/* Into the stage kept for the cut of a marker waiting behind it. */
static bool
latch_before_cut(struct rsync_chain *c, struct rte_mbuf *m, uint64_t now)
{
	struct onvm_pkt_meta *meta = onvm_pkt_meta(m, mgr.dyn_off);
	struct rsync_flow f;

	flow_of(m, &f);
	if (rsync_primary_add_before_cut(c->pri, m, &f, meta->ts, now) != 0)
		return false; /* (no stage at all: never once one waits for a cut) */
	c->out_latched++;
	if (meta->ts > c->newest_ts)
		c->newest_ts = meta->ts;
	return true;
}

/*
 * Packets that waited for room go first, in order, and a marker in its
 * turn: its cut then follows every output of the packets before it, and a
 * primary dying before they are released loses at most the stages in
 * flight.  When every stage is busy and some wait for a cut (an ND
 * decision), the stage the library keeps free for a cut would take only
 * the cut, and a marker behind packets that cannot get in would never reach
 * it: then the packets ahead of the marker go into that stage with it
 * (rsync_primary_add_before_cut), however many they are, and the cut closes
 * it.  A marker never overtakes an output: a cut the standby applies at a
 * takeover never covers an output the primary did not hand to the latch
 * before it, so the log is never trimmed past a packet whose output is
 * still waiting.  Returns how many went.
 */
static int
latch_waiting(struct rsync_chain *c, uint64_t now)
{
	int n = 0;

	while (c->wait_n > 0) {
		struct rte_mbuf *m = c->wait[c->wait_head];
		const bool marker = onvm_pkt_meta(m, mgr.dyn_off)->flags & ONVM_PKT_F_MARKER;

		if (c->state != RS_PRIMARY) {
			if (!marker)
				c->out_refused++;
			rte_pktmbuf_free(m);
		} else if (!latch(c, m, now) &&
			   (marker || c->markers_queued == 0 ||
			    !rsync_primary_stage_waits_cut(c->pri) || !latch_before_cut(c, m, now))) {
			/* The stage kept for the cut is full (a cut that was
			 * to close it failed): what waits ahead of the marker
			 * goes, counted, or the stages waiting for a cut would
			 * wait for ever. */
			if (marker || c->markers_queued == 0 ||
			    !rsync_primary_cut_stage_full(c->pri))
				break; /* stays first */
			c->out_cut_room++;
			rte_pktmbuf_free(m);
		}
		if (marker)
			c->markers_queued--;
		c->wait_head = (c->wait_head + 1) % RSYNC_WAIT_SLOTS;
		c->wait_n--;
		n++;
	}
	return n;
}

/* Every checkpoint_ms a marker collects the chain's consistent cut -- for
 * every chain: whether an NF holds state is known only once it has mapped
 * it, and a cut taken as a bare timestamp while an NF's state was not seen
 * yet would let the predecessor trim packets that state never held.  An NF
 * without state just passes the marker on. */
static void
lazy_cut(struct rsync_chain *c, uint64_t now)
{
	c->next_cut_ns = now + (uint64_t)c->cfg->checkpoint_ms * 1000000;
	/* Nothing new left the chain since the last cut: nothing for a lazy
	 * one to trim (an ND decision asks for its own). */
	if (c->newest_ts > rsync_primary_cut_base_ts(c->pri))
		rsync_state_request_marker(c, now);
}

/* The standby is in sync only once a cut after its full one is released:
 * one marker a millisecond until then (a cut may be aborted or dropped),
 * for a second at most (a standby gone meanwhile asks again when back). */
static bool
cut_after_full_due(struct rsync_chain *c, uint64_t now)
{
	if (!c->cut_after_full)
		return false;
	if (rsync_primary_released_cut_id(c->pri) > c->full_cut_id ||
	    now - c->full_cut_ns > CUT_AFTER_FULL_MAX_NS) {
		c->cut_after_full = false;
		return false;
	}
	return now - c->marker_req_ns >= CUT_AFTER_FULL_NS;
}

int
mgr_rsync_tx(struct mgr_dp_ctx *ctx)
{
	int work = 0;

	MGR_ASSERT_UNIT(MGR_UNIT_TX);
	for (int i = 0; i < rsync_nchains; i++) {
		struct rsync_chain *c = &rsync_chains[i];
		uint64_t sent_before = c->sent, released_before = c->out_released;
		uint64_t now;

		if (rsync_pri(c) == NULL)
			continue; /* a standby's session runs on the RX unit */
		c->tx = ctx;
		now = mgr_now_ns();
		c->poll_ns = now; /* this poll's packets leaving the chain use it */
		work += rsync_unit_drain_ctl(c, now);
		/* what was released and waits for its port: first, in order */
		if (unlikely(c->rel_head != NULL || !rte_ring_empty(c->rel)))
			work += rsync_unit_release_drain(c);
		rsync_unit_pred_heartbeat(c, now);
		if (c->state != RS_PRIMARY) {
			/* Fenced: what waited for the latch goes back (counted). */
			if (c->wait_n > 0)
				work += latch_waiting(c, now);
			continue;
		}
		if (now >= c->next_cut_ns)
			lazy_cut(c, now);
		else if (rsync_primary_needs_cut(c->pri) || rsync_primary_full_wanted(c->pri) ||
			 cut_after_full_due(c, now))
			/* an ND decision waits for a cut, or the standby for a
			 * full one or the one after it */
			rsync_state_request_marker(c, now);
		if (work > 0 || now >= c->next_tick_ns)
			c->next_tick_ns = rsync_primary_tick(c->pri, now);
		if (c->wait_n > 0)
			work += latch_waiting(c, now);
		/* Frames the timers sent and packets released count as work:
		 * the unit flushes its port buffers only after a poll with work. */
		work += (int)(c->sent - sent_before + c->out_released - released_before);
	}
	return work;
}

/* A packet of chain `c` leaves it, to `port`: the primary latches it, a
 * standby that took over lets it out unless its TxTs knows it. */
static void
chain_exit(struct mgr_dp_ctx *ctx, struct rsync_chain *c, uint16_t port, struct rte_mbuf *m)
{
	struct onvm_pkt_meta *meta = onvm_pkt_meta(m, mgr.dyn_off);
	struct rsync_primary *pri = rsync_pri(c);
	struct rsync_flow f;
	uint64_t now;

	if (unlikely(meta->flags & ONVM_PKT_F_MARKER) && pri == NULL) {
		rte_pktmbuf_free(m); /* not a packet (a standby injects none) */
		return;
	}
	if (meta->ts == 0 && !(meta->flags & ONVM_PKT_F_MARKER)) {
		/* ours but not stamped: it cannot be deduplicated */
		c->out_unstamped++;
		rte_pktmbuf_free(m);
		return;
	}
	if (pri != NULL) {
		c->tx = ctx; /* (a standby's c->tx is the RX unit's) */
		if (c->state != RS_PRIMARY) {
			if (!(meta->flags & ONVM_PKT_F_MARKER))
				c->out_refused++;
			rte_pktmbuf_free(m);
			return;
		}
		if (unlikely(meta->flags & ONVM_PKT_F_MARKER)) {
			/* Its turn, behind what waits (see latch_waiting()). */
			if (c->wait_n > 0)
				latch_waiting(c, c->poll_ns);
			if (c->wait_n == 0 &&
			    rsync_state_marker_at_exit(c, m, c->poll_ns) != -ENOBUFS)
				return;
			if (c->markers_queued == RSYNC_WAIT_MARKERS) {
				/* (one marker travels at a time: only markers
				 * given up for lost and come back queue up) */
				c->markers_wait_full++;
				rte_pktmbuf_free(m);
				return;
			}
			c->wait[(c->wait_head + c->wait_n) % RSYNC_WAIT_SLOTS] = m;
			c->wait_n++;
			c->markers_queued++;
			return;
		}
		/* A standby made primary: an output of a replayed packet
		 * the old primary released still goes no further (its TxTs,
		 * final since the takeover). */
		if (unlikely(c->sby != NULL) && meta->ts <= c->replay_newest_ts) {
			flow_of(m, &f);
			if (meta->ts <= rsync_standby_txts(c->sby, &f)) {
				c->out_dup++;
				rte_pktmbuf_free(m);
				return;
			}
		}
		/* Rule 2: the cut this output's ND decisions (any NF's) wait for. */
		rsync_state_nd(c, c->poll_ns);
		meta->egress_port = (uint8_t)port;
		now = c->poll_ns; /* no clock read per packet */
		/* Behind packets already waiting, or the latch is full: wait
		 * (in order) for a release to make room. */
		if (c->wait_n > 0)
			latch_waiting(c, now);
		if (c->wait_n == 0 && latch(c, m, now))
			return;
		if (c->wait_n - c->markers_queued == RSYNC_WAIT_RING) {
			c->out_latch_full++;
			rte_pktmbuf_free(m);
			return;
		}
		c->wait[(c->wait_head + c->wait_n) % RSYNC_WAIT_SLOTS] = m;
		c->wait_n++;
		return;
	}
	flow_of(m, &f);
	/* Standby: the RX unit took over before it admitted any replayed
	 * packet, so an output of one sees the takeover. */
	if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == RS_STANDBY) {
		c->out_before_takeover++;
		rte_pktmbuf_free(m);
		return;
	}
	if (meta->ts <= rsync_standby_txts(c->sby, &f)) {
		c->out_dup++; /* the old primary released it */
		rte_pktmbuf_free(m);
		return;
	}
	if (c->first_out_ns == 0)
		c->first_out_ns = mgr_now_ns();
	c->out_passed++;
	mgr_dp_to_port(ctx, m, port);
}

void
mgr_rsync_on_exit(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m)
{
	struct rsync_chain *c = &rsync_chains[mgr.remote.rsync_out_port[port] - 1];

	MGR_ASSERT_UNIT(MGR_UNIT_TX);
	/* Another chain's packet sharing the exit port (not from an NF of
	 * ours: those come by mgr_rsync_chain_out()): not ours. */
	if (onvm_pkt_meta(m, mgr.dyn_off)->chain_id != (uint16_t)c->cfg->chain) {
		mgr_dp_to_port(ctx, m, port);
		return;
	}
	chain_exit(ctx, c, port, m);
}

void
mgr_rsync_chain_out(struct mgr_dp_ctx *ctx, int chain, uint16_t port, struct rte_mbuf *m)
{
	MGR_ASSERT_UNIT(MGR_UNIT_TX);
	/* Whatever the port, and whatever the metadata says (an NF may have
	 * made the packet, or sent it out early): out of the chain only
	 * through its latch. */
	chain_exit(ctx, &rsync_chains[chain], port, m);
}

void
mgr_rsync_crossing(int from, int to, bool rx, struct rte_mbuf *m)
{
	if (to != 0) {
		struct rsync_chain *c = &rsync_chains[to - 1];

		if (rx)
			c->in_unlogged_rx++;
		else
			c->in_unlogged_nf++;
	} else {
		rsync_chains[from - 1].out_escaped++;
	}
	rte_pktmbuf_free(m);
}

