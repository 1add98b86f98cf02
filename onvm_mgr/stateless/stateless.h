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
 *   sl_unit.c      the root on the RX unit, the exit on the TX unit,
 *                  /onvm/store
 *   stateless.h    this interface
 */
#ifndef MGR_STATELESS_H
#define MGR_STATELESS_H

#include <stdbool.h>
#include <stdint.h>

struct mgr_dp_ctx;
struct rte_mbuf;
struct onvm_pkt_meta;

/* Set up the stateless chains' tables (after mgr_init_chains). */
int mgr_sl_init(void);
int mgr_sl_telemetry_init(void);

/* Some chain of this node is stateless (read on the data path). */
extern bool mgr_sl_any;

/* RX unit: a packet routed into chain `meta->chain_id` (after routing). */
void mgr_sl_ingress(struct onvm_pkt_meta *meta);
/* RX unit, inside a burst: the packet just routed ended an epoch (its
 * chain's flush_packets); then the marker goes in after it. */
bool mgr_sl_marker_due_now(const struct onvm_pkt_meta *meta);
void mgr_sl_marker_now(struct mgr_dp_ctx *ctx, uint16_t chain);
/* RX unit: the markers now due (each into its chain); returns how many. */
int mgr_sl_markers(struct mgr_dp_ctx *ctx);
/* TX unit: `m` leaves stateless chain `meta->chain_id` through `port`:
 * held until its epoch is in the store.  A marker closes an epoch. */
void mgr_sl_on_exit(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m);
/* TX unit: release what the store has acknowledged; returns packets moved. */
int mgr_sl_tx(struct mgr_dp_ctx *ctx);
/* At exit: what is still held goes back to the pool, counted. */
void mgr_sl_drop_held(void);

#endif /* MGR_STATELESS_H */
