/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * sl_peer.c -- a stateless chain behind remote resiliency's predecessor, so
 * that it survives the loss of its whole node (design: docs/design/
 * stateless.md, "A node lost").
 *
 * The predecessor (plog_unit.c) stamps the chain's input with the 0x88B5
 * shim, logs it and sends it to the primary node; the chain's root there
 * takes the predecessor's timestamps as its clock, so a marker carries the
 * timestamp of the last packet before it.  The primary speaks the part of
 * remote resiliency's protocol a predecessor needs from a primary:
 *   - HEARTBEATs (its run, the newest timestamp admitted), every 20 ms;
 *   - LOG_TRIM up to the newest marker its exit released: what is at or
 *     below it is in the store, and the predecessor's log lets it go.
 * A spare node runs the chain's NFs held before their warm-up (sl_hold:
 * nothing in the store) and speaks the standby's part:
 *   - HEARTBEATs, so that the predecessor knows its run;
 *   - on REPLAY_START (the predecessor's BFD saw the primary go) it takes
 *     the chain over: echoes it, lets its NFs go -- they FENCE with no
 *     recovery point, the store answering the newest epoch every NF closed
 *     and its marker's timestamp T -- and admits the replayed range whole
 *     and in order, acknowledged (REPLAY_ACK, a gap reported), into the
 *     root's log, which holds it until the NFs loaded their state;
 *   - then the root sends its log on, dropping what is at or below T (the
 *     loaded state holds it); REPLAY_END is echoed, and the spare runs the
 *     chain.
 * Nothing the old primary released is after T (its exit released only
 * epochs every NF had closed), so nothing leaves twice; what its exit
 * still held at or below T is lost with it, as a dead primary's tail is in
 * remote resiliency.  What came in while the chain changed node is in the
 * predecessor's log and is replayed.
 *
 * Units: the RX unit owns the ingress, a spare's session (its HEARTBEATs and
 * acknowledgements go out from there, as a remote standby's do) and the
 * predecessor's run and epoch as heard; the TX unit owns a primary's
 * HEARTBEATs and trims (it knows what the exit released).  No HMAC: the
 * predecessor's chain must have no key.
 */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_telemetry.h>

#include "plog_shim.h"
#include "rsync_wire.h"
#include "sl_priv.h"

#define PEER_HEARTBEAT_NS (20 * 1000 * 1000ull) /* to the predecessor */
#define PEER_TRIM_NS (1000 * 1000ull)		 /* a LOG_TRIM at most every 1 ms */
#define PEER_ACK_NS (1000 * 1000ull)		 /* a replay acknowledged every 1 ms */
#define PEER_NACK_NS (200 * 1000ull)		 /* a gap reported at most every 200 us */
/* A frame a primary's root dropped, not sent again in this long: lost
 * (counted), the input admitted again -- bounded whatever the predecessor
 * does (restarted, trimmed it, or too old to take a primary's REPLAY_ACK). */
#define PEER_LACK_GIVE_UP_NS (1000 * 1000 * 1000ull)
#define PEER_ACK_EVERY 1024			 /* ... and every half its window */

uint8_t mgr_sl_peer_port[ONVM_MAX_PORTS];

static const uint8_t broadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

void
mgr_sl_peer_init(struct sl_chain *c, const struct mgr_chain_cfg *cc)
{
	struct rte_ether_addr a;

	c->peer_role = cc->peer_role;
	c->peer_id = cc->peer_id;
	c->peer_port = (uint16_t)cc->ingress_port;
	c->peer_epoch = 1;
	if (rte_eth_macaddr_get(c->peer_port, &a) == 0)
		memcpy(c->peer_mac, a.addr_bytes, 6);
	mgr_sl_peer_port[c->peer_port] = (uint8_t)(c->id + 1);
	if (c->peer_role == MGR_SL_PEER_SPARE) {
		c->peer_state = SL_PEER_SPARE;
		__atomic_store_n(&mgr.shm->chains[c->id].sl_hold, 1, __ATOMIC_RELEASE);
	} else {
		c->peer_state = SL_PEER_PRIMARY;
	}
}

/* A control frame to the predecessor, from the unit `ctx` (its owner). */
static bool
peer_send(struct mgr_dp_ctx *ctx, struct sl_chain *c, uint8_t type, struct rsync_msg *m)
{
	uint8_t buf[RSYNC_MAX_FRAME];
	struct rte_mbuf *mb;
	int len;

	m->h.version = RSYNC_VERSION;
	m->h.type = type;
	m->h.chain = c->peer_id;
	m->h.frag_count = 1;
	m->h.role = c->peer_role == MGR_SL_PEER_SPARE ? RSYNC_ROLE_STANDBY : RSYNC_ROLE_PRIMARY;
	m->h.sender_run = mgr.remote.run;
	m->h.receiver_run = __atomic_load_n(&c->peer_pred_run, __ATOMIC_RELAXED);
	len = rsync_encode(buf, sizeof(buf), broadcast, c->peer_mac, m, NULL, 0, NULL);
	mb = len > 0 ? rte_pktmbuf_alloc(mgr.pool) : NULL;
	if (mb == NULL) {
		c->peer_send_fail++;
		return false;
	}
	memcpy(rte_pktmbuf_append(mb, (uint16_t)len), buf, (size_t)len);
	/* (sent from the RX unit, it reaches the port through the TX unit's
	 * dispatch: not the chain's output to hold) */
	memset(onvm_pkt_meta(mb, mgr.dyn_off), 0, sizeof(struct onvm_pkt_meta));
	onvm_pkt_meta(mb, mgr.dyn_off)->flags = ONVM_PKT_F_CTRL;
	if (!mgr_dp_port_try(ctx, mb, c->peer_port)) {
		rte_pktmbuf_free(mb);
		c->peer_send_fail++;
		return false;
	}
	c->peer_sent++;
	return true;
}

static void
heartbeat(struct mgr_dp_ctx *ctx, struct sl_chain *c, uint64_t now)
{
	struct rsync_msg m = {0};

	if (now - c->peer_hb_ns < PEER_HEARTBEAT_NS && c->peer_hb_ns != 0)
		return;
	c->peer_hb_ns = now;
	m.h.epoch = __atomic_load_n(&c->peer_epoch, __ATOMIC_RELAXED);
	/* Running the chain (a primary not fenced, a spare that took over):
	 * the node a restarted predecessor follows (plog_unit.c). */
	if ((c->peer_state == SL_PEER_PRIMARY &&
	     !__atomic_load_n(&c->peer_fenced, __ATOMIC_ACQUIRE)) ||
	    c->peer_state == SL_PEER_REPLAY || c->peer_state == SL_PEER_ACTIVE)
		m.h.flags = RSYNC_F_RUNNING;
	/* The newest timestamp admitted, or in the state loaded: a restarted
	 * predecessor (or one whose clock is behind) stamps above it, or its
	 * input would be taken for what the state holds. */
	m.u.heartbeat.cut_ts = RTE_MAX(__atomic_load_n(&c->peer_last_ts, __ATOMIC_RELAXED),
				       __atomic_load_n(&c->skip_ts, __ATOMIC_RELAXED));
	(void)peer_send(ctx, c, RSYNC_HEARTBEAT, &m);
}

/* ---- a primary's lacks (RX unit) ---- */

void
mgr_sl_peer_lacks(struct sl_chain *c, uint64_t ts)
{
	if (c->peer_role != MGR_SL_PEER_PRIMARY || ts == 0 || c->peer_lack_ts != 0 ||
	    __atomic_load_n(&c->peer_fenced, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&c->peer_superseded, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&c->peer_lack_ts, ts, __ATOMIC_RELEASE);
	c->peer_lack_since_ns = mgr_now_ns();
	c->peer_lack_ns = 0;
	c->peer_lacks++;
	/* (admitted by mgr_sl_peer_ingress: it must be admitted again) */
	__atomic_store_n(&c->peer_last_ts, ts - 1, __ATOMIC_RELAXED);
}

/* The lack ended without the frame: it is lost, counted (a predecessor
 * that restarted, trimmed it already, or cannot send it again). */
static void
lack_given_up(struct sl_chain *c, const char *why)
{
	uint64_t ts = c->peer_lack_ts;

	__atomic_store_n(&c->peer_lack_ts, 0, __ATOMIC_RELEASE);
	c->peer_lacks_given_up++;
	MGR_LOG(WARNING, "chain '%s': stamped frame %" PRIu64 " dropped at the root is lost: %s",
		mgr.shm->chains[c->id].name, ts, why);
}

/* RX unit: ask the predecessor for its log again from the lacking
 * timestamp -- a REPLAY_ACK whose next_ts is it -- once the root's log has
 * room again (while it is full the frame would only be dropped again), at
 * most every PEER_NACK_NS. */
static void
primary_nack(struct mgr_dp_ctx *ctx, struct sl_chain *c, uint64_t now)
{
	struct rsync_msg m = {0};

	if (c->peer_lack_ts == 0 || !mgr_sl_log_room(c) ||
	    (c->peer_lack_ns != 0 && now - c->peer_lack_ns < PEER_NACK_NS))
		return;
	if (now - c->peer_lack_since_ns > PEER_LACK_GIVE_UP_NS) {
		lack_given_up(c, "the predecessor did not send it again");
		return;
	}
	m.h.epoch = __atomic_load_n(&c->peer_epoch, __ATOMIC_RELAXED);
	m.u.replay_ack.next_ts = c->peer_lack_ts;
	c->peer_lack_ns = now; /* (a send that failed: again after the period) */
	(void)peer_send(ctx, c, RSYNC_REPLAY_ACK, &m);
}

/* ---- the spare's session (RX unit) ---- */

static void
replay_ack(struct mgr_dp_ctx *ctx, struct sl_chain *c, uint64_t now, bool force)
{
	struct rsync_msg m = {0};

	if (!force && now - c->peer_ack_ns < (c->peer_gap_ts != 0 ? PEER_NACK_NS : PEER_ACK_NS))
		return;
	m.h.epoch = c->peer_epoch;
	m.u.replay_ack.next_ts = c->peer_next;
	m.u.replay_ack.gap_ts = c->peer_gap_ts > c->peer_next ? c->peer_gap_ts : 0;
	if (peer_send(ctx, c, RSYNC_REPLAY_ACK, &m)) {
		c->peer_ack_ns = now;
		c->peer_gap_ts = 0;
		c->peer_since_ack = 0;
		c->peer_acks++;
	}
}

/* REPLAY_START and REPLAY_END are repeated until echoed: the same type,
 * epoch and payload, back to the predecessor's run. */
static void
echo(struct mgr_dp_ctx *ctx, struct sl_chain *c, const struct rsync_msg *m, uint8_t flags)
{
	struct rsync_msg e = *m;

	e.h.flags = flags;
	e.h.key_id = 0;
	(void)peer_send(ctx, c, m->h.type, &e);
}

static enum rsync_rx_reason
spare_control(struct mgr_dp_ctx *ctx, struct sl_chain *c, const struct rsync_msg *m, uint64_t now)
{
	const char *name = mgr.shm->chains[c->id].name;

	if (m->h.receiver_run != mgr.remote.run)
		return RSYNC_RX_STALE_RUN; /* recorded before this node restarted */
	switch (m->h.type) {
	case RSYNC_REPLAY_CANCEL:
		/* Given up: never take that epoch -- unless taken already (the
		 * echo lost): say so, and the predecessor follows. */
		if (c->peer_state != SL_PEER_SPARE && m->h.epoch == c->peer_epoch) {
			echo(ctx, c, &c->peer_takeover, 0);
			return RSYNC_RX_DUPLICATE;
		}
		c->peer_cancelled = RTE_MAX(c->peer_cancelled, m->h.epoch);
		return RSYNC_RX_OK;
	case RSYNC_REPLAY_START:
		if (c->peer_state != SL_PEER_SPARE) {
			if (m->h.epoch != c->peer_epoch)
				return RSYNC_RX_STALE_EPOCH;
			echo(ctx, c, m, 0); /* the echo was lost */
			return RSYNC_RX_DUPLICATE;
		}
		if (m->h.epoch <= c->peer_epoch || m->h.epoch <= c->peer_cancelled)
			return RSYNC_RX_STALE_EPOCH; /* a copy of one given up */
		/* Every NF of the chain there, held: else it cannot take the
		 * chain over yet (one is being relaunched) -- no answer: the
		 * predecessor repeats REPLAY_START every few ms, for up to its
		 * failover_timeout_ms.  (A refusal would end the failover, and
		 * nothing would start it again.) */
		for (uint16_t k = 0; k < mgr.shm->chains[c->id].len; k++)
			if (mgr_sl_step_slot(c->id, k) == NULL) {
				c->peer_not_ready++;
				return RSYNC_RX_OK;
			}
		c->peer_takeover = *m;
		c->peer_next = m->u.replay_start.after_ts + 1;
		c->peer_newest = m->u.replay_start.newest_ts;
		c->peer_gap_ts = 0;
		c->peer_ack_ns = 0;
		c->peer_takeover_ns = now;
		c->peer_takeovers++;
		__atomic_store_n(&c->peer_epoch, m->h.epoch, __ATOMIC_RELAXED);
		c->peer_state = SL_PEER_REPLAY;
		/* The NFs go: FENCE, LOAD (the newest epoch every NF closed). */
		__atomic_store_n(&mgr.shm->chains[c->id].sl_hold, 0, __ATOMIC_RELEASE);
		MGR_LOG(NOTICE, "chain '%s': taken over from the primary at epoch %u, the "
				"predecessor's log replayed after ts %" PRIu64,
			name, m->h.epoch, m->u.replay_start.after_ts);
		echo(ctx, c, m, 0);
		return RSYNC_RX_OK;
	case RSYNC_REPLAY_END:
		if (c->peer_state == SL_PEER_SPARE || m->h.epoch != c->peer_epoch)
			return RSYNC_RX_STALE_EPOCH;
		/* Echoed once the NFs run the chain (their state loaded, the
		 * held replay sent on): until then the predecessor keeps its
		 * log, and repeats REPLAY_END. */
		if (!c->started || (c->backlog && !c->backlog_ring) ||
		    SL_PHASE(sl_state(c)) != SL_RUNNING) {
			c->peer_end_early++;
			return RSYNC_RX_OK;
		}
		if (c->peer_state == SL_PEER_REPLAY) {
			c->peer_state = SL_PEER_ACTIVE;
			c->peer_end_ns = now;
		}
		echo(ctx, c, m, 0);
		return RSYNC_RX_OK;
	default:
		return RSYNC_RX_WRONG_ROLE;
	}
}

/* An RSync frame on the predecessor's link: its HEARTBEATs tell its run
 * and epoch; a spare takes REPLAY_* too. */
static void
control_in(struct mgr_dp_ctx *ctx, struct sl_chain *c, struct rte_mbuf *mb)
{
	struct rsync_msg m;
	enum rsync_rx_reason r;
	enum rsync_run_heard heard;

	r = rsync_decode(rte_pktmbuf_mtod(mb, const uint8_t *), rte_pktmbuf_data_len(mb), NULL, &m);
	if (r != RSYNC_RX_OK)
		goto out;
	if (m.h.chain != c->peer_id) {
		r = RSYNC_RX_UNKNOWN_CHAIN;
		goto out;
	}
	if (m.h.role != RSYNC_ROLE_PREDECESSOR) {
		r = RSYNC_RX_WRONG_ROLE; /* reflected back, or another peer's */
		goto out;
	}
	heard = rsync_peer_run_heard(&c->peer_pred_runs, m.h.sender_run);
	if (heard == RSYNC_RUN_REPLACED) {
		r = RSYNC_RX_PEER_RESTARTED; /* sent before it restarted */
		goto out;
	}
	__atomic_store_n(&c->peer_pred_run, c->peer_pred_runs.cur, __ATOMIC_RELAXED);
	if (heard == RSYNC_RUN_NEW) {
		/* A restarted predecessor: the epochs its run before gave up
		 * are not its to offer or not, and a replay of that run's log
		 * will never end -- what it lacks is lost (counted). */
		c->peer_cancelled = 0;
		c->peer_epoch_heard = false; /* (a primary takes its epoch again) */
		if (c->peer_lack_ts != 0) /* (its new run's log does not hold it) */
			lack_given_up(c, "the predecessor restarted");
		if (c->peer_state == SL_PEER_REPLAY) {
			if (c->peer_next <= c->peer_newest)
				c->peer_replay_lost += c->peer_newest - c->peer_next + 1;
			c->peer_state = SL_PEER_ACTIVE;
			c->peer_end_ns = mgr_now_ns();
			MGR_LOG(WARNING, "chain '%s': the predecessor restarted during the replay: %"
					 PRIu64 " replayed frames lost",
				mgr.shm->chains[c->id].name, c->peer_replay_lost);
		}
	}
	if (m.h.type == RSYNC_HEARTBEAT) {
		uint32_t mine = __atomic_load_n(&c->peer_epoch, __ATOMIC_RELAXED);

		c->peer_hb_rx++;
		if (c->peer_role == MGR_SL_PEER_PRIMARY) {
			/* The epoch it runs the chain in: the first heard; a
			 * newer one is the spare's, taken over -- this node
			 * runs the chain no more (sl_recover.c stops it). */
			if (!c->peer_epoch_heard) {
				c->peer_epoch_heard = true;
				__atomic_store_n(&c->peer_epoch, m.h.epoch, __ATOMIC_RELAXED);
			} else if (m.h.epoch > mine &&
				   !__atomic_load_n(&c->peer_superseded, __ATOMIC_RELAXED)) {
				__atomic_store_n(&c->peer_superseded, true, __ATOMIC_RELEASE);
				MGR_LOG(WARNING, "chain '%s': the predecessor runs it at epoch %u on "
						 "another node: this primary stops",
					mgr.shm->chains[c->id].name, m.h.epoch);
			}
		} else if (m.h.epoch > mine && c->peer_state == SL_PEER_SPARE) {
			/* (a spare heartbeats with the predecessor's epoch) */
			__atomic_store_n(&c->peer_epoch, m.h.epoch, __ATOMIC_RELAXED);
		}
		goto out;
	}
	r = c->peer_role == MGR_SL_PEER_SPARE ? spare_control(ctx, c, &m, mgr_now_ns())
					      : RSYNC_RX_WRONG_ROLE;
out:
	c->peer_ctl_rx[r]++;
	rte_pktmbuf_free(mb);
}

bool
mgr_sl_peer_ingress(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m, uint64_t *ts)
{
	struct sl_chain *c = &mgr_sl[mgr_sl_peer_port[port] - 1];
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	struct plog_shim sh;
	enum plog_shim_reason r;

	MGR_ASSERT_UNIT(MGR_UNIT_RX);
	r = plog_shim_parse(p, rte_pktmbuf_data_len(m), &sh);
	if (unlikely(r != PLOG_SHIM_OK)) {
		if (r == PLOG_SHIM_NOT_SHIM && rsync_is_frame(p, rte_pktmbuf_data_len(m))) {
			control_in(ctx, c, m);
			return true;
		}
		c->peer_bad[r]++; /* NOT_SHIM: unstamped input */
		rte_pktmbuf_free(m);
		return true;
	}
	if (c->peer_state == SL_PEER_SPARE) {
		c->peer_before_takeover++; /* (the predecessor sends none before the echo) */
		rte_pktmbuf_free(m);
		return true;
	}
	/* A taken-over chain's input, the replay first, whole and in order:
	 * a timestamp past the next one expected means one was lost on the
	 * way -- dropped, and the predecessor told, which sends again from
	 * the one lacking; so is one the root's log has no room for yet. */
	if (c->peer_state == SL_PEER_REPLAY) {
		uint64_t now = mgr_now_ns();

		/* (a replay after a failover given up and followed may start
		 * past what the log was trimmed to meanwhile: what the loaded
		 * state holds, at or below its timestamp, is no gap) */
		if (sh.ts > c->peer_next && c->skip_ts != 0 && sh.ts <= c->skip_ts + 1)
			c->peer_next = sh.ts;
		if (sh.ts != c->peer_next) {
			if (sh.ts > c->peer_next) {
				c->peer_gap_drops++;
				c->peer_gap_ts = sh.ts;
				replay_ack(ctx, c, now, false);
			} else {
				c->peer_stale++;
			}
			rte_pktmbuf_free(m);
			return true;
		}
		if (!mgr_sl_log_room(c)) {
			c->peer_room_drops++;
			c->peer_gap_ts = sh.ts + 1;
			replay_ack(ctx, c, now, false);
			rte_pktmbuf_free(m);
			return true;
		}
		c->peer_next++;
		if (c->peer_next == c->peer_newest + 1 || ++c->peer_since_ack >= PEER_ACK_EVERY)
			replay_ack(ctx, c, now, true);
	}
	/* A primary whose root dropped one (its log full): nothing after it
	 * until the predecessor sends it again -- the state, and so the
	 * trims, must never pass over it (go-back-N, as a spare's replay). */
	if (c->peer_role == MGR_SL_PEER_PRIMARY && unlikely(c->peer_lack_ts != 0)) {
		if (sh.ts == c->peer_lack_ts)
			__atomic_store_n(&c->peer_lack_ts, 0, __ATOMIC_RELEASE);
		else if (mgr_now_ns() - c->peer_lack_since_ns > PEER_LACK_GIVE_UP_NS)
			lack_given_up(c, "not sent again in time");
		else {
			c->peer_gap_drops++;
			rte_pktmbuf_free(m);
			return true;
		}
	}
	if (sh.ts <= c->peer_last_ts) {
		c->peer_stale++; /* reordered or duplicated on the link */
		rte_pktmbuf_free(m);
		return true;
	}
	__atomic_store_n(&c->peer_last_ts, sh.ts, __ATOMIC_RELAXED);
	plog_shim_strip(p, &sh);
	rte_pktmbuf_adj(m, PLOG_SHIM_LEN);
	*ts = sh.ts;
	c->peer_admitted++;
	return false;
}

/* RX unit, each poll: a spare's HEARTBEATs and acknowledgements. */
void
mgr_sl_peer_rx(struct mgr_dp_ctx *ctx, struct sl_chain *c, uint64_t now)
{
	if (c->peer_role == MGR_SL_PEER_PRIMARY)
		primary_nack(ctx, c, now);
	if (c->peer_role != MGR_SL_PEER_SPARE)
		return;
	heartbeat(ctx, c, now);
	if (c->peer_state == SL_PEER_REPLAY)
		replay_ack(ctx, c, now, false);
}

/* ---- the primary's (TX unit) ---- */

void
mgr_sl_peer_tx(struct mgr_dp_ctx *ctx, struct sl_chain *c, uint64_t now)
{
	struct rsync_msg m = {0};
	uint64_t lack, upto;

	if (c->peer_role != MGR_SL_PEER_PRIMARY)
		return;
	heartbeat(ctx, c, now);
	/* Up to the newest marker released: the store has every packet at
	 * or below it (not while the predecessor is not heard yet: a trim
	 * goes to its run) -- and never past a frame the root lacks (no marker
	 * should pass it either: a second guard). */
	lack = __atomic_load_n(&c->peer_lack_ts, __ATOMIC_ACQUIRE);
	upto = lack != 0 && c->peer_trim_ts >= lack ? lack - 1 : c->peer_trim_ts;
	if (upto <= c->peer_trimmed || now - c->peer_trim_ns < PEER_TRIM_NS ||
	    __atomic_load_n(&c->peer_pred_run, __ATOMIC_RELAXED) == 0)
		return;
	m.h.epoch = __atomic_load_n(&c->peer_epoch, __ATOMIC_RELAXED);
	m.u.trim.watermark = upto;
	if (peer_send(ctx, c, RSYNC_LOG_TRIM, &m)) {
		c->peer_trimmed = upto;
		c->peer_trim_ns = now;
		c->peer_trims++;
	}
}

/* ---- /onvm/store ---- */

void
mgr_sl_peer_telemetry(struct rte_tel_data *d, const struct sl_chain *c)
{
	static const char *const states[] = {"primary", "spare", "replay", "active"};
	uint64_t bad = 0, refused = 0;

	for (int r = 1; r < PLOG_SHIM_REASON_MAX; r++)
		bad += c->peer_bad[r];
	for (int r = 1; r < RSYNC_RX_REASON_MAX; r++)
		refused += c->peer_ctl_rx[r];
	rte_tel_data_add_dict_string(d, "peer_state",
				     c->peer_fenced ? "fenced" : states[c->peer_state]);
	rte_tel_data_add_dict_uint(d, "peer_epoch", c->peer_epoch);
	rte_tel_data_add_dict_uint(d, "peer_pred_run", c->peer_pred_run);
	rte_tel_data_add_dict_uint(d, "peer_admitted", c->peer_admitted);
	rte_tel_data_add_dict_uint(d, "peer_stale", c->peer_stale);
	rte_tel_data_add_dict_uint(d, "peer_unstamped", c->peer_bad[PLOG_SHIM_NOT_SHIM]);
	rte_tel_data_add_dict_uint(d, "peer_bad_shim", bad);
	rte_tel_data_add_dict_uint(d, "peer_ctl_ok", c->peer_ctl_rx[RSYNC_RX_OK]);
	rte_tel_data_add_dict_uint(d, "peer_ctl_refused", refused);
	rte_tel_data_add_dict_uint(d, "peer_heartbeats_rx", c->peer_hb_rx);
	rte_tel_data_add_dict_uint(d, "peer_sent", c->peer_sent);
	rte_tel_data_add_dict_uint(d, "peer_send_fail", c->peer_send_fail);
	rte_tel_data_add_dict_uint(d, "peer_trims", c->peer_trims);
	rte_tel_data_add_dict_uint(d, "peer_trimmed_ts", c->peer_trimmed);
	rte_tel_data_add_dict_uint(d, "peer_before_takeover", c->peer_before_takeover);
	rte_tel_data_add_dict_uint(d, "peer_takeovers", c->peer_takeovers);
	rte_tel_data_add_dict_uint(d, "peer_gap_drops", c->peer_gap_drops);
	rte_tel_data_add_dict_uint(d, "peer_room_drops", c->peer_room_drops);
	rte_tel_data_add_dict_uint(d, "peer_acks", c->peer_acks);
	rte_tel_data_add_dict_uint(d, "peer_covered", c->replay_covered);
	rte_tel_data_add_dict_uint(d, "peer_not_ready", c->peer_not_ready);
	rte_tel_data_add_dict_uint(d, "peer_end_early", c->peer_end_early);
	rte_tel_data_add_dict_uint(d, "peer_replay_lost", c->peer_replay_lost);
	rte_tel_data_add_dict_uint(d, "peer_lacks", c->peer_lacks);
	rte_tel_data_add_dict_uint(d, "peer_lacks_given_up", c->peer_lacks_given_up);
	if (c->peer_takeover_ns != 0 && c->peer_end_ns >= c->peer_takeover_ns)
		rte_tel_data_add_dict_uint(d, "peer_replay_us",
					   (c->peer_end_ns - c->peer_takeover_ns) / 1000);
}
