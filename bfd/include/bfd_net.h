/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * Framing for single-hop BFD over IPv4 (RFC 5881) on an Ethernet port, and
 * the ARP (RFC 826) a port needs to reach its peer -- bytes in, bytes out,
 * no I/O, so it is unit-tested and fuzzed without DPDK.
 *
 * bfd_frame_parse() takes a whole Ethernet frame (no FCS) and says what it
 * is: ARP, a BFD control packet (UDP to port 3784), something else, or a
 * frame that claims to be one of the first two but is malformed -- the last
 * with a reason from enum bfd_rx_reason, so drops are counted by cause.
 * Addresses are in host byte order.
 */
#ifndef BFD_NET_H
#define BFD_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "bfd_pkt.h"

#define BFD_ETH_ALEN 6
#define BFD_ETH_HLEN 14
#define BFD_IP_HLEN 20
#define BFD_UDP_HLEN 8
#define BFD_ETHERTYPE_IPV4 0x0800
#define BFD_ETHERTYPE_ARP 0x0806
#define BFD_IP_TOS_CS6 0xc0	/* RFC 5881 section 4: network control precedence */
#define BFD_ARP_REQUEST 1
#define BFD_ARP_REPLY 2
#define BFD_ARP_FRAME_LEN 60	/* 42 bytes of ARP padded to the Ethernet minimum */
#define BFD_FRAME_MAX (BFD_ETH_HLEN + BFD_IP_HLEN + BFD_UDP_HLEN + BFD_PKT_MAX_LEN)

enum bfd_frame_kind {
	BFD_FRAME_OTHER = 0, /* not ARP, not UDP to port 3784: not ours */
	BFD_FRAME_ARP,
	BFD_FRAME_CTRL,	     /* a BFD control packet; payload not yet checked */
	BFD_FRAME_BAD,	     /* ARP or BFD, malformed: see reason */
};

struct bfd_frame {
	enum bfd_frame_kind kind;
	enum bfd_rx_reason reason; /* BFD_FRAME_BAD only */
	uint8_t dst_mac[BFD_ETH_ALEN];
	uint8_t src_mac[BFD_ETH_ALEN];
	/* BFD_FRAME_ARP */
	uint16_t arp_op;
	uint8_t arp_sha[BFD_ETH_ALEN];
	uint32_t arp_spa, arp_tpa;
	/* BFD_FRAME_CTRL */
	uint32_t src_ip, dst_ip;
	uint8_t ttl;
	uint16_t src_port;
	const uint8_t *payload; /* into the frame */
	uint32_t payload_len;
};

/*
 * Classify and check one frame.  For BFD_FRAME_CTRL the IPv4 header (version,
 * length, checksum, no fragment), the UDP length and checksum (when not zero),
 * the RFC 5881 TTL of 255 and the source port range have all passed; a frame
 * failing one is BFD_FRAME_BAD with BFD_RX_BAD_IP, _BAD_UDP or _BAD_TTL.
 * ARP must be Ethernet/IPv4 (BFD_RX_BAD_ARP otherwise).  Returns out->kind.
 */
enum bfd_frame_kind bfd_frame_parse(const uint8_t *frame, uint32_t len, struct bfd_frame *out);

/*
 * A quick look for a receive path deciding whether a frame goes to BFD:
 * ARP, or IPv4 UDP to port 3784.  On true, *ip is the address that matters
 * (ARP: the target and sender via *ip and *ip2; BFD: the destination in *ip,
 * *ip2 = 0).  Nothing is checked beyond what is needed to read those fields.
 */
bool bfd_frame_peek(const uint8_t *frame, uint32_t len, uint32_t *ip, uint32_t *ip2);

/*
 * Build a BFD control frame: Ethernet, IPv4 (TTL 255, TOS CS6, DF, header
 * checksum), UDP from `src_port` to 3784 with its checksum, then `payload`.
 * Returns the frame length, or -1 if `buflen` is too small or the payload
 * longer than BFD_PKT_MAX_LEN.
 */
int bfd_frame_build_ctrl(uint8_t *buf, uint32_t buflen, const uint8_t src_mac[BFD_ETH_ALEN],
			 const uint8_t dst_mac[BFD_ETH_ALEN], uint32_t src_ip, uint32_t dst_ip,
			 uint16_t src_port, const uint8_t *payload, uint32_t payload_len);

/*
 * Build an ARP request or reply (BFD_ARP_FRAME_LEN bytes, zero padded).  A
 * request goes to the broadcast address with an all-zero target hardware
 * address (`tha` may be NULL); a reply goes to `tha`.  Returns the length or
 * -1 if `buflen` is too small.
 */
int bfd_frame_build_arp(uint8_t *buf, uint32_t buflen, uint16_t op,
			const uint8_t sha[BFD_ETH_ALEN], uint32_t spa,
			const uint8_t *tha, uint32_t tpa);

/* "aa:bb:cc:dd:ee:ff" -> bytes; 0 or -1.  And back (18 bytes incl. NUL). */
int bfd_mac_parse(const char *s, uint8_t mac[BFD_ETH_ALEN]);
void bfd_mac_format(const uint8_t mac[BFD_ETH_ALEN], char out[18]);

#endif /* BFD_NET_H */
