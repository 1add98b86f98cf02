/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_seqlock -- the sequence lock an NF's published counters live under
 * (onvm_common.h: onvm_seq_write_begin/end, onvm_seq_read), including a writer
 * that dies inside its update and the writer that takes over after it
 * (finding 6 of the hardening review: parity was assumed, so a promoted NF
 * inherited an odd count and published torn copies as stable ones).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "onvm_common.h"

struct table {
	uint32_t seq;
	uint64_t v[4];
};

static void
write_all(struct table *t, uint64_t x)
{
	for (int i = 0; i < 4; i++)
		t->v[i] = x;
}

static int
read_table(const struct table *t, uint64_t out[4])
{
	return onvm_seq_read(&t->seq, out, t->v, sizeof(t->v), 8);
}

static void
test_update_reads_back_whole(void **state)
{
	struct table t = {0};
	uint64_t got[4];

	(void)state;
	onvm_seq_write_begin(&t.seq);
	assert_true(t.seq & 1);
	write_all(&t, 7);
	onvm_seq_write_end(&t.seq);
	assert_false(t.seq & 1);
	assert_int_equal(read_table(&t, got), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(got[i], 7);
}

/* A writer dies halfway: readers must see "busy", never the torn table. */
static void
test_dead_writer_leaves_the_table_busy(void **state)
{
	struct table t = {0};
	uint64_t got[4];

	(void)state;
	onvm_seq_write_begin(&t.seq);
	write_all(&t, 1);
	onvm_seq_write_end(&t.seq);
	onvm_seq_write_begin(&t.seq); /* dies here, after two of four values */
	t.v[0] = t.v[1] = 2;
	assert_int_equal(read_table(&t, got), -EBUSY);
}

/* The promoted writer inherits an odd count: while it rewrites, readers
 * still see "busy"; when it is done, the whole new table. */
static void
test_successor_of_a_dead_writer_keeps_parity(void **state)
{
	struct table t = {0};
	uint64_t got[4];

	(void)state;
	onvm_seq_write_begin(&t.seq); /* predecessor dies inside its update */
	t.v[0] = 9;
	for (int round = 0; round < 3; round++) {
		onvm_seq_write_begin(&t.seq);
		assert_true(t.seq & 1);
		t.v[0] = t.v[1] = 100 + round; /* half-written: must not be readable */
		assert_int_equal(read_table(&t, got), -EBUSY);
		t.v[2] = t.v[3] = 100 + round;
		onvm_seq_write_end(&t.seq);
		assert_false(t.seq & 1);
		assert_int_equal(read_table(&t, got), 0);
		for (int i = 0; i < 4; i++)
			assert_int_equal(got[i], 100 + round);
	}
}

/* Every completed update moves the count on: a reader that copied across
 * one sees the count differ and retries. */
static void
test_each_update_changes_the_stable_count(void **state)
{
	struct table t = {0};
	uint32_t last = t.seq;

	(void)state;
	for (int i = 0; i < 5; i++) {
		onvm_seq_write_begin(&t.seq);
		onvm_seq_write_end(&t.seq);
		assert_int_not_equal(t.seq, last);
		assert_false(t.seq & 1);
		last = t.seq;
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_update_reads_back_whole),
	    cmocka_unit_test(test_dead_writer_leaves_the_table_busy),
	    cmocka_unit_test(test_successor_of_a_dead_writer_keeps_parity),
	    cmocka_unit_test(test_each_update_changes_the_stable_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
