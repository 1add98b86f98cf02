/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * rsync_unit.c -- remote resiliency on a chain's primary and standby nodes
 * (library: rsync/; design: docs/design/remote.md, "The manager units").
 *
 * Protected ingress (RX unit).  Every frame arriving on predecessor_port was
 * stamped by the predecessor:
 *   - a valid shim whose timestamp is above the last one admitted is
 *     removed and the timestamp (and the REPLAY flag) goes on in the packet's
 *     metadata;
 *   - a timestamp at or below the last admitted one (the link reordered or
 *     duplicated it) is dropped, counted: the chain then sees packets in
 *     timestamp order, which the consistent cuts rely on;
 *   - RSync frames (REPLAY_START/END from the predecessor) are control
 *     (below), anything else unstamped or with a bad shim is dropped and
 *     counted by reason.
 *
 * The sessions.
 *   - primary (TX unit, which owns it): RSync frames from the standby reach
 *     it through a ring from the RX unit; the TX unit drains the ring each
 *     poll and runs the library's timers.  A stamped packet leaving the chain on its exit port is
 *     latched (rsync_primary_add) and sent out only when the library
 *     releases it, i.e. once the standby voted for its stage; aborted
 *     stages are freed and counted.  PREPARE/COMMIT/ABORT go out on the
 *     sync link, LOG_TRIM to the predecessor.  Checkpoints are consistent
 *     cuts carried by markers (rsync_unit_state.c): every checkpoint_ms,
 *     and at once when a stage waits for a cut;
 *   - standby (RX unit, which owns it: RSync frames and the stamped input
 *     both arrive there, so the takeover is done before the next frame is
 *     looked at): stages and votes (rsync_standby_rx); on REPLAY_START of
 *     a newer epoch from the predecessor it takes over (the newest voted
 *     chain of transactions is applied: presumed commit).  Replayed packets
 *     at or below the applied cut are then dropped at the ingress (the cut's
 *     state holds them; their outputs left the old primary, or were lost
 *     with it when its stage was voted but not released -- bounded by the
 *     stages in flight), the rest go through the chain, and on the TX unit
 *     every output leaves except those at or below their flow's committed
 *     TxTs (the old primary released them already).  The TX unit reads the
 *     TxTs only after the takeover is published, and nothing writes it
 *     after.  Before the takeover nothing leaves (counted).  After it, a
 *     message of the old epoch from the old primary is answered by a
 *     HEARTBEAT of the new one, which fences it for good.
 * Other threads read the counters only (plain 64-bit loads).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "rsync_unit_priv.h"

struct rsync_chain rsync_chains[MGR_CFG_MAX_REMOTE];
int rsync_nchains;
pthread_mutex_t rsync_fini_lock = PTHREAD_MUTEX_INITIALIZER;


/* ---- sending ---- */

static int
send_frame(struct rsync_chain *c, uint16_t port, const uint8_t *dst, const uint8_t *src,
	   const struct rsync_msg *m, const void *payload, size_t len)
{
	struct rte_mbuf *mb = rte_pktmbuf_alloc(mgr.pool);
	uint8_t *p;
	int n;

	if (mb == NULL || (p = (uint8_t *)rte_pktmbuf_append(mb, RSYNC_MAX_FRAME)) == NULL) {
		rte_pktmbuf_free(mb);
		c->send_fail++;
		return -1;
	}
	n = rsync_encode(p, RSYNC_MAX_FRAME, dst, src, m, payload, len, c->auth);
	if (n < 0) {
		rte_pktmbuf_free(mb);
		c->send_fail++;
		return -1;
	}
	rte_pktmbuf_trim(mb, (uint16_t)(RSYNC_MAX_FRAME - n));
	mgr_dp_to_port(c->tx, mb, port);
	c->sent++;
	return 0;
}

static int
primary_send(void *ctx, enum rsync_peer to, const struct rsync_msg *m, const void *payload,
	     size_t len)
{
	struct rsync_chain *c = ctx;

	if (to == RSYNC_PEER_PREDECESSOR)
		return send_frame(c, (uint16_t)c->cfg->predecessor_port, c->pred_mac,
				  c->src_mac_pred, m, payload, len);
	return send_frame(c, (uint16_t)c->sync_port, c->peer_mac, c->src_mac_sync, m, payload,
			  len);
}

/* Released packets go to their ports as the ports take them: a stage
 * (a whole latch, voted at once) is more than a port's burst, and what a
 * port refuses now waits, in order, in the release queue (drained first
 * each poll, rsync_unit_release_drain()) -- dropped if that is full
 * (out_release_drops), or by the port after it took nothing for 20 ms
 * (its tx_drop).  A released packet is in the standby's TxTs: lost here,
 * or with a primary that dies while it waits, a failover would not make it
 * again. */
static void
primary_release(void *ctx, void *const *pkts, uint32_t n)
{
	struct rsync_chain *c = ctx;
	uint32_t i = 0;

	if (c->rel_head == NULL && rte_ring_empty(c->rel))
		for (; i < n; i++) {
			struct rte_mbuf *m = pkts[i];

			if (!mgr_dp_port_try(c->tx, m, onvm_pkt_meta(m, mgr.dyn_off)->egress_port))
				break;
		}
	if (i < n) {
		unsigned int q = rte_ring_sp_enqueue_burst(c->rel, (void *const *)&pkts[i], n - i,
							    NULL);

		c->out_release_drops += n - i - q;
		if (q < n - i)
			rte_pktmbuf_free_bulk((struct rte_mbuf **)(uintptr_t)&pkts[i + q],
					      n - i - q);
	}
	c->out_released += n;
}

/* The release queues of all the chains this node is primary of take at
 * most a quarter of the node's mbufs together (a ring one slot less than
 * its share): released packets held by a slow port must not starve the
 * rest of the node -- its input, the sync link's frames, the markers. */
static unsigned int
release_ring_size(void)
{
	uint32_t primaries = 0, share;

	for (int r = 0; r < mgr.cfg.nremote; r++)
		primaries += mgr.cfg.remote[r].role == MGR_REMOTE_PRIMARY || mgr.cfg.remote[r].reprotect;
	share = mgr.cfg.nb_mbufs / 4 / RTE_MAX(primaries, 1u);
	return share >= RSYNC_RELEASE_RING ? RSYNC_RELEASE_RING
					   : rte_align32prevpow2(RTE_MAX(share, 64u));
}

int
rsync_unit_release_drain(struct rsync_chain *c)
{
	struct rte_mbuf *m = c->rel_head;
	int n = 0;

	/* rel_head: the first of the queue, refused by its port last time */
	for (c->rel_head = NULL; m != NULL || rte_ring_sc_dequeue(c->rel, (void **)&m) == 0;
	     m = NULL) {
		if (!mgr_dp_port_try(c->tx, m, onvm_pkt_meta(m, mgr.dyn_off)->egress_port)) {
			c->rel_head = m;
			break;
		}
		n++;
	}
	return n;
}

static void
primary_drop(void *ctx, void *const *pkts, uint32_t n, enum rsync_abort_reason why)
{
	struct rsync_chain *c = ctx;

	(void)why; /* the library counts by reason */
	rte_pktmbuf_free_bulk((struct rte_mbuf **)(uintptr_t)pkts, n);
	c->out_aborted += n;
}

static int
standby_send(void *ctx, const struct rsync_msg *m)
{
	struct rsync_chain *c = ctx;

	return send_frame(c, (uint16_t)c->sync_port, c->peer_mac, c->src_mac_sync, m, NULL, 0);
}

/* State pieces go to the standby chain's NFs (rsync_unit_state.c): only
 * pieces that fit a region of an NF there are voted. */
static bool
standby_state_ok(void *ctx, uint16_t region, uint64_t offset, uint32_t len)
{
	return rsync_state_ok(ctx, region, offset, len);
}

static void
standby_apply_state(void *ctx, uint16_t region, uint64_t offset, const void *data, uint32_t len)
{
	rsync_state_apply(ctx, region, offset, data, len);
}

static bool
standby_ready_for_full(void *ctx)
{
	return rsync_state_ready_for_full(ctx);
}

static const struct rsync_primary_ops primary_ops = {primary_send, primary_release,
						     primary_drop};
static const struct rsync_standby_ops standby_ops = {standby_send, standby_state_ok,
						     standby_apply_state, standby_ready_for_full};

/* ---- set-up ---- */

static void
port_mac(int port, uint8_t mac[6])
{
	struct rte_ether_addr a;

	if (port >= 0 && rte_eth_macaddr_get((uint16_t)port, &a) == 0)
		memcpy(mac, a.addr_bytes, 6);
}

/* The primary's session of chain `c` (idle on a standby with "reprotect",
 * until its promotion resumes it). */
static struct rsync_primary *
primary_new(struct rsync_chain *c)
{
	const struct mgr_remote_cfg *rc = c->cfg;
	struct rsync_primary_cfg pc = {
		.chain = rc->id,
		.run = mgr.remote.run,
		.epoch = rc->epoch,
		.stages = rc->stages,
		.stage_pkts = rc->stage_packets,
		.cut_extra_pkts = RSYNC_WAIT_RING,
		.stage_state_bytes = (uint64_t)rc->stage_state_kb << 10,
		.max_payload = RSYNC_MAX_PAYLOAD,
		.close_ns = (uint64_t)rc->stage_close_us * 1000,
		.retrans_ns = (uint64_t)rc->retrans_us * 1000,
		.max_tries = rc->max_tries,
		.standby_window = rc->standby_window,
	};

	return rsync_primary_new(&pc, &primary_ops, c, rte_rand());
}

static int
session_init(struct rsync_chain *c, int idx)
{
	const struct mgr_remote_cfg *rc = c->cfg;
	char name[RTE_RING_NAMESIZE];
	enum mgr_remote_peer peer;

	if (rc->key_len > 0 &&
	    (c->auth = rsync_auth_new(rc->key, rc->key_len, rc->key_id)) == NULL) {
		MGR_LOG(ERR, "remote chain %s: cannot set up its HMAC key", rc->name);
		return -EINVAL;
	}
	if (rc->role == MGR_REMOTE_PRIMARY || rc->reprotect) {
		snprintf(name, sizeof(name), "onvm_rsync_ctl%d", idx);
		c->ctl = rte_ring_create(name, RSYNC_CTL_RING, rte_socket_id(),
					 RING_F_SP_ENQ | RING_F_SC_DEQ);
		c->wait = rte_zmalloc("onvm_rsync_wait", RSYNC_WAIT_SLOTS * sizeof(*c->wait), 0);
		snprintf(name, sizeof(name), "onvm_rsync_rel%d", idx);
		c->rel = rte_ring_create(name, release_ring_size(), rte_socket_id(),
					 RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (c->ctl == NULL || c->wait == NULL || c->rel == NULL) {
			MGR_LOG(ERR, "remote chain %s: no memory for its rings", rc->name);
			return -ENOMEM;
		}
	}
	c->exit_port = mgr.cfg.chains[rc->chain].exit_port;
	port_mac(c->sync_port, c->src_mac_sync);
	port_mac(rc->predecessor_port, c->src_mac_pred);
	peer = rc->role == MGR_REMOTE_PRIMARY ? MGR_PEER_STANDBY : MGR_PEER_PRIMARY;
	memset(c->peer_mac, 0xff, 6);
	memset(c->pred_mac, 0xff, 6);
	if (rc->has_mac[peer]) {
		memcpy(c->peer_mac, rc->mac[peer], 6);
		c->check_peer_mac = true;
	}
	if (rc->has_mac[MGR_PEER_PREDECESSOR]) {
		memcpy(c->pred_mac, rc->mac[MGR_PEER_PREDECESSOR], 6);
		c->check_pred_mac = true;
	}
	if (rc->role == MGR_REMOTE_PRIMARY) {
		c->pri = primary_new(c);
		c->state = RS_PRIMARY;
	} else {
		struct rsync_standby_cfg sc = {
			.chain = rc->id,
			.run = mgr.remote.run,
			.epoch = rc->epoch,
			.window = rc->window,
			.max_frags = rc->max_frags,
			.txts_capacity = rc->txts_flows,
		};

		c->sby = rsync_standby_new(&sc, &standby_ops, c, rte_rand());
		c->state = RS_STANDBY;
		mgr.remote.rsync_standbys = true;
		if (rc->reprotect && c->sby != NULL && (c->pri_idle = primary_new(c)) == NULL) {
			rsync_standby_free(c->sby);
			c->sby = NULL;
		}
	}
	if (c->pri == NULL && c->sby == NULL) {
		MGR_LOG(ERR, "remote chain %s: cannot set up RSync (%s)", rc->name,
			strerror(errno));
		return -ENOMEM;
	}
	return 0;
}

int
mgr_rsync_init(void)
{
	for (int r = 0; r < mgr.cfg.nremote; r++) {
		const struct mgr_remote_cfg *rc = &mgr.cfg.remote[r];
		struct rsync_chain *c;
		int rc_err;

		if (rc->role == MGR_REMOTE_PREDECESSOR)
			continue;
		c = &rsync_chains[rsync_nchains];
		c->cfg = rc;
		c->sync_port = rc->role == MGR_REMOTE_PRIMARY ? rc->standby_port : rc->primary_port;
		rc_err = session_init(c, rsync_nchains);
		if (rc_err == 0)
			rc_err = rsync_state_reserve(c);
		if (rc_err < 0)
			return rc_err;
		mgr.remote.rsync_in_port[rc->predecessor_port] = (uint8_t)(rsync_nchains + 1);
		mgr.remote.rsync_sync_port[c->sync_port] = (uint8_t)(rsync_nchains + 1);
		mgr.remote.rsync_out_port[c->exit_port] = (uint8_t)(rsync_nchains + 1);
		{
			const struct mgr_chain_cfg *ch = &mgr.cfg.chains[rc->chain];

			for (int k = 0; k < ch->len; k++)
				mgr.remote.rsync_service[ch->services[k]] = (uint8_t)(rsync_nchains + 1);
			mgr.remote.rsync_services |= ch->len > 0;
		}
		rsync_nchains++;
		MGR_LOG(INFO,
			"remote chain %s (id %u): %s, stamped input on port %d, sync link on port "
			"%d, exit port %d",
			rc->name, rc->id,
			rc->role == MGR_REMOTE_PRIMARY ? "primary"
			: rc->reprotect		       ? "standby (may be made primary again)"
						       : "standby",
			rc->predecessor_port, c->sync_port, c->exit_port);
	}
	return 0;
}

/* ---- RX unit ---- */

static bool
is_rsync(const struct rte_mbuf *m)
{
	return rsync_is_frame(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m));
}

static void
to_ctl(struct rsync_chain *c, struct rte_mbuf *m)
{
	if (rte_ring_sp_enqueue(c->ctl, m) != 0) {
		c->ctl_ring_full++;
		rte_pktmbuf_free(m);
	}
}

static void control_in(struct rsync_chain *c, struct rte_mbuf *mb, uint64_t now);
static void send_fence_heartbeat(struct rsync_chain *c, uint64_t now);
static void pred_heartbeat(struct rsync_chain *c, uint64_t now);
static void send_replay_ack(struct rsync_chain *c, uint64_t now, bool force);
static bool send_replay_ack_of(struct rsync_chain *c, uint64_t next_ts, uint64_t gap_ts);

bool
mgr_rsync_ingress(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m, uint64_t *ts,
		  uint8_t *flags)
{
	struct rsync_chain *c = &rsync_chains[mgr.remote.rsync_in_port[port] - 1];
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	struct plog_shim sh;
	enum plog_shim_reason r;

	MGR_ASSERT_UNIT(MGR_UNIT_RX);
	/* The shim sits in the first segment (the predecessor put it there). */
	r = plog_shim_parse(p, rte_pktmbuf_data_len(m), &sh);
	if (unlikely(r != PLOG_SHIM_OK)) {
		if (r == PLOG_SHIM_NOT_SHIM && is_rsync(m)) {
			if (c->pri != NULL) {
				/* The predecessor's HEARTBEATs (and, on a standby
				 * made primary, PROTECT's repeats): to the primary's
				 * session, on the TX unit, which owns it and the
				 * chain's sending from then on. */
				to_ctl(c, m);
				return true;
			}
			/* REPLAY_START / REPLAY_END, PROTECT: the standby's
			 * session, handled here before the next frame. */
			c->tx = ctx;
			control_in(c, m, mgr_now_ns());
			return true;
		}
		c->bad[r]++;
		rte_pktmbuf_free(m);
		return true;
	}
	if (c->pri == NULL && c->state == RS_STANDBY) {
		/* Not admitted (nor remembered): the predecessor starts the
		 * replay only once REPLAY_START was echoed. */
		c->before_takeover++;
		rte_pktmbuf_free(m);
		return true;
	}
	/* The replay, whole and in order -- the range and what the
	 * predecessor sends with it until REPLAY_END: a timestamp past the
	 * next one expected means one was lost on the way -- dropped, and the
	 * predecessor told, which sends again from the one lacking. */
	if (unlikely(c->pri == NULL && c->state == RS_REPLAY)) {
		/* What the applied cut holds is not needed: a log trimmed up to
		 * it since the REPLAY_START (a takeover followed after it was
		 * given up) starts past replay_next, and that is no gap. */
		if (sh.ts > c->replay_next && sh.ts <= c->takeover_cut_ts + 1)
			c->replay_next = sh.ts;
		if (sh.ts != c->replay_next) {
			if (sh.ts > c->replay_next) {
				c->replay_gap_drops++;
				c->replay_gap_ts = sh.ts;
				c->tx = ctx;
				send_replay_ack(c, mgr_now_ns(), false);
			} else {
				c->stale++;
			}
			rte_pktmbuf_free(m);
			return true;
		}
		/* at once when the range is whole, and every half window: the
		 * predecessor paces the replay by these */
		if (++c->replay_next == c->replay_newest_ts + 1 ||
		    ++c->replay_since_ack >= REPLAY_ACK_EVERY) {
			c->tx = ctx;
			send_replay_ack(c, mgr_now_ns(), true);
		}
	} else if (unlikely(c->pri == NULL && (sh.flags & PLOG_SHIM_F_REPLAY) &&
			    c->state == RS_ACTIVE)) {
		/* Replayed to a standby that runs the chain already (a restarted
		 * predecessor offered its epoch again): say what it has, or the
		 * predecessor would wait for acknowledgements for ever. */
		uint64_t now = mgr_now_ns();

		if (now - c->replay_ack_ns >= REPLAY_ACK_NS) {
			c->tx = ctx;
			if (send_replay_ack_of(c, RTE_MAX(sh.ts, c->last_ts) + 1, 0))
				c->replay_ack_ns = now;
		}
	}
	if (sh.ts <= c->last_ts) {
		c->stale++;
		rte_pktmbuf_free(m);
		return true;
	}
	/* A cut-off old primary that has nothing to send is never answered
	 * by a fencing HEARTBEAT, and a lone one may be lost: after the
	 * takeover, send it unasked (one per 10 ms, FENCE_UNASKED of them). */
	if (unlikely(c->pri == NULL && c->fence_hbs < FENCE_UNASKED)) {
		uint64_t before = c->fence_hb_ns;

		c->tx = ctx;
		send_fence_heartbeat(c, mgr_now_ns());
		c->fence_hbs += c->fence_hb_ns != before;
	}
	if (c->pri == NULL && sh.ts <= c->takeover_cut_ts) {
		c->replay_covered++; /* the applied cut holds it */
		__atomic_store_n(&c->last_ts, sh.ts, __ATOMIC_RELAXED);
		rte_pktmbuf_free(m);
		return true;
	}
	/* Stamps are consecutive within a predecessor's run; a restarted
	 * one starts again from its clock, far above: that jump is a new
	 * base, not frames lost on the link. */
	if (c->last_ts != 0 && sh.ts > c->last_ts + 1) {
		if (sh.ts - c->last_ts - 1 < RSYNC_GAP_NEW_BASE)
			c->gaps += sh.ts - c->last_ts - 1;
		else
			c->ts_new_base++;
	}
	/* (read by the TX unit for the predecessor's HEARTBEAT) */
	__atomic_store_n(&c->last_ts, sh.ts, __ATOMIC_RELAXED);
	plog_shim_strip(p, &sh);
	rte_pktmbuf_adj(m, PLOG_SHIM_LEN);
	*ts = sh.ts;
	*flags = (sh.flags & PLOG_SHIM_F_REPLAY) ? ONVM_PKT_F_REPLAY : 0;
	c->admitted++;
	c->admitted_replay += *flags != 0;
	if (unlikely(c->pri == NULL && c->first_in_ns == 0))
		c->first_in_ns = mgr_now_ns();
	return false;
}

bool
mgr_rsync_replaying(uint16_t port)
{
	const struct rsync_chain *c = &rsync_chains[mgr.remote.rsync_in_port[port] - 1];

	return __atomic_load_n(&c->state, __ATOMIC_RELAXED) == RS_REPLAY;
}

bool
mgr_rsync_held_peek_due(uint64_t held_since_tsc, uint64_t *last_tsc)
{
	const uint64_t ms = rte_get_tsc_hz() / 1000;
	uint64_t now = rte_get_tsc_cycles();

	/* Only an NF that takes nothing for that long, not one slower than
	 * its input: what a peek reads of the input is dropped and sent
	 * again, and the standby drops all that follows a gap until then --
	 * peeks every millisecond made a slow NF's replay send its log 50
	 * times over. */
	if (now - held_since_tsc < REPLAY_HELD_PEEK_AFTER_MS * ms ||
	    now - *last_tsc < REPLAY_HELD_PEEK_MS * ms)
		return false;
	*last_tsc = now;
	return true;
}

bool
mgr_rsync_held_rx(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m)
{
	struct rsync_chain *c = &rsync_chains[mgr.remote.rsync_in_port[port] - 1];
	uint64_t ts;
	uint8_t flags;

	MGR_ASSERT_UNIT(MGR_UNIT_RX);
	if (is_rsync(m))
		return mgr_rsync_ingress(ctx, port, m, &ts, &flags);
	/* (a REPLAY_END earlier in the burst ended it: input as any) */
	if (!mgr_rsync_replaying(port))
		return false;
	c->replay_held_drops++;
	rte_pktmbuf_free(m);
	return true;
}

int
mgr_rsync_rx_timers(struct mgr_dp_ctx *ctx)
{
	uint64_t now = mgr_now_ns();
	int work = 0;

	MGR_ASSERT_UNIT(MGR_UNIT_RX);
	for (int i = 0; i < rsync_nchains; i++) {
		struct rsync_chain *c = &rsync_chains[i];
		uint64_t sent = c->sent;

		/* (a standby made primary: its session is the TX unit's now) */
		if (c->sby == NULL || c->pri != NULL)
			continue;
		c->tx = ctx;
		pred_heartbeat(c, now);
		/* The replay's progress, until the predecessor ends it. */
		if (c->state == RS_REPLAY)
			send_replay_ack(c, now, false);
		if (now >= c->sby_tick_ns)
			c->sby_tick_ns = rsync_standby_tick(c->sby, now);
		/* For telemetry (the node agent reports the standby ready only
		 * then): every NF of the chain there and parked. */
		if (now >= c->parked_check_ns) {
			c->parked_check_ns = now + PARKED_CHECK_NS;
			__atomic_store_n(&c->nfs_parked, rsync_state_ready_for_full(c),
					 __ATOMIC_RELAXED);
		}
		/* Frames sent are work: the unit flushes its buffers only then. */
		work += (int)(c->sent - sent);
	}
	return work;
}

bool
mgr_rsync_sync_rx(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m)
{
	struct rsync_chain *c = &rsync_chains[mgr.remote.rsync_sync_port[port] - 1];

	MGR_ASSERT_UNIT(MGR_UNIT_RX);
	if (!is_rsync(m))
		return false;
	if (c->pri == NULL) { /* the standby's session is the RX unit's */
		c->tx = ctx;
		control_in(c, m, mgr_now_ns());
	} else {
		to_ctl(c, m);
	}
	return true;
}

/* ---- TX unit: control ---- */

static void
send_fence_heartbeat(struct rsync_chain *c, uint64_t now)
{
	struct rsync_msg m = {0};
	struct rsync_standby_applied a;

	if (now - c->fence_hb_ns < FENCE_HEARTBEAT_GAP_NS && c->fence_hb_ns != 0)
		return;
	rsync_standby_get_applied(c->sby, &a);
	m.h.version = RSYNC_VERSION;
	m.h.type = RSYNC_HEARTBEAT;
	m.h.chain = c->cfg->id;
	m.h.epoch = rsync_standby_epoch(c->sby);
	m.h.frag_count = 1;
	m.h.role = RSYNC_ROLE_STANDBY;
	m.h.sender_run = mgr.remote.run;
	m.h.receiver_run = rsync_standby_primary_run(c->sby);
	m.u.heartbeat.txid = a.txid;
	m.u.heartbeat.cut_ts = a.cut_ts;
	if (standby_send(c, &m) == 0)
		c->fence_hb_ns = now;
}

/* The predecessor repeats REPLAY_START/END until the standby echoes it:
 * the same type, epoch and payload, from the standby, to its run --
 * flagged RSYNC_F_RESYNC (`flags`) when this standby refuses to take over,
 * not being in sync. */
static void
echo_as(struct rsync_chain *c, const struct rsync_msg *m, uint8_t flags, uint8_t role)
{
	struct rsync_msg e = *m;

	e.h.flags = flags;
	e.h.key_id = 0;
	e.h.role = role;
	e.h.sender_run = mgr.remote.run;
	e.h.receiver_run = m->h.sender_run;
	(void)send_frame(c, (uint16_t)c->cfg->predecessor_port, c->pred_mac, c->src_mac_pred, &e,
			 NULL, 0);
}

static void
echo_to_predecessor(struct rsync_chain *c, const struct rsync_msg *m, uint8_t flags)
{
	echo_as(c, m, flags, RSYNC_ROLE_STANDBY);
}

/* A HEARTBEAT to the predecessor every PRED_HEARTBEAT_NS, so that it knows
 * this node's run (the REPLAY_START it may send the standby is addressed to
 * it) and, from a primary, the newest timestamp admitted (a restarted
 * predecessor never stamps at or below it).  From the unit that owns the
 * session. */
static void
pred_heartbeat(struct rsync_chain *c, uint64_t now)
{
	struct rsync_msg m = {0};

	if (now - c->pred_hb_ns < PRED_HEARTBEAT_NS && c->pred_hb_ns != 0)
		return;
	m.h.version = RSYNC_VERSION;
	m.h.type = RSYNC_HEARTBEAT;
	m.h.chain = c->cfg->id;
	m.h.frag_count = 1;
	m.h.sender_run = mgr.remote.run;
	m.h.receiver_run = c->pred_run;
	if (c->pri != NULL) {
		m.h.role = RSYNC_ROLE_PRIMARY;
		/* (a fenced one does not: a restarted predecessor follows only
		 * the node that runs the chain) */
		m.h.flags = c->state == RS_PRIMARY ? RSYNC_F_RUNNING : 0;
		m.h.epoch = rsync_primary_epoch(c->pri);
		m.u.heartbeat.txid = rsync_primary_stats(c->pri)->stages_released;
		m.u.heartbeat.cut_ts = __atomic_load_n(&c->last_ts, __ATOMIC_RELAXED);
	} else {
		struct rsync_standby_applied a;

		rsync_standby_get_applied(c->sby, &a);
		m.h.role = RSYNC_ROLE_STANDBY;
		m.h.epoch = rsync_standby_epoch(c->sby);
		m.u.heartbeat.txid = a.txid;
		m.u.heartbeat.cut_ts = a.cut_ts;
		/* Running the chain: the newest timestamp admitted, which a
		 * restarted predecessor must stamp above. */
		if (rsync_standby_taken_over(c->sby)) {
			m.h.flags = RSYNC_F_RUNNING;
			m.u.heartbeat.cut_ts = RTE_MAX(a.cut_ts,
						       __atomic_load_n(&c->last_ts, __ATOMIC_RELAXED));
		}
	}
	(void)send_frame(c, (uint16_t)c->cfg->predecessor_port, c->pred_mac, c->src_mac_pred, &m,
			 NULL, 0);
	c->pred_hb_ns = now;
}

/* REPLAY_ACK to the predecessor: every replayed timestamp below
 * replay_next received, and the last one seen past a gap.  Every
 * REPLAY_ACK_NS while replaying, at most every REPLAY_NACK_NS for a gap,
 * and when `force`d (the range is whole). */
static bool
send_replay_ack_of(struct rsync_chain *c, uint64_t next_ts, uint64_t gap_ts)
{
	struct rsync_msg m = {0};

	m.h.version = RSYNC_VERSION;
	m.h.type = RSYNC_REPLAY_ACK;
	m.h.chain = c->cfg->id;
	m.h.epoch = rsync_standby_epoch(c->sby);
	m.h.frag_count = 1;
	m.h.role = RSYNC_ROLE_STANDBY;
	m.h.sender_run = mgr.remote.run;
	m.h.receiver_run = c->pred_run;
	m.u.replay_ack.next_ts = next_ts;
	m.u.replay_ack.gap_ts = gap_ts;
	if (send_frame(c, (uint16_t)c->cfg->predecessor_port, c->pred_mac, c->src_mac_pred, &m,
		       NULL, 0) != 0)
		return false;
	c->replay_acks_sent++;
	return true;
}

static void
send_replay_ack(struct rsync_chain *c, uint64_t now, bool force)
{
	if (!force && now - c->replay_ack_ns < (c->replay_gap_ts != 0 ? REPLAY_NACK_NS
								      : REPLAY_ACK_NS))
		return;
	if (send_replay_ack_of(c, c->replay_next,
			       c->replay_gap_ts > c->replay_next ? c->replay_gap_ts : 0)) {
		c->replay_ack_ns = now;
		c->replay_gap_ts = 0;
		c->replay_since_ack = 0;
	}
}

/* The predecessor replaying to this node restarted: its log is gone, and
 * what the replayed range still lacks will never come (lost, counted).
 * The chain runs here on what came: the new run sends its input. */
static void
replay_orphaned(struct rsync_chain *c, uint64_t now)
{
	if (c->replay_next <= c->replay_newest_ts) {
		c->replay_lost += c->replay_newest_ts - c->replay_next + 1;
		c->replay_newest_ts = c->replay_next - 1;
	}
	c->replay_end_ns = now;
	__atomic_store_n(&c->state, RS_ACTIVE, __ATOMIC_RELEASE);
	MGR_LOG(WARNING, "remote chain %s: the predecessor restarted during the replay: %" PRIu64
		" replayed frames lost", c->cfg->name, c->replay_lost);
}

/* A frame of the predecessor's run `run`: false if of a run it replaced
 * (refused).  A new run is followed, and the replay of the run before, if
 * one was going on, orphaned; the epochs the run before cancelled are
 * not the new one's to offer or not (it counts its attempts from its
 * configured epoch again: refused, its failover would never be taken). */
static bool
pred_run_heard(struct rsync_chain *c, uint64_t run, uint64_t now)
{
	enum rsync_run_heard heard = rsync_peer_run_heard(&c->pred_runs, run);

	if (heard == RSYNC_RUN_REPLACED)
		return false;
	c->pred_run = c->pred_runs.cur;
	if (heard == RSYNC_RUN_NEW) {
		c->cancelled_epoch = 0;
		if (c->state == RS_REPLAY)
			replay_orphaned(c, now);
	}
	return true;
}

/* REPLAY_START / REPLAY_END from the predecessor. */
static enum rsync_rx_reason
standby_replay_msg(struct rsync_chain *c, const struct rsync_msg *m, uint64_t now)
{
	struct rsync_standby_applied a;
	uint32_t epoch = rsync_standby_epoch(c->sby);

	/* The predecessor's, to this node's run: a REPLAY_START recorded
	 * before this standby restarted never makes its new run take over. */
	if (m->h.role != RSYNC_ROLE_PREDECESSOR)
		return RSYNC_RX_WRONG_ROLE;
	if (m->h.receiver_run != mgr.remote.run)
		return RSYNC_RX_STALE_RUN;
	if (!pred_run_heard(c, m->h.sender_run, now))
		return RSYNC_RX_PEER_RESTARTED; /* a run that is gone */
	if (m->h.type == RSYNC_REPLAY_CANCEL) {
		/* The predecessor gave that epoch up: never take it.  If it
		 * was taken already (the echo lost), say so: it follows. */
		if (rsync_standby_taken_over(c->sby) && m->h.epoch == epoch) {
			echo_to_predecessor(c, &c->takeover_msg, 0);
			return RSYNC_RX_DUPLICATE;
		}
		if (m->h.epoch > c->cancelled_epoch)
			c->cancelled_epoch = m->h.epoch;
		return RSYNC_RX_OK;
	}
	/* A repeat of the one taken: the echo was lost. */
	if (m->h.epoch == epoch && rsync_standby_taken_over(c->sby)) {
		if (m->h.type == RSYNC_REPLAY_END && c->state == RS_REPLAY) {
			c->replay_end_ns = now;
			__atomic_store_n(&c->state, RS_ACTIVE, __ATOMIC_RELEASE);
			echo_to_predecessor(c, m, 0);
			return RSYNC_RX_OK;
		}
		echo_to_predecessor(c, m, 0);
		/* Running the chain already (a predecessor that restarted
		 * since, and offered the epoch this node runs before it heard
		 * so): say how far it has the input -- what the range holds
		 * above that is the new run's, sent to the dead primary and
		 * wanted here, and a REPLAY_ACK of all of it would have the
		 * predecessor drop it from its log unsent.  Acknowledged,
		 * or the predecessor would wait for acknowledgements for ever. */
		if (m->h.type == RSYNC_REPLAY_START && c->state == RS_ACTIVE)
			send_replay_ack_of(c, RTE_MIN(m->u.replay_start.newest_ts,
						      __atomic_load_n(&c->last_ts,
								      __ATOMIC_RELAXED)) + 1, 0);
		return RSYNC_RX_DUPLICATE;
	}
	if (m->h.type == RSYNC_REPLAY_START) {
		/* (an epoch given up: a copy delayed on the way) */
		if (m->h.epoch <= epoch || m->h.epoch <= c->cancelled_epoch)
			return RSYNC_RX_STALE_EPOCH;
		int rc;

		/* An NF state was written into and that went away makes the
		 * state not whole (the library then refuses). */
		rsync_state_check_all(c);
		rc = rsync_standby_takeover(c->sby, m->h.epoch, &a);
		if (rc == -ENOTRECOVERABLE) {
			/* Its NFs' state is not a cut of the chain (it started
			 * late or lost an NF's state, and is not in sync
			 * again yet): it stays the standby, nothing runs or
			 * leaves here, and the predecessor gets no echo. */
			/* (REPLAY_START is repeated every few ms: counted
			 * and logged once per epoch asked for.) */
			if (m->h.epoch != c->refused_epoch) {
				c->takeovers_refused++;
				MGR_LOG(ERR, "remote chain %s: takeover at epoch %u refused: this "
					     "standby is not in sync (its state is not a cut of the "
					     "chain yet)", c->cfg->name, m->h.epoch);
			}
			c->refused_epoch = m->h.epoch;
			/* Say so: the predecessor gives the failover up and
			 * goes back to the primary. */
			echo_to_predecessor(c, m, RSYNC_F_RESYNC);
			return RSYNC_RX_WRONG_ROLE;
		}
		/* (-EALREADY: a later attempt's, delayed, to a node that
		 * runs the chain -- no echo: the predecessor gives it up and
		 * follows the epoch this node's HEARTBEATs name) */
		if (rc != 0)
			return RSYNC_RX_STALE_EPOCH;
		c->takeovers++;
		c->takeover_txid = a.txid;
		c->takeover_cut_ts = a.cut_ts;
		/* The chain's clock goes on from the primary's (as last heard,
		 * plus the time since): the NFs' stamps in the applied state
		 * keep their age, whatever this host's clock says.  Before the
		 * state is published: an NF registering then reads it. */
		{
			uint64_t pc = rsync_standby_primary_clock(c->sby, now);

			__atomic_store_n(&c->clock_offset, pc != 0 ? (int64_t)(pc - now) : 0,
					 __ATOMIC_SEQ_CST);
		}
		c->replay_newest_ts = m->u.replay_start.newest_ts;
		c->replay_next = m->u.replay_start.after_ts + 1;
		c->replay_ack_ns = c->replay_gap_ts = 0;
		c->replay_start_ns = now;
		c->first_out_ns = 0;
		c->first_in_ns = 0;
		/* The TxTs is final: the TX unit may read it from now on. */
		__atomic_store_n(&c->state, RS_REPLAY, __ATOMIC_SEQ_CST);
		/* The applied cut is in the NFs' blocks: they run from now on,
		 * before the first replayed packet reaches them.  After the
		 * state store: an NF parking meanwhile sees one or the other. */
		rsync_state_unpark(c);
		MGR_LOG(NOTICE,
			"remote chain %s: taken over at epoch %u (applied txn %lu, cut ts %lu), "
			"replay after ts %lu",
			c->cfg->name, m->h.epoch, (unsigned long)a.txid, (unsigned long)a.cut_ts,
			(unsigned long)m->u.replay_start.after_ts);
		send_fence_heartbeat(c, now);
		c->takeover_msg = *m;
		echo_to_predecessor(c, m, 0);
		return RSYNC_RX_OK;
	}
	return RSYNC_RX_STALE_EPOCH; /* a REPLAY_END of no takeover here */
}

/* The predecessor's PROTECT, echoed as the chain's primary -- flagged
 * RSYNC_F_RESYNC when refused. */
static void
echo_protect(struct rsync_chain *c, const struct rsync_msg *m, uint8_t flags)
{
	echo_as(c, m, flags, RSYNC_ROLE_PRIMARY);
}

/*
 * PROTECT: the predecessor makes this node, which took the chain over and
 * runs it (the replay over), the chain's primary at the epoch it runs, a
 * new standby on the sync link.  It arrives in order with the stamped
 * input, after the last frame the predecessor may have dropped from its
 * log unreplicated; every frame after it stays in the log until this
 * node's LOG_TRIM -- so the cuts this node makes from now on, the first
 * after every frame admitted before PROTECT, are each backed by the log.
 * The idle session set up at start ("reprotect") resumes, its chain of
 * transactions continuing past the one taken over (never from the
 * origin: the new standby then knows it joined late, and asks for a full
 * cut), and is published to the TX unit, which latches every output from
 * then on.  Outputs it saw before still pass on the TxTs (they are of
 * input before the first cut).
 */
static enum rsync_rx_reason
standby_protect(struct rsync_chain *c, const struct rsync_msg *m, uint64_t now)
{
	uint32_t epoch;

	if (m->h.receiver_run != mgr.remote.run)
		return RSYNC_RX_STALE_RUN;
	if (c->pri != NULL) {
		/* Made primary already: a repeat (the echo was lost), on the
		 * TX unit, which owns the session now -- and the
		 * predecessor's run: the library's. */
		if (m->h.epoch != rsync_primary_epoch(c->pri))
			return RSYNC_RX_STALE_EPOCH;
		echo_protect(c, m, 0);
		return RSYNC_RX_DUPLICATE;
	}
	if (!pred_run_heard(c, m->h.sender_run, now))
		return RSYNC_RX_PEER_RESTARTED;
	epoch = rsync_standby_epoch(c->sby);
	if (m->h.epoch != epoch)
		return RSYNC_RX_STALE_EPOCH;
	if (c->state != RS_ACTIVE || c->pri_idle == NULL) {
		/* Not running the chain (the replay not over: PROTECT is
		 * sent only after REPLAY_END, so a copy that overtook it),
		 * or not set up to be its primary: refused, the predecessor
		 * goes on sending to this node unprotected.  (Repeated every
		 * few ms: counted and logged once per epoch.) */
		if (epoch != c->protect_refused_epoch) {
			c->protects_refused++;
			if (c->pri_idle == NULL)
				MGR_LOG(ERR, "remote chain %s: cannot be made primary: not "
					"configured with \"reprotect\"", c->cfg->name);
		}
		c->protect_refused_epoch = epoch;
		if (c->pri_idle == NULL)
			echo_protect(c, m, RSYNC_F_RESYNC);
		return RSYNC_RX_WRONG_ROLE;
	}
	if (rsync_primary_resume(c->pri_idle, epoch, RTE_MAX(c->takeover_txid, 1ull),
				 (uint64_t)__atomic_load_n(&c->clock_offset, __ATOMIC_SEQ_CST),
				 c->pred_run) != 0) {
		c->protects_refused++;
		echo_protect(c, m, RSYNC_F_RESYNC);
		return RSYNC_RX_BAD_FIELD;
	}
	/* The new standby is on the same link; with a MAC configured for the
	 * primary, another node's frames would be refused there. */
	memset(c->peer_mac, 0xff, 6);
	c->check_peer_mac = false;
	c->fence_hbs = FENCE_UNASKED; /* no more HEARTBEATs of the standby's */
	c->next_cut_ns = 0;	      /* a cut at once: the new standby needs one */
	c->promoted_ns = now;
	/* The echo from here, the last frame this unit sends for the chain:
	 * from the publication on, the TX unit owns its sending (c->tx, the
	 * HMAC context, the counters). */
	echo_protect(c, m, 0);
	__atomic_store_n(&c->state, RS_PRIMARY, __ATOMIC_RELEASE);
	__atomic_store_n(&c->pri, c->pri_idle, __ATOMIC_RELEASE);
	c->pri_idle = NULL;
	MGR_LOG(NOTICE, "remote chain %s: made primary at epoch %u: a new standby on port %d",
		c->cfg->name, epoch, c->sync_port);
	return RSYNC_RX_OK;
}

/*
 * An RSync frame, from the link it arrived on (mb->port): the predecessor's
 * (REPLAY_* and HEARTBEATs, from the predecessor role only) or the sync
 * link (the other of primary and standby).  Who may send what on which link
 * is checked before anything is taken, the peer's MAC first when one is
 * configured: a message reflected back, or sent on the other link, is
 * refused (wrong_role / unknown_peer) however authentic.
 */
static void
control_in(struct rsync_chain *c, struct rte_mbuf *mb, uint64_t now)
{
	const bool from_pred = mb->port == (uint16_t)c->cfg->predecessor_port;
	struct rsync_msg m;
	enum rsync_rx_reason r;

	r = rsync_decode(rte_pktmbuf_mtod(mb, const uint8_t *), rte_pktmbuf_data_len(mb), c->auth,
			 &m);
	if (r != RSYNC_RX_OK)
		goto out;
	if (m.h.chain != c->cfg->id) {
		r = RSYNC_RX_UNKNOWN_CHAIN;
		goto out;
	}
	if (from_pred ? (c->check_pred_mac && memcmp(m.src_mac, c->pred_mac, 6) != 0)
		      : (c->check_peer_mac && memcmp(m.src_mac, c->peer_mac, 6) != 0)) {
		r = RSYNC_RX_UNKNOWN_PEER;
		goto out;
	}
	if (from_pred != (m.h.role == RSYNC_ROLE_PREDECESSOR)) {
		r = RSYNC_RX_WRONG_ROLE;
		goto out;
	}
	if (m.h.type == RSYNC_REPLAY_START || m.h.type == RSYNC_REPLAY_END ||
	    m.h.type == RSYNC_REPLAY_CANCEL) {
		r = c->pri == NULL ? standby_replay_msg(c, &m, now) : RSYNC_RX_WRONG_ROLE;
		goto out;
	}
	/* (the RX unit's; once promoted the TX unit's: mgr_rsync_ingress()) */
	if (m.h.type == RSYNC_PROTECT) {
		r = c->sby != NULL ? standby_protect(c, &m, now) : RSYNC_RX_WRONG_ROLE;
		goto out;
	}
	if (from_pred && c->pri == NULL) {
		/* The predecessor's HEARTBEAT: its run, for the echoes. */
		if (m.h.type != RSYNC_HEARTBEAT)
			r = RSYNC_RX_WRONG_ROLE;
		else if (!pred_run_heard(c, m.h.sender_run, now))
			r = RSYNC_RX_PEER_RESTARTED; /* sent before it restarted */
		goto out;
	}
	if (c->pri != NULL) {
		uint64_t pred_restarts = rsync_primary_stats(c->pri)->pred_restarts;

		r = rsync_primary_rx(c->pri, &m, now);
		if (from_pred && r == RSYNC_RX_OK)
			c->pred_run = rsync_primary_pred_run(c->pri);
		if (rsync_primary_stats(c->pri)->pred_restarts != pred_restarts)
			rsync_state_pred_restarted(c);
		if (rsync_primary_fenced(c->pri) && c->state == RS_PRIMARY) {
			c->state = RS_FENCED;
			MGR_LOG(WARNING, "remote chain %s: fenced by epoch %u, releasing nothing more",
				c->cfg->name, rsync_primary_epoch(c->pri));
		}
	} else {
		r = rsync_standby_rx(c->sby, &m, now);
		if (r == RSYNC_RX_STALE_EPOCH && rsync_standby_taken_over(c->sby) &&
		    m.h.epoch < rsync_standby_epoch(c->sby))
			send_fence_heartbeat(c, now); /* the old primary still talks */
	}
out:
	/* (the RX unit's, then the TX unit's once a standby was made primary
	 * -- the RX unit counts the PROTECT that did it after publishing) */
	__atomic_fetch_add(&c->ctl_rx[r], 1, __ATOMIC_RELAXED);
	rte_pktmbuf_free(mb);
}

/* TX unit, a primary's: the predecessor hears of it every
 * PRED_HEARTBEAT_NS. */
void
rsync_unit_pred_heartbeat(struct rsync_chain *c, uint64_t now)
{
	pred_heartbeat(c, now);
}

int
rsync_unit_drain_ctl(struct rsync_chain *c, uint64_t now)
{
	struct rte_mbuf *mb[CTL_PER_POLL];
	unsigned int n = rte_ring_sc_dequeue_burst(c->ctl, (void **)mb, CTL_PER_POLL, NULL);

	for (unsigned int i = 0; i < n; i++)
		control_in(c, mb[i], now);
	return (int)n;
}

/* ---- exit ---- */

/* A ring of mbufs: what it still holds back to the pool, then the ring. */
static void
drain_and_free_ring(struct rte_ring **r)
{
	struct rte_mbuf *m;

	while (*r != NULL && rte_ring_sc_dequeue(*r, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(*r);
	*r = NULL;
}

void
mgr_rsync_fini(void)
{
	pthread_mutex_lock(&rsync_fini_lock);
	for (int i = 0; i < rsync_nchains; i++) {
		struct rsync_chain *c = &rsync_chains[i];

		/* Held packets go back to the pool, counted as aborted. */
		rsync_primary_free(c->pri);
		c->pri = NULL;
		rsync_primary_free(c->pri_idle);
		c->pri_idle = NULL;
		rsync_standby_free(c->sby);
		c->sby = NULL;
		while (c->wait_n > 0) {
			rte_pktmbuf_free(c->wait[c->wait_head]);
			c->wait_head = (c->wait_head + 1) % RSYNC_WAIT_SLOTS;
			c->wait_n--;
		}
		rte_free(c->wait);
		c->wait = NULL;
		drain_and_free_ring(&c->ctl);
		rte_pktmbuf_free(c->rel_head);
		c->rel_head = NULL;
		drain_and_free_ring(&c->rel);
		rsync_auth_free(c->auth);
		c->auth = NULL;
	}
	rsync_nchains = 0;
	pthread_mutex_unlock(&rsync_fini_lock);
}

