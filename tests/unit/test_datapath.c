/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_datapath.c -- unit tests for the TX unit (mgr_tx_poll() in datapath.c).
 *
 * The TX unit takes packets off NF TX rings, routes them by the action in
 * their metadata and puts them on NF RX rings or sends them out of a port.
 * Its contract: every packet ends up delivered, or freed and counted under
 * exactly one drop reason, and the unit itself never waits on a full ring.
 * (Since the backpressure change it may instead leave an NF's output on the
 * NF's TX ring while the NF it fed last is full; see the tests on that.)
 *
 * The fixture (a tiny EAL, three NFs, two chains, a net_null port) is in
 * dp_fixture.h.  Every test checks that the pool gets all its mbufs back.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "dp_fixture.h"

/* ---- delivery -------------------------------------------------------------------- */

static void
test_tx_next_delivers_to_the_next_steps_instance(void **state)
{
	struct rte_mbuf *m = NULL;

	(void)state;
	nf_emit(0, 5, ONVM_ACTION_NEXT, 0, 0, 0);
	assert_int_equal(mgr_tx_poll(), 5);
	assert_int_equal(rte_ring_count(rx_rings[1]), 5);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].nf_deq[0], 5);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].nf_enq[1], 5);
	assert_int_equal(drops_total(), 0);
	assert_int_equal(rte_ring_dequeue(rx_rings[1], (void **)&m), 0);
	assert_int_equal(onvm_pkt_meta(m, mgr.dyn_off)->chain_index, 1);
	rte_pktmbuf_free(m);
	drain_and_free(rx_rings[1]);
	assert_int_equal(in_use(), 0);
}

static void
test_tx_ready_nf_is_delivered_to(void **state)
{
	(void)state;
	mgr.shm->nfs[1].status = ONVM_NF_READY;
	nf_emit(0, 2, ONVM_ACTION_TONF, 2, 0, 0);
	mgr_tx_poll();
	assert_int_equal(rte_ring_count(rx_rings[1]), 2);
	assert_int_equal(drops_total(), 0);
}

static void
test_tx_takes_at_most_a_burst_per_nf_per_poll(void **state)
{
	(void)state;
	nf_emit(0, 40, ONVM_ACTION_NEXT, 0, 0, 0);
	assert_int_equal(mgr_tx_poll(), ONVM_BURST);
	assert_int_equal(rte_ring_count(tx_rings[0]), 40 - ONVM_BURST);
	assert_int_equal(rte_ring_count(rx_rings[1]), ONVM_BURST);
	drain_and_free(rx_rings[1]); /* NF 1 reads them */
	assert_int_equal(mgr_tx_poll(), 40 - ONVM_BURST);
	assert_int_equal(rte_ring_count(rx_rings[1]), 40 - ONVM_BURST);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].nf_enq[1], 40);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].nf_deq[0], 40);
	assert_int_equal(drops_total(), 0);
}

static void
test_tx_with_nothing_queued_does_no_work(void **state)
{
	(void)state;
	assert_int_equal(mgr_tx_poll(), 0);
	assert_int_equal(drops_total(), 0);
}

static void
test_tx_free_slots_are_not_polled(void **state)
{
	(void)state;
	nf_emit(2, 3, ONVM_ACTION_TONF, 2, 0, 0);
	mgr.shm->nfs[2].status = ONVM_NF_FREE;
	assert_int_equal(mgr_tx_poll(), 0);
	assert_int_equal(rte_ring_count(tx_rings[2]), 3);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].nf_deq[2], 0);
}

static void
test_tx_output_of_a_stopping_nf_is_still_routed(void **state)
{
	(void)state;
	mgr.shm->nfs[1].status = ONVM_NF_STOPPING;
	nf_emit(1, 3, ONVM_ACTION_TONF, 3, 0, 1);
	assert_int_equal(mgr_tx_poll(), 3);
	assert_int_equal(rte_ring_count(rx_rings[2]), 3);
	assert_int_equal(drops_total(), 0);
}

static void
test_tx_delivery_wakes_a_sleeping_nf(void **state)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[1];

	(void)state;
	s->sleeping = 1;
	nf_emit(0, 1, ONVM_ACTION_NEXT, 0, 0, 0);
	mgr_tx_poll();
	assert_int_equal(s->wake_seq, 1);
}

static void
test_tx_does_not_wake_an_nf_it_delivered_nothing_to(void **state)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[1];

	(void)state;
	s->sleeping = 1;
	fill_rx(1, RING_CAP);
	nf_emit(0, 1, ONVM_ACTION_NEXT, 0, 0, 0);
	mgr_tx_poll();
	assert_int_equal(drops(MGR_DROP_RING_FULL), 1);
	assert_int_equal(s->wake_seq, 0);
}

/* ---- full rings ------------------------------------------------------------------ */

static void
test_tx_full_nf_ring_drops_and_frees_the_excess(void **state)
{
	(void)state;
	fill_rx(1, 60);
	nf_emit(0, 10, ONVM_ACTION_TONF, 2, 0, 0);
	assert_int_equal(mgr_tx_poll(), 10);
	assert_int_equal(rte_ring_count(rx_rings[1]), RING_CAP);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].nf_enq[1], 3);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].nf_enq_drop[1], 7);
	assert_int_equal(UNITS_SUM(drops[MGR_DROP_RING_FULL]), 7);
	assert_int_equal(rte_ring_count(tx_rings[0]), 0);
	assert_int_equal(in_use(), RING_CAP); /* the 7 went back to the pool */
	drain_and_free(rx_rings[1]);
	assert_only_drops(MGR_DROP_RING_FULL, 7);
}

static void
test_tx_full_ring_drops_a_whole_burst_without_waiting(void **state)
{
	(void)state;
	fill_rx(1, RING_CAP);
	nf_emit(0, ONVM_BURST, ONVM_ACTION_NEXT, 0, 0, 0);
	assert_int_equal(mgr_tx_poll(), ONVM_BURST);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].nf_enq_drop[1], ONVM_BURST);
	assert_int_equal(in_use(), RING_CAP);
	drain_and_free(rx_rings[1]);
	assert_only_drops(MGR_DROP_RING_FULL, ONVM_BURST);
}

static void
test_tx_holds_an_nfs_output_while_its_last_hop_is_full(void **state)
{
	(void)state;
	fill_rx(1, 40); /* 23 free: less than a burst */
	nf_emit(0, 1, ONVM_ACTION_NEXT, 0, 0, 0);
	assert_int_equal(mgr_tx_poll(), 1); /* NF 0 now feeds NF 1 */
	nf_emit(0, 5, ONVM_ACTION_NEXT, 0, 0, 0);
	assert_int_equal(mgr_tx_poll(), 0);
	assert_int_equal(rte_ring_count(tx_rings[0]), 5);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].backpressure, 1);
	assert_int_equal(drops_total(), 0);
	drain_and_free(rx_rings[1]); /* NF 1 catches up */
	assert_int_equal(mgr_tx_poll(), 5);
	assert_int_equal(rte_ring_count(rx_rings[1]), 5);
}

/* What the control thread hands back (a dead NF's mbufs) is freed by the TX
 * unit, on its data lcore: the control thread never touches the pool's ring. */
static void
test_tx_frees_what_the_control_thread_hands_back(void **state)
{
	struct rte_mbuf *m[MGR_TX_FREE_BURSTS * ONVM_BURST + 8];

	(void)state;
	assert_int_equal(rte_pktmbuf_alloc_bulk(mgr.pool, m, RTE_DIM(m)), 0);
	assert_int_equal(rte_ring_mp_enqueue_bulk(mgr.ctl_free_ring, (void **)m, RTE_DIM(m), NULL),
			 RTE_DIM(m));
	mgr_tx_poll();
	/* a few bursts per poll, not the whole ring */
	assert_int_equal(rte_ring_count(mgr.ctl_free_ring), 8);
	mgr_tx_poll();
	assert_int_equal(rte_ring_count(mgr.ctl_free_ring), 0);
	assert_int_equal(rte_mempool_in_use_count(mgr.pool), 0);
}

/* The TX unit keeps the alloc ring of an NF that generates packets filled --
 * below ONVM_NF_ALLOC_LOW it adds ONVM_NF_ALLOC_FILL -- and leaves the others
 * alone. */
static void
test_tx_tops_up_the_alloc_ring_of_a_generating_nf(void **state)
{
	struct rte_mbuf *m[ONVM_NF_ALLOC_FILL];
	unsigned int n;

	(void)state;
	mgr_tx_poll();
	assert_int_equal(rte_ring_count(alloc_rings[0]), 0);
	mgr.shm->nfs[0].gen_enabled = 1;
	mgr_tx_poll();
	assert_int_equal(rte_ring_count(alloc_rings[0]), ONVM_NF_ALLOC_FILL);
	assert_int_equal(rte_ring_count(alloc_rings[1]), 0);
	mgr_tx_poll(); /* at or above the low mark: nothing */
	assert_int_equal(rte_ring_count(alloc_rings[0]), ONVM_NF_ALLOC_FILL);
	/* the NF takes all but a few: the next poll tops it up */
	n = rte_ring_sc_dequeue_burst(alloc_rings[0], (void **)m, ONVM_NF_ALLOC_FILL - 5, NULL);
	rte_pktmbuf_free_bulk(m, n);
	mgr_tx_poll();
	assert_int_equal(rte_ring_count(alloc_rings[0]), 5 + ONVM_NF_ALLOC_FILL);
	assert_int_equal(rte_mempool_in_use_count(mgr.pool), 5 + ONVM_NF_ALLOC_FILL);
}

/*
 * NF 0 feeds NF 1 and NF 1 feeds NF 0 (a chain that revisits a service, or
 * TONF back upstream).  Both are blocked on full TX rings, so neither reads
 * its RX ring, and each RX ring has less than a burst free.  Holding an NF's
 * output "while its last hop is full" then holds both for ever: the NFs wait
 * for the TX unit and the TX unit waits for the NFs.  The TX unit must make
 * progress (deliver or drop) instead.
 */
static void
test_tx_nfs_feeding_each_other_are_not_held_for_ever(void **state)
{
	(void)state;
	nf_emit(0, 1, ONVM_ACTION_TONF, 2, 0, 0);
	nf_emit(1, 1, ONVM_ACTION_TONF, 1, 0, 1);
	assert_int_equal(mgr_tx_poll(), 2); /* 0 -> 1 and 1 -> 0 */
	fill_rx(0, 40 - 1);
	fill_rx(1, 40 - 1);
	nf_emit(0, RING_CAP, ONVM_ACTION_TONF, 2, 0, 0);
	nf_emit(1, RING_CAP, ONVM_ACTION_TONF, 1, 0, 1);
	for (int i = 0; i < 100; i++)
		mgr_tx_poll();
	if (rte_ring_count(tx_rings[0]) + rte_ring_count(tx_rings[1]) == 2 * RING_CAP)
		fail_msg("100 polls moved nothing: each NF's output is held for the other "
			 "(backpressure %" PRIu64 "), a deadlock",
			 mgr.dp[MGR_UNIT_TX].backpressure);
}

/* ---- drops by reason ------------------------------------------------------------- */

static void
test_tx_drop_action_frees_and_counts_nf_action(void **state)
{
	(void)state;
	nf_emit(0, 4, ONVM_ACTION_DROP, 0, 0, 0);
	assert_int_equal(mgr_tx_poll(), 4);
	assert_only_drops(MGR_DROP_NF_ACTION, 4);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].nf_deq[0], 4);
}

static void
test_tx_tonf_to_a_service_without_instances_counts_no_instance(void **state)
{
	(void)state;
	nf_emit(0, 3, ONVM_ACTION_TONF, 4, 0, 0);
	mgr_tx_poll();
	assert_only_drops(MGR_DROP_NO_INSTANCE, 3);
}

static void
test_tx_tonf_to_service_0_counts_bad_service(void **state)
{
	(void)state;
	nf_emit(0, 2, ONVM_ACTION_TONF, 0, 0, 0);
	mgr_tx_poll();
	assert_only_drops(MGR_DROP_BAD_SERVICE, 2);
}

static void
test_tx_out_to_a_port_that_does_not_exist_counts_bad_port(void **state)
{
	(void)state;
	nf_emit(0, 2, ONVM_ACTION_OUT, 1, 0, 0);
	nf_emit(0, 1, ONVM_ACTION_OUT, ONVM_MAX_PORTS, 0, 0);
	mgr_tx_poll();
	assert_only_drops(MGR_DROP_BAD_PORT, 3);
	assert_int_equal(mgr.port_stats[0].tx, 0);
}

static void
test_tx_bad_action_value_counts_bad_action(void **state)
{
	(void)state;
	nf_emit(0, 2, ONVM_ACTION_OUT + 1, 0, 0, 0);
	nf_emit(0, 1, 0xff, 0, 0, 0);
	mgr_tx_poll();
	assert_only_drops(MGR_DROP_BAD_ACTION, 3);
}

static void
test_tx_next_after_the_last_step_of_an_exit_drop_chain_counts_chain_end(void **state)
{
	(void)state;
	nf_emit(1, 3, ONVM_ACTION_NEXT, 0, 0, 1);
	mgr_tx_poll();
	assert_only_drops(MGR_DROP_CHAIN_END, 3);
}

static void
test_tx_bad_chain_id_counts_no_chain(void **state)
{
	(void)state;
	nf_emit(0, 1, ONVM_ACTION_NEXT, 0, 9, 0);
	nf_emit(0, 1, ONVM_ACTION_NEXT, 0, 0xffff, 0);
	mgr_tx_poll();
	assert_only_drops(MGR_DROP_NO_CHAIN, 2);
}

static void
test_tx_packet_for_a_stopping_nf_counts_nf_gone(void **state)
{
	(void)state;
	mgr.shm->nfs[1].status = ONVM_NF_STOPPING; /* still listed for service 2 */
	nf_emit(0, 3, ONVM_ACTION_NEXT, 0, 0, 0);
	assert_int_equal(mgr_tx_poll(), 3);
	assert_int_equal(rte_ring_count(rx_rings[1]), 0);
	assert_int_equal(mgr.dp[MGR_UNIT_TX].nf_enq_drop[1], 3);
	assert_only_drops(MGR_DROP_NF_GONE, 3);
}

static void
test_tx_packet_for_a_dead_nf_counts_nf_gone(void **state)
{
	(void)state;
	mgr.shm->nfs[1].status = ONVM_NF_DEAD;
	nf_emit(0, 2, ONVM_ACTION_TONF, 2, 0, 0);
	mgr_tx_poll();
	assert_only_drops(MGR_DROP_NF_GONE, 2);
}

static void
test_tx_mixed_burst_counts_each_packet_once(void **state)
{
	(void)state;
	nf_emit(0, 1, ONVM_ACTION_DROP, 0, 0, 0);
	nf_emit(0, 2, ONVM_ACTION_TONF, 4, 0, 0);
	nf_emit(0, 3, ONVM_ACTION_OUT, 7, 0, 0);
	nf_emit(0, 4, 9, 0, 0, 0);
	nf_emit(0, 5, ONVM_ACTION_NEXT, 0, 0, 0);
	nf_emit(1, 6, ONVM_ACTION_NEXT, 0, 0, 1);
	assert_int_equal(mgr_tx_poll(), 21);
	assert_int_equal(UNITS_SUM(drops[MGR_DROP_NF_ACTION]), 1);
	assert_int_equal(UNITS_SUM(drops[MGR_DROP_NO_INSTANCE]), 2);
	assert_int_equal(UNITS_SUM(drops[MGR_DROP_BAD_PORT]), 3);
	assert_int_equal(UNITS_SUM(drops[MGR_DROP_BAD_ACTION]), 4);
	assert_int_equal(UNITS_SUM(drops[MGR_DROP_CHAIN_END]), 6);
	assert_int_equal(drops_total(), 16);
	assert_int_equal(rte_ring_count(rx_rings[1]), 5);
	assert_int_equal(in_use(), 5);
}

/* ---- ports ----------------------------------------------------------------------- */

static void
test_tx_out_sends_to_the_port_and_counts_packets_and_bytes(void **state)
{
	struct rte_eth_stats st;

	(void)state;
	rte_eth_stats_reset(null_port);
	nf_emit(0, 4, ONVM_ACTION_OUT, 0, 0, 0);
	assert_int_equal(mgr_tx_poll(), 4);
	assert_int_equal(mgr.port_stats[0].tx, 4);
	assert_int_equal(mgr.port_stats[0].tx_bytes, 4 * PKT_LEN);
	assert_int_equal(mgr.port_stats[0].tx_drop, 0);
	assert_int_equal(rte_eth_stats_get(null_port, &st), 0);
	assert_int_equal(st.opackets, 4);
	assert_no_drops_and_pool_full(); /* net_null freed them */
}

static void
test_tx_next_after_the_last_step_exits_to_the_chains_port(void **state)
{
	(void)state;
	nf_emit(0, 2, ONVM_ACTION_NEXT, 0, 1, 0);
	mgr_tx_poll();
	assert_int_equal(mgr.port_stats[0].tx, 2);
	assert_no_drops_and_pool_full();
}

static void
test_tx_sends_what_the_rx_unit_queued_for_a_port(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++)
		assert_int_equal(rte_ring_enqueue(port_ring, pkt(ONVM_ACTION_NEXT, 0, 0, 0)), 0);
	assert_int_equal(mgr_tx_poll(), 3);
	assert_int_equal(rte_ring_count(port_ring), 0);
	assert_int_equal(mgr.port_stats[0].tx, 3);
	assert_no_drops_and_pool_full();
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_tx_next_delivers_to_the_next_steps_instance),
	    T(test_tx_ready_nf_is_delivered_to),
	    T(test_tx_takes_at_most_a_burst_per_nf_per_poll),
	    T(test_tx_with_nothing_queued_does_no_work),
	    T(test_tx_free_slots_are_not_polled),
	    T(test_tx_output_of_a_stopping_nf_is_still_routed),
	    T(test_tx_delivery_wakes_a_sleeping_nf),
	    T(test_tx_does_not_wake_an_nf_it_delivered_nothing_to),
	    T(test_tx_full_nf_ring_drops_and_frees_the_excess),
	    T(test_tx_full_ring_drops_a_whole_burst_without_waiting),
	    T(test_tx_holds_an_nfs_output_while_its_last_hop_is_full),
	    T(test_tx_nfs_feeding_each_other_are_not_held_for_ever),
	    T(test_tx_drop_action_frees_and_counts_nf_action),
	    T(test_tx_tonf_to_a_service_without_instances_counts_no_instance),
	    T(test_tx_tonf_to_service_0_counts_bad_service),
	    T(test_tx_out_to_a_port_that_does_not_exist_counts_bad_port),
	    T(test_tx_bad_action_value_counts_bad_action),
	    T(test_tx_next_after_the_last_step_of_an_exit_drop_chain_counts_chain_end),
	    T(test_tx_bad_chain_id_counts_no_chain),
	    T(test_tx_packet_for_a_stopping_nf_counts_nf_gone),
	    T(test_tx_packet_for_a_dead_nf_counts_nf_gone),
	    T(test_tx_mixed_burst_counts_each_packet_once),
	    T(test_tx_out_sends_to_the_port_and_counts_packets_and_bytes),
	    T(test_tx_next_after_the_last_step_exits_to_the_chains_port),
	    T(test_tx_sends_what_the_rx_unit_queued_for_a_port),
	    T(test_tx_frees_what_the_control_thread_hands_back),
	    T(test_tx_tops_up_the_alloc_ring_of_a_generating_nf),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
