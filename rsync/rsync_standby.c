/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * RSync's standby side (contract in rsync_standby.h): staging and voting,
 * and the messages from the primary.  Applying, the takeover and
 * resynchronising are in rsync_standby_sync.c.
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

#include "rsync_standby_priv.h"

struct rsync_standby *
rsync_standby_new(const struct rsync_standby_cfg *cfg, const struct rsync_standby_ops *ops,
		  void *ctx, uint64_t seed)
{
	struct rsync_standby *s;
	void *tmem;

	if (cfg == NULL || ops == NULL || ops->send == NULL || ops->state_ok == NULL ||
	    ops->apply_state == NULL || cfg->epoch < 1 || cfg->run == 0 || cfg->window < 1 ||
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

void
rsync_sby_slot_free(struct rsync_standby *s, struct slot *sl)
{
	if (sl->voted)
		s->pending_txts -= sl->txts_reserved;
	sl->txts_reserved = 0;
	memset(sl->have, 0, (s->cfg.max_frags + 63) / 64 * sizeof(uint64_t));
	sl->used = sl->voted = sl->dead = sl->full = sl->unchecked = sl->full_seen = false;
	sl->txid = 0;
	sl->frag_count = 0;
	sl->received = 0;
	memset(&sl->meta, 0, sizeof(sl->meta));
	s->staged--;
}

/* Whether a transaction of the run served was voted: the primary may have
 * released its outputs on that vote, so the run is this standby's for good. */
static bool
voted_any(const struct rsync_standby *s)
{
	for (uint32_t i = 0; i < s->cfg.window; i++)
		if (s->slots[i].used && s->slots[i].voted)
			return true;
	return false;
}

/* Serve primary run `run` instead of the one served, of which nothing was
 * applied or voted: what was staged of that run goes (never committed now). */
static void
serve_other_run(struct rsync_standby *s, uint64_t run)
{
	for (uint32_t i = 0; i < s->cfg.window; i++)
		if (s->slots[i].used)
			rsync_sby_slot_free(s, &s->slots[i]);
	s->aborted_through = 0;
	s->primary_clock = s->primary_clock_rx_ns = 0;
	s->primary_run = run;
	s->restarted_run = 0;
	s->other_run_n = 0;
	s->stats.primary_runs_taken_back++;
}

struct slot *
rsync_sby_slot_find(struct rsync_standby *s, uint64_t txid)
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
	m.h.role = RSYNC_ROLE_STANDBY;
	m.h.sender_run = s->cfg.run;
	m.h.receiver_run = s->primary_run;
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

		if (d->type != RSYNC_CHECKPOINT)
			return false;
		state_bytes += d->len;
	}
	if (state_bytes != mt->state_bytes)
		return false;
	(void)s;
	return true;
}

/* Drop what is staged at or below `txid` (never to be applied). */
static uint32_t
discard_upto(struct rsync_standby *s, uint64_t first, uint64_t txid)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->cfg.window; i++) {
		struct slot *sl = &s->slots[i];

		if (sl->used && sl->txid >= first && sl->txid <= txid) {
			rsync_sby_slot_free(s, sl);
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

/* The TxTs entries of a whole slot with a timestamp above `ts` (all of
 * them for ts 0).  O(entries). */
static uint32_t
slot_txts_above(const struct rsync_standby *s, const struct slot *sl, uint64_t ts)
{
	uint32_t txts_frags = sl->frag_count - 1 - sl->meta.state_frags, n = 0;

	if (ts == 0)
		return sl->meta.txts_entries;
	for (uint32_t f = 1; f <= txts_frags; f++)
		for (uint32_t i = 0; i < sl->desc[f].len / RSYNC_TXTS_WIRE_LEN; i++) {
			struct rsync_txts_entry e;

			rsync_txts_decode(cell(s, sl, f), i, &e);
			n += e.ts > ts;
		}
	return n;
}

static enum rsync_rx_reason
rx_fragment(struct rsync_standby *s, const struct rsync_msg *m)
{
	const struct rsync_hdr *h = &m->h;
	struct slot *sl = rsync_sby_slot_find(s, h->txid);
	struct frag_desc *d;
	uint32_t reserve;

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
	    !rsync_sby_recs_fit(s, m->payload, h->len) && ((h->flags & RSYNC_F_FULL) || s->whole))
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
		rsync_sby_slot_free(s, sl);
		return RSYNC_RX_MISMATCH;
	}
	/* Room for the entries its apply adds.  A transaction with a cut frees,
	 * as it is applied, every entry at or below the cut (rsync_txts_gc) --
	 * its own included: they never take room, or a table full of flows
	 * would refuse the very cut that empties it. */
	reserve = slot_txts_above(s, sl, sl->meta.cut_id != 0 ? sl->meta.cut_ts : 0);
	if (s->txts.n + s->pending_txts + reserve > s->txts.max_n) {
		/* Applying it could lose TxTs entries, i.e. let replayed
		 * packets out twice: no vote (the primary aborts the stage). */
		s->stats.txts_no_room++;
		rsync_sby_slot_free(s, sl);
		return RSYNC_RX_NO_ROOM;
	}
	sl->voted = true;
	sl->txts_reserved = reserve;
	s->pending_txts += reserve;
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
	/* From the primary only: anything else is a reflection of our own
	 * messages, or the predecessor's (the owner's to take). */
	if (m->h.role != RSYNC_ROLE_PRIMARY) {
		r = RSYNC_RX_WRONG_ROLE;
		goto out;
	}
	/* Only the current epoch: older ones are a replaced primary, newer
	 * ones cannot come from the primary this standby serves. */
	if (m->h.epoch != s->epoch || s->taken_over) {
		r = RSYNC_RX_STALE_EPOCH;
		goto out;
	}
	/* COMMIT and ABORT change what is applied: addressed to this run
	 * only.  A transaction's fragments grant nothing by themselves (the
	 * VOTE they bring is addressed to the primary's run), so they are
	 * taken whoever the sender thought it wrote to: a standby just
	 * restarted is heard only once it votes or beats. */
	if (m->h.receiver_run != s->cfg.run &&
	    (m->h.type == RSYNC_COMMIT || m->h.type == RSYNC_ABORT)) {
		r = RSYNC_RX_STALE_RUN;
		goto out;
	}
	/* The primary run served is the first heard; another one is a
	 * restarted primary, whose state is gone: refused until a takeover.
	 * Unless this standby holds nothing of the run it serves, neither
	 * applied nor voted (it just started, and the first frame heard may be
	 * a stray of a run that is gone): then another run heard on,
	 * RSYNC_RUN_LIVE_AFTER frames in a row, is the live one. */
	if (s->primary_run == 0) {
		s->primary_run = m->h.sender_run;
	} else if (m->h.sender_run == s->primary_run) {
		s->other_run_n = 0;
	} else {
		if (m->h.sender_run != s->restarted_run) {
			s->restarted_run = m->h.sender_run;
			s->stats.primary_restarts++;
			s->other_run_n = 0;
		}
		if (s->ever_applied || voted_any(s) || ++s->other_run_n < RSYNC_RUN_LIVE_AFTER) {
			r = RSYNC_RX_PEER_RESTARTED;
			goto out;
		}
		serve_other_run(s, m->h.sender_run);
	}
	/* (Not COMMITs: a primary repeats one it has no ACK for, forever.) */
	if (m->h.type == RSYNC_PREPARE || m->h.type == RSYNC_CHECKPOINT)
		s->last_rx_ns = now ? now : 1;
	switch (m->h.type) {
	case RSYNC_PREPARE:
	case RSYNC_CHECKPOINT:
		r = rx_fragment(s, m);
		/* The primary's chain clock, newest first heard: the standby
		 * carries it on after a takeover. */
		if (r == RSYNC_RX_OK && m->h.frag_seq == 0 && m->h.type == RSYNC_PREPARE &&
		    m->u.meta.clock >= s->primary_clock) {
			s->primary_clock = m->u.meta.clock;
			s->primary_clock_rx_ns = now;
		}
		break;
	case RSYNC_COMMIT:
		if (m->h.txid <= s->applied.txid) {
			r = RSYNC_RX_DUPLICATE; /* our ACK was lost: repeat it */
		} else {
			struct slot *tip = rsync_sby_slot_find(s, m->h.txid);

			int n = rsync_sby_commit(s, tip);

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

void
rsync_standby_get_applied(const struct rsync_standby *s, struct rsync_standby_applied *out)
{
	*out = s->applied;
}

uint64_t
rsync_standby_run(const struct rsync_standby *s)
{
	return s->cfg.run;
}

uint64_t
rsync_standby_primary_run(const struct rsync_standby *s)
{
	return s->primary_run;
}

uint64_t
rsync_standby_primary_clock(const struct rsync_standby *s, uint64_t now)
{
	if (s->primary_clock == 0)
		return 0;
	return s->primary_clock + (now > s->primary_clock_rx_ns ? now - s->primary_clock_rx_ns : 0);
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
