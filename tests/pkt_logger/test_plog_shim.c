/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/* The 0x88B5 timestamp shim (plog_shim.h): byte-exact insert and removal,
 * and a reason for every frame it refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "plog_shim.h"

/* An Ethernet/IPv4/UDP frame (60 bytes) and a VLAN-tagged one. */
static const uint8_t ipv4[60] = {
	0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a, 0x08, 0x00,	/* Ethernet */
	0x45, 0, 0, 46, 0, 1, 0, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 19, 0, 1, /* IPv4 */
	0x30, 0x39, 0x00, 0x35, 0, 26, 0, 0, 'p', 'a', 'y', 'l', 'o', 'a', 'd'};
static const uint8_t vlan[18] = {0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a,
				 0x81, 0x00, 0x00, 0x2a, 0x08, 0x00};

/* room + frame, as rte_pktmbuf_prepend() leaves it */
static size_t
prepared(uint8_t *buf, const uint8_t *frame, size_t len)
{
	memset(buf, 0xcc, PLOG_SHIM_LEN);
	memcpy(buf + PLOG_SHIM_LEN, frame, len);
	return len + PLOG_SHIM_LEN;
}

static void
test_push_then_pop_restores_the_frame_byte_for_byte(void **state)
{
	(void)state;
	uint8_t buf[128];
	struct plog_shim sh;
	size_t n = prepared(buf, ipv4, sizeof(ipv4));

	assert_int_equal(plog_shim_push(buf, n, 0x0102030405060708ull, 0), 0);
	/* layout: MACs, 0x88B5, version, flags, inner type, ts, payload */
	assert_memory_equal(buf, ipv4, 12);
	assert_int_equal(buf[12], 0x88);
	assert_int_equal(buf[13], 0xb5);
	assert_int_equal(buf[14], 1);
	assert_int_equal(buf[15], 0);
	assert_int_equal(buf[16], 0x08);
	assert_int_equal(buf[17], 0x00);
	for (int i = 0; i < 8; i++)
		assert_int_equal(buf[18 + i], i + 1);
	assert_memory_equal(buf + 26, ipv4 + 14, sizeof(ipv4) - 14);
	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_OK);
	assert_int_equal(sh.ts, 0x0102030405060708ull);
	assert_int_equal(sh.inner_type, 0x0800);
	assert_int_equal(plog_shim_pop(buf, n), 0);
	assert_memory_equal(buf + PLOG_SHIM_LEN, ipv4, sizeof(ipv4));
}

static void
test_vlan_tag_stays_after_the_shim(void **state)
{
	(void)state;
	uint8_t buf[64];
	struct plog_shim sh;
	size_t n = prepared(buf, vlan, sizeof(vlan));

	assert_int_equal(plog_shim_push(buf, n, 7, PLOG_SHIM_F_REPLAY), 0);
	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_OK);
	assert_int_equal(sh.inner_type, 0x8100);
	assert_int_equal(sh.flags, PLOG_SHIM_F_REPLAY);
	assert_memory_equal(buf + 26, vlan + 14, 4); /* TCI and the IPv4 type */
	assert_int_equal(plog_shim_set_flags(buf, n, 0), 0);
	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_OK);
	assert_int_equal(sh.flags, 0);
	assert_int_equal(plog_shim_pop(buf, n), 0);
	assert_memory_equal(buf + PLOG_SHIM_LEN, vlan, sizeof(vlan));
}

static void
test_push_refuses_what_it_cannot_shim(void **state)
{
	(void)state;
	uint8_t buf[128], copy[128];
	size_t n = prepared(buf, ipv4, sizeof(ipv4));

	memcpy(copy, buf, n);
	assert_int_equal(plog_shim_push(buf, n, 0, 0), -1);		  /* ts 0 */
	assert_int_equal(plog_shim_push(buf, n, 1, 0x80), -1);		  /* unknown flag */
	assert_int_equal(plog_shim_push(buf, PLOG_SHIM_LEN + 13, 1, 0), -1); /* no EtherType */
	assert_memory_equal(buf, copy, n);				  /* untouched */
	assert_int_equal(plog_shim_push(buf, n, 1, 0), 0);
	/* a shimmed frame is never shimmed again */
	memmove(buf + PLOG_SHIM_LEN, buf, n - PLOG_SHIM_LEN);
	assert_int_equal(plog_shim_push(buf, n, 2, 0), -1);
}

static void
test_every_rejection_has_its_reason(void **state)
{
	(void)state;
	uint8_t buf[128];
	struct plog_shim sh;
	size_t n = prepared(buf, ipv4, sizeof(ipv4));

	assert_int_equal(plog_shim_parse(ipv4, sizeof(ipv4), &sh), PLOG_SHIM_NOT_SHIM);
	assert_int_equal(plog_shim_push(buf, n, 9, 0), 0);
	for (size_t len = 0; len < PLOG_ETH_LEN + PLOG_SHIM_LEN; len++)
		assert_int_equal(plog_shim_parse(buf, len, &sh), PLOG_SHIM_SHORT);
	buf[14] = 2;
	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_BAD_VERSION);
	buf[14] = 1;
	buf[15] = 0x40;
	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_BAD_FLAGS);
	buf[15] = 0;
	buf[16] = 0x88;
	buf[17] = 0xb5;
	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_NESTED);
	assert_int_equal(plog_shim_pop(buf, n), -1);
	buf[16] = 0x08;
	buf[17] = 0x00;
	memset(buf + 18, 0, 8);
	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_ZERO_TS);
	for (int r = 0; r < PLOG_SHIM_REASON_MAX; r++)
		assert_string_not_equal(plog_shim_reason_str((enum plog_shim_reason)r), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_then_pop_restores_the_frame_byte_for_byte),
		cmocka_unit_test(test_vlan_tag_stays_after_the_shim),
		cmocka_unit_test(test_push_refuses_what_it_cannot_shim),
		cmocka_unit_test(test_every_rejection_has_its_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
