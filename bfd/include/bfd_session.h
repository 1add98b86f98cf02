/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * One BFD session in asynchronous mode (RFC 5880 section 6), without I/O:
 * the owner feeds it received packets and the time, and it calls back to
 * transmit and to report state changes.  Time is CLOCK_MONOTONIC in ns,
 * intervals in microseconds as on the wire.  It never asks for Demand mode
 * (D is never set) but honours a remote's: while the remote has D set and
 * both are Up, it sends nothing periodic but its own Poll Sequences (6.8.7),
 * and still answers every Poll with a Final.
 *
 *   bfd_session_init(&s, &cfg, discr, now);
 *   loop: bfd_session_rx(&s, payload, len, now) for each packet of it;
 *         next = bfd_session_timers(&s, now)     -- sends, expires; returns
 *                                                   when to call it again.
 */
#ifndef BFD_SESSION_H
#define BFD_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "bfd_auth.h"
#include "bfd_pkt.h"

#define BFD_SLOW_TX_US 1000000u /* section 6.8.3: at least 1 s while not Up */

struct bfd_session_cfg {
	uint32_t desired_min_tx_us;  /* while Up */
	uint32_t required_min_rx_us;
	uint8_t detect_mult;
	bool admin_down;
	uint8_t auth_type; /* BFD_AUTH_NONE, _KEYED_SHA1 or _METICULOUS_SHA1 */
	uint8_t auth_key_id;
	uint8_t auth_key[BFD_AUTH_KEY_MAX];
	uint8_t auth_key_len;
};

struct bfd_session;

struct bfd_session_ops {
	/* Send `len` bytes of BFD payload (the owner adds UDP/IP/Ethernet). */
	void (*send)(struct bfd_session *s, const uint8_t *pkt, int len, void *arg);
	/* The session changed state (old -> s->state), with s->local_diag. */
	void (*state_change)(struct bfd_session *s, enum bfd_state old, void *arg);
};

struct bfd_session_stats {
	uint64_t tx;
	uint64_t rx;				/* accepted */
	uint64_t rx_drop[BFD_RX_REASON_MAX];	/* by reason */
	uint64_t up_events, down_events;
	uint64_t polls_started, polls_completed;
};

struct bfd_session {
	/* RFC 5880 section 6.8.1 state variables. */
	uint8_t state;	      /* bfd.SessionState */
	uint8_t remote_state; /* bfd.RemoteSessionState */
	uint8_t remote_diag;  /* the diagnostic of the remote's last packet */
	uint32_t local_discr;
	uint32_t remote_discr;
	uint8_t local_diag;
	uint32_t desired_min_tx_us;  /* bfd.DesiredMinTxInterval as sent now */
	uint32_t required_min_rx_us; /* bfd.RequiredMinRxInterval as sent now */
	uint32_t remote_min_rx_us;   /* bfd.RemoteMinRxInterval */
	bool remote_demand;
	uint8_t detect_mult;
	uint32_t rcv_auth_seq;
	uint32_t xmit_auth_seq;
	bool auth_seq_known;

	/* What the remote told us last. */
	uint8_t remote_detect_mult;
	uint32_t remote_desired_min_tx_us;

	struct bfd_session_cfg cfg;

	/* Timer changes (section 6.8.3): packets carry the new values at once
	 * (desired_min_tx_us, required_min_rx_us above); the values this side
	 * uses keep the safe one of old and new until the Poll Sequence ends
	 * with a Final: a slower transmit rate or a shorter detection time only
	 * then. */
	bool poll_active;
	uint32_t use_tx_us, use_rx_us;

	uint64_t tx_interval_ns; /* current, before jitter */
	uint64_t next_tx_ns;
	uint64_t last_tx_ns;	 /* last periodic transmission */
	/* Two receive times, as RFC 5880 has two rules.  last_rx_ns: the last
	 * packet received and not discarded (6.8.6's last step); the detection
	 * time of 6.8.4 runs from it.  last_heard_ns: the last valid,
	 * authenticated packet, also one that 6.8.6 then discards because we
	 * are AdminDown; 6.8.1's forgetting (RemoteDiscr after a detection
	 * time, AuthSeqKnown after twice) runs from it.  They differ only
	 * while AdminDown; 0: none (or forgotten). */
	uint64_t last_rx_ns;
	uint64_t last_heard_ns;
	uint64_t rng;		 /* jitter */

	const struct bfd_session_ops *ops;
	void *arg;
	struct bfd_session_stats stats;
};

/* -1 if cfg is invalid (zero detect_mult or intervals, unknown auth type). */
int bfd_session_init(struct bfd_session *s, const struct bfd_session_cfg *cfg, uint32_t discr,
		     const struct bfd_session_ops *ops, void *arg, uint64_t now_ns);

/* Decode, check (6.8.6) and apply one received packet; returns why it was
 * dropped, or BFD_RX_OK.  `payload` is the UDP payload. */
enum bfd_rx_reason bfd_session_rx(struct bfd_session *s, const uint8_t *payload, uint32_t len,
				  uint64_t now_ns);

/* Apply a packet already decoded (the owner looked the session up by it). */
enum bfd_rx_reason bfd_session_rx_decoded(struct bfd_session *s, const struct bfd_ctrl *c,
					  const uint8_t *payload, uint32_t len, uint64_t now_ns);

/* Transmit what is due, expire the detection timer; returns the next time
 * this must run (ns). */
uint64_t bfd_session_timers(struct bfd_session *s, uint64_t now_ns);

/* Administrative control: AdminDown sends diag 7 and discards what it
 * receives (BFD_RX_ADMIN_DOWN, RFC 5880 6.8.6). */
void bfd_session_set_admin_down(struct bfd_session *s, bool down, uint64_t now_ns);

/* New timers; while Up this runs a Poll Sequence (section 6.8.3). */
int bfd_session_set_timers(struct bfd_session *s, uint32_t desired_min_tx_us,
			   uint32_t required_min_rx_us, uint8_t detect_mult, uint64_t now_ns);

/* Detection time in ns as the session uses it now (0: not running). */
uint64_t bfd_session_detect_time_ns(const struct bfd_session *s);

#endif /* BFD_SESSION_H */
