/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The logical-timestamp shim of remote resiliency (docs/spec.md section 6), on the
 * wire between the predecessor and the primary/standby nodes, without I/O.
 *
 * The predecessor inserts it right after the two MAC addresses of every packet
 * entering a protected chain; the original EtherType (0x0800, 0x8100, ...)
 * moves into the shim, so VLAN tags and everything else after it stay as they
 * were.  The protected domain's last node pops it before a packet leaves.
 *
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |          destination MAC (6) ...  source MAC (6)              |
 *  +-------------------------------+-------------------------------+
 *  |     EtherType 0x88B5          |   version=1   |    flags      |
 *  +-------------------------------+---------------+---------------+
 *  |     inner EtherType           |                               |
 *  +-------------------------------+                               |
 *  |                   logical timestamp (64 bits)                 |
 *  |                               +-------------------------------+
 *  |                               |  original payload ...
 *  +-------------------------------+
 *
 * All fields in network byte order.  The frame grows by PLOG_SHIM_LEN (12)
 * bytes.  Timestamps start at 1 (0 means "none" everywhere in the project).
 */
#ifndef PLOG_SHIM_H
#define PLOG_SHIM_H

#include <stddef.h>
#include <stdint.h>

#define PLOG_ETHERTYPE 0x88B5 /* IEEE 802 local experimental EtherType 1 */
#define PLOG_SHIM_VERSION 1
#define PLOG_SHIM_LEN 12      /* bytes inserted: version .. timestamp, after 0x88B5 */
#define PLOG_MAC_LEN 12	      /* destination + source MAC */
#define PLOG_ETH_LEN 14	      /* MACs + EtherType */

/* Flag bits. */
#define PLOG_SHIM_F_REPLAY 0x01 /* re-sent from the log after a failover */
#define PLOG_SHIM_F_KNOWN  PLOG_SHIM_F_REPLAY

/* A decoded shim, host byte order. */
struct plog_shim {
	uint8_t version;
	uint8_t flags;
	uint16_t inner_type;
	uint64_t ts;
};

/* Why a frame's shim was not accepted; counted by the caller per reason. */
enum plog_shim_reason {
	PLOG_SHIM_OK = 0,
	PLOG_SHIM_NOT_SHIM,    /* EtherType is not 0x88B5 (not an error for mixed ports) */
	PLOG_SHIM_SHORT,       /* 0x88B5 but shorter than MACs + EtherType + shim, or
				* shorter than MACs + EtherType (type unknown) */
	PLOG_SHIM_BAD_VERSION, /* version != 1 */
	PLOG_SHIM_BAD_FLAGS,   /* a flag bit outside PLOG_SHIM_F_KNOWN */
	PLOG_SHIM_NESTED,      /* inner EtherType is 0x88B5 again */
	PLOG_SHIM_ZERO_TS,     /* timestamp 0 */
	PLOG_SHIM_REASON_MAX,
};

const char *plog_shim_reason_str(enum plog_shim_reason r);

/*
 * Decode the shim of the `len`-byte Ethernet frame at `frame`.  Reads only;
 * every length is checked.  On PLOG_SHIM_OK `out` holds the fields.
 */
enum plog_shim_reason plog_shim_parse(const uint8_t *frame, size_t len, struct plog_shim *out);

/*
 * Insert a shim.  The caller has already grown the frame by PLOG_SHIM_LEN
 * bytes at its front (rte_pktmbuf_prepend()): `frame` is the new start and
 * `len` the new length, so the original frame starts at frame + PLOG_SHIM_LEN.
 * Moves the MAC addresses to the front and writes 0x88B5 and the shim, with
 * the original EtherType as the inner one.  Returns 0, or -1 when the
 * original frame is shorter than an Ethernet header, `ts` is 0, `flags` has a
 * bit outside PLOG_SHIM_F_KNOWN or the original frame is already shimmed
 * (never nested) -- the frame left unchanged.
 */
int plog_shim_push(uint8_t *frame, size_t len, uint64_t ts, uint8_t flags);

/*
 * Remove the shim of a frame that plog_shim_parse() accepted: restores the
 * inner EtherType and moves the MAC addresses PLOG_SHIM_LEN bytes forward.
 * The frame then starts at frame + PLOG_SHIM_LEN (rte_pktmbuf_adj() by that
 * much).  Returns 0, or -1 (nothing changed) when the frame has no valid shim.
 */
int plog_shim_pop(uint8_t *frame, size_t len);

/* The same, for a frame plog_shim_parse() just accepted into `sh` (no
 * second parse on a hot path).  Never fails. */
void plog_shim_strip(uint8_t *frame, const struct plog_shim *sh);

/* Rewrite the flags of a frame that has a valid shim (e.g. set REPLAY on a
 * logged copy when it is re-sent).  Returns 0 or -1. */
int plog_shim_set_flags(uint8_t *frame, size_t len, uint8_t flags);

#endif /* PLOG_SHIM_H */
