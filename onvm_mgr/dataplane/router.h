/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * router.h -- where does a packet go next?
 *
 * Pure decisions over the shared tables: classify a packet entering on a
 * port (flow rules, then the port's chain, then the default chain), and turn
 * an NF's action into a destination (an NF instance, a port, or a drop with a
 * reason).  No rings, no I/O: the RX/TX units do the moving, and the unit
 * tests drive these functions directly.
 */
#ifndef MGR_ROUTER_H
#define MGR_ROUTER_H

#include <stdbool.h>
#include <stdint.h>

#include "onvm_common.h"
#include "onvm_pkt_parse.h"

enum mgr_dest_kind {
	MGR_DEST_DROP = 0,
	MGR_DEST_NF,   /* id: NF slot (instance id) */
	MGR_DEST_PORT, /* id: port id */
	MGR_DEST_DONE, /* a move's copy, reprocessed: freed, not a drop */
	MGR_DEST_PEER, /* id: service -- its instance on another node (a cross-node move) */
	MGR_DEST_RETURN, /* id: port -- a peer's packet, back to its node (ONVM_PKT_F_PEER) */
};

/* Why a packet was dropped; each has a counter. */
enum mgr_drop_reason {
	MGR_DROP_NF_ACTION = 0, /* an NF returned DROP */
	MGR_DROP_NO_CHAIN,	/* no rule, port chain or default chain matched */
	MGR_DROP_NO_INSTANCE,	/* the service has no live instance */
	MGR_DROP_BAD_SERVICE,	/* TONF to a service id out of range */
	MGR_DROP_BAD_PORT,	/* OUT to a port that does not exist */
	MGR_DROP_BAD_ACTION,	/* action value not in enum onvm_action */
	MGR_DROP_CHAIN_END,	/* NEXT after the last step of a chain without exit */
	MGR_DROP_RING_FULL,	/* the NF's RX ring or a port ring was full */
	MGR_DROP_PORT_TX,	/* the port did not take the packet */
	MGR_DROP_NF_GONE,	/* queued for an NF that stopped or died */
	MGR_DROP_FAILOVER,	/* a dead NF's uncommitted output, dropped by its standby */
	MGR_DROP_REASON_MAX,
};

struct mgr_dest {
	uint8_t kind;	/* enum mgr_dest_kind */
	uint8_t reason; /* enum mgr_drop_reason when kind == DROP */
	uint16_t id;
};

const char *mgr_drop_reason_str(enum mgr_drop_reason r);

/*
 * A packet arrived on `in_port`: pick its chain and first destination and
 * initialise its metadata.  `pi`/`parse` are the parse result of the packet
 * (non-IPv4 packets follow the port/default chain with flow_hash 0).
 */
void mgr_route_ingress(struct onvm_shm *shm, struct onvm_pkt_meta *meta, uint16_t in_port,
		       enum onvm_parse_reason parse, const struct onvm_pkt_info *pi,
		       struct mgr_dest *dest);

/* An NF handed the packet back with meta->action set: where to now. */
void mgr_route_action(const struct onvm_shm *shm, struct onvm_pkt_meta *meta,
		      struct mgr_dest *dest);

/* Fill chain `c`: its services in order, then `exit_port` (< 0: drop). */
void mgr_chain_set(struct onvm_chain *c, const char *name, const uint16_t *services,
		   uint16_t len, int exit_port);

/* Instance of `service_id` serving flow `hash`; -1 if none is live,
 * MGR_PICK_PEER if its bucket was moved to the service's instance on
 * another node (ONVM_RANK_PEER: one reading of the table says both).  The
 * flow's bucket (the hash's top MGR_FLOW_BUCKET_BITS bits) picks the rank
 * by jump consistent hashing over the service's ranks (router.c). */
#define MGR_PICK_PEER (-2)
int mgr_service_pick(const struct onvm_shm *shm, uint16_t service_id, uint32_t hash);

#define MGR_FLOW_BUCKET_BITS ONVM_FLOW_BUCKET_BITS
#define MGR_FLOW_BUCKETS     ONVM_FLOW_BUCKETS
#define MGR_FLOW_BUCKET(hash) ONVM_FLOW_BUCKET(hash)

/* The rank bucket `bucket` has in a service of `n` ranks (-1: out of
 * range), and the jump consistent hash of `key` over `n` buckets. */
int mgr_bucket_rank(uint32_t bucket, uint16_t n);
int mgr_jump_hash(uint64_t key, int n);

/* Give `service` `ranks` fixed ranks, none held (a protected chain's
 * service: struct onvm_service), at start-up. */
void mgr_service_fix(struct onvm_shm *shm, uint16_t service, uint16_t ranks);

/* The rank of instance `id` in the service's list (the entry flows hash
 * to), or -1; and a mask of the ranks an instance holds (`running`: one
 * whose NF runs, not one still starting). */
int mgr_service_rank(const struct onvm_shm *shm, uint16_t service_id, uint16_t id);
uint32_t mgr_service_ranks(const struct onvm_shm *shm, uint16_t service_id, bool running);

/* Where a packet at step `meta->chain_index` of its chain goes: the step's
 * service, or the chain's exit. */
void mgr_route_step(const struct onvm_shm *shm, struct onvm_pkt_meta *meta,
		    struct mgr_dest *dest);

/* Index of the first flow rule matching, or -1. */
int mgr_flow_rule_match(const struct onvm_shm *shm, uint16_t in_port,
			const struct onvm_pkt_info *pi);

#endif /* MGR_ROUTER_H */
