/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_ftc_parts.c -- an update cut into parts that fit a frame
 * (ftc/ftc_parts.h): every part within the budget, the parts' records
 * together writing exactly the update's bytes at the update's places, the
 * same cut every time, and the refusals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ftc_hlog.h"
#include "ftc_parts.h"

static uint64_t mem[1 << 16];

/* Apply records to `img` (regions of 64 KB side by side). */
static void
apply(uint8_t *img, const uint8_t *data, uint32_t len)
{
	const struct ftc_log l = {.len = len, .data = data};
	struct ftc_record r;
	uint32_t pos = 0;

	while (ftc_record_next(&l, &pos, &r)) {
		assert_true((uint64_t)r.offset + r.len <= 65536);
		memcpy(img + (size_t)r.region * 65536 + r.offset, r.bytes, r.len);
	}
	assert_int_equal(pos, len);
}

static void
test_random_updates(void **state)
{
	static uint8_t want[4 * 65536], got[4 * 65536], part[FTC_RECORD_MAX], again[FTC_RECORD_MAX];
	static uint8_t bytes[40000];

	(void)state;
	srand(11);
	for (int round = 0; round < 400; round++) {
		struct ftc_hlog *h = ftc_hlog_init(mem, 4, sizeof(mem) - 4096, 1);
		struct ftc_record_in recs[8];
		unsigned int n = 1 + (unsigned int)rand() % 8, parts;
		uint32_t budget = 600 + (uint32_t)rand() % 3000, len; /* <= 255 parts */
		const uint8_t *d;

		for (size_t i = 0; i < sizeof(bytes); i++)
			bytes[i] = (uint8_t)rand();
		for (unsigned int i = 0; i < n; i++) {
			uint16_t l = (uint16_t)(1 + rand() % 4000);

			recs[i] = (struct ftc_record_in){.region = (uint16_t)(rand() % 4), .len = l,
							 .offset = (uint32_t)(rand() % (65536 - l)),
							 .bytes = bytes + rand() % 30000};
		}
		if (round % 5 == 0) /* some budgets larger than the whole update */
			budget = 40000;
		assert_true(ftc_hlog_append(h, recs, n) == 1);
		assert_true(ftc_hlog_get(h, 1, &d, &len));
		memset(want, 0, sizeof(want));
		memset(got, 0, sizeof(got));
		apply(want, d, len);
		parts = ftc_parts_count(d, len, budget);
		assert_true(parts >= 1);
		if (budget >= len)
			assert_int_equal(parts, 1);
		for (unsigned int k = 0; k < parts; k++) {
			int pl = ftc_part_build(d, len, budget, k, part);

			assert_true(pl > FTC_RECORD_HEAD_LEN && (uint32_t)pl <= budget);
			/* the same cut again */
			assert_int_equal(ftc_part_build(d, len, budget, k, again), pl);
			assert_memory_equal(part, again, (size_t)pl);
			apply(got, part, (uint32_t)pl);
		}
		assert_int_equal(ftc_part_build(d, len, budget, parts, part), -1);
		assert_memory_equal(got, want, sizeof(want));
	}
}

static void
test_refusals(void **state)
{
	static const uint8_t b[100] = {7};
	const struct ftc_record_in r = {.region = 1, .len = 100, .offset = 0, .bytes = b};
	struct ftc_hlog *h = ftc_hlog_init(mem, 4, 4096, 1);
	const uint8_t *d;
	uint32_t len;
	uint8_t out[256];

	(void)state;
	assert_true(ftc_hlog_append(h, &r, 1) == 1);
	assert_true(ftc_hlog_get(h, 1, &d, &len));
	assert_int_equal(ftc_parts_count(d, len, FTC_PART_BUDGET_MIN - 1), 0);
	assert_int_equal(ftc_parts_count(d, 0, 100), 0);
	assert_int_equal(ftc_parts_count(d, len - 1, 200), 0); /* not whole records */
	/* 100 bytes, one byte a part: 100 parts; 255 at most */
	assert_int_equal(ftc_parts_count(d, len, FTC_PART_BUDGET_MIN), 100);
	{
		static uint8_t big[300];
		const struct ftc_record_in rb = {.region = 0, .len = 300, .offset = 0, .bytes = big};

		assert_true(ftc_hlog_append(h, &rb, 1) == 2);
		assert_true(ftc_hlog_get(h, 2, &d, &len));
		assert_int_equal(ftc_parts_count(d, len, FTC_PART_BUDGET_MIN), 0);
		assert_int_equal(ftc_part_build(d, len, FTC_PART_BUDGET_MIN, 0, out), -1);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_random_updates),
	    cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
