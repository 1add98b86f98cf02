/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * load_balancer_core.h -- the load balancer's logic, without an EAL: its
 * configuration file, its per-flow table in libnf state regions, and what it
 * does to one packet.  load_balancer.c wires it to libnf; the unit tests
 * drive it on heap mbufs and heap state regions.
 *
 * A new flow (directional IPv4 5-tuple) gets a backend drawn at random
 * (lb->rand, which the NF wires to nf_nd_rand() so the packet that caused the
 * choice is marked non-deterministic); every later packet of the flow goes to
 * the same backend, found in the flow table, without a random draw.  The
 * packet's destination IPv4 address and destination MAC become the
 * backend's, and the IPv4 and TCP/UDP checksums are recomputed.
 *
 * Two modes, chosen by the config:
 *  - VIP ("vip" given): only packets to the VIP are balanced; packets from a
 *    backend's address whose reverse 5-tuple is a flow mapped to that very
 *    backend are replies: their source address goes back to the VIP.  Every
 *    other packet passes unchanged.
 *  - transparent (no "vip"): every IPv4 flow is balanced, each direction of
 *    a connection on its own (no reply rewriting: there is no VIP to restore).
 *
 * What is not balanced: non-IPv4 frames pass unchanged (counted non_ip);
 * IPv4 frames that do not parse are dropped, counted by reason; IPv4
 * fragments that would be balanced are dropped (counted "fragments": without
 * reassembly a later fragment carries no ports, so it could not follow its
 * flow); a new flow when the table is at its load limit is dropped (counted
 * "table_full": a flow whose backend cannot be remembered would switch
 * backends).
 *
 * Flows idle for idle_timeout_ms are removed by an incremental sweep
 * (lb_maintain(), from the NF's tick).
 */
#ifndef LOAD_BALANCER_CORE_H
#define LOAD_BALANCER_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>

#include "onvm_flow_table.h"
#include "onvm_pkt_parse.h"
#include "onvm_state.h"

#define LB_BACKENDS_MAX		256
#define LB_IDLE_TIMEOUT_MS_DEF	30000
#define LB_IDLE_TIMEOUT_MS_MAX	86400000 /* one day */
#define LB_FLOWS_DEF		65536
#define LB_FLOWS_MAX		(1u << 22) /* 256 MiB of table: a region is at most 1 GiB */
#define LB_REGIONS		2 /* "lb" (totals) and "lb_flows" (the flow table) */

struct lb_backend {
	uint32_t ip; /* host byte order */
	uint8_t mac[6];
};

struct lb_config {
	bool has_vip;
	uint32_t vip; /* host byte order */
	uint32_t n_backends;
	uint64_t idle_timeout_ms;
	uint32_t flows; /* flow table capacity, a power of two */
	struct lb_backend backends[LB_BACKENDS_MAX];
};

/* Parse a config document ({"vip", "backends": [{"ip", "mac"}], "idle_timeout_ms",
 * "flows"}).  Returns 0, or -EINVAL / -ENOENT with "NAME:LINE:COL: field: reason"
 * in err. */
int lb_config_parse(struct lb_config *cfg, const char *name, const char *text, size_t len,
		    char *err, size_t errlen);
int lb_config_load(struct lb_config *cfg, const char *file, char *err, size_t errlen);

/* Region "lb": counters, and what the table was made for. */
struct lb_totals {
	uint64_t magic;
	uint64_t config_hash; /* vip, backends, capacity: checked on attach */
	uint64_t packets;     /* every packet handled */
	uint64_t balanced;    /* rewritten towards a backend */
	uint64_t new_flows;   /* flows that got a backend (one random draw each) */
	uint64_t replies;     /* VIP mode: source rewritten back to the VIP */
	uint64_t passed;      /* IPv4, not for the VIP, not a reply: unchanged */
	uint64_t unmatched_from_backend; /* from a backend, no flow of its own: unchanged */
	uint64_t non_ip;      /* not IPv4: unchanged */
	uint64_t fragments;   /* dropped */
	uint64_t table_full;  /* new flow, table at its load limit: dropped */
	uint64_t unwritable;  /* headers not in the first segment: dropped */
	uint64_t malformed[ONVM_PARSE_REASON_MAX]; /* dropped, by parse reason */
	uint64_t backend_flows[LB_BACKENDS_MAX];   /* flows ever given to backend i */
	uint32_t backend_active[LB_BACKENDS_MAX];  /* flows of backend i in the table */
};

/* A flow's value in the table. */
struct lb_flow {
	uint32_t backend; /* index into the config's backends */
	uint32_t pad;
	uint64_t packets; /* rewritten towards the backend */
	uint64_t replies; /* replies rewritten back to the VIP */
};

typedef uint64_t lb_rand_fn(void *arg);

struct lb {
	const struct lb_config *cfg;
	struct nf_state_set *state;
	struct lb_totals *t;
	struct onvm_ft ft;
	lb_rand_fn *rand;
	void *rand_arg;
	uint64_t idle_ns;
	uint64_t sweep_every_ns; /* one sweep step per this much time */
	uint32_t sweep_budget;	 /* slots looked at per step */
	uint64_t next_sweep_ns;	 /* process-local: only a schedule */
	/* The packet is a flow migration's copy (nf_is_reprocessing): the
	 * flow's state is brought up to date, the totals not counted again. */
	bool replay;
};

enum lb_verdict {
	LB_FORWARD, /* send on (rewritten or not) */
	LB_DROP,
};

/* The regions to declare (names, sizes) for `cfg`. */
void lb_regions(const struct lb_config *cfg, struct nf_state_request reqs[LB_REGIONS]);

/*
 * Open the balancer on its regions (in lb_regions() order).  Fresh (zeroed)
 * regions are formatted; regions holding the state of a dead active are
 * attached after checking they were made for the same config.  sweep_ms is
 * how often lb_maintain() runs a sweep step.  Returns 0, or a negative errno
 * with a reason in err.
 */
int lb_open(struct lb *lb, const struct lb_config *cfg, struct nf_state_set *state,
	    void *const regions[LB_REGIONS], lb_rand_fn *rand, void *rand_arg, uint32_t sweep_ms,
	    char *err, size_t errlen);

/* Handle one packet at time now_ns (nf_clock_ns()); may rewrite it. */
enum lb_verdict lb_packet(struct lb *lb, struct rte_mbuf *m, uint64_t now_ns);

/* Run a sweep step if one is due; returns the number of flows expired. */
uint32_t lb_maintain(struct lb *lb, uint64_t now_ns);

/* The table's value for a directional 5-tuple (host byte order), or NULL. */
const struct lb_flow *lb_lookup(const struct lb *lb, const struct onvm_flow_key *key);

uint32_t lb_flow_count(const struct lb *lb);

/* The JSON export: config, counters, every flow with its backend. */
int lb_export_json(const struct lb *lb, FILE *f);

/* One line of counters (no newline). */
void lb_summary(const struct lb *lb, char *buf, size_t len);

#endif /* LOAD_BALANCER_CORE_H */
