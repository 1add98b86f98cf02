/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/* Unit tests of the state pool's first-fit allocator (onvm_mgr/nf/state_pool.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "nf/state_pool.h"

#define MB (1024 * 1024)

static void
test_alloc_is_aligned_and_first_fit(void **state)
{
	struct mgr_state_pool p;

	(void)state;
	mgr_state_pool_init(&p, 16 * MB);
	assert_int_equal(mgr_state_pool_alloc(&p, 100), 0);
	assert_int_equal(mgr_state_pool_alloc(&p, 5000), MGR_STATE_POOL_ALIGN);
	assert_int_equal(mgr_state_pool_alloc(&p, 1), 3 * MGR_STATE_POOL_ALIGN);
	assert_int_equal(mgr_state_pool_in_use(&p), 4 * MGR_STATE_POOL_ALIGN);
}

static void
test_freed_gap_is_reused_when_it_fits(void **state)
{
	struct mgr_state_pool p;
	int64_t a, b, c;

	(void)state;
	mgr_state_pool_init(&p, 16 * MB);
	a = mgr_state_pool_alloc(&p, 2 * MB);
	b = mgr_state_pool_alloc(&p, 1 * MB);
	c = mgr_state_pool_alloc(&p, 1 * MB);
	assert_true(a == 0 && b == 2 * MB && c == 3 * MB);
	assert_int_equal(mgr_state_pool_free(&p, a), 0);
	assert_int_equal(mgr_state_pool_alloc(&p, 3 * MB), 4 * MB); /* gap too small */
	assert_int_equal(mgr_state_pool_alloc(&p, 2 * MB), 0);	   /* gap fits */
}

static void
test_exhaustion_and_bad_requests_are_refused(void **state)
{
	struct mgr_state_pool p;

	(void)state;
	mgr_state_pool_init(&p, 4 * MB);
	assert_int_equal(mgr_state_pool_alloc(&p, 0), -EINVAL);
	assert_int_equal(mgr_state_pool_alloc(&p, 5 * MB), -ENOMEM);
	assert_int_equal(mgr_state_pool_alloc(&p, 3 * MB), 0);
	assert_int_equal(mgr_state_pool_alloc(&p, 2 * MB), -ENOMEM);
	assert_int_equal(mgr_state_pool_alloc(&p, 1 * MB), 3 * MB);
	assert_int_equal(mgr_state_pool_free(&p, 12345), -ENOENT);
}

static void
test_block_count_is_bounded(void **state)
{
	struct mgr_state_pool p;

	(void)state;
	mgr_state_pool_init(&p, 64 * MB);
	for (int i = 0; i < MGR_STATE_POOL_MAX_BLOCKS; i++)
		assert_true(mgr_state_pool_alloc(&p, 1) >= 0);
	assert_int_equal(mgr_state_pool_alloc(&p, 1), -ENOMEM);
	assert_int_equal(mgr_state_pool_free(&p, 0), 0);
	assert_int_equal(mgr_state_pool_alloc(&p, 1), 0);
}

static void
test_blocks_never_overlap_under_churn(void **state)
{
	struct mgr_state_pool p;
	int64_t offs[40];
	uint32_t x = 12345;

	(void)state;
	mgr_state_pool_init(&p, 32 * MB);
	for (int i = 0; i < 40; i++)
		offs[i] = -1;
	for (int round = 0; round < 2000; round++) {
		int i = (x = x * 1103515245u + 12345u) % 40;

		if (offs[i] >= 0) {
			assert_int_equal(mgr_state_pool_free(&p, offs[i]), 0);
			offs[i] = -1;
		} else {
			offs[i] = mgr_state_pool_alloc(&p, 1 + (x >> 8) % (2 * MB));
		}
		for (uint32_t k = 1; k < p.n; k++)
			assert_true(p.used[k - 1].off + p.used[k - 1].len <= p.used[k].off);
		if (p.n > 0)
			assert_true(p.used[p.n - 1].off + p.used[p.n - 1].len <= p.size);
	}
}

/* A reserved range (a remote chain's state windows) is never handed out,
 * overlapping reservations and blocks are refused. */
static void
test_reserved_range_is_never_allocated(void **state)
{
	struct mgr_state_pool p;

	(void)state;
	mgr_state_pool_init(&p, 16 * MB);
	assert_int_equal(mgr_state_pool_reserve(&p, 0, 4 * MB), 0);
	assert_int_equal(mgr_state_pool_alloc(&p, 100), 4 * MB);
	assert_int_equal(mgr_state_pool_reserve(&p, 4 * MB, MGR_STATE_POOL_ALIGN), -EBUSY);
	assert_int_equal(mgr_state_pool_reserve(&p, 2 * MB, 4 * MB), -EBUSY);
	assert_int_equal(mgr_state_pool_reserve(&p, 8 * MB, 8 * MB), 0);
	assert_int_equal(mgr_state_pool_reserve(&p, 12 * MB, MB), -EBUSY);
	assert_int_equal(mgr_state_pool_reserve(&p, 16 * MB, MB), -ERANGE);
	assert_int_equal(mgr_state_pool_reserve(&p, 5 * MB + 1, MB), -EINVAL);
	/* what is left: between the block at 4 MB and the range at 8 MB */
	assert_int_equal(mgr_state_pool_alloc(&p, 3 * MB), 4 * MB + MGR_STATE_POOL_ALIGN);
	assert_int_equal(mgr_state_pool_alloc(&p, MB), -ENOMEM);
	assert_int_equal(mgr_state_pool_in_use(&p), 15 * MB + MGR_STATE_POOL_ALIGN);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_is_aligned_and_first_fit),
		cmocka_unit_test(test_freed_gap_is_reused_when_it_fits),
		cmocka_unit_test(test_exhaustion_and_bad_requests_are_refused),
		cmocka_unit_test(test_block_count_is_bounded),
		cmocka_unit_test(test_blocks_never_overlap_under_churn),
		cmocka_unit_test(test_reserved_range_is_never_allocated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
