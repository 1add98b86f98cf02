/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * rsync_unit_apply.c -- a protected chain's standby node writing committed
 * state into its parked NFs, checking what it was sent against them, and
 * unparking them at the takeover (placement, markers and cuts:
 * rsync_unit_state.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "onvm_state.h"
#include "rsync_unit_priv.h"

static struct rsync_nf_ref *
region_ref(struct rsync_chain *c, uint16_t region, unsigned int *r)
{
	int win = region / NF_STATE_MAX_REGIONS;
	struct rsync_nf_ref *ref;

	if (win >= c->nwin)
		return NULL;
	ref = rsync_nf_at(c, win, false);
	*r = region % NF_STATE_MAX_REGIONS;
	if (ref == NULL || *r >= ref->state.n_regions)
		return NULL;
	return ref;
}

/* Cuts ship whole chunks: a region's last chunk may reach past the size the
 * NF asked for, into the padding of its block. */
static uint64_t
region_span(const struct nf_state_set *set, unsigned int r)
{
	return (uint64_t)nf_state_chunks(set, r) * nf_state_chunk_size(set, r);
}

/* The standby's copy of the chain's state can no longer be trusted: an NF
 * that had state written into it went away (its window is formatted anew
 * when it comes back, and cuts are deltas), or a voted piece could not be
 * written.  The library resynchronises (rsync_standby.h): it goes on
 * voting -- refusing would make the healthy primary abort every stage with
 * a cut -- writes nothing more until the full cut its votes ask for, and
 * refuses to take the chain over until in sync again.  The position's NF
 * (the new one, when it comes) may then be written from scratch. */
static void
state_lost(struct rsync_chain *c, const char *why, int win)
{
	if (rsync_standby_whole(c->sby))
		MGR_LOG(ERR, "remote chain %s: the standby's state of NF %d (rank %d) is lost "
			     "(%s): resynchronising with a full cut; no takeover until then",
			c->cfg->name, c->win_pos[win], c->win_rank[win], why);
	c->nf[win].applied_gen = 0;
	c->state_losses++;
	rsync_standby_state_lost(c->sby);
}

/* An NF state was written into is still the one there (same slot, same
 * generation): checked at every piece and, for every position, at the
 * takeover. */
static bool
still_written_nf(struct rsync_chain *c, int win)
{
	struct rsync_nf_ref *ref = &c->nf[win];

	if (ref->applied_gen == 0)
		return true; /* nothing written there yet */
	ref = rsync_nf_at(c, win, true);
	return ref != NULL && ref->slot == c->nf[win].applied_slot &&
	       ref->generation == ref->applied_gen;
}

void
rsync_state_check_all(struct rsync_chain *c)
{
	for (int w = 0; w < c->nwin; w++)
		if (!still_written_nf(c, w))
			state_lost(c, "the NF is gone or was restarted", w);
}

bool
rsync_state_ready_for_full(struct rsync_chain *c)
{
	for (int w = 0; w < c->nwin; w++) {
		struct rsync_nf_ref *ref;

		switch (rsync_window_kind(c, w)) {
		case POS_STATELESS:
			continue;
		case POS_UNKNOWN:
			return false; /* its NF is not (back) yet */
		default:
			break;
		}
		ref = rsync_nf_at(c, w, false);
		if (ref == NULL ||
		    !__atomic_load_n(&mgr.shm->nfs[ref->slot].remote_park_ack, __ATOMIC_ACQUIRE))
			return false; /* still starting up */
	}
	return true;
}

bool
rsync_state_ok(struct rsync_chain *c, uint16_t region, uint64_t offset, uint32_t len)
{
	unsigned int r;
	struct rsync_nf_ref *ref;

	if (region == RSYNC_LAYOUT_REGION) {
		if (offset == rsync_layout_tag(c) && len == sizeof(uint64_t))
			return true;
		if (c->layout_mismatch++ == 0)
			MGR_LOG(ERR,
				"remote chain %s: the primary's state windows differ from this "
				"node's (layout %#" PRIx64 ", here %#" PRIx64 ": the instances "
				"of each service, state_window_mb and state_base_mb must be the "
				"same on both): its cuts are refused",
				c->cfg->name, offset, rsync_layout_tag(c));
		return false;
	}
	ref = region_ref(c, region, &r);
	/* An NF state was written into is gone: the state is not whole (the
	 * library then takes an ordinary piece unchecked), and this piece --
	 * a full cut's, maybe -- is checked against the NF there now. */
	if (region / NF_STATE_MAX_REGIONS < c->nwin &&
	    !still_written_nf(c, region / NF_STATE_MAX_REGIONS))
		state_lost(c, "the NF is gone or was restarted", region / NF_STATE_MAX_REGIONS);
	if (ref == NULL)
		return false;
	/* Not before the NF finished its start-up (its own initial writes)
	 * and waits: the manager is then the block's only writer. */
	return __atomic_load_n(&mgr.shm->nfs[ref->slot].remote_park_ack, __ATOMIC_ACQUIRE) &&
	       offset <= region_span(&ref->state, r) && len <= region_span(&ref->state, r) - offset;
}

void
rsync_state_apply(struct rsync_chain *c, uint16_t region, uint64_t offset, const void *data,
		  uint32_t len)
{
	unsigned int r;
	struct rsync_nf_ref *ref;
	uint64_t size;

	if (region == RSYNC_LAYOUT_REGION)
		return; /* checked (rsync_state_ok), nothing to write */
	ref = region_ref(c, region, &r);
	size = ref != NULL ? nf_state_region_size(&ref->state, r) : 0;
	/* The padding past the region's size holds nothing: not written. */
	if (ref != NULL && offset >= size)
		return;
	if (ref != NULL && len > size - offset)
		len = (uint32_t)(size - offset);
	if (ref == NULL || !still_written_nf(c, region / NF_STATE_MAX_REGIONS) ||
	    !__atomic_load_n(&mgr.shm->nfs[ref->slot].remote_park_ack, __ATOMIC_ACQUIRE) ||
	    nf_state_write_both(&ref->state, r, offset, data, len) < 0) {
		c->state_apply_failed++; /* state_ok() said yes: the NF went away */
		state_lost(c, "a voted piece could not be written", region / NF_STATE_MAX_REGIONS);
		return;
	}
	/* Canonical and replica alike, no batch and no sequence number: the
	 * parked NF's own count of its batches stays right for its local
	 * failovers after the takeover. */
	ref->applied_gen = ref->generation;
	ref->applied_slot = ref->slot;
	c->state_bytes_applied += len;
}

void
rsync_state_unpark(struct rsync_chain *c)
{
	const struct mgr_chain_cfg *ch = &mgr.cfg.chains[c->cfg->chain];
	int64_t clock = __atomic_load_n(&c->clock_offset, __ATOMIC_SEQ_CST);

	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		struct onvm_nf_slot *s = &mgr.shm->nfs[id];

		for (int k = 0; k < ch->len; k++) {
			if (s->service_id != ch->services[k])
				continue;
			/* the chain's clock, before the NF runs on */
			__atomic_store_n(&s->clock_offset, clock, __ATOMIC_SEQ_CST);
			if (__atomic_load_n(&s->remote_parked, __ATOMIC_SEQ_CST)) {
				__atomic_store_n(&s->remote_parked, 0, __ATOMIC_SEQ_CST);
				mgr_nf_wake(s);
			}
		}
	}
}
