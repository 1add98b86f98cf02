/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_nd.c -- non-determinism helpers: each draws the value and marks the
 * packet(s) being handled, so an NF cannot forget the mark.
 */
#include <time.h>

#include <rte_random.h>

#include "nf_private.h"

static void
nd_mark_current(struct nf_ctx *nf)
{
	if (nf->cur_pkt != NULL)
		nf_mark_nd(nf->cur_pkt);
	else if (nf->in_batch)
		nf->nd_batch = true;
	/* In a packet or in a tick alike, only the next marker to pass this
	 * NF covers the decision (remote chains). */
	nfl_nd_wait_next_cut(nf);
	nf->slot->stats.nd_events++;
}

/*
 * A flow migration (nf_move.c): a copy reprocessed at the new instance
 * takes the value the old one drew for the same packet (its output is
 * dropped: nothing to mark); a packet the old one handles after the
 * export has its values logged.
 */
static bool
move_nd_replay(struct nf_ctx *nf, uint64_t *v)
{
	const struct onvm_move_log_entry *e = nf->move_replay;

	if (!nf->move_replay_fetched) {
		/* the first ND decision of this copy: src's entry for it */
		e = nf->move_replay = nf->move_log_fetch(nf);
		nf->move_replay_fetched = true;
	}
	if (e == NULL) {
		nf->move_cur->nd_short++;
		return false;
	}
	if (nf->move_replay_i < e->n_nd && nf->move_replay_i < ONVM_MOVE_ND_MAX) {
		*v = e->nd[nf->move_replay_i++];
		nf->move_cur->nd_replayed++;
		return true;
	}
	/* more decisions than src made (or logged): drawn afresh, counted */
	nf->move_cur->nd_short++;
	return false;
}

static void
move_nd_record(struct nf_ctx *nf, uint64_t v)
{
	struct onvm_move_log_entry *e = nf->move_rec;

	if (e == NULL)
		return;
	if (e->n_nd < ONVM_MOVE_ND_MAX)
		e->nd[e->n_nd] = v;
	else
		e->flags |= ONVM_MOVE_LOG_ND_OVER;
	e->n_nd++;
}

static inline uint64_t
nd_value(struct nf_ctx *nf, uint64_t (*draw)(void))
{
	uint64_t v;

	if (unlikely(nf->move_cur != NULL) && move_nd_replay(nf, &v))
		return v;
	nd_mark_current(nf);
	v = draw();
	if (unlikely(nf->move_rec != NULL))
		move_nd_record(nf, v);
	return v;
}

static uint64_t
draw_rand(void)
{
	return rte_rand();
}

static uint64_t
draw_time_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t
nf_nd_rand(struct nf_ctx *nf)
{
	return nd_value(nf, draw_rand);
}

uint64_t
nf_nd_time_ns(struct nf_ctx *nf)
{
	return nd_value(nf, draw_time_ns);
}
