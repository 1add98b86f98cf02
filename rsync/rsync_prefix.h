/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * Release rule 2, shared by the primary (what it may release) and the
 * standby (what a takeover presumes it released), so the two can never
 * disagree: a prefix of the chain may go when every transaction in it that
 * waits for a cut (an ND decision may have shaped its packets) has one at or
 * after it, inside the prefix, with an id at least the one it waits for.
 *
 * Inside the prefix, because a takeover applies a prefix of the chain: a
 * cut behind a transaction that cannot go yet is never applied, and the
 * decisions it holds would be lost with outputs they shaped already out.
 * Cut ids grow along the chain, so the newest cut in the prefix is its
 * highest: the prefix may go when no waiting transaction follows that cut
 * and none waits for a later one.
 *
 * Walk the chain oldest first, rsync_prefix_add() each transaction; after
 * each, rsync_prefix_ok() says whether the prefix so far may go.  O(1) each.
 */
#ifndef RSYNC_PREFIX_H
#define RSYNC_PREFIX_H

#include <stdbool.h>
#include <stdint.h>

struct rsync_prefix_scan {
	uint64_t newest_cut; /* the newest cut in the prefix (0: none) */
	uint64_t max_wait;   /* the highest cut a transaction of it waits for */
	bool wait_after_cut; /* one waits with no cut after it in the prefix */
};

/* `cut_id`: the cut the transaction carries (0: none); `nd_cut`: the cut it
 * waits for (0: none; never with a cut of its own). */
static inline void
rsync_prefix_add(struct rsync_prefix_scan *sc, uint64_t cut_id, uint64_t nd_cut)
{
	if (cut_id != 0) {
		sc->newest_cut = cut_id;
		sc->wait_after_cut = false;
	} else if (nd_cut != 0) {
		sc->wait_after_cut = true;
		if (nd_cut > sc->max_wait)
			sc->max_wait = nd_cut;
	}
}

static inline bool
rsync_prefix_ok(const struct rsync_prefix_scan *sc)
{
	return !sc->wait_after_cut && sc->max_wait <= sc->newest_cut;
}

#endif /* RSYNC_PREFIX_H */
