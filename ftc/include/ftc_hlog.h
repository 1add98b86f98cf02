/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_hlog.h -- the head's side of FTC's logs, for one NF instance: every
 * update it sent (a batch's dirty chunks, as the records of its log) is kept
 * until the commit vector says its replication group holds it f + 1 times,
 * so that a replica that asks for a gap (ftc_seq_missing()) can be sent it
 * again.  Updates are numbered 1, 2, ... in order; a commit drops every
 * update up to it.  A full log refuses a new update (the caller holds the
 * batch: nothing is sent that could not be sent again).  No I/O, no
 * allocation: the caller gives the memory (ftc_hlog_mem_size()).
 */
#ifndef FTC_HLOG_H
#define FTC_HLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftc_wire.h"

struct ftc_hlog;

/* Bytes of memory for at most `updates` updates (1 .. 65536) and `bytes`
 * bytes of records (each record's head included); 0 if out of range. */
size_t ftc_hlog_mem_size(unsigned int updates, uint32_t bytes);
/* Set up in `mem` (8-byte aligned); the first update will be `first` (1 ..
 * 2^63: numbers never wrap). */
struct ftc_hlog *ftc_hlog_init(void *mem, unsigned int updates, uint32_t bytes, uint64_t first);

/* A new update of these records: its sequence number, or 0 -- nothing
 * kept -- if the log is full (in updates or bytes), or the update is not
 * one the wire can carry: no record, or a record of 0 or more than
 * FTC_RECORD_MAX bytes. */
uint64_t ftc_hlog_append(struct ftc_hlog *h, const struct ftc_record_in *recs, unsigned int n);

/* The same, for records already in the wire's encoding (as a log's data:
 * region, length, offset, bytes; as an NF hands them over): copied once.
 * 0 also when they are not whole records of 1 .. FTC_RECORD_MAX bytes
 * filling `len` exactly. */
uint64_t ftc_hlog_append_encoded(struct ftc_hlog *h, const uint8_t *data, uint32_t len);

/* Update `seq`, kept: its records as a log's data (ftc_record_next() on a
 * struct ftc_log whose data and len these are); false if not kept
 * (committed already, or never made). */
bool ftc_hlog_get(const struct ftc_hlog *h, uint64_t seq, const uint8_t **data, uint32_t *len);

/* The group holds every update up to `seq`: they go.  Returns how many
 * went (a commit at or below an earlier one: none), or -1 for a commit of
 * an update never made (from the wire: refused, nothing changes). */
int ftc_hlog_commit(struct ftc_hlog *h, uint64_t seq);

/* The oldest update kept (0: none), the next to be made, and what is used. */
uint64_t ftc_hlog_oldest(const struct ftc_hlog *h);
uint64_t ftc_hlog_next(const struct ftc_hlog *h);
unsigned int ftc_hlog_count(const struct ftc_hlog *h);
uint32_t ftc_hlog_bytes(const struct ftc_hlog *h);

#endif /* FTC_HLOG_H */
