/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * bfd_net.c -- Ethernet/ARP/IPv4/UDP framing for RFC 5881 single-hop BFD.
 * Every field is read and written byte by byte in network order, so frames
 * need no alignment and the code does not depend on the host's endianness.
 */
#include <stdio.h>
#include <string.h>

#include "bfd_net.h"

#define IP_PROTO_UDP 17
#define IP_FLAG_DF 0x4000
#define IP_FLAG_MF 0x2000
#define IP_FRAG_OFF_MASK 0x1fff
#define ARP_LEN 28
#define ARP_HTYPE_ETHER 1

static inline uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void
put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static inline void
put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = (v >> 16) & 0xff;
	p[2] = (v >> 8) & 0xff;
	p[3] = v & 0xff;
}

/* RFC 1071 one's-complement sum of 16-bit words, not yet folded. */
static uint32_t
csum_add(uint32_t sum, const uint8_t *p, uint32_t len)
{
	for (; len > 1; p += 2, len -= 2)
		sum += get16(p);
	if (len == 1)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t
csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* UDP checksum over the IPv4 pseudo-header and the datagram (RFC 768). */
static uint32_t
udp_sum(uint32_t src_ip, uint32_t dst_ip, const uint8_t *udp, uint32_t udp_len)
{
	uint32_t sum = 0;

	sum += src_ip >> 16;
	sum += src_ip & 0xffff;
	sum += dst_ip >> 16;
	sum += dst_ip & 0xffff;
	sum += IP_PROTO_UDP;
	sum += udp_len;
	return csum_add(sum, udp, udp_len);
}

static enum bfd_frame_kind
bad(struct bfd_frame *out, enum bfd_rx_reason r)
{
	out->reason = r;
	out->kind = BFD_FRAME_BAD;
	return BFD_FRAME_BAD;
}

static enum bfd_frame_kind
parse_arp(const uint8_t *a, uint32_t len, struct bfd_frame *out)
{
	uint16_t op;

	if (len < ARP_LEN || get16(a) != ARP_HTYPE_ETHER || get16(a + 2) != BFD_ETHERTYPE_IPV4 ||
	    a[4] != BFD_ETH_ALEN || a[5] != 4)
		return bad(out, BFD_RX_BAD_ARP);
	op = get16(a + 6);
	if (op != BFD_ARP_REQUEST && op != BFD_ARP_REPLY)
		return bad(out, BFD_RX_BAD_ARP);
	out->arp_op = op;
	memcpy(out->arp_sha, a + 8, BFD_ETH_ALEN);
	out->arp_spa = get32(a + 14);
	out->arp_tpa = get32(a + 24);
	out->kind = BFD_FRAME_ARP;
	return BFD_FRAME_ARP;
}

static enum bfd_frame_kind
parse_ipv4(const uint8_t *ip, uint32_t len, struct bfd_frame *out)
{
	uint32_t ihl, total, udp_len;
	uint16_t frag, sum;
	const uint8_t *udp;

	if (len < BFD_IP_HLEN || (ip[0] >> 4) != 4)
		return BFD_FRAME_OTHER;
	ihl = (uint32_t)(ip[0] & 0x0f) * 4;
	frag = get16(ip + 6);
	/* Only a first (or whole) UDP datagram to 3784 is recognisably BFD. */
	if (ihl < BFD_IP_HLEN || ip[9] != IP_PROTO_UDP || (frag & IP_FRAG_OFF_MASK) != 0 ||
	    len < ihl + BFD_UDP_HLEN || get16(ip + ihl + 2) != BFD_UDP_PORT)
		return BFD_FRAME_OTHER;
	udp = ip + ihl;
	total = get16(ip + 2);
	if (total < ihl + BFD_UDP_HLEN || total > len || (frag & IP_FLAG_MF) != 0 ||
	    csum_fold(csum_add(0, ip, ihl)) != 0xffff)
		return bad(out, BFD_RX_BAD_IP);
	out->src_ip = get32(ip + 12);
	out->dst_ip = get32(ip + 16);
	out->ttl = ip[8];
	out->src_port = get16(udp);
	udp_len = get16(udp + 4);
	sum = get16(udp + 6);
	if (udp_len < BFD_UDP_HLEN || udp_len > total - ihl ||
	    (sum != 0 && csum_fold(udp_sum(out->src_ip, out->dst_ip, udp, udp_len)) != 0xffff))
		return bad(out, BFD_RX_BAD_UDP);
	/* RFC 5881 section 5: single hop means nobody decremented the TTL. */
	if (out->ttl != BFD_TTL)
		return bad(out, BFD_RX_BAD_TTL);
	/* RFC 5881 section 4: the source port is in 49152-65535. */
	if (out->src_port < BFD_SRC_PORT_MIN)
		return bad(out, BFD_RX_BAD_UDP);
	out->payload = udp + BFD_UDP_HLEN;
	out->payload_len = udp_len - BFD_UDP_HLEN;
	out->kind = BFD_FRAME_CTRL;
	return BFD_FRAME_CTRL;
}

enum bfd_frame_kind
bfd_frame_parse(const uint8_t *frame, uint32_t len, struct bfd_frame *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = BFD_FRAME_OTHER;
	if (len < BFD_ETH_HLEN)
		return BFD_FRAME_OTHER;
	memcpy(out->dst_mac, frame, BFD_ETH_ALEN);
	memcpy(out->src_mac, frame + BFD_ETH_ALEN, BFD_ETH_ALEN);
	switch (get16(frame + 12)) {
	case BFD_ETHERTYPE_ARP:
		return parse_arp(frame + BFD_ETH_HLEN, len - BFD_ETH_HLEN, out);
	case BFD_ETHERTYPE_IPV4:
		return parse_ipv4(frame + BFD_ETH_HLEN, len - BFD_ETH_HLEN, out);
	default:
		return BFD_FRAME_OTHER;
	}
}

bool
bfd_frame_peek(const uint8_t *frame, uint32_t len, uint32_t *ip, uint32_t *ip2)
{
	const uint8_t *l3 = frame + BFD_ETH_HLEN;
	uint32_t ihl;

	if (len < BFD_ETH_HLEN)
		return false;
	len -= BFD_ETH_HLEN;
	switch (get16(frame + 12)) {
	case BFD_ETHERTYPE_ARP:
		if (len < ARP_LEN)
			return false;
		*ip = get32(l3 + 24);
		*ip2 = get32(l3 + 14);
		return true;
	case BFD_ETHERTYPE_IPV4:
		if (len < BFD_IP_HLEN || l3[9] != IP_PROTO_UDP)
			return false;
		ihl = (uint32_t)(l3[0] & 0x0f) * 4;
		if (ihl < BFD_IP_HLEN || len < ihl + BFD_UDP_HLEN ||
		    get16(l3 + ihl + 2) != BFD_UDP_PORT)
			return false;
		*ip = get32(l3 + 16);
		*ip2 = 0;
		return true;
	default:
		return false;
	}
}

static void
put_eth(uint8_t *f, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	memcpy(f, dst, BFD_ETH_ALEN);
	memcpy(f + BFD_ETH_ALEN, src, BFD_ETH_ALEN);
	put16(f + 12, type);
}

int
bfd_frame_build_ctrl(uint8_t *buf, uint32_t buflen, const uint8_t src_mac[BFD_ETH_ALEN],
		     const uint8_t dst_mac[BFD_ETH_ALEN], uint32_t src_ip, uint32_t dst_ip,
		     uint16_t src_port, const uint8_t *payload, uint32_t payload_len)
{
	uint32_t udp_len = BFD_UDP_HLEN + payload_len;
	uint32_t total = BFD_IP_HLEN + udp_len;
	uint8_t *ip = buf + BFD_ETH_HLEN, *udp = ip + BFD_IP_HLEN;
	uint16_t sum;

	if (payload_len > BFD_PKT_MAX_LEN || buflen < BFD_ETH_HLEN + total)
		return -1;
	put_eth(buf, dst_mac, src_mac, BFD_ETHERTYPE_IPV4);
	ip[0] = 0x45;
	ip[1] = BFD_IP_TOS_CS6;
	put16(ip + 2, (uint16_t)total);
	put16(ip + 4, 0);	/* DF set and never fragmented: no ID needed (RFC 6864) */
	put16(ip + 6, IP_FLAG_DF);
	ip[8] = BFD_TTL;
	ip[9] = IP_PROTO_UDP;
	put16(ip + 10, 0);
	put32(ip + 12, src_ip);
	put32(ip + 16, dst_ip);
	put16(ip + 10, (uint16_t)~csum_fold(csum_add(0, ip, BFD_IP_HLEN)));
	put16(udp, src_port);
	put16(udp + 2, BFD_UDP_PORT);
	put16(udp + 4, (uint16_t)udp_len);
	put16(udp + 6, 0);
	memcpy(udp + BFD_UDP_HLEN, payload, payload_len);
	sum = (uint16_t)~csum_fold(udp_sum(src_ip, dst_ip, udp, udp_len));
	put16(udp + 6, sum == 0 ? 0xffff : sum); /* 0 would mean "no checksum" */
	return (int)(BFD_ETH_HLEN + total);
}

int
bfd_frame_build_arp(uint8_t *buf, uint32_t buflen, uint16_t op, const uint8_t sha[BFD_ETH_ALEN],
		    uint32_t spa, const uint8_t *tha, uint32_t tpa)
{
	static const uint8_t broadcast[BFD_ETH_ALEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t zero[BFD_ETH_ALEN];
	uint8_t *a = buf + BFD_ETH_HLEN;

	if (buflen < BFD_ARP_FRAME_LEN || (op != BFD_ARP_REQUEST && op != BFD_ARP_REPLY) ||
	    (op == BFD_ARP_REPLY && tha == NULL))
		return -1;
	memset(buf, 0, BFD_ARP_FRAME_LEN);
	put_eth(buf, op == BFD_ARP_REQUEST ? broadcast : tha, sha, BFD_ETHERTYPE_ARP);
	put16(a, ARP_HTYPE_ETHER);
	put16(a + 2, BFD_ETHERTYPE_IPV4);
	a[4] = BFD_ETH_ALEN;
	a[5] = 4;
	put16(a + 6, op);
	memcpy(a + 8, sha, BFD_ETH_ALEN);
	put32(a + 14, spa);
	memcpy(a + 18, op == BFD_ARP_REQUEST || tha == NULL ? zero : tha, BFD_ETH_ALEN);
	put32(a + 24, tpa);
	return BFD_ARP_FRAME_LEN;
}

int
bfd_mac_parse(const char *s, uint8_t mac[BFD_ETH_ALEN])
{
	unsigned int b[BFD_ETH_ALEN];
	char end;

	if (strlen(s) != 17 ||
	    sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &end) != 6)
		return -1;
	for (int i = 0; i < BFD_ETH_ALEN; i++) {
		/* sscanf's %x takes signs and spaces: insist on hex digits. */
		for (int k = 0; k < 2; k++) {
			char c = s[i * 3 + k];

			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
			      (c >= 'A' && c <= 'F')))
				return -1;
		}
		if (i < BFD_ETH_ALEN - 1 && s[i * 3 + 2] != ':')
			return -1;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

void
bfd_mac_format(const uint8_t mac[BFD_ETH_ALEN], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
}
