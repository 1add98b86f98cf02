/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_pkt_helper.c -- libnf's checksum sum over chained mbufs
 * (nf_pkt_cksum_chain()), which the NAT and the load balancer use to repair
 * the TCP/UDP checksum of a frame net_pcap chained over several segments.
 *
 * The reference is rte_raw_cksum() over the same bytes laid out in one
 * buffer: the chained sum must equal it wherever the segments are cut, in
 * particular at odd offsets of the summed range with bytes that make the
 * 16-bit additions carry (where DPDK 22.11's rte_raw_cksum_mbuf() loses
 * them).  Hand-made mbufs (tests/common/heap_mbuf.h), no EAL.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "heap_mbuf.h"
#include "onvm_pkt_helper.h"

#define DATA_LEN 301 /* odd, so the last 16-bit word is half a word */

static uint8_t data[DATA_LEN];

static int
setup(void **state)
{
	(void)state;
	/* Mostly 0xff: every 16-bit addition carries. */
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = i % 7 == 3 ? (uint8_t)(i * 37) : 0xff;
	return 0;
}

/* data[0..len) as segments cut at cuts[0] < cuts[1] < ... (n cuts). */
static struct rte_mbuf *
chain(size_t len, const size_t *cuts, size_t n)
{
	struct rte_mbuf *head = NULL, **link = &head;
	size_t from = 0;

	for (size_t i = 0; i <= n; i++) {
		size_t to = i < n ? cuts[i] : len;
		struct rte_mbuf *m = heap_mbuf(data + from, to - from);

		assert_non_null(m);
		*link = m;
		link = &m->next;
		from = to;
	}
	head->nb_segs = (uint16_t)(n + 1);
	head->pkt_len = (uint32_t)len;
	return head;
}

static uint16_t
reference(size_t off, size_t len)
{
	return rte_raw_cksum(data + off, len);
}

static void
test_single_segment_sum_is_rte_raw_cksum(void **state)
{
	struct rte_mbuf *m = chain(DATA_LEN, NULL, 0);
	uint16_t sum = 0;

	(void)state;
	assert_int_equal(nf_pkt_cksum_chain(m, 0, DATA_LEN, &sum), 0);
	assert_int_equal(sum, reference(0, DATA_LEN));
	assert_int_equal(nf_pkt_cksum_chain(m, 14, 100, &sum), 0);
	assert_int_equal(sum, reference(14, 100));
	assert_int_equal(nf_pkt_cksum_chain(m, 15, 101, &sum), 0);
	assert_int_equal(sum, reference(15, 101));
	heap_mbuf_free(m);
}

static void
test_two_segments_cut_anywhere_give_the_same_sum(void **state)
{
	(void)state;
	for (size_t cut = 1; cut < DATA_LEN; cut++) {
		struct rte_mbuf *m = chain(DATA_LEN, &cut, 1);

		for (size_t off = 0; off < 40; off += 13) {
			uint16_t sum = 0;

			assert_int_equal(nf_pkt_cksum_chain(m, off, DATA_LEN - off, &sum), 0);
			if (sum != reference(off, DATA_LEN - off))
				fail_msg("cut %zu off %zu: %#x, want %#x", cut, off, sum,
					 reference(off, DATA_LEN - off));
		}
		heap_mbuf_free(m);
	}
}

static void
test_many_odd_segments_give_the_same_sum(void **state)
{
	static const size_t cuts[] = {1, 4, 5, 77, 78, 200, 201, 299};
	struct rte_mbuf *m;
	uint16_t sum = 0;

	(void)state;
	m = chain(DATA_LEN, cuts, sizeof(cuts) / sizeof(cuts[0]));
	assert_int_equal(nf_pkt_cksum_chain(m, 0, DATA_LEN, &sum), 0);
	assert_int_equal(sum, reference(0, DATA_LEN));
	/* Starting in a later segment, and exactly at a segment's start. */
	assert_int_equal(nf_pkt_cksum_chain(m, 90, 150, &sum), 0);
	assert_int_equal(sum, reference(90, 150));
	assert_int_equal(nf_pkt_cksum_chain(m, 201, 100, &sum), 0);
	assert_int_equal(sum, reference(201, 100));
	heap_mbuf_free(m);
}

static void
test_chain_shorter_than_the_range_is_an_error(void **state)
{
	size_t cut = 100;
	struct rte_mbuf *m = chain(DATA_LEN, &cut, 1);
	uint16_t sum = 0x1234;

	(void)state;
	assert_int_equal(nf_pkt_cksum_chain(m, 0, DATA_LEN + 1, &sum), -EINVAL);
	assert_int_equal(nf_pkt_cksum_chain(m, DATA_LEN, 1, &sum), -EINVAL);
	assert_int_equal(sum, 0x1234);
	/* An empty range sums to 0, even at the end of the frame. */
	assert_int_equal(nf_pkt_cksum_chain(m, DATA_LEN, 0, &sum), 0);
	assert_int_equal(sum, 0);
	heap_mbuf_free(m);
}

/* The use the NFs make of it: a UDP checksum over a chained frame equals
 * DPDK's over the same datagram in one buffer. */
static void
test_udp_checksum_over_a_chain_matches_dpdks_contiguous_one(void **state)
{
	uint8_t frame[20 + 8 + 73];
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)frame;
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(frame + 20);
	size_t cuts[] = {27, 29, 60};
	struct rte_mbuf *m;
	uint16_t raw, want;
	uint32_t s;

	(void)state;
	memset(frame, 0, sizeof(frame));
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(sizeof(frame));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(0xc6120001);
	ip->dst_addr = rte_cpu_to_be_32(0xc6130063);
	udp->src_port = rte_cpu_to_be_16(40000);
	udp->dst_port = rte_cpu_to_be_16(53);
	udp->dgram_len = rte_cpu_to_be_16(8 + 73);
	for (size_t i = 28; i < sizeof(frame); i++)
		frame[i] = (uint8_t)(0xf0 + i);
	want = rte_ipv4_udptcp_cksum(ip, udp);
	memcpy(data, frame, sizeof(frame));
	m = chain(sizeof(frame), cuts, 3);
	assert_int_equal(nf_pkt_cksum_chain(m, 20, 8 + 73, &raw), 0);
	s = (uint32_t)raw + rte_ipv4_phdr_cksum(ip, 0);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	assert_int_equal((uint16_t)~s, want);
	heap_mbuf_free(m);
	setup(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_single_segment_sum_is_rte_raw_cksum),
	    cmocka_unit_test(test_two_segments_cut_anywhere_give_the_same_sum),
	    cmocka_unit_test(test_many_odd_segments_give_the_same_sum),
	    cmocka_unit_test(test_chain_shorter_than_the_range_is_an_error),
	    cmocka_unit_test(test_udp_checksum_over_a_chain_matches_dpdks_contiguous_one),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
