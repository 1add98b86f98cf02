/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * RSync's standby side (contract in rsync_standby.h).
 *
 * Each staging slot holds one transaction: a descriptor and a fixed
 * RSYNC_MAX_PAYLOAD-byte cell per fragment sequence number, and a bitmap of
 * the fragments received.  Fixed cells make reassembly free of bookkeeping
 * (fragment i lives in cell i whatever order fragments arrive in) at the
 * cost of memory: window * max_frags * RSYNC_MAX_PAYLOAD bytes, allocated
 * once.
 *
 * Which transactions can still arrive: anything staged, or a txid above both
 * the last applied one and the last aborted one.  Everything else is a late
 * duplicate (the network duplicated or delayed it) and is refused, so a
 * transaction is never staged twice nor applied twice.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

struct rsync_standby *
rsync_standby_new(const struct rsync_standby_cfg *cfg, const struct rsync_standby_ops *ops,
		  void *ctx, uint64_t seed)
{
	struct rsync_standby *s;
	void *tmem;

	if (cfg == NULL || ops == NULL || ops->send == NULL || ops->state_ok == NULL ||
	    ops->apply_state == NULL || cfg->epoch < 1 || cfg->window < 1 ||
	    cfg->window > 1024 || cfg->max_frags < 2 || cfg->max_frags > UINT16_MAX ||
	    cfg->txts_capacity < 4 || (cfg->txts_capacity & (cfg->txts_capacity - 1)) != 0) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->cfg = *cfg;
	s->ops = *ops;
	s->ctx = ctx;
	s->epoch = cfg->epoch;
	/* Whole until shown otherwise (a first COMMIT that reaches back past
	 * what was staged here); in sync only once something is applied. */
	s->whole = true;
	s->slots = calloc(cfg->window, sizeof(*s->slots));
	s->chain = calloc(cfg->window, sizeof(*s->chain));
	tmem = malloc(rsync_txts_mem_size(cfg->txts_capacity, false));
	if (s->slots == NULL || s->chain == NULL || tmem == NULL) {
		free(tmem);
		goto nomem;
	}
	rsync_txts_init(&s->txts, tmem, cfg->txts_capacity, false, seed);
	for (uint32_t i = 0; i < cfg->window; i++) {
		struct slot *sl = &s->slots[i];

		sl->have = calloc((cfg->max_frags + 63) / 64, sizeof(uint64_t));
		sl->desc = calloc(cfg->max_frags, sizeof(*sl->desc));
		sl->cells = malloc((size_t)cfg->max_frags * RSYNC_MAX_PAYLOAD);
		if (sl->have == NULL || sl->desc == NULL || sl->cells == NULL)
			goto nomem;
	}
	return s;
nomem:
	rsync_standby_free(s);
	errno = ENOMEM;
	return NULL;
}

void
rsync_standby_free(struct rsync_standby *s)
{
	if (s == NULL)
		return;
	for (uint32_t i = 0; s->slots != NULL && i < s->cfg.window; i++) {
		free(s->slots[i].have);
		free(s->slots[i].desc);
		free(s->slots[i].cells);
	}
	free(s->slots);
	free(s->chain);
	free(s->txts.slots);
	free(s);
}

static void
slot_free(struct rsync_standby *s, struct slot *sl)
{
	if (sl->voted)
		s->pending_txts -= sl->meta.txts_entries;
	memset(sl->have, 0, (s->cfg.max_frags + 63) / 64 * sizeof(uint64_t));
	sl->used = sl->voted = sl->dead = sl->full = sl->unchecked = sl->full_seen = false;
	sl->txid = 0;
	sl->frag_count = 0;
	sl->received = 0;
	memset(&sl->meta, 0, sizeof(sl->meta));
	s->staged--;
}

static struct slot *
slot_find(struct rsync_standby *s, uint64_t txid)
{
	for (uint32_t i = 0; i < s->cfg.window; i++)
		if (s->slots[i].used && s->slots[i].txid == txid)
			return &s->slots[i];
	return NULL;
}

static struct slot *
slot_new(struct rsync_standby *s, uint64_t txid, uint16_t frag_count)
{
	for (uint32_t i = 0; i < s->cfg.window; i++) {
		struct slot *sl = &s->slots[i];

		if (!sl->used) {
			sl->used = true;
			sl->txid = txid;
			sl->frag_count = frag_count;
			s->staged++;
			return sl;
		}
	}
	return NULL;
}

static void
send_reply(struct rsync_standby *s, uint8_t type, uint64_t txid)
{
	struct rsync_msg m = {0};

	/* A standby without whole state asks for a full cut with its votes,
	 * once its chain can take one. */
	if (type == RSYNC_VOTE && !s->whole &&
	    (s->ops.ready_for_full == NULL || s->ops.ready_for_full(s->ctx))) {
		m.h.flags = RSYNC_F_RESYNC;
		s->stats.resync_votes++;
	}
	m.h.version = RSYNC_VERSION;
	m.h.type = type;
	m.h.chain = s->cfg.chain;
	m.h.epoch = s->epoch;
	m.h.txid = txid;
	m.h.frag_count = 1;
	/* A reply the link refuses is lost like one dropped on the wire: the
	 * primary's retransmission (PREPARE or COMMIT) asks again. */
	(void)s->ops.send(s->ctx, &m);
}

/*
 * A slot has every fragment: check it against its META.  Layout the
 * primary sends: 0 = META, 1 .. t = TxTs pieces (offsets contiguous from 0),
 * t + 1 .. = CHECKPOINT pieces.
 */
static bool
slot_whole(const struct rsync_standby *s, const struct slot *sl)
{
	const struct rsync_meta *mt = &sl->meta;
	uint32_t txts_frags, f;
	uint64_t off = 0, state_bytes = 0;

	if (mt->state_frags >= sl->frag_count)
		return false;
	txts_frags = sl->frag_count - 1 - mt->state_frags;
	for (f = 1; f <= txts_frags; f++) {
		const struct frag_desc *d = &sl->desc[f];

		if (d->type != RSYNC_PREPARE || d->region != RSYNC_REGION_TXTS || d->offset != off)
			return false;
		off += d->len;
	}
	if (off != (uint64_t)mt->txts_entries * RSYNC_TXTS_WIRE_LEN)
		return false;
	for (; f < sl->frag_count; f++) {
		const struct frag_desc *d = &sl->desc[f];

		if (d->type != RSYNC_CHECKPOINT || d->region >= RSYNC_REGION_MAX)
			return false;
		state_bytes += d->len;
	}
	if (state_bytes != mt->state_bytes)
		return false;
	(void)s;
	return true;
}

static void
apply_slot(struct rsync_standby *s, struct slot *sl)
{
	const struct rsync_meta *mt = &sl->meta;
	uint32_t txts_frags = sl->frag_count - 1 - mt->state_frags;

	for (uint32_t f = 1; f <= txts_frags; f++) {
		const uint8_t *c = cell(s, sl, f);

		for (uint32_t i = 0; i < sl->desc[f].len / RSYNC_TXTS_WIRE_LEN; i++) {
			struct rsync_txts_entry e;
			struct rsync_flow fl = {0};

			rsync_txts_decode(c, i, &e);
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
	 * byte); without whole state a delta has nothing to apply to.  Any
	 * full cut restarts the wait for a later one: the primary may have
	 * made a second one whose marker went in before the first came out. */
	if (sl->full) {
		s->whole = true;
		s->synced = false;
		s->full_cut_id = mt->cut_id;
		s->stats.full_applied++;
	}
	for (uint32_t f = txts_frags + 1; f < sl->frag_count; f++) {
		/* Staged while the state was not whole, and whole now (a full
		 * cut just before it in the chain): its pieces were never
		 * checked against the standby chain -- check them now. */
		if (s->whole && sl->unchecked &&
		    !s->ops.state_ok(s->ctx, sl->desc[f].region, sl->desc[f].offset,
				     sl->desc[f].len)) {
			rsync_standby_state_lost(s);
			s->stats.unchecked_refused++;
		}
		if (!s->whole) {
			s->stats.state_skipped += sl->desc[f].len;
			continue;
		}
		s->ops.apply_state(s->ctx, sl->desc[f].region, sl->desc[f].offset, cell(s, sl, f),
				   sl->desc[f].len);
		s->stats.applied_state_bytes += sl->desc[f].len;
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
		rsync_txts_gc(&s->txts, mt->cut_ts);
	}
	s->stats.applied++;
	slot_free(s, sl);
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
		next = slot_find(s, prev);
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
		if (!s->ops.state_ok(s->ctx, sl->desc[f].region, sl->desc[f].offset,
				     sl->desc[f].len))
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
			whole = true;
			synced = false;
			full_id = cut;
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

/* Drop what is staged at or below `txid` (never to be applied). */
static uint32_t
discard_upto(struct rsync_standby *s, uint64_t first, uint64_t txid)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->cfg.window; i++) {
		struct slot *sl = &s->slots[i];

		if (sl->used && sl->txid >= first && sl->txid <= txid) {
			slot_free(s, sl);
			n++;
		}
	}
	return n;
}

/*
 * A transaction's META names its predecessor: every txid between the two
 * was closed after the predecessor and before it, and so was aborted
 * (otherwise it would be the predecessor).  True of any META, live or a
 * late copy of an aborted one.  So a META frees what its gap holds, and a
 * fragment falling in a staged META's gap is dead on arrival.  This is what
 * keeps lost ABORTs from filling the staging for good: the primary repeats
 * only its newest ABORT, but every live transaction's META is repeated
 * until voted.
 */
static bool
in_a_known_gap(const struct rsync_standby *s, uint64_t txid)
{
	for (uint32_t i = 0; i < s->cfg.window; i++) {
		const struct slot *sl = &s->slots[i];

		if (sl->used && (sl->have[0] & 1) && sl->meta.prev_txid < txid && txid < sl->txid)
			return true;
	}
	return false;
}

/* Whether a state piece is checked against the standby chain when staged
 * (ops->state_ok): when it can be written there -- the state is whole, or
 * it is part of a full cut.  Otherwise it is checked when applied, should
 * the state be whole by then. */
static bool
piece_checked(const struct rsync_standby *s, const struct rsync_hdr *h)
{
	return s->whole || (h->flags & RSYNC_F_FULL);
}

static enum rsync_rx_reason
rx_fragment(struct rsync_standby *s, const struct rsync_msg *m)
{
	const struct rsync_hdr *h = &m->h;
	struct slot *sl = slot_find(s, h->txid);
	struct frag_desc *d;

	/* Checks that do not need the slot come first: a refused fragment
	 * must not take a staging slot. */
	if (h->len > RSYNC_MAX_PAYLOAD)
		return RSYNC_RX_BAD_LENGTH;
	if (h->type == RSYNC_CHECKPOINT && h->len == 0)
		return RSYNC_RX_BAD_REGION;
	/* A check that finds an NF's state lost makes the state not whole:
	 * an ordinary piece is then taken unchecked, like any other until a
	 * full cut. */
	if (h->type == RSYNC_CHECKPOINT && piece_checked(s, h) &&
	    !s->ops.state_ok(s->ctx, h->region, h->offset, h->len) &&
	    ((h->flags & RSYNC_F_FULL) || s->whole))
		return RSYNC_RX_BAD_REGION;
	if (h->frag_seq == 0 && m->u.meta.prev_txid >= h->txid)
		return RSYNC_RX_MISMATCH; /* a transaction follows an older one */
	if (sl == NULL) {
		if (h->txid <= s->applied.txid || h->txid <= s->aborted_through ||
		    in_a_known_gap(s, h->txid))
			return RSYNC_RX_UNKNOWN_TXN;
		if (h->frag_count > s->cfg.max_frags)
			return RSYNC_RX_NO_ROOM;
	}
	if (h->frag_seq == 0 && (sl == NULL || !(sl->have[0] & 1)))
		s->stats.orphans += discard_upto(s, m->u.meta.prev_txid + 1, h->txid - 1);
	if (sl == NULL) {
		sl = slot_new(s, h->txid, h->frag_count);
		if (sl == NULL)
			return RSYNC_RX_NO_ROOM;
	}
	if (h->frag_count != sl->frag_count)
		return RSYNC_RX_MISMATCH;
	if (sl->have[h->frag_seq / 64] & (1ull << (h->frag_seq % 64))) {
		if (h->frag_seq == 0 && sl->voted) {
			/* The primary sends again: our vote was lost. */
			send_reply(s, RSYNC_VOTE, sl->txid);
			s->stats.revotes++;
		}
		return RSYNC_RX_DUPLICATE;
	}
	if (h->type == RSYNC_CHECKPOINT && !piece_checked(s, h))
		sl->unchecked = true;
	/* Every fragment of a full transaction says so. */
	if (sl->received > 0 && sl->full_seen != ((h->flags & RSYNC_F_FULL) != 0))
		return RSYNC_RX_MISMATCH;
	sl->full_seen = (h->flags & RSYNC_F_FULL) != 0;
	d = &sl->desc[h->frag_seq];
	d->type = h->type;
	d->region = h->region;
	d->len = h->len;
	d->offset = h->offset;
	if (h->frag_seq == 0) {
		sl->meta = m->u.meta;
		sl->full = (h->flags & RSYNC_F_FULL) != 0;
	} else
		memcpy(cell(s, sl, h->frag_seq), m->payload, h->len);
	sl->have[h->frag_seq / 64] |= 1ull << (h->frag_seq % 64);
	sl->received++;
	if (sl->received < sl->frag_count)
		return RSYNC_RX_OK;

	if (!slot_whole(s, sl)) {
		s->stats.incomplete++;
		slot_free(s, sl);
		return RSYNC_RX_MISMATCH;
	}
	if (s->txts.n + s->pending_txts + sl->meta.txts_entries > s->txts.max_n) {
		/* Applying it could lose TxTs entries, i.e. let replayed
		 * packets out twice: no vote (the primary aborts the stage). */
		s->stats.txts_no_room++;
		slot_free(s, sl);
		return RSYNC_RX_NO_ROOM;
	}
	sl->voted = true;
	s->pending_txts += sl->meta.txts_entries;
	s->stats.votes++;
	send_reply(s, RSYNC_VOTE, sl->txid);
	return RSYNC_RX_OK;
}

enum rsync_rx_reason
rsync_standby_rx(struct rsync_standby *s, const struct rsync_msg *m, uint64_t now)
{
	enum rsync_rx_reason r = RSYNC_RX_OK;

	if (m->h.chain != s->cfg.chain) {
		r = RSYNC_RX_UNKNOWN_CHAIN;
		goto out;
	}
	/* Only the current epoch: older ones are a replaced primary, newer
	 * ones cannot come from the primary this standby serves. */
	if (m->h.epoch != s->epoch || s->taken_over) {
		r = RSYNC_RX_STALE_EPOCH;
		goto out;
	}
	if (m->h.type == RSYNC_PREPARE || m->h.type == RSYNC_CHECKPOINT ||
	    m->h.type == RSYNC_COMMIT)
		s->last_rx_ns = now ? now : 1;
	switch (m->h.type) {
	case RSYNC_PREPARE:
	case RSYNC_CHECKPOINT:
		r = rx_fragment(s, m);
		break;
	case RSYNC_COMMIT:
		if (m->h.txid <= s->applied.txid) {
			r = RSYNC_RX_DUPLICATE; /* our ACK was lost: repeat it */
		} else {
			struct slot *tip = slot_find(s, m->h.txid);

			int n = tip != NULL ? apply_chain_to(s, tip) : -1;

			if (n < 0 && tip != NULL && !s->ever_applied) {
				/* Its chain reaches back past what was ever
				 * staged here: this standby started late. */
				joined_late(s);
				n = apply_chain_to(s, tip);
			}
			if (n < 0)
				r = RSYNC_RX_MISMATCH; /* commits what it never had voted */
			else /* what is left at or below it was aborted */
				s->stats.orphans += discard_upto(s, 0, s->applied.txid);
		}
		if (s->applied.txid > 0) { /* nothing applied yet: nothing to acknowledge */
			send_reply(s, RSYNC_ACK, s->applied.txid);
			s->stats.acks++;
		}
		break;
	case RSYNC_ABORT:
		s->stats.aborted += discard_upto(s, m->h.txid, m->u.abort.through_txid);
		if (m->u.abort.through_txid > s->aborted_through)
			s->aborted_through = m->u.abort.through_txid;
		break;
	case RSYNC_HEARTBEAT:
		break;
	default:
		r = RSYNC_RX_WRONG_ROLE;
		break;
	}
out:
	s->stats.rx[r]++;
	return r;
}

int
rsync_standby_takeover(struct rsync_standby *s, uint32_t new_epoch,
		       struct rsync_standby_applied *out)
{
	if (new_epoch <= s->epoch)
		return -ESTALE;
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
	/* Not in sync even with the voted chain (it started late, or an NF's
	 * state was lost, and it is not resynchronised yet): its state is not
	 * a cut of the chain.  Nothing is applied -- a voted transaction may
	 * still be aborted by a live primary -- and it stays the current
	 * epoch's standby. */
	if (!walked_would_sync(s, (uint32_t)n, origin)) {
		s->stats.takeovers_not_synced++;
		return -ENOTRECOVERABLE;
	}
	apply_walked(s, (uint32_t)n, origin);
	s->stats.takeover_applied += (uint64_t)n;
	if (!s->synced) {
		/* A piece staged unchecked was refused as it was applied. */
		s->stats.takeovers_not_synced++;
		return -ENOTRECOVERABLE;
	}
	for (uint32_t i = 0; i < s->cfg.window; i++)
		if (s->slots[i].used)
			slot_free(s, &s->slots[i]);
	s->epoch = new_epoch;
	s->taken_over = true;
	s->stats.takeovers++;
	if (out != NULL)
		*out = s->applied;
	return 0;
}

uint64_t
rsync_standby_txts(const struct rsync_standby *s, const struct rsync_flow *flow)
{
	return rsync_txts_get(&s->txts, flow);
}

uint32_t
rsync_standby_txts_entries(const struct rsync_standby *s)
{
	return s->txts.n;
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

void
rsync_standby_get_applied(const struct rsync_standby *s, struct rsync_standby_applied *out)
{
	*out = s->applied;
}

uint32_t
rsync_standby_epoch(const struct rsync_standby *s)
{
	return s->epoch;
}

uint32_t
rsync_standby_staged(const struct rsync_standby *s)
{
	return s->staged;
}

bool
rsync_standby_taken_over(const struct rsync_standby *s)
{
	return s->taken_over;
}

const struct rsync_standby_stats *
rsync_standby_stats(const struct rsync_standby *s)
{
	return &s->stats;
}
