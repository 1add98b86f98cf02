/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_seq.h -- a replica's side of FTC's logs, for one NF instance: updates
 * are applied in sequence-number order, each whole, whatever order their
 * frames came in (a link may reorder or duplicate them, an update may be
 * split in parts).  A log ahead of the next one expected is held in a
 * window of `window` sequence numbers; a duplicate, or one already applied,
 * is refused (counted by the caller); one past the window is refused too --
 * the gap before it must be filled first (ftc_seq_missing() names the first
 * update lacking, for the caller to ask for).  No I/O, no allocation: the
 * caller gives the memory (ftc_seq_mem_size()).
 */
#ifndef FTC_SEQ_H
#define FTC_SEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftc_wire.h"

#define FTC_SEQ_MAX_PARTS 255 /* the wire's part count field */

enum ftc_seq_verdict {
	FTC_SEQ_HELD = 0,   /* taken: held until its turn (or whole) */
	FTC_SEQ_OLD,	    /* at or below what was applied: a duplicate */
	FTC_SEQ_DUP_PART,   /* a part already held */
	FTC_SEQ_TOO_FAR,    /* past the window: the gap before it first */
	FTC_SEQ_MISMATCH,   /* parts disagree with an earlier part of its update */
	FTC_SEQ_NO_ROOM,    /* its update's parts exceed a slot's bytes */
	FTC_SEQ_VERDICT_MAX,
};

const char *ftc_seq_verdict_str(enum ftc_seq_verdict v);

struct ftc_seq;

/* Bytes of memory for a window of `window` updates (1 .. 4096) of at most
 * `slot_bytes` bytes of records each; 0 if out of range. */
size_t ftc_seq_mem_size(unsigned int window, uint32_t slot_bytes);
/* Set up in `mem` (ftc_seq_mem_size() bytes, 8-byte aligned); the first
 * update expected is `next` (1 .. 2^63: numbers never wrap).  NULL if out
 * of range.  `slot_bytes` must hold the head's largest update (its
 * records' bytes): one that does not fit is refused (`no_room`). */
struct ftc_seq *ftc_seq_init(void *mem, unsigned int window, uint32_t slot_bytes, uint64_t next);

/* A log (one part of an update) received: its records' bytes copied. */
enum ftc_seq_verdict ftc_seq_offer(struct ftc_seq *s, const struct ftc_log *l);
/* Forget what is held of update `seq` (parts that disagreed, or filled its
 * slot: it is asked for again whole); false if none of it is held. */
bool ftc_seq_forget(struct ftc_seq *s, uint64_t seq);

/* The next update in order, if it is whole: its sequence number and parts
 * (ftc_seq_part()); ftc_seq_done() then moves on to the next. */
bool ftc_seq_ready(const struct ftc_seq *s, uint64_t *seq, unsigned int *parts);
/* Part `p` (below its parts: not checked) of the ready update: its records
 * (ftc_record_next() on a log whose data and len these are). */
void ftc_seq_part(const struct ftc_seq *s, unsigned int p, const uint8_t **data, uint32_t *len);
void ftc_seq_done(struct ftc_seq *s);

/* The next update expected (everything below it applied). */
uint64_t ftc_seq_next(const struct ftc_seq *s);
/* The first update lacking when a later one is held (a gap to ask for),
 * else 0. */
uint64_t ftc_seq_missing(const struct ftc_seq *s);
/* Updates held, whole or not. */
unsigned int ftc_seq_held(const struct ftc_seq *s);

#endif /* FTC_SEQ_H */
