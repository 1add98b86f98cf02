/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The 0x88B5 timestamp shim (plog_shim.h), as the predecessor writes it and
 * the primary/standby read it: the header's exact bytes, insert and removal
 * byte for byte on real frames (IPv4, 802.1Q, QinQ), any alignment, and a
 * reason for every frame the parser refuses -- refusals change nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "plog_shim.h"

/* Ethernet / IPv4 (checksum right) / TCP SYN 198.18.0.1:40000 -> 198.19.0.1:80,
 * padded to the 60-byte minimum. */
static const uint8_t tcp_syn[60] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x0b, 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x08, 0x00,
	0x45, 0x00, 0x00, 0x28, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x06, 0x92, 0x62, 198,  18,
	0,    1,    198,  19,   0,    1,    0x9c, 0x40, 0x00, 0x50, 0x00, 0x00, 0x03, 0xe8,
	0x00, 0x00, 0x00, 0x00, 0x50, 0x02, 0xfa, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
};

/* The same kind of frame on VLAN 42 (PCP 3): IPv4 / UDP 198.18.0.2 -> 198.19.0.2
 * with 8 payload bytes. */
static const uint8_t vlan_udp[60] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x0b, 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x81, 0x00,
	0x60, 0x2a, 0x08, 0x00, 0x45, 0x00, 0x00, 0x24, 0x00, 0x01, 0x00, 0x00, 0x40, 0x11,
	0xee, 0x9e, 198,  18,   0,    2,    198,  19,   0,    2,    0x30, 0x39, 0x00, 0x35,
	0x00, 0x10, 0x00, 0x00, 'p',  'a',  'y',  'l',  'o',  'a',  'd',  '!',  0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
};

/* QinQ: 802.1ad outer tag 100, 802.1Q inner tag 7, then IPv6 (header only). */
static const uint8_t qinq_v6[62] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x0b, 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x88, 0xa8,
	0x00, 0x64, 0x81, 0x00, 0x00, 0x07, 0x86, 0xdd, 0x60, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x3b, 0x40, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x20, 0x01, 0x0d,
	0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
};

#define ROOM 0xcc /* what the prepended room holds before the push */

/* Copy `frame` behind PLOG_SHIM_LEN bytes of room, as rte_pktmbuf_prepend()
 * leaves an mbuf; returns the grown length. */
static size_t
with_room(uint8_t *buf, const uint8_t *frame, size_t len)
{
	memset(buf, ROOM, PLOG_SHIM_LEN);
	memcpy(buf + PLOG_SHIM_LEN, frame, len);
	return len + PLOG_SHIM_LEN;
}

/* A received shimmed frame: `frame` with a shim of `ts`, `flags`. */
static size_t
shimmed(uint8_t *buf, const uint8_t *frame, size_t len, uint64_t ts, uint8_t flags)
{
	size_t n = with_room(buf, frame, len);

	assert_int_equal(plog_shim_push(buf, n, ts, flags), 0);
	return n;
}

static void
test_shim_push_writes_the_header_as_drawn(void **state)
{
	(void)state;
	static const uint8_t want[26] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x0b, 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a, /* MACs */
		0x88, 0xb5,			/* EtherType */
		0x01,				/* version */
		0x01,				/* flags: REPLAY */
		0x08, 0x00,			/* inner EtherType */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* timestamp, big endian */
	};
	uint8_t buf[128];
	size_t n = with_room(buf, tcp_syn, sizeof(tcp_syn));

	assert_int_equal(plog_shim_push(buf, n, 0x0102030405060708ull, PLOG_SHIM_F_REPLAY), 0);
	assert_memory_equal(buf, want, sizeof(want));
	/* the IPv4 header and everything after it did not move */
	assert_memory_equal(buf + sizeof(want), tcp_syn + PLOG_ETH_LEN,
			    sizeof(tcp_syn) - PLOG_ETH_LEN);
}

static void
test_shim_push_then_parse_gives_back_what_was_pushed(void **state)
{
	(void)state;
	uint8_t buf[128];
	struct plog_shim sh;
	size_t n = shimmed(buf, tcp_syn, sizeof(tcp_syn), 123456789, 0);

	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_OK);
	assert_int_equal(sh.version, PLOG_SHIM_VERSION);
	assert_int_equal(sh.flags, 0);
	assert_int_equal(sh.inner_type, 0x0800);
	assert_int_equal(sh.ts, 123456789);
}

static void
test_shim_push_then_pop_restores_frame_bytes(void **state)
{
	(void)state;
	uint8_t buf[128];
	size_t n = shimmed(buf, tcp_syn, sizeof(tcp_syn), 77, 0);

	assert_int_equal(plog_shim_pop(buf, n), 0);
	assert_memory_equal(buf + PLOG_SHIM_LEN, tcp_syn, sizeof(tcp_syn));
}

static void
test_shim_keeps_vlan_tag_after_shim(void **state)
{
	(void)state;
	uint8_t buf[128];
	struct plog_shim sh;
	size_t n = shimmed(buf, vlan_udp, sizeof(vlan_udp), 5, 0);

	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_OK);
	assert_int_equal(sh.inner_type, 0x8100);
	/* TCI and the tagged EtherType follow the shim untouched */
	assert_memory_equal(buf + PLOG_ETH_LEN + PLOG_SHIM_LEN, vlan_udp + PLOG_ETH_LEN,
			    sizeof(vlan_udp) - PLOG_ETH_LEN);
	assert_int_equal(plog_shim_pop(buf, n), 0);
	assert_memory_equal(buf + PLOG_SHIM_LEN, vlan_udp, sizeof(vlan_udp));
}

static void
test_shim_keeps_both_tags_of_qinq_after_shim(void **state)
{
	(void)state;
	uint8_t buf[128];
	struct plog_shim sh;
	size_t n = shimmed(buf, qinq_v6, sizeof(qinq_v6), 6, 0);

	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_OK);
	assert_int_equal(sh.inner_type, 0x88a8);
	assert_memory_equal(buf + PLOG_ETH_LEN + PLOG_SHIM_LEN, qinq_v6 + PLOG_ETH_LEN,
			    sizeof(qinq_v6) - PLOG_ETH_LEN);
	assert_int_equal(plog_shim_pop(buf, n), 0);
	assert_memory_equal(buf + PLOG_SHIM_LEN, qinq_v6, sizeof(qinq_v6));
}

/* The other direction: a frame as the primary receives it, popped and pushed
 * again with what parse read, is the same frame. */
static void
test_shim_pop_then_push_restores_the_received_frame(void **state)
{
	(void)state;
	uint8_t rx[128], buf[128];
	struct plog_shim sh;
	size_t n =
	    shimmed(rx, vlan_udp, sizeof(vlan_udp), 0xfedcba9876543210ull, PLOG_SHIM_F_REPLAY);

	memcpy(buf, rx, n);
	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_OK);
	assert_int_equal(plog_shim_pop(buf, n), 0);
	assert_int_equal(plog_shim_push(buf, n, sh.ts, sh.flags), 0);
	assert_memory_equal(buf, rx, n);
}

/* Frames sit at whatever offset the mbuf gives them: every field is read and
 * written without alignment (UBSan would report a misaligned access). */
static void
test_shim_works_at_any_alignment(void **state)
{
	(void)state;
	uint64_t words[32];
	uint8_t *base = (uint8_t *)words;

	for (size_t shift = 0; shift < 8; shift++) {
		uint8_t *buf = base + shift;
		struct plog_shim sh;
		size_t n = shimmed(buf, tcp_syn, sizeof(tcp_syn), 0x1122334455667788ull + shift, 0);

		assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_OK);
		assert_int_equal(sh.ts, 0x1122334455667788ull + shift);
		assert_int_equal(plog_shim_set_flags(buf, n, PLOG_SHIM_F_REPLAY), 0);
		assert_int_equal(plog_shim_pop(buf, n), 0);
		assert_memory_equal(buf + PLOG_SHIM_LEN, tcp_syn, sizeof(tcp_syn));
	}
}

static void
test_shim_timestamp_uses_all_64_bits(void **state)
{
	(void)state;
	static const uint64_t ts[] = {
	    1, 0xff, 0x100, 0xffffffffull, 0x100000000ull, 0x8000000000000000ull, UINT64_MAX};
	uint8_t buf[128];
	struct plog_shim sh;

	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
		size_t n = shimmed(buf, tcp_syn, sizeof(tcp_syn), ts[i], 0);

		for (int b = 0; b < 8; b++)
			assert_int_equal(buf[18 + b], (uint8_t)(ts[i] >> (56 - 8 * b)));
		assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_OK);
		assert_true(sh.ts == ts[i]);
	}
}

/* MACs, 0x88B5 and the shim with nothing after them is a valid shimmed frame
 * whose original was a bare Ethernet header. */
static void
test_shim_accepts_the_shortest_frame(void **state)
{
	(void)state;
	uint8_t buf[64];
	struct plog_shim sh;
	size_t n = shimmed(buf, tcp_syn, PLOG_ETH_LEN, 3, 0);

	assert_int_equal(n, 26);
	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_OK);
	assert_int_equal(plog_shim_pop(buf, n), 0);
	assert_memory_equal(buf + PLOG_SHIM_LEN, tcp_syn, PLOG_ETH_LEN);
}

static void
test_parse_reason_not_shim_for_other_ethertypes(void **state)
{
	(void)state;
	uint8_t f[60];
	struct plog_shim sh;
	static const uint16_t types[] = {0x0800, 0x0806, 0x86dd, 0x8100, 0x88a8, 0x88b6, 0xb588};

	assert_int_equal(plog_shim_parse(tcp_syn, sizeof(tcp_syn), &sh), PLOG_SHIM_NOT_SHIM);
	assert_int_equal(plog_shim_parse(vlan_udp, sizeof(vlan_udp), &sh), PLOG_SHIM_NOT_SHIM);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		memcpy(f, tcp_syn, sizeof(f));
		f[12] = (uint8_t)(types[i] >> 8);
		f[13] = (uint8_t)types[i];
		assert_int_equal(plog_shim_parse(f, sizeof(f), &sh), PLOG_SHIM_NOT_SHIM);
	}
}

/* Every length below MACs + EtherType + shim (26): a shimmed frame cut there
 * is short; a plain one is short only while its EtherType is cut too. */
static void
test_parse_reason_short_for_every_length_0_to_25(void **state)
{
	(void)state;
	uint8_t buf[128];
	struct plog_shim sh;

	shimmed(buf, tcp_syn, sizeof(tcp_syn), 9, 0);
	for (size_t len = 0; len < PLOG_ETH_LEN + PLOG_SHIM_LEN; len++) {
		assert_int_equal(plog_shim_parse(buf, len, &sh), PLOG_SHIM_SHORT);
		assert_int_equal(plog_shim_parse(tcp_syn, len, &sh),
				 len < PLOG_ETH_LEN ? PLOG_SHIM_SHORT : PLOG_SHIM_NOT_SHIM);
	}
	assert_int_equal(plog_shim_parse(buf, 26, &sh), PLOG_SHIM_OK);
}

static void
test_parse_reason_bad_version(void **state)
{
	(void)state;
	uint8_t buf[128];
	struct plog_shim sh;
	size_t n = shimmed(buf, tcp_syn, sizeof(tcp_syn), 9, 0);

	for (int v = 0; v < 256; v++) {
		buf[14] = (uint8_t)v;
		assert_int_equal(plog_shim_parse(buf, n, &sh),
				 v == PLOG_SHIM_VERSION ? PLOG_SHIM_OK : PLOG_SHIM_BAD_VERSION);
	}
}

static void
test_parse_reason_bad_flags_for_every_unknown_bit(void **state)
{
	(void)state;
	uint8_t buf[128];
	struct plog_shim sh;
	size_t n = shimmed(buf, tcp_syn, sizeof(tcp_syn), 9, 0);

	for (int bit = 0; bit < 8; bit++) {
		uint8_t f = (uint8_t)(1u << bit);
		int want = (f & PLOG_SHIM_F_KNOWN) != 0 ? PLOG_SHIM_OK : PLOG_SHIM_BAD_FLAGS;

		buf[15] = f;
		assert_int_equal(plog_shim_parse(buf, n, &sh), want);
		buf[15] = (uint8_t)(f | PLOG_SHIM_F_REPLAY);
		assert_int_equal(plog_shim_parse(buf, n, &sh), want);
	}
}

static void
test_parse_reason_nested_when_inner_type_is_the_shim_again(void **state)
{
	(void)state;
	uint8_t buf[128];
	struct plog_shim sh;
	size_t n = shimmed(buf, tcp_syn, sizeof(tcp_syn), 9, 0);

	buf[16] = 0x88;
	buf[17] = 0xb5;
	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_NESTED);
}

static void
test_parse_reason_zero_ts(void **state)
{
	(void)state;
	uint8_t buf[128];
	struct plog_shim sh;
	size_t n = shimmed(buf, tcp_syn, sizeof(tcp_syn), 9, 0);

	memset(buf + 18, 0, 8);
	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_ZERO_TS);
	buf[25] = 1; /* the lowest byte alone makes it valid */
	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_OK);
	assert_int_equal(sh.ts, 1);
}

/* One broken variant of a shimmed frame per refusal reason. */
static size_t
broken(uint8_t *buf, int which)
{
	size_t n = shimmed(buf, tcp_syn, sizeof(tcp_syn), 9, 0);

	switch (which) {
	case 0: /* not a shim */
		buf[12] = 0x08;
		buf[13] = 0x00;
		return n;
	case 1: /* short */
		return 25;
	case 2:
		buf[14] = 2;
		return n;
	case 3:
		buf[15] = 0x80;
		return n;
	case 4:
		buf[16] = 0x88;
		buf[17] = 0xb5;
		return n;
	default:
		memset(buf + 18, 0, 8);
		return n;
	}
}

static void
test_pop_refuses_every_invalid_shim_and_changes_nothing(void **state)
{
	(void)state;
	uint8_t buf[128], copy[128];
	struct plog_shim sh;

	for (int which = 0; which < 6; which++) {
		size_t n = broken(buf, which);

		assert_int_not_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_OK);
		memcpy(copy, buf, sizeof(buf));
		assert_int_equal(plog_shim_pop(buf, n), -1);
		assert_memory_equal(buf, copy, sizeof(buf));
	}
}

static void
test_push_refuses_zero_ts(void **state)
{
	(void)state;
	uint8_t buf[128], copy[128];
	size_t n = with_room(buf, tcp_syn, sizeof(tcp_syn));

	memcpy(copy, buf, n);
	assert_int_equal(plog_shim_push(buf, n, 0, 0), -1);
	assert_memory_equal(buf, copy, n);
}

static void
test_push_refuses_unknown_flags(void **state)
{
	(void)state;
	uint8_t buf[128], copy[128];
	size_t n = with_room(buf, tcp_syn, sizeof(tcp_syn));

	memcpy(copy, buf, n);
	for (int bit = 1; bit < 8; bit++) {
		assert_int_equal(plog_shim_push(buf, n, 1, (uint8_t)(1u << bit)), -1);
		assert_memory_equal(buf, copy, n);
	}
}

static void
test_push_refuses_an_original_shorter_than_ethernet(void **state)
{
	(void)state;
	uint8_t buf[128], copy[128];

	with_room(buf, tcp_syn, sizeof(tcp_syn));
	memcpy(copy, buf, sizeof(buf));
	for (size_t len = 0; len < PLOG_SHIM_LEN + PLOG_ETH_LEN; len++) {
		assert_int_equal(plog_shim_push(buf, len, 1, 0), -1);
		assert_memory_equal(buf, copy, sizeof(buf));
	}
	assert_int_equal(plog_shim_push(buf, PLOG_SHIM_LEN + PLOG_ETH_LEN, 1, 0), 0);
}

static void
test_push_never_nests_a_shim(void **state)
{
	(void)state;
	uint8_t buf[160], copy[160];
	size_t n = shimmed(buf + PLOG_SHIM_LEN, tcp_syn, sizeof(tcp_syn), 4, 0);

	/* buf + PLOG_SHIM_LEN now holds a shimmed frame; buf has room before it */
	memset(buf, ROOM, PLOG_SHIM_LEN);
	memcpy(copy, buf, n + PLOG_SHIM_LEN);
	assert_int_equal(plog_shim_push(buf, n + PLOG_SHIM_LEN, 5, 0), -1);
	assert_memory_equal(buf, copy, n + PLOG_SHIM_LEN);
}

static void
test_set_flags_marks_replay_and_clears_it(void **state)
{
	(void)state;
	uint8_t buf[128], copy[128];
	struct plog_shim sh;
	size_t n = shimmed(buf, tcp_syn, sizeof(tcp_syn), 11, 0);

	memcpy(copy, buf, n);
	assert_int_equal(plog_shim_set_flags(buf, n, PLOG_SHIM_F_REPLAY), 0);
	assert_int_equal(plog_shim_parse(buf, n, &sh), PLOG_SHIM_OK);
	assert_int_equal(sh.flags, PLOG_SHIM_F_REPLAY);
	assert_int_equal(sh.ts, 11);
	/* only the flags byte changed */
	assert_int_equal(buf[15], PLOG_SHIM_F_REPLAY);
	buf[15] = 0;
	assert_memory_equal(buf, copy, n);
	assert_int_equal(plog_shim_set_flags(buf, n, PLOG_SHIM_F_REPLAY), 0);
	assert_int_equal(plog_shim_set_flags(buf, n, 0), 0);
	assert_memory_equal(buf, copy, n);
}

static void
test_set_flags_refuses_unknown_flags_and_invalid_shims(void **state)
{
	(void)state;
	uint8_t buf[128], copy[128];
	size_t n = shimmed(buf, tcp_syn, sizeof(tcp_syn), 11, 0);

	memcpy(copy, buf, sizeof(buf));
	assert_int_equal(plog_shim_set_flags(buf, n, 0x02), -1);
	assert_int_equal(plog_shim_set_flags(buf, n, 0xff), -1);
	assert_memory_equal(buf, copy, sizeof(buf));
	for (int which = 0; which < 6; which++) {
		n = broken(buf, which);
		memcpy(copy, buf, sizeof(buf));
		assert_int_equal(plog_shim_set_flags(buf, n, PLOG_SHIM_F_REPLAY), -1);
		assert_memory_equal(buf, copy, sizeof(buf));
	}
}

static void
test_every_reason_has_its_own_name(void **state)
{
	(void)state;
	static const char *const want[PLOG_SHIM_REASON_MAX] = {
		"ok", "not_shim", "short", "bad_version", "bad_flags", "nested", "zero_ts",
	};

	for (int r = 0; r < PLOG_SHIM_REASON_MAX; r++)
		assert_string_equal(plog_shim_reason_str((enum plog_shim_reason)r), want[r]);
	assert_string_equal(plog_shim_reason_str(PLOG_SHIM_REASON_MAX), "unknown");
	assert_string_equal(plog_shim_reason_str((enum plog_shim_reason)99), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shim_push_writes_the_header_as_drawn),
		cmocka_unit_test(test_shim_push_then_parse_gives_back_what_was_pushed),
		cmocka_unit_test(test_shim_push_then_pop_restores_frame_bytes),
		cmocka_unit_test(test_shim_keeps_vlan_tag_after_shim),
		cmocka_unit_test(test_shim_keeps_both_tags_of_qinq_after_shim),
		cmocka_unit_test(test_shim_pop_then_push_restores_the_received_frame),
		cmocka_unit_test(test_shim_works_at_any_alignment),
		cmocka_unit_test(test_shim_timestamp_uses_all_64_bits),
		cmocka_unit_test(test_shim_accepts_the_shortest_frame),
		cmocka_unit_test(test_parse_reason_not_shim_for_other_ethertypes),
		cmocka_unit_test(test_parse_reason_short_for_every_length_0_to_25),
		cmocka_unit_test(test_parse_reason_bad_version),
		cmocka_unit_test(test_parse_reason_bad_flags_for_every_unknown_bit),
		cmocka_unit_test(test_parse_reason_nested_when_inner_type_is_the_shim_again),
		cmocka_unit_test(test_parse_reason_zero_ts),
		cmocka_unit_test(test_pop_refuses_every_invalid_shim_and_changes_nothing),
		cmocka_unit_test(test_push_refuses_zero_ts),
		cmocka_unit_test(test_push_refuses_unknown_flags),
		cmocka_unit_test(test_push_refuses_an_original_shorter_than_ethernet),
		cmocka_unit_test(test_push_never_nests_a_shim),
		cmocka_unit_test(test_set_flags_marks_replay_and_clears_it),
		cmocka_unit_test(test_set_flags_refuses_unknown_flags_and_invalid_shims),
		cmocka_unit_test(test_every_reason_has_its_own_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
