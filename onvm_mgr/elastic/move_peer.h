/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * Flow migration across nodes (docs/design/elastic.md, "Across nodes"):
 * the same protocol as on one node, with the node of src (the "src node")
 * and the node of dst (the "dst node") linked by a port of each marked
 * "peer" in the configuration.  The frames are 0x88B5 version 4
 * (onvm_xmove_wire.h).
 *
 * The dst node keeps a mirror of the move in a slot of its own
 * (ONVM_MOVE_FROM_PEER): dst's libnf sees a move like any other -- its IN
 * marker, the export in the slot's memzone, src's log there, the copies in
 * its ring, start_out and end_out -- all of it brought over the link by
 * the two managers.  After the flip the src node hands the moved flows'
 * packets to dst (HANDOFF) and dst's output comes back (RETURN) to go on
 * along the chain where it is: the chain stays the src node's.
 *
 *   move_peer_unit.c  the data units: the frames in (copies, handoffs and
 *                     returns to their rings; control frames to the
 *                     control thread) and out
 *   move_peer_ctl.c   the control thread: both sides' messages, the
 *                     export and the log shipped, time-outs
 */
#ifndef MGR_ELASTIC_MOVE_PEER_H
#define MGR_ELASTIC_MOVE_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include "onvm_common.h"
#include "onvm_xmove_wire.h"

struct rte_mbuf;
struct rte_ring;
struct mgr_dp_ctx;
struct mgr_dest;
struct onvm_pkt_meta;

/* Any port marked "peer" (a hint for the units). */
extern bool mgr_peer_any;
extern bool mgr_peer_port[ONVM_MAX_PORTS];
/* Per peer port, by the src node's slot: the mirror of that move here,
 * MGR_PEER_MIRROR(the move's gen there, the mirror's slot and gen here)
 * (0: none).  Control-written, unit-read: a unit checks the mirror's gen
 * against the slot's before it trusts the slot. */
extern uint64_t mgr_peer_mirror[ONVM_MAX_PORTS][ONVM_MAX_MOVES];
#define MGR_PEER_MIRROR(a_gen, b_slot, b_gen)                                               \
	((UINT64_C(1) << 63) | ((uint64_t)((b_gen) & 0xffff) << 40) |                        \
	 ((uint64_t)(a_gen) << 8) | (uint64_t)(b_slot))
#define MGR_PEER_MIRROR_AGEN(e) ((uint32_t)((e) >> 8))
#define MGR_PEER_MIRROR_SLOT(e) ((uint32_t)((e) & 0xff))
#define MGR_PEER_MIRROR_BGEN(e) ((uint32_t)((e) >> 40) & 0xffff)
/* Destination (broadcast) and source MACs of the frames out of a port. */
extern uint8_t mgr_peer_mac[ONVM_MAX_PORTS][12];
/* Control frames from the RX unit to the control thread. */
extern struct rte_ring *mgr_peer_ctl_ring;
/* ... and the control thread's own, to the TX unit: made in one of these
 * buffers (free ones in mgr_peer_out_free), put into an mbuf and the
 * port's ring by the TX unit -- the control thread, preemptible, never
 * touches the pool's or a port's multi-producer ring. */
#define MGR_PEER_OUT_N 256
struct mgr_peer_out {
	uint16_t port, len;
	uint8_t type;
	uint8_t frame[ONVM_XM_FRAME_MAX];
};
extern struct mgr_peer_out mgr_peer_out[MGR_PEER_OUT_N];
extern struct rte_ring *mgr_peer_out_ring, *mgr_peer_out_free;

/* Per peer_only instance here: the port whose node's flows it serves
 * (1 + port, 0: none yet -- the first mirror into it claims it, so two
 * nodes' flows never share its state), and the buckets whose flows it has
 * from there (set once its mirror has the state, cleared if the move
 * fails): a HANDOFF of any other bucket finds no state here -- the
 * instance restarted, or never had it -- and is dropped, counted.
 * Control-written, unit-read; reset with the NF's slot. */
extern uint16_t mgr_peer_owner[ONVM_MAX_NFS];
extern uint64_t mgr_peer_owned[ONVM_MAX_NFS][ONVM_FLOW_BUCKETS / 64];
/* NF slot `id` is being reset (control thread): it serves no node's flows. */
void mgr_move_peer_forget(uint16_t id);

/* Counters (relaxed atomics: several units count). */
struct mgr_peer_stats {
	uint64_t rx[ONVM_XM_STATUS + 1]; /* by type */
	uint64_t tx[ONVM_XM_STATUS + 1];
	uint64_t refused[ONVM_XM_REASON_MAX]; /* frames refused, by reason */
	uint64_t copies_stale;	 /* a copy of no live mirror */
	uint64_t handoff_no_inst; /* for an instance not running here */
	uint64_t handoff_not_moved; /* of a bucket the instance has no state of */
	uint64_t tx_full;	 /* the port's ring took nothing */
	uint64_t no_headroom;
	uint64_t ctl_ring_full;
};
extern struct mgr_peer_stats mgr_peer_stats;

/* ---- data units (move_peer_unit.c) ---- */

/* A frame in on peer port `port`: true if it was a cross-node move's
 * (taken).  (Only peer ports are asked: elsewhere such a frame is any
 * other EtherType's.) */
bool mgr_move_peer_rx(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m);
/* To the service's instance on the peer (MGR_DEST_PEER), or back to the
 * node that handed it over (MGR_DEST_RETURN; `service`: whose output). */
void mgr_move_peer_handoff(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t service);
void mgr_move_peer_return(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t port,
			  uint16_t service);
/* A moving packet, tagged, to dst on the peer: its copy (COPY) or itself
 * (BUFFERED).  False: not sent (freed), the move must fail. */
bool mgr_move_peer_send_tagged(struct rte_mbuf *m, const struct onvm_move *mv, uint8_t type);
/* A control frame queued for `port` (the control thread); false: no room. */
bool mgr_move_peer_send_ctl(uint16_t port, const struct onvm_xm_ctl *c);
/* TX unit: the control thread's frames onto their ports' rings. */
int mgr_move_peer_tx(void);

/* ---- control thread (move_peer_ctl.c), under mgr.ctl_lock ---- */

int mgr_move_peer_init(void);
/* Both sides' messages and timers; how soon (ms) it wants to run again. */
int mgr_move_peer_ctl(void);
/* src node: has dst's node opened the move (its IN marker in)? */
bool mgr_move_peer_open(uint32_t slot);
/* src node: is dst's node still answering? */
bool mgr_move_peer_alive(uint32_t slot);
/* A new move in `slot` (src node): forget the last one's progress. */
void mgr_move_peer_reset(uint32_t slot);
int mgr_move_peer_telemetry_init(void);

#endif /* MGR_ELASTIC_MOVE_PEER_H */
