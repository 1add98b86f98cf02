/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The flow migration hook on the data units (onvm_mgr/elastic/move_unit.c),
 * through the TX unit of the data-path fixture: packets of a moving
 * bucket routed to the move's source are tagged and copied to its
 * destination (reprocessing) or sent there instead (buffering); a failed
 * move still hooked hides no live move of the same buckets.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dp_fixture.h"
#include "elastic/move.h"

/* Move `slot` of service 2, every bucket, from instance 1 to SPARE_SLOT. */
static void
move_setup(uint32_t slot, uint32_t state, uint8_t method)
{
	struct onvm_move *mv = &mgr.shm->moves[slot];
	uint16_t inst[2] = {1, SPARE_SLOT};

	mgr.shm->nfs[SPARE_SLOT].service_id = 2;
	mgr.shm->nfs[SPARE_SLOT].status = ONVM_NF_RUNNING;
	set_instances(2, inst, 2);
	memset(mv, 0, sizeof(*mv));
	mv->gen = slot + 1;
	mv->service = 2;
	mv->src = 1;
	mv->dst = SPARE_SLOT;
	mv->method = method;
	memset(mv->buckets, 0xff, sizeof(mv->buckets));
	mv->state = state;
	mgr_moves_any = true;
	mgr_move_hook[1] |= 1u << slot;
}

static void
hook_off(void)
{
	mgr_move_hook[1] = 0;
	mgr_moves_any = false;
}

/* Reprocessing: the original to src, tagged; an exact copy to dst,
 * flagged as a copy, with the same tag. */
static void
test_reprocess_tags_and_copies(void **state)
{
	struct rte_mbuf *o = NULL, *c = NULL;
	const struct onvm_pkt_meta *mo, *mc;

	(void)state;
	move_setup(0, ONVM_MOVE_EXPORTED, ONVM_MOVE_REPROCESS);
	nf_emit(0, 3, ONVM_ACTION_NEXT, 0, 0, 0); /* flow hash 0: bucket 0, rank 0 = slot 1 */
	assert_int_equal(mgr_tx_poll(), 3);
	hook_off();
	assert_int_equal(rte_ring_count(rx_rings[1]), 3);
	assert_int_equal(rte_ring_count(rx_rings[SPARE_SLOT]), 3);
	assert_int_equal(mgr.shm->moves[0].copies, 3);
	for (uint64_t seq = 1; seq <= 3; seq++) {
		assert_int_equal(rte_ring_dequeue(rx_rings[1], (void **)&o), 0);
		assert_int_equal(rte_ring_dequeue(rx_rings[SPARE_SLOT], (void **)&c), 0);
		mo = onvm_pkt_meta(o, mgr.dyn_off);
		mc = onvm_pkt_meta(c, mgr.dyn_off);
		assert_true(o != c);
		assert_int_equal(mo->ts, ONVM_MOVE_TAG(0, 1, seq));
		assert_int_equal(mc->ts, mo->ts);
		assert_false(mo->flags & ONVM_PKT_F_MOVE_COPY);
		assert_true(mc->flags & ONVM_PKT_F_MOVE_COPY);
		assert_int_equal(rte_pktmbuf_pkt_len(c), rte_pktmbuf_pkt_len(o));
		assert_memory_equal(rte_pktmbuf_mtod(c, void *), rte_pktmbuf_mtod(o, void *),
				    rte_pktmbuf_data_len(o));
		rte_pktmbuf_free(o);
		rte_pktmbuf_free(c);
	}
}

/* Buffering: the packets go to dst instead, tagged; src gets none. */
static void
test_buffer_sends_to_dst_instead(void **state)
{
	(void)state;
	move_setup(0, ONVM_MOVE_STARTED, ONVM_MOVE_BUFFER);
	nf_emit(0, 4, ONVM_ACTION_NEXT, 0, 0, 0);
	assert_int_equal(mgr_tx_poll(), 4);
	hook_off();
	assert_int_equal(rte_ring_count(rx_rings[1]), 0);
	assert_int_equal(rte_ring_count(rx_rings[SPARE_SLOT]), 4);
	assert_int_equal(mgr.shm->moves[0].copies, 4);
}

/* A failed move not unhooked yet covers the bucket too: the live move
 * after it must still tag and copy every packet. */
static void
test_failed_hooked_slot_hides_no_live_move(void **state)
{
	(void)state;
	move_setup(0, ONVM_MOVE_FAILED, ONVM_MOVE_REPROCESS);
	move_setup(1, ONVM_MOVE_EXPORTED, ONVM_MOVE_REPROCESS);
	nf_emit(0, 4, ONVM_ACTION_NEXT, 0, 0, 0);
	assert_int_equal(mgr_tx_poll(), 4);
	hook_off();
	assert_int_equal(mgr.shm->moves[1].copies, 4);
	assert_int_equal(mgr.shm->moves[0].copies, 0);
	assert_int_equal(rte_ring_count(rx_rings[SPARE_SLOT]), 4);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_reprocess_tags_and_copies, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_buffer_sends_to_dst_instead, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failed_hooked_slot_hides_no_live_move, setup,
					    teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
