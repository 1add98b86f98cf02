/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The BFD instance of a node: its sessions on its Ethernet ports, without
 * I/O.  The owner (onvm_mgr's BFD unit) hands it the frames of its ports
 * that bfd_node_wants(), calls bfd_node_timers() when the returned deadline
 * comes, and transmits the frames it gets through ops->xmit.  The node
 *   - demultiplexes control packets to sessions (RFC 5880 6.8.6: by Your
 *     Discriminator, else by port and addresses, RFC 5881 section 3),
 *   - adds and checks the RFC 5881 framing (TTL 255, source port per session
 *     in 49152-65535, UDP to 3784),
 *   - answers ARP for its sessions' local addresses and resolves each peer's
 *     MAC (RFC 826), unless the configuration gives it,
 *   - tells subscribers about every session state change (up/down with
 *     diagnostic): the interface remote failover builds on.
 *
 * Single-threaded: one thread calls everything below (the owner serialises
 * other callers, e.g. telemetry).  Exception: bfd_node_wants() only reads
 * what bfd_node_add_session() wrote, so a receive path may call it
 * concurrently once sessions are set up.
 */
#ifndef BFD_NODE_H
#define BFD_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "bfd_net.h"
#include "bfd_session.h"

#define BFD_NODE_MAX_PORTS 16
#define BFD_NODE_MAX_SESSIONS 32
#define BFD_NODE_MAX_SUBSCRIBERS 8
#define BFD_NAME_LEN 32
#define BFD_ARP_RETRY_NS 1000000000ull	 /* peer MAC unknown: ask every second */
#define BFD_ARP_REFRESH_NS 5000000000ull /* learned MAC, session not Up: re-ask */

struct bfd_node_session_cfg {
	char name[BFD_NAME_LEN];
	uint16_t port;
	uint32_t local_ip, peer_ip; /* host byte order */
	bool peer_mac_static;	    /* peer_mac given: no ARP for it */
	uint8_t peer_mac[BFD_ETH_ALEN];
	struct bfd_session_cfg bfd;
};

/* A session changed state.  Valid for the duration of the callback. */
struct bfd_event {
	uint16_t session; /* index, as bfd_node_find() returns */
	const char *name;
	uint16_t port;
	uint32_t local_ip, peer_ip;
	enum bfd_state old_state, new_state;
	enum bfd_diag diag;	   /* our diagnostic: why we left Up, 7 for AdminDown */
	enum bfd_diag remote_diag; /* the peer's, from its last packet */
	uint64_t time_ns;
};

/* Called from the thread running the node; must not block. */
typedef void (*bfd_event_fn)(const struct bfd_event *ev, void *arg);

struct bfd_node_ops {
	/* Transmit one Ethernet frame on `port`; 0 if it was queued. */
	int (*xmit)(uint16_t port, const uint8_t *frame, uint32_t len, void *arg);
};

struct bfd_node_stats {
	uint64_t rx_frames;			/* handed to bfd_node_rx() */
	uint64_t rx_ctrl;			/* BFD frames that reached a session */
	uint64_t rx_drop[BFD_RX_REASON_MAX];	/* frames dropped before a session */
	uint64_t rx_other;			/* neither ARP nor BFD */
	uint64_t arp_rx, arp_replied, arp_learned, arp_requests;
	uint64_t tx_frames, tx_fail;
};

struct bfd_node;

struct bfd_node_session {
	struct bfd_node_session_cfg cfg;
	struct bfd_session s;
	struct bfd_node *node;
	uint16_t index;
	uint16_t src_port;	  /* RFC 5881: one per session */
	bool mac_known;
	uint8_t peer_mac[BFD_ETH_ALEN];
	uint64_t next_arp_ns;	  /* when to (re)ask for the peer's MAC; 0: no need */
	uint64_t last_change_ns;  /* last state change, CLOCK_MONOTONIC */
	uint64_t last_up_ns, last_down_ns;
	uint8_t last_down_diag;
	uint64_t tx_no_mac;	  /* packets not sent: peer MAC unknown */
	uint64_t tx_fail;	  /* packets ops->xmit refused */
	uint64_t rx_drop[BFD_RX_REASON_MAX]; /* framing drops attributed to it */
};

struct bfd_node {
	const struct bfd_node_ops *ops;
	void *arg;
	uint64_t rng;
	uint64_t now_ns; /* of the call in progress, for callbacks */
	bool port_mac_set[BFD_NODE_MAX_PORTS];
	uint8_t port_mac[BFD_NODE_MAX_PORTS][BFD_ETH_ALEN];
	uint16_t nsessions;
	struct bfd_node_session sess[BFD_NODE_MAX_SESSIONS];
	uint16_t nsubs;
	struct {
		bfd_event_fn fn;
		void *arg;
	} subs[BFD_NODE_MAX_SUBSCRIBERS];
	struct bfd_node_stats stats;
};

/* `seed` picks the discriminators (non-zero, unique, unpredictable). */
void bfd_node_init(struct bfd_node *n, const struct bfd_node_ops *ops, void *arg, uint64_t seed);

/* The MAC address `port` sends from and answers ARP with. */
int bfd_node_set_port_mac(struct bfd_node *n, uint16_t port, const uint8_t mac[BFD_ETH_ALEN]);

/* Add a session; returns its index, or -1 (invalid, table full, duplicate
 * name or same port/local/peer as another session). */
int bfd_node_add_session(struct bfd_node *n, const struct bfd_node_session_cfg *cfg,
			 uint64_t now_ns);

/* Should this frame from `port` go to bfd_node_rx()?  ARP to or from one of
 * the port's session addresses, or UDP to 3784 for a local address. */
bool bfd_node_wants(const struct bfd_node *n, uint16_t port, const uint8_t *frame, uint32_t len);

/* Handle one frame; returns BFD_RX_OK or why it was dropped. */
enum bfd_rx_reason bfd_node_rx(struct bfd_node *n, uint16_t port, const uint8_t *frame,
			       uint32_t len, uint64_t now_ns);

/* Run every session's timers and ARP; returns the next deadline (ns). */
uint64_t bfd_node_timers(struct bfd_node *n, uint64_t now_ns);

int bfd_node_subscribe(struct bfd_node *n, bfd_event_fn fn, void *arg);

/* Index of the session called `name`, or -1. */
int bfd_node_find(const struct bfd_node *n, const char *name);

/* Operator controls; -1 on a bad index or value. */
int bfd_node_set_admin_down(struct bfd_node *n, int idx, bool down, uint64_t now_ns);
int bfd_node_set_timers(struct bfd_node *n, int idx, uint32_t desired_min_tx_us,
			uint32_t required_min_rx_us, uint8_t detect_mult, uint64_t now_ns);

#endif /* BFD_NODE_H */
