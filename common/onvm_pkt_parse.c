/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * Header parsing for untrusted frames.  rte_pktmbuf_read() gives a pointer to
 * contiguous bytes whether or not the mbuf is segmented, copying into a stack
 * buffer only when a header straddles segments, so the same code is safe for
 * chained mbufs (net_pcap hands out chains for frames larger than a segment).
 */
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>
#include <rte_hash_crc.h>

#include "onvm_pkt_parse.h"

#define MAX_VLAN_TAGS 2

static const char *const reason_names[ONVM_PARSE_REASON_MAX] = {
	[ONVM_PARSE_OK] = "ok",
	[ONVM_PARSE_TRUNC_L2] = "truncated_l2",
	[ONVM_PARSE_NOT_IPV4] = "not_ipv4",
	[ONVM_PARSE_TRUNC_L3] = "truncated_l3",
	[ONVM_PARSE_BAD_VERSION] = "bad_ip_version",
	[ONVM_PARSE_BAD_IHL] = "bad_ihl",
	[ONVM_PARSE_BAD_TOTLEN] = "bad_ip_total_length",
	[ONVM_PARSE_TRUNC_L4] = "truncated_l4",
	[ONVM_PARSE_BAD_L4LEN] = "bad_l4_length",
};

const char *
onvm_parse_reason_str(enum onvm_parse_reason r)
{
	if ((unsigned int)r >= ONVM_PARSE_REASON_MAX)
		return "unknown";
	return reason_names[r];
}

enum onvm_parse_reason
onvm_pkt_parse(const struct rte_mbuf *m, struct onvm_pkt_info *pi)
{
	const uint32_t frame_len = rte_pktmbuf_pkt_len(m);
	union {
		struct rte_ether_hdr eth;
		struct rte_vlan_hdr vlan;
		struct rte_ipv4_hdr ip;
		struct rte_tcp_hdr tcp;
		struct rte_udp_hdr udp;
	} copy;
	const struct rte_ether_hdr *eth;
	const struct rte_ipv4_hdr *ip;
	uint16_t ether_type, frag;
	uint32_t off;

	memset(pi, 0, sizeof(*pi));
	eth = rte_pktmbuf_read(m, 0, sizeof(*eth), &copy);
	if (eth == NULL)
		return ONVM_PARSE_TRUNC_L2;
	ether_type = rte_be_to_cpu_16(eth->ether_type);
	off = sizeof(*eth);
	while ((ether_type == RTE_ETHER_TYPE_VLAN || ether_type == RTE_ETHER_TYPE_QINQ) &&
	       pi->vlans < MAX_VLAN_TAGS) {
		const struct rte_vlan_hdr *vh = rte_pktmbuf_read(m, off, sizeof(*vh), &copy);

		if (vh == NULL)
			return ONVM_PARSE_TRUNC_L2;
		ether_type = rte_be_to_cpu_16(vh->eth_proto);
		off += sizeof(*vh);
		pi->vlans++;
	}
	pi->l2_len = off;
	if (ether_type != RTE_ETHER_TYPE_IPV4)
		return ONVM_PARSE_NOT_IPV4;

	ip = rte_pktmbuf_read(m, off, sizeof(*ip), &copy);
	if (ip == NULL)
		return ONVM_PARSE_TRUNC_L3;
	if ((ip->version_ihl >> 4) != 4)
		return ONVM_PARSE_BAD_VERSION;
	pi->l3_len = (ip->version_ihl & 0x0f) * 4;
	if (pi->l3_len < sizeof(*ip))
		return ONVM_PARSE_BAD_IHL;
	if (off + pi->l3_len > frame_len)
		return ONVM_PARSE_TRUNC_L3;
	pi->ip_len = rte_be_to_cpu_16(ip->total_length);
	/* Frames may carry Ethernet padding after the datagram, never less. */
	if (pi->ip_len < pi->l3_len || off + pi->ip_len > frame_len)
		return ONVM_PARSE_BAD_TOTLEN;
	pi->proto = ip->next_proto_id;
	pi->src_ip = rte_be_to_cpu_32(ip->src_addr);
	pi->dst_ip = rte_be_to_cpu_32(ip->dst_addr);
	frag = rte_be_to_cpu_16(ip->fragment_offset);
	if (frag & RTE_IPV4_HDR_OFFSET_MASK) {
		pi->fragment = 1;
		return ONVM_PARSE_OK;
	}
	/* `ip` may point into `copy`, which the L4 read below reuses: everything
	 * needed from the IPv4 header has been read by now. */

	off += pi->l3_len;
	if (pi->proto == IPPROTO_TCP) {
		const struct rte_tcp_hdr *tcp = rte_pktmbuf_read(m, off, sizeof(*tcp), &copy);

		if (tcp == NULL || off + sizeof(*tcp) > pi->l2_len + pi->ip_len)
			return ONVM_PARSE_TRUNC_L4;
		pi->l4_len = (tcp->data_off >> 4) * 4;
		if (pi->l4_len < sizeof(*tcp) || off + pi->l4_len > pi->l2_len + pi->ip_len)
			return ONVM_PARSE_BAD_L4LEN;
		pi->sport = rte_be_to_cpu_16(tcp->src_port);
		pi->dport = rte_be_to_cpu_16(tcp->dst_port);
	} else if (pi->proto == IPPROTO_UDP) {
		const struct rte_udp_hdr *udp = rte_pktmbuf_read(m, off, sizeof(*udp), &copy);
		uint16_t ulen;

		if (udp == NULL || off + sizeof(*udp) > pi->l2_len + pi->ip_len)
			return ONVM_PARSE_TRUNC_L4;
		ulen = rte_be_to_cpu_16(udp->dgram_len);
		/* The first fragment of a datagram carries the length of the
		 * whole datagram, more than this packet holds. */
		if (ulen < sizeof(*udp) ||
		    (!(frag & RTE_IPV4_HDR_MF_FLAG) && ulen > pi->ip_len - pi->l3_len))
			return ONVM_PARSE_BAD_L4LEN;
		pi->l4_len = sizeof(*udp);
		pi->sport = rte_be_to_cpu_16(udp->src_port);
		pi->dport = rte_be_to_cpu_16(udp->dst_port);
	}
	return ONVM_PARSE_OK;
}

uint32_t
onvm_flow_key_hash(const struct onvm_flow_key *k)
{
	/* Order the endpoints so both directions hash alike. */
	uint32_t a = k->src_ip, b = k->dst_ip;
	uint16_t pa = k->sport, pb = k->dport;
	uint32_t h;

	if (a > b || (a == b && pa > pb)) {
		uint32_t t = a;
		uint16_t tp = pa;

		a = b;
		b = t;
		pa = pb;
		pb = tp;
	}
	h = rte_hash_crc_4byte(a, 0x9e3779b9);
	h = rte_hash_crc_4byte(b, h);
	h = rte_hash_crc_4byte(((uint32_t)pa << 16) | pb, h);
	return rte_hash_crc_4byte(k->proto, h);
}
