/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * rsync_primary_priv.h -- what the two files of RSync's primary side share:
 *   rsync_latch.c    the latch: stages, packets and TxTs deltas, cuts, and
 *                    building a closed stage's transaction (its fragments)
 *   rsync_primary.c  the two-phase commit: sending and resending, the release
 *                    rule, aborts, timers, messages from the peers, fencing
 * The contract of both is rsync_primary.h.
 *
 * The stages form a ring: stages[head .. head + used) are busy, oldest
 * first; only the newest may be OPEN.  A stage's life is
 *     OPEN -> SENDING -> SENT -> VOTED -> (released) FREE
 * with SENT -> SENDING on a retransmission and any closed state -> FREE on
 * an abort.
 */
#ifndef RSYNC_PRIMARY_PRIV_H
#define RSYNC_PRIMARY_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "rsync_primary.h"

enum stage_state {
	ST_FREE = 0,
	ST_OPEN,
	ST_SENDING, /* closed; fragments tx_next.. not sent yet */
	ST_SENT,    /* every fragment sent, waiting for the vote */
	ST_VOTED,
};

/* One fragment of a stage's transaction. */
struct piece {
	uint8_t type;	 /* RSYNC_PREPARE or RSYNC_CHECKPOINT */
	uint16_t region;
	uint32_t len;
	uint64_t offset; /* in the region (state) or in the TxTs delta */
	uint64_t body_off;
};

struct stage {
	enum stage_state state;
	bool started;	    /* at least one send round begun (counts in the window) */
	bool nd_wait_counted;
	bool needs_cut;	    /* an ND decision may have shaped it: a cut at or after it first */
	bool cut_open;	    /* between cut_begin and cut_end */
	bool cut_failed;    /* the cut outgrew the stage or lost its base */
	bool cut_dropped;   /* ... or the owner dropped it (rsync_primary_cut_drop) */
	bool cut_full;	    /* the cut is whole (base RSYNC_CUT_FULL): RSYNC_F_FULL */
	bool held_for_cut;  /* took packets ahead of a cut: only a cut closes it */
	uint64_t txid, prev_txid;
	uint64_t cut_id, cut_base, cut_ts;
	uint64_t nd_cut;	    /* the cut id it waits for (needs_cut), for META */
	uint64_t opened_ns, closed_ns, deadline_ns;
	uint64_t first_sent_ns; /* its first send round began: the abort counts from it */
	uint32_t tries;
	uint32_t tx_next;
	void **pkts;
	uint32_t n;
	struct rsync_txts delta;
	uint8_t *body;	    /* encoded TxTs entries, then the cut's bytes */
	uint64_t body_len;
	uint64_t txts_len;  /* bytes of body holding TxTs entries */
	struct piece *pieces; /* [0] is META */
	uint32_t n_pieces;
	uint32_t state_frags;
	uint64_t state_bytes;  /* CHECKPOINT payload bytes: records, headers included */
	/* The last state record written (cut_piece appends to it when the
	 * next bytes continue it): its header's place in body, its region and
	 * where it ends in the region; rec_hdr UINT64_MAX: none open. */
	uint64_t rec_hdr, rec_end;
	uint16_t rec_region;
	uint16_t rec_len;
};

struct rsync_primary {
	struct rsync_primary_cfg cfg;
	struct rsync_primary_ops ops;
	void *ctx;
	uint32_t epoch;
	bool fenced;
	struct rsync_peer_runs standby_run, pred_run; /* the peers' runs, as heard */
	struct stage stages[RSYNC_MAX_STAGES];
	uint32_t head, used;
	uint32_t cap_pkts;	/* packets a stage can hold: stage_pkts + cut_extra_pkts */
	uint32_t delta_cap;	/* TxTs delta slots per stage */
	uint64_t body_cap;	/* body bytes per stage */
	uint32_t piece_cap;	/* fragments per stage */
	uint32_t txts_per_frag; /* TxTs entries one fragment carries */
	uint64_t next_txid;	/* last txid handed out */
	uint64_t chain_txid;	/* newest closed, not aborted transaction */
	uint64_t chain_cut_id, chain_cut_ts; /* newest cut of that chain */
	uint64_t released_txid;
	uint64_t released_cut_id, released_cut_ts;
	uint64_t acked_txid;
	uint64_t nd_cut;		/* the lowest cut id covering every ND decision reported */
	/* Released transactions the standby has not acknowledged (oldest first). */
	uint64_t *unacked;
	uint32_t unacked_head, unacked_n;
	uint64_t commit_sent_ns;
	uint64_t trim_sent_ns, trim_sent_ts;
	/* The last ABORT, repeated with retransmissions until a vote or an ack
	 * of a later transaction arrives.  Older ranges whose ABORT was lost
	 * are not repeated: the standby frees them when the next live META
	 * names a predecessor below them (rsync_standby.c, in_a_known_gap). */
	uint64_t abort_first, abort_through;
	/* A standby's resynchronisation: it asked for a full cut (a VOTE with
	 * RSYNC_F_RESYNC) and none is in flight; the newest full cut released,
	 * whose ACK ends the asking; no new request before full_holdoff_ns. */
	bool full_wanted;
	uint64_t full_released_txid;
	uint64_t full_holdoff_ns;
	uint32_t full_backoff;	/* full cuts aborted in a row: the hold-off doubles */
	struct rsync_primary_stats stats;
};

static inline struct stage *
stage_at(struct rsync_primary *p, uint32_t k) /* k-th busy stage, 0 = head */
{
	return &p->stages[(p->head + k) % p->cfg.stages];
}

/* After a full cut is begun, the standby's requests are not heard for this
 * many retransmission periods (its votes for earlier transactions still say
 * it wants one). */
#define RSYNC_FULL_HOLDOFF_RETRANS 16
#define RSYNC_FULL_BACKOFF_MAX 6 /* the hold-off grows to 16 << 6 periods */

/* rsync_latch.c */
void rsync_stage_reset(struct stage *s);
/* OPEN -> SENDING: build the transaction, number it and chain it. */
void rsync_stage_close(struct rsync_primary *p, struct stage *s, uint64_t now);

/* rsync_primary.c: send what closed stages have left, oldest first. */
void rsync_primary_pump(struct rsync_primary *p, uint64_t now);

#endif /* RSYNC_PRIMARY_PRIV_H */
