/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The two-phase commit between RSync's primary and standby sides
 * (rsync_primary.h, rsync_standby.h), over a simulated link that really
 * encodes and decodes every message (rsync_sim.h).
 *
 * The property everything here protects: whatever the link does, a packet
 * the primary released is known to the standby's TxTs the moment the
 * standby takes over (so it is never emitted twice), packets are released
 * in order and at most once, every packet is released or dropped (counted),
 * and a stage that an ND decision may have shaped is released only once a
 * cut after it is safe at the standby.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rsync_sim.h"

#define US 1000ull

static void
add_n(struct sim *sm, uint32_t n, uint32_t flows)
{
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(sim_add(sm, i % flows), 0);
}

static void
test_stage_is_released_only_after_the_vote(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 1, NULL, 0);

	sm->f_to_p.cut = 1; /* votes never arrive */
	add_n(sm, 8, 3);    /* one full stage: closed and sent */
	assert_int_equal(rsync_standby_stats(sm->s)->votes, 0);
	for (int i = 0; i < 2; i++)
		sim_step(sm, 10 * US);
	/* the standby voted, but the vote is lost: nothing is released,
	 * however long we wait -- until the stage is aborted */
	assert_int_equal(rsync_standby_stats(sm->s)->votes, 1);
	assert_int_equal(sm->nreleased, 0);
	for (int i = 0; i < 100; i++)
		sim_step(sm, 10 * US);
	assert_int_equal(sm->nreleased, 0);
	assert_int_equal(sm->ndropped, 8);
	assert_int_equal(rsync_primary_stats(sm->p)->aborts[RSYNC_ABORT_NO_VOTE], 1);
	assert_int_equal(rsync_primary_stats(sm->p)->stages_released, 0);
	/* sent at 0 and after retrans_ns; the doubled wait then reaches the
	 * abort (max_tries x retrans_ns): the one retransmission, re-voted */
	assert_int_equal(pc.max_tries, 3);
	assert_int_equal(rsync_standby_stats(sm->s)->revotes, 1);
	sim_free(sm);
}

/* Votes that never come: the stage is sent again after retrans_ns, then
 * after twice as long each time (at most 8x), and aborted max_tries x
 * retrans_ns after its first send all the same.  Sent every retrans_ns, a
 * late vote brought max_tries copies of every fragment onto a link already
 * behind (the campaign's standby that never caught up). */
static void
test_retransmissions_back_off_within_the_abort_time(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm;
	uint64_t t0;

	pc.max_tries = 20; /* abort 2 ms after the first send (100 us each) */
	sm = sim_new(&pc, &sc, 1, NULL, 0);
	sm->f_to_p.cut = 1;
	add_n(sm, 8, 3);
	t0 = sm->now;
	while (rsync_primary_stats(sm->p)->aborts[RSYNC_ABORT_NO_VOTE] == 0 &&
	       sm->now - t0 < 10 * pc.max_tries * pc.retrans_ns)
		sim_step(sm, 10 * US);
	/* sent at 0, 100, 300, 700 and 1500 us (waits of 1, 2, 4, 8 x); the
	 * next wait (8 x) passes 2 ms: aborted then, not 15 sends later */
	assert_int_equal(rsync_standby_stats(sm->s)->revotes, 4);
	assert_int_equal(rsync_primary_stats(sm->p)->aborts[RSYNC_ABORT_NO_VOTE], 1);
	assert_true(sm->now - t0 >= pc.max_tries * pc.retrans_ns);
	assert_true(sm->now - t0 <= pc.max_tries * pc.retrans_ns + 20 * US);
	assert_int_equal(sm->nreleased, 0);
	assert_int_equal(sm->ndropped, 8);
	sim_free(sm);
}

static void
test_lost_vote_is_recovered_by_retransmission(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 2, NULL, 0);

	sm->f_to_p.cut = 1;
	add_n(sm, 8, 2);
	sim_step(sm, 10 * US); /* the vote goes out and is lost */
	sm->f_to_p.cut = 0;
	sim_drain(sm, 100, 20 * US);
	assert_int_equal(sm->nreleased, 8);
	assert_int_equal(sm->ndropped, 0);
	assert_int_equal(rsync_standby_stats(sm->s)->revotes, 1);
	assert_true(rsync_primary_stats(sm->p)->frags_retrans > 0);
	sim_free(sm);
}

static void
test_stages_are_released_strictly_in_order(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 3, NULL, 0);

	/* the first stage's fragments are held back: its vote comes last */
	sm->f_to_s.cut = 1;
	add_n(sm, 8, 3);
	sm->f_to_s.cut = 0;
	add_n(sm, 16, 3); /* two more stages, voted at once */
	sim_step(sm, 1 * US);
	sim_step(sm, 1 * US);
	assert_int_equal(rsync_standby_stats(sm->s)->votes, 2);
	assert_int_equal(sm->nreleased, 0); /* voted, but behind an unvoted stage */
	sim_drain(sm, 100, 50 * US);	    /* retransmission of the first one */
	assert_int_equal(sm->nreleased, 24);
	for (uint32_t i = 0; i < 24; i++)
		assert_int_equal(sm->release_order[i], i + 1);
	sim_free(sm);
}

static void
test_abort_cascades_and_the_standby_discards(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 4, NULL, 0);

	/* First stage never reaches the standby; the next two do (and are
	 * staged and voted there), but can only go together with it. */
	sm->f_to_s.cut = 1;
	add_n(sm, 8, 1);
	sm->f_to_s.cut = 0;
	add_n(sm, 16, 1);
	sim_step(sm, 1 * US);
	assert_int_equal(rsync_standby_staged(sm->s), 2);
	sm->f_to_s.cut = 1; /* retransmissions of stage 1 are lost too */
	for (int i = 0; i < 60; i++)
		sim_step(sm, 10 * US);
	assert_int_equal(sm->ndropped, 24);
	assert_int_equal(rsync_primary_stats(sm->p)->aborts[RSYNC_ABORT_NO_VOTE], 1);
	assert_int_equal(rsync_primary_stats(sm->p)->aborts[RSYNC_ABORT_CASCADE], 2);
	sm->f_to_s.cut = 0;
	/* a new stage chains onto the last surviving transaction (none) */
	add_n(sm, 8, 1);
	sim_drain(sm, 200, 20 * US);
	assert_int_equal(sm->nreleased, 8);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(sm->release_order[i], 25 + i);
	/* the aborted ones never reach the standby's TxTs: its entry is the
	 * last released packet, and nothing stays staged */
	assert_int_equal(rsync_standby_txts(sm->s, &sm->flow[32]), 32);
	assert_int_equal(rsync_standby_staged(sm->s), 0);
	assert_int_equal(rsync_standby_stats(sm->s)->aborted + rsync_standby_stats(sm->s)->orphans,
			 2);
	sim_free(sm);
}

static void
test_standby_votes_only_for_a_whole_transaction(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 5, NULL, 0);
	uint8_t data[1500];

	memset(data, 0xab, sizeof(data));
	add_n(sm, 3, 3);
	assert_int_equal(rsync_primary_cut_begin(sm->p, 1, 0, 3, sm->now), 0);
	assert_int_equal(rsync_primary_cut_piece(sm->p, 0, 0, data, sizeof(data)), 0);
	assert_int_equal(rsync_primary_cut_end(sm->p, sm->now), 0);
	/* META + 1 TxTs piece + 3 state pieces (512 bytes each) */
	assert_int_equal(sm->to_s.n, 5);
	/* drop the last fragment: the standby must not vote */
	sm->to_s.n--;
	sim_step(sm, 1 * US);
	assert_int_equal(rsync_standby_stats(sm->s)->votes, 0);
	assert_int_equal(rsync_standby_staged(sm->s), 1);
	sim_drain(sm, 100, 50 * US);
	assert_int_equal(rsync_standby_stats(sm->s)->votes, 1);
	assert_int_equal(sm->nreleased, 3);
	/* the other fragments came twice: counted as duplicates, not staged twice */
	assert_int_equal(sm->rx_reasons_s[RSYNC_RX_DUPLICATE], 4);
	sim_step(sm, 1 * US);
	assert_memory_equal(sm->region[0], data, sizeof(data));
	sim_free(sm);
}

static void
test_commit_applies_in_chain_order_and_is_acked(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 6, NULL, 0);
	struct rsync_standby_applied a;

	add_n(sm, 24, 4);
	sim_drain(sm, 100, 20 * US);
	assert_int_equal(sm->nreleased, 24);
	rsync_standby_get_applied(sm->s, &a);
	assert_int_equal(a.txid, 3);
	assert_int_equal(rsync_standby_stats(sm->s)->applied, 3);
	assert_int_equal(rsync_primary_stats(sm->p)->acks > 0, 1);
	/* per flow, the highest released timestamp */
	for (uint32_t f = 0; f < 4; f++)
		assert_int_equal(rsync_standby_txts(sm->s, &sm->flow[21 + f]), 21 + f);
	sim_free(sm);
}

static void
test_takeover_applies_voted_but_uncommitted_stages(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 7, NULL, 0);
	struct rsync_standby_applied a;

	add_n(sm, 8, 2); /* the stage's fragments are on the link */
	/* the vote arrives (stage released), the COMMIT never does */
	sm->f_to_s.cut = 1;
	sim_step(sm, 1 * US);
	assert_int_equal(sm->nreleased, 8);
	rsync_standby_get_applied(sm->s, &a);
	assert_int_equal(a.txid, 0);
	assert_int_equal(rsync_standby_txts(sm->s, &sm->flow[8]), 0);
	/* the primary dies; the predecessor starts epoch 2 */
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
	assert_int_equal(a.txid, 1);
	assert_int_equal(rsync_standby_txts(sm->s, &sm->flow[7]), 7);
	assert_int_equal(rsync_standby_txts(sm->s, &sm->flow[8]), 8);
	assert_int_equal(rsync_standby_stats(sm->s)->takeover_applied, 1);
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), -ESTALE);
	/* A REPLAY_START of a later attempt, delayed on the way: the node
	 * runs the chain, taking over again would restart the replay at an
	 * epoch its predecessor (following this one) refuses the ACKs of. */
	assert_int_equal(rsync_standby_takeover(sm->s, 3, &a), -EALREADY);
	assert_int_equal(rsync_standby_epoch(sm->s), 2);
	sim_free(sm);
}

/* A cut of no state: marker `id` over `base`, after packet `ts`. */
static void
bare_cut(struct sim *sm, uint64_t id, uint64_t base, uint64_t ts)
{
	assert_int_equal(rsync_primary_cut_begin(sm->p, id, base, ts, sm->now), 0);
	assert_int_equal(rsync_primary_cut_end(sm->p, sm->now), 0);
}

/* A cut of `n` bytes of `fill` at offset 0 of `region`, over `base`. */
static void
cut_with(struct sim *sm, uint64_t id, uint64_t base, uint16_t region, uint8_t fill, uint32_t n)
{
	uint8_t data[SIM_REGION_SIZE];

	memset(data, fill, n);
	assert_int_equal(rsync_primary_cut_begin(sm->p, id, base, sm->npkts, sm->now), 0);
	assert_int_equal(rsync_primary_cut_piece(sm->p, region, 0, data, n), 0);
	assert_int_equal(rsync_primary_cut_end(sm->p, sm->now), 0);
}

static bool
region_is(const struct sim *sm, uint16_t region, uint8_t fill, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (sm->region[region][i] != fill)
			return false;
	return true;
}

/* Until nothing is latched or queued, then a step more: the last COMMIT
 * reaches the standby. */
static void
settle(struct sim *sm)
{
	sim_drain(sm, 400, 20 * US);
	sim_step(sm, 200 * US);
}

/* A primary and a standby in sync from the chain's first transaction: 8
 * packets and cut 1 (600 bytes of 0x11 at the start of region 0). */
static struct sim *
synced_sim(uint64_t seed)
{
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, seed, NULL, 0);

	add_n(sm, 8, 2);
	cut_with(sm, 1, 0, 0, 0x11, 600);
	settle(sm);
	sm->votes_before = rsync_standby_stats(sm->s)->votes;
	return sm;
}

/* The standby node restarts while the chain runs: its new incarnation has
 * none of the state the cuts are deltas over.  It goes on voting (the
 * primary loses nothing), writes no delta, asks for a full cut, and may
 * take over only after a cut later than the full one. */
static void
test_a_standby_started_late_resynchronises_with_a_full_cut(void **state)
{
	(void)state;
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = synced_sim(31);
	struct rsync_standby_applied a;

	assert_true(rsync_standby_synced(sm->s)); /* from the chain's first transaction */
	assert_true(region_is(sm, 0, 0x11, 600));
	/* the standby node restarts: a new incarnation, its NFs fresh */
	rsync_standby_free(sm->s);
	sc.run = SIM_RUN_S + 1;
	sm->s = rsync_standby_new(&sc, &sim_s_ops, sm, 99);
	memset(sm->region, 0, sizeof(sm->region));
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), -ENOTRECOVERABLE);
	/* a delta cut: voted and released, but not written anywhere */
	add_n(sm, 8, 2);
	cut_with(sm, 2, 1, 2, 0x22, 300);
	settle(sm);
	assert_int_equal(sm->nreleased, 16);
	assert_int_equal(rsync_standby_stats(sm->s)->joins, 1);
	assert_false(rsync_standby_whole(sm->s));
	assert_true(rsync_standby_stats(sm->s)->state_skipped >= 300);
	assert_true(region_is(sm, 2, 0, 300));
	/* its next vote asks for a full cut */
	add_n(sm, 8, 2);
	sim_drain(sm, 200, 20 * US);
	assert_int_equal(sm->nreleased, 24);
	assert_true(rsync_standby_stats(sm->s)->resync_votes >= 1);
	assert_true(rsync_primary_full_wanted(sm->p));
	assert_int_equal(rsync_primary_stats(sm->p)->resyncs_asked, 1);
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), -ENOTRECOVERABLE);
	/* the full cut: every region, over nothing */
	assert_int_equal(rsync_primary_cut_begin(sm->p, 3, RSYNC_CUT_FULL, sm->npkts, sm->now), 0);
	assert_false(rsync_primary_full_wanted(sm->p));
	{
		uint8_t d[SIM_REGION_SIZE];

		memset(d, 0x33, sizeof(d));
		for (uint16_t r = 0; r < SIM_REGIONS; r++)
			assert_int_equal(rsync_primary_cut_piece(sm->p, r, 0, d, sizeof(d)), 0);
	}
	assert_int_equal(rsync_primary_cut_end(sm->p, sm->now), 0);
	settle(sm);
	assert_int_equal(rsync_standby_stats(sm->s)->full_applied, 1);
	assert_true(rsync_standby_whole(sm->s));
	for (uint16_t r = 0; r < SIM_REGIONS; r++)
		assert_true(region_is(sm, r, 0x33, SIM_REGION_SIZE));
	/* whole, but not in sync before a later cut */
	assert_false(rsync_standby_synced(sm->s));
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), -ENOTRECOVERABLE);
	assert_int_equal(rsync_standby_stats(sm->s)->takeovers_not_synced, 3);
	add_n(sm, 8, 2);
	cut_with(sm, 4, 3, 1, 0x44, 100); /* a delta: written now */
	settle(sm);
	assert_true(rsync_standby_synced(sm->s));
	assert_true(region_is(sm, 1, 0x44, 100));
	assert_int_equal(rsync_primary_stats(sm->p)->full_cuts, 1);
	assert_int_equal(rsync_primary_stats(sm->p)->resyncs_asked, 1);
	assert_int_equal(sm->ndropped, 0);
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
	assert_int_equal(a.cut_id, 4);
	sim_free(sm);
}

/* A standby that took over is made the chain's primary with a new, empty
 * standby (re-protection): its transactions go on past a txid, never from
 * the origin, so the new standby learns at its first COMMIT that it joined
 * late -- it does not take its empty state for the chain's -- and syncs
 * by a full cut and a later one, as a restarted standby does. */
static void
test_a_resumed_primary_makes_a_fresh_standby_join_late(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct rsync_standby_applied a;
	struct sim *sm;

	pc.epoch = 2; /* the idle primary's, set up at start */
	sc.epoch = 3; /* the epoch the chain runs at since the takeover */
	sm = sim_new(&pc, &sc, 38, NULL, 0);
	assert_int_equal(rsync_primary_resume(sm->p, 3, 0, 0, 0), -EINVAL);
	assert_int_equal(rsync_primary_resume(sm->p, 3, 40, 5, 0), 0);
	assert_int_equal(rsync_primary_resume(sm->p, 3, 41, 5, 0), -EINVAL); /* once */
	assert_int_equal(rsync_primary_epoch(sm->p), 3);
	add_n(sm, 8, 2);
	cut_with(sm, 1, 0, 0, 0x11, 600);
	settle(sm);
	assert_int_equal(sm->nreleased, 8); /* it votes on: the primary loses nothing */
	assert_int_equal(rsync_standby_stats(sm->s)->joins, 1);
	assert_false(rsync_standby_whole(sm->s));
	assert_true(region_is(sm, 0, 0, 600)); /* the delta written nowhere */
	assert_int_equal(rsync_standby_takeover(sm->s, 4, &a), -ENOTRECOVERABLE);
	add_n(sm, 8, 2);
	sim_drain(sm, 200, 20 * US);
	assert_true(rsync_primary_full_wanted(sm->p));
	assert_int_equal(rsync_primary_cut_begin(sm->p, 2, RSYNC_CUT_FULL, sm->npkts, sm->now), 0);
	{
		uint8_t d[SIM_REGION_SIZE];

		memset(d, 0x33, sizeof(d));
		for (uint16_t r = 0; r < SIM_REGIONS; r++)
			assert_int_equal(rsync_primary_cut_piece(sm->p, r, 0, d, sizeof(d)), 0);
	}
	assert_int_equal(rsync_primary_cut_end(sm->p, sm->now), 0);
	settle(sm);
	assert_true(rsync_standby_whole(sm->s));
	assert_false(rsync_standby_synced(sm->s));
	add_n(sm, 8, 2);
	cut_with(sm, 3, 2, 1, 0x44, 100);
	settle(sm);
	assert_true(rsync_standby_synced(sm->s));
	assert_int_equal(sm->ndropped, 0);
	assert_int_equal(rsync_standby_takeover(sm->s, 4, &a), 0);
	assert_int_equal(a.cut_id, 3);
	assert_true(a.txid > 40);
	sim_free(sm);
}

/* The owner finds an NF's state lost (its NF restarted): the same path. */
static void
test_a_standby_that_lost_an_nf_resynchronises(void **state)
{
	(void)state;
	struct sim *sm = synced_sim(32);
	struct rsync_standby_applied a;

	assert_true(rsync_standby_synced(sm->s));
	rsync_standby_state_lost(sm->s);
	memset(sm->region[0], 0, sizeof(sm->region[0])); /* the new NF's block */
	add_n(sm, 8, 2);
	cut_with(sm, 2, 1, 1, 0x22, 300); /* a delta, before the full cut: skipped */
	settle(sm);
	assert_true(region_is(sm, 1, 0, 300));
	assert_true(rsync_primary_full_wanted(sm->p));
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), -ENOTRECOVERABLE);
	/* a full cut that does not fit the stage is dropped: asked for again
	 * after the hold-off */
	assert_int_equal(rsync_primary_cut_begin(sm->p, 3, RSYNC_CUT_FULL, sm->npkts, sm->now), 0);
	rsync_primary_cut_drop(sm->p);
	assert_int_equal(rsync_primary_cut_end(sm->p, sm->now), -E2BIG);
	add_n(sm, 8, 2);
	sim_drain(sm, 200, 20 * US);
	assert_false(rsync_primary_full_wanted(sm->p)); /* within the hold-off */
	for (int i = 0; i < 40 && !rsync_primary_full_wanted(sm->p); i++) {
		add_n(sm, 8, 2);
		sim_drain(sm, 200, 100 * US);
	}
	assert_true(rsync_primary_full_wanted(sm->p));
	cut_with(sm, 4, RSYNC_CUT_FULL, 0, 0x55, SIM_REGION_SIZE);
	add_n(sm, 8, 2);
	cut_with(sm, 5, 4, 0, 0x66, 10);
	settle(sm);
	assert_true(rsync_standby_synced(sm->s));
	assert_true(region_is(sm, 0, 0x66, 10));
	assert_int_equal(sm->region[0][10], 0x55);
	assert_int_equal(rsync_standby_stats(sm->s)->state_losses, 1);
	assert_int_equal(rsync_standby_stats(sm->s)->joins, 0);
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
	sim_free(sm);
}

/* A delta staged while the state was not whole was never checked against
 * the standby chain; applied right after the full cut that makes the state
 * whole, it is checked then: a piece outside the chain is refused, and the
 * state is not whole again (never written out of bounds). */
static void
test_a_delta_staged_before_the_full_cut_is_checked_when_applied(void **state)
{
	(void)state;
	struct sim *sm = synced_sim(33);

	rsync_standby_state_lost(sm->s);
	/* both staged before either is applied: the full cut, then a delta
	 * with a piece in region 7, which the standby chain does not have */
	cut_with(sm, 2, RSYNC_CUT_FULL, 0, 0x22, SIM_REGION_SIZE);
	cut_with(sm, 3, 2, 7, 0x33, 64);
	settle(sm);
	assert_int_equal(rsync_standby_stats(sm->s)->full_applied, 1);
	assert_int_equal(rsync_standby_stats(sm->s)->unchecked_refused, 1);
	assert_false(rsync_standby_whole(sm->s));
	assert_false(rsync_standby_synced(sm->s));
	assert_true(region_is(sm, 0, 0x22, SIM_REGION_SIZE));
	sim_free(sm);
}

/* A standby whole but not in sync yet refuses a takeover without applying
 * anything: its voted, uncommitted transactions may still be aborted by a
 * live primary (a false suspicion), and applying one would break every
 * later COMMIT. */
static void
test_a_refused_takeover_applies_nothing(void **state)
{
	(void)state;
	struct sim *sm = synced_sim(34);
	struct rsync_standby_applied a, b;

	rsync_standby_state_lost(sm->s);
	cut_with(sm, 2, RSYNC_CUT_FULL, 0, 0x22, SIM_REGION_SIZE);
	settle(sm);
	assert_true(rsync_standby_whole(sm->s));
	assert_false(rsync_standby_synced(sm->s));
	/* a stage voted, its COMMIT lost */
	add_n(sm, 8, 2); /* the stage's fragments are on the link */
	sm->f_to_s.cut = 1;
	sim_step(sm, 1 * US);
	rsync_standby_get_applied(sm->s, &a);
	assert_int_equal(rsync_standby_staged(sm->s), 1);
	assert_int_equal(sm->nreleased, 16); /* the primary released it */
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &b), -ENOTRECOVERABLE);
	rsync_standby_get_applied(sm->s, &b);
	assert_int_equal(b.txid, a.txid);
	assert_int_equal(rsync_standby_stats(sm->s)->takeover_applied, 0);
	assert_int_equal(rsync_standby_epoch(sm->s), 1);
	/* the primary goes on; a cut after the full one brings it in sync */
	sm->f_to_s.cut = 0;
	cut_with(sm, 3, 2, 1, 0x33, 100);
	settle(sm);
	assert_true(rsync_standby_synced(sm->s));
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &b), 0);
	sim_free(sm);
}

/* The takeover's dry run checks what was staged unchecked, as applying
 * would: a voted delta that does not fit the standby chain makes the
 * takeover refused before anything is applied (not half-applied). */
static void
test_a_takeover_that_would_refuse_a_piece_applies_nothing(void **state)
{
	(void)state;
	struct sim *sm = synced_sim(37);
	struct rsync_standby_applied a, b;

	rsync_standby_state_lost(sm->s);
	/* the full cut and a delta with a piece in region 7 (not in the
	 * standby chain), both voted; their COMMIT never arrives */
	cut_with(sm, 2, RSYNC_CUT_FULL, 0, 0x22, SIM_REGION_SIZE);
	cut_with(sm, 3, 2, 7, 0x33, 64);
	sm->f_to_s.cut = 1;
	for (int i = 0; i < 5; i++)
		sim_step(sm, 1 * US);
	assert_int_equal(rsync_standby_staged(sm->s), 2);
	rsync_standby_get_applied(sm->s, &a);
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &b), -ENOTRECOVERABLE);
	rsync_standby_get_applied(sm->s, &b);
	assert_int_equal(b.txid, a.txid);
	assert_int_equal(rsync_standby_stats(sm->s)->full_applied, 0);
	assert_int_equal(rsync_standby_staged(sm->s), 2);
	sim_free(sm);
}

/* A standby restarted on an idle chain: no transaction comes, so nothing
 * tells it that it started late -- its HEARTBEATs ask for a full cut
 * (rsync_standby_tick) while it has applied nothing. */
static void
test_a_standby_restarted_on_an_idle_chain_asks_by_heartbeat(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 35, NULL, 0);

	/* a fresh, idle chain: the standby asks too, and the full cut and the
	 * cut after it put it in sync without any traffic */
	rsync_standby_tick(sm->s, sm->now);
	sim_step(sm, 1 * US);
	assert_int_equal(rsync_standby_stats(sm->s)->resync_hbs, 1);
	assert_true(rsync_primary_full_wanted(sm->p));
	cut_with(sm, 1, RSYNC_CUT_FULL, 0, 0x11, 600);
	settle(sm);
	/* the chain's first transaction: nothing was released before it */
	assert_true(rsync_standby_synced(sm->s));
	cut_with(sm, 2, 1, 0, 0x12, 10);
	settle(sm);
	assert_true(rsync_standby_synced(sm->s));
	/* applied something: no more heartbeats */
	rsync_standby_tick(sm->s, sm->now + RSYNC_RESYNC_HB_NS);
	assert_int_equal(rsync_standby_stats(sm->s)->resync_hbs, 1);
	/* the standby node restarts; the chain is idle */
	rsync_standby_free(sm->s);
	sc.run = SIM_RUN_S + 1;
	sm->s = rsync_standby_new(&sc, &sim_s_ops, sm, 98);
	memset(sm->region, 0, sizeof(sm->region));
	sm->now += RSYNC_RESYNC_HB_NS;
	rsync_standby_tick(sm->s, sm->now);
	sim_step(sm, 1 * US);
	assert_true(rsync_primary_full_wanted(sm->p));
	cut_with(sm, 3, RSYNC_CUT_FULL, 0, 0x22, SIM_REGION_SIZE);
	settle(sm);
	assert_int_equal(rsync_standby_stats(sm->s)->joins, 1);
	assert_int_equal(rsync_standby_stats(sm->s)->full_applied, 1);
	assert_true(region_is(sm, 0, 0x22, SIM_REGION_SIZE));
	cut_with(sm, 4, 3, 1, 0x33, 100); /* the cut after it, no packets */
	settle(sm);
	assert_true(rsync_standby_synced(sm->s));
	assert_int_equal(sm->ndropped, 0);
	sim_free(sm);
}

/* A fresh standby that hears transactions does not ask for a full cut: its
 * first COMMIT will tell whether it started late (an on-time standby of a
 * running chain must not make the primary send one). */
static void
test_a_fresh_standby_hearing_transactions_does_not_ask(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 36, NULL, 0);

	add_n(sm, 8, 2);
	sm->f_to_p.cut = 1; /* its vote is lost: nothing applied yet */
	sim_step(sm, 1 * US);
	assert_int_equal(rsync_standby_staged(sm->s), 1);
	rsync_standby_tick(sm->s, sm->now);
	rsync_standby_tick(sm->s, sm->now + RSYNC_RESYNC_HB_NS / 2);
	assert_int_equal(rsync_standby_stats(sm->s)->resync_hbs, 0);
	/* quiet for a whole period: it asks */
	rsync_standby_tick(sm->s, sm->now + RSYNC_RESYNC_HB_NS + 1);
	assert_int_equal(rsync_standby_stats(sm->s)->resync_hbs, 1);
	sim_free(sm);
}

static void
test_fenced_old_primary_gets_no_vote_and_releases_nothing(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 8, NULL, 0);
	struct rsync_standby_applied a;

	add_n(sm, 8, 2);
	sim_drain(sm, 100, 20 * US);
	assert_int_equal(sm->nreleased, 8);
	/* false suspicion: the standby took over, the old primary still runs */
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
	add_n(sm, 16, 2);
	for (int i = 0; i < 100; i++)
		sim_step(sm, 20 * US);
	assert_int_equal(sm->nreleased, 8); /* nothing after the takeover */
	assert_int_equal(sm->ndropped, 16);
	assert_true(sm->rx_reasons_s[RSYNC_RX_STALE_EPOCH] > 0);
	assert_int_equal(rsync_standby_stats(sm->s)->votes, 1);
	sim_free(sm);
}

static void
test_newer_epoch_fences_the_primary(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 9, NULL, 0);
	struct rsync_msg hb = {0};

	add_n(sm, 5, 2); /* open stage, not closed */
	hb.h.version = RSYNC_VERSION;
	hb.h.type = RSYNC_HEARTBEAT;
	hb.h.chain = 7;
	hb.h.epoch = 2;
	hb.h.frag_count = 1;
	hb.h.role = RSYNC_ROLE_STANDBY;
	hb.h.sender_run = SIM_RUN_S;
	assert_int_equal(rsync_primary_rx(sm->p, &hb, sm->now), RSYNC_RX_OK);
	assert_true(rsync_primary_fenced(sm->p));
	assert_int_equal(sm->ndropped, 5);
	assert_int_equal(rsync_primary_stats(sm->p)->pkts_dropped[RSYNC_ABORT_FENCED], 5);
	assert_int_equal(sim_add(sm, 1), -EPERM);
	/* an older epoch is refused */
	hb.h.epoch = 1;
	assert_int_equal(rsync_primary_rx(sm->p, &hb, sm->now), RSYNC_RX_STALE_EPOCH);
	sim_free(sm);
}

static void
test_nd_stage_waits_for_a_cut_after_it(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 10, NULL, 0);
	uint8_t data[64] = {1, 2, 3};

	add_n(sm, 4, 2);
	rsync_primary_nd(sm->p, 1); /* an ND decision on packet 3: cut 1 covers it */
	add_n(sm, 4, 2);	    /* stage closes: needs a cut */
	assert_int_equal(rsync_primary_nd_uncovered(sm->p), 1);
	sim_drain(sm, 20, 10 * US);
	assert_int_equal(rsync_standby_stats(sm->s)->votes, 1);
	assert_int_equal(sm->nreleased, 0); /* voted, but no cut yet */
	assert_int_equal(rsync_primary_stats(sm->p)->nd_waits, 1);
	/* the marker arrives after packet 8: cut at ts 8 */
	assert_int_equal(rsync_primary_cut_begin(sm->p, 1, 0, 8, sm->now), 0);
	assert_int_equal(rsync_primary_cut_piece(sm->p, 1, 100, data, sizeof(data)), 0);
	assert_int_equal(rsync_primary_cut_end(sm->p, sm->now), 0);
	assert_int_equal(rsync_primary_nd_uncovered(sm->p), 0);
	sim_drain(sm, 100, 10 * US);
	assert_int_equal(sm->nreleased, 8);
	assert_int_equal(rsync_primary_released_cut_ts(sm->p), 8);
	assert_int_equal(sm->last_trim, 8); /* LOG_TRIM to the predecessor */
	sim_step(sm, 200 * US);
	assert_memory_equal(sm->region[1] + 100, data, sizeof(data));
	sim_free(sm);
}

static void
test_nd_in_a_tick_right_after_a_marker_waits_for_the_next_cut(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 24, NULL, 0);

	/* Cut 1 after packet 4; then, with no packet in between, an NF draws
	 * a random number in a tick.  The cut's timestamp (4) and the newest
	 * packet's are the same: only the marker's id orders the decision
	 * after the cut -- libnf reports "cut 2 or later". */
	add_n(sm, 4, 2);
	bare_cut(sm, 1, 0, 4);
	rsync_primary_nd(sm->p, 2);
	add_n(sm, 8, 2); /* shaped by the decision */
	sim_drain(sm, 100, 10 * US);
	assert_int_equal(sm->nreleased, 4);
	assert_int_equal(rsync_primary_nd_uncovered(sm->p), 2);
	bare_cut(sm, 2, 1, 12);
	assert_int_equal(rsync_primary_nd_uncovered(sm->p), 0);
	sim_drain(sm, 100, 10 * US);
	assert_int_equal(sm->nreleased, 12);
	assert_int_equal(rsync_primary_released_cut_ts(sm->p), 12);
	sim_free(sm);
}

/* ND decisions made while marker 1 was on its way wait for cut 2; marker
 * 1 then closes a stage after theirs.  That cut does not cover them: they
 * still wait for a cut, and a marker queued behind packets must be let
 * ahead of them (the unit asks rsync_primary_stage_waits_cut()), or the
 * latch fills with stages no cut can release. */
static void
test_a_cut_older_than_the_nd_stages_need_leaves_them_waiting(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 58, NULL, 0);

	rsync_primary_nd(sm->p, 2);
	add_n(sm, 16, 2); /* two stages, each needing cut 2 */
	sim_step(sm, 1 * US);
	assert_true(rsync_primary_stage_waits_cut(sm->p));
	bare_cut(sm, 1, 0, 16); /* marker 1, sent before the decisions */
	assert_true(rsync_primary_stage_waits_cut(sm->p));
	sim_drain(sm, 100, 10 * US);
	assert_int_equal(sm->nreleased, 0);
	bare_cut(sm, 2, 1, 16);
	assert_false(rsync_primary_stage_waits_cut(sm->p));
	sim_drain(sm, 100, 10 * US);
	assert_int_equal(sm->nreleased, 16);
	sim_free(sm);
}

/* Every stage but the one kept for a cut holds outputs waiting for cut 2
 * (ND decisions made while marker 1 was on its way).  Marker 1 must not
 * take that stage: cut 1 releases none of them, and cut 2 would then find
 * no stage -- nothing released ever again.  Cut 1 is refused; cut 2 takes
 * the stage and releases everything. */
static void
test_an_older_cut_leaves_the_last_stage_to_the_cut_awaited(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 59, NULL, 0);
	uint32_t held = (pc.stages - 1) * pc.stage_pkts;

	rsync_primary_nd(sm->p, 2);
	add_n(sm, held, 2);
	sim_drain(sm, 100, 10 * US);
	assert_int_equal(sm->nreleased, 0);
	assert_int_equal(rsync_primary_cut_begin(sm->p, 1, 0, held, sm->now), -ESTALE);
	assert_int_equal(rsync_primary_stats(sm->p)->cuts_too_old, 1);
	/* the packets queued ahead of marker 1 opened the kept stage first:
	 * refused all the same, and they wait there for cut 2 */
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(sim_add_as(sm, i % 2, true), 0);
	assert_int_equal(rsync_primary_cut_begin(sm->p, 1, 0, held + 3, sm->now), -ESTALE);
	assert_int_equal(rsync_primary_stats(sm->p)->cuts_too_old, 2);
	bare_cut(sm, 2, 0, held + 3);
	sim_drain(sm, 100, 10 * US);
	assert_int_equal(sm->nreleased, held + 3);
	sim_free(sm);
}

static void
test_cut_keeps_a_stage_free_when_packets_fill_the_latch(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 11, NULL, 0);

	rsync_primary_nd(sm->p, 1);
	sm->f_to_s.cut = 1; /* hold everything while we fill the latch */
	/* stages - 1 stages of packets; the last is kept for a cut */
	add_n(sm, (pc.stages - 1) * pc.stage_pkts, 3);
	assert_int_equal(sim_add(sm, 0), -ENOBUFS);
	assert_int_equal(rsync_primary_stats(sm->p)->latch_full, 1);
	bare_cut(sm, 1, 0, sm->npkts);
	sm->f_to_s.cut = 0;
	sim_drain(sm, 200, 50 * US);
	assert_int_equal(sm->nreleased, (pc.stages - 1) * pc.stage_pkts);
	sim_free(sm);
}

static void
test_stages_waiting_for_a_cut_never_block_the_cut(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm;

	/* A window smaller than the latch would let stages that wait for a
	 * cut fill it, and the cut's stage could never be sent: refused. */
	pc.stages = 6;
	pc.standby_window = 5;
	errno = 0;
	assert_null(rsync_primary_new(&pc, &sim_p_ops, NULL, 1));
	assert_int_equal(errno, EINVAL);
	/* The smallest window allowed: every packet stage waits for the cut,
	 * which still goes out and releases them all. */
	pc.standby_window = pc.stages;
	sm = sim_new(&pc, &sc, 15, NULL, 0);
	rsync_primary_nd(sm->p, 1);
	add_n(sm, (pc.stages - 1) * pc.stage_pkts, 4);
	sim_drain(sm, 20, 10 * US);
	assert_int_equal(sm->nreleased, 0);
	assert_int_equal(rsync_standby_stats(sm->s)->votes, pc.stages - 1);
	bare_cut(sm, 1, 0, sm->npkts);
	sim_drain(sm, 200, 20 * US);
	assert_int_equal(sm->nreleased, (pc.stages - 1) * pc.stage_pkts);
	sim_free(sm);
}

/* Transaction 1 is voted by the standby but every vote is lost; the primary
 * aborts it and its ABORT is lost too, so the standby keeps it staged. */
static void
abort_with_the_abort_lost(struct sim *sm, const struct rsync_primary_cfg *pc)
{
	sm->f_to_p.cut = 1;
	for (uint32_t i = 0; i < pc->stage_pkts; i++)
		assert_int_equal(sim_add(sm, 1), 0);
	sim_step(sm, 1 * US);
	sm->f_to_s.cut = 1;
	for (int i = 0; i < 60; i++)
		sim_step(sm, 10 * US);
	assert_int_equal(rsync_primary_stats(sm->p)->aborts[RSYNC_ABORT_NO_VOTE], 1);
	assert_int_equal(rsync_standby_staged(sm->s), 1);
	sm->f_to_p.cut = 0;
	sm->f_to_s.cut = 0;
}

static void
test_aborted_branch_is_never_applied_in_place_of_the_live_one(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 16, NULL, 0);
	struct rsync_standby_applied a;

	abort_with_the_abort_lost(sm, &pc);
	/* Transaction 2 follows the same predecessor (none) and is released. */
	for (uint32_t i = 0; i < pc.stage_pkts; i++)
		assert_int_equal(sim_add(sm, 2), 0);
	sim_drain(sm, 100, 20 * US);
	assert_int_equal(sm->nreleased, pc.stage_pkts);
	rsync_standby_get_applied(sm->s, &a);
	assert_int_equal(a.txid, 2); /* the live branch, not the aborted one */
	assert_int_equal(rsync_standby_staged(sm->s), 0);
	assert_int_equal(rsync_standby_txts(sm->s, &sm->flow[1]), 0);
	assert_int_equal(rsync_standby_txts(sm->s, &sm->flow[2 * pc.stage_pkts]),
			 2 * pc.stage_pkts);
	sim_free(sm);
}

static void
test_takeover_follows_the_newest_voted_chain(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 17, NULL, 0);
	struct rsync_standby_applied a;

	/* as above, but the primary dies before any COMMIT gets through */
	abort_with_the_abort_lost(sm, &pc);
	for (uint32_t i = 0; i < pc.stage_pkts; i++)
		assert_int_equal(sim_add(sm, 2), 0);
	sim_step(sm, 1 * US); /* voted and released; the COMMIT is lost */
	sm->f_to_s.cut = 1;
	sim_step(sm, 1 * US);
	assert_int_equal(sm->nreleased, pc.stage_pkts);
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
	assert_int_equal(a.txid, 2);
	assert_int_equal(rsync_standby_txts(sm->s, &sm->flow[2 * pc.stage_pkts]),
			 2 * pc.stage_pkts);
	sim_free(sm);
}

/* A bare transaction (META only: no TxTs, no state) straight to the standby. */
static enum rsync_rx_reason
standby_meta(struct sim *sm, uint64_t txid, uint64_t prev)
{
	struct rsync_msg m = {0};

	m.h.version = RSYNC_VERSION;
	m.h.type = RSYNC_PREPARE;
	m.h.chain = 7;
	m.h.epoch = 1;
	m.h.role = RSYNC_ROLE_PRIMARY;
	m.h.sender_run = SIM_RUN_P;
	m.h.txid = txid;
	m.h.frag_count = 1;
	m.h.region = RSYNC_REGION_META;
	m.u.meta.prev_txid = prev;
	return rsync_standby_rx(sm->s, &m, sm->now);
}

static void
test_meta_discards_what_its_predecessor_skips(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm;
	struct rsync_standby_applied a;

	sc.window = 3;
	pc.stages = 3;
	pc.standby_window = 3;
	sm = sim_new(&pc, &sc, 21, NULL, 0);
	/* 1, 2, 3 staged and voted; then the primary aborted them all and
	 * every ABORT was lost: 7 follows 0, so 1 .. 6 are dead. */
	for (uint64_t t = 1; t <= 3; t++)
		assert_int_equal(standby_meta(sm, t, t - 1), RSYNC_RX_OK);
	assert_int_equal(rsync_standby_staged(sm->s), 3);
	assert_int_equal(standby_meta(sm, 7, 0), RSYNC_RX_OK);
	assert_int_equal(rsync_standby_staged(sm->s), 1);
	assert_int_equal(rsync_standby_stats(sm->s)->orphans, 3);
	/* a late copy of a dead one is refused, not staged again */
	assert_int_equal(standby_meta(sm, 2, 1), RSYNC_RX_UNKNOWN_TXN);
	assert_int_equal(standby_meta(sm, 5, 4), RSYNC_RX_UNKNOWN_TXN);
	assert_int_equal(rsync_standby_staged(sm->s), 1);
	/* the live one commits */
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
	assert_int_equal(a.txid, 7);
	sim_free(sm);
}

static void
test_lost_aborts_never_fill_the_standby_for_good(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm;
	uint32_t before;

	sc.window = 3;
	pc.stages = 3;
	pc.standby_window = 3;
	pc.max_tries = 2;
	sm = sim_new(&pc, &sc, 22, NULL, 0);
	/* Round 1: two stages of packets and a cut fill the standby's three
	 * slots; the votes are lost, then the ABORT. */
	sm->f_to_p.cut = 1;
	add_n(sm, 2 * pc.stage_pkts, 3);
	bare_cut(sm, 1, 0, sm->npkts);
	sim_step(sm, 1 * US);
	assert_int_equal(rsync_standby_staged(sm->s), 3);
	sm->f_to_s.cut = 1;
	for (int i = 0; i < 60 && rsync_primary_stats(sm->p)->aborts[RSYNC_ABORT_NO_VOTE] == 0; i++)
		sim_step(sm, 10 * US);
	assert_int_equal(rsync_primary_stats(sm->p)->aborts[RSYNC_ABORT_NO_VOTE], 1);
	/* Round 2, still cut off: the primary aborts it too, and its ABORT
	 * (the only one it still repeats) names nothing the standby holds. */
	add_n(sm, 2 * pc.stage_pkts, 3);
	for (int i = 0; i < 60 && rsync_primary_stats(sm->p)->aborts[RSYNC_ABORT_NO_VOTE] < 2; i++)
		sim_step(sm, 10 * US);
	assert_int_equal(rsync_primary_stats(sm->p)->aborts[RSYNC_ABORT_NO_VOTE], 2);
	/* The link heals: new traffic must get through. */
	sm->f_to_s.cut = 0;
	sm->f_to_p.cut = 0;
	before = sm->nreleased;
	add_n(sm, pc.stage_pkts, 3);
	sim_drain(sm, 400, 20 * US);
	assert_int_equal(sm->nreleased - before, pc.stage_pkts);
	assert_int_equal(rsync_standby_staged(sm->s), 0);
	assert_int_equal(sm->nreleased + sm->ndropped, sm->npkts);
	sim_free(sm);
}

static void
test_refused_fragment_takes_no_staging_slot(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm;
	struct rsync_msg m = {0};
	uint8_t data[RSYNC_REC_HDR_LEN + 52] = {0};

	sc.window = 2;
	pc.stages = 2;
	pc.standby_window = 2;
	sm = sim_new(&pc, &sc, 23, NULL, 0);
	m.h.version = RSYNC_VERSION;
	m.h.type = RSYNC_CHECKPOINT;
	m.h.chain = 7;
	m.h.epoch = 1;
	m.h.role = RSYNC_ROLE_PRIMARY;
	m.h.sender_run = SIM_RUN_P;
	m.h.frag_seq = 1;
	m.h.frag_count = 2;
	rsync_state_rec_put(data, SIM_REGIONS, 0, 52); /* no such region */
	m.h.len = sizeof(data);
	m.payload = data;
	for (uint64_t t = 1; t <= 4; t++) {
		m.h.txid = t;
		assert_int_equal(rsync_standby_rx(sm->s, &m, 0), RSYNC_RX_BAD_REGION);
	}
	assert_int_equal(rsync_standby_staged(sm->s), 0);
	assert_int_equal(standby_meta(sm, 5, 0), RSYNC_RX_OK);
	assert_int_equal(rsync_standby_stats(sm->s)->votes, 1);
	sim_free(sm);
}

static void
test_cut_before_any_packet_sends_no_log_trim(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 25, NULL, 0);

	/* A marker injected before the first packet: a cut at timestamp 0.
	 * LOG_TRIM 0 is not a message (the codec refuses it): none is sent. */
	bare_cut(sm, 1, 0, 0);
	sim_drain(sm, 100, 10 * US);
	for (int i = 0; i < 40; i++)
		sim_step(sm, 100 * US);
	assert_int_equal(rsync_primary_stats(sm->p)->stages_released, 1);
	assert_int_equal(rsync_primary_stats(sm->p)->trims_sent, 0);
	add_n(sm, 8, 2);
	bare_cut(sm, 2, 1, 8);
	sim_drain(sm, 100, 10 * US);
	assert_int_equal(sm->last_trim, 8);
	sim_free(sm);
}

static void
test_cut_whose_base_was_aborted_is_stale(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 12, NULL, 0);

	sm->f_to_s.cut = 1;
	add_n(sm, 2, 1);
	bare_cut(sm, 1, 0, 2);
	assert_int_equal(rsync_primary_cut_base(sm->p), 1);
	for (int i = 0; i < 60; i++)
		sim_step(sm, 10 * US); /* cut 1's stage is aborted */
	assert_int_equal(rsync_primary_cut_base(sm->p), 0);
	/* a marker that left with base 1 comes back: refused */
	assert_int_equal(rsync_primary_cut_begin(sm->p, 2, 1, 3, sm->now), -ESTALE);
	assert_int_equal(rsync_primary_stats(sm->p)->cuts_stale, 1);
	bare_cut(sm, 3, 0, 3);
	sim_free(sm);
}

static void
test_cut_bigger_than_a_stage_is_dropped_and_counted(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm;
	static uint8_t big[4096];

	pc.stage_state_bytes = 2048;
	sm = sim_new(&pc, &sc, 13, NULL, 0);
	add_n(sm, 1, 1);
	assert_int_equal(rsync_primary_cut_begin(sm->p, 1, 0, 1, sm->now), 0);
	assert_int_equal(rsync_primary_cut_piece(sm->p, 0, 0, big, sizeof(big)), -E2BIG);
	assert_int_equal(rsync_primary_cut_end(sm->p, sm->now), -E2BIG);
	assert_int_equal(rsync_primary_stats(sm->p)->cuts_too_big, 1);
	assert_int_equal(rsync_primary_cut_base(sm->p), 0); /* no cut in the chain */
	sim_drain(sm, 100, 20 * US);
	assert_int_equal(sm->nreleased, 1); /* the packet still goes */
	sim_free(sm);
}

static void
test_cut_dropped_by_the_owner_leaves_the_stage_without_it(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 15, NULL, 0);
	static uint8_t piece[64];

	add_n(sm, 1, 1);
	assert_int_equal(rsync_primary_cut_begin(sm->p, 1, 0, 1, sm->now), 0);
	assert_int_equal(rsync_primary_cut_piece(sm->p, 0, 0, piece, sizeof(piece)), 0);
	rsync_primary_cut_drop(sm->p); /* an NF's freeze failed */
	assert_int_equal(rsync_primary_cut_piece(sm->p, 1, 0, piece, sizeof(piece)), -E2BIG);
	assert_int_equal(rsync_primary_cut_end(sm->p, sm->now), -E2BIG);
	assert_int_equal(rsync_primary_stats(sm->p)->cuts_dropped, 1);
	assert_int_equal(rsync_primary_stats(sm->p)->cuts_too_big, 0);
	assert_int_equal(rsync_primary_cut_base(sm->p), 0); /* no cut in the chain */
	/* the next cut names the old base again, and goes */
	bare_cut(sm, 2, 0, 1);
	sim_drain(sm, 100, 20 * US);
	assert_int_equal(sm->nreleased, 1);
	assert_int_equal(rsync_primary_cut_base(sm->p), 2);
	sim_free(sm);
}

static void
test_hmac_protects_every_message(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	const uint8_t key[] = "a shared secret of the two nodes";
	struct sim *sm = sim_new(&pc, &sc, 14, key, sizeof(key) - 1);
	struct rsync_auth *other;

	add_n(sm, 16, 3);
	sim_drain(sm, 100, 20 * US);
	assert_int_equal(sm->nreleased, 16);
	assert_int_equal(sm->decode_fail, 0);
	/* a standby with another key accepts nothing: no vote, nothing released */
	other = rsync_auth_new((const uint8_t *)"another key", 11, 1);
	rsync_auth_free(sm->auth_s);
	sm->auth_s = other;
	add_n(sm, 8, 3);
	for (int i = 0; i < 60; i++)
		sim_step(sm, 10 * US);
	assert_int_equal(sm->nreleased, 16);
	assert_int_equal(sm->ndropped, 8);
	assert_true(sm->decode_fail > 0);
	sim_free(sm);
}

/* The primary node restarts (no failover yet: BFD is optional, and a
 * restart can be quicker than its detection time).  Its new run numbers
 * transactions from 1 again under the same key and epoch, so VOTEs
 * recorded before the restart name txids it now uses: replayed by anyone
 * on the path, they must not release its stages.  They are addressed to
 * the old run, and refused (stale_run); the standby refuses the new run's
 * transactions (its NFs' state is gone) and keeps its own for a takeover. */
static void
test_votes_recorded_before_a_primary_restart_are_refused(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	const uint8_t key[] = "a shared secret of the two nodes";
	struct sim *sm = sim_new(&pc, &sc, 51, key, sizeof(key) - 1);
	struct sim_frame recorded[8];
	struct rsync_standby_applied a;
	uint32_t nrec = 0;

	/* two stages, their VOTEs recorded on their way (txids 1 and 2) */
	sm->f_to_p = (struct sim_faults){.delay_pct = 100, .delay_steps = 1};
	add_n(sm, 16, 3);
	sim_step(sm, 1 * US);
	for (uint32_t i = 0; i < sm->to_p.n && nrec < 8; i++)
		recorded[nrec++] = sm->to_p.f[i];
	assert_true(nrec >= 2);
	settle(sm);
	assert_int_equal(sm->nreleased, 16);
	/* the primary restarts: a new run, the same epoch and key */
	rsync_primary_free(sm->p);
	pc.run = SIM_RUN_P + 1;
	sm->p = rsync_primary_new(&pc, &sim_p_ops, sm, 52);
	sm->f_to_p = (struct sim_faults){0};
	add_n(sm, 16, 3); /* txids 1 and 2 again, never voted */
	for (uint32_t i = 0; i < nrec; i++) {
		struct rsync_msg d;

		assert_int_equal(rsync_decode(recorded[i].bytes, recorded[i].len, sm->auth_p, &d),
				 RSYNC_RX_OK); /* authentic */
		assert_int_equal(rsync_primary_rx(sm->p, &d, sm->now), RSYNC_RX_STALE_RUN);
	}
	assert_int_equal(sm->nreleased, 16);
	for (int i = 0; i < 100; i++)
		sim_step(sm, 20 * US);
	/* the standby never voted for the new run: nothing more released */
	assert_int_equal(sm->nreleased, 16);
	assert_int_equal(rsync_standby_stats(sm->s)->primary_restarts, 1);
	assert_true(sm->rx_reasons_s[RSYNC_RX_PEER_RESTARTED] > 0);
	/* and the standby still takes over with the old run's state */
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
	assert_int_equal(rsync_standby_txts(sm->s, &sm->flow[16]), 16);
	sim_free(sm);
}

/* COMMITs recorded before the standby restarted apply nothing of its new
 * run; the primary, hearing the new run, gives up the commits the old one
 * never acknowledged (they would block its window for good). */
static void
test_a_restarted_standby_is_told_apart_from_the_one_before(void **state)
{
	(void)state;
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = synced_sim(53);
	struct rsync_msg commit = {0};

	commit.h.version = RSYNC_VERSION;
	commit.h.type = RSYNC_COMMIT;
	commit.h.chain = 7;
	commit.h.epoch = 1;
	commit.h.role = RSYNC_ROLE_PRIMARY;
	commit.h.sender_run = SIM_RUN_P;
	commit.h.receiver_run = SIM_RUN_S; /* the old standby's */
	commit.h.txid = 1;
	commit.h.frag_count = 1;
	rsync_standby_free(sm->s);
	sc.run = SIM_RUN_S + 1;
	sm->s = rsync_standby_new(&sc, &sim_s_ops, sm, 54);
	assert_int_equal(rsync_standby_rx(sm->s, &commit, sm->now), RSYNC_RX_STALE_RUN);
	/* the new standby's heartbeat tells the primary */
	rsync_standby_tick(sm->s, sm->now + RSYNC_RESYNC_HB_NS);
	sim_step(sm, 1 * US);
	assert_int_equal(rsync_primary_standby_run(sm->p), SIM_RUN_S + 1);
	assert_int_equal(rsync_primary_stats(sm->p)->standby_restarts, 1);
	sim_free(sm);
}

/* The predecessor restarts and loses its log: what left the chain since
 * the last cut can never be replayed.  Stages not released then wait for a
 * cut after them even once voted, so that a takeover applies their effects
 * instead of missing them. */
static void
test_a_restarted_predecessor_holds_stages_until_a_cut(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 55, NULL, 0);
	struct rsync_msg hb = {0};

	hb.h.version = RSYNC_VERSION;
	hb.h.type = RSYNC_HEARTBEAT;
	hb.h.chain = 7;
	hb.h.epoch = 1;
	hb.h.frag_count = 1;
	hb.h.role = RSYNC_ROLE_PREDECESSOR;
	hb.h.sender_run = 0xAA;
	assert_int_equal(rsync_primary_rx(sm->p, &hb, sm->now), RSYNC_RX_OK);
	sm->f_to_p.cut = 1; /* votes held back */
	add_n(sm, 8, 2);
	sim_step(sm, 1 * US);
	hb.h.sender_run = 0xBB; /* the predecessor restarted */
	assert_int_equal(rsync_primary_rx(sm->p, &hb, sm->now), RSYNC_RX_OK);
	assert_int_equal(rsync_primary_stats(sm->p)->pred_restarts, 1);
	assert_true(rsync_primary_needs_cut(sm->p));
	sm->f_to_p.cut = 0;
	for (int i = 0; i < 20; i++)
		sim_step(sm, 50 * US);
	assert_int_equal(sm->nreleased, 0); /* voted, but waiting for the cut */
	assert_true(rsync_primary_stats(sm->p)->nd_waits >= 1);
	cut_with(sm, 1, 0, 0, 0x11, 100);
	settle(sm);
	assert_int_equal(sm->nreleased, 8);
	sim_free(sm);
}

static struct rsync_msg
heartbeat_of(uint8_t role, uint64_t run)
{
	struct rsync_msg hb = {0};

	hb.h.version = RSYNC_VERSION;
	hb.h.type = RSYNC_HEARTBEAT;
	hb.h.chain = 7;
	hb.h.epoch = 1;
	hb.h.frag_count = 1;
	hb.h.role = role;
	hb.h.sender_run = run;
	hb.h.receiver_run = SIM_RUN_P;
	return hb;
}

/* A standby that holds nothing yet (it just started) and first hears a
 * stray frame of a primary run that is gone (late on the link, or sent
 * again) must not refuse the live primary for ever: that run, heard on,
 * is the one it serves -- its stages are voted and released. */
static void
test_a_fresh_standby_serves_the_live_primary_after_a_stray_run(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 61, NULL, 0);
	struct rsync_msg hb = heartbeat_of(RSYNC_ROLE_PRIMARY, SIM_RUN_P + 9);

	hb.h.receiver_run = SIM_RUN_S;
	assert_int_equal(rsync_standby_rx(sm->s, &hb, sm->now), RSYNC_RX_OK);
	assert_int_equal(rsync_standby_primary_run(sm->s), SIM_RUN_P + 9);
	/* (the first stages go unvoted, aborted: their frames are the
	 * live run heard on) */
	for (int k = 0; k < 4; k++) {
		add_n(sm, 8, 2);
		sim_drain(sm, 200, 10 * US);
	}
	assert_int_equal(rsync_standby_primary_run(sm->s), SIM_RUN_P);
	assert_int_equal(rsync_standby_stats(sm->s)->primary_runs_taken_back, 1);
	assert_true(rsync_standby_stats(sm->s)->votes > 0);
	assert_true(sm->nreleased >= 8);
	assert_int_equal(sm->nreleased + sm->ndropped, 32);
	/* and once it holds the live run's state, a stray of the dead run is
	 * refused, however many */
	for (int i = 0; i < 3 * RSYNC_RUN_LIVE_AFTER; i++) {
		hb.h.sender_run = SIM_RUN_P + 9;
		assert_int_equal(rsync_standby_rx(sm->s, &hb, sm->now), RSYNC_RX_PEER_RESTARTED);
	}
	assert_int_equal(rsync_standby_primary_run(sm->s), SIM_RUN_P);
	sim_free(sm);
}

/* The predecessor's restart is heard while marker 1 is on its way, ahead
 * of input of its old run still in the NFs: the owner gives that marker up
 * (it makes no cut) and names the next one's cut.  Stages keep coming and
 * fill the latch meanwhile: the stage kept free for a cut is still free,
 * the packets waiting ahead of marker 2 go into it with the cut, and
 * everything is released under cut 2 -- no stage waits for a cut that can
 * find no room. */
static void
test_a_predecessor_restart_heard_behind_a_marker_waits_for_the_cut_after(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm = sim_new(&pc, &sc, 56, NULL, 0);
	struct rsync_msg hb = heartbeat_of(RSYNC_ROLE_PREDECESSOR, 0xAA);
	uint32_t held = (pc.stages - 1) * pc.stage_pkts;

	assert_int_equal(rsync_primary_rx(sm->p, &hb, sm->now), RSYNC_RX_OK);
	add_n(sm, 4, 2);
	sim_drain(sm, 100, 10 * US);
	assert_int_equal(sm->nreleased, 4);
	hb.h.sender_run = 0xBB;
	assert_int_equal(rsync_primary_rx(sm->p, &hb, sm->now), RSYNC_RX_OK);
	rsync_primary_hold_for_cut(sm->p, 2); /* marker 1 given up */
	add_n(sm, held, 2); /* every stage but the one kept for a cut */
	sim_drain(sm, 100, 10 * US);
	assert_int_equal(sm->nreleased, 4); /* not before a cut holds them */
	assert_int_equal(rsync_primary_nd_uncovered(sm->p), 2);
	assert_true(rsync_primary_stage_waits_cut(sm->p));
	/* marker 2 behind more packets: they go with it into the free stage */
	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(sim_add_as(sm, i % 2, true), 0);
	bare_cut(sm, 2, 0, sm->npkts);
	sim_drain(sm, 100, 10 * US);
	assert_int_equal(sm->nreleased, 4 + held + 5);
	sim_free(sm);
}

/* A HEARTBEAT sent before its sender restarted, late or twice, is no
 * news: not another restart (a standby's would give up the commits it
 * acknowledged nothing of, a predecessor's hold every stage for a cut). */
static void
test_a_heartbeat_of_a_replaced_run_is_not_a_restart(void **state)
{
	(void)state;
	struct sim *sm = synced_sim(57);
	struct rsync_msg hb = heartbeat_of(RSYNC_ROLE_STANDBY, SIM_RUN_S + 1);
	const struct rsync_primary_stats *st = rsync_primary_stats(sm->p);

	assert_int_equal(rsync_primary_standby_run(sm->p), SIM_RUN_S);
	assert_int_equal(rsync_primary_rx(sm->p, &hb, sm->now), RSYNC_RX_OK);
	assert_int_equal(st->standby_restarts, 1);
	hb.h.sender_run = SIM_RUN_S; /* the run before, late */
	assert_int_equal(rsync_primary_rx(sm->p, &hb, sm->now), RSYNC_RX_PEER_RESTARTED);
	assert_int_equal(rsync_primary_standby_run(sm->p), SIM_RUN_S + 1);
	hb.h.sender_run = SIM_RUN_S + 1;
	assert_int_equal(rsync_primary_rx(sm->p, &hb, sm->now), RSYNC_RX_OK);
	assert_int_equal(st->standby_restarts, 1);

	hb = heartbeat_of(RSYNC_ROLE_PREDECESSOR, 0xAA);
	assert_int_equal(rsync_primary_rx(sm->p, &hb, sm->now), RSYNC_RX_OK);
	hb.h.sender_run = 0xBB;
	assert_int_equal(rsync_primary_rx(sm->p, &hb, sm->now), RSYNC_RX_OK);
	hb.h.sender_run = 0xAA;
	assert_int_equal(rsync_primary_rx(sm->p, &hb, sm->now), RSYNC_RX_PEER_RESTARTED);
	hb.h.sender_run = 0xBB;
	assert_int_equal(rsync_primary_rx(sm->p, &hb, sm->now), RSYNC_RX_OK);
	assert_int_equal(st->pred_restarts, 1);
	assert_int_equal(rsync_primary_pred_run(sm->p), 0xBB);
	sim_free(sm);
}

/* Each side takes only what its peer's role sends: the primary's own
 * messages reflected back to it, or to the standby as if from the standby,
 * are refused however authentic. */
static void
test_reflected_messages_are_refused(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	const uint8_t key[] = "one key for every node";
	struct sim *sm = sim_new(&pc, &sc, 56, key, sizeof(key) - 1);
	struct rsync_msg d;

	sm->f_to_s.cut = 0;
	sm->f_to_p = (struct sim_faults){.delay_pct = 100, .delay_steps = 1};
	add_n(sm, 8, 2); /* a PREPARE to the standby */
	assert_true(sm->to_s.n > 0);
	/* the primary's PREPARE, back at the primary */
	assert_int_equal(rsync_decode(sm->to_s.f[0].bytes, sm->to_s.f[0].len, sm->auth_p, &d),
			 RSYNC_RX_OK);
	assert_int_equal(rsync_primary_rx(sm->p, &d, sm->now), RSYNC_RX_WRONG_ROLE);
	sim_step(sm, 1 * US); /* the standby votes; the VOTE waits a step */
	assert_true(sm->to_p.n > 0);
	/* the standby's VOTE, back at the standby */
	assert_int_equal(rsync_decode(sm->to_p.f[0].bytes, sm->to_p.f[0].len, sm->auth_s, &d),
			 RSYNC_RX_OK);
	assert_int_equal(rsync_standby_rx(sm->s, &d, sm->now), RSYNC_RX_WRONG_ROLE);
	settle(sm);
	assert_int_equal(sm->nreleased, 8);
	sim_free(sm);
}

/*
 * Randomised: a fault profile on the link, packets of many flows, ND events
 * and cuts (each cut rewrites the chain's state), then a takeover at a
 * random moment.  At that moment:
 *   - every released packet is covered by the standby's TxTs for its flow;
 *   - released packets are in order, none released or dropped twice;
 *   - every released packet an ND decision may have shaped is at or below
 *     the standby's applied cut;
 *   - the standby's state is exactly the state of its applied cut.
 * After draining (no takeover), every packet is released or dropped.
 */
struct fault_row {
	const char *name;
	struct sim_faults to_s, to_p;
};

static const struct fault_row fault_rows[] = {
	{"clean", {0}, {0}},
	{"drop 10% both ways", {.drop_pct = 10}, {.drop_pct = 10}},
	{"drop 40% to standby", {.drop_pct = 40}, {0}},
	{"drop 40% votes/acks", {0}, {.drop_pct = 40}},
	{"duplicate 30%", {.dup_pct = 30}, {.dup_pct = 30}},
	/* aborts whose ABORT is lost too: aborted and live branches side by side */
	{"heavy loss both ways", {.drop_pct = 35}, {.drop_pct = 60}},
	{"reorder", {.reorder = 1}, {.reorder = 1}},
	{"delay 50% by up to 20 steps", {.delay_pct = 50, .delay_steps = 20},
	 {.delay_pct = 50, .delay_steps = 20}},
	{"everything", {.drop_pct = 10, .dup_pct = 10, .delay_pct = 30, .delay_steps = 15, .reorder = 1},
	 {.drop_pct = 10, .dup_pct = 10, .delay_pct = 30, .delay_steps = 15, .reorder = 1}},
};

#define CUT_SNAPS 4096

/* What the randomised runs went through, summed: the test insists each path
 * was taken, so it cannot pass by never reaching them. */
static struct {
	uint64_t released, dropped, aborts, nd_waits, takeover_applied, stale_cuts, revotes,
		tainted_released, decode_dups, trims, before_cut, refused;
} seen;

static void
run_random(const struct fault_row *row, uint64_t seed, int take_over, int small)
{
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm;
	static uint8_t snap[CUT_SNAPS][SIM_REGION_SIZE / 8]; /* region 0's first 1 KB per cut */
	static uint8_t cur[SIM_REGION_SIZE / 8];
	uint64_t cut_id = 0, last_cut_ts = 0, nd_after_cut = 0;
	static uint8_t tainted[SIM_MAX_PKTS + 1];
	uint32_t stop_at, marker_wait = 0;
	uint64_t marker_base = 0;
	struct rsync_standby_applied a;

	pc.stages = 6;
	pc.stage_pkts = 16;
	pc.max_tries = 6;
	if (small) { /* the tightest legal windows: every slot counts */
		pc.stages = 3;
		pc.standby_window = 3;
		sc.window = 3;
		pc.max_tries = 3;
	}
	sm = sim_new(&pc, &sc, seed, NULL, 0);
	sm->f_to_s = row->to_s;
	sm->f_to_p = row->to_p;
	memset(tainted, 0, sizeof(tainted));
	memset(cur, 0, sizeof(cur));
	memset(snap[0], 0, sizeof(snap[0]));
	stop_at = 200 + sim_rand(sm) % 1500;

	for (uint32_t step = 0; step < stop_at; step++) {
		uint32_t burst = sim_rand(sm) % 6;

		for (uint32_t b = 0; b < burst; b++) {
			if (sim_add(sm, sim_rand(sm) % 37) != 0)
				break;
			if (nd_after_cut)
				tainted[sm->npkts] = 1;
			if (sim_rand(sm) % 50 == 0) {
				rsync_primary_nd(sm->p, cut_id + 1);
				nd_after_cut = 1;
				tainted[sm->npkts] = 1;
			}
		}
		/* an ND decision outside any packet (an NF's tick): it shapes
		 * the packets after it */
		if (sim_rand(sm) % 60 == 0) {
			rsync_primary_nd(sm->p, cut_id + 1);
			nd_after_cut = 1;
		}
		/* a marker: asked for by ND, or a lazy checkpoint now and then;
		 * it reaches the latch a few steps later (after more packets) */
		if (marker_wait == 0 && (rsync_primary_nd_uncovered(sm->p) || sim_rand(sm) % 40 == 0)) {
			marker_wait = 1 + sim_rand(sm) % 8;
			marker_base = rsync_primary_cut_base(sm->p); /* travels in the marker */
		}
		if (marker_wait > 0 && --marker_wait == 0 && cut_id + 1 < CUT_SNAPS) {
			uint64_t base = marker_base;
			uint32_t off = sim_rand(sm) % (sizeof(cur) - 64);
			uint32_t len = 1 + sim_rand(sm) % 64;

			for (uint32_t i = 0; i < len; i++)
				cur[off + i] = (uint8_t)sim_rand(sm);
			/* the delta: everything changed since `base` (the test
			 * sends the whole kilobyte: a superset is always right) */
			if (rsync_primary_cut_begin(sm->p, cut_id + 1, base, sm->npkts, sm->now) == 0) {
				rsync_primary_cut_piece(sm->p, 0, 0, cur, sizeof(cur));
				if (rsync_primary_cut_end(sm->p, sm->now) == 0) {
					cut_id++;
					memcpy(snap[cut_id], cur, sizeof(cur));
					last_cut_ts = sm->npkts;
					nd_after_cut = 0;
				}
			}
		}
		sim_step(sm, 5 * US + sim_rand(sm) % (20 * US));
		assert_int_equal(sm->double_fate, 0);
	}
	(void)last_cut_ts;
	seen.aborts += rsync_primary_stats(sm->p)->aborts[RSYNC_ABORT_NO_VOTE];
	seen.nd_waits += rsync_primary_stats(sm->p)->nd_waits;
	seen.stale_cuts += rsync_primary_stats(sm->p)->cuts_stale;
	seen.revotes += rsync_standby_stats(sm->s)->revotes;
	seen.decode_dups += sm->rx_reasons_s[RSYNC_RX_DUPLICATE];
	if (take_over) {

		assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
		seen.takeover_applied += rsync_standby_stats(sm->s)->takeover_applied;
		/* The predecessor trimmed nothing the replay needs: every entry
		 * it dropped is at or below the cut the standby now holds. */
		if (sm->last_trim > a.cut_ts)
			fail_msg("%s seed %lu: LOG_TRIM to %lu, above the cut applied at the "
				 "takeover (%lu)",
				 row->name, (unsigned long)seed, (unsigned long)sm->last_trim,
				 (unsigned long)a.cut_ts);
		seen.trims += sm->trims_seen;
		for (uint32_t i = 0; i < sm->nreleased; i++) {
			uint32_t id = sm->release_order[i];

			seen.tainted_released += tainted[id];

			/* never emitted twice after the takeover */
			if (rsync_standby_txts(sm->s, &sm->flow[id]) < sm->ts[id] &&
			    sm->ts[id] > a.cut_ts)
				fail_msg("%s seed %lu: released packet %u (ts %lu) unknown to the "
					 "standby (TxTs %lu, cut %lu)",
					 row->name, (unsigned long)seed, id, (unsigned long)sm->ts[id],
					 (unsigned long)rsync_standby_txts(sm->s, &sm->flow[id]),
					 (unsigned long)a.cut_ts);
			if (tainted[id] && sm->ts[id] > a.cut_ts)
				fail_msg("%s seed %lu: ND-shaped packet %u released above the cut "
					 "%lu",
					 row->name, (unsigned long)seed, id, (unsigned long)a.cut_ts);
		}
		assert_memory_equal(sm->region[0], snap[a.cut_id], sizeof(cur));
	} else {
		sm->f_to_s = (struct sim_faults){0};
		sm->f_to_p = (struct sim_faults){0};
		/* whatever still needs a cut gets one (again, if one is aborted
		 * while the link still delivers what was delayed) */
		for (int i = 0; i < 5000 && (rsync_primary_pkts_latched(sm->p) > 0 ||
					     sm->to_s.n > 0 || sm->to_p.n > 0);
		     i++) {
			if (rsync_primary_nd_uncovered(sm->p) &&
			    rsync_primary_cut_begin(sm->p, cut_id + 1, rsync_primary_cut_base(sm->p),
						    sm->npkts, sm->now) == 0) {
				cut_id++;
				assert_int_equal(rsync_primary_cut_end(sm->p, sm->now), 0);
			}
			sim_step(sm, 50 * US);
		}
		assert_int_equal(rsync_primary_pkts_latched(sm->p), 0);
		assert_int_equal(sm->nreleased + sm->ndropped, sm->npkts);
	}
	/* release order: increasing ids (packets were added in id order) */
	for (uint32_t i = 1; i < sm->nreleased; i++)
		assert_true(sm->release_order[i] > sm->release_order[i - 1]);
	assert_int_equal(sm->double_fate, 0);
	seen.released += sm->nreleased;
	seen.dropped += sm->ndropped;
	sim_free(sm);
}

/* A synced primary/standby pair with `stages` stages of 4 packets, and
 * room for 32 more in the stage kept for a cut; then an ND decision and
 * two stages of packets it may have shaped: they wait for the next cut,
 * voted or not, and every stage but the one kept for a cut is taken. */
static struct sim *
nd_blocked_sim(uint64_t seed, bool votes_reach_primary)
{
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm;

	pc.stages = 3;
	pc.stage_pkts = 4;
	pc.cut_extra_pkts = 32;
	pc.retrans_ns = 10 * 1000 * 1000; /* (votes may be kept from the primary) */
	sm = sim_new(&pc, &sc, seed, NULL, 0);
	add_n(sm, 4, 2);
	cut_with(sm, 1, 0, 0, 0x11, 600);
	settle(sm);
	assert_int_equal(sm->nreleased, 4);
	assert_true(rsync_standby_synced(sm->s));
	sm->votes_before = rsync_standby_stats(sm->s)->votes;
	sm->f_to_p.cut = !votes_reach_primary;
	rsync_primary_nd(sm->p, 2);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(sim_add(sm, 10 + i % 3), 0);
	for (int i = 0; i < 20; i++)
		sim_step(sm, 20 * US);
	assert_int_equal(rsync_standby_stats(sm->s)->votes, sm->votes_before + 2);
	assert_int_equal(sm->nreleased, 4); /* they wait for a cut */
	assert_int_equal(sim_add(sm, 20), -ENOBUFS);
	return sm;
}

/* Every stage waits for a cut and packets that left the chain before the
 * cut's marker wait for room: they go into the stage kept for the cut,
 * beyond stage_pkts, and the cut closes it -- it follows every output it
 * covers.  (The manager used to let the marker overtake them: a cut that
 * covered outputs never latched, lost with a primary that died.) */
static void
test_packets_waiting_ahead_of_a_cut_go_into_its_stage(void **state)
{
	(void)state;
	struct sim *sm = nd_blocked_sim(45, true);
	struct rsync_standby_applied a;

	for (uint32_t i = 0; i < 20; i++)
		assert_int_equal(sim_add_as(sm, 20 + i % 5, true), 0);
	/* the stage stays open for the cut: neither its count nor its timer
	 * closes it, and later packets ahead of the cut join it */
	for (int i = 0; i < 20; i++)
		sim_step(sm, 20 * US);
	assert_int_equal(rsync_primary_stats(sm->p)->stages_closed, 2 + 2);
	assert_int_equal(sim_add(sm, 21), 0);
	assert_int_equal(rsync_primary_stats(sm->p)->pkts_before_cut, 20);
	cut_with(sm, 2, 1, 0, 0x22, 600);
	settle(sm);
	assert_int_equal(sm->nreleased, 4 + 8 + 21);
	for (uint32_t i = 1; i < sm->nreleased; i++)
		assert_true(sm->release_order[i] > sm->release_order[i - 1]);
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
	assert_int_equal(a.cut_id, 2);
	assert_true(region_is(sm, 0, 0x22, 600));
	assert_int_equal(rsync_standby_stats(sm->s)->takeover_presumed_pkts, 0);
	sim_free(sm);
}

/* The cut that was to close the stage kept for it is dropped (an NF could
 * not freeze): the stage, with the packets that waited, stays open for the
 * next cut -- closed without one, the stages waiting for a cut could never
 * go, and no stage would be left for a cut. */
static void
test_a_dropped_cut_leaves_its_stage_to_the_next(void **state)
{
	(void)state;
	struct sim *sm = nd_blocked_sim(46, true);

	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(sim_add_as(sm, 20 + i, true), 0);
	assert_int_equal(rsync_primary_cut_begin(sm->p, 2, 1, sm->npkts, sm->now), 0);
	rsync_primary_cut_drop(sm->p);
	assert_int_equal(rsync_primary_cut_end(sm->p, sm->now), -E2BIG);
	assert_int_equal(rsync_primary_stats(sm->p)->stages_closed, 2 + 2);
	for (int i = 0; i < 20; i++)
		sim_step(sm, 20 * US);
	assert_int_equal(sm->nreleased, 4);
	/* Packets after it may fill it (4 + 32); full, it says so -- the owner
	 * then drops what waits ahead of the next marker -- and takes no
	 * more, but still the next cut. */
	assert_false(rsync_primary_cut_stage_full(sm->p));
	for (uint32_t i = 5; i < 36; i++)
		assert_int_equal(sim_add(sm, 20 + i % 7), 0);
	assert_true(rsync_primary_cut_stage_full(sm->p));
	assert_int_equal(sim_add(sm, 30), -ENOBUFS);
	assert_int_equal(sim_add_as(sm, 30, true), -ENOBUFS);
	cut_with(sm, 3, 1, 0, 0x33, 600);
	settle(sm);
	assert_int_equal(sm->nreleased, 4 + 8 + 36);
	sim_free(sm);
}

/* At a takeover, presumed commit applies what the primary may have
 * released: stages waiting for a cut, with no cut voted at or after them,
 * it cannot have -- they are not applied, their flows' TxTs stay below
 * their packets, and the replay makes their outputs again (they used to be
 * presumed released: lost).  Once the cut's stage is voted, all three may
 * have gone (the primary's VOTE may be on its way): presumed, counted. */
static void
test_takeover_presumes_only_what_could_have_been_released(void **state)
{
	(void)state;
	struct sim *sm = nd_blocked_sim(47, true);
	struct rsync_standby_applied a;

	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
	assert_int_equal(a.cut_id, 1);
	assert_int_equal(rsync_standby_stats(sm->s)->takeover_unreleasable, 2);
	assert_int_equal(rsync_standby_stats(sm->s)->takeover_presumed_pkts, 0);
	for (uint32_t id = 5; id <= 12; id++)
		assert_true(rsync_standby_txts(sm->s, &sm->flow[id]) < sm->ts[id]);
	sim_free(sm);

	sm = nd_blocked_sim(48, false); /* the primary hears no vote */
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(sim_add_as(sm, 20 + i, true), 0);
	cut_with(sm, 2, 1, 0, 0x22, 600);
	for (int i = 0; i < 20; i++)
		sim_step(sm, 20 * US);
	assert_int_equal(rsync_standby_stats(sm->s)->votes, sm->votes_before + 3);
	assert_int_equal(sm->nreleased, 4);
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
	assert_int_equal(a.cut_id, 2);
	assert_int_equal(rsync_standby_stats(sm->s)->takeover_unreleasable, 0);
	assert_int_equal(rsync_standby_stats(sm->s)->takeover_presumed_pkts, 8 + 3);
	/* (the applied cut covers them all: none is replayed into the NFs) */
	assert_int_equal(a.cut_ts, 15);
	sim_free(sm);
}

/* An ND decision waits for the cut of the marker that passed its NF after
 * it (nd_cut).  An output an NF sends out from the middle of the chain can
 * reach the latch ahead of an older marker still on its way: that older
 * cut, though after the output's stage, holds no trace of the decision.
 * Neither the primary (rule 2) nor a takeover's presumption may take it
 * for the one awaited. */
static void
test_only_the_cut_awaited_or_a_later_one_releases_an_nd_stage(void **state)
{
	(void)state;
	struct sim *sm = synced_sim(50);
	struct rsync_standby_applied a;
	uint32_t before = sm->nreleased;

	rsync_primary_nd(sm->p, 5); /* the decision: only cut 5 or later covers it */
	add_n(sm, 8, 3);	    /* a whole stage: closed, needs cut 5 */
	cut_with(sm, 4, 1, 0, 0x44, 600); /* an older marker's cut, after it */
	for (int i = 0; i < 40; i++)
		sim_step(sm, 20 * US);
	assert_int_equal(rsync_standby_stats(sm->s)->votes, sm->votes_before + 2);
	assert_int_equal(sm->nreleased, before);
	/* a takeover now: neither is presumed released */
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
	assert_int_equal(a.cut_id, 1);
	assert_int_equal(rsync_standby_stats(sm->s)->takeover_unreleasable, 2);
	sim_free(sm);

	sm = synced_sim(50);
	rsync_primary_nd(sm->p, 5);
	add_n(sm, 8, 3);
	cut_with(sm, 4, 1, 0, 0x44, 600);
	cut_with(sm, 5, 4, 0, 0x55, 600); /* the one awaited */
	settle(sm);
	assert_int_equal(sm->nreleased, before + 8);
	sim_free(sm);
}

/* A stage that waits for a cut goes only with a prefix that holds the cut:
 * the standby applies a prefix of the chain at a takeover, and a cut behind
 * a stage that cannot go yet is never in it.  (libnf names, for a whole
 * batch that held a marker and an ND decision after it, the cut after that
 * marker -- for the outputs ahead of the marker too: a stage waiting for a
 * later cut can close before the very cut an earlier stage waits for.) */
static void
test_an_nd_stage_goes_only_with_a_prefix_that_holds_its_cut(void **state)
{
	(void)state;
	struct sim *sm = synced_sim(51);
	struct rsync_standby_applied a;
	uint32_t before = sm->nreleased;

	rsync_primary_nd(sm->p, 2);
	add_n(sm, 8, 3); /* stage A: needs cut 2 */
	rsync_primary_nd(sm->p, 3);
	add_n(sm, 8, 3); /* stage B, ahead of marker 2 in a batch after it: needs cut 3 */
	cut_with(sm, 2, 1, 0, 0x22, 600); /* stage C: cut 2, behind B */
	for (int i = 0; i < 40; i++)
		sim_step(sm, 20 * US);
	assert_int_equal(rsync_standby_stats(sm->s)->votes, sm->votes_before + 3);
	/* A's cut sits behind B, which waits: A waits with it */
	assert_int_equal(sm->nreleased, before);
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
	assert_int_equal(a.cut_id, 1);
	assert_int_equal(rsync_standby_stats(sm->s)->takeover_applied, 0);
	sim_free(sm);

	sm = synced_sim(51);
	rsync_primary_nd(sm->p, 2);
	add_n(sm, 8, 3);
	rsync_primary_nd(sm->p, 3);
	add_n(sm, 8, 3);
	cut_with(sm, 2, 1, 0, 0x22, 600);
	cut_with(sm, 3, 2, 0, 0x33, 600); /* the one B waits for: all go */
	settle(sm);
	assert_int_equal(sm->nreleased, before + 16);
	sim_free(sm);
}

/* The standby carries the primary's chain clock on: the newest META's,
 * plus the time since it came -- a takeover runs the NFs on it, so their
 * stamps keep their age on a host whose clock is another. */
static void
test_the_standby_reckons_the_primary_chain_clock(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	const uint64_t off = 100000ull * 1000000000ull; /* the primary's chain clock is ahead */
	struct sim *sm;
	uint64_t clock;

	pc.clock_offset = off;
	sm = sim_new(&pc, &sc, 49, NULL, 0);
	assert_int_equal(rsync_standby_primary_clock(sm->s, sm->now), 0);
	sm->now = 5ull * 1000000000ull;
	add_n(sm, 8, 2);
	settle(sm);
	clock = rsync_standby_primary_clock(sm->s, sm->now);
	assert_true(clock <= sm->now + off && clock + 1000 * US >= sm->now + off);
	/* later, nothing heard: it runs on with the standby's own clock */
	clock = rsync_standby_primary_clock(sm->s, sm->now + 7 * 1000000000ull);
	assert_true(clock <= sm->now + off + 7 * 1000000000ull &&
		    clock + 1000 * US >= sm->now + off + 7 * 1000000000ull);
	sim_free(sm);
}

/* A full cut arriving at a standby already in sync (a RESYNC vote of its
 * that was delayed, a full cut the primary made for a restarted NF and
 * that came back) keeps it in sync: its TxTs is whole, and the full cut's
 * state is a cut of the chain like any other.  It used to clear `synced`
 * until the next cut, and refuse a takeover meanwhile. */
static void
test_a_full_cut_keeps_a_synced_standby_in_sync(void **state)
{
	(void)state;
	struct sim *sm = synced_sim(43);
	struct rsync_standby_applied a;
	uint8_t d[SIM_REGION_SIZE];

	assert_true(rsync_standby_synced(sm->s));
	add_n(sm, 8, 2);
	memset(d, 0x55, sizeof(d));
	assert_int_equal(rsync_primary_cut_begin(sm->p, 2, RSYNC_CUT_FULL, sm->npkts, sm->now), 0);
	for (uint16_t r = 0; r < SIM_REGIONS; r++)
		assert_int_equal(rsync_primary_cut_piece(sm->p, r, 0, d, sizeof(d)), 0);
	assert_int_equal(rsync_primary_cut_end(sm->p, sm->now), 0);
	settle(sm);
	assert_int_equal(rsync_standby_stats(sm->s)->full_applied, 1);
	assert_true(rsync_standby_synced(sm->s));
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
	assert_int_equal(a.cut_id, 2);
	assert_true(region_is(sm, 2, 0x55, SIM_REGION_SIZE));
	sim_free(sm);
}

/* The standby refuses to vote for a transaction whose TxTs entries might
 * not fit, and entries are freed only when a cut is applied.  A table
 * full of flows must not stop the cut that would empty it: a cut's own
 * stage holds only packets at or below the cut, whose entries the cut
 * frees as it is applied, so they reserve no room. */
static void
test_a_full_txts_table_still_takes_the_cut_that_empties_it(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm;

	sc.txts_capacity = 64; /* room for 48 entries */
	sm = sim_new(&pc, &sc, 44, NULL, 0);
	for (uint32_t i = 0; i < 48; i++) {
		assert_int_equal(sim_add(sm, i), 0);
		if (i % 8 == 7)
			settle(sm);
	}
	assert_int_equal(sm->nreleased, 48);
	assert_int_equal(rsync_standby_txts_entries(sm->s), 48);
	/* seven new flows and a cut after them: their stage carries the cut */
	for (uint32_t i = 48; i < 55; i++)
		assert_int_equal(sim_add(sm, i), 0);
	bare_cut(sm, 1, 0, sm->npkts);
	settle(sm);
	assert_int_equal(rsync_standby_stats(sm->s)->txts_no_room, 0);
	assert_int_equal(sm->nreleased, 55);
	assert_int_equal(rsync_standby_txts_entries(sm->s), 0); /* all at or below the cut */
	/* and the table takes new flows again */
	for (uint32_t i = 55; i < 63; i++)
		assert_int_equal(sim_add(sm, i), 0);
	settle(sm);
	assert_int_equal(sm->nreleased, 63);
	assert_int_equal(sm->ndropped, 0);
	sim_free(sm);
}

/* The standby dies while the primary's window of unacknowledged COMMITs is
 * full.  Stages closed meanwhile cannot be sent (the window), so they never
 * time out by retransmission: they must still be aborted, not wait for
 * ever, and once a new standby incarnation is heard the window it can
 * never acknowledge is given up. */
static void
test_stages_blocked_by_a_full_window_are_aborted(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct sim *sm;

	pc.standby_window = pc.stages; /* legal, and the tightest */
	sm = sim_new(&pc, &sc, 45, NULL, 0);
	/* stages voted and released, but no COMMIT reaches the standby (so no
	 * ACK comes back): the window of unacknowledged commits fills.  Votes
	 * take a step, so the link to the standby can be cut behind them. */
	sm->f_to_p = (struct sim_faults){.delay_pct = 100, .delay_steps = 1};
	for (uint32_t k = 0; k < pc.stages; k++) {
		sm->f_to_s.cut = 0;
		add_n(sm, 8, 2);
		sim_step(sm, 1 * US); /* PREPARE in, VOTE out */
		sm->f_to_s.cut = 1;
		sim_step(sm, 1 * US); /* VOTE in: released; its COMMIT is lost */
	}
	assert_int_equal(sm->nreleased, 8 * pc.stages);
	/* the standby is gone for good; the chain goes on */
	add_n(sm, 8, 2);
	assert_int_equal(rsync_primary_stats(sm->p)->acks, 0);
	for (int i = 0; i < 200; i++)
		sim_step(sm, 50 * US);
	assert_int_equal(rsync_primary_stages_busy(sm->p), 0);
	assert_int_equal(sm->nreleased + sm->ndropped, sm->npkts);
	assert_true(rsync_primary_stats(sm->p)->aborts[RSYNC_ABORT_NO_VOTE] >= 1);
	sim_free(sm);
}

/* A delta cut of many small scattered chunks (a firewall's or a dpi NF's
 * 64-byte chunks) is packed several to a fragment: its fragment count
 * follows its bytes, so a cut that fits the standby in bytes fits in
 * fragments too.  One fragment per chunk made such a cut need more
 * fragments than max_frags: no vote, abort, and every later delta larger
 * still. */
static void
test_scattered_chunks_fit_the_standby_in_fragments(void **state)
{
	(void)state;
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct rsync_standby_applied a;
	uint8_t chunk[64];
	struct sim *sm;

	sc.max_frags = 16;
	sm = sim_new(&pc, &sc, 46, NULL, 0);
	add_n(sm, 8, 2);
	assert_int_equal(rsync_primary_cut_begin(sm->p, 1, 0, sm->npkts, sm->now), 0);
	for (uint32_t i = 0; i < 60; i++) { /* every other 64-byte chunk of region 1 */
		memset(chunk, (int)(i + 1), sizeof(chunk));
		assert_int_equal(rsync_primary_cut_piece(sm->p, 1, i * 128, chunk, sizeof(chunk)), 0);
	}
	assert_int_equal(rsync_primary_cut_end(sm->p, sm->now), 0);
	settle(sm);
	assert_int_equal(rsync_standby_stats(sm->s)->rx[RSYNC_RX_NO_ROOM], 0);
	assert_int_equal(sm->nreleased, 8);
	assert_int_equal(rsync_standby_takeover(sm->s, 2, &a), 0);
	assert_int_equal(a.cut_id, 1);
	for (uint32_t i = 0; i < 60; i++) {
		assert_int_equal(sm->region[1][i * 128], i + 1);
		assert_int_equal(sm->region[1][i * 128 + 63], i + 1);
		assert_int_equal(sm->region[1][i * 128 + 64], 0);
	}
	sim_free(sm);
}

/*
 * Randomised, the way the manager drives the latch when it falls behind
 * its input: outputs wait (in order) for room, nearly every stage waits for
 * a cut (ND decisions all the time), a marker reaches the exit behind the
 * outputs that left before it -- into the stage kept for its cut when
 * every stage waits (rsync_primary_add_before_cut) -- and is refused when
 * its base or id is stale, a predecessor restart now and then holds every
 * busy stage for a later cut; then a takeover at a random moment, checked
 * as run_random() checks it.
 */
static void
run_latch_full(const struct fault_row *row, uint64_t seed)
{
	struct rsync_primary_cfg pc = sim_default_pcfg();
	struct rsync_standby_cfg sc = sim_default_scfg();
	struct rsync_standby_applied a;
	static uint64_t need[SIM_MAX_PKTS + 1]; /* the cut an ND decision before it needs */
	/* outputs and markers in the order they reach the exit; a marker is
	 * flow UINT32_MAX, its cut id in `need` */
	struct {
		uint32_t flow;
		uint64_t need, base;
	} wq[1024];
	uint32_t wait_n = 0, markers = 0, marker_wait = 0, stop_at;
	uint64_t cut_id = 0, marker_base = 0, passed_id = 0, nd_need = 0;
	struct sim *sm;

	pc.stages = 4 + seed % 5;
	pc.stage_pkts = 8;
	pc.cut_extra_pkts = 64;
	pc.max_tries = 6;
	sc.window = pc.stages + pc.standby_window;
	sm = sim_new(&pc, &sc, seed, NULL, 0);
	sm->f_to_s = row->to_s;
	sm->f_to_p = row->to_p;
	memset(need, 0, sizeof(need));
	stop_at = 200 + sim_rand(sm) % 1500;
	for (uint32_t step = 0; step < stop_at; step++) {
		uint32_t burst = sim_rand(sm) % 12;

		if (sim_rand(sm) % 3 == 0) {
			/* an ND decision: the cut after the markers that passed */
			nd_need = (passed_id > cut_id ? passed_id : cut_id) + 1;
			rsync_primary_nd(sm->p, nd_need);
		}
		if (sim_rand(sm) % 400 == 0) /* a predecessor restart heard */
			rsync_primary_hold_for_cut(sm->p, (passed_id > cut_id ? passed_id : cut_id) + 1);
		/* outputs leave the chain, shaped by the decisions before them */
		for (uint32_t b = 0; b < burst && wait_n < 1023; b++) {
			wq[wait_n].flow = sim_rand(sm) % 37;
			wq[wait_n++].need = nd_need;
		}
		/* a marker asked for passes the chain's NFs after a while */
		if (marker_wait == 0 && markers == 0 && rsync_primary_needs_cut(sm->p)) {
			marker_wait = 1 + sim_rand(sm) % 8;
			marker_base = rsync_primary_cut_base(sm->p);
		}
		if (marker_wait > 0 && --marker_wait == 0 && wait_n < 1023) {
			passed_id = (passed_id > cut_id ? passed_id : cut_id) + 1;
			wq[wait_n].flow = UINT32_MAX;
			wq[wait_n].need = passed_id;
			wq[wait_n++].base = marker_base;
			markers++;
			/* An NF's batch held the marker and a decision after
			 * it: libnf names the cut after the marker for the
			 * whole batch -- the outputs ahead of the marker too
			 * (more than they need: safe) */
			if (sim_rand(sm) % 2 == 0) {
				nd_need = passed_id + 1;
				rsync_primary_nd(sm->p, nd_need);
			}
		}
		/* the exit: in order, a marker in its turn */
		while (wait_n > 0) {
			if (wq[0].flow == UINT32_MAX) {
				int rc = rsync_primary_cut_begin(sm->p, wq[0].need, wq[0].base,
								 sm->npkts, sm->now);

				if (rc == -ENOBUFS)
					break;
				if (rc == 0) {
					uint8_t byte = (uint8_t)wq[0].need;

					rsync_primary_cut_piece(sm->p, 0, wq[0].need % 64, &byte, 1);
					if (sim_rand(sm) % 6 == 0) /* an NF could not collect */
						rsync_primary_cut_drop(sm->p);
					if (rsync_primary_cut_end(sm->p, sm->now) == 0)
						cut_id = wq[0].need;
				}
				markers--;
			} else {
				int rc = sim_add(sm, wq[0].flow);

				if (rc != 0 && markers > 0 && rsync_primary_stage_waits_cut(sm->p))
					rc = sim_add_as(sm, wq[0].flow, true);
				if (rc != 0)
					break;
				need[sm->npkts] = wq[0].need > cut_id ? wq[0].need : 0;
			}
			memmove(wq, wq + 1, --wait_n * sizeof(wq[0]));
		}
		sim_step(sm, 5 * US + sim_rand(sm) % (20 * US));
		assert_int_equal(sm->double_fate, 0);
	}
	seen.nd_waits += rsync_primary_stats(sm->p)->nd_waits;
	seen.before_cut += rsync_primary_stats(sm->p)->pkts_before_cut;
	if (rsync_standby_takeover(sm->s, 2, &a) != 0) {
		/* (a standby that never applied anything is not in sync yet:
		 * refused, with nothing released) */
		assert_int_equal(sm->nreleased, 0);
		seen.refused++;
		sim_free(sm);
		return;
	}
	seen.takeover_applied += rsync_standby_stats(sm->s)->takeover_applied;
	if (sm->last_trim > a.cut_ts)
		fail_msg("%s seed %lu: LOG_TRIM to %lu, above the cut applied at the takeover (%lu)",
			 row->name, (unsigned long)seed, (unsigned long)sm->last_trim,
			 (unsigned long)a.cut_ts);
	for (uint32_t i = 0; i < sm->nreleased; i++) {
		uint32_t id = sm->release_order[i];

		if (rsync_standby_txts(sm->s, &sm->flow[id]) < sm->ts[id] && sm->ts[id] > a.cut_ts)
			fail_msg("%s seed %lu: released packet %u (ts %lu) unknown to the standby "
				 "(TxTs %lu, cut %lu)",
				 row->name, (unsigned long)seed, id, (unsigned long)sm->ts[id],
				 (unsigned long)rsync_standby_txts(sm->s, &sm->flow[id]),
				 (unsigned long)a.cut_ts);
		if (need[id] > a.cut_id)
			fail_msg("%s seed %lu: packet %u released, shaped by an ND decision cut "
				 "%lu covers, above the cut applied (%lu)",
				 row->name, (unsigned long)seed, id, (unsigned long)need[id],
				 (unsigned long)a.cut_id);
	}
	for (uint32_t i = 1; i < sm->nreleased; i++)
		assert_true(sm->release_order[i] > sm->release_order[i - 1]);
	seen.released += sm->nreleased;
	sim_free(sm);
}

static void
test_random_latch_full_takeovers_lose_and_double_nothing_released(void **state)
{
	(void)state;
	memset(&seen, 0, sizeof(seen));
	for (size_t r = 0; r < sizeof(fault_rows) / sizeof(fault_rows[0]); r++)
		for (uint64_t seed = 1; seed <= 60; seed++)
			run_latch_full(&fault_rows[r], seed * 509 + r);
	print_message("latch-full runs: %lu released, %lu ND waits, %lu before a cut, "
		      "%lu applied at takeover\n",
		      (unsigned long)seen.released, (unsigned long)seen.nd_waits,
		      (unsigned long)seen.before_cut, (unsigned long)seen.takeover_applied);
	assert_true(seen.released > 10000 && seen.nd_waits > 0 && seen.before_cut > 0);
}

static void
test_random_faults_never_release_unknown_packets(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(fault_rows) / sizeof(fault_rows[0]); r++)
		for (uint64_t seed = 1; seed <= 25; seed++) {
			run_random(&fault_rows[r], seed * 101 + r, 1, 0);
			run_random(&fault_rows[r], seed * 211 + r, 0, 0);
			run_random(&fault_rows[r], seed * 307 + r, 1, 1);
			run_random(&fault_rows[r], seed * 401 + r, 0, 1);
		}
	print_message("random runs: %lu released, %lu dropped, %lu aborts, %lu ND waits, "
		      "%lu ND-shaped released, %lu applied at takeover, %lu stale cuts, "
		      "%lu re-votes, %lu duplicates, %lu LOG_TRIMs\n",
		      (unsigned long)seen.released, (unsigned long)seen.dropped,
		      (unsigned long)seen.aborts, (unsigned long)seen.nd_waits,
		      (unsigned long)seen.tainted_released, (unsigned long)seen.takeover_applied,
		      (unsigned long)seen.stale_cuts, (unsigned long)seen.revotes,
		      (unsigned long)seen.decode_dups, (unsigned long)seen.trims);
	assert_true(seen.released > 100000);
	assert_true(seen.trims > 0);
	assert_true(seen.dropped > 0 && seen.aborts > 0);
	assert_true(seen.nd_waits > 0 && seen.tainted_released > 0);
	assert_true(seen.takeover_applied > 0);
	assert_true(seen.stale_cuts > 0);
	assert_true(seen.revotes > 0 && seen.decode_dups > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stage_is_released_only_after_the_vote),
		cmocka_unit_test(test_retransmissions_back_off_within_the_abort_time),
		cmocka_unit_test(test_lost_vote_is_recovered_by_retransmission),
		cmocka_unit_test(test_stages_are_released_strictly_in_order),
		cmocka_unit_test(test_abort_cascades_and_the_standby_discards),
		cmocka_unit_test(test_standby_votes_only_for_a_whole_transaction),
		cmocka_unit_test(test_commit_applies_in_chain_order_and_is_acked),
		cmocka_unit_test(test_takeover_applies_voted_but_uncommitted_stages),
		cmocka_unit_test(test_a_standby_started_late_resynchronises_with_a_full_cut),
		cmocka_unit_test(test_a_resumed_primary_makes_a_fresh_standby_join_late),
		cmocka_unit_test(test_a_standby_that_lost_an_nf_resynchronises),
		cmocka_unit_test(test_a_delta_staged_before_the_full_cut_is_checked_when_applied),
		cmocka_unit_test(test_a_refused_takeover_applies_nothing),
		cmocka_unit_test(test_a_standby_restarted_on_an_idle_chain_asks_by_heartbeat),
		cmocka_unit_test(test_a_takeover_that_would_refuse_a_piece_applies_nothing),
		cmocka_unit_test(test_a_fresh_standby_hearing_transactions_does_not_ask),
		cmocka_unit_test(test_fenced_old_primary_gets_no_vote_and_releases_nothing),
		cmocka_unit_test(test_newer_epoch_fences_the_primary),
		cmocka_unit_test(test_nd_stage_waits_for_a_cut_after_it),
		cmocka_unit_test(test_nd_in_a_tick_right_after_a_marker_waits_for_the_next_cut),
		cmocka_unit_test(test_packets_waiting_ahead_of_a_cut_go_into_its_stage),
		cmocka_unit_test(test_a_dropped_cut_leaves_its_stage_to_the_next),
		cmocka_unit_test(test_takeover_presumes_only_what_could_have_been_released),
		cmocka_unit_test(test_the_standby_reckons_the_primary_chain_clock),
		cmocka_unit_test(test_only_the_cut_awaited_or_a_later_one_releases_an_nd_stage),
		cmocka_unit_test(test_an_nd_stage_goes_only_with_a_prefix_that_holds_its_cut),
		cmocka_unit_test(test_a_cut_older_than_the_nd_stages_need_leaves_them_waiting),
		cmocka_unit_test(test_an_older_cut_leaves_the_last_stage_to_the_cut_awaited),
		cmocka_unit_test(test_cut_keeps_a_stage_free_when_packets_fill_the_latch),
		cmocka_unit_test(test_stages_waiting_for_a_cut_never_block_the_cut),
		cmocka_unit_test(test_aborted_branch_is_never_applied_in_place_of_the_live_one),
		cmocka_unit_test(test_takeover_follows_the_newest_voted_chain),
		cmocka_unit_test(test_meta_discards_what_its_predecessor_skips),
		cmocka_unit_test(test_lost_aborts_never_fill_the_standby_for_good),
		cmocka_unit_test(test_refused_fragment_takes_no_staging_slot),
		cmocka_unit_test(test_cut_before_any_packet_sends_no_log_trim),
		cmocka_unit_test(test_cut_whose_base_was_aborted_is_stale),
		cmocka_unit_test(test_cut_bigger_than_a_stage_is_dropped_and_counted),
		cmocka_unit_test(test_cut_dropped_by_the_owner_leaves_the_stage_without_it),
		cmocka_unit_test(test_hmac_protects_every_message),
		cmocka_unit_test(test_a_full_cut_keeps_a_synced_standby_in_sync),
		cmocka_unit_test(test_a_full_txts_table_still_takes_the_cut_that_empties_it),
		cmocka_unit_test(test_stages_blocked_by_a_full_window_are_aborted),
		cmocka_unit_test(test_scattered_chunks_fit_the_standby_in_fragments),
		cmocka_unit_test(test_votes_recorded_before_a_primary_restart_are_refused),
		cmocka_unit_test(test_a_restarted_standby_is_told_apart_from_the_one_before),
		cmocka_unit_test(test_a_restarted_predecessor_holds_stages_until_a_cut),
		cmocka_unit_test(test_a_predecessor_restart_heard_behind_a_marker_waits_for_the_cut_after),
		cmocka_unit_test(test_a_heartbeat_of_a_replaced_run_is_not_a_restart),
		cmocka_unit_test(test_a_fresh_standby_serves_the_live_primary_after_a_stray_run),
		cmocka_unit_test(test_reflected_messages_are_refused),
		cmocka_unit_test(test_random_faults_never_release_unknown_packets),
		cmocka_unit_test(test_random_latch_full_takeovers_lose_and_double_nothing_released),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
