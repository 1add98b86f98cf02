/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * fuzz_pkt_parse.c -- libFuzzer target for onvm_pkt_parse() and
 * onvm_flow_key_hash().
 *
 * The input is one raw Ethernet frame.  It is parsed twice, without an EAL,
 * from hand-made mbufs (as in tests/unit/test_pkt_parse.c):
 *
 *   1. one segment whose data buffer is a heap copy exactly as long as the
 *      frame, so ASan reports any read past its end;
 *   2. the same frame in two exact-size segments, cut after
 *      1 + input[0] % (len - 1) bytes.  The first byte of a frame is the
 *      first byte of the destination MAC, which the parser never looks at,
 *      so the split point does not change what is parsed: both parses must
 *      agree field for field.  This drives rte_pktmbuf_read() through its
 *      copy-into-a-stack-buffer path for headers that straddle segments.
 *
 * After each parse the result is checked against the bytes of the frame
 * (lengths within the frame, L4 header within the datagram, addresses and
 * ports as in the headers, ...) and abort() is called on any violation, so
 * libFuzzer keeps the input.  Finally onvm_flow_key_hash() must give the
 * same hash for a key and its reverse (src/dst and ports swapped), both for
 * the parsed key and for a key made directly of input bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include <rte_mbuf.h>

#include "onvm_pkt_parse.h"

#include "fuzz_check.h"
#include "heap_mbuf.h"

#define ETH_HLEN  14
#define VLAN_HLEN 4
#define TYPE_IPV4 0x0800


/* One segment over an exact-size heap copy of bytes[0..len). */
static struct rte_mbuf *
seg_of(const uint8_t *bytes, size_t len)
{
	struct rte_mbuf *m = heap_mbuf(bytes, len);

	if (m == NULL)
		abort();
	return m;
}

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)be16(p) << 16 | be16(p + 2);
}



/* The flow hash must not depend on the direction of the key. */
static void
check_hash_symmetric(const struct onvm_flow_key *k)
{
	struct onvm_flow_key r = *k;

	r.src_ip = k->dst_ip;
	r.dst_ip = k->src_ip;
	r.sport = k->dport;
	r.dport = k->sport;
	CHECK(onvm_flow_key_hash(k) == onvm_flow_key_hash(&r));
}

/* What a parse returned must be true of the frame f[0..len). */
static void
check_result(const uint8_t *f, size_t len, enum onvm_parse_reason r,
	     const struct onvm_pkt_info *pi)
{
	size_t l2, l3, l4;

	CHECK((unsigned int)r < ONVM_PARSE_REASON_MAX);
	CHECK(strcmp(onvm_parse_reason_str(r), "unknown") != 0);
	if (r == ONVM_PARSE_TRUNC_L2)
		return;

	/* From NOT_IPV4 on, l2_len is valid: Ethernet + 0..2 VLAN tags. */
	CHECK(pi->vlans <= 2);
	CHECK(pi->l2_len == ETH_HLEN + VLAN_HLEN * pi->vlans);
	CHECK(pi->l2_len <= len);
	l2 = pi->l2_len;
	if (r == ONVM_PARSE_NOT_IPV4) {
		CHECK(be16(f + l2 - 2) != TYPE_IPV4);
		return;
	}
	CHECK(be16(f + l2 - 2) == TYPE_IPV4);
	if (r != ONVM_PARSE_OK)
		return;

	/* A fully parsed IPv4 datagram. */
	l3 = pi->l3_len;
	CHECK(l2 + 20 <= len);
	CHECK(f[l2] >> 4 == 4);
	CHECK(l3 == (size_t)(f[l2] & 0x0f) * 4);
	CHECK(l3 >= 20 && l3 <= 60);
	CHECK(pi->ip_len == be16(f + l2 + 2));
	CHECK(pi->ip_len >= l3);
	CHECK(l2 + l3 <= len);
	CHECK(l2 + pi->ip_len <= len);
	CHECK(pi->proto == f[l2 + 9]);
	CHECK(pi->src_ip == be32(f + l2 + 12));
	CHECK(pi->dst_ip == be32(f + l2 + 16));
	CHECK(pi->fragment == ((be16(f + l2 + 6) & 0x1fff) != 0));

	l4 = l2 + l3; /* start of the L4 header */
	if (pi->fragment || (pi->proto != IPPROTO_TCP && pi->proto != IPPROTO_UDP)) {
		CHECK(pi->l4_len == 0);
		CHECK(pi->sport == 0 && pi->dport == 0);
		return;
	}
	/* The L4 header lies within the datagram (not in Ethernet padding). */
	CHECK(pi->l4_len >= 8);
	CHECK(l4 + pi->l4_len <= l2 + pi->ip_len);
	CHECK(pi->sport == be16(f + l4));
	CHECK(pi->dport == be16(f + l4 + 2));
	if (pi->proto == IPPROTO_TCP) {
		CHECK(pi->l4_len >= 20 && pi->l4_len <= 60);
		CHECK(pi->l4_len == (size_t)(f[l4 + 12] >> 4) * 4);
	} else {
		uint16_t ulen = be16(f + l4 + 4);

		CHECK(pi->l4_len == 8);
		CHECK(ulen >= 8);
		/* Only a first fragment (MF set) may announce more than it holds. */
		if (!(be16(f + l2 + 6) & 0x2000))
			CHECK(ulen <= pi->ip_len - l3);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct onvm_pkt_info pi1, pi2;
	enum onvm_parse_reason r1, r2;
	struct rte_mbuf *m;

	/* Frames come from a port: pkt_len/data_len/buf_len are 16-bit in one segment. */
	if (size > UINT16_MAX)
		return -1;

	/* 1. one segment */
	m = seg_of(data, size);
	r1 = onvm_pkt_parse(m, &pi1);
	heap_mbuf_free(m);
	check_result(data, size, r1, &pi1);

	/* 2. two segments, cut inside the frame; must agree with the single segment */
	if (size >= 2) {
		size_t cut = 1 + data[0] % (size - 1);

		m = seg_of(data, cut);
		m->next = seg_of(data + cut, size - cut);
		m->nb_segs = 2;
		m->pkt_len = (uint32_t)size;
		r2 = onvm_pkt_parse(m, &pi2);
		heap_mbuf_free(m);
		CHECK(r2 == r1);
		CHECK(memcmp(&pi1, &pi2, sizeof(pi1)) == 0);
	}

	/* 3. the flow hash is direction-independent */
	if (r1 == ONVM_PARSE_OK) {
		struct onvm_flow_key k;

		onvm_flow_key_from_info(&pi1, &k);
		check_hash_symmetric(&k);
	}
	if (size >= 13) {
		/* any key at all, from the last 13 input bytes */
		const uint8_t *p = data + size - 13;
		struct onvm_flow_key k = {
		    .src_ip = be32(p), .dst_ip = be32(p + 4), .sport = be16(p + 8),
		    .dport = be16(p + 10), .proto = p[12]};

		check_hash_symmetric(&k);
	}
	return 0;
}
