/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * RSync's wire codec (contract and layout in rsync_wire.h).
 *
 * Decoding checks, in this order, and stops at the first failure with its
 * own reason: the Ethernet type and length; the header's version, type,
 * flags and reserved field; whether an HMAC is there when a key is
 * configured (and not there when none is); the payload length against the
 * frame; the fragment numbering; each type's payload and fields; then the
 * CRC32C; then the HMAC.  Cheap structural checks come first so that junk
 * costs nothing; the HMAC's presence right after the header's own fields,
 * so that with a key configured a frame without one is counted as
 * auth_missing whatever its type or payload (an unauthenticated sender is
 * the finding, not its malformation); the CRC before the HMAC because it is
 * cheaper and tells corruption (counted as such) from forgery.  Nothing is
 * trusted before the HMAC has verified: the result is only handed out on
 * RSYNC_RX_OK.
 *
 * The encoder runs the same field checks on what it wrote, so it never
 * sends what a peer would refuse; conversely every accepted frame encodes
 * again to the same bytes (fuzz_rsync checks both), which is why the
 * decoder refuses payloads beyond RSYNC_MAX_PAYLOAD that a jumbo frame could
 * hold.
 *
 * Beyond the layout the decoder is strict wherever the way rsync_primary.c
 * cuts transactions makes it cheap and rsync_standby.c's reassembly relies
 * on it: a txid where a type names a transaction and
 * 0 where it does not; a sender role that sends the type, a sender run id
 * not 0; META counts that fit the fragment count (each TxTs
 * piece carries at least one entry, each state piece at least one byte,
 * neither more than RSYNC_MAX_PAYLOAD), state only with a cut, prev_txid
 * below txid; a TxTs piece whole entries with zero padding and timestamps
 * not 0, lying within what pieces 1 .. seq can hold; a state piece's region
 * and offset 0 and its payload state records that fill it exactly, each of
 * at least one byte, in a state region, not wrapping; ABORT's range not
 * inverted; a LOG_TRIM watermark not 0; REPLAY_START's newest not below its
 * start; REPLAY_END's count 0 exactly when its last timestamp is;
 * REPLAY_ACK's next timestamp not 0, its gap past it.  HEARTBEAT's fields
 * are information only and not checked.  Whether a receiver run id is this
 * node's is the session layer's check.  Multi-byte fields are read and written
 * with memcpy and explicit byte order: frames sit at any alignment.
 */
#include <string.h>

#include <rte_hash_crc.h>

#include "onvm_wire.h"

#include "rsync_auth_priv.h"
#include "rsync_wire.h"

/* Header offsets. */
enum {
	OFF_VERSION = 0,
	OFF_TYPE = 1,
	OFF_FLAGS = 2,
	OFF_KEY_ID = 3,
	OFF_CHAIN = 4,
	OFF_LEN = 6,
	OFF_EPOCH = 8,
	OFF_CRC = 12,
	OFF_TXID = 16,
	OFF_FRAG_SEQ = 24,
	OFF_FRAG_COUNT = 26,
	OFF_REGION = 28,
	OFF_ROLE = 30,
	OFF_RESERVED = 31,
	OFF_OFFSET = 32,
	OFF_SENDER_RUN = 40,
	OFF_RECEIVER_RUN = 48,
};
_Static_assert(OFF_RECEIVER_RUN + 8 == RSYNC_HDR_LEN, "the header is 56 bytes");

/* Payload offsets, per type (docs/wire-format.md draws each). */
enum { /* PREPARE fragment 0: META */
	META_PREV_TXID = 0,
	META_CUT_ID = 8,
	META_CUT_TS = 16,
	META_ND_CUT = 24,
	META_TXTS_ENTRIES = 32,
	META_STATE_FRAGS = 36,
	META_STATE_BYTES = 40,
	META_PKTS = 48,
	META_RESERVED = 52,
	META_CLOCK = 56,
};
_Static_assert(META_CLOCK + 8 == RSYNC_META_WIRE_LEN, "META is 64 bytes");
enum { /* one TxTs entry of a PREPARE's TxTs piece */
	TXTS_SRC_IP = 0,
	TXTS_DST_IP = 4,
	TXTS_SPORT = 8,
	TXTS_DPORT = 10,
	TXTS_PROTO = 12,
	TXTS_PAD = 13, /* 3 bytes, zero */
	TXTS_TS = 16,
};
_Static_assert(TXTS_PAD + 3 == TXTS_TS && TXTS_TS + 8 == RSYNC_TXTS_WIRE_LEN,
	       "a TxTs entry is 24 bytes, its timestamp 8-byte aligned in it");
enum { /* ABORT */
	ABORT_THROUGH_TXID = 0,
};
_Static_assert(ABORT_THROUGH_TXID + 8 == RSYNC_ABORT_WIRE_LEN, "ABORT is 8 bytes");
enum { /* LOG_TRIM */
	TRIM_WATERMARK = 0,
};
_Static_assert(TRIM_WATERMARK + 8 == RSYNC_LOG_TRIM_WIRE_LEN, "LOG_TRIM is 8 bytes");
enum { /* REPLAY_START */
	RSTART_AFTER_TS = 0,
	RSTART_NEWEST_TS = 8,
};
_Static_assert(RSTART_NEWEST_TS + 8 == RSYNC_REPLAY_START_WIRE_LEN, "REPLAY_START is 16 bytes");
enum { /* REPLAY_END */
	REND_LAST_TS = 0,
	REND_COUNT = 8,
};
_Static_assert(REND_COUNT + 8 == RSYNC_REPLAY_END_WIRE_LEN, "REPLAY_END is 16 bytes");
enum { /* HEARTBEAT */
	HB_TXID = 0,
	HB_CUT_TS = 8,
};
_Static_assert(HB_CUT_TS + 8 == RSYNC_HEARTBEAT_WIRE_LEN, "HEARTBEAT is 16 bytes");
enum { /* REPLAY_ACK */
	RACK_NEXT_TS = 0,
	RACK_GAP_TS = 8,
};
_Static_assert(RACK_GAP_TS + 8 == RSYNC_REPLAY_ACK_WIRE_LEN, "REPLAY_ACK is 16 bytes");
enum { /* a state record of a CHECKPOINT payload */
	REC_REGION = 0,
	REC_LEN = 2,
	REC_OFFSET = 4,
};
_Static_assert(REC_OFFSET + 8 == RSYNC_REC_HDR_LEN, "a state record's header is 12 bytes");
/* Where the EtherType sits in the Ethernet header before ours. */
enum { ETH_TYPE_OFF = 12 };
_Static_assert(ETH_TYPE_OFF + 2 == RSYNC_ETH_LEN, "an untagged Ethernet header");
_Static_assert(RSYNC_ETH_LEN + RSYNC_HDR_LEN + RSYNC_MAX_PAYLOAD + RSYNC_HMAC_LEN ==
		       RSYNC_MAX_FRAME,
	       "a full fragment with its HMAC fills an MTU");

/* CRC32C update over any alignment: rte_hash_crc() reads 8 bytes at a time
 * at the address it is given, so bytes go one by one up to an 8-byte
 * boundary first.  rte_hash_crc() is CRC32C without the pre- and
 * post-inversion: the caller passes ~0 in and inverts what comes out.  The
 * header picks SSE4.2 / ARMv8 CRC or tables in an RTE_INIT constructor of
 * this file (a CPUID check, no EAL), so it works in EAL-less unit tests. */
static uint32_t
crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n > 0 && ((uintptr_t)p & 7) != 0) {
		crc = rte_hash_crc_1byte(*p++, crc);
		n--;
	}
	return n > 0 ? rte_hash_crc(p, (uint32_t)n, crc) : crc;
}

uint32_t
rsync_crc32c(const void *data, size_t len)
{
	return ~crc_update(0xFFFFFFFFu, data, len);
}

/* The CRC of a header (its CRC field taken as zero) and a payload. */
static uint32_t
msg_crc(const uint8_t *hdr, const uint8_t *payload, size_t len)
{
	static const uint8_t zero[4];
	uint32_t crc = 0xFFFFFFFFu;

	crc = crc_update(crc, hdr, OFF_CRC);
	crc = crc_update(crc, zero, sizeof(zero));
	crc = crc_update(crc, hdr + OFF_CRC + 4, RSYNC_HDR_LEN - OFF_CRC - 4);
	crc = crc_update(crc, payload, len);
	return ~crc;
}

const char *
rsync_msg_type_str(uint8_t type)
{
	static const char *const names[RSYNC_TYPE_MAX] = {
		[RSYNC_PREPARE] = "PREPARE",	       [RSYNC_VOTE] = "VOTE",
		[RSYNC_COMMIT] = "COMMIT",	       [RSYNC_ACK] = "ACK",
		[RSYNC_ABORT] = "ABORT",	       [RSYNC_CHECKPOINT] = "CHECKPOINT",
		[RSYNC_LOG_TRIM] = "LOG_TRIM",	       [RSYNC_REPLAY_START] = "REPLAY_START",
		[RSYNC_REPLAY_END] = "REPLAY_END",     [RSYNC_HEARTBEAT] = "HEARTBEAT",
		[RSYNC_REPLAY_ACK] = "REPLAY_ACK",     [RSYNC_REPLAY_CANCEL] = "REPLAY_CANCEL",
		[RSYNC_PROTECT] = "PROTECT",
	};

	return type < RSYNC_TYPE_MAX && names[type] != NULL ? names[type] : "unknown";
}

const char *
rsync_rx_reason_str(enum rsync_rx_reason r)
{
	static const char *const names[RSYNC_RX_REASON_MAX] = {
		[RSYNC_RX_OK] = "ok",
		[RSYNC_RX_NOT_RSYNC] = "not_rsync",
		[RSYNC_RX_SHORT] = "short",
		[RSYNC_RX_BAD_VERSION] = "bad_version",
		[RSYNC_RX_BAD_TYPE] = "bad_type",
		[RSYNC_RX_BAD_FLAGS] = "bad_flags",
		[RSYNC_RX_BAD_RESERVED] = "bad_reserved",
		[RSYNC_RX_BAD_LENGTH] = "bad_length",
		[RSYNC_RX_BAD_FRAG] = "bad_fragment",
		[RSYNC_RX_BAD_REGION] = "bad_region",
		[RSYNC_RX_BAD_FIELD] = "bad_field",
		[RSYNC_RX_BAD_ROLE] = "bad_role",
		[RSYNC_RX_BAD_CRC] = "bad_crc",
		[RSYNC_RX_AUTH_MISSING] = "auth_missing",
		[RSYNC_RX_AUTH_UNEXPECTED] = "auth_unexpected",
		[RSYNC_RX_AUTH_KEY] = "auth_key",
		[RSYNC_RX_AUTH_FAILED] = "auth_failed",
		[RSYNC_RX_UNKNOWN_PEER] = "unknown_peer",
		[RSYNC_RX_UNKNOWN_CHAIN] = "unknown_chain",
		[RSYNC_RX_STALE_EPOCH] = "stale_epoch",
		[RSYNC_RX_WRONG_ROLE] = "wrong_role",
		[RSYNC_RX_UNKNOWN_TXN] = "unknown_txn",
		[RSYNC_RX_DUPLICATE] = "duplicate",
		[RSYNC_RX_MISMATCH] = "mismatch",
		[RSYNC_RX_NO_ROOM] = "no_room",
		[RSYNC_RX_STALE_RUN] = "stale_run",
		[RSYNC_RX_PEER_RESTARTED] = "peer_restarted",
	};

	return (unsigned int)r < RSYNC_RX_REASON_MAX && names[r] != NULL ? names[r] : "unknown";
}

static void
hdr_decode(const uint8_t *p, struct rsync_hdr *h)
{
	h->version = p[OFF_VERSION];
	h->type = p[OFF_TYPE];
	h->flags = p[OFF_FLAGS];
	h->key_id = p[OFF_KEY_ID];
	h->chain = onvm_get_be16(p + OFF_CHAIN);
	h->len = onvm_get_be16(p + OFF_LEN);
	h->epoch = onvm_get_be32(p + OFF_EPOCH);
	h->crc = onvm_get_be32(p + OFF_CRC);
	h->txid = onvm_get_be64(p + OFF_TXID);
	h->frag_seq = onvm_get_be16(p + OFF_FRAG_SEQ);
	h->frag_count = onvm_get_be16(p + OFF_FRAG_COUNT);
	h->region = onvm_get_be16(p + OFF_REGION);
	h->role = p[OFF_ROLE];
	h->reserved = p[OFF_RESERVED];
	h->offset = onvm_get_be64(p + OFF_OFFSET);
	h->sender_run = onvm_get_be64(p + OFF_SENDER_RUN);
	h->receiver_run = onvm_get_be64(p + OFF_RECEIVER_RUN);
}

static void
hdr_encode(const struct rsync_hdr *h, uint8_t *p)
{
	p[OFF_VERSION] = h->version;
	p[OFF_TYPE] = h->type;
	p[OFF_FLAGS] = h->flags;
	p[OFF_KEY_ID] = h->key_id;
	onvm_put_be16(p + OFF_CHAIN, h->chain);
	onvm_put_be16(p + OFF_LEN, h->len);
	onvm_put_be32(p + OFF_EPOCH, h->epoch);
	onvm_put_be32(p + OFF_CRC, h->crc);
	onvm_put_be64(p + OFF_TXID, h->txid);
	onvm_put_be16(p + OFF_FRAG_SEQ, h->frag_seq);
	onvm_put_be16(p + OFF_FRAG_COUNT, h->frag_count);
	onvm_put_be16(p + OFF_REGION, h->region);
	p[OFF_ROLE] = h->role;
	p[OFF_RESERVED] = h->reserved;
	onvm_put_be64(p + OFF_OFFSET, h->offset);
	onvm_put_be64(p + OFF_SENDER_RUN, h->sender_run);
	onvm_put_be64(p + OFF_RECEIVER_RUN, h->receiver_run);
}

void
rsync_txts_encode(const struct rsync_txts_entry *e, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++, out += RSYNC_TXTS_WIRE_LEN) {
		onvm_put_be32(out + TXTS_SRC_IP, e[i].src_ip);
		onvm_put_be32(out + TXTS_DST_IP, e[i].dst_ip);
		onvm_put_be16(out + TXTS_SPORT, e[i].sport);
		onvm_put_be16(out + TXTS_DPORT, e[i].dport);
		out[TXTS_PROTO] = e[i].proto;
		memset(out + TXTS_PAD, 0, 3);
		onvm_put_be64(out + TXTS_TS, e[i].ts);
	}
}

void
rsync_txts_decode(const uint8_t *payload, size_t i, struct rsync_txts_entry *e)
{
	const uint8_t *p = payload + i * RSYNC_TXTS_WIRE_LEN;

	memset(e, 0, sizeof(*e));
	e->src_ip = onvm_get_be32(p + TXTS_SRC_IP);
	e->dst_ip = onvm_get_be32(p + TXTS_DST_IP);
	e->sport = onvm_get_be16(p + TXTS_SPORT);
	e->dport = onvm_get_be16(p + TXTS_DPORT);
	e->proto = p[TXTS_PROTO];
	e->ts = onvm_get_be64(p + TXTS_TS);
}

void
rsync_state_rec_put(uint8_t *out, uint16_t region, uint64_t offset, uint16_t len)
{
	onvm_put_be16(out + REC_REGION, region);
	onvm_put_be16(out + REC_LEN, len);
	onvm_put_be64(out + REC_OFFSET, offset);
}

bool
rsync_state_rec_next(const uint8_t *payload, uint32_t len, uint32_t *pos,
		     struct rsync_state_rec *r)
{
	const uint8_t *p = payload + *pos;

	if (*pos + RSYNC_REC_HDR_LEN > len)
		return false;
	r->region = onvm_get_be16(p + REC_REGION);
	r->len = onvm_get_be16(p + REC_LEN);
	r->offset = onvm_get_be64(p + REC_OFFSET);
	r->data = p + RSYNC_REC_HDR_LEN;
	*pos += RSYNC_REC_HDR_LEN + r->len;
	return true;
}

/* Whether a CHECKPOINT payload is state records that fill it exactly, each
 * of at least one byte, in a state region, not wrapping.  O(records). */
static bool
state_recs_valid(const uint8_t *pl, uint32_t len)
{
	uint32_t pos = 0;

	while (pos < len) {
		uint16_t region, n;
		uint64_t off;

		if (len - pos < RSYNC_REC_HDR_LEN)
			return false;
		region = onvm_get_be16(pl + pos + REC_REGION);
		n = onvm_get_be16(pl + pos + REC_LEN);
		off = onvm_get_be64(pl + pos + REC_OFFSET);
		if (n == 0 || region >= RSYNC_REGION_MAX || off > UINT64_MAX - n ||
		    len - pos - RSYNC_REC_HDR_LEN < n)
			return false;
		pos += RSYNC_REC_HDR_LEN + n;
	}
	return true;
}

static void
meta_decode(const uint8_t *p, struct rsync_meta *m)
{
	m->prev_txid = onvm_get_be64(p + META_PREV_TXID);
	m->cut_id = onvm_get_be64(p + META_CUT_ID);
	m->cut_ts = onvm_get_be64(p + META_CUT_TS);
	m->nd_cut = onvm_get_be64(p + META_ND_CUT);
	m->txts_entries = onvm_get_be32(p + META_TXTS_ENTRIES);
	m->state_frags = onvm_get_be32(p + META_STATE_FRAGS);
	m->state_bytes = onvm_get_be64(p + META_STATE_BYTES);
	m->pkts = onvm_get_be32(p + META_PKTS);
	m->clock = onvm_get_be64(p + META_CLOCK);
}

static void
meta_encode(const struct rsync_meta *m, uint8_t *p)
{
	onvm_put_be64(p + META_PREV_TXID, m->prev_txid);
	onvm_put_be64(p + META_CUT_ID, m->cut_id);
	onvm_put_be64(p + META_CUT_TS, m->cut_ts);
	onvm_put_be64(p + META_ND_CUT, m->nd_cut);
	onvm_put_be32(p + META_TXTS_ENTRIES, m->txts_entries);
	onvm_put_be32(p + META_STATE_FRAGS, m->state_frags);
	onvm_put_be64(p + META_STATE_BYTES, m->state_bytes);
	onvm_put_be32(p + META_PKTS, m->pkts);
	onvm_put_be32(p + META_RESERVED, 0);
	onvm_put_be64(p + META_CLOCK, m->clock);
}

/* The fixed payload length of a type; -1 for the fragment types. */
static int
fixed_len(uint8_t type)
{
	switch (type) {
	case RSYNC_VOTE:
	case RSYNC_COMMIT:
	case RSYNC_ACK:
	case RSYNC_REPLAY_CANCEL:
	case RSYNC_PROTECT:
		return 0;
	case RSYNC_ABORT:
		return RSYNC_ABORT_WIRE_LEN;
	case RSYNC_LOG_TRIM:
		return RSYNC_LOG_TRIM_WIRE_LEN;
	case RSYNC_REPLAY_START:
		return RSYNC_REPLAY_START_WIRE_LEN;
	case RSYNC_REPLAY_END:
		return RSYNC_REPLAY_END_WIRE_LEN;
	case RSYNC_HEARTBEAT:
		return RSYNC_HEARTBEAT_WIRE_LEN;
	case RSYNC_REPLAY_ACK:
		return RSYNC_REPLAY_ACK_WIRE_LEN;
	default:
		return -1;
	}
}

/* Types that name a transaction in the header. */
static bool
has_txid(uint8_t type)
{
	return type == RSYNC_PREPARE || type == RSYNC_VOTE || type == RSYNC_COMMIT ||
	       type == RSYNC_ACK || type == RSYNC_ABORT || type == RSYNC_CHECKPOINT;
}

/* Whether `role` ever sends `type`: the primary drives the transactions
 * and trims the log, the standby votes and acknowledges, the predecessor
 * starts and ends the replay, which the standby echoes back; anyone sends
 * a HEARTBEAT.  A stateless chain's primary also sends REPLAY_ACK: the log
 * again from a timestamp its root could not take (sl_peer.c). */
static bool
role_sends(uint8_t role, uint8_t type)
{
	switch (type) {
	case RSYNC_PREPARE:
	case RSYNC_COMMIT:
	case RSYNC_ABORT:
	case RSYNC_CHECKPOINT:
	case RSYNC_LOG_TRIM:
		return role == RSYNC_ROLE_PRIMARY;
	case RSYNC_VOTE:
	case RSYNC_ACK:
		return role == RSYNC_ROLE_STANDBY;
	case RSYNC_REPLAY_ACK:
		return role == RSYNC_ROLE_STANDBY || role == RSYNC_ROLE_PRIMARY;
	case RSYNC_REPLAY_START:
	case RSYNC_REPLAY_END:
		return role == RSYNC_ROLE_PREDECESSOR || role == RSYNC_ROLE_STANDBY;
	case RSYNC_REPLAY_CANCEL:
		return role == RSYNC_ROLE_PREDECESSOR;
	case RSYNC_PROTECT: /* and echoed by the new primary */
		return role == RSYNC_ROLE_PREDECESSOR || role == RSYNC_ROLE_PRIMARY;
	default: /* HEARTBEAT */
		return role >= RSYNC_ROLE_PREDECESSOR && role <= RSYNC_ROLE_STANDBY;
	}
}

/*
 * Every check that needs only the header and the payload (not the CRC, not
 * the key).  Fills m->u on success.
 */
static enum rsync_rx_reason
check_fields(const struct rsync_hdr *h, const uint8_t *pl, struct rsync_msg *m)
{
	bool frag_type = h->type == RSYNC_PREPARE || h->type == RSYNC_CHECKPOINT;
	int flen = fixed_len(h->type);

	/* FULL belongs to a transaction's fragments, RESYNC to a VOTE or a
	 * HEARTBEAT (asking for a full cut), or to the answer to a
	 * REPLAY_START or a PROTECT (refusing it). */
	if (((h->flags & RSYNC_F_FULL) && !frag_type) ||
	    ((h->flags & RSYNC_F_RUNNING) &&
	     (h->type != RSYNC_HEARTBEAT || h->role == RSYNC_ROLE_PREDECESSOR)) ||
	    ((h->flags & RSYNC_F_RESYNC) && h->type != RSYNC_VOTE && h->type != RSYNC_HEARTBEAT &&
	     !(h->type == RSYNC_REPLAY_START && h->role == RSYNC_ROLE_STANDBY) &&
	     !(h->type == RSYNC_PROTECT && h->role == RSYNC_ROLE_PRIMARY)))
		return RSYNC_RX_BAD_FLAGS;
	if (h->frag_count == 0 || h->frag_seq >= h->frag_count)
		return RSYNC_RX_BAD_FRAG;
	if (!frag_type && (h->frag_seq != 0 || h->frag_count != 1))
		return RSYNC_RX_BAD_FRAG;
	if (h->type == RSYNC_CHECKPOINT && h->frag_seq == 0)
		return RSYNC_RX_BAD_FRAG; /* fragment 0 is always the META piece */
	if (h->type == RSYNC_PREPARE && (h->frag_seq == 0) != (h->region == RSYNC_REGION_META))
		return RSYNC_RX_BAD_REGION;
	if (has_txid(h->type) ? h->txid == 0 : h->txid != 0)
		return RSYNC_RX_BAD_FIELD;
	if (!role_sends(h->role, h->type))
		return RSYNC_RX_BAD_ROLE;
	if (h->sender_run == 0)
		return RSYNC_RX_BAD_FIELD;
	if (!frag_type) {
		if (h->len != flen)
			return RSYNC_RX_BAD_LENGTH;
		if (h->region != 0 || h->offset != 0)
			return RSYNC_RX_BAD_REGION;
	}
	switch (h->type) {
	case RSYNC_PREPARE:
		if (h->region == RSYNC_REGION_META) {
			struct rsync_meta *mt = &m->u.meta;
			uint64_t txts_frags;

			if (h->len != RSYNC_META_WIRE_LEN)
				return RSYNC_RX_BAD_LENGTH;
			if (h->offset != 0)
				return RSYNC_RX_BAD_REGION;
			meta_decode(pl, mt);
			/* 1 META + TxTs pieces + state pieces = count */
			if (mt->state_frags >= h->frag_count || mt->prev_txid >= h->txid ||
			    (mt->cut_id == 0 && (mt->cut_ts != 0 || mt->state_frags != 0)))
				return RSYNC_RX_BAD_FIELD;
			/* A full transaction carries its cut. */
			if ((h->flags & RSYNC_F_FULL) && mt->cut_id == 0)
				return RSYNC_RX_BAD_FIELD;
			/* A packet raises one flow's entry at most. */
			if (onvm_get_be32(pl + META_RESERVED) != 0 || mt->txts_entries > mt->pkts)
				return RSYNC_RX_BAD_FIELD;
			/* Every piece carries at least one entry (one byte) and
			 * at most RSYNC_MAX_PAYLOAD bytes; 64-bit arithmetic,
			 * so no product overflows. */
			txts_frags = (uint64_t)h->frag_count - 1 - mt->state_frags;
			if ((uint64_t)mt->txts_entries * RSYNC_TXTS_WIRE_LEN >
				    txts_frags * RSYNC_MAX_PAYLOAD ||
			    txts_frags > mt->txts_entries ||
			    mt->state_bytes > (uint64_t)mt->state_frags * RSYNC_MAX_PAYLOAD ||
			    mt->state_frags > mt->state_bytes)
				return RSYNC_RX_BAD_FIELD;
		} else if (h->region == RSYNC_REGION_TXTS) {
			if (h->len == 0 || h->len % RSYNC_TXTS_WIRE_LEN != 0)
				return RSYNC_RX_BAD_LENGTH;
			/* Pieces 1 .. seq hold the delta from offset 0, each at
			 * most RSYNC_MAX_PAYLOAD bytes. */
			if (h->offset % RSYNC_TXTS_WIRE_LEN != 0 ||
			    h->offset + h->len > (uint64_t)h->frag_seq * RSYNC_MAX_PAYLOAD)
				return RSYNC_RX_BAD_REGION;
			for (uint32_t i = 0; i < h->len / RSYNC_TXTS_WIRE_LEN; i++) {
				const uint8_t *e = pl + (size_t)i * RSYNC_TXTS_WIRE_LEN;

				if (e[TXTS_PAD] != 0 || e[TXTS_PAD + 1] != 0 ||
				    e[TXTS_PAD + 2] != 0 || onvm_get_be64(e + TXTS_TS) == 0)
					return RSYNC_RX_BAD_FIELD;
			}
		} else {
			return RSYNC_RX_BAD_REGION;
		}
		break;
	case RSYNC_CHECKPOINT:
		if (h->len == 0)
			return RSYNC_RX_BAD_LENGTH;
		/* Where its bytes go is in its records. */
		if (h->region != 0 || h->offset != 0)
			return RSYNC_RX_BAD_REGION;
		if (!state_recs_valid(pl, h->len))
			return RSYNC_RX_BAD_FIELD;
		break;
	case RSYNC_ABORT:
		m->u.abort.through_txid = onvm_get_be64(pl + ABORT_THROUGH_TXID);
		if (m->u.abort.through_txid < h->txid)
			return RSYNC_RX_BAD_FIELD;
		break;
	case RSYNC_LOG_TRIM:
		m->u.trim.watermark = onvm_get_be64(pl + TRIM_WATERMARK);
		if (m->u.trim.watermark == 0)
			return RSYNC_RX_BAD_FIELD;
		break;
	case RSYNC_REPLAY_START:
		m->u.replay_start.after_ts = onvm_get_be64(pl + RSTART_AFTER_TS);
		m->u.replay_start.newest_ts = onvm_get_be64(pl + RSTART_NEWEST_TS);
		if (m->u.replay_start.newest_ts < m->u.replay_start.after_ts)
			return RSYNC_RX_BAD_FIELD;
		break;
	case RSYNC_REPLAY_END:
		m->u.replay_end.last_ts = onvm_get_be64(pl + REND_LAST_TS);
		m->u.replay_end.count = onvm_get_be64(pl + REND_COUNT);
		if ((m->u.replay_end.count == 0) != (m->u.replay_end.last_ts == 0))
			return RSYNC_RX_BAD_FIELD;
		break;
	case RSYNC_HEARTBEAT:
		m->u.heartbeat.txid = onvm_get_be64(pl + HB_TXID);
		m->u.heartbeat.cut_ts = onvm_get_be64(pl + HB_CUT_TS);
		break;
	case RSYNC_REPLAY_ACK:
		m->u.replay_ack.next_ts = onvm_get_be64(pl + RACK_NEXT_TS);
		m->u.replay_ack.gap_ts = onvm_get_be64(pl + RACK_GAP_TS);
		/* a gap is a timestamp past the next one expected */
		if (m->u.replay_ack.next_ts == 0 ||
		    (m->u.replay_ack.gap_ts != 0 && m->u.replay_ack.gap_ts <= m->u.replay_ack.next_ts))
			return RSYNC_RX_BAD_FIELD;
		break;
	default: /* VOTE, COMMIT, ACK: nothing more */
		break;
	}
	return RSYNC_RX_OK;
}

enum rsync_rx_reason
rsync_decode(const uint8_t *frame, size_t len, struct rsync_auth *auth, struct rsync_msg *out)
{
	const uint8_t *hp = frame + RSYNC_ETH_LEN, *pl;
	struct rsync_msg m;
	enum rsync_rx_reason r;
	bool hmac;

	if (len < RSYNC_ETH_LEN)
		return RSYNC_RX_SHORT;
	if (onvm_get_be16(frame + ETH_TYPE_OFF) != RSYNC_ETHERTYPE)
		return RSYNC_RX_NOT_RSYNC;
	if (len < RSYNC_ETH_LEN + RSYNC_HDR_LEN)
		return RSYNC_RX_SHORT;
	memset(&m, 0, sizeof(m));
	hdr_decode(hp, &m.h);
	if (m.h.version != RSYNC_VERSION)
		return RSYNC_RX_BAD_VERSION;
	if (m.h.type == 0 || m.h.type >= RSYNC_TYPE_MAX)
		return RSYNC_RX_BAD_TYPE;
	hmac = (m.h.flags & RSYNC_F_HMAC) != 0;
	if ((m.h.flags & ~RSYNC_F_KNOWN) != 0 || (!hmac && m.h.key_id != 0))
		return RSYNC_RX_BAD_FLAGS;
	if (m.h.reserved != 0)
		return RSYNC_RX_BAD_RESERVED;
	if (auth != NULL && !hmac)
		return RSYNC_RX_AUTH_MISSING;
	if (auth == NULL && hmac)
		return RSYNC_RX_AUTH_UNEXPECTED;
	/* Beyond RSYNC_MAX_PAYLOAD is refused even when a jumbo frame holds
	 * it: the encoder never writes it, so no peer of ours sends it. */
	if (m.h.len > RSYNC_MAX_PAYLOAD ||
	    (size_t)RSYNC_ETH_LEN + RSYNC_HDR_LEN + m.h.len + (hmac ? RSYNC_HMAC_LEN : 0) > len)
		return RSYNC_RX_BAD_LENGTH;
	pl = hp + RSYNC_HDR_LEN;
	r = check_fields(&m.h, pl, &m);
	if (r != RSYNC_RX_OK)
		return r;
	if (msg_crc(hp, pl, m.h.len) != m.h.crc)
		return RSYNC_RX_BAD_CRC;
	if (auth != NULL) {
		if (m.h.key_id != rsync_auth_key_id(auth))
			return RSYNC_RX_AUTH_KEY;
		if (!rsync_auth_check(auth, hp, RSYNC_HDR_LEN, pl, m.h.len, pl + m.h.len))
			return RSYNC_RX_AUTH_FAILED;
	}
	m.payload = pl;
	memcpy(m.dst_mac, frame, 6);
	memcpy(m.src_mac, frame + 6, 6);
	*out = m;
	return RSYNC_RX_OK;
}

int
rsync_encode(uint8_t *buf, size_t buflen, const uint8_t dst_mac[6], const uint8_t src_mac[6],
	     const struct rsync_msg *msg, const void *payload, size_t payload_len,
	     struct rsync_auth *auth)
{
	uint8_t *hp = buf + RSYNC_ETH_LEN, *pl = hp + RSYNC_HDR_LEN;
	struct rsync_hdr h = msg->h;
	struct rsync_msg check;
	int flen = fixed_len(h.type);
	size_t plen;

	if (h.type == 0 || h.type >= RSYNC_TYPE_MAX)
		return -1;
	if (h.type == RSYNC_PREPARE && h.region == RSYNC_REGION_META)
		plen = RSYNC_META_WIRE_LEN;
	else if (flen >= 0)
		plen = (size_t)flen;
	else if (payload != NULL || payload_len == 0)
		plen = payload_len; /* a TxTs or state piece: the caller's bytes */
	else
		return -1;
	if (plen > RSYNC_MAX_PAYLOAD ||
	    buflen < RSYNC_ETH_LEN + RSYNC_HDR_LEN + plen + (auth != NULL ? RSYNC_HMAC_LEN : 0))
		return -1;
	memcpy(buf, dst_mac, 6);
	memcpy(buf + 6, src_mac, 6);
	onvm_put_be16(buf + ETH_TYPE_OFF, RSYNC_ETHERTYPE);
	switch (h.type) {
	case RSYNC_PREPARE:
		if (h.region == RSYNC_REGION_META)
			meta_encode(&msg->u.meta, pl);
		else if (plen > 0)
			memcpy(pl, payload, plen);
		break;
	case RSYNC_CHECKPOINT:
		if (plen > 0)
			memcpy(pl, payload, plen);
		break;
	case RSYNC_ABORT:
		onvm_put_be64(pl + ABORT_THROUGH_TXID, msg->u.abort.through_txid);
		break;
	case RSYNC_LOG_TRIM:
		onvm_put_be64(pl + TRIM_WATERMARK, msg->u.trim.watermark);
		break;
	case RSYNC_REPLAY_START:
		onvm_put_be64(pl + RSTART_AFTER_TS, msg->u.replay_start.after_ts);
		onvm_put_be64(pl + RSTART_NEWEST_TS, msg->u.replay_start.newest_ts);
		break;
	case RSYNC_REPLAY_END:
		onvm_put_be64(pl + REND_LAST_TS, msg->u.replay_end.last_ts);
		onvm_put_be64(pl + REND_COUNT, msg->u.replay_end.count);
		break;
	case RSYNC_HEARTBEAT:
		onvm_put_be64(pl + HB_TXID, msg->u.heartbeat.txid);
		onvm_put_be64(pl + HB_CUT_TS, msg->u.heartbeat.cut_ts);
		break;
	case RSYNC_REPLAY_ACK:
		onvm_put_be64(pl + RACK_NEXT_TS, msg->u.replay_ack.next_ts);
		onvm_put_be64(pl + RACK_GAP_TS, msg->u.replay_ack.gap_ts);
		break;
	default:
		break;
	}
	h.version = RSYNC_VERSION;
	h.len = (uint16_t)plen;
	h.flags = (uint8_t)((h.flags & (RSYNC_F_RETRANS | RSYNC_F_FULL | RSYNC_F_RESYNC |
					RSYNC_F_RUNNING)) |
			    (auth != NULL ? RSYNC_F_HMAC : 0));
	h.key_id = auth != NULL ? rsync_auth_key_id(auth) : 0;
	h.reserved = 0;
	h.crc = 0;
	/* Never send what a peer refuses. */
	memset(&check, 0, sizeof(check));
	if (check_fields(&h, pl, &check) != RSYNC_RX_OK)
		return -1;
	hdr_encode(&h, hp);
	h.crc = msg_crc(hp, pl, plen);
	onvm_put_be32(hp + OFF_CRC, h.crc);
	if (auth != NULL && rsync_auth_sign(auth, hp, RSYNC_HDR_LEN, pl, plen, pl + plen) < 0)
		return -1;
	return (int)(RSYNC_ETH_LEN + RSYNC_HDR_LEN + plen + (auth != NULL ? RSYNC_HMAC_LEN : 0));
}

enum rsync_run_heard
rsync_peer_run_heard(struct rsync_peer_runs *r, uint64_t run)
{
	if (run == r->cur) {
		r->again_n = 0;
		return RSYNC_RUN_SAME;
	}
	if (r->cur == 0) {
		r->cur = run;
		return RSYNC_RUN_SAME;
	}
	for (uint32_t i = 0; i < RSYNC_RUNS_REPLACED; i++) {
		if (r->replaced[i] != run)
			continue;
		r->again_n = r->again == run ? r->again_n + 1 : 1;
		r->again = run;
		if (r->again_n < RSYNC_RUN_LIVE_AFTER)
			return RSYNC_RUN_REPLACED;
		/* alive after all: current again, the other in its place */
		r->replaced[i] = r->cur;
		r->cur = run;
		r->again_n = 0;
		return RSYNC_RUN_NEW;
	}
	r->replaced[r->next] = r->cur;
	r->next = (r->next + 1) % RSYNC_RUNS_REPLACED;
	r->cur = run;
	r->again_n = 0;
	return RSYNC_RUN_NEW;
}
