/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_batch.c -- a batch's life: record what the NF holds, run the handlers,
 * commit the state the batch touched, emit its packets; and NF-generated
 * packets, which join the current batch.
 *
 * The batch record in slot->batch (see onvm_common.h) is what lets the
 * manager, or a promoted standby, know exactly which mbufs an NF killed at
 * any instruction still owned and which it had already emitted.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include "nf_private.h"

/* Start a batch: record what the NF now holds (see struct onvm_nf_batch). */
void
nfl_batch_open(struct nf_ctx *nf, uint32_t n)
{
	struct onvm_nf_batch *b = &nf->slot->batch;

	b->held_n = n;
	b->tx_base = nf->tx->prod.tail;
	b->committed = 0;
	b->seq_before = nf->has_state ? nf_state_seq(&nf->state) : 0;
	__atomic_store_n(&b->rx_seen, nf->rx->cons.tail, __ATOMIC_RELEASE);
}

/* Hand every packet of the batch to the manager; waits (counted) while the TX
 * ring is full -- the manager drains it without ever waiting on NFs. */
void
nfl_batch_emit(struct nf_ctx *nf)
{
	struct onvm_nf_batch *b = &nf->slot->batch;
	uint32_t n = b->held_n, sent = nf->tx->prod.tail - b->tx_base;

	while (sent < n) {
		sent += rte_ring_sp_enqueue_burst(nf->tx, (void **)&b->held[sent], n - sent,
						  NULL);
		if (sent < n) {
			nf->slot->stats.tx_wait++;
			if (nf->slot->stop)
				return; /* manager is shutting down; it reclaims held[] */
			/* Downstream is full: give the CPU to whoever drains it
			 * (NFs may share a core).  Waiting is not hanging. */
			nf->slot->heartbeat++;
			sched_yield();
		}
	}
	nf->slot->stats.tx += n;
}

/* Action counters, kept locally for a batch and added to the shared slot once. */
struct action_counts {
	uint64_t by_action[4];
	uint64_t other;
};

static inline void
count_action(struct action_counts *c, const struct onvm_pkt_meta *meta)
{
	if (likely(meta->action < RTE_DIM(c->by_action)))
		c->by_action[meta->action]++;
	else
		c->other++;
}

void
nfl_batch_run_handlers(struct nf_ctx *nf, uint32_t n)
{
	struct onvm_nf_batch *b = &nf->slot->batch;
	struct onvm_nf_stats *st = &nf->slot->stats;
	struct action_counts c = {0};
	uint64_t bytes = 0;

	/* The metadata was last written by the manager on another core. */
	for (uint32_t i = 0; i < n; i++)
		rte_prefetch0(nf_pkt_meta(b->held[i]));
	if (nf->ops->batch != NULL) {
		for (uint32_t i = 0; i < n; i++) {
			nf_pkt_meta(b->held[i])->action = ONVM_ACTION_NEXT;
			bytes += rte_pktmbuf_pkt_len(b->held[i]);
		}
		nf->in_batch = true;
		nf->nd_batch = false;
		nf->ops->batch(b->held, n, nf);
		nf->in_batch = false;
		for (uint32_t i = 0; i < n; i++) {
			if (nf->nd_batch)
				nf_mark_nd(b->held[i]);
			count_action(&c, nf_pkt_meta(b->held[i]));
		}
	} else {
		for (uint32_t i = 0; i < n; i++) {
			struct rte_mbuf *m = b->held[i];
			struct onvm_pkt_meta *meta = nf_pkt_meta(m);

			meta->action = ONVM_ACTION_NEXT;
			bytes += rte_pktmbuf_pkt_len(m);
			nf->cur_pkt = m;
			nf->ops->pkt(m, meta, nf);
			count_action(&c, meta);
		}
		nf->cur_pkt = NULL;
	}
	/* held_n may have grown with generated packets. */
	for (uint32_t i = n; i < b->held_n; i++)
		count_action(&c, nf_pkt_meta(b->held[i]));
	st->rx += n;
	st->rx_bytes += bytes;
	st->act_drop += c.by_action[ONVM_ACTION_DROP];
	st->act_next += c.by_action[ONVM_ACTION_NEXT];
	st->act_tonf += c.by_action[ONVM_ACTION_TONF];
	st->act_out += c.by_action[ONVM_ACTION_OUT] + c.other;
	st->batches++;
}

/* End of batch: make what the batch touched durable before it is emitted. */
void
nfl_batch_commit(struct nf_ctx *nf)
{
	/* A batch that touched nothing has nothing to make durable. */
	if (nf->has_state && nf_state_dirty_chunks(&nf->state) > 0) {
		struct onvm_nf_slot *s = nf->slot;
		uint64_t t0 = rte_rdtsc(), dt;

		s->state_seq = nf_state_commit(&nf->state);
		dt = rte_rdtsc() - t0;
		s->state_chunks = nf_state_stats(&nf->state)->chunks_committed;
		s->state_commits = nf_state_stats(&nf->state)->commits;
		s->state_commit_cycles += dt;
		if (dt > s->state_commit_max_cycles)
			s->state_commit_max_cycles = dt;
	}
	/* From here a standby re-emits this batch's held outputs. */
	__atomic_store_n(&nf->slot->batch.committed, 1, __ATOMIC_RELEASE);
}

struct rte_mbuf *
nf_pkt_alloc(struct nf_ctx *nf)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(nf->pool);

	if (m != NULL) {
		struct onvm_pkt_meta *meta = nf_pkt_meta(m);

		memset(meta, 0, sizeof(*meta));
		meta->action = ONVM_ACTION_DROP;
		meta->egress_port = ONVM_PORT_UNSET;
	}
	return m;
}

int
nf_pkt_send(struct nf_ctx *nf, struct rte_mbuf *pkt)
{
	struct onvm_nf_batch *b = &nf->slot->batch;

	if (b->held_n >= ONVM_NF_HELD_MAX)
		return -ENOBUFS;
	b->held[b->held_n] = pkt;
	__atomic_store_n(&b->held_n, b->held_n + 1, __ATOMIC_RELEASE);
	nf->slot->stats.generated++;
	return 0;
}
