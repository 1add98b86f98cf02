/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_state.c -- state regions for the NF: declare them, have the manager
 * allocate the block (canonical regions, replicas, dirty tracking; see
 * onvm_state.h), map it, and touch before writing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_memzone.h>
#include <rte_string_fns.h>

#include "nf_private.h"

#define NF_STATE_WAIT_MS 10000 /* a standby waits this long for its active's block */

struct nf_state_set *
nf_state(struct nf_ctx *nf)
{
	return nf->has_state ? &nf->state : NULL;
}

int
nf_state_declare(struct nf_ctx *nf, const char *name, size_t size, size_t chunk_size)
{
	struct onvm_nf_state_req *r;

	if (nf->has_state) {
		NF_LOG(ERR, "state region '%s': declare every region before nf_state_map()", name);
		return -EBUSY;
	}
	if (nf->n_decl >= ONVM_STATE_MAX_REGIONS) {
		NF_LOG(ERR, "state region '%s': at most %d regions", name, ONVM_STATE_MAX_REGIONS);
		return -E2BIG;
	}
	if (name == NULL || strlen(name) == 0 || strlen(name) >= ONVM_NAME_LEN) {
		NF_LOG(ERR, "state region name must be 1..%d characters", ONVM_NAME_LEN - 1);
		return -EINVAL;
	}
	/* Everything else (size, chunk, duplicates) is checked by the layout,
	 * once, when the manager allocates. */
	r = &nf->decl[nf->n_decl++];
	memset(r, 0, sizeof(*r));
	strlcpy(r->name, name, sizeof(r->name));
	r->size = size;
	r->chunk_size = chunk_size;
	return 0;
}

/* The active asks the manager to allocate (the requests travel in its slot). */
static int
state_request_alloc(struct nf_ctx *nf)
{
	struct onvm_mp_state_req req = {
		.instance_id = nf->instance_id,
		.generation = nf->slot->generation,
	};
	struct onvm_mp_state_rep rep = {0};

	memcpy(nf->slot->state_req, nf->decl, nf->n_decl * sizeof(nf->decl[0]));
	nf->slot->n_state_req = nf->n_decl;
	if (nfl_mp_call(ONVM_MP_NF_STATE, &req, sizeof(req), -1, &rep, sizeof(rep)) < 0) {
		NF_LOG(ERR, "state allocation got no answer from the manager");
		return -ETIMEDOUT;
	}
	if (rep.result < 0) {
		NF_LOG(ERR, "state allocation refused: %s", rep.reason);
		return rep.result;
	}
	return 0;
}

/* Map the node's state segment at the address the manager chose (the same
 * in every process, and on every node: onvm_seg.h). */
static int
map_segment(struct nf_ctx *nf)
{
	const struct onvm_shm *shm = nf->shm;
	int ret;

	if (nf->seg.base != NULL)
		return 0;
	if (shm->state_seg_size == 0)
		return -ENOENT;
	ret = onvm_seg_map(&nf->seg, shm->state_seg_path, shm->state_seg_va, shm->state_seg_size);
	if (ret < 0)
		NF_LOG(ERR, "cannot map the state segment %s at 0x%" PRIx64 ": %s",
		       shm->state_seg_path, shm->state_seg_va, strerror(-ret));
	return ret;
}

int
nf_state_map(struct nf_ctx *nf)
{
	struct nf_state_request reqs[ONVM_STATE_MAX_REGIONS];
	struct nf_state_layout layout;
	char err[160];
	int ret;

	if (nf->has_state)
		return -EALREADY;
	/* A standby attaches to the block its active already has. */
	if (!nf->standby) {
		ret = state_request_alloc(nf);
		if (ret < 0)
			return ret;
	}
	/* A standby may get here before its active has asked for the block
	 * (it registered between the active's registration and its
	 * nf_state_map()): wait for it, a while. */
	if (nf->standby)
		for (int ms = 0; ms < NF_STATE_WAIT_MS && !nf_stopping(nf) &&
				 __atomic_load_n(&nf->slot->state_mz[0], __ATOMIC_ACQUIRE) == '\0';
		     ms++)
			rte_delay_us_sleep(1000);
	if (nf->slot->state_mz[0] == '\0' || map_segment(nf) < 0) {
		NF_LOG(ERR, "no state memory for instance %u", nf->instance_id);
		return -ENOENT;
	}
	/* Attach checks the block against what this process declared. */
	for (uint32_t i = 0; i < nf->n_decl; i++)
		reqs[i] = (struct nf_state_request){.name = nf->decl[i].name,
						    .size = nf->decl[i].size,
						    .chunk_size = nf->decl[i].chunk_size};
	ret = nf_state_layout_compute(&layout, reqs, nf->n_decl, err, sizeof(err));
	if (ret == 0 && (nf->slot->state_off > nf->seg.size ||
			 nf->slot->state_size > nf->seg.size - nf->slot->state_off)) {
		snprintf(err, sizeof(err), "state block outside the state segment");
		ret = -ERANGE;
	}
	if (ret == 0)
		ret = nf_state_attach(&nf->state, nf->seg.base + nf->slot->state_off,
				      nf->slot->state_size, &layout, err, sizeof(err));
	if (ret < 0) {
		NF_LOG(ERR, "state: %s", err);
		return ret;
	}
	/* In a remote chain the manager added a cut area (onvm_cut.h). */
	if (nf->slot->cut_size > 0) {
		if (nf->slot->cut_off > nf->seg.size ||
		    nf->slot->cut_size > nf->seg.size - nf->slot->cut_off ||
		    onvm_cut_attach(&nf->cut, nf->seg.base + nf->slot->cut_off,
				    nf->slot->cut_size, &layout) < 0) {
			NF_LOG(ERR, "state: the cut area does not match the state layout");
			return -EINVAL;
		}
		nf->has_cut = true;
	}
	nf->has_state = true;
	/* In an FTC chain the manager added the ring of its updates. */
	ret = nfl_ftc_attach(nf);
	if (ret < 0)
		return ret;
	NF_LOG(INFO, "%s: %u state regions mapped (%" PRIu64 " bytes)%s", nf->name, nf->n_decl,
	       nf->slot->state_size, nf->standby ? " as standby" : "");
	return 0;
}

void *
nf_state_ptr(struct nf_ctx *nf, const char *name)
{
	int r;

	if (!nf->has_state)
		return NULL;
	r = nf_state_region_find(&nf->state, name);
	return r < 0 ? NULL : nf_state_region_ptr(&nf->state, r);
}

void
nf_touch(struct nf_ctx *nf, const void *ptr, size_t len)
{
	/* Out-of-region touches are bugs in the NF; count them rather than
	 * crash the data path. */
	if (unlikely(nf_state_touch_ptr(&nf->state, ptr, len) < 0))
		nf->slot->stats.bad_touches++;
}
