/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_nf_batch -- the crash arithmetic (onvm_nf_batch.h) against the truth.
 *
 * An NF's life is replayed step by step on real rte_rings (no EAL: the rings
 * live in heap memory) with the very writers libnf uses (onvm_batch_record_*,
 * whose step hook the test uses to die between their stores): dequeue a
 * burst into held[], record the batch, allocate generated packets from the
 * alloc ring, emit into the TX ring, ticks (batches without received
 * packets), a promotion -- including ring operations left half done (head
 * moved, tail not).  After every single step the NF
 * "dies": the rings are repaired and onvm_batch_owned() must name exactly the
 * mbufs that are in none of the three rings, i.e. the ones only the dead NF
 * could return.  Also: the ring-shape check refuses rings whose sync modes
 * the arithmetic does not cover.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "onvm_nf_batch.h"

#define RING_SIZE 64
#define N_PKTS	  200

static struct onvm_nf_slot slot;
static void *universe[N_PKTS + 64];
static unsigned int n_universe;

static struct rte_ring *
ring_new(const char *name, unsigned int flags)
{
	ssize_t sz = rte_ring_get_memsize(RING_SIZE);
	struct rte_ring *r;

	assert_true(sz > 0);
	r = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL((size_t)sz, RTE_CACHE_LINE_SIZE));
	assert_non_null(r);
	assert_int_equal(rte_ring_init(r, name, RING_SIZE, flags), 0);
	return r;
}

/* The manager freed `p`: it is nobody's now. */
static void
forget(void *p)
{
	for (unsigned int u = 0; u < n_universe; u++)
		if (universe[u] == p) {
			universe[u] = universe[--n_universe];
			return;
		}
}

static void *
new_pkt(void)
{
	static uintptr_t next = 0x100000;
	void *p = (void *)next;

	next += 64;
	assert_true(n_universe < RTE_DIM(universe));
	universe[n_universe++] = p;
	return p;
}

static bool
in_ring(const struct rte_ring *r, void *p)
{
	const void *const *objs = (const void *const *)&r[1];
	uint32_t mask = r->mask;

	for (uint32_t i = r->cons.tail; i != r->prod.tail; i++)
		if (objs[i & mask] == p)
			return true;
	return false;
}

/* The NF is dead here: does the arithmetic name exactly what it owned?
 * (Also the step hook of the record's writers, onvm_nf_batch.h.) */
static void
check_death(const char *where)
{
	struct onvm_nf_slot dead = slot; /* the rings are shared, the slot copied */
	struct onvm_batch_owned own;
	bool owned[N_PKTS + 64] = {false};
	struct rte_ring saved_rx = *slot.rx_ring, saved_tx = *slot.tx_ring,
			saved_alloc = *slot.alloc_ring;

	onvm_nf_rings_repair(&dead);
	assert_int_equal(onvm_batch_owned(&dead, &own), 0);
	for (uint32_t i = own.first; i < own.last; i++) {
		bool known = false;

		for (unsigned int u = 0; u < n_universe; u++)
			if (universe[u] == dead.batch.held[i])
				owned[u] = known = true;
		if (!known)
			fail_msg("%s: held[%u] is owned but was freed already (a double free)", where,
				 i);
	}
	for (unsigned int u = 0; u < n_universe; u++) {
		bool elsewhere = in_ring(dead.rx_ring, universe[u]) ||
				 in_ring(dead.tx_ring, universe[u]) ||
				 in_ring(dead.alloc_ring, universe[u]);

		if (owned[u] == elsewhere)
			fail_msg("%s: packet %u is %s", where, u,
				 owned[u] ? "owned and in a ring" : "in no ring and not owned");
	}
	/* the live NF goes on from where it was */
	*slot.rx_ring = saved_rx;
	*slot.tx_ring = saved_tx;
	*slot.alloc_ring = saved_alloc;
}

static void
setup_slot(void)
{
	memset(&slot, 0, sizeof(slot));
	n_universe = 0;
	slot.rx_ring = ring_new("rx", RING_F_SC_DEQ);
	slot.tx_ring = ring_new("tx", RING_F_SP_ENQ | RING_F_SC_DEQ);
	slot.alloc_ring = ring_new("alloc", RING_F_SP_ENQ | RING_F_SC_DEQ);
}

static void
teardown_slot(void)
{
	free(slot.rx_ring);
	free(slot.tx_ring);
	free(slot.alloc_ring);
}

/* The manager's side, between batches: fill RX and the alloc ring, drain TX. */
static void
manager_turn(unsigned int rx_n, unsigned int alloc_n)
{
	void *drain[RING_SIZE];
	unsigned int n;

	while ((n = rte_ring_sc_dequeue_burst(slot.tx_ring, drain, RING_SIZE, NULL)) > 0)
		for (unsigned int i = 0; i < n; i++)
			forget(drain[i]); /* forwarded or freed */
	for (unsigned int i = 0; i < rx_n; i++)
		assert_int_equal(rte_ring_mp_enqueue(slot.rx_ring, new_pkt()), 0);
	for (unsigned int i = 0; i < alloc_n; i++)
		assert_int_equal(rte_ring_sp_enqueue(slot.alloc_ring, new_pkt()), 0);
}

/* nf_pkt_alloc(), as libnf does it, with a death check after every step. */
static void
nf_alloc(void)
{
	struct onvm_nf_batch *b = &slot.batch;
	uint32_t at = b->held_n;

	onvm_batch_record_alloc_at(&slot, at);
	check_death("alloc: alloc_at");
	slot.alloc_ring->cons.head++; /* half a dequeue */
	check_death("alloc: mid-dequeue");
	slot.alloc_ring->cons.head--;
	assert_int_equal(rte_ring_sc_dequeue(slot.alloc_ring, (void **)&b->held[at]), 0);
	check_death("alloc: dequeued");
	onvm_batch_record_alloc_done(&slot, at, check_death);
	check_death("alloc: recorded");
}

/* Emission in two steps, with an enqueue left half done in between. */
static void
nf_emit(unsigned int first)
{
	struct onvm_nf_batch *b = &slot.batch;
	uint32_t sent = onvm_batch_emitted(b, slot.tx_ring);

	sent += rte_ring_sp_enqueue_burst(slot.tx_ring, (void **)&b->held[sent],
					  RTE_MIN(first, b->held_n - sent), NULL);
	check_death("part emitted");
	slot.tx_ring->prod.head += 1;
	check_death("mid-enqueue");
	slot.tx_ring->prod.head -= 1;
	sent += rte_ring_sp_enqueue_burst(slot.tx_ring, (void **)&b->held[sent], b->held_n - sent,
					  NULL);
	assert_int_equal(sent, b->held_n);
	check_death("all emitted");
}

/* One batch of received packets, as libnf runs it. */
static void
nf_batch(unsigned int burst, unsigned int gen, unsigned int emit_first)
{
	struct onvm_nf_batch *b = &slot.batch;
	uint32_t n;

	check_death("before the dequeue");
	slot.rx_ring->cons.head += RTE_MIN(burst, rte_ring_count(slot.rx_ring)); /* half done */
	check_death("mid-dequeue");
	slot.rx_ring->cons.head = slot.rx_ring->cons.tail;
	n = rte_ring_sc_dequeue_burst(slot.rx_ring, (void **)b->held, burst, NULL);
	check_death("dequeued, not recorded");
	onvm_batch_record_open(&slot, n, 0, check_death);
	check_death("recorded");
	for (unsigned int g = 0; g < gen && b->held_n < ONVM_NF_HELD_MAX; g++)
		nf_alloc();
	nf_emit(emit_first);
}

/* A tick: a batch of no received packets, in which the NF may generate. */
static void
nf_tick(unsigned int gen, unsigned int emit_first)
{
	check_death("before the tick");
	onvm_batch_record_open(&slot, 0, 0, check_death);
	check_death("tick recorded");
	for (unsigned int g = 0; g < gen; g++)
		nf_alloc();
	nf_emit(emit_first);
}

static void
test_owned_is_exact_at_every_step(void **state)
{
	(void)state;
	setup_slot();
	for (unsigned int round = 0; round < 12; round++) {
		manager_turn(20 + round % 7, round % 3 ? 8 : 0);
		nf_batch(ONVM_BURST, round % 4, round % 5);
		if (round % 2)
			nf_tick(round % 3, 1);
	}
	teardown_slot();
}

/*
 * The active dies inside nf_pkt_alloc() (mbuf taken, not recorded); its
 * standby settles the batch (owned: the batch plus that mbuf), emits it, and
 * goes on: ticks and batches of its own, each with deaths at every step.  A
 * standby that left alloc_seen stale would make its own next tick read as
 * "died inside nf_pkt_alloc" and claim the settled batch a second time (found
 * by the outside review).
 */
static void
test_promotion_after_a_death_inside_alloc(void **state)
{
	struct onvm_nf_batch *b = &slot.batch;
	struct onvm_batch_owned own;
	uint32_t at;

	(void)state;
	setup_slot();
	manager_turn(ONVM_BURST, 8);
	assert_int_equal(rte_ring_sc_dequeue_burst(slot.rx_ring, (void **)b->held, ONVM_BURST,
						   NULL),
			 ONVM_BURST);
	onvm_batch_record_open(&slot, ONVM_BURST, 0, NULL);
	at = b->held_n;
	onvm_batch_record_alloc_at(&slot, at);
	assert_int_equal(rte_ring_sc_dequeue(slot.alloc_ring, (void **)&b->held[at]), 0);
	/* the active dies here; its standby promotes */
	onvm_nf_rings_repair(&slot);
	assert_int_equal(onvm_batch_owned(&slot, &own), 0);
	assert_int_equal(own.first, 0);
	assert_int_equal(own.last, ONVM_BURST + 1);
	onvm_batch_record_settled(&slot, own.last, check_death);
	check_death("settled");
	nf_emit(5); /* as DROP: the manager frees them */
	manager_turn(0, 8);
	nf_tick(2, 1);
	manager_turn(ONVM_BURST, 8);
	nf_tick(0, 0);
	nf_batch(ONVM_BURST, 3, 7);
	teardown_slot();
}

/* A batch bigger than the TX ring's room: emission waits for the manager. */
static void
test_owned_is_exact_when_tx_ring_is_full(void **state)
{
	struct onvm_nf_batch *b = &slot.batch;
	void *drain[RING_SIZE];
	uint32_t n, sent = 0;

	(void)state;
	setup_slot();
	for (unsigned int i = 0; i < RING_SIZE - 1 - 5; i++) /* TX ring nearly full */
		assert_int_equal(rte_ring_sp_enqueue(slot.tx_ring, new_pkt()), 0);
	for (unsigned int i = 0; i < ONVM_BURST; i++)
		assert_int_equal(rte_ring_mp_enqueue(slot.rx_ring, new_pkt()), 0);
	n = rte_ring_sc_dequeue_burst(slot.rx_ring, (void **)b->held, ONVM_BURST, NULL);
	onvm_batch_record_open(&slot, n, 0, check_death);
	sent = rte_ring_sp_enqueue_burst(slot.tx_ring, (void **)b->held, n, NULL);
	assert_int_equal(sent, 5);
	check_death("TX ring full, 5 of 32 out");
	n = rte_ring_sc_dequeue_burst(slot.tx_ring, drain, RING_SIZE, NULL);
	for (uint32_t i = 0; i < n; i++)
		forget(drain[i]);
	n = b->held_n;
	sent += rte_ring_sp_enqueue_burst(slot.tx_ring, (void **)&b->held[sent], n - sent, NULL);
	check_death("the rest out");
	teardown_slot();
}

/* A record that cannot be right is refused, not acted on. */
static void
test_impossible_record_is_refused(void **state)
{
	struct onvm_batch_owned own;

	(void)state;
	setup_slot();
	slot.batch.held_n = ONVM_NF_HELD_MAX + 1;
	assert_int_equal(onvm_batch_owned(&slot, &own), -EINVAL);
	assert_int_equal(own.last, 0);
	slot.batch.held_n = 0;
	slot.batch.tx_base = slot.tx_ring->prod.tail - 3; /* emitted more than held */
	assert_int_equal(onvm_batch_owned(&slot, &own), -EINVAL);
	slot.batch.tx_base = slot.tx_ring->prod.tail;
	slot.batch.alloc_seen = slot.alloc_ring->cons.tail - 2; /* two allocations unrecorded */
	assert_int_equal(onvm_batch_owned(&slot, &own), -EINVAL);
	teardown_slot();
}

static void
test_ring_shapes(void **state)
{
	struct rte_ring *mt = ring_new("mt", 0);
	struct rte_ring *hts = ring_new("hts", RING_F_MP_HTS_ENQ | RING_F_MC_HTS_DEQ);
	struct rte_ring *rts = ring_new("rts", RING_F_MP_RTS_ENQ | RING_F_MC_RTS_DEQ);

	(void)state;
	setup_slot();
	assert_int_equal(onvm_nf_rings_check(&slot), 0);
	free(slot.rx_ring);
	slot.rx_ring = mt; /* an RX ring with several consumers */
	assert_int_equal(onvm_nf_rings_check(&slot), -EPROTO);
	slot.rx_ring = hts;
	assert_int_equal(onvm_nf_rings_check(&slot), -EPROTO);
	slot.rx_ring = rts;
	assert_int_equal(onvm_nf_rings_check(&slot), -EPROTO);
	slot.rx_ring = NULL;
	assert_int_equal(onvm_nf_rings_check(&slot), -EPROTO);
	free(mt);
	free(hts);
	free(rts);
	free(slot.tx_ring);
	free(slot.alloc_ring);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_owned_is_exact_at_every_step),
	    cmocka_unit_test(test_promotion_after_a_death_inside_alloc),
	    cmocka_unit_test(test_owned_is_exact_when_tx_ring_is_full),
	    cmocka_unit_test(test_impossible_record_is_refused),
	    cmocka_unit_test(test_ring_shapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
