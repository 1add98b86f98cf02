/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * dataplane.h -- the manager's data path: the RX and TX units that move
 * packets between ports and NF rings, the pure routing decisions they take,
 * and BFD on the ports.  What the rest of the manager calls; the node-wide
 * state these units work on is in mgr.h.
 *
 * What each file is for:
 *   datapath.c     the RX and TX units: port bursts, routing, NF rings,
 *                  back-pressure, the ports' TX buffers, NF wake-up
 *   router.c       routing decisions over the shared tables, pure (router.h)
 *   router.h       classify an arriving packet, turn an NF's action into a
 *                  destination, drop reasons
 *   bfd_unit.c     BFD sessions on the ports (library in bfd/), /onvm/bfd
 *   dataplane.h    this interface
 *
 * Threads: everything here runs on the data lcores, which never block and
 * never take mgr.ctl_lock (see mgr.h); per-unit state lives in one
 * struct mgr_dp_ctx per unit, written by that unit only.
 */
#ifndef MGR_DATAPLANE_H
#define MGR_DATAPLANE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "bfd_node.h"
#include "onvm_common.h"
#include "onvm_pkt_parse.h"
#include "router.h"

struct rte_mbuf;

/* Per-port counters; RX fields written by the RX unit, TX fields by the TX unit. */
struct mgr_port_stats {
	uint64_t rx;
	uint64_t rx_bytes;
	uint64_t parse[ONVM_PARSE_REASON_MAX];
	uint64_t tx __rte_cache_aligned;
	uint64_t tx_bytes;
	uint64_t tx_drop;
	uint64_t tx_nd;	/* packets sent with the ND flag (from NFs) */
	uint64_t ctrl_tx; /* of tx: BFD and ARP frames the manager sent (TX unit) */
	/* Longest pause between two bursts the port took, since the last
	 * /onvm/ports/gap_reset: how long forwarding stalled (TSC cycles). */
	uint64_t tx_last_tsc;
	uint64_t tx_gap_max;
	uint32_t tx_gap_reset; /* atomic: set by telemetry, cleared by the TX unit */
	uint64_t ctrl_rx __rte_cache_aligned; /* of rx: frames taken by BFD (RX unit) */
	/* net_af_packet: frames its ring held at start, discarded (ports.c) */
	uint64_t rx_before_start;
} __rte_cache_aligned;

/* Per-unit data path context: output buffers and counters owned by one unit. */
struct mgr_dp_buf {
	uint16_t n;
	struct rte_mbuf *pkts[ONVM_BURST];
};

struct mgr_dp_ctx {
	int unit;		 /* enum mgr_unit_id */
	bool direct_port_tx;	 /* true: rte_eth_tx_burst; false: port TX ring */
	uint64_t drops[MGR_DROP_REASON_MAX];
	uint64_t nf_enq[ONVM_MAX_NFS];
	uint64_t nf_enq_drop[ONVM_MAX_NFS];
	uint64_t nf_deq[ONVM_MAX_NFS];
	uint64_t backpressure;		/* polls an NF's output was held back */
	uint64_t alloc_fail;		/* NF alloc ring top-ups the pool could not serve */
	uint64_t hold_expired;		/* holds released by the time bound */
	uint64_t hold_since[ONVM_MAX_NFS]; /* TSC a hold began, 0: not held */
	int16_t last_hop[ONVM_MAX_NFS]; /* NF each NF fed last, -1: none/port */
	int16_t last_port[ONVM_MAX_NFS]; /* port each NF fed last, -1: none */
	uint64_t port_hold_since[ONVM_MAX_PORTS]; /* TSC a port began refusing */
	uint64_t port_rx_hold_since[ONVM_MAX_PORTS]; /* TSC RX of a port was held */
	/* Markers aligned across a service's instances (marker_align.c): an
	 * NF's output held until its siblings' markers came (1 + chain step,
	 * 0: not held), the rest of the burst its marker was in, counters. */
	uint16_t align_held[ONVM_MAX_NFS];
	uint16_t align_n_held;
	uint16_t stash_pending; /* stashes holding packets */
	struct mgr_dp_buf stash[ONVM_MAX_NFS];
	uint32_t align_gen[ONVM_MAX_NFS]; /* the slot's generation the hold or stash is of */
	uint64_t markers_aligned;  /* passed on, every instance's in */
	uint64_t align_given_up;   /* cuts given up (a newer one, instances changed, time-out) */
	uint64_t markers_stale;	   /* of a cut passed on or given up already: dropped */
	uint64_t markers_refused;  /* not the NF's step, rolled back, unknown cut, no copy */
	uint64_t align_waits; /* polls an NF's output was held for an alignment */
	uint64_t move_markers;	   /* flow migration's markers out of NFs (elastic/move.h) */
	uint64_t move_copies_done; /* its copies back from dst, freed */
	uint64_t bfd_peek_tsc[ONVM_MAX_PORTS]; /* last read of a held BFD port */
	uint64_t replay_peek_tsc[ONVM_MAX_PORTS]; /* ... of a port held for a replay */
	struct mgr_dp_buf nf_buf[ONVM_MAX_NFS];
	struct mgr_dp_buf port_buf[ONVM_MAX_PORTS];
} __rte_cache_aligned;
/* datapath.c -- the units (rte_eal_remote_launch'd through units.c). */
/* Bursts of mgr.ctl_free_ring the TX unit frees per poll: a dead NF's
 * mbufs go back quickly without one poll taking long. */
#define MGR_TX_FREE_BURSTS 4
int mgr_rx_poll(void);
int mgr_tx_poll(void);
void mgr_dp_init(void);
void mgr_nf_wake(struct onvm_nf_slot *slot); /* any thread */
/* `m` to destination `d` (buffered; counted when dropped). */
void mgr_dp_dispatch(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, const struct mgr_dest *d);
/* Buffer `m` for `port` on unit `ctx` (flushed at the end of the poll), for
 * the units' own frames and released packets. */
void mgr_dp_to_port(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t port);
/* The same, but false (and `m` still the caller's) when the port's buffer is
 * full and it takes nothing now; _room: how many packets it takes now. */
bool mgr_dp_port_try(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t port);
unsigned int mgr_dp_port_room(struct mgr_dp_ctx *ctx, uint16_t port);
/* At exit, after the units stopped: what any unit still buffers (a marker
 * kept for a full ring, a held port's packets) back to the pool, counted. */
void mgr_dp_drop_leftovers(void);
/* A copy of a marker for NF `id` was dropped on its full ring: reported
 * lost, and taken out of its step's record of the fan-out. */
void mgr_marker_copy_dropped(const struct rte_mbuf *m, uint16_t id);

/* bfd_unit.c */
int mgr_bfd_init(void);		 /* after the ports are set up */
int mgr_bfd_telemetry_init(void);
int mgr_bfd_poll(void);		 /* the BFD unit */
bool mgr_bfd_intercept(uint16_t port, struct rte_mbuf *m); /* RX unit: true if taken */
bool mgr_bfd_peek_due(uint16_t port, uint64_t *last_peek_tsc);
void mgr_bfd_tx(void);		 /* TX unit: control frames first */
uint64_t mgr_bfd_next_ns(void);	 /* when the BFD unit must next run */
void mgr_bfd_stats_print(void);
void mgr_bfd_log_flush(void);	 /* the control thread: log queued session events */
/* Session state changes (up/down with diagnostic) for other modules, e.g.
 * remote failover.  Called on the BFD unit's lcore: must not block. */
int mgr_bfd_subscribe(bfd_event_fn fn, void *arg);

#endif /* MGR_DATAPLANE_H */
