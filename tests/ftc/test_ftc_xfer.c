/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_ftc_xfer.c -- FTC's state transfer frames (ftc/ftc_xfer.h): the
 * bytes as drawn, round trips of every op, padding, and every refusal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ftc_wire.h"
#include "ftc_xfer.h"

static void
test_round_trips(void **state)
{
	static const uint8_t bytes[5] = {1, 2, 3, 4, 5};
	uint8_t f[2048] = {0};
	struct ftc_xfer x, y;
	int n;

	(void)state;
	x = (struct ftc_xfer){.op = FTC_XFER_PIECE, .chain = 29, .from = 3, .instance = 2,
			      .nonce = 0xdeadbeef, .seq = UINT64_C(1) << 33, .index = 7,
			      .region = 4, .len = 5, .offset = 8192, .bytes = bytes};
	n = ftc_xfer_build(f, sizeof(f), &x);
	assert_int_equal(n, 12 + 24 + 8 + 5);
	/* the bytes as drawn */
	assert_int_equal(f[12], 0x88);
	assert_int_equal(f[13], 0xb5);
	assert_int_equal(f[14], 3);
	assert_int_equal(f[15], FTC_XFER_PIECE);
	assert_int_equal(f[17], 29);
	assert_int_equal(f[18], 3);
	assert_int_equal(f[19], 2);
	assert_int_equal(f[20], 0xde);
	assert_int_equal(f[27], 2); /* seq 2^33: byte 3 of 8 */
	assert_int_equal(f[35], 7);
	assert_int_equal(f[37], 4);
	assert_int_equal(f[39], 5);
	assert_int_equal(f[42], 0x20);
	assert_memory_equal(f + 44, bytes, 5);
	assert_int_equal(ftc_xfer_parse(f, (size_t)n, &y), FTC_XFER_OK);
	assert_true(y.seq == x.seq && y.nonce == x.nonce && y.index == 7 && y.offset == 8192);
	assert_memory_equal(y.bytes, bytes, 5);
	/* a PIECE's bytes end it: not shorter, not longer -- but for the
	 * padding of a short frame to Ethernet's 60 bytes */
	assert_int_equal(ftc_xfer_parse(f, (size_t)n - 1, &y), FTC_XFER_BAD_LENGTH);
	assert_int_equal(ftc_xfer_parse(f, (size_t)n + 1, &y), FTC_XFER_BAD_LENGTH);
	assert_int_equal(ftc_xfer_parse(f, 61, &y), FTC_XFER_BAD_LENGTH);
	assert_int_equal(ftc_xfer_parse(f, 60, &y), FTC_XFER_OK);
	assert_int_equal(y.len, 5);
	assert_memory_equal(y.bytes, bytes, 5);
	/* the others may be padded */
	for (uint8_t op = FTC_XFER_FETCH; op <= FTC_XFER_RESYNC; op++) {
		if (op == FTC_XFER_PIECE)
			continue;
		x = (struct ftc_xfer){.op = op, .chain = 1, .from = 0, .instance = 1, .nonce = 9,
				      .seq = op == FTC_XFER_END ? 40 : 0,
				      .index = op == FTC_XFER_END ? 12 : 0,
				      .high = op == FTC_XFER_END ? UINT64_C(5) << 32 : 0};
		n = ftc_xfer_build(f, sizeof(f), &x);
		assert_int_equal(n, op == FTC_XFER_END ? 44 : 36);
		assert_int_equal(ftc_xfer_parse(f, 60, &y), FTC_XFER_OK);
		assert_int_equal(y.op, op);
		assert_true(y.seq == x.seq && y.index == x.index && y.high == x.high);
		if (op == FTC_XFER_END) /* its high cut off */
			assert_int_equal(ftc_xfer_parse(f, 43, &y), FTC_XFER_SHORT);
	}
}

static void
test_refusals(void **state)
{
	uint8_t f[128] = {0};
	struct ftc_xfer x = {.op = FTC_XFER_FETCH, .chain = 1}, y;
	int n = ftc_xfer_build(f, sizeof(f), &x);
	uint8_t g[128];

	(void)state;
	assert_int_equal(ftc_xfer_parse(f, 14, &y), FTC_XFER_SHORT);
	assert_int_equal(ftc_xfer_parse(f, (size_t)n - 1, &y), FTC_XFER_SHORT);
	memcpy(g, f, sizeof(f));
	g[14] = 2; /* the piggyback */
	assert_int_equal(ftc_xfer_parse(g, (size_t)n, &y), FTC_XFER_NOT_XFER);
	memcpy(g, f, sizeof(f));
	g[12] = 0x08; /* IPv4 */
	assert_int_equal(ftc_xfer_parse(g, (size_t)n, &y), FTC_XFER_NOT_XFER);
	memcpy(g, f, sizeof(f));
	g[15] = 9;
	assert_int_equal(ftc_xfer_parse(g, (size_t)n, &y), FTC_XFER_BAD_OP);
	memcpy(g, f, sizeof(f));
	g[27] = 1; /* a FETCH with a seq */
	assert_int_equal(ftc_xfer_parse(g, (size_t)n, &y), FTC_XFER_BAD_FIELD);
	/* a PIECE of 0 or more than 1024 bytes: never built, refused */
	x = (struct ftc_xfer){.op = FTC_XFER_PIECE, .len = 0};
	assert_int_equal(ftc_xfer_build(f, sizeof(f), &x), -1);
	x.len = FTC_XFER_PIECE_MAX + 1;
	assert_int_equal(ftc_xfer_build(f, sizeof(f), &x), -1);
	x = (struct ftc_xfer){.op = FTC_XFER_RESYNC, .index = 1};
	assert_int_equal(ftc_xfer_build(f, sizeof(f), &x), -1);
	x = (struct ftc_xfer){.op = FTC_XFER_FETCH};
	assert_int_equal(ftc_xfer_build(f, 20, &x), -1); /* no room */
	for (int r = 0; r < FTC_XFER_REASON_MAX; r++)
		assert_string_not_equal(ftc_xfer_reason_str((enum ftc_xfer_reason)r), "?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trips),
	    cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
