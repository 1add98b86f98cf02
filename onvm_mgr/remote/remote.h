/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * remote.h -- remote resiliency on the manager: the predecessor role
 * (stamping, the packet log, failover and replay over the I/O-free library
 * in pkt_logger/) and the primary and standby roles (the latch, two-phase
 * commit, consistent cuts and the standby's apply over rsync/).  What the
 * rest of the manager calls, and the per-port role tables the data path
 * reads (mgr.remote).  Design: docs/design/remote.md.
 *
 * What each file is for:
 *   plog_unit.c         the predecessor: stamping and logging on the TX path,
 *                       failover, replay to the standby, /onvm/remote
 *   link_watch.c        the link-down failover trigger (rtnetlink), on the
 *                       control thread
 *   rsync_unit.c        primary and standby: set-up, the protected ingress,
 *                       the sessions' control frames, exit
 *   rsync_unit_out.c    packets leaving the chain (TX unit): the primary's
 *                       latch and its wait queue, lazy cuts, timers; the
 *                       standby's TxTs filter
 *   rsync_unit_state.c  the chain's NFs' state: placement, markers and cuts
 *   rsync_unit_apply.c  the standby writing committed state into its NFs
 *   rsync_unit_tel.c    /onvm/remote for the primary and standby roles
 *   rsync_unit_priv.h   what the rsync_unit*.c files share
 *   marker_align.c      a protected chain's markers aligned across a
 *                       service's instances (as Flink aligns barriers)
 *   remote.h            this interface
 */
#ifndef MGR_REMOTE_H
#define MGR_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "onvm_common.h"

struct mgr_dp_ctx;
struct nf_state_layout;
struct rte_mbuf;
struct rte_tel_data;

/* Which port plays which part in which protected chain: written at start-up
 * (before the units run), read by the data path on every packet. */
struct mgr_remote {
	/* This manager's run id in every RSync message (rsync_wire.h): random,
	 * drawn at each start (mgr_remote_run_init), never 0.  Peers tell a
	 * restarted node from the one before by it. */
	uint64_t run;
	/* 1 + the predecessor chain (plog_unit.c) stamping what leaves the port, 0: none */
	uint8_t plog_port[ONVM_MAX_PORTS];
	/* ... whose standby link this port is (the standby's echoes arrive here) */
	uint8_t plog_sb_port[ONVM_MAX_PORTS];
	/* 1 + the primary/standby chain (rsync_unit.c) whose stamped input arrives here, 0: none */
	uint8_t rsync_in_port[ONVM_MAX_PORTS];
	/* ... whose sync link (primary <-> standby) this port is */
	uint8_t rsync_sync_port[ONVM_MAX_PORTS];
	/* ... whose protected chain leaves through this port */
	uint8_t rsync_out_port[ONVM_MAX_PORTS];
	/* 1 + the primary/standby chain whose NFs this service's are, 0: none.
	 * Every output of them goes through that chain's latch (or TxTs), to
	 * whatever port; nothing from outside the chain reaches them. */
	uint8_t rsync_service[ONVM_MAX_SERVICES];
	bool rsync_services; /* some service is a protected chain's */
	/* Consistent-cut markers dropped on a full NF ring (RX or TX unit,
	 * atomic), per protected chain (rsync_in_port - 1 of the marker's
	 * ingress port): the TX unit asks for the next marker soon instead of
	 * waiting for the lost one's time-out (rsync_unit_state.c). */
	uint64_t markers_dropped[MGR_CFG_MAX_REMOTE];
	/* The newest marker sent into each chain of the table (RX unit writes,
	 * TX unit reads: a marker an NF passes on names no newer cut). */
	uint64_t marker_newest[ONVM_MAX_CHAINS];
	/* The instances (ranks) each marker was sent to, by chain, step and
	 * cut id % MGR_FANNED: (cut << 8) | mask, atomic.  Step 0's are the RX
	 * unit's, the others the TX unit's; the TX unit aligns on them. */
#define MGR_FANNED 16
	uint64_t marker_fanned[ONVM_MAX_CHAINS][ONVM_MAX_CHAIN_LEN][MGR_FANNED];
	bool rsync_standbys; /* this node is the standby of a protected chain */
};

/* mgr_state.c: draw mgr.remote.run (getrandom; at start, before the
 * remote units are set up). */
void mgr_remote_run_init(void);

/* plog_unit.c: the predecessor role of remote resiliency.  _init after the
 * ports and BFD are set up; the TX unit calls _on_send for every packet it
 * sends to a port plog_port[] marks (the packet is taken: stamped, logged,
 * and sent, or left to the log's cursor, or refused and counted) and _tx
 * each poll (failover frames, the replay; returns the frames sent). */
int mgr_plog_init(void);
int mgr_plog_telemetry_init(void);
void mgr_plog_on_send(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m);
unsigned int mgr_plog_tx(struct mgr_dp_ctx *ctx);
/* RX unit, for frames of a port plog_port[] marks: true if it took `m` (an
 * RSync frame from the primary, for the TX unit to apply). */
bool mgr_plog_rx(uint16_t port, struct rte_mbuf *m);
/* Any thread: the link to the primary of mgr.cfg.remote[remote] went down. */
void mgr_plog_link_down(int remote);

/* link_watch.c: the link-down failover trigger, on the control thread.
 * _init after mgr_plog_init and the control thread's epoll set; _event when
 * its rtnetlink socket (CTL_EV_LINK) is readable; _poll every loop (returns
 * the ms until it must run again). */
int mgr_link_watch_init(void);
void mgr_link_watch_event(void);
int mgr_link_watch_poll(void);
void mgr_link_watch_fini(void);

/* rsync_unit.c: remote resiliency's primary and standby roles.  The RX unit
 * calls _ingress for every frame of a port rsync_in_port[] marks: true when
 * it took the frame (dropped, counted, or a control frame), false when the
 * frame goes on, its shim removed, with its timestamp and REPLAY flag in
 * *ts / *flags (for the packet's metadata once it is routed). */
struct rte_tel_data;
int mgr_rsync_init(void);
bool mgr_rsync_ingress(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m, uint64_t *ts,
		       uint8_t *flags);
/* RX unit, for frames of a port rsync_sync_port[] marks: true if it took `m`
 * (an RSync frame from the peer). */
bool mgr_rsync_sync_rx(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m);
/* RX unit, every poll on a node that is standby of a chain: the standby
 * sessions' timers (a HEARTBEAT asking for a full cut).  Returns work. */
int mgr_rsync_rx_timers(struct mgr_dp_ctx *ctx);
/* TX unit: every poll (control frames, timers), and for every stamped or
 * unstamped packet it sends to a port rsync_out_port[] marks (the packet is
 * taken: latched, sent, or dropped and counted). */
int mgr_rsync_tx(struct mgr_dp_ctx *ctx);
void mgr_rsync_on_exit(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m);
/* TX unit: an NF of protected chain `chain` (rsync_service[] - 1) sends `m`
 * to `port` (taken: latched, sent, or dropped and counted, as at the exit,
 * whatever the port). */
void mgr_rsync_chain_out(struct mgr_dp_ctx *ctx, int chain, uint16_t port, struct rte_mbuf *m);
/* RX or TX unit: `m` would cross the boundary of a protected chain -- from
 * chain `from` into chain `to` (rsync_service[] values, 0: outside any,
 * from != to) -- where no log or latch is: dropped and counted (`rx`: by
 * the RX unit, from a port). */
void mgr_rsync_crossing(int from, int to, bool rx, struct rte_mbuf *m);
/* RX unit: whether the protected chain whose stamped input arrives on
 * `port` (rsync_in_port[] != 0) is a standby replaying its takeover. */
bool mgr_rsync_replaying(uint16_t port);
/* A port held for a replay (its NFs' rings full) since `held_since_tsc`,
 * 100 ms and more, is read every 10 ms all the same: true when due,
 * `last_tsc` updated. */
bool mgr_rsync_held_peek_due(uint64_t held_since_tsc, uint64_t *last_tsc);
/* A frame read from a held port of a protected ingress: RSync frames are
 * handled; input, while the replay lasts, is dropped unadmitted
 * (`replay_held_drops`: never acknowledged, so sent again).  False: input
 * of a chain no longer replaying, for mgr_rsync_ingress(). */
bool mgr_rsync_held_rx(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m);
void mgr_rsync_telemetry(struct rte_tel_data *d); /* adds its chains to /onvm/remote */
void mgr_rsync_telemetry_brief(struct rte_tel_data *d); /* ... to /onvm/remote/brief */
/* RX unit, after each burst of a port rsync_in_port[] marks: a consistent-cut
 * marker to send into the chain now (metadata: ts; the caller routes it), or
 * NULL. */
struct rte_mbuf *mgr_rsync_marker_due(uint16_t port);
/* marker_align.c: a protected chain's markers between its NFs.  _fanout
 * sends marker `m` (its metadata routed: chain_id) to every instance of
 * chain step `step`, or to the exit past the last; _from_nf takes a marker
 * NF `id` passed on and returns true when the NF's output is now held
 * (ctx->align_held) for its siblings'; _poll, each TX poll while an output
 * is held, passes on or gives up; _forget: NF `id` is gone, or its slot was
 * taken since it was held (its stash stays, to be routed on).  _poll and
 * _forget return work done (a marker passed on). */
void mgr_marker_fanout(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t step);
bool mgr_marker_from_nf(struct mgr_dp_ctx *ctx, uint16_t id, struct rte_mbuf *m);
int mgr_align_poll(struct mgr_dp_ctx *ctx);
int mgr_align_forget(struct mgr_dp_ctx *ctx, uint16_t id);
void mgr_align_reset(void); /* tests: no alignment open */
/* The cut id a marker carries (0: too short to hold struct onvm_marker). */
uint64_t mgr_marker_cut(const struct rte_mbuf *m);
/* A marker of a protected chain was lost on the way: the primary asks for
 * the next one at once -- if it is the newest sent into the chain (an older
 * one's loss says nothing of the marker out now). */
void mgr_marker_lost(const struct rte_mbuf *m);
/* rsync_unit_state.c, for nf_ipc.c: where a protected chain's NF's state
 * block goes: 1 placed (*pl filled), 0 not such an NF (first-fit), <0
 * refused (why). */
struct mgr_rsync_placement {
	uint64_t off;	   /* the block, at the same offset on primary and standby */
	uint64_t cut_off;  /* primary: the cut area after it, cut_size bytes */
	uint64_t cut_size; /* 0: none (standby) */
	uint64_t cut_log;  /* the cut log's bytes in that area */
	bool parked;	   /* standby: the NF waits until the takeover */
};
int mgr_rsync_state_place(const struct onvm_nf_slot *s, const struct nf_state_layout *layout,
			  struct mgr_rsync_placement *pl, char *why, size_t whylen);
/* nf_ipc.c, after setting slot->remote_parked: unpark it if the takeover
 * came meanwhile. */
void mgr_rsync_state_parked_check(struct onvm_nf_slot *s);
/* Whether an NF of `service` registering now is a protected chain's NF on
 * its standby node, before the takeover: it starts parked. */
bool mgr_rsync_parks(uint16_t service);
/* Whether `off` lies in a protected chain's reserved state windows. */
bool mgr_rsync_state_window(uint64_t off);
/* The newest marker id sent into the protected chain of `service` (0: none),
 * an NF's nd_cut_floor at registration. */
uint64_t mgr_rsync_marker_floor(uint16_t service);
/* The clock offset a new NF of `service` runs on (onvm_nf_slot.clock_offset):
 * its protected chain's after a takeover on this node, else 0. */
int64_t mgr_rsync_clock_offset(uint16_t service);
void mgr_rsync_fini(void); /* after the units stopped: held packets back to the pool */

#endif /* MGR_REMOTE_H */
