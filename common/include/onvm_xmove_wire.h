/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_xmove_wire.h -- the frames of a flow migration between two nodes
 * (0x88B5 version 4, docs/wire-format.md): packets handed to an instance
 * on the other node and back, a moving flow's copies, and the move's
 * control messages (the src node's SYNC, the exported STATE, the ND LOG,
 * the dst node's STATUS).  A codec only: no I/O, no DPDK; the manager's
 * onvm_mgr/elastic/move_peer.c does the rest.  Every decoder refuses what
 * it does not understand with a reason (enum onvm_xm_reason).
 */
#ifndef ONVM_XMOVE_WIRE_H
#define ONVM_XMOVE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define ONVM_XM_ETHERTYPE 0x88B5
#define ONVM_XM_VERSION 4
#define ONVM_XM_HDR_LEN 16  /* MACs, EtherType, version, type */
#define ONVM_XM_DATA_LEN 42 /* ... and a data frame's fields, before the packet */
#define ONVM_XM_FRAME_MAX 1514
#define ONVM_XM_STATE_CHUNK 1024 /* bytes of exported state per STATE frame */
#define ONVM_XM_LOG_MAX 24	 /* log entries per LOG frame */
#define ONVM_XM_ND_MAX 4	 /* ND values per entry (ONVM_MOVE_ND_MAX) */
#define ONVM_XM_INCLUDED_MAX 8192 /* ONVM_MOVE_INCLUDED_MAX */
/* A move's STATE in all: its included tags' sequence numbers, 8 bytes
 * each, then its records (ONVM_MOVE_XFER_MAX). */
#define ONVM_XM_STATE_MAX (8u * ONVM_XM_INCLUDED_MAX + (4u << 20))
#define ONVM_XM_METHOD_MAX 1 /* enum onvm_move_method */
#define ONVM_XM_STATE_MAXV 7 /* enum onvm_move_state */
#define ONVM_XM_FAIL_MAXV 13 /* enum onvm_move_fail */
#define ONVM_XM_ACTION_MAXV 3 /* enum onvm_action */

enum onvm_xm_type {
	/* data: a packet follows the fields */
	ONVM_XM_COPY = 1,     /* a moving flow's packet, copied for dst to reprocess */
	ONVM_XM_BUFFERED = 2, /* buffering's packet, sent to dst instead of src */
	ONVM_XM_HANDOFF = 3,  /* a moved flow's packet, to its instance there */
	ONVM_XM_RETURN = 4,   /* that instance's output, back to the chain */
	/* control, of one move (the src node's slot and gen) */
	ONVM_XM_SYNC = 16,   /* src node -> dst node: the move as src sees it */
	ONVM_XM_STATE = 17,  /* src node -> dst node: a piece of the export */
	ONVM_XM_LOG = 18,    /* src node -> dst node: log entries */
	ONVM_XM_STATUS = 19, /* dst node -> src node: the move as dst sees it */
};

enum onvm_xm_reason {
	ONVM_XM_OK = 0,
	ONVM_XM_NOT_XM,	     /* another EtherType or shim version: not ours (no error) */
	ONVM_XM_SHORT,	     /* cut short */
	ONVM_XM_BAD_TYPE,    /* an unknown type */
	ONVM_XM_BAD_FLAGS,   /* unknown flag bits */
	ONVM_XM_BAD_FIELD,   /* a field out of range, or set where the type has none */
	ONVM_XM_BAD_TAG,     /* a copy without a move tag, a handoff with one */
	ONVM_XM_BAD_LENGTH,  /* lengths that do not add up */
	ONVM_XM_BAD_RESERVED,
	ONVM_XM_REASON_MAX,
};

const char *onvm_xm_reason_str(enum onvm_xm_reason r);

/* A data frame's fields: the packet's metadata that travels with it. */
struct onvm_xm_data {
	uint8_t type;	      /* COPY .. RETURN */
	uint8_t chain_index;
	uint8_t action;	      /* RETURN: the NF's (enum onvm_action); else 0 */
	uint8_t flags;	      /* ONVM_XM_F_* */
	uint16_t service;     /* the moved service */
	uint16_t inst;	      /* COPY, BUFFERED, HANDOFF: the instance on the receiver */
	uint16_t chain_id;
	uint16_t destination; /* RETURN: the action's service or port; else 0 */
	uint8_t in_port;      /* where the packet entered the chain's node */
	uint8_t egress_port;
	uint32_t flow_hash;
	uint64_t tag;	      /* COPY, BUFFERED: the move's tag (src node's slot, gen) */
};
#define ONVM_XM_F_ND 0x01 /* a non-deterministic decision touched it */

/* The move as the src node sees it (SYNC). */
#define ONVM_XM_S_START_OUT 0x01 /* src's output before START is routed on */
#define ONVM_XM_S_END_OUT 0x02	 /* ... before END */
#define ONVM_XM_S_SRC_GONE 0x04	 /* src died or failed over */
#define ONVM_XM_S_EXPORTED 0x08	 /* state_len and n_included are final */
struct onvm_xm_sync {
	uint16_t service;
	uint16_t inst;	/* dst, on the receiver */
	uint8_t method; /* enum onvm_move_method */
	uint8_t state;	/* enum onvm_move_state at src's node */
	uint8_t flags;	/* ONVM_XM_S_* */
	uint8_t fail;	/* enum onvm_move_fail */
	uint64_t copies; /* copies (or buffered packets) sent so far; final once flipped */
	uint64_t state_len; /* bytes of STATE in all (included tags, then the records) */
	uint32_t n_included;
	uint64_t buckets[16]; /* ONVM_FLOW_BUCKETS bits */
};

struct onvm_xm_state {
	uint32_t offset, total;
	uint16_t len; /* 1 .. ONVM_XM_STATE_CHUNK */
	const uint8_t *bytes;
};

struct onvm_xm_log_entry {
	uint32_t flags; /* ONVM_MOVE_LOG_* */
	uint32_t n_nd;
	uint64_t nd[ONVM_XM_ND_MAX];
};
struct onvm_xm_log {
	uint64_t first; /* the first entry's sequence number, 1 or more */
	uint8_t count;	/* 1 .. ONVM_XM_LOG_MAX */
	struct onvm_xm_log_entry e[ONVM_XM_LOG_MAX];
};

/* The move as the dst node sees it (STATUS). */
#define ONVM_XM_T_OPEN 0x01	/* dst's IN marker is in; copies may come */
#define ONVM_XM_T_IMPORTED 0x02 /* dst imported the state, committed */
#define ONVM_XM_T_LOSSY 0x04	/* dst lacks a packet (a copy lost) or is gone */
struct onvm_xm_status {
	uint8_t mirror_slot;
	uint8_t state; /* enum onvm_move_state of the mirror */
	uint8_t fail;
	uint8_t flags; /* ONVM_XM_T_* */
	uint32_t nd_short;    /* ND values dst drew afresh (src's missing) */
	uint64_t state_acked; /* STATE bytes received in order */
	uint64_t log_next;    /* the first LOG entry not received */
	uint64_t copies_rcvd, dst_seen, imported_flows, reprocessed, skipped_included,
		nd_replayed, dst_dropped, copies_lost;
};

struct onvm_xm_ctl {
	uint8_t type; /* SYNC .. STATUS */
	uint8_t slot; /* the move's slot at src's node */
	uint32_t gen; /* ... and gen */
	union {
		struct onvm_xm_sync sync;
		struct onvm_xm_state state;
		struct onvm_xm_log log;
		struct onvm_xm_status status;
	} u;
};

/* The frame's type if it is 0x88B5 version 4 (a positive enum onvm_xm_type
 * value, not checked further), else -ONVM_XM_NOT_XM or -ONVM_XM_SHORT. */
int onvm_xm_peek(const uint8_t *f, size_t len);

/* Decode a data frame: its fields into *d; the packet starts at
 * ONVM_XM_DATA_LEN and is at least an Ethernet header. */
enum onvm_xm_reason onvm_xm_data_decode(const uint8_t *f, size_t len, struct onvm_xm_data *d);
/* Write the 42 bytes before the packet (`mac`: destination then source). */
void onvm_xm_data_encode(uint8_t *f, const uint8_t mac[12], const struct onvm_xm_data *d);

/* Decode a control frame into *c (a STATE's bytes point into f). */
enum onvm_xm_reason onvm_xm_ctl_decode(const uint8_t *f, size_t len, struct onvm_xm_ctl *c);
/* Encode one into f (room bytes); its length, or 0 if it does not fit or
 * a field is out of range. */
size_t onvm_xm_ctl_encode(uint8_t *f, size_t room, const uint8_t mac[12],
			  const struct onvm_xm_ctl *c);

#endif /* ONVM_XMOVE_WIRE_H */
