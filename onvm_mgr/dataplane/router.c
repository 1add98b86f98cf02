/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * router.c -- chain and flow-rule routing decisions.
 *
 * Flow rules are checked in configuration order and the first match wins,
 * like an ACL; with at most a few hundred rules a linear scan over a packed
 * array is cheaper than any index until rules are counted in thousands.
 * Instances are chosen by flow hash over the live instance list, so a flow
 * sticks to its instance for as long as the instance set does not change.
 * The hash (a CRC, onvm_flow_key_hash()) picks one of MGR_FLOW_BUCKETS
 * buckets by its top bits, and a table maps each bucket to a rank for a
 * service of n ranks: jump consistent hashing (Lamping and Veach, "A Fast,
 * Minimal Memory, Consistent Hash Algorithm"), so an (n + 1)-th instance
 * takes about 1/(n + 1) of the buckets, every one from the others, and the
 * rest stay where they were -- as long as the rank that changes is the
 * last (nf_services.c appends instances, and fills a leaver's rank with
 * the last).  The table is a function of n alone, built
 * once: a packet costs two loads, no division (a 32-bit `%` was half of
 * mgr_route_step's time, ~9 % of the RX lcore at full load).  Both nodes
 * of a protected chain run this same mapping, so a flow has the same rank
 * on each.
 */
#include <stdio.h>
#include <string.h>

#include "router.h"

static const char *const drop_names[MGR_DROP_REASON_MAX] = {
	[MGR_DROP_NF_ACTION] = "nf_action",
	[MGR_DROP_NO_CHAIN] = "no_chain",
	[MGR_DROP_NO_INSTANCE] = "no_instance",
	[MGR_DROP_BAD_SERVICE] = "bad_service",
	[MGR_DROP_BAD_PORT] = "bad_port",
	[MGR_DROP_BAD_ACTION] = "bad_action",
	[MGR_DROP_CHAIN_END] = "chain_end",
	[MGR_DROP_RING_FULL] = "ring_full",
	[MGR_DROP_PORT_TX] = "port_tx_full",
	[MGR_DROP_NF_GONE] = "nf_gone",
	[MGR_DROP_FAILOVER] = "failover",
};

/* bucket_rank[n][b]: the rank of bucket b in a service of n ranks. */
static uint8_t bucket_rank[ONVM_MAX_INSTANCES + 1][MGR_FLOW_BUCKETS];
_Static_assert(ONVM_MAX_INSTANCES <= UINT8_MAX + 1, "ranks are stored in a byte");

int
mgr_jump_hash(uint64_t key, int n)
{
	int64_t b = -1, j = 0;

	while (j < n) {
		b = j;
		key = key * UINT64_C(2862933555777941757) + 1;
		j = (int64_t)((double)(b + 1) * ((double)(INT64_C(1) << 31) /
						 (double)((key >> 33) + 1)));
	}
	return (int)b;
}

/* Built before main() (and before any unit test): the manager's units
 * and its control threads only read it.  The key is the bucket itself
 * (jump's first step multiplies it by a large odd constant): bucket 0 --
 * flow hash 0, every packet that is not IPv4 -- is on rank 0 for any n. */
__attribute__((constructor)) static void
bucket_rank_build(void)
{
	for (int n = 1; n <= ONVM_MAX_INSTANCES; n++)
		for (uint32_t b = 0; b < MGR_FLOW_BUCKETS; b++)
			bucket_rank[n][b] = (uint8_t)mgr_jump_hash(b, n);
}

int
mgr_bucket_rank(uint32_t bucket, uint16_t n)
{
	if (n == 0 || n > ONVM_MAX_INSTANCES || bucket >= MGR_FLOW_BUCKETS)
		return -1;
	return bucket_rank[n][bucket];
}

const char *
mgr_drop_reason_str(enum mgr_drop_reason r)
{
	return (unsigned int)r < MGR_DROP_REASON_MAX ? drop_names[r] : "unknown";
}

static inline void
dest_drop(struct mgr_dest *d, enum mgr_drop_reason r)
{
	d->kind = MGR_DEST_DROP;
	d->reason = r;
	d->id = 0;
}

void
mgr_chain_set(struct onvm_chain *c, const char *name, const uint16_t *services, uint16_t len,
	      int exit_port)
{
	memset(c, 0, sizeof(*c));
	if (name != NULL)
		snprintf(c->name, sizeof(c->name), "%s", name);
	if (len > ONVM_MAX_CHAIN_LEN)
		len = ONVM_MAX_CHAIN_LEN;
	if (len > 0)
		memcpy(c->services, services, len * sizeof(services[0]));
	c->len = len;
	c->exit_drop = exit_port < 0;
	c->exit_port = exit_port < 0 ? 0 : exit_port;
	c->used = 1;
}

int
mgr_service_pick(const struct onvm_shm *shm, uint16_t service_id, uint32_t hash)
{
	const struct onvm_service *svc;
	uint32_t a;
	uint16_t n, inst, rank;

	if (service_id == 0 || service_id >= ONVM_MAX_SERVICES)
		return -1;
	svc = &shm->services[service_id];
	a = __atomic_load_n(&svc->active, __ATOMIC_ACQUIRE) & 1;
	n = svc->n[a];
	if (n == 0 || n > ONVM_MAX_INSTANCES)
		return -1;
	rank = unlikely(svc->moved[a]) ? svc->rank_of[a][MGR_FLOW_BUCKET(hash)]
				       : bucket_rank[n][MGR_FLOW_BUCKET(hash)];
	if (unlikely(rank >= n))
		return rank == ONVM_RANK_PEER ? MGR_PICK_PEER : -1;
	inst = svc->inst[a][rank];
	return inst == ONVM_INST_NONE ? -1 : inst;
}

void
mgr_service_fix(struct onvm_shm *shm, uint16_t service, uint16_t ranks)
{
	struct onvm_service *svc = &shm->services[service];

	/* At start-up, before any NF registers and before the units run. */
	svc->fixed = ranks;
	for (int c = 0; c < 2; c++) {
		svc->n[c] = ranks;
		for (uint16_t r = 0; r < ranks; r++)
			svc->inst[c][r] = ONVM_INST_NONE;
	}
}

int
mgr_service_rank(const struct onvm_shm *shm, uint16_t service_id, uint16_t id)
{
	const struct onvm_service *svc;
	uint32_t a;

	if (service_id == 0 || service_id >= ONVM_MAX_SERVICES)
		return -1;
	svc = &shm->services[service_id];
	a = __atomic_load_n(&svc->active, __ATOMIC_ACQUIRE) & 1;
	for (uint16_t r = 0; r < svc->n[a]; r++)
		if (svc->inst[a][r] == id)
			return r;
	return -1;
}

uint32_t
mgr_service_ranks(const struct onvm_shm *shm, uint16_t service_id, bool running)
{
	const struct onvm_service *svc;
	uint32_t a, mask = 0;

	if (service_id == 0 || service_id >= ONVM_MAX_SERVICES)
		return 0;
	svc = &shm->services[service_id];
	a = __atomic_load_n(&svc->active, __ATOMIC_ACQUIRE) & 1;
	for (uint16_t r = 0; r < svc->n[a]; r++) {
		uint16_t id = svc->inst[a][r];

		if (id < ONVM_MAX_NFS &&
		    (!running || __atomic_load_n(&shm->nfs[id].nf_running, __ATOMIC_ACQUIRE)))
			mask |= 1u << r;
	}
	return mask;
}

static void
dest_service(const struct onvm_shm *shm, uint16_t service_id, uint32_t hash, struct mgr_dest *d)
{
	int inst;

	if (service_id == 0 || service_id >= ONVM_MAX_SERVICES) {
		dest_drop(d, MGR_DROP_BAD_SERVICE);
		return;
	}
	inst = mgr_service_pick(shm, service_id, hash);
	if (unlikely(inst == MGR_PICK_PEER)) {
		d->kind = MGR_DEST_PEER;
		d->id = service_id;
		return;
	}
	if (inst < 0) {
		dest_drop(d, MGR_DROP_NO_INSTANCE);
		return;
	}
	d->kind = MGR_DEST_NF;
	d->id = inst;
}

static void
dest_port(const struct onvm_shm *shm, uint16_t port, struct mgr_dest *d)
{
	if (port >= ONVM_MAX_PORTS || !shm->ports[port].used) {
		dest_drop(d, MGR_DROP_BAD_PORT);
		return;
	}
	d->kind = MGR_DEST_PORT;
	d->id = port;
}

/* The step `meta->chain_index` of the packet's chain, or the chain's exit. */
void
mgr_route_step(const struct onvm_shm *shm, struct onvm_pkt_meta *meta, struct mgr_dest *d)
{
	const struct onvm_chain *c;

	/* The metadata is NF-writable: never trust chain_id blindly. */
	if (meta->chain_id >= ONVM_MAX_CHAINS || !shm->chains[meta->chain_id].used) {
		dest_drop(d, MGR_DROP_NO_CHAIN);
		return;
	}
	c = &shm->chains[meta->chain_id];
	if (meta->chain_index < c->len) {
		dest_service(shm, c->services[meta->chain_index], meta->flow_hash, d);
		return;
	}
	/* An NF (a bridge, a router) may have chosen the exit port. */
	if (meta->egress_port != ONVM_PORT_UNSET) {
		dest_port(shm, meta->egress_port, d);
		return;
	}
	if (c->exit_drop) {
		dest_drop(d, MGR_DROP_CHAIN_END);
		return;
	}
	dest_port(shm, c->exit_port, d);
}

static inline int
rule_matches(const struct onvm_flow_rule *r, uint16_t in_port, const struct onvm_pkt_info *pi)
{
	return (r->in_port == 0xff || r->in_port == in_port) &&
	       (pi->src_ip & r->src_mask) == r->src_ip &&
	       (pi->dst_ip & r->dst_mask) == r->dst_ip && (r->proto == 0 || r->proto == pi->proto) &&
	       pi->sport >= r->sport_lo && pi->sport <= r->sport_hi && pi->dport >= r->dport_lo &&
	       pi->dport <= r->dport_hi;
}

int
mgr_flow_rule_match(const struct onvm_shm *shm, uint16_t in_port, const struct onvm_pkt_info *pi)
{
	for (uint16_t i = 0; i < shm->nb_rules; i++)
		if (rule_matches(&shm->rules[i], in_port, pi))
			return i;
	return -1;
}

void
mgr_route_ingress(struct onvm_shm *shm, struct onvm_pkt_meta *meta, uint16_t in_port,
		  enum onvm_parse_reason parse, const struct onvm_pkt_info *pi,
		  struct mgr_dest *dest)
{
	int chain = -1;

	meta->action = ONVM_ACTION_NEXT;
	meta->chain_index = 0;
	meta->destination = 0;
	meta->flags = 0;
	meta->in_port = in_port;
	meta->egress_port = ONVM_PORT_UNSET;
	meta->chain_run = meta->peer_port = meta->reserved = 0;
	meta->ts = 0;
	meta->flow_hash = 0;
	if (parse == ONVM_PARSE_OK) {
		struct onvm_flow_key key;
		int rule;

		onvm_flow_key_from_info(pi, &key);
		meta->flow_hash = onvm_flow_key_hash(&key);
		rule = mgr_flow_rule_match(shm, in_port, pi);
		if (rule >= 0) {
			shm->rules[rule].hits++;
			chain = shm->rules[rule].chain_id;
		}
	}
	if (chain < 0 && in_port < ONVM_MAX_PORTS && shm->ports[in_port].has_default_chain)
		chain = shm->ports[in_port].default_chain;
	if (chain < 0 && shm->has_default_chain)
		chain = shm->default_chain;
	if (chain < 0) {
		dest_drop(dest, MGR_DROP_NO_CHAIN);
		return;
	}
	meta->chain_id = chain;
	mgr_route_step(shm, meta, dest);
}

void
mgr_route_action(const struct onvm_shm *shm, struct onvm_pkt_meta *meta, struct mgr_dest *dest)
{
	/* A flow migration's copy is done with once its new instance has
	 * reprocessed it (libnf dropped its output); a tag has served. */
	if (unlikely(meta->flags & ONVM_PKT_F_MOVE_COPY)) {
		dest->kind = MGR_DEST_DONE;
		dest->id = 0;
		return;
	}
	if (unlikely(ONVM_MOVE_TAG_IS(meta->ts)))
		meta->ts = 0;
	/* Handed over by the node behind peer_port (a cross-node move): the
	 * chain goes on there, from the metadata as the NF left it. */
	if (unlikely(meta->flags & ONVM_PKT_F_PEER) && meta->action != ONVM_ACTION_DROP) {
		if (meta->peer_port >= ONVM_MAX_PORTS || !shm->ports[meta->peer_port].peer) {
			dest_drop(dest, MGR_DROP_BAD_PORT);
			return;
		}
		dest->kind = MGR_DEST_RETURN;
		dest->id = meta->peer_port;
		return;
	}
	switch (meta->action) {
	case ONVM_ACTION_DROP:
		dest_drop(dest, unlikely(meta->flags & ONVM_PKT_F_FAILOVER_DROP) ? MGR_DROP_FAILOVER
										 : MGR_DROP_NF_ACTION);
		return;
	case ONVM_ACTION_NEXT:
		if (meta->chain_index < ONVM_MAX_CHAIN_LEN)
			meta->chain_index++;
		mgr_route_step(shm, meta, dest);
		return;
	case ONVM_ACTION_TONF: {
		/* Continue the chain from the named service if it is part of it. */
		if (meta->chain_id < ONVM_MAX_CHAINS) {
			const struct onvm_chain *c = &shm->chains[meta->chain_id];

			for (uint16_t i = 0; i < c->len; i++)
				if (c->services[i] == meta->destination) {
					meta->chain_index = i;
					break;
				}
		}
		dest_service(shm, meta->destination, meta->flow_hash, dest);
		return;
	}
	case ONVM_ACTION_OUT:
		dest_port(shm, meta->destination, dest);
		return;
	default:
		dest_drop(dest, MGR_DROP_BAD_ACTION);
		return;
	}
}
