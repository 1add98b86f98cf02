/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_wire.h -- FTC's piggyback header (Ghaznavi et al., "Fault Tolerant
 * Service Function Chaining", SIGCOMM 2020), without I/O: the state updates
 * of an NF ride on the packets themselves to the next f servers of the
 * chain, and the commit vector says, per NF instance, up to which update
 * its replication group holds f + 1 copies.  docs/wire-format.md draws it
 * with the rest of the project's formats.
 *
 * It shares remote resiliency's EtherType, told apart by its version byte
 * (the timestamp shim is version 1, pkt_logger/plog_shim.h): a node of one
 * scheme refuses the other's frames, counted as `bad_version` by either
 * parser.
 *
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |          destination MAC (6) ...  source MAC (6)              |
 *  +-------------------------------+---------------+---------------+
 *  |     EtherType 0x88B5          |  version = 2  |     flags     |
 *  +-------------------------------+---------------+---------------+
 *  |     inner EtherType           |        section length         |
 *  +---------------+---------------+-------------------------------+
 *  |  log count    | commit count  |  the logs, then the commits
 *  +---------------+---------------+  (section length bytes) ...
 *  |  the packet as it was, after its EtherType (none: PROPAGATE)
 *
 *  a log (16 bytes, then its data):
 *  +-------------------------------+---------------+---------------+
 *  |     NF instance               |     part      |    parts      |
 *  +-------------------------------+---------------+---------------+
 *  |     data length (bytes of records that follow)                |
 *  +---------------------------------------------------------------+
 *  |     sequence number (64 bits): the instance's update, from 1  |
 *  +---------------------------------------------------------------+
 *  a record: region (16) | length (16) | offset (32) | length bytes
 *
 *  a commit (12 bytes):
 *  |     NF instance               |     kind      | span / 0      |
 *  |     sequence number (64 bits)                                 |
 *  kind 0, held: every update of the instance up to it is held by
 *  f + 1 members of its replication group; kind 1, need: the packet may
 *  leave the chain only once the instance's updates up to it are held;
 *  kind 2, void: the instance was recovered from its update seq (0: it had
 *  made none that reached a replica), and its
 *  numbers seq + 1 .. seq + span x 2^32 are void (a dead incarnation's,
 *  lost; span 1..255, 0 for the other kinds); kind 3, applied: every
 *  member of the group from the head to the sender applied the updates up
 *  to seq (0: one of them has no copy) -- the tail's held is its own and
 *  this, so a member that lacks them holds the release back
 *
 * All fields in network byte order.  An update too large for one frame is
 * split into parts (part 0 .. parts - 1) of one sequence number, carried by
 * successive frames; a replica applies it only whole.  A frame with the
 * PROPAGATE flag carries no packet (inner EtherType 0): logs that did not
 * fit beside a packet go ahead of it on one, and entries (the egress's held
 * vector on its way back to the ingress) when traffic stops.
 */
#ifndef FTC_WIRE_H
#define FTC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FTC_ETHERTYPE 0x88B5 /* IEEE 802 local experimental 1, shared with the shim */
#define FTC_VERSION 2
#define FTC_MAC_LEN 12	       /* destination + source MAC */
#define FTC_HEAD_LEN 10	       /* EtherType .. commit count */
#define FTC_LOG_HEAD_LEN 16
#define FTC_RECORD_HEAD_LEN 8
#define FTC_COMMIT_LEN 12
#define FTC_MAX_LOGS 16	       /* logs in one frame: f + 1 groups of a chain, at most */
#define FTC_MAX_COMMITS 64     /* commit entries in one frame: a few kinds per instance */
#define FTC_MAX_SECTION 0xffff /* the section length's field */
/* The longest record: alone in a section, after its log's head. */
#define FTC_RECORD_MAX (FTC_MAX_SECTION - FTC_LOG_HEAD_LEN - FTC_RECORD_HEAD_LEN)
#define FTC_FRAME_MAX (1u << 24) /* a frame ftc_build() or ftc_strip() takes, at most */

#define FTC_F_PROPAGATE 0x01 /* no packet: logs and entries alone */
#define FTC_F_KNOWN FTC_F_PROPAGATE

/* Why a frame was refused (counted by the receiver, one counter each). */
enum ftc_reason {
	FTC_OK = 0,
	FTC_NOT_FTC,	  /* another EtherType: a plain packet, not an error */
	FTC_SHORT,	  /* shorter than the MACs and the head */
	FTC_BAD_VERSION,  /* 0x88B5 of another version (the shim's is 1) */
	FTC_BAD_FLAGS,	  /* unknown flag bits */
	FTC_BAD_INNER,	  /* inner EtherType 0 with a packet, not 0 without, or 0x88B5 */
	FTC_BAD_LENGTH,	  /* the section past the frame, or not filled exactly */
	FTC_TOO_MANY,	  /* more logs or commits than the limits */
	FTC_BAD_PART,	  /* parts 0, or part >= parts */
	FTC_ZERO_SEQ,	  /* sequence number 0 (they start at 1) */
	FTC_BAD_RECORD,	  /* a record of length 0, or past its log's data, or the
			   * records not filling it exactly */
	FTC_BAD_RESERVED, /* a reserved field not 0 (a void's span 0) */
	FTC_DUP_COMMIT,	  /* two commits of one instance and kind */
	FTC_BAD_KIND,	  /* a commit of an unknown kind */
	FTC_REASON_MAX,
};

const char *ftc_reason_str(enum ftc_reason r);

/* A frame ftc_parse() accepted: where its parts are (pointers into it). */
struct ftc_view {
	const uint8_t *frame;
	size_t len;
	uint8_t flags;
	uint16_t inner_ethertype;
	uint8_t n_logs, n_commits;
	uint32_t log_off[FTC_MAX_LOGS]; /* each log's head, from the frame's start */
	uint32_t commit_off;		/* the first commit */
	uint32_t payload_off;		/* the packet after its EtherType */
};

struct ftc_log {
	uint16_t instance;
	uint8_t part, parts;
	uint32_t len; /* bytes of records */
	uint64_t seq;
	const uint8_t *data;
};

struct ftc_record {
	uint16_t region;
	uint16_t len;
	uint32_t offset; /* in the region */
	const uint8_t *bytes;
};

/* A commit's kind: what its sequence number says about the instance. */
enum ftc_commit_kind {
	FTC_HELD = 0, /* its updates up to seq are on f + 1 nodes */
	FTC_NEED = 1, /* this packet leaves only once they are */
	FTC_VOID = 2,	 /* recovered from seq: the next span x 2^32 numbers are void */
	FTC_APPLIED = 3, /* the group's members up to the sender applied up to seq */
};
/* A recovered instance numbers its updates on from seq + span x
 * FTC_VOID_SPAN (past every number the replicas saw): a packet that needs
 * one of the numbers between depends on an update lost with the dead
 * incarnation. */
#define FTC_VOID_SPAN (UINT64_C(1) << 32)

struct ftc_commit {
	uint16_t instance;
	uint8_t kind; /* enum ftc_commit_kind */
	uint8_t span; /* FTC_VOID: 1..255; else 0 */
	uint64_t seq; /* at least 1, but for FTC_APPLIED and FTC_VOID */
};

/* Check a received frame against the layout above; on FTC_OK fill `v`. */
enum ftc_reason ftc_parse(const uint8_t *frame, size_t len, struct ftc_view *v);
/* Log / commit `k` of an accepted frame (k below its count: not checked). */
void ftc_log_get(const struct ftc_view *v, unsigned int k, struct ftc_log *out);
void ftc_commit_get(const struct ftc_view *v, unsigned int k, struct ftc_commit *out);
/* The next record of an accepted log from `*pos` (start at 0): false at its end. */
bool ftc_record_next(const struct ftc_log *l, uint32_t *pos, struct ftc_record *out);

/* What a sender puts in: a log's records, and its logs. */
struct ftc_record_in {
	uint16_t region;
	uint16_t len;
	uint32_t offset;
	const void *bytes;
};

struct ftc_log_in {
	uint16_t instance;
	uint8_t part, parts;
	uint64_t seq;
	const struct ftc_record_in *recs;
	unsigned int n_recs;
};

/* The section's bytes for these logs and `n_commits` commits (no check). */
size_t ftc_section_len(const struct ftc_log_in *logs, unsigned int n_logs,
		       unsigned int n_commits);

/*
 * Build into `out` (room `cap`) the frame `pkt` (`pkt_len` bytes, its MACs
 * first) with the FTC header, logs and commits inserted after its MACs; with
 * FTC_F_PROPAGATE `pkt` is only the MACs (pkt_len 12).  Returns the new
 * frame's length, or -1 with `out` untouched: no room, or what was given
 * would not parse (the same rules: a sender never sends what a receiver
 * refuses).  `out` must not overlap `pkt` or the records' bytes.
 */
int ftc_build(uint8_t *out, size_t cap, const uint8_t *pkt, size_t pkt_len, uint8_t flags,
	      const struct ftc_log_in *logs, unsigned int n_logs, const struct ftc_commit *commits,
	      unsigned int n_commits);

/*
 * The same encoding in pieces, for a sender whose logs are already encoded
 * (the manager's queue of log parts): the head after the MACs at `h`
 * (FTC_HEAD_LEN bytes), a log's head (FTC_LOG_HEAD_LEN; its data follows),
 * a commit (FTC_COMMIT_LEN).  No check: ftc_build()'s rules are the
 * caller's.
 */
void ftc_put_head(uint8_t *h, uint8_t flags, uint16_t inner, uint16_t section,
		  unsigned int n_logs, unsigned int n_commits);
void ftc_put_log_head(uint8_t *w, uint16_t instance, uint8_t part, uint8_t parts,
		      uint32_t len, uint64_t seq);
void ftc_put_commit(uint8_t *w, const struct ftc_commit *c);

/* Strip an accepted frame in place, without moving its payload: the MACs
 * and the inner EtherType are written just before the payload.  Returns
 * how many bytes to cut off the frame's front (the packet then starts
 * there); -1 for a propagating frame (no packet). */
int ftc_strip_front(uint8_t *frame, const struct ftc_view *v);

/* The packet as it was before ftc_build(): its MACs, inner EtherType and
 * payload, into `out`.  Returns its length, or -1 (no room, or a
 * propagating frame: no packet). */
int ftc_strip(uint8_t *out, size_t cap, const struct ftc_view *v);

#endif /* FTC_WIRE_H */
