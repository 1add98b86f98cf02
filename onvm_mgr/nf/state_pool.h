/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * state_pool.h -- where NF state blocks live: one segment mapped at start-up
 * at a fixed address (onvm_seg.h; config state.pool_mb) and carved first-fit.
 *
 * Reserving a memzone per NF at run time would make DPDK map new hugepages
 * and synchronise every secondary process (NFs, standbys being started) with
 * a blocking IPC round -- seconds when one of them is still in its EAL
 * start-up.  Carving a pool made at start-up needs no hugepage mapping and no
 * IPC, and gives every block a fixed offset from one base.  The allocator is
 * plain C over offsets so it is unit-tested without an EAL.
 */
#ifndef MGR_STATE_POOL_H
#define MGR_STATE_POOL_H

#include <stdint.h>

#define MGR_STATE_POOL_NAME "onvm_state_pool"
#define MGR_STATE_POOL_ALIGN 4096
#define MGR_STATE_POOL_MAX_BLOCKS 128

struct mgr_state_pool {
	uint64_t size;
	uint32_t n;
	struct {
		uint64_t off, len;
	} used[MGR_STATE_POOL_MAX_BLOCKS]; /* sorted by offset */
};

void mgr_state_pool_init(struct mgr_state_pool *p, uint64_t size);
/* Offset of a new block of `len` bytes (aligned), or -ENOMEM / -EINVAL. */
int64_t mgr_state_pool_alloc(struct mgr_state_pool *p, uint64_t len);
/* Take [off, off + len) (off aligned) for good, so that alloc never hands
 * it out: 0, -EBUSY if part of it is in use, -ERANGE past the pool's end,
 * -EINVAL, -ENOMEM (too many blocks). */
int mgr_state_pool_reserve(struct mgr_state_pool *p, uint64_t off, uint64_t len);
/* Free the block at `off`; -ENOENT if there is none. */
int mgr_state_pool_free(struct mgr_state_pool *p, uint64_t off);
uint64_t mgr_state_pool_in_use(const struct mgr_state_pool *p);

#endif /* MGR_STATE_POOL_H */
