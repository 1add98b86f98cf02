/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/* The TxTs table (rsync_txts.h): per-flow maximum, exact keys, garbage
 * collection by watermark, ordered deltas. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rsync_txts.h"

static struct rsync_flow
flow(uint32_t n)
{
	struct rsync_flow f = {0};

	f.src_ip = 0xC6120000u | (n & 0xffff);
	f.dst_ip = 0xC6130000u | (n >> 16);
	f.sport = (uint16_t)(n * 7);
	f.dport = 443;
	f.proto = 17;
	return f;
}

static struct rsync_txts *
table(uint32_t cap, bool ordered)
{
	struct rsync_txts *t = calloc(1, sizeof(*t));
	void *mem = malloc(rsync_txts_mem_size(cap, ordered));

	assert_non_null(t);
	assert_non_null(mem);
	assert_int_equal(rsync_txts_init(t, mem, cap, ordered, 42), 0);
	return t;
}

static void
table_free(struct rsync_txts *t)
{
	free(t->slots);
	free(t);
}

static void
test_entry_keeps_the_highest_timestamp(void **state)
{
	(void)state;
	struct rsync_txts *t = table(16, false);
	struct rsync_flow a = flow(1);

	assert_int_equal(rsync_txts_get(t, &a), 0);
	assert_int_equal(rsync_txts_raise(t, &a, 5), 0);
	assert_int_equal(rsync_txts_raise(t, &a, 3), 0);
	assert_int_equal(rsync_txts_get(t, &a), 5);
	assert_int_equal(rsync_txts_raise(t, &a, 9), 0);
	assert_int_equal(rsync_txts_get(t, &a), 9);
	assert_int_equal(t->n, 1);
	assert_int_equal(rsync_txts_raise(t, &a, 0), -EINVAL);
	table_free(t);
}

static void
test_flows_differing_in_one_field_are_distinct(void **state)
{
	(void)state;
	struct rsync_txts *t = table(64, false);
	struct rsync_flow base = flow(3), v[6];

	for (int i = 0; i < 6; i++)
		v[i] = base;
	v[1].src_ip ^= 1;
	v[2].dst_ip ^= 1;
	v[3].sport ^= 1;
	v[4].dport ^= 1;
	v[5].proto ^= 1;
	for (int i = 0; i < 6; i++)
		assert_int_equal(rsync_txts_raise(t, &v[i], 10 + i), 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(rsync_txts_get(t, &v[i]), 10 + i);
	/* the padding is not part of the key */
	base.pad[0] = 0x55;
	assert_int_equal(rsync_txts_get(t, &base), 10);
	table_free(t);
}

static void
test_full_table_refuses_new_flows_and_counts(void **state)
{
	(void)state;
	struct rsync_txts *t = table(16, false);

	for (uint32_t i = 0; i < 12; i++) {
		struct rsync_flow f = flow(i);

		assert_int_equal(rsync_txts_raise(t, &f, i + 1), 0);
	}
	struct rsync_flow extra = flow(100), old = flow(0);
	assert_int_equal(rsync_txts_raise(t, &extra, 50), -ENOSPC);
	assert_int_equal(t->stats.full, 1);
	/* a known flow can still be raised */
	assert_int_equal(rsync_txts_raise(t, &old, 60), 0);
	assert_int_equal(rsync_txts_get(t, &old), 60);
	table_free(t);
}

static void
test_gc_removes_only_entries_at_or_below_the_watermark(void **state)
{
	(void)state;
	enum { N = 3000, CAP = 4096 };
	struct rsync_txts *t = table(CAP, false);
	static uint64_t model[N];

	srand(7);
	for (int round = 0; round < 20; round++) {
		for (int k = 0; k < 400; k++) {
			uint32_t i = (uint32_t)rand() % N;
			uint64_t ts = (uint64_t)round * 1000 + (uint64_t)rand() % 1000 + 1;
			struct rsync_flow f = flow(i);
			int rc = rsync_txts_raise(t, &f, ts);

			if (rc == 0 && ts > model[i])
				model[i] = ts;
			else if (rc != 0)
				assert_int_equal(model[i], 0); /* only new flows are refused */
		}
		uint64_t wm = (uint64_t)round * 1000 + (uint64_t)rand() % 1000;
		uint32_t expect_removed = 0;

		for (uint32_t i = 0; i < N; i++)
			if (model[i] != 0 && model[i] <= wm) {
				model[i] = 0;
				expect_removed++;
			}
		assert_int_equal(rsync_txts_gc(t, wm), expect_removed);
		uint32_t live = 0;
		for (uint32_t i = 0; i < N; i++) {
			struct rsync_flow f = flow(i);

			assert_int_equal(rsync_txts_get(t, &f), model[i]);
			live += model[i] != 0;
		}
		assert_int_equal(t->n, live);
	}
	table_free(t);
}

static void
test_ordered_delta_lists_flows_in_first_insert_order(void **state)
{
	(void)state;
	struct rsync_txts *t = table(64, true);
	uint32_t order[] = {9, 2, 30, 4};

	for (int rep = 0; rep < 3; rep++)
		for (int i = 0; i < 4; i++) {
			struct rsync_flow f = flow(order[i]);

			assert_int_equal(rsync_txts_raise(t, &f, (uint64_t)rep * 10 + i + 1), 0);
		}
	assert_int_equal(t->n, 4);
	for (uint32_t i = 0; i < 4; i++) {
		const struct rsync_txts_slot *s = rsync_txts_at(t, i);
		struct rsync_flow f = flow(order[i]);

		assert_non_null(s);
		assert_int_equal(s->key.src_ip, f.src_ip);
		assert_int_equal(s->ts, 20 + i + 1);
	}
	assert_null(rsync_txts_at(t, 4));
	assert_int_equal(rsync_txts_gc(t, 100), 0); /* not for ordered tables */
	rsync_txts_clear(t);
	assert_int_equal(t->n, 0);
	for (uint32_t i = 0; i < 4; i++) {
		struct rsync_flow f = flow(order[i]);

		assert_int_equal(rsync_txts_get(t, &f), 0);
	}
	table_free(t);
}

static void
test_capacity_must_be_a_power_of_two(void **state)
{
	(void)state;
	struct rsync_txts t;
	uint64_t mem[64];

	assert_int_equal(rsync_txts_init(&t, mem, 12, false, 1), -EINVAL);
	assert_int_equal(rsync_txts_init(&t, mem, 2, false, 1), -EINVAL);
	assert_int_equal(rsync_txts_init(&t, mem, 16, false, 1), 0);
	assert_int_equal(t.max_n, 12);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry_keeps_the_highest_timestamp),
		cmocka_unit_test(test_flows_differing_in_one_field_are_distinct),
		cmocka_unit_test(test_full_table_refuses_new_flows_and_counts),
		cmocka_unit_test(test_gc_removes_only_entries_at_or_below_the_watermark),
		cmocka_unit_test(test_ordered_delta_lists_flows_in_first_insert_order),
		cmocka_unit_test(test_capacity_must_be_a_power_of_two),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
