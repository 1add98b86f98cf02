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

uint64_t
nf_nd_rand(struct nf_ctx *nf)
{
	nd_mark_current(nf);
	return rte_rand();
}

uint64_t
nf_nd_time_ns(struct nf_ctx *nf)
{
	struct timespec ts;

	nd_mark_current(nf);
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}
