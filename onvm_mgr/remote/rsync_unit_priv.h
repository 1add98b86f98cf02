/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * rsync_unit_priv.h -- what the files of remote resiliency's primary and
 * standby roles (rsync_unit*.c; remote.h maps them) share.  The design is
 * in rsync_unit.c's opening comment.
 */
#ifndef RSYNC_UNIT_PRIV_H
#define RSYNC_UNIT_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "mgr.h"
#include "onvm_cut.h"
#include "onvm_state.h"
#include "plog_shim.h"
#include "rsync_primary.h"
#include "rsync_standby.h"
#include "rsync_wire.h"

#define RSYNC_CTL_RING	       1024
#define RSYNC_WAIT_RING	       8192 /* packets waiting for room in the latch */
#define RSYNC_WAIT_MARKERS     16   /* ... and markers among them */
#define RSYNC_WAIT_SLOTS       (RSYNC_WAIT_RING + RSYNC_WAIT_MARKERS)
#define RSYNC_RELEASE_RING     65536 /* at most: released packets their ports did not take yet */
/* A timestamp this far past the last one is a restarted predecessor's new
 * base, not frames lost: it starts from its clock in ns, at least the
 * restart's time (over a second) above the last; 2^26 (67 million) frames
 * lost in a row is a link down for seconds at line rate, failed over. */
#define RSYNC_GAP_NEW_BASE     (1ull << 26)
#define CTL_PER_POLL	       64
#define FENCE_HEARTBEAT_GAP_NS (10 * 1000 * 1000ull) /* at most one per 10 ms */
#define FENCE_UNASKED	       50 /* HEARTBEATs sent unasked after a takeover */
#define PRED_HEARTBEAT_NS      (20 * 1000 * 1000ull) /* to the predecessor: run, progress */
#define REPLAY_ACK_NS	       (1000 * 1000ull)	     /* the replay acknowledged every 1 ms */
#define REPLAY_NACK_NS	       (200 * 1000ull)	     /* a gap reported at most every 200 us */
#define REPLAY_ACK_EVERY       1024 /* ... and every half the predecessor's window (2048) */
#define REPLAY_HELD_PEEK_AFTER_MS 100 /* a port held for a replay this long ... */
#define REPLAY_HELD_PEEK_MS 10	     /* ... is read for its RSync frames this often */
#define PARKED_CHECK_NS (10 * 1000 * 1000ull) /* a standby's NFs looked at for telemetry */

/* A chain's state windows: one per rank of each position (a service with
 * several instances has several), at most this many. */
#define RSYNC_MAX_WINDOWS 32
/* A cut's first piece: the layout of the windows (rsync_unit_state.c), a
 * region number past every window's. */
#define RSYNC_LAYOUT_REGION (RSYNC_MAX_WINDOWS * NF_STATE_MAX_REGIONS)

/* The NF of a state window as the manager sees it (rsync_unit_state.c). */
struct rsync_nf_ref {
	uint16_t slot;
	uint32_t generation;
	uint32_t applied_gen; /* standby: the generation state was written into (0: none) */
	uint16_t applied_slot; /* ... and its slot */
	bool attached;	     /* state (and cut log) handles valid */
	bool has_cut;	     /* primary: its cut log is attached */
	uint64_t rescan_tsc; /* not attached: look again from then on */
	struct nf_state_set state;
	struct onvm_cut_set cut;
};

enum rs_state {
	RS_PRIMARY = 0, /* latching, releasing on votes */
	RS_FENCED,	/* a newer epoch took the chain: nothing leaves */
	RS_STANDBY,	/* staging and voting; nothing leaves */
	RS_REPLAY,	/* taken over, the predecessor replays its log */
	RS_ACTIVE,	/* the replay ended: this node runs the chain */
};


struct rsync_chain {
	const struct mgr_remote_cfg *cfg;
	enum rs_state state;
	/* The primary's session: from the start on a primary; on a standby
	 * with "reprotect", from its promotion on (the predecessor's PROTECT
	 * after a takeover: rsync_unit.c), published by the RX unit with a
	 * release store -- the TX unit and telemetry load it (acquire). */
	struct rsync_primary *pri;
	struct rsync_primary *pri_idle; /* reprotect: set up at start, until promoted */
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
	bool check_pred_mac;	 /* ... and the predecessor's */
	uint64_t pred_run;	 /* the predecessor's run, as last heard (0: not yet) */
	struct rsync_peer_runs pred_runs; /* standby: ... and those it replaced */
	uint64_t pred_hb_ns;	 /* the last HEARTBEAT sent to the predecessor */
	uint64_t next_tick_ns;
	uint64_t poll_ns;	 /* primary: the clock at this TX poll's start */
	uint64_t next_cut_ns;
	uint64_t cut_id;	 /* the last cut begun here */
	uint64_t newest_ts;	 /* the newest timestamp latched */
	uint64_t fence_hb_ns;	 /* the last HEARTBEAT sent to fence the old primary */
	uint32_t fence_hbs;	 /* of those, sent unasked after the takeover */
	/* ingress (RX unit) */
	uint64_t last_ts;	 /* the last timestamp admitted */
	uint64_t admitted;
	uint64_t admitted_replay; /* of those, with the REPLAY flag */
	uint64_t stale;		  /* timestamp not above the last admitted */
	uint64_t replay_covered;  /* replayed, at or below the applied cut: dropped */
	uint64_t before_takeover; /* standby: stamped input before a takeover, dropped */
	uint64_t gaps;		  /* timestamps skipped: lost on the link from the predecessor */
	uint64_t ts_new_base;	  /* jumps of RSYNC_GAP_NEW_BASE and more: a restarted predecessor */
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
	uint64_t first_in_ns; /* the first replayed packet admitted after a takeover */
	uint64_t takeover_txid, takeover_cut_ts;
	uint64_t replay_newest_ts;
	/* The replayed range (after_ts, replay_newest_ts] is admitted whole and
	 * in order: the next timestamp of it expected (past it: done), the
	 * REPLAY_ACKs telling the predecessor, and what a gap cost. */
	uint64_t replay_next;
	uint64_t replay_ack_ns;	    /* the last REPLAY_ACK sent */
	uint64_t replay_gap_ts;	    /* the last timestamp past a gap (0: none since the ack) */
	uint64_t replay_gap_drops;  /* replayed frames past a gap, dropped (sent again) */
	uint64_t replay_held_drops; /* ... read while the NFs' rings were full (sent again) */
	uint64_t replay_lost;	    /* of the range, never to come: the predecessor restarted */
	uint32_t replay_since_ack;  /* admitted in the replay since the last REPLAY_ACK */
	uint64_t replay_acks_sent;
	/* the chain's NFs' state (rsync_unit_state.c) */
	struct rsync_nf_ref nf[RSYNC_MAX_WINDOWS]; /* by window */
	uint16_t nwin;				  /* windows: the ranks of all positions */
	uint8_t win_pos[RSYNC_MAX_WINDOWS];	  /* a window's chain position */
	uint8_t win_rank[RSYNC_MAX_WINDOWS];	  /* ... and rank in its service */
	uint8_t win_first[MGR_CFG_MAX_CHAIN_LEN]; /* a position's first window */
	int16_t nd_slot[ONVM_MAX_NFS]; /* primary: the chain's NFs' slots, for nd_cut */
	uint16_t nd_n;
	uint32_t nd_regs;	  /* mgr.nf_registrations when nd_slot[] was listed */
	uint64_t nd_rescan_ns;
	uint64_t nd_seen;	  /* the highest nd_cut handed to the library */
	uint32_t marker_req;	  /* atomic: TX unit asks the RX unit for a marker */
	uint64_t marker_base;	  /* its base (written before marker_req) */
	bool marker_full;	  /* ... and whether it is a full cut (ONVM_MARKER_F_FULL) */
	uint64_t marker_id;	  /* its cut id (written before marker_req) */
	bool marker_out;	  /* TX unit: a marker is travelling */
	uint64_t marker_req_ns;
	uint64_t marker_seq;	  /* RX unit: the last cut id injected */
	uint32_t markers_queued;  /* TX unit: markers in the wait queue */
	uint64_t markers_wait_full; /* markers dropped: RSYNC_WAIT_MARKERS were waiting */
	uint64_t markers_not_awaited; /* at the exit: not the marker awaited (no cut) */
	uint64_t out_cut_room; /* dropped ahead of a marker: the stage kept for its cut was full */
	/* TX unit: released packets their ports have not taken yet, in order
	 * (rel_head first), and those the full queue dropped */
	struct rte_ring *rel;
	struct rte_mbuf *rel_head;
	uint64_t out_release_drops;
	uint64_t marker_ts; /* RX unit: the timestamp the awaited marker was sent with */
	/* Packets that would have crossed the chain's boundary where no log or
	 * latch is, dropped: into its NFs from a port other than its
	 * predecessor's (RX unit) or from an NF outside it (TX unit), and out
	 * of its NFs to an NF outside it (TX unit). */
	uint64_t in_unlogged_rx, in_unlogged_nf, out_escaped;
	uint64_t markers_injected, markers_lost, cuts_state, cuts_nf_failed;
	uint64_t cuts_nf_missing; /* of those failed: a window without a live NF */
	uint64_t layout_mismatch; /* standby: checks of a window layout unlike ours (per fragment) */
	uint64_t markers_dropped_seen; /* mgr.remote.markers_dropped when the marker out was asked for */
	uint64_t state_bytes_applied, state_apply_failed;
	uint64_t state_losses;	  /* standby: an NF's state lost (resynchronised by a full cut) */
	uint64_t full_too_big;	  /* primary: full cuts dropped for stage_state_kb */
	bool cut_after_full;	  /* primary: a full cut went out; the standby needs a later one */
	uint64_t full_cut_id;	  /* primary: ... that full cut's id */
	uint64_t full_cut_ns;	  /* ... and when it went out */
	uint64_t sby_tick_ns;	  /* standby: when rsync_standby_tick() is due (RX unit) */
	uint64_t takeovers_refused;
	uint32_t refused_epoch;	  /* the epoch of the last refused takeover (logged once) */
	/* standby, from the takeover on: the chain's clock (the primary's,
	 * carried on) less this node's CLOCK_MONOTONIC, in every chain NF's
	 * slot (nf_clock_ns()); atomic */
	int64_t clock_offset;
	uint32_t cancelled_epoch; /* standby: epochs up to it were given up: never taken */
	uint64_t promoted_ns;	  /* reprotect: made the chain's primary then (0: not) */
	uint64_t protects_refused; /* PROTECTs refused: no "reprotect", or not taken over */
	uint32_t protect_refused_epoch; /* ... the epoch last refused (counted once each) */
	bool nfs_parked;	  /* standby: every NF there and parked (RX unit; atomic) */
	uint64_t parked_check_ns; /* ... looked at again then */
	struct rsync_msg takeover_msg; /* standby: the REPLAY_START taken (echoed again) */
};

/* The chain's primary session, or NULL (a standby, not promoted): from any
 * thread but the RX unit, which publishes it. */
static inline struct rsync_primary *
rsync_pri(const struct rsync_chain *c)
{
	return __atomic_load_n(&c->pri, __ATOMIC_ACQUIRE);
}

extern struct rsync_chain rsync_chains[MGR_CFG_MAX_REMOTE];
extern int rsync_nchains;
/* Telemetry (its own thread) against mgr_rsync_fini() freeing the sessions. */
extern pthread_mutex_t rsync_fini_lock;

/* rsync_unit.c: a primary's RSync frames from its ring (TX unit), and its
 * HEARTBEAT to the predecessor when due. */
int rsync_unit_drain_ctl(struct rsync_chain *c, uint64_t now);
void rsync_unit_pred_heartbeat(struct rsync_chain *c, uint64_t now);
/* TX unit: send what was released and its ports did not take yet, as
 * they take it.  Returns the packets sent. */
int rsync_unit_release_drain(struct rsync_chain *c);

/* rsync_unit_state.c: the chain's NFs' state. */
int rsync_state_reserve(struct rsync_chain *c);		   /* start-up */
void rsync_state_pred_restarted(struct rsync_chain *c);	   /* a new predecessor run */
void rsync_state_request_marker(struct rsync_chain *c, uint64_t now); /* TX unit */
void rsync_state_nd(struct rsync_chain *c, uint64_t now); /* TX unit, per exit packet */
/* TX unit: a marker reached the exit; 0 (taken), -ENOBUFS (keep it waiting) */
int rsync_state_marker_at_exit(struct rsync_chain *c, struct rte_mbuf *m, uint64_t now);
bool rsync_state_ok(struct rsync_chain *c, uint16_t region, uint64_t offset, uint32_t len);
void rsync_state_apply(struct rsync_chain *c, uint16_t region, uint64_t offset, const void *data,
		       uint32_t len);
void rsync_state_unpark(struct rsync_chain *c); /* standby: at the takeover */
/* Shared by rsync_unit_state.c and rsync_unit_apply.c: the NF of window
 * `win` attached (NULL: none yet; looked for again at most every 10 ms
 * unless `force`), what it is, and the windows' layout tag. */
enum pos_kind { POS_UNKNOWN, POS_STATELESS, POS_STATE };
struct rsync_nf_ref *rsync_nf_at(struct rsync_chain *c, int win, bool force);
enum pos_kind rsync_window_kind(const struct rsync_chain *c, int win);
uint64_t rsync_layout_tag(const struct rsync_chain *c);
/* standby: every NF state was written into is still there; if not, the
 * state is lost (the library resynchronises) */
void rsync_state_check_all(struct rsync_chain *c);
/* standby: every NF of the chain is there and can take a full cut */
bool rsync_state_ready_for_full(struct rsync_chain *c);

#endif /* RSYNC_UNIT_PRIV_H */
