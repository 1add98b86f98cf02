/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * Unit tests of the NAT's logic (nfs/nat/nat_core.c), without an EAL: frames
 * are heap mbufs, state regions live on the heap (test_state.h), and the
 * random generator is a deterministic counter, so every port choice is known
 * in advance.
 *
 * After every packet the state is committed and compared with its replica
 * (test_state_commit_check): a write the NAT forgot to announce fails the
 * test there.  Checksums are verified with an RFC 1071 sum written here, not
 * with DPDK's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "heap_mbuf.h"
#include "nat_core.h"
#include "test_state.h"

#define NAME "nat.json"

#include "test_frames.h"

#define NAT_MAC NF_MAC

/* ---- fixture ------------------------------------------------------------------------ */

struct fake_rand {
	uint64_t next;
	uint64_t step;
	unsigned int calls;
};

static uint64_t
fake_rand(void *arg)
{
	struct fake_rand *r = arg;
	uint64_t v = r->next;

	r->next += r->step;
	r->calls++;
	return v;
}

struct fx {
	struct nat_config cfg;
	struct test_state ts;
	struct nat nat;
	struct fake_rand rnd;
	char err[512];
};

static void
parse_ok(struct nat_config *cfg, const char *text)
{
	char err[512];

	if (nat_config_parse(cfg, NAME, text, strlen(text), err, sizeof(err)) != 0)
		fail_msg("unexpected error: %s", err);
}

static void
open_nat(struct fx *x)
{
	void *regions[NAT_REGIONS] = {test_state_region(&x->ts, "nat"),
				      test_state_region(&x->ts, "nat_ports"),
				      test_state_region(&x->ts, "nat_flows")};

	if (nat_open(&x->nat, &x->cfg, &x->ts.set, regions, fake_rand, &x->rnd, 100, x->err,
		     sizeof(x->err)) != 0)
		fail_msg("nat_open: %s", x->err);
}

static struct fx *
setup_text(const char *text)
{
	struct fx *x = calloc(1, sizeof(*x));
	struct nf_state_request reqs[NAT_REGIONS];

	assert_non_null(x);
	parse_ok(&x->cfg, text);
	nat_regions(&x->cfg, reqs);
	assert_int_equal(test_state_init(&x->ts, reqs, NAT_REGIONS), 0);
	x->rnd = (struct fake_rand){.next = 0, .step = 1};
	open_nat(x);
	assert_int_equal(test_state_commit_check(&x->ts), 0);
	return x;
}

#define EXT IP(198, 18, 0, 1)
#define INSIDE IP(10, 1, 2, 3)
#define SERVER IP(198, 19, 5, 5)

/* 200 ports, 1 s idle timeout, 1024 flows. */
static const char *const CONF =
	"{\"internal\": [\"10.0.0.0/8\", \"192.168.0.0/16\"], \"external_ip\": \"198.18.0.1\",\n"
	" \"port_min\": 20000, \"port_max\": 20199, \"idle_timeout_ms\": 1000, \"flows\": 1024}";

/* Four ports only. */
static const char *const SMALL_CONF =
	"{\"internal\": [\"10.0.0.0/8\"], \"external_ip\": \"198.18.0.1\",\n"
	" \"port_min\": 5000, \"port_max\": 5003, \"idle_timeout_ms\": 1000, \"flows\": 64}";

/* More ports than the smallest table can hold. */
static const char *const TINY_TABLE_CONF =
	"{\"internal\": [\"10.0.0.0/8\"], \"external_ip\": \"198.18.0.1\",\n"
	" \"port_min\": 5000, \"port_max\": 5099, \"flows\": 16}";

static int
setup(void **state)
{
	*state = setup_text(CONF);
	return 0;
}

static int
setup_small(void **state)
{
	*state = setup_text(SMALL_CONF);
	return 0;
}

static int
setup_tiny_table(void **state)
{
	*state = setup_text(TINY_TABLE_CONF);
	return 0;
}

static int
teardown(void **state)
{
	struct fx *x = *state;

	test_state_fini(&x->ts);
	free(x);
	return 0;
}

static enum nat_verdict
run(struct fx *x, struct rte_mbuf *m, uint64_t now)
{
	enum nat_verdict v = nat_packet(&x->nat, m, now);

	if (test_state_commit_check(&x->ts) != 0)
		fail_msg("state written without a touch");
	return v;
}

/* Offsets in a frame built by build() (no VLAN unless s->vlan). */
static size_t
sport_off(const uint8_t *f)
{
	return l3_off(f) + 20;
}

/* Send an outbound packet; returns the external port it left with (0: it
 * was dropped).  Checks that exactly the source address and port (and the
 * checksums, which must verify) changed. */
static int
send_out(struct fx *x, const struct spec *s, uint64_t now)
{
	struct rte_mbuf *m = mbuf_of(s);
	size_t len = rte_pktmbuf_pkt_len(m);
	uint8_t before[2048], *f;
	size_t l3, l4;
	int port;

	memcpy(before, data(m), len);
	if (run(x, m, now) == NAT_DROP) {
		heap_mbuf_free(m);
		return 0;
	}
	f = data(m);
	l3 = l3_off(f);
	l4 = sport_off(f);
	assert_int_equal(get32(f + l3 + 12), x->cfg.external_ip);
	port = get16(f + l4);
	assert_true(port >= x->cfg.port_min && port <= x->cfg.port_max);
	assert_true(checksums_ok(f, len));
	memcpy(f + l3 + 12, before + l3 + 12, 4);
	memcpy(f + l3 + 10, before + l3 + 10, 2);
	memcpy(f + l4, before + l4, 2);
	memcpy(f + l4 + (s->proto == 6 ? 16 : 6), before + l4 + (s->proto == 6 ? 16 : 6), 2);
	assert_memory_equal(f, before, len);
	heap_mbuf_free(m);
	return port;
}

/* Send an inbound packet; returns true if it was translated back to
 * (ip, port) with valid checksums and nothing else changed. */
static bool
send_in(struct fx *x, const struct spec *s, uint64_t now, uint32_t ip, uint16_t port)
{
	struct rte_mbuf *m = mbuf_of(s);
	size_t len = rte_pktmbuf_pkt_len(m);
	uint8_t before[2048], *f;
	size_t l3, l4;

	memcpy(before, data(m), len);
	if (run(x, m, now) == NAT_DROP) {
		heap_mbuf_free(m);
		return false;
	}
	f = data(m);
	l3 = l3_off(f);
	l4 = sport_off(f);
	assert_int_equal(get32(f + l3 + 16), ip);
	assert_int_equal(get16(f + l4 + 2), port);
	assert_true(checksums_ok(f, len));
	memcpy(f + l3 + 16, before + l3 + 16, 4);
	memcpy(f + l3 + 10, before + l3 + 10, 2);
	memcpy(f + l4 + 2, before + l4 + 2, 2);
	memcpy(f + l4 + (s->proto == 6 ? 16 : 6), before + l4 + (s->proto == 6 ? 16 : 6), 2);
	assert_memory_equal(f, before, len);
	heap_mbuf_free(m);
	return true;
}

/* Send a packet that must pass unchanged (true) or be dropped (false). */
static bool
send_unchanged(struct fx *x, const struct spec *s, uint64_t now)
{
	struct rte_mbuf *m = mbuf_of(s);
	size_t len = rte_pktmbuf_pkt_len(m);
	uint8_t before[2048];
	enum nat_verdict v;

	memcpy(before, data(m), len);
	v = run(x, m, now);
	if (v == NAT_FORWARD)
		assert_memory_equal(data(m), before, len);
	heap_mbuf_free(m);
	return v == NAT_FORWARD;
}

static struct spec
out_spec(uint32_t src, uint16_t sport, uint8_t proto)
{
	return (struct spec){.src = src, .dst = SERVER, .sport = sport, .dport = 443,
			     .proto = proto, .payload = 40};
}

/* The reply to out_spec(…) arriving at external port `port`. */
static struct spec
in_spec(uint16_t port, uint8_t proto)
{
	return (struct spec){.src = SERVER, .dst = EXT, .sport = 443, .dport = port,
			     .proto = proto, .payload = 60};
}

/* ---- configuration ------------------------------------------------------------------ */

static void
test_config_values(void **state)
{
	struct nat_config c;

	(void)state;
	parse_ok(&c, CONF);
	assert_int_equal(c.n_internal, 2);
	assert_int_equal(c.internal[1].addr, IP(192, 168, 0, 0));
	assert_int_equal(c.internal[1].mask, 0xffff0000);
	assert_int_equal(c.internal[1].len, 16);
	assert_int_equal(c.external_ip, EXT);
	assert_int_equal(c.port_min, 20000);
	assert_int_equal(c.port_max, 20199);
	assert_int_equal(c.idle_timeout_ms, 1000);
	assert_int_equal(c.flows, 1024);
}

static void
test_config_defaults(void **state)
{
	struct nat_config c;

	(void)state;
	parse_ok(&c, "{\"internal\": [\"10.0.0.0/8\"], \"external_ip\": \"198.18.0.1\"}");
	assert_int_equal(c.port_min, NAT_PORT_MIN_DEF);
	assert_int_equal(c.port_max, NAT_PORT_MAX_DEF);
	assert_int_equal(c.idle_timeout_ms, NAT_IDLE_TIMEOUT_MS_DEF);
	assert_int_equal(c.flows, NAT_FLOWS_DEF);
	/* A single port and a bare address (a /32) are fine. */
	parse_ok(&c, "{\"internal\": [\"10.0.0.7\"], \"external_ip\": \"198.18.0.1\", "
		     "\"port_min\": 7, \"port_max\": 7}");
	assert_int_equal(c.internal[0].len, 32);
	assert_int_equal(c.port_max, 7);
}

static void
expect_error(const char *text, const char *where, const char *what)
{
	struct nat_config c;
	char err[512], want[256];

	assert_int_equal(nat_config_parse(&c, NAME, text, strlen(text), err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), NAME ":%s: ", where);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("error \"%s\" does not start with \"%s\"", err, want);
	if (strstr(err, what) == NULL)
		fail_msg("error \"%s\" does not say \"%s\"", err, what);
}

#define INT8 "\"internal\": [\"10.0.0.0/8\"]"
#define EXTIP "\"external_ip\": \"198.18.0.1\""

static void
test_config_errors_name_line_column_and_field(void **state)
{
	(void)state;
	expect_error("{" INT8 ",\n " EXTIP, "2:28", "expected"); /* syntax: Jansson's place */
	expect_error("[\"nat\"]", "1:1: (top level)", "expected an object");
	expect_error("{" INT8 ", " EXTIP ",\n \"ports\": 5}", "2:11: ports", "unknown field");
	expect_error("{" EXTIP "}", "1:1: internal", "required field missing");
	expect_error("{\"internal\": [], " EXTIP "}", "1:14: internal",
		     "expected an array of 1..64 prefixes");
	expect_error("{\"internal\": \"10.0.0.0/8\", " EXTIP "}", "1:14: internal",
		     "expected an array");
	expect_error("{\"internal\": [\"10.0.0.0/8\",\n   \"10.0.0.1/8\"], " EXTIP "}",
		     "2:4: internal[1]", "has host bits set (the network is 10.0.0.0/8)");
	expect_error("{\"internal\": [\"10.0.0.0/33\"], " EXTIP "}", "1:15: internal[0]",
		     "the length 33 is over 32");
	expect_error("{\"internal\": [8], " EXTIP "}", "1:15: internal[0]",
		     "expected an IPv4 prefix string");
	expect_error("{" INT8 "}", "1:1: external_ip", "required field missing");
	expect_error("{" INT8 ",\n \"external_ip\": \"198.18.0\"}", "2:17: external_ip",
		     "not an IPv4 address");
	expect_error("{" INT8 ",\n \"external_ip\": \"239.1.1.1\"}", "2:17: external_ip",
		     "not a unicast address");
	expect_error("{" INT8 ",\n \"external_ip\": \"10.9.9.9\"}", "2:17: external_ip",
		     "inside internal[0]");
	expect_error("{" INT8 ", " EXTIP ",\n \"port_min\": 0}", "2:14: port_min",
		     "expected an integer in 1..65535");
	expect_error("{" INT8 ", " EXTIP ",\n \"port_max\": 65536}", "2:14: port_max",
		     "expected an integer in 1..65535");
	expect_error("{" INT8 ", " EXTIP ",\n \"port_min\": 3000, \"port_max\": 2999}",
		     "2:32: port_max", "empty port range 3000..2999");
	expect_error("{" INT8 ", " EXTIP ",\n \"port_min\": 65535, \"port_max\": 1}",
		     "2:33: port_max", "empty port range");
	expect_error("{" INT8 ", " EXTIP ",\n \"idle_timeout_ms\": \"5\"}", "2:21: idle_timeout_ms",
		     "expected an integer in 1..86400000");
	expect_error("{" INT8 ", " EXTIP ",\n \"flows\": 100}", "2:11: flows",
		     "expected a power of two");
	expect_error("{" INT8 ", " EXTIP ",\n \"flows\": 8388608}", "2:11: flows",
		     "expected an integer in 16..4194304");
}

/* ---- outbound ----------------------------------------------------------------------- */

static void
test_new_flow_leaves_with_the_drawn_port_and_keeps_it(void **state)
{
	struct fx *x = *state;
	struct spec s = out_spec(INSIDE, 40000, 6);

	x->rnd.next = 1234; /* 1234 % 200 free ports = 34th free: port 20034 */
	assert_int_equal(send_out(x, &s, 1), 20034);
	assert_int_equal(x->rnd.calls, 1);
	for (int i = 0; i < 5; i++)
		assert_int_equal(send_out(x, &s, 2 + i), 20034);
	assert_int_equal(x->rnd.calls, 1); /* no draw for an existing mapping */
	assert_int_equal(x->nat.t->new_mappings, 1);
	assert_int_equal(x->nat.t->outbound, 6);
	assert_int_equal(nat_free_ports(&x->nat), 199);
	const struct onvm_flow_key k = {.src_ip = INSIDE, .dst_ip = SERVER, .sport = 40000,
					.dport = 443, .proto = 6};
	assert_int_equal(nat_lookup(&x->nat, &k)->packets_out, 6);
	assert_memory_equal(nat_port_owner(&x->nat, 20034), &k, sizeof(k));
}

static void
test_draw_picks_among_free_ports_only(void **state)
{
	struct fx *x = *state;

	/* Draws of 0 take the lowest free port each time. */
	x->rnd = (struct fake_rand){.next = 0, .step = 0};
	for (int i = 0; i < 3; i++) {
		struct spec s = out_spec(INSIDE, (uint16_t)(100 + i), 17);

		assert_int_equal(send_out(x, &s, 1), 20000 + i);
	}
	/* 197 free: 20003..20199.  A draw of 197 + 65 wraps to the 65th free one. */
	x->rnd = (struct fake_rand){.next = 197 + 65, .step = 0};
	struct spec s = out_spec(INSIDE, 200, 17);

	assert_int_equal(send_out(x, &s, 1), 20003 + 65);
	/* 196 free, 20068 taken: the 64th free port (0-based) is 20067 ... */
	x->rnd.next = 64;
	s.sport = 201;
	assert_int_equal(send_out(x, &s, 1), 20067);
	/* ... and then, with 20067 and 20068 taken, 20069. */
	s.sport = 202;
	assert_int_equal(send_out(x, &s, 1), 20069);
	/* The last of the 194 free ports. */
	x->rnd.next = 193;
	s.sport = 203;
	assert_int_equal(send_out(x, &s, 1), 20199);
}

static void
test_mappings_are_per_five_tuple_and_ports_unique(void **state)
{
	struct fx *x = *state;
	int port[150];
	bool seen[200] = {false};

	x->rnd = (struct fake_rand){.next = 99, .step = 7919};
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 150; i++) {
			/* Same internal endpoint, different servers or protocols: each
			 * 5-tuple is a mapping of its own. */
			struct spec s = out_spec(i % 2 ? INSIDE : IP(192, 168, 7, 7),
						 (uint16_t)(3000 + i % 50), i % 3 ? 6 : 17);
			int p;

			s.dst = SERVER + (uint32_t)(i / 50);
			p = send_out(x, &s, 1 + (uint64_t)round);
			assert_true(p != 0);
			if (round == 0) {
				port[i] = p;
				assert_false(seen[p - 20000]);
				seen[p - 20000] = true;
			}
			assert_int_equal(p, port[i]);
		}
	assert_int_equal(x->rnd.calls, 150);
	assert_int_equal(nat_mapping_count(&x->nat), 150);
	assert_int_equal(nat_free_ports(&x->nat), 50);
}

/* ---- inbound ------------------------------------------------------------------------ */

static void
test_reply_goes_back_to_the_internal_endpoint(void **state)
{
	struct fx *x = *state;
	struct spec o = out_spec(INSIDE, 40000, 17), i;
	int port;

	port = send_out(x, &o, 1);
	assert_true(port != 0);
	i = in_spec((uint16_t)port, 17);
	assert_true(send_in(x, &i, 2, INSIDE, 40000));
	assert_true(send_in(x, &i, 3, INSIDE, 40000));
	assert_int_equal(send_out(x, &o, 4), port);
	assert_int_equal(x->rnd.calls, 1);
	assert_int_equal(x->nat.t->inbound, 2);
	const struct onvm_flow_key k = {.src_ip = INSIDE, .dst_ip = SERVER, .sport = 40000,
					.dport = 443, .proto = 17};
	assert_int_equal(nat_lookup(&x->nat, &k)->packets_in, 2);
	assert_int_equal(nat_lookup(&x->nat, &k)->packets_out, 2);
}

static void
test_inbound_from_the_wrong_endpoint_or_protocol_is_dropped(void **state)
{
	struct fx *x = *state;
	struct spec o = out_spec(INSIDE, 40000, 6), i;
	uint16_t port;

	port = (uint16_t)send_out(x, &o, 1);
	i = in_spec(port, 6);
	i.src = SERVER + 1;
	assert_false(send_in(x, &i, 2, 0, 0)); /* other remote address */
	i = in_spec(port, 6);
	i.sport = 444;
	assert_false(send_in(x, &i, 2, 0, 0)); /* other remote port */
	i = in_spec(port, 17);
	assert_false(send_in(x, &i, 2, 0, 0)); /* other protocol */
	assert_int_equal(x->nat.t->inbound_mismatch, 3);
	i = in_spec((uint16_t)(port == 20000 ? 20001 : 20000), 6);
	assert_false(send_in(x, &i, 2, 0, 0)); /* a free port */
	i = in_spec(19999, 6);
	assert_false(send_in(x, &i, 2, 0, 0)); /* below the range */
	i = in_spec(20200, 6);
	assert_false(send_in(x, &i, 2, 0, 0)); /* above the range */
	assert_int_equal(x->nat.t->inbound_unmapped, 3);
	i = (struct spec){.src = SERVER, .dst = EXT, .proto = 1, .payload = 8};
	assert_false(send_in(x, &i, 2, 0, 0)); /* ICMP to the NAT */
	assert_int_equal(x->nat.t->inbound_unsupported, 1);
	/* A hairpin (inside to the external address) is dropped the same way. */
	i = in_spec(port, 6);
	i.src = INSIDE;
	assert_false(send_in(x, &i, 2, 0, 0));
	assert_int_equal(x->nat.t->inbound_mismatch, 4);
	assert_int_equal(x->nat.t->inbound, 0);
	assert_int_equal(x->rnd.calls, 1);
	i = in_spec(port, 6);
	assert_true(send_in(x, &i, 3, INSIDE, 40000)); /* the right one still works */
}

/* ---- what is not translated --------------------------------------------------------- */

static void
test_outside_traffic_passes_and_internal_icmp_is_dropped(void **state)
{
	struct fx *x = *state;
	struct spec s = {.src = IP(172, 16, 0, 1), .dst = SERVER, .sport = 1, .dport = 2,
			 .proto = 6, .payload = 3};

	assert_true(send_unchanged(x, &s, 1)); /* not internal */
	s = (struct spec){.src = SERVER, .dst = INSIDE, .sport = 443, .dport = 40000, .proto = 6,
			  .payload = 3};
	assert_true(send_unchanged(x, &s, 1)); /* to an internal address directly */
	assert_int_equal(x->nat.t->passed, 2);
	s = (struct spec){.src = INSIDE, .dst = SERVER, .proto = 1, .payload = 56};
	assert_false(send_unchanged(x, &s, 1));
	s.proto = 47; /* GRE */
	assert_false(send_unchanged(x, &s, 1));
	assert_int_equal(x->nat.t->untranslatable, 2);
	assert_int_equal(x->rnd.calls, 0);
	assert_int_equal(nat_mapping_count(&x->nat), 0);
}

static void
test_malformed_frames_are_dropped_and_counted_by_reason(void **state)
{
	struct fx *x = *state;
	struct spec s = out_spec(INSIDE, 1, 17);
	uint8_t f[256], g[256];
	size_t n = build(f, &s);
	struct rte_mbuf *m;

	m = heap_mbuf(f, 13);
	assert_int_equal(run(x, m, 1), NAT_DROP);
	heap_mbuf_free(m);
	m = heap_mbuf(f, 14 + 19);
	assert_int_equal(run(x, m, 1), NAT_DROP);
	heap_mbuf_free(m);
	m = heap_mbuf(f, n - 1);
	assert_int_equal(run(x, m, 1), NAT_DROP);
	heap_mbuf_free(m);
	memcpy(g, f, n);
	put16(g + 14 + 20 + 4, 7); /* UDP length < 8 */
	m = heap_mbuf(g, n);
	assert_int_equal(run(x, m, 1), NAT_DROP);
	heap_mbuf_free(m);
	memcpy(g, f, n);
	put16(g + 14 + 2, 20 + 4); /* UDP header cut by the IP length */
	m = heap_mbuf(g, n);
	assert_int_equal(run(x, m, 1), NAT_DROP);
	heap_mbuf_free(m);
	assert_int_equal(x->nat.t->malformed[ONVM_PARSE_TRUNC_L2], 1);
	assert_int_equal(x->nat.t->malformed[ONVM_PARSE_TRUNC_L3], 1);
	assert_int_equal(x->nat.t->malformed[ONVM_PARSE_BAD_TOTLEN], 1);
	assert_int_equal(x->nat.t->malformed[ONVM_PARSE_BAD_L4LEN], 1);
	assert_int_equal(x->nat.t->malformed[ONVM_PARSE_TRUNC_L4], 1);
	assert_int_equal(x->nat.t->packets, 5);
	assert_int_equal(x->rnd.calls, 0);
	assert_int_equal(nat_free_ports(&x->nat), 200);
}

static void
test_non_ipv4_passes_unchanged(void **state)
{
	struct fx *x = *state;
	uint8_t arp[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06};
	struct rte_mbuf *m = heap_mbuf(arp, sizeof(arp));

	assert_int_equal(run(x, m, 1), NAT_FORWARD);
	assert_memory_equal(data(m), arp, sizeof(arp));
	assert_int_equal(x->nat.t->non_ip, 1);
	heap_mbuf_free(m);
}

static void
test_fragments_to_translate_are_dropped(void **state)
{
	struct fx *x = *state;
	struct spec s = out_spec(INSIDE, 53, 17);

	s.frag = 0x2000; /* first fragment */
	assert_false(send_unchanged(x, &s, 1));
	s.frag = 0x00b9; /* a later one */
	assert_false(send_unchanged(x, &s, 1));
	s = in_spec(20000, 17);
	s.frag = 0x0001;
	assert_false(send_unchanged(x, &s, 1));
	assert_int_equal(x->nat.t->fragments, 3);
	assert_int_equal(x->rnd.calls, 0);
}

/* ---- checksums ---------------------------------------------------------------------- */

static void
test_udp_without_checksum_keeps_none_both_ways(void **state)
{
	struct fx *x = *state;
	struct spec o = out_spec(INSIDE, 9, 17), i;
	struct rte_mbuf *m;
	uint16_t port;

	o.udp_nocsum = true;
	m = mbuf_of(&o);
	assert_int_equal(run(x, m, 1), NAT_FORWARD);
	assert_int_equal(get16(data(m) + 14 + 20 + 6), 0);
	port = get16(data(m) + 14 + 20);
	heap_mbuf_free(m);
	i = in_spec(port, 17);
	i.udp_nocsum = true;
	m = mbuf_of(&i);
	assert_int_equal(run(x, m, 1), NAT_FORWARD);
	assert_int_equal(get16(data(m) + 14 + 20 + 6), 0);
	assert_true(checksums_ok(data(m), rte_pktmbuf_pkt_len(m)));
	heap_mbuf_free(m);
}

static void
test_vlan_tagged_frames_are_translated_behind_the_tag(void **state)
{
	struct fx *x = *state;
	struct spec o = out_spec(INSIDE, 9, 6), i;
	int port;

	o.vlan = true;
	port = send_out(x, &o, 1);
	assert_true(port != 0);
	i = in_spec((uint16_t)port, 6);
	i.vlan = true;
	assert_true(send_in(x, &i, 2, INSIDE, 9));
}

static void
test_checksum_of_a_two_segment_frame_covers_both(void **state)
{
	struct fx *x = *state;
	struct spec s = out_spec(INSIDE, 777, 6);
	uint8_t f[2048], out[2048];
	size_t n, cut = 14 + 20 + 20 + 33, off = 0;
	struct rte_mbuf *m, *m2;

	s.payload = 1400;
	n = build(f, &s);
	m = heap_mbuf(f, cut);
	m2 = heap_mbuf(f + cut, n - cut);
	assert_non_null(m);
	assert_non_null(m2);
	m->next = m2;
	m->nb_segs = 2;
	m->pkt_len = (uint32_t)n;
	x->rnd.next = 5;
	assert_int_equal(run(x, m, 1), NAT_FORWARD);
	for (struct rte_mbuf *seg = m; seg != NULL; seg = seg->next) {
		memcpy(out + off, rte_pktmbuf_mtod(seg, uint8_t *), seg->data_len);
		off += seg->data_len;
	}
	assert_int_equal(off, n);
	assert_int_equal(get32(out + 14 + 12), EXT);
	assert_int_equal(get16(out + 14 + 20), 20005);
	assert_true(checksums_ok(out, n));
	heap_mbuf_free(m);
}

/* ---- ports and expiry --------------------------------------------------------------- */

static void
test_port_exhaustion_drops_new_flows_without_a_draw(void **state)
{
	struct fx *x = *state;
	bool taken[4] = {false};
	struct spec s;

	x->rnd = (struct fake_rand){.next = 3, .step = 5};
	for (int i = 0; i < 4; i++) {
		int p;

		s = out_spec(INSIDE, (uint16_t)(10 + i), 6);
		p = send_out(x, &s, 0);
		assert_true(p >= 5000 && p <= 5003);
		assert_false(taken[p - 5000]);
		taken[p - 5000] = true;
	}
	assert_int_equal(nat_free_ports(&x->nat), 0);
	s = out_spec(INSIDE, 99, 6);
	assert_int_equal(send_out(x, &s, 0), 0);
	assert_int_equal(send_out(x, &s, 0), 0);
	assert_int_equal(x->nat.t->ports_exhausted, 2);
	assert_int_equal(x->rnd.calls, 4);
	assert_int_equal(nat_mapping_count(&x->nat), 4);
	/* Existing mappings are unaffected. */
	s = out_spec(INSIDE, 12, 6);
	assert_true(send_out(x, &s, 0) != 0);
}

static void
test_expiry_frees_the_mapping_and_its_port(void **state)
{
	struct fx *x = *state;
	const uint64_t sec = 1000000000ULL;
	struct spec a = out_spec(INSIDE, 1, 6), b = out_spec(INSIDE, 2, 6), ib;
	int pa, pb;

	x->rnd = (struct fake_rand){.next = 0, .step = 0};
	pa = send_out(x, &a, 0);
	pb = send_out(x, &b, 0);
	assert_int_equal(pa, 5000);
	assert_int_equal(pb, 5001);
	/* b stays alive through inbound traffic only. */
	ib = in_spec((uint16_t)pb, 6);
	assert_true(send_in(x, &ib, sec / 2, INSIDE, 2));
	x->nat.sweep_budget = 64;
	assert_int_equal(nat_maintain(&x->nat, sec + sec / 10), 1);
	assert_int_equal(test_state_commit_check(&x->ts), 0);
	assert_int_equal(nat_mapping_count(&x->nat), 1);
	assert_int_equal(nat_free_ports(&x->nat), 3);
	assert_null(nat_port_owner(&x->nat, 5000));
	assert_non_null(nat_port_owner(&x->nat, 5001));
	/* A reply to the expired mapping finds nothing. */
	struct spec ia = in_spec((uint16_t)pa, 6);

	assert_false(send_in(x, &ia, sec + sec / 5, 0, 0));
	assert_int_equal(x->nat.t->inbound_unmapped, 1);
	/* a's next packet is a new mapping, on the freed port (lowest free). */
	assert_int_equal(send_out(x, &a, sec + sec / 5), 5000);
	assert_int_equal(x->rnd.calls, 3);
	/* Both idle now: both go, every port is free again. */
	x->nat.next_sweep_ns = 0;
	assert_int_equal(nat_maintain(&x->nat, 10 * sec), 2);
	assert_int_equal(test_state_commit_check(&x->ts), 0);
	assert_int_equal(nat_free_ports(&x->nat), 4);
	assert_int_equal(nat_mapping_count(&x->nat), 0);
	assert_int_equal(onvm_ft_stats(&x->nat.ft)->expired, 3);
}

static void
test_full_table_drops_new_flows_and_keeps_the_port(void **state)
{
	struct fx *x = *state;
	struct spec s;

	for (int i = 0; i < 12; i++) { /* 16 slots, load limit 12 */
		s = out_spec(INSIDE, (uint16_t)(10 + i), 17);
		assert_true(send_out(x, &s, 0) != 0);
	}
	s = out_spec(INSIDE, 99, 17);
	assert_int_equal(send_out(x, &s, 0), 0);
	assert_int_equal(x->nat.t->table_full, 1);
	assert_int_equal(x->rnd.calls, 12);
	assert_int_equal(nat_free_ports(&x->nat), 100 - 12);
}

/* ---- failover ----------------------------------------------------------------------- */

static void
test_failover_keeps_every_mapping_although_the_draws_now_differ(void **state)
{
	struct fx *x = *state;
	int port[80];

	x->rnd = (struct fake_rand){.next = 0, .step = 0}; /* lowest free: 20000 + i */
	for (int i = 0; i < 80; i++) {
		struct spec s = out_spec(INSIDE, (uint16_t)(1000 + i), i % 2 ? 6 : 17);

		port[i] = send_out(x, &s, 10);
		assert_int_equal(port[i], 20000 + i);
	}
	assert_int_equal(test_state_failover(&x->ts), 0);
	memset(&x->nat, 0xa5, sizeof(x->nat));
	x->rnd = (struct fake_rand){.next = 7, .step = 0}; /* would now pick another port */
	open_nat(x);
	assert_int_equal(nat_mapping_count(&x->nat), 80);
	assert_int_equal(nat_free_ports(&x->nat), 120);
	for (int i = 79; i >= 0; i--) {
		struct spec s = out_spec(INSIDE, (uint16_t)(1000 + i), i % 2 ? 6 : 17);
		struct spec r = in_spec((uint16_t)port[i], i % 2 ? 6 : 17);

		assert_int_equal(send_out(x, &s, 20), port[i]);
		assert_true(send_in(x, &r, 20, INSIDE, (uint16_t)(1000 + i)));
	}
	assert_int_equal(x->rnd.calls, 0);
	/* A new flow after the failover: the 7th free port, 20087. */
	struct spec s = out_spec(INSIDE, 5, 6);

	assert_int_equal(send_out(x, &s, 30), 20087);
	assert_int_equal(x->rnd.calls, 1);
	assert_int_equal(x->nat.t->new_mappings, 81);
}

static void
test_failover_rolls_back_an_uncommitted_mapping_and_its_port(void **state)
{
	struct fx *x = *state;
	struct spec a = out_spec(INSIDE, 1, 6), b = out_spec(INSIDE, 2, 6);
	struct rte_mbuf *m = mbuf_of(&b);

	x->rnd = (struct fake_rand){.next = 0, .step = 0};
	assert_int_equal(send_out(x, &a, 1), 20000);
	/* b's packet takes port 20001, but the batch never commits. */
	assert_int_equal(nat_packet(&x->nat, m, 2), NAT_FORWARD);
	heap_mbuf_free(m);
	assert_non_null(nat_port_owner(&x->nat, 20001));
	assert_int_equal(test_state_failover(&x->ts), 0);
	x->rnd = (struct fake_rand){.next = 1, .step = 0};
	open_nat(x);
	assert_int_equal(nat_mapping_count(&x->nat), 1);
	assert_int_equal(nat_free_ports(&x->nat), 199);
	assert_null(nat_port_owner(&x->nat, 20001));
	assert_int_equal(send_out(x, &a, 3), 20000);
	assert_int_equal(send_out(x, &b, 3), 20002); /* drawn afresh: 2nd free port */
}

static void
test_reopen_with_another_port_range_is_refused(void **state)
{
	struct fx *x = *state;
	void *regions[NAT_REGIONS] = {test_state_region(&x->ts, "nat"),
				      test_state_region(&x->ts, "nat_ports"),
				      test_state_region(&x->ts, "nat_flows")};
	struct nat other;

	x->cfg.external_ip = IP(198, 18, 0, 2);
	assert_int_equal(nat_open(&other, &x->cfg, &x->ts.set, regions, fake_rand, &x->rnd, 100,
				  x->err, sizeof(x->err)),
			 -EBADMSG);
	assert_non_null(strstr(x->err, "another config"));
}

/* ---- export ------------------------------------------------------------------------- */

static void
test_export_lists_every_mapping(void **state)
{
	struct fx *x = *state;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);
	json_error_t je;
	json_t *doc, *maps, *v;

	x->rnd = (struct fake_rand){.next = 0, .step = 0};
	for (int k = 0; k < 4; k++) {
		struct spec s = out_spec(INSIDE, (uint16_t)(100 + k), 17), r;

		assert_int_equal(send_out(x, &s, 1), 20000 + k);
		r = in_spec((uint16_t)(20000 + k), 17);
		assert_true(send_in(x, &r, 1, INSIDE, (uint16_t)(100 + k)));
	}
	assert_non_null(f);
	assert_int_equal(nat_export_json(&x->nat, f), 0);
	fclose(f);
	doc = json_loads(buf, 0, &je);
	if (doc == NULL)
		fail_msg("export is not JSON: %s at %d:%d\n%s", je.text, je.line, je.column, buf);
	assert_string_equal(json_string_value(json_object_get(doc, "external_ip")), "198.18.0.1");
	assert_int_equal(json_integer_value(json_object_get(doc, "packets")), 8);
	assert_int_equal(json_integer_value(json_object_get(doc, "outbound")), 4);
	assert_int_equal(json_integer_value(json_object_get(doc, "inbound")), 4);
	assert_int_equal(json_integer_value(json_object_get(doc, "new_mappings")), 4);
	assert_int_equal(json_integer_value(json_object_get(doc, "free_ports")), 196);
	maps = json_object_get(doc, "mappings");
	assert_int_equal(json_array_size(maps), 4);
	json_array_foreach(maps, i, v) {
		int sport = (int)json_integer_value(json_object_get(v, "sport"));

		assert_string_equal(json_string_value(json_object_get(v, "src")), "10.1.2.3");
		assert_string_equal(json_string_value(json_object_get(v, "dst")), "198.19.5.5");
		assert_int_equal(json_integer_value(json_object_get(v, "external_port")),
				 20000 + sport - 100);
		assert_int_equal(json_integer_value(json_object_get(v, "packets_out")), 1);
		assert_int_equal(json_integer_value(json_object_get(v, "packets_in")), 1);
	}
	json_decref(doc);
	free(buf);
}

#define T(f)   cmocka_unit_test_setup_teardown(f, setup, teardown)
#define TS(f)  cmocka_unit_test_setup_teardown(f, setup_small, teardown)
#define TT(f)  cmocka_unit_test_setup_teardown(f, setup_tiny_table, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_values),
		cmocka_unit_test(test_config_defaults),
		cmocka_unit_test(test_config_errors_name_line_column_and_field),
		T(test_new_flow_leaves_with_the_drawn_port_and_keeps_it),
		T(test_draw_picks_among_free_ports_only),
		T(test_mappings_are_per_five_tuple_and_ports_unique),
		T(test_reply_goes_back_to_the_internal_endpoint),
		T(test_inbound_from_the_wrong_endpoint_or_protocol_is_dropped),
		T(test_outside_traffic_passes_and_internal_icmp_is_dropped),
		T(test_malformed_frames_are_dropped_and_counted_by_reason),
		T(test_non_ipv4_passes_unchanged),
		T(test_fragments_to_translate_are_dropped),
		T(test_udp_without_checksum_keeps_none_both_ways),
		T(test_vlan_tagged_frames_are_translated_behind_the_tag),
		T(test_checksum_of_a_two_segment_frame_covers_both),
		TS(test_port_exhaustion_drops_new_flows_without_a_draw),
		TS(test_expiry_frees_the_mapping_and_its_port),
		TT(test_full_table_drops_new_flows_and_keeps_the_port),
		T(test_failover_keeps_every_mapping_although_the_draws_now_differ),
		T(test_failover_rolls_back_an_uncommitted_mapping_and_its_port),
		T(test_reopen_with_another_port_range_is_refused),
		T(test_export_lists_every_mapping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
