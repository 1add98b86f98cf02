/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * bfd_test_frames.h -- helpers shared by the BFD framing and node tests.
 * The checksums are an RFC 1071 sum written here independently of bfd_net.c,
 * so a test can recompute what a frame must carry, or put a frame right
 * again after changing one field.  Control frames come from the library's
 * own builder, whose output test_bfd_net.c compares with a scapy reference.
 * Include after <cmocka.h>.
 */
#ifndef BFD_TEST_FRAMES_H
#define BFD_TEST_FRAMES_H

#include <stdint.h>
#include <string.h>

#include "bfd_net.h"
#include "bfd_pkt.h"

/* a.b.c.d in host byte order */
#define TF_IP(a, b, c, d) \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

/* Offsets in an untagged frame with a 20-byte IPv4 header. */
#define TF_IP_OFF BFD_ETH_HLEN
#define TF_UDP_OFF (BFD_ETH_HLEN + BFD_IP_HLEN)
#define TF_PAYLOAD_OFF (TF_UDP_OFF + BFD_UDP_HLEN)
#define TF_ARP_OFF BFD_ETH_HLEN
#define TF_CTRL_LEN (TF_PAYLOAD_OFF + BFD_PKT_LEN) /* with a 24-byte payload */

static inline uint16_t
tf_get16(const uint8_t *p)
{
	return (uint16_t)((unsigned int)p[0] << 8 | p[1]);
}

static inline uint32_t
tf_get32(const uint8_t *p)
{
	return (uint32_t)tf_get16(p) << 16 | tf_get16(p + 2);
}

static inline void
tf_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
tf_put32(uint8_t *p, uint32_t v)
{
	tf_put16(p, (uint16_t)(v >> 16));
	tf_put16(p + 2, (uint16_t)v);
}

/* RFC 1071: the one's complement of the one's-complement sum of the 16-bit
 * words (an odd last byte padded with zero). */
static inline uint16_t
tf_csum(const uint8_t *p, size_t len)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum += (i & 1) ? p[i] : (uint64_t)p[i] << 8;
	while (sum > 0xffff)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The header checksum the IPv4 header at `ip` must carry. */
static inline uint16_t
tf_ip_csum(const uint8_t *ip)
{
	uint8_t h[60];
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4;

	memcpy(h, ip, ihl);
	h[10] = 0;
	h[11] = 0;
	return tf_csum(h, ihl);
}

/* The UDP checksum (RFC 768: over the pseudo-header, the header and the
 * data, a result of 0 sent as 0xffff) the frame's datagram must carry. */
static inline uint16_t
tf_udp_csum(const uint8_t *frame)
{
	const uint8_t *ip = frame + BFD_ETH_HLEN;
	const uint8_t *udp = ip + (size_t)(ip[0] & 0x0f) * 4;
	uint16_t ulen = tf_get16(udp + 4);
	uint8_t b[12 + BFD_UDP_HLEN + BFD_PKT_MAX_LEN];
	uint16_t sum;

	assert_true(ulen <= sizeof(b) - 12);
	memcpy(b, ip + 12, 8); /* source and destination address */
	b[8] = 0;
	b[9] = 17; /* UDP */
	tf_put16(b + 10, ulen);
	memcpy(b + 12, udp, ulen);
	b[12 + 6] = 0;
	b[12 + 7] = 0;
	sum = tf_csum(b, 12 + (size_t)ulen);
	return sum == 0 ? 0xffff : sum;
}

/* After a header field was changed: both checksums right again (a zero UDP
 * checksum, "none", stays zero). */
static inline void
tf_fix_csums(uint8_t *frame)
{
	uint8_t *ip = frame + BFD_ETH_HLEN;
	uint8_t *udp = ip + (size_t)(ip[0] & 0x0f) * 4;

	tf_put16(ip + 10, tf_ip_csum(ip));
	if (tf_get16(udp + 6) != 0)
		tf_put16(udp + 6, tf_udp_csum(frame));
}

/* A BFD control frame carrying `c` (encoded by bfd_pkt_encode); its length. */
static inline uint32_t
tf_ctrl_frame(uint8_t buf[BFD_FRAME_MAX], const uint8_t src_mac[BFD_ETH_ALEN],
	      const uint8_t dst_mac[BFD_ETH_ALEN], uint32_t src_ip, uint32_t dst_ip,
	      uint16_t src_port, const struct bfd_ctrl *c)
{
	uint8_t pkt[BFD_PKT_MAX_LEN];
	int n = bfd_pkt_encode(c, pkt, sizeof(pkt));
	int len;

	assert_true(n > 0);
	len = bfd_frame_build_ctrl(buf, BFD_FRAME_MAX, src_mac, dst_mac, src_ip, dst_ip, src_port,
				   pkt, (uint32_t)n);
	assert_int_equal(len, TF_PAYLOAD_OFF + n);
	return (uint32_t)len;
}

/* An ARP frame (bfd_frame_build_arp); its length. */
static inline uint32_t
tf_arp_frame(uint8_t buf[BFD_ARP_FRAME_LEN], uint16_t op, const uint8_t sha[BFD_ETH_ALEN],
	     uint32_t spa, const uint8_t *tha, uint32_t tpa)
{
	int len = bfd_frame_build_arp(buf, BFD_ARP_FRAME_LEN, op, sha, spa, tha, tpa);

	assert_int_equal(len, BFD_ARP_FRAME_LEN);
	return (uint32_t)len;
}

/* `frame` with an 802.1Q tag (VLAN `vid`) after the addresses, into `out`
 * (len + 4 bytes); the new length. */
static inline uint32_t
tf_vlan_tag(uint8_t *out, const uint8_t *frame, uint32_t len, uint16_t vid)
{
	memcpy(out, frame, 2 * BFD_ETH_ALEN);
	tf_put16(out + 12, 0x8100);
	tf_put16(out + 14, vid);
	memcpy(out + 16, frame + 12, len - 12);
	return len + 4;
}

#endif /* BFD_TEST_FRAMES_H */
