/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * BFD control packet codec: byte-exact layout against RFC 5880 section 4.1,
 * round trips of every field and authentication type, and every packet-only
 * rejection of section 6.8.6 with its reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bfd_pkt.h"

static struct bfd_ctrl
up_packet(void)
{
	struct bfd_ctrl c = {
	    .diag = BFD_DIAG_NONE,
	    .state = BFD_STATE_UP,
	    .detect_mult = 3,
	    .my_disc = 0x01020304,
	    .your_disc = 0x0a0b0c0d,
	    .desired_min_tx_us = 10000,
	    .required_min_rx_us = 20000,
	    .required_min_echo_rx_us = 0,
	};

	return c;
}

static void
test_layout_is_rfc_5880(void **state)
{
	static const uint8_t want[BFD_PKT_LEN] = {
	    0x20 | BFD_DIAG_ADMIN_DOWN,		/* version 1, diag 7 */
	    (BFD_STATE_INIT << 6) | BFD_FLAG_POLL | BFD_FLAG_CPI, /* Init, P, C */
	    5,					/* detect mult */
	    24,					/* length */
	    0x01, 0x02, 0x03, 0x04,		/* my disc */
	    0x0a, 0x0b, 0x0c, 0x0d,		/* your disc */
	    0x00, 0x01, 0x86, 0xa0,		/* desired min tx 100000 us */
	    0x00, 0x0f, 0x42, 0x40,		/* required min rx 1000000 us */
	    0x00, 0x00, 0x00, 0x32,		/* required min echo rx 50 us */
	};
	struct bfd_ctrl c = up_packet();
	uint8_t buf[BFD_PKT_MAX_LEN];

	(void)state;
	c.diag = BFD_DIAG_ADMIN_DOWN;
	c.state = BFD_STATE_INIT;
	c.flags = BFD_FLAG_POLL | BFD_FLAG_CPI;
	c.detect_mult = 5;
	c.desired_min_tx_us = 100000;
	c.required_min_rx_us = 1000000;
	c.required_min_echo_rx_us = 50;
	assert_int_equal(bfd_pkt_encode(&c, buf, sizeof(buf)), BFD_PKT_LEN);
	assert_memory_equal(buf, want, BFD_PKT_LEN);
}

static void
test_round_trip_every_state_diag_and_flag(void **state)
{
	static const uint8_t flag_sets[] = {0, BFD_FLAG_POLL, BFD_FLAG_FINAL, BFD_FLAG_CPI,
					    BFD_FLAG_DEMAND,
					    BFD_FLAG_POLL | BFD_FLAG_CPI | BFD_FLAG_DEMAND};
	uint8_t buf[BFD_PKT_MAX_LEN];

	(void)state;
	for (int st = BFD_STATE_ADMIN_DOWN; st <= BFD_STATE_UP; st++)
		for (int d = 0; d < BFD_DIAG_MAX; d++)
			for (size_t f = 0; f < sizeof(flag_sets); f++) {
				struct bfd_ctrl c = up_packet(), got;

				c.state = st;
				c.diag = d;
				c.flags = flag_sets[f];
				c.desired_min_tx_us = 0xfffffff0u + f;
				assert_int_equal(bfd_pkt_encode(&c, buf, sizeof(buf)), 24);
				assert_int_equal(bfd_pkt_decode(buf, 24, &got), BFD_RX_OK);
				assert_int_equal(got.version, 1);
				assert_int_equal(got.state, st);
				assert_int_equal(got.diag, d);
				assert_int_equal(got.flags, flag_sets[f]);
				assert_int_equal(got.detect_mult, 3);
				assert_int_equal(got.length, 24);
				assert_int_equal(got.my_disc, c.my_disc);
				assert_int_equal(got.your_disc, c.your_disc);
				assert_int_equal(got.desired_min_tx_us, c.desired_min_tx_us);
				assert_int_equal(got.required_min_rx_us, 20000);
				assert_int_equal(got.required_min_echo_rx_us, 0);
			}
}

static void
round_trip_auth(const struct bfd_auth *a, int want_len)
{
	struct bfd_ctrl c = up_packet(), got;
	uint8_t buf[BFD_PKT_MAX_LEN];

	c.flags = BFD_FLAG_AUTH;
	c.auth = *a;
	assert_int_equal(bfd_pkt_encode(&c, buf, sizeof(buf)), want_len);
	assert_int_equal(buf[3], want_len);
	assert_int_equal(bfd_pkt_decode(buf, want_len, &got), BFD_RX_OK);
	assert_int_equal(got.flags, BFD_FLAG_AUTH);
	assert_int_equal(got.auth.type, a->type);
	assert_int_equal(got.auth.len, a->len);
	assert_int_equal(got.auth.key_id, a->key_id);
	assert_int_equal(got.auth.offset, BFD_PKT_LEN);
	assert_int_equal(got.auth.seq, a->seq);
	assert_int_equal(got.auth.data_len, a->data_len);
	assert_memory_equal(got.auth.data, a->data, a->data_len);
}

static void
test_round_trip_auth_sections(void **state)
{
	struct bfd_auth simple1 = {.type = BFD_AUTH_SIMPLE, .len = 4, .key_id = 9,
				   .data = "x", .data_len = 1};
	struct bfd_auth simple16 = {.type = BFD_AUTH_SIMPLE, .len = 19, .key_id = 1,
				    .data = "0123456789abcdef", .data_len = 16};
	struct bfd_auth md5 = {.type = BFD_AUTH_KEYED_MD5, .len = 24, .key_id = 2,
			       .seq = 0xdeadbeef, .data_len = 16};
	struct bfd_auth sha1 = {.type = BFD_AUTH_KEYED_SHA1, .len = BFD_AUTH_SHA1_LEN,
				.key_id = 255, .seq = 7, .data_len = BFD_SHA1_LEN};
	struct bfd_auth msha1 = sha1;

	(void)state;
	for (int i = 0; i < 16; i++)
		md5.data[i] = (uint8_t)(0xa0 + i);
	for (int i = 0; i < BFD_SHA1_LEN; i++)
		sha1.data[i] = (uint8_t)(i * 13);
	msha1 = sha1;
	msha1.type = BFD_AUTH_METICULOUS_SHA1;
	round_trip_auth(&simple1, 28);
	round_trip_auth(&simple16, 43);
	round_trip_auth(&md5, 48);
	round_trip_auth(&sha1, 52);
	round_trip_auth(&msha1, 52);
}

/* Build a valid Up packet in buf, then let the caller break it. */
static size_t
valid(uint8_t *buf)
{
	struct bfd_ctrl c = up_packet();

	return (size_t)bfd_pkt_encode(&c, buf, BFD_PKT_MAX_LEN);
}

static void
expect(const uint8_t *buf, size_t len, enum bfd_rx_reason want)
{
	struct bfd_ctrl got;
	enum bfd_rx_reason r = bfd_pkt_decode(buf, len, &got);

	if (r != want)
		fail_msg("decode gave %s, want %s", bfd_rx_reason_str(r), bfd_rx_reason_str(want));
}

static void
test_rejections_of_6_8_6(void **state)
{
	uint8_t buf[BFD_PKT_MAX_LEN + 8];
	size_t n;

	(void)state;
	n = valid(buf);
	expect(buf, n, BFD_RX_OK);
	expect(buf, 0, BFD_RX_SHORT);
	expect(buf, n - 1, BFD_RX_SHORT);

	for (int v = 0; v < 8; v++) {
		if (v == BFD_VERSION)
			continue;
		n = valid(buf);
		buf[0] = (uint8_t)(v << 5 | (buf[0] & 0x1f));
		expect(buf, n, BFD_RX_BAD_VERSION);
	}

	n = valid(buf);
	buf[3] = 23; /* below the minimum */
	expect(buf, n, BFD_RX_BAD_LENGTH);
	n = valid(buf);
	buf[3] = 25; /* more than was received */
	expect(buf, n, BFD_RX_BAD_LENGTH);
	n = valid(buf);
	buf[1] |= BFD_FLAG_AUTH; /* A bit: minimum 26 */
	expect(buf, n, BFD_RX_BAD_LENGTH);

	n = valid(buf);
	buf[2] = 0;
	expect(buf, n, BFD_RX_ZERO_DETECT_MULT);
	n = valid(buf);
	buf[1] |= BFD_FLAG_MULTI;
	expect(buf, n, BFD_RX_MULTIPOINT);
	n = valid(buf);
	memset(buf + 4, 0, 4);
	expect(buf, n, BFD_RX_ZERO_MY_DISC);

	/* Your discriminator 0: only Down and AdminDown may say so. */
	for (int st = BFD_STATE_ADMIN_DOWN; st <= BFD_STATE_UP; st++) {
		n = valid(buf);
		buf[1] = (uint8_t)(st << 6);
		memset(buf + 8, 0, 4);
		expect(buf, n, st == BFD_STATE_DOWN || st == BFD_STATE_ADMIN_DOWN
				   ? BFD_RX_OK : BFD_RX_ZERO_YOUR_DISC);
	}

	/* Trailing bytes beyond the length field are not part of the packet. */
	n = valid(buf);
	memset(buf + n, 0xee, 8);
	expect(buf, n + 8, BFD_RX_OK);
}

/* A packet with an auth section of `type` and length byte `alen`, the BFD
 * length field covering it (or `field` if non-zero); returns the number of
 * bytes "received", enough for both. */
static size_t
with_auth(uint8_t *buf, uint8_t type, uint8_t alen, uint8_t field)
{
	size_t n = valid(buf);

	buf[1] |= BFD_FLAG_AUTH;
	memset(buf + n, 0x5a, BFD_PKT_MAX_LEN - n);
	buf[n] = type;
	buf[n + 1] = alen;
	n += alen;
	buf[3] = field ? field : (uint8_t)n;
	return n > buf[3] ? n : buf[3]; /* bytes received: all of it */
}

static void
test_auth_section_lengths(void **state)
{
	uint8_t buf[BFD_PKT_MAX_LEN + 64];

	(void)state;
	expect(buf, with_auth(buf, BFD_AUTH_KEYED_SHA1, 28, 0), BFD_RX_OK);
	expect(buf, with_auth(buf, BFD_AUTH_KEYED_SHA1, 27, 0), BFD_RX_BAD_AUTH_LEN);
	expect(buf, with_auth(buf, BFD_AUTH_KEYED_SHA1, 29, 0), BFD_RX_BAD_AUTH_LEN);
	expect(buf, with_auth(buf, BFD_AUTH_METICULOUS_SHA1, 24, 0), BFD_RX_BAD_AUTH_LEN);
	expect(buf, with_auth(buf, BFD_AUTH_KEYED_MD5, 24, 0), BFD_RX_OK);
	expect(buf, with_auth(buf, BFD_AUTH_KEYED_MD5, 23, 0), BFD_RX_BAD_AUTH_LEN);
	expect(buf, with_auth(buf, BFD_AUTH_SIMPLE, 4, 0), BFD_RX_OK);
	expect(buf, with_auth(buf, BFD_AUTH_SIMPLE, 19, 0), BFD_RX_OK);
	expect(buf, with_auth(buf, BFD_AUTH_SIMPLE, 3, 0), BFD_RX_BAD_AUTH_LEN);
	expect(buf, with_auth(buf, BFD_AUTH_SIMPLE, 20, 0), BFD_RX_BAD_AUTH_LEN);
	/* The section runs past the length field (which itself is consistent). */
	expect(buf, with_auth(buf, BFD_AUTH_KEYED_SHA1, 28, 40), BFD_RX_BAD_AUTH_LEN);
	/* Auth length byte 0 or 1 cannot even cover its own header. */
	expect(buf, with_auth(buf, 200, 0, 26), BFD_RX_BAD_AUTH_LEN);
	expect(buf, with_auth(buf, 200, 1, 26), BFD_RX_BAD_AUTH_LEN);
	/* An unknown type that fits decodes; the session refuses it. */
	expect(buf, with_auth(buf, 200, 8, 0), BFD_RX_OK);
}

static void
test_encode_refuses_what_it_cannot_send(void **state)
{
	struct bfd_ctrl c = up_packet();
	uint8_t buf[BFD_PKT_MAX_LEN];

	(void)state;
	c.detect_mult = 0;
	assert_int_equal(bfd_pkt_encode(&c, buf, sizeof(buf)), -1);
	c = up_packet();
	assert_int_equal(bfd_pkt_encode(&c, buf, BFD_PKT_LEN - 1), -1);
	c.diag = BFD_DIAG_MAX;
	assert_int_equal(bfd_pkt_encode(&c, buf, sizeof(buf)), -1);
	c = up_packet();
	c.flags = BFD_FLAG_AUTH;
	c.auth = (struct bfd_auth){.type = BFD_AUTH_KEYED_SHA1, .len = 27};
	assert_int_equal(bfd_pkt_encode(&c, buf, sizeof(buf)), -1);
	c.auth = (struct bfd_auth){.type = 200, .len = 8};
	assert_int_equal(bfd_pkt_encode(&c, buf, sizeof(buf)), -1);
	c.auth = (struct bfd_auth){.type = BFD_AUTH_KEYED_SHA1, .len = 28};
	assert_int_equal(bfd_pkt_encode(&c, buf, 51), -1); /* one byte short */
	assert_int_equal(bfd_pkt_encode(&c, buf, 52), 52);
	/* The multipoint bit is never sent. */
	c = up_packet();
	c.flags = BFD_FLAG_MULTI | BFD_FLAG_FINAL;
	assert_int_equal(bfd_pkt_encode(&c, buf, sizeof(buf)), 24);
	assert_int_equal(buf[1] & 0x3f, BFD_FLAG_FINAL);
}

static void
test_every_reason_and_state_has_a_name(void **state)
{
	(void)state;
	for (int r = 0; r < BFD_RX_REASON_MAX; r++)
		assert_string_not_equal(bfd_rx_reason_str(r), "?");
	assert_string_equal(bfd_rx_reason_str(BFD_RX_REASON_MAX), "?");
	assert_string_equal(bfd_state_str(BFD_STATE_UP), "Up");
	assert_string_equal(bfd_state_str(4), "?");
	assert_string_equal(bfd_diag_str(BFD_DIAG_ADMIN_DOWN), "admin_down");
	assert_string_equal(bfd_diag_str(31), "reserved");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layout_is_rfc_5880),
	    cmocka_unit_test(test_round_trip_every_state_diag_and_flag),
	    cmocka_unit_test(test_round_trip_auth_sections),
	    cmocka_unit_test(test_rejections_of_6_8_6),
	    cmocka_unit_test(test_auth_section_lengths),
	    cmocka_unit_test(test_encode_refuses_what_it_cannot_send),
	    cmocka_unit_test(test_every_reason_and_state_has_a_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
