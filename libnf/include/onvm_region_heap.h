/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_region_heap.h -- malloc/free inside a libnf state region, for NFs
 * whose state is built by a library that allocates (nDPI).
 *
 * A library's heap objects must survive failover like the rest of the NF's
 * state, so they cannot live in the process's own heap.  This allocator
 * carves a state region into power-of-two blocks (segregated free lists, a
 * bump pointer for fresh memory); all of its metadata is in the region and
 * holds offsets, never pointers, and every metadata write is touched first.
 * Pointers it returns are absolute addresses inside the canonical region,
 * which stay valid for a standby on the same node (libnf works on the
 * canonical region in place).
 *
 * The library writes its blocks without telling anyone, so the heap offers
 * two ways to get those writes committed:
 *   - owners: while an owner is current, every block allocated is linked to
 *     it; onvm_rh_touch_owner() touches all of an owner's blocks.  An NF that
 *     knows which object a library call may modify (dpi: one flow) makes the
 *     flow the owner and touches its blocks before the call;
 *   - a full touch of the heap's used part (onvm_rh_touch_all), for memory
 *     the library may write anywhere (rare, costly).
 *
 * One thread per heap; EAL-free (unit tests use it on test_state regions).
 */
#ifndef ONVM_REGION_HEAP_H
#define ONVM_REGION_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onvm_state.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ONVM_RH_MIN_SHIFT 5  /* smallest block: 32 bytes incl. header */
#define ONVM_RH_MAX_SHIFT 30 /* largest block: 1 GiB */
#define ONVM_RH_CLASSES	  (ONVM_RH_MAX_SHIFT - ONVM_RH_MIN_SHIFT + 1)

struct onvm_rh_stats {
	uint64_t allocs;
	uint64_t frees;
	uint64_t failed;      /* allocations refused: region full */
	uint64_t bad_frees;   /* free() of something that is not a live block */
	uint64_t live_blocks;
	uint64_t live_bytes;  /* payload bytes asked for, live */
	uint64_t peak_used;   /* high-water mark of the bump pointer */
};

/* An owner: the head of a list of blocks, kept inside the heap (it is a
 * field of a block the NF allocated) so that it survives with the heap. */
struct onvm_rh_owner {
	uint64_t head; /* offset of the first owned block, 0 = none */
	uint64_t blocks;
};

/* At offset 0 of the region.  Private layout; here for sizeof. */
struct onvm_rh_hdr {
	uint64_t magic;
	uint64_t size; /* bytes of the region the heap manages */
	uint64_t top;  /* bump pointer: first never-used byte */
	uint64_t free_head[ONVM_RH_CLASSES];
	struct onvm_rh_stats stats;
	uint64_t user_root; /* one offset the NF may keep here (its root object) */
};

/* Process-local handle. */
struct onvm_rh {
	struct onvm_rh_hdr *hdr;
	uint8_t *base;
	struct nf_state_set *state; /* NULL: untracked (offline tools) */
	struct onvm_rh_owner *owner; /* current owner (process-local choice) */
	bool attached;		     /* found formatted by onvm_rh_open() */
};

/*
 * Open a heap over `mem` (len bytes, 64-aligned; a whole state region).
 * Fresh (zeroed) memory is formatted; a heap already there (a standby
 * promoted onto it) is attached after checking it.  Returns 0, -EINVAL or
 * -EBADMSG with a reason in err.
 */
int onvm_rh_open(struct onvm_rh *h, struct nf_state_set *state, void *mem, size_t len, char *err,
		 size_t errlen);

/* True when the heap was found already formatted by onvm_rh_open(). */
bool onvm_rh_was_formatted(const struct onvm_rh *h);

/* 16-byte aligned memory (not zeroed) or NULL; the block is touched. */
void *onvm_rh_alloc(struct onvm_rh *h, size_t size);
void *onvm_rh_calloc(struct onvm_rh *h, size_t n, size_t size);
/* Free a block (NULL is ignored; anything else not live is counted). */
void onvm_rh_free(struct onvm_rh *h, void *p);
/* Bytes usable in a live block (>= what was asked). */
size_t onvm_rh_usable(const struct onvm_rh *h, const void *p);

/* Blocks allocated from now on join `owner` (NULL: no owner). */
static inline void
onvm_rh_set_owner(struct onvm_rh *h, struct onvm_rh_owner *owner)
{
	h->owner = owner;
}

/* Touch every block of `owner` (call before letting code write them). */
void onvm_rh_touch_owner(struct onvm_rh *h, const struct onvm_rh_owner *owner);
/* Detach all of `owner`'s blocks (they stay allocated, owned by nobody). */
void onvm_rh_disown(struct onvm_rh *h, struct onvm_rh_owner *owner);
/* Touch everything handed out so far: [0, top). */
void onvm_rh_touch_all(struct onvm_rh *h);

/* Offsets <-> pointers, for roots kept in other regions. 0 <-> NULL. */
static inline uint64_t
onvm_rh_off(const struct onvm_rh *h, const void *p)
{
	return p == NULL ? 0 : (uint64_t)((const uint8_t *)p - h->base);
}

static inline void *
onvm_rh_ptr(const struct onvm_rh *h, uint64_t off)
{
	return off == 0 ? NULL : h->base + off;
}

/* The root slot in the header (touched on set). */
void onvm_rh_set_root(struct onvm_rh *h, const void *p);
void *onvm_rh_root(const struct onvm_rh *h);

const struct onvm_rh_stats *onvm_rh_stats(const struct onvm_rh *h);

#ifdef __cplusplus
}
#endif
#endif /* ONVM_REGION_HEAP_H */
