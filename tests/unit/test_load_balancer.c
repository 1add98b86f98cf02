/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * Unit tests of the load balancer's logic (nfs/load_balancer/load_balancer_core.c),
 * without an EAL: frames are heap mbufs, state regions live on the heap
 * (test_state.h), and the random generator is a deterministic counter, so
 * every backend choice is known in advance.
 *
 * After every packet the state is committed and compared with its replica
 * (test_state_commit_check): a write the balancer forgot to announce fails
 * the test there.  Checksums are verified with an RFC 1071 sum written here,
 * not with DPDK's.
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
#include "load_balancer_core.h"
#include "test_state.h"

#define NAME "lb.json"

#include "test_frames.h"

#define LB_MAC NF_MAC

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
	struct lb_config cfg;
	struct test_state ts;
	struct lb lb;
	struct fake_rand rnd;
	char err[512];
};

static void
parse_ok(struct lb_config *cfg, const char *text)
{
	char err[512];

	if (lb_config_parse(cfg, NAME, text, strlen(text), err, sizeof(err)) != 0)
		fail_msg("unexpected error: %s", err);
}

static void
open_lb(struct fx *x)
{
	void *regions[LB_REGIONS] = {test_state_region(&x->ts, "lb"),
				     test_state_region(&x->ts, "lb_flows")};

	if (lb_open(&x->lb, &x->cfg, &x->ts.set, regions, fake_rand, &x->rnd, 100, x->err,
		    sizeof(x->err)) != 0)
		fail_msg("lb_open: %s", x->err);
}

static struct fx *
setup_text(const char *text)
{
	struct fx *x = calloc(1, sizeof(*x));
	struct nf_state_request reqs[LB_REGIONS];

	assert_non_null(x);
	parse_ok(&x->cfg, text);
	lb_regions(&x->cfg, reqs);
	assert_int_equal(test_state_init(&x->ts, reqs, LB_REGIONS), 0);
	x->rnd = (struct fake_rand){.next = 0, .step = 1};
	open_lb(x);
	assert_int_equal(test_state_commit_check(&x->ts), 0);
	return x;
}

static const char *const VIP_CONF =
	"{\"vip\": \"198.18.0.100\", \"idle_timeout_ms\": 1000, \"flows\": 1024, \"backends\": [\n"
	"  {\"ip\": \"198.18.1.1\", \"mac\": \"02:00:00:00:01:01\"},\n"
	"  {\"ip\": \"198.18.1.2\", \"mac\": \"02:00:00:00:01:02\"},\n"
	"  {\"ip\": \"198.18.1.3\", \"mac\": \"02:00:00:00:01:03\"}]}";

static const char *const TRANSPARENT_CONF =
	"{\"idle_timeout_ms\": 1000, \"flows\": 1024, \"backends\": [\n"
	"  {\"ip\": \"198.18.1.1\", \"mac\": \"02:00:00:00:01:01\"},\n"
	"  {\"ip\": \"198.18.1.2\", \"mac\": \"02:00:00:00:01:02\"},\n"
	"  {\"ip\": \"198.18.1.3\", \"mac\": \"02:00:00:00:01:03\"}]}";

#define VIP IP(198, 18, 0, 100)
#define CLIENT IP(198, 19, 0, 1)

static int
setup_vip(void **state)
{
	*state = setup_text(VIP_CONF);
	return 0;
}

static int
setup_transparent(void **state)
{
	*state = setup_text(TRANSPARENT_CONF);
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

/* Run one packet through the balancer, then commit and check the replica. */
static enum lb_verdict
run(struct fx *x, struct rte_mbuf *m, uint64_t now)
{
	enum lb_verdict v = lb_packet(&x->lb, m, now);

	if (test_state_commit_check(&x->ts) != 0)
		fail_msg("state written without a touch");
	return v;
}

/* Send a packet of `s`; returns the backend index its destination became
 * (-1: unchanged, -2: dropped).  Checks checksums and that nothing but the
 * destination MAC, destination address and checksums changed. */
static int
send_pkt(struct fx *x, const struct spec *s, uint64_t now)
{
	struct rte_mbuf *m = mbuf_of(s);
	uint8_t before[2048];
	size_t len = rte_pktmbuf_pkt_len(m), l3 = l3_off(data(m));
	enum lb_verdict v;
	int backend = -1;

	memcpy(before, data(m), len);
	v = run(x, m, now);
	if (v == LB_DROP) {
		heap_mbuf_free(m);
		return -2;
	}
	if (memcmp(before, data(m), len) != 0) {
		uint8_t *f = data(m);
		uint32_t dst = get32(f + l3 + 16);

		for (uint32_t i = 0; i < x->cfg.n_backends; i++)
			if (x->cfg.backends[i].ip == dst)
				backend = (int)i;
		assert_true(backend >= 0);
		assert_memory_equal(f, x->cfg.backends[backend].mac, 6);
		assert_true(checksums_ok(f, len));
		/* Everything else as it was. */
		memcpy(f, before, 6);
		memcpy(f + l3 + 16, before + l3 + 16, 4);
		memcpy(f + l3 + 10, before + l3 + 10, 2);
		if (s->proto == 6)
			memcpy(f + l3 + 20 + 16, before + l3 + 20 + 16, 2);
		if (s->proto == 17)
			memcpy(f + l3 + 20 + 6, before + l3 + 20 + 6, 2);
		assert_memory_equal(f, before, len);
	}
	heap_mbuf_free(m);
	return backend;
}

static struct spec
flow(uint32_t src, uint16_t sport, uint8_t proto)
{
	return (struct spec){.src = src, .dst = VIP, .sport = sport, .dport = 80, .proto = proto,
			     .payload = 30};
}

/* ---- configuration ------------------------------------------------------------------ */

static void
test_config_vip_mode_values(void **state)
{
	struct lb_config c;

	(void)state;
	parse_ok(&c, VIP_CONF);
	assert_true(c.has_vip);
	assert_int_equal(c.vip, VIP);
	assert_int_equal(c.n_backends, 3);
	assert_int_equal(c.backends[2].ip, IP(198, 18, 1, 3));
	assert_memory_equal(c.backends[1].mac, ((uint8_t[]){2, 0, 0, 0, 1, 2}), 6);
	assert_int_equal(c.idle_timeout_ms, 1000);
	assert_int_equal(c.flows, 1024);
}

static void
test_config_without_vip_is_transparent_with_defaults(void **state)
{
	struct lb_config c;

	(void)state;
	parse_ok(&c, "{\"backends\": [{\"ip\": \"198.18.1.1\", \"mac\": \"02:00:00:00:01:01\"}]}");
	assert_false(c.has_vip);
	assert_int_equal(c.n_backends, 1);
	assert_int_equal(c.idle_timeout_ms, LB_IDLE_TIMEOUT_MS_DEF);
	assert_int_equal(c.flows, LB_FLOWS_DEF);
}

/* `text` is rejected with "lb.json:<where>: <what...>". */
static void
expect_error(const char *text, const char *where, const char *what)
{
	struct lb_config c;
	char err[512], want[256];

	assert_int_equal(lb_config_parse(&c, NAME, text, strlen(text), err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), NAME ":%s: ", where);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("error \"%s\" does not start with \"%s\"", err, want);
	if (strstr(err, what) == NULL)
		fail_msg("error \"%s\" does not say \"%s\"", err, what);
}

#define B1 "{\"ip\": \"198.18.1.1\", \"mac\": \"02:00:00:00:01:01\"}"

static void
test_config_errors_name_line_column_and_field(void **state)
{
	(void)state;
	expect_error("{\"backends\": [" B1 "]", "1:63", "expected"); /* syntax: Jansson's place */
	expect_error("[1]", "1:1: (top level)", "expected an object");
	expect_error("{\"backend\": []}", "1:13: backend", "unknown field");
	expect_error("{\"vip\": \"198.18.0.1\"}", "1:1: backends", "required field missing");
	expect_error("{\"backends\": []}", "1:14: backends", "expected an array of 1..256");
	expect_error("{\"backends\": {}}", "1:14: backends", "expected an array");
	expect_error("{\"backends\": [\n  1]}", "2:3: backends[0]", "expected an object");
	expect_error("{\"backends\": [" B1 ",\n  {\"ip\": \"198.18.1.2\"}]}",
		     "2:3: backends[1].mac", "required field missing");
	expect_error("{\"backends\": [\n  {\"ip\": \"198.18.1.2\", \"mac\": \"02:00:00:00:01:01\", "
		     "\"weight\": 2}]}",
		     "2:62: backends[0].weight", "unknown field");
	expect_error("{\"backends\": [\n  {\"ip\": \"198.18.1\", \"mac\": \"02:00:00:00:01:01\"}]}",
		     "2:10: backends[0].ip", "not an IPv4 address");
	expect_error("{\"backends\": [\n  {\"ip\": 5, \"mac\": \"02:00:00:00:01:01\"}]}",
		     "2:10: backends[0].ip", "expected an IPv4 address string");
	expect_error(
	    "{\"backends\": [\n  {\"ip\": \"224.0.0.5\", \"mac\": \"02:00:00:00:01:01\"}]}",
	    "2:10: backends[0].ip", "not a unicast address");
	expect_error("{\"backends\": [\n  {\"ip\": \"198.18.1.1\", \"mac\": \"02:00:00:00:01\"}]}",
		     "2:31: backends[0].mac", "not a MAC address");
	expect_error(
	    "{\"backends\": [\n  {\"ip\": \"198.18.1.1\", \"mac\": \"01:00:5e:00:00:01\"}]}",
	    "2:31: backends[0].mac", "not a unicast MAC");
	expect_error("{\"backends\": [" B1 ",\n  " B1 "]}", "2:10: backends[1].ip",
		     "same address as backends[0]");
	expect_error("{\"vip\": \"198.18.1.1\",\n \"backends\": [" B1 "]}",
		     "2:22: backends[0].ip", "same address as the vip");
	expect_error("{\"vip\": \"198.18.1.256\", \"backends\": [" B1 "]}", "1:9: vip",
		     "not an IPv4 address");
	expect_error("{\"vip\": \"0.0.0.0\", \"backends\": [" B1 "]}", "1:9: vip",
		     "not a unicast address");
	expect_error("{\"backends\": [" B1 "],\n \"idle_timeout_ms\": 0}", "2:21: idle_timeout_ms",
		     "expected an integer in 1..86400000");
	expect_error("{\"backends\": [" B1 "],\n \"idle_timeout_ms\": 1.5}",
		     "2:21: idle_timeout_ms", "expected an integer");
	expect_error("{\"backends\": [" B1 "],\n \"flows\": 1000}", "2:11: flows",
		     "expected a power of two");
	expect_error("{\"backends\": [" B1 "],\n \"flows\": 8}", "2:11: flows",
		     "expected an integer in 16..4194304");
}

static void
test_config_rejects_more_than_the_backend_limit(void **state)
{
	size_t cap = 64 * (LB_BACKENDS_MAX + 2), n;
	char *text = malloc(cap);
	struct lb_config c;
	char err[512];

	(void)state;
	assert_non_null(text);
	n = (size_t)snprintf(text, cap, "{\"backends\": [");
	for (int i = 0; i <= LB_BACKENDS_MAX; i++)
		n +=
		    (size_t)snprintf(text + n, cap - n,
				     "%s{\"ip\": \"198.18.%d.%d\", \"mac\": \"02:00:00:00:00:01\"}",
				     i ? "," : "", 1 + i / 250, 1 + i % 250);
	snprintf(text + n, cap - n, "]}");
	assert_int_equal(lb_config_parse(&c, NAME, text, strlen(text), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, NAME ":1:14: backends: expected an array of 1..256"));
	/* One fewer is fine. */
	n = (size_t)(strrchr(text, '{') - text) - 1;
	snprintf(text + n, cap - n, "]}");
	parse_ok(&c, text);
	assert_int_equal(c.n_backends, LB_BACKENDS_MAX);
	free(text);
}

static void
test_config_load_reports_missing_file(void **state)
{
	struct lb_config c;
	char err[512];

	(void)state;
	assert_int_equal(lb_config_load(&c, "/nonexistent/lb.json", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/lb.json"));
}

/* ---- balancing ---------------------------------------------------------------------- */

static void
test_new_flow_gets_the_drawn_backend_and_later_packets_follow_it(void **state)
{
	struct fx *x = *state;
	struct spec s = flow(CLIENT, 40000, 6);

	x->rnd.next = 5; /* 5 % 3 = backend 2 */
	assert_int_equal(send_pkt(x, &s, 1000), 2);
	assert_int_equal(x->rnd.calls, 1);
	for (int i = 0; i < 5; i++)
		assert_int_equal(send_pkt(x, &s, 2000 + i), 2);
	assert_int_equal(x->rnd.calls, 1); /* no draw for an existing flow */
	assert_int_equal(x->lb.t->new_flows, 1);
	assert_int_equal(x->lb.t->balanced, 6);
	assert_int_equal(x->lb.t->backend_flows[2], 1);
	assert_int_equal(x->lb.t->backend_active[2], 1);
	const struct onvm_flow_key k = {.src_ip = CLIENT, .dst_ip = VIP, .sport = 40000,
					.dport = 80, .proto = 6};
	assert_int_equal(lb_lookup(&x->lb, &k)->packets, 6);
}

static void
test_many_interleaved_flows_stick_to_their_backends(void **state)
{
	struct fx *x = *state;
	int want[200];

	x->rnd = (struct fake_rand){.next = 7, .step = 13};
	for (int round = 0; round < 4; round++)
		for (int i = 0; i < 200; i++) {
			struct spec s = flow(CLIENT + (uint32_t)i % 7, (uint16_t)(1000 + i),
					     i % 2 ? 6 : 17);
			int b = send_pkt(x, &s, 1000 + (uint64_t)round);

			if (round == 0)
				want[i] = (int)((7 + 13 * (uint64_t)i) % 3);
			assert_int_equal(b, want[i]);
		}
	assert_int_equal(x->rnd.calls, 200);
	assert_int_equal(lb_flow_count(&x->lb), 200);
	assert_int_equal(x->lb.t->backend_flows[0] + x->lb.t->backend_flows[1] +
				 x->lb.t->backend_flows[2], 200);
}

static void
test_each_direction_and_protocol_is_its_own_flow(void **state)
{
	struct fx *x = *state;
	struct spec tcp = flow(CLIENT, 5000, 6), udp = flow(CLIENT, 5000, 17);
	struct spec icmp = {.src = CLIENT, .dst = VIP, .proto = 1, .payload = 16};

	x->rnd = (struct fake_rand){.next = 0, .step = 1};
	assert_int_equal(send_pkt(x, &tcp, 1), 0);
	assert_int_equal(send_pkt(x, &udp, 1), 1);
	assert_int_equal(send_pkt(x, &icmp, 1), 2); /* ICMP: balanced on addresses */
	assert_int_equal(send_pkt(x, &icmp, 2), 2);
	assert_int_equal(x->rnd.calls, 3);
}

static void
test_vip_mode_passes_traffic_not_for_the_vip(void **state)
{
	struct fx *x = *state;
	struct spec s = flow(CLIENT, 5000, 6);

	s.dst = IP(198, 18, 0, 99);
	assert_int_equal(send_pkt(x, &s, 1), -1);
	assert_int_equal(x->lb.t->passed, 1);
	assert_int_equal(x->rnd.calls, 0);
	assert_int_equal(lb_flow_count(&x->lb), 0);
}

static void
test_reply_from_the_flows_backend_gets_the_vip_as_source(void **state)
{
	struct fx *x = *state;
	struct spec s = flow(CLIENT, 40000, 17), r;
	struct rte_mbuf *m;
	uint8_t before[2048];
	size_t len, l3;

	x->rnd.next = 1;
	assert_int_equal(send_pkt(x, &s, 1), 1);
	r = (struct spec){.src = IP(198, 18, 1, 2), .dst = CLIENT, .sport = 80, .dport = 40000,
			  .proto = 17, .payload = 100};
	m = mbuf_of(&r);
	len = rte_pktmbuf_pkt_len(m);
	l3 = l3_off(data(m));
	memcpy(before, data(m), len);
	assert_int_equal(run(x, m, 500000000), LB_FORWARD);
	assert_int_equal(get32(data(m) + l3 + 12), VIP);
	assert_true(checksums_ok(data(m), len));
	memcpy(data(m) + l3 + 12, before + l3 + 12, 4);
	memcpy(data(m) + l3 + 10, before + l3 + 10, 2);
	memcpy(data(m) + l3 + 26, before + l3 + 26, 2);
	assert_memory_equal(data(m), before, len); /* nothing else changed, MACs included */
	heap_mbuf_free(m);
	assert_int_equal(x->lb.t->replies, 1);
	const struct onvm_flow_key k = {.src_ip = CLIENT, .dst_ip = VIP, .sport = 40000,
					.dport = 80, .proto = 17};
	assert_int_equal(lb_lookup(&x->lb, &k)->replies, 1);
	/* The reply refreshed the flow: it is not idle at 1.4 s (timeout 1 s). */
	x->lb.next_sweep_ns = 0;
	x->lb.sweep_budget = 1024;
	assert_int_equal(lb_maintain(&x->lb, 1400000000), 0);
	assert_int_equal(test_state_commit_check(&x->ts), 0);
	assert_int_equal(lb_flow_count(&x->lb), 1);
}

static void
test_reply_from_another_backend_or_without_flow_passes_unchanged(void **state)
{
	struct fx *x = *state;
	struct spec s = flow(CLIENT, 40000, 6), r;

	x->rnd.next = 1; /* backend 1: 198.18.1.2 */
	assert_int_equal(send_pkt(x, &s, 1), 1);
	r = (struct spec){.src = IP(198, 18, 1, 3), .dst = CLIENT, .sport = 80, .dport = 40000,
			  .proto = 6, .payload = 10};
	assert_int_equal(send_pkt(x, &r, 2), -1); /* wrong backend */
	r.src = IP(198, 18, 1, 2);
	r.dport = 40001;
	assert_int_equal(send_pkt(x, &r, 3), -1); /* no such flow */
	r.dport = 40000;
	r.proto = 17;
	assert_int_equal(send_pkt(x, &r, 4), -1); /* other protocol */
	assert_int_equal(x->lb.t->unmatched_from_backend, 3);
	assert_int_equal(x->lb.t->replies, 0);
}

static void
test_transparent_mode_balances_every_flow_both_directions_apart(void **state)
{
	struct fx *x = *state;
	struct spec a = {.src = IP(10, 0, 0, 1), .dst = IP(93, 1, 2, 3), .sport = 1234,
			 .dport = 443, .proto = 6, .payload = 5};
	struct spec b = {.src = IP(93, 1, 2, 3), .dst = IP(10, 0, 0, 1), .sport = 443,
			 .dport = 1234, .proto = 6, .payload = 5};

	x->rnd = (struct fake_rand){.next = 2, .step = 2};
	assert_int_equal(send_pkt(x, &a, 1), 2);
	assert_int_equal(send_pkt(x, &b, 1), 1); /* the reverse direction: a flow of its own */
	assert_int_equal(send_pkt(x, &a, 2), 2);
	assert_int_equal(send_pkt(x, &b, 2), 1);
	assert_int_equal(x->rnd.calls, 2);
	/* A packet from a backend's address is just another flow here. */
	b.src = IP(198, 18, 1, 1);
	assert_int_equal(send_pkt(x, &b, 3), 0);
	assert_int_equal(x->lb.t->replies, 0);
}

/* ---- checksums ---------------------------------------------------------------------- */

static void
test_udp_without_checksum_keeps_none(void **state)
{
	struct fx *x = *state;
	struct spec s = flow(CLIENT, 7, 17);
	struct rte_mbuf *m;

	s.udp_nocsum = true;
	m = mbuf_of(&s);
	assert_int_equal(run(x, m, 1), LB_FORWARD);
	assert_int_equal(get16(data(m) + 14 + 20 + 6), 0);
	assert_true(checksums_ok(data(m), rte_pktmbuf_pkt_len(m)));
	heap_mbuf_free(m);
}

static void
test_vlan_tagged_frames_are_rewritten_behind_the_tag(void **state)
{
	struct fx *x = *state;
	struct spec s = flow(CLIENT, 9, 6);

	s.vlan = true;
	assert_int_equal(send_pkt(x, &s, 1), 0);
}

/* A frame split over two mbufs (as net_pcap hands long frames over): the
 * TCP checksum covers both segments, whether the second one starts at an
 * even or an odd offset of the TCP segment. */
static void
test_checksum_of_a_two_segment_frame_covers_both(void **state)
{
	struct fx *x = *state;
	const size_t cuts[] = {14 + 20 + 20 + 100, 14 + 20 + 20 + 101, 14 + 20 + 20};

	for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
		struct spec s = flow(CLIENT, (uint16_t)(777 + c), 6);
		uint8_t f[2048], out[2048];
		size_t n, cut = cuts[c], off = 0;
		struct rte_mbuf *m, *m2;

		s.payload = 1200;
		n = build(f, &s);
		m = heap_mbuf(f, cut);
		m2 = heap_mbuf(f + cut, n - cut);
		assert_non_null(m);
		assert_non_null(m2);
		m->next = m2;
		m->nb_segs = 2;
		m->pkt_len = (uint32_t)n;
		x->rnd.next = 1;
		assert_int_equal(run(x, m, 1), LB_FORWARD);
		for (struct rte_mbuf *seg = m; seg != NULL; seg = seg->next) {
			memcpy(out + off, rte_pktmbuf_mtod(seg, uint8_t *), seg->data_len);
			off += seg->data_len;
		}
		assert_int_equal(off, n);
		assert_int_equal(get32(out + 14 + 16), IP(198, 18, 1, 2));
		assert_true(checksums_ok(out, n));
		heap_mbuf_free(m);
	}
}

/* ---- what is not balanced ----------------------------------------------------------- */

static void
test_malformed_frames_are_dropped_and_counted_by_reason(void **state)
{
	struct fx *x = *state;
	struct spec s = flow(CLIENT, 1, 6);
	uint8_t f[256];
	size_t n = build(f, &s);
	struct {
		size_t len;
		void (*damage)(uint8_t *);
		enum onvm_parse_reason r;
	} cases[] = {
		{10, NULL, ONVM_PARSE_TRUNC_L2},
		{14 + 10, NULL, ONVM_PARSE_TRUNC_L3},
		{14 + 20 + 10, NULL, ONVM_PARSE_BAD_TOTLEN},
	};
	uint64_t drops = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rte_mbuf *m = heap_mbuf(f, cases[i].len);

		assert_int_equal(run(x, m, 1), LB_DROP);
		assert_int_equal(x->lb.t->malformed[cases[i].r], 1);
		heap_mbuf_free(m);
		drops++;
	}
	/* Header damage: version, IHL, total length, TCP data offset. */
	uint8_t g[256];
	struct rte_mbuf *m;

	memcpy(g, f, n);
	g[14] = 0x65;
	m = heap_mbuf(g, n);
	assert_int_equal(run(x, m, 1), LB_DROP);
	heap_mbuf_free(m);
	memcpy(g, f, n);
	g[14] = 0x44;
	m = heap_mbuf(g, n);
	assert_int_equal(run(x, m, 1), LB_DROP);
	heap_mbuf_free(m);
	memcpy(g, f, n);
	put16(g + 14 + 2, 19);
	m = heap_mbuf(g, n);
	assert_int_equal(run(x, m, 1), LB_DROP);
	heap_mbuf_free(m);
	memcpy(g, f, n);
	g[14 + 20 + 12] = 0x40;
	m = heap_mbuf(g, n);
	assert_int_equal(run(x, m, 1), LB_DROP);
	heap_mbuf_free(m);
	memcpy(g, f, n);
	put16(g + 14 + 2, 20 + 10); /* TCP header cut by the IP length */
	m = heap_mbuf(g, n);
	assert_int_equal(run(x, m, 1), LB_DROP);
	heap_mbuf_free(m);
	assert_int_equal(x->lb.t->malformed[ONVM_PARSE_BAD_VERSION], 1);
	assert_int_equal(x->lb.t->malformed[ONVM_PARSE_BAD_IHL], 1);
	assert_int_equal(x->lb.t->malformed[ONVM_PARSE_BAD_TOTLEN], 2);
	assert_int_equal(x->lb.t->malformed[ONVM_PARSE_BAD_L4LEN], 1);
	assert_int_equal(x->lb.t->malformed[ONVM_PARSE_TRUNC_L4], 1);
	assert_int_equal(x->lb.t->packets, drops + 5);
	assert_int_equal(x->rnd.calls, 0);
	assert_int_equal(lb_flow_count(&x->lb), 0);
}

static void
test_non_ipv4_passes_unchanged_and_is_counted(void **state)
{
	struct fx *x = *state;
	uint8_t arp[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06};
	struct rte_mbuf *m = heap_mbuf(arp, sizeof(arp));

	assert_int_equal(run(x, m, 1), LB_FORWARD);
	assert_memory_equal(data(m), arp, sizeof(arp));
	assert_int_equal(x->lb.t->non_ip, 1);
	heap_mbuf_free(m);
}

static void
test_fragments_for_the_vip_are_dropped_others_pass(void **state)
{
	struct fx *x = *state;
	struct spec first = flow(CLIENT, 53, 17), later = flow(CLIENT, 53, 17);

	first.frag = 0x2000; /* MF, offset 0: ports present, but not the whole datagram */
	later.frag = 0x0010; /* offset 128 */
	assert_int_equal(send_pkt(x, &first, 1), -2);
	assert_int_equal(send_pkt(x, &later, 1), -2);
	assert_int_equal(x->lb.t->fragments, 2);
	later.dst = IP(198, 18, 0, 7);
	assert_int_equal(send_pkt(x, &later, 1), -1);
	assert_int_equal(x->rnd.calls, 0);
	/* DF alone is no fragment. */
	first.frag = 0x4000;
	assert_int_equal(send_pkt(x, &first, 1), 0);
}

/* ---- table -------------------------------------------------------------------------- */

static void
test_idle_flows_expire_and_then_draw_a_new_backend(void **state)
{
	struct fx *x = *state;
	struct spec old = flow(CLIENT, 1111, 6), busy = flow(CLIENT, 2222, 6);
	const uint64_t s = 1000000000ULL;

	x->rnd = (struct fake_rand){.next = 0, .step = 1};
	assert_int_equal(send_pkt(x, &old, 0), 0);
	assert_int_equal(send_pkt(x, &busy, 0), 1);
	assert_int_equal(send_pkt(x, &busy, s / 2), 1);
	/* 0.9 s: nothing idle for 1 s yet. */
	assert_int_equal(lb_maintain(&x->lb, 9 * s / 10), 0);
	/* lb_maintain runs a step once per sweep period (100 ms). */
	assert_int_equal(lb_maintain(&x->lb, 9 * s / 10 + 1), 0);
	x->lb.sweep_budget = 1024; /* one step sweeps all */
	assert_int_equal(lb_maintain(&x->lb, s + s / 10), 1);
	assert_int_equal(test_state_commit_check(&x->ts), 0);
	assert_int_equal(lb_flow_count(&x->lb), 1);
	assert_int_equal(x->lb.t->backend_active[0], 0);
	assert_int_equal(x->lb.t->backend_active[1], 1);
	assert_int_equal(onvm_ft_stats(&x->lb.ft)->expired, 1);
	/* The expired flow is new again: a second draw (2 -> backend 2). */
	assert_int_equal(send_pkt(x, &old, s + s / 5), 2);
	assert_int_equal(send_pkt(x, &busy, s + s / 5), 1);
	assert_int_equal(x->rnd.calls, 3);
	assert_int_equal(x->lb.t->backend_flows[0], 1);
	assert_int_equal(x->lb.t->backend_flows[2], 1);
}

static void
test_sweep_is_incremental_within_its_budget(void **state)
{
	struct fx *x = *state;
	const uint64_t s = 1000000000ULL;
	uint32_t total = 0, steps = 0;

	for (int i = 0; i < 300; i++) {
		struct spec f = flow(CLIENT, (uint16_t)(100 + i), 17);

		assert_true(send_pkt(x, &f, 0) >= 0);
	}
	assert_int_equal(x->lb.sweep_budget, 204); /* 1024 slots * 100 ms * 2 / 1000 ms */
	for (uint64_t now = 2 * s; total < 300; now += s / 10, steps++) {
		uint32_t got = lb_maintain(&x->lb, now);

		assert_true(got <= x->lb.sweep_budget);
		assert_int_equal(test_state_commit_check(&x->ts), 0);
		total += got;
		assert_true(steps < 20);
	}
	assert_true(steps >= 2); /* 1024 slots at 204 a step: not in one go */
	assert_int_equal(lb_flow_count(&x->lb), 0);
}

static void
test_full_table_drops_new_flows_without_a_draw(void **state)
{
	struct fx *x = *state;
	const uint32_t limit = 1024 - 1024 / 4;

	for (uint32_t i = 0; i < limit; i++) {
		struct spec f = flow(CLIENT + i / 1000, (uint16_t)(1 + i % 1000), 6);

		assert_true(send_pkt(x, &f, 0) >= 0);
	}
	struct spec extra = flow(IP(198, 19, 9, 9), 1, 6), known = flow(CLIENT, 1, 6);

	assert_int_equal(send_pkt(x, &extra, 0), -2);
	assert_int_equal(x->lb.t->table_full, 1);
	assert_int_equal(x->rnd.calls, limit);
	assert_true(send_pkt(x, &known, 0) >= 0); /* known flows still go through */
}

/* ---- failover ----------------------------------------------------------------------- */

static void
test_failover_keeps_every_mapping_although_the_draws_now_differ(void **state)
{
	struct fx *x = *state;
	int want[60];

	x->rnd = (struct fake_rand){.next = 0, .step = 1};
	for (int i = 0; i < 60; i++) {
		struct spec f = flow(CLIENT, (uint16_t)(2000 + i), 6);

		want[i] = send_pkt(x, &f, 10);
		assert_int_equal(want[i], i % 3);
	}
	/* The standby: a new handle on the same block, a reopened balancer,
	 * and a generator that would now pick backend (i+1) % 3 for flow i. */
	assert_int_equal(test_state_failover(&x->ts), 0);
	memset(&x->lb, 0xa5, sizeof(x->lb));
	x->rnd = (struct fake_rand){.next = 1, .step = 1};
	open_lb(x);
	assert_int_equal(lb_flow_count(&x->lb), 60);
	for (int i = 59; i >= 0; i--) {
		struct spec f = flow(CLIENT, (uint16_t)(2000 + i), 6);

		assert_int_equal(send_pkt(x, &f, 20), want[i]);
	}
	assert_int_equal(x->rnd.calls, 0);
	assert_int_equal(x->lb.t->new_flows, 60);
	assert_int_equal(x->lb.t->balanced, 120);
	/* New flows after the failover draw as usual. */
	struct spec f = flow(CLIENT, 3000, 6);

	assert_int_equal(send_pkt(x, &f, 30), 1);
	assert_int_equal(x->rnd.calls, 1);
}

static void
test_failover_rolls_back_a_flow_whose_batch_did_not_commit(void **state)
{
	struct fx *x = *state;
	struct spec a = flow(CLIENT, 1, 6), b = flow(CLIENT, 2, 6);
	struct rte_mbuf *m = mbuf_of(&b);

	x->rnd = (struct fake_rand){.next = 0, .step = 1};
	assert_int_equal(send_pkt(x, &a, 1), 0);
	/* b's packet is handled but the NF dies before the batch commits:
	 * the packet never left, and the standby must not know the flow. */
	assert_int_equal(lb_packet(&x->lb, m, 2), LB_FORWARD);
	heap_mbuf_free(m);
	assert_int_equal(lb_flow_count(&x->lb), 2);
	assert_int_equal(test_state_failover(&x->ts), 0);
	x->rnd = (struct fake_rand){.next = 2, .step = 1};
	open_lb(x);
	assert_int_equal(lb_flow_count(&x->lb), 1);
	assert_int_equal(x->lb.t->packets, 1);
	assert_int_equal(send_pkt(x, &a, 3), 0);
	assert_int_equal(send_pkt(x, &b, 3), 2); /* drawn afresh */
}

static void
test_reopen_with_another_backend_list_is_refused(void **state)
{
	struct fx *x = *state;
	struct spec a = flow(CLIENT, 1, 6);
	void *regions[LB_REGIONS] = {test_state_region(&x->ts, "lb"),
				     test_state_region(&x->ts, "lb_flows")};
	struct lb other;

	assert_int_equal(send_pkt(x, &a, 1), 0);
	x->cfg.backends[1].ip = IP(198, 18, 1, 9);
	assert_int_equal(lb_open(&other, &x->cfg, &x->ts.set, regions, fake_rand, &x->rnd, 100,
				 x->err, sizeof(x->err)),
			 -EBADMSG);
	assert_non_null(strstr(x->err, "another config"));
}

/* ---- export ------------------------------------------------------------------------- */

static void
test_export_lists_every_flow_with_its_backend(void **state)
{
	struct fx *x = *state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_error_t je;
	json_t *doc, *flows;
	size_t i;
	json_t *v;

	x->rnd = (struct fake_rand){.next = 0, .step = 1};
	for (int k = 0; k < 5; k++) {
		struct spec s = flow(CLIENT, (uint16_t)(100 + k), 17);

		assert_int_equal(send_pkt(x, &s, 1), k % 3);
		assert_int_equal(send_pkt(x, &s, 1), k % 3);
	}
	assert_non_null(f);
	assert_int_equal(lb_export_json(&x->lb, f), 0);
	fclose(f);
	doc = json_loads(buf, 0, &je);
	if (doc == NULL)
		fail_msg("export is not JSON: %s at %d:%d\n%s", je.text, je.line, je.column, buf);
	assert_string_equal(json_string_value(json_object_get(doc, "mode")), "vip");
	assert_string_equal(json_string_value(json_object_get(doc, "vip")), "198.18.0.100");
	assert_int_equal(json_integer_value(json_object_get(doc, "packets")), 10);
	assert_int_equal(json_integer_value(json_object_get(doc, "new_flows")), 5);
	assert_int_equal(json_array_size(json_object_get(doc, "backends")), 3);
	assert_int_equal(json_integer_value(json_object_get(
				 json_array_get(json_object_get(doc, "backends"), 0), "flows")),
			 2);
	flows = json_object_get(doc, "flows");
	assert_int_equal(json_array_size(flows), 5);
	json_array_foreach(flows, i, v) {
		int sport = (int)json_integer_value(json_object_get(v, "sport"));
		int b = (sport - 100) % 3;
		char ip[32];

		snprintf(ip, sizeof(ip), "198.18.1.%d", b + 1);
		assert_string_equal(json_string_value(json_object_get(v, "src")), "198.19.0.1");
		assert_string_equal(json_string_value(json_object_get(v, "dst")), "198.18.0.100");
		assert_int_equal(json_integer_value(json_object_get(v, "dport")), 80);
		assert_int_equal(json_integer_value(json_object_get(v, "proto")), 17);
		assert_int_equal(json_integer_value(json_object_get(v, "backend")), b);
		assert_string_equal(json_string_value(json_object_get(v, "backend_ip")), ip);
		assert_int_equal(json_integer_value(json_object_get(v, "packets")), 2);
	}
	json_decref(doc);
	free(buf);
}

#define V(f)  cmocka_unit_test_setup_teardown(f, setup_vip, teardown)
#define TR(f) cmocka_unit_test_setup_teardown(f, setup_transparent, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_vip_mode_values),
		cmocka_unit_test(test_config_without_vip_is_transparent_with_defaults),
		cmocka_unit_test(test_config_errors_name_line_column_and_field),
		cmocka_unit_test(test_config_rejects_more_than_the_backend_limit),
		cmocka_unit_test(test_config_load_reports_missing_file),
		V(test_new_flow_gets_the_drawn_backend_and_later_packets_follow_it),
		V(test_many_interleaved_flows_stick_to_their_backends),
		V(test_each_direction_and_protocol_is_its_own_flow),
		V(test_vip_mode_passes_traffic_not_for_the_vip),
		V(test_reply_from_the_flows_backend_gets_the_vip_as_source),
		V(test_reply_from_another_backend_or_without_flow_passes_unchanged),
		TR(test_transparent_mode_balances_every_flow_both_directions_apart),
		V(test_udp_without_checksum_keeps_none),
		V(test_vlan_tagged_frames_are_rewritten_behind_the_tag),
		V(test_checksum_of_a_two_segment_frame_covers_both),
		V(test_malformed_frames_are_dropped_and_counted_by_reason),
		V(test_non_ipv4_passes_unchanged_and_is_counted),
		V(test_fragments_for_the_vip_are_dropped_others_pass),
		V(test_idle_flows_expire_and_then_draw_a_new_backend),
		V(test_sweep_is_incremental_within_its_budget),
		V(test_full_table_drops_new_flows_without_a_draw),
		V(test_failover_keeps_every_mapping_although_the_draws_now_differ),
		V(test_failover_rolls_back_a_flow_whose_batch_did_not_commit),
		V(test_reopen_with_another_backend_list_is_refused),
		V(test_export_lists_every_flow_with_its_backend),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
