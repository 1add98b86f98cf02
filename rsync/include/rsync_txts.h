/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The Transmit Timestamps table (TxTs, REINFORCE section III-C): per flow,
 * the highest logical timestamp of a packet released to the outside.  The
 * standby keeps the whole table (merged from every committed transaction)
 * and, after a takeover, drops each output whose timestamp is <= its flow's
 * entry: the primary already released it.  The primary keeps one small table
 * per latch stage, the stage's delta, that PREPARE carries.
 *
 * Why per flow and not one watermark: a chain keeps each flow's packets in
 * order (a flow always maps to the same instance, rings are FIFO) but not the
 * order between flows, so only a flow's own outputs form a prefix.
 *
 * Flows are keyed by their exact 5-tuple as the packet entered the chain
 * (before any NF rewrote it), not by a hash, so two flows never share an
 * entry.  Open addressing with linear probing in a power-of-two array the
 * caller sizes; the probe hash is keyed with a per-table random seed, since
 * the keys come from outside.  Entries whose timestamp is at or below a
 * committed cut can never match a processed packet again and are removed by
 * rsync_txts_gc() (backward-shift deletion: no tombstones).
 *
 * A table may keep the order in which entries were first inserted (`order`
 * array): a stage delta is then iterated and cleared in O(entries), not
 * O(capacity).  Single-threaded.
 */
#ifndef RSYNC_TXTS_H
#define RSYNC_TXTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A flow's key: same layout as struct onvm_flow_key (16 bytes). */
struct rsync_flow {
	uint32_t src_ip, dst_ip;
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t pad[3]; /* zero */
};
_Static_assert(sizeof(struct rsync_flow) == 16, "a flow key is 16 bytes");

struct rsync_txts_slot {
	struct rsync_flow key;
	uint64_t ts; /* 0: empty slot */
};

struct rsync_txts_stats {
	uint64_t raised;     /* rsync_txts_raise() calls that changed an entry */
	uint64_t inserted;   /* of those, new flows */
	uint64_t full;	     /* raises refused: table at its load limit */
	uint64_t gc_removed; /* entries rsync_txts_gc() removed */
	uint64_t probes_max; /* longest probe sequence seen */
};

struct rsync_txts {
	struct rsync_txts_slot *slots;
	uint32_t mask;	  /* capacity - 1 */
	uint32_t n;	  /* entries */
	uint32_t max_n;	  /* load limit: 3/4 of capacity */
	uint64_t seed;
	uint32_t *order;  /* NULL, or slot indexes in first-insert order (n of them) */
	struct rsync_txts_stats stats;
};

/* Bytes rsync_txts_init() needs for `capacity` slots (a power of two >= 4),
 * with the insert-order array when `ordered`. */
size_t rsync_txts_mem_size(uint32_t capacity, bool ordered);

/* Use `mem` (rsync_txts_mem_size() bytes, 8-byte aligned).  Returns 0, or
 * -EINVAL for a capacity that is not a power of two >= 4.  An ordered table
 * cannot be garbage-collected (it is cleared whole). */
int rsync_txts_init(struct rsync_txts *t, void *mem, uint32_t capacity, bool ordered,
		    uint64_t seed);

/* Make `flow`'s entry at least `ts` (ts > 0).  Returns 0, or -ENOSPC when a
 * new flow does not fit (counted; the entry is not recorded).  O(1) expected. */
int rsync_txts_raise(struct rsync_txts *t, const struct rsync_flow *flow, uint64_t ts);

/* `flow`'s entry, 0 if none. */
uint64_t rsync_txts_get(const struct rsync_txts *t, const struct rsync_flow *flow);

/* Remove every entry with ts <= `watermark`.  Returns how many.  O(capacity).
 * Not for ordered tables (returns 0). */
uint32_t rsync_txts_gc(struct rsync_txts *t, uint64_t watermark);

/* Empty the table: O(entries) for an ordered table, O(capacity) otherwise. */
void rsync_txts_clear(struct rsync_txts *t);

/* Entry `i` (0 <= i < n) of an ordered table, in first-insert order. */
const struct rsync_txts_slot *rsync_txts_at(const struct rsync_txts *t, uint32_t i);

#endif /* RSYNC_TXTS_H */
