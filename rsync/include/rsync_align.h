/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * rsync_align.h -- a chain position's consistent-cut markers aligned across
 * the instances of its service, as Apache Flink aligns checkpoint barriers.
 *
 * Each instance (a rank, struct onvm_service) is a channel of its own: its
 * output leaves through its own TX ring, in order.  The marker of cut C
 * comes out of every rank of position k; the cut's state is consistent only
 * if the next position sees exactly the packets every rank sent before its
 * marker and none sent after.  So a rank whose marker came is held (the
 * manager stops draining its TX ring) until the marker of every rank
 * expected came; then one marker goes on -- to every rank of position
 * k + 1, or to the exit -- ahead of everything the held ranks sent after
 * theirs, and they are released.  Nothing is buffered beyond a burst: a
 * held rank's ring fills and its NF waits (backpressure, as in Flink).
 *
 * A cut is given up -- its markers dropped, every rank released -- when a
 * rank's marker of a newer cut comes first (the older one was lost on the
 * way: a full ring), when the ranks expected change under it (an instance
 * that left may still have output before its marker queued; one that came
 * never got the marker), or when the wait passes a bound (an instance hung
 * holding it).  The marker then never reaches the exit: the primary counts
 * it lost and the next marker names the last committed cut as its base
 * again.
 *
 * No I/O, no clock: the caller passes the time (any unit) and the ranks
 * expected (those an instance holds now, re-read at every check).
 */
#ifndef RSYNC_ALIGN_H
#define RSYNC_ALIGN_H

#include <stdbool.h>
#include <stdint.h>

#define RSYNC_ALIGN_MAX_RANKS 32 /* ranks fit a 32-bit mask */

struct rsync_align {
	uint64_t cut;	   /* the cut being aligned, 0: none */
	uint64_t done;	   /* the newest cut passed on or given up */
	uint32_t arrived;  /* ranks whose marker of `cut` came (held) */
	uint32_t want;	   /* the ranks expected when its first marker came */
	uint64_t since;	   /* when its first marker came */
};

enum rsync_align_verdict {
	RSYNC_ALIGN_STALE,   /* a cut passed on, given up or superseded: drop the marker */
	RSYNC_ALIGN_HOLD,    /* keep the marker, hold its rank's output */
	RSYNC_ALIGN_PASS,    /* every rank expected is in: pass one marker on, release all */
	RSYNC_ALIGN_WAIT,    /* (check) still waiting, or nothing open */
	RSYNC_ALIGN_GIVE_UP, /* (check) waited too long: drop the markers, release all */
};

/*
 * The marker of `cut` came out of `rank` (< RSYNC_ALIGN_MAX_RANKS).  When
 * it is newer than the cut being aligned, or the ranks expected changed,
 * the open cut is given up first: *given_up is set, and the caller releases
 * every rank it held and drops the marker it kept, before acting on the
 * verdict.
 */
enum rsync_align_verdict rsync_align_arrive(struct rsync_align *a, unsigned int rank,
					    uint64_t cut, uint32_t expected, uint64_t now,
					    bool *given_up);

/* An open cut: GIVE_UP when the ranks expected changed or `max_wait` passed
 * since its first marker, else WAIT (PASS only if every rank is in). */
enum rsync_align_verdict rsync_align_check(struct rsync_align *a, uint32_t expected,
					   uint64_t now, uint64_t max_wait);

/* Give the open cut up (no rank is held for it any more). */
void rsync_align_give_up(struct rsync_align *a);

/* Cut `cut` cannot be aligned here (its first marker showed the ranks are
 * not those it was sent to): given up with any older one open; its other
 * markers are then stale. */
void rsync_align_skip(struct rsync_align *a, uint64_t cut);

static inline bool
rsync_align_open(const struct rsync_align *a)
{
	return a->cut != 0;
}

#endif /* RSYNC_ALIGN_H */
