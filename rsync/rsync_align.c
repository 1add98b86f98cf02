/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * rsync_align.c -- markers aligned across a position's instances (design in
 * rsync_align.h).
 */
#include "rsync_align.h"

static enum rsync_align_verdict
close_cut(struct rsync_align *a, enum rsync_align_verdict v)
{
	a->done = a->cut;
	a->cut = 0;
	a->arrived = 0;
	a->want = 0;
	return v;
}

enum rsync_align_verdict
rsync_align_arrive(struct rsync_align *a, unsigned int rank, uint64_t cut, uint32_t expected,
		   uint64_t now, bool *given_up)
{
	uint32_t bit;

	*given_up = false;
	if (rank >= RSYNC_ALIGN_MAX_RANKS || cut <= a->done || (a->cut != 0 && cut < a->cut))
		return RSYNC_ALIGN_STALE;
	bit = 1u << rank;
	if (a->cut != 0 && (cut > a->cut || expected != a->want)) {
		/* This rank skipped the open cut (it will never come from
		 * it), or the instances changed under it: given up. */
		*given_up = true;
		close_cut(a, RSYNC_ALIGN_GIVE_UP);
		if (cut <= a->done)
			return RSYNC_ALIGN_STALE; /* a marker of the cut given up */
	}
	if (a->cut == 0) {
		a->cut = cut;
		a->arrived = 0;
		a->want = expected;
		a->since = now;
	} else if (a->arrived & bit) {
		return RSYNC_ALIGN_STALE; /* twice from one rank (it is held) */
	}
	a->arrived |= bit;
	if ((a->want & ~a->arrived) == 0)
		return close_cut(a, RSYNC_ALIGN_PASS);
	return RSYNC_ALIGN_HOLD;
}

enum rsync_align_verdict
rsync_align_check(struct rsync_align *a, uint32_t expected, uint64_t now, uint64_t max_wait)
{
	if (a->cut == 0)
		return RSYNC_ALIGN_WAIT;
	/* An instance left (its queued output could follow the marker) or
	 * came (it never got the marker): the cut is given up. */
	if (expected != a->want || now - a->since > max_wait)
		return close_cut(a, RSYNC_ALIGN_GIVE_UP);
	if ((a->want & ~a->arrived) == 0)
		return close_cut(a, RSYNC_ALIGN_PASS);
	return RSYNC_ALIGN_WAIT;
}

void
rsync_align_give_up(struct rsync_align *a)
{
	if (a->cut != 0)
		close_cut(a, RSYNC_ALIGN_GIVE_UP);
}

void
rsync_align_skip(struct rsync_align *a, uint64_t cut)
{
	if (a->cut != 0 && a->cut <= cut)
		close_cut(a, RSYNC_ALIGN_GIVE_UP);
	if (cut > a->done)
		a->done = cut;
}
