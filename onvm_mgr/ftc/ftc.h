/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc.h -- FTC on the manager (docs/design/ftc.md): this node's part of an
 * FTC chain.  Each node of the chain runs one of its NFs (or none: the f
 * replica-only nodes at the end) and keeps replicas of the f NFs before it.
 * The NF's updates (libnf's nf_ftc.c) and the replicas' logs ride on the
 * chain's packets, in FTC's piggyback header (ftc/include/ftc_wire.h);
 * every packet also says which update of each NF it depends on (need) and
 * how far each NF's updates are known held on f + 1 nodes (held).  The
 * chain's last node holds every packet until its needs are held.
 *
 * Everything FTC runs on the TX unit, one thread: the RX unit only hands
 * the frames of the chain's links over (mgr_ftc_rx); the control thread
 * only sets up, and telemetry reads counters.
 *
 * What each file is for:
 *   ftc_node.c     set-up from the config, the NF's update ring in the
 *                  state pool, /onvm/ftc
 *   ftc_in.c       a frame from the node before: logs applied to the
 *                  replicas in order, held and need merged, the logs that
 *                  go on queued, the packet stripped and routed
 *   ftc_out.c      a packet leaving to the node after: the NF's updates
 *                  taken, logs and vectors attached, what does not fit sent
 *                  ahead on propagating frames, retransmission, the timer;
 *                  at the last node the egress buffer and the feedback
 *   ftc_recover.c  a node that takes a failed one's place: its NF's state
 *                  fetched from the replicas, its replicas rebuilt by
 *                  whole-state updates; the state transfer that serves it
 *   ftc_replica.c  a replica's copy of an NF's state regions, in pages
 *   ftc_priv.h     what these files share
 *   ftc.h          this interface
 */
#ifndef MGR_FTC_H
#define MGR_FTC_H

#include <stdbool.h>
#include <stdint.h>

struct mgr_dp_ctx;
struct rte_mbuf;
struct onvm_nf_slot;

/* Some chain of this node is FTC (read on the data path). */
extern bool mgr_ftc_any;
/* 1: frames in on this port go to mgr_ftc_rx() (the link from the node
 * before, or the forwarder's feedback link). */
extern uint8_t mgr_ftc_in_port[];
/* 1: this port is the FTC chain's exit: what leaves goes to mgr_ftc_on_exit(). */
extern uint8_t mgr_ftc_exit_port[];

/* Set up from the config (after mgr_init_chains); 0 or -1. */
int mgr_ftc_init(void);
int mgr_ftc_telemetry_init(void);

struct nf_state_layout;
/* do_state_alloc(): whether the NF of `service` may run in this node's FTC
 * chain with this state: its whole state must fit one update (the ring's
 * quarter, log_kb / 4) and a replica (replica_mb).  0, or -E2BIG with a
 * sentence in `why`. */
int mgr_ftc_state_check(uint16_t service, const struct nf_state_layout *layout, char *why,
			size_t whylen);
/* do_state_alloc(): the bytes of the update ring an NF of service
 * `service` needs after its state block (0: not in an FTC chain). */
uint64_t mgr_ftc_ring_bytes(uint16_t service);

/* The NF of service `service` waits, parked, for the state a recovering
 * node fetches (registration and state allocation set remote_parked). */
bool mgr_ftc_parks(uint16_t service);

/* The control thread: the NF of `service` died.  An FTC node is one
 * failure unit -- its NF's next updates would be numbered from 1 again on a
 * state the replicas never saw -- so the node dies at once, SIGKILL, as a
 * whole node would; its replacement takes its place (docs/design/ftc.md). */
void mgr_ftc_nf_died(uint16_t service);

/* RX unit: a frame in on an FTC port, handed to the TX unit; true if
 * taken (always, but counted as dropped when the hand-over is full). */
bool mgr_ftc_rx(uint16_t port, struct rte_mbuf *m);
/* TX unit: `m` leaves through the FTC chain's exit port `port`. */
void mgr_ftc_on_exit(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m);
/* TX unit, each poll: frames handed over, the NF's updates, timers, the
 * egress buffer; returns work done. */
int mgr_ftc_tx(struct mgr_dp_ctx *ctx);
/* At exit: what is held goes back to the pool, counted. */
void mgr_ftc_drop_held(void);

#endif /* MGR_FTC_H */
