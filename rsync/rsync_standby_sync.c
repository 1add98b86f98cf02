/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * RSync's standby side, applying (contract in rsync_standby.h): committed
 * transactions in chain order, the takeover's presumed commit, and joining
 * and resynchronising -- whether the state written so far is whole, whether
 * the standby is in sync, the HEARTBEATs that ask for a full cut.
 */
#include <errno.h>
#include <string.h>

#include "rsync_prefix.h"
#include "rsync_standby_priv.h"

static void
apply_slot(struct rsync_standby *s, struct slot *sl)
{
	const struct rsync_meta *mt = &sl->meta;
	uint32_t txts_frags = sl->frag_count - 1 - mt->state_frags;
	/* A cut frees every entry at or below it: first, so that its own
	 * entries (all at or below it, and unreserved) never need room. */
	uint64_t gc_ts = mt->cut_id != 0 ? mt->cut_ts : 0;

	if (gc_ts != 0)
		rsync_txts_gc(&s->txts, gc_ts);
	for (uint32_t f = 1; f <= txts_frags; f++) {
		const uint8_t *c = cell(s, sl, f);

		for (uint32_t i = 0; i < sl->desc[f].len / RSYNC_TXTS_WIRE_LEN; i++) {
			struct rsync_txts_entry e;
			struct rsync_flow fl = {0};

			rsync_txts_decode(c, i, &e);
			if (e.ts <= gc_ts)
				continue; /* the cut holds its packet: never processed again */
			fl.src_ip = e.src_ip;
			fl.dst_ip = e.dst_ip;
			fl.sport = e.sport;
			fl.dport = e.dport;
			fl.proto = e.proto;
			/* Cannot fail: the vote reserved room (pending_txts). */
			(void)rsync_txts_raise(&s->txts, &fl, e.ts);
			s->stats.applied_txts++;
		}
	}
	/* A full cut makes the state whole again (written from its first
	 * byte); without whole state a delta has nothing to apply to.  For a
	 * standby that is not in sync, any full cut restarts the wait for a
	 * later one: the primary may have made a second one whose marker went
	 * in before the first came out.  One already in sync stays so: its
	 * TxTs is whole, and the full cut is a cut of the chain like any other
	 * (a delayed RESYNC vote can bring one). */
	if (sl->full) {
		if (!(s->whole && s->synced)) {
			s->synced = false;
			s->full_cut_id = mt->cut_id;
		}
		s->whole = true;
		s->stats.full_applied++;
	}
	for (uint32_t f = txts_frags + 1; f < sl->frag_count; f++) {
		struct rsync_state_rec r;
		uint32_t pos = 0;

		/* Staged while the state was not whole, and whole now (a full
		 * cut just before it in the chain): its pieces were never
		 * checked against the standby chain -- check them now. */
		if (s->whole && sl->unchecked && !rsync_sby_recs_fit(s, cell(s, sl, f), sl->desc[f].len)) {
			rsync_standby_state_lost(s);
			s->stats.unchecked_refused++;
		}
		while (rsync_state_rec_next(cell(s, sl, f), sl->desc[f].len, &pos, &r)) {
			if (!s->whole) {
				s->stats.state_skipped += r.len;
				continue;
			}
			s->ops.apply_state(s->ctx, r.region, r.offset, r.data, r.len);
			s->stats.applied_state_bytes += r.len;
		}
	}
	s->applied.txid = sl->txid;
	s->ever_applied = true;
	if (mt->cut_id != 0) {
		/* In sync again at the first cut after the full one (its
		 * apply_state may have found the state lost again meanwhile). */
		if (!sl->full && s->whole && !s->synced && s->full_cut_id != 0 &&
		    mt->cut_id > s->full_cut_id)
			s->synced = true;
		s->applied.cut_id = mt->cut_id;
		s->applied.cut_ts = mt->cut_ts;
		s->stats.applied_cuts++;
	}
	s->stats.applied++;
	rsync_sby_slot_free(s, sl);
}

/*
 * The chain that ends at `tip`: from tip back along prev_txid to the last
 * applied transaction, into s->chain (newest first).  Walking back from a
 * transaction the primary named (COMMIT) or the newest one voted (takeover)
 * is what makes the chain unambiguous: after an abort whose ABORT was lost,
 * the aborted transaction and the one that replaced it both name the same
 * predecessor, and only the walk back from the live tip tells them apart.
 * Returns the number of links, or -1 when a link is not staged and voted
 * here; *origin: it starts at the chain's first transaction, on a standby
 * that never applied anything (in sync from the start).  O(chain length x
 * window).
 */
static int
walk_chain(struct rsync_standby *s, struct slot *tip, bool *origin)
{
	uint32_t n = 0;
	struct slot *next;

	*origin = false;
	for (struct slot *cur = tip; cur != NULL;) {
		uint64_t prev = cur->meta.prev_txid;

		if (!cur->voted || n == s->cfg.window)
			return -1;
		s->chain[n++] = cur;
		if (prev == s->applied.txid) {
			*origin = prev == 0 && !s->ever_applied;
			break;
		}
		/* Without whole state, a full cut starts the chain anew; so
		 * does the oldest link staged here (the ones before it were
		 * voted before this standby joined: no state is written until
		 * a full cut, and their TxTs entries are all at or below the
		 * cut that brings it in sync -- rsync_standby.h). */
		if (!s->whole && cur->full)
			break;
		if (prev < s->applied.txid)
			return -1; /* branches off before what is applied */
		next = rsync_sby_slot_find(s, prev);
		if (next == NULL && !s->whole)
			break;
		if (next == NULL)
			return -1;
		cur = next;
	}
	return (int)n;
}

/* Apply the `n` links walk_chain() left in s->chain, oldest first. */
static void
apply_walked(struct rsync_standby *s, uint32_t n, bool origin)
{
	if (origin && s->whole)
		s->synced = true;
	for (uint32_t i = n; i-- > 0;)
		apply_slot(s, s->chain[i]);
}

static int
apply_chain_to(struct rsync_standby *s, struct slot *tip)
{
	bool origin;
	int n = walk_chain(s, tip, &origin);

	if (n >= 0)
		apply_walked(s, (uint32_t)n, origin);
	return n;
}

/* Whether a slot's pieces staged unchecked all fit the standby chain now
 * (apply_slot would refuse one, and make the state not whole). */
static bool
unchecked_pieces_fit(const struct rsync_standby *s, const struct slot *sl)
{
	uint32_t txts_frags = sl->frag_count - 1 - sl->meta.state_frags;

	for (uint32_t f = txts_frags + 1; f < sl->frag_count; f++)
		if (!rsync_sby_recs_fit(s, cell(s, sl, f), sl->desc[f].len))
			return false;
	return true;
}

/* Whether applying the walked chain would leave this standby in sync (the
 * same rules as apply_slot, without applying anything -- pieces staged
 * unchecked are checked, as apply_slot would). */
static bool
walked_would_sync(const struct rsync_standby *s, uint32_t n, bool origin)
{
	bool whole = s->whole, synced = s->synced, was_whole = s->whole;
	uint64_t full_id = s->full_cut_id;

	if (origin && whole)
		synced = true;
	for (uint32_t i = n; i-- > 0;) {
		const struct slot *sl = s->chain[i];
		uint64_t cut = sl->meta.cut_id;

		if (sl->full) {
			if (!(whole && synced)) {
				synced = false;
				full_id = cut;
			}
			whole = true;
		}
		/* (The owner's check may find an NF's state lost, and say so:
		 * the state is then not whole, whatever the chain.) */
		if (whole && sl->unchecked && !unchecked_pieces_fit(s, sl))
			return false;
		if (!sl->full && cut != 0 && whole && !synced && full_id != 0 && cut > full_id)
			synced = true;
	}
	return synced && !(was_whole && !s->whole);
}

/* A COMMIT's chain reaches back past anything staged here, and nothing was
 * ever applied: this standby started while the chain ran (the links it
 * lacks were voted by an earlier incarnation).  Its NFs hold no cut. */
static void
joined_late(struct rsync_standby *s)
{
	if (s->ever_applied || !s->whole)
		return;
	s->whole = false;
	s->synced = false;
	s->stats.joins++;
}

/*
 * Of the `n` links walk_chain() left in s->chain (newest first), how many
 * -- the oldest ones -- the primary could have released: the longest prefix
 * release rule 2 lets go (rsync_prefix.h, the rule the primary releases
 * by), kept at the front of s->chain, newest first.  The links after it
 * are never presumed committed: their packets come after the state
 * applied, and the replay makes their outputs again instead of
 * suppressing them as released.
 */
static uint32_t
releasable_prefix(struct rsync_standby *s, uint32_t n)
{
	struct rsync_prefix_scan sc = {0};
	uint32_t keep = 0;

	for (uint32_t k = 0; k < n; k++) { /* oldest first: s->chain[n - 1 - k] */
		const struct slot *sl = s->chain[n - 1 - k];

		rsync_prefix_add(&sc, sl->meta.cut_id, sl->meta.cut_id == 0 ? sl->meta.nd_cut : 0);
		if (rsync_prefix_ok(&sc))
			keep = k + 1;
	}
	if (keep < n) {
		s->stats.takeover_unreleasable += n - keep;
		/* keep s->chain[n - keep .. n) (the oldest), newest first */
		memmove(&s->chain[0], &s->chain[n - keep], keep * sizeof(s->chain[0]));
	}
	return keep;
}

int
rsync_standby_takeover(struct rsync_standby *s, uint32_t new_epoch,
		       struct rsync_standby_applied *out)
{
	if (new_epoch <= s->epoch)
		return -ESTALE;
	/* Once: the node runs the chain from then on (a later attempt's
	 * REPLAY_START, delayed, must not start the replay again). */
	if (s->taken_over)
		return -EALREADY;
	/* The newest voted transaction whose chain is complete: every released
	 * one is in it (a transaction's chain holds every transaction closed
	 * before it and not aborted, and a released one was voted). */
	int n = 0;
	bool origin = false;

	for (;;) {
		struct slot *tip = NULL;

		for (uint32_t i = 0; i < s->cfg.window; i++) {
			struct slot *sl = &s->slots[i];

			if (sl->used && sl->voted && !sl->dead && (tip == NULL || sl->txid > tip->txid))
				tip = sl;
		}
		if (tip == NULL) {
			n = 0;
			break;
		}
		n = walk_chain(s, tip, &origin);
		if (n >= 0)
			break;
		tip->dead = true; /* its chain has a hole: try the next newest */
	}
	for (uint32_t i = 0; i < s->cfg.window; i++)
		s->slots[i].dead = false;
	n = (int)releasable_prefix(s, (uint32_t)n);
	/* Not in sync even with the voted chain (it started late, or an NF's
	 * state was lost, and it is not resynchronised yet): its state is not
	 * a cut of the chain.  Nothing is applied -- a voted transaction may
	 * still be aborted by a live primary -- and it stays the current
	 * epoch's standby. */
	if (!walked_would_sync(s, (uint32_t)n, origin)) {
		s->stats.takeovers_not_synced++;
		return -ENOTRECOVERABLE;
	}
	for (int i = 0; i < n; i++) /* (before apply_walked() frees the slots) */
		s->stats.takeover_presumed_pkts += s->chain[i]->meta.pkts;
	apply_walked(s, (uint32_t)n, origin);
	s->stats.takeover_applied += (uint64_t)n;
	if (!s->synced) {
		/* A piece staged unchecked was refused as it was applied. */
		s->stats.takeovers_not_synced++;
		return -ENOTRECOVERABLE;
	}
	for (uint32_t i = 0; i < s->cfg.window; i++)
		if (s->slots[i].used)
			rsync_sby_slot_free(s, &s->slots[i]);
	s->epoch = new_epoch;
	s->taken_over = true;
	s->stats.takeovers++;
	if (out != NULL)
		*out = s->applied;
	return 0;
}

uint64_t
rsync_standby_tick(struct rsync_standby *s, uint64_t now)
{
	struct rsync_msg m = {0};

	if (s->taken_over || (s->whole && s->ever_applied))
		return now + RSYNC_RESYNC_HB_NS;
	if (now < s->resync_hb_ns)
		return s->resync_hb_ns;
	/* A fresh standby that hears transactions is about to learn, at its
	 * first COMMIT, whether it started late: only a quiet one asks (an
	 * on-time standby of a running chain must not trigger a full cut). */
	if (s->whole && s->last_rx_ns != 0 && now - s->last_rx_ns < RSYNC_RESYNC_HB_NS) {
		s->resync_hb_ns = s->last_rx_ns + RSYNC_RESYNC_HB_NS;
		return s->resync_hb_ns;
	}
	s->resync_hb_ns = now + RSYNC_RESYNC_HB_NS;
	if (s->ops.ready_for_full != NULL && !s->ops.ready_for_full(s->ctx))
		return s->resync_hb_ns;
	m.h.version = RSYNC_VERSION;
	m.h.type = RSYNC_HEARTBEAT;
	m.h.flags = RSYNC_F_RESYNC;
	m.h.chain = s->cfg.chain;
	m.h.epoch = s->epoch;
	m.h.role = RSYNC_ROLE_STANDBY;
	m.h.sender_run = s->cfg.run;
	m.h.receiver_run = s->primary_run;
	m.h.frag_count = 1;
	m.u.heartbeat.txid = s->applied.txid;
	m.u.heartbeat.cut_ts = s->applied.cut_ts;
	(void)s->ops.send(s->ctx, &m);
	s->stats.resync_hbs++;
	return s->resync_hb_ns;
}

void
rsync_standby_state_lost(struct rsync_standby *s)
{
	s->whole = false;
	s->synced = false;
	s->full_cut_id = 0;
	s->stats.state_losses++;
}

bool
rsync_standby_whole(const struct rsync_standby *s)
{
	return s->whole;
}

bool
rsync_standby_synced(const struct rsync_standby *s)
{
	return s->synced;
}


int
rsync_sby_commit(struct rsync_standby *s, struct slot *tip)
{
	int n = tip != NULL ? apply_chain_to(s, tip) : -1;

	/* A COMMIT of what was never staged here, or whose chain reaches back
	 * past it, before anything was applied: this standby started late. */
	if (tip == NULL) {
		if (!s->ever_applied)
			joined_late(s);
		return -1;
	}
	if (n < 0 && !s->ever_applied) {
		/* Its chain reaches back past what was ever staged here: this
		 * standby started late. */
		joined_late(s);
		n = apply_chain_to(s, tip);
	}
	return n;
}
