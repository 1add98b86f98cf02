/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * RSync on the primary node of a protected chain (docs/spec.md section 6): the
 * latch buffers and the coordinator side of the two-phase commit, without
 * I/O.  The owner (onvm_mgr's RSync unit) hands it every packet leaving the
 * chain, the consistent cuts markers bring, and the RSync messages that
 * arrive; the library calls back to transmit messages, and to release or
 * drop packets.
 *
 * Stages.  Packets leaving the chain fill the open stage (at most
 * cfg.stage_pkts packets, or until cfg.close_ns passed since its first
 * packet, or a cut closes it).  A closed stage is one transaction: PREPARE
 * fragments carry its META (previous transaction, cut, the cut it waits for, sizes)
 * and the TxTs delta (per flow, the highest timestamp in the stage); a cut's
 * state goes in CHECKPOINT fragments of the same transaction.  Up to
 * cfg.stages stages exist at once; they are released strictly in order.
 *
 * The release rule.  The head stage is released when
 *   (1) the standby voted for it -- never on a time-out: a stage whose vote
 *       does not come is sent again every cfg.retrans_ns, and after
 *       cfg.max_tries sends it is aborted together with every later closed
 *       stage (their packets are dropped and counted; the standby is told
 *       with ABORT, and nothing after it can be applied without it anyway);
 *   (2) if the chain made an ND decision the last cut before the stage does
 *       not cover (rsync_primary_nd() names a later cut id when the stage
 *       closes), a stage at or after it that carries a cut is voted
 *       too, with every stage between (the standby applies transactions
 *       only in chain order).  The cut's marker followed the stage's last
 *       packet through the chain, so the cut holds every ND decision that
 *       can have shaped the stage's packets.  Packets never take the last
 *       free stage, which is kept for that cut.
 * Released stages are confirmed with a cumulative COMMIT; once a stage with
 * a cut is released, LOG_TRIM tells the predecessor that its log up to the
 * cut's timestamp is no longer needed.
 *
 * Transactions are chained: each names the one before it (prev_txid), and an
 * abort rewinds the chain to the last surviving transaction, so the standby
 * never applies a transaction whose predecessor it lacks.  A cut is a delta
 * over the previous cut of the chain (its `base`): a cut whose base was
 * aborted is refused with -ESTALE and the owner must ask for a new one.
 *
 * Epochs.  Every message carries the chain's epoch.  A message of a higher
 * epoch means another node took over: the primary is fenced -- it releases
 * nothing more, drops what it holds (counted) and refuses new packets.
 *
 * Runs.  Each side's process has a run id (rsync_wire.h).  A VOTE or ACK
 * counts only if addressed to this primary's run: one recorded before a
 * restart of this node is refused (stale_run), so it can never release a
 * stage the standby did not vote for.  A standby heard with another run
 * than before restarted: the commits the one before never acknowledged are
 * given up (the new one resynchronises by itself, rsync_standby.h).  A
 * predecessor heard with another run than before (its HEARTBEATs) restarted
 * and lost its log: what left the chain since the last cut can no longer be
 * replayed, so every stage not released yet waits for a cut after it, as
 * for an ND decision (rsync_primary_nd), and the owner must get a marker
 * travelling.
 *
 * Single-threaded (the RSync unit's lcore).  The fast path (add, tick, rx)
 * allocates nothing and logs nothing.
 */
#ifndef RSYNC_PRIMARY_H
#define RSYNC_PRIMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rsync_txts.h"
#include "rsync_wire.h"

enum rsync_peer {
	RSYNC_PEER_STANDBY = 0,
	RSYNC_PEER_PREDECESSOR = 1,
};

struct rsync_primary_cfg {
	uint16_t chain;
	uint64_t run;		   /* this process's run id (not 0) */
	uint32_t epoch;		   /* the chain's epoch at start (>= 1) */
	uint32_t stages;	   /* latch stages, 2 .. RSYNC_MAX_STAGES */
	uint32_t stage_pkts;	   /* packets per stage, >= 1 */
	/* Packets the stage kept for a cut may take before it, beyond
	 * stage_pkts (rsync_primary_add_before_cut): the caller's queue of
	 * packets waiting for the latch; 0 when it has none. */
	uint32_t cut_extra_pkts;
	/* The chain's clock less the node's (the `now` every call is given):
	 * what the chain's NFs stamp their state with.  0 unless the chain
	 * took over from another node. */
	uint64_t clock_offset;
	uint64_t stage_state_bytes; /* state bytes one transaction may carry */
	uint32_t max_payload;	   /* fragment payload bytes, <= RSYNC_MAX_PAYLOAD */
	uint64_t close_ns;	   /* an open stage closes this long after its first packet */
	uint64_t retrans_ns;	   /* no vote this long after a send: send again */
	uint32_t max_tries;	   /* sends of a transaction before it is aborted, >= 1 */
	uint32_t standby_window;   /* transactions sent and not acknowledged, >= stages */
};

#define RSYNC_MAX_STAGES 64
#define RSYNC_LAT_BUCKETS 24 /* commit latency histogram: bucket i < 2^i us */

enum rsync_abort_reason {
	RSYNC_ABORT_NO_VOTE = 0, /* max_tries sends without a vote */
	RSYNC_ABORT_CASCADE,	 /* a stage before it was aborted */
	RSYNC_ABORT_FENCED,	 /* a newer epoch took over */
	RSYNC_ABORT_REASON_MAX,
};

struct rsync_primary_stats {
	uint64_t pkts_in;	    /* packets latched (rsync_primary_add*()) */
	uint64_t pkts_before_cut;   /* of those, into the stage kept for a cut, ahead of it */
	uint64_t pkts_released;
	uint64_t pkts_dropped[RSYNC_ABORT_REASON_MAX];
	uint64_t latch_full;	    /* adds refused: every stage busy */
	uint64_t fenced_refused;    /* adds refused: fenced */
	uint64_t bad_ts;	    /* adds refused: timestamp 0 */
	uint64_t stages_closed;
	uint64_t stages_released;
	uint64_t aborts[RSYNC_ABORT_REASON_MAX]; /* stages aborted, by reason */
	uint64_t frags_sent;
	uint64_t frags_retrans;
	uint64_t send_busy;	    /* sends the link refused (retried later) */
	uint64_t window_waits;	    /* sends held back: the standby's window is full */
	uint64_t votes;
	uint64_t commits_sent;
	uint64_t acks;
	uint64_t trims_sent;
	uint64_t cuts;		    /* cuts attached to a stage */
	uint64_t cuts_stale;	    /* cuts refused: their base was aborted */
	uint64_t cuts_too_old;	    /* cuts refused the last free stage: older than the one awaited */
	uint64_t cuts_too_big;	    /* cuts dropped: more than stage_state_bytes */
	uint64_t cuts_dropped;	    /* cuts dropped by the owner (an NF could not freeze) */
	uint64_t resyncs_asked;	    /* the standby asked for a full cut (RSYNC_F_RESYNC) */
	uint64_t full_cuts;	    /* full cuts begun for it */
	uint64_t nd_waits;	    /* releases held back by rule (2) (once per stage) */
	uint64_t standby_restarts;  /* the standby was heard with a new run */
	uint64_t pred_restarts;	    /* the predecessor was heard with a new run */
	uint64_t unacked_given_up;  /* commits a restarted standby can never acknowledge */
	uint64_t rx[RSYNC_RX_REASON_MAX]; /* messages by what became of them */
	uint64_t commit_lat_us[RSYNC_LAT_BUCKETS]; /* close -> release */
};

struct rsync_primary_ops {
	/* Transmit one message (m->h.chain/epoch/type/txid/fragments filled in)
	 * to `to`.  Returns 0, or -1 when the link cannot take it now: the
	 * library sends the rest later (rsync_primary_tick()). */
	int (*send)(void *ctx, enum rsync_peer to, const struct rsync_msg *m, const void *payload,
		    size_t len);
	/* `n` packets of released stages, in order: send them out. */
	void (*release)(void *ctx, void *const *pkts, uint32_t n);
	/* `n` packets of an aborted stage: free them. */
	void (*drop)(void *ctx, void *const *pkts, uint32_t n, enum rsync_abort_reason why);
};

struct rsync_primary;

/* Allocates everything (malloc) up front.  NULL on a bad configuration
 * (errno EINVAL) or no memory (ENOMEM). */
struct rsync_primary *rsync_primary_new(const struct rsync_primary_cfg *cfg,
					const struct rsync_primary_ops *ops, void *ctx,
					uint64_t seed);
/* Frees the library's memory; packets still held are handed to ops->drop. */
void rsync_primary_free(struct rsync_primary *p);

/*
 * A chain that ran before -- on a standby that took it over, now made its
 * primary with a new standby -- goes on here, before anything else is
 * called: at `epoch`, its clock `clock_offset` ahead of the node's, its
 * transactions continuing after `after_txid` (>= 1), serving predecessor
 * run `pred_run` (0: none heard; another heard later is a restart, as for
 * any primary).  Never from the origin (txid 0): a standby applying a
 * chain that starts there takes its empty state for a whole cut, and this
 * chain's state is not empty -- the new standby must learn that it joined
 * late and ask for a full cut.  Returns 0, or -EINVAL (used already, or
 * after_txid 0).
 */
int rsync_primary_resume(struct rsync_primary *p, uint32_t epoch, uint64_t after_txid,
			 uint64_t clock_offset, uint64_t pred_run);

/*
 * A packet left the chain: latch it.  `flow` is its flow as it entered the
 * chain, `ts` its logical timestamp.  Returns 0; -ENOBUFS when every stage is
 * busy (the caller keeps the packet and tries again after tick/rx: back
 * pressure, counted); -EPERM when fenced (counted); -EINVAL for timestamp 0
 * (counted); -EBUSY while a cut is open.
 */
int rsync_primary_add(struct rsync_primary *p, void *pkt, const struct rsync_flow *flow,
		      uint64_t ts, uint64_t now_ns);

/*
 * Every stage is busy and some wait for a cut (rsync_primary_stage_waits_cut)
 * while packets that left the chain before the marker of that cut wait for
 * room: latch them into the stage kept for the cut -- the open stage, or
 * the last free one -- which the cut then closes (rsync_primary_cut_begin),
 * so the cut follows every output it covers, in the stage that carries it.
 * The stage takes up to stage_pkts + cfg.cut_extra_pkts and is never closed
 * by its packet count here: the caller hands the cut's marker next.  Returns
 * as rsync_primary_add(); -ENOBUFS only with no stage left at all (or more
 * packets than the stage can take).
 */
int rsync_primary_add_before_cut(struct rsync_primary *p, void *pkt,
				 const struct rsync_flow *flow, uint64_t ts, uint64_t now_ns);
/* Whether the stage kept for a cut is open and can take no more packets
 * (a cut that was to close it failed, and the packets after it filled it):
 * the next cut's marker gets in only if what waits ahead of it does not
 * (the caller drops that, counted) -- stages waiting for a cut have no
 * other way out. */
bool rsync_primary_cut_stage_full(const struct rsync_primary *p);

/* An NF of the chain made an ND decision that only cut `nd_cut` or a later
 * one covers: the id of the first marker to pass that NF after the decision
 * (libnf publishes it as slot->nd_cut: the last marker it passed + 1).
 * Stages closing from now on wait for a cut at or after them if the chain's
 * last cut is older.  Cut ids, not timestamps: a decision in a tick, with no
 * packet between it and a marker, is ordered against that marker only by
 * the marker's id. */
void rsync_primary_nd(struct rsync_primary *p, uint64_t nd_cut);
/* Every stage not released yet, and every stage opened until cut `cut_id`
 * is made, waits for that cut (or a newer one) once voted: what it holds
 * came from input no log can replay any more (the predecessor restarted).
 * The library does so by itself with the next cut id when it hears a new
 * predecessor run; the owner names a later one when the marker of that cut
 * may have left ahead of input of the old run. */
void rsync_primary_hold_for_cut(struct rsync_primary *p, uint64_t cut_id);

/*
 * A cut's marker reached the end of the chain.  The open stage (or a new
 * one) takes the cut and closes after rsync_primary_cut_end().  `base_id` is
 * the cut the marker's delta is relative to.  Returns 0; -ESTALE when
 * base_id is not the chain's last cut (it was aborted: ask for a new cut
 * with rsync_primary_cut_base() as the base); -ENOBUFS when every stage is
 * busy; -EPERM when fenced; -EBUSY when a cut is already open.
 */
int rsync_primary_cut_begin(struct rsync_primary *p, uint64_t cut_id, uint64_t base_id,
			    uint64_t cut_ts, uint64_t now_ns);

/* The base id of a full cut: every chunk of every NF's state, a delta over
 * nothing (libnf freezes everything for a base it never saw).  Accepted by
 * cut_begin whatever the chain's last cut; its fragments carry
 * RSYNC_F_FULL.  Made when the standby asks to resynchronise. */
#define RSYNC_CUT_FULL UINT64_MAX

/* The standby asked for a full cut (it started late, or lost an NF's state)
 * and none is in flight: the owner must get a marker travelling with base
 * RSYNC_CUT_FULL. */
bool rsync_primary_full_wanted(const struct rsync_primary *p);
/* Bytes of the cut: `len` bytes at `offset` of chain-wide region `region`
 * (< RSYNC_REGION_MAX), copied now.  Returns 0, or -E2BIG when the cut
 * outgrows cfg.stage_state_bytes (the cut is then dropped at cut_end). */
int rsync_primary_cut_piece(struct rsync_primary *p, uint16_t region, uint64_t offset,
			    const void *data, uint32_t len);
/* The open cut cannot be whole (an NF of the chain failed to freeze it):
 * drop it -- cut_end() then returns -E2BIG and the stage goes without it,
 * so the owner asks for another cut. */
void rsync_primary_cut_drop(struct rsync_primary *p);
/* Close the cut's stage and send it.  Returns 0, or -E2BIG if the cut was
 * dropped (counted; the stage goes out without it). */
int rsync_primary_cut_end(struct rsync_primary *p, uint64_t now_ns);

/* The most CHECKPOINT payload bytes (state records, their headers
 * included) a cut carrying `bytes` bytes of state, in runs of at least
 * `chunk` bytes, can take: for sizing stage_state_bytes and the standby's
 * max_frags.  A transaction's state fragments are then at most
 * wire / (RSYNC_MAX_PAYLOAD - RSYNC_REC_HDR_LEN) + 1. */
static inline uint64_t
rsync_state_wire_bytes(uint64_t bytes, uint32_t chunk)
{
	/* a record per run, and one more per fragment a record is split at */
	uint64_t recs = (bytes + chunk - 1) / (chunk ? chunk : 1) +
			bytes / (RSYNC_MAX_PAYLOAD - 2 * RSYNC_REC_HDR_LEN) + 1;

	return bytes + recs * RSYNC_REC_HDR_LEN;
}

/* The base a new cut must name (the last cut of the chain of transactions),
 * its timestamp, and the highest cut timestamp covered by released stages. */
uint64_t rsync_primary_cut_base(const struct rsync_primary *p);
uint64_t rsync_primary_cut_base_ts(const struct rsync_primary *p);
uint64_t rsync_primary_released_cut_ts(const struct rsync_primary *p);
uint64_t rsync_primary_released_cut_id(const struct rsync_primary *p);
/* The cut id an ND decision waits for that no cut of the chain covers yet
 * (0: none): the owner must inject a marker when this is nonzero and none is
 * travelling. */
uint64_t rsync_primary_nd_uncovered(const struct rsync_primary *p);
/* Whether a cut is wanted now: an ND decision no cut covers, or a stage
 * waiting for a cut with none at or after it (the cut that would have
 * covered it was refused or dropped).  The owner must then get a marker
 * travelling. */
bool rsync_primary_needs_cut(const struct rsync_primary *p);
/* Only the second half: a closed stage waits for a cut none at or after it
 * carries, of the id it needs or newer (a marker queued behind packets must
 * then go ahead of them). */
bool rsync_primary_stage_waits_cut(const struct rsync_primary *p);
/* The busy stages, head first, for operators: state (O open, s sending,
 * S sent, V voted), packets, "c" carries a cut, "n" needs one. */
int rsync_primary_describe(const struct rsync_primary *p, char *buf, size_t len);

/* Timers: close an old open stage, resend, abort.  Returns the next time
 * (ns) it wants to be called, UINT64_MAX when nothing is pending. */
uint64_t rsync_primary_tick(struct rsync_primary *p, uint64_t now_ns);

/* A decoded message from the standby or the predecessor (the wire checks of
 * rsync_decode() done).  Returns what became of it (counted). */
enum rsync_rx_reason rsync_primary_rx(struct rsync_primary *p, const struct rsync_msg *m,
				      uint64_t now_ns);

/* The runs heard of the standby and of the predecessor (0: none yet). */
uint64_t rsync_primary_standby_run(const struct rsync_primary *p);
uint64_t rsync_primary_pred_run(const struct rsync_primary *p);

/* Operator switch-over or loss of the standby: fence now (as a newer epoch). */
void rsync_primary_fence(struct rsync_primary *p);

bool rsync_primary_fenced(const struct rsync_primary *p);
uint32_t rsync_primary_epoch(const struct rsync_primary *p);
uint32_t rsync_primary_stages_busy(const struct rsync_primary *p);
uint64_t rsync_primary_pkts_latched(const struct rsync_primary *p);
const struct rsync_primary_stats *rsync_primary_stats(const struct rsync_primary *p);

#endif /* RSYNC_PRIMARY_H */
