/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * make_wire_pcap OUT.pcap -- a capture holding one RSync message of every
 * type (the real encoder; the last ones with an HMAC) and two shimmed
 * frames: the input of test_dissector.py.  The shim is built here byte by
 * byte from the drawing in plog_shim.h / docs/wire-format.md, not with
 * pkt_logger's code, so the dissector is checked against the documented
 * layout.  Classic pcap format, written by hand (no libpcap needed).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsync_wire.h"

/* Insert the 0x88B5 shim into the `len`-byte Ethernet frame `in`: MACs,
 * 0x88B5, version 1, flags, the frame's own EtherType, the timestamp
 * (big-endian), then the frame after its EtherType.  Returns the length. */
static size_t
shim(uint8_t *out, const uint8_t *in, size_t len, uint64_t ts, uint8_t flags)
{
	memcpy(out, in, 12);
	out[12] = 0x88;
	out[13] = 0xB5;
	out[14] = 1;
	out[15] = flags;
	out[16] = in[12];
	out[17] = in[13];
	for (int i = 0; i < 8; i++)
		out[18 + i] = (uint8_t)(ts >> (56 - 8 * i));
	memcpy(out + 26, in + 14, len - 14);
	return len + 12;
}

static FILE *out;

static void
record(const uint8_t *frame, size_t len)
{
	static uint32_t sec = 1;
	uint32_t rec[4] = {sec++, 0, (uint32_t)len, (uint32_t)len};

	fwrite(rec, sizeof(rec), 1, out);
	fwrite(frame, len, 1, out);
}

static void
msg(uint8_t type, uint64_t txid, struct rsync_msg *m, const void *pl, size_t len,
    struct rsync_auth *a)
{
	static const uint8_t dst[6] = {2, 0, 0, 0, 0, 2}, src[6] = {2, 0, 0, 0, 0, 1};
	uint8_t buf[RSYNC_MAX_FRAME];
	int n;

	m->h.type = type;
	m->h.chain = 7;
	m->h.epoch = 3;
	m->h.txid = txid;
	if (m->h.frag_count == 0)
		m->h.frag_count = 1;
	/* who sends it: the standby votes, acknowledges and echoes; the
	 * predecessor starts and ends the replay; the primary the rest */
	if (m->h.role == 0)
		m->h.role = type == RSYNC_VOTE || type == RSYNC_ACK || type == RSYNC_REPLAY_ACK
				    ? RSYNC_ROLE_STANDBY
			    : type == RSYNC_REPLAY_START || type == RSYNC_REPLAY_END
				    ? RSYNC_ROLE_PREDECESSOR
				    : RSYNC_ROLE_PRIMARY;
	m->h.sender_run = 0x1111111111111111ull;
	m->h.receiver_run = 0x2222222222222222ull;
	n = rsync_encode(buf, sizeof(buf), dst, src, m, pl, len, a);
	if (n < 0) {
		fprintf(stderr, "make_wire_pcap: cannot encode type %u\n", type);
		exit(1);
	}
	record(buf, (size_t)n);
}

int
main(int argc, char **argv)
{
	uint32_t hdr[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1};
	struct rsync_auth *a = rsync_auth_new((const uint8_t *)"a key of the lab", 16, 9);
	struct rsync_txts_entry e = {0xC6120001, 0xC6130002, 40000, 80, 6, 1234};
	uint8_t txts[24], state[100], f[128];
	struct rsync_msg m;

	if (argc != 2 || (out = fopen(argv[1], "wb")) == NULL || a == NULL)
		return 2;
	fwrite(hdr, sizeof(hdr), 1, out);
	/* 1: PREPARE META of a 3-fragment transaction 42 */
	memset(&m, 0, sizeof(m));
	m.h.frag_count = 3;
	m.h.region = RSYNC_REGION_META;
	m.u.meta = (struct rsync_meta){.prev_txid = 41, .cut_id = 5, .cut_ts = 1000,
				       .txts_entries = 1, .state_frags = 1, .state_bytes = 100,
				       .pkts = 3, .clock = 5000000000ull};
	msg(RSYNC_PREPARE, 42, &m, NULL, 0, NULL);
	/* 2: its TxTs piece */
	rsync_txts_encode(&e, 1, txts);
	memset(&m, 0, sizeof(m));
	m.h.frag_seq = 1;
	m.h.frag_count = 3;
	m.h.region = RSYNC_REGION_TXTS;
	msg(RSYNC_PREPARE, 42, &m, txts, sizeof(txts), NULL);
	/* 3: its state piece: one record, 88 bytes of region 4 at 8192 */
	memset(state, 0xab, sizeof(state));
	rsync_state_rec_put(state, 4, 8192, sizeof(state) - RSYNC_REC_HDR_LEN);
	memset(&m, 0, sizeof(m));
	m.h.frag_seq = 2;
	m.h.frag_count = 3;
	msg(RSYNC_CHECKPOINT, 42, &m, state, sizeof(state), NULL);
	/* 4..6: VOTE, COMMIT, ACK */
	memset(&m, 0, sizeof(m));
	msg(RSYNC_VOTE, 42, &m, NULL, 0, NULL);
	memset(&m, 0, sizeof(m));
	msg(RSYNC_COMMIT, 42, &m, NULL, 0, NULL);
	memset(&m, 0, sizeof(m));
	msg(RSYNC_ACK, 42, &m, NULL, 0, NULL);
	/* 7: ABORT 43..45 */
	memset(&m, 0, sizeof(m));
	m.u.abort.through_txid = 45;
	msg(RSYNC_ABORT, 43, &m, NULL, 0, NULL);
	/* 8: LOG_TRIM 1000 */
	memset(&m, 0, sizeof(m));
	m.u.trim.watermark = 1000;
	msg(RSYNC_LOG_TRIM, 0, &m, NULL, 0, NULL);
	/* 9..11: REPLAY_START, REPLAY_END, HEARTBEAT, with an HMAC */
	memset(&m, 0, sizeof(m));
	m.u.replay_start = (struct rsync_replay_start){.after_ts = 1000, .newest_ts = 1500};
	msg(RSYNC_REPLAY_START, 0, &m, NULL, 0, a);
	memset(&m, 0, sizeof(m));
	m.u.replay_end = (struct rsync_replay_end){.last_ts = 1500, .count = 500};
	msg(RSYNC_REPLAY_END, 0, &m, NULL, 0, a);
	memset(&m, 0, sizeof(m));
	m.u.heartbeat = (struct rsync_heartbeat){.txid = 42, .cut_ts = 1000};
	msg(RSYNC_HEARTBEAT, 0, &m, NULL, 0, a);
	/* 12: REPLAY_ACK from the standby: next 1200, a gap at 1300 */
	memset(&m, 0, sizeof(m));
	m.u.replay_ack = (struct rsync_replay_ack){.next_ts = 1200, .gap_ts = 1300};
	msg(RSYNC_REPLAY_ACK, 0, &m, NULL, 0, NULL);
	/* 13: a shimmed IPv4/UDP packet, ts 1001; 14: a shimmed VLAN one, ts
	 * 1002, REPLAY flag */
	{
		static const uint8_t ipv4[42] = {
			2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0, 0, 28, 0, 1, 0,
			0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 19, 0, 2, 0x9c, 0x40, 0, 53, 0, 8,
			0, 0};
		static const uint8_t vlan_hdr[18] = {2, 0, 0, 0, 0, 2, 2,    0, 0,
						     0, 0, 1, 0x81, 0, 0, 42, 0x08, 0};
		uint8_t vlan[sizeof(vlan_hdr) + sizeof(ipv4) - 14];

		record(f, shim(f, ipv4, sizeof(ipv4), 1001, 0));
		memcpy(vlan, vlan_hdr, sizeof(vlan_hdr));
		memcpy(vlan + sizeof(vlan_hdr), ipv4 + 14, sizeof(ipv4) - 14);
		record(f, shim(f, vlan, sizeof(vlan), 1002, 0x01));
	}
	rsync_auth_free(a);
	return fclose(out) == 0 ? 0 : 1;
}
