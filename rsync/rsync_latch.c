/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * RSync's latch (contract in rsync_primary.h, shared state in
 * rsync_primary_priv.h): packets leaving the chain fill the open stage with
 * their TxTs delta; a cut's bytes are copied into a stage; a closed stage's
 * transaction is laid out once -- META, the encoded TxTs delta, the cut's
 * pieces -- and kept until the stage is released, so a retransmission is
 * byte-identical to the first send.
 *
 * Costs: rsync_primary_add() is O(1) expected (one TxTs probe); building a
 * transaction is O(entries + pieces) plus a move of the cut's bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rsync_primary_priv.h"

void
rsync_stage_reset(struct stage *s)
{
	rsync_txts_clear(&s->delta);
	s->state = ST_FREE;
	s->started = s->nd_wait_counted = s->cut_open = s->cut_failed = s->needs_cut = false;
	s->cut_dropped = s->held_for_cut = false;
	s->txid = s->prev_txid = 0;
	s->cut_id = s->cut_base = s->cut_ts = 0;
	s->cut_full = false;
	s->nd_cut = 0;
	s->opened_ns = s->closed_ns = s->deadline_ns = s->first_sent_ns = 0;
	s->tries = s->tx_next = 0;
	s->n = 0;
	s->body_len = s->txts_len = 0;
	s->n_pieces = 0;
	s->state_frags = 0;
	s->state_bytes = 0;
	s->rec_hdr = UINT64_MAX;
	s->rec_end = 0;
	s->rec_region = s->rec_len = 0;
}
/*
 * The OPEN stage, opening one if there is room; NULL when there is none.
 * Packets never open the last free stage: it is kept for a cut, because the
 * stages waiting for a cut (release rule 2) can only be released once one
 * arrives -- with every stage taken by waiting packets, none could.  Only
 * the packets ahead of that cut's marker may go in with it (latch_pkt()).
 */
static struct stage *
open_stage(struct rsync_primary *p, uint64_t now, bool for_cut)
{
	struct stage *s;

	if (p->used > 0 && stage_at(p, p->used - 1)->state == ST_OPEN)
		return stage_at(p, p->used - 1);
	if (p->used + (for_cut ? 0 : 1) >= p->cfg.stages)
		return NULL;
	s = stage_at(p, p->used++);
	rsync_stage_reset(s);
	s->state = ST_OPEN;
	s->opened_ns = now;
	return s;
}

/* Append a fragment descriptor; false when the stage has no room for it. */
static bool
add_piece(struct rsync_primary *p, struct stage *s, uint8_t type, uint16_t region,
	  uint64_t offset, uint64_t body_off, uint32_t len)
{
	if (s->n_pieces >= p->piece_cap)
		return false;
	s->pieces[s->n_pieces++] = (struct piece){.type = type, .region = region, .len = len,
						  .offset = offset, .body_off = body_off};
	return true;
}

/* Encode the TxTs delta into the body and lay out the META and TxTs
 * fragments in front of the cut's (which cut_piece() put after them). */
static void
stage_build(struct rsync_primary *p, struct stage *s)
{
	uint32_t entries = s->delta.n;
	uint64_t txts_len = (uint64_t)entries * RSYNC_TXTS_WIRE_LEN;
	uint32_t state_n = s->n_pieces; /* state pieces built so far, at [0 ..) */
	uint32_t txts_frags = (entries + p->txts_per_frag - 1) / p->txts_per_frag;

	/* The cut's bytes sit at body[0 .. body_len); move them after the TxTs
	 * entries, and the state pieces after the META + TxTs descriptors. */
	if (s->body_len > 0)
		memmove(s->body + txts_len, s->body, s->body_len);
	memmove(s->pieces + 1 + txts_frags, s->pieces, state_n * sizeof(*s->pieces));
	for (uint32_t i = 0; i < state_n; i++)
		s->pieces[1 + txts_frags + i].body_off += txts_len;
	for (uint32_t i = 0; i < entries; i++) {
		const struct rsync_txts_slot *e = rsync_txts_at(&s->delta, i);
		struct rsync_txts_entry w = {.src_ip = e->key.src_ip, .dst_ip = e->key.dst_ip,
					     .sport = e->key.sport, .dport = e->key.dport,
					     .proto = e->key.proto, .ts = e->ts};

		rsync_txts_encode(&w, 1, s->body + (uint64_t)i * RSYNC_TXTS_WIRE_LEN);
	}
	s->pieces[0] = (struct piece){.type = RSYNC_PREPARE, .region = RSYNC_REGION_META};
	for (uint32_t f = 0; f < txts_frags; f++) {
		uint64_t off = (uint64_t)f * p->txts_per_frag * RSYNC_TXTS_WIRE_LEN;
		uint64_t len = txts_len - off;

		if (len > (uint64_t)p->txts_per_frag * RSYNC_TXTS_WIRE_LEN)
			len = (uint64_t)p->txts_per_frag * RSYNC_TXTS_WIRE_LEN;
		s->pieces[1 + f] = (struct piece){.type = RSYNC_PREPARE,
						  .region = RSYNC_REGION_TXTS,
						  .len = (uint32_t)len, .offset = off,
						  .body_off = off};
	}
	s->n_pieces = 1 + txts_frags + state_n;
	s->txts_len = txts_len;
	s->body_len += txts_len;
}

/* OPEN -> SENDING: number the transaction and chain it. */
void
rsync_stage_close(struct rsync_primary *p, struct stage *s, uint64_t now)
{
	if (s->cut_failed) {
		/* The cut's bytes are dropped; the stage's packets still go. */
		s->n_pieces = 0;
		s->body_len = 0;
		s->state_frags = 0;
		s->state_bytes = 0;
		s->cut_id = s->cut_base = s->cut_ts = 0;
		s->cut_full = false;
	}
	stage_build(p, s);
	s->txid = ++p->next_txid;
	s->prev_txid = p->chain_txid;
	p->chain_txid = s->txid;
	/* Every packet of the stage left the chain before the next cut's
	 * marker, so that cut covers every ND decision that could have shaped
	 * them; decisions the chain's last cut covers already need nothing.  A
	 * stage that carries a cut is covered by it. */
	s->needs_cut = s->cut_id == 0 && p->nd_cut > p->chain_cut_id;
	s->nd_cut = s->needs_cut ? p->nd_cut : 0;
	if (s->cut_id != 0) {
		p->chain_cut_id = s->cut_id;
		p->chain_cut_ts = s->cut_ts;
		p->stats.cuts++;
	}
	s->cut_open = false;
	s->closed_ns = now;
	s->state = ST_SENDING;
	s->tx_next = 0;
	p->stats.stages_closed++;
}
/* Latch a packet in the open stage.  A packet never opens the stage kept
 * for a cut -- unless it waits for the latch before that cut's marker
 * (`before_cut`): then the stage takes it beyond stage_pkts, and only the
 * cut closes it. */
static int
latch_pkt(struct rsync_primary *p, void *pkt, const struct rsync_flow *flow, uint64_t ts,
	  uint64_t now, bool before_cut)
{
	struct stage *s;

	if (p->fenced) {
		p->stats.fenced_refused++;
		return -EPERM;
	}
	if (ts == 0) {
		p->stats.bad_ts++;
		return -EINVAL;
	}
	for (;;) {
		s = open_stage(p, now, before_cut);
		if (s == NULL || ((before_cut || s->held_for_cut) && s->n == p->cap_pkts)) {
			p->stats.latch_full++;
			return -ENOBUFS;
		}
		if (s->cut_open)
			return -EBUSY; /* the owner adds packets only outside a cut */
		if (s->n == 0)
			s->opened_ns = now;
		if (rsync_txts_raise(&s->delta, flow, ts) == 0)
			break;
		/* The stage's delta is full (more flows than it was sized
		 * for): close it and latch the packet in the next one. */
		if (before_cut || s->held_for_cut) {
			p->stats.latch_full++;
			return -ENOBUFS; /* (sized for cap_pkts flows: never) */
		}
		rsync_stage_close(p, s, now);
		rsync_primary_pump(p, now);
	}
	s->pkts[s->n++] = pkt;
	p->stats.pkts_in++;
	if (before_cut) {
		s->held_for_cut = true;
		p->stats.pkts_before_cut++;
	} else if (s->n >= p->cfg.stage_pkts && !s->held_for_cut) {
		rsync_stage_close(p, s, now);
		rsync_primary_pump(p, now);
	}
	return 0;
}

bool
rsync_primary_cut_stage_full(const struct rsync_primary *p)
{
	const struct stage *s = p->used > 0 ? stage_at((struct rsync_primary *)(uintptr_t)p,
						       p->used - 1)
					    : NULL;

	return s != NULL && s->state == ST_OPEN && s->held_for_cut && s->n >= p->cap_pkts;
}

int
rsync_primary_add(struct rsync_primary *p, void *pkt, const struct rsync_flow *flow, uint64_t ts,
		  uint64_t now)
{
	return latch_pkt(p, pkt, flow, ts, now, false);
}

int
rsync_primary_add_before_cut(struct rsync_primary *p, void *pkt, const struct rsync_flow *flow,
			     uint64_t ts, uint64_t now)
{
	return latch_pkt(p, pkt, flow, ts, now, true);
}

void
rsync_primary_nd(struct rsync_primary *p, uint64_t nd_cut)
{
	if (nd_cut > p->nd_cut)
		p->nd_cut = nd_cut;
}

static uint64_t cut_awaited(const struct rsync_primary *p);

int
rsync_primary_cut_begin(struct rsync_primary *p, uint64_t cut_id, uint64_t base_id,
			uint64_t cut_ts, uint64_t now)
{
	struct stage *s;

	if (p->fenced)
		return -EPERM;
	if ((base_id != p->chain_cut_id && base_id != RSYNC_CUT_FULL) || cut_id == 0 ||
	    cut_id <= p->chain_cut_id || cut_ts < p->chain_cut_ts) {
		p->stats.cuts_stale++;
		return -ESTALE;
	}
	/* The last stage is kept for the cut the waiting stages need -- free,
	 * or open already with the packets queued ahead of a marker: an older
	 * cut (its marker on its way when their ND decisions were published)
	 * would take it and release none of them, and the cut they need would
	 * find no stage: every stage voted, none releasable.  Made no cut: the
	 * owner asks for the next marker, which they accept (a stage waits for
	 * at most the cut after the markers sent when it closed). */
	if ((p->used > 0 && stage_at(p, p->used - 1)->state == ST_OPEN
		     ? p->used >= p->cfg.stages
		     : p->used + 1 >= p->cfg.stages) &&
	    cut_id < cut_awaited(p)) {
		p->stats.cuts_too_old++;
		return -ESTALE;
	}
	s = open_stage(p, now, true);
	if (s == NULL) {
		p->stats.latch_full++;
		return -ENOBUFS;
	}
	if (s->cut_open)
		return -EBUSY;
	s->cut_open = true;
	s->cut_failed = s->cut_dropped = false;
	s->cut_id = cut_id;
	s->cut_base = base_id;
	s->cut_ts = cut_ts;
	s->cut_full = base_id == RSYNC_CUT_FULL;
	if (s->cut_full) {
		/* Asked for again only if the standby still asks after a
		 * pause (this one may be dropped, or aborted). */
		p->full_wanted = false;
		p->full_holdoff_ns = now + ((uint64_t)RSYNC_FULL_HOLDOFF_RETRANS << p->full_backoff) *
						   p->cfg.retrans_ns;
		p->stats.full_cuts++;
	}
	s->n_pieces = 0; /* state pieces are built from index 0 (stage_build moves them) */
	s->body_len = 0;
	s->rec_hdr = UINT64_MAX;
	return 0;
}

static inline uint32_t
min3(uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t m = a < b ? a : b;

	return m < c ? m : c;
}

/*
 * The cut's bytes go into state records packed into CHECKPOINT pieces of up
 * to max_payload bytes (rsync_wire.h): bytes that continue the last record
 * extend it, others start a record in the last piece while it has room for
 * a header and a byte, else a new piece.  So the piece count follows the
 * bytes, however scattered the chunks are.
 */
int
rsync_primary_cut_piece(struct rsync_primary *p, uint16_t region, uint64_t offset,
			const void *data, uint32_t len)
{
	struct stage *s = p->used > 0 ? stage_at(p, p->used - 1) : NULL;
	const uint8_t *src = data;
	/* Room for the META and TxTs descriptors stage_build() adds in front. */
	uint32_t txts_frags;

	if (s == NULL || !s->cut_open)
		return -EINVAL;
	if (region >= RSYNC_REGION_MAX || offset > UINT64_MAX - len) {
		s->cut_failed = true; /* a cut is dropped, never cut short */
		return -EINVAL;
	}
	if (s->cut_failed)
		return -E2BIG;
	txts_frags = (s->delta.n + p->txts_per_frag - 1) / p->txts_per_frag;
	while (len > 0) {
		struct piece *last = s->n_pieces > 0 ? &s->pieces[s->n_pieces - 1] : NULL;
		uint32_t room = last != NULL ? p->cfg.max_payload - last->len : 0, take, hdr = 0;

		if (last != NULL && s->rec_hdr != UINT64_MAX && s->rec_region == region &&
		    s->rec_end == offset && room > 0 && s->rec_len < UINT16_MAX) {
			/* Continues the last record: extend it. */
			take = min3(len, room, UINT16_MAX - s->rec_len);
		} else {
			if (last == NULL || room <= RSYNC_REC_HDR_LEN) {
				if (s->n_pieces + 1 + txts_frags >= p->piece_cap ||
				    !add_piece(p, s, RSYNC_CHECKPOINT, 0, 0, s->body_len, 0))
					goto too_big;
				s->state_frags++;
				last = &s->pieces[s->n_pieces - 1];
				room = p->cfg.max_payload;
			}
			hdr = RSYNC_REC_HDR_LEN;
			take = min3(len, room - hdr, UINT16_MAX);
			s->rec_hdr = s->body_len;
			s->rec_region = region;
			s->rec_len = 0;
		}
		if (s->state_bytes + hdr + take > p->cfg.stage_state_bytes)
			goto too_big;
		s->body_len += hdr;
		memcpy(s->body + s->body_len, src, take);
		s->body_len += take;
		s->rec_len = (uint16_t)(s->rec_len + take);
		s->rec_end = offset + take;
		rsync_state_rec_put(s->body + s->rec_hdr, region, s->rec_end - s->rec_len,
				    s->rec_len);
		last->len += hdr + take;
		s->state_bytes += hdr + take;
		src += take;
		offset += take;
		len -= take;
	}
	return 0;
too_big:
	s->cut_failed = true;
	return -E2BIG;
}

void
rsync_primary_cut_drop(struct rsync_primary *p)
{
	struct stage *s = p->used > 0 ? stage_at(p, p->used - 1) : NULL;

	if (s == NULL || !s->cut_open || s->cut_failed)
		return;
	s->cut_failed = true;
	s->cut_dropped = true;
}

int
rsync_primary_cut_end(struct rsync_primary *p, uint64_t now)
{
	struct stage *s = p->used > 0 ? stage_at(p, p->used - 1) : NULL;
	bool failed;

	if (s == NULL || !s->cut_open)
		return -EINVAL;
	failed = s->cut_failed;
	if (failed && s->cut_dropped)
		p->stats.cuts_dropped++;
	else if (failed)
		p->stats.cuts_too_big++;
	if (failed && s->n == 0) {
		/* Nothing but a dropped cut: give back the stage kept for cuts,
		 * or stages waiting for a cut could fill the latch for good. */
		rsync_stage_reset(s);
		p->used--;
		return -E2BIG;
	}
	if (failed && s->held_for_cut) {
		/* The stage kept for cuts, with the packets that waited ahead
		 * of this one: it stays open for the next cut, for the same
		 * reason. */
		s->cut_open = s->cut_failed = s->cut_dropped = s->cut_full = false;
		s->cut_id = s->cut_base = s->cut_ts = 0;
		s->n_pieces = 0;
		s->body_len = 0;
		s->state_frags = 0;
		s->state_bytes = 0;
		s->rec_hdr = UINT64_MAX;
		return -E2BIG;
	}
	rsync_stage_close(p, s, now);
	rsync_primary_pump(p, now);
	return failed ? -E2BIG : 0;
}

uint64_t
rsync_primary_cut_base(const struct rsync_primary *p)
{
	return p->chain_cut_id;
}

uint64_t
rsync_primary_cut_base_ts(const struct rsync_primary *p)
{
	return p->chain_cut_ts;
}

uint64_t
rsync_primary_released_cut_id(const struct rsync_primary *p)
{
	return p->released_cut_id;
}

uint64_t
rsync_primary_released_cut_ts(const struct rsync_primary *p)
{
	return p->released_cut_ts;
}

uint64_t
rsync_primary_nd_uncovered(const struct rsync_primary *p)
{
	return p->nd_cut > p->chain_cut_id ? p->nd_cut : 0;
}

int
rsync_primary_describe(const struct rsync_primary *p, char *buf, size_t len)
{
	static const char st[] = "-OsSV"; /* free open sending sent voted */
	size_t o = 0;

	buf[0] = '\0';
	for (uint32_t k = 0; k < p->used && o < len; k++) {
		const struct stage *s = stage_at((struct rsync_primary *)(uintptr_t)p, k);
		int w = snprintf(buf + o, len - o, "%s%c%u%s%s", k ? " " : "", st[s->state], s->n,
				 s->cut_id ? "c" : "", s->needs_cut ? "n" : "");

		if (w < 0)
			break;
		o += (size_t)w;
	}
	return (int)o;
}

/* The cut id a stage waits for with none at or after it new enough (the
 * newest such); 0: none waits. */
static uint64_t
cut_awaited(const struct rsync_primary *p)
{
	uint64_t need = 0;

	/* A stage that needs a cut with none at or after it that is new
	 * enough: a cut whose marker was on its way when an ND decision was
	 * made closes a stage after the decision's, but does not cover it. */
	for (uint32_t k = 0; k < p->used; k++) {
		const struct stage *s = stage_at((struct rsync_primary *)(uintptr_t)p, k);

		uint64_t nd = s->nd_cut != 0 ? s->nd_cut : 1;

		if (s->cut_id != 0 && s->cut_id >= need)
			need = 0;
		if (s->needs_cut && s->cut_id == 0 && nd > need)
			need = nd;
	}
	return need;
}

bool
rsync_primary_stage_waits_cut(const struct rsync_primary *p)
{
	return cut_awaited(p) != 0;
}

bool
rsync_primary_needs_cut(const struct rsync_primary *p)
{
	return rsync_primary_stage_waits_cut(p) || rsync_primary_nd_uncovered(p) != 0;
}
