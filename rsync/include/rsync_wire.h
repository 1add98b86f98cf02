/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * RSync's wire format (docs/spec.md section 6; docs/wire-format.md): the messages
 * the primary, the standby and the predecessor of a protected chain exchange
 * over their node-to-node links, as Ethernet frames with EtherType 0x88B6.
 * Encoding and decoding only, no I/O.
 *
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |   version=5   |     type      |     flags     |    key id     |  0
 *  +---------------+---------------+---------------+---------------+
 *  |           chain id            |        payload length         |  4
 *  +-------------------------------+-------------------------------+
 *  |                             epoch                             |  8
 *  +---------------------------------------------------------------+
 *  |                 CRC32C (header with this field 0, payload)    | 12
 *  +---------------------------------------------------------------+
 *  |                   transaction id (64 bits)                    | 16
 *  |                                                               |
 *  +-------------------------------+-------------------------------+
 *  |       fragment sequence       |        fragment count         | 24
 *  +-------------------------------+---------------+---------------+
 *  |           region id           |  sender role  |  reserved (0) | 28
 *  +-------------------------------+---------------+---------------+
 *  |                   offset in the region (64 bits)              | 32
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                   sender's run id (64 bits)                   | 40
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |       receiver's run id, as the sender knows it (64 bits)     | 48
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |  payload (payload length bytes) ...                           | 56
 *  +---------------------------------------------------------------+
 *  |  HMAC-SHA256 (32 bytes) when flags & RSYNC_F_HMAC              |
 *  +---------------------------------------------------------------+
 *
 * Who sends a message is part of it, under the CRC and the HMAC: the
 * sender's role in the chain (a type is only ever sent by some roles, so a
 * message reflected back to its sender, or to the other peer, is refused),
 * the sender's run id -- random, drawn anew each time its process starts --
 * and the receiver's run id as the sender last heard it (0 before it has).
 * A receiver refuses what grants something (a VOTE, a COMMIT, a LOG_TRIM, a
 * REPLAY_START ...) unless it is addressed to its own run: a message
 * recorded before a restart is never authentic again after it, and a peer
 * that restarted is told apart from the one before (rsync_primary.h,
 * rsync_standby.h).
 *
 * Network byte order.  The CRC32C (Castagnoli, as iSCSI/SCTP: reflected,
 * initial value and final XOR 0xFFFFFFFF) covers the header with its CRC
 * field zero and the payload; it catches corruption.  The HMAC-SHA256, with
 * a key configured per peer, covers the header (CRC filled in) and the
 * payload; it stops forgery: with a key configured, a message without a
 * valid HMAC is dropped, whatever its type.  Bytes after the HMAC (or after
 * the payload without one) are Ethernet padding and ignored.
 *
 * A transaction (PREPARE) is split in fragments: fragment 0 is the META piece
 * (struct rsync_meta_wire), then TxTs pieces (region RSYNC_REGION_TXTS,
 * offset = byte offset in the transaction's TxTs delta, whole entries of
 * struct rsync_txts_wire), then state pieces (type CHECKPOINT, region and
 * offset 0).  A state piece's payload is one or more state records back to
 * back, each a run of bytes of one chain-wide region:
 *
 *  +-------------------------------+-------------------------------+
 *  |           region id           |         record length n       |  0
 *  +-------------------------------+-------------------------------+
 *  |                   offset in the region (64 bits)              |  4
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |  n bytes of state ...                                         | 12
 *  +---------------------------------------------------------------+
 *
 * so that many small scattered chunks (a delta cut) fill fragments as
 * contiguous state does: a transaction's fragment count follows its bytes.
 * Every fragment carries the transaction's fragment count.  Other messages
 * are one fragment (sequence 0, count 1) with the fixed payload of their
 * type.
 */
#ifndef RSYNC_WIRE_H
#define RSYNC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RSYNC_ETHERTYPE 0x88B6 /* IEEE 802 local experimental EtherType 2 */
/* 2: a flow's instance rank is picked by multiply-shift of its hash, not
 * `hash % n` (onvm_mgr/dataplane/router.c): nodes that disagree would hold a flow's
 * replicated state in another rank than the one its packets go to.
 * 3: CHECKPOINT payloads are state records (above).
 * 4: the header names the sender's role and run, and the receiver's run;
 *    REPLAY_ACK, REPLAY_CANCEL, a refused REPLAY_START.
 * 5: a flow's rank is its hash's bucket placed by jump consistent hashing
 *    (router.c), not multiply-shift: as for 2, nodes must agree. */
#define RSYNC_VERSION 5
#define RSYNC_ETH_LEN 14

/* An RSync frame, by its EtherType (a port may carry other frames too). */
static inline bool
rsync_is_frame(const uint8_t *frame, size_t len)
{
	return len >= RSYNC_ETH_LEN && frame[12] == (RSYNC_ETHERTYPE >> 8) &&
	       frame[13] == (RSYNC_ETHERTYPE & 0xff);
}
#define RSYNC_HDR_LEN 56
#define RSYNC_HMAC_LEN 32
#define RSYNC_KEY_MAX 64	  /* HMAC key bytes */
#define RSYNC_MTU 1500		  /* Ethernet payload the encoder may fill */
/* Payload bytes a fragment may carry with an HMAC (the encoder's limit). */
#define RSYNC_MAX_PAYLOAD (RSYNC_MTU - RSYNC_HDR_LEN - RSYNC_HMAC_LEN)
#define RSYNC_MAX_FRAME (RSYNC_ETH_LEN + RSYNC_MTU)

/* Region ids above the state regions'. */
#define RSYNC_REGION_META 0xFFFF
#define RSYNC_REGION_TXTS 0xFFFE
#define RSYNC_REGION_MAX  0xFF00 /* state regions are 0 .. RSYNC_REGION_MAX - 1 */

/* Flag bits. */
#define RSYNC_F_HMAC	0x01 /* an HMAC-SHA256 follows the payload */
#define RSYNC_F_RETRANS 0x02 /* a retransmission (statistics only) */
/* PREPARE and CHECKPOINT: the transaction's cut is whole -- every chunk of
 * every NF's state, a delta over nothing -- sent for a standby that asked to
 * resynchronise.  Every fragment of the transaction carries it. */
#define RSYNC_F_FULL	0x04
/* VOTE or HEARTBEAT (standby -> primary): the standby's copy of the state
 * is not whole (it started after the chain's first transaction, or one of
 * its NFs was restarted), or it has applied nothing yet: it asks for a full
 * cut.  On the standby's answer to REPLAY_START: it refuses to take over
 * (it is not in sync), and the predecessor gives the failover up. */
#define RSYNC_F_RESYNC	0x08
/* HEARTBEAT to the predecessor: the sender runs the chain -- a primary not
 * fenced, or a standby that took over.  A restarted predecessor follows
 * only such a node (the others may be at a newer epoch too: an empty
 * standby placed after a failover, a fenced primary). */
#define RSYNC_F_RUNNING 0x10
#define RSYNC_F_KNOWN	(RSYNC_F_HMAC | RSYNC_F_RETRANS | RSYNC_F_FULL | RSYNC_F_RESYNC | \
			 RSYNC_F_RUNNING)

/* The sender's part in the chain (header field `role`). */
enum rsync_role {
	RSYNC_ROLE_PREDECESSOR = 1,
	RSYNC_ROLE_PRIMARY = 2,
	RSYNC_ROLE_STANDBY = 3,
};

enum rsync_msg_type {
	RSYNC_PREPARE = 1,	/* primary -> standby: a transaction's META / TxTs fragments */
	RSYNC_VOTE = 2,		/* standby -> primary: txid staged whole and verified */
	RSYNC_COMMIT = 3,	/* primary -> standby: apply every transaction up to txid */
	RSYNC_ACK = 4,		/* standby -> primary: applied up to txid */
	RSYNC_ABORT = 5,	/* primary -> standby: discard txid .. through_txid */
	RSYNC_CHECKPOINT = 6,	/* primary -> standby: a transaction's state fragments */
	RSYNC_LOG_TRIM = 7,	/* primary -> predecessor: drop log entries <= watermark */
	RSYNC_REPLAY_START = 8, /* predecessor -> standby: take over, replay follows */
	RSYNC_REPLAY_END = 9,	/* predecessor -> standby: the replay is complete */
	RSYNC_HEARTBEAT = 10,	/* any -> peer: liveness, its run, progress */
	RSYNC_REPLAY_ACK = 11,	/* standby -> predecessor: the replay received so far;
				 * a stateless primary's: its log again from next_ts */
	RSYNC_REPLAY_CANCEL = 12, /* predecessor -> standby: never take over at this epoch */
	RSYNC_PROTECT = 13,	/* predecessor -> the node that took over: be the chain's
				 * primary, a new standby on the sync link; echoed */
	RSYNC_TYPE_MAX,
};

/* A decoded header, host byte order. */
struct rsync_hdr {
	uint8_t version;
	uint8_t type;	/* enum rsync_msg_type */
	uint8_t flags;	/* RSYNC_F_* */
	uint8_t key_id; /* 0 without HMAC */
	uint16_t chain;
	uint16_t len;	/* payload bytes */
	uint32_t epoch;
	uint32_t crc;
	uint64_t txid;
	uint16_t frag_seq;
	uint16_t frag_count;
	uint16_t region;
	uint8_t role;	       /* enum rsync_role of the sender */
	uint8_t reserved;
	uint64_t offset;
	uint64_t sender_run;   /* never 0 */
	uint64_t receiver_run; /* 0: not known to the sender yet */
};

/* Fixed payloads (network byte order on the wire; these are host order). */

/* PREPARE fragment 0, region RSYNC_REGION_META (48 bytes on the wire). */
struct rsync_meta {
	uint64_t prev_txid;   /* the transaction this one follows (0: none yet) */
	uint64_t cut_id;      /* consistent cut carried (0: none) */
	uint64_t cut_ts;      /* the cut's timestamp: state reflects packets <= cut_ts */
	uint64_t nd_cut;	      /* the cut id the stage's release waits for (0: none) */
	uint32_t txts_entries; /* TxTs delta entries in the transaction */
	uint32_t state_frags;  /* CHECKPOINT fragments in the transaction */
	uint64_t state_bytes;  /* bytes of those fragments' payloads */
	uint32_t pkts;	       /* packets the stage holds (>= txts_entries) */
	/* The chain's clock when the stage closed (ns): the primary's
	 * CLOCK_MONOTONIC plus its chain clock offset.  The NFs' time stamps
	 * in the cut are of this clock, which a standby carries on after a
	 * takeover (rsync_standby_primary_clock()). */
	uint64_t clock;
};
#define RSYNC_META_WIRE_LEN 64

/* One TxTs entry (24 bytes on the wire): a flow and its highest released
 * timestamp. */
struct rsync_txts_entry {
	uint32_t src_ip, dst_ip;
	uint16_t sport, dport;
	uint8_t proto;
	uint64_t ts;
};
#define RSYNC_TXTS_WIRE_LEN 24

/* One state record of a CHECKPOINT payload (12 bytes of header, then its
 * bytes). */
#define RSYNC_REC_HDR_LEN 12
struct rsync_state_rec {
	uint16_t region;     /* chain-wide region, < RSYNC_REGION_MAX */
	uint16_t len;	     /* bytes, >= 1 */
	uint64_t offset;     /* in the region; offset + len does not wrap */
	const uint8_t *data; /* into the payload */
};

/* VOTE, COMMIT, ACK: no payload (the header's txid says which).
 * ABORT: txid is the first discarded, the payload the last. */
struct rsync_abort {
	uint64_t through_txid;
};
#define RSYNC_ABORT_WIRE_LEN 8

struct rsync_log_trim {
	uint64_t watermark; /* entries with ts <= watermark may go */
};
#define RSYNC_LOG_TRIM_WIRE_LEN 8

struct rsync_replay_start {
	uint64_t after_ts;	/* the replay sends the logged packets > after_ts */
	uint64_t newest_ts;	/* newest timestamp logged when it started */
};
#define RSYNC_REPLAY_START_WIRE_LEN 16

struct rsync_replay_end {
	uint64_t last_ts; /* timestamp of the last replayed packet (0: none) */
	uint64_t count;	  /* packets replayed */
};
#define RSYNC_REPLAY_END_WIRE_LEN 16

/* HEARTBEAT: information, by role.  Primary: its newest released txid and
 * the newest timestamp its ingress admitted (the predecessor never stamps
 * at or below it, whatever its clock says after a restart).  Standby: its
 * newest applied txid and cut timestamp.  Predecessor: 0 and its newest
 * stamped timestamp. */
struct rsync_heartbeat {
	uint64_t txid;
	uint64_t cut_ts;
};
#define RSYNC_HEARTBEAT_WIRE_LEN 16

/* REPLAY_ACK: every replayed timestamp below next_ts was received (the
 * replay must deliver (after_ts, newest_ts] of its REPLAY_START whole and
 * in order); gap_ts, when not 0, a later one that arrived before them and
 * was dropped: the predecessor sends again from next_ts. */
struct rsync_replay_ack {
	uint64_t next_ts;
	uint64_t gap_ts;
};
#define RSYNC_REPLAY_ACK_WIRE_LEN 16

/* A decoded message.  `payload` points into the frame. */
struct rsync_msg {
	struct rsync_hdr h;
	const uint8_t *payload;
	union {
		struct rsync_meta meta;		      /* PREPARE, region META */
		struct rsync_abort abort;
		struct rsync_log_trim trim;
		struct rsync_replay_start replay_start;
		struct rsync_replay_end replay_end;
		struct rsync_heartbeat heartbeat;
		struct rsync_replay_ack replay_ack;
	} u;
	uint8_t src_mac[6];
	uint8_t dst_mac[6];
};

/* Why a received frame was not accepted; one counter array holds them all
 * (the session layer's reasons included). */
enum rsync_rx_reason {
	RSYNC_RX_OK = 0,
	RSYNC_RX_NOT_RSYNC,	/* EtherType is not 0x88B6 */
	RSYNC_RX_SHORT,		/* shorter than Ethernet + RSync headers */
	RSYNC_RX_BAD_VERSION,
	RSYNC_RX_BAD_TYPE,	/* type 0 or >= RSYNC_TYPE_MAX */
	RSYNC_RX_BAD_FLAGS,	/* unknown flag bits, or key id without HMAC */
	RSYNC_RX_BAD_RESERVED,	/* reserved field not 0 */
	RSYNC_RX_BAD_LENGTH,	/* past the frame or RSYNC_MAX_PAYLOAD; wrong for the type */
	RSYNC_RX_BAD_FRAG,	/* count 0, sequence >= count, or more than one for a control type */
	RSYNC_RX_BAD_REGION,	/* region/offset not valid for the type (META not fragment 0 ...) */
	RSYNC_RX_BAD_FIELD,	/* a payload field out of range (txid 0, TxTs entry length ...) */
	RSYNC_RX_BAD_ROLE,	/* no such role, or one that never sends this type */
	RSYNC_RX_BAD_CRC,
	RSYNC_RX_AUTH_MISSING,	/* a key is configured, the frame has no HMAC */
	RSYNC_RX_AUTH_UNEXPECTED, /* an HMAC but no key configured */
	RSYNC_RX_AUTH_KEY,	/* key id differs from the configured one */
	RSYNC_RX_AUTH_FAILED,	/* HMAC does not verify */
	/* Session layer (rsync_primary.h / rsync_standby.h / the manager units). */
	RSYNC_RX_UNKNOWN_PEER,	/* source MAC / port is not a configured peer */
	RSYNC_RX_UNKNOWN_CHAIN,	/* chain id not protected here */
	RSYNC_RX_STALE_EPOCH,	/* epoch below the current one */
	RSYNC_RX_WRONG_ROLE,	/* a type this role never receives */
	RSYNC_RX_UNKNOWN_TXN,	/* names a transaction not in flight (late duplicate) */
	RSYNC_RX_DUPLICATE,	/* a fragment already received */
	RSYNC_RX_MISMATCH,	/* fragment disagrees with the transaction (count, sizes) */
	RSYNC_RX_NO_ROOM,	/* staging full: the transaction cannot be held */
	RSYNC_RX_STALE_RUN,	/* addressed to another run of this node (recorded before a restart) */
	RSYNC_RX_PEER_RESTARTED, /* from a peer that restarted (its state is gone): refused */
	RSYNC_RX_REASON_MAX,
};

const char *rsync_rx_reason_str(enum rsync_rx_reason r);
const char *rsync_msg_type_str(uint8_t type);

/* HMAC-SHA256 key of one peer, with OpenSSL's MAC context fetched and keyed
 * once (per message OpenSSL 3.0 still allocates twice; rsync_auth.c).
 * Not thread-safe: one per thread. */
struct rsync_auth;

/* Returns NULL on a bad key (empty or > RSYNC_KEY_MAX) or OpenSSL failure. */
struct rsync_auth *rsync_auth_new(const uint8_t *key, size_t key_len, uint8_t key_id);
void rsync_auth_free(struct rsync_auth *a);

/*
 * Encode one frame into `buf` (at least RSYNC_MAX_FRAME bytes): Ethernet
 * header (dst, src, 0x88B6), RSync header from `h` (version, len and crc are
 * derived; flags gets RSYNC_F_HMAC and key_id the key's id when `auth` is
 * given), the payload, and the HMAC.  For types with a fixed payload
 * (PREPARE's META piece included) the host-order struct in `msg->u` is
 * encoded and `payload` is ignored; TxTs pieces (rsync_txts_encode()'d) and
 * state pieces pass their bytes in `payload`/`payload_len`.
 * Returns the frame length, or -1 if `h` cannot be encoded (unknown type,
 * payload too long, fragment numbering invalid).
 */
int rsync_encode(uint8_t *buf, size_t buflen, const uint8_t dst_mac[6], const uint8_t src_mac[6],
		 const struct rsync_msg *msg, const void *payload, size_t payload_len,
		 struct rsync_auth *auth);

/* Write a state record's header at `out` (RSYNC_REC_HDR_LEN bytes); its
 * `len` bytes follow. */
void rsync_state_rec_put(uint8_t *out, uint16_t region, uint64_t offset, uint16_t len);
/* The state record at `*pos` of a CHECKPOINT payload of `len` bytes,
 * `*pos` moved past it; false at the end.  Only for payloads
 * rsync_decode() accepted (it checks that the records fill the payload
 * exactly, each valid). */
bool rsync_state_rec_next(const uint8_t *payload, uint32_t len, uint32_t *pos,
			  struct rsync_state_rec *r);

/* Encode `n` TxTs entries into `out` (n * RSYNC_TXTS_WIRE_LEN bytes). */
void rsync_txts_encode(const struct rsync_txts_entry *e, size_t n, uint8_t *out);
/* Decode entry `i` of a TxTs piece's payload. */
void rsync_txts_decode(const uint8_t *payload, size_t i, struct rsync_txts_entry *e);

/*
 * Check and decode the `len`-byte frame at `frame`.  `auth` is the sender's
 * key, or NULL when none is configured.  Every field is validated as listed
 * in enum rsync_rx_reason (wire-level reasons only); on RSYNC_RX_OK `out`
 * holds the header, a pointer to the payload and the decoded fixed payload.
 */
enum rsync_rx_reason rsync_decode(const uint8_t *frame, size_t len, struct rsync_auth *auth,
				  struct rsync_msg *out);

/* CRC32C of `len` bytes (DPDK's rte_hash_crc underneath), standard
 * convention: rsync_crc32c("123456789", 9) == 0xE3069283. */
uint32_t rsync_crc32c(const void *data, size_t len);

/*
 * A peer's runs as this node heard them: the current one and the few it
 * replaced.  A frame of a replaced run (a HEARTBEAT reordered or
 * duplicated on the link, sent before the peer restarted) must not be
 * taken for yet another restart: refused, RSYNC_RX_PEER_RESTARTED.
 *
 * Yet a run replaced is not proven dead: one stray frame of a run the
 * history does not hold (from before this node restarted, older than the
 * history, or a recorded frame sent again) replaces the live run too.
 * The live run goes on sending where a straggler does not: heard
 * RSYNC_RUN_LIVE_AFTER times in a row, the current run unheard between,
 * it is current again (RSYNC_RUN_NEW: to its peer, a restart).
 */
#define RSYNC_RUNS_REPLACED 4
#define RSYNC_RUN_LIVE_AFTER 8

struct rsync_peer_runs {
	uint64_t cur; /* 0: none heard yet */
	uint64_t replaced[RSYNC_RUNS_REPLACED];
	uint32_t next; /* the oldest in replaced[] */
	uint64_t again;	     /* the replaced run last heard again ... */
	uint32_t again_n;    /* ... this many times in a row */
};

enum rsync_run_heard {
	RSYNC_RUN_SAME,	    /* the current run (or the first heard) */
	RSYNC_RUN_NEW,	    /* another: the peer restarted; now current */
	RSYNC_RUN_REPLACED, /* one this node heard replaced: ignore the frame */
};

/* What `run` (a frame's sender_run) says of the peer; updates `r`. */
enum rsync_run_heard rsync_peer_run_heard(struct rsync_peer_runs *r, uint64_t run);

#endif /* RSYNC_WIRE_H */
