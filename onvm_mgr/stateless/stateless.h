/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * stateless.h -- stateless resiliency on the manager: a stateless chain's
 * root (its ingress stamps packets and injects the markers that close
 * epochs) and its exit (outputs held until every NF of the chain closed
 * their epoch in the store).  The store client is libnf's (nf_store.c);
 * design: docs/design/stateless.md.
 *
 * What each file is for:
 *   sl_root.c      the root on the RX unit: stamps, the log, markers,
 *                  the replay after a recovery
 *   sl_exit.c      the exit on the TX unit: held until committed, a
 *                  recovery's release point, replayed duplicates
 *   sl_recover.c   set-up, the control thread's recovery of a chain (its
 *                  NFs killed and relaunched), /onvm/store
 *   sl_peer.c      a chain behind remote resiliency's predecessor: the
 *                  primary's trims, a spare's takeover of the chain
 *   sl_priv.h      what these files share
 *   stateless.h    this interface
 */
#ifndef MGR_STATELESS_H
#define MGR_STATELESS_H

#include <stdbool.h>
#include <stdint.h>

struct mgr_dp_ctx;
struct rte_mbuf;
struct onvm_pkt_meta;

/* RX unit: 1 + the stateless chain whose predecessor's link each port is
 * (0: none); its input goes through mgr_sl_peer_ingress() first. */
extern uint8_t mgr_sl_peer_port[];
/* A frame on a predecessor's link: true if taken (control, or dropped,
 * counted); else stamped input, its shim removed, `*ts` its timestamp. */
bool mgr_sl_peer_ingress(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m,
			 uint64_t *ts);

/* Set up the stateless chains' tables (after mgr_init_chains). */
int mgr_sl_init(void);
int mgr_sl_telemetry_init(void);

/* Some chain of this node is stateless (read on the data path); 1 + the
 * stateless chain each service is in, 0: none (written at start-up). */
extern bool mgr_sl_any;
extern uint8_t mgr_sl_service[];

/* TX unit: an NF's output (to `d`) that leaves or enters a stateless
 * chain other than through its root and exit, or skips a step of it
 * (TONF, OUT before the last step): dropped and counted -- it would be
 * neither logged nor held, or pass a marker it belongs before. */
struct mgr_dest;
bool mgr_sl_crossing(uint16_t from_service, const struct mgr_dest *d, struct rte_mbuf *m);

/* RX unit: a packet routed into chain `meta->chain_id` (after routing;
 * `to`: the NF it goes to, NULL if none -- its first NF is gone): stamped
 * and logged, then PASS: dispatch it; LOGGED: the chain recovers (or that
 * NF's ring is short of room), its copy in the log is what is sent on
 * later, free it; DROP: the log is full or it came in from another port,
 * free it (counted). */
enum { MGR_SL_DROP = 0, MGR_SL_PASS, MGR_SL_LOGGED };
struct onvm_nf_slot;
int mgr_sl_ingress(struct rte_mbuf *m, struct onvm_pkt_meta *meta,
		   const struct onvm_nf_slot *to);
/* RX unit: the port is the ingress of a stateless chain whose NFs have not
 * loaded their state yet (its first start): not read. */
bool mgr_sl_port_held(uint16_t port);
/* RX unit, inside a burst: the packet just routed ended an epoch (its
 * chain's flush_packets); then the marker goes in after it. */
bool mgr_sl_marker_due_now(const struct onvm_pkt_meta *meta);
void mgr_sl_marker_now(struct mgr_dp_ctx *ctx, uint16_t chain);
/* RX unit, each poll: markers due by time, the log's trim, a replay. */
int mgr_sl_rx(struct mgr_dp_ctx *ctx);
/* TX unit: `m` leaves stateless chain `meta->chain_id` through `port`:
 * held until its epoch is in the store.  A marker closes an epoch. */
void mgr_sl_on_exit(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m);
/* TX unit: release what the store has acknowledged; returns packets moved. */
int mgr_sl_tx(struct mgr_dp_ctx *ctx);
/* At exit: what is still held or logged goes back to the pool, counted. */
void mgr_sl_drop_held(void);
/* The control thread (ctl_lock held): a chain's NF died -- recover the
 * chain; returns ms until it wants to look again. */
int mgr_sl_ctl(void);

#endif /* MGR_STATELESS_H */
