/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * BFD framing (RFC 5881 over Ethernet/IPv4/UDP, RFC 826 ARP): built frames
 * byte for byte against scapy references, checksums recomputed here
 * (RFC 1071), round trips, every rejection with its reason, what is not BFD,
 * the quick peek, and MAC address text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bfd_net.h"
#include "bfd_test_frames.h"

static const uint8_t mac_a[BFD_ETH_ALEN] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
static const uint8_t mac_b[BFD_ETH_ALEN] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
static const uint8_t broadcast[BFD_ETH_ALEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
#define IP_A TF_IP(198, 18, 0, 1)
#define IP_B TF_IP(198, 18, 0, 2)

/* Version 1, Up, mult 3, my 0x11223344, your 0x55667788, 10 ms / 10 ms. */
static const uint8_t ref_payload[BFD_PKT_LEN] = {
	0x20, 0xc0, 0x03, 0x18, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
	0x00, 0x00, 0x27, 0x10, 0x00, 0x00, 0x27, 0x10, 0x00, 0x00, 0x00, 0x00,
};

/*
 * Made with scapy 2.5.0 (/usr/bin/python3):
 *   raw(Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') /
 *       IP(src='198.18.0.1', dst='198.18.0.2', ttl=255, tos=0xc0, flags='DF', id=0) /
 *       UDP(sport=49152, dport=3784) / Raw(ref_payload))
 */
static const uint8_t ref_ctrl[TF_CTRL_LEN] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0xc0, 0x00, 0x34, 0x00, 0x00, 0x40, 0x00, 0xff, 0x11,
	0xee, 0xd0, 0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x02, 0xc0, 0x00,
	0x0e, 0xc8, 0x00, 0x20, 0x21, 0x70, 0x20, 0xc0, 0x03, 0x18, 0x11, 0x22,
	0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x00, 0x00, 0x27, 0x10, 0x00, 0x00,
	0x27, 0x10, 0x00, 0x00, 0x00, 0x00,
};

/*
 * Made with scapy 2.5.0, zero padded to 60 bytes:
 *   raw(Ether(src='02:00:00:00:00:01', dst='ff:ff:ff:ff:ff:ff') /
 *       ARP(op=1, hwsrc='02:00:00:00:00:01', psrc='198.18.0.1',
 *           hwdst='00:00:00:00:00:00', pdst='198.18.0.2'))
 * and the reply: op=2, dst= and hwdst='02:00:00:00:00:02'.
 */
static const uint8_t ref_arp_request[BFD_ARP_FRAME_LEN] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0x00,
	0x00, 0x00, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0xc6, 0x12, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
static const uint8_t ref_arp_reply[BFD_ARP_FRAME_LEN] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x02, 0x02, 0x00,
	0x00, 0x00, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00,
	0x00, 0x02, 0xc6, 0x12, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* A control frame A -> B from `sport` with the reference payload. */
static uint32_t
ctrl_frame(uint8_t f[BFD_FRAME_MAX], uint16_t sport)
{
	int len = bfd_frame_build_ctrl(f, BFD_FRAME_MAX, mac_a, mac_b, IP_A, IP_B, sport,
				       ref_payload, sizeof(ref_payload));

	assert_int_equal(len, TF_CTRL_LEN);
	return (uint32_t)len;
}

/* `f` must be rejected as malformed for `why`. */
static void
assert_bad(const uint8_t *f, uint32_t len, enum bfd_rx_reason why)
{
	struct bfd_frame out;

	if (bfd_frame_parse(f, len, &out) != BFD_FRAME_BAD || out.kind != BFD_FRAME_BAD ||
	    out.reason != why)
		fail_msg("kind %d reason %s, want BAD %s", out.kind, bfd_rx_reason_str(out.reason),
			 bfd_rx_reason_str(why));
}

static void
assert_other(const uint8_t *f, uint32_t len)
{
	struct bfd_frame out;

	assert_int_equal(bfd_frame_parse(f, len, &out), BFD_FRAME_OTHER);
	assert_int_equal(out.kind, BFD_FRAME_OTHER);
	assert_int_equal(out.reason, BFD_RX_OK);
}

/* Check every header field and both checksums of a built control frame. */
static void
check_ctrl_frame(const uint8_t *f, int len, uint32_t src_ip, uint32_t dst_ip, uint16_t sport,
		 const uint8_t *payload, uint32_t plen)
{
	const uint8_t *ip = f + TF_IP_OFF, *udp = f + TF_UDP_OFF;
	struct bfd_frame out;

	assert_int_equal(len, TF_PAYLOAD_OFF + plen);
	assert_memory_equal(f, mac_b, BFD_ETH_ALEN);
	assert_memory_equal(f + 6, mac_a, BFD_ETH_ALEN);
	assert_int_equal(tf_get16(f + 12), BFD_ETHERTYPE_IPV4);
	assert_int_equal(ip[0], 0x45);		       /* version 4, IHL 5 */
	assert_int_equal(ip[1], BFD_IP_TOS_CS6);       /* 0xc0 */
	assert_int_equal(tf_get16(ip + 2), BFD_IP_HLEN + BFD_UDP_HLEN + plen);
	assert_int_equal(tf_get16(ip + 6), 0x4000);    /* DF, offset 0 */
	assert_int_equal(ip[8], 255);
	assert_int_equal(ip[9], 17);
	assert_int_equal(tf_get32(ip + 12), src_ip);
	assert_int_equal(tf_get32(ip + 16), dst_ip);
	assert_int_equal(tf_get16(ip + 10), tf_ip_csum(ip));
	assert_int_equal(tf_csum(ip, BFD_IP_HLEN), 0); /* sums to all ones */
	assert_int_equal(tf_get16(udp), sport);
	assert_int_equal(tf_get16(udp + 2), BFD_UDP_PORT);
	assert_int_equal(tf_get16(udp + 4), BFD_UDP_HLEN + plen);
	assert_int_equal(tf_get16(udp + 6), tf_udp_csum(f));
	assert_memory_equal(f + TF_PAYLOAD_OFF, payload, plen);

	assert_int_equal(bfd_frame_parse(f, (uint32_t)len, &out), BFD_FRAME_CTRL);
	assert_memory_equal(out.dst_mac, mac_b, BFD_ETH_ALEN);
	assert_memory_equal(out.src_mac, mac_a, BFD_ETH_ALEN);
	assert_int_equal(out.src_ip, src_ip);
	assert_int_equal(out.dst_ip, dst_ip);
	assert_int_equal(out.ttl, 255);
	assert_int_equal(out.src_port, sport);
	assert_ptr_equal(out.payload, f + TF_PAYLOAD_OFF);
	assert_int_equal(out.payload_len, plen);
	assert_memory_equal(out.payload, payload, plen);
}

/* ---- building control frames ------------------------------------------------ */

static void
test_ctrl_frame_is_the_scapy_reference(void **state)
{
	uint8_t f[BFD_FRAME_MAX];

	(void)state;
	ctrl_frame(f, 49152);
	assert_memory_equal(f, ref_ctrl, sizeof(ref_ctrl));
	check_ctrl_frame(f, TF_CTRL_LEN, IP_A, IP_B, 49152, ref_payload, sizeof(ref_payload));
	/* And the reference parses as what it is. */
	check_ctrl_frame(ref_ctrl, sizeof(ref_ctrl), IP_A, IP_B, 49152, ref_payload,
			 sizeof(ref_payload));
}

static void
test_ctrl_frame_round_trips(void **state)
{
	static const uint32_t lens[] = {0, 1, 24, 25, 26, 33, 48, 52, 63, BFD_PKT_MAX_LEN};
	static const uint16_t ports[] = {49152, 50000, 65535};
	static const uint32_t addrs[][2] = {
		{IP_A, IP_B},
		{TF_IP(10, 0, 0, 1), TF_IP(10, 0, 0, 2)},
		{TF_IP(255, 255, 255, 254), TF_IP(1, 2, 3, 4)},
		{TF_IP(192, 168, 255, 255), TF_IP(172, 31, 0, 0)},
	};
	uint8_t payload[BFD_PKT_MAX_LEN], f[BFD_FRAME_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(0xa5 ^ (i * 37));
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
		for (size_t p = 0; p < sizeof(ports) / sizeof(ports[0]); p++)
			for (size_t a = 0; a < sizeof(addrs) / sizeof(addrs[0]); a++) {
				int len = bfd_frame_build_ctrl(f, sizeof(f), mac_a, mac_b,
							       addrs[a][0], addrs[a][1], ports[p],
							       payload, lens[l]);

				check_ctrl_frame(f, len, addrs[a][0], addrs[a][1], ports[p],
						 payload, lens[l]);
			}
}

static void
test_ctrl_frame_build_limits(void **state)
{
	uint8_t payload[BFD_PKT_MAX_LEN + 1] = {0}, f[BFD_FRAME_MAX + 8];

	(void)state;
	assert_int_equal(bfd_frame_build_ctrl(f, sizeof(f), mac_a, mac_b, IP_A, IP_B, 49152,
					      payload, BFD_PKT_MAX_LEN + 1),
			 -1);
	assert_int_equal(bfd_frame_build_ctrl(f, TF_CTRL_LEN - 1, mac_a, mac_b, IP_A, IP_B, 49152,
					      payload, BFD_PKT_LEN),
			 -1);
	assert_int_equal(bfd_frame_build_ctrl(f, TF_CTRL_LEN, mac_a, mac_b, IP_A, IP_B, 49152,
					      payload, BFD_PKT_LEN),
			 TF_CTRL_LEN);
	assert_int_equal(bfd_frame_build_ctrl(f, BFD_FRAME_MAX, mac_a, mac_b, IP_A, IP_B, 49152,
					      payload, BFD_PKT_MAX_LEN),
			 BFD_FRAME_MAX);
}

/* RFC 768: a computed checksum of zero is sent as all ones (zero means
 * "none").  The last payload word set to the ordinary checksum makes the
 * sum all ones; scapy sends that frame with 0xffff as well. */
static void
test_udp_checksum_zero_is_sent_as_ffff(void **state)
{
	uint8_t payload[BFD_PKT_LEN], f[BFD_FRAME_MAX];
	struct bfd_frame out;

	(void)state;
	memcpy(payload, ref_payload, sizeof(payload));
	memcpy(payload + 22, ref_ctrl + TF_UDP_OFF + 6, 2); /* 0x2170 */
	assert_int_equal(bfd_frame_build_ctrl(f, sizeof(f), mac_a, mac_b, IP_A, IP_B, 49152,
					      payload, sizeof(payload)),
			 TF_CTRL_LEN);
	assert_int_equal(tf_get16(f + TF_UDP_OFF + 6), 0xffff);
	assert_int_equal(tf_udp_csum(f), 0xffff);
	assert_int_equal(bfd_frame_parse(f, TF_CTRL_LEN, &out), BFD_FRAME_CTRL);
}

/* ---- rejections -------------------------------------------------------------- */

static void
test_bad_ip_header(void **state)
{
	uint8_t f[BFD_FRAME_MAX];
	uint8_t *ip = f + TF_IP_OFF;
	struct bfd_frame out;

	(void)state;
	/* Total length too short for the header and a UDP header. */
	ctrl_frame(f, 49152);
	tf_put16(ip + 2, BFD_IP_HLEN);
	tf_fix_csums(f);
	assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_IP);
	tf_put16(ip + 2, BFD_IP_HLEN + BFD_UDP_HLEN - 1);
	tf_fix_csums(f);
	assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_IP);
	tf_put16(ip + 2, 0);
	tf_fix_csums(f);
	assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_IP);
	/* The frame cut short of the total length (by one byte, or all of the
	 * payload). */
	ctrl_frame(f, 49152);
	assert_bad(f, TF_CTRL_LEN - 1, BFD_RX_BAD_IP);
	assert_bad(f, TF_PAYLOAD_OFF, BFD_RX_BAD_IP);
	tf_put16(ip + 2, 0xffff);
	tf_fix_csums(f);
	assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_IP);
	/* Header checksum: a wrong one, or a field changed under it. */
	ctrl_frame(f, 49152);
	ip[11] ^= 0x01;
	assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_IP);
	ctrl_frame(f, 49152);
	ip[15] ^= 0x80; /* source address */
	assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_IP);
	ctrl_frame(f, 49152);
	tf_put16(ip + 10, 0);
	assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_IP);
	/* The first fragment of several (MF, offset 0): never whole. */
	ctrl_frame(f, 49152);
	tf_put16(ip + 6, 0x2000);
	tf_fix_csums(f);
	assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_IP);
	tf_put16(ip + 6, 0x6000); /* with DF as well */
	tf_fix_csums(f);
	assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_IP);
	/* Without DF is fine (only MF and the offset matter). */
	tf_put16(ip + 6, 0);
	tf_fix_csums(f);
	assert_int_equal(bfd_frame_parse(f, TF_CTRL_LEN, &out), BFD_FRAME_CTRL);
}

/* A header with options: the checksum covers them, UDP follows them. */
static void
test_ip_options_move_the_udp_header(void **state)
{
	uint8_t f[BFD_FRAME_MAX], g[BFD_FRAME_MAX + 4];
	uint32_t len = ctrl_frame(f, 49999);
	struct bfd_frame out;

	(void)state;
	memcpy(g, f, TF_UDP_OFF);
	memset(g + TF_UDP_OFF, 0x01, 4); /* four NOP options */
	memcpy(g + TF_UDP_OFF + 4, f + TF_UDP_OFF, len - TF_UDP_OFF);
	g[TF_IP_OFF] = 0x46;
	tf_put16(g + TF_IP_OFF + 2, (uint16_t)(tf_get16(f + TF_IP_OFF + 2) + 4));
	tf_fix_csums(g);
	assert_int_equal(bfd_frame_parse(g, len + 4, &out), BFD_FRAME_CTRL);
	assert_int_equal(out.src_port, 49999);
	assert_ptr_equal(out.payload, g + TF_PAYLOAD_OFF + 4);
	assert_memory_equal(out.payload, ref_payload, sizeof(ref_payload));
	/* The checksum must cover the options. */
	g[TF_UDP_OFF] = 0x00; /* an end-of-options byte instead of a NOP */
	assert_bad(g, len + 4, BFD_RX_BAD_IP);
}

static void
test_bad_udp(void **state)
{
	uint8_t f[BFD_FRAME_MAX];
	uint8_t *udp = f + TF_UDP_OFF;
	struct bfd_frame out;

	(void)state;
	/* UDP length shorter than its own header. */
	for (uint16_t l = 0; l < BFD_UDP_HLEN; l++) {
		ctrl_frame(f, 49152);
		tf_put16(udp + 4, l);
		tf_put16(udp + 6, 0);
		tf_fix_csums(f);
		assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_UDP);
	}
	/* Longer than the IP payload (the frame itself is long enough). */
	ctrl_frame(f, 49152);
	tf_put16(udp + 4, BFD_UDP_HLEN + BFD_PKT_LEN + 1);
	tf_put16(udp + 6, 0);
	f[TF_CTRL_LEN] = 0;
	assert_bad(f, TF_CTRL_LEN + 1, BFD_RX_BAD_UDP);
	/* A wrong checksum: one payload bit, one address bit (the
	 * pseudo-header), or the checksum itself. */
	ctrl_frame(f, 49152);
	f[TF_PAYLOAD_OFF + 5] ^= 0x10;
	assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_UDP);
	ctrl_frame(f, 49152);
	f[TF_IP_OFF + 19] ^= 0x01; /* destination address */
	tf_put16(f + TF_IP_OFF + 10, tf_ip_csum(f + TF_IP_OFF));
	assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_UDP);
	ctrl_frame(f, 49152);
	udp[7] ^= 0x04;
	assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_UDP);
	/* Zero: no checksum, accepted whatever the payload. */
	ctrl_frame(f, 49152);
	tf_put16(udp + 6, 0);
	f[TF_PAYLOAD_OFF + 5] ^= 0x10;
	assert_int_equal(bfd_frame_parse(f, TF_CTRL_LEN, &out), BFD_FRAME_CTRL);
	assert_int_equal(out.payload_len, BFD_PKT_LEN);
	assert_int_equal(out.payload[5], ref_payload[5] ^ 0x10);
	/* UDP shorter than the IP payload: the UDP length says where it ends. */
	ctrl_frame(f, 49152);
	tf_put16(udp + 4, BFD_UDP_HLEN + 20);
	tf_fix_csums(f);
	assert_int_equal(bfd_frame_parse(f, TF_CTRL_LEN, &out), BFD_FRAME_CTRL);
	assert_int_equal(out.payload_len, 20);
	/* Ethernet padding after the datagram is not part of it. */
	ctrl_frame(f, 49152);
	memset(f + TF_CTRL_LEN, 0xee, 6);
	assert_int_equal(bfd_frame_parse(f, TF_CTRL_LEN + 6, &out), BFD_FRAME_CTRL);
	assert_int_equal(out.payload_len, BFD_PKT_LEN);
}

static void
test_ttl_must_be_255(void **state)
{
	static const uint8_t ttls[] = {254, 128, 64, 1, 0};
	uint8_t f[BFD_FRAME_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(ttls); i++) {
		ctrl_frame(f, 49152);
		f[TF_IP_OFF + 8] = ttls[i];
		tf_fix_csums(f);
		assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_TTL);
	}
}

static void
test_source_port_range(void **state)
{
	static const uint16_t bad_ports[] = {49151, 1024, 3784, 1, 0};
	static const uint16_t good_ports[] = {49152, 49153, 60000, 65535};
	uint8_t f[BFD_FRAME_MAX];
	struct bfd_frame out;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_ports) / sizeof(bad_ports[0]); i++) {
		ctrl_frame(f, bad_ports[i]);
		assert_int_equal(tf_get16(f + TF_UDP_OFF + 6), tf_udp_csum(f));
		assert_bad(f, TF_CTRL_LEN, BFD_RX_BAD_UDP);
	}
	for (size_t i = 0; i < sizeof(good_ports) / sizeof(good_ports[0]); i++) {
		ctrl_frame(f, good_ports[i]);
		assert_int_equal(bfd_frame_parse(f, TF_CTRL_LEN, &out), BFD_FRAME_CTRL);
		assert_int_equal(out.src_port, good_ports[i]);
	}
}

/* ---- not BFD ----------------------------------------------------------------- */

static void
test_other_frames(void **state)
{
	/* a later fragment: offset != 0, with or without MF */
	static const uint16_t frags[] = {0x0001, 0x2001, 0x1fff, 0x4000 | 0x0100};
	/* echo 3785, multihop 4784, and around 3784 */
	static const uint16_t dports[] = {3783, 3785, 4784, 0, 65535};
	uint8_t f[BFD_FRAME_MAX], g[BFD_FRAME_MAX + 4];
	uint8_t *ip = f + TF_IP_OFF;
	uint32_t len;

	(void)state;
	for (size_t i = 0; i < sizeof(frags) / sizeof(frags[0]); i++) {
		ctrl_frame(f, 49152);
		tf_put16(ip + 6, frags[i]);
		tf_fix_csums(f);
		assert_other(f, TF_CTRL_LEN);
	}
	/* Other UDP destination ports. */
	for (size_t i = 0; i < sizeof(dports) / sizeof(dports[0]); i++) {
		ctrl_frame(f, 49152);
		tf_put16(f + TF_UDP_OFF + 2, dports[i]);
		tf_fix_csums(f);
		assert_other(f, TF_CTRL_LEN);
	}
	/* TCP and ICMP with BFD's port where UDP's would be. */
	ctrl_frame(f, 49152);
	ip[9] = 6;
	tf_put16(ip + 10, tf_ip_csum(ip));
	assert_other(f, TF_CTRL_LEN);
	ip[9] = 1;
	tf_put16(ip + 10, tf_ip_csum(ip));
	assert_other(f, TF_CTRL_LEN);
	/* IPv6 ethertype; version 6 under the IPv4 ethertype; IHL below 5. */
	len = ctrl_frame(f, 49152);
	tf_put16(f + 12, 0x86dd);
	assert_other(f, len);
	ctrl_frame(f, 49152);
	ip[0] = 0x65;
	assert_other(f, len);
	ip[0] = 0x44;
	assert_other(f, len);
	/* VLAN-tagged BFD and ARP. */
	len = ctrl_frame(f, 49152);
	assert_other(g, tf_vlan_tag(g, f, len, 100));
	len = tf_arp_frame(f, BFD_ARP_REQUEST, mac_a, IP_A, NULL, IP_B);
	assert_other(g, tf_vlan_tag(g, f, len, 100));
	/* Shorter than an Ethernet header (whatever it would have been). */
	len = ctrl_frame(f, 49152);
	for (uint32_t l = 0; l < BFD_ETH_HLEN; l++)
		assert_other(f, l);
	/* An IPv4 frame that ends before the UDP destination port could be
	 * read is not recognisably BFD. */
	for (uint32_t l = BFD_ETH_HLEN; l < TF_UDP_OFF + BFD_UDP_HLEN; l++)
		assert_other(f, l);
}

/* ---- ARP --------------------------------------------------------------------- */

static void
check_arp(const uint8_t *f, uint16_t op, const uint8_t *dst, const uint8_t *tha)
{
	static const uint8_t zero[BFD_ARP_FRAME_LEN];
	struct bfd_frame out;

	assert_memory_equal(f, dst, BFD_ETH_ALEN);
	assert_memory_equal(f + TF_ARP_OFF + 18, tha, BFD_ETH_ALEN);
	assert_memory_equal(f + TF_ARP_OFF + 28, zero, BFD_ARP_FRAME_LEN - TF_ARP_OFF - 28);
	assert_int_equal(bfd_frame_parse(f, BFD_ARP_FRAME_LEN, &out), BFD_FRAME_ARP);
	assert_int_equal(out.arp_op, op);
	assert_memory_equal(out.dst_mac, dst, BFD_ETH_ALEN);
	assert_memory_equal(out.src_mac, mac_a, BFD_ETH_ALEN);
	assert_memory_equal(out.arp_sha, mac_a, BFD_ETH_ALEN);
	assert_int_equal(out.arp_spa, IP_A);
	assert_int_equal(out.arp_tpa, IP_B);
}

static void
test_arp_build_and_parse(void **state)
{
	static const uint8_t zero_mac[BFD_ETH_ALEN];
	uint8_t f[BFD_ARP_FRAME_LEN + 4];
	struct bfd_frame out;

	(void)state;
	memset(f, 0x5a, sizeof(f)); /* the padding must be written */
	tf_arp_frame(f, BFD_ARP_REQUEST, mac_a, IP_A, NULL, IP_B);
	assert_memory_equal(f, ref_arp_request, BFD_ARP_FRAME_LEN);
	check_arp(f, BFD_ARP_REQUEST, broadcast, zero_mac);
	/* A request ignores a given tha. */
	tf_arp_frame(f, BFD_ARP_REQUEST, mac_a, IP_A, mac_b, IP_B);
	assert_memory_equal(f, ref_arp_request, BFD_ARP_FRAME_LEN);
	memset(f, 0x5a, sizeof(f));
	tf_arp_frame(f, BFD_ARP_REPLY, mac_a, IP_A, mac_b, IP_B);
	assert_memory_equal(f, ref_arp_reply, BFD_ARP_FRAME_LEN);
	check_arp(f, BFD_ARP_REPLY, mac_b, mac_b);
	/* Without padding (42 bytes) it is still ARP. */
	assert_int_equal(bfd_frame_parse(f, TF_ARP_OFF + 28, &out), BFD_FRAME_ARP);
	/* What cannot be built. */
	assert_int_equal(bfd_frame_build_arp(f, BFD_ARP_FRAME_LEN - 1, BFD_ARP_REQUEST, mac_a,
					     IP_A, NULL, IP_B),
			 -1);
	assert_int_equal(bfd_frame_build_arp(f, sizeof(f), BFD_ARP_REPLY, mac_a, IP_A, NULL, IP_B),
			 -1);
	assert_int_equal(bfd_frame_build_arp(f, sizeof(f), 3, mac_a, IP_A, mac_b, IP_B), -1);
	assert_int_equal(bfd_frame_build_arp(f, sizeof(f), 0, mac_a, IP_A, mac_b, IP_B), -1);
}

static void
test_arp_rejections(void **state)
{
	/* offset in the ARP header, bytes to write there */
	static const struct {
		int off;
		uint8_t v[2];
		int n;
	} bad[] = {
		{0, {0x00, 0x06}, 2},	/* hardware type IEEE 802 */
		{0, {0x00, 0x00}, 2},
		{2, {0x86, 0xdd}, 2},	/* protocol IPv6 */
		{2, {0x08, 0x06}, 2},
		{4, {8}, 1},		/* hardware length */
		{4, {0}, 1},
		{5, {16}, 1},		/* protocol length */
		{5, {0}, 1},
		{6, {0x00, 0x00}, 2},	/* op 0 */
		{6, {0x00, 0x03}, 2},	/* RARP request */
		{6, {0x01, 0x01}, 2},
	};
	uint8_t f[BFD_ARP_FRAME_LEN];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tf_arp_frame(f, BFD_ARP_REPLY, mac_a, IP_A, mac_b, IP_B);
		memcpy(f + TF_ARP_OFF + bad[i].off, bad[i].v, (size_t)bad[i].n);
		assert_bad(f, sizeof(f), BFD_RX_BAD_ARP);
	}
	/* Truncated: anything short of the 28 bytes of ARP. */
	tf_arp_frame(f, BFD_ARP_REPLY, mac_a, IP_A, mac_b, IP_B);
	for (uint32_t l = BFD_ETH_HLEN; l < TF_ARP_OFF + 28; l++)
		assert_bad(f, l, BFD_RX_BAD_ARP);
}

/* ---- peek -------------------------------------------------------------------- */

static void
test_peek(void **state)
{
	uint8_t f[BFD_FRAME_MAX], g[BFD_FRAME_MAX + 4];
	uint32_t ip = 0, ip2 = 0, len;

	(void)state;
	len = tf_arp_frame(f, BFD_ARP_REQUEST, mac_a, IP_A, NULL, IP_B);
	assert_true(bfd_frame_peek(f, len, &ip, &ip2));
	assert_int_equal(ip, IP_B);  /* target */
	assert_int_equal(ip2, IP_A); /* sender */
	len = tf_arp_frame(f, BFD_ARP_REPLY, mac_b, IP_B, mac_a, IP_A);
	assert_true(bfd_frame_peek(f, len, &ip, &ip2));
	assert_int_equal(ip, IP_A);
	assert_int_equal(ip2, IP_B);
	assert_false(bfd_frame_peek(f, TF_ARP_OFF + 27, &ip, &ip2));

	ip2 = 99;
	len = ctrl_frame(f, 49152);
	assert_true(bfd_frame_peek(f, len, &ip, &ip2));
	assert_int_equal(ip, IP_B); /* destination */
	assert_int_equal(ip2, 0);
	/* A peek checks nothing it does not need: a bad checksum or TTL is
	 * still BFD's to count. */
	f[TF_IP_OFF + 8] = 1;
	assert_true(bfd_frame_peek(f, len, &ip, &ip2));
	assert_int_equal(ip, IP_B);
	assert_true(bfd_frame_peek(f, TF_UDP_OFF + BFD_UDP_HLEN, &ip, &ip2));
	assert_false(bfd_frame_peek(f, TF_UDP_OFF + 3, &ip, &ip2));

	/* Not ARP or BFD. */
	ctrl_frame(f, 49152);
	tf_put16(f + TF_UDP_OFF + 2, 3785);
	assert_false(bfd_frame_peek(f, len, &ip, &ip2));
	ctrl_frame(f, 49152);
	f[TF_IP_OFF + 9] = 6;
	assert_false(bfd_frame_peek(f, len, &ip, &ip2));
	ctrl_frame(f, 49152);
	tf_put16(f + 12, 0x86dd);
	assert_false(bfd_frame_peek(f, len, &ip, &ip2));
	ctrl_frame(f, 49152);
	assert_false(bfd_frame_peek(g, tf_vlan_tag(g, f, len, 7), &ip, &ip2));
	for (uint32_t l = 0; l < BFD_ETH_HLEN + BFD_IP_HLEN; l++)
		assert_false(bfd_frame_peek(f, l, &ip, &ip2));
}

/* ---- MAC addresses ----------------------------------------------------------- */

static void
test_mac_text(void **state)
{
	static const struct {
		const char *in, *out;
		uint8_t mac[BFD_ETH_ALEN];
	} good[] = {
		{"00:11:22:33:44:55", "00:11:22:33:44:55", {0x00, 0x11, 0x22, 0x33, 0x44, 0x55}},
		{"ff:ff:ff:ff:ff:ff", "ff:ff:ff:ff:ff:ff", {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"00:00:00:00:00:00", "00:00:00:00:00:00", {0}},
		{"0A:bC:De:f0:9a:A1", "0a:bc:de:f0:9a:a1", {0x0a, 0xbc, 0xde, 0xf0, 0x9a, 0xa1}},
	};
	static const char *const bad[] = {
		"",
		"00:11:22:33:44",
		"00:11:22:33:44:5g",
		"+0:11:22:33:44:55",
		"00:11:22:33:44:+5",
		" 0:11:22:33:44:55",
		"00:11:22:33:44: 5",
		"00-11-22-33-44-55",
		"00:11:22:33:44-55",
		"00:11:22:33:44:55 ",
		"00:11:22:33:44:55:",
		"00:11:22:33:44:55:66",
		"00:11:22:33:44:5",
		"0:11:22:33:44:555",
		"000:11:22:33:44:5",
		"0x:11:22:33:44:55",
		"00:11:22:33:44:55\n",
		"g0:11:22:33:44:55",
	};
	uint8_t mac[BFD_ETH_ALEN];
	char text[18];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		memset(mac, 0x77, sizeof(mac));
		assert_int_equal(bfd_mac_parse(good[i].in, mac), 0);
		assert_memory_equal(mac, good[i].mac, BFD_ETH_ALEN);
		memset(text, 'x', sizeof(text));
		bfd_mac_format(mac, text);
		assert_string_equal(text, good[i].out);
		/* And back again. */
		memset(mac, 0x77, sizeof(mac));
		assert_int_equal(bfd_mac_parse(text, mac), 0);
		assert_memory_equal(mac, good[i].mac, BFD_ETH_ALEN);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (bfd_mac_parse(bad[i], mac) != -1)
			fail_msg("\"%s\" accepted", bad[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ctrl_frame_is_the_scapy_reference),
		cmocka_unit_test(test_ctrl_frame_round_trips),
		cmocka_unit_test(test_ctrl_frame_build_limits),
		cmocka_unit_test(test_udp_checksum_zero_is_sent_as_ffff),
		cmocka_unit_test(test_bad_ip_header),
		cmocka_unit_test(test_ip_options_move_the_udp_header),
		cmocka_unit_test(test_bad_udp),
		cmocka_unit_test(test_ttl_must_be_255),
		cmocka_unit_test(test_source_port_range),
		cmocka_unit_test(test_other_frames),
		cmocka_unit_test(test_arp_build_and_parse),
		cmocka_unit_test(test_arp_rejections),
		cmocka_unit_test(test_peek),
		cmocka_unit_test(test_mac_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
