/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * Packet helpers for NFs: thin, bounds-checked wrappers over the shared
 * parser that hand out pointers into the first segment, plus software
 * checksum repair for NFs that rewrite headers and the checksum sum over a
 * chained frame (nf_pkt_cksum_chain()).
 */
#include <errno.h>

#include "onvm_pkt_helper.h"

/* Parse and make sure the headers up to l4 are contiguous in segment 0. */
static int
parse_contiguous(const struct rte_mbuf *m, struct onvm_pkt_info *pi)
{
	if (onvm_pkt_parse(m, pi) != ONVM_PARSE_OK)
		return -EINVAL;
	if ((uint32_t)pi->l2_len + pi->l3_len + pi->l4_len > rte_pktmbuf_data_len(m))
		return -EINVAL;
	return 0;
}

struct rte_ipv4_hdr *
nf_pkt_ipv4_hdr(struct rte_mbuf *m)
{
	struct onvm_pkt_info pi;

	if (parse_contiguous(m, &pi) != 0)
		return NULL;
	return rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, pi.l2_len);
}

struct rte_tcp_hdr *
nf_pkt_tcp_hdr(struct rte_mbuf *m)
{
	struct onvm_pkt_info pi;

	if (parse_contiguous(m, &pi) != 0 || pi.proto != IPPROTO_TCP || pi.fragment)
		return NULL;
	return rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *, pi.l2_len + pi.l3_len);
}

struct rte_udp_hdr *
nf_pkt_udp_hdr(struct rte_mbuf *m)
{
	struct onvm_pkt_info pi;

	if (parse_contiguous(m, &pi) != 0 || pi.proto != IPPROTO_UDP || pi.fragment)
		return NULL;
	return rte_pktmbuf_mtod_offset(m, struct rte_udp_hdr *, pi.l2_len + pi.l3_len);
}

int
nf_pkt_flow_key(const struct rte_mbuf *m, struct onvm_flow_key *key)
{
	struct onvm_pkt_info pi;

	if (onvm_pkt_parse(m, &pi) != ONVM_PARSE_OK)
		return -EINVAL;
	onvm_flow_key_from_info(&pi, key);
	return 0;
}

int
nf_pkt_set_checksums(struct rte_mbuf *m)
{
	struct onvm_pkt_info pi;
	struct rte_ipv4_hdr *ip;

	if (parse_contiguous(m, &pi) != 0 || m->nb_segs != 1)
		return -EINVAL;
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, pi.l2_len);
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	if (pi.fragment)
		return 0;
	if (pi.proto == IPPROTO_TCP) {
		struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)((char *)ip + pi.l3_len);

		tcp->cksum = 0;
		tcp->cksum = rte_ipv4_udptcp_cksum(ip, tcp);
	} else if (pi.proto == IPPROTO_UDP) {
		struct rte_udp_hdr *udp = (struct rte_udp_hdr *)((char *)ip + pi.l3_len);

		/* A zero UDP checksum means "none" and stays that way. */
		if (udp->dgram_cksum != 0) {
			udp->dgram_cksum = 0;
			udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
		}
	}
	return 0;
}

/*
 * DPDK 22.11's rte_raw_cksum_mbuf() truncates the unreduced sum of a segment
 * that starts at an odd offset before byte-swapping it (the carries are
 * lost), so each segment's sum is reduced to 16 bits here first, and swapped
 * when the segment starts at an odd byte of the summed range.
 */
int
nf_pkt_cksum_chain(const struct rte_mbuf *m, uint32_t off, uint32_t len, uint16_t *sum)
{
	uint32_t s = 0, done = 0;

	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	for (; done < len; m = m->next, off = 0) {
		uint32_t n;
		uint16_t part;

		if (m == NULL)
			return -EINVAL;
		n = RTE_MIN((uint32_t)m->data_len - off, len - done);
		part = rte_raw_cksum(rte_pktmbuf_mtod_offset(m, const void *, off), n);
		s += (done & 1) ? rte_bswap16(part) : part;
		done += n;
	}
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	*sum = (uint16_t)s;
	return 0;
}
