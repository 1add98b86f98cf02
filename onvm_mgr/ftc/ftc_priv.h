/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_priv.h -- what the FTC files of the manager share: the node's one
 * record (`mgr_ftc_node`), written by the TX unit only once set up (the
 * RX unit only enqueues into `in_ring`; telemetry reads counters).
 */
#ifndef MGR_FTC_PRIV_H
#define MGR_FTC_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ring.h>

#include "ftc/ftc.h"
#include "ftc_hlog.h"
#include "ftc_seq.h"
#include "ftc_wire.h"
#include "ftc_xfer.h"
#include "mgr.h"
#include "onvm_ftc_ring.h"

#define FTC_INST_MAX (MGR_FTC_MAX_NF_NODES + 1)
#define FTC_IN_RING 4096   /* frames the RX unit hands over */
#define FTC_PAGE_SHIFT 12  /* a replica keeps state in 4 KB pages */
#define FTC_PAGE (1u << FTC_PAGE_SHIFT)
/* Frames are single mbufs: at most the pool's data room. */
#define FTC_FRAME_ROOM 2048u
#define FTC_VOIDS 8 /* voids the egress remembers per instance */

/* A replica's copy of one NF's regions: 4 KB pages, made on first write
 * (a region starts all zero, as the NF's does), found by (region, page). */
struct ftc_store {
	uint32_t slots;	  /* hash slots, a power of two */
	uint32_t pages;	  /* pages the arena holds */
	uint32_t used;	  /* pages made */
	uint64_t *keys;	  /* 1 + (region << 32 | page index); 0: empty */
	uint32_t *at;	  /* the page's index in the arena */
	uint8_t *arena;
};

/* One instance this node replicates. */
struct ftc_replica {
	uint16_t instance;
	bool tail;   /* this node ends its group: it writes held (the
		      * others pass its logs on, and the applied entry) */
	/* false on a node that took a failed one's place, until a whole-state
	 * update of the head (asked for with RESYNC) gave it a copy */
	bool synced;
	uint64_t resync_tsc;	 /* the last RESYNC sent */
	uint64_t unsynced_logs;	 /* logs passed on while not synced */
	uint64_t resets;	 /* whole-state updates applied */
	/* the group's applied entry: `first` (the member right after the
	 * head) has none to read; the others take the one the member before
	 * sent (0 until it has a copy) */
	bool first;
	uint64_t up_applied;
	bool broken;		 /* its store ran out of room: applies nothing more */
	bool too_small;		 /* a whole update broke it: RESYNC cannot repair it */
	uint64_t high;		 /* the highest number seen in its logs */
	/* fenced by a FETCH it answered: the dead incarnation's logs are
	 * dropped until the new one's whole update, numbered past every
	 * number this replica had seen then (fence_high) */
	bool fenced;
	uint64_t fence_high;
	uint64_t fenced_logs;
	void *seq_mem;
	uint32_t seq_slot;
	struct ftc_seq *seq;
	struct ftc_store store;
	uint64_t verdicts[FTC_SEQ_VERDICT_MAX];
	uint64_t applied_updates, applied_bytes, store_full;
};

/* A log part waiting to go to the next node (the node's own updates, and
 * logs it carries): a FIFO of these, each followed by its data. */
struct ftc_out_log {
	uint16_t instance;
	uint8_t part, parts;
	uint32_t len;
	uint64_t seq;
	uint64_t tsc; /* queued */
};

struct ftc_counters {
	uint64_t in_frames, in_propagating, in_full, in_bad[FTC_REASON_MAX];
	uint64_t in_plain;	   /* no FTC header on an FTC link: dropped */
	uint64_t in_bad_resets;	   /* a whole update numbered past what can be made */
	uint64_t in_foreign_logs;  /* of an instance this node has no part in */
	uint64_t logs_carried, carry_full;
	uint64_t own_updates, own_bytes, own_parts, own_log_full;
	uint64_t retransmits, retrans_parts, held_ahead, uncut;
	uint64_t out_packets, out_piggybacked_logs, out_propagating, out_too_big, out_copied;
	uint64_t out_no_mbuf;
	uint64_t held_packets_in, released, hold_full, held_max;
	uint64_t release_wait_cycles, release_wait_max;
	uint64_t feedback_tx, feedback_rx;
	uint64_t void_dropped;	   /* egress: needed a dead incarnation's lost update */
	uint64_t recovering_drops; /* packets in before this node's NF had its state */
	uint64_t xfer_bad[FTC_XFER_REASON_MAX]; /* state frames refused, by reason */
	uint64_t xfer_other;	   /* of another chain, or this node's own broadcast */
	uint64_t xfer_stale;	   /* an answer to a FETCH not this node's last */
	uint64_t xfer_forged;	   /* an answer numbered past 2^62: never made */
	uint64_t fetch_tries, pieces_in, pieces_out, fetch_answers, resync_in, resync_out;
	uint64_t full_asked;	   /* whole-state updates asked of this node's NF */
	uint64_t forgot;	   /* kept updates dropped for a whole-state one */
};

struct ftc_node {
	bool on;
	const struct mgr_ftc_cfg *cfg;
	int chain;
	uint16_t in_port, out_port;
	int fb_port; /* -1: none */
	bool forwarder, egress, head;
	/* ONVM_FTC_UNSAFE_EARLY_RELEASE (tests only): the egress releases
	 * without waiting for the held vector -- the bug the oracle must see */
	bool unsafe_early_release;
	uint8_t n_inst; /* the chain's NFs: instances 0 .. n_inst - 1 */
	uint16_t own;	/* head: its instance (= position) */
	uint16_t service;
	struct rte_ring *in_ring;
	uint64_t hz;
	uint64_t propagate_cycles, retrans_cycles;
	uint32_t frame_max;   /* bytes a frame out may have */
	uint32_t part_budget; /* bytes of records a log part may carry */

	/* what the chain's packets say, merged from every frame seen */
	uint64_t held[FTC_INST_MAX];
	uint64_t need[FTC_INST_MAX];
	bool held_dirty;	 /* held grew since the last frame out */
	uint64_t pending_tsc;	 /* the oldest thing waiting to go out (0: none) */

	/* replicas: the instances position - f .. position - 1 */
	uint8_t n_rep;
	struct ftc_replica rep[MGR_FTC_F_MAX];

	/* head: the NF's ring, its log of updates not held f + 1 times */
	struct onvm_ftc_ring *nf_ring;
	uint32_t nf_gen;	/* the slot generation nf_ring is of */
	uint16_t nf_slot;
	struct ftc_hlog *hlog;
	uint64_t own_sent;	/* the newest update queued out */
	uint64_t *sent_tsc;	/* when update s was last queued: [s % log_updates] */
	uint64_t held_ahead_seen;
	unsigned int retrans_backoff; /* rounds without progress (the wait doubles) */
	uint8_t *part_buf;

	/* the queue of log parts out */
	uint8_t *oq;
	uint64_t oq_size, oq_head, oq_tail; /* byte counters */

	/* egress: the buffer, packets with their needs */
	struct ftc_held_pkt {
		struct rte_mbuf *m;
		uint64_t tsc;
		uint64_t need[FTC_INST_MAX];
	} *hold;
	uint32_t hold_cap, hold_head, hold_n;
	uint64_t fb_last_tsc;
	bool fb_dirty;

	/* voids: each recovery of instance i (from update seq, its next span
	 * x 2^32 numbers void); every node keeps the last FTC_VOIDS of them (a
	 * dead incarnation's packet may come late) and passes on the one
	 * reaching furthest (ftc_last_void()) */
	struct ftc_void {
		uint64_t seq;
		uint8_t span;
	} voids[FTC_INST_MAX][FTC_VOIDS];
	unsigned int n_voids[FTC_INST_MAX];

	/* recovery (a node that took a failed one's place) */
	int state_port;		/* -1: none */
	bool ready;		/* its NF has its state: packets go through */
	bool recovering;	/* an NF node still fetching its NF's state */
	uint32_t nonce;
	uint64_t fetch_tsc;	/* the last FETCH */
	uint64_t last_in_tsc;	/* the last piece in */
	int cand;		/* the source being collected (-1: none) */
	uint64_t cand_seq;
	uint64_t fetch_high;	/* the highest number any answer had seen */
	uint32_t cand_pieces, cand_total; /* total 0: its END not in yet */
	bool heard[MGR_FTC_F_MAX];	  /* recover_from[k] answered */
	struct ftc_store fetched;
	uint8_t *piece_seen;	/* a bit a piece of the candidate's */
	uint32_t pieces_max;
	uint8_t *full_buf;	/* the whole-state update made of what was fetched */
	uint64_t full_cap;
	uint64_t resync_answered_tsc; /* head: the last RESYNC it answered */
	uint64_t start_ns, fetched_ns, ready_ns, loaded_seq;
	bool finish_failed;	/* the copy could not be made the NF's: logged once */

	struct ftc_counters c;
};

extern struct ftc_node mgr_ftc_node;

/* ftc_replica.c */
int ftc_store_init(struct ftc_store *s, uint64_t bytes);
/* Write `len` bytes at `offset` of `region`: 0, or -1 when the arena is
 * full (nothing written of what did not fit: counted by the caller). */
int ftc_store_write(struct ftc_store *s, uint16_t region, uint32_t offset, const uint8_t *b,
		    uint32_t len);
/* The page of `region` at byte `offset` (NULL: never written: zeros). */
const uint8_t *ftc_store_page(const struct ftc_store *s, uint16_t region, uint32_t offset);

void ftc_store_clear(struct ftc_store *s);

/* The void of instance `i` reaching furthest (NULL: never recovered). */
static inline const struct ftc_void *
ftc_last_void(const struct ftc_node *n, uint16_t i)
{
	const struct ftc_void *best = NULL;

	for (unsigned int k = 0; k < RTE_MIN(n->n_voids[i], (unsigned int)FTC_VOIDS); k++) {
		const struct ftc_void *v = &n->voids[i][k];

		if (best == NULL || v->seq + v->span * FTC_VOID_SPAN >
					    best->seq + best->span * FTC_VOID_SPAN)
			best = v;
	}
	return best;
}

/* The updates every member of `r`'s group from the head to this node
 * applied (0: one has no copy). */
static inline uint64_t
ftc_group_applied(const struct ftc_replica *r)
{
	uint64_t a = r->broken ? 0 : r->applied_updates;

	return r->first || a < r->up_applied ? a : r->up_applied;
}

/* ftc_in.c */
int ftc_in_poll(struct mgr_dp_ctx *ctx);
/* Instance `i` recovered from `s`, `span` x 2^32 numbers void: taken if
 * newer than what is known (the egress keeps the older ones too). */
void ftc_take_void(struct ftc_node *n, uint16_t i, uint64_t s, uint8_t span);

/* ftc_recover.c */
int ftc_recover_init(struct ftc_node *n);
/* A frame of the state transfer (version 3): handled, freed. */
void ftc_xfer_rx(struct mgr_dp_ctx *ctx, struct ftc_node *n, struct rte_mbuf *m);
/* TX unit, each poll: FETCH and RESYNC repeated, the state loaded. */
int ftc_recover_poll(struct mgr_dp_ctx *ctx, struct ftc_node *n, uint64_t now);


/* ftc_out.c */
/* A frame of the node's own for `port`: its MACs written (NULL: no mbuf,
 * counted); then sent `len` bytes long, padded to Ethernet's minimum. */
uint8_t *ftc_frame_new(struct ftc_node *n, uint16_t port, struct rte_mbuf **m);
void ftc_frame_send(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint32_t len, uint16_t port);
/* Queue every part of kept update `seq`; false if the queue had no room. */
bool ftc_queue_update(struct ftc_node *n, uint64_t seq);
/* Queue a log part for the next node; false when the queue is full. */
bool ftc_oq_push(struct ftc_node *n, uint16_t instance, uint8_t part, uint8_t parts,
		 uint64_t seq, const uint8_t *data, uint32_t len);
int ftc_out_poll(struct mgr_dp_ctx *ctx);

#endif /* MGR_FTC_PRIV_H */
