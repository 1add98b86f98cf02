/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The predecessor's packet log for one egress port (docs/spec.md section 6), a
 * library without I/O.
 *
 * Every packet the predecessor sends into a protected chain is appended here,
 * as sent (with its shim), until the primary's LOG_TRIM says a committed
 * checkpoint covers it; after a failover the entries left are replayed to the
 * standby.  The log is a byte ring in memory the caller provides, bounded in
 * packets (cfg.max_pkts) and bytes (the buffer).  An untrimmed entry is never
 * evicted: when either bound is reached plog_log_append() refuses the new
 * packet (counted) and the caller drops it at ingress -- losing a logged
 * packet silently would break recovery, losing new input is only loss.
 *
 * Entries are kept in timestamp order: an append whose timestamp is not
 * above the last one is refused (counted), so trimming is a walk from the
 * head and a replay cursor is a position.
 *
 * Layout: each record is a 16-byte header (timestamp, frame length, kind)
 * and the frame, padded to 8 bytes; a record never wraps around the end of
 * the buffer (a skip record, or less than a header of space, fills the rest).
 * Positions are absolute byte counts (64-bit, never wrapping in practice):
 * position % size is the offset in the buffer.
 *
 * Single-threaded: one thread (the logger unit) calls everything; a reader in
 * another thread (a dump requested by telemetry) must be serialised by the
 * owner.
 */
#ifndef PLOG_LOG_H
#define PLOG_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PLOG_LOG_REC_HDR 16	 /* record header bytes */
#define PLOG_LOG_MAX_FRAME 65535 /* longest frame a record holds */

struct plog_log_stats {
	uint64_t appended;	 /* packets logged */
	uint64_t appended_bytes; /* frame bytes logged */
	uint64_t trimmed;	 /* entries removed by plog_log_trim() */
	uint64_t trimmed_bytes;
	uint64_t refused_full_pkts;  /* appends refused: max_pkts entries untrimmed */
	uint64_t refused_full_bytes; /* appends refused: no room in the buffer */
	uint64_t refused_order;	     /* appends refused: timestamp not above the last */
	uint64_t refused_len;	     /* appends refused: length 0 or > PLOG_LOG_MAX_FRAME */
	uint64_t read;		     /* entries returned by plog_log_read() */
	uint32_t hwm_pkts;	     /* most entries held at once */
	uint64_t hwm_bytes;	     /* most buffer bytes in use at once */
};

struct plog_log {
	uint8_t *mem;
	uint64_t size;	    /* buffer bytes, a multiple of 8 */
	uint32_t max_pkts;
	uint64_t head;	    /* position of the oldest record */
	uint64_t tail;	    /* position after the newest record */
	uint64_t head_seq;  /* sequence number of the oldest entry */
	uint64_t tail_seq;  /* sequence number the next append gets */
	uint64_t frame_bytes; /* frame bytes held (without headers/padding) */
	uint64_t last_ts;   /* timestamp of the newest entry ever appended */
	uint64_t trimmed_to; /* highest watermark plog_log_trim() was given */
	struct plog_log_stats stats;
};

/* One entry, as plog_log_read() returns it.  `frame` points into the log and
 * stays valid until the entry is trimmed. */
struct plog_entry {
	uint64_t ts;
	uint64_t seq;
	const uint8_t *frame;
	uint32_t len;
};

/* A read position (replay).  Independent of appends; an entry trimmed under it
 * moves it to the oldest entry left. */
struct plog_cursor {
	uint64_t seq;
	uint64_t pos;
};

/*
 * Use the `size` bytes at `mem` (8-byte aligned) for a log of at most
 * `max_pkts` entries.  `size` is rounded down to a multiple of 8 and must be
 * at least 64 bytes; frames longer than the buffer can ever hold are refused
 * by plog_log_append().  Returns 0 or -EINVAL.
 */
int plog_log_init(struct plog_log *log, void *mem, size_t size, uint32_t max_pkts);

/*
 * Append a `len`-byte frame with timestamp `ts`.  Returns 0; -ENOSPC when the
 * log is full (by packets or bytes; counted); -ERANGE when `ts` is not above
 * the last appended timestamp; -EINVAL for a length of 0, above
 * PLOG_LOG_MAX_FRAME, or more than this log's buffer could ever hold.  Never
 * evicts an entry; an empty log takes any frame the buffer can hold.  O(1)
 * plus the copy.
 */
int plog_log_append(struct plog_log *log, uint64_t ts, const void *frame, uint32_t len);

/*
 * Remove every entry with a timestamp <= `watermark` (a committed checkpoint
 * covers them).  A watermark at or below an earlier one changes nothing.
 * Returns the number of entries removed.  O(entries removed).
 */
uint32_t plog_log_trim(struct plog_log *log, uint64_t watermark);

/* Entries and frame bytes held now. */
uint32_t plog_log_pkts(const struct plog_log *log);
uint64_t plog_log_bytes(const struct plog_log *log);
/* Timestamp of the oldest entry held, 0 if empty. */
uint64_t plog_log_oldest_ts(const struct plog_log *log);

/*
 * Place `c` on the first entry with a timestamp > `after_ts` (0: the oldest
 * entry).  O(entries skipped): used once per replay.
 */
void plog_log_seek(const struct plog_log *log, struct plog_cursor *c, uint64_t after_ts);

/* Place `c` after the newest entry: the next entry appended is the first it
 * reads.  O(1): taken before an append whose frame may have to be resent
 * from the log. */
void plog_log_seek_end(const struct plog_log *log, struct plog_cursor *c);

/*
 * Return the entry at `c` in `e` and advance `c`: 1, or 0 when `c` is at the
 * end (entries appended later are returned by later calls).  A cursor left
 * behind by a trim continues at the oldest entry left.
 */
int plog_log_read(struct plog_log *log, struct plog_cursor *c, struct plog_entry *e);

/* The entry plog_log_read() would return next, without advancing: 1, or 0
 * at the end.  (A replay sizes its mbufs before it takes the entry.) */
int plog_log_peek(struct plog_log *log, struct plog_cursor *c, struct plog_entry *e);

/*
 * Write the entries held as a pcapng capture (one Section Header Block, one
 * Interface Description Block for Ethernet, one Enhanced Packet Block per
 * entry, oldest first) through `write` (returns 0, or -1 to stop).  Each
 * EPB's timestamp field holds the entry's logical timestamp (in the IDB's
 * default microsecond units) and an opt_comment "ts=<n>".  `if_name` names
 * the interface (the port).  Returns 0, or -1 if `write` failed.
 */
int plog_log_write_pcapng(const struct plog_log *log, const char *if_name,
			  int (*write)(void *ctx, const void *buf, size_t len), void *ctx);

#endif /* PLOG_LOG_H */
