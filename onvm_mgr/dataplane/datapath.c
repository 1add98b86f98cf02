/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * datapath.c -- the RX and TX units.
 *
 * RX unit: ports -> classify -> first destination.
 * TX unit: NF TX rings -> the NF's action -> next destination; it is also the
 *          only caller of rte_eth_tx_burst, so ports need one TX queue no
 *          matter how units are spread over lcores.  Packets the RX unit
 *          sends straight out (chains without NFs) go through the port's TX
 *          ring to the TX unit.
 *
 * Both work in bursts and buffer per destination, flushing at the end of a
 * poll.  Every packet that does not reach a ring or a port is freed and
 * counted under a drop reason; nothing waits on a full ring.  Each unit owns
 * its counters (struct mgr_dp_ctx), so the hot path has no atomics.
 */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include "mgr.h"
#include "stateless/stateless.h"
#include "ftc/ftc.h"
#include "elastic/move.h"
#include "elastic/move_peer.h"

void
mgr_nf_wake(struct onvm_nf_slot *slot)
{
	__atomic_fetch_add(&slot->wake_seq, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &slot->wake_seq, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static inline bool
nf_accepts(const struct onvm_nf_slot *slot)
{
	uint32_t st = __atomic_load_n(&slot->status, __ATOMIC_ACQUIRE);

	return st == ONVM_NF_READY || st == ONVM_NF_RUNNING;
}

/* How long backpressure may hold a queue before it moves anyway.  Long
 * enough to span a scheduler time slice when NFs share a core (a few ms),
 * short enough that a hung NF costs its neighbours little. */
#define MGR_HOLD_MAX_US 20000

static inline uint64_t
hold_max_cycles(void)
{
	return MGR_HOLD_MAX_US * (rte_get_tsc_hz() / 1000000);
}

static void
flush_nf(struct mgr_dp_ctx *ctx, uint16_t id)
{
	struct mgr_dp_buf *b = &ctx->nf_buf[id];
	struct onvm_nf_slot *slot = &mgr.shm->nfs[id];
	unsigned int sent = 0;

	if (likely(nf_accepts(slot)))
		sent = rte_ring_mp_enqueue_burst(slot->rx_ring, (void **)b->pkts, b->n, NULL);
	if (unlikely(sent < b->n)) {
		enum mgr_drop_reason r = nf_accepts(slot) ? MGR_DROP_RING_FULL : MGR_DROP_NF_GONE;

		/* A marker among them is lost too: say so, and the TX unit
		 * asks for the next one at once (rsync_unit_state.c). */
		for (unsigned int i = sent; i < b->n; i++) {
			const struct onvm_pkt_meta *mm = onvm_pkt_meta(b->pkts[i], mgr.dyn_off);

			if (unlikely(mm->flags & ONVM_PKT_F_MARKER))
				mgr_marker_copy_dropped(b->pkts[i], id);
			else if (unlikely(ONVM_MOVE_TAG_IS(mm->ts)))
				mgr_move_lost(id, b->pkts[i]);
		}
		rte_pktmbuf_free_bulk(&b->pkts[sent], b->n - sent);
		ctx->drops[r] += b->n - sent;
		ctx->nf_enq_drop[id] += b->n - sent;
	}
	ctx->nf_enq[id] += sent;
	b->n = 0;
	if (sent > 0) {
		/* Pairs with the barrier in libnf's sleep_until_work(). */
		rte_smp_mb();
		if (__atomic_load_n(&slot->sleeping, __ATOMIC_RELAXED))
			mgr_nf_wake(slot);
	}
}

/*
 * A port that takes fewer packets than offered (a memif peer that has not
 * posted buffers yet, a full TX queue) keeps the rest in its buffer and is
 * retried on every poll while it makes no progress for at most
 * MGR_HOLD_MAX_US; meanwhile the NFs and the port ring feeding it are held
 * back (see mgr_tx_poll), so the overload turns into drops at the chain's
 * entry.  After the bound the held packets are dropped and counted (a dead or
 * stuck peer).
 */
static void
drop_port_buf(struct mgr_dp_ctx *ctx, struct mgr_dp_buf *b, uint16_t port)
{
	struct mgr_port_stats *ps = &mgr.port_stats[port];

	for (unsigned int i = 0; i < b->n; i++)
		ps->tx_bytes -= rte_pktmbuf_pkt_len(b->pkts[i]);
	rte_pktmbuf_free_bulk(b->pkts, b->n);
	ctx->drops[MGR_DROP_PORT_TX] += b->n;
	ps->tx_drop += b->n;
	b->n = 0;
}

/* The longest pause between two bursts a port took: one TSC read per burst. */
static inline void
note_tx_gap(struct mgr_port_stats *ps)
{
	uint64_t now = rte_rdtsc();

	if (unlikely(__atomic_load_n(&ps->tx_gap_reset, __ATOMIC_ACQUIRE))) {
		ps->tx_gap_max = 0;
		ps->tx_last_tsc = 0;
		__atomic_store_n(&ps->tx_gap_reset, 0, __ATOMIC_RELEASE);
	}
	if (ps->tx_last_tsc != 0 && now - ps->tx_last_tsc > ps->tx_gap_max)
		ps->tx_gap_max = now - ps->tx_last_tsc;
	ps->tx_last_tsc = now;
}

static void
flush_port(struct mgr_dp_ctx *ctx, uint16_t port)
{
	struct mgr_dp_buf *b = &ctx->port_buf[port];
	unsigned int sent;

	if (!ctx->direct_port_tx) {
		sent = rte_ring_mp_enqueue_burst(mgr.shm->ports[port].tx_ring, (void **)b->pkts,
						 b->n, NULL);
		if (unlikely(sent < b->n)) {
			rte_pktmbuf_free_bulk(&b->pkts[sent], b->n - sent);
			ctx->drops[MGR_DROP_RING_FULL] += b->n - sent;
		}
		b->n = 0;
		return;
	}
	sent = rte_eth_tx_burst(port, 0, b->pkts, b->n);
	mgr.port_stats[port].tx += sent;
	if (likely(sent > 0))
		note_tx_gap(&mgr.port_stats[port]);
	if (likely(sent == b->n)) {
		b->n = 0;
		ctx->port_hold_since[port] = 0;
		return;
	}
	/* Keep the rest, oldest first, and retry on the next poll. */
	memmove(b->pkts, &b->pkts[sent], (b->n - sent) * sizeof(b->pkts[0]));
	b->n -= sent;
	if (sent > 0 || ctx->port_hold_since[port] == 0) {
		ctx->port_hold_since[port] = rte_get_tsc_cycles();
	} else if (rte_get_tsc_cycles() - ctx->port_hold_since[port] > hold_max_cycles()) {
		drop_port_buf(ctx, b, port);
		ctx->port_hold_since[port] = 0;
	}
}

/* Buffer `m` for `port`; flush when the burst is full.  False, with `m`
 * still the caller's, when the port's buffer is full and it takes nothing. */
static inline bool
port_try(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t port)
{
	struct mgr_dp_buf *b = &ctx->port_buf[port];

	if (unlikely(b->n == ONVM_BURST)) {
		flush_port(ctx, port);
		if (b->n == ONVM_BURST) /* the port still takes nothing */
			return false;
	}
	/* Bytes are counted when buffered (a PMD may free on send) and
	 * taken back if the packet is dropped instead. */
	if (ctx->direct_port_tx)
		mgr.port_stats[port].tx_bytes += rte_pktmbuf_pkt_len(m);
	b->pkts[b->n++] = m;
	if (b->n == ONVM_BURST)
		flush_port(ctx, port);
	return true;
}

static inline void
dispatch_port(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t port)
{
	if (unlikely(!port_try(ctx, m, port))) {
		ctx->drops[MGR_DROP_PORT_TX]++;
		mgr.port_stats[port].tx_drop++;
		rte_pktmbuf_free(m);
	}
}

static inline void
dispatch(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, const struct mgr_dest *d)
{
	struct mgr_dp_buf *b;

	switch (d->kind) {
	case MGR_DEST_NF:
		/* The src of a flow migration: its moving buckets' packets
		 * are tagged and copied (or sent to dst instead). */
		if (unlikely(mgr_moves_any) &&
		    unlikely(__atomic_load_n(&mgr_move_hook[d->id], __ATOMIC_RELAXED) != 0) &&
		    mgr_move_divert(ctx, m, d))
			return;
		b = &ctx->nf_buf[d->id];
		b->pkts[b->n++] = m;
		if (b->n == ONVM_BURST)
			flush_nf(ctx, d->id);
		return;
	case MGR_DEST_PORT:
		if (unlikely(mgr_ftc_any) && ctx->direct_port_tx && mgr_ftc_exit_port[d->id] &&
		    !(onvm_pkt_meta(m, mgr.dyn_off)->flags & ONVM_PKT_F_CTRL)) {
			/* Out of an FTC chain's node: its logs and vectors
			 * attached, or held at the egress (ftc_out.c). */
			mgr_ftc_on_exit(ctx, d->id, m);
			return;
		}
		if (unlikely(mgr_sl_any) && ctx->direct_port_tx &&
		    mgr.shm->chains[onvm_pkt_meta(m, mgr.dyn_off)->chain_id % ONVM_MAX_CHAINS].stateless &&
		    !(onvm_pkt_meta(m, mgr.dyn_off)->flags & ONVM_PKT_F_CTRL)) {
			/* Out of a stateless chain: held until its epoch is in
			 * the store (sl_unit.c). */
			mgr_sl_on_exit(ctx, d->id, m);
			return;
		}
		if (unlikely(mgr.remote.rsync_out_port[d->id] != 0) && ctx->direct_port_tx) {
			/* Out of a protected chain: latched until the standby
			 * voted (primary), or filtered by TxTs (standby). */
			mgr_rsync_on_exit(ctx, d->id, m);
			return;
		}
		if (unlikely(mgr.remote.plog_port[d->id] != 0) && ctx->direct_port_tx) {
			/* Into a protected chain: stamped, logged and sent (or
			 * left to the log's cursor) by the TX unit that owns the
			 * log (plog_unit.c). */
			mgr_plog_on_send(ctx, d->id, m);
			return;
		}
		dispatch_port(ctx, m, d->id);
		return;
	case MGR_DEST_DONE:
		ctx->move_copies_done++;
		rte_pktmbuf_free(m);
		return;
	case MGR_DEST_PEER: /* moved to an instance on another node */
		mgr_move_peer_handoff(ctx, m, d->id);
		return;
	case MGR_DEST_RETURN: /* (an NF's output: dispatch_nf_out) */
		mgr_move_peer_return(ctx, m, d->id, 0);
		return;
	default:
		ctx->drops[d->reason]++;
		rte_pktmbuf_free(m);
		return;
	}
}

void
mgr_dp_dispatch(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, const struct mgr_dest *d)
{
	dispatch(ctx, m, d);
}

/*
 * An NF's output, the NF's service in protected chain `from` (1 +, 0:
 * none; mgr.remote.rsync_service).  Remote resiliency holds only if every
 * input of a protected chain's NFs was logged and every output latched: an
 * output to a port goes through the chain's latch whatever the port (and
 * whatever its metadata: an NF may have made it, or sent it out early),
 * and nothing crosses between the chain's NFs and others -- dropped and
 * counted (mgr_rsync_crossing).
 */
static inline void
dispatch_nf_out(struct mgr_dp_ctx *ctx, uint8_t from, uint16_t from_service, struct rte_mbuf *m,
		const struct mgr_dest *d)
{
	if (unlikely(mgr_sl_any) && mgr_sl_crossing(from_service, d, m))
		return;
	/* Handed over by another node (a cross-node move): back there. */
	if (unlikely(d->kind == MGR_DEST_RETURN)) {
		mgr_move_peer_return(ctx, m, d->id, from_service);
		return;
	}
	if (unlikely(mgr.remote.rsync_services)) {
		if (d->kind == MGR_DEST_NF) {
			uint8_t to = mgr.remote.rsync_service[mgr.shm->nfs[d->id].service_id];

			if (unlikely(to != from)) {
				mgr_rsync_crossing(from, to, false, m);
				return;
			}
		} else if (d->kind == MGR_DEST_PORT && from != 0) {
			mgr_rsync_chain_out(ctx, from - 1, d->id, m);
			return;
		}
	}
	dispatch(ctx, m, d);
}

void
mgr_dp_to_port(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t port)
{
	dispatch_port(ctx, m, port);
}

bool
mgr_dp_port_try(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t port)
{
	return port_try(ctx, m, port);
}

unsigned int
mgr_dp_port_room(struct mgr_dp_ctx *ctx, uint16_t port)
{
	struct mgr_dp_buf *b = &ctx->port_buf[port];

	if (b->n == ONVM_BURST)
		flush_port(ctx, port);
	return ONVM_BURST - b->n;
}

static void
flush_all(struct mgr_dp_ctx *ctx)
{
	uint16_t used = __atomic_load_n(&mgr.nf_slots_used, __ATOMIC_ACQUIRE);

	for (uint16_t i = 0; i < used; i++)
		if (ctx->nf_buf[i].n > 0)
			flush_nf(ctx, i);
	for (uint16_t p = 0; p < mgr.nb_ports; p++)
		if (ctx->port_buf[p].n > 0)
			flush_port(ctx, p);
}

/*
 * Entry backpressure: when an instance of the first service of a port's
 * chain is too full for a burst, leave the packets in the port (a NIC drops
 * them in hardware, counted as imissed) instead of receiving, classifying and
 * then dropping that instance's share -- the flows of an overloaded
 * instance are the ones a scale-out moves away, and dropping them would
 * defeat it.  An instance that holds no bucket (one scale-out just added)
 * takes nothing and is not counted.  Bounded like the NF hold, so a hung NF
 * cannot stall a port (and its other instances) for longer than
 * MGR_HOLD_MAX_US at once -- except a standby's replay (`replay`), held for
 * as long as it takes: mgr_rx_poll still reads the port's control frames
 * now and then.
 */
static bool
entry_full(struct mgr_dp_ctx *ctx, uint16_t port, bool replay)
{
	const struct onvm_port_info *pi = &mgr.shm->ports[port];
	const struct onvm_chain *c;
	const struct onvm_service *svc;
	uint16_t live, full = 0;
	uint64_t now;
	uint32_t a;
	/* A standby's replay: a packet it admits is acknowledged to the
	 * predecessor, which will not send it again -- it must reach its NF.
	 * Held until every instance takes a whole burst, for as long as it
	 * takes (what the port's ring cannot hold is lost on the link, and
	 * sent again). */
	if (!pi->has_default_chain)
		return false;
	c = &mgr.shm->chains[pi->default_chain];
	if (c->len == 0)
		return false;
	svc = &mgr.shm->services[c->services[0]];
	a = __atomic_load_n(&svc->active, __ATOMIC_ACQUIRE) & 1;
	live = 0;
	for (uint16_t i = 0; i < svc->n[a]; i++) {
		if (svc->inst[a][i] == ONVM_INST_NONE)
			continue; /* a protected chain's rank no instance holds */
		/* a rank a moved table gives no bucket (an instance scale-out
		 * just added) takes nothing, unless it is a move's dst: its
		 * copies pile up while it waits for the state */
		if (unlikely(svc->moved[a]) && svc->rank_buckets[a][i] == 0 &&
		    __atomic_load_n(&mgr_move_into[svc->inst[a][i]], __ATOMIC_RELAXED) == 0)
			continue;
		/* one waiting for a move's source drains nothing meanwhile:
		 * holding the port for it would stall every other instance */
		if (unlikely(__atomic_load_n(&mgr.shm->nfs[svc->inst[a][i]].move_waiting,
					     __ATOMIC_RELAXED)))
			continue;
		live++;
		if (rte_ring_free_count(mgr.shm->nfs[svc->inst[a][i]].rx_ring) < ONVM_BURST)
			full++;
	}
	if (live == 0 || full == 0)
		goto room; /* no instance: its packets are dropped, counted */
	now = rte_get_tsc_cycles();
	if (ctx->port_rx_hold_since[port] == 0) {
		ctx->port_rx_hold_since[port] = now;
	} else if (!replay && now - ctx->port_rx_hold_since[port] > hold_max_cycles()) {
		ctx->port_rx_hold_since[port] = 0;
		ctx->hold_expired++;
		return false;
	}
	ctx->backpressure++;
	return true;
room:
	ctx->port_rx_hold_since[port] = 0;
	return false;
}

int
mgr_rx_poll(void)
{
	struct mgr_dp_ctx *ctx = &mgr.dp[MGR_UNIT_RX];
	struct rte_mbuf *pkts[ONVM_BURST];
	int work = 0;

	MGR_UNIT_ENTER(MGR_UNIT_RX);
	if (unlikely(__atomic_load_n(&mgr.rx_stopped, __ATOMIC_RELAXED)))
		return 0;
	for (uint16_t port = 0; port < mgr.nb_ports; port++) {
		struct mgr_port_stats *ps = &mgr.port_stats[port];
		const bool bfd = mgr.bfd_port[port];
		/* Remote resiliency: the primary link of a predecessor, or the
		 * stamped input of a primary/standby. */
		const bool plog = mgr.remote.plog_port[port] != 0 || mgr.remote.plog_sb_port[port] != 0;
		const bool rsync_in = mgr.remote.rsync_in_port[port] != 0;
		const bool rsync_sync = mgr.remote.rsync_sync_port[port] != 0;
		/* A link to a node flows move to and from (move_peer_unit.c). */
		const bool move_peer = unlikely(mgr_peer_any) && mgr_peer_port[port];
		/* A stateless chain's predecessor link (sl_peer.c). */
		const bool sl_peer = unlikely(mgr_sl_any) && mgr_sl_peer_port[port] != 0;
		/* Routed first, dispatched after: the routing lookups of a
		 * burst's packets are independent and overlap, where each
		 * packet's dispatch waits on the previous one's buffer. */
		struct rte_mbuf *out[ONVM_BURST];
		struct mgr_dest dest[ONVM_BURST];
		uint16_t n, nout = 0;

		/* A standby's replay (its input is acknowledged as admitted). */
		const bool replay = unlikely(rsync_in) && mgr_rsync_replaying(port);
		bool held;

		if (mgr.shm->ports[port].no_rx)
			continue;
		/* A stateless chain's input waits for its first start. */
		if (unlikely(mgr_sl_any) && mgr_sl_port_held(port))
			continue;
		/* A port held is read now and then all the same, for the frames
		 * that are no input: BFD's, and the RSync frames of a replay
		 * held for an NF that takes nothing (REPLAY_END, a restarted
		 * predecessor's HEARTBEAT). */
		held = entry_full(ctx, port, replay);
		if (held && !mgr_bfd_peek_due(port, &ctx->bfd_peek_tsc[port]) &&
		    !(replay && mgr_rsync_held_peek_due(ctx->port_rx_hold_since[port],
						   &ctx->replay_peek_tsc[port])))
			continue;
		n = rte_eth_rx_burst(port, 0, pkts, ONVM_BURST);
		/* Headers and metadata are in two different cache lines of
		 * every packet: ask for all of them before touching any. */
		for (uint16_t i = 0; i < n; i++) {
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
			rte_prefetch0(onvm_pkt_meta(pkts[i], mgr.dyn_off));
		}
		for (uint16_t i = 0; i < n; i++) {
			struct rte_mbuf *m = pkts[i];
			struct onvm_pkt_meta *meta = onvm_pkt_meta(m, mgr.dyn_off);
			struct onvm_pkt_info pi;
			enum onvm_parse_reason pr;
			uint64_t ts = 0;
			uint8_t rflags = 0;

			/* BFD and its ARP leave the data path here. */
			if (unlikely(bfd) && mgr_bfd_intercept(port, m)) {
				ps->ctrl_rx++;
				ps->rx_bytes += rte_pktmbuf_pkt_len(m);
				continue;
			}
			ps->rx_bytes += rte_pktmbuf_pkt_len(m);
			/* A cross-node flow migration's frames (move_peer_unit.c). */
			if (unlikely(move_peer) && mgr_move_peer_rx(ctx, port, m))
				continue;
			/* An FTC chain's link: everything on it is the TX unit's
			 * (ftc_in.c), which owns the chain's FTC state. */
			if (unlikely(mgr_ftc_any) && mgr_ftc_in_port[port] &&
			    mgr_ftc_rx(port, m))
				continue;
			/* LOG_TRIM from a primary to this predecessor (plog_unit.c). */
			if (unlikely(plog) && mgr_plog_rx(port, m)) {
				ps->ctrl_rx++;
				continue;
			}
			/* RSync between primary and standby (rsync_unit.c). */
			if (unlikely(rsync_sync) && mgr_rsync_sync_rx(ctx, port, m)) {
				ps->ctrl_rx++;
				continue;
			}
			/* A protected chain's stamped input (rsync_unit.c); read
			 * while held for a replay, none of it is admitted. */
			if (unlikely(held && rsync_in) && mgr_rsync_held_rx(ctx, port, m))
				continue;
			if (unlikely(rsync_in) && mgr_rsync_ingress(ctx, port, m, &ts, &rflags))
				continue;
			if (unlikely(sl_peer) && mgr_sl_peer_ingress(ctx, port, m, &ts))
				continue;
			pr = onvm_pkt_parse(m, &pi);
			ps->parse[pr]++;
			mgr_route_ingress(mgr.shm, meta, port, pr, &pi, &dest[nout]);
			/* A protected chain's NFs take only its stamped input. */
			if (unlikely(mgr.remote.rsync_services) && dest[nout].kind == MGR_DEST_NF) {
				uint8_t to = mgr.remote.rsync_service
						     [mgr.shm->nfs[dest[nout].id].service_id];

				if (unlikely(to != 0 && to != mgr.remote.rsync_in_port[port])) {
					mgr_rsync_crossing(0, to, true, m);
					continue;
				}
			}
			if (ts != 0) {
				meta->ts = ts;
				meta->flags |= rflags;
			}
			/* A stateless chain's root: stamped and logged (while it
			 * recovers, only logged; the log full, dropped, counted);
			 * after the last packet of an epoch, its marker (the
			 * packets before it first). */
			if (unlikely(mgr_sl_any) &&
			    (dest[nout].kind == MGR_DEST_NF ||
			     (dest[nout].kind == MGR_DEST_DROP &&
			      dest[nout].reason == MGR_DROP_NO_INSTANCE)) &&
			    mgr_sl_ingress(m, meta, dest[nout].kind == MGR_DEST_NF
							    ? &mgr.shm->nfs[dest[nout].id]
							    : NULL) != MGR_SL_PASS) {
				rte_pktmbuf_free(m);
				continue;
			}
			out[nout++] = m;
			if (unlikely(mgr_sl_any) && dest[nout - 1].kind == MGR_DEST_NF) {
				if (mgr_sl_marker_due_now(meta)) {
					for (uint16_t i = 0; i < nout; i++)
						dispatch(ctx, out[i], &dest[i]);
					nout = 0;
					mgr_sl_marker_now(ctx, meta->chain_id);
				}
			}
		}
		for (uint16_t i = 0; i < nout; i++)
			dispatch(ctx, out[i], &dest[i]);
		ps->rx += n;
		work += n;
		/* A protected chain's consistent-cut marker goes in after the
		 * input admitted so far, on the same rings (rsync_unit_state.c). */
		if (unlikely(rsync_in)) {
			struct rte_mbuf *mk = mgr_rsync_marker_due(port);

			if (mk != NULL) {
				struct onvm_pkt_meta *meta = onvm_pkt_meta(mk, mgr.dyn_off);
				const struct onvm_pkt_info none = {0};
				uint64_t ts = meta->ts;
				struct mgr_dest d;

				mgr_route_ingress(mgr.shm, meta, port, ONVM_PARSE_NOT_IPV4, &none, &d);
				meta->ts = ts;
				meta->flags |= ONVM_PKT_F_MARKER;
				/* To every instance of the first service (or as routed:
				 * a chain without NFs, no chain). */
				if (d.kind == MGR_DEST_NF ||
				    (d.kind == MGR_DEST_DROP && d.reason == MGR_DROP_NO_INSTANCE))
					mgr_marker_fanout(ctx, mk, 0);
				else
					dispatch(ctx, mk, &d);
				work++;
			}
		}
	}
	if (unlikely(mgr.remote.rsync_standbys))
		work += mgr_rsync_rx_timers(ctx);
	/* Stateless chains: an epoch's time is up (flush_us), the log's
	 * trim, a recovery's replay. */
	if (unlikely(mgr_sl_any))
		work += mgr_sl_rx(ctx);
	if (work > 0)
		flush_all(ctx);
	return work;
}

/*
 * Backpressure: while the NF this one fed last cannot take a burst, leave this
 * one's output where it is.  Its TX ring then fills, it yields the CPU, and an
 * overloaded chain drops once at its entry instead of after some NFs already
 * did the work.  NFs that feed each other (a service visited twice, TONF
 * upstream) would wait on each other for ever, so a hold that would close such
 * a loop is not taken, and every hold is bounded in time (MGR_HOLD_MAX_US);
 * then the output moves and overflow is dropped and counted as usual.
 */

/* Would holding `id` close a loop of NFs that each wait for the next? */
static bool
hold_closes_cycle(const struct mgr_dp_ctx *ctx, uint16_t id, int16_t next)
{
	for (int hops = 0; next >= 0 && hops < ONVM_MAX_NFS; hops++) {
		if (next == id)
			return true;
		if (ctx->hold_since[next] == 0)
			return false;
		next = ctx->last_hop[next];
	}
	return false;
}

static inline bool
hold_output(struct mgr_dp_ctx *ctx, uint16_t id, int16_t next)
{
	const struct onvm_nf_slot *dst = &mgr.shm->nfs[next];
	uint64_t now;

	/* (a remote standby's parked NF drains nothing until a takeover) */
	if (__atomic_load_n(&dst->status, __ATOMIC_RELAXED) != ONVM_NF_RUNNING ||
	    rte_ring_free_count(dst->rx_ring) >= ONVM_BURST ||
	    __atomic_load_n(&dst->remote_park_ack, __ATOMIC_RELAXED))
		return false;
	if (hold_closes_cycle(ctx, id, next)) {
		ctx->hold_expired++;
		return false;
	}
	now = rte_get_tsc_cycles();
	if (ctx->hold_since[id] == 0) {
		ctx->hold_since[id] = now;
	} else if (now - ctx->hold_since[id] > hold_max_cycles()) {
		ctx->hold_expired++;
		return false;
	}
	ctx->backpressure++;
	return true;
}

/*
 * NF-generated packets come from the NF's alloc ring, never from the mempool
 * (a process killed inside a mempool operation leaves the pool's cache or
 * ring inconsistent; see struct onvm_nf_batch).  The TX unit -- the ring's
 * only producer once the first fill is done -- tops it up for the NFs that
 * asked (gen_enabled): one bulk get from its own mempool cache per refill.
 */
static inline void
alloc_ring_top_up(struct mgr_dp_ctx *ctx, struct onvm_nf_slot *slot)
{
	struct rte_mbuf *m[ONVM_NF_ALLOC_FILL];
	unsigned int n;

	if (rte_ring_count(slot->alloc_ring) >= ONVM_NF_ALLOC_LOW ||
	    unlikely(__atomic_load_n(&mgr.stop_loops, __ATOMIC_RELAXED)))
		return; /* (after the stop, the exit drain must find it settled) */
	if (rte_pktmbuf_alloc_bulk(mgr.pool, m, ONVM_NF_ALLOC_FILL) != 0) {
		ctx->alloc_fail++;
		return;
	}
	n = rte_ring_sp_enqueue_burst(slot->alloc_ring, (void **)m, ONVM_NF_ALLOC_FILL, NULL);
	if (n < ONVM_NF_ALLOC_FILL)
		rte_pktmbuf_free_bulk(&m[n], ONVM_NF_ALLOC_FILL - n);
}

int
mgr_tx_poll(void)
{
	struct mgr_dp_ctx *ctx = &mgr.dp[MGR_UNIT_TX];
	struct rte_mbuf *pkts[ONVM_BURST];
	uint16_t used = __atomic_load_n(&mgr.nf_slots_used, __ATOMIC_ACQUIRE);
	int work = 0;

	MGR_UNIT_ENTER(MGR_UNIT_TX);
	mgr_bfd_tx(); /* control frames go before any data */
	/* Remote resiliency's predecessor: failover frames, the log's cursor. */
	work += mgr_plog_tx(ctx);
	/* Remote resiliency's primary and standby: RSync frames, timers. */
	work += mgr_rsync_tx(ctx);
	/* Flow moves across nodes: the control thread's frames. */
	if (unlikely(mgr_peer_any))
		work += mgr_move_peer_tx();
	/* Stateless chains: what the store has acknowledged leaves. */
	if (unlikely(mgr_sl_any))
		work += mgr_sl_tx(ctx);
	/* An FTC chain: frames from the node before, the NF's updates, the
	 * timers, the egress buffer. */
	if (unlikely(mgr_ftc_any))
		work += mgr_ftc_tx(ctx);
	/* What the control thread handed back (a dead NF's mbufs): a few
	 * bursts a poll, counted as work so a quiet lcore does not nap on it. */
	for (int k = 0; k < MGR_TX_FREE_BURSTS && unlikely(!rte_ring_empty(mgr.ctl_free_ring));
	     k++) {
		unsigned int n = rte_ring_sc_dequeue_burst(mgr.ctl_free_ring, (void **)pkts,
							    ONVM_BURST, NULL);

		rte_pktmbuf_free_bulk(pkts, n);
		work += n;
	}

	/* Outputs held for a marker alignment: passed on, or given up. */
	if (unlikely(ctx->align_n_held > 0))
		work += mgr_align_poll(ctx);
	for (uint16_t id = 0; id < used; id++) {
		struct onvm_nf_slot *slot = &mgr.shm->nfs[id];
		int16_t next = ctx->last_hop[id], lastp = -1;
		struct mgr_dest dest[ONVM_BURST];
		/* (a slot keeps its service until it is taken again) */
		const uint8_t chain_of = mgr.remote.rsync_service[slot->service_id];
		bool gone = __atomic_load_n(&slot->status, __ATOMIC_RELAXED) == ONVM_NF_FREE;
		unsigned int n;

		/* A marker alignment's hold or stash of an NF that is gone, or
		 * whose slot another NF took since (marker_align.c). */
		bool aligning = unlikely(ctx->align_n_held + ctx->stash_pending > 0) &&
				(ctx->align_held[id] != 0 || ctx->stash[id].n > 0);

		/* (The stashes are read only while some are in use: they are
		 * 64 cache lines a poll otherwise.) */
		if (unlikely(aligning) && (gone || ctx->align_gen[id] != slot->generation))
			work += mgr_align_forget(ctx, id);
		if (gone) {
			/* What a dead NF sent after its marker is routed on, as
			 * the rest of its output was. */
			if (likely(!aligning))
				continue;
		} else {
			if (unlikely(__atomic_load_n(&slot->gen_enabled, __ATOMIC_ACQUIRE)))
				alloc_ring_top_up(ctx, slot);
			if (next >= 0 && next != id && hold_output(ctx, id, next))
				continue;
			ctx->hold_since[id] = 0;
			if (ctx->last_port[id] >= 0 &&
			    ctx->port_hold_since[ctx->last_port[id]] != 0 &&
			    !mgr.remote.plog_port[ctx->last_port[id]]) {
				ctx->backpressure++;
				continue;
			}
			/* Held: its marker waits for its siblings'. */
			if (unlikely(ctx->align_held[id] != 0)) {
				ctx->align_waits++;
				continue;
			}
		}
		if (unlikely(aligning) && ctx->stash[id].n > 0) {
			/* What followed its marker in that burst goes first. */
			n = ctx->stash[id].n;
			memcpy(pkts, ctx->stash[id].pkts, n * sizeof(pkts[0]));
			ctx->stash[id].n = 0;
			ctx->stash_pending--;
		} else if (gone) {
			continue;
		} else {
			n = rte_ring_sc_dequeue_burst(slot->tx_ring, (void **)pkts, ONVM_BURST,
						      NULL);
			ctx->nf_deq[id] += n;
		}
		for (unsigned int i = 0; i < n; i++)
			rte_prefetch0(onvm_pkt_meta(pkts[i], mgr.dyn_off));
		/* Routed first, dispatched in order at the burst's end or before
		 * a marker (as in mgr_rx_poll: the lookups overlap). */
		for (unsigned int i = 0, routed = 0; i <= n; i++) {
			struct onvm_pkt_meta *meta =
				i < n ? onvm_pkt_meta(pkts[i], mgr.dyn_off) : NULL;

			if (i < n && likely(!(meta->flags & ONVM_PKT_F_MARKER))) {
				mgr_route_action(mgr.shm, meta, &dest[i]);
				if (dest[i].kind == MGR_DEST_PORT && (meta->flags & ONVM_PKT_F_ND))
					mgr.port_stats[dest[i].id].tx_nd++;
				continue;
			}
			for (; routed < i; routed++) {
				dispatch_nf_out(ctx, chain_of, slot->service_id, pkts[routed],
						&dest[routed]);
				next = dest[routed].kind == MGR_DEST_NF ? (int16_t)dest[routed].id : -1;
				lastp = dest[routed].kind == MGR_DEST_PORT ? (int16_t)dest[routed].id
									   : -1;
			}
			if (i == n)
				break;
			routed = i + 1;
			/* A flow migration's marker: it says src's output before
			 * it has been routed, and goes no further. */
			if (unlikely(mgr_moves_any) && mgr_move_marker_out(ctx, id, pkts[i]))
				continue;
			/* A consistent-cut marker: aligned with the other instances'
			 * before it goes on; while held, the rest of this burst
			 * waits with the NF's ring. */
			if (mgr_marker_from_nf(ctx, id, pkts[i])) {
				ctx->stash[id].n = (uint16_t)(n - i - 1);
				ctx->stash_pending += ctx->stash[id].n > 0;
				memcpy(ctx->stash[id].pkts, &pkts[i + 1], (n - i - 1) * sizeof(pkts[0]));
				break;
			}
		}
		ctx->last_hop[id] = next;
		if (n > 0)
			ctx->last_port[id] = lastp;
		work += n;
	}
	for (uint16_t port = 0; port < mgr.nb_ports; port++) {
		struct rte_ring *r = mgr.shm->ports[port].tx_ring;
		struct mgr_dest d = {.kind = MGR_DEST_PORT, .id = port};
		unsigned int n;

		if (ctx->port_hold_since[port] != 0) {
			flush_port(ctx, port); /* retry what the port refused */
			/* Not into a protected chain: there the log is the
			 * buffer -- input is stamped and logged, and sent from
			 * the log when the port takes it again (or replayed to
			 * the standby): a held port must not make the input
			 * overflow the ring before it is logged. */
			if (ctx->port_buf[port].n > 0 && !mgr.remote.plog_port[port])
				continue;
		}
		n = rte_ring_sc_dequeue_burst(r, (void **)pkts, ONVM_BURST, NULL);

		for (unsigned int i = 0; i < n; i++)
			dispatch(ctx, pkts[i], &d);
		work += n;
	}
	if (work > 0)
		flush_all(ctx);
	return work;
}

void
mgr_dp_drop_leftovers(void)
{
	for (int u = 0; u < MGR_UNIT_MAX; u++) {
		struct mgr_dp_ctx *ctx = &mgr.dp[u];

		for (int i = 0; i < ONVM_MAX_NFS; i++)
			if (ctx->nf_buf[i].n > 0) {
				ctx->drops[MGR_DROP_NF_GONE] += ctx->nf_buf[i].n;
				rte_pktmbuf_free_bulk(ctx->nf_buf[i].pkts, ctx->nf_buf[i].n);
				ctx->nf_buf[i].n = 0;
			}
		for (uint16_t p = 0; p < mgr.nb_ports; p++)
			if (ctx->port_buf[p].n > 0)
				drop_port_buf(ctx, &ctx->port_buf[p], p);
		for (int i = 0; i < ONVM_MAX_NFS; i++) {
			struct mgr_dp_buf *st = &ctx->stash[i];

			if (st->n > 0) {
				ctx->drops[MGR_DROP_NF_GONE] += st->n;
				rte_pktmbuf_free_bulk(st->pkts, st->n);
				st->n = 0;
			}
			ctx->align_held[i] = 0;
		}
		ctx->align_n_held = 0;
		ctx->stash_pending = 0;
	}
	mgr_align_reset(); /* the markers kept for alignments */
	if (mgr_sl_any)
		mgr_sl_drop_held(); /* a stateless chain's exit */
	if (mgr_ftc_any)
		mgr_ftc_drop_held(); /* an FTC chain's egress buffer */
}

void
mgr_dp_init(void)
{
	for (int u = 0; u < MGR_UNIT_MAX; u++) {
		for (int i = 0; i < ONVM_MAX_NFS; i++) {
			mgr.dp[u].last_hop[i] = -1;
			mgr.dp[u].last_port[i] = -1;
		}
		mgr.dp[u].unit = u;
		mgr.dp[u].direct_port_tx = (u == MGR_UNIT_TX);
	}
}
