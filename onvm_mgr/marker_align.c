/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * marker_align.c -- a protected chain's consistent-cut markers between its
 * NFs, when a service runs several instances (design: rsync_align.h and
 * docs/design.md, "Several instances of a service").
 *
 * A marker going to chain step k goes to every instance of step k's
 * service, a copy each.  On the TX unit, the marker an instance passed on is
 * aligned with its siblings': that instance's output is held (its TX ring is
 * no longer drained, the rest of its burst kept in a stash) until every
 * instance's marker of the cut came; then one marker goes on to step k + 1
 * (or the exit) and the held outputs move again, after it.  A service with
 * one instance is the same case, passed on at once.  TX unit only, except
 * the fan-out at the chain's entry (RX unit): no locks, the state below is
 * the TX unit's.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "mgr.h"
#include "rsync_align.h"

#define ALIGN_MAX_US 20000 /* an alignment is given up after this long (a dead instance) */

struct align_pos {
	struct rsync_align a;
	struct rte_mbuf *mk; /* the marker to pass on (the first that came) */
};

/* By chain (the table's) and step; the TX unit's. */
static struct align_pos align_at[ONVM_MAX_CHAINS][ONVM_MAX_CHAIN_LEN];

static inline uint16_t
pos_tag(uint16_t chain, uint16_t step)
{
	return (uint16_t)(1 + chain * ONVM_MAX_CHAIN_LEN + step);
}

void
mgr_marker_lost(const struct onvm_pkt_meta *meta)
{
	/* The primary asks for the next marker at once (rsync_unit_state.c). */
	if (meta->in_port < ONVM_MAX_PORTS && mgr.rsync_in_port[meta->in_port] != 0)
		__atomic_fetch_add(&mgr.markers_dropped[mgr.rsync_in_port[meta->in_port] - 1], 1,
				   __ATOMIC_RELEASE);
}

static struct rte_mbuf *
marker_copy(const struct rte_mbuf *m)
{
	struct rte_mbuf *c = rte_pktmbuf_alloc(mgr.pool);
	uint16_t len = rte_pktmbuf_data_len(m);
	void *p;

	if (c == NULL)
		return NULL;
	p = rte_pktmbuf_append(c, len);
	if (p == NULL) {
		rte_pktmbuf_free(c);
		return NULL;
	}
	rte_memcpy(p, rte_pktmbuf_mtod(m, const void *), len);
	*onvm_pkt_meta(c, mgr.dyn_off) = *onvm_pkt_meta((struct rte_mbuf *)(uintptr_t)m, mgr.dyn_off);
	return c;
}

void
mgr_marker_fanout(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t step)
{
	struct onvm_pkt_meta *meta = onvm_pkt_meta(m, mgr.dyn_off);
	const struct onvm_chain *ch = &mgr.shm->chains[meta->chain_id];
	struct rte_mbuf *out[ONVM_MAX_INSTANCES];
	uint16_t to[ONVM_MAX_INSTANCES];
	const struct onvm_service *svc;
	struct mgr_dest d;
	unsigned int n = 0;
	uint32_t a;

	meta->chain_index = step;
	meta->action = ONVM_ACTION_NEXT;
	if (step >= ch->len || ch->services[step] == 0 || ch->services[step] >= ONVM_MAX_SERVICES) {
		mgr_route_step(mgr.shm, meta, &d); /* the exit (or a counted drop) */
		mgr_dp_dispatch(ctx, m, &d);
		return;
	}
	svc = &mgr.shm->services[ch->services[step]];
	a = __atomic_load_n(&svc->active, __ATOMIC_ACQUIRE) & 1;
	for (uint16_t r = 0; r < svc->n[a] && r < ONVM_MAX_INSTANCES; r++)
		if (svc->inst[a][r] != ONVM_INST_NONE)
			to[n++] = svc->inst[a][r];
	/* All or none: an instance without the marker would hold the next
	 * step's alignment until it gives up. */
	out[0] = m;
	for (unsigned int i = 1; i < n; i++) {
		out[i] = marker_copy(m);
		if (out[i] == NULL) {
			rte_pktmbuf_free_bulk(out, i);
			ctx->markers_unaligned++;
			mgr_marker_lost(meta);
			return;
		}
	}
	if (n == 0) {
		ctx->drops[MGR_DROP_NO_INSTANCE]++;
		mgr_marker_lost(meta);
		rte_pktmbuf_free(m);
		return;
	}
	for (unsigned int i = 0; i < n; i++) {
		d.kind = MGR_DEST_NF;
		d.id = to[i];
		mgr_dp_dispatch(ctx, out[i], &d);
	}
}

static inline void
hold(struct mgr_dp_ctx *ctx, uint16_t id, uint16_t tag)
{
	if (ctx->align_held[id] == 0)
		ctx->align_n_held++;
	ctx->align_held[id] = tag;
}

static inline void
unhold(struct mgr_dp_ctx *ctx, uint16_t id)
{
	if (ctx->align_held[id] != 0)
		ctx->align_n_held--;
	ctx->align_held[id] = 0;
}

/* Every output held on the alignment of `tag` moves again. */
static void
release(struct mgr_dp_ctx *ctx, uint16_t tag)
{
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++)
		if (ctx->align_held[id] == tag)
			unhold(ctx, id);
}

static void
close_pos(struct mgr_dp_ctx *ctx, uint16_t chain, uint16_t step, enum rsync_align_verdict v)
{
	struct align_pos *p = &align_at[chain][step];
	struct rte_mbuf *mk = p->mk;

	p->mk = NULL;
	release(ctx, pos_tag(chain, step));
	if (mk == NULL)
		return;
	if (v == RSYNC_ALIGN_PASS) {
		ctx->markers_aligned++;
		mgr_marker_fanout(ctx, mk, step + 1);
		return;
	}
	ctx->markers_unaligned++;
	mgr_marker_lost(onvm_pkt_meta(mk, mgr.dyn_off));
	rte_pktmbuf_free(mk);
}

bool
mgr_marker_from_nf(struct mgr_dp_ctx *ctx, uint16_t id, struct rte_mbuf *m)
{
	struct onvm_pkt_meta *meta = onvm_pkt_meta(m, mgr.dyn_off);
	const struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	struct onvm_marker mk;
	struct align_pos *p;
	uint16_t chain = meta->chain_id, step = meta->chain_index;
	enum rsync_align_verdict v;
	bool superseded;
	int rank;

	/* The metadata is NF-writable: the marker must be this NF's step. */
	if (chain >= ONVM_MAX_CHAINS || !mgr.shm->chains[chain].used ||
	    step >= mgr.shm->chains[chain].len ||
	    mgr.shm->chains[chain].services[step] != s->service_id ||
	    rte_pktmbuf_data_len(m) < sizeof(mk) ||
	    (rank = mgr_service_rank(mgr.shm, s->service_id, id)) < 0) {
		ctx->markers_unaligned++;
		mgr_marker_lost(meta);
		rte_pktmbuf_free(m);
		return false;
	}
	memcpy(&mk, rte_pktmbuf_mtod(m, const void *), sizeof(mk));
	p = &align_at[chain][step];
	v = rsync_align_arrive(&p->a, (unsigned int)rank, mk.cut_id,
			       mgr_service_ranks(mgr.shm, s->service_id), rte_get_tsc_cycles(),
			       &superseded);
	if (superseded)
		close_pos(ctx, chain, step, RSYNC_ALIGN_GIVE_UP);
	switch (v) {
	case RSYNC_ALIGN_HOLD:
		if (p->mk == NULL)
			p->mk = m;
		else
			rte_pktmbuf_free(m);
		hold(ctx, id, pos_tag(chain, step));
		return true;
	case RSYNC_ALIGN_PASS:
		if (p->mk == NULL)
			p->mk = m;
		else
			rte_pktmbuf_free(m);
		close_pos(ctx, chain, step, RSYNC_ALIGN_PASS);
		return false;
	default: /* a cut passed on or given up */
		ctx->markers_stale++;
		rte_pktmbuf_free(m);
		return false;
	}
}

/* The alignment `id`'s output is held on: passed on when the instances
 * still awaited left, given up after ALIGN_MAX_US. */
static void
check_pos(struct mgr_dp_ctx *ctx, uint16_t tag, uint64_t now)
{
	uint16_t chain = (uint16_t)((tag - 1) / ONVM_MAX_CHAIN_LEN);
	uint16_t step = (uint16_t)((tag - 1) % ONVM_MAX_CHAIN_LEN);
	struct align_pos *p = &align_at[chain][step];
	enum rsync_align_verdict v;

	v = rsync_align_check(&p->a, mgr_service_ranks(mgr.shm, mgr.shm->chains[chain].services[step]),
			      now, ALIGN_MAX_US * (rte_get_tsc_hz() / 1000000));
	if (v == RSYNC_ALIGN_PASS || v == RSYNC_ALIGN_GIVE_UP)
		close_pos(ctx, chain, step, v);
	else if (!rsync_align_open(&p->a))
		release(ctx, tag); /* (nothing open: nothing to hold for) */
}

void
mgr_align_poll(struct mgr_dp_ctx *ctx)
{
	uint64_t now = rte_get_tsc_cycles();

	for (uint16_t id = 0; id < ONVM_MAX_NFS && ctx->align_n_held > 0; id++)
		if (ctx->align_held[id] != 0)
			check_pos(ctx, ctx->align_held[id], now);
}

void
mgr_align_forget(struct mgr_dp_ctx *ctx, uint16_t id)
{
	struct mgr_dp_buf *st = &ctx->stash[id];
	uint16_t tag = ctx->align_held[id];

	if (st->n > 0) {
		ctx->drops[MGR_DROP_NF_GONE] += st->n;
		rte_pktmbuf_free_bulk(st->pkts, st->n);
		st->n = 0;
	}
	unhold(ctx, id);
	if (tag != 0)
		check_pos(ctx, tag, rte_get_tsc_cycles());
}

void
mgr_align_reset(void)
{
	for (int c = 0; c < ONVM_MAX_CHAINS; c++)
		for (int k = 0; k < ONVM_MAX_CHAIN_LEN; k++) {
			rte_pktmbuf_free(align_at[c][k].mk);
			memset(&align_at[c][k], 0, sizeof(align_at[c][k]));
		}
}
