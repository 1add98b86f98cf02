/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_ftc_wire.c -- FTC's piggyback header (ftc/ftc_wire.h): the bytes as
 * the header draws them, build and parse round trips (logs split in parts,
 * a propagating frame, a VLAN frame), strip back to the packet byte for
 * byte, and every refusal by its reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ftc_wire.h"
#include "onvm_wire.h"

/* An IPv4 frame: MACs, EtherType, 20 bytes of "IP". */
static const uint8_t ipv4[] = {
	0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00, 0x45, 0, 0, 20, 0, 0,
	0,    0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2,
};

static const uint8_t bytes_a[] = {1, 2, 3, 4, 5, 6, 7, 8};
static const uint8_t bytes_b[] = {9, 9, 9};

static const struct ftc_record_in recs[] = {
	{.region = 0, .len = sizeof(bytes_a), .offset = 4096, .bytes = bytes_a},
	{.region = 2, .len = sizeof(bytes_b), .offset = 7, .bytes = bytes_b},
};

static const struct ftc_log_in logs[] = {
	{.instance = 3, .part = 0, .parts = 1, .seq = 41, .recs = recs, .n_recs = 2},
	{.instance = 5, .part = 1, .parts = 2, .seq = UINT64_C(1) << 40, .recs = recs + 1,
	 .n_recs = 1},
};

/* a held and a need entry: one instance may have one of each */
static const struct ftc_commit commits[] = {{.instance = 3, .kind = FTC_HELD, .seq = 40},
					    {.instance = 3, .kind = FTC_NEED, .seq = 7}};

static int
build(uint8_t *out, size_t cap)
{
	return ftc_build(out, cap, ipv4, sizeof(ipv4), 0, logs, 2, commits, 2);
}

static void
test_bytes_as_drawn(void **state)
{
	uint8_t f[256];
	int n;

	(void)state;
	n = build(f, sizeof(f));
	/* head 10, log 16 + 2 records (8 + 8, 8 + 3), log 16 + (8 + 3),
	 * two commits of 12, then the packet after its EtherType */
	assert_int_equal(n, 12 + 10 + (16 + 16 + 11) + (16 + 11) + 24 + (int)sizeof(ipv4) - 14);
	assert_memory_equal(f, ipv4, 12);
	assert_int_equal(onvm_get_be16(f + 12), 0x88B5);
	assert_int_equal(f[14], 2);
	assert_int_equal(f[15], 0);
	assert_int_equal(onvm_get_be16(f + 16), 0x0800);
	assert_int_equal(onvm_get_be16(f + 18), 16 + 16 + 11 + 16 + 11 + 24);
	assert_int_equal(f[20], 2);
	assert_int_equal(f[21], 2);
	/* the first log */
	assert_int_equal(onvm_get_be16(f + 22), 3);
	assert_int_equal(f[24], 0);
	assert_int_equal(f[25], 1);
	assert_int_equal(onvm_get_be32(f + 26), 16 + 11);
	assert_true(onvm_get_be64(f + 30) == 41);
	assert_int_equal(onvm_get_be16(f + 38), 0);	  /* region */
	assert_int_equal(onvm_get_be16(f + 40), 8);	  /* length */
	assert_int_equal(onvm_get_be32(f + 42), 4096); /* offset */
	assert_memory_equal(f + 46, bytes_a, 8);
	/* the payload, at the end */
	assert_memory_equal(f + n - (sizeof(ipv4) - 14), ipv4 + 14, sizeof(ipv4) - 14);
}

static void
test_round_trip(void **state)
{
	uint8_t f[256], back[256];
	struct ftc_view v;
	struct ftc_log l;
	struct ftc_record r;
	struct ftc_commit c;
	uint32_t pos = 0;
	int n;

	(void)state;
	n = build(f, sizeof(f));
	assert_true(n > 0);
	assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_OK);
	assert_int_equal(v.n_logs, 2);
	assert_int_equal(v.n_commits, 2);
	assert_int_equal(v.inner_ethertype, 0x0800);
	ftc_log_get(&v, 0, &l);
	assert_int_equal(l.instance, 3);
	assert_true(l.seq == 41);
	assert_true(ftc_record_next(&l, &pos, &r));
	assert_int_equal(r.region, 0);
	assert_int_equal(r.offset, 4096);
	assert_int_equal(r.len, 8);
	assert_memory_equal(r.bytes, bytes_a, 8);
	assert_true(ftc_record_next(&l, &pos, &r));
	assert_int_equal(r.region, 2);
	assert_memory_equal(r.bytes, bytes_b, 3);
	assert_false(ftc_record_next(&l, &pos, &r));
	ftc_log_get(&v, 1, &l);
	assert_int_equal(l.instance, 5);
	assert_int_equal(l.part, 1);
	assert_int_equal(l.parts, 2);
	assert_true(l.seq == UINT64_C(1) << 40);
	ftc_commit_get(&v, 0, &c);
	assert_int_equal(c.instance, 3);
	assert_int_equal(c.kind, FTC_HELD);
	assert_true(c.seq == 40);
	ftc_commit_get(&v, 1, &c);
	assert_int_equal(c.instance, 3);
	assert_int_equal(c.kind, FTC_NEED);
	assert_true(c.seq == 7);
	/* stripped at the front, the payload left where it is */
	{
		uint8_t g[256];
		int cut;

		memcpy(g, f, (size_t)n);
		assert_int_equal(ftc_parse(g, (size_t)n, &v), FTC_OK);
		cut = ftc_strip_front(g, &v);
		assert_int_equal((size_t)n - (size_t)cut, sizeof(ipv4));
		assert_memory_equal(g + cut, ipv4, sizeof(ipv4));
		assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_OK);
	}
	/* stripped: the packet as it was, byte for byte, in place too */
	assert_int_equal(ftc_strip(back, sizeof(back), &v), (int)sizeof(ipv4));
	assert_memory_equal(back, ipv4, sizeof(ipv4));
	assert_int_equal(ftc_strip(f, sizeof(f), &v), (int)sizeof(ipv4));
	assert_memory_equal(f, ipv4, sizeof(ipv4));
}

static void
test_propagate_and_empty(void **state)
{
	uint8_t f[128], padded[128], back[128];
	struct ftc_view v;
	int n;

	(void)state;
	/* a commit vector on its way back: no packet, inner EtherType 0 */
	n = ftc_build(f, sizeof(f), ipv4, 12, FTC_F_PROPAGATE, NULL, 0, commits, 2);
	assert_int_equal(n, 12 + 10 + 24);
	assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_OK);
	assert_int_equal(v.inner_ethertype, 0);
	assert_int_equal(ftc_strip(back, sizeof(back), &v), -1);
	assert_int_equal(ftc_strip_front(f, &v), -1);
	/* padded to Ethernet's minimum by a NIC: the same */
	memset(padded, 0, sizeof(padded));
	memcpy(padded, f, (size_t)n);
	assert_int_equal(ftc_parse(padded, 60, &v), FTC_OK);
	/* a packet, nothing piggybacked: the head only (its EtherType moved
	 * into it: 8 bytes more) */
	n = ftc_build(f, sizeof(f), ipv4, sizeof(ipv4), 0, NULL, 0, NULL, 0);
	assert_int_equal(n, (int)sizeof(ipv4) + FTC_HEAD_LEN - 2);
	assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_OK);
	/* a builder given what a receiver would refuse writes nothing */
	memset(f, 0xee, sizeof(f));
	assert_int_equal(ftc_build(f, sizeof(f), ipv4, sizeof(ipv4), 0x80, NULL, 0, NULL, 0), -1);
	assert_int_equal(ftc_build(f, 20, ipv4, sizeof(ipv4), 0, logs, 2, commits, 2), -1);
	assert_int_equal(ftc_build(f, sizeof(f), ipv4, 12, 0, NULL, 0, NULL, 0), -1);
	{
		const struct ftc_record_in empty = {.region = 1, .len = 0, .offset = 0};
		const struct ftc_log_in bad[] = {
			{.instance = 1, .part = 0, .parts = 1, .seq = 0},		 /* seq 0 */
			{.instance = 1, .part = 1, .parts = 1, .seq = 2},		 /* part >= parts */
			{.instance = 1, .part = 0, .parts = 1, .seq = 2, .recs = &empty,
			 .n_recs = 1},						 /* a record of 0 */
		};
		const struct ftc_commit dup[] = {{.instance = 4, .seq = 1}, {.instance = 4, .seq = 2}};
		const struct ftc_commit zero[] = {{.instance = 4, .seq = 0}};
		const struct ftc_commit kind[] = {{.instance = 4, .kind = 4, .seq = 1}};
		const struct ftc_commit nospan[] = {{.instance = 4, .kind = FTC_VOID, .seq = 1}};

		for (unsigned int k = 0; k < 3; k++)
			assert_int_equal(ftc_build(f, sizeof(f), ipv4, sizeof(ipv4), 0, &bad[k], 1, NULL,
						   0), -1);
		assert_int_equal(ftc_build(f, sizeof(f), ipv4, sizeof(ipv4), 0, NULL, 0, dup, 2), -1);
		assert_int_equal(ftc_build(f, sizeof(f), ipv4, sizeof(ipv4), 0, NULL, 0, zero, 1), -1);
		assert_int_equal(ftc_build(f, sizeof(f), ipv4, sizeof(ipv4), 0, NULL, 0, kind, 1), -1);
		assert_int_equal(ftc_build(f, sizeof(f), ipv4, sizeof(ipv4), 0, NULL, 0, nospan, 1),
				 -1);
		for (size_t i = 0; i < sizeof(f); i++)
			assert_int_equal(f[i], 0xee); /* untouched */
	}
}

/* The four kinds: a void's span in the entry's fourth byte (1..255), an
 * applied entry may say 0 (a member with no copy), the others may not. */
static void
test_kinds(void **state)
{
	const struct ftc_commit c[] = {
		{.instance = 1, .kind = FTC_HELD, .seq = 9},
		{.instance = 1, .kind = FTC_NEED, .seq = 10},
		{.instance = 1, .kind = FTC_VOID, .span = 3, .seq = 0},
		{.instance = 1, .kind = FTC_APPLIED, .seq = 0},
	};
	uint8_t f[256], g[256];
	struct ftc_view v;
	struct ftc_commit got;
	size_t c0;
	int n;

	(void)state;
	n = ftc_build(f, sizeof(f), ipv4, sizeof(ipv4), 0, NULL, 0, c, 4);
	assert_true(n > 0);
	assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_OK);
	for (unsigned int k = 0; k < 4; k++) {
		ftc_commit_get(&v, k, &got);
		assert_int_equal(got.kind, c[k].kind);
		assert_int_equal(got.span, c[k].span);
		assert_true(got.seq == c[k].seq);
	}
	c0 = v.commit_off;
	memcpy(g, f, (size_t)n);
	g[c0 + 24 + 3] = 0; /* a void of no span */
	assert_int_equal(ftc_parse(g, (size_t)n, &v), FTC_BAD_RESERVED);
	memcpy(g, f, (size_t)n);
	g[c0 + 3] = 1; /* a held entry with a span */
	assert_int_equal(ftc_parse(g, (size_t)n, &v), FTC_BAD_RESERVED);
	memcpy(g, f, (size_t)n);
	memset(g + c0 + 12 + 4, 0, 8); /* a need of 0 */
	assert_int_equal(ftc_parse(g, (size_t)n, &v), FTC_ZERO_SEQ);
}

static void
test_vlan_frame(void **state)
{
	uint8_t vlan[sizeof(ipv4) + 4], f[256], back[256];
	struct ftc_view v;
	int n;

	(void)state;
	memcpy(vlan, ipv4, 12);
	onvm_put_be16(vlan + 12, 0x8100);
	onvm_put_be16(vlan + 14, 42);
	memcpy(vlan + 16, ipv4 + 12, sizeof(ipv4) - 12);
	n = ftc_build(f, sizeof(f), vlan, sizeof(vlan), 0, logs, 1, NULL, 0);
	assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_OK);
	assert_int_equal(v.inner_ethertype, 0x8100);
	assert_int_equal(ftc_strip(back, sizeof(back), &v), (int)sizeof(vlan));
	assert_memory_equal(back, vlan, sizeof(vlan));
}

/* One byte changed in a good frame, and what the receiver must say. */
static void
expect_bad(const uint8_t *good, size_t n, size_t at, uint8_t value, enum ftc_reason want)
{
	uint8_t f[256];
	struct ftc_view v;

	memcpy(f, good, n);
	f[at] = value;
	assert_int_equal(ftc_parse(f, n, &v), want);
}

static void
test_every_refusal(void **state)
{
	uint8_t g[256];
	struct ftc_view v;
	int n;
	size_t c0;

	(void)state;
	n = build(g, sizeof(g));
	c0 = (size_t)n - (sizeof(ipv4) - 14) - 24; /* the first commit */
	for (size_t len = 0; len < 22; len++)
		assert_int_equal(ftc_parse(g, len, &v), FTC_SHORT);
	assert_int_equal(ftc_parse(ipv4, sizeof(ipv4), &v), FTC_NOT_FTC);
	expect_bad(g, (size_t)n, 14, 1, FTC_BAD_VERSION); /* the shim's version: counted */
	expect_bad(g, (size_t)n, 14, 3, FTC_BAD_VERSION);
	expect_bad(g, (size_t)n, 15, 0x02, FTC_BAD_FLAGS);
	expect_bad(g, (size_t)n, 15, FTC_F_PROPAGATE, FTC_BAD_INNER); /* with a packet */
	{
		uint8_t f[256];

		memcpy(f, g, (size_t)n);
		onvm_put_be16(f + 16, 0x88B5); /* nested */
		assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_BAD_INNER);
		onvm_put_be16(f + 16, 0);
		assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_BAD_INNER);
		memcpy(f, g, (size_t)n);
		onvm_put_be16(f + 18, 0xffff); /* section past the frame */
		assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_BAD_LENGTH);
		memcpy(f, g, (size_t)n);
		onvm_put_be32(f + 26, 1000); /* a log's data past the section */
		assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_BAD_LENGTH);
		memcpy(f, g, (size_t)n);
		onvm_put_be64(f + 30, 0);
		assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_ZERO_SEQ);
		memcpy(f, g, (size_t)n);
		onvm_put_be16(f + 40, 0); /* a record of length 0 */
		assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_BAD_RECORD);
		memcpy(f, g, (size_t)n);
		onvm_put_be16(f + 40, 30); /* a record past its log's data */
		assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_BAD_RECORD);
		memcpy(f, g, (size_t)n);
		onvm_put_be64(f + c0 + 4, 0);
		assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_ZERO_SEQ);
		memcpy(f, g, (size_t)n);
		f[c0 + 14] = FTC_HELD; /* the second: the first's instance and kind */
		assert_int_equal(ftc_parse(f, (size_t)n, &v), FTC_DUP_COMMIT);
	}
	expect_bad(g, (size_t)n, 20, FTC_MAX_LOGS + 1, FTC_TOO_MANY);
	expect_bad(g, (size_t)n, 21, FTC_MAX_COMMITS + 1, FTC_TOO_MANY);
	expect_bad(g, (size_t)n, 20, 3, FTC_BAD_PART); /* a third log: the commits, parts 0 */
	expect_bad(g, (size_t)n, 21, 1, FTC_BAD_LENGTH); /* the section not filled */
	expect_bad(g, (size_t)n, 25, 0, FTC_BAD_PART);	  /* parts 0 */
	expect_bad(g, (size_t)n, 24, 1, FTC_BAD_PART);	  /* part 1 of 1 */
	expect_bad(g, (size_t)n, c0 + 3, 1, FTC_BAD_RESERVED);
	expect_bad(g, (size_t)n, c0 + 2, 4, FTC_BAD_KIND);
	/* every reason has a name */
	for (int r = 0; r < FTC_REASON_MAX; r++)
		assert_string_not_equal(ftc_reason_str((enum ftc_reason)r), "?");
	assert_string_equal(ftc_reason_str(FTC_REASON_MAX), "?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bytes_as_drawn),
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_propagate_and_empty),
	    cmocka_unit_test(test_kinds),
	    cmocka_unit_test(test_vlan_frame),
	    cmocka_unit_test(test_every_refusal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
