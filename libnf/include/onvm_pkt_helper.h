/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_pkt_helper.h -- header access, 5-tuples and checksums for NFs.
 *
 * All accessors are bounds-checked against the frame and return NULL when
 * the header is not there (non-IPv4, truncated, a later fragment), so an NF
 * never reads past a malformed packet.  They assume the headers sit in the
 * first mbuf segment (true for every PMD with the default 2 KB data room);
 * nf_pkt_parse() handles chained mbufs as well.
 */
#ifndef ONVM_PKT_HELPER_H
#define ONVM_PKT_HELPER_H

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "onvm_pkt_parse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Full parse (any segmentation); see onvm_pkt_parse.h for the reasons. */
static inline enum onvm_parse_reason
nf_pkt_parse(const struct rte_mbuf *m, struct onvm_pkt_info *pi)
{
	return onvm_pkt_parse(m, pi);
}

static inline struct rte_ether_hdr *
nf_pkt_ether_hdr(struct rte_mbuf *m)
{
	if (rte_pktmbuf_data_len(m) < sizeof(struct rte_ether_hdr))
		return NULL;
	return rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
}

/* IPv4 header (after up to two VLAN tags) or NULL. */
struct rte_ipv4_hdr *nf_pkt_ipv4_hdr(struct rte_mbuf *m);
/* TCP / UDP header of an unfragmented (or first-fragment) IPv4 packet, or NULL. */
struct rte_tcp_hdr *nf_pkt_tcp_hdr(struct rte_mbuf *m);
struct rte_udp_hdr *nf_pkt_udp_hdr(struct rte_mbuf *m);

/* Fill `key` with the packet's 5-tuple (host byte order); -EINVAL if the
 * packet is not parseable IPv4. */
int nf_pkt_flow_key(const struct rte_mbuf *m, struct onvm_flow_key *key);

/* Recompute the IPv4 header checksum and the TCP/UDP checksum in software
 * after the NF rewrote addresses or ports.  Returns 0 or -EINVAL. */
int nf_pkt_set_checksums(struct rte_mbuf *m);

/*
 * The one's-complement sum (not inverted, folded to 16 bits) of `len` bytes
 * from byte `off` of the frame in `m`, over as many chained segments as
 * they span, in the byte order rte_raw_cksum() gives: add the pseudo-header
 * sum and invert for a TCP/UDP checksum.  Use it instead of DPDK 22.11's
 * rte_raw_cksum_mbuf(), which loses the carries of a segment that starts at
 * an odd offset of the sum.  O(len); reads the frame, writes nothing.
 *
 * Returns 0 with the sum in *sum, or -EINVAL if the chain holds fewer than
 * off + len bytes (*sum untouched).
 */
int nf_pkt_cksum_chain(const struct rte_mbuf *m, uint32_t off, uint32_t len, uint16_t *sum);

#ifdef __cplusplus
}
#endif
#endif /* ONVM_PKT_HELPER_H */
