/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * move_ctl.c -- flow migration on the control side (move.h): start a move,
 * flip the bucket table when dst has the state, end or fail it, and the
 * telemetry commands.  Everything here runs under mgr.ctl_lock.
 *
 * Ordering rests on the units' RCU quiescent points (nf_services.c): once
 * mgr_rcu_wait() returns, every packet a unit routed before the change is
 * in an NF's ring.  So the START marker, put into src's ring after the
 * hook is set and a grace period passed, follows every packet that was not
 * tagged; the END marker, after the flip and a grace period, follows every
 * packet of the moved buckets that src will ever get.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "mgr.h"
#include "elastic/move.h"
#include "elastic/move_peer.h"
#include "remote/remote.h"
#include "stateless/stateless.h"
#include "ftc/ftc.h"

/* Before the flip a move may take this long (export, import, catching up);
 * then it fails and src keeps the flows. */
#define MOVE_TIMEOUT_NS (3000ull * 1000 * 1000)
/* After the flip, how long the end waits for src and dst (then the move is
 * done, lossy: an NF stuck or a copy lost uncounted). */
#define FLIP_LINGER_NS (10000ull * 1000 * 1000)
/* A failed move's slot is not reused while dst may still see its copies. */
#define MOVE_LINGER_NS (2000ull * 1000 * 1000)
/* How long a marker may wait for room in an NF's ring. */
#define MARKER_TRY_MS 50

/* Control-side bookkeeping of a slot. */
static struct {
	uint32_t src_gen, dst_gen; /* the NF slots' generations at the start */
	uint64_t src_fo, dst_fo;   /* ... and their failovers (local promotions) */
	bool hooked;		   /* in mgr_move_hook[src] */
	bool into;		   /* counted in mgr_move_into[dst] */
	bool end_sent;
	bool copies_given_up;	   /* after the flip: dst's copies waited for no more */
	bool peer_started;	   /* TO_PEER: hooked and START in, once dst's node opened */
	uint64_t t_over;	   /* when it became DONE or FAILED */
	uint32_t gen;		   /* slot's move counter */
} priv[ONVM_MAX_MOVES];

static const char *const state_names[] = {
	[ONVM_MOVE_FREE] = "free",	   [ONVM_MOVE_STARTED] = "started",
	[ONVM_MOVE_EXPORTED] = "exported", [ONVM_MOVE_IMPORTED] = "imported",
	[ONVM_MOVE_FLIPPING] = "flipping", [ONVM_MOVE_FLIPPED] = "flipped",
	[ONVM_MOVE_DONE] = "done",
	[ONVM_MOVE_FAILED] = "failed",
};

static const char *const fail_names[ONVM_MOVE_FAIL_REASON_MAX] = {
	[ONVM_MOVE_OK] = "none",
	[ONVM_MOVE_FAIL_SRC_GONE] = "src_gone",
	[ONVM_MOVE_FAIL_DST_GONE] = "dst_gone",
	[ONVM_MOVE_FAIL_TIMEOUT] = "timeout",
	[ONVM_MOVE_FAIL_COPY] = "copy_lost",
	[ONVM_MOVE_FAIL_RING] = "ring_full",
	[ONVM_MOVE_FAIL_EXPORT] = "export_too_big",
	[ONVM_MOVE_FAIL_IMPORT] = "import_refused",
	[ONVM_MOVE_FAIL_WAIT] = "dst_wait",
	[ONVM_MOVE_FAIL_LOG] = "log_overrun",
	[ONVM_MOVE_FAIL_NF] = "nf_cannot_move",
	[ONVM_MOVE_FAIL_SRC_FAILOVER] = "src_failover",
	[ONVM_MOVE_FAIL_PEER_LOST] = "peer_lost",
	[ONVM_MOVE_FAIL_PEER_REFUSED] = "peer_refused",
};

/* Totals since start-up, for /onvm/moves. */
static uint64_t moves_started, moves_done, moves_failed[ONVM_MOVE_FAIL_REASON_MAX];

const char *
mgr_move_state_str(uint32_t state)
{
	return state < RTE_DIM(state_names) ? state_names[state] : "unknown";
}

const char *
mgr_move_fail_str(uint32_t fail)
{
	return fail < RTE_DIM(fail_names) ? fail_names[fail] : "unknown";
}

static bool
nf_alive(uint16_t id, uint32_t gen)
{
	const struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	uint32_t st = __atomic_load_n(&s->status, __ATOMIC_ACQUIRE);

	return (st == ONVM_NF_READY || st == ONVM_NF_RUNNING) &&
	       __atomic_load_n(&s->generation, __ATOMIC_ACQUIRE) == gen;
}

/* A move marker into NF `id`'s ring, after everything a unit put there;
 * waiting up to MARKER_TRY_MS for room with `wait` (at the start, asked
 * for), else trying once (the control pass comes again). */
static int
inject(uint16_t id, uint32_t slot, enum onvm_move_marker phase, bool wait)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	struct onvm_marker mk = {
		.cut_id = ONVM_MOVE_TAG(slot, mgr.shm->moves[slot].gen, 0),
		.base_id = phase,
		.flags = ONVM_MARKER_F_MOVE,
	};
	struct rte_mbuf *m = rte_pktmbuf_alloc(mgr.pool);
	struct onvm_pkt_meta *meta;
	void *p;

	if (m == NULL)
		return -ENOMEM;
	p = rte_pktmbuf_append(m, sizeof(mk));
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return -ENOMEM;
	}
	memcpy(p, &mk, sizeof(mk));
	meta = onvm_pkt_meta(m, mgr.dyn_off);
	memset(meta, 0, sizeof(*meta));
	meta->flags = ONVM_PKT_F_MARKER;
	meta->action = ONVM_ACTION_NEXT;
	meta->egress_port = ONVM_PORT_UNSET;
	for (int t = 0; rte_ring_mp_enqueue(s->rx_ring, m) != 0; t++) {
		if (!wait || t >= MARKER_TRY_MS) {
			rte_pktmbuf_free(m);
			return -ENOBUFS;
		}
		usleep(1000);
	}
	/* Pairs with the barrier in libnf's sleep_for_work(). */
	rte_smp_mb();
	if (__atomic_load_n(&s->sleeping, __ATOMIC_RELAXED))
		mgr_nf_wake(s);
	return 0;
}

static int
xfer_map(uint32_t slot)
{
	char name[RTE_MEMZONE_NAMESIZE];
	const struct rte_memzone *mz;

	if (mgr_move_xfer[slot] != NULL)
		return 0;
	snprintf(name, sizeof(name), ONVM_MOVE_MZ_FMT, slot);
	mz = rte_memzone_lookup(name);
	if (mz == NULL)
		mz = rte_memzone_reserve(name, sizeof(struct onvm_move_xfer), SOCKET_ID_ANY, 0);
	if (mz == NULL)
		return -ENOMEM;
	mgr_move_xfer[slot] = mz->addr;
	return 0;
}

static bool
chain_kind_allows(uint16_t service, char *err, size_t errlen)
{
	if (mgr.remote.rsync_service[service] != 0) {
		snprintf(err, errlen, "service %u is in a remote chain: not movable yet", service);
		return false;
	}
	if (mgr_ftc_any) {
		snprintf(err, errlen, "an FTC node's flows are not movable yet");
		return false;
	}
	for (uint16_t c = 0; c < ONVM_MAX_CHAINS; c++) {
		const struct onvm_chain *ch = &mgr.shm->chains[c];

		if (!ch->used || !ch->stateless)
			continue;
		for (uint16_t i = 0; i < ch->len; i++)
			if (ch->services[i] == service) {
				snprintf(err, errlen,
					 "service %u is in a stateless chain: its state is in the store",
					 service);
				return false;
			}
	}
	if (mgr.shm->services[service].fixed != 0) {
		snprintf(err, errlen, "service %u has fixed ranks", service);
		return false;
	}
	return true;
}

/* Is a live move using instance `id`, or any of `buckets` of `service`? */
static const char *
move_conflict(const struct mgr_move_req *req)
{
	for (uint32_t i = 0; i < ONVM_MAX_MOVES; i++) {
		const struct onvm_move *mv = &mgr.shm->moves[i];
		uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);

		/* (a failed move still hooked is live for this: its hook
		 * must go before another move of its buckets starts) */
		if (st == ONVM_MOVE_FREE || st == ONVM_MOVE_DONE ||
		    (st == ONVM_MOVE_FAILED && !priv[i].hooked))
			continue;
		/* Opposite roles could wait on each other (each dst waiting
		 * at its IN marker for the other's export).  (An instance on
		 * another node, ONVM_INST_NONE here, is none of ours.) */
		if ((mv->src == req->dst && req->dst != ONVM_INST_NONE) ||
		    (mv->dst == req->src && req->src != ONVM_INST_NONE))
			return "an instance is already in a move the other way";
		if (mv->service != req->service)
			continue;
		/* (a mirror's flows are another node's: its buckets overlap
		 * only another mirror's into the same instance) */
		if ((mv->xnode == ONVM_MOVE_FROM_PEER) != (req->src == ONVM_INST_NONE) ||
		    (mv->xnode == ONVM_MOVE_FROM_PEER && mv->dst != req->dst))
			continue;
		for (uint32_t w = 0; w < ONVM_FLOW_BUCKETS / 64; w++)
			if (mv->buckets[w] & req->buckets[w])
				return "some of the buckets are moving already";
	}
	return NULL;
}

static int
free_slot(void)
{
	uint64_t now = mgr_now_ns();

	for (uint32_t i = 0; i < ONVM_MAX_MOVES; i++) {
		uint32_t st = __atomic_load_n(&mgr.shm->moves[i].state, __ATOMIC_ACQUIRE);

		/* (a mirror is free once closed: the units look its slot up
		 * until then; a failed move once unhooked and over a while) */
		if (st == ONVM_MOVE_FREE ||
		    (st == ONVM_MOVE_DONE &&
		     (mgr.shm->moves[i].xnode != ONVM_MOVE_FROM_PEER || priv[i].t_over != 0)) ||
		    (st == ONVM_MOVE_FAILED && !priv[i].hooked && priv[i].t_over != 0 &&
		     now - priv[i].t_over > MOVE_LINGER_NS))
			return (int)i;
	}
	return -1;
}

static void
unhook(uint32_t slot)
{
	const struct onvm_move *mv = &mgr.shm->moves[slot];

	if (!priv[slot].hooked)
		return;
	__atomic_fetch_and(&mgr_move_hook[mv->src], ~(1u << slot), __ATOMIC_RELEASE);
	priv[slot].hooked = false;
}

/* 1. dst's IN marker, ahead of any copy; dst counted as a move's (entry
 * backpressure); 0, or -errno with a sentence in err (the move failed). */
static int
open_dst(uint32_t slot, uint16_t dst, char *err, size_t errlen)
{
	int ret = inject(dst, slot, ONVM_MOVE_MK_IN, true);

	if (ret < 0) {
		mgr_move_fail(slot, ONVM_MOVE_FAIL_RING);
		snprintf(err, errlen, "no room for a marker in instance %u's ring", dst);
		return ret;
	}
	__atomic_add_fetch(&mgr_move_into[dst], 1, __ATOMIC_RELEASE);
	priv[slot].into = true;
	return 0;
}

/* 2. The hook; after a grace period every untagged packet of the buckets
 * is in src's ring, so 3. START goes in behind them. */
static int
hook_and_start(uint32_t slot)
{
	const struct onvm_move *mv = &mgr.shm->moves[slot];
	static int start_delay_ms = -1;
	int ret;

	/* ONVM_MGR_FAULT=move_start_delay_ms:MS -- a test widens the window
	 * between the hook and START, so src handles tagged packets before
	 * its export (the "included" ones, whose copies dst skips). */
	if (start_delay_ms < 0) {
		const char *f = getenv("ONVM_MGR_FAULT");
		unsigned int ms = 0;

		start_delay_ms =
			f != NULL && sscanf(f, "move_start_delay_ms:%u", &ms) == 1 ? (int)ms : 0;
	}
	__atomic_fetch_or(&mgr_move_hook[mv->src], 1u << slot, __ATOMIC_RELEASE);
	priv[slot].hooked = true;
	mgr_rcu_wait();
	if (start_delay_ms > 0) /* (a test's: at most 1 s, under the lock) */
		usleep((useconds_t)RTE_MIN(start_delay_ms, 1000) * 1000);
	ret = inject(mv->src, slot, ONVM_MOVE_MK_START, true);
	if (ret < 0) {
		mgr_move_fail(slot, ONVM_MOVE_FAIL_RING);
		unhook(slot);
	}
	return ret;
}

/* The buckets of req->buckets routed to req->src now, into `mine`; how
 * many (0: none, said in err). */
static uint32_t
src_buckets(const struct mgr_move_req *req, uint64_t *mine, char *err, size_t errlen)
{
	uint32_t nb = 0;

	memset(mine, 0, ONVM_FLOW_BUCKETS / 8);
	for (uint32_t b = 0; b < ONVM_FLOW_BUCKETS; b++) {
		uint32_t hash = b << (32 - ONVM_FLOW_BUCKET_BITS);

		if (onvm_bucket_in(req->buckets, b) &&
		    mgr_service_pick(mgr.shm, req->service, hash) == req->src) {
			mine[b / 64] |= UINT64_C(1) << (b % 64);
			nb++;
		}
	}
	if (nb == 0)
		snprintf(err, errlen, "none of those buckets is routed to instance %u", req->src);
	return nb;
}

/* A slot for a new move of `req` (its buckets `mine`, nb of them): its
 * memzone cleared, its record reset (not live yet: slot_go); the slot, or
 * -errno with a sentence in err. */
static int
slot_open(const struct mgr_move_req *req, const uint64_t *mine, uint32_t nb, char *err,
	  size_t errlen)
{
	struct mgr_move_req r = *req;
	struct onvm_move *mv;
	const char *why;
	int slot;

	memcpy(r.buckets, mine, sizeof(r.buckets));
	why = move_conflict(&r);
	if (why != NULL) {
		snprintf(err, errlen, "%s", why);
		return -EBUSY;
	}
	slot = free_slot();
	if (slot < 0) {
		snprintf(err, errlen, "%d moves at once already", ONVM_MAX_MOVES);
		return -EBUSY;
	}
	if (xfer_map((uint32_t)slot) < 0) {
		snprintf(err, errlen, "no hugepage memory for the move's %zu bytes",
			 sizeof(struct onvm_move_xfer));
		return -ENOMEM;
	}
	memset(mgr_move_xfer[slot]->log, 0, sizeof(mgr_move_xfer[slot]->log));
	mgr_move_xfer[slot]->n_included = 0;
	mgr_move_xfer[slot]->len = 0;
	mv = &mgr.shm->moves[slot];
	/* A slot's gens start where this run of the manager says: a move of
	 * a restarted node is not taken for one of its last run's by another
	 * node, which knows a move by its slot and gen (never 0). */
	if (priv[slot].gen == 0)
		priv[slot].gen = (uint32_t)(mgr.remote.run >> 16) + slot * 0x01000193u;
	if (++priv[slot].gen == 0)
		priv[slot].gen = 1;
	memset(mv, 0, sizeof(*mv));
	mv->gen = priv[slot].gen;
	mv->service = req->service;
	mv->src = req->src;
	mv->dst = req->dst;
	mv->method = req->method;
	memcpy(mv->buckets, mine, ONVM_FLOW_BUCKETS / 8);
	mv->n_buckets = nb;
	mv->t_start = mgr_now_ns();
	priv[slot].end_sent = false;
	priv[slot].copies_given_up = false;
	priv[slot].peer_started = false;
	priv[slot].t_over = 0;
	return slot;
}

/* The move in `slot` is live. */
static void
slot_go(uint32_t slot)
{
	/* (before any of its markers can come out of an NF) */
	__atomic_store_n(&mgr_moves_any, true, __ATOMIC_RELEASE);
	__atomic_store_n(&mgr.shm->moves[slot].state, ONVM_MOVE_STARTED, __ATOMIC_RELEASE);
	moves_started++;
}

/* Is `port` a peer link, and may service's buckets go to instance `inst`
 * behind it (one instance on another node per service)? */
static bool
peer_target_ok(uint16_t service, uint16_t port, uint16_t inst, char *err, size_t errlen)
{
	const struct onvm_service *svc = &mgr.shm->services[service];
	uint32_t a = svc->active & 1;

	if (port >= mgr.nb_ports || !mgr_peer_port[port]) {
		snprintf(err, errlen, "port %u is not a link marked \"peer\"", port);
		return false;
	}
	if (svc->moved[a] && (svc->peer_port != port || svc->peer_inst != inst))
		for (uint32_t b = 0; b < ONVM_FLOW_BUCKETS; b++)
			if (svc->rank_of[a][b] == ONVM_RANK_PEER) {
				snprintf(err, errlen,
					 "service %u has flows at instance %u behind port %u already "
					 "(one instance on another node per service)",
					 service, svc->peer_inst, svc->peer_port);
				return false;
			}
	for (uint32_t i = 0; i < ONVM_MAX_MOVES; i++) {
		const struct onvm_move *mv = &mgr.shm->moves[i];
		uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);

		if (st != ONVM_MOVE_FREE && st != ONVM_MOVE_DONE && st != ONVM_MOVE_FAILED &&
		    mv->xnode == ONVM_MOVE_TO_PEER && mv->service == service &&
		    (mv->peer_port != port || mv->peer_inst != inst)) {
			snprintf(err, errlen, "service %u is moving to another node's instance",
				 service);
			return false;
		}
	}
	return true;
}

/* One end of a move to or from another node: a service and method that
 * may move, and instance `id` here runs it, is not leaving, and says its
 * flows may move; 0, or -errno with a sentence in err. */
static int
end_ok(uint16_t id, uint16_t service, uint8_t method, char *err, size_t errlen)
{
	const struct onvm_nf_slot *s;

	if (service == 0 || service >= ONVM_MAX_SERVICES || id >= ONVM_MAX_NFS ||
	    method > ONVM_MOVE_BUFFER) {
		snprintf(err, errlen, "bad service, instance or method");
		return -EINVAL;
	}
	if (!chain_kind_allows(service, err, errlen))
		return -EOPNOTSUPP;
	s = &mgr.shm->nfs[id];
	if (s->status != ONVM_NF_RUNNING || s->service_id != service ||
	    __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		snprintf(err, errlen, "instance %u does not run service %u", id, service);
		return -ENOENT;
	}
	if (!s->movable) {
		snprintf(err, errlen, "NF '%s' does not say its flows may move (nf_ops.movable)",
			 s->name);
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * A move to an instance on the node behind req->peer_port: the record is
 * made here, but the hook and START wait for that node to open its mirror
 * (its IN marker in dst's ring: mgr_move_ctl), so no copy goes over before
 * dst is ready for it.
 */
static int
peer_start(const struct mgr_move_req *req, char *err, size_t errlen)
{
	const struct onvm_nf_slot *src;
	uint64_t mine[ONVM_FLOW_BUCKETS / 64];
	struct onvm_move *mv;
	uint32_t nb;
	int slot;

	if (req->peer_inst >= ONVM_MAX_NFS) {
		snprintf(err, errlen, "bad instance %u", req->peer_inst);
		return -EINVAL;
	}
	slot = end_ok(req->src, req->service, req->method, err, errlen);
	if (slot < 0)
		return slot;
	src = &mgr.shm->nfs[req->src];
	if (!peer_target_ok(req->service, req->peer_port, req->peer_inst, err, errlen))
		return -EBUSY;
	nb = src_buckets(req, mine, err, errlen);
	if (nb == 0)
		return -ENOENT;
	{
		struct mgr_move_req r = *req;

		r.dst = ONVM_INST_NONE; /* (not an instance here) */
		slot = slot_open(&r, mine, nb, err, errlen);
	}
	if (slot < 0)
		return slot;
	mv = &mgr.shm->moves[slot];
	mv->xnode = ONVM_MOVE_TO_PEER;
	mv->peer_port = req->peer_port;
	mv->peer_inst = req->peer_inst;
	priv[slot].src_gen = src->generation;
	priv[slot].src_fo = src->failovers;
	mgr_move_peer_reset((uint32_t)slot);
	slot_go((uint32_t)slot);
	MGR_LOG(INFO, "move %d: service %u, %u buckets from instance %u to instance %u behind "
		"port %u (%s)", slot, req->service, nb, req->src, req->peer_inst, req->peer_port,
		req->method == ONVM_MOVE_BUFFER ? "buffer" : "reprocess");
	mgr_ctl_wake();
	return slot;
}

int
mgr_move_mirror_open(const struct mgr_move_req *req, uint16_t port, uint32_t a_slot,
		     uint32_t a_gen, char *err, size_t errlen)
{
	const struct onvm_nf_slot *dst;
	struct onvm_move *mv;
	uint32_t nb = 0;
	int slot, ret;

	MGR_ASSERT_CTL_LOCKED();
	ret = end_ok(req->dst, req->service, req->method, err, errlen);
	if (ret < 0)
		return ret;
	dst = &mgr.shm->nfs[req->dst];
	/* Its state must be the moved flows' alone: a failed move frees
	 * whatever the buckets hold there, and their new packets wait for
	 * src's last output. */
	if (!mgr_nf_peer_only(&mgr.nf_priv[req->dst]) ||
	    mgr_service_rank(mgr.shm, req->service, req->dst) >= 0) {
		snprintf(err, errlen,
			 "instance %u serves this node's own flows: only an instance of an NF "
			 "entry marked \"peer_only\" takes another node's",
			 req->dst);
		return -EPERM;
	}
	for (uint32_t b = 0; b < ONVM_FLOW_BUCKETS; b++)
		nb += onvm_bucket_in(req->buckets, b);
	if (nb == 0) {
		snprintf(err, errlen, "no buckets");
		return -EINVAL;
	}
	slot = slot_open(req, req->buckets, nb, err, errlen);
	if (slot < 0)
		return slot;
	mv = &mgr.shm->moves[slot];
	mv->src = ONVM_INST_NONE;
	mv->xnode = ONVM_MOVE_FROM_PEER;
	mv->peer_port = port;
	mv->peer_slot = a_slot;
	mv->peer_gen = a_gen;
	priv[slot].dst_gen = dst->generation;
	priv[slot].dst_fo = dst->failovers;
	slot_go((uint32_t)slot);
	ret = open_dst((uint32_t)slot, req->dst, err, errlen);
	if (ret < 0) {
		mgr_move_mirror_close((uint32_t)slot);
		return ret;
	}
	MGR_LOG(INFO, "move %d: mirror of move %u (gen %u) behind port %u: %u buckets of service "
		"%u to instance %u", slot, a_slot, a_gen, port, nb, req->service, req->dst);
	return slot;
}

bool
mgr_move_dst_alive(uint32_t slot)
{
	const struct onvm_move *mv = &mgr.shm->moves[slot];

	return mv->dst < ONVM_MAX_NFS && nf_alive(mv->dst, priv[slot].dst_gen) &&
	       mgr.shm->nfs[mv->dst].failovers == priv[slot].dst_fo;
}

int
mgr_move_start(const struct mgr_move_req *req, char *err, size_t errlen)
{
	const struct onvm_nf_slot *src, *dst;
	uint64_t mine[ONVM_FLOW_BUCKETS / 64] = {0};
	uint32_t nb = 0;
	int src_rank, slot, ret;

	MGR_ASSERT_CTL_LOCKED();
	if (req->to_peer)
		return peer_start(req, err, errlen);
	if (req->service == 0 || req->service >= ONVM_MAX_SERVICES || req->src >= ONVM_MAX_NFS ||
	    req->dst >= ONVM_MAX_NFS || req->src == req->dst ||
	    req->method > ONVM_MOVE_BUFFER) {
		snprintf(err, errlen, "bad service, instances or method");
		return -EINVAL;
	}
	if (!chain_kind_allows(req->service, err, errlen))
		return -EOPNOTSUPP;
	src = &mgr.shm->nfs[req->src];
	dst = &mgr.shm->nfs[req->dst];
	if (src->status != ONVM_NF_RUNNING || dst->status != ONVM_NF_RUNNING ||
	    src->service_id != req->service || dst->service_id != req->service) {
		snprintf(err, errlen, "instances %u and %u must both run service %u", req->src,
			 req->dst, req->service);
		return -ENOENT;
	}
	if (__atomic_load_n(&src->stop, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&dst->stop, __ATOMIC_ACQUIRE)) {
		snprintf(err, errlen, "instance %u or %u is leaving", req->src, req->dst);
		return -EBUSY;
	}
	if (!src->movable || !dst->movable) {
		snprintf(err, errlen,
			 "NF '%s' does not say its flows may move (nf_ops.movable: all per-flow "
			 "state in flow tables, a packet handler)",
			 src->name);
		return -EOPNOTSUPP;
	}
	src_rank = mgr_service_rank(mgr.shm, req->service, req->src);
	if (src_rank < 0 || mgr_service_rank(mgr.shm, req->service, req->dst) < 0) {
		snprintf(err, errlen, "instance %u or %u holds no rank of service %u", req->src,
			 req->dst, req->service);
		return -ENOENT;
	}
	nb = src_buckets(req, mine, err, errlen);
	if (nb == 0)
		return -ENOENT;
	slot = slot_open(req, mine, nb, err, errlen);
	if (slot < 0)
		return slot;
	priv[slot].src_gen = src->generation;
	priv[slot].dst_gen = dst->generation;
	priv[slot].src_fo = src->failovers;
	priv[slot].dst_fo = dst->failovers;
	slot_go((uint32_t)slot);
	ret = open_dst((uint32_t)slot, req->dst, err, errlen);
	if (ret < 0)
		return ret;
	ret = hook_and_start((uint32_t)slot);
	if (ret < 0) {
		snprintf(err, errlen, "no room for a marker in instance %u's ring", req->src);
		return ret;
	}
	MGR_LOG(INFO, "move %d: service %u, %u buckets from instance %u to %u (%s)", slot,
		req->service, nb, req->src, req->dst,
		req->method == ONVM_MOVE_BUFFER ? "buffer" : "reprocess");
	mgr_ctl_wake();
	return slot;
}

static void
move_over(uint32_t slot, uint64_t now)
{
	const struct onvm_move *mv = &mgr.shm->moves[slot];

	priv[slot].t_over = now;
	if (priv[slot].into) {
		__atomic_sub_fetch(&mgr_move_into[mv->dst], 1, __ATOMIC_RELEASE);
		priv[slot].into = false;
	}
	if (mv->state == ONVM_MOVE_DONE) {
		moves_done++;
		MGR_LOG(INFO,
			"move %u done: %" PRIu64 " flows in %" PRIu64 " us (export %" PRIu64
			" us, import %" PRIu64 " us, flip %" PRIu64 " us), %" PRIu64
			" copies, %" PRIu64 " reprocessed",
			slot, mv->exported_flows, (mv->t_done - mv->t_start) / 1000,
			(mv->t_exported - mv->t_start) / 1000,
			mv->t_imported > mv->t_exported ? (mv->t_imported - mv->t_exported) / 1000 : 0,
			(mv->t_flip - mv->t_start) / 1000, mv->copies, mv->reprocessed);
	} else {
		moves_failed[mv->fail < ONVM_MOVE_FAIL_REASON_MAX ? mv->fail : 0]++;
		if (mv->xnode == ONVM_MOVE_FROM_PEER)
			MGR_LOG(WARNING, "move %u failed (%s): the other node's src keeps the flows",
				slot, mgr_move_fail_str(mv->fail));
		else
			MGR_LOG(WARNING, "move %u failed (%s): instance %u keeps its flows", slot,
				mgr_move_fail_str(mv->fail), mv->src);
	}
}

void
mgr_move_mirror_close(uint32_t slot)
{
	MGR_ASSERT_CTL_LOCKED();
	if (priv[slot].t_over == 0)
		move_over(slot, mgr_now_ns());
}

/* dst has the state: the moved buckets go to it from now on. */
static void
flip(uint32_t slot, uint64_t now)
{
	struct onvm_move *mv = &mgr.shm->moves[slot];
	uint32_t st = ONVM_MOVE_IMPORTED;
	const bool peer = mv->xnode == ONVM_MOVE_TO_PEER;
	int rank = peer ? ONVM_RANK_PEER : mgr_service_rank(mgr.shm, mv->service, mv->dst);

	if (rank < 0) {
		mgr_move_fail(slot, ONVM_MOVE_FAIL_DST_GONE);
		return;
	}
	/* (dst may have given up meanwhile: then it is FAILED) */
	if (!__atomic_compare_exchange_n(&mv->state, &st, ONVM_MOVE_FLIPPING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	mv->t_flip = now;
	if (peer) {
		/* (read by the units once the table below is published) */
		mgr.shm->services[mv->service].peer_port = mv->peer_port;
		mgr.shm->services[mv->service].peer_inst = mv->peer_inst;
	}
	mgr_service_move_buckets(mv->service, mv->buckets, (uint16_t)rank);
	/* No unit routes a moved bucket to src any more: the hook is idle,
	 * and the copies are all made. */
	unhook(slot);
	__atomic_store_n(&mv->state, ONVM_MOVE_FLIPPED, __ATOMIC_RELEASE);
}

int
mgr_move_ctl(void)
{
	uint64_t now = mgr_now_ns();
	int live = 0, wait_ms = 1000;

	MGR_ASSERT_CTL_LOCKED();
	if (!__atomic_load_n(&mgr_moves_any, __ATOMIC_ACQUIRE))
		return 1000;
	/* Moves with another node: its messages, the mirrors here. */
	if (mgr_peer_any)
		wait_ms = mgr_move_peer_ctl();
	for (uint32_t i = 0; i < ONVM_MAX_MOVES; i++) {
		struct onvm_move *mv = &mgr.shm->moves[i];
		uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);
		const bool peer = mv->xnode == ONVM_MOVE_TO_PEER;
		bool src_ok, dst_ok;

		if (st == ONVM_MOVE_FREE || (priv[i].t_over != 0 && !priv[i].hooked) ||
		    mv->xnode == ONVM_MOVE_FROM_PEER) /* (move_peer_ctl.c) */
			continue;
		src_ok = nf_alive(mv->src, priv[i].src_gen);
		dst_ok = peer ? mgr_move_peer_alive(i) : nf_alive(mv->dst, priv[i].dst_gen);
		/* Across nodes, the hook and START once dst's node is ready
		 * for the copies (its IN marker in). */
		if (peer && st == ONVM_MOVE_STARTED && !priv[i].peer_started && src_ok &&
		    mgr_move_peer_open(i)) {
			priv[i].peer_started = true;
			(void)hook_and_start(i);
			st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);
		}
		/* dst waits for src no more (its log entries, its END) */
		if (!src_ok)
			__atomic_store_n(&mv->src_gone, 1, __ATOMIC_RELEASE);
		if (st < ONVM_MOVE_FLIPPING) {
			/* A local promotion of either loses the process-local
			 * part of the move: before the flip, it fails. */
			if (!dst_ok || (!peer && mgr.shm->nfs[mv->dst].failovers != priv[i].dst_fo))
				mgr_move_fail(i, peer ? ONVM_MOVE_FAIL_PEER_LOST
						      : ONVM_MOVE_FAIL_DST_GONE);
			else if (!src_ok)
				mgr_move_fail(i, ONVM_MOVE_FAIL_SRC_GONE);
			else if (mgr.shm->nfs[mv->src].failovers != priv[i].src_fo)
				/* (its standby holds the flows: dst frees its copy) */
				mgr_move_fail(i, ONVM_MOVE_FAIL_SRC_FAILOVER);
			else if (st == ONVM_MOVE_IMPORTED) /* (late or not: dst has the state) */
				flip(i, now);
			else if (now - mv->t_start > MOVE_TIMEOUT_NS)
				mgr_move_fail(i, ONVM_MOVE_FAIL_TIMEOUT);
			st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);
		} else if (st == ONVM_MOVE_FLIPPED && src_ok &&
			   mgr.shm->nfs[mv->src].failovers != priv[i].src_fo) {
			/* src's standby took over after the flip: if the END
			 * batch did not commit, the standby still holds the
			 * buckets' entries -- END again, for it to free them */
			priv[i].src_fo = mgr.shm->nfs[mv->src].failovers;
			/* The dead process's uncommitted batch is gone: tagged
			 * packets in it will never get their log entries (dst
			 * waits for none any more), and copies of them dst
			 * reprocessed count packets never delivered: lossy. */
			__atomic_store_n(&mv->src_gone, 1, __ATOMIC_RELEASE);
			__atomic_store_n(&mv->lossy, 1, __ATOMIC_RELEASE);
			if (!__atomic_load_n(&mv->src_freed, __ATOMIC_ACQUIRE)) {
				priv[i].end_sent = false;
				__atomic_store_n(&mv->end_out, 0, __ATOMIC_RELEASE);
			}
		}
		if (st == ONVM_MOVE_FAILED) {
			unhook(i);
			if (priv[i].t_over == 0)
				move_over(i, now);
			continue;
		}
		live++;
		if (st != ONVM_MOVE_FLIPPED)
			continue;
		/* 4. END behind src's last packet of the buckets. */
		if (!priv[i].end_sent && src_ok) {
			if (inject(mv->src, i, ONVM_MOVE_MK_END, false) == 0)
				priv[i].end_sent = true;
		}
		/* dst's standby took over after the flip: copies in the dead
		 * batch are gone without being counted (dst_seen) -- no longer
		 * waited for; and nothing waits past FLIP_LINGER_NS */
		if ((!peer && mgr.shm->nfs[mv->dst].failovers != priv[i].dst_fo) ||
		    now - mv->t_flip > FLIP_LINGER_NS) {
			if (!peer)
				priv[i].dst_fo = mgr.shm->nfs[mv->dst].failovers;
			if (!priv[i].copies_given_up) {
				priv[i].copies_given_up = true;
				__atomic_store_n(&mv->lossy, 1, __ATOMIC_RELEASE);
			}
		}
		/* 5. src freed them (or is gone: nothing left to free), and dst
		 * had every copy (or is gone: its flows are lost with it). */
		if ((!src_ok ||
		     (__atomic_load_n(&mv->end_out, __ATOMIC_ACQUIRE) &&
		      __atomic_load_n(&mv->src_freed, __ATOMIC_ACQUIRE))) &&
		    (!dst_ok || priv[i].copies_given_up ||
		     __atomic_load_n(&mv->dst_seen, __ATOMIC_ACQUIRE) +
					__atomic_load_n(&mv->copies_lost, __ATOMIC_ACQUIRE) >=
				    __atomic_load_n(&mv->copies, __ATOMIC_ACQUIRE))) {
			mv->t_done = now;
			__atomic_store_n(&mv->state, ONVM_MOVE_DONE, __ATOMIC_RELEASE);
			move_over(i, now);
			live--;
		}
	}
	return live > 0 ? 1 : wait_ms;
}

/* ---- telemetry ---- */

int
mgr_tel_words(const char *params, char *buf, size_t len)
{
	if (params == NULL || strlen(params) >= len)
		return -EINVAL;
	snprintf(buf, len, "%s", params);
	for (char *p = buf; *p != '\0'; p++)
		if (*p == ',')
			*p = ' ';
	return 0;
}

int
mgr_move_method(const char *s, uint8_t *method)
{
	if (strcmp(s, "reprocess") == 0)
		*method = ONVM_MOVE_REPROCESS;
	else if (strcmp(s, "buffer") == 0)
		*method = ONVM_MOVE_BUFFER;
	else
		return -EINVAL;
	return 0;
}

/* "A.B.C.D:PORT:E.F.G.H:PORT:PROTO" -- one flow (either direction) -- as
 * the bucket it is routed by; -1 if it is not one. */
static int
parse_flow(const char *s)
{
	char buf[64], *f[5], *save = NULL, *end;
	struct onvm_flow_key k = {0};
	struct in_addr a, b;
	unsigned long sp, dp, pr;
	int n = 0;

	if (strlen(s) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok_r(buf, ":", &save); t != NULL; t = strtok_r(NULL, ":", &save)) {
		if (n == 5)
			return -1;
		f[n++] = t;
	}
	if (n != 5 || inet_pton(AF_INET, f[0], &a) != 1 || inet_pton(AF_INET, f[2], &b) != 1)
		return -1;
	sp = strtoul(f[1], &end, 10);
	if (*end != '\0' || sp > UINT16_MAX)
		return -1;
	dp = strtoul(f[3], &end, 10);
	if (*end != '\0' || dp > UINT16_MAX)
		return -1;
	pr = strtoul(f[4], &end, 10);
	if (*end != '\0' || pr > UINT8_MAX)
		return -1;
	/* (the parser's: host order, as onvm_pkt_parse fills it) */
	k.src_ip = ntohl(a.s_addr);
	k.dst_ip = ntohl(b.s_addr);
	k.sport = (uint16_t)sp;
	k.dport = (uint16_t)dp;
	k.proto = (uint8_t)pr;
	return (int)ONVM_FLOW_BUCKET(onvm_flow_key_hash(&k));
}

/* "all", "half" (every other bucket), "b:LO-HI", "frac:F" (a share F,
 * spread evenly over the buckets), or "flow:A.B.C.D:P:E.F.G.H:Q:PROTO"
 * (the bucket of one flow: it and the others hashed there), as a bitmap. */
static int
parse_space(const char *s, uint64_t *out)
{
	unsigned int lo, hi;
	double f;
	char tail;

	memset(out, 0, ONVM_FLOW_BUCKETS / 8);
	if (strcmp(s, "all") == 0) {
		memset(out, 0xff, ONVM_FLOW_BUCKETS / 8);
		return 0;
	}
	if (strcmp(s, "half") == 0) {
		for (uint32_t b = 0; b < ONVM_FLOW_BUCKETS; b += 2)
			out[b / 64] |= UINT64_C(1) << (b % 64);
		return 0;
	}
	if (sscanf(s, "b:%u-%u%c", &lo, &hi, &tail) == 2 && lo <= hi && hi < ONVM_FLOW_BUCKETS) {
		for (uint32_t b = lo; b <= hi; b++)
			out[b / 64] |= UINT64_C(1) << (b % 64);
		return 0;
	}
	if (strncmp(s, "flow:", 5) == 0) {
		int b = parse_flow(s + 5);

		if (b < 0)
			return -EINVAL;
		out[b / 64] |= UINT64_C(1) << (b % 64);
		return 0;
	}
	if (sscanf(s, "frac:%lf%c", &f, &tail) == 1 && f > 0 && f <= 1) {
		double acc = 0;

		for (uint32_t b = 0; b < ONVM_FLOW_BUCKETS; b++) {
			acc += f;
			if (acc >= 1) {
				acc -= 1;
				out[b / 64] |= UINT64_C(1) << (b % 64);
			}
		}
		return 0;
	}
	return -EINVAL;
}

/* An instance id, or PORT:ID -- instance ID of the node behind port PORT. */
static int
parse_dst(const char *s, struct mgr_move_req *req)
{
	unsigned long a, b;
	char *end;

	a = strtoul(s, &end, 10);
	if (end == s)
		return -EINVAL;
	if (*end == '\0') {
		if (a >= ONVM_MAX_NFS)
			return -EINVAL;
		req->dst = (uint16_t)a;
		return 0;
	}
	if (*end != ':' || a >= ONVM_MAX_PORTS)
		return -EINVAL;
	s = end + 1;
	b = strtoul(s, &end, 10);
	if (end == s || *end != '\0' || b >= ONVM_MAX_NFS)
		return -EINVAL;
	req->to_peer = true;
	req->dst = ONVM_INST_NONE;
	req->peer_port = (uint16_t)a;
	req->peer_inst = (uint16_t)b;
	return 0;
}

/* /onvm/move,SERVICE,SRC,DST[,SPACE[,METHOD]] (DST: ID or PORT:ID) */
static int
tel_move(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct mgr_move_req req = {.method = ONVM_MOVE_REPROCESS};
	char buf[128], space[48] = "all", method[16] = "reprocess", err[160], dst[24];
	unsigned int svc, src;
	uint32_t gen = 0, nb = 0;
	int n, slot, first = -1;

	(void)cmd;
	if (mgr_tel_words(params, buf, sizeof(buf)) < 0)
		return -EINVAL;
	n = sscanf(buf, "%u %u %23s %47s %15s", &svc, &src, dst, space, method);
	if (n < 3 || svc >= ONVM_MAX_SERVICES || src >= ONVM_MAX_NFS || parse_dst(dst, &req) < 0)
		return -EINVAL;
	if (parse_space(space, req.buckets) < 0 || mgr_move_method(method, &req.method) < 0)
		return -EINVAL;
	req.service = (uint16_t)svc;
	req.src = (uint16_t)src;
	mgr_ctl_lock();
	slot = mgr_move_start(&req, err, sizeof(err));
	if (slot >= 0) { /* (under the lock: the slot may be reused after it) */
		gen = mgr.shm->moves[slot].gen;
		nb = mgr.shm->moves[slot].n_buckets;
		for (uint32_t b = 0; b < ONVM_FLOW_BUCKETS && first < 0; b++)
			if (onvm_bucket_in(mgr.shm->moves[slot].buckets, b))
				first = (int)b;
	}
	mgr_ctl_unlock();
	rte_tel_data_start_dict(d);
	if (slot < 0) {
		rte_tel_data_add_dict_string(d, "error", err);
		return 0;
	}
	rte_tel_data_add_dict_int(d, "slot", slot);
	rte_tel_data_add_dict_uint(d, "gen", gen);
	rte_tel_data_add_dict_uint(d, "buckets", nb);
	rte_tel_data_add_dict_int(d, "first_bucket", first);
	return 0;
}

static uint64_t
since(uint64_t t, uint64_t t0)
{
	return t >= t0 && t != 0 ? (t - t0) / 1000 : 0;
}

/* /onvm/unpeer,SERVICE: the service's buckets at its instance on another
 * node come back here, without their state -- that instance is gone (its
 * packets are dropped there: handoff_no_instance) or should be no more. */
static int
tel_unpeer(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char *end;
	unsigned long svc;
	int back = -1;

	(void)cmd;
	if (params == NULL || *params == '\0')
		return -EINVAL;
	svc = strtoul(params, &end, 10);
	if (*end != '\0' || svc == 0 || svc >= ONVM_MAX_SERVICES)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	mgr_ctl_lock();
	/* (not while a move there is under way: it ends first) */
	for (uint32_t i = 0; i < ONVM_MAX_MOVES; i++) {
		const struct onvm_move *mv = &mgr.shm->moves[i];
		uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);

		if (mv->xnode == ONVM_MOVE_TO_PEER && mv->service == svc &&
		    st != ONVM_MOVE_FREE && st != ONVM_MOVE_DONE && st != ONVM_MOVE_FAILED)
			goto busy;
	}
	back = mgr_service_unpeer((uint16_t)svc);
	if (back > 0)
		MGR_LOG(WARNING, "service %lu: %d buckets back from the instance on another node, "
			"without their state", svc, back);
busy:
	mgr_ctl_unlock();
	if (back < 0)
		rte_tel_data_add_dict_string(d, "error", "a move of the service to another "
					     "node is under way");
	else
		rte_tel_data_add_dict_int(d, "buckets", back);
	return 0;
}

/* /onvm/moves[,SLOT]: totals, or one move's figures. */
static int
tel_moves(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	rte_tel_data_start_dict(d);
	if (params == NULL || *params == '\0') {
		uint64_t failed = 0;

		for (int r = 0; r < ONVM_MOVE_FAIL_REASON_MAX; r++)
			failed += moves_failed[r];
		rte_tel_data_add_dict_uint(d, "started", moves_started);
		rte_tel_data_add_dict_uint(d, "done", moves_done);
		rte_tel_data_add_dict_uint(d, "failed", failed);
		for (int r = 1; r < ONVM_MOVE_FAIL_REASON_MAX; r++)
			if (moves_failed[r] > 0)
				rte_tel_data_add_dict_uint(d, fail_names[r], moves_failed[r]);
		return 0;
	}
	char *end;
	unsigned long slot = strtoul(params, &end, 10);
	const struct onvm_move *mv;

	if (*end != '\0' || slot >= ONVM_MAX_MOVES)
		return -EINVAL;
	mv = &mgr.shm->moves[slot];
	rte_tel_data_add_dict_string(d, "state",
				     mgr_move_state_str(__atomic_load_n(&mv->state, __ATOMIC_ACQUIRE)));
	rte_tel_data_add_dict_string(d, "fail", mgr_move_fail_str(mv->fail));
	rte_tel_data_add_dict_uint(d, "gen", mv->gen);
	rte_tel_data_add_dict_uint(d, "service", mv->service);
	rte_tel_data_add_dict_uint(d, "src", mv->src);
	rte_tel_data_add_dict_uint(d, "dst", mv->dst);
	rte_tel_data_add_dict_string(d, "node", mv->xnode == ONVM_MOVE_TO_PEER ? "to_peer"
					       : mv->xnode == ONVM_MOVE_FROM_PEER ? "from_peer"
										  : "local");
	if (mv->xnode != ONVM_MOVE_LOCAL) {
		rte_tel_data_add_dict_uint(d, "peer_port", mv->peer_port);
		rte_tel_data_add_dict_uint(d, "peer_inst", mv->peer_inst);
		rte_tel_data_add_dict_uint(d, "peer_slot", mv->peer_slot);
	}
	rte_tel_data_add_dict_string(d, "method",
				     mv->method == ONVM_MOVE_BUFFER ? "buffer" : "reprocess");
	rte_tel_data_add_dict_uint(d, "buckets", mv->n_buckets);
	rte_tel_data_add_dict_uint(d, "tagged", mv->seq);
	rte_tel_data_add_dict_uint(d, "copies", mv->copies);
	rte_tel_data_add_dict_uint(d, "copies_lost", mv->copies_lost);
	rte_tel_data_add_dict_uint(d, "lossy", mv->lossy);
	rte_tel_data_add_dict_uint(d, "src_gone", mv->src_gone);
	rte_tel_data_add_dict_uint(d, "exported_flows", mv->exported_flows);
	rte_tel_data_add_dict_uint(d, "exported_bytes", mv->exported_bytes);
	rte_tel_data_add_dict_uint(d, "src_flows", mv->src_flows);
	rte_tel_data_add_dict_uint(d, "imported_flows", mv->imported_flows);
	rte_tel_data_add_dict_uint(d, "freed_flows", mv->freed_flows);
	rte_tel_data_add_dict_uint(d, "dst_seen", mv->dst_seen);
	rte_tel_data_add_dict_uint(d, "reprocessed", mv->reprocessed);
	rte_tel_data_add_dict_uint(d, "skipped_included", mv->skipped_included);
	rte_tel_data_add_dict_uint(d, "nd_replayed", mv->nd_replayed);
	rte_tel_data_add_dict_uint(d, "nd_short", mv->nd_short);
	rte_tel_data_add_dict_uint(d, "dst_dropped", mv->dst_dropped);
	rte_tel_data_add_dict_uint(d, "dst_wait_us", mv->dst_waits_ns / 1000);
	rte_tel_data_add_dict_uint(d, "export_us", since(mv->t_exported, mv->t_start));
	rte_tel_data_add_dict_uint(d, "import_us", since(mv->t_imported, mv->t_start));
	rte_tel_data_add_dict_uint(d, "flip_us", since(mv->t_flip, mv->t_start));
	rte_tel_data_add_dict_uint(d, "done_us", since(mv->t_done, mv->t_start));
	rte_tel_data_add_dict_uint(d, "t_start_ns", mv->t_start); /* CLOCK_MONOTONIC */
	return 0;
}

int
mgr_move_telemetry_init(void)
{
	if (mgr_tel_register(
		    "/onvm/move", tel_move,
		    "Move flows. Params: SERVICE,SRC,DST|PORT:ID"
		    "[,all|half|b:LO-HI|frac:F|flow:IP:P:IP:P:PROTO[,reprocess|buffer]]") != 0 ||
	    mgr_tel_register("/onvm/moves", tel_moves,
				       "Flow migration totals; with a slot: that move.") != 0 ||
	    mgr_tel_register("/onvm/unpeer", tel_unpeer,
				       "SERVICE: its buckets at another node's instance back "
				       "here, without their state.") != 0)
		return -1;
	return 0;
}
