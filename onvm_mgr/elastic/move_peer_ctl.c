/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * move_peer_ctl.c -- flow migration across nodes on the control thread
 * (move_peer.h), under mgr.ctl_lock.  Both sides of a move run here:
 *
 * The src node (a move ONVM_MOVE_TO_PEER) says how the move stands in a
 * SYNC every millisecond -- the buckets, dst's instance, its state, src's
 * markers out, how many copies went -- and ships src's export (STATE) and
 * log (LOG) from its memzone, from where the dst node's STATUS says it got
 * to (go back and send again when the acknowledgement stalls).  Its STATUS
 * opens the move (dst's IN marker is in: the hook may copy), says dst
 * imported the state (the flip), how many tagged packets dst has seen
 * (the end), or that the move failed there.
 *
 * The dst node opens a mirror at the first SYNC (mgr_move_mirror_open:
 * dst's IN marker) and rebuilds there what dst's libnf reads on one node.
 * Once dst imported, the mirror is FLIPPING: nothing here may fail it any
 * more -- only the src node, which has not flipped yet, can (a FAILED in
 * its SYNC), and a problem found here is reported (LOSSY) for it to
 * decide.  That keeps the two nodes from ever disagreeing on who has the
 * flows, which one state word does on one node.
 *
 * A link or a node lost: before the flip the src node fails the move after
 * PEER_SILENT_NS without a STATUS (src has served the flows all along), and
 * the mirror fails after MIRROR_SILENT_NS without a SYNC; after it, the
 * flows at dst are lost with it, and both sides end the move, lossy.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "mgr.h"
#include "elastic/move.h"
#include "elastic/move_peer.h"

/* SYNC and STATUS go when what they say changed, and at least this often
 * while a move is live (a lost one is said again). */
#define SYNC_EVERY_NS (5ull * 1000 * 1000)
#define PEER_SILENT_NS (1000ull * 1000 * 1000)	  /* src node: no STATUS for this long */
#define MIRROR_SILENT_NS (3000ull * 1000 * 1000)  /* dst node: no SYNC before the flip */
#define MIRROR_LINGER_NS (10000ull * 1000 * 1000) /* ... after it */
#define RESEND_NS (20ull * 1000 * 1000) /* no progress acknowledged: again from the ack */
#define OVER_TALK_NS (2000ull * 1000 * 1000) /* an over move's end said for this long */
#define STATE_WINDOW (256u << 10)	     /* STATE bytes beyond the acknowledged */
#define LOG_WINDOW (ONVM_MOVE_LOG_SIZE / 2)   /* LOG entries beyond the acknowledged */
#define FRAMES_PER_PASS 64

/* The src node's side of a move, by its slot. */
static struct src_side {
	uint32_t gen;		      /* the move's (mv->gen) these are of */
	bool open;		      /* dst's node opened its mirror */
	bool start_told, end_told;    /* src's START/END out, after a grace period */
	uint64_t last_status_ns, last_sync_ns;
	uint64_t state_sent, state_acked;
	uint64_t log_sent, log_acked; /* the next entry to send / dst's next expected */
	uint64_t state_progress_ns, log_progress_ns; /* their acknowledgements last moved */
	uint64_t over_ns;	      /* seen DONE or FAILED here */
	uint8_t peer_state;	      /* the mirror's state, last heard */
	int mirror;		      /* the mirror's slot there (-1: not heard yet) */
	uint64_t peer_lost;	      /* copies the mirror said it lost, so far */
	uint32_t said;		      /* state and flags of the last SYNC */
} srcs[ONVM_MAX_MOVES];

/* The dst node's side: a mirror, by its slot here. */
static struct dst_side {
	bool live;
	uint32_t gen; /* the mirror's mv->gen */
	uint16_t port;
	uint32_t a_slot, a_gen; /* the move at the src node */
	bool exported;
	uint32_t n_included;
	uint64_t state_total, state_got;
	uint64_t log_next;
	uint64_t a_copies; /* copies the last SYNC said were sent: all ahead of it */
	uint64_t last_heard_ns, last_status_ns, over_ns;
	uint64_t said[4]; /* state and flags, state_got, log_next, dst_seen of the last STATUS */
} dsts[ONVM_MAX_MOVES];

/* The last move of each (port, src slot) whose mirror closed: a SYNC late
 * on the wire does not open it again. */
static uint32_t closed_gen[ONVM_MAX_PORTS][ONVM_MAX_MOVES];
static uint64_t ctl_unknown, mirrors_opened, mirrors_refused;

static const char *const type_names[ONVM_XM_STATUS + 1] = {
	[ONVM_XM_COPY] = "copy",   [ONVM_XM_BUFFERED] = "buffered", [ONVM_XM_HANDOFF] = "handoff",
	[ONVM_XM_RETURN] = "return", [ONVM_XM_SYNC] = "sync",	    [ONVM_XM_STATE] = "state",
	[ONVM_XM_LOG] = "log",	     [ONVM_XM_STATUS] = "status",
};

int
mgr_move_peer_init(void)
{
	bool any = false;

	for (uint16_t p = 0; p < mgr.nb_ports && p < ONVM_MAX_PORTS; p++) {
		struct rte_ether_addr a;

		if (!mgr.cfg.ports[p].peer)
			continue;
		memset(mgr_peer_mac[p], 0xff, 6); /* (a point-to-point link) */
		if (rte_eth_macaddr_get(p, &a) == 0)
			memcpy(mgr_peer_mac[p] + 6, a.addr_bytes, 6);
		mgr_peer_port[p] = true;
		mgr.shm->ports[p].peer = 1;
		any = true;
	}
	if (!any)
		return 0;
	mgr_peer_ctl_ring = rte_ring_create("onvm_peer_ctl", 1024, rte_socket_id(),
					    RING_F_SP_ENQ | RING_F_SC_DEQ);
	mgr_peer_out_ring = rte_ring_create("onvm_peer_out", 2 * MGR_PEER_OUT_N, rte_socket_id(),
					    RING_F_SP_ENQ | RING_F_SC_DEQ);
	mgr_peer_out_free = rte_ring_create("onvm_peer_out_free", 2 * MGR_PEER_OUT_N,
					    rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (mgr_peer_ctl_ring == NULL || mgr_peer_out_ring == NULL || mgr_peer_out_free == NULL) {
		MGR_LOG(ERR, "cross-node moves: no rings for control frames");
		return -1;
	}
	for (unsigned int i = 0; i < MGR_PEER_OUT_N; i++)
		rte_ring_sp_enqueue(mgr_peer_out_free, &mgr_peer_out[i]);
	__atomic_store_n(&mgr_peer_any, true, __ATOMIC_RELEASE);
	/* (the control thread runs the moves' pass from now on) */
	__atomic_store_n(&mgr_moves_any, true, __ATOMIC_RELEASE);
	return 0;
}

/* ---- the src node ---- */

void
mgr_move_peer_reset(uint32_t slot)
{
	uint64_t now = mgr_now_ns();

	memset(&srcs[slot], 0, sizeof(srcs[slot]));
	srcs[slot].gen = mgr.shm->moves[slot].gen;
	srcs[slot].log_sent = srcs[slot].log_acked = 1;
	srcs[slot].mirror = -1;
	srcs[slot].last_status_ns = now; /* (the first answer is a round trip away) */
	srcs[slot].state_progress_ns = srcs[slot].log_progress_ns = now;
}

bool
mgr_move_peer_open(uint32_t slot)
{
	return srcs[slot].gen == mgr.shm->moves[slot].gen && srcs[slot].open;
}

bool
mgr_move_peer_alive(uint32_t slot)
{
	return mgr_now_ns() - srcs[slot].last_status_ns < PEER_SILENT_NS;
}

/* Bytes [off, off + len) of the STATE: src's included tags' sequence
 * numbers (big-endian), then its export. */
static void
state_read(const struct onvm_move_xfer *x, uint32_t n_inc, uint64_t off, uint8_t *out,
	   uint32_t len)
{
	const uint64_t inc_bytes = 8ull * n_inc;

	for (; len > 0 && off < inc_bytes; off++, out++, len--) {
		uint64_t be = htobe64(ONVM_MOVE_TAG_SEQ(x->included[off / 8]));

		*out = ((const uint8_t *)&be)[off % 8];
	}
	if (len > 0)
		memcpy(out, x->data + (off - inc_bytes), len);
}

static uint32_t
src_n_included(const struct onvm_move_xfer *x)
{
	return RTE_MIN(x->n_included, (uint32_t)ONVM_MOVE_INCLUDED_MAX);
}

/* The flags of a SYNC now (ONVM_XM_S_*). */
static uint8_t
sync_flags(uint32_t slot, const struct onvm_move *mv, const struct src_side *s)
{
	const struct onvm_move_xfer *x = mgr_move_xfer[slot];

	return (s->start_told ? ONVM_XM_S_START_OUT : 0) | (s->end_told ? ONVM_XM_S_END_OUT : 0) |
	       (__atomic_load_n(&mv->src_gone, __ATOMIC_ACQUIRE) ? ONVM_XM_S_SRC_GONE : 0) |
	       (__atomic_load_n(&mv->src_exported, __ATOMIC_ACQUIRE) && x != NULL &&
			x->len <= ONVM_MOVE_XFER_MAX
		? ONVM_XM_S_EXPORTED
		: 0);
}

static void
src_send_sync(uint32_t slot, const struct onvm_move *mv, struct src_side *s, uint32_t st)
{
	struct onvm_xm_ctl c = {.type = ONVM_XM_SYNC, .slot = (uint8_t)slot, .gen = mv->gen};
	struct onvm_xm_sync *y = &c.u.sync;
	const struct onvm_move_xfer *x = mgr_move_xfer[slot];

	y->service = mv->service;
	y->inst = mv->peer_inst;
	y->method = mv->method;
	y->state = (uint8_t)st;
	y->fail = __atomic_load_n(&mv->fail, __ATOMIC_ACQUIRE);
	y->flags = sync_flags(slot, mv, s);
	if (y->flags & ONVM_XM_S_EXPORTED) {
		y->n_included = src_n_included(x);
		y->state_len = 8ull * y->n_included + x->len;
	}
	y->copies = __atomic_load_n(&mv->copies, __ATOMIC_ACQUIRE);
	memcpy(y->buckets, mv->buckets, sizeof(y->buckets));
	if (mgr_move_peer_send_ctl(mv->peer_port, &c)) {
		s->last_sync_ns = mgr_now_ns();
		s->said = y->state | (uint32_t)y->flags << 8;
	}
}

/* src's export, from where dst's node acknowledged, a window at a time. */
static void
src_send_state(uint32_t slot, const struct onvm_move *mv, struct src_side *s)
{
	const struct onvm_move_xfer *x = mgr_move_xfer[slot];
	struct onvm_xm_ctl c = {.type = ONVM_XM_STATE, .slot = (uint8_t)slot, .gen = mv->gen};
	uint8_t buf[ONVM_XM_STATE_CHUNK];
	uint64_t total;
	uint32_t n_inc;

	if (!__atomic_load_n(&mv->src_exported, __ATOMIC_ACQUIRE) || x->len > ONVM_MOVE_XFER_MAX)
		return;
	n_inc = src_n_included(x);
	total = 8ull * n_inc + x->len;
	if (s->state_sent == s->state_acked) /* (the time-out runs from the first unacknowledged) */
		s->state_progress_ns = mgr_now_ns();
	for (int k = 0; k < FRAMES_PER_PASS && s->state_sent < total &&
			s->state_sent - s->state_acked < STATE_WINDOW;
	     k++) {
		uint32_t len = (uint32_t)RTE_MIN(total - s->state_sent, (uint64_t)sizeof(buf));

		state_read(x, n_inc, s->state_sent, buf, len);
		c.u.state.offset = (uint32_t)s->state_sent;
		c.u.state.total = (uint32_t)total;
		c.u.state.len = (uint16_t)len;
		c.u.state.bytes = buf;
		if (!mgr_move_peer_send_ctl(mv->peer_port, &c))
			return;
		s->state_sent += len;
	}
}

/* src's log entries in order, as far as src wrote them (an entry's tag is
 * written last). */
static void
src_send_log(uint32_t slot, const struct onvm_move *mv, struct src_side *s)
{
	const struct onvm_move_xfer *x = mgr_move_xfer[slot];
	struct onvm_xm_ctl c = {.type = ONVM_XM_LOG, .slot = (uint8_t)slot, .gen = mv->gen};
	uint64_t top = __atomic_load_n(&mv->seq, __ATOMIC_ACQUIRE);

	if (s->log_sent == s->log_acked)
		s->log_progress_ns = mgr_now_ns();
	for (int k = 0; k < FRAMES_PER_PASS && s->log_sent - s->log_acked < LOG_WINDOW; k++) {
		struct onvm_xm_log *l = &c.u.log;

		l->first = s->log_sent;
		l->count = 0;
		while (l->count < ONVM_XM_LOG_MAX && l->first + l->count <= top) {
			uint64_t seq = l->first + l->count;
			const struct onvm_move_log_entry *e = &x->log[seq & (ONVM_MOVE_LOG_SIZE - 1)];
			struct onvm_xm_log_entry *o = &l->e[l->count];

			if (__atomic_load_n(&e->tag, __ATOMIC_ACQUIRE) !=
			    ONVM_MOVE_TAG(slot, mv->gen, seq))
				break;
			o->flags = e->flags & 0x7;
			o->n_nd = RTE_MIN(e->n_nd, (uint32_t)ONVM_XM_ND_MAX);
			memset(o->nd, 0, sizeof(o->nd));
			memcpy(o->nd, e->nd, o->n_nd * sizeof(o->nd[0]));
			l->count++;
		}
		if (l->count == 0 || !mgr_move_peer_send_ctl(mv->peer_port, &c))
			return;
		s->log_sent += l->count;
	}
}

static void
src_on_status(uint16_t port, const struct onvm_xm_ctl *c, uint64_t now)
{
	const struct onvm_xm_status *t = &c->u.status;
	struct onvm_move *mv = c->slot < ONVM_MAX_MOVES ? &mgr.shm->moves[c->slot] : NULL;
	struct src_side *s;

	if (mv == NULL || mv->xnode != ONVM_MOVE_TO_PEER || mv->gen != c->gen ||
	    mv->peer_port != port || srcs[c->slot].gen != c->gen) {
		ctl_unknown++;
		return;
	}
	s = &srcs[c->slot];
	{
		uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);

		/* Over here: the mirror is told again how it ended (its node may
		 * have been cut off for the whole over-talk). */
		if ((st == ONVM_MOVE_DONE || st == ONVM_MOVE_FAILED) &&
		    t->state != ONVM_MOVE_DONE && t->state != ONVM_MOVE_FAILED)
			src_send_sync(c->slot, mv, s, st);
	}
	/* Another mirror than the one that opened it (the dst node restarted,
	 * or a stale one of a restarted src node's): it has not had what this
	 * move sent -- the move cannot be trusted. */
	if ((s->mirror >= 0 && t->mirror_slot != s->mirror) ||
	    (t->state != ONVM_MOVE_FAILED &&
	     (t->state_acked < s->state_acked || t->log_next < s->log_acked))) {
		uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);

		mgr_move_fail(c->slot, ONVM_MOVE_FAIL_PEER_LOST);
		/* (after the flip: the flows there lost their state) */
		if (st >= ONVM_MOVE_FLIPPING && st != ONVM_MOVE_DONE && st != ONVM_MOVE_FAILED)
			__atomic_store_n(&mv->lossy, 1, __ATOMIC_RELEASE);
		return;
	}
	if (t->mirror_slot != 0xff)
		s->mirror = t->mirror_slot;
	s->last_status_ns = now;
	s->peer_state = t->state;
	mv->peer_slot = t->mirror_slot;
	if (t->flags & ONVM_XM_T_OPEN)
		s->open = true;
	if (t->state_acked > s->state_acked) {
		s->state_acked = t->state_acked;
		s->state_progress_ns = now;
	}
	if (t->log_next > s->log_acked) {
		s->log_acked = t->log_next;
		s->log_progress_ns = now;
	}
	s->state_sent = RTE_MAX(s->state_sent, s->state_acked);
	s->log_sent = RTE_MAX(s->log_sent, s->log_acked);
	/* dst's figures.  dst_seen lets src reuse a log entry (src_begin):
	 * only once the entry it replaces has reached dst's node. */
	{
		uint64_t seen = mv->method == ONVM_MOVE_BUFFER /* (src logs nothing) */
					? t->dst_seen
					: RTE_MIN(t->dst_seen, s->log_acked - 1);

		if (seen > __atomic_load_n(&mv->dst_seen, __ATOMIC_RELAXED))
			__atomic_store_n(&mv->dst_seen, seen, __ATOMIC_RELEASE);
	}
	mv->imported_flows = t->imported_flows;
	mv->reprocessed = t->reprocessed;
	mv->skipped_included = t->skipped_included;
	mv->nd_replayed = t->nd_replayed;
	mv->dst_dropped = t->dst_dropped;
	mv->nd_short = t->nd_short;
	/* (added to ours: copies this node could not send) */
	if (t->copies_lost > s->peer_lost) {
		__atomic_add_fetch(&mv->copies_lost, t->copies_lost - s->peer_lost,
				   __ATOMIC_RELEASE);
		s->peer_lost = t->copies_lost;
	}
	if (t->state == ONVM_MOVE_FAILED) {
		uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);

		/* (flipped here, failed there: the flows there have no state --
		 * said, counted; /onvm/unpeer takes them back) */
		if (st >= ONVM_MOVE_FLIPPING && st != ONVM_MOVE_FAILED &&
		    !__atomic_load_n(&mv->lossy, __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&mv->lossy, 1, __ATOMIC_RELEASE);
			MGR_LOG(ERR, "move %u: flipped here but failed at the other node (%s): its "
				"flows there have no state", c->slot, mgr_move_fail_str(t->fail));
		}
		mgr_move_fail(c->slot, t->fail != ONVM_MOVE_OK && t->fail < ONVM_MOVE_FAIL_REASON_MAX
					       ? (enum onvm_move_fail)t->fail
					       : ONVM_MOVE_FAIL_PEER_REFUSED);
	} else if (t->flags & ONVM_XM_T_LOSSY) {
		/* before our flip: the move fails; after it: lossy */
		mgr_move_fail(c->slot, ONVM_MOVE_FAIL_COPY);
	} else if ((t->flags & ONVM_XM_T_IMPORTED) &&
		   !__atomic_load_n(&mv->dst_imported, __ATOMIC_ACQUIRE)) {
		uint32_t st = ONVM_MOVE_EXPORTED;

		mv->t_imported = now;
		if (__atomic_compare_exchange_n(&mv->state, &st, ONVM_MOVE_IMPORTED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			__atomic_store_n(&mv->dst_imported, 1, __ATOMIC_RELEASE);
	}
}

/* One src-node move's pass; true while it needs the next soon. */
static bool
src_pass(uint32_t slot, uint64_t now)
{
	struct onvm_move *mv = &mgr.shm->moves[slot];
	struct src_side *s = &srcs[slot];
	uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);
	bool over = st == ONVM_MOVE_DONE || st == ONVM_MOVE_FAILED;

	if (mv->xnode != ONVM_MOVE_TO_PEER || s->gen != mv->gen || st == ONVM_MOVE_FREE)
		return false;
	if (over) {
		if (s->over_ns == 0)
			s->over_ns = now;
		/* said until the mirror is over too, or for OVER_TALK_NS */
		if (now - s->over_ns > OVER_TALK_NS || s->peer_state == ONVM_MOVE_DONE ||
		    s->peer_state == ONVM_MOVE_FAILED)
			return false;
	}
	/* src's output before its START (END) marker is in the TX unit's
	 * buffers when the marker comes out: after a grace period it is in
	 * the next rings, ahead of anything dst sends back. */
	if ((!s->start_told && __atomic_load_n(&mv->start_out, __ATOMIC_ACQUIRE)) ||
	    (!s->end_told && __atomic_load_n(&mv->end_out, __ATOMIC_ACQUIRE))) {
		bool start = __atomic_load_n(&mv->start_out, __ATOMIC_ACQUIRE);
		bool end = __atomic_load_n(&mv->end_out, __ATOMIC_ACQUIRE);

		mgr_rcu_wait();
		s->start_told |= start;
		s->end_told |= end;
		s->last_sync_ns = 0; /* (say it now) */
	}
	/* (SYNC first: it tells the export's length before its bytes come) */
	if (now - s->last_sync_ns >= SYNC_EVERY_NS ||
	    (st | (uint32_t)sync_flags(slot, mv, s) << 8) != s->said)
		src_send_sync(slot, mv, s, st);
	if (!over && s->open) {
		if (s->state_sent > s->state_acked && now - s->state_progress_ns > RESEND_NS) {
			s->state_sent = s->state_acked;
			s->state_progress_ns = now;
		}
		if (s->log_sent > s->log_acked && now - s->log_progress_ns > RESEND_NS) {
			s->log_sent = s->log_acked;
			s->log_progress_ns = now;
		}
		src_send_state(slot, mv, s);
		src_send_log(slot, mv, s);
	}
	/* dst's node gone after the flip: the flows there are lost with it */
	if (!over && st >= ONVM_MOVE_FLIPPING && now - s->last_status_ns > PEER_SILENT_NS)
		__atomic_store_n(&mv->lossy, 1, __ATOMIC_RELEASE);
	return true;
}

/* ---- the dst node ---- */

/* The mirror's buckets are (not) its dst's from its port's node. */
static void
owned_set(const struct onvm_move *mv, bool on)
{
	if (mv->dst >= ONVM_MAX_NFS) /* (shared memory: checked) */
		return;
	for (uint32_t w = 0; w < ONVM_FLOW_BUCKETS / 64; w++) {
		if (on)
			__atomic_fetch_or(&mgr_peer_owned[mv->dst][w], mv->buckets[w],
					  __ATOMIC_RELEASE);
		else
			__atomic_fetch_and(&mgr_peer_owned[mv->dst][w], ~mv->buckets[w],
					   __ATOMIC_RELEASE);
	}
}

void
mgr_move_peer_forget(uint16_t id)
{
	MGR_ASSERT_CTL_LOCKED();
	__atomic_store_n(&mgr_peer_owner[id], 0, __ATOMIC_RELEASE);
	for (uint32_t w = 0; w < ONVM_FLOW_BUCKETS / 64; w++)
		__atomic_store_n(&mgr_peer_owned[id][w], 0, __ATOMIC_RELEASE);
}

static int
mirror_of(uint16_t port, uint32_t a_slot, uint32_t a_gen)
{
	uint64_t e;
	uint32_t b;

	if (a_slot >= ONVM_MAX_MOVES)
		return -1;
	e = __atomic_load_n(&mgr_peer_mirror[port][a_slot], __ATOMIC_ACQUIRE);
	b = MGR_PEER_MIRROR_SLOT(e);
	if (e == 0 || MGR_PEER_MIRROR_AGEN(e) != a_gen || b >= ONVM_MAX_MOVES || !dsts[b].live ||
	    dsts[b].gen != mgr.shm->moves[b].gen)
		return -1;
	return (int)b;
}

static void
mirror_send_status(uint32_t b, uint64_t now)
{
	const struct onvm_move *mv = &mgr.shm->moves[b];
	struct dst_side *d = &dsts[b];
	struct onvm_xm_ctl c = {.type = ONVM_XM_STATUS, .slot = (uint8_t)d->a_slot,
				.gen = d->a_gen};
	struct onvm_xm_status *t = &c.u.status;
	uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);

	t->mirror_slot = (uint8_t)b;
	t->state = (uint8_t)st;
	t->fail = mv->fail < ONVM_MOVE_FAIL_REASON_MAX ? mv->fail : ONVM_MOVE_OK;
	t->flags = ONVM_XM_T_OPEN;
	/* imported only once nothing here can fail the move (FLIPPING) */
	if (st >= ONVM_MOVE_FLIPPING && st != ONVM_MOVE_FAILED &&
	    __atomic_load_n(&mv->dst_imported, __ATOMIC_ACQUIRE))
		t->flags |= ONVM_XM_T_IMPORTED;
	if (__atomic_load_n(&mv->lossy, __ATOMIC_ACQUIRE))
		t->flags |= ONVM_XM_T_LOSSY;
	t->state_acked = d->state_got;
	t->log_next = d->log_next;
	t->copies_rcvd = __atomic_load_n(&mv->copies, __ATOMIC_ACQUIRE);
	t->dst_seen = __atomic_load_n(&mv->dst_seen, __ATOMIC_ACQUIRE);
	t->imported_flows = mv->imported_flows;
	t->reprocessed = mv->reprocessed;
	t->skipped_included = mv->skipped_included;
	t->nd_replayed = mv->nd_replayed;
	t->dst_dropped = mv->dst_dropped;
	t->copies_lost = __atomic_load_n(&mv->copies_lost, __ATOMIC_ACQUIRE);
	t->nd_short = (uint32_t)RTE_MIN(mv->nd_short, (uint64_t)UINT32_MAX);
	if (mgr_move_peer_send_ctl(d->port, &c)) {
		d->last_status_ns = now;
		d->said[0] = t->state | (uint32_t)t->flags << 8;
		d->said[1] = t->state_acked;
		d->said[2] = t->log_next;
		d->said[3] = t->dst_seen;
	}
}

/* Has what a STATUS says changed since the last one? */
static bool
mirror_news(uint32_t b)
{
	const struct onvm_move *mv = &mgr.shm->moves[b];
	const struct dst_side *d = &dsts[b];
	uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);

	return (d->said[0] & 0xff) != st || d->said[1] != d->state_got ||
	       d->said[2] != d->log_next ||
	       d->said[3] != __atomic_load_n(&mv->dst_seen, __ATOMIC_ACQUIRE) ||
	       ((d->said[0] >> 8) & ONVM_XM_T_LOSSY) !=
		       (__atomic_load_n(&mv->lossy, __ATOMIC_ACQUIRE) ? ONVM_XM_T_LOSSY : 0u);
}

/* A move the src node asked for that cannot be opened here: said. */
static void
mirror_refuse(uint16_t port, const struct onvm_xm_ctl *sync, const char *why)
{
	struct onvm_xm_ctl c = {.type = ONVM_XM_STATUS, .slot = sync->slot, .gen = sync->gen};

	c.u.status.mirror_slot = 0xff;
	c.u.status.state = ONVM_MOVE_FAILED;
	c.u.status.fail = ONVM_MOVE_FAIL_PEER_REFUSED;
	c.u.status.log_next = 1;
	if (closed_gen[port][sync->slot] != sync->gen) {
		mirrors_refused++;
		MGR_LOG(WARNING, "move %u (gen %u) from port %u refused: %s", sync->slot, sync->gen,
			port, why);
	}
	closed_gen[port][sync->slot] = sync->gen;
	(void)mgr_move_peer_send_ctl(port, &c);
}

/* The src node failed the move (it never flipped): nothing of it stays.
 * (src_gone there is peer_lost here: libnf keeps a dead src's import on
 * one node, whose buckets may come to dst; the src node's never do.) */
static void
mirror_force_fail(uint32_t b, uint8_t why)
{
	struct onvm_move *mv = &mgr.shm->moves[b];
	uint8_t none = ONVM_MOVE_OK;
	uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);

	if (st == ONVM_MOVE_FAILED || st == ONVM_MOVE_DONE || st == ONVM_MOVE_FREE)
		return;
	if (why == ONVM_MOVE_OK || why >= ONVM_MOVE_FAIL_REASON_MAX ||
	    why == ONVM_MOVE_FAIL_SRC_GONE || why == ONVM_MOVE_FAIL_SRC_FAILOVER)
		why = ONVM_MOVE_FAIL_PEER_LOST;
	__atomic_compare_exchange_n(&mv->fail, &none, why, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
	/* (even FLIPPING: that was ours, the src node's flip never came) */
	__atomic_store_n(&mv->state, ONVM_MOVE_FAILED, __ATOMIC_RELEASE);
}

/* The whole STATE is in: the export as dst's libnf reads it on one node. */
static void
mirror_state_complete(uint32_t b, uint64_t now)
{
	struct onvm_move *mv = &mgr.shm->moves[b];
	struct onvm_move_xfer *x = mgr_move_xfer[b];
	struct dst_side *d = &dsts[b];
	uint32_t st = ONVM_MOVE_STARTED;

	for (uint32_t i = 0; i < d->n_included; i++) {
		uint64_t seq = be64toh(x->included[i]);

		if (seq == 0 || seq >= (UINT64_C(1) << 40)) {
			mgr_move_fail(b, ONVM_MOVE_FAIL_IMPORT);
			return;
		}
		x->included[i] = ONVM_MOVE_TAG(b, mv->gen, seq);
	}
	x->n_included = d->n_included;
	x->len = d->state_total - 8ull * d->n_included;
	mv->t_exported = now;
	__atomic_store_n(&mv->src_exported, 1, __ATOMIC_RELEASE);
	__atomic_compare_exchange_n(&mv->state, &st, ONVM_MOVE_EXPORTED, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
}

static void
dst_on_sync(uint16_t port, const struct onvm_xm_ctl *c, uint64_t now)
{
	const struct onvm_xm_sync *y = &c->u.sync;
	int b = mirror_of(port, c->slot, c->gen);
	struct onvm_move *mv;
	struct dst_side *d;

	if (b < 0) {
		struct mgr_move_req req = {.service = y->service, .src = ONVM_INST_NONE,
					   .dst = y->inst, .method = y->method};
		char err[160];

		/* Only a move that has sent nothing yet opens one: the src
		 * node hooks it once the mirror answers (a late SYNC of a
		 * closed one, or one this node's restart missed the start of,
		 * does not). */
		if (y->state != ONVM_MOVE_STARTED || y->copies != 0 ||
		    (y->flags & (ONVM_XM_S_START_OUT | ONVM_XM_S_EXPORTED)) ||
		    closed_gen[port][c->slot] == c->gen)
			return;
		memcpy(req.buckets, y->buckets, sizeof(req.buckets));
		/* (a peer_only instance serves one node's flows: the first
		 * mirror into it claims it for its port) */
		if (y->inst < ONVM_MAX_NFS && mgr_peer_owner[y->inst] != 0 &&
		    mgr_peer_owner[y->inst] != port + 1) {
			snprintf(err, sizeof(err), "instance %u serves the flows of the node behind "
				 "port %u", y->inst, mgr_peer_owner[y->inst] - 1);
			mirror_refuse(port, c, err);
			return;
		}
		b = mgr_move_mirror_open(&req, port, c->slot, c->gen, err, sizeof(err));
		if (b < 0) {
			mirror_refuse(port, c, err);
			return;
		}
		__atomic_store_n(&mgr_peer_owner[y->inst], port + 1, __ATOMIC_RELEASE);
		d = &dsts[b];
		memset(d, 0, sizeof(*d));
		d->live = true;
		d->gen = mgr.shm->moves[b].gen;
		d->port = port;
		d->a_slot = c->slot;
		d->a_gen = c->gen;
		d->log_next = 1;
		mirrors_opened++;
		__atomic_store_n(&mgr_peer_mirror[port][c->slot],
				 MGR_PEER_MIRROR(c->gen, b, d->gen), __ATOMIC_RELEASE);
	}
	d = &dsts[b];
	mv = &mgr.shm->moves[b];
	/* (a move of the same slot and gen but not this one: a restarted
	 * src node's) */
	if (mv->service != y->service || mv->dst != y->inst || mv->method != y->method ||
	    memcmp(mv->buckets, y->buckets, sizeof(mv->buckets)) != 0) {
		mgr_move_fail(b, ONVM_MOVE_FAIL_PEER_LOST);
		mirror_force_fail(b, ONVM_MOVE_FAIL_PEER_LOST);
		return;
	}
	d->last_heard_ns = now;
	d->a_copies = y->copies;
	if (y->flags & ONVM_XM_S_START_OUT)
		__atomic_store_n(&mv->start_out, 1, __ATOMIC_RELEASE);
	if (y->flags & ONVM_XM_S_END_OUT)
		__atomic_store_n(&mv->end_out, 1, __ATOMIC_RELEASE);
	/* (src gone before its flip: the src node fails the move, and dst
	 * must free what it took, not keep it as libnf keeps a dead local
	 * src's -- so only after the flip does dst hear of it) */
	if ((y->flags & ONVM_XM_S_SRC_GONE) && y->state >= ONVM_MOVE_FLIPPING &&
	    y->state != ONVM_MOVE_FAILED)
		__atomic_store_n(&mv->src_gone, 1, __ATOMIC_RELEASE);
	if ((y->flags & ONVM_XM_S_EXPORTED) && !d->exported) {
		if (y->state_len - 8ull * y->n_included > ONVM_MOVE_XFER_MAX) {
			mgr_move_fail(b, ONVM_MOVE_FAIL_EXPORT);
		} else {
			d->exported = true;
			d->n_included = y->n_included;
			d->state_total = y->state_len;
			if (d->state_total == 0)
				mirror_state_complete(b, now);
		}
	}
	if (y->state == ONVM_MOVE_FAILED) {
		mirror_force_fail(b, y->fail);
	} else if (y->state == ONVM_MOVE_DONE) {
		uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);

		if (st == ONVM_MOVE_FLIPPING || st == ONVM_MOVE_FLIPPED) {
			mv->t_done = now;
			__atomic_store_n(&mv->state, ONVM_MOVE_DONE, __ATOMIC_RELEASE);
		}
	} else if (y->state >= ONVM_MOVE_FLIPPING) {
		uint32_t st = ONVM_MOVE_FLIPPING;

		if (__atomic_compare_exchange_n(&mv->state, &st, ONVM_MOVE_FLIPPED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			mv->t_flip = now;
	}
}

static void
dst_on_state(uint16_t port, const struct onvm_xm_ctl *c, uint64_t now)
{
	const struct onvm_xm_state *p = &c->u.state;
	int b = mirror_of(port, c->slot, c->gen);
	struct onvm_move_xfer *x;
	struct dst_side *d;
	uint64_t inc_bytes, off;
	uint32_t len, k;

	if (b < 0) {
		ctl_unknown++;
		return;
	}
	d = &dsts[b];
	/* in order only (the acknowledgement says where to go on from) */
	if (!d->exported || p->total != d->state_total || p->offset != d->state_got ||
	    d->state_got >= d->state_total)
		return;
	x = mgr_move_xfer[b];
	inc_bytes = 8ull * d->n_included;
	off = p->offset;
	len = p->len;
	k = 0;
	if (off < inc_bytes) {
		uint32_t n = (uint32_t)RTE_MIN((uint64_t)len, inc_bytes - off);

		memcpy((uint8_t *)x->included + off, p->bytes, n);
		k = n;
	}
	if (k < len)
		memcpy(x->data + (off + k - inc_bytes), p->bytes + k, len - k);
	d->state_got += len;
	d->last_heard_ns = now;
	if (d->state_got == d->state_total)
		mirror_state_complete((uint32_t)b, now);
}

static void
dst_on_log(uint16_t port, const struct onvm_xm_ctl *c, uint64_t now)
{
	const struct onvm_xm_log *l = &c->u.log;
	int b = mirror_of(port, c->slot, c->gen);
	struct onvm_move_xfer *x;
	struct dst_side *d;
	uint32_t gen;

	if (b < 0) {
		ctl_unknown++;
		return;
	}
	d = &dsts[b];
	x = mgr_move_xfer[b];
	gen = mgr.shm->moves[b].gen;
	for (uint32_t i = 0; i < l->count; i++) {
		uint64_t seq = l->first + i;
		struct onvm_move_log_entry *e;

		if (seq < d->log_next)
			continue;
		if (seq > d->log_next)
			break; /* (a gap: the rest comes again) */
		e = &x->log[seq & (ONVM_MOVE_LOG_SIZE - 1)];
		e->flags = l->e[i].flags;
		e->n_nd = l->e[i].n_nd;
		memcpy(e->nd, l->e[i].nd, sizeof(e->nd));
		/* (tag last: dst reads the entry once it sees its tag) */
		__atomic_store_n(&e->tag, ONVM_MOVE_TAG(b, gen, seq), __ATOMIC_RELEASE);
		d->log_next++;
	}
	d->last_heard_ns = now;
}

/* One mirror's pass; true while it needs the next soon. */
static bool
mirror_pass(uint32_t b, uint64_t now)
{
	struct onvm_move *mv = &mgr.shm->moves[b];
	struct dst_side *d = &dsts[b];
	uint32_t st;

	if (!d->live)
		return false;
	if (mv->gen != d->gen || mv->xnode != ONVM_MOVE_FROM_PEER) {
		/* (taken by another move: not before it was closed, free_slot;
		 * its map entry goes all the same) */
		uint64_t mine = MGR_PEER_MIRROR(d->a_gen, b, d->gen);

		__atomic_compare_exchange_n(&mgr_peer_mirror[d->port][d->a_slot], &mine, 0, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		d->live = false;
		return false;
	}
	st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);
	if (st != ONVM_MOVE_DONE && st != ONVM_MOVE_FAILED) {
		uint32_t imp = ONVM_MOVE_IMPORTED;

		/* dst has the state: from here only the src node fails it, and
		 * dst takes the buckets' handed-over packets (before it says
		 * IMPORTED: the src node flips only then) */
		if (st == ONVM_MOVE_IMPORTED && mgr_move_dst_alive(b) &&
		    __atomic_compare_exchange_n(&mv->state, &imp, ONVM_MOVE_FLIPPING, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			st = ONVM_MOVE_FLIPPING;
			owned_set(mv, true);
			d->last_status_ns = 0; /* (say it now) */
		}
		if (!mgr_move_dst_alive(b)) {
			if (st < ONVM_MOVE_FLIPPING)
				mgr_move_fail(b, ONVM_MOVE_FAIL_DST_GONE);
			else
				__atomic_store_n(&mv->lossy, 1, __ATOMIC_RELEASE);
		}
		/* A copy lost on the link: those a SYNC counted went into the
		 * src node's port ahead of it (counted once queued), one queue,
		 * so they are here (received: mv->copies) if none was lost.  Before FLIPPING the move
		 * fails; after, lossy -- the src node fails it if not flipped. */
		if (__atomic_load_n(&mv->copies, __ATOMIC_ACQUIRE) < d->a_copies) {
			if (st < ONVM_MOVE_FLIPPING)
				mgr_move_fail(b, ONVM_MOVE_FAIL_COPY);
			else
				__atomic_store_n(&mv->lossy, 1, __ATOMIC_RELEASE);
		}
		/* the src node silent a second after the flip: dst waits for
		 * its END no more */
		if (st == ONVM_MOVE_FLIPPED && now - d->last_heard_ns > 1000ull * 1000 * 1000)
			__atomic_store_n(&mv->src_gone, 1, __ATOMIC_RELEASE);
		if (st < ONVM_MOVE_FLIPPING && now - d->last_heard_ns > MIRROR_SILENT_NS) {
			mgr_move_fail(b, ONVM_MOVE_FAIL_PEER_LOST);
		} else if (st == ONVM_MOVE_FLIPPING && now - d->last_heard_ns > MIRROR_LINGER_NS) {
			/* dst has the state but the src node never said it
			 * flipped, and has been silent 10 s (it fails the move
			 * after 1 s without an answer, so a silence this long is
			 * a dead link or node, not a busy one): nothing of the
			 * move stays.  (Had it flipped with the word
			 * lost, the flows behind a dead link are lost with it.) */
			mirror_force_fail(b, ONVM_MOVE_FAIL_PEER_LOST);
		} else if (st == ONVM_MOVE_FLIPPED && now - d->last_heard_ns > MIRROR_LINGER_NS) {
			/* the src node is gone: what came here is the best
			 * state there is */
			__atomic_store_n(&mv->lossy, 1, __ATOMIC_RELEASE);
			mv->t_done = now;
			__atomic_store_n(&mv->state, ONVM_MOVE_DONE, __ATOMIC_RELEASE);
		}
		st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);
	}
	if ((st == ONVM_MOVE_DONE || st == ONVM_MOVE_FAILED) && d->over_ns == 0) {
		uint64_t mine = MGR_PEER_MIRROR(d->a_gen, b, d->gen);

		d->over_ns = now;
		if (st == ONVM_MOVE_FAILED)
			owned_set(mv, false);
		closed_gen[d->port][d->a_slot] = d->a_gen;
		__atomic_compare_exchange_n(&mgr_peer_mirror[d->port][d->a_slot], &mine, 0, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		/* (no unit looks the slot up from its entry any more once it is
		 * closed, and free_slot may give it to another move) */
		mgr_rcu_wait();
		mgr_move_mirror_close(b);
		d->last_status_ns = 0;
	}
	if (now - d->last_status_ns >= SYNC_EVERY_NS || mirror_news(b))
		mirror_send_status(b, now);
	if (d->over_ns != 0 && now - d->over_ns > OVER_TALK_NS) {
		d->live = false;
		return false;
	}
	return true;
}

/* ---- both ---- */

int
mgr_move_peer_ctl(void)
{
	struct rte_mbuf *ms[32];
	uint64_t now = mgr_now_ns();
	bool busy = false;
	unsigned int n;

	MGR_ASSERT_CTL_LOCKED();
	/* (bounded: what the RX unit queued now is for the next pass) */
	for (int k = 0; k < 16 && (n = rte_ring_sc_dequeue_burst(mgr_peer_ctl_ring, (void **)ms,
								  RTE_DIM(ms), NULL)) > 0;
	     k++) {
		for (unsigned int i = 0; i < n; i++) {
			struct onvm_xm_ctl c;
			enum onvm_xm_reason r =
				onvm_xm_ctl_decode(rte_pktmbuf_mtod(ms[i], const uint8_t *),
						   rte_pktmbuf_data_len(ms[i]), &c);
			uint16_t port = ms[i]->port;

			/* (a slot of ours is < ONVM_MAX_MOVES: the arrays' bound) */
			if (r == ONVM_XM_OK && c.slot >= ONVM_MAX_MOVES)
				r = ONVM_XM_BAD_FIELD;
			if (r != ONVM_XM_OK || port >= ONVM_MAX_PORTS) {
				__atomic_fetch_add(&mgr_peer_stats.refused[r != ONVM_XM_OK
										? r
										: ONVM_XM_BAD_FIELD],
						   1, __ATOMIC_RELAXED);
				continue;
			}
			__atomic_fetch_add(&mgr_peer_stats.rx[c.type], 1, __ATOMIC_RELAXED);
			switch (c.type) {
			case ONVM_XM_SYNC:
				dst_on_sync(port, &c, now);
				break;
			case ONVM_XM_STATE:
				dst_on_state(port, &c, now);
				break;
			case ONVM_XM_LOG:
				dst_on_log(port, &c, now);
				break;
			default:
				src_on_status(port, &c, now);
				break;
			}
		}
		mgr_nf_give_back(ms, n); /* (through the TX unit) */
		busy = true;
	}
	for (uint32_t i = 0; i < ONVM_MAX_MOVES; i++) {
		busy |= src_pass(i, now);
		busy |= mirror_pass(i, now);
	}
	return busy ? 1 : 1000;
}

/* ---- telemetry ---- */

/* /onvm/peer_moves: the cross-node frames and mirrors. */
static int
tel_peer_moves(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char key[40];

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (int t = 1; t <= ONVM_XM_STATUS; t++) {
		if (type_names[t] == NULL)
			continue;
		snprintf(key, sizeof(key), "rx_%s", type_names[t]);
		rte_tel_data_add_dict_uint(d, key, mgr_peer_stats.rx[t]);
		snprintf(key, sizeof(key), "tx_%s", type_names[t]);
		rte_tel_data_add_dict_uint(d, key, mgr_peer_stats.tx[t]);
	}
	for (int r = ONVM_XM_SHORT; r < ONVM_XM_REASON_MAX; r++) {
		snprintf(key, sizeof(key), "refused_%s", onvm_xm_reason_str((enum onvm_xm_reason)r));
		rte_tel_data_add_dict_uint(d, key, mgr_peer_stats.refused[r]);
	}
	rte_tel_data_add_dict_uint(d, "copies_stale", mgr_peer_stats.copies_stale);
	rte_tel_data_add_dict_uint(d, "handoff_no_instance", mgr_peer_stats.handoff_no_inst);
	rte_tel_data_add_dict_uint(d, "handoff_not_moved", mgr_peer_stats.handoff_not_moved);
	rte_tel_data_add_dict_uint(d, "tx_ring_full", mgr_peer_stats.tx_full);
	rte_tel_data_add_dict_uint(d, "no_headroom", mgr_peer_stats.no_headroom);
	rte_tel_data_add_dict_uint(d, "ctl_ring_full", mgr_peer_stats.ctl_ring_full);
	rte_tel_data_add_dict_uint(d, "ctl_unknown_move", ctl_unknown);
	rte_tel_data_add_dict_uint(d, "mirrors_opened", mirrors_opened);
	rte_tel_data_add_dict_uint(d, "mirrors_refused", mirrors_refused);
	return 0;
}

int
mgr_move_peer_telemetry_init(void)
{
	return mgr_tel_register("/onvm/peer_moves", tel_peer_moves,
					  "Flow migration across nodes: frames by type, refused "
					  "by reason, mirrors.") != 0
		       ? -1
		       : 0;
}
