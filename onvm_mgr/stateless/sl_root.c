/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * sl_root.c -- a stateless chain's root, on the RX unit (design:
 * docs/design/stateless.md).
 *
 * Every packet entering the chain is stamped with the chain's clock and a
 * copy of it logged; every `flush_packets` packets, or `flush_us` after an
 * epoch's first packet, a marker goes in after them, its id naming the
 * epoch it closes, and its place in the log is recorded.  The log is
 * trimmed up to a marker once the chain committed its epoch (every NF
 * closed it in the store): from then on the store holds what those
 * packets did.  After a failure the fresh NFs load the state at the
 * recovery point E, and the root replays the log after marker E -- the
 * original packets, with their timestamps -- before any new input.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dataplane/dataplane.h"
#include "dataplane/router.h"
#include "onvm_pkt_parse.h"
#include "sl_priv.h"

/* An epoch uncommitted this many flush_us after the last marker: nudged. */
#define SL_NUDGE_EPOCHS 8

/* Replayed per poll, at most: the rest on the next (the NFs' rings). */
#define SL_REPLAY_BURST 64
/* Ring slots a replay leaves for the markers that may follow it in a poll. */
#define SL_MARKER_SLOTS 2

bool mgr_sl_any;
uint8_t mgr_sl_service[ONVM_MAX_SERVICES];
uint8_t mgr_sl_in_port[ONVM_MAX_PORTS];
struct sl_chain mgr_sl[ONVM_MAX_CHAINS];

const struct onvm_nf_slot *
mgr_sl_step_slot(uint16_t ci, uint16_t k)
{
	const struct onvm_service *svc =
		&mgr.shm->services[mgr.shm->chains[ci].services[k] % ONVM_MAX_SERVICES];
	uint32_t a = __atomic_load_n(&svc->active, __ATOMIC_ACQUIRE) & 1;
	uint16_t inst;

	if (svc->n[a] == 0 || (inst = svc->inst[a][0]) == ONVM_INST_NONE || inst >= ONVM_MAX_NFS)
		return NULL;
	return &mgr.shm->nfs[inst];
}


/* Every NF of the chain warmed up: markers may go, numbered above what
 * the store holds (its recovery point may come from an earlier run). */
static bool
chain_started(struct sl_chain *c)
{
	uint64_t top = 0;

	if (c->started)
		return true;
	for (uint16_t k = 0; k < mgr.shm->chains[c->id].len; k++) {
		const struct onvm_nf_slot *s = mgr_sl_step_slot(c->id, k);

		if (s == NULL || __atomic_load_n(&s->store.state, __ATOMIC_ACQUIRE) != ONVM_STORE_READY)
			return false;
		top = RTE_MAX(top, __atomic_load_n(&s->store_closed, __ATOMIC_ACQUIRE));
	}
	c->next_marker = RTE_MAX(c->next_marker, top + 1);
	c->started = true;
	return true;
}

/* Drop the log up to every marker at or below `cm`. */
static void
log_trim_to(struct sl_chain *c, uint64_t cm)
{
	while (c->lmk.n > 0 && c->lmk_id[c->lmk.head] <= cm) {
		uint64_t upto = c->lmk_pos[c->lmk.head];

		while (c->log.abs_head < upto && c->log.n > 0) {
			rte_pktmbuf_free(c->log_m[c->log.head]);
			c->log.head = (c->log.head + 1) % c->log.cap;
			c->log.n--;
			c->log.abs_head++;
		}
		c->lmk.head = (c->lmk.head + 1) % c->lmk.cap;
		c->lmk.n--;
		c->lmk.abs_head++;
	}
}

/* ... up to every marker the chain has committed (the exit released). */
static void
log_trim(struct sl_chain *c)
{
	log_trim_to(c, __atomic_load_n(&mgr.shm->chains[c->id].sl_committed, __ATOMIC_ACQUIRE));
}

static inline uint64_t
log_tail(const struct sl_chain *c)
{
	return c->log.abs_head + c->log.n;
}

/* Room a first NF's ring must have for more of the chain's input: a
 * replay's burst twice (the other for the markers and input meanwhile),
 * or half of a ring smaller than that -- and at least an RX burst and
 * its markers, which pass on one look at the ring before it is flushed
 * (rings hold 63 packets at least: config_node.c). */
static inline unsigned int
ring_want(const struct onvm_nf_slot *nf)
{
	return RTE_MAX(RTE_MIN(2u * SL_REPLAY_BURST, rte_ring_get_capacity(nf->rx_ring) / 2),
		       ONVM_BURST + 2u);
}

static inline bool
ring_room(const struct onvm_nf_slot *nf)
{
	return rte_ring_free_count(nf->rx_ring) >= ring_want(nf);
}

int
mgr_sl_ingress(struct rte_mbuf *m, struct onvm_pkt_meta *meta, const struct onvm_nf_slot *to)
{
	const bool routed = to != NULL;
	struct sl_chain *c;
	struct rte_mbuf *copy;
	bool held;

	if (meta->chain_id >= ONVM_MAX_CHAINS || !(c = &mgr_sl[meta->chain_id])->on)
		return MGR_SL_PASS;
	/* Only the chain's ingress is its root: input steered in from another
	 * port (a flow rule, the default chain) would reach its NFs while the
	 * ingress is held for a recovery, unlogged and never replayed. */
	if (unlikely(meta->in_port != mgr.cfg.chains[meta->chain_id].ingress_port)) {
		c->foreign_in++;
		return MGR_SL_DROP;
	}
	/* Behind a predecessor, what the state loaded holds (at or below the
	 * recovery point's timestamp) comes again only as the predecessor's
	 * replay: dropped, whenever it comes. */
	if (unlikely(c->peer_role != 0) && meta->ts <= c->skip_ts) {
		c->replay_covered++;
		return MGR_SL_DROP;
	}
	/* While the chain recovers (or its first NF is gone and it is about
	 * to) the log is the buffer: the input goes in it, and the replay
	 * sends it on, in order, after what came before. */
	held = SL_PHASE(sl_state(c)) != SL_RUNNING || !routed || c->backlog ||
	       /* behind a predecessor: its port is read from the start (its
	        * control frames), the input held until the NFs loaded */
	       (c->peer_role != 0 && !c->started);
	/* The first NF's ring short of room (its NFs behind a burst, or still
	 * taking a spare's replay in): a full ring would lose the packet, and
	 * the log keeps a copy anyway -- it waits there, and the log is sent
	 * on from here, in order, before any later input, as the ring drains. */
	if (!held && unlikely(!ring_room(to))) {
		c->cursor = log_tail(c);
		c->backlog = true;
		c->backlog_ring = true;
		c->ring_waits++;
		held = true;
	}
	if (c->log.n == c->log.cap) {
		/* (not while it recovers or first starts: the replay needs the
		 * log; a backlog's committed markers are all behind its cursor) */
		if (!held || (c->backlog && c->started && SL_PHASE(sl_state(c)) == SL_RUNNING))
			log_trim(c);
		if (c->log.n == c->log.cap) {
			c->log_full++; /* dropped at the entry: never unprotected */
			mgr_sl_peer_lacks(c, meta->ts);
			return MGR_SL_DROP;
		}
	}
	/* (behind a predecessor, its stamps are the clock: a marker then
	 * names the last of its timestamps before it -- taken only once the
	 * frame is in the log: a marker must never name one it dropped) */
	if (c->peer_role == 0)
		meta->ts = ++c->clock;
	meta->chain_run = c->rx_run;
	copy = rte_pktmbuf_copy(m, mgr.pool, 0, UINT32_MAX);
	if (copy == NULL) {
		c->log_copy_fail++;
		mgr_sl_peer_lacks(c, meta->ts);
		return MGR_SL_DROP;
	}
	if (c->peer_role != 0)
		c->clock = meta->ts;
	c->log_m[(c->log.head + c->log.n) % c->log.cap] = copy;
	c->log_ts[(c->log.head + c->log.n) % c->log.cap] = meta->ts;
	c->log.n++;
	c->packets_in++;
	if (held) {
		if (!(c->backlog && c->backlog_ring))
			c->logged_held++; /* (a ring wait's: ring_waits) */
		return MGR_SL_LOGGED;
	}
	if (c->since++ == 0)
		c->first_tsc = rte_get_tsc_cycles();
	return MGR_SL_PASS;
}

/* A marker after the log's entries before `log_pos`: at the tail (the
 * input as it comes) or at a replay's cursor.  Its timestamp is the last
 * packet's before it -- the newest stamped, or the last the replay passed
 * (input held meanwhile is stamped too, and is after the marker): a
 * predecessor's log is trimmed up to it, and a spare skips up to it. */
static void
inject(struct mgr_dp_ctx *ctx, struct sl_chain *c, uint64_t log_pos)
{
	struct rte_mbuf *m;
	struct onvm_marker mk = {.cut_id = c->next_marker};
	struct onvm_pkt_meta *meta;
	void *p;

	if (c->lmk.n == c->lmk.cap) {
		c->markers_failed++; /* the log's marker records are full: later */
		return;
	}
	m = rte_pktmbuf_alloc(mgr.pool);
	if (m == NULL || (p = rte_pktmbuf_append(m, sizeof(mk))) == NULL) {
		rte_pktmbuf_free(m);
		c->markers_failed++; /* the next poll tries again */
		return;
	}
	memcpy(p, &mk, sizeof(mk));
	meta = onvm_pkt_meta(m, mgr.dyn_off);
	memset(meta, 0, sizeof(*meta));
	meta->chain_id = c->id;
	meta->chain_run = c->rx_run;
	meta->ts = log_pos == log_tail(c) ? c->clock : c->replay_ts;
	meta->flags = ONVM_PKT_F_MARKER;
	meta->action = ONVM_ACTION_NEXT;
	meta->egress_port = ONVM_PORT_UNSET;
	c->lmk_id[(c->lmk.head + c->lmk.n) % c->lmk.cap] = c->next_marker;
	c->lmk_pos[(c->lmk.head + c->lmk.n) % c->lmk.cap] = log_pos;
	c->lmk.n++;
	c->next_marker++;
	c->since = 0;
	c->markers_in++;
	c->last_inject_tsc = rte_get_tsc_cycles();
	mgr_marker_fanout(ctx, m, 0);
}

bool
mgr_sl_marker_due_now(const struct onvm_pkt_meta *meta)
{
	const struct sl_chain *c;

	return meta->chain_id < ONVM_MAX_CHAINS && (c = &mgr_sl[meta->chain_id])->on &&
	       c->started && c->since >= mgr.shm->chains[meta->chain_id].store.flush_pkts;
}

void
mgr_sl_marker_now(struct mgr_dp_ctx *ctx, uint16_t chain)
{
	struct sl_chain *c = &mgr_sl[chain];

	/* (never while a backlog drains: input is held then, and no packet
	 * passed makes a marker due) */
	inject(ctx, c, SL_PHASE(sl_state(c)) == SL_REPLAY || c->backlog ? c->cursor : log_tail(c));
}

bool
mgr_sl_port_held(uint16_t port)
{
	/* (held until its NFs first loaded their state: a recovery keeps
	 * reading it, into the log) */
	uint8_t ci = mgr_sl_in_port[port % ONVM_MAX_PORTS];
	const struct sl_chain *c;

	return ci != 0 && !(c = &mgr_sl[ci - 1])->started && c->peer_role == 0 &&
	       SL_PHASE(sl_state(c)) == SL_RUNNING;
}

/* A recovery: the log from its head -- right after the newest marker the
 * exit released, the recovery point -- is replayed.  Its marker records
 * are the dead run's: forgotten (the replayed epochs close anew, under new
 * ids, as the replay goes). */
static void
replay_begin(struct sl_chain *c, uint8_t run)
{
	/* (the state loaded: what it holds goes, the rest is replayed) */
	log_trim_to(c, c->replay_epoch);
	c->lmk.abs_head += c->lmk.n;
	c->lmk.n = 0;
	c->cursor = c->log.abs_head;
	c->since = 0;
	c->started = false; /* numbered above what the fresh NFs loaded */
	c->rx_run = run;
	c->replay_runs++;
}

/* Send the next piece of the log from the cursor on (a recovery's replay,
 * or a backlog: `recovery` false); true when it is done. */
static bool
replay_some(struct mgr_dp_ctx *ctx, struct sl_chain *c, bool recovery)
{
	unsigned int k = 0;

	if (c->cursor >= log_tail(c))
		return true;
	/* (its first step with no instance yet: routed nowhere, lost) */
	if (mgr_sl_step_slot(c->id, 0) == NULL)
		return false;
	while (k < SL_REPLAY_BURST && c->cursor < log_tail(c)) {
		uint32_t at = sl_ring_at(&c->log, c->cursor);
		struct rte_mbuf *m;
		struct onvm_pkt_meta *meta;
		struct onvm_pkt_info pi;
		enum onvm_parse_reason pr;
		struct mgr_dest d;
		uint16_t port;

		if (c->log_ts[at] <= c->skip_ts) {
			c->cursor++;
			c->replay_covered++; /* the loaded state holds it */
			continue;
		}
		m = rte_pktmbuf_copy(c->log_m[at], mgr.pool, 0, UINT32_MAX);
		if (m == NULL)
			return false; /* the pool is short: on the next poll */
		meta = onvm_pkt_meta(m, mgr.dyn_off);
		port = meta->in_port;
		pr = onvm_pkt_parse(m, &pi);
		mgr_route_ingress(mgr.shm, meta, port, pr, &pi, &d);
		if (meta->chain_id != c->id) {
			c->cursor++;
			c->replay_rerouted++; /* the rules changed: not this chain's now */
			rte_pktmbuf_free(m);
			continue;
		}
		/* As fast as the NF it goes to takes it (the instance its flow
		 * hashes to): a packet lost on a full ring would be lost for
		 * good -- room for what this unit holds for it unflushed, what
		 * this poll sent already (to any NF: an upper bound) and the
		 * markers, else the rest on the next poll. */
		if (d.kind == MGR_DEST_NF &&
		    rte_ring_free_count(mgr.shm->nfs[d.id].rx_ring) <
			    ctx->nf_buf[d.id].n + k + 1u + SL_MARKER_SLOTS) {
			rte_pktmbuf_free(m);
			return false;
		}
		c->replay_ts = c->log_ts[at]; /* (a marker at the cursor follows a dispatch) */
		meta->ts = c->log_ts[at];
		if (recovery)
			meta->flags |= ONVM_PKT_F_REPLAY;
		meta->chain_run = c->rx_run;
		c->cursor++;
		if (recovery || !c->backlog_ring)
			c->replayed++; /* (a ring wait's input is no replay) */
		mgr_dp_dispatch(ctx, m, &d);
		k++;
		if (c->since++ == 0)
			c->first_tsc = rte_get_tsc_cycles();
		if (c->since >= mgr.shm->chains[c->id].store.flush_pkts) {
			inject(ctx, c, c->cursor);
			k++; /* (on the first NFs' rings too) */
		}
	}
	return c->cursor >= log_tail(c);
}

/* Behind a predecessor, its NFs' first load (the first start, or a
 * spare's takeover -- in a recovery's replay if they were relaunched
 * while held): what is at or below the recovery point's timestamp is in
 * the state from now on.  At the first start (`running`), the log held
 * the input: sent on now. */
static void
peer_loaded(struct sl_chain *c, bool running)
{
	const struct onvm_nf_slot *s;

	if (likely(c->peer_role == 0) || c->peer_started ||
	    (s = mgr_sl_step_slot(c->id, 0)) == NULL)
		return;
	c->peer_started = true;
	/* (atomic: the TX unit puts it in a primary's HEARTBEATs) */
	__atomic_store_n(&c->skip_ts, s->store.recovered_ts, __ATOMIC_RELAXED);
	if (running) {
		c->cursor = c->log.abs_head;
		c->backlog = true;
		c->backlog_ring = false;
	}
}

int
mgr_sl_rx(struct mgr_dp_ctx *ctx)
{
	uint64_t now = 0;
	int n = 0;

	for (uint16_t ci = 0; ci < ONVM_MAX_CHAINS; ci++) {
		struct sl_chain *c = &mgr_sl[ci];
		uint32_t st;

		if (!c->on)
			continue;
		if (unlikely(c->peer_role != 0))
			mgr_sl_peer_rx(ctx, c, mgr_now_ns());
		st = sl_state(c);
		if (sl_recovering(st))
			continue;
		if (SL_PHASE(st) == SL_REPLAY) {
			if (c->rx_run != SL_RUN(st))
				replay_begin(c, SL_RUN(st));
			/* Not before the exit holds the new run's output, and the
			 * fresh NFs' warm-up numbered the markers. */
			if (__atomic_load_n(&c->tx_switched, __ATOMIC_ACQUIRE) != SL_RUN(st) ||
			    !chain_started(c))
				continue;
			peer_loaded(c, false);
			n++;
			if (replay_some(ctx, c, true)) {
				uint32_t want = st;

				if (c->since > 0)
					inject(ctx, c, c->cursor); /* the replay's last epoch */
				/* Only if the chain is still in this replay: another
				 * failure may have moved it on meanwhile. */
				__atomic_compare_exchange_n(&c->state, &want,
							    ((uint32_t)SL_RUN(st) << 8) | SL_RUNNING,
							    false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
			}
			continue;
		}
		log_trim(c);
		if (!chain_started(c))
			continue;
		peer_loaded(c, true);
		/* The log from the cursor on, before any new input: what a
		 * first start held, or what the first ring had no room for. */
		if (unlikely(c->backlog)) {
			n++;
			if (replay_some(ctx, c, false)) {
				/* (the first start's last epoch closed now; after
				 * a ring wait the input's own markers go on) */
				if (c->since > 0 && !c->backlog_ring)
					inject(ctx, c, c->cursor);
				c->backlog = false;
			}
			continue;
		}
		if (now == 0)
			now = rte_get_tsc_cycles();
		/* No input, but epochs not committed for a while: an update's
		 * close was lost (the store restarted empty, a marker dropped on
		 * a full ring).  An empty epoch's marker makes every NF close
		 * again, past them. */
		if (c->since == 0) {
			if (c->next_marker > 1 &&
			    __atomic_load_n(&mgr.shm->chains[ci].sl_committed, __ATOMIC_ACQUIRE) <
				    c->next_marker - 1 &&
			    now - c->last_inject_tsc >= SL_NUDGE_EPOCHS * c->flush_cycles) {
				c->nudges++;
				inject(ctx, c, log_tail(c));
				n++;
			}
			continue;
		}
		if (c->since >= mgr.shm->chains[ci].store.flush_pkts ||
		    now - c->first_tsc >= c->flush_cycles) {
			inject(ctx, c, log_tail(c));
			n++;
		}
	}
	return n;
}
