/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * libnf's region heap (libnf/src/region_heap.c) on heap-backed state
 * regions.  Every test commits and compares replica with canonical after
 * each step (test_state_commit_check), so a metadata write the heap forgot
 * to touch fails here.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "onvm_region_heap.h"
#include "test_state.h"

#define HEAP_BYTES (1u << 20)

struct rig {
	struct test_state ts;
	struct onvm_rh h;
};

static void
rig_init(struct rig *r)
{
	const struct nf_state_request req = {.name = "heap", .size = HEAP_BYTES, .chunk_size = 256};
	char err[160];

	assert_int_equal(test_state_init(&r->ts, &req, 1), 0);
	assert_int_equal(onvm_rh_open(&r->h, &r->ts.set, test_state_region(&r->ts, "heap"),
				      HEAP_BYTES, err, sizeof(err)),
			 0);
	assert_false(onvm_rh_was_formatted(&r->h));
	assert_int_equal(test_state_commit_check(&r->ts), 0);
}

static void
test_rh_blocks_are_aligned_distinct_and_reused(void **unused)
{
	struct rig r;
	void *a, *b, *c;

	(void)unused;
	rig_init(&r);
	a = onvm_rh_alloc(&r.h, 100);
	b = onvm_rh_alloc(&r.h, 100);
	assert_non_null(a);
	assert_non_null(b);
	assert_true(((uintptr_t)a & 15) == 0 && ((uintptr_t)b & 15) == 0);
	assert_true((uint8_t *)b >= (uint8_t *)a + 100 || (uint8_t *)a >= (uint8_t *)b + 100);
	assert_true(onvm_rh_usable(&r.h, a) >= 100);
	memset(a, 1, 100); /* alloc touched the block */
	assert_int_equal(test_state_commit_check(&r.ts), 0);
	onvm_rh_free(&r.h, a);
	assert_int_equal(test_state_commit_check(&r.ts), 0);
	c = onvm_rh_alloc(&r.h, 150); /* same class (256 B): the freed block comes back */
	assert_ptr_equal(c, a);
	assert_int_equal(onvm_rh_stats(&r.h)->live_blocks, 2);
	assert_int_equal(onvm_rh_stats(&r.h)->live_bytes, 250);
	assert_int_equal(test_state_commit_check(&r.ts), 0);
	test_state_fini(&r.ts);
}

static void
test_rh_calloc_zeroes_and_checks_overflow(void **unused)
{
	struct rig r;
	uint8_t *p;

	(void)unused;
	rig_init(&r);
	p = onvm_rh_alloc(&r.h, 64);
	memset(p, 0xee, 64);
	onvm_rh_free(&r.h, p);
	p = onvm_rh_calloc(&r.h, 8, 8);
	for (int i = 0; i < 64; i++)
		assert_int_equal(p[i], 0);
	assert_null(onvm_rh_calloc(&r.h, SIZE_MAX / 2, 4));
	assert_int_equal(test_state_commit_check(&r.ts), 0);
	test_state_fini(&r.ts);
}

static void
test_rh_full_heap_refuses_and_counts(void **unused)
{
	struct rig r;
	unsigned int n = 0;

	(void)unused;
	rig_init(&r);
	while (onvm_rh_alloc(&r.h, 60000) != NULL)
		n++;
	assert_true(n >= 10 && n < 16); /* 64 KB blocks in 1 MB */
	assert_int_equal(onvm_rh_stats(&r.h)->failed, 1);
	assert_null(onvm_rh_alloc(&r.h, HEAP_BYTES * 2));
	assert_int_equal(onvm_rh_stats(&r.h)->failed, 2);
	assert_non_null(onvm_rh_alloc(&r.h, 100)); /* small ones still fit */
	assert_int_equal(test_state_commit_check(&r.ts), 0);
	test_state_fini(&r.ts);
}

static void
test_rh_bad_frees_are_counted_not_obeyed(void **unused)
{
	struct rig r;
	uint8_t *p;
	uint64_t local;

	(void)unused;
	rig_init(&r);
	p = onvm_rh_alloc(&r.h, 200);
	onvm_rh_free(&r.h, p + 16); /* inside a block */
	onvm_rh_free(&r.h, &local);  /* not in the heap */
	onvm_rh_free(&r.h, NULL);    /* ignored, like free() */
	assert_int_equal(onvm_rh_stats(&r.h)->bad_frees, 2);
	onvm_rh_free(&r.h, p);
	onvm_rh_free(&r.h, p); /* double free */
	assert_int_equal(onvm_rh_stats(&r.h)->bad_frees, 3);
	assert_int_equal(onvm_rh_stats(&r.h)->live_blocks, 0);
	assert_int_equal(test_state_commit_check(&r.ts), 0);
	test_state_fini(&r.ts);
}

/* Blocks allocated under an owner are the ones touch_owner() covers: writes
 * to them after it are committed; free and disown keep the list right. */
static void
test_rh_owner_lists_cover_their_blocks(void **unused)
{
	struct rig r;
	struct onvm_rh_owner *own;
	uint8_t *blk[5];

	(void)unused;
	rig_init(&r);
	own = onvm_rh_calloc(&r.h, 1, sizeof(*own));
	onvm_rh_set_owner(&r.h, own);
	for (int i = 0; i < 5; i++)
		blk[i] = onvm_rh_alloc(&r.h, 300 + i * 1000);
	onvm_rh_set_owner(&r.h, NULL);
	assert_int_equal(own->blocks, 5);
	assert_int_equal(test_state_commit_check(&r.ts), 0);

	onvm_rh_free(&r.h, blk[2]); /* from the middle of the list */
	assert_int_equal(own->blocks, 4);
	assert_int_equal(test_state_commit_check(&r.ts), 0);

	/* A later batch writes the owner's blocks behind the heap's back. */
	onvm_rh_touch_owner(&r.h, own);
	for (int i = 0; i < 5; i++)
		if (i != 2)
			memset(blk[i], 0x40 + i, 300 + i * 1000);
	assert_int_equal(test_state_commit_check(&r.ts), 0);

	/* The same without the touch is caught (the check can fail). */
	memset(blk[4], 0x77, 10);
	assert_int_equal(test_state_commit_check(&r.ts), -1);
	onvm_rh_touch_owner(&r.h, own);
	assert_int_equal(test_state_commit_check(&r.ts), 0);

	onvm_rh_disown(&r.h, own);
	assert_int_equal(own->blocks, 0);
	assert_int_equal(own->head, 0);
	assert_int_equal(onvm_rh_stats(&r.h)->live_blocks, 5); /* still allocated */
	assert_int_equal(test_state_commit_check(&r.ts), 0);
	test_state_fini(&r.ts);
}

/* A standby re-opens the heap: it attaches, finds the root, and a batch that
 * never committed is rolled back, allocations included. */
static void
test_rh_reopen_adopts_and_failover_rolls_back(void **unused)
{
	struct rig r;
	struct onvm_rh again;
	char err[160];
	uint64_t *root, top_committed, *lost;

	(void)unused;
	rig_init(&r);
	root = onvm_rh_alloc(&r.h, sizeof(*root) * 4);
	root[0] = 42;
	onvm_rh_set_root(&r.h, root);
	assert_int_equal(test_state_commit_check(&r.ts), 0);
	top_committed = r.h.hdr->top;

	lost = onvm_rh_alloc(&r.h, 5000); /* never committed */
	assert_non_null(lost);
	assert_int_equal(test_state_failover(&r.ts), 0);
	assert_int_equal(onvm_rh_open(&again, &r.ts.set, test_state_region(&r.ts, "heap"),
				      HEAP_BYTES, err, sizeof(err)),
			 0);
	assert_true(onvm_rh_was_formatted(&again));
	assert_ptr_equal(onvm_rh_root(&again), root);
	assert_int_equal(((uint64_t *)onvm_rh_root(&again))[0], 42);
	assert_int_equal(again.hdr->top, top_committed);
	assert_int_equal(onvm_rh_stats(&again)->live_blocks, 1);
	assert_ptr_equal(onvm_rh_alloc(&again, 5000), lost); /* the same memory again */
	assert_int_equal(test_state_commit_check(&r.ts), 0);
	test_state_fini(&r.ts);
}

static void
test_rh_open_rejects_bad_memory(void **unused)
{
	struct rig r;
	struct onvm_rh h;
	char err[160];
	uint8_t *mem;

	(void)unused;
	rig_init(&r);
	mem = test_state_region(&r.ts, "heap");
	assert_int_equal(onvm_rh_open(&h, NULL, mem, HEAP_BYTES / 2, err, sizeof(err)), -EBADMSG);
	assert_int_equal(onvm_rh_open(&h, NULL, mem + 8, HEAP_BYTES - 64, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(onvm_rh_open(&h, NULL, mem, 512, err, sizeof(err)), -EINVAL);
	memset(mem, 0xa5, 64);
	assert_int_equal(onvm_rh_open(&h, NULL, mem, HEAP_BYTES, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "something else"));
	test_state_fini(&r.ts);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rh_blocks_are_aligned_distinct_and_reused),
		cmocka_unit_test(test_rh_calloc_zeroes_and_checks_overflow),
		cmocka_unit_test(test_rh_full_heap_refuses_and_counts),
		cmocka_unit_test(test_rh_bad_frees_are_counted_not_obeyed),
		cmocka_unit_test(test_rh_owner_lists_cover_their_blocks),
		cmocka_unit_test(test_rh_reopen_adopts_and_failover_rolls_back),
		cmocka_unit_test(test_rh_open_rejects_bad_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
