/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * rsync_unit_state.c -- the state of a protected chain's NFs, on its
 * primary and standby nodes (design: docs/design/remote.md, "Consistent cuts" and
 * "State at the same address on every node").
 *
 * Placement.  Every instance of a protected chain's services has a rank
 * (struct onvm_service: the entry of the service's list flows hash to, the
 * same on every node), and every rank of every position a state window:
 * window w (the ranks of position 0 first, then position 1's, ...) is at
 * state_base_mb + w * state_window_mb of the state pool on both nodes (the
 * pool is mapped at the same address everywhere), so pointers inside the
 * state -- nDPI's flows, the region heap's blocks -- mean the same on the
 * standby, and a rank's state goes to the same rank there.  The windows
 * are reserved at start-up: first-fit never gives them to anything else.
 * On the primary the NF's cut area (onvm_cut.h) follows its block in the
 * window.  State regions on the wire are numbered by window
 * (w * NF_STATE_MAX_REGIONS + the NF's region).
 *
 * Primary.  The TX unit asks for a marker (every checkpoint_ms, or at once
 * when an ND decision waits for a cut); the RX unit injects it into the
 * chain after its current burst of admitted input, carrying the next cut id
 * and the chain's last cut as its base; each NF's libnf freezes what it
 * changed since the base into its cut log and passes the marker on (to
 * every instance of the next service, aligned: marker_align.c); at the
 * exit -- after every output of the packets before it, FIFO -- the TX unit
 * reads every NF's records of that cut into one transaction
 * (rsync_primary_cut_*).  An NF that could not freeze drops the cut; a
 * stale base (its stage was aborted) drops the marker; either way the next
 * request names the chain's last cut again.  The TX unit also takes every NF's
 * nd_cut as its outputs leave (rule 2).
 *
 * Standby.  The chain's NFs start parked (slot->remote_parked: no packets,
 * no ticks); committed state pieces are written into their blocks through
 * the state library (touch, copy, commit: canonical and replica agree, as
 * after any batch), and the takeover unparks them (rsync_unit_apply.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "onvm_cut.h"
#include "onvm_state.h"
#include "rsync_unit_priv.h"

#define CUT_LOG_SLACK (64u << 10) /* cut log: twice the state plus this */
#define MARKER_LOST_NS (200 * 1000 * 1000ull) /* a marker not back by then is lost */
#define MARKER_DROP_RETRY_NS (1000 * 1000ull)  /* ... one dropped on a full ring: asked again */
#define NF_RESCAN_MS 10 /* a chain position without a state block: look again */

static uint64_t
window_bytes(const struct mgr_remote_cfg *rc)
{
	return (uint64_t)rc->state_window_mb << 20;
}

static uint64_t
window_off(const struct mgr_remote_cfg *rc, int win)
{
	return ((uint64_t)rc->state_base_mb << 20) + (uint64_t)win * window_bytes(rc);
}

/* The service ranks of each position (an instance each, as configured; one
 * for a service no configured NF gives, started by hand), and their
 * windows. */
static struct rsync_chain *chain_of_service(uint16_t service, int *pos);

static int
plan_windows(struct rsync_chain *c)
{
	const struct mgr_remote_cfg *rc = c->cfg;
	const struct mgr_chain_cfg *ch = &mgr.cfg.chains[rc->chain];

	c->nwin = 0;
	for (int k = 0; k < ch->len; k++) {
		int ranks = 0, pos;

		/* A service has one place in the protected chains: its windows,
		 * ranks and marker alignment are by position. */
		if (chain_of_service(ch->services[k], &pos) != NULL) {
			MGR_LOG(ERR, "remote chain %s: service %u is in another protected chain",
				rc->name, ch->services[k]);
			return -ENOTSUP;
		}
		for (int j = 0; j < k; j++)
			if (ch->services[j] == ch->services[k]) {
				MGR_LOG(ERR, "remote chain %s: service %u is in it twice: a "
					     "protected chain's services have one place each",
					rc->name, ch->services[k]);
				return -ENOTSUP;
			}

		for (int i = 0; i < mgr.cfg.nnfs; i++)
			if (mgr.cfg.nfs[i].service == ch->services[k])
				ranks += mgr.cfg.nfs[i].instances;
		if (ranks == 0)
			ranks = 1;
		if (ranks > ONVM_MAX_INSTANCES || c->nwin + ranks > RSYNC_MAX_WINDOWS) {
			MGR_LOG(ERR,
				"remote chain %s: service %u has %d instances; a protected chain "
				"has at most %d per service and %d in all",
				rc->name, ch->services[k], ranks, ONVM_MAX_INSTANCES,
				RSYNC_MAX_WINDOWS);
			return -ENOTSUP;
		}
		c->win_first[k] = (uint8_t)c->nwin;
		for (int r = 0; r < ranks; r++) {
			c->win_pos[c->nwin] = (uint8_t)k;
			c->win_rank[c->nwin] = (uint8_t)r;
			c->nwin++;
		}
		mgr_service_fix(mgr.shm, ch->services[k], (uint16_t)ranks);
	}
	return 0;
}

int
rsync_state_reserve(struct rsync_chain *c)
{
	const struct mgr_remote_cfg *rc = c->cfg;
	int ret = plan_windows(c);

	if (ret < 0 || c->nwin == 0)
		return ret;
	if (mgr.state_seg.base == NULL) {
		MGR_LOG(ERR, "remote chain %s: the node has no state pool (state.pool_mb is 0)",
			rc->name);
		return -ENOMEM;
	}
	ret = mgr_state_pool_reserve(&mgr.state_pool, window_off(rc, 0),
				     (uint64_t)c->nwin * window_bytes(rc));
	if (ret < 0) {
		MGR_LOG(ERR,
			"remote chain %s: its NFs' state windows (%u MB at %u MB of the pool) %s",
			rc->name, c->nwin * rc->state_window_mb, rc->state_base_mb,
			ret == -ERANGE ? "pass the pool's end: raise state.pool_mb"
				       : "overlap another chain's: set state_base_mb apart");
		return ret;
	}
	return 0;
}

/* The protected chain (of rsync_chains) and position of `service`, or NULL. */
static struct rsync_chain *
chain_of_service(uint16_t service, int *pos)
{
	for (int i = 0; i < rsync_nchains; i++) {
		const struct mgr_chain_cfg *ch = &mgr.cfg.chains[rsync_chains[i].cfg->chain];

		for (int k = 0; k < ch->len; k++)
			if (ch->services[k] == service) {
				*pos = k;
				return &rsync_chains[i];
			}
	}
	return NULL;
}

uint64_t
mgr_rsync_marker_floor(uint16_t service)
{
	int pos;
	const struct rsync_chain *c = chain_of_service(service, &pos);

	return c != NULL && rsync_pri(c) != NULL ? __atomic_load_n(&c->marker_seq, __ATOMIC_RELAXED) : 0;
}

void
mgr_rsync_state_parked_check(struct onvm_nf_slot *s)
{
	int pos;
	struct rsync_chain *c = chain_of_service(s->service_id, &pos);

	/* The takeover stores the chain's state, then unparks every NF it
	 * finds parked; this side stored remote_parked, then reads the state:
	 * one of the two sees the other (both sequentially consistent). */
	if (c != NULL && __atomic_load_n(&s->remote_parked, __ATOMIC_SEQ_CST) &&
	    __atomic_load_n(&c->state, __ATOMIC_SEQ_CST) != RS_STANDBY) {
		__atomic_store_n(&s->clock_offset, __atomic_load_n(&c->clock_offset, __ATOMIC_SEQ_CST),
				 __ATOMIC_SEQ_CST);
		__atomic_store_n(&s->remote_parked, 0, __ATOMIC_SEQ_CST);
		mgr_nf_wake(s);
	}
}

int64_t
mgr_rsync_clock_offset(uint16_t service)
{
	int pos;
	const struct rsync_chain *c = chain_of_service(service, &pos);

	return c != NULL ? __atomic_load_n(&c->clock_offset, __ATOMIC_SEQ_CST) : 0;
}

bool
mgr_rsync_parks(uint16_t service)
{
	int pos;
	const struct rsync_chain *c = chain_of_service(service, &pos);

	return c != NULL && c->sby != NULL &&
	       __atomic_load_n(&c->state, __ATOMIC_SEQ_CST) == RS_STANDBY;
}

bool
mgr_rsync_state_window(uint64_t off)
{
	for (int i = 0; i < rsync_nchains; i++) {
		const struct mgr_remote_cfg *rc = rsync_chains[i].cfg;
		uint64_t len = (uint64_t)rsync_chains[i].nwin * window_bytes(rc);

		if (off >= window_off(rc, 0) && off < window_off(rc, 0) + len)
			return true;
	}
	return false;
}

/* The state records of the chain's NFs placed so far (their canonical
 * regions, rsync_state_wire_bytes), `s`'s counted as `own`: a full cut -- a
 * standby resynchronising -- carries it all in one transaction. */
static uint64_t
chain_state_sum(const struct rsync_chain *c, const struct onvm_nf_slot *s, int win, uint64_t own)
{
	uint64_t sum = own;

	for (int w = 0; w < c->nwin; w++) {
		uint64_t off = window_off(c->cfg, w);

		if (w == win)
			continue; /* counted as `own` (an old slot still there is EBUSY) */
		for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
			const struct onvm_nf_slot *o = &mgr.shm->nfs[id];
			struct nf_state_layout l;

			if (o == s || o->state_mz[0] == '\0' || o->state_off != off ||
			    mgr_nf_state_layout(o, &l, NULL, 0) < 0)
				continue;
			for (uint32_t r = 0; r < l.n_regions; r++)
				sum += rsync_state_wire_bytes(l.regions[r].block_size,
							      l.regions[r].chunk_size);
			break;
		}
	}
	return sum;
}

/* Fragments a full cut of `bytes` takes beyond its payload: the META, the
 * TxTs pieces -- of a stage that may also hold the packets that waited
 * ahead of the cut (RSYNC_WAIT_RING: 140 fragments) --, the window layout,
 * a partial piece per region (a margin). */
#define FULL_CUT_FRAG_MARGIN 208u

int
mgr_rsync_state_place(const struct onvm_nf_slot *s, const struct nf_state_layout *layout,
		      struct mgr_rsync_placement *pl, char *why, size_t whylen)
{
	struct rsync_chain *c;
	uint64_t canon = 0, wire = 0, sum;
	bool may_be_primary;
	int pos, rank, win;

	memset(pl, 0, sizeof(*pl));
	c = chain_of_service(s->service_id, &pos);
	if (c == NULL)
		return 0;
	/* Its rank was given at registration (struct onvm_service). */
	rank = mgr_service_rank(mgr.shm, s->service_id, s->instance_id);
	if (rank < 0 || c->win_first[pos] + rank >= c->nwin ||
	    c->win_pos[c->win_first[pos] + rank] != pos) {
		snprintf(why, whylen, "NF %u of remote chain %s holds no rank of its service",
			 pos, c->cfg->name);
		return -EBUSY;
	}
	win = c->win_first[pos] + rank;
	pl->off = window_off(c->cfg, win);
	may_be_primary = c->cfg->role == MGR_REMOTE_PRIMARY || c->cfg->reprotect;
	/* Before a takeover: the NF waits for it.  (Set in the slot, then
	 * checked again: mgr_rsync_state_parked_check().) */
	pl->parked = c->sby != NULL && __atomic_load_n(&c->state, __ATOMIC_SEQ_CST) == RS_STANDBY;
	for (uint32_t r = 0; r < layout->n_regions; r++) {
		canon += layout->regions[r].block_size;
		wire += rsync_state_wire_bytes(layout->regions[r].block_size,
					       layout->regions[r].chunk_size);
	}
	/* A cut may carry all of the chain's state (a full cut for a standby
	 * resynchronising; an NF restarted on the primary freezes all of its
	 * own): one transaction must be able to take it, or no cut would ever
	 * commit again. */
	/* Counted as the records its bytes take on the wire (the worst case
	 * of a delta: every chunk a record of its own), with the cut's first
	 * piece, the window layout (a record of 8 bytes). */
	sum = chain_state_sum(c, s, win, wire) + RSYNC_REC_HDR_LEN + sizeof(uint64_t);
	/* (a standby with "reprotect" may be made primary: as a primary) */
	if (may_be_primary && sum > (uint64_t)c->cfg->stage_state_kb << 10) {
		snprintf(why, whylen,
			 "remote chain %s: %" PRIu64 " B of state records with NF %d; a full cut "
			 "must fit one transaction (stage_state_kb %u)",
			 c->cfg->name, sum, pos, c->cfg->stage_state_kb);
		return -E2BIG;
	}
	if (c->sby != NULL &&
	    sum > ((uint64_t)c->cfg->max_frags - RTE_MIN(c->cfg->max_frags, FULL_CUT_FRAG_MARGIN)) *
			  (RSYNC_MAX_PAYLOAD - RSYNC_REC_HDR_LEN)) {
		snprintf(why, whylen,
			 "remote chain %s: %" PRIu64 " B of state records with NF %d; a full cut "
			 "must fit one transaction (max_frags %u, less %u for its others)",
			 c->cfg->name, sum, pos, c->cfg->max_frags, FULL_CUT_FRAG_MARGIN);
		return -E2BIG;
	}
	if (may_be_primary) {
		pl->cut_log = 2 * canon + CUT_LOG_SLACK;
		pl->cut_size = RTE_ALIGN_CEIL(onvm_cut_area_size(layout, pl->cut_log), 64);
	}
	if (RTE_ALIGN_CEIL(layout->total_size, 64) + pl->cut_size > window_bytes(c->cfg)) {
		snprintf(why, whylen,
			 "NF %u of remote chain %s needs %" PRIu64 " bytes of state%s, more than "
			 "its window (state_window_mb %u)",
			 pos, c->cfg->name, layout->total_size,
			 pl->cut_size ? " and cut log" : "", c->cfg->state_window_mb);
		return -E2BIG;
	}
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		const struct onvm_nf_slot *o = &mgr.shm->nfs[id];

		if (o != s && o->state_mz[0] != '\0' && o->state_off == pl->off) {
			snprintf(why, whylen,
				 "the state window of NF %d (rank %d) of remote chain %s is in "
				 "use (by instance %u)",
				 pos, rank, c->cfg->name, id);
			return -EBUSY;
		}
	}
	pl->cut_off = pl->off + RTE_ALIGN_CEIL(layout->total_size, 64);
	return 1;
}

/* ---- the chain's NFs, as the manager sees them ---- */

/* The slot of the NF with its state block in window `win`, attached
 * (state, and on the primary the cut log), or NULL when there is none (yet).
 * A slot reused by another NF is attached again. */
struct rsync_nf_ref *
rsync_nf_at(struct rsync_chain *c, int win, bool force)
{
	const struct mgr_chain_cfg *ch = &mgr.cfg.chains[c->cfg->chain];
	struct rsync_nf_ref *ref = &c->nf[win];

	uint64_t tsc = rte_get_tsc_cycles();

	if (ref->attached) {
		const struct onvm_nf_slot *s = &mgr.shm->nfs[ref->slot];

		/* (A dead NF's block may still be mapped until it is reaped:
		 * nothing written there would survive.) */
		if (s->generation == ref->generation && mgr_nf_slot_live(s) &&
		    __atomic_load_n(&s->state_mz[0], __ATOMIC_ACQUIRE) != '\0')
			return ref;
		ref->attached = false;
		ref->rescan_tsc = 0;
	}
	/* A position without a state block (yet): look again at most every
	 * NF_RESCAN_MS, not for every packet. */
	if (tsc < ref->rescan_tsc && !force)
		return NULL;
	ref->rescan_tsc = tsc + NF_RESCAN_MS * (rte_get_tsc_hz() / 1000);
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		struct onvm_nf_slot *s = &mgr.shm->nfs[id];
		struct nf_state_layout layout;

		if (s->service_id != ch->services[c->win_pos[win]] || !mgr_nf_slot_live(s) ||
		    __atomic_load_n(&s->state_mz[0], __ATOMIC_ACQUIRE) == '\0' ||
		    s->state_off != window_off(c->cfg, win))
			continue;
		if (mgr_nf_state_layout(s, &layout, NULL, 0) < 0 ||
		    nf_state_attach(&ref->state, mgr.state_seg.base + s->state_off, s->state_size,
				    &layout, NULL, 0) < 0)
			return NULL;
		ref->has_cut = s->cut_size > 0 &&
			       onvm_cut_attach(&ref->cut, mgr.state_seg.base + s->cut_off,
					       s->cut_size, &layout) == 0;
		ref->slot = id;
		ref->generation = s->generation;
		ref->attached = true;
		return ref;
	}
	return NULL;
}

/* ---- primary: markers and cuts ---- */

void
rsync_state_request_marker(struct rsync_chain *c, uint64_t now)
{
	uint64_t dropped = __atomic_load_n(&mgr.remote.markers_dropped[c - rsync_chains], __ATOMIC_ACQUIRE);

	/* The marker out is lost when it has not come back in MARKER_LOST_NS
	 * (an NF died with it), or soon when one of this chain's markers was
	 * dropped on a full ring since it was asked for (not sooner than
	 * MARKER_DROP_RETRY_NS: an NF that takes nothing would make a storm). */
	if (__atomic_load_n(&c->marker_req, __ATOMIC_ACQUIRE) ||
	    (c->marker_out && now - c->marker_req_ns < MARKER_LOST_NS &&
	     (dropped == c->markers_dropped_seen || now - c->marker_req_ns < MARKER_DROP_RETRY_NS)))
		return;
	if (c->marker_out)
		c->markers_lost++;
	c->markers_dropped_seen = dropped;
	/* The standby asked to resynchronise: every NF freezes everything
	 * (a base it never saw). */
	c->marker_base = rsync_primary_cut_base(c->pri);
	c->marker_full = rsync_primary_full_wanted(c->pri);
	c->marker_id = ++c->cut_id; /* cut ids: one sequence with the stateless cuts */
	c->marker_out = true;
	c->marker_req_ns = now;
	__atomic_store_n(&c->marker_req, 1, __ATOMIC_RELEASE);
}

/* A new predecessor run heard (TX unit): its HEARTBEAT came in line with
 * its input, so the RX unit has admitted all of the old run's before it.
 * A marker injected already may be ahead of some of that input: it is
 * given up (it makes no cut when it comes back), and the stages wait for
 * the next marker's cut, which follows it all.  A marker asked for and not
 * injected yet will be injected after it: its cut will do. */
void
rsync_state_pred_restarted(struct rsync_chain *c)
{
	uint64_t next = c->cut_id + 1;

	if (c->marker_out) {
		if (__atomic_load_n(&c->marker_req, __ATOMIC_ACQUIRE)) {
			next = c->cut_id;
		} else {
			c->marker_out = false;
			c->markers_lost++;
		}
	}
	rsync_primary_hold_for_cut(c->pri, next);
}

struct rte_mbuf *
mgr_rsync_marker_due(uint16_t port)
{
	struct rsync_chain *c = &rsync_chains[mgr.remote.rsync_in_port[port] - 1];
	struct onvm_marker mk;
	struct rte_mbuf *m;
	struct onvm_pkt_meta *meta;

	MGR_ASSERT_UNIT(MGR_UNIT_RX);
	if (c->pri == NULL || !__atomic_load_n(&c->marker_req, __ATOMIC_ACQUIRE))
		return NULL;
	m = rte_pktmbuf_alloc(mgr.pool);
	if (m == NULL)
		return NULL; /* on a later burst */
	mk.cut_id = c->marker_id;
	__atomic_store_n(&c->marker_seq, mk.cut_id, __ATOMIC_RELAXED); /* read at registration */
	mk.base_id = c->marker_base;
	mk.flags = c->marker_full ? ONVM_MARKER_F_FULL : 0;
	memcpy(rte_pktmbuf_append(m, sizeof(mk)), &mk, sizeof(mk));
	meta = onvm_pkt_meta(m, mgr.dyn_off);
	memset(meta, 0, sizeof(*meta));
	meta->ts = c->last_ts;
	/* What the cut is, as sent: the marker's bytes and metadata cross
	 * the NFs, which may write them (the ring that carries the marker
	 * orders this store before the TX unit's read). */
	c->marker_ts = c->last_ts;
	c->markers_injected++;
	__atomic_store_n(&c->marker_req, 0, __ATOMIC_RELEASE);
	return m;
}

/* The newest cut an ND decision of the chain's NFs waits for (rule 2): every
 * NF of the chain, with state or not.  Called for each packet leaving the
 * chain, after it was dequeued: its NF published nd_cut (release) before it
 * emitted it.  `now`: the TX poll's clock (no clock read per packet). */
void
rsync_state_nd(struct rsync_chain *c, uint64_t now)
{
	const struct mgr_chain_cfg *ch = &mgr.cfg.chains[c->cfg->chain];
	uint32_t regs = __atomic_load_n(&mgr.nf_registrations, __ATOMIC_ACQUIRE);
	uint64_t nd = 0;

	/* Every slot of the chain's services that is not free (a starting,
	 * dying or promoted one included: taking the highest is always safe),
	 * listed again whenever an NF registered, and every NF_RESCAN_MS. */
	if (regs != c->nd_regs || now >= c->nd_rescan_ns) {
		c->nd_regs = regs;
		c->nd_rescan_ns = now + NF_RESCAN_MS * 1000000ull;
		c->nd_n = 0;
		for (uint16_t id = 0; id < ONVM_MAX_NFS; id++)
			for (int k = 0; k < ch->len; k++)
				if (mgr.shm->nfs[id].service_id == ch->services[k] &&
				    __atomic_load_n(&mgr.shm->nfs[id].status, __ATOMIC_ACQUIRE) !=
					    ONVM_NF_FREE) {
					c->nd_slot[c->nd_n++] = (int16_t)id;
					break;
				}
	}
	for (uint16_t i = 0; i < c->nd_n; i++) {
		uint64_t v = __atomic_load_n(&mgr.shm->nfs[c->nd_slot[i]].nd_cut, __ATOMIC_ACQUIRE);

		if (v > nd)
			nd = v;
	}
	if (nd > c->nd_seen) {
		c->nd_seen = nd;
		rsync_primary_nd(c->pri, nd);
	}
}

/* What the live NF of window `win` (its position's service, its rank) is:
 * read when a marker reached the exit (primary), or to see whether the
 * chain can take a full cut (standby).  Unknown while no NF holds the rank,
 * or its NF neither runs nor parks: until then its state declarations are
 * not final. */
enum pos_kind
rsync_window_kind(const struct rsync_chain *c, int win)
{
	const uint16_t svc_id = mgr.cfg.chains[c->cfg->chain].services[c->win_pos[win]];
	const struct onvm_service *svc = &mgr.shm->services[svc_id];
	uint32_t a = __atomic_load_n(&svc->active, __ATOMIC_ACQUIRE) & 1;
	const struct onvm_nf_slot *s;
	uint16_t id;
	uint32_t st;

	if (c->win_rank[win] >= svc->n[a])
		return POS_UNKNOWN;
	id = svc->inst[a][c->win_rank[win]];
	if (id >= ONVM_MAX_NFS)
		return POS_UNKNOWN; /* (ONVM_INST_NONE) */
	s = &mgr.shm->nfs[id];
	st = __atomic_load_n(&s->status, __ATOMIC_ACQUIRE);
	if (st != ONVM_NF_READY && st != ONVM_NF_RUNNING)
		return POS_UNKNOWN;
	/* Its state declarations are final once it runs, or parks (a
	 * standby node's NF) -- not while it starts up. */
	if (!__atomic_load_n(&s->nf_running, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&s->remote_park_ack, __ATOMIC_ACQUIRE))
		return POS_UNKNOWN;
	return __atomic_load_n(&s->n_state_req, __ATOMIC_ACQUIRE) > 0 ? POS_STATE : POS_STATELESS;
}

/*
 * The layout of the chain's state windows -- ranks per step (4 bits each),
 * window size (15 bits) and base (16 bits) -- packed in 63 bits.  Both nodes must agree on it, or a piece of one
 * NF's state would be written into another NF (window numbers follow the
 * ranks of every step before) and pointers would point elsewhere: every cut
 * carries it first, as the offset of a piece of region RSYNC_LAYOUT_REGION,
 * and the standby refuses the cut when it differs from its own.
 */
uint64_t
rsync_layout_tag(const struct rsync_chain *c)
{
	uint64_t tag = 0;

	for (int w = 0; w < c->nwin; w++)
		tag += 1ull << (4 * c->win_pos[w]); /* ranks of step k: bits 4k..4k+3 */
	tag |= (uint64_t)(c->cfg->state_window_mb & 0x7fff) << 32; /* <= 32767 (config) */
	tag |= (uint64_t)(c->cfg->state_base_mb & 0xffff) << 47;
	return tag;
}

/* Every NF's records of the cut into the open cut; false if one is missing. */
static bool
collect(struct rsync_chain *c, uint64_t cut_id)
{
	uint64_t tag = rsync_layout_tag(c);

	(void)rsync_primary_cut_piece(c->pri, RSYNC_LAYOUT_REGION, tag, &tag, sizeof(tag));
	for (int w = 0; w < c->nwin; w++) {
		struct rsync_nf_ref *ref;

		switch (rsync_window_kind(c, w)) {
		case POS_STATELESS:
			continue; /* nothing to freeze */
		case POS_UNKNOWN:
			/* No live NF there (a rank no instance holds, one
			 * starting): who passed the marker on? */
			c->cuts_nf_missing++;
			return false;
		default:
			break;
		}
		ref = rsync_nf_at(c, w, true);
		if (ref == NULL || !ref->has_cut)
			return false; /* state declared, but no cut log to read */
		for (;;) {
			struct onvm_cut_rec rec;
			const uint8_t *data;
			enum onvm_cut_read_result r = onvm_cut_read(&ref->cut, cut_id, &rec, &data);

			if (r == ONVM_CUT_READ_DATA) {
				(void)rsync_primary_cut_piece(
					c->pri, (uint16_t)(w * NF_STATE_MAX_REGIONS + rec.region),
					rec.offset, data, rec.len);
				onvm_cut_consume(&ref->cut);
				continue;
			}
			if (r == ONVM_CUT_READ_END) {
				onvm_cut_consume(&ref->cut);
				break;
			}
			if (r == ONVM_CUT_READ_FAILED)
				onvm_cut_consume(&ref->cut);
			/* FAILED, or nothing although the marker passed the NF */
			return false;
		}
	}
	return true;
}

int
rsync_state_marker_at_exit(struct rsync_chain *c, struct rte_mbuf *m, uint64_t now)
{
	struct onvm_marker mk;
	bool full;
	int rc;

	if (rte_pktmbuf_data_len(m) < sizeof(mk)) {
		rte_pktmbuf_free(m);
		return 0;
	}
	memcpy(&mk, rte_pktmbuf_mtod(m, const void *), sizeof(mk));
	/* Only the marker awaited makes a cut, of what was sent in it: an NF
	 * may have written the marker's bytes or metadata (a timestamp above
	 * the cut's would trim the log past packets its state never saw).
	 * One given up for lost and come back changes nothing. */
	if (mk.cut_id != c->marker_id || !c->marker_out) {
		c->markers_not_awaited++;
		rte_pktmbuf_free(m);
		return 0;
	}
	full = c->marker_full;
	rc = rsync_primary_cut_begin(c->pri, c->marker_id, full ? RSYNC_CUT_FULL : c->marker_base,
				     c->marker_ts, now);
	if (rc == -ENOBUFS)
		return -ENOBUFS; /* every stage busy: it waits, in order */
	if (rc == 0) {
		bool whole = collect(c, mk.cut_id);

		if (!whole) {
			rsync_primary_cut_drop(c->pri);
			c->cuts_nf_failed++;
		}
		if (rsync_primary_cut_end(c->pri, now) == 0) {
			c->cuts_state++;
			/* The standby is in sync only at a cut after the full
			 * one: asked for at once, traffic or not, and again
			 * until one is released (rsync_unit_out.c). */
			if (full) {
				c->cut_after_full = true;
				c->full_cut_id = mk.cut_id;
				c->full_cut_ns = now;
			}
		} else if (full && whole) {
			if (c->full_too_big++ == 0)
				MGR_LOG(ERR, "remote chain %s: a full cut for the standby's "
					     "resynchronisation does not fit stage_state_kb: the "
					     "standby stays out of sync", c->cfg->name);
		}
	}
	/* The marker awaited: the next may go.  An older one (given up for
	 * lost, then come back) changes nothing. */
	c->marker_out = false;
	rte_pktmbuf_free(m);
	return 0;
}
