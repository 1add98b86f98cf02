/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_state.h -- NF state regions, dirty tracking and crash-atomic commit
 * (the core of local resiliency, SPEC §4-§5).
 *
 * Contract.  An NF declares up to NF_STATE_MAX_REGIONS named regions.  A pure
 * function turns the declarations into a layout: offsets inside ONE block
 * that the caller allocates (the manager: a memzone; tests: malloc) and
 * shares between the active NF and its standby.  The block holds, per
 * region, the canonical copy the NF works on in place, a replica holding the
 * last committed batch, a dirty bitmap and a dirty list.  Nothing in the
 * block is a pointer, so any process may map it anywhere; only the NF's own
 * data inside a canonical region may hold absolute pointers, which stay valid
 * because a promoted standby keeps working on the same canonical region
 * (DPDK maps a memzone at the same address in every process of a node).
 *
 * The NF must call nf_state_touch*() BEFORE it writes the bytes (a write is
 * covered once touch has returned).  Writes that are never touched are
 * neither committed nor rolled back on failover: they are a bug in the NF.
 * Every nf_state_commit() is one batch: it makes the replica equal the
 * canonical regions and advances the sequence number by one.  After the
 * active NF dies at any instruction, nf_state_recover() (run by the standby)
 * leaves canonical == replica == the last batch whose commit point was
 * reached; it returns that batch's sequence number.  How and why: see the
 * opening comment of onvm_state.c.
 *
 * One nf_state_set handle per process; handles are not thread-safe, and only
 * one process may touch/commit a block at a time (the active NF, or the
 * standby after it recovered).  No EAL call is made here.
 */
#ifndef ONVM_STATE_H
#define ONVM_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>

#define NF_STATE_MAX_REGIONS   16
#define NF_STATE_NAME_SIZE     32		   /* names are 1..31 characters [A-Za-z0-9_.-] */
#define NF_STATE_REGION_MAX    (UINT64_C(1) << 30) /* 1 GiB */
#define NF_STATE_CHUNK_DEFAULT 1024
#define NF_STATE_CHUNK_MIN     64
#define NF_STATE_CHUNK_MAX     (1u << 20)
#define NF_STATE_BLOCK_ALIGN   64 /* the block's base must be aligned this much */

/* One declaration.  chunk_size 0 means NF_STATE_CHUNK_DEFAULT. */
struct nf_state_request {
	const char *name;
	size_t size;
	uint32_t chunk_size;
};

/* Where one region's pieces live, as byte offsets from the block's base. */
struct nf_state_region_layout {
	char name[NF_STATE_NAME_SIZE];
	uint64_t size;	     /* bytes the NF asked for */
	uint64_t block_size; /* size rounded up to whole chunks */
	uint32_t chunk_size;
	uint32_t chunk_shift;
	uint32_t n_chunks;
	uint32_t bitmap_words; /* uint64_t words, one bit per chunk */
	uint64_t canon_off;    /* page aligned */
	uint64_t replica_off;  /* page aligned */
	uint64_t bitmap_off;
	uint64_t list_off; /* uint32_t chunk indexes, capacity n_chunks */
};

/* The whole block.  Computed deterministically, so the standby (same binary,
 * same declarations) computes the same one and attach can compare them. */
struct nf_state_layout {
	uint32_t n_regions;
	uint32_t reserved;
	uint64_t total_size; /* bytes the caller must provide */
	struct nf_state_region_layout regions[NF_STATE_MAX_REGIONS];
};

/* Process-local counters of one handle. */
struct nf_state_stats {
	uint64_t commits;
	uint64_t chunks_committed;
	uint64_t bytes_committed;
	uint64_t max_batch_chunks;
	/* Work done by commit outside the copies: bitmap words and dirty-list
	 * entries it read or wrote.  It is O(dirty chunks), never O(region). */
	uint64_t commit_bitmap_words;
	uint64_t commit_list_entries;
	uint64_t recoveries;
	uint64_t chunks_rolled_forward;
	uint64_t chunks_rolled_back;
	uint64_t full_region_restores; /* dirty list found corrupt */
};

/* Points where the test hook runs; the hook runs right after the named step.
 * k: for *_CHUNK steps, chunks done so far in this step (1..); for per-region
 * steps, the region index; otherwise 0. */
enum nf_state_step {
	NF_STATE_STEP_COMMIT_PUBLISHED,	 /* commit point: commit_seq = seq */
	NF_STATE_STEP_CHUNK_COPIED,	 /* one dirty chunk canonical -> replica */
	NF_STATE_STEP_REPLICA_PUBLISHED, /* replica_seq = seq */
	NF_STATE_STEP_BITS_CLEARED,	 /* one region's dirty bits cleared */
	NF_STATE_STEP_LIST_CLEARED,	 /* one region's dirty list emptied */
	NF_STATE_STEP_RECOVER_FORWARD_CHUNK,
	NF_STATE_STEP_RECOVER_REPLICA_PUBLISHED,
	NF_STATE_STEP_RECOVER_BACK_CHUNK,
	NF_STATE_STEP_RECOVER_REGION_CLEARED,
};

/* Test-only: called between steps so a test can longjmp out ("crash"). */
typedef void nf_state_step_fn(void *arg, enum nf_state_step step, uint32_t k);

/* Shared header at offset 0 of the block.  Private to onvm_state.c; here
 * only so tests can inspect it and damage it on purpose. */
struct nf_state_hdr {
	uint64_t magic; /* written last by format */
	uint32_t version;
	uint32_t hdr_size;
	struct nf_state_layout layout; /* as formatted; attach compares */

	/* Written by commit and recover only. */
	uint64_t commit_seq __rte_cache_aligned;
	uint64_t replica_seq;

	/* Entries in each region's dirty list; written on every first touch. */
	uint32_t dirty_n[NF_STATE_MAX_REGIONS] __rte_cache_aligned;
} __rte_cache_aligned;

/* Process-local view of a block.  Its fields are private to onvm_state.c;
 * the struct is here so callers can embed the handle without allocating. */
struct nf_state_region {
	uint8_t *canon;
	uint8_t *replica;
	uint64_t *bitmap;
	uint32_t *list;
	uint32_t *dirty_n; /* in the shared header */
	uint64_t size;
	uint64_t block_size;
	uint32_t chunk_size;
	uint32_t chunk_shift;
	uint32_t n_chunks;
	uint32_t bitmap_words;
};

struct nf_state_set {
	struct nf_state_hdr *hdr;
	uint8_t *base;
	uint32_t n_regions;
	uint64_t seq; /* last committed batch, as this handle knows it */
	struct nf_state_region regions[NF_STATE_MAX_REGIONS];
	struct nf_state_layout layout; /* private copy: stray writes can't move it */
	struct nf_state_stats stats;
	nf_state_step_fn *step_hook;
	void *step_arg;
};

/*
 * Compute the layout for `n` declarations.  Pure: no allocation, no global
 * state.  Returns 0, or -EINVAL (no regions, bad name, zero size, bad chunk
 * size), -E2BIG (region over 1 GiB, more than 16 regions) or -EEXIST
 * (duplicate name), with a sentence naming the region in err (may be NULL).
 */
int nf_state_layout_compute(struct nf_state_layout *out, const struct nf_state_request *reqs,
			    unsigned int n, char *err, size_t errlen);

/* Initialise a block for `layout`: everything zero, sequence 0.  The block
 * must be layout->total_size bytes at least, aligned to NF_STATE_BLOCK_ALIGN.
 * Returns 0 or -EINVAL. */
int nf_state_format(void *base, size_t size, const struct nf_state_layout *layout, char *err,
		    size_t errlen);

/* Build a handle on a formatted block.  Fails with -EINVAL unless the block
 * was formatted for exactly `layout`.  A process taking over a block that a
 * dead NF used must call nf_state_recover() before touching or committing. */
int nf_state_attach(struct nf_state_set *set, void *base, size_t size,
		    const struct nf_state_layout *layout, char *err, size_t errlen);

/* Region lookup and access (canonical copy, used in place by the NF). */
int nf_state_region_find(const struct nf_state_set *set, const char *name);
void *nf_state_region_ptr(const struct nf_state_set *set, unsigned int region);
const void *nf_state_replica_ptr(const struct nf_state_set *set, unsigned int region);
uint64_t nf_state_region_size(const struct nf_state_set *set, unsigned int region);

/* Mark every chunk overlapping [offset, offset + len) dirty for this batch.
 * O(1) per chunk.  len 0 marks nothing.  Returns 0, -EINVAL (no such region)
 * or -ERANGE (the range leaves the region); on error nothing is marked. */
int nf_state_touch(struct nf_state_set *set, unsigned int region, size_t offset, size_t len);

/* Same, by address inside a canonical region.  -EFAULT if ptr is in none. */
int nf_state_touch_ptr(struct nf_state_set *set, const void *ptr, size_t len);

/* Chunks marked so far in the current batch (all regions). */
uint32_t nf_state_dirty_chunks(const struct nf_state_set *set);
/*
 * Write `len` bytes at `offset` of `region` into the canonical region and
 * its replica alike, outside any batch: for a block whose owner runs no
 * batch meanwhile (a remote standby's parked NF, written by the manager).
 * Nothing is marked dirty and the sequence numbers do not move, so the
 * owner's own count of its batches stays right.  0, -EINVAL, -ERANGE.
 */
int nf_state_write_both(struct nf_state_set *set, unsigned int region, size_t offset,
			const void *data, size_t len);

/* The chunk indexes marked so far in the current batch in `region`, *n of
 * them (valid until the next touch or commit); NULL, *n = 0 for no region.
 * Region geometry: chunk size and count. */
const uint32_t *nf_state_dirty_list(const struct nf_state_set *set, unsigned int region,
				    uint32_t *n);
uint32_t nf_state_chunk_size(const struct nf_state_set *set, unsigned int region);
uint32_t nf_state_chunks(const struct nf_state_set *set, unsigned int region);

/* End of batch: copy the dirty chunks to the replicas, crash-atomically, and
 * start a new batch.  Returns the batch's sequence number (1, 2, ...).
 * Call it before enqueueing the batch's outputs. */
uint64_t nf_state_commit(struct nf_state_set *set);

/* Sequence number of the last batch fully in the replica. */
uint64_t nf_state_seq(const struct nf_state_set *set);

/*
 * Promotion: make canonical == replica == last committed batch after the
 * block's previous user died anywhere, and store that batch's sequence
 * number in *seq (may be NULL).  Idempotent, and safe to re-run after a
 * crash inside it.  Returns 0, or -EIO if the block's sequence numbers are
 * corrupt (state cannot be trusted).
 */
int nf_state_recover(struct nf_state_set *set, uint64_t *seq, char *err, size_t errlen);

/* Process-local counters of this handle. */
const struct nf_state_stats *nf_state_stats(const struct nf_state_set *set);

/* Test-only crash injection; fn NULL turns it off. */
void nf_state_set_step_hook(struct nf_state_set *set, nf_state_step_fn *fn, void *arg);

#endif /* ONVM_STATE_H */
