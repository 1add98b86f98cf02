/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_parts.h -- an update cut into parts that each fit a frame.  An
 * update's records (a log's data, as ftc_hlog keeps them) are dealt into
 * parts of at most `budget` bytes of records each, in order; a record
 * longer than what is left of a part is cut in two (the rest a record of
 * its own, its offset advanced).  The cut depends only on the update and
 * the budget, so a part sent again is byte for byte the part sent before
 * -- a replica holding some parts of an update can take the others from a
 * retransmission (ftc_seq.h).  No I/O, no allocation.
 */
#ifndef FTC_PARTS_H
#define FTC_PARTS_H

#include <stdint.h>

#include "ftc_wire.h"

/* The smallest budget: a record's head and one byte. */
#define FTC_PART_BUDGET_MIN (FTC_RECORD_HEAD_LEN + 1)

/* How many parts the update's `len` bytes of records make within
 * `budget`; 0 if it is no update (empty, not whole records), the budget is
 * below FTC_PART_BUDGET_MIN or above FTC_RECORD_MAX, or it would take more
 * than the wire's 255 parts. */
unsigned int ftc_parts_count(const uint8_t *data, uint32_t len, uint32_t budget);

/* Part `k`'s records into `out` (room for `budget` bytes): their length,
 * or -1 for no such part (or as ftc_parts_count() refuses). */
int ftc_part_build(const uint8_t *data, uint32_t len, uint32_t budget, unsigned int k,
		   uint8_t *out);

#endif /* FTC_PARTS_H */
