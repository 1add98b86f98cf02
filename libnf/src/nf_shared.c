/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_shared.c -- shared state across instances (onvm_nflib.h,
 * struct onvm_shared): the NF's side is a running sum per key in its slot,
 * which the manager takes the growth of, and a read of the committed value.
 * No lock and no wait on the packet path: an add is one atomic add.
 */
#include <errno.h>

#include "nf_private.h"

int
nf_shared_add(struct nf_ctx *nf, uint32_t key, int64_t delta)
{
	if (key >= ONVM_SHARED_KEYS)
		return -EINVAL;
	/* A flow migration's copy: the flow's old instance added for this
	 * packet already (nf_is_reprocessing). */
	if (unlikely(nf_is_reprocessing(nf)))
		return 0;
	/* (sum, then count: the manager reads the count first, so a batch
	 * never holds an add whose delta it has not) */
	__atomic_add_fetch(&nf->slot->shared_added[key], delta, __ATOMIC_RELEASE);
	__atomic_add_fetch(&nf->slot->shared_ops[key], 1, __ATOMIC_RELEASE);
	return 0;
}

int64_t
nf_shared_get(struct nf_ctx *nf, uint32_t key)
{
	if (key >= ONVM_SHARED_KEYS)
		return 0;
	return __atomic_load_n(&nf->shm->shared.value[key], __ATOMIC_ACQUIRE);
}
