/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * rsync_unit.c -- remote resiliency on a chain's primary and standby nodes
 * (library: rsync/; design: docs/design.md, "The manager units").
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
 *     sync link, LOG_TRIM to the predecessor.  Lazy checkpoints: every
 *     checkpoint_ms, a cut at the newest timestamp latched -- for chains
 *     whose NFs hold no state only (a chain with state needs markers and
 *     its NFs' cut logs, not built yet: no cut, so no LOG_TRIM, and the
 *     predecessor's log fills and refuses input, counted there);
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
#include <rte_telemetry.h>

#include "mgr.h"
#include "onvm_pkt_parse.h"
#include "plog_shim.h"
#include "rsync_primary.h"
#include "rsync_standby.h"
#include "rsync_wire.h"

#define RSYNC_CTL_RING	       1024
#define RSYNC_WAIT_RING	       8192 /* packets waiting for room in the latch */
#define CTL_PER_POLL	       64
#define FENCE_HEARTBEAT_GAP_NS (10 * 1000 * 1000ull) /* at most one per 10 ms */

enum rs_state {
	RS_PRIMARY = 0, /* latching, releasing on votes */
	RS_FENCED,	/* a newer epoch took the chain: nothing leaves */
	RS_STANDBY,	/* staging and voting; nothing leaves */
	RS_REPLAY,	/* taken over, the predecessor replays its log */
	RS_ACTIVE,	/* the replay ended: this node runs the chain */
};

static const char *const rs_state_names[] = {"primary", "fenced", "standby", "replaying",
					     "active"};

struct rsync_chain {
	const struct mgr_remote_cfg *cfg;
	enum rs_state state;
	struct rsync_primary *pri;
	struct rsync_standby *sby;
	struct rsync_auth *auth;
	struct rte_ring *ctl;	 /* primary: RSync frames, RX unit -> TX unit */
	/* primary: packets the full latch could not take yet, in order (TX unit only) */
	struct rte_mbuf **wait;
	uint32_t wait_head, wait_n;
	/* The unit that owns the session (TX for a primary, RX for a
	 * standby), for the callbacks; only that unit writes or reads it. */
	struct mgr_dp_ctx *tx;
	int sync_port;		 /* the link to the other of primary/standby */
	int exit_port;		 /* where the chain's released packets leave */
	uint8_t src_mac_sync[6], src_mac_pred[6];
	uint8_t peer_mac[6];	 /* the other of primary/standby (else broadcast) */
	uint8_t pred_mac[6];	 /* the predecessor (else broadcast) */
	bool check_peer_mac;	 /* a peer MAC is configured: refuse others */
	bool has_state;		 /* an NF of the chain declared state (seen at a cut) */
	uint64_t next_tick_ns;
	uint64_t next_cut_ns;
	uint64_t cut_id;	 /* the last cut begun here */
	uint64_t newest_ts;	 /* the newest timestamp latched */
	uint64_t fence_hb_ns;	 /* the last HEARTBEAT sent to fence the old primary */
	/* ingress (RX unit) */
	uint64_t last_ts;	 /* the last timestamp admitted */
	uint64_t admitted;
	uint64_t admitted_replay; /* of those, with the REPLAY flag */
	uint64_t stale;		  /* timestamp not above the last admitted */
	uint64_t replay_covered;  /* replayed, at or below the applied cut: dropped */
	uint64_t before_takeover; /* standby: stamped input before a takeover, dropped */
	uint64_t ingress_rsync_refused; /* primary: RSync frames on the predecessor link */
	uint64_t gaps;		  /* timestamps skipped: lost on the link from the predecessor */
	uint64_t bad[PLOG_SHIM_REASON_MAX]; /* NOT_SHIM: unstamped */
	uint64_t ctl_ring_full;
	/* sessions (TX unit) */
	uint64_t ctl_rx[RSYNC_RX_REASON_MAX];
	uint64_t sent, send_fail;
	uint64_t out_latched, out_released, out_aborted, out_latch_full, out_unstamped,
		out_refused; /* fenced or busy */
	uint64_t out_passed, out_dup, out_before_takeover;
	uint64_t takeovers;
	uint64_t replay_start_ns, replay_end_ns, first_out_ns;
	uint64_t takeover_txid, takeover_cut_ts;
	uint64_t replay_newest_ts;
};

static struct rsync_chain chains[MGR_CFG_MAX_REMOTE];
static int nchains;
/* Telemetry (its own thread) against mgr_rsync_fini() freeing the sessions. */
static pthread_mutex_t fini_lock = PTHREAD_MUTEX_INITIALIZER;

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

static void
primary_release(void *ctx, void *const *pkts, uint32_t n)
{
	struct rsync_chain *c = ctx;

	for (uint32_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		mgr_dp_to_port(c->tx, m, onvm_pkt_meta(m, mgr.dyn_off)->egress_port);
	}
	c->out_released += n;
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

/* No state regions yet (stateless chains): a transaction with state is
 * never voted. */
static bool
standby_state_ok(void *ctx, uint16_t region, uint64_t offset, uint32_t len)
{
	(void)ctx;
	(void)region;
	(void)offset;
	(void)len;
	return false;
}

static void
standby_apply_state(void *ctx, uint16_t region, uint64_t offset, const void *data, uint32_t len)
{
	(void)ctx;
	(void)region;
	(void)offset;
	(void)data;
	(void)len;
}

static const struct rsync_primary_ops primary_ops = {primary_send, primary_release,
						     primary_drop};
static const struct rsync_standby_ops standby_ops = {standby_send, standby_state_ok,
						     standby_apply_state};

/* ---- set-up ---- */

static void
port_mac(int port, uint8_t mac[6])
{
	struct rte_ether_addr a;

	if (port >= 0 && rte_eth_macaddr_get((uint16_t)port, &a) == 0)
		memcpy(mac, a.addr_bytes, 6);
}

/* Whether an NF of the chain (any instance, active or standby set)
 * declared state regions.  NFs register after start: asked at each cut. */
static bool
chain_has_state(const struct rsync_chain *c)
{
	const struct mgr_chain_cfg *ch = &mgr.cfg.chains[c->cfg->chain];

	for (uint16_t k = 0; k < ch->len; k++) {
		const struct onvm_service *svc = &mgr.shm->services[ch->services[k]];

		for (int a = 0; a < 2; a++)
			for (uint16_t i = 0; i < svc->n[a]; i++)
				if (__atomic_load_n(&mgr.shm->nfs[svc->inst[a][i]].n_state_req,
						    __ATOMIC_ACQUIRE) > 0)
					return true;
	}
	return false;
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
	if (rc->role == MGR_REMOTE_PRIMARY) {
		snprintf(name, sizeof(name), "onvm_rsync_ctl%d", idx);
		c->ctl = rte_ring_create(name, RSYNC_CTL_RING, rte_socket_id(),
					 RING_F_SP_ENQ | RING_F_SC_DEQ);
		c->wait = rte_zmalloc("onvm_rsync_wait", RSYNC_WAIT_RING * sizeof(*c->wait), 0);
		if (c->ctl == NULL || c->wait == NULL) {
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
	if (rc->has_mac[MGR_PEER_PREDECESSOR])
		memcpy(c->pred_mac, rc->mac[MGR_PEER_PREDECESSOR], 6);
	if (rc->role == MGR_REMOTE_PRIMARY) {
		struct rsync_primary_cfg pc = {
			.chain = rc->id,
			.epoch = rc->epoch,
			.stages = rc->stages,
			.stage_pkts = rc->stage_packets,
			.stage_state_bytes = (uint64_t)rc->stage_state_kb << 10,
			.max_payload = RSYNC_MAX_PAYLOAD,
			.close_ns = (uint64_t)rc->stage_close_us * 1000,
			.retrans_ns = (uint64_t)rc->retrans_us * 1000,
			.max_tries = rc->max_tries,
			.standby_window = rc->standby_window,
		};

		c->pri = rsync_primary_new(&pc, &primary_ops, c, rte_rand());
		c->state = RS_PRIMARY;
	} else {
		struct rsync_standby_cfg sc = {
			.chain = rc->id,
			.epoch = rc->epoch,
			.window = rc->window,
			.max_frags = rc->max_frags,
			.txts_capacity = rc->txts_flows,
		};

		c->sby = rsync_standby_new(&sc, &standby_ops, c, rte_rand());
		c->state = RS_STANDBY;
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
		c = &chains[nchains];
		c->cfg = rc;
		c->sync_port = rc->role == MGR_REMOTE_PRIMARY ? rc->standby_port : rc->primary_port;
		rc_err = session_init(c, nchains);
		if (rc_err < 0)
			return rc_err;
		mgr.rsync_in_port[rc->predecessor_port] = (uint8_t)(nchains + 1);
		mgr.rsync_sync_port[c->sync_port] = (uint8_t)(nchains + 1);
		mgr.rsync_out_port[c->exit_port] = (uint8_t)(nchains + 1);
		nchains++;
		MGR_LOG(INFO,
			"remote chain %s (id %u): %s, stamped input on port %d, sync link on port "
			"%d, exit port %d",
			rc->name, rc->id, rc->role == MGR_REMOTE_PRIMARY ? "primary" : "standby",
			rc->predecessor_port, c->sync_port, c->exit_port);
	}
	return 0;
}

/* ---- RX unit ---- */

static bool
is_rsync(const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

	return rte_pktmbuf_data_len(m) >= RSYNC_ETH_LEN && p[12] == (RSYNC_ETHERTYPE >> 8) &&
	       p[13] == (RSYNC_ETHERTYPE & 0xff);
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

bool
mgr_rsync_ingress(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m, uint64_t *ts,
		  uint8_t *flags)
{
	struct rsync_chain *c = &chains[mgr.rsync_in_port[port] - 1];
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	struct plog_shim sh;
	enum plog_shim_reason r;

	/* The shim sits in the first segment (the predecessor put it there). */
	r = plog_shim_parse(p, rte_pktmbuf_data_len(m), &sh);
	if (unlikely(r != PLOG_SHIM_OK)) {
		if (r == PLOG_SHIM_NOT_SHIM && is_rsync(m)) {
			if (c->sby == NULL) {
				/* A primary takes nothing from its predecessor
				 * (and its session is the TX unit's). */
				c->ingress_rsync_refused++;
				rte_pktmbuf_free(m);
				return true;
			}
			/* REPLAY_START / REPLAY_END: the standby's session,
			 * handled here before the next frame. */
			c->tx = ctx;
			control_in(c, m, mgr_now_ns());
			return true;
		}
		c->bad[r]++;
		rte_pktmbuf_free(m);
		return true;
	}
	if (c->sby != NULL && c->state == RS_STANDBY) {
		/* Not admitted (nor remembered): the predecessor starts the
		 * replay only once REPLAY_START was echoed. */
		c->before_takeover++;
		rte_pktmbuf_free(m);
		return true;
	}
	if (sh.ts <= c->last_ts) {
		c->stale++;
		rte_pktmbuf_free(m);
		return true;
	}
	if (c->sby != NULL && sh.ts <= c->takeover_cut_ts) {
		c->replay_covered++; /* the applied cut holds it */
		c->last_ts = sh.ts;
		rte_pktmbuf_free(m);
		return true;
	}
	if (c->last_ts != 0 && sh.ts > c->last_ts + 1)
		c->gaps += sh.ts - c->last_ts - 1;
	c->last_ts = sh.ts;
	plog_shim_strip(p, &sh);
	rte_pktmbuf_adj(m, PLOG_SHIM_LEN);
	*ts = sh.ts;
	*flags = (sh.flags & PLOG_SHIM_F_REPLAY) ? ONVM_PKT_F_REPLAY : 0;
	c->admitted++;
	c->admitted_replay += *flags != 0;
	return false;
}

bool
mgr_rsync_sync_rx(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m)
{
	struct rsync_chain *c = &chains[mgr.rsync_sync_port[port] - 1];

	if (!is_rsync(m))
		return false;
	if (c->sby != NULL) { /* the standby's session is the RX unit's */
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
	m.u.heartbeat.txid = a.txid;
	m.u.heartbeat.cut_ts = a.cut_ts;
	if (standby_send(c, &m) == 0)
		c->fence_hb_ns = now;
}

/* The predecessor repeats REPLAY_START/END until the standby echoes it. */
static void
echo_to_predecessor(struct rsync_chain *c, const struct rsync_msg *m)
{
	struct rsync_msg e = *m;

	e.h.flags = 0;
	e.h.key_id = 0;
	(void)send_frame(c, (uint16_t)c->cfg->predecessor_port, c->pred_mac, c->src_mac_pred, &e,
			 NULL, 0);
}

/* REPLAY_START / REPLAY_END from the predecessor. */
static enum rsync_rx_reason
standby_replay_msg(struct rsync_chain *c, const struct rsync_msg *m, uint64_t now)
{
	struct rsync_standby_applied a;
	uint32_t epoch = rsync_standby_epoch(c->sby);

	/* A repeat of the one taken: the echo was lost. */
	if (m->h.epoch == epoch && rsync_standby_taken_over(c->sby)) {
		if (m->h.type == RSYNC_REPLAY_END && c->state == RS_REPLAY) {
			c->replay_end_ns = now;
			__atomic_store_n(&c->state, RS_ACTIVE, __ATOMIC_RELEASE);
			echo_to_predecessor(c, m);
			return RSYNC_RX_OK;
		}
		echo_to_predecessor(c, m);
		return RSYNC_RX_DUPLICATE;
	}
	if (m->h.type == RSYNC_REPLAY_START) {
		if (m->h.epoch <= epoch)
			return RSYNC_RX_STALE_EPOCH;
		if (rsync_standby_takeover(c->sby, m->h.epoch, &a) != 0)
			return RSYNC_RX_STALE_EPOCH;
		c->takeovers++;
		c->takeover_txid = a.txid;
		c->takeover_cut_ts = a.cut_ts;
		c->replay_newest_ts = m->u.replay_start.newest_ts;
		c->replay_start_ns = now;
		c->first_out_ns = 0;
		/* The TxTs is final: the TX unit may read it from now on. */
		__atomic_store_n(&c->state, RS_REPLAY, __ATOMIC_RELEASE);
		MGR_LOG(NOTICE,
			"remote chain %s: taken over at epoch %u (applied txn %lu, cut ts %lu), "
			"replay after ts %lu",
			c->cfg->name, m->h.epoch, (unsigned long)a.txid, (unsigned long)a.cut_ts,
			(unsigned long)m->u.replay_start.after_ts);
		send_fence_heartbeat(c, now);
		echo_to_predecessor(c, m);
		return RSYNC_RX_OK;
	}
	return RSYNC_RX_STALE_EPOCH; /* a REPLAY_END of no takeover here */
}

static void
control_in(struct rsync_chain *c, struct rte_mbuf *mb, uint64_t now)
{
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
	if (m.h.type == RSYNC_REPLAY_START || m.h.type == RSYNC_REPLAY_END) {
		r = c->sby != NULL ? standby_replay_msg(c, &m, now) : RSYNC_RX_WRONG_ROLE;
		goto out;
	}
	if (c->check_peer_mac && memcmp(m.src_mac, c->peer_mac, 6) != 0) {
		r = RSYNC_RX_UNKNOWN_PEER;
		goto out;
	}
	if (c->pri != NULL) {
		r = rsync_primary_rx(c->pri, &m, now);
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
	c->ctl_rx[r]++;
	rte_pktmbuf_free(mb);
}

static int
drain_ctl(struct rsync_chain *c, uint64_t now)
{
	struct rte_mbuf *mb[CTL_PER_POLL];
	unsigned int n = rte_ring_sc_dequeue_burst(c->ctl, (void **)mb, CTL_PER_POLL, NULL);

	for (unsigned int i = 0; i < n; i++)
		control_in(c, mb[i], now);
	return (int)n;
}

/* ---- TX unit: packets leaving the chain ---- */

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

/* Packets that waited for room go first, in order.  Returns how many. */
static int
latch_waiting(struct rsync_chain *c, uint64_t now)
{
	int n = 0;

	while (c->wait_n > 0) {
		struct rte_mbuf *m = c->wait[c->wait_head];

		if (c->state != RS_PRIMARY) {
			c->out_refused++;
			rte_pktmbuf_free(m);
		} else if (!latch(c, m, now)) {
			break; /* stays first */
		}
		c->wait_head = (c->wait_head + 1) % RSYNC_WAIT_RING;
		c->wait_n--;
		n++;
	}
	return n;
}

static void
lazy_cut(struct rsync_chain *c, uint64_t now)
{
	uint64_t base = rsync_primary_cut_base(c->pri);

	c->next_cut_ns = now + (uint64_t)c->cfg->checkpoint_ms * 1000000;
	/* A chain without state: a cut is a timestamp (every packet at or
	 * below it left the chain -- one instance per service keeps the
	 * chain FIFO), and it lets the predecessor trim its log. */
	if (!c->has_state && chain_has_state(c)) {
		c->has_state = true;
		MGR_LOG(WARNING, "remote chain %s: an NF holds state; its checkpoints need "
				 "markers, not built yet: no more cuts, the predecessor's log will fill",
			c->cfg->name);
	}
	if (c->has_state || c->newest_ts <= rsync_primary_cut_base_ts(c->pri))
		return;
	if (rsync_primary_cut_begin(c->pri, c->cut_id + 1, base, c->newest_ts, now) != 0)
		return;
	c->cut_id++;
	(void)rsync_primary_cut_end(c->pri, now);
}

int
mgr_rsync_tx(struct mgr_dp_ctx *ctx)
{
	int work = 0;

	if (nchains == 0)
		return 0;
	for (int i = 0; i < nchains; i++) {
		struct rsync_chain *c = &chains[i];
		uint64_t now;

		uint64_t sent_before = c->sent, released_before = c->out_released;

		if (c->pri == NULL)
			continue; /* a standby's session runs on the RX unit */
		c->tx = ctx;
		now = mgr_now_ns();
		work += drain_ctl(c, now);
		if (c->state != RS_PRIMARY) {
			/* Fenced: what waited for the latch goes back (counted). */
			if (c->wait_n > 0)
				work += latch_waiting(c, now);
			continue;
		}
		if (now >= c->next_cut_ns)
			lazy_cut(c, now);
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

void
mgr_rsync_on_exit(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m)
{
	struct rsync_chain *c = &chains[mgr.rsync_out_port[port] - 1];
	struct onvm_pkt_meta *meta = onvm_pkt_meta(m, mgr.dyn_off);
	struct rsync_flow f;
	uint64_t now;

	if (meta->chain_id != (uint16_t)c->cfg->chain) {
		/* Another chain's packet sharing the exit port: not ours. */
		mgr_dp_to_port(ctx, m, port);
		return;
	}
	if (meta->ts == 0) { /* ours but not stamped: it cannot be deduplicated */
		c->out_unstamped++;
		rte_pktmbuf_free(m);
		return;
	}
	if (c->pri != NULL)
		c->tx = ctx; /* a standby's c->tx is the RX unit's */
	if (c->pri != NULL) {
		if (c->state != RS_PRIMARY) {
			c->out_refused++;
			rte_pktmbuf_free(m);
			return;
		}
		meta->egress_port = (uint8_t)port;
		now = mgr_now_ns();
		/* Behind packets already waiting, or the latch is full: wait
		 * (in order) for a release to make room. */
		if (c->wait_n > 0)
			latch_waiting(c, now);
		if (c->wait_n == 0 && latch(c, m, now))
			return;
		if (c->wait_n == RSYNC_WAIT_RING) {
			c->out_latch_full++;
			rte_pktmbuf_free(m);
			return;
		}
		c->wait[(c->wait_head + c->wait_n) % RSYNC_WAIT_RING] = m;
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

/* ---- exit ---- */

void
mgr_rsync_fini(void)
{
	pthread_mutex_lock(&fini_lock);
	for (int i = 0; i < nchains; i++) {
		struct rsync_chain *c = &chains[i];
		struct rte_mbuf *m;

		/* Held packets go back to the pool, counted as aborted. */
		rsync_primary_free(c->pri);
		c->pri = NULL;
		rsync_standby_free(c->sby);
		c->sby = NULL;
		while (c->wait_n > 0) {
			rte_pktmbuf_free(c->wait[c->wait_head]);
			c->wait_head = (c->wait_head + 1) % RSYNC_WAIT_RING;
			c->wait_n--;
		}
		rte_free(c->wait);
		c->wait = NULL;
		while (c->ctl != NULL && rte_ring_sc_dequeue(c->ctl, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(c->ctl);
		c->ctl = NULL;
		rsync_auth_free(c->auth);
		c->auth = NULL;
	}
	nchains = 0;
	pthread_mutex_unlock(&fini_lock);
}

/* ---- telemetry ---- */

static void
add_primary_stats(struct rte_tel_data *o, const struct rsync_chain *c)
{
	const struct rsync_primary_stats *s = rsync_primary_stats(c->pri);
	struct rte_tel_data *lat = rte_tel_data_alloc();

	rte_tel_data_add_dict_uint(o, "epoch", rsync_primary_epoch(c->pri));
	rte_tel_data_add_dict_uint(o, "stages_busy", rsync_primary_stages_busy(c->pri));
	rte_tel_data_add_dict_uint(o, "pkts_latched_now", rsync_primary_pkts_latched(c->pri));
	rte_tel_data_add_dict_uint(o, "stages_closed", s->stages_closed);
	rte_tel_data_add_dict_uint(o, "stages_released", s->stages_released);
	rte_tel_data_add_dict_uint(o, "votes", s->votes);
	rte_tel_data_add_dict_uint(o, "acks", s->acks);
	rte_tel_data_add_dict_uint(o, "commits_sent", s->commits_sent);
	rte_tel_data_add_dict_uint(o, "frags_sent", s->frags_sent);
	rte_tel_data_add_dict_uint(o, "frags_retrans", s->frags_retrans);
	rte_tel_data_add_dict_uint(o, "aborts_no_vote", s->aborts[RSYNC_ABORT_NO_VOTE]);
	rte_tel_data_add_dict_uint(o, "aborts_cascade", s->aborts[RSYNC_ABORT_CASCADE]);
	rte_tel_data_add_dict_uint(o, "aborts_fenced", s->aborts[RSYNC_ABORT_FENCED]);
	rte_tel_data_add_dict_uint(o, "cuts", s->cuts);
	rte_tel_data_add_dict_uint(o, "trims_sent", s->trims_sent);
	rte_tel_data_add_dict_uint(o, "window_waits", s->window_waits);
	rte_tel_data_add_dict_uint(o, "nd_waits", s->nd_waits);
	rte_tel_data_add_dict_uint(o, "released_cut_ts", rsync_primary_released_cut_ts(c->pri));
	if (lat != NULL) {
		rte_tel_data_start_array(lat, RTE_TEL_U64_VAL);
		for (int b = 0; b < RSYNC_LAT_BUCKETS; b++)
			rte_tel_data_add_array_uint(lat, s->commit_lat_us[b]);
		rte_tel_data_add_dict_container(o, "commit_lat_us_log2", lat, 0);
	}
}

static void
add_standby_stats(struct rte_tel_data *o, const struct rsync_chain *c)
{
	const struct rsync_standby_stats *s = rsync_standby_stats(c->sby);
	struct rsync_standby_applied a;

	rsync_standby_get_applied(c->sby, &a);
	rte_tel_data_add_dict_uint(o, "epoch", rsync_standby_epoch(c->sby));
	rte_tel_data_add_dict_uint(o, "staged", rsync_standby_staged(c->sby));
	rte_tel_data_add_dict_uint(o, "votes", s->votes);
	rte_tel_data_add_dict_uint(o, "applied", s->applied);
	rte_tel_data_add_dict_uint(o, "applied_txid", a.txid);
	rte_tel_data_add_dict_uint(o, "applied_cut_ts", a.cut_ts);
	rte_tel_data_add_dict_uint(o, "applied_txts", s->applied_txts);
	rte_tel_data_add_dict_uint(o, "txts_entries", rsync_standby_txts_entries(c->sby));
	rte_tel_data_add_dict_uint(o, "aborted", s->aborted);
	rte_tel_data_add_dict_uint(o, "orphans", s->orphans);
	rte_tel_data_add_dict_uint(o, "takeovers", c->takeovers);
	rte_tel_data_add_dict_uint(o, "takeover_applied", s->takeover_applied);
	rte_tel_data_add_dict_uint(o, "takeover_txid", c->takeover_txid);
	rte_tel_data_add_dict_uint(o, "replay_start_ns", c->replay_start_ns);
	rte_tel_data_add_dict_uint(o, "replay_end_ns", c->replay_end_ns);
	rte_tel_data_add_dict_uint(o, "first_out_ns", c->first_out_ns);
	rte_tel_data_add_dict_uint(o, "out_passed", c->out_passed);
	rte_tel_data_add_dict_uint(o, "out_dup", c->out_dup);
	rte_tel_data_add_dict_uint(o, "out_before_takeover", c->out_before_takeover);
}

void
mgr_rsync_telemetry(struct rte_tel_data *d)
{
	pthread_mutex_lock(&fini_lock);
	for (int i = 0; i < nchains; i++) {
		const struct rsync_chain *c = &chains[i];
		struct rte_tel_data *o = rte_tel_data_alloc();

		if (o == NULL)
			break;
		rte_tel_data_start_dict(o);
		rte_tel_data_add_dict_string(o, "role", c->cfg->role == MGR_REMOTE_PRIMARY
								? "primary"
								: "standby");
		rte_tel_data_add_dict_string(o, "state", rs_state_names[c->state]);
		rte_tel_data_add_dict_uint(o, "id", c->cfg->id);
		rte_tel_data_add_dict_uint(o, "ingress_last_ts", c->last_ts);
		rte_tel_data_add_dict_uint(o, "ingress_admitted", c->admitted);
		rte_tel_data_add_dict_uint(o, "ingress_replayed", c->admitted_replay);
		rte_tel_data_add_dict_uint(o, "ingress_stale", c->stale);
		rte_tel_data_add_dict_uint(o, "ingress_replay_covered", c->replay_covered);
		rte_tel_data_add_dict_uint(o, "ingress_before_takeover", c->before_takeover);
		rte_tel_data_add_dict_uint(o, "ingress_rsync_refused", c->ingress_rsync_refused);
		rte_tel_data_add_dict_uint(o, "ingress_gaps", c->gaps);
		rte_tel_data_add_dict_uint(o, "ingress_unstamped", c->bad[PLOG_SHIM_NOT_SHIM]);
		for (int r = PLOG_SHIM_SHORT; r < PLOG_SHIM_REASON_MAX; r++) {
			char key[40];

			snprintf(key, sizeof(key), "ingress_shim_%s",
				 plog_shim_reason_str((enum plog_shim_reason)r));
			rte_tel_data_add_dict_uint(o, key, c->bad[r]);
		}
		rte_tel_data_add_dict_uint(o, "ctl_ring_full", c->ctl_ring_full);
		for (int r = 0; r < RSYNC_RX_REASON_MAX; r++) {
			char key[48];

			snprintf(key, sizeof(key), "ctl_%s",
				 rsync_rx_reason_str((enum rsync_rx_reason)r));
			rte_tel_data_add_dict_uint(o, key, c->ctl_rx[r]);
		}
		rte_tel_data_add_dict_uint(o, "ctrl_sent", c->sent);
		rte_tel_data_add_dict_uint(o, "send_fail", c->send_fail);
		rte_tel_data_add_dict_uint(o, "out_latched", c->out_latched);
		rte_tel_data_add_dict_uint(o, "out_released", c->out_released);
		rte_tel_data_add_dict_uint(o, "out_aborted", c->out_aborted);
		rte_tel_data_add_dict_uint(o, "out_latch_full", c->out_latch_full);
		rte_tel_data_add_dict_uint(o, "out_waiting", c->wait_n);
		rte_tel_data_add_dict_uint(o, "out_unstamped", c->out_unstamped);
		rte_tel_data_add_dict_uint(o, "out_refused", c->out_refused);
		if (c->pri != NULL)
			add_primary_stats(o, c);
		else
			add_standby_stats(o, c);
		rte_tel_data_add_dict_container(d, c->cfg->name, o, 0);
	}
	pthread_mutex_unlock(&fini_lock);
}
