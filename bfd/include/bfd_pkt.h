/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * BFD control packets (RFC 5880 section 4): the mandatory 24-byte section and
 * the optional authentication section, encoded and decoded without any I/O.
 *
 * bfd_pkt_decode() applies every reception check of section 6.8.6 that needs
 * only the packet (the first seven bullets); the session layer does the rest
 * (discriminator lookup, authentication against the session's key, state).
 * Every rejection has its own reason so that drops are counted by cause.
 */
#ifndef BFD_PKT_H
#define BFD_PKT_H

#include <stddef.h>
#include <stdint.h>

#define BFD_VERSION 1
#define BFD_PKT_LEN 24		/* mandatory section */
#define BFD_PKT_MAX_LEN 64	/* mandatory + the longest authentication section */
#define BFD_UDP_PORT 3784	/* RFC 5881: single-hop control packets */
#define BFD_SRC_PORT_MIN 49152	/* RFC 5881: source port range */
#define BFD_TTL 255

enum bfd_state {
	BFD_STATE_ADMIN_DOWN = 0,
	BFD_STATE_DOWN = 1,
	BFD_STATE_INIT = 2,
	BFD_STATE_UP = 3,
};

/* Diagnostic codes (section 4.1). */
enum bfd_diag {
	BFD_DIAG_NONE = 0,
	BFD_DIAG_TIME_EXPIRED = 1,
	BFD_DIAG_ECHO_FAILED = 2,
	BFD_DIAG_NEIGHBOR_DOWN = 3,
	BFD_DIAG_FWD_RESET = 4,
	BFD_DIAG_PATH_DOWN = 5,
	BFD_DIAG_CONCAT_PATH_DOWN = 6,
	BFD_DIAG_ADMIN_DOWN = 7,
	BFD_DIAG_REV_CONCAT_PATH_DOWN = 8,
	BFD_DIAG_MAX = 32, /* 5-bit field */
};

/* Authentication types (section 4.1); 0: none. */
enum bfd_auth_type {
	BFD_AUTH_NONE = 0,
	BFD_AUTH_SIMPLE = 1,
	BFD_AUTH_KEYED_MD5 = 2,
	BFD_AUTH_METICULOUS_MD5 = 3,
	BFD_AUTH_KEYED_SHA1 = 4,
	BFD_AUTH_METICULOUS_SHA1 = 5,
};

#define BFD_SHA1_LEN 20
#define BFD_AUTH_SHA1_LEN (8 + BFD_SHA1_LEN) /* type, len, key id, reserved, seq, digest */
#define BFD_AUTH_SIMPLE_MAX 16

/* Flag bits of byte 1 (after the state). */
#define BFD_FLAG_POLL 0x20
#define BFD_FLAG_FINAL 0x10
#define BFD_FLAG_CPI 0x08    /* control plane independent */
#define BFD_FLAG_AUTH 0x04   /* authentication present */
#define BFD_FLAG_DEMAND 0x02
#define BFD_FLAG_MULTI 0x01  /* multipoint: must be zero */

struct bfd_auth {
	uint8_t type;	      /* enum bfd_auth_type */
	uint8_t len;	      /* the section's length byte */
	uint8_t key_id;
	uint32_t seq;	      /* keyed MD5/SHA1 sequence number */
	uint8_t data[BFD_AUTH_SIMPLE_MAX > BFD_SHA1_LEN ? BFD_AUTH_SIMPLE_MAX : BFD_SHA1_LEN];
	uint8_t data_len;     /* password bytes, or the digest length */
	uint16_t offset;      /* where the section starts in the packet */
};

/* One control packet, host byte order; times in microseconds. */
struct bfd_ctrl {
	uint8_t version;
	uint8_t diag;	 /* enum bfd_diag */
	uint8_t state;	 /* enum bfd_state */
	uint8_t flags;	 /* BFD_FLAG_* */
	uint8_t detect_mult;
	uint8_t length;	 /* the length field: whole packet incl. authentication */
	uint32_t my_disc;
	uint32_t your_disc;
	uint32_t desired_min_tx_us;
	uint32_t required_min_rx_us;
	uint32_t required_min_echo_rx_us;
	struct bfd_auth auth; /* valid when flags & BFD_FLAG_AUTH */
};

/* Why a received packet was not accepted; counted per session/port. */
enum bfd_rx_reason {
	BFD_RX_OK = 0,
	BFD_RX_SHORT,		/* fewer bytes than the mandatory section */
	BFD_RX_BAD_VERSION,	/* version != 1 */
	BFD_RX_BAD_LENGTH,	/* length field < 24 (26 with auth) or > bytes received */
	BFD_RX_ZERO_DETECT_MULT,
	BFD_RX_MULTIPOINT,	/* M bit set */
	BFD_RX_ZERO_MY_DISC,
	BFD_RX_ZERO_YOUR_DISC,	/* your discriminator 0 while state is not Down/AdminDown */
	BFD_RX_BAD_AUTH_LEN,	/* auth section does not fit or has the wrong length for its type */
	/* Checks of the session layer (listed here so one counter array holds all). */
	BFD_RX_NO_SESSION,	/* your discriminator names no session (and no address match) */
	BFD_RX_AUTH_MISMATCH,	/* A bit differs from the session's configuration */
	BFD_RX_AUTH_FAILED,	/* wrong type, key id, digest or sequence number */
	BFD_RX_ADMIN_DOWN,	/* 6.8.6: our session is AdminDown (the remote's fields kept) */
	BFD_RX_BAD_TTL,		/* RFC 5881: TTL is not 255 */
	BFD_RX_BAD_UDP,		/* RFC 5881: source port outside 49152-65535, or bad UDP */
	/* Checks of the framing layer (bfd_net.h). */
	BFD_RX_BAD_IP,		/* IPv4 header: length or checksum wrong, or a fragment */
	BFD_RX_BAD_ARP,		/* ARP not for Ethernet/IPv4, or truncated */
	BFD_RX_REASON_MAX,
};

const char *bfd_rx_reason_str(enum bfd_rx_reason r);
const char *bfd_state_str(enum bfd_state s);
const char *bfd_diag_str(enum bfd_diag d);

/*
 * Check and decode `len` bytes of UDP payload.  On BFD_RX_OK `out` holds every
 * field; with the A bit, out->auth describes the section (its digest bytes are
 * left in the packet for the session layer to verify).
 */
enum bfd_rx_reason bfd_pkt_decode(const uint8_t *buf, size_t len, struct bfd_ctrl *out);

/*
 * Encode `c` into `buf` (at least BFD_PKT_MAX_LEN bytes).  The version and
 * length fields are derived (1; 24 plus the auth section's length when the A
 * bit is set).  For keyed SHA1 the digest field is written as given in
 * c->auth.data: the session layer fills in the key, hashes, then stores the
 * digest (section 6.7.4).  Returns the packet length, or -1 if `c` cannot be
 * encoded (bad auth length, detect_mult 0).
 */
int bfd_pkt_encode(const struct bfd_ctrl *c, uint8_t *buf, size_t buflen);

#endif /* BFD_PKT_H */
