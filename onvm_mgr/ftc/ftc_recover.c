/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_recover.c -- a node that takes a failed one's place, and the state
 * transfer that serves it (docs/design/ftc.md, "Recovery"), on the TX unit.
 *
 * The new node's NF is parked from its registration on.  The node asks the
 * NF's replicas (the live positions of "recover_from") for their copies
 * with FETCH on the state network; each answers with its pages in PIECEs,
 * all of the one update it had applied, and END.  The copy of the newest
 * update is kept: every packet released had its updates held by f + 1
 * members, the tail last, and a replica nearer the head has applied at
 * least what the tail had (the logs come to them in order).  Once every
 * listed replica answered and the newest copy is whole, it is written into
 * the parked NF's block, and the node numbers its NF's updates on from
 * seq + 2^32: the numbers between are void -- a packet that needs one
 * depends on an update that died with the old NF, and the egress drops it
 * (every frame from here carries the void entry).  The NF's first update
 * is its whole state (made here of what was fetched), which clears and
 * rewrites every replica, those behind included.  Then the NF runs.
 *
 * The new node's replicas of the NFs before it start empty and take only a
 * whole-state update, which RESYNC (repeated until one came) asks their
 * heads for; logs that pass meanwhile go on to the next node.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_random.h>

#include "dataplane/dataplane.h"
#include "ftc_priv.h"
#include "ftc_xfer.h"
#include "nf/nf.h"
#include "onvm_state.h"
#include "onvm_wire.h"

#define RETRY_MS 50	 /* a FETCH or RESYNC unanswered this long: again */
#define RESYNC_MIN_MS 20 /* a head makes a whole update at most this often */

_Static_assert(ONVM_FTC_RESET_REGION == 0xffff, "libnf's reset record is the replicas'");

bool
mgr_ftc_parks(uint16_t service)
{
	const struct ftc_node *n = &mgr_ftc_node;

	/* (until the state is in: an NF relaunched later runs at once) */
	return n->on && n->head && n->service == service && n->cfg->recover &&
	       __atomic_load_n(&n->recovering, __ATOMIC_ACQUIRE);
}

void
mgr_ftc_nf_died(uint16_t service)
{
	const struct ftc_node *n = &mgr_ftc_node;

	if (!n->on || !n->head || service != n->service)
		return;
	MGR_LOG(ERR, "FTC chain %u: the NF of node %u died: the node fails with it", n->cfg->id,
		n->cfg->position);
	fflush(rte_log_get_stream());
	kill(getpid(), SIGKILL);
}

int
ftc_recover_init(struct ftc_node *n)
{
	const struct mgr_ftc_cfg *fc = n->cfg;

	n->state_port = fc->state_port;
	n->ready = true;
	n->cand = -1;
	if (!fc->recover)
		return 0;
	for (unsigned int k = 0; k < n->n_rep; k++)
		n->rep[k].synced = false;
	if (!n->head)
		return 0;
	n->recovering = true;
	n->ready = false;
	n->pieces_max = (uint32_t)(((uint64_t)fc->replica_mb << 20) / FTC_XFER_PIECE_MAX);
	n->piece_seen = rte_zmalloc("ftc_pieces", n->pieces_max / 8 + 1, 64);
	/* the whole-state update: every page, each a record */
	n->full_cap = ((uint64_t)fc->replica_mb << 20) / FTC_PAGE * (FTC_PAGE + FTC_RECORD_HEAD_LEN) +
		      64;
	n->full_buf = rte_zmalloc("ftc_full", n->full_cap, 64);
	if (n->piece_seen == NULL || n->full_buf == NULL ||
	    ftc_store_init(&n->fetched, (uint64_t)fc->replica_mb << 20) < 0) {
		MGR_LOG(ERR, "FTC chain %u: no memory to fetch the NF's state (%u MB)", fc->id,
			fc->replica_mb);
		return -ENOMEM;
	}
	n->start_ns = mgr_now_ns();
	return 0;
}

/* ---- frames ---- */

static bool
send_xfer(struct mgr_dp_ctx *ctx, struct ftc_node *n, const struct ftc_xfer *x)
{
	struct rte_mbuf *m;
	uint8_t *f = ftc_frame_new(n, (uint16_t)n->state_port, &m);
	int len;

	if (f == NULL)
		return false;
	len = ftc_xfer_build(f, rte_pktmbuf_tailroom(m), x);
	if (len < 0) {
		rte_pktmbuf_free(m);
		return false;
	}
	ftc_frame_send(ctx, m, (uint32_t)len, (uint16_t)n->state_port);
	return true;
}

static bool
zero(const uint8_t *b, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (b[i] != 0)
			return false;
	return true;
}

/* The highest number of `r`'s instance this node has seen: in its logs,
 * in a need or held entry, and the end of a void. */
static uint64_t
high_of(const struct ftc_node *n, const struct ftc_replica *r)
{
	const uint16_t i = r->instance;
	const struct ftc_void *v = ftc_last_void(n, i);
	uint64_t h = RTE_MAX(r->high, RTE_MAX(n->need[i], n->held[i]));

	if (v != NULL)
		h = RTE_MAX(h, v->seq + v->span * FTC_VOID_SPAN);
	return h;
}

/* A replica's copy, as it is now (one update: the TX unit applies nothing
 * meanwhile), in pieces; pieces all zero are left out (the new NF's block
 * starts all zero).  From now on the dead incarnation's logs are dropped
 * here (ftc_in.c): the new NF may go on from this copy. */
static void
answer_fetch(struct mgr_dp_ctx *ctx, struct ftc_node *n, struct ftc_replica *r,
	     const struct ftc_xfer *q)
{
	if (!r->fenced) {
		r->fenced = true;
		r->fence_high = high_of(n, r);
	}
	const struct ftc_store *st = &r->store;
	struct ftc_xfer x = {.op = FTC_XFER_PIECE, .chain = n->cfg->id, .from = n->cfg->position,
			     .instance = (uint8_t)r->instance, .nonce = q->nonce,
			     .seq = r->applied_updates};
	uint32_t k = 0;

	for (uint32_t i = 0; i < st->slots; i++) {
		const uint8_t *page;

		if (st->keys[i] == 0)
			continue;
		page = st->arena + ((size_t)st->at[i] << FTC_PAGE_SHIFT);
		for (uint32_t o = 0; o < FTC_PAGE; o += FTC_XFER_PIECE_MAX) {
			if (zero(page + o, FTC_XFER_PIECE_MAX))
				continue;
			x.region = (uint16_t)((st->keys[i] - 1) >> 32);
			x.offset = (uint32_t)(((st->keys[i] - 1) & UINT32_MAX) << FTC_PAGE_SHIFT) + o;
			x.len = FTC_XFER_PIECE_MAX;
			x.bytes = page + o;
			x.index = k;
			if (send_xfer(ctx, n, &x))
				n->c.pieces_out++;
			k++; /* (one lost: the END's count says so, the FETCH comes again) */
		}
	}
	x = (struct ftc_xfer){.op = FTC_XFER_END, .chain = n->cfg->id, .from = n->cfg->position,
			      .instance = (uint8_t)r->instance, .nonce = q->nonce,
			      .seq = r->applied_updates, .index = k, .high = high_of(n, r)};
	send_xfer(ctx, n, &x);
	n->c.fetch_answers++;
}

/* A piece or END of the copy being collected. */
static void
collect(struct ftc_node *n, const struct ftc_xfer *x)
{
	int k;

	for (k = 0; k < n->cfg->n_recover_from; k++)
		if (n->cfg->recover_from[k] == x->from)
			break;
	if (k == n->cfg->n_recover_from || x->instance != n->own)
		return; /* not a source this node listed */
	if (x->seq >= (UINT64_C(1) << 62)) {
		n->c.xfer_forged++; /* (never made: it must not become the copy) */
		return;
	}
	/* heard: its END, with the highest number it saw, came */
	if (x->op == FTC_XFER_END) {
		n->heard[k] = true;
		if (x->high > n->fetch_high)
			n->fetch_high = x->high;
	}
	if (n->cand < 0 || x->seq > n->cand_seq) {
		/* a newer copy: collected from scratch */
		n->cand = x->from;
		n->cand_seq = x->seq;
		n->cand_pieces = 0;
		n->cand_total = 0;
		ftc_store_clear(&n->fetched);
		memset(n->piece_seen, 0, n->pieces_max / 8 + 1);
	}
	if (x->from != n->cand)
		return;
	if (x->op == FTC_XFER_END) {
		n->cand_total = x->index + 1; /* (+ 1: an END of 0 pieces is known too) */
		return;
	}
	n->c.pieces_in++;
	n->last_in_tsc = rte_rdtsc();
	if (x->index >= n->pieces_max || (n->piece_seen[x->index / 8] & (1u << (x->index % 8))))
		return;
	if (ftc_store_write(&n->fetched, x->region, x->offset, x->bytes, x->len) < 0)
		return; /* (larger than replica_mb: never whole) */
	n->piece_seen[x->index / 8] |= (uint8_t)(1u << (x->index % 8));
	n->cand_pieces++;
}

void
ftc_xfer_rx(struct mgr_dp_ctx *ctx, struct ftc_node *n, struct rte_mbuf *m)
{
	struct ftc_xfer x;
	enum ftc_xfer_reason r;

	r = ftc_xfer_parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), &x);
	if (r != FTC_XFER_OK) {
		n->c.xfer_bad[r]++;
		goto out;
	}
	if (x.chain != n->cfg->id || x.from == n->cfg->position) {
		n->c.xfer_other++; /* (the state network is shared; our own broadcast) */
		goto out;
	}
	switch (x.op) {
	case FTC_XFER_FETCH:
		for (unsigned int k = 0; k < n->n_rep; k++)
			if (n->rep[k].instance == x.instance && n->rep[k].synced &&
			    !n->rep[k].broken)
				answer_fetch(ctx, n, &n->rep[k], &x);
		break;
	case FTC_XFER_PIECE:
	case FTC_XFER_END:
		if (n->recovering && x.nonce == n->nonce)
			collect(n, &x);
		else
			n->c.xfer_stale++;
		break;
	case FTC_XFER_RESYNC:
		if (n->head && x.instance == n->own && !n->recovering) {
			const uint64_t now = rte_rdtsc();
			int id = mgr_service_pick(mgr.shm, n->service, 0);

			n->c.resync_in++;
			if (id < 0 || now - n->resync_answered_tsc < n->hz / 1000 * RESYNC_MIN_MS)
				break;
			n->resync_answered_tsc = now;
			/* Whatever the log keeps is superseded by the whole update
			 * (every replica jumps to it): it goes, so that the NF,
			 * maybe waiting for room while the replaced member was
			 * down, can make it. */
			if (ftc_hlog_count(n->hlog) > 0) {
				n->c.forgot += ftc_hlog_count(n->hlog);
				ftc_hlog_commit(n->hlog, ftc_hlog_next(n->hlog) - 1);
			}
			__atomic_fetch_add(&mgr.shm->nfs[id].ftc_full_req, 1, __ATOMIC_RELEASE);
			mgr_nf_wake(&mgr.shm->nfs[id]);
			n->c.full_asked++;
		}
		break;
	default:
		break;
	}
out:
	rte_pktmbuf_free(m);
}

/* ---- the recovering node ---- */

static bool
all_heard(const struct ftc_node *n)
{
	for (int k = 0; k < n->cfg->n_recover_from; k++)
		if (!n->heard[k])
			return false;
	return true;
}

/* The copy into the parked NF's block: every region cleared, then the
 * pages (cut at the region's end), canonical and replica alike.  Also
 * the whole-state update of it, into `full_buf`; returns its length. */
static int64_t
load(struct ftc_node *n, struct onvm_nf_slot *s)
{
	const struct ftc_store *st = &n->fetched;
	struct nf_state_layout layout;
	uint8_t *base = mgr.state_seg.base + s->state_off, *w = n->full_buf;
	char err[128];

	if (mgr_nf_state_layout(s, &layout, err, sizeof(err)) < 0) {
		MGR_LOG(ERR, "FTC: the recovering NF's layout: %s", err);
		return -1;
	}
	for (uint32_t r = 0; r < layout.n_regions; r++) {
		memset(base + layout.regions[r].canon_off, 0, layout.regions[r].block_size);
		memset(base + layout.regions[r].replica_off, 0, layout.regions[r].block_size);
	}
	/* the reset record first: a replica clears its copy */
	onvm_put_be16(w, ONVM_FTC_RESET_REGION);
	onvm_put_be16(w + 2, 1);
	onvm_put_be32(w + 4, 0);
	w[FTC_RECORD_HEAD_LEN] = 1;
	w += FTC_RECORD_HEAD_LEN + 1;
	for (uint32_t i = 0; i < st->slots; i++) {
		const uint64_t key = st->keys[i];
		const uint8_t *page;
		uint32_t region;
		uint64_t off, len;

		if (key == 0)
			continue;
		region = (uint32_t)((key - 1) >> 32);
		off = ((key - 1) & UINT32_MAX) << FTC_PAGE_SHIFT;
		if (region >= layout.n_regions || off >= layout.regions[region].size) {
			MGR_LOG(WARNING, "FTC: a fetched page past the NF's regions (region %u at "
					 "%" PRIu64 "): left out",
				region, off);
			continue;
		}
		len = RTE_MIN((uint64_t)FTC_PAGE, layout.regions[region].size - off);
		page = st->arena + ((size_t)st->at[i] << FTC_PAGE_SHIFT);
		memcpy(base + layout.regions[region].canon_off + off, page, len);
		memcpy(base + layout.regions[region].replica_off + off, page, len);
		if (zero(page, (uint32_t)len))
			continue;
		onvm_put_be16(w, (uint16_t)region);
		onvm_put_be16(w + 2, (uint16_t)len);
		onvm_put_be32(w + 4, (uint32_t)off);
		memcpy(w + FTC_RECORD_HEAD_LEN, page, len);
		w += FTC_RECORD_HEAD_LEN + len;
	}
	return w - n->full_buf;
}

/* Whole, and every listed replica heard: the state in, the NF let go. */
static void
finish(struct ftc_node *n)
{
	int id = mgr_service_pick(mgr.shm, n->service, 0);
	struct onvm_nf_slot *s;
	uint64_t base, seq;
	uint8_t span;
	int64_t len;

	if (id < 0)
		return;
	s = &mgr.shm->nfs[id];
	/* the NF is set up and waits (its own initial writes are done) */
	if (__atomic_load_n(&s->state_mz[0], __ATOMIC_ACQUIRE) == '\0' ||
	    !__atomic_load_n(&s->remote_park_ack, __ATOMIC_ACQUIRE))
		return;
	len = load(n, s);
	if (len < 0)
		return;
	/* on from past every number any replica saw of the dead NF (an
	 * earlier recovery's that no replica applied included) */
	span = (uint8_t)RTE_MIN(
		(n->fetch_high > n->cand_seq ? (n->fetch_high - n->cand_seq) / FTC_VOID_SPAN : 0) + 1,
		(uint64_t)UINT8_MAX);
	base = n->cand_seq + span * FTC_VOID_SPAN;
	if (base >= (UINT64_C(1) << 62)) { /* (numbers never wrap: a forged answer) */
		MGR_LOG(ERR, "FTC chain %u: a copy at update %" PRIu64 ": no number left after it",
			n->cfg->id, n->cand_seq);
		n->finish_failed = true;
		return;
	}
	/* the head's log from the whole update on: numbers base + 1, ... */
	n->hlog = ftc_hlog_init(n->hlog, n->cfg->log_updates, n->cfg->log_kb * 1024, base + 1);
	seq = ftc_hlog_append_encoded(n->hlog, n->full_buf, (uint32_t)len);
	if (seq != base + 1) {
		MGR_LOG(ERR, "FTC chain %u: the NF's state (%" PRId64 " bytes) does not fit the "
			     "head's log (log_kb %u)",
			n->cfg->id, len, n->cfg->log_kb);
		n->finish_failed = true; /* (the NF stays parked: the node cannot recover) */
		return;
	}
	/* (queued now, or by the retransmission if the queue is full) */
	if (!ftc_queue_update(n, seq))
		n->sent_tsc[seq % n->cfg->log_updates] = 0;
	n->own_sent = seq;
	ftc_take_void(n, n->own, n->cand_seq, span);
	n->loaded_seq = n->cand_seq;
	__atomic_store_n(&s->ftc_seq, seq, __ATOMIC_RELEASE);
	__atomic_store_n(&s->remote_parked, 0, __ATOMIC_SEQ_CST);
	mgr_nf_wake(s);
	__atomic_store_n(&n->recovering, false, __ATOMIC_RELEASE);
	n->ready = true;
	n->ready_ns = mgr_now_ns();
	MGR_LOG(INFO, "FTC chain %u: NF %u's state from node %d at update %" PRIu64
		      " (%u pages), on from %" PRIu64 "; fetched in %" PRIu64 " us",
		n->cfg->id, n->own, n->cand, n->cand_seq, n->fetched.used, seq,
		(n->fetched_ns - n->start_ns) / 1000);
}

int
ftc_recover_poll(struct mgr_dp_ctx *ctx, struct ftc_node *n, uint64_t now)
{
	const uint64_t retry = n->hz / 1000 * RETRY_MS;
	int work = 0;

	/* replicas still empty: their heads asked for a whole update */
	for (unsigned int k = 0; k < n->n_rep; k++) {
		struct ftc_replica *r = &n->rep[k];
		struct ftc_xfer x = {.op = FTC_XFER_RESYNC, .chain = n->cfg->id,
				     .from = n->cfg->position, .instance = (uint8_t)r->instance};

		if (r->synced || r->too_small || n->state_port < 0 || now - r->resync_tsc < retry)
			continue;
		r->resync_tsc = now;
		if (send_xfer(ctx, n, &x))
			n->c.resync_out++;
		work++;
	}
	/* a copy that cannot become the NF's (logged): asking again brings
	 * the same one, and fences the replicas again */
	if (!n->recovering || n->finish_failed)
		return work;
	if (n->cand >= 0 && n->cand_total > 0 && n->cand_pieces + 1 == n->cand_total &&
	    all_heard(n)) {
		if (n->fetched_ns == 0)
			n->fetched_ns = mgr_now_ns();
		finish(n);
		return work + 1;
	}
	if (now - RTE_MAX(n->fetch_tsc, n->last_in_tsc) >= retry) {
		struct ftc_xfer x = {.op = FTC_XFER_FETCH, .chain = n->cfg->id,
				     .from = n->cfg->position, .instance = (uint8_t)n->own};

		/* Asked again (a new nonce): what came is kept -- an answering
		 * replica is fenced, its copy does not change, so pieces lost in
		 * one round are filled in by the next. */
		n->nonce = (uint32_t)rte_rand();
		x.nonce = n->nonce;
		n->fetch_tsc = now;
		if (send_xfer(ctx, n, &x))
			n->c.fetch_tries++;
		work++;
	}
	return work;
}
