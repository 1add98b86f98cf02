/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_state.h -- libnf state regions on the plain heap, for unit tests of
 * code that keeps its state in regions (the flow table, the NFs' logic).
 *
 * The point is test_state_commit_check(): it commits the batch and then
 * compares every region's canonical copy with its replica.  The replica only
 * receives chunks that were touched, so ANY write the code under test forgot
 * to announce with a touch shows up as a difference -- the bug that would
 * make a promoted standby run on state that does not match the packets.
 * test_state_failover() then plays the standby: a second handle attaches to
 * the same block, recovers, and the test carries on with it.
 */
#ifndef TEST_STATE_H
#define TEST_STATE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onvm_state.h"

struct test_state {
	struct nf_state_layout layout;
	struct nf_state_set set;
	void *block;
};

static inline int
test_state_init(struct test_state *ts, const struct nf_state_request *reqs, unsigned int n)
{
	char err[160];

	memset(ts, 0, sizeof(*ts));
	if (nf_state_layout_compute(&ts->layout, reqs, n, err, sizeof(err)) < 0) {
		fprintf(stderr, "test_state: %s\n", err);
		return -1;
	}
	ts->block = aligned_alloc(4096, (ts->layout.total_size + 4095) & ~(size_t)4095);
	if (ts->block == NULL ||
	    nf_state_format(ts->block, ts->layout.total_size, &ts->layout, err, sizeof(err)) < 0 ||
	    nf_state_attach(&ts->set, ts->block, ts->layout.total_size, &ts->layout, err,
			    sizeof(err)) < 0) {
		fprintf(stderr, "test_state: %s\n", ts->block == NULL ? "out of memory" : err);
		free(ts->block);
		ts->block = NULL;
		return -1;
	}
	return 0;
}

static inline void *
test_state_region(struct test_state *ts, const char *name)
{
	int r = nf_state_region_find(&ts->set, name);

	return r < 0 ? NULL : nf_state_region_ptr(&ts->set, (unsigned int)r);
}

/* Commit; 0 if every region's replica now equals its canonical copy, else -1
 * after printing the first differing byte (region, offset). */
static inline int
test_state_commit_check(struct test_state *ts)
{
	nf_state_commit(&ts->set);
	for (unsigned int r = 0; r < ts->set.n_regions; r++) {
		const uint8_t *c = nf_state_region_ptr(&ts->set, r);
		const uint8_t *p = nf_state_replica_ptr(&ts->set, r);
		uint64_t size = nf_state_region_size(&ts->set, r);

		if (memcmp(c, p, size) == 0)
			continue;
		for (uint64_t i = 0; i < size; i++)
			if (c[i] != p[i]) {
				fprintf(stderr,
					"test_state: region %s byte %llu written without a touch\n",
					ts->layout.regions[r].name, (unsigned long long)i);
				break;
			}
		return -1;
	}
	return 0;
}

/* The standby's view: a fresh handle on the same block, recovered to the
 * last commit (uncommitted touched writes are rolled back). */
static inline int
test_state_failover(struct test_state *ts)
{
	char err[160];
	uint64_t seq;

	if (nf_state_attach(&ts->set, ts->block, ts->layout.total_size, &ts->layout, err,
			    sizeof(err)) < 0 ||
	    nf_state_recover(&ts->set, &seq, err, sizeof(err)) < 0) {
		fprintf(stderr, "test_state: %s\n", err);
		return -1;
	}
	return 0;
}

static inline void
test_state_fini(struct test_state *ts)
{
	free(ts->block);
	ts->block = NULL;
}

#endif /* TEST_STATE_H */
