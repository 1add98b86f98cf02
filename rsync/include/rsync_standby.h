/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * RSync on the standby node of a protected chain (docs/spec.md section 6): the
 * participant side of the two-phase commit and the TxTs table, without I/O.
 *
 * Staging.  PREPARE and CHECKPOINT fragments are staged per transaction
 * (cfg.window transactions at once, each of at most cfg.max_frags
 * fragments).  Only when a transaction is whole -- every fragment present,
 * the TxTs pieces contiguous and as long as META says, the state pieces as
 * many and as long as META says and each inside a region of the standby
 * chain (ops->state_ok) -- does the standby VOTE, and only if the TxTs table
 * is sure to have room for its entries.  A duplicate META of a voted
 * transaction repeats the VOTE (the first one may have been lost).
 *
 * Applying.  Transactions are applied in chain order.  COMMIT(t) applies
 * the chain that ends at t (walking back from t along prev_txid to the last
 * applied transaction: after an abort whose ABORT was lost, an aborted
 * transaction and its replacement name the same predecessor, and only the
 * walk back from the live tip tells them apart), discards what is staged at
 * or below t and not applied (transactions the primary aborted), and is
 * answered with ACK of the last applied txid.  Applying merges the TxTs delta (per flow max),
 * writes the state pieces through ops->apply_state, and, for a cut, forgets
 * TxTs entries at or below the cut's timestamp: after a takeover no packet
 * at or below the applied cut is processed again, so they can never match.
 *
 * Takeover (REPLAY_START, handled by the owner): the chain that ends at the
 * newest voted transaction whose chain is complete is applied -- it holds
 * every stage the primary may have released without its COMMIT arriving --
 * the rest is discarded, and the
 * epoch moves to the new one, after which every message of an older epoch
 * is refused: a falsely suspected primary can never get another vote.
 *
 * Joining and resynchronising.  Cuts are deltas, and a transaction chain
 * names its predecessor.  A standby that starts while the chain runs (its
 * first COMMIT names a chain that reaches back past what it ever staged),
 * or whose owner reports an NF's state lost (rsync_standby_state_lost), no
 * longer holds whole state: it goes on voting -- refusing would stop the
 * healthy primary -- but writes no state, flags its votes RSYNC_F_RESYNC
 * (once ops->ready_for_full says its NFs can take state), and the primary
 * answers with a full cut (RSYNC_F_FULL: every chunk).  A full transaction
 * starts a chain anew for a standby without whole state.  It is in sync
 * again -- may take over -- once a later cut is applied too: every packet
 * released before the full cut's stage entered the chain before that later
 * cut's marker, so the cut holds it and no TxTs entry it lacks can matter.
 * A standby in sync from the chain's first transaction (prev_txid 0) is in
 * sync from the start.  Until in sync, takeover is refused.
 *
 * Runs.  The standby serves the primary run it first hears (rsync_wire.h).
 * A primary heard with another run later restarted: its NFs' state is gone,
 * so its transactions must not become the standby's -- every message of
 * the new run is refused (peer_restarted) until a takeover (the predecessor
 * fails the chain over when it hears the restart).  COMMIT and ABORT count
 * only if addressed to this standby's run (stale_run): one recorded before
 * the standby restarted never applies or discards anything of the new run.
 * A transaction's fragments grant nothing by themselves and are taken
 * whatever run they were addressed to.
 *
 * Single-threaded (the RSync unit's lcore); no allocation after _new().
 */
#ifndef RSYNC_STANDBY_H
#define RSYNC_STANDBY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rsync_txts.h"
#include "rsync_wire.h"

struct rsync_standby_cfg {
	uint16_t chain;
	uint64_t run;		/* this process's run id (not 0) */
	uint32_t epoch;		/* the chain's epoch at start (>= 1) */
	uint32_t window;	/* transactions staged at once (>= the primary's window) */
	uint32_t max_frags;	/* fragments one transaction may have */
	uint32_t txts_capacity;	/* TxTs table slots, a power of two */
};

struct rsync_standby_ops {
	/* Transmit a VOTE or ACK to the primary.  0, or -1 if the link is
	 * busy (the primary's retransmission brings it back). */
	int (*send)(void *ctx, const struct rsync_msg *m);
	/* Whether `len` bytes at `offset` of region `region` exist in the
	 * standby chain.  A transaction with a piece outside is never voted. */
	bool (*state_ok)(void *ctx, uint16_t region, uint64_t offset, uint32_t len);
	/* Write committed state into the standby chain. */
	void (*apply_state)(void *ctx, uint16_t region, uint64_t offset, const void *data,
			    uint32_t len);
	/* Optional: whether the standby chain can take a full cut now (every
	 * NF there and ready); votes ask for one only then.  NULL: always. */
	bool (*ready_for_full)(void *ctx);
};

struct rsync_standby_stats {
	uint64_t rx[RSYNC_RX_REASON_MAX]; /* messages by what became of them */
	uint64_t votes;
	uint64_t revotes;	/* votes repeated for a duplicate META */
	uint64_t acks;
	uint64_t applied;	/* transactions applied */
	uint64_t applied_cuts;
	uint64_t applied_state_bytes;
	uint64_t applied_txts;	/* TxTs entries merged */
	uint64_t aborted;	/* staged transactions discarded by ABORT */
	uint64_t orphans;	/* aborted ones discarded without their ABORT (by a COMMIT or a META) */
	uint64_t incomplete;	/* transactions whose fragments disagree with META */
	uint64_t txts_no_room;	/* transactions refused: the TxTs table could not take them */
	uint64_t takeovers;
	uint64_t takeover_applied; /* voted, uncommitted transactions applied at takeover */
	uint64_t takeover_presumed_pkts; /* ... their packets: released, or lost (presumed commit) */
	/* Voted, uncommitted transactions not applied at takeover: waiting
	 * for a cut (an ND decision) with none voted at or after them, so the
	 * primary could not have released them; the replay makes them again. */
	uint64_t takeover_unreleasable;
	uint64_t takeovers_not_synced; /* refused: not in sync (see above) */
	uint64_t joins;		   /* started while the chain ran: state not whole */
	uint64_t state_losses;	   /* rsync_standby_state_lost() */
	uint64_t resync_votes;	   /* votes that asked for a full cut */
	uint64_t full_applied;	   /* full cuts applied */
	uint64_t state_skipped;	   /* state bytes not written: the state was not whole */
	uint64_t unchecked_refused; /* pieces staged unchecked that state_ok refused at apply */
	uint64_t resync_hbs;	   /* HEARTBEATs that asked for a full cut */
	uint64_t primary_restarts; /* messages of a new primary run first heard (once per run) */
	uint64_t primary_runs_taken_back; /* runs served instead of one of which nothing was applied */
};

/* What has been applied so far. */
struct rsync_standby_applied {
	uint64_t txid;
	uint64_t cut_id;
	uint64_t cut_ts;
};

struct rsync_standby;

/* Allocates everything up front: window * max_frags * RSYNC_MAX_PAYLOAD bytes
 * of staging and the TxTs table.  NULL with errno EINVAL or ENOMEM. */
struct rsync_standby *rsync_standby_new(const struct rsync_standby_cfg *cfg,
					const struct rsync_standby_ops *ops, void *ctx,
					uint64_t seed);
void rsync_standby_free(struct rsync_standby *s);

/* A decoded message from the primary (the wire checks of rsync_decode()
 * done).  Returns what became of it (counted).  REPLAY_START/END and
 * LOG_TRIM are not for this layer (RSYNC_RX_WRONG_ROLE). */
enum rsync_rx_reason rsync_standby_rx(struct rsync_standby *s, const struct rsync_msg *m,
				      uint64_t now_ns);

/* Take the chain over in `new_epoch`: apply the voted chain as far as the
 * primary could have released it (presumed commit; a transaction waiting
 * for a cut -- META nd_cut -- with no cut voted at or after it could not
 * have been, and neither could any after it: those are discarded with the
 * rest, and the replay makes their outputs again), refuse older epochs
 * from now on.  Returns 0 and what is applied in `out`; -ESTALE when
 * new_epoch is not above the current epoch; -EALREADY once it took over
 * (it runs the chain: never taken over twice); -ENOTRECOVERABLE when, the
 * voted chain applied, the standby is not in sync (nothing else changes:
 * it stays a standby of the current epoch). */
int rsync_standby_takeover(struct rsync_standby *s, uint32_t new_epoch,
			   struct rsync_standby_applied *out);

/* The flow's committed TxTs: outputs with ts <= this were released already. */
uint64_t rsync_standby_txts(const struct rsync_standby *s, const struct rsync_flow *flow);
uint32_t rsync_standby_txts_entries(const struct rsync_standby *s);

/* Timers: while the standby's state is not whole, or it has applied nothing
 * yet (a fresh standby cannot tell whether it started late before its first
 * COMMIT), and its chain can take a full cut, a HEARTBEAT with
 * RSYNC_F_RESYNC every RSYNC_RESYNC_HB_NS -- so a standby restarted on an
 * idle chain is resynchronised too.  Returns when to call again. */
#define RSYNC_RESYNC_HB_NS (50 * 1000 * 1000ull)
uint64_t rsync_standby_tick(struct rsync_standby *s, uint64_t now_ns);

/* The owner's copy of an NF's state can no longer be trusted (the NF was
 * restarted, or a voted piece could not be written): resynchronise. */
void rsync_standby_state_lost(struct rsync_standby *s);
/* Whether the standby holds whole state (writes what it applies), and
 * whether it is in sync (may take over). */
bool rsync_standby_whole(const struct rsync_standby *s);
bool rsync_standby_synced(const struct rsync_standby *s);

void rsync_standby_get_applied(const struct rsync_standby *s, struct rsync_standby_applied *out);
/* This standby's run id, and the primary run it serves (0: none heard). */
uint64_t rsync_standby_run(const struct rsync_standby *s);
uint64_t rsync_standby_primary_run(const struct rsync_standby *s);
/* The primary's chain clock now, as this standby reckons it: the newest
 * META's (its clock when it closed the stage) plus the time since it came
 * (`now` on this side's clock).  0 before any META.  After a takeover the
 * owner runs its NFs on this clock: stamps in the state keep their age. */
uint64_t rsync_standby_primary_clock(const struct rsync_standby *s, uint64_t now_ns);
uint32_t rsync_standby_epoch(const struct rsync_standby *s);
uint32_t rsync_standby_staged(const struct rsync_standby *s);
bool rsync_standby_taken_over(const struct rsync_standby *s);
const struct rsync_standby_stats *rsync_standby_stats(const struct rsync_standby *s);

#endif /* RSYNC_STANDBY_H */
