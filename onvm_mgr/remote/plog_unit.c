/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * plog_unit.c -- the predecessor role of remote resiliency on this node
 * (library: pkt_logger/; design: docs/design/remote.md, "The manager units").
 *
 * The TX unit owns every log: it stamps each packet it sends out of a
 * remote chain's primary_port (a 0x88B5 shim with the next timestamp),
 * copies it into the log and sends it -- a full log refuses the packet,
 * counted, and never drops an untrimmed entry.  A failover (an operator's
 * /onvm/remote/failover, or the configured BFD session going Down) raises
 * the chain's epoch and, still on the TX unit, sends REPLAY_START to the
 * standby -- repeated every REPLAY_CTL_RETRANS_NS until the standby echoes
 * it, for a replayed packet that reached the standby before it took over
 * would be lost -- then replays the log from the trim point in bursts, then
 * sends REPLAY_END (repeated likewise until echoed); input arriving
 * meanwhile is stamped into the log only, so the cursor sends it in order.
 * From then on the standby link is the chain's output.
 *
 * A failover can be given up.  REPLAY_START offers the standby a new epoch
 * (the chain's epoch stays the primary's until the standby takes it); a
 * standby that is not in sync refuses it, and one that does not answer
 * within failover_timeout_ms may be gone: either way the predecessor goes
 * back to the primary, sending it from the log what came in meanwhile,
 * tells the standby REPLAY_CANCEL (that epoch is never to be taken over:
 * a copy of the REPLAY_START delayed on the way changes nothing), and may
 * fail over again later, at a newer epoch.  Should the standby have taken
 * over after all (its answer lost), it says so when the cancel reaches it,
 * and the predecessor follows it.
 *
 * The replay is reliable: the standby admits the replayed range (after_ts,
 * newest_ts] of REPLAY_START only whole and in order, and acknowledges it
 * (REPLAY_ACK: every timestamp below next_ts received).  A gap it reports,
 * or no progress for REPLAY_RTO_NS, sends the log again from the first
 * timestamp it lacks (go-back-N, the log still holds it); no more than
 * REPLAY_WINDOW entries go past the acknowledged one, and REPLAY_END waits
 * until the whole range is acknowledged.  A replayed packet the old primary
 * may have processed and released is never lost on the way: the standby's
 * state would otherwise fall behind what the outside world saw.
 *
 * The log is also the output's buffer.  A stamped packet the output port
 * does not take (its buffer full: a slow link, a link that is down) is not
 * dropped: the chain falls "behind", and the same cursor sends the log's
 * entries from that packet on, as the port takes them, while new input is
 * logged only -- so a held port never makes input overflow the port ring
 * before it is stamped and logged (the ring keeps draining into the log),
 * and a failover replays all of it.  Only a full log refuses input.
 * LOG_TRIMs from the primary come off the RX unit (mgr_plog_rx) through a
 * ring to the TX unit, which applies those of the chain's current epoch
 * (and key), addressed to this run, to the log.
 *
 * Restarts.  Timestamps start at the wall clock in nanoseconds and count
 * up from there, so a restarted predecessor stamps above everything its
 * run before did (unless it stamped more than a packet a nanosecond, or
 * the clock stepped back); the primary's HEARTBEATs name the newest
 * timestamp it admitted, and the next one stamped is above it whatever the
 * clock says.  Every PEER_HEARTBEAT_NS a HEARTBEAT tells the primary and
 * the standby this run: the primary learns that a restarted predecessor
 * lost its log (rsync_primary.h).  The primary's and the standby's
 * HEARTBEATs tell their runs: REPLAY_START is addressed to the standby's,
 * and a primary heard with a new run restarted and lost its NFs' state --
 * the chain fails over to the standby, which has it ("primary_restart").
 *
 * Other threads only set the failover request (atomic) and read counters
 * (plain 64-bit loads: telemetry may see a value one packet old).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "mgr.h"
#include "plog_log.h"
#include "plog_shim.h"
#include "rsync_wire.h"

enum plog_state {
	PL_PRIMARY = 0, /* stamped packets go to the primary */
	PL_STARTING,	/* REPLAY_START sent, not echoed yet: input is logged only */
	PL_REPLAY,	/* the log is being replayed to the standby */
	PL_STANDBY,	/* stamped packets go to the standby */
};

static const char *const state_names[] = {"primary", "starting", "replaying", "standby"};

#define REPLAY_CTL_RETRANS_NS (5 * 1000 * 1000ull) /* REPLAY_START/END not echoed: again */
#define PEER_HEARTBEAT_NS (20 * 1000 * 1000ull)	   /* to the primary and the standby */
#define REPLAY_RTO_NS (10 * 1000 * 1000ull)	   /* no acknowledged progress: send again */
#define REPLAY_REWIND_GAP_NS (1000 * 1000ull)	   /* gaps reported within it: one rewind */
#define REPLAY_WINDOW 2048			   /* entries sent past the acknowledged */
#define CANCEL_SENDS 20				   /* REPLAY_CANCELs sent, one every retrans */
#define CURSOR_BURSTS 8 /* bursts the log's cursor may send a poll */
#define PLOG_STARTS_KEPT 8 /* REPLAY_STARTs of past attempts a takeover may follow */
/* A re-protection needs the new standby heard this recently on the old
 * primary's link (its HEARTBEATs come every 20 ms). */
#define PROTECT_STANDBY_HEARD_NS (200 * 1000 * 1000ull)

struct plog_chain {
	const struct mgr_remote_cfg *cfg;
	struct plog_log log;
	void *mem;
	struct rsync_auth *auth;
	/* The links to the primary and the standby: the configured
	 * primary_port and standby_port, swapped by each re-protection (the
	 * node that took over is the primary, the other the new standby). */
	int pri_port, sby_port;
	bool swapped;
	uint8_t src_mac[6], dst_mac[6];	      /* the standby link's, and the standby's */
	uint8_t pri_src_mac[6], pri_mac[6]; /* the primary link's, and the primary's */
	/* Re-protection (/onvm/remote/protect): asked (atomic), PROTECT sent
	 * to the node running the chain and not echoed yet, when. */
	uint32_t protect_req;
	bool protect_pending;
	uint64_t protect_sent_ns, protect_start_ns, protected_ns;
	uint64_t protects, protects_refused, protects_superseded, triggers_of_standby;
	uint64_t protects_unanswered; /* ... for failover_timeout_ms (said once each) */
	/* a standby's HEARTBEAT heard last on the primary's link: the node
	 * that would be the new standby of a re-protection (atomic) */
	uint64_t other_standby_ns;
	uint64_t sides_adopted; /* a swap this run did not make, followed */
	/* the attempt that superseded a pending re-protection: given up, the
	 * re-protection is pending again (0: none) */
	uint32_t protect_superseded_by;
	uint32_t other_standby_epoch; /* ... that standby's epoch */
	/* a node heard running the chain at this run's epoch, where this run
	 * sends: where the chain runs is known (atomic; the agent waits for it
	 * after a restart) */
	bool settled;
	uint64_t last_ts; /* the last timestamp given */
	uint32_t attempt; /* the epoch offered the standby (PL_STARTING), or last given up */
	struct plog_cursor resume; /* where the primary's output stopped for a failover */
	uint32_t cancels_left;	   /* REPLAY_CANCELs still to send for `attempt` */
	uint64_t failovers_given_up, failovers_refused, failovers_followed;
	uint64_t epochs_adopted; /* a newer epoch the standby runs, heard after a restart */
	uint64_t first_ts; /* the first this run gave */
	struct rsync_peer_runs primary_run, standby_run; /* as heard */
	uint64_t hb_ns;			   /* HEARTBEATs last sent to them */
	uint32_t epoch;
	enum plog_state state;
	struct plog_cursor cur; /* the replay's, or a chain behind's, next entry */
	bool behind;		/* the output port refused: cur sends from the log */
	uint32_t failover_req; /* atomic: 1 when another thread asks for a failover */
	/* atomic: a cause heard while a failover was under way (a primary
	 * restart, BFD Down): asked again if that one is given up */
	const char *failover_again;
	uint64_t failovers_asked_again;
	const char *trigger;   /* what asked first: "bfd", "link", "operator", ... */
	/* failover_by "agent": a trigger only asks (atomic: the last one, NULL
	 * once a failover starts), and the failover starts on the agent's
	 * /onvm/remote/failover,CHAIN,EPOCH at the epoch the cluster agreed
	 * (atomic: 0 when none is named) */
	const char *wanted;
	uint64_t wanted_ns, wanted_count;
	uint32_t epoch_asked;
	struct rte_ring *ctl;  /* RSync frames from the primary: RX unit -> TX unit */
	/* counters */
	uint64_t stamped;
	uint64_t refused_full;	   /* dropped: the log is full */
	uint64_t refused_frame;	   /* dropped: not a frame that can be shimmed */
	uint64_t replayed;
	uint64_t behind_events;	   /* the output port refused a stamped packet */
	uint64_t resent;	   /* sent from the log after such a refusal */
	uint64_t replay_alloc_fail; /* replay retried: no mbuf */
	uint64_t ctrl_sent;
	uint64_t failovers;
	uint64_t failover_req_ns, replay_start_ns, replay_end_ns;
	uint64_t start_echo_ns;	   /* REPLAY_START echoed: the replay begins */
	struct rsync_msg end_msg; /* repeated until echoed (REPLAY_START: offered[]) */
	/* the REPLAY_STARTs of this run's last attempts, given up ones too
	 * (at attempt % PLOG_STARTS_KEPT): the standby may have taken any of
	 * those epochs, its echo lost */
	struct {
		uint32_t attempt;
		struct rsync_msg msg;
	} offered[PLOG_STARTS_KEPT];
	uint64_t ctl_sent_ns;	   /* REPLAY_START/END last sent */
	bool end_echoed;
	/* REPLAY_END sent, not echoed yet, for at most failover_timeout_ms:
	 * the log is kept, for the gaps the standby may still report */
	bool log_kept;
	uint64_t ctl_retrans;	   /* REPLAY_START/END sent again */
	uint64_t replay_from_ts, replay_last_ts;
	uint64_t replay_sent_max; /* the newest timestamp sent under the replay */
	/* The reliable replay: its range's end, the first timestamp the
	 * standby lacks (REPLAY_ACK), when that last moved, the last rewind. */
	uint64_t replay_newest, replay_acked, replay_progress_ns, replay_rewind_ns;
	uint64_t replay_rewinds, replay_timeouts, replay_acks;
	uint64_t trims;		   /* LOG_TRIMs applied */
	uint64_t primary_resends;  /* the log sent again from what the primary lacked */
	uint64_t trims_held;	   /* LOG_TRIMs ignored: a failover was under way */
	uint64_t ctl_ring_full;	   /* RSync frames dropped: the ring was full */
	uint64_t primary_restarts, standby_restarts; /* new runs heard */
	uint64_t ts_raised;	   /* timestamps raised past what the primary admitted */
	uint64_t ctl_rx[RSYNC_RX_REASON_MAX]; /* RSync frames by what became of them */
};

#define PLOG_CTL_RING 256

static struct plog_chain chains[MGR_CFG_MAX_REMOTE];
static int nchains;

/* The first request of a failover wins; later ones (BFD after the link)
 * change nothing -- unless that failover is given up: a cause that came
 * while it was under way (the primary restarted, BFD went Down) is not
 * heard again, so it is kept and asks once more then (give_up_failover). */
static void
request_failover(struct plog_chain *c, const char *why, uint64_t now_ns)
{
	if (!__atomic_exchange_n(&c->failover_req, 1, __ATOMIC_ACQ_REL)) {
		c->failover_req_ns = now_ns;
		c->trigger = why;
	} else {
		__atomic_store_n(&c->failover_again, why, __ATOMIC_RELEASE);
	}
}

/* A failover's cause on this node: BFD, the link, a restarted primary.
 * With failover_by "agent" it is the agent's to decide, after the cluster
 * agreed on the new roles (docs/design/cluster.md): only asked here. */
static void
failover_cause(struct plog_chain *c, const char *why, uint64_t now_ns)
{
	/* The link watch is the configured primary link's: since a
	 * re-protection, the standby's -- its loss is no reason to fail over
	 * to it.  (BFD: on_bfd_event() picks the primary link's session.) */
	if (__atomic_load_n(&c->swapped, __ATOMIC_ACQUIRE) && strcmp(why, "link") == 0) {
		__atomic_fetch_add(&c->triggers_of_standby, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!c->cfg->failover_by_agent) {
		request_failover(c, why, now_ns);
		return;
	}
	if (__atomic_load_n(&c->failover_req, __ATOMIC_ACQUIRE)) {
		/* one under way: asked again should it be given up */
		__atomic_store_n(&c->failover_again, why, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&c->wanted_ns, now_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&c->wanted, why, __ATOMIC_RELEASE);
	__atomic_fetch_add(&c->wanted_count, 1, __ATOMIC_RELAXED);
}

static void
on_bfd_event(const struct bfd_event *ev, void *arg)
{
	(void)arg;
	if (ev->new_state != BFD_STATE_DOWN || ev->old_state != BFD_STATE_UP)
		return;
	for (int i = 0; i < nchains; i++) {
		struct plog_chain *c = &chains[i];
		/* the session on the primary's link: the configured one's, or
		 * the standby link's since a re-protection swapped them */
		const bool swapped = __atomic_load_n(&c->swapped, __ATOMIC_ACQUIRE);
		const int primary_bfd = swapped ? c->cfg->standby_bfd : c->cfg->bfd;

		if (primary_bfd == (int)ev->session)
			failover_cause(c, "bfd", ev->time_ns);
		else if ((swapped ? c->cfg->bfd : c->cfg->standby_bfd) == (int)ev->session)
			__atomic_fetch_add(&c->triggers_of_standby, 1, __ATOMIC_RELAXED);
	}
}

void
mgr_plog_link_down(int remote)
{
	for (int i = 0; i < nchains; i++)
		if (chains[i].cfg == &mgr.cfg.remote[remote])
			failover_cause(&chains[i], "link", mgr_now_ns());
}

int
mgr_plog_init(void)
{
	for (int r = 0; r < mgr.cfg.nremote; r++) {
		const struct mgr_remote_cfg *rc = &mgr.cfg.remote[r];
		struct plog_chain *c;
		struct rte_ether_addr mac;
		size_t bytes;

		if (rc->role != MGR_REMOTE_PREDECESSOR)
			continue;
		c = &chains[nchains];
		c->cfg = rc;
		c->epoch = rc->epoch;
		c->pri_port = rc->primary_port;
		c->sby_port = rc->standby_port;
		{
			struct timespec now;

			/* Above anything a run before this one stamped. */
			clock_gettime(CLOCK_REALTIME, &now);
			c->last_ts = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
			c->first_ts = c->last_ts + 1;
		}
		bytes = (size_t)rc->log_mb << 20;
		c->mem = rte_malloc("onvm_plog", bytes, 64);
		if (c->mem == NULL || plog_log_init(&c->log, c->mem, bytes, rc->log_packets) < 0) {
			MGR_LOG(ERR, "remote chain %s: no memory for a %u MB packet log", rc->name,
				rc->log_mb);
			return -ENOMEM;
		}
		if (rc->key_len > 0 && (c->auth = rsync_auth_new(rc->key, rc->key_len,
								  rc->key_id)) == NULL) {
			MGR_LOG(ERR, "remote chain %s: cannot set up its HMAC key", rc->name);
			return -EINVAL;
		}
		if (rte_eth_macaddr_get(rc->standby_port, &mac) == 0)
			memcpy(c->src_mac, mac.addr_bytes, 6);
		if (rc->has_mac[MGR_PEER_STANDBY])
			memcpy(c->dst_mac, rc->mac[MGR_PEER_STANDBY], 6);
		else
			memset(c->dst_mac, 0xff, 6);
		if (rte_eth_macaddr_get(rc->primary_port, &mac) == 0)
			memcpy(c->pri_src_mac, mac.addr_bytes, 6);
		if (rc->has_mac[MGR_PEER_PRIMARY])
			memcpy(c->pri_mac, rc->mac[MGR_PEER_PRIMARY], 6);
		else
			memset(c->pri_mac, 0xff, 6);
		{
			char name[RTE_RING_NAMESIZE];

			snprintf(name, sizeof(name), "onvm_plog_ctl%d", nchains);
			c->ctl = rte_ring_create(name, PLOG_CTL_RING, rte_socket_id(),
						 RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (c->ctl == NULL) {
				MGR_LOG(ERR, "remote chain %s: no control ring", rc->name);
				return -ENOMEM;
			}
		}
		mgr.remote.plog_port[rc->primary_port] = (uint8_t)(nchains + 1);
		mgr.remote.plog_sb_port[rc->standby_port] = (uint8_t)(nchains + 1);
		nchains++;
		MGR_LOG(INFO, "remote chain %s (id %u): predecessor, stamping and logging on port "
			      "%d, standby on port %d, log %u packets / %u MB",
			rc->name, rc->id, rc->primary_port, rc->standby_port, rc->log_packets,
			rc->log_mb);
	}
	for (int i = 0; i < nchains; i++)
		if (chains[i].cfg->bfd >= 0 || chains[i].cfg->standby_bfd >= 0)
			return mgr_bfd_subscribe(on_bfd_event, NULL);
	return 0;
}

/* The port a chain's output goes to now. */
static inline uint16_t
out_port_of(const struct plog_chain *c)
{
	return (uint16_t)(c->state == PL_PRIMARY ? c->pri_port : c->sby_port);
}

void
mgr_plog_on_send(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m)
{
	MGR_ASSERT_UNIT(MGR_UNIT_TX);
	/* A frame of several segments (jumbo) is logged from a gathered copy;
	 * the TX unit is the only user of this buffer. */
	static uint8_t gather[PLOG_LOG_MAX_FRAME];
	struct plog_chain *c = &chains[mgr.remote.plog_port[port] - 1];
	uint64_t ts = c->last_ts + 1;
	struct plog_cursor at;
	const uint8_t *frame;
	uint8_t *p;

	/* The shim goes into the first segment's headroom, after the MACs. */
	if (rte_pktmbuf_data_len(m) < PLOG_ETH_LEN ||
	    rte_pktmbuf_pkt_len(m) + PLOG_SHIM_LEN > PLOG_LOG_MAX_FRAME ||
	    (p = (uint8_t *)rte_pktmbuf_prepend(m, PLOG_SHIM_LEN)) == NULL ||
	    plog_shim_push(p, rte_pktmbuf_data_len(m), ts, 0) != 0) {
		c->refused_frame++;
		rte_pktmbuf_free(m);
		return;
	}
	frame = rte_pktmbuf_read(m, 0, rte_pktmbuf_pkt_len(m), gather);
	plog_log_seek_end(&c->log, &at); /* where this entry goes */
	if (plog_log_append(&c->log, ts, frame, rte_pktmbuf_pkt_len(m)) != 0) {
		/* Never evict: the new packet is the one that goes. */
		c->refused_full++;
		rte_pktmbuf_free(m);
		return;
	}
	c->last_ts = ts;
	c->stamped++;
	if ((c->state == PL_PRIMARY || c->state == PL_STANDBY) && !c->behind) {
		if (likely(mgr_dp_port_try(ctx, m, out_port_of(c)))) {
			/* After a failover nobody trims: the new active has no
			 * standby to fail over to, so the log only buffers what
			 * the port has not taken yet -- once the REPLAY_END is
			 * echoed (until then the standby may report a gap). */
			if (c->state == PL_STANDBY && !c->log_kept)
				plog_log_trim(&c->log, ts);
			return;
		}
		/* The port takes nothing now: send from the log, from this
		 * entry on, when it does (mgr_plog_tx). */
		c->behind = true;
		c->behind_events++;
		c->cur = at;
	}
	/* Behind, or being replayed: the cursor sends it, in order. */
	rte_pktmbuf_free(m);
}

bool
mgr_plog_rx(uint16_t port, struct rte_mbuf *m)
{
	struct plog_chain *c = &chains[(mgr.remote.plog_port[port] ? mgr.remote.plog_port[port]
							 : mgr.remote.plog_sb_port[port]) - 1];
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

	MGR_ASSERT_UNIT(MGR_UNIT_RX);
	if (rte_pktmbuf_data_len(m) < RSYNC_ETH_LEN || p[12] != (RSYNC_ETHERTYPE >> 8) ||
	    p[13] != (RSYNC_ETHERTYPE & 0xff))
		return false;
	/* The log's owner (the TX unit) applies it. */
	if (rte_ring_sp_enqueue(c->ctl, m) != 0) {
		c->ctl_ring_full++;
		rte_pktmbuf_free(m);
	}
	return true;
}

/* The failover is given up: back to the primary, which the log sends from
 * where it stopped for the failover; the standby is told the epoch offered
 * is never to be taken (REPLAY_CANCEL, CANCEL_SENDS times); another
 * failover may be asked for. */
static void
give_up_failover(struct plog_chain *c, const char *why)
{
	const char *again;

	c->state = PL_PRIMARY;
	c->cur = c->resume;
	c->behind = true;
	c->cancels_left = CANCEL_SENDS;
	c->failovers_given_up++;
	if (c->protect_superseded_by != 0 && c->protect_superseded_by == c->attempt) {
		/* it had superseded a re-protection: the node is primary still,
		 * PROTECT unanswered -- asked again, the log kept meanwhile */
		c->protect_pending = true;
		c->protect_sent_ns = 0;
	}
	c->protect_superseded_by = 0;
	__atomic_store_n(&c->failover_req, 0, __ATOMIC_RELEASE);
	MGR_LOG(WARNING, "remote chain %s: failover to epoch %u given up (%s); the primary goes "
		"on at epoch %u", c->cfg->name, c->attempt, why, c->epoch);
	again = __atomic_exchange_n(&c->failover_again, NULL, __ATOMIC_ACQ_REL);
	if (again != NULL) {
		c->failovers_asked_again++;
		MGR_LOG(WARNING, "remote chain %s: %s while it was under way: failing over again",
			c->cfg->name, again);
		failover_cause(c, again, mgr_now_ns());
	}
}

/* The REPLAY_START this run sent for attempt `epoch`, if still kept. */
static const struct rsync_msg *
offered_start(const struct plog_chain *c, uint32_t epoch)
{
	return c->offered[epoch % PLOG_STARTS_KEPT].attempt == epoch
		       ? &c->offered[epoch % PLOG_STARTS_KEPT].msg
		       : NULL;
}

/* The replay of REPLAY_START `start`'s range (after_ts, newest_ts]: the
 * log goes to the standby from the cursor (on its first entry), none of it
 * acknowledged yet. */
static void
replay_range_begin(struct plog_chain *c, const struct rsync_msg *start)
{
	c->behind = false;
	c->replay_from_ts = start->u.replay_start.after_ts;
	c->replay_sent_max = start->u.replay_start.after_ts;
	c->replay_newest = start->u.replay_start.newest_ts;
	c->replay_acked = start->u.replay_start.after_ts + 1;
	c->replay_progress_ns = c->replay_rewind_ns = 0;
}

/* The standby took `epoch`, an epoch offered and given up: it runs the
 * chain now.  The replay of REPLAY_START is sent again from its start. */
static void
follow_takeover(struct plog_chain *c, uint32_t epoch, const struct rsync_msg *start)
{
	c->epoch = epoch;
	c->cancels_left = 0;
	plog_log_seek(&c->log, &c->cur, start->u.replay_start.after_ts);
	replay_range_begin(c, start);
	c->state = PL_REPLAY;
	c->start_echo_ns = mgr_now_ns();
	MGR_LOG(WARNING, "remote chain %s: the standby took over at epoch %u after all: replaying "
		"to it", c->cfg->name, c->epoch);
}

/* The standby's HEARTBEAT names an epoch newer than this node's: it runs
 * the chain.  An epoch this node offered and gave up (its echo lost;
 * later attempts may have been made since, and given up too -- the last
 * PLOG_STARTS_KEPT are kept): follow it, replaying.  One this run never offered: the node restarted after a
 * failover, its configured epoch stale and the log of the run before gone
 * -- adopt it and send to the standby from this run's log on (what went
 * to the old primary is lost with it). */
static void
follow_newer_epoch(struct plog_chain *c, uint32_t epoch)
{
	if (c->state != PL_PRIMARY || epoch <= c->epoch)
		return;
	if (offered_start(c, epoch) != NULL) {
		c->failovers_followed++;
		follow_takeover(c, epoch, offered_start(c, epoch));
		return;
	}
	if (epoch <= c->attempt)
		MGR_LOG(ERR, "remote chain %s: the standby runs epoch %u, an attempt of this run "
			"too old to follow (%u since): sending to it without a replay",
			c->cfg->name, epoch, c->attempt - epoch);
	c->epoch = epoch;
	c->attempt = RTE_MAX(c->attempt, epoch);
	c->cancels_left = 0;
	c->state = PL_STANDBY;
	c->end_echoed = true; /* no replay: nothing to end */
	plog_log_seek(&c->log, &c->cur, c->first_ts - 1);
	c->behind = true;
	c->epochs_adopted++;
	MGR_LOG(WARNING, "remote chain %s: the standby runs the chain at epoch %u: sending to it",
		c->cfg->name, epoch);
}

/* Send the log again from timestamp `ts` on (go-back-N): the standby lacks
 * it, and drops what comes after it until it has it. */
static void
replay_rewind(struct plog_chain *c, uint64_t ts, uint64_t now)
{
	plog_log_seek(&c->log, &c->cur, ts - 1);
	c->replay_rewind_ns = now;
	c->replay_progress_ns = now;
	c->replay_rewinds++;
}

/* What a REPLAY_ACK says the standby has: no longer the log's to keep (a
 * replay that input keeps going must not fill it). */
static void
ack_progress(struct plog_chain *c, const struct rsync_replay_ack *a, uint64_t now)
{
	c->replay_acks++;
	if (a->next_ts > c->replay_acked) {
		c->replay_acked = a->next_ts;
		c->replay_progress_ns = now;
		plog_log_trim(&c->log, c->replay_acked - 1);
	}
}

/* The standby's REPLAY_ACK: progress, and a gap to fill. */
static void
replay_acked(struct plog_chain *c, const struct rsync_replay_ack *a, uint64_t now)
{
	struct plog_entry e;

	ack_progress(c, a, now);
	/* A gap: send again from what it lacks -- once for the frames of one
	 * loss (those after it are reported too, while the rewound ones are
	 * on their way).  An older REPLAY_ACK overtaken by a newer one asks
	 * for less than that says arrived: from the newest word on. */
	if (a->gap_ts != 0 && c->replay_acked <= c->replay_sent_max &&
	    now - c->replay_rewind_ns >= REPLAY_REWIND_GAP_NS &&
	    (plog_log_peek(&c->log, &c->cur, &e) == 0 || e.ts > c->replay_acked))
		replay_rewind(c, c->replay_acked, now);
}

/* Stamp above `admitted`, the newest timestamp the node running the chain
 * admitted: the log's entries at or below it go (dropped there as stale). */
static void
stamp_above(struct plog_chain *c, uint64_t admitted)
{
	if (admitted <= c->last_ts)
		return;
	c->last_ts = admitted;
	plog_log_trim(&c->log, c->last_ts);
	c->ts_raised++;
}

/* A REPLAY_ACK while REPLAY_END waits for its echo: the standby, still
 * replaying until REPLAY_END reaches it, takes only the next timestamp, so
 * a frame lost on the way (REPLAY_END lost too, or not there yet) is one
 * it reports -- sent again from the log, kept until the echo. */
static void
end_unechoed_acked(struct plog_chain *c, const struct rsync_replay_ack *a, uint64_t now)
{
	ack_progress(c, a, now);
	if (a->gap_ts != 0 && now - c->replay_rewind_ns >= REPLAY_REWIND_GAP_NS) {
		replay_rewind(c, c->replay_acked, now);
		c->behind = true; /* the cursor sends, from the gap on */
	}
}

/* The primary (a stateless chain's, sl_peer.c) could not admit `ts` (its
 * root's log full) and takes nothing after it: send the log from it again
 * (it is untrimmed: the primary trims only up to markers before it) --
 * unless the cursor already sends from it or before. */
static enum rsync_rx_reason
primary_lacks(struct plog_chain *c, uint64_t ts)
{
	struct plog_entry e;

	if (ts > c->last_ts)
		return RSYNC_RX_BAD_FIELD; /* (never stamped here) */
	if (c->behind && plog_log_peek(&c->log, &c->cur, &e) == 1 && e.ts <= ts)
		return RSYNC_RX_DUPLICATE; /* on its way */
	plog_log_seek(&c->log, &c->cur, ts - 1);
	c->behind = true;
	c->primary_resends++;
	return RSYNC_RX_OK;
}

/* The log no longer kept for the standby's gap reports (REPLAY_END echoed,
 * or unanswered for failover_timeout_ms: a standby that died or restarted
 * must not have the log fill and refuse the input): only a buffer for the
 * port from now on. */
static void
log_keep_end(struct plog_chain *c)
{
	struct plog_entry e;

	if (!c->log_kept)
		return;
	c->log_kept = false;
	if (c->behind && plog_log_peek(&c->log, &c->cur, &e) != 0)
		plog_log_trim(&c->log, e.ts - 1); /* the rest is sent from the cursor */
	else
		plog_log_trim(&c->log, c->last_ts);
}

/* The standby echoed REPLAY_END: it runs the chain, and takes the input as
 * it comes. */
static void
end_echoed(struct plog_chain *c)
{
	c->end_echoed = true;
	log_keep_end(c);
}

/* The primary and the standby trade places: links, MACs, runs as heard
 * (the new standby's is not known yet). */
static void
swap_sides(struct plog_chain *c)
{
	uint8_t mac[6];
	int port = c->pri_port;

	c->pri_port = c->sby_port;
	c->sby_port = port;
	memcpy(mac, c->src_mac, 6);
	memcpy(c->src_mac, c->pri_src_mac, 6);
	memcpy(c->pri_src_mac, mac, 6);
	memcpy(mac, c->dst_mac, 6);
	memcpy(c->dst_mac, c->pri_mac, 6);
	memcpy(c->pri_mac, mac, 6);
	c->primary_run = c->standby_run;
	memset(&c->standby_run, 0, sizeof(c->standby_run));
	__atomic_store_n(&c->swapped, !c->swapped, __ATOMIC_RELEASE);
}

/* A re-protection the node refused (it is not set up to be primary: it
 * did not become one): the chain goes on there unprotected, the log a
 * buffer again.  An unanswered one is never given up so: the node may
 * have become primary, its echoes lost, and then every frame since the
 * swap must stay in the log until its LOG_TRIM -- PROTECT is repeated
 * until it answers (or a failover supersedes it). */
static void
protect_refused(struct plog_chain *c)
{
	swap_sides(c);
	c->protect_pending = false;
	c->state = PL_STANDBY;
	c->end_echoed = true;
	c->log_kept = true;
	log_keep_end(c);
	c->protects_refused++;
	/* (a failover asked meanwhile had no standby in sync to go to) */
	__atomic_store_n(&c->failover_req, 0, __ATOMIC_RELEASE);
	MGR_LOG(WARNING, "remote chain %s: re-protection refused (the node running the chain "
		"is not set up with \"reprotect\"): it runs on unprotected at epoch %u",
		c->cfg->name, c->epoch);
}

/*
 * A HEARTBEAT of the other role than the link's (the link's role is
 * refused for every other type).  Either the sides are not what this run
 * takes them for:
 *   - a standby on the primary's link: the node there runs a standby's
 *     configuration -- the new standby of a re-protection to come (heard:
 *     other_standby_ns), or the primary restarted so, its state gone (a
 *     new run: a failover cause, as a restarted primary's);
 *   - a primary on the standby's link at a newer epoch: a re-protection
 *     this run did not make (it restarted since) swapped them -- followed,
 *     as a restarted predecessor follows a standby that took over: the log
 *     of this run, sent to the other node, goes to that primary.
 */
static enum rsync_rx_reason
crossed_heartbeat(struct plog_chain *c, const struct rsync_msg *m, bool from_primary)
{
	if (from_primary && m->h.role == RSYNC_ROLE_STANDBY) {
		enum rsync_run_heard heard = rsync_peer_run_heard(&c->primary_run,
								  m->h.sender_run);

		if (heard == RSYNC_RUN_REPLACED)
			return RSYNC_RX_PEER_RESTARTED;
		c->other_standby_epoch = m->h.epoch;
		__atomic_store_n(&c->other_standby_ns, mgr_now_ns(), __ATOMIC_RELEASE);
		if (heard == RSYNC_RUN_NEW) {
			c->primary_restarts++;
			if (c->state == PL_PRIMARY || c->state == PL_STARTING)
				failover_cause(c, "primary_restart", mgr_now_ns());
		}
		return RSYNC_RX_OK;
	}
	return RSYNC_RX_WRONG_ROLE;
}

/*
 * A node that runs the chain (RSYNC_F_RUNNING: a primary not fenced, or a
 * standby that took over) heard at a newer epoch than this run's, which
 * sends to its primary: the chain moved while this node was down (a
 * failover, a re-protection, maybe several), and this run's configured
 * sides and epoch are stale.  Followed: the node's link becomes the
 * primary's (a primary) or the standby's that runs it (a standby that
 * took over), the sides swapped if need be; the epoch taken; this run's
 * log sent to it from the start (it went elsewhere).  Nodes that do not
 * run the chain -- an empty standby placed since, a fenced primary, both
 * possibly at newer epochs -- are never followed.  True when followed.
 */
static bool
follow_running(struct plog_chain *c, const struct rsync_msg *m, bool from_primary)
{
	const bool primary = m->h.role == RSYNC_ROLE_PRIMARY;
	uint32_t asked;

	/* (while a re-protection waits, a standby that took over on the
	 * standby's link is still followed: a failover that superseded it
	 * was taken after all, its echoes lost -- protect_tx() then gives
	 * the re-protection up) */
	if (m->h.type != RSYNC_HEARTBEAT || !(m->h.flags & RSYNC_F_RUNNING) ||
	    m->h.epoch <= c->epoch || c->state != PL_PRIMARY ||
	    (c->protect_pending && (primary || from_primary)))
		return false;
	if (primary != from_primary) {
		swap_sides(c);
		c->sides_adopted++;
	}
	if (!primary) {
		/* a standby that took over: as one heard after a restart
		 * (its run heard, the standby's sending from the log) */
		memset(&c->standby_run, 0, sizeof(c->standby_run));
		(void)rsync_peer_run_heard(&c->standby_run, m->h.sender_run);
		follow_newer_epoch(c, m->h.epoch);
	} else {
		memset(&c->primary_run, 0, sizeof(c->primary_run));
		(void)rsync_peer_run_heard(&c->primary_run, m->h.sender_run);
		c->epoch = m->h.epoch;
		c->attempt = RTE_MAX(c->attempt, m->h.epoch);
		c->cancels_left = 0;
		stamp_above(c, m->u.heartbeat.cut_ts);
		if (primary != from_primary) { /* what this run sent went elsewhere */
			plog_log_seek(&c->log, &c->cur, c->first_ts - 1);
			c->behind = true;
		}
		c->epochs_adopted++;
	}
	/* A failover asked for an epoch the chain has reached since (the
	 * agent's, read off a stale state) is no longer one. */
	asked = __atomic_load_n(&c->epoch_asked, __ATOMIC_ACQUIRE);
	if (asked != 0 && asked <= c->epoch) {
		__atomic_store_n(&c->epoch_asked, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&c->failover_req, 0, __ATOMIC_RELEASE);
	}
	MGR_LOG(WARNING, "remote chain %s: the chain runs on port %d at epoch %u (it moved "
		"before this run): following it", c->cfg->name, out_port_of(c), c->epoch);
	return true;
}

/* The new primary's answer to PROTECT. */
static enum rsync_rx_reason
protect_echoed(struct plog_chain *c, const struct rsync_msg *m)
{
	if (!c->protect_pending)
		return RSYNC_RX_DUPLICATE;
	if (m->h.flags & RSYNC_F_RESYNC) {
		protect_refused(c);
		return RSYNC_RX_OK;
	}
	c->protect_pending = false;
	c->protected_ns = mgr_now_ns();
	c->protects++;
	MGR_LOG(NOTICE, "remote chain %s: protected again at epoch %u: primary on port %d, "
		"standby on port %d", c->cfg->name, c->epoch, c->pri_port, c->sby_port);
	return RSYNC_RX_OK;
}

/*
 * An RSync frame from the primary (on the primary link) or the standby (on
 * the standby link): who may send what where is checked first, so a frame
 * reflected back, or sent on the other link, is refused however authentic.
 * HEARTBEATs tell the peers' runs (and the primary's newest admitted
 * timestamp); a LOG_TRIM of this epoch, addressed to this run, trims the
 * log; the standby's echo of REPLAY_START starts the replay, of REPLAY_END
 * ends the repeats.
 */
static void
control_in(struct plog_chain *c, struct rte_mbuf *mb)
{
	const bool from_primary = mb->port == (uint16_t)c->pri_port;
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
	if (m.h.role == RSYNC_ROLE_PREDECESSOR) {
		r = RSYNC_RX_WRONG_ROLE;
		goto out;
	}
	if (follow_running(c, &m, from_primary))
		goto out;
	if (m.h.role != (from_primary ? RSYNC_ROLE_PRIMARY : RSYNC_ROLE_STANDBY)) {
		r = m.h.type == RSYNC_HEARTBEAT ? crossed_heartbeat(c, &m, from_primary)
						: RSYNC_RX_WRONG_ROLE;
		goto out;
	}
	if (m.h.type == RSYNC_HEARTBEAT) {
		enum rsync_run_heard heard = rsync_peer_run_heard(
			from_primary ? &c->primary_run : &c->standby_run, m.h.sender_run);

		/* sent before its sender restarted (late, or twice): no news */
		if (heard == RSYNC_RUN_REPLACED) {
			r = RSYNC_RX_PEER_RESTARTED;
			goto out;
		}
		/* (where this run sends, the node runs the chain at this
		 * run's epoch: settled) */
		if ((m.h.flags & RSYNC_F_RUNNING) && m.h.epoch == c->epoch &&
		    from_primary == (c->state == PL_PRIMARY))
			__atomic_store_n(&c->settled, true, __ATOMIC_RELEASE);
		if (from_primary) {
			if (heard == RSYNC_RUN_NEW) {
				c->primary_restarts++;
				/* Its NFs' state is gone: the standby has it.
				 * (Heard while a failover starts: asked again
				 * should that one be given up.) */
				if ((c->state == PL_PRIMARY || c->state == PL_STARTING) &&
				    m.h.epoch == c->epoch)
					failover_cause(c, "primary_restart", mgr_now_ns());
			}
			/* Never stamp at or below what the primary admitted
			 * (this run started with a clock behind the run
			 * before's): the entries at or below it were dropped
			 * there as stale, and go, so that the log's
			 * timestamps stay consecutive for a replay. */
			/* (Not while a failover is under way: the standby
			 * takes all it is sent then whole, and a jump in the
			 * log would be a gap no entry fills.) */
			if (c->state == PL_PRIMARY)
				stamp_above(c, m.u.heartbeat.cut_ts);
		} else {
			c->standby_restarts += heard == RSYNC_RUN_NEW;
			/* Running the chain, the standby names the newest
			 * timestamp it admitted: stamp above it (a restarted
			 * node's clock may be behind), the log only a buffer. */
			if (c->state == PL_STANDBY && m.h.epoch == c->epoch)
				stamp_above(c, m.u.heartbeat.cut_ts);
		}
		goto out;
	}
	if (m.h.receiver_run != mgr.remote.run) {
		r = RSYNC_RX_STALE_RUN; /* recorded before this node restarted */
		goto out;
	}
	/* The standby's answer to REPLAY_START is of the epoch offered;
	 * anything else of the chain's (a fenced primary's trims mean
	 * nothing). */
	if (m.h.type == RSYNC_REPLAY_START ? m.h.epoch != c->attempt : m.h.epoch != c->epoch) {
		r = RSYNC_RX_STALE_EPOCH;
		goto out;
	}
	switch (m.h.type) {
	case RSYNC_LOG_TRIM:
		/* A failover under way replays the range it offered, whole:
		 * the primary it leaves trims nothing of it. */
		if (c->state != PL_PRIMARY) {
			c->trims_held++;
			break;
		}
		plog_log_trim(&c->log, m.u.trim.watermark);
		c->trims++;
		break;
	case RSYNC_REPLAY_START:
		if (m.h.flags & RSYNC_F_RESYNC) { /* refused: not in sync */
			if (c->state == PL_STARTING) {
				c->failovers_refused++;
				give_up_failover(c, "refused by the standby (not in sync)");
			} else {
				r = RSYNC_RX_DUPLICATE;
			}
		} else if (c->state == PL_STARTING) {
			c->epoch = c->attempt;
			c->state = PL_REPLAY;
			c->start_echo_ns = mgr_now_ns();
		} else if (c->state == PL_PRIMARY && c->attempt > c->epoch) {
			/* Given up, but the standby had taken over (its answer
			 * was lost): follow it, replaying from the start. */
			const struct rsync_msg *start = offered_start(c, c->attempt);

			if (start != NULL) {
				c->failovers_followed++;
				follow_takeover(c, c->attempt, start);
			} else {
				r = RSYNC_RX_DUPLICATE; /* (an attempt no longer kept) */
			}
		} else {
			r = RSYNC_RX_DUPLICATE;
		}
		break;
	case RSYNC_PROTECT:
		r = from_primary ? protect_echoed(c, &m) : RSYNC_RX_WRONG_ROLE;
		break;
	case RSYNC_REPLAY_END:
		if (c->state == PL_STANDBY && !c->end_echoed)
			end_echoed(c);
		else
			r = RSYNC_RX_DUPLICATE;
		break;
	case RSYNC_REPLAY_ACK:
		if (from_primary) /* (a stateless primary's: never a replay's) */
			r = c->state == PL_PRIMARY ? primary_lacks(c, m.u.replay_ack.next_ts)
						   : RSYNC_RX_STALE_EPOCH;
		else if (c->state == PL_REPLAY)
			replay_acked(c, &m.u.replay_ack, mgr_now_ns());
		else if (c->state == PL_STANDBY && c->log_kept)
			end_unechoed_acked(c, &m.u.replay_ack, mgr_now_ns());
		else
			r = RSYNC_RX_DUPLICATE;
		break;
	default:
		r = RSYNC_RX_WRONG_ROLE;
		break;
	}
out:
	c->ctl_rx[r]++;
	rte_pktmbuf_free(mb);
}

/* Message `m` (its type, epoch and payload set) from this predecessor to
 * the primary's side or the standby's, encoded in a fresh mbuf; NULL
 * without one. */
static struct rte_mbuf *
frame_to(struct plog_chain *c, bool to_primary, struct rsync_msg *m)
{
	uint8_t buf[RSYNC_MAX_FRAME];
	struct rte_mbuf *mb;
	int n;

	m->h.version = RSYNC_VERSION;
	m->h.chain = c->cfg->id;
	m->h.frag_count = 1;
	m->h.role = RSYNC_ROLE_PREDECESSOR;
	m->h.sender_run = mgr.remote.run;
	m->h.receiver_run = to_primary ? c->primary_run.cur : c->standby_run.cur;
	n = rsync_encode(buf, sizeof(buf), to_primary ? c->pri_mac : c->dst_mac,
			 to_primary ? c->pri_src_mac : c->src_mac, m, NULL, 0, c->auth);
	mb = n > 0 ? rte_pktmbuf_alloc(mgr.pool) : NULL;
	if (mb != NULL)
		memcpy(rte_pktmbuf_append(mb, (uint16_t)n), buf, (size_t)n);
	return mb;
}

/* An RSync control frame for the standby, in a fresh mbuf; NULL without one. */
static struct rte_mbuf *
control_frame(struct plog_chain *c, uint8_t type, const struct rsync_msg *u)
{
	struct rsync_msg m = *u;
	struct rte_mbuf *mb;

	m.h.type = type;
	/* REPLAY_START and REPLAY_CANCEL name the epoch offered */
	m.h.epoch = type == RSYNC_REPLAY_END ? c->epoch : c->attempt;
	mb = frame_to(c, false, &m);
	c->ctrl_sent += mb != NULL;
	return mb;
}

/* PROTECT for the node running the chain (the primary's side since the
 * swap), in a fresh mbuf, sent if its port takes it now.  True when sent. */
static bool
send_protect(struct mgr_dp_ctx *ctx, struct plog_chain *c)
{
	struct rsync_msg m = {0};
	struct rte_mbuf *mb;

	m.h.type = RSYNC_PROTECT;
	m.h.epoch = c->epoch;
	if ((mb = frame_to(c, true, &m)) == NULL)
		return false;
	if (!mgr_dp_port_try(ctx, mb, (uint16_t)c->pri_port)) {
		rte_pktmbuf_free(mb);
		return false;
	}
	c->ctrl_sent++;
	return true;
}

/*
 * Re-protection, on the TX unit (the log's owner): asked while the chain
 * runs on the node that took it over, unprotected (REPLAY_END echoed, the
 * log only a buffer), the primary's and the standby's sides swap -- that
 * node is the primary, the other link the new standby's -- and the log
 * keeps every entry from here on until the new primary's LOG_TRIM.
 * PROTECT then goes to it after every frame trimmed unreplicated, in order
 * on the same link: the cuts it makes from then on are backed by the log.
 * Repeated until echoed; refused, undone (protect_refused()); a failover
 * started meanwhile (the new primary lost) supersedes it.  Returns the
 * frames sent.
 */
static unsigned int
protect_tx(struct mgr_dp_ctx *ctx, struct plog_chain *c, uint64_t now)
{
	if (c->protect_pending && c->state != PL_PRIMARY) {
		/* a failover supersedes it: the chain leaves that node (should
		 * that failover be given up, it is pending again) */
		c->protect_pending = false;
		c->protect_superseded_by = c->attempt;
		c->protects_superseded++;
		return 0;
	}
	if (!c->protect_pending) {
		if (!__atomic_exchange_n(&c->protect_req, 0, __ATOMIC_ACQ_REL))
			return 0;
		if (c->state != PL_STANDBY || !c->end_echoed || c->log_kept) {
			MGR_LOG(WARNING, "remote chain %s: re-protection asked while not running "
				"on a node that took over (%s): ignored", c->cfg->name,
				state_names[c->state]);
			return 0;
		}
		if (now - __atomic_load_n(&c->other_standby_ns, __ATOMIC_ACQUIRE) >
			    PROTECT_STANDBY_HEARD_NS ||
		    c->other_standby_epoch != c->epoch) {
			MGR_LOG(WARNING, "remote chain %s: re-protection asked with no standby "
				"at epoch %u heard on port %d: ignored", c->cfg->name, c->epoch,
				c->pri_port);
			return 0;
		}
		swap_sides(c);
		c->state = PL_PRIMARY;
		/* The failover that left the old primary is over: what asked
		 * for it (and anything asked while it ran) is no reason to
		 * leave the new one. */
		__atomic_store_n(&c->failover_req, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&c->failover_again, NULL, __ATOMIC_RELEASE);
		__atomic_store_n(&c->wanted, NULL, __ATOMIC_RELEASE);
		c->protect_pending = true;
		c->protect_start_ns = now;
		c->protect_sent_ns = 0;
	}
	if (c->protect_sent_ns != 0 && now - c->protect_sent_ns < REPLAY_CTL_RETRANS_NS)
		return 0;
	if (c->protect_start_ns != 0 &&
	    now - c->protect_start_ns >= (uint64_t)c->cfg->failover_timeout_ms * 1000000ull) {
		/* (said once: the log is kept meanwhile, and fills) */
		c->protects_unanswered++;
		c->protect_start_ns = 0;
		MGR_LOG(ERR, "remote chain %s: PROTECT unanswered for %u ms: sent on; the log "
			"is kept until the node answers", c->cfg->name, c->cfg->failover_timeout_ms);
	}
	if (!send_protect(ctx, c))
		return 0;
	c->protect_sent_ns = now;
	return 1;
}

/* Segments of the longest frame a log holds (the pool's mbufs have at
 * least 1 KB of room). */
#define REPLAY_SEGS ((PLOG_LOG_MAX_FRAME + 1023) / 1024 + 1)

/* Copy `len` bytes into a chain of the `nsegs` fresh mbufs in segs[].
 * Returns the chain's head. */
static struct rte_mbuf *
chain_copy(struct rte_mbuf **segs, uint32_t nsegs, const uint8_t *data, uint32_t len)
{
	struct rte_mbuf *head = segs[0], *last = segs[0];
	uint32_t done = 0, k = 0;

	while (done < len || k == 0) {
		struct rte_mbuf *s = segs[k];
		uint32_t room = rte_pktmbuf_tailroom(s), take = len - done < room ? len - done : room;

		memcpy(rte_pktmbuf_mtod(s, uint8_t *), data + done, take);
		s->data_len = (uint16_t)take;
		if (k > 0) {
			last->next = s;
			head->nb_segs++;
		}
		last = s;
		done += take;
		k++;
	}
	head->pkt_len = len;
	if (k < nsegs)
		rte_pktmbuf_free_bulk(&segs[k], nsegs - k);
	return head;
}

/* Send control frame `mb` (NULL: no mbuf) to the standby if its port takes
 * it now.  True when sent. */
static bool
send_control(struct mgr_dp_ctx *ctx, struct plog_chain *c, struct rte_mbuf *mb)
{
	if (mb == NULL)
		return false;
	if (!mgr_dp_port_try(ctx, mb, (uint16_t)c->sby_port)) {
		c->ctrl_sent--; /* not sent after all */
		rte_pktmbuf_free(mb);
		return false;
	}
	return true;
}

/*
 * The cursor: the replay to the standby (PL_REPLAY, then REPLAY_END), or a
 * chain behind sending its log to the output port from the first entry the
 * port refused.  As many entries as the port takes now.  Returns the frames
 * sent.
 */
static unsigned int
send_from_log(struct mgr_dp_ctx *ctx, struct plog_chain *c)
{
	struct rte_mbuf *segs[REPLAY_SEGS];
	uint16_t port = out_port_of(c);
	unsigned int room = mgr_dp_port_room(ctx, port), sent = 0, bursts = 1;
	struct plog_entry e;
	struct rte_mbuf *mb;

	while (room > 0) {
		uint32_t nsegs;

		if (plog_log_peek(&c->log, &c->cur, &e) == 0) {
			if (c->state != PL_REPLAY) {
				c->behind = false; /* caught up: back to sending directly */
				break;
			}
			/* Everything sent under the replay -- the range, and what
			 * came in since -- must be whole at the standby before
			 * REPLAY_END: until acknowledged, a gap may still be
			 * reported and sent again.  (Sent on afterwards, a frame
			 * lost on the link would be lost for good, and the
			 * standby would no longer hold its port for the NF.) */
			if (c->replay_acked <= RTE_MAX(c->replay_newest, c->replay_sent_max))
				break;
			struct rsync_msg m = {0};

			m.u.replay_end.last_ts = c->replay_last_ts;
			m.u.replay_end.count = c->replayed;
			if (!send_control(ctx, c, control_frame(c, RSYNC_REPLAY_END, &m)))
				break;
			c->end_msg = m;
			c->end_echoed = false;
			c->log_kept = true;
			c->replay_end_ns = mgr_now_ns();
			c->ctl_sent_ns = c->replay_end_ns;
			c->state = PL_STANDBY;
			c->behind = false;
			/* Replayed: the log is only a buffer from the echo on. */
			sent++;
			break;
		}
		/* The replay -- the range and what came in since -- is paced
		 * by the standby's acknowledgements. */
		if (c->state == PL_REPLAY && e.ts >= c->replay_acked + REPLAY_WINDOW)
			break;
		/* The mbufs first (a jumbo frame takes several), then the
		 * entry: an entry taken is an entry sent. */
		nsegs = e.len / (RTE_MBUF_DEFAULT_DATAROOM) + 1;
		if (nsegs > REPLAY_SEGS || rte_pktmbuf_alloc_bulk(mgr.pool, segs, nsegs) != 0) {
			c->replay_alloc_fail++;
			break;
		}
		plog_log_read(&c->log, &c->cur, &e);
		mb = chain_copy(segs, nsegs, e.frame, e.len);
		if (c->state == PL_REPLAY) {
			plog_shim_set_flags(rte_pktmbuf_mtod(mb, uint8_t *),
					    rte_pktmbuf_data_len(mb), PLOG_SHIM_F_REPLAY);
			c->replayed++;
			c->replay_last_ts = e.ts;
			if (e.ts > c->replay_sent_max)
				c->replay_sent_max = e.ts;
		} else {
			c->resent++;
			if (c->state == PL_STANDBY && !c->log_kept)
				plog_log_trim(&c->log, e.ts); /* see mgr_plog_on_send */
		}
		mgr_dp_port_try(ctx, mb, port); /* takes it: room counted */
		room--;
		sent++;
		/* Several bursts a poll while the port takes them: input is
		 * drained from several rings a poll, and the cursor must be
		 * able to catch up with it. */
		if (room == 0 && bursts++ < CURSOR_BURSTS)
			room = mgr_dp_port_room(ctx, port);
	}
	return sent;
}

/* A HEARTBEAT to the primary and to the standby every PEER_HEARTBEAT_NS:
 * this run (theirs as last heard), this epoch, the newest timestamp given.
 * Returns the frames sent. */
static unsigned int
peer_heartbeats(struct mgr_dp_ctx *ctx, struct plog_chain *c, uint64_t now)
{
	static const uint8_t roles_to[2] = {RSYNC_ROLE_PRIMARY, RSYNC_ROLE_STANDBY};
	unsigned int n = 0;

	if (now - c->hb_ns < PEER_HEARTBEAT_NS && c->hb_ns != 0)
		return 0;
	c->hb_ns = now;
	for (int k = 0; k < 2; k++) {
		const bool to_primary = roles_to[k] == RSYNC_ROLE_PRIMARY;
		uint16_t port = (uint16_t)(to_primary ? c->pri_port : c->sby_port);
		struct rsync_msg m = {0};
		struct rte_mbuf *mb;

		m.h.type = RSYNC_HEARTBEAT;
		m.h.epoch = c->epoch;
		m.u.heartbeat.cut_ts = c->last_ts;
		if ((mb = frame_to(c, to_primary, &m)) == NULL)
			continue;
		if (mgr_dp_port_try(ctx, mb, port)) {
			c->ctrl_sent++;
			n++;
		} else {
			rte_pktmbuf_free(mb);
		}
	}
	return n;
}

unsigned int
mgr_plog_tx(struct mgr_dp_ctx *ctx)
{
	unsigned int n = 0;

	MGR_ASSERT_UNIT(MGR_UNIT_TX);
	for (int i = 0; i < nchains; i++) {
		struct plog_chain *c = &chains[i];
		struct rsync_msg m = {0};
		struct rte_mbuf *mb;

		/* A few control frames a poll: trims before new input. */
		for (int k = 0; k < 4 && rte_ring_sc_dequeue(c->ctl, (void **)&mb) == 0; k++)
			control_in(c, mb);
		n += peer_heartbeats(ctx, c, mgr_now_ns());
		if (unlikely(c->protect_pending ||
			     __atomic_load_n(&c->protect_req, __ATOMIC_RELAXED)))
			n += protect_tx(ctx, c, mgr_now_ns());
		/* (a failover while a re-protection waits for its echo goes
		 * ahead: the new standby refuses it unless it is in sync --
		 * the node did become primary, its echoes lost) */
		if (c->state == PL_PRIMARY &&
		    unlikely(__atomic_load_n(&c->failover_req, __ATOMIC_ACQUIRE))) {
			struct plog_entry first;
			struct plog_cursor from;

			/* The replayed range: the log from its first untrimmed
			 * entry (timestamps are consecutive in it) to the newest. */
			plog_log_seek(&c->log, &from, c->log.trimmed_to);
			m.u.replay_start.after_ts = plog_log_peek(&c->log, &from, &first) == 1
							    ? first.ts - 1
							    : c->last_ts;
			m.u.replay_start.newest_ts = c->last_ts;
			/* A new epoch each time: one given up is never offered
			 * again.  The agent's, if it named one (never lower). */
			const uint32_t before = c->attempt;
			const uint32_t asked = __atomic_exchange_n(&c->epoch_asked, 0,
								   __ATOMIC_ACQ_REL);

			c->attempt = RTE_MAX(RTE_MAX(c->epoch, c->attempt) + 1, asked);
			if (!send_control(ctx, c, control_frame(c, RSYNC_REPLAY_START, &m))) {
				/* no mbuf, or no room: start on a later poll (the
				 * request put back, unless a newer one came) */
				uint32_t none = 0;

				c->attempt = before;
				__atomic_compare_exchange_n(&c->epoch_asked, &none, asked, false,
							    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
				continue;
			}
			__atomic_store_n(&c->wanted, NULL, __ATOMIC_RELEASE);
			n++;
			c->cancels_left = 0;
			/* causes heard until now are this failover's */
			__atomic_store_n(&c->failover_again, NULL, __ATOMIC_RELEASE);
			/* What the primary has not been sent yet (were this
			 * given up): the log from its end on. */
			plog_log_seek_end(&c->log, &c->resume);
			if (c->behind)
				c->resume = c->cur;
			c->cur = from;
			c->offered[c->attempt % PLOG_STARTS_KEPT].attempt = c->attempt;
			c->offered[c->attempt % PLOG_STARTS_KEPT].msg = m;
			c->ctl_sent_ns = mgr_now_ns();
			/* Everything untrimmed goes to the standby, whatever the
			 * primary got of it (the cursor is on its first). */
			replay_range_begin(c, &m);
			c->replay_start_ns = c->ctl_sent_ns;
			c->failovers++;
			c->state = PL_STARTING; /* the replay waits for the echo */
			continue;
		}
		if (unlikely(c->state == PL_STARTING ||
			     (c->state == PL_STANDBY && !c->end_echoed && c->replay_end_ns != 0))) {
			uint64_t now = mgr_now_ns();

			if (now - c->ctl_sent_ns >= REPLAY_CTL_RETRANS_NS &&
			    send_control(ctx, c,
					 c->state == PL_STARTING
						 ? control_frame(c, RSYNC_REPLAY_START,
								 offered_start(c, c->attempt))
						 : control_frame(c, RSYNC_REPLAY_END, &c->end_msg))) {
				n++;
				c->ctl_sent_ns = now;
				c->ctl_retrans++;
			}
			if (c->state == PL_STARTING) {
				if (now - c->replay_start_ns >=
				    (uint64_t)c->cfg->failover_timeout_ms * 1000000ull)
					give_up_failover(c, "no answer from the standby");
				continue;
			}
			if (c->log_kept && now - c->replay_end_ns >=
					       (uint64_t)c->cfg->failover_timeout_ms * 1000000ull)
				log_keep_end(c);
		}
		if (unlikely(c->cancels_left > 0) && c->state == PL_PRIMARY) {
			uint64_t now = mgr_now_ns();

			if (now - c->ctl_sent_ns >= REPLAY_CTL_RETRANS_NS &&
			    send_control(ctx, c, control_frame(c, RSYNC_REPLAY_CANCEL, &m))) {
				n++;
				c->ctl_sent_ns = now;
				c->cancels_left--;
			}
		}
		if (unlikely(c->state == PL_REPLAY)) {
			uint64_t now = mgr_now_ns();
			struct plog_entry e;

			if (c->replay_progress_ns == 0)
				c->replay_progress_ns = now; /* from the echo on */
			/* Sent and never acknowledged: lost with nothing after
			 * it to show the gap (the tail), or its REPLAY_ACK lost. */
			if (now - c->replay_progress_ns >= REPLAY_RTO_NS &&
			    c->replay_acked <= RTE_MAX(c->replay_newest, c->replay_sent_max) &&
			    (plog_log_peek(&c->log, &c->cur, &e) == 0 || e.ts > c->replay_acked)) {
				replay_rewind(c, c->replay_acked, now);
				c->replay_timeouts++;
			}
		}
		if (unlikely(c->state == PL_REPLAY || c->behind))
			n += send_from_log(ctx, c);
	}
	return n;
}

/* ---- telemetry ------------------------------------------------------------- */

static struct plog_chain *
chain_named(const char *name)
{
	for (int i = 0; i < nchains; i++)
		if (strcmp(chains[i].cfg->name, name) == 0)
			return &chains[i];
	return NULL;
}

/* Every chain this node is the predecessor of into dict `d`, one dict each,
 * keyed by name, what fill() adds.  0, or -ENOMEM. */
static int
each_chain(struct rte_tel_data *d, void (*fill)(struct rte_tel_data *o,
						const struct plog_chain *c))
{
	for (int i = 0; i < nchains; i++) {
		struct rte_tel_data *o = rte_tel_data_alloc();

		if (o == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(o);
		fill(o, &chains[i]);
		rte_tel_data_add_dict_container(d, chains[i].cfg->name, o, 0);
	}
	return 0;
}

/* /onvm/remote/brief: per protected chain only what the node agent polls
 * (every 10 ms: the whole of /onvm/remote costs the node's CPU and the
 * agent's for nothing). */
static void
fill_brief(struct rte_tel_data *o, const struct plog_chain *c)
{
	const char *w = __atomic_load_n(&c->wanted, __ATOMIC_ACQUIRE);

	rte_tel_data_add_dict_string(o, "role", "predecessor");
	rte_tel_data_add_dict_string(o, "state", state_names[c->state]);
	rte_tel_data_add_dict_uint(o, "epoch", c->epoch);
	rte_tel_data_add_dict_uint(o, "epoch_offered", c->attempt);
	rte_tel_data_add_dict_uint(o, "run_id", mgr.remote.run);
	rte_tel_data_add_dict_string(o, "failover_wanted", w != NULL ? w : "");
	rte_tel_data_add_dict_uint(o, "end_echoed", c->end_echoed);
	rte_tel_data_add_dict_uint(o, "protect_pending", c->protect_pending);
	rte_tel_data_add_dict_uint(o, "protects_refused", c->protects_refused);
	rte_tel_data_add_dict_uint(o, "settled", __atomic_load_n(&c->settled,
								 __ATOMIC_ACQUIRE));
}

/* /onvm/remote's: the brief, then the rest. */
static void
fill_full(struct rte_tel_data *o, const struct plog_chain *c)
{
	fill_brief(o, c);
	rte_tel_data_add_dict_uint(o, "id", c->cfg->id);
	rte_tel_data_add_dict_uint(o, "last_ts", c->last_ts);
	rte_tel_data_add_dict_uint(o, "first_ts", c->first_ts);
	rte_tel_data_add_dict_uint(o, "primary_run", c->primary_run.cur);
	rte_tel_data_add_dict_uint(o, "standby_run", c->standby_run.cur);
	rte_tel_data_add_dict_uint(o, "primary_restarts", c->primary_restarts);
	rte_tel_data_add_dict_uint(o, "standby_restarts", c->standby_restarts);
	rte_tel_data_add_dict_uint(o, "ts_raised", c->ts_raised);
	rte_tel_data_add_dict_uint(o, "replay_acked", c->replay_acked);
	rte_tel_data_add_dict_string(o, "failover_by",
				     c->cfg->failover_by_agent ? "agent" : "node");
	rte_tel_data_add_dict_uint(o, "failover_wanted_ns", c->wanted_ns);
	rte_tel_data_add_dict_uint(o, "failover_requests", c->wanted_count);
	rte_tel_data_add_dict_uint(o, "failovers_given_up", c->failovers_given_up);
	rte_tel_data_add_dict_uint(o, "failovers_refused", c->failovers_refused);
	rte_tel_data_add_dict_uint(o, "failovers_followed", c->failovers_followed);
	rte_tel_data_add_dict_uint(o, "epochs_adopted", c->epochs_adopted);
	rte_tel_data_add_dict_uint(o, "failovers_asked_again", c->failovers_asked_again);
	rte_tel_data_add_dict_uint(o, "replay_acks", c->replay_acks);
	rte_tel_data_add_dict_uint(o, "replay_rewinds", c->replay_rewinds);
	rte_tel_data_add_dict_uint(o, "replay_timeouts", c->replay_timeouts);
	rte_tel_data_add_dict_uint(o, "stamped", c->stamped);
	rte_tel_data_add_dict_uint(o, "log_pkts", plog_log_pkts(&c->log));
	rte_tel_data_add_dict_uint(o, "log_bytes", plog_log_bytes(&c->log));
	rte_tel_data_add_dict_uint(o, "log_hwm_pkts", c->log.stats.hwm_pkts);
	rte_tel_data_add_dict_uint(o, "log_trimmed", c->log.stats.trimmed);
	rte_tel_data_add_dict_uint(o, "log_trimmed_to", c->log.trimmed_to);
	rte_tel_data_add_dict_uint(o, "refused_full", c->refused_full);
	rte_tel_data_add_dict_uint(o, "refused_frame", c->refused_frame);
	rte_tel_data_add_dict_uint(o, "failovers", c->failovers);
	rte_tel_data_add_dict_uint(o, "replayed", c->replayed);
	rte_tel_data_add_dict_uint(o, "behind", c->behind);
	rte_tel_data_add_dict_uint(o, "behind_events", c->behind_events);
	rte_tel_data_add_dict_uint(o, "resent", c->resent);
	rte_tel_data_add_dict_uint(o, "replay_from_ts", c->replay_from_ts);
	rte_tel_data_add_dict_uint(o, "replay_newest", c->replay_newest);
	rte_tel_data_add_dict_uint(o, "replay_alloc_fail", c->replay_alloc_fail);
	rte_tel_data_add_dict_uint(o, "ctrl_sent", c->ctrl_sent);
	rte_tel_data_add_dict_uint(o, "failover_req_ns", c->failover_req_ns);
	rte_tel_data_add_dict_string(o, "failover_trigger",
				     c->trigger != NULL ? c->trigger : "");
	rte_tel_data_add_dict_uint(o, "replay_start_ns", c->replay_start_ns);
	rte_tel_data_add_dict_uint(o, "start_echo_ns", c->start_echo_ns);
	rte_tel_data_add_dict_uint(o, "replay_end_ns", c->replay_end_ns);
	rte_tel_data_add_dict_uint(o, "ctl_retrans", c->ctl_retrans);
	rte_tel_data_add_dict_uint(o, "trims", c->trims);
	rte_tel_data_add_dict_uint(o, "primary_resends", c->primary_resends);
	rte_tel_data_add_dict_uint(o, "trims_held", c->trims_held);
	rte_tel_data_add_dict_uint(o, "primary_port", (uint64_t)c->pri_port);
	rte_tel_data_add_dict_uint(o, "standby_port", (uint64_t)c->sby_port);
	rte_tel_data_add_dict_uint(o, "swapped", c->swapped);
	rte_tel_data_add_dict_uint(o, "protects", c->protects);
	rte_tel_data_add_dict_uint(o, "protects_superseded", c->protects_superseded);
	rte_tel_data_add_dict_uint(o, "sides_adopted", c->sides_adopted);
	rte_tel_data_add_dict_uint(o, "protects_unanswered", c->protects_unanswered);
	rte_tel_data_add_dict_uint(o, "protect_start_ns", c->protect_start_ns);
	rte_tel_data_add_dict_uint(o, "protected_ns", c->protected_ns);
	rte_tel_data_add_dict_uint(o, "triggers_of_standby", c->triggers_of_standby);
	rte_tel_data_add_dict_uint(o, "ctl_ring_full", c->ctl_ring_full);
	for (int r = 1; r < RSYNC_RX_REASON_MAX; r++) {
		char key[48];

		snprintf(key, sizeof(key), "ctl_%s", rsync_rx_reason_str((enum rsync_rx_reason)r));
		rte_tel_data_add_dict_uint(o, key, c->ctl_rx[r]);
	}
}

/* /onvm/remote: every protected chain this node has a role in. */
static int
tel_remote(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (each_chain(d, fill_full) < 0)
		return -ENOMEM;
	mgr_rsync_telemetry(d); /* the chains this node is primary or standby of */
	return 0;
}

static int
tel_remote_brief(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (each_chain(d, fill_brief) < 0)
		return -ENOMEM;
	mgr_rsync_telemetry_brief(d);
	return 0;
}

/* /onvm/remote/failover,NAME[,EPOCH]: the operator's planned switch-over,
 * or the node agent's failover at the epoch the cluster agreed -- above
 * every epoch this node offered or ran, or refused (a second request for
 * one failure, made on an older reading). */
static int
tel_failover(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char name[MGR_CFG_NAME_LEN] = "";
	const char *comma = params != NULL ? strchr(params, ',') : NULL;
	struct plog_chain *c = NULL;
	unsigned long epoch = 0;

	(void)cmd;
	rte_tel_data_start_dict(d);
	if (params != NULL && (size_t)(comma != NULL ? comma - params : (ptrdiff_t)strlen(params)) <
				      sizeof(name)) {
		memcpy(name, params, comma != NULL ? (size_t)(comma - params) : strlen(params));
		c = chain_named(name);
	}
	if (c != NULL && comma != NULL) {
		char *end;

		errno = 0;
		epoch = strtoul(comma + 1, &end, 10);
		if (errno != 0 || end == comma + 1 || *end != '\0' || epoch == 0 ||
		    epoch > INT32_MAX)
			c = NULL;
	}
	if (c == NULL) {
		rte_tel_data_add_dict_string(d, "status", "error");
		rte_tel_data_add_dict_string(d, "reason",
					     "usage: /onvm/remote/failover,CHAIN[,EPOCH] (a chain this "
					     "node is the predecessor of; EPOCH 1..2^31-1)");
		return 0;
	}
	if (epoch == 0 && c->cfg->failover_by_agent) {
		/* the cluster decides: a failover of its own would run an
		 * epoch etcd never agreed (onvmctl switchover asks through it) */
		rte_tel_data_add_dict_string(d, "status", "error");
		rte_tel_data_add_dict_string(d, "reason", "failover_by agent: give the epoch the "
							  "cluster agreed (CHAIN,EPOCH)");
		return 0;
	}
	if (epoch != 0) {
		/* (read off the TX unit: the TX unit keeps the larger anyway) */
		const uint32_t at = RTE_MAX(__atomic_load_n(&c->epoch, __ATOMIC_RELAXED),
					    __atomic_load_n(&c->attempt, __ATOMIC_RELAXED));
		uint32_t cur = __atomic_load_n(&c->epoch_asked, __ATOMIC_ACQUIRE);

		if (epoch <= at) {
			rte_tel_data_add_dict_string(d, "status", "error");
			rte_tel_data_add_dict_string(d, "reason", "stale epoch: this node is at it "
								  "or past it");
			rte_tel_data_add_dict_uint(d, "epoch", at);
			return 0;
		}
		/* the highest asked wins: two requesters, or one racing the
		 * TX unit's putting back of a request it could not start */
		while (cur < epoch && !__atomic_compare_exchange_n(&c->epoch_asked, &cur,
								   (uint32_t)epoch, false,
								   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			;
	}
	request_failover(c, epoch != 0 ? "agent" : "operator", mgr_now_ns());
	rte_tel_data_add_dict_string(d, "status", "ok");
	return 0;
}

/* /onvm/remote/protect,NAME: the chain runs on the node that took it over,
 * unprotected; make it the primary again, with a new standby on the link
 * the old primary had (protect_tx()). */
static int
tel_protect(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct plog_chain *c = params != NULL ? chain_named(params) : NULL;
	enum plog_state st;

	(void)cmd;
	rte_tel_data_start_dict(d);
	if (c == NULL) {
		rte_tel_data_add_dict_string(d, "status", "error");
		rte_tel_data_add_dict_string(d, "reason", "usage: /onvm/remote/protect,CHAIN (a "
							  "chain this node is the predecessor of)");
		return 0;
	}
	st = __atomic_load_n(&c->state, __ATOMIC_RELAXED);
	if (st != PL_STANDBY || __atomic_load_n(&c->protect_pending, __ATOMIC_RELAXED)) {
		rte_tel_data_add_dict_string(d, "status", "error");
		rte_tel_data_add_dict_string(d, "reason", "not failed over: the chain has its "
							  "primary and standby");
		rte_tel_data_add_dict_string(d, "state", state_names[st]);
		return 0;
	}
	if (c->cfg->bfd >= 0 && c->cfg->standby_bfd < 0) {
		/* after the swap only the standby link's session would watch
		 * the new primary */
		rte_tel_data_add_dict_string(d, "status", "error");
		rte_tel_data_add_dict_string(d, "reason", "no standby_bfd: nothing would watch "
							  "the new primary");
		return 0;
	}
	if (mgr_now_ns() - __atomic_load_n(&c->other_standby_ns, __ATOMIC_ACQUIRE) >
		    PROTECT_STANDBY_HEARD_NS ||
	    __atomic_load_n(&c->other_standby_epoch, __ATOMIC_RELAXED) !=
		    __atomic_load_n(&c->epoch, __ATOMIC_RELAXED)) {
		/* the new primary would release nothing without its votes */
		rte_tel_data_add_dict_string(d, "status", "error");
		rte_tel_data_add_dict_string(d, "reason", "no standby at the chain's epoch heard "
							  "on the old primary's link: start it first");
		return 0;
	}
	__atomic_store_n(&c->protect_req, 1, __ATOMIC_RELEASE);
	rte_tel_data_add_dict_string(d, "status", "ok");
	return 0;
}

int
mgr_plog_telemetry_init(void)
{
	if (mgr_tel_register("/onvm/remote", tel_remote,
				       "Remote resiliency: this node's protected chains") != 0 ||
	    mgr_tel_register("/onvm/remote/brief", tel_remote_brief,
				       "Remote resiliency: each chain's role, state, epoch (for "
				       "the node agent)") != 0 ||
	    mgr_tel_register("/onvm/remote/failover", tel_failover,
				       "Fail a chain over to its standby. Parameter: chain name") !=
		    0 ||
	    mgr_tel_register("/onvm/remote/protect", tel_protect,
				       "Make a failed-over chain's node its primary again, a new "
				       "standby on the old primary's link. Parameter: chain name") !=
		    0) {
		MGR_LOG(ERR, "cannot register the /onvm/remote telemetry commands");
		return -1;
	}
	return 0;
}
