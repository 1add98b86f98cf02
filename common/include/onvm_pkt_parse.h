/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_pkt_parse.h -- bounds-checked parsing of Ethernet / VLAN / IPv4 /
 * TCP / UDP headers, shared by the manager (flow classification) and libnf
 * (packet helpers for NFs).
 *
 * Packets come from outside and are never trusted: every length is checked
 * against the frame, and a packet that cannot be parsed gets a reason code
 * that callers count (onvm_parse_reason_str() names it).  Nothing here writes
 * to the packet.
 */
#ifndef ONVM_PKT_PARSE_H
#define ONVM_PKT_PARSE_H

#include <stdint.h>
#include <rte_mbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

enum onvm_parse_reason {
	ONVM_PARSE_OK = 0,
	ONVM_PARSE_TRUNC_L2,	/* shorter than an Ethernet (+VLAN) header */
	ONVM_PARSE_NOT_IPV4,	/* not IPv4 (ARP, IPv6, LLC, ...) -- not an error */
	ONVM_PARSE_TRUNC_L3,	/* shorter than the IPv4 header it announces */
	ONVM_PARSE_BAD_VERSION, /* EtherType says IPv4, version nibble disagrees */
	ONVM_PARSE_BAD_IHL,	/* header length < 20 bytes */
	ONVM_PARSE_BAD_TOTLEN,	/* total length < header length or > frame */
	ONVM_PARSE_TRUNC_L4,	/* TCP/UDP header cut short */
	ONVM_PARSE_BAD_L4LEN,	/* TCP data offset < 20 or UDP length invalid */
	ONVM_PARSE_REASON_MAX,
};

/* What onvm_pkt_parse() learned.  Addresses and ports in host byte order. */
struct onvm_pkt_info {
	uint16_t l2_len;   /* Ethernet header incl. VLAN tags */
	uint16_t l3_len;   /* IPv4 header length */
	uint16_t l4_len;   /* TCP/UDP header length (0 for other protocols) */
	uint16_t ip_len;   /* IPv4 total length */
	uint8_t proto;	   /* IPv4 protocol */
	uint8_t vlans;	   /* number of VLAN tags skipped */
	uint8_t fragment;  /* 1: a non-first fragment (no L4 header) */
	uint8_t pad;
	uint32_t src_ip, dst_ip;
	uint16_t sport, dport; /* 0 for non-TCP/UDP and for fragments */
};

/* The 5-tuple used for flow affinity and flow rules. */
struct onvm_flow_key {
	uint32_t src_ip, dst_ip;
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t pad[3];
};

/* Parse `m`; returns ONVM_PARSE_OK or the reason it stopped. `pi` is filled as
 * far as parsing got (l2_len is valid from NOT_IPV4 on). */
enum onvm_parse_reason onvm_pkt_parse(const struct rte_mbuf *m, struct onvm_pkt_info *pi);

const char *onvm_parse_reason_str(enum onvm_parse_reason r);

static inline void
onvm_flow_key_from_info(const struct onvm_pkt_info *pi, struct onvm_flow_key *k)
{
	k->src_ip = pi->src_ip;
	k->dst_ip = pi->dst_ip;
	k->sport = pi->sport;
	k->dport = pi->dport;
	k->proto = pi->proto;
	k->pad[0] = k->pad[1] = k->pad[2] = 0;
}

/* Direction-independent hash: both directions of a flow hash alike, so a
 * service instance sees both halves of a connection. */
uint32_t onvm_flow_key_hash(const struct onvm_flow_key *k);

#ifdef __cplusplus
}
#endif
#endif /* ONVM_PKT_PARSE_H */
