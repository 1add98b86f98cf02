/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * fuzz_rsync.c -- libFuzzer target for RSync (rsync/): the wire codec and
 * both sides of the two-phase commit, as a peer that sends anything.
 *
 * The input is used two ways:
 *
 *   1. as a frame: rsync_decode() without and with a key.  An accepted frame
 *      is encoded again from what was decoded and must give the same bytes
 *      (up to the message's end, CRC and HMAC included) and decode to the
 *      same header and fixed payload; the other keying must refuse it.
 *   2. as a script of messages a peer sends: each record of the input is
 *      turned into fields (type, sender role and runs, txid, fragment numbers, region, offset,
 *      payload...; a CHECKPOINT's payload made one state record of that
 *      region and offset), encoded with rsync_encode() -- so the CRC is right and
 *      the state machines, not the checksum, are what is exercised -- then
 *      decoded and handed to a standby and to a primary that has packets in
 *      flight (the two are not linked: a forged VOTE without a key is
 *      accepted, which is why keys exist).  Invariants: whatever the
 *      libraries send encodes; the standby writes state only inside its
 *      regions and never stages more than its window; the primary releases
 *      or drops each packet at most once, and releases in order.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rsync_primary.h"
#include "rsync_standby.h"
#include "rsync_wire.h"

#include "fuzz_check.h"

#define REGIONS 2
#define REGION_SIZE 4096
#define NPKTS 64
/* The primary's and the standby's runs; scripted messages come from these,
 * from other runs, or from none. */
#define RUN_P 0x50ull
#define RUN_S 0x53ull

static const uint8_t mac_a[6] = {2, 0, 0, 0, 0, 1}, mac_b[6] = {2, 0, 0, 0, 0, 2};

static struct {
	uint32_t released[NPKTS + 1];
	uint32_t nreleased, last_released;
	uint8_t fate[NPKTS + 1];
	uint64_t votes_sent_to_primary;
	struct rsync_flow flow[NPKTS + 1];
} st;

static int
p_send(void *ctx, enum rsync_peer to, const struct rsync_msg *m, const void *pl, size_t len)
{
	uint8_t buf[RSYNC_MAX_FRAME];

	(void)ctx;
	(void)to;
	/* What the library sends must encode. */
	CHECK(rsync_encode(buf, sizeof(buf), mac_b, mac_a, m, pl, len, NULL) > 0);
	return 0;
}

static void
p_release(void *ctx, void *const *pkts, uint32_t n)
{
	(void)ctx;
	for (uint32_t i = 0; i < n; i++) {
		uintptr_t id = (uintptr_t)pkts[i];

		CHECK(id >= 1 && id <= NPKTS && st.fate[id] == 0);
		CHECK(id > st.last_released); /* in order */
		st.fate[id] = 1;
		st.last_released = (uint32_t)id;
		st.released[st.nreleased++] = (uint32_t)id;
	}
}

static void
p_drop(void *ctx, void *const *pkts, uint32_t n, enum rsync_abort_reason why)
{
	(void)ctx;
	(void)why;
	for (uint32_t i = 0; i < n; i++) {
		uintptr_t id = (uintptr_t)pkts[i];

		CHECK(id >= 1 && id <= NPKTS && st.fate[id] == 0);
		st.fate[id] = 2;
	}
}

static int
s_send(void *ctx, const struct rsync_msg *m)
{
	uint8_t buf[RSYNC_MAX_FRAME];

	(void)ctx;
	CHECK(rsync_encode(buf, sizeof(buf), mac_a, mac_b, m, NULL, 0, NULL) > 0);
	return 0;
}

static bool
s_state_ok(void *ctx, uint16_t region, uint64_t offset, uint32_t len)
{
	(void)ctx;
	return region < REGIONS && offset <= REGION_SIZE && len <= REGION_SIZE - offset;
}

static uint8_t regions[REGIONS][REGION_SIZE];

static void
s_apply(void *ctx, uint16_t region, uint64_t offset, const void *data, uint32_t len)
{
	(void)ctx;
	CHECK(s_state_ok(NULL, region, offset, len));
	memcpy(regions[region] + offset, data, len);
}

/* The key of the seeds with an HMAC (make_rsync_corpus.py): "fuzz key", id 1. */
static struct rsync_auth *
fuzz_key(void)
{
	static struct rsync_auth *key;

	if (key == NULL)
		key = rsync_auth_new((const uint8_t *)"fuzz key", 8, 1);
	CHECK(key != NULL);
	return key;
}

/* An accepted frame (under `key`, or none) encodes again from what was
 * decoded to the same bytes -- CRC and HMAC included -- up to the message's
 * end, and that decodes to the same header and fixed payload.  Seeds with a
 * valid HMAC under the fuzz key keep the keyed path reachable: mutations of
 * what the HMAC does not cover (MAC addresses, padding) still verify. */
static void
check_round_trip(const uint8_t *data, size_t size, struct rsync_auth *key)
{
	struct rsync_msg m, again;
	uint8_t buf[RSYNC_MAX_FRAME];
	int n;

	if (rsync_decode(data, size, key, &m) != RSYNC_RX_OK)
		return;
	CHECK(m.h.len <= RSYNC_MAX_PAYLOAD && m.payload == data + RSYNC_ETH_LEN + RSYNC_HDR_LEN);
	n = rsync_encode(buf, sizeof(buf), m.dst_mac, m.src_mac, &m, m.payload, m.h.len, key);
	CHECK(n > 0 && (size_t)n <= size);
	CHECK(memcmp(buf, data, (size_t)n) == 0);
	CHECK(rsync_decode(buf, (size_t)n, key, &again) == RSYNC_RX_OK);
	CHECK(memcmp(&again.h, &m.h, sizeof(m.h)) == 0);
	CHECK(memcmp(&again.u, &m.u, sizeof(m.u)) == 0);
	/* the other keying refuses it */
	CHECK(rsync_decode(data, size, key != NULL ? NULL : fuzz_key(), &again) != RSYNC_RX_OK);
}

/* Read `n` bytes of the script (zeros past its end). */
static uint64_t
take(const uint8_t **p, const uint8_t *end, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | (*p < end ? *(*p)++ : 0);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rsync_primary_cfg pc = {.chain = 1, .run = RUN_P, .epoch = 1, .stages = 4,
				       .stage_pkts = 4,
				       .stage_state_bytes = 2048, .max_payload = 256,
				       .close_ns = 1000, .retrans_ns = 5000, .max_tries = 2,
				       .standby_window = 4};
	struct rsync_standby_cfg sc = {.chain = 1, .run = RUN_S, .epoch = 1, .window = 4,
				       .max_frags = 32,
				       .txts_capacity = 64};
	static const struct rsync_primary_ops pops = {p_send, p_release, p_drop};
	static const struct rsync_standby_ops sops = {s_send, s_state_ok, s_apply};
	const uint8_t *p = data, *end = data + size;
	struct rsync_primary *pri;
	struct rsync_standby *sb;
	struct rsync_msg m;
	uint64_t now = 0;
	uint32_t added = 0;

	check_round_trip(data, size, NULL);
	check_round_trip(data, size, fuzz_key());

	memset(&st, 0, sizeof(st));
	pri = rsync_primary_new(&pc, &pops, NULL, 1);
	sb = rsync_standby_new(&sc, &sops, NULL, 2);
	CHECK(pri != NULL && sb != NULL);
	while (p < end) {
		uint8_t op = (uint8_t)take(&p, end, 1);
		struct rsync_msg msg = {0};
		uint8_t payload[RSYNC_MAX_PAYLOAD], buf[RSYNC_MAX_FRAME];
		_Static_assert(255 * 5 <= RSYNC_MAX_PAYLOAD, "a scripted payload fits");
		size_t plen;
		int n;

		if ((op & 3) == 0) { /* the primary's own traffic */
			if (added < NPKTS) {
				uint32_t id = added + 1;

				st.flow[id].dst_ip = (uint32_t)take(&p, end, 1);
				st.flow[id].proto = 6;
				if (rsync_primary_add(pri, (void *)(uintptr_t)id, &st.flow[id], id,
						      now) == 0)
					added++;
			}
			if (op & 4)
				rsync_primary_nd(pri, added);
			now += take(&p, end, 2) * 10;
			rsync_primary_tick(pri, now);
			continue;
		}
		msg.h.type = (uint8_t)(1 + take(&p, end, 1) % (RSYNC_TYPE_MAX - 1));
		msg.h.chain = (op & 0x80) ? 2 : 1;
		msg.h.epoch = (uint32_t)take(&p, end, 1) % 3;
		{
			/* who sends it, and to which run: mostly the roles and
			 * runs of the two sides, sometimes others */
			uint8_t who = (uint8_t)take(&p, end, 1);
			static const uint64_t runs[4] = {RUN_P, RUN_S, 0, 0x77};

			msg.h.role = (uint8_t)(1 + (who & 3) % 3);
			msg.h.sender_run = runs[(who >> 2) & 3] ? runs[(who >> 2) & 3] : 1;
			msg.h.receiver_run = runs[(who >> 4) & 3];
		}
		msg.h.txid = take(&p, end, 1);
		msg.h.frag_count = (uint16_t)take(&p, end, 1);
		msg.h.frag_seq = (uint16_t)take(&p, end, 1);
		msg.h.region = (op & 0x40) ? RSYNC_REGION_META
			       : (op & 0x20) ? RSYNC_REGION_TXTS
					     : (uint16_t)take(&p, end, 1);
		msg.h.offset = take(&p, end, 2);
		plen = take(&p, end, 1) * 5; /* at most 1275 < RSYNC_MAX_PAYLOAD */
		for (size_t i = 0; i < plen; i++)
			payload[i] = (uint8_t)take(&p, end, 1);
		msg.u.meta.prev_txid = take(&p, end, 1);
		msg.u.meta.cut_id = take(&p, end, 1);
		msg.u.meta.cut_ts = take(&p, end, 1);
		msg.u.meta.txts_entries = (uint32_t)take(&p, end, 1);
		msg.u.meta.state_frags = (uint32_t)take(&p, end, 1);
		msg.u.meta.state_bytes = take(&p, end, 2);
		msg.u.meta.pkts = msg.u.meta.txts_entries; /* (a packet per flow) */
		/* A state piece is state records: the payload becomes one, for
		 * the region and offset the script chose. */
		if (msg.h.type == RSYNC_CHECKPOINT && plen > RSYNC_REC_HDR_LEN) {
			rsync_state_rec_put(payload, msg.h.region % (REGIONS + 1), msg.h.offset,
					    (uint16_t)(plen - RSYNC_REC_HDR_LEN));
			msg.h.region = 0;
			msg.h.offset = 0;
		}
		n = rsync_encode(buf, sizeof(buf), mac_a, mac_b, &msg, payload, plen, NULL);
		if (n < 0 || rsync_decode(buf, (size_t)n, NULL, &m) != RSYNC_RX_OK)
			continue;
		if (op & 8)
			(void)rsync_primary_rx(pri, &m, now);
		else
			(void)rsync_standby_rx(sb, &m, now);
		CHECK(rsync_standby_staged(sb) <= sc.window);
	}
	/* Whatever the primary released, a takeover must know about. */
	{
		struct rsync_standby_applied a;

		if (rsync_standby_takeover(sb, 5, &a) == 0)
			(void)a;
	}
	rsync_primary_free(pri);
	rsync_standby_free(sb);
	return 0;
}
