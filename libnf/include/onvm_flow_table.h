/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_flow_table.h -- a per-flow table that lives in a libnf state region,
 * so that it survives failover, with idle expiry.
 *
 * Every NF of the suite keeps "something per flow" (a tag, a backend, a NAT
 * mapping, nDPI's detection state): this is that table, written once.  It is
 * an open-addressing hash table with linear probing and backward-shift
 * deletion (no tombstones, so lookups stay short after many expiries), kept
 * at most 3/4 full.  Everything -- header, entries, counters -- sits inside
 * the memory the NF hands over (a state region), holds no pointers, and every
 * write is announced with nf_state_touch_ptr() first, so the replica always
 * matches the packets emitted and a promoted standby simply re-opens it.
 *
 * Values are fixed-size blobs the NF defines (value_size bytes, 8-aligned,
 * zeroed on insert).  Before writing a value the NF calls
 * onvm_ft_touch_value() (or writes through onvm_ft_insert()'s return in the
 * same packet: insert touches the whole entry).
 *
 * Keys are directional 5-tuples; onvm_flow_key_canon() folds the two
 * directions of a connection into one key for NFs that want one entry per
 * connection (dpi).  Times are whatever clock the NF passes (libnf NFs:
 * nf_clock_ns(): the chain's clock, the same on a remote standby after
 * its takeover); only differences are used.
 *
 * A standby must not open a table before it is promoted: until then the
 * active NF is writing it.  Not thread-safe; used by the NF's one thread (EAL-free: unit tests use it
 * on malloc'ed state sets).
 */
#ifndef ONVM_FLOW_TABLE_H
#define ONVM_FLOW_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onvm_pkt_parse.h"
#include "onvm_state.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ONVM_FT_CAPACITY_MIN   16
#define ONVM_FT_CAPACITY_MAX   (1u << 26)
#define ONVM_FT_VALUE_MAX      4096

struct onvm_ft_stats {
	uint64_t inserts;
	uint64_t removes;
	uint64_t expired;
	uint64_t full;	/* inserts refused: table at its load limit */
};

/* At offset 0 of the table's memory.  Private layout; here for sizeof. */
struct onvm_ft_hdr {
	uint64_t magic;
	uint32_t capacity;
	uint32_t value_size;
	uint32_t entry_size;
	uint32_t count;
	uint32_t sweep_cursor;
	uint32_t pad;
	struct onvm_ft_stats stats;
};

/* One slot; the value follows at offset sizeof(struct onvm_ft_entry). */
struct onvm_ft_entry {
	struct onvm_flow_key key;
	uint64_t last_seen_ns;
	uint64_t created_ns;
	uint32_t used;
	uint32_t route; /* 1 + the routing bucket of the packet that made it; 0: unknown */
};

/* Process-local handle. */
struct onvm_ft {
	struct onvm_ft_hdr *hdr;
	uint8_t *slots;
	uint32_t mask;
	uint32_t entry_size;
	struct nf_state_set *state; /* NULL: memory not tracked (tools, offline use) */
};

/* Bytes of memory a table of `capacity` (a power of two) entries with
 * `value_size`-byte values needs; 0 if the arguments are out of range. */
size_t onvm_ft_mem_size(uint32_t capacity, uint32_t value_size);

/*
 * Open a table in `mem` (len bytes, 8-aligned, normally a whole state
 * region).  Fresh memory (all zero: checked) is formatted; memory already holding a
 * table -- a standby promoted onto the dead NF's region -- is attached after
 * checking it was formatted with the same capacity and value size.
 * `state` is the set `mem` belongs to (every write is touched through it).
 * Returns 0, -EINVAL (bad arguments, len too small) or -EBADMSG (the memory
 * holds something else, or a table of another shape), with a reason in err.
 */
int onvm_ft_open(struct onvm_ft *ft, struct nf_state_set *state, void *mem, size_t len,
		 uint32_t capacity, uint32_t value_size, char *err, size_t errlen);

/*
 * Attach to a table already formatted in `mem` (len bytes), whatever its
 * shape, read from its header -- libnf finding an NF's tables in its state
 * regions to move flows.  Returns 0, or -EBADMSG when `mem` holds no
 * table (or one that does not fit len).
 */
int onvm_ft_attach(struct onvm_ft *ft, struct nf_state_set *state, void *mem, size_t len);

/* The value stored for `key`, or NULL. */
void *onvm_ft_lookup(const struct onvm_ft *ft, const struct onvm_flow_key *key);

/*
 * The value for `key`, inserting a zeroed one stamped `now_ns` if there is
 * none (*created tells which; may be NULL).  NULL when the table is at its
 * load limit (counted in stats.full).  The entry is touched, so the caller
 * may write the value during this packet without touching it again.
 */
void *onvm_ft_insert(struct onvm_ft *ft, const struct onvm_flow_key *key, uint64_t now_ns,
		     bool *created);

/* Announce a write to a value (before writing it). */
void onvm_ft_touch_value(struct onvm_ft *ft, const void *value);

/* Record activity on a flow: its idle timer restarts at now_ns. */
void onvm_ft_seen(struct onvm_ft *ft, void *value, uint64_t now_ns);

/* Remove the entry holding `value` (from lookup/insert/iteration). */
void onvm_ft_remove(struct onvm_ft *ft, void *value);

/* Called for each entry expire() removes, before it goes. */
typedef void onvm_ft_evict_fn(void *arg, const struct onvm_flow_key *key, void *value);

/*
 * Remove entries idle for at least idle_ns, passing no more than max_slots
 * slots (a removal does not use up budget: the slot is looked at again),
 * resuming where the previous call stopped, so a periodic call with a small
 * budget sweeps the table incrementally and a budget of the capacity sweeps
 * it whole.  Returns the number removed.
 */
uint32_t onvm_ft_expire(struct onvm_ft *ft, uint64_t now_ns, uint64_t idle_ns, uint32_t max_slots,
			onvm_ft_evict_fn *fn, void *arg);

/*
 * Moving flows between instances (docs/design/elastic.md): the entries a
 * filter selects, as records another instance of the same NF imports.
 * A record is a struct onvm_ft_record and the value's bytes (its size
 * rounded up to 8), in host byte order (the two instances run the same
 * binary on the same architecture).  Entries hold no pointers, so a copy
 * is the flow's state.  Times travel as ages: two instances' clocks differ
 * (another node's, a promoted standby's offset), so the exporter writes
 * how long ago the flow was last seen and created, by its clock, and the
 * importer puts them back on its own.
 */
struct onvm_ft_record {
	struct onvm_flow_key key;
	uint64_t idle_ns;    /* now - last seen, by the exporter's clock */
	uint64_t age_ns;     /* now - created */
	uint32_t value_size; /* the table's value size (onvm_ft_open), exactly */
	uint32_t magic;	     /* ONVM_FT_RECORD_MAGIC */
	uint32_t route;	     /* the entry's route (struct onvm_ft_entry) */
	uint32_t reserved;   /* 0 */
};
#define ONVM_FT_RECORD_MAGIC 0x4654524du /* "FTRM" */

/* Bytes one record of this table takes. */
size_t onvm_ft_record_size(const struct onvm_ft *ft);

/* A filter: true for the flows to export (or remove), by key or by route
 * (1 + the routing bucket of the packet that created the entry, 0: not
 * known -- onvm_ft_set_route()).  It must not change the table, and may
 * be called more than once for an entry. */
typedef bool onvm_ft_filter_fn(void *arg, const struct onvm_flow_key *key, uint32_t route);

/*
 * The route entries inserted from now on by this thread are stamped with
 * (libnf sets it before each packet it hands to a packet handler: 1 + the
 * packet's bucket, ONVM_FLOW_BUCKET(meta->flow_hash); 0 in a batch handler
 * or a tick, where no one packet is current).  The manager routes a flow
 * by the hash of the 5-tuple it entered the chain with, which an NF
 * further on may not see (a balancer rewrote it): the route is how a move
 * finds the entries of the buckets it moves, whatever their keys.
 */
void onvm_ft_set_route(uint32_t route);

/*
 * While set (per thread), onvm_ft_expire() keeps the entries `keep`
 * selects however idle (NULL: none kept).  libnf keeps the entries of
 * flows being moved to or from this NF: an expiry on one side only would
 * leave the two copies of a flow's state different.
 */
void onvm_ft_set_expire_keep(onvm_ft_filter_fn *keep, void *arg);

/*
 * Write the records of the entries `want` selects (NULL: all) into buf,
 * from slot *cursor on, as many as fit in len (at least one record's
 * size, or nothing is written and the cursor stays), ages by `now_ns`;
 * *cursor is where to go on (the capacity: done), *nrec (if not NULL) the
 * records written.  Returns the bytes written.  All the calls of one
 * export must fall in one gap between batches: the table must not change
 * in between (a removal's backward shift would move entries across the
 * cursor).
 */
size_t onvm_ft_export(const struct onvm_ft *ft, onvm_ft_filter_fn *want, void *arg,
		      uint64_t now_ns, uint32_t *cursor, void *buf, size_t len, uint32_t *nrec);

/* Why a record was refused on import (counted by the caller). */
enum onvm_ft_import_error {
	ONVM_FT_IMPORT_OK = 0,
	ONVM_FT_IMPORT_SHORT,	   /* a record cut short */
	ONVM_FT_IMPORT_MAGIC,	   /* not a record */
	ONVM_FT_IMPORT_VALUE_SIZE, /* another NF's table, or another version of it */
	ONVM_FT_IMPORT_KEY_PAD,	   /* a key (or the record) with its padding set */
	ONVM_FT_IMPORT_FULL,	   /* this table at its load limit (stats.full, as an insert) */
};

/*
 * Insert the records of buf (an export's output), their times put back by
 * `now_ns` (an age beyond now: seen or created at 0): an entry of the same
 * key is overwritten -- the exporting instance's is the flow's state.
 * Stops at the first record it refuses.  Returns the records imported;
 * *error (if not NULL) says why it stopped early (ONVM_FT_IMPORT_OK: all
 * of buf).  A move that then fails leaves what was imported: the importer
 * removes it (onvm_ft_remove_if) if it must.
 */
uint32_t onvm_ft_import(struct onvm_ft *ft, const void *buf, size_t len, uint64_t now_ns,
			enum onvm_ft_import_error *error);
const char *onvm_ft_import_error_str(enum onvm_ft_import_error e);

/* Remove every entry `want` selects (NULL: all) -- the exporting instance
 * freeing moved flows.  Returns the number removed. */
uint32_t onvm_ft_remove_if(struct onvm_ft *ft, onvm_ft_filter_fn *want, void *arg);

/* When the entry holding `value` was created (onvm_ft_insert's now_ns). */
uint64_t onvm_ft_created(const struct onvm_ft *ft, const void *value);

/* Iteration: slots 0..capacity-1, NULL for an empty slot. */
void *onvm_ft_slot_value(const struct onvm_ft *ft, uint32_t slot);
const struct onvm_flow_key *onvm_ft_key(const struct onvm_ft *ft, const void *value);
uint64_t onvm_ft_last_seen(const struct onvm_ft *ft, const void *value);

static inline uint32_t
onvm_ft_capacity(const struct onvm_ft *ft)
{
	return ft->mask + 1;
}

static inline uint32_t
onvm_ft_count(const struct onvm_ft *ft)
{
	return ft->hdr->count;
}

static inline const struct onvm_ft_stats *
onvm_ft_stats(const struct onvm_ft *ft)
{
	return &ft->hdr->stats;
}

/*
 * Fold the two directions of a connection into one key: the (address, port)
 * pair that compares lower goes first.  Returns true if `in` was the reverse
 * direction (its endpoints were swapped).
 */
static inline bool
onvm_flow_key_canon(const struct onvm_flow_key *in, struct onvm_flow_key *out)
{
	bool swap = in->src_ip > in->dst_ip ||
		    (in->src_ip == in->dst_ip && in->sport > in->dport);

	*out = *in;
	if (swap) {
		out->src_ip = in->dst_ip;
		out->dst_ip = in->src_ip;
		out->sport = in->dport;
		out->dport = in->sport;
	}
	return swap;
}

#ifdef __cplusplus
}
#endif
#endif /* ONVM_FLOW_TABLE_H */
