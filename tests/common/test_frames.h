/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_frames.h -- Ethernet/IPv4/TCP/UDP frames for the unit tests of NFs that
 * rewrite headers (load_balancer, nat): a frame from a `struct spec`, and an
 * RFC 1071 checksum check written here, independently of DPDK's and libnf's,
 * so a rewrite that leaves a wrong checksum is caught.  Uses cmocka's
 * assertions: include after <cmocka.h>.
 */
#ifndef TEST_FRAMES_H
#define TEST_FRAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_mbuf.h>

#include "heap_mbuf.h"


#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static const uint8_t CLIENT_MAC[6] = {0x02, 0, 0, 0, 0, 0x0c};
/* The NF's own MAC: frames are built addressed to it. */
static const uint8_t NF_MAC[6] = {0x02, 0, 0, 0, 0, 0x1b};

struct spec {
	uint32_t src, dst;
	uint16_t sport, dport;
	uint8_t proto;
	uint16_t payload;
	uint16_t frag;	  /* IPv4 flags + fragment offset field (host order) */
	bool udp_nocsum;  /* UDP checksum 0 ("none") */
	bool vlan;	  /* one 802.1Q tag */
};

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* RFC 1071 one's-complement sum of big-endian 16-bit words, not folded. */
static uint32_t
sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += get16(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t
fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static uint32_t
pseudo_sum(const uint8_t *ip, uint16_t l4_len)
{
	uint32_t s = sum16(ip + 12, 8, 0);

	return s + ip[9] + l4_len;
}

/* Offset of the IPv4 header in a frame built by build(). */
static size_t
l3_off(const uint8_t *f)
{
	return get16(f + 12) == 0x8100 ? 18 : 14;
}

/* Ethernet (+VLAN) / IPv4 / TCP or UDP or ICMP with valid checksums. */
static size_t
build(uint8_t *f, const struct spec *s)
{
	size_t l3 = s->vlan ? 18 : 14, l4len;
	uint8_t *ip = f + l3, *l4 = ip + 20;

	memcpy(f, NF_MAC, 6);
	memcpy(f + 6, CLIENT_MAC, 6);
	if (s->vlan) {
		put16(f + 12, 0x8100);
		put16(f + 14, 7);
	}
	put16(f + l3 - 2, 0x0800);
	l4len = (s->proto == 6 ? 20 : 8) + s->payload;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(20 + l4len));
	put16(ip + 4, 0x1234);
	put16(ip + 6, s->frag);
	ip[8] = 64;
	ip[9] = s->proto;
	put32(ip + 12, s->src);
	put32(ip + 16, s->dst);
	put16(ip + 10, (uint16_t)~fold(sum16(ip, 20, 0)));
	memset(l4, 0, l4len);
	for (size_t i = 0; i < s->payload; i++)
		l4[l4len - s->payload + i] = (uint8_t)(i * 7 + 1);
	if (s->proto == 6) {
		put16(l4, s->sport);
		put16(l4 + 2, s->dport);
		put32(l4 + 4, 1000);
		l4[12] = 0x50;
		l4[13] = 0x18;
		put16(l4 + 14, 512);
		put16(l4 + 16, (uint16_t)~fold(sum16(l4, l4len, pseudo_sum(ip, (uint16_t)l4len))));
	} else if (s->proto == 17) {
		put16(l4, s->sport);
		put16(l4 + 2, s->dport);
		put16(l4 + 4, (uint16_t)l4len);
		if (!s->udp_nocsum) {
			uint16_t c =
			    (uint16_t)~fold(sum16(l4, l4len, pseudo_sum(ip, (uint16_t)l4len)));

			put16(l4 + 6, c == 0 ? 0xffff : c);
		}
	} else {
		l4[0] = 8; /* ICMP echo request */
		put16(l4 + 2, (uint16_t)~fold(sum16(l4, l4len, 0)));
	}
	return l3 + 20 + l4len;
}

/* True if the IPv4 header checksum and the TCP/UDP checksum verify. */
static bool
checksums_ok(const uint8_t *f, size_t len)
{
	const uint8_t *ip = f + l3_off(f);
	size_t ihl = (ip[0] & 15) * 4, tot = get16(ip + 2);
	const uint8_t *l4 = ip + ihl;
	uint16_t l4len = (uint16_t)(tot - ihl);

	if ((size_t)(ip - f) + tot > len || fold(sum16(ip, ihl, 0)) != 0xffff)
		return false;
	if (ip[9] == 17 && get16(l4 + 6) == 0)
		return true;
	if (ip[9] == 6 || ip[9] == 17)
		return fold(sum16(l4, l4len, pseudo_sum(ip, l4len))) == 0xffff;
	return true;
}

static struct rte_mbuf *
mbuf_of(const struct spec *s)
{
	uint8_t f[2048];
	size_t n = build(f, s);
	struct rte_mbuf *m = heap_mbuf(f, n);

	assert_non_null(m);
	return m;
}

static uint8_t *
data(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod(m, uint8_t *);
}

#endif /* TEST_FRAMES_H */
