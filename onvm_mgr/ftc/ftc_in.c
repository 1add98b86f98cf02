/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_in.c -- a frame from the node before (or, at the forwarder, the
 * egress's feedback), on the TX unit.
 *
 * Its logs: each one of an NF this node replicates is offered to the
 * replica's sequencer (ftc_seq.h) and every update now whole and next in
 * order is written into the replica; a log whose group goes on past this
 * node is queued for the next one whatever the verdict here (a node after
 * may lack it even when this one has it: a retransmission is for them).
 * Its held and need entries are merged (they only grow).  Then the
 * packet, stripped of the header, is routed into the node's chain as an
 * input would be; a propagating frame ends here.
 */
#include <rte_mbuf.h>

#include "dataplane/dataplane.h"
#include "ftc_priv.h"
#include "ftc_xfer.h"

static struct ftc_replica *
replica_of(struct ftc_node *n, uint16_t instance)
{
	for (unsigned int k = 0; k < n->n_rep; k++)
		if (n->rep[k].instance == instance)
			return &n->rep[k];
	return NULL;
}

static inline void
raise_to(uint64_t *v, uint64_t x)
{
	if (x > *v)
		__atomic_store_n(v, x, __ATOMIC_RELAXED);
}

/* Part 0 of a whole-state update: its first record is the reset. */
static bool
is_reset(const struct ftc_log *l)
{
	struct ftc_record rec;
	uint32_t pos = 0;

	return l->part == 0 && ftc_record_next(l, &pos, &rec) && rec.region == ONVM_FTC_RESET_REGION;
}

static void
vector_moved(struct ftc_node *n)
{
	n->held_dirty = true;
	if (n->pending_tsc == 0)
		n->pending_tsc = rte_rdtsc();
}

/* The tail's held: the updates every member of the group applied -- its
 * own and what the members before it said (docs/design/ftc.md). */
static void
tail_held(struct ftc_node *n, const struct ftc_replica *r)
{
	const uint64_t h = ftc_group_applied(r);

	if (r->tail && h > n->held[r->instance]) {
		raise_to(&n->held[r->instance], h);
		vector_moved(n);
	}
}

/* Every update of `r` now whole and next in order, into its store (a
 * whole-state one clears it first).  A store out of room breaks the
 * replica: it applies nothing more, holds the release back (its applied
 * entry is 0) and asks its head for a whole update, which repairs it. */
static void
apply_ready(struct ftc_node *n, struct ftc_replica *r)
{
	uint64_t seq;
	unsigned int parts;

	while (ftc_seq_ready(r->seq, &seq, &parts)) {
		bool whole = false;

		for (unsigned int p = 0; p < parts; p++) {
			struct ftc_log l = {.parts = 1};
			struct ftc_record rec;
			uint32_t pos = 0;

			ftc_seq_part(r->seq, p, &l.data, &l.len);
			if (p == 0 && is_reset(&l)) {
				whole = true;
				ftc_store_clear(&r->store);
				r->resets++;
				r->synced = true;
				r->broken = false; /* (a whole copy: room again) */
				r->too_small = false;
			}
			if (r->broken)
				break; /* (taken, not applied: a whole one repairs it) */
			while (ftc_record_next(&l, &pos, &rec)) {
				if (rec.region == ONVM_FTC_RESET_REGION)
					continue;
				if (ftc_store_write(&r->store, rec.region, rec.offset, rec.bytes,
						    rec.len) < 0) {
					if (!r->broken && !r->too_small)
						MGR_LOG(ERR, "FTC: the replica of NF %u is out of "
							     "room (replica_mb %u): it holds the "
							     "chain's release%s",
							r->instance, n->cfg->replica_mb,
							whole ? " for good: the NF's whole state "
								"does not fit, raise replica_mb"
							      : " until a whole update");
					r->store_full++;
					r->broken = true;
					r->synced = false; /* (RESYNC: a whole update) */
					/* (one that does not fit either: asking again
					 * would only empty the head's log, forever) */
					r->too_small = whole;
				}
				r->applied_bytes += rec.len;
			}
		}
		ftc_seq_done(r->seq);
		if (r->broken)
			continue;
		r->applied_updates = seq;
		if (!r->tail)
			vector_moved(n); /* (its applied entry moved) */
		tail_held(n, r);
	}
}

static void
take_logs(struct ftc_node *n, const struct ftc_view *v)
{
	for (unsigned int k = 0; k < v->n_logs; k++) {
		enum ftc_seq_verdict verdict;
		struct ftc_replica *r;
		struct ftc_log l;

		ftc_log_get(v, k, &l);
		r = replica_of(n, l.instance);
		if (r == NULL) {
			n->c.in_foreign_logs++;
			continue;
		}
		if (l.seq > r->high)
			r->high = l.seq;
		/* After a FETCH this replica answered, the dead incarnation's
		 * logs still on their way are dropped -- not applied, not
		 * passed on: the new NF went on from the newest copy, which
		 * may lack them (docs/design/ftc.md, "Recovery").  The new
		 * incarnation's first update, whole, numbered past every number
		 * this replica had seen when it answered, opens the way again. */
		if (r->fenced) {
			if (!is_reset(&l) || l.seq <= r->fence_high) {
				r->fenced_logs++;
				continue;
			}
			r->fenced = false;
		}
		/* A whole-state update ahead of what is expected: the sequence
		 * jumps to it (a recovered head numbers on from past a void,
		 * and an empty replica takes nothing else). */
		if (is_reset(&l) && l.seq > ftc_seq_next(r->seq)) {
			struct ftc_seq *j = ftc_seq_init(r->seq_mem, n->cfg->window, r->seq_slot, l.seq);

			if (j == NULL) { /* (a number past 2^63: never made) */
				n->c.in_bad_resets++;
				continue;
			}
			r->seq = j;
		}
		if (!r->synced && ftc_seq_next(r->seq) == 1 && !is_reset(&l)) {
			r->unsynced_logs++; /* (it goes on all the same, below) */
			verdict = FTC_SEQ_OLD;
		} else {
			verdict = ftc_seq_offer(r->seq, &l);
			r->verdicts[verdict]++;
			/* parts that disagree (a stray frame): what is held of
			 * that update goes, to be sent again whole */
			if (verdict == FTC_SEQ_MISMATCH)
				ftc_seq_forget(r->seq, l.seq);
		}
		/* a tail seeing an update again: its head has not heard it is
		 * held (a feedback frame lost): say it again */
		if (verdict == FTC_SEQ_OLD && r->tail && r->synced)
			n->held_dirty = true;
		apply_ready(n, r);
		if (!r->tail) {
			if (ftc_oq_push(n, l.instance, l.part, l.parts, l.seq, l.data, l.len))
				n->c.logs_carried++;
			else
				n->c.carry_full++; /* (the head sends it again) */
		}
	}
}

void
ftc_take_void(struct ftc_node *n, uint16_t i, uint64_t s, uint8_t span)
{
	const unsigned int kept = RTE_MIN(n->n_voids[i], (unsigned int)FTC_VOIDS);

	for (unsigned int k = 0; k < kept; k++)
		if (n->voids[i][k].seq == s && n->voids[i][k].span == span)
			return;
	n->voids[i][n->n_voids[i] % FTC_VOIDS] = (struct ftc_void){.seq = s, .span = span};
	n->n_voids[i]++;
}

static void
take_vectors(struct ftc_node *n, const struct ftc_view *v)
{
	for (unsigned int k = 0; k < v->n_commits; k++) {
		struct ftc_commit c;
		struct ftc_replica *r;

		ftc_commit_get(v, k, &c);
		if (c.instance >= n->n_inst) {
			n->c.in_foreign_logs++;
			continue;
		}
		switch (c.kind) {
		case FTC_VOID:
			ftc_take_void(n, c.instance, c.seq, c.span);
			break;
		case FTC_HELD:
			if (c.seq > n->held[c.instance]) {
				raise_to(&n->held[c.instance], c.seq);
				vector_moved(n);
			}
			break;
		case FTC_NEED:
			raise_to(&n->need[c.instance], c.seq);
			break;
		default: /* FTC_APPLIED: from the member before this one */
			r = replica_of(n, c.instance);
			if (r == NULL || r->first)
				break; /* (not ours to read: passed no further) */
			if (c.seq != r->up_applied) {
				r->up_applied = c.seq;
				if (!r->tail)
					vector_moved(n);
				tail_held(n, r);
			}
			break;
		}
	}
}

static void
route(struct mgr_dp_ctx *ctx, struct ftc_node *n, struct rte_mbuf *m)
{
	struct onvm_pkt_meta *meta = onvm_pkt_meta(m, mgr.dyn_off);
	struct onvm_pkt_info pi;
	enum onvm_parse_reason pr = onvm_pkt_parse(m, &pi);
	struct mgr_dest d;

	mgr_route_ingress(mgr.shm, meta, n->in_port, pr, &pi, &d);
	mgr_dp_dispatch(ctx, m, &d);
}

int
ftc_in_poll(struct mgr_dp_ctx *ctx)
{
	struct ftc_node *n = &mgr_ftc_node;
	struct rte_mbuf *pkts[ONVM_BURST];
	unsigned int nb = rte_ring_sc_dequeue_burst(n->in_ring, (void **)pkts, ONVM_BURST, NULL);

	for (unsigned int i = 0; i < nb; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
		struct ftc_view v;
		enum ftc_reason r;

		n->c.in_frames++;
		if (m->nb_segs != 1) {
			n->c.in_bad[FTC_BAD_LENGTH]++;
			rte_pktmbuf_free(m);
			continue;
		}
		/* the state transfer (ftc_recover.c), and nothing else on the
		 * state network */
		if (rte_pktmbuf_data_len(m) > FTC_MAC_LEN + 2 && f[FTC_MAC_LEN] == 0x88 &&
		    f[FTC_MAC_LEN + 1] == 0xb5 && f[FTC_MAC_LEN + 2] == FTC_XFER_VERSION) {
			ftc_xfer_rx(ctx, n, m);
			continue;
		}
		if (n->state_port >= 0 && m->port == n->state_port) {
			n->c.xfer_bad[FTC_XFER_NOT_XFER]++;
			rte_pktmbuf_free(m);
			continue;
		}
		r = ftc_parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), &v);
		if (r == FTC_NOT_FTC) {
			/* A packet with no needs would leave unchecked. */
			n->c.in_plain++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (r != FTC_OK) {
			n->c.in_bad[r]++;
			rte_pktmbuf_free(m);
			continue;
		}
		/* (the vectors first: a void announced comes with the new
		 * incarnation's first update) */
		take_vectors(n, &v);
		take_logs(n, &v);
		if (v.flags & FTC_F_PROPAGATE) {
			n->c.in_propagating++;
			/* a propagating frame is news: the egress passes it back */
			if (n->egress)
				n->held_dirty = true;
			if (n->forwarder)
				n->c.feedback_rx++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (n->forwarder) { /* the feedback link carries no packets */
			n->c.in_plain++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (!n->ready) { /* its NF has no state yet: the packet is lost */
			n->c.recovering_drops++;
			rte_pktmbuf_free(m);
			continue;
		}
		/* the packet as it was: its MACs moved up, the header cut
		 * off the front (no copy of the payload) */
		rte_pktmbuf_adj(m, (uint16_t)ftc_strip_front(rte_pktmbuf_mtod(m, uint8_t *), &v));
		route(ctx, n, m);
	}
	return (int)nb;
}
