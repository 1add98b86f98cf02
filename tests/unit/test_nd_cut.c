/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_nd_cut.c -- which cut an NF's ND decision waits for (libnf's
 * nf_nd.c and nfl_nd_wait_next_cut()): the next marker to pass the NF, for
 * a decision on a packet and for one in a tick alike, never a cut older
 * than the manager's floor, and published at batch commit only.
 *
 * The review case this pins down: a tick's decision right after marker K,
 * with no packet in between, shares marker K's timestamp; a rule on
 * timestamps counted it as covered by cut K, whose state does not hold it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "nf_private.h"

int nf_pkt_meta_offset = -1; /* libnf's (nf_init.c): no packet here */
static struct onvm_nf_slot slot;
static struct nf_ctx nf;

static int
setup(void **state)
{
	(void)state;
	memset(&slot, 0, sizeof(slot));
	memset(&nf, 0, sizeof(nf));
	nf.slot = &slot;
	return 0;
}

static void
test_tick_decision_after_marker_waits_for_the_next_cut(void **state)
{
	(void)state;
	nf.last_ts = 4;
	nf.last_marker = 1; /* marker of cut 1 (ts 4) passed, no packet since */
	nf.in_batch = true; /* a tick */
	(void)nf_nd_rand(&nf);
	assert_true(nf.nd_batch);
	assert_int_equal(nf.nd_cut_batch, 2);
	assert_int_equal(slot.stats.nd_events, 1);
}

static void
test_fresh_nf_never_names_a_cut_before_the_floor(void **state)
{
	(void)state;
	/* promoted NF: it has passed no marker, the chain injected 5 */
	__atomic_store_n(&slot.nd_cut_floor, 5, __ATOMIC_RELAXED);
	nf.in_batch = true;
	(void)nf_nd_time_ns(&nf);
	assert_int_equal(nf.nd_cut_batch, 6);
	/* markers it passes later count from there */
	nf.last_marker = 9;
	nf.nd_cut_batch = 0;
	(void)nf_nd_rand(&nf);
	assert_int_equal(nf.nd_cut_batch, 10);
}

/* A local standby promoted in the slot of an NF that had passed marker 12
 * (the floor, set at the slot's registration, is older): its own process
 * has passed none, yet its decisions wait for cut 13 -- the slot remembers
 * the markers passed, not the process. */
static void
test_promoted_standby_waits_for_the_cut_after_its_slots_last_marker(void **state)
{
	(void)state;
	__atomic_store_n(&slot.nd_cut_floor, 3, __ATOMIC_RELAXED);
	__atomic_store_n(&slot.marker_seen, 12, __ATOMIC_RELAXED);
	nf.last_marker = 0; /* the promoted process */
	nf.in_batch = true;
	(void)nf_nd_rand(&nf);
	assert_int_equal(nf.nd_cut_batch, 13);
}

static void
test_requirement_only_rises_within_a_batch(void **state)
{
	(void)state;
	nf.last_marker = 7;
	(void)nf_nd_rand(&nf);
	nf.last_marker = 3; /* cannot happen, but the batch keeps its maximum */
	(void)nf_nd_rand(&nf);
	assert_int_equal(nf.nd_cut_batch, 8);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_tick_decision_after_marker_waits_for_the_next_cut, setup),
		cmocka_unit_test_setup(test_fresh_nf_never_names_a_cut_before_the_floor, setup),
		cmocka_unit_test_setup(test_requirement_only_rises_within_a_batch, setup),
		cmocka_unit_test_setup(
			test_promoted_standby_waits_for_the_cut_after_its_slots_last_marker, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
