/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * RSync's primary side: the coordinator of the two-phase commit (contract
 * in rsync_primary.h; the stages it sends are built by rsync_latch.c).
 *
 * Why a stage is released only when voted AND its ND decisions are covered:
 * a vote means the standby holds the stage's TxTs (it will not emit the
 * stage's packets again); the cut covering every earlier ND decision means
 * that replay after a failover cannot re-decide (differently) something an
 * already released packet depended on -- including packets of other flows
 * that an NF processed after the ND packet (docs/design/remote.md, "The
 * primary: latch stages and the release rule").
 *
 * Costs: releases are O(packets); the VOTE lookup is O(stages) (a few dozen
 * at most).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rsync_prefix.h"
#include "rsync_primary_priv.h"

#define TRIM_REPEAT_FACTOR 16 /* LOG_TRIM repeated every 16 retransmission periods */

static uint32_t
pow2_at_least(uint64_t v)
{
	uint32_t c = 4;

	while (c < v && c < (1u << 30))
		c <<= 1;
	return c;
}

/* standby_window >= stages: stages waiting for a cut (rule 2) are sent
 * and unreleased; with fewer window slots than stages they could fill the
 * window, and the cut's own stage could never be sent. */
static bool
cfg_valid(const struct rsync_primary_cfg *c)
{
	return c->epoch >= 1 && c->run != 0 && c->standby_window >= c->stages &&
	       c->max_payload >= RSYNC_TXTS_WIRE_LEN &&
	       1 + ((uint64_t)c->stage_pkts + c->cut_extra_pkts +
		    c->max_payload / RSYNC_TXTS_WIRE_LEN - 1) /
			       (c->max_payload / RSYNC_TXTS_WIRE_LEN) + 1 <=
		       UINT16_MAX && c->stages >= 2 && c->stages <= RSYNC_MAX_STAGES &&
	       c->stage_pkts >= 1 && c->stage_pkts <= (1u << 20) &&
	       c->cut_extra_pkts <= (1u << 20) && c->max_payload >= 64 &&
	       c->max_payload <= RSYNC_MAX_PAYLOAD && c->retrans_ns > 0 && c->max_tries >= 1 &&
	       c->standby_window >= 1 && c->stage_state_bytes <= (1ull << 32);
}

struct rsync_primary *
rsync_primary_new(const struct rsync_primary_cfg *cfg, const struct rsync_primary_ops *ops,
		  void *ctx, uint64_t seed)
{
	struct rsync_primary *p;
	uint64_t txts_frags, state_pieces, cap_pkts;

	if (cfg == NULL || ops == NULL || ops->send == NULL || ops->release == NULL ||
	    ops->drop == NULL || !cfg_valid(cfg)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->cfg = *cfg;
	p->ops = *ops;
	p->ctx = ctx;
	p->epoch = cfg->epoch;
	p->txts_per_frag = cfg->max_payload / RSYNC_TXTS_WIRE_LEN;
	/* Any stage may be the one kept for a cut, and take the waiting
	 * packets before it. */
	cap_pkts = (uint64_t)cfg->stage_pkts + cfg->cut_extra_pkts;
	p->cap_pkts = (uint32_t)cap_pkts;
	p->delta_cap = pow2_at_least(cap_pkts * 2);
	p->body_cap = cap_pkts * RSYNC_TXTS_WIRE_LEN + cfg->stage_state_bytes;
	txts_frags = (cap_pkts + p->txts_per_frag - 1) / p->txts_per_frag;
	/* A cut's pieces are contiguous runs of chunks: at least 64 bytes each
	 * in practice; more pieces than that make the cut too big. */
	state_pieces = cfg->stage_state_bytes / 64 + 16;
	if (1 + txts_frags + state_pieces > UINT16_MAX)
		state_pieces = UINT16_MAX - 1 - txts_frags;
	p->piece_cap = (uint32_t)(1 + txts_frags + state_pieces);
	p->unacked = calloc(cfg->standby_window, sizeof(*p->unacked));
	if (p->unacked == NULL)
		goto nomem;
	for (uint32_t i = 0; i < cfg->stages; i++) {
		struct stage *s = &p->stages[i];
		void *dmem = malloc(rsync_txts_mem_size(p->delta_cap, true));

		s->pkts = calloc(cap_pkts, sizeof(*s->pkts));
		s->body = malloc(p->body_cap ? p->body_cap : 1);
		s->pieces = calloc(p->piece_cap, sizeof(*s->pieces));
		if (dmem == NULL || s->pkts == NULL || s->body == NULL || s->pieces == NULL) {
			free(dmem);
			goto nomem;
		}
		rsync_txts_init(&s->delta, dmem, p->delta_cap, true, seed + i);
	}
	return p;
nomem:
	rsync_primary_free(p);
	errno = ENOMEM;
	return NULL;
}
void
rsync_primary_free(struct rsync_primary *p)
{
	if (p == NULL)
		return;
	for (uint32_t k = 0; k < p->used; k++) {
		struct stage *s = stage_at(p, k);

		if (s->n > 0)
			p->ops.drop(p->ctx, s->pkts, s->n, RSYNC_ABORT_FENCED);
	}
	for (uint32_t i = 0; i < RSYNC_MAX_STAGES; i++) {
		free(p->stages[i].delta.slots);
		free(p->stages[i].pkts);
		free(p->stages[i].body);
		free(p->stages[i].pieces);
	}
	free(p->unacked);
	free(p);
}
int
rsync_primary_resume(struct rsync_primary *p, uint32_t epoch, uint64_t after_txid,
		     uint64_t clock_offset, uint64_t pred_run)
{
	if (p == NULL || epoch < 1 || after_txid == 0 || p->next_txid != 0 || p->used != 0)
		return -EINVAL;
	p->epoch = epoch;
	p->cfg.epoch = epoch;
	p->cfg.clock_offset = clock_offset;
	p->next_txid = p->chain_txid = p->released_txid = p->acked_txid = after_txid;
	p->pred_run.cur = pred_run;
	return 0;
}

static int
send_msg(struct rsync_primary *p, enum rsync_peer to, struct rsync_msg *m, const void *payload,
	 size_t len)
{
	m->h.version = RSYNC_VERSION;
	m->h.chain = p->cfg.chain;
	m->h.epoch = p->epoch;
	m->h.role = RSYNC_ROLE_PRIMARY;
	m->h.sender_run = p->cfg.run;
	m->h.receiver_run = to == RSYNC_PEER_STANDBY ? p->standby_run.cur : p->pred_run.cur;
	if (m->h.frag_count == 0)
		m->h.frag_count = 1;
	return p->ops.send(p->ctx, to, m, payload, len);
}

static void
send_control(struct rsync_primary *p, enum rsync_peer to, uint8_t type, uint64_t txid,
	     const struct rsync_msg *with_u)
{
	struct rsync_msg m = {0};

	if (with_u != NULL)
		m.u = with_u->u;
	m.h.type = type;
	m.h.txid = txid;
	/* Control messages are not queued: a lost or refused one is repeated
	 * by the timers (COMMIT, LOG_TRIM, ABORT) or made moot. */
	if (send_msg(p, to, &m, NULL, 0) != 0)
		p->stats.send_busy++;
}

static int
send_fragment(struct rsync_primary *p, struct stage *s, uint32_t f)
{
	const struct piece *pc = &s->pieces[f];
	struct rsync_msg m = {0};

	m.h.type = pc->type;
	m.h.flags = (uint8_t)((s->tries > 1 ? RSYNC_F_RETRANS : 0) |
			      (s->cut_full ? RSYNC_F_FULL : 0));
	m.h.txid = s->txid;
	m.h.frag_seq = (uint16_t)f;
	m.h.frag_count = (uint16_t)s->n_pieces;
	m.h.region = pc->region;
	m.h.offset = pc->offset;
	if (f == 0) {
		m.u.meta = (struct rsync_meta){.prev_txid = s->prev_txid, .cut_id = s->cut_id,
					       .cut_ts = s->cut_ts, .nd_cut = s->nd_cut,
					       .txts_entries = s->delta.n,
					       .state_frags = s->state_frags,
					       .state_bytes = s->state_bytes,
					       .pkts = s->n,
					       .clock = s->closed_ns + p->cfg.clock_offset};
		return send_msg(p, RSYNC_PEER_STANDBY, &m, NULL, 0);
	}
	return send_msg(p, RSYNC_PEER_STANDBY, &m, s->body + pc->body_off, pc->len);
}

static uint32_t
window_used(struct rsync_primary *p)
{
	uint32_t n = p->unacked_n;

	for (uint32_t k = 0; k < p->used; k++)
		if (stage_at(p, k)->started)
			n++;
	return n;
}

/*
 * When a stage sent `now` is sent again if no vote came: retrans_ns after
 * its first round, then twice as long after each (at most
 * 8 times as long), and never past its abort, which
 * comes max_tries * retrans_ns after the first round whatever the rounds.
 * A vote late behind a backlog on the sync link then brings no flood of
 * copies that makes the next one later still: sent every retrans_ns, a
 * stage of hundreds of fragments (a full cut) was sent max_tries times
 * over, and a standby restarted behind such a link never caught up.
 */
#define RETRANS_BACKOFF_SHIFT_MAX 3 /* waits of 1, 2, 4, then 8 x retrans_ns */

/* The abort time: max_tries * retrans_ns after the first round began. */
static uint64_t
abort_at(const struct rsync_primary *p, const struct stage *s)
{
	return s->first_sent_ns + (uint64_t)p->cfg.max_tries * p->cfg.retrans_ns;
}

/* (a round that ended late -- held by a busy link -- still gets
 * retrans_ns for its vote: the abort then comes that much later) */
static uint64_t
resend_at(const struct rsync_primary *p, const struct stage *s, uint64_t now)
{
	uint32_t k = s->tries - 1 < RETRANS_BACKOFF_SHIFT_MAX ? s->tries - 1
							      : RETRANS_BACKOFF_SHIFT_MAX;
	uint64_t next = now + (p->cfg.retrans_ns << k);
	uint64_t last = abort_at(p, s) > now + p->cfg.retrans_ns ? abort_at(p, s)
								 : now + p->cfg.retrans_ns;

	return next < last ? next : last;
}

/* Send what a SENDING stage has left.  False when the link or the window
 * stopped it (the rest goes at a later tick). */
static bool
stage_pump(struct rsync_primary *p, struct stage *s, uint64_t now)
{
	if (!s->started) {
		if (window_used(p) >= p->cfg.standby_window) {
			p->stats.window_waits++;
			return false;
		}
		s->started = true;
		s->tries = 1;
		s->first_sent_ns = now;
	}
	while (s->tx_next < s->n_pieces) {
		if (send_fragment(p, s, s->tx_next) != 0) {
			p->stats.send_busy++;
			return false;
		}
		s->tx_next++;
		p->stats.frags_sent++;
		if (s->tries > 1)
			p->stats.frags_retrans++;
	}
	s->state = ST_SENT;
	s->deadline_ns = resend_at(p, s, now);
	return true;
}

/* Send every closed stage that has something to send, oldest first. */
void
rsync_primary_pump(struct rsync_primary *p, uint64_t now)
{
	for (uint32_t k = 0; k < p->used; k++) {
		struct stage *s = stage_at(p, k);

		if (s->state == ST_SENDING && !stage_pump(p, s, now))
			return; /* keep the order: nothing after it goes first */
	}
}

static void
lat_record(struct rsync_primary *p, uint64_t ns)
{
	uint64_t us = ns / 1000;
	uint32_t b = 0;

	while (b + 1 < RSYNC_LAT_BUCKETS && us >= (1ull << b))
		b++;
	p->stats.commit_lat_us[b]++;
}

static void
send_trim(struct rsync_primary *p, uint64_t now)
{
	struct rsync_msg m = {0};

	m.u.trim.watermark = p->released_cut_ts;
	send_control(p, RSYNC_PEER_PREDECESSOR, RSYNC_LOG_TRIM, 0, &m);
	p->trim_sent_ns = now;
	p->trim_sent_ts = p->released_cut_ts;
	p->stats.trims_sent++;
}

static void
try_release(struct rsync_primary *p, uint64_t now)
{
	bool released = false, new_cut = false;
	uint32_t releasable = 0, voted = 0;

	/* Rule 2: a stage that needs a cut goes only with a prefix that holds
	 * one at or after it -- the cut it waits for, or a later one (an
	 * output an NF sent out from the middle of the chain reaches the
	 * latch before the marker that passed that NF after its decision: an
	 * older cut's, closer behind it, holds no trace of the decision).  The
	 * prefix, not just the voted stages: a takeover applies a prefix of
	 * the chain, and a cut behind a stage that cannot go is never in it
	 * (rsync_prefix.h). */
	for (struct rsync_prefix_scan sc = {0};
	     voted < p->used && stage_at(p, voted)->state == ST_VOTED; voted++) {
		const struct stage *s = stage_at(p, voted);

		rsync_prefix_add(&sc, s->cut_id, s->needs_cut ? s->nd_cut : 0);
		if (rsync_prefix_ok(&sc))
			releasable = voted + 1;
	}
	if (releasable < voted) {
		struct stage *s = stage_at(p, releasable);

		if (!s->nd_wait_counted) {
			s->nd_wait_counted = true;
			p->stats.nd_waits++;
		}
	}
	while (releasable-- > 0) {
		struct stage *s = stage_at(p, 0);

		if (s->n > 0)
			p->ops.release(p->ctx, s->pkts, s->n);
		p->stats.pkts_released += s->n;
		p->stats.stages_released++;
		lat_record(p, now - s->closed_ns);
		p->released_txid = s->txid;
		if (s->cut_id != 0) {
			p->released_cut_id = s->cut_id;
			p->released_cut_ts = s->cut_ts;
			new_cut = true;
		}
		if (s->cut_full)
			p->full_released_txid = s->txid;
		if (p->unacked_n < p->cfg.standby_window) {
			p->unacked[(p->unacked_head + p->unacked_n) % p->cfg.standby_window] = s->txid;
			p->unacked_n++;
		}
		rsync_stage_reset(s);
		p->head = (p->head + 1) % p->cfg.stages;
		p->used--;
		released = true;
	}
	if (released) {
		send_control(p, RSYNC_PEER_STANDBY, RSYNC_COMMIT, p->released_txid, NULL);
		p->commit_sent_ns = now;
		p->stats.commits_sent++;
	}
	if (new_cut && p->released_cut_ts != 0) /* a cut before any packet trims nothing */
		send_trim(p, now);
}

/* The newest cut among the busy stages before index `end` that keep their
 * cut, or the released one. */
static void
rewind_chain(struct rsync_primary *p, uint32_t end)
{
	p->chain_txid = p->released_txid;
	p->chain_cut_id = p->released_cut_id;
	p->chain_cut_ts = p->released_cut_ts;
	for (uint32_t k = 0; k < end; k++) {
		struct stage *s = stage_at(p, k);

		p->chain_txid = s->txid;
		if (s->cut_id != 0) {
			p->chain_cut_id = s->cut_id;
			p->chain_cut_ts = s->cut_ts;
		}
	}
}

/* Abort busy stage `k` and every closed stage after it (go-back-N): the
 * standby cannot apply anything after a transaction it will never get. */
static void
abort_from(struct rsync_primary *p, uint32_t k, enum rsync_abort_reason why)
{
	uint64_t first = 0, through = 0;
	uint32_t end = p->used;
	bool has_open = p->used > 0 && stage_at(p, p->used - 1)->state == ST_OPEN;

	if (has_open)
		end--;
	for (uint32_t j = k; j < end; j++) {
		struct stage *s = stage_at(p, j);
		enum rsync_abort_reason r = j == k ? why : RSYNC_ABORT_CASCADE;

		if (s->n > 0)
			p->ops.drop(p->ctx, s->pkts, s->n, r);
		p->stats.pkts_dropped[r] += s->n;
		p->stats.aborts[r]++;
		/* A full cut the standby would not vote for (too big for it?):
		 * ask for the next later and later. */
		if (s->cut_full && p->full_backoff < RSYNC_FULL_BACKOFF_MAX)
			p->full_backoff++;
		if (s->started) {
			if (first == 0)
				first = s->txid;
			through = s->txid;
		}
		rsync_stage_reset(s);
	}
	if (has_open && end > k) {
		/* The open stage moves down to take the first aborted one's place. */
		struct stage tmp = *stage_at(p, k);

		*stage_at(p, k) = *stage_at(p, end);
		*stage_at(p, end) = tmp;
	}
	p->used = k + (has_open ? 1 : 0);
	rewind_chain(p, k);
	if (has_open) {
		struct stage *o = stage_at(p, k);

		if (o->cut_open && o->cut_base != p->chain_cut_id && o->cut_base != RSYNC_CUT_FULL &&
		    !o->cut_failed) {
			o->cut_failed = true;
			p->stats.cuts_stale++;
		}
	}
	if (first != 0 && why != RSYNC_ABORT_FENCED) {
		struct rsync_msg m = {0};

		p->abort_first = first;
		p->abort_through = through;
		m.u.abort.through_txid = through;
		send_control(p, RSYNC_PEER_STANDBY, RSYNC_ABORT, first, &m);
	}
}
uint64_t
rsync_primary_tick(struct rsync_primary *p, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	bool resend_abort = false;

	if (p->fenced)
		return UINT64_MAX;
	if (p->used > 0) {
		struct stage *o = stage_at(p, p->used - 1);

		/* (The stage kept for a cut waits for it.) */
		if (o->state == ST_OPEN && o->n > 0 && !o->cut_open && !o->held_for_cut &&
		    now - o->opened_ns >= p->cfg.close_ns) {
			rsync_stage_close(p, o, now);
		}
	}
	for (uint32_t k = 0; k < p->used; k++) {
		struct stage *s = stage_at(p, k);

		/* Closed, but never sent: the standby's window is full of
		 * commits it does not acknowledge (it is gone, or every ACK is
		 * lost).  It gets no vote that way either: it is aborted after
		 * as long as a stage that was sent and never voted. */
		if (s->state == ST_SENDING && !s->started &&
		    now - s->closed_ns >= (uint64_t)p->cfg.max_tries * p->cfg.retrans_ns) {
			abort_from(p, k, RSYNC_ABORT_NO_VOTE);
			break;
		}
		if (s->state != ST_SENT || now < s->deadline_ns)
			continue;
		if (s->deadline_ns >= abort_at(p, s)) { /* the last wait ran out */
			abort_from(p, k, RSYNC_ABORT_NO_VOTE);
			break;
		}
		s->tries++;
		s->state = ST_SENDING;
		s->tx_next = 0;
		resend_abort = true;
	}
	if (resend_abort && p->abort_first != 0) {
		struct rsync_msg m = {0};

		m.u.abort.through_txid = p->abort_through;
		send_control(p, RSYNC_PEER_STANDBY, RSYNC_ABORT, p->abort_first, &m);
	}
	rsync_primary_pump(p, now);
	try_release(p, now);
	if (p->unacked_n > 0 && now - p->commit_sent_ns >= p->cfg.retrans_ns) {
		send_control(p, RSYNC_PEER_STANDBY, RSYNC_COMMIT, p->released_txid, NULL);
		p->commit_sent_ns = now;
		p->stats.commits_sent++;
	}
	if (p->released_cut_ts != 0 &&
	    now - p->trim_sent_ns >= TRIM_REPEAT_FACTOR * p->cfg.retrans_ns)
		send_trim(p, now);

	for (uint32_t k = 0; k < p->used; k++) {
		struct stage *s = stage_at(p, k);

		if (s->state == ST_SENT)
			next = s->deadline_ns < next ? s->deadline_ns : next;
		else if (s->state == ST_SENDING)
			next = now; /* blocked on the link or the window: poll (and time out) */
		else if (s->state == ST_OPEN && s->n > 0 && !s->cut_open && !s->held_for_cut &&
			 s->opened_ns + p->cfg.close_ns < next)
			next = s->opened_ns + p->cfg.close_ns;
	}
	if (p->unacked_n > 0 && p->commit_sent_ns + p->cfg.retrans_ns < next)
		next = p->commit_sent_ns + p->cfg.retrans_ns;
	if (p->released_cut_ts != 0 &&
	    p->trim_sent_ns + TRIM_REPEAT_FACTOR * p->cfg.retrans_ns < next)
		next = p->trim_sent_ns + TRIM_REPEAT_FACTOR * p->cfg.retrans_ns;
	return next;
}

void
rsync_primary_fence(struct rsync_primary *p)
{
	if (p->fenced)
		return;
	p->fenced = true;
	/* Nothing held may be released any more: a newer epoch owns the chain. */
	if (p->used > 0 && stage_at(p, p->used - 1)->state == ST_OPEN) {
		struct stage *o = stage_at(p, p->used - 1);

		if (o->n > 0)
			p->ops.drop(p->ctx, o->pkts, o->n, RSYNC_ABORT_FENCED);
		p->stats.pkts_dropped[RSYNC_ABORT_FENCED] += o->n;
		p->stats.aborts[RSYNC_ABORT_FENCED]++;
		rsync_stage_reset(o);
		p->used--;
	}
	if (p->used > 0)
		abort_from(p, 0, RSYNC_ABORT_FENCED);
}

/* The standby asks for a full cut.  Not while one is in flight (a busy
 * stage carries it, or it was released and the standby has not acknowledged
 * it: its votes for what came before still ask), nor within the hold-off
 * after one began. */
static void
note_resync(struct rsync_primary *p, uint64_t now)
{
	if (p->full_wanted || now < p->full_holdoff_ns || p->full_released_txid > p->acked_txid)
		return;
	for (uint32_t k = 0; k < p->used; k++)
		if (stage_at(p, k)->cut_full)
			return;
	p->full_wanted = true;
	p->stats.resyncs_asked++;
}

bool
rsync_primary_full_wanted(const struct rsync_primary *p)
{
	return p->full_wanted && !p->fenced;
}

/* The standby restarted: it never saw what its last run staged or
 * committed.  The commits in the window can never be acknowledged (they
 * would block sends for good); what it needs it asks for (a full cut). */
static void
standby_restarted(struct rsync_primary *p)
{
	p->stats.standby_restarts++;
	p->stats.unacked_given_up += p->unacked_n;
	p->unacked_n = 0;
	p->unacked_head = 0;
	p->full_released_txid = 0;
	p->full_backoff = 0;
	p->abort_first = p->abort_through = 0;
}

void
rsync_primary_hold_for_cut(struct rsync_primary *p, uint64_t cut_id)
{
	for (uint32_t k = 0; k < p->used; k++) {
		struct stage *s = stage_at(p, k);

		if (s->cut_id == 0 && (!s->needs_cut || s->nd_cut < cut_id)) {
			s->needs_cut = true;
			s->nd_cut = cut_id;
		}
	}
	rsync_primary_nd(p, cut_id);
}

/* The predecessor restarted and lost its log: no stage not released yet
 * may go out before a cut after it is voted (its inputs cannot be replayed
 * any more, so the standby must hold their effects), as for an ND decision
 * no cut covers; the next cut, asked for at once, covers them all.  The
 * owner, who knows which marker is on its way, names a later cut if that
 * one may have left ahead of the old run's input
 * (rsync_primary_hold_for_cut()).  Stages released before this is heard
 * are not covered: that window is the HEARTBEAT's way from the predecessor
 * (docs/design/remote.md). */
static void
pred_restarted(struct rsync_primary *p)
{
	p->stats.pred_restarts++;
	rsync_primary_hold_for_cut(p, p->chain_cut_id + 1);
}

/* A HEARTBEAT of the predecessor: its run (a new one: it restarted) and its
 * epoch (a newer one: it started a failover to the standby). */
static enum rsync_rx_reason
pred_heartbeat(struct rsync_primary *p, const struct rsync_msg *m)
{
	if (m->h.type != RSYNC_HEARTBEAT)
		return RSYNC_RX_WRONG_ROLE;
	if (m->h.epoch < p->epoch)
		return RSYNC_RX_STALE_EPOCH;
	switch (rsync_peer_run_heard(&p->pred_run, m->h.sender_run)) {
	case RSYNC_RUN_REPLACED:
		return RSYNC_RX_PEER_RESTARTED;
	case RSYNC_RUN_NEW:
		pred_restarted(p);
		break;
	case RSYNC_RUN_SAME:
		break;
	}
	if (m->h.epoch > p->epoch) {
		p->epoch = m->h.epoch;
		rsync_primary_fence(p);
	}
	return RSYNC_RX_OK;
}

static struct stage *
find_txn(struct rsync_primary *p, uint64_t txid)
{
	for (uint32_t k = 0; k < p->used; k++) {
		struct stage *s = stage_at(p, k);

		if (s->state >= ST_SENDING && s->txid == txid)
			return s;
	}
	return NULL;
}

enum rsync_rx_reason
rsync_primary_rx(struct rsync_primary *p, const struct rsync_msg *m, uint64_t now)
{
	enum rsync_rx_reason r = RSYNC_RX_OK;
	struct stage *s;

	if (m->h.chain != p->cfg.chain) {
		r = RSYNC_RX_UNKNOWN_CHAIN;
		goto out;
	}
	if (m->h.role == RSYNC_ROLE_PREDECESSOR) {
		r = pred_heartbeat(p, m);
		goto out;
	}
	/* From the standby only: anything else is a reflection of our own
	 * messages (or the predecessor's REPLAY_*, never ours to take). */
	if (m->h.role != RSYNC_ROLE_STANDBY) {
		r = RSYNC_RX_WRONG_ROLE;
		goto out;
	}
	if (m->h.epoch < p->epoch) {
		r = RSYNC_RX_STALE_EPOCH;
		goto out;
	}
	/* Granting messages must be addressed to this run: a VOTE recorded
	 * before this node restarted would release a stage unvoted.  (A
	 * HEARTBEAT grants nothing.) */
	if (m->h.receiver_run != p->cfg.run && m->h.type != RSYNC_HEARTBEAT) {
		r = RSYNC_RX_STALE_RUN;
		goto out;
	}
	switch (rsync_peer_run_heard(&p->standby_run, m->h.sender_run)) {
	case RSYNC_RUN_REPLACED: /* before the standby restarted */
		r = RSYNC_RX_PEER_RESTARTED;
		goto out;
	case RSYNC_RUN_NEW:
		standby_restarted(p);
		break;
	case RSYNC_RUN_SAME:
		break;
	}
	if (m->h.epoch > p->epoch) {
		/* Another node took the chain over: stop for good. */
		p->epoch = m->h.epoch;
		rsync_primary_fence(p);
		goto out;
	}
	if (p->fenced) {
		r = RSYNC_RX_STALE_EPOCH;
		goto out;
	}
	switch (m->h.type) {
	case RSYNC_VOTE:
		s = find_txn(p, m->h.txid);
		if (s == NULL || !s->started) { /* a vote for what was never sent */
			r = RSYNC_RX_UNKNOWN_TXN;
			break;
		}
		if (s->state == ST_VOTED) {
			r = RSYNC_RX_DUPLICATE;
			break;
		}
		s->state = ST_VOTED;
		p->stats.votes++;
		if (m->h.flags & RSYNC_F_RESYNC)
			note_resync(p, now);
		if (s->txid > p->abort_through)
			p->abort_first = p->abort_through = 0;
		try_release(p, now);
		rsync_primary_pump(p, now);
		break;
	case RSYNC_ACK:
		if (m->h.txid <= p->acked_txid) {
			r = RSYNC_RX_DUPLICATE;
			break;
		}
		if (m->h.txid > p->released_txid) {
			r = RSYNC_RX_UNKNOWN_TXN; /* acks what was never committed */
			break;
		}
		p->acked_txid = m->h.txid;
		p->stats.acks++;
		if (p->full_released_txid != 0 && m->h.txid >= p->full_released_txid) {
			p->full_backoff = 0; /* the full cut is applied */
			p->full_released_txid = 0;
		}
		while (p->unacked_n > 0 && p->unacked[p->unacked_head] <= m->h.txid) {
			p->unacked_head = (p->unacked_head + 1) % p->cfg.standby_window;
			p->unacked_n--;
		}
		if (m->h.txid > p->abort_through)
			p->abort_first = p->abort_through = 0;
		rsync_primary_pump(p, now);
		break;
	case RSYNC_HEARTBEAT:
		/* A standby without whole state, or a fresh one that applied
		 * nothing (quiet: no transaction comes): a full cut, which
		 * also lets an idle chain's standby be in sync. */
		if (m->h.flags & RSYNC_F_RESYNC)
			note_resync(p, now);
		break;
	default:
		r = RSYNC_RX_WRONG_ROLE;
		break;
	}
out:
	p->stats.rx[r]++;
	return r;
}

uint64_t
rsync_primary_standby_run(const struct rsync_primary *p)
{
	return p->standby_run.cur;
}

uint64_t
rsync_primary_pred_run(const struct rsync_primary *p)
{
	return p->pred_run.cur;
}

bool
rsync_primary_fenced(const struct rsync_primary *p)
{
	return p->fenced;
}

uint32_t
rsync_primary_epoch(const struct rsync_primary *p)
{
	return p->epoch;
}

uint32_t
rsync_primary_stages_busy(const struct rsync_primary *p)
{
	return p->used;
}

uint64_t
rsync_primary_pkts_latched(const struct rsync_primary *p)
{
	uint64_t n = 0;

	for (uint32_t k = 0; k < p->used; k++)
		n += p->stages[(p->head + k) % p->cfg.stages].n;
	return n;
}

const struct rsync_primary_stats *
rsync_primary_stats(const struct rsync_primary *p)
{
	return &p->stats;
}
