/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * RSync's wire codec (rsync_wire.h): the layout byte for byte, CRC32C,
 * HMAC-SHA256, round trips of every type, and a counted reason for every
 * frame it refuses.  No EAL: rte_hash_crc works without one.
 *
 * Expected bytes come from outside the codec: golden frames written out in
 * hex (computed once with Python's struct, hmac and a bitwise CRC32C), a
 * bitwise CRC32C here, RFC 4231's HMAC vectors and OpenSSL's one-shot HMAC().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "rsync_auth_priv.h"
#include "rsync_wire.h"

static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x0b};
static const uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x0a};

/* Frame offsets: H() in the RSync header, P() in the payload. */
#define H(x)  (RSYNC_ETH_LEN + (x))
#define P(x)  (RSYNC_ETH_LEN + RSYNC_HDR_LEN + (x))
#define H_CRC H(12)

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

static void
put_be(uint8_t *p, unsigned int width, uint64_t v)
{
	for (unsigned int i = 0; i < width; i++)
		p[i] = (uint8_t)(v >> (8 * (width - 1 - i)));
}

static size_t
unhex(const char *s, uint8_t *out)
{
	size_t n = 0;

	for (; s[0] != '\0' && s[1] != '\0'; s += 2) {
		unsigned int b;

		assert_int_equal(sscanf(s, "%2x", &b), 1);
		out[n++] = (uint8_t)b;
	}
	return n;
}

/* Recompute the CRC of an edited frame (header with the CRC field zero,
 * then as much of the claimed payload as the frame holds), so that a field
 * check, not the CRC, is what refuses it. */
static void
fix_crc(uint8_t *frame, size_t n)
{
	size_t plen = (size_t)frame[H(6)] << 8 | frame[H(7)];

	if (n < P(0))
		return;
	if (P(plen) > n)
		plen = n - P(0);
	memset(frame + H_CRC, 0, 4);
	put_be(frame + H_CRC, 4, ref_crc32c(frame + H(0), RSYNC_HDR_LEN + plen));
}

/* The runs the test messages carry: the sender's and the receiver's. */
#define RUN_TX 0x1111111111111111ull
#define RUN_RX 0x2222222222222222ull

/* The role that sends `type` (HEARTBEAT: the primary). */
static uint8_t
role_of(uint8_t type)
{
	switch (type) {
	case RSYNC_VOTE:
	case RSYNC_ACK:
	case RSYNC_REPLAY_ACK:
		return RSYNC_ROLE_STANDBY;
	case RSYNC_REPLAY_START:
	case RSYNC_REPLAY_END:
		return RSYNC_ROLE_PREDECESSOR;
	default:
		return RSYNC_ROLE_PRIMARY;
	}
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
	m.h.role = role_of(type);
	m.h.sender_run = RUN_TX;
	m.h.receiver_run = RUN_RX;
	return m;
}

static struct rsync_msg
meta_msg(uint16_t count, uint32_t entries, uint32_t state_frags, uint64_t state_bytes)
{
	struct rsync_msg m = ctl(RSYNC_PREPARE, 9);

	m.h.frag_count = count;
	m.h.region = RSYNC_REGION_META;
	m.u.meta = (struct rsync_meta){.prev_txid = 8,
				       .cut_id = state_frags ? 4 : 0,
				       .cut_ts = state_frags ? 1000 : 0,
				       .nd_cut = 0,
				       .txts_entries = entries,
				       .state_frags = state_frags,
				       .state_bytes = state_bytes,
				       .pkts = entries + 3,
				       .clock = 0x0123456789abcdefull};
	return m;
}

/* A CHECKPOINT payload of `total` bytes: one state record of region
 * `region` at `offset` holding total - 12 bytes of `fill`.  Returns total. */
static size_t
one_rec(uint8_t *pl, uint16_t region, uint64_t offset, uint8_t fill, size_t total)
{
	rsync_state_rec_put(pl, region, offset, (uint16_t)(total - RSYNC_REC_HDR_LEN));
	memset(pl + RSYNC_REC_HDR_LEN, fill, total - RSYNC_REC_HDR_LEN);
	return total;
}

static int
encode(const struct rsync_msg *m, const void *pl, size_t len, struct rsync_auth *a, uint8_t *buf)
{
	return rsync_encode(buf, RSYNC_MAX_FRAME, dst, src, m, pl, len, a);
}

/* ---------------------------------------------------------------- CRC32C */

static void
test_crc32c_matches_standard_check_value(void **state)
{
	(void)state;
	uint8_t buf[8 + 9];

	assert_int_equal(rsync_crc32c("123456789", 9), 0xE3069283u);
	for (int a = 0; a < 8; a++) { /* at every alignment */
		memcpy(buf + a, "123456789", 9);
		assert_int_equal(rsync_crc32c(buf + a, 9), 0xE3069283u);
	}
	assert_int_equal(rsync_crc32c(buf, 0), 0);
}

static void
test_crc32c_agrees_with_bitwise_reference_at_every_length_and_alignment(void **state)
{
	(void)state;
	uint8_t buf[8 + 100];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + 11);
	for (int a = 0; a < 8; a++)
		for (size_t n = 0; n <= 100; n++)
			assert_int_equal(rsync_crc32c(buf + a, n), ref_crc32c(buf + a, n));
}

/* ---------------------------------------------------------------- HMAC */

static void
test_hmac_rfc4231_vector(void **state)
{
	(void)state;
	/* RFC 4231 test cases 1 and 2, HMAC-SHA-256. */
	uint8_t key1[20], want1[32], want2[32], mac[32];
	const char *d1 = "Hi There", *d2 = "what do ya want for nothing?";
	struct rsync_auth *a1, *a2;

	memset(key1, 0x0b, sizeof(key1));
	unhex("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", want1);
	unhex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", want2);
	a1 = rsync_auth_new(key1, sizeof(key1), 1);
	a2 = rsync_auth_new((const uint8_t *)"Jefe", 4, 2);
	assert_non_null(a1);
	assert_non_null(a2);
	/* Each context is keyed once and re-initialised per message with
	 * EVP_MAC_init(ctx, NULL, 0, NULL): alternating them and repeating
	 * shows each keeps its own key. */
	for (int rep = 0; rep < 3; rep++) {
		assert_int_equal(rsync_auth_sign(a1, (const uint8_t *)d1, strlen(d1), NULL, 0, mac),
				 0);
		assert_memory_equal(mac, want1, 32);
		/* two pieces hash as their concatenation */
		assert_int_equal(rsync_auth_sign(a2, (const uint8_t *)d2, 10,
						 (const uint8_t *)d2 + 10, strlen(d2) - 10, mac),
				 0);
		assert_memory_equal(mac, want2, 32);
	}
	rsync_auth_free(a1);
	rsync_auth_free(a2);
}

/* OpenSSL's allocations, counted through CRYPTO_set_mem_functions() (set
 * first thing in main(), before OpenSSL allocates anything). */
static long ossl_allocs;

static void *
count_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	ossl_allocs++;
	return malloc(n);
}

static void *
count_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	ossl_allocs++;
	return realloc(p, n);
}

static void
count_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	free(p);
}

static void
test_hmac_context_is_fetched_and_keyed_once(void **state)
{
	(void)state;
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"0123456789abcdef", 16, 1);
	uint8_t data[100] = {0}, mac[32];
	long before;

	/* Keyed once and re-initialised with EVP_MAC_init(ctx, NULL, 0, NULL),
	 * OpenSSL 3.0 still allocates 2 blocks per message (HMAC's init and
	 * final each duplicate a SHA-256 context).  Re-keying per message
	 * costs 5, a fresh context 12, EVP_Q_mac() 13: this catches a fetch
	 * or a key schedule on the per-message path, not zero allocations. */
	assert_int_equal(rsync_auth_sign(a, data, 40, data + 40, 60, mac), 0);
	before = ossl_allocs;
	for (int i = 0; i < 100; i++)
		assert_int_equal(rsync_auth_sign(a, data, 40, data + 40, 60, mac), 0);
	assert_in_range(ossl_allocs - before, 0, 2 * 100);
	rsync_auth_free(a);
}

static void
test_hmac_check_refuses_any_changed_bit(void **state)
{
	(void)state;
	uint8_t want[32];
	const char *d = "what do ya want for nothing?";
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"Jefe", 4, 1);

	unhex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", want);
	assert_true(rsync_auth_check(a, (const uint8_t *)d, strlen(d), NULL, 0, want));
	for (int bit = 0; bit < 256; bit++) {
		want[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_false(rsync_auth_check(a, (const uint8_t *)d, strlen(d), NULL, 0, want));
		want[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	rsync_auth_free(a);
}

static void
test_auth_new_refuses_empty_and_overlong_keys(void **state)
{
	(void)state;
	uint8_t key[RSYNC_KEY_MAX + 1] = {0};
	struct rsync_auth *a;

	assert_null(rsync_auth_new(key, 0, 1));
	assert_null(rsync_auth_new(NULL, 16, 1));
	assert_null(rsync_auth_new(key, RSYNC_KEY_MAX + 1, 1));
	a = rsync_auth_new(key, RSYNC_KEY_MAX, 1);
	assert_non_null(a);
	assert_int_equal(rsync_auth_key_id(a), 1);
	rsync_auth_free(a);
	rsync_auth_free(NULL);
}

/* ---------------------------------------------------------------- layout */

static void
test_golden_vote_frame(void **state)
{
	(void)state;
	struct rsync_msg m = ctl(RSYNC_VOTE, 0x0102030405060708ull), d;
	uint8_t buf[RSYNC_MAX_FRAME], want[80];
	/* Ethernet | ver type flags key | chain len | epoch | CRC32C | txid |
	 * seq count | region role reserved | offset | sender run | receiver run */
	/* clang-format off */
	size_t n = unhex("02000000000b" "02000000000a" "88b6"
			 "05020000" "00070000" "00000003" "0fb2ba25" "0102030405060708"
			 "00000001" "00000300" "0000000000000000"
			 "1111111111111111" "2222222222222222",
			 want);
	/* clang-format on */

	assert_int_equal(n, 70);
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), 70);
	assert_memory_equal(buf, want, 70);
	assert_int_equal(rsync_decode(want, n, NULL, &d), RSYNC_RX_OK);
	assert_int_equal(d.h.type, RSYNC_VOTE);
	assert_int_equal(d.h.chain, 7);
	assert_int_equal(d.h.epoch, 3);
	assert_int_equal(d.h.crc, 0x0fb2ba25u);
	assert_int_equal(d.h.role, RSYNC_ROLE_STANDBY);
	assert_int_equal(d.h.sender_run, RUN_TX);
	assert_int_equal(d.h.receiver_run, RUN_RX);
	assert_int_equal(d.h.txid, 0x0102030405060708ull);
	assert_int_equal(d.h.frag_count, 1);
	assert_memory_equal(d.dst_mac, dst, 6);
	assert_memory_equal(d.src_mac, src, 6);
}

static void
test_golden_abort_frame_with_hmac(void **state)
{
	(void)state;
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"0123456789abcdef", 16, 5);
	struct rsync_msg m = ctl(RSYNC_ABORT, 9), d;
	uint8_t buf[RSYNC_MAX_FRAME], want[128];
	/* flags HMAC, key id 5, payload length 8: through txid 12, then the
	 * HMAC-SHA256 of header (CRC filled in) and payload */
	/* clang-format off */
	size_t n = unhex("02000000000b" "02000000000a" "88b6"
			 "05050105" "00070008" "00000003" "52b31033" "0000000000000009"
			 "00000001" "00000200" "0000000000000000"
			 "1111111111111111" "2222222222222222"
			 "000000000000000c"
			 "ddffb210c26612bf944417cb29377cc4b997c40c5c1d2214b4a38dcd64d1d042",
			 want);
	/* clang-format on */

	assert_int_equal(n, 110);
	m.u.abort.through_txid = 12;
	assert_int_equal(encode(&m, NULL, 0, a, buf), 110);
	assert_memory_equal(buf, want, 110);
	assert_int_equal(rsync_decode(want, n, a, &d), RSYNC_RX_OK);
	assert_int_equal(d.h.flags, RSYNC_F_HMAC);
	assert_int_equal(d.h.key_id, 5);
	assert_int_equal(d.u.abort.through_txid, 12);
	rsync_auth_free(a);
}

static void
test_hmac_covers_header_with_crc_and_payload(void **state)
{
	(void)state;
	static const uint8_t key[] = "a key of the lab";
	struct rsync_auth *a = rsync_auth_new(key, 16, 3);
	struct rsync_msg m = meta_msg(2, 0, 1, 300);
	uint8_t buf[RSYNC_MAX_FRAME], data[300], want[32];
	unsigned int wlen = 0;
	uint32_t crc;
	int n;

	one_rec(data, 2, 0, 0x77, sizeof(data));
	m.h.type = RSYNC_CHECKPOINT;
	m.h.frag_seq = 1;
	m.h.region = 0;
	n = encode(&m, data, sizeof(data), a, buf);
	assert_int_equal(n, P(300) + RSYNC_HMAC_LEN);
	/* OpenSSL's one-shot HMAC() over header + payload as they are on the
	 * wire, CRC included */
	assert_non_null(HMAC(EVP_sha256(), key, 16, buf + H(0), RSYNC_HDR_LEN + 300, want, &wlen));
	assert_int_equal(wlen, 32);
	assert_memory_equal(buf + P(300), want, 32);
	/* and the CRC under it is the plain one: header with the CRC field
	 * zero (flags and key id included), then the payload, not the HMAC */
	crc = (uint32_t)buf[H_CRC] << 24 | (uint32_t)buf[H_CRC + 1] << 16 |
	      (uint32_t)buf[H_CRC + 2] << 8 | buf[H_CRC + 3];
	memset(buf + H_CRC, 0, 4);
	assert_int_equal(crc, ref_crc32c(buf + H(0), RSYNC_HDR_LEN + 300));
	rsync_auth_free(a);
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
	assert_int_equal(d.h.version, RSYNC_VERSION);
	assert_int_equal(d.h.type, m->h.type);
	assert_int_equal(d.h.flags & RSYNC_F_RETRANS, m->h.flags & RSYNC_F_RETRANS);
	assert_int_equal(d.h.chain, m->h.chain);
	assert_int_equal(d.h.epoch, m->h.epoch);
	assert_int_equal(d.h.txid, m->h.txid);
	assert_int_equal(d.h.frag_seq, m->h.frag_seq);
	assert_int_equal(d.h.frag_count, m->h.frag_count);
	assert_int_equal(d.h.region, m->h.region);
	assert_int_equal(d.h.offset, m->h.offset);
	assert_int_equal(d.h.role, m->h.role);
	assert_int_equal(d.h.sender_run, m->h.sender_run);
	assert_int_equal(d.h.receiver_run, m->h.receiver_run);
	assert_ptr_equal(d.payload, buf + P(0));
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
		m.u.meta.nd_cut = 999;
		d = round_trip(&m, NULL, 0, k);
		assert_int_equal(d.h.len, RSYNC_META_WIRE_LEN);
		assert_memory_equal(&d.u.meta, &m.u.meta, sizeof(m.u.meta));
		rsync_txts_encode(e, 2, txts);
		m = meta_msg(3, 2, 1, sizeof(state_bytes));
		m.h.frag_seq = 1;
		m.h.region = RSYNC_REGION_TXTS;
		m.h.flags = RSYNC_F_RETRANS;
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
		/* two records: 400 bytes of region 3 at 4096, 576 of region 0
		 * at 0 */
		for (size_t i = 0; i < sizeof(state_bytes); i++)
			state_bytes[i] = (uint8_t)(i * 7);
		rsync_state_rec_put(state_bytes, 3, 4096, 400);
		rsync_state_rec_put(state_bytes + RSYNC_REC_HDR_LEN + 400, 0, 0,
				    sizeof(state_bytes) - 2 * RSYNC_REC_HDR_LEN - 400);
		m.h.type = RSYNC_CHECKPOINT;
		m.h.flags = 0;
		m.h.frag_seq = 2;
		m.h.region = 0;
		d = round_trip(&m, state_bytes, sizeof(state_bytes), k);
		{
			struct rsync_state_rec r;
			uint32_t pos = 0;

			assert_true(rsync_state_rec_next(d.payload, d.h.len, &pos, &r));
			assert_int_equal(r.region, 3);
			assert_int_equal(r.offset, 4096);
			assert_int_equal(r.len, 400);
			assert_ptr_equal(r.data, d.payload + RSYNC_REC_HDR_LEN);
			assert_true(rsync_state_rec_next(d.payload, d.h.len, &pos, &r));
			assert_int_equal(r.region, 0);
			assert_int_equal(r.offset, 0);
			assert_int_equal(r.len, sizeof(state_bytes) - 2 * RSYNC_REC_HDR_LEN - 400);
			assert_false(rsync_state_rec_next(d.payload, d.h.len, &pos, &r));
		}
		for (uint8_t t = RSYNC_VOTE; t <= RSYNC_ACK; t++) {
			m = ctl(t, 9);
			assert_int_equal(round_trip(&m, NULL, 0, k).h.len, 0);
		}
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
		assert_int_equal(d.u.replay_end.last_ts, 20);
		assert_int_equal(d.u.replay_end.count, 11);
		m = ctl(RSYNC_HEARTBEAT, 0);
		m.u.heartbeat = (struct rsync_heartbeat){.txid = 5, .cut_ts = 6};
		d = round_trip(&m, NULL, 0, k);
		assert_int_equal(d.u.heartbeat.txid, 5);
		assert_int_equal(d.u.heartbeat.cut_ts, 6);
		for (uint8_t r = RSYNC_ROLE_PREDECESSOR; r <= RSYNC_ROLE_STANDBY; r++) {
			m.h.role = r; /* from anyone */
			assert_int_equal(round_trip(&m, NULL, 0, k).h.role, r);
		}
		m = ctl(RSYNC_REPLAY_START, 0); /* the standby's echo */
		m.h.role = RSYNC_ROLE_STANDBY;
		m.u.replay_start = (struct rsync_replay_start){.after_ts = 10, .newest_ts = 20};
		assert_int_equal(round_trip(&m, NULL, 0, k).h.role, RSYNC_ROLE_STANDBY);
		m = ctl(RSYNC_REPLAY_ACK, 0);
		m.u.replay_ack = (struct rsync_replay_ack){.next_ts = 15, .gap_ts = 17};
		d = round_trip(&m, NULL, 0, k);
		assert_int_equal(d.u.replay_ack.next_ts, 15);
		assert_int_equal(d.u.replay_ack.gap_ts, 17);
		m.u.replay_ack.gap_ts = 0; /* no gap seen */
		assert_int_equal(round_trip(&m, NULL, 0, k).u.replay_ack.gap_ts, 0);
		m.h.role = RSYNC_ROLE_PRIMARY; /* a stateless primary's: its log again */
		assert_int_equal(round_trip(&m, NULL, 0, k).h.role, RSYNC_ROLE_PRIMARY);
		m = ctl(RSYNC_REPLAY_CANCEL, 0);
		m.h.role = RSYNC_ROLE_PREDECESSOR;
		assert_int_equal(round_trip(&m, NULL, 0, k).h.len, 0);
		/* PROTECT, and the new primary's echo of it */
		m = ctl(RSYNC_PROTECT, 0);
		m.h.role = RSYNC_ROLE_PREDECESSOR;
		assert_int_equal(round_trip(&m, NULL, 0, k).h.type, RSYNC_PROTECT);
		m.h.role = RSYNC_ROLE_PRIMARY;
		assert_int_equal(round_trip(&m, NULL, 0, k).h.role, RSYNC_ROLE_PRIMARY);
	}
	rsync_auth_free(a);
}

static void
test_largest_payload_fills_the_mtu(void **state)
{
	(void)state;
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"k", 1, 1);
	struct rsync_msg m = meta_msg(2, 0, 1, RSYNC_MAX_PAYLOAD), d;
	static uint8_t data[RSYNC_MAX_PAYLOAD];
	uint8_t buf[RSYNC_MAX_FRAME];

	one_rec(data, 0, 0, 0x5a, sizeof(data));
	m.h.type = RSYNC_CHECKPOINT;
	m.h.frag_seq = 1;
	m.h.region = 0;
	assert_int_equal(encode(&m, data, sizeof(data), a, buf), RSYNC_MAX_FRAME);
	assert_int_equal(rsync_decode(buf, RSYNC_MAX_FRAME, a, &d), RSYNC_RX_OK);
	assert_int_equal(d.h.len, RSYNC_MAX_PAYLOAD);
	rsync_auth_free(a);
}

static void
test_padding_after_payload_is_ignored(void **state)
{
	(void)state;
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"k", 1, 1);
	uint8_t buf[RSYNC_MAX_FRAME + 64], data[22];
	struct rsync_msg d,
	    m[3] = {ctl(RSYNC_VOTE, 9), ctl(RSYNC_ABORT, 9), meta_msg(2, 0, 1, sizeof(data))};

	one_rec(data, 0, 0, 0x42, sizeof(data));
	m[1].u.abort.through_txid = 10;
	m[2].h.type = RSYNC_CHECKPOINT;
	m[2].h.frag_seq = 1;
	m[2].h.region = 0;
	for (int with_key = 0; with_key < 2; with_key++) {
		for (int i = 0; i < 3; i++) {
			int n = encode(&m[i], data, sizeof(data), with_key ? a : NULL, buf);

			assert_true(n > 0);
			/* up to the 60-byte Ethernet minimum and beyond */
			for (int pad = 1; pad <= 64; pad++) {
				memset(buf + n, 0xee, (size_t)pad);
				assert_int_equal(
				    rsync_decode(buf, (size_t)(n + pad), with_key ? a : NULL, &d),
				    RSYNC_RX_OK);
				assert_int_equal(d.h.txid, 9);
			}
		}
	}
	rsync_auth_free(a);
}

static void
test_decode_at_any_alignment(void **state)
{
	(void)state;
	uint8_t buf[RSYNC_MAX_FRAME + 8], data[100];
	struct rsync_msg m = meta_msg(2, 0, 1, sizeof(data)), d;
	int n;

	one_rec(data, 1, 0, 3, sizeof(data));
	m.h.type = RSYNC_CHECKPOINT;
	m.h.frag_seq = 1;
	m.h.region = 0;
	for (int a = 0; a < 8; a++) {
		n = encode(&m, data, sizeof(data), NULL, buf + a);
		assert_true(n > 0);
		assert_int_equal(rsync_decode(buf + a, (size_t)n, NULL, &d), RSYNC_RX_OK);
		assert_int_equal(d.h.offset, 0);
		assert_memory_equal(d.payload, data, sizeof(data));
	}
}

/* ---------------------------------------------------------------- refusals */

static void
test_truncation_at_every_length_is_refused(void **state)
{
	(void)state;
	uint8_t buf[RSYNC_MAX_FRAME], data[300];
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"key", 3, 1);
	struct rsync_msg m = meta_msg(2, 0, 1, sizeof(data)), d;

	one_rec(data, 0, 0, 1, sizeof(data));
	m.h.type = RSYNC_CHECKPOINT;
	m.h.frag_seq = 1;
	m.h.region = 0;
	for (int with_key = 0; with_key < 2; with_key++) {
		struct rsync_auth *k = with_key ? a : NULL;
		int n = encode(&m, data, sizeof(data), k, buf);

		assert_int_equal(n, P(300) + (with_key ? RSYNC_HMAC_LEN : 0));
		for (int len = 0; len < n; len++) {
			enum rsync_rx_reason want = RSYNC_RX_BAD_LENGTH;

			if (len < P(0))
				want = RSYNC_RX_SHORT;
			assert_int_equal(rsync_decode(buf, (size_t)len, k, &d), want);
		}
		assert_int_equal(rsync_decode(buf, (size_t)n, k, &d), RSYNC_RX_OK);
	}
	rsync_auth_free(a);
}

static void
test_flipped_bit_anywhere_is_refused(void **state)
{
	(void)state;
	uint8_t buf[RSYNC_MAX_FRAME], data[64];
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"key", 3, 1);
	struct rsync_msg m = meta_msg(2, 0, 1, sizeof(data)), d;

	one_rec(data, 2, 0, 0x5a, sizeof(data));
	m.h.type = RSYNC_CHECKPOINT;
	m.h.frag_seq = 1;
	m.h.region = 0;
	for (int with_key = 0; with_key < 2; with_key++) {
		struct rsync_auth *k = with_key ? a : NULL;
		int n = encode(&m, data, sizeof(data), k, buf);

		assert_true(n > 0);
		/* From the EtherType on, every bit is covered: by a field check,
		 * the CRC, or the HMAC. */
		for (int bit = 12 * 8; bit < n * 8; bit++) {
			buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			if (rsync_decode(buf, (size_t)n, k, &d) == RSYNC_RX_OK)
				fail_msg("bit %d flipped and accepted (key %d)", bit, with_key);
			buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
		assert_int_equal(rsync_decode(buf, (size_t)n, k, &d), RSYNC_RX_OK);
	}
	rsync_auth_free(a);
}

static void
test_mac_addresses_are_outside_crc_and_hmac(void **state)
{
	(void)state;
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"key", 3, 1);
	struct rsync_msg m = ctl(RSYNC_COMMIT, 9), d;
	uint8_t buf[RSYNC_MAX_FRAME];
	int n = encode(&m, NULL, 0, a, buf);

	/* The link's addressing, not the message: the session layer checks
	 * the source against its configured peer; the key authenticates. */
	buf[5] ^= 0xff;
	buf[11] ^= 0xff;
	assert_int_equal(rsync_decode(buf, (size_t)n, a, &d), RSYNC_RX_OK);
	assert_int_equal(d.src_mac[5], 0x0a ^ 0xff);
	rsync_auth_free(a);
}

static void
test_forged_replay_start_without_key_is_refused(void **state)
{
	(void)state;
	struct rsync_auth *ours = rsync_auth_new((const uint8_t *)"the chain's key", 15, 1);
	struct rsync_msg m = ctl(RSYNC_REPLAY_START, 0), d;
	uint8_t buf[RSYNC_MAX_FRAME];
	int n;

	m.h.epoch = 99;
	m.u.replay_start = (struct rsync_replay_start){.after_ts = 0, .newest_ts = 1};
	n = encode(&m, NULL, 0, NULL, buf); /* well formed, right CRC, no HMAC */
	assert_int_equal(rsync_decode(buf, (size_t)n, NULL, &d), RSYNC_RX_OK);
	assert_int_equal(rsync_decode(buf, (size_t)n, ours, &d), RSYNC_RX_AUTH_MISSING);
	rsync_auth_free(ours);
}

static void
test_wrong_key_is_auth_failed(void **state)
{
	(void)state;
	struct rsync_auth *ours = rsync_auth_new((const uint8_t *)"the chain's key", 15, 1);
	struct rsync_auth *theirs = rsync_auth_new((const uint8_t *)"a guess", 7, 1);
	struct rsync_msg m = ctl(RSYNC_REPLAY_START, 0), d;
	uint8_t buf[RSYNC_MAX_FRAME];
	int n;

	m.h.epoch = 99;
	m.u.replay_start = (struct rsync_replay_start){.after_ts = 0, .newest_ts = 1};
	n = encode(&m, NULL, 0, theirs, buf);
	assert_int_equal(rsync_decode(buf, (size_t)n, theirs, &d), RSYNC_RX_OK);
	assert_int_equal(rsync_decode(buf, (size_t)n, ours, &d), RSYNC_RX_AUTH_FAILED);
	rsync_auth_free(ours);
	rsync_auth_free(theirs);
}

static void
test_edited_epoch_with_recomputed_crc_is_auth_failed(void **state)
{
	(void)state;
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"the chain's key", 15, 1);
	struct rsync_msg m = ctl(RSYNC_REPLAY_START, 0), d;
	uint8_t buf[RSYNC_MAX_FRAME];
	int n;

	m.u.replay_start = (struct rsync_replay_start){.after_ts = 0, .newest_ts = 1};
	n = encode(&m, NULL, 0, a, buf);
	/* An old REPLAY_START replayed with a newer epoch: the CRC is anyone's
	 * to recompute, the HMAC is not. */
	put_be(buf + H(8), 4, 4);
	fix_crc(buf, (size_t)n);
	assert_int_equal(rsync_decode(buf, (size_t)n, a, &d), RSYNC_RX_AUTH_FAILED);
	rsync_auth_free(a);
}

/* One row per way a frame is refused: a valid base message, encoded, then
 * edited (the CRC recomputed unless the row says not to), decoded. */
enum base {
	B_VOTE,
	B_ACK,
	B_ABORT,
	B_TRIM,
	B_RSTART,
	B_REND,
	B_HB,
	B_RACK,
	B_META,	      /* PREPARE fragment 0 of 4: 2 TxTs entries in 1 piece, 2 state ones */
	B_META_NOCUT, /* PREPARE fragment 0 of 2: 2 TxTs entries in 1 piece, no cut */
	B_TXTS,	      /* its fragment 1: 2 entries */
	B_CKPT,	      /* its fragment 2: one record, 88 bytes of region 3 at 4096 */
	B_JUMBO,      /* a CHECKPOINT of RSYNC_MAX_PAYLOAD bytes (one record) */
};

enum keys {
	K_NONE,	    /* no key on either side */
	K_RX,	    /* sent without an HMAC, a key configured at the receiver */
	K_TX,	    /* sent with an HMAC, no key configured at the receiver */
	K_BOTH,	    /* the same key on both sides */
	K_OTHER_ID, /* another key id */
	K_OTHER,    /* the same key id, another key */
};

struct edit {
	uint16_t off;  /* frame offset; 0 = no edit */
	uint8_t width; /* 1, 2, 4, 8: write v big-endian; 0: XOR the byte with v */
	uint64_t v;
};

struct reject_row {
	const char *name;
	enum base base;
	struct edit e[2];
	uint16_t pad; /* zero bytes appended after the message */
	uint16_t cut; /* bytes taken off the end */
	enum keys keys;
	bool keep_crc; /* do not recompute the CRC after the edit */
	enum rsync_rx_reason want;
};

#define E(o, w, val)                                                                               \
	{                                                                                          \
		(o), (w), (val)                                                                    \
	}

/* clang-format off */
static const struct reject_row rows[] = {
	/* Ethernet and header */
	{"frame shorter than Ethernet", B_VOTE, {{0}}, 0, P(0) - 13, K_NONE, 0, RSYNC_RX_SHORT},
	{"ethertype IPv4", B_VOTE, {E(12, 2, 0x0800)}, 0, 0, K_NONE, 0, RSYNC_RX_NOT_RSYNC},
	{"ethertype of the shim", B_VOTE, {E(12, 2, 0x88B5)}, 0, 0, K_NONE, 0, RSYNC_RX_NOT_RSYNC},
	{"header cut by one byte", B_VOTE, {{0}}, 0, 1, K_NONE, 0, RSYNC_RX_SHORT},
	{"version 0", B_VOTE, {E(H(0), 1, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_VERSION},
	{"version 1 (hash % n ranks)", B_VOTE, {E(H(0), 1, 1)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_VERSION},
	{"version 2 (state pieces, not records)", B_VOTE, {E(H(0), 1, 2)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_VERSION},
	{"version 3 (no sender, no runs)", B_VOTE, {E(H(0), 1, 3)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_VERSION},
	{"version 4 (multiply-shift ranks)", B_VOTE, {E(H(0), 1, 4)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_VERSION},
	{"version 6", B_VOTE, {E(H(0), 1, 6)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_VERSION},
	{"type 0", B_VOTE, {E(H(1), 1, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_TYPE},
	{"type 13", B_VOTE, {E(H(1), 1, RSYNC_TYPE_MAX)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_TYPE},
	{"type 255", B_VOTE, {E(H(1), 1, 255)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_TYPE},
	{"flag 0x04 (FULL) on a VOTE", B_VOTE, {E(H(2), 1, 0x04)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FLAGS},
	{"FULL on an ABORT", B_ABORT, {E(H(2), 1, RSYNC_F_FULL)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FLAGS},
	{"RESYNC on a META", B_META, {E(H(2), 1, RSYNC_F_RESYNC)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FLAGS},
	{"RESYNC on an ACK", B_ACK, {E(H(2), 1, RSYNC_F_RESYNC)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FLAGS},
	{"flag 0x10", B_VOTE, {E(H(2), 1, 0x10)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FLAGS},
	{"flag 0x80", B_VOTE, {E(H(2), 1, 0x80)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FLAGS},
	{"key id without HMAC", B_VOTE, {E(H(3), 1, 1)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FLAGS},
	{"reserved", B_VOTE, {E(H(31), 1, 1)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_RESERVED},
	/* authentication present or not */
	{"no HMAC, key configured", B_VOTE, {{0}}, 0, 0, K_RX, 0, RSYNC_RX_AUTH_MISSING},
	{"no HMAC and malformed, key configured", B_RSTART, {E(H(16), 8, 1), E(P(0), 8, 30)},
	 0, 0, K_RX, 0, RSYNC_RX_AUTH_MISSING},
	{"HMAC, no key configured", B_VOTE, {{0}}, 0, 0, K_TX, 0, RSYNC_RX_AUTH_UNEXPECTED},
	/* payload length */
	{"payload past the frame", B_ABORT, {E(H(6), 2, 9)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"HMAC past the frame", B_ABORT, {{0}}, 0, 1, K_BOTH, 0, RSYNC_RX_BAD_LENGTH},
	{"payload beyond RSYNC_MAX_PAYLOAD", B_JUMBO, {E(H(6), 2, RSYNC_MAX_PAYLOAD + 1)}, 1, 0,
	 K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"VOTE with a payload", B_VOTE, {E(H(6), 2, 8)}, 8, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"ACK with a payload", B_ACK, {E(H(6), 2, 1)}, 8, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"ABORT 7 bytes", B_ABORT, {E(H(6), 2, 7)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"ABORT 16 bytes", B_ABORT, {E(H(6), 2, 16)}, 8, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"LOG_TRIM 0 bytes", B_TRIM, {E(H(6), 2, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"REPLAY_START 8 bytes", B_RSTART, {E(H(6), 2, 8)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"REPLAY_END 24 bytes", B_REND, {E(H(6), 2, 24)}, 8, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"HEARTBEAT 0 bytes", B_HB, {E(H(6), 2, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"REPLAY_ACK 8 bytes", B_RACK, {E(H(6), 2, 8)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"META 63 bytes", B_META, {E(H(6), 2, 63)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"META 88 bytes", B_META, {E(H(6), 2, 88)}, 24, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"TxTs not whole entries", B_TXTS, {E(H(6), 2, 47)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"TxTs piece empty", B_TXTS, {E(H(6), 2, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	{"CHECKPOINT empty", B_CKPT, {E(H(6), 2, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_LENGTH},
	/* fragment numbering */
	{"count 0", B_VOTE, {E(H(26), 2, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FRAG},
	{"seq = count", B_CKPT, {E(H(24), 2, 4)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FRAG},
	{"seq past count", B_TXTS, {E(H(24), 2, 0xffff)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FRAG},
	{"VOTE in 2 fragments", B_VOTE, {E(H(26), 2, 2)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FRAG},
	{"HEARTBEAT fragment 1 of 2", B_HB, {E(H(24), 2, 1), E(H(26), 2, 2)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FRAG},
	{"CHECKPOINT as fragment 0", B_CKPT, {E(H(24), 2, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FRAG},
	/* region and offset */
	{"META not fragment 0", B_META, {E(H(24), 2, 1)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_REGION},
	{"TxTs as fragment 0", B_TXTS, {E(H(24), 2, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_REGION},
	{"PREPARE of a state region", B_TXTS, {E(H(28), 2, 3)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_REGION},
	{"META at an offset", B_META, {E(H(32), 8, 48)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_REGION},
	{"TxTs offset inside an entry", B_TXTS, {E(H(32), 8, 12)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_REGION},
	{"TxTs past what its fragments hold", B_TXTS, {E(H(32), 8, 24 * 59)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_REGION},
	{"CHECKPOINT with a header region", B_CKPT, {E(H(28), 2, 3)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_REGION},
	{"CHECKPOINT region META", B_CKPT, {E(H(28), 2, RSYNC_REGION_META)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_REGION},
	{"CHECKPOINT with a header offset", B_CKPT, {E(H(32), 8, 4096)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_REGION},
	{"VOTE with a region", B_VOTE, {E(H(28), 2, 1)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_REGION},
	{"HEARTBEAT with an offset", B_HB, {E(H(32), 8, 1)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_REGION},
	/* fields */
	{"ACK txid 0", B_ACK, {E(H(16), 8, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"META txid 0", B_META, {E(H(16), 8, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"CHECKPOINT txid 0", B_CKPT, {E(H(16), 8, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"ABORT txid 0", B_ABORT, {E(H(16), 8, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"HEARTBEAT with a txid", B_HB, {E(H(16), 8, 5)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"LOG_TRIM with a txid", B_TRIM, {E(H(16), 8, 1)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"ABORT through < txid", B_ABORT, {E(P(0), 8, 8)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"LOG_TRIM watermark 0", B_TRIM, {E(P(0), 8, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"REPLAY_START newest < after", B_RSTART, {E(P(0), 8, 21)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"REPLAY_END count 0, a last ts", B_REND, {E(P(8), 8, 0)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"REPLAY_END a count, last ts 0", B_REND, {E(P(0), 8, 0)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"META prev txid = txid", B_META, {E(P(0), 8, 9)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"META more TxTs entries than packets", B_META, {E(P(48), 4, 1)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"META reserved not 0", B_META, {E(P(52), 4, 1)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"META cut ts without a cut", B_META_NOCUT, {E(P(16), 8, 5)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"META state without a cut", B_META, {E(P(8), 8, 0), E(P(16), 8, 0)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"META state frags = count", B_META, {E(P(36), 4, 4)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"META state frags huge", B_META, {E(P(36), 4, 0xffffffff)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"META more state bytes than pieces hold", B_META, {E(P(40), 8, 2 * RSYNC_MAX_PAYLOAD + 1)},
	 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"META fewer state bytes than pieces", B_META, {E(P(40), 8, 1)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"META TxTs entries beyond their pieces", B_META, {E(P(32), 4, 60)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"META TxTs entries huge", B_META, {E(P(32), 4, 0xffffffff)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"META TxTs piece without entries", B_META, {E(P(32), 4, 0)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"META entries without a TxTs piece", B_META, {E(H(26), 2, 3)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"META more TxTs pieces than entries", B_META, {E(H(26), 2, 6)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"TxTs entry padding", B_TXTS, {E(P(24 + 14), 1, 1)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"TxTs entry ts 0", B_TXTS, {E(P(24 + 16), 8, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"sender run 0", B_VOTE, {E(H(40), 8, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"REPLAY_ACK next ts 0", B_RACK, {E(P(0), 8, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"REPLAY_ACK gap not past next", B_RACK, {E(P(8), 8, 15)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	/* who sends what */
	{"role 0", B_VOTE, {E(H(30), 1, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_ROLE},
	{"role 4", B_HB, {E(H(30), 1, 4)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_ROLE},
	{"VOTE from the primary", B_VOTE, {E(H(30), 1, RSYNC_ROLE_PRIMARY)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_ROLE},
	{"ACK from the predecessor", B_ACK, {E(H(30), 1, RSYNC_ROLE_PREDECESSOR)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_ROLE},
	{"PREPARE from the standby", B_META, {E(H(30), 1, RSYNC_ROLE_STANDBY)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_ROLE},
	{"CHECKPOINT from the predecessor", B_CKPT, {E(H(30), 1, RSYNC_ROLE_PREDECESSOR)}, 0, 0,
	 K_NONE, 0, RSYNC_RX_BAD_ROLE},
	{"ABORT from the standby", B_ABORT, {E(H(30), 1, RSYNC_ROLE_STANDBY)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_ROLE},
	{"LOG_TRIM from the predecessor", B_TRIM, {E(H(30), 1, RSYNC_ROLE_PREDECESSOR)}, 0, 0,
	 K_NONE, 0, RSYNC_RX_BAD_ROLE},
	{"REPLAY_START from the primary", B_RSTART, {E(H(30), 1, RSYNC_ROLE_PRIMARY)}, 0, 0,
	 K_NONE, 0, RSYNC_RX_BAD_ROLE},
	{"REPLAY_ACK from the predecessor", B_RACK, {E(H(30), 1, RSYNC_ROLE_PREDECESSOR)}, 0, 0,
	 K_NONE, 0, RSYNC_RX_BAD_ROLE},
	/* a CHECKPOINT's state records */
	{"record region 0xFF00", B_CKPT, {E(P(0), 2, RSYNC_REGION_MAX)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"record region META", B_CKPT, {E(P(0), 2, RSYNC_REGION_META)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"record of no bytes", B_CKPT, {E(P(2), 2, 0)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"record past the payload", B_CKPT, {E(P(2), 2, 89)}, 0, 0, K_NONE, 0, RSYNC_RX_BAD_FIELD},
	{"record leaves a partial header", B_CKPT, {E(P(2), 2, 80)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"record offset wraps", B_CKPT, {E(P(4), 8, UINT64_MAX - 50)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	{"payload shorter than a record header", B_CKPT, {E(H(6), 2, 11)}, 0, 0, K_NONE, 0,
	 RSYNC_RX_BAD_FIELD},
	/* integrity */
	{"payload bit flipped", B_CKPT, {E(P(50), 0, 0x10)}, 0, 0, K_NONE, 1, RSYNC_RX_BAD_CRC},
	{"CRC bit flipped", B_VOTE, {E(H_CRC, 0, 1)}, 0, 0, K_NONE, 1, RSYNC_RX_BAD_CRC},
	{"CRC bit flipped under an HMAC", B_VOTE, {E(H_CRC + 3, 0, 0x80)}, 0, 0, K_BOTH, 1,
	 RSYNC_RX_BAD_CRC},
	{"another key id", B_VOTE, {{0}}, 0, 0, K_OTHER_ID, 0, RSYNC_RX_AUTH_KEY},
	{"another key", B_RSTART, {{0}}, 0, 0, K_OTHER, 0, RSYNC_RX_AUTH_FAILED},
	{"HMAC bit flipped", B_ABORT, {E(P(8 + 31), 0, 1)}, 0, 0, K_BOTH, 1,
	 RSYNC_RX_AUTH_FAILED},
};
/* clang-format on */

static struct rsync_msg
base_msg(enum base b, uint8_t *pl, size_t *len)
{
	struct rsync_txts_entry e[2] = {{0xC6120001, 0xC6130002, 1000, 80, 6, 77},
					{0xC6120003, 0xC6130004, 53, 5353, 17, 78}};
	struct rsync_msg m;

	*len = 0;
	switch (b) {
	case B_VOTE:
		return ctl(RSYNC_VOTE, 9);
	case B_ACK:
		return ctl(RSYNC_ACK, 9);
	case B_ABORT:
		m = ctl(RSYNC_ABORT, 9);
		m.u.abort.through_txid = 9;
		return m;
	case B_TRIM:
		m = ctl(RSYNC_LOG_TRIM, 0);
		m.u.trim.watermark = 100;
		return m;
	case B_RSTART:
		m = ctl(RSYNC_REPLAY_START, 0);
		m.u.replay_start = (struct rsync_replay_start){.after_ts = 10, .newest_ts = 20};
		return m;
	case B_REND:
		m = ctl(RSYNC_REPLAY_END, 0);
		m.u.replay_end = (struct rsync_replay_end){.last_ts = 20, .count = 11};
		return m;
	case B_HB:
		m = ctl(RSYNC_HEARTBEAT, 0);
		m.u.heartbeat = (struct rsync_heartbeat){.txid = 9, .cut_ts = 1000};
		return m;
	case B_RACK:
		m = ctl(RSYNC_REPLAY_ACK, 0);
		m.u.replay_ack = (struct rsync_replay_ack){.next_ts = 15, .gap_ts = 20};
		return m;
	case B_META:
		return meta_msg(4, 2, 2, 200);
	case B_META_NOCUT:
		return meta_msg(2, 2, 0, 0);
	case B_TXTS:
		m = meta_msg(4, 2, 2, 200);
		m.h.frag_seq = 1;
		m.h.region = RSYNC_REGION_TXTS;
		rsync_txts_encode(e, 2, pl);
		*len = 48;
		return m;
	case B_CKPT:
		m = meta_msg(4, 2, 2, 200);
		m.h.type = RSYNC_CHECKPOINT;
		m.h.frag_seq = 2;
		m.h.region = 0;
		*len = one_rec(pl, 3, 4096, 0x5a, 100);
		return m;
	case B_JUMBO:
		m = meta_msg(2, 0, 1, RSYNC_MAX_PAYLOAD);
		m.h.type = RSYNC_CHECKPOINT;
		m.h.frag_seq = 1;
		m.h.region = 0;
		*len = one_rec(pl, 0, 0, 0x5a, RSYNC_MAX_PAYLOAD);
		return m;
	}
	fail();
	return m;
}

static enum rsync_rx_reason
decode_row(const struct reject_row *r, struct rsync_auth *k1, struct rsync_auth *k1_id2,
	   struct rsync_auth *k2)
{
	static uint8_t buf[RSYNC_MAX_FRAME + 64], pl[RSYNC_MAX_PAYLOAD];
	struct rsync_auth *tx = NULL, *rx = NULL;
	struct rsync_msg m, d;
	size_t len, n;
	int got;

	switch (r->keys) {
	case K_NONE:
		break;
	case K_RX:
		rx = k1;
		break;
	case K_TX:
		tx = k1;
		break;
	case K_BOTH:
		tx = rx = k1;
		break;
	case K_OTHER_ID:
		tx = k1;
		rx = k1_id2;
		break;
	case K_OTHER:
		tx = k2;
		rx = k1;
		break;
	}
	m = base_msg(r->base, pl, &len);
	got = rsync_encode(buf, sizeof(buf), dst, src, &m, pl, len, tx);
	assert_true(got > 0);
	/* the unedited base is valid for its receiver's own key */
	assert_int_equal(rsync_decode(buf, (size_t)got, tx, &d), RSYNC_RX_OK);
	n = (size_t)got + r->pad;
	memset(buf + got, 0, r->pad);
	for (int i = 0; i < 2; i++) {
		if (r->e[i].off == 0)
			continue;
		if (r->e[i].width == 0)
			buf[r->e[i].off] ^= (uint8_t)r->e[i].v;
		else
			put_be(buf + r->e[i].off, r->e[i].width, r->e[i].v);
	}
	if (r->e[0].off != 0 && !r->keep_crc)
		fix_crc(buf, n);
	return rsync_decode(buf, n - r->cut, rx, &d);
}

static void
test_every_rejection_has_its_reason(void **state)
{
	(void)state;
	struct rsync_auth *k1 = rsync_auth_new((const uint8_t *)"key one", 7, 1);
	struct rsync_auth *k1_id2 = rsync_auth_new((const uint8_t *)"key one", 7, 2);
	struct rsync_auth *k2 = rsync_auth_new((const uint8_t *)"key two", 7, 1);
	bool seen[RSYNC_RX_REASON_MAX] = {false};
	int fails = 0;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		enum rsync_rx_reason got = decode_row(&rows[i], k1, k1_id2, k2);

		if (got != rows[i].want) {
			print_error("%s: %s, want %s\n", rows[i].name, rsync_rx_reason_str(got),
				    rsync_rx_reason_str(rows[i].want));
			fails++;
		}
		seen[rows[i].want] = true;
	}
	/* every wire-level reason has a row */
	for (int r = RSYNC_RX_NOT_RSYNC; r <= RSYNC_RX_AUTH_FAILED; r++)
		if (!seen[r])
			fail_msg("no row for %s", rsync_rx_reason_str((enum rsync_rx_reason)r));
	assert_int_equal(fails, 0);
	rsync_auth_free(k1);
	rsync_auth_free(k1_id2);
	rsync_auth_free(k2);
}

static void
test_encoder_refuses_what_a_peer_would_refuse(void **state)
{
	(void)state;
	static uint8_t big[RSYNC_MAX_PAYLOAD + 1];
	uint8_t buf[RSYNC_MAX_FRAME], txts[25] = {0};
	struct rsync_msg m;

	m = ctl(RSYNC_VOTE, 0); /* txid 0 */
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m = ctl(RSYNC_HEARTBEAT, 1); /* a txid where none belongs */
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m = ctl(0, 1);
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m = ctl(RSYNC_TYPE_MAX, 1);
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m = ctl(RSYNC_COMMIT, 1);
	m.h.frag_count = 2; /* a control type in fragments */
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m = ctl(RSYNC_LOG_TRIM, 0); /* watermark 0 */
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m = meta_msg(2, 0, 1, 100);
	m.h.type = RSYNC_CHECKPOINT;
	m.h.frag_seq = 1;
	m.h.region = 0;
	one_rec(big, 0, 0, 0, 22);
	assert_int_equal(encode(&m, big, 22, NULL, buf), P(22));       /* valid */
	one_rec(big, 0, 0, 0, sizeof(big));
	assert_int_equal(encode(&m, big, sizeof(big), NULL, buf), -1); /* too long */
	assert_int_equal(encode(&m, NULL, 22, NULL, buf), -1);	       /* no bytes given */
	assert_int_equal(encode(&m, big, 0, NULL, buf), -1);	       /* empty state piece */
	one_rec(big, 0, 0, 0, 22);
	assert_int_equal(encode(&m, big, 21, NULL, buf), -1);	       /* a record cut short */
	m.h.frag_seq = 0; /* a state piece cannot be fragment 0 */
	assert_int_equal(encode(&m, big, 22, NULL, buf), -1);
	m.h.frag_seq = 1;
	m.h.region = 1; /* where its bytes go is in its records */
	assert_int_equal(encode(&m, big, 22, NULL, buf), -1);
	m.h.region = 0;
	rsync_state_rec_put(big, RSYNC_REGION_MAX, 0, 10);
	assert_int_equal(encode(&m, big, 22, NULL, buf), -1);
	m = meta_msg(2, 1, 0, 0);
	m.h.frag_seq = 1;
	m.h.region = RSYNC_REGION_TXTS;
	assert_int_equal(encode(&m, txts, sizeof(txts), NULL, buf), -1); /* not whole entries */
	assert_int_equal(encode(&m, txts, 24, NULL, buf), -1);		 /* ts 0 */
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
	m = ctl(RSYNC_REPLAY_END, 0);
	m.u.replay_end = (struct rsync_replay_end){.last_ts = 0, .count = 4};
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m = ctl(RSYNC_VOTE, 1);
	assert_int_equal(rsync_encode(buf, P(0) - 1, dst, src, &m, NULL, 0, NULL), -1); /* no room */
	assert_int_equal(rsync_encode(buf, P(0), dst, src, &m, NULL, 0, NULL), P(0));
	m.h.sender_run = 0; /* a sender has a run */
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m = ctl(RSYNC_VOTE, 1);
	m.h.role = RSYNC_ROLE_PRIMARY; /* a primary never votes */
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
}

static void
test_encoder_derives_version_length_flags_and_key_id(void **state)
{
	(void)state;
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"k", 1, 7);
	struct rsync_msg m = ctl(RSYNC_ABORT, 9), d;
	uint8_t buf[RSYNC_MAX_FRAME];

	m.u.abort.through_txid = 9;
	m.h.version = 9;  /* overwritten */
	m.h.len = 500;	  /* derived from the type */
	m.h.flags = 0xff; /* RETRANS, FULL, RESYNC, RUNNING are the caller's: refused here */
	assert_int_equal(encode(&m, NULL, 0, a, buf), -1); /* not an ABORT's */
	m.h.flags = (uint8_t)(0xff & ~(RSYNC_F_FULL | RSYNC_F_RESYNC | RSYNC_F_RUNNING));
	m.h.key_id = 3;	  /* the key's */
	m.h.crc = 1;
	m.h.reserved = 0xff;
	assert_int_equal(encode(&m, NULL, 0, a, buf), P(8) + RSYNC_HMAC_LEN);
	assert_int_equal(rsync_decode(buf, (size_t)P(8) + RSYNC_HMAC_LEN, a, &d), RSYNC_RX_OK);
	assert_int_equal(d.h.version, RSYNC_VERSION);
	assert_int_equal(d.h.len, 8);
	assert_int_equal(d.h.flags, RSYNC_F_HMAC | RSYNC_F_RETRANS);
	assert_int_equal(d.h.key_id, 7);
	assert_int_equal(d.h.reserved, 0);
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), P(8));
	assert_int_equal(rsync_decode(buf, P(8), NULL, &d), RSYNC_RX_OK);
	assert_int_equal(d.h.flags, RSYNC_F_RETRANS);
	assert_int_equal(d.h.key_id, 0);
	rsync_auth_free(a);
}

/* FULL travels on a transaction's fragments, RESYNC on a VOTE, both ways
 * through the codec. */
static void
test_full_and_resync_flags_round_trip_where_they_belong(void **state)
{
	(void)state;
	uint8_t buf[RSYNC_MAX_FRAME], pl[RSYNC_MAX_PAYLOAD];
	const enum base bases[] = {B_META, B_TXTS, B_CKPT};
	struct rsync_msg m, d;
	size_t len;

	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		m = base_msg(bases[i], pl, &len);
		m.h.flags = RSYNC_F_FULL;
		int n = encode(&m, pl, len, NULL, buf);

		assert_true(n > 0);
		assert_int_equal(rsync_decode(buf, (size_t)n, NULL, &d), RSYNC_RX_OK);
		assert_int_equal(d.h.flags, RSYNC_F_FULL);
		m.h.flags = RSYNC_F_RESYNC;
		assert_int_equal(encode(&m, pl, len, NULL, buf), -1);
	}
	m = ctl(RSYNC_VOTE, 9);
	m.h.flags = RSYNC_F_RESYNC | RSYNC_F_RETRANS;
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), P(0));
	assert_int_equal(rsync_decode(buf, P(0), NULL, &d), RSYNC_RX_OK);
	assert_int_equal(d.h.flags, RSYNC_F_RESYNC | RSYNC_F_RETRANS);
	m.h.flags = RSYNC_F_FULL;
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	/* the standby's HEARTBEAT may ask too */
	m = base_msg(B_HB, pl, &len);
	m.h.flags = RSYNC_F_RESYNC;
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), P(16));
	assert_int_equal(rsync_decode(buf, P(16), NULL, &d), RSYNC_RX_OK);
	assert_int_equal(d.h.flags, RSYNC_F_RESYNC);
	/* the standby refuses a takeover with it; nobody else flags a
	 * REPLAY_START so */
	m = base_msg(B_RSTART, pl, &len);
	m.h.role = RSYNC_ROLE_STANDBY;
	m.h.flags = RSYNC_F_RESYNC;
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), P(16));
	assert_int_equal(rsync_decode(buf, P(16), NULL, &d), RSYNC_RX_OK);
	assert_int_equal(d.h.flags, RSYNC_F_RESYNC);
	m.h.role = RSYNC_ROLE_PREDECESSOR;
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	/* a node refuses to be made primary with it (PROTECT's echo); the
	 * predecessor never flags its PROTECT, nor does a standby send one */
	m = (struct rsync_msg){0};
	m.h.type = RSYNC_PROTECT;
	m.h.chain = 1;
	m.h.epoch = 2;
	m.h.frag_count = 1;
	m.h.sender_run = 7;
	m.h.role = RSYNC_ROLE_PRIMARY;
	m.h.flags = RSYNC_F_RESYNC;
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), P(0));
	assert_int_equal(rsync_decode(buf, P(0), NULL, &d), RSYNC_RX_OK);
	assert_int_equal(d.h.flags, RSYNC_F_RESYNC);
	m.h.role = RSYNC_ROLE_PREDECESSOR;
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m.h.flags = 0;
	m.h.role = RSYNC_ROLE_STANDBY;
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	/* a HEARTBEAT to the predecessor says its sender runs the chain; no
	 * other type and no predecessor says so */
	m = base_msg(B_HB, pl, &len);
	m.h.flags = RSYNC_F_RUNNING;
	m.h.role = RSYNC_ROLE_STANDBY;
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), P(16));
	assert_int_equal(rsync_decode(buf, P(16), NULL, &d), RSYNC_RX_OK);
	assert_int_equal(d.h.flags, RSYNC_F_RUNNING);
	m.h.role = RSYNC_ROLE_PREDECESSOR;
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	m = base_msg(B_VOTE, pl, &len);
	m.h.flags = RSYNC_F_RUNNING;
	assert_int_equal(encode(&m, NULL, 0, NULL, buf), -1);
	/* a full transaction without a cut is refused */
	m = base_msg(B_META_NOCUT, pl, &len);
	m.h.flags = RSYNC_F_FULL;
	assert_int_equal(encode(&m, pl, len, NULL, buf), -1);
}

static void
test_reason_and_type_names_are_distinct(void **state)
{
	(void)state;
	for (int r = 0; r < RSYNC_RX_REASON_MAX; r++) {
		const char *s = rsync_rx_reason_str((enum rsync_rx_reason)r);

		assert_string_not_equal(s, "unknown");
		for (int q = 0; q < r; q++)
			assert_string_not_equal(s, rsync_rx_reason_str((enum rsync_rx_reason)q));
	}
	assert_string_equal(rsync_rx_reason_str(RSYNC_RX_REASON_MAX), "unknown");
	assert_string_equal(rsync_rx_reason_str(RSYNC_RX_AUTH_MISSING), "auth_missing");
	assert_string_equal(rsync_msg_type_str(RSYNC_PREPARE), "PREPARE");
	assert_string_equal(rsync_msg_type_str(RSYNC_REPLAY_START), "REPLAY_START");
	assert_string_equal(rsync_msg_type_str(RSYNC_PROTECT), "PROTECT");
	assert_string_equal(rsync_msg_type_str(RSYNC_HEARTBEAT), "HEARTBEAT");
	assert_string_equal(rsync_msg_type_str(0), "unknown");
	assert_string_equal(rsync_msg_type_str(RSYNC_TYPE_MAX), "unknown");
	assert_string_equal(rsync_msg_type_str(255), "unknown");
}

/*
 * A peer's runs: a frame of a run replaced (a straggler, reordered or
 * duplicated on the link) is refused, not taken for yet another restart;
 * but one stray frame of a run not in the history (older than it, from
 * before this node restarted, or replayed) must not lock the peer's live
 * run out: the live run, heard on, is current again -- as a restart.
 */
static void
test_peer_runs_stragglers_refused_live_run_taken_back(void **state)
{
	struct rsync_peer_runs r = {0};
	const uint64_t a = 0xA, b = 0xB, stray = 0x57;

	(void)state;
	assert_int_equal(rsync_peer_run_heard(&r, a), RSYNC_RUN_SAME);
	assert_int_equal(rsync_peer_run_heard(&r, b), RSYNC_RUN_NEW);
	/* a's stragglers, fewer than a live run sends: refused, b current */
	for (int i = 0; i < RSYNC_RUN_LIVE_AFTER - 1; i++)
		assert_int_equal(rsync_peer_run_heard(&r, a), RSYNC_RUN_REPLACED);
	assert_int_equal(rsync_peer_run_heard(&r, b), RSYNC_RUN_SAME);
	assert_int_equal(rsync_peer_run_heard(&r, a), RSYNC_RUN_REPLACED);
	assert_int_equal(r.cur, b);
	/* one stray frame of an unknown run: taken as a restart ... */
	assert_int_equal(rsync_peer_run_heard(&r, stray), RSYNC_RUN_NEW);
	/* ... but b goes on sending: refused a while, then current again */
	int refused = 0;
	enum rsync_run_heard h;

	while ((h = rsync_peer_run_heard(&r, b)) == RSYNC_RUN_REPLACED)
		assert_true(++refused < 100);
	assert_int_equal(h, RSYNC_RUN_NEW);
	assert_int_equal(refused, RSYNC_RUN_LIVE_AFTER - 1);
	assert_int_equal(r.cur, b);
	assert_int_equal(rsync_peer_run_heard(&r, b), RSYNC_RUN_SAME);
	/* and the stray run is a replaced one now */
	assert_int_equal(rsync_peer_run_heard(&r, stray), RSYNC_RUN_REPLACED);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_crc32c_matches_standard_check_value),
	    cmocka_unit_test(
		test_crc32c_agrees_with_bitwise_reference_at_every_length_and_alignment),
	    cmocka_unit_test(test_hmac_rfc4231_vector),
	    cmocka_unit_test(test_hmac_context_is_fetched_and_keyed_once),
	    cmocka_unit_test(test_hmac_check_refuses_any_changed_bit),
	    cmocka_unit_test(test_auth_new_refuses_empty_and_overlong_keys),
	    cmocka_unit_test(test_golden_vote_frame),
	    cmocka_unit_test(test_golden_abort_frame_with_hmac),
	    cmocka_unit_test(test_hmac_covers_header_with_crc_and_payload),
	    cmocka_unit_test(test_every_type_round_trips),
	    cmocka_unit_test(test_largest_payload_fills_the_mtu),
	    cmocka_unit_test(test_padding_after_payload_is_ignored),
	    cmocka_unit_test(test_decode_at_any_alignment),
	    cmocka_unit_test(test_truncation_at_every_length_is_refused),
	    cmocka_unit_test(test_flipped_bit_anywhere_is_refused),
	    cmocka_unit_test(test_mac_addresses_are_outside_crc_and_hmac),
	    cmocka_unit_test(test_forged_replay_start_without_key_is_refused),
	    cmocka_unit_test(test_wrong_key_is_auth_failed),
	    cmocka_unit_test(test_edited_epoch_with_recomputed_crc_is_auth_failed),
	    cmocka_unit_test(test_every_rejection_has_its_reason),
	    cmocka_unit_test(test_encoder_refuses_what_a_peer_would_refuse),
	    cmocka_unit_test(test_encoder_derives_version_length_flags_and_key_id),
	    cmocka_unit_test(test_full_and_resync_flags_round_trip_where_they_belong),
	    cmocka_unit_test(test_reason_and_type_names_are_distinct),
	    cmocka_unit_test(test_peer_runs_stragglers_refused_live_run_taken_back),
	};

	/* before any OpenSSL call; refused if something allocated already */
	if (!CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free)) {
		fprintf(stderr, "CRYPTO_set_mem_functions refused\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
