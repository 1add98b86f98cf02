/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_marker_align.c -- a protected chain's markers through the TX unit
 * (marker_align.c) when a service runs two instances: the next step gets
 * exactly one marker per cut, after every packet either instance sent
 * before its marker and before every packet sent after; a marker entering
 * a step goes to each of its instances; an alignment is given up after its
 * bound or for a newer cut, and nothing leaks.
 *
 * Fixture (dp_fixture.h) plus: service 1 has two fixed ranks, NF slot 0
 * (rank 0) and SPARE_SLOT (rank 1); chain 0 = 1 -> 2.  Each packet carries
 * a tag in its first byte; markers carry struct onvm_marker.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dp_fixture.h"

#define MARKER_TAG 0xff

static void
two_instances_of(uint16_t service)
{
	struct onvm_service *sv = &mgr.shm->services[service];
	uint32_t a;

	mgr.shm->nfs[SPARE_SLOT].service_id = service;
	mgr.shm->nfs[SPARE_SLOT].status = ONVM_NF_RUNNING;
	mgr_service_fix(mgr.shm, service, 2);
	a = sv->active & 1;
	sv->inst[a][0] = service - 1; /* the fixture's slot of the service */
	sv->inst[a][1] = SPARE_SLOT;
}

static int
setup_two(void **state)
{
	int rc = setup(state);

	two_instances_of(1);
	/* chain 0 is protected (its input port 0); the markers sent into it
	 * are those the tests emit at step 0 (fanned_out()) */
	memset(mgr.remote.markers_dropped, 0, sizeof(mgr.remote.markers_dropped));
	memset(mgr.remote.marker_newest, 0, sizeof(mgr.remote.marker_newest));
	memset(mgr.remote.marker_fanned, 0, sizeof(mgr.remote.marker_fanned));
	mgr.remote.rsync_in_port[0] = 1;
	for (int i = 0; i < NB_SLOTS; i++)
		mgr.shm->nfs[i].nf_running = 1;
	return rc;
}

/* The marker of `cut` went to every instance of `step` of chain 0 now (as
 * the RX or TX unit records it), unless it did already; at step 0, it was
 * sent into the chain. */
static void
fanned_out(uint8_t step, uint64_t cut)
{
	uint64_t *f = &mgr.remote.marker_fanned[0][step][cut % MGR_FANNED];

	if (step == 0 && cut > mgr.remote.marker_newest[0])
		mgr.remote.marker_newest[0] = cut;
	if (*f >> 8 != cut)
		*f = (cut << 8) |
		     mgr_service_ranks(mgr.shm, mgr.shm->chains[0].services[step], false);
}

/* Markers the primary was told were lost (it asks for the next at once). */
static uint64_t
reported_lost(void)
{
	return mgr.remote.markers_dropped[0];
}

/* NF `slot` (at step `step` of chain 0) emits a packet tagged `tag`. */
static void
emit(uint16_t slot, uint8_t step, uint8_t tag)
{
	struct rte_mbuf *m = pkt(ONVM_ACTION_NEXT, 0, 0, step);

	*rte_pktmbuf_mtod(m, uint8_t *) = tag;
	assert_int_equal(rte_ring_enqueue(tx_rings[slot], m), 0);
}

/* A marker of `cut` at `step` of chain 0, with `action` and `flags`. */
static struct rte_mbuf *
marker(uint8_t action, uint8_t step, uint64_t cut, uint8_t flags)
{
	struct rte_mbuf *m = pkt(action, 0, 0, step);
	struct onvm_marker mk = {.cut_id = cut, .base_id = cut - 1, .flags = 0};

	onvm_pkt_meta(m, mgr.dyn_off)->flags |= ONVM_PKT_F_MARKER | flags;
	memcpy(rte_pktmbuf_mtod(m, void *), &mk, sizeof(mk));
	return m;
}

/* ... or passes on the marker of `cut`. */
static void
emit_marker(uint16_t slot, uint8_t step, uint64_t cut)
{
	fanned_out(step, cut);
	assert_int_equal(rte_ring_enqueue(tx_rings[slot], marker(ONVM_ACTION_NEXT, step, cut, 0)),
			 0);
}

/* What NF `slot` was given, in order: tags, MARKER_TAG for a marker (its
 * cut in *cut); freed.  Returns the count. */
static unsigned int
received(uint16_t slot, uint8_t *tags, uint64_t *cut)
{
	void *objs[RING_SIZE];
	unsigned int n = rte_ring_dequeue_burst(rx_rings[slot], objs, RING_SIZE, NULL);

	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = objs[i];

		if (onvm_pkt_meta(m, mgr.dyn_off)->flags & ONVM_PKT_F_MARKER) {
			struct onvm_marker mk;

			memcpy(&mk, rte_pktmbuf_mtod(m, void *), sizeof(mk));
			tags[i] = MARKER_TAG;
			if (cut != NULL)
				*cut = mk.cut_id;
			/* routed to the receiver's step of chain 0 (1 -> 2) */
			assert_int_equal(onvm_pkt_meta(m, mgr.dyn_off)->chain_index,
					 mgr.shm->nfs[slot].service_id - 1);
		} else {
			tags[i] = *rte_pktmbuf_mtod(m, uint8_t *);
		}
	}
	rte_pktmbuf_free_bulk((struct rte_mbuf **)objs, n);
	return n;
}

static void
assert_tags(const uint8_t *got, unsigned int n, const uint8_t *want, unsigned int wn)
{
	assert_int_equal(n, wn);
	assert_memory_equal(got, want, wn);
}

static void
poll_n(int n)
{
	for (int i = 0; i < n; i++)
		mgr_tx_poll();
}

static void
test_the_next_step_sees_one_marker_after_everything_sent_before_it(void **state)
{
	const uint8_t want[] = {1, 3, 4, MARKER_TAG, 5, 2};
	uint8_t got[RING_SIZE];
	uint64_t cut = 0;

	(void)state;
	emit(0, 0, 1);
	emit_marker(0, 0, 7);
	emit(0, 0, 2);
	emit(SPARE_SLOT, 0, 3);
	emit(SPARE_SLOT, 0, 4);
	emit_marker(SPARE_SLOT, 0, 7);
	emit(SPARE_SLOT, 0, 5);
	poll_n(3);
	/* 2 followed rank 0's marker, so it comes after the one marker even
	 * though rank 0's ring is drained first */
	assert_tags(got, received(1, got, &cut), want, sizeof(want));
	assert_int_equal(cut, 7);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].markers_aligned, 1);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_given_up, 0);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_n_held, 0);
	assert_no_drops_and_pool_full();
}

static void
test_a_held_instances_output_waits_for_its_siblings_marker(void **state)
{
	const uint8_t want[] = {9, MARKER_TAG, 1, 2, 3};
	uint8_t got[RING_SIZE];

	(void)state;
	emit_marker(0, 0, 4);
	emit(0, 0, 1);
	emit(0, 0, 2);
	poll_n(2);
	emit(0, 0, 3); /* still on its ring */
	poll_n(2);
	assert_int_equal(rte_ring_count(rx_rings[1]), 0);
	assert_int_equal(rte_ring_count(tx_rings[0]), 1);
	assert_true(mgr.dp[MGR_UNIT_TX].align_waits > 0);
	emit(SPARE_SLOT, 0, 9);
	emit_marker(SPARE_SLOT, 0, 4);
	poll_n(3);
	assert_tags(got, received(1, got, NULL), want, sizeof(want));
	assert_no_drops_and_pool_full();
}

static void
test_an_alignment_is_given_up_after_its_bound(void **state)
{
	const uint8_t want[] = {1, 2};
	uint8_t got[RING_SIZE];

	(void)state;
	emit_marker(0, 0, 2);
	emit(0, 0, 1);
	emit(0, 0, 2);
	poll_n(1);
	assert_int_equal(rte_ring_count(rx_rings[1]), 0);
	usleep(210 * 1000); /* past ALIGN_MAX_US: rank 1 never sends its marker */
	poll_n(3);
	assert_tags(got, received(1, got, NULL), want, sizeof(want));
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_given_up, 1);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_n_held, 0);
	/* the primary's own time-out says it is lost: not reported twice */
	assert_int_equal(reported_lost(), 0);
	/* rank 1's marker of the given-up cut comes late: dropped, not held */
	emit_marker(SPARE_SLOT, 0, 2);
	emit(SPARE_SLOT, 0, 3);
	poll_n(2);
	assert_int_equal(received(1, got, NULL), 1);
	assert_int_equal(got[0], 3);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].markers_stale, 1);
	assert_no_drops_and_pool_full();
}

static void
test_a_newer_cut_gives_up_the_open_one(void **state)
{
	const uint8_t want[] = {1, MARKER_TAG, 2};
	uint8_t got[RING_SIZE];
	uint64_t cut = 0;

	(void)state;
	/* rank 1 lost cut 5 on the way: its 6 comes while 5 is open */
	emit_marker(0, 0, 5);
	emit(0, 0, 1);
	emit_marker(SPARE_SLOT, 0, 6);
	emit(SPARE_SLOT, 0, 2);
	poll_n(2);
	emit_marker(0, 0, 6);
	poll_n(3);
	assert_tags(got, received(1, got, &cut), want, sizeof(want));
	assert_int_equal(cut, 6);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_given_up, 1);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].markers_aligned, 1);
	assert_int_equal(reported_lost(), 0);
	assert_no_drops_and_pool_full();
}

static void
test_a_marker_into_a_step_goes_to_each_of_its_instances(void **state)
{
	const uint8_t want[] = {1, MARKER_TAG, 2};
	uint8_t got[RING_SIZE];
	uint64_t cut = 0;

	(void)state;
	/* step 1's service (2) has two ranks: NF slot 1 and SPARE_SLOT;
	 * step 0's (1), one: NF slot 0 */
	two_instances_of(2);
	mgr_service_fix(mgr.shm, 1, 1);
	mgr.shm->services[1].inst[mgr.shm->services[1].active & 1][0] = 0;
	emit(0, 0, 1);
	emit_marker(0, 0, 3);
	emit(0, 0, 2);
	poll_n(2);
	/* the packets (flow hash 0) go to rank 0; the marker to both */
	assert_tags(got, received(1, got, NULL), want, sizeof(want));
	assert_int_equal(received(SPARE_SLOT, got, &cut), 1);
	assert_int_equal(got[0], MARKER_TAG);
	assert_int_equal(cut, 3);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].markers_aligned, 1);
	/* Both pass it on (enqueued as is: the record of that fan-out is the
	 * TX unit's own): aligned over both, it leaves by the chain's end. */
	assert_int_equal(rte_ring_enqueue(tx_rings[1], marker(ONVM_ACTION_NEXT, 1, 3, 0)), 0);
	assert_int_equal(rte_ring_enqueue(tx_rings[SPARE_SLOT], marker(ONVM_ACTION_NEXT, 1, 3, 0)),
			 0);
	poll_n(2);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].markers_aligned, 2);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_given_up, 0);
	assert_only_drops(MGR_DROP_CHAIN_END, 1);
}

static void
test_an_instance_leaving_gives_the_cut_up(void **state)
{
	const uint8_t want[] = {1, 2};
	uint8_t got[RING_SIZE];
	struct onvm_service *sv = &mgr.shm->services[1];

	(void)state;
	emit_marker(0, 0, 8);
	emit(0, 0, 1);
	poll_n(1);
	/* rank 1's NF died and was taken out of the list (nf_reap.c); what it
	 * sent before its marker might still be queued, so the cut cannot
	 * pass without it: given up, rank 0 released */
	sv->inst[sv->active & 1][1] = ONVM_INST_NONE;
	mgr.shm->nfs[SPARE_SLOT].status = ONVM_NF_FREE;
	poll_n(2);
	emit(0, 0, 2);
	poll_n(2);
	assert_tags(got, received(1, got, NULL), want, sizeof(want));
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_given_up, 1);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_n_held, 0);
	assert_no_drops_and_pool_full();
}

static void
test_an_instance_that_came_after_the_fanout_gives_the_cut_up(void **state)
{
	struct onvm_service *sv = &mgr.shm->services[1];
	const uint8_t want[] = {1, 2};
	uint8_t got[RING_SIZE];

	(void)state;
	/* cut 9 went to rank 0 only (rank 1 empty then); rank 1's instance
	 * registered before rank 0 passed it on: it never got the marker, so
	 * nothing is held for it -- the cut is given up at once, reported */
	sv->inst[sv->active & 1][1] = ONVM_INST_NONE;
	emit_marker(0, 0, 9);
	sv->inst[sv->active & 1][1] = SPARE_SLOT;
	emit(0, 0, 1);
	emit(SPARE_SLOT, 0, 2);
	/* should a copy reach it after all: stale, not held, not reported */
	assert_int_equal(rte_ring_enqueue(tx_rings[SPARE_SLOT],
					  marker(ONVM_ACTION_NEXT, 0, 9, 0)), 0);
	poll_n(2);
	assert_tags(got, received(1, got, NULL), want, sizeof(want));
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_n_held, 0);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_given_up, 1);
	assert_int_equal(reported_lost(), 1);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].markers_stale, 1);
	assert_no_drops_and_pool_full();
}

static void
test_an_instance_that_left_before_the_first_marker_gives_the_cut_up(void **state)
{
	struct onvm_service *sv = &mgr.shm->services[1];
	const uint8_t want[] = {1};
	uint8_t got[RING_SIZE];

	(void)state;
	/* cut 6 went to both ranks; rank 1's NF left before either passed it
	 * on: its output from before the marker may still be queued, so the
	 * cut cannot pass with rank 0's marker alone */
	emit_marker(0, 0, 6);
	emit(0, 0, 1);
	sv->inst[sv->active & 1][1] = ONVM_INST_NONE;
	mgr.shm->nfs[SPARE_SLOT].status = ONVM_NF_FREE;
	poll_n(2);
	assert_tags(got, received(1, got, NULL), want, sizeof(want));
	assert_int_equal(mgr.dp[MGR_UNIT_TX].markers_aligned, 0);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_given_up, 1);
	assert_int_equal(reported_lost(), 1);
	assert_no_drops_and_pool_full();
}

static void
test_an_instance_not_running_gives_the_cut_up(void **state)
{
	const uint8_t want[] = {1};
	uint8_t got[RING_SIZE];

	(void)state;
	/* rank 1's NF registered but is still starting: it holds the marker
	 * unprocessed (and the cut fails at the exit anyway) */
	mgr.shm->nfs[SPARE_SLOT].nf_running = 0;
	emit_marker(0, 0, 3);
	emit(0, 0, 1);
	poll_n(2);
	assert_tags(got, received(1, got, NULL), want, sizeof(want));
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_n_held, 0);
	assert_int_equal(reported_lost(), 1);
	/* ... and while one is held, a sibling that stops running gives it up */
	mgr.shm->nfs[SPARE_SLOT].nf_running = 1;
	emit_marker(0, 0, 4);
	emit(0, 0, 2);
	poll_n(1);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_n_held, 1);
	mgr.shm->nfs[SPARE_SLOT].nf_running = 0;
	poll_n(2);
	assert_int_equal(received(1, got, NULL), 1);
	assert_int_equal(got[0], 2);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_n_held, 0);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_given_up, 2);
	assert_int_equal(reported_lost(), 2);
	assert_no_drops_and_pool_full();
}

static void
test_a_rolled_back_or_unknown_marker_is_not_passed_on(void **state)
{
	uint8_t got[RING_SIZE];

	(void)state;
	/* A local failover's new active drops its dead predecessor's
	 * uncommitted batch, the marker (and the freeze) in it too. */
	fanned_out(0, 9);
	assert_int_equal(rte_ring_enqueue(tx_rings[0], marker(ONVM_ACTION_DROP, 0, 9,
							       ONVM_PKT_F_FAILOVER_DROP)),
			 0);
	/* never sent into the chain (the newest is 9) */
	assert_int_equal(rte_ring_enqueue(tx_rings[0], marker(ONVM_ACTION_NEXT, 0, 101, 0)), 0);
	assert_int_equal(rte_ring_enqueue(tx_rings[0], marker(ONVM_ACTION_NEXT, 0, 0, 0)), 0);
	emit(0, 0, 1);
	poll_n(2);
	assert_int_equal(received(1, got, NULL), 1);
	assert_int_equal(got[0], 1);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].markers_refused, 3);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_n_held, 0);
	/* the newest's loss is reported (and the unknown one's); cut 0's not */
	assert_int_equal(reported_lost(), 2);
	assert_no_drops_and_pool_full();
}

static void
test_a_hold_does_not_outlive_its_nf(void **state)
{
	const uint8_t want[] = {1};
	uint8_t got[RING_SIZE];

	(void)state;
	emit_marker(0, 0, 5);
	emit(0, 0, 1);
	poll_n(1);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_n_held, 1);
	/* its slot went to another NF before the TX unit saw it free */
	mgr.shm->nfs[0].generation++;
	emit(0, 0, 2);
	poll_n(1);
	/* no NF held for the cut: given up; the old NF's stash routed on */
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_n_held, 0);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_given_up, 1);
	assert_tags(got, received(1, got, NULL), want, sizeof(want));
	poll_n(1);
	assert_int_equal(received(1, got, NULL), 1);
	assert_int_equal(got[0], 2);
	assert_no_drops_and_pool_full();
}

static void
test_a_marker_into_the_chain_skips_an_empty_rank(void **state)
{
	struct onvm_service *sv = &mgr.shm->services[1];
	uint8_t got[RING_SIZE];
	uint64_t cut = 0;

	(void)state;
	sv->inst[sv->active & 1][0] = ONVM_INST_NONE; /* rank 0 not started */
	mgr_marker_fanout(&mgr.dp[MGR_UNIT_TX], marker(ONVM_ACTION_NEXT, 0, 120, 0), 0);
	nf_emit(2, 1, ONVM_ACTION_NEXT, 0, 1, 0); /* work, so the poll flushes */
	poll_n(1);
	assert_int_equal(received(SPARE_SLOT, got, &cut), 1);
	assert_int_equal(got[0], MARKER_TAG);
	assert_int_equal(cut, 120);
	assert_int_equal(rte_ring_count(rx_rings[0]), 0);
	/* an NF may now pass it on */
	assert_int_equal(mgr.remote.marker_newest[0], 120);
	assert_no_drops_and_pool_full();
}

static void
test_a_copy_dropped_on_a_full_ring_is_not_waited_for(void **state)
{
	(void)state;
	/* rank 1's ring is full when cut 130 goes in: its copy is dropped
	 * (reported), so rank 0's marker must not hold rank 0 for it */
	fill_rx(SPARE_SLOT, RING_CAP);
	mgr_marker_fanout(&mgr.dp[MGR_UNIT_TX], marker(ONVM_ACTION_NEXT, 0, 130, 0), 0);
	nf_emit(2, 1, ONVM_ACTION_NEXT, 0, 1, 0); /* work, so the poll flushes */
	poll_n(1);
	assert_int_equal(drops(MGR_DROP_RING_FULL), 1);
	assert_int_equal(reported_lost(), 1);
	drain_and_free(rx_rings[SPARE_SLOT]);
	assert_int_equal(rte_ring_count(rx_rings[0]), 1); /* rank 0 got its copy */
	drain_and_free(rx_rings[0]);
	assert_int_equal(rte_ring_enqueue(tx_rings[0], marker(ONVM_ACTION_NEXT, 0, 130, 0)), 0);
	emit(0, 0, 1);
	poll_n(2);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_n_held, 0);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_given_up, 1);
	assert_int_equal(rte_ring_count(rx_rings[1]), 1); /* packet 1, no marker */
	drain_and_free(rx_rings[1]);
	assert_int_equal(in_use(), 0);
}

static void
test_a_marker_not_of_the_nfs_step_is_dropped(void **state)
{
	uint8_t got[RING_SIZE];

	(void)state;
	emit_marker(0, 1, 3); /* slot 0 is step 0's service, not step 1's */
	emit(0, 0, 1);
	poll_n(2);
	assert_int_equal(received(1, got, NULL), 1);
	assert_int_equal(got[0], 1);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].markers_refused, 1);
	assert_int_equal(reported_lost(), 1);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_n_held, 0);
	assert_no_drops_and_pool_full();
}

static void
test_held_output_and_kept_markers_are_freed_at_exit(void **state)
{
	(void)state;
	emit_marker(0, 0, 2);
	emit(0, 0, 1);
	poll_n(1);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].align_n_held, 1);
	mgr_dp_drop_leftovers();
	assert_int_equal(in_use(), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_two, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_the_next_step_sees_one_marker_after_everything_sent_before_it),
	    T(test_a_held_instances_output_waits_for_its_siblings_marker),
	    T(test_an_alignment_is_given_up_after_its_bound),
	    T(test_a_newer_cut_gives_up_the_open_one),
	    T(test_a_marker_into_a_step_goes_to_each_of_its_instances),
	    T(test_an_instance_leaving_gives_the_cut_up),
	    T(test_an_instance_that_came_after_the_fanout_gives_the_cut_up),
	    T(test_an_instance_that_left_before_the_first_marker_gives_the_cut_up),
	    T(test_an_instance_not_running_gives_the_cut_up),
	    T(test_a_rolled_back_or_unknown_marker_is_not_passed_on),
	    T(test_a_hold_does_not_outlive_its_nf),
	    T(test_a_marker_into_the_chain_skips_an_empty_rank),
	    T(test_a_copy_dropped_on_a_full_ring_is_not_waited_for),
	    T(test_a_marker_not_of_the_nfs_step_is_dropped),
	    T(test_held_output_and_kept_markers_are_freed_at_exit),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
