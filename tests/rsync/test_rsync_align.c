/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/* Markers aligned across a position's instances (rsync_align.h): held until
 * every rank expected is in, passed once; given up for a newer cut, when
 * the ranks expected change, after the bound; stale markers dropped.  Table-driven: each row is an event and the verdict it must give. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rsync_align.h"

enum ev_kind { ARRIVE, CHECK };

struct ev {
	enum ev_kind kind;
	unsigned int rank; /* ARRIVE */
	uint64_t cut;	   /* ARRIVE */
	uint32_t expected;
	uint64_t now;
	enum rsync_align_verdict want;
	bool given_up; /* ARRIVE: the open cut was given up first */
};

#define MAX_WAIT 100

static void
run(const struct ev *evs, size_t n)
{
	struct rsync_align a = {0};

	for (size_t i = 0; i < n; i++) {
		const struct ev *e = &evs[i];
		enum rsync_align_verdict v;
		bool gave = !e->given_up;

		if (e->kind == ARRIVE)
			v = rsync_align_arrive(&a, e->rank, e->cut, e->expected, e->now, &gave);
		else
			v = rsync_align_check(&a, e->expected, e->now, MAX_WAIT);
		if (v != e->want || (e->kind == ARRIVE && gave != e->given_up))
			fail_msg("event %zu: verdict %d (want %d), given up %d (want %d)", i, v,
				 e->want, gave, e->given_up);
	}
}

#define RUN(...)                                                                              \
	do {                                                                                  \
		static const struct ev evs[] = {__VA_ARGS__};                                 \
		run(evs, sizeof(evs) / sizeof(evs[0]));                                       \
	} while (0)

static void
test_one_rank_passes_at_once(void **state)
{
	(void)state;
	RUN({ARRIVE, 0, 1, 0x1, 0, RSYNC_ALIGN_PASS, false},
	    {ARRIVE, 0, 2, 0x1, 5, RSYNC_ALIGN_PASS, false},
	    {CHECK, 0, 0, 0x1, 6, RSYNC_ALIGN_WAIT, false});
}

static void
test_held_until_every_rank_is_in_then_passed_once(void **state)
{
	(void)state;
	RUN({ARRIVE, 2, 7, 0x7, 0, RSYNC_ALIGN_HOLD, false},
	    {CHECK, 0, 0, 0x7, 10, RSYNC_ALIGN_WAIT, false},
	    {ARRIVE, 0, 7, 0x7, 20, RSYNC_ALIGN_HOLD, false},
	    {ARRIVE, 1, 7, 0x7, 30, RSYNC_ALIGN_PASS, false},
	    /* passed: a late copy of the same cut is stale */
	    {ARRIVE, 1, 7, 0x7, 31, RSYNC_ALIGN_STALE, false},
	    {ARRIVE, 0, 6, 0x7, 32, RSYNC_ALIGN_STALE, false});
}

static void
test_a_rank_twice_is_stale_and_still_waits(void **state)
{
	(void)state;
	RUN({ARRIVE, 0, 3, 0x3, 0, RSYNC_ALIGN_HOLD, false},
	    {ARRIVE, 0, 3, 0x3, 1, RSYNC_ALIGN_STALE, false},
	    {ARRIVE, 1, 3, 0x3, 2, RSYNC_ALIGN_PASS, false});
}

static void
test_a_newer_cut_supersedes_the_open_one(void **state)
{
	(void)state;
	/* rank 1 lost cut 4 on the way: its cut 5 gives 4 up */
	RUN({ARRIVE, 0, 4, 0x3, 0, RSYNC_ALIGN_HOLD, false},
	    {ARRIVE, 1, 5, 0x3, 1, RSYNC_ALIGN_HOLD, true},
	    /* rank 0's 4, should it come again, is stale; its 5 completes */
	    {ARRIVE, 0, 4, 0x3, 2, RSYNC_ALIGN_STALE, false},
	    {ARRIVE, 0, 5, 0x3, 3, RSYNC_ALIGN_PASS, false});
}

static void
test_an_older_cut_than_the_open_one_is_stale(void **state)
{
	(void)state;
	RUN({ARRIVE, 0, 9, 0x3, 0, RSYNC_ALIGN_HOLD, false},
	    {ARRIVE, 1, 8, 0x3, 1, RSYNC_ALIGN_STALE, false},
	    {ARRIVE, 1, 9, 0x3, 2, RSYNC_ALIGN_PASS, false});
}

static void
test_given_up_after_the_bound_then_the_next_cut_aligns(void **state)
{
	(void)state;
	RUN({ARRIVE, 0, 2, 0x3, 1000, RSYNC_ALIGN_HOLD, false},
	    {CHECK, 0, 0, 0x3, 1000 + MAX_WAIT, RSYNC_ALIGN_WAIT, false},
	    {CHECK, 0, 0, 0x3, 1001 + MAX_WAIT, RSYNC_ALIGN_GIVE_UP, false},
	    /* the given-up cut's other marker, late: stale */
	    {ARRIVE, 1, 2, 0x3, 1200, RSYNC_ALIGN_STALE, false},
	    {ARRIVE, 1, 3, 0x3, 1300, RSYNC_ALIGN_HOLD, false},
	    {ARRIVE, 0, 3, 0x3, 1301, RSYNC_ALIGN_PASS, false});
}

static void
test_the_ranks_changing_gives_the_open_cut_up(void **state)
{
	(void)state;
	/* rank 1's instance left holding cut 6 (its output before the
	 * marker may still be queued): given up, not passed */
	RUN({ARRIVE, 0, 6, 0x3, 0, RSYNC_ALIGN_HOLD, false},
	    {CHECK, 0, 0, 0x3, 1, RSYNC_ALIGN_WAIT, false},
	    {CHECK, 0, 0, 0x1, 2, RSYNC_ALIGN_GIVE_UP, false},
	    {ARRIVE, 1, 6, 0x1, 3, RSYNC_ALIGN_STALE, false},
	    {ARRIVE, 0, 7, 0x1, 4, RSYNC_ALIGN_PASS, false},
	    /* an instance came while cut 8 was open: seen at the next arrival */
	    {ARRIVE, 0, 8, 0x1 | 0x2, 5, RSYNC_ALIGN_HOLD, false},
	    {ARRIVE, 1, 8, 0x1 | 0x2 | 0x4, 6, RSYNC_ALIGN_STALE, true},
	    {CHECK, 0, 0, 0x7, 7, RSYNC_ALIGN_WAIT, false},
	    /* a rank not expected still counts when it comes */
	    {ARRIVE, 3, 9, 0x1, 8, RSYNC_ALIGN_HOLD, false},
	    {ARRIVE, 0, 9, 0x1, 9, RSYNC_ALIGN_PASS, false});
}

static void
test_a_cut_with_no_rank_held_is_given_up(void **state)
{
	struct rsync_align a = {0};
	bool gave;

	(void)state;
	assert_int_equal(rsync_align_arrive(&a, 0, 4, 0x3, 0, &gave), RSYNC_ALIGN_HOLD);
	rsync_align_give_up(&a);
	assert_false(rsync_align_open(&a));
	assert_int_equal(rsync_align_arrive(&a, 1, 4, 0x3, 1, &gave), RSYNC_ALIGN_STALE);
	rsync_align_give_up(&a); /* nothing open: nothing changes */
	assert_int_equal(rsync_align_arrive(&a, 1, 5, 0x3, 2, &gave), RSYNC_ALIGN_HOLD);
	/* cut 7 cannot be aligned: the open 5 goes with it, 6 and 7 are stale */
	rsync_align_skip(&a, 7);
	assert_false(rsync_align_open(&a));
	assert_int_equal(rsync_align_arrive(&a, 0, 6, 0x3, 3, &gave), RSYNC_ALIGN_STALE);
	assert_int_equal(rsync_align_arrive(&a, 0, 7, 0x3, 4, &gave), RSYNC_ALIGN_STALE);
	assert_int_equal(rsync_align_arrive(&a, 0, 8, 0x3, 5, &gave), RSYNC_ALIGN_HOLD);
}

static void
test_bad_ranks_and_cut_zero_are_stale(void **state)
{
	(void)state;
	RUN({ARRIVE, RSYNC_ALIGN_MAX_RANKS, 1, 0x1, 0, RSYNC_ALIGN_STALE, false},
	    {ARRIVE, 0, 0, 0x1, 0, RSYNC_ALIGN_STALE, false},
	    {CHECK, 0, 0, 0x1, 1, RSYNC_ALIGN_WAIT, false});
}

static void
test_the_clock_may_wrap(void **state)
{
	(void)state;
	RUN({ARRIVE, 0, 1, 0x3, UINT64_MAX - 10, RSYNC_ALIGN_HOLD, false},
	    {CHECK, 0, 0, 0x3, 20, RSYNC_ALIGN_WAIT, false},
	    {CHECK, 0, 0, 0x3, MAX_WAIT, RSYNC_ALIGN_GIVE_UP, false});
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_rank_passes_at_once),
		cmocka_unit_test(test_held_until_every_rank_is_in_then_passed_once),
		cmocka_unit_test(test_a_rank_twice_is_stale_and_still_waits),
		cmocka_unit_test(test_a_newer_cut_supersedes_the_open_one),
		cmocka_unit_test(test_an_older_cut_than_the_open_one_is_stale),
		cmocka_unit_test(test_given_up_after_the_bound_then_the_next_cut_aligns),
		cmocka_unit_test(test_the_ranks_changing_gives_the_open_cut_up),
		cmocka_unit_test(test_a_cut_with_no_rank_held_is_given_up),
		cmocka_unit_test(test_bad_ranks_and_cut_zero_are_stale),
		cmocka_unit_test(test_the_clock_may_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
