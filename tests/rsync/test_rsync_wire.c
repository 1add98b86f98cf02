/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/* RSync's wire codec (rsync_wire.h): layout, CRC32C, HMAC-SHA256, and a
 * counted reason for every frame it refuses. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rsync_auth_priv.h"
#include "rsync_wire.h"

static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x0b};
static const uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x0a};

/* A bitwise CRC32C, independent of the codec's (DPDK's) one. */
static uint32_t
ref_crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
	}
	return ~c;
}

static struct rsync_msg
ctl(uint8_t type, uint64_t txid)
{
	struct rsync_msg m = {0};

	m.h.type = type;
	m.h.chain = 7;
	m.h.epoch = 3;
	m.h.txid = txid;
	m.h.frag_count = 1;
	return m;
}

static struct rsync_msg
meta_msg(uint16_t count, uint32_t entries, uint32_t state_frags, uint64_t state_bytes)
{
	struct rsync_msg m = ctl(RSYNC_PREPARE, 9);

	m.h.frag_count = count;
	m.h.region = RSYNC_REGION_META;
	m.u.meta = (struct rsync_meta){.prev_txid = 8, .cut_id = state_frags ? 4 : 0,
				       .cut_ts = state_frags ? 1000 : 0, .nd_ts = 0,
				       .txts_entries = entries, .state_frags = state_frags,
				       .state_bytes = state_bytes};
	return m;
}

static void
test_crc32c_matches_the_standard_check_value(void **state)
{
	(void)state;
	uint8_t buf[64 + 9];

	assert_int_equal(rsync_crc32c("123456789", 9), 0xE3069283u);
	/* at every alignment */
	for (int a = 0; a < 8; a++) {
		memcpy(buf + a, "123456789", 9);
		assert_int_equal(rsync_crc32c(buf + a, 9), 0xE3069283u);
	}
	for (size_t n = 0; n < 64; n++) {
		for (size_t i = 0; i < n; i++)
			buf[1 + i] = (uint8_t)(i * 37 + n);
		assert_int_equal(rsync_crc32c(buf + 1, n), ref_crc32c(buf + 1, n));
	}
}

static void
test_hmac_matches_rfc4231_and_rekeys_per_message(void **state)
{
	(void)state;
	/* RFC 4231 test case 2 */
	static const uint8_t want[32] = {
		0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e, 0x6a, 0x04, 0x24,
		0x26, 0x08, 0x95, 0x75, 0xc7, 0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27,
		0x39, 0x83, 0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43};
	const char *data = "what do ya want for nothing?";
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"Jefe", 4, 1);
	uint8_t mac[32];

	assert_non_null(a);
	for (int rep = 0; rep < 3; rep++) { /* the context is reused */
		assert_int_equal(rsync_auth_sign(a, (const uint8_t *)data, 10,
						 (const uint8_t *)data + 10, strlen(data) - 10, mac),
				 0);
		assert_memory_equal(mac, want, 32);
	}
	assert_true(rsync_auth_check(a, (const uint8_t *)data, strlen(data), NULL, 0, want));
	mac[31] ^= 1;
	assert_false(rsync_auth_check(a, (const uint8_t *)data, strlen(data), NULL, 0, mac));
	assert_null(rsync_auth_new((const uint8_t *)"", 0, 1));
	assert_null(rsync_auth_new((const uint8_t *)"k", RSYNC_KEY_MAX + 1, 1));
	rsync_auth_free(a);
}

static void
test_golden_vote_frame(void **state)
{
	(void)state;
	struct rsync_msg m = ctl(RSYNC_VOTE, 0x0102030405060708ull), d;
	uint8_t buf[RSYNC_MAX_FRAME], want[54] = {
		0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a, 0x88, 0xb6, /* Ethernet */
		1, RSYNC_VOTE, 0, 0, 0, 7, 0, 0,				/* ver type flags key chain len */
		0, 0, 0, 3, 0, 0, 0, 0,						/* epoch, crc (below) */
		1, 2, 3, 4, 5, 6, 7, 8,						/* txid */
		0, 0, 0, 1, 0, 0, 0, 0,						/* seq count region reserved */
		0, 0, 0, 0, 0, 0, 0, 0};					/* offset */
	uint32_t crc = ref_crc32c(want + 14, 40);

	want[26] = (uint8_t)(crc >> 24);
	want[27] = (uint8_t)(crc >> 16);
	want[28] = (uint8_t)(crc >> 8);
	want[29] = (uint8_t)crc;
	assert_int_equal(rsync_encode(buf, sizeof(buf), dst, src, &m, NULL, 0, NULL), 54);
	assert_memory_equal(buf, want, 54);
	assert_int_equal(rsync_decode(want, 54, NULL, &d), RSYNC_RX_OK);
	assert_int_equal(d.h.txid, 0x0102030405060708ull);
	assert_memory_equal(d.src_mac, src, 6);
	/* Ethernet padding after the message changes nothing */
	memset(buf + 54, 0xee, 6);
	assert_int_equal(rsync_decode(buf, 60, NULL, &d), RSYNC_RX_OK);
}

/* Encode, decode, and compare what came back. */
static struct rsync_msg
round_trip(const struct rsync_msg *m, const void *payload, size_t len, struct rsync_auth *a)
{
	uint8_t buf[RSYNC_MAX_FRAME];
	struct rsync_msg d;
	int n = rsync_encode(buf, sizeof(buf), dst, src, m, payload, len, a);

	assert_true(n > 0);
	assert_int_equal(rsync_decode(buf, (size_t)n, a, &d), RSYNC_RX_OK);
	assert_int_equal(d.h.type, m->h.type);
	assert_int_equal(d.h.chain, m->h.chain);
	assert_int_equal(d.h.epoch, m->h.epoch);
	assert_int_equal(d.h.txid, m->h.txid);
	assert_int_equal(d.h.frag_seq, m->h.frag_seq);
	assert_int_equal(d.h.frag_count, m->h.frag_count);
	assert_int_equal(d.h.region, m->h.region);
	assert_int_equal(d.h.offset, m->h.offset);
	if (payload != NULL) {
		assert_int_equal(d.h.len, len);
		assert_memory_equal(d.payload, payload, len);
	}
	return d;
}

static void
test_every_type_round_trips(void **state)
{
	(void)state;
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"0123456789abcdef", 16, 5);
	struct rsync_txts_entry e[2] = {{0xC6120001, 0xC6130002, 1000, 80, 6, 77},
					{0xC6120003, 0xC6130004, 53, 5353, 17, 78}};
	uint8_t txts[48], state_bytes[1000];
	struct rsync_msg m, d;

	for (int with_key = 0; with_key < 2; with_key++) {
		struct rsync_auth *k = with_key ? a : NULL;

		m = meta_msg(3, 2, 1, sizeof(state_bytes));
		d = round_trip(&m, NULL, 0, k);
		assert_memory_equal(&d.u.meta, &m.u.meta, sizeof(m.u.meta));
		rsync_txts_encode(e, 2, txts);
		m = meta_msg(3, 2, 1, sizeof(state_bytes));
		m.h.frag_seq = 1;
		m.h.region = RSYNC_REGION_TXTS;
		d = round_trip(&m, txts, sizeof(txts), k);
		for (int i = 0; i < 2; i++) {
			struct rsync_txts_entry got;

			rsync_txts_decode(d.payload, (size_t)i, &got);
			assert_int_equal(got.src_ip, e[i].src_ip);
			assert_int_equal(got.dst_ip, e[i].dst_ip);
			assert_int_equal(got.sport, e[i].sport);
			assert_int_equal(got.dport, e[i].dport);
			assert_int_equal(got.proto, e[i].proto);
			assert_int_equal(got.ts, e[i].ts);
		}
		for (size_t i = 0; i < sizeof(state_bytes); i++)
			state_bytes[i] = (uint8_t)(i * 7);
		m.h.type = RSYNC_CHECKPOINT;
		m.h.frag_seq = 2;
		m.h.region = 3;
		m.h.offset = 4096;
		round_trip(&m, state_bytes, sizeof(state_bytes), k);
		round_trip(&(struct rsync_msg){.h = ctl(RSYNC_VOTE, 9).h}, NULL, 0, k);
		round_trip(&(struct rsync_msg){.h = ctl(RSYNC_COMMIT, 9).h}, NULL, 0, k);
		round_trip(&(struct rsync_msg){.h = ctl(RSYNC_ACK, 9).h}, NULL, 0, k);
		m = ctl(RSYNC_ABORT, 9);
		m.u.abort.through_txid = 12;
		assert_int_equal(round_trip(&m, NULL, 0, k).u.abort.through_txid, 12);
		m = ctl(RSYNC_LOG_TRIM, 0);
		m.u.trim.watermark = 123456;
		assert_int_equal(round_trip(&m, NULL, 0, k).u.trim.watermark, 123456);
		m = ctl(RSYNC_REPLAY_START, 0);
		m.h.epoch = 4;
		m.u.replay_start = (struct rsync_replay_start){.after_ts = 10, .newest_ts = 20};
		d = round_trip(&m, NULL, 0, k);
		assert_int_equal(d.u.replay_start.after_ts, 10);
		assert_int_equal(d.u.replay_start.newest_ts, 20);
		m = ctl(RSYNC_REPLAY_END, 0);
		m.u.replay_end = (struct rsync_replay_end){.last_ts = 20, .count = 11};
		d = round_trip(&m, NULL, 0, k);
		assert_int_equal(d.u.replay_end.count, 11);
		m = ctl(RSYNC_HEARTBEAT, 0);
		m.u.heartbeat = (struct rsync_heartbeat){.txid = 5, .cut_ts = 6};
		assert_int_equal(round_trip(&m, NULL, 0, k).u.heartbeat.cut_ts, 6);
	}
	rsync_auth_free(a);
}

static int
encode(const struct rsync_msg *m, const void *pl, size_t len, struct rsync_auth *a, uint8_t *buf)
{
	return rsync_encode(buf, RSYNC_MAX_FRAME, dst, src, m, pl, len, a);
}

static void
test_truncation_at_every_length_is_refused(void **state)
{
	(void)state;
	uint8_t buf[RSYNC_MAX_FRAME], data[300];
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"key", 3, 1);
	struct rsync_msg m = meta_msg(2, 0, 1, sizeof(data)), d;
	int n;

	memset(data, 1, sizeof(data));
	m.h.type = RSYNC_CHECKPOINT;
	m.h.frag_seq = 1;
	m.h.region = 0;
	n = encode(&m, data, sizeof(data), a, buf);
	assert_true(n > 0);
	for (int len = 0; len < n; len++)
		assert_int_not_equal(rsync_decode(buf, (size_t)len, a, &d), RSYNC_RX_OK);
	assert_int_equal(rsync_decode(buf, (size_t)n, a, &d), RSYNC_RX_OK);
	rsync_auth_free(a);
}

static void
test_flipped_bit_anywhere_is_refused(void **state)
{
	(void)state;
	uint8_t buf[RSYNC_MAX_FRAME], data[64];
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"key", 3, 1);
	struct rsync_msg m = meta_msg(2, 0, 1, sizeof(data)), d;

	memset(data, 0x5a, sizeof(data));
	m.h.type = RSYNC_CHECKPOINT;
	m.h.frag_seq = 1;
	m.h.region = 2;
	for (int with_key = 0; with_key < 2; with_key++) {
		struct rsync_auth *k = with_key ? a : NULL;
		int n = encode(&m, data, sizeof(data), k, buf);

		assert_true(n > 0);
		/* everything after the MAC addresses is covered (the MACs are
		 * the link's business) */
		for (int bit = 12 * 8; bit < n * 8; bit++) {
			buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			if (rsync_decode(buf, (size_t)n, k, &d) == RSYNC_RX_OK)
				fail_msg("bit %d flipped and accepted (key %d)", bit, with_key);
			buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
	}
	rsync_auth_free(a);
}

static void
test_forged_replay_start_is_refused(void **state)
{
	(void)state;
	struct rsync_auth *ours = rsync_auth_new((const uint8_t *)"the chain's key", 15, 1);
	struct rsync_auth *theirs = rsync_auth_new((const uint8_t *)"a guess", 7, 1);
	struct rsync_msg m = ctl(RSYNC_REPLAY_START, 0), d;
	uint8_t buf[RSYNC_MAX_FRAME];
	int n;

	m.h.epoch = 99;
	m.u.replay_start = (struct rsync_replay_start){.after_ts = 0, .newest_ts = 1};
	n = encode(&m, NULL, 0, NULL, buf); /* no HMAC at all */
	assert_int_equal(rsync_decode(buf, (size_t)n, ours, &d), RSYNC_RX_AUTH_MISSING);
	n = encode(&m, NULL, 0, theirs, buf); /* the wrong key */
	assert_int_equal(rsync_decode(buf, (size_t)n, ours, &d), RSYNC_RX_AUTH_FAILED);
	/* the right key, then a replayed copy with a changed epoch */
	n = encode(&m, NULL, 0, ours, buf);
	assert_int_equal(rsync_decode(buf, (size_t)n, ours, &d), RSYNC_RX_OK);
	buf[14 + 11] ^= 1; /* epoch low byte */
	assert_int_not_equal(rsync_decode(buf, (size_t)n, ours, &d), RSYNC_RX_OK);
	rsync_auth_free(ours);
	rsync_auth_free(theirs);
}

/* A frame edited after encoding, its CRC fixed up so that the field
 * check, not the CRC, is what refuses it. */
typedef void edit_fn(uint8_t *hp);

static enum rsync_rx_reason
decode_edited(const struct rsync_msg *m, const void *pl, size_t len, edit_fn *edit, size_t cut)
{
	uint8_t buf[RSYNC_MAX_FRAME];
	struct rsync_msg d;
	int n = encode(m, pl, len, NULL, buf);
	uint32_t crc;

	assert_true(n > 0);
	if (edit != NULL) {
		edit(buf + 14);
		memset(buf + 14 + 12, 0, 4);
		crc = ref_crc32c(buf + 14, (size_t)n - 14);
		buf[26] = (uint8_t)(crc >> 24);
		buf[27] = (uint8_t)(crc >> 16);
		buf[28] = (uint8_t)(crc >> 8);
		buf[29] = (uint8_t)crc;
	}
	return rsync_decode(buf, (size_t)n - cut, NULL, &d);
}

static void e_ethertype(uint8_t *hp) { hp[-1] ^= 1; }
static void e_version(uint8_t *hp) { hp[0] = 2; }
static void e_type0(uint8_t *hp) { hp[1] = 0; }
static void e_type_max(uint8_t *hp) { hp[1] = RSYNC_TYPE_MAX; }
static void e_flag(uint8_t *hp) { hp[2] |= 0x80; }
static void e_keyid(uint8_t *hp) { hp[3] = 1; }
static void e_reserved(uint8_t *hp) { hp[31] = 1; }
static void e_len(uint8_t *hp) { hp[7] += 1; }
static void e_count0(uint8_t *hp) { hp[27] = 0; }
static void e_seq_count(uint8_t *hp) { hp[25] = 5; }
static void e_region(uint8_t *hp) { hp[29] = 1; }
static void e_txid0(uint8_t *hp) { memset(hp + 16, 0, 8); }
static void e_hmac_flag(uint8_t *hp) { hp[2] |= RSYNC_F_HMAC; }

struct reject_row {
	const char *name;
	uint8_t type;
	edit_fn *edit;
	size_t cut;
	enum rsync_rx_reason want;
};

static void
test_every_rejection_has_its_reason(void **state)
{
	(void)state;
	static const struct reject_row rows[] = {
		{"ethertype", RSYNC_VOTE, e_ethertype, 0, RSYNC_RX_NOT_RSYNC},
		{"version", RSYNC_VOTE, e_version, 0, RSYNC_RX_BAD_VERSION},
		{"type 0", RSYNC_VOTE, e_type0, 0, RSYNC_RX_BAD_TYPE},
		{"type max", RSYNC_VOTE, e_type_max, 0, RSYNC_RX_BAD_TYPE},
		{"unknown flag", RSYNC_VOTE, e_flag, 0, RSYNC_RX_BAD_FLAGS},
		{"key id without hmac", RSYNC_VOTE, e_keyid, 0, RSYNC_RX_BAD_FLAGS},
		{"reserved", RSYNC_VOTE, e_reserved, 0, RSYNC_RX_BAD_RESERVED},
		{"length past the frame", RSYNC_ABORT, e_len, 0, RSYNC_RX_BAD_LENGTH},
		{"count 0", RSYNC_VOTE, e_count0, 0, RSYNC_RX_BAD_FRAG},
		{"control type fragmented", RSYNC_VOTE, e_seq_count, 0, RSYNC_RX_BAD_FRAG},
		{"control type with a region", RSYNC_COMMIT, e_region, 0, RSYNC_RX_BAD_REGION},
		{"txid 0", RSYNC_ACK, e_txid0, 0, RSYNC_RX_BAD_FIELD},
		{"hmac without a key", RSYNC_ACK, e_hmac_flag, 0, RSYNC_RX_AUTH_UNEXPECTED},
		{"short header", RSYNC_VOTE, NULL, 1, RSYNC_RX_SHORT},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct rsync_msg m = ctl(rows[i].type, 9);
		enum rsync_rx_reason got;

		m.u.abort.through_txid = 9;
		got = decode_edited(&m, NULL, 0, rows[i].edit, rows[i].cut);
		if (got != rows[i].want)
			fail_msg("%s: %s, want %s", rows[i].name, rsync_rx_reason_str(got),
				 rsync_rx_reason_str(rows[i].want));
	}
	/* a bad CRC */
	{
		uint8_t buf[RSYNC_MAX_FRAME];
		struct rsync_msg m = ctl(RSYNC_VOTE, 9), d;
		int n = encode(&m, NULL, 0, NULL, buf);

		buf[14 + 12] ^= 1;
		assert_int_equal(rsync_decode(buf, (size_t)n, NULL, &d), RSYNC_RX_BAD_CRC);
	}
	/* a key configured, another key id */
	{
		uint8_t buf[RSYNC_MAX_FRAME];
		struct rsync_auth *a1 = rsync_auth_new((const uint8_t *)"k", 1, 1);
		struct rsync_auth *a2 = rsync_auth_new((const uint8_t *)"k", 1, 2);
		struct rsync_msg m = ctl(RSYNC_VOTE, 9), d;
		int n = encode(&m, NULL, 0, a1, buf);

		assert_int_equal(rsync_decode(buf, (size_t)n, a2, &d), RSYNC_RX_AUTH_KEY);
		rsync_auth_free(a1);
		rsync_auth_free(a2);
	}
	for (int r = 0; r < RSYNC_RX_REASON_MAX; r++)
		assert_string_not_equal(rsync_rx_reason_str((enum rsync_rx_reason)r), "unknown");
}

static void
test_encoder_refuses_what_a_peer_would_refuse(void **state)
{
	(void)state;
	uint8_t buf[RSYNC_MAX_FRAME], big[RSYNC_MAX_PAYLOAD + 1] = {0}, txts[25] = {0};
	struct rsync_msg m;

	m = ctl(RSYNC_VOTE, 0); /* txid 0 */
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m = ctl(RSYNC_LOG_TRIM, 0); /* watermark 0 */
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m = meta_msg(2, 0, 1, 100);
	m.h.type = RSYNC_CHECKPOINT;
	m.h.frag_seq = 1;
	assert_int_equal(encode(&m, big, sizeof(big), NULL, buf), -1); /* too long */
	m.h.frag_seq = 0; /* a state piece cannot be fragment 0 */
	assert_int_equal(encode(&m, big, 10, NULL, buf), -1);
	m.h.frag_seq = 1;
	m.h.region = RSYNC_REGION_MAX;
	assert_int_equal(encode(&m, big, 10, NULL, buf), -1);
	m = meta_msg(2, 1, 0, 0);
	m.h.frag_seq = 1;
	m.h.region = RSYNC_REGION_TXTS;
	assert_int_equal(encode(&m, txts, sizeof(txts), NULL, buf), -1); /* not whole entries */
	assert_int_equal(encode(&m, txts, 24, NULL, buf), -1);		  /* ts 0 */
	m = meta_msg(2, 0, 2, 100); /* more state fragments than the count leaves */
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m = meta_msg(2, 0, 1, 100);
	m.u.meta.prev_txid = m.h.txid; /* the chain goes backwards */
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m = ctl(RSYNC_ABORT, 9);
	m.u.abort.through_txid = 8;
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m = ctl(RSYNC_REPLAY_START, 0);
	m.u.replay_start = (struct rsync_replay_start){.after_ts = 5, .newest_ts = 4};
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	assert_int_equal(rsync_encode(buf, 40, dst, src, &(struct rsync_msg){.h = ctl(RSYNC_VOTE, 1).h},
				      NULL, 0, NULL),
			 -1); /* buffer too small */
}

static void
test_decode_at_any_alignment(void **state)
{
	(void)state;
	uint8_t buf[RSYNC_MAX_FRAME + 8], data[100];
	struct rsync_msg m = meta_msg(2, 0, 1, sizeof(data)), d;
	int n;

	memset(data, 3, sizeof(data));
	m.h.type = RSYNC_CHECKPOINT;
	m.h.frag_seq = 1;
	m.h.region = 1;
	for (int a = 0; a < 8; a++) {
		n = encode(&m, data, sizeof(data), NULL, buf + a);
		assert_true(n > 0);
		assert_int_equal(rsync_decode(buf + a, (size_t)n, NULL, &d), RSYNC_RX_OK);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c_matches_the_standard_check_value),
		cmocka_unit_test(test_hmac_matches_rfc4231_and_rekeys_per_message),
		cmocka_unit_test(test_golden_vote_frame),
		cmocka_unit_test(test_every_type_round_trips),
		cmocka_unit_test(test_truncation_at_every_length_is_refused),
		cmocka_unit_test(test_flipped_bit_anywhere_is_refused),
		cmocka_unit_test(test_forged_replay_start_is_refused),
		cmocka_unit_test(test_every_rejection_has_its_reason),
		cmocka_unit_test(test_encoder_refuses_what_a_peer_would_refuse),
		cmocka_unit_test(test_decode_at_any_alignment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
