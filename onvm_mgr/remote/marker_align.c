/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * marker_align.c -- a protected chain's consistent-cut markers between its
 * NFs, when a service runs several instances (design: rsync_align.h and
 * docs/design/remote.md, "Several instances of a service").
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

/* An alignment is given up after this long: an instance hung holding it.
 * As long as the primary waits for a marker (MARKER_LOST_NS): skew between
 * instances (an elephant flow, a shared CPU) is not a reason. */
#define ALIGN_MAX_US 200000

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
mgr_marker_copy_dropped(const struct rte_mbuf *m, uint16_t id)
{
	const struct onvm_pkt_meta *meta = onvm_pkt_meta((struct rte_mbuf *)(uintptr_t)m,
							 mgr.dyn_off);
	uint64_t cut = mgr_marker_cut(m), *f;
	int rank;

	mgr_marker_lost(m);
	if (meta->chain_id >= ONVM_MAX_CHAINS || meta->chain_index >= ONVM_MAX_CHAIN_LEN)
		return;
	/* The step's alignment must not wait for a copy that never got there:
	 * its record of the fan-out no longer names this rank, so the cut is
	 * given up at its first marker (fanout_intact()).  The unit that
	 * fanned it out is the one that flushes it: one writer. */
	f = &mgr.remote.marker_fanned[meta->chain_id][meta->chain_index][cut % MGR_FANNED];
	rank = mgr_service_rank(mgr.shm, mgr.shm->nfs[id].service_id, id);
	if (rank >= 0 && (__atomic_load_n(f, __ATOMIC_RELAXED) >> 8) == cut)
		__atomic_store_n(f, __atomic_load_n(f, __ATOMIC_RELAXED) & ~(1ull << rank),
				 __ATOMIC_RELEASE);
}

uint64_t
mgr_marker_cut(const struct rte_mbuf *m)
{
	struct onvm_marker mk;

	if (rte_pktmbuf_data_len(m) < sizeof(mk))
		return 0;
	memcpy(&mk, rte_pktmbuf_mtod(m, const void *), sizeof(mk));
	return mk.cut_id;
}

void
mgr_marker_lost(const struct rte_mbuf *m)
{
	const struct onvm_pkt_meta *meta = onvm_pkt_meta((struct rte_mbuf *)(uintptr_t)m,
							 mgr.dyn_off);

	if (meta->chain_id >= ONVM_MAX_CHAINS ||
	    mgr_marker_cut(m) < __atomic_load_n(&mgr.remote.marker_newest[meta->chain_id], __ATOMIC_ACQUIRE))
		return;
	/* The primary asks for the next marker at once (rsync_unit_state.c). */
	if (meta->in_port < ONVM_MAX_PORTS && mgr.remote.rsync_in_port[meta->in_port] != 0)
		__atomic_fetch_add(&mgr.remote.markers_dropped[mgr.remote.rsync_in_port[meta->in_port] - 1], 1,
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
	uint32_t a, mask = 0;
	uint64_t cut = mgr_marker_cut(m);

	/* Into the chain (RX unit): the newest marker an NF may pass on. */
	if (step == 0 && cut > __atomic_load_n(&mgr.remote.marker_newest[meta->chain_id], __ATOMIC_RELAXED))
		__atomic_store_n(&mgr.remote.marker_newest[meta->chain_id], cut, __ATOMIC_RELEASE);
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
		if (svc->inst[a][r] != ONVM_INST_NONE) {
			to[n++] = svc->inst[a][r];
			mask |= 1u << r;
		}
	if (n == 0) {
		ctx->drops[MGR_DROP_NO_INSTANCE]++;
		ctx->markers_refused++;
		mgr_marker_lost(m);
		rte_pktmbuf_free(m);
		return;
	}
	/* All or none: an instance without the marker would make the next
	 * step's alignment give the cut up. */
	out[0] = m;
	for (unsigned int i = 1; i < n; i++) {
		out[i] = marker_copy(m);
		if (out[i] == NULL) {
			rte_pktmbuf_free_bulk(out, i);
			ctx->markers_refused++;
			mgr_marker_lost(m);
			return;
		}
	}
	/* The ranks it went to: what the step's alignment waits for. */
	__atomic_store_n(&mgr.remote.marker_fanned[meta->chain_id][step][cut % MGR_FANNED],
			 (cut << 8) | mask, __ATOMIC_RELEASE);
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
	ctx->align_gen[id] = mgr.shm->nfs[id].generation;
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

/* The alignment closed (passed on, or given up): returns 1 if a marker went
 * on (work for the poll: it waits in a buffer until flushed).  A cut given
 * up for a reason the primary cannot see (`report`: the instances changed,
 * one is not running, none is held any more) is reported lost, so that the
 * next marker goes out at once; on a time-out or a newer cut the primary
 * knows already (its own time-out, or the loss of a copy was reported). */
static int
close_pos(struct mgr_dp_ctx *ctx, uint16_t chain, uint16_t step, enum rsync_align_verdict v,
	  bool report)
{
	struct align_pos *p = &align_at[chain][step];
	struct rte_mbuf *mk = p->mk;

	p->mk = NULL;
	release(ctx, pos_tag(chain, step));
	if (mk == NULL)
		return 0;
	if (v == RSYNC_ALIGN_PASS) {
		ctx->markers_aligned++;
		mgr_marker_fanout(ctx, mk, step + 1);
		return 1;
	}
	ctx->align_given_up++;
	if (report)
		mgr_marker_lost(mk);
	rte_pktmbuf_free(mk);
	return 0;
}

/* A cut can be aligned at a step only over the ranks its marker was sent to,
 * all of them still there and running (an instance that came since never got
 * it; one that left may still have output from before it queued). */
static bool
fanout_intact(uint16_t chain, uint16_t step, uint64_t cut, uint32_t live, uint16_t service)
{
	uint64_t f = __atomic_load_n(&mgr.remote.marker_fanned[chain][step][cut % MGR_FANNED],
				     __ATOMIC_ACQUIRE);

	return (f >> 8) == cut && (uint32_t)(f & 0xff) == live && (live & ~mgr_service_ranks(mgr.shm, service, true)) == 0;
}

/* A marker NF `id` may pass on: its chain's step, in the order of the
 * chain (NEXT, not rolled back by a local failover: a dead NF's uncommitted
 * batch -- its freeze of the cut included -- is dropped), of a cut sent
 * into the chain (the metadata and payload are NF-writable: an invented
 * cut id would make every real marker look stale). */
static bool
marker_ok(const struct onvm_nf_slot *s, const struct onvm_pkt_meta *meta, uint64_t cut)
{
	uint16_t chain = meta->chain_id, step = meta->chain_index;

	return chain < ONVM_MAX_CHAINS && mgr.shm->chains[chain].used &&
	       step < mgr.shm->chains[chain].len &&
	       mgr.shm->chains[chain].services[step] == s->service_id &&
	       meta->action == ONVM_ACTION_NEXT && !(meta->flags & ONVM_PKT_F_FAILOVER_DROP) &&
	       cut != 0 && cut <= __atomic_load_n(&mgr.remote.marker_newest[chain], __ATOMIC_ACQUIRE);
}

static void
refuse(struct rte_mbuf *m, uint64_t *counter)
{
	(*counter)++;
	mgr_marker_lost(m);
	rte_pktmbuf_free(m);
}

bool
mgr_marker_from_nf(struct mgr_dp_ctx *ctx, uint16_t id, struct rte_mbuf *m)
{
	struct onvm_pkt_meta *meta = onvm_pkt_meta(m, mgr.dyn_off);
	const struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	uint64_t cut = mgr_marker_cut(m);
	struct align_pos *p;
	enum rsync_align_verdict v;
	bool given_up, changed;
	uint32_t live;
	int rank;

	MGR_ASSERT_UNIT(MGR_UNIT_TX);
	if (!marker_ok(s, meta, cut) ||
	    (rank = mgr_service_rank(mgr.shm, s->service_id, id)) < 0) {
		refuse(m, &ctx->markers_refused);
		return false;
	}
	/* A stateless chain's services run one instance each: nothing to
	 * align, and its markers (one an epoch, as small as a packet) are not
	 * limited to the MGR_FANNED in flight an alignment can follow. */
	if (mgr.shm->chains[meta->chain_id].stateless) {
		mgr_marker_fanout(ctx, m, meta->chain_index + 1);
		return false;
	}
	p = &align_at[meta->chain_id][meta->chain_index];
	live = mgr_service_ranks(mgr.shm, s->service_id, false);
	/* The first of its cut here: the ranks must be those it was sent to. */
	if (cut > p->a.done && !(rsync_align_open(&p->a) && cut <= p->a.cut) &&
	    !fanout_intact(meta->chain_id, meta->chain_index, cut, live, s->service_id)) {
		/* Reported once: its other markers are stale from now on. */
		if (rsync_align_open(&p->a)) {
			rsync_align_give_up(&p->a);
			close_pos(ctx, meta->chain_id, meta->chain_index, RSYNC_ALIGN_GIVE_UP, false);
		}
		rsync_align_skip(&p->a, cut);
		refuse(m, &ctx->align_given_up);
		return false;
	}
	changed = rsync_align_open(&p->a) && p->a.want != live;
	v = rsync_align_arrive(&p->a, (unsigned int)rank, cut, live, rte_get_tsc_cycles(),
			       &given_up);
	if (given_up)
		close_pos(ctx, meta->chain_id, meta->chain_index, RSYNC_ALIGN_GIVE_UP, changed);
	switch (v) {
	case RSYNC_ALIGN_HOLD:
		if (p->mk == NULL)
			p->mk = m;
		else
			rte_pktmbuf_free(m);
		hold(ctx, id, pos_tag(meta->chain_id, meta->chain_index));
		return true;
	case RSYNC_ALIGN_PASS:
		if (p->mk == NULL)
			p->mk = m;
		else
			rte_pktmbuf_free(m);
		close_pos(ctx, meta->chain_id, meta->chain_index, RSYNC_ALIGN_PASS, false);
		return false;
	default: /* a cut passed on or given up */
		ctx->markers_stale++;
		rte_pktmbuf_free(m);
		return false;
	}
}

/* The alignment of `tag`: given up when the instances changed or one stopped
 * running, when no output is held for it any more, or after ALIGN_MAX_US. */
static int
check_pos(struct mgr_dp_ctx *ctx, uint16_t tag, uint64_t now)
{
	uint16_t chain = (uint16_t)((tag - 1) / ONVM_MAX_CHAIN_LEN);
	uint16_t step = (uint16_t)((tag - 1) % ONVM_MAX_CHAIN_LEN);
	uint16_t service = mgr.shm->chains[chain].services[step];
	struct align_pos *p = &align_at[chain][step];
	uint32_t live = mgr_service_ranks(mgr.shm, service, false);
	enum rsync_align_verdict v;
	bool held = false;

	for (uint16_t id = 0; id < ONVM_MAX_NFS && !held; id++)
		held = ctx->align_held[id] == tag;
	if (!held || (rsync_align_open(&p->a) &&
		      (p->a.want != live || (live & ~mgr_service_ranks(mgr.shm, service, true)) != 0))) {
		rsync_align_give_up(&p->a);
		return close_pos(ctx, chain, step, RSYNC_ALIGN_GIVE_UP, true);
	}
	v = rsync_align_check(&p->a, live, now, ALIGN_MAX_US * (rte_get_tsc_hz() / 1000000));
	if (v == RSYNC_ALIGN_PASS || v == RSYNC_ALIGN_GIVE_UP)
		return close_pos(ctx, chain, step, v, false);
	if (!rsync_align_open(&p->a))
		release(ctx, tag); /* (nothing open: nothing to hold for) */
	return 0;
}

int
mgr_align_poll(struct mgr_dp_ctx *ctx)
{
	uint64_t now = rte_get_tsc_cycles();
	int work = 0;

	MGR_ASSERT_UNIT(MGR_UNIT_TX);
	for (uint16_t id = 0; id < ONVM_MAX_NFS && ctx->align_n_held > 0; id++)
		if (ctx->align_held[id] != 0)
			work += check_pos(ctx, ctx->align_held[id], now);
	return work;
}

int
mgr_align_forget(struct mgr_dp_ctx *ctx, uint16_t id)
{
	uint16_t tag = ctx->align_held[id];

	MGR_ASSERT_UNIT(MGR_UNIT_TX);
	/* Its stash stays: routed on like any output of the NF it was. */
	ctx->align_gen[id] = mgr.shm->nfs[id].generation;
	unhold(ctx, id);
	return tag != 0 ? check_pos(ctx, tag, rte_get_tsc_cycles()) : 0;
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
