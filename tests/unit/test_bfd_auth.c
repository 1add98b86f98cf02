/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * Keyed SHA1 for BFD: SHA-1 against FIPS 180 vectors and against Python's
 * hashlib around the padding boundaries; signing and checking packets (every
 * single-bit change is caught, a wrong key is refused); the sequence window.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bfd_auth.h"

static void
hex(const uint8_t *d, char *out)
{
	for (int i = 0; i < BFD_SHA1_LEN; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void
check_sha1(const void *data, size_t len, const char *want)
{
	uint8_t d[BFD_SHA1_LEN];
	char got[2 * BFD_SHA1_LEN + 1];

	bfd_sha1(data, len, d);
	hex(d, got);
	if (strcmp(got, want) != 0)
		fail_msg("sha1 of %zu bytes: %s, want %s", len, got, want);
}

static void
test_sha1_vectors(void **state)
{
	/* Lengths around the one- and two-block padding boundaries: hashlib. */
	static const struct {
		size_t n;
		const char *hex;
	} a_runs[] = {
	    {55, "c1c8bbdc22796e28c0e15163d20899b65621d65a"},
	    {56, "c2db330f6083854c99d4b5bfb6e8f29f201be699"},
	    {63, "03f09f5b158a7a8cdad920bddc29b81c18a551f5"},
	    {64, "0098ba824b5c16427bd7a1122a5a442a25ec644d"},
	    {65, "11655326c708d70319be2610e8a57d9a5b959d3b"},
	    {119, "ee971065aaa017e0632a8ca6c77bb3bf8b1dfc56"},
	    {120, "f34c1488385346a55709ba056ddd08280dd4c6d6"},
	};
	char *million;

	(void)state;
	/* FIPS 180 examples. */
	check_sha1("", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	check_sha1("abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d");
	check_sha1("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
		   "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	million = malloc(1000000);
	assert_non_null(million);
	memset(million, 'a', 1000000);
	check_sha1(million, 1000000, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
	for (size_t i = 0; i < sizeof(a_runs) / sizeof(a_runs[0]); i++)
		check_sha1(million, a_runs[i].n, a_runs[i].hex);
	free(million);
}

static const uint8_t key[] = "reinforce-bfd-key";

static int
signed_packet(uint8_t *buf, uint8_t type, uint32_t seq)
{
	struct bfd_ctrl c = {
	    .state = BFD_STATE_UP,
	    .flags = BFD_FLAG_AUTH,
	    .detect_mult = 3,
	    .my_disc = 7,
	    .your_disc = 9,
	    .desired_min_tx_us = 10000,
	    .required_min_rx_us = 10000,
	    .auth = {.type = type, .len = BFD_AUTH_SHA1_LEN, .key_id = 4, .seq = seq},
	};
	int n = bfd_pkt_encode(&c, buf, BFD_PKT_MAX_LEN);

	assert_int_equal(n, 52);
	assert_int_equal(bfd_auth_sha1_sign(buf, (size_t)n, key, sizeof(key) - 1), 0);
	return n;
}

static void
test_signed_packet_verifies_and_any_bit_flip_fails(void **state)
{
	uint8_t buf[BFD_PKT_MAX_LEN];
	struct bfd_ctrl c;
	int n;

	(void)state;
	for (uint8_t type = BFD_AUTH_KEYED_SHA1; type <= BFD_AUTH_METICULOUS_SHA1; type++) {
		n = signed_packet(buf, type, 1000);
		assert_int_equal(bfd_pkt_decode(buf, (size_t)n, &c), BFD_RX_OK);
		assert_true(bfd_auth_sha1_digest_ok(buf, (size_t)n, &c, key, sizeof(key) - 1));
		assert_false(bfd_auth_sha1_digest_ok(buf, (size_t)n, &c, key, sizeof(key) - 2));
		assert_false(bfd_auth_sha1_digest_ok(buf, (size_t)n, &c, (const uint8_t *)"x", 1));
		for (int byte = 0; byte < n; byte++)
			for (int bit = 0; bit < 8; bit++) {
				uint8_t t[BFD_PKT_MAX_LEN];
				struct bfd_ctrl tc;

				memcpy(t, buf, (size_t)n);
				t[byte] ^= (uint8_t)(1u << bit);
				/* A flip may make the packet undecodable; if it
				 * still decodes, the digest must catch it. */
				if (bfd_pkt_decode(t, (size_t)n, &tc) != BFD_RX_OK)
					continue;
				if (bfd_auth_sha1_digest_ok(t, (size_t)n, &tc, key, sizeof(key) - 1))
					fail_msg("flip of bit %d of byte %d went unnoticed", bit, byte);
			}
	}
}

static void
test_sign_refuses_other_packets(void **state)
{
	struct bfd_ctrl c = {.state = BFD_STATE_UP, .detect_mult = 3, .my_disc = 1};
	uint8_t buf[BFD_PKT_MAX_LEN], long_key[BFD_AUTH_KEY_MAX + 1] = {0};
	int n;

	(void)state;
	n = bfd_pkt_encode(&c, buf, sizeof(buf)); /* no auth section */
	assert_int_equal(bfd_auth_sha1_sign(buf, (size_t)n, key, 4), -1);
	c.flags = BFD_FLAG_AUTH;
	c.auth = (struct bfd_auth){.type = BFD_AUTH_KEYED_MD5, .len = 24};
	n = bfd_pkt_encode(&c, buf, sizeof(buf));
	assert_int_equal(bfd_auth_sha1_sign(buf, (size_t)n, key, 4), -1);
	n = signed_packet(buf, BFD_AUTH_KEYED_SHA1, 1);
	assert_int_equal(bfd_auth_sha1_sign(buf, (size_t)n, long_key, sizeof(long_key)), -1);
	assert_int_equal(bfd_auth_sha1_sign(buf, (size_t)n - 1, key, 4), -1); /* truncated */
}

static void
test_sequence_window(void **state)
{
	(void)state;
	/* Unknown: anything goes (the first packet sets the sequence). */
	assert_true(bfd_auth_seq_ok(false, 0, 12345, true, 3));
	/* Keyed: rcv .. rcv + 3 * mult. */
	assert_false(bfd_auth_seq_ok(true, 100, 99, false, 3));
	for (uint32_t s = 100; s <= 109; s++)
		assert_true(bfd_auth_seq_ok(true, 100, s, false, 3));
	assert_false(bfd_auth_seq_ok(true, 100, 110, false, 3));
	/* Meticulous: strictly increasing. */
	assert_false(bfd_auth_seq_ok(true, 100, 100, true, 3));
	for (uint32_t s = 101; s <= 109; s++)
		assert_true(bfd_auth_seq_ok(true, 100, s, true, 3));
	assert_false(bfd_auth_seq_ok(true, 100, 110, true, 3));
	/* Modulo 2^32. */
	assert_true(bfd_auth_seq_ok(true, 0xfffffffeu, 7, false, 3));
	assert_false(bfd_auth_seq_ok(true, 0xfffffffeu, 8, false, 3));
	assert_true(bfd_auth_seq_ok(true, 0xffffffffu, 0, true, 1));
	assert_false(bfd_auth_seq_ok(true, 0xffffffffu, 0xffffffffu, true, 1));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sha1_vectors),
	    cmocka_unit_test(test_signed_packet_verifies_and_any_bit_flip_fails),
	    cmocka_unit_test(test_sign_refuses_other_packets),
	    cmocka_unit_test(test_sequence_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
