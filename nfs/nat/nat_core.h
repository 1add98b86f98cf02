/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nat_core.h -- source NAT with port allocation, without an EAL: its config
 * file, its mappings in libnf state regions, and what it does to one packet.
 * nat.c wires it to libnf; the unit tests drive it on heap mbufs and heap
 * state regions.
 *
 * Outbound: a TCP or UDP packet whose source lies in one of the "internal"
 * prefixes is translated per 5-tuple.  The first packet of a 5-tuple gets an
 * external port drawn at random among the free ones in [port_min, port_max]
 * (nat->rand, which the NF wires to nf_nd_rand(): that packet is marked
 * non-deterministic); its source becomes external_ip:port.  Every later
 * packet of the 5-tuple reuses the mapping, without a draw.  Each mapping
 * owns its port alone (one 5-tuple per port, TCP and UDP share the range), so
 * inbound packets find their mapping from the port.
 *
 * Inbound: a packet to external_ip whose destination port is mapped, whose
 * protocol is the mapping's and whose source is the mapping's remote
 * endpoint (address and port) goes back to the internal address and port.
 * Anything else to external_ip is dropped (no unsolicited inbound traffic).
 *
 * Not translated: ICMP and other protocols from internal sources are dropped
 * (counted "untranslatable": forwarding them would leak internal addresses,
 * and ICMP query ids are not translated); IPv4 fragments to translate are
 * dropped (counted "fragments": a later fragment carries no ports);
 * everything else (not from an internal source, not to external_ip) passes
 * unchanged ("passed"), and non-IPv4 frames too ("non_ip").  Malformed IPv4
 * is dropped, counted by reason.  A new 5-tuple when no port is free is
 * dropped ("ports_exhausted"), likewise when the flow table is at its load
 * limit ("table_full").  Hairpinning (internal to external_ip) is not
 * supported: it is dropped like any inbound packet from the wrong endpoint.
 *
 * A mapping idle for idle_timeout_ms in both directions is removed by an
 * incremental sweep (nat_maintain()), which frees its port.
 */
#ifndef NAT_CORE_H
#define NAT_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>

#include "onvm_flow_table.h"
#include "onvm_pkt_parse.h"
#include "onvm_rule.h"
#include "onvm_state.h"

#define NAT_PREFIXES_MAX	64
#define NAT_PORT_MIN_DEF	1024
#define NAT_PORT_MAX_DEF	65535
#define NAT_IDLE_TIMEOUT_MS_DEF 30000
#define NAT_IDLE_TIMEOUT_MS_MAX 86400000 /* one day */
#define NAT_FLOWS_DEF		65536
#define NAT_FLOWS_MAX		(1u << 22) /* 256 MiB of table: a region is at most 1 GiB */
#define NAT_REGIONS		3 /* "nat" (totals), "nat_ports", "nat_flows" */

struct nat_config {
	uint32_t n_internal;
	struct onvm_rule_prefix internal[NAT_PREFIXES_MAX]; /* host byte order */
	uint32_t external_ip; /* host byte order */
	uint16_t port_min, port_max;
	uint64_t idle_timeout_ms;
	uint32_t flows; /* flow table capacity, a power of two */
};

/* Parse a config document ({"internal": [prefixes], "external_ip", "port_min",
 * "port_max", "idle_timeout_ms", "flows"}).  Returns 0, or -EINVAL / -ENOENT
 * with "NAME:LINE:COL: field: reason" in err. */
int nat_config_parse(struct nat_config *cfg, const char *name, const char *text, size_t len,
		     char *err, size_t errlen);
int nat_config_load(struct nat_config *cfg, const char *file, char *err, size_t errlen);

/* Region "nat": counters, and what the state was made for. */
struct nat_totals {
	uint64_t magic;
	uint64_t config_hash;	  /* external_ip, ports, capacity: checked on attach */
	uint64_t packets;	  /* every packet handled */
	uint64_t outbound;	  /* translated internal -> outside */
	uint64_t inbound;	  /* translated back outside -> internal */
	uint64_t new_mappings;	  /* one random draw each */
	uint64_t passed;	  /* unchanged: neither from inside nor to external_ip */
	uint64_t non_ip;	  /* not IPv4: unchanged */
	uint64_t untranslatable;  /* internal source, not TCP/UDP: dropped */
	uint64_t fragments;	  /* to translate, but a fragment: dropped */
	uint64_t ports_exhausted; /* new 5-tuple, no free port: dropped */
	uint64_t table_full;	  /* new 5-tuple, table at its load limit: dropped */
	uint64_t inbound_unmapped; /* to external_ip, port not mapped: dropped */
	uint64_t inbound_mismatch; /* mapped port, other protocol or remote: dropped */
	uint64_t inbound_unsupported; /* to external_ip, not TCP/UDP: dropped */
	uint64_t unwritable;	  /* headers not in the first segment: dropped */
	uint64_t malformed[ONVM_PARSE_REASON_MAX]; /* dropped, by parse reason */
};

/* Region "nat_ports": which external ports are taken, and by whom. */
struct nat_ports {
	uint64_t magic;
	uint32_t port_min, n_ports;
	uint32_t n_free;
	uint32_t n_words;
	/* uint64_t used[n_words] (bit set: port_min + bit is taken), then
	 * struct onvm_flow_key owner[n_ports] (the mapping's outbound 5-tuple) */
};

/* A mapping's value in the flow table (keyed by the outbound 5-tuple). */
struct nat_flow {
	uint16_t ext_port;
	uint16_t pad16;
	uint32_t pad;
	uint64_t packets_out;
	uint64_t packets_in;
};

typedef uint64_t nat_rand_fn(void *arg);

struct nat {
	const struct nat_config *cfg;
	struct nf_state_set *state;
	struct nat_totals *t;
	struct nat_ports *ports;
	uint64_t *used;
	struct onvm_flow_key *owner;
	struct onvm_ft ft;
	nat_rand_fn *rand;
	void *rand_arg;
	uint64_t idle_ns;
	uint64_t sweep_every_ns;
	uint32_t sweep_budget;
	uint64_t next_sweep_ns; /* process-local: only a schedule */
};

enum nat_verdict {
	NAT_FORWARD,
	NAT_DROP,
};

void nat_regions(const struct nat_config *cfg, struct nf_state_request reqs[NAT_REGIONS]);

/* Open the NAT on its regions (in nat_regions() order): fresh ones are
 * formatted, those of a dead active attached after checking they were made
 * for the same config.  Returns 0 or a negative errno with a reason in err. */
int nat_open(struct nat *nat, const struct nat_config *cfg, struct nf_state_set *state,
	     void *const regions[NAT_REGIONS], nat_rand_fn *rand, void *rand_arg, uint32_t sweep_ms,
	     char *err, size_t errlen);

/* Handle one packet at time now_ns (nf_clock_ns()); may rewrite it. */
enum nat_verdict nat_packet(struct nat *nat, struct rte_mbuf *m, uint64_t now_ns);

/* Run a sweep step if one is due; returns the number of mappings expired. */
uint32_t nat_maintain(struct nat *nat, uint64_t now_ns);

/* The mapping of an outbound 5-tuple (host byte order), or NULL. */
const struct nat_flow *nat_lookup(const struct nat *nat, const struct onvm_flow_key *key);

/* The outbound 5-tuple owning external port `port`, or NULL if it is free. */
const struct onvm_flow_key *nat_port_owner(const struct nat *nat, uint16_t port);

uint32_t nat_mapping_count(const struct nat *nat);
uint32_t nat_free_ports(const struct nat *nat);

int nat_export_json(const struct nat *nat, FILE *f);
void nat_summary(const struct nat *nat, char *buf, size_t len);

#endif /* NAT_CORE_H */
