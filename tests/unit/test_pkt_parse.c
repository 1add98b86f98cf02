/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_pkt_parse.c -- unit tests for onvm_pkt_parse() and onvm_flow_key_hash().
 *
 * Frames are built byte by byte and wrapped in a hand-made mbuf whose data
 * buffer is exactly as long as the frame, so under ASan any read past the
 * end of a frame is caught, not just reported as a wrong reason code.  No
 * EAL is needed: rte_pktmbuf_read() only walks mbuf fields.
 *
 * Each test starts from a valid frame and breaks one thing, so the name of
 * the test says which check it exercises.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "heap_mbuf.h"
#include "onvm_pkt_parse.h"

#define IP(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((c) << 8) | (d))
#define SRC_IP	       IP(10, 1, 2, 3)
#define DST_IP	       IP(192, 168, 7, 9)

/* A frame under construction and the offsets of its headers. */
struct frame {
	uint8_t b[256];
	size_t len;
	size_t l3; /* offset of the IPv4 header */
	size_t l4; /* offset of the TCP/UDP header */
};

static void
put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void
put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, v >> 16);
	put_be16(p + 2, v & 0xffff);
}

/* Ethernet header, then one VLAN tag per entry of `tpids` (outermost first). */
static void
eth(struct frame *f, const uint16_t *tpids, int ntags, uint16_t ether_type)
{
	memset(f, 0, sizeof(*f));
	memset(f->b, 0xaa, 12); /* dst/src MAC */
	if (ntags == 0) {
		put_be16(f->b + 12, ether_type);
		f->len = 14;
		return;
	}
	put_be16(f->b + 12, tpids[0]);
	f->len = 14;
	for (int i = 0; i < ntags; i++) {
		put_be16(f->b + f->len, 100 + i); /* TCI */
		put_be16(f->b + f->len + 2, i + 1 < ntags ? tpids[i + 1] : ether_type);
		f->len += 4;
	}
}

/* IPv4 header with `opt_words` 4-byte option words; total length covers
 * `payload` bytes after the header.  Flags/fragment offset field as given. */
static void
ipv4(struct frame *f, uint8_t proto, int opt_words, uint16_t payload, uint16_t frag)
{
	uint8_t *ip = f->b + f->len;
	int hlen = 20 + 4 * opt_words;

	f->l3 = f->len;
	ip[0] = 0x40 | (hlen / 4);
	put_be16(ip + 2, hlen + payload);
	put_be16(ip + 6, frag);
	ip[8] = 64;
	ip[9] = proto;
	put_be32(ip + 12, SRC_IP);
	put_be32(ip + 16, DST_IP);
	for (int i = 20; i < hlen; i++)
		ip[i] = 1; /* NOP options */
	f->len += hlen;
	f->l4 = f->len;
}

/* TCP header with data offset `doff` words (options zero-filled). */
static void
tcp(struct frame *f, uint16_t sport, uint16_t dport, int doff)
{
	uint8_t *t = f->b + f->len;

	put_be16(t, sport);
	put_be16(t + 2, dport);
	t[12] = doff << 4;
	f->len += doff >= 5 ? 4 * doff : 20;
}

static void
udp(struct frame *f, uint16_t sport, uint16_t dport, uint16_t ulen)
{
	uint8_t *u = f->b + f->len;

	put_be16(u, sport);
	put_be16(u + 2, dport);
	put_be16(u + 4, ulen);
	f->len += 8;
}

/* Valid Ethernet/IPv4/TCP frame, 1234 -> 80, no payload. */
static void
tcp_frame(struct frame *f)
{
	eth(f, NULL, 0, RTE_ETHER_TYPE_IPV4);
	ipv4(f, IPPROTO_TCP, 0, 20, 0);
	tcp(f, 1234, 80, 5);
}

/* Valid Ethernet/IPv4/UDP frame, 5353 -> 53, 4 bytes of payload. */
static void
udp_frame(struct frame *f)
{
	eth(f, NULL, 0, RTE_ETHER_TYPE_IPV4);
	ipv4(f, IPPROTO_UDP, 0, 12, 0);
	udp(f, 5353, 53, 12);
	memcpy(f->b + f->len, "abcd", 4);
	f->len += 4;
}



/* Parse the whole frame. */
/* A single-segment mbuf over an exact-size heap copy (ASan sees over-reads). */
static struct rte_mbuf *
mbuf_of(const uint8_t *bytes, size_t len)
{
	struct rte_mbuf *m = heap_mbuf(bytes, len);

	assert_non_null(m);
	return m;
}

static enum onvm_parse_reason
parse(const struct frame *f, struct onvm_pkt_info *pi)
{
	struct rte_mbuf *m = mbuf_of(f->b, f->len);
	enum onvm_parse_reason r = onvm_pkt_parse(m, pi);

	heap_mbuf_free(m);
	return r;
}

/* Parse only the first `len` bytes of the frame (a truncated capture). */
static enum onvm_parse_reason
parse_prefix(const struct frame *f, size_t len, struct onvm_pkt_info *pi)
{
	struct rte_mbuf *m = mbuf_of(f->b, len);
	enum onvm_parse_reason r = onvm_pkt_parse(m, pi);

	heap_mbuf_free(m);
	return r;
}

/* ---- valid frames ---------------------------------------------------------------- */

static void
test_parse_tcp_fills_addresses_ports_and_lengths(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	tcp_frame(&f);
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_OK);
	assert_int_equal(pi.l2_len, 14);
	assert_int_equal(pi.l3_len, 20);
	assert_int_equal(pi.l4_len, 20);
	assert_int_equal(pi.ip_len, 40);
	assert_int_equal(pi.proto, IPPROTO_TCP);
	assert_int_equal(pi.vlans, 0);
	assert_int_equal(pi.fragment, 0);
	assert_int_equal(pi.src_ip, SRC_IP);
	assert_int_equal(pi.dst_ip, DST_IP);
	assert_int_equal(pi.sport, 1234);
	assert_int_equal(pi.dport, 80);
}

static void
test_parse_udp_fills_ports_and_eight_byte_l4_len(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	udp_frame(&f);
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_OK);
	assert_int_equal(pi.proto, IPPROTO_UDP);
	assert_int_equal(pi.l4_len, 8);
	assert_int_equal(pi.ip_len, 32);
	assert_int_equal(pi.sport, 5353);
	assert_int_equal(pi.dport, 53);
	assert_int_equal(pi.src_ip, SRC_IP);
	assert_int_equal(pi.dst_ip, DST_IP);
}

static void
test_parse_icmp_is_ok_without_ports(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, NULL, 0, RTE_ETHER_TYPE_IPV4);
	ipv4(&f, IPPROTO_ICMP, 0, 8, 0);
	f.len += 8; /* echo request header, zeroed */
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_OK);
	assert_int_equal(pi.proto, IPPROTO_ICMP);
	assert_int_equal(pi.l4_len, 0);
	assert_int_equal(pi.sport, 0);
	assert_int_equal(pi.dport, 0);
	assert_int_equal(pi.src_ip, SRC_IP);
}

static void
test_parse_tcp_options_are_counted_in_l4_len(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, NULL, 0, RTE_ETHER_TYPE_IPV4);
	ipv4(&f, IPPROTO_TCP, 0, 32, 0);
	tcp(&f, 1, 2, 8);
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_OK);
	assert_int_equal(pi.l4_len, 32);
	assert_int_equal(pi.sport, 1);
	assert_int_equal(pi.dport, 2);
}

static void
test_parse_ip_options_move_the_l4_header(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, NULL, 0, RTE_ETHER_TYPE_IPV4);
	ipv4(&f, IPPROTO_UDP, 3, 8, 0);
	udp(&f, 7, 9, 8);
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_OK);
	assert_int_equal(pi.l3_len, 32);
	assert_int_equal(pi.ip_len, 40);
	assert_int_equal(pi.sport, 7);
	assert_int_equal(pi.dport, 9);
}

static void
test_parse_ethernet_padding_after_the_datagram_is_allowed(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	udp_frame(&f);				       /* 46 bytes */
	f.len = RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN; /* padded to 60 */
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_OK);
	assert_int_equal(pi.ip_len, 32);
	assert_int_equal(pi.dport, 53);
}

static void
test_parse_headers_straddling_mbuf_segments(void **state)
{
	struct onvm_pkt_info pi;
	struct rte_mbuf *a, *b;
	struct frame f;
	size_t cut;

	(void)state;
	tcp_frame(&f);
	cut = f.l3 + 7; /* inside the IPv4 header */
	a = mbuf_of(f.b, cut);
	b = mbuf_of(f.b + cut, f.len - cut);
	a->next = b;
	a->nb_segs = 2;
	a->pkt_len = f.len;
	assert_int_equal(onvm_pkt_parse(a, &pi), ONVM_PARSE_OK);
	assert_int_equal(pi.src_ip, SRC_IP);
	assert_int_equal(pi.dst_ip, DST_IP);
	assert_int_equal(pi.sport, 1234);
	assert_int_equal(pi.dport, 80);
	heap_mbuf_free(a);
}

/* ---- VLAN tags ------------------------------------------------------------------- */

static void
test_parse_single_vlan_tag_is_skipped(void **state)
{
	static const uint16_t tags[] = {RTE_ETHER_TYPE_VLAN};
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, tags, 1, RTE_ETHER_TYPE_IPV4);
	ipv4(&f, IPPROTO_UDP, 0, 8, 0);
	udp(&f, 10, 20, 8);
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_OK);
	assert_int_equal(pi.vlans, 1);
	assert_int_equal(pi.l2_len, 18);
	assert_int_equal(pi.sport, 10);
	assert_int_equal(pi.dport, 20);
}

static void
test_parse_double_vlan_qinq_is_skipped(void **state)
{
	static const uint16_t tags[] = {RTE_ETHER_TYPE_QINQ, RTE_ETHER_TYPE_VLAN};
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, tags, 2, RTE_ETHER_TYPE_IPV4);
	ipv4(&f, IPPROTO_TCP, 0, 20, 0);
	tcp(&f, 30, 40, 5);
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_OK);
	assert_int_equal(pi.vlans, 2);
	assert_int_equal(pi.l2_len, 22);
	assert_int_equal(pi.sport, 30);
	assert_int_equal(pi.dport, 40);
}

static void
test_parse_third_vlan_tag_is_not_ipv4(void **state)
{
	static const uint16_t tags[] = {RTE_ETHER_TYPE_QINQ, RTE_ETHER_TYPE_VLAN,
					RTE_ETHER_TYPE_VLAN};
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, tags, 3, RTE_ETHER_TYPE_IPV4);
	ipv4(&f, IPPROTO_UDP, 0, 8, 0);
	udp(&f, 10, 20, 8);
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_NOT_IPV4);
	assert_int_equal(pi.vlans, 2);
	assert_int_equal(pi.l2_len, 22);
}

static void
test_parse_vlan_tag_cut_short_is_truncated_l2(void **state)
{
	static const uint16_t tags[] = {RTE_ETHER_TYPE_VLAN};
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, tags, 1, RTE_ETHER_TYPE_IPV4);
	assert_int_equal(parse_prefix(&f, 16, &pi), ONVM_PARSE_TRUNC_L2);
}

/* ---- not IPv4 -------------------------------------------------------------------- */

static void
test_parse_arp_is_not_ipv4_and_reports_l2_len(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, NULL, 0, RTE_ETHER_TYPE_ARP);
	f.len += 28;
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_NOT_IPV4);
	assert_int_equal(pi.l2_len, 14);
	assert_int_equal(pi.src_ip, 0);
	assert_int_equal(pi.sport, 0);
}

static void
test_parse_ipv6_is_not_ipv4(void **state)
{
	static const uint16_t tags[] = {RTE_ETHER_TYPE_VLAN};
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, tags, 1, RTE_ETHER_TYPE_IPV6);
	f.b[f.len] = 0x60;
	f.len += 40;
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_NOT_IPV4);
	assert_int_equal(pi.l2_len, 18);
	assert_int_equal(pi.vlans, 1);
}

/* ---- truncated and malformed ----------------------------------------------------- */

static void
test_parse_frame_shorter_than_ethernet_header_is_truncated_l2(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	tcp_frame(&f);
	assert_int_equal(parse_prefix(&f, 13, &pi), ONVM_PARSE_TRUNC_L2);
	assert_int_equal(parse_prefix(&f, 0, &pi), ONVM_PARSE_TRUNC_L2);
}

static void
test_parse_ipv4_header_cut_short_is_truncated_l3(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	tcp_frame(&f);
	assert_int_equal(parse_prefix(&f, f.l3 + 19, &pi), ONVM_PARSE_TRUNC_L3);
	assert_int_equal(parse_prefix(&f, f.l3, &pi), ONVM_PARSE_TRUNC_L3);
}

static void
test_parse_version_other_than_4_is_bad_version(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	tcp_frame(&f);
	f.b[f.l3] = 0x65;
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_BAD_VERSION);
}

static void
test_parse_ihl_below_5_is_bad_ihl(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	tcp_frame(&f);
	f.b[f.l3] = 0x44;
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_BAD_IHL);
	f.b[f.l3] = 0x40;
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_BAD_IHL);
}

static void
test_parse_ip_options_beyond_the_frame_are_truncated_l3(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, NULL, 0, RTE_ETHER_TYPE_IPV4);
	ipv4(&f, IPPROTO_UDP, 0, 0, 0);
	f.b[f.l3] = 0x4f; /* 60-byte header in a 34-byte frame */
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_TRUNC_L3);
}

static void
test_parse_total_length_below_header_length_is_bad_totlen(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	tcp_frame(&f);
	put_be16(f.b + f.l3 + 2, 19);
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_BAD_TOTLEN);
}

static void
test_parse_total_length_beyond_the_frame_is_bad_totlen(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	tcp_frame(&f);
	put_be16(f.b + f.l3 + 2, 41);
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_BAD_TOTLEN);
}

static void
test_parse_tcp_header_cut_short_is_truncated_l4(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, NULL, 0, RTE_ETHER_TYPE_IPV4);
	ipv4(&f, IPPROTO_TCP, 0, 19, 0);
	tcp(&f, 1, 2, 5);
	assert_int_equal(parse_prefix(&f, f.len - 1, &pi), ONVM_PARSE_TRUNC_L4);
}

static void
test_parse_tcp_header_in_ethernet_padding_is_truncated_l4(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	tcp_frame(&f);
	put_be16(f.b + f.l3 + 2, 30); /* datagram ends 10 bytes into the TCP header */
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_TRUNC_L4);
}

static void
test_parse_tcp_data_offset_below_5_is_bad_l4_length(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	tcp_frame(&f);
	f.b[f.l4 + 12] = 4 << 4;
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_BAD_L4LEN);
}

static void
test_parse_tcp_data_offset_beyond_the_datagram_is_bad_l4_length(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	tcp_frame(&f);
	f.b[f.l4 + 12] = 6 << 4; /* 24-byte header in a 20-byte segment */
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_BAD_L4LEN);
}

static void
test_parse_udp_header_cut_short_is_truncated_l4(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, NULL, 0, RTE_ETHER_TYPE_IPV4);
	ipv4(&f, IPPROTO_UDP, 0, 6, 0);
	udp(&f, 1, 2, 8);
	assert_int_equal(parse_prefix(&f, f.len - 2, &pi), ONVM_PARSE_TRUNC_L4);
}

static void
test_parse_udp_length_below_8_is_bad_l4_length(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	udp_frame(&f);
	put_be16(f.b + f.l4 + 4, 7);
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_BAD_L4LEN);
}

static void
test_parse_udp_length_beyond_the_datagram_is_bad_l4_length(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	udp_frame(&f);
	put_be16(f.b + f.l4 + 4, 13);
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_BAD_L4LEN);
}

/* ---- fragments ------------------------------------------------------------------- */

static void
test_parse_non_first_fragment_has_no_ports(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, NULL, 0, RTE_ETHER_TYPE_IPV4);
	ipv4(&f, IPPROTO_UDP, 0, 8, 185); /* offset 1480 bytes, last fragment */
	udp(&f, 1111, 2222, 8);		  /* payload bytes that look like a header */
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_OK);
	assert_int_equal(pi.fragment, 1);
	assert_int_equal(pi.proto, IPPROTO_UDP);
	assert_int_equal(pi.src_ip, SRC_IP);
	assert_int_equal(pi.sport, 0);
	assert_int_equal(pi.dport, 0);
	assert_int_equal(pi.l4_len, 0);
}

static void
test_parse_first_fragment_has_ports(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, NULL, 0, RTE_ETHER_TYPE_IPV4);
	ipv4(&f, IPPROTO_UDP, 0, 8, RTE_IPV4_HDR_MF_FLAG);
	udp(&f, 1111, 2222, 8);
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_OK);
	assert_int_equal(pi.fragment, 0);
	assert_int_equal(pi.sport, 1111);
	assert_int_equal(pi.dport, 2222);
}

/* A first fragment's UDP length is the whole datagram's: longer than the
 * fragment, and still not malformed. */
static void
test_parse_first_fragment_udp_length_covers_the_whole_datagram(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, NULL, 0, RTE_ETHER_TYPE_IPV4);
	ipv4(&f, IPPROTO_UDP, 0, 8, RTE_IPV4_HDR_MF_FLAG);
	udp(&f, 1111, 2222, 1480);
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_OK);
	assert_int_equal(pi.sport, 1111);
	assert_int_equal(pi.dport, 2222);
}

/* Without MF the same length is longer than the datagram: malformed. */
static void
test_parse_unfragmented_udp_length_beyond_datagram_is_bad(void **state)
{
	struct onvm_pkt_info pi;
	struct frame f;

	(void)state;
	eth(&f, NULL, 0, RTE_ETHER_TYPE_IPV4);
	ipv4(&f, IPPROTO_UDP, 0, 8, 0);
	udp(&f, 1111, 2222, 1480);
	assert_int_equal(parse(&f, &pi), ONVM_PARSE_BAD_L4LEN);
}

/* ---- reason names ---------------------------------------------------------------- */

static void
test_parse_reason_str_names_every_reason(void **state)
{
	(void)state;
	assert_string_equal(onvm_parse_reason_str(ONVM_PARSE_OK), "ok");
	assert_string_equal(onvm_parse_reason_str(ONVM_PARSE_BAD_L4LEN), "bad_l4_length");
	for (int r = 0; r < ONVM_PARSE_REASON_MAX; r++) {
		assert_non_null(onvm_parse_reason_str(r));
		assert_string_not_equal(onvm_parse_reason_str(r), "unknown");
	}
	assert_string_equal(onvm_parse_reason_str(ONVM_PARSE_REASON_MAX), "unknown");
}

/* ---- flow hash ------------------------------------------------------------------- */

static void
test_flow_hash_is_the_same_in_both_directions(void **state)
{
	struct onvm_flow_key fwd = {
	    .src_ip = SRC_IP, .dst_ip = DST_IP, .sport = 1234, .dport = 80, .proto = IPPROTO_TCP};
	struct onvm_flow_key rev = {
	    .src_ip = DST_IP, .dst_ip = SRC_IP, .sport = 80, .dport = 1234, .proto = IPPROTO_TCP};

	(void)state;
	assert_int_equal(onvm_flow_key_hash(&fwd), onvm_flow_key_hash(&rev));
}

static void
test_flow_hash_is_symmetric_between_ports_of_one_host(void **state)
{
	struct onvm_flow_key fwd = {
	    .src_ip = SRC_IP, .dst_ip = SRC_IP, .sport = 5000, .dport = 22, .proto = IPPROTO_TCP};
	struct onvm_flow_key rev = {
	    .src_ip = SRC_IP, .dst_ip = SRC_IP, .sport = 22, .dport = 5000, .proto = IPPROTO_TCP};

	(void)state;
	assert_int_equal(onvm_flow_key_hash(&fwd), onvm_flow_key_hash(&rev));
}

static void
test_flow_hash_of_parsed_reply_matches_request(void **state)
{
	struct onvm_pkt_info req, rep;
	struct onvm_flow_key kq, kp;
	struct frame f;

	(void)state;
	udp_frame(&f);
	assert_int_equal(parse(&f, &req), ONVM_PARSE_OK);
	/* swap addresses and ports */
	put_be32(f.b + f.l3 + 12, DST_IP);
	put_be32(f.b + f.l3 + 16, SRC_IP);
	put_be16(f.b + f.l4, 53);
	put_be16(f.b + f.l4 + 2, 5353);
	assert_int_equal(parse(&f, &rep), ONVM_PARSE_OK);
	onvm_flow_key_from_info(&req, &kq);
	onvm_flow_key_from_info(&rep, &kp);
	assert_int_equal(onvm_flow_key_hash(&kq), onvm_flow_key_hash(&kp));
}

static void
test_flow_hash_tells_flows_apart(void **state)
{
	struct onvm_flow_key a = {
	    .src_ip = SRC_IP, .dst_ip = DST_IP, .sport = 1234, .dport = 80, .proto = IPPROTO_TCP};
	struct onvm_flow_key b = a, c = a, d = a;

	(void)state;
	b.sport = 1235;
	c.proto = IPPROTO_UDP;
	d.dst_ip = DST_IP + 1;
	assert_int_not_equal(onvm_flow_key_hash(&a), onvm_flow_key_hash(&b));
	assert_int_not_equal(onvm_flow_key_hash(&a), onvm_flow_key_hash(&c));
	assert_int_not_equal(onvm_flow_key_hash(&a), onvm_flow_key_hash(&d));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_tcp_fills_addresses_ports_and_lengths),
	    cmocka_unit_test(test_parse_udp_fills_ports_and_eight_byte_l4_len),
	    cmocka_unit_test(test_parse_icmp_is_ok_without_ports),
	    cmocka_unit_test(test_parse_tcp_options_are_counted_in_l4_len),
	    cmocka_unit_test(test_parse_ip_options_move_the_l4_header),
	    cmocka_unit_test(test_parse_ethernet_padding_after_the_datagram_is_allowed),
	    cmocka_unit_test(test_parse_headers_straddling_mbuf_segments),
	    cmocka_unit_test(test_parse_single_vlan_tag_is_skipped),
	    cmocka_unit_test(test_parse_double_vlan_qinq_is_skipped),
	    cmocka_unit_test(test_parse_third_vlan_tag_is_not_ipv4),
	    cmocka_unit_test(test_parse_vlan_tag_cut_short_is_truncated_l2),
	    cmocka_unit_test(test_parse_arp_is_not_ipv4_and_reports_l2_len),
	    cmocka_unit_test(test_parse_ipv6_is_not_ipv4),
	    cmocka_unit_test(test_parse_frame_shorter_than_ethernet_header_is_truncated_l2),
	    cmocka_unit_test(test_parse_ipv4_header_cut_short_is_truncated_l3),
	    cmocka_unit_test(test_parse_version_other_than_4_is_bad_version),
	    cmocka_unit_test(test_parse_ihl_below_5_is_bad_ihl),
	    cmocka_unit_test(test_parse_ip_options_beyond_the_frame_are_truncated_l3),
	    cmocka_unit_test(test_parse_total_length_below_header_length_is_bad_totlen),
	    cmocka_unit_test(test_parse_total_length_beyond_the_frame_is_bad_totlen),
	    cmocka_unit_test(test_parse_tcp_header_cut_short_is_truncated_l4),
	    cmocka_unit_test(test_parse_tcp_header_in_ethernet_padding_is_truncated_l4),
	    cmocka_unit_test(test_parse_tcp_data_offset_below_5_is_bad_l4_length),
	    cmocka_unit_test(test_parse_tcp_data_offset_beyond_the_datagram_is_bad_l4_length),
	    cmocka_unit_test(test_parse_udp_header_cut_short_is_truncated_l4),
	    cmocka_unit_test(test_parse_udp_length_below_8_is_bad_l4_length),
	    cmocka_unit_test(test_parse_udp_length_beyond_the_datagram_is_bad_l4_length),
	    cmocka_unit_test(test_parse_non_first_fragment_has_no_ports),
	    cmocka_unit_test(test_parse_first_fragment_has_ports),
	    cmocka_unit_test(test_parse_first_fragment_udp_length_covers_the_whole_datagram),
	    cmocka_unit_test(test_parse_unfragmented_udp_length_beyond_datagram_is_bad),
	    cmocka_unit_test(test_parse_reason_str_names_every_reason),
	    cmocka_unit_test(test_flow_hash_is_the_same_in_both_directions),
	    cmocka_unit_test(test_flow_hash_is_symmetric_between_ports_of_one_host),
	    cmocka_unit_test(test_flow_hash_of_parsed_reply_matches_request),
	    cmocka_unit_test(test_flow_hash_tells_flows_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
