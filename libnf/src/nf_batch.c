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
#include <stdio.h>
#include <sched.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include "onvm_flow_table.h"

#include "nf_private.h"

#define GEN_RETRY_NS (100 * 1000 * 1000ULL)

/* Start a batch: record what the NF now holds (see struct onvm_nf_batch). */
void
nfl_batch_open(struct nf_ctx *nf, uint32_t n)
{
	onvm_batch_record_open(nf->slot, n, nf->has_state ? nf_state_seq(&nf->state) : 0, NULL);
	nf->gen_unsent = 0;
}

/* Put what fits of the batch's unsent packets on the TX ring; true if all of
 * them are out.  Never waits. */
bool
nfl_batch_emit_try(struct nf_ctx *nf)
{
	struct onvm_nf_batch *b = &nf->slot->batch;
	uint32_t n = b->held_n, sent = onvm_batch_emitted(b, nf->tx), k;

	if (sent >= n)
		return true;
	k = rte_ring_sp_enqueue_burst(nf->tx, (void **)&b->held[sent], n - sent, NULL);
	nf->slot->stats.tx += k;
	return sent + k == n;
}

/* Hand every packet of the batch to the manager; waits (counted) while the TX
 * ring is full -- the manager drains it without ever waiting on NFs.  The
 * wait yields the CPU to whoever drains the ring (NFs may share a core, the
 * manager's TX unit may share the CPU) and so is never spent at real-time
 * priority; it keeps the heartbeat going, since waiting is not hanging. */
bool
nfl_batch_emit(struct nf_ctx *nf)
{
	while (!nfl_batch_emit_try(nf)) {
		nf->slot->stats.tx_wait++;
		if (__atomic_load_n(&nf->slot->stop, __ATOMIC_ACQUIRE))
			return false; /* the manager is shutting down; it reclaims held[] */
		nfl_rt_leave(nf);
		nfl_heartbeat(nf);
		sched_yield();
	}
	return true;
}

bool
nfl_batch_out(struct nf_ctx *nf)
{
	return likely(onvm_batch_drained(nf->slot)) || nfl_batch_emit(nf);
}

/* Generated packets the handlers never sent leave as DROP. */
static inline void
finish_generated(struct nf_ctx *nf)
{
	struct onvm_nf_batch *b = &nf->slot->batch;

	for (uint64_t m = nf->gen_unsent; m != 0; m &= m - 1) {
		nf_pkt_meta(b->held[__builtin_ctzll(m)])->action = ONVM_ACTION_DROP;
		nf->slot->stats.gen_unsent++;
	}
	nf->gen_unsent = 0;
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

/*
 * A consistent-cut marker (remote chains): the state now reflects exactly
 * the packets before it, so freeze what changed since its base into the cut
 * log, and pass it on.  It is not a packet: the NF never sees it.
 */
static void
handle_marker(struct nf_ctx *nf, struct rte_mbuf *m, struct onvm_pkt_meta *meta)
{
	struct onvm_nf_slot *s = nf->slot;
	struct onvm_marker mk;
	int rc;

	meta->action = ONVM_ACTION_NEXT;
	s->markers++;
	if (unlikely(rte_pktmbuf_data_len(m) < sizeof(mk))) {
		s->bad_markers++;
		return;
	}
	memcpy(&mk, rte_pktmbuf_mtod(m, const void *), sizeof(mk));
	/* A flow migration's: no cut of the chain's. */
	if (unlikely(mk.flags & ONVM_MARKER_F_MOVE)) {
		nfl_move_marker(nf, &mk);
		return;
	}
	if (mk.cut_id > nf->last_marker)
		nf->last_marker = mk.cut_id;
	if (mk.cut_id > __atomic_load_n(&s->marker_seen, __ATOMIC_RELAXED))
		__atomic_store_n(&s->marker_seen, mk.cut_id, __ATOMIC_RELAXED);
	/* A stateless chain: the marker closes an epoch in the store. */
	if (nf->store != NULL)
		nfl_store_marker(nf, mk.cut_id, meta->ts);
	if (!nf->has_cut)
		return; /* stateless, or not in a remote chain: nothing to freeze */
	rc = onvm_cut_freeze_ex(&nf->cut, &nf->state, mk.cut_id, mk.base_id, meta->ts,
				(mk.flags & ONVM_MARKER_F_FULL) != 0);
	if (rc < 0)
		s->cut_failed++;
	else
		s->cut_chunks += (uint64_t)rc;
}

static inline bool
is_marker(const struct rte_mbuf *m)
{
	return (nf_pkt_meta((struct rte_mbuf *)(uintptr_t)m)->flags & ONVM_PKT_F_MARKER) != 0;
}

/* The batch handler sees the packets between markers; each marker is
 * handled where it stands, so the state it freezes is exactly the packets
 * before it. */
static uint32_t
run_batch_handler(struct nf_ctx *nf, uint32_t n)
{
	struct onvm_nf_batch *b = &nf->slot->batch;
	uint32_t start = 0, markers = 0;

	for (uint32_t i = 0; i <= n; i++) {
		if (i < n && likely(!is_marker(b->held[i])))
			continue;
		if (i > start)
			nf->ops->batch(&b->held[start], i - start, nf);
		if (i < n) {
			handle_marker(nf, b->held[i], nf_pkt_meta(b->held[i]));
			markers++;
		}
		start = i + 1;
	}
	return markers;
}

/* The packet handler on one packet: flow-table entries it creates are
 * stamped with the packet's bucket (onvm_ft_set_route). */
static inline void
run_pkt_handler(struct nf_ctx *nf, struct rte_mbuf *m, struct onvm_pkt_meta *meta)
{
	nf->cur_pkt = m;
	onvm_ft_set_route(1 + ONVM_FLOW_BUCKET(meta->flow_hash));
	nf->ops->pkt(m, meta, nf);
}

void
nfl_batch_run_handlers(struct nf_ctx *nf, uint32_t n)
{
	struct onvm_nf_batch *b = &nf->slot->batch;
	struct onvm_nf_stats *st = &nf->slot->stats;
	struct action_counts c = {0};
	uint64_t bytes = 0;
	uint32_t markers = 0, copies = 0;
	bool nd_seen = false;

	/* Both cache lines the loop reads (pkt_len, the metadata) were last
	 * written by the manager on another core. */
	for (uint32_t i = 0; i < n; i++) {
		rte_prefetch0(b->held[i]);
		rte_prefetch0(nf_pkt_meta(b->held[i]));
	}
	if (nf->ops->batch != NULL) {
		for (uint32_t i = 0; i < n; i++) {
			const struct onvm_pkt_meta *meta = nf_pkt_meta(b->held[i]);

			/* Packets the batch handler generates, and tick-time ND
			 * decisions, take the timestamp of the newest packet
			 * handled. */
			if (meta->ts > nf->last_ts && !(meta->flags & ONVM_PKT_F_MARKER) &&
			    likely(!ONVM_MOVE_TAG_IS(meta->ts))) {
				nf->last_ts = meta->ts;
				nf->last_chain = meta->chain_id;
				nf->last_run = meta->chain_run;
			}
		}
		for (uint32_t i = 0; i < n; i++) {
			nf_pkt_meta(b->held[i])->action = ONVM_ACTION_NEXT;
			bytes += rte_pktmbuf_pkt_len(b->held[i]);
		}
		nf->in_batch = true;
		nf->nd_batch = false;
		markers = run_batch_handler(nf, n);
		nf->in_batch = false;
		for (uint32_t i = 0; i < n; i++)
			if (likely(!is_marker(b->held[i])))
				count_action(&c, nf_pkt_meta(b->held[i]));
		if (nf->nd_batch) /* every packet of the batch, generated ones too */
			for (uint32_t i = 0; i < b->held_n; i++)
				if (!is_marker(b->held[i]))
					nf_mark_nd(b->held[i]);
	} else {
		for (uint32_t i = 0; i < n; i++) {
			struct rte_mbuf *m = b->held[i];
			struct onvm_pkt_meta *meta = nf_pkt_meta(m);

			nd_seen |= (meta->flags & ONVM_PKT_F_ND) != 0; /* from upstream */
			if (unlikely(meta->flags & ONVM_PKT_F_MARKER)) {
				handle_marker(nf, m, meta);
				markers++;
				continue;
			}
			/* (what the handler generates takes cur_pkt's) */
			if (meta->ts > nf->last_ts && likely(!ONVM_MOVE_TAG_IS(meta->ts))) {
				nf->last_ts = meta->ts;
				nf->last_chain = meta->chain_id;
				nf->last_run = meta->chain_run;
			}
			meta->action = ONVM_ACTION_NEXT;
			/* A flow migration's packet (tagged), or one of buckets
			 * moving here: nf_move.c. */
			if (unlikely(ONVM_MOVE_TAG_IS(meta->ts) || nf->moves_live != 0)) {
				bool run = nfl_move_pkt_begin(nf, m, meta);

				if (meta->flags & ONVM_PKT_F_MOVE_COPY) {
					/* not input: neither in rx nor in actions */
					copies++;
					if (run)
						run_pkt_handler(nf, m, meta);
					nfl_move_pkt_end(nf, meta);
					meta->action = ONVM_ACTION_DROP;
					continue;
				}
				if (!run) {
					meta->action = ONVM_ACTION_DROP;
					count_action(&c, meta);
					continue;
				}
			}
			bytes += rte_pktmbuf_pkt_len(m);
			run_pkt_handler(nf, m, meta);
			if (unlikely(nf->move_rec != NULL))
				nfl_move_pkt_end(nf, meta);
			count_action(&c, meta);
			nd_seen |= (meta->flags & ONVM_PKT_F_ND) != 0; /* or by its handler */
		}
		nf->cur_pkt = NULL;
		onvm_ft_set_route(0);
	}
	/* held_n may have grown with generated packets; those never sent are
	 * dropped (the manager frees them, see nf_pkt_alloc()). */
	finish_generated(nf);
	for (uint32_t i = n; i < b->held_n; i++)
		count_action(&c, nf_pkt_meta(b->held[i]));
	/* Packets flagged ND by hand (nf_mark_nd()) wait for the next cut too;
	 * published at commit before any output leaves (remote chains release
	 * nothing it may have shaped early).  After a marker in the batch this
	 * names one cut later than needed for the packets before it: safe.
	 * (The packet handler's loop above saw its received packets.) */
	for (uint32_t i = nf->ops->batch != NULL ? 0 : n; i < b->held_n && !nd_seen; i++)
		nd_seen = (nf_pkt_meta(b->held[i])->flags & ONVM_PKT_F_ND) != 0;
	if (nd_seen)
		nfl_nd_wait_next_cut(nf);
	n -= markers + copies;
	st->rx += n;
	st->rx_bytes += bytes;
	st->act_drop += c.by_action[ONVM_ACTION_DROP];
	st->act_next += c.by_action[ONVM_ACTION_NEXT];
	st->act_tonf += c.by_action[ONVM_ACTION_TONF];
	st->act_out += c.by_action[ONVM_ACTION_OUT] + c.other;
	st->batches++;
}

/* Every packet of the batch leaves as DROP. */
static void
drop_outputs(struct nf_ctx *nf)
{
	struct onvm_nf_batch *b = &nf->slot->batch;

	for (uint32_t i = 0; i < b->held_n; i++)
		if (!is_marker(b->held[i]))
			nf_pkt_meta(b->held[i])->action = ONVM_ACTION_DROP;
}

/* End of batch: make what the batch touched durable before it is emitted. */
void
nfl_batch_commit(struct nf_ctx *nf)
{
	/* A stateless chain: what the batch dirtied goes to the store (a
	 * sync NF waits for it here, before the batch's outputs leave). */
	if (nf->store != NULL)
		nfl_store_batch_end(nf);
	/* An FTC chain: a whole-state update asked for dirties the state. */
	if (unlikely(nf->ftc != NULL))
		nfl_ftc_batch_start_commit(nf);
	/* A batch that touched nothing has nothing to make durable. */
	if (nf->has_state && nf_state_dirty_chunks(&nf->state) > 0) {
		struct onvm_nf_slot *s = nf->slot;
		uint64_t t0 = rte_rdtsc(), dt;

		if (nf->has_cut) /* which chunks changed in which cut period */
			onvm_cut_note_batch(&nf->cut, &nf->state);
		/* An FTC chain: the update to its replicas.  One the node never
		 * took (it is stopping) must not be depended on: the batch's
		 * outputs go as drops, never released without it. */
		if (nf->ftc != NULL && !nfl_ftc_batch_end(nf))
			drop_outputs(nf);
		s->state_seq = nf_state_commit(&nf->state);
		dt = rte_rdtsc() - t0;
		s->state_chunks = nf_state_stats(&nf->state)->chunks_committed;
		s->state_commits = nf_state_stats(&nf->state)->commits;
		s->state_commit_cycles += dt;
		if (dt > s->state_commit_max_cycles)
			s->state_commit_max_cycles = dt;
	}
	if (unlikely(nf->nd_cut_batch > __atomic_load_n(&nf->slot->nd_cut, __ATOMIC_RELAXED)))
		__atomic_store_n(&nf->slot->nd_cut, nf->nd_cut_batch, __ATOMIC_RELEASE);
	nf->nd_cut_batch = 0;
	/* From here a standby re-emits this batch's held outputs. */
	__atomic_store_n(&nf->slot->batch.committed, 1, __ATOMIC_RELEASE);
	/* A flow migration's progress in this batch: durable now. */
	if (unlikely(nf->move_pending))
		nfl_move_committed(nf);
}

/* A tick: a batch of no received packets, in which the NF may generate some. */
void
nfl_batch_run_tick(struct nf_ctx *nf, uint64_t now_ns)
{
	struct onvm_nf_batch *b = &nf->slot->batch;

	if (!nfl_batch_out(nf))
		return;
	nfl_batch_open(nf, 0);
	nf->in_batch = true;
	nf->nd_batch = false;
	nf->ops->tick(nf, now_ns);
	nf->in_batch = false;
	finish_generated(nf);
	if (nf->nd_batch)
		for (uint32_t i = 0; i < b->held_n; i++)
			nf_mark_nd(b->held[i]);
	nfl_batch_commit(nf);
	if (b->held_n > 0)
		nfl_batch_emit(nf);
}

/*
 * Generated packets.  The first call asks the manager for a reserve of mbufs
 * in the NF's alloc ring (one synchronous request, then the manager keeps it
 * filled).  Each allocation dequeues one mbuf straight into held[], recorded
 * as the protocol in struct onvm_nf_batch says, so that from its first
 * instant the mbuf is either in the ring or in the batch: a death anywhere
 * leaks nothing.  Never from the mempool: its per-lcore cache and MP/MC ring
 * are not safe against a process that dies inside them.
 */
static int
gen_enable(struct nf_ctx *nf)
{
	struct onvm_mp_gen_req req = {
		.instance_id = nf->instance_id,
		.generation = nf->slot->generation,
	};
	struct onvm_mp_gen_rep rep = {.result = -ETIMEDOUT};
	uint64_t now = nfl_mono_ns();

	/* Refused (the node is stopping, the slot is going): ask again at most
	 * every GEN_RETRY_NS, not once per packet. */
	if (now < nf->gen_retry_ns)
		return -EAGAIN;
	if (nfl_mp_call(ONVM_MP_NF_GEN, &req, sizeof(req), -1, &rep, sizeof(rep)) < 0 ||
	    rep.result < 0) {
		NF_LOG(ERR, "%s: the manager gave no mbufs for generated packets: %s", nf->name,
		       strerror(-rep.result));
		nf->gen_retry_ns = now + GEN_RETRY_NS;
		return rep.result;
	}
	nf->gen_enabled = true;
	return 0;
}

/*
 * The reserve ran dry: the NF generated faster than the TX unit tops it up,
 * or the manager's lcore is napping (idle.max_sleep_us at most).  Wait for
 * it -- like a full TX ring, never at real-time priority -- up to twice that
 * nap plus a millisecond; then give up (the pool itself may be empty).
 */
static bool
alloc_wait(struct nf_ctx *nf, struct rte_mbuf **slot)
{
	uint64_t wait_ns = (2ULL * nf->shm->mgr_max_nap_us + 1000) * 1000;
	uint64_t until = nfl_mono_ns() + wait_ns;

	nf->slot->stats.gen_waits++;
	nfl_rt_leave(nf);
	do {
		nfl_heartbeat(nf);
		sched_yield();
		if (rte_ring_sc_dequeue(nf->alloc, (void **)slot) == 0)
			return true;
	} while (nfl_mono_ns() < until);
	nf->slot->stats.gen_fail++;
	return false;
}

struct rte_mbuf *
nf_pkt_alloc(struct nf_ctx *nf)
{
	struct onvm_nf_batch *b = &nf->slot->batch;
	uint32_t at = b->held_n;
	struct onvm_pkt_meta *meta;
	struct rte_mbuf *m;

	if (unlikely(!nf->in_batch && nf->cur_pkt == NULL))
		return NULL; /* not in a handler or tick: no batch to join */
	/* A flow migration's copy being reprocessed: its output (and what it
	 * would generate) is the old instance's, sent already. */
	if (unlikely(nf->move_cur != NULL))
		return NULL;
	if (unlikely(!nf->gen_enabled) && gen_enable(nf) < 0)
		return NULL;
	if (at >= ONVM_NF_HELD_MAX)
		return NULL;
	onvm_batch_record_alloc_at(nf->slot, at);
	if (unlikely(rte_ring_sc_dequeue(nf->alloc, (void **)&b->held[at]) != 0) &&
	    !alloc_wait(nf, &b->held[at]))
		return NULL;
	nfl_fault_point(nf, NF_FAULT_MID_ALLOC);
	onvm_batch_record_alloc_done(nf->slot, at, NULL);
	nf->gen_unsent |= UINT64_C(1) << at;
	nf->slot->stats.generated++;
	m = b->held[at];
	meta = nf_pkt_meta(m);
	memset(meta, 0, sizeof(*meta));
	meta->action = ONVM_ACTION_DROP;
	meta->egress_port = ONVM_PORT_UNSET;
	/* It belongs to the packet being handled (or, in a tick, follows the
	 * newest one): remote chains order and deduplicate it by that. */
	meta->ts = nf->cur_pkt != NULL ? nf_pkt_meta(nf->cur_pkt)->ts : nf->last_ts;
	/* ... and to its chain's run: a stateless chain holds it at its exit
	 * with the rest, and drops it with the rest after a recovery. */
	meta->chain_id = nf->cur_pkt != NULL ? nf_pkt_meta(nf->cur_pkt)->chain_id : nf->last_chain;
	meta->chain_run = nf->cur_pkt != NULL ? nf_pkt_meta(nf->cur_pkt)->chain_run : nf->last_run;
	return m;
}

int
nf_pkt_send(struct nf_ctx *nf, struct rte_mbuf *pkt)
{
	const struct onvm_nf_batch *b = &nf->slot->batch;

	for (uint64_t m = nf->gen_unsent; m != 0; m &= m - 1) {
		unsigned int i = __builtin_ctzll(m);

		if (b->held[i] == pkt) {
			nf->gen_unsent &= ~(UINT64_C(1) << i);
			return 0;
		}
	}
	return -EINVAL;
}
