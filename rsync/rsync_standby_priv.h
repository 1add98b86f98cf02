/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The standby side's internals, shared by rsync_standby.c (staging, voting,
 * the primary's messages) and rsync_standby_sync.c (applying, the takeover,
 * joining and resynchronising).
 */
#ifndef RSYNC_STANDBY_PRIV_H
#define RSYNC_STANDBY_PRIV_H

#include "rsync_standby.h"

struct frag_desc {
	uint8_t type;
	uint16_t region;
	uint32_t len;
	uint64_t offset;
};

struct slot {
	bool used;
	bool voted;
	bool dead;	       /* takeover: its chain cannot be completed */
	bool full;	       /* its cut is whole (RSYNC_F_FULL on its META) */
	bool unchecked;	       /* a state piece staged without ops->state_ok (piece_checked) */
	bool full_seen;	       /* its fragments carry RSYNC_F_FULL (all or none) */
	uint64_t txid;
	uint32_t txts_reserved; /* voted: TxTs entries its apply may add (pending_txts) */
	uint16_t frag_count;
	uint32_t received;
	struct rsync_meta meta;
	uint64_t *have;	       /* bitmap of received fragments */
	struct frag_desc *desc;
	uint8_t *cells;	       /* max_frags cells of RSYNC_MAX_PAYLOAD bytes */
};

struct rsync_standby {
	struct rsync_standby_cfg cfg;
	struct rsync_standby_ops ops;
	void *ctx;
	uint32_t epoch;
	bool taken_over;
	uint64_t primary_run;	/* the primary run served (0: none heard yet) */
	/* The newest chain clock a META brought, and when (this side's now). */
	uint64_t primary_clock, primary_clock_rx_ns;
	uint64_t restarted_run;	/* the last other primary run refused (counted once) */
	uint32_t other_run_n;	/* ... heard this many times in a row */
	struct slot *slots;
	struct slot **chain;   /* scratch: a chain being applied (window entries) */
	uint32_t staged;
	uint64_t aborted_through;
	uint64_t pending_txts; /* TxTs entries of voted, unapplied transactions */
	struct rsync_standby_applied applied;
	/* Joining and resynchronising (rsync_standby.h): whether the state
	 * written so far is whole, whether this standby is in sync, whether
	 * it ever applied anything, and the full cut it restarted from. */
	bool whole, synced, ever_applied;
	uint64_t full_cut_id;
	uint64_t resync_hb_ns;	/* the next HEARTBEAT asking for a full cut */
	uint64_t last_rx_ns;	/* the last PREPARE/CHECKPOINT/COMMIT from the primary */
	struct rsync_txts txts;
	struct rsync_standby_stats stats;
};

static inline uint8_t *
cell(const struct rsync_standby *s, const struct slot *sl, uint32_t seq)
{
	(void)s;
	return sl->cells + (size_t)seq * RSYNC_MAX_PAYLOAD;
}

/* Whether every state record of a CHECKPOINT payload fits the standby
 * chain (ops->state_ok).  O(records). */
static inline bool
rsync_sby_recs_fit(const struct rsync_standby *s, const uint8_t *payload, uint32_t len)
{
	struct rsync_state_rec r;
	uint32_t pos = 0;

	while (rsync_state_rec_next(payload, len, &pos, &r))
		if (!s->ops.state_ok(s->ctx, r.region, r.offset, r.len))
			return false;
	return true;
}

/* rsync_standby.c */
struct slot *rsync_sby_slot_find(struct rsync_standby *s, uint64_t txid);
void rsync_sby_slot_free(struct rsync_standby *s, struct slot *sl);

/* rsync_standby_sync.c: COMMIT of the chain that ends at `tip` (NULL: not
 * staged here; a standby that started late is found out here).  Returns the
 * transactions applied, or -1 (nothing applied). */
int rsync_sby_commit(struct rsync_standby *s, struct slot *tip);

#endif /* RSYNC_STANDBY_PRIV_H */
