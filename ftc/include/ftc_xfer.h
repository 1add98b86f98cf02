/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_xfer.h -- FTC's state transfer, on the nodes' state network, without
 * I/O: a node taking over a failed one fetches its NF's state from the
 * replicas, and asks the NFs it replicates for a whole-state update
 * (docs/design/ftc.md, "Recovery").  The same EtherType as the piggyback,
 * version 3; docs/wire-format.md draws it.
 *
 *   after the MACs (24 bytes, then a PIECE's record):
 *   | 0x88B5 (16) | version = 3 (8) | op (8) | chain id (16) |
 *   | from: the sender's position (8) | instance (8) | nonce (32) |
 *   | seq (64): PIECE, END: the replica's last update applied; else 0 |
 *   | index (32): PIECE: its number; END: the pieces sent; else 0 |
 *   PIECE: | region (16) | length (16, 1..1024) | offset (32) | bytes |
 *   END:   | high (64): the highest number of the instance the replica
 *            has seen anywhere (a log, a need, a held entry, a void) |
 *
 *   FETCH   a new head asks for the replica of `instance` (nonce: its ask)
 *   PIECE   one piece of that replica's pages, all at update `seq`
 *   END     the replica had `index` pieces, at `seq`; `high`: the new
 *           incarnation numbers on from past it
 *   RESYNC  a new replica asks the head of `instance` for a whole update
 *
 * All fields in network byte order.  A frame may be padded past its end
 * (Ethernet's minimum) except a PIECE, whose bytes end it.
 */
#ifndef FTC_XFER_H
#define FTC_XFER_H

#include <stddef.h>
#include <stdint.h>

#define FTC_XFER_VERSION 3
#define FTC_XFER_HEAD_LEN 24   /* after the MACs */
#define FTC_XFER_PIECE_HEAD 8
#define FTC_XFER_MIN_FRAME 60 /* Ethernet's minimum, without the FCS: padded to it */
#define FTC_XFER_END_LEN 8 /* after the head: high */
#define FTC_XFER_PIECE_MAX 1024 /* bytes of state in one piece */

enum ftc_xfer_op {
	FTC_XFER_FETCH = 1,
	FTC_XFER_PIECE = 2,
	FTC_XFER_END = 3,
	FTC_XFER_RESYNC = 4,
};

enum ftc_xfer_reason {
	FTC_XFER_OK = 0,
	FTC_XFER_NOT_XFER,	/* another EtherType or version: not this codec's */
	FTC_XFER_SHORT,		/* shorter than its head (or a PIECE's record head, an END's high) */
	FTC_XFER_BAD_OP,	/* an op not above */
	FTC_XFER_BAD_LENGTH,	/* a PIECE's bytes not 1..1024, or not ending the frame */
	FTC_XFER_BAD_FIELD,	/* seq or index set where the op has none */
	FTC_XFER_REASON_MAX,
};

const char *ftc_xfer_reason_str(enum ftc_xfer_reason r);

struct ftc_xfer {
	uint8_t op;
	uint16_t chain;
	uint8_t from, instance;
	uint32_t nonce;
	uint64_t seq;
	uint32_t index;
	uint64_t high; /* END */
	/* PIECE */
	uint16_t region, len;
	uint32_t offset;
	const uint8_t *bytes;
};

/* Check a received frame (its MACs first); on FTC_XFER_OK fill `x`. */
enum ftc_xfer_reason ftc_xfer_parse(const uint8_t *frame, size_t len, struct ftc_xfer *x);

/* Write `x` after the 12 bytes of MACs already at `out` (room `cap`): the
 * frame's length, or -1 (no room, or `x` would not parse: the same rules). */
int ftc_xfer_build(uint8_t *out, size_t cap, const struct ftc_xfer *x);

#endif /* FTC_XFER_H */
