/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_vlan_tagger.c -- unit tests for the vlan_tagger NF's logic
 * (nfs/vlan_tagger/vlan_tagger_core.c): policy parsing and its rejections
 * (with file:line:col), first-match classification, the 802.1Q insert and
 * outer-tag rewrite byte by byte, the per-flow tag table in state (every
 * packet commit-checked: no write without a touch), malformed frames,
 * expiry, failover and the JSON export.
 *
 * Frames are built by hand in heap mbufs with headroom (the node's pool has
 * RTE_PKTMBUF_HEADROOM in front of every frame; heap_mbuf.h has none).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "test_state.h"
#include "vlan_tagger_core.h"

#define A(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/* ---- frames -------------------------------------------------------------------- */

static const uint8_t DST_MAC[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t SRC_MAC[6] = {0x02, 0, 0, 0, 0, 0x01};

/* One segment with `headroom` bytes in front of a copy of bytes[0..len). */
static struct rte_mbuf *
hr_mbuf(const uint8_t *bytes, size_t len, uint16_t headroom)
{
	struct rte_mbuf *m = aligned_alloc(64, RTE_ALIGN_CEIL(sizeof(*m), 64));
	uint8_t *buf = malloc(headroom + len + 1);

	assert_non_null(m);
	assert_non_null(buf);
	memset(m, 0, sizeof(*m));
	memcpy(buf + headroom, bytes, len);
	m->buf_addr = buf;
	m->buf_len = (uint16_t)(headroom + len);
	m->data_off = headroom;
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	m->nb_segs = 1;
	m->refcnt = 1;
	return m;
}

static void
mbuf_free(struct rte_mbuf *m)
{
	while (m != NULL) {
		struct rte_mbuf *next = m->next;

		free(m->buf_addr);
		free(m);
		m = next;
	}
}

static const uint8_t *
mbuf_bytes(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod(m, const uint8_t *);
}

static size_t
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return 2;
}

static size_t
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
	return 4;
}

struct frame_spec {
	uint32_t src, dst;
	uint8_t proto; /* 6, 17, 1 */
	uint16_t sport, dport;
	uint16_t tags[2][2]; /* up to two tags: {tpid, tci} */
	int ntags;
	size_t payload;
};

/* Ethernet [+ tags] + IPv4 + TCP/UDP/ICMP header + payload; returns the length. */
static size_t
build(uint8_t *f, const struct frame_spec *s)
{
	size_t o = 0, ip, l4len = s->proto == 6 ? 20 : 8;

	memcpy(f, DST_MAC, 6);
	memcpy(f + 6, SRC_MAC, 6);
	o = 12;
	for (int i = 0; i < s->ntags; i++) {
		o += put16(f + o, s->tags[i][0]);
		o += put16(f + o, s->tags[i][1]);
	}
	o += put16(f + o, 0x0800);
	ip = o;
	memset(f + ip, 0, 20);
	f[ip] = 0x45;
	put16(f + ip + 2, (uint16_t)(20 + l4len + s->payload));
	f[ip + 8] = 64;
	f[ip + 9] = s->proto;
	put32(f + ip + 12, s->src);
	put32(f + ip + 16, s->dst);
	o = ip + 20;
	memset(f + o, 0, l4len);
	if (s->proto == 6 || s->proto == 17) {
		put16(f + o, s->sport);
		put16(f + o + 2, s->dport);
	}
	if (s->proto == 6)
		f[o + 12] = 0x50;
	if (s->proto == 17)
		put16(f + o + 4, (uint16_t)(8 + s->payload));
	o += l4len;
	for (size_t i = 0; i < s->payload; i++)
		f[o++] = (uint8_t)(i * 7);
	return o;
}

static struct rte_mbuf *
frame(const struct frame_spec *s)
{
	uint8_t f[2048];

	return hr_mbuf(f, build(f, s), 128);
}

static struct frame_spec
tcp(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport)
{
	return (struct frame_spec){.src = src, .dst = dst, .proto = 6, .sport = sport,
				   .dport = dport, .payload = 10};
}

/* ---- fixture ------------------------------------------------------------------- */

struct fx {
	struct vt_policy pol;
	struct test_state ts;
	struct vt_tagger t;
	uint64_t now;
};

static void
fx_commit_ok(struct fx *f)
{
	assert_int_equal(test_state_commit_check(&f->ts), 0);
}

static void
fx_open(struct fx *f)
{
	char err[512] = "";

	assert_int_equal(vt_open(&f->t, &f->pol, &f->ts.set, test_state_region(&f->ts, "flows"),
				 vt_flows_size(&f->pol), test_state_region(&f->ts, "counters"),
				 vt_counters_size(&f->pol), err, sizeof(err)),
			 0);
}

static void
fx_init(struct fx *f, const char *policy)
{
	char err[512] = "";
	struct nf_state_request reqs[2];

	memset(f, 0, sizeof(*f));
	if (vt_policy_load_text(&f->pol, "policy.json", policy, err, sizeof(err)) != 0)
		fail_msg("policy: %s", err);
	reqs[0] = (struct nf_state_request){"flows", vt_flows_size(&f->pol), 256};
	reqs[1] = (struct nf_state_request){"counters", vt_counters_size(&f->pol), 64};
	assert_int_equal(test_state_init(&f->ts, reqs, 2), 0);
	fx_open(f);
	fx_commit_ok(f);
	f->now = 1000000000ull;
}

static void
fx_fini(struct fx *f)
{
	test_state_fini(&f->ts);
}

/* Run one frame through the tagger (commit-checked); returns the verdict. */
static enum vt_verdict
run(struct fx *f, struct rte_mbuf *m)
{
	enum vt_verdict v = vt_packet(&f->t, m, f->now);

	fx_commit_ok(f);
	return v;
}

/* Tag of a frame after tagging: {tpid, tci} of the outer tag. */
static void
outer_tag(struct rte_mbuf *m, uint16_t *tpid, uint16_t *tci)
{
	const uint8_t *p = mbuf_bytes(m);

	*tpid = (uint16_t)(p[12] << 8 | p[13]);
	*tci = (uint16_t)(p[14] << 8 | p[15]);
}

/* The frame `want` with a tag (vlan, pcp) inserted after the source MAC. */
static void
assert_inserted(struct rte_mbuf *m, const uint8_t *orig, size_t len, uint16_t vlan, uint8_t pcp)
{
	const uint8_t *p = mbuf_bytes(m);

	assert_int_equal(rte_pktmbuf_pkt_len(m), len + 4);
	assert_int_equal(rte_pktmbuf_data_len(m), len + 4);
	assert_memory_equal(p, orig, 12);
	assert_int_equal(p[12], 0x81);
	assert_int_equal(p[13], 0x00);
	assert_int_equal((p[14] << 8 | p[15]), pcp << 13 | vlan);
	assert_memory_equal(p + 16, orig + 12, len - 12);
}

static const char *POLICY =
    "{\n"
    "  \"default\": {\"vlan\": 10, \"pcp\": 1},\n"
    "  \"rules\": [\n"
    "    {\"src\": \"198.18.1.0/24\", \"proto\": \"tcp\", \"dport\": 80, \"vlan\": 100, \"pcp\": 5},\n"
    "    {\"src\": \"198.18.1.0/24\", \"vlan\": 101},\n"
    "    {\"dst\": \"198.19.0.0/16\", \"proto\": \"udp\", \"sport\": [1000, 1999], \"vlan\": 200},\n"
    "    {\"proto\": \"icmp\", \"vlan\": 300, \"pcp\": 7},\n"
    "    {\"proto\": 47, \"vlan\": 4094}\n"
    "  ],\n"
    "  \"idle_timeout_ms\": 1000,\n"
    "  \"flows\": 16\n"
    "}\n";

/* ---- policy ---------------------------------------------------------------------- */

static void
test_policy_parses_every_field(void **state)
{
	struct vt_policy p;
	char err[512] = "";

	(void)state;
	assert_int_equal(vt_policy_load_text(&p, "p.json", POLICY, err, sizeof(err)), 0);
	assert_int_equal(p.def_vlan, 10);
	assert_int_equal(p.def_pcp, 1);
	assert_int_equal(p.n_rules, 5);
	assert_int_equal(p.flows, 16);
	assert_int_equal(p.idle_timeout_ms, 1000);
	assert_int_equal(p.rules[0].src, A(198, 18, 1, 0));
	assert_int_equal(p.rules[0].src_mask, 0xffffff00u);
	assert_int_equal(p.rules[0].dst_mask, 0);
	assert_int_equal(p.rules[0].proto, 6);
	assert_int_equal(p.rules[0].dport_lo, 80);
	assert_int_equal(p.rules[0].dport_hi, 80);
	assert_int_equal(p.rules[0].sport_lo, 0);
	assert_int_equal(p.rules[0].sport_hi, 65535);
	assert_int_equal(p.rules[0].vlan, 100);
	assert_int_equal(p.rules[0].pcp, 5);
	assert_int_equal(p.rules[1].proto, -1);
	assert_int_equal(p.rules[1].pcp, 0);
	assert_int_equal(p.rules[2].dst, A(198, 19, 0, 0));
	assert_int_equal(p.rules[2].sport_lo, 1000);
	assert_int_equal(p.rules[2].sport_hi, 1999);
	assert_int_equal(p.rules[3].proto, 1);
	assert_int_equal(p.rules[4].proto, 47);
	assert_int_equal(p.rules[4].vlan, 4094);
}

static void
test_policy_defaults(void **state)
{
	struct vt_policy p;
	char err[512] = "";

	(void)state;
	assert_int_equal(vt_policy_load_text(&p, "p.json", "{}", err, sizeof(err)), 0);
	assert_int_equal(p.def_vlan, 0);
	assert_int_equal(p.def_pcp, 0);
	assert_int_equal(p.n_rules, 0);
	assert_int_equal(p.flows, VT_FLOWS_DEFAULT);
	assert_int_equal(p.idle_timeout_ms, VT_IDLE_MS_DEFAULT);
	/* A bare address is a /32. */
	assert_int_equal(vt_policy_load_text(&p, "p.json",
					     "{\"rules\": [{\"dst\": \"198.18.0.9\", \"vlan\": 5}]}",
					     err, sizeof(err)),
			 0);
	assert_int_equal(p.rules[0].dst_mask, 0xffffffffu);
}

/* Each bad policy with the exact message it must give. */
static void
test_policy_rejections_name_file_line_column_and_field(void **state)
{
	static const struct {
		const char *text;
		const char *want;
	} cases[] = {
	    {"{\"defualt\": {}}", "p.json:1:13: defualt: unknown field"},
	    {"{\"default\": {\"vlan\": 4095}}", "p.json:1:22: default.vlan: expected an integer in 0..4094"},
	    {"{\"default\": {\"vlan\": 1, \"pcp\": 8}}", "p.json:1:32: default.pcp: expected an integer in 0..7"},
	    {"{\"default\": {\"pcp\": 3}}", "p.json:1:13: default.vlan: required field missing"},
	    {"{\"default\": {\"vlan\": 0, \"pcp\": 3}}",
	     "p.json:1:32: default.pcp: a priority needs a VLAN (vlan 0 leaves frames as they are)"},
	    {"{\"default\": 5}", "p.json:1:13: default: expected an object"},
	    {"{\"rules\": {}}", "p.json:1:11: rules: expected an array of rules"},
	    {"{\"rules\": [{\"vlan\": 1, \"port\": 80}]}", "p.json:1:32: rules[0].port: unknown field"},
	    {"{\"rules\": [{\"vlan\": 0}]}", "p.json:1:21: rules[0].vlan: expected an integer in 1..4094"},
	    {"{\"rules\": [{\"pcp\": 1}]}", "p.json:1:12: rules[0].vlan: required field missing"},
	    {"{\"rules\": [{\"vlan\": 1},\n {\"src\": \"198.18.0.1/8\", \"vlan\": 2}]}",
	     "p.json:2:10: rules[1].src: \"198.18.0.1/8\" has host bits set (the network is 198.0.0.0/8)"},
	    {"{\"rules\": [{\"dst\": \"fe80::1\", \"vlan\": 2}]}",
	     "p.json:1:20: rules[0].dst: \"fe80::1\" is not an IPv4 prefix a.b.c.d/n: unexpected 'f' in octet 1"},
	    {"{\"rules\": [{\"dst\": 5, \"vlan\": 2}]}",
	     "p.json:1:20: rules[0].dst: expected an IPv4 prefix string \"a.b.c.d/n\", got an integer"},
	    {"{\"rules\": [{\"proto\": \"sctp\", \"vlan\": 2}]}",
	     "p.json:1:22: rules[0].proto: unknown protocol \"sctp\": expected \"tcp\", \"udp\", \"icmp\", \"any\" or a number 1..255"},
	    {"{\"rules\": [{\"proto\": 256, \"vlan\": 2}]}",
	     "p.json:1:22: rules[0].proto: protocol 256 is out of range 1..255"},
	    {"{\"rules\": [{\"proto\": \"tcp\", \"sport\": 70000, \"vlan\": 2}]}",
	     "p.json:1:38: rules[0].sport: port 70000 is out of range 0..65535"},
	    {"{\"rules\": [{\"proto\": \"udp\", \"dport\": [10, 5], \"vlan\": 2}]}",
	     "p.json:1:38: rules[0].dport: range [10, 5] is empty (lo > hi)"},
	    {"{\"rules\": [{\"proto\": \"udp\", \"dport\": [1, 2, 3], \"vlan\": 2}]}",
	     "p.json:1:38: rules[0].dport: expected a range [lo, hi] of 2 ports, got an array of 3"},
	    {"{\"rules\": [{\"proto\": \"udp\", \"dport\": \"80\", \"vlan\": 2}]}",
	     "p.json:1:38: rules[0].dport: \"80\" is a string: a port is a number 0..65535 and a range an inclusive array [lo, hi] (write 80)"},
	    {"{\"rules\": [{\"proto\": \"udp\", \"dport\": [1, 65536], \"vlan\": 2}]}",
	     "p.json:1:42: rules[0].dport[1]: port 65536 is out of range 0..65535"},
	    {"{\"rules\": [{\"dport\": 53, \"vlan\": 2}]}",
	     "p.json:1:22: rules[0].dport: ports need \"proto\": \"tcp\" or \"udp\" in the same rule (other packets have none)"},
	    {"{\"rules\": [{\"proto\": \"icmp\", \"sport\": 1, \"vlan\": 2}]}",
	     "p.json:1:39: rules[0].sport: ports need \"proto\": \"tcp\" or \"udp\" in the same rule (other packets have none)"},
	    {"{\"rules\": [7]}", "p.json:1:12: rules[0]: expected an object"},
	    {"{\"flows\": 1000}", "p.json:1:11: flows: 1000 is not a power of two"},
	    {"{\"flows\": 8}", "p.json:1:11: flows: expected an integer in 16..4194304"},
	    {"{\"idle_timeout_ms\": -1}", "p.json:1:21: idle_timeout_ms: expected an integer in 0..4294967295"},
	    {"{\"idle_timeout_ms\": 1.5}", "p.json:1:21: idle_timeout_ms: expected an integer in 0..4294967295"},
	    {"{\"rules\": [}", "p.json:1:12: unexpected token near '}'"},
	    {"[]", "p.json:1:1: (top level): expected an object"},
	};
	struct vt_policy p;
	char err[512];
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (vt_policy_load_text(&p, "p.json", cases[i].text, err, sizeof(err)) != -EINVAL ||
		    strcmp(err, cases[i].want) != 0) {
			print_error("case %zu: %s\n  got:  %s\n  want: %s\n", i, cases[i].text, err,
				    cases[i].want);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

static void
test_policy_rejects_too_many_rules(void **state)
{
	size_t cap = 32 + (VT_RULES_MAX + 1) * 16;
	char *text = malloc(cap), err[512] = "";
	struct vt_policy p;
	size_t o = 0;

	(void)state;
	assert_non_null(text);
	o += (size_t)snprintf(text + o, cap - o, "{\"rules\": [");
	for (int i = 0; i <= VT_RULES_MAX; i++)
		o += (size_t)snprintf(text + o, cap - o, "%s{\"vlan\": 1}", i ? "," : "");
	snprintf(text + o, cap - o, "]}");
	assert_int_equal(vt_policy_load_text(&p, "p.json", text, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "p.json:1:11: rules: 1025 rules, at most 1024");
	free(text);
}

static void
test_policy_file_errors(void **state)
{
	struct vt_policy p;
	char err[512] = "";

	(void)state;
	assert_int_equal(vt_policy_load_file(&p, "/nonexistent/policy.json", err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/policy.json"));
}

static void
test_first_matching_rule_decides(void **state)
{
	struct vt_policy p;
	char err[512] = "";
	struct onvm_flow_key k = {0};

	(void)state;
	assert_int_equal(vt_policy_load_text(&p, "p.json", POLICY, err, sizeof(err)), 0);
	k = (struct onvm_flow_key){A(198, 18, 1, 7), A(198, 19, 0, 1), 1234, 80, 6, {0}};
	assert_int_equal(vt_policy_match(&p, &k), 0);
	k.dport = 81; /* rule 0 needs port 80: rule 1 (same source) */
	assert_int_equal(vt_policy_match(&p, &k), 1);
	k.proto = 17;
	k.dport = 80;
	assert_int_equal(vt_policy_match(&p, &k), 1); /* rule 0 is tcp only */
	k.src_ip = A(198, 18, 2, 7);		      /* outside 198.18.1.0/24 */
	k.sport = 999;
	assert_int_equal(vt_policy_match(&p, &k), -1); /* below rule 2's range */
	k.sport = 1000;
	assert_int_equal(vt_policy_match(&p, &k), 2);
	k.sport = 1999;
	assert_int_equal(vt_policy_match(&p, &k), 2);
	k.sport = 2000;
	assert_int_equal(vt_policy_match(&p, &k), -1);
	k.sport = 1500;
	k.dst_ip = A(198, 20, 0, 1); /* outside 198.19.0.0/16 */
	assert_int_equal(vt_policy_match(&p, &k), -1);
	k.proto = 1;
	k.sport = k.dport = 0;
	assert_int_equal(vt_policy_match(&p, &k), 3);
	k.proto = 47;
	assert_int_equal(vt_policy_match(&p, &k), 4);
	k.proto = 50;
	assert_int_equal(vt_policy_match(&p, &k), -1);
}

static void
test_policy_digest_tells_policies_apart(void **state)
{
	struct vt_policy a, b;
	char err[512] = "";

	(void)state;
	assert_int_equal(vt_policy_load_text(&a, "a", POLICY, err, sizeof(err)), 0);
	assert_int_equal(vt_policy_load_text(&b, "b", POLICY, err, sizeof(err)), 0);
	assert_true(vt_policy_digest(&a) == vt_policy_digest(&b));
	b.rules[2].sport_hi++;
	assert_true(vt_policy_digest(&a) != vt_policy_digest(&b));
	b = a;
	b.def_pcp = 2;
	assert_true(vt_policy_digest(&a) != vt_policy_digest(&b));
	b = a;
	b.n_rules--;
	assert_true(vt_policy_digest(&a) != vt_policy_digest(&b));
}

/* ---- tagging --------------------------------------------------------------------- */

static void
test_untagged_frame_gets_a_tag_after_the_source_mac(void **state)
{
	struct frame_spec s = tcp(A(198, 18, 1, 7), A(198, 19, 0, 1), 1234, 80);
	uint8_t orig[2048];
	size_t len = build(orig, &s);
	struct rte_mbuf *m = hr_mbuf(orig, len, 128);
	struct fx f;

	(void)state;
	fx_init(&f, POLICY);
	m->ol_flags = RTE_MBUF_F_TX_VLAN;
	assert_int_equal(run(&f, m), VT_PASS);
	assert_inserted(m, orig, len, 100, 5);
	assert_int_equal(m->data_off, 124);
	assert_int_equal(m->ol_flags & RTE_MBUF_F_TX_VLAN, 0);
	assert_int_equal(f.t.c->inserted, 1);
	assert_int_equal(f.t.c->packets, 1);
	assert_int_equal(f.t.c->bytes, len);
	mbuf_free(m);
	fx_fini(&f);
}

static void
test_tagged_frame_gets_its_outer_tag_rewritten(void **state)
{
	struct frame_spec s = tcp(A(198, 18, 1, 7), A(198, 19, 0, 1), 1234, 80);
	uint8_t orig[2048];
	size_t len;
	struct rte_mbuf *m;
	uint16_t tpid, tci;
	struct fx f;

	(void)state;
	fx_init(&f, POLICY);
	/* One 802.1Q tag, VID 7, PCP 2, DEI set: the DEI bit stays. */
	s.ntags = 1;
	s.tags[0][0] = 0x8100;
	s.tags[0][1] = 2 << 13 | 1 << 12 | 7;
	len = build(orig, &s);
	m = hr_mbuf(orig, len, 128);
	assert_int_equal(run(&f, m), VT_PASS);
	assert_int_equal(rte_pktmbuf_pkt_len(m), len);
	outer_tag(m, &tpid, &tci);
	assert_int_equal(tpid, 0x8100);
	assert_int_equal(tci, 5 << 13 | 1 << 12 | 100);
	assert_memory_equal(mbuf_bytes(m), orig, 14);
	assert_memory_equal(mbuf_bytes(m) + 16, orig + 16, len - 16);
	mbuf_free(m);
	/* QinQ: the outer (0x88a8) tag is rewritten, the inner one kept. */
	s.ntags = 2;
	s.tags[0][0] = 0x88a8;
	s.tags[0][1] = 33;
	s.tags[1][0] = 0x8100;
	s.tags[1][1] = 3 << 13 | 44;
	s.sport = 4321; /* another flow, same rule */
	len = build(orig, &s);
	m = hr_mbuf(orig, len, 0); /* no headroom needed for a rewrite */
	assert_int_equal(run(&f, m), VT_PASS);
	outer_tag(m, &tpid, &tci);
	assert_int_equal(tpid, 0x88a8);
	assert_int_equal(tci, 5 << 13 | 100);
	assert_memory_equal(mbuf_bytes(m) + 16, orig + 16, len - 16);
	assert_int_equal(f.t.c->rewritten, 2);
	assert_int_equal(f.t.c->inserted, 0);
	mbuf_free(m);
	fx_fini(&f);
}

static void
test_default_vlan_zero_leaves_frames_as_they_are(void **state)
{
	struct frame_spec s = tcp(A(198, 18, 9, 9), A(198, 19, 0, 1), 1234, 22);
	uint8_t orig[2048];
	size_t len = build(orig, &s);
	struct rte_mbuf *m = hr_mbuf(orig, len, 128);
	struct fx f;

	(void)state;
	fx_init(&f, "{\"rules\": [{\"src\": \"198.18.1.0/24\", \"vlan\": 5}]}");
	assert_int_equal(run(&f, m), VT_PASS);
	assert_int_equal(rte_pktmbuf_pkt_len(m), len);
	assert_memory_equal(mbuf_bytes(m), orig, len);
	mbuf_free(m);
	s.ntags = 1;
	s.tags[0][0] = 0x8100;
	s.tags[0][1] = 77;
	len = build(orig, &s);
	m = hr_mbuf(orig, len, 128);
	assert_int_equal(run(&f, m), VT_PASS);
	assert_memory_equal(mbuf_bytes(m), orig, len);
	assert_int_equal(f.t.c->unchanged, 2);
	assert_int_equal(f.t.c->rule[1].packets, 2); /* the default's counters */
	assert_int_equal(f.t.c->rule[1].flows, 1);   /* one flow, tagged or not */
	mbuf_free(m);
	fx_fini(&f);
}

static void
test_non_ipv4_frames_get_the_default_tag(void **state)
{
	/* ARP, 42 bytes. */
	uint8_t arp[42] = {0};
	struct rte_mbuf *m;
	struct fx f;

	(void)state;
	memcpy(arp, DST_MAC, 6);
	memcpy(arp + 6, SRC_MAC, 6);
	arp[12] = 0x08;
	arp[13] = 0x06;
	fx_init(&f, POLICY);
	m = hr_mbuf(arp, sizeof(arp), 128);
	assert_int_equal(run(&f, m), VT_PASS);
	assert_inserted(m, arp, sizeof(arp), 10, 1);
	assert_int_equal(f.t.c->non_ip, 1);
	assert_int_equal(f.t.c->rule[f.pol.n_rules].packets, 1);
	assert_int_equal(f.t.c->rule[f.pol.n_rules].flows, 0);
	assert_int_equal(onvm_ft_count(&f.t.ft), 0);
	mbuf_free(m);
	fx_fini(&f);
}

static void
test_malformed_ipv4_is_counted_and_gets_the_default_tag(void **state)
{
	struct frame_spec s = tcp(A(198, 18, 1, 7), A(198, 19, 0, 1), 1234, 80);
	uint8_t orig[2048];
	size_t len;
	struct fx f;
	struct {
		int off; /* byte to damage, relative to the IPv4 header */
		uint8_t val;
		enum onvm_parse_reason r;
	} damage[] = {
	    {0, 0x65, ONVM_PARSE_BAD_VERSION},
	    {0, 0x44, ONVM_PARSE_BAD_IHL},
	    {2, 0xff, ONVM_PARSE_BAD_TOTLEN},
	    {20 + 12, 0x20, ONVM_PARSE_BAD_L4LEN}, /* TCP data offset 8 bytes */
	};

	(void)state;
	fx_init(&f, POLICY);
	for (size_t i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
		struct rte_mbuf *m;

		len = build(orig, &s);
		orig[14 + damage[i].off] = damage[i].val;
		m = hr_mbuf(orig, len, 128);
		assert_int_equal(run(&f, m), VT_PASS);
		assert_inserted(m, orig, len, 10, 1); /* rule 0 would say 100 */
		assert_int_equal(f.t.c->malformed[damage[i].r], 1);
		mbuf_free(m);
	}
	/* Cut inside the IPv4 header: truncated_l3, still passed. */
	len = build(orig, &s);
	{
		struct rte_mbuf *m = hr_mbuf(orig, 14 + 10, 128);

		assert_int_equal(run(&f, m), VT_PASS);
		assert_inserted(m, orig, 14 + 10, 10, 1);
		assert_int_equal(f.t.c->malformed[ONVM_PARSE_TRUNC_L3], 1);
		mbuf_free(m);
		/* Cut inside the TCP header. */
		put16(orig + 16, 20 + 10);
		m = hr_mbuf(orig, 14 + 30, 128);
		assert_int_equal(run(&f, m), VT_PASS);
		assert_int_equal(f.t.c->malformed[ONVM_PARSE_TRUNC_L4], 1);
		mbuf_free(m);
	}
	assert_int_equal(onvm_ft_count(&f.t.ft), 0);
	assert_int_equal(f.t.c->rule[0].packets, 0);
	assert_int_equal(f.t.c->rule[f.pol.n_rules].packets, 6);
	assert_int_equal(f.t.c->packets, 6);
	fx_fini(&f);
}

static void
test_runt_frames_are_dropped_and_counted(void **state)
{
	uint8_t b[64] = {0};
	struct rte_mbuf *m;
	struct fx f;

	(void)state;
	fx_init(&f, POLICY);
	m = hr_mbuf(b, 0, 128); /* empty */
	assert_int_equal(run(&f, m), VT_DROP);
	mbuf_free(m);
	m = hr_mbuf(b, 13, 128);
	assert_int_equal(run(&f, m), VT_DROP);
	assert_int_equal(rte_pktmbuf_pkt_len(m), 13); /* untouched */
	mbuf_free(m);
	/* A tag announced but cut short. */
	b[12] = 0x81;
	m = hr_mbuf(b, 16, 128);
	assert_int_equal(run(&f, m), VT_DROP);
	mbuf_free(m);
	assert_int_equal(f.t.c->dropped[VT_DROP_TRUNCATED_L2], 3);
	assert_int_equal(f.t.c->malformed[ONVM_PARSE_TRUNC_L2], 3);
	assert_int_equal(f.t.c->packets, 3);
	/* 14 bytes of Ethernet and nothing else is a frame (not IPv4): tagged. */
	b[12] = 0x88;
	b[13] = 0xb5;
	m = hr_mbuf(b, 14, 128);
	assert_int_equal(run(&f, m), VT_PASS);
	assert_inserted(m, b, 14, 10, 1);
	mbuf_free(m);
	fx_fini(&f);
}

static void
test_no_headroom_drops_instead_of_writing_outside_the_buffer(void **state)
{
	struct frame_spec s = tcp(A(198, 18, 1, 7), A(198, 19, 0, 1), 1234, 80);
	uint8_t orig[2048];
	size_t len = build(orig, &s);
	struct rte_mbuf *m = hr_mbuf(orig, len, 2); /* 2: keep the frame 2-aligned */
	struct fx f;

	(void)state;
	fx_init(&f, POLICY);
	assert_int_equal(run(&f, m), VT_DROP);
	assert_int_equal(rte_pktmbuf_pkt_len(m), len);
	assert_memory_equal(mbuf_bytes(m), orig, len);
	assert_int_equal(f.t.c->dropped[VT_DROP_NO_HEADROOM], 1);
	mbuf_free(m);
	fx_fini(&f);
}

static void
test_header_split_across_segments_is_dropped(void **state)
{
	struct frame_spec s = tcp(A(198, 18, 1, 7), A(198, 19, 0, 1), 1234, 80);
	uint8_t orig[2048];
	size_t len = build(orig, &s);
	struct rte_mbuf *m = hr_mbuf(orig, 10, 128), *m2 = hr_mbuf(orig + 10, len - 10, 0);
	struct fx f;

	(void)state;
	m->next = m2;
	m->nb_segs = 2;
	m->pkt_len = (uint32_t)len;
	fx_init(&f, POLICY);
	/* The parser reads across segments (a valid TCP flow) ... */
	assert_int_equal(run(&f, m), VT_DROP);
	/* ... but the tag cannot go into a 10-byte first segment. */
	assert_int_equal(f.t.c->dropped[VT_DROP_SPLIT_HEADER], 1);
	assert_int_equal(onvm_ft_count(&f.t.ft), 1);
	mbuf_free(m);
	fx_fini(&f);
}

/* ---- the per-flow tag table -------------------------------------------------------- */

static void
test_flow_keeps_the_tag_it_got_first(void **state)
{
	struct frame_spec s = tcp(A(198, 18, 1, 7), A(198, 19, 0, 1), 1234, 80);
	uint8_t orig[2048];
	size_t len = build(orig, &s);
	struct rte_mbuf *m;
	struct vt_flow *v;
	struct onvm_flow_key k = {A(198, 18, 1, 7), A(198, 19, 0, 1), 1234, 80, 6, {0}};
	struct fx f;

	(void)state;
	fx_init(&f, POLICY);
	m = hr_mbuf(orig, len, 128);
	assert_int_equal(run(&f, m), VT_PASS);
	mbuf_free(m);
	/* The decision is in the table: the policy is not consulted again for
	 * this flow (were it different now, the flow would keep its tag). */
	f.pol.rules[0].vlan = 999;
	f.pol.rules[0].pcp = 0;
	for (int i = 0; i < 5; i++) {
		f.now += 1000;
		m = hr_mbuf(orig, len, 128);
		assert_int_equal(run(&f, m), VT_PASS);
		assert_inserted(m, orig, len, 100, 5);
		mbuf_free(m);
	}
	v = onvm_ft_lookup(&f.t.ft, &k);
	assert_non_null(v);
	assert_int_equal(v->vlan, 100);
	assert_int_equal(v->pcp, 5);
	assert_int_equal(v->rule, 0);
	assert_int_equal(v->packets, 6);
	assert_int_equal(v->bytes, 6 * len);
	assert_int_equal(onvm_ft_last_seen(&f.t.ft, v), f.now);
	assert_int_equal(f.t.c->rule[0].packets, 6);
	assert_int_equal(f.t.c->rule[0].flows, 1);
	/* A new flow sees the (changed) policy. */
	s.sport = 1235;
	len = build(orig, &s);
	m = hr_mbuf(orig, len, 128);
	assert_int_equal(run(&f, m), VT_PASS);
	assert_inserted(m, orig, len, 999, 0);
	mbuf_free(m);
	/* The reverse direction is a flow of its own, classified on its own. */
	s = tcp(A(198, 19, 0, 1), A(198, 18, 1, 7), 80, 1234);
	len = build(orig, &s);
	m = hr_mbuf(orig, len, 128);
	assert_int_equal(run(&f, m), VT_PASS);
	assert_inserted(m, orig, len, 10, 1);
	mbuf_free(m);
	assert_int_equal(onvm_ft_count(&f.t.ft), 3);
	fx_fini(&f);
}

static void
test_every_rule_and_the_default_count_packets_and_flows(void **state)
{
	struct frame_spec specs[] = {
	    tcp(A(198, 18, 1, 1), A(198, 19, 0, 1), 5000, 80), /* rule 0 */
	    tcp(A(198, 18, 1, 2), A(198, 19, 0, 1), 5000, 443), /* rule 1 */
	    {.src = A(198, 18, 2, 1), .dst = A(198, 19, 3, 3), .proto = 17, .sport = 1500,
	     .dport = 53, .payload = 20}, /* rule 2 */
	    {.src = A(198, 18, 2, 1), .dst = A(198, 19, 3, 3), .proto = 1, .payload = 8}, /* rule 3 */
	    {.src = A(198, 18, 2, 1), .dst = A(198, 19, 3, 3), .proto = 47, .payload = 4}, /* rule 4 */
	    tcp(A(198, 18, 2, 1), A(198, 19, 3, 3), 5000, 80), /* default */
	};
	const uint16_t want_vlan[] = {100, 101, 200, 300, 4094, 10};
	const uint8_t want_pcp[] = {5, 0, 0, 7, 0, 1};
	struct fx f;

	(void)state;
	fx_init(&f, POLICY);
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 6; i++) {
			uint8_t orig[2048];
			size_t len = build(orig, &specs[i]);
			struct rte_mbuf *m = hr_mbuf(orig, len, 128);

			assert_int_equal(run(&f, m), VT_PASS);
			assert_inserted(m, orig, len, want_vlan[i], want_pcp[i]);
			mbuf_free(m);
		}
	for (int i = 0; i < 6; i++) {
		assert_int_equal(f.t.c->rule[i].packets, 3);
		assert_int_equal(f.t.c->rule[i].flows, 1);
	}
	assert_int_equal(f.t.c->inserted, 18);
	fx_fini(&f);
}

static void
test_full_table_still_tags_by_policy(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f, POLICY); /* 16 flows: 12 fit */
	for (int i = 0; i < 20; i++) {
		struct frame_spec s = tcp(A(198, 18, 1, 7), A(198, 19, 0, 1), (uint16_t)(2000 + i), 80);
		uint8_t orig[2048];
		size_t len = build(orig, &s);
		struct rte_mbuf *m = hr_mbuf(orig, len, 128);

		assert_int_equal(run(&f, m), VT_PASS);
		assert_inserted(m, orig, len, 100, 5);
		mbuf_free(m);
	}
	assert_int_equal(onvm_ft_count(&f.t.ft), 12);
	assert_int_equal(f.t.c->untracked, 8);
	assert_int_equal(f.t.c->rule[0].packets, 20);
	assert_int_equal(f.t.c->rule[0].flows, 12);
	assert_int_equal(onvm_ft_stats(&f.t.ft)->full, 8);
	fx_fini(&f);
}

static void
test_idle_flows_expire_after_the_timeout(void **state)
{
	struct fx f;
	uint32_t n = 0;

	(void)state;
	fx_init(&f, POLICY); /* idle_timeout_ms 1000 */
	for (int i = 0; i < 4; i++) {
		struct rte_mbuf *m = frame(&(struct frame_spec){
		    .src = A(198, 18, 1, 7), .dst = A(198, 19, 0, 1), .proto = 6,
		    .sport = (uint16_t)(3000 + i), .dport = 80, .payload = 0});

		f.now += 100000000ull * (uint64_t)i; /* 0, 100, 300, 600 ms */
		run(&f, m);
		mbuf_free(m);
	}
	/* At +1000 ms from the first: only the first is idle for 1 s. */
	for (int pass = 0; pass < 4; pass++) {
		n += vt_expire(&f.t, 1000000000ull + 1000000000ull, 16);
		fx_commit_ok(&f);
	}
	assert_int_equal(n, 1);
	assert_int_equal(onvm_ft_count(&f.t.ft), 3);
	for (int pass = 0; pass < 4; pass++) {
		n += vt_expire(&f.t, 1000000000ull + 1600000000ull, 16);
		fx_commit_ok(&f);
	}
	assert_int_equal(n, 4);
	assert_int_equal(onvm_ft_count(&f.t.ft), 0);
	fx_fini(&f);
}

static void
test_timeout_zero_never_expires(void **state)
{
	struct rte_mbuf *m = frame(&(struct frame_spec){
	    .src = A(198, 18, 1, 7), .dst = A(198, 19, 0, 1), .proto = 17, .sport = 1, .dport = 2});
	struct fx f;

	(void)state;
	fx_init(&f, "{\"default\": {\"vlan\": 3}, \"idle_timeout_ms\": 0}");
	run(&f, m);
	assert_int_equal(vt_expire(&f.t, UINT64_MAX / 2, 1000), 0);
	fx_commit_ok(&f);
	assert_int_equal(onvm_ft_count(&f.t.ft), 1);
	mbuf_free(m);
	fx_fini(&f);
}

/* ---- state, failover ----------------------------------------------------------------- */

static void
test_failover_keeps_committed_tags_and_counters(void **state)
{
	struct frame_spec s = tcp(A(198, 18, 1, 7), A(198, 19, 0, 1), 1234, 80);
	uint8_t orig[2048];
	size_t len = build(orig, &s);
	struct fx f;
	struct rte_mbuf *m;

	(void)state;
	fx_init(&f, POLICY);
	for (int i = 0; i < 3; i++) {
		m = hr_mbuf(orig, len, 128);
		run(&f, m); /* committed */
		mbuf_free(m);
	}
	/* An uncommitted batch: two more packets of the flow and a new flow. */
	for (int i = 0; i < 2; i++) {
		m = hr_mbuf(orig, len, 128);
		vt_packet(&f.t, m, f.now);
		mbuf_free(m);
	}
	m = frame(&(struct frame_spec){.src = A(198, 18, 5, 5), .dst = A(198, 19, 0, 1),
				       .proto = 17, .sport = 7, .dport = 9});
	vt_packet(&f.t, m, f.now);
	mbuf_free(m);
	assert_int_equal(f.t.c->packets, 6);
	assert_int_equal(test_state_failover(&f.ts), 0);
	memset(&f.t, 0, sizeof(f.t));
	fx_open(&f);
	fx_commit_ok(&f);
	assert_int_equal(f.t.c->packets, 3);
	assert_int_equal(f.t.c->inserted, 3);
	assert_int_equal(f.t.c->rule[0].packets, 3);
	assert_int_equal(f.t.c->rule[f.pol.n_rules].flows, 0);
	assert_int_equal(onvm_ft_count(&f.t.ft), 1);
	/* The promoted NF goes on tagging the flow as before. */
	m = hr_mbuf(orig, len, 128);
	assert_int_equal(run(&f, m), VT_PASS);
	assert_inserted(m, orig, len, 100, 5);
	mbuf_free(m);
	assert_int_equal(f.t.c->rule[0].packets, 4);
	assert_int_equal(f.t.c->rule[0].flows, 1);
	fx_fini(&f);
}

static void
test_open_refuses_state_made_by_another_policy(void **state)
{
	struct vt_policy other;
	struct vt_tagger t;
	char err[512] = "";
	struct fx f;

	(void)state;
	fx_init(&f, POLICY);
	other = f.pol;
	other.rules[1].vlan = 102;
	assert_int_equal(vt_open(&t, &other, &f.ts.set, test_state_region(&f.ts, "flows"),
				 vt_flows_size(&other), test_state_region(&f.ts, "counters"),
				 vt_counters_size(&other), err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "another policy"));
	/* A region too small for the policy's counters. */
	assert_int_equal(vt_open(&t, &f.pol, &f.ts.set, test_state_region(&f.ts, "flows"),
				 vt_flows_size(&f.pol), test_state_region(&f.ts, "counters"),
				 vt_counters_size(&f.pol) - 1, err, sizeof(err)),
			 -EINVAL);
	/* Same policy: attaches, writes nothing. */
	fx_open(&f);
	assert_int_equal(nf_state_dirty_chunks(&f.ts.set), 0);
	fx_fini(&f);
}

/* ---- export ------------------------------------------------------------------------------ */

static void
test_export_is_json_with_flows_rules_and_reasons(void **state)
{
	char *buf = NULL;
	size_t blen = 0;
	FILE *mf;
	json_t *doc, *flows, *rules;
	json_error_t je;
	struct fx f;
	struct rte_mbuf *m;
	uint8_t runt[5] = {0};

	(void)state;
	fx_init(&f, POLICY);
	m = frame(&(struct frame_spec){.src = A(198, 18, 1, 7), .dst = A(198, 19, 0, 1),
				       .proto = 6, .sport = 1234, .dport = 80});
	run(&f, m);
	mbuf_free(m);
	m = frame(&(struct frame_spec){.src = A(198, 18, 2, 2), .dst = A(198, 19, 0, 1),
				       .proto = 17, .sport = 1111, .dport = 53});
	run(&f, m);
	mbuf_free(m);
	m = hr_mbuf(runt, sizeof(runt), 128);
	run(&f, m);
	mbuf_free(m);
	mf = open_memstream(&buf, &blen);
	assert_int_equal(vt_export(&f.t, mf), 0);
	fclose(mf);
	doc = json_loads(buf, 0, &je);
	if (doc == NULL)
		fail_msg("export is not JSON (%s): %s", je.text, buf);
	assert_int_equal(json_integer_value(json_object_get(doc, "packets")), 3);
	assert_int_equal(json_integer_value(json_object_get(doc, "inserted")), 2);
	assert_int_equal(json_integer_value(json_object_get(doc, "dropped")), 1);
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(doc, "drop_reasons"), "truncated_l2")),
			 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "malformed"),
							    "truncated_l2")),
			 1);
	rules = json_object_get(doc, "rules");
	assert_int_equal(json_array_size(rules), 5);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(rules, 0), "packets")),
			 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(rules, 2), "flows")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(rules, 2), "vlan")), 200);
	flows = json_object_get(doc, "flows");
	assert_int_equal(json_array_size(flows), 2);
	for (size_t i = 0; i < 2; i++) {
		json_t *fl = json_array_get(flows, i);
		const char *src = json_string_value(json_object_get(fl, "src"));

		if (strcmp(src, "198.18.1.7") == 0) {
			assert_string_equal(json_string_value(json_object_get(fl, "dst")), "198.19.0.1");
			assert_int_equal(json_integer_value(json_object_get(fl, "vlan")), 100);
			assert_int_equal(json_integer_value(json_object_get(fl, "pcp")), 5);
			assert_int_equal(json_integer_value(json_object_get(fl, "rule")), 0);
			assert_int_equal(json_integer_value(json_object_get(fl, "sport")), 1234);
		} else {
			assert_string_equal(src, "198.18.2.2");
			assert_int_equal(json_integer_value(json_object_get(fl, "vlan")), 200);
			assert_int_equal(json_integer_value(json_object_get(fl, "rule")), 2);
			assert_int_equal(json_integer_value(json_object_get(fl, "proto")), 17);
		}
	}
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "default"),
							    "vlan")),
			 10);
	json_decref(doc);
	free(buf);
	fx_fini(&f);
}

static void
test_export_file_is_written_atomically(void **state)
{
	char path[] = "/tmp/test_vlan_tagger_XXXXXX", file[64], tmp[80];
	json_error_t je;
	json_t *doc;
	struct fx f;

	(void)state;
	assert_non_null(mkdtemp(path));
	snprintf(file, sizeof(file), "%s/out.json", path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	fx_init(&f, "{}");
	assert_int_equal(vt_export_file(&f.t, file), 0);
	assert_int_equal(access(tmp, F_OK), -1);
	doc = json_load_file(file, 0, &je);
	assert_non_null(doc);
	assert_int_equal(json_array_size(json_object_get(doc, "rules")), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "flows")), 0);
	json_decref(doc);
	unlink(file);
	rmdir(path);
	assert_true(vt_export_file(&f.t, "/nonexistent/dir/x.json") < 0);
	fx_fini(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_policy_parses_every_field),
	    cmocka_unit_test(test_policy_defaults),
	    cmocka_unit_test(test_policy_rejections_name_file_line_column_and_field),
	    cmocka_unit_test(test_policy_rejects_too_many_rules),
	    cmocka_unit_test(test_policy_file_errors),
	    cmocka_unit_test(test_first_matching_rule_decides),
	    cmocka_unit_test(test_policy_digest_tells_policies_apart),
	    cmocka_unit_test(test_untagged_frame_gets_a_tag_after_the_source_mac),
	    cmocka_unit_test(test_tagged_frame_gets_its_outer_tag_rewritten),
	    cmocka_unit_test(test_default_vlan_zero_leaves_frames_as_they_are),
	    cmocka_unit_test(test_non_ipv4_frames_get_the_default_tag),
	    cmocka_unit_test(test_malformed_ipv4_is_counted_and_gets_the_default_tag),
	    cmocka_unit_test(test_runt_frames_are_dropped_and_counted),
	    cmocka_unit_test(test_no_headroom_drops_instead_of_writing_outside_the_buffer),
	    cmocka_unit_test(test_header_split_across_segments_is_dropped),
	    cmocka_unit_test(test_flow_keeps_the_tag_it_got_first),
	    cmocka_unit_test(test_every_rule_and_the_default_count_packets_and_flows),
	    cmocka_unit_test(test_full_table_still_tags_by_policy),
	    cmocka_unit_test(test_idle_flows_expire_after_the_timeout),
	    cmocka_unit_test(test_timeout_zero_never_expires),
	    cmocka_unit_test(test_failover_keeps_committed_tags_and_counters),
	    cmocka_unit_test(test_open_refuses_state_made_by_another_policy),
	    cmocka_unit_test(test_export_is_json_with_flows_rules_and_reasons),
	    cmocka_unit_test(test_export_file_is_written_atomically),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
