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
	return v;
}

enum rsync_align_verdict
rsync_align_arrive(struct rsync_align *a, unsigned int rank, uint64_t cut, uint32_t expected,
		   uint64_t now, bool *superseded)
{
	uint32_t bit;

	*superseded = false;
	if (rank >= RSYNC_ALIGN_MAX_RANKS || cut <= a->done || (a->cut != 0 && cut < a->cut))
		return RSYNC_ALIGN_STALE;
	bit = 1u << rank;
	if (a->cut != 0 && cut > a->cut) {
		/* This rank skipped the open cut: it will never come from it. */
		*superseded = true;
		close_cut(a, RSYNC_ALIGN_STALE);
	}
	if (a->cut == 0) {
		a->cut = cut;
		a->arrived = 0;
		a->since = now;
	} else if (a->arrived & bit) {
		return RSYNC_ALIGN_STALE; /* twice from one rank (it is held) */
	}
	a->arrived |= bit;
	if ((expected & ~a->arrived) == 0)
		return close_cut(a, RSYNC_ALIGN_PASS);
	return RSYNC_ALIGN_HOLD;
}

enum rsync_align_verdict
rsync_align_check(struct rsync_align *a, uint32_t expected, uint64_t now, uint64_t max_wait)
{
	if (a->cut == 0)
		return RSYNC_ALIGN_WAIT;
	if ((expected & ~a->arrived) == 0)
		return close_cut(a, RSYNC_ALIGN_PASS);
	if (now - a->since > max_wait)
		return close_cut(a, RSYNC_ALIGN_GIVE_UP);
	return RSYNC_ALIGN_WAIT;
}
