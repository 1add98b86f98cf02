/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_ftc_ring.h -- an FTC chain's NF hands its updates to its manager
 * (docs/design/ftc.md, "The head").
 *
 * At the end of every batch that dirtied state, libnf writes the batch's
 * update -- its sequence number and a record of each dirty chunk's bytes,
 * in FTC's wire encoding (ftc/include/ftc_wire.h: region, length, offset,
 * bytes) -- into this ring, then publishes the sequence number in its slot
 * before the batch's outputs leave.  The manager takes the updates out, in
 * order, into its log of what its replicas have not confirmed.
 *
 * One producer (the NF) and one consumer (the manager): a byte ring in the
 * state pool, next to the NF's state block, holding no pointer.  An entry
 * is published whole by one release store of `prod`; an entry never wraps
 * around the end (a SKIP entry fills the rest first).  A full ring makes
 * the NF wait: an update is never dropped, nor cut short.  EAL-free.
 */
#ifndef ONVM_FTC_RING_H
#define ONVM_FTC_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ONVM_FTC_RING_MAGIC UINT64_C(0x4654435249474e31) /* "FTCRIGN1" */
#define ONVM_FTC_ENTRY_HEAD 16 /* bytes before an entry's records */
/* A whole-state update (asked for with the slot's ftc_full_req) begins
 * with a record of this region, 1 byte: a replica clears its copy before
 * it applies the rest (ftc/include/ftc_wire.h says the same). */
#define ONVM_FTC_RESET_REGION 0xffff

/* The shared header; the data follows it (ring.size bytes). */
struct onvm_ftc_ring {
	uint64_t magic;
	uint64_t size; /* data bytes: a multiple of 16 */
	uint64_t prod __attribute__((aligned(64))); /* bytes written, ever (atomic) */
	uint64_t prod_next; /* the producer's: where the reserved entry ends */
	uint64_t cons __attribute__((aligned(64))); /* bytes taken, ever (atomic) */
	uint8_t data[] __attribute__((aligned(64)));
};

/* An entry: len (32: the records' bytes; UINT32_MAX: SKIP to the end),
 * reserved (32), seq (64), then the records, padded to 16 bytes. */
struct onvm_ftc_entry {
	uint64_t seq;
	uint32_t len; /* bytes of records */
	const uint8_t *records;
};

/* The area for `data_bytes` of entries (rounded up to 16): what to allocate. */
size_t onvm_ftc_ring_area(size_t data_bytes);
/* Format `mem` (onvm_ftc_ring_area() bytes, 64-byte aligned); -1 if too small. */
int onvm_ftc_ring_format(void *mem, size_t area);
/* Check a formatted area (the NF, attaching): NULL unless it is one. */
struct onvm_ftc_ring *onvm_ftc_ring_attach(void *mem, size_t area);

/* The largest update's records one entry takes: a quarter of the ring, so
 * that a SKIP never leaves an entry without room for ever. */
uint32_t onvm_ftc_ring_max_update(const struct onvm_ftc_ring *r);

/* Producer: room for an entry of `len` bytes of records?  Then a pointer to
 * write them at (NULL: not now -- the consumer must take some first; or
 * never, if len > onvm_ftc_ring_max_update()). */
uint8_t *onvm_ftc_ring_reserve(struct onvm_ftc_ring *r, uint32_t len);
/* Publish the entry reserved last, its records written. */
void onvm_ftc_ring_publish(struct onvm_ftc_ring *r, uint64_t seq, uint32_t len);

/* Consumer: the oldest entry (false: none); onvm_ftc_ring_take() frees it. */
bool onvm_ftc_ring_peek(struct onvm_ftc_ring *r, struct onvm_ftc_entry *e);
void onvm_ftc_ring_take(struct onvm_ftc_ring *r);

#endif /* ONVM_FTC_RING_H */
